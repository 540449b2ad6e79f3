package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
)

// analyzeJobRe reads each rank's line of MPISCOPE_DEBUG_TIMING=1 about the
// analysis in the job (internal/interpose/analyze.go); cpu_ms (the
// process's CPU time in it) since 2026-11-28, before or after the phases.
var analyzeJobRe = regexp.MustCompile(`analysis timing: rank=(\d+) ms=([0-9.]+) hwm_before_kb=(\d+) hwm_kb=(\d+)(?: cpu_ms=([0-9.]+))? ?([^\n]*?)(?: cpu_ms=([0-9.]+))?\n`)

// analyzeJob: the analysis in the job (MPISCOPE_ANALYZE=1) at 2 to 32
// ranks, oversubscribed: its time on rank 0 (from the start of the
// analysis to the gathered result) as a share of the traced run's own
// time, the traced run without the analysis side by side; and each rank's
// peak RSS during it, with the default bound on its records
// (MPISCOPE_ANALYZE_MEM=128M) and a small one (4M: the records exchanged
// and matched in rounds). Each rank count runs the program at every
// length of -analyzejob-iters: the analysis has a part fixed by its
// exchanges and a part per event, the traced run its start-up.
func (b *bench) analyzeJob() error {
	var iters []int
	for _, s := range strings.Split(b.opt.analyzeIters, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("-analyzejob-iters %q: want iteration counts", b.opt.analyzeIters)
		}
		iters = append(iters, n)
	}
	b.res.md("\n## Analysis in the job (%s)\n\n", b.f.Name)
	b.res.md("scale.c with %s iterations (a ring MPI_Sendrecv, two MPI_Allreduce, two cheap calls: about 5 traced events per rank and iteration), "+
		"oversubscribed on %d CPUs with OMPI_MCA_mpi_yield_when_idle=1. `traced` is the mpirun wall time of the traced run (MPISCOPE_TRACE=1), "+
		"`traced + analysis` the same with MPISCOPE_ANALYZE=1; `analysis` is rank 0's time in the analysis (MPISCOPE_DEBUG_TIMING=1: "+
		"reading its trace, the exchanges, the critical path, the delay costs, the gathered result), and its share of `traced`; "+
		"`CPU` its process's CPU time in it (getrusage; the rest is waiting for a CPU or for the other ranks). "+
		"Peak RSS: each rank's VmHWM during the analysis (reset when it starts), the largest over the ranks, with the default bound "+
		"(MPISCOPE_ANALYZE_MEM=128M, one round here) and with 4M (the records exchanged and matched in rounds; run at the first length only). One run each "+
		"(32 oversubscribed ranks take minutes per run). Phases, wall/CPU ms: rank 0's time agreeing with the others and reading its trace (read), "+
		"exchanging and matching the records (match), in the critical path (path[levels, exchanges, KiB sent]: pointer doubling, one exchange per level and 3), "+
		"in its part (part: the MPI calls on the path from the log of its calls; part[trace read again] when the log does not fit the bound), "+
		"in the delay costs (delays[messages sent, waits' entries in them, receives]).\n\n",
		b.opt.analyzeIters, runtime.NumCPU())
	nps := b.opt.scaleNP
	if b.f.Name == "mpich" && !b.opt.scaleSet {
		nps = "2,4,8" // MPICH's ranks busy-poll without yielding (scale.go)
		b.res.md("MPICH ranks busy-poll without yielding, so only 2, 4 and 8 ranks are run on this machine (-scale-np to change).\n\n")
	}
	b.res.md("| ranks | iterations | traced (s) | traced + analysis (s) | analysis (s) | share of traced | CPU (s) | rank 0's phases (ms, wall/CPU) | peak RSS per rank, 128M (MiB) | peak RSS per rank, 4M (MiB) | analysis with 4M (s) |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	raw := map[string]any{}
	prog := filepath.Join(b.bin, "scale")
	for _, s := range strings.Split(nps, ",") {
		np, _ := strconv.Atoi(strings.TrimSpace(s))
		for li, it := range iters {
			var traced, both, an, cpu, an4 []float64
			var hwm, hwm4 []float64
			var phases string
			mems := []string{"128M", "4M"}
			if li > 0 {
				mems = mems[:1]
			}
			for rep := 0; rep < 1; rep++ {
				base := map[string]string{"OMPI_MCA_mpi_yield_when_idle": "1", "MPISCOPE_TRACE": "1", "MPISCOPE_REPORT": "0"}
				r, err := b.mpirun(np, b.lib, base, prog, strconv.Itoa(it))
				if err != nil {
					return err
				}
				os.RemoveAll(r.Job)
				traced = append(traced, r.Wall.Seconds())
				for _, mem := range mems {
					e := map[string]string{"MPISCOPE_ANALYZE": "1", "MPISCOPE_ANALYZE_MEM": mem, "MPISCOPE_DEBUG_TIMING": "1"}
					for k, v := range base {
						e[k] = v
					}
					r, err := b.mpirun(np, b.lib, e, prog, strconv.Itoa(it))
					if err != nil {
						return err
					}
					os.RemoveAll(r.Job)
					ms, cms, peak, n := 0.0, math.NaN(), 0.0, 0
					for _, m := range analyzeJobRe.FindAllStringSubmatch(r.Stderr, -1) {
						n++
						kb, _ := strconv.ParseFloat(m[4], 64)
						peak = max(peak, kb/1024)
						if m[1] == "0" {
							ms, _ = strconv.ParseFloat(m[2], 64)
							if c := m[5] + m[7]; c != "" { // before or after the phases
								cms, _ = strconv.ParseFloat(c, 64)
							}
							if mem == "128M" {
								phases = m[6]
							}
						}
					}
					if n != np {
						return fmt.Errorf("analysis in the job at %d ranks: %d ranks' timings\n%s", np, n, r.Stderr)
					}
					if mem == "128M" {
						both = append(both, r.Wall.Seconds())
						an = append(an, ms/1e3)
						if !math.IsNaN(cms) { // a build before 2026-11-28 does not print it
							cpu = append(cpu, cms/1e3)
						}
						hwm = append(hwm, peak)
					} else {
						an4 = append(an4, ms/1e3)
						hwm4 = append(hwm4, peak)
					}
				}
			}
			t, a := summarize(traced).Med, summarize(an).Med
			small := "| - | - |"
			if len(an4) > 0 {
				small = fmt.Sprintf("| %.1f | %.3f |", summarize(hwm4).Med, summarize(an4).Med)
			}
			cpuS := "-"
			if len(cpu) > 0 {
				cpuS = fmt.Sprintf("%.3f", summarize(cpu).Med)
			}
			b.res.md("| %d | %d | %.2f | %.2f | %.3f | %.1f %% | %s | %s | %.1f %s\n", np, it, t, summarize(both).Med, a, 100*a/t,
				cpuS, phases, summarize(hwm).Med, small)
			key := s
			if li > 0 {
				key = fmt.Sprintf("%s/%d", s, it)
			}
			raw[key] = map[string]any{"iterations": it, "traced_s": traced, "traced_analysis_s": both, "analysis_s": an, "analysis_cpu_s": cpu,
				"analysis_4m_s": an4, "peak_rss_mib": hwm, "peak_rss_4m_mib": hwm4}
		}
	}
	b.res.raw[b.f.Name+"/analyzejob"] = raw
	return nil
}
