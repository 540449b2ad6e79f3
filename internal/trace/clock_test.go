package trace

import "testing"

func TestClockDrift(t *testing.T) {
	cal := Calib{}
	for _, tc := range []struct {
		name  string
		syncs []Sync
		at    []float64 // local times
		want  []float64 // offsets there
	}{
		{"none", nil, []float64{5}, []float64{0}},
		{"one", []Sync{{LocalNs: 100, OffsetNs: 7, RTTNs: 10}}, []float64{0, 1000}, []float64{7, 7}},
		// 1,000 ns apart over 1 ms: far beyond the round trips, drift.
		{"drift", []Sync{{LocalNs: 0, OffsetNs: 0, RTTNs: 100}, {LocalNs: 1e6, OffsetNs: 1000, RTTNs: 100}},
			[]float64{0, 5e5, 1e6, 2e6}, []float64{0, 500, 1000, 2000}},
		// 4,000 ns apart, within half the two round trips (1,000 + 9,000)
		// / 2: error, not drift; the better sample (the first) is kept.
		{"noise, first better", []Sync{{LocalNs: 0, OffsetNs: 0, RTTNs: 1000}, {LocalNs: 1e6, OffsetNs: 4000, RTTNs: 9000}},
			[]float64{0, 1e6, 2e6}, []float64{0, 0, 0}},
		{"noise, last better", []Sync{{LocalNs: 0, OffsetNs: 4000, RTTNs: 9000}, {LocalNs: 1e6, OffsetNs: 0, RTTNs: 1000}},
			[]float64{0, 1e6}, []float64{0, 0}},
	} {
		c := NewClock(&Rank{Calib: cal, Syncs: tc.syncs})
		for i, l := range tc.at {
			if got := c.Offset(l); got != tc.want[i] {
				t.Errorf("%s: Offset(%g) = %g, want %g", tc.name, l, got, tc.want[i])
			}
		}
	}
}
