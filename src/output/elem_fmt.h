/* Small, fast text builders shared by the element formatters: they write into a caller's
 * span (every element line has a bounded length, reserved beforehand), so there are no
 * bounds checks per character and no library calls in the common paths. */
#ifndef ETMKIT_OUTPUT_ELEM_FMT_H
#define ETMKIT_OUTPUT_ELEM_FMT_H

#include <stdint.h>
#include <string.h>

/* Append a string literal (constant size: the copy is inlined). */
#define EF_PUTS(p, lit) (memcpy((p), (lit), sizeof(lit) - 1), (p) += sizeof(lit) - 1)

/* A short name with its length, padded so that it can be copied with a constant-size move
 * (the destination must have EF_NAME_MAX bytes of room). */
#define EF_NAME_MAX 24
typedef struct ef_name {
    char s[EF_NAME_MAX];
    uint8_t n;
} ef_name;
#define EF_NAME(lit)                                                                               \
    {                                                                                              \
        lit, sizeof(lit) - 1                                                                       \
    }

static inline char *ef_name_put(char *p, const ef_name *nm)
{
    memcpy(p, nm->s, EF_NAME_MAX);
    return p + nm->n;
}

static inline char *ef_str(char *p, const char *s)
{
    while (*s)
        *p++ = *s++;
    return p;
}

/* Lower-case hexadecimal, at least 'width' digits (zero padded). */
static inline char *ef_hex(char *p, uint64_t v, unsigned width)
{
    static const char digits[] = "0123456789abcdef";
    unsigned n = v ? (unsigned)(67 - __builtin_clzll(v)) / 4 : 1;
    if (n < width) n = width;
    char *e = p + n;
    for (char *q = e; q > p;) {
        *--q = digits[v & 15];
        v >>= 4;
    }
    return e;
}

static inline char *ef_dec(char *p, uint64_t v)
{
    static const char pairs[] =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
        "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";
    char tmp[32]; /* digits end at tmp + 20; the rest is slack for the constant-size copy */
    char *const end = tmp + 20;
    char *q = end;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
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
    size_t n = (size_t)(end - q);
    if (n <= 8)
        memcpy(p, q, 8); /* constant-size move; the bytes past the digits are overwritten later */
    else
        memcpy(p, q, n);
    return p + n;
}

#endif
