/* ITM packet parser and decoder. See etmkit/itm.h. */
#include <string.h>

#include "etmkit/etmkit.h"
#include "etmkit/itm.h"

enum { S_WAIT_SYNC = 0, S_HDR, S_DATA, S_SEND };

void ek_itm_parser_reset(ek_itm_parser *p)
{
    const uint8_t id = p->trace_id, flags = p->flags;
    memset(p, 0, sizeof *p);
    p->trace_id = id;
    p->flags = flags;
    p->state = S_WAIT_SYNC;
    p->ws_fresh = 1;
    if (flags & EK_ITM_ASSUME_SYNC) { /* a packet header first, as after an A-Sync */
        p->synced = 1;
        p->state = S_HDR;
    }
    p->pkt.type = EK_ITM_PKT_RESERVED;
    p->pkt.err_type = EK_ITM_PKT_NO_ERR_TYPE;
}

void ek_itm_parser_init_flags(ek_itm_parser *p, uint8_t trace_id, unsigned flags)
{
    p->trace_id = trace_id;
    p->flags = (uint8_t)(flags & EK_ITM_ASSUME_SYNC);
    ek_itm_parser_reset(p);
}

void ek_itm_parser_init(ek_itm_parser *p, uint8_t trace_id)
{
    ek_itm_parser_init_flags(p, trace_id, 0);
}

void ek_itm_feed(ek_itm_parser *p, const uint8_t *data, size_t len, uint64_t index)
{
    p->in = data;
    p->in_len = len;
    p->in_used = 0;
    p->in_index = index;
    p->ws_fresh = 1;
}

static int read_byte(ek_itm_parser *p, uint8_t *b)
{
    if (p->in_used >= p->in_len || p->sync_hit) return 0;
    *b = p->in[p->in_used++];
    if (p->flags & EK_ITM_ASSUME_SYNC) { /* an A-Sync anywhere: 47 zero bits, then a one */
        if (*b == 0x00) {
            if (p->zrun < 0xFF) p->zrun++;
        } else {
            p->sync_hit = *b == 0x80 && p->zrun >= 5;
            p->zrun = 0;
        }
    }
    if (p->len < EK_ITM_MAX_RAW) p->data[p->len] = *b;
    p->len++; /* counted even past the record (a damaged run of zeros) */
    return 1;
}

static void new_packet(ek_itm_parser *p)
{
    p->len = 0;
    p->pkt.type = EK_ITM_PKT_RESERVED;
    p->pkt.src_id = 0;
    p->pkt.value = 0;
    p->pkt.val_sz = 0;
    p->pkt.val_ext = 0;
    p->pkt.err_type = EK_ITM_PKT_NO_ERR_TYPE;
}

static void set_value(ek_itm_packet *k, uint32_t v, unsigned size)
{
    static const uint32_t masks[4] = {0xFF, 0xFFFF, 0xFFFFFF, 0xFFFFFFFF};
    if (size < 1 || size > 4) size = 4;
    k->val_sz = (uint8_t)size;
    k->value = v & masks[size - 1];
}

static const ek_itm_packet *emit_raw(ek_itm_parser *p, unsigned nbytes, unsigned flags)
{
    p->out = p->pkt;
    const unsigned n = nbytes < EK_ITM_MAX_RAW ? nbytes : EK_ITM_MAX_RAW;
    memcpy(p->out_raw, p->data, n);
    p->out.raw = p->out_raw;
    p->out.raw_len = (uint16_t)n;
    p->out.flags = (uint8_t)flags;
    return &p->out;
}

/* Report the unsynchronised bytes counted so far (only the first report reaches a decoder). */
static const ek_itm_packet *flush_unsynced(ek_itm_parser *p)
{
    unsigned flags = p->dump ? EK_ITM_PF_LIST : 0;
    if (!p->sent_notsync) {
        flags |= EK_ITM_PF_DECODE;
        p->sent_notsync = 1;
    }
    const ek_itm_packet *k = emit_raw(p, p->dump, flags);
    if (p->len <= p->dump) {
        p->len = 0;
    } else {
        const uint32_t keep = p->len - p->dump;
        const uint32_t have = p->len < EK_ITM_MAX_RAW ? p->len : EK_ITM_MAX_RAW;
        if (p->dump < have) memmove(p->data, p->data + p->dump, have - p->dump);
        p->len = keep;
    }
    p->dump = 0;
    return k;
}

/* A-Sync: at least 5 zero bytes (header included), more zeros, then 0x80. Returns 1 when
 * complete, 0 when more bytes are needed or *err when it is not an A-Sync. */
static int read_async(ek_itm_parser *p, int *err)
{
    uint8_t b;
    *err = 0;
    while (p->len < 5) {
        if (!read_byte(p, &b)) return 0;
        if (b != 0x00) {
            *err = 1;
            return 0;
        }
    }
    for (;;) {
        if (!read_byte(p, &b)) return 0;
        if (b == 0x80) return 1;
        if (b != 0x00) {
            *err = 1;
            return 0;
        }
    }
}

/* Out of sync. Returns a NOTSYNC packet to report, or NULL (state may now be S_SEND with an
 * A-Sync, or the block is used up). */
static const ek_itm_packet *wait_sync(ek_itm_parser *p)
{
    if (p->ws_fresh) {
        p->ws_fresh = 0;
        p->pkt.type = EK_ITM_PKT_NOTSYNC;
        p->dump = 0;
        if (!p->sync_start) p->pkt.index = p->in_index + p->in_used;
    }
    while (!p->synced && p->in_used < p->in_len) {
        if (p->sync_start) {
            int err;
            if (read_async(p, &err)) {
                p->synced = 1;
                p->pkt.type = EK_ITM_PKT_ASYNC;
                p->state = S_SEND;
                return NULL;
            }
            if (err) {
                p->dump = p->len;
                p->sync_start = 0;
            }
        }
        if (!p->sync_start) {
            uint8_t b;
            if (!read_byte(p, &b)) break;
            if (b == 0x00) {
                p->sync_start = 1;
                const ek_itm_packet *k = flush_unsynced(p);
                p->pkt.index = p->in_index + p->in_used - 1;
                return k;
            }
            if (++p->dump >= 8) return flush_unsynced(p);
        }
    }
    if (!p->synced && !p->sync_start && p->in_used >= p->in_len && !p->ws_fresh) {
        p->ws_fresh = 2; /* reported; a new block starts a new search */
        return flush_unsynced(p);
    }
    return NULL;
}

static void bad_sequence(ek_itm_parser *p)
{
    p->pkt.err_type = p->pkt.type;
    p->pkt.type = EK_ITM_PKT_BAD_SEQUENCE;
    p->state = S_SEND;
}

/* Continuation bytes (bit 7 = more) up to 'limit' packet bytes: 1 when the last one is in. */
static int read_cont(ek_itm_parser *p, uint32_t limit)
{
    uint8_t b;
    while (p->len < limit) {
        if (!read_byte(p, &b)) return 0;
        if (!(b & 0x80)) return 1;
    }
    return 0;
}

static uint64_t cont_value(const ek_itm_parser *p)
{
    uint64_t v = 0;
    for (uint32_t i = 1, sh = 0; i < p->len && i < EK_ITM_MAX_RAW; i++, sh += 7)
        v |= (uint64_t)(p->data[i] & 0x7F) << sh;
    return v;
}

static void header(ek_itm_parser *p)
{
    uint8_t h;
    if (!read_byte(p, &h)) return;
    p->hdr = h;
    ek_itm_packet *k = &p->pkt;
    if (h & 0x03) {
        k->type = (h & 0x04) ? EK_ITM_PKT_DWT : EK_ITM_PKT_SWIT;
        k->src_id = (h >> 3) & 0x1F;
        p->state = S_DATA;
    } else if ((h & 0x0F) == 0) {
        if ((h & 0xF0) == 0) {
            k->type = EK_ITM_PKT_ASYNC;
            p->state = S_DATA;
        } else if ((h & 0xF0) == 0x70) {
            k->type = EK_ITM_PKT_OVERFLOW;
            p->state = S_SEND;
        } else {
            k->type = EK_ITM_PKT_TS_LOCAL;
            p->state = S_DATA;
        }
    } else if ((h & 0x0B) == 0x08) {
        k->type = EK_ITM_PKT_EXTENSION;
        p->state = S_DATA;
    } else if ((h & 0xDF) == 0x94) {
        k->type = (h & 0x20) ? EK_ITM_PKT_TS_GLOBAL_2 : EK_ITM_PKT_TS_GLOBAL_1;
        p->state = S_DATA;
    } else {
        k->type = EK_ITM_PKT_RESERVED;
        p->state = S_SEND;
    }
}

static void data(ek_itm_parser *p)
{
    ek_itm_packet *k = &p->pkt;
    const uint8_t h = p->hdr;
    uint8_t b;
    switch (k->type) {
    case EK_ITM_PKT_SWIT:
    case EK_ITM_PKT_DWT: {
        const uint32_t want = (h & 3) == 3 ? 4 : (h & 3);
        while (p->len - 1 < want)
            if (!read_byte(p, &b)) return;
        uint32_t v = p->data[1];
        if (want >= 2) v |= (uint32_t)p->data[2] << 8;
        if (want == 4) v |= (uint32_t)p->data[3] << 16 | (uint32_t)p->data[4] << 24;
        set_value(k, v, want);
        p->state = S_SEND;
        break;
    }
    case EK_ITM_PKT_TS_LOCAL:
        if (p->len == 1) {
            if (h & 0x80) {
                k->src_id = (h >> 4) & 3;
            } else { /* one byte: the value is in the header, TC = 0 */
                k->src_id = 0;
                set_value(k, (h >> 4) & 7, 1);
                p->state = S_SEND;
                return;
            }
        }
        if (read_cont(p, 5)) {
            set_value(k, (uint32_t)cont_value(p), p->len - 1);
            p->state = S_SEND;
        } else if (p->len == 5) {
            bad_sequence(p);
        }
        break;
    case EK_ITM_PKT_TS_GLOBAL_1:
        if (read_cont(p, 5)) {
            if (p->len == 5) { /* bits 6:5 of the fourth payload byte: wrap, clock change */
                k->src_id = (p->data[4] >> 5) & 3;
                p->data[4] &= 0x1F;
            }
            set_value(k, (uint32_t)cont_value(p), p->len - 1);
            p->state = S_SEND;
        } else if (p->len == 5) {
            bad_sequence(p);
        }
        break;
    case EK_ITM_PKT_TS_GLOBAL_2:
        if (read_cont(p, 7)) {
            if (p->len <= 5) {
                set_value(k, (uint32_t)cont_value(p), p->len - 1);
            } else {
                const uint64_t v = cont_value(p);
                k->value = (uint32_t)v;
                k->val_ext = (uint8_t)(v >> 32);
                k->val_sz = 5;
            }
            p->state = S_SEND;
        } else if (p->len == 7) {
            bad_sequence(p);
        }
        break;
    case EK_ITM_PKT_EXTENSION: {
        static const uint8_t nbits[5] = {2, 9, 16, 23, 31};
        if ((h & 0x80) == 0 || read_cont(p, 5)) {
            uint8_t sid = nbits[p->len - 1];
            if (h & 0x04) sid |= 0x80;
            k->src_id = sid;
            uint32_t v = 0;
            if (p->len > 1) v = (uint32_t)cont_value(p) << 3;
            v |= (h >> 4) & 7;
            set_value(k, v, 4);
            p->state = S_SEND;
        } else if (p->len == 5) {
            bad_sequence(p);
        }
        break;
    }
    case EK_ITM_PKT_ASYNC: {
        int err;
        if (read_async(p, &err))
            p->state = S_SEND;
        else if (err)
            bad_sequence(p);
        break;
    }
    default: break;
    }
}

static const ek_itm_packet *emit(ek_itm_parser *p)
{
    unsigned flags = EK_ITM_PF_LIST | EK_ITM_PF_DECODE;
    const unsigned t = p->pkt.type;
    if (t == EK_ITM_PKT_BAD_SEQUENCE || t == EK_ITM_PKT_RESERVED || t == EK_ITM_PKT_INCOMPLETE_EOT)
        flags |= EK_ITM_PF_ERROR;
    const ek_itm_packet *k = emit_raw(p, p->len, flags);
    new_packet(p);
    p->state = p->synced ? S_HDR : S_WAIT_SYNC;
    return k;
}

int ek_itm_next(ek_itm_parser *p, const ek_itm_packet **pkt)
{
    for (;;) {
        if (p->state != S_SEND && p->in_used >= p->in_len) {
            if (p->state == S_WAIT_SYNC && p->ws_fresh == 0 && !p->eot_done) {
                const ek_itm_packet *k = wait_sync(p);
                if (k) {
                    *pkt = k;
                    return 1;
                }
            }
            if (p->eot_done == 1) {
                p->eot_done = 2;
                if (p->state == S_DATA) {
                    p->pkt.err_type = p->pkt.type;
                    p->pkt.type = EK_ITM_PKT_INCOMPLETE_EOT;
                    *pkt = emit(p);
                    return 1;
                }
            }
            return 0;
        }
        switch (p->state) {
        case S_WAIT_SYNC: {
            const ek_itm_packet *k = wait_sync(p);
            if (k) {
                *pkt = k;
                return 1;
            }
            break;
        }
        case S_HDR:
            p->pkt.index = p->in_index + p->in_used;
            header(p);
            if (p->state != S_DATA) break;
            /* fall through */
        case S_DATA:
            data(p);
            if (p->sync_hit) { /* EK_ITM_ASSUME_SYNC: the packet ends as the A-Sync it held */
                p->sync_hit = 0;
                p->pkt.type = EK_ITM_PKT_ASYNC;
                p->pkt.err_type = EK_ITM_PKT_NO_ERR_TYPE;
                p->state = S_SEND;
            }
            break;
        default: *pkt = emit(p); return 1;
        }
    }
}

void ek_itm_eot(ek_itm_parser *p)
{
    p->in_len = p->in_used = 0;
    if (!p->eot_done) p->eot_done = 1;
}

static const char *const names[EK_ITM_PKT_TYPE_COUNT] = {
    "ITM_NOTSYNC", "ITM_INCOMPLETE_EOT", "ITM_UNKNOWN",  "ITM_BAD_SEQUENCE", "ITM_RESERVED",
    "ITM_ASYNC",   "ITM_OVERFLOW",       "ITM_SWIT",     "ITM_DWT",          "ITM_TS_LOCAL",
    "ITM_GTS_1",   "ITM_GTS_2",          "ITM_EXTENSION"};

const char *ek_itm_type_name(unsigned type)
{
    return type < EK_ITM_PKT_TYPE_COUNT ? names[type] : "ITM_UNKNOWN";
}

/* ---- decoder ------------------------------------------------------------------------------ */

enum { D_NO_SYNC = 0, D_WAIT_SYNC, D_DECODE };

static void dec_reset(ek_itm_decoder *d)
{
    d->state = D_NO_SYNC;
    d->local_ts = 0;
    d->global_ts = 0;
    d->page = 0;
    d->need_gts2 = 1;
    d->prev_overflow = 0;
    d->freq_change = 0;
}

void ek_itm_decoder_init_flags(ek_itm_decoder *d, uint8_t trace_id, uint32_t tcr, unsigned flags)
{
    memset(d, 0, sizeof *d);
    d->trace_id = trace_id;
    d->prescale = 1u << (2 * ((tcr >> 8) & 3));
    d->unsync_reason = EK_UNSYNC_INIT_DECODER;
    d->assume = (flags & EK_ITM_ASSUME_SYNC) != 0;
    dec_reset(d);
}

void ek_itm_decoder_init(ek_itm_decoder *d, uint8_t trace_id, uint32_t tcr)
{
    ek_itm_decoder_init_flags(d, trace_id, tcr, 0);
}

void ek_itm_decoder_reset(ek_itm_decoder *d)
{
    /* as OpenCSD: only the reason changes, the state goes on */
    d->unsync_reason = EK_UNSYNC_RESET_DECODER;
}

static void elem_init(ek_elem *e, const ek_itm_decoder *d, uint64_t index, unsigned type)
{
    memset(e, 0, sizeof *e);
    e->index = index;
    e->trace_id = d->trace_id;
    e->type = (uint8_t)type;
}

int ek_itm_decode(ek_itm_decoder *d, const ek_itm_packet *k, ek_elem out[2])
{
    static const uint64_t low_mask[4] = {0x7F, 0x3FFF, 0x1FFFFF, 0x3FFFFFF};
    int n = 0;
    if (d->state == D_NO_SYNC) {
        elem_init(&out[n], d, k->index, EK_ELEM_NO_SYNC);
        out[n++].u.unsync_reason = d->unsync_reason;
        /* EK_ITM_ASSUME_SYNC: the first packet is decoded as if an A-Sync preceded it */
        d->state = d->assume ? D_DECODE : D_WAIT_SYNC;
        d->assume = 0;
    }
    if (d->state == D_WAIT_SYNC) {
        if (k->type == EK_ITM_PKT_ASYNC) d->state = D_DECODE;
        return n;
    }
    ek_elem e;
    elem_init(&e, d, k->index, EK_ELEM_ITMTRACE);
    int send = 0;
    switch (k->type) {
    case EK_ITM_PKT_BAD_SEQUENCE:
    case EK_ITM_PKT_RESERVED:
        d->unsync_reason = EK_UNSYNC_BAD_PACKET;
        if (d->compat & EK_ITM_OCSD_FATAL) {
            dec_reset(d);
            return EK_ERR_BAD_PACKET; /* OpenCSD: OCSD_RESP_FATAL_INVALID_DATA */
        }
        /* fall through */
    case EK_ITM_PKT_NOTSYNC: dec_reset(d); break;
    case EK_ITM_PKT_DWT:
    case EK_ITM_PKT_SWIT:
        e.u.itm.kind = k->type == EK_ITM_PKT_DWT ? EK_ITM_DWT : EK_ITM_SWIT;
        e.u.itm.size = k->val_sz;
        e.u.itm.value = k->value;
        e.u.itm.port =
            k->type == EK_ITM_PKT_DWT ? k->src_id : (uint16_t)((k->src_id & 0x1F) | d->page << 5);
        send = 1;
        break;
    case EK_ITM_PKT_EXTENSION:
        if (!(k->src_id & 0x80) && (k->src_id & 0x1F) == 2) d->page = (uint8_t)k->value;
        break;
    case EK_ITM_PKT_OVERFLOW:
        d->local_ts = 0;
        d->prev_overflow = 1;
        break;
    case EK_ITM_PKT_TS_GLOBAL_1:
        if (!d->need_gts2) d->need_gts2 = (k->src_id & 2) != 0;
        if (!d->freq_change) d->freq_change = (k->src_id & 1) != 0;
        if (k->val_sz >= 1 && k->val_sz <= 4) {
            d->global_ts &= ~low_mask[k->val_sz - 1];
            d->global_ts |= k->value;
        }
        if (!d->need_gts2) {
            e.u.itm.kind = EK_ITM_TS_GLOBAL;
            e.timestamp = d->global_ts;
            if (d->freq_change) e.flags |= EK_ELEMF_CPU_FREQ_CHANGE;
            d->freq_change = 0;
            send = 1;
        }
        break;
    case EK_ITM_PKT_TS_GLOBAL_2: {
        const uint64_t ext = k->val_sz < 5 ? k->value : (uint64_t)k->val_ext << 32 | k->value;
        e.u.itm.kind = EK_ITM_TS_GLOBAL;
        d->global_ts &= low_mask[3];
        d->global_ts |= ext << 26;
        e.timestamp = d->global_ts;
        if (d->freq_change) e.flags |= EK_ELEMF_CPU_FREQ_CHANGE;
        d->freq_change = 0;
        d->need_gts2 = 0;
        send = 1;
        break;
    }
    case EK_ITM_PKT_TS_LOCAL:
        e.u.itm.kind = (uint8_t)(EK_ITM_TS_SYNC + (k->src_id & 3));
        e.u.itm.size = k->val_sz;
        e.u.itm.value = k->value;
        d->local_ts += (uint64_t)k->value * d->prescale;
        e.timestamp = d->local_ts;
        send = 1;
        break;
    default: break; /* ASYNC, INCOMPLETE_EOT */
    }
    if (send) {
        if (d->prev_overflow) {
            e.u.itm.overflow = 1;
            d->prev_overflow = 0;
        }
        out[n++] = e;
    }
    return n;
}

void ek_itm_decode_eot(ek_itm_decoder *d, uint64_t index, ek_elem *out)
{
    elem_init(out, d, index, EK_ELEM_EO_TRACE);
    out->u.unsync_reason = EK_UNSYNC_EOT;
}
