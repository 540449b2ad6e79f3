package analyze

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/mpiscope/mpiscope/internal/trace"
)

// BenchmarkOfflineJob is the offline analysis (Analyze, one worker) of
// the job in $MPISCOPE_BENCH_INJOB (skipped without it), with the same
// per-event figures as BenchmarkInJob: the two side by side say what the
// analysis in the job costs beyond the offline one on the same events.
func BenchmarkOfflineJob(b *testing.B) {
	dir := os.Getenv("MPISCOPE_BENCH_INJOB")
	if dir == "" {
		b.Skip("MPISCOPE_BENCH_INJOB not set")
	}
	j, err := trace.OpenJob(dir)
	if err != nil {
		b.Fatal(err)
	}
	var events uint64
	for _, r := range j.Ranks {
		events += r.Events
	}
	phases := map[string]time.Duration{}
	allocs := map[string]uint64{}
	var order []string
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		last, lastA := cpuTime(), heapAllocs()
		mark := func(name string) {
			now, a := cpuTime(), heapAllocs()
			if _, ok := phases[name]; !ok {
				order = append(order, name)
			}
			phases[name] += now - last
			allocs[name] += a - lastA
			last, lastA = now, a
		}
		if _, err := Analyze(j, Options{Workers: 1, Phase: mark}); err != nil {
			b.Fatal(err)
		}
		mark("rest")
	}
	cpu := cpuTime() - cpu0
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(events)/float64(b.N), "cpu-ns/event")
	for _, name := range order {
		b.ReportMetric(float64(phases[name].Nanoseconds())/float64(events)/float64(b.N), name+"-ns/event")
		b.ReportMetric(float64(allocs[name])/float64(events)/float64(b.N), name+"-B-alloc/event")
	}
}

// TestJobMetaBinary: the metadata's encoding (jobMeta.MarshalBinary, what
// allReduce sends since 2026-11-29 instead of gob) decodes to the same
// metadata, through encodeVal and decodeVal as the reduction uses them;
// every cut of it and a byte after its end are errors naming the byte.
func TestJobMetaBinary(t *testing.T) {
	m := jobMeta{
		Hosts: map[string]hostClock{
			"a\x00tsc": {Score: 0, Rank: 0, Calib: trace.Calib{Tick0: 7, Ns0: 9, NsPerTick: 0.37}},
			"b\x00tsc": {Score: 301, Rank: 2, Calib: trace.Calib{Tick0: 1 << 40, Ns0: 3, NsPerTick: 1},
				Syncs: []trace.Sync{{LocalNs: 5, OffsetNs: -3000, RTTNs: 100}, {LocalNs: 1 << 50, OffsetNs: 12, RTTNs: 200}}},
		},
		Keys:     []string{"world", "c1", ""},
		RankHost: map[int]string{0: "a\x00tsc", 1: "a\x00tsc", 2: "b\x00tsc", 40000: "b\x00tsc"},
		Starts:   map[int]rankStart{0: {Tick0: 11, Rounds: 1}, 2: {Tick0: math.MaxUint64, Rounds: 4096}},
		Inter:    map[string][]int{"ic": {3, 1, -1}},
	}
	b, err := encodeVal(&m)
	if err != nil {
		t.Fatal(err)
	}
	var got jobMeta
	if err := decodeVal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Errorf("decoded %+v, want %+v", got, m)
	}
	// By construction: 2 hosts of 6 + 8*4 bytes (key, score, calib) and
	// a varint each for the rank and the samples, 24 bytes a sample; 3
	// keys; 4 ranks' hosts; 2 starts; one intercommunicator of 3 ranks.
	want := 1 + 2*(6+8+1+24+1) + 2*24 + 1 + (6 + 3 + 1) + 1 + (1 + 6 + 1 + 6 + 1 + 6 + 3 + 6) + 1 + (1 + 8 + 1 + 1 + 8 + 2) + 1 + (3 + 1 + 3)
	if len(b) != want {
		t.Errorf("%d bytes, want %d", len(b), want)
	}
	// Empty: the hosts' map made, the others nil, as gob left them.
	b, _ = encodeVal(&jobMeta{})
	got = jobMeta{Keys: []string{"stale"}}
	if err := decodeVal(b, &got); err != nil || !reflect.DeepEqual(got, jobMeta{Hosts: map[string]hostClock{}}) || len(b) != 5 {
		t.Errorf("empty: %d bytes, decoded %+v (%v); want 5 bytes and only Hosts made", len(b), got, err)
	}
	b, _ = encodeVal(&m)
	for n := range len(b) {
		err := decodeVal(b[:n], &got)
		if err == nil || !strings.Contains(err.Error(), "the job's metadata: ") || !strings.Contains(err.Error(), " of "+itoa(n)) {
			t.Fatalf("cut at %d of %d bytes: %v; want an error naming the byte", n, len(b), err)
		}
	}
	if err := decodeVal(append(b, 0), &got); err == nil || !strings.Contains(err.Error(), "bytes after the end at byte "+itoa(len(b))) {
		t.Errorf("a byte after the end: %v", err)
	}
	// A count larger than the bytes left: an error, not a large list.
	bad := binary.AppendUvarint(nil, 1<<40)
	if err := decodeVal(bad, &got); err == nil || !strings.Contains(err.Error(), "entries in") {
		t.Errorf("a count of 2^40: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestCandPartsSorted: the candidates of a rank's calls, as the exchange
// brings them (own lists and messages, in order), sorted by call in one
// list (candParts.sorted) are sortByKey of their concatenation, exactly
// (stable): dense calls (the counting placement), sparse ones (decoded,
// then sortByKey), fewer than 64, empty lists and messages.
func TestCandPartsSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const me = 3
	for _, tc := range []struct {
		name          string
		parts, n, max int
	}{
		{"dense", 9, 4000, 3000},
		{"dense, one part", 1, 500, 400},
		{"sparse", 5, 1000, 1 << 30},
		{"few", 4, 40, 30},
		{"none", 3, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cp candParts
			var all []cand
			for p := range tc.parts {
				n := 0
				if tc.n > 0 {
					n = rng.IntN(2 * tc.n / tc.parts)
				}
				cs := make([]cand, n)
				for i := range cs {
					cs[i] = cand{idx: me, key: int32(rng.IntN(50)), call: uint32(rng.IntN(tc.max)), pattern: Pattern(rng.IntN(int(NumPatterns))),
						partner: int32(rng.IntN(8)), pkey: int32(i), t0: rng.Float64(), t1: float64(p), waitReady: float64(i), jumpReady: rng.Float64()}
				}
				all = append(all, cs...)
				if p%2 == 0 {
					cp.lists, cp.order = append(cp.lists, cs), append(cp.order, true)
				} else if len(cs) > 0 {
					b := make([]byte, len(cs)*xCand)
					for i := range cs {
						putCand(b[i*xCand:], &cs[i])
					}
					cp.msgs, cp.order = append(cp.msgs, b), append(cp.order, false)
				}
			}
			want := sortByKey(slices.Clone(all), func(c *cand) uint64 { return uint64(c.call) })
			got := cp.sorted(me)
			if !slices.Equal(got, want) {
				t.Errorf("%d candidates sorted differently from sortByKey of their concatenation", len(all))
			}
			if len(got) != len(all) {
				t.Errorf("%d candidates, want %d", len(got), len(all))
			}
		})
	}
}

// TestSizingPass: a rank's walk in the job sizes its lists once after its
// first calls (sizingPass), from the events counted so far, which on the
// synthetic trace are the rank's events exactly by the walk's end; every
// list then holds what the rest of the walk adds in the room it was given
// then (the same backing array at the end), and the records are those of
// a plain pass.
func TestSizingPass(t *testing.T) {
	dir := t.TempDir()
	if err := trace.WriteSynth(dir, trace.SynthSpec{Ranks: 4, Events: 200000, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	j, err := trace.OpenJob(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := j.Ranks[1]
	walk := func(v func(p *rankPass) trace.Visitor) *rankPass {
		w := trace.NewWalker(&trace.Job{Dir: dir, Ranks: []*trace.Rank{r}}, trace.WalkOptions{NoClock: true, NoSources: true})
		p := newRankPass(1, 1, 4)
		p.byOwner = true
		if err := w.WalkRank(0, v(p)); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sz := &watchSizing{}
	p := walk(func(p *rankPass) trace.Visitor {
		sz.sizingPass = &sizingPass{rankPass: p, at: sizingCalls(r.Events), events: r.Events}
		return sz
	})
	plain := walk(func(p *rankPass) trace.Visitor { return p })
	if sz.seen != r.Events || !p.reserved || sz.at != 1564 || len(sz.lists) == 0 {
		t.Errorf("%d events counted of %d, sized %v after %d calls (%d lists); want all, true, 1564 (a 32nd of the events) and some", sz.seen, r.Events, p.reserved, sz.at, len(sz.lists))
	}
	if !slices.Equal(p.times, plain.times) {
		t.Errorf("the calls' times differ from a plain pass's")
	}
	for d := range p.sends {
		if !slices.Equal(p.sends[d], plain.sends[d]) || !slices.Equal(p.recvs[d], plain.recvs[d]) || !slices.Equal(p.colls[d], plain.colls[d]) {
			t.Errorf("destination %d: records differ from a plain pass's", d)
		}
	}
	if end := listsOf(p); !slices.Equal(end, sz.lists) {
		t.Errorf("lists at the end %v, when sized %v: some grew again", end, sz.lists)
	}
}

// watchSizing notes where a sizingPass's lists are once sized.
type watchSizing struct {
	*sizingPass
	lists []uintptr
}

func (w *watchSizing) Call(c *trace.Call) error {
	err := w.sizingPass.Call(c)
	if w.ncalls == w.at {
		w.lists = listsOf(w.rankPass)
	}
	return err
}

// listsOf is where each of a pass's non-empty lists' room starts.
func listsOf(p *rankPass) []uintptr {
	var l []uintptr
	add := func(ptr unsafe.Pointer, c int) {
		if c > 0 {
			l = append(l, uintptr(ptr))
		}
	}
	add(unsafe.Pointer(unsafe.SliceData(p.times)), cap(p.times))
	for d := range p.sends {
		add(unsafe.Pointer(unsafe.SliceData(p.sends[d])), cap(p.sends[d]))
		add(unsafe.Pointer(unsafe.SliceData(p.recvs[d])), cap(p.recvs[d]))
		add(unsafe.Pointer(unsafe.SliceData(p.colls[d])), cap(p.colls[d]))
	}
	return l
}
