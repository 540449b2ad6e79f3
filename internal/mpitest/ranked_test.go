package mpitest

import (
	"fmt"
	"testing"
)

// TestRankedSplit: the merged profile of testdata/progs/commtraffic.c (4
// ranks) holds each communicator's point-to-point pairs in world ranks,
// and each rank's calls per function and communicator, exactly; each
// rank's entries add up to its Func spread and its Rank line.
func TestRankedSplit(t *testing.T) {
	Families(t, func(t *testing.T, f Family) {
		prog := Compile(t, f.MPICC, "commtraffic.c", t.TempDir())
		p, _, _ := f.Profile(t, 4, nil, prog)
		var got []string
		for _, c := range p.CommPeers {
			got = append(got, fmt.Sprintf("%d %s %d: %d %d %d %d", c.Rank, c.Comm, c.Peer, c.SentMsgs, c.SentBytes, c.RecvMsgs, c.RecvBytes))
		}
		want := []string{
			"0 Comm_split:2@0 2: 5 5000 0 0",
			"1 Comm_split:2@1 3: 5 5000 0 0",
			"2 Comm_split:2@0 0: 0 0 5 5000",
			"3 Comm_split:2@1 1: 0 0 5 5000",
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("communicator peers:\n%q\nwant\n%q", got, want)
		}
		// World traffic: every pair's Peer record minus its CommPeer.
		for _, q := range p.Peers {
			sent := q.SentBytes
			for _, c := range p.CommPeers {
				if c.Rank == q.Rank && c.Peer == q.Peer {
					sent -= c.SentBytes
				}
			}
			if w := int64(0); q.Peer == (q.Rank+1)%4 && sent != 1000 || q.Peer != (q.Rank+1)%4 && sent != w {
				t.Errorf("world %d->%d: %d bytes sent", q.Rank, q.Peer, sent)
			}
		}
		type key struct {
			rank     int
			fn, comm string
		}
		calls := map[key]int64{}
		perRank := map[int]int64{}
		perFunc := map[[2]any]int64{}
		for _, r := range p.RankFuncs {
			calls[key{r.Rank, r.Func, r.Comm}] = r.Calls
			perRank[r.Rank] += r.TimeNs
			perFunc[[2]any{r.Func, r.Rank}] += r.TimeNs
		}
		for r := 0; r < 4; r++ {
			half := fmt.Sprintf("Comm_split:2@%d", r%2)
			for k, n := range map[key]int64{
				{r, "MPI_Allreduce", "world"}: 3, {r, "MPI_Barrier", half}: int64(r%2 + 1),
				{r, "MPI_Send", "world"}: 10, {r, "MPI_Irecv", "world"}: 10, {r, "MPI_Wait", ""}: 10,
				{r, "MPI_Send", half}: map[bool]int64{true: 5}[r < 2], {r, "MPI_Recv", half}: map[bool]int64{true: 5}[r >= 2],
			} {
				if calls[k] != n {
					t.Errorf("rank %d %s on %q: %d calls, want %d", r, k.fn, k.comm, calls[k], n)
				}
			}
		}
		for _, rk := range p.Ranks {
			// Each record's time is rounded to ns on its own, the rank's
			// total once: they differ by less than 1 ns per record.
			if d := perRank[rk.Rank] - rk.MPINs; d*d > int64(len(p.RankFuncsOf(rk.Rank))*len(p.RankFuncsOf(rk.Rank))) {
				t.Errorf("rank %d: functions add up to %d ns, its MPI time is %d ns", rk.Rank, perRank[rk.Rank], rk.MPINs)
			}
		}
		for _, fn := range p.Funcs {
			var sum, mx float64
			for r := 0; r < 4; r++ {
				v := float64(perFunc[[2]any{fn.Name, r}])
				sum += v
				mx = max(mx, v)
			}
			if sum != fn.RankTime.Sum || mx != fn.RankTime.Max {
				t.Errorf("%s: ranks add up to %v (max %v), its spread %v (max %v)", fn.Name, sum, mx, fn.RankTime.Sum, fn.RankTime.Max)
			}
		}
	})
}
