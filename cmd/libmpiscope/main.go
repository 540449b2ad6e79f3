//go:build mpiscope_openmpi || mpiscope_mpich

// Command libmpiscope is the c-shared (and c-archive) packaging of the
// runtime in internal/interpose: build it with a family tag, e.g.
//
//	CC=mpicc.openmpi go build -tags mpiscope_openmpi -buildmode=c-shared -o libmpiscope.so ./cmd/libmpiscope
package main

import _ "github.com/mpiscope/mpiscope/internal/interpose"

func main() {}
