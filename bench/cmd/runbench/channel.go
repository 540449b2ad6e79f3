package main

// The channel section: the piggyback channel's cost per message over
// profile mode (MPISCOPE_PIGGYBACK=1, the same without staging small
// sends, MPISCOPE_PIGGYBACK_STAGE=0, and MPISCOPE_COMPENSATE=1), on a
// ping-pong of 8 B to 1 MiB and an 8-byte allreduce, the four
// configurations interleaved round by round (bench/progs/channel.c); and
// the PMPI-level cost of the two ways our header can travel with a small
// contiguous message (a struct datatype, or a copy into a staging buffer).

import (
	"fmt"
	"path/filepath"
	"strings"
)

// channelTarget is the bound on the channel's cost per message
// over profile mode, at 8 B and at 1 MiB (ns).
const channelTarget = 500

func (b *bench) channel() error {
	prog := filepath.Join(b.bin, "channel")
	if err := sh(b.f.MPICC, "-O2", "-g", "-Ibench/progs", "-o", prog, "bench/progs/channel.c"); err != nil {
		return err
	}
	cfgs := []struct {
		name string
		env  map[string]string
	}{
		{"profile", map[string]string{"MPISCOPE_ENABLE": "1"}},
		{"channel", map[string]string{"MPISCOPE_PIGGYBACK": "1"}},
		{"unstaged", map[string]string{"MPISCOPE_PIGGYBACK": "1", "MPISCOPE_PIGGYBACK_STAGE": "0"}},
		{"compensated", map[string]string{"MPISCOPE_COMPENSATE": "1"}},
	}
	rounds := max(3, b.opt.rounds/2)
	vals := map[string]map[string][]float64{} // config -> benchmark -> ns per message, one per round
	var order []string
	for r := 0; r < rounds; r++ {
		for _, c := range cfgs {
			res, err := b.mpirun(2, b.lib, c.env, prog, "pingpong", "20000")
			if err != nil {
				return err
			}
			bench, names, _ := parse(res.Stdout)
			if order == nil {
				order = names
			}
			if vals[c.name] == nil {
				vals[c.name] = map[string][]float64{}
			}
			for n, v := range bench {
				vals[c.name][n] = append(vals[c.name][n], v[0])
			}
		}
	}
	b.res.md("\n## %s: piggyback channel (ns per message, median [min, max] of %d interleaved rounds)\n\n", b.f.Name, rounds)
	b.res.md("Load average at the start: %.1f. Per message over profile mode: the median of the per-round differences.\n\n", loadavg())
	b.res.md("channel: small contiguous sends staged (the default); unstaged: MPISCOPE_PIGGYBACK_STAGE=0, every message with the struct datatype.\n\n")
	b.res.mdHead([]string{"benchmark", "profile", "channel", "unstaged", "compensated", "channel - profile", "unstaged - profile", "compensated - profile"})
	raw := map[string]any{}
	diff := func(cfg, n string) stats {
		var d []float64
		p, q := vals["profile"][n], vals[cfg][n]
		for i := range min(len(p), len(q)) {
			d = append(d, q[i]-p[i])
		}
		return summarize(d)
	}
	var verdicts []string
	for _, n := range order {
		dc, du, dk := diff("channel", n), diff("unstaged", n), diff("compensated", n)
		b.res.md("| %s | %s | %s | %s | %s | %s | %s | %s |\n", n, summarize(vals["profile"][n]), summarize(vals["channel"][n]),
			summarize(vals["unstaged"][n]), summarize(vals["compensated"][n]), dc, du, dk)
		raw[n] = map[string]any{"profile": vals["profile"][n], "channel": vals["channel"][n], "unstaged": vals["unstaged"][n],
			"compensated": vals["compensated"][n]}
		if n == "pingpong_8" || n == "pingpong_1048576" {
			ok := "met"
			if dc.Med > channelTarget {
				ok = "NOT met"
			}
			verdicts = append(verdicts, fmt.Sprintf("%s: %.0f ns per message over profile mode (target <= %d ns): %s", n, dc.Med, channelTarget, ok))
		}
	}
	b.res.md("\n%s\n", strings.Join(verdicts, "; "))

	// The header's two ways, at the PMPI level (no library).
	stage := map[string][]float64{}
	var sorder []string
	for r := 0; r < rounds; r++ {
		res, err := b.mpirun(2, "", nil, prog, "stage", "20000")
		if err != nil {
			return err
		}
		bench, names, _ := parse(res.Stdout)
		if sorder == nil {
			sorder = names
		}
		for n, v := range bench {
			stage[n] = append(stage[n], v[0])
		}
	}
	b.res.md("\n%s: the header with a small contiguous message, PMPI level, ns per message (median [min, max] of %d runs): "+
		"plain (no header), dtype (the channel's struct datatype), stage (a copy into a staging buffer sent as MPI_PACKED)\n\n", b.f.Name, rounds)
	b.res.mdHead([]string{"size", "plain", "dtype", "stage"})
	for _, n := range sorder {
		if size, ok := strings.CutPrefix(n, "plain_"); ok {
			b.res.md("| %s | %s | %s | %s |\n", size, summarize(stage[n]), summarize(stage["dtype_"+size]), summarize(stage["stage_"+size]))
		}
	}
	raw["stage"] = stage
	b.res.raw[b.f.Name+"/channel"] = raw
	return nil
}
