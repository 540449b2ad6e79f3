package symbolize

import (
	"debug/elf"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
)

func readELF(path string) (*elf.File, error) { return elf.Open(path) }

//go:noinline
func goCaller() []uintptr {
	pcs := make([]uintptr, 1)
	runtime.Callers(1, pcs) // return address into goCaller
	return pcs
}

// TestSelf symbolizes a return address in the running (Go, non-PIE by
// default) test binary and compares with the Go runtime's own answer. It
// needs no C toolchain. "go test" links the test binary with -s -w (no
// symbols, no DWARF): there the test builds this package's test binary
// unstripped ("go test -c") and runs itself in it.
func TestSelf(t *testing.T) {
	maps, err := ReadSelfMaps()
	if err != nil {
		t.Fatal(err)
	}
	pc := uint64(goCaller()[0])
	frame, _ := runtime.CallersFrames([]uintptr{uintptr(pc)}).Next()

	mod, off, ok := Resolve(maps, pc)
	if !ok {
		t.Fatalf("Resolve(%#x) failed", pc)
	}
	f, err := elf.Open(mod)
	if err != nil {
		t.Fatal(err)
	}
	dw := hasDebugInfo(f)
	syms, _ := f.Symbols()
	f.Close()
	if !dw && len(syms) == 0 {
		if os.Getenv("MPISCOPE_TESTSELF_CHILD") != "" {
			t.Fatalf("%s: stripped even when built with go test -c", mod)
		}
		bin := filepath.Join(t.TempDir(), "symbolize.test")
		if out, err := exec.Command("go", "test", "-c", "-o", bin, ".").CombinedOutput(); err != nil {
			t.Fatalf("go test -c: %v\n%s", err, out)
		}
		cmd := exec.Command(bin, "-test.run", "^TestSelf$", "-test.v")
		cmd.Env = append(os.Environ(), "MPISCOPE_TESTSELF_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestSelf") {
			t.Fatalf("TestSelf in an unstripped test binary: %v\n%s", err, out)
		}
		t.Logf("ran in an unstripped test binary:\n%s", out)
		return
	}
	s := New()
	fn, file, line, err := s.LookupReturn(mod, off)
	if err != nil {
		t.Fatal(err)
	}
	if fn != frame.Function {
		t.Errorf("fn = %q, want %q", fn, frame.Function)
	}
	if !dw {
		t.Logf("test binary has no DWARF; only checked the function name")
		return
	}
	if file != frame.File || line != frame.Line {
		t.Errorf("%s:%d, want %s:%d", file, line, frame.File, frame.Line)
	}
}

func TestLookupErrors(t *testing.T) {
	s := New()
	missing := filepath.Join(t.TempDir(), "no-such-module.so")
	if _, _, _, err := s.Lookup(missing, 0x1000); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing module: err = %v, want error naming %s", err, missing)
	}
	garbage := filepath.Join(t.TempDir(), "garbage.so")
	if err := os.WriteFile(garbage, []byte("definitely not an ELF file"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := s.Lookup(garbage, 0x1000); err == nil || !strings.Contains(err.Error(), garbage) {
		t.Errorf("garbage module: err = %v, want error naming %s", err, garbage)
	}
	if _, err := s.LookupFrames(garbage, 0x1000); err == nil {
		t.Error("LookupFrames(garbage) succeeded")
	}
	if _, _, _, err := s.Lookup("", 0); err == nil {
		t.Error("empty module path accepted")
	}

	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	_, _, _, err = s.Lookup(exe, 0x10) // inside the ELF header, not code
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("Lookup(header address) err = %v, want ErrNotFound", err)
	}
}

func TestLookupReturnZero(t *testing.T) {
	if returnToCall(0) != 0 || returnToCall(0x1001) != 0x1000 {
		t.Fatal("returnToCall")
	}
}

// TestCorruptELF flips bytes in the debug sections and truncates a real
// binary: lookups may fail but must not panic or hang.
func TestCorruptELF(t *testing.T) {
	path := corpusBinary(t)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var targets [][2]uint64 // file ranges of debug and header data
	targets = append(targets, [2]uint64{0, 64})
	var addrs []uint64
	for _, sec := range f.Sections {
		if strings.HasPrefix(sec.Name, ".debug_") || sec.Name == ".symtab" || sec.Name == ".dynsym" ||
			sec.Name == ".strtab" || sec.Name == ".gnu_debuglink" || sec.Type == elf.SHT_NOTE {
			if sec.Type != elf.SHT_NOBITS && sec.Size > 0 && sec.Offset+sec.Size <= uint64(len(orig)) {
				targets = append(targets, [2]uint64{sec.Offset, sec.Offset + sec.Size})
			}
		}
		if sec.Name == ".text" {
			for a := sec.Addr; a < sec.Addr+sec.Size; a += sec.Size/16 + 1 {
				addrs = append(addrs, a)
			}
		}
	}
	f.Close()

	dir := t.TempDir()
	rng := rand.New(rand.NewSource(1))
	iters := 60
	if testing.Short() {
		iters = 10
	}
	for i := 0; i < iters; i++ {
		data := append([]byte(nil), orig...)
		switch i % 3 {
		case 0, 1:
			tr := targets[rng.Intn(len(targets))]
			for j := 0; j < 1+rng.Intn(32); j++ {
				data[tr[0]+uint64(rng.Int63n(int64(tr[1]-tr[0])))] = byte(rng.Intn(256))
			}
		case 2:
			data = data[:rng.Intn(len(data))]
		}
		p := filepath.Join(dir, "corrupt")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s := New()
		for _, a := range addrs {
			s.Lookup(p, a)
			s.LookupFrames(p, a)
		}
		loadsCache.Delete(p)
		Resolve([]Mapping{{0x1000, 0x2000, 0, p}}, 0x1010)
		loadsCache.Delete(p)
	}
}

// corpusBinary returns a small C binary with DWARF when gcc is available,
// else the (larger) test binary.
func corpusBinary(t testing.TB) string {
	if _, err := exec.LookPath("gcc"); err == nil {
		return getFixture(t, "pie-O2").exe
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	return exe
}

func TestConcurrentLookup(t *testing.T) {
	fx := getFixture(t, "pie-O2")
	mod, off := resolveSite(t, fx, "direct", fx.exe)
	s := New()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn, _, _, err := s.LookupReturn(mod, off)
			if err != nil || fn != "direct_caller" {
				t.Errorf("LookupReturn = %q, %v", fn, err)
			}
		}()
	}
	wg.Wait()
}

func TestIndexFrames(t *testing.T) {
	fi := &funcInfo{name: "f"}
	idx := &index{
		funcs: []funcRange{{0x100, 0x200, fi}},
		lines: []lineRow{{0x100, 0, 10}, {0x150, 0, 11}, {0x200, endOfSequence, 0}, {0x300, 0, 99}},
		files: []string{"/src/a.c"},
		syms:  []symbol{{0x100, 0x100, "f_sym"}, {0x300, 0, "g"}},
	}
	fi.inlines = []inlineRange{
		{lo: 0x140, hi: 0x160, depth: 0, name: "inl", callFile: "/src/a.c", callLine: 5},
		{lo: 0x150, hi: 0x158, depth: 1, name: "inl2", callFile: "/src/b.h", callLine: 7},
		{lo: 0x170, hi: 0x180, depth: 0, name: "other", callFile: "/src/a.c", callLine: 6},
	}
	tests := []struct {
		pc     uint64
		frames []Frame
	}{
		{0x120, []Frame{{"f", "/src/a.c", 10, false}}},
		{0x145, []Frame{{"inl", "/src/a.c", 10, true}, {"f", "/src/a.c", 5, false}}},
		{0x152, []Frame{{"inl2", "/src/a.c", 11, true}, {"inl", "/src/b.h", 7, true}, {"f", "/src/a.c", 5, false}}},
		{0x175, []Frame{{"other", "/src/a.c", 11, true}, {"f", "/src/a.c", 6, false}}},
		{0x250, nil}, // after end of sequence, no function
		{0x310, []Frame{{"g", "/src/a.c", 99, false}}},
		{0x50, nil},
	}
	for _, tc := range tests {
		got := idx.frames(tc.pc)
		if !reflect.DeepEqual(got, tc.frames) {
			t.Errorf("frames(%#x) = %+v, want %+v", tc.pc, got, tc.frames)
		}
	}
	if fn, file, line, ok := idx.lookup(0x152); !ok || fn != "f" || file != "/src/a.c" || line != 11 {
		t.Errorf("lookup(inlined) = %s %s:%d", fn, file, line)
	}
}

// benchModule builds a C program with many functions (one line table
// sequence and one subprogram each, plus inlined calls) and returns it with
// a set of addresses spread over its text.
func benchModule(b *testing.B) (string, []uint64) {
	requireTool(b, "gcc")
	benchOnce.Do(func() { benchExe, benchAddrs, benchErr = buildBenchModule() })
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchExe, benchAddrs
}

var (
	benchOnce  sync.Once
	benchExe   string
	benchAddrs []uint64
	benchErr   error
)

func buildBenchModule() (string, []uint64, error) {
	if fixtureDir == "" {
		// Reuse the fixture directory so TestMain removes it.
		fixtureOnce.Do(func() { fixtureErr = buildFixtures() })
		if fixtureErr != nil {
			return "", nil, fixtureErr
		}
	}
	dir := fixtureDir
	var src strings.Builder
	src.WriteString("static inline __attribute__((always_inline)) int sq(int x) { return x * x; }\n")
	const n = 3000
	for i := 0; i < n; i++ {
		fmt.Fprintf(&src, "__attribute__((noinline)) int f%d(int a) {\n\tint r = sq(a) + %d;\n\tif (r & 1)\n\t\tr += f%d(r);\n\treturn r;\n}\n", i, i, (i+1)%n)
	}
	src.WriteString("int main(void) { return f0(1) & 1; }\n")
	c := filepath.Join(dir, "big.c")
	exe := filepath.Join(dir, "big")
	if err := os.WriteFile(c, []byte(src.String()), 0o644); err != nil {
		return "", nil, err
	}
	if err := runCmds(dir, []string{"gcc", "-g", "-O1", "-o", exe, c}); err != nil {
		return "", nil, err
	}
	f, err := elf.Open(exe)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	text := f.Section(".text")
	var addrs []uint64
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 4096; i++ {
		addrs = append(addrs, text.Addr+uint64(rng.Int63n(int64(text.Size))))
	}
	return exe, addrs, nil
}

// BenchmarkLookup measures per-address lookups once the module's index is
// built (3000 functions).
func BenchmarkLookup(b *testing.B) {
	exe, addrs := benchModule(b)
	s := New()
	if _, _, _, err := s.Lookup(exe, addrs[0]); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Lookup(exe, addrs[i%len(addrs)])
	}
}

func BenchmarkLookupFrames(b *testing.B) {
	exe, addrs := benchModule(b)
	s := New()
	s.Lookup(exe, addrs[0])
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.LookupFrames(exe, addrs[i%len(addrs)])
	}
}

// BenchmarkLoadModule measures opening and indexing the module.
func BenchmarkLoadModule(b *testing.B) {
	exe, _ := benchModule(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := loadModule(exe, ""); err != nil {
			b.Fatal(err)
		}
	}
}
