package report

import (
	"cmp"
	"slices"
	"strings"

	"github.com/mpiscope/mpiscope/profile"
)

// Limits of the per-communicator heat maps and the per-rank bars by
// function (docs/view.md).
const (
	htmlCommMatrices = 16 // communicators besides "all" and MPI_COMM_WORLD, those with the most bytes
	htmlStackFuncs   = 8  // functions stacked by name; the others are summed as "other"
)

// commMatrix is the heat map of one choice of communicator: "" all
// communicators (the Peer records), "world" MPI_COMM_WORLD only (Peer minus
// the CommPeer records of the pair), or a communicator's key.
type commMatrix struct {
	Comm  string `json:"comm"`
	Label string `json:"label"`
	matrixPlot
}

// commMatrices are the heat maps by communicator, in world ranks with the
// blocks of the all-communicators map. Nil without per-communicator data.
func commMatrices(p *profile.Profile, all *matrixPlot) []commMatrix {
	if all == nil || len(p.CommPeers) == 0 {
		return nil
	}
	names := map[string]string{}
	for _, c := range p.Comms {
		names[c.Key] = c.Name
	}
	label := func(key string) string {
		if n := names[key]; n != "" {
			return clean(n) + " (" + clean(key) + ")"
		}
		return clean(key)
	}
	bytes := map[string]int64{}
	for _, c := range p.CommPeers {
		bytes[c.Comm] += c.SentBytes
	}
	keys := make([]string, 0, len(bytes))
	for k := range bytes {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(bytes[b], bytes[a]), strings.Compare(a, b)) })
	keys = keys[:min(len(keys), htmlCommMatrices)]
	out := []commMatrix{{Comm: "", Label: "all communicators", matrixPlot: *all}}
	// MPI_COMM_WORLD: each pair's traffic less its other communicators'.
	other := map[[2]int][2]int64{}
	for _, c := range p.CommPeers {
		k := [2]int{c.Rank, c.Peer}
		v := other[k]
		other[k] = [2]int64{v[0] + c.SentBytes, v[1] + c.SentMsgs}
	}
	world := commMatrix{Comm: "world", Label: "MPI_COMM_WORLD only", matrixPlot: blankMatrix(all)}
	wc := newCells(&world.matrixPlot)
	for _, pr := range p.Peers {
		o := other[[2]int{pr.Rank, pr.Peer}]
		wc.add(pr.Rank, pr.Peer, pr.SentBytes-o[0], pr.SentMsgs-o[1])
	}
	out = append(out, world)
	want := map[string]int{}
	for _, k := range keys {
		want[k] = len(out)
		out = append(out, commMatrix{Comm: clean(k), Label: label(k), matrixPlot: blankMatrix(all)})
	}
	cells := make([]*cellSet, len(out))
	for _, c := range p.CommPeers {
		i, ok := want[c.Comm]
		if !ok {
			continue
		}
		if cells[i] == nil {
			cells[i] = newCells(&out[i].matrixPlot)
		}
		cells[i].add(c.Rank, c.Peer, c.SentBytes, c.SentMsgs)
	}
	return out
}

func blankMatrix(m *matrixPlot) matrixPlot {
	return matrixPlot{N: m.N, Block: m.Block, Blocks: m.Blocks, Cells: [][4]int64{}}
}

// cellSet adds sent traffic into a matrix's blocks.
type cellSet struct {
	m   *matrixPlot
	idx map[[2]int]int
}

func newCells(m *matrixPlot) *cellSet { return &cellSet{m: m, idx: map[[2]int]int{}} }

func (c *cellSet) add(rank, peer int, bytes, msgs int64) {
	if bytes == 0 && msgs == 0 || rank < 0 || peer < 0 || rank >= c.m.N || peer >= c.m.N {
		return
	}
	k := [2]int{rank / c.m.Block, peer / c.m.Block}
	i, ok := c.idx[k]
	if !ok {
		i = len(c.m.Cells)
		c.idx[k] = i
		c.m.Cells = append(c.m.Cells, [4]int64{int64(k[0]), int64(k[1]), 0, 0})
	}
	c.m.Cells[i][2] += bytes
	c.m.Cells[i][3] += msgs
}

// rankFuncPlot: each rank's MPI time stacked by function (the
// htmlStackFuncs functions with the most time, then "other"), in bars of
// at most htmlRankBars: Bin consecutive ranks per bar in Order, and in
// Sorted bars of Bin ranks taken in order of their MPI time. A bar is
// [first, last, ranks, ns per function in Funcs' order...], sums over its
// ranks; first and last are its lowest and highest rank in Order, and in
// Sorted the ranks with its least and most MPI time (the first ranks of
// those blocks when the profile keeps blocks of ranks).
type rankFuncPlot struct {
	Funcs  []string  `json:"funcs"`
	Bin    int       `json:"bin"`
	Order  [][]int64 `json:"order"`
	Sorted [][]int64 `json:"sorted"`
}

func rankFuncPlots(p *profile.Profile) *rankFuncPlot {
	if len(p.RankFuncs) == 0 {
		return nil
	}
	total := map[string]int64{}
	for _, f := range p.RankFuncs {
		total[f.Func] += f.TimeNs
	}
	names := make([]string, 0, len(total))
	for n := range total {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(total[b], total[a]), strings.Compare(a, b)) })
	col := map[string]int{}
	rp := &rankFuncPlot{Order: [][]int64{}, Sorted: [][]int64{}}
	for i, n := range names {
		if i == htmlStackFuncs && len(names) > htmlStackFuncs+1 {
			rp.Funcs = append(rp.Funcs, "other")
			for _, m := range names[i:] {
				col[m] = i
			}
			break
		}
		col[n] = i
		rp.Funcs = append(rp.Funcs, clean(n))
	}
	// One row per rank present (per block of ranks in a profile that
	// keeps blocks: RankFuncBlock), in rank order.
	nf := len(rp.Funcs)
	var ranks []int
	var rows [][]int64
	block := max(p.RankFuncBlock, 1)
	count := func(i int) int64 { // ranks in row i
		if block == 1 || p.Meta.NumRanks <= 0 {
			return 1
		}
		return int64(max(min(block, p.Meta.NumRanks-ranks[i]), 1))
	}
	for _, f := range p.RankFuncs {
		if len(ranks) == 0 || ranks[len(ranks)-1] != f.Rank {
			ranks = append(ranks, f.Rank)
			rows = append(rows, make([]int64, nf))
		}
		rows[len(rows)-1][col[f.Func]] += f.TimeNs
	}
	rp.Bin = (len(ranks) + htmlRankBars - 1) / htmlRankBars
	sum := func(idx []int, first, last int) []int64 {
		bar := make([]int64, 3+nf)
		bar[0], bar[1] = int64(first), int64(last)
		for _, i := range idx {
			bar[2] += count(i)
			for j, v := range rows[i] {
				bar[3+j] += v
			}
		}
		return bar
	}
	all := make([]int, len(ranks))
	for i := range all {
		all[i] = i
	}
	for lo := 0; lo < len(ranks); lo += rp.Bin {
		hi := min(lo+rp.Bin, len(ranks))
		rp.Order = append(rp.Order, sum(all[lo:hi], ranks[lo], ranks[hi-1]+int(count(hi-1))-1))
	}
	mpi := make([]int64, len(ranks))
	for i, r := range rows {
		for _, v := range r {
			mpi[i] += v
		}
	}
	byTime := sortedIdx(len(ranks), func(i, j int) int { return cmp.Or(cmp.Compare(mpi[i], mpi[j]), cmp.Compare(ranks[i], ranks[j])) })
	for lo := 0; lo < len(ranks); lo += rp.Bin {
		hi := min(lo+rp.Bin, len(ranks))
		rp.Sorted = append(rp.Sorted, sum(byTime[lo:hi], ranks[byTime[lo]], ranks[byTime[hi-1]]))
	}
	return rp
}
