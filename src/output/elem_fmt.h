/* Small, fast text builders shared by the element formatters: they write into a caller's
 * fixed buffer (every element line has a bounded length), then the caller appends the
 * buffer to an ek_sbuf in one copy. */
#ifndef ETMKIT_OUTPUT_ELEM_FMT_H
#define ETMKIT_OUTPUT_ELEM_FMT_H

#include <stdint.h>
#include <string.h>

#define EF_PUTS(p, lit) (memcpy((p), (lit), sizeof(lit) - 1), (p) += sizeof(lit) - 1)

static inline char *ef_str(char *p, const char *s)
{
    size_t n = strlen(s);
    memcpy(p, s, n);
    return p + n;
}

/* Lower-case hexadecimal, at least 'width' digits (zero padded). */
static inline char *ef_hex(char *p, uint64_t v, unsigned width)
{
    static const char digits[] = "0123456789abcdef";
    unsigned n = 1;
    uint64_t t = v >> 4;
    while (t) {
        n++;
        t >>= 4;
    }
    if (n < width)
        n = width;
    for (unsigned i = n; i > 0; i--) {
        p[i - 1] = digits[v & 15];
        v >>= 4;
    }
    return p + n;
}

static inline char *ef_dec(char *p, uint64_t v)
{
    char tmp[20];
    unsigned n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

#endif
