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
func convertPprof(path, out string, stdout, stderr io.Writer) error {
	p, info, err := profile.Load(path)
	if err != nil {
		return loadError(path, err)
	}
	if info != nil {
		for _, w := range info.Warnings {
			fmt.Fprintf(stderr, "mpiscope: warning: %s\n", w)
		}
		if s := info.Summary(); s != "" && (info.Partial || len(info.Missing) > 0 || info.Source == "snapshot") {
			fmt.Fprintf(stderr, "mpiscope: %s\n", s)
		}
	}
	if out == "-" {
		return pprofconv.Write(stdout, p)
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
	if err := pprofconv.Write(f, p); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "mpiscope: %d functions, %d callsites: %s\n", len(p.Funcs), len(p.Sites), out)
	return nil
}
