/* Range and branch counts from samples (ek_profile_builder): see profile.h and
 * docs/PROFILES.md ("From samples"). */
#include <stdlib.h>
#include <string.h>

#include "core/hot.h"
#include "etmkit/isa.h"
#include "profile/profile_int.h"

/* one stream of samples (a decoding of one trace source): where the current run started */
typedef struct pb_stream {
    uint32_t queue;
    int32_t cpu;
    uint8_t trace_id;
    int used;
    int valid;        /* start is known */
    uint64_t start;   /* binary address of the run's first instruction */
    uint64_t mapping; /* its mapping */
    size_t bin;       /* its binary (handle in p) */
} pb_stream;

/* a branch at the end of a run cut by an interrupt or a trace end, taken or not: decided where
 * its thread's execution resumes (the next run of the thread that starts on its side of the
 * kernel boundary) */
typedef struct pb_pending {
    int32_t tid;
    uint64_t ip, target; /* target: direct branches */
    int direct, cond;
} pb_pending;

/* where an address is, as the builder counts it: its binary address, mapping and binary */
typedef struct pb_at {
    uint64_t vaddr, mapping;
    size_t bin;
} pb_at;

#define PB_BIN_CACHE 64
/* runs checked (run_possible) remembered: the answer depends on the binary's code only, and
 * hot loops end the same runs over and over */
#define PB_RUN_BITS 11

struct ek_profile_builder {
    struct {
        uint64_t mapping;
        size_t bin;
        int used;
    } bincache[PB_BIN_CACHE]; /* mapping -> binary handle */
    ek_profile_code_fn code;
    void *code_ctx;
    ek_profile_insn_fn insn;
    void *insn_ctx;
    pb_pending *pend;
    size_t npend, cappend;
    ek_profile *p;
    ek_profile_locate_fn locate;
    void *ctx;
    ek_profile_maps *maps; /* ek_profile_builder_use_maps: locate with these instead */
    prof_fast_set *fast;
    ek_profile_hint_fn hint;
    void *hint_ctx;
    pb_stream *st;
    size_t nst, capst;
    size_t stlast; /* the stream of the last sample (samples come in runs of one stream) */
    ek_isa_cfg isa;
    ek_profile_build_stats stats;
    int part;        /* ek_profile_build_part */
    uint64_t serial; /* samples given in any part (the key of `last`) */
    struct {
        uint64_t mapping, start, end;
        int answer; /* run_possible + 1; 0: empty */
    } runs[1u << PB_RUN_BITS];
    /* the last address located for the sample being added (a branch sample's ip ends its run
     * and starts its branch: located once) */
    struct {
        uint64_t sample; /* serial when made (0: none) */
        uint64_t addr;
        int ok;
        ek_profile_loc loc; /* the locator's answer (written there), also when it failed */
        size_t bin;
    } last;
};

int ek_profile_builder_new(ek_profile *p, ek_profile_locate_fn locate, void *ctx,
                           ek_profile_builder **out)
{
    if (!p || !locate || !out) return EK_ERR_ARG;
    ek_profile_builder *b = calloc(1, sizeof *b);
    if (!b) return EK_ERR_NOMEM;
    b->p = p;
    b->locate = locate;
    b->ctx = ctx;
    ek_isa_cfg_init(&b->isa, EK_ARCH_UNKNOWN, EK_PROFILE_A, 0);
    *out = b;
    return EK_OK;
}

void ek_profile_builder_free(ek_profile_builder *b)
{
    if (!b) return;
    free(b->st);
    free(b->pend);
    free(b);
}

void ek_profile_builder_get_stats(const ek_profile_builder *b, ek_profile_build_stats *out)
{
    if (!out) return;
    if (b)
        *out = b->stats;
    else
        memset(out, 0, sizeof *out);
}

void ek_profile_builder_set_code(ek_profile_builder *b, ek_profile_code_fn fn, void *ctx)
{
    if (!b) return;
    b->code = fn;
    b->code_ctx = ctx;
    memset(b->runs, 0, sizeof b->runs); /* (answers of the other code) */
}

void ek_profile_builder_use_maps(ek_profile_builder *b, ek_profile_maps *m,
                                 ek_profile_hint_fn hint, void *hint_ctx)
{
    if (!b) return;
    b->maps = m;
    b->fast = m ? prof_maps_fast(m) : NULL;
    b->hint = hint;
    b->hint_ctx = hint_ctx;
}

/* the locator's answer for addr (0, or non-zero: in no binary); loc is cleared first for a
 * locate function (the maps set every field of an answer) */
EK_HOT int locate_with(ek_profile_builder *b, const ek_sample *s, uint64_t addr,
                       ek_profile_loc *loc)
{
    if (b->maps) return prof_maps_locate(b->maps, b->fast, s, addr, b->hint, b->hint_ctx, loc);
    memset(loc, 0, sizeof *loc);
    return b->locate(b->ctx, s, addr, loc);
}

void ek_profile_builder_set_part(ek_profile_builder *b, ek_profile_build_part part)
{
    if (b) b->part = part;
}

void ek_profile_builder_add_stats(ek_profile_build_stats *to, const ek_profile_build_stats *from)
{
    to->samples += from->samples;
    to->branches += from->branches;
    to->ranges += from->ranges;
    to->unlocated += from->unlocated;
    to->cross_mapping += from->cross_mapping;
    to->impossible += from->impossible;
}

void ek_profile_builder_set_insn(ek_profile_builder *b, ek_profile_insn_fn fn, void *ctx)
{
    if (!b) return;
    b->insn = fn;
    b->insn_ctx = ctx;
}

static int stream_is(const pb_stream *x, const ek_sample *s)
{
    return x->queue == s->queue && x->cpu == s->cpu && x->trace_id == s->trace_id;
}

static pb_stream *stream_of(ek_profile_builder *b, const ek_sample *s)
{
    if (b->stlast < b->nst && stream_is(&b->st[b->stlast], s)) return &b->st[b->stlast];
    for (size_t i = 0; i < b->nst; i++)
        if (stream_is(&b->st[i], s)) {
            b->stlast = i;
            return &b->st[i];
        }
    if (b->nst == b->capst) {
        size_t cap = b->capst ? b->capst * 2 : 16;
        pb_stream *v = realloc(b->st, cap * sizeof *v);
        if (!v) return NULL;
        b->st = v;
        b->capst = cap;
    }
    b->stlast = b->nst;
    pb_stream *n = &b->st[b->nst++];
    memset(n, 0, sizeof *n);
    n->queue = s->queue;
    n->cpu = s->cpu;
    n->trace_id = s->trace_id;
    n->used = 1;
    return n;
}

/* addr located into *at: 1, or 0 when it is in no binary (*at zero). The locator's whole
 * answer is then b->last.loc. (Inlined: a sample locates two or three addresses, and the
 * calls' register saves cost as much.) */
EK_HOT int locate(ek_profile_builder *b, const ek_sample *s, uint64_t addr, pb_at *at, int *rc)
{
    *rc = EK_OK;
    at->vaddr = at->mapping = 0;
    at->bin = 0;
    if (!addr) return 0;
    if (b->last.sample != b->serial || b->last.addr != addr) {
        ek_profile_loc *loc = &b->last.loc;
        b->last.sample = 0; /* (until loc is addr's) */
        b->last.ok = !locate_with(b, s, addr, loc);
        if (b->last.ok) {
            size_t bin;
            unsigned k = (unsigned)((loc->mapping * 0x9e3779b97f4a7c15ull) >> 58) % PB_BIN_CACHE;
            if (b->bincache[k].used && b->bincache[k].mapping == loc->mapping) {
                bin = b->bincache[k].bin;
            } else {
                *rc = ek_profile_add_binary(b->p, &loc->id, &bin);
                if (*rc) return 0;
                b->bincache[k].used = 1;
                b->bincache[k].mapping = loc->mapping;
                b->bincache[k].bin = bin;
            }
            b->last.bin = bin;
        }
        b->last.sample = b->serial;
        b->last.addr = addr;
    }
    if (!b->last.ok) {
        b->stats.unlocated++;
        return 0;
    }
    at->vaddr = b->last.loc.vaddr;
    at->mapping = b->last.loc.mapping;
    at->bin = b->last.bin;
    return 1;
}

/* A taken branch from -> to (either may be unknown: 0). Counts for from's binary (to external
 * when elsewhere) and, when to is in another mapping, for to's binary (from external). */
static int add_branch(ek_profile_builder *b, const ek_sample *s, uint64_t from, uint64_t to,
                      pb_at *to_at, int *to_ok)
{
    pb_at fl, tl;
    int rc;
    int fok = locate(b, s, from, &fl, &rc);
    if (rc) return rc;
    int tok = locate(b, s, to, &tl, &rc);
    if (rc) return rc;
    int same = fok && tok && fl.mapping == tl.mapping && fl.bin == tl.bin;
    if (fok) {
        rc = ek_profile_add_branch(b->p, fl.bin, fl.vaddr, same ? tl.vaddr : EK_PROFILE_EXTERNAL,
                                   1);
        if (rc) return rc;
        b->stats.branches++;
    }
    if (tok && !same) {
        rc = ek_profile_add_branch(b->p, tl.bin, EK_PROFILE_EXTERNAL, tl.vaddr, 1);
        if (rc) return rc;
        b->stats.branches++;
    }
    if (to_at) *to_at = tl;
    if (to_ok) *to_ok = tok;
    return EK_OK;
}

/* Could [start, end] (binary addresses of loc's binary) have run straight? Not when an
 * unconditional branch lies before end (A64; unknown code: yes). */
static int run_check(ek_profile_builder *b, const ek_profile_loc *loc, uint64_t start,
                     uint64_t end);
static int run_possible(ek_profile_builder *b, const ek_profile_loc *loc, uint64_t start,
                        uint64_t end)
{
    if (!b->code) return 1;
    uint64_t h = (loc->mapping * 0x9e3779b97f4a7c15ull) ^ (start * 0xc2b2ae3d27d4eb4full) ^
                 ((end - start) * 0x165667b19e3779f9ull);
    size_t k = (size_t)((h ^ (h >> 29)) & ((1u << PB_RUN_BITS) - 1));
    if (b->runs[k].answer && b->runs[k].mapping == loc->mapping && b->runs[k].start == start &&
        b->runs[k].end == end)
        return b->runs[k].answer - 1;
    int r = run_check(b, loc, start, end);
    b->runs[k].mapping = loc->mapping;
    b->runs[k].start = start;
    b->runs[k].end = end;
    b->runs[k].answer = r + 1;
    return r;
}

static int run_check(ek_profile_builder *b, const ek_profile_loc *loc, uint64_t start,
                     uint64_t end)
{
    uint8_t buf[256];
    for (uint64_t a = start; a < end;) {
        uint64_t want = end - a < sizeof buf ? end - a : sizeof buf;
        size_t got = b->code(b->code_ctx, loc, a, buf, (size_t)want);
        if (got < 4) return 1;
        for (size_t k = 0; k + 4 <= got; k += 4) {
            uint32_t w = (uint32_t)buf[k] | (uint32_t)buf[k + 1] << 8 | (uint32_t)buf[k + 2] << 16 |
                         (uint32_t)buf[k + 3] << 24;
            ek_insn in;
            if (ek_isa_classify(w, EK_ISA_A64, a + k, &b->isa, &in) < 0) return 1;
            if ((in.type == EK_ITYPE_BR || in.type == EK_ITYPE_BR_INDIRECT) &&
                in.cond == EK_COND_AL)
                return 0;
        }
        a += got - got % 4;
    }
    return 1;
}

/* A run [begin, end] (sample addresses) as a range, when both are in one mapping. Returns 0,
 * 1 when the run cannot have run (an unconditional branch inside), or a negative status. */
static int add_run(ek_profile_builder *b, const ek_sample *s, int have_start, uint64_t start,
                   uint64_t mapping, size_t bin, uint64_t end)
{
    if (!have_start || !end) return EK_OK;
    pb_at el;
    int rc;
    if (!locate(b, s, end, &el, &rc)) return rc;
    if (el.mapping != mapping || el.bin != bin || el.vaddr < start) {
        b->stats.cross_mapping++;
        return EK_OK;
    }
    if (!run_possible(b, &b->last.loc, start, el.vaddr)) { /* (end's whole answer) */
        b->stats.impossible++;
        return 1;
    }
    rc = ek_profile_add_range(b->p, bin, start, el.vaddr, 1);
    if (!rc) b->stats.ranges++;
    return rc;
}

/* The branch a sample's instruction is (A64, from its bytes, or from the binary's code when
 * the sample carries none): 1 with *in, or 0. */
static int sample_branch(ek_profile_builder *b, const ek_sample *s, ek_insn *in)
{
    uint8_t code[4];
    const uint8_t *c = s->insn;
    if (s->insn_len != 4) {
        if (s->insn_len || !s->ip) return 0;
        if (b->insn) {
            if (b->insn(b->insn_ctx, s, s->ip, code, 4) != 4) return 0;
        } else {
            ek_profile_loc loc;
            if (!b->code || locate_with(b, s, s->ip, &loc) ||
                b->code(b->code_ctx, &loc, loc.vaddr, code, 4) != 4)
                return 0;
        }
        c = code;
    }
    uint32_t w = (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24;
    if (ek_isa_classify(w, EK_ISA_A64, s->ip, &b->isa, in) < 0) return 0;
    return in->type == EK_ITYPE_BR || in->type == EK_ITYPE_BR_INDIRECT;
}

static int add_pending(ek_profile_builder *b, const ek_sample *s, const ek_insn *in)
{
    pb_pending pd = {s->tid, s->ip, in->target, in->type == EK_ITYPE_BR, in->cond != EK_COND_AL};
    for (size_t i = 0; i < b->npend; i++)
        if (b->pend[i].tid == s->tid) {
            b->pend[i] = pd;
            return EK_OK;
        }
    if (b->npend == b->cappend) {
        size_t cap = b->cappend ? b->cappend * 2 : 8;
        pb_pending *v = realloc(b->pend, cap * sizeof *v);
        if (!v) return EK_ERR_NOMEM;
        b->pend = v;
        b->cappend = cap;
    }
    b->pend[b->npend++] = pd;
    return EK_OK;
}

/* s's thread resumes at addr: a pending branch of the thread on that side of the kernel
 * boundary was taken to addr when it is unconditional, or conditional with addr its target */
static int resolve_pending(ek_profile_builder *b, const ek_sample *s, uint64_t addr)
{
    for (size_t i = 0; i < b->npend; i++) {
        pb_pending *pd = &b->pend[i];
        if (pd->tid != s->tid || (pd->ip >> 63) != (addr >> 63)) continue;
        pb_pending p = *pd;
        *pd = b->pend[--b->npend];
        if (p.cond && (!p.direct || addr != p.target)) return EK_OK; /* not taken */
        return add_branch(b, s, p.ip, p.direct ? p.target : addr, NULL, NULL);
    }
    return EK_OK;
}

/* How a branches sample ends its run (add_branch_sample): *exc an interrupt or exception
 * (not SVC), *cut whether the instruction at ip may have been a branch whose outcome the
 * sample does not show; returns whether the sample is a branch ip -> to. */
static int sample_kind(const ek_sample *s, int *exc, int *cut)
{
    const uint32_t f = s->flags;
    *exc = (f & EK_SF_INTERRUPT) && (f & EK_SF_CALL) && !(f & EK_SF_SYSCALLRET);
    *cut = 0;
    if (f & EK_SF_ASYNC) {
        *cut = 1;
        return 0;
    }
    if (*exc) {
        *cut = s->resume != 0;
        return 0;
    }
    if (f & EK_SF_TRACE_END) {
        const int branch = (f & (EK_SF_CALL | EK_SF_RETURN)) != 0;
        *cut = !branch;
        return branch;
    }
    return 1;
}

/* A cut sample's instruction `in` (a branch) left pending: neither an exception's branch
 * decided by where it returns to, nor an unconditional direct branch. */
static inline int stays_pending(const ek_sample *s, int exc, const ek_insn *in)
{
    return !(exc && s->resume) && !(in->type == EK_ITYPE_BR && in->cond == EK_COND_AL);
}

/* A thread resumes where an exception returns to (never at an exception's vector). */
static inline int is_eret(uint32_t f)
{
    return (f & EK_SF_RETURN) && (f & (EK_SF_INTERRUPT | EK_SF_SYSCALLRET));
}

/* EK_PROFILE_BUILD_SHARED: the pending branches' part of a branches sample (what
 * add_branch_sample does with them, in the same order). */
static int shared_part(ek_profile_builder *b, const ek_sample *s)
{
    const uint32_t f = s->flags;
    if (f & EK_SF_TRACE_BEGIN) return b->npend && s->addr ? resolve_pending(b, s, s->addr) : EK_OK;
    int exc, cut, rc;
    sample_kind(s, &exc, &cut);
    ek_insn in;
    if (cut && sample_branch(b, s, &in) && stays_pending(s, exc, &in) &&
        (rc = add_pending(b, s, &in)))
        return rc;
    const uint64_t to = (f & EK_SF_TRACE_END) ? 0 : s->addr;
    if (b->npend && to && is_eret(f)) return resolve_pending(b, s, to);
    return EK_OK;
}

/* Returns 0; 1 (EK_PROFILE_BUILD_LOCAL) when the sample has a part for the shared builder; or
 * a negative status. */
static int add_branch_sample(ek_profile_builder *b, const ek_sample *s)
{
    pb_stream *st = stream_of(b, s);
    if (!st) return EK_ERR_NOMEM;
    uint32_t f = s->flags;
    const int local = b->part == EK_PROFILE_BUILD_LOCAL;
    int rc, shared = 0;
    if (f & EK_SF_TRACE_BEGIN) { /* "tr strt 0 => to": a run starts, no branch */
        pb_at tl;
        if (local)
            shared = s->addr != 0;
        else if (b->npend && s->addr && (rc = resolve_pending(b, s, s->addr)))
            return rc;
        st->valid = locate(b, s, s->addr, &tl, &rc);
        if (rc) return rc;
        st->start = tl.vaddr;
        st->mapping = tl.mapping;
        st->bin = tl.bin;
        return shared;
    }
    /* the run ends at this sample's instruction, unless it cannot have run: then the sample
     * is not this stream's next one, and the stream's run goes on */
    rc = add_run(b, s, st->valid, st->start, st->mapping, st->bin, s->ip);
    if (rc < 0) return rc;
    int other = rc == 1;
    if (!other) st->valid = 0;
    /* a branch? interrupts and synchronous exceptions other than SVC are not (the
     * instruction at ip did not branch), but the instruction at ip may have been a branch,
     * and so may that of a trace end. Where the exception returns to (resume) is the
     * instruction that ran next: the branch went there, or was not taken when that is the
     * next instruction. Without it, unconditional direct branches were taken to their target
     * and the others are decided where the thread resumes. */
    int exc, cut;
    const int branch = sample_kind(s, &exc, &cut);
    uint64_t to = (f & EK_SF_TRACE_END) ? 0 : s->addr;
    ek_insn in;
    if (cut && sample_branch(b, s, &in)) {
        if (exc && s->resume) {
            int taken = in.type == EK_ITYPE_BR_INDIRECT || in.cond == EK_COND_AL
                            ? 1
                            : s->resume == in.target;
            if (in.type == EK_ITYPE_BR && taken && s->resume != in.target)
                b->stats.impossible++; /* a direct branch that went elsewhere: not counted */
            else if (taken && (rc = add_branch(b, s, s->ip, s->resume, NULL, NULL)))
                return rc;
        } else if (in.type == EK_ITYPE_BR && in.cond == EK_COND_AL) {
            if ((rc = add_branch(b, s, s->ip, in.target, NULL, NULL))) return rc;
        } else if (local) {
            shared = 1;
        } else if ((rc = add_pending(b, s, &in))) {
            return rc;
        }
    }
    pb_at tl;
    int tok = 0;
    if (branch) {
        rc = add_branch(b, s, s->ip, to, &tl, &tok);
    } else {
        tok = locate(b, s, to, &tl, &rc);
    }
    if (rc) return rc;
    if (to && is_eret(f)) {
        if (local)
            shared = 1;
        else if (b->npend && (rc = resolve_pending(b, s, to)))
            return rc;
    }
    if (tok && !other) {
        st->valid = 1;
        st->start = tl.vaddr;
        st->mapping = tl.mapping;
        st->bin = tl.bin;
    }
    return shared;
}

static int add_stack_sample(ek_profile_builder *b, const ek_sample *s)
{
    int rc = EK_OK;
    /* oldest first: entries[n-1] is the oldest */
    for (uint32_t k = s->nbranches; k-- > 0 && !rc;) {
        const ek_branch *e = &s->branches[k];
        pb_at tl;
        int tok = 0;
        rc = add_branch(b, s, e->from, e->to, &tl, &tok);
        if (rc || k == 0 || !tok) continue;
        rc = add_run(b, s, 1, tl.vaddr, tl.mapping, tl.bin, s->branches[k - 1].from);
        /* a run that cannot have run (counted: impossible) adds no range; the newer entries
         * still count (it stopped the loop, and its 1 came back as the status) */
        if (rc == 1) rc = EK_OK;
    }
    return rc;
}

int ek_profile_builder_add(ek_profile_builder *b, const ek_sample *s)
{
    if (!b || !s) return EK_ERR_ARG;
    b->serial++;
    if (b->part == EK_PROFILE_BUILD_SHARED)
        return s->kind == EK_SAMPLE_BRANCHES ? shared_part(b, s) : EK_OK;
    b->stats.samples++;
    if (s->kind == EK_SAMPLE_BRANCHES) return add_branch_sample(b, s);
    if (s->nbranches && s->branches) return add_stack_sample(b, s);
    return EK_OK;
}
