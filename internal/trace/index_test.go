package trace

import (
	"errors"
	"os"
	"testing"
)

// TestIndex: a synthetic trace of 4 ranks in blocks of 30,000 events: the
// index lists every events block of each rank, in file order, with its
// thread, events and the ticks they span (the first event's T0, and no
// T1 beyond Last); ReadBlock decodes each block as Scan does; a damaged
// block is an error with the file and the block's offset.
func TestIndex(t *testing.T) {
	dir := t.TempDir()
	if err := WriteSynth(dir, SynthSpec{Ranks: 4, Events: 400_000, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	job, err := OpenJob(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range job.Ranks {
		idx, err := r.Index()
		if err != nil {
			t.Fatal(err)
		}
		if len(idx) != 4 { // 100,000 events: 3 blocks of 30,000 and one of 10,000
			t.Fatalf("rank %d: %d blocks, want 4", r.Header.Rank, len(idx))
		}
		var events uint64
		i := 0
		err = r.Scan(func(tid int, evs []Event) error {
			s := idx[i]
			events += s.Events
			if s.Tid != tid || s.Events != uint64(len(evs)) || s.First != evs[0].T0 {
				t.Errorf("rank %d block %d: %+v, want thread %d, %d events from %d", r.Header.Rank, i, s, tid, len(evs), evs[0].T0)
			}
			for _, e := range evs {
				if e.T1 > s.Last || e.T0 < s.First {
					t.Errorf("rank %d block %d: event %+v outside %d..%d", r.Header.Rank, i, e, s.First, s.Last)
					break
				}
			}
			if i+1 < len(idx) && s.Last != idx[i+1].First {
				t.Errorf("rank %d block %d ends at %d, the next begins at %d", r.Header.Rank, i, s.Last, idx[i+1].First)
			}
			tid2, got, err := r.ReadBlock(s, nil)
			if err != nil || tid2 != tid || len(got) != len(evs) || got[len(got)-1] != evs[len(evs)-1] || got[0] != evs[0] {
				t.Errorf("rank %d block %d: ReadBlock: thread %d, %d events, %v", r.Header.Rank, i, tid2, len(got), err)
			}
			i++
			return nil
		})
		if err != nil || i != len(idx) || events != r.Events {
			t.Fatalf("rank %d: %d blocks scanned, %d events indexed of %d: %v", r.Header.Rank, i, events, r.Events, err)
		}
		if in := SpansIn(idx, idx[2].First+1, idx[2].First+2); len(in) != 1 || in[0] != idx[2] {
			t.Errorf("rank %d: spans just after block 2's start: %+v", r.Header.Rank, in)
		}
	}
	// A damaged byte in rank 1's third block.
	r := job.Ranks[1]
	idx, _ := r.Index()
	s := idx[2]
	b, _ := os.ReadFile(r.Path)
	b[s.Off+s.Size/2] ^= 0xff
	if err := os.WriteFile(r.Path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = r.ReadBlock(s, nil)
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Offset != s.Off || ce.File != r.Path {
		t.Errorf("damaged block: %v, want a CorruptError at %s offset %d", err, r.Path, s.Off)
	}
}
