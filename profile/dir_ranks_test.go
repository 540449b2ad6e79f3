package profile

import (
	"testing"
)

// TestLoadRanksFinal: rank files alone are the whole profile when every
// rank wrote its own at the end of its run (the sessions model writes them
// at MPI_Session_finalize, state "final", not marked partial): Source
// "ranks", not partial. A rank that ended early (its writer marks the file
// partial) or a missing rank makes it partial.
func TestLoadRanksFinal(t *testing.T) {
	write := func(dir string, numRanks int, abort int, ranks ...int) {
		for _, r := range ranks {
			p := rankProfile(r, numRanks, 3, 6, 2)
			p.Ranks[0].State = "final"
			if r == abort {
				p.Meta.Partial = true
				p.Ranks[0].State = "abort"
			}
			if err := WriteFile(RankFile(dir, r), p); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		name    string
		abort   int
		ranks   []int
		source  string
		summary string
	}{
		{"all final", -1, []int{0, 1, 2, 3}, "ranks", "profile: 4 of 4 ranks, 4 files"},
		{"one aborted", 2, []int{0, 1, 2, 3}, "partial", "partial profile: 4 of 4 ranks, 4 files"},
		{"one missing", -1, []int{0, 1, 3}, "partial", "partial profile: 3 of 4 ranks (missing: 2), 3 files"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write(dir, 4, c.abort, c.ranks...)
			p, info, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			partial := c.source == "partial"
			if info.Source != c.source || info.Partial != partial || p.Meta.Partial != partial {
				t.Errorf("source %q, info partial %v, meta partial %v; want %q, %v", info.Source, info.Partial, p.Meta.Partial, c.source, partial)
			}
			if s := info.Summary(); s != c.summary {
				t.Errorf("summary %q, want %q", s, c.summary)
			}
		})
	}
}
