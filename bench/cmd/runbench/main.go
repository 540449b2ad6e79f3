// Command runbench measures mpiscope's overhead, memory and scaling (make
// bench). See docs/performance.md for the method and the latest results.
//
// Sections (-only, comma-separated; default all):
//
//	overhead  the programs of bench/progs under six configurations run
//	          interleaved (none, none again, passthrough, profile, pcontrol0,
//	          trace) for -rounds rounds; per-call overhead as a ratio to two
//	          timestamp reads measured in the same run
//	ab        the two-rank benchmarks with the modes (PMPI_ direct, two
//	          rdtsc reads around PMPI_, Pcontrol(0), profile, trace)
//	          alternating inside one process (bench/progs/ab.c), under no
//	          library, the pass-through build and libmpiscope, -ab-rounds
//	          rounds
//	memory    peak RSS growth of rank 0 over 10^6 and 10^7 calls from 1,128
//	          call sites to 64 peers (65 ranks, oversubscribed)
//	scale     finalize time and its merge phase for 2..32 ranks
//	synth     mpiscope report on 100,000 synthetic rank profiles
//	tracesynth mpiscope convert and analyze on a synthetic trace of
//	          -trace-events events (events per second, per CPU second)
//	callgrind instructions per wrapped call (valgrind; not in the default set)
//	tracecost trace mode's instructions per call on bw_8, pingpong_8,
//	          pingpong_0 and local_test_done, two ranks under callgrind, and
//	          where they go (tracecost.go; not in the default set)
//	unwind    the call-path unwinder: ms_unwind at depths 1-16 with and
//	          without frame pointers (bench/unwind; no MPI; unwind.go)
//	channel   the piggyback channel per message over profile mode (channel.go)
//	depth     call paths through the wrappers: MPISCOPE_DEPTH 1, 4, 8 and 16,
//	          with and without frame pointers (bench/depth; depth.go)
//	depth-callgrind instructions per call at each depth (valgrind; not in
//	          the default set; depth.go)
//	channel-off profile mode's instructions per call with the piggyback
//	          channel off, against the channel compiled out (valgrind; not
//	          in the default set; channeloff.go)
//	analyzejob the analysis in the job (MPISCOPE_ANALYZE=1) at 2..32 ranks
//	          on scale.c at two program lengths (-analyzejob-iters) and on
//	          stencil.c, a Jacobi solver (-stencil-side, -stencil-iters):
//	          its time as a share of the traced run's, its CPU time, events
//	          and peak RSS per rank (analyzejob.go)
//
// In overhead and ab, round r runs every configuration with the programs
// at layout r mod -layouts: their code shifted by one of layoutPads' byte
// counts (bench/progs/pad.c), so that no figure rests on one placement of
// the program's loops.
//
// Results go to stdout and, as Markdown, to <build>/bench/results.md (raw
// numbers in results.json).
//
// Files: main.go (the command line and the run), build.go (what each
// family's runs need built), runs.go (configurations and mpirun),
// results.go (the results value every section writes to), one file per
// section (overhead.go, ab.go, memory.go, scale.go, synth.go,
// callgrind.go), and targets.go (the verdicts).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// options are the command line's settings.
type options struct {
	build          string // build directory, absolute once run starts
	family         string
	rounds         int
	only           string
	abRounds       int
	abCycles       int
	synthRanks     int
	traceEvents    uint64
	traceRanks     int
	traceBase      string // tracesynth: an earlier mpiscope binary run beside this build's
	timelineEvents uint64
	memCalls       string
	scaleNP        string
	scaleSet       bool // -scale-np given
	analyzeIters   string
	stencilSide    string
	stencilIters   string
	verbose        bool
	layouts        int
	variants       string
	depthRounds    int
	depthCycles    int
}

// parseOptions reads the command line.
func parseOptions(args []string) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("runbench", flag.ContinueOnError)
	fs.StringVar(&o.build, "build", "build", "build `directory` (make lib, make cli)")
	fs.StringVar(&o.family, "family", "", "MPI `family`: openmpi, mpich or all (default: the family of mpicc)")
	fs.IntVar(&o.rounds, "rounds", 10, "interleaved rounds of the overhead section")
	fs.StringVar(&o.only, "only", "overhead,ab,memory,scale,synth,tracesynth,unwind,channel,depth", "`sections` to run: overhead, ab, memory, scale, synth, tracesynth, unwind, callgrind, tracecost, channel, channel-off, depth, depth-callgrind, analyzejob, timeline (not by default: a 1 GB trace)")
	fs.Uint64Var(&o.traceEvents, "trace-events", 100_000_000, "events of the tracesynth section's synthetic trace")
	fs.IntVar(&o.traceRanks, "trace-ranks", 8, "ranks of the tracesynth section's synthetic trace")
	fs.StringVar(&o.traceBase, "trace-base", "", "an earlier mpiscope `binary` whose convert and analyze the tracesynth section runs too, interleaved with this build's (before/after rows)")
	fs.Uint64Var(&o.timelineEvents, "timeline-events", 600_000_000, "events of the timeline section's synthetic trace (about 1 GB)")
	fs.IntVar(&o.abRounds, "ab-rounds", 5, "rounds of the ab section")
	fs.IntVar(&o.abCycles, "ab-cycles", 13, "cycles of the modes per benchmark in each run of the ab section, after one warm-up (bench/progs/ab.c)")
	fs.IntVar(&o.depthRounds, "depth-rounds", 5, "rounds of the depth section")
	fs.IntVar(&o.depthCycles, "depth-cycles", 11, "cycles of the modes per benchmark in each run of the depth section, after one warm-up (bench/depth/depth.c)")
	fs.IntVar(&o.synthRanks, "synth-ranks", 100000, "rank profiles for the synth section")
	fs.StringVar(&o.memCalls, "mem-calls", "1000000,10000000", "call counts of the memory section")
	fs.StringVar(&o.scaleNP, "scale-np", "2,4,8,16,32", "rank counts of the scale section")
	fs.StringVar(&o.analyzeIters, "analyzejob-iters", "500,5000", "program lengths (scale.c's `iterations`) of the analyzejob section, each run at every rank count")
	fs.StringVar(&o.stencilSide, "stencil-side", "256", "block `sides` (grid points per rank: side x side) of stencil.c in the analyzejob section")
	fs.StringVar(&o.stencilIters, "stencil-iters", "1000", "program lengths (stencil.c's `iterations`) of the analyzejob section, each run at every side and rank count")
	fs.BoolVar(&o.verbose, "v", false, "print every run")
	fs.IntVar(&o.layouts, "layouts", len(layoutPads), "program `layouts` the overhead and ab sections rotate through, round r running every configuration at layout r mod n (1: the programs as compiled)")
	fs.StringVar(&o.variants, "variants", "", "extra builds `name=lib.so,...`: profile mode in the overhead section, every mode in the ab section (to compare builds side by side); {family} in a path is replaced by the family's name (bench/build-variant.sh builds them)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	fs.Visit(func(f *flag.Flag) { o.scaleSet = o.scaleSet || f.Name == "scale-np" })
	if o.depthRounds < 1 || o.depthCycles < 1 {
		return nil, fmt.Errorf("-depth-rounds %d, -depth-cycles %d: want at least 1", o.depthRounds, o.depthCycles)
	}
	if o.abCycles < 1 {
		return nil, fmt.Errorf("-ab-cycles %d: want at least 1", o.abCycles)
	}
	return o, nil
}

func main() {
	opt, err := parseOptions(os.Args[1:])
	if err == flag.ErrHelp {
		os.Exit(0)
	}
	if err == nil {
		err = run(opt)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "runbench:", err)
		os.Exit(1)
	}
}

func run(opt *options) error {
	abs, err := filepath.Abs(opt.build)
	if err != nil {
		return err
	}
	opt.build = abs
	unlock, err := lockBench(opt.build)
	if err != nil {
		return err
	}
	defer unlock()
	fams, err := pickFamilies(opt.family)
	if err != nil {
		return err
	}
	sections := map[string]bool{}
	for _, s := range strings.Split(opt.only, ",") {
		sections[strings.TrimSpace(s)] = true
	}
	res := newResults()
	t0 := time.Now()
	// took[i] is how long the i-th part of the run took, for the
	// benchmark's own time budget (docs/performance.md).
	var took []string
	timed := func(name string, fn func() error) error {
		t := time.Now()
		err := fn()
		took = append(took, fmt.Sprintf("%s %.0f s", name, time.Since(t).Seconds()))
		return err
	}
	res.md("# mpiscope benchmark results\n\n%s\n\n", machine())
	perFamily := false // sections that run MPI programs
	for _, s := range []string{"overhead", "ab", "callgrind", "tracecost", "memory", "scale", "channel", "analyzejob"} {
		perFamily = perFamily || sections[s]
	}
	if !perFamily {
		fams = nil // synth, tracesynth and unwind need no MPI build
	}
	for _, f := range fams {
		var b *bench
		if err := timed(f.Name+" builds", func() (err error) { b, err = prepare(f, opt, res); return err }); err != nil {
			return err
		}
		for _, s := range []struct {
			name string
			fn   func() error
		}{{"overhead", b.overhead}, {"ab", b.ab}, {"callgrind", b.callgrind}, {"tracecost", b.tracecost}, {"memory", b.memory}, {"scale", b.scale}, {"channel", b.channel}, {"analyzejob", b.analyzeJob}} {
			if !sections[s.name] {
				continue
			}
			if err := timed(f.Name+" "+s.name, s.fn); err != nil {
				return err
			}
		}
	}
	if sections["synth"] {
		if err := timed("synth", func() error { return synth(opt, res) }); err != nil {
			return err
		}
	}
	if sections["tracesynth"] {
		if err := timed("tracesynth", func() error { return traceSynth(opt, res) }); err != nil {
			return err
		}
	}
	if sections["unwind"] {
		if err := timed("unwind", func() error { return unwindBench(opt, res) }); err != nil {
			return err
		}
	}
	for _, s := range []struct {
		name string
		fn   func(*options, *results) error
	}{{"depth", depthBench}, {"depth-callgrind", depthCallgrind}, {"channel-off", channelOff}} {
		if sections[s.name] {
			if err := timed(s.name, func() error { return s.fn(opt, res) }); err != nil {
				return err
			}
		}
	}
	if sections["timeline"] {
		if err := timed("timeline", func() error { return viewTimeline(opt, res) }); err != nil {
			return err
		}
	}
	res.writeTargets()
	res.md("\nTotal benchmark time: %.0f s (%s).\n", time.Since(t0).Seconds(), strings.Join(took, ", "))
	dir := filepath.Join(opt.build, "bench")
	if err := os.WriteFile(filepath.Join(dir, "results.md"), res.out.Bytes(), 0o666); err != nil {
		return err
	}
	j, err := json.MarshalIndent(res.raw, "", "  ")
	if err != nil {
		return fmt.Errorf("results.json: %v (results.md is written)", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), j, 0o666); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "runbench: results in %s/results.md\n", dir)
	return nil
}

// pickFamilies returns the families to run: want (openmpi, mpich or all),
// or the family of mpicc.
func pickFamilies(want string) ([]family, error) {
	if want == "" {
		b, err := exec.Command("go", "run", "./cmd/mpiwrapgen", "-mpicc", "mpicc", "-print-family").Output()
		if err != nil {
			return nil, fmt.Errorf("cannot tell the family of mpicc (use -family): %v", err)
		}
		want = strings.TrimSpace(string(b))
	}
	var fs []family
	for _, f := range families {
		if want == "all" || want == f.Name {
			if _, err := exec.LookPath(f.MPICC); err != nil {
				if want == "all" {
					continue
				}
				return nil, fmt.Errorf("%s: %s not found", f.Name, f.MPICC)
			}
			fs = append(fs, f)
		}
	}
	if len(fs) == 0 {
		return nil, fmt.Errorf("no MPI family %q", want)
	}
	return fs, nil
}

func machine() string {
	model := "unknown CPU"
	if b, err := exec.Command("lscpu").Output(); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "Model name" {
				model = strings.TrimSpace(v)
			}
		}
	}
	var u syscall.Utsname
	kernel := "?"
	if syscall.Uname(&u) == nil {
		var b []byte
		for _, c := range u.Release {
			if c == 0 {
				break
			}
			b = append(b, byte(c))
		}
		kernel = string(b)
	}
	gov := ""
	if b, err := exec.Command("lscpu").Output(); err == nil && strings.Contains(string(b), "Hypervisor vendor") {
		gov = ", virtual machine"
	}
	return fmt.Sprintf("Machine: %s, %d CPUs%s, Linux %s, %s. Date: %s.", model, runtime.NumCPU(), gov, kernel,
		runtime.Version(), time.Now().UTC().Format("2006-01-02 15:04 UTC"))
}
