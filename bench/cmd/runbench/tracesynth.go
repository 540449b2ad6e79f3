package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/mpiscope/mpiscope/internal/trace"
)

// traceSynth times mpiscope convert (--otf2, --perfetto) and mpiscope
// analyze on a synthetic job trace of -trace-events events over
// -trace-ranks ranks (bench/cmd/synth -trace-events): events per second
// of wall time, and per second of CPU time (user + system of the
// command: what one core does, whatever else the machine runs). With
// -trace-base the earlier binary reads the same events written in trace
// format version 5 (bench/cmd/synth -trace-version 5), which it reads.
func traceSynth(opt *options, res *results) error {
	synth := func(dir string, ver int) error {
		cmd := exec.Command("go", "run", "./bench/cmd/synth", "-ranks", strconv.Itoa(opt.traceRanks),
			"-trace-events", strconv.FormatUint(opt.traceEvents, 10), "-trace-version", strconv.Itoa(ver), "-o", dir)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("synth: %v", err)
		}
		return nil
	}
	dir := filepath.Join(opt.build, "bench", fmt.Sprintf("trace-%d-%dr", opt.traceEvents, opt.traceRanks))
	if err := synth(dir, 0); err != nil {
		return err
	}
	events, err := traceEvents(dir)
	if err != nil {
		return err
	}
	baseDir := dir + "-v5"
	if opt.traceBase != "" {
		if err := synth(baseDir, 5); err != nil {
			return err
		}
		if n, err := traceEvents(baseDir); err != nil || n != events {
			return fmt.Errorf("%s: %d events (%v), %s has %d", baseDir, n, err, dir, events)
		}
	}
	mps := filepath.Join(opt.build, "bin", "mpiscope")
	out := filepath.Join(opt.build, "bench", "trace-out")
	type row struct {
		name string
		args func(dir string) []string
	}
	rows := []row{
		{"convert --otf2", func(dir string) []string {
			return []string{"convert", "--otf2", "-force", "-o", filepath.Join(out, "otf2"), dir}
		}},
		{"convert --perfetto", func(dir string) []string {
			return []string{"convert", "--perfetto", "-force", "-o", filepath.Join(out, "trace.json"), dir}
		}},
		{"analyze", func(dir string) []string {
			return []string{"analyze", "-format", "json", "-o", filepath.Join(out, "analysis.json"), dir}
		}},
	}
	res.md("\n## Trace conversion and analysis on a synthetic trace\n\n")
	res.md("bench/cmd/synth -trace-events %d -ranks %d: %d events (a ring halo exchange with MPI_Waitall and an imbalanced MPI_Allreduce per iteration), "+
		"page cache warm, %d CPUs; 3 runs each, median [min, max]. Events per CPU second divide by the command's user + system time.\n\n",
		opt.traceEvents, opt.traceRanks, events, runtime.NumCPU())
	res.md("| command | wall (s) | CPU (s) | million events/s | million events per CPU second | peak RSS (MiB) |\n|---|---|---|---|---|---|\n")
	raw := map[string]any{"events": events, "ranks": opt.traceRanks}
	// With -trace-base the earlier binary's run of a command alternates
	// with this build's, so that both see the same machine.
	type bin struct{ name, path, dir string }
	bins := []bin{{"", mps, dir}}
	if opt.traceBase != "" {
		bins = []bin{{" (before: " + filepath.Base(opt.traceBase) + ", format 5)", opt.traceBase, baseDir}, {" (after)", mps, dir}}
	}
	for _, r := range rows {
		walls := make([][]float64, len(bins))
		cpus := make([][]float64, len(bins))
		rss := make([][]float64, len(bins))
		for rep := 0; rep < 3; rep++ {
			for b, bin := range bins {
				os.RemoveAll(out)
				if err := os.MkdirAll(out, 0o777); err != nil {
					return err
				}
				c := exec.Command(bin.path, r.args(bin.dir)...)
				var se bytes.Buffer
				c.Stdout, c.Stderr = io.Discard, &se
				t0 := time.Now()
				if err := c.Run(); err != nil {
					return fmt.Errorf("%s %v: %v\n%s", bin.path, r.args(bin.dir), err, se.String())
				}
				walls[b] = append(walls[b], time.Since(t0).Seconds())
				ru := c.ProcessState.SysUsage().(*syscall.Rusage)
				cpus[b] = append(cpus[b], time.Duration(ru.Utime.Nano()+ru.Stime.Nano()).Seconds())
				rss[b] = append(rss[b], float64(ru.Maxrss)/1024)
			}
		}
		os.RemoveAll(out)
		for b, bin := range bins {
			W, C, R := summarize(walls[b]), summarize(cpus[b]), summarize(rss[b])
			ev := float64(events)
			res.md("| mpiscope %s%s | %.2f [%.2f, %.2f] | %.2f | %.2f | %.2f | %.0f |\n", r.name, bin.name, W.Med, W.Min, W.Max, C.Med, ev/W.Med/1e6, ev/C.Med/1e6, R.Med)
			raw[r.name+bin.name] = map[string]any{"wall_s": walls[b], "cpu_s": cpus[b], "maxrss_mib": rss[b]}
			if b == len(bins)-1 { // the verdict is this build's
				res.t.traceRate.add("", fmt.Sprintf("mpiscope %s, %d events", r.name, events), C.Med/ev*1e9,
					fmt.Sprintf("%.2f million events per CPU second", ev/C.Med/1e6))
			}
		}
	}
	res.raw["trace_synth"] = raw
	return nil
}

// traceEvents counts the events of a job trace from its rank files'
// metadata.
func traceEvents(dir string) (uint64, error) {
	var n uint64
	err := filepath.WalkDir(filepath.Join(dir, "trace"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".mst" {
			return err
		}
		r, err := trace.OpenRank(path)
		if err != nil {
			return err
		}
		n += r.Events
		return nil
	})
	return n, err
}
