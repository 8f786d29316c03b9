/* Instruction-flow decoder for ETMv4 / ETE: packets of one trace source + code -> elements.
 *
 * Shape: packets are translated into pending elements (atoms, addresses, contexts,
 * exceptions, time stamps, ...) kept in a double-ended queue. Speculation resolution (commit,
 * cancel, mispredict, discard; automatic commit beyond TRCIDR8.MAXSPEC) decides which pending
 * elements become output, oldest first. Committing an atom walks the code image from the
 * current address to the next waypoint (block cache first), which gives an instruction range
 * and tells where execution continues.
 *
 * The element sequence and its packet indices reproduce OpenCSD 1.8.0's ETMv4/ETE decoder
 * (TrcPktDecodeEtmV4I) so that listings compare equal; the comments name the places where that
 * decoder's behaviour is unusual but reproduced on purpose.
 */
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "core/hot.h"
#include "flow/flow_int.h"

enum fl_state {
    FS_NO_SYNC = 0, /* report NO_SYNC, then wait for A-Sync */
    FS_WAIT_SYNC,
    FS_WAIT_TINFO,
    FS_DECODE,
    FS_RESOLVE,
};

enum { WP_NOT_FOUND = 0, WP_FOUND, WP_NACC };

/* OpenCSD's architecture versions (the classifier's and the decoder's gating). */
#define OCSD_ARCH_V7   0x0700u
#define OCSD_ARCH_V8   0x0800u
#define OCSD_ARCH_V8R3 0x0803u
#define OCSD_ARCH_AA64 0x0864u

#define M_CLASS_TAIL_ADDR 0xFFFFFFFEull
#define CHECKPOINT_BYTES  1024u /* block-cache checkpoints inside long straight-line runs */
#define MAX_CHECKPOINTS   64

typedef struct fl_range {
    uint64_t st, en;
    uint32_t n;
} fl_range;

typedef struct fl_rstack {
    uint64_t addr[16];
    uint8_t isa[16];
    int head;
    int n;
    uint8_t active, pop_pending, tinfo_wait;
} fl_rstack;

struct ek_flow {
    /* configuration */
    ek_etm4_config ecfg;
    ek_isa_cfg icfg;
    ek_flow_mem mem;
    const ek_diag *diag;
    const char *file;
    uint32_t flags;
    uint32_t max_pending;
    uint32_t max_spec;
    unsigned ocsd_arch;
    uint8_t trace_id;
    uint8_t m_profile;
    uint8_t is_ete;
    uint8_t ts_with_cc;
    uint8_t ete_ts_marker;
    uint8_t comm_trans_p0;
    uint8_t v7m_eret_p0;
    uint8_t v8m_func_ret;

    /* decoder state */
    int state;
    uint32_t unsync;
    uint64_t index; /* index of the packet being decoded */
    uint64_t timestamp;
    uint32_t context_id, vmid;
    uint8_t is_secure, is_64bit, last_is;
    uint32_t cc_threshold;
    int64_t spec;
    uint8_t need_ctxt, need_addr, elem_pending_addr, prev_overflow, ete_first_ts_marker;
    uint8_t noted_no_ctxt;    /* flow.no-context reported since the last sync */
    uint64_t note_no_ctxt_at; /* 1 + index of the packet to report it with, or 0 */
    uint8_t next_range_valid;
    uint64_t next_range_addr;
    struct {
        int64_t commit, cancel;
        uint8_t mispredict, discard;
    } res;
    fl_instr in;
    fl_rstack rs;
    fl_deque q;
    ek_pe_context octx; /* context carried by output elements (sticky CTXTID / VMID) */

    /* output queue */
    ek_elem *out;
    size_t out_n, out_cap, out_take;
    size_t batch_mark; /* start of the elements of the resolution step under way */

    /* memory */
    ek_mem_span span;
    uint8_t span_valid;
    uint8_t span_space;
    uint64_t mem_gen;
    fl_bcache bc;

    ek_flow_stats st;
};

/* ---- small helpers ------------------------------------------------------------------- */

static inline int is_elem_for_res(const ek_flow *f)
{
    return f->res.commit || f->res.cancel || f->res.mispredict || f->res.discard;
}

static inline void clear_elem_res(ek_flow *f)
{
    f->res.commit = f->res.cancel = 0;
    f->res.mispredict = f->res.discard = 0;
}

static inline uint8_t calc_isa(int sf, int is)
{
    if (sf) return EK_ISA_A64;
    return is ? EK_ISA_T32 : EK_ISA_A32;
}

#define NO_INDEX UINT64_MAX /* an error that no packet index belongs to */

static void diag(ek_flow *f, ek_severity sev, const char *kind, int status, uint64_t index,
                 const char *msg)
{
    if (sev >= EK_SEV_WARN) f->st.errors++;
    ek_diag_emit(f->diag, sev, kind, status, f->file, -1, index == NO_INDEX ? -1 : (int64_t)index,
                 f->trace_id, "%s", msg);
}

/* Memory space of the current context (OpenCSD's getCurrMemSpace). */
static uint8_t cur_space(const ek_flow *f)
{
    static const uint8_t s_space[4] = {EK_MS_EL1S, EK_MS_EL1S, EK_MS_EL2S, EK_MS_EL3};
    static const uint8_t n_space[4] = {EK_MS_EL1N, EK_MS_EL1N, EK_MS_EL2, EK_MS_EL3};
    static const uint8_t r_space[4] = {EK_MS_EL1R, EK_MS_EL1R, EK_MS_EL2R, EK_MS_ROOT};
    if (!f->octx.el_valid) return f->is_secure ? EK_MS_S : EK_MS_N;
    int el = f->octx.el & 3;
    switch (f->octx.security) {
    case EK_SEC_ROOT: return EK_MS_ROOT;
    case EK_SEC_REALM: return r_space[el];
    case EK_SEC_NONSECURE: return n_space[el];
    case EK_SEC_SECURE: return s_space[el];
    default: return EK_MS_NONE;
    }
}

/* ---- pending-element deque ----------------------------------------------------------- */

static inline fl_pend *dq_at(fl_deque *d, uint32_t i) /* i = 0: oldest */
{
    return &d->buf[(d->start + i) & (d->cap - 1)];
}

static inline fl_pend *dq_oldest(fl_deque *d)
{
    return d->n ? dq_at(d, 0) : NULL;
}

static inline fl_pend *dq_newest(fl_deque *d)
{
    return d->n ? dq_at(d, d->n - 1) : NULL;
}

static int dq_grow(ek_flow *f)
{
    fl_deque *d = &f->q;
    if (d->n >= f->max_pending) return EK_ERR_LIMIT;
    uint32_t ncap = d->cap ? d->cap * 2 : 64;
    fl_pend *nb = malloc((size_t)ncap * sizeof(fl_pend));
    if (!nb) return EK_ERR_NOMEM;
    for (uint32_t i = 0; i < d->n; i++)
        nb[i] = *dq_at(d, i);
    free(d->buf);
    d->buf = nb;
    d->cap = ncap;
    d->start = 0;
    return EK_OK;
}

/* New element at the newest end; NULL when the limit is reached or memory runs out. */
EK_HOT fl_pend *dq_push_new(ek_flow *f)
{
    fl_deque *d = &f->q;
    if (d->n == d->cap && dq_grow(f)) return NULL;
    fl_pend *p = dq_at(d, d->n);
    d->n++;
    return p;
}

static inline void dq_pop_old(fl_deque *d)
{
    if (d->n) {
        d->start = (d->start + 1) & (d->cap - 1);
        d->n--;
    }
}

static inline void dq_pop_new(fl_deque *d)
{
    if (d->n) d->n--;
}

static void dq_erase(fl_deque *d, uint32_t i)
{
    for (uint32_t k = i; k + 1 < d->n; k++)
        *dq_at(d, k) = *dq_at(d, k + 1);
    d->n--;
}

/* ---- output -------------------------------------------------------------------------- */

/* Room for one more output element (not initialised), or NULL. */
static inline ek_elem *out_slot(ek_flow *f)
{
    if (f->out_n == f->out_cap) {
        size_t ncap = f->out_cap ? f->out_cap * 2 : 256;
        ek_elem *no = realloc(f->out, ncap * sizeof(ek_elem));
        if (!no) return NULL;
        f->out = no;
        f->out_cap = ncap;
    }
    return &f->out[f->out_n++];
}

static ek_elem *out_new(ek_flow *f, uint64_t index, int type)
{
    ek_elem *e = out_slot(f);
    if (!e) return NULL;
    memset(e, 0, sizeof *e);
    e->index = index;
    e->trace_id = f->trace_id;
    e->type = (uint8_t)type;
    f->st.elems[type]++;
    return e;
}

/* Drop elements queued since 'mark' (a decoder reset loses what it had not yet sent). */
static void out_truncate(ek_flow *f, size_t mark)
{
    if (mark < f->out_take) mark = f->out_take; /* (what was taken is gone) */
    while (f->out_n > mark) {
        ek_elem *e = &f->out[--f->out_n];
        f->st.elems[e->type]--;
        if (e->type == EK_ELEM_INSTR_RANGE || e->type == EK_ELEM_I_RANGE_NOPATH)
            f->st.instructions -= e->num_instr;
    }
}

static inline int out_range(ek_flow *f, uint64_t index, const fl_range *r, int executed,
                            const fl_instr *ins)
{
    ek_elem *e = out_slot(f);
    if (!e) return EK_ERR_NOMEM;
    /* (one element per atom: built whole, not cleared and then filled) */
    *e = (ek_elem){
        .index = index,
        .st_addr = r->st,
        .en_addr = r->en,
        .num_instr = r->n,
        .type = EK_ELEM_INSTR_RANGE,
        .trace_id = f->trace_id,
        .isa = ins->isa,
        .last_i_type = ins->type,
        .last_i_sub = ins->sub,
        .last_i_size = ins->size,
        .flags =
            (uint16_t)((executed ? EK_ELEMF_LAST_EXEC : 0) | (ins->cond ? EK_ELEMF_LAST_COND : 0)),
    };
    f->st.elems[EK_ELEM_INSTR_RANGE]++;
    f->st.instructions += r->n;
    return EK_OK;
}

/* Range from the decoder's own instruction state; an executed last instruction moves the
 * state to the instruction set it leads to. */
static int out_range_cur(ek_flow *f, uint64_t index, const fl_range *r, int executed)
{
    int err = out_range(f, index, r, executed, &f->in);
    if (executed) f->in.isa = f->in.next_isa;
    return err;
}

static int out_nacc(ek_flow *f, uint64_t index, uint64_t addr)
{
    ek_elem *e = out_new(f, index, EK_ELEM_ADDR_NACC);
    if (!e) return EK_ERR_NOMEM;
    e->st_addr = addr;
    e->u.mem_space = cur_space(f);
    return EK_OK;
}

/* ---- return stack -------------------------------------------------------------------- */

static void rs_push(fl_rstack *rs, uint64_t addr, uint8_t isa)
{
    if (rs->active && !rs->tinfo_wait) {
        rs->head = (rs->head + 1) & 15;
        rs->addr[rs->head] = addr;
        rs->isa[rs->head] = isa;
        if (++rs->n > 16) rs->n = 16;
        rs->pop_pending = 0;
    }
}

static uint64_t rs_pop(fl_rstack *rs, uint8_t *isa)
{
    uint64_t addr = ~0ull;
    if (rs->active) {
        if (rs->n > 0) {
            addr = rs->addr[rs->head];
            *isa = rs->isa[rs->head];
            rs->head = (rs->head - 1) & 15;
        }
        rs->n--; /* goes negative on underflow: reported by the caller */
        rs->pop_pending = 0;
    }
    return addr;
}

static void rs_flush(fl_rstack *rs)
{
    rs->n = 0;
    rs->pop_pending = 0;
}

/* ---- decoder reset and errors ------------------------------------------------------- */

static void reset_decoder(ek_flow *f)
{
    f->state = FS_NO_SYNC;
    f->timestamp = 0;
    f->context_id = 0;
    f->vmid = 0;
    f->is_secure = 1;
    f->is_64bit = 0;
    f->cc_threshold = 0;
    f->spec = 0;
    f->need_ctxt = 1;
    f->need_addr = 1;
    f->elem_pending_addr = 0;
    f->prev_overflow = 0;
    f->q.n = 0;
    f->q.start = 0;
    f->last_is = 0;
    clear_elem_res(f);
    f->ete_first_ts_marker = 0;
    f->next_range_valid = 0;
}

/* Trace error: report, forget the decode state, resynchronise. `kind` is one of the
 * flow.* kinds of etmkit/flow.h; reason texts are OpenCSD's (so that ocsd-format listings can
 * show its log lines). */
static int trace_error(ek_flow *f, int status, const char *kind, uint64_t index, const char *reason,
                       uint32_t unsync)
{
    /* The elements of the step that failed are dropped (OpenCSD resets its output stack
     * before sending them) -- before the diagnostic goes out, so that a sink that drains the
     * queue (to print elements and errors in the order the reference decoder does) never
     * sees them. */
    out_truncate(f, f->batch_mark);
    diag(f, EK_SEV_WARN, kind, status, index, reason);
    if (f->state != FS_NO_SYNC && f->state != FS_WAIT_SYNC) f->st.resyncs++;
    reset_decoder(f);
    f->state = FS_NO_SYNC;
    f->unsync = unsync;
    return status;
}

static int bad_packet(ek_flow *f, uint64_t index, const char *reason)
{
    return trace_error(f, EK_ERR_BAD_PACKET, "flow.bad-packet", index, reason,
                       EK_UNSYNC_BAD_PACKET);
}

static int seq_error(ek_flow *f, const char *kind, uint64_t index, const char *reason)
{
    return trace_error(f, EK_ERR_FORMAT, kind, index, reason, EK_UNSYNC_BAD_PACKET);
}

static int image_error(ek_flow *f, uint64_t index, const char *reason)
{
    return trace_error(f, EK_ERR_NO_MEMORY_IMAGE, "flow.bad-image", index, reason,
                       EK_UNSYNC_BAD_IMAGE);
}

/* ---- memory and code walking -------------------------------------------------------- */

/* Make f->span the span holding addr (in the current space); 0 if not mapped. */
static int span_lookup(ek_flow *f, uint64_t addr, uint8_t space)
{
    if (f->span_valid && f->span_space == space && addr >= f->span.start &&
        addr - f->span.start < f->span.size)
        return 1;
    f->span_valid = 0;
    if (!f->mem.find) return 0;
    ek_mem_span s;
    if (!f->mem.find(f->mem.ctx, addr, space, f->trace_id, &s) || !s.data || s.size == 0 ||
        addr < s.start || addr - s.start >= s.size)
        return 0;
    f->span = s;
    f->span_space = space;
    f->span_valid = 1;
    return 1;
}

/* The 32-bit word at addr when 4 bytes are readable there in one span (OpenCSD reads 4 bytes
 * for every instruction, also 16-bit T32 ones, and treats a short read as inaccessible). */
static int read4(ek_flow *f, uint64_t addr, uint8_t space, uint32_t *word)
{
    if (!span_lookup(f, addr, space)) return 0;
    uint64_t off = addr - f->span.start;
    if (f->span.size - off < 4) return 0;
    const uint8_t *p = f->span.data + off;
    *word = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    return 1;
}

static inline void copy_last(fl_instr *in, const fl_instr *from)
{
    in->type = from->type;
    in->sub = from->sub;
    in->size = from->size;
    in->cond = from->cond;
    in->link = from->link;
    in->target = from->target;
    in->next_isa = from->next_isa;
}

static inline void set_last(fl_instr *in, const ek_insn *x)
{
    in->type = x->type;
    in->sub = x->subtype;
    in->size = x->size;
    in->cond = (x->flags & EK_IF_COND) ? 1 : 0;
    in->link = (x->flags & EK_IF_LINK) ? 1 : 0;
    in->target = x->target;
    in->next_isa = (x->type == EK_ITYPE_BR) ? x->next_isa : in->isa;
}

/* Decode the single instruction at in->addr (4 readable bytes required) into in's "last"
 * fields, advancing the IT state; returns 0 when not readable. Does not move in->addr. */
static int decode_one(ek_flow *f, fl_instr *in, uint8_t space)
{
    uint32_t w;
    if (!read4(f, in->addr, space, &w)) return 0;
    ek_insn x;
    ek_isa_classify(w, (ek_isa)in->isa, in->addr, &f->icfg, &x);
    if (in->isa == EK_ISA_T32)
        ek_isa_it_step(&in->it, &x, &f->icfg);
    else
        in->it.itstate = in->it.left = 0;
    set_last(in, &x);
    return 1;
}

/* Instruction-by-instruction walk from in->addr to the next waypoint (no cache). */
static int walk_slow(ek_flow *f, fl_range *r, uint8_t space)
{
    fl_instr *in = &f->in;
    for (;;) {
        if (!decode_one(f, in, space)) return WP_NACC;
        in->addr += in->size;
        r->n++;
        if (in->type != EK_ITYPE_OTHER) return WP_FOUND;
    }
}

static void block_store(fl_block *b, uint64_t end, uint32_t count, int found, const fl_instr *in)
{
    b->len = (uint32_t)(end - b->addr);
    b->count = count;
    b->flags = (uint8_t)((found ? FL_BF_FOUND : 0) | (in->cond ? FL_BF_COND : 0) |
                         (in->link ? FL_BF_LINK : 0));
    b->type = in->type;
    b->sub = in->sub;
    b->size = in->size;
    b->next_isa = in->next_isa;
    b->target = in->target;
    b->it_state = in->it.itstate;
    b->it_left = in->it.left;
}

static void block_apply(fl_instr *in, const fl_block *b)
{
    in->addr = b->addr + b->len;
    if (b->count) {
        in->type = b->type;
        in->sub = b->sub;
        in->size = b->size;
        in->cond = (b->flags & FL_BF_COND) ? 1 : 0;
        in->link = (b->flags & FL_BF_LINK) ? 1 : 0;
        in->next_isa = b->next_isa;
        in->target = b->target;
        in->it.itstate = b->it_state;
        in->it.left = b->it_left;
    }
}

/* Walk from the current address to the next waypoint (OpenCSD's traceInstrToWP).
 * On return in->addr is the address after the last decoded instruction (or the inaccessible
 * one) and in's "last" fields describe the last decoded instruction. */
static int walk_uncached(ek_flow *f, fl_range *r, uint8_t space, int use_cache);

EK_HOT int walk_to_wp(ek_flow *f, fl_range *r)
{
    fl_instr *in = &f->in;
    uint8_t space = cur_space(f);
    r->st = r->en = in->addr;
    r->n = 0;
    int use_cache = f->bc.tab != NULL && in->it.left == 0;

    if (use_cache) {
        const fl_block *b = fl_bcache_get(&f->bc, in->addr, in->isa, space);
        if (b) {
            f->st.blocks_cached++;
            r->n = b->count;
            block_apply(in, b);
            r->en = in->addr;
            return (b->flags & FL_BF_FOUND) ? WP_FOUND : WP_NACC;
        }
    }
    return walk_uncached(f, r, space, use_cache);
}

/* walk_to_wp without a cached block (the code is decoded; the walk is cached for next time) */
static int walk_uncached(ek_flow *f, fl_range *r, uint8_t space, int use_cache)
{
    fl_instr *in = &f->in;
    f->st.blocks_walked++;
    if (!f->bc.tab) {
        int res = walk_slow(f, r, space);
        r->en = in->addr;
        return res;
    }

    /* Scan span by span, in chunks that end at CHECKPOINT_BYTES boundaries, where a cached
     * walk may take over; remember the boundaries crossed so that later walks starting
     * inside this run finish quickly too. */
    uint64_t start = in->addr;
    uint8_t isa = in->isa;
    ek_it_state start_it = in->it;
    uint64_t a = in->addr;
    uint64_t count = 0;
    int res = WP_NOT_FOUND;
    uint64_t cp_addr[MAX_CHECKPOINTS];
    uint64_t cp_count[MAX_CHECKPOINTS];
    unsigned ncp = 0, cp_next = 0;
    ek_it_state *it = isa == EK_ISA_T32 ? &in->it : NULL;
    if (!it) in->it.itstate = in->it.left = 0;
    const fl_block *joined = NULL;

    while (res == WP_NOT_FOUND) {
        if (!span_lookup(f, a, space) || f->span.size - (a - f->span.start) < 4) {
            res = WP_NACC;
            break;
        }
        uint64_t avail = f->span.size - (a - f->span.start);
        uint64_t boundary = (a | (CHECKPOINT_BYTES - 1)) + 1;
        uint64_t len = avail;
        if (boundary > a && boundary - a + 3 < len) len = boundary - a + 3;
        ek_isa_scan sc;
        int rc = ek_isa_next_waypoint(f->span.data + (a - f->span.start), (size_t)len, (ek_isa)isa,
                                      a, &f->icfg, it, &sc);
        if (rc < 0) {
            res = WP_NACC; /* unknown ISA: nothing decodable */
            break;
        }
        if (rc == 1) {
            count += sc.count;
            a += sc.offset + sc.insn.size;
            set_last(in, &sc.insn);
            res = WP_FOUND;
            break;
        }
        count += sc.count;
        a += sc.offset;
        if (a == boundary && (!it || in->it.left == 0)) {
            const fl_block *b = fl_bcache_get(&f->bc, a, isa, space);
            if (b) {
                count += b->count;
                joined = b;
                res = (b->flags & FL_BF_FOUND) ? WP_FOUND : WP_NACC;
                break;
            }
            /* ring of the last MAX_CHECKPOINTS boundaries */
            cp_addr[cp_next] = a;
            cp_count[cp_next] = count;
            cp_next = (cp_next + 1) % MAX_CHECKPOINTS;
            if (ncp < MAX_CHECKPOINTS) ncp++;
        }
    }

    if (joined) {
        block_apply(in, joined);
    } else {
        in->addr = a;
        if (res == WP_NACC && count > 0) {
            /* describe the last instruction decoded before the inaccessible code */
            fl_instr tmp = *in;
            if (isa != EK_ISA_T32) {
                tmp.addr = a - 4;
                decode_one(f, &tmp, space);
            } else {
                /* variable-size code: replay the run to find its last instruction */
                tmp.addr = start;
                tmp.it = start_it;
                uint64_t k = 0;
                while (k < count && decode_one(f, &tmp, space)) {
                    tmp.addr += tmp.size;
                    k++;
                }
            }
            copy_last(in, &tmp);
        }
    }
    r->n = (uint32_t)count;
    r->en = in->addr;

    /* remember the walk, and the checkpoints inside it */
    if (count <= UINT32_MAX && in->addr - start <= UINT32_MAX) {
        if (use_cache)
            block_store(fl_bcache_put(&f->bc, start, isa, space), in->addr, (uint32_t)count,
                        res == WP_FOUND, in);
        for (unsigned i = 0; i < ncp; i++) {
            unsigned k = (cp_next + MAX_CHECKPOINTS - 1 - i) % MAX_CHECKPOINTS;
            block_store(fl_bcache_put(&f->bc, cp_addr[k], isa, space), in->addr,
                        (uint32_t)(count - cp_count[k]), res == WP_FOUND, in);
        }
    }
    return res;
}

/* Walk until the instruction after the last decoded one is at `target` (an exception's
 * preferred return address), ignoring waypoints; stops at inaccessible code. */
static int walk_to_addr(ek_flow *f, fl_range *r, uint64_t target)
{
    fl_instr *in = &f->in;
    uint8_t space = cur_space(f);
    r->st = r->en = in->addr;
    r->n = 0;
    int res = WP_NOT_FOUND;
    if (in->isa != EK_ISA_T32) {
        /* fixed 4-byte instructions: hop over whole spans */
        in->it.itstate = in->it.left = 0;
        uint64_t a = in->addr;
        uint64_t count = 0;
        for (;;) {
            if (!span_lookup(f, a, space) || f->span.size - (a - f->span.start) < 4) {
                res = WP_NACC;
                break;
            }
            uint64_t last = f->span.start + f->span.size - 4; /* last readable start */
            uint64_t steps = (last - a) / 4 + 1;              /* instructions here */
            if (target > a && ((target - a) & 3) == 0 && (target - a) / 4 <= steps) {
                count += (target - a) / 4;
                a = target;
                res = WP_FOUND;
                break;
            }
            count += steps;
            a += steps * 4;
        }
        if (count > 0) {
            fl_instr tmp = *in;
            tmp.addr = a - 4;
            decode_one(f, &tmp, space);
            copy_last(in, &tmp);
        }
        in->addr = a;
        r->n = (uint32_t)count;
    } else {
        for (;;) {
            if (!decode_one(f, in, space)) {
                res = WP_NACC;
                break;
            }
            in->addr += in->size;
            r->n++;
            if (in->addr == target) {
                res = WP_FOUND;
                break;
            }
        }
    }
    r->en = in->addr;
    return res;
}

/* ---- element processing -------------------------------------------------------------- */

static int update_context(ek_flow *f, const fl_pend *p, uint64_t index)
{
    const fl_ctxt *c = &p->u.ctxt;
    ek_elem *e = out_new(f, index, EK_ELEM_PE_CONTEXT);
    if (!e) return EK_ERR_NOMEM;
    f->is_64bit = c->sf ? 1 : 0;
    f->octx.bits64 = f->is_64bit;
    f->is_secure = c->ns ? 0 : 1;
    if (c->nse)
        f->octx.security = c->ns ? EK_SEC_REALM : EK_SEC_ROOT;
    else
        f->octx.security = c->ns ? EK_SEC_NONSECURE : EK_SEC_SECURE;
    f->octx.el = (int8_t)(c->el & 3);
    f->octx.el_valid = 1;
    if (c->updated_c) {
        f->octx.ctxt_id_valid = 1;
        f->octx.context_id = f->context_id = c->cid;
    }
    if (c->updated_v) {
        f->octx.vmid_valid = 1;
        f->octx.vmid = f->vmid = c->vmid;
    }
    f->in.isa = calc_isa(f->is_64bit, c->is);
    e->isa = f->in.isa;
    e->context = f->octx;
    f->need_ctxt = 0;
    return EK_OK;
}

static int return_stack_pop(ek_flow *f)
{
    if (!f->rs.pop_pending) return EK_OK;
    uint8_t isa = f->in.isa;
    uint64_t addr = rs_pop(&f->rs, &isa);
    if (f->rs.n < 0)
        return seq_error(f, "flow.return-stack", NO_INDEX, "Trace Return Stack Overflow.");
    f->in.addr = addr;
    f->in.isa = isa;
    f->need_addr = 0;
    return EK_OK;
}

static int process_atom(ek_flow *f, int taken, uint64_t index)
{
    fl_range r;
    int eret = 0;
    int err;
    int res = walk_to_wp(f, &r);
    fl_instr *in = &f->in;

    if (res == WP_FOUND) {
        uint64_t next = in->addr;
        if (in->type == EK_ITYPE_BR) {
            if (taken) {
                in->addr = in->target;
                if (in->link) rs_push(&f->rs, next, in->isa);
                in->it.itstate = in->it.left = 0;
            } else if (f->flags & (EK_FLOW_CHK_N_UNCOND_DIR_BR | EK_FLOW_CHK_STRICT_N_UNCOND)) {
                int skip = in->isa == EK_ISA_T32 && (f->flags & EK_FLOW_CHK_NO_THUMB);
                if (!in->cond && !skip &&
                    ((in->target != next && (f->flags & EK_FLOW_CHK_N_UNCOND_DIR_BR)) ||
                     (f->flags & EK_FLOW_CHK_STRICT_N_UNCOND)))
                    return image_error(f, index,
                                       "Bad program image - N Atom on unconditional direct BR.\n");
            }
        } else if (in->type == EK_ITYPE_BR_INDIRECT) {
            if (taken) {
                f->need_addr = 1;
                if (in->link) rs_push(&f->rs, next, in->isa);
                in->it.itstate = in->it.left = 0;
                if (f->rs.active) f->rs.pop_pending = 1;
                if (f->is_ete && in->sub == EK_ISUB_V8_ERET) eret = 1;
            } else if (f->flags & EK_FLOW_CHK_STRICT_N_UNCOND) {
                int skip = in->isa == EK_ISA_T32 && (f->flags & EK_FLOW_CHK_NO_THUMB);
                if (!in->cond && !skip)
                    return image_error(
                        f, index, "Bad program image - N Atom on unconditional indirect BR.\n");
            }
        }
        if ((err = out_range_cur(f, index, &r, taken))) return err;
        if (f->flags & EK_FLOW_CHK_RANGE_CONTINUE) {
            if (f->next_range_valid && f->next_range_addr != r.st)
                return image_error(
                    f, index, "Discontinuous ranges - Inconsistent program image for decode\n");
            if (!taken) {
                f->next_range_valid = 1;
                f->next_range_addr = next;
            } else {
                f->next_range_valid = 0;
            }
        }
        if (eret && !out_new(f, index, EK_ELEM_EXCEPTION_RET)) return EK_ERR_NOMEM;
    } else {
        /* code not accessible: what ran before it, then NACC; wait for an address */
        f->need_addr = 1;
        f->next_range_valid = 0;
        if (r.st != r.en && (err = out_range_cur(f, index, &r, 1))) return err;
        if (res == WP_NACC && (err = out_nacc(f, index, in->addr))) return err;
    }
    return EK_OK;
}

/* Oldest pending element is an exception: exception [+ context] + address. */
static int process_exception(ek_flow *f)
{
    fl_pend exc = *dq_oldest(&f->q);
    fl_pend ctx;
    int have_ctx = 0;
    uint64_t ret_addr = 0;
    int branch_target = exc.u.exc.prev_same;
    int err;
    dq_pop_old(&f->q);

    fl_pend *p = dq_oldest(&f->q);
    if (p && p->kind == FL_CTXT) {
        ctx = *p;
        have_ctx = 1;
        dq_pop_old(&f->q);
        p = dq_oldest(&f->q);
    }
    if (!p || p->kind != FL_ADDR)
        return seq_error(f, "flow.bad-sequence", f->index, "Address missing in exception packet.");
    /* the address stays queued: the caller removes it */
    ret_addr = p->u.addr.val;
    if (branch_target) {
        /* the return address was also the target of the previous branch: execution is
         * already there, nothing ran in between */
        int b64 = f->in.isa == EK_ISA_A64;
        if (have_ctx) b64 = ctx.u.ctxt.sf;
        f->in.addr = ret_addr;
        f->in.isa = p->u.addr.is == 0 ? (b64 ? EK_ISA_A64 : EK_ISA_A32) : EK_ISA_T32;
        f->need_addr = 0;
    }
    uint64_t index = exc.index;
    if (have_ctx && (err = update_context(f, &ctx, index))) return err;

    int m_tail = f->m_profile && ret_addr == M_CLASS_TAIL_ADDR;
    int res = WP_NOT_FOUND;
    if (f->in.addr < ret_addr && !m_tail) {
        fl_range r;
        res = walk_to_addr(f, &r, ret_addr);
        if (res == WP_FOUND) {
            if ((err = out_range_cur(f, index, &r, 1))) return err;
        } else {
            f->need_addr = 1;
            if (r.st != r.en && (err = out_range_cur(f, index, &r, 1))) return err;
        }
    }
    if (res == WP_NACC && (err = out_nacc(f, index, f->in.addr))) return err;

    ek_elem *e = out_new(f, index, EK_ELEM_EXCEPTION);
    if (!e) return EK_ERR_NOMEM;
    e->en_addr = ret_addr;
    e->flags = m_tail ? EK_ELEMF_EXCEP_M_TAIL : EK_ELEMF_EXCEP_RET_ADDR;
    if (branch_target) e->flags |= EK_ELEMF_EXCEP_BR_TGT;
    e->u.exception_number = exc.u.exc.num;
    f->in.it.itstate = f->in.it.left = 0;
    return EK_OK;
}

/* Oldest pending element is a Q element: count instructions, path unknown. */
static int process_q(ek_flow *f)
{
    fl_pend q = *dq_oldest(&f->q);
    uint64_t qaddr;
    uint8_t qis;
    dq_pop_old(&f->q);

    if (!q.u.q.has_addr) {
        fl_pend ctx;
        int have_ctx = 0;
        fl_pend *p = dq_oldest(&f->q);
        if (p && p->kind == FL_CTXT) {
            ctx = *p;
            have_ctx = 1;
            dq_pop_old(&f->q);
            p = dq_oldest(&f->q);
        }
        if (!p || p->kind != FL_ADDR) {
            /* OpenCSD stops decoding altogether here; we resynchronise instead */
            return seq_error(f, "flow.bad-sequence", q.index, "Address missing in Q packet.");
        }
        qaddr = p->u.addr.val;
        qis = p->u.addr.is;
        dq_pop_old(&f->q);
        if (have_ctx) {
            /* The context goes back for later processing -- OpenCSD re-queues it at the
             * newest end with the instruction-set bit set to 1; so do we. */
            fl_pend *n = dq_push_new(f);
            if (!n) return EK_ERR_NOMEM;
            *n = ctx;
            n->u.ctxt.is = 1;
        }
    } else {
        qaddr = q.u.q.addr;
        qis = q.u.q.is;
    }

    uint32_t count = q.u.q.count;
    fl_instr *in = &f->in;
    uint8_t space = cur_space(f);
    fl_range r = {in->addr, in->addr, 0};
    int is_branch = 0;
    for (uint32_t i = 0; i < count; i++) {
        if (!decode_one(f, in, space)) break;
        in->addr += in->size;
        r.n++;
        is_branch = in->type == EK_ITYPE_BR || in->type == EK_ITYPE_BR_INDIRECT;
        if (is_branch) break;
    }
    int err;
    if (count && r.n == count && (in->addr == qaddr || is_branch)) {
        r.en = in->addr;
        if ((err = out_range_cur(f, q.index, &r, 1))) return err;
    } else {
        ek_elem *e = out_new(f, q.index, EK_ELEM_I_RANGE_NOPATH);
        if (!e) return EK_ERR_NOMEM;
        e->st_addr = r.st;
        e->en_addr = qaddr;
        e->num_instr = count;
        e->isa = calc_isa(f->is_64bit, qis);
        f->st.instructions += count;
    }
    in->addr = qaddr;
    in->isa = calc_isa(f->is_64bit, qis);
    f->need_addr = 0;
    return EK_OK;
}

/* Oldest pending element is an ETE source address: the instruction there was executed as a
 * taken branch (E atom); what ran up to it is implied. */
static int process_src_addr(ek_flow *f)
{
    fl_pend *p = dq_oldest(&f->q);
    uint64_t index = p->index;
    uint64_t src = p->u.addr.val;
    fl_instr *in = &f->in;
    uint8_t space = cur_space(f);
    uint64_t cur = in->addr;
    int split_n = (f->flags & EK_FLOW_SRC_ADDR_N_ATOMS) != 0;
    int err;

    uint32_t w;
    if (!read4(f, src, space, &w)) return out_nacc(f, index, src);
    in->addr = src;
    decode_one(f, in, space);
    in->addr += in->size;

    fl_range r;
    r.n = 1;
    if (f->need_addr || cur > src) {
        f->need_addr = 0;
        r.st = src;
    } else {
        r.st = cur;
    }
    r.en = in->addr;

    if (r.en - r.st > in->size) {
        if (in->isa != EK_ISA_T32 && !split_n) {
            r.n = (uint32_t)((r.en - r.st) / 4);
        } else {
            fl_instr t;
            memset(&t, 0, sizeof t);
            t.addr = r.st;
            t.isa = in->isa;
            r.n = 0;
            while (t.addr < r.en) {
                if (!decode_one(f, &t, space)) {
                    /* something unreadable between the two: a NACC, and the range shrinks
                     * to the source instruction */
                    if ((err = out_nacc(f, index, src))) return err;
                    r.n = 1;
                    r.st = src;
                    r.en = in->addr;
                    break;
                }
                t.addr += t.size;
                r.n++;
                if (split_n && t.addr < r.en && t.type != EK_ITYPE_OTHER) {
                    fl_range mid = {r.st, t.addr, r.n};
                    if ((err = out_range(f, index, &mid, 0, &t))) return err;
                    r.st = mid.en;
                    r.n = 0;
                }
            }
        }
    }

    if (in->type == EK_ITYPE_BR) {
        if (in->link) rs_push(&f->rs, in->addr, in->isa);
        in->addr = in->target;
    } else if (in->type == EK_ITYPE_BR_INDIRECT) {
        f->need_addr = 1;
        if (in->link) rs_push(&f->rs, in->addr, in->isa);
        if (f->rs.active) f->rs.pop_pending = 1;
    }
    /* the instruction-set change is applied before the range is reported (as OpenCSD) */
    in->isa = in->next_isa;
    return out_range_cur(f, index, &r, 1);
}

static int process_ts_cc_event(ek_flow *f, const fl_pend *p)
{
    int permit_ts = !f->ete_ts_marker || f->ete_first_ts_marker;
    ek_elem *e;
    switch (p->kind) {
    case FL_EVENT:
        if (!(e = out_new(f, p->index, EK_ELEM_EVENT))) return EK_ERR_NOMEM;
        e->u.event.type = EK_EVENT_NUMBERED;
        e->u.event.number = (uint16_t)p->u.param[0];
        break;
    case FL_TS:
    case FL_TS_CC:
        if (!permit_ts) break;
        if (!(e = out_new(f, p->index, EK_ELEM_TIMESTAMP))) return EK_ERR_NOMEM;
        e->timestamp = (uint64_t)p->u.param[0] | ((uint64_t)p->u.param[1] << 32);
        if (p->kind == FL_TS_CC) {
            e->cycle_count = p->u.param[2];
            e->flags |= EK_ELEMF_HAS_CC;
        }
        break;
    case FL_CC:
        if (!(e = out_new(f, p->index, EK_ELEM_CYCLE_COUNT))) return EK_ERR_NOMEM;
        e->cycle_count = p->u.param[0];
        e->flags |= EK_ELEMF_HAS_CC;
        break;
    default: break;
    }
    return EK_OK;
}

static int process_marker(ek_flow *f, const fl_pend *p)
{
    if (f->ete_ts_marker && p->u.param[0] == EK_MARKER_TS) f->ete_first_ts_marker = 1;
    ek_elem *e = out_new(f, p->index, EK_ELEM_SYNC_MARKER);
    if (!e) return EK_ERR_NOMEM;
    e->u.marker.type = p->u.param[0];
    e->u.marker.value = p->u.param[1];
    return EK_OK;
}

static int process_trans(ek_flow *f, const fl_pend *p)
{
    ek_elem *e = out_new(f, p->index, EK_ELEM_MEMTRANS);
    if (!e) return EK_ERR_NOMEM;
    e->u.memtrans = (uint32_t)(EK_MEMTRANS_TRACE_INIT + (p->kind - FL_TRANS_TRACE_INIT));
    return EK_OK;
}

static int process_ite(ek_flow *f, const fl_pend *p)
{
    ek_elem *e = out_new(f, p->index, EK_ELEM_INSTRUMENTATION);
    if (!e) return EK_ERR_NOMEM;
    e->u.ite.el = p->u.ite.el;
    e->u.ite.value = p->u.ite.value;
    return EK_OK;
}

/* ---- speculation resolution --------------------------------------------------------- */

/* Commit res.commit P0 elements, oldest first. Stops early after a context change so that
 * the caller can act on the new context before more code is read. */
static int commit_elements(ek_flow *f)
{
    int err = EK_OK;
    int64_t requested = f->res.commit;
    int context_flush = 0;
    uint64_t err_idx = 0;
    while (f->res.commit && !err && !context_flush) {
        fl_pend *p = dq_oldest(&f->q);
        if (!p) {
            err = seq_error(f, "flow.commit-overrun", err_idx, "Not enough elements to commit");
            break;
        }
        err_idx = p->index;
        int pop = 1;
        switch (p->kind) {
        case FL_TRC_ON: {
            f->next_range_valid = 0;
            ek_elem *e = out_new(f, p->index, EK_ELEM_TRACE_ON);
            if (!e) return EK_ERR_NOMEM;
            e->u.trace_on_reason = f->prev_overflow ? EK_TRACE_ON_OVERFLOW : EK_TRACE_ON_NORMAL;
            f->prev_overflow = 0;
            rs_flush(&f->rs);
            break;
        }
        case FL_ADDR:
            f->rs.pop_pending = 0;
            f->rs.tinfo_wait = 0;
            f->in.addr = p->u.addr.val;
            f->in.isa = calc_isa(f->is_64bit, p->u.addr.is);
            f->need_addr = 0;
            break;
        case FL_CTXT:
            if (p->u.ctxt.updated) {
                if ((err = update_context(f, p, p->index))) return err;
                context_flush = 1;
                f->span_valid = 0; /* re-ask the memory model under the new context */
            }
            break;
        case FL_EVENT:
        case FL_TS:
        case FL_CC:
        case FL_TS_CC: err = process_ts_cc_event(f, p); break;
        case FL_MARKER: err = process_marker(f, p); break;
        case FL_ATOM:
            while (p->u.atom.num && f->res.commit && !err) {
                int taken = p->u.atom.bits & 1;
                p->u.atom.bits >>= 1;
                p->u.atom.num--;
                if ((err = return_stack_pop(f))) break;
                if (!f->need_ctxt && !f->need_addr) {
                    uint64_t idx = p->index;
                    if ((err = process_atom(f, taken, idx))) break;
                } else {
                    /* no address or context to follow code from (as OpenCSD: no element) */
                    f->st.atoms_skipped++;
                    if (f->need_ctxt && !f->noted_no_ctxt) {
                        /* (reported when the packet is done: diagnostics come at step
                         * boundaries only) */
                        f->noted_no_ctxt = 1;
                        f->note_no_ctxt_at = p->index + 1;
                    }
                }
                if (f->res.commit) f->res.commit--;
            }
            if (err) break;
            if (p->u.atom.num) pop = 0;
            break;
        case FL_EXCEP:
            if ((err = return_stack_pop(f))) break;
            f->next_range_valid = 0;
            err = process_exception(f);
            f->res.commit--;
            break;
        case FL_EXCEP_RET:
            f->next_range_valid = 0;
            if (!out_new(f, p->index, EK_ELEM_EXCEPTION_RET)) return EK_ERR_NOMEM;
            if (p->is_p0) f->res.commit--;
            break;
        case FL_FUNC_RET:
            if (p->is_p0) f->res.commit--;
            break;
        case FL_SRC_ADDR:
            f->next_range_valid = 0;
            err = process_src_addr(f);
            f->res.commit--;
            break;
        case FL_Q:
            f->next_range_valid = 0;
            err = process_q(f);
            f->res.commit--;
            /* process_q removed the Q element (and its address) itself; the pop below then
             * drops the next pending element too. This is what OpenCSD 1.8 does, so the
             * output is the same. */
            break;
        case FL_TRANS_START:
            if (f->comm_trans_p0) f->res.commit--;
            /* fall through */
        case FL_TRANS_COMMIT:
        case FL_TRANS_FAIL:
        case FL_TRANS_TRACE_INIT:
            f->next_range_valid = 0;
            err = process_trans(f, p);
            break;
        case FL_ITE: err = process_ite(f, p); break;
        case FL_UNSEEN: {
            /* (counted: commit as many as asked at once) */
            int64_t k = f->res.commit < p->u.unseen ? f->res.commit : p->u.unseen;
            f->res.commit -= k;
            p->u.unseen -= (uint32_t)k;
            if (p->u.unseen) pop = 0;
            break;
        }
        case FL_TINFO:
            f->rs.tinfo_wait = 1;
            rs_flush(&f->rs);
            break;
        default: break;
        }
        if (err == EK_ERR_NOMEM) return err;
        if (pop) dq_pop_old(&f->q);
    }
    f->spec -= requested - f->res.commit;
    return err;
}

static int cancel_elements(ek_flow *f)
{
    int err = EK_OK;
    int64_t requested = f->res.cancel;
    fl_pend keep[64];
    fl_pend *kept = keep;
    size_t nkept = 0, kcap = 64;

    while (f->res.cancel) {
        fl_pend *p = dq_newest(&f->q);
        if (!p) {
            err = seq_error(f, "flow.commit-overrun", f->index, "Not enough elements to cancel");
            f->res.cancel = 0;
            break;
        }
        if (p->is_p0) {
            if (p->kind == FL_ATOM) {
                int64_t rm = f->res.cancel <= p->u.atom.num ? f->res.cancel : p->u.atom.num;
                p->u.atom.num -= (uint32_t)rm;
                f->res.cancel -= rm;
                if (!p->u.atom.num) dq_pop_new(&f->q);
            } else if (p->kind == FL_UNSEEN) {
                int64_t k = f->res.cancel < p->u.unseen ? f->res.cancel : p->u.unseen;
                f->res.cancel -= k;
                p->u.unseen -= (uint32_t)k;
                if (p->u.unseen == 0) dq_pop_new(&f->q);
            } else {
                f->res.cancel--;
                dq_pop_new(&f->q);
            }
        } else {
            switch (p->kind) {
            case FL_EVENT:
            case FL_TS:
            case FL_CC:
            case FL_TS_CC:
            case FL_MARKER:
            case FL_ITE:
                /* not affected by a cancel: kept aside, put back afterwards */
                if (nkept == kcap) {
                    size_t ncap = kcap * 2;
                    fl_pend *nk = malloc(ncap * sizeof(fl_pend));
                    if (!nk) {
                        if (kept != keep) free(kept);
                        return EK_ERR_NOMEM;
                    }
                    memcpy(nk, kept, nkept * sizeof(fl_pend));
                    if (kept != keep) free(kept);
                    kept = nk;
                    kcap = ncap;
                }
                kept[nkept++] = *p;
                dq_pop_new(&f->q);
                break;
            default: dq_pop_new(&f->q); break;
            }
        }
    }
    /* restore the kept elements at the newest end, in their original order (also after a
     * sequence error, as OpenCSD) */
    while (nkept) {
        fl_pend *n = dq_push_new(f);
        if (!n) break;
        *n = kept[--nkept];
    }
    if (kept != keep) free(kept);
    f->spec -= requested - f->res.cancel;
    return err;
}

static int mispredict_atom(ek_flow *f)
{
    int found = 0;
    fl_deque *d = &f->q;
    uint32_t i = d->n;
    while (i > 0) {
        fl_pend *p = dq_at(d, i - 1);
        if (p->kind == FL_ATOM) {
            if (p->u.atom.num) p->u.atom.bits ^= 1u << (p->u.atom.num - 1);
            found = 1;
            break;
        } else if (p->kind == FL_ADDR) {
            /* addresses between the mispredict and its atom no longer apply */
            dq_erase(d, i - 1);
        } else if (p->kind == FL_UNSEEN) {
            found = 1; /* the atom is one we never saw */
            break;
        }
        i--;
    }
    int err = EK_OK;
    if (!found) err = seq_error(f, "flow.commit-overrun", f->index, "Not found mispredict atom");
    f->res.mispredict = 0;
    return err;
}

static int discard_elements(ek_flow *f)
{
    int err = EK_OK;
    fl_pend *p;
    while (!err && (p = dq_oldest(&f->q)) != NULL) {
        if (p->kind == FL_MARKER)
            err = process_marker(f, p);
        else
            err = process_ts_cc_event(f, p); /* (instrumentation is dropped, as OpenCSD) */
        dq_pop_old(&f->q);
    }
    clear_elem_res(f);
    f->spec = 0;
    if (f->state != FS_NO_SYNC && f->state != FS_WAIT_SYNC) f->st.resyncs++;
    f->state = FS_NO_SYNC;
    f->unsync = f->prev_overflow ? EK_UNSYNC_OVERFLOW : EK_UNSYNC_DISCARD;
    f->need_ctxt = 1;
    f->need_addr = 1;
    f->elem_pending_addr = 0;
    return err;
}

static int resolve_elements(ek_flow *f)
{
    while (is_elem_for_res(f)) {
        int err = EK_OK;
        /* One round: a commit (up to a context change) and, when the commit is complete,
         * cancel / mispredict / discard. OpenCSD sends a round's elements when the round is
         * done, so an error in any step of it loses all of them. */
        f->batch_mark = f->out_n;
        if (f->res.commit) err = commit_elements(f);
        if (!f->res.commit) {
            if (!err && f->res.cancel) err = cancel_elements(f);
            if (!err && f->res.mispredict) err = mispredict_atom(f);
            if (!err && f->res.discard) err = discard_elements(f);
        }
        if (err == EK_ERR_NOMEM) return err;
        if (err && f->state != FS_NO_SYNC) {
            /* cannot happen with the errors above (they all resynchronise); be safe */
            reset_decoder(f);
            f->unsync = EK_UNSYNC_BAD_PACKET;
        }
    }
    if (f->state == FS_RESOLVE) f->state = FS_DECODE;
    return EK_OK;
}

/* ---- packets -> pending elements ---------------------------------------------------- */

EK_HOT fl_pend *push(ek_flow *f, int kind, int is_p0, const ek_etm4_packet *pkt)
{
    fl_pend *p = dq_push_new(f);
    if (!p) return NULL;
    memset(p, 0, sizeof *p);
    p->kind = (uint8_t)kind;
    p->is_p0 = (uint8_t)is_p0;
    p->root = pkt->type;
    p->index = pkt->index;
    return p;
}

static void ctxt_from_pkt(fl_ctxt *c, const ek_etm4_packet *pkt, uint8_t is)
{
    c->cid = pkt->ctx.cid;
    c->vmid = pkt->ctx.vmid;
    c->el = pkt->ctx.el;
    c->sf = pkt->ctx.sf;
    c->ns = pkt->ctx.ns;
    c->nse = pkt->ctx.nse;
    c->updated = pkt->ctx.updated;
    c->updated_c = pkt->ctx.cid_updated;
    c->updated_v = pkt->ctx.vmid_updated;
    c->is = is;
}

/* Pending-queue full or out of memory while decoding a packet. */
static int push_failed(ek_flow *f, const ek_etm4_packet *pkt)
{
    if (f->q.n >= f->max_pending) {
        diag(f, EK_SEV_WARN, "flow.limit", EK_ERR_LIMIT, pkt->index,
             "too many undecided packets pending: resynchronising");
        reset_decoder(f);
        f->unsync = EK_UNSYNC_BAD_PACKET;
        return EK_ERR_LIMIT;
    }
    return EK_ERR_NOMEM;
}

static int decode_packet(ek_flow *f, const ek_etm4_packet *pkt)
{
    int err = EK_OK;
    int is_addr = 0;
    fl_pend *p;

    switch (pkt->type) {
    case EK_ETM4_ASYNC:
    case EK_ETM4_IGNORE: break;

    case EK_ETM4_TRACE_INFO:
        if (!push(f, FL_TINFO, 0, pkt)) return push_failed(f, pkt);
        break;

    case EK_ETM4_TRACE_ON:
        if (!push(f, FL_TRC_ON, 0, pkt)) return push_failed(f, pkt);
        break;

    case EK_ETM4_ATOM_F1:
    case EK_ETM4_ATOM_F2:
    case EK_ETM4_ATOM_F3:
    case EK_ETM4_ATOM_F4:
    case EK_ETM4_ATOM_F5:
    case EK_ETM4_ATOM_F6:
        if (!(p = push(f, FL_ATOM, 1, pkt))) return push_failed(f, pkt);
        p->u.atom.bits = pkt->atom_bits;
        p->u.atom.num = pkt->atom_num > 32 ? 32 : pkt->atom_num; /* (32 bits of atoms at most) */
        f->spec += p->u.atom.num;
        break;

    case EK_ETM4_CTXT:
        if (!(p = push(f, FL_CTXT, 0, pkt))) return push_failed(f, pkt);
        ctxt_from_pkt(&p->u.ctxt, pkt, f->last_is);
        break;

    case EK_ETM4_ADDR_CTXT_L_32IS0:
    case EK_ETM4_ADDR_CTXT_L_32IS1:
    case EK_ETM4_ADDR_CTXT_L_64IS0:
    case EK_ETM4_ADDR_CTXT_L_64IS1:
        f->last_is = pkt->addr.is;
        if (!(p = push(f, FL_CTXT, 0, pkt))) return push_failed(f, pkt);
        ctxt_from_pkt(&p->u.ctxt, pkt, f->last_is);
        /* and the address: */
        /* fall through */
    case EK_ETM4_ADDR_MATCH:
    case EK_ETM4_ADDR_S_IS0:
    case EK_ETM4_ADDR_S_IS1:
    case EK_ETM4_ADDR_L_32IS0:
    case EK_ETM4_ADDR_L_32IS1:
    case EK_ETM4_ADDR_L_64IS0:
    case EK_ETM4_ADDR_L_64IS1:
        f->last_is = pkt->addr.is;
        if (!(p = push(f, FL_ADDR, 0, pkt))) return push_failed(f, pkt);
        p->u.addr.val = pkt->addr.val;
        p->u.addr.is = pkt->addr.is;
        is_addr = 1;
        break;

    case EK_ETM4_SRC_ADDR_MATCH:
    case EK_ETM4_SRC_ADDR_S_IS0:
    case EK_ETM4_SRC_ADDR_S_IS1:
    case EK_ETM4_SRC_ADDR_L_32IS0:
    case EK_ETM4_SRC_ADDR_L_32IS1:
    case EK_ETM4_SRC_ADDR_L_64IS0:
    case EK_ETM4_SRC_ADDR_L_64IS1:
        /* counted for speculation, though not cancellable as a P0 element (as OpenCSD) */
        if (!(p = push(f, FL_SRC_ADDR, 0, pkt))) return push_failed(f, pkt);
        p->u.addr.val = pkt->addr.val;
        p->u.addr.is = pkt->addr.is;
        f->spec++;
        break;

    case EK_ETM4_EXCEPT:
        if (!(p = push(f, FL_EXCEP, 1, pkt))) return push_failed(f, pkt);
        p->u.exc.num = pkt->exc.type;
        p->u.exc.prev_same = pkt->exc.addr_interp == 2;
        f->elem_pending_addr = 1; /* committed once its address has been seen */
        break;

    case EK_ETM4_EXCEPT_RTN: {
        int v7m = f->v7m_eret_p0;
        if (!push(f, FL_EXCEP_RET, v7m, pkt)) return push_failed(f, pkt);
        if (v7m) f->spec++;
        break;
    }

    case EK_ETM4_FUNC_RET:
        if (f->v8m_func_ret) {
            if (!push(f, FL_FUNC_RET, 1, pkt)) return push_failed(f, pkt);
            f->spec++;
        }
        break;

    case EK_ETM4_EVENT:
        if (!(p = push(f, FL_EVENT, 0, pkt))) return push_failed(f, pkt);
        p->u.param[0] = pkt->event;
        break;

    case EK_ETM4_CCNT_F1:
    case EK_ETM4_CCNT_F2:
    case EK_ETM4_CCNT_F3:
        if (!(p = push(f, FL_CC, 0, pkt))) return push_failed(f, pkt);
        p->u.param[0] = (pkt->flags & EK_ETM4_PF_CC) ? pkt->cycle_count : 0;
        /* with TRCIDR0.COMMOPT = 1 cycle-count packets carry no commit field */
        f->res.commit =
            ((pkt->flags & EK_ETM4_PF_COMMIT) && !f->ecfg.commit_opt1) ? pkt->commit : 0;
        break;

    case EK_ETM4_TIMESTAMP:
        if (!(p = push(f, f->ts_with_cc ? FL_TS_CC : FL_TS, 0, pkt))) return push_failed(f, pkt);
        p->u.param[0] = (uint32_t)pkt->timestamp;
        p->u.param[1] = (uint32_t)(pkt->timestamp >> 32);
        if (f->ts_with_cc) p->u.param[2] = (pkt->flags & EK_ETM4_PF_CC) ? pkt->cycle_count : 0;
        break;

    case EK_ETM4_TS_MARKER:
        if (!(p = push(f, FL_MARKER, 0, pkt))) return push_failed(f, pkt);
        p->u.param[0] = EK_MARKER_TS;
        p->u.param[1] = 0;
        break;

    case EK_ETM4_BAD_SEQUENCE:
        err = bad_packet(f, pkt->index, "Bad byte sequence in packet.");
        break;

    case EK_ETM4_RESERVED_CFG:
        err = bad_packet(f, pkt->index, "Invalid packet type for trace mode.");
        break;

    case EK_ETM4_RESERVED: err = bad_packet(f, pkt->index, "Reserved packet header"); break;

    case EK_ETM4_MISPREDICT:
    case EK_ETM4_CANCEL_F1_MISPRED:
    case EK_ETM4_CANCEL_F2:
    case EK_ETM4_CANCEL_F3:
        f->res.mispredict = 1;
        if (pkt->atom_num) {
            if (!(p = push(f, FL_ATOM, 1, pkt))) return push_failed(f, pkt);
            p->u.atom.bits = pkt->atom_bits;
            p->u.atom.num =
                pkt->atom_num > 32 ? 32 : pkt->atom_num; /* (32 bits of atoms at most) */
            f->spec += p->u.atom.num;
        }
        /* fall through */
    case EK_ETM4_CANCEL_F1: f->res.cancel = pkt->cancel; break;

    case EK_ETM4_COMMIT: f->res.commit = (pkt->flags & EK_ETM4_PF_COMMIT) ? pkt->commit : 0; break;

    case EK_ETM4_OVERFLOW:
        f->prev_overflow = 1;
        /* fall through */
    case EK_ETM4_DISCARD:
        f->spec = 0;
        f->res.discard = 1;
        break;

    case EK_ETM4_Q:
        if (!(p = push(f, FL_Q, 1, pkt))) return push_failed(f, pkt);
        p->u.q.count = pkt->q.count;
        if (pkt->q.addr_present) {
            p->u.q.has_addr = 1;
            p->u.q.addr = pkt->addr.val;
            p->u.q.is = pkt->addr.is;
            f->spec++;
        } else {
            f->elem_pending_addr = 1;
        }
        break;

    case EK_ETM4_TRANS_ST:
        if (!push(f, FL_TRANS_START, f->comm_trans_p0, pkt)) return push_failed(f, pkt);
        if (f->comm_trans_p0) f->spec++;
        break;

    case EK_ETM4_TRANS_COMMIT:
        if (!push(f, FL_TRANS_COMMIT, 0, pkt)) return push_failed(f, pkt);
        break;

    case EK_ETM4_TRANS_FAIL:
        if (!push(f, FL_TRANS_FAIL, 0, pkt)) return push_failed(f, pkt);
        break;

    case EK_ETM4_ITE:
        if (!(p = push(f, FL_ITE, 0, pkt))) return push_failed(f, pkt);
        p->u.ite.el = pkt->ite.el;
        p->u.ite.value = pkt->ite.value;
        break;

    case EK_ETM4_COND_FLUSH:
    case EK_ETM4_COND_I_F1:
    case EK_ETM4_COND_I_F2:
    case EK_ETM4_COND_I_F3:
    case EK_ETM4_COND_RES_F1:
    case EK_ETM4_COND_RES_F2:
    case EK_ETM4_COND_RES_F3:
    case EK_ETM4_COND_RES_F4:
    case EK_ETM4_NUM_DS_MKR:
    case EK_ETM4_UNNUM_DS_MKR:
        err = trace_error(f, EK_ERR_UNSUPPORTED, "flow.unsupported", pkt->index,
                          "Data trace related, unsupported packet type.", EK_UNSYNC_BAD_PACKET);
        break;

    default:
        /* NOTSYNC, INCOMPLETE_EOT, PE_RESET (an ETE PE reset is not decoded by OpenCSD 1.8
         * either) and anything unknown */
        err = bad_packet(f, pkt->index, "Unknown packet type.");
        break;
    }

    if (is_addr && f->elem_pending_addr) {
        f->spec++; /* the element that waited for this address now counts */
        f->elem_pending_addr = 0;
    }
    if (f->spec > (int64_t)f->max_spec)
        f->res.commit = f->spec - (int64_t)f->max_spec; /* beyond MAXSPEC: implicit commit */
    if (!err && is_elem_for_res(f)) f->state = FS_RESOLVE;
    return err;
}

static int do_trace_info(ek_flow *f, const ek_etm4_packet *pkt)
{
    f->noted_no_ctxt = 0;
    f->cc_threshold = pkt->tinfo.cc_threshold;
    f->spec = pkt->tinfo.spec;
    fl_pend *p;
    if (f->spec > 0) {
        if (!(p = push(f, FL_UNSEEN, 1, pkt))) return push_failed(f, pkt);
        p->u.unseen = (uint32_t)f->spec;
    }
    if (!push(f, FL_TINFO, 0, pkt)) return push_failed(f, pkt);
    if (pkt->tinfo.info & 0x40) /* started inside a transaction */
        if (!push(f, FL_TRANS_TRACE_INIT, 0, pkt)) return push_failed(f, pkt);
    return EK_OK;
}

static int process_packet(ek_flow *f, const ek_etm4_packet *pkt)
{
    int err;
    for (;;) {
        switch (f->state) {
        case FS_NO_SYNC: {
            ek_elem *e = out_new(f, f->index, EK_ELEM_NO_SYNC);
            if (!e) return EK_ERR_NOMEM;
            e->u.unsync_reason = f->unsync;
            f->state = FS_WAIT_SYNC;
            break; /* and look at this packet again */
        }
        case FS_WAIT_SYNC:
            if (pkt->type == EK_ETM4_ASYNC) f->state = FS_WAIT_TINFO;
            return EK_OK;

        case FS_WAIT_TINFO:
            f->need_ctxt = 1;
            f->need_addr = 1;
            if (pkt->type == EK_ETM4_TRACE_INFO) {
                if ((err = do_trace_info(f, pkt)) == EK_ERR_NOMEM) return err;
                if (!err) {
                    f->state = FS_DECODE;
                    rs_flush(&f->rs);
                }
            } else if (f->is_ete && pkt->type == EK_ETM4_EVENT) {
                /* ETE allows events before the first TRACE_INFO */
                if ((err = decode_packet(f, pkt)) == EK_ERR_NOMEM) return err;
            }
            return EK_OK;

        case FS_DECODE:
            err = decode_packet(f, pkt);
            if (err == EK_ERR_NOMEM) return err;
            if (err || f->state != FS_RESOLVE) return EK_OK;
            break;

        case FS_RESOLVE:
            if ((err = resolve_elements(f))) return err;
            if (f->state == FS_DECODE) return EK_OK;
            break; /* lost sync while resolving: report it now */

        default: return EK_OK;
        }
    }
}

/* At the end of the trace: output the time stamps, cycle counts and events that precede the
 * first undecided P0 element, then EO_TRACE. */
static int commit_on_eot(ek_flow *f)
{
    int err = EK_OK;
    fl_pend *p;
    while (!err && (p = dq_oldest(&f->q)) != NULL) {
        switch (p->kind) {
        case FL_UNKNOWN:
        case FL_ATOM:
        case FL_TRC_ON:
        case FL_EXCEP:
        case FL_EXCEP_RET:
        case FL_OVERFLOW:
        case FL_Q:
        case FL_UNSEEN: f->q.n = 0; break;
        case FL_TRANS_START:
            if (f->comm_trans_p0) f->q.n = 0;
            break;
        case FL_TRANS_FAIL:
        case FL_TRANS_COMMIT:
            if (f->max_spec == 0 || f->spec == 0) err = process_trans(f, p);
            break;
        case FL_EVENT:
        case FL_TS:
        case FL_CC:
        case FL_TS_CC: err = process_ts_cc_event(f, p); break;
        case FL_MARKER: err = process_marker(f, p); break;
        case FL_ITE: err = process_ite(f, p); break;
        default: /* addresses, contexts, source addresses, function returns, TINFO ... */ break;
        }
        dq_pop_old(&f->q);
    }
    if (err) return err;
    ek_elem *e = out_new(f, f->index, EK_ELEM_EO_TRACE);
    if (!e) return EK_ERR_NOMEM;
    e->u.unsync_reason = f->prev_overflow ? EK_UNSYNC_OVERFLOW : EK_UNSYNC_EOT;
    return EK_OK;
}

/* ---- public API ---------------------------------------------------------------------- */

void ek_flow_config_init(ek_flow_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->size = sizeof *cfg;
}

static unsigned ocsd_arch_of(ek_arch arch, int is_ete)
{
    switch (arch) {
    case EK_ARCH_V7A:
    case EK_ARCH_V7R:
    case EK_ARCH_V7M: return OCSD_ARCH_V7;
    case EK_ARCH_V8A:
    case EK_ARCH_V8R:
    case EK_ARCH_V8M:
    case EK_ARCH_V8_1M: return OCSD_ARCH_V8;
    case EK_ARCH_V8_3A: return OCSD_ARCH_V8R3;
    case EK_ARCH_V9A: return OCSD_ARCH_AA64;
    default: return is_ete ? OCSD_ARCH_AA64 : OCSD_ARCH_V8;
    }
}

int ek_flow_new(const ek_flow_config *cfg, ek_flow **out)
{
    *out = NULL;
    if (!cfg || cfg->size < sizeof(ek_flow_config) || !cfg->source) return EK_ERR_ARG;
    ek_flow *f = calloc(1, sizeof *f);
    if (!f) return EK_ERR_NOMEM;
    if (ek_etm4_config_from_source(&f->ecfg, cfg->source)) {
        free(f);
        return EK_ERR_ARG;
    }
    f->mem = cfg->mem;
    f->diag = cfg->diag;
    f->file = cfg->file;
    f->flags = cfg->flags;
    f->max_pending = cfg->max_pending ? cfg->max_pending : 65536;
    f->trace_id = f->ecfg.trace_id;
    f->max_spec = f->ecfg.max_spec;
    f->is_ete = f->ecfg.is_ete;
    f->m_profile = f->ecfg.m_profile || cfg->source->protocol == EK_PROTO_ETMV4M ||
                   cfg->source->profile == EK_PROFILE_M;
    f->ocsd_arch = ocsd_arch_of(cfg->source->arch, f->is_ete);
    f->ts_with_cc = f->ecfg.cc_enabled;
    uint32_t idr0 = f->ecfg.regs.idr[0], idr2 = f->ecfg.regs.idr[2];
    f->ete_ts_marker = f->ecfg.version >= 0x51 && (idr0 & 0x800000u);
    f->comm_trans_p0 = (idr0 & 0x40000000u) == 0;
    f->v7m_eret_p0 = f->ocsd_arch == OCSD_ARCH_V7 && f->m_profile;
    f->v8m_func_ret =
        f->ocsd_arch >= OCSD_ARCH_V8 && f->ocsd_arch <= OCSD_ARCH_AA64 && f->m_profile;
    int wfx = (idr2 & 0x80000000u) && f->ecfg.version >= 0x43;
    ek_isa_cfg_ocsd(&f->icfg, f->ocsd_arch, f->m_profile, wfx ? EK_ISA_OPT_WFX_BRANCH : 0);
    f->rs.active = f->ecfg.rs_enabled;

    /* Configurations OpenCSD refuses to decode (it creates no decoder): we decode what the
     * packets allow and say so once. */
    uint32_t configr = f->ecfg.regs.configr, cond = (configr >> 8) & 7;
    int lsp0 = (configr & 0x6) != 0;
    int data = (idr0 & 0x18) == 0x18 && lsp0 && (configr & 0x30000);
    if (data)
        diag(f, EK_SEV_WARN, "flow.config", EK_ERR_UNSUPPORTED, NO_INDEX,
             "ETMv4 instruction decode : Data trace elements not supported");
    else if (lsp0)
        diag(f, EK_SEV_WARN, "flow.config", EK_ERR_UNSUPPORTED, NO_INDEX,
             "ETMv4 instruction decode : LSP0 elements not supported.");
    else if (cond == 1 || cond == 2 || cond == 3 || cond == 7)
        diag(f, EK_SEV_WARN, "flow.config", EK_ERR_UNSUPPORTED, NO_INDEX,
             "ETMv4 instruction decode : Trace on conditional non-branch elements not supported.");

    if (!(f->flags & EK_FLOW_NO_BLOCK_CACHE)) {
        int err = fl_bcache_init(&f->bc, 13);
        if (err) {
            free(f);
            return err;
        }
    }
    if (f->mem.generation) f->mem_gen = f->mem.generation(f->mem.ctx);
    f->unsync = EK_UNSYNC_INIT_DECODER;
    reset_decoder(f);
    /* OpenCSD leaves its instruction state zeroed (A32) until an address or context sets it:
     * a source-address packet before either decodes as A32 there, and so here */
    f->in.isa = EK_ISA_A32;
    *out = f;
    return EK_OK;
}

void ek_flow_free(ek_flow *f)
{
    if (!f) return;
    fl_bcache_free(&f->bc);
    free(f->q.buf);
    free(f->out);
    free(f);
}

int ek_flow_packet(ek_flow *f, const ek_etm4_packet *pkt)
{
    if (f->mem.generation) {
        uint64_t g = f->mem.generation(f->mem.ctx);
        if (g != f->mem_gen) {
            f->mem_gen = g;
            f->span_valid = 0;
            fl_bcache_clear(&f->bc);
        }
    }
    /* OpenCSD hands only the first NOTSYNC packet of a run to its decoder */
    if (pkt->type == EK_ETM4_NOTSYNC && (pkt->flags & EK_ETM4_PF_NOTSYNC_MORE)) return EK_OK;
    f->st.packets++;
    f->index = pkt->index;
    f->batch_mark = f->out_n;
    int err = process_packet(f, pkt);
    if (err == EK_ERR_LIMIT) err = EK_OK;
    if (f->note_no_ctxt_at) {
        diag(f, EK_SEV_NOTE, "flow.no-context", 0, f->note_no_ctxt_at - 1,
             "atoms before the first context packet cannot be decoded");
        f->note_no_ctxt_at = 0;
    }
    return err;
}

int ek_flow_end(ek_flow *f)
{
    f->batch_mark = f->out_n;
    return commit_on_eot(f);
}

void ek_flow_reset(ek_flow *f)
{
    f->unsync = EK_UNSYNC_RESET_DECODER;
    reset_decoder(f);
}

const ek_elem *ek_flow_elems(const ek_flow *f, size_t *count)
{
    *count = f->out_n - f->out_take;
    /* Before the first element the queue has no storage: no arithmetic on NULL. */
    return f->out ? f->out + f->out_take : NULL;
}

void ek_flow_elems_clear(ek_flow *f)
{
    f->out_n = 0;
    f->out_take = 0;
    f->batch_mark = 0;
}

int ek_flow_step(ek_flow *f, const ek_etm4_packet *pkt, const ek_elem **elems, size_t *count)
{
    /* (ek_flow_elems_clear, ek_flow_packet, ek_flow_elems: on every packet, so spelt out) */
    f->out_n = f->out_take = f->batch_mark = 0;
    const int rc = ek_flow_packet(f, pkt);
    *count = f->out_n - f->out_take;
    *elems = f->out ? f->out + f->out_take : NULL;
    return rc;
}

int ek_flow_end_step(ek_flow *f, const ek_elem **elems, size_t *count)
{
    ek_flow_elems_clear(f);
    const int rc = ek_flow_end(f);
    *elems = ek_flow_elems(f, count);
    return rc;
}

int ek_flow_next(ek_flow *f, ek_elem *out)
{
    if (f->out_take >= f->out_n) {
        f->out_n = f->out_take = 0;
        f->batch_mark = 0;
        return 0;
    }
    *out = f->out[f->out_take++];
    return 1;
}

void ek_flow_get_stats(const ek_flow *f, ek_flow_stats *out)
{
    *out = f->st;
}
