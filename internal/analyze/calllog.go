package analyze

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
)

// callLog keeps what the critical path's function and callsite shares
// need of a rank's calls, in the order the walk visits them: entry, exit
// and (function, callsite). The shares are then taken from it once the
// path is known, instead of decoding the rank's trace a second time
// (pathKeys). The times are kept exactly, as the differences of their
// float64 bits from the previous call's entry (close times: close bits):
// a byte of their two lengths in bytes, their bytes (little-endian, no
// loop to write or read them), then the key's number as a varint; about
// 11 bytes a call, at most callLogBytes when the log is weighed against
// the analysis' memory bound.
//
// The log is cut in runs of about runBytes bytes (logSpan), each with its
// earliest entry and latest exit: pathKeys decodes only the runs a segment
// of the path overlaps. Since 2026-11-28 (late night) a run ends by its
// bytes, not by a count of calls (one compare a call for the run and the
// buffer), and is shorter (about 20 calls instead of 64: on the synthetic
// trace, where the path moves between ranks every iteration or two, most
// runs of 64 calls overlapped it).
type callLog struct {
	b      []byte  // the buffer being written: the last of bufs
	pos    int     // bytes written in b
	end    int     // where the run being written ends: add starts the next (newRun) once pos reaches it
	prev   uint64  // the last entry's bits
	lo, hi float64 // the run being written's earliest entry and latest exit (its logSpan's once it ends)
	last0  float64 // the last entry
	back   bool    // an entry of the run being written went back (its logSpan's once it ends)
	bufs   [][]byte
	keys   []fnPC
	ids    map[fnPC]uint32
	byFn   []fnSlot  // by function id: the callsite it was last called from and that key's number: no hash a call
	spans  []logSpan // the runs; the last one's bounds are lo, hi and pos until it ends
	st     *store    // where the buffers and spans are (newCallLogIn; nil: the Go heap)
	want   int       // bytes the log is expected to take in all (newCallLogIn), left for its next buffer
}

// logSpan is a run of logged calls within one buffer: where it starts and
// ends, the entry bits before it (the differences' base), and the
// earliest entry and latest exit in it. pathKeys skips a run that no
// segment of the path overlaps without decoding it: none of its calls can
// add to a share (a call adds only where a segment overlaps it); and,
// unless an entry in the run goes back (back), the rest of a run once no
// segment it overlaps is left.
type logSpan struct {
	prev     uint64
	lo, hi   float64
	buf      int32
	off, end int32
	back     bool // an entry in the run is before the one logged before it: pathKeys reads the run to its end
}

// runBytes is about the bytes of a logSpan's run (a run ends with the call
// that reaches it): 40 bytes of logSpan per about 20 calls.
const runBytes = 224

// logBuf is the size of a log's buffers: it grows by buffers, not by
// copying.
const logBuf = 64 << 10

// fnPC is a call's function id and callsite address.
type fnPC struct {
	fn uint16
	pc uint64
}

// fnSlot is callLog.byFn's entry: a callsite and its key's number + 1 (0:
// none yet).
type fnSlot struct {
	pc uint64
	v1 uint32
}

// callLogBytes is what the log is taken to hold per event, when weighed
// against the memory bound (calls of 1 to 3 microseconds take 9 to 11
// bytes; more for longer gaps).
const callLogBytes = 12

func newCallLog() *callLog { return &callLog{ids: map[fnPC]uint32{}} }

// logBufMax bounds a buffer of a log in a store (logSpan's offsets are
// int32).
const logBufMax = 1 << 30

// newCallLogIn is a log of a rank of the given events whose buffers and
// runs are in st (2026-11-29): its first buffer and its list of runs sized
// for callLogBytes an event, so that neither grows by copies in the usual
// case (room not written is not touched: it costs no page), and all of it
// unmapped with st once the path's shares are taken, outside the Go heap
// meanwhile (the collector neither scans nor counts it). A nil st, or one
// whose mappings fail, is the Go heap's 64 KiB buffers.
func newCallLogIn(st *store, events uint64) *callLog {
	l := newCallLog()
	l.st = st
	l.want = int(min(events*callLogBytes, 1<<40)) + runBytes + logCallMax
	l.spans = storeGrow(st, l.spans, l.want/runBytes+16)
	return l
}

// nextBuf is a new buffer for the log: in its store when it has one (the
// bytes it is still expected to take, at least 1 MiB), else 64 KiB of
// the heap.
func (l *callLog) nextBuf() []byte {
	if l.st != nil {
		n := min(max(l.want, 1<<20), logBufMax)
		if b := storeBytes(l.st, n); b != nil {
			l.want -= n
			return b
		}
	}
	return make([]byte, logBuf)
}

// add logs a call.
func (l *callLog) add(fn uint16, pc uint64, t0, t1 float64) {
	var v uint32
	if int(fn) < len(l.byFn) && l.byFn[fn].pc == pc && l.byFn[fn].v1 != 0 {
		v = l.byFn[fn].v1 - 1
	} else {
		v = l.intern(fn, pc)
	}
	if l.pos >= l.end {
		l.newRun(t0, t1)
	}
	// Compares, not min and max: those of float64 look for NaN and -0,
	// a dozen instructions a call, which the run's bounds need not (a
	// NaN call overlaps no segment: its run need not be kept for it).
	if t0 < l.lo {
		l.lo = t0
	}
	if t1 > l.hi {
		l.hi = t1
	}
	if t0 < l.last0 {
		l.back = true
	}
	l.last0 = t0
	b0, b1 := math.Float64bits(t0), math.Float64bits(t1)
	z0, z1 := zigzag(b0-l.prev), zigzag(b1-b0)
	n0, n1 := (bits.Len64(z0)+7)>>3, (bits.Len64(z1)+7)>>3
	// A run starts with room for itself and one more call: the call's
	// bytes are an array's, at fixed places but the second time's.
	w := (*[logCallMax]byte)(l.b[l.pos:])
	w[0] = byte(n0<<4 | n1)
	binary.LittleEndian.PutUint64(w[1:9], z0) // 8 bytes written, n0 kept
	binary.LittleEndian.PutUint64(w[1+n0:], z1)
	j := 1 + n0 + n1
	if v < 0x80 {
		w[j] = byte(v)
		j++
	} else {
		j = putUv(l.b, l.pos+j, uint64(v)) - l.pos
	}
	l.pos, l.prev = l.pos+j, b0
}

// intern is the number of the key (fn, pc), numbered in the order first
// seen, and makes it fn's in byFn. Not inline: add's common path has no
// map calls.
//
//go:noinline
func (l *callLog) intern(fn uint16, pc uint64) uint32 {
	k := fnPC{fn, pc}
	v, ok := l.ids[k]
	if !ok {
		v = uint32(len(l.keys))
		l.ids[k] = v
		l.keys = append(l.keys, k)
	}
	if int(fn) >= len(l.byFn) {
		l.byFn = append(l.byFn, make([]fnSlot, int(fn)+1-len(l.byFn))...)
	}
	l.byFn[fn] = fnSlot{pc, v + 1}
	return v
}

// newRun ends the run being written and starts the next, in a new buffer
// when the current one has no room for a whole run (a run's last call may
// pass runBytes by at most logCallMax bytes).
func (l *callLog) newRun(t0, t1 float64) {
	l.seal()
	if l.b == nil || l.pos+runBytes+logCallMax > len(l.b) {
		l.b = l.nextBuf()
		l.bufs = append(l.bufs, l.b)
		l.pos = 0
	}
	if len(l.spans) == cap(l.spans) {
		l.spans = storeGrow(l.st, l.spans, 2*cap(l.spans)) // beyond the estimate: doubled, in the store when it can
	}
	l.spans = append(l.spans, logSpan{prev: l.prev, buf: int32(len(l.bufs) - 1), off: int32(l.pos)})
	l.end = l.pos + runBytes
	l.lo, l.hi, l.back = t0, t1, false
}

// seal writes the bounds and end of the run being written into its
// logSpan (again as it grows: pathKeys seals the log before it reads it).
func (l *callLog) seal() {
	if n := len(l.spans); n > 0 {
		sp := &l.spans[n-1]
		sp.lo, sp.hi, sp.end, sp.back = l.lo, l.hi, int32(l.pos), l.back
	}
}

// logCallMax is the most bytes add writes for a call: the lengths, two
// times (each written as 8 bytes) and a varint.
const logCallMax = 1 + 8 + 8 + binary.MaxVarintLen64

// lowBytes keeps the n low bytes of x (n <= 8): a mask from a table (a
// load; the shift it replaces, ^0 >> (64 - 8n), took a dozen
// instructions with Go's checks of a shift by 64 or more).
func lowBytes(x uint64, n int) uint64 { return x & byteMasks[n&15] }

// byteMasks[n] has the n low bytes set (n <= 8; lengths up to 15 fit the
// table, so the index needs no bounds check).
var byteMasks = [16]uint64{0, 0xff, 0xffff, 0xffffff, 0xffffffff, 0xff_ffffffff, 0xffff_ffffffff, 0xffffff_ffffffff,
	^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}

// putUv writes x as a varint at b[i:] (room checked by the caller) and
// returns the index after it: binary.AppendUvarint's bytes, without its
// appends.
func putUv(b []byte, i int, x uint64) int {
	for x >= 0x80 {
		b[i] = byte(x) | 0x80
		x >>= 7
		i++
	}
	b[i] = byte(x)
	return i + 1
}

// getUv reads the varint at b[i:] written by putUv and returns it and
// the index after it; b holds only whole varints.
func getUv(b []byte, i int) (uint64, int) {
	c := b[i]
	if c < 0x80 {
		return uint64(c), i + 1
	}
	x := uint64(c & 0x7f)
	for s := uint(7); ; s += 7 {
		i++
		c = b[i]
		if c < 0x80 {
			return x | uint64(c)<<s, i + 1
		}
		x |= uint64(c&0x7f) << s
	}
}

// zigzag maps a difference of two uint64 (wrapped) to a small number when
// it is small either way.
func zigzag(d uint64) uint64 { return d<<1 ^ uint64(int64(d)>>63) }

func unzigzag(z uint64) uint64 { return z>>1 ^ -(z & 1) }

// pathKeys is the MPI time of the logged calls on the path's segments ss
// (in time order) per function and callsite, as pathKeys reads it from
// the trace: the same sums, added in the same order.
func (l *callLog) pathKeys(ss [][2]float64) []pathKey {
	if len(ss) == 0 {
		return nil
	}
	l.seal()
	ns := make([]float64, len(l.keys))
	on := make([]bool, len(l.keys))
	k0, last := 0, math.Inf(-1)
	var bits uint64
	for si := range l.spans {
		sp := &l.spans[si]
		// The first segment ending after the run's earliest entry: the
		// run is skipped unless it starts before the run's latest exit.
		lo, hi := 0, len(ss)
		for lo < hi {
			if m := int(uint(lo+hi) >> 1); ss[m][1] <= sp.lo {
				lo = m + 1
			} else {
				hi = m
			}
		}
		if lo == len(ss) || ss[lo][0] >= sp.hi {
			continue
		}
		// Each call's search starts there (its entry is not before the
		// run's earliest), and again there when times go back (the next
		// thread's calls).
		first := lo
		k0, last = first, math.Inf(-1)
		b, i, end := l.bufs[sp.buf], int(sp.off), int(sp.end)
		bits = sp.prev
		for i < end {
			// Written by add: whole varints.
			r := (*[logCallMax]byte)(b[i:]) // add wrote it with this room
			h := r[0]
			n0, n1 := int(h>>4), int(h&15)
			d0 := lowBytes(binary.LittleEndian.Uint64(r[1:9]), n0)
			bits += unzigzag(d0)
			t0 := math.Float64frombits(bits)
			if t0 < last {
				k0 = first // a time going back (the next thread's calls)
			}
			last = t0
			for k0 < len(ss) && ss[k0][1] <= t0 {
				if k0+8 < len(ss) && ss[k0+8][1] <= t0 {
					lo, hi := k0+8, len(ss) // the first segment ending after t0: past lo, at most hi
					for lo < hi {
						if m := int(uint(lo+hi) >> 1); ss[m][1] <= t0 {
							lo = m + 1
						} else {
							hi = m
						}
					}
					k0 = lo
					break
				}
				k0++
			}
			if !sp.back && (k0 == len(ss) || ss[k0][0] >= sp.hi) {
				// No segment left that the run's calls overlap: those
				// before k0 end before t0, which the next calls' entries
				// do not go back before; those from k0 on start after
				// the run's latest exit.
				break
			}
			d1 := lowBytes(binary.LittleEndian.Uint64(r[1+n0:]), n1)
			j := 1 + n0 + n1
			x := uint64(r[j])
			if x < 0x80 {
				i += j + 1
			} else {
				x, i = getUv(b, i+j)
			}
			t1 := math.Float64frombits(bits + unzigzag(d1))
			for k := k0; k < len(ss) && ss[k][0] < t1; k++ {
				if o := min(t1, ss[k][1]) - max(t0, ss[k][0]); o > 0 {
					ns[x] += o
					on[x] = true
				}
			}
		}
	}
	var keys []pathKey
	for x, k := range l.keys {
		if on[x] {
			keys = append(keys, pathKey{k.fn, k.pc, ns[x]})
		}
	}
	slices.SortFunc(keys, func(a, b pathKey) int {
		if a.fn != b.fn {
			return int(a.fn) - int(b.fn)
		}
		return cmpU(a.pc, b.pc)
	})
	return keys
}

// pathKeysOf reads a rank's trace again for its path keys (when its calls
// were not logged); a variable for the tests, which count the readings.
var pathKeysOf = pathKeys
