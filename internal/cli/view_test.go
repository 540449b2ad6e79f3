package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mpiscope/mpiscope/profile"
)

func TestViewUsage(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"view"}, 2, "want a job directory"},
		{[]string{"view", dir, dir, dir}, 2, "want a job directory (and at most one more), got 3"},
		{[]string{"view", "-bogus", dir}, 2, "flag provided but not defined"},
		{[]string{"view", filepath.Join(dir, "nope")}, 1, "no such file or directory"},
		{[]string{"view", dir, filepath.Join(dir, "nope")}, 1, "nope: no such file or directory"},
		{[]string{"view", "-http", "256.1.1.1:0", dir}, 1, "view: listen tcp"},
	} {
		var out, errb bytes.Buffer
		if code := Run(c.args, &out, &errb); code != c.code || !strings.Contains(errb.String(), c.err) {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", c.args, code, errb.String(), c.code, c.err)
		}
	}
	var out bytes.Buffer
	if code := Run([]string{"help", "view"}, &out, io.Discard); code != 0 || !strings.Contains(out.String(), "-allow-remote") {
		t.Errorf("help view: %d %s", code, out.String())
	}
}

// TestViewServes: the command prints its URL (127.0.0.1, a free port),
// serves the page there and stops when asked.
func TestViewServes(t *testing.T) {
	dir := t.TempDir()
	p := &profile.Profile{Meta: profile.Meta{NumRanks: 1}, Ranks: []profile.Rank{{Rank: 0, AppNs: 5, MPINs: 1}},
		Funcs: []profile.Func{{Name: "MPI_Barrier", Calls: 7, TimeNs: 1}}}
	if err := profile.WriteFile(filepath.Join(dir, profile.FinalFile), p); err != nil {
		t.Fatal(err)
	}
	pr, pw, _ := os.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var errb bytes.Buffer
	go func() { done <- serveView(ctx, []string{dir, dir}, pw, &errb) }()
	buf := make([]byte, 4096)
	n, _ := pr.Read(buf)
	m := regexp.MustCompile(`at (http://127\.0\.0\.1:[0-9]+/) `).FindSubmatch(buf[:n])
	if m == nil {
		t.Fatalf("no URL in %q", buf[:n])
	}
	resp, err := http.Get(string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte(`data-v="7">7</td>`)) || !bytes.Contains(body, []byte(`<a href="/diff" id="diff-link">`)) {
		t.Errorf("page: %d %.300s", resp.StatusCode, body)
	}
	if resp, err = http.Get(string(m[1]) + "diff"); err != nil || resp.StatusCode != 200 {
		t.Errorf("diff page: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serveView: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("view did not stop")
	}
}
