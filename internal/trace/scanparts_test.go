package trace

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"reflect"
	"testing"
)

// TestScanParts: the walk's reading in parts (scanParts) yields the events
// Scan does, in order, with the end of each block marked; decoding a block
// in parts fails where decoding it whole does, with the same message.
func TestScanParts(t *testing.T) {
	job := t.TempDir()
	path := synthRank(t, job, 0, 1, manyEvents(5000), 3000, nil, true)
	r, err := OpenRank(path)
	if err != nil {
		t.Fatal(err)
	}
	var whole []Event
	var blocks int
	if err := r.Scan(func(_ int, evs []Event) error { whole = append(whole, evs...); blocks++; return nil }); err != nil {
		t.Fatal(err)
	}
	var parts []Event
	var calls, ends int
	if err := r.scanParts(7, func(_ int, evs []Event, end bool) error {
		if len(evs) > 7 || len(evs) == 0 {
			t.Fatalf("a part of %d events", len(evs))
		}
		parts = append(parts, evs...)
		calls++
		if end {
			ends++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if blocks != 2 || ends != blocks || calls != 3000/7+1+2000/7+1 || !reflect.DeepEqual(parts, whole) || len(whole) != 5000 {
		t.Errorf("%d blocks, %d ends, %d parts, %d and %d events", blocks, ends, calls, len(whole), len(parts))
	}

	// A block (format version 6) whose third event has an unknown kind:
	// t0 +5, dt 5, then a new shape (slot 0: a call, fn 4, comm -1
	// (zigzag 1), pc +1), the same (slot 1), a new shape of kind 0x3f.
	raw := []byte{10, 5, 0, KCall, 0, 4, 1, 2, 10, 5, 1, 10, 5, 0, 0x3f, 0, 4, 1, 2}
	var z bytes.Buffer
	fw, _ := flate.NewWriter(&z, flate.BestSpeed)
	fw.Write(raw)
	fw.Close()
	p := binary.AppendUvarint(nil, 9)
	p = binary.AppendUvarint(p, 3)
	p = binary.AppendUvarint(p, uint64(len(raw)))
	p = append(p, z.Bytes()...)
	var st evDecoder
	_, got, err1 := st.decode(p, nil)
	if err1 == nil || len(got) != 2 {
		t.Fatalf("whole: %d events, %v", len(got), err1)
	}
	tid, err := st.start(p)
	if err != nil || tid != 9 || st.left() != 3 {
		t.Fatalf("start: tid %d, %d left, %v", tid, st.left(), err)
	}
	evs, err := st.next(nil, 2)
	if err != nil || len(evs) != 2 || !reflect.DeepEqual(evs, got) {
		t.Fatalf("first part: %v, %v", evs, err)
	}
	if _, err2 := st.next(nil, 2); err2 == nil || err2.Error() != err1.Error() {
		t.Errorf("second part: %v, want %v", err2, err1)
	}
}
