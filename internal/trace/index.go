package trace

import (
	"bufio"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"slices"
)

// A time index of a rank file's events blocks, so that a reader wanting
// one stretch of time reads only the blocks that hold it (mpiscope view's
// timeline on a large trace). Building it reads each block's head and the
// first few bytes of its events (the time of its first event), seeking
// over the rest: a 1 GB trace is indexed without decompressing it. A
// block's events end before the next block of its thread begins (a
// thread's events do not overlap in time), so only each thread's last
// block is decoded in full, for its end. The index is kept in memory: it
// is never written into the job directory.

// BlockSpan is one events block (E or W) of a rank file and the ticks its
// events cover.
type BlockSpan struct {
	Off    int64  // file offset of the block (its kind byte)
	Size   int64  // the whole block: kind, length, payload, CRC
	Kind   byte   // BEvents or BRaw
	Tid    int    // the thread whose buffer it is
	Events uint64 // events in the block
	First  uint64 // ticks: the first event's T0
	Last   uint64 // ticks: no event of the block ends after it (the next block of its thread's First, or its own latest T1)
}

// indexHead is how much of an events block's payload the index reads at
// once: the payload's header and a first raw event (at most rawMaxLen
// bytes); a compressed block's stream is then read on as far as its first
// event needs (its Huffman tables: a few hundred bytes).
const indexHead = 512

// Index returns the time index of the rank's events blocks, in file order.
// A file cut short is indexed up to its last whole block; a damaged block
// (a head or first event that cannot be read) is a *CorruptError naming
// the file and offset.
func (r *Rank) Index() ([]BlockSpan, error) {
	f, err := os.Open(r.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	var spans []BlockSpan
	head := make([]byte, 16)
	buf := make([]byte, 0, indexHead)
	off := int64(len(Magic))
	for off < size {
		n, err := f.ReadAt(head, off)
		if n == 0 && err != nil {
			return nil, &CorruptError{r.Path, off, err}
		}
		kind := head[0]
		ln, k := binary.Uvarint(head[1:n])
		if k <= 0 {
			break // cut short (or damaged): the reader says which
		}
		pstart := off + 1 + int64(k)
		end := pstart + int64(ln) + 4
		if ln > maxBlock || end > size {
			break // the rest is a block cut short
		}
		if kind == BEvents || kind == BRaw {
			m := min(int64(ln), indexHead)
			buf = buf[:m]
			if _, err := f.ReadAt(buf, pstart); err != nil {
				return nil, &CorruptError{r.Path, off, err}
			}
			s := BlockSpan{Off: off, Size: end - off, Kind: kind}
			if err := firstEvent(&s, buf, f, pstart, int64(ln), r.Version); err != nil {
				return nil, &CorruptError{r.Path, off, fmt.Errorf("block %q: %v", kind, err)}
			}
			if s.Events > 0 {
				spans = append(spans, s)
			}
		}
		off = end
	}
	// Each block ends where the next of its thread begins; each thread's
	// last block is read in full for its end.
	last := map[int]int{}
	for i := range spans {
		if j, ok := last[spans[i].Tid]; ok {
			spans[j].Last = max(spans[i].First, spans[j].First)
		}
		last[spans[i].Tid] = i
	}
	var evs []Event
	var dec evDecoder
	for _, j := range last {
		_, evs, err = r.readBlock(f, &dec, spans[j], evs[:0])
		if err != nil {
			return nil, err
		}
		s := &spans[j]
		s.Last = s.First
		for _, e := range evs {
			s.Last = max(s.Last, e.T1, e.T0)
		}
	}
	return spans, nil
}

// firstEvent reads an events block's thread, event count and first
// event's time from the start of its payload p (the whole payload is ln
// bytes at pstart in f; ver is the file's format version).
func firstEvent(s *BlockSpan, p []byte, f io.ReaderAt, pstart, ln int64, ver int) error {
	d := dec{b: p}
	s.Tid = d.n(1 << 31)
	s.Events = d.u()
	if s.Kind == BRaw {
		size := d.n(maxBlock)
		if d.err != nil {
			return d.err
		}
		if s.Events == 0 {
			return nil
		}
		if int64(size) != ln-int64(len(p)-len(d.b)) {
			return fmt.Errorf("raw events: %d bytes, header says %d", ln-int64(len(p)-len(d.b)), size)
		}
		evs, err := decodeRawRecords(d.b, 1, nil, false) // p: the payload's first indexHead bytes
		if err != nil {
			return err
		}
		s.First = evs[0].T0
		return nil
	}
	d.n(maxRaw)
	if d.err != nil {
		return d.err
	}
	if s.Events == 0 {
		return nil
	}
	// The first event's t0 (a delta from 0): decompress the stream's
	// first bytes only.
	at := pstart + int64(len(p)-len(d.b))
	fr := flate.NewReader(bufio.NewReaderSize(io.NewSectionReader(f, at, ln-(at-pstart)), 1024))
	defer fr.Close()
	var raw [64]byte
	n, err := io.ReadFull(fr, raw[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("decompressing events: %v", err)
	}
	s.First, err = firstT0(raw[:n], ver)
	return err
}

// ReadBlock decodes the events block s of the rank's file (a span from
// Index), checking its CRC, appending its events to evs.
func (r *Rank) ReadBlock(s BlockSpan, evs []Event) (tid int, out []Event, err error) {
	var d BlockDecoder
	return d.read(r, s, evs)
}

// BlockDecoder decodes blocks of an index one at a time, reusing its
// buffers (a reader of many blocks allocates nothing per block once
// they have grown). One goroutine uses it at a time.
type BlockDecoder struct {
	buf []byte
	dec evDecoder
	evs []Event
}

// Read decodes block s of r's file as ReadBlock does; the events are valid
// until the next Read.
func (d *BlockDecoder) Read(r *Rank, s BlockSpan) (tid int, evs []Event, err error) {
	tid, d.evs, err = d.read(r, s, d.evs[:0])
	return tid, d.evs, err
}

func (d *BlockDecoder) read(r *Rank, s BlockSpan, evs []Event) (int, []Event, error) {
	f, err := os.Open(r.Path)
	if err != nil {
		return 0, evs, err
	}
	defer f.Close()
	return r.readBlockBuf(f, &d.dec, &d.buf, s, evs)
}

func (r *Rank) readBlock(f io.ReaderAt, dec *evDecoder, s BlockSpan, evs []Event) (tid int, out []Event, err error) {
	var buf []byte
	return r.readBlockBuf(f, dec, &buf, s, evs)
}

func (r *Rank) readBlockBuf(f io.ReaderAt, dec *evDecoder, buf *[]byte, s BlockSpan, evs []Event) (tid int, out []Event, err error) {
	if s.Size < 6 || s.Size > maxBlock+16 {
		return 0, evs, &CorruptError{r.Path, s.Off, fmt.Errorf("block of %d bytes", s.Size)}
	}
	if int64(cap(*buf)) < s.Size {
		*buf = make([]byte, s.Size)
	}
	b := (*buf)[:s.Size]
	if _, err := f.ReadAt(b, s.Off); err != nil {
		return 0, evs, &CorruptError{r.Path, s.Off, err}
	}
	ln, k := binary.Uvarint(b[1:])
	if k <= 0 || b[0] != s.Kind || int64(1+k)+int64(ln)+4 != s.Size {
		return 0, evs, &CorruptError{r.Path, s.Off, errors.New("not the indexed block (the file changed?)")}
	}
	p := b[1+k : len(b)-4]
	if crc := binary.LittleEndian.Uint32(b[len(b)-4:]); crc != crc32.Update(crc32.ChecksumIEEE(b[:1]), crc32.IEEETable, p) {
		return 0, evs, &CorruptError{r.Path, s.Off, fmt.Errorf("block %q: bad checksum", s.Kind)}
	}
	dec.ver = r.Version
	decode := dec.decode
	if s.Kind == BRaw {
		decode = DecodeRaw
	}
	tid, out, err = decode(p, evs)
	if err != nil {
		return 0, out, &CorruptError{r.Path, s.Off, fmt.Errorf("block %q: %v", s.Kind, err)}
	}
	r.resolvePaths(tid, out[len(evs):]) // call paths' keys to callsites (paths.go)
	return tid, out, nil
}

// SpansIn returns the spans of index (a rank's, in file order) that hold
// events between ticks t0 and t1 (inclusive).
func SpansIn(index []BlockSpan, t0, t1 uint64) []BlockSpan {
	return slices.DeleteFunc(slices.Clone(index), func(s BlockSpan) bool { return s.Last < t0 || s.First > t1 })
}
