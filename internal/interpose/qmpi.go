//go:build mpiscope_openmpi || mpiscope_mpich

package interpose

/*
#include "qmpi.h"
*/
import "C"

import (
	"fmt"

	"github.com/mpiscope/mpiscope/profile"
)

// qmpiSettings are the report header's lines about QMPI mode (qmpi.c,
// docs/stacking.md "QMPI"): "qmpi" with mpiscope's tool id and the tool
// list when MPICH calls mpiscope as a QMPI tool, or the warning of the
// fallback to PMPI interception (already printed by rank 0 at MPI_Init).
func qmpiSettings() []profile.Setting {
	if id := int(C.ms_qmpi_tool_id()); id > 0 {
		return []profile.Setting{{Name: "qmpi", Value: fmt.Sprintf("tool %d of %s", id, C.GoString(C.ms_qmpi_tool_list()))}}
	}
	if w := C.ms_qmpi_warning(); w != nil {
		return []profile.Setting{{Name: "warning", Value: C.GoString(w)}}
	}
	return nil
}
