package interpose

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/mpiscope/mpiscope/profile"
)

// withUmask runs fn with the process umask set to m.
func withUmask(m int, fn func()) {
	old := syscall.Umask(m)
	defer syscall.Umask(old)
	fn()
}

// TestCreateJobDirNoClobber: an existing directory, a symlink to a
// directory and a dangling symlink at the wanted name are all left alone;
// the job gets name-2, name-3, ... and its mode follows the umask.
func TestCreateJobDirNoClobber(t *testing.T) {
	root := t.TempDir()
	want := filepath.Join(root, "job")
	if err := os.Mkdir(want, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(want, "keep"), []byte("x"), 0o644)
	target := filepath.Join(root, "elsewhere")
	os.Mkdir(target, 0o755)
	if err := os.Symlink(target, want+"-2"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "missing"), want+"-3"); err != nil {
		t.Fatal(err)
	}
	withUmask(0o027, func() {
		dir, warn, err := createJobDir(want)
		if err != nil || warn != "" {
			t.Fatalf("createJobDir: %q %q %v", dir, warn, err)
		}
		if dir != want+"-4" {
			t.Errorf("got %s, want %s-4", dir, want)
		}
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o750 {
			t.Errorf("%s: %v %v", dir, fi.Mode(), err)
		}
	})
	if b, err := os.ReadFile(filepath.Join(want, "keep")); err != nil || string(b) != "x" {
		t.Errorf("existing job directory touched: %q %v", b, err)
	}
	for _, d := range []string{target, filepath.Join(root, "missing")} {
		if ents, _ := os.ReadDir(d); len(ents) != 0 {
			t.Errorf("%s written through a symlink", d)
		}
	}
	if _, err := os.Lstat(filepath.Join(root, "missing")); err == nil {
		t.Errorf("dangling symlink followed")
	}
}

// TestCreateJobDirFallback: when the parent cannot be created, the job goes
// to the temporary directory with a warning saying so.
func TestCreateJobDirFallback(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "file")
	os.WriteFile(file, nil, 0o644)
	t.Setenv("TMPDIR", t.TempDir())
	dir, warn, err := createJobDir(filepath.Join(file, "sub", "job"))
	if err != nil || warn == "" || filepath.Dir(dir) != os.TempDir() {
		t.Errorf("got %q, %q, %v", dir, warn, err)
	}
}

// TestWriteFileSymlink: profile.WriteFile replaces a symlink planted at the
// target instead of writing through it, and the file's mode follows the
// umask.
func TestWriteFileSymlink(t *testing.T) {
	root := t.TempDir()
	victim := filepath.Join(root, "victim")
	os.WriteFile(victim, []byte("precious"), 0o600)
	path := profile.RankFile(filepath.Join(root, "job"), 3)
	os.MkdirAll(filepath.Dir(path), 0o777)
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	p := &profile.Profile{Meta: profile.Meta{NumRanks: 4}, Ranks: []profile.Rank{{Rank: 3, State: "signal"}}}
	withUmask(0o077, func() {
		if err := profile.WriteFile(path, p); err != nil {
			t.Fatal(err)
		}
	})
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Errorf("symlink target overwritten: %q", b)
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v %v", path, fi.Mode(), err)
	}
	q, _, err := profile.Load(path)
	if err != nil || len(q.Ranks) != 1 || q.Ranks[0].Rank != 3 {
		t.Errorf("reading back: %v %+v", err, q)
	}
	withUmask(0o022, func() {
		if err := profile.WriteFile(path, p); err != nil {
			t.Fatal(err)
		}
	})
	if fi, _ := os.Lstat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v with umask 022", fi.Mode())
	}
}
