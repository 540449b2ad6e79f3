package wrapgen

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpih"
)

// fplan builds the Fortran plan from saved answers (mpiwrapgen fortran -save).
func fplan(t *testing.T, name, fsyms string) *FPlan {
	t.Helper()
	h, err := mpih.FromFiles("testdata/"+name+".aux", "testdata/"+name+".macros", "testdata/"+name+".symbols")
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(h)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("testdata/" + fsyms)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := ParseFSyms(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := ParseFSyms(bytes.NewReader(fs.Marshal())); len(again.Defined) != len(fs.Defined) || len(again.Imported) != len(fs.Imported) {
		t.Fatal("Marshal/ParseFSyms do not round-trip")
	}
	return NewFPlan(p, fs)
}

func kinds(fp *FPlan) map[string]FKind {
	m := map[string]FKind{}
	for _, e := range fp.Entries {
		m[e.Name] = e.Kind
	}
	return m
}

func TestFortranOpenMPI(t *testing.T) {
	fp := fplan(t, "openmpi-4.1.4", "fortran-openmpi-4.1.4.fsymbols")
	k := kinds(fp)
	for name, want := range map[string]FKind{
		"mpi_send_": FConvert, "mpi_send_f08_": FConvert, "mpi_waitall_": FConvert, "mpi_waitall_f08_": FConvert,
		"mpi_allreduce_": FConvert, "mpi_init_": FSpecial, "mpi_init_f08_": FSpecial, "mpi_finalize_": FSpecial,
		"mpi_pcontrol_": FSpecial, "mpi_abort_f08_": FSpecial, "mpi_comm_set_name_": FTimed, "mpi_op_create_": FTimed,
	} {
		if k[name] != want {
			t.Errorf("%s: %q, want %q", name, k[name], want)
		}
	}
	if _, ok := k["mpi_wtime_"]; ok {
		t.Error("mpi_wtime_ must be left alone (no ierror)")
	}
	src := string(fp.GenerateFortran("test"))
	for _, want := range []string{
		"//go:build mpiscope_openmpi",
		"#define MS_F_IN_PLACE ((void *)&ms_sym_mpi_fortran_in_place_)",
		"int ms_rc = ms_slow_MPI_Send(ms_fbuf(f0, MS_F_IN_PLACE, MS_F_BOTTOM), (int)*(MPI_Fint *)f1, PMPI_Type_f2c(*(MPI_Fint *)f2)",
		"ms_chain_f_pcontrol((int)*(MPI_Fint *)f0);",
		// With a stack, MPI_INIT and MPI_FINALIZE go down it (chain.c).
		"if (!ms_chain_f_init(NULL, NULL, f0))\n\t\tpmpi_init_(f0);\n\tms_f_started();",
		"if (!ms_chain_f_init(f0, f1, f2))\n\t\tpmpi_init_thread_(f0, f1, f2);",
		"ms_f_finalize();\n\tif (!ms_chain_f_finalize(f0))\n\t\tpmpi_finalize_(f0);",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("generated code lacks %q", want)
		}
	}
}

func TestFortranMPICH(t *testing.T) {
	fp := fplan(t, "mpich-4.0.2", "fortran-mpich-4.0.2.fsymbols")
	k := kinds(fp)
	for name, want := range map[string]FKind{
		"mpi_send_": FConvert, "mpi_send_f08ts_": FRelay, "mpi_send_f08ts_large_": FRelay,
		"mpi_barrier_f08_": FConvert, "mpi_waitall_f08_": FConvert, "mpi_allreduce_init_f08ts_": FRelay,
		"mpi_init_f08_": FSpecial, "mpi_pcontrol_f08_": FSpecial,
	} {
		if k[name] != want {
			t.Errorf("%s: %q, want %q", name, k[name], want)
		}
	}
	src := string(fp.GenerateFortran("test"))
	for _, want := range []string{
		"#define MS_F_IN_PLACE (ms_sym_MPIR_F_MPI_IN_PLACE)",
		"MPI_Comm_f2c(*(MPI_Fint *)f5)", // a macro in MPICH's mpi.h
		"pmpir_send_f08ts_(f0, f1, f2, f3, f4, f5, f6);",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("generated code lacks %q", want)
		}
	}
}

// entrySrc is the generated code of the Fortran entry name.
func entrySrc(t *testing.T, src, name string) string {
	t.Helper()
	i := strings.Index(src, "\nvoid "+name+"(")
	if i < 0 {
		t.Fatalf("no entry %s", name)
	}
	j := strings.Index(src[i:], "\n}\n")
	return src[i : i+j+3]
}

// wantEntries checks that each named entry of src holds every string given.
func wantEntries(t *testing.T, src string, want map[string][]string) {
	t.Helper()
	for name, ws := range want {
		got := entrySrc(t, src, name)
		for _, w := range ws {
			if !strings.Contains(got, w) {
				t.Errorf("%s lacks %q:\n%s", name, w, got)
			}
		}
	}
}

// TestFortranCompletionOpenMPI: Open MPI's entries write requests and
// statuses back only when the C function succeeded (MPI_Test and
// MPI_Testall: and set its flag), MPI_Startall's requests always, and its
// MPI_Request_get_status answers MPI_STATUS_IGNORE without a call (fDones).
func TestFortranCompletionOpenMPI(t *testing.T) {
	src := string(fplan(t, "openmpi-4.1.4", "fortran-openmpi-4.1.4.fsymbols").GenerateFortran("test"))
	wantEntries(t, src, map[string][]string{
		"mpi_wait_":     {"\tif (ms_rc == MPI_SUCCESS) {\n\t\t*(MPI_Fint *)f0 = PMPI_Request_c2f(ms_h0);\n\t\tif (ms_sp1 != MPI_STATUS_IGNORE)\n\t\t\tPMPI_Status_c2f(&ms_s1, (MPI_Fint *)f1);\n\t}\n"},
		"mpi_test_f08_": {"\tif (ms_rc == MPI_SUCCESS && *(MPI_Fint *)f1) {\n\t\t*(MPI_Fint *)f0 = PMPI_Request_c2f(ms_h0);"},
		"mpi_testall_":  {"\tif (ms_rc == MPI_SUCCESS && *(MPI_Fint *)f2) {\n\t\tfor (int ms_i = 0; ms_i < ms_n; ms_i++)\n\t\t\t((MPI_Fint *)f1)[ms_i] = PMPI_Request_c2f(ms_r1[ms_i]);"},
		"mpi_waitall_":  {"\tif (ms_rc == MPI_SUCCESS) {\n\t\tfor (int ms_i = 0; ms_i < ms_n; ms_i++)\n\t\t\t((MPI_Fint *)f1)[ms_i]"},
		"mpi_waitany_": {"\tif (ms_rc == MPI_SUCCESS) {\n\t\tfor (int ms_i = 0; ms_i < ms_n; ms_i++)",
			"if (ms_rc == MPI_SUCCESS && *(MPI_Fint *)f2 != MPI_UNDEFINED && *(MPI_Fint *)f2 >= 0)\n\t\t*(MPI_Fint *)f2 += 1;"},
		"mpi_testsome_": {"\tif (ms_rc == MPI_SUCCESS) {\n\t\tfor (int ms_i = 0; ms_i < ms_n; ms_i++)",
			"if (ms_rc == MPI_SUCCESS && *(MPI_Fint *)f2 != MPI_UNDEFINED)\n\t\tfor (int ms_i = 0; ms_i < *(MPI_Fint *)f2; ms_i++)\n\t\t\t((MPI_Fint *)f3)[ms_i] += 1;"},
		"mpi_start_":    {"\tif (ms_rc == MPI_SUCCESS) {\n\t\t*(MPI_Fint *)f0 = PMPI_Request_c2f(ms_h0);\n\t}\n"},
		"mpi_startall_": {"__builtin_return_address(0));\n\tfor (int ms_i = 0; ms_i < ms_n; ms_i++)\n\t\t((MPI_Fint *)f1)[ms_i] = PMPI_Request_c2f(ms_r1[ms_i]);"},
		"mpi_request_get_status_": {"\tif (f2 == MS_F_STATUS_IGNORE) {\n\t\tms_thread *ms_t = ms_enter();\n\t\tuint64_t ms_t0 = ms_now();\n\t\tpmpi_request_get_status_(f0, f1, f2, f3);",
			"__builtin_return_address(0));\n\tif (ms_sp2 != MPI_STATUS_IGNORE)\n\t\tPMPI_Status_c2f(&ms_s2, (MPI_Fint *)f2);"},
		"mpi_request_get_status_f08_": {"\tif (f2 == MS_F08_STATUS_IGNORE) {"},
	})
}

// TestFortranOutputsOpenMPI: Open MPI's entries of the calls that complete
// no request write their output handles back only on success (but
// fHandlesAlways'), MPI_Improbe's message only when its flag is set too,
// MPI_Sendrecv's and MPI_Sendrecv_replace's statuses only on success and
// the other statuses as the C function left them; MPI_Cancel's request is
// not written back; LOGICAL flags are the C function's (fDone.outOK).
func TestFortranOutputsOpenMPI(t *testing.T) {
	src := string(fplan(t, "openmpi-4.1.4", "fortran-openmpi-4.1.4.fsymbols").GenerateFortran("test"))
	wantEntries(t, src, map[string][]string{
		"mpi_comm_dup_":             {"__builtin_return_address(0));\n\tif (ms_rc == MPI_SUCCESS) {\n\t\t*(MPI_Fint *)f1 = PMPI_Comm_c2f(ms_h1);\n\t}\n\tif (f2)"},
		"mpi_isend_f08_":            {"__builtin_return_address(0));\n\tif (ms_rc == MPI_SUCCESS) {\n\t\t*(MPI_Fint *)f6 = PMPI_Request_c2f(ms_h6);\n\t}\n\tif (f7)"},
		"mpi_sendrecv_":             {"__builtin_return_address(0));\n\tif (ms_rc == MPI_SUCCESS) {\n\t\tif (ms_sp11 != MPI_STATUS_IGNORE)\n\t\t\tPMPI_Status_c2f(&ms_s11, (MPI_Fint *)f11);\n\t}\n\tif (f12)"},
		"mpi_sendrecv_replace_f08_": {"__builtin_return_address(0));\n\tif (ms_rc == MPI_SUCCESS) {\n\t\tif (ms_sp8 != MPI_STATUS_IGNORE)\n\t\t\tPMPI_Status_c2f(&ms_s8, (MPI_Fint *)f8);\n\t}\n\tif (f9)"},
		"mpi_mrecv_": {"__builtin_return_address(0));\n\tif (ms_rc == MPI_SUCCESS) {\n\t\t*(MPI_Fint *)f3 = PMPI_Message_c2f(ms_h3);\n\t}\n" +
			"\tif (ms_sp4 != MPI_STATUS_IGNORE)\n\t\tPMPI_Status_c2f(&ms_s4, (MPI_Fint *)f4);\n\tif (f5)"},
		"mpi_improbe_": {"(int *)f3, &ms_h4, ms_sp5, __builtin_return_address(0));\n\tif (ms_rc == MPI_SUCCESS && *(MPI_Fint *)f3) {\n\t\t*(MPI_Fint *)f4 = PMPI_Message_c2f(ms_h4);\n\t}\n" +
			"\tif (ms_sp5 != MPI_STATUS_IGNORE)\n\t\tPMPI_Status_c2f(&ms_s5, (MPI_Fint *)f5);\n\tif (f6)"},
		"mpi_recv_":         {"__builtin_return_address(0));\n\tif (ms_sp6 != MPI_STATUS_IGNORE)\n\t\tPMPI_Status_c2f(&ms_s6, (MPI_Fint *)f6);\n\tif (f7)"},
		"mpi_win_allocate_": {"__builtin_return_address(0));\n\t*(MPI_Fint *)f5 = PMPI_Win_c2f(ms_h5);\n\tif (f6)"},
		"mpi_win_get_info_": {"__builtin_return_address(0));\n\t*(MPI_Fint *)f1 = PMPI_Info_c2f(ms_h1);\n\tif (f2)"},
		"mpi_cancel_":       {"ms_slow_MPI_Cancel(&ms_h0, __builtin_return_address(0));\n\tif (f1)"},
		"mpi_iprobe_":       {"(int *)f3, ms_sp4, __builtin_return_address(0));"},
		"mpi_initialized_":  {"ms_slow_MPI_Initialized((int *)f0, __builtin_return_address(0));\n\tif (f1)"},
	})
}

// TestFortranOutputsMPICH: MPICH's mpif.h/use mpi entries of the calls
// that complete no request pass their LOGICAL flags (fLogicals) through a
// variable of their own written back on success only, and write handles
// and statuses back as the C function left them; its mpi_f08 entries
// pass the flag on; MPI_Cancel's request is not written back.
func TestFortranOutputsMPICH(t *testing.T) {
	src := string(fplan(t, "mpich-4.0.2", "fortran-mpich-4.0.2.fsymbols").GenerateFortran("test"))
	flagOK := func(i int) string {
		return fmt.Sprintf("\tif (ms_rc == MPI_SUCCESS)\n\t\t*(MPI_Fint *)f%d = (MPI_Fint)(ms_fl%d != 0);\n", i, i)
	}
	wantEntries(t, src, map[string][]string{
		"mpi_iprobe_": {"\tint ms_fl3 = 0;\n", "MPI_Comm_f2c(*(MPI_Fint *)f2), &ms_fl3, ms_sp4,",
			"__builtin_return_address(0));\n\tif (ms_sp4 != MPI_STATUS_IGNORE)\n\t\tPMPI_Status_c2f(&ms_s4, (MPI_Fint *)f4);\n" + flagOK(3)},
		"mpi_improbe_":            {"&ms_fl3, &ms_h4, ms_sp5,", "__builtin_return_address(0));\n\t*(MPI_Fint *)f4 = MPI_Message_c2f(ms_h4);\n", flagOK(3)},
		"mpi_initialized_":        {"ms_slow_MPI_Initialized(&ms_fl0,", flagOK(0)},
		"mpi_finalized_":          {"ms_slow_MPI_Finalized(&ms_fl0,", flagOK(0)},
		"mpi_is_thread_main_":     {"ms_slow_MPI_Is_thread_main(&ms_fl0,", flagOK(0)},
		"mpi_test_cancelled_":     {"ms_slow_MPI_Test_cancelled(ms_sp0, &ms_fl1,", flagOK(1)},
		"mpi_comm_test_inter_":    {"&ms_fl1,", flagOK(1)},
		"mpi_op_commutative_":     {"&ms_fl1,", flagOK(1)},
		"mpi_win_test_":           {"&ms_fl1,", flagOK(1)},
		"mpi_file_get_atomicity_": {"&ms_fl1,", flagOK(1)},
		"mpi_sendrecv_":           {"__builtin_return_address(0));\n\tif (ms_sp11 != MPI_STATUS_IGNORE)\n\t\tPMPI_Status_c2f(&ms_s11, (MPI_Fint *)f11);\n\tif (f12)"},
		"mpi_comm_dup_":           {"__builtin_return_address(0));\n\t*(MPI_Fint *)f1 = MPI_Comm_c2f(ms_h1);\n\tif (f2)"},
		"mpi_cancel_":             {"ms_slow_MPI_Cancel(&ms_h0, __builtin_return_address(0));\n\tif (f1)"},
		"mpi_iprobe_f08_":         {"MPI_Comm_f2c(*(MPI_Fint *)f2), (int *)f3, ms_sp4,"},
		"mpi_initialized_f08_":    {"ms_slow_MPI_Initialized((int *)f0, __builtin_return_address(0));\n\tif (f1)"},
	})
	// The flag is all that waits for success.
	for _, name := range []string{"mpi_improbe_", "mpi_mrecv_", "mpi_isend_", "mpi_sendrecv_replace_"} {
		if got := entrySrc(t, src, name); strings.Contains(got, "if (ms_rc == MPI_SUCCESS) {") {
			t.Errorf("%s writes a handle or status only on success:\n%s", name, got)
		}
	}
}

// TestFortranCompletionMPICH: MPICH's mpif.h/use mpi entries give
// MPI_Waitany's and MPI_Testany's index (+1, MPI_UNDEFINED too) and the
// LOGICAL flags only on success, and +1 the indices of MPI_Waitsome and
// MPI_Testsome whatever the C function returned; its mpi_f08 entries
// pass the C index and indices on as they are (fDones).
func TestFortranCompletionMPICH(t *testing.T) {
	src := string(fplan(t, "mpich-4.0.2", "fortran-mpich-4.0.2.fsymbols").GenerateFortran("test"))
	wantEntries(t, src, map[string][]string{
		"mpi_waitany_": {"ms_slow_MPI_Waitany((int)*(MPI_Fint *)f0, ms_r1, &ms_x2, ms_sp3,",
			"\tif (ms_rc == MPI_SUCCESS)\n\t\t*(MPI_Fint *)f2 = (MPI_Fint)(ms_x2 + 1);\n"},
		"mpi_testany_":            {"&ms_x2, &ms_fl3, ms_sp4,", "\tif (ms_rc == MPI_SUCCESS)\n\t\t*(MPI_Fint *)f3 = (MPI_Fint)(ms_fl3 != 0);\n"},
		"mpi_test_":               {"ms_slow_MPI_Test(&ms_h0, &ms_fl1, ms_sp2,", "\tif (ms_rc == MPI_SUCCESS)\n\t\t*(MPI_Fint *)f1 = (MPI_Fint)(ms_fl1 != 0);\n"},
		"mpi_testall_":            {"\tif (ms_rc == MPI_SUCCESS)\n\t\t*(MPI_Fint *)f2 = (MPI_Fint)(ms_fl2 != 0);\n"},
		"mpi_request_get_status_": {"\tif (ms_rc == MPI_SUCCESS)\n\t\t*(MPI_Fint *)f1 = (MPI_Fint)(ms_fl1 != 0);\n"},
		"mpi_waitsome_":           {"\tfor (int ms_i = 0; ms_i < *(MPI_Fint *)f2; ms_i++)\n\t\t((MPI_Fint *)f3)[ms_i] += 1;\n"},
		"mpi_waitany_f08_":        {"ms_slow_MPI_Waitany((int)*(MPI_Fint *)f0, ms_r1, (int *)f2, ms_sp3,"},
		"mpi_test_f08_":           {"ms_slow_MPI_Test(&ms_h0, (int *)f1, ms_sp2,"},
	})
	// Nothing is written back only on success, nor answered without a call.
	for _, name := range []string{"mpi_wait_", "mpi_waitall_f08_", "mpi_request_get_status_f08_"} {
		if got := entrySrc(t, src, name); strings.Contains(got, "if (ms_rc == MPI_SUCCESS) {") || strings.Contains(got, "STATUS_IGNORE) {\n\t\tms_thread") {
			t.Errorf("%s:\n%s", name, got)
		}
	}
	for _, name := range []string{"mpi_waitany_f08_", "mpi_testany_f08_", "mpi_waitsome_f08_", "mpi_testsome_f08_"} {
		if got := entrySrc(t, src, name); strings.Contains(got, "+= 1") || strings.Contains(got, "+ 1)") {
			t.Errorf("%s adds 1 to the C index:\n%s", name, got)
		}
	}
}
