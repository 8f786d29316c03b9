/* One ETMv4/ETE trace unit per simulated CPU.
 *
 * The machine reports waypoints (branches, exceptions, exception returns, context switches);
 * the ETM applies its view filter (the session's exception levels, whether a session's event
 * runs on this CPU), keeps the decoder's view of the current address, and drives the packet
 * encoder. With truth enabled it also records every packet and, for every atom and exception,
 * the instruction range a correct decoder outputs for it (truth.c turns these into elements). */
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "sim/sim.h"

#define ETM_BUF 65536

static void on_packet(void *ctx, const ek_etm4_enc_pkt *p)
{
    sim_etm *e = ctx;
    sim_tpkt t;
    memset(&t, 0, sizeof(t));
    t.off = p->offset;
    t.len = p->len;
    t.kind = (uint8_t)p->kind;
    if (p->kind == EK_ENC_ATOM) {
        t.natoms = (uint8_t)p->natoms;
        t.atom_bits = p->atom_bits;
        t.first_atom = e->atoms_packed;
        e->atoms_packed += p->natoms;
    } else if (p->kind == EK_ENC_EXCEPT) {
        t.aux = (uint32_t)(e->excs.n - 1);
        t.addr = p->addr;
    } else if (p->kind == EK_ENC_TIMESTAMP) {
        t.addr = p->ts;
    } else {
        t.addr = p->addr;
        t.cid = p->ctx.cid;
        t.el = p->ctx.el;
    }
    if (ek_vec_push(&e->pkts, t)) e->S->err = EK_ERR_NOMEM;
}

void sim_etm_init(sim *S, sim_etm *e, int cpu)
{
    memset(e, 0, sizeof(*e));
    e->S = S;
    e->cpu = cpu;
    e->sync_period = 4096;
    e->truth = S->truth;
}

void sim_etm_free(sim_etm *e)
{
    free(e->buf);
    ek_vec_free(&e->pkts);
    ek_vec_free(&e->atoms);
    ek_vec_free(&e->excs);
    ek_vec_free(&e->bytes);
}

void sim_etm_regs(const sim *S, const sim_session *s, int cpu, uint8_t id, ek_source_config *cfg)
{
    ek_etm4_enc_default_regs(cfg, s->ete, id, s->configr);
    cfg->regs.etm4.idr[1] = (cfg->regs.etm4.idr[1] & ~0xfu) | (S->cpus[cpu].idr1_revision & 0xfu);
}

int sim_etm_same_decoding(const sim *S, const sim_session *s, int a, int b)
{
    ek_source_config x, y;
    sim_etm_regs(S, s, a, 0, &x);
    sim_etm_regs(S, s, b, 0, &y);
    const ek_etm4_regs *rx = &x.regs.etm4, *ry = &y.regs.etm4;
    return x.protocol == y.protocol && rx->configr == ry->configr &&
           !memcmp(rx->idr, ry->idr, sizeof rx->idr) && rx->devarch == ry->devarch &&
           rx->present == ry->present;
}

void sim_etm_configure(sim_etm *e, const sim_session *s)
{
    uint8_t id = sim_trace_id(e->S, s, e->cpu);
    sim_etm_regs(e->S, s, e->cpu, id, &e->cfg);
    uint64_t base = e->produced;
    ek_etm4_enc_init(&e->enc, &e->cfg);
    if (!e->buf) {
        e->buf = malloc(ETM_BUF);
        e->cap = ETM_BUF;
        if (!e->buf) e->S->err = EK_ERR_NOMEM;
    }
    e->enc.out = e->buf;
    e->enc.cap = e->cap;
    e->enc.base = base;
    if (e->truth) {
        e->enc.on_packet = on_packet;
        e->enc.cb_ctx = e;
    }
}

void sim_etm_drain(sim_etm *e)
{
    size_t n = e->enc.len;
    if (!n) return;
    sim *S = e->S;
    uint64_t xoff = e->enc.base;
    if (e->truth) {
        if (ek_vec_reserve(&e->bytes, e->bytes.n + n)) {
            S->err = EK_ERR_NOMEM;
            return;
        }
        memcpy(e->bytes.v + e->bytes.n, e->buf, n);
        e->bytes.n += n;
    }
    int writer = e->sess ? e->sess->perf_pid : SIM_NO_OWNER;
    if (e->sess && e->sess->stopped) e->sess->touched_after_exit++;
    if (e->ev && e->ev->trbe)
        sim_sink_write(S, e->ev->trbe, e->cfg.trace_id, e->buf, n, xoff, writer);
    else if (S->cpus[e->cpu].sink)
        sim_sink_write(S, S->cpus[e->cpu].sink, e->cfg.trace_id, e->buf, n, xoff, writer);
    e->enc.base += n;
    e->enc.len = 0;
    e->produced = e->enc.base;
    S->trace_total += n;
}

static inline void room(sim_etm *e)
{
    if (e->enc.cap - e->enc.len < EK_ETM4_ENC_MAX_CALL) sim_etm_drain(e);
}

static void resync(sim_etm *e, uint64_t ts)
{
    room(e);
    ek_etm4_enc_sync(&e->enc);
    room(e);
    if (e->enc.ts_trace) ek_etm4_enc_timestamp(&e->enc, sim_clock_count(e->S, ts), 0);
    e->since_sync = e->enc.base + e->enc.len;
}

/* truth: the call stack of the thread running on this CPU now */
static uint32_t cur_stack(const sim_etm *e)
{
    const sim_thread *t = e->S->cpus[e->cpu].cur;
    return e->truth && t && t->depth ? t->stack[t->depth - 1].node : 0;
}

static void start_at(sim_etm *e, uint64_t pc, uint32_t map, const ek_etm4_enc_ctx *ctx, uint64_t ts)
{
    room(e);
    ek_etm4_enc_trace_on(&e->enc);
    room(e);
    ek_etm4_enc_address(&e->enc, pc, ctx);
    room(e);
    if (e->enc.ts_trace) ek_etm4_enc_timestamp(&e->enc, sim_clock_count(e->S, ts), 0);
    e->active = 1;
    e->pos = pc;
    e->pos_map = map;
    e->pos_stack = cur_stack(e);
}

static int traced(const sim_etm *e, int el)
{
    return e->enabled && ((e->el_mask >> el) & 1);
}

void sim_etm_enable(sim_etm *e, sim_session *s, sim_event *ev, uint64_t pc, int el,
                    const ek_etm4_enc_ctx *ctx, uint32_t map, uint64_t ts)
{
    if (e->enabled) sim_etm_disable(e);
    if (e->sess != s) sim_etm_configure(e, s);
    e->enabled = 1;
    e->sess = s;
    e->ev = ev;
    e->el_mask = s->el_mask;
    e->ctx = *ctx;
    e->switch_pending = 0;
    resync(e, ts);
    if (traced(e, el))
        start_at(e, pc, map, ctx, ts);
    else
        e->active = 0;
    sim_trace_truth(e->S, e->cpu, 1, e->active, pc);
}

void sim_etm_disable(sim_etm *e)
{
    if (!e->enabled) return;
    sim_trace_truth(e->S, e->cpu, 0, 0, 0);
    room(e);
    ek_etm4_enc_flush(&e->enc);
    sim_sink *k = e->ev && e->ev->trbe ? e->ev->trbe : e->S->cpus[e->cpu].sink;
    if (k && k->partial_flush) {
        /* incomplete flush: the tail of a last, multi-byte packet never reaches the sink */
        size_t st = e->enc.len;
        uint8_t *o = e->enc.out + st;
        o[0] = 0x9D; /* long 64-bit address, cut after three of its eight address bytes */
        o[1] = (uint8_t)((e->pos >> 2) & 0x7F);
        o[2] = (uint8_t)((e->pos >> 9) & 0x7F);
        o[3] = (uint8_t)(e->pos >> 16);
        e->enc.len += 4;
        if (e->truth) {
            sim_tpkt t;
            memset(&t, 0, sizeof(t));
            t.off = e->enc.base + st;
            t.len = 9; /* as long as the packet should have been: never complete */
            t.kind = EK_ENC_ADDR;
            t.addr = e->pos;
            if (ek_vec_push(&e->pkts, t)) e->S->err = EK_ERR_NOMEM;
        }
    }
    sim_etm_drain(e);
    e->enabled = 0;
    e->active = 0;
    e->switch_pending = 0;
    e->ev = NULL;
}

static void maybe_resync(sim_etm *e, uint64_t ts)
{
    if (e->enc.base + e->enc.len - e->since_sync < e->sync_period) return;
    resync(e, ts);
    room(e);
    ek_etm4_enc_address(&e->enc, e->pos, &e->ctx);
}

void sim_etm_maybe_resync(sim_etm *e)
{
    maybe_resync(e, e->S->cpus[e->cpu].time);
}

static void add_atom(sim_etm *e, uint64_t end, int cls)
{
    if (!e->truth) return;
    sim_tatom a = {.start = e->pos,
                   .end = end,
                   .map = e->pos_map,
                   .stack = e->pos_stack,
                   .cls = (uint8_t)cls,
                   .svc_before = e->pos_svc};
    if (ek_vec_push(&e->atoms, a)) e->S->err = EK_ERR_NOMEM;
}

void sim_etm_branch(sim_etm *e, uint64_t addr, int cls, int taken, uint64_t target,
                    uint32_t target_map, int svc_before_target)
{
    if (!e->active) return;
    e->branch_count++;
    e->atom_count++;
    room(e);
    add_atom(e, addr + 4, cls);
    ek_etm4_enc_atom(&e->enc, taken);
    if (taken) {
        if (cls == SIM_I_BL || cls == SIM_I_BLR) ek_etm4_enc_push_return(&e->enc, addr + 4);
        if (cls == SIM_I_BR || cls == SIM_I_BLR || cls == SIM_I_RET) {
            room(e);
            ek_etm4_enc_indirect_target(&e->enc, target, NULL);
        }
        /* a direct branch too can leave its image (a module's relocated calls) */
        e->pos_map = target_map;
        e->pos = target;
        e->pos_svc = (uint8_t)svc_before_target;
    } else {
        e->pos = addr + 4;
        e->pos_svc = 0;
    }
    e->pos_stack = cur_stack(e);
    maybe_resync(e, e->S->cpus[e->cpu].time);
}

void sim_etm_exception(sim_etm *e, unsigned type, uint64_t ret, int svc_before_ret, uint64_t target,
                       int new_el, const ek_etm4_enc_ctx *ctx, uint64_t ts)
{
    if (e->active) {
        if (e->truth) {
            sim_texc x = {.start = e->pos,
                          .ret = ret,
                          .map = e->pos_map,
                          .stack = e->pos_stack,
                          .type = (uint8_t)type,
                          .svc_at_end = (uint8_t)svc_before_ret};
            if (ek_vec_push(&e->excs, x)) e->S->err = EK_ERR_NOMEM;
        }
        room(e);
        ek_etm4_enc_exception(&e->enc, type, ret);
        e->ctx = *ctx;
        if (traced(e, new_el)) {
            room(e);
            ek_etm4_enc_address(&e->enc, target, ctx);
            e->pos = target;
            e->pos_map = 0;
            e->pos_svc = 0;
            e->pos_stack = cur_stack(e);
            maybe_resync(e, ts);
        } else {
            room(e);
            ek_etm4_enc_flush(&e->enc);
            e->active = 0;
        }
        return;
    }
    e->ctx = *ctx;
    if (traced(e, new_el)) {
        e->pos_svc = 0;
        start_at(e, target, 0, ctx, ts);
    }
}

void sim_etm_eret(sim_etm *e, uint64_t addr, uint64_t target, uint32_t target_map,
                  int svc_before_target, const ek_etm4_enc_ctx *ctx, uint64_t ts)
{
    if (e->active) {
        e->branch_count++;
        e->atom_count++;
        room(e);
        add_atom(e, addr + 4, SIM_I_ERET);
        ek_etm4_enc_atom(&e->enc, 1);
        room(e);
        ek_etm4_enc_address(&e->enc, target, ctx);
        room(e);
        ek_etm4_enc_exception_return(&e->enc);
        e->ctx = *ctx;
        if (traced(e, ctx->el)) {
            e->pos = target;
            e->pos_map = target_map;
            e->pos_svc = (uint8_t)svc_before_target;
            e->pos_stack = cur_stack(e);
            maybe_resync(e, ts);
        } else {
            e->active = 0;
        }
        return;
    }
    e->ctx = *ctx;
    if (traced(e, ctx->el)) {
        e->pos_svc = (uint8_t)svc_before_target;
        start_at(e, target, target_map, ctx, ts);
    }
}

void sim_etm_switch(sim_etm *e, uint64_t addr, uint64_t target, const ek_etm4_enc_ctx *ctx,
                    uint64_t ts)
{
    (void)ts;
    if (e->active) {
        e->branch_count++;
        e->atom_count++;
        room(e);
        add_atom(e, addr + 4, SIM_I_RET);
        ek_etm4_enc_atom(&e->enc, 1);
        e->switch_pending = 1;
        e->switch_target = target;
    }
    e->ctx = *ctx;
}

void sim_etm_switch_done(sim_etm *e, uint64_t ts)
{
    if (!e->switch_pending) return;
    e->switch_pending = 0;
    if (!e->active) return;
    room(e);
    ek_etm4_enc_address(&e->enc, e->switch_target, &e->ctx);
    room(e);
    if (e->enc.ts_trace) ek_etm4_enc_timestamp(&e->enc, sim_clock_count(e->S, ts), 0);
    e->pos = e->switch_target;
    e->pos_map = 0;
    e->pos_svc = 0;
    e->pos_stack = cur_stack(e);
    maybe_resync(e, ts);
}
