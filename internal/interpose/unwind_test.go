package interpose

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/testutil"
)

// The unwinder's tests (unwind.c, docs/callpaths.md) build the C programs
// of testdata/unwind with the system compilers and run them; each prints
// PASS with its counts or FAIL with the frames that differ.

// unwindBuild compiles and links one program in dir from srcs (paths
// relative to testdata/unwind or the package) with cflags, each source
// with its own extra flags after a "|" (e.g. "lib.c|-fPIC -shared").
type unwindBuild struct {
	t   *testing.T
	dir string
}

func newUnwindBuild(t *testing.T) *unwindBuild {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the unwinder is for x86-64 Linux")
	}
	testutil.RequireTool(t, "gcc")
	return &unwindBuild{t: t, dir: t.TempDir()}
}

func (b *unwindBuild) run(name string, args ...string) string {
	b.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = b.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// src is the absolute path of a source of testdata/unwind, or of the
// package for unwind.c.
func (b *unwindBuild) src(name string) string {
	here, _ := os.Getwd()
	if name == "unwind.c" {
		return filepath.Join(here, name)
	}
	return filepath.Join(here, "testdata", "unwind", name)
}

// obj compiles one source to an object file named out.
func (b *unwindBuild) obj(cc, src, out string, flags ...string) string {
	here, _ := os.Getwd()
	args := append([]string{"-c", "-g", "-I", here}, flags...)
	b.run(cc, append(args, b.src(src), "-o", out)...)
	return out
}

// pass runs a built program and requires its PASS line.
func (b *unwindBuild) pass(prog string, env ...string) string {
	b.t.Helper()
	return b.passArgs(prog, nil, env...)
}

// passArgs is pass with arguments.
func (b *unwindBuild) passArgs(prog string, args []string, env ...string) string {
	b.t.Helper()
	cmd := exec.Command(filepath.Join(b.dir, prog), args...)
	cmd.Dir = b.dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PASS") {
		b.t.Fatalf("%s: %v\n%s", prog, err, out)
	}
	b.t.Logf("%s: %s", prog, strings.TrimSpace(string(out)))
	return string(out)
}

// TestUnwindReference checks ms_unwind against glibc's backtrace() taken
// in the same frame, frame for frame, and the frames' names against the
// call chains known by construction (testdata/unwind/ref.c, lib.c): plain
// chains, recursion to depth 6, alloca, a realigned stack (a CFA
// expression), a qsort callback through libc, calls from and through a
// shared library of the program's own, a library opened with dlopen after
// the unwinder read the loaded objects (read again once), a signal handler
// (the walk ends at the signal frame), and no rule decoded again on a path
// already walked.
// Built four ways: without frame pointers (-O2 -fomit-frame-pointer), with
// them, mixed (the library with, the program without) and the library with
// frame pointers but no call-frame information (walked by rbp alone;
// backtrace() cannot walk it, so its frames are checked by name).
func TestUnwindReference(t *testing.T) {
	b := newUnwindBuild(t)
	probe := b.obj("gcc", "probe.c", "probe.o", "-O2", "-fno-omit-frame-pointer")
	unw := b.obj("gcc", "unwind.c", "unwind.o", "-O2")
	b.run("gcc", "-O2", "-g", "-fPIC", "-shared", "-I", filepath.Dir(b.src("unwind.c")), b.src("plugin.c"), "-o", "libplugin.so")
	const omit, keep = "-fomit-frame-pointer", "-fno-omit-frame-pointer"
	nocfi := []string{keep, "-fno-asynchronous-unwind-tables", "-fno-unwind-tables", "-DNOCFI"}
	for _, c := range []struct {
		name string
		main []string
		lib  []string
	}{
		{"omit", []string{omit}, []string{omit}},
		{"fp", []string{keep}, []string{keep}},
		{"mixed", []string{omit}, []string{keep}},
		{"nocfi", []string{omit, "-DNOCFI"}, nocfi},
	} {
		t.Run(c.name, func(t *testing.T) {
			b.t = t
			lib := "libref" + c.name + ".so"
			inc := filepath.Dir(b.src("unwind.c"))
			b.run("gcc", append(append([]string{"-O2", "-g", "-fPIC", "-shared", "-I", inc}, c.lib...), b.src("lib.c"), "-o", lib)...)
			prog := "ref-" + c.name
			b.run("gcc", append(append([]string{"-O2", "-g", "-rdynamic", "-I", inc}, c.main...),
				b.src("ref.c"), probe, unw, "-o", prog, "-L.", "-l:"+lib, "-Wl,-rpath,"+b.dir, "-ldl", "-lpthread")...)
			out := b.passArgs(prog, []string{"./libplugin.so"})
			// 110 walks checked; 32 return addresses decoded in all, of
			// which 4 (the library's) without an FDE in the nocfi build.
			if !strings.Contains(out, "PASS checks=110 decoded=32 ") {
				t.Errorf("%s: %q, want 110 checks and 32 addresses decoded", prog, out)
			}
			wantFDE := map[bool]string{true: "fde=28", false: "fde=32"}[c.name == "nocfi"]
			if !strings.Contains(out, wantFDE) {
				t.Errorf("%s: %q, want %s", prog, out, wantFDE)
			}
		})
	}
}

// TestUnwindLanguages: a C++ program (a virtual method, a template, a
// lambda through std::function, a constructor, a destructor run while an
// exception unwinds) and a gfortran subroutine chain, frame for frame
// with backtrace(), with and without frame pointers.
func TestUnwindLanguages(t *testing.T) {
	b := newUnwindBuild(t)
	testutil.RequireTool(t, "g++")
	testutil.RequireTool(t, "gfortran")
	probe := b.obj("gcc", "probe.c", "probe.o", "-O2", "-fno-omit-frame-pointer")
	unw := b.obj("gcc", "unwind.c", "unwind.o", "-O2")
	inc := filepath.Dir(b.src("unwind.c"))
	for _, fp := range []string{"-fomit-frame-pointer", "-fno-omit-frame-pointer"} {
		b.run("g++", "-O2", fp, "-g", "-rdynamic", "-I", inc, b.src("ref.cpp"), probe, unw, "-o", "refcpp", "-ldl")
		if out := b.pass("refcpp"); !strings.Contains(out, "PASS checks=5 ") {
			t.Errorf("C++ %s: %q, want 5 checks", fp, out)
		}
		fprobe := b.obj("gcc", "fprobe.c", "fprobe.o", "-O2", fp)
		b.run("gfortran", "-O2", fp, "-g", "-fno-inline", "-fno-optimize-sibling-calls", "-rdynamic", b.src("ref.f90"), fprobe, probe, unw, "-o", "reff", "-ldl")
		if out := b.pass("reff"); !strings.Contains(out, "PASS checks=1 ") {
			t.Errorf("Fortran %s: %q, want 1 check", fp, out)
		}
	}
}

// TestUnwindCorruption: hand-written assembly (testdata/unwind/garbage.S)
// that uses rbp as a general register with and without call-frame
// information, builds a frame that loops on itself, puts garbage where its
// call-frame information says the return address is, or a CFA far above
// the stack: each walk stops with exactly the frames up to there. Then
// 20,000 walks from random registers over random stack words: none
// faults.
func TestUnwindCorruption(t *testing.T) {
	b := newUnwindBuild(t)
	probe := b.obj("gcc", "probe.c", "probe.o", "-O2", "-fno-omit-frame-pointer")
	unw := b.obj("gcc", "unwind.c", "unwind.o", "-O2")
	inc := filepath.Dir(b.src("unwind.c"))
	for _, fp := range []string{"-fomit-frame-pointer", "-fno-omit-frame-pointer"} {
		b.run("gcc", "-O2", fp, "-g", "-rdynamic", "-I", inc, b.src("garbage.c"), b.src("garbage.S"), probe, unw, "-o", "garbage", "-ldl", "-lpthread")
		if out := b.pass("garbage"); !strings.Contains(out, "random walks: 20000") || !strings.Contains(out, "PASS checks=1 ") {
			t.Errorf("%s: %q", fp, out)
		}
	}
}

// TestUnwindThreads: 4 threads with chains of different depths, on
// stacks of different sizes (one of the program's own), start walking at
// once (first-sight decoding races) and walk 20,000 times each: every walk
// gives exactly the thread's frames, equal to backtrace()'s. Built plain
// and with -fsanitize=thread (unwind.c included), which must report no
// race.
func TestUnwindThreads(t *testing.T) {
	b := newUnwindBuild(t)
	inc := filepath.Dir(b.src("unwind.c"))
	b.run("gcc", "-O2", "-g", "-I", inc, b.src("threads.c"), b.src("unwind.c"), "-o", "threads", "-lpthread")
	out := b.pass("threads")
	for _, want := range []string{"thread 0: 7 frames", "thread 3: 4 frames", "PASS threads=4 walks=80000"} {
		if !strings.Contains(out, want) {
			t.Errorf("threads: %q, want %q", out, want)
		}
	}
	b.run("gcc", "-O1", "-g", "-fsanitize=thread", "-I", inc, b.src("threads.c"), b.src("unwind.c"), "-o", "threads-tsan", "-lpthread")
	out = b.pass("threads-tsan", "TSAN_OPTIONS=halt_on_error=1 exitcode=66")
	if strings.Contains(out, "ThreadSanitizer") || !strings.Contains(out, "PASS threads=4 walks=80000") {
		t.Errorf("threads under TSan: %q", out)
	}
}

// TestUnwindMPI walks from a user-defined reduction operation that the MPI
// library calls from its own frames (testdata/unwind/mpiop.c): ms_unwind
// equals backtrace() through the library's frames to main, with Open MPI
// and MPICH (one process, no mpirun).
func TestUnwindMPI(t *testing.T) {
	b := newUnwindBuild(t)
	inc := filepath.Dir(b.src("unwind.c"))
	for _, cc := range []string{"mpicc.openmpi", "mpicc.mpich"} {
		testutil.RequireTool(t, cc)
		prog := "mpiop-" + cc
		b.run(cc, "-O2", "-g", "-rdynamic", "-I", inc, b.src("mpiop.c"), b.src("probe.c"), b.src("unwind.c"), "-o", prog, "-ldl")
		if out := b.pass(prog, "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"); !strings.Contains(out, "PASS checks=1 ") {
			t.Errorf("%s: %q, want 1 check", prog, out)
		}
	}
}
