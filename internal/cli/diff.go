package cli

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/mpiscope/mpiscope/internal/report"
	"github.com/mpiscope/mpiscope/profile"
)

const diffUsage = `usage: mpiscope diff [-format text|json] [-per-rank] [-all] [-top N] [-o out] A B
  Print what changed from run A to run B (job directories, snapshot
  directories or .mps files): application and MPI time, and per function,
  callsite (matched by function, file and line, whatever the addresses of
  either build), communicator and message-size bin the calls, time and bytes
  of each run, the change and the change in percent of A; each table sorted
  by the absolute change in time, rows without change left out. The header
  says when the runs differ in rank count, command line or MPI library.
  -per-rank divides each run's values by its number of ranks.
`

// diffCmd compares two profiles.
func diffCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	format := fs.String("format", "text", "output `format`: text or json")
	perRank := fs.Bool("per-rank", false, "divide each run's values by its number of ranks")
	all := fs.Bool("all", false, "never truncate tables")
	top := fs.Int("top", report.DefaultTop, "rows per table (at least 1; -all for every row)")
	out := fs.String("o", "", "write to `out` instead of stdout")
	if err := parseFlags(fs, args, stdout, diffUsage); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usageErr("diff", "want two paths (job directories, snapshot directories or .mps files), got %s", argList(fs.Args()))
	}
	f, err := report.ParseFormat(*format)
	if err != nil || (f != report.Text && f != report.JSON) {
		return usageErr("diff", "unknown -format %q (want text or json)", *format)
	}
	if *top < 1 {
		return usageErr("diff", "-top %d: want at least 1 row (-all shows every row)", *top)
	}
	o := report.DiffOptions{PerRank: *perRank, All: *all, Top: *top, SourceA: fs.Arg(0), SourceB: fs.Arg(1)}
	var ps [2]*profile.Profile
	var notes [2][]string
	for i, path := range fs.Args() {
		p, _, n, err := loadInfo(path, stderr)
		if err != nil {
			return err
		}
		ps[i], notes[i] = p, n
	}
	o.NotesA, o.NotesB = notes[0], notes[1]
	if *out == "" {
		return report.WriteDiff(stdout, ps[0], ps[1], f, o)
	}
	w, err := os.Create(*out)
	if err != nil {
		return err
	}
	if err := report.WriteDiff(w, ps[0], ps[1], f, o); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// loadInfo loads the profile at path as report does: warnings to stderr,
// and the note that a partial or snapshot profile deserves.
func loadInfo(path string, stderr io.Writer) (*profile.Profile, *profile.LoadInfo, []string, error) {
	p, info, err := profile.Load(path)
	if err != nil {
		return nil, nil, nil, loadError(path, err)
	}
	var notes []string
	if info != nil {
		for _, w := range info.Warnings {
			fmt.Fprintf(stderr, "mpiscope: warning: %s\n", w)
		}
		// A complete profile needs no note, whether read from a job
		// directory or its profile.mps.
		if s := info.Summary(); s != "" && (info.Partial || len(info.Missing) > 0 || info.Source == "snapshot") {
			notes = append(notes, s)
		}
	}
	return p, info, notes, nil
}
