package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpitest"
)

// TestConvertPprofByRank: testdata/progs/commtraffic.c on 4 ranks, a
// finished job, converted with --pprof -by-rank: go tool pprof
// -tagfocus=rank=^1$ shows rank 1's calls per function (10 + 5 sends, 10
// receives posted and waited, 3 allreduces, 2 barriers), -tagfocus on the
// odd ranks' communicator its calls only, and every function's total over
// the ranks is the report's.
func TestConvertPprofByRank(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		prog := mpitest.Compile(t, f.MPICC, "commtraffic.c", t.TempDir())
		p, job, _ := f.Profile(t, 4, nil, prog)
		pb := filepath.Join(t.TempDir(), "r.pb.gz")
		if _, se, code := run("convert", "--pprof", "-by-rank", "-o", pb, job); code != 0 || !strings.Contains(se, "by rank, function and communicator") {
			t.Fatalf("convert --pprof -by-rank: exit %d: %s", code, se)
		}
		check := func(what string, got, want map[string]int64) {
			t.Helper()
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s: %s %d calls, want %d", what, k, got[k], v)
				}
			}
			if len(got) != len(want) {
				t.Errorf("%s: %d functions %v, want %d", what, len(got), got, len(want))
			}
		}
		rank1 := topFlat(t, goPprof(t, "-top", "-nodefraction=0", "-sample_index=calls", "-tagfocus=rank=^1$", pb), "")
		check("rank 1", rank1, map[string]int64{"MPI_Send": 15, "MPI_Irecv": 10, "MPI_Wait": 10, "MPI_Allreduce": 3, "MPI_Barrier": 2,
			"MPI_Comm_rank": 2, "MPI_Comm_size": 1, "MPI_Comm_split": 1, "MPI_Comm_free": 1})
		odd := topFlat(t, goPprof(t, "-top", "-nodefraction=0", "-sample_index=bytes", "-unit=B", "-tagfocus=comm=^Comm_split:2@1$", pb), "B")
		check("Comm_split:2@1 bytes", odd, map[string]int64{"MPI_Send": 5000, "MPI_Recv": 5000})
		all := topFlat(t, goPprof(t, "-top", "-nodefraction=0", "-sample_index=mpi_time", "-unit=ns", pb), "ns")
		want := map[string]int64{}
		for _, fn := range p.Funcs {
			want[fn.Name] = fn.TimeNs
		}
		check("all ranks, ns", all, want)
	})
}
