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
