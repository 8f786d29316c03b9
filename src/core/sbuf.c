#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "etmkit/sbuf.h"

void ek_sbuf_free(ek_sbuf *s)
{
    free(s->p);
    s->p = NULL;
    s->len = s->cap = 0;
    s->oom = 0;
}

void ek_sbuf_reset(ek_sbuf *s)
{
    s->len = 0;
    if (s->p)
        s->p[0] = '\0';
}

int ek_sbuf_reserve(ek_sbuf *s, size_t extra)
{
    if (s->oom)
        return EK_ERR_NOMEM;
    if (extra > SIZE_MAX / 2 - s->len)
        goto fail;
    size_t need = s->len + extra + 1;
    if (need <= s->cap)
        return EK_OK;
    size_t cap = s->cap ? s->cap : 256;
    while (cap < need)
        cap *= 2;
    char *p = realloc(s->p, cap);
    if (!p)
        goto fail;
    s->p = p;
    s->cap = cap;
    return EK_OK;
fail:
    s->oom = 1;
    return EK_ERR_NOMEM;
}

void ek_sbuf_put(ek_sbuf *s, const char *str, size_t n)
{
    if ((s->oom || s->cap <= s->len || n >= s->cap - s->len) && ek_sbuf_reserve(s, n))
        return;
    memcpy(s->p + s->len, str, n);
    s->len += n;
    s->p[s->len] = '\0';
}

void ek_sbuf_putc(ek_sbuf *s, char c)
{
    if (s->len + 1 < s->cap) {
        s->p[s->len++] = c;
        s->p[s->len] = '\0';
        return;
    }
    ek_sbuf_put(s, &c, 1);
}

void ek_sbuf_puts(ek_sbuf *s, const char *str)
{
    ek_sbuf_put(s, str, strlen(str));
}

void ek_sbuf_vprintf(ek_sbuf *s, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    size_t room = s->cap > s->len ? s->cap - s->len : 0;
    int n = vsnprintf(room ? s->p + s->len : NULL, room, fmt, ap);
    if (n < 0) {
        va_end(ap2);
        return;
    }
    if ((size_t)n >= room) {
        if (ek_sbuf_reserve(s, (size_t)n)) {
            va_end(ap2);
            return;
        }
        vsnprintf(s->p + s->len, s->cap - s->len, fmt, ap2);
    }
    va_end(ap2);
    s->len += (size_t)n;
}

void ek_sbuf_printf(ek_sbuf *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ek_sbuf_vprintf(s, fmt, ap);
    va_end(ap);
}

void ek_sbuf_hex(ek_sbuf *s, uint64_t v, unsigned width, int upper)
{
    static const char lo[] = "0123456789abcdef", up[] = "0123456789ABCDEF";
    const char *digits = upper ? up : lo;
    char tmp[16];
    unsigned n = 0;
    do {
        tmp[n++] = digits[v & 15];
        v >>= 4;
    } while (v && n < 16);
    if (width > 16)
        width = 16;
    while (n < width)
        tmp[n++] = '0';
    if (ek_sbuf_reserve(s, n))
        return;
    while (n)
        s->p[s->len++] = tmp[--n];
    s->p[s->len] = '\0';
}

void ek_sbuf_dec(ek_sbuf *s, uint64_t v)
{
    char tmp[20];
    unsigned n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (ek_sbuf_reserve(s, n))
        return;
    while (n)
        s->p[s->len++] = tmp[--n];
    s->p[s->len] = '\0';
}

void ek_sbuf_sdec(ek_sbuf *s, int64_t v)
{
    if (v < 0) {
        ek_sbuf_putc(s, '-');
        ek_sbuf_dec(s, (uint64_t)0 - (uint64_t)v);
    } else {
        ek_sbuf_dec(s, (uint64_t)v);
    }
}

/* The length of the well-formed UTF-8 sequence at p (its lead byte >= 0x80), or 0: no
 * overlong forms, no surrogates, nothing past U+10FFFF (Unicode's table 3-7). */
static size_t utf8_len(const unsigned char *p)
{
    const unsigned c = p[0];
    unsigned lo = 0x80, hi = 0xbf;
    size_t n;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    else
        return 0;
    if (p[1] < lo || p[1] > hi) return 0; /* (a NUL ends the check here too) */
    for (size_t i = 2; i < n; i++)
        if ((p[i] & 0xc0) != 0x80) return 0;
    return n;
}

/* The one JSON string writer (etmkit/sbuf.h). */
void ek_json_string(ek_sbuf *out, const char *s)
{
    ek_sbuf_putc(out, '"');
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '"': ek_sbuf_puts(out, "\\\""); break;
        case '\\': ek_sbuf_puts(out, "\\\\"); break;
        case '\n': ek_sbuf_puts(out, "\\n"); break;
        case '\t': ek_sbuf_puts(out, "\\t"); break;
        case '\r': ek_sbuf_puts(out, "\\r"); break;
        default:
            if (*p < 0x20 || *p == 0x7f) {
                ek_sbuf_printf(out, "\\u%04x", *p);
            } else if (*p < 0x80) {
                ek_sbuf_putc(out, (char)*p);
            } else {
                /* JSON text is UTF-8: a character passes as it is; a byte that is not part of
                 * one (a file name in another encoding) becomes U+FFFD, as a decoder would
                 * show it (\u00XX would name another character: Latin-1's) */
                const size_t n = utf8_len(p);
                if (n) {
                    ek_sbuf_put(out, (const char *)p, n);
                    p += n - 1;
                } else {
                    ek_sbuf_puts(out, "\\ufffd");
                }
            }
        }
    }
    ek_sbuf_putc(out, '"');
}
