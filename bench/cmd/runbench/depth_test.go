package main

import (
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/profile"
)

const depthOut = `TIMER tsc 9.5
TIMER clock 20.1
DEPTH local_comm_rank none 10.0 0.000 1
DEPTH local_comm_rank timer 30.0 20.000 1
DEPTH local_comm_rank profile 40.0 30.000 1
DEPTH local_iprobe none 12.0 0.000 1
DEPTH local_iprobe timer 32.0 20.000 1
DEPTH local_iprobe profile 42.0 30.000 1
DEPTH pingpong_0 none 500.0 0.000 2
DEPTH pingpong_0 timer 540.0 40.000 2
DEPTH pingpong_0 profile 580.0 80.000 2
EXPECT MPI_Comm_rank 2400000
EXPECT MPI_Iprobe 2400000
EXPECT MPI_Send 240000
EXPECT MPI_Recv 240000
`

func TestParseDepthRun(t *testing.T) {
	r, err := parseDepthRun(depthOut)
	if err != nil {
		t.Fatal(err)
	}
	if r.tsc != 9.5 || r.diff["pingpong_0"]["profile"] != 80 || r.calls["pingpong_0"] != 2 || r.expect["MPI_Send"] != 240000 ||
		strings.Join(r.order, ",") != "local_comm_rank,local_iprobe,pingpong_0" {
		t.Errorf("parsed %+v", r)
	}
	for _, bad := range []string{
		"",
		strings.Replace(depthOut, "TIMER tsc 9.5\n", "", 1),                                                           // no timer
		strings.Replace(depthOut, "DEPTH local_iprobe profile 42.0 30.000 1\n", "", 1),                                // a mode missing
		strings.Replace(depthOut, "DEPTH local_iprobe none 12.0 0.000 1\n", "", 1),                                    // a mode missing
		strings.Replace(depthOut, "DEPTH pingpong_0 profile 580.0 80.000 2", "DEPTH pingpong_0 profile 580.0 x 2", 1), // not a number
		strings.Replace(depthOut, "EXPECT MPI_Send 240000", "EXPECT MPI_Send many", 1),
	} {
		if _, err := parseDepthRun(bad); err == nil {
			t.Errorf("no error for %q", bad)
		}
	}
}

// depthProfile is a profile whose paths of MPI_Comm_rank have the frame
// counts given, calls split evenly.
func depthProfile(calls int64, frames ...int) *profile.Profile {
	p := &profile.Profile{Funcs: []profile.Func{{Name: "MPI_Comm_rank", Calls: calls}}}
	for _, n := range frames {
		q := profile.Path{Func: "MPI_Comm_rank", Calls: calls / int64(len(frames))}
		for i := 0; i < n; i++ {
			name := "c"
			if i == 0 {
				name = "rep"
			}
			q.Frames = append(q.Frames, profile.Loc{Function: name})
		}
		p.Paths = append(p.Paths, q)
	}
	return p
}

func TestCheckDepthProfile(t *testing.T) {
	want := map[string]int64{"MPI_Comm_rank": 100}
	if err := checkDepthProfile(depthProfile(100), 1, want); err != nil {
		t.Errorf("depth 1, no paths: %v", err)
	}
	if err := checkDepthProfile(depthProfile(100, 8), 8, want); err != nil {
		t.Errorf("depth 8, one path of 8: %v", err)
	}
	if err := checkDepthProfile(depthProfile(100, 8, 8), 8, want); err != nil {
		t.Errorf("depth 8, two paths of 8: %v", err)
	}
	for _, c := range []struct {
		name  string
		p     *profile.Profile
		depth int
	}{
		{"calls", depthProfile(99), 1},
		{"a path at depth 1", depthProfile(100, 1), 1},
		{"a short path", depthProfile(100, 8, 5), 8},
		{"no path", depthProfile(100), 4},
	} {
		if err := checkDepthProfile(c.p, c.depth, want); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	p := depthProfile(100, 4)
	p.Paths[0].Frames[0].Function = "leaf"
	if err := checkDepthProfile(p, 4, want); err == nil {
		t.Error("a path not from rep: no error")
	}
}
