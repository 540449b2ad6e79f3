// Package testutil holds small helpers shared by mpiscope's tests.
//
// Golden files: a test renders some output and calls Golden with the path of
// the expected output. Running the test binary with -update rewrites the
// golden files instead of comparing:
//
//	go test ./internal/report -update
package testutil

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Update makes Golden rewrite golden files instead of comparing with them.
var Update = flag.Bool("update", false, "rewrite golden files with the current output")

// Golden compares got with the contents of the file at path. When the test
// binary runs with -update it writes got to path (creating directories as
// needed) and does not compare. On mismatch it reports a unified-style diff.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatalf("golden: %v", err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("golden: %v", err)
		}
		t.Logf("golden: updated %s", path)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden: %v (run the test with -update to create it)", err)
	}
	if bytes.Equal(want, got) {
		return
	}
	t.Errorf("golden: output differs from %s (run with -update to accept):\n%s",
		path, Diff(path, "got", string(want), string(got)))
}

// Diff returns a unified-style line diff of a (named aName) and b (named
// bName) with three lines of context, or "" if they are equal. Inputs too
// large for the quadratic algorithm are reported from the first differing line.
func Diff(aName, bName, a, b string) string {
	if a == b {
		return ""
	}
	al, bl := splitLines(a), splitLines(b)
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", aName, bName)
	const maxCells = 25_000_000
	if len(al)*len(bl) > maxCells {
		i := 0
		for i < len(al) && i < len(bl) && al[i] == bl[i] {
			i++
		}
		fmt.Fprintf(&sb, "(inputs too large to diff; first difference at line %d)\n", i+1)
		if i < len(al) {
			fmt.Fprintf(&sb, "-%s\n", al[i])
		}
		if i < len(bl) {
			fmt.Fprintf(&sb, "+%s\n", bl[i])
		}
		return sb.String()
	}
	ops := lcsOps(al, bl)
	writeHunks(&sb, ops, 3)
	return sb.String()
}

// splitLines splits s into lines, marking a missing final newline.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	if lines[len(lines)-1] == "" {
		return lines[:len(lines)-1]
	}
	lines[len(lines)-1] += "\\ (no newline at end)"
	return lines
}

type diffOp struct {
	kind   byte // ' ', '-', '+'
	text   string
	ai, bi int // 1-based line numbers in a and b at this op
}

// lcsOps computes an edit script from a to b via a longest common subsequence.
func lcsOps(a, b []string) []diffOp {
	n, m := len(a), len(b)
	// lcs[i][j] = LCS length of a[i:] and b[j:], stored row-major.
	lcs := make([]int32, (n+1)*(m+1))
	at := func(i, j int) int32 { return lcs[i*(m+1)+j] }
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			v := at(i+1, j)
			if a[i] == b[j] {
				v = at(i+1, j+1) + 1
			} else if w := at(i, j+1); w > v {
				v = w
			}
			lcs[i*(m+1)+j] = v
		}
	}
	var ops []diffOp
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, diffOp{' ', a[i], i + 1, j + 1})
			i++
			j++
		case i < n && (j == m || at(i+1, j) >= at(i, j+1)):
			ops = append(ops, diffOp{'-', a[i], i + 1, j + 1})
			i++
		default:
			ops = append(ops, diffOp{'+', b[j], i + 1, j + 1})
			j++
		}
	}
	return ops
}

// writeHunks prints the changed ops with ctx lines of context around them.
func writeHunks(sb *strings.Builder, ops []diffOp, ctx int) {
	for k := 0; k < len(ops); {
		if ops[k].kind == ' ' {
			k++
			continue
		}
		start := max(k-ctx, 0)
		// Extend the hunk while changes are within 2*ctx lines of each other.
		end := k
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(end+ctx, len(ops))
				break
			}
			end = run
		}
		fmt.Fprintf(sb, "@@ -%d +%d @@\n", ops[start].ai, ops[start].bi)
		for _, op := range ops[start:end] {
			fmt.Fprintf(sb, "%c%s\n", op.kind, op.text)
		}
		k = end
	}
}
