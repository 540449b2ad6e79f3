package analyze

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"runtime"
	"testing"
	"unsafe"

	"github.com/mpiscope/mpiscope/internal/trace"
)

// failMap makes the store's mappings fail (as a kernel without room, or
// madvise refused, would) until the test ends.
func failMap(t *testing.T) {
	t.Helper()
	old := mapMem
	mapMem = func(int) ([]byte, error) { return nil, errors.New("no mapping in this test") }
	t.Cleanup(func() { mapMem = old })
}

func addr[T any](a []T) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(a))) }

// TestStoreLists: a list of storeMinBytes or more is mapped with its
// records copied; a smaller one, and one of a type with pointers, stay on
// the heap; room given back is carved into chunks, 64-byte aligned; close
// unmaps every mapping once.
func TestStoreLists(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the store maps memory on Linux only")
	}
	maps0, unmaps0 := storeMaps.Load(), storeUnmaps.Load()
	st := newStore()
	first := []sendRec{{flow: 1, enter: 2, tix: 3, key: 4}, {flow: 5, enter: 6, tix: 7, key: 8}}
	const n = 11264 // 24-byte records: 270,336 bytes, 66 pages, above storeMinBytes
	a := storeGrow(st, first, n)
	if !st.owns(addr(a)) || len(a) != 2 || cap(a) != n || a[0] != first[0] || a[1] != first[1] {
		t.Fatalf("mapped list: owned %v, len %d, cap %d (want %d), records %v", st.owns(addr(a)), len(a), cap(a), n, a[:2])
	}
	for i := range n - 2 {
		a = append(a, sendRec{flow: uint64(i)})
	}
	if !st.owns(addr(a)) {
		t.Fatal("list filled to its room moved")
	}
	small := storeGrow(st, first, storeMinBytes/24-1)
	if st.owns(addr(small)) || cap(small) != storeMinBytes/24-1 || small[1] != first[1] {
		t.Errorf("list below storeMinBytes: owned %v, cap %d", st.owns(addr(small)), cap(small))
	}
	type withPtr struct {
		s string
		x [64]byte
	}
	if p := storeGrow[withPtr](st, nil, 10000); st.owns(addr(p)) {
		t.Error("a list of a type with pointers was mapped")
	}
	if got := storeMaps.Load() - maps0; got != 1 {
		t.Errorf("%d mappings, want 1", got)
	}
	// 64 candidates of 56 bytes: 3584 bytes a chunk; the list's room
	// (270,336 bytes, at a page) holds 75 of them, the 76th maps a region.
	base := addr(a)
	storeRelease(st, a)
	for k := range 75 {
		c := storeChunk[cand](st, 64)
		if p := addr(c); cap(c) != 64 || p%64 != 0 || p < base || p+64*56 > base+n*24 {
			t.Fatalf("chunk %d at %#x (cap %d) not in the given back room at %#x", k, p, cap(c), base)
		}
	}
	if got := storeMaps.Load() - maps0; got != 1 {
		t.Errorf("%d mappings after 75 chunks, want 1", got)
	}
	c := storeChunk[cand](st, 64)
	if p := addr(c); p >= base && p < base+n*24 || !st.owns(p) {
		t.Errorf("chunk 76 at %#x: want a new region", p)
	}
	if got := storeMaps.Load() - maps0; got != 2 {
		t.Errorf("%d mappings after 76 chunks, want 2", got)
	}
	st.close()
	st.close()
	if got := storeUnmaps.Load() - unmaps0; got != 2 {
		t.Errorf("%d unmapped, want 2", got)
	}
	var nilStore *store
	if c := storeChunk[cand](nilStore, 8); cap(c) != 8 {
		t.Errorf("nil store's chunk: cap %d", cap(c))
	}
	nilStore.close()
}

// TestStoreFallback: when mapping fails the lists are the heap's, and
// the store stops trying.
func TestStoreFallback(t *testing.T) {
	failMap(t)
	maps0 := storeMaps.Load()
	st := newStore()
	a := storeGrow(st, []recvRec{{flow: 9}}, 1<<20)
	if cap(a) != 1<<20 || a[0].flow != 9 || st.owns(addr(a)) || !st.heap {
		t.Errorf("fallback list: cap %d, first %v, owned %v, heap %v", cap(a), a[0], st.owns(addr(a)), st.heap)
	}
	if c := storeChunk[cand](st, 100); cap(c) != 100 {
		t.Errorf("fallback chunk: cap %d", cap(c))
	}
	st.close()
	if got := storeMaps.Load() - maps0; got != 0 {
		t.Errorf("%d mappings, want 0", got)
	}
}

// TestPointerFree: the records the store holds have no pointers; the
// check sees those of other types.
func TestPointerFree(t *testing.T) {
	for _, v := range []any{callTimes{}, sendRec{}, recvRec{}, collRec{}, cand{}, [4]int32{}} {
		if !pointerFree(reflect.TypeOf(v)) {
			t.Errorf("%T: pointers found", v)
		}
	}
	for _, v := range []any{"", []int{}, map[int]int{}, &cand{}, struct{ a [2]*int }{}, struct{ f func() }{}} {
		if pointerFree(reflect.TypeOf(v)) {
			t.Errorf("%T: no pointers found", v)
		}
	}
}

// TestStoreUnmapsAll: an analysis in memory maps its lists and unmaps all
// of them, and its result is that of the lists on the heap.
func TestStoreUnmapsAll(t *testing.T) {
	dir := t.TempDir()
	if err := trace.WriteSynth(dir, trace.SynthSpec{Ranks: 4, Events: 400000, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	j, err := trace.OpenJob(dir)
	if err != nil {
		t.Fatal(err)
	}
	maps0, unmaps0 := storeMaps.Load(), storeUnmaps.Load()
	var mapped, grouped int64
	mem, err := Analyze(j, Options{Workers: 2, Phase: func(name string) {
		switch name {
		case "match":
			mapped = storeMaps.Load() - maps0
		case "group":
			grouped = storeUnmaps.Load() - unmaps0
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	maps, unmaps := storeMaps.Load()-maps0, storeUnmaps.Load()-unmaps0
	if runtime.GOOS == "linux" && (mapped == 0 || grouped != 0) {
		t.Errorf("%d mappings by the matching's end, %d unmapped by the grouping's: want some, none (kept for the lists after it)", mapped, grouped)
	}
	if unmaps != maps {
		t.Errorf("%d mappings, %d unmapped", maps, unmaps)
	}
	failMap(t)
	heap, err := Analyze(j, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(mem)
	b, _ := json.Marshal(heap)
	if !bytes.Equal(a, b) {
		t.Errorf("result with the store differs from the heap's:\n%s\n%s", a, b)
	}
	if mem.Messages != 80000 {
		t.Errorf("%d messages, want 80000", mem.Messages)
	}
}

// TestStoreList: a sorted copy of storeMinBytes or more is in the store,
// of length n, carved from room given back when it fits; a smaller one
// is the heap's, zeroed.
func TestStoreList(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the store maps memory on Linux only")
	}
	maps0 := storeMaps.Load()
	st := newStore()
	defer st.close()
	const n = storeMinBytes/56 + 1
	a := storeList[cand](st, n+8)
	if len(a) != n+8 || !st.owns(addr(a)) {
		t.Fatalf("list of %d: len %d, owned %v", n, len(a), st.owns(addr(a)))
	}
	storeRelease(st, a)
	b := storeList[cand](st, n)
	if addr(b) != addr(a) || len(b) != n {
		t.Errorf("list after giving back: at %#x (len %d), want the room at %#x", addr(b), len(b), addr(a))
	}
	if got := storeMaps.Load() - maps0; got != 1 {
		t.Errorf("%d mappings, want 1", got)
	}
	small := storeList[cand](st, storeMinBytes/56-1)
	if st.owns(addr(small)) || small[len(small)-1] != (cand{}) {
		t.Errorf("small list: owned %v, last %v", st.owns(addr(small)), small[len(small)-1])
	}
}

// TestSysMapHuge: a mapping with huge pages asked for is zeroed memory
// of the size asked, rounded up to pages, and unmaps.
func TestSysMapHuge(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the store maps memory on Linux only")
	}
	for _, huge := range []bool{false, true} {
		b, err := sysMap(4<<20+1, huge)
		if err != nil {
			t.Fatalf("huge %v: %v", huge, err)
		}
		if len(b) != 4<<20+4096 || b[0] != 0 || b[len(b)-1] != 0 {
			t.Errorf("huge %v: %d bytes, first %d, last %d", huge, len(b), b[0], b[len(b)-1])
		}
		b[len(b)-1] = 1
		if err := sysUnmap(b); err != nil {
			t.Errorf("huge %v: unmap: %v", huge, err)
		}
	}
}

// TestStoreGiveBack: room given back joins the room before and after it
// (a list carved from a piece and given back makes the piece whole
// again), and a list is carved from the smallest piece it fits.
func TestStoreGiveBack(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the store maps memory on Linux only")
	}
	maps0 := storeMaps.Load()
	st := newStore()
	defer st.close()
	const mib = 1 << 20
	a := storeBytes(st, mib) // a region of storeRegion bytes: a its first MiB
	b := storeBytes(st, mib) // its second
	base := addr(a)
	if addr(b) != base+mib || len(st.free) != 1 || len(st.free[0]) != storeRegion-2*mib {
		t.Fatalf("b at +%d, %d pieces free", addr(b)-base, len(st.free))
	}
	storeRelease(st, a) // not joined: b is between a and the rest
	if len(st.free) != 2 {
		t.Fatalf("%d pieces after giving a back, want 2", len(st.free))
	}
	storeRelease(st, b) // joins a and the rest: the region whole again
	if len(st.free) != 1 || addr(st.free[0]) != base || len(st.free[0]) != storeRegion {
		t.Fatalf("after giving b back: %d pieces, the last at +%d of %d bytes; want the region whole", len(st.free), addr(st.free[len(st.free)-1])-base, len(st.free[len(st.free)-1]))
	}
	// The smallest piece that fits: a MiB given back before a larger rest.
	c := storeBytes(st, mib)
	d := storeBytes(st, mib)
	storeRelease(st, c)
	if e := storeBytes(st, 4096); addr(e) != addr(c) {
		t.Errorf("4 KiB carved at +%d, want +%d (the smaller piece)", addr(e)-base, addr(c)-base)
	}
	if f := storeBytes(st, storeRegion-2*mib); addr(f) != addr(d)+mib {
		t.Errorf("the rest carved at +%d, want +%d", addr(f)-base, addr(d)+mib-base)
	}
	if got := storeMaps.Load() - maps0; got != 1 {
		t.Errorf("%d mappings, want 1", got)
	}
}

// TestStoreTrim: trim keeps the room asked for, its records as they
// were, and gives the pages of the rest back to the kernel: they read as
// zeroes, still in the store's mappings.
func TestStoreTrim(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the store maps memory on Linux only")
	}
	st := newStore()
	defer st.close()
	a := storeGrow[int64](st, nil, 1<<16) // 512 KiB, a mapping of its own
	for i := range cap(a) {
		a = append(a, int64(i+1))
	}
	storeRelease(st, a)
	st.trim(1)
	if a[0] != 1 || a[len(a)-1] != 1<<16 {
		t.Errorf("kept room: %d, %d; want 1, %d", a[0], a[len(a)-1], 1<<16)
	}
	st.trim(0)
	if a[0] != 0 || a[len(a)-1] != 0 || !st.owns(addr(a)) {
		t.Errorf("room given back: %d, %d, owned %v; want zeroes, owned", a[0], a[len(a)-1], st.owns(addr(a)))
	}
	maps0 := storeMaps.Load()
	if b := storeList[int64](st, 1<<16); addr(b) != addr(a) || storeMaps.Load() != maps0 {
		t.Errorf("a list after trim at %#x, want the room at %#x, no new mapping", addr(b), addr(a))
	}
}
