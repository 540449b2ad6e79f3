package profile

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

var updateComp = flag.Bool("update-comp", false, "rewrite testdata/v1-comp.mps")

// compSample is two ranks' profiles with compensated figures.
func compSample() (*Profile, *Profile) {
	funcs := func(send, recv int64) []Func {
		return []Func{{Name: "MPI_Recv", Class: "p2p", Calls: 10, TimeNs: recv}, {Name: "MPI_Send", Class: "p2p", Calls: 10, TimeNs: send}}
	}
	r0 := &Profile{Meta: Meta{NumRanks: 2}, Ranks: []Rank{{Rank: 0, AppNs: 900e6, MPINs: 1e6}}, Funcs: funcs(1e6, 0)}
	r1 := &Profile{Meta: Meta{NumRanks: 2}, Ranks: []Rank{{Rank: 1, AppNs: 950e6, MPINs: 800e6}}, Funcs: funcs(0, 800e6)}
	r0.CompFuncs, r0.CompRanks = Compensate(r0.Ranks[0], r0.Funcs, map[string]int64{"MPI_Send": 1000}, CompRank{CallNs: 40e6, InNs: 50, CollNs: 9000, Calls: 12, DelayNs: 480e6})
	r1.CompFuncs, r1.CompRanks = Compensate(r1.Ranks[0], r1.Funcs, map[string]int64{"MPI_Recv": 470e6}, CompRank{CallNs: 30, InNs: 55, CollNs: 9100, Calls: 12, DelayNs: 470e6})
	return r0, r1
}

// TestCompensateEncodeMerge: compensated figures are made from the
// measured ones, survive encoding, and merge (ranks kept, functions
// summed) in either order.
func TestCompensateEncodeMerge(t *testing.T) {
	r0, r1 := compSample()
	if c := r0.CompRanks[0]; c.AppNs != 420e6 || c.MPINs != 1e6-1000 || c.Rank != 0 {
		t.Errorf("rank 0: %+v", c)
	}
	if c := r1.CompRanks[0]; c.AppNs != 480e6 || c.MPINs != 330e6 {
		t.Errorf("rank 1: %+v", c)
	}
	for _, order := range [][]*Profile{{r0, r1}, {r1, r0}} {
		m := MergeAll(order)
		got, err := Unmarshal(Marshal(m), "test")
		if err != nil {
			t.Fatal(err)
		}
		if len(got.CompRanks) != 2 || got.CompRanks[0].Rank != 0 || got.CompRanks[1].CallNs != 30 {
			t.Errorf("ranks: %+v", got.CompRanks)
		}
		if len(got.CompFuncs) != 2 || got.CompFuncs[0].Name != "MPI_Recv" || got.CompFuncs[0].TimeNs != 330e6 ||
			got.CompFuncs[1].TimeNs != 1e6-1000 || got.CompFuncs[0].RankTime.N != 2 {
			t.Errorf("funcs: %+v", got.CompFuncs)
		}
		if !reflect.DeepEqual(got.CompRanks, m.CompRanks) || !reflect.DeepEqual(got.CompFuncs, m.CompFuncs) {
			t.Errorf("decoded %+v %+v, encoded %+v %+v", got.CompRanks, got.CompFuncs, m.CompRanks, m.CompFuncs)
		}
	}
	// A profile without compensation writes no section: its encoding is
	// what it was before the section existed.
	plain := MergeAll([]*Profile{{Ranks: []Rank{{Rank: 0}}}})
	if bytes.Contains(Marshal(plain), []byte("MPI_Recv")) || plain.CompRanks != nil {
		t.Errorf("plain profile: %+v", plain)
	}
}

// TestReadCompFile reads a pinned file with the compensation section
// (testdata/v1-comp.mps, written by -update-comp from compSample): a
// later change of the encoding that no longer reads it fails here.
func TestReadCompFile(t *testing.T) {
	path := filepath.Join("testdata", "v1-comp.mps")
	r0, r1 := compSample()
	want := MergeAll([]*Profile{r0, r1})
	if *updateComp {
		if err := os.WriteFile(path, Marshal(want), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Unmarshal(b, path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: got %+v\nwant %+v", path, got, want)
	}
	// Cut inside the section: the error names the file and an offset.
	if _, err := Unmarshal(b[:len(b)-8], path); err == nil {
		t.Errorf("truncated file read without error")
	}
}
