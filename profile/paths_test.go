package profile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// pathText renders a path as "Func calls: f@file:line < g@file:line ...".
func pathText(q Path) string {
	var fr []string
	for _, f := range q.Frames {
		fr = append(fr, fmt.Sprintf("%s@%s:%d", f.Function, filepath.Base(f.File), f.Line))
	}
	o := ""
	if q.Other {
		o = " other"
	}
	return fmt.Sprintf("%s %d%s: %s", q.Func, q.Calls, o, strings.Join(fr, " < "))
}

// TestReadCallPathFile reads the pinned profile with call paths
// (testdata/README.md): testdata/progs/callpath/calltree.c at depth 3 on
// 2 ranks, every path spelled out.
func TestReadCallPathFile(t *testing.T) {
	b, err := os.ReadFile("testdata/v1-callpath.mps")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Unmarshal(b, "v1-callpath.mps")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, q := range p.Paths {
		got = append(got, pathText(q))
	}
	want := []string{
		"MPI_Allreduce 10: halo@calltree.c:24 < output@calltree.c:45 < main@calltree.c:72",
		"MPI_Allreduce 40: halo@calltree.c:24 < precond@calltree.c:38 < main@calltree.c:71",
		"MPI_Allreduce 20: halo@calltree.c:24 < solve@calltree.c:31 < main@calltree.c:70",
		"MPI_Barrier 6: rec@calltree.c:52 < rec@calltree.c:54 < rec@calltree.c:54",
		"MPI_Bcast 14: cp_lib_bcast@cplib.c:8 < driver@calltree.c:62 < main@calltree.c:75",
		"MPI_Comm_rank 2: main@calltree.c:77 < __libc_start_call_main@libc_start_call_main.h:58",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("paths:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, q := range p.Paths {
		if q.Frames[0].Module == "" || !strings.HasSuffix(q.Frames[0].Module, "calltree") && !strings.HasSuffix(q.Frames[0].Module, "libcplib.so") {
			t.Errorf("%s: callsite module %q", q.Func, q.Frames[0].Module)
		}
		if q.TimeNs <= 0 {
			t.Errorf("%s: time %d", pathText(q), q.TimeNs)
		}
	}
	// Written again, it is the same file.
	if !bytes.Equal(Marshal(p), b) {
		t.Errorf("re-encoded file differs from the pinned one")
	}
}

func TestPathsMerge(t *testing.T) {
	loc := func(mod string, off uint64, fn, file string, line int) Loc {
		return Loc{Module: mod, Offset: off, Function: fn, File: file, Line: line}
	}
	rank := func(r int, calls int64, frames ...Loc) *Profile {
		return &Profile{Paths: []Path{{Func: "MPI_Send", Frames: frames, Calls: calls, TimeNs: 10 * calls, Bytes: 8 * calls}}}
	}
	// Unsymbolized: merged by module and offset.
	a := rank(0, 3, loc("app", 0x10, "", "", 0), loc("app", 0x20, "", "", 0))
	b := rank(1, 4, loc("app", 0x10, "", "", 0), loc("app", 0x20, "", "", 0))
	c := rank(2, 5, loc("app", 0x10, "", "", 0), loc("app", 0x24, "", "", 0))
	m := MergeAll([]*Profile{a, b, c})
	if len(m.Paths) != 2 || m.Paths[0].Calls != 7 || m.Paths[1].Calls != 5 {
		t.Fatalf("merged by address: %+v", m.Paths)
	}
	// Symbolized: two addresses of one line (another executable's, or an
	// unrolled loop's) are one frame.
	for _, p := range []*Profile{a, b, c} {
		p.Paths[0].Frames[0].Function, p.Paths[0].Frames[0].File, p.Paths[0].Frames[0].Line = "halo", "h.c", 3
		p.Paths[0].Frames[1].Function, p.Paths[0].Frames[1].File, p.Paths[0].Frames[1].Line = "solve", "s.c", 9
	}
	m = MergeAll([]*Profile{a, b, c})
	if len(m.Paths) != 1 || m.Paths[0].Calls != 12 || m.Paths[0].TimeNs != 120 || m.Paths[0].Bytes != 96 {
		t.Fatalf("merged by symbols: %+v", m.Paths)
	}
	// CompactPaths does the same on one profile symbolized after its merge.
	c.Paths = append(c.Paths, a.Paths[0])
	c.CompactPaths()
	if len(c.Paths) != 1 || c.Paths[0].Calls != 8 {
		t.Fatalf("compacted: %+v", c.Paths)
	}
	// The other-paths bucket and regions stay apart.
	d := rank(0, 1, loc("app", 0x10, "halo", "h.c", 3))
	d.Paths[0].Other = true
	e := rank(0, 1, loc("app", 0x10, "halo", "h.c", 3))
	e.Paths[0].Region = "r"
	m = MergeAll([]*Profile{d, e, rank(0, 1, loc("app", 0x10, "halo", "h.c", 3))})
	if len(m.Paths) != 3 {
		t.Fatalf("other and region: %+v", m.Paths)
	}
	// Round trip.
	q, err := Unmarshal(Marshal(m), "x")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(q.Paths, m.Paths) {
		t.Errorf("round trip:\n%+v\nwant\n%+v", q.Paths, m.Paths)
	}
}

// TestPathsCorrupt: a bad call-paths section (here its flags, with a valid
// checksum) is an error naming the file and the offset.
func TestPathsCorrupt(t *testing.T) {
	p := &Profile{Paths: []Path{{Func: "MPI_Send", Frames: []Loc{{Module: "a", Offset: 1}}, Calls: 1}}}
	b := Marshal(p)
	end := len(b) - crcSize
	// The last section is the paths section: tag, length, then the path
	// count, Func and Region (one byte each here), then the flags.
	var l int
	for l = 1; l < 64; l++ {
		if b[end-l-2] == secPaths && int(b[end-l-1]) == l {
			break
		}
	}
	if l == 64 {
		t.Fatal("paths section not found")
	}
	flags := end - l + 3
	if b[flags] != 0 {
		t.Fatalf("byte %d is %d, not the flags", flags, b[flags])
	}
	b[flags] = 2
	binary.LittleEndian.PutUint32(b[end:], crc32.ChecksumIEEE(b[:end]))
	_, err := Unmarshal(b, "bad.mps")
	if err == nil || !strings.Contains(err.Error(), "bad.mps") || !strings.Contains(err.Error(), fmt.Sprintf("offset %d: invalid path flags 2", flags)) {
		t.Errorf("got %v", err)
	}
}
