package mpitest_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/profile"
)

// callTree is testdata/progs/callpath/calltree.c's call tree: per
// function, each call path (innermost first, the program's frames only)
// and its calls over 2 ranks.
var callTree = map[string]map[string]int64{
	"MPI_Allreduce": {"halo<solve<main": 20, "halo<precond<main": 40, "halo<output<main": 10},
	"MPI_Barrier":   {"rec<rec<rec<rec<rec<rec<main": 6},
	"MPI_Bcast":     {"cp_lib_bcast<driver<main": 14},
	"MPI_Scan":      {"inl_scan<sweep<main": 6}, // inl_scan is inlined: no frame of its own
}

// callTreeFuncs are the program's functions (calltree.c, cplib.c).
var callTreeFuncs = map[string]bool{"halo": true, "solve": true, "precond": true, "output": true,
	"rec": true, "driver": true, "main": true, "cp_lib_bcast": true, "inl_scan": true, "sweep": true}

// wantPaths is callTree cut to depth frames (an inlined function's frame
// not counted: it has none).
func wantPaths(depth int) map[string]map[string]int64 {
	w := map[string]map[string]int64{}
	for fn, paths := range callTree {
		w[fn] = map[string]int64{}
		for p, n := range paths {
			fr := strings.Split(p, "<")
			d := depth
			if fr[0] == "inl_scan" {
				d++
			}
			if len(fr) > d {
				fr = fr[:d]
			}
			w[fn][strings.Join(fr, "<")] += n
		}
	}
	return w
}

// gotPaths renders p's paths of the functions in callTree as wantPaths
// does: the frames of the program, up to the first frame outside it (the
// C library's start-up frames above main). A path that appears twice
// (paths that differ outside the program, or that did not merge) fails.
func gotPaths(t *testing.T, p *profile.Profile) map[string]map[string]int64 {
	t.Helper()
	got := map[string]map[string]int64{}
	for _, q := range p.Paths {
		if callTree[q.Func] == nil {
			continue
		}
		if q.Other {
			t.Errorf("%s: calls in the \"other paths\" bucket: %+v", q.Func, q)
		}
		var names []string
		for _, f := range q.Frames {
			if !callTreeFuncs[f.Function] {
				break
			}
			names = append(names, f.Function)
		}
		k := strings.Join(names, "<")
		if got[q.Func] == nil {
			got[q.Func] = map[string]int64{}
		}
		if _, dup := got[q.Func][k]; dup {
			t.Errorf("%s: path %s appears twice", q.Func, k)
		}
		got[q.Func][k] += q.Calls
	}
	return got
}

func buildCallTree(t *testing.T, f mpitest.Family, dir string, flags ...string) string {
	t.Helper()
	src := mpitest.Testdata("callpath")
	lib := filepath.Join(dir, "libcplib.so")
	args := append([]string{"-g", "-O1", "-shared", "-fPIC", "-o", lib, filepath.Join(src, "cplib.c")}, flags...)
	if b, err := exec.Command(f.MPICC, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", f.MPICC, args, err, b)
	}
	extra := append([]string{"-L" + dir, "-lcplib", "-Wl,-rpath," + dir}, flags...)
	return mpitest.Compile(t, f.MPICC, filepath.Join(src, "calltree.c"), dir, extra...)
}

// TestCallPaths profiles calltree.c, built with frame pointers, at depth
// 1, 3 and 8 on both families: the paths and their counts are exactly the
// program's call tree cut to the depth, through recursion and a shared
// library of the program's own; at depth 1 there are no paths and the
// callsites are the same.
func TestCallPaths(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		prog := buildCallTree(t, f, t.TempDir(), "-fno-omit-frame-pointer")
		for _, depth := range []int{1, 3, 8} {
			t.Run(fmt.Sprint("depth", depth), func(t *testing.T) {
				env := map[string]string{"MPISCOPE_DEPTH": fmt.Sprint(depth)}
				p, _, res := f.Profile(t, 2, env, prog)
				if !strings.Contains(res.Stdout, "calltree done") {
					t.Errorf("output %q", res.Stdout)
				}
				mpitest.Want(t, p, map[string][2]int64{"MPI_Allreduce": {70, 70 * 32}, "MPI_Barrier": {6, 0}, "MPI_Bcast": {14, 14 * 4}, "MPI_Scan": {6, 6 * 4}})
				// The callsite table is the same at every depth.
				sites := map[string]int64{}
				for _, s := range p.Sites {
					if callTree[s.Func] != nil {
						sites[fmt.Sprintf("%s@%s", s.Func, s.Loc.Function)] += s.Calls
					}
				}
				wantSites := map[string]int64{"MPI_Allreduce@halo": 70, "MPI_Barrier@rec": 6, "MPI_Bcast@cp_lib_bcast": 14, "MPI_Scan@sweep": 6}
				if fmt.Sprint(sites) != fmt.Sprint(wantSites) {
					t.Errorf("callsites %v, want %v", sites, wantSites)
				}
				if depth == 1 {
					if len(p.Paths) != 0 {
						t.Errorf("depth 1: %d paths, want none", len(p.Paths))
					}
					return
				}
				got, want := gotPaths(t, p), wantPaths(depth)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("depth %d: paths\n%v\nwant\n%v", depth, got, want)
				}
				for _, q := range p.Paths {
					if q.Func != "MPI_Scan" && len(q.Frames) > depth || len(q.Frames) > depth+1 {
						t.Errorf("path of %d frames at depth %d: %+v", len(q.Frames), depth, q)
					}
				}
			})
		}
	})
}

// depthSetting is the report's MPISCOPE_DEPTH setting ("" if none).
func depthSetting(p *profile.Profile) string {
	for _, s := range p.Meta.Settings {
		if s.Name == "MPISCOPE_DEPTH" {
			return s.Value
		}
	}
	return ""
}

// TestCallPathsDefaultDepth: without MPISCOPE_DEPTH (auto) the depth is 4
// for a program built with frame pointers, exactly its call tree cut to 4
// frames, and 1 (no paths) for the same program built without; the
// report's settings say which and why. Both families.
func TestCallPathsDefaultDepth(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		for _, c := range []struct {
			flag    string
			depth   int
			setting string
		}{
			{"-fno-omit-frame-pointer", 4, "4 (auto: the program keeps frame pointers in "},
			{"-fomit-frame-pointer", 1, "1 (auto: the program keeps frame pointers in 0 of "},
		} {
			prog := buildCallTree(t, f, t.TempDir(), c.flag)
			p, _, _ := f.Profile(t, 2, nil, prog)
			mpitest.Want(t, p, map[string][2]int64{"MPI_Allreduce": {70, 70 * 32}, "MPI_Barrier": {6, 0}, "MPI_Bcast": {14, 14 * 4}, "MPI_Scan": {6, 6 * 4}})
			if got := depthSetting(p); !strings.HasPrefix(got, c.setting) {
				t.Errorf("%s: setting MPISCOPE_DEPTH %q, want %q...", c.flag, got, c.setting)
			}
			if c.depth == 1 {
				if len(p.Paths) != 0 {
					t.Errorf("%s: %d paths, want none", c.flag, len(p.Paths))
				}
				continue
			}
			if got, want := gotPaths(t, p), wantPaths(c.depth); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: paths\n%v\nwant\n%v", c.flag, got, want)
			}
		}
	})
}

// TestCallPathsBadDepth: a depth out of range warns and falls back to the
// default (auto: 4 for this program, built with frame pointers).
func TestCallPathsBadDepth(t *testing.T) {
	f := mpitest.Get(t, "openmpi")
	prog := buildCallTree(t, f, t.TempDir(), "-fno-omit-frame-pointer")
	for _, v := range []string{"0", "33", "deep"} {
		p, _, _ := f.Profile(t, 2, map[string]string{"MPISCOPE_DEPTH": v}, prog)
		if got, want := gotPaths(t, p), wantPaths(4); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("MPISCOPE_DEPTH=%s: paths\n%v\nwant the default's\n%v", v, got, want)
		}
		if got := depthSetting(p); !strings.HasPrefix(got, "4 (auto: ") {
			t.Errorf("MPISCOPE_DEPTH=%s: setting %q, want the default's", v, got)
		}
		warned := false
		for _, s := range p.Meta.Settings {
			warned = warned || s.Name == "warning" && strings.Contains(s.Value, "MPISCOPE_DEPTH")
		}
		if !warned {
			t.Errorf("MPISCOPE_DEPTH=%s: no warning in %v", v, p.Meta.Settings)
		}
	}
}

// pathsOf renders p's paths of function fn as "f<g<h" (frame function
// names, as symbolized and demangled, mapped by keep; cut at the first
// frame keep rejects) with their calls; a path that appears twice fails.
func pathsOf(t *testing.T, p *profile.Profile, fn string, keep func(name string) (string, bool)) map[string]int64 {
	t.Helper()
	got := map[string]int64{}
	for _, q := range p.Paths {
		if q.Func != fn {
			continue
		}
		var names []string
		for _, f := range q.Frames {
			n, ok := keep(f.Function)
			if !ok {
				break
			}
			names = append(names, n)
		}
		k := strings.Join(names, "<")
		if _, dup := got[k]; dup {
			t.Errorf("%s: path %s appears twice", fn, k)
		}
		got[k] += q.Calls
	}
	return got
}

func keepNames(m map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		n, ok := m[name]
		return n, ok
	}
}

// TestCallPathsThreads: two threads per rank under MPI_THREAD_MULTIPLE,
// each with its own path to MPI_Allreduce: exact counts per path.
func TestCallPathsThreads(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		prog := mpitest.Compile(t, f.MPICC, "callpath/threads.c", t.TempDir(), "-fno-omit-frame-pointer", "-pthread")
		p, _, res := f.Profile(t, 2, map[string]string{"MPISCOPE_DEPTH": "4"}, prog)
		if !strings.Contains(res.Stdout, "threads done") {
			t.Errorf("output %q", res.Stdout)
		}
		got := pathsOf(t, p, "MPI_Allreduce", keepNames(map[string]string{"exch": "exch", "worker_a": "worker_a", "worker_b": "worker_b"}))
		want := map[string]int64{"exch<worker_a": 30, "exch<worker_b": 50}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("paths %v, want %v", got, want)
		}
	})
}

// TestCallPathsCxx: a C++ class method (Halo::exchange) reached from a
// method of another class and from main.
func TestCallPathsCxx(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		prog := mpitest.Compile(t, f.MPICXX, "callpath/class.cpp", t.TempDir(), "-fno-omit-frame-pointer")
		p, _, res := f.Profile(t, 2, map[string]string{"MPISCOPE_DEPTH": "3"}, prog)
		if !strings.Contains(res.Stdout, "class done") {
			t.Errorf("output %q", res.Stdout)
		}
		got := pathsOf(t, p, "MPI_Allreduce", keepNames(map[string]string{
			"Halo::exchange(double*)": "Halo::exchange", "Solver::step(Halo&, double*)": "Solver::step", "main": "main"}))
		want := map[string]int64{"Halo::exchange<Solver::step<main": 24, "Halo::exchange<main": 8}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("paths %v, want %v (all: %+v)", got, want, p.Paths)
		}
	})
}

// TestCallPathsFortran: a Fortran subroutine chain; the Fortran entry
// point (mpi_allreduce_) and the C wrapper never appear.
func TestCallPathsFortran(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		prog := mpitest.Compile(t, f.MPIFORT, "callpath/chain.f90", t.TempDir(), "-fno-omit-frame-pointer", "-fno-inline")
		p, _, res := f.Profile(t, 2, map[string]string{"MPISCOPE_DEPTH": "8"}, prog)
		if !strings.Contains(res.Stdout, "chain done") {
			t.Errorf("output %q", res.Stdout)
		}
		got := pathsOf(t, p, "MPI_Allreduce", keepNames(map[string]string{
			"lvl3": "lvl3", "lvl2": "lvl2", "lvl1": "lvl1", "lvl2b": "lvl2b", "chain": "program", "main": "main"}))
		want := map[string]int64{"lvl3<lvl2<lvl1<program<main": 18, "lvl3<lvl2b<program<main": 10}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("paths %v, want %v (all: %+v)", got, want, p.Paths)
		}
	})
}

// unwinderLinked tells whether the family's library has the call-frame
// unwinder (ms_unwind, unwind.c): without it call paths are walked with
// frame pointers only.
func unwinderLinked(t *testing.T, f mpitest.Family) bool {
	out, err := exec.Command("nm", f.Lib()).Output()
	if err != nil {
		t.Fatalf("nm %s: %v", f.Lib(), err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if fl := strings.Fields(l); len(fl) == 3 && fl[2] == "ms_unwind" && (fl[1] == "T" || fl[1] == "t") {
			return true
		}
	}
	return false
}

// pathTotals checks what holds whatever the walk finds: each path of a
// function in callTree starts at that function's callsite, has at most
// depth frames, and its paths' calls add up to the function's.
func pathTotals(t *testing.T, p *profile.Profile, depth int) {
	t.Helper()
	site := map[string]string{"MPI_Allreduce": "halo", "MPI_Barrier": "rec", "MPI_Bcast": "cp_lib_bcast", "MPI_Scan": "inl_scan"}
	sum := map[string]int64{}
	for _, q := range p.Paths {
		if site[q.Func] == "" {
			continue
		}
		sum[q.Func] += q.Calls
		if len(q.Frames) == 0 || len(q.Frames) > depth+1 || q.Frames[0].Function != site[q.Func] {
			t.Errorf("%s: path %+v: want 1 to %d frames from %s", q.Func, q.Frames, depth, site[q.Func])
		}
	}
	for fn, paths := range callTree {
		var want int64
		for _, n := range paths {
			want += n
		}
		if sum[fn] != want {
			t.Errorf("%s: paths hold %d calls, want %d", fn, sum[fn], want)
		}
	}
}

// TestCallPathsNoFramePointers: calltree.c built with -fomit-frame-pointer.
// With the call-frame unwinder linked (ms_unwind) the paths are exactly
// the call tree, as with frame pointers; without it the frame-pointer walk
// finds what it can: every path still starts at its callsite and every
// call is counted once.
func TestCallPathsNoFramePointers(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		prog := buildCallTree(t, f, t.TempDir(), "-fomit-frame-pointer")
		p, _, _ := f.Profile(t, 2, map[string]string{"MPISCOPE_DEPTH": "8"}, prog)
		mpitest.Want(t, p, map[string][2]int64{"MPI_Allreduce": {70, 70 * 32}, "MPI_Barrier": {6, 0}, "MPI_Bcast": {14, 14 * 4}, "MPI_Scan": {6, 6 * 4}})
		pathTotals(t, p, 8)
		if unwinderLinked(t, f) {
			got, want := gotPaths(t, p), wantPaths(8)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("paths\n%v\nwant\n%v", got, want)
			}
		} else {
			t.Logf("no call-frame unwinder in %s: frame pointers only", f.Lib())
		}
	})
}

// TestCallPathsCorruptFrame: assembly that keeps garbage in the frame
// pointer register (corrupt.S) between the program and its MPI call: the
// walk stops at the bad frame, nothing crashes, every call is counted at
// the depth reached, its path starting barrier_call < corrupt_barrier.
func TestCallPathsCorruptFrame(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		prog := mpitest.Compile(t, f.MPICC, "callpath/corrupt.c", dir, "-fno-omit-frame-pointer", mpitest.Testdata("callpath/corrupt.S"))
		p, _, res := f.Profile(t, 2, map[string]string{"MPISCOPE_DEPTH": "8"}, prog)
		if !strings.Contains(res.Stdout, "corrupt done") {
			t.Errorf("output %q", res.Stdout)
		}
		mpitest.Want(t, p, map[string][2]int64{"MPI_Barrier": {40, 0}})
		var calls int64
		for _, q := range p.Paths {
			if q.Func != "MPI_Barrier" {
				continue
			}
			calls += q.Calls
			if len(q.Frames) < 2 || len(q.Frames) > 8 || q.Frames[0].Function != "barrier_call" || q.Frames[1].Function != "corrupt_barrier" {
				t.Errorf("path %+v", q.Frames)
			}
		}
		if calls != 40 {
			t.Errorf("paths hold %d MPI_Barrier calls, want 40", calls)
		}
	})
}
