package analyze

import (
	"os"
	"testing"
	"time"

	"github.com/mpiscope/mpiscope/internal/trace"
)

// BenchmarkOfflineJob is the offline analysis (Analyze, one worker) of
// the job in $MPISCOPE_BENCH_INJOB (skipped without it), with the same
// per-event figures as BenchmarkInJob: the two side by side say what the
// analysis in the job costs beyond the offline one on the same events.
func BenchmarkOfflineJob(b *testing.B) {
	dir := os.Getenv("MPISCOPE_BENCH_INJOB")
	if dir == "" {
		b.Skip("MPISCOPE_BENCH_INJOB not set")
	}
	j, err := trace.OpenJob(dir)
	if err != nil {
		b.Fatal(err)
	}
	var events uint64
	for _, r := range j.Ranks {
		events += r.Events
	}
	phases := map[string]time.Duration{}
	allocs := map[string]uint64{}
	var order []string
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		last, lastA := cpuTime(), heapAllocs()
		mark := func(name string) {
			now, a := cpuTime(), heapAllocs()
			if _, ok := phases[name]; !ok {
				order = append(order, name)
			}
			phases[name] += now - last
			allocs[name] += a - lastA
			last, lastA = now, a
		}
		if _, err := Analyze(j, Options{Workers: 1, Phase: mark}); err != nil {
			b.Fatal(err)
		}
		mark("rest")
	}
	cpu := cpuTime() - cpu0
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(events)/float64(b.N), "cpu-ns/event")
	for _, name := range order {
		b.ReportMetric(float64(phases[name].Nanoseconds())/float64(events)/float64(b.N), name+"-ns/event")
		b.ReportMetric(float64(allocs[name])/float64(events)/float64(b.N), name+"-B-alloc/event")
	}
}
