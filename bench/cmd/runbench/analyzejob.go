package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
)

// analyzeJobRe reads each rank's line of MPISCOPE_DEBUG_TIMING=1 about the
// analysis in the job (internal/interpose/analyze.go).
var analyzeJobRe = regexp.MustCompile(`analysis timing: rank=(\d+) ms=([0-9.]+) hwm_before_kb=(\d+) hwm_kb=(\d+) ?([^\n]*)`)

// analyzeJob: the analysis in the job (MPISCOPE_ANALYZE=1) at 2 to 32
// ranks, oversubscribed: its time on rank 0 (from the start of the
// analysis to the gathered result) as a share of the traced run's own
// time, the traced run without the analysis side by side; and each rank's
// peak RSS during it, with the default bound on its records
// (MPISCOPE_ANALYZE_MEM=128M) and a small one (4M: the records exchanged
// and matched in rounds).
func (b *bench) analyzeJob() error {
	const iters = 500
	b.res.md("\n## Analysis in the job (%s)\n\n", b.f.Name)
	b.res.md("scale.c with %d iterations (a ring MPI_Sendrecv, two MPI_Allreduce, two cheap calls: about %d traced events per rank), "+
		"oversubscribed on %d CPUs with OMPI_MCA_mpi_yield_when_idle=1. `traced` is the mpirun wall time of the traced run (MPISCOPE_TRACE=1), "+
		"`traced + analysis` the same with MPISCOPE_ANALYZE=1; `analysis` is rank 0's time in the analysis (MPISCOPE_DEBUG_TIMING=1: "+
		"reading its trace, the exchanges, the critical path, the delay costs, the gathered result), and its share of `traced`. "+
		"Peak RSS: each rank's VmHWM during the analysis (reset when it starts), the largest over the ranks, with the default bound "+
		"(MPISCOPE_ANALYZE_MEM=128M, one round here) and with 4M (the records exchanged and matched in rounds). One run each "+
		"(32 oversubscribed ranks take minutes per run). Phases: rank 0's time agreeing with the others and reading its trace (read), "+
		"exchanging and matching the records (match), in the critical path (path[levels, exchanges, KiB sent]: pointer doubling, 3 exchanges per level and 4), "+
		"in its part (part: the MPI calls on the path from the log of its calls; part[trace read again] when the log does not fit the bound), "+
		"in the delay costs (delays[messages sent, waits' entries in them, receives]).\n\n",
		iters, 5*iters, runtime.NumCPU())
	nps := b.opt.scaleNP
	if b.f.Name == "mpich" && !b.opt.scaleSet {
		nps = "2,4,8" // MPICH's ranks busy-poll without yielding (scale.go)
		b.res.md("MPICH ranks busy-poll without yielding, so only 2, 4 and 8 ranks are run on this machine (-scale-np to change).\n\n")
	}
	b.res.md("| ranks | traced (s) | traced + analysis (s) | analysis (s) | share of traced | rank 0's phases (ms) | peak RSS per rank, 128M (MiB) | peak RSS per rank, 4M (MiB) | analysis with 4M (s) |\n|---|---|---|---|---|---|---|---|---|\n")
	raw := map[string]any{}
	prog := filepath.Join(b.bin, "scale")
	for _, s := range strings.Split(nps, ",") {
		np, _ := strconv.Atoi(strings.TrimSpace(s))
		var traced, both, an, an4 []float64
		var hwm, hwm4 []float64
		var phases string
		for rep := 0; rep < 1; rep++ {
			base := map[string]string{"OMPI_MCA_mpi_yield_when_idle": "1", "MPISCOPE_TRACE": "1", "MPISCOPE_REPORT": "0"}
			r, err := b.mpirun(np, b.lib, base, prog, strconv.Itoa(iters))
			if err != nil {
				return err
			}
			os.RemoveAll(r.Job)
			traced = append(traced, r.Wall.Seconds())
			for _, mem := range []string{"128M", "4M"} {
				e := map[string]string{"MPISCOPE_ANALYZE": "1", "MPISCOPE_ANALYZE_MEM": mem, "MPISCOPE_DEBUG_TIMING": "1"}
				for k, v := range base {
					e[k] = v
				}
				r, err := b.mpirun(np, b.lib, e, prog, strconv.Itoa(iters))
				if err != nil {
					return err
				}
				os.RemoveAll(r.Job)
				ms, peak, n := 0.0, 0.0, 0
				for _, m := range analyzeJobRe.FindAllStringSubmatch(r.Stderr, -1) {
					n++
					kb, _ := strconv.ParseFloat(m[4], 64)
					peak = max(peak, kb/1024)
					if m[1] == "0" {
						ms, _ = strconv.ParseFloat(m[2], 64)
						if mem == "128M" {
							phases = m[5]
						}
					}
				}
				if n != np {
					return fmt.Errorf("analysis in the job at %d ranks: %d ranks' timings\n%s", np, n, r.Stderr)
				}
				if mem == "128M" {
					both = append(both, r.Wall.Seconds())
					an = append(an, ms/1e3)
					hwm = append(hwm, peak)
				} else {
					an4 = append(an4, ms/1e3)
					hwm4 = append(hwm4, peak)
				}
			}
		}
		t, a := summarize(traced).Med, summarize(an).Med
		b.res.md("| %d | %.2f | %.2f | %.3f | %.1f %% | %s | %.1f | %.1f | %.3f |\n", np, t, summarize(both).Med, a, 100*a/t, phases,
			summarize(hwm).Med, summarize(hwm4).Med, summarize(an4).Med)
		raw[s] = map[string]any{"traced_s": traced, "traced_analysis_s": both, "analysis_s": an, "analysis_4m_s": an4,
			"peak_rss_mib": hwm, "peak_rss_4m_mib": hwm4}
	}
	b.res.raw[b.f.Name+"/analyzejob"] = raw
	return nil
}
