package trace

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOTF2Paths: a call with a path is entered in the chain of calling
// contexts of its callers (otf2-print -G reads it back), each region at
// the line it was called from, the outermost without a location; a call
// without a path in a context without a parent, as before. Perfetto names
// the path.
func TestOTF2Paths(t *testing.T) {
	job := pathsRank(t, BEvents, true)
	j, err := OpenJob(job)
	if err != nil {
		t.Fatal(err)
	}
	srcs := map[uint64]Source{0x401005: {"halo", "app.c", 27}, 0x402000: {"solve", "app.c", 34}, 0x403000: {"main", "app.c", 86},
		0x402100: {"precond", "app.c", 41}, 0x403010: {"main", "app.c", 87}, 0x401234: {"halo", "app.c", 28}, 0x401000: {"main", "app.c", 90}}
	opt := WalkOptions{Source: func(r *Rank, pc uint64) (Source, bool) {
		s, ok := srcs[pc]
		return s, ok
	}}
	out := filepath.Join(t.TempDir(), "otf2")
	w := NewWalker(j, opt)
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
	defs := otf2PrintArgs(t, out, "-G")
	type cc struct{ region, scl, parent string }
	all := map[string]cc{}
	re := regexp.MustCompile(`(?m)^CALLING_CONTEXT\s+(\d+)\s+Region: "([^"]*)" <\d+>, Source code location: (?:"([^"]*)" <\d+>|UNDEFINED), Parent: (?:"[^"]*" <(\d+)>|UNDEFINED)`)
	for _, g := range re.FindAllStringSubmatch(defs, -1) {
		all[g[1]] = cc{g[2], g[3], g[4]}
	}
	chain := func(id string) string {
		var s []string
		for n := 0; id != "" && n < 10; n++ {
			c := all[id]
			s = append(s, c.region+"@"+c.scl)
			id = c.parent
		}
		return strings.Join(s, "<")
	}
	entered := map[string]int{}
	for _, g := range regexp.MustCompile(`(?m)^CALLING_CONTEXT_ENTER\s+\d+\s+\d+\s+Calling Context: .*<(\d+)>`).FindAllStringSubmatch(otf2Print(t, out), -1) {
		entered[chain(g[1])]++
	}
	want := map[string]int{
		"MPI_Allreduce@app.c:27<halo@app.c:34<solve@app.c:86<main@":   2,
		"MPI_Allreduce@app.c:27<halo@app.c:41<precond@app.c:87<main@": 3,
		"MPI_Allreduce@app.c:28":                                      1, "MPI_Allreduce@app.c:90": 1,
	}
	if fmt.Sprint(entered) != fmt.Sprint(want) {
		t.Errorf("calls per calling context\n%v\nwant\n%v\n%s", entered, want, defs)
	}
	if n := len(all); n != 9 {
		t.Errorf("%d calling contexts, want 9 (main, solve, precond, halo twice, MPI_Allreduce four times)\n%s", n, defs)
	}
	var b strings.Builder
	p := NewPerfettoWriter(&b)
	if err := NewWalker(j, opt).Walk(p); err != nil {
		t.Fatal(err)
	}
	p.Close()
	// JSON's escape of "<" (the viewer shows "<").
	for s, n := range map[string]int{`"path":"solve app.c:34 \u003c main app.c:86"`: 2, `"path":"precond app.c:41 \u003c main app.c:87"`: 3, `"path":`: 5} {
		if c := strings.Count(b.String(), s); c != n {
			t.Errorf("perfetto: %d %s, want %d\n%s", c, s, n, b.String())
		}
	}
}
