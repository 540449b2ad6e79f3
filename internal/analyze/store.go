package analyze

import (
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
)

// store is memory of the offline analysis's own for its large lists that
// hold no pointers (the records of a rank's shards and their calls'
// times, the wait candidates' chunks and their sorted copies), mapped
// from the kernel (mmap) instead of the Go heap (2026-11-28, late night;
// docs/performance.md, "`analyze` at 10^8 events: memory of its own"):
//
//   - the collector neither scans nor counts it, so the heap's goal (twice
//     what is live by default) does not grow with the records: no
//     headroom of fresh pages for it to touch;
//   - each page is zeroed once, by the kernel, not again by the
//     allocator; with storeHuge the kernel may back it with 2 MiB pages
//     (one fault where 4 KiB pages take 512), which cost more system time
//     than they saved on the machine measured, so it is off;
//   - a shard's records, once matched, are given back (release) and the
//     candidates of the shards after it are carved from them (chunk): the
//     candidates' pages are the records' pages, already touched.
//
// A list that outgrows its room moves to the Go heap (append), as does
// everything once a mapping or its madvise fails, and on systems other
// than Linux (store_other.go): the lists then are what they were before.
// close unmaps all of it: no list taken from the store may be used after.
// A nil *store is the Go heap.
type store struct {
	mu   sync.Mutex
	maps [][]byte // the mappings, to unmap
	free [][]byte // room given back or left over, for chunks
	heap bool     // a mapping or its madvise failed: the Go heap from then on
}

// storeMinBytes is the smallest list mapped: smaller ones stay on the
// heap (a mapping is at least a 4 KiB page; the heap packs small ones).
const storeMinBytes = 256 << 10

// storeRegion is the size of the mappings chunks are carved from when no
// room given back is large enough.
const storeRegion = 32 << 20

// storeMaps and storeUnmaps count the mappings made and unmapped by all
// stores (TestStoreUnmapsAll).
var storeMaps, storeUnmaps atomic.Int64

// storeHuge asks for transparent huge pages on the mappings
// (MADV_HUGEPAGE). Off: on the Intel Xeon VM of docs/performance.md
// (2026-11-28 22:40-23:00 UTC), 10^8 events with one CPU took 14.0 s of
// system time with it, 4.2 s without, and 6.3 s on the Go heap, at 0.92,
// 1.76 and 2.04 million page faults: the 2 MiB pages' faults cost more
// than the 4 KiB ones they replaced.
const storeHuge = false

// mapMem maps n bytes of zeroed memory (sysMap); a variable so that a
// test can make it fail.
var mapMem = func(n int) ([]byte, error) { return sysMap(n, storeHuge) }

// unmapMem unmaps what mapMem mapped.
var unmapMem = sysUnmap

func newStore() *store { return &store{} }

// mapped maps n bytes, or returns nil (and stays on the heap from then
// on) when it cannot.
func (st *store) mapped(n int) []byte {
	if st.heap {
		return nil
	}
	b, err := mapMem(n)
	if err != nil {
		st.heap = true
		return nil
	}
	st.maps = append(st.maps, b)
	storeMaps.Add(1)
	return b
}

// close unmaps the store's memory: nothing taken from it may be used
// after. A second close does nothing.
func (st *store) close() {
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, b := range st.maps {
		if unmapMem(b) == nil {
			storeUnmaps.Add(1)
		}
	}
	st.maps, st.free = nil, nil
}

// owns reports whether p lies in one of the store's mappings.
func (st *store) owns(p uintptr) bool {
	for _, b := range st.maps {
		if base := uintptr(unsafe.Pointer(unsafe.SliceData(b))); p >= base && p < base+uintptr(len(b)) {
			return true
		}
	}
	return false
}

// pointerFree reports whether values of t hold no pointers (the
// collector does not look into the store).
func pointerFree(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	case reflect.Array:
		return t.Len() == 0 || pointerFree(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !pointerFree(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return false
}

// asList makes b's bytes a list of T of length 0 and the capacity they
// hold. b is aligned to 64 bytes (a page, or carved so).
func asList[T any](b []byte) []T {
	var z T
	n := len(b) / int(unsafe.Sizeof(z))
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)[:0]
}

// storeGrow is a with room for at least n records in all: in a mapping of
// its own when that is storeMinBytes or more (a's records copied there),
// else slices.Grow's.
func storeGrow[T any](st *store, a []T, n int) []T {
	var z T
	size := int(unsafe.Sizeof(z))
	if n <= cap(a) {
		return a
	}
	if st != nil && n*size >= storeMinBytes && pointerFree(reflect.TypeFor[T]()) {
		st.mu.Lock()
		b := st.mapped(n * size)
		st.mu.Unlock()
		if b != nil {
			return append(asList[T](b), a...)
		}
	}
	out := make([]T, len(a), n)
	copy(out, a)
	return out
}

// storeRelease gives a's room back to the store, for chunks, when it is
// in one of its mappings (a list that moved to the heap is left to the
// collector). a must not be used after.
func storeRelease[T any](st *store, a []T) {
	if st == nil || cap(a) == 0 {
		return
	}
	var z T
	p := unsafe.Pointer(unsafe.SliceData(a))
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.owns(uintptr(p)) {
		st.giveBack(unsafe.Slice((*byte)(p), cap(a)*int(unsafe.Sizeof(z))))
	}
}

// giveBack puts room b in the free list, joined with the room given back
// or left over just before or after it (since 2026-11-29): a list carved
// from a piece and given back makes the piece whole again, so that a
// larger list fits it next time instead of a new mapping (the room given
// back is contiguous memory of the store's mappings, whichever mapping
// each part is in). The joined piece is the latest (carve takes it
// first).
func (st *store) giveBack(b []byte) {
	for k := 0; k < len(st.free); {
		f := st.free[k]
		switch start(f) + uintptr(len(f)) {
		case start(b): // f, then b
			b = unsafe.Slice(unsafe.SliceData(f), len(f)+len(b))
		default:
			if start(b)+uintptr(len(b)) != start(f) {
				k++
				continue
			}
			b = unsafe.Slice(unsafe.SliceData(b), len(b)+len(f)) // b, then f
		}
		st.free = slices.Delete(st.free, k, k+1)
	}
	st.free = append(st.free, b)
}

// start is where b's bytes are.
func start(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// storeChunk is an empty list with room for n records: carved from room
// given back (storeRelease) or from a mapping of storeRegion bytes; from
// the heap when the store is nil or on the heap. The room given back
// holds old records: only what is appended may be read.
func storeChunk[T any](st *store, n int) []T {
	var z T
	size := (int(unsafe.Sizeof(z))*n + 63) &^ 63
	if st != nil && pointerFree(reflect.TypeFor[T]()) {
		st.mu.Lock()
		b := st.carve(size)
		st.mu.Unlock()
		if b != nil {
			return asList[T](b[:size])
		}
	}
	return make([]T, 0, n)
}

// carve takes size bytes (a multiple of 64) from the room given back,
// from the smallest piece it fits (since 2026-11-29; before, the latest
// piece: a small list then cut the room kept for a large one, which took
// a new mapping), else from a new mapping (of storeRegion bytes at
// least) whose rest is kept. Pieces left below 64 bytes are dropped.
func (st *store) carve(size int) []byte {
	best, bestLen := -1, 0
	for k, f := range st.free {
		skip := int(-start(f) & 63) // the piece's start aligned to 64 bytes
		if skip+size <= len(f) && (best < 0 || len(f) < bestLen) {
			best, bestLen = k, len(f)
		}
	}
	if best >= 0 {
		f := st.free[best]
		skip := int(-start(f) & 63)
		if rest := f[skip+size:]; len(rest) >= 64 {
			st.free[best] = rest
		} else {
			st.free = slices.Delete(st.free, best, best+1)
		}
		return f[skip : skip+size : skip+size]
	}
	b := st.mapped(max(storeRegion, size))
	if b == nil {
		return nil
	}
	if len(b)-size >= 64 {
		st.free = append(st.free, b[size:])
	}
	return b[:size:size]
}

// storeList is a list of n records, to be written in full before it is
// read (the room may be given back room, holding old records): in st's
// memory when that is storeMinBytes or more, else the heap's (zeroed).
func storeList[T any](st *store, n int) []T {
	var z T
	if st != nil && n*int(unsafe.Sizeof(z)) >= storeMinBytes {
		if a := storeChunk[T](st, n); cap(a) >= n {
			return a[:n]
		}
	}
	return make([]T, n)
}

// storeBytes is n bytes of st's memory (carve: room given back, else a
// mapping), or nil when st is nil or on the heap.
func storeBytes(st *store, n int) []byte {
	if st == nil {
		return nil
	}
	size := (n + 63) &^ 63
	st.mu.Lock()
	defer st.mu.Unlock()
	if b := st.carve(size); b != nil {
		return b[:n:n]
	}
	return nil
}

// trim keeps room given back for lists of keep bytes in all (the largest
// pieces, their pages already touched: a list carved from them takes no
// page fault), and gives the
// pages of the rest back to the kernel (sysRelease): the mappings stay,
// a later list carved from them takes fresh pages again (2026-11-29).
// For the lists made after grouping (rankPart.DWaits) from the room of
// the records and candidates, which are then no longer held.
func (st *store) trim(keep int) {
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	slices.SortFunc(st.free, func(a, b []byte) int { return len(a) - len(b) })
	kept := 0
	for k := len(st.free) - 1; k >= 0; k-- {
		f := st.free[k]
		if kept < keep {
			kept += len(f)
			continue
		}
		base := start(f)
		lo := (base + 4095) &^ 4095
		hi := (base + uintptr(len(f))) &^ 4095
		if hi > lo {
			sysRelease(f[lo-base : hi-base])
		}
	}
}
