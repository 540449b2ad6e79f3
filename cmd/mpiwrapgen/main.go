// Command mpiwrapgen generates mpiscope's C wrappers from the installed mpi.h.
//
// Usage:
//
//	mpiwrapgen -mpicc mpicc.openmpi -o internal/interpose/zwrap_openmpi.c
//	mpiwrapgen -mpicc mpicc.mpich -save internal/wrapgen/testdata/mpich
//	mpiwrapgen -from internal/wrapgen/testdata/openmpi -o out.c
//
// It asks the compiler (gcc -aux-info, -E -dM) for the prototypes and macros
// and reads the PMPI_ symbols exported by the library mpicc links; -save
// writes those answers to files (DIR.aux, DIR.macros, DIR.symbols) so that the
// generator can be tested without MPI; -from reads them back.
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
