/* STM (STPv2) packet parser and software-trace decoder. See etmkit/stm.h. */
#include <string.h>

#include "etmkit/etmkit.h"
#include "etmkit/stm.h"

enum { S_WAIT_SYNC = 0, S_HDR, S_DATA, S_SEND };

/* What the packet being assembled is (the parser's continuation). */
enum {
    OP_NONE = 0,
    OP_NULL,
    OP_NULL_TS,
    OP_M8,
    OP_MERR,
    OP_C8,
    OP_C16,
    OP_GERR,
    OP_D4,
    OP_D8,
    OP_D16,
    OP_D32,
    OP_D64,
    OP_FLAG_TS,
    OP_FLAG,
    OP_F_EXT,  /* 0xF: the second header nibble is pending */
    OP_F0_EXT, /* 0xF0: the third header nibble is pending */
    OP_ASYNC,
    OP_VERSION,
    OP_TRIG,
    OP_FREQ,
    OP_TS, /* the time stamp of a packet that has one */
};

static void raw_push(ek_stm_parser *p, uint8_t b)
{
    if (p->raw_len < EK_STM_MAX_RAW) p->raw[p->raw_len++] = b;
}

static void clear_sync(ek_stm_parser *p)
{
    p->num_f = 0;
    p->sync_start = 0;
    p->is_sync = 0;
}

/* Count 0xF nibbles towards an ASYNC (21 x 0xF then 0x0); remember where it started. */
static void check_sync(ek_stm_parser *p)
{
    if (p->nib != 0xF) {
        if (!p->sync_start) return;
        if (p->nib == 0 && p->num_f >= 21) {
            p->is_sync = 1;
            p->num_f = 21; /* any extra 0xF nibbles count as unsynchronised data */
        } else {
            clear_sync(p);
        }
        return;
    }
    p->num_f++;
    if (!p->sync_start) {
        p->sync_start = 1;
        /* the byte this nibble came from (nibbles are not carried over a block boundary), or
         * OpenCSD's count, which includes a cleared run's nibbles from the previous block */
        p->sync_index = (p->compat & EK_STM_OCSD_SYNC_INDEX)
                            ? p->pkt.index + (uint8_t)(p->num_nibbles - 1) / 2
                            : p->in_index + p->in_used - 1;
    }
}

static int read_nib(ek_stm_parser *p)
{
    if (p->nib2_valid) {
        p->nib = p->nib2;
        p->nib2_valid = 0;
    } else if (p->in_used < p->in_len) {
        const uint8_t b = p->in[p->in_used++];
        if (!p->save_suppressed) raw_push(p, b);
        p->nib = b & 0xF;
        p->nib2 = b >> 4;
        p->nib2_valid = 1;
    } else {
        return 0;
    }
    p->num_nibbles++;
    check_sync(p);
    return 1;
}

static void init_next(ek_stm_parser *p)
{
    p->needs_ts = 0;
    p->num_nibbles = 0;
    p->num_data_nibbles = 0;
    p->pkt.err_type = EK_STM_NO_ERR_TYPE;
    p->pkt.ts_bits = 0;
    p->pkt.marker = 0;
    p->pkt.has_ts = 0;
    p->pkt.overread = 0;
}

void ek_stm_parser_reset(ek_stm_parser *p)
{
    const uint8_t id = p->trace_id, compat = p->compat;
    memset(p, 0, sizeof *p);
    p->trace_id = id;
    p->compat = compat;
    p->state = S_WAIT_SYNC;
    p->pkt.type = EK_STM_NOTSYNC;
    p->ts_type = EK_STM_TS_UNKNOWN;
    init_next(p);
}

void ek_stm_parser_init(ek_stm_parser *p, uint8_t trace_id)
{
    p->trace_id = trace_id;
    p->compat = 0;
    ek_stm_parser_reset(p);
}

void ek_stm_parser_set_compat(ek_stm_parser *p, uint8_t compat)
{
    p->compat = compat;
}

void ek_stm_feed(ek_stm_parser *p, const uint8_t *data, size_t len, uint64_t index)
{
    p->in = data;
    p->in_len = len;
    p->in_used = 0;
    p->in_index = index;
}

static void set_type(ek_stm_parser *p, unsigned type, int marker)
{
    p->pkt.type = (uint8_t)type;
    p->pkt.marker = (uint8_t)(marker != 0);
}

static void bad_sequence(ek_stm_parser *p)
{
    p->pkt.err_type = p->pkt.type;
    p->pkt.type = EK_STM_BAD_SEQUENCE;
    p->state = S_SEND;
}

static void need_ts(ek_stm_parser *p)
{
    p->needs_ts = 1;
    p->ts_req = p->ts_got = 0;
    p->ts_update = 0;
    p->ts_len_set = 0;
}

static int get8(ek_stm_parser *p, unsigned upto)
{
    while (p->num_nibbles < upto) {
        if (!read_nib(p)) return 0;
        p->val8 = (uint8_t)(p->val8 << 4 | p->nib);
    }
    return 1;
}

static int get16(ek_stm_parser *p, unsigned upto)
{
    while (p->num_nibbles < upto) {
        if (!read_nib(p)) return 0;
        p->val16 = (uint16_t)(p->val16 << 4 | p->nib);
    }
    return 1;
}

static int get32(ek_stm_parser *p, unsigned upto)
{
    while (p->num_nibbles < upto) {
        if (!read_nib(p)) return 0;
        p->val32 = p->val32 << 4 | p->nib;
    }
    return 1;
}

static int get64(ek_stm_parser *p, unsigned upto)
{
    while (p->num_nibbles < upto) {
        if (!read_nib(p)) return 0;
        p->val64 = p->val64 << 4 | p->nib;
    }
    return 1;
}

static uint64_t bin_to_gray(uint64_t v)
{
    return v ^ (v >> 1);
}

static uint64_t gray_to_bin(uint64_t g)
{
    uint64_t b = g;
    for (unsigned s = 1; s < 64; s <<= 1)
        b ^= b >> s;
    return b;
}

/* Replace the low 'bits' bits of the running time stamp. */
static void set_ts(ek_stm_packet *k, uint64_t v, unsigned bits)
{
    if (bits >= 64) {
        k->timestamp = v;
    } else {
        const uint64_t mask = (1ull << bits) - 1;
        k->timestamp = (k->timestamp & ~mask) | (v & mask);
    }
    k->ts_bits = (uint8_t)bits;
    k->has_ts = 1;
}

/* After the payload: either the time stamp follows or the packet is complete. */
static void payload_done(ek_stm_parser *p);

static void run_op(ek_stm_parser *p);

static void chain(ek_stm_parser *p, uint8_t op)
{
    p->op = op;
    run_op(p);
}

static void op_ts(ek_stm_parser *p)
{
    if (!p->ts_len_set) {
        if (!read_nib(p)) return;
        p->ts_req = p->nib == 0xD ? 14 : p->nib == 0xE ? 16 : p->nib;
        if (p->nib == 0xF) {
            bad_sequence(p);
            return;
        }
        p->ts_len_set = 1;
    }
    while (p->ts_got < p->ts_req) {
        if (!read_nib(p)) return;
        p->ts_update = p->ts_update << 4 | p->nib;
        p->ts_got++;
    }
    const unsigned bits = p->ts_req * 4u;
    if (p->ts_type == EK_STM_TS_GRAY) {
        uint64_t g = bin_to_gray(p->pkt.timestamp);
        if (bits >= 64) {
            g = p->ts_update;
        } else {
            const uint64_t mask = (1ull << bits) - 1;
            g = (g & ~mask) | (p->ts_update & mask);
        }
        set_ts(&p->pkt, gray_to_bin(g), bits);
    } else if (p->ts_type == EK_STM_TS_NATBINARY) {
        set_ts(&p->pkt, p->ts_update, bits);
    } else {
        bad_sequence(p); /* no VERSION packet yet: the encoding is unknown */
        return;
    }
    p->state = S_SEND;
}

static void payload_done(ek_stm_parser *p)
{
    if (p->needs_ts)
        chain(p, OP_TS);
    else
        p->state = S_SEND;
}

static void op_data(ek_stm_parser *p, unsigned type, unsigned first_data_nibbles)
{
    if (p->num_nibbles == 1) { /* one-nibble header: type set here */
        set_type(p, type, p->pkt.marker);
        p->num_data_nibbles = (uint8_t)first_data_nibbles;
    }
    switch (type) {
    case EK_STM_D8:
        if (!get8(p, p->num_data_nibbles)) return;
        p->pkt.payload = p->val8;
        break;
    case EK_STM_D16:
        if (!get16(p, p->num_data_nibbles)) return;
        p->pkt.payload = p->val16;
        break;
    case EK_STM_D32:
        if (!get32(p, p->num_data_nibbles)) return;
        p->pkt.payload = p->val32;
        break;
    default:
        if (!get64(p, p->num_data_nibbles)) return;
        p->pkt.payload = p->val64;
        break;
    }
    payload_done(p);
}

static void op_d4(ek_stm_parser *p)
{
    if (p->num_nibbles == 1) {
        set_type(p, EK_STM_D4, p->pkt.marker);
        p->num_data_nibbles = 2;
    }
    if (p->num_nibbles != p->num_data_nibbles) {
        if (!read_nib(p)) return;
        p->pkt.payload = p->nib;
        payload_done(p);
    }
}

/* Second header nibble of 0xFn. */
static void op_f_ext(ek_stm_parser *p)
{
    if (!read_nib(p)) return;
    switch (p->nib) {
    case 0x0: chain(p, OP_F0_EXT); break;
    case 0x2: chain(p, OP_GERR); break;
    case 0x3: chain(p, OP_C16); break;
    case 0x4:
    case 0x5:
    case 0x6:
    case 0x7: /* DnTS */
        need_ts(p);
        set_type(p, EK_STM_D8 + (p->nib - 4u), 0);
        p->num_data_nibbles = (uint8_t)(2 + (2u << (p->nib - 4)));
        chain(p, (uint8_t)(OP_D8 + (p->nib - 4)));
        break;
    case 0x8:
    case 0x9:
    case 0xA:
    case 0xB: /* DnM */
        set_type(p, EK_STM_D8 + (p->nib - 8u), 1);
        p->num_data_nibbles = (uint8_t)(2 + (2u << (p->nib - 8)));
        chain(p, (uint8_t)(OP_D8 + (p->nib - 8)));
        break;
    case 0xC: /* D4TS */
        need_ts(p);
        set_type(p, EK_STM_D4, 0);
        p->num_data_nibbles = 3;
        chain(p, OP_D4);
        break;
    case 0xD: /* D4M */
        set_type(p, EK_STM_D4, 1);
        p->num_data_nibbles = 3;
        chain(p, OP_D4);
        break;
    case 0xE:
        set_type(p, EK_STM_FLAG, 0);
        p->state = S_SEND;
        break;
    case 0xF: chain(p, OP_ASYNC); break;
    default: /* 0xF1 */
        p->pkt.payload = 0x00Fu | (unsigned)p->nib << 4;
        set_type(p, EK_STM_RESERVED, 0);
        p->state = S_SEND;
        break;
    }
}

/* Third header nibble of 0xF0n. */
static void op_f0_ext(ek_stm_parser *p)
{
    if (!read_nib(p)) return;
    switch (p->nib) {
    case 0x0: chain(p, OP_VERSION); break;
    case 0x1: chain(p, OP_NULL_TS); break;
    case 0x6: chain(p, OP_TRIG); break;
    case 0x7:
        need_ts(p);
        chain(p, OP_TRIG);
        break;
    case 0x8: chain(p, OP_FREQ); break;
    default:
        p->pkt.payload = 0x00Fu | (unsigned)p->nib << 8;
        set_type(p, EK_STM_RESERVED, 0);
        p->state = S_SEND;
        break;
    }
}

static void run_op(ek_stm_parser *p)
{
    switch (p->op) {
    case OP_NULL_TS:
        need_ts(p);
        p->op = OP_NULL;
        /* fall through */
    case OP_NULL:
        set_type(p, EK_STM_NULL, 0);
        payload_done(p);
        break;
    case OP_M8:
        if (p->num_nibbles == 1) set_type(p, EK_STM_M8, 0);
        if (!get8(p, 3)) return;
        p->pkt.master = p->val8;
        p->pkt.channel = 0;
        p->state = S_SEND;
        break;
    case OP_MERR:
        if (p->num_nibbles == 1) set_type(p, EK_STM_MERR, 0);
        if (!get8(p, 3)) return;
        p->pkt.channel = 0;
        p->pkt.payload = p->val8;
        p->state = S_SEND;
        break;
    case OP_C8:
        if (p->num_nibbles == 1) set_type(p, EK_STM_C8, 0);
        if (!get8(p, 3)) return;
        p->pkt.channel = (uint16_t)((p->pkt.channel & 0xFF00u) | p->val8);
        p->state = S_SEND;
        break;
    case OP_C16:
        if (p->num_nibbles == 2) set_type(p, EK_STM_C16, 0);
        if (!get16(p, 6)) return;
        p->pkt.channel = p->val16;
        p->state = S_SEND;
        break;
    case OP_GERR:
        if (p->num_nibbles == 2) set_type(p, EK_STM_GERR, 0);
        if (!get8(p, 4)) return;
        p->pkt.payload = p->val8;
        p->pkt.master = 0;
        p->pkt.channel = 0;
        p->state = S_SEND;
        break;
    case OP_D4: op_d4(p); break;
    case OP_D8: op_data(p, EK_STM_D8, 3); break;
    case OP_D16: op_data(p, EK_STM_D16, 5); break;
    case OP_D32: op_data(p, EK_STM_D32, 9); break;
    case OP_D64: op_data(p, EK_STM_D64, 17); break;
    case OP_FLAG_TS:
        set_type(p, EK_STM_FLAG, 0);
        chain(p, OP_TS);
        break;
    case OP_F_EXT: op_f_ext(p); break;
    case OP_F0_EXT: op_f0_ext(p); break;
    case OP_ASYNC:
        while (read_nib(p)) {
            if (p->is_sync) {
                p->synced = 1;
                set_type(p, EK_STM_ASYNC, 0);
                clear_sync(p);
                p->state = S_SEND;
                return;
            }
            if (!p->sync_start) {
                bad_sequence(p);
                return;
            }
        }
        break;
    case OP_VERSION:
        if (p->num_nibbles == 3) set_type(p, EK_STM_VERSION, 0);
        if (!read_nib(p)) return;
        p->pkt.payload = p->nib;
        if (p->nib == 3 || p->nib == 4) {
            p->ts_type = p->nib == 3 ? EK_STM_TS_NATBINARY : EK_STM_TS_GRAY;
            p->pkt.master = 0;
            p->pkt.channel = 0;
            p->state = S_SEND;
        } else {
            bad_sequence(p); /* a version this decoder does not know */
        }
        break;
    case OP_TRIG:
        if (p->num_nibbles == 3) set_type(p, EK_STM_TRIG, 0);
        if (!get8(p, 5)) return;
        p->pkt.payload = p->val8;
        payload_done(p);
        break;
    case OP_FREQ:
        if (p->num_nibbles == 3) {
            set_type(p, EK_STM_FREQ, 0);
            p->val32 = 0;
        }
        if (!get32(p, 11)) return;
        p->pkt.payload = p->val32;
        p->state = S_SEND;
        break;
    case OP_TS: op_ts(p); break;
    default: break;
    }
}

/* First header nibble. */
static uint8_t op_for_nibble(ek_stm_parser *p, uint8_t n)
{
    switch (n) {
    case 0x0: return OP_NULL;
    case 0x1: return OP_M8;
    case 0x2: return OP_MERR;
    case 0x3: return OP_C8;
    case 0x4: return OP_D8;
    case 0x5: return OP_D16;
    case 0x6: return OP_D32;
    case 0x7: return OP_D64;
    case 0x8:
    case 0x9:
    case 0xA:
    case 0xB: /* DnMTS */
        need_ts(p);
        p->pkt.marker = 1;
        return (uint8_t)(OP_D8 + (n - 8));
    case 0xC: return OP_D4;
    case 0xD: /* D4MTS */
        need_ts(p);
        p->pkt.marker = 1;
        return OP_D4;
    case 0xE: need_ts(p); return OP_FLAG_TS;
    default: return OP_F_EXT;
    }
}

/* Out of sync: look for an ASYNC; report what comes before it as NOTSYNC. */
static void wait_sync(ek_stm_parser *p)
{
    const size_t start = p->in_used;
    p->pkt.index = p->in_index + p->in_used;
    p->num_nibbles = (uint8_t)(p->is_sync ? p->num_f + 1 : p->num_f);
    p->save_suppressed = 1;
    int got = 1;
    while (got && !p->is_sync)
        got = read_nib(p);
    p->save_suppressed = 0;
    if (p->num_nibbles == 0) return;
    if (!got || p->num_nibbles > 22) {
        set_type(p, EK_STM_NOTSYNC, 0);
        /* OpenCSD lists the bytes from where the search started, counting nibbles in 8 bits */
        const uint8_t nibs = (uint8_t)(p->num_nibbles - (p->is_sync ? 22 : p->num_f));
        const uint8_t bytes = (uint8_t)(nibs / 2 + nibs % 2);
        for (unsigned i = 0; i < bytes; i++) {
            if (start + i < p->in_len)
                raw_push(p, p->in[start + i]);
            else
                p->pkt.overread++;
        }
    } else {
        set_type(p, EK_STM_ASYNC, 0);
        p->synced = 1;
        clear_sync(p);
        p->pkt.index = p->sync_index;
        for (int i = 0; i < 10; i++)
            raw_push(p, 0xFF);
        raw_push(p, 0x0F);
    }
    p->state = S_SEND;
}

static const ek_stm_packet *emit(ek_stm_parser *p)
{
    p->out = p->pkt;
    memcpy(p->out_raw, p->raw, p->raw_len);
    p->out.raw = p->out_raw;
    p->out.raw_len = p->raw_len;
    p->raw_len = 0;
    init_next(p);
    if (p->nib2_valid) raw_push(p, (uint8_t)(p->nib2 << 4)); /* the next packet's first nibble */
    p->state = p->synced ? S_HDR : S_WAIT_SYNC;
    return &p->out;
}

int ek_stm_next(ek_stm_parser *p, const ek_stm_packet **pkt)
{
    for (;;) {
        if (!(p->in_used < p->in_len || p->nib2_valid || p->state == S_SEND)) {
            if (p->eot_done == 1) {
                p->eot_done = 2;
                if (p->num_nibbles > 0) { /* a packet in flight */
                    p->pkt.err_type = p->pkt.type;
                    p->pkt.type = EK_STM_INCOMPLETE_EOT;
                    *pkt = emit(p);
                    return 1;
                }
            }
            return 0;
        }
        switch (p->state) {
        case S_WAIT_SYNC: wait_sync(p); break;
        case S_HDR:
            p->pkt.index = p->in_index + p->in_used;
            if (!read_nib(p)) break;
            p->state = S_DATA;
            p->op = op_for_nibble(p, p->nib);
            /* fall through */
        case S_DATA:
            run_op(p);
            if (p->state != S_SEND) break;
            /* fall through */
        default: *pkt = emit(p); return 1;
        }
    }
}

void ek_stm_eot(ek_stm_parser *p)
{
    p->in_len = p->in_used = 0;
    if (!p->eot_done) p->eot_done = 1;
}

static const char *const type_names[EK_STM_TYPE_COUNT] = {
    "NOTSYNC", "INCOMPLETE_EOT", "NO_ERR_TYPE", "BAD_SEQUENCE", "RESERVED", "ASYNC", "VERSION",
    "FREQ",    "NULL",           "TRIG",        "GERR",         "MERR",     "M8",    "C8",
    "C16",     "FLAG",           "D4",          "D8",           "D16",      "D32",   "D64",
};

const char *ek_stm_type_name(unsigned type)
{
    return type < EK_STM_TYPE_COUNT ? type_names[type] : "UNKNOWN";
}

/* ---- decoder ------------------------------------------------------------------------------ */

enum { D_NO_SYNC = 0, D_WAIT_SYNC, D_DECODE };

static void dec_reset_state(ek_stm_decoder *d)
{
    d->state = D_NO_SYNC;
    d->master = 0;
    d->channel = 0;
    d->id_valid = 0;
}

void ek_stm_decoder_init(ek_stm_decoder *d, uint8_t trace_id)
{
    memset(d, 0, sizeof *d);
    d->trace_id = trace_id;
    d->unsync_reason = EK_UNSYNC_INIT_DECODER;
    dec_reset_state(d);
}

void ek_stm_decoder_reset(ek_stm_decoder *d)
{
    d->unsync_reason = EK_UNSYNC_RESET_DECODER;
    dec_reset_state(d);
}

static void elem_init(ek_elem *e, const ek_stm_decoder *d, uint64_t index, unsigned type)
{
    memset(e, 0, sizeof *e);
    e->index = index;
    e->trace_id = d->trace_id;
    e->type = (uint8_t)type;
}

static unsigned payload_bits(unsigned type)
{
    switch (type) {
    case EK_STM_D4: return 4;
    case EK_STM_D8:
    case EK_STM_TRIG:
    case EK_STM_GERR:
    case EK_STM_MERR: return 8;
    case EK_STM_D16: return 16;
    case EK_STM_D32:
    case EK_STM_FREQ: return 32;
    case EK_STM_D64: return 64;
    default: return 0;
    }
}

int ek_stm_decode(ek_stm_decoder *d, const ek_stm_packet *k, ek_elem out[2])
{
    int n = 0;
    if (d->state == D_NO_SYNC) {
        elem_init(&out[n], d, k->index, EK_ELEM_NO_SYNC);
        out[n++].u.unsync_reason = d->unsync_reason;
        d->state = D_WAIT_SYNC;
    }
    if (d->state == D_WAIT_SYNC) {
        if (k->type == EK_STM_ASYNC) d->state = D_DECODE;
        return n;
    }
    unsigned flags = 0;
    int send = 0, with_payload = 0;
    switch (k->type) {
    case EK_STM_BAD_SEQUENCE:
    case EK_STM_RESERVED:
        d->unsync_reason = EK_UNSYNC_BAD_PACKET;
        if (d->compat & EK_STM_OCSD_FATAL) {
            dec_reset_state(d);
            return EK_ERR_BAD_PACKET; /* OpenCSD: OCSD_RESP_FATAL_INVALID_DATA */
        }
        /* fall through */
    case EK_STM_NOTSYNC: dec_reset_state(d); break;
    case EK_STM_VERSION:
        d->master = k->master;
        d->channel = k->channel;
        break;
    case EK_STM_NULL: send = k->has_ts; break;
    case EK_STM_FREQ:
        flags |= EK_SWT_FREQ;
        with_payload = 1;
        break;
    case EK_STM_TRIG:
        flags |= EK_SWT_TRIGGER;
        with_payload = 1;
        break;
    case EK_STM_GERR:
        d->master = k->master;
        d->channel = k->channel;
        d->id_valid = 0;
        flags |= EK_SWT_GLOBAL_ERR;
        with_payload = 1;
        break;
    case EK_STM_MERR:
        d->channel = k->channel;
        flags |= EK_SWT_MASTER_ERR;
        with_payload = 1;
        break;
    case EK_STM_M8:
        d->master = k->master;
        d->channel = k->channel;
        d->id_valid = 1;
        break;
    case EK_STM_C8:
    case EK_STM_C16: d->channel = k->channel; break;
    case EK_STM_FLAG:
        flags |= EK_SWT_MARKER;
        send = 1;
        break;
    case EK_STM_D4:
    case EK_STM_D8:
    case EK_STM_D16:
    case EK_STM_D32:
    case EK_STM_D64: with_payload = 1; break;
    default: break;
    }
    if (!send && !with_payload) return n;
    ek_elem *e = &out[n++];
    elem_init(e, d, k->index, EK_ELEM_SWTRACE);
    if (with_payload) {
        e->u.swt.payload_bits = (uint8_t)payload_bits(k->type);
        e->u.swt.payload = k->payload;
        if (k->marker) flags |= EK_SWT_MARKER;
    }
    if (k->has_ts) {
        e->timestamp = k->timestamp;
        flags |= EK_SWT_HAS_TS;
    }
    if (d->id_valid) flags |= EK_SWT_ID_VALID;
    e->u.swt.flags = (uint8_t)flags;
    e->u.swt.master = d->master;
    e->u.swt.channel = d->channel;
    return n;
}

void ek_stm_decode_eot(ek_stm_decoder *d, uint64_t index, ek_elem *out)
{
    elem_init(out, d, index, EK_ELEM_EO_TRACE);
    out->u.unsync_reason = EK_UNSYNC_EOT;
}
