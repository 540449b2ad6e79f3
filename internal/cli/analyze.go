package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/mpiscope/mpiscope/internal/analyze"
	"github.com/mpiscope/mpiscope/internal/trace"
)

const analyzeUsage = `usage: mpiscope analyze [-format text|json] [-top N] [-all] [-o out] [-j N] [-mem SIZE] [-no-clock] jobdir
  Find the wait states (Scalasca's patterns: late sender, late receiver,
  wait at N x N, wait at barrier, late broadcast, early reduce) and the
  critical path of a traced job (MPISCOPE_TRACE=1), from its trace files,
  per function, callsite, communicator and rank. Message records beyond
  -mem go to temporary files (K, M, G suffixes; default auto: half of the
  memory available to the process, within its cgroup's limit, at least
  256M). docs/analysis.md.
`

// analyzeCmd analyzes a job's event trace.
func analyzeCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("analyze", flag.ContinueOnError)
	format := fs.String("format", "text", "output `format`: text or json")
	top := fs.Int("top", 20, "rows per table in text")
	all := fs.Bool("all", false, "every row in text")
	out := fs.String("o", "", "write to `file` instead of stdout")
	workers := fs.Int("j", 0, "ranks read in parallel (0: one per CPU)")
	noClock := fs.Bool("no-clock", false, "do not correct clock offsets between ranks")
	mem := fs.String("mem", "auto", "memory for message records (K, M, G suffixes, or auto: half of what is available); beyond it they go to temporary files")
	if err := parseFlags(fs, args, stdout, analyzeUsage); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErr("analyze", "want one job directory, got %s", argList(fs.Args()))
	}
	if *format != "text" && *format != "json" {
		return usageErr("analyze", "unknown -format %q (want text or json)", *format)
	}
	if *top < 1 {
		return usageErr("analyze", "-top %d: want at least 1 row (-all shows every row)", *top)
	}
	if *workers < 0 {
		return usageErr("analyze", "-j %d: want 0 (one per CPU) or more", *workers)
	}
	var memory int64
	if *mem == "auto" {
		memory = autoMemory()
	} else if m, err := parseSize(*mem); err != nil || m < 1<<20 {
		return usageErr("analyze", "-mem %q: want a size of at least 1M (K, M, G suffixes) or auto", *mem)
	} else {
		memory = m
	}
	dir := fs.Arg(0)
	job, err := trace.OpenJob(dir)
	if err != nil {
		return err
	}
	prog := newAnalyzeProgress(stderr, job)
	restore := collectorForAnalysis(os.Getenv)
	res, err := analyze.Analyze(job, analyze.Options{Workers: *workers, NoClock: *noClock, Memory: memory, Progress: prog.update, Source: callsites(dir)})
	restore()
	prog.done()
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "mpiscope: warning: %s\n", w)
	}
	var w io.Writer = stdout
	var f *os.File
	if *out != "" && *out != "-" {
		if f, err = os.Create(*out); err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	if *format == "json" {
		err = res.WriteJSON(w)
	} else {
		n := *top
		if *all {
			n = 0
		}
		err = res.WriteText(w, n)
	}
	if err == nil && f != nil {
		err = f.Close()
	}
	return err
}

// parseSize reads a byte count with an optional K, M or G suffix.
func parseSize(s string) (int64, error) {
	mult := int64(1)
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'K', 'k':
			mult, s = 1<<10, s[:n-1]
		case 'M', 'm':
			mult, s = 1<<20, s[:n-1]
		case 'G', 'g':
			mult, s = 1<<30, s[:n-1]
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 || v > (1<<62)/mult {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return v * mult, nil
}

// analyzeProgress shows the events read on a terminal, after a second,
// at most five times a second (called from the reading goroutines).
type analyzeProgress struct {
	w     io.Writer
	tty   bool
	start time.Time
	last  atomic.Int64
	total uint64
	shown atomic.Bool
}

func newAnalyzeProgress(w io.Writer, j *trace.Job) *analyzeProgress {
	p := &analyzeProgress{w: w, start: time.Now()}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	for _, r := range j.Ranks {
		p.total += r.Events
	}
	return p
}

func (p *analyzeProgress) update(done uint64) {
	if !p.tty {
		return
	}
	now := time.Since(p.start)
	last := p.last.Load()
	if now < time.Second || now-time.Duration(last) < 200*time.Millisecond || !p.last.CompareAndSwap(last, int64(now)) {
		return
	}
	p.shown.Store(true)
	fmt.Fprintf(p.w, "\rmpiscope: analyzing: %d of %d events (%.0f%%, %.0fs)   ", done, p.total, 100*float64(done)/float64(max(p.total, 1)), now.Seconds())
}

func (p *analyzeProgress) done() {
	if p.shown.Load() {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
