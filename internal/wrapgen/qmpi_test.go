package wrapgen

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/testutil"
)

func qmpiPlan(t *testing.T, name string) (*Plan, map[string]bool) {
	t.Helper()
	aux, err := os.ReadFile("testdata/" + name + ".aux")
	if err != nil {
		t.Fatal(err)
	}
	return plan(t, name), QMPINames(aux)
}

// TestQMPIGolden: the QMPI wrappers of MPICH 4.0.2 (mpiwrapgen -qmpi).
func TestQMPIGolden(t *testing.T) {
	p, names := qmpiPlan(t, "mpich-4.0.2")
	testutil.Golden(t, "testdata/mpich-4.0.2.qmpi.golden", p.GenerateQMPI("mpiwrapgen -from mpich-4.0.2 -qmpi", names))
}

// TestQMPI: a QMPI wrapper and a trampoline for every generated, timed
// wrapper whose QMPI_ form mpi.h declares (none for Open MPI's mpi.h, which
// has no QMPI), each registered with its MPI_X_T constant; MPI_Send's
// wrapper records only the call its trampoline announced, around the next
// tool's function.
func TestQMPI(t *testing.T) {
	for _, c := range []struct {
		name  string
		wraps int
	}{
		// MPICH 4.0.2: the saved aux-info keeps the QMPI_ declarations
		// that name an MPI type (stripPaths), 478 of the 612 generated.
		{"openmpi-4.1.4", 0},
		{"mpich-4.0.2", 478},
	} {
		p, names := qmpiPlan(t, c.name)
		src := string(p.GenerateQMPI("test", names))
		wraps := regexp.MustCompile(`(?m)^static \w[^(]* ms_q_(\w+)\(QMPI_Context ms_ctx, int ms_id`).FindAllStringSubmatch(src, -1)
		tramps := regexp.MustCompile(`(?m)^static \w[^(]* ms_qt_\w+\(`).FindAllString(src, -1)
		regs := regexp.MustCompile(`(?m)^\tms_qmpi_reg\(tool_id, (\w+), \(void \(\*\)\(void\)\)ms_q_(\w+)\);$`).FindAllStringSubmatch(src, -1)
		if len(wraps) != c.wraps || len(tramps) != c.wraps || len(regs) != c.wraps {
			t.Errorf("%s: %d QMPI wrappers, %d trampolines, %d registrations; want %d", c.name, len(wraps), len(tramps), len(regs), c.wraps)
		}
		for _, r := range regs {
			if r[1] != strings.ToUpper(r[2])+"_T" {
				t.Errorf("%s: %s registered as %s", c.name, r[2], r[1])
			}
		}
		for _, w := range wraps {
			if _, u := untimed[w[1]]; u || w[1] == "MPI_Init" || w[1] == "MPI_Finalize" || w[1] == "MPI_Pcontrol" {
				t.Errorf("%s: QMPI wrapper for %s", c.name, w[1])
			}
		}
		if !strings.Contains(src, "const int ms_qmpi_nwrappers = "+strconv.Itoa(c.wraps)+";") {
			t.Errorf("%s: ms_qmpi_nwrappers is not %d", c.name, c.wraps)
		}
	}
	p, names := qmpiPlan(t, "mpich-4.0.2")
	src := string(p.GenerateQMPI("test", names))
	for _, want := range []string{
		"static int ms_qt_MPI_Send(const void *a0, int a1, MPI_Datatype a2, int a3, int a4, MPI_Comm a5)\n{\n\tms_qfn = MS_FN_MPI_Send + 1;\n\tms_qpc = __builtin_return_address(0);\n\tint ms_rc = PMPI_Send(a0, a1, a2, a3, a4, a5);\n\tms_qfn = 0;\n",
		"\tif (ms_qfn != MS_FN_MPI_Send + 1)\n\t\treturn ms_n(ms_ctx, ms_ni, a0, a1, a2, a3, a4, a5);\n\tms_qfn = 0;\n\tms_thread *ms_t = ms_qenter();\n",
		"MS_TIMED_BUSY(ms_t, MS_FN_MPI_Send, ms_t0, ms_t1, ms_rc = ms_n(ms_ctx, ms_ni, a0, a1, a2, a3, a4, a5));",
		"ms_n = (ms_qfn_MPI_Send_t *)ms_qmpi_next(ms_id, MPI_SEND_T, (void (**)(void))&ms_qn_MPI_Send, &ms_qi_MPI_Send);",
		"\t[426] = (void *)ms_qt_MPI_Send,\n",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("mpich-4.0.2: QMPI wrappers lack %q", want)
		}
	}
}
