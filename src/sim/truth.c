/* Ground truth of a simulation, part 1 (truth.h has the map of the parts):
 * - every executed branch, with time, for truth.branches.tsv (sim_branch_truth);
 * - what a decoder receives for one slice of sink data (what one AUX record covers):
 *   sim_truth_slice turns the packets each ETM was asked to write into decoder operations,
 *   from the encoder's own packet list rather than by parsing bytes: unsynchronised data
 *   before the first A-Sync is skipped, Trace Info must follow, incomplete packets at the end
 *   of the slice are dropped, and the trace IDs of formatted data are merged in the order the
 *   deformatter hands their bytes over. */
#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"
#include "etmkit/etmkit.h"
#include "sim/truth.h"

/* ------------------------------------------------------------------ executed branches */

static const char *cls_name(int cls)
{
    switch (cls) {
    case SIM_I_B: return "b";
    case SIM_I_BL: return "bl";
    case SIM_I_BCOND: return "bcond";
    case SIM_I_BR: return "br";
    case SIM_I_BLR: return "blr";
    case SIM_I_RET: return "ret";
    case SIM_I_ERET: return "eret";
    case SIM_I_SVC: return "svc";
    default: return "irq";
    }
}

void sim_branch_truth(sim *S, const sim_thread *t, int cpu, uint64_t from, uint64_t to, int cls,
                      int taken)
{
    if (!S->branches_out) return;
    if (S->branches_written >= S->branches_limit) {
        fprintf(S->branches_out, "# limit of %llu lines reached; totals in truth.summary\n",
                (unsigned long long)S->branches_limit);
        if (sim_fclose(S->branches_out) && !S->err) S->err = EK_ERR_IO;
        S->branches_out = NULL;
        return;
    }
    S->branches_written++;
    fprintf(S->branches_out, "%llu\t%d\t%d\t%d\t%d\t%llx\t%llx\t%s\t%d\n",
            (unsigned long long)S->cpus[cpu].time, cpu, t->proc ? t->proc->pid : 0,
            t->idle ? 0 : t->tid, t->el, (unsigned long long)from, (unsigned long long)to,
            cls_name(cls), taken);
}

/* Where a session enables and disables a trace unit while its CPU executes, with the row of
 * truth.branches.tsv each comes before (the branches written so far), so that a reader tells
 * what ran traced without comparing times; an enable at a traced exception level names the
 * instruction tracing starts at (a run that begins at no branch target). */
void sim_trace_truth(sim *S, int cpu, int on, int at, uint64_t pc)
{
    if (!S->trace_out) return;
    const sim_thread *t = S->cpus[cpu].cur;
    fprintf(S->trace_out, "%llu\t%llu\t%d\t%s\t", (unsigned long long)S->branches_written,
            (unsigned long long)S->cpus[cpu].time, cpu, on ? "on" : "off");
    if (on && at)
        fprintf(S->trace_out, "%llx", (unsigned long long)pc);
    else
        fputc('-', S->trace_out);
    fprintf(S->trace_out, "\t%d\t%d\t%d\n", t ? t->el : 0, t && t->proc ? t->proc->pid : 0,
            t && !t->idle ? t->tid : 0);
}

/* ------------------------------------------------------------------ slice ops */

/* What a decoder receives for one slice, independent of memory: the packets of each trace ID
 * after synchronisation, translated to decoder operations, in the order the deformatter hands
 * them over (merged by position). */

typedef struct opgen {
    sim *S;
    sim_etm *etm;
    sim_op_vec *out;
    const sim_fseg *segs; /* formatted: segments of this ID, in order */
    size_t nsegs;
    uint64_t raw_base;  /* raw: stream offset of the slice start */
    uint64_t sink_base; /* formatted: sink offset of the slice's first frame */
    int err;
} opgen;

/* slice-relative position of ID stream byte x */
static uint64_t gen_of(const opgen *d, uint64_t x)
{
    if (!d->segs) return x - d->raw_base;
    size_t lo = 0, hi = d->nsegs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (d->segs[mid].xoff <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo) return 0;
    const sim_fseg *s = &d->segs[lo - 1];
    return s->frame * 16 - d->sink_base + s->pos + (x - s->xoff);
}

static void op(opgen *d, uint8_t kind, uint64_t gen, uint64_t v, uint32_t idx, uint8_t a)
{
    sim_op o = {.kind = kind,
                .trace_id = d->etm->cfg.trace_id,
                .a = a,
                .idx = idx,
                .v = v,
                .gen = gen,
                .cpu = (uint8_t)d->etm->cpu};
    if (ek_vec_push(d->out, o)) d->err = EK_ERR_NOMEM;
}

/* Position where the packet processor first outputs something for bytes [x0, x1): the
 * decoder's NO_SYNC element. Returns 0 and sets *at, or -1 if nothing is output. */
static int first_output(const uint8_t *b, uint64_t x0, uint64_t x1, uint64_t *at)
{
    unsigned cur = 0;    /* bytes in the current attempt */
    int async_state = 0; /* in a run of zeros that may be an A-Sync */
    for (uint64_t x = x0; x < x1; x++) {
        uint8_t v = b[x];
        cur++;
        if (async_state) {
            if (v != 0) {
                if (cur == 12 && v == 0x80) {
                    *at = x;
                    return 0;
                }
                async_state = 0; /* junk: continue in the not-synchronised state */
                if (cur >= 8) {
                    *at = x;
                    return 0;
                }
            } else if (cur == 12) {
                *at = x; /* an extra leading zero is dumped as unsynchronised data */
                return 0;
            }
            continue;
        }
        if (v == 0) {
            if (cur > 1) {
                *at = x;
                return 0;
            }
            async_state = 1;
        } else if (cur >= 8) {
            *at = x;
            return 0;
        }
    }
    return -1;
}

static size_t first_pkt_at(const sim_etm *e, uint64_t x)
{
    size_t lo = 0, hi = e->pkts.n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (e->pkts.v[mid].off < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Operations for the packets of one trace ID that lie completely in [x0, x1). */
static void ops_for_id(opgen *d, uint64_t x0, uint64_t x1)
{
    sim_etm *e = d->etm;
    uint64_t at;
    if (x0 >= x1) return;
    if (!first_output(e->bytes.v, x0, x1, &at)) op(d, SIM_OP_NO_SYNC, gen_of(d, at), 0, 0, 0);
    size_t i = first_pkt_at(e, x0);
    int state = 0; /* 0 wait A-Sync, 1 wait Trace Info, 2 decoding */
    for (; i < e->pkts.n && !d->err; i++) {
        const sim_tpkt *p = &e->pkts.v[i];
        if (p->off + p->len > x1) break;
        uint64_t gen = gen_of(d, p->off + p->len - 1);
        if (i + 1 < e->pkts.n && e->pkts.v[i + 1].off < p->off + p->len) {
            /* a packet cut short by an incomplete flush: the parser takes the bytes of the
             * next packet (an A-Sync) to complete it, reports a bad sequence and the decoder
             * waits for the next A-Sync */
            if (state == 2) op(d, SIM_OP_NO_SYNC, gen, 0, 0, 0);
            state = 0;
            i++;
            continue;
        }
        if (state == 0) {
            if (p->kind == EK_ENC_ASYNC) state = 1;
            continue;
        }
        if (state == 1) {
            if (p->kind == EK_ENC_TRACE_INFO) {
                state = 2;
                op(d, SIM_OP_SYNC, gen, 0, 0, 0);
            }
            continue;
        }
        switch (p->kind) {
        case EK_ENC_TRACE_INFO: op(d, SIM_OP_TINFO, gen, 0, 0, 0); break;
        case EK_ENC_TRACE_ON: op(d, SIM_OP_TRACE_ON, gen, 0, 0, 0); break;
        case EK_ENC_ADDR_CTXT:
            op(d, SIM_OP_CTXT, gen, p->cid, 0, p->el);
            op(d, SIM_OP_ADDR, gen, p->addr, 0, 0);
            break;
        case EK_ENC_CTXT: op(d, SIM_OP_CTXT, gen, p->cid, 0, p->el); break;
        case EK_ENC_ADDR: op(d, SIM_OP_ADDR, gen, p->addr, 0, 0); break;
        case EK_ENC_TIMESTAMP: op(d, SIM_OP_TS, gen, p->addr, 0, 0); break;
        case EK_ENC_EXCEPT_RTN: op(d, SIM_OP_EXC_RET, gen, 0, 0, 0); break;
        case EK_ENC_EXCEPT: op(d, SIM_OP_EXC, gen, p->addr, p->aux, 0); break;
        case EK_ENC_ATOM:
            for (unsigned k = 0; k < p->natoms; k++)
                op(d, SIM_OP_ATOM, gen, 0, p->first_atom + k, (uint8_t)((p->atom_bits >> k) & 1));
            break;
        default: break;
        }
    }
}

/* stable merge sort of ops by position */
static int sort_ops(sim_op_vec *v)
{
    size_t n = v->n;
    if (n < 2) return 0;
    sim_op *tmp = malloc(n * sizeof(*tmp));
    if (!tmp) return EK_ERR_NOMEM;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t i = 0; i < n; i += 2 * w) {
            size_t a = i, am = i + w < n ? i + w : n, b = am, bm = i + 2 * w < n ? i + 2 * w : n,
                   o = i;
            while (a < am && b < bm)
                tmp[o++] = v->v[a].gen <= v->v[b].gen ? v->v[a++] : v->v[b++];
            while (a < am)
                tmp[o++] = v->v[a++];
            while (b < bm)
                tmp[o++] = v->v[b++];
        }
        memcpy(v->v, tmp, n * sizeof(*tmp));
    }
    free(tmp);
    return 0;
}

int sim_truth_slice(sim *S, sim_sink *k, int raw_id, uint64_t sink_start, uint64_t sink_len,
                    int barrier_first, const uint8_t *raw_data, sim_op_vec *out)
{
    (void)raw_data;
    out->n = 0;
    if (k->kind == SIM_SINK_TRBE) {
        for (int c = 0; c < S->ncpus; c++) {
            sim_etm *e = &S->cpus[c].etm;
            if (e->cfg.trace_id != raw_id) continue;
            opgen d = {.S = S, .etm = e, .out = out, .raw_base = sink_start};
            ops_for_id(&d, sink_start, sink_start + sink_len);
            return d.err;
        }
        return 0;
    }
    uint64_t f0 = sink_start / 16 + (barrier_first ? 1 : 0), f1 = (sink_start + sink_len) / 16;
    int err = 0;
    for (int c = 0; c < S->ncpus && !err; c++) {
        sim_etm *e = &S->cpus[c].etm;
        if (S->cpus[c].sink != k || !e->truth) continue;
        uint8_t id = e->cfg.trace_id;
        EK_VEC(sim_fseg) mine = {0};
        for (size_t i = 0; i < k->segs.n; i++) {
            const sim_fseg *s = &k->segs.v[i];
            if (s->id == id && s->frame >= f0 && s->frame < f1 && ek_vec_push(&mine, *s))
                err = EK_ERR_NOMEM;
        }
        if (mine.n && !err) {
            opgen d = {.S = S,
                       .etm = e,
                       .out = out,
                       .segs = mine.v,
                       .nsegs = mine.n,
                       .sink_base = sink_start};
            uint64_t x0 = mine.v[0].xoff;
            uint64_t x1 = mine.v[mine.n - 1].xoff + mine.v[mine.n - 1].count;
            ops_for_id(&d, x0, x1);
            err = d.err;
        }
        ek_vec_free(&mine);
    }
    /* the deformatter hands each trace ID its bytes in frame order: merge by position */
    return err ? err : sort_ops(out);
}
