package main

// What a run measured: the Markdown report (results.md, also printed),
// the raw numbers (results.json) and the targets' rows, in one value that
// every section writes to; and the helpers that format medians.

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// results is what a run measured so far.
type results struct {
	out bytes.Buffer   // the Markdown report
	raw map[string]any // the raw numbers, by section
	t   *targets       // each target's rows
}

func newResults() *results {
	return &results{raw: map[string]any{}, t: newTargets()}
}

// md appends to the report and prints the same.
func (r *results) md(format string, a ...any) {
	fmt.Fprintf(&r.out, format, a...)
	fmt.Printf(format, a...)
}

type stats struct{ Med, Min, Max float64 }

func summarize(v []float64) stats {
	if len(v) == 0 {
		return stats{}
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return stats{m, s[0], s[len(s)-1]}
}

func (s stats) String() string {
	return fmt.Sprintf("%.1f [%.1f, %.1f]", s.Med, s.Min, s.Max)
}

func fmtRatio(s stats) string {
	return fmt.Sprintf("%.2f [%.2f, %.2f]", s.Med, s.Min, s.Max)
}

// layoutCells is "a / b / ...": per layout lay < nl, the median of the
// values of rounds lay, lay+nl, lay+2nl, ... of v (one per round); "-"
// for a layout with no round.
func layoutCells(v []float64, nl int) string {
	cells := make([]string, nl)
	for lay, m := range layoutMedians(v, nl, nil) {
		cells[lay] = "-"
		if !math.IsNaN(m) {
			cells[lay] = fmt.Sprintf("%.1f", m)
		}
	}
	return strings.Join(cells, " / ")
}

// layoutMedians is, per layout lay < nl, the median of v's values of
// rounds lay, lay+nl, lay+2nl, ... (v holds one per round) for which
// keep(round) holds (nil: every round); NaN for a layout with none.
func layoutMedians(v []float64, nl int, keep func(r int) bool) []float64 {
	meds := make([]float64, nl)
	for lay := range meds {
		var w []float64
		for r := lay; r < len(v); r += nl {
			if keep == nil || keep(r) {
				w = append(w, v[r])
			}
		}
		meds[lay] = math.NaN()
		if len(w) > 0 {
			meds[lay] = summarize(w).Med
		}
	}
	return meds
}

// intList is v as "a, b and c".
func intList(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// mdHead writes a Markdown table's header row and separator.
func (r *results) mdHead(cols []string) {
	r.md("| %s |\n|%s\n", strings.Join(cols, " | "), strings.Repeat("---|", len(cols)))
}

// names returns the configurations' names.
func names(cs []config) []string {
	var n []string
	for _, c := range cs {
		n = append(n, c.Name)
	}
	return n
}
