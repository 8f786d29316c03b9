/* The recording's sideband: maps, names, forks and exits for the address-space timeline, the
 * thread each CPU ran (ITRACE_START and switch records), the time of every AUX record, and
 * the records perf lost. */
#include <stdlib.h>
#include <string.h>

#include "core/slots.h"
#include "etmkit/etmkit.h"
#include "session/session_int.h"

static char *keep(ek_session *s, const char *str)
{
    char *c = strdup(str ? str : "");
    if (!c)
        return NULL;
    if (ek_vec_push(&s->strings, c)) {
        free(c);
        return NULL;
    }
    return c;
}


/* ---- per-CPU threads from ITRACE_START and switch records -------------------------------------- */

/* CPU number -> index in s->cpus, for the sideband pass: open addressing, slots hold index + 1
 * (0: empty), at most half full. A damaged file can name a new CPU in every record, so a linear
 * search of s->cpus per record would take time records x CPUs. */
typedef struct cpu_map {
    size_t *slot;
    size_t mask; /* capacity - 1 (a power of 2); 0: no table yet */
} cpu_map;

static size_t cpu_hash(int32_t cpu, size_t mask)
{
    uint32_t h = (uint32_t)cpu * 0x9E3779B1u;
    return (size_t)(h ^ (h >> 16)) & mask;
}

static size_t cpu_hash_at(const void *ctx, size_t i)
{
    return cpu_hash(((const ek_session *)ctx)->cpus.v[i].cpu, SIZE_MAX);
}

static int cpu_map_grow(cpu_map *m, const ek_session *s)
{
    size_t cap = m->mask ? (m->mask + 1) * 2 : 64;
    size_t *slot = ek_slots_build(cap, s->cpus.n, cpu_hash_at, s);
    if (!slot) return EK_ERR_NOMEM;
    free(m->slot);
    m->slot = slot;
    m->mask = cap - 1;
    return 0;
}

static cpu_timeline *cpu_tl(ek_session *s, cpu_map *m, int32_t cpu)
{
    if ((s->cpus.n + 1) * 2 > m->mask + 1 && cpu_map_grow(m, s)) return NULL;
    size_t h = cpu_hash(cpu, m->mask);
    for (; m->slot[h]; h = (h + 1) & m->mask)
        if (s->cpus.v[m->slot[h] - 1].cpu == cpu) return &s->cpus.v[m->slot[h] - 1];
    cpu_timeline t;
    memset(&t, 0, sizeof t);
    t.cpu = cpu;
    if (ek_vec_push(&s->cpus, t))
        return NULL;
    m->slot[h] = s->cpus.n;
    return &s->cpus.v[s->cpus.n - 1];
}

static void cpu_add(ek_session *s, cpu_map *m, int32_t cpu, uint64_t key, int32_t pid, int32_t tid)
{
    cpu_timeline *t = cpu_tl(s, m, cpu);
    if (!t)
        return;
    cpu_thread e = {key, pid, tid};
    ek_vec_push(&t->v, e);
}

static int ct_cmp(const void *a, const void *b)
{
    const cpu_thread *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

static int tl_cmp(const void *a, const void *b)
{
    const cpu_timeline *x = a, *y = b;
    return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

int session_cpu_thread(const ek_session *s, int32_t cpu, uint64_t key, int32_t *pid, int32_t *tid)
{
    /* s->cpus is sorted by CPU (session_sideband), one entry per CPU */
    size_t lo = 0, hi = s->cpus.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->cpus.v[mid].cpu < cpu)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == s->cpus.n || s->cpus.v[lo].cpu != cpu || !s->cpus.v[lo].v.n) return 0;
    const cpu_timeline *t = &s->cpus.v[lo];
    /* the last entry at or before key; else the first one */
    lo = 0;
    hi = t->v.n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t->v.v[mid].key <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    const cpu_thread *e = &t->v.v[lo ? lo - 1 : 0];
    *pid = e->pid;
    *tid = e->tid;
    return 1;
}

/* AUX record number -> its position in ek_perf_aux_records(), for AUX records that are not the
 * next one of that list (damaged AUX records are not in it): sorted by (record, position), so
 * that a binary search finds the first position, as a scan from the start would. Built at the
 * first such record; a scan per record took time records x naux. */
typedef struct aux_pos {
    int64_t record;
    size_t k;
} aux_pos;

static int aux_pos_cmp(const void *a, const void *b)
{
    const aux_pos *x = a, *y = b;
    if (x->record != y->record) return x->record < y->record ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

static aux_pos *aux_pos_index(const ek_perf_aux_rec *aux, size_t naux)
{
    aux_pos *p = naux <= SIZE_MAX / sizeof *p ? malloc((naux ? naux : 1) * sizeof *p) : NULL;
    if (!p) return NULL;
    for (size_t k = 0; k < naux; k++) {
        p[k].record = aux[k].record;
        p[k].k = k;
    }
    qsort(p, naux, sizeof *p, aux_pos_cmp);
    return p;
}

/* The first position of record in the index, or SIZE_MAX. */
static size_t aux_pos_find(const aux_pos *p, size_t naux, int64_t record)
{
    size_t lo = 0, hi = naux;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p[mid].record < record)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < naux && p[lo].record == record ? p[lo].k : SIZE_MAX;
}

/* ---- sideband ---------------------------------------------------------------------------------- */

int session_sideband(ek_session *s)
{
    ek_perf_iter *it = NULL;
    int rc = ek_perf_iter_new(s->pf, EK_PERF_ITER_SIDEBAND, NULL, &it);
    if (rc)
        return rc;
    size_t naux = 0;
    const ek_perf_aux_rec *aux = ek_perf_aux_records(s->pf, &naux);
    if (ek_vec_reserve(&s->aux_keys, naux ? naux : 1)) {
        ek_perf_iter_free(it);
        return EK_ERR_NOMEM;
    }
    size_t aux_i = 0;
    aux_pos *apos = NULL; /* built at the first AUX record out of order */
    cpu_map cm = {NULL, 0};
    uint64_t key = 0;
    ek_perf_record r;
    while ((rc = ek_perf_iter_next(it, &r)) == 0) {
        if (r.sid.present & EK_PERF_SAMPLE_TIME) {
            key = r.sid.time;
            s->has_time = 1;
        }
        as_event ev;
        memset(&ev, 0, sizeof ev);
        ev.key = key;
        ev.record = r.index;
        ev.offset = r.offset;
        int cpu_ok = (r.sid.present & EK_PERF_SAMPLE_CPU) != 0;
        switch (r.type) {
        case EK_PERF_RECORD_MMAP:
        case EK_PERF_RECORD_MMAP2: {
            unsigned cpumode = r.misc & EK_PERF_MISC_CPUMODE_MASK;
            int kernel = cpumode == EK_PERF_MISC_KERNEL || cpumode == EK_PERF_MISC_GUEST_KERNEL ||
                         (int32_t)r.u.mmap.pid == -1;
            const char *fn = keep(s, r.u.mmap.filename);
            if (!fn)
                break;
            ev.type = AS_EV_MMAP;
            ev.pid = (int32_t)r.u.mmap.pid;
            ev.tid = (int32_t)r.u.mmap.tid;
            ev.start = r.u.mmap.addr;
            ev.len = r.u.mmap.len;
            ev.pgoff = r.u.mmap.pgoff;
            ev.kernel = kernel;
            ev.filename = fn;
            if (r.type == EK_PERF_RECORD_MMAP2) {
                ev.prot = r.u.mmap.prot;
                ev.exec = (r.u.mmap.prot & 4) != 0;
            } else {
                ev.prot = 5;
                ev.exec = !(r.misc & EK_PERF_MISC_MMAP_DATA);
            }
            ev.dso = dso_get(s->reg, fn, kernel);
            if (r.type == EK_PERF_RECORD_MMAP2 && r.u.mmap.has_build_id && ev.dso)
                dso_set_build_id(s->reg, fn, kernel, r.u.mmap.build_id, r.u.mmap.build_id_size);
            as_add(s->as, &ev);
            if (!kernel)
                jit_note_mmap(s, ev.pid, fn, r.index, r.offset);
            break;
        }
        case EK_PERF_RECORD_COMM:
            ev.type = AS_EV_COMM;
            ev.pid = (int32_t)r.u.comm.pid;
            ev.tid = (int32_t)r.u.comm.tid;
            ev.comm = keep(s, r.u.comm.comm);
            ev.comm_exec = (r.misc & EK_PERF_MISC_COMM_EXEC) != 0;
            if (ev.comm)
                as_add(s->as, &ev);
            break;
        case EK_PERF_RECORD_FORK:
        case EK_PERF_RECORD_EXIT:
            ev.type = r.type == EK_PERF_RECORD_FORK ? AS_EV_FORK : AS_EV_EXIT;
            ev.pid = (int32_t)r.u.fork.pid;
            ev.tid = (int32_t)r.u.fork.tid;
            ev.ppid = (int32_t)r.u.fork.ppid;
            ev.ptid = (int32_t)r.u.fork.ptid;
            as_add(s->as, &ev);
            break;
        case EK_PERF_RECORD_ITRACE_START:
            ev.type = AS_EV_THREAD;
            ev.pid = (int32_t)r.u.itrace_start.pid;
            ev.tid = (int32_t)r.u.itrace_start.tid;
            as_add(s->as, &ev);
            if (cpu_ok) cpu_add(s, &cm, (int32_t)r.sid.cpu, key, ev.pid, ev.tid);
            break;
        case EK_PERF_RECORD_SWITCH:
            /* switch in: the trailer's thread now runs on the trailer's CPU */
            if (!(r.misc & EK_PERF_MISC_SWITCH_OUT) && cpu_ok &&
                (r.sid.present & EK_PERF_SAMPLE_TID))
                cpu_add(s, &cm, (int32_t)r.sid.cpu, key, (int32_t)r.sid.pid, (int32_t)r.sid.tid);
            break;
        case EK_PERF_RECORD_SWITCH_CPU_WIDE:
            if (cpu_ok) {
                if (r.misc & EK_PERF_MISC_SWITCH_OUT)
                    cpu_add(s, &cm, (int32_t)r.sid.cpu, key, (int32_t)r.u.sw.next_prev_pid,
                            (int32_t)r.u.sw.next_prev_tid);
                else if (r.sid.present & EK_PERF_SAMPLE_TID)
                    cpu_add(s, &cm, (int32_t)r.sid.cpu, key, (int32_t)r.sid.pid,
                            (int32_t)r.sid.tid);
            }
            ev.type = AS_EV_THREAD;
            ev.pid = (int32_t)r.u.sw.next_prev_pid;
            ev.tid = (int32_t)r.u.sw.next_prev_tid;
            as_add(s->as, &ev);
            break;
        case EK_PERF_RECORD_AUX:
            /* AUX records come in the same order as ek_perf_aux_records() */
            if (aux_i < naux && aux[aux_i].record == r.index) {
                s->aux_keys.v[aux_i++] = key;
                s->aux_keys.n = aux_i;
            } else if (naux) {
                if (!apos && !(apos = aux_pos_index(aux, naux))) {
                    rc = EK_ERR_NOMEM;
                    goto out;
                }
                size_t k = aux_pos_find(apos, naux, r.index);
                if (k != SIZE_MAX) {
                    s->aux_keys.v[k] = key;
                    if (k + 1 > s->aux_keys.n) s->aux_keys.n = k + 1;
                    aux_i = k + 1;
                }
            }
            break;
        case EK_PERF_RECORD_LOST:
            s->lost_records++;
            s->lost_events += r.u.lost.lost;
            break;
        default:
            break;
        }
    }
out:
    ek_perf_iter_free(it);
    free(apos);
    free(cm.slot);
    for (size_t i = 0; i < s->cpus.n; i++)
        if (s->cpus.v[i].v.n > 1)
            qsort(s->cpus.v[i].v.v, s->cpus.v[i].v.n, sizeof(cpu_thread), ct_cmp);
    /* for session_cpu_thread's binary search (one entry per CPU: the order is unique) */
    if (s->cpus.n > 1) qsort(s->cpus.v, s->cpus.n, sizeof(cpu_timeline), tl_cmp);
    return rc == EK_ERR_EOS ? 0 : rc;
}

