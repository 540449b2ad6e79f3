package symbolize

import (
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// index is the per-module lookup structure. All slices are sorted by
// address and searched with binary search; the ELF and DWARF data are not
// kept after it is built.
type index struct {
	funcs []funcRange // DWARF subprogram ranges, sorted by lo
	lines []lineRow   // all line table rows of all CUs, sorted by addr
	files []string    // interned file names referenced by lines
	syms  []symbol    // ELF function symbols, sorted by addr
	// fortran: the module was built by gfortran (it needs libgfortran or
	// defines MAIN__), so its symbol p_ is the external procedure p.
	fortran bool
}

// funcInfo is a concrete DW_TAG_subprogram. One funcInfo may own several
// funcRanges (DW_AT_ranges, e.g. hot/cold splitting).
type funcInfo struct {
	name    string
	inlines []inlineRange // in DIE (depth-first) order: parents before children
}

type funcRange struct {
	lo, hi uint64
	fn     *funcInfo
}

// inlineRange is one address range of a DW_TAG_inlined_subroutine.
// depth is 0 for code inlined directly into the subprogram, 1 for code
// inlined into that, and so on.
type inlineRange struct {
	lo, hi   uint64
	depth    int
	name     string
	callFile string
	callLine int
}

// lineRow is one line table row. file == endOfSequence marks the first
// address after a sequence: addresses from there on have no line until
// the next row.
type lineRow struct {
	addr uint64
	file uint32
	line uint32
}

const endOfSequence = ^uint32(0)

type symbol struct {
	addr, size uint64
	name       string
}

// addrRange is a half-open address range [lo, hi).
type addrRange struct{ lo, hi uint64 }

// loadModule opens the ELF file at path (and its separate debug file, if
// the module has no DWARF of its own) and builds its index.
func loadModule(path, debugRoot string) (idx *index, err error) {
	defer func() {
		if r := recover(); r != nil {
			idx, err = nil, fmt.Errorf("symbolize: %s: malformed ELF: %v", path, r)
		}
	}()
	if path == "" {
		return nil, errors.New("symbolize: empty module path")
	}
	f, err := elf.Open(path)
	if err != nil {
		return nil, openError(path, err)
	}
	defer f.Close()

	idx = new(index)
	exec := execRanges(f)
	idx.syms = elfSymbols(f)

	dwarfFile := f
	if !hasDebugInfo(f) {
		if df := openDebugFile(f, path, debugRoot); df != nil {
			defer df.Close()
			dwarfFile = df
			if len(idx.syms) == 0 {
				idx.syms = elfSymbols(df)
			}
		}
	}
	if hasDebugInfo(dwarfFile) {
		idx.addDWARF(dwarfFile, exec)
	}
	idx.fortran = isGfortran(f, idx.syms)
	// A module with neither DWARF nor symbols is not an error;
	// lookups in it report ErrNotFound.
	return idx, nil
}

func hasDebugInfo(f *elf.File) bool {
	for _, name := range []string{".debug_info", ".zdebug_info"} {
		if s := f.Section(name); s != nil && s.Type != elf.SHT_NOBITS && s.Size > 0 {
			return true
		}
	}
	return false
}

// execRanges returns the address ranges of executable code in f, used to
// drop DWARF for functions the linker discarded (whose addresses are
// typically relocated to 0). nil means "unknown, accept everything".
func execRanges(f *elf.File) []addrRange {
	var rs []addrRange
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC != 0 && s.Flags&elf.SHF_EXECINSTR != 0 && s.Size > 0 {
			rs = append(rs, addrRange{s.Addr, s.Addr + s.Size})
		}
	}
	if len(rs) == 0 {
		for _, p := range f.Progs {
			if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && p.Memsz > 0 {
				rs = append(rs, addrRange{p.Vaddr, p.Vaddr + p.Memsz})
			}
		}
	}
	return rs
}

func inRanges(rs []addrRange, addr uint64) bool {
	if rs == nil {
		return true
	}
	for _, r := range rs {
		if r.lo <= addr && addr < r.hi {
			return true
		}
	}
	return false
}

// elfSymbols returns the function symbols of .symtab, or of .dynsym if
// there is no .symtab, sorted by address with one symbol per address
// (global symbols and symbols with a size preferred).
func elfSymbols(f *elf.File) []symbol {
	raw, err := f.Symbols()
	if err != nil || len(raw) == 0 {
		raw, _ = f.DynamicSymbols()
	}
	type cand struct {
		symbol
		global bool
	}
	var cs []cand
	for _, s := range raw {
		t := elf.ST_TYPE(s.Info)
		if t != elf.STT_FUNC && t != elf.STT_GNU_IFUNC {
			continue
		}
		if s.Section == elf.SHN_UNDEF || s.Value == 0 || s.Name == "" {
			continue
		}
		b := elf.ST_BIND(s.Info)
		cs = append(cs, cand{symbol{s.Value, s.Size, s.Name}, b == elf.STB_GLOBAL || b == elf.STB_WEAK})
	}
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.addr != b.addr {
			return a.addr < b.addr
		}
		if a.global != b.global {
			return a.global
		}
		return a.size > b.size
	})
	syms := make([]symbol, 0, len(cs))
	for _, c := range cs {
		if n := len(syms); n > 0 && syms[n-1].addr == c.addr {
			continue
		}
		syms = append(syms, c.symbol)
	}
	return syms
}

// addDWARF adds function ranges and line tables from f's DWARF. Malformed
// DWARF is tolerated: whatever was read before the problem is kept, and a
// panic inside debug/dwarf discards the DWARF part of the index (the
// symbol table still works).
func (idx *index) addDWARF(f *elf.File, exec []addrRange) {
	defer func() {
		if r := recover(); r != nil {
			idx.funcs, idx.lines, idx.files = nil, nil, nil
		}
	}()
	d, err := f.DWARF()
	if err != nil {
		return
	}
	b := &builder{idx: idx, d: d, exec: exec, names: make(map[dwarf.Offset]string),
		fileIDs: make(map[string]uint32), stmtLists: make(map[int64]bool)}
	b.walk()
	sort.Slice(idx.funcs, func(i, j int) bool {
		a, b := idx.funcs[i], idx.funcs[j]
		if a.lo != b.lo {
			return a.lo < b.lo
		}
		return a.hi < b.hi
	})
	sort.SliceStable(idx.lines, func(i, j int) bool {
		a, b := idx.lines[i], idx.lines[j]
		if a.addr != b.addr {
			return a.addr < b.addr
		}
		// At an address where one sequence ends and another
		// starts, the end marker must sort first so the new
		// sequence's row wins.
		return a.file == endOfSequence && b.file != endOfSequence
	})
}

type builder struct {
	idx       *index
	d         *dwarf.Data
	exec      []addrRange
	names     map[dwarf.Offset]string // name cache for abstract origins
	nameRd    *dwarf.Reader
	fileIDs   map[string]uint32
	stmtLists map[int64]bool
}

// scope is the state for the children of one DIE.
type scope struct {
	fn    *funcInfo // innermost enclosing concrete subprogram, or nil
	depth int       // inline nesting depth within fn
	files []*dwarf.LineFile
}

func (b *builder) walk() {
	r := b.d.Reader()
	var stack []scope
	var cur scope
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			return
		}
		if e.Tag == 0 {
			if n := len(stack); n > 0 {
				cur, stack = stack[n-1], stack[:n-1]
			}
			continue
		}
		next := cur
		switch e.Tag {
		case dwarf.TagCompileUnit, dwarf.TagPartialUnit:
			stack, cur = stack[:0], scope{}
			next = scope{files: b.addLines(e)}
		case dwarf.TagSubprogram:
			next = scope{files: cur.files}
			rngs := b.ranges(e)
			if len(rngs) > 0 {
				fi := &funcInfo{name: b.name(e, 0)}
				for _, rg := range rngs {
					b.idx.funcs = append(b.idx.funcs, funcRange{rg.lo, rg.hi, fi})
				}
				next.fn = fi
			}
		case dwarf.TagInlinedSubroutine:
			if cur.fn == nil {
				break
			}
			rngs := b.ranges(e)
			if len(rngs) == 0 {
				break
			}
			name := b.name(e, 0)
			callFile := fileName(cur.files, e.Val(dwarf.AttrCallFile))
			callLine, _ := e.Val(dwarf.AttrCallLine).(int64)
			for _, rg := range rngs {
				cur.fn.inlines = append(cur.fn.inlines, inlineRange{
					lo: rg.lo, hi: rg.hi, depth: cur.depth,
					name: name, callFile: callFile, callLine: int(callLine),
				})
			}
			next.depth = cur.depth + 1
		case dwarf.TagStructType, dwarf.TagClassType, dwarf.TagUnionType,
			dwarf.TagEnumerationType, dwarf.TagArrayType, dwarf.TagSubroutineType:
			// Types contain no code; skip their (possibly many)
			// children.
			if e.Children {
				r.SkipChildren()
			}
			continue
		}
		if e.Children {
			stack = append(stack, cur)
			cur = next
		}
	}
}

// ranges returns e's address ranges that lie in executable code.
func (b *builder) ranges(e *dwarf.Entry) []addrRange {
	rs, err := b.d.Ranges(e)
	if err != nil {
		return nil
	}
	var out []addrRange
	for _, r := range rs {
		if r[0] < r[1] && inRanges(b.exec, r[0]) {
			out = append(out, addrRange{r[0], r[1]})
		}
	}
	return out
}

// name returns e's DW_AT_name, following DW_AT_abstract_origin and
// DW_AT_specification (concrete instances of inline functions, C++
// out-of-line member definitions, compiler clones). A mangled
// DW_AT_linkage_name (C++, gfortran module procedures) is preferred, as it
// names the class or module too; lookups demangle it.
func (b *builder) name(e *dwarf.Entry, depth int) string {
	for _, a := range []dwarf.Attr{dwarf.AttrLinkageName, attrMIPSLinkageName} {
		if n, ok := e.Val(a).(string); ok && mangled(n) {
			return n
		}
	}
	if n, ok := e.Val(dwarf.AttrName).(string); ok && n != "" {
		return n
	}
	if depth > 8 { // reference cycles in malformed DWARF
		return ""
	}
	for _, a := range []dwarf.Attr{dwarf.AttrAbstractOrigin, dwarf.AttrSpecification} {
		if off, ok := e.Val(a).(dwarf.Offset); ok {
			if n := b.nameAt(off, depth+1); n != "" {
				return n
			}
		}
	}
	return ""
}

func (b *builder) nameAt(off dwarf.Offset, depth int) string {
	if n, ok := b.names[off]; ok {
		return n
	}
	if b.nameRd == nil {
		b.nameRd = b.d.Reader()
	}
	b.nameRd.Seek(off)
	e, err := b.nameRd.Next()
	n := ""
	if err == nil && e != nil && e.Offset == off {
		n = b.name(e, depth)
	}
	b.names[off] = n
	return n
}

func fileName(files []*dwarf.LineFile, v any) string {
	i, ok := v.(int64)
	if !ok || i < 0 || i >= int64(len(files)) || files[i] == nil {
		return ""
	}
	return files[i].Name
}

func (b *builder) fileID(name string) uint32 {
	if id, ok := b.fileIDs[name]; ok {
		return id
	}
	id := uint32(len(b.idx.files))
	b.idx.files = append(b.idx.files, name)
	b.fileIDs[name] = id
	return id
}

// addLines appends all rows of cu's line table and returns the table's
// file list (for DW_AT_call_file). Sequences that start outside
// executable code (discarded by the linker) are dropped. A line table
// shared by several units is read once.
func (b *builder) addLines(cu *dwarf.Entry) []*dwarf.LineFile {
	lr, err := b.d.LineReader(cu)
	if err != nil || lr == nil {
		return nil
	}
	files := append([]*dwarf.LineFile(nil), lr.Files()...)
	if off, ok := cu.Val(dwarf.AttrStmtList).(int64); ok {
		if b.stmtLists[off] {
			return files
		}
		b.stmtLists[off] = true
	}
	var le dwarf.LineEntry
	inSeq, keep := false, false
	for {
		if err := lr.Next(&le); err != nil {
			if err != io.EOF {
				// Keep what was read; drop a partial sequence's
				// tail by terminating it here.
				if inSeq && keep {
					b.idx.lines = append(b.idx.lines, lineRow{addr: le.Address, file: endOfSequence})
				}
			}
			break
		}
		if !inSeq {
			inSeq = true
			keep = inRanges(b.exec, le.Address)
		}
		if le.EndSequence {
			if keep {
				b.idx.lines = append(b.idx.lines, lineRow{addr: le.Address, file: endOfSequence})
			}
			inSeq = false
			continue
		}
		if !keep {
			continue
		}
		name := ""
		if le.File != nil {
			name = le.File.Name
		}
		line := le.Line
		if line < 0 {
			line = 0
		}
		b.idx.lines = append(b.idx.lines, lineRow{addr: le.Address, file: b.fileID(name), line: uint32(line)})
	}
	return files
}

// findFunc returns the DWARF function containing pc, or nil.
func (idx *index) findFunc(pc uint64) *funcRange {
	i := sort.Search(len(idx.funcs), func(i int) bool { return idx.funcs[i].lo > pc }) - 1
	// Ranges normally do not overlap; look back a little in case
	// they do (e.g. duplicated DWARF for the same code).
	for j := i; j >= 0 && j > i-8; j-- {
		if f := &idx.funcs[j]; f.lo <= pc && pc < f.hi {
			return f
		}
	}
	return nil
}

// lineAt returns the file and line of the line table row covering pc.
func (idx *index) lineAt(pc uint64) (string, int, bool) {
	i := sort.Search(len(idx.lines), func(i int) bool { return idx.lines[i].addr > pc }) - 1
	if i < 0 || idx.lines[i].file == endOfSequence {
		return "", 0, false
	}
	r := idx.lines[i]
	return idx.files[r.file], int(r.line), true
}

// symbolAt returns the name of the ELF function symbol containing pc.
func (idx *index) symbolAt(pc uint64) string {
	i := sort.Search(len(idx.syms), func(i int) bool { return idx.syms[i].addr > pc }) - 1
	if i < 0 {
		return ""
	}
	s := idx.syms[i]
	if s.size > 0 && pc-s.addr >= s.size {
		return ""
	}
	if idx.fortran {
		return demangleFortran(s.name)
	}
	return Demangle(s.name)
}

// isGfortran tells whether the module was built by gfortran: it needs
// libgfortran, or it defines the Fortran main program MAIN__.
func isGfortran(f *elf.File, syms []symbol) bool {
	if libs, err := f.ImportedLibraries(); err == nil {
		for _, l := range libs {
			if strings.HasPrefix(l, "libgfortran.") {
				return true
			}
		}
	}
	for _, s := range syms {
		if s.name == "MAIN__" {
			return true
		}
	}
	return false
}

func (idx *index) funcName(pc uint64) string {
	if f := idx.findFunc(pc); f != nil && f.fn.name != "" {
		return Demangle(f.fn.name)
	}
	return idx.symbolAt(pc)
}

func (idx *index) lookup(pc uint64) (fn, file string, line int, ok bool) {
	fn = idx.funcName(pc)
	file, line, hasLine := idx.lineAt(pc)
	return fn, file, line, fn != "" || hasLine
}

func (idx *index) frames(pc uint64) []Frame {
	fn, file, line, ok := idx.lookup(pc)
	if !ok {
		return nil
	}
	f := idx.findFunc(pc)
	if f == nil {
		return []Frame{{Func: fn, File: file, Line: line}}
	}
	// The chain of inlined calls containing pc, outermost first.
	// DIE order puts parents before children, and siblings do not
	// overlap, so one pass picks one range per depth.
	var chain []*inlineRange
	for i := range f.fn.inlines {
		in := &f.fn.inlines[i]
		if in.depth == len(chain) && in.lo <= pc && pc < in.hi {
			chain = append(chain, in)
		}
	}
	frames := make([]Frame, 0, len(chain)+1)
	for i := len(chain) - 1; i >= 0; i-- {
		frames = append(frames, Frame{Func: Demangle(chain[i].name), File: file, Line: line, Inlined: true})
		file, line = chain[i].callFile, chain[i].callLine
	}
	return append(frames, Frame{Func: fn, File: file, Line: line})
}
