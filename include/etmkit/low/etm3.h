/* ETMv3 packet parser: the bit-level API (issue 12, item 6). The state structs below are
 * allocated by the caller (stack, inside another struct) and pure: no allocation, no I/O.
 * Their fields are private and may change between versions; a program that embeds them
 * includes this header explicitly (or builds with ETMKIT_LOW_LEVEL). The packets, the
 * configuration and the names stay in etmkit/etm3.h. */
#ifndef ETMKIT_LOW_ETM3_H
#define ETMKIT_LOW_ETM3_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/etm3.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

typedef struct ek_etm3_parser {
    ek_etm3_config cfg;
    const uint8_t *in;
    size_t in_len, in_used;
    uint64_t in_index;
    uint8_t state, synced, start_of_sync, eot_done;
    /* a part of the collected bytes reported first (OpenCSD's A-Sync zero stripping) */
    uint8_t send_part, part_len, post_state, post_type;
    uint8_t part[EK_ETM3_MAX_PKT];
    /* per packet */
    uint8_t expected, br_needs_exc, isync_got_cc, isync_lsip, isync_info_idx;
    uint8_t exp_daddr, found_daddr, idx;
    uint8_t len;
    uint8_t data[EK_ETM3_MAX_PKT];
    ek_etm3_packet pkt;
    ek_etm3_packet out;
} ek_etm3_parser;

void ek_etm3_parser_init(ek_etm3_parser *p, const ek_etm3_config *cfg);
void ek_etm3_parser_reset(ek_etm3_parser *p);
void ek_etm3_feed(ek_etm3_parser *p, const uint8_t *data, size_t len, uint64_t index);
int ek_etm3_next(ek_etm3_parser *p, const ek_etm3_packet **pkt);
void ek_etm3_eot(ek_etm3_parser *p);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
