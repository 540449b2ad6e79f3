package wrapgen

// The hand-written tables of the Fortran entries (fortran.go): the
// functions without a Fortran binding of the C form, those only timed,
// the arrays of completion calls, the functions lifecycle.c handles, and the
// handle types.

// fortranNever have no Fortran binding of the C form, or a different
// argument list (functions without ierror).
var fortranNever = map[string]string{
	"MPI_Wtime":     "a Fortran function without ierror",
	"MPI_Wtick":     "a Fortran function without ierror",
	"MPI_Aint_add":  "a Fortran function without ierror",
	"MPI_Aint_diff": "a Fortran function without ierror",
}

// fortranTimed are converted by timing the implementation's entry: their
// Fortran arguments mean something else than the C ones, or complete later.
var fortranTimed = map[string]string{
	"MPI_Comm_idup":                    "the new communicator is written at completion",
	"MPI_Comm_idup_with_info":          "the new communicator is written at completion",
	"MPI_Type_get_contents":            "arrays of datatypes",
	"MPI_Dist_graph_create":            "MPI_UNWEIGHTED sentinel",
	"MPI_Dist_graph_create_adjacent":   "MPI_UNWEIGHTED sentinel",
	"MPI_Dist_graph_neighbors":         "MPI_UNWEIGHTED sentinel",
	"MPI_Buffer_detach":                "the address is returned differently",
	"MPI_Status_set_elements":          "status input",
	"MPI_Status_set_elements_x":        "status input",
	"MPI_Status_set_cancelled":         "status input",
	"MPI_Type_create_f90_real":         "Fortran-specific datatypes",
	"MPI_Type_create_f90_complex":      "Fortran-specific datatypes",
	"MPI_Type_create_f90_integer":      "Fortran-specific datatypes",
	"MPI_Type_get_contents_c":          "arrays of datatypes",
	"MPI_Type_get_envelope":            "Fortran-specific combiners",
	"MPI_Type_get_envelope_c":          "Fortran-specific combiners",
	"MPI_Dist_graph_neighbors_count":   "MPI_UNWEIGHTED result",
	"MPI_Comm_spawn":                   "strings",
	"MPI_Comm_spawn_multiple":          "strings",
	"MPI_Cart_create":                  "LOGICAL arrays",
	"MPI_Cart_get":                     "LOGICAL arrays",
	"MPI_Cart_map":                     "LOGICAL arrays",
	"MPI_Cart_sub":                     "LOGICAL arrays",
	"MPI_Graph_create":                 "LOGICAL arguments",
	"MPI_Intercomm_create_from_groups": "strings",
}

// fArrays describes the request/status/index arrays of completion calls:
// argument index -> role; the count is argument 0.
var fArrays = map[string]map[int]string{
	"MPI_Waitall":  {1: "reqs", 2: "stats"},
	"MPI_Testall":  {1: "reqs", 3: "stats"},
	"MPI_Waitany":  {1: "reqs", 2: "index"},
	"MPI_Testany":  {1: "reqs", 2: "index"},
	"MPI_Waitsome": {1: "reqs", 3: "indices", 4: "stats"},
	"MPI_Testsome": {1: "reqs", 3: "indices", 4: "stats"},
	"MPI_Startall": {1: "reqs"},
}

var fSpecial = map[string]bool{"MPI_Init": true, "MPI_Init_thread": true, "MPI_Finalize": true, "MPI_Abort": true, "MPI_Pcontrol": true}

// handles are the C handle types and their conversion function stem.
var handles = map[string]string{
	"MPI_Comm": "Comm", "MPI_Datatype": "Type", "MPI_Group": "Group", "MPI_Request": "Request",
	"MPI_Op": "Op", "MPI_Info": "Info", "MPI_Errhandler": "Errhandler", "MPI_Win": "Win",
	"MPI_File": "File", "MPI_Message": "Message", "MPI_Session": "Session",
}

// fDoneCalls are the request-completing calls whose Fortran outputs the
// implementations write back in their own ways (fDone): the argument index
// of their LOGICAL flag (-1: none), and whether an implementation that
// writes back only on success (fDone.okOnly) does so for this call, and
// only when the flag is set too.
var fDoneCalls = map[string]struct {
	flag           int
	gated, gateFlg bool
}{
	"MPI_Wait":               {flag: -1, gated: true},
	"MPI_Test":               {flag: 1, gated: true, gateFlg: true},
	"MPI_Waitall":            {flag: -1, gated: true},
	"MPI_Testall":            {flag: 2, gated: true, gateFlg: true},
	"MPI_Waitany":            {flag: -1, gated: true},
	"MPI_Testany":            {flag: 3, gated: true},
	"MPI_Waitsome":           {flag: -1, gated: true},
	"MPI_Testsome":           {flag: -1, gated: true},
	"MPI_Start":              {flag: -1, gated: true},
	"MPI_Startall":           {flag: -1},
	"MPI_Request_get_status": {flag: 1},
}

// fIndex is how a binding turns the C index of MPI_Waitany/MPI_Testany
// (and the C indices of MPI_Waitsome/MPI_Testsome) into Fortran's.
type fIndex int

const (
	// fIdxOK: +1 when the call succeeded (an index, unless it is
	// MPI_UNDEFINED); after a failure the C value, 0-based, stays.
	fIdxOK fIndex = iota
	// fIdxOKPlus1 (an index): the C value +1, MPI_UNDEFINED too, when the
	// call succeeded; after a failure Fortran's variable is untouched.
	fIdxOKPlus1
	// fIdxAlways (indices): +1 whenever the C outcount is positive, also
	// after a failure.
	fIdxAlways
	// fIdxC: the C value as it is, 0-based.
	fIdxC
)

// fDone is how an implementation's Fortran binding writes back the outputs
// of the request-completing calls (fDoneCalls). The Fortran entries do the
// same, so that a program sees the same values with mpiscope as without,
// failures included. Read on 2026-11-26 from the installed libraries'
// code (libmpi_mpifh.so.40 of Open MPI 4.1.4, whose entries the mpi_f08
// ones call; libmpichfort.so.12 of MPICH 4.0.2) and checked by
// testdata/progs/piggyback/transp.F90 (TestPiggybackFortran).
type fDone struct {
	// okOnly: requests and statuses are written back only when the C
	// function returned MPI_SUCCESS (and, per fDoneCalls, set its flag);
	// MPI_Startall's requests and MPI_Request_get_status's status always.
	okOnly bool
	// index of MPI_Waitany/MPI_Testany; indices of
	// MPI_Waitsome/MPI_Testsome.
	index, indices fIndex
	// flagOK: the LOGICAL flag is written only when the call succeeded
	// (the C function writes it into a variable of the binding's own).
	flagOK bool
	// ignoreFalse: MPI_Request_get_status with MPI_STATUS_IGNORE answers
	// .false. and MPI_SUCCESS without asking the C layer.
	ignoreFalse bool
	// outOK: the calls that complete no request write their output
	// handles back only when the C function succeeded (but those of
	// fHandlesAlways), MPI_Improbe's message only when its flag is set
	// too, and the statuses of fStatusLocal only on success.
	outOK bool
}

// fLogicals are the LOGICAL outputs of the calls that complete no request
// (fDoneCalls has the others'): the argument index. A binding with
// fDone.flagOK passes the C function a variable of its own and writes
// the flag (.true. or .false.) only when the call succeeded; the others
// pass the Fortran variable itself. Read on 2026-11-28 from
// libmpichfort.so.12 (MPICH 4.0.2: every pmpi_X_ that converts a flag
// with setne, the calls timed aside) and checked by
// testdata/progs/fortran/fail.f90 (TestFortranFailures).
var fLogicals = map[string]int{
	"MPI_Iprobe": 3, "MPI_Improbe": 3, "MPI_Test_cancelled": 1, "MPI_Comm_test_inter": 1, "MPI_Op_commutative": 1,
	"MPI_Initialized": 0, "MPI_Finalized": 0, "MPI_Is_thread_main": 0, "MPI_Win_test": 1, "MPI_File_get_atomicity": 1,
}

// fHandlesAlways are the calls whose output handles a binding with
// fDone.outOK writes back whatever the C function returned (Open MPI
// 4.1.4's ompi_win_allocate_f, ompi_win_allocate_shared_f,
// ompi_win_get_info_f, ompi_type_match_size_f: no test of c_ierr before
// the c2f conversion).
var fHandlesAlways = map[string]bool{"MPI_Win_allocate": true, "MPI_Win_allocate_shared": true, "MPI_Win_get_info": true,
	"MPI_Type_match_size": true}

// fHandlesIn are handles passed by address that are inputs: no binding
// writes them back (MPI_Cancel's request).
var fHandlesIn = map[string]bool{"MPI_Cancel": true}

// fStatusLocal are the calls whose status a binding with fDone.outOK
// receives in a variable of its own and copies back only on success
// (Open MPI's ompi_sendrecv_f, ompi_sendrecv_replace_f); its other
// entries pass the Fortran status to the C function, which leaves it as
// it leaves it, failures included.
var fStatusLocal = map[string]bool{"MPI_Sendrecv": true, "MPI_Sendrecv_replace": true}

// fDones is fDone per family and binding ("<family>" for mpif.h and use
// mpi, "<family> f08" for use mpi_f08). A family not listed is given
// fDone{} (outputs written back as the C function left them, indices +1
// on success).
var fDones = map[string]fDone{
	// ompi_wait_f and the others: outputs converted back under
	// "if (MPI_SUCCESS == c_ierr)"; the index, indices and flag are the C
	// function's variables. The other ompi_*_f likewise (read on
	// 2026-11-28: every entry we convert that writes a handle back tests
	// c_ierr before, but fHandlesAlways'; ompi_improbe_f tests the flag
	// too; only ompi_sendrecv_f and ompi_sendrecv_replace_f receive the
	// status in a variable of their own, fStatusLocal).
	"openmpi":     {okOnly: true, ignoreFalse: true, outOK: true},
	"openmpi f08": {okOnly: true, ignoreFalse: true, outOK: true},
	// mpi_waitany_ and the others pass requests and statuses to the C
	// function as they are; the index and flag go through variables of
	// their own, copied back on success only (the index +1, MPI_UNDEFINED
	// becoming MPI_UNDEFINED+1); indices are +1 whatever the C function
	// returned. The LOGICAL flags of the other calls (fLogicals) too
	// go through variables of their own, copied back on success only.
	"mpich": {index: fIdxOKPlus1, indices: fIdxAlways, flagOK: true},
	// mpi_waitany_f08_ and the others: everything as the C function left
	// it, the index and indices 0-based.
	"mpich f08": {index: fIdxC, indices: fIdxC},
}
