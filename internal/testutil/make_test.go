package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestMakeTestRules: make test and make gotest export CI=true whatever the
// caller's environment (so nothing skips), and pass the tests an absolute
// build directory for a relative or an absolute BUILD. go is replaced by a
// script that prints what it was given.
func TestMakeTestRules(t *testing.T) {
	mk := RequireTool(t, "make")
	_, file, _, _ := runtime.Caller(0)
	repo := filepath.Join(filepath.Dir(file), "..", "..")
	fake := t.TempDir()
	script := "#!/bin/sh\necho \"go: CI=$CI MPISCOPE_BUILD=$MPISCOPE_BUILD $*\"\n"
	if err := os.WriteFile(filepath.Join(fake, "go"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CI=") && !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "MAKEFLAGS=") && !strings.HasPrefix(kv, "MFLAGS=") {
			env = append(env, kv)
		}
	}
	env = append(env, "PATH="+fake+string(os.PathListSeparator)+os.Getenv("PATH"))
	abs := filepath.Join(t.TempDir(), "b")
	for build, want := range map[string]string{
		"rel/b": filepath.Join(repo, "rel", "b"),
		abs:     abs,
	} {
		cmd := exec.Command(mk, "-s", "-C", repo, "gotest", "BUILD="+build)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make gotest BUILD=%s: %v\n%s", build, err, out)
		}
		line := "go: CI=true MPISCOPE_BUILD=" + want + " test "
		if !strings.Contains(string(out), line) {
			t.Errorf("make gotest BUILD=%s ran\n%s\nwant a line starting %q", build, out, line)
		}
	}
	// make test: its target-specific CI (the same line exports it).
	cmd := exec.Command(mk, "-pn", "-C", repo, "test")
	cmd.Env = env
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "\ntest: CI = true\n") {
		t.Errorf("make -p: no target-specific CI = true for test")
	}
}
