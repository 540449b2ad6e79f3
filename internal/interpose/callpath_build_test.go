package interpose

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mpiscope/mpiscope/internal/symbolize"
	"github.com/mpiscope/mpiscope/profile"
)

// TestSymbolizePathFrames: a return address in inlined code becomes a
// frame per inlined function, then the function it is inlined into, all at
// that address; symbolized frames stay; an address that does not resolve
// stays as it is; paths equal once symbolized merge.
func TestSymbolizePathFrames(t *testing.T) {
	frames := func(module string, off uint64) ([]symbolize.Frame, error) {
		switch off {
		case 0x10: // MPI call in inl(), inlined into outer() (its call at line 40)
			return []symbolize.Frame{{Func: "inl", File: "a.c", Line: 7, Inlined: true}, {Func: "outer", File: "a.c", Line: 40}}, nil
		case 0x11: // another address of the same line
			return []symbolize.Frame{{Func: "inl", File: "a.c", Line: 7, Inlined: true}, {Func: "outer", File: "a.c", Line: 40}}, nil
		case 0x20:
			return []symbolize.Frame{{Func: "main", File: "a.c", Line: 50}}, nil
		}
		return nil, errors.New("not found")
	}
	m := func(off uint64) profile.Loc { return profile.Loc{Module: "/bin/a", Offset: off} }
	p := &profile.Profile{Paths: []profile.Path{
		{Func: "MPI_Scan", Frames: []profile.Loc{m(0x10), m(0x20), m(0x99)}, Calls: 2},
		{Func: "MPI_Scan", Frames: []profile.Loc{m(0x11), m(0x20), m(0x99)}, Calls: 3},
		{Func: "MPI_Send", Frames: []profile.Loc{{Module: "/bin/a", Offset: 0x30, Function: "f", File: "b.c", Line: 3}}, Calls: 1},
	}}
	symbolizePathFrames(frames, p)
	var got []string
	for _, q := range p.Paths {
		s := fmt.Sprintf("%s %d:", q.Func, q.Calls)
		for _, f := range q.Frames {
			s += fmt.Sprintf(" %s@%s:%d+%#x", f.Function, f.File, f.Line, f.Offset)
		}
		got = append(got, s)
	}
	want := []string{
		"MPI_Scan 5: inl@a.c:7+0x10 outer@a.c:40+0x10 main@a.c:50+0x20 @:0+0x99",
		"MPI_Send 1: f@b.c:3+0x30",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}
