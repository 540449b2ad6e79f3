package trace

import (
	"bytes"
	"os"
	"testing"
)

// testdata/pin-cpls-r0-raw.mst is rank 0's trace in format version 4 of
// testdata/pin-cpls.c (2 ranks) as mpiscope wrote it on 2026-11-26 with
// MPISCOPE_TRACE_COMPRESS=off: its raw (W) block holds three completions
// records, one per completion call of several requests.
// testdata/pin-cpls-r0.mst is the same file packed by Pack (one E block).
// testdata/README.md has the recipe. Every later version must read both
// to the events below: the program's calls give the kinds, functions,
// flags, peers, tags and bytes; the times, callsites and handles are the
// run's (Open MPI gives the sends complete at once, and the receive from
// MPI_PROC_NULL, its one empty request 0x7fc9a5321cc0).
var pinCplsEvents = []Event{
	{Kind: 1, Flags: 0, Fn: 56, Comm: 0, T0: 0x89621f33da2e, T1: 0x89621f3410d2, PC: 0x55b086653203, SPeer: -1, STag: -1, RPeer: -1, RTag: -1},                                 // MPI_Comm_rank
	{Kind: 1, Flags: 6, Fn: 218, Comm: 0, T0: 0x89621fa98b9c, T1: 0x89621fa9deb0, PC: 0x55b086653255, Req: 0x55b08cd1c500, SPeer: -1, STag: -1, RPeer: 1, RTag: 3, RBytes: 16}, // MPI_Irecv
	{Kind: 1, Flags: 6, Fn: 218, Comm: 0, T0: 0x89621faa38fa, T1: 0x89621faa39ca, PC: 0x55b086653255, Req: 0x55b08cd1c200, SPeer: -1, STag: -1, RPeer: 1, RTag: 3, RBytes: 16}, // MPI_Irecv
	{Kind: 1, Flags: 6, Fn: 218, Comm: 0, T0: 0x89621faa4f04, T1: 0x89621faa50d8, PC: 0x55b086653255, Req: 0x55b08cd1bf00, SPeer: -1, STag: -1, RPeer: 1, RTag: 3, RBytes: 16}, // MPI_Irecv
	{Kind: 1, Flags: 5, Fn: 227, Comm: 0, T0: 0x89621faa751a, T1: 0x89621faab69c, PC: 0x55b0866532a4, Req: 0x7fc9a5321cc0, SPeer: 1, STag: 4, RPeer: -1, RTag: -1, SBytes: 8},  // MPI_Isend
	{Kind: 1, Flags: 5, Fn: 227, Comm: 0, T0: 0x89621faaec22, T1: 0x89621faaee92, PC: 0x55b0866532a4, Req: 0x7fc9a5321cc0, SPeer: 1, STag: 4, RPeer: -1, RTag: -1, SBytes: 8},  // MPI_Isend
	{Kind: 1, Flags: 5, Fn: 227, Comm: 0, T0: 0x89621faaef2e, T1: 0x89621faaf19e, PC: 0x55b0866532a4, Req: 0x7fc9a5321cc0, SPeer: 1, STag: 4, RPeer: -1, RTag: -1, SBytes: 8},  // MPI_Isend
	// The first MPI_Waitall's record: 3 receives of 8 bytes (the first
	// entry gives the receive fields, the next two repeat them), 3 sends.
	{Kind: 2, Flags: 18, Fn: 371, Comm: -1, T0: 0x896220e01644, T1: 0x896220e01644, Req: 0x55b08cd1c500, SPeer: -1, STag: -1, RPeer: 1, RTag: 3, RBytes: 8},
	{Kind: 2, Flags: 18, Fn: 371, Comm: -1, T0: 0x896220e01644, T1: 0x896220e01644, Req: 0x55b08cd1c200, SPeer: -1, STag: -1, RPeer: 1, RTag: 3, RBytes: 8},
	{Kind: 2, Flags: 18, Fn: 371, Comm: -1, T0: 0x896220e01644, T1: 0x896220e01644, Req: 0x55b08cd1bf00, SPeer: -1, STag: -1, RPeer: 1, RTag: 3, RBytes: 8},
	{Kind: 2, Flags: 1, Fn: 371, Comm: -1, T0: 0x896220e01644, T1: 0x896220e01644, Req: 0x7fc9a5321cc0, SPeer: -1, STag: -1, RPeer: -1, RTag: -1},
	{Kind: 2, Flags: 1, Fn: 371, Comm: -1, T0: 0x896220e01644, T1: 0x896220e01644, Req: 0x7fc9a5321cc0, SPeer: -1, STag: -1, RPeer: -1, RTag: -1},
	{Kind: 2, Flags: 1, Fn: 371, Comm: -1, T0: 0x896220e01644, T1: 0x896220e01644, Req: 0x7fc9a5321cc0, SPeer: -1, STag: -1, RPeer: -1, RTag: -1},
	{Kind: 1, Flags: 0, Fn: 371, Comm: -1, T0: 0x89621fab1bf8, T1: 0x896220e01644, PC: 0x55b0866532c8, SPeer: -1, STag: -1, RPeer: -1, RTag: -1},                              // MPI_Waitall
	{Kind: 1, Flags: 5, Fn: 227, Comm: 0, T0: 0x896220e036c4, T1: 0x896220e05194, PC: 0x55b0866532f5, Req: 0x7fc9a5321cc0, SPeer: 1, STag: 5, RPeer: -1, RTag: -1, SBytes: 4}, // MPI_Isend
	{Kind: 1, Flags: 6, Fn: 218, Comm: 0, T0: 0x896220e0a2ee, T1: 0x896220e0aa58, PC: 0x55b086653320, Req: 0x55b08cd1bf00, SPeer: -1, STag: -1, RPeer: 1, RTag: 5, RBytes: 4}, // MPI_Irecv
	// MPI_Waitsome's record: both requests in one call.
	{Kind: 2, Flags: 1, Fn: 373, Comm: -1, T0: 0x896220e11752, T1: 0x896220e11752, Req: 0x7fc9a5321cc0, SPeer: -1, STag: -1, RPeer: -1, RTag: -1},
	{Kind: 2, Flags: 18, Fn: 373, Comm: -1, T0: 0x896220e11752, T1: 0x896220e11752, Req: 0x55b08cd1bf00, SPeer: -1, STag: -1, RPeer: 1, RTag: 5, RBytes: 4},
	{Kind: 1, Flags: 0, Fn: 373, Comm: -1, T0: 0x896220e0e526, T1: 0x896220e11752, PC: 0x55b08665334b, SPeer: -1, STag: -1, RPeer: -1, RTag: -1},                                  // MPI_Waitsome
	{Kind: 1, Flags: 6, Fn: 218, Comm: 0, T0: 0x896220e11d9e, T1: 0x896220e11dec, PC: 0x55b08665338a, Req: 0x7fc9a5321cc0, SPeer: -1, STag: -1, RPeer: -1, RTag: 6},               // MPI_Irecv from MPI_PROC_NULL
	{Kind: 1, Flags: 12, Fn: 188, Comm: 0, T0: 0x896220e17064, T1: 0x896220e2855a, PC: 0x55b08665339b, Req: 0x55b08cd25fb8, SPeer: -1, STag: -1, RPeer: -1, RTag: -1, SBytes: -1}, // MPI_Ibarrier
	// The last MPI_Waitall's record: the receive from MPI_PROC_NULL, whose
	// fields are the defaults (no receive fields in its entry), the barrier.
	{Kind: 2, Flags: 18, Fn: 371, Comm: -1, T0: 0x89622580aab0, T1: 0x89622580aab0, Req: 0x7fc9a5321cc0, SPeer: -1, STag: -1, RPeer: -1, RTag: -1},
	{Kind: 2, Flags: 8, Fn: 371, Comm: -1, T0: 0x89622580aab0, T1: 0x89622580aab0, Req: 0x55b08cd25fb8, SPeer: -1, STag: -1, RPeer: -1, RTag: -1},
	{Kind: 1, Flags: 0, Fn: 371, Comm: -1, T0: 0x896220e2e08e, T1: 0x89622580aab0, PC: 0x55b0866533ad, SPeer: -1, STag: -1, RPeer: -1, RTag: -1}, // MPI_Waitall
}

func TestReadPinnedCompletions(t *testing.T) {
	for _, f := range []struct {
		name, blocks string
		records      int // completions records in its raw blocks
	}{
		{"testdata/pin-cpls-r0-raw.mst", "HLSCKWKLSF", 3},
		{"testdata/pin-cpls-r0.mst", "HLSCKEKLSF", 0},
	} {
		t.Run(f.name, func(t *testing.T) {
			checkBlocks(t, f.name, f.blocks)
			b, err := os.ReadFile(f.name)
			if err != nil {
				t.Fatal(err)
			}
			if string(b[:len(Magic)]) != "MSTRACE\x04" {
				t.Errorf("magic %q, want format version 4", b[:len(Magic)])
			}
			r, err := OpenRank(f.name)
			if err != nil {
				t.Fatal(err)
			}
			h := *r.Header
			if h.Rank != 0 || h.Size != 2 || h.PID != 23128 || h.Family != "openmpi" || h.Timer != "tsc" {
				t.Errorf("header %+v", h)
			}
			for fn, want := range map[int]string{56: "MPI_Comm_rank", 188: "MPI_Ibarrier", 218: "MPI_Irecv", 227: "MPI_Isend",
				371: "MPI_Waitall", 373: "MPI_Waitsome"} {
				if got := r.FnName(fn); got != want {
					t.Errorf("function %d: %q, want %q", fn, got, want)
				}
			}
			if r.Events != uint64(len(pinCplsEvents)) || !r.Complete || r.Dropped != 0 {
				t.Errorf("events %d, complete %v, dropped %d; want %d, true, 0", r.Events, r.Complete, r.Dropped, len(pinCplsEvents))
			}
			var got []Event
			records := 0
			if err := r.Scan(func(tid int, evs []Event) error { got = append(got, evs...); return nil }); err != nil {
				t.Fatal(err)
			}
			br, err := NewBlockReader(bytes.NewReader(b), f.name)
			if err != nil {
				t.Fatal(err)
			}
			for {
				k, p, err := br.Next()
				if err != nil {
					break
				}
				if k == BRaw {
					n, _, err := RawCplsRecords(p)
					if err != nil {
						t.Fatal(err)
					}
					records += n
				}
			}
			if records != f.records {
				t.Errorf("%d completions records, want %d", records, f.records)
			}
			if len(got) != len(pinCplsEvents) {
				t.Errorf("%d events, want %d", len(got), len(pinCplsEvents))
			}
			for i := range min(len(got), len(pinCplsEvents)) {
				if got[i] != pinCplsEvents[i] {
					t.Errorf("event %d (%s):\n got %+v\nwant %+v", i, r.FnName(int(pinCplsEvents[i].Fn)), got[i], pinCplsEvents[i])
				}
			}
		})
	}
}
