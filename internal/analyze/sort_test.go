package analyze

import (
	"slices"
	"testing"
)

// TestSortParts: sorting a list given in parts is the stable sort of their
// concatenation (ties in the parts' order), for every way of cutting it,
// empty parts included.
func TestSortParts(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 65, 1000, 100000} {
		for _, top := range []uint64{^uint64(0), 1000, 1} {
			a := make([][2]uint64, n)
			x := uint64(n)*2654435761 + top
			for i := range a {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				k := x
				if top != ^uint64(0) {
					k %= top + 1
				}
				a[i] = [2]uint64{k, uint64(i)}
			}
			want := slices.Clone(a)
			slices.SortStableFunc(want, func(p, q [2]uint64) int { return cmpU(p[0], q[0]) })
			for _, cuts := range [][]int{{}, {0}, {n / 2}, {n / 3, n / 3, 2 * n / 3}, {1, n / 7, n - 1, n}} {
				var parts [][][2]uint64
				last := 0
				for _, c := range cuts {
					c = min(max(c, last), n)
					parts = append(parts, slices.Clone(a[last:c]))
					last = c
				}
				parts = append(parts, slices.Clone(a[last:]))
				got := sortParts(parts, func(p *[2]uint64) uint64 { return p[0] })
				if !slices.Equal(got, want) {
					t.Errorf("n %d, keys up to %d, cut at %v: not the stable sort of the whole", n, top, cuts)
				}
			}
		}
	}
	// Already in order across the parts: their concatenation.
	parts := [][][2]uint64{{{1, 0}, {2, 1}}, {}, {{2, 2}, {5, 3}}}
	if got := sortParts(parts, func(p *[2]uint64) uint64 { return p[0] }); !slices.Equal(got, [][2]uint64{{1, 0}, {2, 1}, {2, 2}, {5, 3}}) {
		t.Errorf("sorted parts: %v", got)
	}
}
