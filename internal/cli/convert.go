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
	fs.SetOutput(stderr)
	otf2 := fs.Bool("otf2", false, "write an OTF2 archive")
	perfetto := fs.Bool("perfetto", false, "write Chrome trace JSON (Perfetto)")
	out := fs.String("o", "", "output `path` (OTF2: a new directory; Perfetto: a file, - for stdout)")
	noClock := fs.Bool("no-clock", false, "do not correct clock offsets between ranks")
	if err := fs.Parse(args); err != nil {
		return ErrUsage
	}
	if fs.NArg() != 1 || *otf2 == *perfetto {
		fmt.Fprint(stderr, convertUsage)
		return ErrUsage
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
		// Written under a temporary name, renamed when complete: a failed
		// conversion leaves nothing behind.
		tmp, err := tempName(dest)
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		o, err := trace.NewOTF2Writer(tmp, w)
		if err != nil {
			return err
		}
		if err := w.Walk(o); err != nil {
			return err
		}
		if err := o.Close(); err != nil {
			return err
		}
		os.Remove(dest) // an empty directory, if any
		if err := os.Rename(tmp, dest); err != nil {
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
			tmp, err := tempName(dest)
			if err != nil {
				return err
			}
			if file, err = os.Create(tmp); err != nil {
				return err
			}
			defer func() {
				file.Close()
				os.Remove(tmp)
			}()
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
			if err := os.Rename(file.Name(), dest); err != nil {
				return err
			}
		}
		records = p.Records
	}
	prog.done()
	if w.Warning != "" {
		fmt.Fprintf(stderr, "mpiscope: warning: %s\n", w.Warning)
	}
	for _, d := range w.Damaged {
		fmt.Fprintf(stderr, "mpiscope: warning: %s\n", d)
	}
	if w.Unmatched > 0 {
		fmt.Fprintf(stderr, "mpiscope: warning: %d request completions had no matching post (posted before tracing started, or on another thread)\n", w.Unmatched)
	}
	if dest != "-" {
		fmt.Fprintf(stderr, "mpiscope: %d ranks, %d records: %s\n", len(job.Ranks), records, dest)
	}
	return nil
}

// tempName returns a name beside path, on the same file system, that does
// not exist yet: the output is written there and renamed to path when
// complete.
func tempName(path string) (string, error) {
	for i := 0; i < 100; i++ {
		tmp := fmt.Sprintf("%s.tmp-%d-%d", path, os.Getpid(), i)
		if _, err := os.Lstat(tmp); errors.Is(err, os.ErrNotExist) {
			return tmp, nil
		}
	}
	return "", fmt.Errorf("%s: no free temporary name beside it", path)
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
