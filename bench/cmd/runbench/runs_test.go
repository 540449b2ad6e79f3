package main

import "testing"

// TestCheckLevels: a stack configuration's run is refused when a level of
// the reference wrapper did not run, counted nothing while on, or counted
// calls while off (bench/progs/refwrap.c's REFWRAP lines on stderr).
func TestCheckLevels(t *testing.T) {
	for _, c := range []struct {
		cfg    string
		stderr string
		ok     bool
	}{
		{"stack2", "REFWRAP ref1 240001\nREFWRAP ref2 240001\n", true},
		{"stack2", "REFWRAP ref1 240001\n", false},                     // the second level did not load
		{"stack1", "REFWRAP ref1 0\n", false},                          // on, but no call reached it
		{"stack1-off", "REFWRAP ref1 0\n", true},                       // off: counts nothing
		{"stack1-off", "REFWRAP ref1 12\n", false},                     // off, yet counted
		{"refwrap", "mpiscope: warning\nREFWRAP refwrap 5\n", true},    // preloaded alone
		{"refwrap", "", false},                                         // not preloaded
		{"profile", "", true},                                          // no level to check
		{"stack1", "REFWRAP ref1 9\nREFWRAP ref1 0\n", false},          // the last line counts
		{"stack1", "xREFWRAP ref1 9\n", false},                         // not a REFWRAP line
		{"stack1", "REFWRAP ref1 9 extra\n", false},                    // nor this
		{"stack1", "REFWRAP ref2 9\n", false},                          // another level
		{"stack2", "REFWRAP ref2 240001\nREFWRAP ref1 240001\n", true}, // any order
		{"stack1-off", "REFWRAP ref1 0\nREFWRAP ref2 0\n", true},       // an extra level is not checked
		{"stack1", "REFWRAP ref1 -1\n", false},                         // a negative count is not a count
		{"stack1", "REFWRAP ref1 many\n", false},                       // nor is a word
		{"stack1", "REFWRAP ref1 1\r\n", true},                         // CRLF
	} {
		err := configNamed(c.cfg).checkLevels(c.stderr)
		if (err == nil) != c.ok {
			t.Errorf("%s with %q: error %v, want ok %v", c.cfg, c.stderr, err, c.ok)
		}
	}
}
