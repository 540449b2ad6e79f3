package pprofconv

import (
	"strings"
	"testing"

	mps "github.com/mpiscope/mpiscope/profile"
)

// TestConvertPaths: a profile with call paths gives one sample per path,
// its stack the MPI function above the path's frames; the calls the paths
// do not hold (one MPI_Allreduce in progress) go to the unknown callsite.
func TestConvertPaths(t *testing.T) {
	loc := func(off uint64, fn string, line int) mps.Loc {
		return mps.Loc{Module: "/bin/app", Offset: off, Function: fn, File: "/src/app.c", Line: line}
	}
	p := &mps.Profile{
		Meta:  mps.Meta{NumRanks: 2, Tool: "0.1.0"},
		Ranks: []mps.Rank{{Rank: 0}, {Rank: 1}},
		Funcs: []mps.Func{{Name: "MPI_Allreduce", Calls: 71, TimeNs: 7100, Bytes: 71 * 32}},
		Sites: []mps.Site{{Func: "MPI_Allreduce", Loc: loc(0x10, "halo", 3), Calls: 71, TimeNs: 7100, Bytes: 71 * 32}},
		Paths: []mps.Path{
			{Func: "MPI_Allreduce", Frames: []mps.Loc{loc(0x10, "halo", 3), loc(0x20, "solve", 9), loc(0x40, "main", 20)}, Calls: 20, TimeNs: 2000, Bytes: 640},
			{Func: "MPI_Allreduce", Frames: []mps.Loc{loc(0x10, "halo", 3), loc(0x30, "precond", 14), loc(0x44, "main", 21)}, Calls: 40, TimeNs: 4000, Bytes: 1280},
			{Func: "MPI_Allreduce", Region: "r", Frames: []mps.Loc{loc(0x10, "halo", 3), loc(0x38, "output", 17)}, Calls: 10, TimeNs: 1000, Bytes: 320},
		},
	}
	got := traces(roundTrip(t, p))
	want := []string{
		"[1 100 32]: MPI_Allreduce <- (unknown callsite)",
		"[10 1000 320]: MPI_Allreduce <- halo /src/app.c:3 [/bin/app+0x10] <- output /src/app.c:17 [/bin/app+0x38] map[region:[r]]map[]",
		"[20 2000 640]: MPI_Allreduce <- halo /src/app.c:3 [/bin/app+0x10] <- solve /src/app.c:9 [/bin/app+0x20] <- main /src/app.c:20 [/bin/app+0x40]",
		"[40 4000 1280]: MPI_Allreduce <- halo /src/app.c:3 [/bin/app+0x10] <- precond /src/app.c:14 [/bin/app+0x30] <- main /src/app.c:21 [/bin/app+0x44]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("samples:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
