/* CoreSight formatter frames -> per-trace-ID byte streams.
 *
 * A trace sink that merges several sources (ETB, ETF, ETR, TPIU) wraps their bytes in 16-byte
 * frames: even bytes are either data (bit 0 moved to the flag byte 15) or a new trace ID
 * (bit 0 set), odd bytes are always data, byte 15 holds the flag bits. A TPIU or DSTREAM
 * capture may add FSYNC (ff ff ff 7f) and HSYNC (ff 7f) patterns between / inside frames.
 *
 * The deformatter is pure (no allocation, no I/O) and pull-style:
 *
 *     ek_deformatter d;
 *     ek_dfmt_init(&d, EK_DFMT_MEM_ALIGN);
 *     ek_dfmt_feed(&d, buf, len, index_of_buf0);
 *     ek_dfmt_item it;
 *     while (ek_dfmt_next(&d, &it) > 0) ...   // DATA for trace ID it.id, RESET, RAW frames
 *
 * Index of output bytes: it.data[k] of a DATA item has trace index it.index + k, where it.index
 * is the raw-buffer index of the start of the frame the bytes came from, or, after an ID change
 * inside the frame, of the ID byte that started them. (This is the index OpenCSD's
 * deformatter gives its packet processors, so listings line up with trc_pkt_lister.)
 */
#ifndef ETMKIT_FRAME_H
#define ETMKIT_FRAME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

#define EK_DFMT_FRAME_SIZE 16

/* Configuration flags (ek_dfmt_init):
 *  MEM_ALIGN      frames are 16-byte aligned in memory (ETB / ETF / ETR)
 *  FSYNC          the stream carries FSYNC patterns (TPIU, DSTREAM): synchronise on one
 *  HSYNC          the stream carries HSYNC patterns (TPIU with half-word sync)
 *  RESET_4XFSYNC  MEM_ALIGN: runs of 4n FSYNCs between frames reset the decoders (perf pads
 *                 AUX buffers with them)
 *  OUT_RAW        also report the raw bytes of each frame (listings)
 *  OCSD_EMPTY     OpenCSD 1.8.0 compatibility: also hand on the empty run a frame can end with
 *                 (byte 12 changes the ID giving byte 13 to the old one, byte 14 changes it
 *                 again) as a DATA item of length 0, as OpenCSD's deformatter does; its packet
 *                 processors answer a zero-length block with a fatal error (docs/PROTOCOLS.md) */
#define EK_DFMT_MEM_ALIGN     0x01
#define EK_DFMT_FSYNC         0x02
#define EK_DFMT_HSYNC         0x04
#define EK_DFMT_RESET_4XFSYNC 0x08
#define EK_DFMT_OUT_RAW       0x10
#define EK_DFMT_OCSD_EMPTY    0x20

/* Trace ID values. */
#define EK_TRACE_ID_UNKNOWN 0xFF /* bytes before the first ID in the stream */
#define EK_TRACE_ID_NULL    0x00 /* the null ID: padding */
static inline int ek_trace_id_reserved(unsigned id)
{
    return id >= 0x70 && id <= 0x7F;
}

typedef enum ek_dfmt_kind {
    EK_DFMT_DATA = 1,   /* len bytes of trace ID id, data[k] at index + k */
    EK_DFMT_RESET,      /* FSYNC barrier: reset every decoder fed from this deformatter */
    EK_DFMT_RAW_PACKED, /* (with EK_DFMT_OUT_RAW) raw input bytes of a frame, with its syncs */
    EK_DFMT_RAW_FSYNC,  /* (with EK_DFMT_OUT_RAW) a run of FSYNC words skipped (RESET_4XFSYNC) */
    EK_DFMT_ERROR,      /* bad sync pattern or partial frame: bytes skipped; see err */
} ek_dfmt_kind;

typedef struct ek_dfmt_item {
    uint8_t kind; /* ek_dfmt_kind */
    uint8_t id;   /* DATA: trace ID (0x00..0x7F, or EK_TRACE_ID_UNKNOWN) */
    uint16_t len;
    uint64_t index;      /* index of data[0] (ERROR: where the problem is) */
    const uint8_t *data; /* valid until the next ek_dfmt_next / ek_dfmt_feed */
    const char *err;     /* ERROR: one-line description */
} ek_dfmt_item;

/* Its state (allocated by the caller) and the functions on it, the bit level: etmkit/low/frame.h */

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
/* The library and the test suite build with ETMKIT_LOW_LEVEL: they see the bit level too. */
#if defined(ETMKIT_LOW_LEVEL) && !defined(ETMKIT_LOW_FRAME_H)
#include "etmkit/low/frame.h"
#endif

#endif
