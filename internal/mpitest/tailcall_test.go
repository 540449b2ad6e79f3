package mpitest_test

import (
	"debug/elf"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpitest"
)

// TestWrappersTailCall: every generated MPI_X reaches its fast path
// ms_on_MPI_X by a jump, never a call, so that the fast path's return
// address is the application's callsite (internal/wrapgen, genWrapper).
// A build that did not make the tail call (no optimization, say) would
// record every call at a site inside the library. The same holds for the
// call-path entry ms_path_MPI_X (MPISCOPE_DEPTH > 1, callpath.h), whose
// return address is the callsite and whose caller's frame is the
// application's. And with the lean fast path (internal/wrapgen, lean.go)
// MPI_X reaches ms_full_MPI_X, which records traced calls with its own
// return address as their callsite, by a jump too.
func TestWrappersTailCall(t *testing.T) {
	for _, c := range []struct {
		prefix, from string
		min          int
	}{{"ms_on_", "", 300}, {"ms_path_", "", 300}, {"ms_full_", "", 50}} {
		t.Run(c.prefix, func(t *testing.T) { testTailCall(t, c.prefix, c.from, c.min) })
	}
}

func testTailCall(t *testing.T, prefix, from string, least int) {
	mpitest.Families(t, func(t *testing.T, fam mpitest.Family) {
		f, err := elf.Open(fam.Lib())
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		syms, err := f.Symbols()
		if err != nil {
			t.Fatalf("%s: %v (the library must keep its symbol table)", fam.Lib(), err)
		}
		text := f.Section(".text")
		if text == nil {
			t.Fatalf("%s: no .text", fam.Lib())
		}
		code, err := text.Data()
		if err != nil {
			t.Fatal(err)
		}
		on := map[string]uint64{}
		for _, s := range syms {
			if strings.HasPrefix(s.Name, prefix+"MPI_") && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
				on[strings.TrimPrefix(s.Name, prefix)] = s.Value
			}
		}
		jumps := 0
		var bad []string
		for _, s := range syms {
			target, ok := on[strings.TrimPrefix(s.Name, from)]
			if from != "" && !strings.HasPrefix(s.Name, from) {
				ok = false
			}
			if !ok || elf.ST_TYPE(s.Info) != elf.STT_FUNC {
				continue
			}
			if s.Value < text.Addr || s.Value+s.Size > text.Addr+text.Size {
				t.Fatalf("%s: %s outside .text", fam.Lib(), s.Name)
			}
			body := code[s.Value-text.Addr : s.Value-text.Addr+s.Size]
			jmp, call := false, false
			for i := range body {
				at := s.Value + uint64(i)
				switch {
				case body[i] == 0xe9 && i+5 <= len(body):
					jmp = jmp || at+5+uint64(int64(int32(binary.LittleEndian.Uint32(body[i+1:])))) == target
				case body[i] == 0xeb && i+2 <= len(body):
					jmp = jmp || at+2+uint64(int64(int8(body[i+1]))) == target
				case body[i] == 0xe8 && i+5 <= len(body):
					call = call || at+5+uint64(int64(int32(binary.LittleEndian.Uint32(body[i+1:])))) == target
				}
			}
			if jmp && !call {
				jumps++
			} else {
				bad = append(bad, s.Name)
			}
		}
		if len(bad) > 0 {
			t.Errorf("%s: %d wrappers do not jump to their %s function, among them %s", fam.Lib(), len(bad), prefix, strings.Join(bad[:min(len(bad), 5)], ", "))
		}
		if jumps < least {
			t.Errorf("%s: %d wrappers jump to their %s function, want every generated one (over %d)", fam.Lib(), jumps, prefix, least)
		}
	})
}
