package mpitest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// familyName is how the library's warning names a family.
var familyName = map[string]string{"openmpi": "Open MPI", "mpich": "MPICH"}

// TestWrongBuild: a libmpiscope built for the other MPI family, preloaded
// into a program (the README's "-genv LD_PRELOAD build/lib/libmpiscope.so"
// with the link pointing at the other build), finds out at load that the
// program's MPI is not its own, touches nothing and passes every call on:
// the program prints what it prints without the library and exits 0;
// rank 0 warns once; no job directory is written. Before, the Open MPI
// build died on an MPICH program with "Invalid communicator" and the MPICH
// build crashed an Open MPI program.
func TestWrongBuild(t *testing.T) {
	ompi, mpich := Get(t, "openmpi"), Get(t, "mpich")
	for _, c := range []struct{ prog, lib Family }{{ompi, mpich}, {mpich, ompi}} {
		t.Run(c.prog.Name+"-program-"+c.lib.Name+"-library", func(t *testing.T) {
			dir := t.TempDir()
			prog := Compile(t, c.prog.MPICC, "wrongbuild.c", dir)
			base := c.prog.Exec(t, Run{NP: 2, Args: []string{prog}})
			if base.Err != nil || strings.Count(base.Stdout, "error MPI_ERR_RANK, total 4950") != 2 {
				t.Fatalf("without mpiscope: %v\nstdout:\n%s\nstderr:\n%s", base.Err, base.Stdout, base.Stderr)
			}
			for _, quiet := range []bool{false, true} {
				job := filepath.Join(t.TempDir(), "job")
				env := map[string]string{"MPISCOPE_OUT": job}
				if quiet {
					env["MPISCOPE_QUIET"] = "1"
				}
				res := c.prog.Exec(t, Run{NP: 2, Env: env, Preload: c.lib.Lib(), Args: []string{prog}})
				if res.Err != nil {
					t.Fatalf("quiet=%v: mpirun: %v\nstdout:\n%s\nstderr:\n%s", quiet, res.Err, res.Stdout, res.Stderr)
				}
				if got, want := sortedLines(res.Stdout), sortedLines(base.Stdout); got != want {
					t.Errorf("quiet=%v: stdout:\n%s\nwant (without mpiscope):\n%s", quiet, got, want)
				}
				want := "mpiscope: warning: this libmpiscope was built for " + familyName[c.lib.Name] +
					" but the program runs on " + familyName[c.prog.Name]
				n := 0
				if !quiet {
					n = 1
				}
				lines := 0
				for _, l := range strings.Split(res.Stderr, "\n") {
					if strings.Contains(l, "mpiscope") {
						lines++
					}
				}
				if lines != n || strings.Count(res.Stderr, want) != n {
					t.Errorf("quiet=%v: stderr:\n%s\nwant %d line(s) %q and nothing else of mpiscope", quiet, res.Stderr, n, want)
				}
				if _, err := os.Stat(job); !os.IsNotExist(err) {
					t.Errorf("quiet=%v: %s: %v, want nothing written", quiet, job, err)
				}
			}
		})
	}
}

// TestLauncherWrongBuild: the launcher refuses a -family or -lib that is
// not the program's MPI, and a -lib that does not exist, with a message
// and exit status 2, before running anything. Where it cannot tell the
// program's MPI (a script) it takes -family and -lib as they are; a -lib
// of the program's own family runs the program profiled.
func TestLauncherWrongBuild(t *testing.T) {
	ompi, mpich := Get(t, "openmpi"), Get(t, "mpich")
	dir := t.TempDir()
	progs := map[string]string{}
	for _, f := range []Family{ompi, mpich} {
		d := filepath.Join(dir, f.Name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		progs[f.Name] = Compile(t, f.MPICC, "wrongbuild.c", d)
	}
	script := filepath.Join(dir, "show.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"LD_PRELOAD=$LD_PRELOAD\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	libdir := filepath.Dir(ompi.LibDir)
	run := func(args ...string) (string, int) {
		cmd := exec.Command(launcher(t), args...)
		cmd.Env = append(os.Environ(), "MPISCOPE_LIBDIR="+libdir)
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
	other := map[string]Family{"openmpi": mpich, "mpich": ompi}
	for fam, prog := range progs {
		o := other[fam]
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"-family", o.Name, prog}, "-family " + o.Name + " does not match " + prog + ", which runs on " + fam},
			{[]string{"-lib", o.Lib(), prog}, "is built for " + o.Name + " but " + prog + " runs on " + fam},
			{[]string{"-lib", "/nonexistent.so", prog}, "-lib /nonexistent.so: "},
			{[]string{"-family", "lam", prog}, "-family lam: want openmpi or mpich"},
		} {
			out, code := run(c.args...)
			if code != 2 || !strings.Contains(out, c.want) || strings.Contains(out, "rank 0 of") {
				t.Errorf("mpiscope %s: exit %d, output:\n%s\nwant exit 2 and %q", strings.Join(c.args, " "), code, out, c.want)
			}
		}
		// A program whose MPI the launcher cannot tell: as asked.
		out, code := run("-family", fam, script)
		if want := "LD_PRELOAD=" + filepath.Join(libdir, fam, "libmpiscope.so"); code != 0 || strings.TrimSpace(out) != want {
			t.Errorf("mpiscope -family %s %s: exit %d, %q; want %q", fam, script, code, out, want)
		}
	}
	// The program's own family by -lib: profiled.
	for _, f := range []Family{ompi, mpich} {
		job := filepath.Join(t.TempDir(), "job")
		res := f.Exec(t, Run{NP: 2, Env: map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_SUMMARY": "0"},
			Args: []string{launcher(t), "-lib", f.Lib(), progs[f.Name]}})
		if res.Err != nil || strings.Count(res.Stdout, "total 4950") != 2 {
			t.Errorf("%s: mpiscope -lib %s: %v\nstdout:\n%s\nstderr:\n%s", f.Name, f.Lib(), res.Err, res.Stdout, res.Stderr)
			continue
		}
		if _, err := os.Stat(filepath.Join(job, "profile.mps")); err != nil {
			t.Errorf("%s: %v", f.Name, err)
		}
	}
}
