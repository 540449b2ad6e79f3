package wrapgen

import (
	"bytes"
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

// TestFortranCompletionOpenMPI: Open MPI's entries write requests and
// statuses back only when the C function succeeded (MPI_Test and
// MPI_Testall: and set its flag), MPI_Startall's requests always, and its
// MPI_Request_get_status answers MPI_STATUS_IGNORE without a call (fDones).
func TestFortranCompletionOpenMPI(t *testing.T) {
	src := string(fplan(t, "openmpi-4.1.4", "fortran-openmpi-4.1.4.fsymbols").GenerateFortran("test"))
	for name, want := range map[string][]string{
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
	} {
		got := entrySrc(t, src, name)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s lacks %q:\n%s", name, w, got)
			}
		}
	}
	// Calls that complete no request write back as before.
	if got := entrySrc(t, src, "mpi_comm_dup_"); strings.Contains(got, "if (ms_rc == MPI_SUCCESS)") {
		t.Errorf("mpi_comm_dup_ writes back only on success:\n%s", got)
	}
}

// TestFortranCompletionMPICH: MPICH's mpif.h/use mpi entries give
// MPI_Waitany's and MPI_Testany's index (+1, MPI_UNDEFINED too) and the
// LOGICAL flags only on success, and +1 the indices of MPI_Waitsome and
// MPI_Testsome whatever the C function returned; its mpi_f08 entries
// pass the C index and indices on as they are (fDones).
func TestFortranCompletionMPICH(t *testing.T) {
	src := string(fplan(t, "mpich-4.0.2", "fortran-mpich-4.0.2.fsymbols").GenerateFortran("test"))
	for name, want := range map[string][]string{
		"mpi_waitany_": {"ms_slow_MPI_Waitany((int)*(MPI_Fint *)f0, ms_r1, &ms_x2, ms_sp3,",
			"\tif (ms_rc == MPI_SUCCESS)\n\t\t*(MPI_Fint *)f2 = (MPI_Fint)(ms_x2 + 1);\n"},
		"mpi_testany_":            {"&ms_x2, &ms_fl3, ms_sp4,", "\tif (ms_rc == MPI_SUCCESS)\n\t\t*(MPI_Fint *)f3 = (MPI_Fint)(ms_fl3 != 0);\n"},
		"mpi_test_":               {"ms_slow_MPI_Test(&ms_h0, &ms_fl1, ms_sp2,", "\tif (ms_rc == MPI_SUCCESS)\n\t\t*(MPI_Fint *)f1 = (MPI_Fint)(ms_fl1 != 0);\n"},
		"mpi_testall_":            {"\tif (ms_rc == MPI_SUCCESS)\n\t\t*(MPI_Fint *)f2 = (MPI_Fint)(ms_fl2 != 0);\n"},
		"mpi_request_get_status_": {"\tif (ms_rc == MPI_SUCCESS)\n\t\t*(MPI_Fint *)f1 = (MPI_Fint)(ms_fl1 != 0);\n"},
		"mpi_waitsome_":           {"\tfor (int ms_i = 0; ms_i < *(MPI_Fint *)f2; ms_i++)\n\t\t((MPI_Fint *)f3)[ms_i] += 1;\n"},
		"mpi_waitany_f08_":        {"ms_slow_MPI_Waitany((int)*(MPI_Fint *)f0, ms_r1, (int *)f2, ms_sp3,"},
		"mpi_test_f08_":           {"ms_slow_MPI_Test(&ms_h0, (int *)f1, ms_sp2,"},
	} {
		got := entrySrc(t, src, name)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s lacks %q:\n%s", name, w, got)
			}
		}
	}
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
