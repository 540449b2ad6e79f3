package mpitest_test

import (
	"debug/elf"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpitest"
)

// TestClockUntimed: MPI_Wtime and MPI_Wtick are passed on and never
// recorded (internal/wrapgen, untimed): not timed, not counted, not
// traced, even with MPISCOPE_TRACE_EXCLUDE=none, while the calls between
// them are counted exactly. Counting them, even without timing, would
// need the thread's state on every clock read, more than the off path.
func TestClockUntimed(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		prog := mpitest.Compile(t, f.MPICC, "clock.c", t.TempDir())
		for _, env := range []map[string]string{nil, {"MPISCOPE_TRACE": "1", "MPISCOPE_TRACE_EXCLUDE": "none"}} {
			p, _, res := f.Profile(t, 2, env, prog, "3000")
			if !strings.Contains(res.Stdout, "clock done: back 0, tick ok, sum ok") {
				t.Errorf("%v: program output %q", env, res.Stdout)
			}
			mpitest.Want(t, p, map[string][2]int64{"MPI_Comm_rank": {2 * 3000, 0}})
			for _, fn := range p.Funcs {
				if fn.Name == "MPI_Wtime" || fn.Name == "MPI_Wtick" {
					t.Errorf("%v: %s recorded: %d calls, want none", env, fn.Name, fn.Calls)
				}
			}
		}
	})
}

// TestClockWrapperIsAJump: the library's MPI_Wtime and MPI_Wtick are one
// indirect jump through their PMPI_ pointer (ff 25: jmp *disp(%rip)),
// less than the off path's wrapper (a load, a test, a branch and that
// jump).
func TestClockWrapperIsAJump(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, fam mpitest.Family) {
		f, err := elf.Open(fam.Lib())
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		syms, err := f.Symbols()
		if err != nil {
			t.Fatal(err)
		}
		text := f.Section(".text")
		code, err := text.Data()
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for _, s := range syms {
			if (s.Name != "MPI_Wtime" && s.Name != "MPI_Wtick") || elf.ST_TYPE(s.Info) != elf.STT_FUNC {
				continue
			}
			seen++
			body := code[s.Value-text.Addr : s.Value-text.Addr+s.Size]
			if len(body) < 6 || body[0] != 0xff || body[1] != 0x25 {
				t.Errorf("%s: %s starts % x, want an indirect jump (ff 25)", fam.Lib(), s.Name, body[:min(len(body), 8)])
			}
		}
		if seen != 2 {
			t.Errorf("%s: found %d of MPI_Wtime, MPI_Wtick", fam.Lib(), seen)
		}
	})
}
