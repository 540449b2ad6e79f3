package trace

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// Raw (W) blocks hold a thread's buffer as the C recorder wrote it
// (internal/interpose/trace.h): after the header (thread id, event count,
// byte count), variable-size little-endian records:
//
//	head (24 bytes): 0 t0 u64 | 8 pc u64 | 16 dt u32 |
//	    20 w1 u16 = fn (10 bits) | kind << 10 (3 bits) | long << 15 |
//	    22 w2 u16 = communicator id + 1 (11 bits, 0: none) | flags << 11
//	tail (48 bytes, when long): 0 t1 u64 | 8 req u64 | 16 sbytes i64 |
//	    24 rbytes i64 | 32 speer i32 | 36 stag i32 | 40 rpeer i32 | 44 rtag i32
//
// A short record's t1 is t0 + dt. As in E blocks, the message fields are
// meaningful only where the flags say so; the reader ignores the others.
const (
	rawHead   = 24
	rawTail   = 48
	rawLong   = 0x8000
	rawMaxLen = rawHead + rawTail
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
	n = d.n(maxBlock / rawHead)
	size := d.n(maxBlock)
	if d.err != nil {
		return 0, 0, nil, d.err
	}
	if len(d.b) != size {
		return 0, 0, nil, fmt.Errorf("raw events: %d bytes, header says %d", len(d.b), size)
	}
	if n*rawHead > size || n*rawMaxLen < size {
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

// DecodeRawRecords decodes n records, appending to evs.
func DecodeRawRecords(b []byte, n int, evs []Event) ([]Event, error) {
	le := binary.LittleEndian
	off := 0
	for i := 0; i < n; i++ {
		if len(b)-off < rawHead {
			return evs, fmt.Errorf("event %d of %d at byte %d: %v", i, n, off, errShort)
		}
		r := b[off:]
		w1, w2 := le.Uint16(r[20:]), le.Uint16(r[22:])
		v := Event{T0: le.Uint64(r[0:]), PC: le.Uint64(r[8:]),
			Fn: w1 & 0x3ff, Kind: uint8(w1>>10) & 7, Comm: int32(w2&0x7ff) - 1, Flags: uint8(w2 >> 11),
			SPeer: -1, STag: -1, RPeer: -1, RTag: -1}
		v.T1 = v.T0 + uint64(le.Uint32(r[16:]))
		if v.Kind < KCall || v.Kind > KMark {
			return evs, fmt.Errorf("event %d of %d at byte %d: unknown kind %d", i, n, off, v.Kind)
		}
		off += rawHead
		if w1&rawLong != 0 {
			if len(b)-off < rawTail {
				return evs, fmt.Errorf("event %d of %d at byte %d: %v", i, n, off, errShort)
			}
			x := b[off:]
			off += rawTail
			v.T1 = le.Uint64(x[0:])
			if v.Flags&FReq != 0 || v.Kind == KComplete {
				v.Req = le.Uint64(x[8:])
			}
			if v.Flags&(FSend|FColl) != 0 {
				v.SPeer, v.STag, v.SBytes = int32(le.Uint32(x[32:])), int32(le.Uint32(x[36:])), int64(le.Uint64(x[16:]))
			}
			if v.Flags&FRecv != 0 {
				v.RPeer, v.RTag, v.RBytes = int32(le.Uint32(x[40:])), int32(le.Uint32(x[44:])), int64(le.Uint64(x[24:]))
			}
		}
		if v.T1 < v.T0 {
			v.T1 = v.T0
		}
		evs = append(evs, v)
	}
	if off != len(b) {
		return evs, fmt.Errorf("%d bytes after the last of %d events", len(b)-off, n)
	}
	return evs, nil
}

// AppendRaw encodes events as a raw block's payload, as the C recorder
// does (tests, tools).
func AppendRaw(dst []byte, tid int, evs []Event) []byte {
	le := binary.LittleEndian
	var body []byte
	for i := range evs {
		v := &evs[i]
		var r [rawMaxLen]byte
		dt := v.T1 - v.T0
		long := v.Flags != 0 || v.Kind == KComplete || dt > math.MaxUint32
		le.PutUint64(r[0:], v.T0)
		le.PutUint64(r[8:], v.PC)
		le.PutUint32(r[16:], uint32(dt))
		w1 := v.Fn&0x3ff | uint16(v.Kind&7)<<10
		if long {
			w1 |= rawLong
		}
		le.PutUint16(r[20:], w1)
		le.PutUint16(r[22:], uint16(v.Comm+1)&0x7ff|uint16(v.Flags)<<11)
		if !long {
			body = append(body, r[:rawHead]...)
			continue
		}
		x := r[rawHead:]
		le.PutUint64(x[0:], v.T1)
		le.PutUint64(x[8:], v.Req)
		le.PutUint64(x[16:], uint64(v.SBytes))
		le.PutUint64(x[24:], uint64(v.RBytes))
		le.PutUint32(x[32:], uint32(v.SPeer))
		le.PutUint32(x[36:], uint32(v.STag))
		le.PutUint32(x[40:], uint32(v.RPeer))
		le.PutUint32(x[44:], uint32(v.RTag))
		body = append(body, r[:]...)
	}
	dst = RawHeader(dst, tid, uint64(len(evs)), len(body))
	return append(dst, body...)
}

// Pack rewrites a trace file with its raw (W) blocks compressed into
// events (E) blocks, the other blocks unchanged, through a temporary file
// renamed over the original. A file without raw blocks is left alone. A
// truncated file is packed up to its last whole block.
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
	raw := 0
	for {
		off := br.Offset()
		kind, p, err := br.Next()
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
		if kind != BRaw {
			bw.Block(kind, p)
			continue
		}
		raw++
		tid, out, err := DecodeRaw(p, evs[:0])
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
