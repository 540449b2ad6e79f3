package profile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func TestRoundTrip(t *testing.T) {
	for name, p := range map[string]*Profile{
		"empty":  {},
		"sample": sample(),
		"rank":   rankProfile(17, 64, 50, 200, 16),
	} {
		t.Run(name, func(t *testing.T) {
			b := Marshal(p)
			q, err := Unmarshal(b, "x.mps")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p, q) {
				t.Fatalf("round trip differs:\n got %+v\nwant %+v", q, p)
			}
			if b2 := Marshal(q); !bytes.Equal(b, b2) {
				t.Fatal("re-encoding differs")
			}
			var buf bytes.Buffer
			if err := p.Encode(&buf); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), b) {
				t.Fatal("Encode differs from Marshal")
			}
			q, err = Decode(iotest.OneByteReader(&buf), "x.mps")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p, q) {
				t.Fatal("Decode differs")
			}
		})
	}
}

// Bit patterns of floats survive exactly, including -0 and NaN payloads.
func TestRoundTripFloatBits(t *testing.T) {
	nan := math.Float64frombits(0x7ff8000000000123)
	negz := math.Copysign(0, -1)
	for _, s := range []Spread{
		{}, {Sum: negz}, {N: 1, Sum: negz, SumSq: 0, Min: negz, Max: negz},
		SpreadOf(3, nan), SpreadOf(-5, math.Inf(-1)), SpreadOf(math.MaxInt64, 1e300),
		{N: 3, Sum: nan, SumSq: nan, Min: nan, Max: nan, MinRank: -1, MaxRank: 1},
	} {
		p := &Profile{Funcs: []Func{{Name: "f", RankTime: s}}}
		q, err := Unmarshal(Marshal(p), "")
		if err != nil {
			t.Fatal(err)
		}
		g := q.Funcs[0].RankTime
		for i, pair := range [][2]float64{{g.Sum, s.Sum}, {g.SumSq, s.SumSq}, {g.Min, s.Min}, {g.Max, s.Max}} {
			if math.Float64bits(pair[0]) != math.Float64bits(pair[1]) {
				t.Errorf("%+v: float %d: got %x want %x", s, i, math.Float64bits(pair[0]), math.Float64bits(pair[1]))
			}
		}
		if g.N != s.N || g.MinRank != s.MinRank || g.MaxRank != s.MaxRank {
			t.Errorf("got %+v want %+v", g, s)
		}
	}
}

// The encoding of a typical rank must stay compact: Load reads 100,000 of
// them.
func TestCompact(t *testing.T) {
	n := len(Marshal(rankProfile(12345, 100000, 50, 200, 16)))
	t.Logf("rank profile (50 funcs, 200 sites, 16 peers): %d bytes", n)
	if n > 12000 {
		t.Errorf("rank profile encodes to %d bytes, want <= 12000", n)
	}
}

func TestFormatErrorString(t *testing.T) {
	body := section(secStrings, cat(uv(1), uv(10), []byte("abc")))
	_, err := Unmarshal(frame(1, body), "profile.mps")
	want := "profile.mps: offset 13: truncated string table: string 1 declares 10 bytes, 3 left"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	e := &FormatError{Offset: 5, Msg: "bad"}
	if e.Error() != "offset 5: bad" {
		t.Fatal(e.Error())
	}
}

// Every truncation and every single-byte corruption of a valid encoding is
// detected with a *FormatError.
func TestTruncateAndCorrupt(t *testing.T) {
	b := Marshal(sample())
	for i := 0; i < len(b); i++ {
		_, err := Unmarshal(b[:i], "s.mps")
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("truncated at %d: got %v, want *FormatError", i, err)
		}
		if fe.File != "s.mps" || fe.Offset < 0 || fe.Offset > int64(i) {
			t.Fatalf("truncated at %d: bad error %+v", i, fe)
		}
		if _, err := Decode(bytes.NewReader(b[:i]), "s.mps"); !errors.As(err, &fe) {
			t.Fatalf("Decode truncated at %d: %v", i, err)
		}
	}
	for i := 0; i < len(b); i++ {
		c := bytes.Clone(b)
		c[i] ^= 0x5a
		if _, err := Unmarshal(c, "s.mps"); !errors.As(err, new(*FormatError)) {
			t.Fatalf("corrupt byte %d: got %v", i, err)
		}
	}
}

func uv(v uint64) []byte { return binary.AppendUvarint(nil, v) }
func sv(v int64) []byte  { return binary.AppendVarint(nil, v) }
func cat(bs ...[]byte) []byte {
	return bytes.Join(bs, nil)
}
func section(tag int, payload []byte) []byte {
	return cat(uv(uint64(tag)), uv(uint64(len(payload))), payload)
}

// frame wraps a body in a header and a valid checksum.
func frame(version uint64, body []byte) []byte {
	b := cat([]byte(magic), uv(version), uv(uint64(len(body))), body)
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

// emptyMeta is a valid meta section payload with every field empty.
var emptyMeta = cat(uv(0), sv(0), uv(0), uv(0), uv(0), uv(0), uv(0), uv(0), sv(0), sv(0), uv(0), sv(0), []byte{0})

func TestHostile(t *testing.T) {
	valid := Marshal(sample())
	badCRC := bytes.Clone(valid)
	badCRC[len(badCRC)-1] ^= 1
	for _, tc := range []struct {
		name string
		data []byte
		msg  string // substring of Msg; "" means decoding succeeds
	}{
		{"empty", nil, "truncated header"},
		{"short magic", []byte("MPIS"), "truncated header"},
		{"bad magic", []byte("MPISCOPX\x01\x00\x00\x00\x00\x00"), "bad magic"},
		{"gzip", []byte{0x1f, 0x8b, 8, 0}, "bad magic"},
		{"newer version", frame(2, nil), "unsupported format version 2"},
		{"version 0", frame(0, nil), "invalid format version 0"},
		{"huge version", cat([]byte(magic), uv(math.MaxUint64)), "unsupported format version"},
		{"varint overflow in header", cat([]byte(magic), bytes.Repeat([]byte{0xff}, 11)), "invalid varint in header"},
		{"huge body length", cat([]byte(magic), uv(1), uv(math.MaxUint64), []byte{1, 2, 3, 4}), "truncated file"},
		{"no checksum", cat([]byte(magic), uv(1), uv(0)), "truncated file"},
		{"trailing data", append(bytes.Clone(valid), 0), "1 bytes of trailing data"},
		{"bad checksum", badCRC, "checksum mismatch"},
		{"empty body", frame(1, nil), ""},
		{"unknown section skipped", frame(1, cat(section(secMeta, emptyMeta), section(99, []byte("future")))), ""},
		{"section past body", frame(1, cat(uv(secStrings), uv(1000), uv(0))), "truncated string table: declares 1000 bytes"},
		{"huge section length", frame(1, cat(uv(secRanks), uv(math.MaxUint64))), "truncated ranks section"},
		{"huge string count", frame(1, section(secStrings, uv(1<<62))), "string count 4611686018427387904 exceeds"},
		{"huge string length", frame(1, section(secStrings, cat(uv(1), uv(1<<40)))), "truncated string table: string 1 declares"},
		{"out of order", frame(1, cat(section(secRanks, uv(0)), section(secMeta, emptyMeta))), "section 2 out of order"},
		{"repeated", frame(1, cat(section(secRanks, uv(0)), section(secRanks, uv(0)))), "section 3 out of order or repeated"},
		{"tag 0", frame(1, section(0, nil)), "section 0 out of order"},
		{"string ref", frame(1, section(secMeta, cat(uv(1), uv(5)))), "string reference 5 out of range (string table has 0 entries) in meta section"},
		{"truncated meta", frame(1, section(secMeta, emptyMeta[:5])), "truncated meta section"},
		{"bad bool", frame(1, section(secMeta, cat(emptyMeta[:len(emptyMeta)-1], []byte{2}))), "invalid boolean 2"},
		{"extra bytes", frame(1, section(secRanks, cat(uv(0), []byte{0, 0}))), "2 unexpected bytes at end of ranks section"},
		{"huge rank count", frame(1, section(secRanks, uv(1<<40))), "rank count 1099511627776 exceeds"},
		{"rank count vs size", frame(1, section(secRanks, cat(uv(2), make([]byte, 17)))), "rank count 2 exceeds the 17 bytes"},
		{"varint overflow", frame(1, section(secRanks, cat(uv(1), bytes.Repeat([]byte{0x80}, 10), make([]byte, 8)))), "invalid varint in ranks section"},
		{"bad spread", frame(1, section(secFuncs, cat(uv(1), make([]byte, 7), []byte{7}))), "invalid spread kind 7 in funcs section"},
		{"truncated spread", frame(1, section(secFuncs, cat(uv(1), make([]byte, 7), []byte{spreadFull}))), "truncated funcs section"},
		{"huge site count", frame(1, section(secSites, cat(uv(1<<50), make([]byte, 20)))), "site count"},
		{"huge bin count", frame(1, section(secHists, cat(uv(1), uv(0), uv(1<<60)))), "bin count"},
		{"huge peer count", frame(1, section(secPeers, uv(math.MaxUint64))), "peer count"},
		{"peer", frame(1, section(secPeers, cat(uv(1), sv(-1), sv(2), make([]byte, 4)))), ""},
		{"huge region count", frame(1, section(secRegions, uv(1<<33))), "region count"},
		{"huge event count", frame(1, section(secEvents, uv(1<<33))), "event count"},
		{"huge command count", frame(1, section(secMeta, uv(1<<33))), "command argument count"},
		{"huge settings count", frame(1, section(secMeta, cat(emptyMeta[:10], uv(1<<33)))), "setting count"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Unmarshal(tc.data, "h.mps")
			if tc.msg == "" {
				if err != nil || p == nil {
					t.Fatalf("got %v, want success", err)
				}
				return
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("got %v (%T), want *FormatError", err, err)
			}
			if !strings.Contains(fe.Msg, tc.msg) {
				t.Fatalf("got %q, want it to contain %q", fe.Msg, tc.msg)
			}
			if fe.Offset < 0 || fe.Offset > int64(len(tc.data)) || fe.File != "h.mps" {
				t.Fatalf("bad error fields %+v", fe)
			}
			if !strings.HasPrefix(err.Error(), "h.mps: offset ") {
				t.Fatalf("bad message %q", err)
			}
		})
	}
}

func TestDecodeReadError(t *testing.T) {
	boom := errors.New("boom")
	_, err := Decode(io.MultiReader(bytes.NewReader([]byte(magic)), iotest.ErrReader(boom)), "r.mps")
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "r.mps: ") {
		t.Fatalf("got %v", err)
	}
}

// Decode must not read an endless stream into memory.
func TestDecodeLimit(t *testing.T) {
	defer func(l int64) { decodeLimit = l }(decodeLimit)
	decodeLimit = 1000
	r := zeroReader{}
	_, err := Decode(r, "z")
	var fe *FormatError
	if !errors.As(err, &fe) || !strings.Contains(fe.Msg, "limit") {
		t.Fatalf("got %v", err)
	}
}

type zeroReader struct{}

func (zeroReader) Read(b []byte) (int, error) {
	clear(b)
	return len(b), nil
}
