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

/* hexadecimal, at least 'width' digits */
static inline void wr_hex(wr *w, uint64_t v, unsigned width, int upper)
{
    static const char lo[] = "0123456789abcdef", up[] = "0123456789ABCDEF";
    const char *d = upper ? up : lo;
    char tmp[16];
    unsigned n = 0;
    do {
        tmp[n++] = d[v & 15];
        v >>= 4;
    } while (v);
    if (width > 16) width = 16;
    while (n < width)
        tmp[n++] = '0';
    if (!w->p) return;
    while (n)
        *w->p++ = tmp[--n];
}

static inline void wr_hex2(wr *w, uint8_t v)
{
    static const char lo[] = "0123456789abcdef";
    if (!w->p) return;
    w->p[0] = lo[v >> 4];
    w->p[1] = lo[v & 15];
    w->p += 2;
}

static inline void wr_dec(wr *w, uint64_t v)
{
    char tmp[20];
    unsigned n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (!w->p) return;
    while (n)
        *w->p++ = tmp[--n];
}

/* decimal right-aligned in 'width' columns */
static inline void wr_dec_w(wr *w, uint64_t v, unsigned width)
{
    char tmp[20];
    unsigned n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (!w->p) return;
    for (unsigned i = n; i < width; i++)
        *w->p++ = ' ';
    while (n)
        *w->p++ = tmp[--n];
}

/* decimal with leading zeros to 'width' digits */
static inline void wr_dec0(wr *w, uint64_t v, unsigned width)
{
    char tmp[20];
    unsigned n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (!w->p) return;
    for (unsigned i = n; i < width; i++)
        *w->p++ = '0';
    while (n)
        *w->p++ = tmp[--n];
}

#endif
