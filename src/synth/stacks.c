/* Call stacks from branches samples (etmkit/stacks.h; the rules: docs/STACKS.md).
 *
 * One stack of return addresses per thread (per thread and trace source with per_source), in
 * an array that grows up to max_depth; one record per trace source (queue, CPU and trace ID)
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
    int32_t owner;    /* the trace source whose samples move it now (-1: none yet) */
    uint8_t seen;     /* a sample of it was followed */
    uint8_t end_push; /* its last sample ended the trace with a call or an exception: the
                       * innermost frame is the one the trace goes on from */
} th;

/* A trace source: one CPU's trace unit (its trace ID) in one AUX queue -- one sample
 * synthesiser's output (a sink shared by several CPUs puts a CPU's trace into several queues,
 * each decoded on its own, their samples interleaved by time). */
typedef struct src {
    uint32_t queue;
    int32_t cpu;
    uint32_t trace_id;
    int32_t last; /* thread of its last branches sample (-1: none) */
    int ended;    /* that sample ended the trace */
    /* that thread's stack as this source left it, once another source took the thread over:
     * a sample this source still owes (the end-of-trace flush of its last range, output
     * after the thread ran on elsewhere) happened then */
    ek_stack_frame *snap;
    uint32_t snap_n, snap_cap;
    int has_snap;
} src;

typedef struct cpu_last {
    int32_t last; /* thread index, -1: none */
    int ended;
} cpu_last;

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
    /* by CPU (not per_source): the thread of the CPU's last branches sample in any source,
     * late ones left out, and whether it ended the trace -- where the CPU's trace goes on in
     * another source (another AUX queue), the thread it switches from */
    cpu_last *cpus;
    uint32_t ncpus;
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
    if (!o || o->size < sizeof *o) return EK_ERR_ARG;
    ek_stacks *st = calloc(1, sizeof *st);
    if (!st) return EK_ERR_NOMEM;
    st->max_depth = o->max_depth ? o->max_depth : 1;
    st->per_source = o->per_source;
    *out = st;
    return 0;
}

void ek_stacks_free(ek_stacks *st)
{
    if (!st) return;
    for (uint32_t i = 0; i < st->nth; i++)
        free(st->th[i].f);
    free(st->th);
    free(st->thash);
    for (uint32_t i = 0; i < st->nsrc; i++)
        free(st->src[i].snap);
    free(st->src);
    free(st->shash);
    free(st->vbuf);
    free(st->cpus);
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
    return mix((uint64_t)(uint32_t)pid << 32 | (uint32_t)tid,
               (uint64_t)(uint32_t)cpu << 32 | srcid);
}

static uint32_t src_hash(uint32_t queue, int32_t cpu, uint32_t trace_id)
{
    return mix(queue, (uint64_t)(uint32_t)cpu << 32 | trace_id);
}

/* Grow an index table to twice its size (at least 16), re-placing every entry. */
static int rehash(uint32_t **tab, uint32_t *mask, uint32_t n,
                  uint32_t (*hash_of)(const ek_stacks *, uint32_t), const ek_stacks *st)
{
    uint32_t size = *tab ? (*mask + 1) * 2 : 16;
    uint32_t *t = calloc(size, sizeof *t);
    if (!t) return EK_ERR_NOMEM;
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
    /* the idle task (pid and tid 0) is one per CPU, all named 0 */
    int idle = s->pid == 0 && s->tid == 0;
    int32_t cpu = st->per_source || idle ? s->cpu : 0;
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
        if (!n) return -1;
        st->th = n;
        st->cth = nc;
    }
    if (!st->thash || (st->nth + 1) * 2 > st->thmask + 1)
        if (rehash(&st->thash, &st->thmask, st->nth, th_hash_of, st)) return -1;
    th *t = &st->th[st->nth];
    memset(t, 0, sizeof *t);
    t->pid = s->pid;
    t->tid = s->tid;
    t->cpu = cpu;
    t->src = srcid;
    t->owner = -1;
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
            if (r->queue == s->queue && r->cpu == s->cpu && r->trace_id == s->trace_id) return r;
        }
    if (st->nsrc == st->csrc) {
        uint32_t nc = st->csrc ? st->csrc * 2 : 8;
        src *n = realloc(st->src, nc * sizeof *n);
        if (!n) return NULL;
        st->src = n;
        st->csrc = nc;
    }
    if (!st->shash || (st->nsrc + 1) * 2 > st->smask + 1)
        if (rehash(&st->shash, &st->smask, st->nsrc, src_hash_of, st)) return NULL;
    src *r = &st->src[st->nsrc];
    r->cpu = s->cpu;
    r->trace_id = s->trace_id;
    r->queue = s->queue;
    r->last = -1;
    r->ended = 0;
    r->snap = NULL;
    r->snap_n = r->snap_cap = 0;
    r->has_snap = 0;
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
        if (nc > st->max_depth) nc = st->max_depth;
        ek_stack_frame *n = realloc(t->f, nc * sizeof *n);
        if (!n) return EK_ERR_NOMEM;
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
        if (!(t->f[i].flags & EK_FRAME_GAP) && t->f[i].addr == addr) return i;
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

/* What the trace showed of t's stack no longer holds: forget it, leaving a gap frame at the
 * bottom (below it nothing is known, as below the frames of a trace's start). */
static int lose(ek_stacks *st, th *t)
{
    st->st.gaps++;
    t->n = 0;
    return push(st, t, 0, EK_FRAME_GAP);
}

/* Execution of t continues at addr: after a trace gap (gap != 0), or at the branch of a switch
 * to it. Where it returns to a frame the trace knows holds, it pops to that frame: after a
 * gap only the frame of the call or the exception the trace ended in (anything may have run
 * meanwhile: a return to an older frame's address can be another activation's), at a switch
 * any (the thread did not run meanwhile; its switch-out pushed the frame it returns to).
 * Elsewhere the frames entered and left meanwhile are not known: the stack is forgotten, a gap
 * frame at its bottom -- unless this is the first the trace shows of the thread. */
static int land(ek_stacks *st, th *t, uint64_t addr, int gap)
{
    if (gap) {
        if (t->end_push && t->n && t->f[t->n - 1].addr == addr &&
            !(t->f[t->n - 1].flags & EK_FRAME_GAP)) {
            t->n--;
            return 0;
        }
    } else {
        int64_t i = find(t, addr);
        if (i >= 0) {
            pop_to(st, t, i);
            return 0;
        }
    }
    if (!t->seen || (t->n == 1 && (t->f[0].flags & EK_FRAME_GAP))) return 0;
    return lose(st, t);
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
    if (!t->n || (t->n == 1 && (t->f[0].flags & EK_FRAME_GAP))) {
        /* a frame the trace did not see: entered before the trace, or before a gap */
        st->st.returns_below++;
        return 0;
    }
    /* it left the innermost frame, for none of the known ones */
    st->st.unmatched++;
    return lose(st, t);
}

static int is_return_insn(uint8_t isub)
{
    return isub == EK_ISUB_V8_RET || isub == EK_ISUB_V7_IMPLIED_RET || isub == EK_ISUB_V8_ERET;
}

static int view_frames(ek_stacks *st, const ek_stack_frame *f, uint32_t n, int32_t pid, int32_t tid,
                       uint64_t at, ek_stack_view *v)
{
    if (!v) return 0;
    if (n > st->vcap) {
        ek_stack_frame *nb = realloc(st->vbuf, n * sizeof *nb);
        if (!nb) return EK_ERR_NOMEM;
        st->vbuf = nb;
        st->vcap = n;
    }
    if (n) memcpy(st->vbuf, f, n * sizeof *f);
    v->pid = pid;
    v->tid = tid;
    v->at = at;
    v->frames = st->vbuf;
    v->n = n;
    v->late = 0;
    return 0;
}

static int view_of(ek_stacks *st, const th *t, uint64_t at, ek_stack_view *v)
{
    return view_frames(st, t->f, t->n, t->pid, t->tid, at, v);
}

/* Source r takes thread ti over (a trace begin, a switch to it): the source that had it keeps
 * a copy of the stack as it left it, for a sample of it still to come. */
static int take(ek_stacks *st, int32_t ti, src *r)
{
    th *t = &st->th[ti];
    int32_t ri = (int32_t)(r - st->src);
    if (t->owner >= 0 && t->owner != ri) {
        src *o = &st->src[t->owner];
        if (o->last == ti) {
            if (t->n > o->snap_cap) {
                ek_stack_frame *n = realloc(o->snap, t->n * sizeof *n);
                if (!n) return EK_ERR_NOMEM;
                o->snap = n;
                o->snap_cap = t->n;
            }
            if (t->n) memcpy(o->snap, t->f, t->n * sizeof *t->f);
            o->snap_n = t->n;
            o->has_snap = 1;
        }
    }
    t->owner = ri;
    return 0;
}

/* The branch of sample s, from thread t's code (no switch): its frames. */
static int branch(ek_stacks *st, th *t, const ek_sample *s)
{
    uint32_t fl = s->flags;
    uint64_t next = s->ip + (s->isize ? s->isize : 4);
    int end = (fl & EK_SF_TRACE_END) != 0;
    t->end_push = 0;
    if ((fl & EK_SF_CALL) && (fl & (EK_SF_INTERRUPT | EK_SF_SYSCALLRET | EK_SF_ASYNC))) {
        /* an exception, after the instruction at ip: where it returns to is where the code
         * resumes (resume), after a branch at ip that was taken too */
        uint64_t to = s->resume;
        if (!to && (fl & EK_SF_SYSCALLRET)) to = next;
        if (to && to != next) {
            if (s->isub == EK_ISUB_BR_LINK) {
                if (push(st, t, next, 0)) return EK_ERR_NOMEM;
                st->st.calls++;
            } else if (is_return_insn(s->isub)) {
                if (ret(st, t, to, s->isub == EK_ISUB_V8_ERET)) return EK_ERR_NOMEM;
            }
        }
        st->st.exceptions++;
        t->end_push = (uint8_t)end;
        return push(st, t, to, EK_FRAME_EXCEPTION);
    }
    if (fl & EK_SF_CALL) {
        st->st.calls++;
        t->end_push = (uint8_t)end;
        return push(st, t, next, 0);
    }
    if ((fl & EK_SF_RETURN) && !end &&
        (is_return_insn(s->isub) || (fl & (EK_SF_INTERRUPT | EK_SF_SYSCALLRET))))
        return ret(st, t, s->addr,
                   s->isub == EK_ISUB_V8_ERET || (fl & (EK_SF_INTERRUPT | EK_SF_SYSCALLRET)));
    /* a branch without link (tail call, jump), or a return whose target the trace lost: the
     * trace begins again where it lands */
    return 0;
}

int ek_stacks_sample(ek_stacks *st, const ek_sample *s, ek_stack_view *view)
{
    int32_t ti = thread_of(st, s);
    if (ti < 0) return EK_ERR_NOMEM;
    if (s->kind != EK_SAMPLE_BRANCHES) return view_of(st, &st->th[ti], s->ip, view);
    src *r = source_of(st, s);
    if (!r) return EK_ERR_NOMEM;
    int32_t ri = (int32_t)(r - st->src);
    int rc = 0;
    th *t = &st->th[ti];
    /* the thread the trace unit showed last: the CPU's (its trace may go on in another
     * source), else the source's */
    int32_t prev = r->last;
    int prev_ended = r->ended;
    const int by_cpu = !st->per_source && s->cpu >= 0 && s->cpu < 65536;
    if (by_cpu && (uint32_t)s->cpu >= st->ncpus) {
        uint32_t nc = (uint32_t)s->cpu + 1;
        void *n = realloc(st->cpus, nc * sizeof *st->cpus);
        if (!n) return EK_ERR_NOMEM;
        st->cpus = n;
        for (uint32_t c = st->ncpus; c < nc; c++) {
            st->cpus[c].last = -1;
            st->cpus[c].ended = 0;
        }
        st->ncpus = nc;
    }
    if (by_cpu && st->cpus[s->cpu].last >= 0) {
        prev = st->cpus[s->cpu].last;
        prev_ended = st->cpus[s->cpu].ended;
    }
    int late = 0;
    if ((s->flags & EK_SF_TRACE_BEGIN) || !s->ip) {
        rc = take(st, ti, r);
        if (!rc) rc = land(st, t, s->addr, 1);
        t->end_push = 0;
        t->seen = 1;
        if (!rc) rc = view_of(st, t, s->addr, view);
    } else if (t->owner >= 0 && t->owner != ri && r->has_snap && r->last == ti) {
        /* the thread ran on in another source since this one's last sample, which this one
         * continues (its range flushed at the end of the trace): it shows the stack of then */
        rc = view_frames(st, r->snap, r->snap_n, t->pid, t->tid, s->ip, view);
        if (view) view->late = 1;
        late = 1;
    } else if (prev >= 0 && !prev_ended && prev != ti) {
        /* the thread of the trace unit changed at this branch: it ran on the previous thread's
         * stack, which stays as it was (switched out), and lands on this thread's */
        const th *o = &st->th[prev];
        st->st.switches++;
        if (r->has_snap && prev == r->last)
            rc = view_frames(st, r->snap, r->snap_n, o->pid, o->tid, s->ip, view);
        else
            rc = view_of(st, o, s->ip, view);
        if (!rc) rc = take(st, ti, r);
        if (!rc && s->addr) rc = land(st, t, s->addr, 0);
        t->end_push = 0;
        t->seen = 1;
        st->th[prev].seen = 1;
    } else {
        /* (from another queue's decoding of the same trace unit, the thread goes on here) */
        rc = take(st, ti, r);
        if (!rc) rc = view_of(st, t, s->ip, view);
        if (!rc) rc = branch(st, t, s);
        t->seen = 1;
    }
    if (r->last != ti) r->has_snap = 0;
    r->last = ti;
    r->ended = (s->flags & EK_SF_TRACE_END) != 0;
    if (by_cpu && !late) {
        st->cpus[s->cpu].last = ti;
        st->cpus[s->cpu].ended = r->ended;
    }
    return rc;
}
