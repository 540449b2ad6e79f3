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
	// Stack: the tools stacked below libmpiscope (MPISCOPE_STACK), files
	// of the family's bench directory (the reference wrapper's builds).
	Stack []string
}

// env is the configuration's environment for a run: Env, and
// MPISCOPE_STACK when it stacks tools.
func (c config) env(b *bench) map[string]string {
	if len(c.Stack) == 0 {
		return c.Env
	}
	e := map[string]string{}
	for k, v := range c.Env {
		e[k] = v
	}
	var paths []string
	for _, t := range c.Stack {
		paths = append(paths, filepath.Join(b.dir, t))
	}
	e["MPISCOPE_STACK"] = strings.Join(paths, ":")
	return e
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
//
// refwrap is the reference wrapper (bench/progs/refwrap.c: two
// clock_gettime reads and a counter per call) preloaded alone: what a
// plain timing wrapper costs. stack1 and stack2 are profile mode with one
// and two builds of it stacked below (MPISCOPE_STACK, docs/stacking.md),
// stack1-off with the one level off (REFWRAP=off: it only calls PMPI_).
var configs = []config{
	{Name: "none", Lib: func(*bench) string { return "" }},
	{Name: "none2", Lib: func(*bench) string { return "" }},
	{Name: "passthrough", Lib: func(b *bench) string { return b.ptLib }},
	{Name: "pt-linked", Lib: func(*bench) string { return "" }, Linked: true},
	{Name: "profile", Lib: func(b *bench) string { return b.lib }, Env: map[string]string{"MPISCOPE_ENABLE": "1"}},
	{Name: "pcontrol0", Lib: func(b *bench) string { return b.lib }, Env: map[string]string{"MPISCOPE_ENABLE": "0"}},
	{Name: "refwrap", Lib: func(b *bench) string { return b.refLib }},
	{Name: "stack1", Lib: func(b *bench) string { return b.lib }, Env: map[string]string{"MPISCOPE_ENABLE": "1"}, Stack: []string{refLevels[0]}},
	{Name: "stack2", Lib: func(b *bench) string { return b.lib }, Env: map[string]string{"MPISCOPE_ENABLE": "1"}, Stack: refLevels},
	{Name: "stack1-off", Lib: func(b *bench) string { return b.lib }, Env: map[string]string{"MPISCOPE_ENABLE": "1", "REFWRAP": "off"}, Stack: []string{refLevels[0]}},
	{Name: "trace", Lib: func(b *bench) string { return b.lib }, Env: map[string]string{"MPISCOPE_TRACE": "1"}},
	{Name: "trace-run", Lib: func(b *bench) string { return b.lib }, Env: map[string]string{"MPISCOPE_TRACE": "1", "MPISCOPE_TRACE_COMPRESS": "run"}},
}

const nNoTrace = 10

// checkLevels checks, from a run's stderr, that every reference wrapper
// of the configuration was there and counted the calls that reached it
// (bench/progs/refwrap.c prints "REFWRAP <name> <calls>" at MPI_Finalize),
// or none when it was off: a stack that did not load would otherwise
// measure profile mode alone.
func (c config) checkLevels(stderr string) error {
	want := map[string]bool{} // name -> calls expected
	if c.Name == "refwrap" {
		want["refwrap"] = true
	}
	for _, t := range c.Stack {
		want[strings.TrimSuffix(t, ".so")] = c.Env["REFWRAP"] != "off"
	}
	for name, counted := range want {
		var n int64 = -1
		for _, l := range strings.Split(stderr, "\n") {
			if f := strings.Fields(l); len(f) == 3 && f[0] == "REFWRAP" && f[1] == name {
				n, _ = strconv.ParseInt(f[2], 10, 64)
			}
		}
		switch {
		case n < 0:
			return fmt.Errorf("the reference wrapper %s did not run (no REFWRAP line)", name)
		case counted && n == 0:
			return fmt.Errorf("the reference wrapper %s counted no calls", name)
		case !counted && n != 0:
			return fmt.Errorf("the reference wrapper %s, off, counted %d calls", name, n)
		}
	}
	return nil
}

// refLevels are the two builds of the reference wrapper stacked in the
// stack configurations (two files: a stack holds each library once).
var refLevels = []string{"ref1.so", "ref2.so"}

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
