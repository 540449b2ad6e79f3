! ring.f90: the ring pattern of patterns.c in Fortran (TestCompensateFortran):
! each rank works (a sleep of WORK_US), then MPI_Sendrecv to the right from
! the left, ITERS times; one MPI_Allreduce at the end.
!   ring ITERS WORK_US
program ring
  use mpi
  implicit none
  integer :: ierr, rank, size, i, iters, us, right, left
  integer(8) :: outv, inv, total, s
  character(len=32) :: arg
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call get_command_argument(1, arg)
  read (arg, *) iters
  call get_command_argument(2, arg)
  read (arg, *) us
  right = mod(rank + 1, size)
  left = mod(rank + size - 1, size)
  outv = rank
  s = 0
  do i = 1, iters
    call work(us)
    call MPI_Sendrecv(outv, 1, MPI_INTEGER8, right, 0, inv, 1, MPI_INTEGER8, left, 0, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    s = s + inv
  end do
  call MPI_Allreduce(s, total, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierr)
  print '(A,I0,A,I0)', 'rank ', rank, ' ring total ', total
  call MPI_Finalize(ierr)
contains
  ! work sleeps us microseconds (usleep from C), like patterns.c.
  subroutine work(us)
    use iso_c_binding, only: c_int
    integer, intent(in) :: us
    interface
      integer(c_int) function usleep(n) bind(c, name='usleep')
        import :: c_int
        integer(c_int), value :: n
      end function usleep
    end interface
    integer(c_int) :: rc
    rc = usleep(int(us, c_int))
  end subroutine work
end program ring
