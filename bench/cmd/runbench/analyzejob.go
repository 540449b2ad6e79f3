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
	"syscall"
	"time"

	"github.com/mpiscope/mpiscope/profile"
)

// analyzeJobRe reads each rank's line of MPISCOPE_DEBUG_TIMING=1 about the
// analysis in the job (internal/interpose/analyze.go); cpu_ms (the
// process's CPU time in it) since 2026-11-28, before or after the phases.
var analyzeJobRe = regexp.MustCompile(`analysis timing: rank=(\d+) ms=([0-9.]+) hwm_before_kb=(\d+) hwm_kb=(\d+)(?: cpu_ms=([0-9.]+))? ?([^\n]*?)(?: cpu_ms=([0-9.]+))?\n`)

// stencilLine is bench/progs/stencil.c's summary line on rank 0.
type stencilLine struct {
	ranks, px, py, side int
	iters               int64
	computeCPU, compute float64 // us per iteration, the largest over the ranks
	iteration           float64 // us per iteration of the loop on rank 0
	residual            float64
}

// parseStencil finds the STENCIL line in stencil.c's output.
func parseStencil(out string) (stencilLine, error) {
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "STENCIL ") {
			continue
		}
		var s stencilLine
		n, err := fmt.Sscanf(strings.TrimSpace(l), "STENCIL %d %d %d %d %d %g %g %g %g", &s.ranks, &s.px, &s.py, &s.side, &s.iters,
			&s.computeCPU, &s.compute, &s.iteration, &s.residual)
		if err != nil || n != 9 {
			return s, fmt.Errorf("stencil's line %q: %v", l, err)
		}
		return s, nil
	}
	return stencilLine{}, fmt.Errorf("no STENCIL line in stencil's output:\n%s", out)
}

// counts reads a flag's comma-separated list of positive counts.
func counts(name, s string) ([]int, error) {
	var v []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s %q: want positive counts, comma-separated", name, s)
		}
		v = append(v, n)
	}
	return v, nil
}

// ajRuns are one row's runs: the traced run alone, then the traced run
// with the analysis at each bound of its records.
type ajRuns struct {
	traced, both, an, cpu, an4, hwm, hwm4 []float64
	tracedCPU, anCPU                      []float64 // the traced run's CPU (mpirun and the ranks), the analysis' over the ranks
	phases                                string
	events                                float64 // traced events per rank (the analysis' count over the ranks)
	stencil                               []stencilLine
}

// ajRun runs prog with args on np ranks: traced alone, then with the
// analysis at each bound of mems ("128M" first).
func (b *bench) ajRun(np int, mems []string, prog string, args ...string) (*ajRuns, error) {
	a := &ajRuns{}
	base := map[string]string{"OMPI_MCA_mpi_yield_when_idle": "1", "MPISCOPE_TRACE": "1", "MPISCOPE_REPORT": "0"}
	c0 := childrenCPU()
	r, err := b.mpirun(np, b.lib, base, append([]string{prog}, args...)...)
	if err != nil {
		return nil, err
	}
	os.RemoveAll(r.Job)
	a.traced = append(a.traced, r.Wall.Seconds())
	a.tracedCPU = append(a.tracedCPU, childrenCPU()-c0)
	if filepath.Base(prog) == "stencil" {
		s, err := parseStencil(r.Stdout)
		if err != nil {
			return nil, err
		}
		a.stencil = append(a.stencil, s)
	}
	for _, mem := range mems {
		e := map[string]string{"MPISCOPE_ANALYZE": "1", "MPISCOPE_ANALYZE_MEM": mem, "MPISCOPE_DEBUG_TIMING": "1"}
		for k, v := range base {
			e[k] = v
		}
		r, err := b.mpirun(np, b.lib, e, append([]string{prog}, args...)...)
		if err != nil {
			return nil, err
		}
		if mem == "128M" {
			p, _, err := profile.Load(r.Job)
			if err != nil || p.Analysis == nil {
				os.RemoveAll(r.Job)
				return nil, fmt.Errorf("the analysis in the job at %d ranks: no analysis in the profile (%v)\n%s", np, err, r.Stderr)
			}
			a.events = float64(p.Analysis.Events) / float64(np)
		}
		os.RemoveAll(r.Job)
		ms, cms, peak, n, all := 0.0, math.NaN(), 0.0, 0, 0.0
		for _, m := range analyzeJobRe.FindAllStringSubmatch(r.Stderr, -1) {
			n++
			kb, _ := strconv.ParseFloat(m[4], 64)
			peak = max(peak, kb/1024)
			c, _ := strconv.ParseFloat(m[5]+m[7], 64)
			all += c / 1e3
			if m[1] == "0" {
				ms, _ = strconv.ParseFloat(m[2], 64)
				if c := m[5] + m[7]; c != "" { // before or after the phases
					cms, _ = strconv.ParseFloat(c, 64)
				}
				if mem == "128M" {
					a.phases = m[6]
				}
			}
		}
		if n != np {
			return nil, fmt.Errorf("analysis in the job at %d ranks: %d ranks' timings\n%s", np, n, r.Stderr)
		}
		if mem == "128M" {
			a.both = append(a.both, r.Wall.Seconds())
			a.an = append(a.an, ms/1e3)
			if !math.IsNaN(cms) { // a build before 2026-11-28 does not print it
				a.cpu = append(a.cpu, cms/1e3)
				a.anCPU = append(a.anCPU, all)
			}
			a.hwm = append(a.hwm, peak)
		} else {
			a.an4 = append(a.an4, ms/1e3)
			a.hwm4 = append(a.hwm4, peak)
		}
	}
	return a, nil
}

// childrenCPU is the user and system time of this process's children
// that have been waited for, in seconds: around an mpirun, its own and
// its ranks' (mpirun waits for them).
func childrenCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return math.NaN()
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// cells are the columns every table of the section shares: traced,
// traced + analysis, analysis, share, CPU, the CPU share, phases, peak
// RSS (128M).
func (a *ajRuns) cells() string {
	t, an := summarize(a.traced).Med, summarize(a.an).Med
	cpuS, share := "-", "- | - | -"
	if len(a.cpu) > 0 {
		tc, ac := summarize(a.tracedCPU).Med, summarize(a.anCPU).Med
		cpuS = fmt.Sprintf("%.3f", summarize(a.cpu).Med)
		share = fmt.Sprintf("%.2f | %.3f | %.1f %%", tc, ac, 100*ac/tc)
	}
	return fmt.Sprintf("%.2f | %.2f | %.3f | %.1f %% | %s | %s | %s | %.1f", t, summarize(a.both).Med, an, 100*an/t, cpuS, share, a.phases, summarize(a.hwm).Med)
}

func (a *ajRuns) raw(extra map[string]any) map[string]any {
	m := map[string]any{"traced_s": a.traced, "traced_analysis_s": a.both, "analysis_s": a.an, "analysis_cpu_s": a.cpu,
		"analysis_4m_s": a.an4, "peak_rss_mib": a.hwm, "peak_rss_4m_mib": a.hwm4, "events_per_rank": a.events,
		"traced_cpu_s": a.tracedCPU, "analysis_cpu_all_ranks_s": a.anCPU}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// analyzeJob: the analysis in the job (MPISCOPE_ANALYZE=1) at 2 to 32
// ranks, oversubscribed, on two programs: scale.c (nothing but MPI calls)
// and stencil.c (a 2D Jacobi solver: halo exchanges between computed
// updates of each rank's block, as an application). For each: rank 0's
// time in the analysis (from its start to the gathered result) as a
// share of the traced run's own time, the traced run without the
// analysis side by side; the traced events per rank; each rank's peak
// RSS during it with the default bound on its records
// (MPISCOPE_ANALYZE_MEM=128M), and for scale.c with a small one (4M: the
// records exchanged and matched in rounds). scale.c runs at every length
// of -analyzejob-iters (the analysis has a part fixed by its exchanges
// and a part per event, the traced run its start-up), stencil.c at every
// block side of -stencil-side and length of -stencil-iters. Both
// programs run at each rank count before the next, so that their rows
// share the machine's load.
func (b *bench) analyzeJob() error {
	iters, err := counts("-analyzejob-iters", b.opt.analyzeIters)
	if err != nil {
		return err
	}
	sides, err := counts("-stencil-side", b.opt.stencilSide)
	if err != nil {
		return err
	}
	sIters, err := counts("-stencil-iters", b.opt.stencilIters)
	if err != nil {
		return err
	}
	nps := b.opt.scaleNP
	mpichNote := ""
	if b.f.Name == "mpich" && !b.opt.scaleSet {
		nps = "2,4,8" // MPICH's ranks busy-poll without yielding (scale.go)
		mpichNote = "MPICH ranks busy-poll without yielding, so only 2, 4 and 8 ranks are run on this machine (-scale-np to change).\n\n"
	}
	var scaleRows, stencilRows []string
	raw, rawS := map[string]any{}, map[string]any{}
	for _, s := range strings.Split(nps, ",") {
		np, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || np < 1 {
			return fmt.Errorf("-scale-np %q: want rank counts", nps)
		}
		for li, it := range iters {
			mems := []string{"128M", "4M"}
			if li > 0 {
				mems = mems[:1]
			}
			a, err := b.ajRun(np, mems, filepath.Join(b.bin, "scale"), strconv.Itoa(it))
			if err != nil {
				return err
			}
			small := "| - | - |"
			if len(a.an4) > 0 {
				small = fmt.Sprintf("| %.1f | %.3f |", summarize(a.hwm4).Med, summarize(a.an4).Med)
			}
			scaleRows = append(scaleRows, fmt.Sprintf("| %d | %d | %.0f | %s %s\n", np, it, a.events, a.cells(), small))
			key := s
			if li > 0 {
				key = fmt.Sprintf("%s/%d", s, it)
			}
			raw[key] = a.raw(map[string]any{"iterations": it})
		}
		for _, side := range sides {
			for _, it := range sIters {
				a, err := b.ajRun(np, []string{"128M"}, filepath.Join(b.bin, "stencil"), strconv.Itoa(it), strconv.Itoa(side))
				if err != nil {
					return err
				}
				st := a.stencil[0]
				stencilRows = append(stencilRows, fmt.Sprintf("| %d | %dx%d | %d | %d | %.1f | %.0f | %.0f | %s |\n", np, st.px, st.py, side, it,
					st.computeCPU, st.iteration, a.events, a.cells()))
				rawS[fmt.Sprintf("%d/%d/%d", np, side, it)] = a.raw(map[string]any{"iterations": it, "side": side,
					"compute_cpu_us": st.computeCPU, "compute_us": st.compute, "iteration_us": st.iteration})
			}
		}
	}

	b.res.md("\n## Analysis in the job (%s)\n\n", b.f.Name)
	b.res.md("Two programs, oversubscribed on %d CPUs with OMPI_MCA_mpi_yield_when_idle=1, both run at each rank count before the next: "+
		"scale.c (nothing but MPI calls) and stencil.c (a 2D Jacobi solver: halo exchanges between computed updates, as an application). "+
		"`traced` is the mpirun wall time of the traced run (MPISCOPE_TRACE=1), "+
		"`traced + analysis` the same with MPISCOPE_ANALYZE=1; `analysis` is rank 0's time in the analysis (MPISCOPE_DEBUG_TIMING=1: "+
		"reading its trace, the exchanges, the critical path, the delay costs, the gathered result), and its share of `traced`; "+
		"`rank 0's CPU` its process's CPU time in it (getrusage; the rest is waiting for a CPU or for the other ranks). "+
		"`traced CPU`: the traced run's CPU time, mpirun's and its ranks' (getrusage of the children, around the run); `analysis CPU`: the "+
		"analysis' CPU time summed over the ranks (each rank's cpu_ms), and its share of `traced CPU`: the share in CPU, which other jobs' "+
		"load moves less than the wall times (the traced run's CPU includes the ranks' polling while they wait). `events per rank`: "+
		"the traced events the analysis read, over the ranks. "+
		"Peak RSS: each rank's VmHWM during the analysis (reset when it starts), the largest over the ranks, with the default bound "+
		"(MPISCOPE_ANALYZE_MEM=128M, one round here). One run each "+
		"(32 oversubscribed ranks take seconds to minutes per run). Phases, wall/CPU ms: rank 0's time agreeing with the others and reading its trace (read), "+
		"exchanging and matching the records (match), in the critical path (path[levels, exchanges, KiB sent]: gathered at the end rank, one message to it "+
		"from every rank and one back, when the jumps fit a quarter of the bound; else pointer doubling, one exchange per level and 3), "+
		"in its part (part: the MPI calls on the path from the log of its calls; part[trace read again] when the log does not fit the bound), "+
		"in the delay costs (delays[messages sent, waits' entries in them, receives]).\n\n", runtime.NumCPU())
	b.res.md("%s", mpichNote)
	b.res.md("**scale.c** with %s iterations (a ring MPI_Sendrecv, two MPI_Allreduce, two cheap calls: about 5 traced events per rank and iteration); "+
		"the 4M columns: the analysis with MPISCOPE_ANALYZE_MEM=4M (the records exchanged and matched in rounds), at the first length only.\n\n", b.opt.analyzeIters)
	b.res.md("| ranks | iterations | events per rank | traced (s) | traced + analysis (s) | analysis (s) | share of traced | rank 0's CPU (s) | traced CPU (s) | analysis CPU (s) | CPU share | rank 0's phases (ms, wall/CPU) | peak RSS per rank, 128M (MiB) | peak RSS per rank, 4M (MiB) | analysis with 4M (s) |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range scaleRows {
		b.res.md("%s", r)
	}
	b.res.md("\n**stencil.c**, a side x side block per rank on a px x py grid of ranks (MPI_Dims_create), %s iterations: per iteration an MPI_Irecv and an MPI_Isend "+
		"per neighbour (1 to 4; 4n + 1 traced events per rank and iteration with n neighbours, the posts included), one MPI_Waitall, the Jacobi update of the block, and every 10 iterations an MPI_Allreduce of the residual. "+
		"`compute`: the update's thread CPU time per iteration, the largest over the ranks (stencil.c's STENCIL line); `iteration`: the loop's "+
		"wall time per iteration on rank 0 (oversubscribed: every rank's computation shares the %d CPUs).\n\n", b.opt.stencilIters, runtime.NumCPU())
	b.res.md("| ranks | grid | side | iterations | compute (us CPU) | iteration (us) | events per rank | traced (s) | traced + analysis (s) | analysis (s) | share of traced | rank 0's CPU (s) | traced CPU (s) | analysis CPU (s) | CPU share | rank 0's phases (ms, wall/CPU) | peak RSS per rank, 128M (MiB) |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range stencilRows {
		b.res.md("%s", r)
	}
	b.res.raw[b.f.Name+"/analyzejob"] = raw
	b.res.raw[b.f.Name+"/analyzejob-stencil"] = rawS
	return nil
}
