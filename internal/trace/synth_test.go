package trace

import (
	"bytes"
	"compress/flate"
	"os"
	"path/filepath"
	"testing"
)

// synthRank writes a rank file as the runtime would: header, calibration
// (1 tick = 1 ns), world and self communicators, the events of thread 0
// in blocks of at most per events, syncs and the final block.
func synthRank(t testing.TB, job string, rank, size int, evs []Event, per int, syncs []Sync, final bool) string {
	t.Helper()
	return synthRankAs(t, job, rank, size, evs, per, syncs, final, BEvents)
}

// synthRankAs writes events as kind blocks: BEvents (compressed) or BRaw.
func synthRankAs(t testing.TB, job string, rank, size int, evs []Event, per int, syncs []Sync, final bool, kind byte) string {
	t.Helper()
	return synthRankComms(t, job, rank, size, evs, per, syncs, final, kind, nil)
}

// synthRankComms is synthRankAs with more communicators than world.
func synthRankComms(t testing.TB, job string, rank, size int, evs []Event, per int, syncs []Sync, final bool, kind byte, comms []CommDef) string {
	t.Helper()
	path := RankPath(job, rank)
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bw, _ := NewBlockWriter(f)
	bw.Block(BHeader, EncodeHeader(&Header{Rank: rank, Size: size, PID: 100 + rank, Host: "h", Family: "test",
		Tool: "0", Timer: "clock", RealNs: 1_700_000_000_000_000_500, FnNames: []string{"MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv", "MPI_Wait", "MPI_Barrier", "MPI_Allreduce"},
		FnClasses: []string{"p2p", "p2p", "p2p", "p2p", "wait", "coll", "coll"}}))
	bw.Block(BCalib, EncodeCalib(Calib{Tick0: 0, Ns0: 0, NsPerTick: 1}))
	world := make([]int, size)
	for i := range world {
		world[i] = i
	}
	bw.Block(BComm, EncodeComm(&CommDef{ID: 0, Key: "world", Size: size, World: world}))
	for i := range comms {
		bw.Block(BComm, EncodeComm(&comms[i]))
	}
	bw.Block(BRegion, EncodeName(1, "phase"))
	bw.Block(BText, EncodeName(0, "hello"))
	fw, _ := flate.NewWriter(nil, flate.BestSpeed)
	var scratch bytes.Buffer
	for len(evs) > 0 {
		n := min(per, len(evs))
		p, err := AppendEvents(nil, 1000+rank, evs[:n], fw, &scratch)
		if kind == BRaw {
			p = AppendRaw(nil, 1000+rank, evs[:n])
		}
		if err != nil {
			t.Fatal(err)
		}
		bw.Block(kind, p)
		evs = evs[n:]
	}
	for _, s := range syncs {
		bw.Block(BSync, EncodeSync(s))
	}
	if final {
		bw.Block(BFinal, EncodeFinal(Final{}))
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	return path
}

func call(fn uint16, t0, t1 uint64) Event {
	return Event{Kind: KCall, Fn: fn, Comm: 0, T0: t0, T1: t1, PC: 0x401000 + uint64(fn), SPeer: -1, STag: -1, RPeer: -1, RTag: -1}
}

func send(fn uint16, t0, t1 uint64, peer, tag int32, bytes int64) Event {
	e := call(fn, t0, t1)
	e.Flags = FSend
	e.SPeer, e.STag, e.SBytes = peer, tag, bytes
	return e
}

func recv(fn uint16, t0, t1 uint64, peer, tag int32, bytes int64) Event {
	e := call(fn, t0, t1)
	e.Flags = FRecv
	e.RPeer, e.RTag, e.RBytes = peer, tag, bytes
	return e
}

func coll(fn uint16, t0, t1 uint64, bytes int64) Event {
	e := call(fn, t0, t1)
	e.Flags = FColl
	e.SBytes = bytes
	return e
}

// synthJob is a 2-rank job: a blocking send 0->1, an Isend/Irecv pair
// completed by Wait, a barrier, an allreduce, a region and a marker.
func synthJob(t testing.TB) string {
	job := t.TempDir()
	is := send(2, 3000, 3100, 1, 7, 8)
	is.Flags |= FReq
	is.Req = 0xabc
	synthRank(t, job, 0, 2, []Event{
		{Kind: KEnter, Fn: 1, T0: 500, T1: 500},
		send(0, 1000, 2000, 1, 42, 300),
		is,
		{Kind: KComplete, Fn: 4, T0: 3300, T1: 3300, Req: 0xabc, SPeer: -1, STag: -1, RPeer: -1, RTag: -1},
		call(4, 3200, 3300),
		coll(5, 4000, 4100, 0),
		coll(6, 4200, 4300, 8),
		{Kind: KMark, Fn: 0, T0: 4400, T1: 4400},
		{Kind: KLeave, Fn: 1, T0: 4500, T1: 4500},
	}, 3, nil, true)
	ir := recv(3, 2900, 2950, -2, -1, 64)
	ir.Flags |= FReq
	ir.Req = 0x77
	synthRank(t, job, 1, 2, []Event{
		recv(1, 1001, 2500, 0, 42, 300),
		ir,
		{Kind: KComplete, Fn: 4, Flags: FRecv | FLocal, T0: 3400, T1: 3400, Req: 0x77, SPeer: -1, STag: -1, RPeer: 0, RTag: 7, RBytes: 8},
		call(4, 3000, 3400),
		coll(5, 4000, 4100, 0),
		coll(6, 4200, 4300, 8),
	}, 100, nil, true)
	return job
}
