package trace

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
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
	f.Add([]byte(Magic))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "r0.mst")
		os.WriteFile(p, data, 0o666)
		r, err := OpenRank(p)
		if err != nil {
			var ce *CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		r.Scan(func(tid int, evs []Event) error { return nil })
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
