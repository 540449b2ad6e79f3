package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mpiscope/mpiscope/profile"
)

// synth times mpiscope report on many synthetic rank profiles.
func synth(opt *options, res *results) error {
	dir := filepath.Join(opt.build, "bench", fmt.Sprintf("synth-%d", opt.synthRanks))
	cmd := exec.Command("go", "run", "./bench/cmd/synth", "-ranks", strconv.Itoa(opt.synthRanks), "-o", dir)
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
	mps := filepath.Join(opt.build, "bin", "mpiscope")
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
	res.md("\n## mpiscope report on %d synthetic ranks\n\n", opt.synthRanks)
	res.md("bench/cmd/synth: %d per-rank files (%.0f MB; 40 functions, 150 call sites, 16 peers, 3 communicators, 2 regions each) in ranks/<r/1000>/r<r>.mps, "+
		"page cache warm. `mpiscope report <dir>` (text, %d lines of output), 3 runs:\n\n", files, float64(size)/1e6, lines)
	res.md("| wall time (s) | peak RSS (MiB) |\n|---|---|\n| %.2f [%.2f, %.2f] | %.0f [%.0f, %.0f] |\n", W.Med, W.Min, W.Max, R.Med, R.Min, R.Max)
	res.raw["synth"] = map[string]any{"ranks": opt.synthRanks, "files": files, "bytes": size, "wall_s": walls, "maxrss_mib": rss}
	if opt.synthRanks >= 100000 {
		res.t.synth.Rows = append(res.t.synth.Rows, tRow{Family: "mpiscope report", Row: fmt.Sprintf("wall time (s), %d ranks", opt.synthRanks), Value: W.Med, Limit: 10},
			tRow{Family: "mpiscope report", Row: fmt.Sprintf("peak RSS (MiB), %d ranks", opt.synthRanks), Value: R.Med, Limit: 2048})
	} else {
		res.t.synth.skip("mpiscope report", "100,000 ranks", fmt.Sprintf("this run made %d (-synth-ranks)", opt.synthRanks))
	}
	return synthHTML(opt, res, dir) // synthhtml.go
}
