// Package interpose is mpiscope's in-process runtime.
//
// What runs where: the generated C wrappers (zwrap_<family>.c) and the
// hand-written ones (lifecycle.c) time every MPI call and update per-thread
// tables (ms.h, profile.h) without ever calling Go. The C runtime has one
// file per concern: core.c (gate word, clock, per-thread states), profile.c,
// trace.c, lifecycle.c (start, finalize, MPI_Pcontrol, sessions), regions.c,
// safety.c (signals, abort, exit), priv.c (our own MPI traffic) and
// fortran.c; api.h declares everything C and Go call across cgo, once. Go
// runs only at cold points:
// MPI_Init (configuration, job directory), MPI_Pcontrol(2) (snapshot),
// MPI_Finalize (read the tables, merge all ranks in a binomial tree over a
// private communicator, symbolize, write the profile and the report) and
// MPI_Abort. The cgo parts are built only with a family tag
// (mpiscope_openmpi or mpiscope_mpich); this file and the others without a
// tag are plain Go, tested without MPI.
package interpose

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/mpiscope/mpiscope/profile"
)

// rawSite is one (function, callsite, region) entry, summed over threads.
type rawSite struct {
	Fn     int
	PC     uint64
	Region int
	Comm   int // communicator id (index into rawRank.Comms), -1 none
	Calls  uint64
	Ticks  uint64
	Min    uint64
	Max    uint64
	Bytes  int64
}

type rawBin struct{ Calls, Bytes, Ticks uint64 }

type rawPeer struct{ SMsgs, SBytes, RMsgs, RBytes uint64 }

type rawComm struct {
	Key, Name, Creator string
	Size               int
	Calls, Ticks       uint64
	Bytes              uint64
}

type rawRegion struct {
	Path                   string
	Visits, Ticks, MPITick uint64
}

// rawRank is what the C tables hold for one rank, in ticks, before
// conversion to the profile model.
type rawRank struct {
	Rank, Size int
	Host       string
	PID        int
	NsPerTick  float64
	AppTicks   uint64
	MPITicks   uint64
	Calls      uint64
	Threads    int
	Dropped    uint64
	State      string
	FnNames    []string
	FnClasses  []string
	Sites      []rawSite
	Hist       map[[2]int]*rawBin // (fn, bin)
	Peers      map[int]*rawPeer
	CommPeers  map[[2]int]*rawPeer // (communicator id, world peer): communicators but MPI_COMM_WORLD
	Comms      []rawComm
	Regions    map[int]*rawRegion // region id
	RegionPath []string           // region id -> path
	Events     map[string]uint64
	Busy       []rawBusy // calls in progress (busy.go)
	OffTicks   uint64    // time with recording off
	Paths      []rawPath // call paths (callpath_build.go)
}

// resolver maps a return address to (module, offset).
type resolver func(pc uint64) (string, uint64, bool)

// buildProfile converts one rank's raw tables to a one-rank profile.
func buildProfile(r *rawRank, meta profile.Meta, resolve resolver) *profile.Profile {
	ns := func(t uint64) int64 { return int64(float64(t)*r.NsPerTick + 0.5) }
	p := &profile.Profile{Meta: meta}
	p.Ranks = []profile.Rank{{
		Rank: r.Rank, Host: r.Host, PID: r.PID, AppNs: ns(r.AppTicks), MPINs: ns(r.MPITicks),
		Calls: int64(r.Calls), Threads: r.Threads, State: r.State, Dropped: int64(r.Dropped),
	}}
	funcs := map[int]*profile.Func{}
	type skey struct {
		fn     int
		module string
		off    uint64
		region int
	}
	sites := map[skey]*profile.Site{}
	rankFuncs := map[[2]int]*profile.RankFunc{} // (fn, communicator id)
	// Beyond profile.SplitRanks ranks the split is kept per block of
	// ranks: entries of one block merge into one as the tree reduces.
	fb, pb := profile.SplitBlocks(r.Size)
	for _, s := range r.Sites {
		f := funcs[s.Fn]
		if f == nil {
			f = &profile.Func{Name: r.FnNames[s.Fn], Class: r.FnClasses[s.Fn], MinCallNs: -1}
			funcs[s.Fn] = f
		}
		accumulate(s, ns, &f.Calls, &f.TimeNs, &f.MinCallNs, &f.MaxCallNs, &f.Bytes)
		module, off, ok := resolve(s.PC)
		if !ok {
			module, off = "", s.PC
		}
		k := skey{s.Fn, module, off, s.Region}
		st := sites[k]
		if st == nil {
			st = &profile.Site{Func: f.Name, Loc: profile.Loc{Module: module, Offset: off}, MinNs: -1}
			if s.Region > 0 && s.Region < len(r.RegionPath) {
				st.Region = r.RegionPath[s.Region]
			}
			sites[k] = st
		}
		accumulate(s, ns, &st.Calls, &st.TimeNs, &st.MinNs, &st.MaxNs, &st.Bytes)
		// The rank's split by function and communicator, summed from the
		// same records as its Func entry, so that they add up to it.
		rf := rankFuncs[[2]int{s.Fn, s.Comm}]
		if rf == nil {
			rf = &profile.RankFunc{Rank: r.Rank / fb * fb, Func: f.Name}
			if s.Comm >= 0 && s.Comm < len(r.Comms) {
				rf.Comm = r.Comms[s.Comm].Key
			}
			rankFuncs[[2]int{s.Fn, s.Comm}] = rf
		}
		var mn, mx int64
		accumulate(s, ns, &rf.Calls, &rf.TimeNs, &mn, &mx, &rf.Bytes)
	}
	for _, rf := range rankFuncs {
		if rf.Calls != 0 {
			p.RankFuncs = append(p.RankFuncs, *rf)
			p.RankFuncBlock = fb
		}
	}
	for _, f := range funcs {
		if f.MinCallNs < 0 {
			f.MinCallNs = 0
		}
		f.RankTime = profile.SpreadOf(r.Rank, float64(f.TimeNs))
		p.Funcs = append(p.Funcs, *f)
	}
	for _, s := range sites {
		if s.MinNs < 0 {
			s.MinNs = 0
		}
		s.RankTime = profile.SpreadOf(r.Rank, float64(s.TimeNs))
		p.Sites = append(p.Sites, *s)
	}
	hists := map[int]*profile.Hist{}
	for k, b := range r.Hist {
		if b.Calls == 0 {
			continue
		}
		h := hists[k[0]]
		if h == nil {
			h = &profile.Hist{Func: r.FnNames[k[0]]}
			hists[k[0]] = h
		}
		h.Bins = append(h.Bins, profile.Bin{Log2: k[1], Calls: int64(b.Calls), Bytes: int64(b.Bytes), TimeNs: ns(b.Ticks)})
	}
	for _, h := range hists {
		sort.Slice(h.Bins, func(i, j int) bool { return h.Bins[i].Log2 < h.Bins[j].Log2 })
		p.Hists = append(p.Hists, *h)
	}
	for peer, v := range r.Peers {
		if v.SMsgs+v.RMsgs == 0 {
			continue
		}
		p.Peers = append(p.Peers, profile.Peer{Rank: r.Rank, Peer: peer, SentMsgs: int64(v.SMsgs),
			SentBytes: int64(v.SBytes), RecvMsgs: int64(v.RMsgs), RecvBytes: int64(v.RBytes)})
	}
	commPeers := map[[2]int]*profile.CommPeer{} // (communicator id, peer block)
	for k, v := range r.CommPeers {
		if v.SMsgs+v.RMsgs == 0 || k[0] < 0 || k[0] >= len(r.Comms) {
			continue
		}
		c := commPeers[[2]int{k[0], k[1] / pb * pb}]
		if c == nil {
			c = &profile.CommPeer{Rank: r.Rank / pb * pb, Comm: r.Comms[k[0]].Key, Peer: k[1] / pb * pb}
			commPeers[[2]int{k[0], k[1] / pb * pb}] = c
		}
		c.SentMsgs += int64(v.SMsgs)
		c.SentBytes += int64(v.SBytes)
		c.RecvMsgs += int64(v.RMsgs)
		c.RecvBytes += int64(v.RBytes)
	}
	for _, c := range commPeers {
		p.CommPeers = append(p.CommPeers, *c)
		p.CommPeerBlock = pb
	}
	for _, c := range r.Comms {
		if c.Calls == 0 {
			continue
		}
		p.Comms = append(p.Comms, profile.Comm{Key: c.Key, Name: c.Name, Size: c.Size, Creator: c.Creator,
			Members: 1, Calls: int64(c.Calls), TimeNs: ns(c.Ticks), Bytes: int64(c.Bytes)})
	}
	for _, g := range r.Regions {
		if g.Visits == 0 {
			continue
		}
		p.Regions = append(p.Regions, profile.Region{Path: g.Path, Visits: int64(g.Visits), WallNs: ns(g.Ticks),
			MPINs: ns(g.MPITick), Ranks: 1, RankMPI: profile.SpreadOf(r.Rank, float64(ns(g.MPITick)))})
	}
	for text, n := range r.Events {
		if n > 0 {
			p.Events = append(p.Events, profile.Event{Text: text, Count: int64(n), Ranks: 1})
		}
	}
	addBusy(p, r, ns, resolve)
	buildPaths(p, r, ns, resolve) // callpath_build.go
	p.Sort()
	return p
}

// entry returns m[k], adding a zero value first when it is missing.
func entry[K comparable, V any](m map[K]*V, k K) *V {
	v := m[k]
	if v == nil {
		v = new(V)
		m[k] = v
	}
	return v
}

// accumulate adds one site's counters to a function's or a site's totals
// (a min of -1 means none yet).
func accumulate(s rawSite, ns func(uint64) int64, calls, time, minNs, maxNs, bytes *int64) {
	*calls += int64(s.Calls)
	*time += ns(s.Ticks)
	if *minNs < 0 || ns(s.Min) < *minNs {
		*minNs = ns(s.Min)
	}
	*maxNs = max(*maxNs, ns(s.Max))
	if s.Bytes > 0 {
		*bytes += s.Bytes
	}
}

// Comm is the part of MPI the merge needs; the cgo side implements it over
// a private duplicate of MPI_COMM_WORLD, tests with goroutines.
type Comm interface {
	Rank() int
	Size() int
	Send(dest int, data []byte) error
	Recv(src int) ([]byte, error)
}

// treeReduce merges every rank's profile into rank 0's in a binomial tree:
// in round k, a rank with bit k set sends its partial merge to rank-2^k and
// stops; the others receive from rank+2^k. The root does log2(P) merges of
// partial results, so its time and memory grow with the number of distinct
// keys, not with ranks x keys. Non-root ranks return nil.
func treeReduce(c Comm, local *profile.Profile) (*profile.Profile, error) {
	rank, size := c.Rank(), c.Size()
	acc := local
	for mask := 1; mask < size; mask <<= 1 {
		if rank&mask != 0 {
			return nil, c.Send(rank-mask, profile.Marshal(acc))
		}
		if src := rank + mask; src < size {
			data, err := c.Recv(src)
			if err != nil {
				return nil, fmt.Errorf("receiving from rank %d: %w", src, err)
			}
			q, err := profile.Unmarshal(data, fmt.Sprintf("rank %d", src))
			if err != nil {
				return nil, err
			}
			acc.Merge(q)
		}
	}
	return acc, nil
}

// jobDirName is the default job directory name.
func jobDirName(app string, ranks int, t time.Time) string {
	return fmt.Sprintf("mpiscope-%s-%dr-%s", appName(app), ranks, t.UTC().Format("20060102-150405"))
}

// slurmJobDirName is the default job directory name inside a Slurm job
// step, mpiscope-<app>-<N>r-slurm<jobid>.<stepid> (.<stepid> only when
// SLURM_STEP_ID is set, as under srun), or "" outside Slurm. Every rank of
// a step reads the same two variables, so all agree on the name without
// communicating (the sessions model relies on it).
func slurmJobDirName(app string, ranks int, getenv func(string) string) string {
	digits := func(s string) bool {
		return s != "" && strings.Trim(s, "0123456789") == ""
	}
	job, step := getenv("SLURM_JOB_ID"), getenv("SLURM_STEP_ID")
	if !digits(job) {
		return ""
	}
	if digits(step) {
		job += "." + step
	}
	return fmt.Sprintf("mpiscope-%s-%dr-slurm%s", appName(app), ranks, job)
}

// appName is the program's name as it appears in directory names.
func appName(app string) string {
	app = filepath.Base(app)
	app = strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' || r < 32 {
			return '_'
		}
		return r
	}, app)
	if app == "" || app == "." {
		app = "app"
	}
	return app
}

// createJobDir makes a new job directory, never reusing an existing path
// (nor following a symlink there): on a clash it tries name-2, name-3, ...
// When the parent cannot be written it falls back to the temporary
// directory and says so.
func createJobDir(want string) (dir string, warn string, err error) {
	try := func(base string) (string, error) {
		for i := 1; i <= 1000; i++ {
			d := base
			if i > 1 {
				d = fmt.Sprintf("%s-%d", base, i)
			}
			err := os.Mkdir(d, 0o777)
			if err == nil {
				return d, nil
			}
			if !errors.Is(err, os.ErrExist) {
				return "", err
			}
		}
		return "", fmt.Errorf("%s: too many existing job directories", base)
	}
	if err := os.MkdirAll(filepath.Dir(want), 0o777); err == nil {
		if d, err := try(want); err == nil {
			return d, "", nil
		} else {
			warn = fmt.Sprintf("cannot create %s (%v)", want, err)
		}
	} else {
		warn = fmt.Sprintf("cannot create %s (%v)", filepath.Dir(want), err)
	}
	d, err := try(filepath.Join(os.TempDir(), filepath.Base(want)))
	if err != nil {
		return "", warn, err
	}
	return d, warn + "; writing to " + d + " instead", nil
}
