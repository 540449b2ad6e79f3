package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestConvertPerfettoChunks: ConvertPerfetto interleaves the ranks by
// chunks (here of 2 KiB, 2 ranks at once, so that the 5 ranks take turns
// and a rank that ends gives its place to the next) and writes the same
// bytes whatever the workers; the records are the sequential writer's,
// each rank's in its order, and the document is valid JSON.
func TestConvertPerfettoChunks(t *testing.T) {
	defer func(c, s int) { perfettoChunk, perfettoStreams = c, s }(perfettoChunk, perfettoStreams)
	perfettoChunk, perfettoStreams = 2048, 2
	dir := t.TempDir()
	if err := WriteSynth(dir, SynthSpec{Ranks: 5, Events: 3000, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	j, err := OpenJob(dir)
	if err != nil {
		t.Fatal(err)
	}
	var seq bytes.Buffer
	p := NewPerfettoWriter(&seq)
	if err := NewWalker(j, WalkOptions{}).Walk(p); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	var first []byte
	for _, workers := range []int{1, 2, 3} {
		var par bytes.Buffer
		n, err := ConvertPerfetto(NewWalker(j, WalkOptions{}), &par, workers)
		if err != nil {
			t.Fatal(err)
		}
		if n != p.Records {
			t.Errorf("%d workers: %d records, want %d", workers, n, p.Records)
		}
		if first == nil {
			first = par.Bytes()
			continue
		}
		if !bytes.Equal(par.Bytes(), first) {
			t.Errorf("%d workers: %d bytes unlike 1 worker's %d", workers, par.Len(), len(first))
		}
	}
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := json.Unmarshal(first, &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if len(doc.TraceEvents) != int(p.Records) {
		t.Errorf("%d events in the document, want %d", len(doc.TraceEvents), p.Records)
	}
	// Each rank's records in order, and the same records in all.
	perRank := func(b []byte) (map[string][]string, []string) {
		lines := strings.Split(string(b), "\n")
		lines = lines[1 : len(lines)-2] // head, tail
		m := map[string][]string{}
		var pids []string
		for _, l := range lines {
			l = strings.TrimSuffix(l, ",")
			i := strings.Index(l, `"pid":`)
			pid := l[i : i+strings.IndexByte(l[i:], ',')]
			if len(pids) == 0 || pids[len(pids)-1] != pid {
				pids = append(pids, pid)
			}
			m[pid] = append(m[pid], l)
		}
		return m, pids
	}
	want, seqOrder := perRank(seq.Bytes())
	got, parOrder := perRank(first)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the ranks' records differ from the sequential writer's")
	}
	// Interleaved: ranks 0 and 1 alternate first, a rank follows only
	// when one ends.
	if len(seqOrder) != 5 || len(parOrder) <= 5 || parOrder[0] != `"pid":0` || parOrder[1] != `"pid":1` || parOrder[2] != `"pid":0` {
		t.Errorf("order of the ranks' chunks: %v (sequential %v)", parOrder, seqOrder)
	}
	started := map[string]int{}
	for i, pid := range parOrder {
		if _, ok := started[pid]; !ok {
			started[pid] = i
		}
	}
	keys := make([]string, 0, len(started))
	for k := range started {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool { return started[keys[a]] < started[keys[b]] })
	if fmt.Sprint(keys) != `["pid":0 "pid":1 "pid":2 "pid":3 "pid":4]` {
		t.Errorf("ranks start in order %v", keys)
	}
}

// TestConvertPerfettoPages: into a DirectFile in direct writes,
// ConvertPerfetto writes the document of an ordinary writer with spaces
// inserted, each run of them ending on a page boundary (the head's one byte
// after it, before the first record's newline): the head and every chunk
// padded to whole pages, written in vectored direct writes of aligned
// buffers (the stub checks each), several chunks a write; the same events
// in the same order. Where direct writes are refused (from the first, or
// after some), the same file in ordinary writes.
func TestConvertPerfettoPages(t *testing.T) {
	defer func(c, s int) { perfettoChunk, perfettoStreams = c, s }(perfettoChunk, perfettoStreams)
	dir := t.TempDir()
	if err := WriteSynth(dir, SynthSpec{Ranks: 5, Events: 12000, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	j, err := OpenJob(dir)
	if err != nil {
		t.Fatal(err)
	}
	dirs := directDirs(t)
	stub := stubDirectWrites(t)
	for _, chunk := range []int{2048, 5000, flushAt} {
		perfettoChunk, perfettoStreams = chunk, 2
		if c := chunkCap(); c%directAlign != 0 || c < chunk+2*directAlign {
			t.Errorf("chunks of %d: buffers of %d bytes: not whole pages, or no room for a record and the padding", chunk, c)
		}
		var plain bytes.Buffer
		n, err := ConvertPerfetto(NewWalker(j, WalkOptions{}), &plain, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, refuse := range []int{-1, 0, 1} {
			for _, d := range dirs {
				stub.refuseAfter, stub.taken, stub.vectored, stub.bufs, stub.misaligned = refuse, 0, 0, 0, nil
				path := filepath.Join(d, "trace.json")
				f, err := CreateDirect(path)
				if err != nil {
					t.Fatal(err)
				}
				direct := f.direct != nil
				m, err := ConvertPerfetto(NewWalker(j, WalkOptions{}), f, 2)
				if err != nil {
					t.Fatal(err)
				}
				if err := f.Close(); err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("chunks of %d, %s, direct writes %v refused after %d", chunk, d, direct, refuse)
				if m != n {
					t.Errorf("%s: %d records, want %d", what, m, n)
				}
				if len(stub.misaligned) > 0 {
					t.Errorf("%s: %d misaligned buffers, first %s", what, len(stub.misaligned), stub.misaligned[0])
				}
				if !direct {
					if !bytes.Equal(got, plain.Bytes()) {
						t.Errorf("%s: %d bytes unlike the ordinary writer's %d", what, len(got), plain.Len())
					}
					continue
				}
				runs, err := insertedSpaces(got, plain.Bytes())
				if err != nil {
					t.Errorf("%s: %v", what, err)
					continue
				}
				if len(got)%directAlign != len(perfettoTail) || len(runs) < 2 || runs[0] != directAlign+1 {
					t.Errorf("%s: %d bytes, runs of spaces ending at %v", what, len(got), runs[:min(len(runs), 5)])
				}
				for _, e := range runs[1:] {
					if e%directAlign != 0 {
						t.Errorf("%s: a run of spaces ends at %d, not a page boundary", what, e)
						break
					}
				}
				if refuse < 0 && (stub.vectored == 0 || stub.bufs < 2*stub.vectored || stub.taken != stub.vectored) {
					t.Errorf("%s: %d vectored writes of %d buffers, %d writes in all", what, stub.vectored, stub.bufs, stub.taken)
				}
				if refuse == 1 && stub.taken != 1 {
					t.Errorf("%s: %d direct writes taken, want 1", what, stub.taken)
				}
				if refuse >= 0 || d != dirs[0] {
					continue // the same bytes as a run in direct writes: checked above
				}
				var a, b struct {
					TraceEvents []map[string]any `json:"traceEvents"`
				}
				if err := json.Unmarshal(got, &a); err != nil {
					t.Fatalf("%s: not JSON: %v", what, err)
				}
				if err := json.Unmarshal(plain.Bytes(), &b); err != nil {
					t.Fatal(err)
				}
				if len(a.TraceEvents) != int(n) || !reflect.DeepEqual(a.TraceEvents, b.TraceEvents) {
					t.Errorf("%s: %d events, not the ordinary writer's %d", what, len(a.TraceEvents), len(b.TraceEvents))
				}
				t.Logf("%s: %d bytes (%d without padding), %d vectored writes of %d buffers", what, len(got), plain.Len(), stub.vectored, stub.bufs)
			}
		}
	}
}

// TestConvertPerfettoPadding: with chunks of 64 KiB in direct writes,
// a chunk ends before the record that would take it past 64 KiB, so that
// every chunk but the ranks' last is padded to exactly 16 pages, with
// fewer spaces than the record that follows it (the one that did not
// fit). The padding in all is then at most
//
//	(directAlign-1)                       the head's page
//	+ ranks * (directAlign-1)             each rank's last chunk
//	+ full chunks * (longest record - 1)  the others
//
// (until 2026-11-28 a chunk ended with the record past 64 KiB and most
// chunks padded nearly a page: 6.1 % of the 10^7-event synthetic trace);
// the document parses to the same events in the same order as the
// unpadded one (-o -).
func TestConvertPerfettoPadding(t *testing.T) {
	defer func(c, s int) { perfettoChunk, perfettoStreams = c, s }(perfettoChunk, perfettoStreams)
	perfettoChunk, perfettoStreams = flushAt, 16
	const ranks = 4
	dir := t.TempDir()
	if err := WriteSynth(dir, SynthSpec{Ranks: ranks, Events: 40000, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	j, err := OpenJob(dir)
	if err != nil {
		t.Fatal(err)
	}
	var plain bytes.Buffer
	n, err := ConvertPerfetto(NewWalker(j, WalkOptions{}), &plain, 2)
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	for _, d := range directDirs(t) {
		path := filepath.Join(d, "trace.json")
		f, err := CreateDirect(path)
		if err != nil {
			t.Fatal(err)
		}
		direct := f.direct != nil
		if _, err := ConvertPerfetto(NewWalker(j, WalkOptions{}), f, 2); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if direct {
			if got, err = os.ReadFile(path); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if got == nil {
		t.Skip("no directory takes direct writes")
	}
	runs, err := insertedSpaces(got, plain.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	// The records of the plain document, each with the separator before
	// it: the longest.
	longest := 0
	for _, r := range bytes.Split(plain.Bytes(), []byte(",\n")) {
		longest = max(longest, len(r)+2)
	}
	// The chunks between the runs' ends (the first after the head's
	// page), by rank: each one's padding and its first record's length.
	type chunk struct{ size, pad, first int }
	byRank := map[int][]chunk{}
	for k := 1; k < len(runs); k++ {
		start, e := runs[k-1]&^(directAlign-1), runs[k]
		pad := 0
		for got[e-1-pad] == ' ' {
			pad++
		}
		first := bytes.Index(got[start+1:], []byte(",\n")) + 1
		pid := bytes.Index(got[start:], []byte(`"pid":`)) + start + len(`"pid":`)
		rank, err := strconv.Atoi(string(got[pid : pid+bytes.IndexByte(got[pid:], ',')]))
		if err != nil || first <= 0 {
			t.Fatalf("chunk at %d: no record", start)
		}
		byRank[rank] = append(byRank[rank], chunk{size: e - start, pad: pad, first: first})
	}
	// Each chunk but a rank's last: 64 KiB, fewer spaces than the
	// record that starts the rank's next chunk.
	full := 0
	for r, cs := range byRank {
		for i := 0; i+1 < len(cs); i++ {
			if cs[i].size != perfettoChunk || cs[i].pad >= cs[i+1].first {
				t.Errorf("rank %d, chunk %d of %d: %d bytes, %d of them spaces, before a chunk whose first record has %d", r, i, len(cs), cs[i].size, cs[i].pad, cs[i+1].first)
			}
			full++
		}
	}
	if len(byRank) != ranks {
		t.Errorf("chunks of %d ranks, want %d", len(byRank), ranks)
	}
	pad := len(got) - plain.Len()
	bound := (directAlign - 1) + ranks*(directAlign-1) + full*(longest-1)
	if full < 20 || pad > bound {
		t.Errorf("%d bytes of padding in %d (%d chunks before a rank's last), more than %d (records up to %d bytes)", pad, len(got), full, bound, longest)
	}
	t.Logf("%d bytes, %d of them padding (%.2f %%); %d chunks before a rank's last; records up to %d bytes", len(got), pad, 100*float64(pad)/float64(plain.Len()), full, longest)
	var a, b struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if err := json.Unmarshal(plain.Bytes(), &b); err != nil {
		t.Fatal(err)
	}
	if len(a.TraceEvents) != int(n) || !reflect.DeepEqual(a.TraceEvents, b.TraceEvents) {
		t.Errorf("%d events, not the unpadded document's %d", len(a.TraceEvents), len(b.TraceEvents))
	}
}

// insertedSpaces checks that padded is plain with runs of spaces inserted
// before a ',' or '\n' of plain, and returns the offset in padded where
// each run ends.
func insertedSpaces(padded, plain []byte) ([]int, error) {
	var ends []int
	i, k := 0, 0
	for i < len(padded) {
		if k < len(plain) && padded[i] == plain[k] {
			i++
			k++
			continue
		}
		if padded[i] != ' ' || (k < len(plain) && plain[k] != ',' && plain[k] != '\n') {
			return ends, fmt.Errorf("offset %d: %q where the plain document has %q at %d", i, padded[i], plain[min(k, len(plain)-1)], k)
		}
		for i < len(padded) && padded[i] == ' ' {
			i++
		}
		ends = append(ends, i)
	}
	if k != len(plain) {
		return ends, fmt.Errorf("%d bytes of the plain document left", len(plain)-k)
	}
	return ends, nil
}

// failAfter fails every write once n bytes are written.
type failAfter struct{ n int }

func (f *failAfter) Write(b []byte) (int, error) {
	if f.n < len(b) {
		return 0, errors.New("disk full")
	}
	f.n -= len(b)
	return len(b), nil
}

// TestConvertPerfettoWriteError: a failing output stops the conversion
// with its error (the ranks' goroutines, blocked on their queues, end).
func TestConvertPerfettoWriteError(t *testing.T) {
	defer func(c, s int) { perfettoChunk, perfettoStreams = c, s }(perfettoChunk, perfettoStreams)
	perfettoChunk, perfettoStreams = 1024, 3
	dir := t.TempDir()
	if err := WriteSynth(dir, SynthSpec{Ranks: 4, Events: 4000, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	j, err := OpenJob(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{0, 100, 5000} {
		_, err := ConvertPerfetto(NewWalker(j, WalkOptions{}), &failAfter{at}, 2)
		if err == nil || err.Error() != "disk full" {
			t.Errorf("failing after %d bytes: %v, want disk full", at, err)
		}
	}
}

// TestConvertPerfettoNoRank: a job without ranks is an empty document.
func TestConvertPerfettoNoRank(t *testing.T) {
	var b bytes.Buffer
	n, err := ConvertPerfetto(NewWalker(&Job{}, WalkOptions{}), &b, 2)
	if err != nil || n != 0 || b.String() != perfettoHead+perfettoTail {
		t.Errorf("%d records, %v: %q", n, err, b.String())
	}
}

// TestAppendUs: microseconds with 3 decimals, of the nanosecond rounded
// half away from zero (math.Round).
func TestAppendUs(t *testing.T) {
	for _, v := range []float64{0, 0.4, 0.5, 0.49999999999999994, 1.5, 2.5, 999.5, 1000, 1234567.5, 1e12 + 0.5, 4503599627370495.5,
		-0.4, -0.5, -0.6, -1.5, -1234.5, 8.99e15, 9e15, -9e15, 1e300} {
		// As written before 2026-11-26: the integer nanoseconds.
		ns := int64(math.Round(v))
		want := fmt.Sprintf("%d.%03d", ns/1000, ns%1000)
		if ns < 0 {
			want = fmt.Sprintf("-%d.%03d", -ns/1000, -ns%1000)
		}
		if !(v > -9e15 && v < 9e15) {
			want = strconv.FormatFloat(v/1000, 'f', 3, 64)
		}
		if got := appendUs(nil, v); string(got) != string(want) {
			t.Errorf("appendUs(%v) = %s, want %s", v, got, want)
		}
	}
}

// TestConvertPerfettoRankFails: a rank whose walk fails with an error that
// is not a damaged block (its file gone since the job was opened) stops
// the conversion with that error, while another rank still has chunks to
// hand over. Until 2026-11-28 the conversion hung there: the failed walk
// stopped the ranks not yet started, the output waited for the next one
// (rank 2, which took the failed rank's turn), and rank 0 waited for room
// in its queue.
func TestConvertPerfettoRankFails(t *testing.T) {
	defer func(c, s int) { perfettoChunk, perfettoStreams = c, s }(perfettoChunk, perfettoStreams)
	perfettoChunk, perfettoStreams = 1024, 2
	dir := t.TempDir()
	if err := WriteSynth(dir, SynthSpec{Ranks: 3, Events: 4000, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	j, err := OpenJob(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(RankPath(dir, 1)); err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 2} {
		done := make(chan error, 1)
		go func() {
			_, err := ConvertPerfetto(NewWalker(j, WalkOptions{NoClock: true}), io.Discard, workers)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "r1.mst") {
				t.Errorf("%d workers: %v, want rank 1's file missing", workers, err)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("%d workers: the conversion hangs", workers)
		}
	}
}
