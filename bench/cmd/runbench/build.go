package main

// Building what a family's benchmark runs: the pass-through library (as
// a shared library and a static archive), a private copy of libmpiscope,
// and the programs at every layout.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

type family struct {
	Name, MPICC, MPIRun string
}

var families = []family{
	{"openmpi", "mpicc.openmpi", "mpirun.openmpi"},
	{"mpich", "mpicc.mpich", "mpirun.mpich"},
}

// layoutPads are the shifts, in bytes, of the benchmark programs' code in
// their layouts (bench/progs/pad.c): the first is the program as
// compiled; the others, about 3/4 KiB apart, differ in bits 5 to 11 of
// every address of the program's loops.
var layoutPads = []int{0, 736, 1504, 2272, 3104}

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
	refLib string   // the reference wrapper (bench/progs/refwrap.c), preloaded alone
	jobs   string   // job directories (scratch)
	traceN string   // why trace is not available, "" if it is
	jobSeq int      // job directories made so far
	opt    *options
	res    *results // where the sections write what they measured
}

// prepare builds the pass-through library and the programs.
func prepare(f family, opt *options, res *results) (*bench, error) {
	b := &bench{f: f, opt: opt, res: res, dir: filepath.Join(opt.build, "bench", f.Name)}
	b.bin = filepath.Join(b.dir, "bin")
	b.jobs = filepath.Join(b.dir, "jobs")
	lib := filepath.Join(b.opt.build, "lib", f.Name, "libmpiscope.so")
	b.lib = filepath.Join(b.opt.build, "bench", f.Name+"-profile", "libmpiscope.so")
	b.ptLib = filepath.Join(b.opt.build, "bench", f.Name+"-passthrough", "libmpiscope.so")
	b.ptArch = filepath.Join(b.opt.build, "bench", f.Name+"-passthrough", "libmpiscope.a")
	binPT := filepath.Join(b.dir, "bin-pt-linked")
	if b.opt.layouts < 1 || b.opt.layouts > len(layoutPads) {
		return nil, fmt.Errorf("-layouts %d: want 1 to %d", b.opt.layouts, len(layoutPads))
	}
	b.bins, b.binsPT = []string{b.bin}, []string{binPT}
	for _, pad := range layoutPads[1:b.opt.layouts] {
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
	}{{"cheap", "-O2"}, {"pingpong", "-O2"}, {"allreduce", "-O2"}, {"bandwidth", "-O2"}, {"ab", "-O2"}, {"scale", "-O2"}, {"stencil", "-O2"}, {"memtest", "-O0"}} {
		if err := sh(f.MPICC, p.opt, "-g", "-o", filepath.Join(b.bin, p.name), filepath.Join("bench/progs", p.name+".c")); err != nil {
			return nil, err
		}
	}
	// The reference wrapper: alone (refwrap.so) and as the two levels of
	// the stack configurations (ref1.so, ref2.so: a stack holds each
	// library once). libmpiscope finds the stacking shims beside itself:
	// the private copy gets the build's.
	b.refLib = filepath.Join(b.dir, "refwrap.so")
	for _, name := range append([]string{"refwrap.so"}, refLevels...) {
		out := filepath.Join(b.dir, name)
		err := replaceFile(out, func(tmp string) error {
			return sh(f.MPICC, "-O2", "-shared", "-fPIC", fmt.Sprintf("-DREFWRAP_NAME=%q", strings.TrimSuffix(name, ".so")), "-o", tmp, "bench/progs/refwrap.c")
		})
		if err != nil {
			return nil, err
		}
	}
	if err := copyDir(filepath.Join(filepath.Dir(lib), "stack"), filepath.Join(filepath.Dir(b.lib), "stack")); err != nil {
		return nil, fmt.Errorf("the stacking shims: %v (run make lib)", err)
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

// copyDir copies the regular files of directory src into dst (made if
// missing), each by replaceFile.
func copyDir(src, dst string) error {
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o777); err != nil {
		return err
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if err := replaceFile(filepath.Join(dst, e.Name()), func(tmp string) error { return os.WriteFile(tmp, data, 0o755) }); err != nil {
			return err
		}
	}
	return nil
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
func lockBench(buildDir string) (unlock func(), err error) {
	dir := filepath.Join(buildDir, "bench")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: another runbench is running in %s (%v)", f.Name(), buildDir, err)
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
