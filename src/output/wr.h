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

/* A line kept in a slot of a fixed size (the line cache): the whole slot is copied (a constant
 * size: no call), then only its length counts. Dropped, as every append, once the buffer ran
 * out of memory (ek_sbuf_room). */
static inline void wr_slot(ek_sbuf *s, const char *slot, size_t size, size_t len)
{
    if (ek_sbuf_room(s, size)) return;
    memcpy(s->p + s->len, slot, size);
    s->len += len;
    s->p[s->len] = '\0';
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

/* Decimal digits of v (1-20), without a loop: the bit length gives the power of ten below
 * (1233 / 4096 is log10(2) rounded down, exact enough for 64 bits), one compare corrects it.
 * v | 1 has the digits of v (every power of ten from 10 up is even) and gives 0 one digit. */
static inline unsigned wr_dec_len(uint64_t v)
{
    static const uint64_t pow10[20] = {1ull,
                                       10ull,
                                       100ull,
                                       1000ull,
                                       10000ull,
                                       100000ull,
                                       1000000ull,
                                       10000000ull,
                                       100000000ull,
                                       1000000000ull,
                                       10000000000ull,
                                       100000000000ull,
                                       1000000000000ull,
                                       10000000000000ull,
                                       100000000000000ull,
                                       1000000000000000ull,
                                       10000000000000000ull,
                                       100000000000000000ull,
                                       1000000000000000000ull,
                                       10000000000000000000ull};
    const uint64_t x = v | 1;
    const unsigned t = ((64u - (unsigned)__builtin_clzll(x)) * 1233u) >> 12;
    return t + 1 - (x < pow10[t]);
}

/* v's n digits at p, from the last one back: four at a time (one 64-bit division by 10000,
 * then two independent pairs in 32 bits), then the leading one to four. */
static inline void wr_dec_at(char *p, uint64_t v, unsigned n)
{
    static const char pairs[] =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
        "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";
    char *q = p + n;
    while (v >= 10000) {
        const uint32_t c = (uint32_t)(v % 10000);
        v /= 10000;
        q -= 4;
        memcpy(q, pairs + 2 * (c / 100), 2);
        memcpy(q + 2, pairs + 2 * (c % 100), 2);
    }
    uint32_t x = (uint32_t)v;
    if (x >= 100) {
        q -= 2;
        memcpy(q, pairs + 2 * (x % 100), 2);
        x /= 100;
    }
    if (x >= 10) {
        q -= 2;
        memcpy(q, pairs + 2 * x, 2);
    } else {
        *--q = (char)('0' + x);
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
