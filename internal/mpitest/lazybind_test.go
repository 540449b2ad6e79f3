package mpitest_test

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpitest"
)

// TestLazyPMPIBinding: libmpiscope binds no PMPI_ function when it loads.
// Each PMPI_ symbol is referenced only by lazy PLT slots (R_X86_64_JUMP_SLOT,
// resolved at the first call), never by a GOT or data relocation resolved
// at load (what -fno-plt or taking &PMPI_X would make): the library must
// load against an MPI library older than the header its wrappers were
// generated from, which lacks some of them (MPI-4's _c functions, say).
// The wrappers' hot calls go through pointers bound by dlsym at their first
// call instead (ms.h, MS_PMPI).
func TestLazyPMPIBinding(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, fam mpitest.Family) {
		f, err := elf.Open(fam.Lib())
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		syms, err := f.DynamicSymbols()
		if err != nil {
			t.Fatal(err)
		}
		lazy := 0
		var bad []string
		for _, name := range []string{".rela.dyn", ".rela.plt"} {
			s := f.Section(name)
			if s == nil {
				continue
			}
			data, err := s.Data()
			if err != nil {
				t.Fatal(err)
			}
			for off := 0; off+24 <= len(data); off += 24 {
				info := binary.LittleEndian.Uint64(data[off+8:])
				sym, typ := int(info>>32), elf.R_X86_64(info&0xffffffff)
				if sym == 0 || sym > len(syms) {
					continue
				}
				if n := syms[sym-1].Name; strings.HasPrefix(n, "PMPI_") {
					if typ != elf.R_X86_64_JMP_SLOT {
						bad = append(bad, fmt.Sprintf("%s (%s offset %#x, %v)", n, name, off, typ))
					} else {
						lazy++
					}
				}
			}
		}
		if len(bad) > 0 {
			t.Errorf("%d PMPI_ references bound at load, not lazily, among them %s", len(bad), strings.Join(bad[:min(len(bad), 3)], ", "))
		}
		// Every wrapped function's stubs call its PMPI_ form.
		if lazy < 300 {
			t.Errorf("%d lazy PMPI_ slots, want every wrapped function's (over 300)", lazy)
		}
	})
}
