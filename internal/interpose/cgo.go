//go:build mpiscope_openmpi || mpiscope_mpich

package interpose

/*
#cgo CFLAGS: -O2 -g -Wall -Wno-unused-function -Wno-unused-variable -Wno-deprecated-declarations
#include <stdlib.h>
#include "api.h"
*/
import "C"

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/mpiscope/mpiscope/internal/report"
	"github.com/mpiscope/mpiscope/internal/symbolize"
	"github.com/mpiscope/mpiscope/profile"
)

// Version is mpiscope's version, recorded in every profile.
const Version = "0.1.0"

func init() {
	// The application owns the cores, and the embedded runtime must not
	// wake while it runs (docs/performance.md, "A quiet guest"):
	//   - one P. A C thread that returns from a call into Go leaves its P
	//     in a system call; sysmon, the runtime's monitor thread, takes it
	//     back at its next tick when no other P is idle, then sleeps until
	//     a timer is due. With a second P idle it waits 10 ms before
	//     taking it back, waking every 20 µs to 10 ms meanwhile, on the
	//     rank's core, after every MPI_Init and MPI_Pcontrol. One P also
	//     means fewer threads.
	//   - the collector off between cold points (coldEnter, coldLeave):
	//     no collection, sweep or scavenge is ever left running when
	//     control goes back to the application, and sysmon forces no
	//     collection every two minutes.
	runtime.GOMAXPROCS(1)
	debug.SetGCPercent(-1)
}

// cold counts the cold points under way (MPI_Init, snapshots,
// MPI_Finalize): the collector runs while there is one; gcAlways keeps it
// on for good where a setting has Go work while the application runs (the
// trace writer, periodic snapshots).
var cold struct {
	sync.Mutex
	n        int
	gcAlways bool
}

// coldEnter turns the collector on for a cold point's work.
func coldEnter() {
	cold.Lock()
	defer cold.Unlock()
	if cold.n == 0 && !cold.gcAlways {
		debug.SetGCPercent(100)
	}
	cold.n++
}

// coldLeave ends a cold point. The last one leaves the runtime with
// nothing to do: a full collection, swept, and every free page given back
// (debug.FreeOSMemory), so that neither the collector nor the scavenger
// has work left, the collector off again, and the goroutines this made
// ready (the sweeper, the scavenger, finalizers) run now, inside the MPI
// call, not on another thread once the application has its core back.
func coldLeave() {
	cold.Lock()
	if cold.n--; cold.n > 0 {
		cold.Unlock()
		return
	}
	if !cold.gcAlways {
		debug.SetGCPercent(-1)
	}
	debug.FreeOSMemory()
	cold.Unlock()
	for i := 0; i < 4; i++ {
		runtime.Gosched()
	}
}

// keepGC keeps the collector on for the rest of the run.
func keepGC() {
	cold.Lock()
	defer cold.Unlock()
	if !cold.gcAlways {
		cold.gcAlways = true
		debug.SetGCPercent(100)
	}
}

// msgoIdle ends the cold point of the run's start (lifecycle.c calls it
// last in MPI_Init, after msgoStart and the safety set-up).
//
//export msgoIdle
func msgoIdle() { coldLeave() }

// msgoKeepGC: MPI_Pcontrol(6) started the trace writer.
//
//export msgoKeepGC
func msgoKeepGC() { keepGC() }

// state is the rank's run state, set at MPI_Init.
var state struct {
	sync.Mutex
	cfg      Config
	settings []profile.Setting
	warnings []string
	job      string
	rank     int
	size     int
	host     string
	command  []string
	mpiLib   string
	mpiVer   string
	flushes  int
	done     bool
	session  bool
	analyze  bool // MPISCOPE_ANALYZE on some rank, agreed at MPI_Init (pbInit)
}

// warn prints a warning once on rank 0 (unless quiet) and keeps it for the
// report.
func warn(msg string) {
	addWarning(msg)
	if state.rank == 0 && !state.cfg.Quiet {
		fmt.Fprintf(os.Stderr, "mpiscope: warning: %s\n", msg)
	}
}

//export msgoStart
func msgoStart(session C.int) C.int {
	coldEnter() // left in msgoIdle
	state.session = session != 0
	state.rank = int(C.ms_world_rank_get())
	state.size = int(C.ms_world_size_get())
	cfg, eff, warns := ParseConfig(os.Environ())
	state.cfg, state.settings = cfg, eff
	if cfg.Trace || cfg.SnapshotEvry > 0 {
		keepGC() // Go work while the application runs
	}
	for _, w := range warns {
		warn(w)
	}
	state.host, _ = os.Hostname()
	state.command = readCmdline()
	var lib [8192]C.char
	var major, minor C.int
	C.ms_mpi_version(&lib[0], C.int(len(lib)), &major, &minor)
	state.mpiLib = strings.TrimSpace(strings.SplitN(C.GoString(&lib[0]), "\n", 2)[0])
	state.mpiVer = fmt.Sprintf("%d.%d", major, minor)

	if state.session {
		state.job = sessionJobDir(cfg.Out, state.command, state.size)
		pbInit()                                    // piggyback.go: off in the sessions model
		pathInit(cfg)                               // call paths (callpath_cgo.go)
		return C.int(startFlags(cfg) | traceInit()) // traceInit: trace_cgo.go
	}
	// Rank 0 names and creates the job directory; everyone learns it.
	var buf [4096]byte
	if state.rank == 0 {
		want := cfg.Out
		if want == "" {
			app := "app"
			if len(state.command) > 0 {
				app = state.command[0]
			}
			if want = slurmJobDirName(app, state.size, os.Getenv); want == "" {
				want = jobDirName(app, state.size, time.Now())
			}
		}
		dir, w, err := createJobDir(want)
		if w != "" {
			warn(w)
		}
		if err != nil {
			warn(fmt.Sprintf("no job directory (%v): nothing will be written", err))
		}
		if abs, err := filepath.Abs(dir); err == nil && dir != "" {
			dir = abs
		}
		copy(buf[:len(buf)-1], dir)
	}
	C.ms_priv_bcast(unsafe.Pointer(&buf[0]), C.int(len(buf)), 0)
	state.job = C.GoString((*C.char)(unsafe.Pointer(&buf[0])))
	pbInit()                                    // the piggyback channel, decided by all ranks (piggyback.go)
	pathInit(cfg)                               // call paths (callpath_cgo.go)
	return C.int(startFlags(cfg) | traceInit()) // traceInit: trace_cgo.go
}

func startFlags(cfg Config) int {
	flags := 0
	if cfg.Enable {
		flags |= 1
	}
	if cfg.Timer != "clock" {
		flags |= 2
	}
	if cfg.PcontrolIPM {
		flags |= 4
	}
	if cfg.Quiet {
		flags |= 8
	}
	return flags
}

// sessionJobDir: in the sessions model ranks cannot agree on a name by
// communicating, so it is MPISCOPE_OUT, the Slurm job step's, or derived
// from the launcher's process (shared by the ranks of a node), and shared:
// every rank creates it if missing.
func sessionJobDir(out string, command []string, size int) string {
	if out == "" {
		app := "app"
		if len(command) > 0 {
			app = command[0]
		}
		if out = slurmJobDirName(app, size, os.Getenv); out == "" {
			out = fmt.Sprintf("mpiscope-%s-%dr-session-%d", appName(app), size, os.Getppid())
		}
	}
	if abs, err := filepath.Abs(out); err == nil {
		out = abs
	}
	if err := os.MkdirAll(out, 0o777); err != nil {
		warn(fmt.Sprintf("cannot create %s (%v)", out, err))
		return ""
	}
	return out
}

//export msgoSessionEnd
func msgoSessionEnd() {
	coldEnter()
	defer coldLeave()
	state.Lock()
	defer state.Unlock()
	defer recoverWarn("session finalize")
	traceFinish() // trace_cgo.go: each rank ends its own trace
	p := rankProfile("final")
	symbolizeSites(p)
	writeRank(p, "")
	if state.rank == 0 && state.cfg.Summary {
		fmt.Fprintf(os.Stderr, "mpiscope: sessions model: rank files in %s; merge them with: mpiscope report %s\n", state.job, state.job)
	}
}

// nsPerTick converts timer ticks to nanoseconds, calibrated over the run.
func nsPerTick() float64 {
	if C.ms_use_tsc_get() == 0 {
		return 1
	}
	for {
		var tk, ns C.uint64_t
		C.ms_clock_pair(&tk, &ns)
		dn := float64(uint64(ns) - uint64(C.ms_cal_ns0))
		dt := float64(uint64(tk) - uint64(C.ms_cal_tsc0))
		if dn >= 5e6 && dt > 0 {
			return dn / dt
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// collect reads this rank's C tables.
func collect(st string) *rawRank {
	r := &rawRank{
		Rank: state.rank, Size: state.size, Host: state.host, PID: os.Getpid(), State: st,
		NsPerTick: nsPerTick(),
		Hist:      map[[2]int]*rawBin{}, Peers: map[int]*rawPeer{}, Regions: map[int]*rawRegion{},
		CommPeers: map[[2]int]*rawPeer{},
		Events:    map[string]uint64{},
	}
	nf := int(C.ms_nfuncs_get())
	for i := 0; i < nf; i++ {
		r.FnNames = append(r.FnNames, C.GoString(C.ms_fn_name(C.int(i))))
		r.FnClasses = append(r.FnClasses, C.GoString(C.ms_fn_class(C.int(i))))
	}
	now := uint64(C.ms_ticks_now())
	end := uint64(C.ms_app_end)
	if end == 0 {
		end = now
	}
	r.AppTicks = end - uint64(C.ms_app_start)
	r.Dropped = traceDropped() // trace events lost (trace_cgo.go)
	nreg := int(C.ms_region_count())
	r.RegionPath = make([]string, nreg)
	parent := make([]int, nreg)
	for i := 1; i < nreg; i++ {
		r.RegionPath[i] = C.GoString(C.ms_region_path(C.int(i)))
		if p := int(C.ms_region_parent(C.int(i))); p > 0 && p < i {
			parent[i] = p // interned after its parent
		}
	}
	// A region's MPI time: the time of the sites recorded in it or in a
	// region nested in it (the site key holds the innermost region), so
	// the hot path keeps no running total for it.
	regMPI := make([]uint64, nreg)
	nev := int(C.ms_event_count())
	ncomm := int(C.ms_comm_count())
	commStats := make([]rawComm, ncomm)
	epoch := C.ms_epoch_now()
	type sk struct {
		fn     int
		pc     uint64
		region int
		comm   int
	}
	sites := map[sk]*rawSite{}
	paths := newPathColl() // call paths (callpath_cgo.go)
	// add counts one site record. Its key (ms_site_key, ms.h) also holds
	// its communicator and size bin: the size histogram and the
	// communicator totals are sums over the records.
	add := func(pc, key, calls, ticks, mn, mx uint64, bytes int64) {
		fn, region, comm, bin := int(key&0xffff), int(key>>16&0xffff), int(key>>32&0xffff)-1, int(key>>48&0xff)
		k := sk{fn, pc, region, comm}
		a := sites[k]
		if a == nil {
			a = &rawSite{Fn: k.fn, PC: k.pc, Region: k.region, Comm: comm, Min: ^uint64(0)}
			sites[k] = a
		}
		r.Calls += calls
		r.MPITicks += ticks
		for g := region; g > 0 && g < nreg; g = parent[g] {
			regMPI[g] += ticks
		}
		a.Calls += calls
		a.Ticks += ticks
		a.Bytes += bytes
		a.Min = min(a.Min, mn)
		a.Max = max(a.Max, mx)
		if bin != C.MS_NOBIN {
			h := entry(r.Hist, [2]int{fn, bin})
			h.Calls += calls
			h.Bytes += uint64(bytes)
			h.Ticks += ticks
		}
		if comm >= 0 && comm < ncomm {
			c := &commStats[comm]
			c.Calls += calls
			c.Ticks += ticks
			c.Bytes += uint64(bytes)
		}
	}
	for t := C.ms_threads_head(); t != nil; t = t.next {
		if t.epoch != epoch || t.nsites == 0 && t.pfn == 0 && t.rdepth == 0 {
			continue
		}
		r.Threads++
		r.Dropped += uint64(t.dropped)
		for _, s := range unsafe.Slice(t.sites, 1<<C.MS_SITE_BITS) {
			if s.calls != 0 {
				add(paths.site(t, uint64(s.pc), uint64(s.key), uint64(s.calls), uint64(s.ticks), uint64(s.min), uint64(s.max), int64(s.bytes)), uint64(s.key), uint64(s.calls), uint64(s.ticks), uint64(s.min), uint64(s.max), int64(s.bytes))
			}
		}
		// A call still deferred (ms_defer), counted as ms_flush will.
		if t.pfn != 0 {
			dt := uint64(t.pdt)
			k := uint64(C.ms_pending_key(t))
			add(paths.site(t, uint64(t.ppc), k, 1, dt, dt, dt, max(int64(t.pbytes), 0)), k, 1, dt, dt, dt, max(int64(t.pbytes), 0))
		}
		for w, p := range unsafe.Slice(t.peers, state.size) {
			if p.smsgs == 0 && p.rmsgs == 0 {
				continue
			}
			a := entry(r.Peers, w)
			a.SMsgs += uint64(p.smsgs)
			a.SBytes += uint64(p.sbytes)
			a.RMsgs += uint64(p.rmsgs)
			a.RBytes += uint64(p.rbytes)
		}
		for _, c := range unsafe.Slice(t.cpeers, 1<<C.MS_CPEER_BITS) {
			if c.key == 0 || c.s.smsgs == 0 && c.s.rmsgs == 0 {
				continue
			}
			a := entry(r.CommPeers, [2]int{int(uint64(c.key)>>32) - 1, int(uint32(c.key))})
			a.SMsgs += uint64(c.s.smsgs)
			a.SBytes += uint64(c.s.sbytes)
			a.RMsgs += uint64(c.s.rmsgs)
			a.RBytes += uint64(c.s.rbytes)
		}
		regs := unsafe.Slice(t.regions, C.MS_MAXREGIONS)
		for i := 1; i < nreg; i++ {
			g := regs[i]
			if g.visits == 0 {
				continue
			}
			a := r.Regions[i]
			if a == nil {
				a = &rawRegion{Path: r.RegionPath[i]}
				r.Regions[i] = a
			}
			a.Visits += uint64(g.visits)
			a.Ticks += uint64(g.ticks)
		}
		// Regions still open: count them up to now.
		for d := 0; d < int(t.rdepth) && d < C.MS_RDEPTH; d++ {
			id := int(t.rstack[d])
			if a := r.Regions[id]; a != nil {
				a.Ticks += end - uint64(t.rstart[d])
			}
		}
		evs := unsafe.Slice(t.events, C.MS_MAXEVENTS)
		for i := 0; i < nev; i++ {
			if evs[i] > 0 {
				r.Events[C.GoString(C.ms_event_text(C.int(i)))] += uint64(evs[i])
			}
		}
	}
	collectBusy(r, end, epoch, add) // calls in progress, time off (busy_cgo.go)
	for i, a := range r.Regions {
		if i > 0 && i < nreg {
			a.MPITick = regMPI[i]
		}
	}
	for _, s := range sites {
		r.Sites = append(r.Sites, *s)
	}
	paths.done(r)
	for i := 0; i < ncomm; i++ {
		m := C.ms_comm_meta_at(C.int(i))
		c := &commStats[i]
		c.Key = C.GoString(&m.key[0])
		c.Name = C.GoString(&m.name[0])
		c.Size = int(m.size)
		switch cr := int(m.creator); {
		case cr >= 0 && cr < nf:
			c.Creator = r.FnNames[cr]
		case cr == -2:
			c.Creator = "predefined"
		default:
			c.Creator = "unknown"
		}
		r.Comms = append(r.Comms, *c)
	}
	return r
}

func (r *rawRank) meta() profile.Meta {
	timer := "clock_gettime"
	if C.ms_use_tsc_get() != 0 {
		timer = "tsc"
	}
	settings := append([]profile.Setting(nil), state.settings...)
	settings = append(settings, chainSettings()...) // stacked tools (chain.go)
	settings = append(settings, qmpiSettings()...)  // QMPI mode (qmpi.go)
	for _, w := range warningsCopy() {
		settings = append(settings, profile.Setting{Name: "warning", Value: w})
	}
	start := int64(C.ms_real0)
	stop := start + int64(float64(uint64(C.ms_app_end)-uint64(C.ms_cal_tsc0))*r.NsPerTick)
	if C.ms_app_end == 0 {
		stop = time.Now().UnixNano()
	}
	return profile.Meta{
		Command: state.command, NumRanks: state.size, Hosts: []string{state.host},
		MPILibrary: state.mpiLib, MPIVersion: state.mpiVer, Family: family, Tool: Version,
		Timer: timer, StartNs: start, StopNs: stop, Settings: settings,
	}
}

// rankProfile builds this rank's profile from its tables.
func rankProfile(st string) *profile.Profile {
	raw := collect(st)
	maps, err := symbolize.ReadSelfMaps()
	resolve := func(pc uint64) (string, uint64, bool) {
		if err != nil {
			return "", 0, false
		}
		return symbolize.Resolve(maps, pc)
	}
	p := buildProfile(raw, raw.meta(), resolve)
	pbWaits(p, resolve) // wait states measured online (piggyback.go)
	compProfile(p)      // compensated figures (compensate.go)
	return p
}

// symbolizeSites fills function, file and line of every callsite.
func symbolizeSites(p *profile.Profile) {
	s := symbolize.New()
	for i := range p.Sites {
		l := &p.Sites[i].Loc
		if l.Module == "" || l.File != "" {
			continue
		}
		fn, file, line, err := s.LookupReturn(l.Module, l.Offset)
		if err == nil {
			l.Function, l.File, l.Line = fn, file, line
		}
	}
	symbolizeBusy(s, p)  // busy_cgo.go
	symbolizeWaits(s, p) // piggyback.go
	symbolizePaths(s, p) // callpath_cgo.go
}

type privComm struct{}

func (privComm) Rank() int { return state.rank }
func (privComm) Size() int { return state.size }
func (privComm) Send(dest int, data []byte) error {
	var p unsafe.Pointer
	if len(data) > 0 {
		p = C.CBytes(data)
		defer C.free(p)
	}
	if rc := C.ms_priv_send(p, C.int64_t(len(data)), C.int(dest)); rc != 0 {
		return fmt.Errorf("MPI error %d", int(rc))
	}
	return nil
}
func (privComm) Recv(src int) ([]byte, error) {
	var n C.int64_t
	p := C.ms_priv_recv(C.int(src), &n)
	if p == nil {
		return nil, fmt.Errorf("receive failed")
	}
	defer C.free(p)
	return C.GoBytes(p, C.int(n)), nil
}

//export msgoFinalize
func msgoFinalize() {
	coldEnter()
	defer coldLeave()
	state.Lock()
	defer state.Unlock()
	defer recoverWarn("finalize")
	traceFinish() // trace_cgo.go: last buffers, clock sample, final block
	pbFini()      // piggyback.go

	an := analyzeFinalize() // analyze.go: MPISCOPE_ANALYZE=1
	tm := newFinalizeTiming()
	local := rankProfile("final")
	tm.mark("local")
	tc := &timedComm{Comm: privComm{}}
	merged, err := treeReduce(tc, local)
	tm.reduce(tc)
	if err != nil {
		warn(fmt.Sprintf("merge failed on rank %d (%v): writing this rank's data alone", state.rank, err))
		writeRank(local, "")
		return
	}
	if state.rank != 0 || state.job == "" {
		return
	}
	merged.Analysis = an
	defer tm.print()
	symbolizeSites(merged)
	tm.mark("symbolize")
	path := state.job + "/profile.mps"
	if err := profile.WriteFile(path, merged); err != nil {
		warn(fmt.Sprintf("writing %s: %v", path, err))
		return
	}
	tm.mark("write")
	defer tm.mark("report")
	rpt := state.job + "/report.txt"
	if state.cfg.Report {
		var b bytes.Buffer
		if err := report.Write(&b, merged, report.Text, report.Options{Top: state.cfg.Top, Source: state.job}); err == nil {
			if err := os.WriteFile(rpt, b.Bytes(), 0o666); err != nil {
				warn(fmt.Sprintf("writing %s: %v", rpt, err))
			}
		}
		b.Reset()
		page := state.job + "/report.html"
		if err := report.WriteHTML(&b, merged, report.Options{Top: state.cfg.Top, Source: state.job}, nil); err == nil {
			if err := os.WriteFile(page, b.Bytes(), 0o666); err != nil {
				warn(fmt.Sprintf("writing %s: %v", page, err))
			}
		}
	} else {
		rpt = path
	}
	if state.cfg.Summary {
		fmt.Fprint(os.Stderr, report.Summary(merged, rpt))
	}
}

// finalizeTiming prints rank 0's finalize phases to stderr when
// MPISCOPE_DEBUG_TIMING=1 (for the benchmarks, bench/cmd/runbench).
type finalizeTiming struct {
	on     bool
	start  time.Time
	last   time.Time
	phases []string
}

func newFinalizeTiming() *finalizeTiming {
	t := time.Now()
	return &finalizeTiming{on: os.Getenv("MPISCOPE_DEBUG_TIMING") == "1", start: t, last: t}
}

func (t *finalizeTiming) mark(phase string) {
	if !t.on {
		return
	}
	now := time.Now()
	t.phases = append(t.phases, fmt.Sprintf("%s=%.3fms", phase, now.Sub(t.last).Seconds()*1e3))
	t.last = now
}

// reduce splits the tree reduction into time spent in Send/Recv (waiting
// for the other ranks, transfer) and the rest (decoding and merging).
func (t *finalizeTiming) reduce(c *timedComm) {
	if !t.on {
		return
	}
	d := time.Since(t.last)
	t.mark("reduce")
	t.phases = append(t.phases, fmt.Sprintf("reduce_comm=%.3fms reduce_merge=%.3fms reduce_recvs=%d",
		c.comm.Seconds()*1e3, (d-c.comm).Seconds()*1e3, c.recvs))
}

func (t *finalizeTiming) print() {
	if !t.on {
		return
	}
	fmt.Fprintf(os.Stderr, "mpiscope: finalize timing: ranks=%d %s total=%.3fms\n",
		state.size, strings.Join(t.phases, " "), time.Since(t.start).Seconds()*1e3)
	// How the hot path found datatype sizes (ms_tsize), for the benchmarks
	// and TestDatatypes.
	if off := C.ms_type_size_offset(); off != 0 {
		fmt.Fprintf(os.Stderr, "mpiscope: datatype sizes: read from the datatype objects (offset %d)\n", off)
	} else {
		fmt.Fprintf(os.Stderr, "mpiscope: datatype sizes: per-thread cache\n")
	}
}

// timedComm measures the time spent in communication.
type timedComm struct {
	Comm
	comm  time.Duration
	recvs int
}

func (c *timedComm) Send(dest int, data []byte) error {
	t := time.Now()
	err := c.Comm.Send(dest, data)
	c.comm += time.Since(t)
	return err
}

func (c *timedComm) Recv(src int) ([]byte, error) {
	t := time.Now()
	b, err := c.Comm.Recv(src)
	c.comm += time.Since(t)
	c.recvs++
	return b, err
}

// writeRank writes this rank's own file: in the job directory, or in a
// snapshot directory when dir is given.
func writeRank(p *profile.Profile, dir string) {
	if state.job == "" {
		return
	}
	if dir == "" {
		dir = state.job
	}
	path := profile.RankFile(dir, state.rank)
	if err := profile.WriteFile(path, p); err != nil && !state.cfg.Quiet {
		fmt.Fprintf(os.Stderr, "mpiscope: rank %d: writing %s: %v\n", state.rank, path, err)
	}
}

//export msgoFlush
func msgoFlush() {
	coldEnter()
	defer coldLeave()
	state.Lock()
	defer state.Unlock()
	defer recoverWarn("snapshot")
	traceFlush() // trace_cgo.go: trace buffers to disk too
	state.flushes++
	p := rankProfile("snapshot")
	symbolizeSites(p)
	p.Meta.Snapshot = state.flushes
	writeRank(p, profile.SnapshotDir(state.job, state.flushes))
}

// recoverWarn keeps a bug of ours from taking the application down: it
// turns recording off and warns once (internalError, safety.go).
func recoverWarn(where string) {
	if e := recover(); e != nil {
		internalError(where, e)
	}
}

func readCmdline() []string {
	b, err := os.ReadFile("/proc/self/cmdline")
	if err != nil {
		return os.Args
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}
