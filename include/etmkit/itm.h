/* ITM (Instrumentation Trace Macrocell, Armv7-M / Armv8-M ARM appendix "ITM and DWT packet
 * protocol"): packet parser and the decoder that turns packets into EK_ELEM_ITMTRACE elements.
 *
 * Byte protocol. Header byte:
 *   xxxxx0ss (ss != 0)  software stimulus (SWIT), port xxxxx, 1/2/4 payload bytes (ss=1/2/3)
 *   xxxxx1ss (ss != 0)  hardware source (DWT), discriminator xxxxx
 *   00000000            A-Sync: at least 5 (47 bits of) zeros then 0x80
 *   01110000            overflow
 *   Cttt0000            local time stamp: C=0 value ttt in the header; C=1 TC=tt, then up to
 *                       4 continuation bytes (bit 7 = more) of the delta
 *   10010100 / 10110100 global time stamp 1 (bits 25:0, wrap and clock-change flags in bits 6:5
 *                       of a fourth payload byte) / 2 (bits 63:26 or 47:26)
 *   Cppp1S00            extension: page/stimulus port extension (S=0, N=2) or other, with
 *                       continuation bytes when C=1
 *
 * Parser and decoder are pure and pull-style like the STM ones (etmkit/stm.h). Where the
 * protocol leaves room (synchronisation search, error packets) behaviour follows OpenCSD
 * 1.8.0 so that listings match trc_pkt_lister. */
#ifndef ETMKIT_ITM_H
#define ETMKIT_ITM_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/elem.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

typedef enum ek_itm_type {
    EK_ITM_PKT_NOTSYNC = 0,
    EK_ITM_PKT_INCOMPLETE_EOT,
    EK_ITM_PKT_NO_ERR_TYPE,
    EK_ITM_PKT_BAD_SEQUENCE,
    EK_ITM_PKT_RESERVED,
    EK_ITM_PKT_ASYNC,
    EK_ITM_PKT_OVERFLOW,
    EK_ITM_PKT_SWIT,
    EK_ITM_PKT_DWT,
    EK_ITM_PKT_TS_LOCAL,
    EK_ITM_PKT_TS_GLOBAL_1,
    EK_ITM_PKT_TS_GLOBAL_2,
    EK_ITM_PKT_EXTENSION,
    EK_ITM_PKT_TYPE_COUNT
} ek_itm_type;

#define EK_ITM_MAX_RAW 64

/* ek_itm_packet.flags */
#define EK_ITM_PF_LIST   0x01 /* a packet monitor sees it (raw bytes) */
#define EK_ITM_PF_DECODE 0x02 /* the decoder (and a packet sink) sees it */
#define EK_ITM_PF_ERROR  0x04 /* an error type (BAD_SEQUENCE, RESERVED, INCOMPLETE_EOT) */

typedef struct ek_itm_packet {
    uint64_t index;
    uint32_t value;
    uint8_t val_ext;  /* bits 39:32 of a 5-byte value (GTS2) */
    uint8_t val_sz;   /* value bytes 1..4, 5 with val_ext */
    uint8_t src_id;   /* port / discriminator / TC / GTS1 flags / extension size and S bit */
    uint8_t type;     /* ek_itm_type */
    uint8_t err_type; /* INCOMPLETE_EOT / BAD_SEQUENCE: the packet's own type */
    uint8_t flags;    /* EK_ITM_PF_* */
    uint16_t raw_len;
    const uint8_t *raw;
} ek_itm_packet;

/* Its state (allocated by the caller) and the functions on it, the bit level: etmkit/low/itm.h */
const char *ek_itm_type_name(unsigned type); /* "ITM_SWIT", ... */

struct ek_sbuf;
void ek_list_itm_ocsd(struct ek_sbuf *out, const ek_itm_packet *pkt, unsigned trace_id,
                      int with_raw);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
/* The library and the test suite build with ETMKIT_LOW_LEVEL: they see the bit level too. */
#if defined(ETMKIT_LOW_LEVEL) && !defined(ETMKIT_LOW_ITM_H)
#include "etmkit/low/itm.h"
#endif

#endif
