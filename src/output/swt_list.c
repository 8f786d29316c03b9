/* OpenCSD trc_pkt_lister packet lines for the software-trace protocols (STM, ITM). */
#include "etmkit/itm.h"
#include "etmkit/sbuf.h"
#include "etmkit/stm.h"
#include "ocsd_val.h"
#include "wr.h"

/* "Idx:<n>; ID:<hex>; [0xNN ...];\t" or without the raw part. */
static void line_head(wr *w, uint64_t index, unsigned trace_id, const uint8_t *raw, size_t n,
                      const uint8_t *tail, size_t ntail, size_t nfill, int with_raw)
{
    ocsd_pkt_idx(w, index, trace_id);
    if (!with_raw) {
        wr_lit(w, ";\t");
        return;
    }
    wr_lit(w, "; [");
    wr_need(w, (n + nfill) * 5 + 256); /* raw bytes, then the rest of the line */
    ocsd_raw_bytes(w, raw, n);
    for (size_t i = 0; i < nfill; i++) {
        wr_lit(w, "0x");
        wr_hex2(w, tail && i < ntail ? tail[i] : 0);
        wr_c(w, ' ');
    }
    wr_lit(w, "];\t");
}

/* ---- STM ------------------------------------------------------------------------------------ */

static void stm_name(wr *w, unsigned type, const ek_stm_packet *k, int desc)
{
    static const char *const desc_text[EK_STM_TYPE_COUNT] = {
        "STM not synchronised",
        "Incomplete packet flushed at end of trace",
        "Error type not set",
        "Invalid sequence in packet",
        "Reserved Packet Header",
        "Alignment synchronisation packet",
        "Version packet",
        "Frequency packet",
        "Null packet",
        "Trigger packet",
        "Global Error",
        "Master Error",
        "Set current master",
        "Set current channel",
        "Set current channel",
        "Flag packet",
        "4 bit data",
        "8 bit data",
        "16 bit data",
        "32 bit data",
        "64 bit data",
    };
    if (type >= EK_STM_TYPE_COUNT) {
        wr_s(w, desc ? "ERROR: unknown packet type" : "UNKNOWN");
        return;
    }
    wr_s(w, desc ? desc_text[type] : ek_stm_type_name(type));
    const int add =
        type == EK_STM_TRIG || type == EK_STM_FLAG || (type >= EK_STM_D4 && type <= EK_STM_D64);
    if (!add) return;
    if (k->marker) wr_s(w, desc ? " + marker" : "M");
    if (k->has_ts) wr_s(w, desc ? " + timestamp" : "TS");
}

void ek_list_stm_ocsd(ek_sbuf *out, const ek_stm_packet *k, unsigned trace_id, int with_raw,
                      const uint8_t *tail, size_t ntail)
{
    wr w;
    if (!wr_begin(&w, out, 256)) return;
    line_head(&w, k->index, trace_id, k->raw, k->raw_len, tail, ntail, k->overread, with_raw);
    stm_name(&w, k->type, k, 0);
    wr_c(&w, ':');
    stm_name(&w, k->type, k, 1);
    switch (k->type) {
    case EK_STM_INCOMPLETE_EOT:
    case EK_STM_BAD_SEQUENCE:
        wr_c(&w, '[');
        stm_name(&w, k->err_type, k, 0);
        wr_c(&w, ']');
        break;
    case EK_STM_VERSION:
        wr_lit(&w, "; Ver=");
        wr_dec(&w, k->payload & 0xFF);
        break;
    case EK_STM_FREQ:
        wr_lit(&w, "; Freq=");
        wr_dec(&w, k->payload & 0xFFFFFFFFu);
        wr_lit(&w, "Hz");
        break;
    case EK_STM_TRIG:
        wr_lit(&w, "; TrigData=0x");
        wr_hex(&w, k->payload & 0xFF, 2, 0);
        break;
    case EK_STM_M8:
        wr_lit(&w, "; Master=0x");
        wr_hex(&w, k->master, 2, 0);
        break;
    case EK_STM_C8:
    case EK_STM_C16:
        wr_lit(&w, "; Chan=0x");
        wr_hex(&w, k->channel, 4, 0);
        break;
    case EK_STM_D4:
        wr_lit(&w, "; Data=0x");
        wr_hex(&w, k->payload & 0xF, 1, 0);
        break;
    case EK_STM_D8:
        wr_lit(&w, "; Data=0x");
        wr_hex(&w, k->payload & 0xFF, 2, 0);
        break;
    case EK_STM_D16:
        wr_lit(&w, "; Data=0x");
        wr_hex(&w, k->payload & 0xFFFF, 4, 0);
        break;
    case EK_STM_D32:
        wr_lit(&w, "; Data=0x");
        wr_hex(&w, k->payload & 0xFFFFFFFFu, 8, 0);
        break;
    case EK_STM_D64:
        wr_lit(&w, "; Data=0x");
        wr_hex(&w, k->payload, 16, 0);
        break;
    default: break;
    }
    if (k->has_ts) {
        /* OpenCSD's 64-bit value printer: all digits, then the bits this packet updated */
        wr_lit(&w, "; TS=0x");
        wr_hex(&w, k->timestamp, 16, 1);
        if (k->ts_bits) {
            const uint64_t mask = k->ts_bits >= 64 ? ~(uint64_t)0 : (1ull << k->ts_bits) - 1;
            wr_lit(&w, " ~[0x");
            wr_hex(&w, k->timestamp & mask, 0, 1);
            wr_c(&w, ']');
        }
    }
    wr_c(&w, '\n');
    wr_end(&w);
}

/* ---- ITM ------------------------------------------------------------------------------------ */

static const char *const itm_desc[EK_ITM_PKT_TYPE_COUNT] = {
    "ITM data stream not synchronised",
    "Incomplete packet flushed at end of trace",
    "ERROR: unknown packet type",
    "Invalid sequence in packet",
    "Reserved Packet Header",
    "Alignment synchronisation packet",
    "ITM overflow packet",
    "Software Stimulus write packet",
    "DWT hardware stimulus write",
    "Local Timestamp",
    "Global Timestamp [25:0]",
    "Global Timestamp [{63|42}:26]",
    "Extension packet",
};

static void itm_val(wr *w, const ek_itm_packet *k)
{
    wr_lit(w, "0x");
    if (k->val_sz <= 4) {
        wr_hex(w, k->value, k->val_sz * 2u, 0);
    } else {
        wr_hex(w, k->val_ext, 2, 0);
        wr_hex(w, k->value, 8, 0);
    }
}

static void itm_dwt(wr *w, const ek_itm_packet *k)
{
    static const char *const exc_fn[4] = {"reserved", "entered", "exited", "returned to"};
    static const char *const ecnt[6] = {" CPI ", " EXC ", " Sleep ", " LSU ", " Fold ", " CYC "};
    const unsigned s = k->src_id;
    if (s == 0) {
        wr_lit(w, "[Event Counter: 0x");
        wr_hex(w, k->value, 2, 0);
        wr_lit(w, "; Flags: ");
        for (unsigned i = 0; i < 6; i++)
            wr_s(w, (k->value >> i) & 1 ? ecnt[i] : " --- ");
        wr_lit(w, "] ");
    } else if (s == 1) {
        wr_lit(w, "[Exception Num:  0x");
        wr_hex(w, k->value & 0x1FF, 4, 0);
        wr_c(w, '(');
        wr_s(w, exc_fn[(k->value >> 12) & 3]);
        wr_lit(w, ") ]");
    } else if (s == 2) {
        wr_lit(w, "[PC Sample: ");
        itm_val(w, k);
        wr_lit(w, "] ");
    } else if (s >= 8 && s <= 23) {
        const unsigned type = (s >> 3) & 3, rw = s & 1, comp = (s >> 1) & 3;
        wr_lit(w, "[Data Trc: comp=");
        wr_dec(w, comp);
        if (type == 1) {
            wr_s(w, rw ? "; Address=" : "; PC Value=");
            itm_val(w, k);
            wr_lit(w, " ] ");
        } else {
            wr_s(w, rw ? "; Val write: " : "; Val read: ");
            itm_val(w, k);
            wr_lit(w, "] ");
        }
    } else {
        wr_lit(w, "[Reserved discriminator value] ");
    }
}

void ek_list_itm_ocsd(ek_sbuf *out, const ek_itm_packet *k, unsigned trace_id, int with_raw)
{
    static const char *const tc[4] = {"TS Sync", "TS Delayed", "TS Sync, Packet Delayed",
                                      "TS Delayed, Packet Delayed"};
    static const unsigned gts1_bits[4] = {6, 13, 20, 25};
    wr w;
    if (!wr_begin(&w, out, 256)) return;
    line_head(&w, k->index, trace_id, k->raw, k->raw_len, NULL, 0, 0, with_raw);
    const unsigned t = k->type < EK_ITM_PKT_TYPE_COUNT ? k->type : EK_ITM_PKT_NO_ERR_TYPE;
    wr_s(&w, ek_itm_type_name(t));
    wr_lit(&w, ": ");
    switch (t) {
    case EK_ITM_PKT_SWIT:
        wr_lit(&w, "{src id: 0x");
        wr_hex(&w, k->src_id, 2, 0);
        wr_lit(&w, "}  ");
        itm_val(&w, k);
        break;
    case EK_ITM_PKT_DWT:
        wr_lit(&w, "{desc: 0x");
        wr_hex(&w, k->src_id, 2, 0);
        wr_lit(&w, "} ");
        itm_dwt(&w, k);
        break;
    case EK_ITM_PKT_TS_LOCAL:
        itm_val(&w, k);
        wr_lit(&w, " { ");
        wr_s(&w, tc[k->src_id & 3]);
        wr_lit(&w, " }");
        break;
    case EK_ITM_PKT_TS_GLOBAL_1:
        wr_lit(&w, "{ TS bits [");
        wr_dec(&w, k->val_sz >= 1 && k->val_sz <= 4 ? gts1_bits[k->val_sz - 1] : 25);
        wr_lit(&w, ":0]");
        if (k->src_id & 1) wr_lit(&w, ", Clk change");
        if (k->src_id & 2) wr_lit(&w, ", Clk wrap");
        wr_lit(&w, "} ");
        itm_val(&w, k);
        break;
    case EK_ITM_PKT_TS_GLOBAL_2:
        wr_s(&w, k->val_sz == 5 ? "{ TS bits [63:26]} " : "{ TS bits [47:26]} ");
        itm_val(&w, k);
        break;
    case EK_ITM_PKT_EXTENSION: {
        const unsigned bits = (k->src_id & 0x1Fu) + 1;
        if (bits == 3 && !(k->src_id & 0x80)) {
            wr_lit(&w, "{stim port page} 0x");
            wr_hex(&w, k->value, 2, 0);
        } else {
            wr_lit(&w, "{unknown extension type, ");
            wr_dec(&w, bits);
            wr_lit(&w, " bits } 0x");
            wr_hex(&w, k->value, bits / 4 + 1, 0);
        }
        break;
    }
    case EK_ITM_PKT_INCOMPLETE_EOT:
    case EK_ITM_PKT_BAD_SEQUENCE:
        wr_lit(&w, "[Init type: ");
        wr_s(&w, ek_itm_type_name(k->err_type));
        wr_lit(&w, "] ");
        break;
    default: break;
    }
    wr_lit(&w, "; '");
    wr_s(&w, itm_desc[t]);
    wr_lit(&w, "'\n");
    wr_end(&w);
}
