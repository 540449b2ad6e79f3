package profile

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// busyProfile is a one-rank profile with time off and two calls in
// progress.
func busyProfile(rank int, elapsed int64) *Profile {
	p := &Profile{Meta: Meta{NumRanks: 4}}
	p.Ranks = []Rank{{Rank: rank, Host: "h", AppNs: 5e9, MPINs: 3e9, Calls: 2, Threads: 2, State: "snapshot", OffNs: 3e8}}
	p.Busy = []Call{
		{Rank: rank, Thread: 100, Func: "MPI_Recv", Loc: Loc{Module: "/bin/app", Offset: 0x1234, Function: "main", File: "app.c", Line: 25},
			Comm: "world", Peer: 0, Tag: 7, ElapsedNs: elapsed},
		{Rank: rank, Thread: 101, Func: "MPI_Barrier", Loc: Loc{Module: "/bin/app", Offset: 0x1300}, Region: "solve",
			Comm: "Comm_dup:4@0", Peer: PeerNone, Tag: TagNone, ElapsedNs: elapsed / 2},
	}
	return p
}

// TestBusyRoundTrip: calls in progress and time off survive encoding, and
// a profile without them encodes as before (no new sections).
func TestBusyRoundTrip(t *testing.T) {
	p := busyProfile(1, 3e9)
	q, err := Unmarshal(Marshal(p), "b.mps")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, q) {
		t.Fatalf("round trip differs:\n got %+v\nwant %+v", q, p)
	}
	plain := sample()
	b := Marshal(plain)
	for _, tag := range []int{secBusy, secRankOff} {
		if !hasSection(t, Marshal(p), tag) {
			t.Errorf("profile with calls in progress and time off lacks section %d", tag)
		}
		if hasSection(t, b, tag) {
			t.Errorf("profile without calls in progress or time off has section %d", tag)
		}
	}
	// Only the second of three ranks has time off: its index is found.
	m := &Profile{Ranks: []Rank{{Rank: 0}, {Rank: 5, OffNs: 7}, {Rank: 9}}}
	got, err := Unmarshal(Marshal(m), "m.mps")
	if err != nil || got.Ranks[0].OffNs != 0 || got.Ranks[1].OffNs != 7 || got.Ranks[2].OffNs != 0 {
		t.Fatalf("rank time off: %v %+v", err, got)
	}
	// A reusing decoder clears the time off of a previous input.
	var rd reusingDecoder
	if _, err := rd.unmarshal(Marshal(m), "1"); err != nil {
		t.Fatal(err)
	}
	m.Ranks[1].OffNs = 0
	r2, err := rd.unmarshal(Marshal(m), "2")
	if err != nil || r2.Ranks[1].OffNs != 0 || r2.Busy != nil {
		t.Fatalf("reused decode: %v %+v", err, r2)
	}
}

// hasSection reports whether the encoding b has a section with tag.
func hasSection(t *testing.T, b []byte, tag int) bool {
	t.Helper()
	d := &decoder{data: b, end: len(b)}
	d.pos = len(magic)
	d.uvarint()
	d.uvarint()
	body := len(b) - crcSize
	for d.pos < body && d.err == nil {
		tg := d.uvarint()
		n := d.uvarint()
		if int(tg) == tag {
			return true
		}
		d.pos += int(n)
	}
	return false
}

// TestBusyHostile: bad rank time-off entries are format errors.
func TestBusyHostile(t *testing.T) {
	ranks := section(secRanks, cat(uv(1), make([]byte, 9)))
	for _, tc := range []struct {
		name string
		data []byte
		msg  string
	}{
		{"index past ranks", frame(1, cat(ranks, section(secRankOff, cat(uv(1), uv(1), sv(5))))), "rank index 1 out of range (1 ranks) in rank time-off section"},
		{"no ranks", frame(1, section(secRankOff, cat(uv(1), uv(0), sv(5)))), "rank index 0 out of range (0 ranks)"},
		{"huge count", frame(1, section(secRankOff, uv(1<<40))), "rank time-off entry count"},
		{"huge call count", frame(1, section(secBusy, uv(1<<40))), "call count"},
		{"truncated call", frame(1, section(secBusy, cat(uv(1), make([]byte, 12)))), "call count 1 exceeds"},
		{"ok", frame(1, cat(ranks, section(secRankOff, cat(uv(1), uv(0), sv(5))))), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Unmarshal(tc.data, "h.mps")
			if tc.msg == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var fe *FormatError
			if !errors.As(err, &fe) || !bytes.Contains([]byte(fe.Msg), []byte(tc.msg)) {
				t.Fatalf("got %v, want a FormatError with %q", err, tc.msg)
			}
		})
	}
}

// TestBusyMerge: calls in progress of several ranks are kept, sorted by
// (rank, thread); the same thread's call twice (a snapshot and a later
// rank file) keeps the longer, in any order; time off travels with its
// rank's entry.
func TestBusyMerge(t *testing.T) {
	a, b, c := busyProfile(2, 2e9), busyProfile(1, 1e9), busyProfile(2, 3e9)
	c.Ranks[0].AppNs = 6e9
	c.Ranks[0].OffNs = 4e8
	for _, order := range [][]*Profile{{a, b, c}, {c, b, a}, {b, c, a}} {
		m := MergeAll(order)
		if len(m.Busy) != 4 {
			t.Fatalf("%d calls in progress, want 4: %+v", len(m.Busy), m.Busy)
		}
		want := []struct {
			rank, thread int
			ns           int64
		}{{1, 100, 1e9}, {1, 101, 5e8}, {2, 100, 3e9}, {2, 101, 15e8}}
		for i, w := range want {
			if g := m.Busy[i]; g.Rank != w.rank || g.Thread != w.thread || g.ElapsedNs != w.ns {
				t.Errorf("call %d: %+v, want rank %d thread %d %d ns", i, g, w.rank, w.thread, w.ns)
			}
		}
		if m.Ranks[1].Rank != 2 || m.Ranks[1].OffNs != 4e8 {
			t.Errorf("rank 2: %+v", m.Ranks[1])
		}
	}
}
