// Package mpitest runs real MPI programs under mpirun for mpiscope's
// end-to-end tests: it finds the MPI families installed and the libmpiscope
// built for each (make lib), compiles test programs, runs them with the
// library preloaded (or linked), and loads what they wrote.
//
// Outside CI a missing MPI or build skips the test; with CI=true (which
// `make test` sets) it fails: testutil.SkipOrFail decides.
package mpitest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mpiscope/mpiscope/internal/testutil"
	"github.com/mpiscope/mpiscope/profile"
)

// Family is one MPI implementation and the mpiscope build for it.
type Family struct {
	Name    string // "openmpi" or "mpich"
	MPICC   string // absolute, as recorded by the build (<build>/lib/<family>/mpicc)
	MPICXX  string // the others: MPICC's siblings (mpicc.openmpi -> mpicxx.openmpi)
	MPIFORT string
	MPIRun  string
	LibDir  string // <build>/lib/<family>, absolute
}

// Lib is the shared library to preload.
func (f Family) Lib() string { return filepath.Join(f.LibDir, "libmpiscope.so") }

// Archive is the static archive.
func (f Family) Archive() string { return filepath.Join(f.LibDir, "libmpiscope.a") }

// names are the families tested, in order.
var names = []string{"openmpi", "mpich"}

// InCI reports whether skipping is forbidden (testutil.InCI).
func InCI() bool { return testutil.InCI() }

// Skip skips the test, or fails it in CI (testutil.SkipOrFail).
func Skip(t testing.TB, format string, args ...any) {
	t.Helper()
	testutil.SkipOrFail(t, format, args...)
}

// BuildDir is the build directory, absolute (MPISCOPE_BUILD, relative to
// the repository when not absolute, else <repo>/build).
func BuildDir(t testing.TB) string {
	_, file, _, _ := runtime.Caller(0)
	repo := filepath.Join(filepath.Dir(file), "..", "..")
	d := os.Getenv("MPISCOPE_BUILD")
	if d == "" {
		d = "build"
	}
	if !filepath.IsAbs(d) {
		d = filepath.Join(repo, d)
	}
	return filepath.Clean(d)
}

// Get returns the named family, skipping (or failing in CI) when its
// libmpiscope build is missing, does not say which mpicc made it, or that
// MPI is no longer installed. The compilers and mpirun are the recorded
// mpicc's siblings: the tests run the MPI the library was built against.
func Get(t testing.TB, name string) Family {
	t.Helper()
	known := false
	for _, n := range names {
		known = known || n == name
	}
	if !known {
		t.Fatalf("unknown MPI family %q", name)
	}
	f := Family{Name: name, LibDir: filepath.Join(BuildDir(t), "lib", name)}
	if _, err := os.Stat(f.Lib()); err != nil {
		Skip(t, "no libmpiscope for %s: run make lib (%v)", name, err)
		return f
	}
	if src, err := newestSource(name); err != nil {
		t.Fatalf("finding the sources of libmpiscope: %v", err)
	} else if li, err := os.Stat(f.Lib()); err == nil && src.mod.After(li.ModTime()) {
		Skip(t, "%s is stale: %s is newer; run make lib", f.Lib(), src.path)
		return f
	}
	rec := filepath.Join(f.LibDir, "mpicc")
	b, err := os.ReadFile(rec)
	if err != nil {
		Skip(t, "the %s build does not record its mpicc: run make lib (%v)", name, err)
		return f
	}
	f.MPICC = strings.TrimSpace(string(b))
	if _, err := exec.LookPath(f.MPICC); err != nil {
		Skip(t, "%s, which built %s, is not installed (%v)", f.MPICC, f.LibDir, err)
		return f
	}
	dir, base := filepath.Split(f.MPICC)
	suffix, ok := strings.CutPrefix(base, "mpicc")
	if !ok {
		t.Fatalf("%s: %s is not named mpicc*: cannot find its mpicxx, mpifort and mpirun", rec, f.MPICC)
	}
	f.MPICXX = dir + "mpicxx" + suffix
	f.MPIFORT = dir + "mpifort" + suffix
	f.MPIRun = dir + "mpirun" + suffix
	return f
}

// source is a file and its modification time.
type source struct {
	path string
	mod  time.Time
}

var newest sync.Map // family -> func() (source, error)

// newestSource is the most recently modified of the files a family's
// libmpiscope is built from (the Go, C and header files of the packages
// ./cmd/libmpiscope depends on, with that family's build tag), found once.
func newestSource(family string) (source, error) {
	fn, _ := newest.LoadOrStore(family, sync.OnceValues(func() (source, error) {
		_, file, _, _ := runtime.Caller(0)
		cmd := exec.Command("go", "list", "-deps", "-tags", "mpiscope_"+family, "-f",
			`{{if not .Standard}}{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}
{{end}}{{range .CgoFiles}}{{$d}}/{{.}}
{{end}}{{range .CFiles}}{{$d}}/{{.}}
{{end}}{{range .HFiles}}{{$d}}/{{.}}
{{end}}{{end}}`, "./cmd/libmpiscope")
		cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
		out, err := cmd.Output()
		if err != nil {
			return source{}, fmt.Errorf("go list: %v", err)
		}
		var n source
		for _, p := range strings.Fields(string(out)) {
			fi, err := os.Stat(p)
			if err != nil {
				return source{}, err
			}
			if fi.ModTime().After(n.mod) {
				n = source{p, fi.ModTime()}
			}
		}
		if n.path == "" {
			return source{}, fmt.Errorf("go list found no source files")
		}
		return n, nil
	}))
	return fn.(func() (source, error))()
}

// Families returns both families (each skipped or failed as Get does).
func Families(t *testing.T, fn func(t *testing.T, f Family)) {
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			fn(t, Get(t, name))
		})
	}
}

// Testdata is the repository's testdata/progs directory.
func Testdata(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "progs", name)
}

// Compile builds src (a path under testdata/progs or absolute) with the
// compiler cc (e.g. f.MPICC) into dir and returns the program path.
func Compile(t testing.TB, cc, src, dir string, extra ...string) string {
	t.Helper()
	if !filepath.IsAbs(src) {
		src = Testdata(src)
	}
	out := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), filepath.Ext(src)))
	args := append([]string{"-g", "-O1", "-o", out, src}, extra...)
	cmd := exec.Command(cc, args...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, b)
	}
	return out
}

// Run describes one mpirun.
type Run struct {
	NP      int
	Env     map[string]string // extra environment (MPISCOPE_*)
	Preload string            // library to preload ("" = none)
	Args    []string          // program and its arguments
	Timeout time.Duration     // default 120 s
	Dir     string            // working directory
}

// Result is what a run produced.
type Result struct {
	Stdout, Stderr string
	Err            error
}

// Exec runs the program under the family's mpirun.
func (f Family) Exec(t testing.TB, r Run) Result {
	t.Helper()
	if r.Timeout == 0 {
		r.Timeout = 120 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.Timeout)
	defer cancel()
	args := []string{"-np", fmt.Sprint(r.NP)}
	env := os.Environ()
	env = append(env, "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		// Keep Open MPI quiet and local on test machines.
		"OMPI_MCA_btl_vader_single_copy_mechanism=none", "OMPI_MCA_rmaps_base_oversubscribe=1")
	for k, v := range r.Env {
		env = append(env, k+"="+v)
	}
	switch f.Name {
	case "openmpi":
		args = append(args, "--oversubscribe")
		if r.Preload != "" {
			args = append(args, "-x", "LD_PRELOAD="+r.Preload)
		}
	case "mpich":
		if r.Preload != "" {
			args = append(args, "-genv", "LD_PRELOAD", r.Preload)
		}
	}
	args = append(args, r.Args...)
	cmd := exec.CommandContext(ctx, f.MPIRun, args...)
	cmd.Env = env
	cmd.Dir = r.Dir
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %v: %w", r.Timeout, err)
	}
	return Result{Stdout: so.String(), Stderr: se.String(), Err: err}
}

// Profile runs prog with the library preloaded and MPISCOPE_OUT set to a
// fresh directory, fails the test if the run fails, and returns the loaded
// profile and the job directory.
func (f Family) Profile(t testing.TB, np int, env map[string]string, args ...string) (*profile.Profile, string, Result) {
	t.Helper()
	job := filepath.Join(t.TempDir(), "job")
	e := map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_SUMMARY": "0"}
	for k, v := range env {
		e[k] = v
	}
	p, res := f.ExecLoad(t, Run{NP: np, Env: e, Preload: f.Lib(), Args: args}, job)
	return p, job, res
}

// ExecLoad runs r and loads the profile it wrote to job; either failing
// ends the test with mpirun's output.
func (f Family) ExecLoad(t testing.TB, r Run, job string) (*profile.Profile, Result) {
	t.Helper()
	res := f.Exec(t, r)
	if res.Err != nil {
		t.Fatalf("mpirun %v: %v\nstdout:\n%s\nstderr:\n%s", r.Args, res.Err, res.Stdout, res.Stderr)
	}
	p, _, err := profile.Load(job)
	if err != nil {
		t.Fatalf("loading %s: %v\nstderr:\n%s", job, err, res.Stderr)
	}
	return p, res
}

// Func returns the named function's entry, or a zero Func.
func Func(p *profile.Profile, name string) profile.Func {
	for _, f := range p.Funcs {
		if f.Name == name {
			return f
		}
	}
	return profile.Func{Name: name}
}

// Want checks calls and bytes of functions: want maps name -> [calls, bytes].
func Want(t testing.TB, p *profile.Profile, want map[string][2]int64) {
	t.Helper()
	for name, cb := range want {
		f := Func(p, name)
		if f.Calls != cb[0] || f.Bytes != cb[1] {
			t.Errorf("%s: got %d calls, %d bytes; want %d calls, %d bytes", name, f.Calls, f.Bytes, cb[0], cb[1])
		}
	}
}
