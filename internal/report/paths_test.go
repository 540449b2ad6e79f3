package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/profile"
)

// pathsProfile: MPI_Allreduce in halo(), reached from solve (20 calls),
// precond (40) and output (10, in region r); MPI_Barrier in rec() with a
// path of one frame.
func pathsProfile() *profile.Profile {
	loc := func(off uint64, fn string, line int) profile.Loc {
		return profile.Loc{Module: "/bin/app", Offset: off, Function: fn, File: "/src/app.c", Line: line}
	}
	return &profile.Profile{
		Meta:  profile.Meta{NumRanks: 2},
		Ranks: []profile.Rank{{Rank: 0, AppNs: 100000, MPINs: 8000}, {Rank: 1, AppNs: 100000, MPINs: 8000}},
		Funcs: []profile.Func{{Name: "MPI_Allreduce", Calls: 70, TimeNs: 7000}, {Name: "MPI_Barrier", Calls: 6, TimeNs: 9000}},
		Sites: []profile.Site{{Func: "MPI_Allreduce", Loc: loc(0x10, "halo", 3), Calls: 70, TimeNs: 7000},
			{Func: "MPI_Barrier", Loc: loc(0x50, "rec", 30), Calls: 6, TimeNs: 9000}},
		Paths: []profile.Path{
			{Func: "MPI_Allreduce", Frames: []profile.Loc{loc(0x10, "halo", 3), loc(0x20, "solve", 9), loc(0x40, "main", 20)}, Calls: 20, TimeNs: 2000},
			{Func: "MPI_Allreduce", Frames: []profile.Loc{loc(0x10, "halo", 3), loc(0x30, "precond", 14), loc(0x44, "main", 21)}, Calls: 40, TimeNs: 4000},
			{Func: "MPI_Allreduce", Region: "r", Frames: []profile.Loc{loc(0x10, "halo", 3), loc(0x38, "output", 17)}, Calls: 10, TimeNs: 1000},
			{Func: "MPI_Barrier", Frames: []profile.Loc{loc(0x50, "rec", 30)}, Calls: 6, TimeNs: 9000},
		},
	}
}

func TestTextPaths(t *testing.T) {
	p := pathsProfile()
	var b strings.Builder
	textPaths(&b, p, Options{}, computeTotals(p))
	want := `@--- Top call paths (by time; times in us; the callsite first, then each caller) 
  1  MPI_Barrier  6 calls  9.000 us  56.25% MPI  0 bytes
     rec at app.c:30
  2  MPI_Allreduce  40 calls  4.000 us  25.00% MPI  0 bytes
     halo at app.c:3
       precond at app.c:14
         main at app.c:21
  3  MPI_Allreduce  20 calls  2.000 us  12.50% MPI  0 bytes
     halo at app.c:3
       solve at app.c:9
         main at app.c:20
  4  MPI_Allreduce  10 calls  1.000 us  6.25% MPI  0 bytes  region r
     halo at app.c:3
       output at app.c:17

@--- Callers (each MPI function in each function that calls it, by caller; times in us) 
Function       In    Called from          Calls   Time      %
MPI_Allreduce  halo  precond at app.c:14     40  4.000  57.14
MPI_Allreduce  halo  solve at app.c:9        20  2.000  28.57
MPI_Allreduce  halo  output at app.c:17      10  1.000  14.29
%: share of the time of that MPI function in the function in "In"
`
	if got := b.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	// Without paths, nothing.
	p.Paths = nil
	b.Reset()
	textPaths(&b, p, Options{}, computeTotals(p))
	if b.Len() != 0 {
		t.Errorf("no paths: %q", b.String())
	}
}

func TestJSONPaths(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, pathsProfile(), JSON, Options{}); err != nil {
		t.Fatal(err)
	}
	var d struct {
		CallPaths []struct {
			ID     int    `json:"id"`
			Func   string `json:"func"`
			Region string `json:"region"`
			Calls  int64  `json:"calls"`
			Frames []struct {
				Function string `json:"function"`
				Line     int    `json:"line"`
				Offset   uint64 `json:"offset"`
				Location string `json:"location"`
			} `json:"frames"`
		} `json:"call_paths"`
	}
	if err := json.Unmarshal(b.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.CallPaths) != 4 {
		t.Fatalf("%d call paths, want 4", len(d.CallPaths))
	}
	q := d.CallPaths[1]
	if q.ID != 2 || q.Func != "MPI_Allreduce" || q.Calls != 40 || len(q.Frames) != 3 || q.Frames[1].Function != "precond" ||
		q.Frames[1].Line != 14 || q.Frames[1].Offset != 0x30 || q.Frames[2].Location != "main at /src/app.c:21" {
		t.Errorf("path 2: %+v", q)
	}
	if d.CallPaths[3].Region != "r" {
		t.Errorf("path 4: %+v", d.CallPaths[3])
	}
}
