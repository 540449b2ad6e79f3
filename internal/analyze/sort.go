package analyze

import (
	"math"
	"slices"
)

// sortByKey sorts a by key, stably: a counting pass on the key's top bits
// (below the largest key) into buckets of about 8 records (one copy of a),
// then each bucket sorted by insertion, or, when keys crowd into it, by
// (key, position) pairs (sortScratch: no allocation per comparison);
// dense keys (below 4 times the records' count) get a bucket each and no
// sort after the counting pass. For the evenly spread keys here (hashed
// flow ids, call numbers) it does far fewer moves of the 56-byte records
// than a comparison sort.
func sortByKey[T any](a []T, key func(*T) uint64) []T { return sortParts([][]T{a}, key) }

// sortParts is sortByKey of the concatenation of parts, without making it:
// the counting pass reads the parts, the records go to their buckets
// straight from them.
func sortParts[T any](parts [][]T, key func(*T) uint64) []T { return sortPartsIn(nil, parts, key) }

// sortPartsIn is sortParts whose sorted copy, when it makes one of 64
// records or more, is in st's memory (storeList; nil: the heap).
func sortPartsIn[T any](st *store, parts [][]T, key func(*T) uint64) []T {
	n := 0
	for _, a := range parts {
		n += len(a)
	}
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
			insertionSort(a, key) // fewer than 64 records
		}
		return a
	}
	// Dense keys (a rank's call numbers): a bucket per key (denseKeys);
	// the buckets then need no sort.
	if denseKeys(maxKey, n) {
		count := make([]int32, maxKey+2)
		for _, a := range parts {
			for i := range a {
				count[key(&a[i])+1]++
			}
		}
		for b := 1; b < len(count); b++ {
			count[b] += count[b-1]
		}
		out := storeList[T](st, n)
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
	out := storeList[T](st, n)
	pos := slices.Clone(count[:len(count)-1])
	for _, a := range parts {
		for i := range a {
			b := key(&a[i]) >> shift
			out[pos[b]] = a[i]
			pos[b]++
		}
	}
	var sc sortScratch[T]
	big := 0 // the largest bucket: the scratch lists' size
	for b := 0; b+1 < len(count); b++ {
		big = max(big, count[b+1]-count[b])
	}
	for b := 0; b+1 < len(count); b++ {
		s := out[count[b]:count[b+1]]
		if len(s) > 32 {
			// Keys crowd the bucket (an instance's parts from many
			// ranks, all of one key): sorted by (key, position) pairs
			// unless in order already.
			sc.sort(s, key, big)
			continue
		}
		insertionSort(s, key)
	}
	return out
}

// insertionSort sorts a by key, stably, comparing the records in place
// (key takes their addresses in a: nothing is copied to be compared).
func insertionSort[T any](a []T, key func(*T) uint64) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && key(&a[j-1]) > key(&a[j]); j-- {
			a[j-1], a[j] = a[j], a[j-1]
		}
	}
}

// keyPos is a record's key (less the list's least) and its position in
// the list being sorted.
type keyPos struct {
	k uint64
	i int
}

// sortScratch holds the pairs (two lists) and the records' copy of a sort
// by pairs, made once for the largest list to be sorted (n) and reused.
type sortScratch[T any] struct {
	pairs, alt []keyPos
	tmp        []T
}

// sort sorts a by key, stably: its keys are read once each, the pairs
// (key, position) sorted by a radix sort of the bytes in which the keys
// differ (least significant first, each pass stable: ties keep their
// positions), and the records moved once to their places; a in order
// already is left as it is. No comparison of records (a comparison by
// value through key(&x) makes x escape: an allocation each), at most one
// of each scratch list per sortScratch. Keys that share their top bits
// and crowd a bucket (an instance's parts from many ranks; a
// communicator's collectives, keyed communicator<<32 | sequence) take as
// many passes as bytes their range spans.
func (sc *sortScratch[T]) sort(a []T, key func(*T) uint64, n int) {
	if sc.pairs == nil {
		sc.pairs = make([]keyPos, max(n, len(a)))
		sc.alt = make([]keyPos, max(n, len(a)))
	}
	src, dst := sc.pairs[:len(a)], sc.alt[:len(a)]
	sorted := true
	lo, hi := ^uint64(0), uint64(0)
	for i := range a {
		k := key(&a[i])
		sorted = sorted && (i == 0 || k >= src[i-1].k)
		lo, hi = min(lo, k), max(hi, k)
		src[i] = keyPos{k, i}
	}
	if sorted {
		return
	}
	for i := range src {
		src[i].k -= lo
	}
	for shift := 0; shift < 64 && (hi-lo)>>shift != 0; shift += 8 {
		var count [257]int
		for i := range src {
			count[int(byte(src[i].k>>shift))+1]++
		}
		for b := 1; b < len(count); b++ {
			count[b] += count[b-1]
		}
		for i := range src {
			b := byte(src[i].k >> shift)
			dst[count[b]] = src[i]
			count[b]++
		}
		src, dst = dst, src
	}
	if sc.tmp == nil {
		sc.tmp = make([]T, max(n, len(a)))
	}
	tmp := sc.tmp[:len(a)]
	copy(tmp, a)
	for j, p := range src {
		a[j] = tmp[p.i]
	}
	clear(tmp) // no pointers kept alive by the scratch
}

// sortCands is sortParts of a rank's candidates by call: in its usual
// case, dense call numbers, the same counting pass with the call read in
// place instead of through the key's closure (three calls of it a
// candidate); else sortParts. The sorted copy, when it makes one of 64
// records or more, is in st's memory (sortPartsIn; nil: the heap): in
// room when it fits (2026-11-29: a worker's room for the rank of the
// most candidates, reused rank after rank), and so are its counts.
func sortCands(st *store, parts [][]cand, room []cand) []cand {
	n := 0
	var maxKey uint32
	sorted := true
	for _, a := range parts {
		n += len(a)
		for i := range a {
			k := a[i].call
			sorted = sorted && k >= maxKey
			maxKey = max(maxKey, k)
		}
	}
	if sorted || n < 64 || !denseKeys(uint64(maxKey), n) {
		return sortPartsIn(st, parts, func(c *cand) uint64 { return uint64(c.call) })
	}
	count := storeList[int32](st, int(maxKey)+2)
	defer storeRelease(st, count)
	clear(count)
	for _, a := range parts {
		for i := range a {
			count[a[i].call+1]++
		}
	}
	for b := 1; b < len(count); b++ {
		count[b] += count[b-1]
	}
	out := room[:min(n, cap(room))]
	if len(out) < n {
		out = storeList[cand](st, n)
	}
	for _, a := range parts { // count[k] is where the next of call k goes
		for i := range a {
			k := a[i].call
			out[count[k]] = a[i]
			count[k]++
		}
	}
	return out
}

// denseKeys tells whether n records of keys up to maxKey are counted
// into a bucket per key: when there are fewer than four times as many
// keys as records (4-byte counts: at most 16 bytes a record), and the
// counts fit an int32.
func denseKeys(maxKey uint64, n int) bool {
	return maxKey < 4*uint64(n) && n < math.MaxInt32
}
