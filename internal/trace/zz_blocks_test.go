package trace

import (
	"bytes"
	"compress/flate"
	"os"
	"slices"
	"strconv"
	"testing"
)

func TestZZBlocks(t *testing.T) {
	per, _ := strconv.Atoi(os.Getenv("ZZ_PER"))
	if per == 0 {
		t.Skip()
	}
	j, err := OpenJob("/tmp/mpiscope-bench-synth-1e6")
	if err != nil {
		t.Skip(err)
	}
	var all []Event
	for _, r := range j.Ranks[:1] {
		r.Scan(func(tid int, evs []Event) error { all = append(all, slices.Clone(evs)...); return nil })
	}
	fw, _ := flate.NewWriter(nil, flate.BestSpeed)
	var scratch bytes.Buffer
	var ps [][]byte
	for i := 0; i < len(all); i += per {
		p, _ := AppendEvents(nil, 1, all[i:min(i+per, len(all))], fw, &scratch)
		ps = append(ps, p)
	}
	if os.Getenv("ZZ_DEC") == "" {
		return
	}
	var st evDecoder
	var evs []Event
	for _, p := range ps {
		st.start(p)
		for st.left() > 0 {
			evs, _ = st.next(evs[:0], 1024)
		}
	}
	t.Logf("%d events", len(all))
}
