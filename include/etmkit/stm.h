/* STM (System Trace Macrocell, STPv2 protocol as CoreSight STM-500 emits it): packet parser
 * and the decoder that turns packets into software-trace elements (EK_ELEM_SWTRACE).
 *
 * STPv2 is a nibble stream: byte k carries nibble 2k in bits 3:0 and nibble 2k+1 in bits 7:4.
 * Packets start on any nibble. Headers: 1 nibble (0x0 NULL, 0x1 M8, 0x2 MERR, 0x3 C8, 0x4-0x7
 * D8/D16/D32/D64, 0x8-0xB the same with marker and time stamp, 0xC D4, 0xD D4MTS, 0xE FLAG_TS),
 * 2 nibbles 0xFn (0xF0 extension, 0xF2 GERR, 0xF3 C16, 0xF4-0xF7 D8TS..D64TS, 0xF8-0xFB
 * D8M..D64M, 0xFC D4TS, 0xFD D4M, 0xFE FLAG, 0xFF ASYNC), 3 nibbles 0xF0n (0xF00 VERSION,
 * 0xF01 NULL_TS, 0xF06 TRIG, 0xF07 TRIG_TS, 0xF08 FREQ). Data is sent most significant nibble
 * first; a time stamp is a length nibble (0..12, 0xD = 14, 0xE = 16 nibbles) and that many
 * nibbles that replace the low bits of the running time stamp (natural binary, VERSION 3) or
 * of its Gray code (VERSION 4). ASYNC is 21 0xF nibbles and a 0x0 nibble.
 *
 * The parser is pure (no allocation, no I/O) and pull-style like the ETMv4 one:
 *     ek_stm_parser p; ek_stm_parser_init(&p, trace_id);
 *     ek_stm_feed(&p, data, n, index);
 *     while (ek_stm_next(&p, &pkt) > 0) use(pkt);  // valid until the next call
 *     ek_stm_eot(&p); while (ek_stm_next(&p, &pkt) > 0) use(pkt);
 *
 * Where the protocol leaves room, behaviour follows OpenCSD 1.8.0's STM packet processor so that
 * listings match trc_pkt_lister byte for byte: the byte index of a packet is the index of the
 * first input byte not yet consumed when its header nibble is read (a header in the high nibble
 * of a byte therefore gets the index of the next byte); a packet's raw bytes start with the
 * left-over high nibble of the previous packet's last byte (as 0xN0); unsynchronised data is
 * reported as NOTSYNC packets per input block. */
#ifndef ETMKIT_STM_H
#define ETMKIT_STM_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/elem.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

typedef enum ek_stm_type {
    EK_STM_NOTSYNC = 0,
    EK_STM_INCOMPLETE_EOT, /* err_type: what the packet was */
    EK_STM_NO_ERR_TYPE,
    EK_STM_BAD_SEQUENCE, /* err_type: what the packet was */
    EK_STM_RESERVED,     /* payload: the reserved header nibbles */
    EK_STM_ASYNC,
    EK_STM_VERSION, /* payload: version */
    EK_STM_FREQ,    /* payload: Hz */
    EK_STM_NULL,
    EK_STM_TRIG, /* payload: 8 bits */
    EK_STM_GERR, /* payload: 8 bits */
    EK_STM_MERR, /* payload: 8 bits */
    EK_STM_M8,
    EK_STM_C8,
    EK_STM_C16,
    EK_STM_FLAG,
    EK_STM_D4,
    EK_STM_D8,
    EK_STM_D16,
    EK_STM_D32,
    EK_STM_D64,
    EK_STM_TYPE_COUNT
} ek_stm_type;

/* Time stamp encodings (from the VERSION packet). */
enum { EK_STM_TS_UNKNOWN = 0, EK_STM_TS_NATBINARY, EK_STM_TS_GRAY };

/* Largest raw byte record kept for one packet (a NOTSYNC run is cut at this size). */
#define EK_STM_MAX_RAW 300

typedef struct ek_stm_packet {
    uint64_t index;
    uint64_t payload;
    uint64_t timestamp; /* running time stamp (valid with has_ts) */
    uint16_t channel;   /* current channel of the current master */
    uint8_t master;     /* current master */
    uint8_t type;       /* ek_stm_type */
    uint8_t err_type;   /* INCOMPLETE_EOT / BAD_SEQUENCE: the packet's own type */
    uint8_t marker;     /* packet has a marker */
    uint8_t has_ts;     /* packet carries a time stamp */
    uint8_t ts_bits;    /* bits of the time stamp this packet updated */
    uint16_t raw_len;   /* raw bytes in raw[] */
    uint16_t overread;  /* NOTSYNC: bytes OpenCSD 1.8.0 lists past the end of the input block
                           (it reads beyond its buffer; see docs/PROTOCOLS.md) */
    const uint8_t *raw;
} ek_stm_packet;

/* Its state (allocated by the caller) and the functions on it, the bit level: etmkit/low/stm.h */

const char *ek_stm_type_name(unsigned type); /* "D32", "ASYNC", ... */

/* ---- listing ---------------------------------------------------------------------------- */

/* trc_pkt_lister's line: "Idx:<n>; ID:<hex>; [0xNN ...];\t<NAME>:<desc>...\n" (with_raw) or
 * without the raw part. tail/ntail: the bytes to show for pkt->overread (may be NULL: zeros). */
/* What an STM packet line needs besides the packet: the bytes OpenCSD lists past the end of
 * the block for an over-read (ek_dfmt_ocsd_tail). The decode tree's STM parser keeps one (the
 * configuration record of its items, ek_decode_item.config). */
typedef struct ek_stm_list_ctx {
    const uint8_t *tail;
    size_t ntail;
} ek_stm_list_ctx;

struct ek_sbuf;
void ek_list_stm_ocsd(struct ek_sbuf *out, const ek_stm_packet *pkt, unsigned trace_id,
                      int with_raw, const uint8_t *tail, size_t ntail);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
/* The library and the test suite build with ETMKIT_LOW_LEVEL: they see the bit level too. */
#if defined(ETMKIT_LOW_LEVEL) && !defined(ETMKIT_LOW_STM_H)
#include "etmkit/low/stm.h"
#endif

#endif
