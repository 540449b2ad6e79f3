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

var timingRe = regexp.MustCompile(`([a-z_]+)=([0-9.]+)(ms)?`)

// scale: finalize time for growing rank counts.
func (b *bench) scale() error {
	b.res.md("\n## Finalize and merge (%s)\n\n", b.f.Name)
	b.res.md("scale.c (ring exchange, two allreduces, cheap calls; 200 iterations), oversubscribed on %d CPUs with OMPI_MCA_mpi_yield_when_idle=1. "+
		"`finalize` is MPI_Finalize's wall time on rank 0 (median of 3 runs), with and without mpiscope; the phases are rank 0's (MPISCOPE_DEBUG_TIMING=1): "+
		"local = read own tables and build the rank profile, merge = decoding and merging the received partial profiles (the tree's work on rank 0, "+
		"log2 P receives), comm = waiting for and receiving them, then symbolize, write and report. Phases: median of the 3 runs; "+
		"the verdict on the merge's growth takes each P's fastest merge.\n\n", runtime.NumCPU())
	env := map[string]string{"OMPI_MCA_mpi_yield_when_idle": "1"}
	res := map[string]any{}
	nps := b.opt.scaleNP
	if b.f.Name == "mpich" && !b.opt.scaleSet {
		// MPICH's ranks busy-poll without yielding: 16 or 32 of them on 2
		// CPUs take minutes per run.
		nps = "2,4,8"
		b.res.md("MPICH ranks busy-poll without yielding, so only 2, 4 and 8 ranks are run on this machine (-scale-np to change).\n\n")
	}
	var sNP []int
	var sRecv, sMerge []float64
	b.res.md("| ranks | finalize none (ms) | finalize profile (ms) | local | comm | merge | receives | symbolize | write | report | mpiscope total (ms) |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range strings.Split(nps, ",") {
		np, _ := strconv.Atoi(s)
		var fin = map[string][]float64{}
		ph := map[string][]float64{}
		for rep := 0; rep < 3; rep++ {
			for _, c := range []config{configNamed("none"), configNamed("profile")} {
				e := map[string]string{"MPISCOPE_DEBUG_TIMING": "1"}
				for k, v := range env {
					e[k] = v
				}
				for k, v := range c.Env {
					e[k] = v
				}
				r, err := b.mpirun(np, c.Lib(b), e, filepath.Join(b.bin, "scale"))
				if err != nil {
					return err
				}
				os.RemoveAll(r.Job)
				var n int
				var ms float64
				for _, l := range strings.Split(r.Stdout, "\n") {
					if strings.HasPrefix(l, "FINALIZE ") {
						fmt.Sscanf(l, "FINALIZE %d %f", &n, &ms)
					}
				}
				fin[c.Name] = append(fin[c.Name], ms)
				if c.Name == "profile" {
					for _, l := range strings.Split(r.Stderr, "\n") {
						if !strings.Contains(l, "finalize timing") {
							continue
						}
						for _, m := range timingRe.FindAllStringSubmatch(l, -1) {
							v, _ := strconv.ParseFloat(m[2], 64)
							ph[m[1]] = append(ph[m[1]], v)
						}
					}
				}
			}
		}
		med := func(k string) float64 { return summarize(ph[k]).Med }
		b.res.md("| %d | %.1f | %.1f | %.2f | %.2f | %.2f | %.0f | %.2f | %.2f | %.2f | %.1f |\n", np, summarize(fin["none"]).Med, summarize(fin["profile"]).Med,
			med("local"), med("reduce_comm"), med("reduce_merge"), med("reduce_recvs"), med("symbolize"), med("write"), med("report"), med("total"))
		res[s] = map[string]any{"finalize": fin, "phases": ph}
		sNP = append(sNP, np)
		sRecv = append(sRecv, med("reduce_recvs"))
		// The verdict takes the fastest run's merge: with up to 32 ranks on
		// 2 CPUs rank 0 loses its CPU during some runs' merge (1.40 ms
		// against 0.35-0.44 at P=32 in a run of 2026-11-25, its local phase 10 x
		// too), which is the machine's, not the merge's growth with P.
		sMerge = append(sMerge, summarize(ph["reduce_merge"]).Min)
	}
	b.res.t.merge.Rows = append(b.res.t.merge.Rows, mergeRows(b.f.Name, sNP, sRecv, sMerge)...)
	b.res.raw[b.f.Name+"/scale"] = res
	return nil
}
