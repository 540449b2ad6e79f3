package trace

import "math"

// Clock maps a rank's ticks to the job's time line: rank 0's CLOCK_MONOTONIC
// in nanoseconds. The rank's offset to rank 0 is measured at MPI_Init and at
// MPI_Finalize (the Sync blocks); between (and beyond) the two the offset
// is interpolated linearly, which corrects both the offset and a constant
// drift. One measurement corrects the offset only; none leaves the clock
// as it is (all ranks on one node share CLOCK_MONOTONIC).
type Clock struct {
	cal    Calib
	l0, l1 float64 // local times of the first and last samples
	o0, o1 float64 // offsets there
	n      int
	Off    bool    // no correction (tests: show what correction fixes)
	Shift  float64 // added after the correction: makes messages consistent (Walker.repair)
}

// NewClock builds the rank's clock. The sample with the smallest round trip
// is used among those taken in one go (the writer keeps only the best one
// per measurement).
//
// Each sample's offset is known to within half its round trip. When the
// first and last offsets differ by less than that uncertainty, the
// difference is not drift that can be told from error, and the clock keeps
// the offset of the sample with the smaller round trip: a constant error,
// which Walker.repair can take out with one shift per host. Interpolating
// there would turn one bad sample (a loaded node at MPI_Finalize) into an
// error growing over the run, which no constant shift repairs.
func NewClock(r *Rank) *Clock {
	c := &Clock{cal: r.Calib, n: len(r.Syncs)}
	if c.n > 0 {
		a, b := r.Syncs[0], r.Syncs[len(r.Syncs)-1]
		c.l0, c.o0 = float64(a.LocalNs), float64(a.OffsetNs)
		c.l1, c.o1 = float64(b.LocalNs), float64(b.OffsetNs)
		if c.n > 1 && math.Abs(c.o1-c.o0) <= float64(a.RTTNs+b.RTTNs)/2 {
			if b.RTTNs < a.RTTNs {
				c.o0 = c.o1
			}
			c.n = 1
		}
	}
	return c
}

// Offset is the correction added to local time l.
func (c *Clock) Offset(l float64) float64 {
	switch {
	case c.Off || c.n == 0:
		return 0
	case c.n == 1 || c.l1 <= c.l0:
		return c.o0
	}
	return c.o0 + (c.o1-c.o0)*(l-c.l0)/(c.l1-c.l0)
}

// Ns converts ticks to job time in nanoseconds.
func (c *Clock) Ns(t uint64) float64 {
	l := c.cal.Ns(t)
	return l + c.Offset(l) + c.Shift
}

// hostClocks chooses, for each rank, the rank whose calibration and clock
// samples convert its ticks. Ranks on one host read the same clock (the
// invariant TSC, or CLOCK_MONOTONIC), so they share one conversion: their
// events keep the exact order the clock gave them, which independent
// samples (each off by up to half its round trip) would not guarantee for
// messages faster than that. A host's conversion is rank 0's when rank 0
// is there (offset 0), else that of the rank whose samples had the
// smallest round trips.
func hostClocks(j *Job) map[*Rank]*Rank {
	type key struct{ host, timer string }
	best := map[key]*Rank{}
	score := func(r *Rank) uint64 {
		if r.Header.Rank == 0 {
			return 0
		}
		if len(r.Syncs) == 0 {
			return math.MaxUint64
		}
		var s uint64 = 1
		for _, x := range r.Syncs {
			s += x.RTTNs
		}
		return s
	}
	for _, r := range j.Ranks {
		k := key{r.Header.Host, r.Header.Timer}
		if b, ok := best[k]; !ok || score(r) < score(b) || (score(r) == score(b) && r.Header.Rank < b.Header.Rank) {
			best[k] = r
		}
	}
	m := map[*Rank]*Rank{}
	for _, r := range j.Ranks {
		m[r] = r
		if r.Header.Host != "" {
			m[r] = best[key{r.Header.Host, r.Header.Timer}]
		}
	}
	return m
}
