package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpitest"
)

// ringC: each rank sends argv[1] messages of argv[2] bytes to its right
// neighbour and receives as many from its left, then 10 barriers.
const ringC = `#include <mpi.h>
#include <stdlib.h>
static char sbuf[1 << 16], rbuf[1 << 16];
int main(int argc, char **argv) {
    int rank, np;
    MPI_Init(&argc, &argv);
    int n = atoi(argv[1]), size = atoi(argv[2]);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    for (int i = 0; i < n; i++) {
        MPI_Request r;
        MPI_Isend(sbuf, size, MPI_BYTE, (rank + 1) % np, 0, MPI_COMM_WORLD, &r); /* isend */
        MPI_Recv(rbuf, size, MPI_BYTE, (rank + np - 1) % np, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* recv */
        MPI_Wait(&r, MPI_STATUS_IGNORE); /* wait */
    }
    for (int i = 0; i < 10; i++)
        MPI_Barrier(MPI_COMM_WORLD); /* barrier */
    MPI_Finalize();
    return 0;
}
`

// diffDoc is the JSON of mpiscope diff, the fields the tests read.
type diffDoc struct {
	Schema  string
	PerRank bool `json:"per_rank"`
	Differ  []string
	A, B    struct {
		NumRanks int `json:"num_ranks"`
		Divisor  int
	}
	Summary map[string]diffVal
	Funcs   []diffRow
	Sites   []diffRow `json:"callsites"`
	Comms   []diffRow
	Sizes   []diffRow
}

type diffVal struct {
	A, B, Change float64
	Pct          *float64 `json:"change_pct"`
}

type diffRow struct {
	Func, Comm, File string
	Line, Log2       int
	Calls            diffVal
	TimeNs           diffVal `json:"time_ns"`
	Bytes            diffVal
}

// key names a row: function, :line, @communicator, /size bin.
func (r diffRow) key() string {
	k := r.Func
	if r.Line > 0 {
		k += fmt.Sprintf(":%s:%d", filepath.Base(r.File), r.Line)
	}
	if r.Comm != "" {
		k += "@" + r.Comm
	}
	if r.Log2 > 0 {
		k += fmt.Sprintf("/%d", r.Log2)
	}
	return k
}

func diffJSON(t *testing.T, args ...string) diffDoc {
	t.Helper()
	so, se, code := run(append([]string{"diff", "-format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("diff %v: exit %d\n%s", args, code, se)
	}
	var d diffDoc
	if err := json.Unmarshal([]byte(so), &d); err != nil {
		t.Fatalf("diff %v: %v\n%s", args, err, so)
	}
	return d
}

// TestDiffRuns: one ring program run three times on each MPI: A (2 ranks,
// 100 messages of 8 bytes), B (2 ranks, 300 of 1,024 bytes), C (4 ranks,
// as A). The diff of A and B shows exactly the changes in calls and bytes
// made by construction, per function, callsite, communicator and size bin,
// the barriers' calls unchanged, and says the command lines differ; A
// against A shows no change at all; A against C says the rank counts
// differ, and -per-rank shows the same calls per rank.
func TestDiffRuns(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		src := filepath.Join(dir, "ring.c")
		if err := os.WriteFile(src, []byte(ringC), 0o666); err != nil {
			t.Fatal(err)
		}
		prog := mpitest.Compile(t, f.MPICC, src, dir)
		line := func(marker string) string {
			for i, l := range strings.Split(ringC, "\n") {
				if strings.Contains(l, "/* "+marker+" */") {
					return fmt.Sprintf(":ring.c:%d", i+1)
				}
			}
			t.Fatalf("no marker %s", marker)
			return ""
		}
		_, a, _ := f.Profile(t, 2, nil, prog, "100", "8")
		_, b, _ := f.Profile(t, 2, nil, prog, "300", "1024")
		_, c, _ := f.Profile(t, 4, nil, prog, "100", "8")

		d := diffJSON(t, a, b)
		if strings.Join(d.Differ, ",") != "command line" {
			t.Errorf("A, B differ in %q, want the command line only", d.Differ)
		}
		// calls and bytes changes by construction: 2 ranks x 200 more
		// messages; 8 -> 1,024 bytes each.
		p2p := [2]float64{400, 2 * (300*1024 - 100*8)}
		type cb = [2]float64
		checkRows := func(name string, rows []diffRow, want map[string]cb, timeOnly ...string) {
			t.Helper()
			seen := map[string]bool{}
			for _, r := range rows {
				k := r.key()
				seen[k] = true
				w, ok := want[k]
				if !ok {
					t.Errorf("%s: unexpected row %s: %+v", name, k, r)
					continue
				}
				if r.Calls.Change != w[0] || r.Bytes.Change != w[1] {
					t.Errorf("%s %s: change %v calls, %v bytes; want %v, %v", name, k, r.Calls.Change, r.Bytes.Change, w[0], w[1])
				}
			}
			for k, w := range want {
				if !seen[k] && (w[0] != 0 || w[1] != 0) {
					t.Errorf("%s: no row %s", name, k)
				}
			}
		}
		checkRows("funcs", d.Funcs, map[string]cb{"MPI_Isend": p2p, "MPI_Recv": p2p, "MPI_Wait": {400, 0},
			"MPI_Barrier": {0, 0}, "MPI_Comm_rank": {0, 0}, "MPI_Comm_size": {0, 0}})
		checkRows("callsites", d.Sites, map[string]cb{"MPI_Isend" + line("isend"): p2p, "MPI_Recv" + line("recv"): p2p,
			"MPI_Wait" + line("wait"): {400, 0}, "MPI_Barrier" + line("barrier"): {0, 0},
			"MPI_Comm_rank:ring.c:8": {0, 0}, "MPI_Comm_size:ring.c:9": {0, 0}})
		// world: the Isend and Recv calls (MPI_Wait names no communicator).
		checkRows("comms", d.Comms, map[string]cb{"@world": {800, 2 * p2p[1]}, "@self": {0, 0}})
		checkRows("sizes", d.Sizes, map[string]cb{"MPI_Isend/4": {-200, -1600}, "MPI_Isend/11": {600, 600 * 1024},
			"MPI_Recv/4": {-200, -1600}, "MPI_Recv/11": {600, 600 * 1024}})
		if s := d.Summary["calls"]; s.Change != 1200 {
			t.Errorf("summary calls %+v, want +1,200", s)
		}
		for _, r := range d.Sizes {
			if r.Log2 == 11 && (r.Calls.Pct != nil || r.Calls.A != 0 || r.Calls.B != 600) {
				t.Errorf("%s: new in B, calls %+v", r.key(), r.Calls)
			}
		}

		// Text: the same, sorted by absolute change in time.
		so, se, code := run("diff", a, b)
		if code != 0 {
			t.Fatalf("diff: exit %d: %s", code, se)
		}
		if !strings.Contains(so, "NOTE: the runs differ in command line\n") || strings.Contains(so, "rank count") ||
			!strings.Contains(so, "Command      : A: "+prog+" 100 8\n") {
			t.Errorf("diff A B text header:\n%s", so)
		}
		for _, want := range []string{
			`(?m)^MPI_Isend\s.*\s200\s+600\s+\+400\s+1600\s+614400\s+\+612800$`,
			`(?m)^MPI_Isend\s+main at ring\.c:12\s+-\s.*\s200\s+600\s+\+400\s+1600\s+614400\s+\+612800$`,
			`(?m)^MPI_Isend\s+\[1024, 2047\]\s+0\.000\s.*\s+new\s+0\s+600\s+\+600\s+0\s+614400\s+\+614400$`,
		} {
			if !regexp.MustCompile(want).MatchString(so) {
				t.Errorf("diff A B text does not match %s:\n%s", want, so)
			}
		}

		// A against itself: nothing.
		so, _, _ = run("diff", a, a)
		if n := strings.Count(so, "(no change)\n"); n != 4 || strings.Contains(so, "NOTE") {
			t.Errorf("diff A A: %d tables without change, want 4:\n%s", n, so)
		}
		self := diffJSON(t, a, a)
		if len(self.Funcs)+len(self.Sites)+len(self.Comms)+len(self.Sizes)+len(self.Differ) != 0 {
			t.Errorf("diff A A: %+v", self)
		}

		// A against C: 2 and 4 ranks; totals double, per rank the same.
		d = diffJSON(t, a, c)
		if strings.Join(d.Differ, ",") != "rank count" || d.A.NumRanks != 2 || d.B.NumRanks != 4 {
			t.Errorf("A, C differ in %q (ranks %d, %d), want rank count (2, 4)", d.Differ, d.A.NumRanks, d.B.NumRanks)
		}
		checkRows("funcs A C", d.Funcs, map[string]cb{"MPI_Isend": {200, 1600}, "MPI_Recv": {200, 1600}, "MPI_Wait": {200, 0},
			"MPI_Barrier": {20, 0}, "MPI_Comm_rank": {2, 0}, "MPI_Comm_size": {2, 0}})
		d = diffJSON(t, "-per-rank", a, c)
		if !d.PerRank || d.A.Divisor != 2 || d.B.Divisor != 4 {
			t.Errorf("-per-rank: per_rank %v, divisors %d, %d", d.PerRank, d.A.Divisor, d.B.Divisor)
		}
		checkRows("funcs A C per rank", d.Funcs, map[string]cb{"MPI_Isend": {0, 0}, "MPI_Recv": {0, 0}, "MPI_Wait": {0, 0},
			"MPI_Barrier": {0, 0}, "MPI_Comm_rank": {0, 0}, "MPI_Comm_size": {0, 0}})
		for _, r := range d.Funcs {
			if r.Func == "MPI_Isend" && (r.Calls.A != 100 || r.Calls.B != 100 || r.Bytes.A != 800) {
				t.Errorf("MPI_Isend per rank: calls %+v, bytes %+v; want 100 calls, 800 bytes in both", r.Calls, r.Bytes)
			}
		}
	})
}

// TestDiffUsage: usage errors exit 2 with a message; a path without a
// profile exits 1 naming it; -o writes the file.
func TestDiffUsage(t *testing.T) {
	job := twoRanks(t)
	empty := t.TempDir()
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"diff"}, 2, "mpiscope diff: want two paths (job directories, snapshot directories or .mps files), got none"},
		{[]string{"diff", job}, 2, "got 1 (" + job + ")"},
		{[]string{"diff", job, job, job}, 2, "got 3"},
		{[]string{"diff", "-format", "csv", job, job}, 2, `mpiscope diff: unknown -format "csv" (want text or json)`},
		{[]string{"diff", "-top", "0", job, job}, 2, "mpiscope diff: -top 0: want at least 1 row"},
		{[]string{"diff", "-bogus", job, job}, 2, "mpiscope diff: flag provided but not defined: -bogus"},
		{[]string{"diff", job, empty}, 1, empty},
		{[]string{"dif", job, job}, 2, `(did you mean "diff"?)`},
	} {
		so, se, code := run(c.args...)
		if code != c.code || so != "" || !strings.Contains(se, c.stderr) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and %q", c.args, code, so, se, c.code, c.stderr)
		}
		if c.code == 2 && c.args[0] == "diff" && !strings.Contains(se, "usage: mpiscope diff ") {
			t.Errorf("%v: no synopsis in %q", c.args, se)
		}
	}
	so, _, code := run("help", "diff")
	if code != 0 || !strings.Contains(so, "usage: mpiscope diff") || !strings.Contains(so, "-per-rank") {
		t.Errorf("help diff: exit %d:\n%s", code, so)
	}
	out := filepath.Join(t.TempDir(), "d.txt")
	if so, se, code := run("diff", "-o", out, job, job); code != 0 || so != "" {
		t.Fatalf("-o: exit %d, %q %q", code, so, se)
	}
	if b, _ := os.ReadFile(out); strings.Count(string(b), "(no change)") != 1 {
		t.Errorf("-o %s:\n%s", out, b)
	}
}
