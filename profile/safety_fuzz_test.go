package profile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// FuzzLoadDir feeds Load job directories made of hostile files: two rank
// files (one may also be profile.mps or a snapshot) from the fuzzer's
// bytes, at rank numbers it chooses. Load must not panic; it either fails
// with an error naming the directory (and, for a corrupt file, wrapping a
// *FormatError that names the file and an offset inside it), or returns a
// profile whose LoadInfo is consistent. Seeds: testdata/fuzz/FuzzLoadDir
// and the ones below (valid partial jobs, a truncated file, garbage).
func FuzzLoadDir(f *testing.F) {
	r0, r2 := Marshal(rankProfile(0, 4, 2, 3, 2)), Marshal(rankProfile(2, 4, 2, 3, 2))
	f.Add(r0, r2, uint8(2))
	f.Add(r0, r2[:len(r2)/2], uint8(2))
	f.Add(r0, []byte("MPISCOPE garbage"), uint8(0x81))
	f.Add(Marshal(sample()), r2, uint8(0x82))
	f.Add([]byte{}, r2, uint8(0x42))
	f.Fuzz(func(t *testing.T, a, b []byte, layout uint8) {
		dir, err := os.MkdirTemp("", "fuzzload")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		write := func(path string, data []byte) {
			os.MkdirAll(filepath.Dir(path), 0o777)
			if err := os.WriteFile(path, data, 0o666); err != nil {
				t.Fatal(err)
			}
		}
		rb := int(layout&0x3f) * 37 // spread over rank subdirectories too
		if layout&0x40 != 0 {
			write(RankFile(SnapshotDir(dir, 1), rb), b)
		} else {
			write(RankFile(dir, rb), b)
		}
		write(RankFile(dir, 0), a)
		if layout&0x80 != 0 {
			write(filepath.Join(dir, FinalFile), a)
		}
		p, info, err := Load(dir)
		if err != nil {
			if p != nil || info != nil {
				t.Fatalf("error %v with a result", err)
			}
			if !strings.Contains(err.Error(), dir) {
				t.Fatalf("error does not name the directory: %v", err)
			}
			var fe *FormatError
			if errors.As(err, &fe) {
				if !strings.HasPrefix(fe.File, dir) || !strings.Contains(err.Error(), "offset") {
					t.Fatalf("format error without file or offset: %v", err)
				}
				size := int64(len(a))
				if strings.HasSuffix(fe.File, "r"+itoa(rb)+".mps") {
					size = int64(len(b))
				}
				if fe.Offset < 0 || fe.Offset > max(size, int64(len(a)), int64(len(b))) {
					t.Fatalf("offset %d outside the file: %v", fe.Offset, err)
				}
			}
			return
		}
		if info.Files < 1 || info.Ranks > info.NumRanks || info.Ranks+len(info.Missing) != info.NumRanks && info.NumRanks <= maxMissingListed {
			t.Fatalf("inconsistent load info %+v", info)
		}
		_ = Marshal(p)
	})
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// TestLoadClaimedRanksMemory: a rank file of a few hundred bytes that claims 2^24
// ranks costs Load little memory (it once built a table per rank).
func TestLoadClaimedRanksMemory(t *testing.T) {
	dir := t.TempDir()
	p := rankProfile(0, 4, 2, 3, 2)
	p.Meta.NumRanks = maxMissing
	if err := WriteFile(RankFile(dir, 0), p); err != nil {
		t.Fatal(err)
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	_, info, err := Load(dir)
	runtime.ReadMemStats(&m1)
	if err != nil {
		t.Fatal(err)
	}
	if info.Ranks != 1 || len(info.Missing) != maxMissingListed || info.Missing[0] != 1 || len(info.Warnings) != 1 {
		t.Errorf("ranks %d, %d missing listed from %d, warnings %q", info.Ranks, len(info.Missing), info.Missing[0], info.Warnings)
	}
	if got := m1.TotalAlloc - m0.TotalAlloc; got > 16<<20 {
		t.Errorf("Load allocated %d MB", got>>20)
	}
}
