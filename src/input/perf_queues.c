/* AUX slicing: every PERF_RECORD_AUX matched to its part of a PERF_RECORD_AUXTRACE buffer,
 * grouped into per-CPU or per-thread queues, with the trace ID map that applies.
 *
 * The result is immutable and holds no decoder state: each queue (and each slice in it) is an
 * independent unit of work. A slice always starts a fresh decoder, so a partial packet at the
 * end of one hardware buffer never runs into the next one. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/vec.h"
#include "input/perf_internal.h"

struct ek_perf_queues {
    ek_perf_queue *queues;
    size_t nqueues;
    ek_perf_slice *slices;
    size_t nslices;
    ek_perf_buffer_use *use;
    size_t nuse;
    ek_perf_idmap *idmaps;
    size_t nidmaps;
    size_t nempty, nno_data;
};

static void q_diag(const ek_perf_file *f, const ek_diag *d, ek_severity sev, const char *kind,
                   int status, int64_t record, int64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 8, 9)));
static void q_diag(const ek_perf_file *f, const ek_diag *d, ek_severity sev, const char *kind,
                   int status, int64_t record, int64_t offset, const char *fmt, ...)
{
    if (!d || !d->fn) return;
    va_list ap;
    va_start(ap, fmt);
    ek_diag_vemit(d, sev, kind, status, f->name, record, offset, -1, fmt, ap);
    va_end(ap);
}

/* Does AUX record a lie in buffer b?  On success the slice's start (in AUX-area offsets) and
 * size are returned. */
static int aux_in_buffer(const ek_perf_aux_rec *a, const ek_perf_auxtrace_rec *b, uint64_t *start,
                         uint64_t *size)
{
    if (b->cpu == -1) {
        if (!a->has_tid || a->sid.tid != b->tid) return 0;
    } else {
        if (!a->has_cpu || a->sid.cpu != (uint32_t)b->cpu) return 0;
    }
    uint64_t off = a->aux_offset, sz = a->aux_size;
    if (a->flags & EK_PERF_AUX_FLAG_OVERWRITE) {
        /* snapshot: aux_offset is the head (end) of the data; the buffer may be clamped */
        sz = a->aux_size < b->size ? a->aux_size : b->size;
        if (a->aux_offset < sz) return 0;
        off = a->aux_offset - sz;
    }
    if (off < b->aux_offset || sz > b->size || off - b->aux_offset > b->size - sz) return 0;
    *start = off;
    *size = sz;
    return 1;
}

/* Buffers sorted by (per-thread, cpu or tid, aux_offset, file order), each with the furthest
 * end (aux_offset + size) of it and the buffers before it in its group, so that an AUX record
 * finds its buffer in O(log n) (perf scans its whole index for every AUX record). */
typedef struct bref {
    int per_thread;
    uint32_t key;
    uint64_t aux_offset;
    size_t idx;
    uint64_t reach; /* largest end of this and the earlier buffers of its (per_thread, key) group */
} bref;

/* Buffers of a group normally follow each other in the AUX area, so the walk back from an
 * AUX record's offset stops after a buffer or two. Buffers that overlap (damage: one claiming
 * 2^40 bytes reaches past every later one) make every walk go back to them; after this many
 * steps in all, each AUX record looks at its FIND_STEPS_LATE nearest buffers only. */
#define FIND_STEPS_LATE 64
static size_t find_budget(size_t nbuf, size_t naux)
{
    size_t n = nbuf + naux;
    return n > (SIZE_MAX - (1u << 20)) / FIND_STEPS_LATE ? SIZE_MAX
                                                         : n * FIND_STEPS_LATE + (1u << 20);
}

static int bref_cmp(const void *x, const void *y)
{
    const bref *a = x, *b = y;
    if (a->per_thread != b->per_thread) return a->per_thread - b->per_thread;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    if (a->aux_offset != b->aux_offset) return a->aux_offset < b->aux_offset ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static bref *index_buffers(const ek_perf_auxtrace_rec *buf, size_t n)
{
    bref *r = malloc((n ? n : 1) * sizeof *r);
    if (!r) return NULL;
    for (size_t i = 0; i < n; i++) {
        r[i].per_thread = buf[i].cpu == -1;
        r[i].key = r[i].per_thread ? buf[i].tid : (uint32_t)buf[i].cpu;
        r[i].aux_offset = buf[i].aux_offset;
        r[i].idx = i;
    }
    qsort(r, n, sizeof *r, bref_cmp);
    uint64_t reach = 0;
    for (size_t i = 0; i < n; i++) {
        const ek_perf_auxtrace_rec *b = &buf[r[i].idx];
        uint64_t end =
            b->aux_offset + b->size < b->aux_offset ? UINT64_MAX : b->aux_offset + b->size;
        if (i == 0 || r[i].per_thread != r[i - 1].per_thread || r[i].key != r[i - 1].key)
            reach = 0; /* a new group */
        if (end > reach) reach = end;
        r[i].reach = reach;
    }
    return r;
}

/* The first buffer (in file order) of group (per_thread, key) that holds AUX record a. Each
 * step back takes one from *budget; once it is used up, only the FIND_STEPS_LATE nearest
 * buffers are looked at and *limited is set. */
static int64_t find_buffer(const bref *r, size_t n, const ek_perf_auxtrace_rec *buf,
                           const ek_perf_aux_rec *a, int per_thread, uint32_t key, uint64_t *start,
                           uint64_t *size, size_t *budget, int *limited)
{
    /* candidates start at or before x and end at or after y */
    uint64_t x = a->aux_offset;
    uint64_t y = (a->flags & EK_PERF_AUX_FLAG_OVERWRITE)       ? a->aux_offset
                 : a->aux_offset + a->aux_size < a->aux_offset ? UINT64_MAX
                                                               : a->aux_offset + a->aux_size;
    size_t lo = 0, hi = n; /* first element > (per_thread, key, x, max) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const bref *m = &r[mid];
        int gt = m->per_thread != per_thread ? m->per_thread > per_thread
                 : m->key != key             ? m->key > key
                                             : m->aux_offset > x;
        if (gt)
            hi = mid;
        else
            lo = mid + 1;
    }
    int64_t best = -1;
    uint64_t bs = 0, bz = 0;
    size_t late = 0;
    for (size_t i = lo; i-- > 0;) {
        const bref *c = &r[i];
        if (c->per_thread != per_thread || c->key != key) break;
        if (c->reach < y) break; /* no buffer this far back can reach y */
        if (*budget) {
            (*budget)--;
        } else if (++late > FIND_STEPS_LATE) {
            *limited = 1;
            break;
        }
        uint64_t s0, z0;
        if ((best < 0 || c->idx < (size_t)best) && aux_in_buffer(a, &buf[c->idx], &s0, &z0)) {
            best = (int64_t)c->idx;
            bs = s0;
            bz = z0;
        }
    }
    if (best >= 0) {
        *start = bs;
        *size = bz;
    }
    return best;
}

typedef struct qkey {
    int per_thread;
    int32_t cpu;
    uint32_t tid;
} qkey;

static int qkey_cmp(const qkey *x, const qkey *y)
{
    if (x->per_thread != y->per_thread) return x->per_thread - y->per_thread;
    if (x->per_thread) return x->tid < y->tid ? -1 : x->tid > y->tid;
    return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

typedef struct ek_perf_slice_key {
    qkey k;
    size_t slice; /* index in AUX record order */
} ek_perf_slice_key;

static int skey_cmp(const void *a, const void *b)
{
    const ek_perf_slice_key *x = a, *y = b;
    int c = qkey_cmp(&x->k, &y->k);
    if (c) return c;
    return x->slice < y->slice ? -1 : x->slice > y->slice;
}

typedef struct span {
    size_t buffer;
    uint64_t lo, hi;
} span;

static int span_cmp(const void *a, const void *b)
{
    const span *x = a, *y = b;
    if (x->buffer != y->buffer) return x->buffer < y->buffer ? -1 : 1;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int build_idmaps(const ek_perf_file *f, ek_perf_queues *q)
{
    const ek_perf_cs_etm *e = &f->etm;
    size_t nsinks = 0;
    uint32_t *sinks = NULL;
    if (e->ncpus) {
        sinks = malloc(e->ncpus * sizeof *sinks);
        if (!sinks) return EK_ERR_NOMEM;
    }
    for (size_t i = 0; i < e->ncpus; i++) {
        if (!e->cpus[i].have_sink) continue;
        size_t k = 0;
        while (k < nsinks && sinks[k] != e->cpus[i].sink_id)
            k++;
        if (k == nsinks) sinks[nsinks++] = e->cpus[i].sink_id;
    }
    q->nidmaps = 1 + nsinks;
    q->idmaps = calloc(q->nidmaps, sizeof *q->idmaps);
    if (!q->idmaps) {
        free(sinks);
        return EK_ERR_NOMEM;
    }
    for (size_t m = 0; m < q->nidmaps; m++) {
        ek_perf_idmap *map = &q->idmaps[m];
        map->global = m == 0;
        map->sink_id = m ? sinks[m - 1] : 0;
        for (int id = 0; id < 128; id++)
            map->cpu[id] = map->block[id] = -1;
        for (size_t i = 0; i < e->ncpus; i++) {
            const ek_perf_etm_cpu *c = &e->cpus[i];
            if (c->id_source == EK_TRACEID_NONE) continue;
            if (m ? !(c->have_sink && c->sink_id == map->sink_id) : c->have_sink) continue;
            unsigned id = c->cfg.trace_id & 0x7f;
            if (map->cpu[id] < 0) { /* clashes were reported by the reader: first one wins */
                map->cpu[id] = (int16_t)(c->cpu < 0x7fff ? c->cpu : 0x7fff);
                map->block[id] = (int16_t)i;
            }
        }
    }
    free(sinks);
    return 0;
}

static const ek_perf_idmap *idmap_for(const ek_perf_file *f, const ek_perf_queues *q, uint32_t cpu,
                                      int has_cpu)
{
    if (has_cpu) {
        const ek_perf_etm_cpu *c = ek_perf_cs_etm_cpu(f, cpu);
        if (c && c->have_sink)
            for (size_t m = 1; m < q->nidmaps; m++)
                if (q->idmaps[m].sink_id == c->sink_id) return &q->idmaps[m];
    }
    return &q->idmaps[0];
}

/* Where the CPUs' configurations differ from the lowest CPU's, for a diagnostic: "CPUs 4-7
 * differ from CPU 0 in TRCIDR0 (0x... against 0x...)", runs of CPUs with the same difference
 * together. */
static void cfg_differences(const ek_perf_file *f, char *out, size_t n)
{
    const ek_perf_cs_etm *e = &f->etm;
    size_t nc = f->cpu_order.n, len = 0;
    out[0] = 0;
    if (!nc) return;
    const ek_perf_etm_cpu *ref = &e->cpus[f->cpu_order.v[0]];
    ek_perf_cfg_diff run = {NULL, 0, 0};
    uint32_t first = 0, last = 0;
    for (size_t i = 1; i <= nc && len < n; i++) {
        const ek_perf_etm_cpu *c = i < nc ? &e->cpus[f->cpu_order.v[i]] : NULL;
        ek_perf_cfg_diff d = {NULL, 0, 0};
        if (c) ek_perf_etm_cpu_decode_diff(ref, c, &d);
        int same = c && d.field && run.field && !strcmp(d.field, run.field) && d.a == run.a &&
                   d.b == run.b && c->cpu == last + 1;
        if (same) {
            last = c->cpu;
            continue;
        }
        if (run.field) {
            char ca[24], cb[24];
            snprintf(ca, sizeof ca, run.b == UINT64_MAX ? "none" : "%#llx",
                     (unsigned long long)run.b);
            snprintf(cb, sizeof cb, run.a == UINT64_MAX ? "none" : "%#llx",
                     (unsigned long long)run.a);
            int w;
            if (first == last)
                w = snprintf(out + len, n - len, "%sCPU %u differs from CPU %u in %s (%s against %s)",
                             len ? "; " : "", first, ref->cpu, run.field, ca, cb);
            else
                w = snprintf(out + len, n - len,
                             "%sCPUs %u-%u differ from CPU %u in %s (%s against %s)",
                             len ? "; " : "", first, last, ref->cpu, run.field, ca, cb);
            len = w < 0 ? n : len + (size_t)w;
        }
        run = d;
        if (c) first = last = c->cpu;
    }
}

/* Per-thread AUX rings by event: an event ID's place among its attribute's IDs, and the first
 * per-thread AUXTRACE buffer (file order) of each ring index (idx); built when an AUX record
 * first needs them, so that damage (many records of unknown threads) stays O(n log n). */
typedef struct id_pos {
    uint64_t id;
    size_t pos;
} id_pos;

typedef struct idx_buf {
    uint32_t idx;
    size_t b;
} idx_buf;

typedef struct event_index {
    const ek_perf_attr *attr; /* whose IDs ids holds */
    id_pos *ids;
    idx_buf *bufs;
    size_t nbufs;
    int have_bufs;
} event_index;

static int id_pos_cmp(const void *x, const void *y)
{
    const id_pos *a = x, *b = y;
    if (a->id != b->id) return a->id < b->id ? -1 : 1;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static int idx_buf_cmp(const void *x, const void *y)
{
    const idx_buf *a = x, *b = y;
    if (a->idx != b->idx) return a->idx < b->idx ? -1 : 1;
    return a->b < b->b ? -1 : a->b > b->b;
}

static void event_index_free(event_index *e)
{
    free(e->ids);
    free(e->bufs);
}

/* The first per-thread buffer of the AUX ring of event id of attr: perf record --per-thread
 * opens one event per thread in its thread map's order and mmaps each alone, so the event's
 * place among the attribute's IDs is its ring's index. -1: none; -2: out of memory. */
static int64_t event_buffer(event_index *e, const ek_perf_attr *attr, uint64_t id,
                            const ek_perf_auxtrace_rec *buf, size_t nbuf)
{
    if (!attr->nids) return -1;
    if (e->attr != attr) {
        free(e->ids);
        e->attr = NULL;
        if (!(e->ids = malloc(attr->nids * sizeof *e->ids))) return -2;
        for (size_t i = 0; i < attr->nids; i++)
            e->ids[i] = (id_pos){attr->ids[i], i};
        qsort(e->ids, attr->nids, sizeof *e->ids, id_pos_cmp);
        e->attr = attr;
    }
    if (!e->have_bufs) {
        if (!(e->bufs = malloc((nbuf ? nbuf : 1) * sizeof *e->bufs))) return -2;
        for (size_t b = 0; b < nbuf; b++)
            if (buf[b].cpu == -1) e->bufs[e->nbufs++] = (idx_buf){buf[b].idx, b};
        qsort(e->bufs, e->nbufs, sizeof *e->bufs, idx_buf_cmp);
        e->have_bufs = 1;
    }
    /* the first place of id (a duplicated ID names no one event: take the first) */
    size_t lo = 0, hi = attr->nids;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e->ids[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == attr->nids || e->ids[lo].id != id || e->ids[lo].pos > UINT32_MAX) return -1;
    uint32_t idx = (uint32_t)e->ids[lo].pos;
    lo = 0;
    hi = e->nbufs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e->bufs[mid].idx < idx)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < e->nbufs && e->bufs[lo].idx == idx ? (int64_t)e->bufs[lo].b : -1;
}

int ek_perf_queues_new(const ek_perf_file *f, const ek_diag *diag, ek_perf_queues **out)
{
    return ek_perf_queues_new_opts(f, NULL, diag, out);
}

int ek_perf_queues_new_opts(const ek_perf_file *f, const ek_perf_queues_opts *o,
                            const ek_diag *diag, ek_perf_queues **out)
{
    int32_t raw_cpu = o ? o->raw_cpu : -1;
    event_index ev;
    memset(&ev, 0, sizeof ev);
    *out = NULL;
    ek_perf_queues *q = calloc(1, sizeof *q);
    if (!q) return EK_ERR_NOMEM;
    int rc = build_idmaps(f, q);
    if (rc) {
        ek_perf_queues_free(q);
        return rc;
    }
    const ek_perf_aux_rec *aux = f->aux.v;
    size_t naux = f->aux.n;
    const ek_perf_auxtrace_rec *buf = f->auxtrace.v;
    size_t nbuf = f->auxtrace.n;

    int per_thread = 0, per_cpu = 0;
    for (size_t b = 0; b < nbuf; b++) {
        if (buf[b].cpu == -1)
            per_thread = 1;
        else
            per_cpu = 1;
    }
    if (per_thread && per_cpu)
        q_diag(f, diag, EK_SEV_WARN, "perf.queue-mode", EK_ERR_FORMAT, -1, -1,
               "AUXTRACE buffers mix per-thread (cpu -1) and per-CPU recording");

    q->nuse = nbuf;
    q->use = nbuf ? calloc(nbuf, sizeof *q->use) : NULL;
    EK_VEC(ek_perf_slice) sl = {0};
    EK_VEC(ek_perf_slice_key) skeys = {0};
    bref *brefs = index_buffers(buf, nbuf);
    if ((nbuf && !q->use) || !brefs) goto nomem;
    size_t budget = find_budget(nbuf, naux), nlimited = 0;
    int64_t first_limited = -1, first_limited_off = -1;
    size_t nby_event = 0;
    int64_t first_by_event = -1, first_by_event_off = -1;
    uint32_t by_event_tid = 0, by_event_buf_tid = 0;

    for (size_t i = 0; i < naux; i++) {
        const ek_perf_aux_rec *a = &aux[i];
        if (a->aux_size == 0) {
            q->nempty++;
            continue;
        }
        ek_perf_slice s;
        memset(&s, 0, sizeof s);
        s.aux = i;
        s.aux_record = a->record;
        s.aux_record_offset = a->offset;
        s.aux_offset = a->aux_offset;
        s.aux_size = a->aux_size;
        s.flags = a->flags;
        s.sid = a->sid;
        s.buffer = -1;
        s.formatted = !(a->flags & EK_PERF_AUX_FLAG_CORESIGHT_RAW);
        uint64_t start = 0, size = 0;
        int64_t hit = -1, other;
        uint64_t s2 = 0, z2 = 0;
        int limited = 0;
        if (per_cpu && a->has_cpu)
            hit = find_buffer(brefs, nbuf, buf, a, 0, a->sid.cpu, &start, &size, &budget, &limited);
        if (per_thread && a->has_tid &&
            (other = find_buffer(brefs, nbuf, buf, a, 1, a->sid.tid, &s2, &z2, &budget,
                                 &limited)) >= 0 &&
            (hit < 0 || other < hit)) {
            hit = other;
            start = s2;
            size = z2;
        }
        if (hit < 0 && per_thread && a->has_tid && a->sid.attr &&
            (a->sid.present & (EK_PERF_SAMPLE_ID | EK_PERF_SAMPLE_IDENTIFIER))) {
            /* The kernel fills an AUX record's tid with the task current on the CPU when it is
             * emitted, which for a per-thread event is not always the event's thread (a
             * TRBE's buffer-full interrupt after a switch). Its sample ID names the event: perf
             * record --per-thread opens one event per thread in its thread map's order, and
             * mmaps each alone, so the event's place among its attribute's IDs is the index of
             * the AUX ring, the AUXTRACE records' idx (perf 6.1 matches by tid only and skips
             * the record) */
            int64_t b = event_buffer(&ev, a->sid.attr, a->sid.id, buf, nbuf);
            if (b == -2) goto nomem;
            if (b >= 0 && buf[b].tid != a->sid.tid) {
                ek_perf_aux_rec a2 = *a;
                a2.sid.tid = buf[b].tid;
                hit = find_buffer(brefs, nbuf, buf, &a2, 1, buf[b].tid, &start, &size, &budget,
                                  &limited);
                if (hit >= 0 && !nby_event++) {
                    first_by_event = a->record;
                    first_by_event_off = (int64_t)a->offset;
                    by_event_tid = a->sid.tid;
                    by_event_buf_tid = buf[b].tid;
                }
            }
        }
        if (limited && !nlimited++) {
            first_limited = a->record;
            first_limited_off = (int64_t)a->offset;
        }
        s.buffer = hit;
        qkey k;
        memset(&k, 0, sizeof k);
        if (s.buffer >= 0) {
            const ek_perf_auxtrace_rec *b = &buf[s.buffer];
            s.buffer_pos = start - b->aux_offset;
            s.data_offset = b->data_offset + s.buffer_pos;
            s.data_size = size;
            if (s.buffer_pos >= b->avail)
                s.data_size = 0;
            else if (b->avail - s.buffer_pos < size)
                s.data_size = b->avail - s.buffer_pos;
            if (s.data_size < size) {
                s.problems |= EK_SLICE_CLIPPED;
                q_diag(f, diag, EK_SEV_WARN, "perf.slice-clipped", EK_ERR_TRUNCATED, a->record,
                       (int64_t)a->offset,
                       "AUX record's data (0x%llx bytes) is cut short in the file: 0x%llx "
                       "bytes present",
                       (unsigned long long)size, (unsigned long long)s.data_size);
            }
            k.per_thread = b->cpu == -1;
            k.cpu = b->cpu;
            k.tid = b->tid;
        } else {
            s.problems |= EK_SLICE_NO_DATA;
            q->nno_data++;
            if (!per_thread && !a->has_cpu) s.problems |= EK_SLICE_NO_CPU;
            k.per_thread = per_thread && !per_cpu;
            k.cpu = a->has_cpu ? (int32_t)a->sid.cpu : -1;
            k.tid = a->sid.tid;
            q_diag(f, diag, EK_SEV_WARN, "perf.aux-no-data", EK_ERR_NOT_FOUND, a->record,
                   (int64_t)a->offset,
                   "AUX record (offset 0x%llx, size 0x%llx, cpu %s%u) has no AUXTRACE data",
                   (unsigned long long)a->aux_offset, (unsigned long long)a->aux_size,
                   a->has_cpu ? "" : "?", a->has_cpu ? a->sid.cpu : 0);
        }
        ek_perf_slice_key sk = {k, sl.n};
        if (ek_vec_push(&sl, s) || ek_vec_push(&skeys, sk)) goto nomem;
    }
    if (nby_event)
        q_diag(f, diag, EK_SEV_NOTE, "perf.aux-other-thread", 0, first_by_event,
               first_by_event_off,
               "%zu per-thread AUX record%s of another thread than the event's (the first names "
               "thread %u, emitted while it was current; its event's AUX area is thread %u's) "
               "matched to the event's buffers by the sample ID (perf 6.1 matches by thread "
               "and skips %s)",
               nby_event, nby_event == 1 ? "" : "s", by_event_tid, by_event_buf_tid,
               nby_event == 1 ? "it" : "them");
    if (nlimited)
        q_diag(f, diag, EK_SEV_WARN, "perf.buffers-overlap", EK_ERR_LIMIT, first_limited,
               first_limited_off,
               "AUXTRACE buffers of one queue overlap in the AUX area (damage: a buffer claims "
               "more than its place); %zu AUX records, the first here, were matched among their %d "
               "nearest buffers only",
               nlimited, FIND_STEPS_LATE);
    if (q->nempty)
        q_diag(f, diag, EK_SEV_NOTE, "perf.aux-empty", 0, -1, -1,
               "%zu AUX record%s of size 0 (nothing to decode)", q->nempty,
               q->nempty == 1 ? "" : "s");

    /* queues in key order; slices in AUX record order within each */
    if (skeys.n) qsort(skeys.v, skeys.n, sizeof *skeys.v, skey_cmp);
    size_t nq = 0;
    for (size_t i = 0; i < skeys.n; i++)
        if (!i || qkey_cmp(&skeys.v[i - 1].k, &skeys.v[i].k)) nq++;
    q->queues = nq ? calloc(nq, sizeof *q->queues) : NULL;
    q->slices = sl.n ? malloc(sl.n * sizeof *q->slices) : NULL;
    if ((nq && !q->queues) || (sl.n && !q->slices)) goto nomem;
    q->nslices = sl.n;
    size_t qi = 0;
    for (size_t i = 0; i < skeys.n; i++) {
        const qkey *k = &skeys.v[i].k;
        if (i && qkey_cmp(&skeys.v[i - 1].k, k)) qi++;
        if (!i || qkey_cmp(&skeys.v[i - 1].k, k)) {
            ek_perf_queue *qu = &q->queues[qi];
            qu->per_thread = k->per_thread;
            qu->cpu = k->per_thread ? -1 : k->cpu;
            qu->tid = k->per_thread ? k->tid : 0;
            qu->etm =
                (!k->per_thread && k->cpu >= 0) ? ek_perf_cs_etm_cpu(f, (uint32_t)k->cpu) : NULL;
        }
        q->slices[i] = sl.v[skeys.v[i].slice];
        q->slices[i].queue = qi;
    }
    ek_vec_free(&sl);
    size_t nshared = 0;
    uint64_t shared_bytes = 0;
    int64_t first_shared = -1, first_shared_off = -1;
    char diffs[512] = "";
    for (size_t i = 0; i < q->nslices; i++) {
        ek_perf_slice *s = &q->slices[i];
        ek_perf_queue *qu = &q->queues[s->queue];
        if (!qu->nslices) {
            qu->slices = s;
            qu->formatted = s->formatted;
        } else if (s->formatted != qu->formatted) {
            s->problems |= EK_SLICE_MIXED_FORMAT;
            q_diag(f, diag, EK_SEV_WARN, "perf.mixed-format", EK_ERR_UNSUPPORTED, s->aux_record,
                   (int64_t)s->aux_record_offset,
                   "queue mixes CoreSight-formatted and raw trace (this AUX record is %s)",
                   s->formatted ? "formatted" : "raw");
        }
        qu->nslices++;
        s->raw_cpu = -1;
        if (s->formatted) {
            s->idmap = idmap_for(f, q, s->sid.cpu, !!(s->sid.present & EK_PERF_SAMPLE_CPU));
        } else if (qu->cpu >= 0 || qu->etm) {
            /* a per-CPU queue: its CPU's configuration */
            s->raw_etm = qu->etm;
            s->raw_cpu = qu->cpu;
        } else if (s->sid.present & EK_PERF_SAMPLE_CPU) {
            /* a queue without a CPU, but the AUX record names the CPU whose trace unit wrote
             * the data (sample_id with PERF_SAMPLE_CPU) */
            s->raw_etm = ek_perf_cs_etm_cpu(f, s->sid.cpu);
            if (s->raw_etm) s->raw_cpu = (int32_t)s->sid.cpu;
        } else if (raw_cpu >= 0) {
            s->raw_etm = ek_perf_cs_etm_cpu(f, (uint32_t)raw_cpu);
        } else if (f->etm.shared) {
            s->raw_etm = f->etm.shared;
            if (!(s->problems & EK_SLICE_NO_DATA)) {
                s->problems |= EK_SLICE_SHARED_CONFIG;
                nshared++;
                shared_bytes += s->data_size;
                if (first_shared < 0) {
                    first_shared = s->aux_record;
                    first_shared_off = (int64_t)s->aux_record_offset;
                }
            }
        }
        if (!s->formatted && !s->raw_etm && !(s->problems & EK_SLICE_NO_DATA)) {
            s->problems |= EK_SLICE_NO_CONFIG;
            if (qu->cpu >= 0 || (s->sid.present & EK_PERF_SAMPLE_CPU)) {
                q_diag(f, diag, EK_SEV_WARN, "perf.raw-no-config", EK_ERR_NOT_FOUND,
                       s->aux_record, (int64_t)s->aux_record_offset,
                       "raw (unformatted) trace of CPU %d, which has no cs_etm metadata",
                       qu->cpu >= 0 ? (int)qu->cpu : (int)s->sid.cpu);
            } else if (raw_cpu >= 0) {
                q_diag(f, diag, EK_SEV_WARN, "perf.raw-cpu", EK_ERR_NOT_FOUND, s->aux_record,
                       (int64_t)s->aux_record_offset,
                       "raw (unformatted) trace of a per-thread queue: --raw-cpu=%d names a "
                       "CPU the recording has no cs_etm metadata for",
                       (int)raw_cpu);
            } else {
                if (!diffs[0]) cfg_differences(f, diffs, sizeof diffs);
                q_diag(f, diag, EK_SEV_WARN, "perf.raw-no-config", EK_ERR_NOT_FOUND,
                       s->aux_record, (int64_t)s->aux_record_offset,
                       "raw (unformatted) trace of a per-thread queue: no record names the CPU "
                       "that wrote it, and the CPUs decode differently (%s); not decoded "
                       "(remedy: --raw-cpu=N decodes it with CPU N's configuration, for trace "
                       "of a program that ran on CPUs configured as CPU N)",
                       diffs[0] ? diffs : "no cs_etm metadata");
            }
        }
        if (s->buffer >= 0) q->use[s->buffer].nslices++;
    }

    if (nshared) {
        const ek_perf_etm_cpu *c = f->etm.shared;
        q_diag(f, diag, EK_SEV_NOTE, "perf.raw-shared-config", 0, first_shared, first_shared_off,
               "raw (unformatted) trace of %zu AUX record%s (%llu bytes) in per-thread queues: "
               "no record names the CPU that wrote it; decoded with the configuration all %zu "
               "CPUs share (CPU %u's, the trace ID aside), its samples carry no CPU (cpu -1)",
               nshared, nshared == 1 ? "" : "s", (unsigned long long)shared_bytes,
               f->etm.ncpus, c->cpu);
    }

    /* buffer coverage: all slice spans sorted by (buffer, start), one sweep */
    size_t nsp = 0;
    for (size_t i = 0; i < q->nslices; i++)
        nsp += q->slices[i].buffer >= 0;
    span *sp = malloc((nsp ? nsp : 1) * sizeof *sp);
    if (!sp) goto nomem;
    nsp = 0;
    for (size_t i = 0; i < q->nslices; i++) {
        const ek_perf_slice *x = &q->slices[i];
        if (x->buffer < 0) continue;
        uint64_t bsz = buf[x->buffer].size;
        uint64_t n =
            (x->flags & EK_PERF_AUX_FLAG_OVERWRITE) && x->aux_size > bsz ? bsz : x->aux_size;
        sp[nsp].buffer = (size_t)x->buffer;
        sp[nsp].lo = x->buffer_pos;
        sp[nsp].hi = x->buffer_pos + n;
        nsp++;
    }
    qsort(sp, nsp, sizeof *sp, span_cmp);
    /* perf record pads every AUXTRACE buffer to a multiple of 8 bytes (the size it records
     * includes the padding): up to 7 bytes after the last slice are that padding, not trace */
    uint8_t *padded = calloc(nbuf ? nbuf : 1, 1);
    if (!padded) {
        free(sp);
        goto nomem;
    }
    for (size_t i = 0; i < nsp;) {
        size_t b = sp[i].buffer;
        uint64_t covered = 0, hi = 0;
        for (; i < nsp && sp[i].buffer == b; i++) {
            uint64_t lo = sp[i].lo > hi ? sp[i].lo : hi;
            if (sp[i].hi > lo) covered += sp[i].hi - lo;
            if (sp[i].hi > hi) hi = sp[i].hi;
        }
        q->use[b].covered = covered;
        padded[b] =
            covered == hi && buf[b].size % 8 == 0 && buf[b].size >= hi && buf[b].size - hi < 8;
    }
    free(sp);
    for (size_t b = 0; b < nbuf; b++) {
        if (!q->use[b].nslices)
            q_diag(f, diag, EK_SEV_WARN, "perf.buffer-unused", 0, buf[b].record,
                   (int64_t)buf[b].offset,
                   "AUXTRACE buffer (cpu %d, tid %u, offset 0x%llx, size 0x%llx) is covered by "
                   "no AUX record",
                   buf[b].cpu, buf[b].tid, (unsigned long long)buf[b].aux_offset,
                   (unsigned long long)buf[b].size);
        else if (q->use[b].covered < buf[b].size && !padded[b])
            q_diag(f, diag, EK_SEV_NOTE, "perf.buffer-uncovered", 0, buf[b].record,
                   (int64_t)buf[b].offset,
                   "0x%llx of the 0x%llx bytes of this AUXTRACE buffer lie in no AUX record",
                   (unsigned long long)(buf[b].size - q->use[b].covered),
                   (unsigned long long)buf[b].size);
    }
    free(padded);
    q->nqueues = nq;
    event_index_free(&ev);
    free(brefs);
    ek_vec_free(&skeys);
    *out = q;
    return 0;
nomem:
    event_index_free(&ev);
    free(brefs);
    ek_vec_free(&sl);
    ek_vec_free(&skeys);
    ek_perf_queues_free(q);
    return EK_ERR_NOMEM;
}

void ek_perf_queues_free(ek_perf_queues *q)
{
    if (!q) return;
    free(q->queues);
    free(q->slices);
    free(q->use);
    free(q->idmaps);
    free(q);
}

size_t ek_perf_queues_count(const ek_perf_queues *q)
{
    return q->nqueues;
}
const ek_perf_queue *ek_perf_queue_at(const ek_perf_queues *q, size_t i)
{
    return i < q->nqueues ? &q->queues[i] : NULL;
}
const ek_perf_slice *ek_perf_queues_slices(const ek_perf_queues *q, size_t *n)
{
    *n = q->nslices;
    return q->slices;
}
size_t ek_perf_queues_nempty(const ek_perf_queues *q)
{
    return q->nempty;
}
size_t ek_perf_queues_nno_data(const ek_perf_queues *q)
{
    return q->nno_data;
}
const ek_perf_buffer_use *ek_perf_queues_buffer_use(const ek_perf_queues *q, size_t *n)
{
    *n = q->nuse;
    return q->use;
}
size_t ek_perf_queues_nidmaps(const ek_perf_queues *q)
{
    return q->nidmaps;
}
const ek_perf_idmap *ek_perf_queues_idmap_at(const ek_perf_queues *q, size_t i)
{
    return i < q->nidmaps ? &q->idmaps[i] : NULL;
}

const uint8_t *ek_perf_slice_data(const ek_perf_file *f, const ek_perf_slice *s, size_t *len)
{
    if (!s->data_size || s->data_offset > f->size || s->data_size > f->size - s->data_offset) {
        *len = 0;
        return NULL;
    }
    *len = (size_t)s->data_size;
    return f->data + s->data_offset;
}
