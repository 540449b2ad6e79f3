package trace

import (
	"bytes"
	"compress/flate"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pathsRank writes rank 0 of a job whose calls hold path keys (as the
// library writes them at MPISCOPE_DEPTH > 1) in blocks of kind (BRaw or
// BEvents), with the thread's path table: index 5 is halo < solve < main,
// index 9 halo < precond < main. Calls: 2 on path 5, 3 on path 9, one in
// the "other paths" bucket (its callsite kept), one whose path the table
// lacks, and one plain callsite.
func pathsRank(t *testing.T, kind byte, table bool) string {
	t.Helper()
	job := t.TempDir()
	path := RankPath(job, 0)
	os.MkdirAll(filepath.Dir(path), 0o777)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bw, _ := NewBlockWriter(f)
	bw.Block(BHeader, EncodeHeader(&Header{Rank: 0, Size: 1, PID: 1000, Host: "h", Family: "test", Tool: "0", Timer: "clock",
		FnNames:   []string{"MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv", "MPI_Wait", "MPI_Barrier", "MPI_Allreduce"},
		FnClasses: []string{"p2p", "p2p", "p2p", "p2p", "wait", "coll", "coll"}}))
	bw.Block(BCalib, EncodeCalib(Calib{NsPerTick: 1}))
	bw.Block(BComm, EncodeComm(&CommDef{ID: 0, Key: "world", Size: 1, World: []int{0}}))
	var evs []Event
	tm := uint64(1000)
	add := func(pc uint64) {
		e := call(6, tm, tm+10)
		e.PC = pc
		evs = append(evs, e)
		tm += 100
	}
	for _, pc := range []uint64{PathTag | 5, PathTag | 9, PathTag | 9, PathTag | 5, PathTag | 9,
		PathTag | PathOther | 0x401234, PathTag | 77, 0x401000} {
		add(pc)
	}
	p := AppendRaw(nil, 1000, evs)
	if kind == BEvents {
		fw, _ := flate.NewWriter(nil, flate.BestSpeed)
		if p, err = AppendEvents(nil, 1000, evs, fw, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
	}
	bw.Block(kind, p)
	if table {
		bw.Block(BPaths, EncodePaths(&ThreadPaths{Tid: 1000, Index: []uint32{5, 9},
			Frames: [][]uint64{{0x401005, 0x402000, 0x403000}, {0x401005, 0x402100, 0x403010}}}))
		// Another thread with path 5's frames under another index: the
		// same path id.
		bw.Block(BPaths, EncodePaths(&ThreadPaths{Tid: 1001, Index: []uint32{2}, Frames: [][]uint64{{0x401005, 0x402000, 0x403000}}}))
	}
	bw.Block(BFinal, EncodeFinal(Final{Events: uint64(len(evs))}))
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	return job
}

// TestPaths: a path key comes back as its callsite and the rank's path id
// (raw and compressed blocks alike); the "other paths" bucket as its
// callsite without a path; a key whose table is missing as neither.
func TestPaths(t *testing.T) {
	for _, kind := range []byte{BRaw, BEvents} {
		for _, table := range []bool{true, false} {
			t.Run(fmt.Sprintf("%c/table=%v", kind, table), func(t *testing.T) {
				r, err := OpenRank(RankPath(pathsRank(t, kind, table), 0))
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				if err := r.Scan(func(tid int, evs []Event) error {
					for _, e := range evs {
						got = append(got, fmt.Sprintf("%x/%d%x", e.PC, e.Path, r.PathFrames(e.Path)))
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				a, b := "401005/1[401005 402000 403000]", "401005/2[401005 402100 403010]"
				want := []string{a, b, b, a, b, "401234/0[]", "0/0[]", "401000/0[]"}
				if !table {
					want = []string{"0/0[]", "0/0[]", "0/0[]", "0/0[]", "0/0[]", "401234/0[]", "0/0[]", "401000/0[]"}
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("events (pc/path frames)\n%v\nwant\n%v", got, want)
				}
				// The view's reader of indexed blocks too, raw blocks
				// (MPISCOPE_TRACE_COMPRESS=off) and packed alike.
				idx, err := r.Index()
				if err != nil {
					t.Fatal(err)
				}
				var viaIndex []string
				for _, sp := range idx {
					_, evs, err := r.ReadBlock(sp, nil)
					if err != nil {
						t.Fatal(err)
					}
					for _, e := range evs {
						viaIndex = append(viaIndex, fmt.Sprintf("%x/%d%x", e.PC, e.Path, r.PathFrames(e.Path)))
					}
				}
				if fmt.Sprint(viaIndex) != fmt.Sprint(want) {
					t.Errorf("events read by Index and ReadBlock\n%v\nwant\n%v", viaIndex, want)
				}
				if n := len(r.Paths); table && n != 2 || !table && n != 0 {
					t.Errorf("%d paths", n)
				}
			})
		}
	}
}

// TestPathsCorrupt: a path table that does not decode names the file and
// the block's offset.
func TestPathsCorrupt(t *testing.T) {
	for name, p := range map[string][]byte{
		"no frame":  {0xe8, 0x07, 1, 5, 0},
		"truncated": {0xe8, 0x07, 1, 5, 3, 1},
		"trailing":  append(EncodePaths(&ThreadPaths{Tid: 1, Index: []uint32{1}, Frames: [][]uint64{{1}}}), 7),
	} {
		if _, err := decodePaths(p); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	job := t.TempDir()
	path := RankPath(job, 0)
	os.MkdirAll(filepath.Dir(path), 0o777)
	var b bytes.Buffer
	bw, _ := NewBlockWriter(&b)
	bw.Block(BHeader, EncodeHeader(&Header{Size: 1, FnNames: []string{"MPI_Send"}, FnClasses: []string{"p2p"}}))
	off := bw.Offset()
	bw.Block(BPaths, []byte{0xe8, 0x07, 1, 5, 0})
	bw.Flush()
	os.WriteFile(path, b.Bytes(), 0o666)
	_, err := OpenRank(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), fmt.Sprint(off)) {
		t.Errorf("error %v, want the file and offset %d", err, off)
	}
}
