/* Ground truth of a simulation.
 *
 * 1. Reference decode (sim_truth_slice): for one slice of sink data (what one AUX record
 *    covers), the elements a correct ETMv4/ETE decoder outputs, computed from what the
 *    encoder was asked to write (packet list, and for every atom and exception the range it
 *    stands for) rather than by parsing bytes: unsynchronised data before the first A-Sync is
 *    skipped, Trace Info must follow, non-P0 packets (trace on, context, address, timestamp,
 *    exception return) are output when the next P0 element commits, incomplete packets at the
 *    end of the slice are dropped.
 * 2. perf 6.1's sample policy (sim_truth_write): the AUX records are queued and split as
 *    perf 6.1 does, decoded per queue in timeless mode (at EXIT records and at the end) or in
 *    time order over the timestamp heap, and branch samples are synthesised with perf's rules
 *    for flags, trace start/end and exceptions; each sample becomes one line of
 *    `perf script --itrace=b -F pid,tid,cpu,flags,ip,sym,symoff,dso,addr`, with symbols
 *    resolved the way perf resolves them but from the mapping the code ran in.
 * 3. Every executed branch, with time, for truth.branches.tsv (sim_branch_truth). */
#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"
#include "etmkit/etmkit.h"
#include "sim/sim.h"

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

/* ------------------------------------------------------------------ decoding ops */

/* Two views of memory: VIEW_TRUE takes the range of every atom and exception from what the
 * machine executed (the ground truth); VIEW_PERF walks the instructions the way OpenCSD does,
 * in the memory perf 6.1 has at decode time (its final maps, no kernel without vmlinux). */
enum { VIEW_TRUE = 0, VIEW_PERF = 1 };

typedef struct pend {
    uint8_t kind; /* SIM_E_TRACE_ON, SIM_E_CONTEXT, SIM_E_TIMESTAMP, SIM_E_EXC_RET, 0xFF address */
    uint8_t el;
    uint64_t v;
} pend;

typedef struct idstate {
    pend pending[64];
    unsigned npend;
    int need_addr, need_ctxt;
    int rs_pop;
    int exc_wait;
    uint32_t exc_idx;
    uint64_t exc_ret;
    uint64_t pos;
    uint64_t rs[16];
    unsigned rs_head, rs_n;
    int tid; /* perf view: thread whose maps are used (tidq->thread) */
} idstate;

typedef struct decoder {
    sim *S;
    sim_session *s;
    int view;
    uint64_t map_time; /* perf view: mappings made up to this time are known */
    int timeless;
    idstate st[128];
    int global_tid; /* timeless: one thread for all IDs */
    sim_elem_vec *out;
    int cur_cpu; /* the trace unit of the op being decoded */
    int err;
} decoder;

static int pid_of(const sim *S, int tid)
{
    sim_thread *t = sim_find_thread(S, tid);
    return t && t->proc ? t->proc->pid : -1;
}

/* perf view: the mapping perf has for an address of a process (kernel: machine-wide) */
static const sim_map *perf_map_pid(const sim *S, uint64_t map_time, int pid, uint64_t a)
{
    if (a >= S->kernel_map.start) return a < S->kernel_map.end ? &S->kernel_map : NULL;
    const sim_map *best = NULL;
    for (size_t i = 0; i < S->nmaps_all; i++) {
        const sim_map *m = &S->maps_all[i];
        /* JIT code has no MMAP record: perf knows only the anonymous code cache */
        if (m->pid == pid && m->time <= map_time && a >= m->start && a < m->end && !m->jit)
            best = m; /* the newest mapping of the address wins */
    }
    return best;
}

/* ... and whether perf can read code there (the kernel needs vmlinux) */
static const sim_map *perf_map(const decoder *d, int tid, uint64_t a)
{
    const sim *S = d->S;
    if (a >= S->kernel_map.start && S->no_vmlinux) return NULL;
    return perf_map_pid(S, d->map_time, pid_of(S, tid), a);
}

static int perf_word(const decoder *d, int tid, uint64_t a, uint32_t *w, uint32_t *serial)
{
    const sim_map *m = perf_map(d, tid, a);
    if (!m) return -1;
    if (a - m->bias + 4 > m->img->seg_vaddr + m->img->seg_filesz || a - m->bias < m->img->seg_vaddr)
        return -1;
    *w = sim_image_word(m->img, a - m->bias);
    if (serial) *serial = m->serial;
    return 0;
}

static int cur_tid(const decoder *d, const idstate *st)
{
    return d->timeless ? d->global_tid : st->tid;
}

static void out_elem(decoder *d, sim_elem *e)
{
    e->cpu = (uint8_t)d->cur_cpu;
    if (ek_vec_push(d->out, *e)) d->err = EK_ERR_NOMEM;
}

static void flush_pending(decoder *d, idstate *st, const sim_op *o)
{
    for (unsigned i = 0; i < st->npend; i++) {
        pend *p = &st->pending[i];
        sim_elem e;
        memset(&e, 0, sizeof(e));
        e.gen = o->gen;
        e.trace_id = o->trace_id;
        switch (p->kind) {
        case 0xFF:
            st->need_addr = 0;
            st->rs_pop = 0;
            st->pos = p->v;
            continue;
        case SIM_E_CONTEXT:
            st->need_ctxt = 0;
            e.kind = SIM_E_CONTEXT;
            e.start = p->v;
            e.el = p->el;
            if (d->s->configr & (EK_TRCCONFIGR_CID | EK_TRCCONFIGR_VMID | EK_TRCCONFIGR_VMIDOPT)) {
                st->tid = (int)p->v;
                d->global_tid = (int)p->v;
            }
            break;
        case SIM_E_TRACE_ON:
            e.kind = SIM_E_TRACE_ON;
            st->rs_pop = 0;
            st->rs_n = 0;
            break;
        default:
            e.kind = p->kind;
            e.start = p->v;
            break;
        }
        out_elem(d, &e);
    }
    st->npend = 0;
}

static void add_pend(idstate *st, uint8_t kind, uint64_t v, uint8_t el)
{
    if (st->npend == 64) /* never happens with the encoder's streams; keep the newest */
        memmove(st->pending, st->pending + 1, 63 * sizeof(pend));
    else
        st->npend++;
    st->pending[st->npend - 1] = (pend){kind, el, v};
}

static void rs_push(idstate *st, uint64_t a)
{
    st->rs_head = (st->rs_head + 1) & 15;
    st->rs[st->rs_head] = a;
    if (++st->rs_n > 16) st->rs_n = 16;
}

/* OpenCSD: a pending return-stack pop provides the address of the indirect branch target */
static void rs_pop_pending(idstate *st)
{
    if (!st->rs_pop) return;
    st->rs_pop = 0;
    if (st->rs_n) {
        st->pos = st->rs[st->rs_head];
        st->rs_head = (st->rs_head - 1) & 15;
        st->rs_n--;
        st->need_addr = 0;
    }
}

static int oc_class(uint32_t w)
{
    sim_insn in;
    sim_a64_decode(w, &in);
    switch (in.cls) {
    case SIM_I_B:
    case SIM_I_BL:
    case SIM_I_BCOND:
    case SIM_I_BR:
    case SIM_I_BLR:
    case SIM_I_RET:
    case SIM_I_ERET: return in.cls;
    default:
        if ((w & 0xFFFFF09Fu) == 0xD503309Fu && (w & 0x60u) == 0x40u)
            return 0xFE; /* ISB: a waypoint of another type */
        return SIM_I_OTHER;
    }
}

static void range_elem(decoder *d, const sim_op *o, uint64_t st_a, uint64_t en_a, int cls,
                       int taken, uint32_t map, int tid)
{
    sim_elem e;
    memset(&e, 0, sizeof(e));
    e.kind = SIM_E_RANGE;
    e.trace_id = o->trace_id;
    e.start = st_a;
    e.end = en_a;
    e.ninstr = (uint32_t)((en_a - st_a) / 4);
    e.cls = (uint8_t)(cls == 0xFE ? SIM_I_OTHER : cls);
    e.taken = (uint8_t)taken;
    e.map = map;
    e.gen = o->gen;
    uint32_t w;
    if (d->view == VIEW_PERF) {
        e.svc_before = !perf_word(d, tid, st_a - 4, &w, NULL) && (w & 0xFFE0001Fu) == 0xD4000001u;
        e.svc_at_end = !perf_word(d, tid, en_a - 4, &w, NULL) && (w & 0xFFE0001Fu) == 0xD4000001u;
    }
    out_elem(d, &e);
}

/* perf view: walk instructions from st->pos to the next waypoint (or until the address
 * 'stop' is reached); emits the range and returns the class of the last instruction, -1 if
 * memory ran out (NACC). *wp is the address of the last instruction, *target a direct
 * branch's destination. */
static int walk(decoder *d, idstate *st, const sim_op *o, uint64_t stop, int use_stop,
                int taken_if_wp, uint64_t *wp, uint64_t *target)
{
    int tid = cur_tid(d, st);
    uint64_t a = st->pos, start = st->pos;
    uint32_t map = 0, w = 0;
    for (uint64_t n = 0; n < (1u << 26); n++) {
        uint32_t m2;
        if (perf_word(d, tid, a, &w, &m2)) {
            if (a != start) range_elem(d, o, start, a, SIM_I_OTHER, 0, map, tid);
            st->pos = a;
            st->need_addr = 1;
            return -1;
        }
        if (a == start) map = m2;
        int c = oc_class(w);
        a += 4;
        if (use_stop ? a == stop : c != SIM_I_OTHER) {
            range_elem(d, o, start, a, use_stop ? SIM_I_OTHER : c, use_stop ? 0 : taken_if_wp, map,
                       tid);
            *wp = a - 4;
            *target = 0;
            if (c == SIM_I_B || c == SIM_I_BL || c == SIM_I_BCOND) {
                sim_insn in;
                sim_a64_decode(w, &in);
                *target = a - 4 + (int64_t)in.imm;
            }
            return c;
        }
    }
    st->need_addr = 1;
    return -1;
}

/* The ETE decoder reports an exception return when an ERET is executed (ETE has no Exception
 * Return packet); ETMv4 streams carry the packet instead. */
static void eret_elem(decoder *d, const sim_op *o)
{
    if (!d->S->cpus[o->cpu].etm.enc.ete) return;
    sim_elem x;
    memset(&x, 0, sizeof(x));
    x.kind = SIM_E_EXC_RET;
    x.trace_id = o->trace_id;
    x.gen = o->gen;
    out_elem(d, &x);
}

static void do_atom(decoder *d, idstate *st, const sim_op *o)
{
    int had_addr = 0;
    for (unsigned i = 0; i < st->npend; i++)
        if (st->pending[i].kind == 0xFF) had_addr = 1;
    flush_pending(d, st, o);
    int taken = o->a;
    if (d->view == VIEW_TRUE) {
        if (st->need_addr && st->rs_pop && !had_addr)
            st->need_addr = 0; /* target popped from the return stack */
        st->rs_pop = 0;
        if (st->need_addr || st->need_ctxt) return;
        const sim_etm *e = &d->S->cpus[o->cpu].etm;
        if (o->idx >= e->atoms.n) {
            d->err = EK_ERR_RANGE;
            return;
        }
        const sim_tatom *a = &e->atoms.v[o->idx];
        sim_elem r;
        memset(&r, 0, sizeof(r));
        r.kind = SIM_E_RANGE;
        r.trace_id = o->trace_id;
        r.start = a->start;
        r.end = a->end;
        r.ninstr = (uint32_t)((a->end - a->start) / 4);
        r.cls = a->cls;
        r.taken = (uint8_t)taken;
        r.svc_before = a->svc_before;
        r.map = a->map;
        r.gen = o->gen;
        out_elem(d, &r);
        if (taken && a->cls == SIM_I_ERET) eret_elem(d, o);
        if (taken && (a->cls == SIM_I_BR || a->cls == SIM_I_BLR || a->cls == SIM_I_RET ||
                      a->cls == SIM_I_ERET)) {
            st->need_addr = 1;
            st->rs_pop = d->S->cpus[o->cpu].etm.enc.rs_trace && a->cls != SIM_I_ERET;
        }
        return;
    }
    rs_pop_pending(st);
    if (st->need_addr || st->need_ctxt) return;
    uint64_t wp = 0, target = 0;
    int c = walk(d, st, o, 0, 0, taken, &wp, &target);
    if (c < 0) return;
    int rs = d->S->cpus[o->cpu].etm.enc.rs_trace;
    if (taken && c == SIM_I_ERET) eret_elem(d, o);
    if (!taken || c == 0xFE) {
        st->pos = wp + 4;
        return;
    }
    if (c == SIM_I_BL || c == SIM_I_BLR) {
        if (rs) rs_push(st, wp + 4);
    }
    if (c == SIM_I_B || c == SIM_I_BCOND || c == SIM_I_BL) {
        st->pos = target;
    } else {
        st->need_addr = 1;
        st->rs_pop = rs;
    }
}

static void do_exception(decoder *d, idstate *st, const sim_op *o, uint64_t ret)
{
    rs_pop_pending(st);
    const sim_etm *e = &d->S->cpus[o->cpu].etm;
    if (d->view == VIEW_TRUE) {
        if (st->exc_idx < e->excs.n && !st->need_addr && !st->need_ctxt) {
            const sim_texc *x = &e->excs.v[st->exc_idx];
            if (x->start != x->ret) {
                sim_elem r;
                memset(&r, 0, sizeof(r));
                r.kind = SIM_E_RANGE;
                r.trace_id = o->trace_id;
                r.start = x->start;
                r.end = x->ret;
                r.ninstr = (uint32_t)((x->ret - x->start) / 4);
                r.cls = SIM_I_OTHER;
                r.svc_at_end = x->svc_at_end;
                r.map = x->map;
                r.gen = o->gen;
                out_elem(d, &r);
            }
        }
    } else if (st->pos != ret) {
        uint64_t wp, target;
        walk(d, st, o, ret, 1, 0, &wp, &target);
    }
    sim_elem x;
    memset(&x, 0, sizeof(x));
    x.kind = SIM_E_EXCEPTION;
    x.trace_id = o->trace_id;
    x.exc = st->exc_idx < e->excs.n ? e->excs.v[st->exc_idx].type : 0;
    x.gen = o->gen;
    out_elem(d, &x);
    st->pos = ret;
    if (d->view == VIEW_TRUE) st->need_addr = 0;
}

/* Elements a decoder outputs for the ops of one slice. */
static int decode_ops(decoder *d, const sim_op_vec *ops, sim_elem_vec *out)
{
    d->out = out;
    out->n = 0;
    for (int i = 0; i < 128; i++)
        d->st[i].npend = 0;
    for (size_t i = 0; i < ops->n && !d->err; i++) {
        const sim_op *o = &ops->v[i];
        idstate *st = &d->st[o->trace_id & 127];
        d->cur_cpu = o->cpu;
        switch (o->kind) {
        case SIM_OP_NO_SYNC: {
            sim_elem e;
            memset(&e, 0, sizeof(e));
            e.kind = SIM_E_NO_SYNC;
            e.trace_id = o->trace_id;
            e.gen = o->gen;
            out_elem(d, &e);
            st->npend = 0;
            break;
        }
        case SIM_OP_SYNC:
            st->need_addr = st->need_ctxt = 1;
            st->npend = 0;
            st->rs_pop = 0;
            st->rs_n = 0;
            st->exc_wait = 0;
            break;
        case SIM_OP_TINFO: st->rs_n = 0; break;
        case SIM_OP_TRACE_ON: add_pend(st, SIM_E_TRACE_ON, 0, 0); break;
        case SIM_OP_CTXT: add_pend(st, SIM_E_CONTEXT, o->v, o->a); break;
        case SIM_OP_TS: add_pend(st, SIM_E_TIMESTAMP, o->v, 0); break;
        case SIM_OP_EXC_RET: add_pend(st, SIM_E_EXC_RET, 0, 0); break;
        case SIM_OP_EXC:
            st->exc_wait = 1;
            st->exc_idx = o->idx;
            st->exc_ret = o->v;
            break;
        case SIM_OP_ADDR:
            if (st->exc_wait) {
                /* the return address completes the exception: older pending elements go first */
                st->exc_wait = 0;
                flush_pending(d, st, o);
                do_exception(d, st, o, o->v);
            } else {
                add_pend(st, 0xFF, o->v, 0);
            }
            break;
        case SIM_OP_ATOM: do_atom(d, st, o); break;
        default: break;
        }
    }
    return d->err;
}

/* ------------------------------------------------------------------ perf's symbols */

typedef struct psym {
    uint64_t start, end;
    const char *name;
    int bind; /* 0 local, 1 global, 2 weak */
    size_t order;
} psym;

typedef struct psymtab {
    psym *v;
    size_t n;
    char *names; /* the "name@plt" strings */
} psymtab;

static int cmp_psym(const void *a, const void *b)
{
    const psym *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static size_t underscores(const char *s)
{
    size_t n = 0;
    while (s[n] == '_')
        n++;
    return n;
}

/* 1 if a is the better of two symbols at one address (perf's choose_best_symbol) */
static int best_a(const psym *a, const psym *b)
{
    uint64_t la = a->end - a->start, lb = b->end - b->start;
    if (!lb && la) return 1;
    if (!la && lb) return 0;
    if ((b->bind == 2) != (a->bind == 2)) return b->bind == 2;
    if ((a->bind == 1) != (b->bind == 1)) return a->bind == 1;
    size_t ua = underscores(a->name), ub = underscores(b->name);
    if (ub != ua) return ub > ua;
    size_t na = strlen(a->name), nb = strlen(b->name);
    if (na != nb) return na > nb;
    return 1;
}

static const uint8_t *sec_named(const sim_image *img, const char *want)
{
    const uint8_t *d = img->data;
    uint64_t shoff = ek_le64(d + 40);
    unsigned shnum = ek_le16(d + 60), shentsize = ek_le16(d + 58), shstrndx = ek_le16(d + 62);
    const uint8_t *ss = d + shoff + (uint64_t)shstrndx * shentsize;
    uint64_t so = ek_le64(ss + 24), sz = ek_le64(ss + 32);
    for (unsigned i = 0; i < shnum; i++) {
        const uint8_t *sh = d + shoff + (uint64_t)i * shentsize;
        uint32_t nm = ek_le32(sh);
        if (nm < sz && !strcmp((const char *)d + so + nm, want)) return sh;
    }
    return NULL;
}

/* perf's "name@plt" symbols: one per .rela.plt entry, 16 bytes each after the 32-byte PLT
 * header (AArch64), added after the fixups */
static int add_plt(const sim_image *img, psymtab *t)
{
    const uint8_t *d = img->data;
    const uint8_t *rel = sec_named(img, ".rela.plt"), *plt = sec_named(img, ".plt");
    if (!t->n || !rel || !plt) return 0;
    uint64_t shoff = ek_le64(d + 40);
    unsigned shentsize = ek_le16(d + 58);
    const uint8_t *dyn = d + shoff + (uint64_t)ek_le32(rel + 40) * shentsize;
    const uint8_t *str = d + shoff + (uint64_t)ek_le32(dyn + 40) * shentsize;
    uint64_t roff = ek_le64(rel + 24), rsize = ek_le64(rel + 32);
    uint64_t doff = ek_le64(dyn + 24), stroff = ek_le64(str + 24);
    size_t n = (size_t)(rsize / 24), len = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t sym = (uint32_t)(ek_le64(d + roff + 24 * i + 8) >> 32);
        len += strlen((const char *)d + stroff + ek_le32(d + doff + 24ull * sym)) + 5;
    }
    psym *v = realloc(t->v, (t->n + n) * sizeof(psym));
    t->names = malloc(len + 1);
    if (!v || !t->names) {
        if (v) t->v = v;
        return EK_ERR_NOMEM;
    }
    t->v = v;
    char *o = t->names;
    uint64_t at = ek_le64(plt + 16) + 32;
    for (size_t i = 0; i < n; i++, at += 16) {
        uint32_t sym = (uint32_t)(ek_le64(d + roff + 24 * i + 8) >> 32);
        const char *nm = (const char *)d + stroff + ek_le32(d + doff + 24ull * sym);
        psym *p = &t->v[t->n++];
        p->start = at;
        p->end = at + 16;
        p->name = o;
        p->bind = 1;
        p->order = SIZE_MAX;
        o += sprintf(o, "%s@plt", nm) + 1;
    }
    qsort(t->v, t->n, sizeof(psym), cmp_psym);
    return 0;
}

/* Symbols of an image as perf 6.1 loads them from .symtab: functions, objects and labels in
 * allocated (for labels: executable) sections, mapping symbols dropped, zero sizes extended to
 * the next symbol, duplicates at one address reduced to the best one. */
static int load_psyms(const sim_image *img, psymtab *t)
{
    const uint8_t *d = img->data;
    t->v = NULL;
    t->n = 0;
    if (img->no_code) return 0;
    uint64_t shoff = ek_le64(d + 40);
    unsigned shnum = ek_le16(d + 60), shentsize = ek_le16(d + 58);
    t->v = NULL;
    t->n = 0;
    t->names = NULL;
    /* .symtab, or .dynsym when the file is stripped (Debian's libraries) */
    unsigned symtype = 11;
    for (unsigned i = 0; i < shnum; i++)
        if (ek_le32(d + shoff + (uint64_t)i * shentsize + 4) == 2) symtype = 2;
    for (unsigned i = 0; i < shnum; i++) {
        const uint8_t *sh = d + shoff + (uint64_t)i * shentsize;
        if (ek_le32(sh + 4) != symtype) continue;
        uint64_t off = ek_le64(sh + 24), size = ek_le64(sh + 32);
        const uint8_t *strsh = d + shoff + (uint64_t)ek_le32(sh + 40) * shentsize;
        uint64_t stroff = ek_le64(strsh + 24);
        size_t n = (size_t)(size / 24);
        t->v = calloc(n ? n : 1, sizeof(psym));
        if (!t->v) return EK_ERR_NOMEM;
        for (size_t k = 0; k < n; k++) {
            const uint8_t *s = d + off + k * 24;
            uint32_t name = ek_le32(s);
            unsigned type = s[4] & 0xF, bind = s[4] >> 4, vis = s[5] & 3;
            uint16_t shndx = ek_le16(s + 6);
            if (!name || shndx == 0 || shndx >= 0xFF00) continue;
            const char *nm = (const char *)d + stroff + name;
            int is_label = type == 0 && vis != 2 && vis != 1;
            if (!is_label && type != 2 && type != 1 && type != 10) continue;
            if (nm[0] == '$' && strchr("adtx", nm[1]) && (nm[2] == 0 || nm[2] == '.')) continue;
            const uint8_t *sec = d + shoff + (uint64_t)shndx * shentsize;
            uint64_t flags = ek_le64(sec + 8);
            if (!(flags & 2)) /* SHF_ALLOC */
                continue;
            if (is_label && !(flags & 4)) /* labels only in executable sections */
                continue;
            psym *p = &t->v[t->n++];
            p->start = ek_le64(s + 8);
            p->end = p->start + ek_le64(s + 16);
            p->name = nm;
            p->bind = bind == 1 ? 1 : bind == 2 ? 2 : 0;
            p->order = k;
        }
    }
    if (!t->n) return 0;
    qsort(t->v, t->n, sizeof(psym), cmp_psym);
    for (size_t i = 1; i < t->n; i++)
        if (t->v[i - 1].end == t->v[i - 1].start) t->v[i - 1].end = t->v[i].start;
    psym *last = &t->v[t->n - 1];
    if (last->end == last->start) last->end = ((last->start + 4095) & ~4095ull) + 4096;
    size_t o = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (o && t->v[o - 1].start == t->v[i].start) {
            if (!best_a(&t->v[o - 1], &t->v[i])) t->v[o - 1] = t->v[i];
            continue;
        }
        t->v[o++] = t->v[i];
    }
    t->n = o;
    return add_plt(img, t);
}

static const psym *find_psym(const psymtab *t, uint64_t a)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t->v[mid].start <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo && a < t->v[lo - 1].end) return &t->v[lo - 1];
    return NULL;
}

/* ------------------------------------------------------------------ perf's sample policy */

enum { PT_EMPTY = 0, PT_RANGE, PT_DISCONT, PT_EXC, PT_EXC_RET, PT_CTX };
enum {
    F_BRANCH = 1 << 0,
    F_CALL = 1 << 1,
    F_RETURN = 1 << 2,
    F_COND = 1 << 3,
    F_SYSCALLRET = 1 << 4,
    F_ASYNC = 1 << 5,
    F_INTERRUPT = 1 << 6,
    F_TRACE_BEGIN = 1 << 8,
    F_TRACE_END = 1 << 9,
};

typedef struct ppkt {
    int type;
    uint64_t start, end;
    uint32_t ninstr, map;
    int cls, taken, exc, cpu, trace_id;
    uint32_t flags;
    uint8_t svc_before, svc_at_end;
} ppkt;

typedef struct tq {
    int used;
    int trace_id;
    int tid, pid;
    ppkt prev, pkt;
    EK_VEC(ppkt) q;
    size_t qhead;
    size_t nreal; /* queued packets that take a slot in perf's packet queue */
    uint64_t cs_ts, next_cs_ts, instr_count;
} tq;

typedef struct pslice {
    const sim_op_vec *ops;
    uint64_t len;
    int formatted;
} pslice;

typedef struct pqueue {
    EK_VEC(pslice) slices;
    size_t cur; /* next slice to load */
    size_t ei;  /* next element of the loaded slice */
    const pslice *ld;
    sim_elem_vec el; /* elements of the loaded slice */
    uint64_t buf_len;
    int tid0;
    int decoded;
    tq tqs[128]; /* by trace ID; timeless mode uses tqs[0] */
    int pending_chan;
} pqueue;

typedef struct emu {
    sim *S;
    sim_session *s;
    int timeless;
    pqueue *qs;
    int nq;
    ek_sbuf out;
    uint64_t lines;
    psymtab syms[SIM_MAX_IMAGES];
    FILE *f;
    int err;
    int view;
    decoder dec;
    uint8_t known[1 << 16]; /* tids perf has seen (COMM/FORK/ITRACE_START) */
} emu;

static const sim_map *map_by_serial(const sim *S, uint32_t serial)
{
    if (!serial) return &S->kernel_map;
    for (size_t i = 0; i < S->nmaps_all; i++)
        if (S->maps_all[i].serial == serial) return &S->maps_all[i];
    return NULL;
}

static void print_loc(emu *m, uint64_t a, uint32_t serial, int pid)
{
    ek_sbuf *o = &m->out;
    ek_sbuf_printf(o, "%16llx ", (unsigned long long)a);
    /* the ground truth names the code that ran; perf resolves the address in the maps of the
     * sample's process as they are when it prints */
    const sim_map *mp = !a                     ? NULL
                        : m->view == VIEW_TRUE ? map_by_serial(m->S, serial)
                                               : perf_map_pid(m->S, m->dec.map_time, pid, a);
    if (!mp) {
        ek_sbuf_puts(o, "[unknown] ([unknown])");
        return;
    }
    int ii = (int)(mp->img - m->S->images);
    const psym *s = m->view == VIEW_PERF && mp->img->is_kernel && m->S->no_vmlinux
                        ? NULL
                        : find_psym(&m->syms[ii], a - mp->bias);
    if (s)
        ek_sbuf_printf(o, "%s+0x%llx", s->name, (unsigned long long)(a - mp->bias - s->start));
    else
        ek_sbuf_puts(o, "[unknown]");
    ek_sbuf_printf(o, " (%s)",
                   mp->img->is_kernel ? "[kernel.kallsyms]"
                   : mp->path         ? mp->path
                                      : mp->img->blob->path);
}

static const char *flag_name(uint32_t f)
{
    switch (f) {
    case F_BRANCH | F_CALL: return "call";
    case F_BRANCH | F_RETURN: return "return";
    case F_BRANCH | F_COND: return "jcc";
    case F_BRANCH: return "jmp";
    case F_BRANCH | F_CALL | F_INTERRUPT: return "int";
    case F_BRANCH | F_RETURN | F_INTERRUPT: return "iret";
    case F_BRANCH | F_CALL | F_SYSCALLRET: return "syscall";
    case F_BRANCH | F_RETURN | F_SYSCALLRET: return "sysret";
    case F_BRANCH | F_ASYNC: return "async";
    case F_BRANCH | F_CALL | F_ASYNC | F_INTERRUPT: return "hw int";
    case F_BRANCH | F_TRACE_BEGIN: return "tr strt";
    case F_BRANCH | F_TRACE_END: return "tr end";
    default: return NULL;
    }
}

static void flags_str(uint32_t f, char *buf, size_t sz)
{
    const char *n = flag_name(f);
    if (n) {
        snprintf(buf, sz, "%-15s%6s", n, "");
        return;
    }
    if ((f & F_TRACE_BEGIN) && (n = flag_name(f & ~(uint32_t)F_TRACE_BEGIN))) {
        snprintf(buf, sz, "tr strt %-7s%6s", n, "");
        return;
    }
    if ((f & F_TRACE_END) && (n = flag_name(f & ~(uint32_t)F_TRACE_END))) {
        snprintf(buf, sz, "tr end  %-7s%6s", n, "");
        return;
    }
    static const char chars[] = "bcrosyiABExghDt";
    size_t p = 0;
    for (unsigned i = 0; i < 32 && p + 1 < sz; i++)
        if ((f >> i) & 1) buf[p++] = i < sizeof(chars) - 1 ? chars[i] : '?';
    buf[p] = 0;
}

static void branch_sample(emu *m, tq *t)
{
    uint64_t ip = t->prev.type == PT_DISCONT ? 0 : t->prev.end - 4;
    uint64_t addr = t->pkt.type == PT_DISCONT ? 0 : t->pkt.start;
    char fl[64];
    flags_str(t->prev.flags, fl, sizeof(fl));
    ek_sbuf_printf(&m->out, "%5d/%-5d [%03d]   %-21s  ", t->pid, t->tid, t->pkt.cpu, fl);
    print_loc(m, ip, t->prev.map, t->pid);
    ek_sbuf_puts(&m->out, " => ");
    print_loc(m, addr, t->pkt.map, t->pid);
    ek_sbuf_putc(&m->out, '\n');
    m->lines++;
    if (m->out.len > (1u << 20)) {
        if (fwrite(m->out.p, 1, m->out.len, m->f) != m->out.len && !m->err) m->err = EK_ERR_IO;
        ek_sbuf_reset(&m->out);
    }
}

static int is_etmv4(const emu *m)
{
    return !m->s->ete;
}

/* Is the word at 'a' an SVC? perf reads it when it sets the flags, through the thread the
 * packet queue has at that moment; the ground truth knows what ran. */
static int svc_at(emu *m, tq *t, uint64_t a, int truth_flag)
{
    if (m->view == VIEW_TRUE) return truth_flag;
    uint32_t w;
    return !perf_word(&m->dec, t->tid, a, &w, NULL) && (w & 0xFFE0001Fu) == 0xD4000001u;
}

static void set_flags(emu *m, tq *t)
{
    ppkt *p = &t->pkt, *pv = &t->prev;
    switch (p->type) {
    case PT_RANGE:
        switch (p->cls) {
        case SIM_I_B: p->flags = F_BRANCH; break;
        case SIM_I_BCOND: p->flags = F_BRANCH | F_COND; break;
        case SIM_I_BL:
        case SIM_I_BLR: p->flags = F_BRANCH | F_CALL; break;
        case SIM_I_BR:
        case SIM_I_RET: p->flags = F_BRANCH | F_RETURN; break;
        default: break;
        }
        if (pv->type == PT_DISCONT) pv->flags |= F_BRANCH | F_TRACE_BEGIN;
        if (pv->flags == (F_BRANCH | F_RETURN | F_INTERRUPT) &&
            svc_at(m, t, p->start - 4, p->svc_before))
            pv->flags = F_BRANCH | F_RETURN | F_SYSCALLRET;
        break;
    case PT_DISCONT:
        if (pv->type == PT_RANGE) pv->flags |= F_BRANCH | F_TRACE_END;
        break;
    case PT_EXC: {
        int v4 = is_etmv4(m);
        int svc = pv->type == PT_RANGE && svc_at(m, t, pv->end - 4, pv->svc_at_end);
        int e = p->exc;
        if (v4 && e == EK_ETM4_EXC_CALL && svc)
            p->flags = F_BRANCH | F_CALL | F_SYSCALLRET;
        else if (v4 && (e == 0 || e == 1 || e == 4 || e == 6 || e == 7 || e == 14 || e == 15))
            p->flags = F_BRANCH | F_CALL | F_ASYNC | F_INTERRUPT;
        else if (v4 && (e == 3 || e == 10 || e == 11 || e == 12 || (e == 2 && !svc) ||
                        (e > 15 && e <= 31)))
            p->flags = F_BRANCH | F_CALL | F_INTERRUPT;
        if (pv->type == PT_RANGE) pv->flags = p->flags;
        break;
    }
    case PT_EXC_RET:
        if (pv->type == PT_RANGE) pv->flags = F_BRANCH | F_RETURN | F_INTERRUPT;
        break;
    }
}

static void swap(tq *t)
{
    ppkt x = t->pkt;
    t->pkt = t->prev;
    t->prev = x;
}

static void set_tid(emu *m, tq *t, int tid)
{
    t->tid = tid;
    sim_thread *th = sim_find_thread(m->S, tid);
    if (th && th->proc && tid < (1 << 16) && m->known[tid])
        t->pid = th->proc->pid;
    else if (tid == 0)
        t->pid = 0;
}

static void process_tq(emu *m, tq *t)
{
    while (t->qhead < t->q.n) {
        if (t->q.v[t->qhead].type == PT_CTX) {
            /* ground truth: the new thread owns the ranges that follow, not those before */
            set_tid(m, t, (int)t->q.v[t->qhead++].start);
            continue;
        }
        t->pkt = t->q.v[t->qhead++];
        set_flags(m, t);
        switch (t->pkt.type) {
        case PT_RANGE:
            if (t->prev.type == PT_DISCONT || (t->prev.type == PT_RANGE && t->prev.taken))
                branch_sample(m, t);
            swap(t);
            break;
        case PT_EXC:
        case PT_EXC_RET:
            if (t->prev.type == PT_RANGE) t->prev.taken = 1;
            break;
        case PT_DISCONT:
            if (t->prev.type == PT_RANGE) branch_sample(m, t);
            swap(t);
            break;
        }
    }
    t->q.n = t->qhead = 0;
    t->nreal = 0;
}

static tq *get_tq(pqueue *q, emu *m, int trace_id)
{
    tq *t = &q->tqs[m->timeless ? 0 : trace_id & 127];
    if (!t->used) {
        t->used = 1;
        t->trace_id = trace_id;
        t->tid = q->tid0;
        t->pid = -1;
        if (m->timeless && q->tid0 != -1) {
            sim_thread *th = sim_find_thread(m->S, q->tid0);
            if (th && th->proc) t->pid = th->proc->pid;
        }
    }
    return t;
}

/* Hand one decoder element to perf's packet queues; returns 1 for OCSD_RESP_WAIT. */
static int feed(emu *m, pqueue *q, const sim_elem *e)
{
    tq *t = get_tq(q, m, e->trace_id);
    ppkt p;
    memset(&p, 0, sizeof(p));
    p.cpu = e->cpu; /* the trace ID's CPU in the map of the slice's sink */
    p.trace_id = e->trace_id;
    switch (e->kind) {
    case SIM_E_NO_SYNC:
    case SIM_E_TRACE_ON:
        t->cs_ts = t->next_cs_ts = t->instr_count = 0;
        p.type = PT_DISCONT;
        break;
    case SIM_E_RANGE:
        p.type = PT_RANGE;
        p.start = e->start;
        p.end = e->end;
        p.ninstr = e->ninstr;
        p.cls = e->cls;
        p.taken = e->cls != SIM_I_OTHER && e->taken;
        p.map = e->map;
        p.svc_before = e->svc_before;
        p.svc_at_end = e->svc_at_end;
        break;
    case SIM_E_EXCEPTION:
        p.type = PT_EXC;
        p.exc = e->exc;
        break;
    case SIM_E_EXC_RET: p.type = PT_EXC_RET; break;
    case SIM_E_TIMESTAMP:
        if (m->timeless) return 0;
        if (t->cs_ts) {
            t->next_cs_ts = e->start;
            return 0;
        }
        if (!e->start || t->instr_count > e->start)
            t->cs_ts = 0;
        else
            t->cs_ts = e->start - t->instr_count;
        t->next_cs_ts = e->start;
        t->instr_count = 0;
        q->pending_chan = e->trace_id;
        return 1;
    case SIM_E_CONTEXT: {
        /* perf takes the thread from CONTEXTIDR_EL1 only when the context ID is traced */
        if (!(m->s->configr & (EK_TRCCONFIGR_CID | EK_TRCCONFIGR_VMID | EK_TRCCONFIGR_VMIDOPT)))
            return 0;
        int tid = (int)e->start;
        t->cs_ts = t->next_cs_ts = t->instr_count = 0;
        if (m->view == VIEW_PERF) {
            /* perf switches the thread in the decoder callback, before the ranges already
             * waiting in the packet queue are turned into samples */
            set_tid(m, t, tid);
            return 0;
        }
        p.type = PT_CTX;
        p.start = (uint64_t)tid;
        break;
    }
    default: return 0;
    }
    if (ek_vec_push(&t->q, p)) {
        m->err = EK_ERR_NOMEM;
        return 0;
    }
    if (p.type != PT_CTX) t->nreal++;
    int wait = t->nreal == 1023;
    if (p.type == PT_RANGE && !m->timeless && !wait) {
        t->instr_count += e->ninstr;
        if (t->cs_ts) {
            t->cs_ts = t->next_cs_ts;
            t->next_cs_ts += t->instr_count;
            t->instr_count = 0;
            q->pending_chan = e->trace_id;
            return 1;
        }
    }
    return wait;
}

static int get_block(emu *m, pqueue *q)
{
    while (!q->buf_len) {
        if (q->cur >= q->slices.n) return 0;
        q->ld = &q->slices.v[q->cur++];
        q->ei = 0;
        q->buf_len = q->ld->len;
        /* a new buffer: the decoder starts from reset; perf's thread per trace ID stays */
        decoder *d = &m->dec;
        for (int id = 0; id < 128; id++)
            d->st[id].tid = q->tqs[id].used ? q->tqs[id].tid : q->tid0;
        d->global_tid = q->tqs[0].used ? q->tqs[0].tid : q->tid0;
        int err = decode_ops(d, q->ld->ops, &q->el);
        if (err) m->err = err;
        if (m->view == VIEW_PERF && !q->ld->formatted)
            /* perf 6.1 builds the single decoder of an unformatted queue from the metadata of
             * the first CPU: every element carries that CPU's trace ID */
            for (size_t i = 0; i < q->el.n; i++) {
                q->el.v[i].trace_id = m->S->cpus[0].etm.cfg.trace_id;
                q->el.v[i].cpu = 0;
            }
    }
    return 1;
}

static void decode_block(emu *m, pqueue *q)
{
    const sim_elem_vec *el = &q->el;
    while (q->ei < el->n) {
        const sim_elem *e = &el->v[q->ei++];
        if (feed(m, q, e)) {
            /* bytes consumed: up to this byte (raw) or to the end of its frame (formatted);
             * elements still pending for consumed bytes are lost if nothing is left, because
             * the next buffer starts with a decoder reset */
            uint64_t used = q->ld->formatted ? (e->gen / 16 + 1) * 16 : e->gen + 1;
            q->buf_len = q->ld->len > used ? q->ld->len - used : 0;
            return;
        }
    }
    q->buf_len = 0;
}

static void run_timeless(emu *m, pqueue *q)
{
    tq *t = get_tq(q, m, 0);
    q->decoded = 1;
    while (get_block(m, q)) {
        do {
            decode_block(m, q);
            process_tq(m, t);
        } while (q->buf_len);
    }
}

typedef struct heapi {
    unsigned q;
    int chan;
    uint64_t ord;
} heapi;

typedef struct heap {
    heapi *v;
    unsigned n, cap;
} heap;

static void heapify(heapi *a, unsigned pos, heapi x)
{
    while (pos) {
        unsigned parent = (pos - 1) >> 1;
        if (a[parent].ord <= x.ord) break;
        a[pos] = a[parent];
        pos = parent;
    }
    a[pos] = x;
}

static int heap_add(heap *h, unsigned q, int chan, uint64_t ord)
{
    if (h->n == h->cap) {
        unsigned nc = h->cap ? h->cap * 2 : 32;
        heapi *v = realloc(h->v, nc * sizeof(*v));
        if (!v) return EK_ERR_NOMEM;
        h->v = v;
        h->cap = nc;
    }
    heapi x = {q, chan, ord};
    heapify(h->v, h->n++, x);
    return 0;
}

static void heap_pop(heap *h)
{
    unsigned cnt = h->n, pos = 0;
    if (!cnt) return;
    h->n--;
    heapi *a = h->v;
    for (;;) {
        unsigned l = (pos << 1) + 1;
        if (l >= cnt) break;
        unsigned r = l + 1;
        if (r >= cnt) {
            a[pos] = a[l];
            return;
        }
        if (a[l].ord < a[r].ord) {
            a[pos] = a[l];
            pos = l;
        } else {
            a[pos] = a[r];
            pos = r;
        }
    }
    heapify(a, pos, a[cnt - 1]);
}

static uint64_t take_ts(pqueue *q, int *chan)
{
    if (!q->pending_chan) return 0;
    *chan = q->pending_chan;
    q->pending_chan = 0;
    return q->tqs[*chan & 127].cs_ts;
}

static void clear_all(emu *m, pqueue *q, int process)
{
    for (int id = 0; id < 128; id++) {
        tq *t = &q->tqs[id];
        if (!t->used) continue;
        if (process) {
            process_tq(m, t);
        } else {
            /* packets decoded before the first timestamp are dropped; a thread change among
             * them still applies */
            for (size_t i = t->qhead; i < t->q.n; i++)
                if (t->q.v[i].type == PT_CTX) set_tid(m, t, (int)t->q.v[i].start);
            t->q.n = t->qhead = 0;
            t->nreal = 0;
        }
    }
}

static void run_timed(emu *m)
{
    heap h = {0};
    for (int i = 0; i < m->nq; i++) {
        pqueue *q = &m->qs[i];
        for (;;) {
            if (!get_block(m, q)) break;
            decode_block(m, q);
            int chan = 0;
            uint64_t ts = take_ts(q, &chan);
            if (ts) {
                heap_add(&h, (unsigned)i, chan, ts);
                break;
            }
            clear_all(m, q, 0);
        }
    }
    while (h.n && !m->err) {
        heapi top = h.v[0];
        heap_pop(&h);
        pqueue *q = &m->qs[top.q];
        process_tq(m, &q->tqs[top.chan & 127]);
        for (;;) {
            if (!get_block(m, q)) break;
            decode_block(m, q);
            int chan = 0;
            uint64_t ts = take_ts(q, &chan);
            if (!ts) {
                clear_all(m, q, 1);
                continue;
            }
            heap_add(&h, top.q, chan, ts);
            break;
        }
    }
    free(h.v);
}

static int cmp_exit(const void *a, const void *b)
{
    const sim_rec *x = a, *y = b;
    if (x->time != y->time) return x->time < y->time ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int emulate(sim *S, sim_session *s, int view, const char *path, uint64_t *lines)
{
    emu *m = calloc(1, sizeof(*m));
    if (!m) return EK_ERR_NOMEM;
    m->S = S;
    m->s = s;
    m->view = view;
    m->timeless = !(s->attr_config & (1u << 28));
    m->dec.S = S;
    m->dec.s = s;
    m->dec.view = view;
    m->dec.timeless = m->timeless;
    m->dec.map_time = ~0ull;
    m->f = fopen(path, "w");
    int err = m->f ? 0 : EK_ERR_IO;
    for (int i = 0; i < S->nimages && !err; i++)
        err = load_psyms(&S->images[i], &m->syms[i]);
    for (size_t i = 0; i < s->known_tids.n; i++)
        if (s->known_tids.v[i] >= 0 && s->known_tids.v[i] < (1 << 16))
            m->known[s->known_tids.v[i]] = 1;
    /* queue the AUX records as perf 6.1 does: file order, into the AUXTRACE buffer's queue */
    m->nq = s->nevents;
    m->qs = calloc((size_t)m->nq, sizeof(pqueue));
    if (!m->qs) err = EK_ERR_NOMEM;
    for (int i = 0; i < m->nq && !err; i++)
        m->qs[i].tid0 = s->events[i].tid;
    size_t *order = calloc(s->auxrecs.n + 1, sizeof(size_t));
    if (!order) err = EK_ERR_NOMEM;
    size_t norder = 0;
    for (size_t i = 0; i < s->auxrecs.n && !err; i++)
        if (s->auxrecs.v[i].size && s->auxrecs.v[i].file_off) order[norder++] = i;
    for (size_t i = 1; i < norder; i++) {
        size_t k = order[i], j = i;
        while (j > 0 && s->auxrecs.v[order[j - 1]].file_off > s->auxrecs.v[k].file_off) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = k;
    }
    for (size_t i = 0; i < norder && !err; i++) {
        sim_auxrec *a = &s->auxrecs.v[order[i]];
        if (s->snapshot && !a->in_snapshot) continue;
        pslice sl = {&a->ops, a->size, a->formatted};
        if (ek_vec_push(&m->qs[a->queue].slices, sl)) err = EK_ERR_NOMEM;
    }
    free(order);
    if (!err) {
        if (m->timeless) {
            /* decode at every EXIT (in time order) the queues of that thread, then the rest */
            if (s->exits.n) qsort(s->exits.v, s->exits.n, sizeof(sim_rec), cmp_exit);
            for (size_t i = 0; i < s->exits.n; i++)
                for (int k = 0; k < m->nq; k++) {
                    pqueue *q = &m->qs[k];
                    if (q->decoded || !q->slices.n) continue;
                    tq *t = get_tq(q, m, 0);
                    if (t->tid == s->exits.v[i].tid) {
                        m->dec.map_time = s->exits.v[i].time;
                        run_timeless(m, q);
                    }
                }
            m->dec.map_time = ~0ull;
            for (int k = 0; k < m->nq; k++)
                if (!m->qs[k].decoded && m->qs[k].slices.n) run_timeless(m, &m->qs[k]);
        } else {
            run_timed(m);
        }
    }
    if (m->f) {
        if (m->out.len && fwrite(m->out.p, 1, m->out.len, m->f) != m->out.len && !err)
            err = EK_ERR_IO;
        if (sim_fclose(m->f) && !err) err = EK_ERR_IO;
    }
    *lines = m->lines;
    ek_sbuf_free(&m->out);
    for (int i = 0; i < m->nq; i++) {
        ek_vec_free(&m->qs[i].slices);
        ek_vec_free(&m->qs[i].el);
        for (int k = 0; k < 128; k++)
            ek_vec_free(&m->qs[i].tqs[k].q);
    }
    free(m->qs);
    for (int i = 0; i < SIM_MAX_IMAGES; i++) {
        free(m->syms[i].v);
        free(m->syms[i].names);
    }
    if (!err) err = m->err;
    free(m);
    return err;
}

int sim_truth_write(sim *S, sim_session *s, const char *expected, const char *perf_expected)
{
    int err = emulate(S, s, VIEW_TRUE, expected, &s->expected_lines);
    if (err || !perf_expected) return err;
    if (s->header_version > 1) {
        /* perf 6.1 knows AUXTRACE_INFO up to version 1 and refuses the whole file */
        FILE *f = fopen(perf_expected, "w");
        s->perf_lines = 0;
        return f && !sim_fclose(f) ? 0 : EK_ERR_IO;
    }
    return emulate(S, s, VIEW_PERF, perf_expected, &s->perf_lines);
}
