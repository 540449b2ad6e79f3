package main

import "testing"

// Rows from docs/performance.md (session 8, second run): MPICH's 64-byte
// ping-pong, and Open MPI's, whose `off` measured 17 ns below the
// pass-through build.
func TestABControls(t *testing.T) {
	for _, c := range []struct {
		noLib, ptProfile, ptOff, off float64
		want                         string
	}{
		{-1.0, 1.5, 1.0, 1.5, "ok"},
		{-0.3, -1.0, -0.2, -17.4, "fail (off 17.2 below pass-through)"},
		{0.4, -1.4, -2.1, -1.4, "ok"},
		{0.4, 3.5, -2.1, -1.4, "fail (pass-through: profile 3.5)"},
		{-3.2, 0, 0, 9, "fail (no library: profile -3.2)"},
	} {
		if got := abControls(c.noLib, c.ptProfile, c.ptOff, c.off); got != c.want {
			t.Errorf("abControls(%v, %v, %v, %v) = %q, want %q", c.noLib, c.ptProfile, c.ptOff, c.off, got, c.want)
		}
	}
}
