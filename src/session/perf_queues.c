/* AUX slicing: every PERF_RECORD_AUX matched to its part of a PERF_RECORD_AUXTRACE buffer,
 * grouped into per-CPU or per-thread queues, with the trace ID map that applies.
 *
 * The result is immutable and holds no decoder state: each queue (and each slice in it) is an
 * independent unit of work. A slice always starts a fresh decoder, so a partial packet at the
 * end of one hardware buffer never runs into the next one. */
#include <stdarg.h>
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
    if (!d || !d->fn)
        return;
    va_list ap;
    va_start(ap, fmt);
    ek_diag_vemit(d, sev, kind, status, f->name, record, offset, -1, fmt, ap);
    va_end(ap);
}

/* Does AUX record a lie in buffer b?  On success the slice's start (in AUX-area offsets) and
 * size are returned. */
static int aux_in_buffer(const ek_perf_aux_rec *a, const ek_perf_auxtrace_rec *b, int per_thread,
                         uint64_t *start, uint64_t *size)
{
    if (b->cpu == -1) {
        if (!a->has_tid || a->sid.tid != b->tid)
            return 0;
    } else {
        if (per_thread || !a->has_cpu || a->sid.cpu != (uint32_t)b->cpu)
            return 0;
    }
    uint64_t off = a->aux_offset, sz = a->aux_size;
    if (a->flags & EK_PERF_AUX_FLAG_OVERWRITE) {
        /* snapshot: aux_offset is the head (end) of the data; the buffer may be clamped */
        sz = a->aux_size < b->size ? a->aux_size : b->size;
        if (a->aux_offset < sz)
            return 0;
        off = a->aux_offset - sz;
    }
    if (off < b->aux_offset || sz > b->size || off - b->aux_offset > b->size - sz)
        return 0;
    *start = off;
    *size = sz;
    return 1;
}

typedef struct qkey {
    int per_thread;
    int32_t cpu;
    uint32_t tid;
} qkey;

static int qkey_cmp(const qkey *x, const qkey *y)
{
    if (x->per_thread != y->per_thread)
        return x->per_thread - y->per_thread;
    if (x->per_thread)
        return x->tid < y->tid ? -1 : x->tid > y->tid;
    return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

static int slice_cmp(const void *a, const void *b)
{
    const ek_perf_slice *x = a, *y = b;
    if (x->queue != y->queue)
        return x->queue < y->queue ? -1 : 1;
    return x->aux < y->aux ? -1 : x->aux > y->aux;
}

typedef struct span {
    uint64_t lo, hi;
} span;

static int span_cmp(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int build_idmaps(const ek_perf_file *f, ek_perf_queues *q)
{
    const ek_perf_cs_etm *e = &f->etm;
    size_t nsinks = 0;
    uint32_t *sinks = NULL;
    if (e->ncpus) {
        sinks = malloc(e->ncpus * sizeof *sinks);
        if (!sinks)
            return EK_ERR_NOMEM;
    }
    for (size_t i = 0; i < e->ncpus; i++) {
        if (!e->cpus[i].have_sink)
            continue;
        size_t k = 0;
        while (k < nsinks && sinks[k] != e->cpus[i].sink_id)
            k++;
        if (k == nsinks)
            sinks[nsinks++] = e->cpus[i].sink_id;
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
            if (c->id_source == EK_TRACEID_NONE)
                continue;
            if (m ? !(c->have_sink && c->sink_id == map->sink_id) : c->have_sink)
                continue;
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

static const ek_perf_idmap *idmap_for(const ek_perf_file *f, const ek_perf_queues *q,
                                      uint32_t cpu, int has_cpu)
{
    if (has_cpu) {
        const ek_perf_etm_cpu *c = ek_perf_cs_etm_cpu(f, cpu);
        if (c && c->have_sink)
            for (size_t m = 1; m < q->nidmaps; m++)
                if (q->idmaps[m].sink_id == c->sink_id)
                    return &q->idmaps[m];
    }
    return &q->idmaps[0];
}

int ek_perf_queues_new(const ek_perf_file *f, const ek_diag *diag, ek_perf_queues **out)
{
    *out = NULL;
    ek_perf_queues *q = calloc(1, sizeof *q);
    if (!q)
        return EK_ERR_NOMEM;
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
    EK_VEC(qkey) keys = {0};
    EK_VEC(size_t) slice_key = {0};
    if (nbuf && !q->use)
        goto nomem;

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
        for (size_t b = 0; b < nbuf; b++) {
            if (aux_in_buffer(a, &buf[b], per_thread && !per_cpu, &start, &size)) {
                s.buffer = (int64_t)b;
                break;
            }
        }
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
            if (!per_thread && !a->has_cpu)
                s.problems |= EK_SLICE_NO_CPU;
            k.per_thread = per_thread && !per_cpu;
            k.cpu = a->has_cpu ? (int32_t)a->sid.cpu : -1;
            k.tid = a->sid.tid;
            q_diag(f, diag, EK_SEV_WARN, "perf.aux-no-data", EK_ERR_NOT_FOUND, a->record,
                   (int64_t)a->offset,
                   "AUX record (offset 0x%llx, size 0x%llx, cpu %s%u) has no AUXTRACE data",
                   (unsigned long long)a->aux_offset, (unsigned long long)a->aux_size,
                   a->has_cpu ? "" : "?", a->has_cpu ? a->sid.cpu : 0);
        }
        size_t kk = 0;
        while (kk < keys.n && qkey_cmp(&keys.v[kk], &k))
            kk++;
        if (kk == keys.n && ek_vec_push(&keys, k))
            goto nomem;
        if (ek_vec_push(&sl, s) || ek_vec_push(&slice_key, kk))
            goto nomem;
    }
    if (q->nempty)
        q_diag(f, diag, EK_SEV_NOTE, "perf.aux-empty", 0, -1, -1,
               "%zu AUX record(s) with size 0 queue nothing", q->nempty);

    /* queues in key order */
    size_t nq = keys.n;
    size_t *order = nq ? malloc(nq * sizeof *order) : NULL;
    size_t *rank = nq ? malloc(nq * sizeof *rank) : NULL;
    if (nq && (!order || !rank)) {
        free(order);
        free(rank);
        goto nomem;
    }
    for (size_t i = 0; i < nq; i++)
        order[i] = i;
    for (size_t i = 1; i < nq; i++) /* few queues: insertion sort */
        for (size_t j = i; j > 0 && qkey_cmp(&keys.v[order[j - 1]], &keys.v[order[j]]) > 0; j--) {
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (size_t i = 0; i < nq; i++)
        rank[order[i]] = i;
    for (size_t i = 0; i < sl.n; i++)
        sl.v[i].queue = rank[slice_key.v[i]];
    q->queues = nq ? calloc(nq, sizeof *q->queues) : NULL;
    if (nq && !q->queues) {
        free(order);
        free(rank);
        goto nomem;
    }
    for (size_t i = 0; i < nq; i++) {
        const qkey *k = &keys.v[order[i]];
        ek_perf_queue *qu = &q->queues[i];
        qu->per_thread = k->per_thread;
        qu->cpu = k->per_thread ? -1 : k->cpu;
        qu->tid = k->per_thread ? k->tid : 0;
        qu->etm = (!k->per_thread && k->cpu >= 0) ? ek_perf_cs_etm_cpu(f, (uint32_t)k->cpu) : NULL;
    }
    free(order);
    free(rank);

    if (sl.n)
        qsort(sl.v, sl.n, sizeof *sl.v, slice_cmp);
    q->slices = sl.v;
    q->nslices = sl.n;
    sl.v = NULL;
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
        if (s->formatted) {
            s->idmap = idmap_for(f, q, s->sid.cpu, !!(s->sid.present & EK_PERF_SAMPLE_CPU));
        } else if (!qu->etm && !(s->problems & EK_SLICE_NO_DATA)) {
            s->problems |= EK_SLICE_NO_CONFIG;
            q_diag(f, diag, EK_SEV_WARN, "perf.raw-no-config", EK_ERR_NOT_FOUND, s->aux_record,
                   (int64_t)s->aux_record_offset,
                   "raw (unformatted) trace in a queue without a CPU's cs_etm metadata");
        }
        if (s->buffer >= 0)
            q->use[s->buffer].nslices++;
    }

    /* buffer coverage */
    for (size_t b = 0; b < nbuf; b++) {
        size_t n = q->use[b].nslices;
        if (!n) {
            q_diag(f, diag, EK_SEV_WARN, "perf.buffer-unused", 0, buf[b].record,
                   (int64_t)buf[b].offset,
                   "AUXTRACE buffer (cpu %d, tid %u, offset 0x%llx, size 0x%llx) is covered by "
                   "no AUX record",
                   buf[b].cpu, buf[b].tid, (unsigned long long)buf[b].aux_offset,
                   (unsigned long long)buf[b].size);
            continue;
        }
        span *sp = malloc(n * sizeof *sp);
        if (!sp)
            goto nomem;
        size_t k = 0;
        for (size_t i = 0; i < q->nslices; i++)
            if (q->slices[i].buffer == (int64_t)b) {
                sp[k].lo = q->slices[i].buffer_pos;
                sp[k].hi = q->slices[i].buffer_pos + q->slices[i].aux_size;
                if (q->slices[i].flags & EK_PERF_AUX_FLAG_OVERWRITE)
                    sp[k].hi = sp[k].lo + (q->slices[i].aux_size < buf[b].size
                                               ? q->slices[i].aux_size
                                               : buf[b].size);
                k++;
            }
        qsort(sp, k, sizeof *sp, span_cmp);
        uint64_t covered = 0, hi = 0;
        for (size_t i = 0; i < k; i++) {
            uint64_t lo = sp[i].lo > hi ? sp[i].lo : hi;
            if (sp[i].hi > lo)
                covered += sp[i].hi - lo;
            if (sp[i].hi > hi)
                hi = sp[i].hi;
        }
        free(sp);
        q->use[b].covered = covered;
        if (covered < buf[b].size)
            q_diag(f, diag, EK_SEV_NOTE, "perf.buffer-uncovered", 0, buf[b].record,
                   (int64_t)buf[b].offset,
                   "0x%llx of the 0x%llx bytes of this AUXTRACE buffer lie in no AUX record",
                   (unsigned long long)(buf[b].size - covered), (unsigned long long)buf[b].size);
    }
    q->nqueues = nq;
    ek_vec_free(&keys);
    ek_vec_free(&slice_key);
    *out = q;
    return 0;
nomem:
    ek_vec_free(&sl);
    ek_vec_free(&keys);
    ek_vec_free(&slice_key);
    ek_perf_queues_free(q);
    return EK_ERR_NOMEM;
}

void ek_perf_queues_free(ek_perf_queues *q)
{
    if (!q)
        return;
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
