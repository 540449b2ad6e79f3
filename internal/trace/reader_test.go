package trace

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func manyEvents(n int) []Event {
	evs := make([]Event, 0, n)
	t := uint64(1000)
	for i := 0; i < n; i++ {
		var e Event
		switch i % 4 {
		case 0:
			e = send(0, t, t+300, 1, int32(i%7), 4096)
		case 1:
			e = recv(1, t, t+500, 1, int32(i%7), 4096)
		case 2:
			e = coll(6, t, t+900, 8)
		default:
			e = call(4, t, t+50)
		}
		evs = append(evs, e)
		t += 1000 + uint64(i%13)
	}
	return evs
}

func TestTruncated(t *testing.T) {
	job := t.TempDir()
	path := synthRank(t, job, 0, 1, manyEvents(1000), 100, nil, true)
	full, _ := os.ReadFile(path)
	r, err := OpenRank(path)
	if err != nil || r.Events != 1000 || !r.Complete || r.Warning != "" {
		t.Fatalf("full file: %v, %+v", err, r)
	}
	// Cut in the middle of the 6th events block.
	cut := len(full) * 11 / 20
	os.WriteFile(path, full[:cut], 0o666)
	r, err = OpenRank(path)
	if err != nil {
		t.Fatalf("truncated file: %v", err)
	}
	if r.Complete || !strings.Contains(r.Warning, "truncated") || !strings.Contains(r.Warning, "bytes") {
		t.Errorf("warning %q", r.Warning)
	}
	var n int
	if err := r.Scan(func(tid int, evs []Event) error { n += len(evs); return nil }); err != nil {
		t.Fatal(err)
	}
	if n == 0 || n%100 != 0 || n >= 1000 || uint64(n) != r.Events {
		t.Errorf("read %d events up to the cut (metadata says %d)", n, r.Events)
	}
}

func TestCorrupt(t *testing.T) {
	job := t.TempDir()
	path := synthRank(t, job, 0, 1, manyEvents(300), 100, nil, true)
	full, _ := os.ReadFile(path)
	bad := append([]byte(nil), full...)
	bad[len(bad)/2] ^= 0x55
	os.WriteFile(path, bad, 0o666)
	_, err := OpenRank(path)
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Offset <= 0 || !strings.Contains(err.Error(), path) {
		t.Fatalf("want a CorruptError naming file and offset, got %v", err)
	}
	os.WriteFile(path, []byte("not a trace"), 0o666)
	if _, err := OpenRank(path); !errors.As(err, &ce) || ce.Offset != 0 {
		t.Errorf("bad magic: %v", err)
	}
}

func TestRoundTrip(t *testing.T) {
	in := manyEvents(500)
	in[3].Kind, in[3].Flags, in[3].Req = KComplete, FRecv|FLocal, 0xdeadbeef
	job := t.TempDir()
	path := synthRank(t, job, 0, 1, in, 64, []Sync{{LocalNs: 5, OffsetNs: -3, RTTNs: 9}}, true)
	r, err := OpenRank(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []Event
	r.Scan(func(tid int, evs []Event) error { out = append(out, evs...); return nil })
	if len(out) != len(in) {
		t.Fatalf("%d events, want %d", len(out), len(in))
	}
	for i := range in {
		a, b := in[i], out[i]
		if a.Flags&(FSend|FColl) == 0 {
			a.SPeer, a.STag, a.SBytes = -1, -1, 0
		}
		if a.Flags&FRecv == 0 {
			a.RPeer, a.RTag, a.RBytes = -1, -1, 0
		}
		if a != b {
			t.Fatalf("event %d: got %+v, want %+v", i, b, a)
		}
	}
	if len(r.Syncs) != 1 || r.Syncs[0].OffsetNs != -3 {
		t.Errorf("syncs %+v", r.Syncs)
	}
}

// FuzzReader: no input makes the reader panic or hang; errors are typed.
func FuzzReader(f *testing.F) {
	job := f.TempDir()
	path := synthRank(f, job, 0, 2, manyEvents(40), 10, []Sync{{1, 2, 3}}, true)
	full, _ := os.ReadFile(path)
	f.Add(full)
	f.Add(full[:len(full)/2])
	raw, _ := os.ReadFile(synthRankAs(f, f.TempDir(), 0, 2, manyEvents(8), 4, nil, true, BRaw))
	f.Add(raw)
	pad := make([]byte, 40) // padding blocks before the first block, as direct writes leave them
	PadBlock(pad[:MinPad])
	PadBlock(pad[MinPad:])
	f.Add(append(append([]byte(Magic), pad...), raw[len(Magic):]...))
	f.Add([]byte(Magic))
	// Completions records (format version 4): a Waitall's 6 completions
	// among other events.
	tk := uint64(1 << 20)
	cpl := cplRun(rand.New(rand.NewSource(1)), manyEvents(4), 6, &tk)
	cpl = append(cpl, manyEvents(2)...)
	cplRaw, _ := os.ReadFile(synthRankAs(f, f.TempDir(), 0, 2, cpl, 12, nil, true, BRaw))
	f.Add(cplRaw)
	// Posts records (format version 5): windows of 64 posts.
	postsRaw, _ := os.ReadFile(synthRankAs(f, f.TempDir(), 0, 2, postWindows(3, 64), 200, nil, true, BRaw))
	f.Add(postsRaw)
	// One-sided and MPI-IO records (kinds 7 and 8), an I/O completion.
	objJob := f.TempDir()
	objRank(f, objJob, 0, 2, objEvents(0))
	obj, _ := os.ReadFile(RankPath(objJob, 0))
	f.Add(obj)
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "r0.mst")
		os.WriteFile(p, data, 0o666)
		r := fuzzOpenRank(t, p)
		if r == nil {
			return
		}
		r.Scan(func(tid int, evs []Event) error { return nil })
		// The walk resolves what the events say (windows, files,
		// requests) without a panic, whatever they say.
		w := NewWalker(&Job{Ranks: []*Rank{r}}, WalkOptions{NoClock: true})
		w.Walk(callVisitor(func(*Call) error { return nil }))
		br, err := NewBlockReader(bytes.NewReader(data), "x")
		if err == nil {
			for i := 0; i < 1<<16; i++ {
				if _, _, err := br.Next(); err != nil {
					if err != io.EOF {
						var te *TruncatedError
						var ce *CorruptError
						if !errors.As(err, &te) && !errors.As(err, &ce) {
							t.Fatalf("untyped error %v", err)
						}
					}
					break
				}
			}
		}
	})
}

// BenchmarkConvert reports bytes per event on disk and conversion speed.
func BenchmarkConvert(b *testing.B) {
	job := b.TempDir()
	const n = 200000
	path := synthRank(b, job, 0, 2, manyEvents(n), 60000, nil, true)
	synthRank(b, job, 1, 2, manyEvents(n), 60000, nil, true)
	st, _ := os.Stat(path)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j, err := OpenJob(job)
		if err != nil {
			b.Fatal(err)
		}
		w := NewWalker(j, WalkOptions{})
		p := NewPerfettoWriter(io.Discard)
		if err := w.Walk(p); err != nil {
			b.Fatal(err)
		}
		p.Close()
	}
	b.ReportMetric(float64(2*n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(st.Size())/n, "disk-B/event")
}

// readAll returns a rank file's events.
func readAll(t *testing.T, path string) []Event {
	t.Helper()
	r, err := OpenRank(path)
	if err != nil {
		t.Fatal(err)
	}
	var all []Event
	if err := r.Scan(func(tid int, evs []Event) error {
		if tid != 1000 {
			t.Errorf("tid %d", tid)
		}
		all = append(all, evs...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if uint64(len(all)) != r.Events {
		t.Errorf("metadata says %d events, read %d", r.Events, len(all))
	}
	return all
}

// TestRawAndPack: raw (W) blocks read back as the same events as
// compressed ones, and Pack turns a raw file into a compressed one with
// the same events.
func TestRawAndPack(t *testing.T) {
	evs := manyEvents(1000)
	evs = append(evs, Event{Kind: KComplete, Fn: 4, T0: 5, T1: 5, Req: 77, Comm: -1, Flags: FRecv | FLocal,
		SPeer: -1, STag: -1, RPeer: 1, RTag: 3, RBytes: 12})
	want := readAll(t, synthRank(t, t.TempDir(), 0, 2, evs, 100, nil, true))
	if len(want) != len(evs) {
		t.Fatalf("%d events read, %d written", len(want), len(evs))
	}
	path := synthRankAs(t, t.TempDir(), 0, 2, evs, 100, nil, true, BRaw)
	rawSize := fileSize(t, path)
	got := readAll(t, path)
	if !slices.Equal(got, want) {
		t.Fatalf("raw blocks read differently from compressed ones")
	}
	if err := Pack(path); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, path); !slices.Equal(got, want) {
		t.Fatalf("packed file read differently")
	}
	if s := fileSize(t, path); s*5 > rawSize {
		t.Errorf("packed %d bytes from %d raw: expected at least 5:1", s, rawSize)
	}
	r, _ := OpenRank(path)
	if !r.Complete {
		t.Errorf("the final block was lost by packing")
	}
	// Packing twice changes nothing.
	before, _ := os.ReadFile(path)
	if err := Pack(path); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Errorf("second pack rewrote the file")
	}
}

// TestRawCorrupt: a raw block whose length does not fit its count, an
// event of an unknown kind, or a reference to a dictionary slot the block
// did not define, is reported with file and offset.
func TestRawCorrupt(t *testing.T) {
	for name, p := range map[string][]byte{
		"short": AppendRaw(nil, 1, manyEvents(3))[:50],
		"kind": func() []byte {
			b := AppendRaw(nil, 1, manyEvents(3))
			_, _, body, _ := rawHeader(b)
			b[len(b)-len(body)+1] |= 0xf << 4 // the first record's kind: 15, none
			return b
		}(),
		// A short record whose slot no full record of the block defined.
		"slot": RawHeader(nil, 1, 1, 12), // followed by the record below
	} {
		if name == "slot" {
			p = binary.LittleEndian.AppendUint32(p, 1|5<<2|10<<12)
			p = binary.LittleEndian.AppendUint64(p, 1000)
		}
		wantCorruptRaw(t, name, p)
	}
}

// TestRawCplsCorrupt: a raw block whose completions records are cut short,
// claim more completions than the block has events, or have a bit flipped
// anywhere decodes to an error or to events, never a panic; the cases
// built by hand are errors.
func TestRawCplsCorrupt(t *testing.T) {
	le := binary.LittleEndian
	tk := uint64(1 << 20)
	evs := cplRun(rand.New(rand.NewSource(3)), manyEvents(2), 40, &tk)
	good := AppendRaw(nil, 1, evs)
	if n, _, err := RawCplsRecords(good); err != nil || n == 0 {
		t.Fatalf("the block holds %d completions records (%v), want some", n, err)
	}
	rec := func(count uint32, fn uint16, entries ...uint64) []byte {
		b := le.AppendUint32(nil, rawCpls<<12|count<<18)
		b = le.AppendUint16(b, fn)
		b = le.AppendUint16(b, 0)
		b = le.AppendUint64(b, 5000)
		for _, e := range entries {
			b = le.AppendUint64(b, e)
		}
		return b
	}
	block := func(n int, body []byte) []byte { return append(RawHeader(nil, 1, uint64(n), len(body)), body...) }
	wantRawErrors(t, good, map[string][]byte{
		"more than the block":       block(1, rec(2, 3, 0x100|1<<56, 0x200|1<<56)),
		"count 0":                   block(1, append(rec(0, 3), make([]byte, 8)...)),
		"cut entry":                 block(2, rec(2, 3, 0x100|1<<56)),
		"receive fields cut":        block(1, append(rec(1, 3, 0x100|18<<56|1<<63), 1, 2, 3, 4)),
		"receive fields of a send":  block(1, append(rec(1, 3, 0x100|1<<56|1<<63), make([]byte, 16)...)),
		"reserved bits":             block(1, rec(1, 3, 0x100|1<<56|1<<61)),
		"function above 1023":       block(1, rec(1, 1024, 0x100|1<<56)),
		"header slot bits not zero": block(1, func() []byte { b := rec(1, 3, 0x100|1<<56); b[0] |= 4; return b }()),
	})
	for i := range good {
		DecodeRaw(good[:i], nil)
	}
}

func fileSize(t *testing.T, path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestRawDictionary: repeated event shapes take short records (12 bytes,
// 20 with a request), a new shape a full record (32, or 72 with message
// fields), and a block with more shapes than dictionary slots still
// decodes to the events it was made of.
func TestRawDictionary(t *testing.T) {
	send := Event{Kind: KCall, Flags: FSend | FReq, Fn: 3, Comm: 0, PC: 0x401000, SPeer: 1, STag: 7, SBytes: 8, RPeer: -1, RTag: -1}
	plain := Event{Kind: KCall, Fn: 2, Comm: -1, PC: 0x402000, SPeer: -1, STag: -1, RPeer: -1, RTag: -1}
	var evs []Event
	for i := 0; i < 100; i++ {
		s, p := send, plain
		s.T0, s.T1, s.Req = uint64(1000*i), uint64(1000*i+50), uint64(0x7000+i%3)
		p.T0, p.T1 = uint64(1000*i+100), uint64(1000*i+120)
		evs = append(evs, s, p)
	}
	b := AppendRaw(nil, 4, evs)
	_, n, body, err := rawHeader(b)
	if err != nil || n != 200 {
		t.Fatalf("header: %d events, %v", n, err)
	}
	if want := 72 + 32 + 99*(20+12); len(body) != want {
		t.Errorf("200 events take %d bytes, want %d", len(body), want)
	}
	tid, got, err := DecodeRaw(b, nil)
	if err != nil || tid != 4 || !reflect.DeepEqual(got, evs) {
		t.Fatalf("decoded tid %d, %d events, %v; differs: %v", tid, len(got), err, !reflect.DeepEqual(got, evs))
	}
	// 3,000 shapes cycling through 1,024 slots, each seen twice.
	evs = evs[:0]
	for r := 0; r < 2; r++ {
		for i := 0; i < 3000; i++ {
			p := plain
			p.PC = uint64(0x500000 + 16*i)
			p.T0, p.T1 = uint64(10*i), uint64(10*i+5)
			evs = append(evs, p)
		}
	}
	got, err = DecodeRawRecords(b[len(b)-len(body):][:0], 0, nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("empty block: %v", err)
	}
	b = AppendRaw(nil, 4, evs)
	if _, got, err = DecodeRaw(b, nil); err != nil || !reflect.DeepEqual(got, evs) {
		t.Fatalf("many shapes: %d events, %v", len(got), err)
	}
}

// TestPadding: padding blocks of every size class (one- and two-byte
// lengths written in two bytes, up to two pages) are skipped by the
// reader, Align puts the next block on a page boundary, and Start names
// each block's own offset, not its padding's.
func TestPadding(t *testing.T) {
	var buf bytes.Buffer
	bw, err := NewBlockWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	type blk struct {
		kind  byte
		start int64
	}
	var want []blk
	add := func(kind byte, p string) {
		want = append(want, blk{kind, bw.Offset()})
		if err := bw.Block(kind, []byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	add(BText, "a")
	for i, size := range []int{MinPad, MinPad + 1, 133, 134, 135, 4096, 8199, 16390} {
		if err := bw.Align(4096); err != nil {
			t.Fatal(err)
		}
		if bw.Offset()%4096 != 0 || int64(buf.Len()) != bw.Offset() {
			t.Fatalf("after Align: offset %d, %d bytes written", bw.Offset(), buf.Len())
		}
		add(BRegion, strings.Repeat("r", i))
		if err := bw.Flush(); err != nil {
			t.Fatal(err)
		}
		p := make([]byte, size)
		PadBlock(p)
		buf.Write(p)
		bw.Skip(int64(size))
		add(BComm, strings.Repeat("c", i))
	}
	bw.Flush()
	br, err := NewBlockReader(bytes.NewReader(buf.Bytes()), "pad")
	if err != nil {
		t.Fatal(err)
	}
	var got []blk
	for {
		k, _, err := br.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, blk{k, br.Start()})
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("blocks %v, want %v", got, want)
	}
}

// wantCorruptRaw writes a one-rank trace whose only events block is the
// raw block p and wants scanning it to fail with a corrupt-file error
// naming the file and an offset after the header.
func wantCorruptRaw(t *testing.T, name string, p []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "r0.mst")
	f, _ := os.Create(path)
	bw, _ := NewBlockWriter(f)
	bw.Block(BHeader, EncodeHeader(&Header{Size: 1, FnNames: []string{"MPI_Send"}, FnClasses: []string{"p2p"}}))
	bw.Block(BRaw, p)
	bw.Flush()
	f.Close()
	r, err := OpenRank(path)
	if err == nil {
		err = r.Scan(func(int, []Event) error { return nil })
	}
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.File != path || ce.Offset <= int64(len(Magic)) {
		t.Errorf("%s: error %v, want a corrupt-file error after the header", name, err)
	}
}

// wantRawErrors wants DecodeRaw to fail on each of cases, and to return
// (an error or not, never a panic) on good with any one bit flipped.
func wantRawErrors(t *testing.T, good []byte, cases map[string][]byte) {
	t.Helper()
	for name, p := range cases {
		if _, _, err := DecodeRaw(p, nil); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	for i := range good {
		for bit := 0; bit < 8; bit++ {
			b := slices.Clone(good)
			b[i] ^= 1 << bit
			DecodeRaw(b, nil)
		}
	}
}

// TestReadVersion5: a synthetic job written in format version 5 (each
// event in full in its events blocks) reads as the same job written in
// version 6 does: the same events whole and in parts, the same time
// index and blocks read through it.
func TestReadVersion5(t *testing.T) {
	jobs := map[int]*Job{}
	for _, ver := range []int{5, Version} {
		dir := t.TempDir()
		if err := WriteSynth(dir, SynthSpec{Ranks: 3, Events: 100_000, Seed: 4, Version: ver}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(RankPath(dir, 1))
		if err != nil {
			t.Fatal(err)
		}
		if b[7] != byte(ver) {
			t.Fatalf("version %d written as %d", ver, b[7])
		}
		if jobs[ver], err = OpenJob(dir); err != nil {
			t.Fatal(err)
		}
	}
	for i, r5 := range jobs[5].Ranks {
		r6 := jobs[Version].Ranks[i]
		if r5.Version != 5 || r6.Version != Version || r5.Events != r6.Events || r5.Events != 33_363 { // 3,333 iterations of 10 events, a barrier every 100
			t.Fatalf("rank %d: versions %d, %d, events %d, %d; want 5, %d, 33,363", i, r5.Version, r6.Version, r5.Events, r6.Events, Version)
		}
		var parts [2][]Event
		for k, r := range []*Rank{r5, r6} {
			if err := r.scanParts(1000, func(_ int, evs []Event, _ bool) error { parts[k] = append(parts[k], evs...); return nil }); err != nil {
				t.Fatal(err)
			}
		}
		var wholes [2][]Event
		for k, r := range []*Rank{r5, r6} {
			if err := r.Scan(func(tid int, evs []Event) error {
				if tid != 1000+i {
					t.Errorf("rank %d: thread %d", i, tid)
				}
				wholes[k] = append(wholes[k], evs...)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		whole := wholes[0]
		if len(whole) != 33_363 || !slices.Equal(whole, wholes[1]) || !slices.Equal(parts[0], whole) || !slices.Equal(parts[1], whole) {
			t.Fatalf("rank %d: versions 5 and 6 read differently", i)
		}
		x5, err := r5.Index()
		if err != nil {
			t.Fatal(err)
		}
		x6, err := r6.Index()
		if err != nil {
			t.Fatal(err)
		}
		if len(x5) != 2 || len(x6) != len(x5) {
			t.Fatalf("rank %d: %d and %d blocks indexed, want 2", i, len(x5), len(x6))
		}
		var fromIndex [2][]Event
		for k, x := range [][]BlockSpan{x5, x6} {
			for _, s := range x {
				_, evs, err := []*Rank{r5, r6}[k].ReadBlock(s, nil)
				if err != nil {
					t.Fatal(err)
				}
				if s.First != evs[0].T0 {
					t.Errorf("rank %d, version %d: a block's first event at %d, indexed at %d", i, []int{5, 6}[k], evs[0].T0, s.First)
				}
				fromIndex[k] = append(fromIndex[k], evs...)
			}
		}
		if x5[0].First != x6[0].First || x5[1].First != x6[1].First || x5[1].Last != x6[1].Last ||
			!slices.Equal(fromIndex[0], whole) || !slices.Equal(fromIndex[1], whole) {
			t.Errorf("rank %d: indexes %+v and %+v", i, x5, x6)
		}
	}
}

// TestPackVersion5: packing a version 5 file that holds both events (E)
// and raw (W) blocks writes a version 6 file whose events blocks, the
// raw block's and the version 5 one's, are version 6 ones of the same
// events.
func TestPackVersion5(t *testing.T) {
	evs := manyEvents(600)
	path := filepath.Join(t.TempDir(), "r0.mst")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	bw, _ := newBlockWriterVersion(f, 5)
	bw.Block(BHeader, EncodeHeader(&Header{Rank: 0, Size: 1, PID: 100, Host: "h", Family: "test", Tool: "0", Timer: "clock", FnNames: []string{"MPI_Send"}}))
	fw, _ := flate.NewWriter(nil, flate.BestSpeed)
	var scratch bytes.Buffer
	p, err := appendEventsV5(nil, 1000, evs[:400], fw, &scratch)
	if err != nil {
		t.Fatal(err)
	}
	bw.Block(BEvents, p)
	bw.Block(BRaw, AppendRaw(nil, 1000, evs[400:]))
	bw.Block(BFinal, EncodeFinal(Final{}))
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	want := readAll(t, path)
	if len(want) != len(evs) {
		t.Fatalf("%d events read before packing, want %d", len(want), len(evs))
	}
	if err := Pack(path); err != nil {
		t.Fatal(err)
	}
	checkBlocks(t, path, "HEEF")
	r, err := OpenRank(path)
	if err != nil || r.Version != Version {
		t.Fatalf("packed: version %v, %v", r, err)
	}
	if got := readAll(t, path); !slices.Equal(got, want) {
		t.Errorf("the packed file reads differently")
	}
	// Its events blocks are version 6's.
	b, _ := os.ReadFile(path)
	br, _ := NewBlockReader(bytes.NewReader(b), path)
	for {
		kind, p, err := br.Next()
		if err != nil {
			break
		}
		if kind == BEvents {
			if _, _, err := DecodeEvents(p, nil); err != nil {
				t.Errorf("an events block is not of version 6: %v", err)
			}
		}
	}
}

// fuzzOpenRank opens the fuzzed rank file p: nil when it is refused as
// corrupt (a *CorruptError); any other error fails the test.
func fuzzOpenRank(t *testing.T, p string) *Rank {
	r, err := OpenRank(p)
	if err != nil {
		var ce *CorruptError
		if !errors.As(err, &ce) {
			t.Fatalf("untyped error %v", err)
		}
		return nil
	}
	return r
}
