package view

import (
	"encoding/json"
	"io/fs"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mpiscope/mpiscope/profile"
)

// job is a 4-rank profile: rank r spends (r+1) s of 10 s in MPI; MPI_Send
// 1000 calls, 8000 bytes at one callsite; each rank sends 100 messages of
// 8 bytes to the next.
func job(snapshot int, sendCalls int64) *profile.Profile {
	p := &profile.Profile{Meta: profile.Meta{NumRanks: 4, Command: []string{"./app"}, Snapshot: snapshot}}
	var rt profile.Spread
	for r := range 4 {
		p.Ranks = append(p.Ranks, profile.Rank{Rank: r, Host: "n0", AppNs: 10e9, MPINs: int64(r+1) * 1e9, Calls: sendCalls / 4, State: "final"})
		p.Peers = append(p.Peers, profile.Peer{Rank: r, Peer: (r + 1) % 4, SentMsgs: 100, SentBytes: 800},
			profile.Peer{Rank: r, Peer: (r + 3) % 4, RecvMsgs: 100, RecvBytes: 800})
		rt.Add(profile.SpreadOf(r, float64(r+1)*1e9))
	}
	p.Funcs = []profile.Func{{Name: "MPI_Send", Class: "p2p", Calls: sendCalls, TimeNs: 10e9, Bytes: 8 * sendCalls, RankTime: rt}}
	p.Sites = []profile.Site{{Func: "MPI_Send", Loc: profile.Loc{Module: "/app", Offset: 0x40, Function: "main", File: "/src/app.c", Line: 7},
		Calls: sendCalls, TimeNs: 10e9, Bytes: 8 * sendCalls, RankTime: rt}}
	p.Sort()
	return p
}

func writeFinal(t *testing.T, dir string, p *profile.Profile) {
	t.Helper()
	if err := profile.WriteFile(filepath.Join(dir, profile.FinalFile), p); err != nil {
		t.Fatal(err)
	}
}

// writeSnapshot writes snapshot n as the ranks write it: one file per rank.
func writeSnapshot(t *testing.T, dir string, n int, p *profile.Profile) {
	t.Helper()
	for _, r := range p.Ranks {
		q := *p
		q.Ranks = []profile.Rank{r}
		q.Meta.Snapshot = n
		var peers []profile.Peer
		for _, pr := range p.Peers {
			if pr.Rank == r.Rank {
				peers = append(peers, pr)
			}
		}
		q.Peers = peers
		if r.Rank != 0 {
			q.Funcs, q.Sites = nil, nil
		}
		path := profile.RankFile(profile.SnapshotDir(dir, n), r.Rank)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := profile.WriteFile(path, &q); err != nil {
			t.Fatal(err)
		}
	}
}

type answer struct {
	code int
	body string
	loc  string // Location of a redirect
}

func get(t *testing.T, h http.Handler, path string) answer {
	t.Helper()
	req := httptest.NewRequest("GET", "http://127.0.0.1"+path, nil)
	req.RemoteAddr = "127.0.0.1:50000"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return answer{rec.Code, rec.Body.String(), rec.Header().Get("Location")}
}

func decode[T any](t *testing.T, a answer) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(a.body), &v); err != nil {
		t.Fatalf("answer %d %q: %v", a.code, a.body, err)
	}
	return v
}

func TestEndpoints(t *testing.T) {
	dir := t.TempDir()
	writeFinal(t, dir, job(0, 1000))
	h := New(dir, Options{}).Handler()

	page := get(t, h, "/")
	if page.code != 200 || !strings.Contains(page.body, `id="t-funcs"`) || !strings.Contains(page.body, "mpiscopeView") ||
		!strings.Contains(page.body, "connect-src 'self'") || !strings.Contains(page.body, "Showing the final profile") ||
		!strings.Contains(page.body, `<td class="n" data-v="1000">1000</td>`) || !strings.Contains(page.body, "no trace") {
		t.Errorf("page: %d\n%.2000s", page.code, page.body)
	}
	rep := get(t, h, "/report.html")
	if rep.code != 200 || !strings.Contains(rep.body, "connect-src 'none'") || strings.Contains(rep.body, "mpiscopeView") {
		t.Errorf("report.html: %d", rep.code)
	}
	st := decode[Status](t, get(t, h, "/api/status"))
	if st.Kind != "final" || st.Error != "" || st.Trace || st.Version == "" {
		t.Errorf("status %+v", st)
	}
	type site struct {
		Callsite int    `json:"callsite"`
		Location string `json:"location"`
		Calls    int64  `json:"calls"`
		Bytes    int64  `json:"bytes"`
		Time     struct {
			Ranks   int64   `json:"ranks"`
			Min     float64 `json:"min"`
			MinRank int     `json:"min_rank"`
			Max     float64 `json:"max"`
			MaxRank int     `json:"max_rank"`
		} `json:"rank_time"`
	}
	fn := decode[struct {
		Calls int64  `json:"calls"`
		Bytes int64  `json:"bytes"`
		Sites []site `json:"sites"`
	}](t, get(t, h, "/api/func?name=MPI_Send"))
	if fn.Calls != 1000 || fn.Bytes != 8000 || len(fn.Sites) != 1 || fn.Sites[0].Callsite != 1 || fn.Sites[0].Location != "main at app.c:7" {
		t.Errorf("func: %+v", fn)
	}
	s := decode[struct {
		Sites []site `json:"sites"`
	}](t, get(t, h, "/api/site?id=1"))
	if len(s.Sites) != 1 || s.Sites[0].Time.Ranks != 4 || s.Sites[0].Time.MinRank != 0 || s.Sites[0].Time.Max != 4e9 || s.Sites[0].Time.MaxRank != 3 {
		t.Errorf("site: %+v", s)
	}
	rk := decode[struct {
		Rank     int           `json:"rank"`
		MPINs    int64         `json:"mpi_ns"`
		Partners []partnerJSON `json:"partners"`
	}](t, get(t, h, "/api/rank?rank=2"))
	want := []partnerJSON{{Peer: 1, RecvMsgs: 100, RecvBytes: 800}, {Peer: 3, SentMsgs: 100, SentBytes: 800}}
	if rk.Rank != 2 || rk.MPINs != 3e9 || len(rk.Partners) != 2 || rk.Partners[0] != want[0] || rk.Partners[1] != want[1] {
		t.Errorf("rank: %+v", rk)
	}
	if a := get(t, h, "/api/timeline"); a.code != 404 || !strings.Contains(a.body, "no trace") {
		t.Errorf("timeline without a trace: %d %s", a.code, a.body)
	}
}

func TestBadRequests(t *testing.T) {
	dir := t.TempDir()
	writeFinal(t, dir, job(0, 1000))
	h := New(dir, Options{}).Handler()
	for path, code := range map[string]int{
		"/nope":                     404,
		"/profile.mps":              404,
		"/api/func":                 400,
		"/api/func?name=MPI_Nope":   404,
		"/api/site?id=x":            400,
		"/api/site?id=0":            400,
		"/api/site?id=99":           404,
		"/api/rank?rank=-1":         400,
		"/api/rank?rank=a":          400,
		"/api/rank?rank=77":         404,
		"/api/nope":                 404,
		"/../profile.mps":           404,
		"/%2e%2e/%2e%2e/etc/passwd": 404,
		"/api/../profile.mps":       404,
		"/..%2fprofile.mps":         404,
	} {
		a := get(t, h, path)
		if a.code == 301 || a.code == 307 || a.code == 308 { // the mux cleans paths: follow once
			a = get(t, h, strings.TrimPrefix(a.loc, "http://127.0.0.1"))
		}
		if a.code != code || strings.Contains(a.body, "root:") || strings.Contains(a.body, "MPIS") {
			t.Errorf("GET %s: %d %.200q, want %d", path, a.code, a.body, code)
		}
		if strings.HasPrefix(path, "/api/func") || strings.HasPrefix(path, "/api/site") || strings.HasPrefix(path, "/api/rank?") {
			if e := decode[map[string]string](t, a); e["error"] == "" {
				t.Errorf("GET %s: no error message", path)
			}
		}
	}
	req := httptest.NewRequest("POST", "http://127.0.0.1/", strings.NewReader("x"))
	req.RemoteAddr = "127.0.0.1:1"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d", rec.Code)
	}
}

// TestVanished: a job directory removed while the view runs gives errors
// that say so, and no panic.
func TestVanished(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "job")
	os.Mkdir(dir, 0o755)
	writeFinal(t, dir, job(0, 1000))
	h := New(dir, Options{}).Handler()
	if a := get(t, h, "/"); a.code != 200 {
		t.Fatalf("page: %d", a.code)
	}
	os.RemoveAll(dir)
	for _, path := range []string{"/", "/report.html", "/api/status", "/api/func?name=MPI_Send", "/api/rank?rank=0", "/api/site?id=1", "/api/timeline"} {
		a := get(t, h, path)
		if a.code != 404 || !strings.Contains(a.body, "no such file or directory") {
			t.Errorf("GET %s after the directory went: %d %q", path, a.code, a.body)
		}
	}
	os.Mkdir(dir, 0o755) // back, empty
	if a := get(t, h, "/api/status"); a.code != 404 || !strings.Contains(a.body, "holds no profile yet") {
		t.Errorf("empty directory: %d %q", a.code, a.body)
	}
}

func TestRemoteRefused(t *testing.T) {
	dir := t.TempDir()
	writeFinal(t, dir, job(0, 1000))
	for _, c := range []struct {
		addr, host string
		remote     bool
		code       int
	}{
		{"203.0.113.5:4000", "127.0.0.1", false, 403}, {"10.0.0.1:80", "127.0.0.1", false, 403},
		{"[2001:db8::1]:5", "127.0.0.1", false, 403}, {"bogus", "127.0.0.1", false, 403},
		{"127.0.0.1:9", "127.0.0.1:8080", false, 200}, {"[::1]:9", "[::1]:80", false, 200}, {"127.0.0.2:9", "localhost:1", false, 200},
		{"203.0.113.5:4000", "example.org", true, 200},
		{"127.0.0.1:9", "evil.example:8080", false, 403}, {"127.0.0.1:9", "", false, 403}, {"127.0.0.1:9", "10.0.0.1", false, 403},
	} {
		req := httptest.NewRequest("GET", "http://127.0.0.1/api/status", nil)
		req.Host = c.host
		req.RemoteAddr = c.addr
		rec := httptest.NewRecorder()
		New(dir, Options{AllowRemote: c.remote}).Handler().ServeHTTP(rec, req)
		if rec.Code != c.code {
			t.Errorf("client %s, host %q (allow remote %v): %d, want %d", c.addr, c.host, c.remote, rec.Code, c.code)
		}
	}
	// Through a real socket on the loopback interface.
	srv := httptest.NewServer(New(dir, Options{}).Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/status")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("loopback client: %v %v", resp, err)
	}
	resp.Body.Close()
}

// tree lists the files under dir with their sizes and times.
func tree(t *testing.T, dir string) string {
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, _ := d.Info()
		b.WriteString(p + " " + info.Mode().String() + " " + info.ModTime().String())
		if !d.IsDir() {
			b.WriteString(" " + string(rune(info.Size())))
		}
		b.WriteByte('\n')
		return nil
	})
	return b.String()
}

// TestLive: the newest snapshot, then a newer one, then the final profile;
// the view reads the directory and never writes into it.
func TestLive(t *testing.T) {
	dir := t.TempDir()
	writeSnapshot(t, dir, 1, job(1, 400))
	s := New(dir, Options{})
	now := time.Now()
	s.now = func() time.Time { return now }
	h := s.Handler()
	st := decode[Status](t, get(t, h, "/api/status"))
	if st.Kind != "snapshot" || st.Snapshot != 1 || st.AgeS < 0 || st.AgeS > 60 {
		t.Fatalf("status %+v", st)
	}
	before := tree(t, dir)
	page := get(t, h, "/")
	if !strings.Contains(page.body, "snapshot 1, the newest") || !strings.Contains(page.body, `data-v="400">400</td>`) {
		t.Errorf("snapshot 1 page:\n%.3000s", page.body)
	}
	if after := tree(t, dir); after != before {
		t.Errorf("the view changed the job directory:\n%s\nthen\n%s", before, after)
	}

	writeSnapshot(t, dir, 2, job(2, 800))
	st2 := decode[Status](t, get(t, h, "/api/status"))
	if st2.Kind != "snapshot" || st2.Snapshot != 2 || st2.Version == st.Version {
		t.Errorf("after snapshot 2: %+v (before %+v)", st2, st)
	}
	if p := get(t, h, "/"); !strings.Contains(p.body, "snapshot 2, the newest") || !strings.Contains(p.body, `data-v="800">800</td>`) {
		t.Errorf("snapshot 2 page lacks its numbers")
	}
	if f := decode[struct {
		Calls int64 `json:"calls"`
	}](t, get(t, h, "/api/func?name=MPI_Send")); f.Calls != 800 {
		t.Errorf("func after snapshot 2: %d calls, want 800", f.Calls)
	}

	writeFinal(t, dir, job(0, 1000))
	st3 := decode[Status](t, get(t, h, "/api/status"))
	if st3.Kind != "final" || st3.Version == st2.Version {
		t.Errorf("after the final profile: %+v", st3)
	}
	if p := get(t, h, "/"); !strings.Contains(p.body, "Showing the final profile") || !strings.Contains(p.body, `data-v="1000">1000</td>`) {
		t.Errorf("final page lacks its numbers")
	}
	before = tree(t, dir)
	for _, path := range []string{"/", "/report.html", "/api/status", "/api/func?name=MPI_Send", "/api/site?id=1", "/api/rank?rank=1", "/api/timeline"} {
		get(t, h, path)
	}
	if after := tree(t, dir); after != before {
		t.Errorf("the view changed the job directory")
	}
}

// pinJob is a job directory holding rank 0's trace of
// internal/trace/testdata/pin.c.
func pinJob(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("..", "trace", "testdata", "pin-r0.mst"))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "trace", "0"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, "trace", "0", "r0.mst"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	writeFinal(t, dir, job(0, 1000))
	return dir
}

func TestTimeline(t *testing.T) {
	dir := pinJob(t)
	s0 := New(dir, Options{})
	if err := s0.Warm(); err != nil { // also starts reading the trace
		t.Fatal(err)
	}
	h := s0.Handler()
	if st := decode[Status](t, get(t, h, "/api/status")); !st.Trace {
		t.Fatalf("no trace seen: %+v", st)
	}
	if p := get(t, h, "/"); !strings.Contains(p.body, `id="plot-timeline"`) {
		t.Errorf("page has no timeline")
	}
	w := decode[Window](t, get(t, h, "/api/timeline?w=800"))
	if w.Mode != "calls" || len(w.Lanes) != 1 || w.Lanes[0] != [2]int{0, 0} || w.End <= 0 || w.Total != len(w.Calls) {
		t.Fatalf("window: mode %s, lanes %v, end %d, %d of %d calls", w.Mode, w.Lanes, w.End, len(w.Calls), w.Total)
	}
	count := map[string]int{}
	var busy int64
	for _, c := range w.Calls {
		count[w.Funcs[c[3]]]++
		busy += c[2] - c[1]
	}
	// pin.c, rank 0.
	for fn, n := range map[string]int{"MPI_Send": 1, "MPI_Irecv": 4, "MPI_Wait": 5, "MPI_Allreduce": 1, "MPI_Barrier": 3, "MPI_Start": 1} {
		if count[fn] != n {
			t.Errorf("%s: %d calls on the timeline, want %d (all: %v)", fn, count[fn], n, count)
		}
	}
	// One pixel column over the whole run: the share of time in MPI.
	s := New(dir, Options{})
	tl, err := s.timelineFor()
	if err != nil {
		t.Fatal(err)
	}
	tl.detail = 3
	b := tl.window(0, w.End+1, 0, 0, 1)
	if b.Mode != "bins" || len(b.Bins) != 1 || math.Abs(b.Bins[0][2]-float64(busy)/float64(w.End+1)) > 1e-9 {
		t.Errorf("one bin: %+v, want share %g", b, float64(busy)/float64(w.End+1))
	}
	// A window of the first half holds the calls that start in it.
	half := decode[Window](t, get(t, h, "/api/timeline?t0=0&t1="+itoa(w.End/2)))
	if half.Total >= w.Total || half.T1 != w.End/2 {
		t.Errorf("half window: %d calls of %d", half.Total, w.Total)
	}
	for path, code := range map[string]int{"/api/timeline?t0=5&t1=1": 400, "/api/timeline?w=0": 400, "/api/timeline?r0=3&r1=1": 400, "/api/timeline?t0=x": 400} {
		if a := get(t, h, path); a.code != code {
			t.Errorf("GET %s: %d, want %d", path, a.code, code)
		}
	}
	if a := get(t, h, "/api/timeline?r0=5&r1=9"); a.code != 200 || len(decode[Window](t, a).Calls) != 0 {
		t.Errorf("ranks without a trace: %d %s", a.code, a.body)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestDiffView: mpiscope view A B serves what changed at /diff.
func TestDiffView(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	writeFinal(t, a, job(0, 1000))
	writeFinal(t, b, job(0, 1500))
	h := New(a, Options{Compare: b}).Handler()
	if p := get(t, h, "/"); !strings.Contains(p.body, `<a href="/diff" id="diff-link">`) {
		t.Errorf("the page has no link to the diff")
	}
	d := get(t, h, "/diff")
	// MPI_Send: 1000 -> 1500 calls, 8000 -> 12000 bytes, time unchanged.
	want := `<td class="n" data-v="1000">1000</td><td class="n" data-v="1500">1500</td><td class="n" data-v="500">+500</td>` +
		`<td class="n" data-v="8000">8000</td><td class="n" data-v="12000">12000</td><td class="n" data-v="4000">+4000</td>`
	if d.code != 200 || !strings.Contains(d.body, want) || !strings.Contains(d.body, "connect-src 'self'") {
		t.Errorf("diff: %d\n%.4000s", d.code, d.body)
	}
	if a := get(t, New(a, Options{}).Handler(), "/diff"); a.code != 404 {
		t.Errorf("/diff without B: %d", a.code)
	}
	os.RemoveAll(b)
	if a := get(t, h, "/diff"); a.code != 404 || !strings.Contains(a.body, "run B") {
		t.Errorf("/diff with B gone: %d %q", a.code, a.body)
	}
}
