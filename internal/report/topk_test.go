package report

import (
	"cmp"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/mpiscope/mpiscope/profile"
)

// TestSenders checks the selection of the top sender pairs against a stable
// sort of all of them (the former implementation), with many ties and
// duplicate (Rank, Peer) keys, for limits below, at and above the insertion
// threshold of topK.
func TestSenders(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	p := &profile.Profile{}
	for range 3000 {
		p.Peers = append(p.Peers, profile.Peer{Rank: rng.IntN(40), Peer: rng.IntN(40),
			SentMsgs: rng.Int64N(3), SentBytes: rng.Int64N(4) * 100})
	}
	var all []int
	var total int64
	for i, pr := range p.Peers {
		if pr.SentMsgs > 0 || pr.SentBytes > 0 {
			all = append(all, i)
			total += pr.SentBytes
		}
	}
	slices.SortStableFunc(all, func(i, j int) int { return cmpSent(&p.Peers[i], &p.Peers[j]) })
	for _, limit := range []int{-1, 0, 1, 20, topKInsert - 1, topKInsert, topKInsert + 1, len(all), len(all) + 5} {
		count, tot, idx := senders(p, limit)
		want := all
		if limit >= 0 && limit < len(all) {
			want = all[:limit]
		}
		if count != len(all) || tot != total || !reflect.DeepEqual(idx, want) && !(len(idx) == 0 && len(want) == 0) {
			t.Fatalf("limit %d: count %d total %d, %d indices; want %d %d %d", limit, count, tot, len(idx), len(all), total, len(want))
		}
	}
}

// TestSortedIdx checks sortedIdx against a stable sort.
func TestSortedIdx(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	v := make([]int, 5000)
	for i := range v {
		v[i] = rng.IntN(50)
	}
	c := func(i, j int) int { return cmp.Compare(v[j], v[i]) }
	want := make([]int, len(v))
	for i := range want {
		want[i] = i
	}
	slices.SortStableFunc(want, c)
	if got := sortedIdx(len(v), c); !reflect.DeepEqual(got, want) {
		t.Fatal("sortedIdx differs from a stable sort")
	}
}
