package wrapgen

import (
	"regexp"
	"strings"
	"testing"
)

// TestShim: the stacking shim defines PMPI_X for every function of the
// plan, each calling the next level through its slot, and passes
// MPI_Pcontrol's first variadic argument on; the wrappers get
// ms_chain_bind, which sets the PMPI_ pointer of every generated wrapper
// and of no hand-written one.
func TestShim(t *testing.T) {
	for _, name := range []string{"openmpi-4.1.4", "mpich-4.0.2"} {
		p := plan(t, name)
		src := string(p.GenerateShim("test"))
		defs := len(regexp.MustCompile(`(?m)^__attribute__\(\(visibility\("default"\)\)\) [^(]* PMPI_\w+\(`).FindAllString(src, -1))
		if defs != len(p.Funcs) {
			t.Errorf("%s: %d PMPI_ definitions, want %d", name, defs, len(p.Funcs))
		}
		for _, want := range []string{
			"int PMPI_Send(const void *a0, int a1, MPI_Datatype a2, int a3, int a4, MPI_Comm a5)\n{\n\treturn ((int (*)(const void *a0, int a1, MPI_Datatype a2, int a3, int a4, MPI_Comm a5))__atomic_load_n(&ms_shim_next[",
			"int PMPI_Pcontrol(const int a0, ...)\n{\n\tva_list ap;\n\tva_start(ap, a0);\n\tvoid *arg = va_arg(ap, void *);",
			"void mpiscope_shim_bind(",
		} {
			if !strings.Contains(src, want) {
				t.Errorf("%s: shim lacks %q", name, want)
			}
		}
		wrap := string(p.GenerateC("test"))
		bind := wrap[strings.Index(wrap, "void ms_chain_bind(void *const *next)\n{"):]
		hand := 0
		for _, f := range p.Funcs {
			has := strings.Contains(bind, "&ms_p_"+f.Proto.Name+",")
			if has == f.Hand {
				t.Errorf("%s: ms_chain_bind sets %s: %v (hand-written: %v)", name, f.Proto.Name, has, f.Hand)
			}
			if f.Hand {
				hand++
			}
		}
		if hand == 0 {
			t.Errorf("%s: no hand-written function in the plan", name)
		}
	}
}
