package trace

import (
	"io"
	"runtime"
	"testing"
)

// visitLog keeps a walk's visits (calls copied, as a visitor must) to
// replay them into a writer without the walk: the writer's own cost.
type visitLog struct {
	calls []Call
}

func (l *visitLog) Call(c *Call) error {
	k := *c
	own := func(ms []Msg) []Msg { return append([]Msg(nil), ms...) }
	ownMsg := func(m *Msg) *Msg {
		if m == nil {
			return nil
		}
		x := *m
		return &x
	}
	k.Send, k.Recv, k.RecvPost = ownMsg(c.Send), ownMsg(c.Recv), ownMsg(c.RecvPost)
	k.StartSend, k.StartRecv, k.SendDone, k.RecvDone = own(c.StartSend), own(c.StartRecv), own(c.SendDone), own(c.RecvDone)
	k.StartColl, k.CollDone = append([]CollOp(nil), c.StartColl...), append([]CollOp(nil), c.CollDone...)
	k.RmaDone, k.Cancelled, k.IoDone = append([]RmaDone(nil), c.RmaDone...), append([]uint64(nil), c.Cancelled...), append([]IoDone(nil), c.IoDone...)
	k.Path = append([]*Source(nil), c.Path...)
	l.calls = append(l.calls, k)
	return nil
}

func (l *visitLog) Region(int, int, bool, string, float64) error { return nil }
func (l *visitLog) Mark(int, int, string, float64) error         { return nil }

// BenchmarkPerfettoOwn is PerfettoWriter's own cost: calls of mid-run in
// the synthetic job (walked once, kept: few enough to stay in the cache,
// as the walk's call is) replayed into it again and again, output
// discarded; cpu-ns/event is per event of the job, as the conversion's
// (the calls replayed stand for their share of the job's events).
func BenchmarkPerfettoOwn(b *testing.B) {
	j, n := benchJob(b)
	var l visitLog
	if err := NewWalker(j, WalkOptions{}).Walk(&l); err != nil {
		b.Fatal(err)
	}
	const window = 512
	perPass := float64(n) * window / float64(len(l.calls))
	calls := l.calls[len(l.calls)/2:][:window] // times and request ids of mid-run
	const passes = 2000
	runtime.GC()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		p := NewPerfettoWriter(io.Discard)
		for range passes {
			for k := range calls {
				if err := p.Call(&calls[k]); err != nil {
					b.Fatal(err)
				}
			}
		}
		p.Close()
	}
	ev := perPass * passes * float64(b.N)
	b.ReportMetric(ev/(cpuTime()-cpu0).Seconds(), "events/cpu-s")
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/ev, "cpu-ns/event")
}
