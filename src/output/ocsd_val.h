/* OpenCSD's printing helpers for the protocol listings in src/output: the printable-value
 * helper (trcPrintableElem::getValStr: total and valid bit widths, '?' for digits not yet known,
 * the bit range when not all bits are known, and the bits this packet updated) and the start
 * of a packet line. Internal to src/output. */
#ifndef ETMKIT_OUTPUT_OCSD_VAL_H
#define ETMKIT_OUTPUT_OCSD_VAL_H

#include "wr.h"

static inline void ocsd_val_str(wr *w, unsigned total_bits, unsigned valid_bits, uint64_t v,
                                unsigned update_bits)
{
    const unsigned nhex = total_bits / 4 + (total_bits % 4 ? 1 : 0);
    const unsigned nvalid = valid_bits / 4 + (valid_bits % 4 ? 1 : 0);
    wr_n(w, "0x", 2);
    for (unsigned i = nvalid; i < nhex; i++)
        wr_c(w, '?');
    wr_hex(w, valid_bits > 32 ? v : (uint32_t)v, nvalid, 1);
    if (valid_bits < total_bits) {
        wr_n(w, " (", 2);
        if (valid_bits)
            wr_dec(w, valid_bits - 1);
        else
            wr_n(w, "-1", 2);
        wr_n(w, ":0)", 3);
    }
    if (update_bits) {
        const uint64_t mask = update_bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << update_bits) - 1;
        wr_n(w, " ~[0x", 5);
        wr_hex(w, v & mask, 0, 1);
        wr_c(w, ']');
    }
}

/* The start of a trc_pkt_lister packet line (OpenCSD's packet printer): with the raw bytes (a
 * packet monitor's) "Idx:N; ID:X; [0xNN 0xNN ];\t", else "Idx:N; ID:X;\t". The caller's
 * wr_begin room holds them (packets of the protocols that use it are short; swt_list.c makes
 * room for its long ones and adds fill bytes, from the same two pieces). */
static inline void ocsd_pkt_idx(wr *w, uint64_t index, unsigned trace_id)
{
    wr_lit(w, "Idx:");
    wr_dec(w, index);
    wr_lit(w, "; ID:");
    wr_hex(w, trace_id, 0, 0);
}

static inline void ocsd_raw_bytes(wr *w, const uint8_t *raw, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        wr_lit(w, "0x");
        wr_hex2(w, raw[i]);
        wr_c(w, ' ');
    }
}

static inline void ocsd_pkt_head(wr *w, uint64_t index, unsigned trace_id, const uint8_t *raw,
                                 unsigned size, int with_raw)
{
    ocsd_pkt_idx(w, index, trace_id);
    if (!with_raw) {
        wr_lit(w, ";\t");
        return;
    }
    wr_lit(w, "; [");
    ocsd_raw_bytes(w, raw, size);
    wr_lit(w, "];\t");
}

#endif
