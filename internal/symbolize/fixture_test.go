package symbolize

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mpiscope/mpiscope/internal/testutil"
)

// Fixtures are built once per test binary with gcc from testdata/*.c into
// a temporary directory removed by TestMain.

var (
	fixtureOnce sync.Once
	fixtureDir  string
	fixtureErr  error
	fixtures    = map[string]*fixture{}
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureDir != "" {
		os.RemoveAll(fixtureDir)
	}
	os.Exit(code)
}

// fixture is one build variant of testdata/callsite.c + libcallsite.c,
// run once: the return addresses it printed and its /proc/self/maps.
type fixture struct {
	exe, lib string
	sites    map[string]uint64
	maps     []Mapping
}

type variant struct {
	name  string
	cflag []string // compiler flags for both the executable and library
	exe   []string // extra flags for the executable
	lib   []string // extra flags for the library
	post  func(dir string) error
}

func variants() []variant {
	return []variant{
		{name: "pie-O0", cflag: []string{"-g", "-O0"}, exe: []string{"-fPIE", "-pie"}},
		{name: "pie-O2", cflag: []string{"-g", "-O2"}, exe: []string{"-fPIE", "-pie"}},
		{name: "nopie-O0", cflag: []string{"-g", "-O0"}, exe: []string{"-fno-pie", "-no-pie"}},
		{name: "dwarf4-O2", cflag: []string{"-gdwarf-4", "-O2"}, exe: []string{"-fPIE", "-pie"}},
		// No DWARF; the library is also stripped of .symtab (-s), so
		// only .dynsym is left.
		{name: "nodebug", cflag: []string{"-O0"}, exe: []string{"-fPIE", "-pie"}, lib: []string{"-s"}},
		// Library debug info moved to a separate file found via
		// .gnu_debuglink next to it.
		{name: "debuglink", cflag: []string{"-g", "-O0"}, exe: []string{"-fPIE", "-pie"}, post: func(dir string) error {
			lib := filepath.Join(dir, "libcallsite.so")
			return runCmds(dir,
				[]string{"objcopy", "--only-keep-debug", lib, lib + ".debug"},
				[]string{"objcopy", "--strip-debug", "--add-gnu-debuglink=" + lib + ".debug", lib})
		}},
	}
}

func runCmds(dir string, cmds ...[]string) error {
	for _, c := range cmds {
		cmd := exec.Command(c[0], c[1:]...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v\n%s", strings.Join(c, " "), err, out)
		}
	}
	return nil
}

// requireTool skips the test if tool is missing, except under CI where
// the fixtures are mandatory.
func requireTool(t testing.TB, tool string) {
	t.Helper()
	testutil.RequireTool(t, tool)
}

func getFixture(t testing.TB, name string) *fixture {
	t.Helper()
	requireTool(t, "gcc")
	if name == "debuglink" {
		requireTool(t, "objcopy")
	}
	fixtureOnce.Do(func() { fixtureErr = buildFixtures() })
	if fixtureErr != nil {
		t.Fatal(fixtureErr)
	}
	f := fixtures[name]
	if f == nil {
		t.Fatalf("fixture %s was not built", name)
	}
	return f
}

func buildFixtures() error {
	src, err := filepath.Abs("testdata")
	if err != nil {
		return err
	}
	fixtureDir, err = os.MkdirTemp("", "symbolize-fixtures-")
	if err != nil {
		return err
	}
	_, noObjcopy := exec.LookPath("objcopy")
	for _, v := range variants() {
		if v.post != nil && noObjcopy != nil {
			continue
		}
		dir := filepath.Join(fixtureDir, v.name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
		lib := filepath.Join(dir, "libcallsite.so")
		exe := filepath.Join(dir, "callsite")
		libCmd := append([]string{"gcc"}, v.cflag...)
		libCmd = append(libCmd, "-fPIC", "-shared")
		libCmd = append(libCmd, v.lib...)
		libCmd = append(libCmd, "-o", lib, filepath.Join(src, "libcallsite.c"))
		exeCmd := append([]string{"gcc"}, v.cflag...)
		exeCmd = append(exeCmd, v.exe...)
		exeCmd = append(exeCmd, "-o", exe, filepath.Join(src, "callsite.c"),
			"-L"+dir, "-lcallsite", "-Wl,-rpath,"+dir)
		if err := runCmds(dir, libCmd, exeCmd); err != nil {
			return fmt.Errorf("building fixture %s: %w", v.name, err)
		}
		if v.post != nil {
			if err := v.post(dir); err != nil {
				return fmt.Errorf("fixture %s: %w", v.name, err)
			}
		}
		fx, err := runFixture(exe, lib)
		if err != nil {
			return fmt.Errorf("fixture %s: %w", v.name, err)
		}
		fixtures[v.name] = fx
	}
	return nil
}

func runFixture(exe, lib string) (*fixture, error) {
	out, err := exec.Command(exe).Output()
	if err != nil {
		return nil, fmt.Errorf("running %s: %v", exe, err)
	}
	fx := &fixture{exe: exe, lib: lib, sites: map[string]uint64{}}
	head, mapsText, found := bytes.Cut(out, []byte("maps\n"))
	if !found {
		return nil, fmt.Errorf("no maps in output:\n%s", out)
	}
	sc := bufio.NewScanner(bytes.NewReader(head))
	for sc.Scan() {
		var name string
		var addr uint64
		if _, err := fmt.Sscanf(sc.Text(), "site %s 0x%x", &name, &addr); err != nil {
			return nil, fmt.Errorf("bad line %q: %v", sc.Text(), err)
		}
		fx.sites[name] = addr
	}
	if fx.maps, err = ParseMaps(bytes.NewReader(mapsText)); err != nil {
		return nil, err
	}
	return fx, nil
}

// markerLine returns the 1-based line of the unique occurrence of marker
// in testdata/file.
func markerLine(t testing.TB, file, marker string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for i, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, marker) {
			if found != 0 {
				t.Fatalf("marker %q twice in %s", marker, file)
			}
			found = i + 1
		}
	}
	if found == 0 {
		t.Fatalf("marker %q not in %s", marker, file)
	}
	return found
}

func sameFile(t testing.TB, a, b string) bool {
	t.Helper()
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// resolveSite maps the fixture's recorded return address for site to
// (module, offset), checking it lands in wantModule.
func resolveSite(t *testing.T, fx *fixture, site, wantModule string) (string, uint64) {
	t.Helper()
	pc, ok := fx.sites[site]
	if !ok {
		t.Fatalf("site %s not printed", site)
	}
	mod, off, ok := Resolve(fx.maps, pc)
	if !ok {
		t.Fatalf("Resolve(%#x) failed", pc)
	}
	if !sameFile(t, mod, wantModule) {
		t.Fatalf("Resolve(%#x) module = %s, want %s", pc, mod, wantModule)
	}
	return mod, off
}

type want struct {
	fn, file string
	line     int
}

func checkLookup(t *testing.T, s *Symbolizer, mod string, off uint64, w want) {
	t.Helper()
	fn, file, line, err := s.LookupReturn(mod, off)
	if err != nil {
		t.Fatalf("LookupReturn(%s, %#x): %v", filepath.Base(mod), off, err)
	}
	base := ""
	if file != "" {
		base = filepath.Base(file)
	}
	if fn != w.fn || base != w.file || line != w.line {
		t.Errorf("LookupReturn(%s, %#x) = %s %s:%d, want %s %s:%d",
			filepath.Base(mod), off, fn, file, line, w.fn, w.file, w.line)
	}
	if w.file != "" && !filepath.IsAbs(file) {
		t.Errorf("file %q is not absolute", file)
	}
}

func TestFixtures(t *testing.T) {
	directLine := markerLine(t, "callsite.c", "@site:direct")
	inlinedLine := markerLine(t, "callsite.c", "@site:inlined")
	callLine := markerLine(t, "callsite.c", "@call:inlined_helper")
	libLine := markerLine(t, "libcallsite.c", "@site:lib")

	for _, name := range []string{"pie-O0", "pie-O2", "nopie-O0", "dwarf4-O2", "debuglink"} {
		t.Run(name, func(t *testing.T) {
			fx := getFixture(t, name)
			s := New()

			mod, off := resolveSite(t, fx, "direct", fx.exe)
			checkLookup(t, s, mod, off, want{"direct_caller", "callsite.c", directLine})
			if name == "nopie-O0" && off != fx.sites["direct"] {
				t.Errorf("non-PIE offset %#x != pc %#x", off, fx.sites["direct"])
			}
			if name == "pie-O0" {
				// The return address itself is on the next
				// statement; that is why LookupReturn exists.
				_, _, line, err := s.Lookup(mod, off)
				if err != nil || line != directLine+1 {
					t.Errorf("Lookup(return address) line = %d, %v; want %d", line, err, directLine+1)
				}
			}

			mod, off = resolveSite(t, fx, "inlined", fx.exe)
			checkLookup(t, s, mod, off, want{"inline_host", "callsite.c", inlinedLine})
			frames, err := s.LookupReturnFrames(mod, off)
			if err != nil {
				t.Fatal(err)
			}
			if len(frames) != 2 ||
				frames[0].Func != "inlined_helper" || frames[0].Line != inlinedLine || !frames[0].Inlined ||
				frames[1].Func != "inline_host" || frames[1].Line != callLine || frames[1].Inlined ||
				filepath.Base(frames[1].File) != "callsite.c" {
				t.Errorf("LookupReturnFrames = %+v\nwant inlined_helper:%d (inlined) <- inline_host:%d",
					frames, inlinedLine, callLine)
			}

			mod, off = resolveSite(t, fx, "lib", fx.lib)
			checkLookup(t, s, mod, off, want{"lib_call", "libcallsite.c", libLine})
		})
	}
}

func TestFixtureNoDebugInfo(t *testing.T) {
	fx := getFixture(t, "nodebug")
	s := New()
	mod, off := resolveSite(t, fx, "direct", fx.exe)
	checkLookup(t, s, mod, off, want{fn: "direct_caller"}) // .symtab
	mod, off = resolveSite(t, fx, "inlined", fx.exe)
	checkLookup(t, s, mod, off, want{fn: "inline_host"})
	mod, off = resolveSite(t, fx, "lib", fx.lib)
	checkLookup(t, s, mod, off, want{fn: "lib_call"}) // .dynsym only
}

func TestDebugFileByBuildID(t *testing.T) {
	requireTool(t, "objcopy")
	fx := getFixture(t, "pie-O0")
	dir := t.TempDir()
	lib := filepath.Join(dir, "libcallsite.so")
	root := filepath.Join(dir, "debugroot")
	if err := runCmds(dir,
		[]string{"objcopy", "--only-keep-debug", fx.lib, lib + ".dbg"},
		[]string{"objcopy", "--strip-debug", fx.lib, lib}); err != nil {
		t.Fatal(err)
	}
	stripped, err := readELF(lib)
	if err != nil {
		t.Fatal(err)
	}
	id := buildID(stripped)
	stripped.Close()
	if len(id) == 0 {
		t.Skip("gcc did not emit a build ID")
	}
	h := fmt.Sprintf("%x", id)
	dbg := filepath.Join(root, ".build-id", h[:2], h[2:]+".debug")
	if err := os.MkdirAll(filepath.Dir(dbg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(lib+".dbg", dbg); err != nil {
		t.Fatal(err)
	}

	_, off := resolveSite(t, fx, "lib", fx.lib)
	libLine := markerLine(t, "libcallsite.c", "@site:lib")

	s := New()
	s.debugRoot = root
	checkLookup(t, s, lib, off, want{"lib_call", "libcallsite.c", libLine})

	// Without the debug root only the symbol table is left.
	s = New()
	s.debugRoot = filepath.Join(dir, "nonexistent")
	checkLookup(t, s, lib, off, want{fn: "lib_call"})
}

func TestDebuglinkCRCMismatch(t *testing.T) {
	fx := getFixture(t, "debuglink")
	dir := t.TempDir()
	lib := filepath.Join(dir, "libcallsite.so")
	data, err := os.ReadFile(fx.lib)
	if err != nil {
		t.Fatal(err)
	}
	dbg, err := os.ReadFile(fx.lib + ".debug")
	if err != nil {
		t.Fatal(err)
	}
	dbg = append(dbg, 0) // changes the CRC, still a valid ELF
	if err := os.WriteFile(lib, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lib+".debug", dbg, 0o644); err != nil {
		t.Fatal(err)
	}
	_, off := resolveSite(t, fx, "lib", fx.lib)
	s := New()
	s.debugRoot = ""
	checkLookup(t, s, lib, off, want{fn: "lib_call"})
}

// Sanity check of the marker lines against the fixture source, so a
// broken marker cannot make TestFixtures vacuous.
func TestMarkers(t *testing.T) {
	for _, m := range []struct{ file, marker, code string }{
		{"callsite.c", "@site:direct", "record();"},
		{"callsite.c", "@site:inlined", "record();"},
		{"callsite.c", "@call:inlined_helper", "inlined_helper();"},
		{"libcallsite.c", "@site:lib", "lib_capture();"},
	} {
		n := markerLine(t, m.file, m.marker)
		data, _ := os.ReadFile(filepath.Join("testdata", m.file))
		line := strings.Split(string(data), "\n")[n-1]
		if !strings.Contains(line, m.code) {
			t.Errorf("%s:%s line %q lacks %q", m.file, strconv.Itoa(n), line, m.code)
		}
	}
}
