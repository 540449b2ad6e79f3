package interpose

import (
	"strings"
	"testing"
	"time"
)

// TestParseConfigDefaults: no MPISCOPE_* variable gives the documented
// defaults, no warning and no effective setting.
func TestParseConfigDefaults(t *testing.T) {
	c, eff, warns := ParseConfig([]string{"PATH=/bin", "HOME=/root", "MPISCOPEX=1"})
	if len(warns) != 0 || len(eff) != 0 {
		t.Fatalf("warnings %q, settings %v", warns, eff)
	}
	if !c.Enable || !c.Summary || !c.Report || c.Quiet || c.Top != 20 || c.Timer != "auto" ||
		c.SnapshotEvry != 0 || c.SnapshotSignal != "USR1" || c.PcontrolIPM || c.Out != "" {
		t.Errorf("defaults: %+v", c)
	}
}

// TestParseConfigBad: every bad value warns once, naming the variable, and
// falls back to the default; unknown names warn once each; nothing panics.
func TestParseConfigBad(t *testing.T) {
	env := []string{
		"MPISCOPE_TOP=abc",                          // malformed number
		"MPISCOPE_TOP=99999999999999999999999",      // overflows (last one wins)
		"MPISCOPE_ENABLE=maybe",                     // not a boolean
		"MPISCOPE_TIMER=rdtscp",                     // not a choice
		"MPISCOPE_SNAPSHOT_EVERY=-5s",               // negative
		"MPISCOPE_TRACE_BUFFER=1T",                  // impossible size
		"MPISCOPE_SNAPSHOT_SIGNAL=TERM",             // never taken over
		"MPISCOPE_QUIET=",                           // empty
		"MPISCOPE_SUMARY=0",                         // misspelt
		"MPISCOPE_NOPE=1",                           // unknown
		"MPISCOPE_NOPE=2",                           // same unknown again
		"MPISCOPE_FAULT=none", "MPISCOPE_LIBDIR=/x", // reserved: no warning
	}
	c, eff, warns := ParseConfig(env)
	want := []string{"MPISCOPE_ENABLE", "MPISCOPE_QUIET", "MPISCOPE_TIMER", "MPISCOPE_TOP",
		"MPISCOPE_TRACE_BUFFER", "MPISCOPE_SNAPSHOT_EVERY", "MPISCOPE_SNAPSHOT_SIGNAL",
		"MPISCOPE_NOPE", "MPISCOPE_SUMARY"}
	if len(warns) != len(want) {
		t.Errorf("%d warnings, want %d:\n%s", len(warns), len(want), strings.Join(warns, "\n"))
	}
	for _, name := range want {
		n := 0
		for _, w := range warns {
			if strings.HasPrefix(w, name+"=") || strings.HasPrefix(w, name+" ") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: %d warnings, want 1:\n%s", name, n, strings.Join(warns, "\n"))
		}
	}
	if len(eff) != 0 {
		t.Errorf("bad values taken as settings: %v", eff)
	}
	if !c.Enable || c.Top != 20 || c.Timer != "auto" || c.SnapshotEvry != 0 || c.SnapshotSignal != "USR1" ||
		c.TraceBuffer != 4<<20 || c.Quiet || !c.Summary {
		t.Errorf("fallbacks: %+v", c)
	}
}

// TestParseConfigSafety: the crash-safety settings.
func TestParseConfigSafety(t *testing.T) {
	for _, tc := range []struct {
		env    string
		sig    string
		every  time.Duration
		warned bool
	}{
		{"MPISCOPE_SNAPSHOT_SIGNAL=none", "", 0, false},
		{"MPISCOPE_SNAPSHOT_SIGNAL=off", "", 0, false},
		{"MPISCOPE_SNAPSHOT_SIGNAL=SIGUSR2", "USR2", 0, false},
		{"MPISCOPE_SNAPSHOT_SIGNAL=usr1", "USR1", 0, false},
		{"MPISCOPE_SNAPSHOT_SIGNAL=hup", "HUP", 0, false},
		{"MPISCOPE_SNAPSHOT_SIGNAL=KILL", "USR1", 0, true},
		{"MPISCOPE_SNAPSHOT_SIGNAL=INT", "USR1", 0, true},
		{"MPISCOPE_SNAPSHOT_SIGNAL=10", "USR1", 0, true},
		{"MPISCOPE_SNAPSHOT_EVERY=10m", "USR1", 10 * time.Minute, false},
		{"MPISCOPE_SNAPSHOT_EVERY=0", "USR1", 0, false},
		{"MPISCOPE_SNAPSHOT_EVERY=1ns", "USR1", 0, true},
		{"MPISCOPE_SNAPSHOT_EVERY=999ms", "USR1", 0, true},
		{"MPISCOPE_SNAPSHOT_EVERY=1s", "USR1", time.Second, false},
		{"MPISCOPE_SNAPSHOT_EVERY=soon", "USR1", 0, true},
	} {
		c, _, warns := ParseConfig([]string{tc.env})
		if c.SnapshotSignal != tc.sig || c.SnapshotEvry != tc.every || (len(warns) > 0) != tc.warned {
			t.Errorf("%s: signal %q every %v warnings %q", tc.env, c.SnapshotSignal, c.SnapshotEvry, warns)
		}
	}
}

// FuzzParseConfig: no environment makes ParseConfig panic, and each
// variable yields at most one warning.
func FuzzParseConfig(f *testing.F) {
	f.Add("MPISCOPE_TOP", "5")
	f.Add("MPISCOPE_SNAPSHOT_EVERY", "1h")
	f.Add("MPISCOPE_TRACE_BUFFER", "64K")
	f.Add("MPISCOPE_SNAPSHOT_SIGNAL", "usr2")
	f.Add("MPISCOPE_TRACE_MAX", "512M")
	f.Add("MPISCOPE_TRACE_EXCLUDE", "default,MPI_Iprobe")
	f.Add("MPISCOPE_X", "\x00")
	f.Fuzz(func(t *testing.T, k, v string) {
		_, _, warns := ParseConfig([]string{k + "=" + v})
		if len(warns) > 1 {
			t.Fatalf("%d warnings for one variable: %q", len(warns), warns)
		}
	})
}

// TestParseConfigEnable: MPISCOPE_ENABLE takes a boolean or never, which
// is a setting, not a bad value (the run itself never starts under it:
// lifecycle.c), and "Never" is a bad value like any other.
func TestParseConfigEnable(t *testing.T) {
	for _, c := range []struct {
		v      string
		enable bool
		warns  int
	}{{"1", true, 0}, {"0", false, 0}, {"never", false, 0}, {"Never", true, 1}} {
		cfg, _, warns := ParseConfig([]string{"MPISCOPE_ENABLE=" + c.v})
		if cfg.Enable != c.enable || len(warns) != c.warns {
			t.Errorf("MPISCOPE_ENABLE=%s: Enable %v, warnings %q; want %v and %d", c.v, cfg.Enable, warns, c.enable, c.warns)
		}
	}
}

// TestParseConfigTraceBounds: MPISCOPE_TRACE_MAX (a size, default 1G, 0 for
// no bound) and MPISCOPE_TRACE_EXCLUDE (MPI_ names, default, none).
func TestParseConfigTraceBounds(t *testing.T) {
	c, _, warns := ParseConfig(nil)
	if c.TraceMax != 1<<30 || strings.Join(c.TraceExclude, ",") != "default" || len(warns) != 0 {
		t.Errorf("defaults: max %d exclude %q warnings %q", c.TraceMax, c.TraceExclude, warns)
	}
	for _, tc := range []struct {
		env     string
		max     int64
		exclude string
		warned  bool
	}{
		{"MPISCOPE_TRACE_MAX=0", 0, "default", false},
		{"MPISCOPE_TRACE_MAX=2M", 2 << 20, "default", false},
		{"MPISCOPE_TRACE_MAX=64G", 64 << 30, "default", false},
		{"MPISCOPE_TRACE_MAX=100K", 1 << 30, "default", true},
		{"MPISCOPE_TRACE_MAX=-1", 1 << 30, "default", true},
		{"MPISCOPE_TRACE_MAX=lots", 1 << 30, "default", true},
		{"MPISCOPE_TRACE_EXCLUDE=none", 1 << 30, "", false},
		{"MPISCOPE_TRACE_EXCLUDE=NONE", 1 << 30, "", false},
		{"MPISCOPE_TRACE_EXCLUDE=MPI_Iprobe", 1 << 30, "MPI_Iprobe", false},
		{"MPISCOPE_TRACE_EXCLUDE=default, MPI_Iprobe,MPI_Test", 1 << 30, "default,MPI_Iprobe,MPI_Test", false},
		{"MPISCOPE_TRACE_EXCLUDE=", 1 << 30, "default", true},
		{"MPISCOPE_TRACE_EXCLUDE=MPI_Wtime,,", 1 << 30, "default", true},
		{"MPISCOPE_TRACE_EXCLUDE=Wtime", 1 << 30, "default", true},
		{"MPISCOPE_TRACE_EXCLUDE=MPI_", 1 << 30, "default", true},
		{"MPISCOPE_TRACE_EXCLUDE=none,MPI_Send", 1 << 30, "default", true},
		{"MPISCOPE_TRACE_EXCLUDE=MPI_Send;MPI_Recv", 1 << 30, "default", true},
	} {
		c, _, warns := ParseConfig([]string{tc.env})
		if c.TraceMax != tc.max || strings.Join(c.TraceExclude, ",") != tc.exclude || (len(warns) > 0) != tc.warned {
			t.Errorf("%s: max %d exclude %q warnings %q", tc.env, c.TraceMax, c.TraceExclude, warns)
		}
	}
}
