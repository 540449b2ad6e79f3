package profile

import (
	"bytes"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"
)

var updateRanked = flag.Bool("update", false, "rewrite testdata/v1-ranked.mps (a new pinned file only)")

// rankedFile pins the encoding of the rank-functions (40) and
// communicator-peers (41) sections, added within version 1 on 2026-11-26:
// the file must keep decoding to rankedWant, and rankedWant must keep
// encoding to the file.
const rankedFile = "testdata/v1-ranked.mps"

// Two ranks: 10 MPI_Send of 8 bytes from rank 0 to rank 1 on
// "MPI_Comm_split:4@0" (world ranks 0 and 1), 3 MPI_Barrier each on world,
// 2 MPI_Wait on rank 1 (no communicator).
var rankedWant = &Profile{
	Meta:  Meta{NumRanks: 2, Family: "openmpi"},
	Ranks: []Rank{{Rank: 0, AppNs: 1000, MPINs: 130, Calls: 13, Threads: 1, State: "final"}, {Rank: 1, AppNs: 1000, MPINs: 70, Calls: 15, Threads: 1, State: "final"}},
	Peers: []Peer{{Rank: 0, Peer: 1, SentMsgs: 10, SentBytes: 80}, {Rank: 1, Peer: 0, RecvMsgs: 10, RecvBytes: 80}},
	RankFuncs: []RankFunc{
		{Rank: 0, Func: "MPI_Barrier", Comm: "world", Calls: 3, TimeNs: 30},
		{Rank: 0, Func: "MPI_Send", Comm: "MPI_Comm_split:4@0", Calls: 10, TimeNs: 100, Bytes: 80},
		{Rank: 1, Func: "MPI_Barrier", Comm: "world", Calls: 3, TimeNs: 40},
		{Rank: 1, Func: "MPI_Recv", Comm: "MPI_Comm_split:4@0", Calls: 10, TimeNs: 20, Bytes: 80},
		{Rank: 1, Func: "MPI_Wait", Calls: 2, TimeNs: 10},
	},
	CommPeers: []CommPeer{
		{Rank: 0, Comm: "MPI_Comm_split:4@0", Peer: 1, SentMsgs: 10, SentBytes: 80},
		{Rank: 1, Comm: "MPI_Comm_split:4@0", Peer: 0, RecvMsgs: 10, RecvBytes: 80},
	},
	RankFuncBlock: 1,
	CommPeerBlock: 1,
}

func TestRankedPinned(t *testing.T) {
	enc := Marshal(rankedWant)
	if *updateRanked {
		if err := os.WriteFile(rankedFile, enc, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(rankedFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(enc, data) {
		t.Errorf("the encoding of rankedWant changed:\n got  %x\n file %x", enc, data)
	}
	got, err := Unmarshal(data, rankedFile)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rankedWant) {
		t.Errorf("decoded\n %+v\nwant\n %+v", got, rankedWant)
	}
	// The sections are after every other one: a file without them (as
	// older writers made) reads as having none.
	old := *rankedWant
	old.RankFuncs, old.CommPeers, old.RankFuncBlock, old.CommPeerBlock = nil, nil, 0, 0
	got, err = Unmarshal(Marshal(&old), "old")
	if err != nil || got.RankFuncs != nil || got.CommPeers != nil {
		t.Errorf("without the sections: %v %+v", err, got)
	}
	if f := rankedWant.RankFuncsOf(1); len(f) != 3 || f[0].Func != "MPI_Barrier" || f[2].Func != "MPI_Wait" {
		t.Errorf("RankFuncsOf(1) = %+v", f)
	}
	if f := rankedWant.RankFuncsOf(2); len(f) != 0 {
		t.Errorf("RankFuncsOf(2) = %+v", f)
	}
}

// A count larger than its section can hold is an error at its offset,
// before anything is allocated.
func TestRankedHostile(t *testing.T) {
	// A count of 100 records in a 3-byte section.
	bad := frame(1, section(secCommPeers, cat(uv(1), uv(100), []byte{0, 0, 0})))
	if _, err := Unmarshal(bad, "x"); err == nil || !strings.Contains(err.Error(), "communicator peer count 100 exceeds") {
		t.Errorf("bad count: %v", err)
	}
	bad = frame(1, section(secRankFuncs, cat(uv(1), uv(100), []byte{0, 0, 0})))
	if _, err := Unmarshal(bad, "x"); err == nil || !strings.Contains(err.Error(), "rank function count 100 exceeds") {
		t.Errorf("bad count: %v", err)
	}
	bad = frame(1, section(secRankFuncs, cat(uv(0), uv(0))))
	if _, err := Unmarshal(bad, "x"); err == nil || !strings.Contains(err.Error(), "ranks per entry 0 out of range") {
		t.Errorf("block 0: %v", err)
	}
	if a, b := SplitBlocks(4096); a != 1 || b != 1 {
		t.Errorf("SplitBlocks(4096) = %d, %d", a, b)
	}
	if a, b := SplitBlocks(100000); a != 98 || b != 782 {
		t.Errorf("SplitBlocks(100000) = %d, %d", a, b)
	}
}

// Merging in rank order (a tree reduction's partial merges, or the chunks
// of rank files) appends; any order gives the same result, with equal keys
// combined.
func TestRankedMerge(t *testing.T) {
	r0 := &Profile{RankFuncs: rankedWant.RankFuncs[:2], CommPeers: rankedWant.CommPeers[:1]}
	r1 := &Profile{RankFuncs: rankedWant.RankFuncs[2:], CommPeers: rankedWant.CommPeers[1:]}
	want := Marshal(&Profile{RankFuncs: rankedWant.RankFuncs, CommPeers: rankedWant.CommPeers})
	for _, in := range [][]*Profile{{r0, r1}, {r1, r0}} {
		if got := Marshal(MergeAll(in)); !bytes.Equal(got, want) {
			t.Errorf("merge of %d inputs differs", len(in))
		}
	}
	m := MergeAll([]*Profile{r1, r0, r1})
	if f := m.RankFuncsOf(1); len(f) != 3 || f[0].Calls != 6 || f[0].TimeNs != 80 || f[2].Calls != 4 {
		t.Errorf("doubled rank 1: %+v", f)
	}
	if c := m.CommPeers; len(c) != 2 || c[1].RecvMsgs != 20 || c[1].RecvBytes != 160 || c[0].SentMsgs != 10 {
		t.Errorf("comm peers: %+v", c)
	}
}
