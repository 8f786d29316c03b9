/* OpenCSD's printable-value helper (trcPrintableElem::getValStr) for the protocol listings in
 * src/output: total and valid bit widths, '?' for digits not yet known, the bit range when not
 * all bits are known, and the bits this packet updated. Internal to src/output. */
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

#endif
