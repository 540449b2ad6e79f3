! transp.F90: what a Fortran program can observe of its point-to-point
! messages, printed line by line ("rN case: values") into PREFIX.<rank>, on
! 2 ranks; transp.c's cases from Fortran, and the failures of every call
! that completes a request. Built with -DF08 it uses mpi_f08, with -DMPIF
! mpif.h, else mpi. Its output must be the same without mpiscope, and with
! it, the piggyback channel off and on (MPISCOPE_PIGGYBACK=1,
! MPISCOPE_COMPENSATE=1) (TestPiggybackFortran).
!   transp PREFIX
#ifdef F08
#define USE_MPI use mpi_f08
#define T_STATUS type(MPI_Status)
#define T_STATUSES(n) type(MPI_Status) :: ss(n)
#define T_REQ type(MPI_Request)
#define T_MSG type(MPI_Message)
#define T_TYPE type(MPI_Datatype)
#define SRC(s) s%MPI_SOURCE
#define TAG(s) s%MPI_TAG
#define ERR(s) s%MPI_ERROR
#define STI(i) ss(i)
#else
#define USE_MPI use mpi
#define T_STATUS integer, dimension(MPI_STATUS_SIZE)
#define T_STATUSES(n) integer :: ss(MPI_STATUS_SIZE, n)
#define T_REQ integer
#define T_MSG integer
#define T_TYPE integer
#define SRC(s) s(MPI_SOURCE)
#define TAG(s) s(MPI_TAG)
#define ERR(s) s(MPI_ERROR)
#define STI(i) ss(:, i)
#endif
program transp
#ifndef MPIF
  USE_MPI
#endif
  implicit none
#ifdef MPIF
  include 'mpif.h'
#endif
  integer :: rank, peer, ierr, cls, n, i, it, idx, outn, done, ioff
  integer :: a(32), b(32), ix(2)
  integer, allocatable :: v(:)
  logical :: flag
  character(len=4096) :: prefix
  character(len=16) :: rs
  T_STATUS :: s
  T_STATUSES(4)
  T_REQ :: r(4), p(2)
  T_MSG :: m
  T_TYPE :: vec

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call get_command_argument(1, prefix)
  write (rs, '(i0)') rank
  open (unit=10, file=trim(prefix)//'.'//trim(rs), status='replace', action='write')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  peer = 1 - rank

  ! Blocking, a receive posted larger than the message.
  if (rank == 0) then
    call fill(a, 10, 100)
    call MPI_Send(a, 10, MPI_INTEGER, 1, 1, MPI_COMM_WORLD, ierr)
    call MPI_Send(a, 5, MPI_INTEGER, 1, 2, MPI_COMM_WORLD, ierr)
  else
    b = -1
    call MPI_Recv(b, 10, MPI_INTEGER, 0, 1, MPI_COMM_WORLD, s, ierr)
    call st('recv', s, MPI_INTEGER)
    call ints('recv data', b, 10)
    b = -1
    call MPI_Recv(b, 10, MPI_INTEGER, 0, 2, MPI_COMM_WORLD, s, ierr)
    call st('recv larger', s, MPI_INTEGER)
    call ints('recv larger data', b, 10)
  end if

  ! MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_STATUS_IGNORE, a zero count.
  if (rank == 0) then
    call fill(a, 3, 7)
    call MPI_Send(a, 3, MPI_INTEGER, 1, 33, MPI_COMM_WORLD, ierr)
    call MPI_Send(a, 3, MPI_INTEGER, 1, 34, MPI_COMM_WORLD, ierr)
    call MPI_Send(a, 0, MPI_INTEGER, 1, 35, MPI_COMM_WORLD, ierr)
  else
    call MPI_Recv(b, 8, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, s, ierr)
    call st('any', s, MPI_INTEGER)
    b = 0
    call MPI_Recv(b, 8, MPI_INTEGER, 0, 34, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call ints('ignore data', b, 4)
    call MPI_Recv(b, 8, MPI_INTEGER, 0, MPI_ANY_TAG, MPI_COMM_WORLD, s, ierr)
    call st('zero', s, MPI_INTEGER)
  end if

  ! MPI_PROC_NULL.
  call MPI_Send(a, 4, MPI_INTEGER, MPI_PROC_NULL, 1, MPI_COMM_WORLD, ierr)
  call MPI_Recv(b, 4, MPI_INTEGER, MPI_PROC_NULL, 1, MPI_COMM_WORLD, s, ierr)
  call st('procnull', s, MPI_INTEGER)

  ! A noncontiguous type received as integers, and as itself.
  call MPI_Type_vector(3, 2, 4, MPI_INTEGER, vec, ierr)
  call MPI_Type_commit(vec, ierr)
  if (rank == 0) then
    call fill(a, 32, 0)
    call MPI_Send(a, 2, vec, 1, 5, MPI_COMM_WORLD, ierr)
    call MPI_Send(a, 2, vec, 1, 6, MPI_COMM_WORLD, ierr)
  else
    b = 0
    call MPI_Recv(b, 20, MPI_INTEGER, 0, 5, MPI_COMM_WORLD, s, ierr)
    call st('vec as int', s, MPI_INTEGER)
    call ints('vec as int data', b, 12)
    b = 0
    call MPI_Recv(b, 2, vec, 0, 6, MPI_COMM_WORLD, s, ierr)
    call st('vec as vec', s, vec)
    call ints('vec as vec data', b, 24)
  end if

  ! Truncation under MPI_ERRORS_RETURN: blocking, then completed by a wait.
  if (rank == 0) then
    call fill(a, 32, 500)
    call MPI_Send(a, 10, MPI_INTEGER, 1, 9, MPI_COMM_WORLD, ierr)
    call MPI_Send(a, 12, MPI_INTEGER, 1, 8, MPI_COMM_WORLD, ierr)
  else
    b = 0
    call MPI_Recv(b, 5, MPI_INTEGER, 0, 9, MPI_COMM_WORLD, s, ierr)
    call MPI_Error_class(ierr, cls, i)
    write (10, '(a,l1)') 'r1 truncate: is_truncate=', cls == MPI_ERR_TRUNCATE
    call st('truncate', s, MPI_INTEGER)
    call ints('truncate data', b, 6)
    b = 0
    call MPI_Irecv(b, 4, MPI_INTEGER, 0, 8, MPI_COMM_WORLD, r(1), ierr)
    call MPI_Wait(r(1), s, ierr)
    call MPI_Error_class(ierr, cls, i)
    write (10, '(a,l1)') 'r1 truncate wait: is_truncate=', cls == MPI_ERR_TRUNCATE
    call st('truncate wait', s, MPI_INTEGER)
    call ints('truncate wait data', b, 5)
  end if

  ! The indices MPI_Waitany and MPI_Waitsome give a request completed at
  ! position 2 of 2: 2, or 1 where the binding passes on the C index
  ! (MPICH 4.0.2's mpi_f08). ioff makes the cases below print the same
  ! requests' statuses with either.
  r(1) = MPI_REQUEST_NULL
  call MPI_Irecv(b, 1, MPI_INTEGER, peer, 38, MPI_COMM_WORLD, r(2), ierr)
  call MPI_Send(a, 1, MPI_INTEGER, peer, 38, MPI_COMM_WORLD, ierr)
  call MPI_Waitany(2, r, idx, s, ierr)
  ioff = 2 - idx
  call MPI_Irecv(b, 1, MPI_INTEGER, peer, 39, MPI_COMM_WORLD, r(2), ierr)
  call MPI_Send(a, 1, MPI_INTEGER, peer, 39, MPI_COMM_WORLD, ierr)
  ix = -9
  call MPI_Waitsome(2, r, outn, ix, ss, ierr)
  write (10, '(a,i0,a,i0,a,i0,a,i0,a,i0)') 'r', rank, ' indices: waitany=', idx, ' waitsome=', outn, ' ', ix(1), ' ', ix(2)

  ! Nonblocking, completed every way.
  call fill(a, 32, 1000 * (rank + 1))
  b = 0
  call MPI_Irecv(b, 8, MPI_INTEGER, peer, 10, MPI_COMM_WORLD, r(1), ierr)
  call MPI_Isend(a, 4, MPI_INTEGER, peer, 10, MPI_COMM_WORLD, r(2), ierr)
  call MPI_Wait(r(1), s, ierr)
  call st('wait', s, MPI_INTEGER)
  call MPI_Wait(r(2), MPI_STATUS_IGNORE, ierr)
  call ints('wait data', b, 4)

  b = 0
  call MPI_Irecv(b, 8, MPI_INTEGER, peer, 11, MPI_COMM_WORLD, r(1), ierr)
  call MPI_Irecv(b(9), 8, MPI_INTEGER, peer, 12, MPI_COMM_WORLD, r(2), ierr)
  call MPI_Issend(a, 3, MPI_INTEGER, peer, 11, MPI_COMM_WORLD, r(3), ierr)
  call MPI_Isend(a(4), 5, MPI_INTEGER, peer, 12, MPI_COMM_WORLD, r(4), ierr)
  call MPI_Waitall(4, r, ss, ierr)
  call st('waitall 1', STI(1), MPI_INTEGER)
  call st('waitall 2', STI(2), MPI_INTEGER)
  call ints('waitall data', b, 16)

  b = 0
  call MPI_Irecv(b, 8, MPI_INTEGER, peer, 13, MPI_COMM_WORLD, r(1), ierr)
  call MPI_Isend(a, 6, MPI_INTEGER, peer, 13, MPI_COMM_WORLD, r(2), ierr)
  call MPI_Waitall(2, r, MPI_STATUSES_IGNORE, ierr)
  call ints('waitall ignore data', b, 6)

  call MPI_Irecv(b, 8, MPI_INTEGER, peer, 14, MPI_COMM_WORLD, r(1), ierr)
  call MPI_Isend(a, 7, MPI_INTEGER, peer, 14, MPI_COMM_WORLD, r(2), ierr)
  do done = 1, 2
    call MPI_Waitany(2, r, idx, s, ierr)
    if (idx + ioff == 1) call st('waitany', s, MPI_INTEGER)
  end do

  call MPI_Irecv(b, 8, MPI_INTEGER, peer, 15, MPI_COMM_WORLD, r(1), ierr)
  call MPI_Isend(a, 2, MPI_INTEGER, peer, 15, MPI_COMM_WORLD, r(2), ierr)
  done = 0
  do while (done < 2)
    call MPI_Waitsome(2, r, outn, ix, ss, ierr)
    do i = 1, outn
      if (ix(i) + ioff == 1) call st('waitsome', STI(i), MPI_INTEGER)
    end do
    done = done + outn
  end do

  call MPI_Irecv(b, 8, MPI_INTEGER, peer, 16, MPI_COMM_WORLD, r(1), ierr)
  call MPI_Isend(a, 5, MPI_INTEGER, peer, 16, MPI_COMM_WORLD, r(2), ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Testall(2, r, flag, ss, ierr)
  end do
  call st('testall', STI(1), MPI_INTEGER)

  call MPI_Irecv(b, 8, MPI_INTEGER, peer, 17, MPI_COMM_WORLD, r(1), ierr)
  call MPI_Isend(a, 1, MPI_INTEGER, peer, 17, MPI_COMM_WORLD, r(2), ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Test(r(1), flag, s, ierr)
  end do
  call st('test', s, MPI_INTEGER)
  call MPI_Wait(r(2), MPI_STATUS_IGNORE, ierr)

  call MPI_Irecv(b, 8, MPI_INTEGER, peer, 18, MPI_COMM_WORLD, r(1), ierr)
  call MPI_Isend(a, 8, MPI_INTEGER, peer, 18, MPI_COMM_WORLD, r(2), ierr)
  done = 0
  do while (done < 2)
    call MPI_Testany(2, r, idx, flag, s, ierr)
    if (flag .and. idx /= MPI_UNDEFINED) then
      if (idx + ioff == 1) call st('testany', s, MPI_INTEGER)
      done = done + 1
    end if
  end do

  call MPI_Irecv(b, 8, MPI_INTEGER, peer, 19, MPI_COMM_WORLD, r(1), ierr)
  call MPI_Isend(a, 3, MPI_INTEGER, peer, 19, MPI_COMM_WORLD, r(2), ierr)
  done = 0
  do while (done < 2)
    call MPI_Testsome(2, r, outn, ix, ss, ierr)
    do i = 1, outn
      if (ix(i) + ioff == 1) call st('testsome', STI(i), MPI_INTEGER)
    end do
    done = done + outn
  end do

  ! Persistent requests.
  call MPI_Recv_init(b, 8, MPI_INTEGER, peer, 21, MPI_COMM_WORLD, p(1), ierr)
  call MPI_Send_init(a, 6, MPI_INTEGER, peer, 21, MPI_COMM_WORLD, p(2), ierr)
  do it = 0, 2
    a(1) = it
    call MPI_Startall(2, p, ierr)
    call MPI_Waitall(2, p, ss, ierr)
    call st('persistent', STI(1), MPI_INTEGER)
    call ints('persistent data', b, 6)
  end do
  call MPI_Request_free(p(1), ierr)
  call MPI_Request_free(p(2), ierr)

  ! Probes, with receives sized from MPI_Get_count.
  if (rank == 0) then
    call fill(a, 32, 50)
    call MPI_Send(a, 7, MPI_INTEGER, 1, 23, MPI_COMM_WORLD, ierr)
    call MPI_Send(a, 9, MPI_INTEGER, 1, 24, MPI_COMM_WORLD, ierr)
    call MPI_Send(a, 11, MPI_INTEGER, 1, 25, MPI_COMM_WORLD, ierr)
    call MPI_Send(a, 13, MPI_INTEGER, 1, 26, MPI_COMM_WORLD, ierr)
  else
    call MPI_Probe(0, 23, MPI_COMM_WORLD, s, ierr)
    call st('probe', s, MPI_INTEGER)
    call MPI_Get_count(s, MPI_INTEGER, n, ierr)
    allocate (v(n))
    call MPI_Recv(v, n, MPI_INTEGER, 0, 23, MPI_COMM_WORLD, s, ierr)
    call st('probe recv', s, MPI_INTEGER)
    call ints('probe data', v, n)
    deallocate (v)
    flag = .false.
    do while (.not. flag)
      call MPI_Iprobe(MPI_ANY_SOURCE, 24, MPI_COMM_WORLD, flag, s, ierr)
    end do
    call st('iprobe', s, MPI_INTEGER)
    call MPI_Get_count(s, MPI_INTEGER, n, ierr)
    allocate (v(n))
    call MPI_Recv(v, n, MPI_INTEGER, SRC(s), TAG(s), MPI_COMM_WORLD, s, ierr)
    call st('iprobe recv', s, MPI_INTEGER)
    call ints('iprobe data', v, n)
    deallocate (v)
    call MPI_Mprobe(0, 25, MPI_COMM_WORLD, m, s, ierr)
    call st('mprobe', s, MPI_INTEGER)
    call MPI_Get_count(s, MPI_INTEGER, n, ierr)
    b = 0
    call MPI_Mrecv(b, n, MPI_INTEGER, m, s, ierr)
    call st('mrecv', s, MPI_INTEGER)
    call ints('mrecv data', b, n)
    flag = .false.
    do while (.not. flag)
      call MPI_Improbe(0, 26, MPI_COMM_WORLD, flag, m, s, ierr)
    end do
    call st('improbe', s, MPI_INTEGER)
    b = 0
    call MPI_Imrecv(b, 32, MPI_INTEGER, m, r(1), ierr)
    call MPI_Wait(r(1), s, ierr)
    call st('imrecv', s, MPI_INTEGER)
    call ints('imrecv data', b, 13)
  end if

  ! Sendrecv and Sendrecv_replace (also with MPI_PROC_NULL on one side).
  call fill(a, 32, 200 * (rank + 1))
  b = 0
  call MPI_Sendrecv(a, 5, MPI_INTEGER, peer, 27, b, 10, MPI_INTEGER, peer, 27, MPI_COMM_WORLD, s, ierr)
  call st('sendrecv', s, MPI_INTEGER)
  call ints('sendrecv data', b, 5)
  call MPI_Sendrecv_replace(a, 4, MPI_INTEGER, peer, 29, peer, 29, MPI_COMM_WORLD, s, ierr)
  call st('replace', s, MPI_INTEGER)
  call ints('replace data', a, 4)
  if (rank == 0) then
    call MPI_Sendrecv_replace(a, 4, MPI_INTEGER, 1, 30, MPI_PROC_NULL, 30, MPI_COMM_WORLD, s, ierr)
  else
    call MPI_Sendrecv_replace(a, 4, MPI_INTEGER, MPI_PROC_NULL, 30, 0, 30, MPI_COMM_WORLD, s, ierr)
  end if
  call st('replace half', s, MPI_INTEGER)
  call ints('replace half data', a, 4)

  ! A loop reusing its buffers.
  n = 0
  do it = 0, 199
    a(1) = it
    call MPI_Sendrecv(a, 4, MPI_INTEGER, peer, 50, b, 4, MPI_INTEGER, peer, 50, MPI_COMM_WORLD, s, ierr)
    n = n + b(1)
  end do
  write (10, '(a,i0,a,i0)') 'r', rank, ' loop: sum=', n

  ! Failures under MPI_ERRORS_RETURN: each call that completes a request,
  ! on a receive of 4 ints that gets 8. What a binding writes back then
  ! (requests, statuses, index, flag) is its own: mpiscope's entries must
  ! write the same (Open MPI: nothing but the C function's own index and
  ! flag; MPICH: what the C function wrote, the index and flag of mpif.h
  ! and mpi only on success). The messages are all there before the first
  ! receive is posted (probed), so every test completes at once.
  if (rank == 0) then
    call fill(a, 16, 300)
    do it = 40, 50
      call MPI_Send(a, 8, MPI_INTEGER, 1, it, MPI_COMM_WORLD, ierr)
    end do
  else
    call MPI_Probe(0, 50, MPI_COMM_WORLD, s, ierr)
    call MPI_Irecv(b, 4, MPI_INTEGER, 0, 40, MPI_COMM_WORLD, r(1), ierr)
    call poison(s)
    call MPI_Wait(r(1), s, ierr)
    call fail('wait', ierr, -9, .false., s, r(1) == MPI_REQUEST_NULL)
    call MPI_Irecv(b, 4, MPI_INTEGER, 0, 41, MPI_COMM_WORLD, r(1), ierr)
    r(2) = MPI_REQUEST_NULL
    idx = -9
    call poison(s)
    call MPI_Waitany(2, r, idx, s, ierr)
    call fail('waitany', ierr, idx, .false., s, r(1) == MPI_REQUEST_NULL)
    call MPI_Irecv(b, 8, MPI_INTEGER, 0, 42, MPI_COMM_WORLD, r(1), ierr)
    call MPI_Irecv(b(9), 4, MPI_INTEGER, 0, 43, MPI_COMM_WORLD, r(2), ierr)
    call poison(STI(1))
    call poison(STI(2))
    call MPI_Waitall(2, r, ss, ierr)
    call fail('waitall 1', ierr, -9, .false., STI(1), r(1) == MPI_REQUEST_NULL)
    call fail('waitall 2', ierr, -9, .false., STI(2), r(2) == MPI_REQUEST_NULL)
    call MPI_Irecv(b, 4, MPI_INTEGER, 0, 44, MPI_COMM_WORLD, r(1), ierr)
    r(2) = MPI_REQUEST_NULL
    outn = -9
    ix = -9
    call poison(STI(1))
    call MPI_Waitsome(2, r, outn, ix, ss, ierr)
    call fail('waitsome', ierr, outn, .false., STI(1), r(1) == MPI_REQUEST_NULL)
    write (10, '(a,i0,a,i0)') 'r1 fail waitsome indices: ', ix(1), ' ', ix(2)
    call MPI_Irecv(b, 4, MPI_INTEGER, 0, 45, MPI_COMM_WORLD, r(1), ierr)
    call poison(s)
    do
      flag = .false.
      call MPI_Test(r(1), flag, s, ierr)
      if (flag .or. ierr /= MPI_SUCCESS) exit
    end do
    call fail('test', ierr, -9, flag, s, r(1) == MPI_REQUEST_NULL)
    call MPI_Irecv(b, 4, MPI_INTEGER, 0, 46, MPI_COMM_WORLD, r(1), ierr)
    r(2) = MPI_REQUEST_NULL
    call poison(s)
    do
      flag = .false.
      idx = -9
      call MPI_Testany(2, r, idx, flag, s, ierr)
      if (flag .or. ierr /= MPI_SUCCESS) exit
    end do
    call fail('testany', ierr, idx, flag, s, r(1) == MPI_REQUEST_NULL)
    call MPI_Irecv(b, 8, MPI_INTEGER, 0, 47, MPI_COMM_WORLD, r(1), ierr)
    call MPI_Irecv(b(9), 4, MPI_INTEGER, 0, 48, MPI_COMM_WORLD, r(2), ierr)
    call poison(STI(1))
    call poison(STI(2))
    do
      flag = .false.
      call MPI_Testall(2, r, flag, ss, ierr)
      if (flag .or. ierr /= MPI_SUCCESS) exit
    end do
    call fail('testall 1', ierr, -9, flag, STI(1), r(1) == MPI_REQUEST_NULL)
    call fail('testall 2', ierr, -9, flag, STI(2), r(2) == MPI_REQUEST_NULL)
    call MPI_Irecv(b, 4, MPI_INTEGER, 0, 49, MPI_COMM_WORLD, r(1), ierr)
    r(2) = MPI_REQUEST_NULL
    call poison(STI(1))
    do
      outn = -9
      ix = -9
      call MPI_Testsome(2, r, outn, ix, ss, ierr)
      if (outn /= 0 .or. ierr /= MPI_SUCCESS) exit
    end do
    call fail('testsome', ierr, outn, .false., STI(1), r(1) == MPI_REQUEST_NULL)
    write (10, '(a,i0,a,i0)') 'r1 fail testsome indices: ', ix(1), ' ', ix(2)
    ! MPI_Request_get_status leaves the request to a later call; its
    ! status's MPI_ERROR is not printed (Open MPI leaves it undefined).
    call MPI_Irecv(b, 4, MPI_INTEGER, 0, 50, MPI_COMM_WORLD, r(1), ierr)
    call poison(s)
    do
      flag = .false.
      call MPI_Request_get_status(r(1), flag, s, ierr)
      if (flag .or. ierr /= MPI_SUCCESS) exit
    end do
    ERR(s) = -5
    call fail('get_status', ierr, -9, flag, s, r(1) == MPI_REQUEST_NULL)
    ! With MPI_STATUS_IGNORE (Open MPI answers .false. without asking).
    flag = .false.
    call MPI_Request_get_status(r(1), flag, MPI_STATUS_IGNORE, ierr)
    call poison(s)
    call fail('get_status ignore', ierr, -9, flag, s, r(1) == MPI_REQUEST_NULL)
  end if

  ! Completions of null requests only: the index each binding gives
  ! MPI_UNDEFINED, and the empty status.
  r(1) = MPI_REQUEST_NULL
  r(2) = MPI_REQUEST_NULL
  idx = -9
  call poison(s)
  call MPI_Waitany(2, r, idx, s, ierr)
  ERR(s) = -5
  call fail('null waitany', ierr, idx, .false., s, .true.)
  idx = -9
  flag = .false.
  call poison(s)
  call MPI_Testany(2, r, idx, flag, s, ierr)
  ERR(s) = -5
  call fail('null testany', ierr, idx, flag, s, .true.)
  outn = -9
  call MPI_Waitsome(2, r, outn, ix, ss, ierr)
  call MPI_Error_class(ierr, cls, i)
  write (10, '(a,i0,a,i0,a,i0)') 'r', rank, ' fail null waitsome: rc=', cls, ' outcount=', outn

  call MPI_Type_free(vec, ierr)
  close (10)
  call MPI_Finalize(ierr)

contains

  subroutine st(what, s, t)
    character(len=*), intent(in) :: what
    T_STATUS, intent(in) :: s
    T_TYPE, intent(in) :: t
    integer :: c, e, e2
    c = -7
    e = -7
    call MPI_Get_count(s, t, c, e2)
    call MPI_Get_elements(s, t, e, e2)
    write (10, '(a,i0,1x,a,a,i0,a,i0,a,i0,a,i0)') 'r', rank, what, ': src=', SRC(s), ' tag=', TAG(s), &
      ' count=', c, ' elements=', e
  end subroutine st

  subroutine ints(what, x, k)
    character(len=*), intent(in) :: what
    integer, intent(in) :: x(*)
    integer, intent(in) :: k
    integer :: j
    write (10, '(a,i0,1x,a,a)', advance='no') 'r', rank, what, ':'
    do j = 1, k
      write (10, '(1x,i0)', advance='no') x(j)
    end do
    write (10, '(a)') ''
  end subroutine ints

  subroutine poison(x)
    T_STATUS, intent(inout) :: x
    SRC(x) = -5
    TAG(x) = -5
    ERR(x) = -5
  end subroutine poison

  ! fail prints a call's error class, index (or count), flag, status
  ! (MPI_ERROR's class, or its value when it is 0 or -5) and whether the
  ! request is MPI_REQUEST_NULL.
  subroutine fail(what, rc, i, fl, x, nul)
    character(len=*), intent(in) :: what
    integer, intent(in) :: rc, i
    logical, intent(in) :: fl, nul
    T_STATUS, intent(in) :: x
    integer :: c, e, e2
    c = rc
    if (c /= MPI_SUCCESS) call MPI_Error_class(rc, c, e2)
    e = ERR(x)
    if (e /= MPI_SUCCESS .and. e /= -5) call MPI_Error_class(ERR(x), e, e2)
    write (10, '(a,i0,1x,a,a,a,i0,a,i0,a,l1,a,i0,a,i0,a,i0,a,l1)') 'r', rank, 'fail ', what, ': rc=', c, ' i=', i, &
      ' flag=', fl, ' src=', SRC(x), ' tag=', TAG(x), ' err=', e, ' null=', nul
  end subroutine fail

  subroutine fill(x, k, base)
    integer, intent(inout) :: x(*)
    integer, intent(in) :: k, base
    integer :: j
    do j = 1, k
      x(j) = base + j - 1
    end do
  end subroutine fill

end program transp
