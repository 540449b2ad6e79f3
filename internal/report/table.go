package report

import (
	"strconv"
	"strings"
)

// unit is a time unit used for one group of columns of a table.
type unit struct {
	name string
	ns   float64
}

// pickUnit chooses the unit for columns whose largest value is maxNs: the
// largest of s, ms and us in which that value is at least 10.
func pickUnit(maxNs float64) unit {
	switch {
	case maxNs >= 10e9:
		return unit{"s", 1e9}
	case maxNs >= 10e6:
		return unit{"ms", 1e6}
	}
	return unit{"us", 1e3}
}

// unitOf chooses the unit for a column of xs's times (ns, each given by
// ns): pickUnit of the largest.
func unitOf[T any](xs []T, ns func(T) int64) unit {
	var m int64
	for _, x := range xs {
		m = max(m, ns(x))
	}
	return pickUnit(float64(m))
}

// pickCallUnit chooses the unit for per-call columns: us, so that short
// calls stay visible, unless some call took a second or more.
func pickCallUnit(maxNs float64) unit {
	if maxNs >= 1e9 {
		return unit{"ms", 1e6}
	}
	return unit{"us", 1e3}
}

// f formats ns in the unit with three decimals.
func (u unit) f(ns float64) string {
	return strconv.FormatFloat(ns/u.ns, 'f', 3, 64)
}

func (u unit) i(ns int64) string { return u.f(float64(ns)) }

// human formats a single duration in the unit that suits it.
func human(ns int64) string {
	u := unit{"us", 1e3}
	switch {
	case ns >= 1e9:
		u = unit{"s", 1e9}
	case ns >= 1e6:
		u = unit{"ms", 1e6}
	}
	return u.i(ns) + " " + u.name
}

func pctStr(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }
func covStr(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }
func itoa(x int64) string     { return strconv.FormatInt(x, 10) }

// column of a text table.
type column struct {
	name string
	left bool // left-aligned (text); numbers are right-aligned
}

// row of a text table: cells, or a note line printed as is.
type row struct {
	cells []string
	note  string
}

// table is a plain-ASCII table with aligned columns.
type table struct {
	cols []column
	rows []row
}

func newTable(cols ...column) *table { return &table{cols: cols} }

// L and R declare left- and right-aligned columns.
func L(name string) column { return column{name, true} }
func R(name string) column { return column{name, false} }

func (t *table) add(cells ...string) {
	for i, c := range cells {
		cells[i] = ascii(c)
	}
	t.rows = append(t.rows, row{cells: cells})
}

// ascii makes s printable plain ASCII on one line, escaping anything else
// Go-style (without the surrounding quotes).
func ascii(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			q := strconv.QuoteToASCII(s)
			return q[1 : len(q)-1]
		}
	}
	return s
}
func (t *table) note(s string) { t.rows = append(t.rows, row{note: s}) }

// render writes the table, each line prefixed with indent and without
// trailing spaces.
func (t *table) render(b *strings.Builder, indent string) {
	w := make([]int, len(t.cols))
	for i, c := range t.cols {
		w[i] = len(c.name)
	}
	for _, r := range t.rows {
		for i, c := range r.cells {
			if i < len(w) {
				w[i] = max(w[i], len(c))
			}
		}
	}
	line := func(cells []string) {
		var lb strings.Builder
		lb.WriteString(indent)
		for i, c := range t.cols {
			cell := ""
			if i < len(cells) {
				cell = cells[i]
			}
			if i > 0 {
				lb.WriteString("  ")
			}
			pad := strings.Repeat(" ", w[i]-len(cell))
			if c.left {
				lb.WriteString(cell + pad)
			} else {
				lb.WriteString(pad + cell)
			}
		}
		b.WriteString(strings.TrimRight(lb.String(), " "))
		b.WriteByte('\n')
	}
	names := make([]string, len(t.cols))
	for i, c := range t.cols {
		names[i] = c.name
	}
	line(names)
	for _, r := range t.rows {
		if r.cells == nil {
			b.WriteString(indent + r.note + "\n")
			continue
		}
		line(r.cells)
	}
}
