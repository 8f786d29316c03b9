/* ek_sbuf: a growable text buffer. Library formatters append to one; the caller writes it out. */
#ifndef ETMKIT_SBUF_H
#define ETMKIT_SBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

typedef struct ek_sbuf {
    char *p; /* NUL-terminated while len < cap */
    size_t len;
    size_t cap;
    int oom; /* set once an allocation failed; later appends are dropped */
} ek_sbuf;

#define EK_SBUF_INIT                                                                               \
    {                                                                                              \
        0, 0, 0, 0                                                                                 \
    }

void ek_sbuf_free(ek_sbuf *s);
void ek_sbuf_reset(ek_sbuf *s);                /* len = 0, keeps the memory */
int ek_sbuf_reserve(ek_sbuf *s, size_t extra); /* 0 or EK_ERR_NOMEM */
/* The same, without a call when the room is there already (once per line of a listing). */
static inline int ek_sbuf_room(ek_sbuf *s, size_t extra)
{
    if (!s->oom && s->cap > s->len && extra < s->cap - s->len) return 0;
    return ek_sbuf_reserve(s, extra);
}
void ek_sbuf_putc(ek_sbuf *s, char c);
void ek_sbuf_put(ek_sbuf *s, const char *str, size_t n);
void ek_sbuf_puts(ek_sbuf *s, const char *str);
void ek_sbuf_printf(ek_sbuf *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ek_sbuf_vprintf(ek_sbuf *s, const char *fmt, va_list ap);
/* Hexadecimal without prefix; width pads with zeros (0 = minimal digits); upper selects A-F. */
void ek_sbuf_hex(ek_sbuf *s, uint64_t v, unsigned width, int upper);
void ek_sbuf_dec(ek_sbuf *s, uint64_t v);
void ek_sbuf_sdec(ek_sbuf *s, int64_t v);
/* A JSON string: s quoted, with '"', '\\' and control characters escaped, UTF-8 characters
 * as they are, and each byte that begins no well-formed UTF-8 character (a name in another
 * encoding) as \ufffd (NULL: ""). Every string the library and the CLI write into JSON from
 * data (names, paths, messages) goes through it. */
void ek_json_string(ek_sbuf *out, const char *s);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
