// Package view is mpiscope view: a local web server that shows a job
// directory's profile in the browser. It serves the HTML report's page
// (internal/report) with a drill-down (function -> callsites -> ranks, rank
// -> partners), the timeline of a traced job read with level of detail
// (timeline.go: the browser gets at most a few thousand items per request,
// never the trace), and live update: while the job writes snapshots the page
// shows the newest and reloads itself when another appears, or when the
// final profile is written.
//
// It only reads the job directory. Clients that are not on the loopback
// interface, and requests for a host name other than localhost or a
// loopback address (another site's page rebinding its name to 127.0.0.1),
// are refused unless Options.AllowRemote.
//
// Endpoints (all GET):
//
//	/                  the page
//	/report.html       the HTML report as `mpiscope report --format html` writes it
//	/api/status        {version, kind, snapshot, modified_ns, age_s, trace, error}
//	/api/func?name=F   the callsites of function F, with their spread over ranks
//	/api/site?id=N     callsite N's addresses and their spread over ranks
//	/api/rank?rank=R   rank R's times and its point-to-point partners
//	/api/timeline?t0=&t1=&r0=&r1=&w=   the trace in [t0, t1) ns, ranks r0..r1,
//	                   for w pixels: calls and messages, or bins
//	/diff              what changed from this job to Options.Compare (mpiscope view A B)
package view

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io/fs"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mpiscope/mpiscope/internal/report"
	"github.com/mpiscope/mpiscope/profile"
)

//go:embed assets/view.js
var viewJS string

//go:embed assets/view.html
var viewHTML string

// Options configure a Server.
type Options struct {
	AllowRemote bool          // serve clients that are not on the loopback interface
	Poll        time.Duration // how often the page asks whether the data changed (default 2 s)
	// Compare is a second job directory (run B): /diff shows what changed
	// from this one (run A) to it.
	Compare string
}

// Server serves one job directory.
type Server struct {
	dir string
	opt Options
	now func() time.Time

	mu  sync.Mutex // guards cur
	cur *loaded
	b   *Server // Options.Compare, nil without

	tlMu  sync.Mutex // guards tl (held while a trace is read, apart from mu)
	tl    *timeline
	tlErr error  // why the trace could not be read
	tlK   string // the version tl (or tlErr) is for
}

// loaded is the profile for one version of the job directory.
type loaded struct {
	version string
	p       *profile.Profile
	info    *profile.LoadInfo
	page    []byte // the rendered page, made on first request
	report  []byte
}

// New returns a server for the job directory dir.
func New(dir string, opt Options) *Server {
	if opt.Poll <= 0 {
		opt.Poll = 2 * time.Second
	}
	s := &Server{dir: dir, opt: opt, now: time.Now}
	if opt.Compare != "" {
		s.b = &Server{dir: opt.Compare, opt: Options{Poll: opt.Poll}, now: time.Now}
	}
	return s
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("GET /report.html", s.reportFile)
	mux.HandleFunc("GET /api/status", s.status)
	mux.HandleFunc("GET /api/func", s.funcAPI)
	mux.HandleFunc("GET /api/site", s.siteAPI)
	mux.HandleFunc("GET /api/rank", s.rankAPI)
	mux.HandleFunc("GET /api/timeline", s.timelineAPI)
	mux.HandleFunc("GET /diff", s.diffPage)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.opt.AllowRemote && !isLocal(r.RemoteAddr) {
			http.Error(w, "mpiscope view: only local clients are served (start it with -allow-remote to change this)", http.StatusForbidden)
			return
		}
		if !s.opt.AllowRemote && !localHost(r.Host) {
			// A page of another site that rebinds its name to 127.0.0.1.
			http.Error(w, "mpiscope view: only requests for localhost or a loopback address are served", http.StatusForbidden)
			return
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-store")
		mux.ServeHTTP(w, r)
	})
}

// isLocal tells whether a request's remote address is a loopback address.
func isLocal(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// localHost tells whether a request's Host names this machine's loopback
// interface: localhost or a loopback address, with or without a port.
func localHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Status is what /api/status answers.
type Status struct {
	Version  string  `json:"version"`     // changes whenever the data to show changes
	Kind     string  `json:"kind"`        // "final", "ranks" (rank files of an unfinished job), "snapshot" or "none"
	Snapshot int     `json:"snapshot"`    // the newest snapshot's number (kind "snapshot")
	ModNs    int64   `json:"modified_ns"` // when the data was last written (Unix ns)
	AgeS     float64 `json:"age_s"`       // seconds since then
	Trace    bool    `json:"trace"`       // the job has a trace/ directory
	Error    string  `json:"error,omitempty"`
}

// scan looks at what the job directory holds, reading nothing but
// directory entries.
func (s *Server) scan() Status {
	st := Status{Kind: "none"}
	d, err := os.Stat(s.dir)
	if err != nil {
		st.Error = fmt.Sprintf("job directory %s: %v", s.dir, errors.Unwrap(err))
		if errors.Unwrap(err) == nil {
			st.Error = err.Error()
		}
		return st
	}
	if !d.IsDir() {
		st.Error = fmt.Sprintf("%s is not a directory", s.dir)
		return st
	}
	if t, err := os.Stat(filepath.Join(s.dir, "trace")); err == nil && t.IsDir() {
		st.Trace = true
	}
	if f, err := os.Stat(filepath.Join(s.dir, profile.FinalFile)); err == nil {
		st.Kind, st.ModNs = "final", f.ModTime().UnixNano()
		st.Version = fmt.Sprintf("final:%d:%d", f.Size(), st.ModNs)
	} else if n, mod := newestIn(filepath.Join(s.dir, profile.RanksDir)); n > 0 {
		st.Kind, st.ModNs = "ranks", mod
		st.Version = fmt.Sprintf("ranks:%d:%d", n, mod)
	} else if snap := latestSnapshot(s.dir); snap > 0 {
		n, mod := newestIn(filepath.Join(profile.SnapshotDir(s.dir, snap), profile.RanksDir))
		st.Kind, st.Snapshot, st.ModNs = "snapshot", snap, mod
		st.Version = fmt.Sprintf("snapshot-%d:%d:%d", snap, n, mod)
	} else {
		st.Error = fmt.Sprintf("%s holds no profile yet (no %s, no rank files, no snapshot)", s.dir, profile.FinalFile)
	}
	if st.ModNs > 0 {
		st.AgeS = max(0, s.now().Sub(time.Unix(0, st.ModNs)).Seconds())
	}
	return st
}

// newestIn counts the rank files under a ranks directory (ranks/<r/1000>/)
// and returns the newest modification time of its directories: a file
// written (to a temporary name, then renamed) changes its directory's. It
// reads names only, no file's metadata (100,000 ranks: 100,000 files).
func newestIn(dir string) (files int, mod int64) {
	subs, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0
	}
	for _, sub := range subs {
		if !sub.IsDir() {
			continue
		}
		p := filepath.Join(dir, sub.Name())
		if st, err := os.Stat(p); err == nil {
			mod = max(mod, st.ModTime().UnixNano())
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".mps") {
				files++
			}
		}
	}
	return files, mod
}

// latestSnapshot is the highest N of the directory's snapshot-N.
func latestSnapshot(dir string) int {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	best := 0
	for _, e := range ents {
		num, ok := strings.CutPrefix(e.Name(), profile.SnapPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		if n, err := strconv.Atoi(num); err == nil && n > best && strconv.Itoa(n) == num {
			best = n
		}
	}
	return best
}

// Load reads the job directory's current profile (and keeps it until the
// directory's data changes). A missing or empty directory is an error.
func (s *Server) Load() (*loaded, Status, error) {
	st := s.scan()
	if st.Error != "" {
		return nil, st, errors.New(st.Error)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil && s.cur.version == st.Version {
		return s.cur, st, nil
	}
	p, info, err := profile.Load(s.dir)
	if err != nil {
		return nil, st, err
	}
	s.cur = &loaded{version: st.Version, p: p, info: info}
	return s.cur, st, nil
}

// fail answers an error as JSON for the API, as text for pages.
func fail(w http.ResponseWriter, r *http.Request, code int, msg string) {
	if strings.HasPrefix(r.URL.Path, "/api/") {
		writeJSON(w, code, map[string]string{"error": msg})
		return
	}
	http.Error(w, "mpiscope view: "+msg, code)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"error":"encoding the answer failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

// loadFor loads the profile for a request, answering the error itself.
func (s *Server) loadFor(w http.ResponseWriter, r *http.Request) (*loaded, Status, bool) {
	l, st, err := s.Load()
	if err != nil {
		code := http.StatusInternalServerError
		if st.Error != "" || errors.Is(err, fs.ErrNotExist) {
			code = http.StatusNotFound
		}
		fail(w, r, code, err.Error())
		return nil, st, false
	}
	return l, st, true
}

func (s *Server) notes(l *loaded) []string {
	var notes []string
	if i := l.info; i != nil {
		if sum := i.Summary(); sum != "" && (i.Partial || len(i.Missing) > 0 || i.Source == "snapshot") {
			notes = append(notes, sum)
		}
	}
	return notes
}

// Warm reads the job directory's data and makes its page, so that the
// first request is answered at once (mpiscope view calls it before it
// prints the URL); a job's trace is then read in the background for the
// timeline.
func (s *Server) Warm() error {
	l, st, err := s.Load()
	if err != nil {
		return err
	}
	if st.Trace {
		go s.timelineFor() // read the trace while the user looks at the page
	}
	_, err = s.pageOf(l, st)
	return err
}

// pageOf returns l's page, made on first use.
func (s *Server) pageOf(l *loaded, st Status) ([]byte, error) {
	s.mu.Lock()
	page := l.page
	s.mu.Unlock()
	if page != nil {
		return page, nil
	}
	var b bytes.Buffer
	v := &report.HTMLView{Connect: true, Top: s.statusBar(st), Bottom: s.bottom(st),
		Script: fmt.Sprintf("var mpiscopeView = {version: %q, poll: %d};\n", st.Version, s.opt.Poll.Milliseconds()) + viewJS}
	if err := report.WriteHTML(&b, l.p, report.Options{Source: s.dir, Notes: s.notes(l)}, v); err != nil {
		return nil, err
	}
	s.mu.Lock()
	l.page = b.Bytes()
	s.mu.Unlock()
	return b.Bytes(), nil
}

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	l, st, ok := s.loadFor(w, r)
	if !ok {
		return
	}
	page, err := s.pageOf(l, st)
	if err != nil {
		fail(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(page)
}

// statusBar is the line that says what the page shows and how old it is.
func (s *Server) statusBar(st Status) string {
	what := "the final profile"
	switch st.Kind {
	case "ranks":
		what = "the rank files (the job has not finished, or did not reach MPI_Finalize)"
	case "snapshot":
		what = fmt.Sprintf("snapshot %d, the newest (the job is running or did not finish)", st.Snapshot)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<div class="status" id="live">Showing %s, written <span id="age" data-mod="%d"></span>. `, what, st.ModNs/1e6)
	b.WriteString(`<span id="live-state">The page updates itself when the job writes more.</span>`)
	if s.opt.Compare != "" {
		b.WriteString(` <a href="/diff" id="diff-link">What changed in ` + htmlEsc(s.opt.Compare) + `</a>.`)
	}
	b.WriteString(` <a href="/report.html" download="report.html">Save as HTML report</a></div>` + "\n")
	return b.String()
}

func (s *Server) bottom(st Status) string {
	out := viewHTML
	if !st.Trace {
		out = strings.Replace(out, `<!--timeline-->`, `<section id="timeline"><h2>Timeline</h2><p>This job has no trace (run it with MPISCOPE_TRACE=1 for a timeline).</p></section>`, 1)
	} else {
		out = strings.Replace(out, `<!--timeline-->`, `<section id="timeline"><h2>Timeline</h2><div class="plot">`+
			`<button id="tl-in">zoom in</button> <button id="tl-out">zoom out</button> <button id="tl-reset">whole run</button> `+
			`<span id="tl-info" class="hint">wheel: zoom, drag: pan</span><div id="plot-timeline"></div></div></section>`, 1)
	}
	return out
}

func htmlEsc(s string) string { return html.EscapeString(strings.ToValidUTF8(s, "\uFFFD")) }

func (s *Server) reportFile(w http.ResponseWriter, r *http.Request) {
	l, _, ok := s.loadFor(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	rep := l.report
	s.mu.Unlock()
	if rep == nil {
		var b bytes.Buffer
		if err := report.WriteHTML(&b, l.p, report.Options{Source: s.dir, Notes: s.notes(l)}, nil); err != nil {
			fail(w, r, http.StatusInternalServerError, err.Error())
			return
		}
		rep = b.Bytes()
		s.mu.Lock()
		l.report = rep
		s.mu.Unlock()
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(rep)
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	st := s.scan()
	code := http.StatusOK
	if st.Error != "" {
		code = http.StatusNotFound
	}
	writeJSON(w, code, st)
}

// spreadJSON is a quantity's spread over ranks.
type spreadJSON struct {
	Ranks   int64   `json:"ranks"`
	Min     float64 `json:"min"`
	MinRank int     `json:"min_rank"`
	Mean    float64 `json:"mean"`
	Max     float64 `json:"max"`
	MaxRank int     `json:"max_rank"`
}

func spread(s profile.Spread) spreadJSON {
	m := 0.0
	if s.N > 0 {
		m = s.Sum / float64(s.N)
	}
	return spreadJSON{Ranks: s.N, Min: s.Min, MinRank: s.MinRank, Mean: m, Max: s.Max, MaxRank: s.MaxRank}
}

// siteJSON is one address of a callsite.
type siteJSON struct {
	Callsite int        `json:"callsite"` // the report's callsite ID
	Func     string     `json:"func"`
	Location string     `json:"location"`
	Region   string     `json:"region"`
	Calls    int64      `json:"calls"`
	TimeNs   int64      `json:"time_ns"`
	Bytes    int64      `json:"bytes"`
	Time     spreadJSON `json:"rank_time"`
}

// sites returns the profile's sites with their callsite IDs as the report
// numbers them (same function, region, function name, file and line: one
// ID; report.callsites).
func sites(p *profile.Profile) []siteJSON {
	type key struct {
		fn, region, function, file string
		line                       int
	}
	ids := map[key]int{}
	n := 0
	out := make([]siteJSON, 0, len(p.Sites))
	for _, st := range p.Sites {
		id := 0
		if st.Loc.File != "" && st.Loc.Line > 0 {
			k := key{st.Func, st.Region, report.DisplayName(st.Loc.Function), st.Loc.File, st.Loc.Line}
			if i, ok := ids[k]; ok {
				id = i
			} else {
				n++
				id, ids[k] = n, n
			}
		} else {
			n++
			id = n
		}
		out = append(out, siteJSON{Callsite: id, Func: st.Func, Location: report.Location(st.Loc), Region: st.Region,
			Calls: st.Calls, TimeNs: st.TimeNs, Bytes: st.Bytes, Time: spread(st.RankTime)})
	}
	return out
}

func (s *Server) funcAPI(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	if name == "" {
		fail(w, r, http.StatusBadRequest, "want ?name=<MPI function>")
		return
	}
	l, _, ok := s.loadFor(w, r)
	if !ok {
		return
	}
	i, found := slices.BinarySearchFunc(l.p.Funcs, name, func(f profile.Func, n string) int { return strings.Compare(f.Name, n) })
	if !found {
		fail(w, r, http.StatusNotFound, fmt.Sprintf("no function %q in this profile", name))
		return
	}
	f := l.p.Funcs[i]
	var out []siteJSON
	for _, st := range sites(l.p) {
		if st.Func == name {
			out = append(out, st)
		}
	}
	slices.SortStableFunc(out, func(a, b siteJSON) int { return cmp.Compare(b.TimeNs, a.TimeNs) })
	writeJSON(w, http.StatusOK, map[string]any{"func": f.Name, "calls": f.Calls, "time_ns": f.TimeNs, "bytes": f.Bytes,
		"rank_time": spread(f.RankTime), "sites": nonNil(out)})
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func (s *Server) siteAPI(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.Atoi(r.URL.Query().Get("id"))
	if err != nil || id < 1 {
		fail(w, r, http.StatusBadRequest, "want ?id=<callsite ID, from 1>")
		return
	}
	l, _, ok := s.loadFor(w, r)
	if !ok {
		return
	}
	var out []siteJSON
	for _, st := range sites(l.p) {
		if st.Callsite == id {
			out = append(out, st)
		}
	}
	if len(out) == 0 {
		fail(w, r, http.StatusNotFound, fmt.Sprintf("no callsite %d in this profile", id))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"callsite": id, "sites": out})
}

// partnerJSON is a rank's traffic with one other rank.
type partnerJSON struct {
	Peer      int   `json:"peer"`
	SentMsgs  int64 `json:"sent_msgs"`
	SentBytes int64 `json:"sent_bytes"`
	RecvMsgs  int64 `json:"recv_msgs"`
	RecvBytes int64 `json:"recv_bytes"`
}

// rankFuncJSON is one of a rank's functions on one communicator.
type rankFuncJSON struct {
	Func   string `json:"func"`
	Comm   string `json:"comm"`
	Calls  int64  `json:"calls"`
	TimeNs int64  `json:"time_ns"`
	Bytes  int64  `json:"bytes"`
}

// commPartnerJSON is a rank's traffic with a partner on a communicator
// other than MPI_COMM_WORLD.
type commPartnerJSON struct {
	Comm string `json:"comm"`
	partnerJSON
}

func (s *Server) rankAPI(w http.ResponseWriter, r *http.Request) {
	rank, err := strconv.Atoi(r.URL.Query().Get("rank"))
	if err != nil || rank < 0 {
		fail(w, r, http.StatusBadRequest, "want ?rank=<rank, from 0>")
		return
	}
	l, _, ok := s.loadFor(w, r)
	if !ok {
		return
	}
	i, found := slices.BinarySearchFunc(l.p.Ranks, rank, func(x profile.Rank, n int) int { return cmp.Compare(x.Rank, n) })
	if !found {
		fail(w, r, http.StatusNotFound, fmt.Sprintf("no rank %d in this profile", rank))
		return
	}
	rk := l.p.Ranks[i]
	lo, _ := slices.BinarySearchFunc(l.p.Peers, rank, func(x profile.Peer, n int) int { return cmp.Compare(x.Rank, n) })
	var out []partnerJSON
	for _, pr := range l.p.Peers[lo:] {
		if pr.Rank != rank {
			break
		}
		out = append(out, partnerJSON{Peer: pr.Peer, SentMsgs: pr.SentMsgs, SentBytes: pr.SentBytes, RecvMsgs: pr.RecvMsgs, RecvBytes: pr.RecvBytes})
	}
	slices.SortStableFunc(out, func(a, b partnerJSON) int {
		return cmp.Compare(b.SentBytes+b.RecvBytes, a.SentBytes+a.RecvBytes)
	})
	// The rank's own split (profiles since 2026-11-26): its calls per
	// function and communicator, its traffic per communicator but WORLD.
	funcs := []rankFuncJSON{}
	for _, f := range l.p.RankFuncsOf(rank) {
		funcs = append(funcs, rankFuncJSON{Func: f.Func, Comm: f.Comm, Calls: f.Calls, TimeNs: f.TimeNs, Bytes: f.Bytes})
	}
	slices.SortStableFunc(funcs, func(a, b rankFuncJSON) int { return cmp.Compare(b.TimeNs, a.TimeNs) })
	comms := []commPartnerJSON{}
	cr := rank
	if b := l.p.CommPeerBlock; b > 1 {
		cr = rank / b * b // the rank's block
	}
	lo, _ = slices.BinarySearchFunc(l.p.CommPeers, cr, func(x profile.CommPeer, n int) int { return cmp.Compare(x.Rank, n) })
	for _, c := range l.p.CommPeers[lo:] {
		if c.Rank != cr {
			break
		}
		comms = append(comms, commPartnerJSON{Comm: c.Comm, partnerJSON: partnerJSON{Peer: c.Peer, SentMsgs: c.SentMsgs, SentBytes: c.SentBytes,
			RecvMsgs: c.RecvMsgs, RecvBytes: c.RecvBytes}})
	}
	app := rk.AppNs - rk.OffNs
	ans := map[string]any{"rank": rk.Rank, "host": rk.Host, "app_ns": app, "mpi_ns": rk.MPINs,
		"calls": rk.Calls, "state": rk.State, "partners": nonNil(out), "funcs": funcs, "comm_partners": comms}
	if a := rankAnalysis(l.p.Analysis, rank); a != nil {
		ans["analysis"] = a
	}
	writeJSON(w, http.StatusOK, ans)
}

// rankAnalysisJSON is a rank's part of the trace analysis made in the job:
// its time on the critical path, its waiting per pattern and its rows.
type rankAnalysisJSON struct {
	PathS    float64           `json:"path_s"`
	PathPct  float64           `json:"path_pct"`
	Patterns []rankPatternJSON `json:"patterns"`
	Rows     []rankWaitJSON    `json:"rows"`
}

type rankPatternJSON struct {
	Pattern string  `json:"pattern"`
	Seconds float64 `json:"seconds"`
}

type rankWaitJSON struct {
	Pattern   string  `json:"pattern"`
	Func      string  `json:"func"`
	Callsite  string  `json:"callsite"`
	Comm      string  `json:"comm"`
	Seconds   float64 `json:"seconds"`
	Instances int64   `json:"instances"`
}

// rankAnalysis is rank's part of a, nil without analysis or when the rank
// was not analyzed.
func rankAnalysis(a *profile.Analysis, rank int) *rankAnalysisJSON {
	if a == nil {
		return nil
	}
	i := slices.Index(a.Ranks, rank)
	if i < 0 {
		return nil
	}
	at := func(v []float64) float64 {
		if i < len(v) && !math.IsNaN(v[i]) && !math.IsInf(v[i], 0) {
			return v[i]
		}
		return 0
	}
	out := &rankAnalysisJSON{PathS: at(a.Path.ByRank), Patterns: []rankPatternJSON{}, Rows: []rankWaitJSON{}}
	if a.Path.Seconds > 0 {
		out.PathPct = 100 * out.PathS / a.Path.Seconds
	}
	for _, p := range a.Patterns {
		if v := at(p.ByRank); v > 0 {
			out.Patterns = append(out.Patterns, rankPatternJSON{Pattern: p.Pattern, Seconds: v})
		}
	}
	for _, r := range a.Rows {
		if r.Rank == rank && len(out.Rows) < 100 {
			out.Rows = append(out.Rows, rankWaitJSON{Pattern: r.Pattern, Func: r.Func, Callsite: r.Callsite, Comm: r.Comm, Seconds: r.Seconds, Instances: r.Instances})
		}
	}
	return out
}

// diffPage shows what changed from this job directory (run A) to
// Options.Compare (run B).
func (s *Server) diffPage(w http.ResponseWriter, r *http.Request) {
	if s.b == nil {
		fail(w, r, http.StatusNotFound, "no second job directory to compare with (mpiscope view A B)")
		return
	}
	la, _, ok := s.loadFor(w, r)
	if !ok {
		return
	}
	lb, _, err := s.b.Load()
	if err != nil {
		fail(w, r, http.StatusNotFound, "run B: "+err.Error())
		return
	}
	top := `<div class="status" id="live">Run A: ` + htmlEsc(s.dir) + `, run B: ` + htmlEsc(s.opt.Compare) +
		`. <a href="/">Run A's profile</a></div>` + "\n"
	var b bytes.Buffer
	o := report.DiffOptions{SourceA: s.dir, SourceB: s.opt.Compare, NotesA: s.notes(la), NotesB: s.b.notes(lb)}
	if err := report.WriteDiffHTML(&b, la.p, lb.p, o, &report.HTMLView{Top: top, Connect: true}); err != nil {
		fail(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}
