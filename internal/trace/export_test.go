package trace

import (
	"encoding/binary"
	"fmt"
)

// RawCplsRecords counts the completions records of a raw block's payload
// and the completions they hold (the tests of the C recorder).
func RawCplsRecords(p []byte) (records, entries int, err error) {
	_, n, b, err := rawHeader(p)
	if err != nil {
		return 0, 0, err
	}
	le := binary.LittleEndian
	off := 0
	for i := 0; i < n; {
		if len(b)-off < rawShort {
			return 0, 0, fmt.Errorf("event %d at byte %d: %v", i, off, errShort)
		}
		h := le.Uint32(b[off:])
		switch {
		case h&1 != 0:
			off += rawShort + 8*int(h>>1&1)
			i++
		case h>>12&0x3f == rawCpls:
			var evs []Event
			k, used, err := decodeCpls(b[off:], n-i, &evs, true)
			if err != nil {
				return 0, 0, err
			}
			records++
			entries += k
			off += used
			i += k
		default:
			off += rawFull + rawTail*int(h>>1&1)
			i++
		}
	}
	return records, entries, nil
}
