package symbolize

import (
	"debug/dwarf"
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// Demangle returns the name people know a function by, for names whose
// compiler convention is clear from the name alone: C++ and Rust names
// mangled per the Itanium ABI (_ZN9LAMMPS_NS9CommBrick12reverse_commEv is
// LAMMPS_NS::CommBrick::reverse_comm()), gfortran module procedures
// (__solver_MOD_step is solver::step) and the gfortran main program
// (MAIN__ is "program"). Any other name, including one already demangled,
// is returned unchanged.
func Demangle(name string) string {
	switch {
	case strings.HasPrefix(name, "_Z") || strings.HasPrefix(name, "_R"):
		return demangle.Filter(name)
	case name == "MAIN__":
		return "program"
	case strings.HasPrefix(name, "__"):
		if mod, proc, ok := strings.Cut(name[2:], "_MOD_"); ok && mod != "" && proc != "" {
			return mod + "::" + proc
		}
	}
	return name
}

// demangleFortran is Demangle for a name from the symbol table of a module
// compiled by gfortran, where an external procedure p is the symbol p_: the
// trailing underscore is dropped too.
func demangleFortran(name string) string {
	if d := Demangle(name); d != name {
		return d
	}
	if len(name) > 1 && name[0] != '_' && strings.HasSuffix(name, "_") && !strings.HasSuffix(name, "__") {
		for i := 0; i < len(name); i++ {
			c := name[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
				return name // gfortran symbols are lower case
			}
		}
		return name[:len(name)-1]
	}
	return name
}

// mangled tells whether a DWARF linkage name is one Demangle turns into a
// fuller name than DW_AT_name: C++ (class and parameters) and gfortran
// module procedures (the module).
func mangled(name string) bool {
	if strings.HasPrefix(name, "_Z") {
		return true
	}
	mod, proc, ok := strings.Cut(strings.TrimPrefix(name, "__"), "_MOD_")
	return ok && strings.HasPrefix(name, "__") && mod != "" && proc != ""
}

// attrMIPSLinkageName is DW_AT_MIPS_linkage_name, the linkage name of DWARF
// before version 4, which GCC still emits with -gdwarf-2 and -gdwarf-3.
const attrMIPSLinkageName dwarf.Attr = 0x2007
