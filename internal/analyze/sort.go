package analyze

import (
	"math"
	"slices"
)

// sortByKey sorts a by key, stably: a counting pass on the key's top bits
// (below the largest key) into buckets of about 8 records (one copy of a),
// then each bucket sorted by insertion, or by a stable comparison sort
// when keys crowd into it; dense keys (below 4 times the records' count)
// get a bucket each and no sort after the counting pass. For the evenly spread keys here (hashed flow
// ids, call numbers) it does far fewer moves of the 56-byte records than
// a comparison sort.
func sortByKey[T any](a []T, key func(*T) uint64) []T { return sortParts([][]T{a}, key) }

// sortParts is sortByKey of the concatenation of parts, without making it:
// the counting pass reads the parts, the records go to their buckets
// straight from them.
func sortParts[T any](parts [][]T, key func(*T) uint64) []T {
	n := 0
	for _, a := range parts {
		n += len(a)
	}
	byKey := func(x, y T) int { return cmpU(key(&x), key(&y)) }
	var maxKey uint64
	sorted := true
	for _, a := range parts {
		for i := range a {
			k := key(&a[i])
			sorted = sorted && k >= maxKey
			maxKey = max(maxKey, k)
		}
	}
	if sorted || n < 64 {
		var a []T
		if len(parts) == 1 {
			a = parts[0]
		} else {
			a = make([]T, 0, n)
			for _, p := range parts {
				a = append(a, p...)
			}
		}
		if !sorted {
			slices.SortStableFunc(a, byKey)
		}
		return a
	}
	// Dense keys (a rank's call numbers): a bucket per key when there
	// are fewer than four times as many keys as records (4-byte counts:
	// at most 16 bytes a record); the buckets then need no sort.
	if maxKey < 4*uint64(n) && n < math.MaxInt32 {
		count := make([]int32, maxKey+2)
		for _, a := range parts {
			for i := range a {
				count[key(&a[i])+1]++
			}
		}
		for b := 1; b < len(count); b++ {
			count[b] += count[b-1]
		}
		out := make([]T, n)
		for _, a := range parts { // count[k] is where the next of key k goes
			for i := range a {
				k := key(&a[i])
				out[count[k]] = a[i]
				count[k]++
			}
		}
		return out
	}
	// Buckets: the key's top bits, about n/8 of them.
	bits := 0
	for (1 << bits) < n/8 {
		bits++
	}
	shift := 0
	for maxKey>>shift >= 1<<bits {
		shift++
	}
	count := make([]int, (1<<bits)+1)
	for _, a := range parts {
		for i := range a {
			count[(key(&a[i])>>shift)+1]++
		}
	}
	for b := 1; b < len(count); b++ {
		count[b] += count[b-1]
	}
	out := make([]T, n)
	pos := slices.Clone(count[:len(count)-1])
	for _, a := range parts {
		for i := range a {
			b := key(&a[i]) >> shift
			out[pos[b]] = a[i]
			pos[b]++
		}
	}
	for b := 0; b+1 < len(count); b++ {
		s := out[count[b]:count[b+1]]
		if len(s) > 32 {
			if !slices.IsSortedFunc(s, byKey) { // all equal: one key per bucket
				slices.SortStableFunc(s, byKey)
			}
			continue
		}
		for i := 1; i < len(s); i++ {
			for j := i; j > 0 && key(&s[j-1]) > key(&s[j]); j-- {
				s[j-1], s[j] = s[j], s[j-1]
			}
		}
	}
	return out
}
