package testutil

import (
	"os"
	"os/exec"
	"testing"
)

// InCI reports whether tests may not skip: CI=true, which `make test`
// exports. Every test that would skip for want of something the set-up
// installs (an MPI, a build, a tool) asks SkipOrFail, so that in CI a
// missing or stale prerequisite fails the run instead of passing it silently.
func InCI() bool { return os.Getenv("CI") == "true" }

// SkipOrFail skips the test, or fails it when InCI.
func SkipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	if InCI() {
		t.Fatalf("CI=true and: "+format, args...)
		return
	}
	t.Skipf(format, args...)
}

// RequireTool returns the path of the program tool, skipping the test (or
// failing it when InCI) when it is not installed.
func RequireTool(t testing.TB, tool string) string {
	t.Helper()
	path, err := exec.LookPath(tool)
	if err != nil {
		SkipOrFail(t, "%s not installed (scripts/deps.sh installs it): %v", tool, err)
	}
	return path
}
