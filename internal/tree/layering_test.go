package tree

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/mpiscope/mpiscope"

// A rule constrains what a package may depend on, directly or through
// other packages. Only the packages' own files count, not their tests
// (internal/trace's end-to-end tests run programs through internal/mpitest).
type rule struct {
	pkg     string   // import path below the module
	stdOnly bool     // every dependency is in the standard library
	never   []string // packages it must not depend on
}

var rules = []rule{
	{pkg: "profile", stdOnly: true},
	{pkg: "internal/trace", stdOnly: true},
	{pkg: "internal/report", never: []string{"internal/interpose"}},
	{pkg: "internal/cli", never: []string{"internal/interpose"}},
	{pkg: "internal/wrapgen", never: []string{"internal/interpose"}},
}

// pkgInfo is what go list says of one package.
type pkgInfo struct {
	ImportPath string
	Standard   bool
	Imports    []string
}

// graph maps an import path to its package.
type graph map[string]*pkgInfo

// deps returns the transitive dependencies of path, each with the chain of
// imports that leads to it from path.
func (g graph) deps(path string) map[string][]string {
	chain := map[string][]string{path: {path}}
	queue := []string{path}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		info := g[p]
		if info == nil {
			continue
		}
		for _, imp := range info.Imports {
			if _, seen := chain[imp]; seen {
				continue
			}
			chain[imp] = append(slices.Clone(chain[p]), imp)
			queue = append(queue, imp)
		}
	}
	delete(chain, path)
	return chain
}

// check returns one message per broken rule.
func check(g graph, rules []rule) []string {
	var bad []string
	for _, r := range rules {
		path := module + "/" + r.pkg
		if g[path] == nil {
			bad = append(bad, fmt.Sprintf("%s: not in the module (renamed? update the rules)", r.pkg))
			continue
		}
		deps := g.deps(path)
		var names []string
		for d := range deps {
			names = append(names, d)
		}
		slices.Sort(names)
		for _, d := range names {
			info := g[d]
			if r.stdOnly && d != "C" && (info == nil || !info.Standard) {
				bad = append(bad, fmt.Sprintf("%s must depend on the standard library only, but imports %s (%s)", r.pkg, d, strings.Join(deps[d], " -> ")))
			}
			for _, n := range r.never {
				if d == module+"/"+n {
					bad = append(bad, fmt.Sprintf("%s must not depend on %s, but does: %s", r.pkg, n, strings.Join(deps[d], " -> ")))
				}
			}
		}
	}
	return bad
}

// moduleRoot is the directory holding go.mod.
func moduleRoot(t *testing.T) string {
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("go.mod not found above the test's directory")
		}
		dir = up
	}
}

// load lists every package of the module and its dependencies for the
// given build tags.
func load(t *testing.T, root, tags string) graph {
	cmd := exec.Command("go", "list", "-e", "-deps", "-tags", tags, "-json=ImportPath,Standard,Imports", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list (tags %q): %v\n%s", tags, err, stderr.Bytes())
	}
	g := graph{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkgInfo
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		g[p.ImportPath] = &p
	}
	return g
}

// TestLayering checks the rules on the module as built with each family's
// tags (files of internal/interpose and cmd/libmpiscope are selected by
// them) and without.
func TestLayering(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the go command is needed: %v", err)
	}
	root := moduleRoot(t)
	for _, tags := range []string{"", "mpiscope_openmpi", "mpiscope_mpich"} {
		g := load(t, root, tags)
		for _, msg := range check(g, rules) {
			t.Errorf("tags %q: %s", tags, msg)
		}
	}
}

// TestCheckFindsViolations shows that check catches what TestLayering
// guards against, on a made-up module: a direct and an indirect forbidden
// import, and a package outside the standard library reached through
// another of the module's packages.
func TestCheckFindsViolations(t *testing.T) {
	m := func(p string) string { return module + "/" + p }
	g := graph{}
	add := func(path string, std bool, imports ...string) {
		g[path] = &pkgInfo{ImportPath: path, Standard: std, Imports: imports}
	}
	add(m("profile"), false, "fmt", m("internal/util"))
	add(m("internal/util"), false, "example.com/x")
	add("example.com/x", false)
	add("fmt", true, "io")
	add("io", true)
	add(m("internal/trace"), false, "C", "io")
	add("C", false)
	add(m("internal/report"), false, m("profile"), m("internal/interpose"))
	add(m("internal/cli"), false, m("internal/report"))
	add(m("internal/wrapgen"), false, "fmt")
	add(m("internal/interpose"), false, "C")
	want := []string{
		"profile must depend on the standard library only, but imports example.com/x (" + m("profile") + " -> " + m("internal/util") + " -> example.com/x)",
		"profile must depend on the standard library only, but imports " + m("internal/util") + " (" + m("profile") + " -> " + m("internal/util") + ")",
		"internal/report must not depend on internal/interpose, but does: " + m("internal/report") + " -> " + m("internal/interpose"),
		"internal/cli must not depend on internal/interpose, but does: " + m("internal/cli") + " -> " + m("internal/report") + " -> " + m("internal/interpose"),
	}
	if got := check(g, rules); !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	delete(g, m("internal/wrapgen"))
	if got := check(g, rules); len(got) != len(want)+1 || !strings.Contains(got[len(got)-1], "internal/wrapgen: not in the module") {
		t.Errorf("a rule's package missing from the module: got %q", got)
	}
}
