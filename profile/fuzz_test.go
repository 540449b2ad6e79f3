package profile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"
)

// FuzzUnmarshal checks that no input makes Unmarshal panic or fail other
// than with a *FormatError, and that whatever decodes re-encodes to a stable
// encoding. Each input is also tried with its trailing checksum recomputed,
// so that mutations reach the section decoders behind the checksum.
func FuzzUnmarshal(f *testing.F) {
	f.Add(Marshal(&Profile{}))
	f.Add(Marshal(sample()))
	f.Add(Marshal(rankProfile(3, 8, 2, 3, 2)))
	f.Add(frame(1, cat(section(secMeta, emptyMeta), section(99, []byte("future")))))
	f.Add([]byte("MPISCOPE"))
	f.Fuzz(func(t *testing.T, data []byte) {
		check(t, data)
		if len(data) >= len(magic)+crcSize {
			fixed := bytes.Clone(data)
			n := len(fixed) - crcSize
			binary.LittleEndian.PutUint32(fixed[n:], crc32.ChecksumIEEE(fixed[:n]))
			check(t, fixed)
		}
	})
}

func check(t *testing.T, data []byte) {
	p, err := Unmarshal(data, "f.mps")
	if err != nil {
		var fe *FormatError
		if !errors.As(err, &fe) || p != nil {
			t.Fatalf("error %v (%T) with profile %v", err, err, p)
		}
		if fe.Offset < 0 || fe.Offset > int64(len(data)) {
			t.Fatalf("offset %d outside input of %d bytes", fe.Offset, len(data))
		}
		return
	}
	b := Marshal(p)
	q, err := Unmarshal(b, "re.mps")
	if err != nil {
		t.Fatalf("re-decoding: %v", err)
	}
	if !bytes.Equal(Marshal(q), b) {
		t.Fatal("encoding not stable")
	}
	// Merging and sorting arbitrary decoded data must not panic either.
	m := MergeAll([]*Profile{p, q})
	m.Sort()
	_ = Marshal(m)
}
