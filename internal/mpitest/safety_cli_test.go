package mpitest_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/profile"
)

// buildCLI builds the mpiscope command into a temporary directory.
func buildCLI(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mpiscope")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/mpiscope/mpiscope/cmd/mpiscope")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return bin
}

func runCLI(t *testing.T, bin string, args ...string) (string, string, int) {
	t.Helper()
	var so, se bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return so.String(), se.String(), code
}

func rankOnly(r int, calls int64) *profile.Profile {
	return &profile.Profile{
		Meta:  profile.Meta{NumRanks: 4, Partial: true, Command: []string{"./app"}},
		Ranks: []profile.Rank{{Rank: r, State: "signal", Calls: calls, AppNs: 1e9, MPINs: 1e8, Threads: 1}},
		Funcs: []profile.Func{{Name: "MPI_Barrier", Class: "coll", Calls: calls, TimeNs: 1e8, MinCallNs: 1, MaxCallNs: 10,
			RankTime: profile.SpreadOf(r, 1e8)}},
	}
}

// TestSafetyReportPartial: mpiscope report on a job directory holding only
// the rank files of ranks 0 and 2 of 4 (as a killed job leaves it) merges
// them and says the data is partial and which ranks are missing. No MPI
// needed.
func TestSafetyReportPartial(t *testing.T) {
	bin := buildCLI(t)
	job := t.TempDir()
	for _, r := range []int{0, 2} {
		if err := profile.WriteFile(profile.RankFile(job, r), rankOnly(r, int64(10+r))); err != nil {
			t.Fatal(err)
		}
	}
	// A write interrupted by SIGKILL leaves a temporary file: ignored.
	os.WriteFile(filepath.Join(filepath.Dir(profile.RankFile(job, 1)), ".r1.mps.tmp123"), []byte("MPISC"), 0o666)
	out, errOut, code := runCLI(t, bin, "report", job)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if !strings.Contains(out, "partial profile: 2 of 4 ranks (missing: 1, 3), 2 files") {
		t.Errorf("no partial note:\n%s", out)
	}
	if !strings.Contains(out, "signal 2") {
		t.Errorf("no rank states:\n%s", out)
	}
	js, _, code := runCLI(t, bin, "report", "-format", "json", job)
	if code != 0 || !strings.Contains(js, `"calls": 22`) && !strings.Contains(js, `"calls":22`) {
		t.Errorf("merged calls (10 + 12) not in JSON (exit %d):\n%.2000s", code, js)
	}
}

// TestSafetyReportCorrupt: mpiscope report on a corrupt or truncated file
// exits 1 with the file name and the byte offset in the message, and on a
// directory whose only rank file is corrupt, likewise.
func TestSafetyReportCorrupt(t *testing.T) {
	bin := buildCLI(t)
	dir := t.TempDir()
	good := profile.Marshal(rankOnly(1, 5))
	bad := bytes.Clone(good)
	bad[len(bad)/2] ^= 0xff
	cases := map[string][]byte{
		"truncated.mps": good[:len(good)-7],
		"flipped.mps":   bad,
		"garbage.mps":   []byte("not a profile at all"),
		"empty.mps":     nil,
	}
	for name, data := range cases {
		path := filepath.Join(dir, name)
		os.WriteFile(path, data, 0o666)
		_, errOut, code := runCLI(t, bin, "report", path)
		if code != 1 || !strings.Contains(errOut, path+": offset ") || strings.Contains(errOut, "panic") {
			t.Errorf("%s: exit %d, stderr %q", name, code, errOut)
		}
	}
	job := filepath.Join(dir, "job")
	path := profile.RankFile(job, 1)
	os.MkdirAll(filepath.Dir(path), 0o777)
	os.WriteFile(path, bad, 0o666)
	_, errOut, code := runCLI(t, bin, "report", job)
	if code != 1 || !strings.Contains(errOut, path+": offset ") {
		t.Errorf("job: exit %d, stderr %q", code, errOut)
	}
}
