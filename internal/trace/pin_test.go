package trace

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// testdata/pin-r0-raw.mst is rank 0's trace of testdata/pin.c (2 ranks) as
// mpiscope wrote it at 94c874e (2026-11-25) with
// MPISCOPE_TRACE_COMPRESS=off: one raw (W) block of variable-size records,
// short and full, after padding that aligns it for a direct write.
// testdata/pin-r0.mst is the same file packed by Pack (what MPI_Finalize
// does under the default MPISCOPE_TRACE_COMPRESS=finalize): one compressed
// events (E) block. testdata/README.md has the recipe. Every version of
// mpiscope must read both to exactly what is written out by hand below: a
// change that stops reading existing traces fails here.
var pinFiles = []struct {
	name   string
	blocks string // block kinds in order, padding left out
}{
	{"testdata/pin-r0-raw.mst", "HSCCRMKWKSF"},
	{"testdata/pin-r0.mst", "HSCCRMKEKSF"},
}

// pinEvents are rank 0's events in the order recorded. Kinds: 1 call,
// 2 completion, 3 and 4 region enter and leave, 5 mark, 6 post; flags: 1
// send, 2 receive, 4 request, 8 collective, 16 local peer (format.go).
// The program's calls give the kinds, functions, communicators, peers,
// tags, bytes and flags;
// the times (timer ticks), callsites and request handles are those of the
// run. Region 1 is "phase", text 0 "tick"; communicator 2 is the MPI_Comm_dup
// of MPI_COMM_WORLD (0). A completion (kind 2) comes before the call that
// completed it (the Wait), and names the request.
var pinEvents = []Event{
	{Kind: 1, Flags: 0, Fn: 56, Comm: 0, T0: 0x45b72019a14, T1: 0x45b7201b310, PC: 0x555719df928a, SPeer: -1, STag: -1, RPeer: -1, RTag: -1},                                 // MPI_Comm_rank
	{Kind: 3, Flags: 0, Fn: 1, Comm: -1, T0: 0x45b72ced220, T1: 0x45b72ced220, SPeer: -1, STag: -1, RPeer: -1, RTag: -1},                                                     // enter region 1 (phase)
	{Kind: 1, Flags: 1, Fn: 276, Comm: 0, T0: 0x45b72cf0f78, T1: 0x45b72cf5b8a, PC: 0x555719df92d9, SPeer: 1, STag: 5, RPeer: -1, RTag: -1, SBytes: 40},                      // MPI_Send
	{Kind: 1, Flags: 6, Fn: 218, Comm: 0, T0: 0x45b72cfaa74, T1: 0x45b72cfc67c, PC: 0x555719df9305, Req: 0x5557306f3880, SPeer: -1, STag: -1, RPeer: 1, RTag: 6, RBytes: 12}, // MPI_Irecv
	{Kind: 2, Flags: 18, Fn: 370, Comm: -1, T0: 0x45b72d04ec8, T1: 0x45b72d04ec8, Req: 0x5557306f3880, SPeer: -1, STag: -1, RPeer: 1, RTag: 6, RBytes: 12},                   // completed in MPI_Wait
	{Kind: 1, Flags: 0, Fn: 370, Comm: -1, T0: 0x45b72d00d12, T1: 0x45b72d04ec8, PC: 0x555719df9312, SPeer: -1, STag: -1, RPeer: -1, RTag: -1},                               // MPI_Wait
	{Kind: 1, Flags: 0, Fn: 277, Comm: 0, T0: 0x45b72d069cc, T1: 0x45b72d078d4, PC: 0x555719df9338, SPeer: -1, STag: -1, RPeer: -1, RTag: -1},                                // MPI_Send_init
	{Kind: 6, Flags: 5, Fn: 282, Comm: 0, T0: 0x45b72d0e61c, T1: 0x45b72d0e61c, Req: 0x5557306f2e00, SPeer: 1, STag: 7, RPeer: -1, RTag: -1, SBytes: 8},                      // MPI_Start posts the persistent send
	{Kind: 1, Flags: 0, Fn: 282, Comm: -1, T0: 0x45b72d0e61c, T1: 0x45b72d26f90, PC: 0x555719df9340, SPeer: -1, STag: -1, RPeer: -1, RTag: -1},                               // MPI_Start
	{Kind: 2, Flags: 18, Fn: 370, Comm: -1, T0: 0x45b72d2bd90, T1: 0x45b72d2bd90, Req: 0x5557306f2e00, SPeer: -1, STag: -1, RPeer: 0, RTag: 7, RBytes: 8},                    // completed in MPI_Wait
	{Kind: 1, Flags: 0, Fn: 370, Comm: -1, T0: 0x45b72d298cc, T1: 0x45b72d2bd90, PC: 0x555719df934d, SPeer: -1, STag: -1, RPeer: -1, RTag: -1},                               // MPI_Wait
	{Kind: 1, Flags: 0, Fn: 266, Comm: -1, T0: 0x45b72d2cbae, T1: 0x45b72d2de10, PC: 0x555719df9355, SPeer: -1, STag: -1, RPeer: -1, RTag: -1},                               // MPI_Request_free
	{Kind: 1, Flags: 8, Fn: 9, Comm: 0, T0: 0x45b72d33c1c, T1: 0x45b72d37b62, PC: 0x555719df9382, SPeer: -1, STag: -1, RPeer: -1, RTag: -1, SBytes: 8},                       // MPI_Allreduce
	{Kind: 4, Flags: 0, Fn: 1, Comm: -1, T0: 0x45b72d3a12a, T1: 0x45b72d3a12a, SPeer: -1, STag: -1, RPeer: -1, RTag: -1},                                                     // leave region 1
	{Kind: 5, Flags: 0, Fn: 0, Comm: -1, T0: 0x45b72d3bb92, T1: 0x45b72d3bb92, SPeer: -1, STag: -1, RPeer: -1, RTag: -1},                                                     // mark text 0 (tick)
	{Kind: 1, Flags: 6, Fn: 218, Comm: 0, T0: 0x45b72d3bc14, T1: 0x45b72d3be02, PC: 0x555719df94d0, Req: 0x5557306f3880, SPeer: -1, STag: -1, RPeer: 1, RTag: 9, RBytes: 4},  // MPI_Irecv
	{Kind: 2, Flags: 18, Fn: 370, Comm: -1, T0: 0x45b72d4092a, T1: 0x45b72d4092a, Req: 0x5557306f3880, SPeer: -1, STag: -1, RPeer: 1, RTag: 9, RBytes: 4},                    // completed in MPI_Wait
	{Kind: 1, Flags: 0, Fn: 370, Comm: -1, T0: 0x45b72d3c260, T1: 0x45b72d4092a, PC: 0x555719df94dd, SPeer: -1, STag: -1, RPeer: -1, RTag: -1},                               // MPI_Wait
	{Kind: 1, Flags: 6, Fn: 218, Comm: 0, T0: 0x45b72d40b66, T1: 0x45b72d40bce, PC: 0x555719df94d0, Req: 0x5557306f3880, SPeer: -1, STag: -1, RPeer: 1, RTag: 9, RBytes: 4},  // MPI_Irecv
	{Kind: 2, Flags: 18, Fn: 370, Comm: -1, T0: 0x45b72d43968, T1: 0x45b72d43968, Req: 0x5557306f3880, SPeer: -1, STag: -1, RPeer: 1, RTag: 9, RBytes: 4},                    // completed in MPI_Wait
	{Kind: 1, Flags: 0, Fn: 370, Comm: -1, T0: 0x45b72d42e8a, T1: 0x45b72d43968, PC: 0x555719df94dd, SPeer: -1, STag: -1, RPeer: -1, RTag: -1},                               // MPI_Wait
	{Kind: 1, Flags: 6, Fn: 218, Comm: 0, T0: 0x45b72d43aba, T1: 0x45b72d43e48, PC: 0x555719df94d0, Req: 0x5557306f3880, SPeer: -1, STag: -1, RPeer: 1, RTag: 9, RBytes: 4},  // MPI_Irecv
	{Kind: 2, Flags: 18, Fn: 370, Comm: -1, T0: 0x45b72d43f18, T1: 0x45b72d43f18, Req: 0x5557306f3880, SPeer: -1, STag: -1, RPeer: 1, RTag: 9, RBytes: 4},                    // completed in MPI_Wait
	{Kind: 1, Flags: 0, Fn: 370, Comm: -1, T0: 0x45b72d43ee4, T1: 0x45b72d43f18, PC: 0x555719df94dd, SPeer: -1, STag: -1, RPeer: -1, RTag: -1},                               // MPI_Wait
	{Kind: 1, Flags: 0, Fn: 43, Comm: 0, T0: 0x45b72d4534e, T1: 0x45b72d5afc4, PC: 0x555719df94f4, SPeer: -1, STag: -1, RPeer: -1, RTag: -1},                                 // MPI_Comm_dup
	{Kind: 1, Flags: 8, Fn: 16, Comm: 2, T0: 0x45b72d62066, T1: 0x45b72d685a8, PC: 0x555719df950b, SPeer: -1, STag: -1, RPeer: -1, RTag: -1, SBytes: -1},                     // MPI_Barrier
	{Kind: 1, Flags: 8, Fn: 16, Comm: 2, T0: 0x45b72d6ac74, T1: 0x45b72d6aeca, PC: 0x555719df950b, SPeer: -1, STag: -1, RPeer: -1, RTag: -1, SBytes: -1},                     // MPI_Barrier
	{Kind: 1, Flags: 8, Fn: 16, Comm: 2, T0: 0x45b72d6af4c, T1: 0x45b72d6b1a2, PC: 0x555719df950b, SPeer: -1, STag: -1, RPeer: -1, RTag: -1, SBytes: -1},                     // MPI_Barrier
	{Kind: 1, Flags: 0, Fn: 46, Comm: -1, T0: 0x45b72d6b9f6, T1: 0x45b72d73180, PC: 0x555719df9520, SPeer: -1, STag: -1, RPeer: -1, RTag: -1},                                // MPI_Comm_free
}

// pinFns are the header's names and classes of the functions the calls
// use, and of 0 and 1 (an enter, leave or mark event's Fn is a region or
// text id instead).
var pinFns = map[int][2]string{
	0:   {"MPI_Abort", "env"},
	1:   {"MPI_Accumulate", "rma"},
	9:   {"MPI_Allreduce", "coll"},
	16:  {"MPI_Barrier", "coll"},
	43:  {"MPI_Comm_dup", "comm"},
	46:  {"MPI_Comm_free", "comm"},
	56:  {"MPI_Comm_rank", "comm"},
	218: {"MPI_Irecv", "p2p"},
	266: {"MPI_Request_free", "wait"},
	276: {"MPI_Send", "p2p"},
	277: {"MPI_Send_init", "p2p"},
	282: {"MPI_Start", "wait"},
	370: {"MPI_Wait", "wait"},
}

func TestReadPinnedTrace(t *testing.T) {
	for _, f := range pinFiles {
		t.Run(filepath.Base(f.name), func(t *testing.T) {
			checkBlocks(t, f.name, f.blocks)
			r, err := OpenRank(f.name)
			if err != nil {
				t.Fatal(err)
			}
			h := *r.Header
			if h.Rank != 0 || h.Size != 2 || h.PID != 32050 || h.Host != "vm" || h.Family != "openmpi" ||
				h.Tool != "0.1.0" || h.Timer != "clock_gettime" || h.RealNs != 1795636460205658865 {
				t.Errorf("header %+v", h)
			}
			// Open MPI 4.1.4 exports 415 MPI functions (README).
			if len(h.FnNames) != 415 || len(h.FnClasses) != 415 {
				t.Errorf("header: %d function names, %d classes, want 415", len(h.FnNames), len(h.FnClasses))
			}
			for fn, want := range pinFns {
				if got := [2]string{r.FnName(fn), r.FnClass(fn)}; got != want {
					t.Errorf("function %d: %q, want %q", fn, got, want)
				}
			}
			if want := (Calib{Tick0: 0x45b71fd2917, Ns0: 0x1ada243ebef, NsPerTick: 0.385186665536084}); r.Calib != want {
				t.Errorf("calibration %+v, want %+v", r.Calib, want)
			}
			if want := []Sync{{LocalNs: 0x1ada232d08b}, {LocalNs: 0x1ada2980c8b}}; !slices.Equal(r.Syncs, want) {
				t.Errorf("clock samples %+v, want %+v", r.Syncs, want)
			}
			wantComms := map[int]*CommDef{
				0: {ID: 0, Key: "world", Size: 2, World: []int{0, 1}},
				2: {ID: 2, Key: "Comm_dup:2@0", Size: 2, World: []int{0, 1}},
			}
			if !reflect.DeepEqual(r.Comms, wantComms) {
				t.Errorf("communicators:")
				for id, c := range r.Comms {
					t.Errorf("  %d: %+v", id, *c)
				}
			}
			if want := map[int]string{1: "phase"}; !reflect.DeepEqual(r.Regions, want) {
				t.Errorf("regions %v, want %v", r.Regions, want)
			}
			if want := map[int]string{0: "tick"}; !reflect.DeepEqual(r.Texts, want) {
				t.Errorf("texts %v, want %v", r.Texts, want)
			}
			if !slices.Equal(r.Threads, []int{32050}) || r.Events != 29 || r.Dropped != 0 || !r.Complete || r.Warning != "" {
				t.Errorf("threads %v, events %d, dropped %d, complete %v, warning %q; want [32050], 29, 0, true, none",
					r.Threads, r.Events, r.Dropped, r.Complete, r.Warning)
			}
			var got []Event
			err = r.Scan(func(tid int, evs []Event) error {
				if tid != 32050 {
					return fmt.Errorf("events of thread %d", tid)
				}
				got = append(got, evs...)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(pinEvents) {
				t.Errorf("%d events, want %d", len(got), len(pinEvents))
			}
			for i := range min(len(got), len(pinEvents)) {
				if got[i] != pinEvents[i] {
					t.Errorf("event %d (%s):\n got %+v\nwant %+v", i, r.FnName(int(pinEvents[i].Fn)), got[i], pinEvents[i])
				}
			}
		})
	}
}

// checkBlocks reads a file's blocks and compares their kinds with want.
func checkBlocks(t *testing.T, name, want string) {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	br, err := NewBlockReader(f, name)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []byte
	for {
		k, _, err := br.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("block %d: %v", len(kinds), err)
			}
			break
		}
		kinds = append(kinds, k)
	}
	if string(kinds) != want {
		t.Errorf("blocks %q, want %q", kinds, want)
	}
}

// The raw records' layout is written twice: trace.h (the C recorder) and
// raw.go (the reader). Their shared sizes must agree.
func TestRawLayoutMatchesTraceH(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "interpose", "trace.h"))
	if err != nil {
		t.Fatal(err)
	}
	define := func(name string) string {
		m := regexp.MustCompile(`(?m)^#define ` + name + ` (.*?)\s*(/\*.*)?$`).FindSubmatch(src)
		if m == nil {
			t.Fatalf("trace.h does not define %s", name)
		}
		return string(m[1])
	}
	if bits, err := strconv.Atoi(define("MS_TDICT_BITS")); err != nil || 1<<bits != rawSlots {
		t.Errorf("trace.h: MS_TDICT_BITS %s (%v), raw.go: %d slots", define("MS_TDICT_BITS"), err, rawSlots)
	}
	// Completions records (format version 4).
	if got := define("MS_TK_CPLS"); got != strconv.Itoa(rawCpls) {
		t.Errorf("trace.h: MS_TK_CPLS is %s, raw.go reads a completions record as kind %d", got, rawCpls)
	}
	if got := define("MS_TCPLS_HEAD"); got != strconv.Itoa(rawCplsHead)+"u" {
		t.Errorf("trace.h: MS_TCPLS_HEAD is %s, raw.go: %du", got, rawCplsHead)
	}
	if got := define("MS_TCPLS_ENTRY_MAX"); got != strconv.Itoa(rawCplsEntry+rawCplsRecv)+"u" {
		t.Errorf("trace.h: MS_TCPLS_ENTRY_MAX is %s, raw.go: %du", got, rawCplsEntry+rawCplsRecv)
	}
	// Posts records (format version 5).
	for name, want := range map[string]string{"MS_TK_POSTS": strconv.Itoa(rawPosts),
		"MS_TPOSTS_HEAD": strconv.Itoa(rawPostsHead) + "u", "MS_TPOSTS_ENTRY": strconv.Itoa(rawPostsEntry) + "u",
		"MS_TPOSTS_DT": "(1u << 16)"} {
		if got := define(name); got != want {
			t.Errorf("trace.h: %s is %s, rawposts.go reads %s", name, got, want)
		}
	}
	// A short record's header keeps dt above its 12 bits of flag and slot.
	if got := define("MS_TSHORT_DT"); got != "(1u << 20)" {
		t.Errorf("trace.h: MS_TSHORT_DT is %s, raw.go reads dt from the 20 bits above bit 12 of a short record: (1u << 20)", got)
	}
}
