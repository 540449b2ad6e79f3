package trace

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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
	return otf2PrintArgs(t, dir)
}

// otf2PrintArgs runs otf2-print with options on an archive.
func otf2PrintArgs(t testing.TB, dir string, opts ...string) string {
	t.Helper()
	bin, err := exec.LookPath("otf2-print")
	if err != nil {
		if ci() {
			t.Fatal("CI=true and otf2-print is not installed")
		}
		t.Skip("otf2-print not installed")
	}
	out, err := exec.Command(bin, append(opts, filepath.Join(dir, "traces.otf2"))...).CombinedOutput()
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
	// The date of time 0, the host with its ranks in the system tree.
	defs := strings.Join(strings.Fields(otf2PrintArgs(t, out, "-G")), " ")
	for _, re := range []string{
		`CLOCK_PROPERTIES Ticks per Seconds: 1000000000, Global Offset: 0, Length: 4301, Date: 2023-11-14 22:13:20.000000500 \+0000`,
		`SYSTEM_TREE_NODE 1 Name: "h" <\d+>, Class: "node" <\d+>, Parent: "machine::job" <0>`,
		`LOCATION_GROUP 0 Name: "rank 0 \(h\)" <\d+>, Type: PROCESS, Parent: "node::h" <1>`,
		`LOCATION_GROUP 1 Name: "rank 1 \(h\)" <\d+>, Type: PROCESS, Parent: "node::h" <1>`,
	} {
		if !regexp.MustCompile(re).MatchString(defs) {
			t.Errorf("otf2-print -G: no %s\n%s", re, defs)
		}
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

// TestOTF2Callsites: with callsites resolved, each MPI call is entered and
// left in the calling context of its region at its source code location.
func TestOTF2Callsites(t *testing.T) {
	job := synthJob(t)
	j, err := OpenJob(job)
	if err != nil {
		t.Fatal(err)
	}
	// The synthetic calls' callsites are 0x401000 + function id.
	w := NewWalker(j, WalkOptions{Source: func(r *Rank, pc uint64) (Source, bool) {
		return Source{Func: "main", File: "app.c", Line: int(pc - 0x401000 + 10)}, true
	}})
	out := filepath.Join(t.TempDir(), "otf2")
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
	text := otf2Print(t, out)
	m := countLines(t, text)
	// 10 calls; a region and a user event keep Enter/Leave.
	for k, n := range map[string]int{"CALLING_CONTEXT_ENTER": 10, "CALLING_CONTEXT_LEAVE": 10, "ENTER": 2, "LEAVE": 2} {
		if len(m[k]) != n {
			t.Errorf("%s: %d records, want %d", k, len(m[k]), n)
		}
	}
	defs := strings.Join(strings.Fields(otf2PrintArgs(t, out, "-G")), " ")
	// Functions 0 to 6 called at lines 10 to 16 of app.c.
	if n := strings.Count(defs, "SOURCE_CODE_LOCATION "); n != 7 {
		t.Errorf("%d source code locations, want 7", n)
	}
	if n := strings.Count(defs, "CALLING_CONTEXT "); n != 7 {
		t.Errorf("%d calling contexts, want 7", n)
	}
	for _, re := range []string{`SOURCE_CODE_LOCATION 0 File: "app.c" <\d+>, Line Number: 10`, `CALLING_CONTEXT \d+ Region: "MPI_Send" <\d+>, Source code location: "app.c:10" <0>, Parent: UNDEFINED`} {
		if !regexp.MustCompile(re).MatchString(defs) {
			t.Errorf("otf2-print -G: no %s", re)
		}
	}
	if t.Failed() {
		t.Logf("%s\n%s", text, defs)
	}
}

// TestPerfettoCallsites: a resolved callsite is "file:line" (and the
// calling function) in a slice's args; an unresolved one its address.
func TestPerfettoCallsites(t *testing.T) {
	job := synthJob(t)
	j, err := OpenJob(job)
	if err != nil {
		t.Fatal(err)
	}
	for _, resolve := range []bool{true, false} {
		opt := WalkOptions{}
		if resolve {
			opt.Source = func(r *Rank, pc uint64) (Source, bool) {
				return Source{Func: "main", File: "app.c", Line: int(pc - 0x401000 + 10)}, pc != 0x401000+4
			}
		}
		var b strings.Builder
		p := NewPerfettoWriter(&b)
		if err := NewWalker(j, opt).Walk(p); err != nil {
			t.Fatal(err)
		}
		p.Close()
		text := b.String()
		want := map[string]int{`"callsite":"app.c:10","caller":"main"`: 1, `"callsite":"0x401004"`: 2, `"callsite":"0x401000"`: 0}
		if !resolve {
			want = map[string]int{`"callsite":"app.c:10"`: 0, `"callsite":"0x401004"`: 2, `"callsite":"0x401000"`: 1}
		}
		for s, n := range want {
			if c := strings.Count(text, s); c != n {
				t.Errorf("resolve %v: %d %s, want %d", resolve, c, s, n)
			}
		}
	}
}
