package tree

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// roundOfWork matches a reference to a numbered round of work on the
// project (the word "session" and a number), which means nothing to a reader
// of the tree: code, tests and docs cite dates or commits instead.
var roundOfWork = regexp.MustCompile(`(?i)\bsessions? [0-9]`)

// sourceExts are the files read: everything written by hand but data.
var sourceExts = map[string]bool{".go": true, ".md": true, ".c": true, ".h": true, ".cpp": true,
	".f90": true, ".f": true, ".sh": true, ".mk": true, ".txt": true}

func TestNoRoundsOfWork(t *testing.T) {
	root := moduleRoot(t)
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || rel == "build" || d.Name() == "fuzz") {
				return filepath.SkipDir
			}
			return nil
		}
		if !sourceExts[filepath.Ext(path)] && d.Name() != "Makefile" {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		n++
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for line := 1; sc.Scan(); line++ {
			if m := roundOfWork.FindString(sc.Text()); m != "" {
				t.Errorf("%s:%d: %q: cite a date or a commit, not a round of work", rel, line, m)
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Errorf("only %d files read under %s", n, root)
	}
	// What it matches (spelt in two pieces, so that this file passes).
	for s, want := range map[string]bool{
		"Sess" + "ion 15 (2026-11-25)":           true,
		"as measured in sess" + "ions 6-9":       true,
		"MPI_Session_init 2, MPI_ERR_SESSION 75": false,
		"the sessions model":                     false,
	} {
		if got := roundOfWork.MatchString(s); got != want {
			t.Errorf("roundOfWork.MatchString(%q) = %v, want %v", s, got, want)
		}
	}
}
