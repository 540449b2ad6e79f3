// Package symbolize turns callsite addresses into function, file and line
// using only debug/elf and debug/dwarf.
//
// A runtime program counter is first mapped to a module and a module
// relative address with ParseMaps/ReadSelfMaps and Resolve. The address is
// then looked up with a Symbolizer, which opens each module once and builds
// an in-memory index (sorted function ranges with their inlined call
// chains, a sorted line table over all compile units and a sorted ELF
// symbol table) so that each lookup is a few binary searches.
//
// Callsites recorded by a profiler are return addresses: they point at the
// instruction after the call, which may belong to the next source line or
// even to the next function. Use LookupReturn / LookupReturnFrames for
// those; they look up off-1, which is inside the call instruction.
//
// Inlining: for an address inside inlined code (typical of -O2 builds),
// Lookup reports the outermost real function (the DW_TAG_subprogram that
// owns the machine code, which is also what the ELF symbol table and
// perf-style tools call it) together with the file and line of the
// instruction itself from the line table, i.e. the line of the call
// statement, which may be in the inlined function's source. LookupFrames
// returns the whole inline chain for callers that want it.
package symbolize

import (
	"errors"
	"fmt"
	"os"
	"sync"
)

// ErrNotFound is returned (wrapped) by the lookup methods when the module
// was read successfully but neither its debug information nor its symbol
// tables cover the address.
var ErrNotFound = errors.New("symbolize: address not found")

// Frame is one logical frame at an address. Inlined frames share the
// machine code address of the function they were inlined into.
type Frame struct {
	Func    string // function name; "" if unknown
	File    string // source file; "" if unknown (no DWARF)
	Line    int    // 1-based source line; 0 if unknown
	Inlined bool   // true if the frame was inlined into the next one
}

// Symbolizer resolves module-relative addresses. It is safe for concurrent
// use. Each module is opened and indexed once, on first use; the result
// (including an error opening it) is kept for the Symbolizer's lifetime.
type Symbolizer struct {
	// debugRoot is the global debug directory searched for separate
	// debug files (.gnu_debuglink and build-id); "/usr/lib/debug".
	debugRoot string

	mu   sync.Mutex
	mods map[string]*moduleEntry
}

type moduleEntry struct {
	once sync.Once
	idx  *index
	err  error
}

// New returns an empty Symbolizer.
func New() *Symbolizer {
	return &Symbolizer{debugRoot: "/usr/lib/debug", mods: make(map[string]*moduleEntry)}
}

func (s *Symbolizer) module(path string) (*index, error) {
	s.mu.Lock()
	e := s.mods[path]
	if e == nil {
		e = new(moduleEntry)
		s.mods[path] = e
	}
	s.mu.Unlock()
	e.once.Do(func() { e.idx, e.err = loadModule(path, s.debugRoot) })
	return e.idx, e.err
}

// Lookup returns the function, source file and line for the instruction at
// module-relative address off (as returned by Resolve) in module.
//
// fn is the outermost real function containing off, even if off is in code
// inlined into it; file and line are those of the instruction at off from
// the line table. Without DWARF the function name comes from .symtab, or
// .dynsym if there is no .symtab, demangled (see Demangle; in a module built
// by gfortran the trailing underscore of an external procedure is dropped
// too), and file is "" and line 0.
//
// For return addresses use LookupReturn. The error names the module if it
// cannot be opened or parsed, and wraps ErrNotFound if nothing is known
// about off.
func (s *Symbolizer) Lookup(module string, off uint64) (fn, file string, line int, err error) {
	idx, err := s.module(module)
	if err != nil {
		return "", "", 0, err
	}
	fn, file, line, ok := idx.lookup(off)
	if !ok {
		return "", "", 0, fmt.Errorf("%w: %s+%#x", ErrNotFound, module, off)
	}
	return fn, file, line, nil
}

// LookupReturn is Lookup for a return address, such as one from
// __builtin_return_address, backtrace(3) or a stack unwinder. A return
// address points just past the call instruction, so LookupReturn looks up
// off-1, which lies inside the call: the reported line is that of the call
// statement rather than of the statement executed after the call returns,
// and a call that is the last instruction of a function is not attributed
// to the following function.
func (s *Symbolizer) LookupReturn(module string, off uint64) (fn, file string, line int, err error) {
	return s.Lookup(module, returnToCall(off))
}

// LookupFrames returns the logical frames at off, innermost first: for
// code inlined into a function, the inlined function(s) come first (with
// the file and line of the instruction for the innermost one and the call
// site line for the others) and the real function last. Without inlining
// the result has a single frame equivalent to Lookup.
func (s *Symbolizer) LookupFrames(module string, off uint64) ([]Frame, error) {
	idx, err := s.module(module)
	if err != nil {
		return nil, err
	}
	frames := idx.frames(off)
	if frames == nil {
		return nil, fmt.Errorf("%w: %s+%#x", ErrNotFound, module, off)
	}
	return frames, nil
}

// LookupReturnFrames is LookupFrames for a return address (see
// LookupReturn).
func (s *Symbolizer) LookupReturnFrames(module string, off uint64) ([]Frame, error) {
	return s.LookupFrames(module, returnToCall(off))
}

func returnToCall(off uint64) uint64 {
	if off == 0 {
		return 0
	}
	return off - 1
}

// openError wraps an error from opening or parsing the ELF file at path so
// that the message always names the file.
func openError(path string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("symbolize: %w", err)
	}
	return fmt.Errorf("symbolize: %s: %w", path, err)
}
