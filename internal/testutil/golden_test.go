package testutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDiffEqual(t *testing.T) {
	if d := Diff("a", "b", "x\ny\n", "x\ny\n"); d != "" {
		t.Fatalf("Diff of equal inputs = %q, want empty", d)
	}
}

func TestDiffChange(t *testing.T) {
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n"
	b := "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n11\n12\n13\n14\n"
	got := Diff("want", "got", a, b)
	want := `--- want
+++ got
@@ -2 +2 @@
 2
 3
 4
-5
+five
 6
 7
 8
@@ -11 +11 @@
 11
 12
 13
+14
`
	if got != want {
		t.Fatalf("Diff =\n%s\nwant\n%s", got, want)
	}
}

func TestDiffNoFinalNewline(t *testing.T) {
	got := Diff("a", "b", "x\n", "x")
	if !strings.Contains(got, "-x\n") || !strings.Contains(got, "+x\\ (no newline at end)") {
		t.Fatalf("Diff = %q", got)
	}
}

// fakeTB records failures so Golden's failure path can be tested.
type fakeTB struct {
	testing.TB
	failed bool
	msg    string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Errorf(format string, args ...any) {
	f.failed = true
	f.msg = format
}
func (f *fakeTB) Fatalf(format string, args ...any) { f.Errorf(format, args...) }

func TestGolden(t *testing.T) {
	if *Update {
		t.Skip("not meaningful with -update")
	}
	path := filepath.Join(t.TempDir(), "g.txt")
	if err := os.WriteFile(path, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	Golden(t, path, []byte("hello\n"))

	f := &fakeTB{TB: t}
	Golden(f, path, []byte("bye\n"))
	if !f.failed {
		t.Fatal("Golden accepted a mismatch")
	}
	f = &fakeTB{TB: t}
	Golden(f, filepath.Join(t.TempDir(), "missing.txt"), []byte("x"))
	if !f.failed {
		t.Fatal("Golden accepted a missing file")
	}
}
