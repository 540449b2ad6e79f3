package trace

import "runtime"

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
