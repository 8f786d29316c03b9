/* ek_profile: range, address and branch counts per binary; merge; sorted access. */
#include <stdlib.h>
#include <string.h>

#include "profile/profile_int.h"

/* ---- count tables ------------------------------------------------------------------------ */

static uint64_t mix(uint64_t a, uint64_t b)
{
    uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull + (a << 6) + (a >> 2));
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
    return h;
}

static int table_grow(prof_table *t)
{
    size_t cap = t->cap ? t->cap * 2 : 64;
    if (cap > SIZE_MAX / sizeof(ek_profile_count)) return EK_ERR_NOMEM;
    ek_profile_count *s = calloc(cap, sizeof *s);
    if (!s) return EK_ERR_NOMEM;
    for (size_t i = 0; i < t->cap; i++) {
        const ek_profile_count *e = &t->slot[i];
        if (!e->count) continue;
        size_t j = mix(e->a, e->b) & (cap - 1);
        while (s[j].count)
            j = (j + 1) & (cap - 1);
        s[j] = *e;
    }
    free(t->slot);
    t->slot = s;
    t->cap = cap;
    return EK_OK;
}

/* t grown, then (a, b) added (out of line: the adds that need no room, nearly all, stay free
 * of the growth's register saves) */
__attribute__((noinline)) static int add_grown(prof_table *t, uint64_t a, uint64_t b,
                                               uint64_t count)
{
    int rc = table_grow(t);
    return rc ? rc : prof_table_add(t, a, b, count);
}

int prof_table_add(prof_table *t, uint64_t a, uint64_t b, uint64_t count)
{
    if (!count) return EK_OK;
    if ((t->len + 1) * 4 > t->cap * 3) return add_grown(t, a, b, count);
    size_t j = mix(a, b) & (t->cap - 1);
    while (t->slot[j].count) {
        if (t->slot[j].a == a && t->slot[j].b == b) {
            t->slot[j].count = prof_sat_add(t->slot[j].count, count);
            return EK_OK;
        }
        j = (j + 1) & (t->cap - 1);
    }
    t->slot[j].a = a;
    t->slot[j].b = b;
    t->slot[j].count = count;
    t->len++;
    return EK_OK;
}

static int count_cmp(const void *x, const void *y)
{
    const ek_profile_count *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    if (p->b != q->b) return p->b < q->b ? -1 : 1;
    return 0;
}

int prof_table_sorted(const prof_table *t, ek_profile_count **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!t->len) return EK_OK;
    ek_profile_count *v = malloc(t->len * sizeof *v);
    if (!v) return EK_ERR_NOMEM;
    size_t k = 0;
    for (size_t i = 0; i < t->cap; i++)
        if (t->slot[i].count) v[k++] = t->slot[i];
    qsort(v, k, sizeof *v, count_cmp);
    *out = v;
    *n = k;
    return EK_OK;
}

void prof_table_free(prof_table *t)
{
    free(t->slot);
    memset(t, 0, sizeof *t);
}

/* ---- binaries ---------------------------------------------------------------------------- */

void prof_build_id_canon(const uint8_t *id, size_t len, uint8_t *out, size_t *outlen)
{
    int zero = 1;
    for (size_t i = 0; i < len; i++)
        zero &= id[i] == 0;
    if (zero) {
        *outlen = 0;
        return;
    }
    memcpy(out, id, len);
    if (len < 20) {
        memset(out + len, 0, 20 - len);
        len = 20;
    }
    *outlen = len;
}

size_t ek_profile_build_id_canon(const uint8_t *id, size_t len,
                                 uint8_t out[EK_PROFILE_BUILD_ID_MAX])
{
    size_t n = len < EK_PROFILE_BUILD_ID_MAX ? len : EK_PROFILE_BUILD_ID_MAX;
    memset(out, 0, EK_PROFILE_BUILD_ID_MAX);
    prof_build_id_canon(id, n, out, &n);
    return n;
}

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

int ek_profile_binaries_for_elf(const ek_profile *p, const uint8_t *elf_id, size_t elf_id_len,
                                const char *elf_path, unsigned flags, size_t **bins, size_t *n)
{
    if (!bins || !n) return EK_ERR_ARG;
    *bins = NULL;
    *n = 0;
    if (!p || !elf_path || (elf_id_len && !elf_id)) return EK_ERR_ARG;
    uint8_t eid[EK_PROFILE_BUILD_ID_MAX];
    const size_t elen = ek_profile_build_id_canon(elf_id, elf_id_len, eid);
    size_t *order = NULL, nb = 0, nhit = 0;
    int rc = ek_profile_binary_order(p, &order, &nb);
    if (rc) return rc;
    /* the matches overwrite the order in place: nhit <= i */
    for (size_t i = 0; i < nb; i++) {
        ek_profile_binary id;
        if (ek_profile_binary_get(p, order[i], &id) || id.build_id_len != elen ||
            (elen && memcmp(id.build_id, eid, elen)))
            continue;
        if ((flags & EK_PROFILE_USER_ONLY) && id.path[0] == '[') continue;
        if (!elen && strcmp(base_name(id.path), base_name(elf_path))) continue;
        order[nhit++] = order[i];
    }
    if (!nhit || (!elen && nhit > 1)) {
        free(order);
        return EK_ERR_NOT_FOUND;
    }
    *bins = order;
    *n = nhit;
    return EK_OK;
}

int ek_profile_sum_binaries(const ek_profile *p, const size_t *bins, size_t n, ek_profile **out,
                            size_t *bin)
{
    if (!out || !bin) return EK_ERR_ARG;
    *out = NULL;
    if (!p || !bins || !n) return EK_ERR_ARG;
    ek_profile *sum = NULL;
    ek_profile_binary id;
    size_t sb = 0;
    int rc = ek_profile_binary_get(p, bins[0], &id);
    if (!rc) rc = ek_profile_new(&sum);
    if (!rc) rc = ek_profile_add_binary(sum, &id, &sb);
    for (size_t k = 0; k < n && !rc; k++)
        for (int kind = EK_PROFILE_RANGES; kind <= EK_PROFILE_BRANCHES && !rc; kind++) {
            ek_profile_count *v = NULL;
            size_t nv = 0;
            rc = ek_profile_counts(p, bins[k], (ek_profile_kind)kind, &v, &nv);
            for (size_t j = 0; j < nv && !rc; j++)
                rc = kind == EK_PROFILE_RANGES
                         ? ek_profile_add_range(sum, sb, v[j].a, v[j].b, v[j].count)
                     : kind == EK_PROFILE_ADDRESSES
                         ? ek_profile_add_address(sum, sb, v[j].a, v[j].count)
                         : ek_profile_add_branch(sum, sb, v[j].a, v[j].b, v[j].count);
            free(v);
        }
    if (rc) {
        ek_profile_free(sum);
        return rc;
    }
    *out = sum;
    *bin = sb;
    return EK_OK;
}

int prof_binary_cmp(const prof_binary *x, const prof_binary *y)
{
    int c = strcmp(x->path, y->path);
    if (c) return c < 0 ? -1 : 1;
    size_t n = x->build_id_len < y->build_id_len ? x->build_id_len : y->build_id_len;
    c = memcmp(x->build_id, y->build_id, n);
    if (c) return c < 0 ? -1 : 1;
    if (x->build_id_len != y->build_id_len) return x->build_id_len < y->build_id_len ? -1 : 1;
    return 0;
}

static uint64_t ident_hash(const char *path, const uint8_t *id, size_t idlen)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (const unsigned char *s = (const unsigned char *)path; *s; s++)
        h = (h ^ *s) * 0x100000001b3ull;
    h = (h ^ 0xff) * 0x100000001b3ull;
    for (size_t i = 0; i < idlen; i++)
        h = (h ^ id[i]) * 0x100000001b3ull;
    return h;
}

int ek_profile_new(ek_profile **out)
{
    if (!out) return EK_ERR_ARG;
    *out = calloc(1, sizeof **out);
    return *out ? EK_OK : EK_ERR_NOMEM;
}

void ek_profile_free(ek_profile *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->nbin; i++) {
        prof_binary *b = p->bin[i];
        for (int k = 0; k < 3; k++)
            prof_table_free(&b->t[k]);
        free(b->path);
        free(b);
    }
    free(p->bin);
    free(p->index);
    free(p);
}

static int index_insert(size_t *index, size_t cap, const prof_binary *b, size_t handle)
{
    size_t j = b->hash & (cap - 1);
    while (index[j])
        j = (j + 1) & (cap - 1);
    index[j] = handle + 1;
    return EK_OK;
}

static int index_grow(ek_profile *p)
{
    size_t cap = p->capindex ? p->capindex * 2 : 16;
    size_t *ix = calloc(cap, sizeof *ix);
    if (!ix) return EK_ERR_NOMEM;
    for (size_t i = 0; i < p->nbin; i++)
        index_insert(ix, cap, p->bin[i], i);
    free(p->index);
    p->index = ix;
    p->capindex = cap;
    return EK_OK;
}

/* The handle of the binary with this (canonical) identity, or -1. */
static long find_binary(const ek_profile *p, const char *path, const uint8_t *id, size_t idlen,
                        uint64_t h)
{
    if (!p->capindex) return -1;
    size_t j = h & (p->capindex - 1);
    while (p->index[j]) {
        const prof_binary *b = p->bin[p->index[j] - 1];
        if (b->hash == h && b->build_id_len == idlen && !memcmp(b->build_id, id, idlen) &&
            !strcmp(b->path, path))
            return (long)(p->index[j] - 1);
        j = (j + 1) & (p->capindex - 1);
    }
    return -1;
}

int ek_profile_add_binary(ek_profile *p, const ek_profile_binary *id, size_t *bin)
{
    if (!p || !id || !bin || (id->build_id_len && !id->build_id) ||
        id->build_id_len > EK_PROFILE_BUILD_ID_MAX)
        return EK_ERR_ARG;
    const char *path = id->path ? id->path : "";
    if (strlen(path) > EK_PROFILE_PATH_MAX) return EK_ERR_ARG;
    uint8_t canon[EK_PROFILE_BUILD_ID_MAX];
    size_t clen = 0;
    prof_build_id_canon(id->build_id, id->build_id_len, canon, &clen);
    uint64_t h = ident_hash(path, canon, clen);
    long f = find_binary(p, path, canon, clen, h);
    if (f >= 0) {
        if (p->bin[f]->load_base != id->load_base) return EK_ERR_FORMAT;
        *bin = (size_t)f;
        return EK_OK;
    }
    if ((p->nbin + 1) * 2 > p->capindex && index_grow(p)) return EK_ERR_NOMEM;
    if (p->nbin == p->capbin) {
        size_t cap = p->capbin ? p->capbin * 2 : 8;
        prof_binary **v = realloc(p->bin, cap * sizeof *v);
        if (!v) return EK_ERR_NOMEM;
        p->bin = v;
        p->capbin = cap;
    }
    prof_binary *b = calloc(1, sizeof *b);
    char *pcopy = strdup(path);
    if (!b || !pcopy) {
        free(b);
        free(pcopy);
        return EK_ERR_NOMEM;
    }
    b->path = pcopy;
    memcpy(b->build_id, canon, clen);
    b->build_id_len = clen;
    b->load_base = id->load_base;
    b->hash = h;
    p->bin[p->nbin] = b;
    index_insert(p->index, p->capindex, b, p->nbin);
    *bin = p->nbin++;
    return EK_OK;
}

size_t ek_profile_binary_count(const ek_profile *p)
{
    return p ? p->nbin : 0;
}

int ek_profile_binary_get(const ek_profile *p, size_t bin, ek_profile_binary *out)
{
    if (!p || !out || bin >= p->nbin) return EK_ERR_ARG;
    const prof_binary *b = p->bin[bin];
    out->path = b->path;
    out->build_id = b->build_id;
    out->build_id_len = b->build_id_len;
    out->load_base = b->load_base;
    return EK_OK;
}

int ek_profile_add_range(ek_profile *p, size_t bin, uint64_t begin, uint64_t end, uint64_t count)
{
    if (!p || bin >= p->nbin || begin == EK_PROFILE_EXTERNAL || end == EK_PROFILE_EXTERNAL)
        return EK_ERR_ARG;
    return prof_table_add(&p->bin[bin]->t[EK_PROFILE_RANGES], begin, end, count);
}

int ek_profile_add_address(ek_profile *p, size_t bin, uint64_t addr, uint64_t count)
{
    if (!p || bin >= p->nbin || addr == EK_PROFILE_EXTERNAL) return EK_ERR_ARG;
    return prof_table_add(&p->bin[bin]->t[EK_PROFILE_ADDRESSES], addr, 0, count);
}

int ek_profile_add_branch(ek_profile *p, size_t bin, uint64_t from, uint64_t to, uint64_t count)
{
    if (!p || bin >= p->nbin || (from == EK_PROFILE_EXTERNAL && to == EK_PROFILE_EXTERNAL))
        return EK_ERR_ARG;
    return prof_table_add(&p->bin[bin]->t[EK_PROFILE_BRANCHES], from, to, count);
}

/* dst += the counts of one binary (its identity added to dst when new). */
static int merge_one(ek_profile *dst, const prof_binary *s)
{
    ek_profile_binary id = {s->path, s->build_id, s->build_id_len, s->load_base};
    size_t h;
    int rc = ek_profile_add_binary(dst, &id, &h);
    if (rc) return rc;
    for (int k = 0; k < 3; k++) {
        const prof_table *t = &s->t[k];
        for (size_t j = 0; j < t->cap; j++) {
            const ek_profile_count *e = &t->slot[j];
            if (e->count && (rc = prof_table_add(&dst->bin[h]->t[k], e->a, e->b, e->count)))
                return rc;
        }
    }
    return EK_OK;
}

int prof_merge(ek_profile *dst, const ek_profile *src, const char *fname, const ek_diag *diag)
{
    if (!dst || !src || dst == src) return EK_ERR_ARG;
    /* check first, so that a refused merge leaves dst as it was */
    for (size_t i = 0; i < src->nbin; i++) {
        const prof_binary *s = src->bin[i];
        long f = find_binary(dst, s->path, s->build_id, s->build_id_len, s->hash);
        if (f >= 0 && dst->bin[f]->load_base != s->load_base) {
            char hex[2 * EK_PROFILE_BUILD_ID_MAX + 1] = "none";
            for (size_t k = 0; k < s->build_id_len; k++) {
                static const char dig[] = "0123456789abcdef";
                hex[2 * k] = dig[s->build_id[k] >> 4];
                hex[2 * k + 1] = dig[s->build_id[k] & 15];
                hex[2 * k + 2] = 0;
            }
            ek_diag_emit(diag, EK_SEV_ERROR, "profile.load-base-differs", EK_ERR_FORMAT, fname, -1,
                         -1, -1,
                         "binary '%s' (build-id %s): first load segment at 0x%llx in one "
                         "profile, 0x%llx in the other: its addresses cannot be merged",
                         s->path, hex, (unsigned long long)dst->bin[f]->load_base,
                         (unsigned long long)s->load_base);
            return EK_ERR_FORMAT;
        }
    }
    for (size_t i = 0; i < src->nbin; i++) {
        int rc = merge_one(dst, src->bin[i]);
        if (rc) return rc;
    }
    return EK_OK;
}

int ek_profile_merge_binary(ek_profile *dst, const ek_profile *src, size_t bin)
{
    if (!dst || !src || dst == src || bin >= src->nbin) return EK_ERR_ARG;
    const prof_binary *s = src->bin[bin];
    long f = find_binary(dst, s->path, s->build_id, s->build_id_len, s->hash);
    if (f >= 0 && dst->bin[f]->load_base != s->load_base) return EK_ERR_FORMAT;
    return merge_one(dst, s);
}

int ek_profile_merge(ek_profile *dst, const ek_profile *src, const ek_diag *diag)
{
    return prof_merge(dst, src, NULL, diag);
}

int ek_profile_counts(const ek_profile *p, size_t bin, ek_profile_kind kind, ek_profile_count **out,
                      size_t *n)
{
    if (!p || !out || !n || bin >= p->nbin || (unsigned)kind > EK_PROFILE_BRANCHES)
        return EK_ERR_ARG;
    return prof_table_sorted(&p->bin[bin]->t[kind], out, n);
}

typedef struct order_item {
    const prof_binary *b;
    size_t handle;
} order_item;

static int order_cmp(const void *x, const void *y)
{
    return prof_binary_cmp(((const order_item *)x)->b, ((const order_item *)y)->b);
}

int ek_profile_binary_order(const ek_profile *p, size_t **out, size_t *n)
{
    if (!out || !n) return EK_ERR_ARG;
    *out = NULL;
    *n = 0;
    if (!p || !p->nbin) return EK_OK;
    order_item *it = malloc(p->nbin * sizeof *it);
    size_t *v = malloc(p->nbin * sizeof *v);
    if (!it || !v) {
        free(it);
        free(v);
        return EK_ERR_NOMEM;
    }
    for (size_t i = 0; i < p->nbin; i++) {
        it[i].b = p->bin[i];
        it[i].handle = i;
    }
    /* identities are unique, so the order is total */
    qsort(it, p->nbin, sizeof *it, order_cmp);
    for (size_t i = 0; i < p->nbin; i++)
        v[i] = it[i].handle;
    free(it);
    *out = v;
    *n = p->nbin;
    return EK_OK;
}

/* ---- format names ------------------------------------------------------------------------ */

const char *ek_profile_format_name(ek_profile_format f)
{
    switch (f) {
    case EK_PROFILE_FMT_AUTOFDO: return "autofdo";
    case EK_PROFILE_FMT_BRANCH_LIST: return "branch-list";
    case EK_PROFILE_FMT_BOLT: return "bolt";
    default: return "unknown";
    }
}

ek_profile_format ek_profile_format_from_name(const char *name)
{
    if (!name) return EK_PROFILE_FMT_UNKNOWN;
    if (!strcmp(name, "autofdo")) return EK_PROFILE_FMT_AUTOFDO;
    if (!strcmp(name, "branch-list")) return EK_PROFILE_FMT_BRANCH_LIST;
    if (!strcmp(name, "bolt")) return EK_PROFILE_FMT_BOLT;
    return EK_PROFILE_FMT_UNKNOWN;
}
