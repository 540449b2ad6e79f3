package report

import (
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/profile"
)

// TestCSVBusy: the calls in progress (profile.Busy, JSON in_progress) and
// the time with recording off (Rank.OffNs, JSON recording_off) are CSV
// tables too: in_progress.csv and recording_off.csv in the directory form,
// their cells in the long form, and pandas reads them with the numbers
// written.
func TestCSVBusy(t *testing.T) {
	dir := t.TempDir()
	if _, err := WriteCSVDir(dir, busyFixture(), Options{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"in_progress.csv": "rank,thread,func,module,offset,function,file,line,location,region,comm,peer,tag,elapsed_ns\n" +
			"0,7,MPI_Barrier,,0,main,/src/app.c,30,main at /src/app.c:30,,world,,,1000000000\n" +
			"1,8,MPI_Recv,,0,main,/src/app.c,25,main at /src/app.c:25,,world,-2,-1,2500000000\n",
		"recording_off.csv": "rank,off_ns\n0,2000000000\n",
	}
	for name, w := range want {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != w {
			t.Errorf("%s:\n%s\nwant:\n%s", name, b, w)
		}
	}

	// The long form: the same cells.
	recs, err := csv.NewReader(strings.NewReader(render(t, busyFixture(), CSV, Options{}))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	cells := map[string]string{}
	for _, r := range recs[1:] {
		cells[r[0]+"/"+r[1]+"/"+r[2]] = r[3]
	}
	for k, v := range map[string]string{
		"in_progress/1/func": "MPI_Barrier", "in_progress/1/peer": "", "in_progress/1/elapsed_ns": "1000000000",
		"in_progress/2/func": "MPI_Recv", "in_progress/2/peer": "-2", "in_progress/2/tag": "-1",
		"in_progress/2/thread": "8", "in_progress/2/line": "25", "in_progress/2/elapsed_ns": "2500000000",
		"recording_off/1/rank": "0", "recording_off/1/off_ns": "2000000000",
		"ranks/1/app_ns": "2000000000", // recorded time: 4 s less 2 s off
	} {
		if got, ok := cells[k]; !ok || got != v {
			t.Errorf("long form %s = %q (present %v), want %q", k, got, ok, v)
		}
	}
	if _, ok := cells["recording_off/2/rank"]; ok {
		t.Error("long form: recording_off has a row for rank 1, which had no time off")
	}

	// Without calls in progress or time off: the tables have their header
	// only.
	empty := t.TempDir()
	if _, err := WriteCSVDir(empty, &profile.Profile{}, Options{}); err != nil {
		t.Fatal(err)
	}
	for name, w := range want {
		b, err := os.ReadFile(filepath.Join(empty, name))
		if err != nil {
			t.Fatal(err)
		}
		if hdr := w[:strings.Index(w, "\n")+1]; string(b) != hdr {
			t.Errorf("empty %s = %q, want %q", name, b, hdr)
		}
	}

	// pandas: numbers as numbers, an absent peer as NaN.
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
print(len(b), int(b.elapsed_ns.sum()), b.func.tolist(), b.peer.isna().tolist(), int(b.peer.fillna(0).sum()), int(b.tag.fillna(0).sum()), int(b.line.sum()))
print(len(o), int(o.off_ns.sum()), o["rank"].tolist())
`
	out, err := exec.Command(python, "-c", script, filepath.Join(dir, "in_progress.csv"), filepath.Join(dir, "recording_off.csv")).CombinedOutput()
	if err != nil {
		t.Fatalf("pandas: %v\n%s", err, out)
	}
	if w := "2 3500000000 ['MPI_Barrier', 'MPI_Recv'] [True, False] -2 -1 55\n1 2000000000 [0]\n"; string(out) != w {
		t.Errorf("pandas read:\n%s\nwant:\n%s", out, w)
	}
}
