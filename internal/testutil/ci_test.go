package testutil

import (
	"fmt"
	"testing"
)

// skipTB records whether SkipOrFail skipped or failed.
type skipTB struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (s *skipTB) Helper() {}
func (s *skipTB) Skipf(format string, args ...any) {
	s.skipped, s.msg = true, fmt.Sprintf(format, args...)
}
func (s *skipTB) Fatalf(format string, args ...any) {
	s.failed, s.msg = true, fmt.Sprintf(format, args...)
}

// TestSkipOrFail: with CI=true a missing prerequisite fails the test, with
// the reason; otherwise it skips.
func TestSkipOrFail(t *testing.T) {
	for _, c := range []struct {
		ci         string
		skip, fail bool
		msg        string
	}{
		{"true", false, true, "CI=true and: no mpicc.x"},
		{"", true, false, "no mpicc.x"},
		{"false", true, false, "no mpicc.x"},
	} {
		t.Setenv("CI", c.ci)
		s := &skipTB{TB: t}
		SkipOrFail(s, "no %s", "mpicc.x")
		if s.skipped != c.skip || s.failed != c.fail || s.msg != c.msg {
			t.Errorf("CI=%q: skipped %v failed %v %q; want %v %v %q", c.ci, s.skipped, s.failed, s.msg, c.skip, c.fail, c.msg)
		}
		s = &skipTB{TB: t}
		RequireTool(s, "no-such-tool-mpiscope")
		if s.skipped != c.skip || s.failed != c.fail {
			t.Errorf("CI=%q: RequireTool: skipped %v failed %v", c.ci, s.skipped, s.failed)
		}
	}
	s := &skipTB{TB: t}
	if RequireTool(s, "sh") == "" || s.skipped || s.failed {
		t.Errorf("RequireTool(sh): skipped %v failed %v", s.skipped, s.failed)
	}
}
