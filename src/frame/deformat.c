/* CoreSight frame deformatter: 16-byte formatter frames -> per-trace-ID byte runs.
 * Pure: no allocation, no I/O. See include/etmkit/frame.h for the contract. */
#include <string.h>

#include "core/bytes.h"
#include "etmkit/frame.h"

#define FSYNC_WORD 0x7FFFFFFFu /* bytes ff ff ff 7f */
#define FSYNC_HEAD 0xFFFFu     /* first half of an FSYNC: ff ff */
#define FSYNC_TAIL 0x7FFFu     /* second half of an FSYNC / an HSYNC: ff 7f */

void ek_dfmt_reset(ek_deformatter *d)
{
    /* Memory-aligned frames (and HSYNC-only streams) are in sync by construction; a stream
     * with FSYNCs is synchronised by finding one. */
    d->synced = (d->flags & EK_DFMT_FSYNC) ? 0 : 1;
    d->fsync_half = 0;
    d->seek_half = 0;
    d->curr_id = EK_TRACE_ID_UNKNOWN;
    d->nframe = 0;
    d->nq = d->qpos = 0;
}

void ek_dfmt_init(ek_deformatter *d, unsigned flags)
{
    memset(d, 0, sizeof *d);
    /* FSYNC / HSYNC streams are not memory aligned. */
    if (flags & (EK_DFMT_FSYNC | EK_DFMT_HSYNC))
        flags &= ~(unsigned)(EK_DFMT_MEM_ALIGN | EK_DFMT_RESET_4XFSYNC);
    if (!(flags & (EK_DFMT_FSYNC | EK_DFMT_HSYNC))) flags |= EK_DFMT_MEM_ALIGN;
    d->flags = flags;
    ek_dfmt_reset(d);
}

void ek_dfmt_feed(ek_deformatter *d, const uint8_t *data, size_t len, uint64_t index)
{
    d->in = data;
    d->in_len = data ? len : 0;
    d->in_pos = 0;
    d->idx = index;
}

static inline size_t left(const ek_deformatter *d)
{
    return d->in_len - d->in_pos;
}

static inline void consume(ek_deformatter *d, size_t n)
{
    d->in_pos += n;
    d->idx += n;
}

static ek_dfmt_item *push(ek_deformatter *d, unsigned kind, uint64_t index, const uint8_t *data,
                          size_t len)
{
    ek_dfmt_item *it = &d->q[d->nq++];
    it->kind = (uint8_t)kind;
    it->id = 0;
    it->len = (uint16_t)len;
    it->index = index;
    it->data = data;
    it->err = NULL;
    return it;
}

static void push_error(ek_deformatter *d, uint64_t index, const char *msg)
{
    ek_dfmt_item *it = push(d, EK_DFMT_ERROR, index, NULL, 0);
    it->err = msg;
}

/* Split a complete frame into runs of bytes per trace ID. The first run continues the ID of
 * the previous frame and starts at the frame's index; a run after an ID change starts at the
 * index of its ID byte. An ID byte whose flag bit is set is followed by one more byte of the
 * previous ID. Byte 14 may only change the ID for the next frame. */
static void unpack_frame(ek_deformatter *d)
{
    const uint8_t *f = d->frame;
    const uint8_t flags = f[15];
    unsigned n = 0, len = 0;
    uint8_t ids[8];
    uint64_t idx[8];
    uint8_t lens[8];

    ids[0] = d->curr_id;
    idx[0] = d->sof_idx;
    for (unsigned i = 0; i < 14; i += 2) {
        const unsigned bit = (flags >> (i / 2)) & 1;
        int prev_then_change = 0;
        if (f[i] & 1) {
            const uint8_t id = (uint8_t)(f[i] >> 1);
            if (id != d->curr_id) {
                prev_then_change = bit;
                if (prev_then_change) d->out_data[n][len++] = f[i + 1];
                d->curr_id = id;
                if (len > 0) {
                    lens[n] = (uint8_t)len;
                    n++;
                    len = 0;
                    idx[n] = d->sof_idx + i;
                }
                ids[n] = id;
            }
        } else {
            d->out_data[n][len++] = (uint8_t)(f[i] | bit);
        }
        if (!prev_then_change) d->out_data[n][len++] = f[i + 1];
    }
    if (f[14] & 1)
        d->curr_id = (uint8_t)(f[14] >> 1);
    else
        d->out_data[n][len++] = (uint8_t)(f[14] | ((flags >> 7) & 1));
    lens[n] = (uint8_t)len;

    for (unsigned k = 0; k <= n; k++) {
        /* the last run is empty when byte 12 changed the ID (its flag bit giving byte 13 to
         * the old ID) and byte 14 changes it again: nothing to hand on (OpenCSD does) */
        if (!lens[k] && !(d->flags & EK_DFMT_OCSD_EMPTY)) continue;
        ek_dfmt_item *it = push(d, EK_DFMT_DATA, idx[k], d->out_data[k], lens[k]);
        it->id = ids[k];
    }
    d->nframe = 0;
}

/* Not yet in sync on an FSYNC stream: skip 2-byte units until ff ff ff 7f. The FSYNC itself is
 * left for the frame extractor. */
static void seek_fsync(ek_deformatter *d)
{
    if (d->seek_half) {
        /* the last block ended with ff ff */
        d->seek_half = 0;
        if (left(d) >= 2 && ek_le16(d->in + d->in_pos) == FSYNC_TAIL) {
            consume(d, 2);
            d->synced = 1;
            return;
        }
    }
    while (left(d) >= 4) {
        if (ek_le32(d->in + d->in_pos) == FSYNC_WORD) {
            d->synced = 1;
            return;
        }
        consume(d, 2);
    }
    if (left(d) == 2 && ek_le16(d->in + d->in_pos) == FSYNC_HEAD) d->seek_half = 1;
    consume(d, left(d));
}

/* Lost frame sync after a bad pattern: drop the partial frame and, on an FSYNC stream, look
 * for the next FSYNC. */
static void lose_sync(ek_deformatter *d)
{
    d->nframe = 0;
    d->fsync_half = 0;
    if (d->flags & EK_DFMT_FSYNC) d->synced = 0;
}

/* TPIU / DSTREAM: frames are not aligned; FSYNCs may precede a frame, HSYNCs may appear inside
 * it. Consumes input until a frame is complete or the block ends. */
static void extract_sync_frame(ek_deformatter *d)
{
    const size_t start_pos = d->in_pos;
    const uint64_t start_idx = d->idx;
    const int has_f = (d->flags & EK_DFMT_FSYNC) != 0;
    const int has_h = (d->flags & EK_DFMT_HSYNC) != 0;
    size_t fsync = 0;

    if (has_f && d->nframe == 0) {
        if (d->fsync_half) {
            d->fsync_half = 0;
            if (left(d) < 2 || ek_le16(d->in + d->in_pos) != FSYNC_TAIL) {
                push_error(d, d->idx, "bad FSYNC pattern before frame, or invalid ID 0x7f");
                lose_sync(d);
                return;
            }
            consume(d, 2);
            fsync += 2;
        }
        while (left(d) >= 4 && ek_le32(d->in + d->in_pos) == FSYNC_WORD) {
            consume(d, 4);
            fsync += 4;
        }
        if (left(d) == 2 && ek_le16(d->in + d->in_pos) == FSYNC_HEAD) {
            consume(d, 2);
            fsync += 2;
            d->fsync_half = 1;
        }
    }

    while (d->nframe < EK_DFMT_FRAME_SIZE && left(d) >= 2) {
        const uint8_t *p = d->in + d->in_pos;
        if (d->nframe == 0)
            d->sof_idx = start_idx + fsync; /* as OpenCSD: HSYNCs before byte 0 not counted */
        const unsigned pair = ek_le16(p);
        if (pair == FSYNC_TAIL) {
            if (!has_h) {
                push_error(d, d->idx, "HSYNC inside a frame of a stream without HSYNCs");
                consume(d, 2);
                lose_sync(d);
                return;
            }
        } else if (pair == FSYNC_HEAD) {
            push_error(d, d->idx, "FSYNC start inside a frame, or invalid ID 0x7f");
            consume(d, 2);
            lose_sync(d);
            return;
        } else {
            d->frame[d->nframe] = p[0];
            d->frame[d->nframe + 1] = p[1];
            d->nframe += 2;
        }
        consume(d, 2);
    }
    if (left(d) == 1 && d->nframe < EK_DFMT_FRAME_SIZE) {
        /* odd trailing byte: cannot be part of a 2-byte aligned stream */
        push_error(d, d->idx, "odd byte at end of data");
        consume(d, 1);
    }
    const size_t total = d->in_pos - start_pos;
    if ((d->flags & EK_DFMT_OUT_RAW) && total && (d->nframe == EK_DFMT_FRAME_SIZE || left(d) == 0))
        push(d, EK_DFMT_RAW_PACKED, start_idx, d->in + start_pos, total);
    if (d->nframe == EK_DFMT_FRAME_SIZE) unpack_frame(d);
}

/* ETB / ETF / ETR memory: whole 16-byte frames, optionally separated by runs of FSYNCs. */
static void extract_mem_frame(ek_deformatter *d)
{
    if ((d->flags & EK_DFMT_RESET_4XFSYNC) && d->nframe == 0) {
        size_t n = 0;
        const uint64_t at = d->idx;
        const uint8_t *p = d->in + d->in_pos;
        while (left(d) - n >= 4 && ek_le32(p + n) == FSYNC_WORD)
            n += 4;
        if (n) {
            if (d->flags & EK_DFMT_OUT_RAW) push(d, EK_DFMT_RAW_FSYNC, at, p, n);
            consume(d, n);
            if ((n / 4) % 4 == 0) {
                push(d, EK_DFMT_RESET, at, NULL, 0);
                d->curr_id = EK_TRACE_ID_UNKNOWN;
            } else {
                push_error(d, at, "FSYNC run is not a multiple of 4 words");
            }
            return;
        }
    }
    const size_t start_pos = d->in_pos;
    const uint64_t start_idx = d->idx;
    if (d->nframe == 0) d->sof_idx = d->idx;
    size_t take = EK_DFMT_FRAME_SIZE - d->nframe;
    if (take > left(d)) take = left(d);
    memcpy(d->frame + d->nframe, d->in + d->in_pos, take);
    d->nframe = (uint8_t)(d->nframe + take);
    consume(d, take);
    if ((d->flags & EK_DFMT_OUT_RAW) && (d->nframe == EK_DFMT_FRAME_SIZE || left(d) == 0))
        push(d, EK_DFMT_RAW_PACKED, start_idx, d->in + start_pos, take);
    if (d->nframe == EK_DFMT_FRAME_SIZE) unpack_frame(d);
}

int ek_dfmt_next(ek_deformatter *d, ek_dfmt_item *out)
{
    for (;;) {
        if (d->qpos < d->nq) {
            *out = d->q[d->qpos++];
            return 1;
        }
        d->nq = d->qpos = 0;
        if (left(d) == 0) return 0;
        if (!d->synced) {
            seek_fsync(d);
            continue;
        }
        if (d->flags & EK_DFMT_MEM_ALIGN)
            extract_mem_frame(d);
        else
            extract_sync_frame(d);
    }
}

size_t ek_dfmt_ocsd_tail(const ek_deformatter *d, const ek_dfmt_item *it, uint8_t *out, size_t n)
{
    if (!it || it->kind != EK_DFMT_DATA || !it->data) return 0;
    const uint8_t *base = &d->out_data[0][0];
    if (it->data < base || it->data >= base + sizeof d->out_data) return 0;
    const size_t slot = (size_t)(it->data - base) / sizeof d->out_data[0];
    uint8_t rec[15 + 8];
    size_t k = 0;
    for (size_t i = it->len; i < 15; i++)
        rec[k++] = d->out_data[slot][i];
    const uint32_t valid = it->len, used = 0;
    for (unsigned i = 0; i < 4; i++)
        rec[k++] = (uint8_t)(valid >> (8 * i));
    for (unsigned i = 0; i < 4; i++)
        rec[k++] = (uint8_t)(used >> (8 * i));
    if (n > k) n = k;
    memcpy(out, rec, n);
    return n;
}
