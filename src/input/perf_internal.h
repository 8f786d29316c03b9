/* Internals of the perf.data reader shared by src/input/perf_*.c and src/session/. */
#ifndef ETMKIT_INPUT_PERF_INTERNAL_H
#define ETMKIT_INPUT_PERF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/bytes.h"
#include "core/mapfile.h"
#include "core/vec.h"
#include "etmkit/perf.h"

/* ---- byte-order aware loads --------------------------------------------------------- */

static inline uint16_t pf_u16(const void *p, int swap)
{
    const uint8_t *b = p;
    return swap ? (uint16_t)((b[0] << 8) | b[1]) : ek_le16(p);
}
static inline uint32_t pf_u32(const void *p, int swap)
{
    const uint8_t *b = p;
    return swap ? ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | b[3]
                : ek_le32(p);
}
static inline uint64_t pf_u64(const void *p, int swap)
{
    return swap ? ek_bswap64(ek_le64(p)) : ek_le64(p);
}

/* A bounds-checked cursor that knows the byte order. Reads past the end return 0, set err. */
typedef struct pf_rd {
    const uint8_t *p;
    size_t len, pos;
    int swap;
    int err;
} pf_rd;

static inline pf_rd pf_rd_make(const void *p, size_t len, int swap)
{
    pf_rd r = {(const uint8_t *)p, len, 0, swap, 0};
    return r;
}
static inline size_t pf_left(const pf_rd *r)
{
    return r->pos <= r->len ? r->len - r->pos : 0;
}
static inline int pf_need(pf_rd *r, size_t n)
{
    if (r->err || n > pf_left(r)) {
        r->err = 1;
        return 0;
    }
    return 1;
}
static inline uint8_t pf_r8(pf_rd *r)
{
    return pf_need(r, 1) ? r->p[r->pos++] : 0;
}
static inline uint16_t pf_r16(pf_rd *r)
{
    if (!pf_need(r, 2)) return 0;
    uint16_t v = pf_u16(r->p + r->pos, r->swap);
    r->pos += 2;
    return v;
}
static inline uint32_t pf_r32(pf_rd *r)
{
    if (!pf_need(r, 4)) return 0;
    uint32_t v = pf_u32(r->p + r->pos, r->swap);
    r->pos += 4;
    return v;
}
static inline uint64_t pf_r64(pf_rd *r)
{
    if (!pf_need(r, 8)) return 0;
    uint64_t v = pf_u64(r->p + r->pos, r->swap);
    r->pos += 8;
    return v;
}
static inline const uint8_t *pf_rbytes(pf_rd *r, size_t n)
{
    if (!pf_need(r, n)) return NULL;
    const uint8_t *p = r->p + r->pos;
    r->pos += n;
    return p;
}

/* ---- the file object ---------------------------------------------------------------- */

typedef struct pf_idref {
    uint64_t id;
    const ek_perf_attr *attr;
} pf_idref;

/* How a kernel record's sample_id_all trailer is attributed to an attr. */
enum {
    PF_SID_NONE = 0,   /* no attr has sample_id_all: no trailers */
    PF_SID_SINGLE,     /* every attr has the same trailer layout */
    PF_SID_IDENTIFIER, /* every attr has IDENTIFIER: the last u64 picks the attr */
    PF_SID_ID_POS,     /* every attr has ID at the same distance from the end */
};

struct ek_perf_file {
    char *name;
    ek_mapped map;
    int own_map;
    const uint8_t *data;
    size_t size;
    ek_perf_header_info hdr;

    EK_VEC(ek_perf_attr *) attrs; /* individually allocated: pointers stay valid */
    EK_VEC(pf_idref) idrefs;      /* sorted by id */
    EK_VEC(void *) allocs;        /* strings and arrays owned by the object */

    ek_perf_features feat;
    EK_VEC(const char *) cmdline;
    EK_VEC(ek_perf_build_id) build_ids;
    EK_VEC(ek_perf_pmu_mapping) pmus;
    EK_VEC(ek_perf_index_entry) index;
    uint64_t index_offset; /* file offset of the first index entry */
    EK_VEC(const char *) meta;
    EK_VEC(ek_perf_feature_section) fsec;

    ek_perf_stats stats;
    EK_VEC(ek_perf_aux_rec) aux;
    EK_VEC(ek_perf_auxtrace_rec) auxtrace;
    EK_VEC(ek_perf_hwid_rec) hwid;
    ek_perf_time_conv tc;
    int have_tc;

    ek_perf_cs_etm etm;
    EK_VEC(ek_perf_etm_cpu) etm_cpus;
    EK_VEC(size_t) cpu_order; /* indexes into etm_cpus sorted by CPU number */

    int sid_mode;
    const ek_perf_attr *sid_attr; /* PF_SID_SINGLE: the layout's attr */
    unsigned sid_id_pos;          /* PF_SID_ID_POS: u64s from the end to the id */

    const ek_diag *diag; /* only during ek_perf_open */
    int opening;         /* 1 during the indexing pass */
    int note_simpleperf_once;
    unsigned attr_limit_noted;
};

/* Diagnostics about the file (record -1 when not about a record). */
void pf_diag(const ek_perf_file *f, const ek_diag *d, ek_severity sev, const char *kind, int status,
             int64_t record, int64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 8, 9)));

/* perf_file.c */
char *pf_strdup_owned(ek_perf_file *f, const char *s, size_t maxlen);
int pf_add_attr(ek_perf_file *f, const uint8_t *p, size_t avail, int64_t record, uint64_t offset,
                const uint8_t *ids, size_t nids, ek_perf_attr **out);
void pf_update_sid_mode(ek_perf_file *f);
int pf_parse_feature(ek_perf_file *f, unsigned bit, const uint8_t *p, size_t len, uint64_t offset,
                     int64_t record);
int pf_add_build_id(ek_perf_file *f, const uint8_t *rec, size_t size);

/* perf_records.c */
int pf_is_known_type(uint32_t type);
/* Decode a record at raw[0..size) into rec (type-specific fields, trailer). */
void pf_decode_record(const ek_perf_file *f, const ek_diag *d, const uint8_t *raw, size_t size,
                      ek_perf_record *rec, char *strbuf, size_t strcap);

/* perf_cs_etm.c */
void pf_parse_auxtrace_info(ek_perf_file *f, const ek_perf_record *rec);
void pf_finish_cs_etm(ek_perf_file *f);

#endif
