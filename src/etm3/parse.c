/* ETMv3 configuration and packet parser. See etmkit/etm3.h. */
#include <string.h>

#include "etmkit/etm3.h"
#include "etmkit/etmkit.h"

int ek_etm3_config_init(ek_etm3_config *cfg, const ek_etm3_regs *regs, ek_arch arch,
                        ek_arch_profile profile)
{
    static const uint8_t cid[4] = {0, 1, 2, 4};
    memset(cfg, 0, sizeof *cfg);
    cfg->regs = *regs;
    cfg->arch = arch;
    cfg->profile = profile;
    const uint32_t cr = regs->etmcr;
    cfg->trace_id = (uint8_t)(regs->etmtraceidr & 0x7F);
    cfg->minor = (uint8_t)((regs->etmidr >> 4) & 0xF);
    cfg->cid_bytes = cid[(cr >> 14) & 3];
    cfg->cycle_acc = (cr >> 12) & 1;
    cfg->ts_64 = (regs->etmccer >> 29) & 1;
    cfg->alt_branch = (regs->etmidr & EK_ETMIDR_ALT_BRANCH) && cfg->minor >= 4;
    cfg->virt_ext = (regs->etmccer & EK_ETMCCER_VIRT_EXT) != 0;
    cfg->data_value = (cr & EK_ETMCR_DATA_VALUE) != 0;
    cfg->data_addr = (cr & EK_ETMCR_DATA_ADDR) != 0;
    cfg->data_only = (cr & EK_ETMCR_DATA_ONLY) != 0;
    cfg->v7m = profile == EK_PROFILE_M;
    return 0;
}

int ek_etm3_config_from_source(ek_etm3_config *cfg, const ek_source_config *src)
{
    if (src->protocol != EK_PROTO_ETMV3) return EK_ERR_UNSUPPORTED;
    ek_etm3_config_init(cfg, &src->regs.etm3, src->arch, src->profile);
    cfg->trace_id = src->trace_id;
    return 0;
}

enum { S_WAIT_SYNC = 0, S_HDR, S_DATA, S_SEND };

#define DATA_ADDR_FLAG 0x20

static void clear_pkt(ek_etm3_packet *k)
{
    k->addr_pkt_bits = 0;
    k->prev_isa = k->isa;
    k->exc_present = 0;
    k->atom_num = 0;
    k->atom_bits = 0;
    k->cycle_count = 0;
    k->ctx_updated = k->cid_updated = k->vmid_updated = 0;
    k->ooo_tag = 0;
    k->data_value = 0;
    k->update_daddr = k->update_be = k->update_dval = 0;
    k->ts_update_bits = 0;
    k->isync_has_cc = k->isync_lsip = k->isync_no_addr = 0;
    k->err_type = EK_ETM3_NOTSYNC;
    k->flags = 0;
}

static void init_packet(ek_etm3_parser *p)
{
    p->expected = 0;
    p->br_needs_exc = 0;
    p->isync_got_cc = 0;
    p->isync_lsip = 0;
    p->isync_info_idx = 0;
    p->exp_daddr = 0;
    p->found_daddr = 0;
    p->len = 0;
    p->idx = 0;
    clear_pkt(&p->pkt);
}

void ek_etm3_parser_reset(ek_etm3_parser *p)
{
    const ek_etm3_config cfg = p->cfg;
    memset(p, 0, sizeof *p);
    p->cfg = cfg;
    p->state = S_WAIT_SYNC;
    p->pkt.type = EK_ETM3_NOTSYNC;
    p->pkt.isa = p->pkt.prev_isa = EK_ISET_UNKNOWN;
    init_packet(p);
}

void ek_etm3_parser_init(ek_etm3_parser *p, const ek_etm3_config *cfg)
{
    p->cfg = *cfg;
    ek_etm3_parser_reset(p);
}

void ek_etm3_feed(ek_etm3_parser *p, const uint8_t *data, size_t len, uint64_t index)
{
    p->in = data;
    p->in_len = len;
    p->in_used = 0;
    p->in_index = index;
}

static void push(ek_etm3_parser *p, uint8_t b)
{
    if (p->len < EK_ETM3_MAX_PKT) p->data[p->len++] = b;
}

static void send(ek_etm3_parser *p)
{
    p->state = S_SEND;
}

/* Report the first n collected bytes as a packet of its own before going on. */
static void send_part(ek_etm3_parser *p, unsigned n, unsigned next_state, unsigned next_type)
{
    if (n > p->len) n = p->len;
    memcpy(p->part, p->data, n);
    p->part_len = (uint8_t)n;
    memmove(p->data, p->data + n, p->len - n);
    p->len = (uint8_t)(p->len - n);
    p->send_part = 1;
    p->post_state = (uint8_t)next_state;
    p->post_type = (uint8_t)next_type;
}

static void set_err(ek_etm3_packet *k, unsigned type)
{
    k->err_type = k->type;
    k->type = (uint8_t)type;
}

/* A malformed packet: report what there is as BAD_SEQUENCE. */
static int malformed(ek_etm3_parser *p)
{
    set_err(&p->pkt, EK_ETM3_BAD_SEQUENCE);
    send(p);
    return -1;
}

static void update_address(ek_etm3_packet *k, uint32_t v, unsigned bits)
{
    const uint64_t mask = bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1;
    k->addr = (uint32_t)((k->addr & ~mask) | (v & mask));
    k->addr_pkt_bits = (uint8_t)bits;
    if (bits > k->addr_valid_bits) k->addr_valid_bits = (uint8_t)bits;
}

static void update_data_address(ek_etm3_packet *k, uint32_t v, unsigned bits)
{
    const uint32_t mask = bits >= 32 ? 0xFFFFFFFFu : (1u << bits) - 1;
    k->data_addr = (k->data_addr & ~mask) | (v & mask);
    k->daddr_pkt_bits = (uint8_t)bits;
    if (bits > k->daddr_valid_bits) k->daddr_valid_bits = (uint8_t)bits;
    k->update_daddr = 1;
}

static int next_byte(ek_etm3_parser *p, uint8_t *b)
{
    if (p->idx >= p->len) return 0;
    *b = p->data[p->idx++];
    return 1;
}

/* Exception information bytes after a branch address. */
static int exception_data(ek_etm3_parser *p)
{
    ek_etm3_packet *k = &p->pkt;
    uint8_t b;
    if (!next_byte(p, &b)) return malformed(p);
    unsigned num = (b >> 1) & 0xF, resume = 0;
    k->ns = b & 1;
    k->ctx_updated = 1;
    const unsigned cancel = (b >> 5) & 1;
    k->alt_isa = (b >> 6) & 1;
    if (b & 0x80) {
        if (!next_byte(p, &b)) return malformed(p);
        int byte2 = 0;
        if (b & 0x40) {
            byte2 = 1;
        } else {
            if (p->cfg.v7m) num |= (unsigned)(b & 0x1F) << 4;
            k->hyp = (b >> 5) & 1;
            if (b & 0x80) {
                if (!next_byte(p, &b)) return malformed(p);
                byte2 = 1;
            }
        }
        if (byte2) resume = b & 0xF;
    }
    k->exc_num = (uint16_t)(p->cfg.v7m ? num & 0x1FF : num & 0xF);
    k->exc_cancel = (uint8_t)cancel;
    k->exc_cm = p->cfg.v7m;
    k->exc_resume = (uint8_t)resume;
    k->exc_present = 1;
    return 0;
}

/* Branch address field at p->idx (also the I-Sync LSiP address). Returns 0, or -1 when the
 * packet is malformed (already marked). */
static int branch_address(ek_etm3_parser *p, uint32_t *value, unsigned *nbits)
{
    static const unsigned shift_of[4] = {2, 1, 1, 0}, bits5[4] = {3, 4, 4, 5};
    static const uint8_t mask5[4] = {0x7, 0xF, 0xF, 0x1F};
    ek_etm3_packet *k = &p->pkt;
    uint32_t v = 0;
    unsigned bitcount = 0, count = 0;
    int more = 1;
    uint8_t b = 0;
    while (more && count < 4) {
        if (!next_byte(p, &b)) return malformed(p);
        more = (b & 0x80) != 0;
        const unsigned shift = bitcount;
        unsigned part;
        if (count == 0) {
            part = (b & 0x7E) >> 1;
            bitcount += 6;
        } else if (p->cfg.alt_branch && !more) {
            if (b & 0x40) {
                if (exception_data(p)) return -1;
            }
            part = b & 0x3F;
            bitcount += 6;
        } else {
            part = b & 0x7F;
            bitcount += 7;
        }
        v |= (uint32_t)part << shift;
        count++;
    }
    int byte5 = 0;
    if (more) {
        if (!next_byte(p, &b)) return malformed(p);
        if (b & 0x80) { /* original (deprecated) encoding: ARM state exception */
            const unsigned n = (b >> 3) & 7;
            static const uint8_t map[8] = {8, 14, 6, 6, 5, 15, 4, 1}; /* as numbered below */
            k->prev_isa = k->isa;
            k->isa = EK_ISET_A32;
            k->exc_present = 1;
            k->exc_num = n;
            k->exc_cancel = (b & 0x40) ? 1 : 0;
            k->exc_cm = p->cfg.v7m;
            (void)map;
        } else {
            if (b & 0x40) {
                if (exception_data(p)) return -1;
            }
            unsigned isa;
            if ((b & 0xB8) == 0x08)
                isa = EK_ISET_A32;
            else if ((b & 0xB0) == 0x10)
                isa = k->alt_isa ? EK_ISET_TEE : EK_ISET_T32;
            else if ((b & 0xA0) == 0x20)
                isa = EK_ISET_JAZELLE;
            else
                return malformed(p);
            k->prev_isa = k->isa;
            k->isa = (uint8_t)isa;
        }
        byte5 = 1;
    }
    unsigned ix = 0;
    switch (k->isa) {
    case EK_ISET_T32: ix = 1; break;
    case EK_ISET_TEE: ix = 2; break;
    case EK_ISET_JAZELLE: ix = 3; break;
    default: break;
    }
    if (byte5) {
        v |= (uint32_t)(b & mask5[ix]) << bitcount;
        bitcount += bits5[ix];
    }
    v <<= shift_of[ix];
    bitcount += shift_of[ix];
    *value = v;
    *nbits = bitcount;
    return 0;
}

static void on_branch(ek_etm3_parser *p)
{
    uint32_t v;
    unsigned bits;
    p->idx = 0;
    if (branch_address(p, &v, &bits)) return;
    update_address(&p->pkt, v, bits);
    send(p);
}

static uint32_t cycle_count_at(ek_etm3_parser *p, int *ok)
{
    uint32_t cc = 0;
    uint8_t mask = 0x7F;
    for (unsigned i = 0;; i++) {
        uint8_t b;
        if (!next_byte(p, &b)) {
            *ok = 0;
            return cc;
        }
        cc |= (uint32_t)(b & mask) << (7 * i);
        if (!(b & 0x80) || i == 4) break;
        if (i == 3) mask = 0x0F;
    }
    *ok = 1;
    return cc;
}

static void on_isync(ek_etm3_parser *p)
{
    ek_etm3_packet *k = &p->pkt;
    int ok = 1;
    p->idx = 1;
    if (p->isync_got_cc) {
        k->cycle_count = cycle_count_at(p, &ok);
        if (!ok) {
            malformed(p);
            return;
        }
        k->isync_has_cc = 1;
    }
    if (p->cfg.cid_bytes) {
        uint32_t cid = 0;
        for (unsigned i = 0; i < p->cfg.cid_bytes; i++) {
            uint8_t b;
            if (!next_byte(p, &b)) {
                malformed(p);
                return;
            }
            cid |= (uint32_t)b << (8 * i);
        }
        k->ctxt_id = cid;
        k->cid_updated = 1;
    }
    uint8_t info;
    if (!next_byte(p, &info)) {
        malformed(p);
        return;
    }
    k->isync_reason = (info >> 5) & 3;
    const unsigned j = (info >> 4) & 1;
    const unsigned alt = p->cfg.minor >= 3 ? (info >> 2) & 1 : 0;
    k->ns = (info >> 3) & 1;
    k->ctx_updated = 1;
    if (p->cfg.virt_ext) k->hyp = (info >> 1) & 1;
    if (!p->cfg.data_only) {
        uint32_t a = 0;
        for (unsigned i = 0; i < 4; i++) {
            uint8_t b;
            if (!next_byte(p, &b)) {
                malformed(p);
                return;
            }
            a |= (uint32_t)b << (8 * i);
        }
        const unsigned t = a & 1;
        a &= ~1u;
        update_address(k, a, 32);
        unsigned isa = EK_ISET_A32;
        if (j)
            isa = EK_ISET_JAZELLE;
        else if (t)
            isa = alt ? EK_ISET_TEE : EK_ISET_T32;
        k->prev_isa = k->isa;
        k->isa = (uint8_t)isa;
        if (p->isync_lsip) {
            uint32_t v;
            unsigned bits;
            if (branch_address(p, &v, &bits)) return;
            update_data_address(k, a, 32);
            update_data_address(k, v, bits);
            k->isync_lsip = 1;
        }
    } else {
        k->isync_no_addr = 1;
    }
    send(p);
}

static uint32_t data_value(ek_etm3_parser *p, unsigned size_code, int *ok)
{
    static const unsigned nbytes[4] = {0, 1, 2, 4};
    uint32_t v = 0;
    for (unsigned i = 0; i < nbytes[size_code & 3]; i++) {
        uint8_t b;
        if (!next_byte(p, &b)) {
            *ok = 0;
            return v;
        }
        v |= (uint32_t)b << (8 * i);
    }
    *ok = 1;
    return v;
}

static int data_address(ek_etm3_parser *p)
{
    uint32_t a = 0;
    unsigned bits = 0;
    for (unsigned i = 0;; i++) {
        uint8_t b;
        if (!next_byte(p, &b)) return malformed(p);
        if (i == 4) {
            a |= (uint32_t)(b & 0x0F) << 28;
            bits += 4;
            p->pkt.update_be = 1;
            p->pkt.data_be = (b >> 4) & 1;
            break;
        }
        a |= (uint32_t)(b & 0x7F) << (7 * i);
        bits += 7;
        if (!(b & 0x80)) break;
    }
    update_data_address(&p->pkt, a, bits);
    return 0;
}

/* P-header atoms: non cycle-accurate formats 1 and 2; cycle-accurate formats 1 to 4. */
static int atoms_from_header(ek_etm3_packet *k, uint8_t h, int ca)
{
    unsigned e, n;
    if (!ca) {
        if ((h & 3) == 0) {
            e = (h >> 2) & 0xF;
            n = (h & 0x40) ? 1 : 0;
            k->atom_num = (uint8_t)(e + n);
            k->atom_bits = (1u << e) - 1;
            k->p_hdr_fmt = 1;
        } else if ((h & 3) == 2) {
            k->atom_num = 2;
            k->p_hdr_fmt = 2;
            k->atom_bits = ((h & 0x8) ? 0 : 1) | ((h & 0x4) ? 0 : 2);
        } else {
            return 0;
        }
        return 1;
    }
    switch (h & 0xA3) {
    case 0x80:
        k->p_hdr_fmt = 1;
        e = (h >> 2) & 7;
        n = (h & 0x40) ? 1 : 0;
        k->atom_num = (uint8_t)(e + n);
        if (!k->atom_num) return 0; /* 1000 0000: reserved */
        k->atom_bits = (1u << e) - 1;
        k->cycle_count = e + n;
        return 1;
    case 0x82:
        if (h & 0x10) {
            k->p_hdr_fmt = 4;
            k->atom_num = 1;
            k->cycle_count = 0;
            k->atom_bits = (h & 0x4) ? 0 : 1;
        } else {
            k->p_hdr_fmt = 2;
            k->atom_num = 2;
            k->cycle_count = 1;
            k->atom_bits = ((h & 0x8) ? 0 : 1) | ((h & 0x4) ? 0 : 2);
        }
        return 1;
    case 0xA0:
        k->p_hdr_fmt = 3;
        k->cycle_count = ((h >> 2) & 7) + 1u;
        k->atom_num = (h & 0x40) ? 1 : 0;
        k->atom_bits = k->atom_num;
        return 1;
    default: return 0;
    }
}

/* A data packet while data trace is off. OpenCSD 1.8.0 marks the error before it sets the
 * packet's type, so its err_type is the previous packet's (EK_ETM3_OCSD_ERR_TYPE). */
static void bad_mode(ek_etm3_parser *p, uint8_t prev_type)
{
    set_err(&p->pkt, EK_ETM3_BAD_TRACEMODE);
    if (p->cfg.compat & EK_ETM3_OCSD_ERR_TYPE) p->pkt.err_type = prev_type;
}

static void header(ek_etm3_parser *p, uint8_t h)
{
    ek_etm3_packet *k = &p->pkt;
    const uint8_t prev = k->type;
    init_packet(p);
    push(p, h);
    p->state = S_DATA;
    if (h & 1) {
        k->type = EK_ETM3_BRANCH_ADDRESS;
        if (!(h & 0x80)) on_branch(p);
    } else if ((h & 0x81) == 0x80) {
        k->type = EK_ETM3_P_HDR;
        atoms_from_header(k, h, p->cfg.cycle_acc); /* an invalid one is listed as it is */
        send(p);
    } else if ((h & 0xF3) == 0x00) {
        switch (h) {
        case 0x00: k->type = EK_ETM3_ASYNC; break;
        case 0x04: k->type = EK_ETM3_CYCLE_COUNT; break;
        case 0x08: k->type = EK_ETM3_ISYNC; break;
        default:
            k->type = EK_ETM3_TRIGGER;
            send(p);
            break;
        }
    } else if ((h & 0x03) == 0x00) {
        if ((h & 0x93) == 0x00) { /* out-of-order data */
            k->type = EK_ETM3_OOO_DATA;
            if (!p->cfg.data_value) {
                bad_mode(p, prev);
                send(p);
                return;
            }
            const unsigned size = (h >> 2) & 3;
            if (size == 0) {
                k->ooo_tag = (h >> 5) & 3;
                k->data_value = 0;
                k->update_dval = 1;
                send(p);
            } else {
                p->expected = (uint8_t)(1 + (size == 3 ? 4 : size));
            }
        } else if (h == 0x70) {
            k->type = EK_ETM3_ISYNC_CYCLE;
        } else if (h == 0x50) {
            k->type = EK_ETM3_STORE_FAIL;
            if (!p->cfg.data_value) bad_mode(p, prev);
            send(p);
        } else if ((h & 0xD3) == 0x50) {
            k->type = EK_ETM3_OOO_ADDR_PLC;
            if (!p->cfg.data_value && !p->cfg.data_addr) {
                set_err(k, EK_ETM3_BAD_TRACEMODE);
                send(p);
                return;
            }
            p->exp_daddr = (h & DATA_ADDR_FLAG) && p->cfg.data_addr;
            k->ooo_tag = (h >> 2) & 3;
            if (!p->exp_daddr) send(p);
        } else if (h == 0x3C) {
            k->type = EK_ETM3_VMID;
        } else {
            k->type = EK_ETM3_RESERVED;
            send(p);
        }
    } else if ((h & 0xD3) == 0x02) {
        k->type = EK_ETM3_NORM_DATA;
        if (!p->cfg.data_value && !p->cfg.data_addr) {
            bad_mode(p, prev);
            send(p);
            return;
        }
        const unsigned size = (h >> 2) & 3;
        p->exp_daddr = (h & DATA_ADDR_FLAG) && p->cfg.data_addr;
        p->expected = (uint8_t)(1 + (size == 3 ? 4 : size));
        if (!p->exp_daddr && p->expected == 1) {
            k->data_value = 0;
            k->update_dval = 1;
            send(p);
        }
    } else if (h == 0x62) {
        k->type = EK_ETM3_DATA_SUPPRESSED;
        if (!p->cfg.data_value && !p->cfg.data_addr) bad_mode(p, prev);
        send(p);
    } else if ((h & 0xEF) == 0x6A) {
        k->type = EK_ETM3_VAL_NOT_TRACED;
        if (!p->cfg.data_value && !p->cfg.data_addr) {
            bad_mode(p, prev);
            send(p);
            return;
        }
        p->exp_daddr = (h & DATA_ADDR_FLAG) && p->cfg.data_addr;
        if (!p->exp_daddr) send(p);
    } else if (h == 0x66) {
        k->type = EK_ETM3_IGNORE;
        send(p);
    } else if (h == 0x6E) {
        k->type = EK_ETM3_CONTEXT_ID;
        p->expected = (uint8_t)(1 + p->cfg.cid_bytes);
        if (p->expected == 1) send(p);
    } else if (h == 0x76) {
        k->type = EK_ETM3_EXCEPTION_EXIT;
        send(p);
    } else if (h == 0x7E) {
        k->type = EK_ETM3_EXCEPTION_ENTRY;
        send(p);
    } else if ((h & 0xFB) == 0x42) {
        k->type = EK_ETM3_TIMESTAMP;
    } else {
        k->type = EK_ETM3_RESERVED;
        send(p);
    }
}

static void payload(ek_etm3_parser *p, uint8_t b)
{
    ek_etm3_packet *k = &p->pkt;
    push(p, b);
    const int top = (b & 0x80) != 0;
    int ok = 1;
    switch (k->type) {
    case EK_ETM3_BRANCH_ADDRESS: {
        int done = 0;
        if (p->cfg.alt_branch) {
            if (!top) {
                if (!p->br_needs_exc && (b & 0xC0) == 0x40)
                    p->br_needs_exc = 1;
                else
                    done = 1;
            }
        } else if (p->len == 5) {
            if ((b & 0xC0) == 0x40)
                p->br_needs_exc = 1; /* exception bytes follow */
            else
                done = 1;
        } else if (!top) {
            done = 1;
        }
        if (p->len >= EK_ETM3_MAX_PKT) done = 1;
        if (done) on_branch(p);
        break;
    }
    case EK_ETM3_ASYNC:
        if (b == 0x00) {
            if (p->len > 5) { /* an extra zero: report it, keep looking for the 0x80 */
                set_err(k, EK_ETM3_BAD_SEQUENCE);
                send_part(p, 1, S_DATA, EK_ETM3_ASYNC);
                send(p);
            }
        } else if (b == 0x80 && p->len == 6) {
            send(p);
            p->synced = 1;
        } else {
            set_err(k, EK_ETM3_BAD_SEQUENCE);
            p->in_used--; /* the byte starts the next packet */
            p->len--;
            send(p);
        }
        break;
    case EK_ETM3_CYCLE_COUNT:
        if (!top || p->len >= 6) {
            p->idx = 1;
            k->cycle_count = cycle_count_at(p, &ok);
            send(p);
        }
        break;
    case EK_ETM3_ISYNC_CYCLE:
        if (!p->isync_got_cc) {
            if (!top || p->len >= 6) p->isync_got_cc = 1;
            break;
        }
        /* fall through */ /* the first byte after the cycle count */
    case EK_ETM3_ISYNC:
        if (p->expected == 0) {
            const unsigned cc_bytes = p->len - 2u;
            p->expected = (uint8_t)(p->cfg.data_only ? 2u + p->cfg.cid_bytes
                                                     : cc_bytes + 6u + p->cfg.cid_bytes);
            p->isync_info_idx = (uint8_t)(1 + cc_bytes + p->cfg.cid_bytes);
        }
        if (p->len - 1u == p->isync_info_idx)
            p->isync_lsip = (p->data[p->isync_info_idx] & 0x80) != 0;
        if (p->len >= p->expected) {
            if (!p->isync_lsip || !top || p->len >= EK_ETM3_MAX_PKT) on_isync(p);
        }
        break;
    case EK_ETM3_NORM_DATA:
        if (p->exp_daddr && !p->found_daddr) {
            if (top && p->len < EK_ETM3_MAX_PKT) break;
            p->found_daddr = 1;
            p->expected = (uint8_t)(p->expected + p->len - 1);
        }
        if (p->len >= p->expected) {
            p->idx = 1;
            if (p->exp_daddr && data_address(p)) break;
            k->data_value = data_value(p, (p->data[0] >> 2) & 3, &ok);
            k->update_dval = 1;
            if (!ok) {
                malformed(p);
                break;
            }
            send(p);
        }
        break;
    case EK_ETM3_OOO_DATA:
        if (p->len >= p->expected) {
            p->idx = 1;
            k->data_value = data_value(p, (p->data[0] >> 2) & 3, &ok);
            k->update_dval = 1;
            k->ooo_tag = (p->data[0] >> 5) & 3;
            send(p);
        }
        break;
    case EK_ETM3_VAL_NOT_TRACED:
    case EK_ETM3_OOO_ADDR_PLC:
        if (p->exp_daddr && (!top || p->len >= 6)) {
            p->idx = 1;
            if (!data_address(p)) send(p);
        }
        break;
    case EK_ETM3_CONTEXT_ID:
        if (p->len >= p->expected) {
            uint32_t cid = 0;
            for (unsigned i = 1; i < p->len; i++)
                cid |= (uint32_t)p->data[i] << (8 * (i - 1));
            k->ctxt_id = cid;
            k->cid_updated = 1;
            send(p);
        }
        break;
    case EK_ETM3_TIMESTAMP: {
        /* IHI 0014: bytes 1 to max-1 have a continuation bit, byte max (the 7th: 6 bits of a
         * 48-bit value, the 9th: 8 bits of a 64-bit one) ends the packet. OpenCSD 1.8.0 ends
         * it only at a byte with bit 7 clear (EK_ETM3_OCSD_TS_CONT). */
        const unsigned max = p->cfg.ts_64 ? 9 : 7;
        const int end = (p->cfg.compat & EK_ETM3_OCSD_TS_CONT) ? !top || p->len >= EK_ETM3_MAX_PKT
                                                               : !top || p->len - 1u >= max;
        if (end) {
            uint64_t ts = 0;
            unsigned bits = 0;
            for (unsigned i = 1; i < p->len && i <= max; i++) {
                const int last = i == max;
                const uint8_t m = last ? (p->cfg.ts_64 ? 0xFF : 0x3F) : 0x7F;
                ts |= (uint64_t)(p->data[i] & m) << (7 * (i - 1));
                bits += last ? (p->cfg.ts_64 ? 8 : 6) : 7;
            }
            const uint64_t mask = bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1;
            k->timestamp = (k->timestamp & ~mask) | (ts & mask);
            k->ts_update_bits = (uint8_t)bits;
            send(p);
        }
        break;
    }
    case EK_ETM3_VMID:
        k->vmid = b;
        k->vmid_updated = 1;
        send(p);
        break;
    default: send(p); break;
    }
}

/* Out of sync: collect bytes until an A-Sync (5 zeros and 0x80). */
static void wait_sync(ek_etm3_parser *p)
{
    ek_etm3_packet *k = &p->pkt;
    while (p->state == S_WAIT_SYNC && p->in_used < p->in_len) {
        const uint8_t b = p->in[p->in_used++];
        if (p->start_of_sync) {
            push(p, b);
            if (b == 0x80 && p->len >= 6) {
                if (p->len > 6) { /* leading extra zeros: report them first */
                    p->len--;
                    p->in_used--;
                    send_part(p, p->len - 5u, S_WAIT_SYNC, EK_ETM3_NOTSYNC);
                } else {
                    p->synced = 1;
                    k->type = EK_ETM3_ASYNC;
                }
                send(p);
            } else if (b != 0x00) {
                p->start_of_sync = 0;
            } else if (p->len >= 13) { /* a run of zeros: report 8 of them */
                send_part(p, 8, S_WAIT_SYNC, EK_ETM3_NOTSYNC);
                send(p);
            }
        } else if (b == 0x00) {
            if (p->len == 0) {
                push(p, b);
                p->start_of_sync = 1;
            } else {
                p->in_used--;
                k->type = EK_ETM3_NOTSYNC;
                send(p);
            }
        } else {
            push(p, b);
            if (p->in_used == p->in_len || p->len == 16) {
                k->type = EK_ETM3_NOTSYNC;
                send(p);
            }
        }
    }
}

static const ek_etm3_packet *emit(ek_etm3_parser *p)
{
    p->out = p->pkt;
    if (!p->send_part) {
        p->out.size = p->len;
        memcpy(p->out.raw, p->data, p->len);
        p->state = p->synced ? S_HDR : S_WAIT_SYNC;
        p->len = 0;
        if (p->synced) p->start_of_sync = 0;
    } else {
        p->out.size = p->part_len;
        memcpy(p->out.raw, p->part, p->part_len);
        p->state = p->post_state;
        p->pkt.index += p->part_len;
        p->send_part = 0;
        p->pkt.type = p->post_type;
    }
    const unsigned t = p->out.type;
    if (t == EK_ETM3_BAD_SEQUENCE || t == EK_ETM3_BAD_TRACEMODE || t == EK_ETM3_RESERVED ||
        t == EK_ETM3_INCOMPLETE_EOT)
        p->out.flags |= EK_ETM3_PF_ERROR;
    return &p->out;
}

int ek_etm3_next(ek_etm3_parser *p, const ek_etm3_packet **pkt)
{
    for (;;) {
        if (!(p->in_used < p->in_len || p->state == S_SEND)) {
            if (p->eot_done == 1) {
                p->eot_done = 2;
                if (p->len) { /* partial packet at the end of the trace */
                    set_err(&p->pkt, EK_ETM3_INCOMPLETE_EOT);
                    *pkt = emit(p);
                    init_packet(p);
                    return 1;
                }
            }
            return 0;
        }
        switch (p->state) {
        case S_WAIT_SYNC:
            if (!p->start_of_sync) p->pkt.index = p->in_index + p->in_used;
            wait_sync(p);
            break;
        case S_HDR:
            p->pkt.index = p->in_index + p->in_used;
            header(p, p->in[p->in_used++]);
            break;
        case S_DATA: payload(p, p->in[p->in_used++]); break;
        default: *pkt = emit(p); return 1;
        }
    }
}

void ek_etm3_eot(ek_etm3_parser *p)
{
    p->in_len = p->in_used = 0;
    if (!p->eot_done) p->eot_done = 1;
}

static const char *const names[EK_ETM3_TYPE_COUNT] = {
    "NOTSYNC",   "INCOMPLETE_EOT.", "BRANCH_ADDRESS", "A_SYNC",          "CYCLE_COUNT",
    "I_SYNC",    "I_SYNC_CYCLE",    "TRIGGER",        "P_HDR",           "STORE_FAIL",
    "OOO_DATA",  "OOO_ADDR_PLC",    "NORM_DATA",      "DATA_SUPPRESSED", "VAL_NOT_TRACED",
    "IGNORE",    "CONTEXT_ID",      "VMID",           "EXCEPTION_ENTRY", "EXCEPTION_EXIT",
    "TIMESTAMP", "BAD_SEQUENCE",    "BAD_TRACEMODE",  "I_RESERVED"};

const char *ek_etm3_type_name(unsigned type)
{
    return type < EK_ETM3_TYPE_COUNT ? names[type] : "I_RESERVED";
}
