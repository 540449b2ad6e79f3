package wrapgen

import (
	"fmt"
	"strings"

	"github.com/mpiscope/mpiscope/internal/mpih"
)

// objTrace says how a one-sided or MPI-IO call is traced: its record
// (ms_trace_rma, ms_trace_io in trace.c) names its window or file (the
// ms_twin the wrapper looks up), and what the call does with it.
type objTrace struct {
	io     bool
	obj    int  // the MPI_Win / MPI_File argument, or its pointer (create, free)
	create bool // obj is the MPI_Win * / MPI_File * a creation sets
	free   bool // obj is the MPI_Win * / MPI_File * a free or close releases
	target int  // the target rank (a rank of the window's communicator)
	lock   int  // MPI_Win_lock's lock type
	group  int  // MPI_Win_post/start's group
	send   bool // ms_bytes are sent (put, accumulate, write)
	recv   bool // ms_bytes are received (get, read); send and recv: both (Fetch_and_op, Compare_and_swap)
	rcount int  // Get_accumulate: the result's count and type (received bytes)
	rtype  int
	name   int // MPI_File_open: the file name and access mode
	amode  int
	req    int // the request a nonblocking operation creates
}

// rmaTrace lists the one-sided calls with a record of their own: window
// creation and release, synchronization, communication (MPI_Win_*
// functions not listed are traced as plain calls).
var rmaTrace = map[string]objTrace{
	"MPI_Win_create": {create: true}, "MPI_Win_allocate": {create: true}, "MPI_Win_allocate_shared": {create: true},
	"MPI_Win_create_dynamic": {create: true},
	"MPI_Win_free":           {free: true},
	"MPI_Win_fence":          {}, "MPI_Win_complete": {}, "MPI_Win_wait": {}, "MPI_Win_test": {},
	"MPI_Win_lock_all": {}, "MPI_Win_unlock_all": {}, "MPI_Win_flush_all": {}, "MPI_Win_flush_local_all": {},
	"MPI_Win_sync": {},
	"MPI_Win_post": {group: 0}, "MPI_Win_start": {group: 0},
	"MPI_Win_lock": {lock: 0, target: 1}, "MPI_Win_unlock": {target: 0}, "MPI_Win_flush": {target: 0},
	"MPI_Win_flush_local": {target: 0},
	"MPI_Put":             {target: 3, send: true}, "MPI_Rput": {target: 3, send: true},
	"MPI_Get": {target: 3, recv: true}, "MPI_Rget": {target: 3, recv: true},
	"MPI_Accumulate": {target: 3, send: true}, "MPI_Raccumulate": {target: 3, send: true},
	"MPI_Get_accumulate":   {target: 6, send: true, rcount: 4, rtype: 5},
	"MPI_Rget_accumulate":  {target: 6, send: true, rcount: 4, rtype: 5},
	"MPI_Fetch_and_op":     {target: 3, send: true, recv: true},
	"MPI_Compare_and_swap": {target: 4, send: true, recv: true},
}

// traceObj returns how function pr is traced as a one-sided or MPI-IO
// call, and whether it is.
func traceObj(pr *mpih.Proto, s Sem) (objTrace, bool) {
	n := strings.TrimSuffix(pr.Name, "_c")
	var o objTrace
	switch {
	case s.Class == RMA:
		x, ok := rmaTrace[n]
		if !ok {
			return o, false
		}
		o = x
		// Fields left at 0 in the table that the function does not have.
		if !strings.Contains(n, "lock") || strings.HasSuffix(n, "_all") || n == "MPI_Win_unlock" {
			o.lock = -1
		}
		if n != "MPI_Win_post" && n != "MPI_Win_start" {
			o.group = -1
		}
		if _, has := map[string]bool{"MPI_Win_lock": true, "MPI_Win_unlock": true, "MPI_Win_flush": true,
			"MPI_Win_flush_local": true}[n]; !has && !o.send && !o.recv {
			o.target = -1
		}
		if o.rcount == 0 && o.rtype == 0 {
			o.rcount, o.rtype = -1, -1
		}
		o.obj = paramOf(pr, "MPI_Win", o.create || o.free)
	case s.Class == IO && strings.HasPrefix(n, "MPI_File_"):
		op := strings.TrimPrefix(n, "MPI_File_")
		o = objTrace{io: true, target: -1, lock: -1, group: -1, rcount: -1, rtype: -1, name: -1, amode: -1}
		switch {
		case op == "open":
			o.create, o.name, o.amode = true, 1, 2
		case op == "close":
			o.free = true
		case strings.Contains(op, "read"):
			o.recv = true
		case strings.Contains(op, "write"):
			o.send = true
		default:
			return o, false
		}
		o.obj = paramOf(pr, "MPI_File", o.create || o.free)
	default:
		return o, false
	}
	if !o.io {
		o.name, o.amode = -1, -1
	}
	o.req = -1
	if last := len(pr.Params) - 1; last >= 0 && pr.Params[last] == "MPI_Request *" {
		o.req = last
	}
	if o.obj < 0 || pr.Ret != "int" {
		return o, false
	}
	return o, true
}

// paramOf returns the last argument of type typ (or typ *), -1 if none.
func paramOf(pr *mpih.Proto, typ string, ptr bool) int {
	if ptr {
		typ += " *"
	}
	for i := len(pr.Params) - 1; i >= 0; i-- {
		if pr.Params[i] == typ {
			return i
		}
	}
	return -1
}

// genObjBefore declares the window or file of a traced one-sided or I/O
// call before the call: looked up while tracing, always for a release
// (whose entry goes when it succeeds).
func genObjBefore(w func(string, ...any), pr *mpih.Proto, o objTrace) {
	find := "ms_twin_of"
	if o.io {
		find = "ms_tfile_of"
	}
	switch {
	case o.free:
		w("\tms_twin *ms_w = %s(*a%d);\n", find, o.obj)
	case o.create:
		w("\tms_twin *ms_w = NULL;\n")
	default:
		w("\tms_twin *ms_w = NULL;\n\tif (__builtin_expect(MS_TRACING(MS_FN_%s), 0))\n\t\tms_w = %s(a%d);\n", pr.Name, find, o.obj)
	}
}

// genObjCreated registers a created window or opened file (in the
// success branch, ms_cm set).
func genObjCreated(w func(string, ...any), o objTrace) {
	if !o.create {
		return
	}
	if o.io {
		w("\t\tms_w = ms_tfile_opened(*a%d, ms_cm, a%d, a%d);\n", o.obj, o.name, o.amode)
		return
	}
	w("\t\tms_w = ms_twin_created(*a%d, ms_cm);\n", o.obj)
}

// objTraceCall renders the trace call of a one-sided or I/O call; pc is
// the event's callsite or path key (ms_pc, ms_pk).
func objTraceCall(pr *mpih.Proto, o objTrace, pc string) string {
	a := func(i int) string {
		if i < 0 {
			return "-1"
		}
		return fmt.Sprintf("a%d", i)
	}
	sb, rb := "0", "0"
	if o.send {
		sb = "ms_bytes"
	}
	if o.recv {
		rb = "ms_bytes"
	}
	if o.rcount >= 0 {
		rb = fmt.Sprintf("(ms_rc == MPI_SUCCESS ? (int64_t)(a%d) * ms_tsize(ms_t, a%d) : 0)", o.rcount, o.rtype)
	}
	req := "NULL"
	if o.req >= 0 {
		req = a(o.req)
	}
	if o.io {
		return fmt.Sprintf("ms_trace_io(ms_t, MS_FN_%s, %s, ms_t0, ms_t1, ms_rc == MPI_SUCCESS, ms_w, %s, %s, %s, %s)",
			pr.Name, pc, sb, rb, a(o.amode), req)
	}
	lock := "-1"
	if o.lock >= 0 {
		lock = fmt.Sprintf("(a%d == MPI_LOCK_SHARED)", o.lock) // OTF2's lock types: 0 exclusive, 1 shared
	}
	grp := "MPI_GROUP_NULL"
	if o.group >= 0 {
		grp = a(o.group)
	}
	return fmt.Sprintf("ms_trace_rma(ms_t, MS_FN_%s, %s, ms_t0, ms_t1, ms_rc == MPI_SUCCESS, ms_w, %s, %s, %s, %s, %s, %s)",
		pr.Name, pc, a(o.target), sb, rb, lock, grp, req)
}

// genObjAfter releases a freed window's or closed file's entry.
func genObjAfter(w func(string, ...any), o objTrace) {
	if !o.free {
		return
	}
	rel := "ms_twin_freed"
	if o.io {
		rel = "ms_tfile_closed"
	}
	w("\tif (ms_rc == MPI_SUCCESS)\n\t\t%s(ms_w);\n", rel)
}

// Matched probes: MPI_Mprobe and MPI_Improbe keep the communicator of the
// message they return (ms_tmsg_note), which MPI_Mrecv and MPI_Imrecv,
// naming none, record their message with (source, tag and size from the
// status, or from the completion's for MPI_Imrecv).
type msgTrace struct {
	probe bool // MPI_Mprobe, MPI_Improbe: note the message
	msg   int  // the MPI_Message * argument
	st    int  // MPI_Mrecv's status
	req   int  // MPI_Imrecv's request
}

func traceMsg(pr *mpih.Proto, s Sem) (msgTrace, bool) {
	n := strings.TrimSuffix(pr.Name, "_c")
	m := msgTrace{msg: paramOf(pr, "MPI_Message", true), st: -1, req: -1}
	switch n {
	case "MPI_Mprobe", "MPI_Improbe":
		m.probe = true
	case "MPI_Mrecv":
		m.st = s.Status
	case "MPI_Imrecv":
		m.req = s.Req
	default:
		return m, false
	}
	return m, m.msg >= 0 && pr.Ret == "int"
}

// genMsgBefore looks a received message's communicator up and lends
// MPI_Mrecv a status to read its source from.
func genMsgBefore(w func(string, ...any), pr *mpih.Proto, m msgTrace) {
	if m.probe {
		return
	}
	w("\tconst ms_comm *ms_mcm = NULL;\n\tif (__builtin_expect(MS_TRACING(MS_FN_%s), 0))\n\t\tms_mcm = ms_tmsg_comm(ms_t, *a%d);\n", pr.Name, m.msg)
	if m.st >= 0 {
		w("\tMPI_Status ms_mst;\n\tif (ms_mcm && a%d == MPI_STATUS_IGNORE)\n\t\ta%d = &ms_mst;\n", m.st, m.st)
	}
}

// genMsgNote notes a probed message's communicator (success branch).
func genMsgNote(w func(string, ...any), pr *mpih.Proto, m msgTrace) {
	if !m.probe {
		return
	}
	w("\t\tif (__builtin_expect(MS_TRACING(MS_FN_%s), 0) && *a%d != MPI_MESSAGE_NULL)\n\t\t\tms_tmsg_note(ms_t, *a%d, ms_cm);\n", pr.Name, m.msg, m.msg)
}

// msgTraceArgs renders the communicator and the last arguments of
// MPI_Mrecv's and MPI_Imrecv's ms_trace_call: a receive from any source
// and tag, which the status (or the completion) tells.
func msgTraceArgs(m msgTrace) (cm, args string) {
	if m.st >= 0 {
		return "ms_mcm", fmt.Sprintf("ms_rc == MPI_SUCCESS && ms_mcm, %d, -1, -1, MPI_ANY_SOURCE, MPI_ANY_TAG, ms_bytes, a%d, NULL", tfRecv, m.st)
	}
	return "ms_mcm", fmt.Sprintf("ms_rc == MPI_SUCCESS && ms_mcm, %d, -1, -1, MPI_ANY_SOURCE, MPI_ANY_TAG, ms_bytes, NULL, a%d", tfRecv|tfReq, m.req)
}
