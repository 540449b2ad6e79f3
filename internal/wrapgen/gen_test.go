package wrapgen

import (
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpih"
	"github.com/mpiscope/mpiscope/internal/testutil"
)

// The saved compiler answers of Open MPI 4.1.4 and MPICH 4.0.2 (made with
// mpiwrapgen -save) drive these tests: no MPI is needed.
var saved = []string{"openmpi-4.1.4", "mpich-4.0.2"}

func plan(t *testing.T, name string) *Plan {
	t.Helper()
	h, err := mpih.FromFiles("testdata/"+name+".aux", "testdata/"+name+".macros", "testdata/"+name+".symbols")
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(h)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGolden(t *testing.T) {
	for _, name := range saved {
		t.Run(name, func(t *testing.T) {
			p := plan(t, name)
			testutil.Golden(t, "testdata/"+name+".c.golden", p.GenerateC("mpiwrapgen -from "+name))
		})
	}
}

func TestPlanCounts(t *testing.T) {
	for _, c := range []struct {
		name         string
		funcs, wraps int
	}{
		// Open MPI 4.1.4: 405 declared and exported, plus 10 MPI-1 functions
		// exported but no longer declared; 5 are written by hand (7 with sessions).
		{"openmpi-4.1.4", 415, 410},
		{"mpich-4.0.2", 619, 612},
	} {
		p := plan(t, c.name)
		hand := 0
		for _, f := range p.Funcs {
			if f.Hand {
				hand++
			}
		}
		if len(p.Funcs) != c.funcs || len(p.Funcs)-hand != c.wraps {
			t.Errorf("%s: %d functions, %d generated; want %d, %d", c.name, len(p.Funcs), len(p.Funcs)-hand, c.funcs, c.wraps)
		}
		for n := range p.Header.PMPI {
			found := false
			for _, f := range p.Funcs {
				found = found || f.Proto.Name == n
			}
			if !found {
				t.Errorf("%s: %s exported but not planned (%s)", c.name, n, p.Skipped[n])
			}
		}
	}
}

func TestDecl(t *testing.T) {
	for _, c := range [][3]string{
		{"int", "a0", "int a0"},
		{"const void *", "a0", "const void *a0"},
		{"int (*)[3]", "a2", "int (*a2)[3]"},
		{"MPI_Comm_copy_attr_function (*)", "a0", "MPI_Comm_copy_attr_function (*a0)"},
		{"int []", "a1", "int a1[]"},
	} {
		if got := decl(c[0], c[1]); got != c[2] {
			t.Errorf("decl(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}

func TestLookupDerived(t *testing.T) {
	must := func(name string) Sem {
		s, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if s := must("MPI_Send_c"); s.Count != 1 || s.Type != 2 || s.SendPeer != 3 || s.Class != P2P {
		t.Errorf("MPI_Send_c: %+v", s)
	}
	if s := must("MPI_Iallreduce"); s.Count != 2 || s.Class != Coll || s.Persist {
		t.Errorf("MPI_Iallreduce: %+v", s)
	}
	if s := must("MPI_Allreduce_init"); !s.Persist || s.Class != Coll {
		t.Errorf("MPI_Allreduce_init: %+v", s)
	}
	if s := must("MPI_Ialltoallv"); s.Counts != 1 || s.Type != 3 {
		t.Errorf("MPI_Ialltoallv: %+v", s)
	}
	if s := must("MPI_Comm_f2c"); s.Class != Convert {
		t.Errorf("MPI_Comm_f2c: %+v", s)
	}
	if s := must("MPI_File_write_at"); s.Class != IO {
		t.Errorf("MPI_File_write_at: %+v", s)
	}
}

// TestTableMatchesHeaders checks every hand-written role against both
// saved headers: positions exist and have the expected types.
func TestTableMatchesHeaders(t *testing.T) {
	for _, name := range saved {
		p := plan(t, name) // NewPlan runs checkSem on every function
		if len(p.Funcs) == 0 {
			t.Fatal("empty plan")
		}
	}
	_, err := parseSem("p2p count=x")
	if err == nil || !strings.Contains(err.Error(), "count=x") {
		t.Errorf("bad spec not rejected: %v", err)
	}
	h := &mpih.Header{Protos: map[string]*mpih.Proto{"MPI_Send": {Name: "MPI_Send", Ret: "int", Params: []string{"const void *", "int"}}},
		PMPI: map[string]bool{"MPI_Send": true}, Macros: map[string]string{}}
	if _, err := NewPlan(h); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("table/prototype mismatch not caught: %v", err)
	}
}

func TestParseAuxInfo(t *testing.T) {
	in := `/* /x/mpi.h:1:NC */ extern int MPI_Send (const void *, int, MPI_Datatype, int, int, MPI_Comm);
/* /x/mpi.h:2:NC */ extern int MPI_Pcontrol (const int, ...);
/* /x/mpi.h:3:NC */ extern double MPI_Wtime (void);
/* /x/mpi.h:4:NC */ extern int MPI_Group_range_incl (MPI_Group, int, int (*)[3], MPI_Group *);
/* /x/stdio.h:5:NC */ extern int printf (const char *, ...);
`
	ps, err := mpih.ParseAuxInfo(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 4 || len(ps["MPI_Send"].Params) != 6 || !ps["MPI_Pcontrol"].Variadic || len(ps["MPI_Wtime"].Params) != 0 ||
		ps["MPI_Wtime"].Ret != "double" || ps["MPI_Group_range_incl"].Params[2] != "int (*)[3]" {
		t.Errorf("parsed %+v", ps)
	}
}
