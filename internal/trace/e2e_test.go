package trace_test

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/internal/testutil"
	"github.com/mpiscope/mpiscope/internal/trace"
)

// run runs a test program under mpirun with the library preloaded and
// returns the job directory.
func run(t *testing.T, f mpitest.Family, src string, np int, env map[string]string, args ...string) (string, mpitest.Result) {
	t.Helper()
	dir := t.TempDir()
	prog := mpitest.Compile(t, f.MPICC, "trace/"+src, dir)
	job := filepath.Join(dir, "job")
	e := map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_SUMMARY": "0"}
	for k, v := range env {
		e[k] = v
	}
	res := f.Exec(t, mpitest.Run{NP: np, Env: e, Preload: f.Lib(), Args: append([]string{prog}, args...), Dir: dir})
	if res.Err != nil {
		t.Fatalf("mpirun: %v\n%s\n%s", res.Err, res.Stdout, res.Stderr)
	}
	return job, res
}

// collector records what a walk visits.
type collector struct {
	calls   map[[2]any]int // (rank, fn) -> count
	sends   map[uint64]*trace.Call
	sendMsg map[uint64]trace.Msg
	recvs   map[uint64]*trace.Call
	recvMsg map[uint64]trace.Msg
	marks   []string
	regions []string
	// Each thread's events must come in time order (a deferred receive
	// written after a later event would not): the last time seen per
	// (rank, thread), and the events that went back.
	last      map[[2]int]float64
	backwards []string
}

// at checks that an event of (rank, thread) at time t does not precede
// the thread's previous one.
func (c *collector) at(rank, thread int, t float64, what string) {
	k := [2]int{rank, thread}
	if p, ok := c.last[k]; ok && t < p {
		c.backwards = append(c.backwards, fmt.Sprintf("rank %d thread %d: %s at %.0f after an event at %.0f", rank, thread, what, t, p))
	}
	c.last[k] = t
}

func newCollector() *collector {
	return &collector{calls: map[[2]any]int{}, sends: map[uint64]*trace.Call{}, recvs: map[uint64]*trace.Call{},
		sendMsg: map[uint64]trace.Msg{}, recvMsg: map[uint64]trace.Msg{}, last: map[[2]int]float64{}}
}

func (c *collector) Call(x *trace.Call) error {
	c.calls[[2]any{x.Rank, x.Fn}]++
	c.at(x.Rank, x.Thread, x.T0, x.Fn)
	// The walk reuses x: keep a deep copy.
	cp := *x
	cp.StartSend, cp.StartRecv = slices.Clone(x.StartSend), slices.Clone(x.StartRecv)
	cp.SendDone, cp.RecvDone = slices.Clone(x.SendDone), slices.Clone(x.RecvDone)
	cp.StartColl, cp.CollDone = slices.Clone(x.StartColl), slices.Clone(x.CollDone)
	for _, m := range []**trace.Msg{&cp.Send, &cp.Recv, &cp.RecvPost} {
		if *m != nil {
			v := **m
			*m = &v
		}
	}
	if x.Send != nil {
		c.sends[x.Send.Flow] = &cp
		c.sendMsg[x.Send.Flow] = *x.Send
	}
	for _, m := range x.StartSend {
		c.sends[m.Flow] = &cp
		c.sendMsg[m.Flow] = m
	}
	if x.Recv != nil {
		c.recvs[x.Recv.Flow] = &cp
		c.recvMsg[x.Recv.Flow] = *x.Recv
	}
	for _, m := range x.RecvDone {
		c.recvs[m.Flow] = &cp
		c.recvMsg[m.Flow] = m
	}
	return nil
}

func (c *collector) Region(rank, thread int, enter bool, name string, t float64) error {
	c.regions = append(c.regions, name)
	c.at(rank, thread, t, "region "+name)
	return nil
}

func (c *collector) Mark(rank, thread int, text string, t float64) error {
	c.marks = append(c.marks, text)
	c.at(rank, thread, t, "mark "+text)
	return nil
}

func walk(t *testing.T, job string, noClock bool) (*collector, *trace.Walker) {
	t.Helper()
	j, err := trace.OpenJob(job)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Warnings) > 0 {
		t.Errorf("warnings: %v", j.Warnings)
	}
	w := trace.NewWalker(j, trace.WalkOptions{NoClock: noClock})
	c := newCollector()
	if err := w.Walk(c); err != nil {
		t.Fatal(err)
	}
	for _, b := range c.backwards {
		t.Errorf("out of time order: %s", b)
	}
	return c, w
}

// blockKinds counts the blocks of each kind in rank's trace file.
func blockKinds(t *testing.T, job string, rank int) map[byte]int {
	t.Helper()
	f, err := os.Open(trace.RankPath(job, rank))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	br, err := trace.NewBlockReader(f, f.Name())
	if err != nil {
		t.Fatal(err)
	}
	n := map[byte]int{}
	for {
		k, _, err := br.Next()
		if err != nil {
			break
		}
		n[k]++
	}
	return n
}

func TestTraceP2P(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		job, _ := run(t, f, "p2p.c", 3, map[string]string{"MPISCOPE_TRACE": "1"})
		for r := 0; r < 3; r++ {
			// Packed at finalize: compressed blocks only, and a clean end.
			if k := blockKinds(t, job, r); k[trace.BRaw] != 0 || k[trace.BEvents] == 0 || k[trace.BFinal] != 1 {
				t.Errorf("rank %d: blocks %v, want E blocks, no W block, one F block", r, k)
			}
		}
		checkP2P(t, f, job)
	})
}

// TestTraceRaw: with MPISCOPE_TRACE_COMPRESS=off (what a killed run
// leaves) the raw blocks convert to the same trace.
func TestTraceRaw(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		// Direct writes (the default) and ordinary ones.
		for _, direct := range []string{"1", "0"} {
			job, _ := run(t, f, "p2p.c", 3, map[string]string{"MPISCOPE_TRACE": "1", "MPISCOPE_TRACE_COMPRESS": "off",
				"MPISCOPE_TRACE_DIRECT": direct})
			framed := direct == "1" && directWorks(t, filepath.Dir(job))
			for r := 0; r < 3; r++ {
				if k := blockKinds(t, job, r); k[trace.BRaw] == 0 || k[trace.BEvents] != 0 {
					t.Errorf("rank %d: blocks %v, want W blocks only", r, k)
				}
				checkDirect(t, trace.RankPath(job, r), framed)
			}
			checkP2P(t, f, job)
		}
	})
}

// directWorks tells whether the file system of dir takes direct writes
// (some refuse them: mpiscope then writes ordinarily).
func directWorks(t *testing.T, dir string) bool {
	path := filepath.Join(dir, "direct-probe")
	defer os.Remove(path)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|syscall.O_DIRECT, 0o666)
	if err != nil {
		t.Logf("%s: no direct writes (%v)", dir, err)
		return false
	}
	defer f.Close()
	buf := make([]byte, 3*4096)
	off := int(-uintptr(unsafe.Pointer(&buf[0])) & 4095) // a page-aligned page of buf
	if _, err := f.WriteAt(buf[off:off+4096], 0); err != nil {
		t.Logf("%s: no direct writes (%v)", dir, err)
		return false
	}
	return true
}

// checkDirect checks the framing of W blocks in a raw trace file: written
// directly, each is one page-aligned run of pages (a padding block from a
// page boundary, the W block, a padding block to the next one); written
// ordinarily, the file has no padding. It reads the block framing itself,
// since BlockReader skips padding.
func checkDirect(t *testing.T, path string, direct bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type blk struct {
		kind       byte
		start, end int
	}
	var bs []blk
	for off := len(trace.Magic); off < len(b); {
		ln, n := binary.Uvarint(b[off+1:])
		if n <= 0 {
			t.Fatalf("%s: bad block length at %d", path, off)
		}
		end := off + 1 + n + int(ln) + 4
		bs = append(bs, blk{b[off], off, end})
		off = end
	}
	w, pads := 0, 0
	for i, x := range bs {
		switch x.kind {
		case trace.BPad:
			pads++
		case trace.BRaw:
			w++
			if !direct {
				continue
			}
			if i == 0 || bs[i-1].kind != trace.BPad || bs[i-1].start%4096 != 0 {
				t.Errorf("%s: W block at %d does not follow a padding block at a page boundary", path, x.start)
			}
			if end := x.end; i+1 < len(bs) && bs[i+1].kind == trace.BPad {
				if end = bs[i+1].end; end%4096 != 0 {
					t.Errorf("%s: W block at %d: padding after it ends at %d, not a page boundary", path, x.start, end)
				}
			} else if end%4096 != 0 {
				t.Errorf("%s: W block at %d ends at %d, not a page boundary", path, x.start, end)
			}
		}
	}
	if w == 0 || direct != (pads > 0) {
		t.Errorf("%s: %d W blocks, %d padding blocks (direct writes %v)", path, w, pads, direct)
	}
}

// checkP2P checks the trace of p2p.c on 3 ranks: events, messages, OTF2
// and Perfetto output. MPI_Isendrecv (MPI 4) must be there with MPICH 4.
func checkP2P(t *testing.T, f mpitest.Family, job string) {
	c, w := walk(t, job, false)
	isr := c.calls[[2]any{0, "MPI_Isendrecv"}]
	if f.Name == "mpich" && isr != 1 {
		t.Errorf("rank 0: %d MPI_Isendrecv calls, want 1 with MPICH", isr)
	}
	// Each rank's last MPI_Send fails (rank 8 of 3): a call, no message.
	// MPI 4 parts (MPICH): MPI_Isendrecv on ranks 0 and 1, and the
	// persistent MPI_Allreduce_init started and waited for twice.
	want := map[[2]any]int{
		{0, "MPI_Send"}: 2, {0, "MPI_Recv"}: 2, {0, "MPI_Irecv"}: 5, {0, "MPI_Wait"}: 3 + 3*isr, {0, "MPI_Waitall"}: 6,
		{0, "MPI_Sendrecv"}: 1, {0, "MPI_Barrier"}: 1, {0, "MPI_Allreduce"}: 1, {0, "MPI_Isend"}: 0,
		{1, "MPI_Recv"}: 1, {1, "MPI_Isend"}: 2, {1, "MPI_Wait"}: 1 + 3*isr, {1, "MPI_Waitall"}: 6, {1, "MPI_Sendrecv"}: 1,
		{1, "MPI_Send"}: 3, {1, "MPI_Barrier"}: 1, {1, "MPI_Isendrecv"}: isr,
		{2, "MPI_Send"}: 3, {2, "MPI_Isend"}: 1, {2, "MPI_Waitall"}: 6, {2, "MPI_Sendrecv"}: 1, {2, "MPI_Recv"}: 0,
		{2, "MPI_Allreduce"}: 1, {2, "MPI_Wait"}: 2 * isr, {2, "MPI_Isendrecv"}: 0,
	}
	for r := 0; r < 3; r++ {
		want[[2]any{r, "MPI_Startall"}] = 2
		want[[2]any{r, "MPI_Start"}] = 4 + 2*isr
		want[[2]any{r, "MPI_Test"}] = 1
		want[[2]any{r, "MPI_Bcast"}] = 7
		want[[2]any{r, "MPI_Ibcast"}] = 1
		want[[2]any{r, "MPI_Ibarrier"}] = 1
		want[[2]any{r, "MPI_Allreduce_init"}] = isr
	}
	for k, n := range want {
		if c.calls[k] != n {
			t.Errorf("rank %v %v: %d calls, want %d", k[0], k[1], c.calls[k], n)
		}
	}
	// Every message: 0->1 (5), 1->0 (6), ring (7) x3, 2->0 (8), 1,2->0 (9),
	// 1->0 twice, waited for in reverse (12), 2->0 on the split comm (3),
	// the persistent ring (10) 3 x 4, and MPI_Isendrecv 0<->1 (11).
	nmsg := 11 + 12 + 2*isr
	if len(c.sends) != nmsg || len(c.recvs) != nmsg {
		t.Errorf("%d sends, %d receives; want %d and %d", len(c.sends), len(c.recvs), nmsg, nmsg)
	}
	type m struct {
		src, dst, tag int
		bytes         int64
	}
	got := map[m]int{}
	for id, s := range c.sends {
		r, ok := c.recvs[id]
		if !ok {
			t.Errorf("send rank %d -> %d tag %d not matched", s.Rank, c.sendMsg[id].Peer, c.sendMsg[id].Tag)
			continue
		}
		sm, rm := c.sendMsg[id], c.recvMsg[id]
		if sm.Peer != r.Rank || rm.Peer != s.Rank || sm.Tag != rm.Tag || sm.Bytes != rm.Bytes {
			t.Errorf("send %+v from %d does not fit receive %+v at %d", sm, s.Rank, rm, r.Rank)
		}
		if r.T1 < s.T0 {
			t.Errorf("message %d->%d tag %d received (%.0f) before it was sent (%.0f)", s.Rank, r.Rank, sm.Tag, r.T1, s.T0)
		}
		got[m{s.Rank, r.Rank, sm.Tag, rm.Bytes}]++
	}
	wantMsg := map[m]int{{0, 1, 5, 40}: 1, {1, 0, 6, 24}: 1, {0, 1, 7, 4}: 1, {1, 2, 7, 4}: 1, {2, 0, 7, 4}: 1,
		{2, 0, 8, 8}: 1, {1, 0, 9, 16}: 1, {2, 0, 9, 16}: 1, {2, 0, 3, 20}: 1, {1, 0, 12, 4}: 1, {1, 0, 12, 8}: 1,
		{0, 1, 10, 8}: 4, {1, 2, 10, 8}: 4, {2, 0, 10, 8}: 4, {0, 1, 11, 8}: isr, {1, 0, 11, 8}: isr}
	for x, n := range wantMsg {
		if got[x] != n {
			t.Errorf("message %+v seen %d times, want %d", x, got[x], n)
		}
	}
	if w.Unmatched != 0 {
		t.Errorf("%d unmatched completions", w.Unmatched)
	}
	if strings.Count(strings.Join(c.marks, ","), "done") != 3 || strings.Count(strings.Join(c.regions, ","), "phase") != 6 {
		t.Errorf("marks %v regions %v", c.marks, c.regions)
	}
	// OTF2: otf2-print reads the archive; its records carry the peers.
	out := filepath.Join(filepath.Dir(job), "otf2")
	j, _ := trace.OpenJob(job)
	w2 := trace.NewWalker(j, trace.WalkOptions{})
	o, err := trace.NewOTF2Writer(out, w2)
	if err != nil {
		t.Fatal(err)
	}
	if err := w2.Walk(o); err != nil {
		t.Fatal(err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	text := otf2Print(t, out)
	lines := map[string][]string{}
	re := regexp.MustCompile(`^((?:MPI|NON_BLOCKING)_[A-Z_]+)\s+(\d+)\s+\d+\s*(.*)$`)
	for _, l := range strings.Split(text, "\n") {
		if g := re.FindStringSubmatch(l); g != nil {
			lines[g[1]] = append(lines[g[1]], g[2]+" "+g[3])
		}
	}
	nb := 3 + 12 + isr*2 // Isend/Irecv, persistent, Isendrecv
	for rec, n := range map[string]int{"MPI_SEND": 8, "MPI_RECV": 6, "MPI_ISEND": nb, "MPI_ISEND_COMPLETE": nb,
		"MPI_IRECV_REQUEST": nb + 2, "MPI_IRECV": nb + 2, "MPI_COLLECTIVE_BEGIN": 27, "MPI_COLLECTIVE_END": 27,
		// Ibcast and Ibarrier on 3 ranks, and the persistent Allreduce
		// twice on 3 ranks (MPI 4).
		"NON_BLOCKING_COLLECTIVE_REQUEST": 6 + 6*isr, "NON_BLOCKING_COLLECTIVE_COMPLETE": 6 + 6*isr} {
		if len(lines[rec]) != n {
			t.Errorf("otf2-print: %d %s lines, want %d", len(lines[rec]), rec, n)
		}
	}
	for _, l := range []string{
		`MPI_SEND 0 Receiver: 1 ("thread 0" <1>), Communicator: "MPI_COMM_WORLD" <0>, Tag: 5, Length: 40`,
		`MPI_RECV 1 Sender: 0 ("thread 0" <0>), Communicator: "MPI_COMM_WORLD" <0>, Tag: 5, Length: 40`,
		`MPI_IRECV 0 Sender: 1 ("thread 0" <1>), Communicator: "MPI_COMM_WORLD" <0>, Tag: 6, Length: 24, Request: 1`,
		`MPI_RECV 0 Sender: 2 ("thread 0" <2>), Communicator: "MPI_COMM_WORLD" <0>, Tag: 8, Length: 8`,
		`MPI_RECV 0 Sender: 1 ("thread 0" <2>), Communicator: "Comm_split:2@0" <1>, Tag: 3, Length: 20`,
		`MPI_COLLECTIVE_END 2 Operation: BCAST, Communicator: "MPI_COMM_WORLD" <0>, Root: 1 ("thread 0" <1>), Sent: 16, Received: 16`,
		`MPI_COLLECTIVE_END 0 Operation: BARRIER, Communicator: "MPI_COMM_WORLD" <0>, Root: NONE, Sent: 0, Received: 0`,
	} {
		rec, rest, _ := strings.Cut(l, " ")
		found := false
		for _, x := range lines[rec] {
			found = found || x == rest
		}
		if !found {
			t.Errorf("otf2-print: no line %q", l)
		}
	}
	// The loop of 6 MPI_Bcast from root 0 alternates 8 and 16 bytes.
	for _, b := range []int{8, 16} {
		l := fmt.Sprintf(`Operation: BCAST, Communicator: "MPI_COMM_WORLD" <0>, Root: 0 ("thread 0" <0>), Sent: %d, Received: %d`, b, b)
		n := 0
		for _, x := range lines["MPI_COLLECTIVE_END"] {
			if _, rest, _ := strings.Cut(x, " "); rest == l {
				n++
			}
		}
		if n != 9 {
			t.Errorf("otf2-print: %d MPI_COLLECTIVE_END lines %q, want 9 (3 ranks x 3)", n, l)
		}
	}
	// Nonblocking collectives complete with their operation, root and
	// bytes (request ids depend on each rank's earlier posts).
	nbc := []string{
		`NON_BLOCKING_COLLECTIVE_COMPLETE 0 Operation: BCAST, Communicator: "MPI_COMM_WORLD" <0>, Root: 2 ("thread 0" <2>), Sent: 16, Received: 16`,
		`NON_BLOCKING_COLLECTIVE_COMPLETE 1 Operation: BARRIER, Communicator: "MPI_COMM_WORLD" <0>, Root: NONE, Sent: 0, Received: 0`,
	}
	if isr == 1 {
		nbc = append(nbc, `NON_BLOCKING_COLLECTIVE_COMPLETE 2 Operation: ALLREDUCE, Communicator: "MPI_COMM_WORLD" <0>, Root: NONE, Sent: 8, Received: 8`)
	}
	for _, l := range nbc {
		rec, rest, _ := strings.Cut(l, " ")
		n := 0
		for _, x := range lines[rec] {
			if strings.HasPrefix(x, rest+", Request: ") {
				n++
			}
		}
		if want := 1 + strings.Count(l, "ALLREDUCE"); n != want {
			t.Errorf("otf2-print: %d lines %q, want %d", n, l, want)
		}
	}
	if t.Failed() {
		t.Logf("%s", text)
	}
	// Perfetto: structure, tracks, flows in pairs.
	checkPerfetto(t, j, 3)
}

func otf2Print(t *testing.T, dir string) string {
	t.Helper()
	bin := testutil.RequireTool(t, "otf2-print")
	out, err := exec.Command(bin, filepath.Join(dir, "traces.otf2")).CombinedOutput()
	if err != nil || strings.Contains(string(out), "ERROR") {
		t.Fatalf("otf2-print: %v\n%s", err, out)
	}
	return string(out)
}

func checkPerfetto(t *testing.T, j *trace.Job, ranks int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	p := trace.NewPerfettoWriter(f)
	if err := trace.NewWalker(j, trace.WalkOptions{}).Walk(p); err != nil {
		t.Fatal(err)
	}
	p.Close()
	f.Close()
	b, _ := os.ReadFile(path)
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("perfetto JSON: %v", err)
	}
	pids := map[float64]bool{}
	flows := map[string]string{}
	for _, e := range doc.TraceEvents {
		ph, _ := e["ph"].(string)
		if _, ok := e["pid"].(float64); !ok {
			t.Fatalf("event without pid: %v", e)
		}
		if _, ok := e["tid"].(float64); !ok {
			t.Fatalf("event without tid: %v", e)
		}
		switch ph {
		case "X":
			pids[e["pid"].(float64)] = true
			if _, ok := e["dur"].(float64); !ok {
				t.Errorf("X without dur: %v", e)
			}
			if _, ok := e["args"].(map[string]any); !ok {
				t.Errorf("X without args: %v", e)
			}
		case "s", "f":
			id := e["id"].(string)
			flows[id] += ph
		case "M", "B", "E", "i":
		default:
			t.Errorf("unexpected phase %q", ph)
		}
	}
	if len(pids) != ranks {
		t.Errorf("%d processes, want %d", len(pids), ranks)
	}
	for id, s := range flows {
		if s != "sf" && s != "fs" {
			t.Errorf("flow %s: %q, want one start and one finish", id, s)
		}
	}
	if len(flows) == 0 {
		t.Errorf("no flows")
	}
}

func TestTracePcontrol(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		job := filepath.Join(dir, "job")
		prog := mpitest.Compile(t, f.MPICC, "trace/pcontrol.c", dir)
		res := f.Exec(t, mpitest.Run{NP: 2, Env: map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_SUMMARY": "0"},
			Preload: f.Lib(), Args: []string{prog, job}})
		if res.Err != nil {
			t.Fatalf("mpirun: %v\n%s", res.Err, res.Stderr)
		}
		var before, after int
		if _, err := fmtSscan(res.Stdout, &before, &after); err != nil || after <= before || before < 0 {
			t.Errorf("flush: trace file %d bytes before Pcontrol(2), %d after (stdout %q)", before, after, res.Stdout)
		}
		c, _ := walk(t, job, false)
		for r := 0; r < 2; r++ {
			if n := c.calls[[2]any{r, "MPI_Barrier"}]; n != 2 {
				t.Errorf("rank %d: %d barriers traced, want 2", r, n)
			}
			if n := c.calls[[2]any{r, "MPI_Allreduce"}]; n != 1 {
				t.Errorf("rank %d: %d allreduces traced, want 1", r, n)
			}
		}
		if strings.Join(c.marks, ",") != "in window,in window" {
			t.Errorf("markers %q", c.marks)
		}
	})
}

func TestTraceClock(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		// Rank 1's clock pretends to be 50 ms ahead.
		job, _ := run(t, f, "order.c", 2, map[string]string{"MPISCOPE_TRACE": "1", "MPISCOPE_TRACE_SKEW_NS": "50000000"})
		bad := func(noClock bool) int {
			c, _ := walk(t, job, noClock)
			n := 0
			if len(c.sends) != 40 {
				t.Errorf("%d sends, want 40", len(c.sends))
			}
			for id, s := range c.sends {
				r, ok := c.recvs[id]
				if !ok {
					t.Errorf("unmatched send")
					continue
				}
				if r.T1 < s.T0 {
					n++
				}
			}
			return n
		}
		if n := bad(true); n == 0 {
			t.Errorf("without correction no message goes backwards: the skew was not applied")
		}
		if n := bad(false); n != 0 {
			t.Errorf("with correction %d of 40 messages are received before they were sent", n)
		}
	})
}

// shapeLog keeps, per rank, the message fields of each MPI_Send, MPI_Recv
// and MPI_Bcast in order.
type shapeLog map[[2]any][][3]int64 // (rank, fn) -> (peer, tag, bytes); Bcast: (root, -1, bytes)

func (s shapeLog) Call(x *trace.Call) error {
	k := [2]any{x.Rank, x.Fn}
	switch {
	case x.Fn == "MPI_Send" && x.Send != nil:
		s[k] = append(s[k], [3]int64{int64(x.Send.Peer), int64(x.Send.Tag), x.Send.Bytes})
	case x.Fn == "MPI_Recv" && x.Recv != nil:
		s[k] = append(s[k], [3]int64{int64(x.Recv.Peer), int64(x.Recv.Tag), x.Recv.Bytes})
	case x.Fn == "MPI_Bcast":
		s[k] = append(s[k], [3]int64{int64(x.Root), -1, x.CollBytes})
	}
	return nil
}
func (shapeLog) Region(int, int, bool, string, float64) error { return nil }
func (shapeLog) Mark(int, int, string, float64) error         { return nil }

// TestTraceShapes checks every event of calls from one call site whose
// shapes (peer, tag, bytes, root) outnumber a trace buffer's dictionary
// slots: an event must never take the short record of another shape that
// met it in a slot.
func TestTraceShapes(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		job, res := run(t, f, "shapes.c", 3, map[string]string{"MPISCOPE_TRACE": "1"})
		if !strings.Contains(res.Stdout, "shapes done") {
			t.Fatalf("program output %q", res.Stdout)
		}
		j, err := trace.OpenJob(job)
		if err != nil {
			t.Fatal(err)
		}
		s := shapeLog{}
		if err := trace.NewWalker(j, trace.WalkOptions{}).Walk(s); err != nil {
			t.Fatal(err)
		}
		const n, nb = 2200, 1100
		want := shapeLog{}
		for i := int64(0); i < n; i++ {
			want[[2]any{0, "MPI_Send"}] = append(want[[2]any{0, "MPI_Send"}], [3]int64{1 + i%2, i, i})
			k := [2]any{int(1 + i%2), "MPI_Recv"}
			want[k] = append(want[k], [3]int64{0, i, i})
		}
		for r := 0; r < 3; r++ {
			for i := int64(0); i < nb; i++ {
				k := [2]any{r, "MPI_Bcast"}
				want[k] = append(want[k], [3]int64{i % 3, -1, i})
			}
		}
		for k, w := range want {
			g := s[k]
			if len(g) != len(w) {
				t.Errorf("rank %v %v: %d events, want %d", k[0], k[1], len(g), len(w))
				continue
			}
			bad := 0
			for i := range w {
				if g[i] != w[i] {
					if bad < 3 {
						t.Errorf("rank %v %v event %d: (peer/root, tag, bytes) %v, want %v", k[0], k[1], i, g[i], w[i])
					}
					bad++
				}
			}
			if bad > 0 {
				t.Errorf("rank %v %v: %d of %d events wrong", k[0], k[1], bad, len(w))
			}
		}
	})
}

// TestTraceSample: the bundled sample (examples/sample.c) on 4 ranks, a
// halo exchange of 200 steps whose end ranks post to MPI_PROC_NULL. Open
// MPI gives sends that complete at once and requests to MPI_PROC_NULL one
// shared handle, MPICH its lightweight request: every post must still be
// completed once. Per step: 6 Isend and 6 Irecv that are messages (two
// per inner rank, one per end rank).
func TestTraceSample(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		prog := mpitest.Compile(t, f.MPICC, mpitest.Testdata("../../examples/sample.c"), dir)
		job := filepath.Join(dir, "job")
		res := f.Exec(t, mpitest.Run{NP: 4, Env: map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_SUMMARY": "0",
			"MPISCOPE_TRACE": "1"}, Preload: f.Lib(), Args: []string{prog}, Dir: dir})
		if res.Err != nil {
			t.Fatalf("mpirun: %v\n%s", res.Err, res.Stderr)
		}
		j, err := trace.OpenJob(job)
		if err != nil {
			t.Fatal(err)
		}
		w := trace.NewWalker(j, trace.WalkOptions{})
		done := map[int][2]int{} // rank -> sends, receives completed per Waitall (the last seen)
		bad := 0
		if err := w.Walk(callVisitor(func(c *trace.Call) error {
			if c.Fn != "MPI_Waitall" {
				return nil
			}
			got := [2]int{len(c.SendDone), len(c.RecvDone)}
			if p, ok := done[c.Rank]; ok && p != got {
				bad++
			}
			done[c.Rank] = got
			return nil
		})); err != nil {
			t.Fatal(err)
		}
		want := map[int][2]int{0: {1, 1}, 1: {2, 2}, 2: {2, 2}, 3: {1, 1}}
		for r, x := range want {
			if done[r] != x || bad != 0 {
				t.Errorf("rank %d: a Waitall completes %d sends and %d receives, want %v (%d Waitalls differ)", r, done[r][0], done[r][1], x, bad)
			}
		}
		if w.Unmatched != 0 {
			t.Errorf("%d unmatched completions, want 0", w.Unmatched)
		}
		out := filepath.Join(dir, "otf2")
		w2 := trace.NewWalker(j, trace.WalkOptions{})
		o, err := trace.NewOTF2Writer(out, w2)
		if err != nil {
			t.Fatal(err)
		}
		if err := w2.Walk(o); err != nil {
			t.Fatal(err)
		}
		if err := o.Close(); err != nil {
			t.Fatal(err)
		}
		lines := otf2Lines(otf2Print(t, out))
		for rec, n := range map[string]int{"MPI_ISEND": 1200, "MPI_ISEND_COMPLETE": 1200, "MPI_IRECV_REQUEST": 1200,
			"MPI_IRECV": 1200, "MPI_COLLECTIVE_BEGIN": 4 * 202, "MPI_COLLECTIVE_END": 4 * 202} {
			if len(lines[rec]) != n {
				t.Errorf("otf2-print: %d %s lines, want %d", len(lines[rec]), rec, n)
			}
		}
	})
}

// otf2Lines groups otf2-print's event lines by record: "location rest".
func otf2Lines(text string) map[string][]string {
	lines := map[string][]string{}
	re := regexp.MustCompile(`^([A-Z_]+)\s+(\d+)\s+\d+\s*(.*)$`)
	for _, l := range strings.Split(text, "\n") {
		if g := re.FindStringSubmatch(l); g != nil {
			lines[g[1]] = append(lines[g[1]], g[2]+" "+g[3])
		}
	}
	return lines
}

// callVisitor is a Visitor that sees calls only.
type callVisitor func(c *trace.Call) error

func (f callVisitor) Call(c *trace.Call) error                   { return f(c) }
func (callVisitor) Region(int, int, bool, string, float64) error { return nil }
func (callVisitor) Mark(int, int, string, float64) error         { return nil }

// TestTraceInterComm: a program with an intercommunicator converts to an
// OTF2 archive otf2-print reads without a warning: the intercommunicator
// defined, its 12 messages each sent, completed and received.
func TestTraceInterComm(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		job, _ := run(t, f, "inter.c", 4, map[string]string{"MPISCOPE_TRACE": "1"})
		j, err := trace.OpenJob(job)
		if err != nil {
			t.Fatal(err)
		}
		out, w := writeOTF2(t, j, job)
		if w.Unmatched != 0 {
			t.Errorf("%d unmatched completions", w.Unmatched)
		}
		bin, err := exec.LookPath("otf2-print")
		if err != nil {
			mpitest.Skip(t, "otf2-print not installed")
		}
		b, err := exec.Command(bin, "-A", filepath.Join(out, "traces.otf2")).CombinedOutput()
		text := string(b)
		if err != nil || strings.Contains(text, "WARNING") || strings.Contains(text, "ERROR") {
			t.Fatalf("otf2-print: %v\n%s", err, text)
		}
		if n := strings.Count(text, "\nINTER_COMM "); n != 1 {
			t.Errorf("%d INTER_COMM definitions, want 1", n)
		}
		lines := otf2Lines(text)
		for rec, n := range map[string]int{"MPI_ISEND": 12, "MPI_ISEND_COMPLETE": 12, "MPI_IRECV_REQUEST": 12, "MPI_IRECV": 12} {
			if len(lines[rec]) != n {
				t.Errorf("otf2-print: %d %s lines, want %d", len(lines[rec]), rec, n)
			}
		}
		if t.Failed() {
			t.Logf("%s", text)
		}
	})
}

// TestTraceCheapLoop: 1,000 MPI_Comm_get_attr in a tight loop on one rank
// (3 bytes per event before compression once packed) convert.
func TestTraceCheapLoop(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		job, _ := run(t, f, "attr.c", 1, map[string]string{"MPISCOPE_TRACE": "1"})
		c, _ := walk(t, job, false)
		if n := c.calls[[2]any{0, "MPI_Comm_get_attr"}]; n != 1000 {
			t.Errorf("%d MPI_Comm_get_attr calls, want 1000", n)
		}
	})
}
