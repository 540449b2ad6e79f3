package analyze

import (
	"math/rand/v2"
	"testing"
)

// TestReqTimes checks the request-time window against a map: ids posted
// in increasing order, most completed soon, some after more than the
// window's length of later posts, some never, and ids completed that were
// never posted.
func TestReqTimes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var r reqTimes
	model := map[uint64]float64{}
	var open []uint64
	var id uint64
	for step := 0; step < 400_000; step++ {
		switch x := rng.IntN(100); {
		case x < 45:
			id += 1 + uint64(rng.IntN(3))
			tm := float64(step) + 0.5
			r.set(id, tm)
			model[id] = tm
			open = append(open, id)
		case x < 90 && len(open) > 0:
			// Mostly one of the latest; sometimes one left pending long.
			k := len(open) - 1 - rng.IntN(min(len(open), 8))
			if rng.IntN(50) == 0 {
				k = rng.IntN(len(open))
			}
			q := open[k]
			open = append(open[:k], open[k+1:]...)
			got, ok := r.take(q)
			want, wok := model[q]
			delete(model, q)
			if got != want || ok != wok {
				t.Fatalf("step %d: take(%d) = %v, %v; want %v, %v", step, q, got, ok, want, wok)
			}
		default:
			q := uint64(rng.Int64N(int64(id) + 10))
			got, ok := r.take(q)
			want, wok := model[q]
			delete(model, q)
			if got != want || ok != wok {
				t.Fatalf("step %d: take(%d) = %v, %v; want %v, %v", step, q, got, ok, want, wok)
			}
			for k, o := range open {
				if o == q {
					open = append(open[:k], open[k+1:]...)
					break
				}
			}
		}
	}
	if len(r.old) == 0 {
		t.Errorf("no id left the window: the test does not reach the map")
	}
	for q, want := range model {
		if got, ok := r.take(q); !ok || got != want {
			t.Fatalf("left over: take(%d) = %v, %v; want %v", q, got, ok, want)
		}
	}
	if len(r.old) != 0 {
		t.Errorf("%d ids left in the map after all were taken", len(r.old))
	}
}
