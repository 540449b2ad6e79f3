//go:build mpiscope_openmpi || mpiscope_mpich

package interpose

/*
#include "chain.h"
*/
import "C"

import (
	"fmt"

	"github.com/mpiscope/mpiscope/profile"
)

// chainSettings are the report header's lines about the stacked tools
// (chain.c, docs/stacking.md): one "stack" setting per level, top first,
// and the warnings of the stack's set-up (already printed by rank 0 at
// MPI_Init, so kept here without printing them again).
func chainSettings() []profile.Setting {
	var s []profile.Setting
	n := int(C.ms_chain_levels())
	for i := 0; i < n; i++ {
		s = append(s, profile.Setting{Name: "stack", Value: fmt.Sprintf("%d: %s", i+1, C.GoString(C.ms_chain_level(C.int(i))))})
	}
	if n > 0 {
		s = append(s, profile.Setting{Name: "stack time", Value: "mpiscope's time of a call includes the levels below it"})
	}
	for i := 0; i < int(C.ms_chain_nwarnings()); i++ {
		s = append(s, profile.Setting{Name: "warning", Value: C.GoString(C.ms_chain_warning(C.int(i)))})
	}
	return s
}
