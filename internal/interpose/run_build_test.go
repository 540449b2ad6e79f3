package interpose

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mpiscope/mpiscope/profile"
)

func testRaw(rank int) *rawRank {
	return &rawRank{
		Rank: rank, Size: 4, Host: "h", NsPerTick: 0.5, AppTicks: 2000, MPITicks: 600, Calls: 30, Threads: 1, State: "final",
		FnNames: []string{"MPI_Allreduce", "MPI_Send"}, FnClasses: []string{"coll", "p2p"},
		Sites: []rawSite{
			{Fn: 1, PC: 0x1000, Calls: 10, Ticks: 200, Min: 10, Max: 40, Bytes: 80},
			{Fn: 1, PC: 0x2000, Calls: 10, Ticks: 100, Min: 6, Max: 20, Bytes: 80},
			{Fn: 0, PC: 0x3000, Region: 1, Calls: 10, Ticks: 300, Min: 20, Max: 60, Bytes: 80},
		},
		Hist:       map[[2]int]*rawBin{{1, 4}: {Calls: 20, Bytes: 160, Ticks: 300}},
		Peers:      map[int]*rawPeer{(rank + 1) % 4: {SMsgs: 20, SBytes: 160}},
		Comms:      []rawComm{{Key: "world", Size: 4, Creator: "predefined", Calls: 30, Ticks: 600, Bytes: 240}},
		Regions:    map[int]*rawRegion{1: {Path: "solve", Visits: 1, Ticks: 1000, MPITick: 300}},
		RegionPath: []string{"", "solve"},
		Events:     map[string]uint64{"tick": 3},
	}
}

func resolveTest(pc uint64) (string, uint64, bool) { return "/bin/app", pc - 0x100, true }

func TestBuildProfile(t *testing.T) {
	p := buildProfile(testRaw(2), profile.Meta{NumRanks: 4}, resolveTest)
	if len(p.Ranks) != 1 || p.Ranks[0].AppNs != 1000 || p.Ranks[0].MPINs != 300 {
		t.Fatalf("ranks %+v", p.Ranks)
	}
	send := p.Funcs[1]
	if send.Name != "MPI_Send" || send.Calls != 20 || send.TimeNs != 150 || send.MinCallNs != 3 || send.MaxCallNs != 20 || send.Bytes != 160 {
		t.Errorf("MPI_Send %+v", send)
	}
	if len(p.Sites) != 3 || p.Sites[0].Loc.Module != "/bin/app" {
		t.Errorf("sites %+v", p.Sites)
	}
	for _, s := range p.Sites {
		if s.Func == "MPI_Allreduce" && (s.Region != "solve" || s.Loc.Offset != 0x2f00) {
			t.Errorf("allreduce site %+v", s)
		}
	}
	if len(p.Regions) != 1 || p.Regions[0].WallNs != 500 || p.Regions[0].MPINs != 150 {
		t.Errorf("regions %+v", p.Regions)
	}
	if len(p.Peers) != 1 || p.Peers[0].Peer != 3 || p.Peers[0].SentBytes != 160 {
		t.Errorf("peers %+v", p.Peers)
	}
}

// chanComm is an in-memory communicator: rank i's inbox from rank j is a channel.
type chanComm struct {
	rank, size int
	box        [][]chan []byte // box[dst][src]
}

func (c chanComm) Rank() int                        { return c.rank }
func (c chanComm) Size() int                        { return c.size }
func (c chanComm) Send(dest int, data []byte) error { c.box[dest][c.rank] <- data; return nil }
func (c chanComm) Recv(src int) ([]byte, error)     { return <-c.box[c.rank][src], nil }

// TestTreeReduce merges P ranks in a binomial tree and checks the result
// equals the plain merge of all rank profiles, and how many messages the
// root receives (log2 P).
func TestTreeReduce(t *testing.T) {
	for _, size := range []int{1, 2, 3, 5, 8, 13} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			box := make([][]chan []byte, size)
			for i := range box {
				box[i] = make([]chan []byte, size)
				for j := range box[i] {
					box[i][j] = make(chan []byte, 1)
				}
			}
			var wg sync.WaitGroup
			results := make([]*profile.Profile, size)
			var locals []*profile.Profile
			for r := 0; r < size; r++ {
				locals = append(locals, buildProfile(testRaw(r), profile.Meta{NumRanks: size}, resolveTest))
			}
			want := profile.Marshal(profile.MergeAll(locals))
			for r := 0; r < size; r++ {
				wg.Add(1)
				go func(r int) {
					defer wg.Done()
					local := buildProfile(testRaw(r), profile.Meta{NumRanks: size}, resolveTest)
					var err error
					results[r], err = treeReduce(chanComm{r, size, box}, local)
					if err != nil {
						t.Error(err)
					}
				}(r)
			}
			wg.Wait()
			for r := 1; r < size; r++ {
				if results[r] != nil {
					t.Errorf("rank %d kept a result", r)
				}
			}
			root := results[0]
			if got := profile.Marshal(root); string(got) != string(want) {
				t.Errorf("tree merge differs from MergeAll")
			}
			if len(root.Ranks) != size || root.Funcs[1].Calls != int64(20*size) || root.Funcs[1].RankTime.N != int64(size) {
				t.Errorf("root: %d ranks, MPI_Send %+v", len(root.Ranks), root.Funcs[1])
			}
		})
	}
}

func TestJobDirName(t *testing.T) {
	if got := jobDirName("/path/to/my app", 64, testTime); got != "mpiscope-my_app-64r-20261122-030405" {
		t.Errorf("got %q", got)
	}
}

var testTime = mustTime("2026-11-22T03:04:05Z")

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}
