// Command synth writes synthetic one-rank profiles as a job directory in the
// documented layout (profile.RankFile: dir/ranks/<rank/1000>/r<rank>.mps),
// for timing `mpiscope report` on jobs far larger than this machine can run.
//
// Usage:
//
//	go run ./bench/cmd/synth -ranks 100000 -o build/bench/synth-100000
//
// Each rank's profile has realistic counts for an SPMD stencil code: 40 MPI
// functions, 150 call sites (the same 150 on every rank, as in one
// executable; 1 in 5 inside a Pcontrol region), log2 size histograms for the
// functions that move data, 16 point-to-point peers (a 3-D 7-point stencil
// plus diagonals, wrapping), 3 communicators (world, self, a split
// communicator of 64 ranks), 2 regions and 1 user event. Values are drawn
// from a generator seeded by the rank, so the output is reproducible. A
// stamp file (synth.txt) records the parameters; when it matches, the
// directory is left as it is.
//
// With -trace-events N it writes instead a job trace of about N events
// (internal/trace.WriteSynth: a ring halo exchange with MPI_Waitall and an
// MPI_Allreduce per iteration, imbalanced), for timing `mpiscope convert`
// and `mpiscope analyze`:
//
//	go run ./bench/cmd/synth -ranks 8 -trace-events 10000000 -o build/bench/trace-1e7
//
// in the current trace format version, or with -trace-version 5 in
// version 5 (the same events, for an mpiscope that reads only up to 5).
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mpiscope/mpiscope/internal/trace"
	"github.com/mpiscope/mpiscope/profile"
)

// synthTrace writes a synthetic job trace (stamped as the profiles are,
// the stamp naming the format version) in format version ver (0: the
// current one).
func synthTrace(out string, ranks int, events uint64, ver int) error {
	if out == "" || ranks < 2 {
		return fmt.Errorf("usage: synth -ranks N (at least 2) -trace-events E [-trace-version V] -o dir")
	}
	if ver == 0 {
		ver = trace.Version
	}
	stamp := filepath.Join(out, "synth.txt")
	want := fmt.Sprintf("synth trace v1 format=%d ranks=%d events=%d\n", ver, ranks, events)
	if b, err := os.ReadFile(stamp); err == nil && string(b) == want {
		fmt.Fprintf(os.Stderr, "synth: %s is up to date\n", out)
		return nil
	}
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	t0 := time.Now()
	if err := trace.WriteSynth(out, trace.SynthSpec{Ranks: ranks, Events: events, Seed: 1, Version: ver}); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "synth: wrote a trace of about %d events on %d ranks to %s in %.1fs\n", events, ranks, out, time.Since(t0).Seconds())
	return os.WriteFile(stamp, []byte(want), 0o666)
}

const (
	nFuncs = 40
	nSites = 150
	nPeers = 16
)

var funcNames = [nFuncs]struct{ name, class string }{
	{"MPI_Allgather", "coll"}, {"MPI_Allgatherv", "coll"}, {"MPI_Allreduce", "coll"}, {"MPI_Alltoall", "coll"},
	{"MPI_Alltoallv", "coll"}, {"MPI_Barrier", "coll"}, {"MPI_Bcast", "coll"}, {"MPI_Cart_create", "topo"},
	{"MPI_Cart_shift", "topo"}, {"MPI_Comm_dup", "comm"}, {"MPI_Comm_free", "comm"}, {"MPI_Comm_rank", "comm"},
	{"MPI_Comm_size", "comm"}, {"MPI_Comm_split", "comm"}, {"MPI_Gather", "coll"}, {"MPI_Gatherv", "coll"},
	{"MPI_Iallreduce", "coll"}, {"MPI_Ibcast", "coll"}, {"MPI_Iprobe", "p2p"}, {"MPI_Irecv", "p2p"},
	{"MPI_Isend", "p2p"}, {"MPI_Probe", "p2p"}, {"MPI_Recv", "p2p"}, {"MPI_Reduce", "coll"},
	{"MPI_Reduce_scatter", "coll"}, {"MPI_Scan", "coll"}, {"MPI_Scatter", "coll"}, {"MPI_Scatterv", "coll"},
	{"MPI_Send", "p2p"}, {"MPI_Sendrecv", "p2p"}, {"MPI_Ssend", "p2p"}, {"MPI_Test", "wait"},
	{"MPI_Testall", "wait"}, {"MPI_Type_commit", "type"}, {"MPI_Type_free", "type"}, {"MPI_Type_vector", "type"},
	{"MPI_Wait", "wait"}, {"MPI_Waitall", "wait"}, {"MPI_Waitany", "wait"}, {"MPI_Wtime", "other"},
}

// moves reports whether the function's class moves counted data.
func moves(class string) bool { return class == "p2p" || class == "coll" }

// rankProfile builds rank r's profile in a job of n ranks.
func rankProfile(r, n int) *profile.Profile {
	rng := rand.New(rand.NewPCG(uint64(r), 0x6d7069736370))
	start := int64(1_790_000_000_000_000_000)
	appNs := int64(600e9) + rng.Int64N(int64(5e9))
	p := &profile.Profile{Meta: profile.Meta{
		Command: []string{"./stencil3d", "-n", "2048", "-steps", "1000"}, NumRanks: n,
		Hosts:      []string{fmt.Sprintf("node%05d", r/64)},
		MPILibrary: "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022",
		MPIVersion: "3.1", Family: "openmpi", Tool: "0.1.0", Timer: "tsc",
		StartNs: start, StopNs: start + appNs,
		Settings: []profile.Setting{{Name: "MPISCOPE_OUT", Value: "/scratch/run42/mpiscope-stencil3d"}},
	}}
	var mpiNs, calls int64
	funcs := make([]profile.Func, nFuncs)
	for i, f := range funcNames {
		funcs[i] = profile.Func{Name: f.name, Class: f.class, MinCallNs: -1}
	}
	// Sites: the same 150 (function, offset) pairs on every rank.
	for i := 0; i < nSites; i++ {
		fi := (i * 7) % nFuncs
		f := &funcs[fi]
		c := 1 + rng.Int64N(20000)
		t := c * (200 + rng.Int64N(5000))
		mn, mx := 100+rng.Int64N(100), 10000+rng.Int64N(1_000_000)
		var b int64
		if moves(f.Class) {
			b = c * (8 << rng.IntN(12))
		}
		region := ""
		if i%5 == 0 {
			region = "timestep/halo"
		}
		p.Sites = append(p.Sites, profile.Site{
			Func: f.Name,
			Loc: profile.Loc{Module: "/home/user/stencil3d/bin/stencil3d", Offset: 0x401000 + uint64(i)*0x93,
				Function: fmt.Sprintf("solver_phase_%d", i/10), File: "/home/user/stencil3d/src/solver.c", Line: 100 + 7*i},
			Region: region, Calls: c, TimeNs: t, MinNs: mn, MaxNs: mx, Bytes: b,
			RankTime: profile.SpreadOf(r, float64(t)),
		})
		f.Calls += c
		f.TimeNs += t
		f.Bytes += b
		if f.MinCallNs < 0 || mn < f.MinCallNs {
			f.MinCallNs = mn
		}
		f.MaxCallNs = max(f.MaxCallNs, mx)
		mpiNs += t
		calls += c
	}
	for i := range funcs {
		f := &funcs[i]
		if f.MinCallNs < 0 {
			f.MinCallNs = 0
		}
		f.RankTime = profile.SpreadOf(r, float64(f.TimeNs))
		if f.Calls == 0 {
			continue
		}
		p.Funcs = append(p.Funcs, *f)
		if f.Bytes > 0 {
			h := profile.Hist{Func: f.Name}
			for b := 3 + rng.IntN(4); b < 16; b += 1 + rng.IntN(4) {
				h.Bins = append(h.Bins, profile.Bin{Log2: b, Calls: 1 + rng.Int64N(1000), Bytes: rng.Int64N(1 << 30), TimeNs: rng.Int64N(1e9)})
			}
			p.Hists = append(p.Hists, h)
		}
	}
	p.Ranks = []profile.Rank{{Rank: r, Host: p.Meta.Hosts[0], PID: 10000 + r%50000, AppNs: appNs,
		MPINs: mpiNs, Calls: calls, Threads: 1, State: "final"}}
	// 16 peers: a 3-D stencil on a 64 x 64 x (n/4096) grid, faces and
	// some diagonals, wrapping.
	for _, d := range [nPeers]int{1, -1, 64, -64, 4096, -4096, 65, -65, 63, -63, 4097, -4097, 4160, -4160, 4032, -4032} {
		q := ((r+d)%n + n) % n
		m := 1 + rng.Int64N(5000)
		p.Peers = append(p.Peers, profile.Peer{Rank: r, Peer: q, SentMsgs: m, SentBytes: m * 8192,
			RecvMsgs: m, RecvBytes: m * 8192})
	}
	leader := r / 64 * 64
	split := fmt.Sprintf("Comm_split:64@%d", leader)
	// The per-rank split (RankFunc, CommPeer): collectives on world and
	// on the rank's row communicator, the rest on world; the traffic with
	// the neighbours of the same row also on the row communicator; in
	// blocks of ranks as the runtime writes them (profile.SplitBlocks).
	fb, pb := profile.SplitBlocks(n)
	p.RankFuncBlock, p.CommPeerBlock = fb, pb
	for _, f := range p.Funcs {
		if f.Class == "coll" {
			p.RankFuncs = append(p.RankFuncs, profile.RankFunc{Rank: r / fb * fb, Func: f.Name, Comm: "world", Calls: f.Calls / 2, TimeNs: f.TimeNs / 2, Bytes: f.Bytes / 2},
				profile.RankFunc{Rank: r / fb * fb, Func: f.Name, Comm: split, Calls: f.Calls - f.Calls/2, TimeNs: f.TimeNs - f.TimeNs/2, Bytes: f.Bytes - f.Bytes/2})
			continue
		}
		p.RankFuncs = append(p.RankFuncs, profile.RankFunc{Rank: r / fb * fb, Func: f.Name, Comm: "world", Calls: f.Calls, TimeNs: f.TimeNs, Bytes: f.Bytes})
	}
	for _, q := range p.Peers {
		if q.Peer/64 == r/64 && (q.Peer == r+1 || q.Peer == r-1) {
			p.CommPeers = append(p.CommPeers, profile.CommPeer{Rank: r / pb * pb, Comm: split, Peer: q.Peer / pb * pb, SentMsgs: q.SentMsgs / 2,
				SentBytes: q.SentBytes / 2, RecvMsgs: q.RecvMsgs / 2, RecvBytes: q.RecvBytes / 2})
		}
	}
	p.Comms = []profile.Comm{
		{Key: "world", Size: n, Creator: "predefined", Members: 1, Calls: rng.Int64N(1e5), TimeNs: rng.Int64N(1e10), Bytes: rng.Int64N(1e9)},
		{Key: fmt.Sprintf("self@%d", r), Size: 1, Creator: "predefined", Members: 1, Calls: rng.Int64N(10)},
		{Key: split, Size: 64, Creator: "MPI_Comm_split", Members: 1,
			Calls: rng.Int64N(1e4), TimeNs: rng.Int64N(1e9), Bytes: rng.Int64N(1e8)},
	}
	halo := rng.Int64N(int64(1e10))
	p.Regions = []profile.Region{
		{Path: "timestep", Visits: 1000, WallNs: appNs - 1e9, MPINs: mpiNs, Ranks: 1, RankMPI: profile.SpreadOf(r, float64(mpiNs))},
		{Path: "timestep/halo", Visits: 1000, WallNs: halo * 2, MPINs: halo, Ranks: 1, RankMPI: profile.SpreadOf(r, float64(halo))},
	}
	p.Events = []profile.Event{{Text: "checkpoint written", Count: 10, Ranks: 1}}
	p.Sort()
	return p
}

func main() {
	n := flag.Int("ranks", 100000, "number of rank profiles")
	out := flag.String("o", "", "job `directory` to write")
	events := flag.Uint64("trace-events", 0, "write a job trace of about this many `events` instead (-ranks ranks)")
	ver := flag.Int("trace-version", 0, "the trace's format `version`: 5, or 0 for the current one")
	flag.Parse()
	if *events > 0 {
		if err := synthTrace(*out, *n, *events, *ver); err != nil {
			fmt.Fprintln(os.Stderr, "synth:", err)
			os.Exit(1)
		}
		return
	}
	if *out == "" || *n < 1 {
		fmt.Fprintln(os.Stderr, "usage: synth -ranks N -o dir")
		os.Exit(2)
	}
	stamp := filepath.Join(*out, "synth.txt")
	want := fmt.Sprintf("synth v1 ranks=%d funcs=%d sites=%d peers=%d comms=3\n", *n, nFuncs, nSites, nPeers)
	if b, err := os.ReadFile(stamp); err == nil && string(b) == want {
		fmt.Fprintf(os.Stderr, "synth: %s is up to date\n", *out)
		return
	}
	if err := os.RemoveAll(*out); err != nil {
		fmt.Fprintln(os.Stderr, "synth:", err)
		os.Exit(1)
	}
	t0 := time.Now()
	var next, bytes atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	for w := 0; w < runtime.NumCPU(); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				r := int(next.Add(1) - 1)
				if r >= *n {
					return
				}
				path := profile.RankFile(*out, r)
				if r%1000 == 0 {
					if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
						select {
						case errs <- err:
						default:
						}
						return
					}
				}
				data := profile.Marshal(rankProfile(r, *n))
				bytes.Add(int64(len(data)))
				err := os.WriteFile(path, data, 0o666)
				if os.IsNotExist(err) {
					// The directory of this thousand is being made by another worker.
					os.MkdirAll(filepath.Dir(path), 0o777)
					err = os.WriteFile(path, data, 0o666)
				}
				if err != nil {
					select {
					case errs <- err:
					default:
					}
					return
				}
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errs:
		fmt.Fprintln(os.Stderr, "synth:", err)
		os.Exit(1)
	default:
	}
	if err := os.WriteFile(stamp, []byte(want), 0o666); err != nil {
		fmt.Fprintln(os.Stderr, "synth:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "synth: wrote %d rank profiles (%.1f MB) to %s in %.1fs\n",
		*n, float64(bytes.Load())/1e6, *out, time.Since(t0).Seconds())
}
