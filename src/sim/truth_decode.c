/* Decoding for the ground truth: the operations of a slice (truth.c) -> the elements a decoder
 * outputs. VIEW_TRUE takes the range of every atom and exception from what the machine executed
 * (and outputs ADDR_NACC where a decoder cannot read the code: the kernel without its image in
 * symfs); VIEW_PERF walks the instructions the way OpenCSD does, in the memory perf 6.1 has at
 * decode time (its final maps, no kernel without vmlinux). */
#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"
#include "etmkit/etmkit.h"
#include "sim/truth.h"

static int pid_of(const sim *S, int tid)
{
    sim_thread *t = sim_find_thread(S, tid);
    return t && t->proc ? t->proc->pid : -1;
}

/* perf view: the mapping perf has for an address of a process (kernel: machine-wide) */
const sim_map *tr_perf_map_pid(const sim *S, uint64_t map_time, int pid, uint64_t a)
{
    if (a >= S->kernel_map.start)
        return a < S->kernel_map.end ? &S->kernel_map : sim_kmod_map(S, a);
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
static const sim_map *perf_map(const tr_decoder *d, int tid, uint64_t a)
{
    const sim *S = d->S;
    if (a >= S->kernel_map.start && S->no_vmlinux) return NULL;
    return tr_perf_map_pid(S, d->map_time, pid_of(S, tid), a);
}

/* perf's cs_etm__mem_access: up to size bytes at a from the file under the map of a in thread
 * tid's process (the kernel: its code segment in vmlinux); 0 when perf has no code there */
static uint32_t perf_read(const tr_decoder *d, int tid, uint64_t a, uint32_t size,
                          const uint8_t **data)
{
    const sim_map *m = perf_map(d, tid, a);
    if (!m) return 0;
    uint64_t off, end;
    const sim_kmod *k = d->S->kmod;
    if (k && m == &k->map) {
        /* the .ko as if it were the module's memory: address - map start + pgoff, which is
         * .text's file offset once the symbols are loaded -- and perf's thread__find_map loads
         * a kernel map it finds before the read (the map is changed "when loading symbols") */
        off = a - m->start + k->text_off;
        if (d->kmod_read == SIZE_MAX && d->out) ((tr_decoder *)d)->kmod_read = d->out->n;
        if (off >= k->ko_size) return 0;
        *data = k->ko + off;
        return k->ko_size - off < size ? (uint32_t)(k->ko_size - off) : size;
    }
    if (m->img->is_kernel) {
        if (a - m->bias < m->img->seg_vaddr) return 0;
        off = m->img->seg_off + (a - m->bias - m->img->seg_vaddr);
        end = m->img->seg_off + m->img->seg_filesz;
    } else {
        /* the map's file offset: the whole file can be read from there on, code or not --
         * the file symfs holds, whatever its build-id (perf reads code without checking it) */
        const sim_image *f = m->img->symfs ? m->img->symfs : m->img;
        off = (m->img->seg_off & ~0xFFFull) + (a - m->start);
        end = f->size;
        if (off >= end) return 0;
        *data = f->data + off;
        return end - off < size ? (uint32_t)(end - off) : size;
    }
    if (off >= end) return 0;
    *data = m->img->data + off;
    return end - off < size ? (uint32_t)(end - off) : size;
}

int tr_perf_word(const tr_decoder *d, int tid, uint64_t a, uint32_t *w, uint32_t *serial)
{
    const uint8_t *p;
    if (perf_read(d, tid, a, 4, &p) < 4) return -1;
    *w = ek_le32(p);
    if (serial) {
        const sim_map *m = perf_map(d, tid, a);
        *serial = m ? m->serial : 0;
    }
    return 0;
}

/* An instruction word as OpenCSD 1.3.3 reads it: through its memory access cache, whose pages
 * are read from the address that missed and may run past the end of the map (perf reads the
 * file) -- or hold code of another process, until a context change clears them. */
static int ocsd_word(tr_decoder *d, int tid, uint64_t a, uint32_t *w)
{
    tr_mcache *c = d->cache;
    if (!c) return tr_perf_word(d, tid, a, w, NULL);
    for (int k = 0; k < TR_CACHE_PAGES; k++) {
        if (c->pg[c->idx].st <= a && c->pg[c->idx].st + c->pg[c->idx].len >= a + 4) {
            *w = ek_le32(c->pg[c->idx].data + (a - c->pg[c->idx].st));
            return 0;
        }
        c->idx = (c->idx + 1) % TR_CACHE_PAGES;
    }
    c->idx = c->next;
    const uint8_t *p = NULL;
    uint32_t n = perf_read(d, tid, a, TR_CACHE_PAGE, &p);
    c->pg[c->idx].len = n;
    if (!n) return -1;
    c->pg[c->idx].st = a;
    c->pg[c->idx].data = p;
    c->next = (c->next + 1) % TR_CACHE_PAGES;
    if (n < 4) return -1;
    *w = ek_le32(p);
    return 0;
}

static void cache_invalidate(tr_decoder *d)
{
    if (d->cache) memset(d->cache, 0, sizeof(*d->cache));
}

static int cur_tid(const tr_decoder *d, const tr_idstate *st)
{
    return d->timeless ? d->global_tid : st->tid;
}

static void out_elem(tr_decoder *d, sim_elem *e)
{
    e->cpu = (uint8_t)d->cur_cpu;
    if (ek_vec_push(d->out, *e)) d->err = EK_ERR_NOMEM;
}

static void flush_pending(tr_decoder *d, tr_idstate *st, const sim_op *o)
{
    for (unsigned i = 0; i < st->npend; i++) {
        tr_pend *p = &st->pending[i];
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
            /* OpenCSD: a committed context update clears the memory access cache */
            if (d->view == VIEW_PERF) cache_invalidate(d);
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

static void add_pend(tr_idstate *st, uint8_t kind, uint64_t v, uint8_t el)
{
    if (st->npend == 64) /* never happens with the encoder's streams; keep the newest */
        memmove(st->pending, st->pending + 1, 63 * sizeof(tr_pend));
    else
        st->npend++;
    st->pending[st->npend - 1] = (tr_pend){kind, el, v};
}

static void rs_push(tr_idstate *st, uint64_t a)
{
    st->rs_head = (st->rs_head + 1) & 15;
    st->rs[st->rs_head] = a;
    if (++st->rs_n > 16) st->rs_n = 16;
}

/* OpenCSD: a pending return-stack pop provides the address of the indirect branch target */
static void rs_pop_pending(tr_idstate *st)
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

/* Whether the trace being decoded has the return stack on: its session's TRCCONFIGR.RS, as the
 * recording says (AUXTRACE_INFO) -- not the CPU's encoder, which the last session to start on
 * that CPU configured. */
static int rs_on(const tr_decoder *d)
{
    return (d->s->configr & EK_TRCCONFIGR_RS) != 0;
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

static void range_elem(tr_decoder *d, const sim_op *o, uint64_t st_a, uint64_t en_a, int cls,
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
        e.svc_before =
            !tr_perf_word(d, tid, st_a - 4, &w, NULL) && (w & 0xFFE0001Fu) == 0xD4000001u;
        e.svc_at_end =
            !tr_perf_word(d, tid, en_a - 4, &w, NULL) && (w & 0xFFE0001Fu) == 0xD4000001u;
    }
    out_elem(d, &e);
}

/* perf view: walk instructions from st->pos to the next waypoint (or until the address
 * 'stop' is reached); emits the range and returns the class of the last instruction, -1 if
 * memory ran out (NACC). *wp is the address of the last instruction, *target a direct
 * branch's destination. */
static int walk(tr_decoder *d, tr_idstate *st, const sim_op *o, uint64_t stop, int use_stop,
                int taken_if_wp, uint64_t *wp, uint64_t *target)
{
    int tid = cur_tid(d, st);
    uint64_t a = st->pos, start = st->pos;
    uint32_t map = 0, w = 0;
    for (uint64_t n = 0; n < (1u << 26); n++) {
        if (ocsd_word(d, tid, a, &w)) {
            if (a != start) range_elem(d, o, start, a, SIM_I_OTHER, 0, map, tid);
            st->pos = a;
            st->need_addr = 1;
            return -1;
        }
        if (a == start) {
            const sim_map *mm = perf_map(d, tid, a);
            map = mm ? mm->serial : 0;
        }
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
static void eret_elem(tr_decoder *d, const sim_op *o)
{
    if (!d->S->cpus[o->cpu].etm.enc.ete) return;
    sim_elem x;
    memset(&x, 0, sizeof(x));
    x.kind = SIM_E_EXC_RET;
    x.trace_id = o->trace_id;
    x.gen = o->gen;
    out_elem(d, &x);
}

/* Can a decoder read the code of this mapping? The kernel's only with its image in symfs; a
 * file only when symfs holds the build that ran (the recorded build-id: another build is
 * refused). */
static int readable(const tr_decoder *d, uint32_t map)
{
    if (!map) return !d->S->no_vmlinux;
    if (!d->S->wrong_builds) return 1;
    const sim_map *m = tr_map_by_serial(d->S, map);
    return !m || !m->img->symfs;
}

static void nacc_elem(tr_decoder *d, tr_idstate *st, const sim_op *o, uint64_t addr)
{
    sim_elem x;
    memset(&x, 0, sizeof(x));
    x.kind = SIM_E_NACC;
    x.trace_id = o->trace_id;
    x.start = addr;
    x.gen = o->gen;
    out_elem(d, &x);
    st->need_addr = 1;
    st->rs_pop = 0;
}

static void do_atom(tr_decoder *d, tr_idstate *st, const sim_op *o)
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
        if (!readable(d, a->map)) {
            nacc_elem(d, st, o, a->start);
            return;
        }
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
        r.stack = a->stack;
        r.gen = o->gen;
        out_elem(d, &r);
        if (taken && a->cls == SIM_I_ERET) eret_elem(d, o);
        if (taken && (a->cls == SIM_I_BR || a->cls == SIM_I_BLR || a->cls == SIM_I_RET ||
                      a->cls == SIM_I_ERET)) {
            st->need_addr = 1;
            st->rs_pop = rs_on(d) && a->cls != SIM_I_ERET;
        }
        return;
    }
    rs_pop_pending(st);
    if (st->need_addr || st->need_ctxt) return;
    uint64_t wp = 0, target = 0;
    int c = walk(d, st, o, 0, 0, taken, &wp, &target);
    if (c < 0) return;
    int rs = rs_on(d);
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
        /* OpenCSD has moved past the branch: an exception before the target's address comes
         * is traced to from there (code of another build can make an atom's waypoint an
         * indirect branch that did not run) */
        st->pos = wp + 4;
        st->need_addr = 1;
        st->rs_pop = rs;
    }
}

static void do_exception(tr_decoder *d, tr_idstate *st, const sim_op *o, uint64_t ret)
{
    const sim_etm *e = &d->S->cpus[o->cpu].etm;
    if (d->view == VIEW_TRUE) {
        /* The Exception packet is the next P0 element after a taken return whose target the
         * return stack compressed (no address between them): the decoder pops the target, as
         * for an atom (do_atom), and the address that follows the exception is its preferred
         * return address, reached from that target. This view keeps no stack of its own (the
         * encoder compressed the return because it matched), so the pop only ends the wait. */
        if (st->need_addr && st->rs_pop) st->need_addr = 0;
        st->rs_pop = 0;
        if (st->exc_idx < e->excs.n && !st->need_addr && !st->need_ctxt) {
            const sim_texc *x = &e->excs.v[st->exc_idx];
            if (x->start != x->ret && !readable(d, x->map)) {
                nacc_elem(d, st, o, x->start);
            } else if (x->start != x->ret) {
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
                r.stack = x->stack;
                r.gen = o->gen;
                out_elem(d, &r);
            }
        }
    } else {
        rs_pop_pending(st); /* OpenCSD pops before it walks to the return address */
        if (st->pos != ret) {
            uint64_t wp, target;
            walk(d, st, o, ret, 1, 0, &wp, &target);
        }
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
int tr_decode_ops(tr_decoder *d, const sim_op_vec *ops, sim_elem_vec *out)
{
    d->out = out;
    out->n = 0;
    d->kmod_read = SIZE_MAX;
    for (int i = 0; i < 128; i++)
        d->st[i].npend = 0;
    for (size_t i = 0; i < ops->n && !d->err; i++) {
        const sim_op *o = &ops->v[i];
        tr_idstate *st = &d->st[o->trace_id & 127];
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
