package mpitest_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/internal/testutil"
)

// calleeSaved are the registers a function that uses them saves (SysV
// x86-64): pushing other operands passes arguments on the stack.
var calleeSaved = map[string]bool{"%rbx": true, "%rbp": true, "%r12": true, "%r13": true, "%r14": true, "%r15": true}

// TestLeanFastPath: the fast paths of the calls that applications make
// most (internal/wrapgen, lean.go) keep at most two callee-saved
// registers (one push and one pop each) where they kept six, and hand
// every rare case over to ms_fin_MPI_X (or ms_full_MPI_X) by a jump,
// never by a call, which would need more registers across it (that MPI_X
// jumps to ms_full_MPI_X is TestWrappersTailCall's). Checked on the
// built library's disassembly (objdump), both families.
func TestLeanFastPath(t *testing.T) {
	objdump := testutil.RequireTool(t, "objdump")
	fns := []string{"MPI_Comm_rank", "MPI_Iprobe", "MPI_Test", "MPI_Allreduce", "MPI_Send", "MPI_Recv",
		"MPI_Isend", "MPI_Irecv", "MPI_Wait", "MPI_Bcast", "MPI_Barrier"}
	mpitest.Families(t, func(t *testing.T, fam mpitest.Family) {
		for _, fn := range fns {
			out, err := exec.Command(objdump, "-d", "--no-show-raw-insn", "--disassemble=ms_on_"+fn, fam.Lib()).CombinedOutput()
			if err != nil {
				t.Fatalf("objdump: %v\n%s", err, out)
			}
			var pushes, fin int
			seen := false
			for _, l := range strings.Split(string(out), "\n") {
				if strings.HasSuffix(l, "<ms_on_"+fn+">:") {
					seen = true
				}
				f := strings.Fields(l)
				if len(f) < 2 {
					continue
				}
				op := f[1]
				target := f[len(f)-1]
				switch {
				case op == "push" && calleeSaved[target]:
					pushes++
				case strings.HasPrefix(op, "call") && (target == "<ms_fin_"+fn+">" || target == "<ms_full_"+fn+">"):
					t.Errorf("%s: ms_on_%s calls %s: a jump was wanted", fam.Name, fn, target)
				case op == "jmp" && target == "<ms_fin_"+fn+">":
					fin++
				}
			}
			if !seen {
				t.Errorf("%s: no ms_on_%s in %s", fam.Name, fn, fam.Lib())
				continue
			}
			if pushes > 2 || fin == 0 {
				t.Errorf("%s: ms_on_%s pushes %d registers (want at most 2) and jumps %d times to ms_fin_%s (want some)", fam.Name, fn, pushes, fin, fn)
			}
		}
	})
}
