package report

import (
	"cmp"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mpiscope/mpiscope/internal/symbolize"
	"github.com/mpiscope/mpiscope/profile"
)

// spreadMean is the mean over the ranks contributing to s.
func spreadMean(s profile.Spread) float64 {
	if s.N <= 0 {
		return 0
	}
	return s.Sum / float64(s.N)
}

// spreadCOV is the coefficient of variation (population standard deviation
// divided by the mean) over the ranks contributing to s; 0 when undefined.
func spreadCOV(s profile.Spread) float64 {
	if s.N <= 0 {
		return 0
	}
	n := float64(s.N)
	mean := s.Sum / n
	if mean == 0 {
		return 0
	}
	// Explicit conversions prevent fused multiply-add so that results are
	// identical on every architecture.
	v := float64(s.SumSq/n) - float64(mean*mean)
	if v <= 0 {
		return 0
	}
	return math.Sqrt(v) / math.Abs(mean)
}

// pct is 100*a/b, or 0 when b is not positive.
func pct(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// perCall is total/calls, or 0 without calls.
func perCall(total, calls int64) float64 {
	if calls <= 0 {
		return 0
	}
	return float64(total) / float64(calls)
}

// round6 rounds to six decimal places for machine-readable output.
func round6(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	r := math.Round(x*1e6) / 1e6
	if r == 0 {
		return 0 // no negative zero
	}
	return r
}

// totals are the job-wide sums the percentages refer to.
type totals struct {
	appNs, mpiNs, calls, dropped int64
	mpiPctMean                   float64 // mean over ranks with app time of their MPI%
}

func computeTotals(p *profile.Profile) totals {
	var t totals
	var sumPct float64
	var n int
	for _, r := range p.Ranks {
		t.appNs += r.AppNs
		t.mpiNs += r.MPINs
		t.calls += r.Calls
		t.dropped += r.Dropped
		if r.AppNs > 0 {
			sumPct += pct(r.MPINs, r.AppNs)
			n++
		}
	}
	if n > 0 {
		t.mpiPctMean = sumPct / float64(n)
	}
	if t.mpiNs == 0 {
		// No rank summary (or it is empty): fall back to the function totals.
		for _, f := range p.Funcs {
			t.mpiNs += f.TimeNs
		}
	}
	if t.calls == 0 {
		for _, f := range p.Funcs {
			t.calls += f.Calls
		}
	}
	return t
}

// sizeRange returns the byte range [lo, hi] of a message-size bin.
func sizeRange(log2 int) (lo, hi uint64) {
	if log2 <= 0 {
		return 0, 0
	}
	log2 = min(log2, 64)
	return 1 << (log2 - 1), (1 << log2) - 1 // 1<<64 is 0 for uint64: hi wraps to the max
}

// sizeLabel is the human label of a message-size bin.
func sizeLabel(log2 int) string {
	if log2 <= 0 {
		return "0"
	}
	lo, hi := sizeRange(log2)
	return "[" + strconv.FormatUint(lo, 10) + ", " + strconv.FormatUint(hi, 10) + "]"
}

// displayName is the name people know a function by: C++ and gfortran
// symbol names are demangled (profiles written before the runtime did it
// hold them as they are in the symbol table).
func displayName(fn string) string { return symbolize.Demangle(fn) }

// oneLine collapses runs of white space, tabs and newlines included, to one
// space: MPICH's library version is "MPICH Version:\t4.0.2".
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// location is the human form of a callsite location.
func location(l profile.Loc, short bool) string {
	l.Function = displayName(l.Function)
	file, module := l.File, l.Module
	if short {
		if file != "" {
			file = filepath.Base(file)
		}
		if module != "" {
			module = filepath.Base(module)
		}
	}
	addr := ""
	if module != "" || l.Offset != 0 {
		if module == "" {
			module = "?"
		}
		addr = module + "+0x" + strconv.FormatUint(l.Offset, 16)
	}
	switch {
	case l.Function != "" && file != "" && l.Line > 0:
		return l.Function + " at " + file + ":" + strconv.Itoa(l.Line)
	case l.Function != "" && file != "":
		return l.Function + " at " + file
	case l.Function != "" && addr != "":
		return l.Function + " at " + addr
	case l.Function != "":
		return l.Function
	case addr != "":
		return addr
	}
	return "-"
}

// regionFunc is one MPI function's share of a region, from the sites in it.
type regionFunc struct {
	Func   string
	Calls  int64
	TimeNs int64
	Bytes  int64
}

// regionFuncs groups the sites by region and function, each region's
// functions sorted by time (descending), ties by name.
func regionFuncs(p *profile.Profile) map[string][]regionFunc {
	idx := map[[2]string]int{}
	out := map[string][]regionFunc{}
	for _, s := range p.Sites {
		if s.Region == "" {
			continue
		}
		k := [2]string{s.Region, s.Func}
		i, ok := idx[k]
		if !ok {
			i = len(out[s.Region])
			idx[k] = i
			out[s.Region] = append(out[s.Region], regionFunc{Func: s.Func})
		}
		rf := &out[s.Region][i]
		rf.Calls += s.Calls
		rf.TimeNs += s.TimeNs
		rf.Bytes += s.Bytes
	}
	for _, fs := range out {
		slices.SortFunc(fs, func(a, b regionFunc) int {
			return cmp.Or(cmp.Compare(b.TimeNs, a.TimeNs), strings.Compare(a.Func, b.Func))
		})
	}
	return out
}

// sortedIdx returns the indices 0..n-1 ordered by cmp, ties by index (the
// order of a stable sort).
func sortedIdx(n int, c func(i, j int) int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(i, j int) int { return cmp.Or(c(i, j), cmp.Compare(i, j)) })
	return idx
}

// topK selects the first k of the indices passed to add, in the order of a
// total order cmp. For small k it holds k of them at most, kept sorted by
// insertion: O(n log k) comparisons for n indices rather than a sort of all
// n. For large k it sorts them all.
type topK struct {
	k   int
	cmp func(i, j int) int
	idx []int // small k: the best so far, sorted by cmp; else all
}

// topKInsert is the largest k for which topK keeps a sorted selection.
const topKInsert = 256

func newTopK(k int, c func(i, j int) int) *topK {
	return &topK{k: k, cmp: c}
}

func (t *topK) add(i int) {
	if t.k <= 0 {
		return
	}
	if t.k > topKInsert {
		t.idx = append(t.idx, i)
		return
	}
	n := len(t.idx)
	if n == t.k && t.cmp(i, t.idx[n-1]) >= 0 {
		return
	}
	at, _ := slices.BinarySearchFunc(t.idx, i, t.cmp)
	if n == t.k {
		t.idx = t.idx[:n-1]
	}
	t.idx = slices.Insert(t.idx, at, i)
}

// sorted returns the selected indices, best first.
func (t *topK) sorted() []int {
	if t.k > topKInsert {
		slices.SortFunc(t.idx, t.cmp)
		t.idx = t.idx[:min(t.k, len(t.idx))]
	}
	return t.idx
}

// commandLine joins argv, quoting arguments that need it.
func commandLine(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\") {
			a = strconv.Quote(a)
		}
		parts[i] = a
	}
	return strings.Join(parts, " ")
}

// callsite is one row of the callsites table: the sites of one MPI function
// in one region whose addresses resolve to the same function, file and line,
// merged (a loop unrolled by the compiler calls MPI from several addresses
// of one source line). Sites without a file and line stay rows of their own.
type callsite struct {
	Func   string
	Loc    profile.Loc // of the first site
	Region string
	Calls  int64
	TimeNs int64
	MinNs  int64 // shortest call over the sites that have calls
	MaxNs  int64
	Bytes  int64
	Sites  []int // indices in Profile.Sites, ascending
}

// callsites merges p's sites into rows, in the order of each row's first
// site (a row's ID is its position + 1), and returns for each site the index
// of its row.
func callsites(p *profile.Profile) ([]callsite, []int) {
	type key struct {
		fn, region, function, file string
		line                       int
	}
	rows := make([]callsite, 0, len(p.Sites))
	of := make([]int, len(p.Sites))
	seen := map[key]int{}
	for i, s := range p.Sites {
		at := -1
		if s.Loc.File != "" && s.Loc.Line > 0 {
			k := key{s.Func, s.Region, displayName(s.Loc.Function), s.Loc.File, s.Loc.Line}
			if j, ok := seen[k]; ok {
				at = j
			} else {
				seen[k] = len(rows)
			}
		}
		if at < 0 {
			at = len(rows)
			rows = append(rows, callsite{Func: s.Func, Loc: s.Loc, Region: s.Region})
		}
		c := &rows[at]
		if s.Calls > 0 {
			if c.Calls == 0 || s.MinNs < c.MinNs {
				c.MinNs = s.MinNs
			}
			c.MaxNs = max(c.MaxNs, s.MaxNs)
		}
		c.Calls += s.Calls
		c.TimeNs += s.TimeNs
		c.Bytes += s.Bytes
		c.Sites = append(c.Sites, i)
		of[i] = at
	}
	return rows, of
}
