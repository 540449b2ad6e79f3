package trace_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/internal/testutil"
	"github.com/mpiscope/mpiscope/internal/trace"
	"github.com/mpiscope/mpiscope/profile"
)

// tscInvariant reports whether the CPU's TSC is invariant (constant_tsc and
// nonstop_tsc in /proc/cpuinfo): the condition under which
// MPISCOPE_TIMER=auto uses it.
func tscInvariant(t *testing.T) bool {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "flags") {
			return strings.Contains(l, " constant_tsc") && strings.Contains(l, " nonstop_tsc")
		}
	}
	return false
}

// TestTraceTimer: the trace header names the clock its ticks come from, the
// one the profile names (the header was written before the clock was
// chosen and said "clock_gettime" over TSC ticks), and converted times are
// right: sleep.c's ranks sleep 200 ms between two barriers, which the OTF2
// archive (1 ns clock ticks, dated within the run) shows as 200 ms.
func TestTraceTimer(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		for _, timer := range []string{"auto", "clock"} {
			t.Run(timer, func(t *testing.T) {
				before := time.Now()
				job, res := run(t, f, "sleep.c", 2, map[string]string{"MPISCOPE_TRACE": "1", "MPISCOPE_TIMER": timer})
				after := time.Now()
				slept := map[string]int64{}
				for _, g := range regexp.MustCompile(`rank (\d) slept (\d+)`).FindAllStringSubmatch(res.Stdout, -1) {
					slept[g[1]], _ = strconv.ParseInt(g[2], 10, 64)
				}
				if len(slept) != 2 {
					t.Fatalf("program output %q", res.Stdout)
				}
				p, _, err := profile.Load(job)
				if err != nil {
					t.Fatal(err)
				}
				want := "clock_gettime"
				if timer == "auto" && tscInvariant(t) {
					want = "tsc"
				}
				if p.Meta.Timer != want {
					t.Errorf("profile timer %q, want %q", p.Meta.Timer, want)
				}
				j, err := trace.OpenJob(job)
				if err != nil {
					t.Fatal(err)
				}
				if len(j.Ranks) != 2 {
					t.Fatalf("%d rank traces, want 2", len(j.Ranks))
				}
				for _, r := range j.Ranks {
					if r.Header.Timer != want {
						t.Errorf("rank %d: trace header timer %q, want %q (the profile's)", r.Header.Rank, r.Header.Timer, want)
					}
				}

				// Converted as users do (callsites resolved).
				bin := filepath.Join(mpitest.BuildDir(t), "bin", "mpiscope")
				if b, err := exec.Command(bin, "convert", "--otf2", job).CombinedOutput(); err != nil {
					t.Fatalf("mpiscope convert --otf2: %v\n%s", err, b)
				}
				out := filepath.Join(job, "otf2")
				defs := otf2PrintDefs(t, out)
				m := regexp.MustCompile(`CLOCK_PROPERTIES\s+Ticks per Seconds: (\d+), Global Offset: 0, Length: (\d+), Date: ([0-9-]+ [0-9:.]+)`).FindStringSubmatch(defs)
				if m == nil {
					t.Fatalf("no clock properties:\n%s", defs)
				}
				if m[1] != "1000000000" {
					t.Errorf("%s ticks per second, want 1000000000", m[1])
				}
				date, err := time.Parse("2006-01-02 15:04:05.999999999", m[3])
				if err != nil {
					t.Fatal(err)
				}
				if date.Before(before.Add(-time.Second)) || date.After(after) {
					t.Errorf("clock date %v outside the run (%v to %v)", date, before, after)
				}
				length, _ := strconv.ParseInt(m[2], 10, 64)
				if length < 180e6 || length > 60e9 {
					t.Errorf("trace length %d ns for a run of 200 ms between barriers", length)
				}

				// Per rank: the end of sleep.c's first barrier and the start
				// of its second.
				first, second := barrierLines(t)
				leave := map[string]int64{}
				enter := map[string]int64{}
				re := regexp.MustCompile(`^CALLING_CONTEXT_(ENTER|LEAVE)\s+(\d+)\s+(\d+)\s+Calling Context: "MPI_Barrier@sleep\.c:(\d+)"`)
				for _, l := range strings.Split(otf2Print(t, out), "\n") {
					g := re.FindStringSubmatch(l)
					if g == nil {
						continue
					}
					ts, _ := strconv.ParseInt(g[3], 10, 64)
					switch {
					case g[1] == "LEAVE" && g[4] == first:
						leave[g[2]] = ts
					case g[1] == "ENTER" && g[4] == second:
						enter[g[2]] = ts
					}
				}
				for _, r := range []string{"0", "1"} {
					l, ok1 := leave[r]
					e, ok2 := enter[r]
					if !ok1 || !ok2 {
						t.Errorf("rank %s: barriers at sleep.c:%s and :%s not found in otf2-print", r, first, second)
						continue
					}
					// The program's own clock: from just after the first
					// barrier to just before the second (200 ms, more if the
					// machine is loaded).
					gap, own := time.Duration(e-l), time.Duration(slept[r])
					if own < 200*time.Millisecond || gap < own || gap > own+20*time.Millisecond {
						t.Errorf("rank %s: %v between the barriers in the OTF2 trace, the program slept %v: want that within 20 ms (10 %% of 200 ms)", r, gap, own)
					}
				}
			})
		}
	})
}

// barrierLines returns the lines of sleep.c's two MPI_Barrier calls.
func barrierLines(t *testing.T) (string, string) {
	b, err := os.ReadFile(mpitest.Testdata("trace/sleep.c"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "MPI_Barrier(") {
			lines = append(lines, strconv.Itoa(i+1))
		}
	}
	if len(lines) != 2 {
		t.Fatalf("sleep.c has %d MPI_Barrier lines, want 2", len(lines))
	}
	return lines[0], lines[1]
}

// otf2PrintDefs is otf2-print -G: the global definitions.
func otf2PrintDefs(t *testing.T, dir string) string {
	t.Helper()
	bin := testutil.RequireTool(t, "otf2-print")
	out, err := exec.Command(bin, "-G", filepath.Join(dir, "traces.otf2")).CombinedOutput()
	if err != nil || strings.Contains(string(out), "ERROR") {
		t.Fatalf("otf2-print -G: %v\n%s", err, out)
	}
	return string(out)
}
