package trace

import (
	"encoding/binary"
	"math/rand"
	"slices"
	"testing"
)

// postWindows returns w windows of k nonblocking posts each (MPI_Isend
// to rank 1, tag 5, 8 bytes, one call site, as bw_8 makes them), the
// completions record of their MPI_Waitall and its call: per post a
// duration of 200 to 455 ticks, a gap of 10 to 73; a gap of 70,000 ticks
// (2^16 or more) before post k/2 of the second window, which must start
// a new posts record.
func postWindows(w, k int) []Event {
	rng := rand.New(rand.NewSource(5))
	var evs []Event
	t := uint64(1 << 30)
	for i := 0; i < w; i++ {
		for j := 0; j < k; j++ {
			t += 10 + uint64(rng.Intn(64))
			if i == 1 && j == k/2 {
				t += 70_000
			}
			e := send(227, t, t+200+uint64(rng.Intn(256)), 1, 5, 8)
			e.Flags |= FReq
			e.Comm, e.PC = 0, 0x401000
			e.Req = 0x55d000000000 + uint64(i*k+j)*0x80
			evs = append(evs, e)
			t = e.T1
		}
		t += 1000
		end := t + 5000
		for j := 0; j < k; j++ {
			evs = append(evs, Event{Kind: KComplete, Flags: FSend, Fn: 371, Comm: -1, T0: end, T1: end,
				Req: evs[len(evs)-k].Req, SPeer: -1, STag: -1, RPeer: -1, RTag: -1})
		}
		evs = append(evs, Event{Kind: KCall, Fn: 371, Comm: -1, T0: t, T1: end, PC: 0x401100, SPeer: -1, STag: -1, RPeer: -1, RTag: -1})
		t = end
	}
	return evs
}

// TestRawPostsRoundTrip: N windows of 64 posts in one raw block decode to
// exactly the N*64 posts written, with their times, peers, tags, bytes
// and requests: the first post defines the slot (a full record), the
// other 63 of the first window are one posts record, each later window's
// 64 one record, and the second window's two, split at the gap of 2^16
// ticks or more.
func TestRawPostsRoundTrip(t *testing.T) {
	const w, k = 5, 64
	evs := postWindows(w, k)
	b := AppendRaw(nil, 7, evs)
	recs, posts, err := RawPostsRecords(b)
	if err != nil {
		t.Fatal(err)
	}
	if recs != w+1 || posts != w*k-1 {
		t.Errorf("%d posts records of %d posts, want %d of %d", recs, posts, w+1, w*k-1)
	}
	tid, got, err := DecodeRaw(b, nil)
	if err != nil || tid != 7 {
		t.Fatalf("tid %d, %v", tid, err)
	}
	if len(got) != len(evs) {
		t.Fatalf("%d events, want %d", len(got), len(evs))
	}
	n := 0
	for i := range evs {
		if got[i] != evs[i] {
			t.Fatalf("event %d:\n got %+v\nwant %+v", i, got[i], evs[i])
		}
		if got[i].Kind == KCall && got[i].Fn == 227 {
			n++
		}
	}
	if n != w*k {
		t.Errorf("%d posts, want %d", n, w*k)
	}
	// The time index reads a block's first event; a prefix of the block
	// decodes the first events of a posts record.
	_, _, body, _ := rawHeader(b)
	first, err := decodeRawRecords(body, 3, nil, false)
	if err != nil || len(first) != 3 || !slices.Equal(first, evs[:3]) {
		t.Errorf("prefix of 3 events: %v, %+v", err, first)
	}
}

// TestRawPostsCorrupt: posts records cut short, claiming more posts than
// the block has events, of an undefined slot or with reserved bits set
// are errors that say where; a bit flipped anywhere in a block of posts
// records decodes to an error or to events, never a panic; a trace file
// whose posts record is cut or corrupt reports the file and offset.
func TestRawPostsCorrupt(t *testing.T) {
	le := binary.LittleEndian
	good := AppendRaw(nil, 1, postWindows(3, 64))
	if n, _, err := RawPostsRecords(good); err != nil || n == 0 {
		t.Fatalf("the block holds %d posts records (%v), want some", n, err)
	}
	// A full record of a send with a request in slot 3, then a posts
	// record.
	def := func() []byte {
		b := le.AppendUint32(nil, 2|3<<2|KCall<<12)
		b = le.AppendUint16(b, 227)
		b = le.AppendUint16(b, 1|uint16(FSend|FReq)<<11)
		b = le.AppendUint64(b, 1000)
		b = le.AppendUint64(b, 100)
		b = le.AppendUint64(b, 0x401000)
		b = le.AppendUint64(b, 0x100)
		b = le.AppendUint64(b, 8)
		b = le.AppendUint64(b, 0)
		for _, x := range []int32{1, 5, -1, -1} {
			b = le.AppendUint32(b, uint32(x))
		}
		return b
	}
	rec := func(h, count uint32, entries int) []byte {
		b := le.AppendUint32(nil, h)
		b = le.AppendUint32(b, count)
		b = le.AppendUint64(b, 5000)
		for i := 0; i < entries; i++ {
			b = le.AppendUint32(b, 10|100<<16)
			b = le.AppendUint64(b, 0x200+uint64(i))
		}
		return b
	}
	ok := rawPosts<<12 | 3<<2
	block := func(n int, body []byte) []byte { return append(RawHeader(nil, 1, uint64(n), len(body)), body...) }
	if _, evs, err := DecodeRaw(block(3, append(def(), rec(uint32(ok), 2, 2)...)), nil); err != nil || len(evs) != 3 ||
		evs[2].T0 != 5000+10+100+10 || evs[2].Req != 0x201 || evs[2].SPeer != 1 || evs[2].SBytes != 8 {
		t.Fatalf("a well-formed block: %v, %+v", err, evs)
	}
	wantRawErrors(t, good, map[string][]byte{
		"slot not defined":    block(2, rec(uint32(ok), 2, 2)),
		"more than the block": block(3, append(def(), rec(uint32(ok), 3, 3)...)),
		"count 0":             block(2, append(def(), rec(uint32(ok), 0, 1)...)),
		"cut entry":           block(3, append(def(), rec(uint32(ok), 2, 2)[:35]...)),
		"cut header":          block(2, append(def(), rec(uint32(ok), 1, 0)[:12]...)),
		"bit 1 set":           block(3, append(def(), rec(uint32(ok)|2, 2, 2)...)),
		"high bits set":       block(3, append(def(), rec(uint32(ok)|1<<18, 2, 2)...)),
	})
	// In a file: cut inside the second posts record, and its count
	// raised past the block's events.
	_, _, body, _ := rawHeader(good)
	second := -1
	for off, seen := 0, 0; off+4 <= len(body); off += 4 {
		if h := le.Uint32(body[off:]); h&1 == 0 && h>>12&0x3f == rawPosts && h>>18 == 0 {
			if seen++; seen == 2 {
				second = off
				break
			}
		}
	}
	if second < 0 {
		t.Fatal("no second posts record")
	}
	raised := slices.Clone(good)
	le.PutUint32(raised[len(good)-len(body)+second+4:], 1000)
	_, n, _, _ := rawHeader(good)
	cut := append(RawHeader(nil, 1, uint64(n), second+40), body[:second+40]...)
	for name, p := range map[string][]byte{"cut": cut, "count raised": raised} {
		wantCorruptRaw(t, name, p)
	}
}
