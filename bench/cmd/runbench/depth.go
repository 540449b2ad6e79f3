package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mpiscope/mpiscope/profile"
)

// The depth section (-only depth): what a call path costs per MPI call
// through the real wrappers (MPISCOPE_DEPTH, docs/callpaths.md). It builds
// bench/depth/depth.c with and without frame pointers and runs it on 2
// ranks at depths 1, 4, 8 and 16, one mpirun per build and depth, the runs
// interleaved round by round; inside each run the modes none (PMPI_
// directly), timer (two rdtsc reads around PMPI_) and profile alternate
// (as in ab.c). Depth 1 is profile mode as it is without paths. Each run's
// profile is checked: exactly the calls made in profile mode, and at depth
// > 1 every path of a measured function exactly depth frames long, from the
// loop's function up (the walk did the work measured).
//
// The depth-callgrind section (not in the default set) counts the
// instructions per MPI_Comm_rank call at each depth and build under
// valgrind (an MPI singleton): exact figures, immune to the machine's
// load.

// depthBuild is one build of bench/depth/depth.c.
type depthBuild struct {
	Name, Desc string
	Flags      []string
}

var depthBuilds = []depthBuild{
	{"fp", "frame pointers (`-fno-omit-frame-pointer`)", []string{"-fno-omit-frame-pointer"}},
	{"omit", "no frame pointers (`-fomit-frame-pointer`): .eh_frame rules", []string{"-fomit-frame-pointer"}},
}

// depthDepths are the depths measured; the first is the comparison.
var depthDepths = []int{1, 4, 8, 16}

// depthFuncs are the MPI functions of each benchmark (checked in the paths).
var depthFuncs = map[string][]string{"local_comm_rank": {"MPI_Comm_rank"}, "local_iprobe": {"MPI_Iprobe"}, "pingpong_0": {"MPI_Send", "MPI_Recv"}}

// depthRun is one run's output: per benchmark and mode the median over
// cycles of (mode - none) per iteration, ns; calls per iteration; the
// isolated rdtsc read.
type depthRun struct {
	diff   map[string]map[string]float64
	calls  map[string]float64
	order  []string
	expect map[string]int64
	tsc    float64
}

// parseDepthRun reads depth.c's output.
func parseDepthRun(s string) (depthRun, error) {
	r := depthRun{diff: map[string]map[string]float64{}, calls: map[string]float64{}, expect: map[string]int64{}}
	for _, l := range strings.Split(s, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 6 && f[0] == "DEPTH":
			d, err1 := strconv.ParseFloat(f[4], 64)
			c, err2 := strconv.ParseFloat(f[5], 64)
			if err1 != nil || err2 != nil || c <= 0 {
				return r, fmt.Errorf("bench/depth: bad line %q", l)
			}
			if r.diff[f[1]] == nil {
				r.diff[f[1]] = map[string]float64{}
				r.order = append(r.order, f[1])
			}
			r.diff[f[1]][f[2]] = d
			r.calls[f[1]] = c
		case len(f) == 3 && f[0] == "EXPECT":
			n, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				return r, fmt.Errorf("bench/depth: bad line %q", l)
			}
			r.expect[f[1]] = n
		}
	}
	_, _, timers := parse(s)
	r.tsc = timers["tsc"]
	if r.tsc <= 0 || len(r.order) != len(depthFuncs) || len(r.expect) == 0 {
		return r, fmt.Errorf("bench/depth: incomplete output %q", s)
	}
	for _, n := range r.order {
		for _, m := range []string{"none", "timer", "profile"} {
			if _, ok := r.diff[n][m]; !ok {
				return r, fmt.Errorf("bench/depth: %s has no mode %s in %q", n, m, s)
			}
		}
	}
	return r, nil
}

// checkDepthProfile checks a run's profile: the calls of each function
// expected, and at depth > 1 each path of a measured function exactly depth
// frames long, starting in the loop's function (rep).
func checkDepthProfile(p *profile.Profile, depth int, expect map[string]int64) error {
	for fn, want := range expect {
		var got int64
		for _, f := range p.Funcs {
			if f.Name == fn {
				got = f.Calls
			}
		}
		if got != want {
			return fmt.Errorf("%d %s calls recorded, want %d", got, fn, want)
		}
	}
	measured := map[string]bool{}
	for _, fns := range depthFuncs {
		for _, fn := range fns {
			measured[fn] = true
		}
	}
	var inPaths int64
	for _, q := range p.Paths {
		if !measured[q.Func] {
			continue
		}
		if depth == 1 {
			return fmt.Errorf("depth 1: a path of %s", q.Func)
		}
		if q.Other || len(q.Frames) != depth || q.Frames[0].Function != "rep" {
			var names []string
			for _, f := range q.Frames {
				names = append(names, f.Function)
			}
			return fmt.Errorf("depth %d: a path of %s with %d frames (%s), want %d from rep", depth, q.Func, len(q.Frames), strings.Join(names, "<"), depth)
		}
		inPaths += q.Calls
	}
	if depth > 1 {
		var want int64
		for fn, n := range expect {
			if measured[fn] {
				want += n
			}
		}
		if inPaths != want {
			return fmt.Errorf("depth %d: the paths hold %d calls, want %d", depth, inPaths, want)
		}
	}
	return nil
}

// depthPrepare builds what one family's depth runs need: a private copy of
// libmpiscope and the program in each build.
func depthPrepare(f family, opt *options, res *results) (*bench, map[string]string, error) {
	b := &bench{f: f, opt: opt, res: res, dir: filepath.Join(opt.build, "bench", f.Name+"-depth")}
	b.jobs = filepath.Join(b.dir, "jobs")
	if err := os.MkdirAll(b.jobs, 0o777); err != nil {
		return nil, nil, err
	}
	lib := filepath.Join(opt.build, "lib", f.Name, "libmpiscope.so")
	data, err := os.ReadFile(lib)
	if err != nil {
		return nil, nil, fmt.Errorf("%v (run make lib)", err)
	}
	b.lib = filepath.Join(b.dir, "libmpiscope.so")
	if err := replaceFile(b.lib, func(tmp string) error { return os.WriteFile(tmp, data, 0o755) }); err != nil {
		return nil, nil, err
	}
	progs := map[string]string{}
	for _, d := range depthBuilds {
		prog := filepath.Join(b.dir, "depth-"+d.Name)
		args := append(append([]string{"-O2", "-g"}, d.Flags...), "-o", prog, "bench/depth/depth.c")
		if err := sh(f.MPICC, args...); err != nil {
			return nil, nil, err
		}
		progs[d.Name] = prog
	}
	return b, progs, nil
}

func depthBench(opt *options, res *results) error {
	fams, err := pickFamilies(opt.family)
	if err != nil {
		return err
	}
	for _, f := range fams {
		if err := depthFamily(f, opt, res); err != nil {
			return err
		}
	}
	return nil
}

func depthFamily(f family, opt *options, res *results) error {
	b, progs, err := depthPrepare(f, opt, res)
	if err != nil {
		return err
	}
	// Extra builds of the library (-variants) run at every build and
	// depth too, in the same rounds: before and after a change, side by
	// side.
	vars, err := parseVariants(opt.variants, f.Name)
	if err != nil {
		return err
	}
	libs := append([]variant{{"mpiscope", b.lib}}, vars...)
	// over[lib, build, depth][bench] per round: profile - none, ns per
	// call; timer the same for the two reads in place; tsc per run.
	type key struct {
		lib, build string
		depth      int
	}
	over := map[key]map[string][]float64{}
	timer := map[string][]float64{}
	var tscs []float64
	var order []string
	for r := 0; r < opt.depthRounds; r++ {
		for _, l := range libs {
			for _, d := range depthBuilds {
				for _, depth := range depthDepths {
					env := map[string]string{"MPISCOPE_ENABLE": "1", "MPISCOPE_DEPTH": strconv.Itoa(depth)}
					out, err := b.mpirun(2, l.lib, env, progs[d.Name], "10000", strconv.Itoa(opt.depthCycles))
					if err != nil {
						return err
					}
					run, err := parseDepthRun(out.Stdout)
					if err != nil {
						return fmt.Errorf("%s, %s depth %d: %v\n%s", l.name, d.Name, depth, err, out.Stderr)
					}
					p, _, err := profile.Load(out.Job)
					if err != nil {
						return fmt.Errorf("%s, %s depth %d: %v", l.name, d.Name, depth, err)
					}
					if err := checkDepthProfile(p, depth, run.expect); err != nil {
						return fmt.Errorf("bench/depth (%s, %s, %s build) in %s: %v", f.Name, l.name, d.Name, out.Job, err)
					}
					os.RemoveAll(out.Job)
					k := key{l.name, d.Name, depth}
					if over[k] == nil {
						over[k] = map[string][]float64{}
					}
					order = run.order
					for _, n := range run.order {
						over[k][n] = append(over[k][n], run.diff[n]["profile"]/run.calls[n])
						timer[n] = append(timer[n], run.diff[n]["timer"]/run.calls[n])
					}
					tscs = append(tscs, run.tsc)
				}
			}
		}
		fmt.Fprintf(os.Stderr, "runbench: %s depth round %d/%d (load %.2f)\n", f.Name, r+1, opt.depthRounds, loadavg())
	}
	T := summarize(tscs)
	res.md("\n## Call paths through the wrappers (%s)\n\n", f.Name)
	res.md("bench/depth/depth.c on 2 ranks, more than 20 frames of the program above each of its MPI calls, built two ways, run at each depth (MPISCOPE_DEPTH), one mpirun per build and depth, "+
		"the runs interleaved in each of %d rounds; in each run the modes none (PMPI_ directly), timer (PMPI_ between two rdtsc reads) and profile alternate, "+
		"%d cycles after one warm-up, and a run's value is the median over cycles of (profile - none) per call (local loops: 100,000 calls per repetition, each rank on its own, in the thread's CPU time, which time slices lost to other work on a shared machine do not inflate; "+
		"pingpong_0: 10,000 round trips, 2 calls each on the critical path). Each run's profile is checked to hold exactly the calls made in profile mode, "+
		"each in a path of exactly the depth's frames. Values: median [min, max] over rounds, ns per call; in parentheses the median's ratio to two isolated rdtsc reads "+
		"(%.1f ns, %s ns per read). Over depth 1: the same round's difference to depth 1, median over rounds.\n\n", opt.depthRounds, opt.depthCycles, 2*T.Med, T)
	if len(vars) > 0 {
		res.md("Libraries: mpiscope = this build's; %s (-variants), run in the same rounds.\n\n", intListNames(vars))
	}
	head := []string{"benchmark", "library", "build", "two reads in place"}
	for _, d := range depthDepths {
		head = append(head, fmt.Sprintf("depth %d", d))
	}
	head = append(head, "per frame over depth 1 (depth 16)")
	res.mdHead(head)
	// overD1 is the round-by-round difference to depth 1 of the same build.
	overD1 := func(lib, build string, depth int, n string) stats {
		a, z := over[key{lib, build, depth}][n], over[key{lib, build, 1}][n]
		var v []float64
		for i := range a {
			if i < len(z) {
				v = append(v, a[i]-z[i])
			}
		}
		return summarize(v)
	}
	raw := map[string]any{"tsc": tscs, "timer": timer}
	for _, n := range order {
		for _, d := range depthBuilds {
			for _, l := range libs {
				row := []string{n, l.name, d.Name, fmt.Sprintf("%.1f", summarize(timer[n]).Med)}
				for _, depth := range depthDepths {
					s := summarize(over[key{l.name, d.Name, depth}][n])
					cell := fmt.Sprintf("%s (%.2f x)", s, s.Med/(2*T.Med))
					if depth > 1 {
						cell += fmt.Sprintf(", +%.1f", overD1(l.name, d.Name, depth, n).Med)
					}
					row = append(row, cell)
					raw[fmt.Sprintf("%s/%s/%s/depth%d", n, l.name, d.Name, depth)] = over[key{l.name, d.Name, depth}][n]
				}
				row = append(row, fmt.Sprintf("%.2f", overD1(l.name, d.Name, 16, n).Med/15))
				res.md("| %s |\n", strings.Join(row, " | "))
			}
		}
	}
	verdict := func(v, limit float64) string {
		if v <= limit {
			return "met"
		}
		return "missed"
	}
	res.md("\n| target | benchmark | measured | verdict |\n|---|---|---|---|\n")
	for _, n := range order {
		pf := overD1("mpiscope", "fp", 16, n).Med / 15
		res.md("| with frame pointers, at most 1 ns per frame over depth 1 (depth 16) | %s | %.2f ns | %s |\n", n, pf, verdict(pf, 1))
	}
	for _, n := range order {
		at8 := summarize(over[key{"mpiscope", "omit", 8}][n]).Med
		res.md("| without frame pointers, at most 150 ns per call at depth 8 | %s | %.1f ns | %s |\n", n, at8, verdict(at8, 150))
	}
	res.raw[f.Name+"/depth"] = raw
	return nil
}

// depthCallgrind counts the instructions per MPI_Comm_rank call of
// depth.c's cg_loop (an MPI singleton) under valgrind: no library, then
// libmpiscope at each depth and build; (Ir(2N) - Ir(N)) / N.
func depthCallgrind(opt *options, res *results) error {
	if _, err := exec.LookPath("valgrind"); err != nil {
		res.md("\ndepth-callgrind: valgrind not installed.\n")
		return nil
	}
	fams, err := pickFamilies(opt.family)
	if err != nil {
		return err
	}
	const n = 20000
	for _, f := range fams {
		b, progs, err := depthPrepare(f, opt, res)
		if err != nil {
			return err
		}
		count := func(prog, lib string, depth int) (float64, error) {
			var ir [2]float64
			for i, iters := range []int{n, 2 * n} {
				out := filepath.Join(b.dir, "callgrind.out")
				cmd := exec.Command("valgrind", "--tool=callgrind", "--toggle-collect=cg_loop", "--callgrind-out-file="+out, prog, "cg", strconv.Itoa(iters))
				cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
					"MPISCOPE_OUT="+filepath.Join(b.jobs, "callgrind"), "MPISCOPE_SUMMARY=0", "MPISCOPE_ENABLE=1",
					"MPISCOPE_DEPTH="+strconv.Itoa(depth), "GODEBUG=asyncpreemptoff=1")
				if lib != "" {
					cmd.Env = append(cmd.Env, "LD_PRELOAD="+lib)
				}
				if o, err := cmd.CombinedOutput(); err != nil {
					return 0, fmt.Errorf("valgrind %s: %v\n%s", prog, err, o)
				}
				os.RemoveAll(filepath.Join(b.jobs, "callgrind"))
				v, err := callgrindTotal(out)
				if err != nil {
					return 0, err
				}
				ir[i] = v
			}
			return (ir[1] - ir[0]) / n, nil
		}
		res.md("\n## Instructions per call at each depth (%s, valgrind --tool=callgrind)\n\n", f.Name)
		res.md("MPI_Comm_rank in depth.c's cg_loop (more than 20 frames of the program above it), MPI singleton: (Ir(2N) - Ir(N)) / N, N = %d, counted in cg_loop and below (--toggle-collect=cg_loop).\n\n", n)
		vars, err := parseVariants(opt.variants, f.Name)
		if err != nil {
			return err
		}
		libs := append([]variant{{"mpiscope", b.lib}}, vars...)
		head := []string{"build", "library", "no library"}
		for _, d := range depthDepths {
			head = append(head, fmt.Sprintf("depth %d", d))
		}
		head = append(head, "depth 4 - depth 1", "per frame (depth 16 - depth 4) / 12")
		res.mdHead(head)
		raw := map[string]map[string]float64{}
		for _, d := range depthBuilds {
			none, err := count(progs[d.Name], "", 1)
			if err != nil {
				return err
			}
			for _, l := range libs {
				k := l.name + "/" + d.Name
				row := []string{d.Name, l.name, fmt.Sprintf("%.1f", none)}
				raw[k] = map[string]float64{"none": none}
				for _, depth := range depthDepths {
					v, err := count(progs[d.Name], l.lib, depth)
					if err != nil {
						return err
					}
					raw[k][strconv.Itoa(depth)] = v
					row = append(row, fmt.Sprintf("%.1f", v))
				}
				row = append(row, fmt.Sprintf("%+.1f", raw[k]["4"]-raw[k]["1"]), fmt.Sprintf("%.1f", (raw[k]["16"]-raw[k]["4"])/12))
				res.md("| %s |\n", strings.Join(row, " | "))
			}
		}
		res.raw[f.Name+"/depth-callgrind"] = raw
	}
	return nil
}

// intListNames lists the variants' names.
func intListNames(vs []variant) string {
	var n []string
	for _, v := range vs {
		n = append(n, v.name)
	}
	return strings.Join(n, ", ")
}
