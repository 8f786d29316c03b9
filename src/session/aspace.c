/* Address spaces over time (see aspace.h). */
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "session/aspace.h"

typedef struct live_proc {
    int32_t pid;
    EK_VEC(size_t) live; /* indices into the proc's maps with t_to == AS_TIME_MAX */
} live_proc;

struct aspace {
    EK_VEC(as_event) evs;
    EK_VEC(as_proc) procs;   /* sorted by pid after as_build */
    EK_VEC(as_thread) threads; /* sorted by tid after as_build */
    EK_VEC(live_proc) lives; /* during build, parallel to procs */
    int built;
};

aspace *as_new(void)
{
    return calloc(1, sizeof(aspace));
}

void as_free(aspace *as)
{
    if (!as)
        return;
    for (size_t i = 0; i < as->procs.n; i++) {
        ek_vec_free(&as->procs.v[i].maps);
        free(as->procs.v[i].maxend);
        free(as->procs.v[i].bounds);
    }
    for (size_t i = 0; i < as->threads.n; i++)
        ek_vec_free(&as->threads.v[i].comms);
    for (size_t i = 0; i < as->lives.n; i++)
        ek_vec_free(&as->lives.v[i].live);
    ek_vec_free(&as->evs);
    ek_vec_free(&as->procs);
    ek_vec_free(&as->threads);
    ek_vec_free(&as->lives);
    free(as);
}

int as_add(aspace *as, const as_event *ev)
{
    as_event e = *ev;
    e.seq = as->evs.n;
    return ek_vec_push(&as->evs, e) ? EK_ERR_NOMEM : 0;
}

/* ---- build ------------------------------------------------------------------------------- */

static int ev_cmp(const void *a, const void *b)
{
    const as_event *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->record != y->record)
        return x->record < y->record ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Linear lookup during build (the counts are small); sorted afterwards. */
static size_t proc_index(aspace *as, int32_t pid)
{
    for (size_t i = as->procs.n; i-- > 0;)
        if (as->procs.v[i].pid == pid)
            return i;
    as_proc p;
    memset(&p, 0, sizeof p);
    p.pid = pid;
    live_proc l;
    memset(&l, 0, sizeof l);
    l.pid = pid;
    if (ek_vec_push(&as->procs, p) || ek_vec_push(&as->lives, l))
        return SIZE_MAX;
    return as->procs.n - 1;
}

static as_thread *thread_find(aspace *as, int32_t tid)
{
    for (size_t i = as->threads.n; i-- > 0;)
        if (as->threads.v[i].tid == tid)
            return &as->threads.v[i];
    return NULL;
}

static as_thread *thread_get(aspace *as, int32_t tid, int32_t pid)
{
    as_thread *t = thread_find(as, tid);
    if (t) {
        if (pid >= 0)
            t->pid = pid;
        return t;
    }
    as_thread n;
    memset(&n, 0, sizeof n);
    n.tid = tid;
    n.pid = pid;
    n.t_exit = AS_TIME_MAX;
    if (ek_vec_push(&as->threads, n))
        return NULL;
    return &as->threads.v[as->threads.n - 1];
}

static int add_map(aspace *as, size_t pi, const as_map *m)
{
    as_proc *p = &as->procs.v[pi];
    if (ek_vec_push(&p->maps, *m))
        return EK_ERR_NOMEM;
    if (ek_vec_push(&as->lives.v[pi].live, p->maps.n - 1))
        return EK_ERR_NOMEM;
    return 0;
}

/* End every live map of proc pi that overlaps [start, end) at key; keep the parts outside. */
static int punch(aspace *as, size_t pi, uint64_t start, uint64_t end, uint64_t key)
{
    live_proc *l = &as->lives.v[pi];
    size_t n = l->live.n;
    for (size_t k = 0; k < n;) {
        size_t mi = l->live.v[k];
        as_map m = as->procs.v[pi].maps.v[mi];
        if (m.end <= start || m.start >= end) {
            k++;
            continue;
        }
        as->procs.v[pi].maps.v[mi].t_to = key;
        l->live.v[k] = l->live.v[--n];
        l->live.n = n;
        if (m.start < start) {
            as_map left = m;
            left.end = start;
            left.t_from = key;
            if (add_map(as, pi, &left))
                return EK_ERR_NOMEM;
        }
        if (m.end > end) {
            as_map right = m;
            right.pgoff = m.pgoff + (end - m.start);
            right.start = end;
            right.t_from = key;
            if (add_map(as, pi, &right))
                return EK_ERR_NOMEM;
        }
        /* the pieces were appended after n: they are live and outside [start, end) */
        n = l->live.n;
        l = &as->lives.v[pi];
    }
    return 0;
}

static void end_all(aspace *as, size_t pi, uint64_t key)
{
    live_proc *l = &as->lives.v[pi];
    for (size_t k = 0; k < l->live.n; k++)
        as->procs.v[pi].maps.v[l->live.v[k]].t_to = key;
    l->live.n = 0;
}

static int replay(aspace *as, const as_event *e)
{
    switch (e->type) {
    case AS_EV_MMAP: {
        if (e->len == 0 || e->start + e->len < e->start)
            return 0;
        int32_t pid = e->kernel ? AS_KERNEL_PID : e->pid;
        size_t pi = proc_index(as, pid);
        if (pi == SIZE_MAX)
            return EK_ERR_NOMEM;
        if (punch(as, pi, e->start, e->start + e->len, e->key))
            return EK_ERR_NOMEM;
        as_map m;
        memset(&m, 0, sizeof m);
        m.start = e->start;
        m.end = e->start + e->len;
        m.pgoff = e->pgoff;
        m.t_from = e->key;
        m.t_to = AS_TIME_MAX;
        m.record = e->record;
        m.offset = e->offset;
        m.prot = e->prot;
        m.exec = (uint8_t)e->exec;
        m.kernel = (uint8_t)e->kernel;
        m.dso = e->dso;
        m.filename = e->filename;
        if (add_map(as, pi, &m))
            return EK_ERR_NOMEM;
        if (!e->kernel && e->tid >= 0 && !thread_get(as, e->tid, e->pid))
            return EK_ERR_NOMEM;
        return 0;
    }
    case AS_EV_COMM: {
        as_thread *t = thread_get(as, e->tid, e->pid);
        if (!t)
            return EK_ERR_NOMEM;
        as_comm c = {e->key, e->comm, (uint8_t)e->comm_exec};
        if (ek_vec_push(&t->comms, c))
            return EK_ERR_NOMEM;
        if (e->comm_exec && e->pid == e->tid) {
            size_t pi = proc_index(as, e->pid);
            if (pi == SIZE_MAX)
                return EK_ERR_NOMEM;
            end_all(as, pi, e->key);
        }
        return 0;
    }
    case AS_EV_FORK: {
        as_thread *parent = thread_find(as, e->ptid);
        const as_comm *pc = parent && parent->comms.n ? &parent->comms.v[parent->comms.n - 1] : NULL;
        as_thread *t = thread_get(as, e->tid, e->pid);
        if (!t)
            return EK_ERR_NOMEM;
        if (pc && !t->comms.n) {
            as_comm c = {e->key, pc->comm, 0};
            if (ek_vec_push(&t->comms, c))
                return EK_ERR_NOMEM;
        }
        if (e->pid != e->ppid && e->pid >= 0) {
            size_t ci = proc_index(as, e->pid);
            size_t pi = proc_index(as, e->ppid);
            if (ci == SIZE_MAX || pi == SIZE_MAX)
                return EK_ERR_NOMEM;
            end_all(as, ci, e->key);
            for (size_t k = 0; k < as->lives.v[pi].live.n; k++) {
                as_map m = as->procs.v[pi].maps.v[as->lives.v[pi].live.v[k]];
                m.t_from = e->key;
                m.t_to = AS_TIME_MAX;
                if (add_map(as, ci, &m))
                    return EK_ERR_NOMEM;
            }
        }
        return 0;
    }
    case AS_EV_EXIT: {
        as_thread *t = thread_get(as, e->tid, e->pid);
        if (!t)
            return EK_ERR_NOMEM;
        t->t_exit = e->key;
        return 0;
    }
    case AS_EV_THREAD:
        if (e->tid >= 0 && !thread_get(as, e->tid, e->pid))
            return EK_ERR_NOMEM;
        return 0;
    default:
        return 0;
    }
}

static int map_cmp(const void *a, const void *b)
{
    const as_map *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->t_from != y->t_from)
        return x->t_from < y->t_from ? -1 : 1;
    return x->record < y->record ? -1 : x->record > y->record;
}

static int proc_cmp(const void *a, const void *b)
{
    const as_proc *x = a, *y = b;
    return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int thread_cmp(const void *a, const void *b)
{
    const as_thread *x = a, *y = b;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* as_map.alone: maps are sorted by start; a map with a life overlaps another one with a life
 * when one before it ends after its start or the next one starts before its end. */
static void mark_alone(as_proc *p)
{
    uint64_t prev_end = 0;
    for (size_t k = 0; k < p->maps.n; k++) {
        as_map *m = &p->maps.v[k];
        m->alone = 0;
        if (m->t_from >= m->t_to)
            continue;
        m->alone = prev_end <= m->start;
        if (m->end > prev_end)
            prev_end = m->end;
    }
    uint64_t next_start = UINT64_MAX;
    for (size_t k = p->maps.n; k-- > 0;) {
        as_map *m = &p->maps.v[k];
        if (m->t_from >= m->t_to)
            continue;
        if (next_start < m->end)
            m->alone = 0;
        next_start = m->start;
    }
}

static int u64_cmp(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

static int make_bounds(as_proc *p)
{
    p->bounds = malloc((2 * p->maps.n + 1) * sizeof *p->bounds);
    if (!p->bounds)
        return -1;
    size_t n = 0;
    for (size_t k = 0; k < p->maps.n; k++) {
        const as_map *m = &p->maps.v[k];
        if (m->t_from >= m->t_to)
            continue;
        p->bounds[n++] = m->start;
        p->bounds[n++] = m->end;
    }
    if (n > 1)
        qsort(p->bounds, n, sizeof *p->bounds, u64_cmp);
    size_t u = 0;
    for (size_t k = 0; k < n; k++)
        if (!u || p->bounds[k] != p->bounds[u - 1])
            p->bounds[u++] = p->bounds[k];
    p->nbounds = u;
    return 0;
}

int as_build(aspace *as)
{
    if (as->built)
        return 0;
    if (as->evs.n)
        qsort(as->evs.v, as->evs.n, sizeof *as->evs.v, ev_cmp);
    /* The idle task, pid 0 / tid 0, is "swapper" from the start: perf registers it so before it
     * reads any record (perf_session__register_idle_thread), no COMM record names it, and a
     * later COMM for tid 0 would rename it. (The kernel calls each CPU's idle task
     * "swapper/N"; perf keeps one thread for all of them.) */
    as_thread *idle = thread_get(as, 0, 0);
    as_comm swapper = {0, AS_IDLE_COMM, 0};
    if (!idle || ek_vec_push(&idle->comms, swapper)) return EK_ERR_NOMEM;
    for (size_t i = 0; i < as->evs.n; i++) {
        int rc = replay(as, &as->evs.v[i]);
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < as->lives.n; i++)
        ek_vec_free(&as->lives.v[i].live);
    ek_vec_free(&as->lives);
    for (size_t i = 0; i < as->procs.n; i++) {
        as_proc *p = &as->procs.v[i];
        if (p->maps.n > 1)
            qsort(p->maps.v, p->maps.n, sizeof *p->maps.v, map_cmp);
        p->maxend = malloc((p->maps.n ? p->maps.n : 1) * sizeof *p->maxend);
        if (!p->maxend)
            return EK_ERR_NOMEM;
        uint64_t mx = 0;
        for (size_t k = 0; k < p->maps.n; k++) {
            if (p->maps.v[k].end > mx)
                mx = p->maps.v[k].end;
            p->maxend[k] = mx;
        }
        mark_alone(p);
        if (make_bounds(p))
            return EK_ERR_NOMEM;
    }
    if (as->procs.n > 1)
        qsort(as->procs.v, as->procs.n, sizeof *as->procs.v, proc_cmp);
    if (as->threads.n > 1)
        qsort(as->threads.v, as->threads.n, sizeof *as->threads.v, thread_cmp);
    ek_vec_free(&as->evs);
    as->built = 1;
    return 0;
}

/* ---- queries ----------------------------------------------------------------------------- */

const as_proc *as_proc_get(const aspace *as, int32_t pid)
{
    size_t lo = 0, hi = as->procs.n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (as->procs.v[mid].pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < as->procs.n && as->procs.v[lo].pid == pid ? &as->procs.v[lo] : NULL;
}

size_t as_nprocs(const aspace *as)
{
    return as->procs.n;
}

const as_proc *as_proc_at(const aspace *as, size_t i)
{
    return i < as->procs.n ? &as->procs.v[i] : NULL;
}

/* The maps of p below index *i (counting down) that cover addr and ever lived; NULL when none
 * is left. Maps are sorted by start, maxend[i] is the largest end among maps 0..i. */
static const as_map *candidate(const as_proc *p, size_t *i, uint64_t addr)
{
    while (*i > 0) {
        size_t k = --*i;
        if (p->maxend[k] <= addr)
            return NULL;
        const as_map *m = &p->maps.v[k];
        if (m->end > addr && m->t_from < m->t_to)
            return m;
    }
    return NULL;
}

void as_addr_range(const aspace *as, int32_t pid, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
    *lo = 0;
    *hi = UINT64_MAX;
    const as_proc *p = as_proc_get(as, pid);
    if (!p || !p->nbounds)
        return;
    /* first bound above addr */
    size_t a = 0, b = p->nbounds;
    while (a < b) {
        size_t mid = (a + b) / 2;
        if (p->bounds[mid] <= addr)
            a = mid + 1;
        else
            b = mid;
    }
    if (a < p->nbounds)
        *hi = p->bounds[a];
    if (a > 0)
        *lo = p->bounds[a - 1];
}

const as_map *as_find(const aspace *as, int32_t pid, uint64_t addr, uint64_t t_lo, uint64_t t_hi,
                      int has_t, uint64_t t, int *how)
{
    return as_find_ex(as, pid, addr, t_lo, t_hi, has_t, t, how, NULL, NULL);
}

const as_map *as_find_ex(const aspace *as, int32_t pid, uint64_t addr, uint64_t t_lo,
                         uint64_t t_hi, int has_t, uint64_t t, int *how, uint64_t *t_from,
                         uint64_t *t_to)
{
    int dummy;
    uint64_t d1, d2;
    if (!how)
        how = &dummy;
    if (!t_from)
        t_from = &d1;
    if (!t_to)
        t_to = &d2;
    *how = AS_HIT_NONE;
    *t_from = 0;
    *t_to = UINT64_MAX; /* no candidate at all, or no time given: the same answer for every t */
    const as_proc *p = as_proc_get(as, pid);
    if (!p || !p->maps.n)
        return NULL;
    /* last map with start <= addr */
    size_t lo = 0, hi = p->maps.n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->maps.v[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    const as_map *exact = NULL, *win = NULL, *win_end = NULL, *late = NULL, *old = NULL;
    const as_map *near = NULL;
    uint64_t near_d = UINT64_MAX;
    size_t nwin = 0;
    const as_map *m;
    for (size_t i = lo; (m = candidate(p, &i, addr));) {
        if (has_t && m->t_from <= t && t < m->t_to && (!exact || m->t_from > exact->t_from))
            exact = m;
        if (m->t_from <= t_hi && m->t_to > t_lo) {
            nwin++;
            if (has_t) {
                uint64_t dist = t < m->t_from ? m->t_from - t : t >= m->t_to ? t - m->t_to + 1 : 0;
                if (dist < near_d) {
                    near_d = dist;
                    near = m;
                }
            }
            if (!win || m->t_from > win->t_from)
                win = m;
            if (m->t_from <= t_hi && t_hi < m->t_to && (!win_end || m->t_from > win_end->t_from))
                win_end = m;
        } else if (m->t_from > t_hi) {
            if (!late || m->t_from < late->t_from)
                late = m;
        } else if (!old || m->t_to > old->t_to) {
            old = m;
        }
    }
    if (exact) {
        /* the same answer while exact is valid and no later-starting candidate has begun */
        uint64_t end = exact->t_to;
        for (size_t i = lo; (m = candidate(p, &i, addr));)
            if (m->t_from > exact->t_from && m->t_from < end)
                end = m->t_from;
        *how = AS_HIT_EXACT;
        *t_from = exact->t_from;
        *t_to = end;
        return exact;
    }
    /* without a time the answer is the window's; with one, and no map valid at it, it depends
     * on how far t is from each candidate */
    if (has_t && (win || late || old))
        *t_to = 0;
    if (nwin == 1) {
        *how = AS_HIT_WINDOW;
        return win;
    }
    if (nwin > 1 && near) {
        /* the time is outside every candidate's life: the one it is closest to */
        *how = AS_HIT_NEAREST;
        return near;
    }
    if (nwin > 1) {
        *how = AS_HIT_AMBIGUOUS;
        return win_end ? win_end : win;
    }
    if (late) {
        *how = AS_HIT_LATE;
        return late;
    }
    if (old) {
        *how = AS_HIT_OLD;
        return old;
    }
    return NULL;
}

const as_thread *as_thread_get(const aspace *as, int32_t tid)
{
    size_t lo = 0, hi = as->threads.n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (as->threads.v[mid].tid < tid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < as->threads.n && as->threads.v[lo].tid == tid ? &as->threads.v[lo] : NULL;
}

int32_t as_pid_of(const aspace *as, int32_t tid)
{
    const as_thread *t = as_thread_get(as, tid);
    return t ? t->pid : -1;
}

const char *as_comm_range(const aspace *as, int32_t tid, uint64_t t, uint64_t *lo, uint64_t *hi)
{
    const as_thread *th = as_thread_get(as, tid);
    *lo = 0;
    *hi = AS_TIME_MAX;
    if (!th || !th->comms.n)
        return NULL;
    const char *c = th->comms.v[0].comm;
    for (size_t i = 0; i < th->comms.n; i++) {
        if (th->comms.v[i].t > t) {
            *hi = th->comms.v[i].t;
            break;
        }
        if (i > 0)
            *lo = th->comms.v[i].t;
        c = th->comms.v[i].comm;
    }
    return c;
}

const char *as_comm_at(const aspace *as, int32_t tid, uint64_t t)
{
    const as_thread *th = as_thread_get(as, tid);
    if (!th || !th->comms.n)
        return NULL;
    const char *c = th->comms.v[0].comm;
    for (size_t i = 0; i < th->comms.n; i++) {
        if (th->comms.v[i].t > t)
            break;
        c = th->comms.v[i].comm;
    }
    return c;
}
