/* ETMv4/ETE packet parser: the bit-level API (issue 12, item 6). The state structs below are
 * allocated by the caller (stack, inside another struct) and pure: no allocation, no I/O.
 * Their fields are private and may change between versions; a program that embeds them
 * includes this header explicitly (or builds with ETMKIT_LOW_LEVEL). The packets, the
 * configuration and the names stay in etmkit/etm4.h. */
#ifndef ETMKIT_LOW_ETM4_H
#define ETMKIT_LOW_ETM4_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/etm4.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

/* ---- parser -------------------------------------------------------------------------- */

/* Parser state. Allocate it anywhere (stack, inside another struct); treat the fields as
 * private: they may change between versions. */
typedef struct ek_etm4_parser {
    ek_etm4_config cfg;
    uint8_t table[256]; /* header byte -> handler class (internal) */
    uint8_t ttype[256]; /* header byte -> ek_etm4_type */

    /* current input block */
    const uint8_t *blk;
    size_t blk_len;
    size_t blk_pos;
    uint64_t blk_index;
    int eot; /* end of trace requested */
    int eot_done;

    /* packet assembly */
    uint8_t state;   /* internal */
    uint8_t handler; /* handler class of the packet being assembled */
    uint8_t synced;
    uint8_t first_tinfo;  /* a TRACE_INFO was seen since reset */
    uint8_t notsync_sent; /* first NOTSYNC of the run already reported */
    uint8_t dump_n;       /* NOTSYNC: bytes to report */
    uint8_t nbuf;
    uint8_t buf[EK_ETM4_MAX_PKT + 1];
    uint64_t pkt_index; /* index of the packet being assembled */
    uint64_t next_unsync_index;

    /* per-packet decoding state and running flags (internal) */
    uint8_t st[16];
    uint8_t ts_valid;
    uint8_t cc_thresh_valid;
    uint8_t out_pending;
    uint8_t saved_flags;

    /* address history (exact match) */
    ek_etm4_addr stack[3];

    ek_etm4_packet pkt; /* the packet handed out; also holds the running state */
    uint8_t out_raw[EK_ETM4_MAX_PKT + 1];
} ek_etm4_parser;

/* Initialise for cfg (copied). The parser starts unsynchronised. */
void ek_etm4_parser_init(ek_etm4_parser *p, const ek_etm4_config *cfg);

/* Forget all state: back to "not synchronised" (decoder reset, new session). */
void ek_etm4_parser_reset(ek_etm4_parser *p);

/* Give the parser the next block of the stream: len bytes, data[k] at trace index index + k.
 * The block must stay valid until ek_etm4_next() returned 0 for it. A partial packet at the
 * end of a block is kept and completed by the next block. */
void ek_etm4_feed(ek_etm4_parser *p, const uint8_t *data, size_t len, uint64_t index);

/* Mark the end of the trace: a packet still being assembled is then returned as
 * INCOMPLETE_EOT. */
void ek_etm4_eot(ek_etm4_parser *p);

/* Next packet. Returns 1 and sets *out (valid until the next call on p), or 0 when the current
 * block is used up (feed the next one; after ek_etm4_eot: the stream is finished). */
int ek_etm4_next(ek_etm4_parser *p, const ek_etm4_packet **out);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
