! chain.f90: a Fortran subroutine chain (internal/mpitest/callpath_test.go).
! Per rank: lvl3 calls MPI_ALLREDUCE; lvl1 -> lvl2 -> lvl3 is called 9 times
! from the main program, lvl3 directly 5 times from lvl2b, called once.
subroutine lvl3(x)
  use mpi
  implicit none
  double precision :: x(2)
  integer :: ierr
  call MPI_ALLREDUCE(MPI_IN_PLACE, x, 2, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  x(1) = x(1) * 0.5d0
end subroutine lvl3

subroutine lvl2(x)
  implicit none
  double precision :: x(2)
  call lvl3(x)
  x(2) = x(2) * 0.5d0
end subroutine lvl2

subroutine lvl1(x)
  implicit none
  double precision :: x(2)
  call lvl2(x)
  x(2) = x(2) * 0.5d0
end subroutine lvl1

subroutine lvl2b(x)
  implicit none
  double precision :: x(2)
  integer :: i
  do i = 1, 5
    call lvl3(x)
    x(2) = x(2) * 0.5d0
  end do
end subroutine lvl2b

program chain
  use mpi
  implicit none
  double precision :: x(2)
  integer :: ierr, rank, i
  call MPI_INIT(ierr)
  x = 1.0d0
  do i = 1, 9
    call lvl1(x)
  end do
  call lvl2b(x)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  if (rank == 0) print '(a)', 'chain done'
  call MPI_FINALIZE(ierr)
end program chain
