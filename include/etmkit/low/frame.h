/* CoreSight frame deformatter: the bit-level API (issue 12, item 6). The state structs below are
 * allocated by the caller (stack, inside another struct) and pure: no allocation, no I/O.
 * Their fields are private and may change between versions; a program that embeds them
 * includes this header explicitly (or builds with ETMKIT_LOW_LEVEL). The packets, the
 * configuration and the names stay in etmkit/frame.h. */
#ifndef ETMKIT_LOW_FRAME_H
#define ETMKIT_LOW_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/frame.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

/* State: allocate anywhere; fields are private. */
typedef struct ek_deformatter {
    unsigned flags;
    /* input */
    const uint8_t *in;
    size_t in_len, in_pos;
    uint64_t idx; /* index of in[in_pos] */
    /* sync */
    uint8_t synced;
    uint8_t fsync_half; /* FSYNC: 0xFFFF seen at the end of a block, 0x7FFF expected */
    uint8_t seek_half;  /* unsynced FSYNC search: block ended on 0xFFFF */
    uint8_t curr_id;
    /* frame assembly */
    uint8_t frame[EK_DFMT_FRAME_SIZE];
    uint8_t nframe;
    uint64_t sof_idx; /* index of frame byte 0 */
    /* output queue for one frame */
    uint8_t out_data[8][16];
    ek_dfmt_item q[12];
    uint8_t nq, qpos;
} ek_deformatter;

void ek_dfmt_init(ek_deformatter *d, unsigned flags);
/* Forget frame sync and the current ID (not the flags). */
void ek_dfmt_reset(ek_deformatter *d);
/* Next block of raw input; index = trace index of data[0]. Call when ek_dfmt_next returned 0;
 * the block must stay valid until then. Blocks must be contiguous in index. */
void ek_dfmt_feed(ek_deformatter *d, const uint8_t *data, size_t len, uint64_t index);
/* Returns 1 with *out filled, or 0 when the input block is used up. A partial frame at the
 * end of a block is kept for the next block. */
int ek_dfmt_next(ek_deformatter *d, ek_dfmt_item *out);
/* OpenCSD 1.8.0 compatibility. OpenCSD keeps each frame's bytes for one ID in a record
 * {u64 index; u8 id; u8 data[15]; u32 valid; u32 used} and its STM packet processor, when it
 * reports unsynchronised data, may list bytes past the end of the block it was given: they are
 * whatever follows in that record (bytes of an earlier frame, then the little-endian valid and
 * used counts). This writes up to n of those bytes for DATA item `it` (just returned by
 * ek_dfmt_next, as OpenCSD has them before the processor used any) and returns how many. */
size_t ek_dfmt_ocsd_tail(const ek_deformatter *d, const ek_dfmt_item *it, uint8_t *out, size_t n);

/* Bytes of an incomplete frame held back (for an end-of-data diagnostic). */
static inline unsigned ek_dfmt_pending(const ek_deformatter *d)
{
    return d->nframe;
}

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
