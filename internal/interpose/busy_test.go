package interpose

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestBusyRoles: for every wrapper that publishes its call in progress in
// the generated code of both families (the wrapgen goldens), busyRoles
// names exactly the roles it stores (peer or root in bpeer, tag in btag):
// the reader keeps no stale value and drops none.
func TestBusyRoles(t *testing.T) {
	goldens, _ := filepath.Glob("../wrapgen/testdata/*.c.golden")
	if len(goldens) < 2 {
		t.Fatalf("goldens: %v", goldens)
	}
	table := func(src, name string) []string {
		i := strings.Index(src, "const char *const "+name+"[")
		if i < 0 {
			t.Fatalf("no %s", name)
		}
		body := src[i:]
		body = body[strings.Index(body, "{")+1 : strings.Index(body, "};")]
		var out []string
		for _, l := range strings.Split(body, "\n") {
			if l = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(l), ",")); l != "" {
				out = append(out, strings.Trim(l, `"`))
			}
		}
		return out
	}
	fast := regexp.MustCompile(`(?s)int ms_on_(MPI_\w+)\(.*?\n}\n`)
	for _, g := range goldens {
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		names, classes := table(src, "ms_fn_names"), table(src, "ms_fn_classes")
		if len(names) != len(classes) || len(names) < 400 {
			t.Fatalf("%s: %d names, %d classes", g, len(names), len(classes))
		}
		class := map[string]string{}
		for i, n := range names {
			class[n] = classes[i]
		}
		published, withPeer := 0, 0
		for _, m := range fast.FindAllStringSubmatch(src, -1) {
			name, body := m[1], m[0]
			if !strings.Contains(body, "ms_busy_args(") {
				continue
			}
			published++
			peer, tag := busyRoles(name, class[name])
			if got := strings.Contains(body, "ms_t->bpeer"); got != peer {
				t.Errorf("%s: %s (%s) stores a peer: %v, busyRoles says %v", filepath.Base(g), name, class[name], got, peer)
			}
			if got := strings.Contains(body, "ms_t->btag"); got != tag {
				t.Errorf("%s: %s (%s) stores a tag: %v, busyRoles says %v", filepath.Base(g), name, class[name], got, tag)
			}
			if peer {
				withPeer++
			}
		}
		// Recv, Send, Sendrecv, Probe, Barrier, Bcast, Wait... on either family.
		if published < 40 || withPeer < 15 {
			t.Errorf("%s: %d wrappers publish, %d with a peer", filepath.Base(g), published, withPeer)
		}
	}
}
