package main

import (
	"debug/elf"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mpiscope/mpiscope/internal/testutil"
)

// funcCode is the address of function name in the ELF file path and the
// first n bytes of its code.
func funcCode(t *testing.T, path, name string, n int) (uint64, []byte) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	text := f.Section(".text")
	for _, s := range syms {
		if s.Name != name {
			continue
		}
		if text == nil || s.Value < text.Addr || s.Value+uint64(n) > text.Addr+text.Size {
			t.Fatalf("%s: %s at %#x not in .text", path, name, s.Value)
		}
		b := make([]byte, n)
		if _, err := text.ReadAt(b, int64(s.Value-text.Addr)); err != nil {
			t.Fatal(err)
		}
		return s.Value, b
	}
	t.Fatalf("%s: no symbol %s", path, name)
	return 0, nil
}

// Every layout shifts the program's functions by exactly its pad, with
// their code unchanged.
func TestPadShiftsCode(t *testing.T) {
	cc := testutil.RequireTool(t, "cc")
	dir := t.TempDir()
	src := filepath.Join(dir, "prog.c")
	prog := `#include <stdio.h>
__attribute__((noinline)) static int loop(int n) { int s = 0; for (int i = 0; i < n; i++) s += i * i; return s; }
int main(int argc, char **argv) { (void)argv; printf("%d\n", loop(argc * 1000)); return 0; }
`
	if err := os.WriteFile(src, []byte(prog), 0o666); err != nil {
		t.Fatal(err)
	}
	pad, _ := filepath.Abs("../../progs/pad.c")
	var base uint64
	var code []byte
	for i, p := range layoutPads {
		exe := filepath.Join(dir, fmt.Sprintf("prog%d", p))
		args := []string{"-O2", "-o", exe, src}
		if i > 0 {
			args = []string{"-O2", fmt.Sprintf("-DBENCH_PAD=%d", p), "-o", exe, pad, src}
		}
		if o, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", cc, args, err, o)
		}
		if o, err := exec.Command(exe).Output(); err != nil || string(o) != "332833500\n" {
			t.Fatalf("%s: %q, %v", exe, o, err)
		}
		a, c := funcCode(t, exe, "loop", 32)
		if i == 0 {
			base, code = a, c
			continue
		}
		if a-base != uint64(p) {
			t.Errorf("pad %d: loop at %#x, %d bytes after the unpadded program's %#x", p, a, a-base, base)
		}
		if string(c) != string(code) {
			t.Errorf("pad %d: loop's code changed", p)
		}
	}
	// A pad that is not a multiple of the functions' alignment is refused.
	if err := exec.Command(cc, "-c", "-DBENCH_PAD=100", "-o", filepath.Join(dir, "bad.o"), pad).Run(); err == nil {
		t.Error("pad.c compiled with BENCH_PAD=100")
	}
}

func TestLayoutCells(t *testing.T) {
	// Rounds 0..6 at 3 layouts: layout 0 has rounds 0, 3, 6; 1 has 1, 4; 2 has 2, 5.
	v := []float64{1, 10, 100, 3, 20, 200, 2}
	if got, want := layoutCells(v, 3), "2.0 / 15.0 / 150.0"; got != want {
		t.Errorf("layoutCells = %q, want %q", got, want)
	}
	if got, want := layoutCells(v[:2], 3), "1.0 / 10.0 / -"; got != want {
		t.Errorf("layoutCells = %q, want %q", got, want)
	}
	// keep takes rounds 1, 3 and 4: layout 0 is left with round 3, layout 2 with none.
	m := layoutMedians(v, 3, func(r int) bool { return r == 1 || r == 3 || r == 4 })
	if len(m) != 3 || m[0] != 3 || m[1] != 15 || !math.IsNaN(m[2]) {
		t.Errorf("layoutMedians with keep = %v, want [3 15 NaN]", m)
	}
	if got, want := intList([]int{0, 736, 1504}), "0, 736 and 1504"; got != want {
		t.Errorf("intList = %q, want %q", got, want)
	}
	if got := intList([]int{0}); got != "0" {
		t.Errorf("intList = %q", got)
	}
}
