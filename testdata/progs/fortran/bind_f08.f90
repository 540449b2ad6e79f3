! bind_f08.f90: ../cxx/bind.c with use mpi_f08 (same calls, counts, types
! and peers; see there). ierror is left out on purpose in some calls (it is
! optional in mpi_f08).
program bind_f08
  use mpi_f08
  implicit none
  integer :: rank, size, i, ierr, other
  integer :: v(4), b(10)
  type(MPI_Request) :: req(4)
  type(MPI_Status) :: st(4)
  double precision :: x, s, outv(2), inv(2)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  call MPI_Pcontrol(0)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Pcontrol(1)
  x = 0
  s = 0
  do i = 0, 999
    if (rank == 0) then
      x = i
      call MPI_Send(x, 1, MPI_DOUBLE_PRECISION, 1, 7, MPI_COMM_WORLD, ierr) ! SEND-LINE
    else if (rank == 1) then
      call MPI_Recv(x, 1, MPI_DOUBLE_PRECISION, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
      s = s + x
    end if
  end do
  call MPI_Barrier(MPI_COMM_WORLD)
  do i = 1, 4
    v(i) = rank + i - 1
  end do
  call MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  other = 1 - rank
  do i = 1, 2
    outv(i) = 10 * rank + i - 1
    call MPI_Irecv(inv(i), 1, MPI_DOUBLE_PRECISION, other, 19 + i, MPI_COMM_WORLD, req(i), ierr)
    call MPI_Isend(outv(i), 1, MPI_DOUBLE_PRECISION, other, 19 + i, MPI_COMM_WORLD, req(2 + i))
  end do
  call MPI_Waitall(4, req, st, ierr)
  do i = 1, 10
    if (rank == 0) then
      b(i) = (i - 1) * (i - 1)
    else
      b(i) = -1
    end if
  end do
  call MPI_Bcast(b, 10, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  write (*, '(a,i0,a,i0,a,4(1x,i0),a,2(1x,i0),a,i0,a,i0,a,i0)') 'rank ', rank, ': sum ', nint(s), ' v', v, &
    ' in', nint(inv), ' src ', st(1)%MPI_SOURCE, ' tag ', st(2)%MPI_TAG, ' b9 ', b(10)
  call MPI_Finalize(ierr)
end program bind_f08
