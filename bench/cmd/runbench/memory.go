package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mpiscope/mpiscope/profile"
)

// memory: peak RSS growth of rank 0 over many calls, with and without
// mpiscope, at two run lengths.
func (b *bench) memory() error {
	b.res.md("\n## Memory (%s)\n\n", b.f.Name)
	b.res.md("memtest on 65 ranks (oversubscribed; ranks 1..64 sleep in a polled MPI_Ibarrier): rank 0 makes the calls from 1,128 distinct call sites (1,000 switch cases) to 64 peers; VmHWM of rank 0 read from /proc/self/status after MPI_Init and after the calls.\n\n")
	b.res.md("| configuration | calls | call sites seen | peers | VmHWM before (KiB) | after (KiB) | growth (KiB) |\n|---|---|---|---|---|---|---|\n")
	res := map[string]any{}
	var growth []float64 // profile mode, per call count
	for _, n := range strings.Split(b.opt.memCalls, ",") {
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
			b.res.md("| %s | %d | %s | %d | %d | %d | %d |\n", c.Name, calls, seen, peers, before, after, after-before)
			if c.Name == "profile" {
				b.res.t.memory.add(b.f.Name, fmt.Sprintf("growth at %d calls", calls), float64(after-before), "")
				growth = append(growth, float64(after-before))
			}
			res[c.Name+"/"+n] = []int64{calls, sites, peers, before, after}
		}
	}
	if k := len(growth); k >= 2 {
		b.res.t.memory.Rows = append(b.res.t.memory.Rows, tRow{Family: b.f.Name, Row: "growth at the most calls - at the fewest", Value: growth[k-1] - growth[0],
			Limit: memSlack, Abs: true})
	}
	b.res.raw[b.f.Name+"/memory"] = res
	return nil
}
