/* Call stacks from branches samples (etmkit/stacks.h; the rules: docs/STACKS.md).
 *
 * One stack of return addresses per thread (per thread and trace source with per_source), in
 * an array that grows up to max_depth; one record per trace source (queue, CPU, trace ID)
 * remembering the thread of its last sample and whether that sample ended the trace, which
 * is how a context switch is seen: the branch where the thread of a source changes ran on the
 * previous thread's stack. Threads and sources are found through small open-addressing tables
 * of indices, so that neither moves when the tables grow.
 */
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "etmkit/isa.h"
#include "etmkit/stacks.h"

typedef struct th {
    int32_t pid, tid, cpu;
    uint32_t src; /* trace ID (per_source) */
    ek_stack_frame *f;
    uint32_t n, cap;
} th;

typedef struct src {
    uint32_t queue;
    int32_t cpu;
    uint32_t trace_id;
    int32_t last; /* thread of its last branches sample (-1: none) */
    int ended;    /* that sample ended the trace */
} src;

struct ek_stacks {
    uint32_t max_depth;
    int per_source;
    th *th;
    uint32_t nth, cth;
    uint32_t *thash; /* thread index + 1, 0: free */
    uint32_t thmask;
    src *src;
    uint32_t nsrc, csrc;
    uint32_t *shash;
    uint32_t smask;
    ek_stack_frame *vbuf; /* the view's copy of the frames (the stack moves after it) */
    uint32_t vcap;
    ek_stacks_stats st;
};

void ek_stacks_opts_init(ek_stacks_opts *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->max_depth = 1024;
}

int ek_stacks_new(const ek_stacks_opts *o, ek_stacks **out)
{
    *out = NULL;
    if (!o || o->size < sizeof *o)
        return EK_ERR_ARG;
    ek_stacks *st = calloc(1, sizeof *st);
    if (!st)
        return EK_ERR_NOMEM;
    st->max_depth = o->max_depth ? o->max_depth : 1;
    st->per_source = o->per_source;
    *out = st;
    return 0;
}

void ek_stacks_free(ek_stacks *st)
{
    if (!st)
        return;
    for (uint32_t i = 0; i < st->nth; i++)
        free(st->th[i].f);
    free(st->th);
    free(st->thash);
    free(st->src);
    free(st->shash);
    free(st->vbuf);
    free(st);
}

void ek_stacks_get_stats(const ek_stacks *st, ek_stacks_stats *out)
{
    *out = st->st;
    out->threads = st->nth;
}

/* ---- tables ---------------------------------------------------------------------------------- */

static uint32_t mix(uint64_t a, uint64_t b)
{
    uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull) * 0xc2b2ae3d27d4eb4full;
    return (uint32_t)(h ^ h >> 29 ^ h >> 47);
}

static uint32_t th_hash(int32_t pid, int32_t tid, int32_t cpu, uint32_t srcid)
{
    return mix((uint64_t)(uint32_t)pid << 32 | (uint32_t)tid, (uint64_t)(uint32_t)cpu << 32 | srcid);
}

static uint32_t src_hash(uint32_t queue, int32_t cpu, uint32_t trace_id)
{
    return mix(queue, (uint64_t)(uint32_t)cpu << 32 | trace_id);
}

/* Grow an index table to twice its size (at least 16), re-placing every entry. */
static int rehash(uint32_t **tab, uint32_t *mask, uint32_t n, uint32_t (*hash_of)(const ek_stacks *, uint32_t),
                  const ek_stacks *st)
{
    uint32_t size = *tab ? (*mask + 1) * 2 : 16;
    uint32_t *t = calloc(size, sizeof *t);
    if (!t)
        return EK_ERR_NOMEM;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t h = hash_of(st, i) & (size - 1);
        while (t[h])
            h = (h + 1) & (size - 1);
        t[h] = i + 1;
    }
    free(*tab);
    *tab = t;
    *mask = size - 1;
    return 0;
}

static uint32_t th_hash_of(const ek_stacks *st, uint32_t i)
{
    const th *t = &st->th[i];
    return th_hash(t->pid, t->tid, t->cpu, t->src);
}

static uint32_t src_hash_of(const ek_stacks *st, uint32_t i)
{
    const src *s = &st->src[i];
    return src_hash(s->queue, s->cpu, s->trace_id);
}

/* The thread a sample names (created empty when new); -1 on no memory. */
static int32_t thread_of(ek_stacks *st, const ek_sample *s)
{
    int32_t cpu = st->per_source ? s->cpu : 0;
    uint32_t srcid = st->per_source ? s->trace_id : 0;
    uint32_t h = th_hash(s->pid, s->tid, cpu, srcid);
    if (st->thash)
        for (uint32_t k = h & st->thmask; st->thash[k]; k = (k + 1) & st->thmask) {
            th *t = &st->th[st->thash[k] - 1];
            if (t->pid == s->pid && t->tid == s->tid && t->cpu == cpu && t->src == srcid)
                return (int32_t)(st->thash[k] - 1);
        }
    if (st->nth == st->cth) {
        uint32_t nc = st->cth ? st->cth * 2 : 16;
        th *n = realloc(st->th, nc * sizeof *n);
        if (!n)
            return -1;
        st->th = n;
        st->cth = nc;
    }
    if (!st->thash || (st->nth + 1) * 2 > st->thmask + 1)
        if (rehash(&st->thash, &st->thmask, st->nth, th_hash_of, st))
            return -1;
    th *t = &st->th[st->nth];
    memset(t, 0, sizeof *t);
    t->pid = s->pid;
    t->tid = s->tid;
    t->cpu = cpu;
    t->src = srcid;
    uint32_t k = h & st->thmask;
    while (st->thash[k])
        k = (k + 1) & st->thmask;
    st->thash[k] = ++st->nth;
    return (int32_t)(st->nth - 1);
}

static src *source_of(ek_stacks *st, const ek_sample *s)
{
    uint32_t h = src_hash(s->queue, s->cpu, s->trace_id);
    if (st->shash)
        for (uint32_t k = h & st->smask; st->shash[k]; k = (k + 1) & st->smask) {
            src *r = &st->src[st->shash[k] - 1];
            if (r->queue == s->queue && r->cpu == s->cpu && r->trace_id == s->trace_id)
                return r;
        }
    if (st->nsrc == st->csrc) {
        uint32_t nc = st->csrc ? st->csrc * 2 : 8;
        src *n = realloc(st->src, nc * sizeof *n);
        if (!n)
            return NULL;
        st->src = n;
        st->csrc = nc;
    }
    if (!st->shash || (st->nsrc + 1) * 2 > st->smask + 1)
        if (rehash(&st->shash, &st->smask, st->nsrc, src_hash_of, st))
            return NULL;
    src *r = &st->src[st->nsrc];
    r->queue = s->queue;
    r->cpu = s->cpu;
    r->trace_id = s->trace_id;
    r->last = -1;
    r->ended = 0;
    uint32_t k = h & st->smask;
    while (st->shash[k])
        k = (k + 1) & st->smask;
    st->shash[k] = ++st->nsrc;
    return r;
}

/* ---- frames ---------------------------------------------------------------------------------- */

static int push(ek_stacks *st, th *t, uint64_t addr, uint32_t flags)
{
    if (t->n == st->max_depth) {
        /* bounded: forget the outermost frame (the bottom is open anyway) */
        memmove(t->f, t->f + 1, (t->n - 1) * sizeof *t->f);
        t->n--;
        st->st.dropped++;
    }
    if (t->n == t->cap) {
        uint32_t nc = t->cap ? t->cap * 2 : 16;
        if (nc > st->max_depth)
            nc = st->max_depth;
        ek_stack_frame *n = realloc(t->f, nc * sizeof *n);
        if (!n)
            return EK_ERR_NOMEM;
        t->f = n;
        t->cap = nc;
    }
    t->f[t->n].addr = addr;
    t->f[t->n].flags = flags;
    t->n++;
    return 0;
}

/* The innermost known frame returning to addr (gaps are not frames): its index, or -1. */
static int64_t find(const th *t, uint64_t addr)
{
    for (uint32_t i = t->n; i--;)
        if (!(t->f[i].flags & EK_FRAME_GAP) && t->f[i].addr == addr)
            return i;
    return -1;
}

/* Pop to frame i (it included); counts a resync when known frames above it are skipped. */
static void pop_to(ek_stacks *st, th *t, int64_t i)
{
    for (uint32_t k = (uint32_t)i + 1; k < t->n; k++)
        if (!(t->f[k].flags & EK_FRAME_GAP)) {
            st->st.resyncs++;
            break;
        }
    t->n = (uint32_t)i;
}

/* Execution continues at addr after a gap or a switch: on a known frame's return address it
 * pops to that frame; elsewhere the frames entered meanwhile are not known (a gap frame), unless
 * nothing is known of the stack at all. */
static int land(ek_stacks *st, th *t, uint64_t addr)
{
    int64_t i = find(t, addr);
    if (i >= 0) {
        pop_to(st, t, i);
        return 0;
    }
    if (!t->n || (t->f[t->n - 1].flags & EK_FRAME_GAP))
        return 0;
    st->st.gaps++;
    return push(st, t, 0, EK_FRAME_GAP);
}

/* A return (exc: an exception return) from the instruction at ip to addr. */
static int ret(ek_stacks *st, th *t, uint64_t addr, int exc)
{
    int64_t i = find(t, addr);
    if (i >= 0) {
        pop_to(st, t, i);
        if (exc)
            st->st.exc_returns++;
        else
            st->st.returns++;
        return 0;
    }
    if (!t->n || (t->f[t->n - 1].flags & EK_FRAME_GAP)) {
        /* a frame the trace did not see: entered before the trace, or during a gap */
        st->st.returns_below++;
        return 0;
    }
    /* it left the innermost frame, for no known one */
    st->st.unmatched++;
    t->n--;
    if (t->n && (t->f[t->n - 1].flags & EK_FRAME_GAP))
        return 0;
    st->st.gaps++;
    return push(st, t, 0, EK_FRAME_GAP);
}

static int is_return_insn(uint8_t isub)
{
    return isub == EK_ISUB_V8_RET || isub == EK_ISUB_V7_IMPLIED_RET || isub == EK_ISUB_V8_ERET;
}

static int view_of(ek_stacks *st, const th *t, uint64_t at, ek_stack_view *v)
{
    if (!v)
        return 0;
    if (t->n > st->vcap) {
        ek_stack_frame *n = realloc(st->vbuf, t->cap * sizeof *n);
        if (!n)
            return EK_ERR_NOMEM;
        st->vbuf = n;
        st->vcap = t->cap;
    }
    if (t->n)
        memcpy(st->vbuf, t->f, t->n * sizeof *t->f);
    v->pid = t->pid;
    v->tid = t->tid;
    v->at = at;
    v->frames = st->vbuf;
    v->n = t->n;
    return 0;
}

/* The branch of sample s, from thread t's code (no switch): its frames. */
static int branch(ek_stacks *st, th *t, const ek_sample *s)
{
    uint32_t fl = s->flags;
    uint64_t next = s->ip + (s->isize ? s->isize : 4);
    int end = (fl & EK_SF_TRACE_END) != 0;
    if ((fl & EK_SF_CALL) && (fl & (EK_SF_INTERRUPT | EK_SF_SYSCALLRET | EK_SF_ASYNC))) {
        /* an exception, after the instruction at ip: where it returns to is where the code
         * resumes (resume), after a branch at ip that was taken too */
        uint64_t to = s->resume;
        if (!to && (fl & EK_SF_SYSCALLRET))
            to = next;
        if (to && to != next) {
            if (s->isub == EK_ISUB_BR_LINK) {
                if (push(st, t, next, 0))
                    return EK_ERR_NOMEM;
                st->st.calls++;
            } else if (is_return_insn(s->isub)) {
                if (ret(st, t, to, s->isub == EK_ISUB_V8_ERET))
                    return EK_ERR_NOMEM;
            }
        }
        st->st.exceptions++;
        return push(st, t, to, EK_FRAME_EXCEPTION);
    }
    if (fl & EK_SF_CALL) {
        st->st.calls++;
        return push(st, t, next, 0);
    }
    if ((fl & EK_SF_RETURN) && !end &&
        (is_return_insn(s->isub) || (fl & (EK_SF_INTERRUPT | EK_SF_SYSCALLRET))))
        return ret(st, t, s->addr, s->isub == EK_ISUB_V8_ERET || (fl & (EK_SF_INTERRUPT | EK_SF_SYSCALLRET)));
    /* a branch without link (tail call, jump), or a return whose target the trace lost: the
     * trace begins again where it lands */
    return 0;
}

int ek_stacks_sample(ek_stacks *st, const ek_sample *s, ek_stack_view *view)
{
    int32_t ti = thread_of(st, s);
    if (ti < 0)
        return EK_ERR_NOMEM;
    if (s->kind != EK_SAMPLE_BRANCHES) {
        return view_of(st, &st->th[ti], s->ip, view);
    }
    src *r = source_of(st, s);
    if (!r)
        return EK_ERR_NOMEM;
    int rc = 0;
    if ((s->flags & EK_SF_TRACE_BEGIN) || !s->ip) {
        rc = land(st, &st->th[ti], s->addr);
        if (!rc)
            rc = view_of(st, &st->th[ti], s->addr, view);
    } else if (r->last >= 0 && !r->ended && r->last != ti) {
        /* the thread of the source changed at this branch: it ran on the previous thread's
         * stack, which stays as it was (switched out), and lands on this thread's */
        st->st.switches++;
        rc = view_of(st, &st->th[r->last], s->ip, view);
        if (!rc && s->addr)
            rc = land(st, &st->th[ti], s->addr);
    } else {
        rc = view_of(st, &st->th[ti], s->ip, view);
        if (!rc)
            rc = branch(st, &st->th[ti], s);
    }
    r->last = ti;
    r->ended = (s->flags & EK_SF_TRACE_END) != 0;
    return rc;
}
