/* Decoding one queue: its AUX slices in order, each trace ID through parser, flow decoder and
 * sample synthesis, reading code through the address-space timeline of the slice's time.
 *
 * Everything here is private to the queue (decoders, synthesisers, counters); the session,
 * the timeline and the DSOs are only read (DSO symbol tables lock themselves). */
#include <stdlib.h>
#include <string.h>

#include "etmkit/etm4.h"
#include "etmkit/etmkit.h"
#include "etmkit/flow.h"
#include "etmkit/frame.h"
#include "session/session_int.h"

typedef struct qjob qjob;

typedef struct idst {
    qjob *j;
    uint8_t id;
    int ok;                     /* decodable (ETMv4 / ETE with a configuration) */
    const ek_perf_etm_cpu *etm;
    int32_t cpu;
    ek_perf_pid_source pid_source;
    ek_etm4_parser parser;
    ek_flow *flow;
    ek_synth *synth;
    int32_t pid, tid;           /* thread of the samples (elements processed so far) */
    int32_t mem_pid;            /* thread whose memory the decoder reads (parser context) */
    uint64_t gen;
    /* what the last failed code read was */
    int miss_kind;
    int32_t miss_pid;
    as_dso *miss_dso;
    uint64_t miss_addr;
    int notsync;                /* in a run of NOTSYNC packets */
    /* trace bytes since the last NACC that have not yet given instructions */
    int in_gap;
    size_t gap_miss;            /* index into res->misses */
    int synced;
    uint64_t time;
    int has_time;
    int started;                /* saw data in this slice */
} idst;

struct qjob {
    ek_session *s;
    size_t qi;
    const ek_perf_queue *q;
    const qsink *sink;
    qresult *res;
    idst *ids[128];
    ek_deformatter dfmt;
    const ek_perf_slice *sl;
    uint64_t t_lo, t_hi;
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

/* ---- code access ----------------------------------------------------------------------------- */

static int is_kernel_addr(uint64_t addr)
{
    return (addr >> 63) != 0;
}

/* The map and DSO bytes for addr as the thread pid saw it during the current slice. */
static int code_at(qjob *j, int32_t pid, uint64_t addr, ek_mem_span *out, int *kind,
                   as_dso **dso_out)
{
    int how = 0;
    int kernel = is_kernel_addr(addr);
    const as_map *m = as_find(j->s->as, kernel ? AS_KERNEL_PID : pid, addr, j->t_lo, j->t_hi, 0, 0,
                              &how);
    *dso_out = NULL;
    if (!m) {
        /* a kernel image given on the command line may hold code no map names */
        const as_dso *k = dso_reg_kernel(j->s->reg);
        dso_span sp;
        if (kernel && k && dso_code(k, addr, &sp)) {
            out->start = sp.off;
            out->size = sp.size;
            out->data = sp.data;
            return 1;
        }
        *kind = kernel ? MISS_NO_KMAP : MISS_NO_MAP;
        return 0;
    }
    if (how == AS_HIT_AMBIGUOUS)
        j->res->ambiguous++;
    else if (how == AS_HIT_LATE)
        j->res->late++;
    as_dso *d = m->dso;
    *dso_out = d;
    if (!d) {
        *kind = MISS_DSO;
        return 0;
    }
    d->used = 1;
    dso_span sp;
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
        /* no usable .ko: a kernel image (kcore) may still hold the module's code */
        {
            const as_dso *k = dso_reg_kernel(j->s->reg);
            if (k && k->status == DSO_OK && dso_code(k, addr, &sp)) {
                out->start = sp.off;
                out->size = sp.size;
                out->data = sp.data;
                return 1;
            }
        }
        *kind = MISS_DSO;
        return 0;
    case DSO_USER: {
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
    int kind = 0;
    as_dso *dso = NULL;
    if (code_at(d->j, d->mem_pid, addr, out, &kind, &dso))
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
    ek_mem_span sp;
    int kind;
    as_dso *dso;
    if (!code_at(d->j, d->pid, addr, &sp, &kind, &dso))
        return 0;
    uint64_t o = addr - sp.start;
    if (o >= sp.size)
        return 0;
    if (len > sp.size - o)
        len = (size_t)(sp.size - o);
    memcpy(buf, sp.data + o, len);
    return len;
}

/* ---- addresses to text for the output ------------------------------------------------------ */

typedef struct resolve_ctx {
    qjob *j;
} resolve_ctx;

static void resolve_in(qjob *j, int32_t pid, int kernel, uint64_t addr, ek_addr_loc *out)
{
    int how;
    const as_map *m = as_find(j->s->as, kernel ? AS_KERNEL_PID : pid, addr, j->t_lo, j->t_hi, 0, 0,
                              &how);
    if (!m || !m->dso)
        return;
    out->dso = m->dso->print_name;
    uint64_t off = 0;
    out->sym = dso_symbol(m->dso, addr, m->start, m->pgoff, &off);
    out->symoff = off;
}

static void resolve(void *ctx, const ek_sample *s, uint64_t addr, int fallback, ek_addr_loc *out)
{
    qjob *j = ((resolve_ctx *)ctx)->j;
    (void)fallback;
    /* perf looks in the sample's cpumode (from the address) and, for branch targets, falls
     * back to the other one; kernel maps only hold kernel addresses (perf lets a kernel map
     * recorded as [0, ~0) or a module's stray section claim user addresses and 0). */
    resolve_in(j, s->pid, is_kernel_addr(addr), addr, out);
}

static const char *comm_of(void *ctx, const ek_sample *s)
{
    qjob *j = ((resolve_ctx *)ctx)->j;
    return as_comm_at(j->s->as, s->tid, s->has_time ? s->time : j->t_hi);
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
    if (!j->sink || !j->sink->sample)
        return 0;
    resolve_ctx rc = {j};
    ek_script_resolver r = {resolve, comm_of, &rc};
    return j->sink->sample(j->sink->ctx, smp, &r);
}

/* ---- trace IDs -------------------------------------------------------------------------------- */

static int32_t pid_for_tid(qjob *j, int32_t tid)
{
    int32_t pid = as_pid_of(j->s->as, tid);
    return pid >= 0 ? pid : tid;
}

static idst *id_get(qjob *j, uint8_t id)
{
    if (id >= 128)
        return NULL;
    if (j->ids[id])
        return j->ids[id];
    idst *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    j->ids[id] = d;
    d->j = j;
    d->id = id;
    d->pid = d->tid = d->mem_pid = -1;
    d->cpu = -1;
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
    if (!d->etm)
        return d;
    d->pid_source = d->etm->pid_source;
    ek_etm4_config ec;
    if (ek_etm4_config_from_source(&ec, &d->etm->cfg))
        return d;
    ek_etm4_parser_init(&d->parser, &ec);
    ek_source_config src = d->etm->cfg;
    src.trace_id = id;
    ek_flow_config fc;
    ek_flow_config_init(&fc);
    fc.source = &src;
    fc.mem.find = mem_find;
    fc.mem.generation = mem_gen;
    fc.mem.ctx = d;
    fc.diag = &j->s->diag;
    fc.file = j->s->data_path;
    if (ek_flow_new(&fc, &d->flow))
        return d;
    ek_synth_config sc;
    ek_synth_config_init(&sc);
    sc.itrace = &j->s->o.itrace;
    sc.protocol = src.protocol;
    sc.cpu = d->cpu;
    sc.trace_id = id;
    sc.io.read = synth_read;
    sc.io.sample = on_sample;
    sc.io.ctx = d;
    if (ek_synth_new(&sc, &d->synth))
        return d;
    /* the thread before any context ID: per-thread queue, else the CPU's switch records */
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
    d->tid = tid;
    ek_synth_set_thread(d->synth, pid, tid);
    d->ok = 1;
    return d;
}

static void id_free(idst *d)
{
    if (!d)
        return;
    ek_flow_free(d->flow);
    ek_synth_free(d->synth);
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

static int handle_elem(idst *d, const ek_elem *e)
{
    qjob *j = d->j;
    j->res->elements++;
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
    case EK_ELEM_TIMESTAMP:
        if (j->s->ts_convert && j->s->tc) {
            d->time = ek_perf_counter_to_time(j->s->tc, e->timestamp);
            d->has_time = 1;
            ek_synth_set_time(d->synth, d->time);
        }
        return 0;
    case EK_ELEM_ADDR_NACC: {
        j->res->nacc++;
        uint64_t off = e->index;
        if (d->miss_addr != e->st_addr) {
            /* not the read we saw fail: ask again why this address has no code */
            ek_mem_span sp;
            int32_t pid = d->pid;
            d->miss_kind = MISS_OUTSIDE;
            d->miss_dso = NULL;
            if (!code_at(j, pid, e->st_addr, &sp, &d->miss_kind, &d->miss_dso))
                d->miss_pid = is_kernel_addr(e->st_addr) ? AS_KERNEL_PID : pid;
            d->miss_addr = e->st_addr;
        }
        miss *m = qresult_miss(j->res, d->miss_kind, d->miss_pid, d->miss_dso, e->st_addr, off);
        if (m) {
            m->count++;
            d->in_gap = 1;
            d->gap_miss = (size_t)(m - j->res->misses.v);
        }
        if (d->miss_dso)
            d->miss_dso->nacc++;
        break;
    }
    case EK_ELEM_INSTR_RANGE:
        d->in_gap = 0;
        j->res->instructions += e->num_instr;
        break;
    default:
        break;
    }
    return ek_synth_elem(d->synth, e);
}

static int drain(idst *d)
{
    size_t n;
    const ek_elem *e = ek_flow_elems(d->flow, &n);
    for (size_t i = 0; i < n; i++) {
        int rc = handle_elem(d, &e[i]);
        if (rc) {
            ek_flow_elems_clear(d->flow);
            return rc;
        }
    }
    ek_flow_elems_clear(d->flow);
    return 0;
}

static int feed_packets(idst *d)
{
    qjob *j = d->j;
    const ek_etm4_packet *p;
    while (ek_etm4_next(&d->parser, &p) > 0) {
        j->res->packets++;
        if (p->type == EK_ETM4_NOTSYNC) {
            qresult_gap(j->res, "bytes before the first synchronisation packet", p->size, p->index);
            if (d->notsync)
                for (size_t g = 0; g < j->res->gaps.n; g++)
                    if (!strcmp(j->res->gaps.v[g].kind,
                                "bytes before the first synchronisation packet"))
                        j->res->gaps.v[g].count--; /* one place per run */
            d->notsync = 1;
        } else {
            d->notsync = 0;
            if (p->flags & EK_ETM4_PF_ERROR)
                qresult_gap(j->res, "malformed or reserved packets", p->size, p->index);
            else if (d->in_gap && d->gap_miss < j->res->misses.n)
                j->res->misses.v[d->gap_miss].bytes += p->size;
            else
                j->res->decoded_bytes += p->size;
        }
        if (p->ctx.updated) {
            int32_t tid = ctx_tid(d, p->ctx.cid, p->ctx.cid_updated || p->ctx.valid, p->ctx.vmid,
                                  p->ctx.vmid_updated || p->ctx.valid);
            int32_t pid = tid >= 0 ? pid_for_tid(j, tid) : d->mem_pid;
            if (pid != d->mem_pid) {
                d->mem_pid = pid;
                d->gen++;
            }
        }
        ek_flow_packet(d->flow, p);
        int rc = drain(d);
        if (rc)
            return rc;
    }
    return 0;
}

static int id_data(qjob *j, uint8_t id, const uint8_t *data, size_t len, uint64_t index)
{
    idst *d = id_get(j, id);
    if (!d)
        return EK_ERR_NOMEM;
    j->res->data_bytes += len;
    if (!d->ok) {
        qresult_gap(j->res, "trace ID without configuration", len, index);
        return 0;
    }
    if (!d->started) {
        d->started = 1;
        d->gen++;
        /* a fresh start for every slice: perf resets its decoder between buffers */
        ek_etm4_parser_reset(&d->parser);
        ek_flow_reset(d->flow);
    }
    ek_etm4_feed(&d->parser, data, len, index);
    return feed_packets(d);
}

/* End of a slice for every trace ID that had data in it. */
static int ids_end(qjob *j, int end_block)
{
    for (int id = 0; id < 128; id++) {
        idst *d = j->ids[id];
        if (!d || !d->ok || !d->started)
            continue;
        ek_etm4_eot(&d->parser);
        int rc = feed_packets(d);
        if (rc)
            return rc;
        if (end_block && (rc = ek_synth_end_block(d->synth)))
            return rc;
        ek_flow_end(d->flow);
        if ((rc = drain(d)))
            return rc;
        d->started = 0;
    }
    return 0;
}

static int decode_slice(qjob *j)
{
    const ek_perf_slice *sl = j->sl;
    size_t len = 0;
    const uint8_t *data = ek_perf_slice_data(j->s->pf, sl, &len);
    if (!data || !len)
        return 0;
    j->res->trace_bytes += len;
    uint64_t base = sl->data_offset;
    int rc = 0;
    if (!sl->formatted) {
        const ek_perf_etm_cpu *etm = j->q->etm;
        if (!etm) {
            qresult_gap(j->res, "raw trace without CPU configuration", len, base);
            return 0;
        }
        rc = id_data(j, (uint8_t)(etm->cfg.trace_id & 0x7f), data, len, base);
        if (!rc)
            rc = ids_end(j, 1);
        return rc;
    }
    ek_dfmt_reset(&j->dfmt);
    ek_dfmt_feed(&j->dfmt, data, len, base);
    ek_dfmt_item it;
    while (!rc && ek_dfmt_next(&j->dfmt, &it) > 0) {
        switch (it.kind) {
        case EK_DFMT_DATA:
            if (it.id == EK_TRACE_ID_UNKNOWN || it.id == EK_TRACE_ID_NULL ||
                ek_trace_id_reserved(it.id)) {
                qresult_gap(j->res, "formatter data before the slice's first trace ID (its ID "
                                    "was set in an earlier, lost frame)",
                            it.len, it.index);
                j->res->noid_bytes += it.len;
                break;
            }
            rc = id_data(j, it.id, it.data, it.len, it.index);
            break;
        case EK_DFMT_RESET:
            /* a barrier inside the buffer: trace before and after it are separate runs */
            rc = ids_end(j, 0);
            break;
        case EK_DFMT_ERROR:
            qresult_gap(j->res, "bad formatter frame", it.len ? it.len : 16, it.index);
            break;
        default:
            break;
        }
    }
    if (!rc)
        rc = ids_end(j, 1);
    return rc;
}

int qdecode_run(ek_session *s, size_t qi, const qsink *sink, qresult *res)
{
    qjob *j = calloc(1, sizeof *j);
    if (!j)
        return EK_ERR_NOMEM;
    j->s = s;
    j->qi = qi;
    j->q = ek_perf_queue_at(s->pq, qi);
    j->sink = sink;
    j->res = res;
    ek_dfmt_init(&j->dfmt, EK_DFMT_MEM_ALIGN | EK_DFMT_RESET_4XFSYNC);
    int rc = 0;
    uint64_t prev_key = 0;
    for (size_t k = 0; k < j->q->nslices && !rc; k++) {
        const ek_perf_slice *sl = &j->q->slices[k];
        j->sl = sl;
        uint64_t key = sl->aux < s->aux_keys.n ? s->aux_keys.v[sl->aux] : prev_key;
        j->t_lo = prev_key;
        j->t_hi = key;
        prev_key = key;
        for (int id = 0; id < 128; id++)
            if (j->ids[id])
                j->ids[id]->gen++;
        rc = decode_slice(j);
    }
    for (int id = 0; id < 128; id++) {
        idst *d = j->ids[id];
        if (d && d->flow) {
            ek_flow_stats fs;
            ek_flow_get_stats(d->flow, &fs);
            res->errors += fs.errors;
        }
        id_free(d);
    }
    free(j);
    return rc;
}
