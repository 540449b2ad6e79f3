package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/profile"
)

func busyFixture() *profile.Profile {
	return &profile.Profile{
		Meta: profile.Meta{NumRanks: 2},
		Ranks: []profile.Rank{
			{Rank: 0, AppNs: 4e9, MPINs: 1e9, OffNs: 2e9},
			{Rank: 1, AppNs: 4e9, MPINs: 3e9},
		},
		Busy: []profile.Call{
			{Rank: 0, Thread: 7, Func: "MPI_Barrier", Loc: profile.Loc{Function: "main", File: "/src/app.c", Line: 30}, Comm: "world",
				Peer: profile.PeerNone, Tag: profile.TagNone, ElapsedNs: 1e9},
			{Rank: 1, Thread: 8, Func: "MPI_Recv", Loc: profile.Loc{Function: "main", File: "/src/app.c", Line: 25}, Comm: "world",
				Peer: profile.PeerAny, Tag: profile.TagAny, ElapsedNs: 25e8},
		},
	}
}

// TestBusyText: the In progress section lists the calls, longest first,
// with peer and tag; the header gives the time off, and the rank table's
// App time and MPI% leave it out (rank 0: 1 s of 2 s recorded = 50%).
func TestBusyText(t *testing.T) {
	p := busyFixture()
	var b bytes.Buffer
	if err := Write(&b, p, Text, Options{}); err != nil {
		t.Fatal(err)
	}
	txt := b.String()
	i := strings.Index(txt, "@--- In progress")
	if i < 0 {
		t.Fatalf("no In progress section:\n%s", txt)
	}
	sec := txt[i:]
	sec = sec[:strings.Index(sec[1:], "@---")+1]
	recv, barrier := strings.Index(sec, "MPI_Recv"), strings.Index(sec, "MPI_Barrier")
	if recv < 0 || barrier < recv || !strings.Contains(sec, "app.c:25") || !strings.Contains(sec, "any") {
		t.Errorf("In progress section:\n%s", sec)
	}
	if !strings.Contains(txt, "Recording off: 2.000 s over 1 of 2 ranks (min 0.000 us on rank 1, max 2.000 s on rank 0)") {
		t.Errorf("no Recording off line:\n%s", txt)
	}
	if !strings.Contains(txt, "50.00") || strings.Contains(txt, "25.00") {
		t.Errorf("rank 0's MPI%% should be 50.00 (time off excluded), not 25.00:\n%s", txt)
	}
	if p.Ranks[0].AppNs != 4e9 {
		t.Errorf("Write changed the profile: %+v", p.Ranks[0])
	}
}

// TestBusyJSON: in_progress and recording_off, and app_ns without the
// time off; both are absent from a profile without them.
func TestBusyJSON(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, busyFixture(), JSON, Options{}); err != nil {
		t.Fatal(err)
	}
	var d jsonDoc
	if err := json.Unmarshal(b.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.InProgress) != 2 || d.InProgress[0].Peer != nil || d.InProgress[1].Peer == nil || *d.InProgress[1].Peer != profile.PeerAny {
		t.Errorf("in_progress: %+v", d.InProgress)
	}
	if d.RecordingOff == nil || d.RecordingOff.TotalNs != 2e9 || d.RecordingOff.MaxRank != 0 || len(d.RecordingOff.Ranks) != 1 {
		t.Errorf("recording_off: %+v", d.RecordingOff)
	}
	if d.Ranks[0].AppNs != 2e9 || d.Ranks[0].MPIPct != 50 || d.Totals.AppNs != 6e9 {
		t.Errorf("ranks[0] %+v, totals %+v", d.Ranks[0], d.Totals)
	}
	b.Reset()
	if err := Write(&b, &profile.Profile{}, JSON, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "in_progress") || strings.Contains(b.String(), "recording_off") {
		t.Errorf("empty profile has in_progress or recording_off:\n%s", b.String())
	}
}
