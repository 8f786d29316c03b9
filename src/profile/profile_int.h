/* Inside the profile module: count tables and binaries. */
#ifndef ETMKIT_PROFILE_INT_H
#define ETMKIT_PROFILE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/profile.h"
#include "profile/text.h"

/* Open-addressing hash table of (a, b) -> count; a slot with count 0 is empty (zero counts are
 * never stored). */
typedef struct prof_table {
    ek_profile_count *slot;
    size_t cap; /* 0 or a power of two */
    size_t len;
} prof_table;

typedef struct prof_binary {
    char *path;
    uint8_t build_id[EK_PROFILE_BUILD_ID_MAX];
    size_t build_id_len;
    uint64_t load_base;
    uint64_t hash;
    prof_table t[3]; /* by ek_profile_kind */
} prof_binary;

struct ek_profile {
    prof_binary **bin;
    size_t nbin, capbin;
    size_t *index; /* hash index of bin: slot = handle + 1, 0 empty */
    size_t capindex;
};

/* Saturating add (simpleperf's OverflowSafeAdd). */
static inline uint64_t prof_sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

PROF_HIDDEN int prof_table_add(prof_table *t, uint64_t a, uint64_t b, uint64_t count);
/* The entries sorted by (a, b), malloc'ed (NULL when empty). */
PROF_HIDDEN int prof_table_sorted(const prof_table *t, ek_profile_count **out, size_t *n);
PROF_HIDDEN void prof_table_free(prof_table *t);

/* Canonical build-id: padded to 20 bytes, all-zero -> none. */
PROF_HIDDEN void prof_build_id_canon(const uint8_t *id, size_t len, uint8_t *out, size_t *outlen);
/* Order of binaries in every writer (path, then build-id). */
PROF_HIDDEN int prof_binary_cmp(const prof_binary *x, const prof_binary *y);

/* ek_profile_merge, naming the file src was read from in its diagnostic. */
PROF_HIDDEN int prof_merge(ek_profile *dst, const ek_profile *src, const char *fname,
                           const ek_diag *diag);

/* The readers: parse the text into p (a fresh profile the caller merges on success). */
PROF_HIDDEN int prof_read_autofdo(ek_profile *p, prof_lines *l, const ek_profile_read_opts *opts);
PROF_HIDDEN int prof_read_branch_list(ek_profile *p, prof_lines *l);

#endif
