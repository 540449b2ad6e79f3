package trace

import (
	"fmt"
	"sort"
	"testing"
)

// testdata/pin-paths-r0.mst is rank 0's trace (format version 3, packed
// at finalize) of testdata/progs/callpath/calltree.c on 2 ranks at
// MPISCOPE_DEPTH=3 (testdata/README.md has the recipe): its calls hold
// path keys and the thread's path table is a Q block. Every later version
// must read it to the paths the program makes by construction, whatever
// the addresses: MPI_Allreduce 35 calls from halo, whose paths' outermost
// frames (main's return addresses) split them 10 (solve), 20 (precond)
// and 5 (output); MPI_Barrier 3 from rec(0) under rec(1) and rec(2) (the
// two outer frames one return address); MPI_Bcast 7; MPI_Scan 3;
// MPI_Comm_rank 1; every path of 3 frames, the callsite first.
func TestReadPinnedPaths(t *testing.T) {
	const name = "testdata/pin-paths-r0.mst"
	checkBlocks(t, name, "HLSCKEKLQSF") // padding left out
	r, err := OpenRank(name)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Complete || r.Header.Rank != 0 || r.Header.Size != 2 {
		t.Errorf("header %+v, complete %v", *r.Header, r.Complete)
	}
	calls := map[string]int{}
	outer := map[string]map[uint64]int{}
	err = r.Scan(func(tid int, evs []Event) error {
		for _, e := range evs {
			if !e.IsCall() {
				continue
			}
			fn := r.FnName(int(e.Fn))
			fr := r.PathFrames(e.Path)
			if len(fr) != 3 || fr[0] != e.PC {
				t.Errorf("%s: path %d frames %x, callsite %x", fn, e.Path, fr, e.PC)
				continue
			}
			if fn == "MPI_Barrier" && fr[1] != fr[2] {
				t.Errorf("MPI_Barrier: path %x, want rec's return address twice above the callsite", fr)
			}
			calls[fn]++
			if outer[fn] == nil {
				outer[fn] = map[uint64]int{}
			}
			outer[fn][fr[2]]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"MPI_Allreduce": 35, "MPI_Barrier": 3, "MPI_Bcast": 7, "MPI_Scan": 3, "MPI_Comm_rank": 1}
	if fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("calls %v, want %v", calls, want)
	}
	var split []int
	for _, n := range outer["MPI_Allreduce"] {
		split = append(split, n)
	}
	sort.Ints(split)
	if fmt.Sprint(split) != "[5 10 20]" {
		t.Errorf("MPI_Allreduce by outermost frame %v, want [5 10 20]", split)
	}
	// output()'s loop is unrolled: halo() is called from 5 return
	// addresses there, one path each; solve's and precond's loops are
	// not. 7 paths of MPI_Allreduce and one of each other function.
	if len(r.Paths) != 11 {
		t.Errorf("%d paths, want 11", len(r.Paths))
	}
}
