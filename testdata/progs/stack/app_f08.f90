! app_f08.f90: app.c in Fortran (use mpi_f08), the same calls per rank
! except MPI_Pcontrol: levels 1 and 1 (Fortran passes no region name).
program app_f08
  use mpi_f08
  implicit none
  integer :: rank, size, i, ierr, one, total, four(4)
  double precision :: d
  integer :: sum
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  d = 1.5d0
  four = (/ 1, 2, 3, 4 /)
  sum = 0
  do i = 1, 100
    if (rank == 0) then
      call MPI_Send(d, 1, MPI_DOUBLE_PRECISION, 1, 7, MPI_COMM_WORLD, ierr)
      call MPI_Recv(four, 4, MPI_INTEGER, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      sum = sum + four(4)
    else if (rank == 1) then
      call MPI_Recv(d, 1, MPI_DOUBLE_PRECISION, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      call MPI_Send(four, 4, MPI_INTEGER, 0, 8, MPI_COMM_WORLD, ierr)
      sum = sum + int(d)
    end if
  end do
  call MPI_Pcontrol(1)
  do i = 1, 10
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
  end do
  call MPI_Pcontrol(1)
  one = 1
  do i = 1, 5
    call MPI_Allreduce(one, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  print '(A,I0,A,I0,A,I0,A,I0)', 'rank ', rank, ' of ', size, ': sum ', sum, ' total ', total
  call MPI_Finalize(ierr)
end program app_f08
