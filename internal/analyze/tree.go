package analyze

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The binomial tree of the analysis in the job (since 2026-11-29 one
// shape for all its trees: the reductions, the broadcasts, the critical
// path's gather and its token's end). Ranks are numbered relative to the
// root, rel = (r - root + P) mod P. The parent of rel > 0 is rel without
// its lowest set bit; the children of rel are rel + b for the powers of
// two b below that bit (any b for the root) with rel + b < P, so a
// child's subtree is the ranks rel + b to rel + 2b - 1 (below P),
// contiguous. Going up, a rank receives from its children smallest step
// first (the smaller subtrees are ready sooner), then sends to its
// parent; going down, it receives from its parent, then sends to its
// children largest step first (the largest subtree gets it first, so the
// last rank has it after ceil(log2 P) sends, not their sum). P - 1
// messages each way, ceil(log2 P) hops. Before 2026-11-29 the broadcasts
// and the token's end took another shape (the parent of r: r without its
// highest bit), the same counts.
//
// A failure at any rank goes through the same tree, so that no rank is
// left waiting: each message carries a flag byte (the first of the
// path's bundles and of failMsg's message, the last of a reduction's
// value), and treeFailed, with failMsg's rank and text, says that a rank
// of the subtree (going up) or of the job (going down) failed. A rank
// that fails, or receives the flag, still receives what its children
// send (it never leaves one blocked in its send), sends the flag on in
// place of its message, and returns the error: going up, its parent
// learns it and the root's broadcast (when one follows) tells every
// rank. A message found bad going down reaches only the finder's
// subtree: in MPI every receiver of the same bytes finds the same.

// treeFailed is the flag byte of a tree's message that carries a failure.
const treeFailed = 2

// treeParent is the parent of rel > 0 in the binomial tree.
func treeParent(rel int) int {
	return rel - rel&-rel
}

// treeKids calls f for each child of rel (relative to the root) in a
// binomial tree of size ranks, smallest step first (the order to receive
// them going up), with the child and the number of ranks in its
// subtree; it stops at f's first error.
func treeKids(rel, size int, f func(kid, span int) error) error {
	for b := 1; rel+b < size && (rel == 0 || b < rel&-rel); b <<= 1 {
		if err := f(rel+b, min(b, size-rel-b)); err != nil {
			return err
		}
	}
	return nil
}

// treeKidsDown is treeKids largest step first (the order to send to them
// going down).
func treeKidsDown(rel, size int, f func(kid, span int) error) error {
	top := 0
	for b := 1; rel+b < size && (rel == 0 || b < rel&-rel); b <<= 1 {
		top = b
	}
	for b := top; b > 0; b >>= 1 {
		if err := f(rel+b, min(b, size-rel-b)); err != nil {
			return err
		}
	}
	return nil
}

// jobError is a failure of the analysis at another rank, learnt through
// a tree.
type jobError struct {
	rank int
	msg  string
}

func (e *jobError) Error() string {
	return fmt.Sprintf("the analysis failed at rank %d: %s", e.rank, e.msg)
}

// failMsgText bounds the error's text in a failure's message.
const failMsgText = 4096

// failMsg is the message that carries err, which rank at found, through
// a tree: treeFailed, the rank where it happened, its text (a failure
// learnt from another rank keeps that rank and text).
func failMsg(at int, err error) []byte {
	msg := err.Error()
	var je *jobError
	if errors.As(err, &je) {
		at, msg = je.rank, je.msg
	}
	if len(msg) > failMsgText {
		msg = msg[:failMsgText]
	}
	return append(binary.AppendUvarint([]byte{treeFailed}, uint64(at)), msg...)
}

// readFail decodes failMsg's message b, received from rank src.
func readFail(b []byte, src int) error {
	off := 1
	at, ok := readUvarint(b, &off, 1<<31)
	if !ok {
		return fmt.Errorf("rank %d's failure: %d bytes, bad at byte %d", src, len(b), off)
	}
	return &jobError{rank: int(at), msg: string(b[off:])}
}

// The reductions' messages end with the flag byte: encodeVal's bytes and
// 0, or failMsg's and treeFailed (the value's encoding is not copied to
// put a byte in front of it).

// valMsg is the reductions' message of v.
func valMsg[T any](v *T) ([]byte, error) {
	b, err := encodeVal(v)
	return append(b, 0), err
}

// readVal decodes the reductions' message b from rank src into v.
func readVal[T any](b []byte, src int, v *T) error {
	if len(b) > 0 && b[len(b)-1] == treeFailed {
		return readFail(b[:len(b)-1], src)
	}
	if len(b) == 0 || b[len(b)-1] != 0 {
		return fmt.Errorf("from rank %d: %d bytes, bad flag at byte %d", src, len(b), max(len(b)-1, 0))
	}
	if err := decodeVal(b[:len(b)-1], v); err != nil {
		return fmt.Errorf("from rank %d: %w", src, err)
	}
	return nil
}

// failVal is the reductions' message of a failure.
func failVal(at int, err error) []byte {
	return append(failMsg(at, err), treeFailed)
}

// reduceTo0 combines every rank's value at rank 0 up the binomial tree
// (merge(acc, v of higher ranks)); out is set on rank 0. A rank that
// fails (a child's message bad or flagged, its own value not encoded)
// sends the failure up in place of its value and returns it; rank 0 then
// returns it too.
func reduceTo0[T any](c Comm, local *T, out *T, merge func(a, b *T)) error {
	rank, size := c.Rank(), c.Size()
	acc := *local
	var failed error
	treeKids(rank, size, func(kid, _ int) error {
		data, err := c.Recv(kid)
		if failed != nil {
			return nil // the others' messages are still received
		}
		if err != nil {
			failed = fmt.Errorf("receiving from rank %d: %w", kid, err)
			return nil
		}
		var v T
		if failed = readVal(data, kid, &v); failed == nil {
			merge(&acc, &v)
		}
		return nil
	})
	if rank == 0 {
		if failed == nil {
			*out = acc
		}
		return failed
	}
	var b []byte
	if failed == nil {
		b, failed = valMsg(&acc)
	}
	if failed != nil {
		b = failVal(rank, failed)
	}
	if err := c.Send(treeParent(rank), b); err != nil && failed == nil {
		failed = err
	}
	return failed
}

// allReduce is reduceTo0 and a broadcast of the result from rank 0 down
// the same tree: every rank gets the result, or every rank an error (a
// failure at any rank, or a bad message on the way down, goes down as
// failVal's message).
func allReduce[T any](c Comm, local *T, out *T, merge func(a, b *T)) error {
	var acc T
	failed := reduceTo0(c, local, &acc, merge)
	rank, size := c.Rank(), c.Size()
	var data []byte
	if rank == 0 {
		if failed == nil {
			data, failed = valMsg(&acc)
		}
	} else {
		parent := treeParent(rank)
		b, err := c.Recv(parent)
		if err != nil {
			err = fmt.Errorf("receiving from rank %d: %w", parent, err)
		} else {
			acc = *new(T)
			err = readVal(b, parent, &acc)
		}
		// This rank's own failure, if any, is the one it reports.
		if failed == nil {
			failed = err
		}
		data = b
	}
	if failed != nil {
		data = failVal(rank, failed)
	}
	// Every child is sent its message, whatever happened to another.
	treeKidsDown(rank, size, func(kid, _ int) error {
		if err := c.Send(kid, data); err != nil && failed == nil {
			failed = err
		}
		return nil
	})
	if failed != nil {
		return failed
	}
	*out = acc
	return nil
}

// treeTokens sends m to this rank's children in the binomial tree rooted
// at root (the end of the critical path's token: tokenReplay).
func treeTokens(c Comm, root int, m [3]uint64) error {
	me, size := c.Rank(), c.Size()
	rel := (me - root + size) % size
	var failed error
	treeKidsDown(rel, size, func(kid, _ int) error {
		if err := c.SendToken((kid+root)%size, m); err != nil && failed == nil {
			failed = err
		}
		return nil
	})
	return failed
}
