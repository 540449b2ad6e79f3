package mpitest_test

import (
	"debug/elf"
	"sort"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpih"
	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/internal/wrapgen"
)

// TestCoverage compares the MPI_ functions libmpiscope defines with the
// PMPI_ functions the MPI library exports: every one must be wrapped, or be
// on wrapgen's documented list of exclusions.
func TestCoverage(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		raw, err := mpih.Probe(f.MPICC)
		if err != nil {
			t.Fatal(err)
		}
		h, err := raw.Header()
		if err != nil {
			t.Fatal(err)
		}
		lib, err := elf.Open(f.Lib())
		if err != nil {
			t.Fatal(err)
		}
		defer lib.Close()
		syms, err := lib.DynamicSymbols()
		if err != nil {
			t.Fatal(err)
		}
		ours := map[string]bool{}
		for _, s := range syms {
			if strings.HasPrefix(s.Name, "MPI_") && s.Section != elf.SHN_UNDEF && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
				ours[s.Name] = true
			}
		}
		var missing []string
		for name := range h.PMPI {
			if !ours[name] {
				if _, ok := wrapgen.Excluded[name]; !ok {
					missing = append(missing, name)
				}
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			t.Errorf("%d functions exported as PMPI_ by %v are not wrapped: %v", len(missing), raw.Libs, missing)
		}
		if len(ours) < len(h.PMPI)-len(wrapgen.Excluded) || len(ours) < 400 {
			t.Errorf("only %d MPI_ functions defined for %d PMPI_ exports", len(ours), len(h.PMPI))
		}
		t.Logf("%s %s: %d PMPI_ exports, %d MPI_ wrappers", h.Family, h.Version, len(h.PMPI), len(ours))
	})
}
