package profile

import (
	"bytes"
	"math"
	"reflect"
	"testing"
)

func TestSpread(t *testing.T) {
	var s Spread
	for i, v := range []float64{2, 4, 4, 4, 5, 5, 7, 9} {
		s.Add(SpreadOf(10-i, v))
	}
	want := Spread{N: 8, Sum: 40, SumSq: 232, Min: 2, Max: 9, MinRank: 10, MaxRank: 3}
	if s != want {
		t.Fatalf("got %+v want %+v", s, want)
	}
	if s.Mean() != 5 || s.COV() != 0.4 {
		t.Fatalf("mean %v cov %v, want 5 0.4", s.Mean(), s.COV())
	}
	// Ties keep the lower rank, whatever the order.
	a, b := SpreadOf(7, 1), SpreadOf(2, 1)
	a.Add(b)
	if a.MinRank != 2 || a.MaxRank != 2 {
		t.Fatalf("tie: %+v", a)
	}
	// Empty spreads are the identity.
	e := Spread{}
	e.Add(SpreadOf(3, 4))
	e.Add(Spread{})
	if e != SpreadOf(3, 4) {
		t.Fatalf("identity: %+v", e)
	}
	for _, z := range []Spread{{}, SpreadOf(1, 0), {N: 2, Sum: 3, SumSq: -1}} {
		if z.COV() != 0 || (z.N == 0 && z.Mean() != 0) {
			t.Fatalf("%+v: COV %v", z, z.COV())
		}
	}
	if c := (Spread{N: 2, Sum: 4, SumSq: 8}).COV(); c != 0 {
		t.Fatalf("constant values: COV %v", c)
	}
}

func TestMergeValues(t *testing.T) {
	p := &Profile{
		Meta: Meta{Command: []string{"./a"}, NumRanks: 4, Hosts: []string{"b", "a"}, Tool: "t1",
			StartNs: 0, StopNs: 50, Snapshot: 1},
		Ranks: []Rank{{Rank: 2, AppNs: 10, State: "abort"}, {Rank: 0, AppNs: 5}},
		Funcs: []Func{
			{Name: "MPI_Send", Class: "p2p", Calls: 2, TimeNs: 10, MinCallNs: 4, MaxCallNs: 6, Bytes: 8, RankTime: SpreadOf(0, 10)},
			{Name: "MPI_Barrier", Calls: 0, MinCallNs: 0},
			{Name: "MPI_Recv", Calls: 0, MinCallNs: 9},
		},
		Sites: []Site{
			{Func: "MPI_Send", Loc: Loc{Module: "m", Offset: 1}, Calls: 2, TimeNs: 10, MinNs: 4, MaxNs: 6, RankTime: SpreadOf(0, 10)},
			{Func: "MPI_Send", Loc: Loc{Module: "m", Offset: 1}, Region: "r", Calls: 1, TimeNs: 1, MinNs: 1, MaxNs: 1},
		},
		Hists:   []Hist{{Func: "MPI_Send", Bins: []Bin{{Log2: 3, Calls: 2, Bytes: 8, TimeNs: 10}}}},
		Comms:   []Comm{{Key: "world", Size: 4, Members: 1, Calls: 2, TimeNs: 10, Bytes: 8}},
		Peers:   []Peer{{Rank: 0, Peer: 1, SentMsgs: 2, SentBytes: 8}},
		Regions: []Region{{Path: "r", Visits: 1, WallNs: 100, MPINs: 1, Ranks: 1, RankMPI: SpreadOf(0, 1)}},
		Events:  []Event{{Text: "e", Count: 2, Ranks: 1}},
	}
	q := &Profile{
		Meta: Meta{Command: []string{"./b"}, NumRanks: 2, Hosts: []string{"c", "a"}, MPIVersion: "3.1",
			StartNs: 7, StopNs: 40, Partial: true},
		Ranks: []Rank{{Rank: 2, AppNs: 20, State: "final"}, {Rank: 1, AppNs: 3}},
		Funcs: []Func{
			{Name: "MPI_Send", Calls: 1, TimeNs: 3, MinCallNs: 3, MaxCallNs: 3, Bytes: 4, RankTime: SpreadOf(1, 3)},
			{Name: "MPI_Barrier", Calls: 3, TimeNs: 9, MinCallNs: 2, MaxCallNs: 5},
			{Name: "MPI_Recv", Calls: 0, MinCallNs: 4},
		},
		Sites: []Site{
			{Func: "MPI_Send", Loc: Loc{Module: "m", Offset: 1, Function: "main", File: "a.c", Line: 3},
				Calls: 1, TimeNs: 3, MinNs: 3, MaxNs: 3, RankTime: SpreadOf(1, 3)},
		},
		Hists: []Hist{{Func: "MPI_Send", Bins: []Bin{{Log2: 3, Calls: 1, Bytes: 4, TimeNs: 3}, {Log2: 0, Calls: 1}}},
			{Func: "MPI_Bcast", Bins: []Bin{{Log2: 1, Calls: 1, Bytes: 1}}}},
		Comms:   []Comm{{Key: "world", Name: "W", Creator: "", Members: 1, Calls: 1, TimeNs: 3, Bytes: 4}, {Key: "self", Size: 1}},
		Peers:   []Peer{{Rank: 1, Peer: 0, RecvMsgs: 1, RecvBytes: 4}, {Rank: 0, Peer: 1, SentMsgs: 1, SentBytes: 4}},
		Regions: []Region{{Path: "r", Visits: 2, WallNs: 50, MPINs: 2, Ranks: 1, RankMPI: SpreadOf(1, 2)}},
		Events:  []Event{{Text: "e", Count: 1, Ranks: 1}, {Text: "d", Count: 1, Ranks: 1}},
	}
	qBefore := Marshal(q)
	p.Merge(q)
	if !bytes.Equal(Marshal(q), qBefore) {
		t.Fatal("Merge modified its argument")
	}
	want := &Profile{
		Meta: Meta{Command: []string{"./a"}, NumRanks: 4, Hosts: []string{"a", "b", "c"}, Tool: "t1",
			MPIVersion: "3.1", StartNs: 7, StopNs: 50, Snapshot: 1, Partial: true},
		Ranks: []Rank{{Rank: 0, AppNs: 5}, {Rank: 1, AppNs: 3}, {Rank: 2, AppNs: 20, State: "final"}},
		Funcs: []Func{
			{Name: "MPI_Barrier", Calls: 3, TimeNs: 9, MinCallNs: 2, MaxCallNs: 5},
			{Name: "MPI_Recv", MinCallNs: 4},
			{Name: "MPI_Send", Class: "p2p", Calls: 3, TimeNs: 13, MinCallNs: 3, MaxCallNs: 6, Bytes: 12,
				RankTime: Spread{N: 2, Sum: 13, SumSq: 109, Min: 3, Max: 10, MinRank: 1, MaxRank: 0}},
		},
		Sites: []Site{
			{Func: "MPI_Send", Loc: Loc{Module: "m", Offset: 1, Function: "main", File: "a.c", Line: 3},
				Calls: 3, TimeNs: 13, MinNs: 3, MaxNs: 6,
				RankTime: Spread{N: 2, Sum: 13, SumSq: 109, Min: 3, Max: 10, MinRank: 1, MaxRank: 0}},
			{Func: "MPI_Send", Loc: Loc{Module: "m", Offset: 1}, Region: "r", Calls: 1, TimeNs: 1, MinNs: 1, MaxNs: 1},
		},
		Hists: []Hist{
			{Func: "MPI_Bcast", Bins: []Bin{{Log2: 1, Calls: 1, Bytes: 1}}},
			{Func: "MPI_Send", Bins: []Bin{{Log2: 0, Calls: 1}, {Log2: 3, Calls: 3, Bytes: 12, TimeNs: 13}}},
		},
		Comms: []Comm{{Key: "self", Size: 1}, {Key: "world", Name: "W", Size: 4, Members: 2, Calls: 3, TimeNs: 13, Bytes: 12}},
		Peers: []Peer{{Rank: 0, Peer: 1, SentMsgs: 3, SentBytes: 12}, {Rank: 1, Peer: 0, RecvMsgs: 1, RecvBytes: 4}},
		Regions: []Region{{Path: "r", Visits: 3, WallNs: 150, MPINs: 3, Ranks: 2,
			RankMPI: Spread{N: 2, Sum: 3, SumSq: 5, Min: 1, Max: 2, MinRank: 0, MaxRank: 1}}},
		Events: []Event{{Text: "d", Count: 1, Ranks: 1}, {Text: "e", Count: 3, Ranks: 2}},
	}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("merge:\n got %+v\nwant %+v", p, want)
	}
	// The result owns its memory: changing it leaves q alone.
	p.Hists[1].Bins[0].Calls = 99
	p.Meta.Hosts[0] = "zz"
	if !bytes.Equal(Marshal(q), qBefore) {
		t.Fatal("merge result aliases its argument")
	}
}

func TestMergeRankConflict(t *testing.T) {
	a := &Profile{Ranks: []Rank{{Rank: 1, AppNs: 10, State: "snapshot"}}}
	b := &Profile{Ranks: []Rank{{Rank: 1, AppNs: 30, State: "abort"}}}
	c := &Profile{Ranks: []Rank{{Rank: 1, AppNs: 30, State: "final"}}}
	for _, order := range [][]*Profile{{a, b, c}, {c, b, a}, {b, a, c}, {a, c, b}} {
		got := MergeAll(order)
		if len(got.Ranks) != 1 || got.Ranks[0].AppNs != 30 || got.Ranks[0].State != "final" {
			t.Fatalf("got %+v", got.Ranks)
		}
	}
}

func TestMergeMetaConflicts(t *testing.T) {
	a := &Profile{Meta: Meta{Tool: "v2", Command: []string{"b"}, Settings: []Setting{{"X", "1"}}}}
	b := &Profile{Meta: Meta{Tool: "v1", Family: "mpich", Settings: []Setting{{"X", "0"}}}}
	for _, order := range [][]*Profile{{a, b}, {b, a}} {
		m := MergeAll(order).Meta
		if m.Tool != "v1" || m.Family != "mpich" || m.Command[0] != "b" || m.Settings[0].Value != "0" {
			t.Fatalf("got %+v", m)
		}
	}
}

func TestMergeNilAndEmpty(t *testing.T) {
	if got := MergeAll(nil); !reflect.DeepEqual(got, &Profile{}) {
		t.Fatalf("got %+v", got)
	}
	p := sample()
	p.Sort()
	want := Marshal(p)
	p.Merge(nil)
	p.Merge(&Profile{})
	if !bytes.Equal(Marshal(p), want) {
		t.Fatal("merging nothing changed the profile")
	}
	if got := MergeAll([]*Profile{nil, sample(), nil}); !bytes.Equal(Marshal(got), want) {
		t.Fatal("MergeAll of one profile differs from it")
	}
}

func TestSort(t *testing.T) {
	p := &Profile{
		Meta:    Meta{Hosts: []string{"b", "a"}},
		Ranks:   []Rank{{Rank: 3}, {Rank: 1}},
		Funcs:   []Func{{Name: "b"}, {Name: "a"}},
		Sites:   []Site{{Func: "a", Loc: Loc{Offset: 2}}, {Func: "a", Loc: Loc{Offset: 1}, Region: "z"}, {Func: "a", Loc: Loc{Offset: 1}}},
		Hists:   []Hist{{Func: "b"}, {Func: "a", Bins: []Bin{{Log2: 5}, {Log2: 1}}}},
		Comms:   []Comm{{Key: "world"}, {Key: "self"}},
		Peers:   []Peer{{Rank: 1, Peer: 0}, {Rank: 0, Peer: 2}, {Rank: 0, Peer: 1}},
		Regions: []Region{{Path: "b"}, {Path: "a/b"}},
		Events:  []Event{{Text: "y"}, {Text: "x"}},
	}
	p.Sort()
	want := &Profile{
		Meta:    Meta{Hosts: []string{"a", "b"}},
		Ranks:   []Rank{{Rank: 1}, {Rank: 3}},
		Funcs:   []Func{{Name: "a"}, {Name: "b"}},
		Sites:   []Site{{Func: "a", Loc: Loc{Offset: 1}}, {Func: "a", Loc: Loc{Offset: 1}, Region: "z"}, {Func: "a", Loc: Loc{Offset: 2}}},
		Hists:   []Hist{{Func: "a", Bins: []Bin{{Log2: 1}, {Log2: 5}}}, {Func: "b"}},
		Comms:   []Comm{{Key: "self"}, {Key: "world"}},
		Peers:   []Peer{{Rank: 0, Peer: 1}, {Rank: 0, Peer: 2}, {Rank: 1, Peer: 0}},
		Regions: []Region{{Path: "a/b"}, {Path: "b"}},
		Events:  []Event{{Text: "x"}, {Text: "y"}},
	}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("got %+v", p)
	}
}

// permutations calls f with every permutation of n indices.
func permutations(n int, f func([]int)) {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	var rec func(k int)
	rec = func(k int) {
		if k == n {
			f(idx)
			return
		}
		for i := k; i < n; i++ {
			idx[k], idx[i] = idx[i], idx[k]
			rec(k + 1)
			idx[k], idx[i] = idx[i], idx[k]
		}
	}
	rec(0)
}

// mergeTree merges ps by a random binary tree shape chosen by seed.
func mergeTree(ps []*Profile, seed *uint64) *Profile {
	if len(ps) == 1 {
		c := &Profile{}
		c.Merge(ps[0])
		return c
	}
	*seed = *seed*6364136223846793005 + 1442695040888963407
	cut := 1 + int(*seed>>33)%(len(ps)-1)
	l := mergeTree(ps[:cut], seed)
	l.Merge(mergeTree(ps[cut:], seed))
	return l
}

// Merge is commutative and associative: every order and grouping of the same
// inputs encodes to the same bytes.
func TestMergeAssociativeCommutative(t *testing.T) {
	var in []*Profile
	for r := 0; r < 5; r++ {
		p := rankProfile(r, 6, 4+r%3, 12+r, 3)
		p.Meta.Partial = r == 3
		p.Meta.Snapshot = r % 2
		if r == 2 {
			p.Meta.MPILibrary = "libX"
			p.Sites[0].Loc.Function = "solve"
			p.Sites[0].Loc.Line = 77
		}
		if r == 4 {
			p.Meta.MPILibrary = "libA"
			p.Sites[0].Loc.File = "s.f90"
			p.Ranks = append(p.Ranks, Rank{Rank: 1, AppNs: 9999, State: "abort"})
			p.Funcs = append(p.Funcs, Func{Name: "MPI_F000", Calls: 0, MinCallNs: 1})
			p.Comms[0].Name = "W"
		}
		in = append(in, p)
	}
	// Duplicate one input: merging is not idempotent, sums double.
	in = append(in, rankProfile(0, 6, 4, 12, 3))

	want := Marshal(MergeAll(in))
	seed := uint64(1)
	n := 0
	permutations(len(in), func(idx []int) {
		ps := make([]*Profile, len(in))
		for i, j := range idx {
			ps[i] = in[j]
		}
		if got := Marshal(MergeAll(ps)); !bytes.Equal(got, want) {
			t.Fatalf("MergeAll of permutation %v differs", idx)
		}
		if n%7 == 0 {
			if got := Marshal(mergeTree(ps, &seed)); !bytes.Equal(got, want) {
				t.Fatalf("tree merge of permutation %v differs", idx)
			}
		}
		n++
	})
	// Left fold with Merge equals MergeAll.
	acc := &Profile{}
	for _, p := range in {
		acc.Merge(p)
	}
	if !bytes.Equal(Marshal(acc), want) {
		t.Fatal("left fold differs")
	}
	got := MergeAll(in)
	if got.Ranks[1].AppNs != 9999 || got.Meta.MPILibrary != "libA" || got.Comms[0].Name != "W" {
		t.Fatalf("conflict resolution: %+v %+v", got.Ranks[1], got.Meta)
	}
	if s := got.Sites[0]; s.Loc.Function != "solve" || s.Loc.Line != 77 || s.Loc.File != "s.f90" {
		t.Fatalf("symbolized fields not kept: %+v", s.Loc)
	}
}

// Merging many one-rank profiles: exact totals known by construction.
func TestMergeAllTotals(t *testing.T) {
	const n = 1000
	ps := make([]*Profile, n)
	var wantCalls, wantTime int64
	for r := range ps {
		ps[r] = rankProfile(r, n, 5, 20, 4)
		for _, f := range ps[r].Funcs {
			wantCalls += f.Calls
			wantTime += f.TimeNs
		}
	}
	m := MergeAll(ps)
	if len(m.Ranks) != n || len(m.Funcs) != 5 || len(m.Sites) != 20 || len(m.Peers) != 4*n || len(m.Meta.Hosts) != (n+31)/32 {
		t.Fatalf("sizes: %d ranks %d funcs %d sites %d peers %d hosts", len(m.Ranks), len(m.Funcs), len(m.Sites), len(m.Peers), len(m.Meta.Hosts))
	}
	var calls, tm int64
	for _, f := range m.Funcs {
		calls += f.Calls
		tm += f.TimeNs
		if f.RankTime.N != n || f.RankTime.Sum != float64(f.TimeNs) {
			t.Fatalf("%s: spread %+v vs time %d", f.Name, f.RankTime, f.TimeNs)
		}
	}
	if calls != wantCalls || tm != wantTime {
		t.Fatalf("calls %d time %d, want %d %d", calls, tm, wantCalls, wantTime)
	}
	if m.Comms[0].Members != n || m.Regions[0].Ranks != n || m.Events[0].Count != n/5 {
		t.Fatalf("comm %+v region %+v event %+v", m.Comms[0], m.Regions[0], m.Events[0])
	}
	if m.Meta.StartNs != 1000 || m.Meta.StopNs != 5010 || m.Meta.NumRanks != n {
		t.Fatalf("meta %+v", m.Meta)
	}
	// MinCallNs: rank values v(i+1) range over 1..97, so the minimum is 1.
	for _, f := range m.Funcs {
		if f.MinCallNs != 1 || f.MaxCallNs != 97*3 {
			t.Fatalf("%s: min %d max %d", f.Name, f.MinCallNs, f.MaxCallNs)
		}
	}
	if m.Funcs[0].RankTime.Min != 10 || m.Funcs[0].RankTime.Max != 970 {
		t.Fatalf("spread %+v", m.Funcs[0].RankTime)
	}
	if math.IsNaN(m.Funcs[0].RankTime.COV()) {
		t.Fatal("NaN COV")
	}
}

func benchProfiles(b *testing.B, n int) []*Profile {
	// Profiles share their function and site tables in groups (the values
	// still differ between groups) so the inputs fit in little memory;
	// MergeAll does the same work per profile either way.
	const groups = 97
	shared := make([]*Profile, groups)
	for g := range shared {
		shared[g] = rankProfile(g, n, 50, 200, 0)
	}
	ps := make([]*Profile, n)
	for r := range ps {
		p := rankProfile(r, n, 0, 0, 16)
		s := shared[r%groups]
		p.Funcs, p.Sites, p.Hists = s.Funcs, s.Sites, s.Hists
		ps[r] = p
	}
	return ps
}

func BenchmarkMergeAll100k(b *testing.B) {
	if testing.Short() {
		b.Skip("100k profiles")
	}
	ps := benchProfiles(b, 100000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m := MergeAll(ps)
		if len(m.Ranks) != 100000 || len(m.Peers) != 1600000 || len(m.Sites) != 200 {
			b.Fatalf("%d ranks %d peers %d sites", len(m.Ranks), len(m.Peers), len(m.Sites))
		}
	}
}

// BenchmarkMergeRepeated folds 10,000 profiles with the same 200 sites into
// an accumulator with Merge, one at a time: the cost per Merge stays
// proportional to the distinct keys, so the total is linear.
func BenchmarkMergeRepeated10k(b *testing.B) {
	ps := make([]*Profile, 10000)
	for i := range ps {
		ps[i] = rankProfile(i%97, 1, 50, 200, 0)
		ps[i].Ranks = nil
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		acc := &Profile{}
		for _, p := range ps {
			acc.Merge(p)
		}
		if len(acc.Sites) != 200 || acc.Sites[0].RankTime.N != 10000 {
			b.Fatalf("%d sites", len(acc.Sites))
		}
	}
}
