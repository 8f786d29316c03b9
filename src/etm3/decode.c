/* ETMv3 instruction-flow decoder: packets + code image -> generic elements.
 *
 * Every P-header atom is one instruction: E executed, N failed its condition code. An E atom
 * on a direct branch moves to its target; on an indirect branch the address is unknown until
 * the next branch address packet. The last instruction range of a P-header is held back: a
 * following branch address packet with an exception whose "cancel" bit is set says that
 * instruction did not complete, and the range is dropped. */
#include <stdlib.h>
#include <string.h>

#include "etmkit/etm3.h"
#include "etmkit/etmkit.h"
#include "ptm/walk.h"

#define MAX_ELEMS 48

enum { D_NO_SYNC = 0, D_WAIT_ASYNC, D_WAIT_ISYNC, D_DECODE };

struct ek_etm3_decoder {
    ek_etm3_config cfg;
    a32_walker walker;
    uint8_t state, unsync_reason, need_addr, sent_unknown;
    uint8_t fatal; /* ek_etm3_fatal (EK_ETM3_OCSD_FATAL) */
    uint64_t fatal_index;
    uint64_t addr;
    uint8_t isa;
    ek_pe_context ctx;
    uint64_t index, last_index;
    size_t n, npend; /* elements; the last npend are held back */
    ek_elem e[MAX_ELEMS];
};

static void reset_ctx(ek_pe_context *c)
{
    memset(c, 0, sizeof *c);
    c->el = -1;
    c->security = EK_SEC_SECURE;
}

static void dec_reset(ek_etm3_decoder *d)
{
    d->state = D_NO_SYNC;
    d->need_addr = 1;
    d->sent_unknown = 0;
    d->n = d->npend = 0;
}

int ek_etm3_decoder_new(const ek_etm3_config *cfg, const ek_flow_mem *mem, ek_etm3_decoder **out)
{
    ek_etm3_decoder *d = calloc(1, sizeof *d);
    if (!d) return EK_ERR_NOMEM;
    d->cfg = *cfg;
    a32_walker_init(&d->walker, mem, cfg->trace_id, cfg->arch, cfg->profile);
    d->unsync_reason = EK_UNSYNC_INIT_DECODER;
    d->isa = EK_ISET_UNKNOWN;
    reset_ctx(&d->ctx);
    dec_reset(d);
    *out = d;
    return 0;
}

void ek_etm3_decoder_free(ek_etm3_decoder *d)
{
    free(d);
}

void ek_etm3_decoder_reset(ek_etm3_decoder *d)
{
    d->unsync_reason = EK_UNSYNC_RESET_DECODER;
    dec_reset(d);
}

const ek_elem *ek_etm3_decoder_elems(const ek_etm3_decoder *d, size_t *n)
{
    *n = d->n - d->npend;
    return d->e;
}

void ek_etm3_decoder_clear(ek_etm3_decoder *d)
{
    const size_t sent = d->n - d->npend;
    memmove(d->e, d->e + sent, d->npend * sizeof d->e[0]);
    d->n = d->npend;
}

static ek_elem *add(ek_etm3_decoder *d, unsigned type)
{
    if (d->n >= MAX_ELEMS) { /* cannot happen: a packet makes at most 17 */
        d->n = MAX_ELEMS - 1;
        if (d->npend > d->n) d->npend = d->n;
    }
    ek_elem *e = &d->e[d->n++];
    memset(e, 0, sizeof *e);
    e->index = d->index;
    e->trace_id = d->cfg.trace_id;
    e->type = (uint8_t)type;
    return e;
}

static void set_cc(ek_elem *e, uint32_t cc)
{
    e->cycle_count = cc;
    e->flags |= EK_ELEMF_HAS_CC;
}

static void set_need_addr(ek_etm3_decoder *d, int need)
{
    d->need_addr = (uint8_t)need;
    d->sent_unknown = 0;
}

static uint32_t mem_space(const ek_etm3_decoder *d)
{
    return d->ctx.security == EK_SEC_SECURE ? EK_MS_S : EK_MS_N;
}

/* Cycles of atom i of a cycle-accurate P-header, and of atoms i.. together. */
static uint32_t atom_cc(const ek_etm3_packet *k, unsigned i)
{
    switch (k->p_hdr_fmt) {
    case 1: return 1;
    case 2: return i == 0 ? 1 : 0;
    case 3: return k->cycle_count;
    default: return 0;
    }
}

static uint32_t remain_cc(const ek_etm3_packet *k, unsigned i)
{
    switch (k->p_hdr_fmt) {
    case 1: return k->atom_num > i ? k->atom_num - i : 0;
    case 2: return i == 0 ? 1 : 0;
    case 3: return k->cycle_count;
    default: return 0;
    }
}

static void p_header(ek_etm3_decoder *d, const ek_etm3_packet *k)
{
    const int ca = d->cfg.cycle_acc;
    unsigned i = 0;
    /* OpenCSD 1.8.0 starts every P-header in the packet processor's instruction set, which
     * only address packets change: a BLX (immediate) in an earlier P-header is forgotten */
    if (d->cfg.compat & EK_ETM3_OCSD_PHDR_ISA) d->isa = k->isa;
    do {
        if (d->need_addr) {
            if (!d->sent_unknown || ca) {
                const int cc_only = d->sent_unknown || i >= k->atom_num;
                ek_elem *e = add(d, cc_only ? EK_ELEM_CYCLE_COUNT : EK_ELEM_ADDR_UNKNOWN);
                if (ca) set_cc(e, remain_cc(k, i));
                d->sent_unknown = 1;
            }
            break; /* the other atoms cannot be placed */
        }
        ek_elem *e = add(d, EK_ELEM_INSTR_RANGE);
        if (ca) {
            if (i >= k->atom_num) e->type = EK_ELEM_CYCLE_COUNT;
            set_cc(e, atom_cc(k, i));
        }
        if (i < k->atom_num) {
            const int exec = (k->atom_bits >> i) & 1;
            a32_walk wk;
            a32_walk_run(&d->walker, d->addr, d->isa, mem_space(d), WALK_ONE, 0, NULL, &wk);
            /* one instruction: stop after it whatever it is */
            if (!wk.nacc_hit && !wk.bad_isa) {
                e->st_addr = wk.st;
                e->en_addr = wk.en;
                e->num_instr = 1;
                e->isa = d->isa;
                e->last_i_type = wk.last.type;
                e->last_i_sub = wk.last.subtype;
                e->last_i_size = wk.last.size;
                if (exec) e->flags |= EK_ELEMF_LAST_EXEC;
                if (wk.last.flags & EK_IF_COND) e->flags |= EK_ELEMF_LAST_COND;
                uint64_t next = wk.en;
                uint8_t next_isa = d->isa;
                int known = 1;
                if (exec && wk.last.type == EK_ITYPE_BR) {
                    next = wk.last.target;
                    next_isa = wk.last.next_isa;
                } else if (exec && wk.last.type == EK_ITYPE_BR_INDIRECT) {
                    known = 0;
                }
                if (known)
                    d->addr = next;
                else
                    set_need_addr(d, 1);
                d->isa = next_isa;
            } else {
                /* not readable (or an instruction set this decoder cannot walk) */
                e->type = EK_ELEM_ADDR_NACC;
                e->st_addr = wk.bad_isa ? d->addr : wk.nacc;
                e->u.mem_space = mem_space(d);
                set_need_addr(d, 1);
            }
        }
        i++;
    } while (i < k->atom_num);
    if (d->n > d->npend && d->e[d->n - 1].type == EK_ELEM_INSTR_RANGE) d->npend = 1;
}

static void isync(ek_etm3_decoder *d, const ek_etm3_packet *k, int first)
{
    if (first || k->isync_reason != 0) {
        ek_elem *e = add(d, EK_ELEM_TRACE_ON);
        e->u.trace_on_reason = k->isync_reason == 2   ? EK_TRACE_ON_OVERFLOW
                               : k->isync_reason == 3 ? EK_TRACE_ON_EX_DEBUG
                                                      : EK_TRACE_ON_NORMAL;
    }
    if (k->ctx_updated || first) {
        if (first) reset_ctx(&d->ctx);
        if (k->cid_updated) {
            d->ctx.context_id = k->ctxt_id;
            d->ctx.ctxt_id_valid = 1;
        }
        if (k->vmid_updated) {
            d->ctx.vmid = k->vmid;
            d->ctx.vmid_valid = 1;
        }
        if (k->ctx_updated) {
            d->ctx.el = k->hyp ? 2 : -1;
            d->ctx.el_valid = k->hyp ? 1 : 0;
            d->ctx.security = k->ns ? EK_SEC_NONSECURE : EK_SEC_SECURE;
        }
        ek_elem *e = add(d, EK_ELEM_PE_CONTEXT);
        e->context = d->ctx;
        e->isa = k->isa;
        if (k->isync_has_cc) set_cc(e, k->cycle_count);
    }
    if (!k->isync_no_addr) {
        d->addr = k->isync_lsip ? k->data_addr : k->addr;
        d->isa = k->isa;
        set_need_addr(d, 0);
    }
}

static void branch(ek_etm3_decoder *d, const ek_etm3_packet *k)
{
    if (k->exc_present && k->exc_cancel)
        d->n -= d->npend; /* the held-back instruction did not complete */
    d->npend = 0;
    d->addr = k->addr;
    d->isa = k->isa;
    set_need_addr(d, 0);
    if (!k->exc_present) return;
    int ctx = 0;
    if (k->ctx_updated) {
        const uint8_t sec = k->ns ? EK_SEC_NONSECURE : EK_SEC_SECURE;
        if (sec != d->ctx.security) {
            d->ctx.security = sec;
            ctx = 1;
        }
        const int8_t el = k->hyp ? 2 : -1;
        if (el != d->ctx.el) {
            d->ctx.el = el;
            d->ctx.el_valid = k->hyp ? 1 : 0;
            ctx = 1;
        }
    }
    if (ctx) {
        ek_elem *e = add(d, EK_ELEM_PE_CONTEXT);
        e->context = d->ctx;
        e->isa = d->isa;
    }
    if (k->exc_num) {
        ek_elem *e = add(d, EK_ELEM_EXCEPTION);
        e->u.exception_number = k->exc_num;
    }
}

/* A packet the decoder cannot use while synchronised: start again at the next A-Sync. What was
 * decoded before it stands (decode_packet has released the range held back: a bad packet is not
 * an exception cancelling it). */
static void lost_sync(ek_etm3_decoder *d)
{
    d->unsync_reason = EK_UNSYNC_BAD_PACKET;
    d->state = D_NO_SYNC;
    d->npend = 0;
    set_need_addr(d, 1);
}

/* EK_ETM3_OCSD_FATAL: the packets OpenCSD 1.8.0's decoder answers with a fatal response. */
static unsigned ocsd_fatal_of(const ek_etm3_packet *k)
{
    switch (k->type) {
    case EK_ETM3_STORE_FAIL:
    case EK_ETM3_OOO_DATA:
    case EK_ETM3_OOO_ADDR_PLC:
    case EK_ETM3_NORM_DATA:
    case EK_ETM3_DATA_SUPPRESSED:
    case EK_ETM3_VAL_NOT_TRACED:
    case EK_ETM3_BAD_TRACEMODE: return EK_ETM3_FATAL_DATA;
    case EK_ETM3_BAD_SEQUENCE: return EK_ETM3_FATAL_BAD_SEQ;
    case EK_ETM3_RESERVED: return EK_ETM3_FATAL_RESERVED;
    default: return EK_ETM3_FATAL_NONE;
    }
}

static void decode_packet(ek_etm3_decoder *d, const ek_etm3_packet *k)
{
    if (k->type != EK_ETM3_BRANCH_ADDRESS) d->npend = 0;
    switch (k->type) {
    case EK_ETM3_NOTSYNC:
    case EK_ETM3_BAD_SEQUENCE:
    case EK_ETM3_RESERVED: lost_sync(d); break;
    case EK_ETM3_CYCLE_COUNT: set_cc(add(d, EK_ELEM_CYCLE_COUNT), k->cycle_count); break;
    case EK_ETM3_TRIGGER: add(d, EK_ELEM_EVENT)->u.event.type = EK_EVENT_TRIGGER; break;
    case EK_ETM3_BRANCH_ADDRESS: branch(d, k); break;
    case EK_ETM3_ISYNC:
    case EK_ETM3_ISYNC_CYCLE: isync(d, k, 0); break;
    case EK_ETM3_P_HDR: p_header(d, k); break;
    case EK_ETM3_CONTEXT_ID: {
        d->ctx.context_id = k->ctxt_id;
        d->ctx.ctxt_id_valid = 1;
        ek_elem *e = add(d, EK_ELEM_PE_CONTEXT);
        e->context = d->ctx;
        e->isa = d->isa;
        break;
    }
    case EK_ETM3_VMID: {
        d->ctx.vmid = k->vmid;
        d->ctx.vmid_valid = 1;
        ek_elem *e = add(d, EK_ELEM_PE_CONTEXT);
        e->context = d->ctx;
        e->isa = d->isa;
        break;
    }
    case EK_ETM3_EXCEPTION_ENTRY: add(d, EK_ELEM_EXCEPTION); break;
    case EK_ETM3_EXCEPTION_EXIT: {
        add(d, EK_ELEM_EXCEPTION_RET);
        /* A/R profile: the return and the instruction before it may still be cancelled */
        size_t pend = 1;
        if (!d->cfg.v7m && d->n > 1 && d->e[d->n - 2].type == EK_ELEM_INSTR_RANGE) pend = 2;
        d->npend = pend;
        break;
    }
    case EK_ETM3_TIMESTAMP: add(d, EK_ELEM_TIMESTAMP)->timestamp = k->timestamp; break;
    default: break; /* A-Sync, ignore, data trace (not needed for the instruction flow) */
    }
}

static int stop(ek_etm3_decoder *d, unsigned why, uint64_t index)
{
    d->fatal = (uint8_t)why;
    d->fatal_index = index;
    d->n = d->npend = 0; /* OpenCSD's resetDecoder drops what it held */
    d->unsync_reason = EK_UNSYNC_BAD_PACKET;
    dec_reset(d);
    return why == EK_ETM3_FATAL_NOT_INIT ? EK_ERR_UNSUPPORTED
           : why == EK_ETM3_FATAL_DATA   ? EK_ERR_UNSUPPORTED
                                         : EK_ERR_BAD_PACKET;
}

unsigned ek_etm3_decoder_fatal(const ek_etm3_decoder *d, uint64_t *index)
{
    if (index) *index = d->fatal_index;
    return d->fatal;
}

int ek_etm3_decode(ek_etm3_decoder *d, const ek_etm3_packet *k)
{
    d->index = k->index;
    d->last_index = k->index;
    if (d->cfg.compat & EK_ETM3_OCSD_FATAL) {
        /* OpenCSD refuses the configuration (only instruction trace is decoded) and answers
         * every packet with a fatal "not initialised" */
        if (d->cfg.data_value || d->cfg.data_addr || d->cfg.data_only)
            return stop(d, EK_ETM3_FATAL_NOT_INIT, k->index);
        if (d->state == D_DECODE && ocsd_fatal_of(k)) return stop(d, ocsd_fatal_of(k), k->index);
    }
    for (;;) {
        switch (d->state) {
        case D_NO_SYNC: {
            ek_elem *e = add(d, EK_ELEM_NO_SYNC);
            e->u.unsync_reason = d->unsync_reason;
            d->state = D_WAIT_ASYNC;
            continue;
        }
        case D_WAIT_ASYNC:
            if (k->type == EK_ETM3_ASYNC) d->state = D_WAIT_ISYNC;
            return 0;
        case D_WAIT_ISYNC:
            if (k->type == EK_ETM3_ISYNC || k->type == EK_ETM3_ISYNC_CYCLE) {
                d->npend = 0;
                isync(d, k, 1);
                d->state = D_DECODE;
            } else if (k->type == EK_ETM3_TIMESTAMP ||
                       (d->cfg.cycle_acc &&
                        (k->type == EK_ETM3_CYCLE_COUNT || k->type == EK_ETM3_P_HDR))) {
                decode_packet(d, k);
            }
            return 0;
        default: decode_packet(d, k); return 0;
        }
    }
}

int ek_etm3_decode_eot(ek_etm3_decoder *d)
{
    d->index = d->last_index;
    d->npend = 0;
    add(d, EK_ELEM_EO_TRACE)->u.unsync_reason = EK_UNSYNC_EOT;
    return 0;
}
