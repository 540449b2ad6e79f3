package analyze

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mpiscope/mpiscope/internal/trace"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAnalyze analyzes a synthetic job of 4 ranks and about 10^6
// events (trace.WriteSynth), written once per machine.
func BenchmarkAnalyze(b *testing.B) {
	dir := filepath.Join(os.TempDir(), "mpiscope-bench-synth-1e6")
	if _, err := os.Stat(filepath.Join(dir, "ok")); err != nil {
		os.RemoveAll(dir)
		if err := trace.WriteSynth(dir, trace.SynthSpec{Ranks: 4, Events: 1_000_000, Seed: 1}); err != nil {
			b.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "ok"), nil, 0o666)
	}
	j, err := trace.OpenJob(dir)
	if err != nil {
		b.Fatal(err)
	}
	var n uint64
	for _, r := range j.Ranks {
		n += r.Events
	}
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if _, err := Analyze(j, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(n)*float64(b.N)/(cpuTime()-cpu0).Seconds(), "events/cpu-s")
}
