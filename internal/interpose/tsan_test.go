package interpose

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/testutil"
	"github.com/mpiscope/mpiscope/internal/wrapgen"
)

// TestHotPathTSan builds the real C hot path (core.c, profile.c) and freshly generated
// MPICH wrappers with -fsanitize=thread against the fake PMPI layer of
// testdata/tsan/driver.c (no MPI library is linked: MPICH's UCX memory
// hooks crash under TSan), runs 8 threads x 100,000 MPI_Send plus
// communicator creation and datatype-cache invalidation concurrently, and
// requires no race report and exact counts.
func TestHotPathTSan(t *testing.T) {
	testutil.RequireTool(t, "mpicc.mpich")
	dir := t.TempDir()
	run := func(name string, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return out
	}
	zwrap := filepath.Join(dir, "zwrap.c")
	if err := wrapgen.Main([]string{"-mpicc", "mpicc.mpich", "-o", zwrap}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	here, _ := os.Getwd()
	srcs := map[string]string{
		"driver.o":   filepath.Join(here, "testdata", "tsan", "driver.c"),
		"core.o":     filepath.Join(here, "core.c"),
		"profile.o":  filepath.Join(here, "profile.c"),
		"callpath.o": filepath.Join(here, "callpath.c"),
		"unwind.o":   filepath.Join(here, "unwind.c"),
		"zwrap.o":    zwrap,
	}
	var objs []string
	for obj, src := range srcs {
		run("mpicc.mpich", "-fsanitize=thread", "-g", "-O1", "-I", here, "-c", src, "-o", obj)
		objs = append(objs, obj)
	}
	sort.Strings(objs)
	// Every other PMPI_ function the wrappers reference gets a stub that
	// aborts: the driver never calls them. So do the modules' entry points
	// outside the hot path's files (ms_pb_: piggyback.c, ms_chain_:
	// chain.c, ms_comp_enter: compensate.c): the driver leaves their gate
	// bits and ms_comp_on (core.c) clear.
	defined := map[string]bool{}
	for _, l := range strings.Split(string(run("nm", "--defined-only", "driver.o")), "\n") {
		if f := strings.Fields(l); len(f) == 3 {
			defined[f[2]] = true
		}
	}
	var stubs strings.Builder
	stubs.WriteString("#include <stdlib.h>\n")
	seen := map[string]bool{}
	for _, l := range strings.Split(string(run("nm", append([]string{"-u"}, objs...)...)), "\n") {
		f := strings.Fields(l)
		if len(f) == 2 && (strings.HasPrefix(f[1], "PMPI_") || strings.HasPrefix(f[1], "ms_pb_") || strings.HasPrefix(f[1], "ms_chain_") || f[1] == "ms_comp_enter") && !defined[f[1]] && !seen[f[1]] {
			seen[f[1]] = true
			stubs.WriteString("int " + f[1] + "(void) { abort(); }\n")
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "stubs.c"), []byte(stubs.String()), 0o666); err != nil {
		t.Fatal(err)
	}
	run("gcc", "-c", "stubs.c", "-o", "stubs.o")
	// Two links: with the fake PMPI_ functions exported (-rdynamic) the
	// wrappers' pointers are bound to them by dlsym; without, dlsym finds
	// nothing and the pointers take the stubs that call PMPI_ directly.
	for _, c := range []struct {
		name  string
		flags []string
		bound bool
	}{{"drv", nil, false}, {"drv-dyn", []string{"-rdynamic"}, true}} {
		run("gcc", append(append(append([]string{"-fsanitize=thread", "-o", c.name}, c.flags...), objs...), "stubs.o", "-lpthread")...)
		// At depth 1 (today's hot path) and at call-path depth 4.
		for _, depth := range []string{"1", "4"} {
			cmd := exec.Command(filepath.Join(dir, c.name), depth)
			cmd.Env = append(os.Environ(), "TSAN_OPTIONS=halt_on_error=1 exitcode=66")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s %s under TSan: %v\n%s", c.name, depth, err, out)
			}
			// Depth 4: every send holds a path (worker's callsite, then
			// start_thread's frames as far as they validate), at most 4
			// frames, none counted in "other paths" or cut to the callsite.
			wantPaths := "depth=1 tagged=0 paths=0 deepest=0 other=0 short=0"
			if depth == "4" {
				wantPaths = "depth=4 tagged=800000 "
				if !strings.Contains(string(out), " other=0 short=0") {
					t.Errorf("%s %s: paths lost: %q", c.name, depth, out)
				}
				for _, d := range []string{"deepest=0 ", "deepest=5 ", "deepest=6 "} {
					if strings.Contains(string(out), d) {
						t.Errorf("%s %s: %s: %q", c.name, depth, d, out)
					}
				}
			}
			if !strings.Contains(string(out), wantPaths) {
				t.Errorf("%s %s: got %q, want %q", c.name, depth, out, wantPaths)
			}
			want := "threads=8 sends=800000 bytes=6400000 barriers=160 peer0=200000"
			if !strings.Contains(string(out), want) {
				t.Errorf("%s: got %q, want %q", c.name, out, want)
			}
			if !strings.Contains(string(out), "busybad=0 ") { // calls in progress read whole (ms_busy_read)
				t.Errorf("%s: calls in progress read torn: %q", c.name, out)
			}
			t.Logf("%s: %s", c.name, strings.TrimSpace(string(out)))
			if bound := !strings.Contains(string(out), "bound=0\n"); bound != c.bound || !strings.Contains(string(out), "bound=") {
				t.Errorf("%s: PMPI_ pointers bound by dlsym: %v, want %v (%q)", c.name, bound, c.bound, out)
			}
		}
	}
}
