package profile

import (
	"encoding/binary"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestUvarint checks the decoder's varint paths (one byte, the loop,
// errors) against encoding/binary for values of every length, followed by
// up to 9 bytes of the section.
func TestUvarint(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var vals []uint64
	for bitsN := 0; bitsN <= 64; bitsN++ {
		for range 20 {
			v := rng.Uint64()
			if bitsN < 64 {
				v &= 1<<bitsN - 1
			}
			vals = append(vals, v, 1<<max(bitsN, 1)-1)
		}
	}
	for _, v := range vals {
		enc := binary.AppendUvarint(nil, v)
		for pad := 0; pad <= 9; pad++ {
			// Trailing bytes inside the section: continuation bits set or not.
			for _, fill := range []byte{0x00, 0xff, 0x80} {
				data := append([]byte{}, enc...)
				for range pad {
					data = append(data, fill)
				}
				d := &decoder{data: data, end: len(data)}
				got := d.uvarint()
				if d.err != nil || got != v || d.pos != len(enc) {
					t.Fatalf("uvarint(% x) = %d at %d, err %v; want %d at %d", data, got, d.pos, d.err, v, len(enc))
				}
			}
		}
		// Truncated at every length: the same outcome as encoding/binary.
		for cut := 0; cut < len(enc); cut++ {
			data := append(append([]byte{}, enc[:cut]...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
			d := &decoder{data: data, end: cut}
			got := d.uvarint()
			if d.err == nil {
				t.Fatalf("uvarint(% x) truncated at %d = %d, no error", enc, cut, got)
			}
		}
	}
	// Malformed: 10 or more bytes with continuation bits, or overflow.
	for _, data := range [][]byte{
		{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01},
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
	} {
		want, n := binary.Uvarint(data)
		d := &decoder{data: data, end: len(data)}
		got := d.uvarint()
		if (n <= 0) != (d.err != nil) || (n > 0 && (got != want || d.pos != n)) {
			t.Errorf("uvarint(% x) = %d at %d, err %v; encoding/binary: %d, %d", data, got, d.pos, d.err, want, n)
		}
	}
}

// TestReusingDecoder decodes different profiles in turn with one
// reusingDecoder and checks each result against Unmarshal, and that errors
// are the same.
func TestReusingDecoder(t *testing.T) {
	a := sample()
	b := sample()
	b.Ranks = append(b.Ranks, Rank{Rank: 9, Host: "other", State: "exit"})
	b.Funcs = b.Funcs[:1]
	b.Hists = nil
	b.Meta.Hosts = append(b.Meta.Hosts, "node0")
	b.Sort()
	empty := &Profile{}
	var r reusingDecoder
	for i, p := range []*Profile{a, b, empty, a, empty, b, b, a} {
		data := Marshal(p)
		want, err := Unmarshal(data, "x")
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.unmarshal(data, "x")
		if err != nil {
			t.Fatalf("input %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("input %d: reusing decoder gave\n%+v\nwant\n%+v", i, got, want)
		}
	}
	good := Marshal(a)
	for cut := 0; cut < len(good); cut += 7 {
		_, want := Unmarshal(good[:cut], "x")
		_, got := r.unmarshal(good[:cut], "x")
		if want == nil || got == nil || got.Error() != want.Error() {
			t.Fatalf("truncated at %d: got %v, want %v", cut, got, want)
		}
		// A good input after a bad one decodes fully.
		if p, err := r.unmarshal(good, "x"); err != nil || !reflect.DeepEqual(p, a) {
			t.Fatalf("after truncation at %d: %v", cut, err)
		}
	}
}
