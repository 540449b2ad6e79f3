package main

// Running the programs: the configurations, one mpirun, and reading what
// the programs print.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mpiscope/mpiscope/internal/trace"
)

// config is one way of running a program.
type config struct {
	Name   string
	Lib    func(b *bench) string
	Env    map[string]string
	Linked bool // the programs linked with the pass-through archive
}

// prog is the path of program name under c at layout lay.
func (c config) prog(b *bench, name string, lay int) string {
	if c.Linked {
		return filepath.Join(b.binsPT[lay], name)
	}
	return filepath.Join(b.bins[lay], name)
}

// configs are the configurations of the single-rank and two-rank runs,
// the first nNoTrace needing no trace writer. none2 is none again: its
// difference from none is the method's own noise on each row (a control).
// passthrough is the pass-through build preloaded; pt-linked the same
// wrappers linked into the program (its static archive).
var configs = []config{
	{"none", func(*bench) string { return "" }, nil, false},
	{"none2", func(*bench) string { return "" }, nil, false},
	{"passthrough", func(b *bench) string { return b.ptLib }, nil, false},
	{"pt-linked", func(*bench) string { return "" }, nil, true},
	{"profile", func(b *bench) string { return b.lib }, map[string]string{"MPISCOPE_ENABLE": "1"}, false},
	{"pcontrol0", func(b *bench) string { return b.lib }, map[string]string{"MPISCOPE_ENABLE": "0"}, false},
	{"trace", func(b *bench) string { return b.lib }, map[string]string{"MPISCOPE_TRACE": "1"}, false},
	{"trace-run", func(b *bench) string { return b.lib }, map[string]string{"MPISCOPE_TRACE": "1", "MPISCOPE_TRACE_COMPRESS": "run"}, false},
}

const nNoTrace = 6

// configNamed is the configuration called name.
func configNamed(name string) config {
	for _, c := range configs {
		if c.Name == name {
			return c
		}
	}
	panic("runbench: no configuration " + name)
}

type result struct {
	Stdout, Stderr string
	Wall           time.Duration
	MaxRSSKB       int64
	Job            string
}

// mpirun runs prog on np ranks with lib preloaded (if any) and env.
func (b *bench) mpirun(np int, lib string, env map[string]string, args ...string) (result, error) {
	b.jobSeq++
	job := filepath.Join(b.jobs, fmt.Sprintf("job%d", b.jobSeq))
	os.RemoveAll(job)
	e := map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_SUMMARY": "0"}
	for k, v := range env {
		e[k] = v
	}
	if lib != "" {
		e["LD_PRELOAD"] = lib
	}
	keys := make([]string, 0, len(e))
	for k := range e {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	a := []string{"-np", strconv.Itoa(np)}
	switch b.f.Name {
	case "openmpi":
		a = append(a, "--oversubscribe")
		for _, k := range keys {
			a = append(a, "-x", k+"="+e[k])
		}
	default:
		for _, k := range keys {
			a = append(a, "-genv", k, e[k])
		}
	}
	a = append(a, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.f.MPIRun, a...)
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		"OMPI_MCA_rmaps_base_oversubscribe=1")
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	t0 := time.Now()
	err := cmd.Run()
	r := result{Stdout: so.String(), Stderr: se.String(), Wall: time.Since(t0), Job: job}
	if b.opt.verbose {
		fmt.Fprintf(os.Stderr, "[%s np=%d %s %v] %.2fs\n%s%s", b.f.Name, np, filepath.Base(lib), args, r.Wall.Seconds(), r.Stdout, r.Stderr)
	}
	if err != nil {
		return r, fmt.Errorf("%s %s: %v\n%s%s", b.f.MPIRun, strings.Join(a, " "), err, r.Stdout, r.Stderr)
	}
	return r, nil
}

// parse reads "BENCH name ns calls" and "TIMER kind ns" lines; names lists
// the benchmarks in output order.
func parse(s string) (bench map[string][2]float64, names []string, timers map[string]float64) {
	bench, timers = map[string][2]float64{}, map[string]float64{}
	for _, l := range strings.Split(s, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 4 && f[0] == "BENCH":
			ns, _ := strconv.ParseFloat(f[2], 64)
			c, _ := strconv.ParseFloat(f[3], 64)
			bench[f[1]] = [2]float64{ns, c}
			names = append(names, f[1])
		case len(f) == 3 && f[0] == "TIMER":
			ns, _ := strconv.ParseFloat(f[2], 64)
			timers[f[1]] = ns
		}
	}
	return
}

// traceAvailable runs the cheap program once with MPISCOPE_TRACE=1 and looks
// for rank 0's trace file in the job directory: "" when it is there, else
// why trace mode cannot be measured.
func (b *bench) traceAvailable() string {
	r, err := b.mpirun(1, b.lib, map[string]string{"MPISCOPE_TRACE": "1"}, filepath.Join(b.bin, "cheap"), "1000")
	if err != nil {
		return "the run failed: " + firstLine(err.Error())
	}
	defer os.RemoveAll(r.Job)
	if _, err := os.Stat(trace.RankPath(r.Job, 0)); err != nil {
		return fmt.Sprintf("MPISCOPE_TRACE=1 wrote no trace with this build (%v)", err)
	}
	return ""
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// loadavg is the 1-minute load average.
func loadavg() float64 {
	b, _ := os.ReadFile("/proc/loadavg")
	var v float64
	fmt.Sscanf(string(b), "%f", &v)
	return v
}
