! fail.F90: what a Fortran binding writes back when a call that completes
! no request fails (or, MPI_Improbe, finds nothing), on 2 ranks under
! MPI_ERRORS_RETURN, each output pre-filled with the sentinel -7 (LOGICAL
! flags with .true.), printed line by line ("rN case: values") into
! PREFIX.<rank>. Built with -DF08 it uses mpi_f08, with -DMPIF mpif.h, else
! mpi. Its output must be the same without mpiscope as with it
! (TestFortranFailures; docs/bindings.md, "Failures and indices").
!   fail PREFIX
#ifdef F08
#define USE_MPI use mpi_f08
#define T_STATUS type(MPI_Status)
#define T_REQ type(MPI_Request)
#define T_MSG type(MPI_Message)
#define T_COMM type(MPI_Comm)
#define SRC(s) s%MPI_SOURCE
#define TAG(s) s%MPI_TAG
#define ERR(s) s%MPI_ERROR
#define VAL(h) h%MPI_VAL
#else
#define USE_MPI use mpi
#define T_STATUS integer, dimension(MPI_STATUS_SIZE)
#define T_REQ integer
#define T_MSG integer
#define T_COMM integer
#define SRC(s) s(MPI_SOURCE)
#define TAG(s) s(MPI_TAG)
#define ERR(s) s(MPI_ERROR)
#define VAL(h) h
#endif
program fail
#ifndef MPIF
  USE_MPI
#endif
  implicit none
#ifdef MPIF
  include 'mpif.h'
#endif
  integer :: rank, ierr, a(4), b(4)
  logical :: flag
  character(len=4096) :: prefix
  character(len=16) :: rs
  T_STATUS :: s
  T_REQ :: r
  T_MSG :: m
  T_COMM :: c
  ! The explicit interfaces of use mpi and mpi_f08 declare the outputs
  ! intent(out): without volatile an optimizing compiler drops the
  ! sentinels stored before the calls.
  volatile :: s, r, m, c, flag

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call get_command_argument(1, prefix)
  write (rs, '(i0)') rank
  open (unit=10, file=trim(prefix)//'.'//trim(rs), status='replace', action='write')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  a = (/ 1, 2, 3, 4 /)

  ! Truncated receives: rank 0 sends 4 integers (tags 1 to 4), rank 1
  ! receives 1. The C function fills its status and fails.
  if (rank == 0) then
    call MPI_Send(a, 4, MPI_INTEGER, 1, 1, MPI_COMM_WORLD, ierr)
    call MPI_Recv(b, 1, MPI_INTEGER, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Send(a, 4, MPI_INTEGER, 1, 2, MPI_COMM_WORLD, ierr)
    call MPI_Recv(b, 1, MPI_INTEGER, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Send(a, 4, MPI_INTEGER, 1, 3, MPI_COMM_WORLD, ierr)
    call MPI_Send(a, 4, MPI_INTEGER, 1, 4, MPI_COMM_WORLD, ierr)
  else
    call sentinel(s)
    call MPI_Sendrecv(a, 1, MPI_INTEGER, 0, 9, b, 1, MPI_INTEGER, 0, 1, MPI_COMM_WORLD, s, ierr)
    call st('sendrecv truncated', s, ierr)
    call sentinel(s)
    b(1) = 5
    call MPI_Sendrecv_replace(b, 1, MPI_INTEGER, 0, 9, 0, 2, MPI_COMM_WORLD, s, ierr)
    call st('sendrecv_replace truncated', s, ierr)
    call sentinel(s)
    call MPI_Mprobe(0, 3, MPI_COMM_WORLD, m, s, ierr)
    write (10, '(a,i0,a,l1)') 'r1 mprobe: ierr=', ierr, ' null=', m == MPI_MESSAGE_NULL
    call sentinel(s)
    call MPI_Mrecv(b, 1, MPI_INTEGER, m, s, ierr)
    call st('mrecv truncated', s, ierr)
    write (10, '(a,l1)') 'r1 mrecv truncated: message null=', m == MPI_MESSAGE_NULL
    call sentinel(s)
    call MPI_Recv(b, 1, MPI_INTEGER, 0, 4, MPI_COMM_WORLD, s, ierr)
    call st('recv truncated', s, ierr)
  end if

  ! Invalid arguments: output handles and flags as the binding leaves them.
  VAL(r) = -7
  call MPI_Isend(a, 1, MPI_INTEGER, 99, 0, MPI_COMM_WORLD, r, ierr)
  call hd('isend bad rank', VAL(r), ierr)
  VAL(r) = -7
  call MPI_Irecv(b, 1, MPI_INTEGER, 99, 0, MPI_COMM_WORLD, r, ierr)
  call hd('irecv bad rank', VAL(r), ierr)
  VAL(c) = -7
  call MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, c, ierr)
  call hd('comm_create null group', VAL(c), ierr)
  VAL(m) = -7
  flag = .true.
  call MPI_Improbe(99, 0, MPI_COMM_WORLD, flag, m, MPI_STATUS_IGNORE, ierr)
  call hd('improbe bad rank', VAL(m), ierr)
  write (10, '(a,i0,a,l1)') 'r', rank, ' improbe bad rank: flag=', flag
  flag = .true.
  call MPI_Iprobe(99, 0, MPI_COMM_WORLD, flag, MPI_STATUS_IGNORE, ierr)
  write (10, '(a,i0,a,l1,a,l1)') 'r', rank, ' iprobe bad rank: fail=', ierr /= MPI_SUCCESS, ' flag=', flag
  ! Nothing to find: the message as the binding leaves it.
  VAL(m) = -7
  call MPI_Improbe(0, 77, MPI_COMM_WORLD, flag, m, MPI_STATUS_IGNORE, ierr)
  call hd('improbe nothing', VAL(m), ierr)
  write (10, '(a,i0,a,l1)') 'r', rank, ' improbe nothing: flag=', flag

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  close (10)
  call MPI_Finalize(ierr)

contains

  subroutine sentinel(s)
    T_STATUS :: s
    SRC(s) = -7
    TAG(s) = -7
    ERR(s) = -7
  end subroutine

  subroutine st(what, s, ierr)
    character(len=*) :: what
    T_STATUS :: s
    integer :: ierr
    write (10, '(a,i0,a,a,l1,a,i0,a,i0,a,l1)') 'r', rank, ' ', what//': fail=', ierr /= MPI_SUCCESS, &
      ' source=', SRC(s), ' tag=', TAG(s), ' error_set=', ERR(s) /= -7
  end subroutine

  subroutine hd(what, v, ierr)
    character(len=*) :: what
    integer :: v, ierr
    write (10, '(a,i0,a,a,l1,a,i0)') 'r', rank, ' ', what//': fail=', ierr /= MPI_SUCCESS, ' handle=', v
  end subroutine
end program
