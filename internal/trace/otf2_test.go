package trace

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/testutil"
)

func convertOTF2(t testing.TB, job, out string) *Walker {
	t.Helper()
	j, err := OpenJob(job)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWalker(j, WalkOptions{})
	o, err := NewOTF2Writer(out, w)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Walk(o); err != nil {
		t.Fatal(err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	return w
}

// otf2Print runs otf2-print on an archive (skipping without it, failing in CI).
func otf2Print(t testing.TB, dir string) string {
	t.Helper()
	bin := testutil.RequireTool(t, "otf2-print")
	out, err := exec.Command(bin, filepath.Join(dir, "traces.otf2")).CombinedOutput()
	if err != nil {
		t.Fatalf("otf2-print: %v\n%s", err, out)
	}
	return string(out)
}

// OTF2Lines counts otf2-print event lines by record name and checks nothing
// looks like an error.
func countLines(t testing.TB, out string) map[string][]string {
	t.Helper()
	if strings.Contains(strings.ToLower(out), "error") || strings.Contains(out, "WARNING") {
		t.Errorf("otf2-print complained:\n%s", out)
	}
	m := map[string][]string{}
	re := regexp.MustCompile(`^([A-Z_]+)\s+(\d+)\s+(\d+)\s*(.*)$`)
	for _, l := range strings.Split(out, "\n") {
		if g := re.FindStringSubmatch(l); g != nil {
			m[g[1]] = append(m[g[1]], g[2]+" "+g[4])
		}
	}
	return m
}

func TestOTF2Synthetic(t *testing.T) {
	job := synthJob(t)
	out := filepath.Join(t.TempDir(), "otf2")
	convertOTF2(t, job, out)
	text := otf2Print(t, out)
	m := countLines(t, text)
	want := map[string]int{"ENTER": 12, "LEAVE": 12, "MPI_SEND": 1, "MPI_RECV": 1, "MPI_ISEND": 1, "MPI_ISEND_COMPLETE": 1,
		"MPI_IRECV_REQUEST": 1, "MPI_IRECV": 1, "MPI_COLLECTIVE_BEGIN": 4, "MPI_COLLECTIVE_END": 4}
	for k, n := range want {
		if len(m[k]) != n {
			t.Errorf("%s: %d lines, want %d", k, len(m[k]), n)
		}
	}
	for _, c := range []struct{ rec, sub string }{
		{"MPI_SEND", `0 Receiver: 1 ("thread 0" <1>), Communicator: "MPI_COMM_WORLD" <0>, Tag: 42, Length: 300`},
		{"MPI_RECV", `1 Sender: 0 ("thread 0" <0>), Communicator: "MPI_COMM_WORLD" <0>, Tag: 42, Length: 300`},
		{"MPI_ISEND", `0 Receiver: 1 ("thread 0" <1>), Communicator: "MPI_COMM_WORLD" <0>, Tag: 7, Length: 8, Request: 1`},
		{"MPI_IRECV", `1 Sender: 0 ("thread 0" <0>), Communicator: "MPI_COMM_WORLD" <0>, Tag: 7, Length: 8, Request: 1`},
	} {
		if len(m[c.rec]) == 0 || m[c.rec][0] != c.sub {
			t.Errorf("%s: got %q, want %q", c.rec, m[c.rec], c.sub)
		}
	}
	if !strings.Contains(text, `Operation: ALLREDUCE, Communicator: "MPI_COMM_WORLD" <0>, Root: NONE, Sent: 8, Received: 8`) {
		t.Errorf("no allreduce end:\n%s", text)
	}
	if t.Failed() {
		t.Logf("%s", text)
	}
}

// TestCollName: nonblocking, persistent and large-count forms map to the
// blocking collective's OTF2 operation; other I... functions stay as they are.
func TestCollName(t *testing.T) {
	for fn, want := range map[string]string{
		"MPI_Bcast": "Bcast", "MPI_Ibcast": "Bcast", "MPI_Ibarrier": "Barrier", "MPI_Bcast_init_c": "Bcast",
		"MPI_Ireduce_scatter_block": "Reduce_scatter_block", "MPI_Allreduce_init": "Allreduce",
		"MPI_Iprobe": "Iprobe", "MPI_Ineighbor_alltoall": "Ineighbor_alltoall",
	} {
		if got := collName(fn); got != want {
			t.Errorf("collName(%s) = %s, want %s", fn, got, want)
		}
	}
}
