package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/profile"
)

// TestRankFuncPlotLarge: 2,500 ranks of 10 functions are drawn as 834 bars
// of 3 ranks (the last of one), 8 functions by name and "other", each bar
// the exact sum of its ranks; sorted bars take the ranks by MPI time.
func TestRankFuncPlotLarge(t *testing.T) {
	p := &profile.Profile{Meta: profile.Meta{NumRanks: 2500}}
	for r := range 2500 {
		for f := range 10 {
			// Function f takes (f+1)*1000 ns on every rank, plus r on MPI_F9.
			ns := int64(f+1) * 1000
			if f == 9 {
				ns += int64(r)
			}
			p.RankFuncs = append(p.RankFuncs, profile.RankFunc{Rank: r, Func: fmt.Sprintf("MPI_F%d", f), Comm: "world", Calls: 1, TimeNs: ns})
		}
	}
	rp := rankFuncPlots(p)
	if rp.Bin != 3 || len(rp.Order) != 834 || len(rp.Sorted) != 834 || len(rp.Funcs) != 9 || rp.Funcs[0] != "MPI_F9" || rp.Funcs[8] != "other" {
		t.Fatalf("bin %d, %d bars, %d sorted, funcs %q", rp.Bin, len(rp.Order), len(rp.Sorted), rp.Funcs)
	}
	// Bar 1: ranks 3-5. MPI_F9: 3*10000 + 3+4+5; "other" (MPI_F0 and MPI_F1): 3*(1000+2000).
	b := rp.Order[1]
	if b[0] != 3 || b[1] != 5 || b[2] != 3 || b[3] != 30012 || b[3+8] != 9000 || b[3+1] != 27000 {
		t.Errorf("bar 1: %v", b)
	}
	if last := rp.Order[833]; last[0] != 2499 || last[1] != 2499 || last[2] != 1 || last[3] != 12499 {
		t.Errorf("last bar: %v", last)
	}
	if s := rp.Sorted[833]; s[0] != 2499 || s[2] != 1 {
		t.Errorf("sorted last bar: %v", s)
	}
	if s := rp.Sorted[0]; s[0] != 0 || s[1] != 2 || s[3] != 30003 {
		t.Errorf("sorted first bar: %v", s)
	}
}

// TestCommMatrices: 20 communicators with traffic: the 16 with the most
// bytes are offered, after "all" and MPI_COMM_WORLD (each pair's traffic
// less its other communicators'), in blocks of the all-communicators map.
func TestCommMatrices(t *testing.T) {
	p := &profile.Profile{Meta: profile.Meta{NumRanks: 300}}
	for c := range 20 {
		key := fmt.Sprintf("Comm_split:2@%d", c)
		p.CommPeers = append(p.CommPeers, profile.CommPeer{Rank: c, Comm: key, Peer: c + 150, SentMsgs: 1, SentBytes: int64(100 + c)})
		p.Peers = append(p.Peers, profile.Peer{Rank: c, Peer: c + 150, SentMsgs: 3, SentBytes: int64(100+c) + 7})
	}
	p.Sort()
	all := matrix(p)
	m := commMatrices(p, all)
	if len(m) != 18 || m[0].Label != "all communicators" || m[1].Comm != "world" || m[2].Comm != "Comm_split:2@19" || m[17].Comm != "Comm_split:2@4" {
		t.Fatalf("%d matrices: %q %q %q %q", len(m), m[0].Label, m[1].Comm, m[2].Comm, m[len(m)-1].Comm)
	}
	if all.Block != 3 || m[2].Block != 3 || m[2].Blocks != 100 {
		t.Errorf("blocks: %d, %d of %d", all.Block, m[2].Block, m[2].Blocks)
	}
	if c := m[2].Cells; len(c) != 1 || c[0] != [4]int64{6, 56, 119, 1} {
		t.Errorf("Comm_split:2@19: %v", c)
	}
	// World: 7 bytes and 2 messages per pair; ranks 0-2 are block 0.
	if c := m[1].Cells; len(c) != 7 || c[0] != [4]int64{0, 50, 21, 6} {
		t.Errorf("world: %v", c)
	}
}

// TestHTMLRankedSections: the bars by function and the communicator
// selector are on the page only when the profile has the split.
func TestHTMLRankedSections(t *testing.T) {
	p := &profile.Profile{Meta: profile.Meta{NumRanks: 2},
		Ranks: []profile.Rank{{Rank: 0, AppNs: 10, MPINs: 5}, {Rank: 1, AppNs: 10, MPINs: 5}},
		Funcs: []profile.Func{{Name: "MPI_Send", Calls: 1, TimeNs: 5, Bytes: 8}},
		Peers: []profile.Peer{{Rank: 0, Peer: 1, SentMsgs: 1, SentBytes: 8}, {Rank: 1, Peer: 0, RecvMsgs: 1, RecvBytes: 8}}}
	page := htmlPage(p, Options{}, nil)
	if strings.Contains(page, `id="plot-rankfuncs"`) || strings.Contains(page, `id="matrix-comm"`) || strings.Contains(page, `"comm_matrices"`) {
		t.Errorf("a profile without the split has its plots")
	}
	p.RankFuncs = []profile.RankFunc{{Rank: 0, Func: "MPI_Send", Comm: "c", Calls: 1, TimeNs: 5, Bytes: 8}}
	p.CommPeers = []profile.CommPeer{{Rank: 0, Comm: "c", Peer: 1, SentMsgs: 1, SentBytes: 8}}
	page = htmlPage(p, Options{}, nil)
	for _, want := range []string{`id="plot-rankfuncs"`, `id="matrix-comm"`, `"comm_matrices":[{"comm":"","label":"all communicators"`,
		`"rank_funcs":{"funcs":["MPI_Send"],"bin":1,"order":[[0,0,1,5]]`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
}

// TestRankFuncPlotBlocks: a 10,005-rank profile that keeps its split in
// blocks of 10 ranks: 1,001 blocks, two to a bar, each bar saying its 20
// ranks (the last: 5) and their range.
func TestRankFuncPlotBlocks(t *testing.T) {
	p := &profile.Profile{Meta: profile.Meta{NumRanks: 10005}, RankFuncBlock: 10}
	for b := 0; b < 10005; b += 10 {
		p.RankFuncs = append(p.RankFuncs, profile.RankFunc{Rank: b, Func: "MPI_Send", Comm: "world", Calls: 10, TimeNs: 100})
	}
	rp := rankFuncPlots(p)
	if rp.Bin != 2 || len(rp.Order) != 501 {
		t.Fatalf("bin %d, %d bars", rp.Bin, len(rp.Order))
	}
	if b := rp.Order[1]; b[0] != 20 || b[1] != 39 || b[2] != 20 || b[3] != 200 {
		t.Errorf("bar 1: %v", b)
	}
	if b := rp.Order[500]; b[0] != 10000 || b[1] != 10004 || b[2] != 5 {
		t.Errorf("last bar: %v", b)
	}
}
