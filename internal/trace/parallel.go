package trace

import (
	"bufio"
	"io"
	"os"
	"runtime"
	"sync"
)

// Workers is the default number of ranks converted at once: one per CPU
// the process may use.
func Workers() int { return runtime.GOMAXPROCS(0) }

// ConvertOTF2 writes the job's OTF2 archive into dir (NewOTF2Writer's
// rules), ranks on up to workers goroutines: each rank's locations are its
// own event files, the definitions are shared. It returns the records
// written.
func ConvertOTF2(w *Walker, dir string, workers int) (uint64, error) {
	o, err := NewOTF2Writer(dir, w)
	if err != nil {
		return 0, err
	}
	subs := make([]*OTF2Writer, len(w.Job.Ranks))
	err = w.WalkRanks(workers, func(i int) Visitor {
		subs[i] = o.RankWriter()
		return subs[i]
	}, func(i int, err error) error {
		o.Merge(subs[i])
		// The rank's event files are complete: close them now (Close
		// leaves closed files alone), so that open files do not grow
		// with the ranks.
		return subs[i].closeLocs()
	})
	if err != nil {
		return 0, err
	}
	if err := o.Close(); err != nil {
		return 0, err
	}
	return o.Records, nil
}

// ConvertPerfetto writes the job as Chrome trace JSON to out, ranks on up
// to workers goroutines: each rank's events go to a temporary file in
// tmpDir (deleted when copied), then the files are joined in rank order
// (so the disk holds the output twice at most while it is written). It
// returns the records written.
func ConvertPerfetto(w *Walker, out io.Writer, workers int, tmpDir string) (uint64, error) {
	n := len(w.Job.Ranks)
	files := make([]*os.File, n)
	pws := make([]*PerfettoWriter, n)
	defer func() {
		for _, f := range files {
			if f != nil {
				f.Close()
				os.Remove(f.Name())
			}
		}
	}()
	var mu sync.Mutex
	var ferr error
	err := w.WalkRanks(workers, func(i int) Visitor {
		f, err := os.CreateTemp(tmpDir, ".perfetto-rank-*")
		if err != nil {
			mu.Lock()
			ferr = err
			mu.Unlock()
			return failVisitor{err}
		}
		files[i] = f
		pws[i] = newPerfettoFragment(f)
		return pws[i]
	}, func(i int, err error) error {
		if pws[i] == nil {
			return err
		}
		if ferr := pws[i].flush(); ferr != nil {
			return ferr
		}
		return err
	})
	if ferr != nil {
		return 0, ferr
	}
	if err != nil {
		return 0, err
	}
	bw := bufio.NewWriterSize(out, 1<<16)
	bw.WriteString(perfettoHead)
	var records uint64
	first := true
	for i, f := range files {
		if f == nil || pws[i].n == 0 {
			continue
		}
		records += pws[i].Records
		if !first {
			bw.WriteString(",\n")
		}
		first = false
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return 0, err
		}
		if err := bw.Flush(); err != nil {
			return 0, err
		}
		if _, err := io.Copy(out, f); err != nil {
			return 0, err
		}
		f.Close()
		os.Remove(f.Name())
		files[i] = nil
	}
	bw.WriteString(perfettoTail)
	return records, bw.Flush()
}

// failVisitor fails the walk of its rank.
type failVisitor struct{ err error }

func (f failVisitor) Call(*Call) error                             { return f.err }
func (f failVisitor) Region(int, int, bool, string, float64) error { return f.err }
func (f failVisitor) Mark(int, int, string, float64) error         { return f.err }
