package profile

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// SpreadOf returns the spread of a single rank's value v.
func SpreadOf(rank int, v float64) Spread {
	return Spread{N: 1, Sum: v, SumSq: v * v, Min: v, Max: v, MinRank: rank, MaxRank: rank}
}

// Add merges o into s. An empty spread (N == 0) is the identity. On equal
// Min (Max) values the lower rank is kept, so Add is commutative and
// associative up to floating-point rounding of Sum and SumSq (exact while the
// values are integers and the sums stay below 2^53).
func (s *Spread) Add(o Spread) {
	if o.N == 0 {
		return
	}
	if s.N == 0 {
		*s = o
		return
	}
	s.N += o.N
	s.Sum += o.Sum
	s.SumSq += o.SumSq
	if o.Min < s.Min || (o.Min == s.Min && o.MinRank < s.MinRank) {
		s.Min, s.MinRank = o.Min, o.MinRank
	}
	if o.Max > s.Max || (o.Max == s.Max && o.MaxRank < s.MaxRank) {
		s.Max, s.MaxRank = o.Max, o.MaxRank
	}
}

// Mean is Sum/N, 0 for an empty spread.
func (s Spread) Mean() float64 {
	if s.N == 0 {
		return 0
	}
	return s.Sum / float64(s.N)
}

// COV is the coefficient of variation: population standard deviation divided
// by the mean, 0 if the mean is 0.
func (s Spread) COV() float64 {
	m := s.Mean()
	if m == 0 {
		return 0
	}
	v := s.SumSq/float64(s.N) - m*m
	if v <= 0 {
		return 0
	}
	return math.Sqrt(v) / m
}

// Merge merges q into p in place. q is not modified and shares no memory
// with p afterwards. The result is sorted (see Sort). Merging is commutative
// and associative on the data: any order or grouping of merges of the same
// profiles gives the same result (floating-point Spread sums up to
// rounding). See docs/format.md for the rule applied to each field.
func (p *Profile) Merge(q *Profile) {
	m := newMerger()
	m.add(p)
	m.add(q)
	*p = *m.result()
}

// MergeAll merges ps (nil entries are skipped) into a new profile, leaving
// the inputs unchanged. Its cost grows with the total input size and the
// number of distinct keys, not with the number of profiles squared.
func MergeAll(ps []*Profile) *Profile {
	m := newMerger()
	for _, p := range ps {
		m.add(p)
	}
	return m.result()
}

// Sort sorts every slice of p by its key (see the Profile field comments),
// every histogram's bins by Log2 and Meta.Hosts. Entries with equal keys keep
// their relative order; Sort does not combine them (Merge does).
func (p *Profile) Sort() {
	slices.Sort(p.Meta.Hosts)
	sortStable(p.Ranks, cmpRankKey)
	sortStable(p.Funcs, func(a, b Func) int { return strings.Compare(a.Name, b.Name) })
	sortStable(p.Sites, func(a, b Site) int { return cmpSiteKey(siteKeyOf(&a), siteKeyOf(&b)) })
	sortStable(p.Hists, func(a, b Hist) int { return strings.Compare(a.Func, b.Func) })
	for i := range p.Hists {
		sortStable(p.Hists[i].Bins, func(a, b Bin) int { return cmp.Compare(a.Log2, b.Log2) })
	}
	sortStable(p.Comms, func(a, b Comm) int { return strings.Compare(a.Key, b.Key) })
	sortStable(p.Peers, cmpPeerKey)
	sortStable(p.Regions, func(a, b Region) int { return strings.Compare(a.Path, b.Path) })
	sortStable(p.Events, func(a, b Event) int { return strings.Compare(a.Text, b.Text) })
	sortStable(p.Busy, cmpCallKey)
	sortStable(p.Waits, cmpWaitKey)
	sortStable(p.Paths, cmpPathKey)
	sortComp(p) // compensate.go
	sortStable(p.RankFuncs, func(a, b RankFunc) int { return cmpRankFunc(&a, &b) })
	sortStable(p.CommPeers, func(a, b CommPeer) int { return cmpCommPeer(&a, &b) })
}

func sortStable[T any](s []T, cmpf func(a, b T) int) {
	if !slices.IsSortedFunc(s, cmpf) {
		slices.SortStableFunc(s, cmpf)
	}
}

func cmpRankKey(a, b Rank) int { return cmp.Compare(a.Rank, b.Rank) }

func cmpPeerKey(a, b Peer) int {
	if c := cmp.Compare(a.Rank, b.Rank); c != 0 {
		return c
	}
	return cmp.Compare(a.Peer, b.Peer)
}

// runTable accumulates entries whose keys usually arrive in increasing order
// (ranks and peers when rank profiles are merged in rank order): while they
// do, entries are appended and no map is kept; equal keys are found by
// binary search. The first out-of-order new key switches to a map index.
type runTable[T any] struct {
	list []T
	idx  map[peerKey]int // nil while list is strictly increasing
}

func (t *runTable[T]) add(v *T, key func(*T) peerKey, merge func(dst, src *T)) {
	k := key(v)
	if t.idx == nil {
		n := len(t.list)
		if n == 0 || cmpPeerKeys(key(&t.list[n-1]), k) < 0 {
			t.list = append(t.list, *v)
			return
		}
		i, found := slices.BinarySearchFunc(t.list, k, func(e T, k peerKey) int { return cmpPeerKeys(key(&e), k) })
		if found {
			merge(&t.list[i], v)
			return
		}
		t.idx = make(map[peerKey]int, 2*n)
		for i := range t.list {
			t.idx[key(&t.list[i])] = i
		}
	}
	if j, ok := t.idx[k]; ok {
		merge(&t.list[j], v)
		return
	}
	t.idx[k] = len(t.list)
	t.list = append(t.list, *v)
}

func cmpPeerKeys(a, b peerKey) int {
	if c := cmp.Compare(a.rank, b.rank); c != 0 {
		return c
	}
	return cmp.Compare(a.peer, b.peer)
}

func rankKey(r *Rank) peerKey   { return peerKey{r.Rank, 0} }
func peerKeyOf(p *Peer) peerKey { return peerKey{p.Rank, p.Peer} }

func mergeRank(dst, src *Rank) {
	if betterRank(dst, src) {
		*dst = *src
	}
}

func mergePeer(a, c *Peer) {
	a.SentMsgs += c.SentMsgs
	a.SentBytes += c.SentBytes
	a.RecvMsgs += c.RecvMsgs
	a.RecvBytes += c.RecvBytes
}

type siteKey struct {
	Func   string
	Module string
	Offset uint64
	Region string
}

func siteKeyOf(s *Site) siteKey {
	return siteKey{s.Func, s.Loc.Module, s.Loc.Offset, s.Region}
}

func cmpSiteKey(a, b siteKey) int {
	if c := strings.Compare(a.Func, b.Func); c != 0 {
		return c
	}
	if c := strings.Compare(a.Module, b.Module); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Offset, b.Offset); c != 0 {
		return c
	}
	return strings.Compare(a.Region, b.Region)
}

type peerKey struct{ rank, peer int }

type histAcc struct {
	idx  map[int]int // Log2 -> index in h.Bins
	hist Hist
}

// merger accumulates profiles keyed by maps, so that adding n profiles costs
// O(total input) and memory O(distinct keys).
type merger struct {
	analysis *Analysis // the first profile's (a job's analysis is one whole)
	metaSet  bool
	meta     Meta
	hosts    map[string]struct{}

	ranks     runTable[Rank]
	funcIdx   map[string]int
	funcs     []Func
	funcHint  []int // funcHint[i]: index of the func at position i of the previous input
	siteIdx   map[siteKey]int
	sites     []Site
	siteHint  []int
	histIdx   map[string]int
	hists     []histAcc
	commIdx   map[string]int
	comms     []Comm
	peers     runTable[Peer]
	regionIdx map[string]int
	regions   []Region
	eventIdx  map[string]int
	events    []Event
	busy      map[[2]int]Call // (Rank, Thread)
	waitIdx   map[waitKey]int // wait.go
	waits     []Wait
	pathIdx   map[string]int // paths.go
	paths     []Path
	compSeen  map[int]bool // compensate.go
	compRanks []CompRank
	compIdx   map[string]int
	compFuncs []CompFunc
	rankFuncs rankList[RankFunc] // ranked.go
	commPeers rankList[CommPeer]
	rfBlock   int
	cpBlock   int
}

func newMerger() *merger {
	return &merger{
		hosts:     make(map[string]struct{}),
		funcIdx:   make(map[string]int),
		siteIdx:   make(map[siteKey]int),
		histIdx:   make(map[string]int),
		commIdx:   make(map[string]int),
		regionIdx: make(map[string]int),
		eventIdx:  make(map[string]int),
		busy:      make(map[[2]int]Call),
	}
}

// joinStr is the merge of two strings: a non-empty value wins over an empty
// one; of two different non-empty values the smaller wins, which keeps the
// merge commutative when inputs disagree.
func joinStr(a, b string) string {
	if a == "" || (b != "" && b < a) {
		return b
	}
	return a
}

// joinList is joinStr for string lists: non-empty wins, then the smaller.
func joinList[T any](a, b []T, cmpf func(a, b []T) int) []T {
	if len(a) == 0 || (len(b) != 0 && cmpf(b, a) < 0) {
		return b
	}
	return a
}

func cmpSettings(a, b []Setting) int {
	return slices.CompareFunc(a, b, func(x, y Setting) int {
		if c := strings.Compare(x.Name, y.Name); c != 0 {
			return c
		}
		return strings.Compare(x.Value, y.Value)
	})
}

// joinInt: non-zero wins, of two non-zero values the larger.
func joinInt(a, b int) int {
	if a == 0 || (b != 0 && b > a) {
		return b
	}
	return a
}

// minCalls combines the minimum of two entries: the minimum over entries that
// have calls, or over all entries if none has.
func minCalls(aCalls, aMin, bCalls, bMin int64) int64 {
	switch {
	case aCalls != 0 && bCalls == 0:
		return aMin
	case aCalls == 0 && bCalls != 0:
		return bMin
	}
	return min(aMin, bMin)
}

func (m *merger) addMeta(q *Meta) {
	for _, h := range q.Hosts {
		m.hosts[h] = struct{}{}
	}
	if !m.metaSet {
		m.metaSet = true
		m.meta = *q
		m.meta.Hosts = nil
		return
	}
	p := &m.meta
	p.Command = joinList(p.Command, q.Command, slices.Compare[[]string])
	p.NumRanks = max(p.NumRanks, q.NumRanks)
	p.MPILibrary = joinStr(p.MPILibrary, q.MPILibrary)
	p.MPIVersion = joinStr(p.MPIVersion, q.MPIVersion)
	p.Family = joinStr(p.Family, q.Family)
	p.Tool = joinStr(p.Tool, q.Tool)
	p.Timer = joinStr(p.Timer, q.Timer)
	if p.StartNs == 0 || (q.StartNs != 0 && q.StartNs < p.StartNs) {
		p.StartNs = q.StartNs
	}
	p.StopNs = max(p.StopNs, q.StopNs)
	p.Settings = joinList(p.Settings, q.Settings, cmpSettings)
	p.Snapshot = max(p.Snapshot, q.Snapshot)
	p.Partial = p.Partial || q.Partial
}

// betterRank reports whether b should replace a for the same rank: the
// larger AppNs wins; ties are broken by a total order on the other fields so
// the choice does not depend on merge order.
func betterRank(a, b *Rank) bool {
	return cmp.Or(
		cmp.Compare(b.AppNs, a.AppNs),
		cmp.Compare(b.MPINs, a.MPINs),
		cmp.Compare(b.Calls, a.Calls),
		cmp.Compare(b.Threads, a.Threads),
		cmp.Compare(b.Dropped, a.Dropped),
		cmp.Compare(b.PID, a.PID),
		strings.Compare(b.Host, a.Host),
		strings.Compare(b.State, a.State),
		cmp.Compare(b.OffNs, a.OffNs),
	) > 0
}

func (m *merger) add(q *Profile) {
	if q == nil {
		return
	}
	m.addMeta(&q.Meta)

	for i := range q.Ranks {
		m.ranks.add(&q.Ranks[i], rankKey, mergeRank)
	}

	// Ranks of one job mostly have the same functions and sites in the same
	// order: checking where the previous input's entry at the same position
	// went avoids most map lookups (hashing dominates the cost otherwise).
	m.funcHint = fitHint(m.funcHint, len(q.Funcs))
	for i := range q.Funcs {
		f := &q.Funcs[i]
		j, ok := m.funcHint[i], false
		if j >= 0 && m.funcs[j].Name == f.Name {
			ok = true
		} else {
			j, ok = m.funcIdx[f.Name]
		}
		if !ok {
			j = len(m.funcs)
			m.funcHint[i] = j
			m.funcIdx[f.Name] = j
			m.funcs = append(m.funcs, *f)
			continue
		}
		m.funcHint[i] = j
		a := &m.funcs[j]
		a.Class = joinStr(a.Class, f.Class)
		a.MinCallNs = minCalls(a.Calls, a.MinCallNs, f.Calls, f.MinCallNs)
		a.MaxCallNs = max(a.MaxCallNs, f.MaxCallNs)
		a.Calls += f.Calls
		a.TimeNs += f.TimeNs
		a.Bytes += f.Bytes
		a.RankTime.Add(f.RankTime)
	}

	m.siteHint = fitHint(m.siteHint, len(q.Sites))
	for i := range q.Sites {
		s := &q.Sites[i]
		k := siteKeyOf(s)
		j, ok := m.siteHint[i], false
		if j >= 0 && siteKeyOf(&m.sites[j]) == k {
			ok = true
		} else {
			j, ok = m.siteIdx[k]
		}
		if !ok {
			j = len(m.sites)
			m.siteHint[i] = j
			m.siteIdx[k] = j
			m.sites = append(m.sites, *s)
			continue
		}
		m.siteHint[i] = j
		a := &m.sites[j]
		a.Loc.Function = joinStr(a.Loc.Function, s.Loc.Function)
		a.Loc.File = joinStr(a.Loc.File, s.Loc.File)
		if a.Loc.Line == 0 || (s.Loc.Line != 0 && s.Loc.Line < a.Loc.Line) {
			a.Loc.Line = s.Loc.Line
		}
		a.MinNs = minCalls(a.Calls, a.MinNs, s.Calls, s.MinNs)
		a.MaxNs = max(a.MaxNs, s.MaxNs)
		a.Calls += s.Calls
		a.TimeNs += s.TimeNs
		a.Bytes += s.Bytes
		a.RankTime.Add(s.RankTime)
	}

	for i := range q.Hists {
		h := &q.Hists[i]
		j, ok := m.histIdx[h.Func]
		if !ok {
			j = len(m.hists)
			m.histIdx[h.Func] = j
			m.hists = append(m.hists, histAcc{idx: make(map[int]int, len(h.Bins)), hist: Hist{Func: h.Func}})
		}
		a := &m.hists[j]
		for _, b := range h.Bins {
			k, ok := a.idx[b.Log2]
			if !ok {
				a.idx[b.Log2] = len(a.hist.Bins)
				a.hist.Bins = append(a.hist.Bins, b)
				continue
			}
			ab := &a.hist.Bins[k]
			ab.Calls += b.Calls
			ab.Bytes += b.Bytes
			ab.TimeNs += b.TimeNs
		}
	}

	for i := range q.Comms {
		c := &q.Comms[i]
		j, ok := m.commIdx[c.Key]
		if !ok {
			m.commIdx[c.Key] = len(m.comms)
			m.comms = append(m.comms, *c)
			continue
		}
		a := &m.comms[j]
		a.Name = joinStr(a.Name, c.Name)
		a.Size = joinInt(a.Size, c.Size)
		a.Creator = joinStr(a.Creator, c.Creator)
		a.Members += c.Members
		a.Calls += c.Calls
		a.TimeNs += c.TimeNs
		a.Bytes += c.Bytes
	}

	for i := range q.Peers {
		m.peers.add(&q.Peers[i], peerKeyOf, mergePeer)
	}

	for i := range q.Regions {
		r := &q.Regions[i]
		j, ok := m.regionIdx[r.Path]
		if !ok {
			m.regionIdx[r.Path] = len(m.regions)
			m.regions = append(m.regions, *r)
			continue
		}
		a := &m.regions[j]
		a.Visits += r.Visits
		a.WallNs += r.WallNs
		a.MPINs += r.MPINs
		a.Ranks += r.Ranks
		a.RankMPI.Add(r.RankMPI)
	}

	for i := range q.Events {
		e := &q.Events[i]
		j, ok := m.eventIdx[e.Text]
		if !ok {
			m.eventIdx[e.Text] = len(m.events)
			m.events = append(m.events, *e)
			continue
		}
		a := &m.events[j]
		a.Count += e.Count
		a.Ranks += e.Ranks
	}
	m.addBusy(q.Busy)
	m.addWaits(q.Waits)
	if m.analysis == nil {
		m.analysis = q.Analysis
	}
	m.addPaths(q.Paths)
	m.addComp(q)
	m.rankFuncs.add(q.RankFuncs, cmpRankFunc)
	m.commPeers.add(q.CommPeers, cmpCommPeer)
	if len(q.RankFuncs) > 0 {
		m.rfBlock = max(m.rfBlock, q.RankFuncBlock, 1)
	}
	if len(q.CommPeers) > 0 {
		m.cpBlock = max(m.cpBlock, q.CommPeerBlock, 1)
	}
}

// maxReserve bounds the entries reserve makes room for in one table, so that
// an unusual first part cannot make it allocate much memory that the other
// parts do not fill.
const maxReserve = 1 << 22

// reserve makes room for the ranks and peers of about parts profiles like q
// (for example the merges of equal-sized chunks of rank files, of which q is
// the first), so that the largest tables are not copied as they grow.
func (m *merger) reserve(q *Profile, parts int) {
	if n := len(q.Ranks) * parts; n <= maxReserve {
		m.ranks.list = slices.Grow(m.ranks.list, n)
	}
	if n := len(q.Peers) * parts; n <= maxReserve {
		m.peers.list = slices.Grow(m.peers.list, n)
	}
}

// fitHint returns h with length n, new positions set to -1 (no hint).
func fitHint(h []int, n int) []int {
	for len(h) < n {
		h = append(h, -1)
	}
	return h[:n]
}

// nilIfEmpty keeps empty results nil, the shape Unmarshal produces.
func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// result returns the merged, sorted profile. Slices taken from inputs are
// copied, so the result shares no mutable memory with them.
func (m *merger) result() *Profile {
	p := &Profile{Meta: m.meta}
	p.Meta.Command = nilIfEmpty(slices.Clone(m.meta.Command))
	p.Meta.Settings = nilIfEmpty(slices.Clone(m.meta.Settings))
	if len(m.hosts) > 0 {
		p.Meta.Hosts = make([]string, 0, len(m.hosts))
		for h := range m.hosts {
			p.Meta.Hosts = append(p.Meta.Hosts, h)
		}
	}
	p.Ranks = nilIfEmpty(m.ranks.list)
	p.Funcs = nilIfEmpty(m.funcs)
	p.Sites = nilIfEmpty(m.sites)
	if len(m.hists) > 0 {
		p.Hists = make([]Hist, len(m.hists))
		for i := range m.hists {
			// Bins were appended one by one into a fresh slice (see add).
			p.Hists[i] = m.hists[i].hist
			p.Hists[i].Bins = nilIfEmpty(p.Hists[i].Bins)
		}
	}
	p.Comms = nilIfEmpty(m.comms)
	p.Peers = nilIfEmpty(m.peers.list)
	p.Regions = nilIfEmpty(m.regions)
	p.Events = nilIfEmpty(m.events)
	for _, c := range m.busy {
		p.Busy = append(p.Busy, c)
	}
	p.Waits = nilIfEmpty(m.waits)
	p.Analysis = cloneAnalysis(m.analysis)
	p.Paths = nilIfEmpty(m.paths)
	p.CompRanks = nilIfEmpty(m.compRanks)
	p.CompFuncs = nilIfEmpty(m.compFuncs)
	p.RankFuncs = m.rankFuncs.result(cmpRankFunc, addRankFunc)
	p.CommPeers = m.commPeers.result(cmpCommPeer, addCommPeer)
	p.RankFuncBlock, p.CommPeerBlock = m.rfBlock, m.cpBlock
	p.Sort()
	return p
}

// CompareCalls orders calls in progress by (Rank, Thread), their key.
func CompareCalls(a, b Call) int { return cmpCallKey(a, b) }

// cmpCallKey orders calls in progress by (Rank, Thread).
func cmpCallKey(a, b Call) int {
	return cmp.Or(cmp.Compare(a.Rank, b.Rank), cmp.Compare(a.Thread, b.Thread))
}

// addBusy merges calls in progress: one per (Rank, Thread); of two, the
// one running longer (written later), ties broken by a total order on the
// other fields, so the result does not depend on merge order.
func (m *merger) addBusy(l []Call) {
	for _, c := range l {
		k := [2]int{c.Rank, c.Thread}
		if a, ok := m.busy[k]; !ok || betterCall(&a, &c) {
			m.busy[k] = c
		}
	}
}

func betterCall(a, b *Call) bool {
	return cmp.Or(
		cmp.Compare(b.ElapsedNs, a.ElapsedNs),
		strings.Compare(b.Func, a.Func),
		cmpSiteKey(siteKey{b.Func, b.Loc.Module, b.Loc.Offset, b.Region}, siteKey{a.Func, a.Loc.Module, a.Loc.Offset, a.Region}),
		strings.Compare(b.Loc.Function, a.Loc.Function),
		strings.Compare(b.Loc.File, a.Loc.File),
		cmp.Compare(b.Loc.Line, a.Loc.Line),
		strings.Compare(b.Comm, a.Comm),
		cmp.Compare(b.Peer, a.Peer),
		cmp.Compare(b.Tag, a.Tag),
	) > 0
}
