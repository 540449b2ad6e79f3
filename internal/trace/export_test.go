package trace

import (
	"encoding/binary"
	"fmt"
)

// RawCplsRecords counts the completions records of a raw block's payload
// and the completions they hold (the tests of the C recorder).
func RawCplsRecords(p []byte) (records, entries int, err error) {
	c, err := rawRecordCounts(p)
	return c[rawCpls][0], c[rawCpls][1], err
}

// RawPostsRecords counts the posts records of a raw block's payload and
// the posts they hold.
func RawPostsRecords(p []byte) (records, entries int, err error) {
	c, err := rawRecordCounts(p)
	return c[rawPosts][0], c[rawPosts][1], err
}

// rawRecordCounts counts a raw block's completions and posts records
// (indexed by their kind) and the events they hold.
func rawRecordCounts(p []byte) (c [rawPosts + 1][2]int, err error) {
	_, n, b, err := rawHeader(p)
	if err != nil {
		return c, err
	}
	le := binary.LittleEndian
	off := 0
	for i := 0; i < n; {
		if len(b)-off < rawShort {
			return c, fmt.Errorf("event %d at byte %d: %v", i, off, errShort)
		}
		h := le.Uint32(b[off:])
		switch {
		case h&1 != 0:
			off += rawShort + 8*int(h>>1&1)
			i++
		case h>>12&0x3f == rawCpls || h>>12&0x3f == rawPosts:
			var evs []Event
			var k, used int
			if h>>12&0x3f == rawCpls {
				k, used, err = decodeCpls(b[off:], n-i, &evs, true)
			} else {
				k, used, err = decodePosts(b[off:], n-i, &Event{}, &evs, true)
			}
			if err != nil {
				return c, err
			}
			c[h>>12&0x3f][0]++
			c[h>>12&0x3f][1] += k
			off += used
			i += k
		default:
			off += rawFull + rawTail*int(h>>1&1)
			i++
		}
	}
	return c, nil
}
