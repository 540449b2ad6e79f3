package view

import (
	"os"
	"testing"
	"time"
)

func TestTmpTiming(t *testing.T) {
	dir := os.Getenv("TL_DIR")
	if dir == "" {
		t.Skip()
	}
	t0 := time.Now()
	tl, err := loadTimeline(dir)
	if err != nil {
		t.Fatal(err)
	}
	nb := 0
	for _, b := range tl.blocks {
		nb += len(b)
	}
	t.Logf("index: %v, %d blocks, end %d", time.Since(t0), nb, tl.end)
	for _, q := range [][3]int64{{0, tl.end + 1, 1000}, {0, tl.end + 1, 1000}, {tl.end - tl.end/10000, tl.end + 1, 1000}, {tl.end / 2, tl.end/2 + tl.end/10000, 1000}, {tl.end - tl.end/100, tl.end + 1, 1000}} {
		t1 := time.Now()
		w := tl.window(q[0], q[1], 0, 1<<30, int(q[2]))
		t.Logf("%v: %s %d calls %d bins %d msgs total %d warn %q", time.Since(t1), w.Mode, len(w.Calls), len(w.Bins), len(w.Msgs), w.Total, w.Warnings)
	}
}
