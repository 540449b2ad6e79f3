package wrapgen

import (
	"strings"
	"testing"
)

// Requests: the waits and tests complete them (class wait); starting
// persistent requests, freeing and cancelling them is request management
// (class request). MPI_Startall and MPI_Request_free were classed as waits,
// so that time spent starting requests showed as waiting.
func TestRequestClasses(t *testing.T) {
	for name, want := range map[string]Class{
		"MPI_Start": Request, "MPI_Startall": Request, "MPI_Request_free": Request,
		"MPI_Cancel": Request, "MPI_Test_cancelled": Request,
		"MPI_Wait": Wait, "MPI_Waitall": Wait, "MPI_Waitany": Wait, "MPI_Waitsome": Wait,
		"MPI_Test": Wait, "MPI_Testall": Wait, "MPI_Testany": Wait, "MPI_Testsome": Wait,
		"MPI_Request_get_status": Wait,
	} {
		if s, err := Lookup(name); err != nil || s.Class != want {
			t.Errorf("%s: class %q (%v), want %q", name, s.Class, err, want)
		}
	}
	// Every function of both MPI libraries classed wait completes
	// requests, and every one classed request manages them.
	for _, name := range saved {
		p := plan(t, name)
		n := map[Class]int{}
		for _, f := range p.Funcs {
			fn, c := f.Proto.Name, f.Sem.Class
			n[c]++
			completes := (strings.HasPrefix(fn, "MPI_Wait") || strings.HasPrefix(fn, "MPI_Test") ||
				strings.HasPrefix(fn, "MPI_Request_get_status")) && !strings.HasPrefix(fn, "MPI_Test_cancelled")
			if (c == Wait) != completes {
				t.Errorf("%s: %s is classed %q", name, fn, c)
			}
			if c == Request && !(f.Sem.Start >= 0 || f.Sem.StartAllReqs >= 0 || f.Sem.ReqFree >= 0 ||
				fn == "MPI_Cancel" || fn == "MPI_Test_cancelled") {
				t.Errorf("%s: %s is classed %q", name, fn, c)
			}
		}
		if n[Wait] != 9 || n[Request] != 5 {
			t.Errorf("%s: %d functions classed wait, %d request; want 9 and 5", name, n[Wait], n[Request])
		}
	}
}
