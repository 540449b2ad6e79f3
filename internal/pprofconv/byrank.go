package pprofconv

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/google/pprof/profile"

	mps "github.com/mpiscope/mpiscope/profile"
)

// LabelComm is the string label of a by-rank sample's communicator: its
// key ("world", "Comm_split:2@0", ...), or NoComm for calls without one.
const (
	LabelComm = "comm"
	NoComm    = "(none)"
)

// ErrNoRankSplit is ConvertByRank's error for a profile without the
// per-rank split (written by an mpiscope older than 2026-11-26).
var ErrNoRankSplit = errors.New("the profile holds no per-rank split by function (written by an older mpiscope)")

// ConvertByRank returns p as a pprof profile with one sample per rank,
// MPI function and communicator (p.RankFuncs), labelled "rank" and "comm",
// so that `go tool pprof -tagfocus rank=^1$` shows rank 1's calls, time and
// bytes per function, and `-tagfocus comm=...` one communicator's. The
// stack is the MPI function alone: the profile keeps no split of the
// callsites by rank (Convert's samples have them, without rank labels).
func ConvertByRank(p *mps.Profile) (*profile.Profile, error) {
	if len(p.RankFuncs) == 0 {
		return nil, ErrNoRankSplit
	}
	out := Convert(&mps.Profile{Meta: p.Meta, Ranks: p.Ranks})
	b := builder{out: out, funcs: map[funcKey]*profile.Function{}, locs: map[locKey]*profile.Location{},
		maps: map[string]*profile.Mapping{}, leaves: map[string]*profile.Location{}}
	out.Comments = append(out.Comments, "samples per rank, MPI function and communicator (labels rank, comm)")
	block := max(p.RankFuncBlock, 1)
	if block > 1 {
		out.Comments = append(out.Comments, fmt.Sprintf("the job's %d ranks are in blocks of %d: a rank label names a block (\"first-last\")", p.Meta.NumRanks, block))
	}
	for _, f := range p.RankFuncs {
		rank := strconv.Itoa(f.Rank)
		if block > 1 {
			last := f.Rank + block - 1
			if p.Meta.NumRanks > 0 {
				last = min(last, p.Meta.NumRanks-1)
			}
			rank += "-" + strconv.Itoa(last)
		}
		comm := f.Comm
		if comm == "" {
			comm = NoComm
		}
		out.Sample = append(out.Sample, &profile.Sample{
			Location: []*profile.Location{b.leaf(f.Func)},
			Value:    []int64{f.Calls, f.TimeNs, f.Bytes},
			Label:    map[string][]string{LabelRank: {rank}, LabelComm: {comm}},
		})
	}
	return out, nil
}

// WriteByRank converts p with ConvertByRank and writes it to w.
func WriteByRank(w io.Writer, p *mps.Profile) error {
	out, err := ConvertByRank(p)
	if err != nil {
		return err
	}
	return write(w, out)
}
