package wrapgen

// Fortran entry points (zfwrap_<family>.c).
//
// What the Fortran bindings of an installation call is read from the
// installation itself: the dynamic symbols the libraries that mpifort links
// export (mpi_send_, mpi_send_f08_, mpi_send_f08ts_, their profiling forms
// pmpi_send_, pmpir_send_f08ts_ ...), the C functions those libraries import
// (MPI_Send: MPICH's Fortran layer calls the C MPI_ layer; PMPI_Send only:
// Open MPI's calls the profiling layer and C wrappers never see it), and the
// data symbols holding the Fortran sentinels (MPI_IN_PLACE, MPI_BOTTOM,
// MPI_STATUS(ES)_IGNORE).
//
// For every Fortran routine with a C wrapper, the generator writes one of:
//
//   - convert: the Fortran arguments are converted (handles with f2c,
//     sentinels, statuses and arrays of requests/statuses sized by their count
//     argument) and the C wrapper's slow path ms_slow_MPI_X is called with
//     the Fortran caller as its callsite: measurement exists once, with the
//     Fortran caller as callsite; results are written back
//     (c2f, statuses, 1-based indices, ierror), those of the calls that
//     complete requests as the implementation's own entries write them,
//     failures included (fDones).
//   - relay: (MPICH's descriptor-based mpi_f08 routines, which end in the C
//     MPI_ layer) the Fortran caller's address is left in a thread-local
//     slot that the C wrapper takes as its callsite (ms_f_relay_begin: the
//     wrapper's fast path, which does not read the slot, is not taken), and
//     the implementation's
//     own profiling entry does the work. If no C wrapper took the slot, the
//     call is recorded without bytes.
//   - timed: the implementation's own profiling entry is called unchanged and
//     timed (no bytes): routines with strings, callbacks, attribute values or
//     arrays of handles whose size the generator does not know.
//
// MPI_Init, MPI_Init_thread, MPI_Finalize, MPI_Abort and MPI_Pcontrol call
// lifecycle.c's logic (fortran.c).

import (
	"bufio"
	"bytes"
	"debug/elf"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mpiscope/mpiscope/internal/mpih"
)

// FSyms is what the libraries that mpifort links export and import.
type FSyms struct {
	Defined  map[string]bool // exported functions and data (Fortran names, sentinels)
	Imported map[string]bool // C MPI_ and PMPI_ functions the Fortran libraries import
	LDFlags  []string        // -L and -l flags of the Fortran libraries
}

// keepDefined selects the exported names worth saving.
func keepDefined(s string) bool {
	for _, p := range []string{"mpi_", "pmpi_", "pmpir_", "mpix_", "pmpix_", "MPI_F_", "MPI_F08_", "MPIR_F_", "MPIR_F08_"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// ProbeFortran asks mpifort how it links (-showme:link, Open MPI; -show,
// MPICH) and reads the dynamic symbols of those libraries. mpicc is the C
// compiler of the same installation: libraries it links too are not Fortran
// libraries.
func ProbeFortran(mpifort, mpicc string) (*FSyms, error) {
	link := func(cc string) ([]string, error) {
		f := strings.Fields(cc)
		out, err := exec.Command(f[0], append(f[1:], "-showme:link")...).Output()
		if err != nil {
			out, err = exec.Command(f[0], append(f[1:], "-show")...).Output()
			if err != nil {
				return nil, fmt.Errorf("%s -showme:link / -show: %v", cc, err)
			}
		}
		return strings.Fields(string(out)), nil
	}
	fl, err := link(mpifort)
	if err != nil {
		return nil, err
	}
	cl, err := link(mpicc)
	if err != nil {
		return nil, err
	}
	cLibs := map[string]bool{}
	for _, a := range cl {
		if strings.HasPrefix(a, "-l") {
			cLibs[a] = true
		}
	}
	fs := &FSyms{Defined: map[string]bool{}, Imported: map[string]bool{}}
	var dirs []string
	type lib struct {
		name    string
		fortran bool
	}
	var libs []lib
	for _, a := range fl {
		switch {
		case strings.HasPrefix(a, "-L"):
			dirs = append(dirs, a[2:])
			fs.LDFlags = append(fs.LDFlags, a)
		case strings.HasPrefix(a, "-l") && strings.Contains(a, "mpi"):
			f := !cLibs[a]
			libs = append(libs, lib{a[2:], f})
			if f {
				fs.LDFlags = append(fs.LDFlags, a)
			}
		}
	}
	dirs = append(dirs, "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib")
	found := 0
	for _, l := range libs {
		path := ""
		for _, d := range dirs {
			p := filepath.Join(d, "lib"+l.name+".so")
			if _, err := os.Stat(p); err == nil {
				path = p
				break
			}
		}
		if path == "" {
			continue
		}
		f, err := elf.Open(path)
		if err != nil {
			return nil, err
		}
		syms, err := f.DynamicSymbols()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		found++
		for _, s := range syms {
			if s.Section == elf.SHN_UNDEF {
				if l.fortran && (strings.HasPrefix(s.Name, "MPI_") || strings.HasPrefix(s.Name, "PMPI_")) {
					fs.Imported[s.Name] = true
				}
				continue
			}
			if keepDefined(s.Name) {
				fs.Defined[s.Name] = true
			}
		}
	}
	if found == 0 {
		return nil, fmt.Errorf("%s links no MPI library found in %q", mpifort, dirs)
	}
	return fs, nil
}

// Marshal writes the answers in the saved form: "D name", "U name", "L flag".
func (fs *FSyms) Marshal() []byte {
	var lines []string
	for n := range fs.Defined {
		lines = append(lines, "D "+n)
	}
	for n := range fs.Imported {
		lines = append(lines, "U "+n)
	}
	sort.Strings(lines)
	for _, f := range fs.LDFlags {
		lines = append(lines, "L "+f)
	}
	return []byte(strings.Join(lines, "\n") + "\n")
}

// ParseFSyms reads what Marshal wrote.
func ParseFSyms(r io.Reader) (*FSyms, error) {
	fs := &FSyms{Defined: map[string]bool{}, Imported: map[string]bool{}}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		if !ok {
			continue
		}
		switch k {
		case "D":
			fs.Defined[v] = true
		case "U":
			fs.Imported[v] = true
		case "L":
			fs.LDFlags = append(fs.LDFlags, v)
		default:
			return nil, fmt.Errorf("fortran symbols: bad line %q", sc.Text())
		}
	}
	return fs, sc.Err()
}

// FKind is how a Fortran entry is made.
type FKind string

// The kinds of Fortran entries (see the file comment).
const (
	FConvert FKind = "convert"
	FRelay   FKind = "relay"
	FTimed   FKind = "timed"
	FSpecial FKind = "special"
)

// FEntry is one Fortran entry point to define.
type FEntry struct {
	Name   string // linker name, e.g. mpi_send_ or mpi_send_f08ts_
	Target string // the implementation's profiling entry, e.g. pmpi_send_
	Kind   FKind
	F08    bool // mpi_f08: optional ierror, f08 sentinels
	Func   *Func
	Why    string // why not converted
}

// FPlan is the list of Fortran entries.
type FPlan struct {
	Plan    *Plan
	Syms    *FSyms
	Entries []*FEntry
	Skipped map[string]string // C function -> reason it has no Fortran entry
}

// fortranNames lists the (name, profiling target, f08, descriptor) candidates
// for a C function.
func fortranNames(name string) [][4]string {
	low := strings.ToLower(name)
	var out [][4]string
	out = append(out, [4]string{low + "_", "p" + low + "_", "", ""})
	base, large := strings.CutSuffix(low, "_c")
	forms := []string{"_f08_", "_f08ts_"}
	if large {
		forms = []string{"_f08_large_", "_f08ts_large_"}
		low = base
	} else {
		out = append(out, [4]string{low + "_f08_", "p" + low + "_f08_", "f08", ""})
	}
	for _, f := range forms {
		ts := ""
		if strings.Contains(f, "ts") {
			ts = "ts"
		}
		out = append(out, [4]string{low + f, "pmpir_" + strings.TrimPrefix(low, "mpi_") + f, "f08", ts})
		out = append(out, [4]string{low + f, "p" + low + f, "f08", ts})
	}
	return out
}

// NewFPlan decides the Fortran entries.
func NewFPlan(p *Plan, fs *FSyms) *FPlan {
	fp := &FPlan{Plan: p, Syms: fs, Skipped: map[string]string{}}
	seen := map[string]bool{}
	for _, f := range p.Funcs {
		name := f.Proto.Name
		if why, ok := fortranNever[name]; ok {
			fp.Skipped[name] = why
			continue
		}
		if f.Sem.Class == Convert || f.Sem.Class == Tool {
			fp.Skipped[name] = "no Fortran binding"
			continue
		}
		any := false
		for _, c := range fortranNames(name) {
			fname, target, f08, ts := c[0], c[1], c[2] != "", c[3] != ""
			if seen[fname] || !fs.Defined[fname] || !fs.Defined[target] {
				continue
			}
			seen[fname] = true
			any = true
			e := &FEntry{Name: fname, Target: target, F08: f08, Func: f}
			switch {
			case fSpecial[name]:
				e.Kind = FSpecial
			case f.Hand:
				// lifecycle.c's wrapper has no ms_ body to call; the
				// implementation's entry is timed (and reaches that
				// wrapper where the Fortran layer calls the C MPI_ one).
				e.Kind, e.Why = FTimed, "hand-written C wrapper"
			case ts:
				e.Kind, e.Why = FTimed, "descriptor-based buffer"
				if fs.Imported[name] {
					e.Kind = FRelay
				}
			default:
				if why := fp.convertible(f); why != "" {
					e.Kind, e.Why = FTimed, why
				} else {
					e.Kind = FConvert
				}
			}
			if e.Kind != "" {
				fp.Entries = append(fp.Entries, e)
			}
		}
		if !any {
			fp.Skipped[name] = "the Fortran libraries export no entry with a profiling form"
		}
	}
	sort.Slice(fp.Entries, func(i, j int) bool { return fp.Entries[i].Name < fp.Entries[j].Name })
	return fp
}

func normType(t string) string {
	t = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(t), "const "))
	if s, ok := strings.CutSuffix(t, "[]"); ok {
		t = strings.TrimSpace(s) + " *"
	}
	return t
}

// convertible returns "" when every argument of f can be converted, else why not.
func (fp *FPlan) convertible(f *Func) string {
	pr := f.Proto
	if why, ok := fortranTimed[pr.Name]; ok {
		return why
	}
	if pr.Ret != "int" || pr.Variadic {
		return "not an int function"
	}
	if strings.Contains(pr.Name, "_attr") || strings.Contains(pr.Name, "keyval") {
		return "attribute values"
	}
	arrays := fArrays[pr.Name]
	for i, raw := range pr.Params {
		if arrays[i] != "" {
			continue
		}
		t := normType(raw)
		switch {
		case t == "int" || t == "MPI_Aint" || t == "MPI_Offset" || t == "MPI_Count":
		case t == "int *" || t == "MPI_Aint *" || t == "MPI_Offset *" || t == "MPI_Count *" || t == "int (*)[3]":
		case handles[t] != "":
			if fp.f2c(t) == "" {
				return "no " + t + " conversion"
			}
		case handles[strings.TrimSuffix(t, " *")] != "":
			if strings.HasPrefix(strings.TrimSpace(raw), "const") {
				return "array of handles"
			}
			if fp.f2c(strings.TrimSuffix(t, " *")) == "" {
				return "no handle conversion"
			}
		case t == "MPI_Status *":
			if fp.statusConv() == "" {
				return "no status conversion"
			}
		case t == "void *":
			s := f.Sem
			if !(s.HasBytes() || s.Class == P2P || s.Class == Coll || s.Class == RMA || s.Class == IO) {
				return "untyped argument"
			}
		default:
			return "argument type " + raw
		}
	}
	return ""
}

// f2c and c2f name the conversion of a handle type: the PMPI_ function when
// the library exports it, else mpi.h's macro.
func (fp *FPlan) f2c(t string) string { return fp.conv(handles[t], "f2c") }
func (fp *FPlan) c2f(t string) string { return fp.conv(handles[t], "c2f") }

func (fp *FPlan) conv(stem, dir string) string {
	n := "MPI_" + stem + "_" + dir
	if fp.Plan.Header.PMPI[n] {
		if _, macro := fp.Plan.Header.Macros["P"+n]; !macro {
			return "P" + n
		}
	}
	if _, ok := fp.Plan.Header.Macros[n]; ok {
		return n
	}
	if fp.Plan.Header.PMPI[n] {
		return "P" + n
	}
	return ""
}

func (fp *FPlan) statusConv() string {
	if fp.Plan.Header.PMPI["MPI_Status_c2f"] && fp.Plan.Header.PMPI["MPI_Status_f2c"] {
		return "PMPI_Status_"
	}
	return ""
}

// sentinel candidates: (symbol, "addr" = its address is the sentinel, "ptr" =
// its value is).
var sentinels = []struct {
	macro string
	cands [][2]string
}{
	{"MS_F_IN_PLACE", [][2]string{{"mpi_fortran_in_place_", "addr"}, {"MPIR_F_MPI_IN_PLACE", "ptr"}}},
	{"MS_F_BOTTOM", [][2]string{{"mpi_fortran_bottom_", "addr"}, {"MPIR_F_MPI_BOTTOM", "ptr"}}},
	{"MS_F_STATUS_IGNORE", [][2]string{{"MPI_F_STATUS_IGNORE", "ptr"}, {"mpi_fortran_status_ignore_", "addr"}}},
	{"MS_F_STATUSES_IGNORE", [][2]string{{"MPI_F_STATUSES_IGNORE", "ptr"}, {"mpi_fortran_statuses_ignore_", "addr"}}},
	{"MS_F08_IN_PLACE", [][2]string{{"MPIR_F08_MPI_IN_PLACE", "addr"}, {"mpi_fortran_in_place_", "addr"}}},
	{"MS_F08_BOTTOM", [][2]string{{"MPIR_F08_MPI_BOTTOM", "addr"}, {"mpi_fortran_bottom_", "addr"}}},
	{"MS_F08_STATUS_IGNORE", [][2]string{{"MPI_F08_STATUS_IGNORE", "ptr"}, {"MPI_F_STATUS_IGNORE", "ptr"}}},
	{"MS_F08_STATUSES_IGNORE", [][2]string{{"MPI_F08_STATUSES_IGNORE", "ptr"}, {"MPI_F_STATUSES_IGNORE", "ptr"}}},
}

// GenerateFortran writes zfwrap_<family>.c.
func (fp *FPlan) GenerateFortran(cmdline string) []byte {
	var b bytes.Buffer
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	h := fp.Plan.Header
	w("// %s\n// Code generated by mpiwrapgen; DO NOT EDIT.\n\n", cmdline)
	w("//go:build mpiscope_%s\n\n", h.Family)
	count := map[FKind]int{}
	for _, e := range fp.Entries {
		count[e.Kind]++
	}
	w("// Fortran entry points for %s %s: %d converted, %d relayed, %d timed, %d special.\n",
		h.Family, h.Version, count[FConvert], count[FRelay], count[FTimed], count[FSpecial])
	w("// Fortran libraries: %s\n\n", strings.Join(fp.Syms.LDFlags, " "))
	w("#include \"fortran.h\"\n#include \"callpath.h\"\n\n")
	// Sentinels.
	for _, s := range sentinels {
		done := false
		for _, c := range s.cands {
			if !fp.Syms.Defined[c[0]] {
				continue
			}
			// Declared under our own name (mpi.h may declare some with
			// another type), bound to the library's symbol.
			if c[1] == "addr" {
				w("extern char ms_sym_%s __asm__(\"%s\");\n#define %s ((void *)&ms_sym_%s)\n", c[0], c[0], s.macro, c[0])
			} else {
				w("extern void *ms_sym_%s __asm__(\"%s\");\n#define %s (ms_sym_%s)\n", c[0], c[0], s.macro, c[0])
			}
			done = true
			break
		}
		if !done {
			w("#define %s ((void *)0) /* not found: never matches */\n", s.macro)
		}
	}
	w("\n")
	// Declarations of the C bodies and the profiling entries.
	bodies := map[string]bool{}
	for _, e := range fp.Entries {
		pr := e.Func.Proto
		if e.Kind == FConvert && !bodies[pr.Name] {
			bodies[pr.Name] = true
			w("MS_HIDDEN %s ms_slow_%s(%s);\n", pr.Ret, pr.Name, params(pr, "void *ms_ra"))
		}
		w("void %s(%s);\n", e.Target, fparams(e, fArgCount(e)))
	}
	w("\n")
	for _, e := range fp.Entries {
		fp.genEntry(&b, e)
	}
	return b.Bytes()
}

// fArgCount returns (pointer arguments, hidden string lengths) of the
// Fortran form.
func fArgCount(e *FEntry) [2]int {
	pr := e.Func.Proto
	switch pr.Name {
	case "MPI_Init", "MPI_Finalize":
		return [2]int{1, 0}
	case "MPI_Init_thread":
		return [2]int{3, 0}
	case "MPI_Pcontrol":
		return [2]int{1, 0}
	}
	n, hidden := len(pr.Params)+1, 0
	for _, t := range pr.Params {
		if strings.Contains(t, "char") {
			hidden++
		}
	}
	return [2]int{n, hidden}
}

func fparams(e *FEntry, c [2]int) string {
	var parts []string
	for i := 0; i < c[0]; i++ {
		parts = append(parts, fmt.Sprintf("void *f%d", i))
	}
	for i := 0; i < c[1]; i++ {
		parts = append(parts, fmt.Sprintf("size_t l%d", i))
	}
	if len(parts) == 0 {
		return "void"
	}
	return strings.Join(parts, ", ")
}

func fargs(c [2]int) string {
	var parts []string
	for i := 0; i < c[0]; i++ {
		parts = append(parts, fmt.Sprintf("f%d", i))
	}
	for i := 0; i < c[1]; i++ {
		parts = append(parts, fmt.Sprintf("l%d", i))
	}
	return strings.Join(parts, ", ")
}

func (fp *FPlan) genEntry(b *bytes.Buffer, e *FEntry) {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	c := fArgCount(e)
	pr := e.Func.Proto
	w("/* %s: %s", pr.Name, e.Kind)
	if e.Why != "" {
		w(" (%s)", e.Why)
	}
	w(" */\nvoid %s(%s)\n{\n", e.Name, fparams(e, c))
	call := fmt.Sprintf("%s(%s);", e.Target, fargs(c))
	switch e.Kind {
	case FSpecial:
		switch pr.Name {
		// With tools stacked below mpiscope (chain.c), MPI_Init,
		// MPI_Init_thread and MPI_Finalize go down the stack through the
		// C functions, which store the error code in the ierror
		// argument (the last): ms_chain_f_* return 1.
		case "MPI_Init":
			w("\tif (!ms_chain_f_init(NULL, NULL, f%d))\n\t\t%s\n\tms_f_started();\n", c[0]-1, call)
		case "MPI_Init_thread":
			w("\tif (!ms_chain_f_init(f0, f1, f%d))\n\t\t%s\n\tms_f_started();\n", c[0]-1, call)
		case "MPI_Finalize":
			w("\tms_f_finalize();\n\tif (!ms_chain_f_finalize(f%d))\n\t\t%s\n", c[0]-1, call)
		case "MPI_Abort":
			w("\tms_f_abort(*(MPI_Fint *)f1);\n\t%s\n", call)
		case "MPI_Pcontrol":
			// Only the level is read (MPICH's entry takes an ierror
			// argument that the standard's has not): nothing is written
			// back, and the next level (PMPI_Pcontrol, or the stacked
			// tools: chain.c) sees the level through the C layer.
			w("\tms_f_pcontrol(*(MPI_Fint *)f0);\n\tms_chain_f_pcontrol((int)*(MPI_Fint *)f0);\n")
		}
	case FTimed:
		w("\tMS_PATH_NOTE(MS_PN_F);\n")
		w("\tms_thread *ms_t = ms_enter();\n\tif (ms_t == NULL) {\n\t\t%s\n\t\treturn;\n\t}\n", call)
		w("\tuint64_t ms_t0 = ms_now();\n\t%s\n\tuint64_t ms_t1 = ms_now();\n", call)
		w("\tms_leave(ms_t, %d, ms_path_key(ms_t, __builtin_return_address(0)), ms_t1 - ms_t0, -1, NULL);\n", e.Func.ID)
	case FRelay:
		w("\tMS_PATH_NOTE(MS_PN_F);\n")
		w("\tvoid *ms_pc = __builtin_return_address(0);\n\tuint64_t ms_t0 = ms_now();\n")
		w("\tms_f_relay_begin(ms_pc);\n\t%s\n", call)
		w("\tif (__builtin_expect(ms_f_relay_end(), 0))\n\t\tms_f_record(%d, ms_pc, ms_t0);\n", e.Func.ID)
	case FConvert:
		fp.genConvert(b, e, c)
	}
	w("}\n\n")
}

// fDoneOf is the write-back convention of e's binding (fDones).
func (fp *FPlan) fDoneOf(e *FEntry) fDone {
	key := fp.Plan.Header.Family
	if e.F08 {
		key += " f08"
	}
	return fDones[key]
}

// timedCall writes the call of e's profiling entry, timed, then return.
func timedCall(b *bytes.Buffer, e *FEntry, c [2]int) {
	fmt.Fprintf(b, "\t\tms_thread *ms_t = ms_enter();\n\t\tuint64_t ms_t0 = ms_now();\n\t\t%s(%s);\n", e.Target, fargs(c))
	fmt.Fprintf(b, "\t\tif (ms_t)\n\t\t\tms_leave(ms_t, %d, ms_path_key(ms_t, __builtin_return_address(0)), ms_now() - ms_t0, -1, NULL);\n\t\treturn;\n\t}\n", e.Func.ID)
}

func (fp *FPlan) genConvert(b *bytes.Buffer, e *FEntry, c [2]int) {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	// Call paths (callpath.h): this entry's caller is the application.
	w("\tMS_PATH_NOTE(MS_PN_F);\n")
	pr := e.Func.Proto
	f08 := map[bool]string{true: "MS_F08_", false: "MS_F_"}[e.F08]
	arrays := fArrays[pr.Name]
	done, isDone := fDoneCalls[pr.Name]
	conv := fp.fDoneOf(e)
	if !isDone {
		// The calls that complete no request: their LOGICAL flag, if
		// any (fLogicals), is written as the binding writes it.
		done.flag = -1
		if i, ok := fLogicals[pr.Name]; ok {
			done.flag = i
		}
	}
	// okBack is an output written back, by a call that completes no
	// request, only when the C function succeeded (fDone.outOK), and for
	// MPI_Improbe found a message.
	okBack := func(s string) string {
		cond := "ms_rc == MPI_SUCCESS"
		if pr.Name == "MPI_Improbe" {
			cond += fmt.Sprintf(" && *(MPI_Fint *)f%d", done.flag)
		}
		return fmt.Sprintf("if (%s) {\n\t\t%s\n\t}", cond, strings.ReplaceAll(s, "\n", "\n\t"))
	}
	var args []string
	// before: conversions in; back: handles, requests and statuses written
	// back (only on success where the binding does so: fDone.okOnly,
	// fDone.outOK); after: the index, indices and flag, as the binding
	// writes them.
	var before, back, after []string
	ierr := fmt.Sprintf("f%d", len(pr.Params))
	if pr.Name == "MPI_Request_get_status" && conv.ignoreFalse {
		// The implementation's own entry answers .false. without a
		// call to the C layer: it is called, timed.
		w("\tif (f2 == %sSTATUS_IGNORE) {\n", f08)
		timedCall(b, e, c)
	}
	if len(arrays) > 0 {
		// Arrays live on the stack: counts beyond MS_FMAXA take the timed path.
		w("\tint ms_n = *(MPI_Fint *)f0;\n\tif (ms_n < 0 || ms_n > MS_FMAXA) {\n")
		timedCall(b, e, c)
	}
	for i, raw := range pr.Params {
		f := fmt.Sprintf("f%d", i)
		t := normType(raw)
		switch role := arrays[i]; role {
		case "reqs":
			before = append(before, fmt.Sprintf("MPI_Request ms_r%d[MS_FMAXA];\n\tfor (int ms_i = 0; ms_i < ms_n; ms_i++)\n\t\tms_r%d[ms_i] = %s(((MPI_Fint *)%s)[ms_i]);", i, i, fp.f2c("MPI_Request"), f))
			args = append(args, fmt.Sprintf("ms_r%d", i))
			back = append(back, fmt.Sprintf("for (int ms_i = 0; ms_i < ms_n; ms_i++)\n\t\t((MPI_Fint *)%s)[ms_i] = %s(ms_r%d[ms_i]);", f, fp.c2f("MPI_Request"), i))
			continue
		case "stats":
			before = append(before, fmt.Sprintf("MPI_Status ms_s%d[MS_FMAXA];\n\tMPI_Status *ms_sp%d = MPI_STATUSES_IGNORE;\n\tif (%s != %sSTATUSES_IGNORE) {\n\t\tms_sp%d = ms_s%d;\n\t\tfor (int ms_i = 0; ms_i < ms_n; ms_i++)\n\t\t\tPMPI_Status_f2c((MPI_Fint *)%s + ms_i * MS_F_STATUS_SIZE, &ms_s%d[ms_i]);\n\t}", i, i, f, f08, i, i, f, i))
			args = append(args, fmt.Sprintf("ms_sp%d", i))
			back = append(back, fmt.Sprintf("if (ms_sp%d != MPI_STATUSES_IGNORE)\n\t\tfor (int ms_i = 0; ms_i < ms_n; ms_i++)\n\t\t\tPMPI_Status_c2f(&ms_s%d[ms_i], (MPI_Fint *)%s + ms_i * MS_F_STATUS_SIZE);", i, i, f))
			continue
		case "index":
			switch conv.index {
			case fIdxOKPlus1:
				before = append(before, fmt.Sprintf("int ms_x%d = 0;", i))
				args = append(args, fmt.Sprintf("&ms_x%d", i))
				after = append(after, fmt.Sprintf("if (ms_rc == MPI_SUCCESS)\n\t\t*(MPI_Fint *)%s = (MPI_Fint)(ms_x%d + 1);", f, i))
			case fIdxC:
				args = append(args, fmt.Sprintf("(int *)%s", f))
			default:
				args = append(args, fmt.Sprintf("(int *)%s", f))
				after = append(after, fmt.Sprintf("if (ms_rc == MPI_SUCCESS && *(MPI_Fint *)%s != MPI_UNDEFINED && *(MPI_Fint *)%s >= 0)\n\t\t*(MPI_Fint *)%s += 1;", f, f, f))
			}
			continue
		case "indices":
			args = append(args, fmt.Sprintf("(int *)%s", f))
			switch conv.indices {
			case fIdxAlways:
				after = append(after, fmt.Sprintf("for (int ms_i = 0; ms_i < *(MPI_Fint *)f2; ms_i++)\n\t\t((MPI_Fint *)%s)[ms_i] += 1;", f))
			case fIdxC:
			default:
				after = append(after, fmt.Sprintf("if (ms_rc == MPI_SUCCESS && *(MPI_Fint *)f2 != MPI_UNDEFINED)\n\t\tfor (int ms_i = 0; ms_i < *(MPI_Fint *)f2; ms_i++)\n\t\t\t((MPI_Fint *)%s)[ms_i] += 1;", f))
			}
			continue
		}
		if i == done.flag && conv.flagOK {
			// The flag goes through a variable of the binding's own.
			before = append(before, fmt.Sprintf("int ms_fl%d = 0;", i))
			args = append(args, fmt.Sprintf("&ms_fl%d", i))
			after = append(after, fmt.Sprintf("if (ms_rc == MPI_SUCCESS)\n\t\t*(MPI_Fint *)%s = (MPI_Fint)(ms_fl%d != 0);", f, i))
			continue
		}
		switch {
		case t == "int":
			args = append(args, fmt.Sprintf("(int)*(MPI_Fint *)%s", f))
		case t == "MPI_Aint" || t == "MPI_Offset" || t == "MPI_Count":
			args = append(args, fmt.Sprintf("*(%s *)%s", t, f))
		case t == "int (*)[3]":
			args = append(args, fmt.Sprintf("(int (*)[3])%s", f))
		case strings.HasSuffix(t, " *") && handles[strings.TrimSuffix(t, " *")] == "" && t != "MPI_Status *" && t != "void *":
			args = append(args, fmt.Sprintf("(%s)%s", t, f))
		case handles[t] != "":
			args = append(args, fmt.Sprintf("%s(*(MPI_Fint *)%s)", fp.f2c(t), f))
		case handles[strings.TrimSuffix(t, " *")] != "":
			ht := strings.TrimSuffix(t, " *")
			before = append(before, fmt.Sprintf("%s ms_h%d = %s(*(MPI_Fint *)%s);", ht, i, fp.f2c(ht), f))
			args = append(args, fmt.Sprintf("&ms_h%d", i))
			switch wb := fmt.Sprintf("*(MPI_Fint *)%s = %s(ms_h%d);", f, fp.c2f(ht), i); {
			case fHandlesIn[pr.Name]:
			case !isDone && conv.outOK && !fHandlesAlways[pr.Name]:
				back = append(back, okBack(wb))
			default:
				back = append(back, wb)
			}
		case t == "MPI_Status *":
			before = append(before, fmt.Sprintf("MPI_Status ms_s%d, *ms_sp%d = MPI_STATUS_IGNORE;\n\tif (%s != %sSTATUS_IGNORE) {\n\t\tms_sp%d = &ms_s%d;\n\t\tPMPI_Status_f2c((MPI_Fint *)%s, &ms_s%d);\n\t}", i, i, f, f08, i, i, f, i))
			args = append(args, fmt.Sprintf("ms_sp%d", i))
			wb := fmt.Sprintf("if (ms_sp%d != MPI_STATUS_IGNORE)\n\t\tPMPI_Status_c2f(&ms_s%d, (MPI_Fint *)%s);", i, i, f)
			if !isDone && conv.outOK && fStatusLocal[pr.Name] {
				wb = okBack(wb)
			}
			back = append(back, wb)
		case t == "void *":
			args = append(args, fmt.Sprintf("ms_fbuf(%s, %sIN_PLACE, %sBOTTOM)", f, f08, f08))
		}
	}
	for _, s := range before {
		w("\t%s\n", s)
	}
	// The C wrapper's slow path, called by its hidden name, records the
	// call with the Fortran caller as its callsite (or passes it on to
	// PMPI_ when recording is off or the call is nested).
	args = append(args, "__builtin_return_address(0)")
	w("\tint ms_rc = ms_slow_%s(%s);\n", pr.Name, strings.Join(args, ", "))
	if conv.okOnly && done.gated && len(back) > 0 {
		cond := "ms_rc == MPI_SUCCESS"
		if done.gateFlg {
			cond += fmt.Sprintf(" && *(MPI_Fint *)f%d", done.flag)
		}
		w("\tif (%s) {\n", cond)
		for _, s := range back {
			w("\t\t%s\n", strings.ReplaceAll(s, "\n", "\n\t"))
		}
		w("\t}\n")
	} else {
		for _, s := range back {
			w("\t%s\n", s)
		}
	}
	for _, s := range after {
		w("\t%s\n", s)
	}
	w("\tif (%s)\n\t\t*(MPI_Fint *)%s = (MPI_Fint)ms_rc;\n", ierr, ierr)
}

// FortranMain is "mpiwrapgen fortran": generate zfwrap_<family>.c, or print
// the Fortran link flags.
func FortranMain(argv []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("mpiwrapgen fortran", flag.ContinueOnError)
	mpicc := fs.String("mpicc", "", "MPI C compiler `command` to probe")
	mpifort := fs.String("mpifort", "", "MPI Fortran compiler `command` (default: mpicc with mpicc replaced by mpifort)")
	from := fs.String("from", "", "read saved answers `prefix`.{aux,macros,symbols} and prefix.fsymbols")
	save := fs.String("save", "", "save the Fortran probe answers as `file`")
	out := fs.String("o", "", "write the Fortran entry points to `file`")
	ldflags := fs.Bool("ldflags", false, "print the Fortran libraries' link flags (after writing -o)")
	list := fs.Bool("list", false, "print each Fortran entry and its kind")
	optional := fs.Bool("optional", false, "without a usable Fortran compiler, write a file with no entries")
	if err := fs.Parse(argv); err != nil {
		return err
	}
	var h *mpih.Header
	var fsyms *FSyms
	var cmdline string
	switch {
	case *from != "":
		var err error
		if h, err = mpih.FromFiles(*from+".aux", *from+".macros", *from+".symbols"); err != nil {
			return err
		}
		data, err := os.ReadFile(*from + ".fsymbols")
		if err != nil {
			return err
		}
		if fsyms, err = ParseFSyms(bytes.NewReader(data)); err != nil {
			return err
		}
		cmdline = "mpiwrapgen fortran -from " + filepath.Base(*from)
	case *mpicc != "":
		fc := *mpifort
		if fc == "" {
			fc = strings.Replace(*mpicc, "mpicc", "mpifort", 1)
		}
		raw, err := mpih.Probe(*mpicc)
		if err != nil {
			return err
		}
		if h, err = raw.Header(); err != nil {
			return err
		}
		if fsyms, err = ProbeFortran(fc, *mpicc); err != nil {
			if !*optional {
				return err
			}
			fmt.Fprintf(os.Stderr, "mpiwrapgen: no Fortran entry points: %v\n", err)
			fsyms = &FSyms{Defined: map[string]bool{}, Imported: map[string]bool{}}
		}
		if *save != "" {
			if err := os.WriteFile(*save, fsyms.Marshal(), 0o666); err != nil {
				return err
			}
		}
		cmdline = "go run ./cmd/mpiwrapgen fortran -mpicc " + *mpicc
	default:
		return fmt.Errorf("need -mpicc or -from")
	}
	p, err := NewPlan(h)
	if err != nil {
		return err
	}
	fp := NewFPlan(p, fsyms)
	if *out != "" {
		if err := os.WriteFile(*out, fp.GenerateFortran(cmdline+" -o "+filepath.Base(*out)), 0o666); err != nil {
			return err
		}
	}
	if *ldflags {
		fmt.Fprintln(stdout, strings.Join(fsyms.LDFlags, " "))
	}
	if *list {
		for _, e := range fp.Entries {
			fmt.Fprintf(stdout, "%s\t%s\t%s\t%s\n", e.Name, e.Kind, e.Target, e.Why)
		}
	}
	return nil
}
