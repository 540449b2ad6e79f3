package trace

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rate reports events per second of wall time and of CPU time (what a
// loaded machine does not distort).
func rate(b *testing.B, n uint64, cpu0 time.Duration) {
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(n)*float64(b.N)/(cpuTime()-cpu0).Seconds(), "events/cpu-s")
}

// benchJob writes (once per run) a synthetic job of 4 ranks and about
// 10^6 events, in the current format version (a directory per version:
// an earlier mpiscope's benchmarks keep theirs).
func benchJob(b *testing.B) (*Job, uint64) {
	b.Helper()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("mpiscope-bench-synth-1e6-v%d", Version))
	if _, err := os.Stat(filepath.Join(dir, "ok")); err != nil {
		os.RemoveAll(dir)
		if err := WriteSynth(dir, SynthSpec{Ranks: 4, Events: 1_000_000, Seed: 1}); err != nil {
			b.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "ok"), nil, 0o666)
	}
	j, err := OpenJob(dir)
	if err != nil {
		b.Fatal(err)
	}
	var n uint64
	for _, r := range j.Ranks {
		n += r.Events
	}
	return j, n
}

func BenchmarkConvertPerfetto(b *testing.B) {
	j, n := benchJob(b)
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		w := NewWalker(j, WalkOptions{})
		p := NewPerfettoWriter(io.Discard)
		if err := w.Walk(p); err != nil {
			b.Fatal(err)
		}
		p.Close()
	}
	rate(b, n, cpu0)
}

func BenchmarkConvertOTF2(b *testing.B) {
	j, n := benchJob(b)
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		w := NewWalker(j, WalkOptions{})
		o, err := NewOTF2Writer(b.TempDir(), w)
		if err != nil {
			b.Fatal(err)
		}
		if err := w.Walk(o); err != nil {
			b.Fatal(err)
		}
		if err := o.Close(); err != nil {
			b.Fatal(err)
		}
	}
	rate(b, n, cpu0)
}

func BenchmarkWalk(b *testing.B) {
	j, n := benchJob(b)
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		w := NewWalker(j, WalkOptions{})
		if err := w.Walk(callVisitor(func(*Call) error { return nil })); err != nil {
			b.Fatal(err)
		}
	}
	rate(b, n, cpu0)
}

func BenchmarkDecode(b *testing.B) {
	j, n := benchJob(b)
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		for _, r := range j.Ranks {
			if err := r.Scan(func(int, []Event) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
	}
	rate(b, n, cpu0)
}

func BenchmarkConvertPerfettoParallel(b *testing.B) {
	j, n := benchJob(b)
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		w := NewWalker(j, WalkOptions{})
		if _, err := ConvertPerfetto(w, io.Discard, Workers()); err != nil {
			b.Fatal(err)
		}
	}
	rate(b, n, cpu0)
}

func BenchmarkConvertOTF2Parallel(b *testing.B) {
	j, n := benchJob(b)
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		w := NewWalker(j, WalkOptions{})
		if _, err := ConvertOTF2(w, b.TempDir(), Workers()); err != nil {
			b.Fatal(err)
		}
	}
	rate(b, n, cpu0)
}

// BenchmarkDecodeParts decodes as the walk reads: events blocks in parts
// of 1,024 events.
func BenchmarkDecodeParts(b *testing.B) {
	j, n := benchJob(b)
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		for _, r := range j.Ranks {
			if err := r.scanParts(1024, func(int, []Event, bool) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
	}
	rate(b, n, cpu0)
}

// BenchmarkFlateLevel encodes the benchmark job's events blocks at each
// DEFLATE level (any level's stream is a valid events block: the format
// does not change) in format versions 6 and 5, and decodes them as the
// walk does: the bytes per event on disk, the CPU of packing
// (AppendEvents, appendEventsV5) and of decoding, per event.
func BenchmarkFlateLevel(b *testing.B) {
	j, n := benchJob(b)
	var blocks [][]Event
	for _, r := range j.Ranks {
		if err := r.Scan(func(tid int, evs []Event) error {
			blocks = append(blocks, slices.Clone(evs))
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	for _, ver := range []int{Version, 5} {
		appendEvents := AppendEvents
		if ver == 5 {
			appendEvents = appendEventsV5
		}
		for _, lvl := range []int{flate.BestSpeed, 2, 4, flate.DefaultCompression, flate.BestCompression} {
			b.Run(fmt.Sprintf("v%d/level=%d", ver, lvl), func(b *testing.B) {
				fw, _ := flate.NewWriter(nil, lvl)
				var scratch bytes.Buffer
				ps := make([][]byte, len(blocks))
				size := 0
				cpu0 := cpuTime()
				for i, evs := range blocks {
					p, err := appendEvents(nil, 1, evs, fw, &scratch)
					if err != nil {
						b.Fatal(err)
					}
					ps[i] = p
					size += len(p)
				}
				enc := cpuTime() - cpu0
				st := evDecoder{ver: ver}
				var evs []Event
				b.ResetTimer()
				cpu0 = cpuTime()
				for i := 0; i < b.N; i++ {
					for _, p := range ps {
						if _, err := st.start(p); err != nil {
							b.Fatal(err)
						}
						for st.left() > 0 {
							var err error
							if evs, err = st.next(evs[:0], 1024); err != nil {
								b.Fatal(err)
							}
						}
					}
				}
				dec := cpuTime() - cpu0
				b.ReportMetric(float64(size)/float64(n), "B/event")
				b.ReportMetric(float64(enc.Nanoseconds())/float64(n), "pack-ns/event")
				b.ReportMetric(float64(dec.Nanoseconds())/float64(n)/float64(b.N), "decode-ns/event")
			})
		}
	}
}

// BenchmarkInflate decompresses the benchmark job's events blocks with
// compress/flate's reader (what evDecoder.start used before 2026-11-28)
// and with inflateAll (what it uses since): CPU per event.
func BenchmarkInflate(b *testing.B) {
	j, n := benchJob(b)
	type stream struct {
		z   []byte
		raw int
	}
	var ss []stream
	for _, r := range j.Ranks {
		for _, p := range eventsPayloads(b, r.Path) {
			d := dec{b: p}
			d.n(1 << 31)
			d.n(maxRaw)
			raw := d.n(maxRaw)
			ss = append(ss, stream{d.b, raw})
		}
	}
	b.Run("compress-flate", func(b *testing.B) {
		var buf []byte
		var br bytes.Reader
		fr := flate.NewReader(&br)
		cpu0 := cpuTime()
		for i := 0; i < b.N; i++ {
			for _, s := range ss {
				br.Reset(s.z)
				fr.(flate.Resetter).Reset(&br, nil)
				buf = slices.Grow(buf[:0], s.raw)[:s.raw]
				if _, err := io.ReadFull(fr, buf); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(n)/float64(b.N), "cpu-ns/event")
	})
	b.Run("inflateAll", func(b *testing.B) {
		var f inflater
		var buf []byte
		cpu0 := cpuTime()
		for i := 0; i < b.N; i++ {
			for _, s := range ss {
				var err error
				if buf, err = f.inflate(buf[:0], s.z, s.raw); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(n)/float64(b.N), "cpu-ns/event")
	})
}
