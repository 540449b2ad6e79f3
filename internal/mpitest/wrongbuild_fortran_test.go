package mpitest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWrongBuildFortran: a Fortran program under a libmpiscope built for
// the other MPI family cannot run: its Fortran MPI library's calls into the
// C library are bound by the loader to the other family's C library that
// the wrong build brings in (an Open MPI program under the MPICH build:
// libmpi_mpifh's PMPI_Init binds to libmpich.so.12; `LD_DEBUG=bindings`
// shows it), and our Fortran wrappers convert handles for our family.
// Before, the ranks died in their first MPI call ("Invalid communicator",
// MPI_ERR_COMM); now each rank exits at load, before any MPI call, with
// one line of ours on rank 0 naming both families, and nothing is written.
// The launcher refuses the mismatch before running anything.
func TestWrongBuildFortran(t *testing.T) {
	ompi, mpich := Get(t, "openmpi"), Get(t, "mpich")
	for _, c := range []struct{ prog, lib Family }{{ompi, mpich}, {mpich, ompi}} {
		t.Run(c.prog.Name+"-program-"+c.lib.Name+"-library", func(t *testing.T) {
			dir := t.TempDir()
			prog := Compile(t, c.prog.MPIFORT, "fortran/wrongbuild.f90", dir)
			base := c.prog.Exec(t, Run{NP: 2, Args: []string{prog}})
			if base.Err != nil || sortedLines(base.Stdout) != "wrongbuild rank 0 sum 1\nwrongbuild rank 1 sum 1" {
				t.Fatalf("without mpiscope: %v\nstdout:\n%s\nstderr:\n%s", base.Err, base.Stdout, base.Stderr)
			}
			job := filepath.Join(t.TempDir(), "job")
			res := c.prog.Exec(t, Run{NP: 2, Env: map[string]string{"MPISCOPE_OUT": job}, Preload: c.lib.Lib(), Args: []string{prog}})
			if res.Err == nil {
				t.Errorf("mpirun succeeded; want the ranks to exit")
			}
			want := "mpiscope: error: this libmpiscope was built for " + familyName[c.lib.Name] +
				" but the program is a Fortran program on " + familyName[c.prog.Name]
			if n := strings.Count(res.Stderr, want); n != 1 {
				t.Errorf("stderr has %d lines %q, want 1:\n%s", n, want, res.Stderr)
			}
			for _, bad := range []string{"Invalid communicator", "MPI_ERR_COMM", "wrongbuild rank"} {
				if strings.Contains(res.Stderr+res.Stdout, bad) {
					t.Errorf("output has %q: an MPI call was made\nstdout:\n%s\nstderr:\n%s", bad, res.Stdout, res.Stderr)
				}
			}
			if _, err := os.Stat(job); !os.IsNotExist(err) {
				t.Errorf("%s: %v, want nothing written", job, err)
			}

			// The launcher refuses it with exit status 2.
			out, code := runLauncher(t, "-family", c.lib.Name, prog)
			if w := "-family " + c.lib.Name + " does not match " + prog + ", which runs on " + c.prog.Name; code != 2 || !strings.Contains(out, w) {
				t.Errorf("mpiscope -family %s %s: exit %d, output:\n%s\nwant exit 2 and %q", c.lib.Name, prog, code, out, w)
			}

			// Its own build profiles it.
			job = filepath.Join(t.TempDir(), "job")
			res = c.prog.Exec(t, Run{NP: 2, Env: map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_SUMMARY": "0"}, Preload: c.prog.Lib(), Args: []string{prog}})
			if res.Err != nil || sortedLines(res.Stdout) != sortedLines(base.Stdout) {
				t.Errorf("own build: %v\nstdout:\n%s\nstderr:\n%s", res.Err, res.Stdout, res.Stderr)
			}
			if _, err := os.Stat(filepath.Join(job, "profile.mps")); err != nil {
				t.Errorf("own build: %v", err)
			}
		})
	}
}

// runLauncher runs the mpiscope command with the libraries of this build
// and returns its combined output and exit status.
func runLauncher(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(launcher(t), args...)
	cmd.Env = append(os.Environ(), "MPISCOPE_LIBDIR="+filepath.Dir(Get(t, "openmpi").LibDir))
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	}
	t.Fatalf("mpiscope %v: %v", args, err)
	return "", -1
}
