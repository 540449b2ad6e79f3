package mpitest

// The bindings matrix: {Open MPI, MPICH} x {C, C++ (C API), C++ bindings
// (Open MPI), Fortran mpif.h, use mpi, use mpi_f08} x {launcher prefix,
// LD_PRELOAD, link-time shared, static archive, and preloaded under
// MPISCOPE_ENABLE=never}. Every program makes the
// calls of testdata/progs/cxx/bind.c; every profile must hold exactly the
// same counts, bytes and peers, the send callsite must be the program's
// source line, and the program's stdout must be the same as without mpiscope.

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/mpiscope/mpiscope/profile"
)

type bindProg struct {
	name, src string
	cc        func(f Family) string
	only      string // family, "" = both
	inline    bool   // calls made from inline binding code (C++ bindings): callsite in a header
}

var bindProgs = []bindProg{
	{name: "c", src: "cxx/bind.c", cc: func(f Family) string { return f.MPICC }},
	{name: "cxx-capi", src: "cxx/bind_capi.cpp", cc: func(f Family) string { return f.MPICXX }},
	{name: "cxx-bindings", src: "cxx/bind_cxx.cpp", cc: func(f Family) string { return f.MPICXX }, only: "openmpi", inline: true},
	{name: "f-mpif", src: "fortran/bind_mpif.f90", cc: func(f Family) string { return f.MPIFORT }},
	{name: "f-usempi", src: "fortran/bind_usempi.f90", cc: func(f Family) string { return f.MPIFORT }},
	{name: "f-f08", src: "fortran/bind_f08.f90", cc: func(f Family) string { return f.MPIFORT }},
}

// bindWant is the whole profile of bind.c on 2 ranks: nothing else may appear.
var bindWant = map[string][2]int64{
	"MPI_Comm_rank": {2, 0},
	"MPI_Comm_size": {2, 0},
	"MPI_Send":      {1000, 8000},
	"MPI_Recv":      {1000, 8000},
	"MPI_Barrier":   {2, 0}, // two more inside the Pcontrol(0) window
	"MPI_Allreduce": {2, 32},
	"MPI_Irecv":     {4, 32},
	"MPI_Isend":     {4, 32},
	"MPI_Waitall":   {2, 0},
	"MPI_Bcast":     {2, 80},
}

var launcherOnce sync.Once
var launcherPath, launcherErr = "", error(nil)

// launcher builds the mpiscope command once.
func launcher(t *testing.T) string {
	launcherOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mpiscope-cli")
		if err != nil {
			launcherErr = err
			return
		}
		launcherPath = filepath.Join(dir, "mpiscope")
		_, file, _, _ := runtime.Caller(0)
		cmd := exec.Command("go", "build", "-o", launcherPath, "./cmd/mpiscope")
		cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			launcherErr = err
			launcherPath = string(out)
		}
	})
	if launcherErr != nil {
		t.Fatalf("building the launcher: %v\n%s", launcherErr, launcherPath)
	}
	return launcherPath
}

func sortedLines(s string) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	sort.Strings(l)
	return strings.Join(l, "\n")
}

// sendLine is the line of the source marked SEND-LINE.
func sendLine(t *testing.T, src string) int {
	b, err := os.ReadFile(Testdata(src))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "SEND-LINE") {
			return i + 1
		}
	}
	t.Fatalf("%s: no SEND-LINE marker", src)
	return 0
}

// bindSetup is what eachBindProg gives the test of one program of the
// matrix on one family.
type bindSetup struct {
	f       Family
	bp      bindProg
	compile func(mode string, extra ...string) string // bp.src built into a directory of its own per mode
	plain   string                                    // the program built without mpiscope
	base    Result                                    // its run without mpiscope (np=2)
	line    int                                       // the line of its MPI_Send (SEND-LINE)
}

// eachBindProg runs fn, as a subtest of each family's, for every program
// of bindProgs that the family has (the C++ bindings only on Open MPI),
// once the program is built and has run without mpiscope; a compiler that
// is missing skips it (fails it under CI=true).
func eachBindProg(t *testing.T, fn func(t *testing.T, s bindSetup)) {
	Families(t, func(t *testing.T, f Family) {
		for _, bp := range bindProgs {
			if bp.only != "" && bp.only != f.Name {
				continue
			}
			t.Run(bp.name, func(t *testing.T) {
				cc := bp.cc(f)
				if _, err := exec.LookPath(cc); err != nil {
					Skip(t, "%s not installed", cc)
				}
				dir := t.TempDir()
				compile := func(mode string, extra ...string) string {
					d := filepath.Join(dir, mode)
					if err := os.MkdirAll(d, 0o755); err != nil {
						t.Fatal(err)
					}
					return Compile(t, cc, bp.src, d, extra...)
				}
				plain := compile("plain")
				base := f.Exec(t, Run{NP: 2, Args: []string{plain}})
				if base.Err != nil {
					t.Fatalf("without mpiscope: %v\n%s\n%s", base.Err, base.Stdout, base.Stderr)
				}
				fn(t, bindSetup{f: f, bp: bp, compile: compile, plain: plain, base: base, line: sendLine(t, bp.src)})
			})
		}
	})
}

func TestBindingsMatrix(t *testing.T) {
	eachBindProg(t, func(t *testing.T, s bindSetup) {
		f, bp, compile, plain, base, line := s.f, s.bp, s.compile, s.plain, s.base, s.line
		check := func(t *testing.T, p *profile.Profile, res Result) {
			t.Helper()
			bindCheck(t, bp, line, base.Stdout, p, res)
		}
		run := func(t *testing.T, prog string, preload bool, prefix []string) {
			job := filepath.Join(t.TempDir(), "job")
			r := Run{NP: 2, Env: map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_SUMMARY": "0",
				"MPISCOPE_LIBDIR": filepath.Dir(f.LibDir)}, Args: append(prefix, prog)}
			if preload {
				r.Preload = f.Lib()
			}
			p, res := f.ExecLoad(t, r, job)
			check(t, p, res)
		}
		t.Run("launcher", func(t *testing.T) { run(t, plain, false, []string{launcher(t)}) })
		t.Run("preload", func(t *testing.T) { run(t, plain, true, nil) })
		t.Run("link-shared", func(t *testing.T) {
			prog := compile("shared", "-L"+f.LibDir, "-Wl,-rpath,"+f.LibDir, "-lmpiscope")
			run(t, prog, false, nil)
		})
		t.Run("static", func(t *testing.T) {
			prog := compile("static", f.Archive(), "-lpthread", "-ldl")
			run(t, prog, false, nil)
		})
		// MPISCOPE_ENABLE=never (TestNever): the binding's calls reach
		// the MPI library as without mpiscope, and nothing is written.
		t.Run("never", func(t *testing.T) {
			job := filepath.Join(t.TempDir(), "job")
			res := f.Exec(t, Run{NP: 2, Env: map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_ENABLE": "never"},
				Preload: f.Lib(), Args: []string{plain}})
			if res.Err != nil {
				t.Fatalf("mpirun: %v\nstdout:\n%s\nstderr:\n%s", res.Err, res.Stdout, res.Stderr)
			}
			if got, want := sortedLines(res.Stdout), sortedLines(base.Stdout); got != want {
				t.Errorf("stdout differs under never:\n%s\nwithout mpiscope:\n%s", got, want)
			}
			if _, err := os.Stat(job); !os.IsNotExist(err) {
				t.Errorf("%s: %v, want nothing written", job, err)
			}
		})
	})
}

// bindCheck checks a profile of bp's program and its output against the
// matrix's expectations: the exact counts of bindWant and nothing else, the
// peer matrix, the MPI_Send callsite at the source line (line), and the
// program's stdout as without mpiscope (baseStdout).
func bindCheck(t *testing.T, bp bindProg, line int, baseStdout string, p *profile.Profile, res Result) {
	t.Helper()
	if got, want := sortedLines(res.Stdout), sortedLines(baseStdout); got != want {
		t.Errorf("stdout differs with mpiscope:\n%s\nwithout:\n%s", got, want)
	}
	Want(t, p, bindWant)
	for _, fn := range p.Funcs {
		if _, ok := bindWant[fn.Name]; !ok {
			t.Errorf("unexpected %s: %d calls", fn.Name, fn.Calls)
		}
	}
	var p01, p10 profile.Peer
	for _, pe := range p.Peers {
		switch {
		case pe.Rank == 0 && pe.Peer == 1:
			p01 = pe
		case pe.Rank == 1 && pe.Peer == 0:
			p10 = pe
		}
	}
	if p01.SentMsgs != 1002 || p01.SentBytes != 8016 || p01.RecvMsgs != 2 || p01.RecvBytes != 16 {
		t.Errorf("peers 0->1: %+v", p01)
	}
	if p10.SentMsgs != 2 || p10.SentBytes != 16 || p10.RecvMsgs != 1002 || p10.RecvBytes != 8016 {
		t.Errorf("peers 1->0: %+v", p10)
	}
	for _, s := range p.Sites {
		if s.Func != "MPI_Send" {
			continue
		}
		if bp.inline {
			if s.Loc.Function != "main" {
				t.Errorf("MPI_Send callsite %+v: want in main", s.Loc)
			}
		} else if filepath.Base(s.Loc.File) != filepath.Base(bp.src) || s.Loc.Line != line {
			t.Errorf("MPI_Send callsite %s:%d (%s), want %s:%d", s.Loc.File, s.Loc.Line, s.Loc.Function, filepath.Base(bp.src), line)
		}
	}
}

// TestMPI4MPICH: large-count, persistent collective and Isendrecv calls.
func TestMPI4MPICH(t *testing.T) {
	f := Get(t, "mpich")
	prog := Compile(t, f.MPICC, "mpi4/mpi4.c", t.TempDir())
	p, _, res := f.Profile(t, 2, nil, prog)
	if !strings.Contains(res.Stdout, "rank 1: sum 4950 total 95 got 45") {
		t.Errorf("stdout: %s", res.Stdout)
	}
	Want(t, p, map[string][2]int64{
		"MPI_Send_c":         {100, 1600},
		"MPI_Recv_c":         {100, 1600},
		"MPI_Allreduce_init": {2, 0},
		"MPI_Start":          {10, 320}, // 5 starts x 8 ints per rank
		"MPI_Isendrecv":      {20, 320}, // send part: 4 ints
		"MPI_Wait":           {30, 0},
		"MPI_Request_free":   {2, 0},
	})
}
