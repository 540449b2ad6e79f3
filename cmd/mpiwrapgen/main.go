// Command mpiwrapgen generates mpiscope's C wrappers from the installed mpi.h.
//
// Usage, from the repository's root (scripts/build-lib.sh runs the first
// three lines, the second and third as one, and the first fortran line,
// with -optional, for each MPI family found; TestUsageLines runs every
// line):
//
//	mpiwrapgen -mpicc mpicc.openmpi -print-family
//	mpiwrapgen -mpicc mpicc.openmpi -o internal/interpose/zwrap_openmpi.c
//	mpiwrapgen -mpicc mpicc.mpich -qmpi internal/interpose/zqmpi_mpich.c
//	mpiwrapgen -mpicc mpicc.openmpi -passthrough -o zwrap_openmpi.c
//	mpiwrapgen -mpicc mpicc.mpich -save internal/wrapgen/testdata/mpich-4.0.2
//	mpiwrapgen -from internal/wrapgen/testdata/openmpi-4.1.4 -o out.c -skipped
//
//	mpiwrapgen fortran -mpicc mpicc.openmpi -o internal/interpose/zfwrap_openmpi.c -ldflags
//	mpiwrapgen fortran -mpicc mpicc.mpich -save internal/wrapgen/testdata/fortran-mpich-4.0.2.fsymbols
//	mpiwrapgen fortran -from DIR/mpich-4.0.2 -list
//
// It asks the compiler (gcc -aux-info, -E -dM) for the prototypes and macros
// and reads the PMPI_ symbols exported by the library mpicc links; -save
// writes those answers to files (PREFIX.aux, PREFIX.macros,
// PREFIX.symbols) so that the generator can be tested without MPI; -from
// reads them back. -qmpi writes mpiscope's QMPI tool wrappers (one per
// recorded function whose QMPI_ form mpi.h declares; none without QMPI,
// docs/stacking.md). -passthrough writes wrappers that only call PMPI_ (the
// benchmarks' floor of interposition). The fortran form writes the Fortran
// entry points from the symbols of the libraries mpifort links (-ldflags
// prints their link flags); its -save writes those symbols to one file,
// and its -from reads PREFIX.fsymbols beside the C answers.
package main

import (
	"fmt"
	"os"

	"github.com/mpiscope/mpiscope/internal/wrapgen"
)

func main() {
	if err := wrapgen.Main(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "mpiwrapgen: %v\n", err)
		os.Exit(1)
	}
}
