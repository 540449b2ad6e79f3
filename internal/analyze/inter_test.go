package analyze

import (
	"testing"

	"github.com/mpiscope/mpiscope/internal/trace"
)

// interJob is 4 ranks whose halves, A = {0, 1} and B = {2, 3}, are the two
// groups of an intercommunicator (ID 1 on each rank, keyed by its local
// group as the runtime keys them), with four collectives on it:
//
//   - MPI_Barrier: A enters at 1000 and 2000, B at 5000 and 9000: each
//     group waits for the last member of the other, so A waits 8000 and
//     7000 (B, after A's last entry, none);
//   - MPI_Bcast from rank 0 (MPI_ROOT, Open MPI's -4), rank 1 passing
//     MPI_PROC_NULL (-2), B the remote root 0: the root enters at 20000,
//     B at 12000 and 13000 (late broadcast 8000 and 7000); rank 1, no part
//     of it, none;
//   - MPI_Allreduce: A at 30000 and 31000, B at 34000 and 32000: A waits
//     4000 and 3000;
//   - MPI_Reduce to rank 2 (MPI_ROOT, MPICH's -3), rank 3 passing
//     MPI_PROC_NULL (MPICH's -1), A the remote root 0: the root enters at
//     40000, A at 45000 and 47000 (early reduce 5000).
func interJob(t *testing.T) string {
	dir := t.TempDir()
	ic := func(e trace.Event) trace.Event { e.Comm = 1; return e }
	evs := [][]trace.Event{
		{ic(coll(fBarrier, 1000, 10000, -1)), ic(coll(fBcast, 20000, 21000, -4)), ic(coll(fAllreduce, 30000, 35000, -1)), ic(coll(fReduce, 45000, 48000, 0))},
		{ic(coll(fBarrier, 2000, 10000, -1)), ic(coll(fBcast, 11000, 11100, -2)), ic(coll(fAllreduce, 31000, 35000, -1)), ic(coll(fReduce, 47000, 48000, 0))},
		{ic(coll(fBarrier, 5000, 10000, -1)), ic(coll(fBcast, 12000, 21000, 0)), ic(coll(fAllreduce, 34000, 35000, -1)), ic(coll(fReduce, 40000, 48000, -3))},
		{ic(coll(fBarrier, 9000, 10000, -1)), ic(coll(fBcast, 13000, 21000, 0)), ic(coll(fAllreduce, 32000, 35000, -1)), ic(coll(fReduce, 41000, 41100, -1))},
	}
	for r := range evs {
		// The key names the local group (size and leader), World the
		// remote group.
		def := trace.CommDef{ID: 1, Key: "inter:MPI_Intercomm_create:2@0", Size: 2, World: []int{2, 3}, Inter: true}
		if r >= 2 {
			def.Key, def.World = "inter:MPI_Intercomm_create:2@2", []int{0, 1}
		}
		writeFile(t, trace.RankPath(dir, r), rankFileWith(t, r, 4, "h", nil, []trace.CommDef{def}, evs[r]))
	}
	return dir
}

// TestInterColl: collectives on an intercommunicator, matched across its
// two groups with their semantics (each group waits for the other; a
// rooted one between the root and the other group, MPI_PROC_NULL ranks
// out of it), offline and in the job alike.
func TestInterColl(t *testing.T) {
	dir := interJob(t)
	res := run(t, dir)
	want(t, res, map[Pattern]map[int]float64{WaitBarrier: {0: 8000, 1: 7000}, LateBroadcast: {2: 8000, 3: 7000},
		WaitNxN: {0: 4000, 1: 3000}, EarlyReduce: {2: 5000}})
	if res.Colls != 4 || len(res.Warnings) != 0 {
		t.Errorf("%d collectives matched, warnings %q; want 4, none", res.Colls, res.Warnings)
	}
	compareInJob(t, dir, 4)
}
