package wrapgen

import (
	"fmt"
	"strconv"
	"strings"
)

// Class is the kind of an MPI function, as shown in reports.
type Class string

// The classes. Their string values are part of the profile format.
const (
	P2P      Class = "p2p"      // point-to-point, probes, partitioned
	Coll     Class = "coll"     // collectives, blocking, nonblocking and persistent
	RMA      Class = "rma"      // one-sided
	IO       Class = "io"       // MPI-IO
	Wait     Class = "wait"     // request completion: waits and tests
	Request  Class = "request"  // request management: start persistent requests, free, cancel
	CommC    Class = "comm"     // communicator management
	Group    Class = "group"    // groups
	TypeC    Class = "type"     // datatypes, pack/unpack
	Topo     Class = "topo"     // topologies
	Env      Class = "env"      // init, query, time, errors, attributes, info
	Tool     Class = "tool"     // MPI_T
	Session  Class = "session"  // MPI-4 sessions
	Dynamic  Class = "dynamic"  // process creation and ports
	Convert  Class = "convert"  // handle conversion (f2c/c2f)
	External Class = "external" // generalized requests, external interfaces
)

// Sem is what no header says about a function: the role of its arguments.
// Argument positions are 0-based; -1 means the function has no such role.
type Sem struct {
	Class Class

	// Primary byte count: Count x size(Type), times the communicator size
	// when Mult, or the sum of Counts[0..n) x size(Type) for vector forms,
	// or the sum of Counts[i] x size(Types[i]) for the w forms.
	Count, Type, Counts, Types int
	ConstCount                 int // a fixed count (Fetch_and_op: 1), when Count < 0
	Mult                       bool

	// When the buffer at InPlace is MPI_IN_PLACE the bytes come from the
	// alternative description: AltCount x size(AltType), or
	// AltCounts[my rank] x size(AltType) (AltRank), or the sum of AltCounts
	// (AltSum), or the w form (AltTypes).
	InPlace                            int
	AltCount, AltType, AltCounts       int
	AltTypes                           int
	AltRank, AltSum                    bool
	SendPeer, RecvPeer, Tag, Comm      int
	RecvTag                            int // the receive's tag when it has its own (Sendrecv)
	Status, Req                        int
	RecvCount, RecvType                int // receive part of Sendrecv-like calls
	Persist                            bool
	NewComm, FreeComm, TypeFree        int
	Start, StartAllCount, StartAllReqs int
	ReqFree                            int
	ReqCancel                          int // MPI_Cancel's request: its role is marked (ms_trole_cancel)

	// Completion of requests (Wait/Test families), for traces: Cpl is the
	// kind (CplOne, CplAll, CplAny, CplSome), CplReqs the request (array),
	// CplCount its length, CplIndex the index or outcount, CplIndices the
	// indices array, CplFlag the flag; Status is the status (array).
	Cpl                                              int
	CplReqs, CplCount, CplIndex, CplIndices, CplFlag int
}

// Kinds of completion calls; the values are MS_TC_* in trace.h.
const (
	CplOne  = 1 // Wait, Test
	CplAll  = 2 // Waitall, Testall
	CplAny  = 3 // Waitany, Testany
	CplSome = 4 // Waitsome, Testsome
)

func newSem() Sem {
	return Sem{Count: -1, Type: -1, Counts: -1, Types: -1, InPlace: -1, AltCount: -1, AltType: -1,
		AltCounts: -1, AltTypes: -1, SendPeer: -1, RecvPeer: -1, Tag: -1, RecvTag: -1, Comm: -1, Status: -1, Req: -1,
		RecvCount: -1, RecvType: -1, NewComm: -1, FreeComm: -1, TypeFree: -1, Start: -1,
		StartAllCount: -1, StartAllReqs: -1, ReqFree: -1, ReqCancel: -1,
		CplReqs: -1, CplCount: -1, CplIndex: -1, CplIndices: -1, CplFlag: -1}
}

// HasBytes reports whether the function moves data counted in bytes.
func (s *Sem) HasBytes() bool {
	return s.Count >= 0 || s.Counts >= 0 || s.Types >= 0 || s.ConstCount > 0
}

// semTable holds the hand-written semantics, in a compact notation parsed by
// parseSem: a class, then key=value roles with 0-based argument positions.
//
//	count=N type=N        bytes = arg[N] x size(arg[N])
//	counts=N type=N       bytes = sum of arg[N][0..commsize) x size
//	countsw=N:M           bytes = sum of counts[i] x size(types[i])
//	const=1 type=N        bytes = 1 x size
//	mult                  times the (remote) communicator size
//	inplace=N alt=C:T     if arg[N] == MPI_IN_PLACE use count C and type T
//	altv=C:T altsum=C:T altw=C:T   the vector forms (my rank's entry, sum, w)
//	send=N recv=N         peer argument of the send or receive part
//	rcount=N rtype=N      receive part of Sendrecv-like calls
//	tag=N comm=N status=N req=N persist newcomm=N freecomm=N typefree=N
//	start=N startall=C:R reqfree=N cancel=N
//
// Functions derived automatically (see Lookup): X_c from X (large counts),
// MPI_I<coll> from the blocking collective, <coll>_init (persistent
// collectives).
var semTable = map[string]string{
	// Point-to-point.
	"MPI_Send":              "p2p count=1 type=2 send=3 tag=4 comm=5",
	"MPI_Bsend":             "p2p count=1 type=2 send=3 tag=4 comm=5",
	"MPI_Ssend":             "p2p count=1 type=2 send=3 tag=4 comm=5",
	"MPI_Rsend":             "p2p count=1 type=2 send=3 tag=4 comm=5",
	"MPI_Isend":             "p2p count=1 type=2 send=3 tag=4 comm=5 req=6",
	"MPI_Ibsend":            "p2p count=1 type=2 send=3 tag=4 comm=5 req=6",
	"MPI_Issend":            "p2p count=1 type=2 send=3 tag=4 comm=5 req=6",
	"MPI_Irsend":            "p2p count=1 type=2 send=3 tag=4 comm=5 req=6",
	"MPI_Send_init":         "p2p count=1 type=2 send=3 tag=4 comm=5 req=6 persist",
	"MPI_Bsend_init":        "p2p count=1 type=2 send=3 tag=4 comm=5 req=6 persist",
	"MPI_Ssend_init":        "p2p count=1 type=2 send=3 tag=4 comm=5 req=6 persist",
	"MPI_Rsend_init":        "p2p count=1 type=2 send=3 tag=4 comm=5 req=6 persist",
	"MPI_Recv":              "p2p count=1 type=2 recv=3 tag=4 comm=5 status=6",
	"MPI_Irecv":             "p2p count=1 type=2 recv=3 tag=4 comm=5 req=6",
	"MPI_Recv_init":         "p2p count=1 type=2 recv=3 tag=4 comm=5 req=6 persist",
	"MPI_Mrecv":             "p2p count=1 type=2 status=4",
	"MPI_Imrecv":            "p2p count=1 type=2 req=4",
	"MPI_Sendrecv":          "p2p count=1 type=2 send=3 tag=4 rcount=6 rtype=7 recv=8 rtag=9 comm=10 status=11",
	"MPI_Isendrecv":         "p2p count=1 type=2 send=3 tag=4 rcount=6 rtype=7 recv=8 rtag=9 comm=10 req=11",
	"MPI_Sendrecv_replace":  "p2p count=1 type=2 send=3 tag=4 rcount=1 rtype=2 recv=5 rtag=6 comm=7 status=8",
	"MPI_Isendrecv_replace": "p2p count=1 type=2 send=3 tag=4 rcount=1 rtype=2 recv=5 rtag=6 comm=7 req=8",
	"MPI_Probe":             "p2p recv=0 tag=1 comm=2",
	"MPI_Iprobe":            "p2p recv=0 tag=1 comm=2",
	"MPI_Mprobe":            "p2p recv=0 tag=1 comm=2",
	"MPI_Improbe":           "p2p recv=0 tag=1 comm=2",
	"MPI_Psend_init":        "p2p send=4 tag=5 comm=6 req=8",
	"MPI_Precv_init":        "p2p recv=4 tag=5 comm=6 req=8",

	// Management of requests: starting persistent ones (which returns at
	// once, as a nonblocking call does), freeing, cancelling.
	"MPI_Start":        "request start=0",
	"MPI_Startall":     "request startall=0:1",
	"MPI_Request_free": "request reqfree=0",
	"MPI_Cancel":       "request cancel=0",

	// Completion of requests.
	"MPI_Wait":     "wait cpl=one creqs=0 status=1",
	"MPI_Test":     "wait cpl=one creqs=0 cflag=1 status=2",
	"MPI_Waitall":  "wait cpl=all ccount=0 creqs=1 status=2",
	"MPI_Testall":  "wait cpl=all ccount=0 creqs=1 cflag=2 status=3",
	"MPI_Waitany":  "wait cpl=any ccount=0 creqs=1 cindex=2 status=3",
	"MPI_Testany":  "wait cpl=any ccount=0 creqs=1 cindex=2 cflag=3 status=4",
	"MPI_Waitsome": "wait cpl=some ccount=0 creqs=1 cindex=2 cindices=3 status=4",
	"MPI_Testsome": "wait cpl=some ccount=0 creqs=1 cindex=2 cindices=3 status=4",

	// Collectives (the nonblocking and persistent forms are derived).
	"MPI_Barrier":              "coll comm=0",
	"MPI_Bcast":                "coll count=1 type=2 comm=4",
	"MPI_Reduce":               "coll count=2 type=3 comm=6",
	"MPI_Allreduce":            "coll count=2 type=3 comm=5",
	"MPI_Reduce_local":         "coll count=2 type=3",
	"MPI_Gather":               "coll count=1 type=2 inplace=0 alt=4:5 comm=7",
	"MPI_Gatherv":              "coll count=1 type=2 inplace=0 altv=4:6 comm=8",
	"MPI_Scatter":              "coll count=4 type=5 inplace=3 alt=1:2 comm=7",
	"MPI_Scatterv":             "coll count=5 type=6 inplace=4 altv=1:3 comm=8",
	"MPI_Allgather":            "coll count=1 type=2 inplace=0 alt=4:5 comm=6",
	"MPI_Allgatherv":           "coll count=1 type=2 inplace=0 altv=4:6 comm=7",
	"MPI_Alltoall":             "coll count=1 type=2 mult inplace=0 alt=4:5 comm=6",
	"MPI_Alltoallv":            "coll counts=1 type=3 inplace=0 altsum=5:7 comm=8",
	"MPI_Alltoallw":            "coll countsw=1:3 inplace=0 altw=5:7 comm=8",
	"MPI_Reduce_scatter":       "coll counts=2 type=3 comm=5",
	"MPI_Reduce_scatter_block": "coll count=2 type=3 mult comm=5",
	"MPI_Scan":                 "coll count=2 type=3 comm=5",
	"MPI_Exscan":               "coll count=2 type=3 comm=5",
	"MPI_Neighbor_allgather":   "coll count=1 type=2 comm=6",
	"MPI_Neighbor_allgatherv":  "coll count=1 type=2 comm=7",
	"MPI_Neighbor_alltoall":    "coll count=1 type=2 comm=6",
	"MPI_Neighbor_alltoallv":   "coll comm=8",
	"MPI_Neighbor_alltoallw":   "coll comm=8",

	// One-sided: origin bytes.
	"MPI_Put":              "rma count=1 type=2",
	"MPI_Get":              "rma count=1 type=2",
	"MPI_Accumulate":       "rma count=1 type=2",
	"MPI_Get_accumulate":   "rma count=1 type=2",
	"MPI_Rput":             "rma count=1 type=2 req=8",
	"MPI_Rget":             "rma count=1 type=2 req=8",
	"MPI_Raccumulate":      "rma count=1 type=2 req=9",
	"MPI_Rget_accumulate":  "rma count=1 type=2 req=12",
	"MPI_Fetch_and_op":     "rma const=1 type=2",
	"MPI_Compare_and_swap": "rma const=1 type=3",

	// Communicators and datatypes whose life we follow.
	"MPI_Comm_free":       "comm freecomm=0",
	"MPI_Comm_disconnect": "dynamic freecomm=0",
	"MPI_Type_free":       "type typefree=0",
}

// classPrefixes give the class of functions with no entry in semTable.
var classPrefixes = []struct {
	prefix string
	class  Class
}{
	{"MPI_T_", Tool}, {"MPI_File_", IO}, {"MPI_Win_", RMA}, {"MPI_Comm_spawn", Dynamic},
	{"MPI_Comm_accept", Dynamic}, {"MPI_Comm_connect", Dynamic}, {"MPI_Comm_join", Dynamic},
	{"MPI_Open_port", Dynamic}, {"MPI_Close_port", Dynamic}, {"MPI_Publish_name", Dynamic},
	{"MPI_Unpublish_name", Dynamic}, {"MPI_Lookup_name", Dynamic}, {"MPI_Comm_get_parent", Dynamic},
	{"MPI_Comm_", CommC}, {"MPI_Intercomm_", CommC}, {"MPI_Group_", Group},
	{"MPI_Type_", TypeC}, {"MPI_Pack", TypeC}, {"MPI_Unpack", TypeC}, {"MPI_Get_address", TypeC},
	{"MPI_Get_elements", TypeC}, {"MPI_Get_count", TypeC}, {"MPI_Address", TypeC}, {"MPI_Aint_", TypeC},
	{"MPI_Register_datarep", IO},
	{"MPI_Cart", Topo}, {"MPI_Graph", Topo}, {"MPI_Dist_graph", Topo}, {"MPI_Topo_test", Topo}, {"MPI_Dims_create", Topo},
	{"MPI_Test_cancelled", Request},
	{"MPI_Wait", Wait}, {"MPI_Test", Wait}, {"MPI_Request_get_status", Wait},
	{"MPI_Parrived", P2P}, {"MPI_Pready", P2P},
	{"MPI_Session_", Session}, {"MPI_Grequest_", External}, {"MPI_Status_set_", External},
}

// Lookup returns the semantics of an MPI function name.
func Lookup(name string) (Sem, error) {
	if spec, ok := semTable[name]; ok {
		return parseSem(spec)
	}
	// Large-count variants take their base's roles.
	if base, ok := strings.CutSuffix(name, "_c"); ok {
		if _, known := semTable[base]; known {
			return Lookup(base)
		}
		if s, err := Lookup(base); err == nil && s.Class != Env {
			return s, nil
		}
	}
	// Persistent collectives: MPI_<coll>_init(..., info, request).
	if base, ok := strings.CutSuffix(name, "_init"); ok {
		if s, err := parseKnown(base); err == nil && s.Class == Coll {
			s.Persist = true
			return s, nil // Req is set by the generator: the last argument.
		}
	}
	// Nonblocking collectives: MPI_I<coll>(..., request).
	if blocking, ok := blockingForm(name); ok {
		if s, err := parseKnown(blocking); err == nil && s.Class == Coll {
			return s, nil // Req is the last argument.
		}
		if s, err := parseKnown("MPI_" + strings.TrimPrefix(name, "MPI_I")); err == nil && s.Class == Coll {
			return s, nil
		}
	}
	s := newSem()
	s.Class = Env
	if strings.HasSuffix(name, "_f2c") || strings.HasSuffix(name, "_c2f") || strings.Contains(name, "_f082") || strings.Contains(name, "2f08") {
		s.Class = Convert
		return s, nil
	}
	for _, p := range classPrefixes {
		if strings.HasPrefix(name, p.prefix) {
			s.Class = p.class
			break
		}
	}
	return s, nil
}

func parseKnown(name string) (Sem, error) {
	spec, ok := semTable[name]
	if !ok {
		return Sem{}, fmt.Errorf("no semantics for %s", name)
	}
	return parseSem(spec)
}

func parseSem(spec string) (Sem, error) {
	s := newSem()
	f := strings.Fields(spec)
	s.Class = Class(f[0])
	pair := func(v string) (int, int, error) {
		a, b, ok := strings.Cut(v, ":")
		if !ok {
			return 0, 0, fmt.Errorf("want N:M, got %q", v)
		}
		x, err1 := strconv.Atoi(a)
		y, err2 := strconv.Atoi(b)
		if err1 != nil || err2 != nil {
			return 0, 0, fmt.Errorf("want N:M, got %q", v)
		}
		return x, y, nil
	}
	for _, tok := range f[1:] {
		k, v, _ := strings.Cut(tok, "=")
		var n int
		var err error
		if v != "" && !strings.Contains(v, ":") && k != "cpl" {
			if n, err = strconv.Atoi(v); err != nil {
				return s, fmt.Errorf("%q: %v", spec, err)
			}
		}
		switch k {
		case "count":
			s.Count = n
		case "type":
			s.Type = n
		case "counts":
			s.Counts = n
		case "countsw":
			s.Counts, s.Types, err = pair(v)
		case "const":
			s.ConstCount = n
		case "mult":
			s.Mult = true
		case "inplace":
			s.InPlace = n
		case "alt":
			s.AltCount, s.AltType, err = pair(v)
		case "altv":
			s.AltCounts, s.AltType, err = pair(v)
			s.AltRank = true
		case "altsum":
			s.AltCounts, s.AltType, err = pair(v)
			s.AltSum = true
		case "altw":
			s.AltCounts, s.AltTypes, err = pair(v)
		case "send":
			s.SendPeer = n
		case "recv":
			s.RecvPeer = n
		case "rcount":
			s.RecvCount = n
		case "rtype":
			s.RecvType = n
		case "tag":
			s.Tag = n
		case "rtag":
			s.RecvTag = n
		case "comm":
			s.Comm = n
		case "status":
			s.Status = n
		case "req":
			s.Req = n
		case "persist":
			s.Persist = true
		case "newcomm":
			s.NewComm = n
		case "freecomm":
			s.FreeComm = n
		case "typefree":
			s.TypeFree = n
		case "start":
			s.Start = n
		case "startall":
			s.StartAllCount, s.StartAllReqs, err = pair(v)
		case "reqfree":
			s.ReqFree = n
		case "cancel":
			s.ReqCancel = n
		case "cpl":
			kinds := map[string]int{"one": CplOne, "all": CplAll, "any": CplAny, "some": CplSome}
			if s.Cpl = kinds[v]; s.Cpl == 0 {
				err = fmt.Errorf("cpl=%q: want one, all, any or some", v)
			}
		case "creqs":
			s.CplReqs = n
		case "ccount":
			s.CplCount = n
		case "cindex":
			s.CplIndex = n
		case "cindices":
			s.CplIndices = n
		case "cflag":
			s.CplFlag = n
		default:
			return s, fmt.Errorf("%q: unknown role %q", spec, k)
		}
		if err != nil {
			return s, fmt.Errorf("%q: %v", spec, err)
		}
	}
	return s, nil
}

// blockingForm returns the blocking function a nonblocking name stands
// for ("MPI_Ibcast" -> "MPI_Bcast"), and whether name has the MPI_I form.
func blockingForm(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, "MPI_I")
	if !ok || rest == "" {
		return name, false
	}
	return "MPI_" + strings.ToUpper(rest[:1]) + rest[1:], true
}
