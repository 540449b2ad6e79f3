package trace

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// Raw (W) blocks hold a thread's buffer as the C recorder wrote it
// (internal/interpose/trace.h): after the header (thread id, event count,
// byte count), variable-size little-endian records. Each block has a
// dictionary of 1024 event shapes (everything but the times and the
// request), empty at the start of the block:
//
//	short (12 bytes, 20 with R): 0 h u32 = 1 | R << 1 | slot << 2 | dt << 12 |
//	    4 t0 u64 | [12 req u64]: the event in the slot, at these times
//	full (32 bytes, 72 with L): 0 h u32 = 0 | L << 1 | slot << 2 | kind (6 bits) << 12 |
//	    4 fn u16 | 6 w2 u16 = communicator id + 1 (11 bits, 0: none) | flags << 11 |
//	    8 t0 u64 | 16 dt u64 | 24 pc u64 | with L a tail: 32 req u64 |
//	    40 sbytes i64 | 48 rbytes i64 | 56 speer i32 | 60 stag i32 |
//	    64 rpeer i32 | 68 rtag i32; the event also goes into the slot.
//
// Without L the tail's fields are 0 (bytes, request) and -1 (peers, tags).
// A collective's stag is its root in the communicator (-1: none).
//
// Since format version 4 a completion call of several requests (MPI_Waitall,
// MPI_Testall, MPI_Waitsome, MPI_Testsome) writes the completions it found
// as one record, a header and an entry per completion, in the order they
// were recorded one by one before:
//
//	completions (16 bytes + 8 to 24 per completion): 0 h u32 = 0 | 9 << 12 |
//	    count << 18 (1 to 16383) | 4 fn u16 | 6 zero u16 | 8 t u64 (the call's
//	    end), then count entries: u64 e = request (56 bits, sign-extended
//	    from bit 55) | flags << 56 (5 bits) | N << 63, with N the receive
//	    fields: i32 rpeer, i32 rtag, i64 rbytes
//
// Each entry is a completion event (KComplete) of function fn at t, no
// communicator, no callsite, the send fields at their defaults; its
// receive fields, when its flags announce them (FRecv, FLocal), are the
// last ones an entry of the record gave (N), at first -1, -1, 0; without
// them the defaults. Bits 61 and 62 are zero. These records use no
// dictionary slot. Since format version 5 a run of posts of one shape is
// one posts record (rawposts.go).
const (
	rawShort  = 12
	rawFull   = 32
	rawTail   = 40
	rawMaxLen = rawFull + rawTail
	rawSlots  = 1 << 10

	rawCpls      = RawCpls
	rawCplsHead  = 16 // its header
	rawCplsEntry = 8  // an entry without receive fields: the fewest bytes an event takes
	rawCplsRecv  = 16 // the receive fields after an entry with N
	rawCplsMax   = 1<<14 - 1
)

// RawHeader returns the start of a raw block's payload; the records
// (bytes of them) follow.
func RawHeader(dst []byte, tid int, n uint64, bytes int) []byte {
	dst = binary.AppendUvarint(dst, uint64(tid))
	dst = binary.AppendUvarint(dst, n)
	return binary.AppendUvarint(dst, uint64(bytes))
}

// rawHeader reads a raw block's header; body is the records.
func rawHeader(p []byte) (tid, n int, body []byte, err error) {
	d := dec{b: p}
	tid = d.n(1 << 31)
	n = d.n(maxBlock / rawCplsEntry)
	size := d.n(maxBlock)
	if d.err != nil {
		return 0, 0, nil, d.err
	}
	if len(d.b) != size {
		return 0, 0, nil, fmt.Errorf("raw events: %d bytes, header says %d", len(d.b), size)
	}
	if n*rawCplsEntry > size || n*rawMaxLen < size {
		return 0, 0, nil, fmt.Errorf("%d raw events cannot take %d bytes", n, size)
	}
	return tid, n, d.b, nil
}

// DecodeRaw decodes a raw block's payload, appending to evs.
func DecodeRaw(p []byte, evs []Event) (tid int, out []Event, err error) {
	tid, n, b, err := rawHeader(p)
	if err != nil {
		return 0, evs, err
	}
	out, err = DecodeRawRecords(b, n, evs)
	return tid, out, err
}

// DecodeRawRecords decodes the n records of one block, appending to evs.
func DecodeRawRecords(b []byte, n int, evs []Event) ([]Event, error) {
	return decodeRawRecords(b, n, evs, true)
}

// decodeRawRecords decodes n records from the start of b; whole: b is the
// block's records, all n of them (bytes after the last are an error), or
// only a prefix holding the first n (the time index reads the first).
func decodeRawRecords(b []byte, n int, evs []Event, whole bool) ([]Event, error) {
	le := binary.LittleEndian
	var dict [rawSlots]Event
	var have [rawSlots]bool
	evs = slices.Grow(evs, min(n, len(b)/rawShort+1)) // what the data can hold
	off := 0
	for i := 0; i < n; i++ {
		if len(b)-off < rawShort {
			return evs, fmt.Errorf("event %d of %d at byte %d: %v", i, n, off, errShort)
		}
		r := b[off:]
		h := le.Uint32(r)
		slot := h >> 2 & (rawSlots - 1)
		if h&1 != 0 {
			if !have[slot] {
				return evs, fmt.Errorf("event %d of %d at byte %d: slot %d not defined in this block", i, n, off, slot)
			}
			v := dict[slot]
			v.T0 = le.Uint64(r[4:])
			v.T1 = max(v.T0+uint64(h>>12), v.T0)
			off += rawShort
			if h&2 != 0 {
				if len(b)-off < 8 {
					return evs, fmt.Errorf("event %d of %d at byte %d: %v", i, n, off, errShort)
				}
				v.Req = le.Uint64(b[off:])
				off += 8
			}
			evs = append(evs, v)
			continue
		}
		if h>>12&0x3f == rawCpls {
			k, used, err := decodeCpls(b[off:], n-i, &evs, whole)
			if err != nil {
				return evs, fmt.Errorf("event %d of %d at byte %d: %v", i, n, off, err)
			}
			i += k - 1
			off += used
			continue
		}
		if h>>12&0x3f == rawPosts {
			if !have[slot] {
				return evs, fmt.Errorf("event %d of %d at byte %d: slot %d not defined in this block", i, n, off, slot)
			}
			k, used, err := decodePosts(b[off:], n-i, &dict[slot], &evs, whole)
			if err != nil {
				return evs, fmt.Errorf("event %d of %d at byte %d: %v", i, n, off, err)
			}
			i += k - 1
			off += used
			continue
		}
		if len(b)-off < rawFull {
			return evs, fmt.Errorf("event %d of %d at byte %d: %v", i, n, off, errShort)
		}
		w2 := le.Uint16(r[6:])
		v := Event{Kind: uint8(h>>12) & 0x3f, Fn: le.Uint16(r[4:]) & 0x3ff, Comm: int32(w2&0x7ff) - 1, Flags: uint8(w2 >> 11),
			T0: le.Uint64(r[8:]), PC: le.Uint64(r[24:]), SPeer: -1, STag: -1, RPeer: -1, RTag: -1}
		if v.Kind < KCall || v.Kind > KIo {
			return evs, fmt.Errorf("event %d of %d at byte %d: unknown kind %d", i, n, off, v.Kind)
		}
		dt := le.Uint64(r[16:])
		v.T1 = v.T0 + dt
		if v.T1 < v.T0 {
			v.T1 = v.T0
		}
		off += rawFull
		if h&2 != 0 {
			if len(b)-off < rawTail {
				return evs, fmt.Errorf("event %d of %d at byte %d: %v", i, n, off, errShort)
			}
			x := b[off:]
			off += rawTail
			v.Req = le.Uint64(x[0:])
			v.SBytes, v.RBytes = int64(le.Uint64(x[8:])), int64(le.Uint64(x[16:]))
			v.SPeer, v.STag = int32(le.Uint32(x[24:])), int32(le.Uint32(x[28:]))
			v.RPeer, v.RTag = int32(le.Uint32(x[32:])), int32(le.Uint32(x[36:]))
		}
		evs = append(evs, v)
		v.Req = 0
		dict[slot], have[slot] = v, true
	}
	if whole && off != len(b) {
		return evs, fmt.Errorf("%d bytes after the last of %d events", len(b)-off, n)
	}
	return evs, nil
}

// RawCpls is the kind field of a raw block's completions record
// (MS_TK_CPLS in internal/interpose/trace.h), which the decoder expands
// into one completion event per entry: not an event kind.
const RawCpls = 9

// decodeCpls decodes a completions record at the start of b, appending
// its events to evs, and returns how many it appended and the bytes it
// took. At most left events remain in the block: a record with more is an
// error, unless whole is false (a prefix of the block: the rest of the
// record is not read).
func decodeCpls(b []byte, left int, evs *[]Event, whole bool) (n, used int, err error) {
	le := binary.LittleEndian
	if len(b) < rawCplsHead {
		return 0, 0, errShort
	}
	h := le.Uint32(b)
	count := int(h >> 18)
	if h&0xfff != 0 || le.Uint16(b[6:]) != 0 || le.Uint16(b[4:]) > 0x3ff || count == 0 {
		return 0, 0, fmt.Errorf("bad completions record (header %#x)", h)
	}
	if count > left {
		if whole {
			return 0, 0, fmt.Errorf("completions record of %d events, %d left in the block", count, left)
		}
		count = left
	}
	fn, t := le.Uint16(b[4:]), le.Uint64(b[8:])
	rpeer, rtag, rbytes := int32(-1), int32(-1), int64(0)
	off := rawCplsHead
	for k := 0; k < count; k++ {
		if len(b)-off < rawCplsEntry {
			return 0, 0, fmt.Errorf("completion %d of %d: %v", k, count, errShort)
		}
		e := le.Uint64(b[off:])
		off += rawCplsEntry
		v := Event{Kind: KComplete, Flags: uint8(e >> 56 & 0x1f), Fn: fn, Comm: -1, T0: t, T1: t,
			Req: uint64(int64(e<<8) >> 8), SPeer: -1, STag: -1, RPeer: -1, RTag: -1}
		recv := v.recvFields()
		if e>>61&3 != 0 || e>>63 != 0 && !recv {
			return 0, 0, fmt.Errorf("completion %d of %d: bad entry %#x", k, count, e)
		}
		if e>>63 != 0 {
			if len(b)-off < rawCplsRecv {
				return 0, 0, fmt.Errorf("completion %d of %d: %v", k, count, errShort)
			}
			rpeer, rtag = int32(le.Uint32(b[off:])), int32(le.Uint32(b[off+4:]))
			rbytes = int64(le.Uint64(b[off+8:]))
			off += rawCplsRecv
		}
		if recv {
			v.RPeer, v.RTag, v.RBytes = rpeer, rtag, rbytes
		}
		*evs = append(*evs, v)
	}
	return count, off, nil
}

// cplsEntry tells whether a completions record can hold event v as an
// entry: a completion of no communicator and callsite at one time, its
// send fields at their defaults and its receive fields too unless its
// flags announce them, its request within 56 bits (sign-extended).
func cplsEntry(v *Event) bool {
	return v.Kind == KComplete && v.T0 == v.T1 && v.PC == 0 && v.Comm == -1 && v.Fn <= 0x3ff && v.Flags < 32 &&
		v.SPeer == -1 && v.STag == -1 && v.SBytes == 0 && uint64(int64(v.Req<<8)>>8) == v.Req &&
		(v.recvFields() || v.RPeer == -1 && v.RTag == -1 && v.RBytes == 0)
}

// appendCpls appends the completions record of evs (cplsEntry holds for
// each; one function and time).
func appendCpls(body []byte, evs []Event) []byte {
	le := binary.LittleEndian
	body = le.AppendUint32(body, rawCpls<<12|uint32(len(evs))<<18)
	body = le.AppendUint16(body, evs[0].Fn)
	body = le.AppendUint16(body, 0)
	body = le.AppendUint64(body, evs[0].T0)
	rpeer, rtag, rbytes := int32(-1), int32(-1), int64(0)
	for i := range evs {
		v := &evs[i]
		e := v.Req&(1<<56-1) | uint64(v.Flags)<<56
		if v.recvFields() && (v.RPeer != rpeer || v.RTag != rtag || v.RBytes != rbytes) {
			rpeer, rtag, rbytes = v.RPeer, v.RTag, v.RBytes
			body = le.AppendUint64(body, e|1<<63)
			body = le.AppendUint32(body, uint32(rpeer))
			body = le.AppendUint32(body, uint32(rtag))
			body = le.AppendUint64(body, uint64(rbytes))
			continue
		}
		body = le.AppendUint64(body, e)
	}
	return body
}

// rawShape is what the dictionary compares: an event without its times
// and request, with the fields its flags do not announce set to the
// recorder's defaults.
func rawShape(v Event) Event {
	s := Event{Kind: v.Kind, Flags: v.Flags, Fn: v.Fn, Comm: v.Comm, PC: v.PC, SPeer: -1, STag: -1, RPeer: -1, RTag: -1}
	if v.sendFields() {
		s.SPeer, s.STag, s.SBytes = v.SPeer, v.STag, v.SBytes
	}
	if v.recvFields() {
		s.RPeer, s.RTag, s.RBytes = v.RPeer, v.RTag, v.RBytes
	}
	return s
}

// AppendRaw encodes events as a raw block's payload, as the C recorder
// does (tests, tools), with a dictionary of its own: repeated shapes take
// short records, two or more completions of one call at one time in a
// row (what a completion call of several requests finds) one completions
// record, and two or more posts of a shape already in the dictionary in a
// row one posts record.
func AppendRaw(dst []byte, tid int, evs []Event) []byte {
	le := binary.LittleEndian
	var body []byte
	slots := map[Event]uint32{}
	var owner [rawSlots]Event
	next := uint32(0)
	for i := 0; i < len(evs); i++ {
		v := &evs[i]
		if j := i; cplsEntry(v) {
			for j < len(evs) && j-i < rawCplsMax && cplsEntry(&evs[j]) && evs[j].Fn == v.Fn && evs[j].T0 == v.T0 {
				j++
			}
			if j-i >= 2 {
				body = appendCpls(body, evs[i:j])
				i = j - 1
				continue
			}
		}
		dt := v.T1 - v.T0
		shape := rawShape(*v)
		if slot, ok := slots[shape]; ok {
			if j := postsRun(evs, i); j-i >= 2 {
				body = appendPosts(body, slot, evs[i:j])
				i = j - 1
				continue
			}
		}
		hasReq := v.Flags&FReq != 0 || v.Kind == KComplete || v.Kind == KPost
		req := uint64(0)
		if hasReq {
			req = v.Req
		}
		if slot, ok := slots[shape]; ok && dt < 1<<20 {
			h := 1 | slot<<2 | uint32(dt)<<12
			if hasReq {
				h |= 2
			}
			body = le.AppendUint32(body, h)
			body = le.AppendUint64(body, v.T0)
			if hasReq {
				body = le.AppendUint64(body, req)
			}
			continue
		}
		slot, ok := slots[shape]
		if !ok {
			slot = next % rawSlots
			next++
			if next > rawSlots {
				delete(slots, owner[slot])
			}
			owner[slot] = shape
			slots[shape] = slot
		}
		long := hasReq || shape.Flags != 0 || shape.SPeer != -1 || shape.STag != -1 || shape.RPeer != -1 ||
			shape.RTag != -1 || shape.SBytes != 0 || shape.RBytes != 0
		h := slot<<2 | uint32(v.Kind&0x3f)<<12
		if long {
			h |= 2
		}
		body = le.AppendUint32(body, h)
		body = le.AppendUint16(body, v.Fn&0x3ff)
		body = le.AppendUint16(body, uint16(v.Comm+1)&0x7ff|uint16(v.Flags)<<11)
		body = le.AppendUint64(body, v.T0)
		body = le.AppendUint64(body, dt)
		body = le.AppendUint64(body, v.PC)
		if long {
			body = le.AppendUint64(body, req)
			body = le.AppendUint64(body, uint64(shape.SBytes))
			body = le.AppendUint64(body, uint64(shape.RBytes))
			body = le.AppendUint32(body, uint32(shape.SPeer))
			body = le.AppendUint32(body, uint32(shape.STag))
			body = le.AppendUint32(body, uint32(shape.RPeer))
			body = le.AppendUint32(body, uint32(shape.RTag))
		}
	}
	dst = RawHeader(dst, tid, uint64(len(evs)), len(body))
	return append(dst, body...)
}

// Pack rewrites a trace file with its raw (W) blocks compressed into
// events (E) blocks, the other blocks unchanged, through a temporary file
// renamed over the original. The file written has the current format
// version: the events blocks of a file of an earlier version are encoded
// again. A file without raw blocks is left alone. A truncated file is
// packed up to its last whole block.
func Pack(path string) (err error) {
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	br, err := NewBlockReader(in, path)
	if err != nil {
		return err
	}
	tmp := path + ".pack"
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			out.Close()
			os.Remove(tmp)
		}
	}()
	bw, err := NewBlockWriter(out)
	if err != nil {
		return err
	}
	fw, _ := flate.NewWriter(nil, flate.BestSpeed)
	var scratch bytes.Buffer
	var evs []Event
	old := evDecoder{ver: br.Version()}
	raw := 0
	for {
		kind, p, err := br.Next()
		off := br.Start()
		if err == io.EOF {
			break
		}
		var te *TruncatedError
		if errors.As(err, &te) {
			break
		}
		if err != nil {
			return err
		}
		if kind != BRaw && (kind != BEvents || !old.v5()) {
			bw.Block(kind, p)
			continue
		}
		decode := old.decode
		if kind == BRaw {
			raw++
			decode = DecodeRaw
		}
		tid, out, err := decode(p, evs[:0])
		if err != nil {
			return &CorruptError{path, off, fmt.Errorf("block %q: %v", kind, err)}
		}
		evs = out
		q, err := AppendEvents(nil, tid, evs, fw, &scratch)
		if err != nil {
			return err
		}
		if err := bw.Block(BEvents, q); err != nil {
			return err
		}
	}
	if raw == 0 {
		out.Close()
		os.Remove(tmp)
		return nil
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
