package mpitest_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/profile"
)

// markerLine returns the 1-based line of the source holding "@marker".
func markerLine(t *testing.T, src, marker string) int {
	t.Helper()
	f, err := os.Open(mpitest.Testdata(src))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if strings.Contains(sc.Text(), "@"+marker+" ") {
			return n
		}
	}
	t.Fatalf("%s: no marker @%s", src, marker)
	return 0
}

func TestPointToPoint(t *testing.T) { testPointToPoint(t, nil) }

// TestPointToPointClock runs the same program with timestamps from
// clock_gettime: every call takes its wrapper's slow path (ms_gate's
// MS_G_NOTSC bit), whose callsite is the return address the fast path hands
// it. The counts, bytes, peers and callsite lines must be the same.
func TestPointToPointClock(t *testing.T) {
	testPointToPoint(t, map[string]string{"MPISCOPE_TIMER": "clock"})
}

func testPointToPoint(t *testing.T, env map[string]string) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		prog := mpitest.Compile(t, f.MPICC, "p2p.c", t.TempDir())
		p, _, res := f.Profile(t, 4, env, prog)
		if !strings.Contains(res.Stdout, "p2p done on 4 ranks") {
			t.Errorf("program output changed: %q", res.Stdout)
		}
		if env["MPISCOPE_TIMER"] == "clock" && p.Meta.Timer != "clock_gettime" {
			t.Errorf("timer %q, want clock_gettime", p.Meta.Timer)
		}
		mpitest.Want(t, p, map[string][2]int64{
			"MPI_Send":         {4 * 1010, 4 * 8000},
			"MPI_Recv":         {4 * 1011, 4 * 8116},
			"MPI_Ssend":        {4 * 6, 4 * 72},
			"MPI_Sendrecv":     {4 * 100, 4 * 1600},
			"MPI_Isend":        {4 * 55, 4 * 220},
			"MPI_Irecv":        {4 * 50, 4 * 200},
			"MPI_Startall":     {4 * 20, 4 * 320},
			"MPI_Send_init":    {4, 0},
			"MPI_Recv_init":    {4, 0},
			"MPI_Waitall":      {4 * 70, 0},
			"MPI_Wait":         {4 * 5, 0},
			"MPI_Request_free": {4 * 2, 0},
			"MPI_Comm_rank":    {4, 0},
		})
		if len(p.Ranks) != 4 || p.Meta.NumRanks != 4 {
			t.Fatalf("ranks: %d of %d", len(p.Ranks), p.Meta.NumRanks)
		}
		for _, r := range p.Ranks {
			if r.AppNs <= 0 || r.MPINs <= 0 || r.MPINs > r.AppNs || r.State != "final" {
				t.Errorf("rank %+v", r)
			}
		}
		// Peers: each rank sends only to its right neighbour and hears
		// only from its left one (the 50 MPI_Irecv from MPI_ANY_SOURCE have
		// no known source when posted and are not in the matrix).
		if len(p.Peers) != 8 {
			t.Errorf("got %d peer entries, want 8: %+v", len(p.Peers), p.Peers)
		}
		for _, pe := range p.Peers {
			switch pe.Peer {
			case (pe.Rank + 1) % 4:
				if pe.SentMsgs != 1181 || pe.SentBytes != 10052 || pe.RecvMsgs != 0 {
					t.Errorf("rank %d -> %d: %+v", pe.Rank, pe.Peer, pe)
				}
			case (pe.Rank + 3) % 4:
				if pe.RecvMsgs != 1131 || pe.RecvBytes != 9876 || pe.SentMsgs != 0 {
					t.Errorf("rank %d <- %d: %+v", pe.Rank, pe.Peer, pe)
				}
			default:
				t.Errorf("unexpected peer entry %+v", pe)
			}
		}
		// The callsite of the even ranks' sends, at its exact line.
		even, odd := markerLine(t, "p2p.c", "send-even"), markerLine(t, "p2p.c", "send-odd")
		var found int
		for _, s := range p.Sites {
			if s.Func != "MPI_Send" || filepath.Base(s.Loc.File) != "p2p.c" {
				continue
			}
			switch s.Loc.Line {
			case even, odd:
				found++
				if s.Calls != 2000 || s.Bytes != 16000 || s.Loc.Function != "main" || s.RankTime.N != 2 {
					t.Errorf("site p2p.c:%d: %d calls, %d bytes, function %q, %d ranks", s.Loc.Line, s.Calls, s.Bytes, s.Loc.Function, s.RankTime.N)
				}
			}
		}
		if found != 2 {
			t.Errorf("found %d of the 2 MPI_Send callsites at p2p.c:%d and :%d; sites: %+v", found, even, odd, p.Sites)
		}
		// Message sizes: MPI_Send has 4000 messages in [8,16) and 40 of
		// size 0; MPI_Ssend, from one call site, 12 of 8 bytes and 12 of 16.
		hists := map[string]string{}
		for _, h := range p.Hists {
			var b []string
			for _, x := range h.Bins {
				b = append(b, fmt.Sprintf("%d:%d/%d", x.Log2, x.Calls, x.Bytes))
			}
			hists[h.Func] = strings.Join(b, " ")
		}
		if hists["MPI_Send"] != "0:40/0 4:4000/32000" || hists["MPI_Ssend"] != "4:12/96 5:12/192" {
			t.Errorf("histograms (log2:calls/bytes): MPI_Send %q, want \"0:40/0 4:4000/32000\"; MPI_Ssend %q, want \"4:12/96 5:12/192\"", hists["MPI_Send"], hists["MPI_Ssend"])
		}
		ssEven, ssOdd := markerLine(t, "p2p.c", "ssend-even"), markerLine(t, "p2p.c", "ssend-odd")
		var ssSites []string
		for _, s := range p.Sites {
			if s.Func == "MPI_Ssend" {
				ssSites = append(ssSites, fmt.Sprintf("%d:%d/%d", s.Loc.Line, s.Calls, s.Bytes))
			}
		}
		sort.Strings(ssSites)
		if want := fmt.Sprintf("%d:12/144 %d:12/144", min(ssEven, ssOdd), max(ssEven, ssOdd)); strings.Join(ssSites, " ") != want {
			t.Errorf("MPI_Ssend sites (line:calls/bytes) %q, want %q", ssSites, want)
		}
		// The duplicate communicator: 3 Ssend of 16 bytes and 3 Recv of
		// 16 bytes per rank, its MPI_Comm_dup and MPI_Comm_free not counted
		// as its traffic.
		var dup *profile.Comm
		for i, c := range p.Comms {
			if c.Creator == "MPI_Comm_dup" {
				dup = &p.Comms[i]
			}
		}
		if dup == nil || dup.Calls != 4*6 || dup.Bytes != 4*96 || dup.Members != 4 {
			t.Errorf("duplicate communicator %+v, want 24 calls and 384 bytes from 4 members; comms %+v", dup, p.Comms)
		}
	})
}

func TestCollectivesAndCommunicators(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		prog := mpitest.Compile(t, f.MPICC, "coll.c", t.TempDir())
		p, _, _ := f.Profile(t, 4, nil, prog)
		mpitest.Want(t, p, map[string][2]int64{
			"MPI_Bcast":      {400, 16000},
			"MPI_Allreduce":  {932, 6928},
			"MPI_Comm_rank":  {4, 0}, // not the calls inside the user's MPI_Op
			"MPI_Reduce":     {200, 4800},
			"MPI_Gather":     {40, 320},
			"MPI_Alltoall":   {40, 1280},
			"MPI_Allgatherv": {40, 400},
			"MPI_Alltoallv":  {40, 640},
			"MPI_Barrier":    {60, 0},
			"MPI_Comm_split": {4, 0},
			"MPI_Comm_dup":   {4, 0},
			"MPI_Comm_free":  {8, 0},
		})
		want := map[string][3]int64{ // key -> members, calls, bytes
			"Comm_split:2@0": {2, 60, 240},
			"Comm_split:2@1": {2, 60, 240},
			"Comm_dup:4@0":   {4, 40, 0},
		}
		for _, c := range p.Comms {
			if w, ok := want[c.Key]; ok {
				if c.Members != w[0] || c.Calls != w[1] || c.Bytes != w[2] {
					t.Errorf("communicator %s: members %d calls %d bytes %d, want %v", c.Key, c.Members, c.Calls, c.Bytes, w)
				}
				delete(want, c.Key)
			}
		}
		if len(want) != 0 {
			t.Errorf("communicators missing: %v (have %+v)", want, p.Comms)
		}
	})
}

func TestPcontrol(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		prog := mpitest.Compile(t, f.MPICC, "pcontrol.c", t.TempDir())
		p, job, res := f.Profile(t, 2, nil, prog)
		// Per rank: 3 exchanges (Irecv, Send, Wait of 8 bytes) and one
		// more Send and Recv; each exchange's Wait, and rank 0's Recv,
		// is the last call before a Pcontrol level or MPI_Finalize.
		mpitest.Want(t, p, map[string][2]int64{
			"MPI_Barrier":   {30, 0},
			"MPI_Allreduce": {100, 800},
			"MPI_Irecv":     {6, 48},
			"MPI_Send":      {8, 64},
			"MPI_Wait":      {6, 0},
			"MPI_Recv":      {2, 16},
		})
		regionCalls := map[string]int64{}
		for _, s := range p.Sites {
			regionCalls[s.Region] += s.Calls
		}
		if regionCalls["outer"] != 40 || regionCalls["outer/inner"] != 66 || regionCalls[""] != 48 {
			t.Errorf("calls by region: %v, want outer 40, outer/inner 66, none 48", regionCalls)
		}
		var regions []string
		for _, r := range p.Regions {
			regions = append(regions, r.Path)
			if r.Visits != 2 || r.Ranks != 2 || r.WallNs <= 0 || r.MPINs <= 0 || r.MPINs > r.WallNs {
				t.Errorf("region %+v", r)
			}
		}
		if strings.Join(regions, ",") != "outer,outer/inner" {
			t.Errorf("regions %v", regions)
		}
		// A region's MPI time is that of the calls made in it or in a
		// region nested in it: the sum over those sites, up to the
		// rounding of each value to ns (one per site and rank).
		for _, r := range p.Regions {
			var sum, n int64
			for _, s := range p.Sites {
				if s.Region == r.Path || strings.HasPrefix(s.Region, r.Path+"/") {
					sum += s.TimeNs
					n++
				}
			}
			if d := r.MPINs - sum; d < -2*(n+1) || d > 2*(n+1) {
				t.Errorf("region %s: MPI time %d ns, its %d sites' time %d ns", r.Path, r.MPINs, n, sum)
			}
		}
		if len(p.Events) != 1 || p.Events[0].Text != "tick" || p.Events[0].Count != 14 || p.Events[0].Ranks != 2 {
			t.Errorf("events %+v", p.Events)
		}
		if n := strings.Count(res.Stderr, "MPI_Pcontrol(42)"); n != 1 {
			t.Errorf("warning for level 42 printed %d times, want once:\n%s", n, res.Stderr)
		}
		// The flush snapshot holds what was recorded before it.
		snap, info, err := profile.Load(profile.SnapshotDir(job, 1))
		if err != nil {
			t.Fatal(err)
		}
		if len(info.Missing) != 0 || snap.Meta.Snapshot != 1 {
			t.Errorf("snapshot: missing %v, number %d", info.Missing, snap.Meta.Snapshot)
		}
		mpitest.Want(t, snap, map[string][2]int64{"MPI_Barrier": {20, 0}, "MPI_Allreduce": {100, 800},
			"MPI_Wait": {4, 0}, "MPI_Send": {6, 48}, "MPI_Recv": {2, 16}})

		// Starting with recording off: only what follows MPI_Pcontrol(1).
		off, _, _ := f.Profile(t, 2, map[string]string{"MPISCOPE_ENABLE": "0"}, prog)
		mpitest.Want(t, off, map[string][2]int64{"MPI_Barrier": {10, 0}, "MPI_Allreduce": {100, 800}, "MPI_Wait": {4, 0}})
	})
}

func TestPcontrolIPM(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		prog := mpitest.Compile(t, f.MPICC, "ipm.c", t.TempDir())
		p, _, _ := f.Profile(t, 2, map[string]string{"MPISCOPE_PCONTROL": "ipm"}, prog)
		byRegion := map[string]int64{}
		for _, s := range p.Sites {
			if s.Func == "MPI_Barrier" {
				byRegion[s.Region] += s.Calls
			}
		}
		if byRegion["phase1"] != 24 || byRegion[""] != 6 || len(p.Regions) != 1 || p.Regions[0].Visits != 2 {
			t.Errorf("barriers by region %v, regions %+v", byRegion, p.Regions)
		}
	})
}

// TestEightRanks: the tree merge over 8 ranks (3 rounds) keeps every count.
func TestEightRanks(t *testing.T) {
	f := mpitest.Get(t, "openmpi")
	prog := mpitest.Compile(t, f.MPICC, "p2p.c", t.TempDir())
	p, _, _ := f.Profile(t, 8, nil, prog)
	mpitest.Want(t, p, map[string][2]int64{"MPI_Send": {8 * 1010, 8 * 8000}, "MPI_Startall": {8 * 20, 8 * 320}})
	if len(p.Ranks) != 8 || len(p.Peers) != 16 {
		t.Errorf("%d ranks, %d peer entries", len(p.Ranks), len(p.Peers))
	}
}

func TestReset(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		prog := mpitest.Compile(t, f.MPICC, "reset.c", t.TempDir())
		p, _, _ := f.Profile(t, 2, nil, prog)
		mpitest.Want(t, p, map[string][2]int64{"MPI_Barrier": {0, 0}, "MPI_Bcast": {50, 200}})
		// The reset came inside 40 nested regions: the broadcasts are in
		// the 32nd, the deepest recorded, and nothing was lost.
		deepest := strings.TrimSuffix(strings.Repeat("r/", 32), "/")
		for _, s := range p.Sites {
			if s.Func == "MPI_Bcast" && s.Region != deepest {
				t.Errorf("MPI_Bcast site in region %q, want 32 levels of r", s.Region)
			}
		}
		for _, r := range p.Ranks {
			if r.Dropped != 0 {
				t.Errorf("rank %d dropped %d records", r.Rank, r.Dropped)
			}
		}
	})
}

func TestCxx(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		prog := mpitest.Compile(t, f.MPICXX, "cxx.cpp", t.TempDir())
		p, _, res := f.Profile(t, 2, nil, prog)
		mpitest.Want(t, p, map[string][2]int64{"MPI_Send": {100, 1600}, "MPI_Recv": {100, 1600}})
		if !strings.Contains(res.Stdout, "cxx got 1.5") {
			t.Errorf("output %q", res.Stdout)
		}
	})
}

// TestReportCommand reads a job directory back with the command, in JSON.
func TestReportCommand(t *testing.T) {
	f := mpitest.Get(t, "openmpi")
	bin := filepath.Join(mpitest.BuildDir(t), "bin", "mpiscope")
	if _, err := os.Stat(bin); err != nil {
		mpitest.Skip(t, "no %s: run make cli", bin)
	}
	prog := mpitest.Compile(t, f.MPICC, "p2p.c", t.TempDir())
	_, job, _ := f.Profile(t, 4, nil, prog)
	out, err := exec.Command(bin, "report", "-format", "json", job).Output()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Funcs []struct {
			Name  string `json:"name"`
			Calls int64  `json:"calls"`
			Bytes int64  `json:"bytes"`
		} `json:"funcs"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string][2]int64{}
	for _, fn := range doc.Funcs {
		got[fn.Name] = [2]int64{fn.Calls, fn.Bytes}
	}
	if got["MPI_Send"] != [2]int64{4040, 32000} || got["MPI_Recv"] != [2]int64{4044, 32464} {
		t.Errorf("json: MPI_Send %v, MPI_Recv %v", got["MPI_Send"], got["MPI_Recv"])
	}
	text, err := exec.Command(bin, "report", job).Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), "MPI_Send") || !strings.Contains(string(text), "p2p.c:") {
		t.Errorf("text report lacks MPI_Send or p2p.c callsites:\n%s", text)
	}
}

// TestLauncher runs the documented launcher prefix.
func TestLauncher(t *testing.T) {
	f := mpitest.Get(t, "openmpi")
	bin := filepath.Join(mpitest.BuildDir(t), "bin", "mpiscope")
	if _, err := os.Stat(bin); err != nil {
		mpitest.Skip(t, "no %s: run make cli", bin)
	}
	prog := mpitest.Compile(t, f.MPICXX, "cxx.cpp", t.TempDir())
	job := filepath.Join(t.TempDir(), "job")
	res := f.Exec(t, mpitest.Run{NP: 2, Env: map[string]string{"MPISCOPE_OUT": job}, Args: []string{bin, prog}})
	if res.Err != nil {
		t.Fatalf("%v\n%s", res.Err, res.Stderr)
	}
	p, _, err := profile.Load(job)
	if err != nil {
		t.Fatal(err)
	}
	mpitest.Want(t, p, map[string][2]int64{"MPI_Send": {100, 1600}})
	if !strings.Contains(res.Stderr, "mpiscope: report: ") {
		t.Errorf("no summary on stderr:\n%s", res.Stderr)
	}
}

// TestUnwritableOutput: a job directory that cannot be created gives a
// warning and a fallback location; the application runs on.
func TestUnwritableOutput(t *testing.T) {
	f := mpitest.Get(t, "openmpi")
	prog := mpitest.Compile(t, f.MPICC, "reset.c", t.TempDir())
	tmp := t.TempDir()
	res := f.Exec(t, mpitest.Run{NP: 2, Preload: f.Lib(), Args: []string{prog},
		Env: map[string]string{"MPISCOPE_OUT": "/proc/mpiscope-cannot/job", "TMPDIR": tmp, "MPISCOPE_SUMMARY": "0"}})
	if res.Err != nil {
		t.Fatalf("%v\n%s", res.Err, res.Stderr)
	}
	if n := strings.Count(res.Stderr, "cannot create /proc/mpiscope-cannot"); n != 1 {
		t.Errorf("want one warning, got %d:\n%s", n, res.Stderr)
	}
	p, _, err := profile.Load(filepath.Join(tmp, "job"))
	if err != nil {
		t.Fatal(err)
	}
	mpitest.Want(t, p, map[string][2]int64{"MPI_Bcast": {50, 200}})
}

// TestCorruptProfile: the command names the file and the offset, exit 1.
func TestCorruptProfile(t *testing.T) {
	bin := filepath.Join(mpitest.BuildDir(t), "bin", "mpiscope")
	if _, err := os.Stat(bin); err != nil {
		mpitest.Skip(t, "no %s: run make cli", bin)
	}
	p := &profile.Profile{Meta: profile.Meta{NumRanks: 1}, Funcs: []profile.Func{{Name: "MPI_Send", Calls: 1000, Bytes: 8000}}}
	data := profile.Marshal(p)
	path := filepath.Join(t.TempDir(), "bad.mps")
	if err := os.WriteFile(path, data[:len(data)/2], 0o666); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "report", path).CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v, output %s", err, out)
	}
	if !strings.Contains(string(out), "bad.mps") || !strings.Contains(string(out), "offset") || strings.Contains(string(out), "panic") {
		t.Errorf("message %q lacks file or offset", out)
	}
}

// TestSessions: a program using only the MPI-4 sessions model (MPICH
// declares it; Open MPI 4.1 does not) is profiled; each rank writes its own
// file at MPI_Session_finalize and the loader merges them.
func TestSessions(t *testing.T) {
	f := mpitest.Get(t, "mpich")
	prog := mpitest.Compile(t, f.MPICC, "session.c", t.TempDir())
	p, _, res := f.Profile(t, 2, nil, prog)
	if !strings.Contains(res.Stdout, "session got 2.5") {
		t.Errorf("output %q", res.Stdout)
	}
	mpitest.Want(t, p, map[string][2]int64{"MPI_Send": {40, 320}, "MPI_Recv": {40, 320}, "MPI_Comm_create_from_group": {2, 0}})
	if len(p.Ranks) != 2 || len(p.Peers) != 2 {
		t.Errorf("ranks %+v peers %+v", p.Ranks, p.Peers)
	}
}

// TestDatatypes checks the bytes of messages of derived datatypes (one made
// after another was freed, which may reuse its handle), of a pair type and
// of predefined ones: the datatype-size paths of the hot path (a cache per
// thread; MPICH's sizes read from its builtin handles).
func TestDatatypes(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		prog := mpitest.Compile(t, f.MPICC, "types.c", t.TempDir())
		p, _, res := f.Profile(t, 2, map[string]string{"MPISCOPE_DEBUG_TIMING": "1"}, prog)
		// On Open MPI the sizes come from the datatype objects, whose
		// size field the library finds at start; elsewhere from handles
		// and the per-thread cache.
		objects := strings.Contains(res.Stderr, "datatype sizes: read from the datatype objects")
		if objects != (f.Name == "openmpi") {
			t.Errorf("%s: datatype sizes read from the objects: %v; stderr:\n%s", f.Name, objects, res.Stderr)
		}
		var ld int64
		if _, err := fmt.Sscanf(strings.TrimSpace(res.Stdout), "types done, long double %d bytes", &ld); err != nil {
			t.Fatalf("program output %q: %v", res.Stdout, err)
		}
		want := map[int]string{} // line -> calls/bytes
		for m, bytes := range map[string]int64{"t3": 12, "t5": 20, "pair": 12, "vec": 16, "short": 8, "ld": 3 * ld} {
			want[markerLine(t, "types.c", m)] = fmt.Sprintf("3/%d", 3*bytes)
		}
		got := map[int]string{}
		for _, s := range p.Sites {
			if s.Func == "MPI_Send" && filepath.Base(s.Loc.File) == "types.c" {
				got[s.Loc.Line] = fmt.Sprintf("%d/%d", s.Calls, s.Bytes)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("MPI_Send sites (line: calls/bytes) %v, want %v", got, want)
		}
		mpitest.Want(t, p, map[string][2]int64{
			"MPI_Send": {18, 3 * (12 + 20 + 12 + 16 + 8 + 3*ld)},
			"MPI_Recv": {18, 3 * (12 + 20 + 12 + 16 + 8 + 3*ld)},
		})
	})
}
