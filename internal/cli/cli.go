// Package cli is the mpiscope command: a launcher prefix that preloads the
// profiling library into an MPI program, and the tools that read what it
// wrote.
package cli

import (
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mpiscope/mpiscope/internal/report"
	"github.com/mpiscope/mpiscope/profile"
)

// Version is the command's version.
const Version = "0.1.0"

const usage = `usage:
  mpiscope [-o dir] [-family openmpi|mpich] [-lib path] program [args...]
      run program with libmpiscope preloaded (use as: mpirun -np N mpiscope ./app)
  mpiscope report [-all] [-format text|json|csv] [-top N] path
      print the profile in a job directory, snapshot directory or .mps file
  mpiscope convert (--otf2 | --perfetto) [-o out] jobdir
      export the event trace (MPISCOPE_TRACE=1) as OTF2 or Perfetto JSON
  mpiscope version
`

// ErrUsage marks errors that deserve exit status 2.
var ErrUsage = errors.New("usage")

// Main runs the command with args (without the program name).
func Main(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return ErrUsage
	}
	switch args[0] {
	case "report":
		return reportCmd(args[1:], stdout, stderr)
	case "convert":
		return convertCmd(args[1:], stdout, stderr) // convert.go
	case "version", "-version", "--version":
		fmt.Fprintf(stdout, "mpiscope %s\n", Version)
		return nil
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return launch(args, stderr)
}

func reportCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	all := fs.Bool("all", false, "never truncate tables")
	format := fs.String("format", "text", "output `format`: text, json or csv")
	top := fs.Int("top", report.DefaultTop, "rows per table")
	if err := fs.Parse(args); err != nil {
		return ErrUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprint(stderr, usage)
		return ErrUsage
	}
	f, err := report.ParseFormat(*format)
	if err != nil {
		return fmt.Errorf("%v: %w", err, ErrUsage)
	}
	p, info, err := profile.Load(fs.Arg(0))
	if err != nil {
		return err
	}
	var notes []string
	if info != nil {
		for _, w := range info.Warnings {
			fmt.Fprintf(stderr, "mpiscope: warning: %s\n", w)
		}
		if s := info.Summary(); s != "" && (info.Partial || len(info.Missing) > 0 || info.Source != "final") {
			notes = append(notes, s)
		}
	}
	return report.Write(stdout, p, f, report.Options{All: *all, Top: *top, Source: fs.Arg(0), Notes: notes})
}

// launch execs the program with libmpiscope preloaded (without it under
// MPISCOPE_ENABLE=never).
func launch(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("mpiscope", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "job `directory` (sets MPISCOPE_OUT)")
	fam := fs.String("family", "", "MPI `family` of the program: openmpi or mpich (default: read from the program)")
	lib := fs.String("lib", "", "libmpiscope.so `path` to preload (default: the build matching the program)")
	if err := fs.Parse(args); err != nil {
		return ErrUsage
	}
	if fs.NArg() == 0 {
		fmt.Fprint(stderr, usage)
		return ErrUsage
	}
	prog, err := exec.LookPath(fs.Arg(0))
	if err != nil {
		return err
	}
	if os.Getenv("MPISCOPE_ENABLE") == "never" {
		// Profiling switched off for the whole run: the program runs
		// without the library, so nothing of ours is on its calls' path.
		return syscall.Exec(prog, fs.Args(), os.Environ())
	}
	so, err := pickLibrary(prog, *fam, *lib)
	if err != nil {
		if errors.Is(err, ErrUsage) {
			fmt.Fprintf(stderr, "mpiscope: %v\n", err)
		}
		return err
	}
	env := os.Environ()
	env = setEnv(env, "LD_PRELOAD", joinPreload(so, os.Getenv("LD_PRELOAD")))
	if *out != "" {
		env = setEnv(env, "MPISCOPE_OUT", *out)
	}
	return syscall.Exec(prog, fs.Args(), env)
}

// pickLibrary chooses the library to preload into prog: lib when given,
// else the build for family, else the build for the program's own MPI. A
// family or library that is not the program's MPI is refused (ErrUsage):
// a library built for another MPI would pass every call on unprofiled
// (special.c) at best. So is a -lib that does not exist or links no MPI
// that mpiscope knows.
func pickLibrary(prog, family, lib string) (string, error) {
	if family != "" && family != "openmpi" && family != "mpich" {
		return "", fmt.Errorf("-family %s: want openmpi or mpich: %w", family, ErrUsage)
	}
	progFam, progErr := ProgramFamily(prog)
	if lib != "" {
		if _, err := os.Stat(lib); err != nil {
			return "", fmt.Errorf("-lib %s: %v: %w", lib, err, ErrUsage)
		}
		libFam, err := ProgramFamily(lib)
		if err != nil {
			return "", fmt.Errorf("-lib %s is not a libmpiscope.so built for an MPI that mpiscope knows (%v): %w", lib, err, ErrUsage)
		}
		if family != "" && family != libFam {
			return "", fmt.Errorf("-lib %s is built for %s, not -family %s: %w", lib, libFam, family, ErrUsage)
		}
		if progErr == nil && progFam != libFam {
			return "", fmt.Errorf("-lib %s is built for %s but %s runs on %s: pass a library built for %s (or leave -lib out): %w",
				lib, libFam, prog, progFam, progFam, ErrUsage)
		}
		return filepath.Abs(lib)
	}
	if family == "" {
		if progErr != nil {
			return "", progErr
		}
		family = progFam
	} else if progErr == nil && progFam != family {
		return "", fmt.Errorf("-family %s does not match %s, which runs on %s: pass -family %s (or leave it out): %w",
			family, prog, progFam, progFam, ErrUsage)
	}
	return findLibrary(family)
}

func joinPreload(so, old string) string {
	if old == "" {
		return so
	}
	return so + ":" + old
}

func setEnv(env []string, k, v string) []string {
	for i, kv := range env {
		if strings.HasPrefix(kv, k+"=") {
			env[i] = k + "=" + v
			return env
		}
	}
	return append(env, k+"="+v)
}

// ProgramFamily tells the MPI family a program is linked with, from the
// sonames it needs (Open MPI: libmpi.so.40 and its Fortran libraries;
// MPICH: libmpich.so.12, libmpifort.so.12, or libmpi.so.12).
func ProgramFamily(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", fmt.Errorf("%s is not an ELF program (%v): cannot tell its MPI; pass -family openmpi|mpich or -lib path/to/libmpiscope.so", path, err)
	}
	defer f.Close()
	libs, err := f.ImportedLibraries()
	if err != nil {
		return "", fmt.Errorf("%s: reading its libraries: %v", path, err)
	}
	for _, l := range libs {
		switch {
		case strings.HasPrefix(l, "libmpich") || strings.HasPrefix(l, "libmpifort") || l == "libmpi.so.12" || strings.HasPrefix(l, "libmpicxx"):
			return "mpich", nil
		case strings.HasPrefix(l, "libmpi.so.40") || strings.HasPrefix(l, "libmpi_mpifh") || strings.HasPrefix(l, "libmpi_usempi") || strings.HasPrefix(l, "libmpi_cxx") || strings.HasPrefix(l, "libopen-"):
			return "openmpi", nil
		}
	}
	return "", fmt.Errorf("%s links no MPI library that mpiscope knows (needs %s): pass -family openmpi|mpich or -lib path/to/libmpiscope.so", path, strings.Join(libs, ", "))
}

// findLibrary finds libmpiscope.so for a family next to the command:
// <dir of mpiscope>/../lib/<family>/libmpiscope.so, or $MPISCOPE_LIBDIR/<family>/.
func findLibrary(family string) (string, error) {
	var dirs []string
	if d := os.Getenv("MPISCOPE_LIBDIR"); d != "" {
		dirs = append(dirs, d)
	}
	if exe, err := os.Executable(); err == nil {
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
		dirs = append(dirs, filepath.Join(filepath.Dir(exe), "..", "lib"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, family, "libmpiscope.so")
		if _, err := os.Stat(p); err == nil {
			return filepath.Abs(p)
		}
	}
	return "", fmt.Errorf("no libmpiscope.so built for %s (looked in %s): build it with 'make MPICC=<the %s mpicc>', or pass -lib", family, strings.Join(dirs, ", "), family)
}
