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
  mpiscope [-o dir] [-family openmpi|mpich] [-lib path] [-with a.so,b.so] program [args...]
      run program with libmpiscope preloaded (use as: mpirun -np N mpiscope ./app);
      -with stacks PMPI tool libraries below mpiscope, in that order (docs/stacking.md);
      program is a path (./app, /bin/app), or a name on PATH or of a file in the
      current directory: any other word is an unknown command, never run
  mpiscope report [-all] [-top N] [-format text|json|csv|html] [-o out] path
      print the profile in a job directory, snapshot directory or .mps file
  mpiscope convert (--otf2 | --perfetto | --pprof) [-o out] jobdir
      export the event trace (MPISCOPE_TRACE=1) as OTF2 or Perfetto JSON, or the profile for pprof
  mpiscope analyze [-format text|json] [-top N] [-all] [-o out] jobdir
      wait states and critical path from the event trace
  mpiscope diff [-format text|json] [-per-rank] [-all] [-top N] [-o out] A B
      what changed from run A to run B, per function, callsite, communicator and message size
  mpiscope view [-http host:port] [-open] jobdir [jobdir_b]
      show the profile (plots, drill-down, timeline, live update) in the browser
  mpiscope version
      print the version
  mpiscope help [command]
      print this help, or a command's

Exit status: 0 on success (and for help), 2 on a usage error, 1 on any other error.
`

const reportUsage = `usage: mpiscope report [-all] [-top N] [-format text|json|csv|html] [-o out] path
  Print the profile in a job directory, a snapshot directory (DIR/snapshot-N)
  or a .mps file. Text shows the top N rows of each table; JSON and CSV carry
  everything. CSV is tidy: with -o DIR, one file per table (DIR/funcs.csv,
  DIR/sites.csv, ...); on stdout, one long table (table,row,column,value).
  HTML is one self-contained page (plots, sortable and filterable tables;
  up to 1000 rows per table unless -all).
`

const versionUsage = `usage: mpiscope version
  Print the version of mpiscope.
`

const helpUsage = `usage: mpiscope help [command]
  Print the usage of mpiscope, or of a command (report, convert, analyze, diff, view, version).
`

// ErrUsage marks errors that deserve exit status 2: the command line is
// wrong. Errors made by usageErr say what is wrong and wrap ErrUsage.
var ErrUsage = errors.New("usage")

// errHelp is returned by a command that printed its help as asked: exit
// status 0.
var errHelp = errors.New("help printed")

// usageError is a usage error of command cmd ("" for the launcher).
type usageError struct{ cmd, msg string }

func (e *usageError) Error() string { return e.msg }
func (e *usageError) Unwrap() error { return ErrUsage }

// usageErr returns the usage error of command cmd with a message saying
// what is wrong.
func usageErr(cmd, format string, a ...any) error {
	return &usageError{cmd: cmd, msg: fmt.Sprintf(format, a...)}
}

// commandUsage is the help text of a command, its first line the synopsis.
func commandUsage(cmd string) string {
	switch cmd {
	case "report":
		return reportUsage
	case "convert":
		return convertUsage
	case "analyze":
		return analyzeUsage
	case "diff":
		return diffUsage
	case "view":
		return viewUsage
	case "version":
		return versionUsage
	case "help":
		return helpUsage
	}
	return usage
}

// parseFlags parses a command's flags. A bad flag is a usage error of the
// command; -h, -help or --help prints the command's help and flags to stdout
// and returns errHelp.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer, help string) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, help)
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		switch {
		case n == 0:
		case fs.Name() == "mpiscope":
			fmt.Fprint(stdout, "\nlauncher flags:\n")
		default:
			fmt.Fprint(stdout, "\nflags:\n")
		}
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return errHelp
	}
	if err != nil {
		return usageErr(fs.Name(), "%v", err)
	}
	return nil
}

// argList describes the positional arguments in a usage error.
func argList(args []string) string {
	if len(args) == 0 {
		return "none"
	}
	return fmt.Sprintf("%d (%s)", len(args), strings.Join(args, " "))
}

// Run runs the command with args (without the program name), prints what
// went wrong to stderr and returns the exit status: 0 on success or help, 2
// on a usage error (with the command's synopsis), 1 otherwise.
func Run(args []string, stdout, stderr io.Writer) int {
	err := Main(args, stdout, stderr)
	if err == nil {
		return 0
	}
	var ue *usageError
	if errors.As(err, &ue) {
		name := "mpiscope"
		if ue.cmd != "" && ue.cmd != "mpiscope" {
			name += " " + ue.cmd
		}
		fmt.Fprintf(stderr, "%s: %s\n", name, ue.msg)
		syn, _, _ := strings.Cut(commandUsage(ue.cmd), "\n")
		if ue.cmd == "" || ue.cmd == "mpiscope" {
			syn = "usage: mpiscope [-o dir] [-family openmpi|mpich] [-lib path] program [args...]"
		}
		fmt.Fprintf(stderr, "%s\nRun 'mpiscope help%s' for more.\n", syn, strings.TrimPrefix(name, "mpiscope"))
		return 2
	}
	fmt.Fprintf(stderr, "mpiscope: %v\n", err)
	if errors.Is(err, ErrUsage) {
		return 2
	}
	return 1
}

// commands are the subcommands; any other first argument names a program
// to launch.
var commands = []string{"report", "convert", "analyze", "diff", "view", "version", "help"}

// Main runs the command with args (without the program name). Help output
// returns nil; a usage error wraps ErrUsage. Run prints the error.
func Main(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageErr("", "no program or command given")
	}
	var err error
	switch args[0] {
	case "report":
		err = reportCmd(args[1:], stdout, stderr)
	case "convert":
		err = convertCmd(args[1:], stdout, stderr) // convert.go
	case "analyze":
		err = analyzeCmd(args[1:], stdout, stderr) // analyze.go
	case "diff":
		err = diffCmd(args[1:], stdout, stderr) // diff.go
	case "view":
		err = viewCmd(args[1:], stdout, stderr) // view.go
	case "version", "-version", "--version":
		err = versionCmd(args[1:], stdout)
	case "help", "-h", "-help", "--help":
		err = helpCmd(args[1:], stdout, stderr)
	default:
		if !strings.HasPrefix(args[0], "-") {
			if _, perr := findProgram(args[0]); perr != nil {
				return unknownCommand(args[0])
			}
		}
		err = launch(args, stdout, stderr)
	}
	if errors.Is(err, errHelp) {
		return nil
	}
	return err
}

// unknownCommand is the usage error of a first argument that is neither a
// command nor a program.
func unknownCommand(name string) error {
	hint := ""
	for _, c := range commands {
		if editDistance(name, c) <= 2 {
			hint = fmt.Sprintf(" (did you mean %q?)", c)
			break
		}
	}
	return usageErr("", "unknown command %q%s: not a command, a file or a program on PATH", name, hint)
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// findProgram resolves the program to launch: a name with a slash is used
// as is; another is looked up on PATH, then in the current directory.
func findProgram(name string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	if p, err := exec.LookPath(name); err == nil || errors.Is(err, exec.ErrDot) {
		return p, nil
	}
	if st, err := os.Stat(name); err == nil && st.Mode().IsRegular() {
		return "./" + name, nil
	}
	return "", fmt.Errorf("%q is not a file or a program on PATH", name)
}

func versionCmd(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	if err := parseFlags(fs, args, stdout, versionUsage); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("version", "takes no arguments, got %s", argList(fs.Args()))
	}
	fmt.Fprintf(stdout, "mpiscope %s\n", Version)
	return nil
}

func helpCmd(args []string, stdout, stderr io.Writer) error {
	switch {
	case len(args) == 0:
		fmt.Fprint(stdout, usage)
		return nil
	case len(args) > 1:
		return usageErr("help", "takes at most one command, got %s", argList(args))
	}
	switch args[0] {
	case "report", "convert", "analyze", "diff", "view", "version":
		return Main([]string{args[0], "-h"}, stdout, stderr)
	case "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return usageErr("help", "unknown command %q (commands: %s)", args[0], strings.Join(commands, ", "))
}

func reportCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	all := fs.Bool("all", false, "never truncate tables")
	format := fs.String("format", "text", "output `format`: text, json, csv or html")
	top := fs.Int("top", report.DefaultTop, "rows per table (at least 1; -all for every row)")
	out := fs.String("o", "", "write to `out` instead of stdout (with -format csv: a directory, one file per table)")
	if err := parseFlags(fs, args, stdout, reportUsage); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErr("report", "want one path (job directory, snapshot directory or .mps file), got %s", argList(fs.Args()))
	}
	f, err := report.ParseFormat(*format)
	if err != nil {
		return usageErr("report", "unknown -format %q (want text, json, csv or html)", *format)
	}
	if *top < 1 {
		return usageErr("report", "-top %d: want at least 1 row (-all shows every row)", *top)
	}
	path := fs.Arg(0)
	p, info, err := profile.Load(path)
	if err != nil {
		return loadError(path, err)
	}
	var notes []string
	if info != nil {
		for _, w := range info.Warnings {
			fmt.Fprintf(stderr, "mpiscope: warning: %s\n", w)
		}
		// A complete profile needs no note, whether read from a job
		// directory or its profile.mps: the header says the rest.
		if s := info.Summary(); s != "" && (info.Partial || len(info.Missing) > 0 || info.Source == "snapshot") {
			notes = append(notes, s)
		}
	}
	o := report.Options{All: *all, Top: *top, Source: path, Notes: notes}
	if *out == "" {
		return report.Write(stdout, p, f, o)
	}
	if f == report.CSV {
		files, err := report.WriteCSVDir(*out, p, o)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "mpiscope: %d tables: %s\n", len(files), *out)
		return nil
	}
	w, err := os.Create(*out)
	if err != nil {
		return err
	}
	if err := report.Write(w, p, f, o); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// loadError puts the real reason first when a job directory's only profile
// file is corrupt: Load's directory message starts with "no profile found",
// which hides that there was one.
func loadError(path string, err error) error {
	var fe *profile.FormatError
	if errors.As(err, &fe) && fe.File == filepath.Join(path, profile.FinalFile) {
		return fmt.Errorf("%v (no rank files or snapshots to read instead)", fe)
	}
	return err
}

// launch execs the program with libmpiscope preloaded (without it under
// MPISCOPE_ENABLE=never).
func launch(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mpiscope", flag.ContinueOnError)
	out := fs.String("o", "", "job `directory` (sets MPISCOPE_OUT)")
	fam := fs.String("family", "", "MPI `family` of the program: openmpi or mpich (default: read from the program)")
	lib := fs.String("lib", "", "libmpiscope.so `path` to preload (default: the build matching the program)")
	with := fs.String("with", "", "comma-separated PMPI tool `libraries` to stack below mpiscope, top first (sets MPISCOPE_STACK)")
	if err := parseFlags(fs, args, stdout, usage); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageErr("", "no program to run")
	}
	prog, err := findProgram(fs.Arg(0))
	if err != nil {
		return usageErr("", "%v", err)
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
	if *with != "" {
		env = setEnv(env, "MPISCOPE_STACK", stackList(*with))
	}
	return syscall.Exec(prog, fs.Args(), env)
}

// stackList turns -with's comma-separated libraries into MPISCOPE_STACK:
// absolute paths joined by ':'. A library that does not exist is passed on
// all the same: each rank warns and runs on without it (chain.c).
func stackList(with string) string {
	var libs []string
	for _, l := range strings.Split(with, ",") {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		if a, err := filepath.Abs(l); err == nil {
			l = a
		}
		libs = append(libs, l)
	}
	return strings.Join(libs, ":")
}

// pickLibrary chooses the library to preload into prog: lib when given,
// else the build for family, else the build for the program's own MPI. A
// family or library that is not the program's MPI is refused (ErrUsage):
// a library built for another MPI would pass every call on unprofiled
// (lifecycle.c) at best. So is a -lib that does not exist or links no MPI
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
