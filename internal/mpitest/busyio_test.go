package mpitest_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/internal/report"
	"github.com/mpiscope/mpiscope/profile"
)

// TestBusyFileIO: SIGUSR1 to every rank while ranks 1-2 wait in the
// collective MPI_File_write_at_all for rank 0, which sleeps before it
// joins (testdata/progs/blockedio.c). A blocking MPI-IO call publishes
// itself as a call in progress like a blocking receive: the snapshot
// names it on each waiting rank, at its callsite, with no communicator,
// peer or tag, blocked between blockedMin and blockedSleep, and counts it
// in the rank's MPI time; rank 0, asleep outside MPI, has none. The
// report's "In progress" section lists it.
func TestBusyFileIO(t *testing.T) {
	const np = 3
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		bin := mpitest.Compile(t, f.MPICC, "blockedio.c", dir)
		job := filepath.Join(dir, "job")
		r := start(t, f, np, true, jobEnv(job), bin, dir, itoaMs(blockedSleep))
		ps := pids(t, r, dir, np)
		time.Sleep(blockedWait)
		signal(t, ps, syscall.SIGUSR1)
		snap := profile.SnapshotDir(job, 1)
		for rank := 0; rank < np; rank++ {
			waitFor(t, r, profile.RankFile(snap, rank))
		}
		if code := r.wait(t); code != 0 {
			t.Fatalf("exit code %d\n%s", code, r.err.String())
		}
		if got := r.out.String(); got != "blockedio: 3 ranks, sum 123\n" {
			t.Errorf("output %q", got)
		}
		s, info, err := profile.Load(snap)
		if err != nil {
			t.Fatal(err)
		}
		if info.Ranks != np {
			t.Fatalf("snapshot: %+v", info)
		}
		line := markerLine(t, "blockedio.c", "write")
		busy := map[int]profile.Call{}
		for _, c := range s.Busy {
			busy[c.Rank] = c
		}
		if len(s.Busy) != np-1 {
			t.Errorf("snapshot: %d calls in progress, want %d: %+v", len(s.Busy), np-1, s.Busy)
		}
		for _, rk := range s.Ranks {
			c, ok := busy[rk.Rank]
			if rk.Rank == 0 {
				if ok {
					t.Errorf("rank 0 (sleeping outside MPI): call in progress %+v", c)
				}
				continue
			}
			if !ok {
				t.Errorf("rank %d: no call in progress (MPI time %v)", rk.Rank, time.Duration(rk.MPINs))
				continue
			}
			if c.Func != "MPI_File_write_at_all" || filepath.Base(c.Loc.File) != "blockedio.c" || c.Loc.Line != line ||
				c.Comm != "" || c.Peer != profile.PeerNone || c.Tag != profile.TagNone {
				t.Errorf("rank %d: in progress %s at %s:%d on %q, peer %d, tag %d; want MPI_File_write_at_all at blockedio.c:%d, no communicator, peer or tag",
					rk.Rank, c.Func, c.Loc.File, c.Loc.Line, c.Comm, c.Peer, c.Tag, line)
			}
			if c.ElapsedNs < int64(blockedMin) || c.ElapsedNs >= int64(blockedSleep) {
				t.Errorf("rank %d: blocked for %v, want [%v, %v)", rk.Rank, time.Duration(c.ElapsedNs), blockedMin, blockedSleep)
			}
			if rk.MPINs < c.ElapsedNs {
				t.Errorf("rank %d: MPI time %v, want at least the %v blocked", rk.Rank, time.Duration(rk.MPINs), time.Duration(c.ElapsedNs))
			}
		}
		var b bytes.Buffer
		if err := report.Write(&b, s, report.Text, report.Options{}); err != nil {
			t.Fatal(err)
		}
		txt := b.String()
		if i := strings.Index(txt, "@--- In progress"); i < 0 || !strings.Contains(txt[i:], "MPI_File_write_at_all") {
			t.Errorf("report: MPI_File_write_at_all not in progress:\n%s", txt)
		}
		p, info, err := profile.Load(job)
		if err != nil || info.Source != "final" {
			t.Fatalf("final: %v %+v", err, info)
		}
		if len(p.Busy) != 0 {
			t.Errorf("final profile: calls in progress %+v", p.Busy)
		}
		mpitest.Want(t, p, map[string][2]int64{"MPI_File_write_at_all": {np, np * 4}})
	})
}
