/* A small streaming protocol-buffers encoder (the wire format only: varints, fixed-width and
 * length-delimited fields), for the writers of binary traces (src/output/perfetto.c).
 *
 * Fields are appended to a growable byte buffer. A submessage is opened with ek_pb_open, which
 * remembers where its content starts, and closed with ek_pb_close, which inserts its length
 * (a minimal varint) before the content -- so nesting costs one short move per level, and a
 * message never needs its size in advance. An allocation failure sticks (err) and makes every
 * later call a no-op; the caller checks err once per message.
 */
#ifndef ETMKIT_OUTPUT_PB_H
#define ETMKIT_OUTPUT_PB_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EK_PB_VARINT    0u
#define EK_PB_I64       1u
#define EK_PB_LEN       2u
#define EK_PB_I32       5u
#define EK_PB_MAX_DEPTH 8

typedef struct ek_pb {
    uint8_t *p;
    size_t len, cap;
    int err;                      /* an allocation failed: the contents are not valid */
    size_t open[EK_PB_MAX_DEPTH]; /* where each open submessage's content starts */
    unsigned depth;
} ek_pb;

#define EK_PB_INIT                                                                                 \
    {                                                                                              \
        NULL, 0, 0, 0, {0}, 0                                                                      \
    }

static inline void ek_pb_free(ek_pb *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* Empty the buffer (keeps its memory; clears err and open submessages). */
static inline void ek_pb_reset(ek_pb *b)
{
    b->len = 0;
    b->err = 0;
    b->depth = 0;
}

static inline int ek_pb_room(ek_pb *b, size_t n)
{
    if (b->err) return 0;
    if (b->cap - b->len >= n) return 1;
    size_t nc = b->cap ? b->cap : 256;
    while (nc - b->len < n)
        nc *= 2;
    uint8_t *q = realloc(b->p, nc);
    if (!q) {
        b->err = 1;
        return 0;
    }
    b->p = q;
    b->cap = nc;
    return 1;
}

/* Bytes of the varint of v (1..10). */
static inline unsigned ek_pb_varint_size(uint64_t v)
{
    unsigned n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Write the varint of v at q (room for 10 bytes); returns the bytes written. */
static inline unsigned ek_pb_varint_at(uint8_t *q, uint64_t v)
{
    unsigned n = 0;
    while (v >= 0x80) {
        q[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    q[n++] = (uint8_t)v;
    return n;
}

static inline void ek_pb_varint(ek_pb *b, uint64_t v)
{
    if (ek_pb_room(b, 10)) b->len += ek_pb_varint_at(b->p + b->len, v);
}

static inline void ek_pb_tag(ek_pb *b, uint32_t field, unsigned wire)
{
    ek_pb_varint(b, (uint64_t)field << 3 | wire);
}

/* uint32, uint64, bool, enum fields */
static inline void ek_pb_uint(ek_pb *b, uint32_t field, uint64_t v)
{
    ek_pb_tag(b, field, EK_PB_VARINT);
    ek_pb_varint(b, v);
}

/* int32 and int64 fields: two's complement, a negative value takes ten bytes */
static inline void ek_pb_int(ek_pb *b, uint32_t field, int64_t v)
{
    ek_pb_uint(b, field, (uint64_t)v);
}

/* sint32 and sint64 fields (zigzag) */
static inline void ek_pb_sint(ek_pb *b, uint32_t field, int64_t v)
{
    ek_pb_uint(b, field, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static inline void ek_pb_fixed64(ek_pb *b, uint32_t field, uint64_t v)
{
    ek_pb_tag(b, field, EK_PB_I64);
    if (!ek_pb_room(b, 8)) return;
    for (unsigned i = 0; i < 8; i++)
        b->p[b->len++] = (uint8_t)(v >> 8 * i);
}

/* string and bytes fields */
static inline void ek_pb_bytes(ek_pb *b, uint32_t field, const void *data, size_t n)
{
    ek_pb_tag(b, field, EK_PB_LEN);
    ek_pb_varint(b, n);
    if (n && ek_pb_room(b, n)) {
        memcpy(b->p + b->len, data, n);
        b->len += n;
    }
}

static inline void ek_pb_str(ek_pb *b, uint32_t field, const char *s)
{
    ek_pb_bytes(b, field, s, strlen(s));
}

/* Open a submessage field (at most EK_PB_MAX_DEPTH deep). */
static inline void ek_pb_open(ek_pb *b, uint32_t field)
{
    if (b->depth == EK_PB_MAX_DEPTH) {
        b->err = 1;
        return;
    }
    ek_pb_tag(b, field, EK_PB_LEN);
    b->open[b->depth++] = b->len;
}

/* Close the innermost open submessage: its length goes before its content. */
static inline void ek_pb_close(ek_pb *b)
{
    if (!b->depth) {
        b->err = 1;
        return;
    }
    size_t start = b->open[--b->depth];
    if (b->err) return;
    size_t n = b->len - start;
    unsigned k = ek_pb_varint_size(n);
    if (!ek_pb_room(b, k)) return;
    memmove(b->p + start + k, b->p + start, n);
    ek_pb_varint_at(b->p + start, n);
    b->len += k;
}

#endif
