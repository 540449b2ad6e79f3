//go:build mpiscope_openmpi || mpiscope_mpich

/*
 * unwind.c: the call-path unwinder for x86-64 Linux (unwind.h; design and
 * measured costs in docs/callpaths.md).
 *
 * A frame is (pc, sp, fp): a return address, the stack pointer once that
 * call has returned (the CFA of the callee) and rbp at that point. One step
 * goes from a frame to its caller's by the rule for pc:
 *   UW_FRAME  CFA = rbp + 16, caller's rbp at CFA - 16, return address at
 *             CFA - 8: code built with frame pointers (its .eh_frame says
 *             so at every call site), or code with no .eh_frame at all,
 *             walked by its frame pointer alone;
 *   UW_RSP    CFA = rsp + k (code without frame pointers);
 *   UW_RBP    CFA = rbp + k with other save slots;
 *   UW_DEREF  CFA = [rbp + k] (functions that realign the stack);
 *   UW_END    the walk ends after this frame: return address undefined
 *             (_start, clone, start_thread), a signal frame, or a rule
 *             that this unwinder does not follow;
 *   UW_BAD    not code: pc is in no executable segment.
 * The rule for a return address is decoded once, at its first sight, from
 * its object's .eh_frame (found through .eh_frame_hdr's sorted table) and
 * stored in uw_fkeys or uw_keys/uw_rules, fixed-size open-addressed tables
 * that threads read without lock: a slot's rule is written before its key
 * (release), the key read before the rule (acquire), and a slot once filled
 * never changes.
 *
 * Safety: every stack word is read only after checking that it lies in
 * [sp, hi) where sp only grows from frame to frame and hi is the top of the
 * thread's stack; a return address is recorded only once its rule says it
 * is code. So a corrupt stack (a garbage rbp, an overwritten return
 * address) ends the walk at the last good frame.
 */
#define _GNU_SOURCE
#include "unwind.h"

#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

/* Pointer encodings of .eh_frame (Linux Standard Base, DWARF Extensions). */
enum {
	DW_EH_PE_absptr = 0x00,
	DW_EH_PE_uleb128 = 0x01,
	DW_EH_PE_udata2 = 0x02,
	DW_EH_PE_udata4 = 0x03,
	DW_EH_PE_udata8 = 0x04,
	DW_EH_PE_sleb128 = 0x09,
	DW_EH_PE_sdata2 = 0x0a,
	DW_EH_PE_sdata4 = 0x0b,
	DW_EH_PE_sdata8 = 0x0c,
	DW_EH_PE_pcrel = 0x10,
	DW_EH_PE_datarel = 0x30,
	DW_EH_PE_indirect = 0x80,
	DW_EH_PE_omit = 0xff,
};

enum {
	UW_BAD = 0,
	UW_FRAME = 1,
	UW_RSP = 2,
	UW_RBP = 3,
	UW_DEREF = 4,
	UW_END = 5,
};
/* A rule is one 64-bit word: kind (bits 0-6), bit 7 set when rbp is saved
 * relative to the old rbp rather than the CFA, the return address's slot
 * / 8 relative to the CFA (int8, bits 8-15), rbp's slot (int16, bits 16-31;
 * 0 without bit 7: rbp unchanged), the CFA's offset (int32, bits 32-63). */
#define UW_KIND(r) ((unsigned)(r) & 0x7f)
#define UW_RBP_AT_FP 0x80u
#define UW_RULE(kind, ra8, rbpoff, cfaoff)                                    \
	((uint64_t)(kind) | (uint64_t)(uint8_t)(int8_t)(ra8) << 8 |          \
	 (uint64_t)(uint16_t)(int16_t)(rbpoff) << 16 |                       \
	 (uint64_t)(uint32_t)(int32_t)(cfaoff) << 32)
#define UW_FRAME_RULE UW_RULE(UW_FRAME, -1, -16, 16)
#define UW_BAD_RULE UW_RULE(UW_BAD, 0, 0, 0) /* 0 */
_Static_assert(UW_FRAME_RULE == MS_UNWIND_RULE_FP, "unwind.h's MS_UNWIND_RULE_FP");
#define UW_RA_OFF(r) ((intptr_t)(int8_t)((r) >> 8) * 8)
#define UW_RBP_OFF(r) ((intptr_t)(int16_t)((r) >> 16))
#define UW_CFA_OFF(r) ((intptr_t)(int32_t)((r) >> 32))

/* ---- the rule table ---- */

#define UW_CBITS 14 /* 16384 slots in each of the two tables: 384 KiB */
#define UW_PROBE 8
/* Two tables, read without lock, hashed alike: uw_fkeys holds the return
 * addresses whose rule is UW_FRAME (the common case: one load and one
 * compare per frame), uw_keys the others, each with its rule in uw_rules.
 * An empty slot's key, 0, would match address 0: in uw_keys that gives
 * rule 0 (UW_BAD); in uw_fkeys, slot 0, where address 0 hashes, holds key
 * 1, never an address. */
static _Atomic uintptr_t uw_fkeys[1u << UW_CBITS] = {[0] = 1};
static _Atomic uintptr_t uw_keys[1u << UW_CBITS];
static _Atomic uint64_t uw_rules[1u << UW_CBITS];

static inline unsigned uw_hash(uintptr_t pc)
{
	return (unsigned)((pc * 0x9E3779B97F4A7C15ull) >> (64 - UW_CBITS));
}

static uint64_t uw_slow(uintptr_t pc);

/* uw_rule: the rule for return address pc. */
static inline __attribute__((always_inline)) uint64_t uw_rule(uintptr_t pc)
{
	unsigned h = uw_hash(pc);
	if (__builtin_expect(atomic_load_explicit(&uw_fkeys[h], memory_order_acquire) == pc, 1))
		return UW_FRAME_RULE;
	if (atomic_load_explicit(&uw_keys[h], memory_order_acquire) == pc)
		return atomic_load_explicit(&uw_rules[h], memory_order_relaxed);
	return uw_slow(pc);
}

/* ---- each thread's stack ---- */

typedef struct {
	uintptr_t lo, hi; /* the thread's stack; hi == 0: not read yet */
} uw_stack;
static __thread uw_stack uw_tls __attribute__((tls_model("initial-exec")));
static __thread int uw_in_slow __attribute__((tls_model("initial-exec")));

static void uw_thread_init(void)
{
	pthread_attr_t a;
	void *addr = NULL;
	size_t size = 0;
	uw_tls.lo = 0;
	uw_tls.hi = 1; /* unknown: every walk gives its first frame only */
	if (pthread_getattr_np(pthread_self(), &a) != 0)
		return;
	if (pthread_attr_getstack(&a, &addr, &size) == 0 && addr && size) {
		uw_tls.lo = (uintptr_t)addr;
		uw_tls.hi = (uintptr_t)addr + size;
	}
	pthread_attr_destroy(&a);
}

/* ---- the loaded objects' executable segments ---- */

#define UW_MAXSEGS 2048
typedef struct {
	uintptr_t lo, hi;     /* [lo, hi): an executable PT_LOAD segment */
	const uint8_t *hdr;   /* its object's .eh_frame_hdr, or NULL */
	const int32_t *table; /* .eh_frame_hdr's search table (datarel sdata4 pairs) */
	uint32_t nfde;
} uw_seg;

/* Everything below is read and written under uw_mu only. */
static pthread_mutex_t uw_mu = PTHREAD_MUTEX_INITIALIZER;
static uw_seg uw_segs[UW_MAXSEGS];
static int uw_nsegs;
static unsigned long long uw_adds, uw_subs; /* dl_iterate_phdr's counters at the last scan */
static int uw_scanned;
static ms_unwind_stats uw_stats;

static uintptr_t uw_read_enc(const uint8_t **pp, const uint8_t *end, uint8_t enc, uintptr_t datarel, int *ok);

static int uw_scan_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	int *first = data;
	if (*first) {
		*first = 0;
		if (uw_scanned && size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs) &&
		    info->dlpi_adds == uw_adds && info->dlpi_subs == uw_subs)
			return 1; /* nothing loaded or unloaded since the last scan */
		if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
			uw_adds = info->dlpi_adds;
			uw_subs = info->dlpi_subs;
		}
		uw_scanned = 1;
		uw_nsegs = 0;
		uw_stats.scans++;
	}
	const uint8_t *hdr = NULL;
	const int32_t *table = NULL;
	uint32_t nfde = 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			hdr = (const uint8_t *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	/* .eh_frame_hdr: version 1, eh_frame_ptr_enc, fde_count_enc,
	 * table_enc, eh_frame_ptr, fde_count, then the table. Only the
	 * encoding every linker writes (datarel sdata4) is searched. */
	if (hdr && hdr[0] == 1 && hdr[3] == (DW_EH_PE_datarel | DW_EH_PE_sdata4)) {
		const uint8_t *p = hdr + 4, *end = hdr + 4 + 32;
		int ok = 1;
		uw_read_enc(&p, end, hdr[1], (uintptr_t)hdr, &ok);
		uintptr_t n = uw_read_enc(&p, end, hdr[2], (uintptr_t)hdr, &ok);
		if (ok && n > 0 && n < (1u << 31)) {
			table = (const int32_t *)p;
			nfde = (uint32_t)n;
		}
	}
	for (int i = 0; i < info->dlpi_phnum && uw_nsegs < UW_MAXSEGS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || ph->p_memsz == 0)
			continue;
		uw_seg *s = &uw_segs[uw_nsegs++];
		s->lo = info->dlpi_addr + ph->p_vaddr;
		s->hi = s->lo + ph->p_memsz;
		s->hdr = table ? hdr : NULL;
		s->table = table;
		s->nfde = nfde;
	}
	return 0;
}

/* uw_scan reads the loaded objects again if any was loaded or unloaded. */
static void uw_scan(void)
{
	int first = 1;
	dl_iterate_phdr(uw_scan_cb, &first);
	uw_stats.segments = (uint64_t)uw_nsegs;
}

static const uw_seg *uw_find_seg(uintptr_t a)
{
	for (int i = 0; i < uw_nsegs; i++)
		if (a >= uw_segs[i].lo && a < uw_segs[i].hi)
			return &uw_segs[i];
	return NULL;
}

/* ---- reading .eh_frame ---- */

static uintptr_t uw_uleb(const uint8_t **pp, const uint8_t *end, int *ok)
{
	uintptr_t v = 0;
	unsigned s = 0;
	const uint8_t *p = *pp;
	for (;;) {
		if (p >= end) {
			*ok = 0;
			break;
		}
		uint8_t b = *p++;
		if (s < 64)
			v |= (uintptr_t)(b & 0x7f) << s;
		s += 7;
		if (!(b & 0x80))
			break;
	}
	*pp = p;
	return v;
}

static intptr_t uw_sleb(const uint8_t **pp, const uint8_t *end, int *ok)
{
	uintptr_t v = 0;
	unsigned s = 0;
	uint8_t b = 0;
	const uint8_t *p = *pp;
	for (;;) {
		if (p >= end) {
			*ok = 0;
			break;
		}
		b = *p++;
		if (s < 64)
			v |= (uintptr_t)(b & 0x7f) << s;
		s += 7;
		if (!(b & 0x80))
			break;
	}
	if (s < 64 && (b & 0x40))
		v |= ~(uintptr_t)0 << s;
	*pp = p;
	return (intptr_t)v;
}

static uint64_t uw_fixed(const uint8_t **pp, const uint8_t *end, int n, int *ok)
{
	uint64_t v = 0;
	if (end - *pp < n) {
		*ok = 0;
		*pp = end;
		return 0;
	}
	memcpy(&v, *pp, (size_t)n); /* little endian */
	*pp += n;
	return v;
}

/* uw_read_enc reads a DW_EH_PE-encoded pointer. */
static uintptr_t uw_read_enc(const uint8_t **pp, const uint8_t *end, uint8_t enc, uintptr_t datarel, int *ok)
{
	const uint8_t *at = *pp;
	uintptr_t v;
	if (enc == DW_EH_PE_omit)
		return 0;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
		v = (uintptr_t)uw_fixed(pp, end, 8, ok);
		break;
	case DW_EH_PE_uleb128:
		v = uw_uleb(pp, end, ok);
		break;
	case DW_EH_PE_udata2:
		v = (uintptr_t)(uint16_t)uw_fixed(pp, end, 2, ok);
		break;
	case DW_EH_PE_udata4:
		v = (uintptr_t)(uint32_t)uw_fixed(pp, end, 4, ok);
		break;
	case DW_EH_PE_udata8:
		v = (uintptr_t)uw_fixed(pp, end, 8, ok);
		break;
	case DW_EH_PE_sleb128:
		v = (uintptr_t)uw_sleb(pp, end, ok);
		break;
	case DW_EH_PE_sdata2:
		v = (uintptr_t)(intptr_t)(int16_t)uw_fixed(pp, end, 2, ok);
		break;
	case DW_EH_PE_sdata4:
		v = (uintptr_t)(intptr_t)(int32_t)uw_fixed(pp, end, 4, ok);
		break;
	case DW_EH_PE_sdata8:
		v = (uintptr_t)uw_fixed(pp, end, 8, ok);
		break;
	default:
		*ok = 0;
		return 0;
	}
	switch (enc & 0x70) {
	case 0:
		break;
	case DW_EH_PE_pcrel:
		v += (uintptr_t)at;
		break;
	case DW_EH_PE_datarel:
		v += datarel;
		break;
	default: /* textrel, funcrel, aligned: not used on x86-64 Linux */
		*ok = 0;
		return 0;
	}
	if (enc & DW_EH_PE_indirect)
		*ok = 0; /* only personality pointers are indirect: never read */
	return v;
}

/* A register's rule while the CFA program runs. */
enum { R_SAME, R_UNDEF, R_OFF, R_FPOFF, R_OTHER };
typedef struct {
	int8_t how;
	intptr_t off;
} uw_reg;
typedef struct {
	int cfa_reg; /* 7 rsp, 6 rbp, -1 [rbp + off], -2 other */
	intptr_t cfa_off;
	uw_reg rbp, ra;
} uw_state;

typedef struct {
	const uint8_t *insns, *end; /* initial instructions */
	uintptr_t code_align;
	intptr_t data_align;
	unsigned ra_reg;
	uint8_t fde_enc;
	int has_z, signal;
} uw_cie;

static int uw_parse_cie(const uint8_t *c, uw_cie *cie)
{
	int ok = 1;
	const uint8_t *p = c;
	uint64_t len = uw_fixed(&p, p + 4, 4, &ok);
	if (len == 0xffffffffu)
		len = uw_fixed(&p, p + 8, 8, &ok);
	if (!ok || len < 4 || len > (1u << 30))
		return 0;
	const uint8_t *end = p + len;
	if (uw_fixed(&p, end, 4, &ok) != 0 || !ok || p >= end) /* CIE id in .eh_frame */
		return 0;
	uint8_t version = *p++;
	if (version != 1 && version != 3 && version != 4)
		return 0;
	const char *aug = (const char *)p;
	while (p < end && *p)
		p++;
	if (p >= end)
		return 0;
	p++;
	if (version == 4)
		p += 2; /* address size, segment size */
	if (p >= end)
		return 0;
	memset(cie, 0, sizeof *cie);
	cie->fde_enc = DW_EH_PE_absptr;
	cie->code_align = uw_uleb(&p, end, &ok);
	cie->data_align = uw_sleb(&p, end, &ok);
	cie->ra_reg = version == 1 ? (p < end ? *p++ : 0) : (unsigned)uw_uleb(&p, end, &ok);
	if (aug[0] == 'z') {
		cie->has_z = 1;
		uintptr_t alen = uw_uleb(&p, end, &ok);
		const uint8_t *aend = p + alen;
		if (!ok || aend > end)
			return 0;
		for (const char *a = aug + 1; *a; a++) {
			switch (*a) {
			case 'R':
				cie->fde_enc = p < aend ? *p++ : 0;
				break;
			case 'L':
				p++;
				break;
			case 'P': {
				uint8_t penc = p < aend ? *p++ : DW_EH_PE_omit;
				int pok = 1;
				uw_read_enc(&p, aend, penc & 0x7f, 0, &pok);
				break;
			}
			case 'S':
				cie->signal = 1;
				break;
			default: /* 'B', 'G': nothing to read here */
				break;
			}
		}
		p = aend;
	} else if (aug[0] != 0) {
		return 0; /* an augmentation we cannot skip */
	}
	if (!ok || p > end || cie->ra_reg != 16)
		return 0;
	cie->insns = p;
	cie->end = end;
	return 1;
}

static void uw_set(uw_state *st, unsigned reg, int8_t how, intptr_t off)
{
	uw_reg r = {how, off};
	if (reg == 6)
		st->rbp = r;
	else if (reg == 16)
		st->ra = r;
	/* rsp is the CFA by the x86-64 convention; other registers are not followed */
}

/* uw_expr_cfa recognizes DW_OP_breg6 k; DW_OP_deref (the CFA of a
 * function that realigned its stack). */
static int uw_expr_cfa(const uint8_t *p, const uint8_t *end, intptr_t *k)
{
	int ok = 1;
	if (p >= end || *p != 0x76) /* DW_OP_breg6 */
		return 0;
	p++;
	*k = uw_sleb(&p, end, &ok);
	return ok && p + 1 == end && *p == 0x06; /* DW_OP_deref */
}

/* uw_expr_reg recognizes DW_OP_breg6 k: a register saved at [rbp + k]. */
static int uw_expr_reg(const uint8_t *p, const uint8_t *end, intptr_t *k)
{
	int ok = 1;
	if (p >= end || *p != 0x76)
		return 0;
	p++;
	*k = uw_sleb(&p, end, &ok);
	return ok && p == end;
}

/* uw_run runs a CFA program until its location passes target. Returns 0
 * on an instruction it cannot read. */
static int uw_run(const uint8_t *p, const uint8_t *end, const uw_cie *cie, uintptr_t loc, uintptr_t target,
                  uw_state *st, const uw_state *init)
{
	uw_state stack[16];
	int depth = 0, ok = 1;
	while (p < end && ok) {
		uint8_t op = *p++;
		uintptr_t delta = 0;
		int adv = 0;
		unsigned reg;
		switch (op >> 6) {
		case 1: /* DW_CFA_advance_loc */
			delta = (uintptr_t)(op & 0x3f) * cie->code_align;
			adv = 1;
			break;
		case 2: /* DW_CFA_offset */
			reg = op & 0x3f;
			uw_set(st, reg, R_OFF, (intptr_t)uw_uleb(&p, end, &ok) * cie->data_align);
			continue;
		case 3: /* DW_CFA_restore */
			reg = op & 0x3f;
			if (reg == 6)
				st->rbp = init->rbp;
			else if (reg == 16)
				st->ra = init->ra;
			continue;
		}
		if (adv) {
			if (loc + delta > target)
				return 1;
			loc += delta;
			continue;
		}
		intptr_t k = 0;
		uintptr_t n;
		switch (op) {
		case 0x00: /* nop */
			break;
		case 0x01: { /* set_loc */
			uintptr_t l = uw_read_enc(&p, end, cie->fde_enc, 0, &ok);
			if (l > target)
				return 1;
			loc = l;
			break;
		}
		case 0x02: /* advance_loc1 */
		case 0x03: /* advance_loc2 */
		case 0x04: /* advance_loc4 */
			delta = (uintptr_t)uw_fixed(&p, end, op == 0x02 ? 1 : op == 0x03 ? 2 : 4, &ok) * cie->code_align;
			if (loc + delta > target)
				return ok;
			loc += delta;
			break;
		case 0x05: /* offset_extended */
			reg = (unsigned)uw_uleb(&p, end, &ok);
			uw_set(st, reg, R_OFF, (intptr_t)uw_uleb(&p, end, &ok) * cie->data_align);
			break;
		case 0x06: /* restore_extended */
			reg = (unsigned)uw_uleb(&p, end, &ok);
			if (reg == 6)
				st->rbp = init->rbp;
			else if (reg == 16)
				st->ra = init->ra;
			break;
		case 0x07: /* undefined */
			uw_set(st, (unsigned)uw_uleb(&p, end, &ok), R_UNDEF, 0);
			break;
		case 0x08: /* same_value */
			uw_set(st, (unsigned)uw_uleb(&p, end, &ok), R_SAME, 0);
			break;
		case 0x09: /* register */
			reg = (unsigned)uw_uleb(&p, end, &ok);
			uw_uleb(&p, end, &ok);
			uw_set(st, reg, R_OTHER, 0);
			break;
		case 0x0a: /* remember_state */
			if (depth == 16)
				return 0;
			stack[depth++] = *st;
			break;
		case 0x0b: /* restore_state */
			if (depth == 0)
				return 0;
			*st = stack[--depth];
			break;
		case 0x0c: /* def_cfa */
			st->cfa_reg = (int)uw_uleb(&p, end, &ok);
			st->cfa_off = (intptr_t)uw_uleb(&p, end, &ok);
			break;
		case 0x0d: /* def_cfa_register */
			st->cfa_reg = (int)uw_uleb(&p, end, &ok);
			break;
		case 0x0e: /* def_cfa_offset */
			st->cfa_off = (intptr_t)uw_uleb(&p, end, &ok);
			break;
		case 0x0f: /* def_cfa_expression */
			n = uw_uleb(&p, end, &ok);
			if (!ok || n > (uintptr_t)(end - p))
				return 0;
			st->cfa_reg = uw_expr_cfa(p, p + n, &k) ? -1 : -2;
			st->cfa_off = k;
			p += n;
			break;
		case 0x10: /* expression */
			reg = (unsigned)uw_uleb(&p, end, &ok);
			n = uw_uleb(&p, end, &ok);
			if (!ok || n > (uintptr_t)(end - p))
				return 0;
			if (uw_expr_reg(p, p + n, &k))
				uw_set(st, reg, R_FPOFF, k);
			else
				uw_set(st, reg, R_OTHER, 0);
			p += n;
			break;
		case 0x11: /* offset_extended_sf */
			reg = (unsigned)uw_uleb(&p, end, &ok);
			uw_set(st, reg, R_OFF, uw_sleb(&p, end, &ok) * cie->data_align);
			break;
		case 0x12: /* def_cfa_sf */
			st->cfa_reg = (int)uw_uleb(&p, end, &ok);
			st->cfa_off = uw_sleb(&p, end, &ok) * cie->data_align;
			break;
		case 0x13: /* def_cfa_offset_sf */
			st->cfa_off = uw_sleb(&p, end, &ok) * cie->data_align;
			break;
		case 0x14: /* val_offset */
		case 0x15: /* val_offset_sf */
			reg = (unsigned)uw_uleb(&p, end, &ok);
			if (op == 0x14)
				uw_uleb(&p, end, &ok);
			else
				uw_sleb(&p, end, &ok);
			uw_set(st, reg, R_OTHER, 0);
			break;
		case 0x16: /* val_expression */
			reg = (unsigned)uw_uleb(&p, end, &ok);
			n = uw_uleb(&p, end, &ok);
			if (!ok || n > (uintptr_t)(end - p))
				return 0;
			uw_set(st, reg, R_OTHER, 0);
			p += n;
			break;
		case 0x2e: /* GNU_args_size */
			uw_uleb(&p, end, &ok);
			break;
		case 0x2f: /* GNU_negative_offset_extended */
			reg = (unsigned)uw_uleb(&p, end, &ok);
			uw_set(st, reg, R_OFF, -(intptr_t)uw_uleb(&p, end, &ok) * cie->data_align);
			break;
		default:
			return 0;
		}
	}
	return ok;
}

/* uw_decode: the rule for target (a return address - 1) in seg, or
 * UW_FRAME when no FDE covers it (code without call-frame information:
 * walked by its frame pointer). */
static uint64_t uw_decode_fde(const uw_seg *seg, uintptr_t target, int *found);
static uint64_t uw_decode(const uw_seg *seg, uintptr_t target)
{
	int found;
	return uw_decode_fde(seg, target, &found);
}

/* uw_decode_fde is uw_decode, telling in *found whether an FDE covers
 * target. */
static uint64_t uw_decode_fde(const uw_seg *seg, uintptr_t target, int *found)
{
	*found = 0;
	if (!seg->table)
		return UW_FRAME_RULE;
	/* The last entry whose initial location is <= target. */
	const int32_t *t = seg->table;
	uintptr_t base = (uintptr_t)seg->hdr;
	uint32_t lo = 0, hi = seg->nfde;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (base + (intptr_t)t[2 * mid] <= target)
			lo = mid;
		else
			hi = mid;
	}
	if (base + (intptr_t)t[2 * lo] > target)
		return UW_FRAME_RULE;
	const uint8_t *fde = (const uint8_t *)(base + (intptr_t)t[2 * lo + 1]);
	int ok = 1;
	const uint8_t *p = fde;
	uint64_t len = uw_fixed(&p, p + 4, 4, &ok);
	if (len == 0xffffffffu)
		len = uw_fixed(&p, p + 8, 8, &ok);
	if (!ok || len < 8 || len > (1u << 30))
		return UW_RULE(UW_END, 0, 0, 0);
	const uint8_t *end = p + len;
	const uint8_t *idp = p;
	uint32_t cieoff = (uint32_t)uw_fixed(&p, end, 4, &ok);
	uw_cie cie;
	if (!ok || cieoff == 0 || !uw_parse_cie(idp - cieoff, &cie))
		return UW_RULE(UW_END, 0, 0, 0);
	uintptr_t start = uw_read_enc(&p, end, cie.fde_enc, 0, &ok);
	uintptr_t range = uw_read_enc(&p, end, cie.fde_enc & 0x0f, 0, &ok);
	if (!ok)
		return UW_RULE(UW_END, 0, 0, 0);
	if (target < start || target - start >= range)
		return UW_FRAME_RULE; /* a gap: code without an FDE */
	if (cie.has_z) {
		uintptr_t alen = uw_uleb(&p, end, &ok);
		p += alen;
	}
	if (!ok || p > end)
		return UW_RULE(UW_END, 0, 0, 0);
	*found = 1;
	uw_stats.fde++;
	if (cie.signal)
		return UW_RULE(UW_END, 0, 0, 0);
	uw_state st = {.cfa_reg = 7, .cfa_off = 8, .rbp = {R_SAME, 0}, .ra = {R_SAME, 0}};
	if (!uw_run(cie.insns, cie.end, &cie, start, (uintptr_t)-1, &st, &st))
		return UW_RULE(UW_END, 0, 0, 0);
	uw_state init = st;
	if (!uw_run(p, end, &cie, start, target, &st, &init))
		return UW_RULE(UW_END, 0, 0, 0);
	/* The return address. */
	if (st.ra.how != R_OFF || st.ra.off % 8 || st.ra.off < -1024 || st.ra.off > 1016)
		return UW_RULE(UW_END, 0, 0, 0); /* undefined (end of stack) or a rule not followed */
	/* The caller's rbp. */
	intptr_t rbpoff = 0;
	unsigned flags = 0;
	switch (st.rbp.how) {
	case R_SAME:
	case R_UNDEF:
		break;
	case R_OFF:
		rbpoff = st.rbp.off;
		break;
	case R_FPOFF:
		rbpoff = st.rbp.off;
		flags = UW_RBP_AT_FP;
		break;
	default:
		return UW_RULE(UW_END, 0, 0, 0);
	}
	if (rbpoff < -32768 || rbpoff > 32767)
		return UW_RULE(UW_END, 0, 0, 0);
	if (st.cfa_off < -(1 << 30) || st.cfa_off > (1 << 30))
		return UW_RULE(UW_END, 0, 0, 0);
	int kind;
	if (st.cfa_reg == 7)
		kind = UW_RSP;
	else if (st.cfa_reg == 6)
		kind = UW_RBP;
	else if (st.cfa_reg == -1)
		kind = UW_DEREF;
	else
		return UW_RULE(UW_END, 0, 0, 0);
	if (kind == UW_RBP && st.cfa_off == 16 && st.ra.off == -8 && rbpoff == -16 && !flags)
		return UW_FRAME_RULE;
	return UW_RULE(kind | flags, st.ra.off / 8, rbpoff, st.cfa_off);
}

/* uw_slow: the rule for pc on a miss in the table: decoded, then
 * published (when a slot of its probe sequence is free). */
/* uw_probe looks pc up in its probe sequence of both tables: 1 and its
 * rule when found; else 0, with the first free slot of each table (-1:
 * none). */
static int uw_probe(uintptr_t pc, uint64_t *rule, int *ffree, int *gfree)
{
	const unsigned mask = (1u << UW_CBITS) - 1;
	unsigned h = uw_hash(pc);
	*ffree = *gfree = -1;
	for (unsigned i = 0; i < UW_PROBE; i++) {
		unsigned j = (h + i) & mask;
		uintptr_t k = atomic_load_explicit(&uw_fkeys[j], memory_order_acquire);
		if (k == 0) {
			*ffree = (int)j;
			break;
		}
		if (k == pc) {
			*rule = UW_FRAME_RULE;
			return 1;
		}
	}
	for (unsigned i = 0; i < UW_PROBE; i++) {
		unsigned j = (h + i) & mask;
		uintptr_t k = atomic_load_explicit(&uw_keys[j], memory_order_acquire);
		if (k == 0) {
			*gfree = (int)j;
			break;
		}
		if (k == pc) {
			*rule = atomic_load_explicit(&uw_rules[j], memory_order_relaxed);
			return 1;
		}
	}
	return 0;
}

/* uw_slow: the rule for pc on a miss in the first slots: found further in
 * its probe sequence, or decoded and published (when a slot of its probe
 * sequence is free). */
static __attribute__((noinline)) uint64_t uw_slow(uintptr_t pc)
{
	uint64_t rule = UW_BAD_RULE;
	int ffree, gfree;
	if (pc < 4096 || pc >> 47)
		return UW_BAD_RULE; /* not user-space code */
	if (uw_probe(pc, &rule, &ffree, &gfree))
		return rule;
	if (uw_in_slow)
		return UW_BAD_RULE; /* a signal handler's walk interrupted ours */
	uw_in_slow = 1;
	pthread_mutex_lock(&uw_mu);
	if (uw_probe(pc, &rule, &ffree, &gfree)) /* decoded meanwhile */
		goto out;
	const uw_seg *seg = uw_find_seg(pc - 1);
	if (!seg) {
		uw_scan();
		seg = uw_find_seg(pc - 1);
	}
	if (!seg) {
		uw_stats.rejected++;
		goto out;
	}
	rule = uw_decode(seg, pc - 1);
	uw_stats.decoded++;
	if (rule == UW_FRAME_RULE && ffree >= 0) {
		atomic_store_explicit(&uw_fkeys[ffree], pc, memory_order_release);
		uw_stats.cached++;
	} else if (rule != UW_FRAME_RULE && gfree >= 0) {
		atomic_store_explicit(&uw_rules[gfree], rule, memory_order_relaxed);
		atomic_store_explicit(&uw_keys[gfree], pc, memory_order_release);
		uw_stats.cached++;
	}
out:
	pthread_mutex_unlock(&uw_mu);
	uw_in_slow = 0;
	return rule;
}

/* ---- the walk ---- */

int ms_unwind(uintptr_t pc, uintptr_t sp, uintptr_t fp, uintptr_t *out, int max)
{
	if (max <= 0)
		return 0;
	out[0] = pc;
	if (max == 1)
		return 1;
	uintptr_t hi = uw_tls.hi;
	if (__builtin_expect(hi == 0, 0)) {
		uw_thread_init();
		hi = uw_tls.hi;
	}
	if (sp < uw_tls.lo || sp >= hi)
		return 1; /* not on this thread's stack (a signal stack, a coroutine) */
	/* Every word read is at an address a with sp <= a <= hi, where sp is
	 * the current frame's (so that frames strictly increase) and hi the
	 * highest word of the stack; CFAs and saved-register slots are also
	 * multiples of 8 (an rbp is not checked for it: reading it is as safe,
	 * and a return address read through a misaligned one is recorded
	 * only if it is a known one). */
	hi -= 8;
	int n = 1;
	uint64_t r = uw_rule(pc);
	for (;;) {
		/* Frame-pointer steps, in a loop of their own: CFA = rbp + 16,
		 * the caller's rbp at [rbp], the return address at [rbp + 8],
		 * sp <= rbp <= top - 16. A return address found in uw_fkeys is
		 * code whose rule is UW_FRAME again, and the loop goes on. */
		if (__builtin_expect(r == UW_FRAME_RULE, 1)) {
			uintptr_t lo = sp;
			for (;;) {
				if (fp < lo || fp > hi - 8)
					return n;
				uintptr_t ra = ((const uintptr_t *)fp)[1];
				uintptr_t nfp = ((const uintptr_t *)fp)[0];
				unsigned h = uw_hash(ra);
				uintptr_t k = atomic_load_explicit(&uw_fkeys[h], memory_order_acquire);
				lo = fp + 16;
				fp = nfp;
				if (__builtin_expect(k != ra, 0)) {
					r = uw_rule(ra);
					if (r == UW_BAD_RULE)
						return n;
					out[n++] = ra;
					if (n == max)
						return n;
					if (r != UW_FRAME_RULE)
						break;
					continue;
				}
				out[n++] = ra;
				if (n == max)
					return n;
			}
			sp = lo;
			if (sp & 7)
				return n; /* reached through a misaligned rbp */
		}
		/* Any other rule. */
		uintptr_t cfa, ra, nfp;
		unsigned kind = UW_KIND(r);
		if (kind == UW_RSP)
			cfa = sp + UW_CFA_OFF(r);
		else if (kind == UW_RBP)
			cfa = fp + UW_CFA_OFF(r);
		else if (kind == UW_DEREF) {
			uintptr_t a = fp + UW_CFA_OFF(r);
			if (a < sp || a > hi || (a & 7))
				return n;
			cfa = *(const uintptr_t *)a;
		} else
			return n; /* UW_END, UW_BAD */
		if (cfa <= sp || cfa > hi + 8 || (cfa & 7))
			return n;
		uintptr_t a = cfa + UW_RA_OFF(r);
		if (a < sp || a > hi)
			return n;
		ra = *(const uintptr_t *)a;
		nfp = fp;
		if (UW_RBP_OFF(r) || (r & UW_RBP_AT_FP)) {
			a = ((r & UW_RBP_AT_FP) ? fp : cfa) + UW_RBP_OFF(r);
			if (a < sp || a > hi || (a & 7))
				return n;
			nfp = *(const uintptr_t *)a;
		}
		/* The caller's frame: its return address must be code. */
		r = uw_rule(ra);
		if (r == UW_BAD_RULE)
			return n;
		out[n++] = ra;
		if (n == max)
			return n;
		sp = cfa;
		fp = nfp;
	}
}

/* ms_unwind_hint: ms_unwind following a hint (unwind.h). The same steps
 * and checks, in two loops. The first follows the hint while its rules
 * are the frame pointer's: per frame the bounds test, two loads and a
 * compare with the hint's frame, nothing stored (the frames found are the
 * hint's). The second takes every rule (a frame-pointer step is UW_FRAME's
 * case), each frame's rule the hint's while the frames equal it, position
 * by position (a rule never changes once found, and the hint's frames were
 * proved code when it was made), the tables' from the first frame that
 * differs. The frames the first loop found are written to out (from the
 * hint) only when the walk's path is not the hint's. A hint rule of 0
 * (unknown) is looked up. */
int ms_unwind_hint(uintptr_t pc, uintptr_t sp, uintptr_t fp, uintptr_t *out, uint64_t *rules, int max,
                   const uintptr_t *hint, const uint64_t *hrule, int nh, int *same)
{
	*same = 0;
	if (max <= 0)
		return 0;
	int lim = nh < max ? nh : max; /* frames still compared with the hint; 0 once one differs */
	int n = 1, m = 0, pre = 0;     /* frames found, of which equal to the hint's, of which not in out */
	uint64_t r;
	uintptr_t hi = uw_tls.hi;
	if (__builtin_expect(hi == 0, 0)) {
		uw_thread_init();
		hi = uw_tls.hi;
	}
	const int on_stack = sp >= uw_tls.lo && sp < hi;
	hi -= 8; /* the highest word that may be read (ms_unwind) */
	if (lim > 0 && hint[0] == pc && hrule[0] != 0) {
		r = hrule[0];
		if (on_stack)
			while (n < lim && r == UW_FRAME_RULE && fp >= sp && fp <= hi - 8) {
				uintptr_t ra = ((const uintptr_t *)fp)[1];
				if (ra != hint[n])
					break;
				sp = fp + 16;
				fp = ((const uintptr_t *)fp)[0];
				r = hrule[n++];
			}
		m = pre = n;
	} else {
		out[0] = pc;
		r = rules[0] = uw_rule(pc);
		lim = 0;
	}
	if (n == max || !on_stack)
		goto done;
	for (;;) {
		uintptr_t cfa, ra, nfp;
		if (__builtin_expect(r == UW_FRAME_RULE, 1)) {
			/* CFA = rbp + 16: the caller's rbp at [rbp], the return
			 * address at [rbp + 8]; sp <= rbp <= top - 16. */
			if (fp < sp || fp > hi - 8)
				break;
			ra = ((const uintptr_t *)fp)[1];
			nfp = ((const uintptr_t *)fp)[0];
			cfa = fp + 16;
		} else {
			unsigned kind = UW_KIND(r);
			if (sp & 7)
				break; /* reached through a misaligned rbp */
			if (kind == UW_RSP)
				cfa = sp + UW_CFA_OFF(r);
			else if (kind == UW_RBP)
				cfa = fp + UW_CFA_OFF(r);
			else if (kind == UW_DEREF) {
				uintptr_t a = fp + UW_CFA_OFF(r);
				if (a < sp || a > hi || (a & 7))
					break;
				cfa = *(const uintptr_t *)a;
			} else
				break; /* UW_END, UW_BAD */
			if (cfa <= sp || cfa > hi + 8 || (cfa & 7))
				break;
			uintptr_t a = cfa + UW_RA_OFF(r);
			if (a < sp || a > hi)
				break;
			ra = *(const uintptr_t *)a;
			nfp = fp;
			if (UW_RBP_OFF(r) || (r & UW_RBP_AT_FP)) {
				a = ((r & UW_RBP_AT_FP) ? fp : cfa) + UW_RBP_OFF(r);
				if (a < sp || a > hi || (a & 7))
					break;
				nfp = *(const uintptr_t *)a;
			}
		}
		/* The caller's frame: its return address must be code. */
		if (n < lim && hint[n] == ra) {
			r = hrule[n];
			m++;
		} else {
			lim = 0;
			r = uw_rule(ra);
			if (r == UW_BAD_RULE)
				break;
		}
		out[n] = ra;
		rules[n] = r;
		if (++n == max)
			break;
		sp = cfa;
		fp = nfp;
	}
done:
	*same = m;
	if (!(m == n && n == nh))
		for (int i = 0; i < pre; i++) {
			out[i] = hint[i];
			rules[i] = hrule[i];
		}
	return n;
}

void ms_unwind_init(void)
{
	if (uw_tls.hi == 0)
		uw_thread_init();
	pthread_mutex_lock(&uw_mu);
	uw_scan();
	pthread_mutex_unlock(&uw_mu);
}

/* The main program's .eh_frame_hdr table (ms_unwind_main_fp): the first
 * object dl_iterate_phdr lists. */
static int uw_main_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	uw_seg *s = data;
	const uint8_t *hdr = NULL;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			hdr = (const uint8_t *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	if (hdr && hdr[0] == 1 && hdr[3] == (DW_EH_PE_datarel | DW_EH_PE_sdata4)) {
		const uint8_t *p = hdr + 4, *end = hdr + 4 + 32;
		int ok = 1;
		uw_read_enc(&p, end, hdr[1], (uintptr_t)hdr, &ok);
		uintptr_t n = uw_read_enc(&p, end, hdr[2], (uintptr_t)hdr, &ok);
		if (ok && n > 0 && n < (1u << 31)) {
			s->hdr = hdr;
			s->table = (const int32_t *)p;
			s->nfde = (uint32_t)n;
		}
	}
	return 1; /* the main program only */
}

void ms_unwind_main_fp(int *fp, int *sampled)
{
	*fp = *sampled = 0;
	uw_seg seg = {0};
	dl_iterate_phdr(uw_main_cb, &seg);
	if (!seg.table || seg.nfde < 2)
		return;
	/* Up to 256 functions, evenly spread over the table, each judged
	 * by its rules between its start and the next function's. Functions
	 * of under 16 bytes and rules that end a walk (the PLT's
	 * expressions, _start's undefined return address) are not counted. */
	const uint32_t nf = seg.nfde - 1, want = nf < 256 ? nf : 256;
	const uintptr_t base = (uintptr_t)seg.hdr;
	pthread_mutex_lock(&uw_mu);
	const uint64_t fdes = uw_stats.fde; /* counts the walks' decoding only */
	for (uint32_t k = 0; k < want; k++) {
		uint32_t i = (uint32_t)((uint64_t)k * nf / want);
		uintptr_t a = base + (intptr_t)seg.table[2 * i], b = base + (intptr_t)seg.table[2 * i + 2];
		if (b <= a || b - a < 16)
			continue;
		/* The rule at 1/8, 2/8 ... 7/8 of the way: a function that
		 * keeps a frame pointer has the frame pointer's rule between
		 * its prologue and its epilogue, which in a small function
		 * (a few instructions around a call) may hold at a point or
		 * two only. */
		int judged = 0, keeps = 0;
		for (int j = 1; j < 8 && !keeps; j++) {
			int found;
			uint64_t r = uw_decode_fde(&seg, a + (b - a) * j / 8, &found);
			unsigned kind = UW_KIND(r);
			if (!found || kind == UW_END || kind == UW_BAD)
				continue;
			judged = 1;
			keeps = r == UW_FRAME_RULE;
		}
		*sampled += judged;
		*fp += keeps;
	}
	uw_stats.fde = fdes;
	pthread_mutex_unlock(&uw_mu);
}

void ms_unwind_stats_get(ms_unwind_stats *s)
{
	pthread_mutex_lock(&uw_mu);
	*s = uw_stats;
	pthread_mutex_unlock(&uw_mu);
}
