package profile

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestLoadManyChunks loads more rank files than one chunk holds, with
// corrupt, unreadable and varying files in several chunks, and checks that
// the result is byte for byte the merge with the documented tree (each chunk
// of loadChunk files merged in file order, then the chunks in order), so that
// floating-point sums do not depend on the reading and decoding pipeline, and
// that warnings come in file order.
func TestLoadManyChunks(t *testing.T) {
	dir := t.TempDir()
	const n = 3*loadChunk + 77
	bad := map[int]string{5: "truncate", loadChunk + 1: "garbage", loadChunk + 300: "dir", 3 * loadChunk: "truncate", 17: "missing"}
	var files []*Profile // the rank files Load lists, in rank order: nil if unusable
	for r := range n {
		if bad[r] == "missing" {
			continue
		}
		p := rankProfile(r, n, 4+r%3, 10+r%5, 3)
		// Sums that are not exact in floating point, so that a different
		// merge order would show.
		for i := range p.Funcs {
			p.Funcs[i].RankTime = SpreadOf(r, 0.1*float64(r)+1/float64(i+3))
		}
		if r%7 == 0 {
			p.Comms = append(p.Comms, Comm{Key: fmt.Sprintf("self@%d", r), Size: 1, Members: 1})
			p.Meta.Hosts = append(p.Meta.Hosts, fmt.Sprintf("extra%d", r))
		}
		p.Sort()
		path := RankFile(dir, r)
		if err := WriteFile(path, p); err != nil {
			t.Fatal(err)
		}
		switch bad[r] {
		case "truncate":
			data, _ := os.ReadFile(path)
			os.WriteFile(path, data[:len(data)-9], 0o666)
			p = nil
		case "garbage":
			os.WriteFile(path, []byte("not a profile"), 0o666)
			p = nil
		case "dir":
			// Not a rank file: not listed.
			os.Remove(path)
			os.Mkdir(path, 0o777)
			continue
		}
		files = append(files, p)
	}

	var chunks []*Profile
	for c := 0; c*loadChunk < len(files); c++ {
		var ps []*Profile
		for _, p := range files[c*loadChunk : min(len(files), (c+1)*loadChunk)] {
			if p != nil {
				// Decoded, as Load sees them.
				q, err := Unmarshal(Marshal(p), "")
				if err != nil {
					t.Fatal(err)
				}
				ps = append(ps, q)
			}
		}
		if len(ps) > 0 {
			chunks = append(chunks, MergeAll(ps))
		}
	}
	want := MergeAll(chunks)
	want.Meta.Partial = true

	p, info, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(Marshal(p), Marshal(want)) {
		t.Fatal("merge differs from the chunked merge of the rank files")
	}
	if len(info.Warnings) != 3 || info.Files != n-5 {
		t.Fatalf("files %d, warnings %q", info.Files, info.Warnings)
	}
	for i, r := range []int{5, loadChunk + 1, 3 * loadChunk} {
		if w := info.Warnings[i]; !strings.HasPrefix(w, RankFile(dir, r)+": ") || !strings.HasSuffix(w, " (skipped)") {
			t.Fatalf("warning %d: %q", i, w)
		}
	}
	if want := []int{5, 17, loadChunk + 1, loadChunk + 300, 3 * loadChunk}; !reflect.DeepEqual(info.Missing, want) {
		t.Fatalf("missing %v, want %v", info.Missing, want)
	}
}
