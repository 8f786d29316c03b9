/* ITM packet parser and decoder: the bit-level API (issue 12, item 6). The state structs below are
 * allocated by the caller (stack, inside another struct) and pure: no allocation, no I/O.
 * Their fields are private and may change between versions; a program that embeds them
 * includes this header explicitly (or builds with ETMKIT_LOW_LEVEL). The packets, the
 * configuration and the names stay in etmkit/itm.h. */
#ifndef ETMKIT_LOW_ITM_H
#define ETMKIT_LOW_ITM_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/itm.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

typedef struct ek_itm_parser {
    uint8_t trace_id;
    const uint8_t *in;
    size_t in_len, in_used;
    uint64_t in_index;
    uint8_t state;
    uint8_t synced, sync_start, sent_notsync, ws_fresh, eot_done, hdr;
    uint32_t dump; /* unsynchronised bytes waiting to be reported */
    uint32_t len;  /* bytes of the packet (or unsynchronised run) so far */
    ek_itm_packet pkt;
    ek_itm_packet out;
    uint8_t data[EK_ITM_MAX_RAW];
    uint8_t out_raw[EK_ITM_MAX_RAW];
} ek_itm_parser;

void ek_itm_parser_init(ek_itm_parser *p, uint8_t trace_id);
void ek_itm_parser_reset(ek_itm_parser *p);
void ek_itm_feed(ek_itm_parser *p, const uint8_t *data, size_t len, uint64_t index);
int ek_itm_next(ek_itm_parser *p, const ek_itm_packet **pkt);
void ek_itm_eot(ek_itm_parser *p);

/* ---- decoder ---------------------------------------------------------------------------- */

typedef struct ek_itm_decoder {
    uint64_t local_ts, global_ts;
    uint32_t prescale; /* ITMTCR.TSPrescale: 1, 4, 16 or 64 */
    uint8_t trace_id, state, unsync_reason;
    uint8_t page, need_gts2, prev_overflow, freq_change;
    uint8_t compat; /* EK_ITM_OCSD_*: 0 after ek_itm_decoder_init */
} ek_itm_decoder;

/* ek_itm_decoder.compat. EK_ITM_OCSD_FATAL: a BAD_SEQUENCE or RESERVED packet, once
 * synchronised, stops the decode as OpenCSD 1.8.0's decoder does: ek_itm_decode() returns
 * EK_ERR_BAD_PACKET and no element. Without it: NO_SYNC (bad-packet), resync at the next ASYNC. */
#define EK_ITM_OCSD_FATAL 0x01u

/* tcr: the ITM's ITMTCR (time stamp prescaler in bits 9:8). */
void ek_itm_decoder_init(ek_itm_decoder *d, uint8_t trace_id, uint32_t tcr);
void ek_itm_decoder_reset(ek_itm_decoder *d);
/* Elements for one packet (only packets with EK_ITM_PF_DECODE): returns 0..2, or
 * EK_ERR_BAD_PACKET with EK_ITM_OCSD_FATAL (see above). */
int ek_itm_decode(ek_itm_decoder *d, const ek_itm_packet *pkt, ek_elem out[2]);
void ek_itm_decode_eot(ek_itm_decoder *d, uint64_t index, ek_elem *out);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
