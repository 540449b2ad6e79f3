package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// synthHTML times the HTML report and mpiscope view's first page on the
// synthetic job of the synth section (dir): `mpiscope report --format html`
// (wall time and size of the page), and for the view the time from its
// start to its URL (reading the job) and the first GET / after that (the
// page made and sent). 3 runs each.
func synthHTML(opt *options, res *results, dir string) error {
	mps := opt.build + "/bin/mpiscope"
	var walls, sizes, starts, pages []float64
	for rep := 0; rep < 3; rep++ {
		c := exec.Command(mps, "report", "--format", "html", dir)
		c.Stderr = io.Discard
		so, err := c.StdoutPipe()
		if err != nil {
			return err
		}
		t0 := time.Now()
		if err := c.Start(); err != nil {
			return err
		}
		n, _ := io.Copy(io.Discard, so)
		if err := c.Wait(); err != nil {
			return fmt.Errorf("mpiscope report --format html %s: %v", dir, err)
		}
		walls = append(walls, time.Since(t0).Seconds())
		sizes = append(sizes, float64(n)/1e6)

		start, page, err := viewFirstPage(mps, dir)
		if err != nil {
			return err
		}
		starts, pages = append(starts, start), append(pages, page)
	}
	W, S, V0, V1 := summarize(walls), summarize(sizes), summarize(starts), summarize(pages)
	res.md("\n## HTML report and mpiscope view on %d synthetic ranks\n\n", opt.synthRanks)
	res.md("The same job directory, page cache warm, 3 runs each: `mpiscope report --format html <dir>` (one self-contained page); " +
		"`mpiscope view <dir>`: from its start to the URL printed (the job read), then the first `GET /` (the page made and sent).\n\n")
	res.md("| HTML report wall time (s) | page (MB) | view start to URL (s) | view first page (s) |\n|---|---|---|---|\n")
	res.md("| %.2f [%.2f, %.2f] | %.2f | %.2f [%.2f, %.2f] | %.2f [%.2f, %.2f] |\n", W.Med, W.Min, W.Max, S.Med, V0.Med, V0.Min, V0.Max, V1.Med, V1.Min, V1.Max)
	res.raw["synth_html"] = map[string]any{"ranks": opt.synthRanks, "html_wall_s": walls, "html_mb": sizes, "view_start_s": starts, "view_page_s": pages}
	if opt.synthRanks >= 100000 {
		res.t.synth.Rows = append(res.t.synth.Rows,
			tRow{Family: "mpiscope report --format html", Row: fmt.Sprintf("wall time (s), %d ranks", opt.synthRanks), Value: W.Med, Limit: 10},
			tRow{Family: "mpiscope view", Row: fmt.Sprintf("first page (s), %d ranks", opt.synthRanks), Value: V1.Med, Limit: 2,
				Info: fmt.Sprintf("after %.1f s reading the job", V0.Med)})
	} else {
		res.t.synth.skip("mpiscope report --format html", "100,000 ranks", fmt.Sprintf("this run made %d (-synth-ranks)", opt.synthRanks))
	}
	return nil
}

var viewURL = regexp.MustCompile(`at (http://127\.0\.0\.1:[0-9]+/) `)

// viewFirstPage starts mpiscope view on dir and returns the seconds to its
// URL and then to the whole first page.
func viewFirstPage(mps, dir string) (start, page float64, err error) {
	c := exec.Command(mps, "view", dir)
	c.Stderr = io.Discard
	so, err := c.StdoutPipe()
	if err != nil {
		return 0, 0, err
	}
	t0 := time.Now()
	if err := c.Start(); err != nil {
		return 0, 0, err
	}
	defer func() {
		c.Process.Signal(syscall.SIGTERM)
		c.Wait()
	}()
	line, err := bufio.NewReader(so).ReadString('\n')
	if err != nil {
		return 0, 0, fmt.Errorf("mpiscope view %s: no URL (%v)", dir, err)
	}
	m := viewURL.FindStringSubmatch(line)
	if m == nil {
		return 0, 0, fmt.Errorf("mpiscope view %s: no URL in %q", dir, line)
	}
	start = time.Since(t0).Seconds()
	t1 := time.Now()
	resp, err := http.Get(m[1])
	if err != nil {
		return 0, 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err == nil && resp.StatusCode != 200 {
		err = errors.New(resp.Status)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("mpiscope view %s: GET /: %v", dir, err)
	}
	return start, time.Since(t1).Seconds(), nil
}

// viewTimeline times mpiscope view's timeline (/api/timeline) on a
// synthetic trace of -timeline-events events over -trace-ranks ranks
// (bench/cmd/synth -trace-events; made once and kept in the build
// directory): the first whole-run request (the server indexes the trace
// and decodes each block once for its summary), the same request again,
// zoomed ones (a ten-thousandth of the run at its end and in its middle,
// its last hundredth), each with its wall time and the view's CPU time.
// Not in the default sections: the trace is about 1 GB.
func viewTimeline(opt *options, res *results) error {
	dir := filepath.Join(opt.build, "bench", fmt.Sprintf("timeline-%d-%dr", opt.timelineEvents, opt.traceRanks))
	if _, err := os.Stat(filepath.Join(dir, "trace")); err != nil {
		cmd := exec.Command("go", "run", "./bench/cmd/synth", "-ranks", strconv.Itoa(opt.traceRanks),
			"-trace-events", strconv.FormatUint(opt.timelineEvents, 10), "-o", dir)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("synth: %v", err)
		}
		// The view needs a profile too: the ranks' files of a synthetic
		// job of as many ranks, made beside and moved in.
		prof := dir + "-profile"
		cmd = exec.Command("go", "run", "./bench/cmd/synth", "-ranks", strconv.Itoa(opt.traceRanks), "-o", prof)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("synth: %v", err)
		}
		if err := os.Rename(filepath.Join(prof, "ranks"), filepath.Join(dir, "ranks")); err != nil {
			return err
		}
		os.RemoveAll(prof)
	}
	size, err := dirBytes(filepath.Join(dir, "trace"))
	if err != nil {
		return err
	}
	mps := filepath.Join(opt.build, "bin", "mpiscope")
	c := exec.Command(mps, "view", dir)
	c.Stderr = io.Discard
	so, err := c.StdoutPipe()
	if err != nil {
		return err
	}
	if err := c.Start(); err != nil {
		return err
	}
	defer func() {
		c.Process.Signal(syscall.SIGTERM)
		c.Wait()
	}()
	line, err := bufio.NewReader(so).ReadString('\n')
	m := viewURL.FindStringSubmatch(line)
	if err != nil || m == nil {
		return fmt.Errorf("mpiscope view %s: no URL in %q (%v)", dir, line, err)
	}
	type window struct {
		End   int64    `json:"end_ns"`
		Mode  string   `json:"mode"`
		Total int      `json:"total"`
		Warns []string `json:"warnings"`
		Calls []any    `json:"calls"`
		Msgs  []any    `json:"msgs"`
		Bins  []any    `json:"bins"`
		// Partial: blocks still summarized in the background.
		Partial bool `json:"partial"`
		Pending int  `json:"pending_blocks"`
	}
	type answer struct {
		w         window
		wall, cpu float64
		bytes     int64
	}
	get := func(q string) (answer, error) {
		var a answer
		c0 := cpuSeconds(c.Process.Pid)
		t0 := time.Now()
		resp, err := http.Get(m[1] + "api/timeline?" + q)
		if err != nil {
			return a, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != 200 {
			err = fmt.Errorf("%s: %s", resp.Status, body)
		}
		if err == nil {
			err = json.Unmarshal(body, &a.w)
		}
		a.wall, a.cpu, a.bytes = time.Since(t0).Seconds(), cpuSeconds(c.Process.Pid)-c0, int64(len(body))
		return a, err
	}
	// The first request indexes the trace (mpiscope view starts it in
	// the background as it starts: wait for its URL only).
	start := time.Now()
	first, err := get("w=1000")
	if err != nil {
		return fmt.Errorf("first timeline request: %v", err)
	}
	again, err := get("w=1000")
	if err != nil {
		return err
	}
	end := first.w.End
	span := max(end/10000, 1)
	zEnd, err := get(fmt.Sprintf("t0=%d&t1=%d&w=1000", end-span, end+1))
	if err != nil {
		return err
	}
	zCalls, err := get(fmt.Sprintf("t0=%d&t1=%d&w=1000", end-max(end/1000000, 1), end+1))
	if err != nil {
		return err
	}
	mid := end / 2
	zMid, err := get(fmt.Sprintf("t0=%d&t1=%d&w=1000", mid, mid+span))
	if err != nil {
		return err
	}
	zLast, err := get(fmt.Sprintf("t0=%d&t1=%d&w=1000", end-end/100, end+1))
	if err != nil {
		return err
	}
	// The whole run again each second until every block is summarized.
	whole, polls := again, 0
	for whole.w.Partial && polls < 3600 {
		time.Sleep(time.Second)
		if whole, err = get("w=1000"); err != nil {
			return err
		}
		polls++
	}
	tWhole := time.Since(start).Seconds()
	// The window of single calls at the end (which started the message
	// index) again each second until it has its messages.
	reading := func(a answer) bool {
		return slices.ContainsFunc(a.w.Warns, func(w string) bool { return strings.Contains(w, "messages are being read") })
	}
	zMsgs := zCalls
	for polls = 0; reading(zMsgs) && polls < 3600; polls++ {
		time.Sleep(time.Second)
		if zMsgs, err = get(fmt.Sprintf("t0=%d&t1=%d&w=1000", end-max(end/1000000, 1), end+1)); err != nil {
			return err
		}
	}
	tMsgs := time.Since(start).Seconds()
	rss := peakRSS(c.Process.Pid)
	res.md("\n## mpiscope view's timeline on a %.2f GB trace\n\n", float64(size)/1e9)
	res.md("bench/cmd/synth -trace-events %d -ranks %d (%.0f MB of trace, page cache warm), `mpiscope view <dir>`, one run: "+
		"`GET /api/timeline?w=1000` (the whole run in 1,000 columns: the server indexes the trace and decodes every block once, for its summary), the same again, "+
		"a window of a ten-thousandth of the run at its end, of a millionth at its end (single calls), of a ten-thousandth in its middle, and its last hundredth. The browser gets what the answer holds, never the trace.\n\n",
		opt.timelineEvents, opt.traceRanks, float64(size)/1e6)
	res.md("| request | wall (s) | CPU of the view meanwhile (s; background summaries included) | answer | bytes sent |\n|---|---|---|---|---|\n")
	row := func(name string, a answer) {
		what := fmt.Sprintf("%s: %d bins, about %d calls", a.w.Mode, len(a.w.Bins), a.w.Total)
		if a.w.Partial {
			what += fmt.Sprintf(" (partial: %d blocks to go)", a.w.Pending)
		}
		if a.w.Mode == "calls" {
			what = fmt.Sprintf("calls: %d calls, %d messages", len(a.w.Calls), len(a.w.Msgs))
		}
		res.md("| %s | %.3f | %.2f | %s | %d |\n", name, a.wall, a.cpu, what, a.bytes)
	}
	row("first, whole run", first)
	row("again, whole run", again)
	row("1/10,000 at the end", zEnd)
	row("1/1,000,000 at the end", zCalls)
	row("1/10,000 in the middle", zMid)
	row("the last 1/100", zLast)
	row("1/1,000,000 at the end, once its messages are indexed", zMsgs)
	res.md("\nThe whole run complete (every block summarized, the page asking each second): %.1f s after the first request; the messages at the end of the run (the message index, started by the first window of single calls, reading every block in order): %.1f s after it; the view's CPU %.1f s in all; peak RSS of the view: %.0f MiB.\n",
		tWhole, tMsgs, cpuSeconds(c.Process.Pid), rss)
	res.raw["view_timeline"] = map[string]any{"events": opt.timelineEvents, "trace_bytes": size, "first_s": first.wall, "first_cpu_s": first.cpu,
		"again_s": again.wall, "zoom_end_s": zEnd.wall, "zoom_end_calls": len(zCalls.w.Calls), "zoom_calls_s": zCalls.wall, "zoom_mid_s": zMid.wall, "last_hundredth_s": zLast.wall,
		"whole_s": tWhole, "first_pending": first.w.Pending, "first_bytes": first.bytes, "zoom_end_bytes": zEnd.bytes, "peak_rss_mib": rss, "msgs_s": tMsgs, "zoom_end_msgs": len(zMsgs.w.Msgs)}
	return nil
}

// cpuSeconds is a process's user and system CPU time so far (0 if unknown).
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	k, _ := strconv.ParseFloat(f[12], 64)
	return (u + k) / 100 // clock ticks (USER_HZ: 100 on Linux)
}

// dirBytes is the size of the files under dir.
func dirBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	return n, err
}

// peakRSS is a running process's peak resident set (VmHWM) in MiB, 0 if
// unknown.
func peakRSS(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}
