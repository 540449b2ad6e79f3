package profile

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"testing"
)

// v1File is a profile written by mpiscope at 94c874e (2026-11-25), kept as
// it was written: testdata/README.md has the recipe. Every version of
// mpiscope must read it to exactly v1Want, which is written out by hand
// below: a change that stops reading existing files fails here, whatever
// the encoder now writes.
const v1File = "testdata/v1-pcontrol.mps"

// The program (testdata/progs/pcontrol.c, 2 ranks) makes per rank, while
// recorded: 1 MPI_Comm_rank, 10 + 5 MPI_Barrier, 20 MPI_Allreduce of one
// double in region outer and 30 in outer/inner, 3 exchanges (MPI_Irecv,
// MPI_Send and MPI_Wait of one double; the second in outer/inner), one
// MPI_Send and one MPI_Recv of one double (tag 8), 7 user events "tick":
// 77 calls. The times, host, PIDs and offsets are those of that run.
var v1Want = &Profile{
	Meta: Meta{
		Command:    []string{"./pcontrol"},
		NumRanks:   2,
		Hosts:      []string{"vm"},
		MPILibrary: "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022",
		MPIVersion: "3.1",
		Family:     "openmpi",
		Tool:       "0.1.0",
		Timer:      "tsc",
		StartNs:    1795636355381088634,
		StopNs:     1795636355403272888,
		Settings: []Setting{
			{Name: "MPISCOPE_OUT", Value: "/tmp/mpiscope-pin/job"},
			{Name: "MPISCOPE_QUIET", Value: "1"},
		},
	},
	Ranks: []Rank{
		{Rank: 0, Host: "vm", PID: 26880, AppNs: 22184255, MPINs: 10738392, Calls: 77, Threads: 1, State: "final"},
		{Rank: 1, Host: "vm", PID: 26881, AppNs: 22166322, MPINs: 179617, Calls: 77, Threads: 1, State: "final"},
	},
	Funcs: []Func{
		{Name: "MPI_Allreduce", Class: "coll", Calls: 100, TimeNs: 70264, MinCallNs: 190, MaxCallNs: 11998, Bytes: 800,
			RankTime: Spread{N: 2, Sum: 70264, SumSq: 2468639848, Min: 34882, Max: 35382, MinRank: 1, MaxRank: 0}},
		{Name: "MPI_Barrier", Class: "coll", Calls: 30, TimeNs: 10805632, MinCallNs: 190, MaxCallNs: 10615180,
			RankTime: Spread{N: 2, Sum: 10805632, SumSq: 114140682781184, Min: 122672, Max: 10682960, MinRank: 1, MaxRank: 0}},
		{Name: "MPI_Comm_rank", Class: "comm", Calls: 2, TimeNs: 9244, MinCallNs: 3866, MaxCallNs: 5378,
			RankTime: Spread{N: 2, Sum: 9244, SumSq: 43868840, Min: 3866, Max: 5378, MinRank: 1, MaxRank: 0}},
		{Name: "MPI_Irecv", Class: "p2p", Calls: 6, TimeNs: 6390, MinCallNs: 40, MaxCallNs: 2464, Bytes: 48,
			RankTime: Spread{N: 2, Sum: 6390, SumSq: 20425850, Min: 3125, Max: 3265, MinRank: 0, MaxRank: 1}},
		{Name: "MPI_Recv", Class: "p2p", Calls: 2, TimeNs: 5799, MinCallNs: 2083, MaxCallNs: 3716, Bytes: 16,
			RankTime: Spread{N: 2, Sum: 5799, SumSq: 18147545, Min: 2083, Max: 3716, MinRank: 1, MaxRank: 0}},
		{Name: "MPI_Send", Class: "p2p", Calls: 8, TimeNs: 8722, MinCallNs: 50, MaxCallNs: 3155, Bytes: 64,
			RankTime: Spread{N: 2, Sum: 8722, SumSq: 38700194, Min: 3785, Max: 4937, MinRank: 0, MaxRank: 1}},
		{Name: "MPI_Wait", Class: "wait", Calls: 6, TimeNs: 11958, MinCallNs: 90, MaxCallNs: 6420,
			RankTime: Spread{N: 2, Sum: 11958, SumSq: 78969860, Min: 4046, Max: 7912, MinRank: 0, MaxRank: 1}},
	},
	Sites: []Site{
		{Func: "MPI_Allreduce", Loc: v1Loc(0x1337, "main", 35), Region: "outer", Calls: 40, TimeNs: 40360, MinNs: 250, MaxNs: 11998, Bytes: 320,
			RankTime: Spread{N: 2, Sum: 40360, SumSq: 814493600, Min: 20060, Max: 20300, MinRank: 1, MaxRank: 0}},
		{Func: "MPI_Allreduce", Loc: v1Loc(0x1383, "main", 38), Region: "outer/inner", Calls: 60, TimeNs: 29904, MinNs: 190, MaxNs: 1292, Bytes: 480,
			RankTime: Spread{N: 2, Sum: 29904, SumSq: 447158408, Min: 14822, Max: 15082, MinRank: 1, MaxRank: 0}},
		{Func: "MPI_Barrier", Loc: v1Loc(0x12ab, "main", 27), Calls: 20, TimeNs: 116633, MinNs: 190, MaxNs: 52488,
			RankTime: Spread{N: 2, Sum: 116633, SumSq: 6871212949, Min: 52418, Max: 64215, MinRank: 1, MaxRank: 0}},
		// The loop of 5 barriers at line 54, unrolled by the compiler.
		{Func: "MPI_Barrier", Loc: v1Loc(0x1462, "main", 54), Calls: 2, TimeNs: 10630603, MinNs: 15423, MaxNs: 10615180,
			RankTime: Spread{N: 2, Sum: 10630603, SumSq: 112682284301329, Min: 15423, Max: 10615180, MinRank: 1, MaxRank: 0}},
		{Func: "MPI_Barrier", Loc: v1Loc(0x146a, "main", 54), Calls: 2, TimeNs: 54791, MinNs: 911, MaxNs: 53880,
			RankTime: Spread{N: 2, Sum: 54791, SumSq: 2903884321, Min: 911, Max: 53880, MinRank: 0, MaxRank: 1}},
		{Func: "MPI_Barrier", Loc: v1Loc(0x1472, "main", 54), Calls: 2, TimeNs: 1782, MinNs: 280, MaxNs: 1502,
			RankTime: Spread{N: 2, Sum: 1782, SumSq: 2334404, Min: 280, Max: 1502, MinRank: 1, MaxRank: 0}},
		{Func: "MPI_Barrier", Loc: v1Loc(0x147a, "main", 54), Calls: 2, TimeNs: 752, MinNs: 341, MaxNs: 411,
			RankTime: Spread{N: 2, Sum: 752, SumSq: 285202, Min: 341, Max: 411, MinRank: 0, MaxRank: 1}},
		{Func: "MPI_Barrier", Loc: v1Loc(0x1482, "main", 54), Calls: 2, TimeNs: 1071, MinNs: 260, MaxNs: 811,
			RankTime: Spread{N: 2, Sum: 1071, SumSq: 725321, Min: 260, Max: 811, MinRank: 1, MaxRank: 0}},
		{Func: "MPI_Comm_rank", Loc: v1Loc(0x1297, "main", 25), Calls: 2, TimeNs: 9244, MinNs: 3866, MaxNs: 5378,
			RankTime: Spread{N: 2, Sum: 9244, SumSq: 43868840, Min: 3866, Max: 5378, MinRank: 1, MaxRank: 0}},
		{Func: "MPI_Irecv", Loc: v1Loc(0x1228, "exchange", 15), Calls: 4, TimeNs: 6310, MinNs: 641, MaxNs: 2464, Bytes: 32,
			RankTime: Spread{N: 2, Sum: 6310, SumSq: 19917850, Min: 3085, Max: 3225, MinRank: 0, MaxRank: 1}},
		{Func: "MPI_Irecv", Loc: v1Loc(0x1228, "exchange", 15), Region: "outer/inner", Calls: 2, TimeNs: 80, MinNs: 40, MaxNs: 40, Bytes: 16,
			RankTime: Spread{N: 2, Sum: 80, SumSq: 3200, Min: 40, Max: 40, MinRank: 0, MaxRank: 0}},
		// One rank each: the one-rank encoding of a spread (kind 1).
		{Func: "MPI_Recv", Loc: v1Loc(0x1440, "main", 47), Calls: 1, TimeNs: 3716, MinNs: 3716, MaxNs: 3716, Bytes: 8,
			RankTime: Spread{N: 1, Sum: 3716, SumSq: 13808656, Min: 3716, Max: 3716, MinRank: 0, MaxRank: 0}},
		{Func: "MPI_Recv", Loc: v1Loc(0x14f2, "main", 49), Calls: 1, TimeNs: 2083, MinNs: 2083, MaxNs: 2083, Bytes: 8,
			RankTime: Spread{N: 1, Sum: 2083, SumSq: 4338889, Min: 2083, Max: 2083, MinRank: 1, MaxRank: 1}},
		{Func: "MPI_Send", Loc: v1Loc(0x1249, "exchange", 16), Calls: 4, TimeNs: 8452, MinNs: 1312, MaxNs: 3155, Bytes: 32,
			RankTime: Spread{N: 2, Sum: 8452, SumSq: 36393274, Min: 3645, Max: 4807, MinRank: 0, MaxRank: 1}},
		{Func: "MPI_Send", Loc: v1Loc(0x1249, "exchange", 16), Region: "outer/inner", Calls: 2, TimeNs: 160, MinNs: 80, MaxNs: 80, Bytes: 16,
			RankTime: Spread{N: 2, Sum: 160, SumSq: 12800, Min: 80, Max: 80, MinRank: 0, MaxRank: 0}},
		{Func: "MPI_Send", Loc: v1Loc(0x1416, "main", 46), Calls: 1, TimeNs: 60, MinNs: 60, MaxNs: 60, Bytes: 8,
			RankTime: Spread{N: 1, Sum: 60, SumSq: 3600, Min: 60, Max: 60, MinRank: 0, MaxRank: 0}},
		{Func: "MPI_Send", Loc: v1Loc(0x1516, "main", 50), Calls: 1, TimeNs: 50, MinNs: 50, MaxNs: 50, Bytes: 8,
			RankTime: Spread{N: 1, Sum: 50, SumSq: 2500, Min: 50, Max: 50, MinRank: 1, MaxRank: 1}},
		{Func: "MPI_Wait", Loc: v1Loc(0x1256, "exchange", 17), Calls: 4, TimeNs: 11758, MinNs: 1382, MaxNs: 6420,
			RankTime: Spread{N: 2, Sum: 11758, SumSq: 76521140, Min: 3956, Max: 7802, MinRank: 0, MaxRank: 1}},
		{Func: "MPI_Wait", Loc: v1Loc(0x1256, "exchange", 17), Region: "outer/inner", Calls: 2, TimeNs: 200, MinNs: 90, MaxNs: 110,
			RankTime: Spread{N: 2, Sum: 200, SumSq: 20200, Min: 90, Max: 110, MinRank: 0, MaxRank: 1}},
	},
	// Every message is one double: the 8-15 byte bin (log2 4).
	Hists: []Hist{
		{Func: "MPI_Allreduce", Bins: []Bin{{Log2: 4, Calls: 100, Bytes: 800, TimeNs: 70264}}},
		{Func: "MPI_Irecv", Bins: []Bin{{Log2: 4, Calls: 6, Bytes: 48, TimeNs: 6390}}},
		{Func: "MPI_Recv", Bins: []Bin{{Log2: 4, Calls: 2, Bytes: 16, TimeNs: 5799}}},
		{Func: "MPI_Send", Bins: []Bin{{Log2: 4, Calls: 8, Bytes: 64, TimeNs: 8723}}},
	},
	Comms: []Comm{
		{Key: "world", Size: 2, Creator: "predefined", Members: 2, Calls: 148, TimeNs: 10906051, Bytes: 928},
	},
	Peers: []Peer{
		{Rank: 0, Peer: 1, SentMsgs: 4, SentBytes: 32, RecvMsgs: 4, RecvBytes: 32},
		{Rank: 1, Peer: 0, SentMsgs: 4, SentBytes: 32, RecvMsgs: 4, RecvBytes: 32},
	},
	Regions: []Region{
		{Path: "outer", Visits: 2, WallNs: 119457, MPINs: 70704, Ranks: 2,
			RankMPI: Spread{N: 2, Sum: 70704, SumSq: 2499643008, Min: 35112, Max: 35592, MinRank: 1, MaxRank: 0}},
		{Path: "outer/inner", Visits: 2, WallNs: 57806, MPINs: 30344, Ranks: 2,
			RankMPI: Spread{N: 2, Sum: 30344, SumSq: 460407968, Min: 15052, Max: 15292, MinRank: 1, MaxRank: 0}},
	},
	Events: []Event{{Text: "tick", Count: 14, Ranks: 2}},
}

func v1Loc(off uint64, fn string, line int) Loc {
	return Loc{Module: "/tmp/mpiscope-pin/pcontrol", Offset: off, Function: fn, File: "/tmp/mpiscope-pin/pcontrol.c", Line: line}
}

// TestReadV1File reads the committed version-1 file through each entry
// point (Unmarshal, Decode, Load) and compares every field with v1Want.
func TestReadV1File(t *testing.T) {
	b, err := os.ReadFile(v1File)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 1880 || string(b[:9]) != "MPISCOPE\x01" {
		t.Fatalf("%s: %d bytes starting %q: the committed file changed; it must stay as written", v1File, len(b), b[:min(len(b), 9)])
	}
	check := func(how string, p *Profile, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", how, err)
		}
		for _, d := range profileDiff(v1Want, p) {
			t.Errorf("%s: %s", how, d)
		}
	}
	p, err := Unmarshal(b, v1File)
	check("Unmarshal", p, err)
	p, err = Decode(bytes.NewReader(b), v1File)
	check("Decode", p, err)
	p, info, err := Load(v1File)
	check("Load", p, err)
	if err == nil && (info.Source != "file" || info.Partial || len(info.Missing) != 0 || len(info.Warnings) != 0) {
		t.Errorf("Load: info %+v, want a complete file", info)
	}
}

// profileDiff names the fields of got that differ from want, one line
// each, so that a failure says what is read differently.
func profileDiff(want, got *Profile) []string {
	var d []string
	var walk func(path string, w, g reflect.Value)
	walk = func(path string, w, g reflect.Value) {
		switch w.Kind() {
		case reflect.Pointer:
			if w.IsNil() || g.IsNil() {
				if w.IsNil() != g.IsNil() {
					d = append(d, fmt.Sprintf("%s: nil %v, want nil %v", path, g.IsNil(), w.IsNil()))
				}
				return
			}
			walk(path, w.Elem(), g.Elem())
		case reflect.Struct:
			for i := 0; i < w.NumField(); i++ {
				walk(path+"."+w.Type().Field(i).Name, w.Field(i), g.Field(i))
			}
		case reflect.Slice:
			if w.Len() != g.Len() {
				d = append(d, fmt.Sprintf("%s: %d elements, want %d", path, g.Len(), w.Len()))
			}
			for i := 0; i < min(w.Len(), g.Len()); i++ {
				walk(fmt.Sprintf("%s[%d]", path, i), w.Index(i), g.Index(i))
			}
		default:
			if !reflect.DeepEqual(w.Interface(), g.Interface()) {
				d = append(d, fmt.Sprintf("%s = %#v, want %#v", path, g.Interface(), w.Interface()))
			}
		}
	}
	walk("Profile", reflect.ValueOf(want), reflect.ValueOf(got))
	if len(d) == 0 && !reflect.DeepEqual(want, got) {
		d = append(d, "profiles differ (nil against empty slice?)")
	}
	return d
}
