package mpitest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/internal/testutil"
	"github.com/mpiscope/mpiscope/profile"
)

// leanPathBound is what a call at depth 4 may cost over the same call at
// depth 1 along a path of frame pointers, in instructions executed in
// libmpiscope's C functions: the lean ms_path_X's frame, its tests and
// ms_path_hit, 3 frames of 11 instructions each and about 25 once per
// call (measured 2026-11-26: 58.5 on Open MPI and on MPICH, lean.c's
// four functions on average). Before the lean path at depth > 1 the same
// calls cost 178 more (the slow path and ms_path_take).
const leanPathBound = 65

// TestCallPathsLean: at depth > 1 the calls that take the lean fast path
// at depth 1 take it too (internal/wrapgen, lean.go: the lean ms_path_X,
// callpath.h: ms_path_hit). lean.c, built with frame pointers, makes
// MPI_Comm_rank, MPI_Isend, MPI_Recv and MPI_Wait calls 5 frames below
// main, as a singleton under callgrind, at depth 1 and 4: at depth 4
// every call is counted in exactly its path of 4 frames; over N and 2 N
// iterations no call reaches the slow path or the general walk
// (ms_path_take, ms_unwind_hint), the calls handed over to ms_fin_MPI_X
// are those of depth 1 (MPI_Wait after MPI_Recv: two deferred records in
// a row), and a call costs at most leanPathBound instructions more than
// at depth 1.
func TestCallPathsLean(t *testing.T) {
	valgrind := testutil.RequireTool(t, "valgrind")
	const n = 2000
	fns := []string{"MPI_Comm_rank", "MPI_Isend", "MPI_Recv", "MPI_Wait"}
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		prog := mpitest.Compile(t, f.MPICC, "callpath/lean.c", dir, "-O2", "-fno-omit-frame-pointer")
		// per iteration: the dumps of loop(n) and loop(2 n), their
		// difference (n iterations).
		type iter struct {
			lib   float64          // instructions in libmpiscope
			calls map[string]int64 // calls of each function
		}
		run := func(depth int) iter {
			job := filepath.Join(dir, fmt.Sprint("job", depth))
			out := filepath.Join(dir, fmt.Sprint("cg", depth))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, valgrind, "--tool=callgrind", "--toggle-collect=loop", "--dump-after=loop",
				"--callgrind-out-file="+out, prog, strconv.Itoa(n))
			cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
				"LD_PRELOAD="+f.Lib(), "MPISCOPE_OUT="+job, "MPISCOPE_SUMMARY=0", "MPISCOPE_DEPTH="+strconv.Itoa(depth),
				"GODEBUG=asyncpreemptoff=1")
			b, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("valgrind %s: %v\n%s", prog, err, b)
			}
			if !strings.Contains(string(b), fmt.Sprint("lean done ", 1+3*n)) {
				t.Errorf("depth %d: output %q", depth, b)
			}
			dumps, err := filepath.Glob(out + ".*")
			if err != nil {
				t.Fatal(err)
			}
			sort.Slice(dumps, func(i, j int) bool { return dumpNum(dumps[i]) < dumpNum(dumps[j]) })
			if len(dumps) < 3 {
				t.Fatalf("depth %d: callgrind dumps %v, want one per loop (3)", depth, dumps)
			}
			var d [2]cgDump
			for i := range d {
				if d[i], err = readCallgrind(dumps[i+1], "libmpiscope"); err != nil {
					t.Fatal(err)
				}
			}
			it := iter{lib: float64(d[1].lib-d[0].lib) / n, calls: map[string]int64{}}
			for fn, c := range d[1].calls {
				it.calls[fn] = c - d[0].calls[fn]
			}
			for fn, c := range d[0].calls {
				if _, ok := d[1].calls[fn]; !ok {
					it.calls[fn] = -c
				}
			}

			p, _, err := profile.Load(job)
			if err != nil {
				t.Fatalf("depth %d: loading %s: %v", depth, job, err)
			}
			want := map[string][2]int64{}
			for _, fn := range fns {
				want[fn] = [2]int64{1 + 3*n, 0}
			}
			mpitest.Want(t, p, want)
			paths := map[string]int64{}
			for _, q := range p.Paths {
				var names []string
				for _, fr := range q.Frames {
					names = append(names, fr.Function)
				}
				paths[q.Func+"@"+strings.Join(names, "<")] += q.Calls
			}
			wantPaths := map[string]int64{}
			if depth > 1 {
				for _, fn := range fns {
					wantPaths[fn+"@loop<c4<c3<c2"] = 1 + 3*n
				}
			}
			if fmt.Sprint(paths) != fmt.Sprint(wantPaths) {
				t.Errorf("depth %d: paths %v, want %v", depth, paths, wantPaths)
			}
			return it
		}
		d1, d4 := run(1), run(4)
		for fn, c := range d4.calls {
			switch {
			case fn == "ms_path_take" || fn == "ms_path_lean" || fn == "ms_unwind_hint" || strings.HasPrefix(fn, "ms_slow_"):
				if c != 0 {
					t.Errorf("depth 4: %d calls of %s in %d iterations, want none (the lean path)", c, fn, n)
				}
			case strings.HasPrefix(fn, "ms_fin_") || strings.HasPrefix(fn, "ms_full_"):
				if c != d1.calls[fn] {
					t.Errorf("depth 4: %d calls of %s in %d iterations, want %d as at depth 1", c, fn, n, d1.calls[fn])
				}
			}
		}
		if c := d4.calls["ms_fin_MPI_Wait"]; c != n {
			t.Errorf("depth 4: %d calls of ms_fin_MPI_Wait in %d iterations, want %d (two deferred records in a row)", c, n, n)
		}
		perCall := (d4.lib - d1.lib) / float64(len(fns))
		t.Logf("%s: instructions per iteration of %d calls in libmpiscope: depth 1 %.1f, depth 4 %.1f; per call at depth 4 over depth 1 %+.1f", f.Name, len(fns), d1.lib, d4.lib, perCall)
		if perCall > leanPathBound {
			t.Errorf("%s: a call at depth 4 costs %.1f instructions more than at depth 1, want at most %d", f.Name, perCall, leanPathBound)
		}
	})
}

// dumpNum is the number of a callgrind dump file (out.N).
func dumpNum(path string) int {
	n, _ := strconv.Atoi(path[strings.LastIndexByte(path, '.')+1:])
	return n
}

// cgDump is what TestCallPathsLean reads from a callgrind dump: the
// instructions executed in the C functions (ms_..., MPI_...) of the
// objects whose name holds a given string (their self cost), and the
// calls made to each function.
type cgDump struct {
	lib   int64
	calls map[string]int64
}

// readCallgrind reads a callgrind output file (format of valgrind's
// callgrind manual, "Callgrind Format Specification": name compression
// "(id) name", cost lines "position Ir", a calls= line followed by the
// call's inclusive cost, which is not the caller's own).
func readCallgrind(path, obj string) (cgDump, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return cgDump{}, err
	}
	d := cgDump{calls: map[string]int64{}}
	names := map[string]map[string]string{"ob": {}, "fn": {}}
	resolve := func(kind, v string) string {
		v = strings.TrimSpace(v)
		if strings.HasPrefix(v, "(") {
			if i := strings.IndexByte(v, ')'); i > 0 {
				id, rest := v[:i+1], strings.TrimSpace(v[i+1:])
				if rest != "" {
					names[kind][id] = rest
					return rest
				}
				return names[kind][id]
			}
		}
		return v
	}
	var ob, cfn string
	inObj, afterCalls := false, false
	for i, l := range strings.Split(string(data), "\n") {
		skip := afterCalls
		afterCalls = false
		switch {
		case strings.HasPrefix(l, "ob="):
			ob = resolve("ob", l[3:])
		case strings.HasPrefix(l, "cob="):
			resolve("ob", l[4:])
		case strings.HasPrefix(l, "fn="):
			fn := resolve("fn", l[3:])
			// The library's C functions: not its Go runtime's,
			// whose threads run at their own times.
			inObj = strings.Contains(ob, obj) && (strings.HasPrefix(fn, "ms_") || strings.HasPrefix(fn, "MPI_"))
		case strings.HasPrefix(l, "cfn="):
			cfn = resolve("fn", l[4:])
		case strings.HasPrefix(l, "calls="):
			f := strings.Fields(l[6:])
			if len(f) == 0 {
				return d, fmt.Errorf("%s:%d: %q", path, i+1, l)
			}
			c, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return d, fmt.Errorf("%s:%d: %v", path, i+1, err)
			}
			d.calls[cfn] += c
			afterCalls = true
		case l != "" && strings.ContainsRune("0123456789+-*", rune(l[0])):
			f := strings.Fields(l)
			if skip || !inObj || len(f) < 2 {
				continue
			}
			c, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return d, fmt.Errorf("%s:%d: %v", path, i+1, err)
			}
			d.lib += c
		}
	}
	return d, nil
}
