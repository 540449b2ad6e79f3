package trace

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// benchJob writes (once per run) a synthetic job of 4 ranks and about
// 10^6 events.
func benchJob(b *testing.B) (*Job, uint64) {
	b.Helper()
	dir := filepath.Join(os.TempDir(), "mpiscope-bench-synth-1e6")
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
	for i := 0; i < b.N; i++ {
		w := NewWalker(j, WalkOptions{})
		p := NewPerfettoWriter(io.Discard)
		if err := w.Walk(p); err != nil {
			b.Fatal(err)
		}
		p.Close()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkConvertOTF2(b *testing.B) {
	j, n := benchJob(b)
	b.ResetTimer()
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
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkWalk(b *testing.B) {
	j, n := benchJob(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w := NewWalker(j, WalkOptions{})
		if err := w.Walk(callVisitor(func(*Call) error { return nil })); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkDecode(b *testing.B) {
	j, n := benchJob(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, r := range j.Ranks {
			if err := r.Scan(func(int, []Event) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
