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
 *    processed at once. This file produces each queue's epochs with their keys; run.c replays
 *    perf's heap over them.
 *
 * Its parts: the trace IDs' state (qids.c), code reads (qcode.c), the blocks' bytes
 * (qblock.c), the hand-over to the writer (qout.c), the samples' addresses (resolve.c).
 * Everything here is private to the queue; the session, the timeline and the DSOs are only
 * read (DSO symbol tables lock themselves). */
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "session/qdecode.h"

/* ---- samples and elements out --------------------------------------------------------------- */

/* A sample from a trace ID's synthesiser: counted, filtered, and encoded by the consumer into
 * the queue's output. */
int qdecode_on_sample(void *ctx, const ek_sample *smp)
{
    idst *d = ctx;
    qjob *j = d->j;
    if (smp->kind == EK_SAMPLE_BRANCHES)
        j->res->branches++;
    else
        j->res->instrs_samples++;
    const ek_consumer *c = j->fmt ? j->fmt->c : NULL;
    if (!c || !c->encode)
        return 0;
    const ek_sample_filter *flt = j->s->o.filter;
    if (flt) {
        /* the thread's name as the output gives it (the resolver's) */
        const char *comm = NULL;
        if (flt->ncomms) {
            rctx rc;
            rctx_init(&rc, j->s, j->t_lo, j->t_hi, NULL, d->out_has_t, d->out_t);
            comm = rc.r.comm(rc.r.ctx, smp);
        }
        if (!ek_sample_filter_match(flt, smp, comm)) {
            if (j->s->o.itrace.initial_skip && c->hole) {
                c->hole(c->ctx, &j->out->cur);
                if (qout_full(j->out) && !j->direct) return qout_flush(j->out, 0);
            }
            return 0;
        }
    }
    rctx *rc = &j->rc;
    rctx_sample(rc, j->t_lo, j->t_hi, d->out_has_t, d->out_t);
    rc->pub.block = j->block;
    if (j->fmt->staged) {
        /* the stage first: done with it (0), or it goes on in order (1) */
        int r = j->fmt->staged->stage(j->sctx, smp, &rc->pub);
        if (r <= 0) return r;
    }
    c->encode(j->qctx, &j->out->cur, smp, &rc->pub);
    if (qout_full(j->out) && !j->direct)
        return qout_flush(j->out, 0);
    return 0;
}

/* An element for a consumer that wants them, with the thread and time of the samples made
 * from it. */
static int elem_out(idst *d, const ek_elem *e)
{
    qjob *j = d->j;
    ek_session_elem se = {e, d->pid, d->tid, d->cpu, d->smp_has_time, d->smp_time};
    session_elem_record(&j->out->cur, &se);
    if (qout_full(j->out) && !j->direct)
        return qout_flush(j->out, 0);
    return 0;
}

/* ---- perf's front end ------------------------------------------------------------------------ */

/* Process one element in sample synthesis (perf: one packet of the traceID queue). */
static int process_elem(idst *d, const ek_elem *e)
{
    qjob *j = d->j;
    int rc;
    /* (a context or time stamp goes out with the thread or time it sets; any other element
     * before the samples made from it) */
    int elems = j->fmt && j->fmt->elems;
    if (elems && !session_wants_elem(j->fmt->elem_types, j->fmt->elem_flags, e))
        elems = 0; /* (not wanted: not sent) */
    if (elems && e->type != EK_ELEM_PE_CONTEXT && e->type != EK_ELEM_TIMESTAMP &&
        (rc = elem_out(d, e)))
        return rc;
    switch (e->type) {
    case EK_ELEM_PE_CONTEXT: {
        int32_t tid = qid_ctx_tid(d, e->context.context_id, e->context.ctxt_id_valid,
                                  e->context.vmid, e->context.vmid_valid);
        if (tid >= 0 && tid != d->tid) {
            d->tid = tid;
            d->pid = qid_pid_for_tid(j, tid);
            ek_synth_set_thread(d->synth, d->pid, d->tid);
        }
        return elems ? elem_out(d, e) : 0;
    }
    case EK_ELEM_TIMESTAMP: {
        uint64_t t;
        if (session_ts_time(j->s, e->timestamp, j->t_lo, j->t_hi, &t)) {
            d->out_t = d->out_base_t = t;
            d->out_instr = 0;
            d->out_has_t = 1;
        }
        if (j->s->ts_convert && j->s->tc) {
            d->smp_time = ek_perf_counter_to_time(j->s->tc, e->timestamp);
            d->smp_has_time = 1;
            ek_synth_set_time(d->synth, d->smp_time);
        } else if (!j->timeless && j->s->has_time) {
            /* no conversion: the AUX record's time, as perf */
            d->smp_time = j->t_hi;
            d->smp_has_time = 1;
            ek_synth_set_time(d->synth, j->t_hi);
        }
        return elems ? elem_out(d, e) : 0;
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
        int32_t tid = qid_ctx_tid(d, e->context.context_id, e->context.ctxt_id_valid,
                                  e->context.vmid, e->context.vmid_valid);
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
            int r = qblock_refill(j);
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
            int r = qblock_refill(j);
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
 * trace, which perf 6.1 never signals (see docs/SCRIPT.md: "End of trace"). */
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
    if (qout_full(j->out)) {
        int rc = qout_flush(j->out, 0);
        if (rc)
            return rc;
    }
    j->mark = j->out->cur.len;
    return 0;
}

static int run_timeless(qjob *j)
{
    int rc = 0;
    while (!rc && qblock_load(j)) {
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
            if (!qblock_load(j))
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
    int rc = qout_epoch(j, 0);
    j->pre_epoch = 1;
    int r = rc ? rc : next_stop(j, &key, &chan);
    while (r == 1) {
        if ((rc = qout_epoch(j, key)))
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
    if ((rc = qout_epoch(j, UINT64_MAX)))
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
    dc.mem_for = qid_make;
    dc.mem_ctx = j;
    dc.packet_hook = qid_on_packet;
    dc.elems_hook = qid_on_elems;
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
    j->rcache = rcache_new(); /* NULL: no cache, same answers */
    rctx_init(&j->rc, s, 0, 0, j->rcache, 0, 0);
    j->block = 1;
    const ek_consumer *c = fmt ? fmt->c : NULL;
    if (c && c->encode && c->queue_begin)
        j->qctx = c->queue_begin(c->ctx);
    const ek_consumer *sc = fmt ? fmt->staged : NULL;
    if (sc && sc->queue_begin)
        j->sctx = sc->queue_begin(sc->ctx);
    rc = j->timeless ? run_timeless(j) : run_timed(j);
    if (c && c->encode && c->queue_end)
        c->queue_end(c->ctx, j->qctx);
    if (sc && sc->queue_end)
        sc->queue_end(sc->ctx, j->sctx);
    free(j->rcache);
    for (int id = 0; id < 128; id++) {
        ek_decode_source_stats st;
        if (ek_decode_source_stats_get(j->dt, (unsigned)id, &st) == 0) {
            res->errors += st.flow.errors;
            res->data_bytes += st.bytes;
            res->packets += st.packets;
            res->decoded_bytes += st.packet_bytes;
        }
        qid_free(j->ids[id]);
    }
    res->decoded_bytes -= j->nd_bytes;
    ek_decode_free(j->dt);
    int frc = qout_flush(out, 1);
    free(j);
    return rc ? rc : frc;
}

