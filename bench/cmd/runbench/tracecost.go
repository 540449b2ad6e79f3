package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// tracecost counts where trace mode's cost per call goes on the two-rank
// loops bw_8, pingpong_8, pingpong_0 and the local MPI_Test of a request
// done at once (bench/progs/tracecost.c), in instructions,
// which the machine's load does not move: both ranks run under valgrind
// --tool=callgrind, the counts zeroed before each measured loop and dumped
// after it. For each rank, loop and mode: the instructions executed in
// libmpiscope per MPI call the loop made (calls counted by callgrind from
// the loop's function), and in trace mode the library's functions that
// took the most. Not in the default sections (valgrind, about a minute).
func (b *bench) tracecost() error {
	b.res.md("\n## Trace mode's cost per call in instructions (%s, callgrind)\n\n", b.f.Name)
	if _, err := os.Stat("/usr/include/valgrind/callgrind.h"); err != nil {
		b.res.md("valgrind (callgrind.h) not installed.\n")
		return nil
	}
	prog := filepath.Join(b.bin, "tracecost")
	if err := sh(b.f.MPICC, "-O2", "-g", "-o", prog, "bench/progs/tracecost.c"); err != nil {
		return err
	}
	out := filepath.Join(b.dir, "tracecost")
	os.RemoveAll(out)
	if err := os.MkdirAll(out, 0o777); err != nil {
		return err
	}
	res, err := b.mpirun(2, b.lib, map[string]string{"MPISCOPE_ENABLE": "1", "MPISCOPE_TRACE_COMPRESS": "off",
		"GODEBUG": "asyncpreemptoff=1"}, "valgrind", "--tool=callgrind",
		"--callgrind-out-file="+filepath.Join(out, "cg.%p"), prog, "2000")
	if err != nil {
		return err
	}
	os.RemoveAll(res.Job)
	dumps, _ := filepath.Glob(filepath.Join(out, "cg.*.*"))
	sort.Strings(dumps)
	if len(dumps) != 16 {
		return fmt.Errorf("tracecost: %d callgrind dumps, want 16 (2 ranks x 4 loops x 2 modes)", len(dumps))
	}
	b.res.md("bench/progs/tracecost.c on 2 ranks under valgrind --tool=callgrind (MPISCOPE_TRACE_COMPRESS=off): instructions executed in libmpiscope per MPI call of the loop, after a warm-up repetition; top functions of the library in trace mode, per call:\n\n")
	b.res.mdHead([]string{"dump (pid.n)", "loop and mode", "calls", "libmpiscope instructions per call", "top functions (instructions per call)"})
	for _, d := range dumps {
		c, err := readCallgrind(d)
		if err != nil {
			return err
		}
		if c.calls == 0 {
			return fmt.Errorf("%s: no call from the loop", d)
		}
		var top []string
		if strings.HasSuffix(c.trigger, "trace") {
			type fv struct {
				fn string
				v  float64
			}
			var fs []fv
			for fn, v := range c.lib {
				fs = append(fs, fv{fn, float64(v) / float64(c.calls)})
			}
			sort.Slice(fs, func(i, j int) bool { return fs[i].v > fs[j].v })
			for i := 0; i < len(fs) && i < 6; i++ {
				top = append(top, fmt.Sprintf("%s %.1f", fs[i].fn, fs[i].v))
			}
		}
		b.res.md("| %s | %s | %d | %.1f | %s |\n", strings.TrimPrefix(filepath.Base(d), "cg."), c.trigger, c.calls,
			float64(c.libTotal)/float64(c.calls), strings.Join(top, ", "))
	}
	return nil
}

// cgDump is what tracecost reads from one callgrind dump.
type cgDump struct {
	trigger  string           // the dump's name (CALLGRIND_DUMP_STATS_AT)
	calls    int64            // calls made by the loop's function (bw, pingpong, testdone)
	lib      map[string]int64 // libmpiscope's functions: instructions (self)
	libTotal int64
}

var cgName = regexp.MustCompile(`^(ob|fn|cob|cfn|fl|fi|fe|cfi|cfl)=(?:\((\d+)\))?\s*(.*)$`)

// readCallgrind sums a dump's self cost per function of libmpiscope (the
// cost lines of its fn blocks, not the inclusive costs of their calls) and
// the calls the loop's function made.
func readCallgrind(path string) (*cgDump, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d := &cgDump{lib: map[string]int64{}}
	obs, fns := map[string]string{}, map[string]string{}
	var ob, fn string
	call := false // the next cost line is a call's inclusive cost
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if l == "" {
			continue
		}
		if strings.HasPrefix(l, "desc: Trigger: Client Request: ") {
			d.trigger = strings.TrimPrefix(l, "desc: Trigger: Client Request: ")
			continue
		}
		if g := cgName.FindStringSubmatch(l); g != nil {
			tab := fns
			if g[1] == "ob" || g[1] == "cob" {
				tab = obs
			} else if g[1] != "fn" && g[1] != "cfn" {
				continue
			}
			name := g[3]
			if g[2] != "" {
				if name != "" {
					tab[g[2]] = name
				}
				name = tab[g[2]]
			}
			switch g[1] {
			case "ob":
				ob = name
			case "fn":
				fn = name
			}
			continue
		}
		if strings.HasPrefix(l, "calls=") {
			call = true
			if fn == "bw" || fn == "pingpong" || fn == "testdone" {
				n, _ := strconv.ParseInt(strings.Fields(strings.TrimPrefix(l, "calls="))[0], 10, 64)
				d.calls += n
			}
			continue
		}
		if c := l[0]; c >= '0' && c <= '9' || c == '+' || c == '-' || c == '*' {
			if call {
				call = false
				continue
			}
			fs := strings.Fields(l)
			if len(fs) < 2 || !strings.Contains(filepath.Base(ob), "libmpiscope") {
				continue
			}
			v, _ := strconv.ParseInt(fs[1], 10, 64)
			d.lib[fn] += v
			d.libTotal += v
		}
	}
	return d, sc.Err()
}
