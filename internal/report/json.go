package report

import (
	"encoding/json"
	"math"
	"time"

	"github.com/mpiscope/mpiscope/profile"
)

// Schema identifies the JSON document layout; bump on incompatible changes.
const Schema = "mpiscope.report/1"

// The JSON document. See doc.go for the description of the fields.
type jsonDoc struct {
	Schema  string       `json:"schema"`
	Source  string       `json:"source"`
	Notes   []string     `json:"notes"`
	Meta    jsonMeta     `json:"meta"`
	Totals  jsonTotals   `json:"totals"`
	Ranks   []jsonRank   `json:"ranks"`
	Funcs   []jsonFunc   `json:"funcs"`
	Sites   []jsonSite   `json:"sites"`
	Calls   []jsonCall   `json:"callsites"`
	Hists   []jsonHist   `json:"hists"`
	Comms   []jsonComm   `json:"comms"`
	Peers   []jsonPeer   `json:"peers"`
	Regions []jsonRegion `json:"regions"`
	Events  []jsonEvent  `json:"events"`

	InProgress   []jsonBusy    `json:"in_progress,omitempty"`   // busy.go
	RecordingOff *jsonOff      `json:"recording_off,omitempty"` // busy.go
	WaitStates   []jsonWait    `json:"wait_states,omitempty"`   // wait.go
	Analysis     *jsonAnalysis `json:"analysis,omitempty"`      // analysis.go
	CallPaths    []jsonPath    `json:"call_paths,omitempty"`    // paths.go
	Compensation *jsonComp     `json:"compensation,omitempty"`  // compensate.go
}

type jsonSetting struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type jsonMeta struct {
	Command    []string      `json:"command"`
	NumRanks   int           `json:"num_ranks"`
	Hosts      []string      `json:"hosts"`
	MPILibrary string        `json:"mpi_library"`
	MPIVersion string        `json:"mpi_version"`
	Family     string        `json:"family"`
	Tool       string        `json:"tool"`
	Timer      string        `json:"timer"`
	StartNs    int64         `json:"start_ns"`
	StopNs     int64         `json:"stop_ns"`
	Start      string        `json:"start"` // RFC3339 UTC, "" if unknown
	Stop       string        `json:"stop"`
	DurationNs int64         `json:"duration_ns"`
	Settings   []jsonSetting `json:"settings"`
	Snapshot   int           `json:"snapshot"`
	Partial    bool          `json:"partial"`
}

type jsonTotals struct {
	Ranks      int     `json:"ranks"`
	AppNs      int64   `json:"app_ns"`
	MPINs      int64   `json:"mpi_ns"`
	Calls      int64   `json:"calls"`
	Dropped    int64   `json:"dropped"`
	MPIPct     float64 `json:"mpi_pct"`
	MPIPctMean float64 `json:"mpi_pct_mean"`
}

type jsonRank struct {
	Rank    int     `json:"rank"`
	Host    string  `json:"host"`
	PID     int     `json:"pid"`
	AppNs   int64   `json:"app_ns"`
	MPINs   int64   `json:"mpi_ns"`
	Calls   int64   `json:"calls"`
	Threads int     `json:"threads"`
	State   string  `json:"state"`
	Dropped int64   `json:"dropped"`
	MPIPct  float64 `json:"mpi_pct"`
}

type jsonSpread struct {
	N       int64   `json:"n"`
	Sum     float64 `json:"sum"`
	SumSq   float64 `json:"sum_sq"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	MinRank int     `json:"min_rank"`
	MaxRank int     `json:"max_rank"`
	Mean    float64 `json:"mean"`
	COV     float64 `json:"cov"`
}

type jsonFunc struct {
	Name      string     `json:"name"`
	Class     string     `json:"class"`
	Calls     int64      `json:"calls"`
	TimeNs    int64      `json:"time_ns"`
	MinCallNs int64      `json:"min_call_ns"`
	MaxCallNs int64      `json:"max_call_ns"`
	Bytes     int64      `json:"bytes"`
	RankTime  jsonSpread `json:"rank_time"`
	PctApp    float64    `json:"pct_app"`
	PctMPI    float64    `json:"pct_mpi"`
	MeanNs    float64    `json:"mean_ns"`
	COV       float64    `json:"cov"`
}

type jsonLoc struct {
	Module   string `json:"module"`
	Offset   uint64 `json:"offset"`
	Function string `json:"function"`
	File     string `json:"file"`
	Line     int    `json:"line"`
}

type jsonSite struct {
	ID       int        `json:"id"`
	Callsite int        `json:"callsite"` // ID of its row in callsites (and the text report)
	Func     string     `json:"func"`
	Loc      jsonLoc    `json:"loc"`
	Location string     `json:"location"`
	Region   string     `json:"region"`
	Calls    int64      `json:"calls"`
	TimeNs   int64      `json:"time_ns"`
	MinNs    int64      `json:"min_ns"`
	MaxNs    int64      `json:"max_ns"`
	Bytes    int64      `json:"bytes"`
	RankTime jsonSpread `json:"rank_time"`
	PctMPI   float64    `json:"pct_mpi"`
	MeanNs   float64    `json:"mean_ns"`
	COV      float64    `json:"cov"`
}

// jsonCall is a row of the callsites table: the sites of one MPI function
// in one region at one function, file and line, merged.
type jsonCall struct {
	ID       int     `json:"id"`
	Func     string  `json:"func"`
	Function string  `json:"function"`
	File     string  `json:"file"`
	Line     int     `json:"line"`
	Location string  `json:"location"`
	Region   string  `json:"region"`
	Calls    int64   `json:"calls"`
	TimeNs   int64   `json:"time_ns"`
	MinNs    int64   `json:"min_ns"`
	MaxNs    int64   `json:"max_ns"`
	Bytes    int64   `json:"bytes"`
	PctMPI   float64 `json:"pct_mpi"`
	MeanNs   float64 `json:"mean_ns"`
	Sites    []int   `json:"sites"` // IDs in sites
}

type jsonBin struct {
	Log2   int    `json:"log2"`
	Lo     uint64 `json:"lo"`
	Hi     uint64 `json:"hi"`
	Calls  int64  `json:"calls"`
	Bytes  int64  `json:"bytes"`
	TimeNs int64  `json:"time_ns"`
}

type jsonHist struct {
	Func string    `json:"func"`
	Bins []jsonBin `json:"bins"`
}

type jsonComm struct {
	Key     string  `json:"key"`
	Name    string  `json:"name"`
	Size    int     `json:"size"`
	Creator string  `json:"creator"`
	Members int64   `json:"members"`
	Calls   int64   `json:"calls"`
	TimeNs  int64   `json:"time_ns"`
	Bytes   int64   `json:"bytes"`
	PctMPI  float64 `json:"pct_mpi"`
}

type jsonPeer struct {
	Rank      int   `json:"rank"`
	Peer      int   `json:"peer"`
	SentMsgs  int64 `json:"sent_msgs"`
	SentBytes int64 `json:"sent_bytes"`
	RecvMsgs  int64 `json:"recv_msgs"`
	RecvBytes int64 `json:"recv_bytes"`
}

type jsonRegionFunc struct {
	Func         string  `json:"func"`
	Calls        int64   `json:"calls"`
	TimeNs       int64   `json:"time_ns"`
	Bytes        int64   `json:"bytes"`
	PctRegionMPI float64 `json:"pct_region_mpi"`
}

type jsonRegion struct {
	Path    string           `json:"path"`
	Visits  int64            `json:"visits"`
	WallNs  int64            `json:"wall_ns"`
	MPINs   int64            `json:"mpi_ns"`
	Ranks   int64            `json:"ranks"`
	RankMPI jsonSpread       `json:"rank_mpi"`
	MPIPct  float64          `json:"mpi_pct"`
	COV     float64          `json:"cov"`
	Funcs   []jsonRegionFunc `json:"funcs"`
}

type jsonEvent struct {
	Text  string `json:"text"`
	Count int64  `json:"count"`
	Ranks int64  `json:"ranks"`
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func rfc3339(ns int64) string {
	if ns == 0 {
		return ""
	}
	return time.Unix(0, ns).UTC().Format(time.RFC3339)
}

// finite maps NaN and infinities, which JSON cannot carry, to 0.
func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

func toSpread(s profile.Spread) jsonSpread {
	return jsonSpread{N: s.N, Sum: finite(s.Sum), SumSq: finite(s.SumSq), Min: finite(s.Min), Max: finite(s.Max),
		MinRank: s.MinRank, MaxRank: s.MaxRank, Mean: round6(spreadMean(s)), COV: round6(spreadCOV(s))}
}

// buildDoc derives the JSON document from p, keeping the profile's order.
func buildDoc(p *profile.Profile, o Options) jsonDoc {
	m := p.Meta
	tot := computeTotals(p)
	d := jsonDoc{
		Schema: Schema,
		Source: o.Source,
		Notes:  nonNil(append([]string(nil), o.Notes...)),
		Meta: jsonMeta{
			Command: nonNil(append([]string(nil), m.Command...)), NumRanks: m.NumRanks,
			Hosts: nonNil(append([]string(nil), m.Hosts...)), MPILibrary: m.MPILibrary, MPIVersion: m.MPIVersion,
			Family: m.Family, Tool: m.Tool, Timer: m.Timer, StartNs: m.StartNs, StopNs: m.StopNs,
			Start: rfc3339(m.StartNs), Stop: rfc3339(m.StopNs), Settings: []jsonSetting{},
			Snapshot: m.Snapshot, Partial: m.Partial,
		},
		Totals: jsonTotals{Ranks: len(p.Ranks), AppNs: tot.appNs, MPINs: tot.mpiNs, Calls: tot.calls,
			Dropped: tot.dropped, MPIPct: round6(pct(tot.mpiNs, tot.appNs)), MPIPctMean: round6(tot.mpiPctMean)},
		Ranks:   []jsonRank{},
		Funcs:   []jsonFunc{},
		Sites:   []jsonSite{},
		Calls:   []jsonCall{},
		Hists:   []jsonHist{},
		Comms:   []jsonComm{},
		Peers:   []jsonPeer{},
		Regions: []jsonRegion{},
		Events:  []jsonEvent{},
	}
	if m.StartNs != 0 && m.StopNs >= m.StartNs {
		d.Meta.DurationNs = m.StopNs - m.StartNs
	}
	for _, s := range m.Settings {
		d.Meta.Settings = append(d.Meta.Settings, jsonSetting{s.Name, s.Value})
	}
	for _, r := range p.Ranks {
		d.Ranks = append(d.Ranks, jsonRank{Rank: r.Rank, Host: r.Host, PID: r.PID, AppNs: r.AppNs, MPINs: r.MPINs,
			Calls: r.Calls, Threads: r.Threads, State: r.State, Dropped: r.Dropped, MPIPct: round6(pct(r.MPINs, r.AppNs))})
	}
	for _, f := range p.Funcs {
		d.Funcs = append(d.Funcs, jsonFunc{Name: f.Name, Class: f.Class, Calls: f.Calls, TimeNs: f.TimeNs,
			MinCallNs: f.MinCallNs, MaxCallNs: f.MaxCallNs, Bytes: f.Bytes, RankTime: toSpread(f.RankTime),
			PctApp: round6(pct(f.TimeNs, tot.appNs)), PctMPI: round6(pct(f.TimeNs, tot.mpiNs)),
			MeanNs: round6(perCall(f.TimeNs, f.Calls)), COV: round6(spreadCOV(f.RankTime))})
	}
	calls, callOf := callsites(p)
	for i, s := range p.Sites {
		l := s.Loc
		d.Sites = append(d.Sites, jsonSite{ID: i + 1, Callsite: callOf[i] + 1, Func: s.Func,
			Loc:      jsonLoc{Module: l.Module, Offset: l.Offset, Function: displayName(l.Function), File: l.File, Line: l.Line},
			Location: location(l, false), Region: s.Region, Calls: s.Calls, TimeNs: s.TimeNs, MinNs: s.MinNs,
			MaxNs: s.MaxNs, Bytes: s.Bytes, RankTime: toSpread(s.RankTime), PctMPI: round6(pct(s.TimeNs, tot.mpiNs)),
			MeanNs: round6(perCall(s.TimeNs, s.Calls)), COV: round6(spreadCOV(s.RankTime))})
	}
	for i, c := range calls {
		jc := jsonCall{ID: i + 1, Func: c.Func, Function: displayName(c.Loc.Function), File: c.Loc.File, Line: c.Loc.Line,
			Location: location(c.Loc, false), Region: c.Region, Calls: c.Calls, TimeNs: c.TimeNs, MinNs: c.MinNs,
			MaxNs: c.MaxNs, Bytes: c.Bytes, PctMPI: round6(pct(c.TimeNs, tot.mpiNs)), MeanNs: round6(perCall(c.TimeNs, c.Calls))}
		for _, s := range c.Sites {
			jc.Sites = append(jc.Sites, s+1)
		}
		d.Calls = append(d.Calls, jc)
	}
	for _, h := range p.Hists {
		jh := jsonHist{Func: h.Func, Bins: []jsonBin{}}
		for _, b := range h.Bins {
			lo, hi := sizeRange(b.Log2)
			jh.Bins = append(jh.Bins, jsonBin{Log2: b.Log2, Lo: lo, Hi: hi, Calls: b.Calls, Bytes: b.Bytes, TimeNs: b.TimeNs})
		}
		d.Hists = append(d.Hists, jh)
	}
	for _, c := range p.Comms {
		d.Comms = append(d.Comms, jsonComm{Key: c.Key, Name: c.Name, Size: c.Size, Creator: c.Creator, Members: c.Members,
			Calls: c.Calls, TimeNs: c.TimeNs, Bytes: c.Bytes, PctMPI: round6(pct(c.TimeNs, tot.mpiNs))})
	}
	for _, pr := range p.Peers {
		d.Peers = append(d.Peers, jsonPeer{Rank: pr.Rank, Peer: pr.Peer, SentMsgs: pr.SentMsgs,
			SentBytes: pr.SentBytes, RecvMsgs: pr.RecvMsgs, RecvBytes: pr.RecvBytes})
	}
	rf := regionFuncs(p)
	for _, r := range p.Regions {
		jr := jsonRegion{Path: r.Path, Visits: r.Visits, WallNs: r.WallNs, MPINs: r.MPINs, Ranks: r.Ranks,
			RankMPI: toSpread(r.RankMPI), MPIPct: round6(pct(r.MPINs, r.WallNs)), COV: round6(spreadCOV(r.RankMPI)),
			Funcs: []jsonRegionFunc{}}
		for _, f := range rf[r.Path] {
			jr.Funcs = append(jr.Funcs, jsonRegionFunc{Func: f.Func, Calls: f.Calls, TimeNs: f.TimeNs, Bytes: f.Bytes,
				PctRegionMPI: round6(pct(f.TimeNs, r.MPINs))})
		}
		d.Regions = append(d.Regions, jr)
	}
	for _, e := range p.Events {
		d.Events = append(d.Events, jsonEvent{Text: e.Text, Count: e.Count, Ranks: e.Ranks})
	}
	addBusyJSON(&d, p)
	d.WaitStates = waitsJSON(p)
	d.Analysis = analysisJSON(p)
	d.CallPaths = pathsJSON(p, tot)
	d.Compensation = compJSON(p)
	return d
}

func jsonBytes(p *profile.Profile, o Options) ([]byte, error) {
	b, err := json.MarshalIndent(buildDoc(p, o), "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
