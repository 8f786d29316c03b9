/* STM packet parser and decoder: the bit-level API (issue 12, item 6). The state structs below are
 * allocated by the caller (stack, inside another struct) and pure: no allocation, no I/O.
 * Their fields are private and may change between versions; a program that embeds them
 * includes this header explicitly (or builds with ETMKIT_LOW_LEVEL). The packets, the
 * configuration and the names stay in etmkit/stm.h. */
#ifndef ETMKIT_LOW_STM_H
#define ETMKIT_LOW_STM_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/stm.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

typedef struct ek_stm_parser {
    uint8_t trace_id;
    /* input block */
    const uint8_t *in;
    size_t in_len, in_used;
    uint64_t in_index;
    /* state */
    uint8_t state; /* wait sync, header, data, send */
    uint8_t op;    /* packet being assembled */
    uint8_t synced;
    uint8_t nib, nib2, nib2_valid;
    uint8_t num_nibbles, num_data_nibbles;
    uint8_t needs_ts, ts_len_set, ts_req, ts_got;
    uint8_t num_f, sync_start, is_sync, save_suppressed;
    uint8_t eot_done;
    uint8_t ts_type;
    uint8_t val8;
    uint16_t val16;
    uint32_t val32;
    uint64_t val64, ts_update;
    uint64_t sync_index;
    ek_stm_packet pkt; /* being built / last returned (master, channel, ts persist) */
    ek_stm_packet out; /* returned */
    uint16_t raw_len;
    uint8_t raw[EK_STM_MAX_RAW];
    uint8_t out_raw[EK_STM_MAX_RAW];
    uint8_t compat; /* EK_STM_OCSD_SYNC_INDEX: 0 after ek_stm_parser_init, kept by reset */
} ek_stm_parser;

/* ek_stm_parser.compat: EK_STM_OCSD_SYNC_INDEX indexes an ASYNC as OpenCSD 1.8.0 does (block
 * start + half the nibbles counted since, docs/PROTOCOLS.md): the count starts with the 0xF
 * nibbles of a run carried from the previous block even when that run ended without an ASYNC,
 * so an ASYNC that starts later in the block is indexed that many nibbles ahead, past the end
 * of the trace at worst. Without it an ASYNC is indexed at the byte of its first 0xF nibble. */
#define EK_STM_OCSD_SYNC_INDEX 0x02u

void ek_stm_parser_init(ek_stm_parser *p, uint8_t trace_id);
void ek_stm_parser_reset(ek_stm_parser *p);
void ek_stm_parser_set_compat(ek_stm_parser *p, uint8_t compat);
void ek_stm_feed(ek_stm_parser *p, const uint8_t *data, size_t len, uint64_t index);
/* 1 with *pkt, 0 when the block is used up (feed more or call ek_stm_eot). */
int ek_stm_next(ek_stm_parser *p, const ek_stm_packet **pkt);
void ek_stm_eot(ek_stm_parser *p);

/* ---- decoder: packets -> SWTRACE elements ---------------------------------------------- */

typedef struct ek_stm_decoder {
    uint8_t trace_id;
    uint8_t state; /* no sync (emit NO_SYNC), wait for ASYNC, decode */
    uint8_t unsync_reason;
    uint8_t master, id_valid;
    uint16_t channel;
    uint8_t compat; /* EK_STM_OCSD_*: 0 after ek_stm_decoder_init */
} ek_stm_decoder;

/* ek_stm_decoder.compat: OpenCSD 1.8.0 behaviours reproduced for its listings (docs/PROTOCOLS.md).
 * EK_STM_OCSD_FATAL: a BAD_SEQUENCE or RESERVED packet, once synchronised, stops the decode as
 * OpenCSD's decoder does (a fatal data-path response: trc_pkt_lister stops every source):
 * ek_stm_decode() returns EK_ERR_BAD_PACKET and no element. Without it the decoder reports
 * NO_SYNC (bad-packet) and resynchronises at the next ASYNC, as the specification allows. */
#define EK_STM_OCSD_FATAL 0x01u

void ek_stm_decoder_init(ek_stm_decoder *d, uint8_t trace_id);
/* Decoder reset (new session): the next packet reports NO_SYNC (reset-decoder). */
void ek_stm_decoder_reset(ek_stm_decoder *d);
/* Elements for one packet: returns how many were written to out (0..2), or EK_ERR_BAD_PACKET
 * with EK_STM_OCSD_FATAL (see above). */
int ek_stm_decode(ek_stm_decoder *d, const ek_stm_packet *pkt, ek_elem out[2]);
/* End of trace: the EO_TRACE element. */
void ek_stm_decode_eot(ek_stm_decoder *d, uint64_t index, ek_elem *out);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
