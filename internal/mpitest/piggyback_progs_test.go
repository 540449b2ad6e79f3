package mpitest_test

// The other programs of the MPI end-to-end tests with the piggyback
// channel on: the same output and the same counts as with it off.

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpitest"
)

// TestPiggybackPrograms runs programs of the end-to-end tests that the
// channel's own tests do not (communicator splits, Pcontrol levels and
// regions, Pcontrol(3) resets, C++, threads under MPI_THREAD_MULTIPLE)
// with the channel off and on, on both families: every rank's output
// lines (sorted) and the calls, bytes and peers per function and
// communicator must be the same.
func TestPiggybackPrograms(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		for _, c := range []struct {
			src   string
			cc    string
			np    int
			env   map[string]string
			flags []string
			args  []string
		}{
			{src: "commtraffic.c", np: 4},
			{src: "pcontrol.c", np: 2},
			{src: "ipm.c", np: 2, env: map[string]string{"MPISCOPE_PCONTROL": "ipm"}},
			{src: "reset.c", np: 2},
			{src: "cxx.cpp", cc: f.MPICXX, np: 2},
			{src: "callpath/threads.c", np: 2, flags: []string{"-pthread"}},
			{src: "safety/threads.c", np: 2, flags: []string{"-lpthread"}, args: []string{"4", "1000"}},
		} {
			t.Run(strings.TrimSuffix(strings.ReplaceAll(c.src, "/", "-"), ".c"), func(t *testing.T) {
				cc := c.cc
				if cc == "" {
					cc = f.MPICC
				}
				prog := mpitest.Compile(t, cc, c.src, t.TempDir(), c.flags...)
				var outs, counts [2]string
				for i, on := range []string{"0", "1"} {
					env := map[string]string{"MPISCOPE_PIGGYBACK": on}
					for k, v := range c.env {
						env[k] = v
					}
					p, _, res := f.Profile(t, c.np, env, append([]string{prog}, c.args...)...)
					l := strings.Split(strings.TrimSpace(res.Stdout), "\n")
					sort.Strings(l)
					outs[i] = strings.Join(l, "\n")
					var b strings.Builder
					b.WriteString(pbCounts(p))
					for _, cp := range p.CommPeers {
						fmt.Fprintf(&b, "comm %d %s %d %d %d %d %d\n", cp.Rank, cp.Comm, cp.Peer, cp.SentMsgs, cp.SentBytes, cp.RecvMsgs, cp.RecvBytes)
					}
					counts[i] = b.String()
					if (len(p.Waits) > 0) != (on == "1") {
						t.Errorf("MPISCOPE_PIGGYBACK=%s: %d wait-state rows", on, len(p.Waits))
					}
				}
				if outs[0] != outs[1] {
					t.Errorf("output differs with the channel on:\n%s\nwith it off:\n%s", outs[1], outs[0])
				}
				if counts[0] != counts[1] {
					t.Errorf("counts differ with the channel on:\n%s\nwith it off:\n%s", counts[1], counts[0])
				}
			})
		}
	})
}
