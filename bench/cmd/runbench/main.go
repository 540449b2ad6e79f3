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
//	callgrind instructions per wrapped call (valgrind; not in the default set)
//
// In overhead and ab, round r runs every configuration with the programs
// at layout r mod -layouts: their code shifted by one of layoutPads' byte
// counts (bench/progs/pad.c), so that no figure rests on one placement of
// the program's loops.
//
// Results go to stdout and, as Markdown, to <build>/bench/results.md (raw
// numbers in results.json).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mpiscope/mpiscope/profile"
)

type family struct {
	Name, MPICC, MPIRun string
}

var families = []family{
	{"openmpi", "mpicc.openmpi", "mpirun.openmpi"},
	{"mpich", "mpicc.mpich", "mpirun.mpich"},
}

var (
	buildDir   = flag.String("build", "build", "build `directory` (make lib, make cli)")
	familyFlag = flag.String("family", "", "MPI `family`: openmpi, mpich or all (default: the family of mpicc)")
	rounds     = flag.Int("rounds", 10, "interleaved rounds of the overhead section")
	only       = flag.String("only", "overhead,ab,memory,scale,synth", "`sections` to run: overhead, ab, memory, scale, synth, callgrind")
	abRounds   = flag.Int("ab-rounds", 5, "rounds of the ab section")
	abCycles   = flag.Int("ab-cycles", 13, "cycles of the modes per benchmark in each run of the ab section, after one warm-up (bench/progs/ab.c)")
	synthRanks = flag.Int("synth-ranks", 100000, "rank profiles for the synth section")
	memCalls   = flag.String("mem-calls", "1000000,10000000", "call counts of the memory section")
	scaleNP    = flag.String("scale-np", "2,4,8,16,32", "rank counts of the scale section")
	verbose    = flag.Bool("v", false, "print every run")
	layouts    = flag.Int("layouts", len(layoutPads), "program `layouts` the overhead and ab sections rotate through, round r running every configuration at layout r mod n (1: the programs as compiled)")
	variants   = flag.String("variants", "", "extra builds `name=lib.so,...`: profile mode in the overhead section, every mode in the ab section (to compare builds side by side); {family} in a path is replaced by the family's name (bench/build-variant.sh builds them)")
)

// layoutPads are the shifts, in bytes, of the benchmark programs' code in
// their layouts (bench/progs/pad.c): the first is the program as
// compiled; the others, about 3/4 KiB apart, differ in bits 5 to 11 of
// every address of the program's loops.
var layoutPads = []int{0, 736, 1504, 2272, 3104}

var out bytes.Buffer // Markdown results

func md(format string, a ...any) {
	fmt.Fprintf(&out, format, a...)
	fmt.Printf(format, a...)
}

var raw = map[string]any{}

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "runbench:", err)
		os.Exit(1)
	}
}

func run() error {
	abs, err := filepath.Abs(*buildDir)
	if err != nil {
		return err
	}
	*buildDir = abs
	unlock, err := lockBench()
	if err != nil {
		return err
	}
	defer unlock()
	fams, err := pickFamilies()
	if err != nil {
		return err
	}
	sections := map[string]bool{}
	for _, s := range strings.Split(*only, ",") {
		sections[strings.TrimSpace(s)] = true
	}
	if *abCycles < 1 {
		return fmt.Errorf("-ab-cycles %d: want at least 1", *abCycles)
	}
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
	md("# mpiscope benchmark results\n\n%s\n\n", machine())
	for _, f := range fams {
		var b *bench
		if err := timed(f.Name+" builds", func() (err error) { b, err = prepare(f); return err }); err != nil {
			return err
		}
		for _, s := range []struct {
			name string
			fn   func() error
		}{{"overhead", b.overhead}, {"ab", b.ab}, {"callgrind", b.callgrind}, {"memory", b.memory}, {"scale", b.scale}} {
			if !sections[s.name] {
				continue
			}
			if err := timed(f.Name+" "+s.name, s.fn); err != nil {
				return err
			}
		}
	}
	if sections["synth"] {
		if err := timed("synth", synth); err != nil {
			return err
		}
	}
	writeTargets()
	md("\nTotal benchmark time: %.0f s (%s).\n", time.Since(t0).Seconds(), strings.Join(took, ", "))
	dir := filepath.Join(*buildDir, "bench")
	if err := os.WriteFile(filepath.Join(dir, "results.md"), out.Bytes(), 0o666); err != nil {
		return err
	}
	j, err := json.MarshalIndent(raw, "", "  ")
	if err != nil {
		return fmt.Errorf("results.json: %v (results.md is written)", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), j, 0o666); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "runbench: results in %s/results.md\n", dir)
	return nil
}

func pickFamilies() ([]family, error) {
	want := *familyFlag
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

// bench is one family's prepared benchmark.
type bench struct {
	f      family
	dir    string   // build/bench/<family>
	bin    string   // compiled programs
	bins   []string // per layout, the overhead and ab sections' programs (bins[0] = bin)
	binsPT []string // per layout, the same linked with the pass-through archive (binsPT[0] = <dir>/bin-pt-linked)
	lib    string   // the normal libmpiscope.so
	ptLib  string   // the pass-through build
	ptArch string   // the pass-through build as a static archive
	jobs   string   // job directories (scratch)
	traceN string   // why trace is not available, "" if it is
}

// prepare builds the pass-through library and the programs.
func prepare(f family) (*bench, error) {
	b := &bench{f: f, dir: filepath.Join(*buildDir, "bench", f.Name)}
	b.bin = filepath.Join(b.dir, "bin")
	b.jobs = filepath.Join(b.dir, "jobs")
	lib := filepath.Join(*buildDir, "lib", f.Name, "libmpiscope.so")
	b.lib = filepath.Join(*buildDir, "bench", f.Name+"-profile", "libmpiscope.so")
	b.ptLib = filepath.Join(*buildDir, "bench", f.Name+"-passthrough", "libmpiscope.so")
	b.ptArch = filepath.Join(*buildDir, "bench", f.Name+"-passthrough", "libmpiscope.a")
	binPT := filepath.Join(b.dir, "bin-pt-linked")
	if *layouts < 1 || *layouts > len(layoutPads) {
		return nil, fmt.Errorf("-layouts %d: want 1 to %d", *layouts, len(layoutPads))
	}
	b.bins, b.binsPT = []string{b.bin}, []string{binPT}
	for _, pad := range layoutPads[1:*layouts] {
		b.bins = append(b.bins, fmt.Sprintf("%s-pad%d", b.bin, pad))
		b.binsPT = append(b.binsPT, fmt.Sprintf("%s-pad%d", binPT, pad))
	}
	for _, d := range append(append([]string{b.jobs, filepath.Dir(b.ptLib), filepath.Dir(b.lib)}, b.bins...), b.binsPT...) {
		if err := os.MkdirAll(d, 0o777); err != nil {
			return nil, err
		}
	}
	// A copy, so that a rebuild during the benchmark cannot change it.
	data, err := os.ReadFile(lib)
	if err != nil {
		return nil, fmt.Errorf("%v (run make lib)", err)
	}
	if err := replaceFile(b.lib, func(tmp string) error { return os.WriteFile(tmp, data, 0o755) }); err != nil {
		return nil, err
	}
	// Pass-through build: the same package with the generated wrappers
	// replaced (go build -overlay) by ones that only call PMPI_.
	gen := filepath.Join(b.dir, "zwrap_"+f.Name+".c")
	if err := sh("go", "run", "./cmd/mpiwrapgen", "-mpicc", f.MPICC, "-passthrough", "-o", gen); err != nil {
		return nil, err
	}
	wd, _ := os.Getwd()
	ov := map[string]map[string]string{"Replace": {filepath.Join(wd, "internal/interpose/zwrap_"+f.Name+".c"): gen}}
	ovb, _ := json.Marshal(ov)
	ovPath := filepath.Join(b.dir, "overlay.json")
	if err := os.WriteFile(ovPath, ovb, 0o666); err != nil {
		return nil, err
	}
	// Link the family's Fortran libraries as scripts/build-lib.sh does.
	fflags, err := exec.Command("go", "run", "./cmd/mpiwrapgen", "fortran", "-optional", "-mpicc", f.MPICC, "-ldflags").Output()
	if err != nil {
		return nil, fmt.Errorf("mpiwrapgen fortran -ldflags: %v", err)
	}
	// The same wrappers as a shared library (preloaded, like libmpiscope)
	// and as a static archive (linked into the programs: pt-linked).
	for _, t := range []struct{ out, mode string }{{b.ptLib, "c-shared"}, {b.ptArch, "c-archive"}} {
		err = replaceFile(t.out, func(tmp string) error {
			cmd := exec.Command("go", "build", "-overlay", ovPath, "-tags", "mpiscope_"+f.Name, "-buildmode="+t.mode, "-o", tmp, "./cmd/libmpiscope")
			cmd.Env = append(os.Environ(), "CC="+f.MPICC, "CGO_LDFLAGS="+os.Getenv("CGO_LDFLAGS")+" "+strings.TrimSpace(string(fflags)))
			o, err := cmd.CombinedOutput()
			os.Remove(strings.TrimSuffix(tmp, filepath.Ext(tmp)) + ".h")
			if err != nil {
				return fmt.Errorf("building the pass-through library (%s): %v\n%s", t.mode, err, o)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	for _, p := range []struct {
		name, opt string
	}{{"cheap", "-O2"}, {"pingpong", "-O2"}, {"allreduce", "-O2"}, {"ab", "-O2"}, {"scale", "-O2"}, {"memtest", "-O0"}} {
		if err := sh(f.MPICC, p.opt, "-g", "-o", filepath.Join(b.bin, p.name), filepath.Join("bench/progs", p.name+".c")); err != nil {
			return nil, err
		}
	}
	// The overhead and ab sections' programs at the other layouts, and at
	// every layout with the pass-through wrappers linked in, as
	// `-lmpiscope` linked statically puts them: each call reaches the
	// wrapper directly, in place of the program's PLT stub.
	timed := []string{"ab"}
	for _, p := range progs {
		timed = append(timed, p.prog)
	}
	for lay := range b.bins {
		var pad []string
		if lay > 0 {
			pad = []string{fmt.Sprintf("-DBENCH_PAD=%d", layoutPads[lay]), "bench/progs/pad.c"}
		}
		for _, p := range timed {
			src := append(append([]string{"-O2", "-g"}, pad...), filepath.Join("bench/progs", p+".c"))
			if lay > 0 {
				if err := sh(f.MPICC, append(src, "-o", filepath.Join(b.bins[lay], p))...); err != nil {
					return nil, err
				}
			}
			if err := sh(f.MPICC, append(src, "-o", filepath.Join(b.binsPT[lay], p), b.ptArch, "-lpthread", "-ldl")...); err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

// replaceFile makes path anew by rename: write (given a temporary name in
// the same directory) makes the new file, which then takes path's name. A
// library still mapped by a running program keeps its old pages; written
// in place, it would be truncated under the program (SIGBUS).
func replaceFile(path string, write func(tmp string) error) error {
	tmp := filepath.Join(filepath.Dir(path), ".new-"+filepath.Base(path))
	os.Remove(tmp)
	if err := write(tmp); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// lockBench takes an exclusive lock on the benchmark's directory for the
// whole run: two runs at once would rebuild each other's libraries and
// share the CPUs, and the figures of both would be wrong.
func lockBench() (unlock func(), err error) {
	dir := filepath.Join(*buildDir, "bench")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: another runbench is running in %s (%v)", f.Name(), *buildDir, err)
	}
	return func() { f.Close() }, nil
}

func sh(name string, args ...string) error {
	o, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, o)
	}
	return nil
}

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

var jobSeq int

// mpirun runs prog on np ranks with lib preloaded (if any) and env.
func (b *bench) mpirun(np int, lib string, env map[string]string, args ...string) (result, error) {
	jobSeq++
	job := filepath.Join(b.jobs, fmt.Sprintf("job%d", jobSeq))
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
	if *verbose {
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

type stats struct{ Med, Min, Max float64 }

func summarize(v []float64) stats {
	if len(v) == 0 {
		return stats{}
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return stats{m, s[0], s[len(s)-1]}
}

func (s stats) String() string {
	return fmt.Sprintf("%.1f [%.1f, %.1f]", s.Med, s.Min, s.Max)
}

// traceAvailable runs the cheap program once with MPISCOPE_TRACE=1 and looks
// for trace output in the job directory.
func (b *bench) traceAvailable() string {
	r, err := b.mpirun(1, b.lib, map[string]string{"MPISCOPE_TRACE": "1"}, filepath.Join(b.bin, "cheap"), "1000")
	if err != nil {
		return "the run failed: " + firstLine(err.Error())
	}
	ents, _ := os.ReadDir(r.Job)
	for _, e := range ents {
		if strings.Contains(strings.ToLower(e.Name()), "trace") || strings.HasSuffix(e.Name(), ".otf2") {
			return ""
		}
	}
	os.RemoveAll(r.Job)
	return "MPISCOPE_TRACE=1 writes no trace with this build (tracing is not implemented yet)"
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

type progRun struct {
	prog string
	np   int
	arg  string
}

// phaseFactor: a run this many times slower or faster than the lower
// quartile of its configuration's rounds ran in another phase of the VM,
// not with another overhead, and is dropped.
const phaseFactor = 1.5

var progs = []progRun{{"cheap", 1, "400000"}, {"pingpong", 2, "20000"}, {"allreduce", 2, "20000"}}

// variant is an extra build of the library given with -variants.
type variant struct{ name, lib string }

// parseVariants reads -variants: name=lib.so,... ({family} in a path
// stands for the family's name, so that one flag serves -family all).
func parseVariants(s, fam string) ([]variant, error) {
	var vs []variant
	if s == "" {
		return nil, nil
	}
	for _, v := range strings.Split(s, ",") {
		name, lib, ok := strings.Cut(v, "=")
		if !ok || name == "" || lib == "" {
			return nil, fmt.Errorf("-variants: want name=lib.so, got %q", v)
		}
		vs = append(vs, variant{name, strings.ReplaceAll(lib, "{family}", fam)})
	}
	return vs, nil
}

func (b *bench) overhead() error {
	b.traceN = b.traceAvailable()
	cfgs := configs
	if b.traceN != "" {
		cfgs = cfgs[:nNoTrace]
	}
	nbase := len(cfgs) // the configurations run; variants follow
	vars, err := parseVariants(*variants, b.f.Name)
	if err != nil {
		return err
	}
	if len(vars) > 0 {
		cfgs = append([]config(nil), cfgs...)
		for _, v := range vars {
			lib := v.lib
			cfgs = append(cfgs, config{v.name, func(*bench) string { return lib }, map[string]string{"MPISCOPE_ENABLE": "1"}, false})
		}
	}
	// Table columns: every configuration (trace as n/a when missing), then variants.
	all := append(append([]config(nil), configs...), cfgs[nbase:]...)
	// ns[config][bench] per round; tsc/clk[config] per round (per run).
	ns := map[string]map[string][]float64{}
	calls := map[string]float64{}
	over := map[string]map[string][]float64{}   // per-call overhead vs none of the same round
	ratio := map[string]map[string][]float64{}  // overhead / (2 tsc reads of the same run)
	runTSC := map[string]map[string][]float64{} // the tsc read of each run, as ns
	var tsc, clk, loads []float64
	var benchOrder []string
	rowNP := map[string]int{} // ranks of the program that reports each row
	for _, c := range cfgs {
		ns[c.Name], over[c.Name], ratio[c.Name], runTSC[c.Name] = map[string][]float64{}, map[string][]float64{}, map[string][]float64{}, map[string][]float64{}
	}
	t0 := time.Now()
	for r := 0; r < *rounds; r++ {
		for _, p := range progs {
			for _, c := range cfgs {
				res, err := b.mpirun(p.np, c.Lib(b), c.Env, c.prog(b, p.prog, r%len(b.bins)), p.arg)
				if err != nil {
					return err
				}
				os.RemoveAll(res.Job)
				bm, names, tm := parse(res.Stdout)
				if len(bm) == 0 || tm["tsc"] == 0 {
					return fmt.Errorf("%s under %s: no results in\n%s%s", p.prog, c.Name, res.Stdout, res.Stderr)
				}
				tsc = append(tsc, tm["tsc"])
				clk = append(clk, tm["clock"])
				for _, n := range names {
					v := bm[n]
					if r == 0 && c.Name == "none" {
						benchOrder = append(benchOrder, n)
					}
					calls[n] = v[1]
					rowNP[n] = p.np
					ns[c.Name][n] = append(ns[c.Name][n], v[0])
					runTSC[c.Name][n] = append(runTSC[c.Name][n], tm["tsc"])
				}
			}
		}
		loads = append(loads, loadavg())
		fmt.Fprintf(os.Stderr, "runbench: %s overhead round %d/%d (%.0f s, load %.2f)\n", b.f.Name, r+1, *rounds, time.Since(t0).Seconds(), loads[len(loads)-1])
	}
	// The VM has phases: for seconds to minutes every two-rank run,
	// whatever its configuration (none included), takes 2-4 x as long,
	// and now and then one runs 1.6 x faster. A run more than
	// phaseFactor x slower or faster than the lower quartile of its
	// configuration's rounds is one of them, not overhead (the largest
	// real overhead, profile or trace on the 0-byte ping-pong, is below
	// 1.4 x); a round's overhead is taken only when both its run and
	// that round's none run are kept.
	quartile := map[string]map[string]float64{} // [config][bench]
	for c, m := range ns {
		quartile[c] = map[string]float64{}
		for n, v := range m {
			q := append([]float64(nil), v...)
			sort.Float64s(q)
			quartile[c][n] = q[len(q)/4]
		}
	}
	kept := func(c, n string, r int) bool {
		ref := quartile[c][n]
		return ns[c][n][r] <= phaseFactor*ref && ns[c][n][r] >= ref/phaseFactor
	}
	dropped := map[string]int{}
	for _, n := range benchOrder {
		for _, c := range cfgs {
			for r := range ns[c.Name][n] {
				if !kept(c.Name, n, r) {
					dropped[n]++
				}
				if c.Name == "none" || !kept(c.Name, n, r) || !kept("none", n, r) {
					continue
				}
				o := (ns[c.Name][n][r] - ns["none"][n][r]) / calls[n]
				over[c.Name][n] = append(over[c.Name][n], o)
				ratio[c.Name][n] = append(ratio[c.Name][n], o/(2*runTSC[c.Name][n][r]))
			}
		}
	}
	T, C := summarize(tsc), summarize(clk)
	md("\n## Overhead per call (%s)\n\n", b.f.Name)
	md("%d rounds, configurations interleaved within each round (none, none2 = none again, passthrough = the pass-through build preloaded, "+
		"pt-linked = the same wrappers linked into the program from their static archive, profile, pcontrol0%s), "+
		"each run one mpirun. Values: median [min, max] over rounds.\n\n", *rounds, map[bool]string{true: ", trace", false: ""}[b.traceN == ""])
	md("1-minute load average after each round (2 = both CPUs busy with the benchmark; more = other work on the machine): %s.\n\n", summarize(loads))
	md("Timestamp reads measured in the same runs (%d runs): rdtsc %s ns, clock_gettime %s ns; "+
		"two rdtsc reads (the profile's timer here) = %.1f ns.\n\n", len(tsc), T, C, 2*T.Med)
	md("Time per iteration (ns):\n\n")
	mdHead(append([]string{"benchmark", "calls/iter"}, names(all)...))
	for _, n := range benchOrder {
		md("| %s | %g |", n, calls[n])
		for _, c := range all {
			if _, ok := ns[c.Name]; !ok {
				md(" n/a |")
				continue
			}
			md(" %s |", summarize(ns[c.Name][n]))
		}
		md("\n")
	}
	var dl []string
	for _, n := range benchOrder {
		if dropped[n] > 0 {
			dl = append(dl, fmt.Sprintf("%s %d", n, dropped[n]))
		}
	}
	if len(dl) == 0 {
		dl = []string{"none"}
	}
	md("\nRuns dropped as other phases of the VM (more than %.1f x slower or faster than the lower quartile of the same configuration's rounds), of %d per benchmark: %s.\n", phaseFactor, *rounds*len(cfgs), strings.Join(dl, ", "))
	md("\nOverhead per call: (time per iteration - same round's `none`) / calls on the critical path, in ns, and as a ratio to two timestamp reads of the same run; rounds where either run was dropped are left out (n = rounds kept):\n\n")
	cols := []string{"benchmark"}
	for _, c := range all[1:] {
		cols = append(cols, c.Name+" ns", c.Name+" ratio")
	}
	mdHead(cols)
	for _, n := range benchOrder {
		md("| %s |", n)
		for _, c := range all[1:] {
			if _, ok := over[c.Name]; !ok {
				md(" n/a | n/a |")
				continue
			}
			if len(over[c.Name][n]) == 0 {
				md(" all dropped | - |")
				continue
			}
			md(" %s n=%d | %s |", summarize(over[c.Name][n]), len(over[c.Name][n]), fmtRatio(summarize(ratio[c.Name][n])))
		}
		md("\n")
	}
	// On a shared machine a round's two-rank runs can lose their CPUs to
	// other work; the best round of each configuration estimates the cost
	// without such interference.
	md("\nOverhead per call from the best round of each configuration ((min config - min none) / calls, ns) and as a ratio to two median rdtsc reads (%.1f ns):\n\n", 2*T.Med)
	mdHead(append([]string{"benchmark"}, names(all[1:])...))
	best := map[string]map[string]float64{}
	for _, n := range benchOrder {
		md("| %s |", n)
		best[n] = map[string]float64{}
		for _, c := range all[1:] {
			if _, ok := ns[c.Name]; !ok {
				md(" n/a |")
				continue
			}
			o := (summarize(ns[c.Name][n]).Min - summarize(ns["none"][n]).Min) / calls[n]
			best[n][c.Name] = o
			md(" %.1f (%.2f) |", o, o/(2*T.Med))
		}
		md("\n")
	}
	// The single-rank loops against two reads in place: cheap.c's
	// <loop>_timer runs the loop's PMPI_ call between two rdtsc reads.
	inPlace := map[string]float64{}
	var ipRows []string
	for _, n := range benchOrder {
		tn := n + "_timer"
		if len(ns["none"][tn]) == 0 {
			continue
		}
		var d []float64
		for r := range ns["none"][n] {
			if r < len(ns["none"][tn]) {
				d = append(d, (ns["none"][tn][r]-ns["none"][n][r])/calls[n])
			}
		}
		inPlace[n] = summarize(d).Med
		ipRows = append(ipRows, n)
	}
	if len(ipRows) > 0 {
		md("\nSingle-rank loops against two timestamp reads in place: `<loop>_timer` is the loop with its PMPI_ call between two rdtsc reads " +
			"(a read after a call waits for that call's work, unlike a read in a loop of reads); in place = `<loop>_timer` - `<loop>` under `none`, " +
			"median over rounds; profile and trace = their median overhead per call above:\n\n")
		mdHead([]string{"loop", "two reads in place (ns)", "profile (ns)", "profile / in place", "trace (ns)", "trace / in place"})
		for _, n := range ipRows {
			p, t := summarize(over["profile"][n]).Med, summarize(over["trace"][n]).Med
			md("| %s | %.1f | %.1f | %.2f | %.1f | %.2f |\n", n, inPlace[n], p, p/inPlace[n], t, t/inPlace[n])
		}
	}
	// Pcontrol(0) over pass-through, per round.
	var pc0 = map[string][]float64{}
	for _, n := range benchOrder {
		for i := range ns["pcontrol0"][n] {
			if kept("pcontrol0", n, i) && kept("passthrough", n, i) {
				pc0[n] = append(pc0[n], (ns["pcontrol0"][n][i]-ns["passthrough"][n][i])/calls[n])
			}
		}
	}
	md("\nPcontrol(0) minus pass-through, ns per call, median [min, max]: ")
	var parts []string
	for _, n := range benchOrder {
		parts = append(parts, fmt.Sprintf("%s %s", n, summarize(pc0[n])))
	}
	md("%s.\n", strings.Join(parts, "; "))
	if b.traceN != "" {
		md("\nTrace mode: not available (%s).\n", b.traceN)
	}
	// By layout: the medians above pool the layouts; this shows how far
	// each configuration's cost moves with the program's layout.
	byLayout := map[string]map[string][]*float64{} // [config][bench][layout], nil: every round dropped
	if nl := len(b.bins); nl > 1 {
		md("\nBy program layout (round r runs every configuration at layout r mod %d; the programs' code shifted by %s bytes, bench/progs/pad.c). "+
			"`none`: its median time per iteration at the layout minus that at the first, per call; the others: their overhead per call over the same round's `none` "+
			"(as above), median over the layout's rounds kept. One value per layout, ns:\n\n", nl, intList(layoutPads[:nl]))
		shown := []string{"none", "none2", "passthrough", "pt-linked", "pcontrol0", "profile"}
		mdHead(append([]string{"benchmark"}, shown...))
		for _, n := range benchOrder {
			if strings.HasSuffix(n, "_timer") {
				continue
			}
			md("| %s |", n)
			for _, c := range shown {
				if byLayout[c] == nil {
					byLayout[c] = map[string][]*float64{}
				}
				// none: its time per round; the others: their overhead
				// per call over the round's none (over's values, by round).
				v := ns[c][n]
				keep := func(r int) bool { return kept(c, n, r) }
				if c != "none" {
					v = make([]float64, len(ns[c][n]))
					for r := range v {
						v[r] = (ns[c][n][r] - ns["none"][n][r]) / calls[n]
					}
					keep = func(r int) bool { return kept(c, n, r) && kept("none", n, r) }
				}
				meds := layoutMedians(v, nl, keep)
				var cells []string
				for _, m := range meds {
					if c == "none" {
						m = (m - meds[0]) / calls[n]
					}
					if math.IsNaN(m) {
						byLayout[c][n] = append(byLayout[c][n], nil)
						cells = append(cells, "-")
					} else {
						byLayout[c][n] = append(byLayout[c][n], &m)
						cells = append(cells, fmt.Sprintf("%.1f", m))
					}
				}
				md(" %s |", strings.Join(cells, " / "))
			}
			md("\n")
		}
	}
	// Verdicts: the single-rank loops here; the two-rank rows come from the
	// modes alternating in one process (ab), which share the VM's phase.
	for _, n := range benchOrder {
		if rowNP[n] != 1 || strings.HasSuffix(n, "_timer") {
			continue
		}
		row := n + " (single-rank runs)"
		p := summarize(over["profile"][n]).Med
		tProfile.add(b.f.Name, row, summarize(ratio["profile"][n]).Med, fmt.Sprintf("%.1f ns", p))
		if b.traceN == "" {
			tTrace.add(b.f.Name, row, summarize(ratio["trace"][n]).Med, fmt.Sprintf("%.1f ns", summarize(over["trace"][n]).Med))
		} else {
			tTrace.skip(b.f.Name, row, b.traceN)
		}
		tPcontrol.add(b.f.Name, row, summarize(pc0[n]).Med, "")
		// The pass-through build's cost counts only where the method
		// resolves it: no library measures within passNoise of itself.
		aa := summarize(over["none2"][n]).Med
		for _, t := range []struct {
			tg  *target
			cfg string
		}{{tPass, "passthrough"}, {tPassLinked, "pt-linked"}} {
			if math.Abs(aa) <= passNoise {
				t.tg.Rows = append(t.tg.Rows, tRow{Family: b.f.Name, Row: row, Value: summarize(over[t.cfg][n]).Med, Limit: passNoise})
			} else {
				t.tg.skip(b.f.Name, row, fmt.Sprintf("no library measures %.1f ns against itself (none2 - none)", aa))
			}
		}
		if ip := inPlace[n]; ip > 0 {
			tInPlace.add(b.f.Name, row, p/ip, fmt.Sprintf("%.1f over %.1f ns", p, ip))
		}
	}
	raw[b.f.Name+"/overhead"] = map[string]any{"ns": ns, "run_tsc": runTSC, "phase_dropped": dropped, "overhead": over, "ratio": ratio, "tsc": tsc, "clock": clk, "calls": calls, "pcontrol0_minus_passthrough": pc0, "two_reads_in_place": inPlace, "trace": b.traceN, "load": loads, "best_overhead": best,
		"layout_pads": layoutPads[:len(b.bins)], "by_layout": byLayout}
	return nil
}

// loadavg is the 1-minute load average.
func loadavg() float64 {
	b, _ := os.ReadFile("/proc/loadavg")
	var v float64
	fmt.Sscanf(string(b), "%f", &v)
	return v
}

func fmtRatio(s stats) string {
	return fmt.Sprintf("%.2f [%.2f, %.2f]", s.Med, s.Min, s.Max)
}

// memory: peak RSS growth of rank 0 over many calls, with and without
// mpiscope, at two run lengths.
func (b *bench) memory() error {
	md("\n## Memory (%s)\n\n", b.f.Name)
	md("memtest on 65 ranks (oversubscribed; ranks 1..64 sleep in a polled MPI_Ibarrier): rank 0 makes the calls from 1,128 distinct call sites (1,000 switch cases) to 64 peers; VmHWM of rank 0 read from /proc/self/status after MPI_Init and after the calls.\n\n")
	md("| configuration | calls | call sites seen | peers | VmHWM before (KiB) | after (KiB) | growth (KiB) |\n|---|---|---|---|---|---|---|\n")
	res := map[string]any{}
	var growth []float64 // profile mode, per call count
	for _, n := range strings.Split(*memCalls, ",") {
		for _, c := range []config{configNamed("none"), configNamed("profile")} {
			r, err := b.mpirun(65, c.Lib(b), c.Env, filepath.Join(b.bin, "memtest"), n)
			if err != nil {
				return err
			}
			var calls, sites, peers, before, after int64
			for _, l := range strings.Split(r.Stdout, "\n") {
				if strings.HasPrefix(l, "MEM ") {
					fmt.Sscanf(l, "MEM %d %d %d %d %d", &calls, &sites, &peers, &before, &after)
				}
			}
			if calls == 0 {
				return fmt.Errorf("memtest: no result\n%s%s", r.Stdout, r.Stderr)
			}
			seen := "-"
			if c.Name == "profile" {
				if p, _, err := profile.Load(r.Job); err == nil {
					ns, np := 0, 0
					for _, s := range p.Sites {
						if s.RankTime.MinRank == 0 && s.RankTime.N >= 1 && s.Loc.Function == "run" {
							ns++
						}
					}
					for _, pe := range p.Peers {
						if pe.Rank == 0 {
							np++
						}
					}
					seen = fmt.Sprintf("%d (peers in profile: %d)", ns, np)
				} else {
					seen = "profile unreadable: " + err.Error()
				}
			}
			os.RemoveAll(r.Job)
			md("| %s | %d | %s | %d | %d | %d | %d |\n", c.Name, calls, seen, peers, before, after, after-before)
			if c.Name == "profile" {
				tMemory.add(b.f.Name, fmt.Sprintf("growth at %d calls", calls), float64(after-before), "")
				growth = append(growth, float64(after-before))
			}
			res[c.Name+"/"+n] = []int64{calls, sites, peers, before, after}
		}
	}
	if k := len(growth); k >= 2 {
		tMemory.Rows = append(tMemory.Rows, tRow{Family: b.f.Name, Row: "growth at the most calls - at the fewest", Value: growth[k-1] - growth[0],
			Limit: memSlack, Abs: true})
	}
	raw[b.f.Name+"/memory"] = res
	return nil
}

var timingRe = regexp.MustCompile(`([a-z_]+)=([0-9.]+)(ms)?`)

// scale: finalize time for growing rank counts.
func (b *bench) scale() error {
	md("\n## Finalize and merge (%s)\n\n", b.f.Name)
	md("scale.c (ring exchange, two allreduces, cheap calls; 200 iterations), oversubscribed on %d CPUs with OMPI_MCA_mpi_yield_when_idle=1. "+
		"`finalize` is MPI_Finalize's wall time on rank 0 (median of 3 runs), with and without mpiscope; the phases are rank 0's (MPISCOPE_DEBUG_TIMING=1): "+
		"local = read own tables and build the rank profile, merge = decoding and merging the received partial profiles (the tree's work on rank 0, "+
		"log2 P receives), comm = waiting for and receiving them, then symbolize, write and report. Phases: median of the 3 runs; "+
		"the verdict on the merge's growth takes each P's fastest merge.\n\n", runtime.NumCPU())
	env := map[string]string{"OMPI_MCA_mpi_yield_when_idle": "1"}
	res := map[string]any{}
	nps := *scaleNP
	scaleSet := false
	flag.Visit(func(f *flag.Flag) { scaleSet = scaleSet || f.Name == "scale-np" })
	if b.f.Name == "mpich" && !scaleSet {
		// MPICH's ranks busy-poll without yielding: 16 or 32 of them on 2
		// CPUs take minutes per run.
		nps = "2,4,8"
		md("MPICH ranks busy-poll without yielding, so only 2, 4 and 8 ranks are run on this machine (-scale-np to change).\n\n")
	}
	var sNP []int
	var sRecv, sMerge []float64
	md("| ranks | finalize none (ms) | finalize profile (ms) | local | comm | merge | receives | symbolize | write | report | mpiscope total (ms) |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
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
		md("| %d | %.1f | %.1f | %.2f | %.2f | %.2f | %.0f | %.2f | %.2f | %.2f | %.1f |\n", np, summarize(fin["none"]).Med, summarize(fin["profile"]).Med,
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
	tMerge.Rows = append(tMerge.Rows, mergeRows(b.f.Name, sNP, sRecv, sMerge)...)
	raw[b.f.Name+"/scale"] = res
	return nil
}

// synth times mpiscope report on many synthetic rank profiles.
func synth() error {
	dir := filepath.Join(*buildDir, "bench", fmt.Sprintf("synth-%d", *synthRanks))
	cmd := exec.Command("go", "run", "./bench/cmd/synth", "-ranks", strconv.Itoa(*synthRanks), "-o", dir)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("synth: %v", err)
	}
	var size int64
	var files int
	filepath.WalkDir(filepath.Join(dir, profile.RanksDir), func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				size += fi.Size()
				files++
			}
		}
		return nil
	})
	mps := filepath.Join(*buildDir, "bin", "mpiscope")
	var walls, rss []float64
	var lines int
	for rep := 0; rep < 3; rep++ {
		c := exec.Command(mps, "report", dir)
		var so bytes.Buffer
		c.Stdout = &so
		c.Stderr = io.Discard
		t0 := time.Now()
		if err := c.Run(); err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				return err
			}
			return fmt.Errorf("mpiscope report %s: %v", dir, err)
		}
		walls = append(walls, time.Since(t0).Seconds())
		ru := c.ProcessState.SysUsage().(*syscall.Rusage)
		rss = append(rss, float64(ru.Maxrss)/1024) // KiB -> MiB
		lines = strings.Count(so.String(), "\n")
	}
	W, R := summarize(walls), summarize(rss)
	md("\n## mpiscope report on %d synthetic ranks\n\n", *synthRanks)
	md("bench/cmd/synth: %d per-rank files (%.0f MB; 40 functions, 150 call sites, 16 peers, 3 communicators, 2 regions each) in ranks/<r/1000>/r<r>.mps, "+
		"page cache warm. `mpiscope report <dir>` (text, %d lines of output), 3 runs:\n\n", files, float64(size)/1e6, lines)
	md("| wall time (s) | peak RSS (MiB) |\n|---|---|\n| %.2f [%.2f, %.2f] | %.0f [%.0f, %.0f] |\n", W.Med, W.Min, W.Max, R.Med, R.Min, R.Max)
	raw["synth"] = map[string]any{"ranks": *synthRanks, "files": files, "bytes": size, "wall_s": walls, "maxrss_mib": rss}
	if *synthRanks >= 100000 {
		tSynth.Rows = append(tSynth.Rows, tRow{Family: "mpiscope report", Row: fmt.Sprintf("wall time (s), %d ranks", *synthRanks), Value: W.Med, Limit: 10},
			tRow{Family: "mpiscope report", Row: fmt.Sprintf("peak RSS (MiB), %d ranks", *synthRanks), Value: R.Med, Limit: 2048})
	} else {
		tSynth.skip("mpiscope report", "100,000 ranks", fmt.Sprintf("this run made %d (-synth-ranks)", *synthRanks))
	}
	return nil
}

// callgrind counts instructions per call of the cheap program's loops under
// each configuration: (Ir of a run with 2N iterations - Ir with N) / (N x 5
// repetitions), counted inside the program's cheap_loops (the application's
// thread: the trace writer's work on its own thread is not counted, and
// trace runs keep raw blocks, MPISCOPE_TRACE_COMPRESS=off, so that packing
// at finalize is not counted either). The program runs as an MPI
// singleton (no mpirun) under valgrind --tool=callgrind.
func (b *bench) callgrind() error {
	if _, err := exec.LookPath("valgrind"); err != nil {
		md("\ncallgrind: valgrind not installed.\n")
		return nil
	}
	const n = 100000
	md("\n## Instructions per call (%s, valgrind --tool=callgrind)\n\n", b.f.Name)
	md("Instructions executed per call on the application's thread (callgrind --toggle-collect=cheap_loops): (Ir(2N iterations) - Ir(N)) / (5 N), N = %d, cheap program as an MPI singleton; trace with MPISCOPE_TRACE_COMPRESS=off:\n\n", n)
	var cgConfigs []config
	for _, c := range configs {
		if c.Name != "trace-run" && c.Name != "none2" { // the same hot path as trace; none again
			cgConfigs = append(cgConfigs, c)
		}
	}
	mdHead(append(append([]string{"loop"}, names(cgConfigs)...), "profile - none", "trace - none"))
	res := map[string]map[string]float64{}
	for _, loop := range []string{"comm_rank", "iprobe", "allreduce_1", "test_done"} {
		res[loop] = map[string]float64{}
		md("| %s |", loop)
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
				for k, v := range c.Env {
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
			md(" %.1f |", per)
		}
		md(" %+.1f | %+.1f |\n", res[loop]["profile"]-res[loop]["none"], res[loop]["trace"]-res[loop]["none"])
	}
	raw[b.f.Name+"/callgrind"] = res
	return nil
}

// mdHead writes a Markdown table's header row and separator.
// layoutCells is "a / b / ...": per layout lay < nl, the median of the
// values of rounds lay, lay+nl, lay+2nl, ... of v (one per round); "-"
// for a layout with no round.
func layoutCells(v []float64, nl int) string {
	cells := make([]string, nl)
	for lay, m := range layoutMedians(v, nl, nil) {
		cells[lay] = "-"
		if !math.IsNaN(m) {
			cells[lay] = fmt.Sprintf("%.1f", m)
		}
	}
	return strings.Join(cells, " / ")
}

// layoutMedians is, per layout lay < nl, the median of v's values of
// rounds lay, lay+nl, lay+2nl, ... (v holds one per round) for which
// keep(round) holds (nil: every round); NaN for a layout with none.
func layoutMedians(v []float64, nl int, keep func(r int) bool) []float64 {
	meds := make([]float64, nl)
	for lay := range meds {
		var w []float64
		for r := lay; r < len(v); r += nl {
			if keep == nil || keep(r) {
				w = append(w, v[r])
			}
		}
		meds[lay] = math.NaN()
		if len(w) > 0 {
			meds[lay] = summarize(w).Med
		}
	}
	return meds
}

// intList is v as "a, b and c".
func intList(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

func mdHead(cols []string) {
	md("| %s |\n|%s\n", strings.Join(cols, " | "), strings.Repeat("---|", len(cols)))
}

// names returns the configurations' names.
func names(cs []config) []string {
	var n []string
	for _, c := range cs {
		n = append(n, c.Name)
	}
	return n
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
