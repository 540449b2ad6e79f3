package trace

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"encoding/json"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// FuzzWalk's input is a rank file without its checksums, so that the
// fuzzer's changes reach the decoders and the walk instead of failing a
// block's CRC (FuzzReader's inputs mostly do): a format version byte,
// then blocks, each a kind byte, a uvarint length and the payload; an
// events block's payload uncompressed (uvarint thread id, uvarint number
// of events, the encoded events), compressed by the test. walkFuzzFile
// makes the file, compressing with fw (flate.NewWriter allocates about
// 1 MB: one a fuzzing process, not one an input).
func walkFuzzFile(in []byte, fw *flate.Writer) []byte {
	if len(in) == 0 {
		return nil
	}
	var out bytes.Buffer
	bw, _ := newBlockWriterVersion(&out, 2+int(in[0])%(Version-1))
	var scratch bytes.Buffer
	for b := in[1:]; len(b) > 0; {
		kind := b[0]
		n, k := binary.Uvarint(b[1:])
		if k <= 0 || n > uint64(len(b)-1-k) {
			break
		}
		p := b[1+k : 1+k+int(n)]
		b = b[1+k+int(n):]
		if kind == BEvents {
			tid, k1 := binary.Uvarint(p)
			if k1 <= 0 {
				continue
			}
			ev, k2 := binary.Uvarint(p[k1:])
			if k2 <= 0 {
				continue
			}
			blk, err := appendEventsBlock(nil, int(tid&(1<<31-1)), int(ev&(1<<20-1)), p[k1+k2:], fw, &scratch)
			if err != nil {
				continue
			}
			p = blk
		}
		bw.Block(kind, p)
	}
	bw.Flush()
	return out.Bytes()
}

// walkFuzzInput is the FuzzWalk input of a rank file (its events blocks
// decompressed).
func walkFuzzInput(tb testing.TB, path string) []byte {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	br, err := NewBlockReader(f, path)
	if err != nil {
		tb.Fatal(err)
	}
	in := []byte{byte(br.Version() - 2)}
	for {
		kind, p, err := br.Next()
		if err == io.EOF {
			return in
		}
		if err != nil {
			tb.Fatal(err)
		}
		if kind == BEvents {
			d := dec{b: p}
			tid, n, _ := d.u(), d.u(), d.u()
			raw, err := flateDecode(d.b)
			if d.err != nil || err != nil {
				tb.Fatal(d.err, err)
			}
			q := binary.AppendUvarint(nil, tid)
			p = append(binary.AppendUvarint(q, n), raw...)
		}
		in = binary.AppendUvarint(append(in, kind), uint64(len(p)))
		in = append(in, p...)
	}
}

// TestWalkFuzzFile: the fuzz input of a rank file makes that file again,
// byte for byte (FuzzWalk's seeds are the files written by the tests).
func TestWalkFuzzFile(t *testing.T) {
	path := synthRank(t, t.TempDir(), 0, 2, manyEvents(40), 10, []Sync{{1, 2, 3}}, true)
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fw, _ := flate.NewWriter(nil, flate.BestSpeed)
	if got := walkFuzzFile(walkFuzzInput(t, path), fw); !bytes.Equal(got, want) {
		t.Fatalf("%d bytes, want the file's %d", len(got), len(want))
	}
}

// maxWalkFuzz bounds FuzzWalk's input: 64 KiB hold about 20,000 events
// (three bytes the smallest), whose walk takes a few milliseconds; the
// seeds are below 2 KiB.
const maxWalkFuzz = 1 << 16

// FuzzWalk: whatever a rank file holds whose blocks are intact (their
// checksums right), opening it fails with a *CorruptError or succeeds,
// the walk ends without a panic or a hang, and the Perfetto writer's
// document is valid JSON. An input costs a file written, read twice and
// walked: its compressor, file and output buffer are made once a fuzzing
// process (until 2026-11-29 a flate.Writer of about 1 MB and a directory
// an input made it 1-40 ms an input, mostly the garbage collector's).
func FuzzWalk(f *testing.F) {
	for _, path := range []string{
		synthRank(f, f.TempDir(), 0, 2, manyEvents(40), 10, []Sync{{1, 2, 3}}, true),
		synthRankAs(f, f.TempDir(), 0, 2, manyEvents(8), 4, nil, true, BRaw),
		synthRankAs(f, f.TempDir(), 0, 2, postWindows(3, 8), 20, nil, true, BRaw),
	} {
		f.Add(walkFuzzInput(f, path))
	}
	tk := uint64(1 << 20)
	cpl := append(cplRun(rand.New(rand.NewSource(1)), manyEvents(4), 6, &tk), manyEvents(2)...)
	f.Add(walkFuzzInput(f, synthRank(f, f.TempDir(), 0, 2, cpl, 12, nil, true)))
	objJob := f.TempDir()
	objRank(f, objJob, 0, 2, objEvents(0))
	f.Add(walkFuzzInput(f, RankPath(objJob, 0)))
	fw, _ := flate.NewWriter(nil, flate.BestSpeed)
	p := filepath.Join(f.TempDir(), "r0.mst")
	var out bytes.Buffer
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > maxWalkFuzz {
			return
		}
		// A new file, not the last one truncated: ext4 flushes a file
		// truncated and written again when it is closed (auto_da_alloc),
		// about 1 ms an input.
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, walkFuzzFile(in, fw), 0o666); err != nil {
			t.Fatal(err)
		}
		r := fuzzOpenRank(t, p)
		if r == nil {
			return
		}
		out.Reset()
		pw := NewPerfettoWriter(&out)
		w := NewWalker(&Job{Ranks: []*Rank{r}}, WalkOptions{})
		if err := w.Walk(pw); err != nil && len(w.Damaged) == 0 {
			t.Fatalf("walk: %v", err)
		}
		if err := pw.Close(); err != nil {
			t.Fatal(err)
		}
		if !json.Valid(out.Bytes()) {
			t.Fatalf("not JSON:\n%s", out.Bytes())
		}
	})
}

// TestDecStringCut: a string whose length runs past the payload by no
// more than its length's own bytes is an error. Until 2026-11-28 dec.s
// bounded the length by the bytes left before reading it and panicked
// (FuzzWalk's first find: a header block's host name).
func TestDecStringCut(t *testing.T) {
	for _, p := range [][]byte{{1}, {2, 'a'}, {0x82, 0, 'a'}, {0x83, 0, 'a', 'b'}} {
		d := dec{b: p}
		if s := d.s(); d.err == nil {
			t.Errorf("% x: %q, no error", p, s)
		}
	}
	d := dec{b: []byte{1, 'a', 0}}
	if s, e := d.s(), d.s(); d.err != nil || s != "a" || e != "" || len(d.b) != 0 {
		t.Errorf("%q %q, %v", s, e, d.err)
	}
}
