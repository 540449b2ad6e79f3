package trace

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/mpiscope/mpiscope/internal/testutil"
)

// goldenJobs are small jobs whose conversions are pinned byte for byte:
// the synthetic halo exchange (WriteSynth: nonblocking messages, Waitall,
// collectives) and sharedJob (shared and reused request handles, blocking
// messages, MPI_PROC_NULL). The walk and the writers are tuned for speed;
// what they write must not change.
func goldenJobs(t *testing.T) map[string]string {
	t.Helper()
	synth := t.TempDir()
	if err := WriteSynth(synth, SynthSpec{Ranks: 3, Events: 900, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"synth": synth, "shared": sharedJob(t)}
}

func TestGoldenPerfetto(t *testing.T) {
	for name, dir := range goldenJobs(t) {
		j, err := OpenJob(dir)
		if err != nil {
			t.Fatal(err)
		}
		var seq, par bytes.Buffer
		p := NewPerfettoWriter(&seq)
		if err := NewWalker(j, WalkOptions{}).Walk(p); err != nil {
			t.Fatal(err)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		testutil.Golden(t, filepath.Join("testdata", "golden", name+".json"), seq.Bytes())
		// Ranks in parallel, joined: the same bytes.
		if _, err := ConvertPerfetto(NewWalker(j, WalkOptions{}), &par, 2); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(seq.Bytes(), par.Bytes()) {
			t.Errorf("%s: ConvertPerfetto on 2 workers wrote %d bytes, unlike the sequential writer's %d", name, par.Len(), seq.Len())
		}
	}
}

// TestGoldenOTF2 pins the OTF2 archive (one worker: definition ids in rank
// order) by the SHA-256 of its definition and event files (the anchor
// file holds the creation time).
func TestGoldenOTF2(t *testing.T) {
	for name, dir := range goldenJobs(t) {
		j, err := OpenJob(dir)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "otf2")
		if _, err := ConvertOTF2(NewWalker(j, WalkOptions{}), out, 1); err != nil {
			t.Fatal(err)
		}
		var files []string
		filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && filepath.Base(p) != "traces.otf2" {
				files = append(files, p)
			}
			return err
		})
		sort.Strings(files)
		var sums bytes.Buffer
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(out, f)
			fmt.Fprintf(&sums, "%x %8d %s\n", sha256.Sum256(b), len(b), rel)
		}
		testutil.Golden(t, filepath.Join("testdata", "golden", name+".otf2.sha256"), sums.Bytes())
	}
}
