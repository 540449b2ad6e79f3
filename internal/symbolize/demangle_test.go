package symbolize

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpitest"
)

func TestDemangle(t *testing.T) {
	for in, want := range map[string]string{
		"_ZN9LAMMPS_NS9CommBrick12reverse_commEv": "LAMMPS_NS::CommBrick::reverse_comm()",
		"_Z5solvePdi":                          "solve(double*, int)",
		"__solver_MOD_step":                    "solver::step",
		"__my_mod_MOD_do_it":                   "my_mod::do_it",
		"MAIN__":                               "program",
		"main":                                 "main",
		"halo_":                                "halo_", // C: the convention is not clear from the name
		"LAMMPS_NS::CommBrick::reverse_comm()": "LAMMPS_NS::CommBrick::reverse_comm()",
		"solver::step":                         "solver::step",
		"_Znot a mangled name":                 "_Znot a mangled name",
		"__MOD_x":                              "__MOD_x",
		"":                                     "",
	} {
		if got := Demangle(in); got != want {
			t.Errorf("Demangle(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"halo_":             "halo",
		"my_ext_":           "my_ext",
		"__solver_MOD_step": "solver::step",
		"MAIN__":            "program",
		"c_helper__":        "c_helper__",
		"Mixed_":            "Mixed_",
		"_start":            "_start",
		"main":              "main",
	} {
		if got := demangleFortran(in); got != want {
			t.Errorf("demangleFortran(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDemangleSymbols: without debug information, the names the symbol
// table gives for a C++ method and for gfortran's module procedure,
// external procedure and main program are demangled by Lookup; with it, the
// DWARF linkage names give the same class and module (the main program has
// its own name there).
func TestDemangleSymbols(t *testing.T) {
	dir := t.TempDir()
	type want struct{ sym, name, debugName string }
	progs := []struct {
		compiler, src, code string
		want                []want
	}{
		{"g++", "lmp.cpp", `namespace LAMMPS_NS { struct CommBrick { void reverse_comm(); }; }
void LAMMPS_NS::CommBrick::reverse_comm() { __asm__ volatile(""); }
int main() { LAMMPS_NS::CommBrick c; c.reverse_comm(); return 0; }
`, []want{{"_ZN9LAMMPS_NS9CommBrick12reverse_commEv", "LAMMPS_NS::CommBrick::reverse_comm()", "LAMMPS_NS::CommBrick::reverse_comm()"},
			{"main", "main", "main"}}},
		{"gfortran", "known.f90", `module solver
contains
  subroutine step(n)
    integer :: n
    n = n + 1
  end subroutine step
end module solver
subroutine halo(n)
  integer :: n
  n = n * 2
end subroutine halo
program known
  use solver
  integer :: n
  n = 1
  call step(n)
  call halo(n)
  print *, n
end program known
`, []want{{"__solver_MOD_step", "solver::step", "solver::step"}, {"halo_", "halo", "halo"}, {"MAIN__", "program", "known"}}},
	}
	for i := range 2 * len(progs) {
		p, debug := progs[i/2], i%2 == 1
		if _, err := exec.LookPath(p.compiler); err != nil {
			mpitest.Skip(t, "%s not installed", p.compiler)
		}
		src := filepath.Join(dir, p.src)
		exe := filepath.Join(dir, p.src+".exe")
		if debug {
			exe += ".g"
		}
		if err := os.WriteFile(src, []byte(p.code), 0o666); err != nil {
			t.Fatal(err)
		}
		flags := []string{"-O0", "-o", exe, src}
		if debug {
			flags = append(flags, "-g")
		}
		cc := exec.Command(p.compiler, flags...)
		cc.Dir = dir // gfortran writes solver.mod there
		if out, err := cc.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", p.compiler, err, out)
		}
		f, err := elf.Open(exe)
		if err != nil {
			t.Fatal(err)
		}
		syms, err := f.Symbols()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		addr := map[string]uint64{}
		for _, s := range syms {
			addr[s.Name] = s.Value
		}
		s := New()
		for _, w := range p.want {
			a, ok := addr[w.sym]
			if !ok {
				t.Errorf("%s: no symbol %s", p.src, w.sym)
				continue
			}
			fn, file, _, err := s.Lookup(exe, a+1)
			name := w.name
			if debug {
				name = w.debugName
			}
			if err != nil || fn != name || (file != "") != debug {
				t.Errorf("%s (debug %v): Lookup(%s+1) = %q, %q, %v; want %q", p.src, debug, w.sym, fn, file, err, name)
			}
			if frames, err := s.LookupFrames(exe, a+1); err != nil || frames[len(frames)-1].Func != name {
				t.Errorf("%s (debug %v): LookupFrames(%s+1) = %+v, %v; want %q", p.src, debug, w.sym, frames, err, name)
			}
		}
	}
}
