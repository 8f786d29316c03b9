/* What the PTM (PFT) and ETMv3 packet lines share: the Armv7 protocols' pieces of OpenCSD's
 * packet printers (ptm_list.c, etm3_list.c), their tables of names in v7_list.c. Internal to
 * src/output. */
#ifndef ETMKIT_OUTPUT_V7_LIST_H
#define ETMKIT_OUTPUT_V7_LIST_H

#include <stdint.h>

#include "wr.h"

/* "ISA=ARM(32); ", "ISA=Thumb2; ", ... (an ek_isa_set) */
void v7_isa(wr *w, unsigned isa);
/* The A/R-profile exception names by number (0-15): "No Exception", "Debug Halt", ... */
extern const char *const v7_exception_names[16];
/* An I-Sync's reason (0-3): "Periodic", "Trace Enable", "Restart Overflow", "Debug Exit" */
extern const char *const v7_isync_reasons[4];

/* A branch address packet's address and what changed with it: "Addr=<value>; " (32 bits:
 * valid_bits known, pkt_bits from this packet), the ISA when it is not prev_isa, and with a
 * context update the security state ("NS; " or "S; ") and "Hyp; ". */
void v7_branch_addr(wr *w, unsigned valid_bits, uint64_t addr, unsigned pkt_bits, unsigned isa,
                    unsigned prev_isa, int ctx_updated, int ns, int hyp);

/* An I-Sync's "(<reason>); " and, after its address, its security state and Hyp ("NS; "/"S; ",
 * then "Hyp; " or " "). */
void v7_isync_reason(wr *w, unsigned reason);
void v7_isync_state(wr *w, int ns, int hyp);

#endif
