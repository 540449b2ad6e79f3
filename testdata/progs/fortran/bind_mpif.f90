! bind_mpif.f90: ../cxx/bind.c with include 'mpif.h' (same calls, counts,
! types and peers; see there).
program bind_mpif
  implicit none
  include 'mpif.h'
  integer :: rank, size, i, ierr, other
  integer :: v(4), b(10), req(4), st(MPI_STATUS_SIZE, 4)
  double precision :: x, s, outv(2), inv(2)
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
  call MPI_PCONTROL(0)
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  call MPI_PCONTROL(1)
  x = 0
  s = 0
  do i = 0, 999
    if (rank == 0) then
      x = i
      call MPI_SEND(x, 1, MPI_DOUBLE_PRECISION, 1, 7, MPI_COMM_WORLD, ierr) ! SEND-LINE
    else if (rank == 1) then
      call MPI_RECV(x, 1, MPI_DOUBLE_PRECISION, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      s = s + x
    end if
  end do
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  do i = 1, 4
    v(i) = rank + i - 1
  end do
  call MPI_ALLREDUCE(MPI_IN_PLACE, v, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  other = 1 - rank
  do i = 1, 2
    outv(i) = 10 * rank + i - 1
    call MPI_IRECV(inv(i), 1, MPI_DOUBLE_PRECISION, other, 19 + i, MPI_COMM_WORLD, req(i), ierr)
    call MPI_ISEND(outv(i), 1, MPI_DOUBLE_PRECISION, other, 19 + i, MPI_COMM_WORLD, req(2 + i), ierr)
  end do
  call MPI_WAITALL(4, req, st, ierr)
  do i = 1, 10
    if (rank == 0) then
      b(i) = (i - 1) * (i - 1)
    else
      b(i) = -1
    end if
  end do
  call MPI_BCAST(b, 10, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  write (*, '(a,i0,a,i0,a,4(1x,i0),a,2(1x,i0),a,i0,a,i0,a,i0)') 'rank ', rank, ': sum ', nint(s), ' v', v, &
    ' in', nint(inv), ' src ', st(MPI_SOURCE, 1), ' tag ', st(MPI_TAG, 2), ' b9 ', b(10)
  call MPI_FINALIZE(ierr)
end program bind_mpif
