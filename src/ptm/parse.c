/* PTM (PFT) configuration and packet parser. See etmkit/ptm.h. */
#include <string.h>

#include "etmkit/ptm.h"
#include "etmkit/etmkit.h"

int ek_ptm_config_init(ek_ptm_config *cfg, const ek_etm3_regs *regs, ek_arch arch,
                       ek_arch_profile profile)
{
    static const uint8_t cid[4] = {0, 1, 2, 4};
    memset(cfg, 0, sizeof *cfg);
    cfg->regs = *regs;
    cfg->arch = arch;
    cfg->profile = profile;
    const uint32_t cr = regs->etmcr, ccer = regs->etmccer;
    cfg->trace_id = (uint8_t)(regs->etmtraceidr & 0x7F);
    cfg->cid_bytes = cid[(cr >> EK_ETMCR_CID_SHIFT) & 3];
    cfg->cycle_acc = (cr & EK_ETMCR_CYCLE_ACC) != 0;
    cfg->ts_enabled = (cr & EK_ETMCR_TS_ENABLE) != 0;
    cfg->ts_64 = (ccer & EK_ETMCCER_TS_64) != 0;
    cfg->bb = (cr & EK_ETMCR_BRANCH_OUTPUT) != 0;
    cfg->ret_stack = (ccer & EK_ETMCCER_RET_STACK) && (cr & EK_ETMCR_RET_STACK);
    cfg->vmid = (cr & EK_ETMCR_VMID) != 0;
    cfg->dmb_waypoint = (ccer & EK_ETMCCER_DMB_WPT) != 0;
    cfg->minor = (uint8_t)((regs->etmidr >> 4) & 0xF);
    return 0;
}

int ek_ptm_config_from_source(ek_ptm_config *cfg, const ek_source_config *src)
{
    if (src->protocol != EK_PROTO_PTM && src->protocol != EK_PROTO_ETMV3) return EK_ERR_UNSUPPORTED;
    ek_ptm_config_init(cfg, &src->regs.etm3, src->arch, src->profile);
    cfg->trace_id = src->trace_id;
    return 0;
}

/* ---- parser --------------------------------------------------------------------------------- */

enum { S_WAIT_SYNC = 0, S_HDR, S_DATA, S_SEND };

#define ASYNC_PAD_0_LIMIT 11 /* zeros beyond the 5 of an A-Sync that are dropped at a time */
#define ASYNC_REQ_0       5
#define UNSYNC_PKT_MAX    16 /* unsynchronised bytes reported at a time */

static void clear_pkt(ek_ptm_packet *k)
{
    k->err_type = EK_PTM_NOERROR;
    k->cycle_count = 0;
    k->cc_valid = 0;
    k->ctx_updated = k->cid_updated = k->vmid_updated = 0;
    k->ts_update_bits = 0;
    k->atom_bits = 0;
    k->exc_present = 0;
    k->prev_isa = k->isa;
    k->flags = 0;
}

void ek_ptm_parser_reset(ek_ptm_parser *p)
{
    const ek_ptm_config cfg = p->cfg;
    memset(p, 0, sizeof *p);
    p->cfg = cfg;
    p->state = S_WAIT_SYNC;
    ek_ptm_packet *k = &p->pkt;
    k->type = EK_PTM_NOTSYNC;
    k->isa = k->prev_isa = EK_ISET_UNKNOWN;
    clear_pkt(k);
}

void ek_ptm_parser_init(ek_ptm_parser *p, const ek_ptm_config *cfg)
{
    p->cfg = *cfg;
    ek_ptm_parser_reset(p);
}

void ek_ptm_feed_tail(ek_ptm_parser *p, const uint8_t *tail, size_t n)
{
    if (n > sizeof p->tail) n = sizeof p->tail;
    if (n) memcpy(p->tail, tail, n);
    p->tail_len = (uint8_t)n;
}

void ek_ptm_feed(ek_ptm_parser *p, const uint8_t *data, size_t len, uint64_t index)
{
    p->tail_len = 0;
    p->in = data;
    p->in_len = len;
    p->in_used = 0;
    p->in_index = index;
}

static int read_byte(ek_ptm_parser *p, uint8_t *b)
{
    if (p->in_used >= p->in_len) return 0;
    *b = p->in[p->in_used++];
    if (p->len < EK_PTM_MAX_PKT) p->data[p->len++] = *b;
    return 1;
}

static void bad_sequence(ek_ptm_parser *p)
{
    p->pkt.err_type = p->pkt.type;
    p->pkt.type = EK_PTM_BAD_SEQUENCE;
    p->state = S_SEND;
}

static void update_address(ek_ptm_packet *k, uint32_t v, unsigned bits)
{
    const uint64_t mask = bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1;
    k->addr = (uint32_t)((k->addr & ~mask) | (v & mask));
    k->addr_pkt_bits = (uint8_t)bits;
    if (bits > k->addr_valid_bits) k->addr_valid_bits = (uint8_t)bits;
}

static void update_isa(ek_ptm_packet *k, unsigned isa)
{
    k->prev_isa = k->isa;
    k->isa = (uint8_t)isa;
}

/* Cycle count: first byte bits 5:2 (bit 6 = more), then up to 4 bytes of 7 bits. Returns 0
 * when the packet is too short. */
static int cycle_count(const ek_ptm_parser *p, unsigned off, uint32_t *cc)
{
    uint32_t v = 0;
    unsigned shift = 4;
    for (unsigned i = 0;; i++) {
        if (off + i >= p->len) return 0;
        const uint8_t b = p->data[off + i];
        int more;
        if (i == 0) {
            more = (b & 0x40) != 0;
            v = (b >> 2) & 0xF;
        } else {
            more = (b & 0x80) != 0 && i != 4;
            v |= (uint32_t)(b & 0x7F) << shift;
            shift += 7;
        }
        if (!more) break;
    }
    *cc = v;
    return 1;
}

/* Address field of a branch address (off 0) or waypoint update (off 1) packet. */
static uint32_t extract_address(const ek_ptm_parser *p, unsigned off, unsigned *bits)
{
    uint32_t v = 0;
    unsigned total = 0, next_shift = 0;
    uint8_t mask = 0x7E;
    unsigned nb = 7;
    for (unsigned i = 0; i < p->n_addr; i++) {
        if (i == 4) {
            mask = 0x0F;
            nb = 4;
            if (p->addr_isa == EK_ISET_JAZELLE) {
                mask = 0x1F;
                nb = 5;
            } else if (p->addr_isa == EK_ISET_A32) {
                mask = 0x07;
                nb = 3;
            }
        } else if (i > 0) {
            mask = 0x7F;
            nb = 7;
            if (i == p->n_addr - 1u) {
                mask = 0x3F;
                nb = 6;
            }
        }
        const unsigned shift = next_shift;
        if (off + i < p->len) v |= (uint32_t)(p->data[off + i] & mask) << shift;
        total += nb;
        if (i == 0) {
            if (p->addr_isa == EK_ISET_JAZELLE) {
                v >>= 1;
                next_shift = 6;
                total--;
            } else {
                next_shift = 7;
            }
        } else {
            next_shift += 7;
        }
    }
    if (p->addr_isa == EK_ISET_A32) {
        v <<= 1;
        total++;
    }
    *bits = total;
    return v;
}

static unsigned isa_from_5th(uint8_t b)
{
    if (b & 0x20) return EK_ISET_JAZELLE;
    if ((b & 0x30) == 0x10) return EK_ISET_T32;
    return EK_ISET_A32;
}

static void addr_isa_final(ek_ptm_parser *p)
{
    if (p->addr_isa == EK_ISET_UNKNOWN) p->addr_isa = p->pkt.isa;
    if (p->got_exc) {
        if (p->addr_isa == EK_ISET_TEE && !p->excep_alt_isa)
            p->addr_isa = EK_ISET_T32;
        else if (p->addr_isa == EK_ISET_T32 && p->excep_alt_isa)
            p->addr_isa = EK_ISET_TEE;
    }
    update_isa(&p->pkt, p->addr_isa);
}

static void pkt_branch(ek_ptm_parser *p)
{
    ek_ptm_packet *k = &p->pkt;
    int done = 0;
    uint8_t b = p->data[0];
    if (p->len == 1) {
        p->got_addr = 0;
        p->n_addr = 1;
        p->need_cc = p->cfg.cycle_acc;
        p->n_cc = 0;
        p->got_exc = 0;
        p->n_exc = 0;
        p->addr_isa = EK_ISET_UNKNOWN;
        if (!(b & 0x80)) {
            p->got_addr = 1;
            if (!p->need_cc) done = 1;
            p->got_exc = 1;
        }
    }
    while (!done && read_byte(p, &b)) {
        const unsigned idx = p->len - 1u;
        if (!p->got_addr) {
            if (idx < 4) {
                if (!(b & 0x80)) {
                    if (!(b & 0x40)) p->got_exc = 1;
                    p->got_addr = 1;
                    done = p->got_exc && !p->need_cc;
                }
            } else {
                if (!(b & 0x40)) p->got_exc = 1;
                p->got_addr = 1;
                done = p->got_exc && !p->need_cc;
                p->addr_isa = (uint8_t)isa_from_5th(b);
            }
            p->n_addr++;
        } else if (!p->got_exc) {
            if (p->n_exc == 0) {
                if (!(b & 0x80)) p->got_exc = 1;
                p->excep_alt_isa = (b & 0x40) ? 1 : 0;
            } else {
                p->got_exc = 1;
            }
            p->n_exc++;
            if (p->got_exc && !p->need_cc) done = 1;
        } else if (p->need_cc) {
            if (p->n_cc == 0)
                done = !(b & 0x40);
            else
                done = !(b & 0x80) || p->n_cc == 4;
            p->n_cc++;
        } else {
            bad_sequence(p);
            return;
        }
    }
    if (!done) return;
    addr_isa_final(p);
    unsigned bits;
    const uint32_t a = extract_address(p, 0, &bits);
    update_address(k, a, bits);
    if (p->n_exc > 0) {
        const uint8_t e1 = p->data[p->n_addr];
        uint16_t num = (e1 >> 1) & 0xF;
        k->ns = e1 & 1;
        k->ctx_updated = 1;
        if (p->n_exc > 1) {
            const uint8_t e2 = p->data[p->n_addr + 1];
            k->hyp = (e2 >> 5) & 1;
            num |= (uint16_t)((e2 & 0x1F) << 4);
        }
        k->exc_present = 1;
        k->exc_num = num;
    }
    if (p->need_cc) {
        uint32_t cc;
        if (!cycle_count(p, p->n_addr + p->n_exc, &cc)) {
            bad_sequence(p);
            return;
        }
        k->cycle_count = cc;
        k->cc_valid = 1;
    }
    p->state = S_SEND;
}

static void pkt_wp_update(ek_ptm_parser *p)
{
    int done = 0;
    uint8_t b;
    if (p->len == 1) {
        p->got_addr = 0;
        p->n_addr = 0;
        p->got_exc = 0;
        p->n_exc = 0;
        p->addr_isa = EK_ISET_UNKNOWN;
    }
    while (!done && read_byte(p, &b)) {
        const unsigned idx = p->len - 1u;
        if (!p->got_addr) {
            if (idx <= 4) { /* address bytes 1-4 (the header is byte 0) */
                if (!(b & 0x80)) {
                    p->got_addr = 1;
                    done = 1;
                    p->got_exc = 1;
                }
            } else {
                if (!(b & 0x40)) p->got_exc = 1;
                p->got_addr = 1;
                done = p->got_exc;
                p->addr_isa = (uint8_t)isa_from_5th(b);
            }
            p->n_addr++;
        } else if (!p->got_exc) {
            p->excep_alt_isa = (b & 0x40) ? 1 : 0;
            p->got_exc = 1;
            p->n_exc++;
            done = 1;
        }
    }
    if (!done) return;
    addr_isa_final(p);
    unsigned bits;
    const uint32_t a = extract_address(p, 1, &bits);
    update_address(&p->pkt, a, bits);
    p->state = S_SEND;
}

static void pkt_isync(ek_ptm_parser *p)
{
    ek_ptm_packet *k = &p->pkt;
    uint8_t b;
    if (p->len == 1) {
        p->n_cid = p->cfg.cid_bytes;
        p->got_cid = 0;
        p->need = (uint8_t)(6 + p->n_cid);
        p->need_cc = 0;
        p->got_cc = 0;
        p->n_cc = 0;
    }
    while (p->len < p->need && read_byte(p, &b)) {
        const unsigned idx = p->len - 1u;
        if (idx == 5) {
            const unsigned reason = (b >> 5) & 3;
            k->isync_reason = (uint8_t)reason;
            k->ns = (b >> 3) & 1;
            k->alt_isa = (b >> 2) & 1;
            k->hyp = (b >> 1) & 1;
            k->ctx_updated = 1;
            unsigned isa = EK_ISET_A32;
            if (p->data[1] & 1) isa = k->alt_isa ? EK_ISET_TEE : EK_ISET_T32;
            update_isa(k, isa);
            p->need_cc = reason != 0 ? p->cfg.cycle_acc : 0;
            p->got_cc = 0;
            p->need = (uint8_t)(p->need + (p->need_cc ? 1 : 0));
            p->n_cc = 0;
        } else if (idx > 5) {
            if (p->need_cc && !p->got_cc) {
                if (idx == 6)
                    p->got_cc = !(b & 0x40);
                else
                    p->got_cc = !(b & 0x80) || idx == 10;
                p->n_cc++;
                if (!p->got_cc) p->need++;
            } else if (p->n_cid > p->got_cid) {
                p->got_cid++;
            }
        }
    }
    if (p->len < p->need) return;
    const uint32_t a = (uint32_t)(p->data[1] & 0xFE) | (uint32_t)p->data[2] << 8 |
                       (uint32_t)p->data[3] << 16 | (uint32_t)p->data[4] << 24;
    update_address(k, a, 32);
    unsigned off = 6;
    if (p->need_cc) {
        uint32_t cc;
        if (!cycle_count(p, off, &cc)) {
            bad_sequence(p);
            return;
        }
        k->cycle_count = cc;
        k->cc_valid = 1;
        off += p->n_cc;
    }
    if (p->n_cid) {
        uint32_t cid = 0;
        for (unsigned i = 0; i < p->n_cid; i++) {
            if (off + i >= p->len) {
                bad_sequence(p);
                return;
            }
            cid |= (uint32_t)p->data[off + i] << (8 * i);
        }
        k->ctxt_id = cid;
        k->cid_updated = 1;
    }
    p->state = S_SEND;
}

static void pkt_ctxt_id(ek_ptm_parser *p)
{
    uint8_t b;
    while (p->len < 1u + p->cfg.cid_bytes)
        if (!read_byte(p, &b)) return;
    uint32_t cid = 0;
    for (unsigned i = 0; i < p->cfg.cid_bytes; i++)
        cid |= (uint32_t)p->data[1 + i] << (8 * i);
    p->pkt.ctxt_id = cid;
    p->pkt.cid_updated = 1;
    p->state = S_SEND;
}

static void pkt_vmid(ek_ptm_parser *p)
{
    uint8_t b;
    if (!read_byte(p, &b)) return;
    p->pkt.vmid = b;
    p->pkt.vmid_updated = 1;
    p->state = S_SEND;
}

static void atoms_from_header(ek_ptm_packet *k, uint8_t h)
{
    unsigned n;
    if ((h & 0xF0) == 0x80)
        n = (h & 0x08) ? 2 : 1;
    else if ((h & 0xF0) == 0x90)
        n = 3;
    else
        n = (h & 0xE0) == 0xA0 ? 4 : 5;
    k->atom_num = (uint8_t)n;
    /* header bits n..1 hold the atoms oldest first (bit 1 is the newest); 0 is an E atom */
    unsigned bits = 0;
    for (unsigned i = 0; i < n; i++)
        if (!(h & (2u << (n - 1 - i)))) bits |= 1u << i;
    k->atom_bits = (uint8_t)bits;
}

static void pkt_atom(ek_ptm_parser *p)
{
    ek_ptm_packet *k = &p->pkt;
    const uint8_t h = p->data[0];
    if (!p->cfg.cycle_acc) {
        atoms_from_header(k, h);
        p->state = S_SEND;
        return;
    }
    if (h & 0x40) {
        uint8_t b;
        for (;;) {
            if (!read_byte(p, &b)) return;
            if (!(b & 0x80) || p->len == 5) break;
        }
    }
    uint32_t cc = 0;
    cycle_count(p, 0, &cc);
    k->cycle_count = cc;
    k->cc_valid = 1;
    k->atom_num = 1;
    k->atom_bits = (h & 0x2) ? 0 : 1;
    p->state = S_SEND;
}

static void pkt_timestamp(ek_ptm_parser *p)
{
    ek_ptm_packet *k = &p->pkt;
    uint8_t b;
    const unsigned ts_max = p->cfg.ts_64 ? 10 : 8;
    if (p->len == 1) {
        p->got_addr = 0; /* here: all time stamp bytes read */
        p->need_cc = p->cfg.cycle_acc;
        p->n_cc = 0;
    }
    int done = 0;
    while (!done && read_byte(p, &b)) {
        if (!p->got_addr) {
            if (!(b & 0x80) || p->len == ts_max) {
                p->got_addr = 1;
                if (!p->need_cc) done = 1;
            }
        } else {
            const uint8_t more = p->n_cc == 0 ? 0x40 : 0x80;
            if (!(b & more)) done = 1;
            p->n_cc++;
            if (p->n_cc == 5) done = 1;
        }
    }
    if (!done) return;
    /* the value: 7 bits a byte; the last of a full-length packet has 6 (48-bit) or 8 bits */
    uint64_t ts = 0;
    unsigned bits = 0, shift = 0, i = 1;
    for (int more = 1; more; i++, shift += 7) {
        if (i >= p->len) {
            bad_sequence(p);
            return;
        }
        uint8_t v = p->data[i];
        if (p->cfg.ts_64 ? i < 9 : i < 7) {
            more = (v & 0x80) != 0;
            v &= 0x7F;
            bits += 7;
        } else {
            more = 0;
            if (!p->cfg.ts_64) v &= 0x3F;
            bits += p->cfg.ts_64 ? 8 : 6;
        }
        ts |= (uint64_t)v << shift;
    }
    if (p->need_cc) {
        uint32_t cc;
        if (!cycle_count(p, i, &cc)) {
            bad_sequence(p);
            return;
        }
        k->cycle_count = cc;
        k->cc_valid = 1;
    }
    const uint64_t mask = bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1;
    k->timestamp = (k->timestamp & ~mask) | (ts & mask);
    k->ts_update_bits = (uint8_t)bits;
    p->state = S_SEND;
}

/* A-Sync after its first zero: 1 found, 0 need more bytes, -1 not an A-Sync, -2 too many
 * zeros (drop some). */
static int find_async(ek_ptm_parser *p)
{
    uint8_t b;
    while (read_byte(p, &b)) {
        if (b == 0x00) {
            if (++p->async_0 >= ASYNC_PAD_0_LIMIT + ASYNC_REQ_0) return -2;
            continue;
        }
        if (b == 0x80 && p->async_0 >= 5) return 1;
        return -1;
    }
    return 0;
}

static void pkt_async(ek_ptm_parser *p)
{
    if (p->len == 1) p->async_0 = 1;
    const int r = find_async(p);
    if (r == 1)
        p->state = S_SEND;
    else if (r < 0)
        bad_sequence(p);
}

static void header(ek_ptm_parser *p, uint8_t h)
{
    ek_ptm_packet *k = &p->pkt;
    if (h & 1)
        k->type = EK_PTM_BRANCH_ADDRESS;
    else if ((h & 0x81) == 0x80)
        k->type = EK_PTM_ATOM;
    else
        switch (h) {
        case 0x00: k->type = EK_PTM_ASYNC; break;
        case 0x08: k->type = EK_PTM_ISYNC; break;
        case 0x72: k->type = EK_PTM_WP_UPDATE; break;
        case 0x0C: k->type = EK_PTM_TRIGGER; break;
        case 0x6E: k->type = EK_PTM_CONTEXT_ID; break;
        case 0x3C: k->type = EK_PTM_VMID; break;
        case 0x42:
        case 0x46: k->type = EK_PTM_TIMESTAMP; break;
        case 0x76: k->type = EK_PTM_EXCEPTION_RET; break;
        case 0x66: k->type = EK_PTM_IGNORE; break;
        default: k->type = EK_PTM_RESERVED; break;
        }
}

static void run_data(ek_ptm_parser *p)
{
    switch (p->pkt.type) {
    case EK_PTM_BRANCH_ADDRESS: pkt_branch(p); break;
    case EK_PTM_ATOM: pkt_atom(p); break;
    case EK_PTM_ASYNC: pkt_async(p); break;
    case EK_PTM_ISYNC: pkt_isync(p); break;
    case EK_PTM_WP_UPDATE: pkt_wp_update(p); break;
    case EK_PTM_CONTEXT_ID: pkt_ctxt_id(p); break;
    case EK_PTM_VMID: pkt_vmid(p); break;
    case EK_PTM_TIMESTAMP: pkt_timestamp(p); break;
    default: p->state = S_SEND; break; /* trigger, exception return, ignore, reserved */
    }
}

/* ---- synchronisation search ---------------------------------------------------------------- */

/* The search reports unsynchronised bytes as OpenCSD's does: at most 16 at a time and at the
 * end of each block. With EK_PTM_OCSD_UNSYNC (a quirk kept for identical listings) the zeros of
 * an A-Sync candidate that started in the previous block are listed once more before the
 * block's reports and counted again, as OpenCSD counts them; without it every byte is
 * reported once, at its own index (held zeros at the index of the first of them, the rest as
 * fed). */
static int ocsd_unsync(const ek_ptm_parser *p)
{
    return (p->cfg.compat & EK_PTM_OCSD_UNSYNC) != 0;
}

/* Without EK_PTM_OCSD_UNSYNC: the index of the first unsynchronised byte not yet reported. */
static uint64_t ws_next_index(const ek_ptm_parser *p)
{
    return p->ws_held ? p->ws_held_index : p->in_index + p->ws_scan_start;
}

static void ws_queue(ek_ptm_parser *p, uint64_t index, const uint8_t *bytes, unsigned n, int zeros,
                     int decode)
{
    if (p->ws_pending >= 3) return;
    unsigned slot = (p->ws_head + p->ws_pending) % 3;
    p->ws[slot].index = index;
    p->ws[slot].n = (uint8_t)(n > EK_PTM_MAX_PKT ? EK_PTM_MAX_PKT : n);
    p->ws[slot].zeros = (uint8_t)zeros;
    p->ws[slot].decode = (uint8_t)decode;
    for (unsigned i = 0; i < p->ws[slot].n; i++)
        p->ws[slot].bytes[i] = zeros ? 0 : bytes[i];
    p->ws_pending++;
}

static const ek_ptm_packet *ws_pop(ek_ptm_parser *p)
{
    const unsigned slot = p->ws_head;
    p->ws_head = (uint8_t)((p->ws_head + 1) % 3);
    p->ws_pending--;
    p->out = p->pkt;
    p->out.type = EK_PTM_NOTSYNC;
    p->out.index = p->ws[slot].index;
    p->out.size = p->ws[slot].n;
    memcpy(p->out.raw, p->ws[slot].bytes, p->ws[slot].n);
    p->out.flags = p->ws[slot].decode ? 0 : EK_PTM_PF_NOTSYNC_MORE;
    return &p->out;
}

/* Scan for an A-Sync; stops at the end of the block, on an A-Sync (state S_SEND) or when
 * reports are queued. The scan state lives in the parser between calls. */
static void wait_sync(ek_ptm_parser *p)
{
    for (;;) {
        int send = 0, more = 1, have = 0;
        if (p->wait_so_pkt) {
            const int r = find_async(p);
            if (r == 1) {
                p->state = S_SEND;
                p->wait_so_pkt = 0;
                send = have = 1;
                more = 0;
            } else if (r == -2) {
                p->ws_unsynced += ASYNC_PAD_0_LIMIT;
                const unsigned keep = p->len > ASYNC_PAD_0_LIMIT ? p->len - ASYNC_PAD_0_LIMIT : 0;
                memmove(p->data, p->data + ASYNC_PAD_0_LIMIT, keep);
                p->len = (uint8_t)keep;
                p->held_index += ASYNC_PAD_0_LIMIT;
                if (ocsd_unsync(p)) {
                    /* as OpenCSD: the zeros kept are no candidate any more (a byte after them
                     * is counted before them, and an A-Sync after 16 or more zeros can be
                     * missed) */
                    p->wait_so_pkt = 0;
                } else {
                    /* the zeros kept still start a candidate: an A-Sync is five or more zeros
                     * and 0x80 (IHI 0035), and they are reported in stream order */
                    p->async_0 = (uint8_t)keep;
                }
            } else if (r == -1) {
                /* the candidate's zeros and the byte that ended it are unsynchronised; with
                 * EK_PTM_OCSD_UNSYNC, as OpenCSD, zeros held from the previous block count a
                 * second time, so the report reads past the block and its index runs ahead */
                p->ws_unsynced += p->len;
                p->wait_so_pkt = 0;
                p->len = 0;
            } else {
                send = 1;
                more = 0;
            }
        } else if (p->in_used < p->in_len) {
            const uint8_t b = p->in[p->in_used++];
            if (b == 0x00) {
                p->wait_so_pkt = 1;
                if (p->len == 0) p->held_index = p->in_index + p->in_used - 1;
                if (p->len < EK_PTM_MAX_PKT) p->data[p->len++] = 0;
                p->async_0 = 1;
            } else {
                p->ws_unsynced++;
            }
        }
        if (p->ws_unsynced >= UNSYNC_PKT_MAX) send = 1;
        if (p->in_used == p->in_len) {
            send = 1;
            more = 0;
        }
        if (send && p->ws_unsynced > 0) {
            uint8_t tmp[EK_PTM_MAX_PKT];
            const unsigned n = p->ws_unsynced > EK_PTM_MAX_PKT ? EK_PTM_MAX_PKT : p->ws_unsynced;
            if (ocsd_unsync(p)) {
                if (p->ws_on_entry) { /* the held zeros, once (OpenCSD repeats them per report) */
                    ws_queue(p, p->ws_index, NULL, p->ws_on_entry, 1, 0);
                    p->ws_index += p->ws_on_entry;
                    p->ws_on_entry = 0;
                }
                for (unsigned i = 0; i < n; i++)
                    tmp[i] = p->ws_scan_start + i < p->in_len ? p->in[p->ws_scan_start + i]
                             : p->ws_scan_start + i - p->in_len < p->tail_len
                                 ? p->tail[p->ws_scan_start + i - p->in_len]
                                 : 0;
                ws_queue(p, p->ws_index, tmp, p->ws_unsynced, 0, !p->sent_notsync);
                p->ws_scan_start += p->ws_unsynced;
                p->ws_index += p->ws_unsynced;
            } else {
                /* held zeros first (they were read first), then the block's bytes */
                const unsigned h = p->ws_unsynced < p->ws_held ? p->ws_unsynced : p->ws_held;
                for (unsigned i = 0; i < n; i++) {
                    const size_t at = p->ws_scan_start + i - h;
                    tmp[i] = i < h || at >= p->in_len ? 0 : p->in[at];
                }
                ws_queue(p, ws_next_index(p), tmp, p->ws_unsynced, 0, !p->sent_notsync);
                p->ws_held_index += h;
                p->ws_held -= h;
                p->ws_scan_start += p->ws_unsynced - h;
            }
            p->sent_notsync = 1;
            p->ws_unsynced = 0;
        }
        if (have) {
            p->pkt.type = EK_PTM_ASYNC;
            p->pkt.index = ocsd_unsync(p) ? p->ws_index : ws_next_index(p);
        }
        if (!more) {
            p->ws_active = 0;
            return;
        }
        if (p->ws_pending) return;
    }
}

static const ek_ptm_packet *emit(ek_ptm_parser *p)
{
    p->out = p->pkt;
    p->out.size = p->len;
    memcpy(p->out.raw, p->data, p->len);
    if (p->out.type >= EK_PTM_BAD_SEQUENCE || p->out.type == EK_PTM_INCOMPLETE_EOT)
        p->out.flags |= EK_PTM_PF_ERROR;
    p->len = 0;
    clear_pkt(&p->pkt);
    p->state = S_HDR;
    return &p->out;
}

int ek_ptm_next(ek_ptm_parser *p, const ek_ptm_packet **pkt)
{
    for (;;) {
        if (p->ws_pending) {
            *pkt = ws_pop(p);
            return 1;
        }
        if (!(p->in_used < p->in_len || p->state == S_SEND)) {
            if (p->eot_done == 1) {
                p->eot_done = 2;
                if (p->len > 0) {
                    if (p->state == S_WAIT_SYNC)
                        p->pkt.index = ocsd_unsync(p) ? p->ws_index : p->held_index;
                    p->pkt.err_type = p->pkt.type;
                    p->pkt.type = EK_PTM_INCOMPLETE_EOT;
                    *pkt = emit(p);
                    return 1;
                }
            }
            return 0;
        }
        switch (p->state) {
        case S_WAIT_SYNC:
            if (!p->ws_active) { /* a new scan of this block */
                if (!p->wait_so_pkt) {
                    p->ws_index = p->in_index + p->in_used;
                    p->pkt.type = EK_PTM_NOTSYNC;
                }
                p->ws_unsynced = 0;
                p->ws_scan_start = p->in_used;
                p->ws_on_entry = ocsd_unsync(p) ? p->len : 0;
                p->ws_held = ocsd_unsync(p) || !p->wait_so_pkt ? 0 : p->len;
                p->ws_held_index = p->held_index;
                p->ws_active = 1;
            }
            wait_sync(p);
            break;
        case S_HDR: {
            p->pkt.index = p->in_index + p->in_used;
            uint8_t h;
            read_byte(p, &h);
            header(p, h);
            p->state = S_DATA;
        }
            /* fall through */
        case S_DATA: run_data(p); break;
        default: *pkt = emit(p); return 1;
        }
    }
}

void ek_ptm_eot(ek_ptm_parser *p)
{
    p->in_len = p->in_used = 0;
    if (!p->eot_done) p->eot_done = 1;
}

static const char *const names[EK_PTM_TYPE_COUNT] = {
    "NOTSYNC",   "INCOMPLETE_EOT", "NO_ERROR",     "BRANCH_ADDRESS", "ASYNC", "ISYNC",
    "TRIGGER",   "WP_UPDATE",      "IGNORE",       "CTXTID",         "VMID",  "ATOM",
    "TIMESTAMP", "ERET",           "BAD_SEQUENCE", "RESERVED"};

const char *ek_ptm_type_name(unsigned type)
{
    return type < EK_PTM_TYPE_COUNT ? names[type] : "UNKNOWN";
}
