package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// The unwinder's section (-only unwind): bench/unwind times ms_unwind
// (internal/interpose/unwind.c, docs/callpaths.md) at depths 1, 4, 8 and
// 16 once the rules are cached, against two rdtsc reads measured in the
// same run, in three builds of the same chain of functions. It needs no
// MPI: the unwinder is plain C.

// unwindBuildKind is one build of bench/unwind.
type unwindBuildKind struct {
	Name  string
	Desc  string
	Flags []string
}

var unwindBuilds = []unwindBuildKind{
	{"fp", "frame pointers (`-fno-omit-frame-pointer`)", []string{"-fno-omit-frame-pointer"}},
	{"nocfi", "frame pointers, no call-frame information (`-fno-asynchronous-unwind-tables`): rbp alone", []string{"-fno-omit-frame-pointer", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables"}},
	{"omit", "no frame pointers (`-fomit-frame-pointer`): .eh_frame rules", []string{"-fomit-frame-pointer"}},
}

// unwindDepths are the depths bench/unwind measures.
var unwindDepths = []int{1, 4, 8, 16}

// unwindRun is what one run of bench/unwind printed.
type unwindRun struct {
	RDTSC2    float64         // two rdtsc reads, ns
	Depth     map[int]float64 // ns per walk of at most d frames
	Frames    map[int]int     // frames the walk gave
	Backtrace float64         // glibc backtrace() of 8 frames, ns
	First     float64         // the first walk of 16 frames, ns
	Decoded   int             // the rules it decoded
}

// parseUnwindRun reads bench/unwind's output.
func parseUnwindRun(out string) (unwindRun, error) {
	r := unwindRun{Depth: map[int]float64{}, Frames: map[int]int{}}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 2 && f[0] == "rdtsc2":
			r.RDTSC2, _ = strconv.ParseFloat(f[1], 64)
		case len(f) == 2 && f[0] == "backtrace8":
			r.Backtrace, _ = strconv.ParseFloat(f[1], 64)
		case len(f) == 3 && f[0] == "first16":
			r.First, _ = strconv.ParseFloat(f[1], 64)
			r.Decoded, _ = strconv.Atoi(f[2])
		case len(f) == 4 && f[0] == "depth":
			d, err1 := strconv.Atoi(f[1])
			ns, err2 := strconv.ParseFloat(f[2], 64)
			n, err3 := strconv.Atoi(f[3])
			if err1 != nil || err2 != nil || err3 != nil {
				return r, fmt.Errorf("bench/unwind: bad line %q", sc.Text())
			}
			r.Depth[d], r.Frames[d] = ns, n
		}
	}
	if r.RDTSC2 <= 0 || len(r.Depth) != len(unwindDepths) {
		return r, fmt.Errorf("bench/unwind: incomplete output %q", out)
	}
	for _, d := range unwindDepths {
		if r.Frames[d] != d {
			return r, fmt.Errorf("bench/unwind: a walk of depth %d gave %d frames", d, r.Frames[d])
		}
	}
	return r, nil
}

// unwindBench builds and runs bench/unwind (3 runs per build) and reports
// the medians.
func unwindBench(opt *options, res *results) error {
	dir := filepath.Join(opt.build, "bench", "unwind")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	inc := filepath.Join("internal", "interpose")
	const runs = 3
	raw := map[string][]unwindRun{}
	for _, b := range unwindBuilds {
		prog := filepath.Join(dir, "unwind-"+b.Name)
		obj := prog + "-chain.o"
		steps := [][]string{
			append(append([]string{"-O2", "-I", inc}, b.Flags...), "-c", "bench/unwind/chain.c", "-o", obj),
			append(append([]string{"-O2", "-I", inc}, b.Flags...), "bench/unwind/main.c", obj, filepath.Join(inc, "unwind.c"), "-o", prog),
		}
		for _, args := range steps {
			if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
				return fmt.Errorf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, out)
			}
		}
		for i := 0; i < runs; i++ {
			out, err := exec.Command(prog).Output()
			if err != nil {
				return fmt.Errorf("%s: %v", prog, err)
			}
			r, err := parseUnwindRun(string(out))
			if err != nil {
				return err
			}
			raw[b.Name] = append(raw[b.Name], r)
		}
	}
	res.raw["unwind"] = raw
	res.md("\n## Call-path unwinder\n\n")
	res.md("bench/unwind: a chain of 20 functions whose leaf walks its stack with ms_unwind (from its caller, as a wrapper does), "+
		"%d runs per build, each figure the best of 300 repetitions of 10,000 walks with the rules cached; the median over runs. "+
		"In parentheses: the ratio to two rdtsc reads measured in the same run. Per frame: (depth 16 - depth 1) / 15.\n\n", runs)
	cols := []string{"build", "2 rdtsc (ns)"}
	for _, d := range unwindDepths {
		cols = append(cols, fmt.Sprintf("depth %d (ns)", d))
	}
	cols = append(cols, "ns per frame", "backtrace(), 8 frames (ns)", "first walk of 16 frames (µs, rules decoded)")
	res.mdHead(cols)
	med := func(name string, f func(unwindRun) float64) float64 {
		var v []float64
		for _, r := range raw[name] {
			v = append(v, f(r))
		}
		return summarize(v).Med
	}
	perFrame := map[string]float64{}
	at8 := map[string]float64{}
	for _, b := range unwindBuilds {
		ts := med(b.Name, func(r unwindRun) float64 { return r.RDTSC2 })
		row := []string{b.Desc, fmt.Sprintf("%.1f", ts)}
		for _, d := range unwindDepths {
			ns := med(b.Name, func(r unwindRun) float64 { return r.Depth[d] })
			row = append(row, fmt.Sprintf("%.1f (%.2f x)", ns, ns/ts))
		}
		perFrame[b.Name] = med(b.Name, func(r unwindRun) float64 { return (r.Depth[16] - r.Depth[1]) / 15 })
		at8[b.Name] = med(b.Name, func(r unwindRun) float64 { return r.Depth[8] })
		row = append(row, fmt.Sprintf("%.2f", perFrame[b.Name]), fmt.Sprintf("%.0f", med(b.Name, func(r unwindRun) float64 { return r.Backtrace })),
			fmt.Sprintf("%.0f (%.0f)", med(b.Name, func(r unwindRun) float64 { return r.First })/1e3, med(b.Name, func(r unwindRun) float64 { return float64(r.Decoded) })))
		res.md("| %s |\n", strings.Join(row, " | "))
	}
	verdict := func(v, limit float64) string {
		if v <= limit {
			return "met"
		}
		return "missed"
	}
	res.md("\n| target | measured | verdict |\n|---|---|---|\n")
	res.md("| with frame pointers, at most 1 ns per frame over depth 1 | %.2f ns | %s |\n", perFrame["fp"], verdict(perFrame["fp"], 1))
	res.md("| without frame pointers, at most 150 ns per call at depth 8, rules cached | %.1f ns | %s |\n", at8["omit"], verdict(at8["omit"], 150))
	return nil
}
