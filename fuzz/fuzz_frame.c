/* Fuzz target: the CoreSight frame deformatter (src/frame/deformat.c) and its listing.
 *
 * Input: byte 0 = deformatter flags (low 5 bits: MEM_ALIGN, FSYNC, HSYNC, RESET_4XFSYNC,
 * OUT_RAW), byte 1 = block size seed (the stream is fed in blocks of 1..256 bytes, so frames
 * and sync patterns straddle block ends), byte 2: start index low byte; the rest is the
 * stream. Checks: items stay inside what was fed, DATA items carry a valid ID and at most one
 * frame's data, and each block yields a bounded number of items (no livelock).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "etmkit/frame.h"
#include "etmkit/low/frame.h"
#include "etmkit/listing.h"
#include "etmkit/sbuf.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = {data, size};
    unsigned flags = fuzz_u8(&in) & 0x1f;
    unsigned blk_seed = fuzz_u8(&in);
    uint64_t index = fuzz_u8(&in);
    const uint8_t *stream = in.p;
    size_t len = in.n;

    ek_deformatter d;
    ek_dfmt_init(&d, flags);
    ek_sbuf sb = {0};
    size_t pos = 0;
    uint64_t start = index;
    volatile uint8_t sink = 0;
    while (pos < len) {
        size_t blk = blk_seed ? 1 + (blk_seed * (pos + 7)) % 256 : len - pos;
        if (blk > len - pos)
            blk = len - pos;
        ek_dfmt_feed(&d, stream + pos, blk, index + pos);
        ek_dfmt_item it;
        size_t nitems = 0;
        while (ek_dfmt_next(&d, &it) > 0) {
            FUZZ_CHECK(!(++nitems > 4 * blk + 64),
                       "a block of n bytes cannot give this many items");
            switch (it.kind) {
            case EK_DFMT_DATA:
                /* (an empty run -- ID change in byte 12 with its flag set, then an ID in
                 * byte 14 -- gives no item: RELIABILITY.md, finding 13) */
                FUZZ_CHECK(it.len > 0 && it.len <= EK_DFMT_FRAME_SIZE && it.data,
                           "DATA item empty, longer than a frame or without data");
                FUZZ_CHECK(!(it.id > 0x7f && it.id != EK_TRACE_ID_UNKNOWN),
                           "not (it.id > 0x7f && it.id != EK_TRACE_ID_UNKNOWN)");
                /* index of the frame start: never beyond what was fed */
                FUZZ_CHECK(!(it.index < start || it.index >= index + pos + blk),
                           "not (it.index < start || it.index >= index + pos + blk)");
                for (unsigned k = 0; k < it.len; k++)
                    sink ^= it.data[k];
                break;
            case EK_DFMT_RAW_PACKED:
            case EK_DFMT_RAW_FSYNC:
                FUZZ_CHECK(!(it.len && !it.data),
                           "not (it.len && !it.data)");
                for (unsigned k = 0; k < it.len; k++)
                    sink ^= it.data[k];
                break;
            case EK_DFMT_RESET:
                break;
            case EK_DFMT_ERROR:
                FUZZ_CHECK(!(!it.err || strchr(it.err, '\n')),
                           "not (!it.err || strchr(it.err, newline))");
                break;
            default:
                fuzz_fail_msg(__FILE__, __LINE__, "unknown item kind");
            }
            ek_list_frame_ocsd(&sb, &it);
            ek_sbuf_reset(&sb);
        }
        pos += blk;
    }
    (void)ek_dfmt_pending(&d);
    ek_dfmt_reset(&d);
    ek_sbuf_free(&sb);
    (void)sink;
    return 0;
}

/* Real trace buffers (regular files) become inputs with a header: DSTREAM captures with FSYNC
 * and HSYNC, everything else memory-aligned with 4xFSYNC resets and raw output. */
int fuzz_pack_path(const char *path, uint8_t **out, size_t *len)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t cap = (size_t)st.st_size < (1u << 20) ? (size_t)st.st_size : (1u << 20);
    uint8_t *buf = malloc(cap + 3);
    if (!buf) {
        fclose(f);
        return 0;
    }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    buf[0] = strstr(base, "DSTREAM") ? (EK_DFMT_FSYNC | EK_DFMT_HSYNC | EK_DFMT_OUT_RAW)
                                     : (EK_DFMT_MEM_ALIGN | EK_DFMT_RESET_4XFSYNC | EK_DFMT_OUT_RAW);
    buf[1] = 0;
    buf[2] = 0;
    size_t r = fread(buf + 3, 1, cap, f);
    fclose(f);
    *out = buf;
    *len = r + 3;
    return 1;
}
