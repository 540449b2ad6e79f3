package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/wrapgen"
)

// usageLines returns the command lines of the package comment's Usage.
func usageLines(t *testing.T) [][]string {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	var lines [][]string
	for _, l := range strings.Split(string(src), "\n") {
		if rest, ok := strings.CutPrefix(l, "//\tmpiwrapgen "); ok {
			lines = append(lines, strings.Fields(rest))
		}
	}
	return lines
}

// TestUsageLines runs every usage line of the package comment as written,
// but for its outputs (-o, -save), which go to a temporary directory, and
// DIR, a directory holding the saved answers of MPICH 4.0.2 under one
// prefix. The lines that probe an installed MPI (-mpicc) need its
// compiler.
func TestUsageLines(t *testing.T) {
	lines := usageLines(t)
	if len(lines) < 8 {
		t.Fatalf("%d usage lines found in main.go", len(lines))
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "DIR")
	os.Mkdir(dir, 0o777)
	for from, to := range map[string]string{
		"mpich-4.0.2.aux": "mpich-4.0.2.aux", "mpich-4.0.2.macros": "mpich-4.0.2.macros",
		"mpich-4.0.2.symbols": "mpich-4.0.2.symbols", "fortran-mpich-4.0.2.fsymbols": "mpich-4.0.2.fsymbols",
	} {
		b, err := os.ReadFile(filepath.Join(root, "internal/wrapgen/testdata", from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), b, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	for _, line := range lines {
		args := append([]string(nil), line...)
		for i := 1; i < len(args); i++ {
			switch args[i-1] {
			case "-o", "-save", "-qmpi":
				args[i] = filepath.Join(tmp, filepath.Base(args[i]))
			case "-from":
				if rest, ok := strings.CutPrefix(args[i], "DIR/"); ok {
					args[i] = filepath.Join(dir, rest)
				} else {
					args[i] = filepath.Join(root, args[i])
				}
			case "-mpicc":
				if _, err := exec.LookPath(args[i]); err != nil {
					t.Fatalf("mpiwrapgen %s: %s is not installed (make deps)", strings.Join(line, " "), args[i])
				}
			}
		}
		var out bytes.Buffer
		if err := wrapgen.Main(args, &out); err != nil {
			t.Errorf("mpiwrapgen %s: %v", strings.Join(line, " "), err)
			continue
		}
		for i := 1; i < len(args); i++ {
			if args[i-1] == "-o" {
				if fi, err := os.Stat(args[i]); err != nil || fi.Size() == 0 {
					t.Errorf("mpiwrapgen %s: no output in %s (%v)", strings.Join(line, " "), args[i], err)
				}
			}
		}
	}
}
