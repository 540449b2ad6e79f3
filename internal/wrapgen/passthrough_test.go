package wrapgen

import (
	"strings"
	"testing"
)

// The pass-through build (mpiwrapgen -passthrough, used by bench/cmd/runbench)
// wraps the same functions as the normal one, keeps the tables the runtime
// reads, and records nothing: each wrapper only calls its PMPI_ form, through
// the same pointer as the normal wrappers (MS_PMPI).
func TestPassthrough(t *testing.T) {
	for _, name := range saved {
		t.Run(name, func(t *testing.T) {
			p := plan(t, name)
			p.Passthrough = true
			c := string(p.GenerateC("mpiwrapgen -from " + name + " -passthrough"))
			for _, want := range []string{
				"const int ms_nfuncs", "const char *const ms_fn_names", "const char *const ms_fn_classes",
				"int MPI_Send(const void *a0, int a1, MPI_Datatype a2, int a3, int a4, MPI_Comm a5)\n{\n\treturn MS_PMPI(MPI_Send)(a0, a1, a2, a3, a4, a5);\n}",
				"int MPI_Comm_rank(MPI_Comm a0, int *a1)\n{\n\treturn MS_PMPI(MPI_Comm_rank)(a0, a1);\n}",
			} {
				if !strings.Contains(c, want) {
					t.Errorf("pass-through output lacks %q", want)
				}
			}
			for _, bad := range []string{"ms_enter", "ms_leave", "ms_now", "__builtin_return_address"} {
				if strings.Contains(c, bad) {
					t.Errorf("pass-through output contains %q", bad)
				}
			}
			wrapped := 0
			for _, f := range p.Funcs {
				if f.Hand {
					if strings.Contains(c, " "+f.Proto.Name+"(") {
						t.Errorf("%s is written by hand but has a generated wrapper", f.Proto.Name)
					}
					continue
				}
				wrapped++
			}
			// Each wrapper and its slow path (the Fortran entries' way in)
			// through the pointer; the pointer's two stubs directly.
			if n := strings.Count(c, "\treturn MS_PMPI(MPI_"); n != 2*wrapped {
				t.Errorf("%d pass-through functions, want %d (2 per wrapper)", n, 2*wrapped)
			}
			if n := strings.Count(c, "\treturn PMPI_"); n != 2*wrapped {
				t.Errorf("%d direct calls of PMPI_, want %d (the 2 stubs per wrapper)", n, 2*wrapped)
			}
			if n := strings.Count(c, " ms_slow_MPI_"); n != wrapped {
				t.Errorf("%d pass-through slow paths, want %d", n, wrapped)
			}
		})
	}
}
