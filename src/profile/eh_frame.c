/* .eh_frame: CIEs and FDEs (the LSB's "Exception Frames" layout, DWARF call frame entries with
 * GCC's augmentations), read for the address range of each FDE only.
 *
 * An entry is: length (4 bytes; 0xffffffff and an 8-byte length for the 64-bit format; 0 ends
 * the section), then a 4-byte CIE id (0: a CIE) or CIE pointer (the distance back from this
 * field to the FDE's CIE). A CIE gives the FDEs' pointer encoding: augmentation "z..." with an
 * 'R' byte (absptr when there is no 'R' or no augmentation). An FDE is pc_begin (in that
 * encoding) and pc_range (its value format, no base). Encodings read: absptr, udata2/4/8,
 * sdata2/4/8, uleb128, sleb128, applied absolutely or pc-relatively; datarel, textrel,
 * funcrel, aligned and indirect pointers need a base or memory this reader has not got and
 * their FDEs are skipped (counted). CFA instructions and augmentation data are stepped over.
 */
#include "profile/eh_frame.h"

#include <string.h>

#define PE_OMIT     0xffu
#define PE_FORMAT   0x0fu
#define PE_APPLY    0x70u
#define PE_PCREL    0x10u
#define PE_INDIRECT 0x80u

typedef struct cur {
    const uint8_t *p;
    size_t pos, end; /* read [pos, end) */
    int big;
    int bad; /* a read ran past end */
} cur;

static uint64_t rd_u(cur *c, unsigned n)
{
    if (c->bad || c->end - c->pos < n) {
        c->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned b = c->p[c->pos + (c->big ? i : n - 1 - i)];
        v = v << 8 | b;
    }
    c->pos += n;
    return v;
}

static uint64_t rd_uleb(cur *c)
{
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        if (c->bad || c->pos >= c->end || shift > 63) {
            c->bad = 1;
            return 0;
        }
        uint8_t b = c->p[c->pos++];
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return v;
    }
}

static int64_t rd_sleb(cur *c)
{
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t b;
    do {
        if (c->bad || c->pos >= c->end || shift > 63) {
            c->bad = 1;
            return 0;
        }
        b = c->p[c->pos++];
        v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40)) v |= ~(uint64_t)0 << shift;
    return (int64_t)v;
}

static uint64_t sext(uint64_t v, unsigned bytes)
{
    unsigned bits = bytes * 8;
    if (bits >= 64) return v;
    uint64_t sign = (uint64_t)1 << (bits - 1);
    return (v ^ sign) - sign;
}

/* Is the value format of enc one this reader takes? */
static int format_ok(unsigned enc)
{
    switch (enc & PE_FORMAT) {
    case 0x00:
    case 0x01:
    case 0x02:
    case 0x03:
    case 0x04:
    case 0x09:
    case 0x0a:
    case 0x0b:
    case 0x0c: return 1;
    default: return 0;
    }
}

/* A value in enc's format (no application). */
static uint64_t rd_format(cur *c, unsigned enc, unsigned addr_size)
{
    switch (enc & PE_FORMAT) {
    case 0x00: return rd_u(c, addr_size);
    case 0x01: return rd_uleb(c);
    case 0x02: return rd_u(c, 2);
    case 0x03: return rd_u(c, 4);
    case 0x04: return rd_u(c, 8);
    case 0x09: return (uint64_t)rd_sleb(c);
    case 0x0a: return sext(rd_u(c, 2), 2);
    case 0x0b: return sext(rd_u(c, 4), 4);
    case 0x0c: return rd_u(c, 8);
    default: c->bad = 1; return 0;
    }
}

/* What an FDE needs from its CIE. */
typedef struct cie_info {
    size_t off;    /* the CIE's offset in the section */
    unsigned enc;  /* FDE pointer encoding */
    int aug_z;     /* 'z': FDEs carry an augmentation data length */
    int supported; /* enc and the augmentation are read here */
} cie_info;

/* Is the pointer encoding one pc_begin can be read in? */
static int enc_ok(unsigned enc)
{
    if (enc == PE_OMIT || (enc & PE_INDIRECT) || !format_ok(enc)) return 0;
    unsigned app = enc & PE_APPLY;
    return app == 0 || app == PE_PCREL;
}

/* Read the CIE at off. Returns 0 (ci filled, maybe unsupported) or -1 (no CIE there). */
static int read_cie(const uint8_t *data, size_t size, size_t off, unsigned addr_size, int big,
                    cie_info *ci)
{
    cur c = {data, off, size, big, 0};
    uint64_t len = rd_u(&c, 4);
    if (c.bad || len == 0) return -1;
    if (len == 0xffffffffu) {
        len = rd_u(&c, 8);
        if (c.bad) return -1;
    } else if (len >= 0xfffffff0u) {
        return -1; /* reserved lengths */
    }
    if (len > c.end - c.pos) return -1;
    c.end = c.pos + (size_t)len;
    uint64_t id = rd_u(&c, 4);
    if (c.bad || id != 0) return -1;
    memset(ci, 0, sizeof *ci);
    ci->off = off;
    ci->enc = 0; /* absptr */
    unsigned version = (unsigned)rd_u(&c, 1);
    if (c.bad) return -1;
    if (version != 1 && version != 3 && version != 4) return 0; /* unsupported */
    /* augmentation string */
    size_t aug = c.pos;
    while (c.pos < c.end && data[c.pos])
        c.pos++;
    if (c.pos >= c.end) return -1;
    const char *a = (const char *)data + aug;
    size_t alen = c.pos - aug;
    c.pos++;
    if (version == 4) {
        unsigned asz = (unsigned)rd_u(&c, 1);
        unsigned ssz = (unsigned)rd_u(&c, 1);
        if (c.bad) return -1;
        if (asz != addr_size || ssz != 0) return 0;
    }
    size_t i = 0;
    if (alen >= 2 && a[0] == 'e' && a[1] == 'h') { /* old GCC: an eh_data pointer */
        rd_u(&c, addr_size);
        i = 2;
    }
    rd_uleb(&c); /* code alignment */
    rd_sleb(&c); /* data alignment */
    if (version == 1)
        rd_u(&c, 1); /* return address register */
    else
        rd_uleb(&c);
    if (c.bad) return -1;
    if (i == alen) {
        ci->supported = 1; /* no augmentation: absptr */
        return 0;
    }
    if (a[i] != 'z') return 0; /* the FDE layout is unknown without 'z' */
    ci->aug_z = 1;
    uint64_t dlen = rd_uleb(&c);
    if (c.bad || dlen > c.end - c.pos) return -1;
    cur d = {data, c.pos, c.pos + (size_t)dlen, big, 0};
    for (i++; i < alen; i++) {
        switch (a[i]) {
        case 'R': ci->enc = (unsigned)rd_u(&d, 1); break;
        case 'L': rd_u(&d, 1); break;
        case 'P': {
            unsigned penc = (unsigned)rd_u(&d, 1);
            if (d.bad || penc == PE_OMIT || !format_ok(penc) || (penc & PE_APPLY) == 0x50)
                return 0; /* cannot step over it */
            rd_format(&d, penc, addr_size);
            break;
        }
        case 'S':
        case 'B':
        case 'G': break;
        default:
            /* an unknown letter: the 'z' length still bounds its data, but a later 'R'
             * cannot be found; without one to come the encoding is known */
            if (!memchr(a + i, 'R', alen - i))
                i = alen - 1;
            else
                return 0;
            break;
        }
        if (d.bad) return -1;
    }
    ci->supported = enc_ok(ci->enc);
    return 0;
}

int ek_eh_frame_walk(const uint8_t *data, size_t size, uint64_t sec_addr, unsigned addr_size,
                     int big, ek_eh_frame_fn fn, void *ctx, ek_eh_frame_stats *st)
{
    ek_eh_frame_stats dummy;
    if (!st) st = &dummy;
    memset(st, 0, sizeof *st);
    if (!data || !fn || (addr_size != 4 && addr_size != 8)) return 0;
    uint64_t amask = addr_size == 8 ? UINT64_MAX : 0xffffffffu;
    cie_info last = {SIZE_MAX, 0, 0, 0};
    size_t off = 0;
    while (off < size) {
        cur c = {data, off, size, big, 0};
        uint64_t len = rd_u(&c, 4);
        if (c.bad) {
            st->truncated = 1;
            break;
        }
        if (len == 0) break; /* terminator */
        if (len == 0xffffffffu) {
            len = rd_u(&c, 8);
        } else if (len >= 0xfffffff0u) {
            st->truncated = 1;
            break;
        }
        if (c.bad || len > c.end - c.pos || len < 4) {
            st->truncated = 1;
            break;
        }
        size_t next = c.pos + (size_t)len;
        c.end = next;
        size_t idpos = c.pos;
        uint64_t id = rd_u(&c, 4);
        if (id == 0) {
            st->cies++;
        } else if (id > idpos) {
            st->bad++;
        } else {
            size_t coff = idpos - (size_t)id;
            cie_info ci;
            if (coff == last.off) {
                ci = last;
            } else if (read_cie(data, size, coff, addr_size, big, &ci)) {
                st->bad++;
                off = next;
                continue;
            } else {
                last = ci;
            }
            if (!ci.supported) {
                st->unsupported++;
            } else {
                uint64_t field = sec_addr + (uint64_t)c.pos;
                uint64_t start = rd_format(&c, ci.enc, addr_size);
                if ((ci.enc & PE_APPLY) == PE_PCREL) start += field;
                start &= amask;
                uint64_t range = rd_format(&c, ci.enc & PE_FORMAT, addr_size) & amask;
                if (ci.aug_z) {
                    uint64_t dlen = rd_uleb(&c);
                    if (!c.bad && dlen > c.end - c.pos) c.bad = 1;
                }
                if (c.bad) {
                    st->bad++;
                } else {
                    st->fdes++;
                    int rc = fn(ctx, start, range);
                    if (rc) return rc;
                }
            }
        }
        off = next;
    }
    return 0;
}
