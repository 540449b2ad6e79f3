package trace

import (
	"bytes"
	"compress/flate"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
)

// SynthSpec describes a synthetic job trace (benchmarks of convert and
// analyze on traces larger than this machine can record).
type SynthSpec struct {
	Ranks  int
	Events uint64 // in all, about: whole iterations of 10 events per rank
	Seed   uint64
	// Version is the format version of the files: 0 or 6 the current
	// one (Version), 5 the one before dictionaries of shapes in events
	// blocks (to compare a reader of version 5 on the same events).
	Version int
}

// Function ids of the synthetic header.
const (
	synIrecv = iota
	synIsend
	synWaitall
	synAllreduce
	synBarrier
)

// WriteSynth writes a job trace as the runtime would (compressed event
// blocks of 30,000 events, a final block; format version s.Version)
// under dir/trace: each rank runs iterations of a ring halo exchange
// (MPI_Irecv from both neighbours, MPI_Isend to both, MPI_Waitall
// completing the four requests) and an MPI_Allreduce, 10 events, with a
// random compute time before each
// (imbalance: wait states in the Waitall and the Allreduce), and an
// MPI_Barrier every 100 iterations. Times are consistent across ranks (a
// receive completes after its send began, a collective ends after its
// last member entered). Ranks are written in parallel.
func WriteSynth(dir string, s SynthSpec) error {
	if s.Ranks < 2 {
		return fmt.Errorf("synthetic trace: want at least 2 ranks, got %d", s.Ranks)
	}
	switch s.Version {
	case 0:
		s.Version = Version
	case 5, Version:
	default:
		return fmt.Errorf("synthetic trace: format version %d not written (5 or %d)", s.Version, Version)
	}
	iters := int(s.Events / uint64(10*s.Ranks))
	if iters < 1 {
		iters = 1
	}
	// The schedule: per iteration and rank, the time it enters the
	// exchange and the collective; computed once for all ranks (the
	// collective's end is the same everywhere) by one pass that each rank
	// repeats with the same generator, so that no table grows with the
	// trace.
	var wg sync.WaitGroup
	errs := make([]error, s.Ranks)
	sem := make(chan struct{}, max(1, min(s.Ranks, 8)))
	for r := 0; r < s.Ranks; r++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(r int) {
			defer wg.Done()
			defer func() { <-sem }()
			errs[r] = writeSynthRank(dir, s, r, iters)
		}(r)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// synthSched replays the job's timing: every rank's generator is the same,
// so each rank computes every rank's compute times (cheap: two draws per
// rank and iteration) and keeps its own.
type synthSched struct {
	rng    *rand.Rand
	n      int
	t      uint64   // start of the iteration, ns
	a      []uint64 // exchange entry per rank
	w      []uint64 // waitall end per rank
	c      []uint64 // allreduce entry per rank
	cEnd   uint64
	barr   bool
	bEnd   uint64
	bEnter []uint64
}

func newSynthSched(s SynthSpec) *synthSched {
	return &synthSched{rng: rand.New(rand.NewPCG(s.Seed, 0x73796e7468)), n: s.Ranks, t: 1_000_000,
		a: make([]uint64, s.Ranks), w: make([]uint64, s.Ranks), c: make([]uint64, s.Ranks), bEnter: make([]uint64, s.Ranks)}
}

func (x *synthSched) next(it int) {
	for r := range x.a {
		x.a[r] = x.t + 2000 + x.rng.Uint64N(20000)
	}
	for r := range x.a {
		left, right := (r+x.n-1)%x.n, (r+1)%x.n
		x.w[r] = max(x.a[r]+4*300+200, x.a[left]+600, x.a[right]+600) + 500
	}
	var last uint64
	for r := range x.c {
		x.c[r] = x.w[r] + 1000 + x.rng.Uint64N(10000)
		last = max(last, x.c[r])
	}
	x.cEnd = last + 3000
	x.t = x.cEnd
	x.barr = it%100 == 99
	if x.barr {
		last = 0
		for r := range x.bEnter {
			x.bEnter[r] = x.t + 500 + x.rng.Uint64N(5000)
			last = max(last, x.bEnter[r])
		}
		x.bEnd = last + 2000
		x.t = x.bEnd
	}
}

func writeSynthRank(dir string, s SynthSpec, r, iters int) error {
	path := RankPath(dir, r)
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	bw, err := newBlockWriterVersion(f, s.Version)
	if err != nil {
		return err
	}
	appendEvents := AppendEvents
	if s.Version == 5 {
		appendEvents = appendEventsV5
	}
	bw.Block(BHeader, EncodeHeader(&Header{Rank: r, Size: s.Ranks, PID: 1000 + r, Host: "synth", Family: "synth",
		Tool: "synth", Timer: "clock", RealNs: 1_790_000_000_000_000_000,
		FnNames:   []string{"MPI_Irecv", "MPI_Isend", "MPI_Waitall", "MPI_Allreduce", "MPI_Barrier"},
		FnClasses: []string{"p2p", "p2p", "wait", "coll", "coll"}}))
	bw.Block(BCalib, EncodeCalib(Calib{Tick0: 0, Ns0: 0, NsPerTick: 1}))
	world := make([]int, s.Ranks)
	for i := range world {
		world[i] = i
	}
	bw.Block(BComm, EncodeComm(&CommDef{ID: 0, Key: "world", Size: s.Ranks, World: world}))
	fw, _ := flate.NewWriter(nil, flate.BestSpeed)
	var scratch bytes.Buffer
	const per = 30000
	evs := make([]Event, 0, per+16)
	var p []byte
	flush := func() error {
		var err error
		p, err = appendEvents(p[:0], 1000+r, evs, fw, &scratch)
		if err != nil {
			return err
		}
		bw.Block(BEvents, p)
		evs = evs[:0]
		return nil
	}
	left, right := int32((r+s.Ranks-1)%s.Ranks), int32((r+1)%s.Ranks)
	ev := func(fn uint16, t0, t1 uint64) Event {
		return Event{Kind: KCall, Fn: fn, T0: t0, T1: t1, PC: 0x401000 + 0x40*uint64(fn), SPeer: -1, STag: -1, RPeer: -1, RTag: -1}
	}
	x := newSynthSched(s)
	for it := 0; it < iters; it++ {
		x.next(it)
		t := x.a[r]
		reqs := [4]uint64{0x5000, 0x5100, 0x5200, 0x5300}
		for i, peer := range []int32{left, right} {
			e := ev(synIrecv, t, t+250)
			e.Flags, e.Req, e.RPeer, e.RTag, e.RBytes = FRecv|FReq, reqs[i], peer, 1, 4096
			evs = append(evs, e)
			t += 300
		}
		for i, peer := range []int32{left, right} {
			e := ev(synIsend, t, t+250)
			e.Flags, e.Req, e.SPeer, e.STag, e.SBytes = FSend|FReq, reqs[2+i], peer, 1, 4096
			evs = append(evs, e)
			t += 300
		}
		for i, peer := range []int32{left, right} {
			evs = append(evs, Event{Kind: KComplete, Fn: synWaitall, Flags: FRecv, T0: x.w[r], T1: x.w[r], Req: reqs[i],
				SPeer: -1, STag: -1, RPeer: peer, RTag: 1, RBytes: 4096})
		}
		for i := 2; i < 4; i++ {
			// A send's completion, as the recorder writes it: the send
			// flag, no status.
			evs = append(evs, Event{Kind: KComplete, Fn: synWaitall, Flags: FSend, T0: x.w[r], T1: x.w[r], Req: reqs[i], SPeer: -1, STag: -1, RPeer: -1, RTag: -1})
		}
		evs = append(evs, ev(synWaitall, t, x.w[r]))
		e := ev(synAllreduce, x.c[r], x.cEnd)
		e.Flags, e.SBytes = FColl, 8
		evs = append(evs, e)
		if x.barr {
			e := ev(synBarrier, x.bEnter[r], x.bEnd)
			e.Flags = FColl
			evs = append(evs, e)
		}
		if len(evs) >= per {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if len(evs) > 0 {
		if err := flush(); err != nil {
			return err
		}
	}
	bw.Block(BFinal, EncodeFinal(Final{}))
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Close()
}
