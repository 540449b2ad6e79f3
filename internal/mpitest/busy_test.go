package mpitest_test

// End-to-end tests of what a snapshot or a signal's rank file shows of a
// hung run (testdata/progs/blocked.c): each call in progress, counted up to
// the time of writing, named with its callsite, communicator, peer and tag
// (profile.Busy, the report's "In progress" section).

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/internal/report"
	"github.com/mpiscope/mpiscope/profile"
)

// blockedSleep is how long rank 0 of blocked.c sleeps before it sends:
// the others are blocked that long. The tests write their data after
// blockedWait, and accept blocked times between blockedMin and
// blockedSleep.
const (
	blockedSleep = 5 * time.Second
	blockedWait  = 1 * time.Second
	blockedMin   = 900 * time.Millisecond
	blockedNP    = 4
)

// wantBlocked checks the calls in progress of blocked.c's ranks in p (all
// ranks, or those present): rank 1 in MPI_Recv from rank 0 with tag 7 on
// MPI_COMM_WORLD, ranks 2 and 3 in MPI_Barrier on the duplicate, rank 0
// in none; and that each blocked rank's MPI time and the function's time
// count the call.
func wantBlocked(t *testing.T, p *profile.Profile) {
	t.Helper()
	recvLine, barrierLine := markerLine(t, "blocked.c", "recv"), markerLine(t, "blocked.c", "barrier")
	busy := map[int]profile.Call{}
	for _, c := range p.Busy {
		if _, dup := busy[c.Rank]; dup {
			t.Errorf("rank %d: more than one call in progress: %+v", c.Rank, p.Busy)
		}
		busy[c.Rank] = c
	}
	for _, r := range p.Ranks {
		c, ok := busy[r.Rank]
		if r.Rank == 0 {
			if ok {
				t.Errorf("rank 0 (sleeping outside MPI): call in progress %+v", c)
			}
			if r.MPINs >= int64(blockedMin) {
				t.Errorf("rank 0: MPI time %d ns, want well under %v", r.MPINs, blockedMin)
			}
			continue
		}
		if !ok {
			t.Errorf("rank %d: no call in progress (MPI time %d ns)", r.Rank, r.MPINs)
			continue
		}
		fn, line, comm, peer, tag := "MPI_Barrier", barrierLine, "Comm_dup:4@0", profile.PeerNone, profile.TagNone
		if r.Rank == 1 {
			fn, line, comm, peer, tag = "MPI_Recv", recvLine, "world", 0, 7
		}
		if c.Func != fn || filepath.Base(c.Loc.File) != "blocked.c" || c.Loc.Line != line || c.Comm != comm || c.Peer != peer || c.Tag != tag {
			t.Errorf("rank %d: in progress %s at %s:%d on %q, peer %d, tag %d; want %s at blocked.c:%d on %q, peer %d, tag %d",
				r.Rank, c.Func, c.Loc.File, c.Loc.Line, c.Comm, c.Peer, c.Tag, fn, line, comm, peer, tag)
		}
		if c.ElapsedNs < int64(blockedMin) || c.ElapsedNs >= int64(blockedSleep) {
			t.Errorf("rank %d: blocked for %v, want [%v, %v)", r.Rank, time.Duration(c.ElapsedNs), blockedMin, blockedSleep)
		}
		if r.MPINs < c.ElapsedNs || r.MPINs < int64(blockedMin) {
			t.Errorf("rank %d: MPI time %v, want at least the %v blocked", r.Rank, time.Duration(r.MPINs), time.Duration(c.ElapsedNs))
		}
		if r.Calls < 1 {
			t.Errorf("rank %d: %d calls", r.Rank, r.Calls)
		}
	}
	if _, ok := busy[1]; ok {
		if f := mpitest.Func(p, "MPI_Recv"); f.Calls != 1 || f.Bytes != 0 || f.TimeNs < int64(blockedMin) {
			t.Errorf("MPI_Recv: %d calls, %d bytes, %v; want 1 call (in progress), 0 bytes, at least %v", f.Calls, f.Bytes, time.Duration(f.TimeNs), blockedMin)
		}
	}
	// The report names them.
	var b bytes.Buffer
	if err := report.Write(&b, p, report.Text, report.Options{}); err != nil {
		t.Fatal(err)
	}
	txt := b.String()
	if i := strings.Index(txt, "@--- In progress"); i < 0 {
		t.Errorf("report: no In progress section:\n%s", txt)
	} else {
		sec := txt[i:]
		if j := strings.Index(sec[1:], "@---"); j >= 0 {
			sec = sec[:j+1]
		}
		for r, c := range busy {
			want := c.Func
			if !strings.Contains(sec, want) || !strings.Contains(sec, filepath.Base(c.Loc.File)+":") {
				t.Errorf("report: rank %d's %s missing from:\n%s", r, want, sec)
			}
		}
	}
	b.Reset()
	if err := report.Write(&b, p, report.JSON, report.Options{}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		InProgress []struct {
			Rank      int    `json:"rank"`
			Func      string `json:"func"`
			Location  string `json:"location"`
			Comm      string `json:"comm"`
			Peer      *int   `json:"peer"`
			Tag       *int   `json:"tag"`
			ElapsedNs int64  `json:"elapsed_ns"`
		} `json:"in_progress"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.InProgress) != len(busy) {
		t.Errorf("json: %d calls in progress, want %d", len(doc.InProgress), len(busy))
	}
	for _, c := range doc.InProgress {
		if c.Rank == 1 && (c.Func != "MPI_Recv" || c.Peer == nil || *c.Peer != 0 || c.Tag == nil || *c.Tag != 7 || c.Comm != "world") {
			t.Errorf("json: rank 1: %+v", c)
		}
		if c.Rank >= 2 && (c.Func != "MPI_Barrier" || c.Peer != nil || c.Tag != nil) {
			t.Errorf("json: rank %d: %+v", c.Rank, c)
		}
	}
}

// TestBusySnapshot: SIGUSR1 to every rank while ranks 1-3 are blocked in
// MPI_Recv and MPI_Barrier: the snapshot counts and names each call; the
// run then completes, and the final profile has nothing in progress.
func TestBusySnapshot(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		bin := mpitest.Compile(t, f.MPICC, "blocked.c", dir)
		job := filepath.Join(dir, "job")
		r := start(t, f, blockedNP, true, jobEnv(job), bin, dir, itoaMs(blockedSleep))
		ps := pids(t, r, dir, blockedNP)
		time.Sleep(blockedWait)
		signal(t, ps, syscall.SIGUSR1)
		snap := profile.SnapshotDir(job, 1)
		for rank := 0; rank < blockedNP; rank++ {
			waitFor(t, r, profile.RankFile(snap, rank))
		}
		if code := r.wait(t); code != 0 {
			t.Fatalf("exit code %d\n%s", code, r.err.String())
		}
		if got := r.out.String(); got != "blocked: 4 ranks, got 42\n" {
			t.Errorf("output %q", got)
		}
		s, info, err := profile.Load(snap)
		if err != nil {
			t.Fatal(err)
		}
		if info.Ranks != blockedNP {
			t.Fatalf("snapshot: %+v", info)
		}
		wantBlocked(t, s)
		wantCSV(t, snap, s) // csv_test.go
		if len(s.Busy) != blockedNP-1 {
			t.Errorf("snapshot: %d calls in progress, want %d", len(s.Busy), blockedNP-1)
		}
		p, info, err := profile.Load(job)
		if err != nil || info.Source != "final" {
			t.Fatalf("final: %v %+v", err, info)
		}
		if len(p.Busy) != 0 {
			t.Errorf("final profile: calls in progress %+v", p.Busy)
		}
		mpitest.Want(t, p, map[string][2]int64{"MPI_Recv": {1, 4}, "MPI_Send": {1, 4}, "MPI_Barrier": {2 * blockedNP, 0}})
	})
}

// TestBusyTerm: SIGTERM to mpirun while ranks 1-3 are blocked: each rank's
// file, and the partial profile merged from them, count and name the
// blocked calls.
func TestBusyTerm(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		bin := mpitest.Compile(t, f.MPICC, "blocked.c", dir)
		job := filepath.Join(dir, "job")
		r := start(t, f, blockedNP, true, jobEnv(job), bin, dir, itoaMs(blockedSleep))
		pids(t, r, dir, blockedNP)
		time.Sleep(blockedWait)
		r.cmd.Process.Signal(syscall.SIGTERM)
		r.wait(t)
		for rank := 0; rank < blockedNP; rank++ {
			rankFile(t, job, rank, "signal")
		}
		p, info, err := profile.Load(job)
		if err != nil {
			t.Fatal(err)
		}
		if !info.Partial || len(info.Missing) != 0 || info.Ranks != blockedNP {
			t.Errorf("load: %+v", info)
		}
		wantBlocked(t, p)
		wantCSV(t, job, p) // csv_test.go
		if len(p.Busy) != blockedNP-1 {
			t.Errorf("partial profile: %d calls in progress, want %d", len(p.Busy), blockedNP-1)
		}
	})
}

func itoaMs(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// TestOffTime: rank r turns recording off for 300 x (r + 1) ms
// (testdata/progs/offtime.c). Each rank's time off is in the profile
// (Rank.OffNs), the report's header gives the total, min and max, and the
// App time and MPI % of the report leave it out.
func TestOffTime(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		bin := mpitest.Compile(t, f.MPICC, "offtime.c", dir)
		const np = 2
		p, job, res := f.Profile(t, np, nil, bin)
		if res.Err != nil {
			t.Fatalf("%v\n%s", res.Err, res.Stderr)
		}
		mpitest.Want(t, p, map[string][2]int64{"MPI_Barrier": {2 * np, 0}})
		if len(p.Ranks) == np && p.Ranks[0].OffNs > 0 && p.Ranks[1].OffNs > 0 {
			wantCSV(t, job, p) // csv_test.go: a row per rank in recording_off.csv
		} else {
			t.Errorf("ranks %+v: want %d, each with time off", p.Ranks, np)
		}
		const ms = int64(time.Millisecond)
		var total int64
		for _, r := range p.Ranks {
			want := 300 * ms * int64(r.Rank+1)
			if r.OffNs < want || r.OffNs > want+250*ms {
				t.Errorf("rank %d: off for %v, want %v (+250 ms at most)", r.Rank, time.Duration(r.OffNs), time.Duration(want))
			}
			total += r.OffNs
		}
		var b bytes.Buffer
		if err := report.Write(&b, p, report.Text, report.Options{}); err != nil {
			t.Fatal(err)
		}
		txt := b.String()
		lo, hi := p.Ranks[0].OffNs, p.Ranks[1].OffNs
		line := "Recording off: " + human(total) + " over 2 of 2 ranks (min " + human(lo) + " on rank 0, max " + human(hi) + " on rank 1); not in App time or MPI%"
		if !strings.Contains(txt, line) {
			t.Errorf("report: no line %q in:\n%s", line, txt)
		}
		b.Reset()
		if err := report.Write(&b, p, report.JSON, report.Options{}); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Ranks []struct {
				Rank   int     `json:"rank"`
				AppNs  int64   `json:"app_ns"`
				MPINs  int64   `json:"mpi_ns"`
				MPIPct float64 `json:"mpi_pct"`
			} `json:"ranks"`
			Off struct {
				TotalNs int64 `json:"total_ns"`
				MinRank int   `json:"min_rank"`
				MaxRank int   `json:"max_rank"`
			} `json:"recording_off"`
		}
		if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Off.TotalNs != total || doc.Off.MinRank != 0 || doc.Off.MaxRank != 1 {
			t.Errorf("json recording_off: %+v, want total %d, min rank 0, max rank 1", doc.Off, total)
		}
		for i, r := range doc.Ranks {
			pr := p.Ranks[i]
			// Recorded: the last barrier (rank 0 waits ~300 ms there) and
			// 100 ms of sleep; the time off is not in the denominator.
			if r.AppNs != pr.AppNs-pr.OffNs || r.AppNs < 100*ms || r.AppNs > pr.AppNs-300*ms {
				t.Errorf("json rank %d: app_ns %d; profile AppNs %d, OffNs %d", r.Rank, r.AppNs, pr.AppNs, pr.OffNs)
			}
			if want := 100 * float64(r.MPINs) / float64(pr.AppNs-pr.OffNs); r.MPIPct < want-1e-3 || r.MPIPct > want+1e-3 {
				t.Errorf("json rank %d: mpi_pct %v, want %v (time off excluded)", r.Rank, r.MPIPct, want)
			}
		}
	})
}

// human formats a duration as the report does (internal/report, human).
func human(ns int64) string {
	switch {
	case ns >= 1e9:
		return strconv.FormatFloat(float64(ns)/1e9, 'f', 3, 64) + " s"
	case ns >= 1e6:
		return strconv.FormatFloat(float64(ns)/1e6, 'f', 3, 64) + " ms"
	}
	return strconv.FormatFloat(float64(ns)/1e3, 'f', 3, 64) + " us"
}
