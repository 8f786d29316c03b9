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
    uint8_t flags;          /* EK_ITM_ASSUME_SYNC: kept by ek_itm_parser_reset */
    uint8_t zrun, sync_hit; /* EK_ITM_ASSUME_SYNC: zero bytes in a row; an A-Sync just ended */
    uint32_t dump;          /* unsynchronised bytes waiting to be reported */
    uint32_t len;           /* bytes of the packet (or unsynchronised run) so far */
    ek_itm_packet pkt;
    ek_itm_packet out;
    uint8_t data[EK_ITM_MAX_RAW];
    uint8_t out_raw[EK_ITM_MAX_RAW];
} ek_itm_parser;

/* Options of ek_itm_parser_init_flags and ek_itm_decoder_init_flags.
 * EK_ITM_ASSUME_SYNC: the stream starts at a packet boundary, as if an A-Sync preceded its
 *   first byte (as orbuculum assumes unless told to wait). The parser reads packet headers from
 *   the first byte (and again after ek_itm_parser_reset) instead of listing ITM_NOTSYNC until
 *   an A-Sync; the decoder decodes from the first packet (its first element is still NO_SYNC,
 *   reason init-decoder). Where that start was not a packet boundary, the parser finds the
 *   next A-Sync wherever it lies, as orbuculum does: at a 0x80 byte after five or more zero
 *   bytes (47 zero bits, then a one), the packet being read ends there as an ITM_ASYNC (with
 *   its bytes so far; zeros already read into earlier packets stay theirs), and packets start
 *   again at the next byte. The decoder waits for an A-Sync after a bad or reserved packet, as
 *   without the option. Without it (ek_itm_parser_init, ek_itm_decoder_init): OpenCSD's behaviour,
 *   nothing is decoded before the first A-Sync. */
#define EK_ITM_ASSUME_SYNC 0x01u

void ek_itm_parser_init(ek_itm_parser *p, uint8_t trace_id); /* flags 0 */
void ek_itm_parser_init_flags(ek_itm_parser *p, uint8_t trace_id, unsigned flags);
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
    uint8_t assume; /* EK_ITM_ASSUME_SYNC given and no packet decoded yet */
} ek_itm_decoder;

/* ek_itm_decoder.compat. EK_ITM_OCSD_FATAL: a BAD_SEQUENCE or RESERVED packet, once
 * synchronised, stops the decode as OpenCSD 1.8.0's decoder does: ek_itm_decode() returns
 * EK_ERR_BAD_PACKET and no element. Without it: NO_SYNC (bad-packet), resync at the next ASYNC. */
#define EK_ITM_OCSD_FATAL 0x01u

/* tcr: the ITM's ITMTCR (time stamp prescaler in bits 9:8). */
void ek_itm_decoder_init(ek_itm_decoder *d, uint8_t trace_id, uint32_t tcr); /* flags 0 */
/* flags: EK_ITM_ASSUME_SYNC (see above) */
void ek_itm_decoder_init_flags(ek_itm_decoder *d, uint8_t trace_id, uint32_t tcr, unsigned flags);
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
