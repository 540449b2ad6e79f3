package report

import (
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/profile"
)

// TestStatus: the header's Status line from the writers' partial flag, the
// ranks' states and the ranks without data. A sessions-model job whose
// ranks each wrote their file at MPI_Session_finalize (state final, not
// marked partial) is final; an aborted job is partial, never "final".
func TestStatus(t *testing.T) {
	prof := func(numRanks int, partial bool, snapshot int, states ...string) *profile.Profile {
		p := &profile.Profile{Meta: profile.Meta{NumRanks: numRanks, Partial: partial, Snapshot: snapshot}}
		for r, s := range states {
			p.Ranks = append(p.Ranks, profile.Rank{Rank: r, State: s, AppNs: sec})
		}
		return p
	}
	for _, c := range []struct {
		name string
		p    *profile.Profile
		want string
	}{
		{"finalized", prof(2, false, 0, "final", "final"), "final"},
		{"sessions", prof(4, false, 0, "final", "final", "final", "final"), "final"},
		{"abort, all ranks", prof(2, true, 0, "signal", "abort"),
			"partial: a rank called MPI_Abort; 1 rank stopped by a signal before MPI_Finalize"},
		{"abort, one rank", prof(2, true, 0, "abort"), "partial: a rank called MPI_Abort; 1 of 2 ranks have no data"},
		{"signal", prof(3, true, 0, "signal", "signal", "signal"), "partial: 3 ranks stopped by a signal before MPI_Finalize"},
		{"exit", prof(2, true, 0, "exit", "exit"), "partial: 2 ranks exited without MPI_Finalize"},
		{"missing", prof(4, false, 0, "final", "final", "final"), "partial: 1 of 4 ranks have no data"},
		{"flagged", prof(1, true, 0, "final"), "partial: some ranks wrote their data before MPI_Finalize"},
		{"snapshot", prof(2, true, 3, "snapshot", "snapshot"), "snapshot 3 (taken while the job ran)"},
		{"snapshot, signal", prof(2, true, 3, "snapshot", "signal"),
			"snapshot 3 (taken while the job ran); partial: 1 rank stopped by a signal before MPI_Finalize"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := status(c.p); got != c.want {
				t.Errorf("status %q, want %q", got, c.want)
			}
			out := render(t, c.p, Text, Options{})
			if !strings.Contains(out, "\nStatus       : "+c.want+"\n") {
				t.Errorf("report header lacks Status %q:\n%s", c.want, out[:min(len(out), 1200)])
			}
			sum := Summary(c.p, "report.txt")
			if mentioned := strings.Contains(sum, c.want); mentioned != (c.want != "final") {
				t.Errorf("summary mentions %q: %v, want %v:\n%s", c.want, mentioned, c.want != "final", sum)
			}
		})
	}
}
