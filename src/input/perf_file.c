/* perf.data reader: file header, attributes, feature sections and the indexing pass. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <string.h>

#include "input/perf_internal.h"

#define PF_MAGIC2           0x32454c4946524550ull /* "PERFILE2" read little-endian */
#define PF_MAGIC2_SW        0x50455246494c4532ull /* the same bytes written big-endian */
#define PF_MAGIC1           0x454c494646524550ull /* "PERFFILE" (version 1, unsupported) */
#define PF_FILE_HEADER_SIZE 104u
#define PF_PIPE_HEADER_SIZE 16u
#define PF_ATTR_SIZE_VER0   64u
#define PF_ATTR_MAX_SIZE    4096u  /* larger attr sizes are treated as damage */
#define PF_MAX_ATTRS        4096u  /* events kept (perf records a handful) */
#define PF_BAD              (-100) /* a feature or entry is damaged (not an ek_status) */

void pf_diag(const ek_perf_file *f, const ek_diag *d, ek_severity sev, const char *kind, int status,
             int64_t record, int64_t offset, const char *fmt, ...)
{
    if (!d || !d->fn) return;
    va_list ap;
    va_start(ap, fmt);
    ek_diag_vemit(d, sev, kind, status, f ? f->name : NULL, record, offset, -1, fmt, ap);
    va_end(ap);
}

static int own(ek_perf_file *f, void *p)
{
    if (!p) return EK_ERR_NOMEM;
    if (ek_vec_push(&f->allocs, p)) {
        free(p);
        return EK_ERR_NOMEM;
    }
    return 0;
}

/* Copy a string of at most maxlen bytes (stops at NUL) into memory owned by f. */
char *pf_strdup_owned(ek_perf_file *f, const char *s, size_t maxlen)
{
    size_t n = 0;
    while (n < maxlen && s[n])
        n++;
    char *p = malloc(n + 1);
    if (!p) return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return own(f, p) ? NULL : p;
}

/* ---- attributes --------------------------------------------------------------------- */

static uint8_t bitrev8(uint8_t b)
{
    b = (uint8_t)(((b & 0xf0) >> 4) | ((b & 0x0f) << 4));
    b = (uint8_t)(((b & 0xcc) >> 2) | ((b & 0x33) << 2));
    b = (uint8_t)(((b & 0xaa) >> 1) | ((b & 0x55) << 1));
    return b;
}

/* The bit-field word: a big-endian writer allocates bit-fields from the top of each byte,
 * in byte order, so bit i of the little-endian word is bit (7 - i%8) of byte i/8. */
static uint64_t attr_flags(const uint8_t *p, int swap)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)(swap ? bitrev8(p[i]) : p[i]) << (8 * i);
    return v;
}

static int idref_cmp(const void *a, const void *b)
{
    const pf_idref *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Parse a perf_event_attr at p (avail bytes available; the attr's own size decides how much
 * is used) and add it with its ids. */
int pf_add_attr(ek_perf_file *f, const uint8_t *p, size_t avail, int64_t record, uint64_t offset,
                const uint8_t *ids, size_t nids, ek_perf_attr **out)
{
    int swap = f->hdr.swapped;
    if (f->attrs.n >= PF_MAX_ATTRS) {
        if (!f->attr_limit_noted++)
            pf_diag(f, f->diag, EK_SEV_WARN, "perf.attr-limit", EK_ERR_LIMIT, record,
                    (int64_t)offset, "more than %u events; the rest are ignored", PF_MAX_ATTRS);
        return 0;
    }
    ek_perf_attr *a = calloc(1, sizeof *a);
    if (!a) return EK_ERR_NOMEM;
    uint8_t buf[136];
    memset(buf, 0, sizeof buf);
    uint32_t size = avail >= 8 ? pf_u32(p + 4, swap) : 0;
    size_t use = size ? size : PF_ATTR_SIZE_VER0;
    if (use > avail) use = avail;
    memcpy(buf, p, use < sizeof buf ? use : sizeof buf);
    a->type = pf_u32(buf, swap);
    a->size = size;
    a->config = pf_u64(buf + 8, swap);
    a->sample_period = pf_u64(buf + 16, swap);
    a->sample_type = pf_u64(buf + 24, swap);
    a->read_format = pf_u64(buf + 32, swap);
    a->flags = attr_flags(buf + 40, swap);
    a->wakeup_events = pf_u32(buf + 48, swap);
    a->bp_type = pf_u32(buf + 52, swap);
    a->config1 = pf_u64(buf + 56, swap);
    a->config2 = pf_u64(buf + 64, swap);
    a->branch_sample_type = pf_u64(buf + 72, swap);
    a->clockid = (int32_t)pf_u32(buf + 92, swap);
    a->aux_watermark = pf_u32(buf + 104, swap);
    a->config3 = pf_u64(buf + 128, swap);
    a->offset = offset;
    a->record = record;
    if (nids) {
        uint64_t *v = malloc(nids * sizeof *v);
        if (!v || own(f, v)) {
            free(a);
            return EK_ERR_NOMEM;
        }
        for (size_t i = 0; i < nids; i++)
            v[i] = pf_u64(ids + 8 * i, swap);
        a->ids = v;
        a->nids = nids;
    }
    if (ek_vec_push(&f->attrs, a)) {
        free(a);
        return EK_ERR_NOMEM;
    }
    /* keep idrefs sorted: sort the new ones, then merge from the back (O(n) per attr) */
    if (!nids) goto done;
    if (ek_vec_reserve(&f->idrefs, f->idrefs.n + nids)) return EK_ERR_NOMEM;
    pf_idref *v = f->idrefs.v;
    size_t old = f->idrefs.n;
    for (size_t i = 0; i < nids; i++) {
        pf_idref r = {a->ids[i], a};
        v[old + i] = r;
    }
    qsort(v + old, nids, sizeof *v, idref_cmp);
    if (old && nids && v[old - 1].id > v[old].id) {
        pf_idref *tmp = malloc(nids * sizeof *tmp);
        if (!tmp) return EK_ERR_NOMEM;
        memcpy(tmp, v + old, nids * sizeof *tmp);
        size_t i = old, j = nids, k = old + nids;
        while (j > 0) {
            if (i > 0 && v[i - 1].id > tmp[j - 1].id)
                v[--k] = v[--i];
            else
                v[--k] = tmp[--j];
        }
        free(tmp);
    }
    f->idrefs.n = old + nids;
done:
    if (out) *out = a;
    return 0;
}

const ek_perf_attr *ek_perf_attr_by_id(const ek_perf_file *f, uint64_t id)
{
    size_t lo = 0, hi = f->idrefs.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->idrefs.v[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < f->idrefs.n && f->idrefs.v[lo].id == id ? f->idrefs.v[lo].attr : NULL;
}

#define PF_SID_BITS                                                                                \
    (EK_PERF_SAMPLE_TID | EK_PERF_SAMPLE_TIME | EK_PERF_SAMPLE_ID | EK_PERF_SAMPLE_STREAM_ID |     \
     EK_PERF_SAMPLE_CPU | EK_PERF_SAMPLE_IDENTIFIER)

/* u64 words from the end of the trailer to the ID field (1 = last word). */
static unsigned id_pos_from_end(uint64_t st)
{
    unsigned n = 1;
    if (st & EK_PERF_SAMPLE_IDENTIFIER) return 1;
    if (st & EK_PERF_SAMPLE_CPU) n++;
    if (st & EK_PERF_SAMPLE_STREAM_ID) n++;
    return n;
}

void pf_update_sid_mode(ek_perf_file *f)
{
    f->sid_mode = PF_SID_NONE;
    f->sid_attr = NULL;
    size_t n = f->attrs.n;
    if (!n) return;
    const ek_perf_attr *a0 = f->attrs.v[0];
    int any_all = 0, same = 1, all_ident = 1, all_id = 1;
    unsigned pos = id_pos_from_end(a0->sample_type);
    for (size_t i = 0; i < n; i++) {
        const ek_perf_attr *a = f->attrs.v[i];
        if (a->flags & EK_PERF_ATTR_FLAG_SAMPLE_ID_ALL) any_all = 1;
        if ((a->flags & EK_PERF_ATTR_FLAG_SAMPLE_ID_ALL) !=
                (a0->flags & EK_PERF_ATTR_FLAG_SAMPLE_ID_ALL) ||
            (a->sample_type & PF_SID_BITS) != (a0->sample_type & PF_SID_BITS))
            same = 0;
        if (!(a->sample_type & EK_PERF_SAMPLE_IDENTIFIER)) all_ident = 0;
        if (!(a->sample_type & (EK_PERF_SAMPLE_ID | EK_PERF_SAMPLE_IDENTIFIER)) ||
            id_pos_from_end(a->sample_type) != pos)
            all_id = 0;
    }
    if (!any_all) return;
    if (same) {
        f->sid_mode = PF_SID_SINGLE;
        f->sid_attr = a0;
    } else if (all_ident) {
        f->sid_mode = PF_SID_IDENTIFIER;
    } else if (all_id) {
        f->sid_mode = PF_SID_ID_POS;
        f->sid_id_pos = pos;
    } else {
        f->sid_mode = PF_SID_SINGLE;
        f->sid_attr = a0;
        pf_diag(f, f->diag, EK_SEV_WARN, "perf.attr-layout", EK_ERR_FORMAT, -1, -1,
                "events have different sample_id layouts and no common ID position; "
                "trailers are read with the first event's layout");
    }
}

static void read_file_attrs(ek_perf_file *f)
{
    const ek_perf_header_info *h = &f->hdr;
    if (h->attr_size < PF_ATTR_SIZE_VER0 + 16 || h->attr_size > PF_ATTR_MAX_SIZE + 16) {
        pf_diag(f, f->diag, EK_SEV_ERROR, "perf.attr-size", EK_ERR_FORMAT, -1, 16,
                "attr_size %llu is not a plausible perf_file_attr size; no events read",
                (unsigned long long)h->attr_size);
        return;
    }
    uint64_t off = h->attrs.offset, sz = h->attrs.size;
    if (off > f->size || sz > f->size - off) {
        pf_diag(f, f->diag, EK_SEV_ERROR, "perf.attr-section", EK_ERR_RANGE, -1, 24,
                "attrs section [0x%llx, +0x%llx) lies outside the file (size 0x%zx)",
                (unsigned long long)off, (unsigned long long)sz, f->size);
        if (off >= f->size) return;
        sz = f->size - off;
    }
    if (sz % h->attr_size)
        pf_diag(f, f->diag, EK_SEV_WARN, "perf.attr-section", EK_ERR_FORMAT, -1, 32,
                "attrs section size %llu is not a multiple of attr_size %llu",
                (unsigned long long)sz, (unsigned long long)h->attr_size);
    uint64_t n = sz / h->attr_size;
    /* ids sections of different attrs never share bytes in a valid file, so together they
     * fit in it; more means they overlap, and taking them would let memory grow with
     * nattrs x file size (issue 6). */
    uint64_t ids_total = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t eoff = off + i * h->attr_size;
        const uint8_t *e = f->data + eoff;
        size_t asz = h->attr_size - 16;
        uint32_t declared = pf_u32(e + 4, h->swapped);
        size_t ids_at = declared ? declared : PF_ATTR_SIZE_VER0;
        if (ids_at > asz) {
            pf_diag(f, f->diag, EK_SEV_WARN, "perf.attr-size", EK_ERR_FORMAT, -1, (int64_t)eoff,
                    "attr %llu: attr.size %u does not fit attr_size %llu", (unsigned long long)i,
                    declared, (unsigned long long)h->attr_size);
            ids_at = asz;
        }
        uint64_t ids_off = pf_u64(e + ids_at, h->swapped);
        uint64_t ids_sz = pf_u64(e + ids_at + 8, h->swapped);
        const uint8_t *ids = NULL;
        size_t nids = 0;
        if (ids_sz) {
            if (ids_off > f->size || ids_sz > f->size - ids_off) {
                pf_diag(f, f->diag, EK_SEV_WARN, "perf.attr-ids", EK_ERR_RANGE, -1,
                        (int64_t)(eoff + ids_at),
                        "attr %llu: ids [0x%llx, +0x%llx) outside the file; ids ignored",
                        (unsigned long long)i, (unsigned long long)ids_off,
                        (unsigned long long)ids_sz);
            } else if (ids_sz > f->size - ids_total) {
                pf_diag(f, f->diag, EK_SEV_WARN, "perf.attr-ids", EK_ERR_RANGE, -1,
                        (int64_t)(eoff + ids_at),
                        "attr %llu: ids [0x%llx, +0x%llx) overlap other attrs' ids (together "
                        "more than the file's %zu bytes); ids ignored",
                        (unsigned long long)i, (unsigned long long)ids_off,
                        (unsigned long long)ids_sz, f->size);
            } else {
                ids_total += ids_sz;
                ids = f->data + ids_off;
                nids = (size_t)(ids_sz / 8);
            }
        }
        if (pf_add_attr(f, e, asz, -1, eoff, ids, nids, NULL)) return;
    }
}

/* ---- features ----------------------------------------------------------------------- */

/* A perf header string: u32 len (incl. NUL and padding), then len bytes. */
static const char *rd_string(ek_perf_file *f, pf_rd *r)
{
    uint32_t len = pf_r32(r);
    const uint8_t *p = pf_rbytes(r, len);
    if (!p) return NULL;
    return pf_strdup_owned(f, (const char *)p, len);
}

static void feat_bad(ek_perf_file *f, unsigned bit, uint64_t offset, int64_t record,
                     const char *what)
{
    const char *name = ek_perf_feature_name(bit);
    pf_diag(f, f->diag, EK_SEV_WARN, "perf.feature", EK_ERR_FORMAT, record, (int64_t)offset,
            "feature %s (%u): %s", name ? name : "?", bit, what);
}

static int parse_auxtrace_index(ek_perf_file *f, const uint8_t *p, size_t len, uint64_t offset,
                                int64_t record)
{
    int swap = f->hdr.swapped;
    size_t first = 0, n;
    if (len % 16 == 8) {
        uint64_t nr = pf_u64(p, swap);
        n = (len - 8) / 16;
        if (nr != n) {
            feat_bad(f, EK_PERF_FEAT_AUXTRACE, offset, record,
                     "auxtrace index count does not match its size");
            if (nr < n) n = (size_t)nr;
        }
        first = 8;
        f->feat.index_kind = EK_PERF_INDEX_PERF;
    } else if (len % 16 == 0) {
        n = len / 16;
        f->feat.index_kind = EK_PERF_INDEX_SIMPLEPERF;
        pf_diag(f, f->diag, EK_SEV_NOTE, "perf.index-simpleperf", 0, record, (int64_t)offset,
                "AUXTRACE index has no leading count (simpleperf's variant); read as %zu "
                "entr%s",
                n, n == 1 ? "y" : "ies");
    } else {
        f->feat.index_kind = EK_PERF_INDEX_BAD;
        feat_bad(f, EK_PERF_FEAT_AUXTRACE, offset, record, "size is not 16*n or 8+16*n");
        return PF_BAD;
    }
    if (ek_vec_reserve(&f->index, f->index.n + n)) return EK_ERR_NOMEM;
    f->index_offset = offset + first;
    for (size_t i = 0; i < n; i++) {
        ek_perf_index_entry e = {pf_u64(p + first + 16 * i, swap),
                                 pf_u64(p + first + 16 * i + 8, swap)};
        f->index.v[f->index.n++] = e;
    }
    return 1;
}

int pf_add_build_id(ek_perf_file *f, const uint8_t *rec, size_t size)
{
    int swap = f->hdr.swapped;
    if (size < 36) return PF_BAD;
    ek_perf_build_id b;
    memset(&b, 0, sizeof b);
    b.misc = pf_u16(rec + 4, swap);
    b.pid = (int32_t)pf_u32(rec + 8, swap);
    memcpy(b.id, rec + 12, 20);
    b.size = (b.misc & (1u << 15)) && rec[32] <= 20 ? rec[32] : 20;
    b.filename = pf_strdup_owned(f, (const char *)rec + 36, size - 36);
    if (!b.filename) return EK_ERR_NOMEM;
    return ek_vec_push(&f->build_ids, b) ? EK_ERR_NOMEM : 1;
}

/* Returns 1 parsed, 0 skipped (not decoded by this reader), -1 damaged, or EK_ERR_NOMEM. */
int pf_parse_feature(ek_perf_file *f, unsigned bit, const uint8_t *p, size_t len, uint64_t offset,
                     int64_t record)
{
    pf_rd r = pf_rd_make(p, len, f->hdr.swapped);
    ek_perf_features *ft = &f->feat;
    switch (bit) {
    case EK_PERF_FEAT_HOSTNAME:
    case EK_PERF_FEAT_OSRELEASE:
    case EK_PERF_FEAT_VERSION:
    case EK_PERF_FEAT_ARCH:
    case EK_PERF_FEAT_CPUDESC:
    case EK_PERF_FEAT_CPUID: {
        const char *s = rd_string(f, &r);
        if (!s) {
            feat_bad(f, bit, offset, record, "string does not fit its section");
            return PF_BAD;
        }
        const char **slot = bit == EK_PERF_FEAT_HOSTNAME    ? &ft->hostname
                            : bit == EK_PERF_FEAT_OSRELEASE ? &ft->osrelease
                            : bit == EK_PERF_FEAT_VERSION   ? &ft->version
                            : bit == EK_PERF_FEAT_ARCH      ? &ft->arch
                            : bit == EK_PERF_FEAT_CPUDESC   ? &ft->cpudesc
                                                            : &ft->cpuid;
        *slot = s;
        return 1;
    }
    case EK_PERF_FEAT_NRCPUS:
        ft->nr_cpus_avail = pf_r32(&r);
        ft->nr_cpus_online = pf_r32(&r);
        if (r.err) {
            feat_bad(f, bit, offset, record, "shorter than 8 bytes");
            return PF_BAD;
        }
        ft->have_nrcpus = 1;
        return 1;
    case EK_PERF_FEAT_TOTAL_MEM:
        ft->total_mem_kb = pf_r64(&r);
        if (r.err) {
            feat_bad(f, bit, offset, record, "shorter than 8 bytes");
            return PF_BAD;
        }
        ft->have_total_mem = 1;
        return 1;
    case EK_PERF_FEAT_CMDLINE: {
        uint32_t nr = pf_r32(&r);
        for (uint32_t i = 0; i < nr && !r.err; i++) {
            const char *s = rd_string(f, &r);
            if (!s) break;
            if (ek_vec_push(&f->cmdline, s)) return EK_ERR_NOMEM;
        }
        if (r.err) {
            feat_bad(f, bit, offset, record, "argument list does not fit its section");
            return PF_BAD;
        }
        return 1;
    }
    case EK_PERF_FEAT_PMU_MAPPINGS: {
        uint32_t nr = pf_r32(&r);
        for (uint32_t i = 0; i < nr && !r.err; i++) {
            ek_perf_pmu_mapping m;
            m.type = pf_r32(&r);
            m.name = rd_string(f, &r);
            if (!m.name) break;
            if (ek_vec_push(&f->pmus, m)) return EK_ERR_NOMEM;
        }
        if (r.err) {
            feat_bad(f, bit, offset, record, "mapping list does not fit its section");
            return PF_BAD;
        }
        return 1;
    }
    case EK_PERF_FEAT_BUILD_ID: {
        size_t pos = 0;
        while (len - pos >= 8) {
            uint16_t sz = pf_u16(p + pos + 6, f->hdr.swapped);
            if (sz < 36 || sz > len - pos) {
                feat_bad(f, bit, offset + pos, record, "build-id entry size out of range");
                return PF_BAD;
            }
            int rc = pf_add_build_id(f, p + pos, sz);
            if (rc < 0) return rc;
            pos += sz;
        }
        return 1;
    }
    case EK_PERF_FEAT_AUXTRACE: return parse_auxtrace_index(f, p, len, offset, record);
    case EK_PERF_FEAT_CLOCKID:
        ft->clockid_res_ns = pf_r64(&r);
        if (r.err) {
            feat_bad(f, bit, offset, record, "shorter than 8 bytes");
            return PF_BAD;
        }
        ft->have_clockid = 1;
        return 1;
    case EK_PERF_FEAT_CLOCK_DATA:
        ft->clock_data_version = pf_r32(&r);
        ft->clockid = pf_r32(&r);
        ft->clock_tod_ns = pf_r64(&r);
        ft->clock_clockid_ns = pf_r64(&r);
        if (r.err) {
            feat_bad(f, bit, offset, record, "shorter than 24 bytes");
            return PF_BAD;
        }
        ft->have_clock_data = 1;
        return 1;
    case EK_PERF_FEAT_COMPRESSED:
        ft->comp_ver = pf_r32(&r);
        ft->comp_type = pf_r32(&r);
        ft->comp_level = pf_r32(&r);
        ft->comp_ratio = pf_r32(&r);
        ft->comp_mmap_len = pf_r32(&r);
        if (r.err) {
            feat_bad(f, bit, offset, record, "shorter than 20 bytes");
            return PF_BAD;
        }
        ft->have_compressed = 1;
        return 1;
    case EK_PERF_FEAT_SP_META_INFO: {
        size_t pos = 0;
        while (pos < len && (f->meta.n % 2 || p[pos])) { /* an empty key: padding, the end */
            const char *s = pf_strdup_owned(f, (const char *)p + pos, len - pos);
            if (!s) return EK_ERR_NOMEM;
            size_t n = strlen(s);
            if (ek_vec_push(&f->meta, s)) return EK_ERR_NOMEM;
            pos += n + 1;
        }
        if (f->meta.n % 2) feat_bad(f, bit, offset, record, "odd number of key/value strings");
        return 1;
    }
    default: return 0;
    }
}

static void read_file_features(ek_perf_file *f)
{
    const ek_perf_header_info *h = &f->hdr;
    unsigned nbits = 0;
    for (unsigned b = 0; b < 256; b++)
        if (h->features[b / 64] >> (b % 64) & 1) nbits++;
    if (!nbits) return;
    uint64_t table = h->data.offset + h->data.size;
    if (h->data.size == 0 || table < h->data.offset || table > f->size ||
        (uint64_t)nbits * 16 > f->size - table) {
        pf_diag(f, f->diag, EK_SEV_WARN, "perf.feature-table", EK_ERR_RANGE, -1,
                table <= f->size ? (int64_t)table : 48,
                "feature table (%u entries) is not inside the file; features ignored", nbits);
        return;
    }
    unsigned k = 0;
    for (unsigned b = 0; b < 256; b++) {
        if (!(h->features[b / 64] >> (b % 64) & 1)) continue;
        const uint8_t *e = f->data + table + 16 * (uint64_t)k++;
        ek_perf_feature_section s = {b, pf_u64(e, h->swapped), pf_u64(e + 8, h->swapped), 0};
        if (s.offset > f->size || s.size > f->size - s.offset) {
            pf_diag(f, f->diag, EK_SEV_WARN, "perf.feature", EK_ERR_RANGE, -1,
                    (int64_t)(e - f->data),
                    "feature %u: section [0x%llx, +0x%llx) outside the file", b,
                    (unsigned long long)s.offset, (unsigned long long)s.size);
            s.parsed = -1;
        } else {
            int rc = pf_parse_feature(f, b, f->data + s.offset, (size_t)s.size, s.offset, -1);
            if (rc == EK_ERR_NOMEM) return;
            s.parsed = rc > 0 ? 1 : rc == 0 ? 0 : -1;
        }
        if (ek_vec_push(&f->fsec, s)) return;
    }
}

/* ---- header ------------------------------------------------------------------------- */

static int read_header(ek_perf_file *f)
{
    ek_perf_header_info *h = &f->hdr;
    h->file_size = f->size;
    if (f->size < 16) {
        pf_diag(f, f->diag, EK_SEV_ERROR, "perf.not-perf-data", EK_ERR_FORMAT, -1, 0,
                "file of %zu bytes is too short for a perf.data header", f->size);
        return EK_ERR_FORMAT;
    }
    uint64_t magic = ek_le64(f->data);
    if (magic == PF_MAGIC2)
        h->swapped = 0;
    else if (magic == PF_MAGIC2_SW)
        h->swapped = 1;
    else {
        pf_diag(f, f->diag, EK_SEV_ERROR, "perf.not-perf-data", EK_ERR_FORMAT, -1, 0,
                magic == PF_MAGIC1 ? "version 1 perf.data (PERFFILE) is not supported"
                                   : "no PERFILE2 magic: not a perf.data file");
        return magic == PF_MAGIC1 ? EK_ERR_UNSUPPORTED : EK_ERR_FORMAT;
    }
    int sw = h->swapped;
    h->header_size = pf_u64(f->data + 8, sw);
    if (h->header_size == PF_PIPE_HEADER_SIZE) {
        h->pipe = 1;
        h->data_begin = PF_PIPE_HEADER_SIZE;
        h->data_end = f->size;
        h->data.offset = PF_PIPE_HEADER_SIZE;
        h->data.size = f->size - PF_PIPE_HEADER_SIZE;
        return 0;
    }
    if (h->header_size < PF_FILE_HEADER_SIZE) {
        pf_diag(f, f->diag, EK_SEV_ERROR, "perf.header", EK_ERR_FORMAT, -1, 8,
                "header size %llu is neither 16 (pipe) nor >= 104",
                (unsigned long long)h->header_size);
        return EK_ERR_FORMAT;
    }
    if (f->size < PF_FILE_HEADER_SIZE) {
        pf_diag(f, f->diag, EK_SEV_ERROR, "perf.truncated", EK_ERR_TRUNCATED, -1, (int64_t)f->size,
                "file truncated: it ends after %zu bytes, inside its %llu-byte header", f->size,
                (unsigned long long)h->header_size);
        return EK_ERR_TRUNCATED;
    }
    const uint8_t *p = f->data;
    h->attr_size = pf_u64(p + 16, sw);
    h->attrs.offset = pf_u64(p + 24, sw);
    h->attrs.size = pf_u64(p + 32, sw);
    h->data.offset = pf_u64(p + 40, sw);
    h->data.size = pf_u64(p + 48, sw);
    h->event_types.offset = pf_u64(p + 56, sw);
    h->event_types.size = pf_u64(p + 64, sw);
    for (int i = 0; i < 4; i++)
        h->features[i] = pf_u64(p + 72 + 8 * i, sw);
    if (h->data.offset > f->size) {
        pf_diag(f, f->diag, EK_SEV_ERROR, "perf.data-section", EK_ERR_RANGE, -1, 40,
                "data section offset 0x%llx is past the end of the file (0x%zx)",
                (unsigned long long)h->data.offset, f->size);
        h->data_begin = h->data_end = f->size;
        return 0;
    }
    h->data_begin = h->data.offset;
    if (h->data.size > f->size - h->data.offset) {
        pf_diag(f, f->diag, EK_SEV_WARN, "perf.data-section", EK_ERR_TRUNCATED, -1, 48,
                "data section [0x%llx, +0x%llx) ends past the end of the file (0x%zx): "
                "file truncated; reading to the end",
                (unsigned long long)h->data.offset, (unsigned long long)h->data.size, f->size);
        h->data_end = f->size;
    } else if (h->data.size == 0) {
        if (h->data.offset < f->size)
            pf_diag(f, f->diag, EK_SEV_WARN, "perf.data-section", EK_ERR_FORMAT, -1, 48,
                    "data section size is 0 (recording not finished?); reading to the end");
        h->data_end = f->size;
    } else {
        h->data_end = h->data.offset + h->data.size;
    }
    if (h->data_begin < PF_FILE_HEADER_SIZE && h->data_end > h->data_begin) {
        pf_diag(f, f->diag, EK_SEV_WARN, "perf.data-section", EK_ERR_FORMAT, -1, 40,
                "data section offset 0x%llx overlaps the file header",
                (unsigned long long)h->data.offset);
        h->data_begin = PF_FILE_HEADER_SIZE;
        if (h->data_end < h->data_begin) h->data_end = h->data_begin;
    }
    return 0;
}

/* ---- indexing pass ------------------------------------------------------------------ */

static int index_record(ek_perf_file *f, const ek_perf_record *rec)
{
    switch (rec->type) {
    case EK_PERF_RECORD_AUX: {
        ek_perf_aux_rec a;
        memset(&a, 0, sizeof a);
        a.record = rec->index;
        a.offset = rec->offset;
        a.aux_offset = rec->u.aux.aux_offset;
        a.aux_size = rec->u.aux.aux_size;
        a.flags = rec->u.aux.flags;
        a.sid = rec->sid;
        a.has_cpu = !!(rec->sid.present & EK_PERF_SAMPLE_CPU);
        a.has_tid = !!(rec->sid.present & EK_PERF_SAMPLE_TID);
        if (rec->damaged) return 0;
        return ek_vec_push(&f->aux, a) ? EK_ERR_NOMEM : 0;
    }
    case EK_PERF_RECORD_AUXTRACE: {
        if (rec->damaged || rec->payload_offset < 0) return 0;
        ek_perf_auxtrace_rec b;
        memset(&b, 0, sizeof b);
        b.record = rec->index;
        b.offset = rec->offset;
        b.data_offset = (uint64_t)rec->payload_offset;
        b.size = rec->u.auxtrace.size;
        b.avail = rec->payload_avail;
        if (b.avail < b.size && b.data_offset + b.avail < f->hdr.data_end)
            b.size = b.avail; /* records were found inside the declared payload: it ends there */
        b.aux_offset = rec->u.auxtrace.offset;
        b.reference = rec->u.auxtrace.reference;
        b.idx = rec->u.auxtrace.idx;
        b.tid = rec->u.auxtrace.tid;
        b.cpu = rec->u.auxtrace.cpu;
        return ek_vec_push(&f->auxtrace, b) ? EK_ERR_NOMEM : 0;
    }
    case EK_PERF_RECORD_AUX_OUTPUT_HW_ID: {
        if (rec->damaged) return 0;
        ek_perf_hwid_rec h;
        memset(&h, 0, sizeof h);
        h.record = rec->index;
        h.offset = rec->offset;
        h.hw_id = rec->u.hw_id.hw_id;
        h.has_cpu = !!(rec->sid.present & EK_PERF_SAMPLE_CPU);
        h.cpu = rec->sid.cpu;
        h.time = rec->sid.time;
        return ek_vec_push(&f->hwid, h) ? EK_ERR_NOMEM : 0;
    }
    case EK_PERF_RECORD_TIME_CONV:
        if (!rec->damaged) {
            f->tc = rec->u.time_conv;
            f->have_tc = 1;
        }
        return 0;
    case EK_PERF_RECORD_AUXTRACE_INFO:
        if (!rec->damaged) pf_parse_auxtrace_info(f, rec);
        return 0;
    case EK_PERF_RECORD_HEADER_ATTR: {
        if (rec->size < 8 + PF_ATTR_SIZE_VER0) return 0;
        const uint8_t *a = rec->raw + 8;
        size_t avail = rec->size - 8u;
        uint32_t asz = pf_u32(a + 4, f->hdr.swapped);
        size_t use = asz ? asz : PF_ATTR_SIZE_VER0;
        if (use > avail) {
            pf_diag(f, f->diag, EK_SEV_WARN, "perf.attr-size", EK_ERR_FORMAT, rec->index,
                    (int64_t)rec->offset, "HEADER_ATTR: attr.size %u exceeds the record", asz);
            return 0;
        }
        int rc =
            pf_add_attr(f, a, avail, rec->index, rec->offset + 8, a + use, (avail - use) / 8, NULL);
        if (rc) return rc;
        pf_update_sid_mode(f);
        return 0;
    }
    case EK_PERF_RECORD_HEADER_FEATURE: {
        /* no data: perf's end-of-features marker (feature id HEADER_LAST_FEATURE) */
        if (rec->size <= 16) return 0;
        uint64_t id = rec->u.feature.feat_id;
        ek_perf_feature_section s = {(unsigned)(id < 256 ? id : 255), rec->offset + 16,
                                     rec->size - 16u, 0};
        if (id >= 256) {
            pf_diag(f, f->diag, EK_SEV_WARN, "perf.feature", EK_ERR_FORMAT, rec->index,
                    (int64_t)rec->offset, "HEADER_FEATURE with id %llu out of range",
                    (unsigned long long)id);
            return 0;
        }
        int rc = pf_parse_feature(f, (unsigned)id, rec->raw + 16, rec->size - 16u, rec->offset + 16,
                                  rec->index);
        if (rc == EK_ERR_NOMEM) return rc;
        s.parsed = rc > 0 ? 1 : rc == 0 ? 0 : -1;
        f->hdr.features[id / 64] |= 1ull << (id % 64);
        return ek_vec_push(&f->fsec, s) ? EK_ERR_NOMEM : 0;
    }
    case EK_PERF_RECORD_HEADER_BUILD_ID: {
        int rc = pf_add_build_id(f, rec->raw, rec->size);
        return rc == EK_ERR_NOMEM ? rc : 0;
    }
    default: return 0;
    }
}

/* Buffers named by the AUXTRACE index but not met by the scan (the scan lost them to
 * damage): take them when a valid AUXTRACE record header is there. */
static void recover_from_index(ek_perf_file *f)
{
    int swap = f->hdr.swapped;
    size_t nscan = f->auxtrace.n;
    uint64_t *seen = malloc((nscan ? nscan : 1) * sizeof *seen);
    if (!seen) return;
    for (size_t j = 0; j < nscan; j++) /* the scan meets them in ascending file order */
        seen[j] = f->auxtrace.v[j].offset;
    for (size_t i = 0; i < f->index.n; i++) {
        const ek_perf_index_entry *e = &f->index.v[i];
        size_t lo = 0, hi = nscan;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (seen[mid] < e->offset)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < nscan && seen[lo] == e->offset) continue;
        if (f->auxtrace.n >= nscan + 4096) /* recovery is for a few lost records */
            break;
        uint64_t o = e->offset;
        if (o < f->hdr.data_begin || o > f->hdr.data_end || f->hdr.data_end - o < 48 ||
            pf_u32(f->data + o, swap) != EK_PERF_RECORD_AUXTRACE ||
            pf_u16(f->data + o + 6, swap) != 48) {
            pf_diag(f, f->diag, EK_SEV_WARN, "perf.index-entry", EK_ERR_FORMAT, -1,
                    (int64_t)(f->index_offset + 16 * i),
                    "AUXTRACE index entry %zu (0x%llx) does not point at an AUXTRACE record", i,
                    (unsigned long long)o);
            continue;
        }
        const uint8_t *p = f->data + o;
        ek_perf_auxtrace_rec b;
        memset(&b, 0, sizeof b);
        b.record = -1;
        b.offset = o;
        b.data_offset = o + 48;
        b.size = pf_u64(p + 8, swap);
        uint64_t room = f->hdr.data_end - b.data_offset;
        b.avail = b.size < room ? b.size : room;
        b.aux_offset = pf_u64(p + 16, swap);
        b.reference = pf_u64(p + 24, swap);
        b.idx = pf_u32(p + 32, swap);
        b.tid = pf_u32(p + 36, swap);
        b.cpu = (int32_t)pf_u32(p + 40, swap);
        b.from_index = 1;
        pf_diag(f, f->diag, EK_SEV_NOTE, "perf.index-recovered", 0, -1, (int64_t)o,
                "AUXTRACE record missed by the scan was taken from the AUXTRACE index");
        if (ek_vec_push(&f->auxtrace, b)) break;
    }
    free(seen);
}

static int run_index_pass(ek_perf_file *f)
{
    ek_perf_iter *it;
    int rc = ek_perf_iter_new(f, 0, f->diag, &it);
    if (rc) return rc;
    ek_perf_record rec;
    while ((rc = ek_perf_iter_next(it, &rec)) == 0) {
        rc = index_record(f, &rec);
        if (rc) break;
    }
    ek_perf_iter_free(it);
    return rc == EK_ERR_EOS ? 0 : rc;
}

static int finish_open(ek_perf_file *f)
{
    int rc = read_header(f);
    if (rc) return rc;
    if (!f->hdr.pipe) {
        read_file_attrs(f);
        pf_update_sid_mode(f);
        read_file_features(f);
    }
    f->opening = 1;
    rc = run_index_pass(f);
    f->opening = 0;
    if (rc) return rc;
    if (f->index.n) recover_from_index(f);
    /* publish vectors through the features view */
    f->feat.cmdline = f->cmdline.v;
    f->feat.ncmdline = f->cmdline.n;
    f->feat.build_ids = f->build_ids.v;
    f->feat.nbuild_ids = f->build_ids.n;
    f->feat.pmu_mappings = f->pmus.v;
    f->feat.npmu_mappings = f->pmus.n;
    f->feat.index = f->index.v;
    f->feat.nindex = f->index.n;
    f->feat.meta_info = f->meta.v;
    f->feat.nmeta_info = f->meta.n;
    pf_finish_cs_etm(f);
    if (f->stats.records == 0 && f->attrs.n == 0) {
        pf_diag(f, f->diag, EK_SEV_ERROR, "perf.empty", EK_ERR_FORMAT, -1, -1,
                "no events and no records could be read");
        return EK_ERR_FORMAT;
    }
    return 0;
}

static int open_common(ek_perf_file *f, const ek_diag *diag, ek_perf_file **out)
{
    f->diag = diag;
    int rc = finish_open(f);
    f->diag = NULL;
    if (rc) {
        ek_perf_free(f);
        return rc;
    }
    *out = f;
    return 0;
}

int ek_perf_open(const char *path, const ek_diag *diag, ek_perf_file **out)
{
    *out = NULL;
    ek_perf_file *f = calloc(1, sizeof *f);
    if (!f) return EK_ERR_NOMEM;
    f->name = strdup(path);
    if (!f->name) {
        free(f);
        return EK_ERR_NOMEM;
    }
    int rc = ek_map_file(path, &f->map);
    if (rc) {
        char why[128];
        ek_diag_emit(diag, EK_SEV_ERROR, "perf.open", rc, path, -1, -1, -1, "cannot read: %s",
                     rc == EK_ERR_IO ? ek_errno_text(errno, why, sizeof why) : ek_strerror(rc));
        free(f->name);
        free(f);
        return rc;
    }
    f->own_map = 1;
    f->data = f->map.data;
    f->size = f->map.size;
    return open_common(f, diag, out);
}

int ek_perf_open_mem(const void *data, size_t size, const char *name, const ek_diag *diag,
                     ek_perf_file **out)
{
    *out = NULL;
    ek_perf_file *f = calloc(1, sizeof *f);
    if (!f) return EK_ERR_NOMEM;
    f->name = strdup(name ? name : "<memory>");
    if (!f->name) {
        free(f);
        return EK_ERR_NOMEM;
    }
    f->data = data;
    f->size = size;
    return open_common(f, diag, out);
}

void ek_perf_free(ek_perf_file *f)
{
    if (!f) return;
    for (size_t i = 0; i < f->attrs.n; i++)
        free(f->attrs.v[i]);
    ek_vec_free(&f->attrs);
    ek_vec_free(&f->idrefs);
    for (size_t i = 0; i < f->allocs.n; i++)
        free(f->allocs.v[i]);
    ek_vec_free(&f->allocs);
    ek_vec_free(&f->cmdline);
    ek_vec_free(&f->build_ids);
    ek_vec_free(&f->pmus);
    ek_vec_free(&f->index);
    ek_vec_free(&f->meta);
    ek_vec_free(&f->fsec);
    ek_vec_free(&f->aux);
    ek_vec_free(&f->auxtrace);
    ek_vec_free(&f->hwid);
    ek_vec_free(&f->etm_cpus);
    ek_vec_free(&f->cpu_order);
    if (f->own_map) ek_unmap_file(&f->map);
    free(f->name);
    free(f);
}

/* ---- accessors ---------------------------------------------------------------------- */

const char *ek_perf_name(const ek_perf_file *f)
{
    return f->name;
}
const ek_perf_header_info *ek_perf_header(const ek_perf_file *f)
{
    return &f->hdr;
}
void ek_perf_release(const ek_perf_file *f, const void *p, size_t len)
{
    /* only our own mapping of the file: MADV_DONTNEED would zero a copy in memory */
    if (!f || !p || !len || !f->own_map || !f->map.mapped || f->data != f->map.data) return;
    uintptr_t lo = (uintptr_t)f->data, hi = lo + f->size, a = (uintptr_t)p;
    if (a < lo || a >= hi) return;
    uintptr_t e = len > hi - a ? hi : a + len;
    long psz = sysconf(_SC_PAGESIZE);
    uintptr_t pg = psz > 0 ? (uintptr_t)psz : 4096;
    a = a / pg * pg; /* the mapping starts on a page */
    e = (e + pg - 1) / pg * pg;
    madvise((void *)a, e - a, MADV_DONTNEED);
}

const uint8_t *ek_perf_bytes(const ek_perf_file *f, size_t *size)
{
    if (size) *size = f->size;
    return f->data;
}
size_t ek_perf_nattrs(const ek_perf_file *f)
{
    return f->attrs.n;
}
const ek_perf_attr *ek_perf_attr_at(const ek_perf_file *f, size_t i)
{
    return i < f->attrs.n ? f->attrs.v[i] : NULL;
}
const ek_perf_features *ek_perf_features_get(const ek_perf_file *f)
{
    return &f->feat;
}
size_t ek_perf_nfeature_sections(const ek_perf_file *f)
{
    return f->fsec.n;
}
const ek_perf_feature_section *ek_perf_feature_section_at(const ek_perf_file *f, size_t i)
{
    return i < f->fsec.n ? &f->fsec.v[i] : NULL;
}
const ek_perf_stats *ek_perf_stats_get(const ek_perf_file *f)
{
    return &f->stats;
}
const ek_perf_time_conv *ek_perf_time_conv_get(const ek_perf_file *f)
{
    return f->have_tc ? &f->tc : NULL;
}
const ek_perf_aux_rec *ek_perf_aux_records(const ek_perf_file *f, size_t *n)
{
    *n = f->aux.n;
    return f->aux.v;
}
const ek_perf_auxtrace_rec *ek_perf_auxtrace_records(const ek_perf_file *f, size_t *n)
{
    *n = f->auxtrace.n;
    return f->auxtrace.v;
}
const ek_perf_hwid_rec *ek_perf_hwid_records(const ek_perf_file *f, size_t *n)
{
    *n = f->hwid.n;
    return f->hwid.v;
}

static const char *const feat_names[] = {
    [EK_PERF_FEAT_TRACING_DATA] = "TRACING_DATA",
    [EK_PERF_FEAT_BUILD_ID] = "BUILD_ID",
    [EK_PERF_FEAT_HOSTNAME] = "HOSTNAME",
    [EK_PERF_FEAT_OSRELEASE] = "OSRELEASE",
    [EK_PERF_FEAT_VERSION] = "VERSION",
    [EK_PERF_FEAT_ARCH] = "ARCH",
    [EK_PERF_FEAT_NRCPUS] = "NRCPUS",
    [EK_PERF_FEAT_CPUDESC] = "CPUDESC",
    [EK_PERF_FEAT_CPUID] = "CPUID",
    [EK_PERF_FEAT_TOTAL_MEM] = "TOTAL_MEM",
    [EK_PERF_FEAT_CMDLINE] = "CMDLINE",
    [EK_PERF_FEAT_EVENT_DESC] = "EVENT_DESC",
    [EK_PERF_FEAT_CPU_TOPOLOGY] = "CPU_TOPOLOGY",
    [EK_PERF_FEAT_NUMA_TOPOLOGY] = "NUMA_TOPOLOGY",
    [EK_PERF_FEAT_BRANCH_STACK] = "BRANCH_STACK",
    [EK_PERF_FEAT_PMU_MAPPINGS] = "PMU_MAPPINGS",
    [EK_PERF_FEAT_GROUP_DESC] = "GROUP_DESC",
    [EK_PERF_FEAT_AUXTRACE] = "AUXTRACE",
    [EK_PERF_FEAT_STAT] = "STAT",
    [EK_PERF_FEAT_CACHE] = "CACHE",
    [EK_PERF_FEAT_SAMPLE_TIME] = "SAMPLE_TIME",
    [EK_PERF_FEAT_MEM_TOPOLOGY] = "MEM_TOPOLOGY",
    [EK_PERF_FEAT_CLOCKID] = "CLOCKID",
    [EK_PERF_FEAT_DIR_FORMAT] = "DIR_FORMAT",
    [EK_PERF_FEAT_BPF_PROG_INFO] = "BPF_PROG_INFO",
    [EK_PERF_FEAT_BPF_BTF] = "BPF_BTF",
    [EK_PERF_FEAT_COMPRESSED] = "COMPRESSED",
    [EK_PERF_FEAT_CPU_PMU_CAPS] = "CPU_PMU_CAPS",
    [EK_PERF_FEAT_CLOCK_DATA] = "CLOCK_DATA",
    [EK_PERF_FEAT_HYBRID_TOPOLOGY] = "HYBRID_TOPOLOGY",
    [EK_PERF_FEAT_PMU_CAPS] = "PMU_CAPS",
};

const char *ek_perf_feature_name(unsigned bit)
{
    if (bit < sizeof feat_names / sizeof feat_names[0]) return feat_names[bit];
    switch (bit) {
    case EK_PERF_FEAT_SP_FILE: return "SIMPLEPERF_FILE";
    case EK_PERF_FEAT_SP_META_INFO: return "SIMPLEPERF_META_INFO";
    case EK_PERF_FEAT_SP_DEBUG_UNWIND: return "SIMPLEPERF_DEBUG_UNWIND";
    case EK_PERF_FEAT_SP_DEBUG_UNWIND_FILE: return "SIMPLEPERF_DEBUG_UNWIND_FILE";
    case EK_PERF_FEAT_SP_FILE2: return "SIMPLEPERF_FILE2";
    case EK_PERF_FEAT_SP_ETM_BRANCH_LIST: return "SIMPLEPERF_ETM_BRANCH_LIST";
    case EK_PERF_FEAT_SP_INIT_MAP: return "SIMPLEPERF_INIT_MAP";
    default: return NULL;
    }
}
