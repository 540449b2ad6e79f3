package trace

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// RawEventSize is the size of one event in a raw (W) block: the C
// recorder's struct ms_tev (internal/interpose/trace.h), little-endian:
//
//	 0 t0 u64 | 8 t1 u64 | 16 pc u64 | 24 req u64 | 32 sbytes i64 |
//	40 rbytes i64 | 48 speer i32 | 52 stag i32 | 56 rpeer i32 |
//	60 rtag i32 | 64 comm i32 | 68 fn u16 | 70 kind u8 | 71 flags u8
//
// As in E blocks, the message fields are meaningful only where the flags
// say so; the reader ignores the others.
const RawEventSize = 72

// RawHeader returns the start of a raw block's payload (thread id, event
// count, event size); the events follow.
func RawHeader(dst []byte, tid, n int) []byte {
	dst = binary.AppendUvarint(dst, uint64(tid))
	dst = binary.AppendUvarint(dst, uint64(n))
	return binary.AppendUvarint(dst, RawEventSize)
}

// rawHead reads a raw block's header; body is the events.
func rawHead(p []byte) (tid, n int, body []byte, err error) {
	d := dec{b: p}
	tid = d.n(1 << 31)
	n = d.n(maxBlock / RawEventSize)
	size := d.n(1 << 16)
	if d.err != nil {
		return 0, 0, nil, d.err
	}
	if size < RawEventSize {
		return 0, 0, nil, fmt.Errorf("raw event size %d, want at least %d", size, RawEventSize)
	}
	if len(d.b) != n*size {
		return 0, 0, nil, fmt.Errorf("%d raw events of %d bytes in %d bytes", n, size, len(d.b))
	}
	if size != RawEventSize {
		// A newer writer with longer records: keep the known prefix.
		compact := make([]byte, 0, n*RawEventSize)
		for i := 0; i < n; i++ {
			compact = append(compact, d.b[i*size:i*size+RawEventSize]...)
		}
		d.b = compact
	}
	return tid, n, d.b, nil
}

// DecodeRaw decodes a raw block's payload, appending to evs.
func DecodeRaw(p []byte, evs []Event) (tid int, out []Event, err error) {
	tid, n, b, err := rawHead(p)
	if err != nil {
		return 0, evs, err
	}
	le := binary.LittleEndian
	for i := 0; i < n; i++ {
		r := b[i*RawEventSize : (i+1)*RawEventSize]
		v := Event{T0: le.Uint64(r[0:]), T1: le.Uint64(r[8:]), PC: le.Uint64(r[16:]),
			Comm: int32(le.Uint32(r[64:])), Fn: le.Uint16(r[68:]), Kind: r[70], Flags: r[71],
			SPeer: -1, STag: -1, RPeer: -1, RTag: -1}
		if v.Kind < KCall || v.Kind > KMark {
			return 0, evs, fmt.Errorf("event %d of %d: unknown kind %d", i, n, v.Kind)
		}
		if v.T1 < v.T0 {
			v.T1 = v.T0
		}
		if v.Flags&FReq != 0 || v.Kind == KComplete {
			v.Req = le.Uint64(r[24:])
		}
		if v.Flags&(FSend|FColl) != 0 {
			v.SPeer, v.STag, v.SBytes = int32(le.Uint32(r[48:])), int32(le.Uint32(r[52:])), int64(le.Uint64(r[32:]))
		}
		if v.Flags&FRecv != 0 {
			v.RPeer, v.RTag, v.RBytes = int32(le.Uint32(r[56:])), int32(le.Uint32(r[60:])), int64(le.Uint64(r[40:]))
		}
		evs = append(evs, v)
	}
	return tid, evs, nil
}

// AppendRaw encodes events as a raw block's payload (tests, tools).
func AppendRaw(dst []byte, tid int, evs []Event) []byte {
	dst = RawHeader(dst, tid, len(evs))
	le := binary.LittleEndian
	for i := range evs {
		v := &evs[i]
		var r [RawEventSize]byte
		le.PutUint64(r[0:], v.T0)
		le.PutUint64(r[8:], v.T1)
		le.PutUint64(r[16:], v.PC)
		le.PutUint64(r[24:], v.Req)
		le.PutUint64(r[32:], uint64(v.SBytes))
		le.PutUint64(r[40:], uint64(v.RBytes))
		le.PutUint32(r[48:], uint32(v.SPeer))
		le.PutUint32(r[52:], uint32(v.STag))
		le.PutUint32(r[56:], uint32(v.RPeer))
		le.PutUint32(r[60:], uint32(v.RTag))
		le.PutUint32(r[64:], uint32(v.Comm))
		le.PutUint16(r[68:], v.Fn)
		r[70], r[71] = v.Kind, v.Flags
		dst = append(dst, r[:]...)
	}
	return dst
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
