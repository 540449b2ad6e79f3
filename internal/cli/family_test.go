package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpitest"
)

// The launcher picks the library from the program's DT_NEEDED: C, C++ and
// Fortran programs of both families.
func TestProgramFamily(t *testing.T) {
	for _, fam := range []string{"openmpi", "mpich"} {
		t.Run(fam, func(t *testing.T) {
			f := mpitest.Get(t, fam)
			dir := t.TempDir()
			for _, c := range []struct{ cc, src string }{
				{f.MPICC, "cxx/bind.c"}, {f.MPICXX, "cxx/bind_capi.cpp"},
				{f.MPIFORT, "fortran/bind_mpif.f90"}, {f.MPIFORT, "fortran/bind_f08.f90"},
			} {
				if _, err := exec.LookPath(c.cc); err != nil {
					mpitest.Skip(t, "%s not installed", c.cc)
				}
				prog := mpitest.Compile(t, c.cc, c.src, dir)
				got, err := ProgramFamily(prog)
				if err != nil || got != fam {
					t.Errorf("%s: %q, %v; want %s", c.src, got, err, fam)
				}
			}
		})
	}
}

// When it cannot tell, the error says what to do.
func TestProgramFamilyUnknown(t *testing.T) {
	script := filepath.Join(t.TempDir(), "run.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable() // an ELF program that links no MPI
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{script, self} {
		_, err := ProgramFamily(p)
		if err == nil || !strings.Contains(err.Error(), "-family openmpi|mpich") {
			t.Errorf("%s: %v; want an error suggesting -family", p, err)
		}
	}
}
