package main

import (
	"strings"
	"testing"
)

func TestParseUnwindRun(t *testing.T) {
	out := "first16 41000 18\nrdtsc2 18.95\ndepth 1 2.71 1\ndepth 4 7.85 4\ndepth 8 13.42 8\ndepth 16 22.18 16\nbacktrace8 1016.51\n"
	r, err := parseUnwindRun(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.RDTSC2 != 18.95 || r.Depth[8] != 13.42 || r.Depth[16] != 22.18 || r.Frames[16] != 16 || r.Backtrace != 1016.51 || r.First != 41000 || r.Decoded != 18 {
		t.Errorf("parsed %+v", r)
	}
	for _, bad := range []string{
		"", // nothing
		strings.Replace(out, "depth 8 13.42 8\n", "", 1),              // a depth missing
		strings.Replace(out, "depth 8 13.42 8", "depth 8 13.42 5", 1), // a walk that stopped short
		strings.Replace(out, "depth 4 7.85 4", "depth 4 x 4", 1),      // not a number
	} {
		if _, err := parseUnwindRun(bad); err == nil {
			t.Errorf("no error for %q", bad)
		}
	}
}
