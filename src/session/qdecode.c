/* Decoding one queue: its AUX slices in order, each trace ID through parser, flow decoder and
 * sample synthesis, reading code through the address-space timeline at the slice's time.
 *
 * The elements are handed to sample synthesis the way perf 6.1 hands its decoder's packets to
 * its front end, so that samples come out in perf's order:
 *  - without time stamps (timeless), block by block;
 *  - with time stamps, in "epochs": perf keeps one heap entry per queue, keyed by a CoreSight
 *    time; popping it processes the packets queued for that trace ID, then decodes on until
 *    the next time stamp (every range after the first time stamp gets an estimated one) and
 *    pushes the next entry. A block that ends without a time stamp has all its queued packets
 *    processed at once. This file produces each queue's epochs with their keys; session.c
 *    replays perf's heap over them.
 *
 * Everything here is private to the queue; the session, the timeline and the DSOs are only
 * read (DSO symbol tables lock themselves). */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "etmkit/decode.h"
#include "etmkit/etmkit.h"
#include "etmkit/flow.h"
#include "core/hot.h"
#include "session/session_int.h"

#define PKTQ_WAIT 1023 /* perf's packet queue holds 1024; it stops the decoder at 1023 */

typedef struct qjob qjob;

/* A decoder thread's last answers: consecutive samples are mostly in the same map and often
 * in the same function. */
#define RC_SYMS 8
#define RC_MAPS 4
struct rcache {
    struct {
        const as_map *map;
        int32_t pid;
        uint64_t t_lo, t_hi;
    } m[RC_MAPS];
    unsigned mnext;
    struct {
        const as_dso *dso;      /* recent symbols: [lo, hi) in the DSO's key space */
        uint64_t lo, hi, start;
        const char *name;
        uint32_t len;
    } sym[RC_SYMS];
    unsigned next, hit;
};

/* A decoder thread's recent sample lines (when qfmt.cacheable): hot loops give the same
 * branch samples over and over, and their text is then a copy. Two-way set associative (a
 * direct-mapped table lost 2% of lookups to pairs of lines of one loop taking turns in a
 * slot); the keys are kept apart from the texts so that the lookups touch little memory. A
 * line resolved without a sample time is only reused within the block (AUX slice) it was
 * made in: the address space it was resolved against is the slice's time range. */
#define LC_BITS 12
#define LC_SLOTS (1u << LC_BITS)
#define LC_TEXT 192 /* a multiple of 32: hits are copied whole (see on_sample) */
typedef struct lc_key {
    uint64_t ip, addr;
    uint32_t flags;
    int32_t pid, tid, cpu;
    uint32_t block; /* lcache.block when made (never 0), or 0 for lines with a time */
    uint8_t kind, has_t;
    uint16_t zero;
} lc_key;
typedef struct lcache_ent {
    lc_key k;
    uint16_t len;  /* 0: empty */
    uint8_t recent; /* (first entry of a set) 1: the second entry was used last */
    uint64_t v_lo, v_hi; /* with has_t: the sample times the text holds for */
} lcache_ent;
typedef struct lcache {
    lcache_ent e[LC_SLOTS];
    char text[LC_SLOTS][LC_TEXT];
    uint32_t block; /* serial of the current block */
    uint64_t hits, misses;
} lcache;

static inline int lc_key_eq(const lc_key *a, const lc_key *b)
{
    /* (no early exit: nearly every lookup hits, and then every field is compared anyway) */
    return !((a->ip ^ b->ip) | (a->addr ^ b->addr) |
             (uint64_t)((a->flags ^ b->flags) | ((uint32_t)a->pid ^ (uint32_t)b->pid) |
                        ((uint32_t)a->tid ^ (uint32_t)b->tid) |
                        ((uint32_t)a->cpu ^ (uint32_t)b->cpu) | (a->block ^ b->block) |
                        (uint32_t)(a->kind ^ b->kind) | (uint32_t)(a->has_t ^ b->has_t)));
}

typedef struct idst {
    qjob *j;
    uint8_t id;
    int ok;                     /* decodable (ETMv4 / ETE with a configuration) */
    const ek_perf_etm_cpu *etm;
    int32_t cpu;
    ek_perf_pid_source pid_source;
    ek_synth *synth;
    int32_t pid, tid;           /* thread of the samples (elements processed so far) */
    int32_t dec_tid;            /* thread as decoded (perf's tidq->tid, set at decode time) */
    int32_t mem_pid;            /* thread whose memory the decoder reads (parser context) */
    uint64_t gen;
    /* what the last failed code read was */
    int miss_kind;
    int32_t miss_pid;
    as_dso *miss_dso;
    uint64_t miss_addr;
    int notsync;                /* in a run of NOTSYNC packets */
    int in_gap;                 /* trace bytes since a NACC, until instructions resume */
    size_t gap_miss;
    /* perf's per-trace-ID packet queue and its CoreSight time keeping */
    EK_VEC(ek_elem) q;
    size_t qhead;
    uint64_t cs_ts, next_cs_ts, instr_count;
    size_t npk;                 /* perf packets in q (what fills perf's packet queue) */
    /* perf time from CoreSight time stamps (where they fit the slice): for code reads as the
     * decoder goes, and for the samples as they are made */
    int mem_has_t, out_has_t;
    uint64_t mem_t, out_t;
    int time_matters;           /* a code read in this slice depended on the time */
    /* between time stamps, perf's own estimate: one time unit per instruction since the last
     * one (cs_etm's soft time stamps); used only to pick between maps that replaced each other
     * within a slice */
    uint64_t mem_base_t, out_base_t, mem_instr, out_instr;
    uint64_t next_change;       /* the map the decoder reads from changes at this time */
} idst;

struct qjob {
    ek_session *s;
    size_t qi;
    const ek_perf_queue *q;
    const qfmt *fmt;
    qout *out;
    qresult *res;
    idst *ids[128];
    ek_decode *dt; /* deformatter, parsers and flow decoders of the queue */
    const ek_perf_slice *sl;
    size_t slice;               /* index of the next slice to load */
    uint64_t prev_key;
    uint64_t t_lo, t_hi;
    int timeless;
    /* the element stream of the current block */
    int in_block;
    int flushed; /* the block's partial packets were flushed */
    /* elements produced but not yet consumed: pv[ph..pn), a view of the decode tree's output
     * (valid until the next ek_decode_next) */
    const ek_elem *pv;
    size_t pn, ph;
    int block_ended;            /* the block's bytes are used up (parsers flushed) */
    uint8_t pending_chan;       /* perf: trace ID whose time stamp stopped the decoder */
    int pre_epoch;              /* output so far belongs to the elements before any time stamp */
    const uint8_t *rel_data;    /* the current block's bytes (released when it is done) */
    size_t rel_len;
    rcache rcache;
    lcache *lc;                 /* NULL: lines are not cached */
    /* direct: the queue's trace is raw (one trace ID, no formatter), so perf's per-ID packet
     * queue would be processed in the order it is filled; each element is processed as soon as
     * it is fed instead of being copied into the queue. The output since the last stop then
     * starts at `mark` (where the queued elements' output would have begun), and the buffer is
     * handed to the writer only at stops. */
    int direct;
    size_t mark;
    uint64_t nd_bytes; /* packet bytes that did not feed instruction flow */
    int err;
};

/* ---- report bookkeeping ---------------------------------------------------------------------- */

void qresult_free(qresult *r)
{
    ek_vec_free(&r->misses);
    ek_vec_free(&r->gaps);
}

miss *qresult_miss(qresult *r, int kind, int32_t pid, as_dso *dso, uint64_t addr, uint64_t offset)
{
    for (size_t i = 0; i < r->misses.n; i++) {
        miss *m = &r->misses.v[i];
        if (m->kind == kind && m->pid == pid && m->dso == dso) {
            if (addr < m->lo)
                m->lo = addr;
            if (addr > m->hi)
                m->hi = addr;
            return m;
        }
    }
    miss m;
    memset(&m, 0, sizeof m);
    m.kind = kind;
    m.pid = pid;
    m.dso = dso;
    m.lo = m.hi = addr;
    m.first_offset = offset;
    if (ek_vec_push(&r->misses, m))
        return NULL;
    return &r->misses.v[r->misses.n - 1];
}

void qresult_gap(qresult *r, const char *kind, uint64_t bytes, uint64_t offset)
{
    for (size_t i = 0; i < r->gaps.n; i++)
        if (!strcmp(r->gaps.v[i].kind, kind)) {
            r->gaps.v[i].bytes += bytes;
            r->gaps.v[i].count++;
            return;
        }
    gap g = {kind, bytes, 1, offset};
    ek_vec_push(&r->gaps, g);
}

/* ---- output ---------------------------------------------------------------------------------- */

void qout_init(qout *o, size_t limit)
{
    memset(o, 0, sizeof *o);
    pthread_mutex_init(&o->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* for the writer's timed waits */
    pthread_cond_init(&o->cv, &ca);
    pthread_condattr_destroy(&ca);
    o->limit = limit;
    qseg first = {0, 0, 0};
    ek_vec_push(&o->segs, first);
}

static void chunk_free(qchunk *c)
{
    if (c) {
        free(c->data);
        free(c->segs);
        free(c);
    }
}

void qout_free(qout *o)
{
    for (qchunk *c = o->first, *n; c; c = n) {
        n = c->next;
        chunk_free(c);
    }
    for (qchunk *c = o->spare, *n; c; c = n) {
        n = c->next;
        chunk_free(c);
    }
    ek_sbuf_free(&o->cur);
    ek_vec_free(&o->segs);
    pthread_mutex_destroy(&o->mu);
    pthread_cond_destroy(&o->cv);
}

/* Hand the bytes written so far to the writer as one chunk: the buffers themselves move into
 * the chunk, and the decoder continues in a consumed chunk's buffers. */
static int out_flush(qout *o, int last)
{
    pthread_mutex_lock(&o->mu);
    /* back-pressure: wait while the writer has plenty to take from us */
    while (o->limit && o->bytes > o->limit && o->first && !last) {
        o->decoder_waits++;
        pthread_cond_wait(&o->cv, &o->mu);
        o->decoder_waits--;
    }
    qchunk *c = o->spare;
    if (c)
        o->spare = c->next;
    pthread_mutex_unlock(&o->mu);
    if (!c) {
        c = calloc(1, sizeof *c);
        if (!c)
            return EK_ERR_NOMEM;
    }
    char *od = c->data;
    size_t ocap = c->cap;
    qseg *os = c->segs;
    size_t oscap = c->segcap;
    c->data = o->cur.p;
    c->cap = o->cur.cap;
    c->len = o->cur.len;
    c->segs = o->segs.v;
    c->nsegs = o->segs.n;
    c->segcap = o->segs.cap;
    o->cur.p = od;
    o->cur.cap = ocap;
    o->cur.len = 0;
    if (o->cur.p)
        o->cur.p[0] = 0;
    o->segs.v = os;
    o->segs.cap = oscap;
    o->segs.n = 0;
    /* the next chunk continues the current epoch */
    qseg cont = {0, c->nsegs ? c->segs[c->nsegs - 1].key : 0, 0};
    if (ek_vec_push(&o->segs, cont))
        return EK_ERR_NOMEM;
    c->next = NULL;
    c->last = (uint8_t)last;
    pthread_mutex_lock(&o->mu);
    if (o->last)
        o->last->next = c;
    else
        o->first = c;
    o->last = c;
    o->bytes += c->len;
    if (last)
        o->done = 1;
    if (o->writer_waits)
        pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->mu);
    return 0;
}

qchunk *qout_peek(qout *o, const qidle *idle)
{
    if (idle) idle->fn(idle->ctx);
    pthread_mutex_lock(&o->mu);
    while (!o->first && !o->done) {
        o->writer_waits++;
        if (!idle) {
            pthread_cond_wait(&o->cv, &o->mu);
        } else {
            struct timespec t;
            clock_gettime(CLOCK_MONOTONIC, &t);
            t.tv_nsec += QIDLE_MS * 1000000L;
            if (t.tv_nsec >= 1000000000L) {
                t.tv_sec++;
                t.tv_nsec -= 1000000000L;
            }
            if (pthread_cond_timedwait(&o->cv, &o->mu, &t) == ETIMEDOUT) {
                pthread_mutex_unlock(&o->mu);
                idle->fn(idle->ctx);
                pthread_mutex_lock(&o->mu);
            }
        }
        o->writer_waits--;
    }
    qchunk *c = o->first;
    pthread_mutex_unlock(&o->mu);
    return c;
}

void qout_pop(qout *o)
{
    pthread_mutex_lock(&o->mu);
    qchunk *c = o->first;
    if (c) {
        o->first = c->next;
        if (!o->first)
            o->last = NULL;
        o->bytes -= c->len;
        /* keep a couple of buffers for reuse */
        unsigned n = 0;
        for (qchunk *s = o->spare; s; s = s->next)
            n++;
        if (n < 4 && !c->last) {
            c->next = o->spare;
            o->spare = c;
            c = NULL;
        }
    }
    if (o->decoder_waits)
        pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->mu);
    chunk_free(c);
}

/* A new epoch of this queue with perf's heap key. An empty epoch still counts (it moves perf's
 * heap), except our own one for the elements before the first time stamp. */
static int out_epoch(qjob *j, uint64_t key)
{
    if (!j->fmt || !j->fmt->emit) return 0; /* no output at all: no epochs for the writer */
    qout *o = j->out;
    int pre = j->pre_epoch;
    j->pre_epoch = 0;
    /* where the epoch's output starts: here, or (direct) where the elements processed since
     * the last stop began theirs */
    size_t at = j->direct ? j->mark : o->cur.len;
    qseg *cur = &o->segs.v[o->segs.n - 1];
    if (cur->off == at && (pre || (!cur->head && o->segs.n == 1))) {
        /* nothing in the current segment yet: it becomes the new epoch's head */
        cur->key = key;
        cur->head = 1;
        return 0;
    }
    qseg n = {at, key, 1};
    return ek_vec_push(&o->segs, n) ? EK_ERR_NOMEM : 0;
}

/* ---- code access ----------------------------------------------------------------------------- */

static int is_kernel_addr(uint64_t addr)
{
    return (addr >> 63) != 0;
}

/* The map and DSO bytes for addr as thread pid saw it during (t_lo, t_hi]. */
static int code_at(ek_session *s, uint64_t t_lo, uint64_t t_hi, int has_t, uint64_t t,
                   qresult *res, int32_t pid, uint64_t addr, ek_mem_span *out, int *kind,
                   as_dso **dso_out, int *ambiguous, uint64_t *valid_to)
{
    int how = 0;
    int kernel = is_kernel_addr(addr);
    const as_map *m = as_find(s->as, kernel ? AS_KERNEL_PID : pid, addr, t_lo, t_hi, has_t, t,
                              &how);
    if (ambiguous && !*ambiguous) {
        /* does the choice depend on the time? then time stamps must refresh the decoder */
        int how2 = how;
        if (how == AS_HIT_EXACT || how == AS_HIT_NEAREST)
            as_find(s->as, kernel ? AS_KERNEL_PID : pid, addr, t_lo, t_hi, 0, 0, &how2);
        if (how2 == AS_HIT_AMBIGUOUS)
            *ambiguous = 1;
    }
    if (valid_to && m && how == AS_HIT_EXACT && m->t_to < *valid_to)
        *valid_to = m->t_to;
    if (valid_to && m && how == AS_HIT_NEAREST && m->t_from > t && m->t_from < *valid_to)
        *valid_to = m->t_from; /* from then on it is the one valid at the time */
    *dso_out = NULL;
    dso_span sp;
    if (!m) {
        /* a kernel image given on the command line may hold code no map names */
        const as_dso *k = dso_reg_kernel(s->reg);
        if (kernel && k && dso_code(k, addr, &sp)) {
            out->start = sp.off;
            out->size = sp.size;
            out->data = sp.data;
            return 1;
        }
        *kind = kernel ? MISS_NO_KMAP : MISS_NO_MAP;
        return 0;
    }
    if (res) {
        if (how == AS_HIT_AMBIGUOUS)
            res->ambiguous++;
        else if (how == AS_HIT_LATE)
            res->late++;
    }
    as_dso *d = m->dso;
    *dso_out = d;
    if (!d) {
        *kind = MISS_DSO;
        return 0;
    }
    d->used = 1;
    switch (d->kind) {
    case DSO_KERNEL:
        if (d->status != DSO_OK) {
            *kind = MISS_KERNEL;
            return 0;
        }
        if (!dso_code(d, addr, &sp)) {
            *kind = MISS_OUTSIDE;
            return 0;
        }
        out->start = sp.off;
        out->size = sp.size;
        out->data = sp.data;
        return 1;
    case DSO_KMODULE:
        if (d->status == DSO_OK && d->et_rel) {
            if (!dso_code(d, addr - m->start, &sp)) {
                *kind = MISS_OUTSIDE;
                return 0;
            }
            out->start = m->start + sp.off;
            out->size = sp.size;
            if (out->start + out->size > m->end)
                out->size = m->end > out->start ? m->end - out->start : 0;
            out->data = sp.data;
            return out->size != 0;
        }
        {
            /* no usable .ko: a kernel image (kcore) may still hold the module's code */
            const as_dso *k = dso_reg_kernel(s->reg);
            if (k && k->status == DSO_OK && dso_code(k, addr, &sp)) {
                out->start = sp.off;
                out->size = sp.size;
                out->data = sp.data;
                return 1;
            }
        }
        *kind = MISS_DSO;
        return 0;
    case DSO_USER:
    case DSO_JIT: {
        if (d->status != DSO_OK) {
            *kind = MISS_DSO;
            return 0;
        }
        uint64_t off = m->pgoff + (addr - m->start);
        if (m->pgoff >= d->size || off >= d->size) {
            *kind = MISS_OUTSIDE;
            return 0;
        }
        uint64_t n = m->end - m->start;
        if (n > d->size - m->pgoff)
            n = d->size - m->pgoff;
        out->start = m->start;
        out->size = n;
        out->data = d->bytes + m->pgoff;
        return 1;
    }
    default:
        *kind = MISS_DSO;
        return 0;
    }
}

static int mem_find(void *ctx, uint64_t addr, uint32_t space, uint8_t trace_id, ek_mem_span *out)
{
    (void)space;
    (void)trace_id;
    idst *d = ctx;
    qjob *j = d->j;
    int kind = 0;
    as_dso *dso = NULL;
    if (code_at(j->s, j->t_lo, j->t_hi, d->mem_has_t, d->mem_t, j->res, d->mem_pid, addr, out,
                &kind, &dso, &d->time_matters, &d->next_change))
        return 1;
    d->miss_kind = kind;
    d->miss_pid = is_kernel_addr(addr) ? AS_KERNEL_PID : d->mem_pid;
    d->miss_dso = dso;
    d->miss_addr = addr;
    return 0;
}

static uint64_t mem_gen(void *ctx)
{
    return ((idst *)ctx)->gen;
}

/* Code bytes for the synthesiser (SVC checks, instruction bytes), as the sample's thread saw
 * them. */
static size_t synth_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
    idst *d = ctx;
    qjob *j = d->j;
    ek_mem_span sp;
    int kind;
    as_dso *dso;
    if (!code_at(j->s, j->t_lo, j->t_hi, d->out_has_t, d->out_t, NULL, d->pid, addr, &sp, &kind,
                 &dso, NULL, NULL))
        return 0;
    uint64_t o = addr - sp.start;
    if (o >= sp.size)
        return 0;
    if (len > sp.size - o)
        len = (size_t)(sp.size - o);
    memcpy(buf, sp.data + o, len);
    return len;
}

/* ---- addresses to text ----------------------------------------------------------------------- */

static void resolve(void *ctx, const ek_sample *smp, uint64_t addr, int fallback, ek_addr_loc *out)
{
    rctx *c = ctx;
    rcache *rc = c->cache;
    (void)fallback;
    /* perf looks in the sample's cpumode (from the address) and, for branch targets, falls
     * back to the other one; here kernel maps only hold kernel addresses and user maps only
     * user ones (perf lets a kernel map recorded as [0, ~0) or a module's stray section
     * claim user addresses and 0). */
    int kernel = is_kernel_addr(addr);
    int32_t pid = kernel ? AS_KERNEL_PID : smp->pid;
    const as_map *m = NULL;
    if (rc)
        for (unsigned i = 0; i < RC_MAPS; i++) {
            const as_map *x = rc->m[i].map;
            if (x && rc->m[i].pid == pid && addr >= x->start && addr < x->end &&
                rc->m[i].t_lo == c->t_lo && rc->m[i].t_hi == c->t_hi) {
                m = x;
                if (c->has_t) {
                    /* the window's only map: the answer for any t in the window and in its life */
                    uint64_t lo = x->t_from > c->t_lo + 1 ? x->t_from : c->t_lo + 1;
                    uint64_t hi = c->t_hi == UINT64_MAX ? x->t_to
                                  : x->t_to < c->t_hi + 1 ? x->t_to : c->t_hi + 1;
                    if (lo > c->v_lo)
                        c->v_lo = lo;
                    if (hi < c->v_hi)
                        c->v_hi = hi;
                }
                break;
            }
        }
    if (!m) {
        int how;
        uint64_t v_lo, v_hi;
        m = as_find_ex(c->s->as, pid, addr, c->t_lo, c->t_hi, c->has_t, c->t, &how, &v_lo,
                       &v_hi);
        if (v_lo > c->v_lo)
            c->v_lo = v_lo;
        if (v_hi < c->v_hi)
            c->v_hi = v_hi;
        /* only a map that is the only choice during the window can be remembered */
        if (rc && m && how == AS_HIT_WINDOW) {
            unsigned k = rc->mnext++ % RC_MAPS;
            rc->m[k].map = m;
            rc->m[k].pid = pid;
            rc->m[k].t_lo = c->t_lo;
            rc->m[k].t_hi = c->t_hi;
        }
    }
    if (!m || !m->dso)
        return;
    as_dso *d = m->dso;
    out->dso = d->print_name;
    out->dso_len = d->print_len;
    uint64_t key = d->syms_key == DSO_KEY_ABS      ? addr
                   : d->syms_key == DSO_KEY_MAPOFF ? addr - m->start
                                                   : m->pgoff + (addr - m->start);
    if (rc)
        for (unsigned n = 0; n < RC_SYMS; n++) {
            /* start at the last hit: samples alternate between a few functions */
            unsigned i = (rc->hit + n) % RC_SYMS;
            if (rc->sym[i].dso == d && key >= rc->sym[i].lo && key < rc->sym[i].hi) {
                rc->hit = i;
                out->sym = rc->sym[i].name;
                out->sym_len = rc->sym[i].len;
                out->symoff = key - rc->sym[i].start;
                return;
            }
        }
    uint64_t lo = 0, hi = 0, start = 0;
    const char *name = dso_symbol_range(d, key, &start, &lo, &hi);
    out->sym = name;
    out->symoff = key - start;
    if (rc && name && hi > lo) {
        unsigned k = rc->next++ % RC_SYMS;
        rc->sym[k].dso = d;
        rc->sym[k].lo = lo;
        rc->sym[k].hi = hi;
        rc->sym[k].start = start;
        rc->sym[k].name = name;
        rc->sym[k].len = (uint32_t)strlen(name);
        out->sym_len = rc->sym[k].len;
    }
}

static const char *comm_of(void *ctx, const ek_sample *smp)
{
    rctx *c = ctx;
    c->unstable = 1;
    return as_comm_at(c->s->as, smp->tid, smp->has_time ? smp->time : c->t_hi);
}

ek_script_resolver qdecode_resolver(rctx *c)
{
    ek_script_resolver r = {resolve, comm_of, c};
    return r;
}

/* ---- samples --------------------------------------------------------------------------------- */

static int on_sample(void *ctx, const ek_sample *smp)
{
    idst *d = ctx;
    qjob *j = d->j;
    if (smp->kind == EK_SAMPLE_BRANCHES)
        j->res->branches++;
    else
        j->res->instrs_samples++;
    if (!j->fmt || !j->fmt->emit)
        return 0;
    const ek_sample_filter *flt = j->s->o.filter;
    if (flt) {
        /* the thread's name as the output gives it (the resolver's) */
        const char *comm = NULL;
        if (flt->ncomms) {
            rctx c = {j->s, j->t_lo, j->t_hi, NULL, d->out_has_t, d->out_t, 0, 0, UINT64_MAX};
            ek_script_resolver r = qdecode_resolver(&c);
            comm = r.comm(r.ctx, smp);
        }
        if (!ek_sample_filter_match(flt, smp, comm)) {
            if (j->s->o.itrace.initial_skip && j->fmt->hole) {
                j->fmt->hole(&j->out->cur);
                if (j->out->cur.len >= QOUT_CHUNK && !j->direct) return out_flush(j->out, 0);
            }
            return 0;
        }
    }
    ek_sbuf *out = &j->out->cur;
    lcache_ent *le = NULL;
    lc_key key;
    if (j->lc) {
        key.ip = smp->ip;
        key.addr = smp->addr;
        key.flags = smp->flags;
        key.pid = smp->pid;
        key.tid = smp->tid;
        key.cpu = smp->cpu;
        key.kind = smp->kind;
        key.has_t = (uint8_t)(d->out_has_t != 0);
        /* With a time for the sample the resolver's answers depend on that time alone (the
         * map valid at it; [v_lo, v_hi) says for which times), not on the slice's window: such
         * a line is good in later slices too. Without one, only in its own slice. */
        key.block = key.has_t ? 0 : j->lc->block;
        key.zero = 0;
        /* every field spread over the high bits, which pick the slot (samples that differ
         * only in their thread, as processes running the same code, must not collide) */
        uint64_t h = smp->ip * 0x9e3779b97f4a7c15ull + smp->addr * 0xc2b2ae3d27d4eb4full +
                     (uint64_t)(uint32_t)smp->tid * 0x165667b19e3779f9ull +
                     (((uint64_t)smp->flags << 32) ^ ((uint64_t)(uint32_t)smp->cpu << 8) ^
                      smp->kind) * 0xd6e8feb86659fd93ull;
        size_t set = (size_t)((h ^ (h >> 32)) >> (64 - LC_BITS)) & ~(size_t)1;
        lcache_ent *e0 = &j->lc->e[set];
        size_t slot = set;
        int way = -1;
        for (int w = 0; w < 2; w++) {
            lcache_ent *x = e0 + w;
            if (x->len && lc_key_eq(&x->k, &key) &&
                (!key.has_t || (d->out_t >= x->v_lo && d->out_t < x->v_hi))) {
                way = w;
                break;
            }
        }
        if (way >= 0) {
            slot = set + (size_t)way;
            le = e0 + way;
            e0->recent = (uint8_t)way;
            j->lc->hits++;
            /* the whole slot is copied (a fixed size: no call), the length counts */
            if (out->cap - out->len > LC_TEXT || !ek_sbuf_reserve(out, LC_TEXT)) {
                memcpy(out->p + out->len, j->lc->text[slot], LC_TEXT);
                out->len += le->len;
                out->p[out->len] = 0;
            }
            goto written;
        }
        j->lc->misses++;
        /* the line made now goes to the entry used less recently */
        way = !e0->recent;
        le = e0 + way;
        e0->recent = (uint8_t)way;
    }
    rctx c = {j->s, j->t_lo, j->t_hi, &j->rcache, d->out_has_t, d->out_t, 0, 0, UINT64_MAX};
    ek_script_resolver r = qdecode_resolver(&c);
    size_t start = out->len;
    j->fmt->emit(j->fmt->ctx, out, smp, &r, j->t_lo, j->t_hi);
    if (le) {
        size_t n = out->len - start;
        if (!c.unstable && c.v_lo < c.v_hi && n > 0 && n <= LC_TEXT && !out->oom) {
            le->k = key;
            le->v_lo = c.v_lo;
            le->v_hi = c.v_hi;
            le->len = (uint16_t)n;
            memcpy(j->lc->text[le - j->lc->e], out->p + start, n);
        } else {
            le->len = 0;
        }
    }
written:
    if (j->out->cur.len >= QOUT_CHUNK && !j->direct)
        return out_flush(j->out, 0);
    return 0;
}

/* ---- trace IDs -------------------------------------------------------------------------------- */

static int32_t pid_for_tid(qjob *j, int32_t tid)
{
    int32_t pid = as_pid_of(j->s->as, tid);
    return pid >= 0 ? pid : tid;
}

/* The decode tree makes a trace ID's decoders the first time the ID carries data: this is
 * where the queue's state for the ID is made (the source from the slice's trace ID map, or the
 * queue's CPU for raw trace; sample synthesis; the thread before any context packet), and the
 * code the flow decoder reads is this ID's view of the address space. */
static int id_make(void *ctx, unsigned id, int source, ek_flow_mem *mem)
{
    qjob *j = ctx;
    (void)source;
    if (id >= 128) return EK_ERR_ARG;
    idst *d = j->ids[id];
    if (!d) {
        if (!(d = calloc(1, sizeof *d))) return EK_ERR_NOMEM;
        j->ids[id] = d;
    }
    d->j = j;
    d->id = (uint8_t)id;
    d->pid = d->tid = d->mem_pid = d->dec_tid = -1;
    d->cpu = -1;
    d->next_change = UINT64_MAX;
    const ek_perf_cs_etm *cs = j->s->cs;
    if (j->sl && j->sl->formatted) {
        const ek_perf_idmap *im = j->sl->idmap;
        if (im && im->block[id] >= 0 && (size_t)im->block[id] < cs->ncpus) {
            d->etm = &cs->cpus[im->block[id]];
            d->cpu = im->cpu[id];
        }
    } else {
        d->etm = j->q->etm;
        if (d->etm)
            d->cpu = (int32_t)d->etm->cpu;
    }
    if (!d->etm) return EK_ERR_ARG; /* (the tree binds only IDs that have a configuration) */
    d->pid_source = d->etm->pid_source;
    mem->find = mem_find;
    mem->generation = mem_gen;
    mem->ctx = d;
    ek_synth_config sc;
    ek_synth_config_init(&sc);
    /* --itrace=sN counts the session's output, not a trace source's: the writer skips */
    ek_itrace it = j->s->o.itrace;
    it.initial_skip = 0;
    sc.itrace = &it;
    sc.protocol = d->etm->cfg.protocol;
    sc.cpu = d->cpu;
    sc.trace_id = (uint8_t)id;
    sc.io.read = synth_read;
    sc.io.sample = on_sample;
    sc.io.ctx = d;
    sc.no_insn = j->s->no_insn;
    int rc = ek_synth_new(&sc, &d->synth);
    if (rc) return rc;
    /* the thread before any context ID: per-thread queue, else the CPU's switch records,
     * else the AUX record's */
    int32_t pid = -1, tid = -1;
    if (j->q->per_thread) {
        tid = (int32_t)j->q->tid;
        pid = pid_for_tid(j, tid);
    } else if (!session_cpu_thread(j->s, d->cpu, j->t_lo, &pid, &tid) && j->sl &&
               (j->sl->sid.present & EK_PERF_SAMPLE_TID)) {
        pid = (int32_t)j->sl->sid.pid;
        tid = (int32_t)j->sl->sid.tid;
    }
    d->pid = d->mem_pid = pid;
    d->tid = d->dec_tid = tid;
    ek_synth_set_thread(d->synth, pid, tid);
    d->ok = 1;
    return 0;
}

static void id_free(idst *d)
{
    if (!d) return;
    ek_synth_free(d->synth);
    ek_vec_free(&d->q);
    free(d);
}

/* The thread a context packet names (pid source per TRCCONFIGR), or -1. */
static int32_t ctx_tid(const idst *d, uint32_t cid, int cid_valid, uint32_t vmid, int vmid_valid)
{
    switch (d->pid_source) {
    case EK_PID_CONTEXTIDR_EL1:
        return cid_valid ? (int32_t)cid : -1;
    case EK_PID_CONTEXTIDR_EL2:
        return vmid_valid ? (int32_t)vmid : -1;
    default:
        return -1;
    }
}

/* ---- the element stream of a block ------------------------------------------------------------ */

/* Account for the element when it is decoded (NACC reasons, gaps, instructions). */
static void account_nacc(idst *d, const ek_elem *e)
{
    qjob *j = d->j;
    {
        j->res->nacc++;
        if (d->miss_addr != e->st_addr) {
            /* not the read we saw fail: ask again why this address has no code */
            ek_mem_span sp;
            d->miss_kind = MISS_OUTSIDE;
            d->miss_dso = NULL;
            if (!code_at(j->s, j->t_lo, j->t_hi, d->mem_has_t, d->mem_t, NULL, d->mem_pid,
                         e->st_addr, &sp, &d->miss_kind, &d->miss_dso, NULL, NULL))
                d->miss_pid = is_kernel_addr(e->st_addr) ? AS_KERNEL_PID : d->mem_pid;
            d->miss_addr = e->st_addr;
        }
        miss *m = qresult_miss(j->res, d->miss_kind, d->miss_pid, d->miss_dso, e->st_addr,
                               e->index);
        if (m) {
            m->count++;
            if (!d->in_gap) ek_decode_watch(j->dt, d->id, 1);
            d->in_gap = 1;
            d->gap_miss = (size_t)(m - j->res->misses.v);
        }
        if (d->miss_dso) d->miss_dso->nacc++;
    }
}

EK_HOT void account(idst *d, const ek_elem *e)
{
    qjob *j = d->j;
    j->res->elements++;
    if (e->type == EK_ELEM_INSTR_RANGE) {
        if (d->in_gap) {
            d->in_gap = 0;
            ek_decode_watch(j->dt, d->id, d->notsync);
        }
        j->res->instructions += e->num_instr;
    } else if (e->type == EK_ELEM_ADDR_NACC) {
        account_nacc(d, e);
    }
}

/* A flow decoder's new elements, as they are decoded (the tree's elements hook): accounted for,
 * and the decoder's notion of time moved on, before the next packet is parsed. */
static void on_elems(void *ctx, unsigned id, const ek_elem *e, size_t n)
{
    qjob *j = ctx;
    idst *d = j->ids[id & 127];
    for (size_t i = 0; i < n; i++) {
        account(d, &e[i]);
        if (e[i].type == EK_ELEM_INSTR_RANGE && d->mem_has_t) {
            d->mem_instr += e[i].num_instr;
            d->mem_t = d->mem_base_t + d->mem_instr;
            if (d->mem_t >= d->next_change) {
                d->next_change = UINT64_MAX;
                d->gen++; /* the map the decoder reads from was replaced by now */
            }
        }
    }
}

/* A packet, before the flow decoder has it: what it costs or gives the account, and what it
 * changes for the code reads that decoding it may make (time, thread). */
static void on_packet(void *ctx, unsigned id, const ek_decode_packet *p)
{
    qjob *j = ctx;
    idst *d = j->ids[id & 127];
    /* (the packets and bytes come from the tree's counters at the end; the bytes that did not
     * feed instruction flow are counted here: the tree shows this hook the packets with the
     * flags below, and every packet while the ID is in a run of unsynchronised bytes or in
     * code that could not be read) */
    if (p->flags & EK_DPKT_NOTSYNC) {
        qresult_gap(j->res, "bytes before the first synchronisation packet", p->size, p->index);
        j->nd_bytes += p->size;
        if (d->notsync)
            for (size_t g = 0; g < j->res->gaps.n; g++)
                if (!strcmp(j->res->gaps.v[g].kind,
                            "bytes before the first synchronisation packet"))
                    j->res->gaps.v[g].count--; /* one place per run */
        d->notsync = 1;
        ek_decode_watch(j->dt, id, 1);
    } else {
        if (d->notsync) {
            d->notsync = 0;
            ek_decode_watch(j->dt, id, d->in_gap);
        }
        if (p->flags & (EK_DPKT_ERROR | EK_DPKT_UNSYNCED)) {
            qresult_gap(j->res, "malformed or reserved packets", p->size, p->index);
            j->nd_bytes += p->size;
        } else if (d->in_gap && d->gap_miss < j->res->misses.n) {
            j->res->misses.v[d->gap_miss].bytes += p->size;
            j->nd_bytes += p->size;
        }
    }
    if (p->flags & EK_DPKT_TIMESTAMP) {
        uint64_t t;
        if (session_ts_time(j->s, p->timestamp, j->t_lo, j->t_hi, &t)) {
            d->mem_t = d->mem_base_t = t;
            d->mem_instr = 0;
            d->mem_has_t = 1;
            if (d->time_matters)
                d->gen++; /* the map a code read picks may change with the time */
        }
    }
    if (p->flags & EK_DPKT_CONTEXT) {
        /* the decoder reads the new thread's code from here on */
        int32_t tid = ctx_tid(d, p->context_id, (p->flags & EK_DPKT_CID_VALID) != 0, p->vmid,
                              (p->flags & EK_DPKT_VMID_VALID) != 0);
        int32_t pid = tid >= 0 ? pid_for_tid(j, tid) : d->mem_pid;
        if (pid != d->mem_pid) {
            d->mem_pid = pid;
            d->gen++;
        }
    }
}

/* Refill the pending list from the block's bytes. Returns 0 with pend non-empty, or 1 when the
 * block is used up (its partial packets flushed: perf never tells its decoder that a block
 * ended, and the next block starts with a reset; the decoders are not ended). */
EK_HOT int refill(qjob *j)
{
    while (j->ph >= j->pn) {
        if (j->block_ended)
            return 1;
        ek_decode_item it;
        int r = ek_decode_next(j->dt, &it);
        if (r < 0) return r;
        if (r == 0) {
            j->pv = NULL;
            j->pn = j->ph = 0;
            if (j->flushed) {
                j->block_ended = 1;
            } else {
                ek_decode_flush(j->dt);
                j->flushed = 1;
            }
            continue;
        }
        idst *d = j->ids[it.trace_id & 127];
        switch (it.kind) {
        case EK_DI_ELEMS:
            /* (already accounted for by on_elems) */
            j->pv = it.elems;
            j->pn = it.count;
            j->ph = 0;
            break;
        case EK_DI_RESET:
            /* a fresh decoder for every block, as perf resets its decoder between buffers */
            d->gen++;
            break;
        case EK_DI_UNDECODED:
            if (it.why == EK_DECODE_NO_ID) {
                /* The null ID (0x00) is the formatter's padding: a sink that stops or is
                 * flushed mid-frame fills the rest of the frame with it (every `etmkit gen` ETR
                 * and ETF does, as do the real ones). Like the frame headers, it is overhead,
                 * not lost trace. */
                if (it.trace_id == EK_TRACE_ID_NULL) break;
                if (it.trace_id == EK_TRACE_ID_UNKNOWN)
                    qresult_gap(j->res, GAP_NO_ID, it.len, it.index);
                else
                    qresult_gap(j->res, "formatter data under a reserved trace ID (0x70-0x7f)",
                                it.len, it.index);
                j->res->noid_bytes += it.len;
            } else {
                qresult_gap(j->res, "trace ID without configuration", it.len, it.index);
                j->res->data_bytes += it.len;
            }
            break;
        case EK_DI_FRAME_ERROR: qresult_gap(j->res, "bad formatter frames", 16, it.index); break;
        default:
            break;
        }
    }
    return 0;
}

/* The trace bytes of a decoded block are not needed again: let the kernel drop their pages
 * from our mapping of the file (they are read back if anything touches them again), so that
 * a large recording does not stay resident. */
static void block_release(qjob *j)
{
    if (!j->rel_data || !j->rel_len)
        return;
    if (j->s->o.progress)
        atomic_fetch_add_explicit(&j->s->progress_done, j->rel_len, memory_order_relaxed);
    uintptr_t a = (uintptr_t)j->rel_data, e = a + j->rel_len;
    uintptr_t pg = 4096;
    a = (a + pg - 1) & ~(pg - 1);
    e &= ~(pg - 1);
    if (e > a)
        madvise((void *)a, e - a, MADV_DONTNEED);
    j->rel_data = NULL;
    j->rel_len = 0;
}

/* Load the next slice as the current block; 0 when there is none. */
static int load_block(qjob *j)
{
    block_release(j);
    j->pv = NULL;
    j->pn = j->ph = 0;
    while (j->slice < j->q->nslices) {
        const ek_perf_slice *sl = &j->q->slices[j->slice++];
        j->sl = sl;
        uint64_t key = sl->aux < j->s->aux_keys.n ? j->s->aux_keys.v[sl->aux] : j->prev_key;
        j->t_lo = j->prev_key;
        j->t_hi = key;
        j->prev_key = key;
        size_t len = 0;
        const uint8_t *data = ek_perf_slice_data(j->s->pf, sl, &len);
        if (!data || !len)
            continue;
        j->res->trace_bytes += len;
        j->rel_data = data;
        j->rel_len = len;
        if (j->lc && !++j->lc->block)
            j->lc->block = 1;
        for (int id = 0; id < 128; id++)
            if (j->ids[id]) {
                j->ids[id]->gen++;
                j->ids[id]->mem_has_t = j->ids[id]->out_has_t = 0;
                j->ids[id]->time_matters = 0;
                j->ids[id]->next_change = UINT64_MAX;
            }
        j->block_ended = 0;
        j->flushed = 0;
        j->in_block = 1;
        /* the slice's trace IDs (formatted) or CPU (raw); every decoder starts again at its
         * next data */
        int raw = ek_decode_bind_perf_slice(j->dt, j->s->cs, j->q, sl);
        ek_decode_reset(j->dt);
        if (raw < 0) {
            qresult_gap(j->res, "raw trace without CPU configuration", len, sl->data_offset);
            j->flushed = j->block_ended = 1;
            return 1;
        }
        ek_decode_feed(j->dt, data, len, sl->data_offset);
        return 1;
    }
    j->in_block = 0;
    return 0;
}

/* ---- perf's front end --------------------------------------------------------------------------- */

/* Process one element in sample synthesis (perf: one packet of the traceID queue). */
static int process_elem(idst *d, const ek_elem *e)
{
    qjob *j = d->j;
    switch (e->type) {
    case EK_ELEM_PE_CONTEXT: {
        int32_t tid = ctx_tid(d, e->context.context_id, e->context.ctxt_id_valid, e->context.vmid,
                              e->context.vmid_valid);
        if (tid >= 0 && tid != d->tid) {
            d->tid = tid;
            d->pid = pid_for_tid(j, tid);
            ek_synth_set_thread(d->synth, d->pid, d->tid);
        }
        return 0;
    }
    case EK_ELEM_TIMESTAMP: {
        uint64_t t;
        if (session_ts_time(j->s, e->timestamp, j->t_lo, j->t_hi, &t)) {
            d->out_t = d->out_base_t = t;
            d->out_instr = 0;
            d->out_has_t = 1;
        }
        if (j->s->ts_convert && j->s->tc) {
            ek_synth_set_time(d->synth, ek_perf_counter_to_time(j->s->tc, e->timestamp));
        } else if (!j->timeless && j->s->has_time) {
            /* no conversion: the AUX record's time, as perf */
            ek_synth_set_time(d->synth, j->t_hi);
        }
        return 0;
    }
    case EK_ELEM_INSTR_RANGE:
        if (d->out_has_t) {
            d->out_instr += e->num_instr;
            d->out_t = d->out_base_t + d->out_instr;
        }
        return ek_synth_elem(d->synth, e);
    default:
        return ek_synth_elem(d->synth, e);
    }
}

static int process_queue_of(idst *d)
{
    int rc = 0;
    /* (processing never adds to d->q: the elements are read in place) */
    while (d->qhead < d->q.n && !rc)
        rc = process_elem(d, &d->q.v[d->qhead++]);
    d->q.n = d->qhead = 0;
    d->npk = 0;
    return rc;
}

static int process_all(qjob *j)
{
    for (int id = 0; id < 128; id++) {
        idst *d = j->ids[id];
        if (d && d->ok) {
            int rc = process_queue_of(d);
            if (rc)
                return rc;
        }
    }
    return 0;
}

static int is_packet(const ek_elem *e)
{
    switch (e->type) {
    case EK_ELEM_NO_SYNC:
    case EK_ELEM_TRACE_ON:
    case EK_ELEM_EO_TRACE:
    case EK_ELEM_INSTR_RANGE:
    case EK_ELEM_EXCEPTION:
    case EK_ELEM_EXCEPTION_RET:
    case EK_ELEM_ADDR_NACC:
    case EK_ELEM_I_RANGE_NOPATH:
        return 1;
    default:
        return 0;
    }
}

/* perf's decoder callback for one element (cs_etm_decoder__gen_trace_elem_printer): queue it
 * for its trace ID (direct: process it now) and keep CoreSight time; 1 = stop the decoder here
 * (OCSD_RESP_WAIT), negative: an error status. */
static int feed(qjob *j, idst *d, const ek_elem *e)
{
    int wait = 0;
    switch (e->type) {
    case EK_ELEM_NO_SYNC:
    case EK_ELEM_TRACE_ON:
    case EK_ELEM_EO_TRACE:
        d->cs_ts = d->next_cs_ts = d->instr_count = 0;
        break;
    case EK_ELEM_TIMESTAMP:
        if (j->timeless)
            break;
        if (d->cs_ts) {
            d->next_cs_ts = e->timestamp;
            break;
        }
        d->cs_ts = !e->timestamp || d->instr_count > e->timestamp ? 0
                                                                   : e->timestamp - d->instr_count;
        d->next_cs_ts = e->timestamp;
        d->instr_count = 0;
        j->pending_chan = d->id;
        wait = 1;
        break;
    case EK_ELEM_PE_CONTEXT: {
        int32_t tid = ctx_tid(d, e->context.context_id, e->context.ctxt_id_valid, e->context.vmid,
                              e->context.vmid_valid);
        if (tid >= 0) {
            d->dec_tid = tid;
            /* a time stamp follows a context change: rely on that one */
            d->cs_ts = d->next_cs_ts = d->instr_count = 0;
        }
        break;
    }
    default:
        break;
    }
    if (j->direct) {
        int rc = process_elem(d, e);
        if (rc)
            return rc < 0 ? rc : EK_ERR_ARG;
    } else if (ek_vec_push(&d->q, *e)) {
        return EK_ERR_NOMEM;
    }
    if (!is_packet(e) || e->type == EK_ELEM_ADDR_NACC || e->type == EK_ELEM_I_RANGE_NOPATH)
        return wait;
    int full = ++d->npk >= PKTQ_WAIT;
    if (e->type == EK_ELEM_INSTR_RANGE && !j->timeless && !full) {
        d->instr_count += e->num_instr;
        if (d->cs_ts) {
            d->cs_ts = d->next_cs_ts;
            d->next_cs_ts += d->instr_count;
            d->instr_count = 0;
            j->pending_chan = d->id;
            return 1;
        }
    }
    return full || wait;
}

/* Decode until perf's decoder would stop (a time stamp, a full packet queue) or the block's
 * end. Returns 0 (stopped or block used up: see j->block_ended), or a negative status. */
static int decode_block(qjob *j)
{
    for (;;) {
        if (j->ph >= j->pn) {
            int r = refill(j);
            if (r < 0)
                return r;
            if (r == 1)
                return 0;
        }
        const ek_elem *e = &j->pv[j->ph++];
        idst *d = j->ids[e->trace_id & 127];
        if (!d || !d->ok)
            continue;
        int w = feed(j, d, e);
        if (w < 0)
            return w;
        if (w) {
            /* look ahead: was that the block's last element? (then the next decode starts
             * a new block, as perf's buffer is used up) */
            int r = refill(j);
            return r < 0 ? r : 0;
        }
    }
}

static int block_done(qjob *j)
{
    return j->block_ended && j->ph >= j->pn;
}

/* The end of one block (timeless): perf's cs_etm__end_block for the trace IDs that ran. */
static int end_block(qjob *j)
{
    for (int id = 0; id < 128; id++) {
        idst *d = j->ids[id];
        if (d && d->ok && ek_decode_active(j->dt, (unsigned)id)) {
            int rc = ek_synth_end_block(d->synth);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* The end of the queue: the last-branch flush perf makes (cs_etm__end_block), then the end of
 * trace, which perf 6.1 never signals (see README.md: "End of trace"). */
static int end_queue(qjob *j, int end_blocks)
{
    j->pv = NULL;
    j->pn = j->ph = 0;
    if (j->s->o.compat & EK_COMPAT_NO_END_FLUSH) {
        for (int id = 0; id < 128 && end_blocks; id++) {
            idst *d = j->ids[id];
            if (d && d->ok && ek_decode_has_decoder(j->dt, (unsigned)id)) {
                int rc = ek_synth_end_block(d->synth);
                if (rc) return rc;
            }
        }
        return 0;
    }
    /* every decoder in trace ID order: its last-branch flush, then what it still holds */
    ek_decode_end(j->dt);
    ek_decode_item it;
    int r, last = -1;
    while ((r = ek_decode_next(j->dt, &it)) > 0) {
        idst *d = j->ids[it.trace_id & 127];
        int rc = 0;
        if (end_blocks && (int)it.trace_id != last) {
            last = it.trace_id;
            if ((rc = ek_synth_end_block(d->synth))) return rc;
        }
        if (it.kind == EK_DI_ELEMS) {
            /* (accounted for by on_elems as the decoder made them) */
            for (size_t i = 0; i < it.count && !rc; i++)
                rc = process_elem(d, &it.elems[i]);
            if (rc) return rc;
        }
    }
    return r;
}

/* direct: the output so far belongs where it is (its epoch is decided); what follows starts
 * at the new mark. A full buffer goes to the writer here, never between stops (the mark must
 * stay in the buffer being filled). */
static int settle(qjob *j)
{
    if (!j->direct)
        return 0;
    if (j->out->cur.len >= QOUT_CHUNK) {
        int rc = out_flush(j->out, 0);
        if (rc)
            return rc;
    }
    j->mark = j->out->cur.len;
    return 0;
}

static int run_timeless(qjob *j)
{
    int rc = 0;
    while (!rc && load_block(j)) {
        while (!rc && !block_done(j)) {
            rc = decode_block(j);
            if (!rc)
                rc = process_all(j);
            if (!rc)
                rc = settle(j);
        }
        if (!rc)
            rc = end_block(j);
    }
    if (!rc)
        rc = end_queue(j, 0);
    return rc;
}

/* The CoreSight time key the decoder stopped for, or 0 (perf: cs_etm__etmq_get_timestamp). */
static uint64_t take_ts(qjob *j, uint8_t *chan)
{
    if (!j->pending_chan)
        return 0;
    *chan = j->pending_chan;
    j->pending_chan = 0;
    idst *d = j->ids[*chan & 127];
    return d ? d->cs_ts : 0;
}

/* Decode on until a time stamp stops the decoder (its key in *key, 1) or the queue ends (0).
 * Whenever the decoder stops without a time stamp (end of a block, full packet queue), every
 * queued element is processed (perf: cs_etm__clear_all_traceid_queues). */
static int next_stop(qjob *j, uint64_t *key, uint8_t *chan)
{
    for (;;) {
        if (!j->in_block || block_done(j)) {
            if (!load_block(j))
                return 0;
        }
        int rc = decode_block(j);
        if (rc)
            return rc;
        uint64_t ts = take_ts(j, chan);
        if (ts) {
            *key = ts;
            return 1;
        }
        if ((rc = process_all(j)) || (rc = settle(j)))
            return rc;
    }
}

static int run_timed(qjob *j)
{
    uint64_t key = 0;
    uint8_t chan = 0;
    /* elements before the first time stamp: perf discards them; they ran before it, so they
     * come first (key 0) */
    int rc = out_epoch(j, 0);
    j->pre_epoch = 1;
    int r = rc ? rc : next_stop(j, &key, &chan);
    while (r == 1) {
        if ((rc = out_epoch(j, key)))
            return rc;
        idst *d = j->ids[chan & 127];
        if (d && (rc = process_queue_of(d)))
            return rc;
        if ((rc = settle(j)))
            return rc;
        r = next_stop(j, &key, &chan);
    }
    if (r < 0)
        return r;
    /* the end: process what is left, then perf's final end_block for every trace ID */
    if ((rc = process_all(j)))
        return rc;
    if ((rc = out_epoch(j, UINT64_MAX)))
        return rc;
    return end_queue(j, 1);
}

int qdecode_run(ek_session *s, size_t qi, const qfmt *fmt, qout *out, qresult *res)
{
    qjob *j = calloc(1, sizeof *j);
    if (!j)
        return EK_ERR_NOMEM;
    j->s = s;
    j->qi = qi;
    j->q = ek_perf_queue_at(s->pq, qi);
    j->fmt = fmt;
    j->out = out;
    j->res = res;
    j->timeless = s->timeless;
    /* raw trace (every slice unformatted: one trace ID) is processed as it is fed;
     * ETMKIT_NO_DIRECT=1 queues it as perf does (tests compare the two) */
    j->direct = j->q->nslices > 0 && !getenv("ETMKIT_NO_DIRECT");
    for (size_t i = 0; i < j->q->nslices && j->direct; i++)
        if (j->q->slices[i].formatted)
            j->direct = 0;
    ek_decode_config dc;
    ek_decode_config_init(&dc);
    dc.flags = EK_DECODE_ELEMS | EK_DECODE_UNDECODED | EK_DECODE_BATCH;
    dc.model = EK_DECODE_MODEL_PERF;
    dc.mem_for = id_make;
    dc.mem_ctx = j;
    dc.packet_hook = on_packet;
    dc.elems_hook = on_elems;
    dc.hook_ctx = j;
    dc.hook_flags =
        EK_DPKT_NOTSYNC | EK_DPKT_ERROR | EK_DPKT_UNSYNCED | EK_DPKT_TIMESTAMP | EK_DPKT_CONTEXT;
    dc.diag = &s->diag;
    dc.file = s->data_path;
    int rc = ek_decode_new(&dc, &j->dt);
    if (!rc) rc = ek_decode_add_perf_cpus(j->dt, s->cs);
    if (rc) {
        ek_decode_free(j->dt);
        free(j);
        return rc;
    }
    /* ETMKIT_NO_LINE_CACHE=1: every line formatted anew (tests compare the two) */
    if (fmt && fmt->cacheable && !getenv("ETMKIT_NO_LINE_CACHE"))
        j->lc = calloc(1, sizeof *j->lc); /* NULL: no cache, same output */
    rc = j->timeless ? run_timeless(j) : run_timed(j);
    free(j->lc);
    for (int id = 0; id < 128; id++) {
        ek_decode_source_stats st;
        if (ek_decode_source_stats_get(j->dt, (unsigned)id, &st) == 0) {
            res->errors += st.flow.errors;
            res->data_bytes += st.bytes;
            res->packets += st.packets;
            res->decoded_bytes += st.packet_bytes;
        }
        id_free(j->ids[id]);
    }
    res->decoded_bytes -= j->nd_bytes;
    ek_decode_free(j->dt);
    int frc = out_flush(out, 1);
    free(j);
    return rc ? rc : frc;
}
