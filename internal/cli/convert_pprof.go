package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mpiscope/mpiscope/internal/pprofconv"
	"github.com/mpiscope/mpiscope/profile"
)

// btoi is 1 for true.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// convertPprof writes the profile at path (a job or snapshot directory, or
// a .mps file) as a pprof profile: to out, "-" for stdout, or by default
// profile.pb.gz in the directory (beside the file).
func convertPprof(path, out string, byRank bool, stdout, stderr io.Writer) error {
	p, info, notes, err := loadInfo(path, stderr) // diff.go
	if err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintf(stderr, "mpiscope: %s\n", n)
	}
	ranks := rankFiles(path, info)
	if byRank {
		ranks = nil
	}
	conv := func(w io.Writer) error {
		if byRank {
			return pprofconv.WriteByRank(w, p)
		}
		if len(ranks) > 0 {
			return pprofconv.WriteRanks(w, p, ranks)
		}
		return pprofconv.Write(w, p)
	}
	if out == "-" {
		return conv(stdout)
	}
	if special(out) { // a device or a pipe: in place (convert.go)
		f, err := os.OpenFile(out, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		if err := conv(f); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	if out == "" {
		dir := path
		if st, err := os.Stat(path); err == nil && !st.IsDir() {
			dir = filepath.Dir(path)
		}
		out = filepath.Join(dir, "profile.pb.gz")
	}
	// Written under a temporary name, renamed when complete.
	tmp, err := tempName(out)
	if err != nil {
		return err
	}
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := conv(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		return err
	}
	by := ""
	if byRank {
		by = fmt.Sprintf(" (%d samples by rank, function and communicator)", len(p.RankFuncs))
	}
	if len(ranks) > 0 {
		by = fmt.Sprintf(" (labelled by rank, from %d rank files)", len(ranks))
	}
	fmt.Fprintf(stderr, "mpiscope: %d functions, %d callsites%s: %s\n", len(p.Funcs), len(p.Sites), by, out)
	return nil
}

// rankFiles returns the profiles of the rank files of a directory whose
// profile was merged from them (a snapshot directory, or a job that did not
// reach MPI_Finalize), one rank each, so that the samples can carry their
// rank; none for a final profile, whose merge keeps no per-rank split of
// the callsites. A file Load skipped (and warned of) is left out here too.
func rankFiles(path string, info *profile.LoadInfo) []*profile.Profile {
	if info == nil || info.Source == "final" || info.Source == "file" {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(path, "ranks", "*", "r*.mps"))
	var out []*profile.Profile
	for _, f := range files {
		p, _, err := profile.Load(f)
		if err != nil || len(p.Ranks) != 1 {
			continue
		}
		out = append(out, p)
	}
	return out
}
