package mpitest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// quietThread is one line "thread <rank> <tid> <vol> <nonvol> <where> <comm>"
// of testdata/progs/quiet.c.
type quietThread struct {
	rank, tid, vol, nonvol int
	where, comm            string
}

// quietRun is what quiet.c printed, by rank.
type quietRun struct {
	threads map[int][]quietThread
	n       map[int]int // threads as the work began
	atMain  map[int]int // threads at the start of main
}

func parseQuiet(t *testing.T, out string) quietRun {
	t.Helper()
	q := quietRun{threads: map[int][]quietThread{}, n: map[int]int{}, atMain: map[int]int{}}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(l)
		num := func(i int) int {
			if i >= len(f) {
				t.Fatalf("short line %q", l)
			}
			v, err := strconv.Atoi(f[i])
			if err != nil {
				t.Fatalf("line %q: %v", l, err)
			}
			return v
		}
		switch {
		case len(f) == 7 && f[0] == "thread":
			r := num(1)
			q.threads[r] = append(q.threads[r], quietThread{r, num(2), num(3), num(4), f[5], f[6]})
		case len(f) == 4 && f[0] == "threads":
			q.n[num(1)], q.atMain[num(1)] = num(2), num(3)
		}
	}
	return q
}

// ours tells a thread of the library: one waiting in a system call made
// by code of libmpiscope.so (the Go runtime's threads park in futex and
// nanosleep calls of their own), or one the library named (its signal
// watcher, mpiscope-watch).
func (q quietThread) ours() bool {
	return strings.HasPrefix(q.where, "libmpiscope") || strings.HasPrefix(q.comm, "mpiscope")
}

// quietWakes is how many context switches the library's threads may make
// in total while the application runs for the second that follows
// MPI_Init (an MPI_Pcontrol(2) snapshot half-way, its own time left out).
// None are expected: the few wake-ups that follow each return from Go
// happen inside the MPI call (lifecycle.c, ms_go_settle), unless the
// machine is so loaded that they spill over its 1 ms: the margin. Before, they made 7 to 64 per rank (sysmon polling
// every 20 us to 10 ms for 10 ms after each return from Go, with a second
// P idle; collector, sweeper and scavenger work left running).
const quietWakes = 4

// TestQuietGuest: while the application runs, the library's threads do
// not wake. Each rank of quiet.c samples the context switches of every
// thread of its process over one second of application work that starts
// as MPI_Init returns (compute, MPI calls, one MPI_Pcontrol(2) snapshot);
// the threads of ours (the threads present with the library and not
// without it) may together make at most quietWakes. The threads are
// counted too: with the library, without it, ours.
func TestQuietGuest(t *testing.T) {
	Families(t, func(t *testing.T, f Family) {
		prog := Compile(t, f.MPICC, "quiet.c", t.TempDir())
		base := f.Exec(t, Run{NP: 2, Args: []string{prog, "pcontrol"}})
		if base.Err != nil {
			t.Fatalf("without mpiscope: %v\nstdout:\n%s\nstderr:\n%s", base.Err, base.Stdout, base.Stderr)
		}
		without := parseQuiet(t, base.Stdout)
		for r := 0; r < 2; r++ {
			for _, th := range without.threads[r] {
				if th.ours() {
					t.Fatalf("without mpiscope, rank %d: thread %+v taken for ours", r, th)
				}
			}
		}
		for _, mode := range []struct {
			name string
			env  map[string]string
		}{
			{"profile", nil},
			{"recording-off", map[string]string{"MPISCOPE_ENABLE": "0"}},
		} {
			t.Run(mode.name, func(t *testing.T) {
				env := map[string]string{}
				for k, v := range mode.env {
					env[k] = v
				}
				_, _, res := f.Profile(t, 2, env, prog, "pcontrol")
				with := parseQuiet(t, res.Stdout)
				var report []string
				for r := 0; r < 2; r++ {
					var mine []string
					n, wakes := 0, 0
					for _, th := range with.threads[r] {
						if th.ours() {
							n++
							wakes += th.vol + th.nonvol
							mine = append(mine, fmt.Sprintf("%d %s/%s: %d+%d", th.tid, th.where, th.comm, th.vol, th.nonvol))
						}
					}
					report = append(report, fmt.Sprintf("rank %d: %d threads (%d at main), %d without the library, %d ours, %d wake-ups",
						r, with.n[r], with.atMain[r], without.n[r], n, wakes))
					if extra := len(with.threads[r]) - len(without.threads[r]); n != extra {
						t.Errorf("rank %d: %d threads of ours found, but %d with the library against %d without:\n%s",
							r, n, len(with.threads[r]), len(without.threads[r]), res.Stdout)
					}
					if wakes > quietWakes {
						t.Errorf("rank %d: the library's threads woke %d times in the second after MPI_Init, want at most %d: %s",
							r, wakes, quietWakes, strings.Join(mine, ", "))
					}
				}
				t.Log(strings.Join(report, "; "))
			})
		}
	})
}
