package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
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
