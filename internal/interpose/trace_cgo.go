//go:build mpiscope_openmpi || mpiscope_mpich

package interpose

/*
#include "api.h"
#include "callpath.h"
*/
import "C"

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/mpiscope/mpiscope/internal/symbolize"
	"github.com/mpiscope/mpiscope/internal/trace"
)

// The trace writer: one goroutine per rank, blocked in C (ms_trace_wait,
// a semaphore) until a thread queues a full buffer; it then writes every
// queued buffer to the rank's file (trace.RankPath) and gives it back.
// Application threads never call into Go for this: they push the buffer on
// a lock-free list and post the semaphore. Go is reached only at
// Pcontrol(6), Pcontrol(2) and finalize.
//
// Buffers are written raw (W blocks of 12- to 72-byte records, trace.h: a
// write, no encoding) and packed into compressed E blocks at MPI_Finalize,
// unless MPISCOPE_TRACE_COMPRESS=run asks the writer to compress as it goes.
//
// A rank that ends without MPI_Finalize (MPI_Abort, SIGTERM/SIGINT, exit)
// writes its buffers from the helper thread that writes its profile
// (traceEnd); the file is then left raw, without a final block.
//
// MPISCOPE_TRACE_MAX bounds the file: the writer refuses the buffer that
// would pass it and turns tracing off for the rest of the run (profiling
// goes on); MPISCOPE_TRACE_EXCLUDE leaves functions out (ms_trace_fn).

var tr struct {
	sync.Mutex
	open     atomic.Bool
	stop     atomic.Bool
	failed   bool
	synced   bool // clock sampled at MPI_Init
	path     string
	f        *os.File
	direct   *os.File // the same file opened O_DIRECT (nil: ordinary writes)
	dhead    []byte
	bw       *trace.BlockWriter
	done     chan struct{}
	fw       *flate.Writer
	scratch  bytes.Buffer
	head     []byte
	evs      []trace.Event
	comms    map[int]bool
	nregions int
	ntexts   int
	nfiles   int
	cal      trace.Calib
	written  uint64
	err      error
	closing  atomic.Bool // traceFinish or traceEnd has begun to close the file
	cut      bool        // MPISCOPE_TRACE_MAX reached: tracing is off for good
	cutEvs   uint64      // events of the buffers refused then
	syncs    []time.Duration
	pings    int
}

// Clock samples (ms_trace_sync): at least traceSyncRounds ping-pongs per
// rank, at most traceSyncMax; fewer than the most once the offset is known
// to within traceSyncGoodNs or stops getting better.
const (
	traceSyncRounds = 4
	traceSyncMax    = 24
	traceSyncGoodNs = 20000
)

// traceExcludeDefault is what MPISCOPE_TRACE_EXCLUDE=default leaves out of
// the trace: calls that move no data and only read local state (clocks,
// versions, the status of a call already made). Polled in a loop, they
// fill a trace with nothing a trace viewer shows; they are still profiled.
var traceExcludeDefault = []string{
	"MPI_Wtime", "MPI_Wtick", "MPI_Get_count", "MPI_Get_count_c", "MPI_Get_elements", "MPI_Get_elements_x",
	"MPI_Get_elements_c", "MPI_Get_processor_name", "MPI_Get_version", "MPI_Get_library_version",
	"MPI_Initialized", "MPI_Finalized", "MPI_Query_thread", "MPI_Is_thread_main",
}

// traceExclude marks the functions MPISCOPE_TRACE_EXCLUDE names (at
// MPI_Init, before tracing can start). A name this MPI library does not
// have warns once, unless it comes from the default list.
func traceExclude() {
	idx := map[string]int{}
	nf := int(C.ms_nfuncs_get())
	for i := 0; i < nf; i++ {
		idx[C.GoString(C.ms_fn_name(C.int(i)))] = i
	}
	var unknown []string
	for _, n := range state.cfg.TraceExclude {
		if n == "default" {
			for _, d := range traceExcludeDefault {
				if i, ok := idx[d]; ok {
					C.ms_trace_exclude(C.int(i))
				}
			}
			continue
		}
		if i, ok := idx[n]; ok {
			C.ms_trace_exclude(C.int(i))
		} else {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		warn(fmt.Sprintf("MPISCOPE_TRACE_EXCLUDE: %s: not a function of this MPI library, ignored", strings.Join(unknown, ", ")))
	}
}

// traceInit runs at MPI_Init (all ranks): with MPISCOPE_TRACE=1 it samples
// the clock against rank 0, opens the file and returns the start flag.
func traceInit() int {
	C.ms_trace_bufsize = C.size_t(state.cfg.TraceBuffer)
	C.ms_trace_skew = C.int64_t(int64(state.rank) * state.cfg.TraceSkewNs)
	traceExclude()
	if state.session && state.cfg.Trace {
		traceSessionWarn()
	}
	if !state.cfg.Trace {
		return 0
	}
	s, ok := traceSync()
	if !traceOpen() {
		return 0
	}
	tr.Lock()
	if ok {
		tr.synced = true
		tr.bw.Block(trace.BSync, trace.EncodeSync(s))
	}
	tr.bw.Flush() // the file is never empty: a rank killed later still has its header
	tr.Unlock()
	C.ms_trace_set(1)
	return 16
}

// traceSessionWarn says what a trace of the sessions model lacks.
func traceSessionWarn() {
	warn("sessions model: trace clocks are not synchronized (there is no MPI_COMM_WORLD for the clock ping-pong): " +
		"ranks on one host share its clock; between hosts only the messages' order corrects them")
}

// traceSync samples the clock against rank 0 (all ranks; none in the
// sessions model, which has no communicator of all ranks).
func traceSync() (trace.Sync, bool) {
	if state.session {
		return trace.Sync{}, false
	}
	var local C.uint64_t
	var off C.int64_t
	var rtt C.uint64_t
	t0 := time.Now()
	rc := C.ms_trace_sync(traceSyncRounds, traceSyncMax, traceSyncGoodNs, &local, &off, &rtt)
	tr.syncs = append(tr.syncs, time.Since(t0))
	tr.pings += int(C.ms_trace_sync_pings)
	if rc != 0 {
		return trace.Sync{}, false
	}
	return trace.Sync{LocalNs: uint64(local), OffsetNs: int64(off), RTTNs: uint64(rtt)}, true
}

//export msgoTraceStart
func msgoTraceStart() C.int {
	if state.session && !tr.open.Load() && !state.cfg.Trace {
		traceSessionWarn()
	}
	if traceOpen() {
		return 1
	}
	return 0
}

// traceOpen creates the rank's file and starts the writer, once.
func traceOpen() bool {
	if tr.open.Load() {
		return true
	}
	tr.Lock()
	defer tr.Unlock()
	if tr.open.Load() {
		return true
	}
	if tr.failed || tr.cut || tr.closing.Load() || state.job == "" {
		return false
	}
	if C.ms_trace_init() == 0 {
		tr.failed = true
		traceWarn(fmt.Sprintf("rank %d: cannot start the trace writer: tracing off", state.rank))
		return false
	}
	path := trace.RankPath(state.job, state.rank)
	err := os.MkdirAll(filepath.Dir(path), 0o777)
	var f *os.File
	if err == nil {
		f, err = os.Create(path)
	}
	if err != nil {
		tr.failed = true
		traceWarn(fmt.Sprintf("rank %d: cannot write the trace (%v): tracing off", state.rank, err))
		return false
	}
	tr.f = f
	tr.path = path
	tr.bw, _ = trace.NewBlockWriter(f)
	if state.cfg.TraceDirect && state.cfg.TracePack != "run" {
		// Some file systems refuse it (older tmpfs): ordinary writes then.
		tr.direct, _ = os.OpenFile(path, os.O_WRONLY|syscall.O_DIRECT, 0)
	}
	tr.fw, _ = flate.NewWriter(nil, flate.BestSpeed)
	tr.comms = map[int]bool{}
	tr.nregions = 1
	host := state.host
	if state.cfg.TraceSkewNs != 0 {
		// Testing: skewed clocks stand for ranks on different hosts.
		host = fmt.Sprintf("%s/skewed-rank-%d", host, state.rank)
	}
	h := &trace.Header{Rank: state.rank, Size: state.size, PID: os.Getpid(), Host: host,
		Family: family, Tool: Version, Timer: traceTimer(), RealNs: int64(C.ms_real0)}
	nf := int(C.ms_nfuncs_get())
	for i := 0; i < nf; i++ {
		h.FnNames = append(h.FnNames, C.GoString(C.ms_fn_name(C.int(i))))
		h.FnClasses = append(h.FnClasses, C.GoString(C.ms_fn_class(C.int(i))))
	}
	tr.bw.Block(trace.BHeader, trace.EncodeHeader(h))
	traceMaps() // again at finalize, with what was loaded since
	tr.bw.Flush()
	tr.done = make(chan struct{})
	go traceWriter(tr.done)
	tr.open.Store(true)
	return true
}

// traceTimer names the clock the trace's ticks come from, as the profile's
// header does (rawRank.meta). At MPI_Init the trace header is written from
// msgoStart, before lifecycle.c sets ms_use_tsc from the flags msgoStart
// returns (startFlags: TSC allowed unless MPISCOPE_TIMER=clock; lifecycle.c:
// and the CPU's TSC is invariant): the choice is made the same way here.
func traceTimer() string {
	if C.ms_use_tsc_get() != 0 || (startFlags(state.cfg)&2 != 0 && C.ms_tsc_invariant() != 0) {
		return "tsc"
	}
	return "clock_gettime"
}

func traceWarn(msg string) {
	if !state.cfg.Quiet {
		fmt.Fprintf(os.Stderr, "mpiscope: warning: %s\n", msg)
	}
}

func traceWriter(done chan struct{}) {
	defer close(done)
	for {
		C.ms_trace_wait()
		traceDrain()
		if tr.stop.Load() {
			traceDrain()
			return
		}
	}
}

// traceDrain writes every queued buffer and gives it back to its thread.
func traceDrain() {
	tr.Lock()
	defer tr.Unlock()
	for h := C.ms_trace_pop(); h != nil; {
		next := h.next // h is reused once the buffer is released
		traceWrite(h.tb, int(h.idx), int(h.n), int(h.bytes))
		h = next
	}
}

// traceWrite writes one buffer (tr locked) with the definitions it may
// need and the calibration, then releases it.
func traceWrite(tb *C.ms_tbuf, idx, n, bytes int) {
	defer C.ms_trace_release(tb, C.int(idx))
	defer func() {
		if e := recover(); e != nil {
			traceWarn(fmt.Sprintf("rank %d: trace writer: %v", state.rank, e))
		}
	}()
	if traceCut(n, bytes) {
		return
	}
	traceDefs()
	var err error
	raw := unsafe.Slice((*byte)(unsafe.Pointer(C.ms_trace_events(tb, C.int(idx)))), bytes)
	if state.cfg.TracePack == "run" {
		var p []byte
		tr.evs, err = trace.DecodeRawRecords(raw, n, tr.evs[:0])
		if err == nil {
			p, err = trace.AppendEvents(nil, int(tb.tid), tr.evs, tr.fw, &tr.scratch)
		}
		if err == nil {
			err = tr.bw.Block(trace.BEvents, p)
		}
	} else {
		tr.head = trace.RawHeader(tr.head[:0], int(tb.tid), uint64(n), bytes)
		if tr.direct != nil {
			if err = traceWriteDirect(raw); errors.Is(err, syscall.EINVAL) {
				// The file system does not take direct writes
				// (alignment): nothing was written.
				tr.direct.Close()
				tr.direct = nil
			}
		}
		if tr.direct == nil {
			err = tr.bw.Block(trace.BRaw, tr.head, raw)
		}
	}
	if err != nil && tr.err == nil {
		tr.err = err
		traceWarn(fmt.Sprintf("rank %d: writing the trace: %v", state.rank, err))
	}
	tr.written += uint64(n)
}

// traceCut tells whether a buffer of n events and bytes bytes must not be
// written: MPISCOPE_TRACE_MAX would be passed (tr locked). The first time,
// tracing is turned off for the rest of the run, with a warning on this
// rank's stderr and in the profile.
func traceCut(n, bytes int) bool {
	limit := state.cfg.TraceMax
	if limit <= 0 {
		return false
	}
	// Room for the block's framing, its padding and what follows it.
	const room = 3 * traceDirectAlign
	if !tr.cut && tr.bw.Offset()+int64(bytes)+room <= limit {
		return false
	}
	if !tr.cut {
		tr.cut = true
		C.ms_trace_set(0)
		msg := fmt.Sprintf("rank %d: trace stopped at MPISCOPE_TRACE_MAX=%s (%d events written); later calls are profiled, not traced",
			state.rank, formatSize(limit), tr.written)
		addWarning(msg)
		traceWarn(msg)
	}
	tr.cutEvs += uint64(n)
	return true
}

// traceDirectAlign is the alignment of direct writes: file offset, memory
// and length.
const traceDirectAlign = 4096

// traceWriteDirect writes the W block of raw (a buffer's events, tr.head
// its header) in one direct write, which takes the data from the buffer
// itself (no copy into the page cache, the CPU cost of an ordinary write).
// The block is framed in place: the page before the events gets a padding
// block and the block's head, the room after them its CRC and a padding
// block up to the next page (MS_TBUF_HEAD, MS_TBUF_TAIL in trace.h); the
// file is padded to a page boundary before it (tr locked).
func traceWriteDirect(raw []byte) error {
	const page = traceDirectAlign
	head := int(C.MS_TBUF_HEAD)
	full := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(raw)), -head)), head+len(raw)+int(C.MS_TBUF_TAIL))
	tr.dhead = append(trace.AppendBlockHead(tr.dhead[:0], trace.BRaw, len(tr.head)+len(raw)), tr.head...)
	h := len(tr.dhead)
	trace.PadBlock(full[:head-h])
	copy(full[head-h:head], tr.dhead)
	end := head + len(raw)
	binary.LittleEndian.PutUint32(full[end:], trace.BlockCRC(trace.BRaw, tr.head, raw))
	end += 4
	if r := -end & (page - 1); r != 0 {
		if r < trace.MinPad {
			r += page
		}
		trace.PadBlock(full[end : end+r])
		end += r
	}
	if err := tr.bw.Align(page); err != nil {
		return err
	}
	off := tr.bw.Offset()
	if _, err := tr.direct.WriteAt(full[:end], off); err != nil {
		return err
	}
	tr.bw.Skip(int64(end))
	_, err := tr.f.Seek(tr.bw.Offset(), io.SeekStart)
	return err
}

// traceMaps writes the process's file mappings, with which the converter
// turns callsite addresses into module offsets (tr locked).
func traceMaps() {
	maps, err := symbolize.ReadSelfMaps()
	if err != nil {
		return
	}
	var ms []trace.Mapping
	for _, m := range maps {
		if strings.HasPrefix(m.Path, "/") {
			ms = append(ms, trace.Mapping{Start: m.Start, End: m.End, Offset: m.Offset, Path: m.Path})
		}
	}
	tr.bw.Block(trace.BMaps, trace.EncodeMaps(ms))
}

// tracePaths writes each thread's call-path table (MPISCOPE_DEPTH > 1;
// tr locked): the records of its calls hold their path's index in it
// (trace/paths.go). Written at the end: a table only grows.
func tracePaths() {
	for p := C.ms_paths_head(); p != nil; p = p.next {
		tp := &trace.ThreadPaths{Tid: int(p.owner.tid)}
		for i := 0; i < 1<<C.MS_PATH_BITS; i++ {
			var n C.uint32_t
			f := C.ms_path_frames(p, C.uint32_t(i), &n)
			if f == nil || n == 0 {
				continue
			}
			fr := make([]uint64, int(n))
			for k, a := range unsafe.Slice(f, int(n)) {
				fr[k] = uint64(a)
			}
			tp.Index = append(tp.Index, uint32(i))
			tp.Frames = append(tp.Frames, fr)
		}
		if len(tp.Index) > 0 {
			tr.bw.Block(trace.BPaths, trace.EncodePaths(tp))
		}
	}
}

// traceDefs writes definitions added since the last block (tr locked).
func traceDefs() {
	n := int(C.ms_comm_count())
	for id := 0; id < n; id++ {
		if tr.comms[id] {
			continue
		}
		var world *C.int
		var inter C.int
		rs := int(C.ms_trace_comm(C.int(id), &world, &inter))
		if rs < 0 {
			continue // not used by a traced call yet
		}
		m := C.ms_comm_meta_at(C.int(id))
		d := &trace.CommDef{ID: id, Key: C.GoString(&m.key[0]), Size: int(m.size), Inter: inter != 0}
		if world != nil {
			for _, w := range unsafe.Slice(world, rs) {
				d.World = append(d.World, int(w))
			}
		} else {
			for i := 0; i < rs; i++ {
				d.World = append(d.World, i)
			}
		}
		tr.comms[id] = true
		tr.bw.Block(trace.BComm, trace.EncodeComm(d))
	}
	for nr := int(C.ms_region_count()); tr.nregions < nr; tr.nregions++ {
		tr.bw.Block(trace.BRegion, trace.EncodeName(tr.nregions, C.GoString(C.ms_region_path(C.int(tr.nregions)))))
	}
	for nt := int(C.ms_event_count()); tr.ntexts < nt; tr.ntexts++ {
		tr.bw.Block(trace.BText, trace.EncodeName(tr.ntexts, C.GoString(C.ms_event_text(C.int(tr.ntexts)))))
	}
	for nf := int(C.ms_tfile_count()); tr.nfiles < nf; tr.nfiles++ {
		tr.bw.Block(trace.BFile, trace.EncodeName(tr.nfiles, C.GoString(C.ms_tfile_name(C.int(tr.nfiles)))))
	}
	if c, ok := traceCalib(); ok && c != tr.cal {
		tr.cal = c
		tr.bw.Block(trace.BCalib, trace.EncodeCalib(c))
	}
}

// traceCalib maps ticks to CLOCK_MONOTONIC ns (plus the testing skew),
// measured from MPI_Init to now.
func traceCalib() (trace.Calib, bool) {
	skew := uint64(int64(C.ms_trace_skew))
	c := trace.Calib{Tick0: uint64(C.ms_cal_tsc0), Ns0: uint64(C.ms_cal_ns0) + skew, NsPerTick: 1}
	if C.ms_use_tsc_get() == 0 {
		return c, true
	}
	var tk, ns C.uint64_t
	C.ms_clock_pair(&tk, &ns)
	dn := float64(uint64(ns) - uint64(C.ms_cal_ns0))
	dt := float64(uint64(tk) - uint64(C.ms_cal_tsc0))
	if dn < 1e6 || dt <= 0 {
		if tr.cal.NsPerTick != 0 {
			return tr.cal, false
		}
		c.NsPerTick = nsPerTick()
		return c, true
	}
	c.NsPerTick = dn / dt
	return c, true
}

// traceFlush is MPI_Pcontrol(2): this thread's events are written now;
// other threads hand theirs over at their next event.
func traceFlush() {
	if !tr.open.Load() {
		return
	}
	C.ms_trace_flushgen()
	C.ms_trace_flush_self()
	traceDrain()
	tr.Lock()
	if err := tr.bw.Flush(); err != nil && tr.err == nil {
		tr.err = err
	}
	tr.Unlock()
}

// traceDropped is the number of trace events lost on this rank.
func traceDropped() uint64 {
	var d uint64
	for tb := C.ms_tbufs_head(); tb != nil; tb = tb.next {
		d += uint64(tb.dropped)
	}
	return d
}

// traceFinish ends the trace at MPI_Finalize (all ranks): the ranks agree
// whether anyone traced, sample the clock again, and every rank writes
// its last buffers, the sample and the final block. In the sessions model
// (MPI_Session_finalize) each rank ends its own trace, without a sample.
func traceFinish() {
	C.ms_trace_set(0)
	defer traceTiming()
	if !state.session {
		mine := 0
		if tr.open.Load() {
			mine = 1
		}
		if C.ms_trace_any(C.int(mine)) == 0 {
			return
		}
	}
	s, ok := traceSync()
	if !tr.open.Load() || !tr.closing.CompareAndSwap(false, true) {
		return
	}
	C.ms_trace_hand_all()
	tr.stop.Store(true)
	C.ms_trace_wake()
	<-tr.done // the writer drained the list after it saw stop
	tr.Lock()
	defer tr.Unlock()
	traceDefs()
	traceMaps()
	tracePaths()
	if ok {
		tr.bw.Block(trace.BSync, trace.EncodeSync(s))
	}
	traceClose(true)
}

// traceEnd writes what the trace buffers hold when the rank ends without
// MPI_Finalize (msgoRankFile: MPI_Abort, a signal, exit), on a helper
// thread while the application's threads may still run (racy like the
// rank file, docs/safety.md; recording is off by then). Every thread's
// buffer, the deferred event included, goes to the writer; the file gets
// the definitions and is closed raw (no packing, no final block: it is not
// a clean end, and converts as it is). When the application goes on (its
// own SIGTERM handler: final false) the queued buffers are only written
// out, as by MPI_Pcontrol(2). The writer is waited for at most wait.
func traceEnd(final bool, wait time.Duration) {
	if !tr.open.Load() {
		return
	}
	if !final {
		traceFlush()
		return
	}
	if !tr.closing.CompareAndSwap(false, true) {
		return
	}
	C.ms_trace_set(0)
	C.ms_trace_hand_all()
	tr.stop.Store(true)
	C.ms_trace_wake()
	select {
	case <-tr.done:
	case <-time.After(wait):
		traceWarn(fmt.Sprintf("rank %d: the trace writer did not finish in %v: the trace may miss its last buffers", state.rank, wait))
		return // the writer holds the file: leave it to it
	}
	tr.Lock()
	defer tr.Unlock()
	traceDefs()
	traceMaps()
	tracePaths()
	traceClose(false)
}

// traceClose ends the file (tr locked): gaps, the final block when clean,
// then closes it and packs it (MPISCOPE_TRACE_COMPRESS=finalize).
func traceClose(clean bool) {
	for tb := C.ms_tbufs_head(); tb != nil; tb = tb.next {
		if tb.dropped > 0 {
			tr.bw.Block(trace.BGap, trace.EncodeGap(int(tb.tid), uint64(tb.dropped)))
		}
	}
	if clean {
		tr.bw.Block(trace.BFinal, trace.EncodeFinal(trace.Final{Events: tr.written, Dropped: traceDropped()}))
	}
	if err := tr.bw.Flush(); err != nil && tr.err == nil {
		tr.err = err
	}
	if err := tr.f.Close(); err != nil && tr.err == nil {
		tr.err = err
	}
	if tr.direct != nil {
		tr.direct.Close()
		tr.direct = nil
	}
	if clean && tr.err == nil && state.cfg.TracePack == "finalize" {
		if err := trace.Pack(tr.path); err != nil {
			traceWarn(fmt.Sprintf("rank %d: packing the trace: %v (left uncompressed)", state.rank, err))
		}
	}
	if tr.err != nil {
		traceWarn(fmt.Sprintf("rank %d: the trace may be incomplete: %v", state.rank, tr.err))
	}
	if d := traceDropped(); d > 0 && clean {
		warn(fmt.Sprintf("rank %d: %d trace events dropped (writer behind); raise MPISCOPE_TRACE_BUFFER", state.rank, d))
	}
	tr.open.Store(false)
}

// traceTiming prints, with MPISCOPE_DEBUG_TIMING=1, rank 0's time in the
// clock samples (init, finalize) and the pings it answered.
func traceTiming() {
	if state.rank != 0 || len(tr.syncs) == 0 || os.Getenv("MPISCOPE_DEBUG_TIMING") != "1" {
		return
	}
	var parts []string
	for _, d := range tr.syncs {
		parts = append(parts, fmt.Sprintf("%.3fms", d.Seconds()*1e3))
	}
	fmt.Fprintf(os.Stderr, "mpiscope: trace clock sync: ranks=%d syncs=%s pings=%d\n", state.size, strings.Join(parts, ","), tr.pings)
}

// formatSize writes a byte count as MPISCOPE_TRACE_MAX takes it.
func formatSize(n int64) string {
	for _, u := range []struct {
		s string
		v int64
	}{{"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if n >= u.v && n%u.v == 0 {
			return fmt.Sprintf("%d%s", n/u.v, u.s)
		}
	}
	return fmt.Sprint(n)
}
