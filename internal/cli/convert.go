package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/mpiscope/mpiscope/internal/symbolize"
	"github.com/mpiscope/mpiscope/internal/trace"
	"github.com/mpiscope/mpiscope/profile"
)

const convertUsage = `usage: mpiscope convert (--otf2 | --perfetto | --pprof [-by-rank]) [-o out] [-no-clock] [-force] [-j N] jobdir
  --otf2      write an OTF2 archive (default out: <jobdir>/otf2/traces.otf2)
  --perfetto  write Chrome trace JSON for Perfetto (default out: <jobdir>/trace.json)
  --pprof     write the profile (no trace needed) for go tool pprof: MPI time, calls
              and bytes by callsite (default out: <jobdir>/profile.pb.gz; also a
              snapshot directory or a .mps file)
  -by-rank    with --pprof: samples per rank, MPI function and communicator,
              labelled rank and comm (go tool pprof -tagfocus rank=^1$), no callsites
  -force      convert even when the file system seems to lack room for the output
  -j N        ranks converted at once (default: one per CPU)
`

// convertCmd converts a job's event trace.
func convertCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	otf2 := fs.Bool("otf2", false, "write an OTF2 archive")
	perfetto := fs.Bool("perfetto", false, "write Chrome trace JSON (Perfetto)")
	pprof := fs.Bool("pprof", false, "write the profile in pprof's format (profile.pb.gz)")
	byRank := fs.Bool("by-rank", false, "with --pprof: samples per rank, function and communicator (labels rank, comm)")
	out := fs.String("o", "", "output `path` (OTF2: a new directory; Perfetto: a file, - for stdout)")
	noClock := fs.Bool("no-clock", false, "do not correct clock offsets between ranks")
	force := fs.Bool("force", false, "convert even when the file system seems to lack room for the output")
	workers := fs.Int("j", 0, "ranks converted at once (0: one per CPU)")
	if err := parseFlags(fs, args, stdout, convertUsage); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErr("convert", "want one job directory, got %s", argList(fs.Args()))
	}
	if n := btoi(*otf2) + btoi(*perfetto) + btoi(*pprof); n != 1 {
		return usageErr("convert", "give one of --otf2, --perfetto and --pprof")
	}
	if *byRank && !*pprof {
		return usageErr("convert", "-by-rank goes with --pprof")
	}
	if *workers < 0 {
		return usageErr("convert", "-j %d: want 0 (one per CPU) or more", *workers)
	}
	if *workers == 0 {
		*workers = trace.Workers()
	}
	dir := fs.Arg(0)
	if *pprof {
		return convertPprof(dir, *out, *byRank, stdout, stderr) // convert_pprof.go
	}
	job, err := trace.OpenJob(dir)
	if err != nil {
		return err
	}
	for _, w := range job.Warnings {
		fmt.Fprintf(stderr, "mpiscope: warning: %s\n", w)
	}
	if !*force && *out != "-" && !special(*out) {
		dest := *out
		if dest == "" {
			dest = dir
		}
		if err := checkSpace(dest, job, *otf2); err != nil {
			return err
		}
	}
	prog := newProgress(stderr, job)
	src := callsites(dir)
	var srcMu sync.Mutex // ranks are converted concurrently
	w := trace.NewWalker(job, trace.WalkOptions{NoClock: *noClock, Progress: prog.update,
		Source: func(r *trace.Rank, pc uint64) (trace.Source, bool) {
			srcMu.Lock()
			defer srcMu.Unlock()
			return src(r, pc)
		}})
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
		if st, err := os.Stat(dest); err == nil && !st.IsDir() {
			return fmt.Errorf("%s exists and is not a directory: choose another -o", dest)
		}
		// Written under a temporary name, renamed when complete: a failed
		// conversion leaves nothing behind.
		tmp, err := tempName(dest)
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		n, err := trace.ConvertOTF2(w, tmp, *workers)
		if err != nil {
			return err
		}
		os.Remove(dest) // an empty directory, if any
		if err := os.Rename(tmp, dest); err != nil {
			return err
		}
		records = n
		dest = filepath.Join(dest, "traces.otf2")
	} else {
		dest = *out
		if dest == "" {
			dest = filepath.Join(dir, "trace.json")
		}
		var f io.Writer = stdout
		var file *trace.DirectFile // direct writes: no copy into the page cache
		if special(dest) {
			// A device or a pipe (-o /dev/null): written in place, never
			// replaced by a file renamed over it.
			sf, err := os.OpenFile(dest, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer sf.Close()
			f = sf
		} else if dest != "-" {
			tmp, err := tempName(dest)
			if err != nil {
				return err
			}
			if file, err = trace.CreateDirect(tmp); err != nil {
				return err
			}
			defer func() {
				file.Close()
				os.Remove(tmp)
			}()
			f = file
		}
		n, err := trace.ConvertPerfetto(w, f, *workers)
		if err != nil {
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
		records = n
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

// callsites resolves the callsite addresses of a job's trace to source
// lines: the rank's file mappings (in its trace) turn an address into
// module + offset, the key under which the job's profile already holds the
// callsite's file and line (symbolized at MPI_Finalize); callsites the
// profile lacks are looked up in the module's debug information.
func callsites(dir string) func(r *trace.Rank, pc uint64) (trace.Source, bool) {
	known := map[profile.Loc]profile.Loc{}
	if p, _, err := profile.Load(dir); err == nil {
		for _, s := range p.Sites {
			if s.Loc.File != "" {
				known[profile.Loc{Module: s.Loc.Module, Offset: s.Loc.Offset}] = s.Loc
			}
		}
	}
	sym := symbolize.New()
	maps := map[*trace.Rank][]symbolize.Mapping{}
	return func(r *trace.Rank, pc uint64) (trace.Source, bool) {
		ms, ok := maps[r]
		if !ok {
			for _, m := range r.Maps {
				ms = append(ms, symbolize.Mapping{Start: m.Start, End: m.End, Offset: m.Offset, Path: m.Path})
			}
			sort.Slice(ms, func(a, b int) bool { return ms[a].Start < ms[b].Start })
			maps[r] = ms
		}
		module, off, ok := symbolize.Resolve(ms, pc)
		if !ok {
			return trace.Source{}, false
		}
		if l, ok := known[profile.Loc{Module: module, Offset: off}]; ok {
			return trace.Source{Func: l.Function, File: l.File, Line: l.Line}, true
		}
		fn, file, line, err := sym.LookupReturn(module, off)
		if err != nil || file == "" {
			return trace.Source{}, false
		}
		return trace.Source{Func: fn, File: file, Line: line}, true
	}
}

// Output bytes per traced event, an upper estimate (about twice what a
// call with a message takes): an OTF2 call is an Enter and a Leave with
// their timestamps and often a message record, a Perfetto call a slice
// with its arguments and often a flow end. The sample (examples/sample.c,
// 4 ranks, Open MPI, 8,028 events) converts to 245,709 bytes of OTF2 (31
// per event) and 1,347,402 bytes of JSON (168 per event).
const (
	otf2PerEvent     = 64
	perfettoPerEvent = 384
)

// freeSpace returns the bytes available to the user on dir's file system
// (a variable: tests replace it).
var freeSpace = func(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}

// checkSpace refuses a conversion whose estimated output does not fit in
// the free space of the file system it goes to (out: the output path or
// the job directory); one trace's conversion once filled a disk.
func checkSpace(out string, job *trace.Job, otf2 bool) error {
	var events uint64
	for _, r := range job.Ranks {
		events += r.Events
	}
	per := uint64(perfettoPerEvent)
	if otf2 {
		per = otf2PerEvent
	}
	need := events * per
	dir := out
	for {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil
		}
		dir = parent
	}
	free, err := freeSpace(dir)
	if err != nil || need <= free {
		return nil
	}
	return fmt.Errorf("the output needs about %s (%d events) and %s has %s free: make room, choose another -o, or use -force",
		sizeStr(need), events, dir, sizeStr(free))
}

func sizeStr(b uint64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", (b+1023)/1024)
}

// special tells whether path exists and is neither a regular file nor a
// directory (a device such as /dev/null, a named pipe): an output written
// in place, not beside it and renamed.
func special(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.Mode().IsRegular() && !st.IsDir()
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
	mu      sync.Mutex
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
	p.mu.Lock() // ranks are converted concurrently
	defer p.mu.Unlock()
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
