// Package profile is mpiscope's data model: a job's (or one rank's) MPI
// profile, its versioned binary encoding, and the associative merge used both
// inside the job (tree reduction over MPI) and by the mpiscope command
// (per-rank partial files). It depends on the standard library only.
//
// All times are nanoseconds. A Profile holding one rank and a Profile holding
// a whole job have the same shape: merging rank profiles yields a job profile.
package profile

// FormatVersion is the version of the binary encoding written by Encode.
const FormatVersion = 1

// Profile is the measured MPI behaviour of one or more ranks of a job.
type Profile struct {
	Meta    Meta
	Ranks   []Rank   // one per rank present, sorted by Rank
	Funcs   []Func   // one per MPI function called, sorted by Name
	Sites   []Site   // one per (function, callsite, region), sorted by key
	Hists   []Hist   // message-size histogram per function, sorted by Func
	Comms   []Comm   // one per communicator, sorted by Key
	Peers   []Peer   // sparse point-to-point matrix, sorted by (Rank, Peer)
	Regions []Region // Pcontrol regions, sorted by Path
	Events  []Event  // Pcontrol user events, sorted by Text
	Busy    []Call   // MPI calls in progress when the data was written, sorted by (Rank, Thread)
	Waits   []Wait   // wait states measured online (MPISCOPE_PIGGYBACK=1), sorted by key (wait.go)
	// Analysis is the trace analysis made in the job (MPISCOPE_ANALYZE=1,
	// analysis.go); nil when none.
	Analysis *Analysis
	Paths    []Path // call paths (MPISCOPE_DEPTH > 1), sorted by key (paths.go)
	// Overhead compensation (MPISCOPE_COMPENSATE=1, compensate.go): the
	// compensated figures beside the measured ones, sorted by Rank and Name.
	CompRanks []CompRank
	CompFuncs []CompFunc

	RankFuncs []RankFunc // each rank's calls per function and communicator, sorted by (Rank, Func, Comm) (ranked.go)
	CommPeers []CommPeer // point-to-point traffic per communicator other than MPI_COMM_WORLD, sorted by (Rank, Comm, Peer) (ranked.go)
	// Ranks per RankFunc and per CommPeer entry (0 or 1: one): blocks of
	// consecutive ranks in jobs of more than SplitRanks ranks (SplitBlocks).
	RankFuncBlock, CommPeerBlock int
}

// Meta describes the job. Fields that differ between merged profiles keep the
// first non-empty value, except Start (earliest) and Stop (latest).
type Meta struct {
	Command    []string  // argv of the application
	NumRanks   int       // size of MPI_COMM_WORLD
	Hosts      []string  // distinct host names, sorted
	MPILibrary string    // MPI_Get_library_version, first line
	MPIVersion string    // MPI_Get_version, "major.minor"
	Family     string    // "openmpi" or "mpich": the build of libmpiscope
	Tool       string    // mpiscope version
	Timer      string    // "tsc" or "clock_gettime"
	StartNs    int64     // Unix time of the end of MPI_Init (earliest rank)
	StopNs     int64     // Unix time of the start of MPI_Finalize (latest rank)
	Settings   []Setting // effective MPISCOPE_* settings
	Snapshot   int       // 0 for a final profile, n for the n-th flush snapshot
	Partial    bool      // some rank's data was written before MPI_Finalize
}

// Setting is one effective configuration value.
type Setting struct {
	Name, Value string
}

// Rank is the per-rank summary. It is O(ranks) data, kept exactly.
type Rank struct {
	Rank    int
	Host    string
	PID     int
	AppNs   int64  // end of MPI_Init (or last reset) to start of MPI_Finalize (or write time)
	MPINs   int64  // time inside recorded MPI calls, all threads
	Calls   int64  // recorded MPI calls
	Threads int    // threads that made recorded MPI calls
	State   string // "final", "snapshot", "abort", "signal", "exit"
	Dropped int64  // records lost because a fixed table was full
	OffNs   int64  // part of AppNs with recording off (MPI_Pcontrol(0), MPISCOPE_ENABLE=0)
}

// Spread summarises one per-rank quantity across the ranks that have it.
// It is associative: merging spreads gives the spread of the union.
type Spread struct {
	N       int64   // ranks contributing
	Sum     float64 // sum over ranks
	SumSq   float64 // sum of squares over ranks (for COV)
	Min     float64
	Max     float64
	MinRank int // lowest rank holding Min
	MaxRank int // lowest rank holding Max
}

// Func is one MPI function aggregated over ranks, threads and callsites.
type Func struct {
	Name      string
	Class     string // "p2p", "coll", "rma", "io", "comm", "type", ... (see docs/format.md)
	Calls     int64
	TimeNs    int64 // total over ranks
	MinCallNs int64 // shortest single call
	MaxCallNs int64 // longest single call
	Bytes     int64 // count x type size, see docs/format.md
	RankTime  Spread
}

// Loc is a code location. Module+Offset identify it across ranks (ASLR-proof);
// Function, File and Line are filled by symbolization when known.
type Loc struct {
	Module   string // path of the executable or shared object
	Offset   uint64 // address minus the module's load bias
	Function string
	File     string
	Line     int
}

// Site is one MPI function at one callsite within one region.
type Site struct {
	Func     string
	Loc      Loc
	Region   string // region path, "" outside any region
	Calls    int64
	TimeNs   int64
	MinNs    int64
	MaxNs    int64
	Bytes    int64
	RankTime Spread
}

// Bin is one log2 message-size bucket: sizes in [2^(Log2-1), 2^Log2), with
// Log2 = 0 meaning size 0.
type Bin struct {
	Log2   int
	Calls  int64
	Bytes  int64
	TimeNs int64
}

// Hist is the message-size histogram of one function.
type Hist struct {
	Func string
	Bins []Bin // sorted by Log2, only non-empty bins
}

// Comm is one communicator. Key identifies it across ranks: the same
// communicator has the same key on all its members.
type Comm struct {
	Key     string // e.g. "world", "self", "MPI_Comm_split:4@0"
	Name    string // MPI_Comm_set_name, if any
	Size    int
	Creator string // function that created it
	Members int64  // member ranks that reported it
	Calls   int64
	TimeNs  int64
	Bytes   int64
}

// Peer is point-to-point traffic of Rank with Peer (both MPI_COMM_WORLD ranks),
// as seen by Rank.
type Peer struct {
	Rank      int
	Peer      int
	SentMsgs  int64
	SentBytes int64
	RecvMsgs  int64
	RecvBytes int64
}

// Region is a Pcontrol region, identified by its nesting path ("a/b").
type Region struct {
	Path    string
	Visits  int64  // enters, over ranks
	WallNs  int64  // inclusive wall time, over ranks
	MPINs   int64  // MPI time inside it (inclusive), over ranks
	Ranks   int64  // ranks that entered it
	RankMPI Spread // per-rank MPI time inside it
}

// Event is a Pcontrol user event (level 5).
type Event struct {
	Text  string
	Count int64
	Ranks int64 // ranks that raised it
}

// Call is an MPI call that had not returned when a rank's data was written
// (a snapshot or a signal during a hang): its time so far is counted in
// the rank's, function's, site's and communicator's time, and this says
// which call it is.
type Call struct {
	Rank      int
	Thread    int // OS thread id
	Func      string
	Loc       Loc    // callsite
	Region    string // region path, "" outside any region
	Comm      string // communicator key, "" none or unknown
	Peer      int    // MPI_COMM_WORLD rank of the peer (point-to-point) or root (rooted collective), or PeerNone, PeerAny
	Tag       int    // the tag, or TagNone, TagAny
	ElapsedNs int64  // time since the call began
}

// Special values of Call.Peer and Call.Tag.
const (
	PeerNone = -1 // the call has no peer or root (or it is MPI_PROC_NULL)
	PeerAny  = -2 // MPI_ANY_SOURCE
	TagAny   = -1 // MPI_ANY_TAG
	TagNone  = -2 // the call has no tag
)
