/* ETMv4 / ETE instruction-trace packet parser. Pure: no allocation, no I/O.
 *
 * A byte-driven state machine: the header byte selects a handler class from a 256-entry table
 * built from the configuration; each following byte is appended to the packet buffer and the
 * handler decides whether the packet is complete. Packet boundaries, error packets and the
 * grouping of unsynchronised bytes follow OpenCSD 1.8's packet processor so that listings
 * compare equal with trc_pkt_lister. */
#include <string.h>

#include "core/hot.h"
#include "etmkit/etm4.h"

enum { S_HDR, S_DATA, S_SEND, S_UNSYNC };

enum {
    H_RESERVED = 0,
    H_INVALID, /* header not valid for this configuration */
    H_NOTSYNC,
    H_NOPAY,
    H_EXT,
    H_ASYNC,
    H_TINFO,
    H_TS,
    H_EXC,
    H_CCNT,
    H_SPEC,
    H_CONDI,
    H_CONDR,
    H_CTXT,
    H_ADDRCTXT,
    H_ADDRS,
    H_ADDRL,
    H_Q,
    H_ATOM,
    H_ITE,
};

/* TRACE_INFO section flags */
#define TI_INFO     0x01
#define TI_KEY      0x02
#define TI_SPEC     0x04
#define TI_CYCT     0x08
#define TI_WNDW     0x10
#define TI_CTRL     0x20
#define TI_ALL_SECT 0x1F
#define TI_ALL      0x3F

/* ---- names ----------------------------------------------------------------------------- */

static const char *const type_names[EK_ETM4_TYPE_COUNT] = {
    [EK_ETM4_NONE] = "I_NO_ERR_TYPE",
    [EK_ETM4_NOTSYNC] = "I_NOT_SYNC",
    [EK_ETM4_INCOMPLETE_EOT] = "I_INCOMPLETE_EOT",
    [EK_ETM4_BAD_SEQUENCE] = "I_BAD_SEQUENCE",
    [EK_ETM4_RESERVED] = "I_RESERVED",
    [EK_ETM4_RESERVED_CFG] = "I_RESERVED_CFG",
    [EK_ETM4_ASYNC] = "I_ASYNC",
    [EK_ETM4_DISCARD] = "I_DISCARD",
    [EK_ETM4_OVERFLOW] = "I_OVERFLOW",
    [EK_ETM4_TRACE_INFO] = "I_TRACE_INFO",
    [EK_ETM4_TIMESTAMP] = "I_TIMESTAMP",
    [EK_ETM4_TRACE_ON] = "I_TRACE_ON",
    [EK_ETM4_FUNC_RET] = "I_FUNC_RET",
    [EK_ETM4_EXCEPT] = "I_EXCEPT",
    [EK_ETM4_EXCEPT_RTN] = "I_EXCEPT_RTN",
    [EK_ETM4_ITE] = "I_ITE",
    [EK_ETM4_TRANS_ST] = "I_TRANS_ST",
    [EK_ETM4_TRANS_COMMIT] = "I_TRANS_COMMIT",
    [EK_ETM4_TRANS_FAIL] = "I_TRANS_FAIL",
    [EK_ETM4_PE_RESET] = "I_PE_RESET",
    [EK_ETM4_TS_MARKER] = "I_TS_MARKER",
    [EK_ETM4_CCNT_F1] = "I_CCNT_F1",
    [EK_ETM4_CCNT_F2] = "I_CCNT_F2",
    [EK_ETM4_CCNT_F3] = "I_CCNT_F3",
    [EK_ETM4_NUM_DS_MKR] = "I_NUM_DS_MKR",
    [EK_ETM4_UNNUM_DS_MKR] = "I_UNNUM_DS_MKR",
    [EK_ETM4_COMMIT] = "I_COMMIT",
    [EK_ETM4_CANCEL_F1] = "I_CANCEL_F1",
    [EK_ETM4_CANCEL_F1_MISPRED] = "I_CANCEL_F1_MISPRED",
    [EK_ETM4_MISPREDICT] = "I_MISPREDICT",
    [EK_ETM4_CANCEL_F2] = "I_CANCEL_F2",
    [EK_ETM4_CANCEL_F3] = "I_CANCEL_F3",
    [EK_ETM4_COND_I_F1] = "I_COND_I_F1",
    [EK_ETM4_COND_I_F2] = "I_COND_I_F2",
    [EK_ETM4_COND_I_F3] = "I_COND_I_F3",
    [EK_ETM4_COND_FLUSH] = "I_COND_FLUSH",
    [EK_ETM4_COND_RES_F1] = "I_COND_RES_F1",
    [EK_ETM4_COND_RES_F2] = "I_COND_RES_F2",
    [EK_ETM4_COND_RES_F3] = "I_COND_RES_F3",
    [EK_ETM4_COND_RES_F4] = "I_COND_RES_F4",
    [EK_ETM4_IGNORE] = "I_IGNORE",
    [EK_ETM4_EVENT] = "I_EVENT",
    [EK_ETM4_CTXT] = "I_CTXT",
    [EK_ETM4_ADDR_CTXT_L_32IS0] = "I_ADDR_CTXT_L_32IS0",
    [EK_ETM4_ADDR_CTXT_L_32IS1] = "I_ADDR_CTXT_L_32IS1",
    [EK_ETM4_ADDR_CTXT_L_64IS0] = "I_ADDR_CTXT_L_64IS0",
    [EK_ETM4_ADDR_CTXT_L_64IS1] = "I_ADDR_CTXT_L_64IS1",
    [EK_ETM4_ADDR_MATCH] = "I_ADDR_MATCH",
    [EK_ETM4_ADDR_S_IS0] = "I_ADDR_S_IS0",
    [EK_ETM4_ADDR_S_IS1] = "I_ADDR_S_IS1",
    [EK_ETM4_ADDR_L_32IS0] = "I_ADDR_L_32IS0",
    [EK_ETM4_ADDR_L_32IS1] = "I_ADDR_L_32IS1",
    [EK_ETM4_ADDR_L_64IS0] = "I_ADDR_L_64IS0",
    [EK_ETM4_ADDR_L_64IS1] = "I_ADDR_L_64IS1",
    [EK_ETM4_Q] = "I_Q",
    [EK_ETM4_SRC_ADDR_MATCH] = "I_SRC_ADDR_MATCH",
    [EK_ETM4_SRC_ADDR_S_IS0] = "I_SRC_ADDR_S_IS0",
    [EK_ETM4_SRC_ADDR_S_IS1] = "I_SRC_ADDR_S_IS1",
    /* OpenCSD 1.8.0 spells this one with "SCR"; listings must match it. */
    [EK_ETM4_SRC_ADDR_L_32IS0] = "I_SCR_ADDR_L_32IS0",
    [EK_ETM4_SRC_ADDR_L_32IS1] = "I_SRC_ADDR_L_32IS1",
    [EK_ETM4_SRC_ADDR_L_64IS0] = "I_SRC_ADDR_L_64IS0",
    [EK_ETM4_SRC_ADDR_L_64IS1] = "I_SRC_ADDR_L_64IS1",
    [EK_ETM4_ATOM_F1] = "I_ATOM_F1",
    [EK_ETM4_ATOM_F2] = "I_ATOM_F2",
    [EK_ETM4_ATOM_F3] = "I_ATOM_F3",
    [EK_ETM4_ATOM_F4] = "I_ATOM_F4",
    [EK_ETM4_ATOM_F5] = "I_ATOM_F5",
    [EK_ETM4_ATOM_F6] = "I_ATOM_F6",
    [EK_ETM4_EXTENSION] = "I_EXTENSION",
};

const char *ek_etm4_type_name(unsigned type)
{
    if (type < EK_ETM4_TYPE_COUNT && type_names[type]) return type_names[type];
    return "I_UNKNOWN";
}

/* ---- header table ------------------------------------------------------------------------ */

static void set_range(ek_etm4_parser *p, unsigned lo, unsigned hi, unsigned type, unsigned h)
{
    for (unsigned i = lo; i <= hi; i++) {
        p->ttype[i] = (uint8_t)type;
        p->table[i] = (uint8_t)h;
    }
}

static void build_table(ek_etm4_parser *p)
{
    const ek_etm4_config *c = &p->cfg;
    set_range(p, 0x00, 0xFF, EK_ETM4_RESERVED, H_RESERVED);

    set_range(p, 0x00, 0x00, EK_ETM4_EXTENSION, H_EXT);
    set_range(p, 0x01, 0x01, EK_ETM4_TRACE_INFO, H_TINFO);
    set_range(p, 0x02, 0x03, EK_ETM4_TIMESTAMP, H_TS);
    set_range(p, 0x04, 0x04, EK_ETM4_TRACE_ON, H_NOPAY);
    set_range(p, 0x05, 0x05, EK_ETM4_FUNC_RET, c->has_func_ret ? H_NOPAY : H_RESERVED);
    set_range(p, 0x06, 0x06, EK_ETM4_EXCEPT, H_EXC);
    set_range(p, 0x07, 0x07, EK_ETM4_EXCEPT_RTN, c->has_eret ? H_NOPAY : H_INVALID);
    if (c->has_trans) {
        set_range(p, 0x0A, 0x0A, EK_ETM4_TRANS_ST, H_NOPAY);
        set_range(p, 0x0B, 0x0B, EK_ETM4_TRANS_COMMIT, H_NOPAY);
    }
    if (c->has_ite) set_range(p, 0x09, 0x09, EK_ETM4_ITE, H_ITE);
    set_range(p, 0x0C, 0x0D, EK_ETM4_CCNT_F2, H_CCNT);
    set_range(p, 0x0E, 0x0F, EK_ETM4_CCNT_F1, H_CCNT);
    set_range(p, 0x10, 0x1F, EK_ETM4_CCNT_F3, H_CCNT);
    set_range(p, 0x20, 0x27, EK_ETM4_NUM_DS_MKR, c->data_trace ? H_NOPAY : H_INVALID);
    set_range(p, 0x28, 0x2C, EK_ETM4_UNNUM_DS_MKR, c->data_trace ? H_NOPAY : H_INVALID);
    set_range(p, 0x2D, 0x2D, EK_ETM4_COMMIT, H_SPEC);
    set_range(p, 0x2E, 0x2E, EK_ETM4_CANCEL_F1, H_SPEC);
    set_range(p, 0x2F, 0x2F, EK_ETM4_CANCEL_F1_MISPRED, H_SPEC);
    set_range(p, 0x30, 0x33, EK_ETM4_MISPREDICT, H_SPEC);
    set_range(p, 0x34, 0x37, EK_ETM4_CANCEL_F2, H_SPEC);
    set_range(p, 0x38, 0x3F, EK_ETM4_CANCEL_F3, H_SPEC);

    const unsigned ci = c->cond_trace ? H_CONDI : H_INVALID;
    const unsigned cr = c->cond_trace ? H_CONDR : H_INVALID;
    set_range(p, 0x40, 0x42, EK_ETM4_COND_I_F2, ci);
    set_range(p, 0x43, 0x43, EK_ETM4_COND_FLUSH, c->cond_trace ? H_NOPAY : H_INVALID);
    set_range(p, 0x44, 0x46, EK_ETM4_COND_RES_F4, cr);
    set_range(p, 0x48, 0x4A, EK_ETM4_COND_RES_F2, cr);
    set_range(p, 0x4C, 0x4E, EK_ETM4_COND_RES_F2, cr);
    set_range(p, 0x50, 0x5F, EK_ETM4_COND_RES_F3, cr);
    set_range(p, 0x68, 0x6B, EK_ETM4_COND_RES_F1, cr);
    set_range(p, 0x6C, 0x6C, EK_ETM4_COND_I_F1, ci);
    set_range(p, 0x6D, 0x6D, EK_ETM4_COND_I_F3, ci);
    set_range(p, 0x6E, 0x6F, EK_ETM4_COND_RES_F1, cr);

    if (c->has_ignore) set_range(p, 0x70, 0x70, EK_ETM4_IGNORE, H_NOPAY);
    set_range(p, 0x71, 0x7F, EK_ETM4_EVENT, H_NOPAY);
    set_range(p, 0x80, 0x81, EK_ETM4_CTXT, H_CTXT);
    set_range(p, 0x82, 0x82, EK_ETM4_ADDR_CTXT_L_32IS0, H_ADDRCTXT);
    set_range(p, 0x83, 0x83, EK_ETM4_ADDR_CTXT_L_32IS1, H_ADDRCTXT);
    set_range(p, 0x85, 0x85, EK_ETM4_ADDR_CTXT_L_64IS0, H_ADDRCTXT);
    set_range(p, 0x86, 0x86, EK_ETM4_ADDR_CTXT_L_64IS1, H_ADDRCTXT);
    if (c->has_ts_marker) set_range(p, 0x88, 0x88, EK_ETM4_TS_MARKER, H_NOPAY);
    set_range(p, 0x90, 0x92, EK_ETM4_ADDR_MATCH, H_NOPAY);
    set_range(p, 0x95, 0x95, EK_ETM4_ADDR_S_IS0, H_ADDRS);
    set_range(p, 0x96, 0x96, EK_ETM4_ADDR_S_IS1, H_ADDRS);
    set_range(p, 0x9A, 0x9A, EK_ETM4_ADDR_L_32IS0, H_ADDRL);
    set_range(p, 0x9B, 0x9B, EK_ETM4_ADDR_L_32IS1, H_ADDRL);
    set_range(p, 0x9D, 0x9D, EK_ETM4_ADDR_L_64IS0, H_ADDRL);
    set_range(p, 0x9E, 0x9E, EK_ETM4_ADDR_L_64IS1, H_ADDRL);
    for (unsigned i = 0; i < 16; i++) {
        /* Q types 3, 4, 7, 8, 9, 0xD, 0xE are reserved */
        const int reserved = (0x639Cu >> i) & 1;
        set_range(p, 0xA0 + i, 0xA0 + i, EK_ETM4_Q, (!reserved && c->q_elem) ? H_Q : H_RESERVED);
    }
    if (c->has_src_addr) {
        set_range(p, 0xB0, 0xB2, EK_ETM4_SRC_ADDR_MATCH, H_NOPAY);
        set_range(p, 0xB4, 0xB4, EK_ETM4_SRC_ADDR_S_IS0, H_ADDRS);
        set_range(p, 0xB5, 0xB5, EK_ETM4_SRC_ADDR_S_IS1, H_ADDRS);
        set_range(p, 0xB6, 0xB6, EK_ETM4_SRC_ADDR_L_32IS0, H_ADDRL);
        set_range(p, 0xB7, 0xB7, EK_ETM4_SRC_ADDR_L_32IS1, H_ADDRL);
        set_range(p, 0xB8, 0xB8, EK_ETM4_SRC_ADDR_L_64IS0, H_ADDRL);
        set_range(p, 0xB9, 0xB9, EK_ETM4_SRC_ADDR_L_64IS1, H_ADDRL);
    }
    set_range(p, 0xC0, 0xD4, EK_ETM4_ATOM_F6, H_ATOM);
    set_range(p, 0xD5, 0xD7, EK_ETM4_ATOM_F5, H_ATOM);
    set_range(p, 0xD8, 0xDB, EK_ETM4_ATOM_F2, H_ATOM);
    set_range(p, 0xDC, 0xDF, EK_ETM4_ATOM_F4, H_ATOM);
    set_range(p, 0xE0, 0xF4, EK_ETM4_ATOM_F6, H_ATOM);
    set_range(p, 0xF5, 0xF5, EK_ETM4_ATOM_F5, H_ATOM);
    set_range(p, 0xF6, 0xF7, EK_ETM4_ATOM_F1, H_ATOM);
    set_range(p, 0xF8, 0xFF, EK_ETM4_ATOM_F3, H_ATOM);
}

/* ---- state ------------------------------------------------------------------------------- */

static void reset_addr_stack(ek_etm4_parser *p)
{
    for (int i = 0; i < 3; i++) {
        ek_etm4_addr *a = &p->stack[i];
        a->val = 0;
        a->is = 0;
        a->pkt_bits = 0;
        a->valid_bits = 64;
        a->is_64 = 1;
    }
}

/* Clear what is valid for one packet only. */
static void init_packet_state(ek_etm4_parser *p)
{
    ek_etm4_packet *k = &p->pkt;
    p->nbuf = 0;
    p->next_unsync_index = 0;
    k->flags = 0;
    k->atom_num = 0;
    k->ctx.updated = k->ctx.vmid_updated = k->ctx.cid_updated = 0;
    k->err_type = EK_ETM4_NONE;
}

/* Start of trace or discontinuity: nothing is known. */
static void init_processor_state(ek_etm4_parser *p)
{
    ek_etm4_packet *k = &p->pkt;
    init_packet_state(p);
    p->state = S_HDR;
    p->handler = H_NOTSYNC;
    p->pkt_index = 0;
    p->synced = 0;
    p->first_tinfo = 0;
    p->notsync_sent = 0;
    p->out_pending = 0;
    p->ts_valid = 0;
    p->cc_thresh_valid = 0;
    k->ctx.valid = 0;
    k->addr.pkt_bits = 0;
    k->addr.valid_bits = 0;
    k->addr.is = 0;
    k->timestamp = 0;
    k->ts_bits = 0;
    k->commit = 0;
    k->cancel = 0;
}

void ek_etm4_parser_init(ek_etm4_parser *p, const ek_etm4_config *cfg)
{
    memset(p, 0, sizeof *p);
    p->cfg = *cfg;
    build_table(p);
    reset_addr_stack(p);
    init_processor_state(p);
}

void ek_etm4_parser_reset(ek_etm4_parser *p)
{
    init_processor_state(p);
    p->blk = NULL;
    p->blk_len = p->blk_pos = 0;
    p->eot = p->eot_done = 0;
}

void ek_etm4_feed(ek_etm4_parser *p, const uint8_t *data, size_t len, uint64_t index)
{
    p->blk = data;
    p->blk_len = data ? len : 0;
    p->blk_pos = 0;
    p->blk_index = index;
}

void ek_etm4_eot(ek_etm4_parser *p)
{
    p->eot = 1;
    p->eot_done = 0;
}

/* ---- field helpers ------------------------------------------------------------------------ */

static inline void send(ek_etm4_parser *p)
{
    p->state = S_SEND;
}

static inline void set_error(ek_etm4_parser *p, unsigned type)
{
    p->pkt.err_type = p->pkt.type;
    p->pkt.type = (uint8_t)type;
}

/* Continuation-bit field of at most 'limit' bytes at buf[st]; returns bytes used, or 0 when
 * the packet ends first (the packet becomes BAD_SEQUENCE). */
static unsigned cont_field(ek_etm4_parser *p, unsigned st, uint32_t *val, unsigned limit)
{
    uint32_t v = 0;
    unsigned i = 0;
    for (;;) {
        if (st + i >= p->nbuf) {
            if (p->pkt.type != EK_ETM4_BAD_SEQUENCE) set_error(p, EK_ETM4_BAD_SEQUENCE);
            p->pkt.flags |= EK_ETM4_PF_SHORT_FIELD;
            *val = v;
            return 0;
        }
        const uint8_t b = p->buf[st + i];
        v |= (uint32_t)(b & 0x7F) << (7 * i);
        i++;
        if (!(b & 0x80) || i >= limit) break;
    }
    *val = v;
    return i;
}

static void push_addr(ek_etm4_parser *p)
{
    p->stack[2] = p->stack[1];
    p->stack[1] = p->stack[0];
    p->stack[0] = p->pkt.addr;
}

static void set_addr64(ek_etm4_parser *p, uint64_t a, unsigned is)
{
    ek_etm4_addr *v = &p->pkt.addr;
    v->pkt_bits = 64;
    v->valid_bits = 64;
    v->is_64 = 1;
    v->val = a;
    v->is = (uint8_t)is;
    push_addr(p);
}

static void set_addr32(ek_etm4_parser *p, uint32_t a, unsigned is)
{
    ek_etm4_addr *v = &p->pkt.addr;
    v->pkt_bits = 32;
    if (p->pkt.ctx.valid && p->pkt.ctx.sf) {
        v->is_64 = 1;
        v->val = (v->val & ~(uint64_t)0xFFFFFFFFu) | a;
    } else {
        v->val = a;
        v->is_64 = 0;
    }
    if (v->valid_bits < 32) v->valid_bits = 32;
    v->is = (uint8_t)is;
    push_addr(p);
}

static void set_addr_short(ek_etm4_parser *p, uint32_t a, unsigned is, unsigned bits)
{
    ek_etm4_addr *v = &p->pkt.addr;
    const uint64_t mask = bits >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1);
    v->pkt_bits = (uint8_t)bits;
    if (v->valid_bits < bits) v->valid_bits = (uint8_t)bits;
    v->val = (v->val & ~mask) | (a & mask);
    v->is = (uint8_t)is;
    push_addr(p);
}

static void set_addr_match(ek_etm4_parser *p, unsigned idx)
{
    p->pkt.match_idx = (uint8_t)idx;
    if (idx < 3) p->pkt.addr = p->stack[idx];
    push_addr(p);
}

/* Short address payload at buf[st]: 7 bits (+8 bits when the continuation bit is set),
 * shifted by the instruction alignment. */
static unsigned short_addr(const ek_etm4_parser *p, unsigned st, unsigned is, uint32_t *val,
                           unsigned *bits)
{
    const unsigned shift = is ? 1 : 2;
    unsigned n = 1;
    uint32_t v = (uint32_t)(p->buf[st] & 0x7F) << shift;
    unsigned b = 7;
    if ((p->buf[st] & 0x80) && st + 1 < p->nbuf) {
        v |= (uint32_t)p->buf[st + 1] << (7 + shift);
        b += 8;
        n = 2;
    }
    *val = v;
    *bits = b + shift;
    return n;
}

static uint32_t long_addr32(const uint8_t *b, unsigned is)
{
    uint32_t v;
    if (!is)
        v = ((uint32_t)(b[0] & 0x7F) << 2) | ((uint32_t)(b[1] & 0x7F) << 9);
    else
        v = ((uint32_t)(b[0] & 0x7F) << 1) | ((uint32_t)b[1] << 8);
    return v | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24);
}

static uint64_t long_addr64(const uint8_t *b, unsigned is)
{
    uint64_t v = long_addr32(b, is);
    for (int i = 4; i < 8; i++)
        v |= (uint64_t)b[i] << (8 * i);
    return v;
}

static void set_context(ek_etm4_parser *p, unsigned st)
{
    ek_etm4_ctx *c = &p->pkt.ctx;
    const uint8_t info = p->buf[st];
    c->valid = 1;
    c->updated = 1;
    c->el = info & 0x3;
    c->ns = (info >> 5) & 1;
    c->sf = (info >> 4) & 1;
    c->nse = (info >> 3) & 1;
    unsigned pos = st + 1;
    const unsigned nv = (info & 0x40) ? p->cfg.vmid_bytes : 0;
    const unsigned nc = (info & 0x80) ? p->cfg.cid_bytes : 0;
    if (nv) {
        uint32_t v = 0;
        for (unsigned i = 0; i < nv; i++)
            v |= (uint32_t)p->buf[pos + i] << (8 * i);
        pos += nv;
        c->vmid = v;
        c->vmid_updated = 1;
    }
    if (nc) {
        uint32_t v = 0;
        for (unsigned i = 0; i < nc; i++)
            v |= (uint32_t)p->buf[pos + i] << (8 * i);
        c->cid = v;
        c->cid_updated = 1;
    }
}

static inline uint32_t cc_threshold(const ek_etm4_parser *p)
{
    return p->cc_thresh_valid ? p->pkt.tinfo.cc_threshold : 0;
}

static inline void set_cc(ek_etm4_parser *p, uint32_t v)
{
    p->pkt.cycle_count = v;
    p->pkt.flags |= EK_ETM4_PF_CC;
}

static inline void set_commit(ek_etm4_parser *p, uint32_t v)
{
    p->pkt.commit = v;
    p->pkt.flags |= EK_ETM4_PF_COMMIT;
}

static inline void set_atoms(ek_etm4_parser *p, uint32_t bits, unsigned n)
{
    p->pkt.atom_bits = bits;
    p->pkt.atom_num = (uint8_t)n;
}

/* ---- handlers ----------------------------------------------------------------------------- */

static void h_notsync(ek_etm4_parser *p, uint8_t b)
{
    const uint64_t here = p->blk_index + p->blk_pos; /* index just past b */
    if (b == 0x00) {
        /* a possible A-Sync: report what came before, restart the packet at this byte */
        if (p->nbuf > 1) {
            p->dump_n = (uint8_t)(p->nbuf - 1);
            p->state = S_UNSYNC;
            p->next_unsync_index = here - 1;
        } else {
            p->pkt_index = here - 1;
        }
        p->handler = p->table[0x00];
    } else if (p->nbuf >= 8) {
        p->dump_n = p->nbuf;
        p->state = S_UNSYNC;
        p->next_unsync_index = here;
    }
}

static void h_ext(ek_etm4_parser *p, uint8_t b)
{
    if (p->nbuf != 2) return;
    if (!p->synced && b != 0x00) {
        p->handler = H_NOTSYNC;
        p->pkt.type = EK_ETM4_NOTSYNC;
        return;
    }
    switch (b) {
    case 0x03:
        p->pkt.type = EK_ETM4_DISCARD;
        send(p);
        break;
    case 0x05:
        p->pkt.type = EK_ETM4_OVERFLOW;
        send(p);
        break;
    case 0x00:
        p->pkt.type = EK_ETM4_ASYNC;
        p->handler = H_ASYNC;
        break;
    default:
        set_error(p, EK_ETM4_BAD_SEQUENCE);
        send(p);
        break;
    }
}

static void h_async(ek_etm4_parser *p, uint8_t b)
{
    if (b != 0x00) {
        if (!p->synced && p->nbuf != 12) {
            p->handler = H_NOTSYNC;
            p->pkt.type = EK_ETM4_NOTSYNC;
            return;
        }
        send(p);
        if (p->nbuf != 12 || b != 0x80) {
            p->pkt.type = EK_ETM4_BAD_SEQUENCE;
            p->pkt.err_type = EK_ETM4_ASYNC;
        } else {
            p->synced = 1;
        }
    } else if (p->nbuf == 12) {
        if (!p->synced) {
            /* more zeros than an A-Sync has: drop the oldest one */
            p->dump_n = 1;
            p->state = S_UNSYNC;
        } else {
            p->pkt.type = EK_ETM4_BAD_SEQUENCE;
            p->pkt.err_type = EK_ETM4_ASYNC;
            send(p);
        }
    }
}

static void h_tinfo(ek_etm4_parser *p, uint8_t b)
{
    uint8_t *sect = &p->st[0], *ctrl = &p->st[1];
    if (p->nbuf == 1) {
        *sect = 0;
        *ctrl = 1;
        return;
    }
    if (p->nbuf == 2) {
        *sect = (uint8_t)(~b & TI_ALL_SECT); /* absent sections count as done */
        if (!(b & 0x80)) *sect |= TI_CTRL;
    } else {
        const uint8_t done = (b & 0x80) ? 0 : 1;
        if (!(*sect & TI_CTRL)) {
            if (done) *sect |= TI_CTRL;
            (*ctrl)++;
        } else if (!(*sect & TI_INFO)) {
            if (done) *sect |= TI_INFO;
        } else if (!(*sect & TI_KEY)) {
            if (done) *sect |= TI_KEY;
        } else if (!(*sect & TI_SPEC)) {
            if (done) *sect |= TI_SPEC;
        } else if (!(*sect & TI_CYCT)) {
            if (done) *sect |= TI_CYCT;
        } else if (!(*sect & TI_WNDW)) {
            if (done) *sect |= TI_WNDW;
        }
    }
    if (*sect != TI_ALL) return;

    ek_etm4_packet *k = &p->pkt;
    unsigned idx = *ctrl + 1u;
    const uint8_t present = p->buf[1] & TI_ALL_SECT;
    uint32_t v = 0;
    /* clear trace info state: timestamp and threshold unknown, address history reset */
    p->ts_valid = 0;
    p->cc_thresh_valid = 0;
    k->tinfo.info = 0;
    k->tinfo.spec = 0;
    k->tinfo.sections = present;
    reset_addr_stack(p);
    k->addr = p->stack[0];
    if ((present & TI_INFO) && idx < p->nbuf) {
        idx += cont_field(p, idx, &v, 5);
        k->tinfo.info = v;
    }
    if ((present & TI_KEY) && idx < p->nbuf) {
        idx += cont_field(p, idx, &v, 5);
        k->tinfo.p0_key = v;
    }
    if ((present & TI_SPEC) && idx < p->nbuf) {
        idx += cont_field(p, idx, &v, 5);
        k->tinfo.spec = v;
    }
    if ((present & TI_CYCT) && idx < p->nbuf) {
        idx += cont_field(p, idx, &v, 5);
        k->tinfo.cc_threshold = v;
        p->cc_thresh_valid = 1;
    }
    if ((present & TI_WNDW) && idx < p->nbuf)
        idx += cont_field(p, idx, &v, 5); /* commit window: not used by any ETE yet */
    if (!p->first_tinfo) k->flags |= EK_ETM4_PF_INIT_TINFO;
    p->first_tinfo = 1;
    send(p);
}

static void h_ts(ek_etm4_parser *p, uint8_t b)
{
    uint8_t *ts_done = &p->st[0], *cc_done = &p->st[1], *ts_bytes = &p->st[2];
    if (p->nbuf == 1) {
        *cc_done = (b & 1) == 0;
        *ts_done = 0;
        *ts_bytes = 0;
    } else if (!*ts_done) {
        (*ts_bytes)++;
        *ts_done = *ts_bytes == 9 || !(b & 0x80);
    } else if (!*cc_done) {
        *cc_done = !(b & 0x80);
    }
    if (!*ts_done || !*cc_done) return;

    /* timestamp: up to 8 bytes of 7 bits, a 9th byte of 8 bits */
    uint64_t ts = 0;
    unsigned i = 0;
    for (;;) {
        const uint8_t c = p->buf[1 + i];
        if (i == 8) {
            ts |= (uint64_t)c << 56;
            i++;
            break;
        }
        ts |= (uint64_t)(c & 0x7F) << (7 * i);
        i++;
        if (!(c & 0x80)) break;
    }
    unsigned bits = i < 9 ? i * 7 : 64;
    if (!p->ts_valid && p->first_tinfo) bits = 64; /* after a TRACE_INFO, bits not sent are zero */
    ek_etm4_packet *k = &p->pkt;
    const uint64_t mask = bits >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1);
    k->timestamp = (k->timestamp & ~mask) | (ts & mask);
    k->ts_bits = (uint8_t)bits;
    p->ts_valid = 1;
    if (p->buf[0] & 1) {
        uint32_t cc = 0;
        cont_field(p, 1 + i, &cc, 3);
        const uint32_t ccmask = p->cfg.cc_bits >= 32 ? ~0u : ((1u << p->cfg.cc_bits) - 1);
        set_cc(p, cc & ccmask);
    }
    send(p);
}

static void h_exc(ek_etm4_parser *p, uint8_t b)
{
    uint8_t *size = &p->st[0];
    if (p->nbuf == 1) {
        *size = 3;
        return;
    }
    if (p->nbuf == 2) {
        if (!(b & 0x80)) *size = 2;
        if (p->cfg.is_ete) {
            const unsigned t = (p->buf[1] >> 1) & 0x1F;
            if (t == 0x0 || t == 0x18) /* PE reset / transaction failure */
                *size = 3;
        }
    }
    if (p->nbuf != *size) return;
    ek_etm4_packet *k = &p->pkt;
    const uint8_t b1 = p->buf[1];
    uint16_t t = (b1 >> 1) & 0x1F;
    k->exc.addr_interp = (uint8_t)(((b1 & 0x40) >> 5) | (b1 & 0x1));
    k->exc.m_fault_pending = 0;
    k->exc.m_type = p->cfg.m_profile;
    if (b1 & 0x80) {
        t |= (uint16_t)((p->buf[2] & 0x1F) << 5);
        k->exc.m_fault_pending = (p->buf[2] >> 5) & 1;
    }
    k->exc.type = t;
    send(p);
    if (p->cfg.is_ete && (t == 0x0 || t == 0x18)) {
        set_addr64(p, 0, 0);
        k->type = t == 0x18 ? EK_ETM4_TRANS_FAIL : EK_ETM4_PE_RESET;
    }
}

static void h_ccnt(ek_etm4_parser *p, uint8_t b)
{
    uint8_t *count_done = &p->st[0], *commit_done = &p->st[1], *has_count = &p->st[2];
    const unsigned t = p->pkt.type;
    const int opt1 = p->cfg.commit_opt1;
    if (p->nbuf == 1) {
        *count_done = *commit_done = 0;
        *has_count = 1;
        if (t == EK_ETM4_CCNT_F3) {
            if (!opt1) set_commit(p, ((b >> 2) & 0x3) + 1);
            set_cc(p, cc_threshold(p) + (b & 0x3));
            send(p);
            return;
        }
        if (t == EK_ETM4_CCNT_F1) {
            if (b & 1) {
                *has_count = 0;
                *count_done = 1;
            }
            if (opt1) *commit_done = 1;
        }
    } else if (t == EK_ETM4_CCNT_F2 && p->nbuf == 2) {
        /* header bit 0 (A) selects how the 4-bit commit count is biased */
        if (!opt1) {
            const uint32_t offset = (p->buf[0] & 1) ? p->cfg.max_spec - 15 : 1;
            set_commit(p, ((b >> 4) & 0xF) + offset);
        }
        set_cc(p, cc_threshold(p) + (b & 0xF));
        send(p);
        return;
    } else if (!*commit_done) {
        *commit_done = !(b & 0x80);
    } else if (!*count_done) {
        *count_done = !(b & 0x80);
    }
    if (t == EK_ETM4_CCNT_F1 && *commit_done && *count_done) {
        unsigned idx = 1;
        uint32_t v = 0;
        if (!opt1) {
            idx += cont_field(p, idx, &v, 5);
            set_commit(p, v);
        }
        if (*has_count) {
            cont_field(p, idx, &v, 3);
            set_cc(p, v + cc_threshold(p));
        } else {
            set_cc(p, 0); /* unknown count after overflow */
        }
        send(p);
    }
}

static void h_spec(ek_etm4_parser *p, uint8_t b)
{
    const unsigned t = p->pkt.type;
    if (p->nbuf == 1) {
        switch (t) {
        case EK_ETM4_MISPREDICT:
        case EK_ETM4_CANCEL_F2:
            switch (b & 0x3) {
            case 1: set_atoms(p, 0x1, 1); break; /* E */
            case 2: set_atoms(p, 0x3, 2); break; /* EE */
            case 3: set_atoms(p, 0x0, 1); break; /* N */
            }
            p->pkt.cancel = t == EK_ETM4_CANCEL_F2 ? 1 : 0;
            send(p);
            break;
        case EK_ETM4_CANCEL_F3:
            if (b & 1) set_atoms(p, 0x1, 1);
            p->pkt.cancel = ((b >> 1) & 0x3) + 2u;
            send(p);
            break;
        }
        return;
    }
    if (!(b & 0x80)) {
        uint32_t v = 0;
        cont_field(p, 1, &v, 5);
        if (t == EK_ETM4_COMMIT)
            set_commit(p, v);
        else
            p->pkt.cancel = v;
        send(p);
    }
}

static void h_condi(ek_etm4_parser *p, uint8_t b)
{
    ek_etm4_packet *k = &p->pkt;
    int f1_done = 0;
    if (p->nbuf == 1) {
        if (k->type == EK_ETM4_COND_I_F2) {
            /* 0: one element, key + 1; 1: one element; 2: two elements, key + 1 */
            const unsigned idx = b & 0x3;
            k->cond.num_elem = idx == 2 ? 2 : 1;
            k->cond.incr = idx != 1;
            k->cond.f3_final = 0;
            send(p);
        }
        return;
    }
    if (p->nbuf == 2 && k->type == EK_ETM4_COND_I_F3) {
        k->cond.num_elem = (uint8_t)(((b >> 1) & 0x3F) + (b & 1));
        k->cond.f3_final = b & 1;
        k->cond.incr = 0;
        send(p);
        return;
    }
    f1_done = !(b & 0x80);
    if (f1_done) {
        uint32_t key = 0;
        cont_field(p, 1, &key, 5);
        k->cond.key[0] = key;
        k->cond.num_elem = 1;
        send(p);
    }
}

/* one COND_RES_F1 payload at buf[st]: result nibble and key, continuation bits */
static unsigned cond_result(ek_etm4_parser *p, unsigned st, uint32_t *key, uint8_t *res)
{
    unsigned i = 0, shift = 0;
    uint32_t k = 0;
    for (;;) {
        if (st + i >= p->nbuf) {
            if (p->pkt.type != EK_ETM4_BAD_SEQUENCE) set_error(p, EK_ETM4_BAD_SEQUENCE);
            p->pkt.flags |= EK_ETM4_PF_SHORT_FIELD;
            break;
        }
        const uint8_t c = p->buf[st + i];
        if (i == 0) {
            *res = c & 0xF;
            k = (c >> 4) & 0x7;
            shift = 3;
        } else {
            k |= (uint32_t)(c & 0x7F) << shift;
            shift += 7;
        }
        i++;
        if (!(c & 0x80) || i >= 6) break;
    }
    *key = k;
    return i;
}

static void h_condr(ek_etm4_parser *p, uint8_t b)
{
    ek_etm4_packet *k = &p->pkt;
    uint8_t *p1 = &p->st[0], *p2 = &p->st[1], *has2 = &p->st[2];
    if (p->nbuf == 1) {
        *p1 = *p2 = *has2 = 0;
        switch (k->type) {
        case EK_ETM4_COND_RES_F1:
            *has2 = 1;
            if ((b & 0xFC) == 0x6C) { /* only one payload */
                *p2 = 1;
                *has2 = 0;
            }
            break;
        case EK_ETM4_COND_RES_F2:
            k->cond.incr = (b & 0x4) ? 2 : 1;
            k->cond.token = b & 0x3;
            send(p);
            break;
        case EK_ETM4_COND_RES_F4:
            k->cond.token = b & 0x3;
            send(p);
            break;
        }
        return;
    }
    if (k->type == EK_ETM4_COND_RES_F3 && p->nbuf == 2) {
        k->cond.tokens = (uint16_t)(p->buf[1] | ((p->buf[0] & 0xF) << 8));
        send(p);
        return;
    }
    if (!*p1)
        *p1 = !(b & 0x80);
    else if (!*p2)
        *p2 = !(b & 0x80);
    if (*p1 && *p2) {
        unsigned st = 1;
        st += cond_result(p, st, &k->cond.key[0], &k->cond.result[0]);
        k->cond.ci[0] = p->buf[0] & 1;
        k->cond.nkeys = 1;
        if (*has2) {
            cond_result(p, st, &k->cond.key[1], &k->cond.result[1]);
            k->cond.ci[1] = (p->buf[0] >> 1) & 1;
            k->cond.nkeys = 2;
        }
        send(p);
    }
}

static void h_ctxt(ek_etm4_parser *p, uint8_t b)
{
    uint8_t *nv = &p->st[0], *nc = &p->st[1];
    int done = 0;
    if (p->nbuf == 1) {
        if (!(b & 1)) {
            p->pkt.ctx.valid = 1; /* context unchanged */
            send(p);
        }
        return;
    }
    if (p->nbuf == 2) {
        if (!(b & 0xC0)) {
            done = 1;
        } else {
            *nv = (b & 0x40) ? p->cfg.vmid_bytes : 0;
            *nc = (b & 0x80) ? p->cfg.cid_bytes : 0;
        }
    } else {
        if (*nv)
            (*nv)--;
        else if (*nc)
            (*nc)--;
        done = !*nv && !*nc;
    }
    if (done) {
        set_context(p, 1);
        send(p);
    }
}

static void h_addrctxt(ek_etm4_parser *p, uint8_t b)
{
    uint8_t *nbytes = &p->st[0], *is = &p->st[1], *a64 = &p->st[2], *nv = &p->st[3],
            *nc = &p->st[4], *info_done = &p->st[5];
    const unsigned t = p->pkt.type;
    if (p->nbuf == 1) {
        *is = t == EK_ETM4_ADDR_CTXT_L_32IS1 || t == EK_ETM4_ADDR_CTXT_L_64IS1;
        *a64 = t == EK_ETM4_ADDR_CTXT_L_64IS0 || t == EK_ETM4_ADDR_CTXT_L_64IS1;
        *nbytes = *a64 ? 8 : 4;
        *nv = *nc = *info_done = 0;
        return;
    }
    if (*nbytes) {
        (*nbytes)--;
    } else if (!*info_done) {
        *info_done = 1;
        *nv = (b & 0x40) ? p->cfg.vmid_bytes : 0;
        *nc = (b & 0x80) ? p->cfg.cid_bytes : 0;
    } else if (*nv) {
        (*nv)--;
    } else if (*nc) {
        (*nc)--;
    }
    if (*nbytes || !*info_done || *nv || *nc) return;
    if (*a64)
        set_addr64(p, long_addr64(p->buf + 1, *is), *is);
    else
        set_addr32(p, long_addr32(p->buf + 1, *is), *is);
    set_context(p, *a64 ? 9 : 5);
    send(p);
}

static void h_addrs(ek_etm4_parser *p, uint8_t b)
{
    uint8_t *done = &p->st[0], *is = &p->st[1];
    if (p->nbuf == 1) {
        *done = 0;
        *is = b == 0x96 || b == 0xB5;
        return;
    }
    if (!*done) *done = p->nbuf == 3 || !(b & 0x80);
    if (*done) {
        uint32_t v;
        unsigned bits;
        short_addr(p, 1, *is, &v, &bits);
        set_addr_short(p, v, *is, bits);
        send(p);
    }
}

static void h_addrl(ek_etm4_parser *p, uint8_t b)
{
    uint8_t *nbytes = &p->st[0], *is = &p->st[1], *a64 = &p->st[2];
    if (p->nbuf == 1) {
        const unsigned t = p->pkt.type;
        *is = t == EK_ETM4_ADDR_L_32IS1 || t == EK_ETM4_ADDR_L_64IS1 ||
              t == EK_ETM4_SRC_ADDR_L_32IS1 || t == EK_ETM4_SRC_ADDR_L_64IS1;
        *a64 = t == EK_ETM4_ADDR_L_64IS0 || t == EK_ETM4_ADDR_L_64IS1 ||
               t == EK_ETM4_SRC_ADDR_L_64IS0 || t == EK_ETM4_SRC_ADDR_L_64IS1;
        *nbytes = *a64 ? 8 : 4;
        return;
    }
    if (p->nbuf != 1u + *nbytes) return;
    if (*a64)
        set_addr64(p, long_addr64(p->buf + 1, *is), *is);
    else
        set_addr32(p, long_addr32(p->buf + 1, *is), *is);
    send(p);
}

static void h_q(ek_etm4_parser *p, uint8_t b)
{
    uint8_t *qtype = &p->st[0], *nbytes = &p->st[1], *count_done = &p->st[2], *has_addr = &p->st[3],
            *addr_short = &p->st[4], *addr_match = &p->st[5], *is = &p->st[6];
    ek_etm4_packet *k = &p->pkt;
    if (p->nbuf == 1) {
        *qtype = b & 0xF;
        *nbytes = 0;
        *count_done = 0;
        *has_addr = 0;
        *addr_short = 1;
        *addr_match = 0;
        *is = 1;
        switch (*qtype) {
        case 0x0:
        case 0x1:
        case 0x2: /* count, address by exact match */
            *addr_match = 1;
            *has_addr = 1;
            break;
        case 0xC: /* count only */ break;
        case 0x5: *is = 0; /* fallthrough */
        case 0x6:          /* count + short address */
            *has_addr = 1;
            *nbytes = 2;
            break;
        case 0xA: *is = 0; /* fallthrough */
        case 0xB:          /* count + long 32-bit address */
            *has_addr = 1;
            *addr_short = 0;
            *nbytes = 4;
            break;
        case 0xF: /* no count, no address */ *count_done = 1; break;
        default: /* reserved types never reach here (table) */
            set_error(p, EK_ETM4_BAD_SEQUENCE);
            send(p);
            return;
        }
    } else if (*nbytes) {
        if (*addr_short && *nbytes == 2 && !(b & 0x80)) (*nbytes)--; /* one-byte short address */
        (*nbytes)--;
    } else if (!*count_done) {
        *count_done = !(b & 0x80);
    }
    if (*nbytes || !*count_done) return;

    unsigned idx = 1;
    if (*has_addr) {
        if (*addr_match) {
            set_addr_match(p, *qtype & 0x3);
        } else if (*addr_short) {
            uint32_t v;
            unsigned bits;
            idx += short_addr(p, idx, *is, &v, &bits);
            set_addr_short(p, v, *is, bits);
        } else {
            set_addr32(p, long_addr32(p->buf + idx, *is), *is);
            idx += 4;
        }
    }
    k->q.qtype = *qtype;
    if (*qtype != 0xF) {
        uint32_t count = 0;
        cont_field(p, idx, &count, 5);
        k->q.count = count;
        k->q.count_present = 1;
        k->q.addr_present = *has_addr;
        k->q.addr_match = *addr_match;
    } else {
        k->q.count = 0;
        k->q.count_present = 0;
        k->q.addr_present = 0;
        k->q.addr_match = 0;
    }
    send(p);
}

/* The atoms of every atom header (0xC0-0xFF, all of them atom packets in every configuration),
 * by the spec's encodings: the bits (oldest atom in bit 0, 1 = E; the comments list the atoms
 * oldest first) in bits 0-23, the count in bits 24-31. A table rather than a switch on the
 * format, which the mix of formats in real trace mispredicts (4.5% of a packet listing's
 * time). */
#define AW(bits, n) ((uint32_t)(bits) | (uint32_t)(n) << 24)
/* (the shift counts masked: clang checks the branches of ATOM_WORD that a header does not take,
 * where (h & 0x1F) + 3 can reach 34; for the F6 headers it is at most 23) */
#define AW_F6(h)    /* 0xC0-0xD4, 0xE0-0xF4: (h & 0x1F) + 3 E atoms, then E (bit 5 clear) or N */  \
    AW((((uint32_t)1 << ((((h)&0x1F) + 3) & 31)) - 1) |                                            \
           (((h)&0x20) ? 0u : (uint32_t)1 << ((((h)&0x1F) + 3) & 31)),                             \
       ((h)&0x1F) + 4)
#define ATOM_WORD(h)                                                                               \
    ((h) >= 0xF8   ? AW((h)&7, 3) /* F3 */                                                         \
     : (h) >= 0xF6 ? AW((h)&1, 1) /* F1 */                                                         \
     : (h) == 0xF5 ? AW(0x1E, 5)  /* F5: NEEEE */                                                  \
     : (h) >= 0xE0 ? AW_F6(h)                                                                      \
     : (h) >= 0xDC ? AW((0x5A0Eu >> 4 * ((h)&3)) & 0xF, 4) /* F4: NEEE NNNN NENE ENEN */           \
     : (h) >= 0xD8 ? AW((h)&3, 2)                          /* F2 */                                \
     : (h) == 0xD7 ? AW(0x15, 5)                           /* F5: ENENE */                         \
     : (h) == 0xD6 ? AW(0x0A, 5)                           /* F5: NENEN */                         \
     : (h) == 0xD5 ? AW(0x00, 5)                           /* F5: NNNNN */                         \
                   : AW_F6(h))
#define AW1(h)  ATOM_WORD(h),
#define AW4(h)  AW1(h) AW1((h) + 1) AW1((h) + 2) AW1((h) + 3)
#define AW16(h) AW4(h) AW4((h) + 4) AW4((h) + 8) AW4((h) + 12)
static const uint32_t atom_word[64] = {AW16(0xC0) AW16(0xD0) AW16(0xE0) AW16(0xF0)};

EK_HOT void h_atom(ek_etm4_parser *p, uint8_t b)
{
    const uint32_t w = atom_word[b & 0x3F]; /* (b is 0xC0-0xFF) */
    set_atoms(p, w & 0xFFFFFF, w >> 24);
    send(p);
}

static void h_ite(ek_etm4_parser *p, uint8_t b)
{
    (void)b;
    if (p->nbuf == 10) {
        uint64_t v = 0;
        for (int i = 0; i < 8; i++)
            v |= (uint64_t)p->buf[2 + i] << (8 * i);
        p->pkt.ite.el = p->buf[1];
        p->pkt.ite.value = v;
        send(p);
    }
}

static void h_nopay(ek_etm4_parser *p, uint8_t b)
{
    switch (p->pkt.type) {
    case EK_ETM4_ADDR_MATCH:
    case EK_ETM4_SRC_ADDR_MATCH: set_addr_match(p, b & 0x3); break;
    case EK_ETM4_EVENT: p->pkt.event = b & 0xF; break;
    case EK_ETM4_NUM_DS_MKR:
    case EK_ETM4_UNNUM_DS_MKR: p->pkt.dsm = b & 0x7; break;
    default: break;
    }
    send(p);
}

static inline void handle(ek_etm4_parser *p, uint8_t b)
{
    switch (p->handler) {
    case H_NOTSYNC: h_notsync(p, b); break;
    case H_NOPAY: h_nopay(p, b); break;
    case H_EXT: h_ext(p, b); break;
    case H_ASYNC: h_async(p, b); break;
    case H_TINFO: h_tinfo(p, b); break;
    case H_TS: h_ts(p, b); break;
    case H_EXC: h_exc(p, b); break;
    case H_CCNT: h_ccnt(p, b); break;
    case H_SPEC: h_spec(p, b); break;
    case H_CONDI: h_condi(p, b); break;
    case H_CONDR: h_condr(p, b); break;
    case H_CTXT: h_ctxt(p, b); break;
    case H_ADDRCTXT: h_addrctxt(p, b); break;
    case H_ADDRS: h_addrs(p, b); break;
    case H_ADDRL: h_addrl(p, b); break;
    case H_Q: h_q(p, b); break;
    case H_ATOM: h_atom(p, b); break;
    case H_ITE: h_ite(p, b); break;
    case H_INVALID:
        set_error(p, EK_ETM4_RESERVED_CFG);
        send(p);
        break;
    case H_RESERVED:
    default:
        set_error(p, EK_ETM4_RESERVED);
        send(p);
        break;
    }
}

/* ---- driver ------------------------------------------------------------------------------- */

static inline int is_error_type(unsigned t)
{
    return t >= EK_ETM4_NOTSYNC && t <= EK_ETM4_RESERVED_CFG;
}

static const ek_etm4_packet *emit(ek_etm4_parser *p)
{
    ek_etm4_packet *k = &p->pkt;
    k->index = p->pkt_index;
    k->raw = p->buf;
    k->size = p->nbuf;
    if (is_error_type(k->type)) k->flags |= EK_ETM4_PF_ERROR;
    p->out_pending = 1;
    return k;
}

int ek_etm4_next(ek_etm4_parser *p, const ek_etm4_packet **out)
{
    if (p->out_pending == 1) {
        init_packet_state(p);
    } else if (p->out_pending == 2) {
        /* after a NOTSYNC dump the packet being assembled keeps its own flags */
        p->pkt.flags = p->saved_flags;
    }
    p->out_pending = 0;
    for (;;) {
        switch (p->state) {
        case S_SEND:
            p->state = S_HDR;
            *out = emit(p);
            return 1;

        case S_UNSYNC: {
            /* report the oldest dump_n unsynchronised bytes; keep the rest */
            if (p->blk_pos >= p->blk_len)
                goto end; /* as OpenCSD: only done when more data arrives */
            ek_etm4_packet *k = &p->pkt;
            const unsigned n = p->dump_n <= p->nbuf ? p->dump_n : p->nbuf;
            memcpy(p->out_raw, p->buf, n);
            memmove(p->buf, p->buf + n, p->nbuf - n);
            p->nbuf = (uint8_t)(p->nbuf - n);
            k->index = p->pkt_index;
            k->raw = p->out_raw;
            k->size = (uint8_t)n;
            p->saved_flags = k->flags; /* restored on the next call */
            p->out_pending = 2;
            k->flags = (uint8_t)(EK_ETM4_PF_ERROR | EK_ETM4_PF_UNSYNCED |
                                 (p->notsync_sent ? EK_ETM4_PF_NOTSYNC_MORE : 0));
            p->notsync_sent = 1;
            if (p->next_unsync_index) {
                p->pkt_index = p->next_unsync_index;
                p->next_unsync_index = 0;
            }
            p->state = S_DATA;
            *out = k;
            return 1;
        }

        case S_HDR:
            if (p->blk_pos >= p->blk_len) goto end;
            p->pkt_index = p->blk_index + p->blk_pos;
            if (p->synced) {
                const uint8_t h = p->blk[p->blk_pos];
                p->handler = p->table[h];
                p->pkt.type = p->ttype[h];
                if (p->handler == H_ATOM) {
                    /* fast path for the most frequent packets: one byte, no state */
                    p->blk_pos++;
                    p->buf[0] = h;
                    p->nbuf = 1;
                    h_atom(p, h);
                    p->state = S_HDR;
                    *out = emit(p);
                    return 1;
                }
                if (p->handler == H_ADDRS && p->blk_len - p->blk_pos >= 3) {
                    /* short address, all of it in this block: 2 bytes, or 3 when the first
                     * payload byte has its continuation bit (what h_addrs does byte by byte) */
                    const unsigned n = (p->blk[p->blk_pos + 1] & 0x80) ? 3 : 2;
                    memcpy(p->buf, p->blk + p->blk_pos, n);
                    p->nbuf = (uint8_t)n;
                    p->blk_pos += n;
                    const unsigned is = h == 0x96 || h == 0xB5;
                    p->st[0] = 1;
                    p->st[1] = (uint8_t)is;
                    uint32_t v;
                    unsigned bits;
                    short_addr(p, 1, is, &v, &bits);
                    set_addr_short(p, v, is, bits);
                    p->state = S_HDR;
                    *out = emit(p);
                    return 1;
                }
            } else {
                p->handler = H_NOTSYNC;
                p->pkt.type = EK_ETM4_NOTSYNC;
            }
            p->state = S_DATA;
            /* fallthrough */
        case S_DATA:
            while (p->blk_pos < p->blk_len && p->state == S_DATA) {
                const uint8_t b = p->blk[p->blk_pos++];
                p->buf[p->nbuf++] = b;
                handle(p, b);
                if (p->state == S_DATA && p->nbuf >= EK_ETM4_MAX_PKT) {
                    /* endless continuation bits: only in damaged trace */
                    set_error(p, EK_ETM4_BAD_SEQUENCE);
                    send(p);
                }
            }
            if (p->state == S_DATA) goto end;
            break;
        }
    }
end:
    if (p->eot && !p->eot_done) {
        p->eot_done = 1;
        if (p->nbuf) {
            set_error(p, EK_ETM4_INCOMPLETE_EOT);
            p->state = S_HDR;
            *out = emit(p);
            return 1;
        }
    }
    return 0;
}
