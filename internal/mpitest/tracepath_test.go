package mpitest_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/internal/testutil"
	"github.com/mpiscope/mpiscope/internal/trace"
)

// traceCalls is calltree.c's calls per rank whose path the trace must
// carry: function -> calls.
var traceCalls = map[string]int{"MPI_Allreduce": 35, "MPI_Barrier": 3, "MPI_Bcast": 7, "MPI_Scan": 3}

// TestTracePaths traces calltree.c (built with frame pointers) on 2 ranks
// of both families. At depth 3 every call of the program's tree carries its
// path (the thread's table written at finalize, its ids made the rank's):
// of MPI_Allreduce three paths of 10, 20 and 5 calls, of the others one;
// each of 3 frames, the callsite first. OTF2 enters each call in the
// calling context of its path: MPI_Allreduce at calltree.c:27 in halo,
// called at line 34 of solve, called at line 86 of main (no location: the
// depth ends there), and so on, read back with otf2-print; Perfetto's
// slices name the path. At depth 1 the trace holds no path, and OTF2's
// contexts have no parent.
func TestTracePaths(t *testing.T) {
	bin := filepath.Join(mpitest.BuildDir(t), "bin", "mpiscope")
	printer := testutil.RequireTool(t, "otf2-print")
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		prog := buildCallTree(t, f, t.TempDir(), "-fno-omit-frame-pointer")
		for _, depth := range []int{1, 3} {
			t.Run(fmt.Sprint("depth", depth), func(t *testing.T) {
				// Depth given always: the default (auto) takes 4 for this
				// program, built with frame pointers.
				env := map[string]string{"MPISCOPE_TRACE": "1", "MPISCOPE_DEPTH": fmt.Sprint(depth)}
				_, job, _ := f.Profile(t, 2, env, prog)
				j, err := trace.OpenJob(job)
				if err != nil {
					t.Fatal(err)
				}
				// Per rank: (function, path's outermost frame) -> calls.
				// Paths are told apart by their addresses: output()'s
				// loop, unrolled, calls halo() from five return
				// addresses, five paths on one line; the outermost frame
				// (main's return address) tells the three callers of
				// halo() apart.
				for _, r := range j.Ranks {
					got := map[string]map[uint64]int{}
					err := r.Scan(func(tid int, evs []trace.Event) error {
						for _, e := range evs {
							fn := r.FnName(int(e.Fn))
							if !e.IsCall() || traceCalls[fn] == 0 {
								continue
							}
							if got[fn] == nil {
								got[fn] = map[uint64]int{}
							}
							fr := r.PathFrames(e.Path)
							if (depth == 1) != (e.Path == 0) || depth > 1 && (len(fr) != depth || fr[0] != e.PC) {
								t.Errorf("rank %d %s: path %d frames %x, callsite %x: want %d frames, the callsite first", r.Header.Rank, fn, e.Path, fr, e.PC, depth)
								continue
							}
							var outer uint64
							if depth > 1 {
								outer = fr[depth-1]
							}
							got[fn][outer]++
						}
						return nil
					})
					if err != nil {
						t.Fatal(err)
					}
					if depth == 1 && len(r.Paths) != 0 {
						t.Errorf("rank %d: %d paths at depth 1", r.Header.Rank, len(r.Paths))
					}
					for fn, n := range traceCalls {
						var counts []string
						sum := 0
						for _, c := range got[fn] {
							counts = append(counts, fmt.Sprint(c))
							sum += c
						}
						sort.Strings(counts)
						want := 1
						if fn == "MPI_Allreduce" && depth > 1 {
							want = 3
						}
						if sum != n || len(counts) != want || fn == "MPI_Allreduce" && depth > 1 && fmt.Sprint(counts) != "[10 20 5]" {
							t.Errorf("rank %d %s: calls per caller of the path %v, want %d calls from %d (MPI_Allreduce: 10, 20, 5)", r.Header.Rank, fn, counts, n, want)
						}
					}
				}
				if out, err := exec.Command(bin, "convert", "--otf2", job).CombinedOutput(); err != nil {
					t.Fatalf("convert: %v\n%s", err, out)
				}
				anchor := filepath.Join(job, "otf2", "traces.otf2")
				defs, err := exec.Command(printer, "-G", anchor).CombinedOutput()
				if err != nil {
					t.Fatalf("otf2-print -G: %v\n%s", err, defs)
				}
				evs, err := exec.Command(printer, anchor).CombinedOutput()
				if err != nil || strings.Contains(string(evs), "ERROR") {
					t.Fatalf("otf2-print: %v\n%s", err, evs)
				}
				chains := otf2Chains(t, string(defs))
				enters := map[string]int{}
				re := regexp.MustCompile(`(?m)^CALLING_CONTEXT_ENTER\s+\d+\s+\d+\s+Calling Context: .*<(\d+)>`)
				for _, g := range re.FindAllStringSubmatch(string(evs), -1) {
					if c, ok := chains[g[1]]; ok {
						enters[c]++
					}
				}
				want := map[string]int{
					"MPI_Allreduce@calltree.c:27<halo@calltree.c:34<solve@calltree.c:86<main":   20,
					"MPI_Allreduce@calltree.c:27<halo@calltree.c:41<precond@calltree.c:87<main": 40,
					"MPI_Allreduce@calltree.c:27<halo@calltree.c:48<output@calltree.c:88<main":  10,
					"MPI_Barrier@calltree.c:55<rec@calltree.c:57<rec@calltree.c:57<rec":         6,
				}
				if depth == 1 {
					want = map[string]int{"MPI_Allreduce@calltree.c:27": 70, "MPI_Barrier@calltree.c:55": 6}
				}
				for c, n := range want {
					if enters[c] != n {
						t.Errorf("otf2: %d calls entered in context %s, want %d", enters[c], c, n)
					}
				}
				if t.Failed() {
					t.Logf("contexts entered: %v", enters)
				}
				if out, err := exec.Command(bin, "convert", "--perfetto", job).CombinedOutput(); err != nil {
					t.Fatalf("convert --perfetto: %v\n%s", err, out)
				}
				js, err := os.ReadFile(filepath.Join(job, "trace.json"))
				if err != nil {
					t.Fatal(err)
				}
				n := len(regexp.MustCompile(`"path":"solve [^"]*calltree\.c:34 \\u003c main [^"]*calltree\.c:86"`).FindAllIndex(js, -1))
				if all := strings.Count(string(js), `"path":`); depth == 1 && all != 0 || depth > 1 && n != 20 {
					t.Errorf("perfetto: %d slices with the path through solve (want 20 at depth > 1), %d with a path (none at depth 1)", n, all)
				}
			})
		}
	})
}

// otf2Chains reads otf2-print -G's calling contexts: id -> the chain of
// regions at their locations, innermost first ("MPI_Allreduce@calltree.c:27
// <halo@calltree.c:34<...<main"; a region without a location is its name
// alone), the locations' directories left out.
func otf2Chains(t *testing.T, defs string) map[string]string {
	t.Helper()
	type cc struct{ region, scl, parent string }
	all := map[string]cc{}
	re := regexp.MustCompile(`(?m)^CALLING_CONTEXT\s+(\d+)\s+Region: "([^"]*)" <\d+>, Source code location: (?:"([^"]*)" <\d+>|UNDEFINED), Parent: (?:"[^"]*" <(\d+)>|UNDEFINED)`)
	for _, g := range re.FindAllStringSubmatch(defs, -1) {
		all[g[1]] = cc{g[2], filepath.Base(g[3]), g[4]}
	}
	if len(all) == 0 {
		t.Fatalf("otf2-print -G: no calling context\n%s", defs)
	}
	out := map[string]string{}
	for id := range all {
		var parts []string
		for k, n := id, 0; k != "" && n < 64; n++ {
			c, ok := all[k]
			if !ok {
				t.Errorf("calling context %s: parent %s not defined", id, k)
				break
			}
			p := c.region
			if c.scl != "" && c.scl != "." {
				p += "@" + c.scl
			}
			parts = append(parts, p)
			k = c.parent
		}
		out[id] = strings.Join(parts, "<")
	}
	return out
}
