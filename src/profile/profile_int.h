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

/* A maps locator's last answers (maps.c), kept whole: for a remembered map, the addresses of
 * it that lie in one ELF segment, and their binary address's offset from theirs, so that an
 * address there at a time the map is valid is located with a few compares. Inline here, for
 * the builder to take the locator's common case without a call (ek_profile_builder_use_maps);
 * the same answers as ek_profile_maps_locate. */
#define PROF_FAST_N 4
typedef struct prof_fast {
    int64_t pid;
    uint64_t lo, hi;       /* addresses [lo, hi); hi = 0: empty */
    uint64_t t_from, t_to; /* the map's life */
    uint64_t delta;        /* binary address - address (mod 2^64) */
    ek_profile_loc loc;    /* vaddr unset */
} prof_fast;
typedef struct prof_fast_set {
    prof_fast e[PROF_FAST_N];
    unsigned next; /* the one to replace */
} prof_fast_set;

PROF_HIDDEN prof_fast_set *prof_maps_fast(ek_profile_maps *m);
/* ek_profile_maps_locate past the last answers (m, s, out not NULL) */
PROF_HIDDEN int prof_maps_locate_slow(ek_profile_maps *m, const ek_sample *s, uint64_t addr,
                                      ek_profile_hint_fn hint, void *hint_ctx,
                                      ek_profile_loc *out);

static inline int prof_maps_locate(ek_profile_maps *m, prof_fast_set *fs, const ek_sample *s,
                                   uint64_t addr, ek_profile_hint_fn hint, void *hint_ctx,
                                   ek_profile_loc *out)
{
    if (s->has_time) {
        int64_t pid = (addr >> 63) ? -1 : s->pid; /* (the kernel's maps: process -1) */
        for (unsigned i = 0; i < PROF_FAST_N; i++) {
            const prof_fast *x = &fs->e[i];
            if (addr >= x->lo && addr < x->hi && x->pid == pid && s->time >= x->t_from &&
                s->time < x->t_to) {
                *out = x->loc;
                out->vaddr = addr + x->delta;
                return EK_OK;
            }
        }
    }
    return prof_maps_locate_slow(m, s, addr, hint, hint_ctx, out);
}

/* The readers: parse the text into p (a fresh profile the caller merges on success). */
PROF_HIDDEN int prof_read_autofdo(ek_profile *p, prof_lines *l, const ek_profile_read_opts *opts);
PROF_HIDDEN int prof_read_branch_list(ek_profile *p, prof_lines *l);

#endif
