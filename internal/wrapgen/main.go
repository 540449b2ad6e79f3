package wrapgen

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mpiscope/mpiscope/internal/mpih"
)

// Main is the mpiwrapgen command.
func Main(argv []string, stdout io.Writer) error {
	if len(argv) > 0 && argv[0] == "fortran" {
		return FortranMain(argv[1:], stdout) // fortran.go
	}
	fs := flag.NewFlagSet("mpiwrapgen", flag.ContinueOnError)
	mpicc := fs.String("mpicc", "", "MPI C compiler `command` to probe")
	from := fs.String("from", "", "read saved probe answers `prefix`.{aux,macros,symbols}")
	save := fs.String("save", "", "save the probe answers as `prefix`.{aux,macros,symbols}")
	out := fs.String("o", "", "write the C wrappers to `file`")
	list := fs.Bool("skipped", false, "print the functions left out, with reasons")
	printFamily := fs.Bool("print-family", false, "print the MPI family (openmpi or mpich) and exit")
	shim := fs.String("shim", "", "write the stacking shim's C source to `file` (docs/stacking.md)")
	passthrough := fs.Bool("passthrough", false, "emit wrappers that only call PMPI_ (benchmark floor)")
	qmpi := fs.String("qmpi", "", "write the QMPI tool wrappers' C source to `file` (docs/stacking.md)")
	if err := fs.Parse(argv); err != nil {
		return err
	}
	var h *mpih.Header
	var cmdline string
	var aux []byte // gcc -aux-info: the QMPI_ declarations (-qmpi)
	switch {
	case *from != "":
		var err error
		h, err = mpih.FromFiles(*from+".aux", *from+".macros", *from+".symbols")
		if err != nil {
			return err
		}
		if aux, err = os.ReadFile(*from + ".aux"); err != nil {
			return err
		}
		cmdline = "mpiwrapgen -from " + filepath.Base(*from)
	case *mpicc != "":
		raw, err := mpih.Probe(*mpicc)
		if err != nil {
			return err
		}
		if *save != "" {
			for ext, data := range map[string][]byte{".aux": stripPaths(raw.AuxInfo), ".macros": raw.Macros, ".symbols": raw.Symbols} {
				if err := os.WriteFile(*save+ext, data, 0o666); err != nil {
					return err
				}
			}
		}
		if h, err = raw.Header(); err != nil {
			return err
		}
		aux = raw.AuxInfo
		cmdline = "go run ./cmd/mpiwrapgen -mpicc " + *mpicc
	default:
		return fmt.Errorf("need -mpicc or -from")
	}
	if *printFamily {
		if h.Family != "openmpi" && h.Family != "mpich" {
			return fmt.Errorf("%s: neither Open MPI nor MPICH (mpi.h defines neither OMPI_MAJOR_VERSION nor MPICH_VERSION)", *mpicc)
		}
		fmt.Fprintln(stdout, h.Family)
		return nil
	}
	p, err := NewPlan(h)
	if err != nil {
		return err
	}
	if *passthrough {
		p.Passthrough = true
		cmdline += " -passthrough"
	}
	if *out != "" {
		if err := os.WriteFile(*out, p.GenerateC(cmdline+" -o "+filepath.Base(*out)), 0o666); err != nil {
			return err
		}
	}
	if *shim != "" {
		if err := os.WriteFile(*shim, p.GenerateShim(cmdline+" -shim "+filepath.Base(*shim)), 0o666); err != nil {
			return err
		}
	}
	if *qmpi != "" {
		if err := os.WriteFile(*qmpi, p.GenerateQMPI(cmdline+" -qmpi "+filepath.Base(*qmpi), QMPINames(aux)), 0o666); err != nil {
			return err
		}
	}
	if *list {
		names := make([]string, 0, len(p.Skipped))
		for n := range p.Skipped {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(stdout, "%s\t%s\n", n, p.Skipped[n])
		}
	}
	return nil
}

// stripPaths keeps saved aux-info free of machine-specific comment noise
// except the file name, so test data is stable.
func stripPaths(aux []byte) []byte {
	var b strings.Builder
	for _, line := range strings.Split(string(aux), "\n") {
		if strings.Contains(line, " MPI_") || strings.Contains(line, " PMPI_") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return []byte(b.String())
}
