// Command mpiscope profiles MPI programs: run it as a launcher prefix
// (mpirun -np 4 mpiscope ./app) and read the results with mpiscope report.
package main

import (
	"os"

	"github.com/mpiscope/mpiscope/internal/cli"
)

func main() {
	os.Exit(cli.Run(os.Args[1:], os.Stdout, os.Stderr))
}
