/* PTM packet parser: the bit-level API (issue 12, item 6). The state structs below are
 * allocated by the caller (stack, inside another struct) and pure: no allocation, no I/O.
 * Their fields are private and may change between versions; a program that embeds them
 * includes this header explicitly (or builds with ETMKIT_LOW_LEVEL). The packets, the
 * configuration and the names stay in etmkit/ptm.h. */
#ifndef ETMKIT_LOW_PTM_H
#define ETMKIT_LOW_PTM_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/ptm.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

typedef struct ek_ptm_parser {
    ek_ptm_config cfg;
    const uint8_t *in;
    size_t in_len, in_used;
    uint64_t in_index;
    uint8_t state;
    uint8_t wait_so_pkt;  /* zeros of a possible A-Sync are held */
    uint8_t async_0;      /* zeros counted */
    uint8_t sent_notsync; /* the first NOTSYNC went to the decoder */
    uint8_t ws_pending;   /* NOTSYNC reports queued by the sync search */
    uint8_t excep_alt_isa;
    uint8_t eot_done;
    /* per packet */
    uint8_t n_addr, n_exc, n_cc, got_addr, got_exc, got_cc, need_cc, addr_isa;
    uint8_t n_cid, got_cid, need;
    uint8_t len;
    uint8_t data[EK_PTM_MAX_PKT];
    ek_ptm_packet pkt;
    ek_ptm_packet out;
    /* sync search reports */
    struct {
        uint64_t index;
        uint8_t n, zeros, decode;
        uint8_t bytes[EK_PTM_MAX_PKT];
    } ws[3];
    uint8_t ws_head;
    uint8_t ws_active; /* a scan of the current block is under way */
    uint32_t ws_unsynced, ws_on_entry;
    size_t ws_scan_start;
    uint8_t tail_len;
    uint8_t tail[16];
    uint64_t ws_index;
    /* without EK_PTM_OCSD_UNSYNC: held zeros from earlier blocks not yet reported, the index
     * of the first of them, and the index of data[0] while zeros are held */
    uint32_t ws_held;
    uint64_t ws_held_index, held_index;
} ek_ptm_parser;

void ek_ptm_parser_init(ek_ptm_parser *p, const ek_ptm_config *cfg);
void ek_ptm_parser_reset(ek_ptm_parser *p);
void ek_ptm_feed(ek_ptm_parser *p, const uint8_t *data, size_t len, uint64_t index);
/* OpenCSD 1.8.0 compatibility: the bytes that follow the block in OpenCSD's buffer (see
 * ek_dfmt_ocsd_tail), which its unsynchronised-data reports may list. Call after each feed. */
void ek_ptm_feed_tail(ek_ptm_parser *p, const uint8_t *tail, size_t n);
int ek_ptm_next(ek_ptm_parser *p, const ek_ptm_packet **pkt);
void ek_ptm_eot(ek_ptm_parser *p);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
