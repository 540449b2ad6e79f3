package trace

import (
	"errors"
	"io"
	"sync"
)

// perfettoStreams is the number of ranks ConvertPerfetto formats at once,
// whatever the number of workers: its output interleaves their chunks in
// an order that depends on this number (and the chunk size), never on
// the workers or on timing. A variable for tests.
var perfettoStreams = 16

// perfettoChunk is the size at which a rank's records are handed to
// ConvertPerfetto's writer: a chunk holds whole records, this many bytes
// or more, unless the rank ends. A variable for tests.
var perfettoChunk = flushAt

// chunkSink takes a rank's chunks (PerfettoWriter.handOver).
type chunkSink struct {
	ch   chan []byte   // the rank's chunks in order; closed after its last
	free chan []byte   // buffers written out, to reuse (shared by the ranks)
	sem  chan struct{} // a token held while formatting (shared): the workers
	quit chan struct{} // closed when the writer has stopped
	// pages: each chunk is padded with spaces to a multiple of
	// directAlign bytes, in memory aligned to directAlign, so that the
	// writer writes it to the file in place (pageWriter).
	pages bool
}

// pageWriter is a file that writes page-aligned buffers in place
// (DirectFile in direct writes).
type pageWriter interface {
	io.Writer
	pageAligned() bool
	writePages(bufs [][]byte) error
}

// pageBatch is the bytes of padded chunks ConvertPerfetto gathers into
// one vectored write: fewer blocking system calls (each one's hand-off of
// its processor wakes the runtime's monitor thread for a millisecond).
const pageBatch = 4 << 20

// chunkCap is the capacity of a chunk's buffer: perfettoChunk bytes, a
// record beyond them, the padding, in whole pages (so that buffers cut
// one after another from one mapping stay aligned).
func chunkCap() int { return (perfettoChunk + 3*directAlign - 1) &^ (directAlign - 1) }

// spaces is padding.
var spaces = func() (b [directAlign]byte) {
	for i := range b {
		b[i] = ' '
	}
	return
}()

// padPage pads b with spaces to a multiple of directAlign bytes, in
// memory aligned to directAlign (a copy where b is not: a record made it
// grow beyond its buffer).
func padPage(b []byte) []byte {
	n := len(b)
	m := (n + directAlign - 1) &^ (directAlign - 1)
	if cap(b) < m || alignUp(b, directAlign) != 0 {
		c := heapAligned(max(m, chunkCap()))
		b = append(c[:0], b...)
	}
	b = b[:m]
	copy(b[n:], spaces[:])
	return b
}

// full passes p.out on once it holds p.limit bytes. A chunk
// (ConvertPerfetto) ends before the record that took it past p.limit:
// that record, copied aside, starts the next chunk, so that a chunk holds
// at most p.limit bytes unless its one record is longer. With chunks of
// 64 KiB padded to pages, the padding is the part of the last page no
// record filled, about half a record (170 bytes per event on average),
// where a chunk ending after the record padded most of a page (6.1 % of
// the 10^7-event synthetic trace at 2949656). The copy: one record per
// chunk.
func (p *PerfettoWriter) full() {
	if p.chunks == nil || len(p.out) == p.limit || p.rec == 0 || p.err != nil {
		p.flush()
		return
	}
	p.carry = append(p.carry[:0], p.out[p.rec:]...)
	p.out = p.out[:p.rec]
	if p.handOver() == nil {
		p.out = append(p.out, p.carry...)
		p.rec = 0
	}
}

var errPerfettoStopped = errors.New("perfetto: conversion stopped")

// handOver passes p.out to the writer as one chunk and takes a new buffer.
// The worker's token is given back while it waits for room in its rank's
// queue, so that the ranks the writer waits for can be formatted.
func (p *PerfettoWriter) handOver() error {
	if p.err != nil || len(p.out) == 0 {
		return p.err
	}
	s := p.chunks
	if s.pages {
		p.out = padPage(p.out)
	}
	<-s.sem
	select {
	case s.ch <- p.out:
	case <-s.quit:
		p.err = errPerfettoStopped
	}
	s.sem <- struct{}{}
	select {
	case b := <-s.free:
		p.out = b[:0]
	default:
		if s.pages {
			p.out = heapAligned(chunkCap())[:0]
		} else {
			p.out = make([]byte, 0, perfettoChunk+4096)
		}
	}
	return p.err
}

// ConvertPerfetto writes the job as Chrome trace JSON to out, its ranks
// formatted on up to workers goroutines and written as they come, without
// temporary files. Up to perfettoStreams ranks are formatted at once, each
// into chunks of about perfettoChunk bytes; out receives one chunk of each
// rank in turn (ranks in order; a rank that ends gives its turn to the
// next rank not yet started). The records are those of one PerfettoWriter
// walking the ranks in order, interleaved by chunks; the bytes depend on
// the job only, not on workers (a job whose ranks fit in a chunk each
// comes out in rank order, as that writer's). Where out writes pages in
// place (a DirectFile in direct writes), the document's head and each
// chunk are padded with spaces to whole pages and written without a copy,
// several chunks a write: the same JSON, spaces between records. It
// returns the records written.
func ConvertPerfetto(w *Walker, out io.Writer, workers int) (uint64, error) {
	n := len(w.Job.Ranks)
	pw, pages := out.(pageWriter)
	pages = pages && n > 0 && pw.pageAligned()
	head := perfettoHead
	if pages {
		// The head without its newline, spaces to the page's end; the
		// first chunk's separator becomes " \n".
		h := []byte(perfettoHead[:len(perfettoHead)-1])
		head = string(append(h, spaces[:directAlign-len(h)]...))
	}
	if _, err := io.WriteString(out, head); err != nil {
		return 0, err
	}
	if n == 0 {
		_, err := io.WriteString(out, perfettoTail)
		return 0, err
	}
	streams := max(1, min(perfettoStreams, n))
	batchChunks := max(1, min(pageBatch/perfettoChunk, 256))
	nfree := 2 * streams
	if pages {
		nfree = 3*streams + batchChunks + 4 // every chunk in use at once
	}
	sem := make(chan struct{}, max(1, min(workers, streams)))
	free := make(chan []byte, nfree)
	if pages {
		// The chunks' buffers on transparent huge pages, as DirectFile's:
		// a direct write pins one page per 2 MiB instead of 512.
		size := chunkCap()
		arena, release := directAlloc(nfree * size)
		defer release()
		for i := 0; i < nfree; i++ {
			free <- arena[i*size : i*size : (i+1)*size]
		}
	}
	quit := make(chan struct{})
	chs := make([]chan []byte, n)
	for i := range chs {
		chs[i] = make(chan []byte, 2)
	}
	pws := make([]*PerfettoWriter, n)
	var walkErr error
	walked := make(chan struct{})
	// failed is closed with failErr when a rank's walk fails with an
	// error other than a damaged block: WalkRanks then starts no other
	// rank, so the output must not wait for one (its turn may have come)
	// while the ranks still walking wait for room in their queues.
	failed := make(chan struct{})
	var failErr error
	var failOnce sync.Once
	go func() {
		defer close(walked)
		walkErr = w.WalkRanks(streams, func(i int) Visitor {
			sem <- struct{}{}
			p := newPerfettoFragment(nil) // every chunk starts with a separator: the first one in out is dropped
			p.limit = perfettoChunk
			p.chunks = &chunkSink{ch: chs[i], free: free, sem: sem, quit: quit, pages: pages}
			if pages {
				select {
				case b := <-free:
					p.out = b[:0]
				default:
					p.out = heapAligned(chunkCap())[:0]
				}
			}
			pws[i] = p
			return p
		}, func(i int, err error) error {
			ferr := pws[i].flush()
			close(chs[i])
			<-sem
			if err == nil {
				err = ferr
			}
			var ce *CorruptError
			if err != nil && !errors.As(err, &ce) {
				failOnce.Do(func() { failErr = err; close(failed) })
			}
			return err
		})
	}()
	// recv is the next chunk of rank i, ok false at its end.
	recv := func(i int) (b []byte, ok bool, err error) {
		select {
		case b, ok = <-chs[i]:
			return b, ok, nil
		case <-failed:
			return nil, false, failErr
		case <-walked:
		}
		if walkErr != nil {
			return nil, false, walkErr
		}
		// Every rank was walked: its queue is closed.
		b, ok = <-chs[i]
		return b, ok, nil
	}
	// put writes chunk b (pages: into the batch, written when full).
	var batch [][]byte
	var batchBytes int
	writeBatch := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := pw.writePages(batch)
		for k, b := range batch {
			select {
			case free <- b:
			default:
			}
			batch[k] = nil
		}
		batch, batchBytes = batch[:0], 0
		return err
	}
	first := true
	put := func(b []byte) error {
		if !pages {
			c := b
			if first {
				c, first = b[2:], false // the separator
			}
			_, err := out.Write(c)
			select {
			case free <- b:
			default:
			}
			return err
		}
		if first {
			b[0], first = ' ', false // the separator's comma
		}
		batch = append(batch, b)
		batchBytes += len(b)
		if batchBytes >= pageBatch || len(batch) >= batchChunks {
			return writeBatch()
		}
		return nil
	}
	var records uint64
	slots := make([]int, streams)
	for i := range slots {
		slots[i] = i
	}
	next := streams
	err := func() error {
		for len(slots) > 0 {
			for k := 0; k < len(slots); {
				i := slots[k]
				b, ok, err := recv(i)
				if err != nil {
					return err
				}
				if !ok {
					records += pws[i].Records
					if next < n {
						slots[k] = next
						next++
						k++
					} else {
						slots = append(slots[:k], slots[k+1:]...)
					}
					continue
				}
				if err := put(b); err != nil {
					return err
				}
				k++
			}
		}
		return writeBatch()
	}()
	if err != nil {
		close(quit)
		<-walked
		return 0, err
	}
	<-walked
	if walkErr != nil {
		return 0, walkErr
	}
	_, err = io.WriteString(out, perfettoTail)
	return records, err
}
