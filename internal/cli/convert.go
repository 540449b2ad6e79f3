package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/mpiscope/mpiscope/internal/trace"
)

const convertUsage = `usage: mpiscope convert (--otf2 | --perfetto) [-o out] [-no-clock] jobdir
  --otf2      write an OTF2 archive (default out: <jobdir>/otf2/traces.otf2)
  --perfetto  write Chrome trace JSON for Perfetto (default out: <jobdir>/trace.json)
`

// convertCmd converts a job's event trace.
func convertCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	otf2 := fs.Bool("otf2", false, "write an OTF2 archive")
	perfetto := fs.Bool("perfetto", false, "write Chrome trace JSON (Perfetto)")
	out := fs.String("o", "", "output `path` (OTF2: a new directory; Perfetto: a file, - for stdout)")
	noClock := fs.Bool("no-clock", false, "do not correct clock offsets between ranks")
	if err := parseFlags(fs, args, stdout, convertUsage); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErr("convert", "want one job directory, got %s", argList(fs.Args()))
	}
	if *otf2 == *perfetto {
		return usageErr("convert", "give one of --otf2 and --perfetto")
	}
	dir := fs.Arg(0)
	job, err := trace.OpenJob(dir)
	if err != nil {
		return err
	}
	for _, w := range job.Warnings {
		fmt.Fprintf(stderr, "mpiscope: warning: %s\n", w)
	}
	prog := newProgress(stderr, job)
	w := trace.NewWalker(job, trace.WalkOptions{NoClock: *noClock, Progress: prog.update})
	var records uint64
	var dest string
	if *otf2 {
		dest = *out
		if dest == "" {
			dest = filepath.Join(dir, "otf2")
		}
		if ents, err := os.ReadDir(dest); err == nil && len(ents) > 0 {
			return fmt.Errorf("%s exists and is not empty: choose another -o", dest)
		}
		o, err := trace.NewOTF2Writer(dest, w)
		if err != nil {
			return err
		}
		if err := w.Walk(o); err != nil {
			return err
		}
		if err := o.Close(); err != nil {
			return err
		}
		records = o.Records
		dest = filepath.Join(dest, "traces.otf2")
	} else {
		dest = *out
		if dest == "" {
			dest = filepath.Join(dir, "trace.json")
		}
		var f io.Writer = stdout
		var file *os.File
		if dest != "-" {
			if file, err = os.Create(dest); err != nil {
				return err
			}
			defer file.Close()
			f = file
		}
		p := trace.NewPerfettoWriter(f)
		if err := w.Walk(p); err != nil {
			return err
		}
		if err := p.Close(); err != nil {
			return err
		}
		if file != nil {
			if err := file.Close(); err != nil {
				return err
			}
		}
		records = p.Records
	}
	prog.done()
	if w.Warning != "" {
		fmt.Fprintf(stderr, "mpiscope: warning: %s\n", w.Warning)
	}
	if w.Unmatched > 0 {
		fmt.Fprintf(stderr, "mpiscope: warning: %d request completions had no matching post (posted before tracing started, or on another thread)\n", w.Unmatched)
	}
	if dest != "-" {
		fmt.Fprintf(stderr, "mpiscope: %d ranks, %d records: %s\n", len(job.Ranks), records, dest)
	}
	return nil
}

// progress prints conversion progress on a terminal once it takes longer
// than a second.
type progress struct {
	w       io.Writer
	tty     bool
	start   time.Time
	last    time.Time
	ranks   int
	events  uint64
	total   uint64
	printed bool
}

func newProgress(w io.Writer, j *trace.Job) *progress {
	p := &progress{w: w, start: time.Now(), ranks: len(j.Ranks)}
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

func (p *progress) update(rank int, done uint64) {
	if !p.tty {
		return
	}
	_ = done
	p.events++
	now := time.Now()
	if now.Sub(p.start) < time.Second || now.Sub(p.last) < 200*time.Millisecond {
		return
	}
	p.last = now
	p.printed = true
	fmt.Fprintf(p.w, "\rmpiscope: converting rank %d of %d (%.0fs)   ", rank+1, p.ranks, now.Sub(p.start).Seconds())
}

func (p *progress) done() {
	if p.printed {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

var _ = errors.New
