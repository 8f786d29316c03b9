/* PTM (PFT) instruction-flow decoder: packets + code image -> generic elements.
 *
 * Waypoints are branches (and, with PFT v1.1 and ETMCCER.DMB_WPT, barriers are not waypoints
 * here: OpenCSD 1.8.0 never treats DMB/DSB as PTM waypoints). An atom says whether the next
 * waypoint's branch was taken; the code between the current address and the waypoint becomes
 * an INSTR_RANGE. A taken indirect branch leaves the address unknown until a branch address
 * packet (or, with the return stack, the return address of a matching call). */
#include <stdlib.h>
#include <string.h>

#include "etmkit/ptm.h"
#include "etmkit/etmkit.h"
#include "walk.h"

#define MAX_ELEMS 24

enum { D_NO_SYNC = 0, D_WAIT_SYNC, D_WAIT_ISYNC, D_DECODE };

struct ek_ptm_decoder {
    ek_ptm_config cfg;
    a32_walker walker;
    a32_ret_stack rs;
    uint8_t state, need_isync, unsync_reason;
    /* current PE state */
    uint64_t addr;
    uint8_t isa, valid;
    ek_pe_context ctx;
    uint64_t index; /* of the packet being decoded */
    uint64_t last_index;
    size_t n;
    ek_elem e[MAX_ELEMS];
};

static void dec_reset(ek_ptm_decoder *d)
{
    d->state = D_NO_SYNC;
    d->need_isync = 1;
    memset(&d->ctx, 0, sizeof d->ctx);
    d->ctx.el = -1;
    d->ctx.security = EK_SEC_SECURE;
    d->addr = 0;
    d->isa = EK_ISET_UNKNOWN;
    d->valid = 0;
    a32_rs_flush(&d->rs);
}

int ek_ptm_decoder_new(const ek_ptm_config *cfg, const ek_flow_mem *mem, ek_ptm_decoder **out)
{
    ek_ptm_decoder *d = calloc(1, sizeof *d);
    if (!d) return EK_ERR_NOMEM;
    d->cfg = *cfg;
    a32_walker_init(&d->walker, mem, cfg->trace_id, cfg->arch, cfg->profile);
    d->rs.active = cfg->ret_stack;
    d->unsync_reason = EK_UNSYNC_INIT_DECODER;
    dec_reset(d);
    *out = d;
    return 0;
}

void ek_ptm_decoder_free(ek_ptm_decoder *d)
{
    free(d);
}

void ek_ptm_decoder_reset(ek_ptm_decoder *d)
{
    d->unsync_reason = EK_UNSYNC_RESET_DECODER;
    dec_reset(d);
}

const ek_elem *ek_ptm_decoder_elems(const ek_ptm_decoder *d, size_t *n)
{
    *n = d->n;
    return d->e;
}

void ek_ptm_decoder_clear(ek_ptm_decoder *d)
{
    d->n = 0;
}

static ek_elem *add(ek_ptm_decoder *d, unsigned type)
{
    if (d->n >= MAX_ELEMS) d->n = MAX_ELEMS - 1; /* cannot happen: a packet makes at most 8 */
    ek_elem *e = &d->e[d->n++];
    memset(e, 0, sizeof *e);
    e->index = d->index;
    e->trace_id = d->cfg.trace_id;
    e->type = (uint8_t)type;
    return e;
}

static void set_cc(ek_elem *e, const ek_ptm_packet *k)
{
    if (k->cc_valid) {
        e->cycle_count = k->cycle_count;
        e->flags |= EK_ELEMF_HAS_CC;
    }
}

static uint32_t mem_space(const ek_ptm_decoder *d)
{
    return d->ctx.security == EK_SEC_SECURE ? EK_MS_S : EK_MS_N;
}

static void nacc(ek_ptm_decoder *d, uint64_t addr)
{
    ek_elem *e = add(d, EK_ELEM_ADDR_NACC);
    e->st_addr = addr;
    e->u.mem_space = mem_space(d);
}

/* Walk to the next waypoint (or to `match`) and apply atom `exec`. */
static void atom_range(ek_ptm_decoder *d, const ek_ptm_packet *k, int exec, int mode,
                       uint64_t match)
{
    a32_walk wk;
    const unsigned isa = d->isa;
    a32_walk_run(&d->walker, d->addr, isa, mem_space(d), mode, match, NULL, &wk);
    if (wk.bad_isa) {
        d->valid = 0; /* wait for an address in an instruction set we decode */
        return;
    }
    if (wk.found) {
        const uint64_t next = wk.next;
        uint64_t addr = wk.next;
        uint8_t next_isa = (uint8_t)isa;
        if (wk.last.type == EK_ITYPE_BR) {
            if (exec) {
                addr = wk.last.target;
                next_isa = wk.last.next_isa;
                if (wk.last.flags & EK_IF_LINK) a32_rs_push(&d->rs, (uint32_t)next, (uint8_t)isa);
            }
        } else if (wk.last.type == EK_ITYPE_BR_INDIRECT) {
            if (exec) {
                d->valid = 0;
                if (d->rs.active && k->type == EK_PTM_ATOM) {
                    uint8_t rs_isa = next_isa;
                    addr = a32_rs_pop(&d->rs, &rs_isa);
                    next_isa = rs_isa;
                    if (!d->rs.overflow) d->valid = 1;
                }
                if (wk.last.flags & EK_IF_LINK) a32_rs_push(&d->rs, (uint32_t)next, (uint8_t)isa);
            }
        }
        ek_elem *e = add(d, EK_ELEM_INSTR_RANGE);
        a32_range_elem(e, &wk, isa, exec);
        set_cc(e, k);
        d->addr = addr;
        d->isa = next_isa;
    } else {
        d->valid = 0;
        if (wk.st != wk.en) {
            ek_elem *e = add(d, EK_ELEM_INSTR_RANGE);
            a32_range_elem(e, &wk, isa, 1);
        }
        if (wk.nacc_hit) nacc(d, wk.nacc);
    }
}

static void context_elem(ek_ptm_decoder *d)
{
    ek_elem *e = add(d, EK_ELEM_PE_CONTEXT);
    e->context = d->ctx;
    e->isa = d->isa;
}

static void isync(ek_ptm_decoder *d, const ek_ptm_packet *k)
{
    d->addr = k->addr;
    d->isa = k->isa;
    d->valid = 1;
    int pe = k->isa != k->prev_isa;
    if (k->cid_updated) {
        d->ctx.context_id = k->ctxt_id;
        d->ctx.ctxt_id_valid = 1;
        pe = 1;
    }
    if (k->vmid_updated) {
        d->ctx.vmid = k->vmid;
        d->ctx.vmid_valid = 1;
        pe = 1;
    }
    d->ctx.security = k->ns ? EK_SEC_NONSECURE : EK_SEC_SECURE;
    if (d->need_isync || k->isync_reason != EK_PTM_ISYNC_PERIODIC) {
        ek_elem *e = add(d, EK_ELEM_TRACE_ON);
        e->u.trace_on_reason = k->isync_reason == EK_PTM_ISYNC_OVERFLOW     ? EK_TRACE_ON_OVERFLOW
                               : k->isync_reason == EK_PTM_ISYNC_DEBUG_EXIT ? EK_TRACE_ON_EX_DEBUG
                                                                            : EK_TRACE_ON_NORMAL;
        set_cc(e, k);
    } else {
        pe = 0; /* periodic: nothing new */
    }
    d->need_isync = 0;
    a32_rs_flush(&d->rs);
    if (pe) context_elem(d);
}

static void branch(ek_ptm_decoder *d, const ek_ptm_packet *k)
{
    if (k->exc_present) {
        ek_elem *e = add(d, EK_ELEM_EXCEPTION);
        e->u.exception_number = k->exc_num;
        if (d->valid) {
            e->flags |= EK_ELEMF_EXCEP_RET_ADDR;
            e->en_addr = d->addr;
        }
        set_cc(e, k);
    } else if (d->valid) {
        atom_range(d, k, 1, WALK_TO_WAYPOINT, 0); /* a branch address implies an E atom */
    }
    d->isa = k->isa;
    d->addr = k->addr;
    d->valid = 1;
}

static void decode_packet(ek_ptm_decoder *d, const ek_ptm_packet *k)
{
    switch (k->type) {
    case EK_PTM_BAD_SEQUENCE:
    case EK_PTM_RESERVED: {
        d->state = D_WAIT_SYNC;
        d->need_isync = 1;
        ek_elem *e = add(d, EK_ELEM_NO_SYNC);
        e->u.unsync_reason = EK_UNSYNC_BAD_PACKET;
        break;
    }
    case EK_PTM_ISYNC: isync(d, k); break;
    case EK_PTM_BRANCH_ADDRESS: branch(d, k); break;
    case EK_PTM_TRIGGER: {
        ek_elem *e = add(d, EK_ELEM_EVENT);
        e->u.event.type = EK_EVENT_TRIGGER;
        break;
    }
    case EK_PTM_WP_UPDATE:
        if (d->valid) atom_range(d, k, 1, WALK_TO_ADDR_INCL, k->addr);
        break;
    case EK_PTM_CONTEXT_ID:
        if (!(d->ctx.ctxt_id_valid && d->ctx.context_id == k->ctxt_id)) {
            d->ctx.context_id = k->ctxt_id;
            d->ctx.ctxt_id_valid = 1;
            context_elem(d);
        }
        break;
    case EK_PTM_VMID:
        if (!(d->ctx.vmid_valid && d->ctx.vmid == k->vmid)) {
            d->ctx.vmid = k->vmid;
            d->ctx.vmid_valid = 1;
            context_elem(d);
        }
        break;
    case EK_PTM_ATOM:
        for (unsigned i = 0; i < k->atom_num && d->valid; i++)
            atom_range(d, k, (k->atom_bits >> i) & 1, WALK_TO_WAYPOINT, 0);
        break;
    case EK_PTM_TIMESTAMP: {
        ek_elem *e = add(d, EK_ELEM_TIMESTAMP);
        e->timestamp = k->timestamp;
        set_cc(e, k);
        break;
    }
    case EK_PTM_EXCEPTION_RET: add(d, EK_ELEM_EXCEPTION_RET); break;
    default: break; /* NOTSYNC, INCOMPLETE_EOT, ASYNC, IGNORE */
    }
}

int ek_ptm_decode(ek_ptm_decoder *d, const ek_ptm_packet *k)
{
    d->index = k->index;
    d->last_index = k->index;
    for (;;) {
        switch (d->state) {
        case D_NO_SYNC: {
            ek_elem *e = add(d, EK_ELEM_NO_SYNC);
            e->u.unsync_reason = d->unsync_reason;
            d->state = k->type == EK_PTM_ASYNC ? D_WAIT_ISYNC : D_WAIT_SYNC;
            return 0;
        }
        case D_WAIT_SYNC:
            if (k->type == EK_PTM_ASYNC) d->state = D_WAIT_ISYNC;
            return 0;
        case D_WAIT_ISYNC:
            if (k->type != EK_PTM_ISYNC) return 0;
            d->state = D_DECODE;
            break;
        default: decode_packet(d, k); return 0;
        }
    }
}

int ek_ptm_decode_eot(ek_ptm_decoder *d)
{
    d->index = d->last_index;
    ek_elem *e = add(d, EK_ELEM_EO_TRACE);
    e->u.unsync_reason = EK_UNSYNC_EOT;
    return 0;
}
