package trace

import (
	"fmt"
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
// to workers goroutines. A rank that starts when every rank before it is
// in out writes into out directly; the others write to a temporary file
// in tmpDir, copied into out (and deleted) as soon as the ranks before it
// are there: the output is that of one writer walking the ranks in order,
// and the disk holds it twice at most while it is written. It returns the
// records written.
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
	if _, err := io.WriteString(out, perfettoHead); err != nil {
		return 0, err
	}
	var mu sync.Mutex // all below, and out
	var ferr error
	joined := 0 // ranks [0, joined) are in out
	some := false
	finished := make([]bool, n)
	direct := make([]bool, n)
	var records uint64
	// join copies the finished ranks that follow the joined ones into out.
	join := func() error {
		for joined < n && finished[joined] {
			i := joined
			joined++
			p := pws[i]
			if p == nil || p.n == 0 {
				continue
			}
			records += p.Records
			if direct[i] {
				some = true
				continue
			}
			f := files[i]
			if some {
				if _, err := io.WriteString(out, ",\n"); err != nil {
					return err
				}
			}
			some = true
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return err
			}
			if _, err := io.Copy(out, f); err != nil {
				return err
			}
			f.Close()
			os.Remove(f.Name())
			files[i] = nil
		}
		return nil
	}
	err := w.WalkRanks(workers, func(i int) Visitor {
		mu.Lock()
		defer mu.Unlock()
		if joined == i {
			direct[i] = true
			pws[i] = newPerfettoFragment(out)
			pws[i].sep = some
			return pws[i]
		}
		f, err := os.CreateTemp(tmpDir, ".perfetto-rank-*")
		if err != nil {
			ferr = err
			return failVisitor{err}
		}
		files[i] = f
		pws[i] = newPerfettoFragment(f)
		return pws[i]
	}, func(i int, err error) error {
		mu.Lock()
		defer mu.Unlock()
		if pws[i] == nil {
			return err
		}
		if ferr := pws[i].flush(); ferr != nil {
			return ferr
		}
		finished[i] = true
		if jerr := join(); jerr != nil {
			return jerr
		}
		return err
	})
	if ferr != nil {
		return 0, ferr
	}
	if err != nil {
		return 0, err
	}
	if joined != n {
		return 0, fmt.Errorf("perfetto: %d of %d ranks joined", joined, n)
	}
	_, err = io.WriteString(out, perfettoTail)
	return records, err
}

// failVisitor fails the walk of its rank.
type failVisitor struct{ err error }

func (f failVisitor) Call(*Call) error                             { return f.err }
func (f failVisitor) Region(int, int, bool, string, float64) error { return f.err }
func (f failVisitor) Mark(int, int, string, float64) error         { return f.err }
