package mpitest

// The bindings matrix with the piggyback channel on: every program of
// TestBindingsMatrix (C, C++, mpif.h, use mpi, use mpi_f08; both
// families) run with MPISCOPE_PIGGYBACK=1 and with MPISCOPE_COMPENSATE=1
// must print what it prints without mpiscope and give the matrix's exact
// counts, bytes, peers and callsite (bindCheck), with the channel really on
// (its wait states, and compensation's figures, in the profile).

import (
	"path/filepath"
	"testing"

	"github.com/mpiscope/mpiscope/profile"
)

func TestPiggybackBindings(t *testing.T) {
	eachBindProg(t, func(t *testing.T, s bindSetup) {
		f, bp, plain, base, line := s.f, s.bp, s.plain, s.base, s.line
		static := s.compile("static", f.Archive(), "-lpthread", "-ldl")
		for _, c := range []struct {
			name    string
			env     map[string]string
			prog    string
			preload bool
		}{
			{"channel", map[string]string{"MPISCOPE_PIGGYBACK": "1"}, plain, true},
			{"channel-static", map[string]string{"MPISCOPE_PIGGYBACK": "1"}, static, false},
			{"compensated", map[string]string{"MPISCOPE_COMPENSATE": "1"}, plain, true},
		} {
			t.Run(c.name, func(t *testing.T) {
				job := filepath.Join(t.TempDir(), "job")
				env := map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_SUMMARY": "0"}
				for k, v := range c.env {
					env[k] = v
				}
				r := Run{NP: 2, Env: env, Args: []string{c.prog}}
				if c.preload {
					r.Preload = f.Lib()
				}
				p, res := f.ExecLoad(t, r, job)
				bindCheck(t, bp, line, base.Stdout, p, res)
				// The channel was on: rank 1's 1000 receives
				// of rank 0's messages were measured.
				late := uint64(0)
				for _, w := range p.Waits {
					if w.Kind == profile.WaitLateSender && w.Func == "MPI_Recv" {
						late += uint64(w.Calls)
					}
				}
				if late != 1000 {
					t.Errorf("%d late-sender measurements at MPI_Recv, want 1000 (the channel on): %+v", late, p.Waits)
				}
				if comp := len(p.CompRanks) > 0; comp != (c.name == "compensated") {
					t.Errorf("compensated figures for %d ranks", len(p.CompRanks))
				}
			})
		}
	})
}
