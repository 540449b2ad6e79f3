! wrongbuild.f90: a Fortran program under a libmpiscope built for the
! other MPI family (internal/mpitest/wrongbuild_fortran_test.go): an
! MPI_Allreduce of the ranks. Prints "wrongbuild rank R sum S".
program wrongbuild
  use mpi
  implicit none
  integer :: rank, s, ierr
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Allreduce(rank, s, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  print '(a,i0,a,i0)', 'wrongbuild rank ', rank, ' sum ', s
  call MPI_Finalize(ierr)
end program wrongbuild
