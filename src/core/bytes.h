/* Little-endian loads and a bounds-checked byte reader. Pure; no allocation. */
#ifndef ETMKIT_CORE_BYTES_H
#define ETMKIT_CORE_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t ek_le16(const void *p)
{
    const uint8_t *b = p;
    return (uint16_t)(b[0] | (b[1] << 8));
}
static inline uint32_t ek_le32(const void *p)
{
    const uint8_t *b = p;
    return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24);
}
static inline uint64_t ek_le64(const void *p)
{
    return (uint64_t)ek_le32(p) | ((uint64_t)ek_le32((const uint8_t *)p + 4) << 32);
}
static inline void ek_put_le16(void *p, uint16_t v)
{
    uint8_t *b = p;
    b[0] = (uint8_t)v;
    b[1] = (uint8_t)(v >> 8);
}
static inline void ek_put_le32(void *p, uint32_t v)
{
    uint8_t *b = p;
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}
static inline void ek_put_le64(void *p, uint64_t v)
{
    uint8_t *b = p;
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}
static inline uint64_t ek_bswap64(uint64_t v)
{
    return __builtin_bswap64(v);
}

/* A cursor over [p, p+len). Reads past the end return 0 and set 'err'. */
typedef struct ek_rd {
    const uint8_t *p;
    size_t len;
    size_t pos;
    int err;
} ek_rd;

static inline ek_rd ek_rd_make(const void *p, size_t len)
{
    ek_rd r = {(const uint8_t *)p, len, 0, 0};
    return r;
}
static inline size_t ek_rd_left(const ek_rd *r)
{
    return r->pos <= r->len ? r->len - r->pos : 0;
}
static inline int ek_rd_need(ek_rd *r, size_t n)
{
    if (r->err || n > ek_rd_left(r)) {
        r->err = 1;
        return 0;
    }
    return 1;
}
static inline uint8_t ek_rd_u8(ek_rd *r)
{
    if (!ek_rd_need(r, 1))
        return 0;
    return r->p[r->pos++];
}
static inline uint16_t ek_rd_u16(ek_rd *r)
{
    if (!ek_rd_need(r, 2))
        return 0;
    uint16_t v = ek_le16(r->p + r->pos);
    r->pos += 2;
    return v;
}
static inline uint32_t ek_rd_u32(ek_rd *r)
{
    if (!ek_rd_need(r, 4))
        return 0;
    uint32_t v = ek_le32(r->p + r->pos);
    r->pos += 4;
    return v;
}
static inline uint64_t ek_rd_u64(ek_rd *r)
{
    if (!ek_rd_need(r, 8))
        return 0;
    uint64_t v = ek_le64(r->p + r->pos);
    r->pos += 8;
    return v;
}
static inline const uint8_t *ek_rd_bytes(ek_rd *r, size_t n)
{
    if (!ek_rd_need(r, n))
        return NULL;
    const uint8_t *p = r->p + r->pos;
    r->pos += n;
    return p;
}
static inline void ek_rd_skip(ek_rd *r, size_t n)
{
    if (ek_rd_need(r, n))
        r->pos += n;
}

#endif
