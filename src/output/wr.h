/* Fast appends into an ek_sbuf: reserve room for a whole line once, then write characters
 * through a cursor. Internal to src/output. */
#ifndef ETMKIT_OUTPUT_WR_H
#define ETMKIT_OUTPUT_WR_H

#include <stdint.h>
#include <string.h>

#include "etmkit/sbuf.h"

typedef struct wr {
    ek_sbuf *s;
    char *p; /* cursor; NULL after an allocation failure */
    char *end;
} wr;

/* Reserve 'room' bytes; returns 0 on allocation failure (the line is dropped). */
static inline int wr_begin(wr *w, ek_sbuf *s, size_t room)
{
    w->s = s;
    if (ek_sbuf_room(s, room)) {
        w->p = w->end = NULL;
        return 0;
    }
    w->p = s->p + s->len;
    w->end = s->p + s->cap - 1;
    return 1;
}

/* Make sure 'room' more bytes fit (for variable-length parts). */
static inline void wr_need(wr *w, size_t room)
{
    if (!w->p || (size_t)(w->end - w->p) >= room) return;
    w->s->len = (size_t)(w->p - w->s->p);
    if (ek_sbuf_reserve(w->s, room)) {
        w->p = w->end = NULL;
        return;
    }
    w->p = w->s->p + w->s->len;
    w->end = w->s->p + w->s->cap - 1;
}

static inline void wr_end(wr *w)
{
    if (!w->p) return;
    w->s->len = (size_t)(w->p - w->s->p);
    w->s->p[w->s->len] = '\0';
}

static inline void wr_c(wr *w, char c)
{
    if (w->p) *w->p++ = c;
}

static inline void wr_n(wr *w, const char *str, size_t n)
{
    if (!w->p) return;
    memcpy(w->p, str, n);
    w->p += n;
}

#define wr_lit(w, lit) wr_n((w), (lit), sizeof(lit) - 1)

static inline void wr_s(wr *w, const char *str)
{
    wr_n(w, str, strlen(str));
}

/* hexadecimal, at least 'width' digits: the number of digits first, then written from the
 * last one back (no reversed copy) */
static inline void wr_hex(wr *w, uint64_t v, unsigned width, int upper)
{
    static const char lo[] = "0123456789abcdef", up[] = "0123456789ABCDEF";
    const char *d = upper ? up : lo;
    unsigned n = (unsigned)(67 - __builtin_clzll(v | 1)) / 4;
    if (width > 16) width = 16;
    if (!w->p) return;
    for (; n < width; width--)
        *w->p++ = '0';
    char *q = w->p + n;
    w->p = q;
    do {
        *--q = d[v & 15];
        v >>= 4;
    } while (v);
}

static inline void wr_hex2(wr *w, uint8_t v)
{
    static const char lo[] = "0123456789abcdef";
    if (!w->p) return;
    w->p[0] = lo[v >> 4];
    w->p[1] = lo[v & 15];
    w->p += 2;
}

/* Decimal digits of v (1-20). */
static inline unsigned wr_dec_len(uint64_t v)
{
    unsigned n = 1;
    for (uint64_t x = 10; v >= x; x *= 10) {
        n++;
        if (n == 20) break; /* (10^19 is the last power of ten below 2^64) */
    }
    return n;
}

/* v's n digits at p, two at a time from the last one back. */
static inline void wr_dec_at(char *p, uint64_t v, unsigned n)
{
    static const char pairs[] =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
        "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";
    char *q = p + n;
    while (v >= 100) {
        const unsigned r = (unsigned)(v % 100);
        v /= 100;
        q -= 2;
        memcpy(q, pairs + 2 * r, 2);
    }
    if (v >= 10) {
        q -= 2;
        memcpy(q, pairs + 2 * v, 2);
    } else {
        *--q = (char)('0' + v);
    }
}

static inline void wr_dec(wr *w, uint64_t v)
{
    if (!w->p) return;
    const unsigned n = wr_dec_len(v);
    wr_dec_at(w->p, v, n);
    w->p += n;
}

/* decimal right-aligned in 'width' columns */
static inline void wr_dec_w(wr *w, uint64_t v, unsigned width)
{
    if (!w->p) return;
    const unsigned n = wr_dec_len(v);
    for (unsigned i = n; i < width; i++)
        *w->p++ = ' ';
    wr_dec_at(w->p, v, n);
    w->p += n;
}

/* decimal with leading zeros to 'width' digits */
static inline void wr_dec0(wr *w, uint64_t v, unsigned width)
{
    if (!w->p) return;
    const unsigned n = wr_dec_len(v);
    for (unsigned i = n; i < width; i++)
        *w->p++ = '0';
    wr_dec_at(w->p, v, n);
    w->p += n;
}

#endif
