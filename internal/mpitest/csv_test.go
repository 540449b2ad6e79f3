package mpitest_test

import (
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/profile"
)

// wantCSV checks the CSV tables of the calls in progress and of the time
// with recording off that `mpiscope report --format csv -o DIR path`
// writes for the profile p loaded from path: in_progress.csv has a row per
// call of p.Busy with its numbers, recording_off.csv a row per rank with
// time off, and pandas.read_csv (Debian's python3-pandas) reads both with
// the same numbers.
func wantCSV(t *testing.T, path string, p *profile.Profile) {
	t.Helper()
	bin := filepath.Join(mpitest.BuildDir(t), "bin", "mpiscope")
	dir := filepath.Join(t.TempDir(), "csv")
	if out, err := exec.Command(bin, "report", "--format", "csv", "-o", dir, path).CombinedOutput(); err != nil {
		t.Fatalf("mpiscope report --format csv -o: %v\n%s", err, out)
	}
	read := func(name string) [][]string {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		recs, err := csv.NewReader(f).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return recs
	}
	opt := func(v, none int) string {
		if v == none {
			return ""
		}
		return strconv.Itoa(v)
	}
	var want, got []string
	var elapsed int64
	for _, c := range p.Busy {
		want = append(want, fmt.Sprintf("%d %d %s %s %d %s %s %s %d", c.Rank, c.Thread, c.Func, filepath.Base(c.Loc.File), c.Loc.Line,
			c.Comm, opt(c.Peer, profile.PeerNone), opt(c.Tag, profile.TagNone), c.ElapsedNs))
		elapsed += c.ElapsedNs
	}
	recs := read("in_progress.csv")
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, r := range recs[1:] {
		got = append(got, fmt.Sprintf("%s %s %s %s %s %s %s %s %s", r[col["rank"]], r[col["thread"]], r[col["func"]],
			filepath.Base(r[col["file"]]), r[col["line"]], r[col["comm"]], r[col["peer"]], r[col["tag"]], r[col["elapsed_ns"]]))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("in_progress.csv rows:\n%s\nwant (profile.Busy):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	want, got = nil, nil
	var off int64
	for _, r := range p.Ranks {
		if r.OffNs > 0 {
			want = append(want, fmt.Sprintf("%d,%d", r.Rank, r.OffNs))
			off += r.OffNs
		}
	}
	recs = read("recording_off.csv")
	if strings.Join(recs[0], ",") != "rank,off_ns" {
		t.Errorf("recording_off.csv header %q", recs[0])
	}
	for _, r := range recs[1:] {
		got = append(got, strings.Join(r, ","))
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("recording_off.csv rows %q, want %q (Rank.OffNs)", got, want)
	}

	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		python = "python3"
	}
	if err := exec.Command(python, "-c", "import pandas").Run(); err != nil {
		mpitest.Skip(t, "python3 with pandas (Debian python3-pandas) not installed: %v", err)
	}
	script := `import sys, pandas
b = pandas.read_csv(sys.argv[1])
o = pandas.read_csv(sys.argv[2])
print(len(b), int(b.elapsed_ns.sum()), len(o), int(o.off_ns.sum()))
`
	out, err := exec.Command(python, "-c", script, filepath.Join(dir, "in_progress.csv"), filepath.Join(dir, "recording_off.csv")).CombinedOutput()
	if err != nil {
		t.Fatalf("pandas: %v\n%s", err, out)
	}
	if w := fmt.Sprintf("%d %d %d %d\n", len(p.Busy), elapsed, len(want), off); string(out) != w {
		t.Errorf("pandas read %q, want %q (calls in progress, their ns, ranks with time off, ns off)", out, w)
	}
}
