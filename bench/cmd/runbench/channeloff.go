package main

// The channel-off section: what profile mode costs per call with the
// piggyback channel off, in instructions, against a control build with
// the channel's code compiled out of the wrappers (bench/build-variant.sh
// profile DIR -DMS_NO_PIGGYBACK, piggyback.h): the issue's "when the
// channel is off, the hot path costs what it costs today". Both ranks of
// bench/progs/pboff.c run under valgrind --tool=callgrind
// (--separate-threads=yes: only the application's thread is counted, not
// the Go runtime's threads in the same library); for each loop, the
// instructions executed in libmpiscope per MPI call on each rank.
// -variants adds builds (for example one made at a commit before the
// channel landed). Not in the default sections (builds a library per
// family, about two minutes, and valgrind).

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

func channelOff(opt *options, res *results) error {
	if _, err := os.Stat("/usr/include/valgrind/callgrind.h"); err != nil {
		res.md("\nchannel-off: valgrind (callgrind.h) not installed.\n")
		return nil
	}
	fams, err := pickFamilies(opt.family)
	if err != nil {
		return err
	}
	for _, f := range fams {
		b := &bench{f: f, opt: opt, res: res, dir: filepath.Join(opt.build, "bench", f.Name+"-channel-off")}
		b.bin = filepath.Join(b.dir, "bin")
		b.jobs = filepath.Join(b.dir, "jobs")
		for _, d := range []string{b.bin, b.jobs} {
			if err := os.MkdirAll(d, 0o777); err != nil {
				return err
			}
		}
		prog := filepath.Join(b.bin, "pboff")
		if err := sh(f.MPICC, "-O2", "-g", "-Ibench/progs", "-o", prog, "bench/progs/pboff.c"); err != nil {
			return err
		}
		ctl := filepath.Join(b.dir, "nopb")
		if err := sh("sh", "bench/build-variant.sh", f.Name, "profile", ctl, "-DMS_NO_PIGGYBACK"); err != nil {
			return err
		}
		vars, err := parseVariants(opt.variants, f.Name)
		if err != nil {
			return err
		}
		libs := append([]variant{{"channel compiled out", filepath.Join(ctl, "libmpiscope.so")},
			{"as built", filepath.Join(opt.build, "lib", f.Name, "libmpiscope.so")}}, vars...)
		res.md("\n## %s: profile mode with the piggyback channel off, instructions per call (callgrind)\n\n", f.Name)
		res.md("bench/progs/pboff.c on 2 ranks under valgrind --tool=callgrind --separate-threads=yes (the application's thread), MPISCOPE_ENABLE=1, no MPISCOPE_PIGGYBACK: instructions executed in libmpiscope per MPI call of each loop, after a warm-up repetition, rank 0 / rank 1. \"channel compiled out\": bench/build-variant.sh profile DIR -DMS_NO_PIGGYBACK.\n\n")
		head := []string{"loop"}
		for _, l := range libs {
			head = append(head, l.name)
		}
		for _, l := range libs[1:] {
			head = append(head, l.name+" - compiled out")
		}
		res.mdHead(head)
		raw := map[string]map[string][2]float64{} // loop -> build -> per call on rank 0, 1
		var loops []string
		for _, l := range libs {
			per, order, err := b.pbOffRun(prog, l.lib)
			if err != nil {
				return fmt.Errorf("%s: %v", l.name, err)
			}
			if loops == nil {
				loops = order
			}
			for loop, v := range per {
				if raw[loop] == nil {
					raw[loop] = map[string][2]float64{}
				}
				raw[loop][l.name] = v
			}
		}
		for _, loop := range loops {
			row := []string{loop}
			for _, l := range libs {
				v := raw[loop][l.name]
				row = append(row, fmt.Sprintf("%.1f / %.1f", v[0], v[1]))
			}
			c := raw[loop][libs[0].name]
			for _, l := range libs[1:] {
				v := raw[loop][l.name]
				row = append(row, fmt.Sprintf("%+.1f / %+.1f", v[0]-c[0], v[1]-c[1]))
			}
			res.md("| %s |\n", strings.Join(row, " | "))
		}
		res.raw[f.Name+"/channel-off"] = raw
	}
	return nil
}

// pbOffRun runs pboff.c on 2 ranks under callgrind with lib preloaded and
// returns, per loop, libmpiscope's instructions per call on rank 0 and 1,
// and the loops in the program's order.
func (b *bench) pbOffRun(prog, lib string) (map[string][2]float64, []string, error) {
	out := filepath.Join(b.dir, "cg")
	os.RemoveAll(out)
	if err := os.MkdirAll(out, 0o777); err != nil {
		return nil, nil, err
	}
	r, err := b.mpirun(2, lib, map[string]string{"MPISCOPE_ENABLE": "1", "GODEBUG": "asyncpreemptoff=1"},
		"valgrind", "--tool=callgrind", "--separate-threads=yes", "--callgrind-out-file="+filepath.Join(out, "cg.%p"), prog, "2000")
	if err != nil {
		return nil, nil, err
	}
	os.RemoveAll(r.Job)
	calls := map[string]float64{}
	var order []string
	sc := bufio.NewScanner(strings.NewReader(r.Stdout))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[0] == "CALLS" {
			n, err := strconv.ParseFloat(f[2], 64)
			if err != nil {
				return nil, nil, fmt.Errorf("pboff: %q: %v", sc.Text(), err)
			}
			calls[f[1]] = n
			order = append(order, f[1])
		}
	}
	// The application's thread: cg.<pid>.<dump>-01, named "<loop> r<rank>".
	dumps, _ := filepath.Glob(filepath.Join(out, "cg.*.*-01"))
	if len(order) != 3 || len(dumps) != 2*len(order) {
		return nil, nil, fmt.Errorf("pboff: %d dumps of the application's thread, %d loops: want 6 and 3\n%s", len(dumps), len(order), r.Stdout)
	}
	per := map[string][2]float64{}
	for _, d := range dumps {
		c, err := readCallgrind(d)
		if err != nil {
			return nil, nil, err
		}
		loop, rk, _ := strings.Cut(c.trigger, " r")
		rank, err := strconv.Atoi(rk)
		if n := calls[loop]; err != nil || n == 0 || rank < 0 || rank > 1 {
			return nil, nil, fmt.Errorf("%s: dump %q is of no loop and rank the program ran", d, c.trigger)
		}
		v := per[loop]
		v[rank] = float64(c.libTotal) / calls[loop]
		per[loop] = v
	}
	return per, order, nil
}
