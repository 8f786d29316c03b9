/* A queue's trace IDs: the state the decode tree's hooks keep for each (made when the ID
 * first carries data), and what its packets and elements change in it as they are decoded --
 * the thread and time its code is read at, and the account of bytes and elements that did not
 * become instructions. */
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "core/hot.h"
#include "session/qdecode.h"

/* ---- the account of what did not become instructions (for the report) ---- */

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

/* ---- trace IDs -------------------------------------------------------------------------------- */

int32_t qid_pid_for_tid(qjob *j, int32_t tid)
{
    int32_t pid = as_pid_of(j->s->as, tid);
    return pid >= 0 ? pid : tid;
}

/* The decode tree makes a trace ID's decoders the first time the ID carries data: this is
 * where the queue's state for the ID is made (the source from the slice's trace ID map, or the
 * queue's CPU for raw trace; sample synthesis; the thread before any context packet), and the
 * code the flow decoder reads is this ID's view of the address space. */
int qid_make(void *ctx, unsigned id, int source, ek_flow_mem *mem)
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
    } else if (j->sl) {
        /* raw trace: the configuration queueing chose, and the CPU the recording names (none
         * for a per-thread queue whose AUX records carry no CPU) */
        d->etm = j->sl->raw_etm;
        d->cpu = j->sl->raw_cpu;
    }
    if (!d->etm) return EK_ERR_ARG; /* (the tree binds only IDs that have a configuration) */
    d->pid_source = d->etm->pid_source;
    mem->find = qcode_mem_find;
    mem->generation = qcode_mem_gen;
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
    sc.queue = (uint32_t)j->qi;
    sc.io.read = qcode_synth_read;
    sc.io.sample = qdecode_on_sample;
    sc.io.ctx = d;
    sc.no_insn = j->s->no_insn;
    int rc = ek_synth_new(&sc, &d->synth);
    if (rc) return rc;
    /* the thread before any context ID: per-thread queue, else the CPU's switch records,
     * else the AUX record's */
    int32_t pid = -1, tid = -1;
    if (j->q->per_thread) {
        tid = (int32_t)j->q->tid;
        pid = qid_pid_for_tid(j, tid);
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

void qid_free(idst *d)
{
    if (!d) return;
    ek_synth_free(d->synth);
    ek_vec_free(&d->q);
    free(d);
}

/* The thread a context packet names (pid source per TRCCONFIGR), or -1. */
int32_t qid_ctx_tid(const idst *d, uint32_t cid, int cid_valid, uint32_t vmid, int vmid_valid)
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
            if (!qcode_at(j->s, j->t_lo, j->t_hi, d->mem_has_t, d->mem_t, NULL, d->mem_pid,
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
void qid_on_elems(void *ctx, unsigned id, const ek_elem *e, size_t n)
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
void qid_on_packet(void *ctx, unsigned id, const ek_decode_packet *p)
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
        int32_t tid = qid_ctx_tid(d, p->context_id, (p->flags & EK_DPKT_CID_VALID) != 0, p->vmid,
                              (p->flags & EK_DPKT_VMID_VALID) != 0);
        int32_t pid = tid >= 0 ? qid_pid_for_tid(j, tid) : d->mem_pid;
        if (pid != d->mem_pid) {
            d->mem_pid = pid;
            d->gen++;
        }
    }
}
