package trace

import (
	"bytes"
	"encoding/binary"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// otf2FileWant is what an event file of chunk size size holds for the
// records recs (each an event at time its index): chunks of a header
// (first and last event numbers), timestamped records and zeros to the
// chunk size, a record going to the next chunk when it would leave fewer
// than two bytes; the last chunk ends with end-of-chunk and end-of-file.
func otf2FileWant(size int, recs [][]byte) []byte {
	var out, chunk []byte
	first, n := uint64(1), uint64(0)
	head := func(last uint64) []byte {
		h := []byte{otf2ChunkHeader, otf2Endian}
		h = binary.LittleEndian.AppendUint64(h, first)
		return binary.LittleEndian.AppendUint64(h, last)
	}
	for i, r := range recs {
		if otf2HeaderLen+len(chunk)+len(r)+2+9 > size {
			out = append(append(out, head(n)...), chunk...)
			out = append(out, make([]byte, size-otf2HeaderLen-len(chunk))...)
			chunk, first = nil, n+1
		}
		chunk = append(chunk, otf2Timestamp)
		chunk = binary.LittleEndian.AppendUint64(chunk, uint64(i))
		chunk = append(chunk, r...)
		n++
	}
	out = append(append(out, head(n)...), chunk...)
	return append(out, otf2EndOfChunk, otf2EndOfFile)
}

// TestOTF2FileChunks: an event file is the chunks otf2FileWant makes,
// byte for byte, for files of no full chunk, one, and several (a chunk
// exactly full, records of every size up to 300 bytes), in direct writes
// (t.TempDir()), where the file system refuses them (/dev/shm) and where
// they are refused after 0 or 1 chunks.
func TestOTF2FileChunks(t *testing.T) {
	dirs := directDirs(t)
	stub := stubDirectWrites(t)
	rng := rand.New(rand.NewSource(1))
	var recs [][]byte
	for len(recs) < 40000 {
		r := make([]byte, 1+rng.Intn(300))
		rng.Read(r)
		recs = append(recs, r)
	}
	// Two records that fill a chunk exactly (but the two bytes a last
	// chunk ends with), and a third in the next chunk.
	l := (otf2EvtChunk-otf2HeaderLen-2)/2 - 9
	exact := [][]byte{make([]byte, l), make([]byte, l), {7}}
	if got := otf2HeaderLen + 2*(9+len(exact[0])) + 2; got != otf2EvtChunk {
		t.Fatalf("the exact chunk is %d bytes", got)
	}
	for _, refuse := range []int{-1, 0, 1} {
		for _, dir := range dirs {
			for _, c := range []struct {
				name string
				recs [][]byte
			}{{"none", nil}, {"small", recs[:100]}, {"exact", exact}, {"many", recs}} {
				stub.refuseAfter, stub.taken = refuse, 0
				path := filepath.Join(dir, "0.evt")
				f, err := newOTF2File(path, otf2EvtChunk, true)
				if err != nil {
					t.Fatal(err)
				}
				for i, r := range c.recs {
					f.add(r, uint64(i), true)
				}
				if err := f.close(); err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				want := otf2FileWant(otf2EvtChunk, c.recs)
				if !bytes.Equal(got, want) {
					i := 0
					for i < min(len(got), len(want)) && got[i] == want[i] {
						i++
					}
					t.Errorf("%s, %s records, refused after %d: %d bytes, want %d; first difference at %d", dir, c.name, refuse, len(got), len(want), i)
				}
				if c.name == "many" {
					t.Logf("%s, refused after %d: %d bytes, %d direct writes", dir, refuse, len(got), stub.taken)
					if full := len(want) / otf2EvtChunk; dir == dirs[0] && refuse == -1 && oDirect != 0 && stub.taken != (full+otf2Span-1)/otf2Span {
						t.Errorf("%d direct writes, want %d (one per %d full chunks)", stub.taken, (full+otf2Span-1)/otf2Span, otf2Span)
					}
				}
			}
		}
	}
}

// TestCU: cu appends what the format asks (the number of significant
// bytes, then those bytes little-endian; 0xff for undefined) after any
// bytes, whatever the slice's spare capacity (none, 1 to 9 bytes, more),
// and leaves the bytes before alone.
func TestCU(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	want := func(v uint64) []byte {
		var b []byte
		for x := v; x != 0; x >>= 8 {
			b = append(b, byte(x))
		}
		return append([]byte{byte(len(b))}, b...)
	}
	vals := []uint64{0, 1, 0xff, 0x100, 1<<32 - 2, 1 << 32, 1<<64 - 2}
	for n := 1; n <= 64; n++ {
		vals = append(vals, rng.Uint64()>>(64-n)|1<<(n-1))
	}
	for _, v := range vals {
		for spare := 0; spare <= 12; spare++ {
			pre := []byte{0xaa, 0xbb, 0xcc}
			b := make([]byte, len(pre), len(pre)+spare)
			copy(b, pre)
			got := cu64(b, v)
			if w := append(slices.Clone(pre), want(v)...); !bytes.Equal(got, w) {
				t.Fatalf("cu64(%#x), %d spare bytes: % x, want % x", v, spare, got, w)
			}
			if v < 1<<32-1 {
				if got := cu32(b, uint32(v)); !bytes.Equal(got, append(slices.Clone(pre), want(v)...)) {
					t.Fatalf("cu32(%#x): % x", v, got)
				}
			}
		}
	}
	if got := cu32(nil, otf2Undef32); !bytes.Equal(got, []byte{0xff}) {
		t.Errorf("cu32(undefined): % x", got)
	}
	if got := cu64([]byte{1}, otf2Undef64); !bytes.Equal(got, []byte{1, 0xff}) {
		t.Errorf("cu64(undefined): % x", got)
	}
}

// TestOTF2Bufs: event files sharing a pool write the chunks otf2FileWant
// makes, and take aligned buffers as otf2Bufs promises: a file that fills
// a chunk with the pool empty allocates one and leaves it in the pool when
// closed; the next file takes that same buffer at its first record, even
// for a few records, and gives it back; a file of a few records with the
// pool empty grows its chunk by itself (no buffer) and never exceeds
// otf2FirstCap; one that grows past otf2FirstCap takes a buffer then.
func TestOTF2Bufs(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	var recs [][]byte
	for len(recs) < 20000 {
		r := make([]byte, 1+rng.Intn(200))
		rng.Read(r)
		recs = append(recs, r)
	}
	dir := t.TempDir()
	pool := &otf2Bufs{}
	write := func(name string, recs [][]byte, check func(f *otf2File)) {
		t.Helper()
		path := filepath.Join(dir, name)
		f, err := newOTF2File(path, otf2EvtChunk, true)
		if err != nil {
			t.Fatal(err)
		}
		f.pool = pool
		for i, r := range recs {
			f.add(r, uint64(i), true)
		}
		check(f)
		if err := f.close(); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if want := otf2FileWant(otf2EvtChunk, recs); !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes, want %d (or other bytes)", name, len(got), len(want))
		}
	}
	var first []byte
	write("many.evt", recs, func(f *otf2File) {
		if len(pool.free) != 0 || f.buf == nil {
			t.Errorf("many: %d free buffers, buffer %v; want 0 and one", len(pool.free), f.buf != nil)
		}
		first = f.buf
	})
	if len(pool.free) != 1 || &pool.free[0][0] != &first[0] || len(first) != otf2Span*otf2EvtChunk {
		t.Fatalf("after many: %d free buffers, want its one of %d bytes", len(pool.free), otf2Span*otf2EvtChunk)
	}
	write("few.evt", recs[:10], func(f *otf2File) {
		if len(pool.free) != 0 || f.buf == nil || &f.buf[0] != &first[0] || &f.chunk[0] != &f.buf[otf2HeaderLen] {
			t.Errorf("few: %d free buffers, want the pool's one taken and appended into in place", len(pool.free))
		}
	})
	if len(pool.free) != 1 || &pool.free[0][0] != &first[0] {
		t.Fatalf("after few: %d free buffers, want the same one back", len(pool.free))
	}
	pool.take(otf2EvtChunk)
	// 10 records of at most 210 bytes: a chunk of at most 4 KiB, its own.
	write("alone.evt", recs[:10], func(f *otf2File) {
		if f.buf != nil || cap(f.chunk) != 4096 {
			t.Errorf("alone: buffer %v, chunk capacity %d; want none and 4096", f.buf != nil, cap(f.chunk))
		}
	})
	// Records past otf2FirstCap bytes and short of a chunk: the chunk
	// grows to otf2FirstCap, then takes a buffer of its own.
	k, size := 0, 0
	for size <= otf2FirstCap+100 {
		size += 9 + len(recs[k])
		k++
	}
	write("grown.evt", recs[:k], func(f *otf2File) {
		if f.buf == nil || len(f.buf) != otf2Span*otf2EvtChunk || &f.chunk[0] != &f.buf[otf2HeaderLen] || len(f.chunk) != size {
			t.Errorf("grown: buffer %v, %d bytes in the chunk; want one, %d", f.buf != nil, len(f.chunk), size)
		}
	})
	if len(pool.free) != 1 || pool.spans != 2 {
		t.Errorf("after grown: %d free buffers, %d of %d chunks allocated; want 1, 2", len(pool.free), pool.spans, otf2Span)
	}
	// Past otf2SpanBufs buffers of otf2Span chunks, new ones are one
	// chunk: the files write the same.
	pool = &otf2Bufs{spans: otf2SpanBufs}
	write("one.evt", recs, func(f *otf2File) {
		if len(f.buf) != otf2EvtChunk {
			t.Errorf("one: a buffer of %d bytes, want %d", len(f.buf), otf2EvtChunk)
		}
	})
}

// TestConvertOTF2Workers: a synthetic job of 4 ranks whose locations fill
// several chunks each (buffers of otf2Span chunks written, given back to
// the pool and taken by the next rank's location) converts on 2 and 4
// workers to the files it converts to on one, byte for byte (the anchor
// file, with its random id, aside); with -race, the pool shared between
// workers is checked too.
func TestConvertOTF2Workers(t *testing.T) {
	dir := t.TempDir()
	if err := WriteSynth(dir, SynthSpec{Ranks: 4, Events: 800_000, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	j, err := OpenJob(dir)
	if err != nil {
		t.Fatal(err)
	}
	convert := func(workers int) map[string][]byte {
		out := filepath.Join(t.TempDir(), "otf2")
		if _, err := ConvertOTF2(NewWalker(j, WalkOptions{}), out, workers); err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{}
		for _, sub := range []string{".", "traces"} {
			ents, err := os.ReadDir(filepath.Join(out, sub))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				if e.IsDir() || e.Name() == "traces.otf2" {
					continue
				}
				b, err := os.ReadFile(filepath.Join(out, sub, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				files[filepath.Join(sub, e.Name())] = b
			}
		}
		return files
	}
	want := convert(1)
	if b := want[filepath.Join("traces", "0.evt")]; len(b) < (otf2Span+1)*otf2EvtChunk {
		t.Fatalf("rank 0's event file is %d bytes, want more than %d chunks", len(b), otf2Span+1)
	}
	for _, workers := range []int{2, 4} {
		got := convert(workers)
		if len(got) != len(want) {
			t.Errorf("%d workers: %d files, want %d", workers, len(got), len(want))
		}
		for name, b := range want {
			if !bytes.Equal(got[name], b) {
				t.Errorf("%d workers: %s is %d bytes unlike one worker's %d (or other bytes)", workers, name, len(got[name]), len(b))
			}
		}
	}
}
