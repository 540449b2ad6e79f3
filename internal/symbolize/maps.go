package symbolize

import (
	"bufio"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Mapping is one line of /proc/<pid>/maps: the runtime address range
// [Start, End), the file offset the range was mapped from and the path of
// the mapped file ("" for anonymous memory, "[vdso]", "[stack]", ... for
// kernel pseudo mappings, and "... (deleted)" for unlinked files).
type Mapping struct {
	Start, End, Offset uint64
	Path               string
}

// ParseMaps parses the text format of /proc/<pid>/maps:
//
//	start-end perms offset dev inode [path]
//
// Blank lines are skipped. The path is everything after the inode field
// with leading blanks removed, so paths containing spaces and the
// " (deleted)" suffix are kept verbatim. A malformed line is an error that
// names the line number.
func ParseMaps(r io.Reader) ([]Mapping, error) {
	var maps []Mapping
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		m, err := parseMapsLine(line)
		if err != nil {
			return nil, fmt.Errorf("symbolize: maps line %d: %w", lineNo, err)
		}
		maps = append(maps, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("symbolize: reading maps: %w", err)
	}
	return maps, nil
}

// nextField splits off the first blank-separated field of s.
func nextField(s string) (field, rest string) {
	s = strings.TrimLeft(s, " \t")
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

func parseMapsLine(line string) (Mapping, error) {
	var m Mapping
	addr, rest := nextField(line)
	perms, rest := nextField(rest)
	off, rest := nextField(rest)
	dev, rest := nextField(rest)
	inode, rest := nextField(rest)
	if inode == "" {
		return m, fmt.Errorf("too few fields in %q", line)
	}
	lo, hi, found := strings.Cut(addr, "-")
	if !found {
		return m, fmt.Errorf("bad address range %q", addr)
	}
	var err error
	if m.Start, err = strconv.ParseUint(lo, 16, 64); err != nil {
		return m, fmt.Errorf("bad start address %q", lo)
	}
	if m.End, err = strconv.ParseUint(hi, 16, 64); err != nil {
		return m, fmt.Errorf("bad end address %q", hi)
	}
	if m.End < m.Start {
		return m, fmt.Errorf("end %#x before start %#x", m.End, m.Start)
	}
	if len(perms) != 4 {
		return m, fmt.Errorf("bad permissions %q", perms)
	}
	if m.Offset, err = strconv.ParseUint(off, 16, 64); err != nil {
		return m, fmt.Errorf("bad offset %q", off)
	}
	if !strings.Contains(dev, ":") {
		return m, fmt.Errorf("bad device %q", dev)
	}
	if _, err := strconv.ParseUint(inode, 10, 64); err != nil {
		return m, fmt.Errorf("bad inode %q", inode)
	}
	m.Path = strings.TrimLeft(rest, " \t")
	return m, nil
}

// ReadSelfMaps reads and parses /proc/self/maps.
func ReadSelfMaps() ([]Mapping, error) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return nil, fmt.Errorf("symbolize: %w", err)
	}
	defer f.Close()
	return ParseMaps(f)
}

// isFileMapping reports whether a mapping's path names a file that can be
// opened to read its ELF headers.
func isFileMapping(path string) bool {
	return strings.HasPrefix(path, "/") && !strings.HasSuffix(path, " (deleted)")
}

// Resolve finds the mapping containing pc and returns the module path and
// pc translated to the module's ELF virtual address space (pc minus the
// module's load bias), which is what DWARF, the symbol tables and
// Symbolizer.Lookup use.
//
// The bias is derived from the mapping's file offset and the PT_LOAD
// program headers of the file: the byte at file offset x of a PT_LOAD
// segment p lives at ELF address p.Vaddr + (x - p.Off), and the byte at
// runtime address pc of mapping m comes from file offset
// m.Offset + (pc - m.Start). This is correct for non-PIE executables (bias
// 0), PIE executables and shared libraries, including segments whose file
// offset and virtual address are not congruent modulo the page size. The
// program headers of each file are read once and cached for the life of
// the process.
//
// ok is false when pc is in no mapping, in an anonymous or pseudo mapping
// ([vdso], [stack], ...), in a deleted file, or when the file's program
// headers cannot be read or do not cover the mapping.
func Resolve(maps []Mapping, pc uint64) (module string, off uint64, ok bool) {
	return resolveWith(maps, pc, cachedLoads)
}

// loadsFunc returns the PT_LOAD program headers of the ELF file at path.
type loadsFunc func(path string) ([]elf.ProgHeader, error)

func resolveWith(maps []Mapping, pc uint64, loads loadsFunc) (string, uint64, bool) {
	m, found := findMapping(maps, pc)
	if !found || !isFileMapping(m.Path) {
		return "", 0, false
	}
	progs, err := loads(m.Path)
	if err != nil {
		return "", 0, false
	}
	fileOff := m.Offset + (pc - m.Start)
	p, found := segmentFor(progs, m, fileOff)
	if !found {
		return "", 0, false
	}
	// Unsigned wrap-around makes this right even when fileOff < p.Off
	// (pc in the page-alignment slack in front of the segment).
	return m.Path, p.Vaddr + (fileOff - p.Off), true
}

// findMapping returns the mapping containing pc. /proc maps are sorted by
// address, so binary search is tried first; unsorted input falls back to a
// linear scan.
func findMapping(maps []Mapping, pc uint64) (Mapping, bool) {
	i := sort.Search(len(maps), func(i int) bool { return maps[i].End > pc })
	if i < len(maps) && maps[i].Start <= pc && pc < maps[i].End {
		return maps[i], true
	}
	for _, m := range maps {
		if m.Start <= pc && pc < m.End {
			return m, true
		}
	}
	return Mapping{}, false
}

// segmentFor picks the PT_LOAD segment that the mapping m (and within it
// file offset fileOff) was mapped from: preferably the segment whose file
// bytes contain fileOff, else the segment with the highest file offset
// whose file bytes overlap the mapping's file range.
func segmentFor(progs []elf.ProgHeader, m Mapping, fileOff uint64) (elf.ProgHeader, bool) {
	for _, p := range progs {
		if p.Off <= fileOff && fileOff-p.Off < p.Filesz {
			return p, true
		}
	}
	mapLo, mapHi := m.Offset, m.Offset+(m.End-m.Start)
	var best elf.ProgHeader
	found := false
	for _, p := range progs {
		if p.Filesz == 0 || p.Off >= mapHi || p.Off+p.Filesz <= mapLo {
			continue
		}
		if !found || p.Off > best.Off && p.Off <= fileOff {
			best, found = p, true
		}
	}
	return best, found
}

type loadsEntry struct {
	once  sync.Once
	progs []elf.ProgHeader
	err   error
}

var loadsCache sync.Map // path -> *loadsEntry

// cachedLoads reads the PT_LOAD program headers of path once per process.
func cachedLoads(path string) ([]elf.ProgHeader, error) {
	v, _ := loadsCache.LoadOrStore(path, new(loadsEntry))
	e := v.(*loadsEntry)
	e.once.Do(func() { e.progs, e.err = readLoads(path) })
	return e.progs, e.err
}

func readLoads(path string) (progs []elf.ProgHeader, err error) {
	defer func() {
		if r := recover(); r != nil {
			progs, err = nil, fmt.Errorf("symbolize: %s: malformed ELF: %v", path, r)
		}
	}()
	f, err := elf.Open(path)
	if err != nil {
		return nil, openError(path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			progs = append(progs, p.ProgHeader)
		}
	}
	if len(progs) == 0 {
		return nil, fmt.Errorf("symbolize: %s: no PT_LOAD segments", path)
	}
	return progs, nil
}
