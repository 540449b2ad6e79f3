package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A library mapped by a running program must keep its pages when runbench
// makes it anew: replaceFile renames a new file over it.
func TestReplaceFileKeepsMappings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lib.so")
	old := strings.Repeat("old!", 4096)
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := syscall.Mmap(int(f.Fd()), 0, len(old), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	if err := replaceFile(path, func(tmp string) error { return os.WriteFile(tmp, []byte("new"), 0o644) }); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "new" {
		t.Errorf("%s holds %q, want %q", path, got, "new")
	}
	// Touching the last page would raise SIGBUS had the file been
	// truncated in place.
	if string(m[len(m)-4:]) != "old!" || string(m[:4]) != "old!" {
		t.Errorf("the old mapping reads %q...%q", m[:4], m[len(m)-4:])
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Errorf("%d files left in the directory, want 1", len(ents))
	}
}

func TestReplaceFileFailureKeepsOld(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lib.so")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := replaceFile(path, func(tmp string) error {
		os.WriteFile(tmp, []byte("half"), 0o644)
		return os.ErrInvalid
	})
	if err != os.ErrInvalid {
		t.Fatalf("replaceFile: %v, want %v", err, os.ErrInvalid)
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("%s holds %q after a failed build, want %q", path, got, "old")
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Errorf("%d files left in the directory, want 1", len(ents))
	}
}

// A second runbench on the same build directory stops at once.
func TestLockBench(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lockBench(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockBench(dir); err == nil || !strings.Contains(err.Error(), "another runbench is running") {
		t.Errorf("second lockBench: %v, want another runbench is running", err)
	}
	unlock()
	unlock2, err := lockBench(dir)
	if err != nil {
		t.Fatalf("lockBench after unlock: %v", err)
	}
	unlock2()
}

// The defaults are make bench's: 10 overhead rounds, 5 in-process rounds
// of 13 cycles each, every layout.
func TestParseOptions(t *testing.T) {
	o, err := parseOptions(nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.rounds != 10 || o.abRounds != 5 || o.abCycles != 13 || o.layouts != len(layoutPads) || o.synthRanks != 100000 ||
		o.only != "overhead,ab,memory,scale,synth,tracesynth,unwind,channel,depth" || o.depthRounds != 5 || o.depthCycles != 11 || o.traceEvents != 100_000_000 || o.traceRanks != 8 || o.scaleSet ||
		o.analyzeIters != "500,5000" || o.stencilSide != "256" || o.stencilIters != "1000" {
		t.Errorf("defaults: %+v", *o)
	}
	o, err = parseOptions([]string{"-scale-np", "2,4", "-ab-cycles", "3"})
	if err != nil || !o.scaleSet || o.scaleNP != "2,4" || o.abCycles != 3 {
		t.Errorf("-scale-np 2,4 -ab-cycles 3: %+v, %v", o, err)
	}
	for _, bad := range [][]string{{"-ab-cycles", "0"}, {"-depth-rounds", "0"}, {"-depth-cycles", "0"}} {
		if _, err := parseOptions(bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
