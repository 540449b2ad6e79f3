/*
 * trace.h: event tracing in the C hot path (trace.c holds its cold parts).
 * Included by ms.h.
 *
 * Each thread appends fixed-size events to its own buffer (no lock, no
 * malloc, no Go call per event): the generated wrapper calls the inline
 * ms_trace_call after the measured call, which stores one event. A full
 * buffer is pushed on a lock-free list and the writer (a goroutine blocked
 * in ms_trace_wait) is woken with a semaphore; the thread goes on in its
 * second buffer. No call into Go on the application's threads. See
 * docs/traces.md.
 */
#ifndef MS_TRACE_H
#define MS_TRACE_H

#include <mpi.h>
#include <stdint.h>

/* Event kinds and flags: the same values as package trace. */
#define MS_TK_CALL 1
#define MS_TK_COMPLETE 2
#define MS_TK_ENTER 3
#define MS_TK_LEAVE 4
#define MS_TK_MARK 5
#define MS_TF_SEND 1
#define MS_TF_RECV 2
#define MS_TF_REQ 4
#define MS_TF_COLL 8
#define MS_TF_LOCAL 16

/* Kinds of completion calls (generator: Sem.Cpl). */
#define MS_TC_ONE 1  /* Wait, Test: ms_trace_done1, not ms_trace_done */
#define MS_TC_ALL 2  /* Waitall, Testall */
#define MS_TC_ANY 3  /* Waitany, Testany */
#define MS_TC_SOME 4 /* Waitsome, Testsome */

#define MS_TSAVE 256 /* requests followed per completion call */
#define MS_TK_POST 6 /* a persistent request started by the call that follows */
#define MS_TK_RMA 7  /* a one-sided call (ms_trace_rma): window, target, bytes */
#define MS_TK_IO 8   /* an MPI-IO call (ms_trace_io): file, bytes */

/* Events are variable-size little-endian records in the thread's byte
 * buffer, written to the file as they are (W blocks; trace.DecodeRaw reads
 * them). Each buffer keeps a dictionary of MS_TDICT recent event shapes
 * (function, kind, communicator, flags, call site, peers, tags, bytes:
 * everything but the times and the request). An event whose shape is in
 * the dictionary takes a short record; any other a full record that also
 * puts its shape in the dictionary at the slot the hash gives. The
 * dictionary starts empty with each buffer, so each block decodes alone.
 *
 *  short (12 bytes, 20 with R): u32 h = 1 | R << 1 | slot << 2 | dt << 12
 *      (dt < 2^20 ticks), u64 t0, [u64 request when R];
 *  full (32 bytes, 72 with L): u32 h = 0 | L << 1 | slot << 2 | kind << 12
 *      (6 bits),
 *      u16 fn (or region/text id), u16 w2 = communicator id + 1 (11 bits,
 *      0: none) | flags << 11, u64 t0, u64 dt, u64 call site; with L the
 *      tail: u64 request, i64 sbytes, i64 rbytes, i32 speer, stag, rpeer,
 *      rtag (messages, collectives, completions, posts; a collective's
 *      stag is its root in the communicator, -1 none; a one-sided or I/O
 *      call's stag is its window's or file's id, speer its target, rtag
 *      MPI_Win_lock's lock type (0 exclusive, 1 shared) or the size of an MPI_Win_post/start
 *      group, whose members, ranks of the window's communicator, are bits
 *      of sbytes (0-63) and rbytes (64-127)). */
/*  completions (16 bytes, then 8 to 24 per completion; format version 4):
 *      u32 h = 0 | MS_TK_CPLS << 12 | count << 18, u16 fn, u16 0, u64 t
 *      (the call's end), then per completion u64 e = request (56 bits,
 *      sign-extended) | flags << 56 | N << 63, with N the receive fields
 *      i32 rpeer, rtag, i64 rbytes; an entry whose flags announce receive
 *      fields (MS_TF_RECV, MS_TF_LOCAL) has the last ones given in the
 *      record (-1, -1, 0 before any). A completion call of several
 *      requests writes one (ms_trace_cpls); it uses no dictionary slot. */
#define MS_TK_CPLS 9 /* a completions record (not an event kind) */
/*  posts (16 bytes, then 12 per post; format version 5): u32 h = 0 |
 *      slot << 2 | MS_TK_POSTS << 12 (bits 18-31 zero), u32 count, u64 t
 *      (the first post's start), then per post u32 x = gap | dt << 16
 *      (ticks, each below 2^16: from the previous post's end, t for the
 *      first, to its start; its duration), u64 request. Each post is the
 *      event whose shape is in slot, at its times, with its request: a
 *      run of nonblocking posts that repeat one post memo entry
 *      (ms_tmemo) with nothing written between them is one record
 *      (ms_tpost), opened by the first and extended by each next one, its
 *      count raised in place: any other record ends it, having moved the
 *      buffer's end. It uses the slot, not a new one. */
#define MS_TK_POSTS 10 /* a posts record (not an event kind) */
#define MS_TPOSTS_HEAD 16u
#define MS_TPOSTS_ENTRY 12u
#define MS_TPOSTS_DT (1u << 16)
#define MS_TCPLS_HEAD 16u
#define MS_TCPLS_ENTRY_MAX 24u
#define MS_TCPLS_REQ ((1ull << 56) - 1)
#define MS_TDICT_BITS 10
#define MS_TDICT (1u << MS_TDICT_BITS)
#define MS_TSHORT_DT (1u << 20)

typedef struct ms_tshape {
	uint64_t pc;
	uint32_t w; /* fn | kind << 10 | w2 << 16 */
	uint32_t gen; /* the buffer generation it belongs to (valid when == tb->dgen) */
	int64_t sbytes, rbytes;
	int32_t speer, stag, rpeer, rtag;
} ms_tshape;

typedef struct ms_tfull_rec {
	uint32_t h;
	uint16_t fn, w2;
	uint64_t t0, dt, pc;
} ms_tfull_rec;

typedef struct ms_ttail {
	uint64_t req;
	int64_t sbytes, rbytes;
	int32_t speer, stag, rpeer, rtag;
} ms_ttail;

#define MS_TMAX (sizeof(ms_tfull_rec) + sizeof(ms_ttail)) /* largest record: 72 bytes */
/* Room the writer may use before and after a buffer's events (a page
 * each side, plus one for the padding after the last partial page). */
#define MS_TBUF_HEAD 4096
#define MS_TBUF_TAIL 8192

struct ms_tbuf;

/* A buffer handed to the writer: an entry of the ready list. */
typedef struct ms_thand {
	struct ms_thand *next;
	struct ms_tbuf *tb;
	int idx;
	uint32_t bytes;
	uint64_t n; /* events */
} ms_thand;

/* A deferred event: ms_trace_call's arguments (ms_trace_defer). Its
 * flags, speer and stag are stored only with MS_TDEF_ANY in tb->dfn (a
 * receive's are MS_TF_RECV, -1, -1). */
#define MS_TDEF_ANY 0x80000000u
typedef struct ms_tdef {
	void *pc;
	uint64_t t0, t1;
	int64_t bytes, rbytes;
	const ms_comm *cm;
	int ok, flags, speer, stag, rpeer, rtag;
} ms_tdef;

/* The last nonblocking posts whose shape the dictionary held
 * (ms_trace_put): the call's arguments as the wrapper passed them, and the
 * slot. A post with the same arguments from the same call site has the
 * same shape (a communicator's record, its id and its ranks never change),
 * so its short record needs no canonical peer, hash or compare. Indexed by
 * the peer's low bits (the neighbours of a halo exchange apart); an entry
 * is emptied when its slot takes another shape (ms_tput) and when the
 * dictionary starts again (a new buffer). */
/* MS_TMEMO entries: the first half for nonblocking posts, indexed by the
 * peer's low bits; the second for the other calls that read no status
 * (MPI_Send, a deferred receive, MPI_Allreduce, MPI_Comm_rank...),
 * indexed by the peer and the direction (or the function), whose short
 * record then needs no canonical peer, hash or compare either
 * (2026-11-28). */
#define MS_TMEMO 8
typedef struct ms_tmemo {
	uint64_t pc; /* 0: empty */
	const ms_comm *cm;
	int64_t bytes, rbytes;
	int32_t speer, stag, rpeer, rtag;
	uint32_t fnf; /* fn | flags << 16 */
	/* The slot as a short record's header has it without R and dt:
	 * 1 | slot << 2 (ms_tshort_h; 2 instructions fewer per record than
	 * from the slot, 2026-11-28). */
	uint32_t hs;
	/* The posts record (ms_tpost) this entry's posts extend: where it
	 * ends in the buffer (1: none; the buffer's end when it is open) and
	 * where it starts. */
	uint32_t pend, phead;
} ms_tmemo;

#define MS_TMSGS 16
/* A completion record's receive peer when the request was cancelled
 * (MPI_Cancel): marked, not matched. */
#define MS_TCANCELLED (-3)

typedef struct ms_tbuf {
	/* hot: read by every traced call */
	char *cur_ev; /* ev[cur] */
	uint32_t n, cap; /* bytes used and usable (the buffer's size - MS_TMAX) */
	/* n > lim sends a traced call to ms_trace_slow: lim is cap, or 0
	 * when a flush asks for the buffer (ms_trace_flushgen, from another
	 * thread: atomic). One compare where there were two (room, flush). */
	uint32_t lim;
	uint32_t fgen;
	uint32_t dgen; /* dictionary generation: one per buffer filled */
	int cur;
	uint32_t dfn; /* the deferred event's function + 1 (0: none; ms_trace_defer), | MS_TDEF_ANY unless a plain receive */
	uint64_t total; /* events recorded by this thread */
	uint64_t pt; /* the last post's end (ms_tpost) */
	ms_tmemo memo[MS_TMEMO];
	ms_tshape dict[MS_TDICT];
	/* cold */
	/* A blocking receive's event, deferred (ms_trace_defer) off the path
	 * from the message's arrival to the thread's next call: written before
	 * any later event of the thread (ms_trace_room) or when the buffer is
	 * handed over (ms_trace_swap). Its status fields are read at once. */
	ms_tdef d;
	uint64_t base; /* total when the current buffer was started */
	char *ev[2];
	int busy[2]; /* atomic: 1 while the writer holds buffer i */
	ms_thand hand[2];
	int tid;
	uint64_t dropped;
	struct ms_tbuf *next;
	/* Matched probes: the communicators of the last messages
	 * MPI_Mprobe/MPI_Improbe returned on this thread, for their
	 * MPI_Mrecv/MPI_Imrecv (which name no communicator). */
	unsigned nmsg;
	uintptr_t mh[MS_TMSGS];
	const ms_comm *mcm[MS_TMSGS];
	/* Completion calls: requests before the call, lent statuses. */
	int nsave;
	/* MPI_Waitall/MPI_Testall with MPI_STATUSES_IGNORE whose requests'
	 * completions need no status (ms_trace_saveall): npre + 1 entries
	 * of its completions record made before the call (0: none). */
	unsigned npre;
	uint64_t pent[MS_TSAVE];
	uintptr_t save[MS_TSAVE];
	MPI_Status st[MS_TSAVE];
} ms_tbuf;

MS_HIDDEN extern int ms_tracing;
/* ms_trace_fn[fn] is 1 while tracing is on and function fn is not
 * excluded (MPISCOPE_TRACE_EXCLUDE): the one byte a wrapper tests before
 * it records an event (MS_TRACING), where it tested ms_tracing before, so
 * exclusion costs a traced call nothing. ms_trace_set sets it. */
MS_HIDDEN extern volatile unsigned char ms_trace_fn[MS_MAXFUNCS];
#define MS_TRACING(fn) MS_LOAD(ms_trace_fn[fn])
extern volatile uint32_t ms_trace_fgen;
extern ms_comm *volatile ms_trace_cms[MS_MAXCOMMS];

/* Roles a request's post notes besides the message flags (ms_trole_note):
 * a one-sided operation (MPI_Rput...) or an MPI-IO operation
 * (MPI_File_iread...). Their completions are written with no message
 * flag: an I/O completion with MS_TF_LOCAL and the bytes its status
 * tells. */
#define MS_TR_RMA 32
#define MS_TR_IO 64
/* A role's bit set by MPI_Cancel (ms_trole_cancel): the request may
 * complete cancelled, so its completion reads its status (a send's too). */
#define MS_TR_CANCEL 128
/* The role of a persistent request that is not active (2026-11-28): a
 * completion call finds it done at once and completes nothing
 * (ms_preq_done says 0). Noted by the completion that found it so
 * (ms_tcpl_role), replaced by the note of the MPI_Start that starts it
 * (ms_trace_post) and taken out by MPI_Request_free (ms_trole_forget):
 * MPI_Test of such a request then lends no status and calls nothing
 * (ms_trace_save1), where it took 76 instructions (ms_trace_cpl1 and
 * ms_preq_done; ab.c's local_test_done). */
#define MS_TR_IDLE 16

/* Windows and files of traced one-sided and I/O calls: a window's or
 * file's local id (in creation order), its communicator, and (a window)
 * its communicator's group for MPI_Win_post/start groups. Registered at
 * creation whether or not tracing is on (a cold call), looked up by
 * traced calls, removed at MPI_Win_free/MPI_File_close. */
typedef struct ms_twin {
	uintptr_t h; /* 0 empty, 1 freed */
	int id;
	const ms_comm *cm;
	MPI_Group grp;
} ms_twin;

MS_HIDDEN ms_twin *ms_twin_created(MPI_Win w, const ms_comm *cm);
MS_HIDDEN ms_twin *ms_twin_of(MPI_Win w);
MS_HIDDEN void ms_twin_freed(ms_twin *e);
MS_HIDDEN ms_twin *ms_tfile_opened(MPI_File f, const ms_comm *cm, const char *name, int amode);
MS_HIDDEN ms_twin *ms_tfile_of(MPI_File f);
MS_HIDDEN void ms_tfile_closed(ms_twin *e);
MS_HIDDEN void ms_trace_rma(ms_thread *t, unsigned fn, void *pc, uint64_t t0, uint64_t t1, int ok, const ms_twin *w,
			    int target, int64_t sbytes, int64_t rbytes, int info, MPI_Group grp, const MPI_Request *req);
MS_HIDDEN void ms_trace_io(ms_thread *t, unsigned fn, void *pc, uint64_t t0, uint64_t t1, int ok, const ms_twin *f,
			   int64_t sbytes, int64_t rbytes, int info, const MPI_Request *req);

MS_HIDDEN void ms_tmsg_note(ms_thread *t, MPI_Message m, const ms_comm *cm);
MS_HIDDEN const ms_comm *ms_tmsg_comm(ms_thread *t, MPI_Message m);

/* For Go: the names of the files opened, by id (BFile blocks). */
int ms_tfile_count(void);
const char *ms_tfile_name(int i);

MS_HIDDEN ms_tbuf *ms_trace_slow(ms_thread *t);
/* ms_tnone is a thread's trace buffer until its first traced call
 * (ms_thread.tb; ms_thread_new): it has n 1 and lim 0, so that ms_tfull
 * sends the call to ms_trace_slow, and dfn 1, so that ms_trace_defer
 * does (set at load, ms_tnone_init; nothing writes it after). The hot
 * path then tests no NULL buffer (2 instructions per traced call,
 * 2026-11-28). */
MS_HIDDEN extern ms_tbuf ms_tnone;
MS_HIDDEN void ms_tdef_write(ms_tbuf *tb);
MS_HIDDEN void ms_tdef_put(ms_tbuf *tb);
MS_HIDDEN int64_t ms_trace_get_count(const MPI_Status *st);
MS_HIDDEN int ms_trace_save(const MPI_Request *reqs, int n, MPI_Status **st);
MS_HIDDEN int ms_trace_saveall(const MPI_Request *reqs, int n, MPI_Status **st);
MS_HIDDEN void ms_trace_cpl1(unsigned fn, uint64_t t1, uintptr_t h, const MPI_Status *st);
MS_HIDDEN void ms_trace_done(unsigned fn, uint64_t t1, int kind, int n, const int *idx, const int *indices, const int *flag, const MPI_Status *st);
MS_HIDDEN void ms_trace_mark(int kind, unsigned id);
MS_HIDDEN void ms_trace_post(unsigned fn, uint64_t t0, const ms_comm *cm, unsigned kind, int peer, int tag, int64_t bytes, uintptr_t req);
void ms_trace_set(int on);

/* ms_status_bytes is the size in bytes of the message a status describes:
 * read from the status where the implementation's layout is known (what
 * MPI_Get_count divides by the type size), else from PMPI_Get_count. */
MS_INLINE int64_t ms_status_bytes(const MPI_Status *st)
{
#if defined(OPEN_MPI) && OPEN_MPI
	return (int64_t)st->_ucount;
#elif defined(MPICH)
	return (int64_t)(((uint64_t)((unsigned)st->count_hi_and_cancelled >> 1) << 32) | (unsigned)st->count_lo);
#else
	return ms_trace_get_count(st);
#endif
}

/* Roles of nonblocking requests, for their completion records: the post
 * (MPI_Isend, MPI_Irecv, MPI_Isendrecv, MPI_I<coll>...) notes its handle
 * with its role (MS_TF_SEND, MS_TF_RECV, both, MS_TF_COLL) in a
 * direct-mapped table, one relaxed 64-bit store: the handle in the low 56
 * bits, the role above. The Wait/Test that completes the handle reads it
 * back (ms_trace_cplh). The table is shared by the threads (a request may
 * complete on another thread than its post's) and lossy: a handle whose
 * slot a later post took, or a handle that does not fit in 56 bits, finds
 * no role and its completion is written as a receive's, with its status,
 * as before; a handle shared by several requests (Open MPI's
 * ompi_request_empty, MPICH's complete lightweight request) has the role of
 * its latest post. The converter takes each completion's role from the
 * post it matches. */
#define MS_TROLE_BITS 13
#define MS_TROLE_SHIFT 56
MS_HIDDEN extern uint64_t ms_trole[1u << MS_TROLE_BITS];

/* ms_trole_key is handle h as the table keeps it: an integer handle
 * (MPICH's MPI_Request is an int, sign-extended on its way to uintptr_t)
 * to its 32 bits. */
MS_INLINE uint64_t ms_trole_key(uintptr_t h)
{
	return sizeof(MPI_Request) < sizeof(uint64_t) ? (uint64_t)(uint32_t)h : (uint64_t)h;
}

MS_INLINE unsigned ms_trole_slot(uint64_t k)
{
	return (unsigned)(k * 0x9E3779B97F4A7C15ull >> (64 - MS_TROLE_BITS));
}

/* MS_TROLE_FITS(k): handle key k leaves the role's bits free. An integer
 * handle's key always does; so does a pointer on x86-64, whose user-space
 * addresses are below 2^56 (2^47 with 4-level paging): the test folds
 * away there (3 instructions per post, 2026-11-28). */
#if defined(__x86_64__)
#define MS_TROLE_FITS(k) (sizeof(MPI_Request) == sizeof(void *) || (k) >> MS_TROLE_SHIFT == 0)
#else
#define MS_TROLE_FITS(k) ((k) >> MS_TROLE_SHIFT == 0)
#endif

MS_INLINE void ms_trole_note(uintptr_t h, unsigned role)
{
	uint64_t k = ms_trole_key(h);
	if (MS_TROLE_FITS(k))
		MS_STORE(ms_trole[ms_trole_slot(k)], k | (uint64_t)role << MS_TROLE_SHIFT);
}

/* ms_trole_get returns the role noted for handle h, 0 when unknown
 * (without MS_TR_CANCEL: the completion reads the status's flag). */
MS_INLINE unsigned ms_trole_get(uintptr_t h)
{
	uint64_t k = ms_trole_key(h);
	uint64_t e = MS_LOAD(ms_trole[ms_trole_slot(k)]);
	if ((e & ((1ull << MS_TROLE_SHIFT) - 1)) != k)
		return 0;
	return (unsigned)(e >> MS_TROLE_SHIFT) & ~(unsigned)MS_TR_CANCEL;
}

/* ms_trole_idle tells whether handle h's note says it is an inactive
 * persistent request (MS_TR_IDLE). */
MS_INLINE int ms_trole_idle(uintptr_t h)
{
	uint64_t k = ms_trole_key(h);
	return MS_LOAD(ms_trole[ms_trole_slot(k)]) == (k | (uint64_t)MS_TR_IDLE << MS_TROLE_SHIFT);
}

/* ms_trole_forget takes out the MS_TR_IDLE note of request h, which
 * MPI_Request_free frees (a later request may have its handle). A
 * compare-and-swap: a post racing for the slot keeps its note. */
MS_INLINE void ms_trole_forget(uintptr_t h)
{
	uint64_t k = ms_trole_key(h);
	uint64_t e = k | (uint64_t)MS_TR_IDLE << MS_TROLE_SHIFT;
	uint64_t *p = &ms_trole[ms_trole_slot(k)];
	if (MS_TROLE_FITS(k) && MS_LOAD(*p) == e)
		__atomic_compare_exchange_n(p, &e, 0, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* ms_trole_cancel marks the role of request *r, which MPI_Cancel is
 * about to cancel (MS_TR_CANCEL; any gate state, a rare call): a
 * MPI_Waitall or MPI_Testall of sends without statuses
 * (ms_trace_saveall) then lends them, so that the completion still reads
 * the status's cancelled flag. A handle not in the table has no role and
 * gets a status anyway. A compare-and-swap, so that a post racing for the
 * slot keeps its note. */
MS_INLINE void ms_trole_cancel(const MPI_Request *r)
{
	if (r == NULL || *r == MPI_REQUEST_NULL)
		return;
	uint64_t k = ms_trole_key((uintptr_t)*r);
	uint64_t *p = &ms_trole[ms_trole_slot(k)];
	uint64_t e = MS_LOAD(*p);
	if ((e & ((1ull << MS_TROLE_SHIFT) - 1)) == k && (e >> MS_TROLE_SHIFT) != 0)
		__atomic_compare_exchange_n(p, &e, e | (uint64_t)MS_TR_CANCEL << MS_TROLE_SHIFT, 0, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);
}

MS_INLINE int ms_tworld(const ms_comm *cm, int peer)
{
	if (peer == MPI_ANY_SOURCE)
		return -2;
	return ms_world_of(cm, peer);
}

/* MS_PIN(x): x's value is taken as it is here, in a register (an empty
 * asm that may change it): the compiler neither recomputes it later from
 * what it was computed from nor moves work that uses it above this
 * point. */
#define MS_PIN(x) __asm__("" : "+r"(x))

/* ms_tfull: the current buffer has no room for a largest record, or a
 * flush asked every thread to hand its buffer over: tb->lim says both. A
 * deferred event (tb->dfn) is written before any other (ms_tdef_write,
 * ms_trace_room). */
MS_INLINE int ms_tfull(const ms_tbuf *tb)
{
	return tb->n > MS_LOAD(tb->lim);
}

/* ms_tkey and ms_tslot hash a shape to its dictionary slot; fields at
 * their defaults (-1 peers and tags, 0 bytes) add nothing, so a plain
 * call's slot comes from its call site and function word alone. */
MS_INLINE uint64_t ms_tkey(uint64_t pc, uint32_t w)
{
	return pc ^ (uint64_t)w * 0xC2B2AE3D27D4EB4Full;
}

/* Multiplicative: the slot is the product's top bits, which every bit of
 * the key reaches. */
MS_INLINE unsigned ms_tslot(uint64_t k)
{
	return (unsigned)(k * 0x9E3779B97F4A7C15ull >> (64 - MS_TDICT_BITS));
}

/* ms_tshkey hashes a whole shape (ms_tslot gives its slot). */
MS_INLINE uint64_t ms_tshkey(uint64_t pc, uint32_t w, int64_t sbytes, int64_t rbytes, int32_t speer, int32_t stag,
				 int32_t rpeer, int32_t rtag)
{
	return ms_tkey(pc, w) ^ ((uint64_t)(uint32_t)(speer + 1) << 32 | (uint32_t)(stag + 1)) * 0x165667B19E3779F9ull ^
	       ((uint64_t)(uint32_t)(rpeer + 1) << 32 | (uint32_t)(rtag + 1)) * 0x27D4EB2F165667C5ull ^
	       (uint64_t)sbytes * 0x85EBCA77C2B2AE63ull ^ (uint64_t)rbytes * 0xFF51AFD7ED558CCDull;
}

/* ms_tshort stores the short record of an event whose shape is in slot. */
MS_INLINE void ms_tshort(ms_tbuf *tb, unsigned slot, uint64_t t0, uint64_t dt, int hasreq, uint64_t req)
{
	char *p = tb->cur_ev + tb->n;
	uint32_t h = 1u | (unsigned)hasreq << 1 | slot << 2 | (uint32_t)dt << 12;
	tb->total++;
	__builtin_memcpy(p, &h, 4);
	__builtin_memcpy(p + 4, &t0, 8);
	if (hasreq) {
		__builtin_memcpy(p + 12, &req, 8);
		tb->n += 20;
	} else {
		tb->n += 12;
	}
}

/* ms_tshort_h is ms_tshort of a record without a request, its slot given
 * as memo entries keep it (hs = 1 | slot << 2). */
MS_INLINE void ms_tshort_h(ms_tbuf *tb, uint32_t hs, uint64_t t0, uint64_t dt)
{
	char *p = tb->cur_ev + tb->n;
	uint32_t h = hs | (uint32_t)dt << 12;
	tb->total++;
	__builtin_memcpy(p, &h, 4);
	__builtin_memcpy(p + 4, &t0, 8);
	tb->n += 12;
}

/* ms_tpost stores a nonblocking post found in memo entry mm (its shape in
 * slot mm->hs >> 2): as the next entry of the entry's posts record when that
 * record ends the buffer (nothing written since its last post) and the
 * gap and duration fit in 16 bits each; else ms_tpost_open (trace.c, once
 * per run: out of line, it leaves the wrapper its registers) opens a new
 * record, or writes a short record for a post of 2^16 ticks or more. Per
 * post a 12-byte entry where a short record took 20 (trace.h, posts). */
MS_HIDDEN void ms_tpost_open(ms_tbuf *tb, ms_tmemo *mm, uint64_t t0, uint64_t t1, uint64_t req);
MS_INLINE void ms_tpost(ms_tbuf *tb, ms_tmemo *mm, uint64_t t0, uint64_t t1, uint64_t dt, uint64_t req)
{
	uint32_t n = tb->n;
	uint64_t gap = t0 - tb->pt;
	if (__builtin_expect(mm->pend == n && (gap | dt) < MS_TPOSTS_DT, 1)) {
		char *ev = tb->cur_ev;
		uint32_t x = (uint32_t)gap | (uint32_t)dt << 16, c;
		__builtin_memcpy(ev + n, &x, 4);
		__builtin_memcpy(ev + n + 4, &req, 8);
		__builtin_memcpy(&c, ev + mm->phead + 4, 4);
		c++;
		__builtin_memcpy(ev + mm->phead + 4, &c, 4);
		n += MS_TPOSTS_ENTRY;
		tb->n = n;
		mm->pend = n;
		tb->pt = t1;
		tb->total++;
		return;
	}
	ms_tpost_open(tb, mm, t0, t1, req);
}

/* ms_tmsg holds an event's message fields in their canonical form: peers
 * as MPI_COMM_WORLD ranks (-1 none, -2 any source), -1 for the tags and 0
 * for the bytes a kind does not use, so that equal events have equal
 * shapes. */
typedef struct ms_tmsg {
	int64_t sbytes, rbytes;
	int32_t speer, stag, rpeer, rtag;
} ms_tmsg;

/* ms_tcanon puts a measured call's arguments in canonical form: a receive's
 * real source, tag and size come from its status; a collective's stag is
 * its root. */
MS_INLINE ms_tmsg ms_tcanon(const ms_comm *cm, int flags, int64_t bytes, int speer, int stag, int rpeer, int rtag,
			     int64_t rbytes, const MPI_Status *st)
{
	ms_tmsg m = {0, 0, -1, -1, -1, -1};
	if (flags & (MS_TF_SEND | MS_TF_COLL)) {
		m.sbytes = bytes;
		m.stag = stag;
		if (flags & MS_TF_SEND)
			m.speer = speer == MPI_PROC_NULL ? -1 : ms_tworld(cm, speer);
	}
	if (flags & MS_TF_RECV) {
		if (st && rpeer != MPI_PROC_NULL) {
			rpeer = st->MPI_SOURCE;
			rtag = st->MPI_TAG;
			rbytes = ms_status_bytes(st);
		}
		m.rpeer = rpeer == MPI_PROC_NULL ? -1 : ms_tworld(cm, rpeer);
		m.rtag = rtag;
		m.rbytes = rbytes;
	}
	return m;
}

/* ms_tput stores one event: a short record when its shape is in the
 * dictionary, else a full record that puts it there. The caller has made
 * room (ms_tfull). Fields a kind does not use hold -1 (peers, tags) and 0
 * (bytes), so that equal events have equal shapes. */
/* ms_tholds tells whether dictionary entry d holds the shape (pc, w, m)
 * in this buffer's generation. Only the message fields that flags lets an
 * event set are compared: w, compared first, holds the event's kind and
 * flags, and an event of kind MS_TK_CALL has the other fields at their
 * defaults (ms_tcanon), so an entry with the same w has them too. In a
 * wrapper flags is a constant: a plain call compares three fields, not
 * nine. ms_tput, for every kind, compares all. */
#define MS_TF_ALLMSG (MS_TF_SEND | MS_TF_RECV | MS_TF_COLL)
MS_INLINE int ms_tholds(const ms_tshape *d, const ms_tbuf *tb, uint64_t pc, uint32_t w, const ms_tmsg *m, int flags)
{
	if (d->gen != tb->dgen || d->pc != pc || d->w != w)
		return 0;
	if ((flags & (MS_TF_SEND | MS_TF_COLL)) && (d->sbytes != m->sbytes || d->stag != m->stag))
		return 0;
	if ((flags & MS_TF_SEND) && d->speer != m->speer)
		return 0;
	if ((flags & MS_TF_RECV) && (d->rbytes != m->rbytes || d->rpeer != m->rpeer || d->rtag != m->rtag))
		return 0;
	return 1;
}

static inline void ms_tput(ms_tbuf *tb, uint64_t t0, uint64_t dt, uint64_t pc, uint32_t w, int hasreq, uint64_t req,
			   int64_t sbytes, int64_t rbytes, int32_t speer, int32_t stag, int32_t rpeer, int32_t rtag)
{
	unsigned slot = ms_tslot(ms_tshkey(pc, w, sbytes, rbytes, speer, stag, rpeer, rtag));
	ms_tshape *d = &tb->dict[slot];
	ms_tmsg m = {sbytes, rbytes, speer, stag, rpeer, rtag};
	if (__builtin_expect(dt < MS_TSHORT_DT && ms_tholds(d, tb, pc, w, &m, MS_TF_ALLMSG), 1)) {
		ms_tshort(tb, slot, t0, dt, hasreq, req);
		return;
	}
	char *p = tb->cur_ev + tb->n;
	tb->total++;
	for (int j = 0; j < MS_TMEMO; j++)
		if (tb->memo[j].hs == (1u | slot << 2))
			tb->memo[j].pc = 0;
	d->gen = tb->dgen;
	d->pc = pc;
	d->w = w;
	d->speer = speer;
	d->stag = stag;
	d->rpeer = rpeer;
	d->rtag = rtag;
	d->sbytes = sbytes;
	d->rbytes = rbytes;
	unsigned w2 = w >> 16;
	int lng = hasreq || w2 >> 11 != 0 || speer != -1 || stag != -1 || rpeer != -1 || rtag != -1 || sbytes || rbytes;
	ms_tfull_rec f = {(unsigned)lng << 1 | slot << 2 | (w >> 10 & 0x3f) << 12, (uint16_t)(w & 0x3ff), (uint16_t)w2, t0, dt, pc};
	__builtin_memcpy(p, &f, sizeof f);
	if (!lng) {
		tb->n += sizeof f;
		return;
	}
	ms_ttail x = {req, sbytes, rbytes, speer, stag, rpeer, rtag};
	__builtin_memcpy(p + sizeof f, &x, sizeof x);
	tb->n += MS_TMAX;
}

MS_HIDDEN void ms_trace_ev(ms_tbuf *tb, unsigned fn, void *pc, uint64_t t0, uint64_t t1, int64_t bytes,
			  const ms_comm *cm, int flags, int speer, int stag, int rpeer, int rtag, int64_t rbytes,
			  const MPI_Status *st, const MPI_Request *req);

MS_INLINE void ms_trace_put(ms_tbuf *tb, unsigned fn, void *pc, uint64_t t0, uint64_t t1, int64_t bytes,
			    const ms_comm *cm, int ok, int flags, int speer, int stag, int rpeer, int rtag, int64_t rbytes,
			    const MPI_Status *st, const MPI_Request *req);

/* ms_tdef_hit stores the deferred event (tb->dfn != 0) in its common
 * case, a plain receive that succeeded whose memo entry holds its
 * arguments (ms_trace_put's test and short record for flags MS_TF_RECV,
 * the entry at the receive's peer and direction), and tells whether it
 * did; ms_tdef_put stores the others. Inlined in ms_trace_call since
 * 2026-11-28: the call to ms_tdef_write had the wrapper spill and reload
 * the values it kept in caller-saved registers (about 12 instructions
 * per MPI_Send of a ping-pong, besides the call). The same bytes. */
MS_INLINE int ms_tdef_hit(ms_tbuf *tb)
{
	const uint32_t dfn = tb->dfn;
	if (dfn & MS_TDEF_ANY)
		return 0;
	const ms_tdef *d = &tb->d;
	const uint64_t dt = d->t1 - d->t0;
	const unsigned mo = 2u * (unsigned)d->rpeer + 1;
	const ms_tmemo *mm = &tb->memo[MS_TMEMO / 2 + (mo & (MS_TMEMO / 2 - 1))];
	MS_PIN(mm);
	if (dt < MS_TSHORT_DT && mm->pc == (uint64_t)(uintptr_t)d->pc &&
	    mm->fnf == ((dfn - 1) | (unsigned)MS_TF_RECV << 16) && mm->cm == d->cm && mm->rpeer == d->rpeer &&
	    mm->rtag == d->rtag && mm->rbytes == d->rbytes) {
		tb->dfn = 0;
		ms_tshort_h(tb, mm->hs, d->t0, dt);
		return 1;
	}
	return 0;
}

/* ms_trace_call stores the event of a measured call. It is inlined into
 * each wrapper, where flags are mostly constants: an event whose shape
 * (function, call site, communicator, message fields) the dictionary holds
 * stores its short record right here; a new shape goes to ms_trace_ev
 * (trace.c), which writes the full record. Peers arrive as ranks of cm
 * and are stored as MPI_COMM_WORLD ranks; a receive's real source, tag and
 * size come from its status. For a collective, stag is the root (-1:
 * none). A failed call (ok 0) is recorded as a plain call. */
MS_INLINE void ms_trace_call(ms_thread *t, unsigned fn, void *pc, uint64_t t0, uint64_t t1, int64_t bytes,
			     const ms_comm *cm, int ok, int flags, int speer, int stag, int rpeer, int rtag, int64_t rbytes,
			     const MPI_Status *st, const MPI_Request *req)
{
	ms_tbuf *tb = t->tb;
	if (__builtin_expect(ms_tfull(tb), 0)) {
		tb = ms_trace_slow(t);
		if (tb == NULL)
			return;
	}
	/* A receive's deferred event first (room: cap leaves two records'):
	 * its common case here (ms_tdef_hit), the rest out of line. */
	if (tb->dfn && !ms_tdef_hit(tb))
		ms_tdef_put(tb);
	ms_trace_put(tb, fn, pc, t0, t1, bytes, cm, ok, flags, speer, stag, rpeer, rtag, rbytes, st, req);
}

/* ms_trace_put stores the event of a measured call in a buffer that has
 * room for it (ms_trace_call, ms_tdef_write). */
MS_INLINE void ms_trace_put(ms_tbuf *tb, unsigned fn, void *pc, uint64_t t0, uint64_t t1, int64_t bytes,
			    const ms_comm *cm, int ok, int flags, int speer, int stag, int rpeer, int rtag, int64_t rbytes,
			    const MPI_Status *st, const MPI_Request *req)
{
	if (__builtin_expect(!ok, 0)) {
		ms_trace_ev(tb, fn, pc, t0, t1, bytes, cm, 0, -1, -1, -1, -1, 0, NULL, NULL);
		return;
	}
	/* The request, read once: the role note's store may alias *req, which
	 * would have it read again. A nonblocking post that succeeded wrote
	 * it: req is not NULL (only the deferred receive passes NULL, and its
	 * flags have no MS_TF_REQ). */
	const uint64_t rq = (flags & MS_TF_REQ) ? (uint64_t)(uintptr_t)*req : 0;
	if (flags & MS_TF_REQ)
		ms_trole_note((uintptr_t)rq, (unsigned)flags & MS_TF_ALLMSG);
	uint64_t dt = t1 - t0;
	if (__builtin_expect(dt < MS_TSHORT_DT, 1)) {
		/* flags is a constant in most wrappers: what a kind does not
		 * use folds away (a plain call hashes its call site and
		 * function word alone). */
		uint64_t k = (uint64_t)(uintptr_t)pc;
		/* A call that reads no status repeating the arguments of one
		 * in the memo: its slot (ms_tmemo). A nonblocking post extends
		 * its posts record; another call (MPI_Send, a deferred
		 * receive, a collective) stores its short record. */
		const int post = (flags & MS_TF_REQ) != 0;
		const int memo = st == NULL;
		const unsigned mpeer = (unsigned)(flags & MS_TF_SEND ? speer : flags & MS_TF_RECV ? rpeer : 0);
		/* The other calls' half: a send to peer p at 2p, a receive
		 * from it at 2p + 1 (a ping-pong's pair never shares an entry;
		 * with MPICH's function ids, MPI_Send's and MPI_Recv's low bits
		 * are equal), a call without a peer by its function. */
		const unsigned mo = flags & MS_TF_RECV ? 2 * mpeer + 1 : flags & MS_TF_SEND ? 2 * mpeer : fn;
		const unsigned mi = post ? mpeer & (MS_TMEMO / 2 - 1) : MS_TMEMO / 2 + (mo & (MS_TMEMO / 2 - 1));
		ms_tmemo *mm = &tb->memo[mi];
		/* The entry's address, computed once: GCC otherwise forms it
		 * again from the index for each field it reads at an offset
		 * past a scaled index (3-5 instructions per call). Not for an
		 * index the compiler knows (a call without a peer), whose
		 * fields are at constant offsets. */
		if (!__builtin_constant_p(mi))
			MS_PIN(mm);
		const uint32_t fnf = fn | (unsigned)flags << 16;
		if (memo && mm->pc == k && mm->fnf == fnf && mm->cm == cm &&
		    (!(flags & (MS_TF_SEND | MS_TF_COLL)) || (mm->bytes == bytes && mm->stag == stag)) &&
		    (!(flags & MS_TF_SEND) || mm->speer == speer) &&
		    (!(flags & MS_TF_RECV) || (mm->rpeer == rpeer && mm->rtag == rtag && mm->rbytes == rbytes))) {
			if (post)
				ms_tpost(tb, mm, t0, t1, dt, rq);
			else
				ms_tshort_h(tb, mm->hs, t0, dt);
			return;
		}
		ms_tmsg m = ms_tcanon(cm, flags, bytes, speer, stag, rpeer, rtag, rbytes, st);
		unsigned c = cm ? (unsigned)cm->id + 1 : 0;
		uint32_t w = fn | MS_TK_CALL << 10 | (c | (unsigned)flags << 11) << 16;
		unsigned slot = ms_tslot(ms_tshkey(k, w, m.sbytes, m.rbytes, m.speer, m.stag, m.rpeer, m.rtag));
		const ms_tshape *d = &tb->dict[slot];
		if (__builtin_expect(ms_tholds(d, tb, k, w, &m, flags), 1)) {
			int hasreq = (flags & MS_TF_REQ) != 0;
			/* rq goes into this branch as it is: GCC pairs t0 and rq
			 * into one 16-byte store here and otherwise builds the
			 * pair before the memo compare, in every post (3
			 * instructions). */
			uint64_t rqs = rq;
			MS_PIN(rqs);
			ms_tshort(tb, slot, t0, dt, hasreq, rqs);
			if (memo)
				*mm = (ms_tmemo){k, cm, bytes, rbytes, speer, stag, rpeer, rtag, fnf, 1u | slot << 2, 1, 0};
			return;
		}
	}
	ms_trace_ev(tb, fn, pc, t0, t1, bytes, cm, flags, speer, stag, rpeer, rtag, rbytes, st, req);
}

/* ms_trace_defer is ms_trace_call for a blocking receive (MPI_Recv,
 * MPI_Mrecv; no request): the event is kept in the buffer and written
 * before the thread's next event, so that it is not on the path from the
 * message's arrival to the thread's next call (the send that answers it).
 * The message's source, tag and size are read from the status now. */
MS_INLINE void ms_trace_defer(ms_thread *t, unsigned fn, void *pc, uint64_t t0, uint64_t t1, int64_t bytes,
			      const ms_comm *cm, int ok, int flags, int speer, int stag, int rpeer, int rtag, int64_t rbytes,
			      const MPI_Status *st, const MPI_Request *req)
{
	(void)req; /* NULL: the generator defers no call that creates a request */
	ms_tbuf *tb = t->tb;
	if (__builtin_expect(tb->dfn != 0, 0)) {
		tb = ms_trace_slow(t); /* writes the event deferred before */
		if (tb == NULL)
			return;
	}
	if ((flags & MS_TF_RECV) && ok && st && rpeer != MPI_PROC_NULL) {
		rpeer = st->MPI_SOURCE;
		rtag = st->MPI_TAG;
		rbytes = ms_status_bytes(st);
	}
	tb->d.pc = pc;
	tb->d.t0 = t0;
	tb->d.t1 = t1;
	tb->d.rbytes = rbytes;
	tb->d.cm = cm;
	tb->d.rpeer = rpeer;
	tb->d.rtag = rtag;
	if (flags == MS_TF_RECV && __builtin_expect(ok, 1)) {
		/* A plain receive that succeeded (flags a constant): its
		 * flags, sending fields, bytes as sent and ok go without
		 * saying (ms_tdef_write): five stores fewer than another
		 * deferral between the message's arrival and the thread's
		 * next call (two fewer than before 2026-11-28). */
		tb->dfn = fn + 1;
		return;
	}
	tb->d.bytes = bytes;
	tb->d.ok = ok;
	tb->d.flags = flags;
	tb->d.speer = speer;
	tb->d.stag = stag;
	tb->dfn = (fn + 1) | MS_TDEF_ANY;
}

/* A completion call of one request (MPI_Wait, MPI_Test) keeps the request
 * in a local of its wrapper rather than in the buffer's save array, and
 * tests inline what ms_trace_save and ms_trace_done test out of line.
 * ms_trace_save1 returns the request the call may finish (0: none to
 * follow, MPI_REQUEST_NULL, an inactive persistent request by its note
 * (MS_TR_IDLE) or no trace buffer) and lends a status when
 * the caller ignores it; ms_trace_done1 records the completion, if any,
 * after a successful call. */
MS_INLINE uintptr_t ms_trace_save1(ms_thread *t, const MPI_Request *r, MPI_Status **st)
{
	ms_tbuf *tb = t->tb;
	if (__builtin_expect(tb == &ms_tnone, 0) && (tb = ms_trace_slow(t)) == NULL)
		return 0;
	if (r == NULL || *r == MPI_REQUEST_NULL)
		return 0;
	/* An inactive persistent request: the call completes nothing. */
	if (ms_trole_idle((uintptr_t)*r))
		return 0;
	if (*st == MPI_STATUS_IGNORE || *st == MPI_STATUSES_IGNORE)
		*st = tb->st;
	return (uintptr_t)*r;
}

MS_INLINE void ms_trace_done1(unsigned fn, uint64_t t1, uintptr_t h, const int *flag, const MPI_Status *st)
{
	if (flag == NULL || *flag)
		ms_trace_cpl1(fn, t1, h, st);
}

#endif
