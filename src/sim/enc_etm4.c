/* ETMv4 / ETE packet encoder. Encodings follow the ETMv4 architecture (IHI0064) as implemented
 * by the reference decoders: see enc_etm4.h for the contract. */
#include "sim/enc_etm4.h"

#include <string.h>

#include "etmkit/etmkit.h"

static inline void put(ek_etm4_enc *e, uint8_t b)
{
    e->out[e->len++] = b;
}

static void report(ek_etm4_enc *e, ek_etm4_enc_pkt *p, size_t start)
{
    if (!e->on_packet) return;
    p->offset = e->base + start;
    p->len = (uint32_t)(e->len - start);
    e->on_packet(e->cb_ctx, p);
}

static void simple(ek_etm4_enc *e, ek_etm4_enc_kind kind, uint8_t b)
{
    size_t st = e->len;
    put(e, b);
    ek_etm4_enc_pkt p = {.kind = kind};
    report(e, &p, st);
}

/* 7-bit continuation field, at most 'limit' bytes (the last carries 7 bits, no flag). */
static void put_cont(ek_etm4_enc *e, uint64_t v, unsigned limit)
{
    for (unsigned i = 0; i < limit; i++) {
        uint8_t b = (uint8_t)(v & 0x7F);
        v >>= 7;
        if (v && i + 1 < limit) b |= 0x80;
        put(e, b);
        if (!(b & 0x80)) break;
    }
}

int ek_etm4_enc_init(ek_etm4_enc *e, const ek_source_config *cfg)
{
    memset(e, 0, sizeof(*e));
    if (cfg->protocol != EK_PROTO_ETMV4 && cfg->protocol != EK_PROTO_ETE) return EK_ERR_UNSUPPORTED;
    const ek_etm4_regs *r = &cfg->regs.etm4;
    e->ete = cfg->protocol == EK_PROTO_ETE;
    uint32_t c = r->configr;
    e->cid_trace = (c & EK_TRCCONFIGR_CID) != 0;
    e->vmid_trace = (c & EK_TRCCONFIGR_VMID) != 0;
    e->ts_trace = (c & EK_TRCCONFIGR_TS) != 0;
    e->cc_trace = (c & EK_TRCCONFIGR_CCI) != 0;
    e->rs_trace = (c & EK_TRCCONFIGR_RS) != 0;
    unsigned cidsize = (r->idr[2] >> 5) & 0x1F, vmidsize = (r->idr[2] >> 10) & 0x1F;
    e->cid_bytes = cidsize == 4 ? 4 : 0;
    e->vmid_bytes = vmidsize == 1 ? 1 : vmidsize == 2 ? 2 : vmidsize == 4 ? 4 : 0;
    if (e->cid_trace && !e->cid_bytes) e->cid_trace = 0;
    if (e->vmid_trace && !e->vmid_bytes) e->vmid_trace = 0;
    e->cc_threshold = 0x100;
    e->cc_bits = 12 + ((r->idr[2] >> 25) & 0xF);
    return 0;
}

void ek_etm4_enc_default_regs(ek_source_config *cfg, int ete, uint8_t trace_id, uint32_t configr)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->protocol = ete ? EK_PROTO_ETE : EK_PROTO_ETMV4;
    cfg->trace_id = trace_id;
    cfg->arch = ete ? EK_ARCH_V9A : EK_ARCH_V8A;
    cfg->profile = EK_PROFILE_A;
    ek_etm4_regs *r = &cfg->regs.etm4;
    r->configr = configr;
    r->traceidr = trace_id;
    r->authstatus = 0xCC;
    r->idr[0] = 0x28000EA1; /* BB, CCI, RETSTACK, 64-bit TS, COMMOPT=1 */
    r->idr[1] = ete ? 0x4100FFF0 : 0x4100F424;
    r->idr[2] = 0x00000488; /* 64-bit addresses, 32-bit context ID, 8-bit VMID */
    r->idr[8] = 0;          /* no speculation: every P0 element is committed at once */
    r->devarch = ete ? 0x47705A13 : 0x47704A13;
    r->present = 0x107u | EK_ETM4_HAVE_CONFIGR | EK_ETM4_HAVE_TRACEIDR | EK_ETM4_HAVE_AUTHSTATUS |
                 (ete ? EK_ETM4_HAVE_DEVARCH : 0);
}

/* ---- atoms ---- */

static const uint8_t f4_pat[4] = {0xE, 0x0, 0xA, 0x5}; /* oldest atom in bit 0 */

static void emit_atoms(ek_etm4_enc *e, uint8_t hdr, unsigned n)
{
    size_t st = e->len;
    put(e, hdr);
    ek_etm4_enc_pkt p = {.kind = EK_ENC_ATOM,
                         .natoms = n,
                         .atom_bits = (uint32_t)(e->atom_bits & ((1ull << n) - 1))};
    e->atom_bits >>= n;
    e->natoms -= n;
    report(e, &p, st);
}

/* Write one atom packet for the oldest pending atoms; 'all' = nothing more is coming. */
static void pack_one(ek_etm4_enc *e)
{
    unsigned n = e->natoms;
    uint64_t b = e->atom_bits;
    unsigned m = 0; /* leading E atoms */
    while (m < n && ((b >> m) & 1))
        m++;
    if (m >= 3 && n > m) {
        if (m > 23)
            emit_atoms(e, 0xC0 | 20, 24); /* 23 E + E */
        else
            emit_atoms(e, (uint8_t)(0xE0 | (m - 3)), m + 1); /* m E + N */
        return;
    }
    if (m >= 4) { /* only E atoms pending */
        unsigned k = m - 1 > 23 ? 23 : m - 1;
        emit_atoms(e, (uint8_t)(0xC0 | (k - 3)), k + 1);
        return;
    }
    if (n >= 5) {
        unsigned v = (unsigned)(b & 0x1F);
        if (v == 0x1E) {
            emit_atoms(e, 0xF5, 5);
            return;
        }
        if (v == 0x00) {
            emit_atoms(e, 0xD5, 5);
            return;
        }
        if (v == 0x0A) {
            emit_atoms(e, 0xD6, 5);
            return;
        }
        if (v == 0x15) {
            emit_atoms(e, 0xD7, 5);
            return;
        }
    }
    if (n >= 4) {
        unsigned v = (unsigned)(b & 0xF);
        for (unsigned i = 0; i < 4; i++)
            if (v == f4_pat[i]) {
                emit_atoms(e, (uint8_t)(0xDC | i), 4);
                return;
            }
    }
    if (n >= 3)
        emit_atoms(e, (uint8_t)(0xF8 | (b & 7)), 3);
    else if (n == 2)
        emit_atoms(e, (uint8_t)(0xD8 | (b & 3)), 2);
    else
        emit_atoms(e, (uint8_t)(0xF6 | (b & 1)), 1);
}

void ek_etm4_enc_flush(ek_etm4_enc *e)
{
    while (e->natoms)
        pack_one(e);
}

void ek_etm4_enc_atom(ek_etm4_enc *e, int taken)
{
    if (taken) e->atom_bits |= 1ull << e->natoms;
    e->natoms++;
    /* keep the pending window small: pack the oldest atoms once a full F6 could be formed */
    while (e->natoms >= 32)
        pack_one(e);
}

/* ---- synchronisation ---- */

void ek_etm4_enc_sync(ek_etm4_enc *e)
{
    ek_etm4_enc_flush(e);
    size_t st = e->len;
    for (int i = 0; i < 11; i++)
        put(e, 0x00);
    put(e, 0x80);
    ek_etm4_enc_pkt p = {.kind = EK_ENC_ASYNC};
    report(e, &p, st);
    st = e->len;
    put(e, 0x01);
    put(e, e->cc_trace ? 0x09 : 0x01); /* INFO section (+ CYCT section) */
    put(e, e->cc_trace ? 0x01 : 0x00); /* INFO: bit 0 = cycle counting enabled */
    if (e->cc_trace) put_cont(e, e->cc_threshold, 5);
    ek_etm4_enc_pkt q = {.kind = EK_ENC_TRACE_INFO};
    report(e, &q, st);
    e->hist_n = 0;
    e->ctx_valid = 0;
    e->ts_valid = 0;
    e->rs_n = 0;
}

void ek_etm4_enc_trace_on(ek_etm4_enc *e)
{
    ek_etm4_enc_flush(e);
    simple(e, EK_ENC_TRACE_ON, 0x04);
    e->rs_n = 0;
}

/* ---- addresses and context ---- */

static void hist_push(ek_etm4_enc *e, uint64_t a)
{
    e->hist[2] = e->hist[1];
    e->hist[1] = e->hist[0];
    e->hist[0] = a;
    if (e->hist_n < 3) e->hist_n++;
}

static int ctx_differs(const ek_etm4_enc *e, const ek_etm4_enc_ctx *c)
{
    if (!e->ctx_valid) return 1;
    if (c->el != e->ctx.el || c->sf != e->ctx.sf || c->ns != e->ctx.ns) return 1;
    if (e->cid_trace && c->cid != e->ctx.cid) return 1;
    if (e->vmid_trace && c->vmid != e->ctx.vmid) return 1;
    return 0;
}

static void put_ctx_info(ek_etm4_enc *e, const ek_etm4_enc_ctx *c)
{
    uint8_t info = (uint8_t)((c->el & 3) | (c->sf ? 0x10 : 0) | (c->ns ? 0x20 : 0) |
                             (e->vmid_trace ? 0x40 : 0) | (e->cid_trace ? 0x80 : 0));
    put(e, info);
    if (e->vmid_trace)
        for (unsigned i = 0; i < e->vmid_bytes; i++)
            put(e, (uint8_t)(c->vmid >> (8 * i)));
    if (e->cid_trace)
        for (unsigned i = 0; i < e->cid_bytes; i++)
            put(e, (uint8_t)(c->cid >> (8 * i)));
    e->ctx = *c;
    e->ctx_valid = 1;
}

static void put_long(ek_etm4_enc *e, uint64_t a, int is64)
{
    put(e, (uint8_t)((a >> 2) & 0x7F));
    put(e, (uint8_t)((a >> 9) & 0x7F));
    put(e, (uint8_t)(a >> 16));
    put(e, (uint8_t)(a >> 24));
    if (is64)
        for (int i = 4; i < 8; i++)
            put(e, (uint8_t)(a >> (8 * i)));
}

void ek_etm4_enc_address(ek_etm4_enc *e, uint64_t a, const ek_etm4_enc_ctx *ctx)
{
    ek_etm4_enc_flush(e);
    size_t st = e->len;
    ek_etm4_enc_pkt p = {.addr = a, .exact_idx = -1};
    int need_ctx = ctx && ctx_differs(e, ctx);
    int upper_same = e->hist_n > 0 && ((a ^ e->hist[0]) >> 32) == 0;
    if (need_ctx || e->hist_n == 0) {
        /* address with context: long format only */
        const ek_etm4_enc_ctx *c = ctx ? ctx : &e->ctx;
        put(e, upper_same ? 0x82 : 0x85);
        put_long(e, a, !upper_same);
        put_ctx_info(e, c);
        p.kind = EK_ENC_ADDR_CTXT;
        p.addr_bits = upper_same ? 32 : 64;
        p.ctx = *c;
        hist_push(e, a);
        report(e, &p, st);
        return;
    }
    p.kind = EK_ENC_ADDR;
    for (unsigned i = 0; i < e->hist_n; i++)
        if (e->hist[i] == a) {
            put(e, (uint8_t)(0x90 | i));
            p.exact_idx = (int)i;
            hist_push(e, a);
            report(e, &p, st);
            return;
        }
    uint64_t d = a ^ e->hist[0];
    if ((d >> 9) == 0) {
        put(e, 0x95);
        put(e, (uint8_t)((a >> 2) & 0x7F));
        p.addr_bits = 9;
    } else if ((d >> 17) == 0) {
        put(e, 0x95);
        put(e, (uint8_t)(0x80 | ((a >> 2) & 0x7F)));
        put(e, (uint8_t)(a >> 9));
        p.addr_bits = 17;
    } else if ((d >> 32) == 0) {
        put(e, 0x9A);
        put_long(e, a, 0);
        p.addr_bits = 32;
    } else {
        put(e, 0x9D);
        put_long(e, a, 1);
        p.addr_bits = 64;
    }
    hist_push(e, a);
    report(e, &p, st);
}

void ek_etm4_enc_push_return(ek_etm4_enc *e, uint64_t ret_addr)
{
    if (!e->rs_trace) return;
    if (e->rs_n == 15) {
        memmove(e->rs, e->rs + 1, 14 * sizeof(e->rs[0]));
        e->rs_n = 14;
    }
    e->rs[e->rs_n++] = ret_addr;
}

int ek_etm4_enc_indirect_target(ek_etm4_enc *e, uint64_t a, const ek_etm4_enc_ctx *ctx)
{
    if (e->rs_trace && e->rs_n && e->rs[e->rs_n - 1] == a && !(ctx && ctx_differs(e, ctx))) {
        e->rs_n--;
        return 1;
    }
    ek_etm4_enc_address(e, a, ctx);
    return 0;
}

void ek_etm4_enc_context(ek_etm4_enc *e, const ek_etm4_enc_ctx *ctx)
{
    ek_etm4_enc_flush(e);
    size_t st = e->len;
    ek_etm4_enc_pkt p = {.kind = EK_ENC_CTXT, .ctx = *ctx};
    if (!ctx_differs(e, ctx)) {
        put(e, 0x80);
    } else {
        put(e, 0x81);
        put_ctx_info(e, ctx);
    }
    report(e, &p, st);
}

/* ---- exceptions ---- */

void ek_etm4_enc_exception(ek_etm4_enc *e, unsigned type, uint64_t ret_addr)
{
    ek_etm4_enc_flush(e);
    size_t st = e->len;
    put(e, 0x06);
    put(e, (uint8_t)(((type & 0x1F) << 1) | 1)); /* E0 = 1: the return address follows */
    ek_etm4_enc_pkt p = {.kind = EK_ENC_EXCEPT, .exc_type = type, .addr = ret_addr};
    report(e, &p, st);
    ek_etm4_enc_address(e, ret_addr, NULL);
}

void ek_etm4_enc_exception_return(ek_etm4_enc *e)
{
    /* ETE has no Exception Return packet (0x07 is a reserved header there): an ERET is traced
     * as the indirect branch it is */
    if (e->ete) return;
    ek_etm4_enc_flush(e);
    simple(e, EK_ENC_EXCEPT_RTN, 0x07);
}

/* ---- timing ---- */

void ek_etm4_enc_timestamp(ek_etm4_enc *e, uint64_t ts, uint32_t cc)
{
    ek_etm4_enc_flush(e);
    size_t st = e->len;
    put(e, e->cc_trace ? 0x03 : 0x02);
    unsigned n = 1;
    if (!e->ts_valid) {
        while (n < 9 && (ts >> (7 * n)))
            n++;
    } else {
        while (n < 9 && (ts >> (7 * n)) != (e->ts >> (7 * n)))
            n++;
        if (n >= 7)
            while (n < 9 && (ts >> (7 * n)))
                n++;
    }
    for (unsigned i = 0; i < n; i++) {
        uint8_t b = (uint8_t)((ts >> (7 * i)) & 0x7F);
        if (i + 1 < n) b |= 0x80;
        put(e, b);
    }
    if (e->cc_trace) {
        cc &= (1u << e->cc_bits) - 1;
        put_cont(e, cc, 3);
    }
    e->ts = ts;
    e->ts_valid = 1;
    ek_etm4_enc_pkt p = {.kind = EK_ENC_TIMESTAMP, .ts = ts, .cc = cc};
    report(e, &p, st);
}

void ek_etm4_enc_cycle_count(ek_etm4_enc *e, uint32_t cc)
{
    ek_etm4_enc_flush(e);
    size_t st = e->len;
    put(e, 0x0E); /* format 1, count present; no commit section (TRCIDR0.COMMOPT = 1) */
    put_cont(e, cc >= e->cc_threshold ? cc - e->cc_threshold : 0, 3);
    ek_etm4_enc_pkt p = {.kind = EK_ENC_CYCLE_COUNT, .cc = cc};
    report(e, &p, st);
}

void ek_etm4_enc_overflow(ek_etm4_enc *e)
{
    ek_etm4_enc_flush(e);
    size_t st = e->len;
    put(e, 0x00);
    put(e, 0x05);
    ek_etm4_enc_pkt p = {.kind = EK_ENC_OVERFLOW};
    report(e, &p, st);
}
