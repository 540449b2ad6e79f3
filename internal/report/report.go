package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/mpiscope/mpiscope/profile"
)

// Format is an output format of Write.
type Format int

// The output formats.
const (
	Text Format = iota // human-readable plain-ASCII report
	JSON               // whole profile plus derived fields, see package doc
	CSV                // one table per section, see package doc
	HTML               // one self-contained page with plots, see html.go
)

var formatNames = [...]string{Text: "text", JSON: "json", CSV: "csv", HTML: "html"}

// String returns the name accepted by ParseFormat.
func (f Format) String() string {
	if f >= 0 && int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// ParseFormat parses "text", "json", "csv" or "html" (case-insensitive).
func ParseFormat(s string) (Format, error) {
	for i, n := range formatNames {
		if strings.EqualFold(s, n) {
			return Format(i), nil
		}
	}
	return 0, fmt.Errorf("report: unknown format %q (want text, json, csv or html)", s)
}

// DefaultTop is the number of rows per text table when Options.Top is not set.
const DefaultTop = 20

// Options control the text report. JSON and CSV always carry all the data
// and use only Source and Notes.
type Options struct {
	All    bool     // never truncate tables
	Top    int      // rows per table when !All; DefaultTop if <= 0
	Source string   // where the profile came from, e.g. the job directory
	Notes  []string // lines shown at the top, e.g. "partial profile: 3 of 4 ranks (missing: 2)"
}

func (o Options) top() int {
	if o.Top <= 0 {
		return DefaultTop
	}
	return o.Top
}

// limit is the number of rows to show out of n.
func (o Options) limit(n int) int {
	if o.All {
		return n
	}
	return min(n, o.top())
}

// Write renders p to w in format f.
func Write(w io.Writer, p *profile.Profile, f Format, o Options) error {
	if p == nil {
		p = &profile.Profile{}
	}
	p = recordedTime(p) // time with recording off is in no denominator (busy.go)
	var out []byte
	var err error
	switch f {
	case Text:
		out = []byte(text(p, o))
	case JSON:
		out, err = jsonBytes(p, o)
	case CSV:
		out, err = csvBytes(p, o)
	case HTML:
		out = []byte(htmlPage(p, o, nil))
	default:
		err = fmt.Errorf("report: unknown format %v", f)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}
