package interpose

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mpiscope/mpiscope/profile"
)

// Config is the effective MPISCOPE_* configuration of a run. Bad values
// never stop the application: they produce a warning and the default.
type Config struct {
	Out         string // MPISCOPE_OUT: job directory ("" = ./mpiscope-<app>-<N>r-<time>)
	Enable      bool   // MPISCOPE_ENABLE: record from MPI_Init (else wait for Pcontrol(1))
	PcontrolIPM bool   // MPISCOPE_PCONTROL=ipm
	Timer       string // MPISCOPE_TIMER: auto, tsc, clock
	Summary     bool   // MPISCOPE_SUMMARY: rank 0 prints a summary at finalize
	Quiet       bool   // MPISCOPE_QUIET: write nothing to stdout or stderr
	Report      bool   // MPISCOPE_REPORT: write report.txt and report.html
	Top         int    // MPISCOPE_TOP: rows per table in report.txt
	Trace       bool   // MPISCOPE_TRACE: record an event trace from MPI_Init
	TraceBuffer int64  // MPISCOPE_TRACE_BUFFER: bytes per trace buffer (two per thread)
	TraceSkewNs int64  // MPISCOPE_TRACE_SKEW_NS: testing, shifts rank r's clock by r x this
	TracePack   string // MPISCOPE_TRACE_COMPRESS: when events are compressed: finalize, run or off
	TraceDirect bool   // MPISCOPE_TRACE_DIRECT: raw buffers go to the file in direct (O_DIRECT) writes
	TraceMax    int64  // MPISCOPE_TRACE_MAX: bytes of trace per rank, then tracing stops (0: no bound)
	Piggyback   bool   // MPISCOPE_PIGGYBACK: our header on every point-to-point message, online wait states (piggyback.go)
	PBStage     int    // MPISCOPE_PIGGYBACK_STAGE: sends of at most this many contiguous bytes are staged (piggyback.c)
	Analyze     bool   // MPISCOPE_ANALYZE: analyze the trace in the job at MPI_Finalize (analyze.go)
	AnalyzeMem  int64  // MPISCOPE_ANALYZE_MEM: bytes of records a rank holds at once in that analysis
	Depth       int    // MPISCOPE_DEPTH: frames of each call's call path (1: the callsite only; 0: auto, chosen at start; callpath.h)
	Compensate  bool   // MPISCOPE_COMPENSATE: overhead compensation, implies Piggyback (compensate.go)
	TestDelayNs int64  // MPISCOPE_TEST_DELAY_NS: testing, a busy delay in every recorded call
	// TestDelayRanks is MPISCOPE_TEST_DELAY_RANKS: the ranks TestDelayNs
	// applies to, nil for all.
	TestDelayRanks []int
	// TraceExclude is MPISCOPE_TRACE_EXCLUDE: functions left out of the
	// trace, "default" standing for the built-in list (trace_cgo.go).
	TraceExclude []string
	SnapshotEvry time.Duration // MPISCOPE_SNAPSHOT_EVERY: periodic snapshots (0 = none)
	// SnapshotSignal is MPISCOPE_SNAPSHOT_SIGNAL: the signal (a name from
	// snapshotSignals, without SIG) on which a rank writes a snapshot; ""
	// for none.
	SnapshotSignal string
}

// snapshotSignals are the signals MPISCOPE_SNAPSHOT_SIGNAL may name: ones
// whose default action is harmless to take over (never TERM, INT, KILL...).
var snapshotSignals = []string{"USR1", "USR2", "HUP", "WINCH"}

// minSnapshotEvery bounds MPISCOPE_SNAPSHOT_EVERY from below: a snapshot
// reads every table and writes a file.
const minSnapshotEvery = time.Second

// setting describes one variable: its default and how to apply a value.
type setting struct {
	name, def, doc string
	set            func(c *Config, v string) error
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("want 0 or 1")
}

// Settings lists every MPISCOPE_* variable, in the order the README gives them.
var Settings = []setting{
	{"MPISCOPE_OUT", "", "job directory; default ./mpiscope-<app>-<N>r-<YYYYmmdd-HHMMSS>, under Slurm ./mpiscope-<app>-<N>r-slurm<job>.<step>",
		func(c *Config, v string) error { c.Out = v; return nil }},
	{"MPISCOPE_ENABLE", "1", "record from MPI_Init (0: wait for MPI_Pcontrol(1); never: record and write nothing and ignore MPI_Pcontrol, the launcher not even loading the library)",
		func(c *Config, v string) (err error) {
			if v == "never" { // a valid value: under it the run does not start (lifecycle.c)
				c.Enable = false
				return nil
			}
			c.Enable, err = parseBool(v)
			return
		}},
	{"MPISCOPE_PCONTROL", "mpiscope", "Pcontrol convention: mpiscope or ipm",
		func(c *Config, v string) error {
			switch v {
			case "mpiscope", "default":
				c.PcontrolIPM = false
			case "ipm":
				c.PcontrolIPM = true
			default:
				return fmt.Errorf("want mpiscope or ipm")
			}
			return nil
		}},
	{"MPISCOPE_TIMER", "auto", "auto (TSC when invariant, else clock_gettime), tsc, clock",
		func(c *Config, v string) error {
			switch v {
			case "auto", "tsc", "clock":
				c.Timer = v
				return nil
			}
			return fmt.Errorf("want auto, tsc or clock")
		}},
	{"MPISCOPE_SUMMARY", "1", "rank 0 prints a short summary to stderr at MPI_Finalize",
		func(c *Config, v string) (err error) { c.Summary, err = parseBool(v); return }},
	{"MPISCOPE_QUIET", "0", "1: write nothing at all to stdout/stderr (warnings go to the report)",
		func(c *Config, v string) (err error) { c.Quiet, err = parseBool(v); return }},
	{"MPISCOPE_REPORT", "1", "write report.txt and report.html in the job directory",
		func(c *Config, v string) (err error) { c.Report, err = parseBool(v); return }},
	{"MPISCOPE_TOP", "20", "rows per table in report.txt",
		func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return fmt.Errorf("want a positive integer")
			}
			c.Top = n
			return nil
		}},
	{"MPISCOPE_TRACE", "0", "1: record an event trace from MPI_Init (MPI_Pcontrol(6)/(-6) start/stop it at run time)",
		func(c *Config, v string) (err error) { c.Trace, err = parseBool(v); return }},
	{"MPISCOPE_ANALYZE", "0", "1: analyze the trace inside the job at MPI_Finalize (wait states, critical path, delay costs; needs the trace; docs/analysis.md)",
		func(c *Config, v string) (err error) { c.Analyze, err = parseBool(v); return }},
	{"MPISCOPE_ANALYZE_MEM", "128M", "bytes of records each rank holds at once in the analysis in the job (K, M, G suffixes; at least 64K): beyond it the ranks exchange and match them in rounds, spilling to the temporary directory",
		func(c *Config, v string) error {
			n, err := parseSize(v)
			if err != nil || n < 64<<10 {
				return fmt.Errorf("want a size of at least 64K")
			}
			c.AnalyzeMem = n
			return nil
		}},
	{"MPISCOPE_TRACE_BUFFER", "4M", "size of each of a thread's two trace buffers (bytes; K, M, G suffixes)",
		func(c *Config, v string) error {
			n, err := parseSize(v)
			if err != nil || n < 64<<10 || n > 1<<30 {
				return fmt.Errorf("want a size from 64K to 1G")
			}
			c.TraceBuffer = n
			return nil
		}},
	{"MPISCOPE_TRACE_COMPRESS", "finalize", "when trace events are compressed: finalize (raw while the application runs, packed at MPI_Finalize), run (by the writer as buffers fill: smaller files if killed, more CPU taken from the ranks), off (left raw)",
		func(c *Config, v string) error {
			switch v {
			case "finalize", "run", "off":
				c.TracePack = v
				return nil
			}
			return fmt.Errorf("want finalize, run or off")
		}},
	{"MPISCOPE_TRACE_DIRECT", "1", "1: raw trace buffers go to the file in direct (O_DIRECT) writes, bypassing the page cache, which takes far less CPU from the rank's core; 0, or a file system that refuses them: ordinary writes",
		func(c *Config, v string) (err error) { c.TraceDirect, err = parseBool(v); return }},
	{"MPISCOPE_TRACE_MAX", "1G", "bytes of trace each rank may write (K, M, G suffixes; at least 1M; 0: no bound); beyond it tracing stops with a warning and profiling goes on",
		func(c *Config, v string) error {
			n, err := parseSize(v)
			if err != nil || (n != 0 && n < 1<<20) {
				return fmt.Errorf("want 0 or a size of at least 1M")
			}
			c.TraceMax = n
			return nil
		}},
	{"MPISCOPE_TRACE_EXCLUDE", "default", "functions left out of the trace (still profiled): a comma-separated list of MPI_ names; default: calls that move no data (MPI_Wtime, MPI_Wtick, MPI_Get_count, MPI_Get_processor_name, ...), which the list may name (default,MPI_Iprobe); none: trace every function",
		func(c *Config, v string) error {
			if strings.EqualFold(strings.TrimSpace(v), "none") {
				c.TraceExclude = nil
				return nil
			}
			var fns []string
			for _, f := range strings.Split(v, ",") {
				switch f = strings.TrimSpace(f); {
				case strings.EqualFold(f, "default"):
					fns = append(fns, "default")
				case validFnName(f):
					fns = append(fns, f)
				default:
					return fmt.Errorf("%q is not an MPI function name (MPI_Xxx), default or none", f)
				}
			}
			c.TraceExclude = fns
			return nil
		}},
	{"MPISCOPE_TRACE_SKEW_NS", "0", "testing only: pretend rank r's clock is r x this many ns ahead, as if each rank ran on its own host (checks clock correction)",
		func(c *Config, v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("want an integer")
			}
			c.TraceSkewNs = n
			return nil
		}},
	{"MPISCOPE_STACK", "", "PMPI tool libraries stacked below mpiscope, top first, separated by ':' (read by chain.c at MPI_Init; docs/stacking.md)",
		func(c *Config, v string) error { return nil }},
	{"MPISCOPE_QMPI", "0", "1: register as a QMPI tool where the MPI library dispatches through QMPI (MPICH built with --enable-qmpi), else warn once and intercept by PMPI (read by qmpi.c at load; docs/stacking.md)",
		func(c *Config, v string) error { _, err := parseBool(v); return err }},
	{"MPISCOPE_PIGGYBACK", "0", "1: carry a header of ours on every point-to-point message and measure wait states online (decided at MPI_Init: on only if every rank asks for it)",
		func(c *Config, v string) (err error) { c.Piggyback, err = parseBool(v); return }},
	{"MPISCOPE_PIGGYBACK_STAGE", "1024", "with the channel on, a send of at most this many bytes of contiguous data copies our header and its data into a buffer of ours sent as one (cheaper than a datatype for small messages); 0: never (0 to 65536)",
		func(c *Config, v string) error {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 0 || n > 65536 {
				return fmt.Errorf("want a number of bytes from 0 to 65536")
			}
			c.PBStage = n
			return nil
		}},
	{"MPISCOPE_DEPTH", "auto", "frames of each MPI call's call path, from the callsite up (1 to 32; 1: the callsite only; auto: 4 when the program keeps frame pointers, else 1)",
		func(c *Config, v string) error {
			if strings.TrimSpace(v) == "auto" {
				c.Depth = 0 // chosen at start (callpath.c)
				return nil
			}
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 1 || n > 32 {
				return fmt.Errorf("want auto or an integer from 1 to 32")
			}
			c.Depth = n
			return nil
		}},
	{"MPISCOPE_COMPENSATE", "0", "1: subtract mpiscope's own overhead from the times it reports, carrying each rank's delay to the ranks it talks to (implies MPISCOPE_PIGGYBACK; docs/compensation.md)",
		func(c *Config, v string) (err error) { c.Compensate, err = parseBool(v); return }},
	{"MPISCOPE_TEST_DELAY_NS", "0", "testing only: busy-wait this many ns in every recorded MPI call on the ranks of MPISCOPE_TEST_DELAY_RANKS (an expensive tool, to check compensation)",
		func(c *Config, v string) error {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || n < 0 || n > int64(time.Second) {
				return fmt.Errorf("want a number of ns from 0 to 1000000000")
			}
			c.TestDelayNs = n
			return nil
		}},
	{"MPISCOPE_TEST_DELAY_RANKS", "all", "testing only: the ranks MPISCOPE_TEST_DELAY_NS applies to: all, or ranks and ranges such as 0,2-3",
		func(c *Config, v string) error {
			r, err := parseRanks(v)
			if err != nil {
				return err
			}
			c.TestDelayRanks = r
			return nil
		}},
	{"MPISCOPE_SNAPSHOT_EVERY", "0", "write a snapshot this often (a Go duration, e.g. 10m); 0 = never",
		func(c *Config, v string) error {
			d, err := time.ParseDuration(v)
			if v == "0" {
				d, err = 0, nil
			}
			if err != nil || d < 0 {
				return fmt.Errorf("want a duration such as 30s or 10m")
			}
			if d > 0 && d < minSnapshotEvery {
				return fmt.Errorf("want 0 or at least %v", minSnapshotEvery)
			}
			c.SnapshotEvry = d
			return nil
		}},
	{"MPISCOPE_SNAPSHOT_SIGNAL", "USR1", "signal on which a rank writes a snapshot: USR1, USR2, HUP, WINCH or none",
		func(c *Config, v string) error {
			u := strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(v)), "SIG")
			switch u {
			case "NONE", "0", "OFF", "":
				c.SnapshotSignal = ""
				return nil
			}
			for _, s := range snapshotSignals {
				if u == s {
					c.SnapshotSignal = s
					return nil
				}
			}
			return fmt.Errorf("want one of %s, or none", strings.Join(snapshotSignals, ", "))
		}},
}

// parseRanks reads "all" (nil) or a comma-separated list of ranks and
// ranges (0,2-3).
func parseRanks(v string) ([]int, error) {
	v = strings.TrimSpace(v)
	if strings.EqualFold(v, "all") {
		return nil, nil
	}
	bad := fmt.Errorf("want all, or ranks and ranges such as 0,2-3")
	out := []int{}
	for _, f := range strings.Split(v, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(f), "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil || a < 0 {
			return nil, bad
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil || b < a || b-a > 1<<20 {
				return nil, bad
			}
		}
		for r := a; r <= b; r++ {
			out = append(out, r)
		}
	}
	return out, nil
}

// validFnName tells whether f looks like a C MPI function name.
func validFnName(f string) bool {
	if !strings.HasPrefix(f, "MPI_") || len(f) == 4 {
		return false
	}
	for _, r := range f {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// reserved names are read by other parts (traces, launcher) and must not
// be reported as unknown.
var reserved = map[string]bool{
	"MPISCOPE_FAULT": true,
	"MPISCOPE_LIB":   true, "MPISCOPE_LIBDIR": true, "MPISCOPE_BUILD": true, "MPISCOPE_FAMILY": true,
	"MPISCOPE_DEBUG_TIMING": true, // rank 0 prints finalize phase timings (benchmarks)
}

// parseSize reads a byte count with an optional K, M or G suffix (powers of 1024).
func parseSize(v string) (int64, error) {
	v = strings.TrimSpace(strings.ToUpper(v))
	mult := int64(1)
	for i, suf := range []string{"K", "M", "G"} {
		if t, ok := strings.CutSuffix(strings.TrimSuffix(v, "B"), suf); ok {
			v, mult = t, int64(1)<<(10*(i+1))
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size")
	}
	return n * mult, nil
}

// ParseConfig reads MPISCOPE_* variables from env (as os.Environ gives them).
// It returns the configuration, the effective settings for the report, and
// one warning per bad or unknown variable.
func ParseConfig(env []string) (Config, []profile.Setting, []string) {
	var c Config
	var warns []string
	vals := map[string]string{}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if ok && strings.HasPrefix(k, "MPISCOPE_") {
			vals[k] = v
		}
	}
	known := map[string]bool{}
	var eff []profile.Setting
	for _, s := range Settings {
		known[s.name] = true
		if err := s.set(&c, s.def); err != nil && s.def != "" {
			panic("bad default for " + s.name)
		}
		v, ok := vals[s.name]
		if !ok {
			continue
		}
		if err := s.set(&c, v); err != nil {
			warns = append(warns, fmt.Sprintf("%s=%q: %v; using the default %q", s.name, v, err, s.def))
			s.set(&c, s.def)
			continue
		}
		eff = append(eff, profile.Setting{Name: s.name, Value: v})
	}
	var unknown []string
	for k := range vals {
		if !known[k] && !reserved[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		warns = append(warns, fmt.Sprintf("%s is not an mpiscope setting and is ignored (see the README)", k))
	}
	if c.Quiet {
		c.Summary = false
	}
	return c, eff, warns
}
