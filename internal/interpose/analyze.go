//go:build mpiscope_openmpi || mpiscope_mpich

package interpose

/*
#include <stdint.h>
extern int ms_an_block, ms_an_polls;
extern long ms_an_sleep_max;
extern int ms_an_timing;
extern int64_t ms_an_nwaits, ms_an_npolls, ms_an_nsleeps, ms_an_wait_cpu, ms_an_wait_wall;
extern int64_t ms_an_piece, ms_an_msgs, ms_an_pieces;
int ms_an_post(const char *sbuf, const int64_t *scount, const int64_t *soff, int64_t *rcount);
int ms_an_take(char *rbuf, const int64_t *roff);
int ms_an_send(const void *b, int64_t n, int dest);
int ms_an_probe_from(int src, int64_t *n);
int ms_an_token_send(int dest, const uint64_t *m);
int ms_an_token_recv(uint64_t *m);
int ms_an_isend(int dest, const void *b, int n);
int ms_an_probe(int *src, int *n);
int ms_an_iprobe(int *flag, int *src, int *n);
int ms_an_recv(int src, void *b, int n);
int ms_an_waitsends(void);
int ms_trace_any(int mine);
*/
import "C"

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/mpiscope/mpiscope/internal/analyze"
	"github.com/mpiscope/mpiscope/internal/symbolize"
	"github.com/mpiscope/mpiscope/internal/trace"
	"github.com/mpiscope/mpiscope/profile"
)

// analyzeFinalize is the analysis in the job (MPISCOPE_ANALYZE=1), at
// MPI_Finalize once the trace files are complete: every rank reads its own
// file and the ranks run internal/analyze's InJob over ms_priv (analyze.c).
// It returns rank 0's result for the profile; nil elsewhere or when off.
// Whether it runs is agreed by all ranks at MPI_Init (any rank asking:
// pbInit), since every rank must take part; without a trace it warns and the job goes on.
func analyzeFinalize() *profile.Analysis {
	if state.session {
		if state.cfg.Analyze {
			warn("MPISCOPE_ANALYZE=1: not in the sessions model (no MPI_COMM_WORLD to analyze over): no analysis")
		}
		return nil
	}
	if !state.analyze { // agreed at MPI_Init (pbInit)
		return nil
	}
	tr.Lock()
	path, ok := tr.path, tr.path != "" && !tr.failed
	tr.Unlock()
	if C.ms_trace_any(boolInt(ok)) == 0 {
		warn("MPISCOPE_ANALYZE=1 needs the trace (MPISCOPE_TRACE=1, or MPI_Pcontrol(6)), and no rank traced: no analysis")
		return nil
	}
	if !ok {
		path = ""
	}
	timing := os.Getenv("MPISCOPE_DEBUG_TIMING") == "1"
	// How the ranks wait for each other (analyze.c, ms_an_pause): polls
	// and sleeps; to measure against, MPISCOPE_DEBUG_ANALYZE_WAIT=block
	// (MPI's blocking calls) or =N (sleeps of at most N us; 0: polls
	// only).
	C.ms_an_block, C.ms_an_sleep_max, C.ms_an_timing = 0, 1000000, 0
	// The polls before the first sleep: 32; MPISCOPE_DEBUG_ANALYZE_POLLS=N
	// sets them (0 to 1000), to measure. One poll on an oversubscribed
	// node (2026-11-28, d28de6c) halved the path's wall time in waits but
	// made scale.c's analysis a larger share of its run at 16 and 32
	// ranks in four alternating pairs (docs/performance.md, "A quiet run
	// of the night's merged tree"): not kept.
	C.ms_an_polls = C.int(anPolls(os.Getenv("MPISCOPE_DEBUG_ANALYZE_POLLS")))
	if v := os.Getenv("MPISCOPE_DEBUG_ANALYZE_WAIT"); v == "block" {
		C.ms_an_block = 1
	} else if us, err := strconv.Atoi(v); err == nil && us >= 0 && us <= 100000 {
		C.ms_an_sleep_max = C.long(us) * 1000
	} else if v != "" {
		warn(fmt.Sprintf("MPISCOPE_DEBUG_ANALYZE_WAIT=%q: want block or a number of microseconds (0 to 100000); the default (at most 1000 us)", v))
	}
	// The exchanges' messages go in pieces of 64 MiB (analyze.c);
	// MPISCOPE_DEBUG_ANALYZE_PIECE=N makes them N bytes (1 to 64 MiB, the
	// same on every rank: a receiver knows a message's end by its shorter
	// last piece), so that tests cut small messages into many.
	C.ms_an_piece, C.ms_an_msgs, C.ms_an_pieces = 1<<26, 0, 0
	pieces := false
	if v := os.Getenv("MPISCOPE_DEBUG_ANALYZE_PIECE"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 1 && n <= 1<<26 {
			C.ms_an_piece, pieces = C.int64_t(n), true
		} else {
			warn(fmt.Sprintf("MPISCOPE_DEBUG_ANALYZE_PIECE=%q: want a number of bytes from 1 to 67108864; the default (64 MiB)", v))
		}
	}
	var t0 time.Time
	var before int64
	var phases []string
	opt := analyze.Options{Source: ownSites(), Memory: state.cfg.AnalyzeMem}
	var cpu0 float64
	if timing {
		// Each phase's wall and CPU time (ms): the CPU of all the
		// process's threads (getrusage), which tells the rank's own work
		// from its waiting for the others (blocked, or polling: Open MPI
		// yields the CPU while it polls, MPICH spins).
		// And the waits' part of it (analyze.c): after each phase's
		// wall/CPU, its waits' wall/CPU (ms), how many waits, the polls
		// that found nothing and the sleeps between them.
		C.ms_an_timing = 1
		C.ms_an_nwaits, C.ms_an_npolls, C.ms_an_nsleeps, C.ms_an_wait_cpu, C.ms_an_wait_wall = 0, 0, 0, 0, 0
		last, lastCPU := time.Now(), cpuMs()
		cpu0 = lastCPU
		var lw [5]int64
		opt.Phase = func(name string) {
			now, c := time.Now(), cpuMs()
			w := [5]int64{int64(C.ms_an_wait_wall), int64(C.ms_an_wait_cpu), int64(C.ms_an_nwaits), int64(C.ms_an_npolls), int64(C.ms_an_nsleeps)}
			phases = append(phases, fmt.Sprintf("%s=%.3f/%.3f,wait=%.3f/%.3f,n=%d,polls=%d,sleeps=%d", name, float64(now.Sub(last).Microseconds())/1e3, c-lastCPU,
				float64(w[0]-lw[0])/1e6, float64(w[1]-lw[1])/1e6, w[2]-lw[2], w[3]-lw[3], w[4]-lw[4]))
			last, lastCPU, lw = now, c, w
		}
		before = vmHWM()
		// The peak from here on is the analysis' (Linux 4.0 and later).
		_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
		t0 = time.Now()
	}
	// MPISCOPE_DEBUG_ANALYZE_SPOIL=R:K (tests): rank R's K-th message of
	// the trees (from 1) goes as one byte that is no message, so that a
	// failure travels through them (internal/analyze/tree.go).
	var comm analyze.Comm = anComm{}
	if v := os.Getenv("MPISCOPE_DEBUG_ANALYZE_SPOIL"); v != "" {
		var r, k int
		if _, err := fmt.Sscanf(v, "%d:%d", &r, &k); err != nil || k < 1 {
			warn(fmt.Sprintf("MPISCOPE_DEBUG_ANALYZE_SPOIL=%q: want a rank and a message's number from 1 (R:K); nothing spoilt", v))
		} else if r == state.rank {
			comm = &spoilComm{k: k}
		}
	}
	res, err := analyze.InJobFile(comm, state.job, path, opt)
	if timing {
		// For the benchmarks (bench/cmd/runbench/analyzejob.go): rank 0's
		// time ends with the gathered result, the job's analysis.
		fmt.Fprintf(os.Stderr, "mpiscope: analysis timing: rank=%d ms=%.3f hwm_before_kb=%d hwm_kb=%d %s cpu_ms=%.3f\n", state.rank,
			float64(time.Since(t0).Microseconds())/1e3, before, vmHWM(), strings.Join(phases, " "), cpuMs()-cpu0)
	}
	if pieces {
		// For the tests: the exchanges' and trees' messages this rank
		// sent, and the pieces they took.
		fmt.Fprintf(os.Stderr, "mpiscope: analysis pieces: rank=%d piece=%d msgs=%d pieces=%d\n", state.rank,
			int64(C.ms_an_piece), int64(C.ms_an_msgs), int64(C.ms_an_pieces))
	}
	if err != nil {
		warn(fmt.Sprintf("the analysis in the job failed on rank %d: %v", state.rank, err))
		return nil
	}
	if res == nil {
		return nil
	}
	return res.Profile()
}

// anPolls is the waits' polls before their first sleep: v
// (MPISCOPE_DEBUG_ANALYZE_POLLS) when set, else 32. A bad v warns and
// keeps the default.
func anPolls(v string) int {
	const def = 32
	if v == "" {
		return def
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 && n <= 1000 {
		return n
	}
	warn(fmt.Sprintf("MPISCOPE_DEBUG_ANALYZE_POLLS=%q: want a number of polls from 0 to 1000; the default (%d)", v, def))
	return def
}

// ownSites resolves this rank's callsites from its trace's mappings, as
// `mpiscope analyze` does.
func ownSites() func(r *trace.Rank, pc uint64) (trace.Source, bool) {
	sym := symbolize.New()
	var ms []symbolize.Mapping
	var of *trace.Rank
	return func(r *trace.Rank, pc uint64) (trace.Source, bool) {
		if of != r {
			of, ms = r, nil
			for _, m := range r.Maps {
				ms = append(ms, symbolize.Mapping{Start: m.Start, End: m.End, Offset: m.Offset, Path: m.Path})
			}
			sort.Slice(ms, func(a, b int) bool { return ms[a].Start < ms[b].Start })
		}
		module, off, ok := symbolize.Resolve(ms, pc)
		if !ok {
			return trace.Source{}, false
		}
		fn, file, line, err := sym.LookupReturn(module, off)
		if err != nil || file == "" {
			return trace.Source{}, false
		}
		return trace.Source{Func: fn, File: file, Line: line}, true
	}
}

// anComm is analyze.Comm over ms_priv.
type anComm struct{ privComm }

// spoilComm is anComm whose k-th Send sends the byte 7 instead
// (MPISCOPE_DEBUG_ANALYZE_SPOIL).
type spoilComm struct {
	anComm
	k, n int
}

func (c *spoilComm) Send(dest int, data []byte) error {
	if c.n++; c.n == c.k {
		data = []byte{7}
	}
	return c.anComm.Send(dest, data)
}

// Alltoallv is one step (analyze.c, ms_an_post): every rank sends its
// messages and probes for the others', whose sizes it learns from them;
// no counts go first.
func (anComm) Alltoallv(out [][]byte) ([][]byte, error) {
	n, me := len(out), state.rank
	scount, soff := make([]int64, n), make([]int64, n)
	rcount, roff := make([]int64, n), make([]int64, n)
	var st int64
	for i, b := range out {
		if i != me {
			scount[i], soff[i] = int64(len(b)), st
			st += int64(len(b))
		}
	}
	sbuf := make([]byte, st+1)
	for i, b := range out {
		if i != me {
			copy(sbuf[soff[i]:], b)
		}
	}
	// The sends read sbuf until ms_an_take returns.
	var pin runtime.Pinner
	pin.Pin(&sbuf[0])
	defer pin.Unpin()
	if rc := C.ms_an_post((*C.char)(unsafe.Pointer(&sbuf[0])), (*C.int64_t)(unsafe.Pointer(&scount[0])),
		(*C.int64_t)(unsafe.Pointer(&soff[0])), (*C.int64_t)(unsafe.Pointer(&rcount[0]))); rc != 0 {
		return nil, fmt.Errorf("MPI error %d", int(rc))
	}
	rcount[me] = int64(len(out[me]))
	var rt int64
	for i, c := range rcount {
		if c < 0 {
			return nil, fmt.Errorf("rank %d sends %d bytes", i, c)
		}
		roff[i] = rt
		rt += c
	}
	rbuf := make([]byte, rt+1)
	copy(rbuf[roff[me]:], out[me])
	if rc := C.ms_an_take((*C.char)(unsafe.Pointer(&rbuf[0])), (*C.int64_t)(unsafe.Pointer(&roff[0]))); rc != 0 {
		return nil, fmt.Errorf("MPI error %d", int(rc))
	}
	in := make([][]byte, n)
	for i := range in {
		in[i] = rbuf[roff[i] : roff[i]+rcount[i] : roff[i]+rcount[i]]
	}
	return in, nil
}

// Send and Recv carry InJob's reductions up and down their trees
// (analyze.c: one message, whose size the receiver probes; waiting as the
// exchanges do).
func (anComm) Send(dest int, data []byte) error {
	var p unsafe.Pointer
	if len(data) > 0 {
		p = unsafe.Pointer(&data[0])
	}
	if rc := C.ms_an_send(p, C.int64_t(len(data)), C.int(dest)); rc != 0 {
		return fmt.Errorf("MPI error %d", int(rc))
	}
	return nil
}

func (anComm) Recv(src int) ([]byte, error) {
	var n C.int64_t
	if rc := C.ms_an_probe_from(C.int(src), &n); rc != 0 {
		return nil, fmt.Errorf("MPI error %d", int(rc))
	}
	b := make([]byte, int64(n)+1)
	if rc := C.ms_an_take((*C.char)(unsafe.Pointer(&b[0])), nil); rc != 0 {
		return nil, fmt.Errorf("MPI error %d", int(rc))
	}
	return b[:n], nil
}

func (anComm) SendToken(dest int, m [3]uint64) error {
	if rc := C.ms_an_token_send(C.int(dest), (*C.uint64_t)(unsafe.Pointer(&m[0]))); rc != 0 {
		return fmt.Errorf("MPI error %d", int(rc))
	}
	return nil
}

func (anComm) RecvToken() ([3]uint64, error) {
	var m [3]uint64
	if rc := C.ms_an_token_recv((*C.uint64_t)(unsafe.Pointer(&m[0]))); rc != 0 {
		return m, fmt.Errorf("MPI error %d", int(rc))
	}
	return m, nil
}

func (anComm) SendAsync(dest int, data []byte) error {
	if len(data) > math.MaxInt32 {
		return fmt.Errorf("a message of %d bytes", len(data))
	}
	var p unsafe.Pointer
	if len(data) > 0 {
		p = unsafe.Pointer(&data[0])
	}
	if rc := C.ms_an_isend(C.int(dest), p, C.int(len(data))); rc != 0 {
		return fmt.Errorf("MPI error %d", int(rc))
	}
	return nil
}

func (anComm) RecvAny() (int, []byte, error) {
	var src, n C.int
	if rc := C.ms_an_probe(&src, &n); rc != 0 {
		return 0, nil, fmt.Errorf("MPI error %d", int(rc))
	}
	b, err := anRecv(src, n)
	return int(src), b, err
}

func (anComm) PollAny() (int, []byte, bool, error) {
	var flag, src, n C.int
	if rc := C.ms_an_iprobe(&flag, &src, &n); rc != 0 {
		return 0, nil, false, fmt.Errorf("MPI error %d", int(rc))
	}
	if flag == 0 {
		return 0, nil, false, nil
	}
	b, err := anRecv(src, n)
	return int(src), b, err == nil, err
}

// anRecv receives the probed delay-costs message of n bytes from src.
func anRecv(src, n C.int) ([]byte, error) {
	b := make([]byte, int(n)+1)
	if rc := C.ms_an_recv(src, unsafe.Pointer(&b[0]), n); rc != 0 {
		return nil, fmt.Errorf("MPI error %d", int(rc))
	}
	return b[:n], nil
}

func (anComm) WaitSends() error {
	if rc := C.ms_an_waitsends(); rc != 0 {
		return fmt.Errorf("MPI error %d", int(rc))
	}
	return nil
}

// cpuMs is this process's CPU time so far (user and system, all
// threads; ms).
func cpuMs() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}

// vmHWM is this process's peak resident set size (KiB; 0 unknown).
func vmHWM() int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(l, []byte("VmHWM:")); ok {
			n, _ := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))), 10, 64)
			return n
		}
	}
	return 0
}
