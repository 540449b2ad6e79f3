package wrapgen

// What the wrappers of some functions are, beside the semantics table
// (semantics.go): the functions written by hand, the prototypes of MPI-1
// functions that mpi.h no longer declares, the calls whose record is
// deferred, and the roles that the parameter types reveal.

import (
	"strings"

	"github.com/mpiscope/mpiscope/internal/mpih"
)

// Special functions are written by hand in internal/interpose/lifecycle.c.
var Special = map[string]string{
	"MPI_Init":             "starts the run",
	"MPI_Init_thread":      "starts the run",
	"MPI_Finalize":         "merges and writes the profile",
	"MPI_Pcontrol":         "mpiscope's control interface (variadic)",
	"MPI_Abort":            "writes this rank's data before aborting",
	"MPI_Session_init":     "starts the run in the sessions model",
	"MPI_Session_finalize": "writes this rank's profile in the sessions model",
}

// Excluded lists MPI functions deliberately left unwrapped, with the reason.
// The coverage test accepts exactly these as missing. It is empty: every
// function the libraries export as PMPI_ is wrapped, including MPI-1
// functions that Open MPI 4.1 still exports but no longer declares (Legacy).
var Excluded = map[string]string{}

// Legacy holds prototypes of MPI-1 functions removed from MPI-3 that some
// libraries still export (Open MPI 4.1) although mpi.h no longer declares
// them. Old binaries call them, so we wrap them too.
var Legacy = map[string]*mpih.Proto{
	"MPI_Address":           {Name: "MPI_Address", Ret: "int", Params: []string{"void *", "MPI_Aint *"}},
	"MPI_Errhandler_create": {Name: "MPI_Errhandler_create", Ret: "int", Params: []string{"MPI_Comm_errhandler_function *", "MPI_Errhandler *"}},
	"MPI_Errhandler_get":    {Name: "MPI_Errhandler_get", Ret: "int", Params: []string{"MPI_Comm", "MPI_Errhandler *"}},
	"MPI_Errhandler_set":    {Name: "MPI_Errhandler_set", Ret: "int", Params: []string{"MPI_Comm", "MPI_Errhandler"}},
	"MPI_Type_extent":       {Name: "MPI_Type_extent", Ret: "int", Params: []string{"MPI_Datatype", "MPI_Aint *"}},
	"MPI_Type_hindexed":     {Name: "MPI_Type_hindexed", Ret: "int", Params: []string{"int", "int *", "MPI_Aint *", "MPI_Datatype", "MPI_Datatype *"}},
	"MPI_Type_hvector":      {Name: "MPI_Type_hvector", Ret: "int", Params: []string{"int", "int", "MPI_Aint", "MPI_Datatype", "MPI_Datatype *"}},
	"MPI_Type_lb":           {Name: "MPI_Type_lb", Ret: "int", Params: []string{"MPI_Datatype", "MPI_Aint *"}},
	"MPI_Type_struct":       {Name: "MPI_Type_struct", Ret: "int", Params: []string{"int", "int *", "MPI_Aint *", "MPI_Datatype *", "MPI_Datatype *"}},
	"MPI_Type_ub":           {Name: "MPI_Type_ub", Ret: "int", Params: []string{"MPI_Datatype", "MPI_Aint *"}},
}

// deferred are the blocking calls that complete receives. Their wrappers
// end with ms_defer (ms.h): the record is written by the next recorded
// call after its PMPI_ function has returned, off the critical path that
// runs from a receive's completion to the send that answers it.
var deferred = map[string]bool{
	"MPI_Recv": true, "MPI_Recv_c": true, "MPI_Mrecv": true, "MPI_Mrecv_c": true,
	"MPI_Wait": true, "MPI_Waitall": true, "MPI_Waitany": true, "MPI_Waitsome": true,
}

// autoRoles fills roles that the parameter types reveal.
func autoRoles(s *Sem, pr *mpih.Proto) {
	n := pr.Name
	for i, t := range pr.Params {
		switch t {
		case "MPI_Comm":
			if s.Comm < 0 && !strings.HasPrefix(n, "MPI_Comm_compare") {
				s.Comm = i
			}
		case "MPI_Comm *":
			if s.FreeComm < 0 && s.NewComm < 0 && !strings.HasPrefix(n, "MPI_Comm_idup") {
				s.NewComm = i
			}
		}
	}
	// MPI-IO data access: the buffer is followed by its count and datatype.
	if s.Class == IO && !s.HasBytes() && !strings.HasSuffix(n, "_end") {
		for i := 0; i+2 < len(pr.Params); i++ {
			c := pr.Params[i+1]
			if strings.HasSuffix(pr.Params[i], "void *") && (c == "int" || c == "MPI_Count") && pr.Params[i+2] == "MPI_Datatype" {
				s.Count, s.Type = i+1, i+2
				break
			}
		}
	}
	last := len(pr.Params) - 1
	if s.Req < 0 && s.Class == Coll && last >= 0 && pr.Params[last] == "MPI_Request *" {
		s.Req = last
	}
}

// piggyback lists the functions whose PMPI_ call the piggyback channel
// replaces by its handler ms_pb_X (internal/interpose/piggyback.c: the
// same arguments, then the function id and callsite) while it is on
// (ms_gate's MS_G_PB bit): the point-to-point calls that send or receive
// a message, the probes and completion calls whose statuses it corrects,
// persistent requests, and the attached buffer of buffered sends. The
// wrapper of such a function takes its slow path when the bit is set;
// with the bit clear its fast path is as without the channel.
var piggyback = map[string]bool{
	"MPI_Send": true, "MPI_Bsend": true, "MPI_Ssend": true, "MPI_Rsend": true,
	"MPI_Isend": true, "MPI_Ibsend": true, "MPI_Issend": true, "MPI_Irsend": true,
	"MPI_Send_init": true, "MPI_Bsend_init": true, "MPI_Ssend_init": true, "MPI_Rsend_init": true,
	"MPI_Recv": true, "MPI_Irecv": true, "MPI_Recv_init": true, "MPI_Mrecv": true, "MPI_Imrecv": true,
	"MPI_Sendrecv": true, "MPI_Sendrecv_replace": true,
	"MPI_Probe": true, "MPI_Iprobe": true, "MPI_Mprobe": true, "MPI_Improbe": true,
	"MPI_Start": true, "MPI_Startall": true, "MPI_Request_free": true, "MPI_Request_get_status": true,
	"MPI_Wait": true, "MPI_Test": true, "MPI_Waitall": true, "MPI_Testall": true,
	"MPI_Waitany": true, "MPI_Testany": true, "MPI_Waitsome": true, "MPI_Testsome": true,
	"MPI_Buffer_attach": true, "MPI_Buffer_detach": true,
	// MPI-4 (an mpi.h without them generates no wrapper for them).
	"MPI_Isendrecv": true, "MPI_Isendrecv_replace": true,
	"MPI_Send_c": true, "MPI_Bsend_c": true, "MPI_Ssend_c": true, "MPI_Rsend_c": true,
	"MPI_Isend_c": true, "MPI_Ibsend_c": true, "MPI_Issend_c": true, "MPI_Irsend_c": true,
	"MPI_Send_init_c": true, "MPI_Bsend_init_c": true, "MPI_Ssend_init_c": true, "MPI_Rsend_init_c": true,
	"MPI_Recv_c": true, "MPI_Irecv_c": true, "MPI_Recv_init_c": true, "MPI_Mrecv_c": true, "MPI_Imrecv_c": true,
	"MPI_Sendrecv_c": true, "MPI_Sendrecv_replace_c": true, "MPI_Isendrecv_c": true, "MPI_Isendrecv_replace_c": true,
	"MPI_Buffer_attach_c": true, "MPI_Buffer_detach_c": true,
}

// piggybackColl gives the wait state measured at each blocking collective
// while the piggyback channel is on (ms_pb_coll, piggyback.c: one
// PMPI_Allreduce of the members' entry times before the collective).
var piggybackColl = map[string]string{
	"MPI_Barrier": "MS_PB_WAIT_NXN", "MPI_Allreduce": "MS_PB_WAIT_NXN", "MPI_Allgather": "MS_PB_WAIT_NXN",
	"MPI_Allgatherv": "MS_PB_WAIT_NXN", "MPI_Alltoall": "MS_PB_WAIT_NXN", "MPI_Alltoallv": "MS_PB_WAIT_NXN",
	"MPI_Alltoallw": "MS_PB_WAIT_NXN", "MPI_Reduce_scatter": "MS_PB_WAIT_NXN",
	"MPI_Reduce_scatter_block": "MS_PB_WAIT_NXN",
	"MPI_Bcast":                "MS_PB_LATE_BCAST", "MPI_Scatter": "MS_PB_LATE_BCAST", "MPI_Scatterv": "MS_PB_LATE_BCAST",
	"MPI_Reduce": "MS_PB_EARLY_REDUCE", "MPI_Gather": "MS_PB_EARLY_REDUCE", "MPI_Gatherv": "MS_PB_EARLY_REDUCE",
	// MPI-4's large-count forms.
	"MPI_Allreduce_c": "MS_PB_WAIT_NXN", "MPI_Allgather_c": "MS_PB_WAIT_NXN", "MPI_Allgatherv_c": "MS_PB_WAIT_NXN",
	"MPI_Alltoall_c": "MS_PB_WAIT_NXN", "MPI_Alltoallv_c": "MS_PB_WAIT_NXN", "MPI_Alltoallw_c": "MS_PB_WAIT_NXN",
	"MPI_Reduce_scatter_c": "MS_PB_WAIT_NXN", "MPI_Reduce_scatter_block_c": "MS_PB_WAIT_NXN",
	"MPI_Bcast_c": "MS_PB_LATE_BCAST", "MPI_Scatter_c": "MS_PB_LATE_BCAST", "MPI_Scatterv_c": "MS_PB_LATE_BCAST",
	"MPI_Reduce_c": "MS_PB_EARLY_REDUCE", "MPI_Gather_c": "MS_PB_EARLY_REDUCE", "MPI_Gatherv_c": "MS_PB_EARLY_REDUCE",
}
