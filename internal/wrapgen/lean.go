package wrapgen

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/mpiscope/mpiscope/internal/mpih"
)

// The lean fast path. A wrapper's fast path (ms_on_X) used to keep every
// value it needed after its PMPI_ call in callee-saved registers, six of
// them in most wrappers because of the out-of-line calls its rare cases
// make after the call (a communicator seen for the first time, a new
// site, a deferred record, tracing): twelve pushes and pops, the stack
// adjusted and the moves, about 20 of the 74 instructions of
// MPI_Comm_rank's fast path. The lean fast path keeps only its thread in
// a register: its entry time and the arguments it needs afterwards go to
// the thread's state (bt0, fa: one store each), and after the call it makes
// no call. Each step there is inline and either finds what it needs (the
// communicator is MPI_COMM_WORLD or the thread's last one, the datatype's
// size is known, a peer's slot is in its home, the call's site is the
// function's last one) or hands the call over, by a tail call, to
// ms_fin_X, which records it the usual way. Nothing is written before the
// last step has succeeded, so a call handed over is recorded once.
//
// Tracing, and a receive from MPI_ANY_SOURCE without a status (which
// needs one lent), take the previous fast path, now ms_full_X, reached by
// a tail call: from MPI_X when the function is traced (MS_TRACING: a
// load, a test and a branch, as they cost after the call before; in MPI_X,
// which has no frame, a traced call costs what it cost before plus these
// three), from ms_on_X for such a receive. A deferred record pending when a call that does not defer ends
// is written after the call's own, by ms_flush_rc's tail call.
//
// Functions whose record needs more than a lookup after the call
// (persistent requests and MPI_Start, communicator or datatype creation
// and freeing, windows and files, matched probes, the w and v forms' sums)
// keep the previous fast path as their ms_on_X.

// leanOK tells whether f gets the lean fast path: the classes of calls
// that applications make in their loops (point-to-point, collectives,
// waits and tests, and the communicator queries), where each one costs
// three more functions of generated code (ms_full_X, ms_fin_X and the
// lean ms_on_X), not the calls made a few times per run.
func leanOK(f *Func) bool {
	pr, s := f.Proto, f.Sem
	if s.Class != P2P && s.Class != Coll && s.Class != Wait && !leanQueries[strings.TrimSuffix(pr.Name, "_c")] {
		return false
	}
	if pr.Ret != "int" || f.Hand || s.Persist || s.Start >= 0 || s.StartAllCount >= 0 || s.NewComm >= 0 ||
		s.FreeComm >= 0 || s.TypeFree >= 0 || s.ReqFree >= 0 || s.Types >= 0 || s.Counts >= 0 ||
		s.AltTypes >= 0 || s.AltSum || s.AltCounts >= 0 {
		return false
	}
	if _, ok := traceObj(pr, s); ok {
		return false
	}
	if _, ok := traceMsg(pr, s); ok {
		return false
	}
	for _, p := range pr.Params {
		if strings.Contains(p, "(*)") {
			return false
		}
	}
	return true
}

// leanQueries are the local calls outside those classes that loops make.
var leanQueries = map[string]bool{"MPI_Comm_rank": true, "MPI_Comm_size": true}

var argRef = regexp.MustCompile(`\ba(\d+)\b`)

// usedArgs lists the arguments text refers to, in order.
func usedArgs(texts ...string) []int {
	seen := map[int]bool{}
	for _, t := range texts {
		for _, m := range argRef.FindAllStringSubmatch(t, -1) {
			n, _ := strconv.Atoi(m[1])
			seen[n] = true
		}
	}
	var out []int
	for n := range seen {
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

// leanType is the type of a local that holds argument typ again.
func leanType(typ string) string {
	if strings.HasSuffix(typ, "[]") {
		return strings.TrimSpace(strings.TrimSuffix(typ, "[]")) + " *"
	}
	return typ
}

// leanSlots tells where each saved argument is kept across the call: the
// fields a call that may block publishes anyway (ms_busy_args: its
// communicator in bcomm, its peer in bpeer), else the next slot of fa.
func leanSlots(pr *mpih.Proto, s Sem, saved []int) (slot map[int]string, nfa int) {
	slot = map[int]string{}
	comm, peer, _, busy := busyArgs(pr, s)
	for _, i := range saved {
		a := fmt.Sprintf("a%d", i)
		switch {
		case busy && comm == "(uintptr_t)"+a:
			slot[i] = "ms_t->bcomm"
		case busy && peer == a:
			slot[i] = "ms_t->bpeer"
		default:
			slot[i] = fmt.Sprintf("ms_t->fa[%d]", nfa)
			nfa++
		}
	}
	return slot, nfa
}

// leanReload declares the saved arguments again, from the thread's state.
func leanReload(pr *mpih.Proto, saved []int, slot map[int]string, indent string) string {
	var b strings.Builder
	for _, i := range saved {
		t := leanType(pr.Params[i])
		fmt.Fprintf(&b, "%s%s = (%s)(uintptr_t)%s;\n", indent, decl("const "+strings.TrimPrefix(t, "const "), fmt.Sprintf("a%d", i)), t, slot[i])
	}
	return b.String()
}

var tsizeCall = regexp.MustCompile(`ms_tsize\(ms_t, (a\d+)\)`)

// genLean writes f's ms_full_X (the previous fast path), ms_fin_X and the
// lean ms_on_X, and reports whether it did (false: f keeps the previous
// fast path, which the caller writes).
func genLean(b *bytes.Buffer, f *Func) bool {
	if !leanOK(f) {
		return false
	}
	pr, s := f.Proto, f.Sem
	a := func(i int) string { return fmt.Sprintf("a%d", i) }
	fn := "MS_FN_" + pr.Name
	defer_ := deferred[pr.Name]

	// What the record needs after the call, the usual way (ms_fin_X).
	var fin bytes.Buffer
	fw := func(format string, x ...any) { fmt.Fprintf(&fin, format, x...) }
	fw("\tms_comm *ms_cm = NULL;\n\tint64_t ms_bytes = %d;\n", map[bool]int{true: 0, false: -1}[s.HasBytes()])
	fw("\tif (__builtin_expect(ms_rc == MPI_SUCCESS, 1)) {\n")
	if s.Comm >= 0 {
		fw("\t\tms_cm = ms_comm_of(ms_t, %s);\n", a(s.Comm))
	}
	genBytes(&fin, pr, s)
	genPeers(&fin, s)
	fw("\t}\n")
	fw("\t%s_fast(ms_t, %s, ms_pc, ms_t1 - ms_t0, ms_bytes, ms_cm);\n\treturn ms_rc;\n", leaveFunc(pr.Name), fn)

	// The same inline, handing over what it does not find.
	var ln bytes.Buffer
	lw := func(format string, x ...any) { fmt.Fprintf(&ln, format, x...) }
	if s.Comm >= 0 {
		lw("\t\tms_comm *ms_cm = ms_comm_hit(ms_t, %s);\n\t\tif (ms_cm == NULL)\n\t\t\tgoto ms_fin;\n", a(s.Comm))
	} else {
		lw("\t\tms_comm *ms_cm = NULL;\n")
	}
	if s.HasBytes() {
		var bb bytes.Buffer
		genBytes(&bb, pr, s)
		lw("\t\tint64_t ms_bytes;\n\t\tint ms_miss = 0;\n")
		ln.WriteString(tsizeCall.ReplaceAllString(bb.String(), "ms_tsize_hit(ms_t, $1, &ms_miss)"))
		lw("\t\tif (ms_miss)\n\t\t\tgoto ms_fin;\n")
	} else {
		lw("\t\tconst int64_t ms_bytes = -1;\n")
	}
	// Peers: as genPeers, the slots found first.
	type peer struct{ w, c, bytes string }
	var sends, recvs []peer
	if s.Class == P2P && s.HasBytes() && !s.Persist {
		recvBytes := "ms_bytes"
		if s.SendPeer >= 0 {
			sends = append(sends, peer{"ms_ws", "ms_cs", "ms_bytes"})
			lw("\t\tconst int ms_ws = ms_world_of(ms_cm, %s);\n", a(s.SendPeer))
			if s.RecvCount >= 0 {
				recvBytes = fmt.Sprintf("(int64_t)(%s) * ms_tsize_hit(ms_t, %s, &ms_miss)", a(s.RecvCount), a(s.RecvType))
			}
		}
		switch {
		case s.RecvPeer >= 0 && s.Status >= 0:
			recvs = append(recvs, peer{"ms_wr", "ms_cr", "ms_rbytes"})
			lw("\t\tconst int ms_wr = ms_world_of(ms_cm, (%s == MPI_ANY_SOURCE ? %s->MPI_SOURCE : %s));\n", a(s.RecvPeer), a(s.Status), a(s.RecvPeer))
		case s.RecvPeer >= 0:
			recvs = append(recvs, peer{"ms_wr", "ms_cr", "ms_rbytes"})
			lw("\t\tconst int ms_wr = ms_world_of(ms_cm, %s);\n", a(s.RecvPeer))
		}
		if len(recvs) > 0 {
			lw("\t\tconst int64_t ms_rbytes = %s;\n", recvBytes)
			if s.RecvCount >= 0 && s.SendPeer >= 0 {
				lw("\t\tif (ms_miss)\n\t\t\tgoto ms_fin;\n")
			}
		}
		for _, p := range append(append([]peer{}, sends...), recvs...) {
			lw("\t\tms_peerstat *%s = NULL;\n", p.c)
			lw("\t\tif (%s >= 0 && ms_cm != &ms_world_comm && (%s = ms_cpeer_hit(ms_t, ms_cm, %s)) == NULL)\n\t\t\tgoto ms_fin;\n", p.w, p.c, p.w)
		}
	}
	if defer_ {
		lw("\t\tif (ms_t->pfn != 0)\n\t\t\tgoto ms_fin;\n")
	} else {
		lw("\t\tms_site *ms_s = ms_site_hit(ms_t, %s, ms_pc, ms_site_key(%s, ms_t, ms_cm, ms_bytes));\n\t\tif (ms_s == NULL)\n\t\t\tgoto ms_fin;\n", fn, fn)
	}
	// Every step found what it needed: write.
	for _, p := range sends {
		lw("\t\tms_peer_note(ms_t, %s, %s, %s, 1);\n", p.w, p.c, p.bytes)
	}
	for _, p := range recvs {
		lw("\t\tms_peer_note(ms_t, %s, %s, %s, 0);\n", p.w, p.c, p.bytes)
	}
	lw("\t\tconst uint64_t ms_dt = ms_t1 - MS_LOAD(ms_t->bt0);\n")
	if defer_ {
		lw("\t\tms_t->pfn = %s + 1;\n\t\tms_t->pbytes = ms_bytes;\n\t\tms_t->ppc = (uint64_t)(uintptr_t)ms_pc;\n\t\tms_t->pdt = ms_dt;\n\t\tms_t->pcm = ms_cm;\n", fn)
	} else {
		lw("\t\tms_site_add(ms_s, ms_dt, ms_bytes);\n")
		lw("\t\tif (__builtin_expect(ms_t->pfn != 0, 0))\n\t\t\treturn ms_flush_rc(ms_t, ms_rc);\n")
	}
	lw("\t\tMS_STORE(ms_t->depth, 0);\n\t\treturn ms_rc;\n")

	saved := usedArgs(fin.String(), ln.String())
	slot, nfa := leanSlots(pr, s, saved)
	if nfa > maxLeanArgs {
		return false
	}
	w := func(format string, x ...any) { fmt.Fprintf(b, format, x...) }
	ra := "__builtin_return_address(0)"
	if len(pr.Params) > 0 {
		ra = ", " + ra
	}
	_, _, _, busy := busyArgs(pr, s)

	// ms_full_X: the previous fast path, for traced calls (reached from
	// MPI_X, or ms_on_X, by a tail call: its return address is the
	// callsite).
	w("MS_HIDDEN __attribute__((noinline, noclone)) %s ms_full_%s(%s)\n{\n", pr.Ret, pr.Name, params(pr, ""))
	w("\tconst uint32_t ms_g = MS_LOAD(ms_gate);\n")
	w("\tms_thread *ms_t = ms_tls;\n")
	w("\tif (!ms_fast(ms_t, ms_g))\n\t\treturn ms_slow_%s(%s%s);\n", pr.Name, args(pr), ra)
	if !busy {
		w("\tMS_STORE(ms_t->depth, 1);\n")
	}
	w("\tvoid *ms_pc = __builtin_return_address(0);\n")
	genBody(b, f, true)
	w("\n")

	// ms_fin_X: the record the usual way, for a call ms_on_X or ms_path_X
	// hands over (ms_pc: its callsite, or its path's key).
	w("MS_HIDDEN __attribute__((noinline)) %s ms_fin_%s(ms_thread *ms_t, int ms_rc, uint64_t ms_t1, void *ms_pc)\n{\n", pr.Ret, pr.Name)
	w("%s", leanReload(pr, saved, slot, "\t"))
	w("\tconst uint64_t ms_t0 = MS_LOAD(ms_t->bt0);\n")
	b.Write(fin.Bytes())
	w("}\n\n")

	// The call itself, the same in ms_on_X and ms_path_X: what a snapshot
	// reads, the arguments kept, the two timestamps around PMPI_X.
	var call bytes.Buffer
	cw := func(format string, x ...any) { fmt.Fprintf(&call, format, x...) }
	if comm, peer, tag, ok := busyArgs(pr, s); ok {
		cw("\tms_busy_args(ms_t, __builtin_return_address(0), %s);\n", comm)
		if peer != "" {
			cw("\tMS_STORE(ms_t->bpeer, %s);\n", peer)
		}
		if tag != "" {
			cw("\tMS_STORE(ms_t->btag, %s);\n", tag)
		}
	} else {
		cw("\tMS_STORE(ms_t->depth, 1);\n")
	}
	for _, i := range saved {
		if strings.HasPrefix(slot[i], "ms_t->fa[") {
			cw("\t%s = (uint64_t)(uintptr_t)%s;\n", slot[i], a(i))
		}
	}
	cw("\tconst uint64_t ms_t0 = MS_TICK_FAST();\n")
	if busy {
		cw("\tMS_BUSY_T0(ms_t, %s, ms_t0);\n", fn)
	} else {
		cw("\tMS_STORE(ms_t->bt0, ms_t0);\n")
	}
	cw("\tconst int ms_rc = %s;\n", pmpiCall(pr))
	cw("\tconst uint64_t ms_t1 = MS_TICK_FAST();\n")
	anySource := ""
	if s.Status >= 0 && s.RecvPeer >= 0 && s.HasBytes() {
		anySource = fmt.Sprintf("%s == MPI_STATUS_IGNORE && %s == MPI_ANY_SOURCE", a(s.Status), a(s.RecvPeer))
	}

	// ms_on_X, lean.
	w("MS_HIDDEN __attribute__((noinline, noclone)) %s ms_on_%s(%s)\n{\n", pr.Ret, pr.Name, params(pr, ""))
	w("\tconst uint32_t ms_g = MS_LOAD(ms_gate);\n")
	w("\tms_thread *ms_t = ms_tls;\n")
	w("\tif (!ms_fast(ms_t, ms_g))\n\t\treturn ms_slow_%s(%s%s);\n", pr.Name, args(pr), ra)
	if anySource != "" {
		// A receive from MPI_ANY_SOURCE needs a status to tell the source:
		// ms_full_X lends one.
		w("\tif (__builtin_expect(%s, 0))\n\t\treturn ms_full_%s(%s);\n", anySource, pr.Name, args(pr))
	}
	b.Write(call.Bytes())
	w("\tif (__builtin_expect(ms_rc == MPI_SUCCESS, 1)) {\n")
	w("\t\tvoid *const ms_pc = __builtin_return_address(0);\n")
	w("%s", leanReload(pr, saved, slot, "\t\t"))
	b.Write(ln.Bytes())
	w("\t}\nms_fin:\n\treturn ms_fin_%s(ms_t, ms_rc, ms_t1, __builtin_return_address(0));\n}\n\n", pr.Name)

	// ms_path_X, lean: the call at depth > 1 (MPI_X sends it here on
	// MS_G_PATH), made as ms_on_X makes it; after it, the call's path is
	// the function's last one when ms_path_hit follows it from the
	// application's frame (this function's frame is forced: its frame
	// pointer tells where that frame is), and the record goes on as at
	// depth 1 with the path's key for a callsite. Else the frame is noted
	// and the call handed over to ms_fin_X by ms_path_handover, which
	// takes its path the general way. What
	// the lean path does not take (tracing, the piggyback channel, a
	// receive from MPI_ANY_SOURCE without a status, a thread's first
	// call...) goes to the slow path, the frame noted, as before.
	w("MS_HIDDEN __attribute__((noinline, noclone)) %s ms_path_%s(%s)\n{\n", pr.Ret, pr.Name, params(pr, ""))
	w("\tconst uint32_t ms_g = MS_LOAD(ms_gate);\n")
	w("\tms_thread *ms_t = ms_tls;\n")
	slowIf := "!ms_fast(ms_t, ms_g ^ MS_G_PATH)"
	if pbRouted(f) {
		slowIf += " || (ms_g & MS_G_PB)"
	}
	slowIf += fmt.Sprintf(" || MS_TRACING(%s)", fn)
	if anySource != "" {
		slowIf += " || (" + anySource + ")"
	}
	w("\tif (__builtin_expect(%s, 0)) {\n", slowIf)
	w("\t\tMS_PATH_NOTE_AT(MS_PN_C, MS_PATH_FRAME());\n\t\treturn ms_slow_%s(%s%s);\n\t}\n", pr.Name, args(pr), ra)
	b.Write(call.Bytes())
	w("\tif (__builtin_expect(ms_rc == MPI_SUCCESS, 1)) {\n")
	w("\t\tvoid *const ms_pc = ms_path_hit(ms_t, %s, __builtin_return_address(0), MS_PATH_FRAME());\n", fn)
	w("\t\tif (ms_pc == NULL)\n\t\t\tgoto ms_walk;\n")
	w("%s", leanReload(pr, saved, slot, "\t\t"))
	b.Write(ln.Bytes())
	w("\tms_fin:\n\t\treturn ms_fin_%s(ms_t, ms_rc, ms_t1, ms_pc);\n\t}\n", pr.Name)
	w("ms_walk:\n\tMS_PATH_NOTE_AT(MS_PN_C, MS_PATH_FRAME());\n")
	w("\treturn ms_path_handover(ms_t, ms_rc, ms_t1, __builtin_return_address(0), %s, ms_fin_%s);\n}\n\n", fn, pr.Name)
	return true
}

// maxLeanArgs is MS_LEAN_ARGS (ms.h): the arguments a lean fast path can
// keep across its PMPI_ call.
const maxLeanArgs = 6

// leanTrace writes MPI_X's dispatch of a traced call to ms_full_X, for a
// function with the lean fast path.
func leanTrace(b *bytes.Buffer, f *Func, lean bool) {
	if lean {
		fmt.Fprintf(b, "\tif (__builtin_expect(MS_TRACING(MS_FN_%s), 0))\n\t\treturn ms_full_%s(%s);\n", f.Proto.Name, f.Proto.Name, args(f.Proto))
	}
}
