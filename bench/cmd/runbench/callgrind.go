package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// callgrind counts instructions per call of the cheap program's loops under
// each configuration: (Ir of a run with 2N iterations - Ir with N) / (N x 5
// repetitions), counted inside the program's cheap_loops (the application's
// thread: the trace writer's work on its own thread is not counted, and
// trace runs keep raw blocks, MPISCOPE_TRACE_COMPRESS=off, so that packing
// at finalize is not counted either). The program runs as an MPI
// singleton (no mpirun) under valgrind --tool=callgrind.
func (b *bench) callgrind() error {
	if _, err := exec.LookPath("valgrind"); err != nil {
		b.res.md("\ncallgrind: valgrind not installed.\n")
		return nil
	}
	const n = 100000
	b.res.md("\n## Instructions per call (%s, valgrind --tool=callgrind)\n\n", b.f.Name)
	b.res.md("Instructions executed per call on the application's thread (callgrind --toggle-collect=cheap_loops): (Ir(2N iterations) - Ir(N)) / (5 N), N = %d, cheap program as an MPI singleton; trace with MPISCOPE_TRACE_COMPRESS=off:\n\n", n)
	var cgConfigs []config
	for _, c := range configs {
		if c.Name != "trace-run" && c.Name != "none2" { // the same hot path as trace; none again
			cgConfigs = append(cgConfigs, c)
		}
	}
	b.res.mdHead(append(append([]string{"loop"}, names(cgConfigs)...), "profile - none", "trace - none"))
	res := map[string]map[string]float64{}
	for _, loop := range []string{"comm_rank", "iprobe", "allreduce_1", "test_done", "wtime"} {
		res[loop] = map[string]float64{}
		b.res.md("| %s |", loop)
		for _, c := range cgConfigs {
			var ir [2]float64
			for i, iters := range []int{n, 2 * n} {
				out := filepath.Join(b.dir, "callgrind.out")
				cmd := exec.Command("valgrind", "--tool=callgrind", "--toggle-collect=cheap_loops", "--callgrind-out-file="+out,
					c.prog(b, "cheap", 0), strconv.Itoa(iters), loop)
				cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
					"MPISCOPE_OUT="+filepath.Join(b.jobs, "callgrind"), "MPISCOPE_SUMMARY=0",
					// Go's preemption signals upset callgrind.
					"GODEBUG=asyncpreemptoff=1")
				for k, v := range c.env(b) {
					cmd.Env = append(cmd.Env, k+"="+v)
				}
				if c.Env["MPISCOPE_TRACE"] != "" {
					cmd.Env = append(cmd.Env, "MPISCOPE_TRACE_COMPRESS=off")
				}
				if lib := c.Lib(b); lib != "" {
					cmd.Env = append(cmd.Env, "LD_PRELOAD="+lib)
				}
				if o, err := cmd.CombinedOutput(); err != nil {
					return fmt.Errorf("valgrind %s: %v\n%s", loop, err, o)
				}
				os.RemoveAll(filepath.Join(b.jobs, "callgrind"))
				v, err := callgrindTotal(out)
				if err != nil {
					return err
				}
				ir[i] = v
			}
			per := (ir[1] - ir[0]) / (5 * n)
			res[loop][c.Name] = per
			b.res.md(" %.1f |", per)
		}
		b.res.md(" %+.1f | %+.1f |\n", res[loop]["profile"]-res[loop]["none"], res[loop]["trace"]-res[loop]["none"])
	}
	b.res.raw[b.f.Name+"/callgrind"] = res
	return nil
}

func callgrindTotal(path string) (float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "totals:") || strings.HasPrefix(l, "summary:") {
			f := strings.Fields(l)
			if len(f) >= 2 {
				return strconv.ParseFloat(f[1], 64)
			}
		}
	}
	return 0, fmt.Errorf("%s: no totals", path)
}
