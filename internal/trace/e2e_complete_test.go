package trace_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/internal/testutil"
	"github.com/mpiscope/mpiscope/internal/trace"
)

// rawCount runs fn on every event of every rank of a job and returns the
// counts it keyed, per rank.
func rawCount(t *testing.T, j *trace.Job, fn func(r *trace.Rank, e *trace.Event, n map[string]int)) []map[string]int {
	t.Helper()
	var out []map[string]int
	for _, r := range j.Ranks {
		n := map[string]int{}
		err := r.Scan(func(tid int, evs []trace.Event) error {
			for i := range evs {
				fn(r, &evs[i], n)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// toOTF2 converts a job to OTF2 beside it and returns otf2-print's output,
// its lines by record name, and the walker (Unmatched).
// writeOTF2 walks the job j (opened from the directory job) into an OTF2
// archive beside it, and returns the archive's directory and the walker.
func writeOTF2(t *testing.T, j *trace.Job, job string) (string, *trace.Walker) {
	t.Helper()
	w := trace.NewWalker(j, trace.WalkOptions{})
	out := filepath.Join(filepath.Dir(job), "otf2")
	o, err := trace.NewOTF2Writer(out, w)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Walk(o); err != nil {
		t.Fatal(err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	return out, w
}

func toOTF2(t *testing.T, job string) (string, map[string][]string, *trace.Walker) {
	t.Helper()
	j, err := trace.OpenJob(job)
	if err != nil {
		t.Fatal(err)
	}
	out, w := writeOTF2(t, j, job)
	text := otf2Print(t, out)
	return text, otf2Lines(text), w
}

// otf2Defs returns otf2-print -G's output: the global definitions.
func otf2Defs(t *testing.T, dir string) string {
	t.Helper()
	bin := testutil.RequireTool(t, "otf2-print")
	out, err := exec.Command(bin, "-G", filepath.Join(dir, "traces.otf2")).CombinedOutput()
	if err != nil || strings.Contains(string(out), "ERROR") {
		t.Fatalf("otf2-print -G: %v\n%s", err, out)
	}
	return string(out)
}

// perfettoJSON converts a job to Perfetto JSON.
func perfettoJSON(t *testing.T, job string) []byte {
	t.Helper()
	j, err := trace.OpenJob(job)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	p := trace.NewPerfettoWriter(&b)
	if err := trace.NewWalker(j, trace.WalkOptions{}).Walk(p); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// perfettoArgs converts a job to Perfetto JSON and counts the "X" slices'
// arguments by key, a numbered key ("completed_rma_op_3") under its prefix
// ("completed_rma_op"); flows ("s" and "f") count under "flow start" and
// "flow finish".
func perfettoArgs(t *testing.T, job string) map[string]int {
	t.Helper()
	j, err := trace.OpenJob(job)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	p := trace.NewPerfettoWriter(&b)
	if err := trace.NewWalker(j, trace.WalkOptions{}).Walk(p); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Ph   string         `json:"ph"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("perfetto JSON: %v", err)
	}
	n := map[string]int{}
	num := regexp.MustCompile(`_\d+$`)
	for _, e := range doc.TraceEvents {
		switch e.Ph {
		case "s":
			n["flow start"]++
		case "f":
			n["flow finish"]++
		case "X":
			for k := range e.Args {
				n[num.ReplaceAllString(k, "")]++
			}
		}
	}
	return n
}

// wantCounts compares counts with what is wanted (missing keys are 0).
func wantCounts(t *testing.T, what string, got map[string]int, want map[string]int) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d %s, want %d", what, got[k], k, v)
		}
	}
}

// wantLines compares otf2-print's record counts with what is wanted.
func wantLines(t *testing.T, lines map[string][]string, want map[string]int) {
	t.Helper()
	for rec, n := range want {
		if len(lines[rec]) != n {
			t.Errorf("otf2-print: %d %s lines, want %d", len(lines[rec]), rec, n)
		}
	}
}

// rawCpls counts the completions records in the raw (W) blocks of rank
// r's trace file and the completions they hold.
func rawCpls(t *testing.T, job string, r int) (records, entries int) {
	return rawRecords(t, job, r, trace.RawCplsRecords)
}

// rawRecords sums count (records of one kind and the entries they hold)
// over the raw (W) blocks of rank r's trace file.
func rawRecords(t *testing.T, job string, r int, count func([]byte) (int, int, error)) (records, entries int) {
	t.Helper()
	path := trace.RankPath(job, r)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	br, err := trace.NewBlockReader(f, path)
	if err != nil {
		t.Fatal(err)
	}
	for {
		k, p, err := br.Next()
		if err == io.EOF {
			return records, entries
		}
		if err != nil {
			t.Fatal(err)
		}
		if k != trace.BRaw {
			continue
		}
		n, e, err := count(p)
		if err != nil {
			t.Fatalf("%s: block at %d: %v", path, br.Start(), err)
		}
		records += n
		entries += e
	}
}

// TestTraceIsendCompletion: completions of nonblocking sends and receives
// (isend.c: per rank 30 of each, completed by MPI_Wait, MPI_Waitall and
// MPI_Testany, with eager and rendezvous sizes) say their role in the raw
// trace: 30 send completions per rank without a status, 30 receive
// completions of the other rank's messages, tag 7 (20 of 8 bytes, 10 of
// 262,144); every completion meets its post; OTF2 has 60 of each of
// MpiIsend, MpiIsendComplete, MpiIrecvRequest and MpiIrecv (2 ranks). The
// same with the trace left raw (MPISCOPE_TRACE_COMPRESS=off), where each
// of the 10 MPI_Waitall per rank wrote its 2 completions as one
// completions record (format version 4).
func TestTraceIsendCompletion(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		for _, pack := range []string{"finalize", "off"} {
			t.Run(pack, func(t *testing.T) { testIsendCompletion(t, f, pack) })
		}
	})
}

func testIsendCompletion(t *testing.T, f mpitest.Family, pack string) {
	job, _ := run(t, f, "isend.c", 2, map[string]string{"MPISCOPE_TRACE": "1", "MPISCOPE_TRACE_COMPRESS": pack})
	if pack == "off" {
		for r := 0; r < 2; r++ {
			if n, e := rawCpls(t, job, r); n != 10 || e != 20 {
				t.Errorf("rank %d: %d completions records of %d completions, want 10 of 20", r, n, e)
			}
		}
		// Packed as MPI_Finalize packs it, the trace converts to the
		// same bytes.
		packed := filepath.Join(t.TempDir(), "job")
		if err := os.CopyFS(packed, os.DirFS(job)); err != nil {
			t.Fatal(err)
		}
		for r := 0; r < 2; r++ {
			if err := trace.Pack(trace.RankPath(packed, r)); err != nil {
				t.Fatal(err)
			}
			if n, _ := rawCpls(t, packed, r); n != 0 {
				t.Errorf("rank %d packed: %d completions records", r, n)
			}
		}
		if a, b := perfettoJSON(t, job), perfettoJSON(t, packed); !bytes.Equal(a, b) {
			t.Errorf("Perfetto JSON of the raw trace (%d bytes) differs from the packed one's (%d bytes)", len(a), len(b))
		}
	}
	j, err := trace.OpenJob(job)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Ranks) != 2 {
		t.Fatalf("%d rank traces, want 2", len(j.Ranks))
	}
	counts := rawCount(t, j, func(r *trace.Rank, e *trace.Event, n map[string]int) {
		if e.Kind != trace.KComplete {
			return
		}
		switch {
		case e.Flags&trace.FSend != 0 && e.Flags&trace.FRecv == 0:
			n["send completion"]++
			if e.RPeer != -1 || e.RBytes != 0 {
				n["send completion with a receive"]++
			}
		case e.Flags&trace.FRecv != 0 && e.Flags&trace.FSend == 0:
			peer := int32(1 - r.Header.Rank)
			switch {
			case e.RPeer == peer && e.RTag == 7 && e.RBytes == 8:
				n["recv completion of 8 bytes"]++
			case e.RPeer == peer && e.RTag == 7 && e.RBytes == 256*1024:
				n["recv completion of 256 KiB"]++
			default:
				n["recv completion of another message"]++
			}
		default:
			n["other completion"]++
		}
	})
	for i, n := range counts {
		wantCounts(t, "rank "+string(rune('0'+i)), n, map[string]int{"send completion": 30,
			"recv completion of 8 bytes": 20, "recv completion of 256 KiB": 10,
			"send completion with a receive": 0, "recv completion of another message": 0, "other completion": 0})
	}
	text, lines, w := toOTF2(t, job)
	if w.Unmatched != 0 {
		t.Errorf("%d unmatched completions", w.Unmatched)
	}
	wantLines(t, lines, map[string]int{"MPI_ISEND": 60, "MPI_ISEND_COMPLETE": 60, "MPI_IRECV_REQUEST": 60,
		"MPI_IRECV": 60, "MPI_SEND": 0, "MPI_RECV": 0})
	if t.Failed() {
		t.Logf("%s", text)
	}
}

// TestTracePostMemo: nonblocking posts repeated from one call site with
// the same arguments (memo.c, 2 ranks, 4 rounds) take their short record
// from the thread's post memo, while 4,000 other shapes per round take
// over the dictionary's slots, those of the posts among them: every post
// must still decode to its own shape (per rank 12 MPI_Isend of 8 bytes,
// tag 77, to the other rank and 12 MPI_Irecv from any source; each call
// site's posts the last to use their memo entry before the other shapes
// and the first after them; 16,000 MPI_Send to
// MPI_PROC_NULL, no peer, tags 0 to 3999, no bytes), and every message
// match.
func TestTracePostMemo(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		job, _ := run(t, f, "memo.c", 2, map[string]string{"MPISCOPE_TRACE": "1", "MPISCOPE_TRACE_COMPRESS": "off"})
		j, err := trace.OpenJob(job)
		if err != nil {
			t.Fatal(err)
		}
		counts := rawCount(t, j, func(r *trace.Rank, e *trace.Event, n map[string]int) {
			if e.Kind != trace.KCall {
				return
			}
			peer := int32(1 - r.Header.Rank)
			switch fn := r.FnName(int(e.Fn)); {
			case fn == "MPI_Isend" && e.SPeer == peer && e.STag == 77 && e.SBytes == 8 && e.Flags == trace.FSend|trace.FReq:
				n["isend"]++
			case fn == "MPI_Irecv" && e.RPeer == -2 && e.RTag == 77 && e.RBytes == 8 && e.Flags == trace.FRecv|trace.FReq:
				n["irecv"]++
			case fn == "MPI_Send" && e.SPeer == -1 && e.STag >= 0 && e.STag < 4000 && e.SBytes == 0 && e.Flags == trace.FSend:
				n["send to MPI_PROC_NULL"]++
			case fn == "MPI_Isend" || fn == "MPI_Irecv" || fn == "MPI_Send":
				n["other "+fn]++
			}
		})
		for i, n := range counts {
			wantCounts(t, "rank "+string(rune('0'+i)), n, map[string]int{"isend": 12, "irecv": 12,
				"send to MPI_PROC_NULL": 16000, "other MPI_Isend": 0, "other MPI_Irecv": 0, "other MPI_Send": 0})
		}
		w := trace.NewWalker(j, trace.WalkOptions{})
		if err := w.Walk(callVisitor(func(c *trace.Call) error { return nil })); err != nil {
			t.Fatal(err)
		}
		if w.Unmatched != 0 {
			t.Errorf("%d unmatched completions", w.Unmatched)
		}
	})
}

// TestTraceCollComms: nonblocking and persistent collectives on every
// kind of communicator a program creates (nbcoll.c, 4 ranks: world, split,
// dup, create, intercommunicator merge; 19 memberships). OTF2 has one
// NonBlockingCollectiveRequest and one NonBlockingCollectiveComplete per
// Ibcast, Iallreduce and Ibarrier of each membership (57), plus, with MPI
// 4 (MPICH), two per persistent Allreduce (38 more); one
// MpiCollectiveBegin/End per MPI_Barrier (19); every one on a defined
// communicator; the global definitions have a communicator and a group
// for each communicator (world, two split halves, dup, create, merge: 6)
// and the intercommunicator; nothing unmatched.
func TestTraceCollComms(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		job, _ := run(t, f, "nbcoll.c", 4, map[string]string{"MPISCOPE_TRACE": "1"})
		text, lines, w := toOTF2(t, job)
		if w.Unmatched != 0 {
			t.Errorf("%d unmatched completions", w.Unmatched)
		}
		nbc := 57
		if f.Name == "mpich" {
			nbc += 38
		}
		wantLines(t, lines, map[string]int{"NON_BLOCKING_COLLECTIVE_REQUEST": nbc, "NON_BLOCKING_COLLECTIVE_COMPLETE": nbc,
			"MPI_COLLECTIVE_BEGIN": 19, "MPI_COLLECTIVE_END": 19})
		// Per operation: Ibcast and Ibarrier 19 each, Iallreduce 19 (+38).
		ops := map[string]int{}
		for _, l := range lines["NON_BLOCKING_COLLECTIVE_COMPLETE"] {
			if strings.Contains(l, "Communicator: UNDEFINED") {
				t.Errorf("collective without its communicator: %s", l)
			}
			if _, rest, ok := strings.Cut(l, "Operation: "); ok {
				op, _, _ := strings.Cut(rest, ",")
				ops[op]++
			}
		}
		wantCounts(t, "completed collectives", ops, map[string]int{"BCAST": 19, "BARRIER": 19, "ALLREDUCE": nbc - 38})
		defs := otf2Defs(t, filepath.Join(filepath.Dir(job), "otf2"))
		if n, in := strings.Count(defs, "\nCOMM "), strings.Count(defs, "\nINTER_COMM "); n != 6 || in != 1 {
			t.Errorf("otf2-print -G: %d COMM and %d INTER_COMM definitions, want 6 and 1", n, in)
		}
		if t.Failed() {
			t.Logf("%s\n%s", text, defs)
		}
	})
}

// TestTraceRMA: one-sided calls as OTF2 RMA records (rma.c, 2 ranks: 9
// puts, 5 gets, 16 atomics, 8 fences, 5 lock epochs, one lock_all epoch,
// 3 post/start/complete/wait epochs, 2 windows per rank), with their
// targets and bytes; every communication completed once: at the
// synchronization that completes it (29 per rank) or by the MPI_Wait of
// MPI_Rput (1 per rank).
func TestTraceRMA(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		// Open MPI 4.1's osc/rdma refuses windows when vader's single-copy
		// mechanism is off (as the tests run it): osc/pt2pt.
		job, _ := run(t, f, "rma.c", 2, map[string]string{"MPISCOPE_TRACE": "1", "OMPI_MCA_osc": "pt2pt"})
		text, lines, w := toOTF2(t, job)
		if w.Unmatched != 0 {
			t.Errorf("%d unmatched completions", w.Unmatched)
		}
		wantLines(t, lines, map[string]int{"RMA_WIN_CREATE": 4, "RMA_WIN_DESTROY": 4, "RMA_PUT": 18, "RMA_GET": 10,
			"RMA_ATOMIC": 32, "RMA_COLLECTIVE_BEGIN": 24, "RMA_COLLECTIVE_END": 24, "RMA_REQUEST_LOCK": 12,
			"RMA_ACQUIRE_LOCK": 12, "RMA_RELEASE_LOCK": 12, "RMA_SYNC": 12, "RMA_GROUP_SYNC": 24,
			"RMA_OP_COMPLETE_BLOCKING": 58, "RMA_OP_COMPLETE_NON_BLOCKING": 2})
		n := map[string]int{}
		for _, rec := range []string{"RMA_PUT", "RMA_GET", "RMA_ATOMIC"} {
			for _, l := range lines[rec] {
				loc, _, _ := strings.Cut(l, " ")
				want := "Remote: 1 ("
				if loc == "1" {
					want = "Remote: 0 ("
				}
				if !strings.Contains(l, want) {
					n[rec+" to another target"]++
				}
				switch {
				case rec == "RMA_PUT" && strings.Contains(l, "Bytes: 8,"):
					n["put of 8 bytes"]++
				case rec == "RMA_GET" && strings.Contains(l, "Bytes: 16,"):
					n["get of 16 bytes"]++
				case rec == "RMA_ATOMIC" && strings.Contains(l, "Type: ACCUMULATE,") && strings.Contains(l, "Sent: 8, Received: 0,"):
					n["accumulate"]++
				case rec == "RMA_ATOMIC" && strings.Contains(l, "Type: COMPARE_AND_SWAP,") && strings.Contains(l, "Sent: 8, Received: 8,"):
					n["compare and swap"]++
				case rec == "RMA_ATOMIC" && strings.Contains(l, "Type: FETCH_AND_ACCUMULATE,") && strings.Contains(l, "Sent: 8, Received: 8,"):
					n["fetch and accumulate"]++
				}
			}
		}
		wantCounts(t, "RMA communications", n, map[string]int{"put of 8 bytes": 18, "get of 16 bytes": 10,
			"accumulate": 10, "compare and swap": 10, "fetch and accumulate": 12,
			"RMA_PUT to another target": 0, "RMA_GET to another target": 0, "RMA_ATOMIC to another target": 0})
		// Perfetto: every one-sided call names its window (72 a rank);
		// the 30 communications a rank makes have an operation id, each
		// completed once.
		wantCounts(t, "Perfetto arguments", perfettoArgs(t, job), map[string]int{"window": 144, "rma_op": 60,
			"completed_rma_op": 60, "target": 2 * (30 + 5 + 5 + 5)})
		defs := otf2Defs(t, filepath.Join(filepath.Dir(job), "otf2"))
		if n := strings.Count(defs, "\nRMA_WIN "); n != 2 {
			t.Errorf("otf2-print -G: %d RMA_WIN definitions, want 2", n)
		}
		if t.Failed() {
			t.Logf("%s\n%s", text, defs)
		}
	})
}

// TestTraceIO: MPI-IO calls as OTF2 I/O records (io.c, 2 ranks: one file
// handle per rank created and destroyed; 5 writes of 224 bytes and 6 reads
// of 288 bytes per rank, each begun and completed, 3 of them issued
// nonblocking or split, 5 collective; the nonblocking ones completed in MPI_Wait with
// the bytes their status tells).
func TestTraceIO(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		job, _ := run(t, f, "io.c", 2, map[string]string{"MPISCOPE_TRACE": "1"})
		text, lines, w := toOTF2(t, job)
		if w.Unmatched != 0 {
			t.Errorf("%d unmatched completions", w.Unmatched)
		}
		wantLines(t, lines, map[string]int{"IO_CREATE_HANDLE": 2, "IO_DESTROY_HANDLE": 2, "IO_OPERATION_BEGIN": 22,
			"IO_OPERATION_ISSUED": 6, "IO_OPERATION_COMPLETE": 22})
		sum := map[string]int{}
		reqRe := regexp.MustCompile(`Mode: (READ|WRITE), .*Bytes Request: (\d+)`)
		for _, l := range lines["IO_OPERATION_BEGIN"] {
			if m := reqRe.FindStringSubmatch(l); m != nil {
				b, _ := strconv.Atoi(m[2])
				sum[m[1]] += b
			}
			if strings.Contains(l, "COLLECTIVE") {
				sum["collective"]++
			}
		}
		resRe := regexp.MustCompile(`Bytes Result: (\d+)`)
		for _, l := range lines["IO_OPERATION_COMPLETE"] {
			if m := resRe.FindStringSubmatch(l); m != nil {
				b, _ := strconv.Atoi(m[1])
				sum["completed"] += b
			}
		}
		wantCounts(t, "I/O bytes", sum, map[string]int{"WRITE": 448, "READ": 576, "completed": 448 + 576,
			"collective": 2 * 5})
		// Perfetto: the 14 I/O calls of a rank name their file (open,
		// close, 11 operations, the split collective's end); 11 have an
		// operation id; 3 are completed later (2 waits, the _end call).
		wantCounts(t, "Perfetto arguments", perfettoArgs(t, job), map[string]int{"file": 28, "io_op": 22,
			"completed_io_op": 6})
		defs := otf2Defs(t, filepath.Join(filepath.Dir(job), "otf2"))
		for _, d := range []string{"\nIO_PARADIGM ", "\nIO_REGULAR_FILE ", "\nIO_HANDLE "} {
			if n := strings.Count(defs, d); n != 1 {
				t.Errorf("otf2-print -G: %d %s definitions, want 1", n, strings.TrimSpace(d))
			}
		}
		if !strings.Contains(defs, "io.dat") {
			t.Errorf("otf2-print -G: the file's name is not defined")
		}
		if t.Failed() {
			t.Logf("%s\n%s", text, defs)
		}
	})
}

// TestTraceP2PMore: the point-to-point forms beyond send and receive
// (p2pmore.c, 2 ranks: Sendrecv_replace, Bsend/Ssend/Rsend_init, matched
// probes with Mrecv and Imrecv, a cancelled receive, with MPI 4
// Isendrecv and Isendrecv_replace) are every one matched, sender to
// receiver: each send's flow meets exactly one receive's; the cancelled
// receive is marked (MpiRequestCancelled), not matched; nothing is
// unmatched; OTF2 has the records the program makes.
func TestTraceP2PMore(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		job, _ := run(t, f, "p2pmore.c", 2, map[string]string{"MPISCOPE_TRACE": "1"})
		j, err := trace.OpenJob(job)
		if err != nil {
			t.Fatal(err)
		}
		sends, recvs := map[uint64]int{}, map[uint64]int{}
		w := trace.NewWalker(j, trace.WalkOptions{})
		err = w.Walk(callVisitor(func(c *trace.Call) error {
			if c.Send != nil {
				sends[c.Send.Flow]++
			}
			for _, m := range c.StartSend {
				sends[m.Flow]++
			}
			if c.Recv != nil {
				recvs[c.Recv.Flow]++
			}
			for _, m := range c.RecvDone {
				recvs[m.Flow]++
			}
			return nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		v4 := 0
		if f.Name == "mpich" {
			v4 = 1
		}
		if n := 2 * (6 + 3 + 2*v4); len(sends) != n || len(recvs) != n {
			t.Errorf("%d sends and %d receives, want %d each", len(sends), len(recvs), n)
		}
		for fl, n := range sends {
			if n != 1 || recvs[fl] != 1 {
				t.Errorf("flow %x: sent %d times, received %d times", fl, n, recvs[fl])
			}
		}
		// Perfetto: one flow per message, both ends; the cancelled
		// receives marked.
		nf := 2 * (9 + 2*v4)
		wantCounts(t, "Perfetto", perfettoArgs(t, job), map[string]int{"flow start": nf, "flow finish": nf,
			"cancelled_request": 2})
		text, lines, w2 := toOTF2(t, job)
		if w2.Unmatched != 0 {
			t.Errorf("%d unmatched completions", w2.Unmatched)
		}
		wantLines(t, lines, map[string]int{"MPI_SEND": 12, "MPI_RECV": 8, "MPI_ISEND": 6 + 4*v4,
			"MPI_ISEND_COMPLETE": 6 + 4*v4, "MPI_IRECV_REQUEST": 12 + 4*v4, "MPI_IRECV": 10 + 4*v4,
			"MPI_REQUEST_CANCELLED": 2})
		if t.Failed() {
			t.Logf("%s", text)
		}
	})
}
