package trace

import (
	"errors"
	"io"
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
		p.out = make([]byte, 0, perfettoChunk+4096)
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
// comes out in rank order, as that writer's). It returns the records
// written.
func ConvertPerfetto(w *Walker, out io.Writer, workers int) (uint64, error) {
	n := len(w.Job.Ranks)
	if _, err := io.WriteString(out, perfettoHead); err != nil {
		return 0, err
	}
	if n == 0 {
		_, err := io.WriteString(out, perfettoTail)
		return 0, err
	}
	streams := max(1, min(perfettoStreams, n))
	sem := make(chan struct{}, max(1, min(workers, streams)))
	free := make(chan []byte, 2*streams)
	quit := make(chan struct{})
	chs := make([]chan []byte, n)
	for i := range chs {
		chs[i] = make(chan []byte, 2)
	}
	pws := make([]*PerfettoWriter, n)
	var walkErr error
	walked := make(chan struct{})
	go func() {
		defer close(walked)
		walkErr = w.WalkRanks(streams, func(i int) Visitor {
			sem <- struct{}{}
			p := newPerfettoFragment(nil)
			p.sep = true // every chunk starts with a separator: the first one in out is dropped
			p.limit = perfettoChunk
			p.chunks = &chunkSink{ch: chs[i], free: free, sem: sem, quit: quit}
			pws[i] = p
			return p
		}, func(i int, err error) error {
			ferr := pws[i].flush()
			close(chs[i])
			<-sem
			if err == nil {
				err = ferr
			}
			return err
		})
	}()
	// recv is the next chunk of rank i, ok false at its end.
	recv := func(i int) (b []byte, ok bool, err error) {
		select {
		case b, ok = <-chs[i]:
			return b, ok, nil
		case <-walked:
		}
		if walkErr != nil {
			return nil, false, walkErr
		}
		// Every rank was walked: its queue is closed.
		b, ok = <-chs[i]
		return b, ok, nil
	}
	var records uint64
	first := true
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
				c := b
				if first {
					c, first = b[2:], false // the separator
				}
				if _, err := out.Write(c); err != nil {
					return err
				}
				select {
				case free <- b:
				default:
				}
				k++
			}
		}
		return nil
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
