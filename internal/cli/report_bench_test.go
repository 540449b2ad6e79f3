package cli

import (
	"io"
	"os"
	"testing"
)

// BenchmarkReportDir times `mpiscope report DIR` (load, merge and text
// report) on the job directory named by MPISCOPE_BENCH_DIR, for example the
// output of `go run ./bench/cmd/synth -ranks 100000 -o build/bench/synth-100000`.
// It is skipped when the variable is not set.
func BenchmarkReportDir(b *testing.B) {
	dir := os.Getenv("MPISCOPE_BENCH_DIR")
	if dir == "" {
		b.Skip("MPISCOPE_BENCH_DIR not set")
	}
	b.ReportAllocs()
	for range b.N {
		if err := Main([]string{"report", dir}, io.Discard, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
