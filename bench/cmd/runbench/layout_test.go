package main

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// symAddr is the address of symbol name in the ELF file path.
func symAddr(t *testing.T, path, name string) uint64 {
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
	for _, s := range syms {
		if s.Name == name {
			return s.Value
		}
	}
	t.Fatalf("%s: no symbol %s", path, name)
	return 0
}

// Every layout shifts the program's functions by exactly its pad, with
// their code unchanged.
func TestPadShiftsCode(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no C compiler in CI")
		}
		t.Skip("no C compiler")
	}
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
		a := symAddr(t, exe, "loop")
		c := textAt(t, exe, a, 32)
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

// textAt is n bytes of path's code at address a.
func textAt(t *testing.T, path string, a uint64, n int) []byte {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(".text")
	if s == nil || a < s.Addr || a+uint64(n) > s.Addr+s.Size {
		t.Fatalf("%s: %#x not in .text", path, a)
	}
	b := make([]byte, n)
	if _, err := s.ReadAt(b, int64(a-s.Addr)); err != nil {
		t.Fatal(err)
	}
	return b
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
	if got, want := intList([]int{0, 736, 1504}), "0, 736 and 1504"; got != want {
		t.Errorf("intList = %q, want %q", got, want)
	}
	if got := intList([]int{0}); got != "0" {
		t.Errorf("intList = %q", got)
	}
}
