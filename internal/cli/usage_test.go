package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/profile"
)

// twoRanks writes a complete 2-rank profile as dir/profile.mps.
func twoRanks(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	p := &profile.Profile{
		Meta: profile.Meta{NumRanks: 2, Command: []string{"./app"}},
		Ranks: []profile.Rank{{Rank: 0, State: "final", Calls: 1000, AppNs: 1e9, MPINs: 1e8},
			{Rank: 1, State: "final", Calls: 1000, AppNs: 1e9, MPINs: 1e8}},
		Funcs: []profile.Func{{Name: "MPI_Send", Class: "p2p", Calls: 2000, Bytes: 16000, TimeNs: 2e8}},
	}
	if err := profile.WriteFile(filepath.Join(dir, profile.FinalFile), p); err != nil {
		t.Fatal(err)
	}
	return dir
}

func run(args ...string) (stdout, stderr string, code int) {
	var so, se bytes.Buffer
	code = Run(args, &so, &se)
	return so.String(), se.String(), code
}

// TestUsage: every usage error says what is wrong on stderr and exits 2,
// with nothing on stdout; help, however asked for, goes to stdout and exits
// 0; an unknown command is never run as a program.
func TestUsage(t *testing.T) {
	job := twoRanks(t)
	cases := []struct {
		args   []string
		code   int
		stdout string // "" means empty
		stderr string // "" means empty
	}{
		{[]string{"report", "-format", "xml", job}, 2, "", `mpiscope report: unknown -format "xml" (want text, json, csv or html)`},
		{[]string{"reprot", job}, 2, "", `mpiscope: unknown command "reprot" (did you mean "report"?): not a command, a file or a program on PATH`},
		{[]string{"convrt"}, 2, "", `(did you mean "convert"?)`},
		{[]string{"report", "--help"}, 0, "usage: mpiscope report", ""},
		{[]string{"report", "-h"}, 0, "-top", ""},
		{[]string{"help", "report"}, 0, "usage: mpiscope report", ""},
		{[]string{"help", "convert"}, 0, "usage: mpiscope convert", ""},
		{[]string{"help", "version"}, 0, "usage: mpiscope version", ""},
		{[]string{"help", "bogus"}, 2, "", `mpiscope help: unknown command "bogus"`},
		{[]string{"report", "-top", "0", job}, 2, "", "mpiscope report: -top 0: want at least 1 row (-all shows every row)"},
		{[]string{"report", "-top", "-1", job}, 2, "", "mpiscope report: -top -1: want at least 1 row"},
		{[]string{"report", "a", "b"}, 2, "", "mpiscope report: want one path (job directory, snapshot directory or .mps file), got 2 (a b)"},
		{[]string{"report"}, 2, "", "got none"},
		{[]string{"report", "-bogus", job}, 2, "", "mpiscope report: flag provided but not defined: -bogus"},
		{[]string{"convert", "--help"}, 0, "usage: mpiscope convert", ""},
		{[]string{"convert"}, 2, "", "mpiscope convert: want one job directory, got none"},
		{[]string{"convert", "--otf2", "--perfetto", job}, 2, "", "mpiscope convert: give one of --otf2, --perfetto and --pprof"},
		{[]string{"convert", job}, 2, "", "give one of --otf2, --perfetto and --pprof"},
		{[]string{"version", "--help"}, 0, "usage: mpiscope version", ""},
		{[]string{"version", "x"}, 2, "", "mpiscope version: takes no arguments, got 1 (x)"},
		{[]string{"version"}, 0, "mpiscope " + Version, ""},
		{[]string{"--help"}, 0, "mpiscope report", ""},
		{[]string{"-h"}, 0, "mpiscope report", ""},
		{[]string{"help"}, 0, "mpiscope convert", ""},
		{nil, 2, "", "mpiscope: no program or command given"},
		{[]string{"-o", "x"}, 2, "", "mpiscope: no program to run"},
		{[]string{"-o", "x", "-h"}, 0, "-family", ""},
		{[]string{"-bogus", "./app"}, 2, "", "mpiscope: flag provided but not defined: -bogus"},
		{[]string{"-o", "x", "no-such-program-here"}, 2, "", `"no-such-program-here" is not a file or a program on PATH`},
	}
	for _, c := range cases {
		so, se, code := run(c.args...)
		if code != c.code || (c.stdout == "") != (so == "") || !strings.Contains(so, c.stdout) ||
			(c.stderr == "") != (se == "") || !strings.Contains(se, c.stderr) {
			t.Errorf("mpiscope %s: exit %d, stdout %q, stderr %q; want exit %d, stdout with %q, stderr with %q",
				strings.Join(c.args, " "), code, so, se, c.code, c.stdout, c.stderr)
		}
		if c.code == 2 && !strings.Contains(se, "Run 'mpiscope help") {
			t.Errorf("mpiscope %s: usage error without the pointer to help: %q", strings.Join(c.args, " "), se)
		}
	}
	// help report is the report help, not the global usage.
	if so, _, _ := run("help", "report"); strings.Contains(so, "mpiscope convert") {
		t.Errorf("help report prints the global usage:\n%s", so)
	}
}

// TestReportNotes: a complete profile read from its profile.mps has no NOTE
// (it is not partial); a partial one has.
func TestReportNotes(t *testing.T) {
	job := twoRanks(t)
	for _, path := range []string{job, filepath.Join(job, profile.FinalFile)} {
		so, se, code := run("report", path)
		if code != 0 || strings.Contains(so, "NOTE") {
			t.Errorf("report %s: exit %d, stderr %q, NOTE in\n%s", path, code, se, so)
		}
	}
	p := &profile.Profile{Meta: profile.Meta{NumRanks: 4}, Ranks: []profile.Rank{{Rank: 0}}}
	part := filepath.Join(t.TempDir(), "part.mps")
	if err := profile.WriteFile(part, p); err != nil {
		t.Fatal(err)
	}
	if so, _, _ := run("report", part); !strings.Contains(so, "NOTE: partial profile: 1 of 4 ranks (missing: 1-3)") {
		t.Errorf("partial profile without its note:\n%s", so)
	}
}

// TestReportTruncatedFinal: a job directory whose only profile.mps is
// truncated gives that file and offset first, not "no profile found".
func TestReportTruncatedFinal(t *testing.T) {
	job := twoRanks(t)
	final := filepath.Join(job, profile.FinalFile)
	data, err := os.ReadFile(final)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(final, data[:len(data)-9], 0o666); err != nil {
		t.Fatal(err)
	}
	_, se, code := run("report", job)
	if code != 1 || !strings.HasPrefix(se, "mpiscope: "+final+": offset ") || strings.Contains(se, "no profile found") {
		t.Errorf("exit %d, stderr %q", code, se)
	}
}

// TestReportOutput: -o writes the report to a file, and CSV to a directory
// of tables.
func TestReportOutput(t *testing.T) {
	job := twoRanks(t)
	dir := t.TempDir()
	txt := filepath.Join(dir, "r.txt")
	if so, se, code := run("report", "-o", txt, job); code != 0 || so != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, so, se)
	}
	if b, err := os.ReadFile(txt); err != nil || !strings.Contains(string(b), "MPI_Send") {
		t.Errorf("r.txt: %v\n%s", err, b)
	}
	csvDir := filepath.Join(dir, "csv")
	if _, se, code := run("report", "-format", "csv", "-o", csvDir, job); code != 0 || !strings.Contains(se, "16 tables") {
		t.Fatalf("exit %d, stderr %q", code, se)
	}
	b, err := os.ReadFile(filepath.Join(csvDir, "funcs.csv"))
	if err != nil || !strings.Contains(string(b), "\nMPI_Send,p2p,2000,") {
		t.Errorf("funcs.csv: %v\n%s", err, b)
	}
}

// TestLaunchProgram: the launcher runs a program named by a path, by a
// name on PATH or by the name of a file in the current directory
// (MPISCOPE_ENABLE=never: without the library, so no MPI is needed), and
// refuses an unknown word with exit 2 without running anything.
func TestLaunchProgram(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "mpiscope")
	if b, err := exec.Command("go", "build", "-o", bin, "github.com/mpiscope/mpiscope/cmd/mpiscope").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app"), []byte("#!/bin/sh\necho ran \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"./app", "x"}, 0, "ran x\n"},
		{[]string{"app", "y"}, 0, "ran y\n"},
		{[]string{filepath.Join(dir, "app"), "z"}, 0, "ran z\n"},
		{[]string{"echo", "on", "path"}, 0, "on path\n"},
		{[]string{"reprot", "x"}, 2, ""},
	} {
		cmd := exec.Command(bin, c.args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "MPISCOPE_ENABLE=never")
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != c.code || so.String() != c.out {
			t.Errorf("mpiscope %s: exit %d, stdout %q, stderr %q; want %d, %q", strings.Join(c.args, " "), code, so.String(), se.String(), c.code, c.out)
		}
	}
}
