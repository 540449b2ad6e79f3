! ref.f90: a gfortran subroutine chain (level1 -> level2 -> level3)
! whose leaf calls fprobe.c's probe_f, checked against backtrace().
subroutine level3(n)
  use iso_c_binding
  implicit none
  integer, intent(inout) :: n
  interface
    integer(c_int) function probe_f() bind(C, name="probe_f")
      import :: c_int
    end function
  end interface
  n = n + probe_f()
end subroutine

subroutine level2(n)
  implicit none
  integer, intent(inout) :: n
  call level3(n)
  n = n + 1
end subroutine

subroutine level1(n)
  implicit none
  integer, intent(inout) :: n
  call level2(n)
  n = n + 1
end subroutine

program ref
  use iso_c_binding
  implicit none
  integer :: n
  interface
    integer(c_int) function probe_summary() bind(C, name="probe_summary")
      import :: c_int
    end function
  end interface
  n = 0
  call level1(n)
  if (probe_summary() /= 0) stop 1
end program
