package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"
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
