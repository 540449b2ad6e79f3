// Command mpiscope profiles MPI programs: run it as a launcher prefix
// (mpirun -np 4 mpiscope ./app) and read the results with mpiscope report.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/mpiscope/mpiscope/internal/cli"
)

func main() {
	if err := cli.Main(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, cli.ErrUsage) {
			os.Exit(2)
		}
		fmt.Fprintf(os.Stderr, "mpiscope: %v\n", err)
		os.Exit(1)
	}
}
