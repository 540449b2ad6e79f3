package trace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// objRank writes a rank file whose functions are one-sided and I/O calls
// (objFns), its events raw (as the C recorder writes them).
func objRank(t testing.TB, job string, rank, size int, evs []Event) {
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
	classes := make([]string, len(objFns))
	for i, n := range objFns {
		classes[i] = "rma"
		if strings.HasPrefix(n, "MPI_File") {
			classes[i] = "io"
		}
		if n == "MPI_Wait" {
			classes[i] = "wait"
		}
	}
	bw.Block(BHeader, EncodeHeader(&Header{Rank: rank, Size: size, PID: 100 + rank, Host: "h", Family: "test",
		Tool: "0", Timer: "clock", FnNames: objFns, FnClasses: classes}))
	bw.Block(BCalib, EncodeCalib(Calib{NsPerTick: 1}))
	world := make([]int, size)
	for i := range world {
		world[i] = i
	}
	bw.Block(BComm, EncodeComm(&CommDef{ID: 0, Key: "world", Size: size, World: world}))
	bw.Block(BFile, EncodeName(0, "out.dat"))
	bw.Block(BRaw, AppendRaw(nil, 1000+rank, evs))
	bw.Block(BFinal, EncodeFinal(Final{}))
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
}

var objFns = []string{"MPI_Win_create", "MPI_Win_fence", "MPI_Put", "MPI_Rget", "MPI_Wait", "MPI_Win_free",
	"MPI_File_open", "MPI_File_write_at", "MPI_File_iread_at", "MPI_File_close", "MPI_Win_lock", "MPI_Win_unlock",
	"MPI_Win_post", "MPI_Win_start", "MPI_Win_complete", "MPI_Win_wait", "MPI_Compare_and_swap"}

func objEv(kind uint8, fn uint16, t0, t1 uint64, id int32, peer int32, sb, rb int64, rtag int32) Event {
	return Event{Kind: kind, Fn: fn, Comm: 0, T0: t0, T1: t1, PC: 0x401000 + uint64(fn), SPeer: peer, STag: id,
		RPeer: -1, RTag: rtag, SBytes: sb, RBytes: rb}
}

// TestOTF2RmaIo: one-sided and MPI-IO records of two synthetic ranks (a
// window: fence epoch with a put, an Rget waited, a lock epoch with a
// compare-and-swap, a post/start/complete/wait epoch; a file: open, a
// write, an iread waited, close) convert to OTF2 that otf2-print reads,
// with the records, targets, bytes and completions they describe.
func TestOTF2RmaIo(t *testing.T) {
	job := t.TempDir()
	for r := 0; r < 2; r++ {
		objRank(t, job, r, 2, objEvents(r))
	}
	out := filepath.Join(t.TempDir(), "otf2")
	w := convertOTF2(t, job, out)
	if w.Unmatched != 0 {
		t.Errorf("%d unmatched", w.Unmatched)
	}
	text := otf2Print(t, out)
	m := countLines(t, text)
	for k, n := range map[string]int{"RMA_WIN_CREATE": 2, "RMA_WIN_DESTROY": 2, "RMA_COLLECTIVE_BEGIN": 8,
		"RMA_COLLECTIVE_END": 8, "RMA_PUT": 4, "RMA_GET": 2, "RMA_ATOMIC": 2, "RMA_OP_COMPLETE_BLOCKING": 6,
		"RMA_OP_COMPLETE_NON_BLOCKING": 2, "RMA_REQUEST_LOCK": 2, "RMA_ACQUIRE_LOCK": 2, "RMA_RELEASE_LOCK": 2,
		"RMA_GROUP_SYNC": 8, "IO_CREATE_HANDLE": 2, "IO_DESTROY_HANDLE": 2, "IO_OPERATION_BEGIN": 4,
		"IO_OPERATION_ISSUED": 2, "IO_OPERATION_COMPLETE": 4} {
		if len(m[k]) != n {
			t.Errorf("%s: %d lines, want %d", k, len(m[k]), n)
		}
	}
	for _, want := range []string{
		`RMA_PUT 0 300 Window: "window 0 on MPI_COMM_WORLD" <0>, Remote: 1 ("thread 0" <1>), Bytes: 8, Matching: 1`,
		`RMA_GET 1 400 Window: "window 0 on MPI_COMM_WORLD" <0>, Remote: 0 ("thread 0" <0>), Bytes: 16, Matching: 2`,
		`IO_OPERATION_COMPLETE 0 1400 Handle: "out.dat" <0>, Bytes Result: 48, Matching Id: 6`,
	} {
		if !strings.Contains(strings.Join(strings.Fields(text), " "), want) {
			t.Errorf("otf2-print: no %q", want)
		}
	}
	defs := otf2PrintArgs(t, out, "-G")
	for _, want := range []string{"RMA_WIN ", "IO_PARADIGM ", "IO_REGULAR_FILE ", "IO_HANDLE "} {
		if !strings.Contains(defs, "\n"+want) {
			t.Errorf("otf2-print -G: no %s", want)
		}
	}
	if t.Failed() {
		t.Logf("%s\n%s", text, defs)
	}
}

// objEvents are rank r's events of TestOTF2RmaIo (the other rank is its
// target): a window's epochs and communications, a file's operations.
func objEvents(r int) []Event {
	p := int32(1 - r)
	rget := objEv(KRma, 3, 400, 410, 0, p, 0, 16, -1)
	rget.Flags, rget.Req = FReq, 0x77
	iread := objEv(KIo, 8, 1300, 1310, 0, -1, 0, 64, -1)
	iread.Flags, iread.Req = FReq, 0x88
	return []Event{
		objEv(KRma, 0, 100, 200, 0, -1, 0, 0, -1),
		objEv(KRma, 1, 210, 220, 0, -1, 0, 0, -1),
		objEv(KRma, 2, 300, 310, 0, p, 8, 0, -1),
		objEv(KRma, 1, 320, 330, 0, -1, 0, 0, -1),
		rget,
		{Kind: KComplete, T0: 500, T1: 500, Req: 0x77, Comm: -1, SPeer: -1, STag: -1, RPeer: -1, RTag: -1},
		{Kind: KCall, Fn: 4, T0: 450, T1: 500, Comm: -1, SPeer: -1, STag: -1, RPeer: -1, RTag: -1},
		objEv(KRma, 10, 600, 610, 0, p, 0, 0, 1),
		objEv(KRma, 16, 620, 630, 0, p, 8, 8, -1),
		objEv(KRma, 11, 640, 650, 0, p, 0, 0, -1),
		objEv(KRma, 12, 700, 710, 0, -1, 1<<p, 0, 1),
		objEv(KRma, 13, 720, 730, 0, -1, 1<<p, 0, 1),
		objEv(KRma, 2, 740, 750, 0, p, 8, 0, -1),
		objEv(KRma, 14, 760, 770, 0, -1, 0, 0, -1),
		objEv(KRma, 15, 780, 790, 0, -1, 0, 0, -1),
		objEv(KRma, 5, 900, 1000, 0, -1, 0, 0, -1),
		objEv(KIo, 6, 1100, 1200, 0, -1, 0, 0, 9),
		objEv(KIo, 7, 1210, 1220, 0, -1, 64, 0, -1),
		iread,
		{Kind: KComplete, Flags: FLocal, T0: 1400, T1: 1400, Req: 0x88, Comm: -1, SPeer: -1, STag: -1, RPeer: -1, RTag: -1, RBytes: 48},
		{Kind: KCall, Fn: 4, T0: 1350, T1: 1400, Comm: -1, SPeer: -1, STag: -1, RPeer: -1, RTag: -1},
		objEv(KIo, 9, 1500, 1600, 0, -1, 0, 0, -1),
	}
}
