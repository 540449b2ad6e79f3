package trace

import (
	"encoding/binary"
	"fmt"
)

// Since format version 5 a run of nonblocking posts (MPI_Isend,
// MPI_Irecv...) of one shape with nothing recorded between them is one
// record in a raw block, a header and an entry per post:
//
//	posts (16 bytes + 12 per post): 0 h u32 = 0 | slot << 2 | 10 << 12
//	    (bits 1 and 18-31 zero) | 4 count u32 (at least 1) | 8 t u64,
//	    then count entries: u32 x = gap | dt << 16, u64 req
//
// Each entry is the event in the slot (which a full record of the block
// defined before) with T0 = the previous entry's T1 + gap (t + gap for
// the first), T1 = T0 + dt and Req = req. The record uses the slot and
// defines none. The C recorder writes it for posts that repeat a post
// memo entry (internal/interpose/trace.h, ms_tpost).

// RawPosts is the kind field of a raw block's posts record (MS_TK_POSTS
// in internal/interpose/trace.h): not an event kind.
const RawPosts = 10

const (
	rawPosts      = RawPosts
	rawPostsHead  = 16
	rawPostsEntry = 12
	rawPostsDT    = 1 << 16 // gap and dt are below it
)

// decodePosts decodes a posts record at the start of b whose slot holds
// shape, appending its events to evs, and returns how many it appended
// and the bytes it took. At most left events remain in the block: a
// record with more is an error, unless whole is false (a prefix of the
// block: the rest of the record is not read).
func decodePosts(b []byte, left int, shape *Event, evs *[]Event, whole bool) (n, used int, err error) {
	le := binary.LittleEndian
	if len(b) < rawPostsHead {
		return 0, 0, errShort
	}
	h := le.Uint32(b)
	count := int(le.Uint32(b[4:]))
	if h&3 != 0 || h>>18 != 0 || count == 0 {
		return 0, 0, fmt.Errorf("bad posts record (header %#x, count %d)", h, count)
	}
	if count > left {
		if whole {
			return 0, 0, fmt.Errorf("posts record of %d events, %d left in the block", count, left)
		}
		count = left
	}
	if len(b)-rawPostsHead < count*rawPostsEntry {
		return 0, 0, fmt.Errorf("posts record of %d events in %d bytes: %v", count, len(b), errShort)
	}
	prev := le.Uint64(b[8:])
	off := rawPostsHead
	for range count {
		x := le.Uint32(b[off:])
		v := *shape
		v.T0 = max(prev+uint64(x&(rawPostsDT-1)), prev)
		v.T1 = max(v.T0+uint64(x>>16), v.T0)
		v.Req = le.Uint64(b[off+4:])
		prev = v.T1
		*evs = append(*evs, v)
		off += rawPostsEntry
	}
	return count, off, nil
}

// postsRun returns the end of the run of events from evs[i] that a posts
// record can hold: calls with a request of one shape, each of them and
// each gap from the previous one's end below 2^16 ticks.
func postsRun(evs []Event, i int) int {
	v := &evs[i]
	if v.Kind != KCall || v.Flags&FReq == 0 || v.T1-v.T0 >= rawPostsDT {
		return i
	}
	shape := rawShape(*v)
	j := i + 1
	for ; j < len(evs) && j-i < 1<<20; j++ {
		w := &evs[j]
		if w.T1-w.T0 >= rawPostsDT || w.T0-evs[j-1].T1 >= rawPostsDT || rawShape(*w) != shape {
			break
		}
	}
	return j
}

// appendPosts appends the posts record of evs (one shape, in slot; gaps
// and durations as postsRun checks them).
func appendPosts(body []byte, slot uint32, evs []Event) []byte {
	le := binary.LittleEndian
	body = le.AppendUint32(body, slot<<2|rawPosts<<12)
	body = le.AppendUint32(body, uint32(len(evs)))
	body = le.AppendUint64(body, evs[0].T0)
	prev := evs[0].T0
	for i := range evs {
		v := &evs[i]
		body = le.AppendUint32(body, uint32(v.T0-prev)|uint32(v.T1-v.T0)<<16)
		body = le.AppendUint64(body, v.Req)
		prev = v.T1
	}
	return body
}
