// Package wrapgen generates mpiscope's C wrappers from what the installed
// mpi.h declares (package mpih) and the semantics no header carries (this
// package's table): one wrapper per MPI function that the MPI library also
// exports as PMPI_.
package wrapgen

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/mpiscope/mpiscope/internal/mpih"
)

// Func is one function to wrap.
type Func struct {
	ID     int
	Proto  *mpih.Proto
	Sem    Sem
	Legacy bool // prototype supplied by us
	Hand   bool // wrapper written by hand
}

// Plan is the list of functions to wrap, and the ones left out with reasons.
type Plan struct {
	Header  *mpih.Header
	Funcs   []*Func           // sorted by name; ID = index
	Skipped map[string]string // name -> reason
	// Passthrough makes GenerateC emit wrappers that only call PMPI_ and
	// record nothing: the floor of interposition, for the benchmarks.
	Passthrough bool
}

// NewPlan decides what to wrap.
func NewPlan(h *mpih.Header) (*Plan, error) {
	p := &Plan{Header: h, Skipped: map[string]string{}}
	names := map[string]*mpih.Proto{}
	for n, pr := range h.Protos {
		if !h.PMPI[n] {
			p.Skipped[n] = "declared in mpi.h but the library exports no PMPI_ form"
			continue
		}
		if _, isMacro := h.Macros[n]; isMacro {
			p.Skipped[n] = "defined as a macro by mpi.h"
			continue
		}
		names[n] = pr
	}
	legacy := map[string]bool{}
	for n := range h.PMPI {
		if _, ok := names[n]; ok {
			continue
		}
		if _, declared := h.Protos[n]; declared {
			continue
		}
		if pr, ok := Legacy[n]; ok {
			names[n] = pr
			legacy[n] = true
			continue
		}
		p.Skipped[n] = "exported as PMPI_ but not declared in mpi.h, and no known prototype"
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for i, n := range sorted {
		s, err := Lookup(n)
		if err != nil {
			return nil, err
		}
		pr := names[n]
		autoRoles(&s, pr)
		if err := checkSem(n, &s, pr); err != nil {
			return nil, err
		}
		_, hand := Special[n]
		p.Funcs = append(p.Funcs, &Func{ID: i, Proto: pr, Sem: s, Legacy: legacy[n], Hand: hand})
	}
	return p, nil
}

// checkSem verifies the table against the prototype: positions exist and
// have plausible types, so that a wrong table entry fails the build, not a run.
func checkSem(name string, s *Sem, pr *mpih.Proto) error {
	np := len(pr.Params)
	want := func(role string, i int, ok func(string) bool) error {
		if i < 0 {
			return nil
		}
		if i >= np {
			return fmt.Errorf("%s: %s argument %d out of range (%d parameters)", name, role, i, np)
		}
		if !ok(pr.Params[i]) {
			return fmt.Errorf("%s: %s argument %d has type %q", name, role, i, pr.Params[i])
		}
		return nil
	}
	isInt := func(t string) bool { return t == "int" || t == "MPI_Count" || t == "MPI_Aint" }
	isCounts := func(t string) bool {
		return strings.Contains(t, "int *") || strings.Contains(t, "MPI_Count *") || strings.Contains(t, "MPI_Aint *") || strings.Contains(t, "int []")
	}
	isType := func(t string) bool { return t == "MPI_Datatype" }
	isTypes := func(t string) bool {
		return strings.Contains(t, "MPI_Datatype *") || strings.Contains(t, "MPI_Datatype []")
	}
	isBuf := func(t string) bool { return strings.Contains(t, "void *") }
	for _, c := range []struct {
		role string
		i    int
		ok   func(string) bool
	}{
		{"count", s.Count, isInt}, {"type", s.Type, isType}, {"counts", s.Counts, isCounts},
		{"types", s.Types, isTypes}, {"inplace", s.InPlace, isBuf}, {"alt count", s.AltCount, isInt},
		{"alt type", s.AltType, isType}, {"alt counts", s.AltCounts, isCounts}, {"alt types", s.AltTypes, isTypes},
		{"send peer", s.SendPeer, isInt}, {"recv peer", s.RecvPeer, isInt}, {"tag", s.Tag, isInt},
		{"comm", s.Comm, func(t string) bool { return t == "MPI_Comm" }},
		{"status", s.Status, func(t string) bool { return t == "MPI_Status *" }},
		{"request", s.Req, func(t string) bool { return t == "MPI_Request *" }},
		{"recv count", s.RecvCount, isInt}, {"recv tag", s.RecvTag, isInt}, {"recv type", s.RecvType, isType},
		{"newcomm", s.NewComm, func(t string) bool { return t == "MPI_Comm *" }},
		{"freecomm", s.FreeComm, func(t string) bool { return t == "MPI_Comm *" }},
		{"typefree", s.TypeFree, func(t string) bool { return t == "MPI_Datatype *" }},
		{"start", s.Start, func(t string) bool { return t == "MPI_Request *" }},
		{"startall count", s.StartAllCount, isInt},
		{"startall requests", s.StartAllReqs, func(t string) bool { return strings.HasPrefix(t, "MPI_Request") }},
		{"reqfree", s.ReqFree, func(t string) bool { return t == "MPI_Request *" }},
		{"cancel", s.ReqCancel, func(t string) bool { return t == "MPI_Request *" }},
		{"completion requests", s.CplReqs, func(t string) bool { return strings.HasPrefix(t, "MPI_Request") }},
		{"completion count", s.CplCount, isInt},
		{"completion index", s.CplIndex, func(t string) bool { return t == "int *" }},
		{"completion indices", s.CplIndices, func(t string) bool { return strings.HasPrefix(t, "int") }},
		{"completion flag", s.CplFlag, func(t string) bool { return t == "int *" }},
	} {
		if err := want(c.role, c.i, c.ok); err != nil {
			return err
		}
	}
	if s.Persist && s.Req < 0 {
		return fmt.Errorf("%s: persistent without a request argument", name)
	}
	return nil
}

// decl renders a parameter declaration, inserting the name where C wants it:
// "int (*)[3]" -> "int (*a2)[3]", "MPI_Datatype" -> "MPI_Datatype a1".
func decl(typ, name string) string {
	if i := strings.Index(typ, "(*)"); i >= 0 {
		return typ[:i+2] + name + typ[i+2:]
	}
	if strings.HasSuffix(typ, "[]") {
		return strings.TrimSpace(strings.TrimSuffix(typ, "[]")) + " " + name + "[]"
	}
	if strings.HasSuffix(typ, "*") {
		return typ + name
	}
	return typ + " " + name
}

func params(pr *mpih.Proto, extra string) string {
	var parts []string
	for i, t := range pr.Params {
		parts = append(parts, decl(t, fmt.Sprintf("a%d", i)))
	}
	if extra != "" {
		parts = append(parts, extra)
	}
	if len(parts) == 0 {
		return "void"
	}
	return strings.Join(parts, ", ")
}

func args(pr *mpih.Proto) string {
	var parts []string
	for i := range pr.Params {
		parts = append(parts, fmt.Sprintf("a%d", i))
	}
	return strings.Join(parts, ", ")
}

// GenerateC writes the C wrappers. cmdline is recorded on the first line.
func (p *Plan) GenerateC(cmdline string) []byte {
	var b bytes.Buffer
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("// %s\n// Code generated by mpiwrapgen; DO NOT EDIT.\n\n", cmdline)
	w("//go:build mpiscope_%s\n\n", p.Header.Family)
	w("// MPI: %s %s, %d functions wrapped.\n\n", p.Header.Family, p.Header.Version, len(p.Funcs))
	w("#include \"ms.h\"\n#include \"callpath.h\"\n#include \"fortran.h\"\n#include \"piggyback.h\"\n\n")
	w("const int ms_nfuncs = %d;\n\n", len(p.Funcs))
	w("const char *const ms_fn_names[%d] = {\n", len(p.Funcs))
	for _, f := range p.Funcs {
		w("\t\"%s\",\n", f.Proto.Name)
	}
	w("};\n\nconst char *const ms_fn_classes[%d] = {\n", len(p.Funcs))
	for _, f := range p.Funcs {
		w("\t\"%s\",\n", f.Sem.Class)
	}
	w("};\n\n")
	for _, f := range p.Funcs {
		w("#define MS_FN_%s %d\n", f.Proto.Name, f.ID)
	}
	w("\n")
	for _, f := range p.Funcs {
		if f.Legacy {
			pr := f.Proto
			if _, isMacro := p.Header.Macros[pr.Name]; isMacro {
				w("#undef %s\n", pr.Name)
			}
			w("int %s(%s);\nint P%s(%s);\n", pr.Name, params(pr, ""), pr.Name, params(pr, ""))
		}
	}
	w("\n")
	for _, f := range p.Funcs {
		if f.Hand {
			continue
		}
		genBind(&b, f)
		if _, ok := untimed[f.Proto.Name]; ok && !p.Passthrough {
			// Not recorded at all: the wrapper is the off path's tail
			// call through the pointer, without even the gate's test.
			pr := f.Proto
			w("/* %s: %s */\n", pr.Name, untimed[pr.Name])
			w("%s %s(%s)\n{\n\treturn %s;\n}\n\n", pr.Ret, pr.Name, params(pr, ""), pmpiCall(pr))
			continue
		}
		if p.Passthrough {
			// The slow path too, which the Fortran entries call.
			pr := f.Proto
			w("%s %s(%s)\n{\n\treturn %s;\n}\n\n", pr.Ret, pr.Name, params(pr, ""), pmpiCall(pr))
			w("MS_HIDDEN %s ms_slow_%s(%s)\n{\n\t(void)ms_ra;\n\treturn %s;\n}\n\n", pr.Ret, pr.Name, params(pr, "void *ms_ra"), pmpiCall(pr))
			continue
		}
		genWrapper(&b, f)
	}
	// ms_bind_all binds every pointer at once: for a library loaded into a
	// program of another MPI (lifecycle.c, ms_family_check), whose stubs
	// would narrow the program's handles kept across the binding.
	w("MS_HIDDEN void ms_bind_all(void);\nvoid ms_bind_all(void)\n{\n")
	for _, f := range p.Funcs {
		if !f.Hand {
			w("\tms_bind(&ms_p_%s, \"P%s\", (void *)ms_plt_%s);\n", f.Proto.Name, f.Proto.Name, f.Proto.Name)
		}
	}
	w("}\n")
	genChainBind(&b, p) // shim.go
	genPBBottom(&b, p)
	return b.Bytes()
}

// genPBBottom writes ms_pb_bottom (internal/interpose/chain.c): with
// tools stacked below mpiscope and the piggyback channel on, the channel's
// handlers go below the last tool, so that the tools see the
// application's calls as written (docs/compensation.md, "Stacked
// tools"). It puts in row[ID] the bottom hook of every function with a
// handler: ms_pbb_X calls ms_pb_X with the callsite the wrapper left with
// ms_pb_at (piggyback.h).
func genPBBottom(b *bytes.Buffer, p *Plan) {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	var fs []*Func
	for _, f := range p.Funcs {
		if piggyback[f.Proto.Name] && !f.Hand && !p.Passthrough {
			fs = append(fs, f)
		}
	}
	for _, f := range fs {
		pr := f.Proto
		a := args(pr)
		if a != "" {
			a += ", "
		}
		w("\nstatic %s ms_pbb_%s(%s)\n{\n", pr.Ret, pr.Name, params(pr, ""))
		w("\treturn ms_pb_%s(%sMS_FN_%s, ms_pb_take());\n}\n", pr.Name, a, pr.Name)
	}
	w("\nMS_HIDDEN void ms_pb_bottom(void **row);\nvoid ms_pb_bottom(void **row)\n{\n")
	if len(fs) == 0 {
		w("\t(void)row;\n")
	}
	for _, f := range fs {
		w("\trow[%d] = (void *)ms_pbb_%s;\n", f.ID, f.Proto.Name)
	}
	w("}\n")
}

// untimed functions are passed on and never recorded (not timed, not
// counted, not traced): clocks that applications read in tight timing
// loops. Recording a call, even only counting it, needs the thread's
// state (a TLS load, a test, an increment): more than the off path's
// tail call, and a count of clock reads tells nothing about where MPI
// time goes. The wrapper stays (through its pointer, MS_PMPI), so a
// stack of tools below (chain.c) still sees every call.
var untimed = map[string]string{
	"MPI_Wtime": "the clock, read in timing loops: never recorded (gen.go, untimed)",
	"MPI_Wtick": "the clock's resolution: never recorded (gen.go, untimed)",
}

// pmpiCall is a wrapper's call of PMPI_: through its pointer (ms.h, MS_PMPI).
func pmpiCall(pr *mpih.Proto) string {
	return fmt.Sprintf("MS_PMPI(%s)(%s)", pr.Name, args(pr))
}

// genBind writes the pointer through which the wrappers call PMPI_ (ms.h,
// MS_PMPI) and its two stubs: ms_bind_X, the pointer's first value, binds
// it at the first call and calls PMPI_X; ms_plt_X, the pointer's value
// when PMPI_X cannot be looked up, only calls it. Both call it through
// the PLT, as the wrappers did before.
func genBind(b *bytes.Buffer, f *Func) {
	pr := f.Proto
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	ps := params(pr, "")
	call := fmt.Sprintf("P%s(%s)", pr.Name, args(pr))
	w("static %s ms_bind_%s(%s);\n", pr.Ret, pr.Name, ps)
	w("static %s (*ms_p_%s)(%s) = ms_bind_%s;\n", pr.Ret, pr.Name, ps, pr.Name)
	w("static %s ms_plt_%s(%s)\n{\n\treturn %s;\n}\n", pr.Ret, pr.Name, ps, call)
	w("static __attribute__((cold)) %s ms_bind_%s(%s)\n{\n", pr.Ret, pr.Name, ps)
	w("\tms_bind(&ms_p_%s, \"P%s\", (void *)ms_plt_%s);\n\treturn %s;\n}\n\n", pr.Name, pr.Name, pr.Name, call)
}

func genWrapper(b *bytes.Buffer, f *Func) {
	pr := f.Proto
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	call := pmpiCall(pr)

	if piggyback[pr.Name] {
		w("%s ms_pb_%s(%s);\n", pr.Ret, pr.Name, params(pr, "unsigned ms_fn, void *ms_pc"))
	}
	// The slow path: every check one by one (ms_enter, the clock source,
	// ms_catch_up), for a thread's first call, the first call after a reset
	// (Pcontrol(3)), timestamps from clock_gettime, calls nested in a
	// recorded one (passed on to PMPI_) and calls relayed by a Fortran
	// entry (their callsite in ms_fpc, MS_CALLSITE). The fast path hands it
	// the wrapper's return address, its callsite; the Fortran entries that
	// convert their arguments call it directly (hidden: not through the
	// PLT, so not through another tool's MPI_X) with their caller's.
	ra := "__builtin_return_address(0)"
	if len(pr.Params) > 0 {
		ra = ", " + ra
	}
	w("MS_HIDDEN __attribute__((noinline)) %s ms_slow_%s(%s)\n{\n", pr.Ret, pr.Name, params(pr, "void *ms_ra"))
	w("\tms_thread *ms_t = ms_enter();\n")
	w("\tif (ms_t == NULL)\n\t\treturn %s;\n", pbCall(f, "NULL"))
	w("\tvoid *ms_pc = MS_CALLSITE(ms_ra);\n")
	w("\tvoid *ms_pk = ms_path_key(ms_t, ms_pc);\n")
	genBody(b, f, false)

	// The fast path, ms_on_X: ms_fast is one branch for everything that
	// leaves it, a relayed Fortran call included (ms_f_relay_begin). MPI_X
	// reaches it by a tail call, so its return address is MPI_X's: the
	// callsite (ms.h refuses unoptimized builds, which would not make the
	// tail call).
	// Most functions get the lean fast path (lean.go), and with it a lean
	// ms_path_X.
	lean := genLean(b, f)
	if !lean {
		// Call paths (MPISCOPE_DEPTH > 1, callpath.h): MPI_X sends every
		// call to ms_path_X, whose forced frame tells where the
		// application's frame is (MS_PATH_NOTE), and which goes on to the
		// slow path; its return address is the callsite, as the fast
		// path's is.
		w("MS_HIDDEN __attribute__((noinline, noclone)) %s ms_path_%s(%s)\n{\n", pr.Ret, pr.Name, params(pr, ""))
		w("\tMS_PATH_NOTE(MS_PN_C);\n")
		w("\treturn ms_slow_%s(%s%s);\n}\n\n", pr.Name, args(pr), ra)

		w("MS_HIDDEN __attribute__((noinline, noclone)) %s ms_on_%s(%s)\n{\n", pr.Ret, pr.Name, params(pr, ""))
		w("\tconst uint32_t ms_g = MS_LOAD(ms_gate);\n")
		w("\tms_thread *ms_t = ms_tls;\n")
		w("\tif (!ms_fast(ms_t, ms_g))\n\t\treturn ms_slow_%s(%s%s);\n", pr.Name, args(pr), ra)
		if _, _, _, busy := busyArgs(pr, f.Sem); !busy {
			// A call that publishes itself sets depth right before its
			// PMPI_ call (MS_TIMED_FAST_BUSY): nothing before it calls MPI.
			w("\tMS_STORE(ms_t->depth, 1);\n") // snapshots read it from other threads (ms_busy_read)
		}
		w("\tvoid *ms_pc = __builtin_return_address(0);\n")
		genBody(b, f, true)
		w("\n")
	}

	// The wrapper, MPI_X itself: while nothing is recorded (Pcontrol(0))
	// a load, a branch and a tail call of PMPI_X, with no frame (in one
	// function with the fast path, GCC saved six callee-saved registers
	// before the test: 20 instructions instead of 4); else a tail call
	// of the fast path, one direct jump.
	w("%s %s(%s)\n{\n", pr.Ret, pr.Name, params(pr, ""))
	if pbRouted(f) {
		// The piggyback channel (MS_G_PB) sends the call to the slow
		// path, which calls the handler: one test of the gate, as
		// without the channel.
		w("\tconst uint32_t ms_g = MS_LOAD(ms_gate);\n")
		w("\tif (__builtin_expect(ms_g & (MS_G_OFF | MS_G_PB | MS_G_PATH), 0)) {\n")
		w("\t\tif (!(ms_g & (MS_G_PB | MS_G_PATH)))\n\t\t\treturn %s;\n", call)
		w("\t\tif (ms_g & MS_G_PATH)\n\t\t\treturn ms_path_%s(%s);\n", pr.Name, args(pr))
		w("\t\treturn ms_slow_%s(%s%s);\n\t}\n", pr.Name, args(pr), ra)
		leanTrace(b, f, lean)
		w("\treturn ms_on_%s(%s);\n}\n\n", pr.Name, args(pr))
		return
	}
	if f.Sem.ReqCancel >= 0 {
		// MPI_Cancel marks its request's role whatever the gate says
		// (ms_trole_cancel): a completion traced later must read its
		// status.
		w("\tms_trole_cancel(a%d);\n", f.Sem.ReqCancel)
	}
	w("\tconst uint32_t ms_g = MS_LOAD(ms_gate);\n")
	w("\tif (__builtin_expect(ms_g & (MS_G_OFF | MS_G_PATH), 0)) {\n")
	w("\t\tif (ms_g & MS_G_OFF)\n\t\t\treturn %s;\n", call)
	w("\t\treturn ms_path_%s(%s);\n\t}\n", pr.Name, args(pr))
	leanTrace(b, f, lean)
	w("\treturn ms_on_%s(%s);\n}\n\n", pr.Name, args(pr))
}

// genBody writes the rest of a wrapper, from its callsite on, for its fast
// path (fast: MS_TIMED_FAST and the leave functions that need no epoch
// test) or its slow path.
func genBody(b *bytes.Buffer, f *Func, fast bool) {
	call := pmpiCall(f.Proto)
	if !fast {
		call = pbCall(f, "ms_pc")
	}
	genBodyCall(b, f, fast, call)
}

// genBodyCall is genBody with the call of the next level given: a QMPI
// wrapper's calls the next QMPI tool (qmpi.go).
func genBodyCall(b *bytes.Buffer, f *Func, fast bool, call string) {
	pr, s := f.Proto, f.Sem
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	a := func(i int) string { return fmt.Sprintf("a%d", i) }
	isInt := pr.Ret == "int"
	timed, leave := "MS_TIMED", leaveFunc(pr.Name)
	if fast {
		timed, leave = "MS_TIMED_FAST", leave+"_fast"
	}

	// Before the call.
	if s.FreeComm >= 0 {
		w("\tms_comm_freed(*%s);\n", a(s.FreeComm))
	}
	if s.ReqFree >= 0 {
		w("\tms_preq_free(*%s);\n", a(s.ReqFree))
	}
	if s.ReqCancel >= 0 {
		// The Fortran entries reach MPI_Cancel here (MPI_Cancel itself
		// marks the request before its gate test).
		w("\tms_trole_cancel(%s);\n", a(s.ReqCancel))
	}
	// A receive from MPI_ANY_SOURCE needs a status to tell the source
	// (a traced receive always does): lend one when the caller passed
	// MPI_STATUS_IGNORE.
	if s.Status >= 0 && s.RecvPeer >= 0 && s.HasBytes() {
		w("\tMPI_Status ms_st;\n")
		w("\tif (%s == MPI_STATUS_IGNORE && (%s == MPI_ANY_SOURCE || ms_tracing))\n\t\t%s = &ms_st;\n", a(s.Status), a(s.RecvPeer), a(s.Status))
	}
	// Traces: keep the requests a completion call may finish.
	cplN := "1"
	if s.CplCount >= 0 {
		cplN = a(s.CplCount)
	}
	traceCpl := isInt && s.Cpl > 0 && s.CplReqs >= 0 && s.Status >= 0
	// One request (MPI_Wait, MPI_Test): kept in a local, tested inline
	// (ms_trace_save1, trace.h); ms_trace_done takes the other kinds.
	traceOne := traceCpl && s.Cpl == CplOne
	switch {
	case traceOne:
		w("\tuintptr_t ms_th = 0;\n\tif (__builtin_expect(MS_TRACING(MS_FN_%s), 0))\n\t\tms_th = ms_trace_save1(ms_t, %s, &%s);\n", pr.Name, a(s.CplReqs), a(s.Status))
	case traceCpl:
		// MPI_Waitall, MPI_Testall: statuses lent only when a completion
		// reads one (ms_trace_saveall, trace.c).
		save := "ms_trace_save"
		if s.Cpl == CplAll {
			save = "ms_trace_saveall"
		}
		w("\tint ms_tn = 0;\n\tif (__builtin_expect(MS_TRACING(MS_FN_%s), 0))\n\t\tms_tn = %s(%s, %s, &%s);\n", pr.Name, save, a(s.CplReqs), cplN, a(s.Status))
	}

	// One-sided and MPI-IO calls: their window or file (traceobj.go).
	obj, isObj := traceObj(pr, s)
	if isObj {
		genObjBefore(w, pr, obj)
	}
	msg, isMsg := traceMsg(pr, s)
	if isMsg {
		genMsgBefore(w, pr, msg)
	}
	w("\tuint64_t ms_t0, ms_t1;\n\t%s ms_rc;\n", pr.Ret)
	if comm, peer, tag, ok := busyArgs(pr, s); ok {
		// A call that may block shows in a snapshot taken meanwhile
		// (ms.h, ms_busy_args).
		// Only the roles the function has: the snapshot's reader knows
		// which by the function (interpose, busyRoles).
		w("\tms_busy_args(ms_t, ms_pc, %s);\n", comm)
		if peer != "" {
			w("\tMS_STORE(ms_t->bpeer, %s);\n", peer)
		}
		if tag != "" {
			w("\tMS_STORE(ms_t->btag, %s);\n", tag)
		}
		w("\t%s_BUSY(ms_t, MS_FN_%s, ms_t0, ms_t1, ms_rc = %s);\n", timed, pr.Name, call)
	} else {
		w("\t%s(ms_t0, ms_t1, ms_rc = %s);\n", timed, call)
	}
	w("\tms_comm *ms_cm = NULL;\n\tint64_t ms_bytes = %d;\n", map[bool]int{true: 0, false: -1}[s.HasBytes()])
	if isInt {
		w("\tif (__builtin_expect(ms_rc == MPI_SUCCESS, 1)) {\n")
		if s.Comm >= 0 {
			w("\t\tms_cm = ms_comm_of(ms_t, %s);\n", a(s.Comm))
		}
		genBytes(b, pr, s)
		genPeers(b, s)
		if s.Persist {
			sendPeer, recvPeer := "MPI_PROC_NULL", "MPI_PROC_NULL"
			if s.SendPeer >= 0 {
				sendPeer = a(s.SendPeer)
			}
			if s.RecvPeer >= 0 {
				recvPeer = a(s.RecvPeer)
			}
			tag, cfn := "-1", "-1"
			if s.Tag >= 0 {
				tag = a(s.Tag)
			}
			if s.Class == Coll {
				// A persistent collective: its root stands in the tag
				// slot, and its function names the operation when
				// MPI_Start begins it (traces).
				cfn = "MS_FN_" + pr.Name
				if r := collRoot(pr, s); r >= 0 {
					tag = a(r)
				}
			}
			w("\t\tms_preq_init(*%s, ms_cm, ms_bytes, %s, %s, %s, %s);\n\t\tms_bytes = 0;\n", a(s.Req), sendPeer, recvPeer, tag, cfn)
		}
		if s.Start >= 0 {
			w("\t\tms_bytes = ms_preq_start(ms_t, MS_FN_%s, ms_t0, %s, 1);\n", pr.Name, a(s.Start))
		}
		if s.StartAllCount >= 0 {
			w("\t\tms_bytes = ms_preq_start(ms_t, MS_FN_%s, ms_t0, %s, %s);\n", pr.Name, a(s.StartAllReqs), a(s.StartAllCount))
		}
		if s.NewComm >= 0 {
			w("\t\tms_comm_created(*%s, MS_FN_%s);\n", a(s.NewComm), pr.Name)
		}
		if isObj {
			genObjCreated(w, obj)
		}
		if isMsg {
			genMsgNote(w, pr, msg)
		}
		if s.TypeFree >= 0 {
			w("\t\tms_types_changed();\n")
		}
		opt := func(i int) string {
			if i < 0 {
				return "NULL"
			}
			return a(i)
		}
		if traceOne {
			w("\t\tif (ms_th)\n\t\t\tms_trace_done1(MS_FN_%s, ms_t1, ms_th, %s, %s);\n", pr.Name, opt(s.CplFlag), a(s.Status))
		} else if traceCpl {
			w("\t\tif (ms_tn)\n\t\t\tms_trace_done(MS_FN_%s, ms_t1, %d, %s, %s, %s, %s, %s);\n", pr.Name, s.Cpl, cplN,
				opt(s.CplIndex), opt(s.CplIndices), opt(s.CplFlag), a(s.Status))
		}
		w("\t}\n")
	}
	targs := "1, 0, -1, -1, -1, -1, ms_bytes, NULL, NULL"
	if isInt {
		targs = traceArgs(pr, s)
	}
	// A blocking receive's event is deferred like its record (ms_defer):
	// written before the thread's next event, off the path from the
	// message's arrival to the send that answers it. Completion calls
	// (MPI_Wait...) write theirs at once, with their completions.
	tcall := "ms_trace_call"
	if deferred[pr.Name] && !traceCpl && s.Req < 0 { // no request to record (traceArgs)
		tcall = "ms_trace_defer"
	}
	key := "ms_pc"
	if !fast {
		// The slow path records the call path at depth > 1 (callpath.h),
		// taken before the call (ms_pk): a call nested in it would
		// overwrite the frame its wrapper noted. Its trace event carries
		// the same key (the path's index in the thread's table; the
		// callsite at depth 1, where ms_pk is ms_pc).
		key = "ms_pk"
	}
	if isObj {
		w("\tif (__builtin_expect(MS_TRACING(MS_FN_%s), 0))\n\t\t%s;\n", pr.Name, objTraceCall(pr, obj, key))
		genObjAfter(w, obj)
	} else {
		cm := "ms_cm"
		if isMsg && !msg.probe {
			cm, targs = msgTraceArgs(msg)
		}
		w("\tif (__builtin_expect(MS_TRACING(MS_FN_%s), 0))\n\t\t%s(ms_t, MS_FN_%s, %s, ms_t0, ms_t1, ms_bytes, %s, %s);\n", pr.Name, tcall, pr.Name, key, cm, targs)
	}
	w("\t%s(ms_t, MS_FN_%s, %s, ms_t1 - ms_t0, ms_bytes, ms_cm);\n", leave, pr.Name, key)
	w("\treturn ms_rc;\n}\n")
}

// Trace flags: the values of MS_TF_* in trace.h.
const (
	tfSend = 1
	tfRecv = 2
	tfReq  = 4
	tfColl = 8
)

// traceArgs renders the last arguments of ms_trace_call (trace.h): ok (the
// call succeeded) and flags,
// send peer and tag (a collective's root instead), receive peer and tag (as
// posted, in the call's communicator), posted receive bytes, the status
// telling the received message, and the request a nonblocking post
// creates. ms_trace_call translates peers to MPI_COMM_WORLD ranks.
func traceArgs(pr *mpih.Proto, s Sem) string {
	a := func(i int) string {
		if i < 0 {
			return "-1"
		}
		return fmt.Sprintf("a%d", i)
	}
	flags := 0
	msg := s.Class == P2P && s.HasBytes() && !s.Persist && s.Comm >= 0
	if msg && s.SendPeer >= 0 {
		flags |= tfSend
	}
	if msg && s.RecvPeer >= 0 {
		flags |= tfRecv
	}
	if msg && s.Req >= 0 {
		flags |= tfReq
	}
	if s.Class == Coll && !s.Persist && s.Comm >= 0 {
		flags |= tfColl
		if s.Req >= 0 {
			flags |= tfReq // a nonblocking collective: completed by a Wait/Test
		}
	}
	stag, rtag, st, req, rbytes := "-1", "-1", "NULL", "NULL", "ms_bytes"
	if flags&tfSend != 0 {
		stag = a(s.Tag)
	}
	if flags&tfColl != 0 {
		if r := collRoot(pr, s); r >= 0 {
			stag = a(r) // on an intercommunicator MPI_ROOT or MPI_PROC_NULL, or a remote rank
		}
	}
	if flags&tfRecv != 0 {
		rtag = a(s.Tag)
		if s.RecvTag >= 0 {
			rtag = a(s.RecvTag)
		}
		if s.Status >= 0 {
			st = a(s.Status)
		}
		if flags&tfSend != 0 && s.RecvCount >= 0 {
			rbytes = fmt.Sprintf("(int64_t)(%s) * ms_tsize(ms_t, %s)", a(s.RecvCount), a(s.RecvType))
		}
	}
	if flags&tfReq != 0 {
		req = a(s.Req)
	}
	speer, rpeer := "-1", "-1"
	if flags&tfSend != 0 {
		speer = a(s.SendPeer)
	}
	if flags&tfRecv != 0 {
		rpeer = a(s.RecvPeer)
	}
	// ok, flags: a failed call is recorded as a plain call; flags stays a
	// constant, so that the inlined ms_trace_call folds to its kind.
	f := "1, 0"
	if flags != 0 {
		f = fmt.Sprintf("ms_rc == MPI_SUCCESS, %d", flags)
	}
	return fmt.Sprintf("%s, %s, %s, %s, %s, %s, %s, %s", f, speer, stag, rpeer, rtag, rbytes, st, req)
}

// collRoot returns the argument holding a rooted collective's root (the
// one before the communicator in MPI_Bcast, MPI_Reduce, MPI_Gather(v),
// MPI_Scatter(v) and their _c, nonblocking (MPI_I...) and persistent
// (..._init) forms), or -1.
func collRoot(pr *mpih.Proto, s Sem) int {
	base, _ := blockingForm(strings.TrimSuffix(strings.TrimSuffix(pr.Name, "_c"), "_init"))
	switch base {
	case "MPI_Bcast", "MPI_Reduce", "MPI_Gather", "MPI_Gatherv", "MPI_Scatter", "MPI_Scatterv":
	default:
		return -1
	}
	if s.Comm < 1 || !strings.Contains(pr.Params[s.Comm-1], "int") {
		return -1
	}
	return s.Comm - 1
}

// genBytes computes ms_bytes, the primary byte count (see docs/format.md).
func genBytes(b *bytes.Buffer, pr *mpih.Proto, s Sem) {
	if !s.HasBytes() {
		return
	}
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	a := func(i int) string { return fmt.Sprintf("a%d", i) }
	size := "ms_comm_rsize(ms_cm)"
	if strings.HasPrefix(pr.Name, "MPI_Reduce_scatter") || strings.HasPrefix(pr.Name, "MPI_Ireduce_scatter") {
		size = "ms_comm_size(ms_cm)"
	}
	primary := ""
	switch {
	case s.Types >= 0:
		primary = fmt.Sprintf("%s(ms_t, %s, %s, %s)", sumW(pr, s.Counts), a(s.Counts), a(s.Types), size)
	case s.Counts >= 0:
		primary = fmt.Sprintf("MS_SUM(%s, %s) * ms_tsize(ms_t, %s)", a(s.Counts), size, a(s.Type))
	case s.Count >= 0:
		primary = fmt.Sprintf("(int64_t)(%s) * ms_tsize(ms_t, %s)", a(s.Count), a(s.Type))
	default:
		primary = fmt.Sprintf("(int64_t)%d * ms_tsize(ms_t, %s)", s.ConstCount, a(s.Type))
	}
	if s.Mult {
		primary += " * " + size
	}
	if s.InPlace >= 0 {
		alt := ""
		switch {
		case s.AltTypes >= 0:
			alt = fmt.Sprintf("%s(ms_t, %s, %s, %s)", sumW(pr, s.AltCounts), a(s.AltCounts), a(s.AltTypes), size)
		case s.AltRank:
			alt = fmt.Sprintf("(int64_t)(%s)[ms_comm_rank(ms_cm)] * ms_tsize(ms_t, %s)", a(s.AltCounts), a(s.AltType))
		case s.AltSum:
			alt = fmt.Sprintf("MS_SUM(%s, %s) * ms_tsize(ms_t, %s)", a(s.AltCounts), size, a(s.AltType))
		default:
			alt = fmt.Sprintf("(int64_t)(%s) * ms_tsize(ms_t, %s)", a(s.AltCount), a(s.AltType))
			if s.Mult {
				alt += " * " + size
			}
		}
		w("\t\tif (%s == MPI_IN_PLACE)\n\t\t\tms_bytes = %s;\n\t\telse\n\t\t\tms_bytes = %s;\n", a(s.InPlace), alt, primary)
	} else {
		w("\t\tms_bytes = %s;\n", primary)
	}
	if s.SendPeer >= 0 {
		w("\t\tif (%s == MPI_PROC_NULL)\n\t\t\tms_bytes = 0;\n", a(s.SendPeer))
	} else if s.RecvPeer >= 0 {
		w("\t\tif (%s == MPI_PROC_NULL)\n\t\t\tms_bytes = 0;\n", a(s.RecvPeer))
	}
}

// genPeers feeds the per-peer matrix (point-to-point data only).
func genPeers(b *bytes.Buffer, s Sem) {
	if s.Class != P2P || !s.HasBytes() || s.Persist {
		return
	}
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	a := func(i int) string { return fmt.Sprintf("a%d", i) }
	recvBytes := "ms_bytes"
	if s.SendPeer >= 0 {
		w("\t\tms_peer_send(ms_t, ms_cm, %s, ms_bytes);\n", a(s.SendPeer))
		if s.RecvCount >= 0 {
			recvBytes = fmt.Sprintf("(int64_t)(%s) * ms_tsize(ms_t, %s)", a(s.RecvCount), a(s.RecvType))
		}
	}
	// A nonblocking receive from MPI_ANY_SOURCE has no known source at post
	// time (ms_peer_recv ignores it); Mrecv has no communicator to translate
	// the source with, so it feeds no peer.
	switch {
	case s.RecvPeer >= 0 && s.Status >= 0:
		w("\t\tms_peer_recv(ms_t, ms_cm, (%s == MPI_ANY_SOURCE ? %s->MPI_SOURCE : %s), %s);\n",
			a(s.RecvPeer), a(s.Status), a(s.RecvPeer), recvBytes)
	case s.RecvPeer >= 0:
		w("\t\tms_peer_recv(ms_t, ms_cm, %s, %s);\n", a(s.RecvPeer), recvBytes)
	}
}

// sumW picks the w-form byte counter for int or MPI_Count count arrays.
func sumW(pr *mpih.Proto, counts int) string {
	if strings.Contains(pr.Params[counts], "MPI_Count") {
		return "ms_sum_wc"
	}
	return "ms_sum_w"
}

// leaveFunc is the hot-path function that ends the wrapper of name.
func leaveFunc(name string) string {
	if deferred[name] {
		return "ms_defer"
	}
	return "ms_leave"
}

// busyArgs tells whether the function may block for long, and so
// publishes itself for snapshots while it runs (ms.h, ms_busy_args), and
// renders its communicator handle ("0": none), peer (a receive's source
// first; a rooted collective's root) and tag ("": none; busyRoles in
// internal/interpose tells the same from the function's name). Blocking
// point-to-point calls and probes, blocking collectives, waits,
// communicator and topology creation, RMA synchronization and window
// creation, blocking MPI-IO (ioBlocks) and the dynamic-process calls that
// wait for other processes (mayBlock) publish; nonblocking calls, tests
// and local calls do not, and cost nothing more.
func busyArgs(pr *mpih.Proto, s Sem) (comm, peer, tag string, ok bool) {
	a := func(i int) string { return fmt.Sprintf("a%d", i) }
	none := ""
	name := strings.TrimSuffix(pr.Name, "_c")
	nonblocking := s.Class == P2P && strings.HasPrefix(name, "MPI_I") // Iprobe, Improbe: no request
	switch {
	case pr.Ret != "int" || s.Persist || s.Req >= 0 || nonblocking:
		return "", "", "", false
	case s.Class == P2P && (s.Comm >= 0 || name == "MPI_Mrecv"),
		s.Class == Coll && s.Comm >= 0,
		s.Class == Wait && strings.HasPrefix(name, "MPI_Wait"),
		(s.Class == CommC || s.Class == Topo) && s.NewComm >= 0,
		s.Class == RMA && rmaSync[name],
		s.Class == IO && ioBlocks(name),
		mayBlock[name]:
	default:
		return "", "", "", false
	}
	comm, peer, tag = "0", none, none
	switch {
	case s.Comm >= 0:
		comm = "(uintptr_t)" + a(s.Comm)
	case len(pr.Params) > 0 && strings.HasPrefix(strings.TrimSpace(pr.Params[0]), "MPI_Comm ") && !strings.Contains(pr.Params[0], "*"):
		comm = "(uintptr_t)a0"
	}
	switch {
	case s.RecvPeer >= 0:
		peer = a(s.RecvPeer)
		if s.RecvTag >= 0 {
			tag = a(s.RecvTag)
		} else if s.Tag >= 0 {
			tag = a(s.Tag)
		}
	case s.SendPeer >= 0:
		peer = a(s.SendPeer)
		if s.Tag >= 0 {
			tag = a(s.Tag)
		}
	case s.Class == Coll:
		if r := collRoot(pr, s); r >= 0 {
			peer = a(r)
		}
	}
	return comm, peer, tag, true
}

// rmaSync are the one-sided synchronization calls that may wait for other
// processes.
var rmaSync = map[string]bool{
	"MPI_Win_fence": true, "MPI_Win_wait": true, "MPI_Win_complete": true, "MPI_Win_start": true,
	"MPI_Win_lock": true, "MPI_Win_lock_all": true, "MPI_Win_unlock": true, "MPI_Win_unlock_all": true,
	"MPI_Win_flush": true, "MPI_Win_flush_all": true, "MPI_Win_flush_local": true, "MPI_Win_flush_local_all": true,
}

// mayBlock are the calls outside the rules of busyArgs that may wait for
// other processes: window creation and freeing (collective), and the
// dynamic-process calls (spawning, connecting, disconnecting, the name
// service).
var mayBlock = map[string]bool{
	"MPI_Win_create": true, "MPI_Win_allocate": true, "MPI_Win_allocate_shared": true, "MPI_Win_create_dynamic": true,
	"MPI_Win_free": true, "MPI_Comm_spawn": true, "MPI_Comm_spawn_multiple": true, "MPI_Comm_accept": true,
	"MPI_Comm_connect": true, "MPI_Comm_join": true, "MPI_Comm_disconnect": true, "MPI_Publish_name": true,
	"MPI_Unpublish_name": true, "MPI_Lookup_name": true,
}

// ioBlocks tells whether the MPI-IO function (name without _c) may block:
// every one but the nonblocking MPI_File_i..., the queries
// (MPI_File_get_...), the error handlers, the handle conversions and the
// local MPI_File_seek. Collective ones (open, close, set_view, the _all
// and _ordered accesses, sync...) wait for the other processes; the
// others for the file system.
func ioBlocks(name string) bool {
	if !strings.HasPrefix(name, "MPI_File_") || strings.HasPrefix(name, "MPI_File_i") ||
		strings.HasPrefix(name, "MPI_File_get_") || strings.HasSuffix(name, "_errhandler") {
		return false
	}
	switch name {
	case "MPI_File_c2f", "MPI_File_f2c", "MPI_File_toint", "MPI_File_fromint", "MPI_File_seek":
		return false
	}
	return true
}

// pbRouted tells whether the piggyback channel changes the function's
// call (a handler or a collective's exchange of entry times).
func pbRouted(f *Func) bool {
	_, coll := piggybackColl[f.Proto.Name]
	return piggyback[f.Proto.Name] || coll && f.Sem.Comm >= 0
}

// pbCall renders the slow path's call of PMPI_X: through the piggyback
// handler, or after the collective's exchange, when the channel is on
// (pc: the callsite, NULL when the call is not recorded).
func pbCall(f *Func, pc string) string {
	pr := f.Proto
	call := pmpiCall(pr)
	if piggyback[pr.Name] {
		a := args(pr)
		if a != "" {
			a += ", "
		}
		// With tools stacked (ms_pb_below), the handler is below them
		// (genPBBottom): the call goes down the stack as written, the
		// callsite left for the handler (ms_pb_at).
		return fmt.Sprintf("(MS_PB_ON() ? (ms_pb_below ? (ms_pb_at(%s), %s) : ms_pb_%s(%sMS_FN_%s, %s)) : %s)", pc, call, pr.Name, a, pr.Name, pc, call)
	}
	if kind, ok := piggybackColl[pr.Name]; ok && f.Sem.Comm >= 0 {
		root := "-1"
		if r := collRoot(pr, f.Sem); r >= 0 {
			root = fmt.Sprintf("a%d", r)
		}
		return fmt.Sprintf("(MS_PB_ON() ? ms_pb_coll(a%d, %s, %s, MS_FN_%s, %s) : (void)0, %s)", f.Sem.Comm, kind, root, pr.Name, pc, call)
	}
	return call
}
