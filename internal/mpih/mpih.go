// Package mpih asks an MPI C compiler what the installed mpi.h declares.
//
// It never parses C by hand: prototypes come from gcc's -aux-info output
// (one normalized declaration per line, written by the compiler itself),
// macros from -E -dM, and the exported PMPI_ symbols from the dynamic symbol
// table of the MPI library that mpicc links.
package mpih

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Proto is one function declared by mpi.h.
type Proto struct {
	Name     string
	Ret      string   // return type, e.g. "int" or "double"
	Params   []string // parameter types as the compiler prints them, e.g. "const void *", "int (*)[3]"
	Variadic bool     // ends in "..."
}

// Header is what one MPI installation declares and exports.
type Header struct {
	Family  string            // "openmpi" or "mpich"
	Version string            // implementation version, e.g. "4.1.4"
	Protos  map[string]*Proto // MPI_ functions declared
	Macros  map[string]string // object-like and function-like macro names -> body
	PMPI    map[string]bool   // MPI_ names whose PMPI_ form the library exports
	Libs    []string          // libraries whose exports were read
}

var auxRE = regexp.MustCompile(`^/\* .*\*/ extern (.+?)\s*\b((?:MPI|PMPI)_\w+) \((.*)\);$`)

// ParseAuxInfo reads gcc -aux-info output and returns the MPI_ prototypes.
func ParseAuxInfo(r io.Reader) (map[string]*Proto, error) {
	protos := map[string]*Proto{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := auxRE.FindStringSubmatch(sc.Text())
		if m == nil || !strings.HasPrefix(m[2], "MPI_") {
			continue
		}
		p := &Proto{Name: m[2], Ret: strings.TrimSpace(m[1])}
		args := splitParams(m[3])
		if len(args) == 1 && args[0] == "void" {
			args = nil
		}
		for _, a := range args {
			if a == "..." {
				p.Variadic = true
				continue
			}
			p.Params = append(p.Params, a)
		}
		protos[p.Name] = p
	}
	return protos, sc.Err()
}

// splitParams splits a parameter list at top-level commas.
func splitParams(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if t := strings.TrimSpace(s[start:]); t != "" {
		out = append(out, t)
	}
	return out
}

// ParseMacros reads -E -dM output into name -> body ("NAME(x)" keys keep their
// parameter list stripped: the key is the bare name).
func ParseMacros(r io.Reader) map[string]string {
	m := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimPrefix(sc.Text(), "#define ")
		name, body, _ := strings.Cut(line, " ")
		if i := strings.IndexByte(name, '('); i >= 0 {
			name = name[:i]
		}
		m[name] = body
	}
	return m
}

// ParseSymbols reads a list of exported symbol names (one per line, as
// written by Probe into testdata) and returns the MPI_ names with a PMPI_ form.
func ParseSymbols(r io.Reader) map[string]bool {
	out := map[string]bool{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		s := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(s, "PMPI_") {
			out[s[1:]] = true
		}
	}
	return out
}

// Family and version from the macros mpi.h defines.
func familyVersion(m map[string]string) (string, string) {
	unq := func(s string) string { return strings.Trim(s, `"`) }
	if v, ok := m["OMPI_MAJOR_VERSION"]; ok {
		return "openmpi", v + "." + m["OMPI_MINOR_VERSION"] + "." + m["OMPI_RELEASE_VERSION"]
	}
	if v, ok := m["MPICH_VERSION"]; ok {
		return "mpich", unq(v)
	}
	return "unknown", ""
}

// FromFiles builds a Header from saved probe outputs (used by golden tests).
func FromFiles(aux, macros, symbols string) (*Header, error) {
	h := &Header{}
	f, err := os.Open(aux)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if h.Protos, err = ParseAuxInfo(f); err != nil {
		return nil, fmt.Errorf("%s: %w", aux, err)
	}
	mb, err := os.ReadFile(macros)
	if err != nil {
		return nil, err
	}
	h.Macros = ParseMacros(bytes.NewReader(mb))
	sb, err := os.ReadFile(symbols)
	if err != nil {
		return nil, err
	}
	h.PMPI = ParseSymbols(bytes.NewReader(sb))
	h.Family, h.Version = familyVersion(h.Macros)
	return h, nil
}

// Raw holds the compiler's answers before interpretation, so that they can be
// saved as test data.
type Raw struct {
	AuxInfo []byte // gcc -aux-info of a file including mpi.h
	Macros  []byte // -E -dM
	Symbols []byte // PMPI_ symbols exported by the MPI libraries, one per line
	Libs    []string
}

// Probe runs mpicc (a command name or path, possibly with arguments) on a
// file that includes mpi.h.
func Probe(mpicc string) (*Raw, error) {
	cc := strings.Fields(mpicc)
	dir, err := os.MkdirTemp("", "mpih")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "probe.c")
	if err := os.WriteFile(src, []byte("#include <mpi.h>\n"), 0o644); err != nil {
		return nil, err
	}
	aux := filepath.Join(dir, "probe.aux")
	run := func(args ...string) ([]byte, error) {
		cmd := exec.Command(cc[0], append(cc[1:], args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("%s %s: %v: %s", mpicc, strings.Join(args, " "), err, stderr.String())
		}
		return out, nil
	}
	raw := &Raw{}
	if _, err := run("-fsyntax-only", "-aux-info", aux, src); err != nil {
		return nil, err
	}
	if raw.AuxInfo, err = os.ReadFile(aux); err != nil {
		return nil, err
	}
	if raw.Macros, err = run("-E", "-dM", src); err != nil {
		return nil, err
	}
	libs, err := linkedLibs(run)
	if err != nil {
		return nil, err
	}
	raw.Libs = libs
	syms := map[string]bool{}
	for _, l := range libs {
		f, err := elf.Open(l)
		if err != nil {
			return nil, err
		}
		ds, err := f.DynamicSymbols()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l, err)
		}
		for _, s := range ds {
			if strings.HasPrefix(s.Name, "PMPI_") && s.Section != elf.SHN_UNDEF && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
				syms[s.Name] = true
			}
		}
	}
	names := make([]string, 0, len(syms))
	for s := range syms {
		names = append(names, s)
	}
	sort.Strings(names)
	raw.Symbols = []byte(strings.Join(names, "\n") + "\n")
	return raw, nil
}

// Header interprets the raw answers.
func (r *Raw) Header() (*Header, error) {
	h := &Header{Libs: r.Libs}
	var err error
	if h.Protos, err = ParseAuxInfo(bytes.NewReader(r.AuxInfo)); err != nil {
		return nil, err
	}
	h.Macros = ParseMacros(bytes.NewReader(r.Macros))
	h.PMPI = ParseSymbols(bytes.NewReader(r.Symbols))
	h.Family, h.Version = familyVersion(h.Macros)
	return h, nil
}

// linkedLibs asks mpicc how it links and resolves the -l libraries to files.
func linkedLibs(run func(...string) ([]byte, error)) ([]string, error) {
	out, err := run("-showme:link")
	if err != nil {
		out, err = run("-show")
		if err != nil {
			return nil, err
		}
	}
	var dirs, names []string
	for _, f := range strings.Fields(string(out)) {
		switch {
		case strings.HasPrefix(f, "-L"):
			dirs = append(dirs, f[2:])
		case strings.HasPrefix(f, "-l"):
			names = append(names, f[2:])
		}
	}
	if sd, err := run("-print-search-dirs"); err == nil {
		for _, line := range strings.Split(string(sd), "\n") {
			if rest, ok := strings.CutPrefix(line, "libraries: ="); ok {
				dirs = append(dirs, filepath.SplitList(rest)...)
			}
		}
	}
	dirs = append(dirs, "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib")
	var libs []string
	for _, n := range names {
		if !strings.Contains(n, "mpi") {
			continue
		}
		for _, d := range dirs {
			p := filepath.Join(d, "lib"+n+".so")
			if _, err := os.Stat(p); err == nil {
				libs = append(libs, filepath.Clean(p))
				break
			}
		}
	}
	if len(libs) == 0 {
		return nil, fmt.Errorf("cannot find the MPI library in %q (link line %q)", dirs, strings.TrimSpace(string(out)))
	}
	return libs, nil
}
