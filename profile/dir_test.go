package profile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestPaths(t *testing.T) {
	for _, tc := range []struct {
		rank int
		want string
	}{
		{0, "job/ranks/0/r0.mps"},
		{17, "job/ranks/0/r17.mps"},
		{999, "job/ranks/0/r999.mps"},
		{1000, "job/ranks/1/r1000.mps"},
		{12345, "job/ranks/12/r12345.mps"},
	} {
		if got := RankFile("job", tc.rank); got != filepath.FromSlash(tc.want) {
			t.Errorf("RankFile(job, %d) = %s, want %s", tc.rank, got, tc.want)
		}
	}
	if got := SnapshotDir("job", 3); got != filepath.FromSlash("job/snapshot-3") {
		t.Errorf("SnapshotDir = %s", got)
	}
	if got := RankFile(SnapshotDir("/j", 1), 2001); got != filepath.FromSlash("/j/snapshot-1/ranks/2/r2001.mps") {
		t.Errorf("snapshot rank file = %s", got)
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a", "b", "profile.mps")
	p := sample()
	if err := WriteFile(path, p); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(data, Marshal(p)) {
		t.Fatalf("content differs (%v)", err)
	}
	// Overwrite; a symlink at the final path is replaced, not followed.
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o666); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "a", "link.mps")
	if err := os.Symlink(victim, link); err != nil {
		t.Skip("no symlinks:", err)
	}
	if err := WriteFile(link, p); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Fatal("WriteFile followed a symlink")
	}
	if fi, err := os.Lstat(link); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("link not replaced by a file: %v %v", fi, err)
	}
	if err := WriteFile(path, &Profile{}); err != nil {
		t.Fatal(err)
	}
	if q, _, err := Load(path); err != nil || !reflect.DeepEqual(q, &Profile{}) {
		t.Fatalf("overwrite: %v %+v", err, q)
	}
	// No temporary files are left behind.
	ents, _ := os.ReadDir(filepath.Join(dir, "a", "b"))
	if len(ents) != 1 {
		t.Fatalf("directory holds %v", ents)
	}
	// Failure: the parent is a file.
	if err := WriteFile(filepath.Join(victim, "x.mps"), p); err == nil {
		t.Fatal("no error writing below a file")
	}
}

// job writes rank profiles for ranks into dir's rank files.
func writeRanks(t *testing.T, dir string, numRanks int, ranks ...int) []*Profile {
	t.Helper()
	var ps []*Profile
	for _, r := range ranks {
		p := rankProfile(r, numRanks, 3, 6, 2)
		p.Meta.Partial = true
		p.Ranks[0].State = "abort"
		if err := WriteFile(RankFile(dir, r), p); err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	return ps
}

func TestLoadFinal(t *testing.T) {
	dir := t.TempDir()
	var ps []*Profile
	for r := range 4 {
		ps = append(ps, rankProfile(r, 4, 3, 6, 2))
	}
	final := MergeAll(ps)
	if err := WriteFile(filepath.Join(dir, FinalFile), final); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{dir, filepath.Join(dir, FinalFile)} {
		p, info, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(Marshal(p), Marshal(final)) {
			t.Fatal("loaded profile differs")
		}
		wantSrc := map[bool]string{true: "final", false: "file"}[path == dir]
		want := &LoadInfo{Path: path, Source: wantSrc, Files: 1, NumRanks: 4, Ranks: 4}
		if !reflect.DeepEqual(info, want) {
			t.Fatalf("info %+v, want %+v", info, want)
		}
	}
	_, info, _ := Load(dir)
	if s := info.Summary(); s != "final profile: 4 of 4 ranks" {
		t.Fatalf("summary %q", s)
	}
}

func TestLoadPartial(t *testing.T) {
	dir := t.TempDir()
	ps := writeRanks(t, dir, 4, 0, 1, 3)
	p, info, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := MergeAll(ps)
	if !bytes.Equal(Marshal(p), Marshal(want)) {
		t.Fatal("partial merge differs")
	}
	if info.Source != "partial" || info.Files != 3 || !info.Partial || !reflect.DeepEqual(info.Missing, []int{2}) ||
		info.NumRanks != 4 || info.Ranks != 3 || len(info.Warnings) != 0 {
		t.Fatalf("info %+v", info)
	}
	if s := info.Summary(); s != "partial profile: 3 of 4 ranks (missing: 2), 3 files" {
		t.Fatalf("summary %q", s)
	}

	// A corrupt rank file is skipped with a warning naming file and offset.
	bad := RankFile(dir, 1)
	data, _ := os.ReadFile(bad)
	if err := os.WriteFile(bad, data[:len(data)/2], 0o666); err != nil {
		t.Fatal(err)
	}
	// Stray files are ignored.
	os.WriteFile(filepath.Join(dir, "ranks", "0", "notes.txt"), []byte("x"), 0o666)
	os.WriteFile(filepath.Join(dir, "ranks", "0", ".r2.mps.tmp123"), []byte("x"), 0o666)
	os.MkdirAll(filepath.Join(dir, "ranks", "tmp"), 0o777)
	p, info, err = Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.Files != 2 || !reflect.DeepEqual(info.Missing, []int{1, 2}) || len(info.Warnings) != 1 {
		t.Fatalf("info %+v", info)
	}
	if w := info.Warnings[0]; !strings.HasPrefix(w, bad+": offset ") || !strings.Contains(w, "truncated") {
		t.Fatalf("warning %q", w)
	}
	if !bytes.Equal(Marshal(p), Marshal(MergeAll([]*Profile{ps[0], ps[2]}))) {
		t.Fatal("merge with a corrupt file differs")
	}
	if s := info.Summary(); s != "partial profile: 2 of 4 ranks (missing: 1-2), 2 files, 1 warning" {
		t.Fatalf("summary %q", s)
	}
}

func TestLoadFinalPlusRanks(t *testing.T) {
	dir := t.TempDir()
	var ps []*Profile
	for r := range 3 {
		ps = append(ps, rankProfile(r, 5, 3, 6, 2))
	}
	if err := WriteFile(filepath.Join(dir, FinalFile), MergeAll(ps)); err != nil {
		t.Fatal(err)
	}
	// Rank 1 is in the final profile (its file is ignored); 3 is not.
	extra := writeRanks(t, dir, 5, 1, 3)
	p, info, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := MergeAll(append(ps, extra[1]))
	if !bytes.Equal(Marshal(p), Marshal(want)) {
		t.Fatal("merge differs")
	}
	if info.Source != "final" || info.Files != 2 || !info.Partial || !reflect.DeepEqual(info.Missing, []int{4}) ||
		len(info.Warnings) != 1 || !strings.Contains(info.Warnings[0], "merged 1 rank files for ranks missing from profile.mps (ranks 3)") {
		t.Fatalf("info %+v", info)
	}
}

func TestLoadCorruptFinal(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, FinalFile), []byte("MPISCOPE\x01\x05abc"), 0o666)
	ps := writeRanks(t, dir, 2, 0, 1)
	p, info, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.Source != "partial" || len(info.Warnings) != 1 || !strings.Contains(info.Warnings[0], "profile.mps: offset 13: truncated file") {
		t.Fatalf("info %+v", info)
	}
	if !bytes.Equal(Marshal(p), Marshal(MergeAll(ps))) {
		t.Fatal("differs")
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	// Empty directory.
	_, _, err := Load(dir)
	if err == nil || !strings.HasPrefix(err.Error(), dir+": no profile found") {
		t.Fatalf("empty dir: %v", err)
	}
	// Only corrupt files: the error names the dir and wraps a *FormatError.
	writeRanks(t, dir, 2, 0, 1)
	for _, r := range []int{0, 1} {
		os.WriteFile(RankFile(dir, r), []byte("garbage!"), 0o666)
	}
	_, _, err = Load(dir)
	var fe *FormatError
	if err == nil || !strings.HasPrefix(err.Error(), dir+": none of 2 rank files is readable") || !errors.As(err, &fe) {
		t.Fatalf("corrupt dir: %v", err)
	}
	if fe.File != RankFile(dir, 0) || fe.Msg != "not an mpiscope profile (bad magic)" {
		t.Fatalf("wrapped %+v", fe)
	}
	// A corrupt single file.
	_, _, err = Load(RankFile(dir, 1))
	if !errors.As(err, &fe) {
		t.Fatalf("file: %v", err)
	}
	// A path that does not exist.
	if _, _, err = Load(filepath.Join(dir, "nope")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
}

func TestLoadSnapshots(t *testing.T) {
	job := t.TempDir()
	for n := 1; n <= 2; n++ {
		for r := range 3 {
			p := rankProfile(r, 3, 2, 2, 1)
			p.Meta.Snapshot = n
			p.Ranks[0].State = "snapshot"
			p.Funcs[0].Calls = int64(100 * n)
			if err := WriteFile(RankFile(SnapshotDir(job, n), r), p); err != nil {
				t.Fatal(err)
			}
		}
	}
	p, info, err := Load(SnapshotDir(job, 1))
	if err != nil {
		t.Fatal(err)
	}
	if p.Meta.Snapshot != 1 || p.Funcs[0].Calls != 300 || info.Snapshot != 1 || len(info.Missing) != 0 {
		t.Fatalf("snapshot 1: %+v %+v", p.Meta, info)
	}
	if s := info.Summary(); s != "partial profile (snapshot 1): 3 of 3 ranks, 3 files" {
		t.Fatalf("summary %q", s)
	}
	// A job with nothing but snapshots yields the latest one.
	p, info, err = Load(job)
	if err != nil {
		t.Fatal(err)
	}
	if p.Meta.Snapshot != 2 || p.Funcs[0].Calls != 600 || info.Source != "snapshot" || info.Path != job ||
		len(info.Warnings) != 1 || !strings.Contains(info.Warnings[0], "snapshot-2") {
		t.Fatalf("job: %+v %+v", p.Meta, info)
	}
}

func TestSummaryManyMissing(t *testing.T) {
	info := &LoadInfo{Source: "partial", Partial: true, NumRanks: 100, Ranks: 50}
	for r := 0; r < 100; r += 2 {
		info.Missing = append(info.Missing, r)
	}
	want := "partial profile: 50 of 100 ranks (missing: 0, 2, 4, 6, 8, 10, 12, 14, ... 42 more)"
	if s := info.Summary(); s != want {
		t.Fatalf("got  %q\nwant %q", s, want)
	}
	info = &LoadInfo{Source: "file", NumRanks: 1, Ranks: 1}
	if s := info.Summary(); s != "profile: 1 of 1 ranks" {
		t.Fatal(s)
	}
}

// A hostile NumRanks does not make Load allocate a huge missing list.
func TestLoadHugeNumRanks(t *testing.T) {
	dir := t.TempDir()
	p := rankProfile(0, 1, 1, 1, 0)
	p.Meta.NumRanks = 1 << 60
	path := filepath.Join(dir, "x.mps")
	WriteFile(path, p)
	_, info, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Missing) != 0 || len(info.Warnings) != 1 {
		t.Fatalf("%+v", info)
	}
}

// BenchmarkLoad10k loads a directory of 10,000 rank files of 50 funcs, 200
// sites and 16 peers each, without a final profile.
func BenchmarkLoad10k(b *testing.B) {
	if testing.Short() {
		b.Skip("writes 10k files")
	}
	const n = 10000
	dir := b.TempDir()
	for r := range n {
		if err := os.MkdirAll(filepath.Dir(RankFile(dir, r)), 0o777); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(RankFile(dir, r), Marshal(rankProfile(r, n, 50, 200, 16)), 0o666); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, info, err := Load(dir)
		if err != nil || info.Files != n || len(p.Ranks) != n {
			b.Fatal(err, info.Summary())
		}
	}
}

func BenchmarkUnmarshalRank(b *testing.B) {
	data := Marshal(rankProfile(12345, 100000, 50, 200, 16))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Unmarshal(data, "r.mps"); err != nil {
			b.Fatal(err)
		}
	}
}

// Files over the size limit are refused before being read.
func TestLoadTooBig(t *testing.T) {
	defer func(l int64) { decodeLimit = l }(decodeLimit)
	path := filepath.Join(t.TempDir(), "big.mps")
	if err := WriteFile(path, sample()); err != nil {
		t.Fatal(err)
	}
	decodeLimit = 100
	_, _, err := Load(path)
	var fe *FormatError
	if !errors.As(err, &fe) || !strings.Contains(fe.Msg, "exceeds the 100 byte limit") {
		t.Fatalf("got %v", err)
	}
}
