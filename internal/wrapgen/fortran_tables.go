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
