/* The profile module (include/etmkit/profile.h): counts, merge order independence, the
 * AutoFDO text, branch-list and BOLT fdata writers, the readers and their errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/profile.h"
#include "testutil.h"

/* ---- helpers ----------------------------------------------------------------------------- */

typedef struct rec {
    int n;
    char kind[64];
    char msg[256];
    int64_t line, off;
    int sev;
} rec;

static void rec_fn(void *ctx, const ek_diag_event *ev)
{
    rec *r = ctx;
    if (!r->n) {
        snprintf(r->kind, sizeof r->kind, "%s", ev->kind);
        snprintf(r->msg, sizeof r->msg, "%s", ev->msg);
        r->line = ev->record;
        r->off = ev->offset;
        r->sev = ev->sev;
    }
    r->n++;
}

static ek_profile *new_profile(void)
{
    ek_profile *p = NULL;
    assert_int_equal(ek_profile_new(&p), 0);
    return p;
}

/* "0c9a20" -> {0x0c, 0x9a, 0x20} */
static size_t hexbytes(const char *hex, uint8_t *out, size_t cap)
{
    size_t n = 0;
    for (; hex[0] && hex[1] && n < cap; hex += 2) {
        unsigned v;
        assert_int_equal(sscanf(hex, "%2x", &v), 1);
        out[n++] = (uint8_t)v;
    }
    return n;
}

static size_t add_bin(ek_profile *p, const char *path, const char *idhex, uint64_t base)
{
    uint8_t id[64];
    size_t n = idhex ? hexbytes(idhex, id, sizeof id) : 0;
    ek_profile_binary b = {path, id, n, base};
    size_t h = 99;
    assert_int_equal(ek_profile_add_binary(p, &b, &h), 0);
    return h;
}

typedef int (*writer_fn)(const ek_profile *, ek_sbuf *);

static char *write_with(const ek_profile *p, writer_fn w)
{
    ek_sbuf s = EK_SBUF_INIT;
    assert_int_equal(w(p, &s), 0);
    char *r = strdup(s.p ? s.p : "");
    ek_sbuf_free(&s);
    return r;
}

static char *autofdo(const ek_profile *p)
{
    return write_with(p, ek_profile_write_autofdo);
}

static char *blist(const ek_profile *p)
{
    return write_with(p, ek_profile_write_branch_list);
}

static int read_text(ek_profile *p, const char *text, ek_profile_format f, rec *r)
{
    ek_diag d = {rec_fn, r};
    return ek_profile_read(p, text, strlen(text), f, NULL, "t.prof", &d);
}

/* A small deterministic generator. */
static uint64_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 17;
}

/* A profile of random counts over three binaries, some near the saturation limit. */
static ek_profile *random_profile(uint64_t seed)
{
    static const char *paths[3] = {"/system/bin/a", "/system/lib64/libb.so", "/vendor/bin/c"};
    static const char *ids[3] = {"0102030405060708090a0b0c0d0e0f10", NULL,
                                 "aabbccddeeff00112233445566778899aabbccdd"};
    ek_profile *p = new_profile();
    uint64_t s = seed;
    for (int k = 0; k < 40; k++) {
        int b = (int)(rnd(&s) % 3);
        size_t h = add_bin(p, paths[b], ids[b], b == 0 ? 0x400000 : 0);
        uint64_t a = 0x400000 + rnd(&s) % 64 * 4, e = a + rnd(&s) % 8 * 4;
        uint64_t c = rnd(&s) % 7 == 0 ? UINT64_MAX - rnd(&s) % 3 : 1 + rnd(&s) % 1000;
        switch (rnd(&s) % 4) {
        case 0: assert_int_equal(ek_profile_add_range(p, h, a, e, c), 0); break;
        case 1: assert_int_equal(ek_profile_add_address(p, h, a, c), 0); break;
        case 2: assert_int_equal(ek_profile_add_branch(p, h, e, a, c), 0); break;
        default: assert_int_equal(ek_profile_add_branch(p, h, a, EK_PROFILE_EXTERNAL, c), 0);
        }
    }
    return p;
}

static ek_profile *copy_of(const ek_profile *p)
{
    ek_profile *c = new_profile();
    assert_int_equal(ek_profile_merge(c, p, NULL), 0);
    return c;
}

/* ---- counts and merging ------------------------------------------------------------------ */

/* Merging is associative and commutative: every grouping and order of the same four profiles
 * gives the same bytes in every format, also through a branch-list round trip. */
static void test_merge_any_grouping_same_bytes(void **state)
{
    (void)state;
    ek_profile *in[4];
    for (int i = 0; i < 4; i++)
        in[i] = random_profile(100 + (uint64_t)i);
    /* ((0+1)+2)+3 */
    ek_profile *left = copy_of(in[0]);
    for (int i = 1; i < 4; i++)
        assert_int_equal(ek_profile_merge(left, in[i], NULL), 0);
    /* 0+(1+(2+3)) */
    ek_profile *r23 = copy_of(in[2]);
    assert_int_equal(ek_profile_merge(r23, in[3], NULL), 0);
    ek_profile *r123 = copy_of(in[1]);
    assert_int_equal(ek_profile_merge(r123, r23, NULL), 0);
    ek_profile *right = copy_of(in[0]);
    assert_int_equal(ek_profile_merge(right, r123, NULL), 0);
    /* (3+1)+(2+0), each pair written as a branch list and read back */
    ek_profile *a = copy_of(in[3]), *b = copy_of(in[2]);
    assert_int_equal(ek_profile_merge(a, in[1], NULL), 0);
    assert_int_equal(ek_profile_merge(b, in[0], NULL), 0);
    char *ta = blist(a), *tb = blist(b);
    ek_profile *mixed = new_profile();
    rec r = {0};
    assert_int_equal(read_text(mixed, ta, EK_PROFILE_FMT_UNKNOWN, &r), 0);
    assert_int_equal(read_text(mixed, tb, EK_PROFILE_FMT_BRANCH_LIST, &r), 0);
    assert_int_equal(r.n, 0);

    ek_profile *all[3] = {left, right, mixed};
    char *want_af = autofdo(left), *want_bl = blist(left);
    for (int i = 1; i < 3; i++) {
        char *af = autofdo(all[i]), *bl = blist(all[i]);
        assert_string_equal(af, want_af);
        assert_string_equal(bl, want_bl);
        free(af);
        free(bl);
    }
    /* the merge did add: a count present in two inputs is their (saturated) sum */
    assert_true(strlen(want_bl) > strlen(ta));
    free(want_af);
    free(want_bl);
    free(ta);
    free(tb);
    for (int i = 0; i < 4; i++)
        ek_profile_free(in[i]);
    ek_profile *f[] = {left, r23, r123, right, a, b, mixed};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        ek_profile_free(f[i]);
}

/* The order counts are added in does not show in the output. */
static void test_insertion_order_invisible(void **state)
{
    (void)state;
    ek_profile *p = new_profile(), *q = new_profile();
    size_t b1 = add_bin(p, "/b", NULL, 0), a1 = add_bin(p, "/a", NULL, 0);
    assert_int_equal(ek_profile_add_branch(p, b1, 0x20, 0x10, 2), 0);
    assert_int_equal(ek_profile_add_range(p, a1, 0x10, 0x20, 5), 0);
    assert_int_equal(ek_profile_add_branch(p, b1, 0x10, 0x20, 3), 0);
    assert_int_equal(ek_profile_add_branch(p, b1, 0x20, 0x10, 1), 0);
    /* enough entries that the hash table's order is not the sorted one */
    for (uint64_t i = 0; i < 12; i++)
        assert_int_equal(ek_profile_add_branch(p, b1, 0x1000 - 0x10 * i, 0x40 + i, i + 1), 0);
    size_t a2 = add_bin(q, "/a", NULL, 0), b2 = add_bin(q, "/b", NULL, 0);
    for (uint64_t i = 12; i-- > 0;)
        assert_int_equal(ek_profile_add_branch(q, b2, 0x1000 - 0x10 * i, 0x40 + i, i + 1), 0);
    assert_int_equal(ek_profile_add_branch(q, b2, 0x20, 0x10, 3), 0);
    assert_int_equal(ek_profile_add_branch(q, b2, 0x10, 0x20, 3), 0);
    assert_int_equal(ek_profile_add_range(q, a2, 0x10, 0x20, 5), 0);
    char *x = blist(p), *y = blist(q);
    assert_string_equal(x, y);
    assert_string_equal(x, "etmkit-branch-list 1\n"
                           "binary - 0 /a\n"
                           "ranges 1\n10 20 5\n"
                           "addresses 0\n"
                           "branches 0\n"
                           "binary - 0 /b\n"
                           "ranges 0\n"
                           "addresses 0\n"
                           "branches 14\n10 20 3\n20 10 3\n"
                           "f50 4b 12\nf60 4a 11\nf70 49 10\nf80 48 9\nf90 47 8\n"
                           "fa0 46 7\nfb0 45 6\nfc0 44 5\nfd0 43 4\nfe0 42 3\n"
                           "ff0 41 2\n1000 40 1\n"
                           "end\n");
    free(x);
    free(y);
    ek_profile_free(p);
    ek_profile_free(q);
}

/* Counts saturate at UINT64_MAX (simpleperf's OverflowSafeAdd), zero adds nothing, and the
 * accessors return what was added, sorted. */
static void test_counts_saturate_and_sort(void **state)
{
    (void)state;
    ek_profile *p = new_profile();
    size_t h = add_bin(p, "/x", "01", 0);
    assert_int_equal(ek_profile_add_branch(p, h, 8, 4, UINT64_MAX - 1), 0);
    assert_int_equal(ek_profile_add_branch(p, h, 8, 4, 5), 0);
    assert_int_equal(ek_profile_add_branch(p, h, 4, 8, 0), 0);
    assert_int_equal(ek_profile_add_branch(p, h, 4, EK_PROFILE_EXTERNAL, 1), 0);
    assert_int_equal(ek_profile_add_branch(p, h, EK_PROFILE_EXTERNAL, 4, 2), 0);
    assert_int_equal(ek_profile_add_branch(p, h, EK_PROFILE_EXTERNAL, EK_PROFILE_EXTERNAL, 1),
                     EK_ERR_ARG);
    assert_int_equal(ek_profile_add_range(p, h, 4, EK_PROFILE_EXTERNAL, 1), EK_ERR_ARG);
    assert_int_equal(ek_profile_add_range(p, 7, 4, 8, 1), EK_ERR_ARG);
    ek_profile_count *c;
    size_t n;
    assert_int_equal(ek_profile_counts(p, h, EK_PROFILE_BRANCHES, &c, &n), 0);
    assert_int_equal(n, 3);
    uint64_t want[3][3] = {
        {4, EK_PROFILE_EXTERNAL, 1}, {8, 4, UINT64_MAX}, {EK_PROFILE_EXTERNAL, 4, 2}};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(c[i].a, want[i][0]);
        assert_int_equal(c[i].b, want[i][1]);
        assert_int_equal(c[i].count, want[i][2]);
    }
    free(c);
    assert_int_equal(ek_profile_counts(p, h, EK_PROFILE_RANGES, &c, &n), 0);
    assert_int_equal(n, 0);
    assert_null(c);
    ek_profile_free(p);
}

/* Identity: build-ids shorter than 20 bytes are padded as simpleperf pads them, all-zero is
 * none, the path is part of it; a known binary with another load base is refused. */
static void test_binary_identity(void **state)
{
    (void)state;
    ek_profile *p = new_profile();
    size_t a = add_bin(p, "/l", "0c9a20bf9c009d0e4e8bbf9fad0300ae", 0);
    assert_int_equal(add_bin(p, "/l", "0c9a20bf9c009d0e4e8bbf9fad0300ae00000000", 0), a);
    size_t none = add_bin(p, "/l", NULL, 0);
    assert_int_not_equal(none, a);
    assert_int_equal(add_bin(p, "/l", "0000000000", 0), none);
    assert_int_not_equal(add_bin(p, "/m", "0c9a20bf9c009d0e4e8bbf9fad0300ae", 0), a);
    ek_profile_binary b;
    assert_int_equal(ek_profile_binary_get(p, a, &b), 0);
    assert_int_equal(b.build_id_len, 20);
    assert_int_equal(b.build_id[15], 0xae);
    assert_int_equal(b.build_id[19], 0);
    uint8_t id[16] = {0x0c};
    ek_profile_binary other = {"/l", NULL, 0, 0x1000};
    size_t h;
    assert_int_equal(ek_profile_add_binary(p, &other, &h), EK_ERR_FORMAT);
    other.build_id = id;
    other.build_id_len = 65;
    assert_int_equal(ek_profile_add_binary(p, &other, &h), EK_ERR_ARG);
    assert_int_equal(ek_profile_binary_count(p), 3);
    ek_profile_free(p);
}

/* The identity as callers outside the profile compute it (an ELF note's build-id) and the
 * binary a BOLT profile is written for: by the ELF file's build-id, a kernel binary left out
 * when asked (etmkit export), an all-zero id matching the binaries without one. */
static void test_build_id_canon_and_bolt_binary(void **state)
{
    (void)state;
    uint8_t out[EK_PROFILE_BUILD_ID_MAX];
    const uint8_t short_id[4] = {1, 2, 3, 4}, zero[8] = {0};
    uint8_t long_id[80];
    for (size_t i = 0; i < sizeof long_id; i++)
        long_id[i] = (uint8_t)(i + 1);
    assert_int_equal(ek_profile_build_id_canon(short_id, 4, out), 20);
    assert_memory_equal(out, short_id, 4);
    for (size_t i = 4; i < EK_PROFILE_BUILD_ID_MAX; i++)
        assert_int_equal(out[i], 0);
    assert_int_equal(ek_profile_build_id_canon(zero, 8, out), 0);
    assert_int_equal(ek_profile_build_id_canon(long_id, sizeof long_id, out),
                     EK_PROFILE_BUILD_ID_MAX);
    assert_memory_equal(out, long_id, EK_PROFILE_BUILD_ID_MAX);

    ek_profile *p = new_profile();
    size_t k = add_bin(p, "[kernel.kallsyms]", "01020304", 0);
    size_t u = add_bin(p, "/usr/bin/u", "01020304", 0);
    size_t n = add_bin(p, "/usr/bin/n", NULL, 0);
    size_t u2 = add_bin(p, "/bin/u", "01020304", 0);
    size_t *bins = NULL, nb = 0;
    /* one build-id: every binary with it, in output order (by path) */
    assert_int_equal(ek_profile_binaries_for_elf(p, short_id, 4, "/x/u", 0, &bins, &nb), 0);
    assert_int_equal(nb, 3);
    assert_int_equal(bins[0], u2);
    assert_int_equal(bins[1], u);
    assert_int_equal(bins[2], k);
    free(bins);
    assert_int_equal(
        ek_profile_binaries_for_elf(p, short_id, 4, "/x/u", EK_PROFILE_USER_ONLY, &bins, &nb), 0);
    assert_int_equal(nb, 2);
    assert_int_equal(bins[0], u2);
    assert_int_equal(bins[1], u);
    free(bins);
    /* no build-id (all zeros is none): the one binary without one of the file's name */
    assert_int_equal(
        ek_profile_binaries_for_elf(p, zero, 8, "/symfs/n", EK_PROFILE_USER_ONLY, &bins, &nb), 0);
    assert_int_equal(nb, 1);
    assert_int_equal(bins[0], n);
    free(bins);
    assert_int_equal(ek_profile_binaries_for_elf(p, NULL, 0, "/usr/bin/u", 0, &bins, &nb),
                     EK_ERR_NOT_FOUND);
    assert_null(bins);
    assert_int_equal(nb, 0);
    add_bin(p, "/opt/n", NULL, 0);
    assert_int_equal(ek_profile_binaries_for_elf(p, NULL, 0, "n", 0, &bins, &nb), EK_ERR_NOT_FOUND);
    assert_int_equal(ek_profile_binaries_for_elf(p, long_id, 20, "u", 0, &bins, &nb),
                     EK_ERR_NOT_FOUND);
    assert_null(bins);
    assert_int_equal(ek_profile_binaries_for_elf(p, NULL, 4, "u", 0, &bins, &nb), EK_ERR_ARG);
    assert_int_equal(ek_profile_binaries_for_elf(p, NULL, 0, NULL, 0, &bins, &nb), EK_ERR_ARG);
    ek_profile_free(p);
}

/* Binaries added up: one binary of a new profile, the first's identity, every kind of count of
 * each summed. */
static void test_sum_binaries(void **state)
{
    (void)state;
    ek_profile *p = new_profile();
    size_t a = add_bin(p, "/bin/app", "abcdef01", 0x400000);
    size_t b = add_bin(p, "/usr/bin/app", "abcdef01", 0x400000);
    assert_int_equal(ek_profile_add_range(p, a, 0x400100, 0x400110, 2), 0);
    assert_int_equal(ek_profile_add_range(p, b, 0x400100, 0x400110, 3), 0);
    assert_int_equal(ek_profile_add_range(p, b, 0x400200, 0x400204, 1), 0);
    assert_int_equal(ek_profile_add_address(p, a, 0x400104, 4), 0);
    assert_int_equal(ek_profile_add_branch(p, b, 0x400110, 0x400100, UINT64_MAX), 0);
    assert_int_equal(ek_profile_add_branch(p, a, 0x400110, 0x400100, 1), 0);
    const size_t both[2] = {b, a};
    ek_profile *s = NULL;
    size_t sb = 99;
    assert_int_equal(ek_profile_sum_binaries(p, both, 2, &s, &sb), 0);
    assert_int_equal(ek_profile_binary_count(s), 1);
    ek_profile_binary id;
    assert_int_equal(ek_profile_binary_get(s, sb, &id), 0);
    assert_string_equal(id.path, "/usr/bin/app");
    assert_int_equal(id.load_base, 0x400000);
    char *got = blist(s);
    assert_string_equal(got, "etmkit-branch-list 1\n"
                             "binary abcdef0100000000000000000000000000000000 400000 /usr/bin/app\n"
                             "ranges 2\n400100 400110 5\n400200 400204 1\n"
                             "addresses 1\n400104 4\n"
                             "branches 1\n400110 400100 18446744073709551615\n"
                             "end\n");
    free(got);
    ek_profile_free(s);
    assert_int_equal(ek_profile_sum_binaries(p, both, 0, &s, &sb), EK_ERR_ARG);
    const size_t none[1] = {7};
    assert_int_equal(ek_profile_sum_binaries(p, none, 1, &s, &sb), EK_ERR_ARG);
    assert_null(s);
    ek_profile_free(p);
}

/* A merge that meets one binary with two load bases is refused whole: dst stays as it was. */
static void test_merge_load_base_conflict(void **state)
{
    (void)state;
    ek_profile *p = new_profile(), *q = new_profile();
    size_t h = add_bin(p, "/bin/x", "ab", 0x400000);
    assert_int_equal(ek_profile_add_range(p, h, 0x400100, 0x400110, 1), 0);
    size_t g = add_bin(q, "/bin/y", NULL, 0);
    assert_int_equal(ek_profile_add_range(q, g, 0x100, 0x110, 1), 0);
    g = add_bin(q, "/bin/x", "ab", 0);
    assert_int_equal(ek_profile_add_range(q, g, 0x100, 0x110, 1), 0);
    char *before = blist(p);
    rec r = {0};
    ek_diag d = {rec_fn, &r};
    assert_int_equal(ek_profile_merge(p, q, &d), EK_ERR_FORMAT);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.kind, "profile.load-base-differs");
    assert_non_null(strstr(r.msg, "'/bin/x'"));
    assert_non_null(strstr(r.msg, "0x400000"));
    char *after = blist(p);
    assert_string_equal(before, after);
    free(before);
    free(after);
    ek_profile_free(p);
    ek_profile_free(q);
}

/* One binary out of many (ek_profile_merge_binary, what `merge --build-id` writes): the sum of
 * the per-binary parts, each merged alone, is the whole profile, byte for byte; a part holds
 * its binary only; a binary dst knows with another load_base is refused; no such handle is an
 * argument error. */
static void test_merge_binary_parts(void **state)
{
    (void)state;
    ek_profile *whole = random_profile(7);
    size_t nb = ek_profile_binary_count(whole);
    assert_int_equal(nb, 3);
    ek_profile *sum = new_profile();
    for (size_t i = 0; i < nb; i++) {
        ek_profile *part = new_profile();
        assert_int_equal(ek_profile_merge_binary(part, whole, i), 0);
        assert_int_equal(ek_profile_binary_count(part), 1);
        ek_profile_binary a, b;
        assert_int_equal(ek_profile_binary_get(whole, i, &a), 0);
        assert_int_equal(ek_profile_binary_get(part, 0, &b), 0);
        assert_string_equal(a.path, b.path);
        assert_int_equal(ek_profile_merge(sum, part, NULL), 0);
        ek_profile_free(part);
    }
    char *want = blist(whole), *got = blist(sum);
    assert_string_equal(want, got);
    free(want);
    free(got);
    assert_int_equal(ek_profile_merge_binary(sum, whole, nb), EK_ERR_ARG);
    ek_profile *other = new_profile();
    add_bin(other, "/system/bin/a", "0102030405060708090a0b0c0d0e0f10", 0x1000);
    size_t h = 0;
    for (size_t i = 0; i < nb; i++) {
        ek_profile_binary a;
        assert_int_equal(ek_profile_binary_get(whole, i, &a), 0);
        if (!strcmp(a.path, "/system/bin/a")) h = i;
    }
    assert_int_equal(ek_profile_merge_binary(other, whole, h), EK_ERR_FORMAT);
    ek_profile_free(other);
    ek_profile_free(sum);
    ek_profile_free(whole);
}

/* ---- AutoFDO text ------------------------------------------------------------------------ */

/* simpleperf's AutoFDOWriter, byte for byte: the split line for several binaries, binaries by
 * path, addresses relative to the first load segment (entries below it left out, a branch
 * target below it or outside the binary written as 0), each table sorted by its relative
 * addresses and then the count, the build-id as 20 bytes, the path, a blank line. */
static void test_autofdo_exact(void **state)
{
    (void)state;
    ek_profile *p = new_profile();
    size_t z = add_bin(p, "/z/app", "0c9a20bf9c009d0e4e8bbf9fad0300ae", 0x400000);
    size_t a = add_bin(p, "/a/lib.so", NULL, 0);
    assert_int_equal(ek_profile_add_range(p, z, 0x400010, 0x400020, 3), 0);
    assert_int_equal(ek_profile_add_range(p, z, 0x400000, 0x40000c, 1), 0);
    assert_int_equal(ek_profile_add_range(p, z, 0x3ffff0, 0x400004, 9), 0); /* below: out */
    assert_int_equal(ek_profile_add_address(p, z, 0x400abc, 2), 0);
    assert_int_equal(ek_profile_add_address(p, z, 0x3000, 2), 0); /* below: out */
    assert_int_equal(ek_profile_add_branch(p, z, 0x400020, 0x400010, 2), 0);
    assert_int_equal(ek_profile_add_branch(p, z, 0x400020, EK_PROFILE_EXTERNAL, 7), 0);
    assert_int_equal(ek_profile_add_branch(p, z, 0x400020, 0x10, 1), 0);  /* below: to 0 */
    assert_int_equal(ek_profile_add_branch(p, z, 0x100, 0x400000, 1), 0); /* from below: out */
    assert_int_equal(ek_profile_add_branch(p, z, EK_PROFILE_EXTERNAL, 0x400000, 4), 0);
    assert_int_equal(ek_profile_add_range(p, a, 0x1000, 0x1000, 12345678901234ull), 0);
    char *t = autofdo(p);
    assert_string_equal(t, "// Please split this file. AutoFDO only accepts profile for one "
                           "binary.\n"
                           "1\n"
                           "1000-1000:12345678901234\n"
                           "0\n"
                           "0\n"
                           "// build_id: 0x0000000000000000000000000000000000000000\n"
                           "// /a/lib.so\n"
                           "\n"
                           "2\n"
                           "0-c:1\n"
                           "10-20:3\n"
                           "1\n"
                           "abc:2\n"
                           "3\n"
                           "20->0:1\n"
                           "20->0:7\n"
                           "20->10:2\n"
                           "// build_id: 0x0c9a20bf9c009d0e4e8bbf9fad0300ae00000000\n"
                           "// /z/app\n"
                           "\n");
    free(t);
    /* one binary: no split line; none: nothing at all */
    ek_profile *one = new_profile();
    add_bin(one, "/p", "ff", 0);
    t = autofdo(one);
    assert_string_equal(t, "0\n0\n0\n// build_id: 0xff00000000000000000000000000000000000000\n"
                           "// /p\n\n");
    free(t);
    ek_profile *empty = new_profile();
    t = autofdo(empty);
    assert_string_equal(t, "");
    free(t);
    /* a path with line ends: written with \x0a / \x0d, one comment line (the rest of the path
     * read back as the profile's lines: a binary of its own with a range "0-4:999") */
    ek_profile *nl = new_profile();
    add_bin(nl, "/opt/a\n1\n0-4:999\r\n0\n0", NULL, 0);
    t = autofdo(nl);
    assert_string_equal(t, "0\n0\n0\n// build_id: 0x0000000000000000000000000000000000000000\n"
                           "// /opt/a\\x0a1\\x0a0-4:999\\x0d\\x0a0\\x0a0\n\n");
    ek_profile *back = new_profile();
    rec r = {0};
    assert_int_equal(read_text(back, t, EK_PROFILE_FMT_AUTOFDO, &r), 0);
    assert_int_equal(ek_profile_binary_count(back), 1);
    free(t);
    ek_profile_free(back);
    ek_profile_free(nl);
    ek_profile_free(p);
    ek_profile_free(one);
    ek_profile_free(empty);
}

static int base_cb(void *ctx, const ek_profile_binary *id, uint64_t *base)
{
    (void)ctx;
    if (strcmp(id->path, "/z/app")) return -1;
    *base = 0x400000;
    return 0;
}

/* AutoFDO text reads back to the same counts: written again it is the same bytes; "->0" reads
 * as a target outside the binary; addresses become vaddrs with the load base the caller gives. */
static void test_autofdo_round_trip(void **state)
{
    (void)state;
    const char *text = "// Please split this file. AutoFDO only accepts profile for one binary.\n"
                       "1\n1000-1000:5\n0\n1\n1004->0:1\n"
                       "// build_id: 0x0000000000000000000000000000000000000000\n"
                       "// /a/lib.so\n\n"
                       "2\n0-c:1\n10-20:3\n1\nabc:2\n2\n20->0:7\n20->10:2\n"
                       "// build_id: 0x0c9a20bf9c009d0e4e8bbf9fad0300ae00000000\n"
                       "// /z/app\n\n";
    ek_profile *p = new_profile();
    ek_profile_read_opts o = {sizeof o, base_cb, NULL};
    rec r = {0};
    ek_diag d = {rec_fn, &r};
    assert_int_equal(ek_profile_read(p, text, strlen(text), EK_PROFILE_FMT_UNKNOWN, &o, "t", &d),
                     0);
    assert_int_equal(r.n, 0);
    char *t = autofdo(p);
    assert_string_equal(t, text);
    free(t);
    t = blist(p);
    assert_string_equal(t, "etmkit-branch-list 1\n"
                           "binary - 0 /a/lib.so\n"
                           "ranges 1\n1000 1000 5\n"
                           "addresses 0\n"
                           "branches 1\n1004 - 1\n"
                           "binary 0c9a20bf9c009d0e4e8bbf9fad0300ae00000000 400000 /z/app\n"
                           "ranges 2\n400000 40000c 1\n400010 400020 3\n"
                           "addresses 1\n400abc 2\n"
                           "branches 2\n400020 400010 2\n400020 - 7\n"
                           "end\n");
    free(t);
    ek_profile_free(p);
}

/* simpleperf's own output for perf_etm.data reads and writes back byte for byte. */
static void test_autofdo_simpleperf_file(void **state)
{
    (void)state;
    char *path = tu_shared_path("perf/files/perf_inject.data");
    if (!path) {
        tu_skip("../shared/testdata/perf/files/perf_inject.data is not there");
        return;
    }
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    free(path);
    buf[n] = 0;
    ek_profile *p = new_profile();
    rec r = {0};
    assert_int_equal(read_text(p, buf, EK_PROFILE_FMT_UNKNOWN, &r), 0);
    assert_int_equal(ek_profile_binary_count(p), 1);
    ek_profile_binary b;
    assert_int_equal(ek_profile_binary_get(p, 0, &b), 0);
    assert_string_equal(b.path, "/data/local/tmp/etm_test_loop");
    char *t = autofdo(p);
    assert_string_equal(t, buf);
    free(t);
    ek_profile_free(p);
}

/* ---- branch list ------------------------------------------------------------------------- */

static void test_branch_list_exact_and_round_trip(void **state)
{
    (void)state;
    ek_profile *p = new_profile();
    size_t h = add_bin(p, "/odd path\\x\n\x7f", "0102", 0x10000);
    assert_int_equal(ek_profile_add_range(p, h, 0x10010, 0x10018, 4), 0);
    assert_int_equal(ek_profile_add_address(p, h, 0x10014, 1), 0);
    assert_int_equal(ek_profile_add_branch(p, h, EK_PROFILE_EXTERNAL, 0x10010, 2), 0);
    assert_int_equal(ek_profile_add_branch(p, h, 0x10018, EK_PROFILE_EXTERNAL, 3), 0);
    assert_int_equal(ek_profile_add_branch(p, h, 0x10018, 0x10010, UINT64_MAX), 0);
    add_bin(p, "", NULL, 0);
    char *t = blist(p);
    const char *want = "etmkit-branch-list 1\n"
                       "binary - 0 \n"
                       "ranges 0\naddresses 0\nbranches 0\n"
                       "binary 0102000000000000000000000000000000000000 10000 "
                       "/odd path\\\\x\\x0a\\x7f\n"
                       "ranges 1\n10010 10018 4\n"
                       "addresses 1\n10014 1\n"
                       "branches 3\n10018 10010 18446744073709551615\n10018 - 3\n- 10010 2\n"
                       "end\n";
    assert_string_equal(t, want);
    ek_profile *q = new_profile();
    rec r = {0};
    assert_int_equal(read_text(q, t, EK_PROFILE_FMT_UNKNOWN, &r), 0);
    char *u = blist(q);
    assert_string_equal(u, want);
    ek_profile_binary b;
    size_t *order, n;
    assert_int_equal(ek_profile_binary_order(q, &order, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(ek_profile_binary_get(q, order[1], &b), 0);
    assert_string_equal(b.path, "/odd path\\x\n\x7f");
    assert_int_equal(b.load_base, 0x10000);
    free(order);
    free(t);
    free(u);
    ek_profile_free(p);
    ek_profile_free(q);

    /* the longest path a profile holds (4096 bytes) reads back though its escaped text is
     * longer (the reader held the escaped text to the limit: a path of 2048 backslashes and
     * 2048 'a', 6144 bytes written, was "longer than 4096 bytes"); one more byte is too long */
    char longp[EK_PROFILE_PATH_MAX + 2];
    for (size_t i = 0; i < EK_PROFILE_PATH_MAX; i++)
        longp[i] = i % 2 ? 'a' : '\\';
    longp[EK_PROFILE_PATH_MAX] = 0;
    p = new_profile();
    add_bin(p, longp, NULL, 0);
    t = blist(p);
    q = new_profile();
    assert_int_equal(read_text(q, t, EK_PROFILE_FMT_BRANCH_LIST, &r), 0);
    assert_int_equal(ek_profile_binary_get(q, 0, &b), 0);
    assert_string_equal(b.path, longp);
    ek_profile_free(q);
    /* (the writer refuses a longer one: the line is made by hand) */
    char *at = strstr(t, "binary - 0 ");
    assert_non_null(at);
    ek_sbuf lt = EK_SBUF_INIT;
    ek_sbuf_put(&lt, t, (size_t)(at - t) + 11);
    ek_sbuf_puts(&lt, "\\x41");
    ek_sbuf_puts(&lt, at + 11);
    q = new_profile();
    memset(&r, 0, sizeof r);
    assert_int_equal(read_text(q, lt.p, EK_PROFILE_FMT_BRANCH_LIST, &r), EK_ERR_FORMAT);
    assert_non_null(strstr(r.msg, "path longer than 4096 bytes"));
    ek_sbuf_free(&lt);
    free(t);
    ek_profile_free(p);
    ek_profile_free(q);
}

/* Damage: every reader error names the line and its byte offset, says what was expected, and
 * merges nothing (the profile read into keeps what it had). */
static void test_malformed_inputs(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        ek_profile_format fmt;
        int64_t line, off;
        const char *says;
    } cases[] = {
        {"2\n1-2:3\n", EK_PROFILE_FMT_AUTOFDO, 2, 2, "ends after 1 of 2 ranges"},
        {"1\n1-2:3\n0\n1\n5-6:1\n", EK_PROFILE_FMT_AUTOFDO, 5, 12,
         "branches entry 1 of 1: expected FROM->TO:COUNT"},
        {"1\n1-2:x\n", EK_PROFILE_FMT_AUTOFDO, 2, 2, "ranges entry 1 of 1"},
        {"1\n1-2:99999999999999999999\n0\n0\n", EK_PROFILE_FMT_AUTOFDO, 2, 2, "ranges entry 1"},
        {"1\n11111111111111111-2:1\n0\n0\n", EK_PROFILE_FMT_AUTOFDO, 2, 2, "ranges entry 1"},
        {"0\n0\nzz\n", EK_PROFILE_FMT_AUTOFDO, 3, 4, "expected the number of branches"},
        {"0\n0\n0\n// build_id: 0x123\n", EK_PROFILE_FMT_AUTOFDO, 4, 6, "build_id"},
        {"0\n0\n0\n// something\n", EK_PROFILE_FMT_AUTOFDO, 4, 6, "expected '// build_id"},
        {"0\n0\n", EK_PROFILE_FMT_AUTOFDO, 2, 2, "ends where the number of branches"},
        {"0\n0\n0\n// build_id: 0x00\n// /p\n\n1\n", EK_PROFILE_FMT_AUTOFDO, 7, 31,
         "ends after 0 of 1 ranges"},
        {"1\n1-2:1\0\n", EK_PROFILE_FMT_AUTOFDO, 2, 2, "NUL"},
        {"etmkit-branch-list 2\nend\n", EK_PROFILE_FMT_BRANCH_LIST, 1, 0,
         "not an etmkit branch list"},
        {"etmkit-branch-list 1\n", EK_PROFILE_FMT_BRANCH_LIST, 1, 0, "before 'end'"},
        {"etmkit-branch-list 1\nbinary - 0 /p\nranges 1\n", EK_PROFILE_FMT_BRANCH_LIST, 3, 35,
         "ends after 0 of 1 ranges"},
        {"etmkit-branch-list 1\nbinary zz 0 /p\n", EK_PROFILE_FMT_BRANCH_LIST, 2, 21,
         "bad build-id"},
        {"etmkit-branch-list 1\nbinary - 0 /p\\q\n", EK_PROFILE_FMT_BRANCH_LIST, 2, 21,
         "bad path escape"},
        {"etmkit-branch-list 1\nbinary - 0 /p\nranges 0\naddresses 0\nbranches 2\n"
         "2 1 1\n1 2 1\nend\n",
         EK_PROFILE_FMT_BRANCH_LIST, 7, 73, "not after the one before"},
        {"etmkit-branch-list 1\nbinary - 0 /p\nranges 0\naddresses 0\nbranches 1\n- - 1\nend\n",
         EK_PROFILE_FMT_BRANCH_LIST, 6, 67, "both ends outside"},
        {"etmkit-branch-list 1\nbinary - 0 /p\nranges 1\n1 2 0\n", EK_PROFILE_FMT_BRANCH_LIST, 4,
         44, "a count of 0"},
        {"etmkit-branch-list 1\nbinary - 0 /p\nranges 0\naddresses 0\nbranches 0\n"
         "binary - 0 /p\n",
         EK_PROFILE_FMT_BRANCH_LIST, 6, 67, "listed twice"},
        {"etmkit-branch-list 1\nend\nmore\n", EK_PROFILE_FMT_BRANCH_LIST, 3, 25, "after 'end'"},
        {"etmkit-branch-list 1\nbinary - 0 /p\nranges 0\naddresses 1\nffffffffffffffff 1\n",
         EK_PROFILE_FMT_BRANCH_LIST, 5, 56, "addresses entry 1 of 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ek_profile *p = new_profile();
        size_t h = add_bin(p, "/keep", NULL, 0);
        assert_int_equal(ek_profile_add_range(p, h, 1, 2, 3), 0);
        char *before = blist(p);
        rec r = {0};
        ek_diag d = {rec_fn, &r};
        size_t len = strlen(cases[i].text);
        if (strstr(cases[i].says, "NUL"))
            len += 2; /* the text holds a NUL and a line end after it */
        int rc = ek_profile_read(p, cases[i].text, len, cases[i].fmt, NULL, "t.prof", &d);
        if (rc != EK_ERR_FORMAT || r.n != 1 || r.line != cases[i].line || r.off != cases[i].off ||
            !strstr(r.msg, cases[i].says) || strcmp(r.kind, "profile.malformed"))
            fail_msg("case %zu: rc %d, %d events, line %lld offset %lld: '%s' (want line %lld "
                     "offset %lld '%s')",
                     i, rc, r.n, (long long)r.line, (long long)r.off, r.msg,
                     (long long)cases[i].line, (long long)cases[i].off, cases[i].says);
        char *after = blist(p);
        assert_string_equal(before, after);
        free(before);
        free(after);
        ek_profile_free(p);
    }
    /* what is neither format, and bolt (not readable) */
    ek_profile *p = new_profile();
    rec r = {0};
    assert_int_equal(read_text(p, "PERFILE2...", EK_PROFILE_FMT_UNKNOWN, &r), EK_ERR_FORMAT);
    assert_string_equal(r.kind, "profile.unknown-format");
    memset(&r, 0, sizeof r);
    assert_int_equal(read_text(p, "1 main 0 1 main 4 0 1\n", EK_PROFILE_FMT_BOLT, &r),
                     EK_ERR_UNSUPPORTED);
    assert_int_equal(r.n, 1);
    ek_profile_free(p);
}

static void test_detect_and_names(void **state)
{
    (void)state;
    assert_int_equal(ek_profile_detect("etmkit-branch-list 1\n", 21), EK_PROFILE_FMT_BRANCH_LIST);
    assert_int_equal(ek_profile_detect("10\n", 3), EK_PROFILE_FMT_AUTOFDO);
    assert_int_equal(ek_profile_detect("// Please", 9), EK_PROFILE_FMT_AUTOFDO);
    assert_int_equal(ek_profile_detect("", 0), EK_PROFILE_FMT_AUTOFDO);
    assert_int_equal(ek_profile_detect("PERFILE2", 8), EK_PROFILE_FMT_UNKNOWN);
    assert_int_equal(ek_profile_detect("/", 1), EK_PROFILE_FMT_UNKNOWN);
    for (int f = EK_PROFILE_FMT_AUTOFDO; f <= EK_PROFILE_FMT_BOLT; f++)
        assert_int_equal(ek_profile_format_from_name(ek_profile_format_name(f)), f);
    assert_int_equal(ek_profile_format_from_name("perf"), EK_PROFILE_FMT_UNKNOWN);
}

/* ---- BOLT -------------------------------------------------------------------------------- */

/* BOLT's names: globals as they are, locals "name/N" counting that name's local symbols in
 * address order (functions before other symbols at one address, then as added), aliases named
 * by the first function symbol; a size-0 function ends at the next one. */
static void test_bolt_names(void **state)
{
    (void)state;
    ek_bolt_map *m = NULL;
    assert_int_equal(ek_bolt_map_new(&m), 0);
    const unsigned F = EK_BOLT_SYM_FUNCTION, L = EK_BOLT_SYM_LOCAL;
    assert_int_equal(ek_bolt_map_add_symbol(m, 0x2000, 0x10, "helper", F | L), 0);
    assert_int_equal(ek_bolt_map_add_symbol(m, 0x1000, 0x10, "helper", F | L), 0);
    assert_int_equal(ek_bolt_map_add_symbol(m, 0x1008, 0, "helper", L), 0); /* a label */
    assert_int_equal(ek_bolt_map_add_symbol(m, 0x3000, 0x10, "alias_b", F), 0);
    assert_int_equal(ek_bolt_map_add_symbol(m, 0x3000, 0x10, "alias_a", F | L), 0);
    assert_int_equal(ek_bolt_map_add_symbol(m, 0x3000, 0, "lbl", L), 0);
    assert_int_equal(ek_bolt_map_add_symbol(m, 0x4000, 0, "tail", F), 0);
    assert_int_equal(ek_bolt_map_add_symbol(m, 0x4100, 8, "sp ace", F | L), 0);
    assert_int_equal(ek_bolt_map_add_symbol(m, 0x10, 8, "x", 0x80), EK_ERR_ARG);
    static const struct {
        uint64_t addr;
        const char *name;
        uint64_t off;
    } want[] = {{0x1000, "helper/1", 0}, {0x100c, "helper/1", 0xc}, {0x2004, "helper/3", 4},
                {0x3000, "alias_b", 0},  {0x300f, "alias_b", 0xf},  {0x4000, "tail", 0},
                {0x40ff, "tail", 0xff},  {0x4104, "sp ace/1", 4}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const char *name = NULL;
        uint64_t off = 0;
        assert_int_equal(ek_bolt_map_lookup(m, want[i].addr, &name, &off), 0);
        assert_string_equal(name, want[i].name);
        assert_int_equal(off, want[i].off);
    }
    assert_int_equal(ek_bolt_map_lookup(m, 0x1010, NULL, NULL), EK_ERR_NOT_FOUND);
    assert_int_equal(ek_bolt_map_lookup(m, 0xfff, NULL, NULL), EK_ERR_NOT_FOUND);
    assert_int_equal(ek_bolt_map_lookup(m, 0x4108, NULL, NULL), EK_ERR_NOT_FOUND);
    ek_bolt_map_free(m);
}

/* The fdata lines, exactly: taken branches, fall-throughs into block starts a range covers,
 * not-taken conditional branches (ETM ranges) into the next block, none where BOLT has no
 * CFG, "[unknown]" ends, escaped names, sorted. */
static void test_bolt_exact(void **state)
{
    (void)state;
    ek_bolt_map *m = NULL;
    assert_int_equal(ek_bolt_map_new(&m), 0);
    const unsigned F = EK_BOLT_SYM_FUNCTION, L = EK_BOLT_SYM_LOCAL;
    assert_int_equal(ek_bolt_map_add_symbol(m, 0x1000, 0x40, "main", F), 0);
    assert_int_equal(ek_bolt_map_add_symbol(m, 0x1040, 0x10, "f g", F | L), 0);
    assert_int_equal(ek_bolt_map_add_symbol(m, 0x1050, 0x20, "jt", F), 0);
    /* main: 0x1008 b.ne 0x1018 | 0x100c .. | 0x1010 target | 0x1018 target, 0x1020 cbz */
    assert_int_equal(ek_bolt_map_add_block(m, 0x100c), 0);
    assert_int_equal(ek_bolt_map_add_block(m, 0x1010), 0);
    assert_int_equal(ek_bolt_map_add_block(m, 0x1018), 0);
    assert_int_equal(ek_bolt_map_add_block(m, 0x1024), 0);
    assert_int_equal(ek_bolt_map_add_conditional(m, 0x1008), 0);
    assert_int_equal(ek_bolt_map_add_conditional(m, 0x1020), 0);
    /* jt: no CFG in BOLT */
    assert_int_equal(ek_bolt_map_add_block(m, 0x1058), 0);
    assert_int_equal(ek_bolt_map_add_conditional(m, 0x1054), 0);
    assert_int_equal(ek_bolt_map_add_no_fallthrough(m, 0x1060), 0);

    ek_profile *p = new_profile();
    size_t h = add_bin(p, "/main", NULL, 0);
    /* ETM ranges: [1000,1008] x10 (b.ne taken 7, not 3), [100c,1014] x3 covers 1010,
     * [1018,1020] x7 (cbz taken 0: falls into 1024) */
    assert_int_equal(ek_profile_add_range(p, h, 0x1000, 0x1008, 10), 0);
    assert_int_equal(ek_profile_add_branch(p, h, 0x1008, 0x1018, 7), 0);
    assert_int_equal(ek_profile_add_range(p, h, 0x100c, 0x1014, 3), 0);
    assert_int_equal(ek_profile_add_branch(p, h, 0x1014, 0x1040, 3), 0); /* call f g */
    assert_int_equal(ek_profile_add_range(p, h, 0x1018, 0x1020, 7), 0);
    assert_int_equal(ek_profile_add_range(p, h, 0x1040, 0x1044, 3), 0);
    assert_int_equal(ek_profile_add_branch(p, h, 0x1044, 0x1018, 3), 0);
    assert_int_equal(ek_profile_add_range(p, h, 0x1050, 0x1054, 2), 0); /* no CFG: nothing */
    assert_int_equal(ek_profile_add_range(p, h, 0x1054, 0x105c, 1), 0); /* covers 0x1058 */
    assert_int_equal(ek_profile_add_branch(p, h, 0x1054, 0x105c, 2), 0);
    assert_int_equal(ek_profile_add_branch(p, h, 0x1024, EK_PROFILE_EXTERNAL, 4), 0);
    assert_int_equal(ek_profile_add_branch(p, h, EK_PROFILE_EXTERNAL, 0x1000, 10), 0);
    /* an end in no function is 0, as perf2bolt writes it from perf.data (perf_etm.data:
     * "0 [unknown] 0" for the b at 0x1004 that no FDE covers): it counts with the external
     * ends */
    assert_int_equal(ek_profile_add_branch(p, h, 0x9000, 0x1000, 1), 0);
    assert_int_equal(ek_profile_add_branch(p, h, 0x1024, 0x9004, 2), 0);
    assert_int_equal(ek_profile_add_branch(p, h, 0x9000, 0x9010, 1), 0); /* no function: out */
    /* a range over two functions is not a trace BOLT takes */
    assert_int_equal(ek_profile_add_range(p, h, 0x1030, 0x1044, 1), 0);
    ek_sbuf s = EK_SBUF_INIT;
    assert_int_equal(ek_profile_write_bolt(p, h, m, &s), 0);
    assert_string_equal(s.p, "0 [unknown] 0 1 main 0 0 11\n"
                             "1 f\\ g/1 4 1 main 18 0 3\n"
                             "1 jt 4 1 jt c 0 2\n"
                             "1 main 8 1 main c 0 3\n"
                             "1 main 8 1 main 18 0 7\n"
                             "1 main c 1 main 10 0 3\n"
                             "1 main 14 1 f\\ g/1 0 0 3\n"
                             "1 main 20 1 main 24 0 7\n"
                             "1 main 24 0 [unknown] 0 0 6\n");
    assert_int_equal(ek_profile_write_bolt(p, h + 1, m, &s), EK_ERR_ARG);
    ek_sbuf_free(&s);
    ek_profile_free(p);
    ek_bolt_map_free(m);
}

/* ek_bolt_map_load_elf on a real AArch64 executable (fuzz/corpus/elf/exe):
 *   work:   400158 cmp; 40015c b.lt 400164; 400160 ret; 400164 ..; 400174 b 400158
 *   _start: 400184 bl work; 400190 b 400190 */
/* BOLT's fdata for an ELF file from every binary that is that file, in any order: two paths
 * of one build-id add up (the first added one was taken, the other's counts dropped, so the
 * output depended on the inputs' order); without a build-id, only the binary of the ELF's file
 * name (any binary without one was taken: another library's counts, or none). */
static void test_bolt_for_elf(void **state)
{
    (void)state;
    ek_bolt_map *m = NULL;
    assert_int_equal(ek_bolt_map_new(&m), 0);
    assert_int_equal(ek_bolt_map_add_symbol(m, 0x1000, 0x40, "main", EK_BOLT_SYM_FUNCTION), 0);
    const uint8_t id[4] = {0xab, 0xcd, 0xef, 0x01};
    char *first = NULL;
    for (int order = 0; order < 2; order++) {
        ek_profile *p = new_profile();
        size_t a = add_bin(p, order ? "/usr/bin/app" : "/bin/app", "abcdef01", 0);
        size_t b = add_bin(p, order ? "/bin/app" : "/usr/bin/app", "abcdef01", 0);
        add_bin(p, "/lib/other.so", NULL, 0);
        assert_int_equal(ek_profile_add_branch(p, order ? b : a, 0x1008, 0x1020, 5), 0);
        assert_int_equal(ek_profile_add_branch(p, order ? a : b, 0x1008, 0x1020, 2), 0);
        assert_int_equal(ek_profile_add_branch(p, order ? a : b, 0x1024, 0x1000, 1), 0);
        ek_sbuf s = EK_SBUF_INIT;
        size_t nb = 0;
        assert_int_equal(ek_profile_write_bolt_for_elf(p, id, 4, "/x/app", 0, m, &s, &nb), 0);
        assert_int_equal(nb, 2);
        assert_string_equal(s.p, "1 main 8 1 main 20 0 7\n1 main 24 1 main 0 0 1\n");
        if (!first)
            first = strdup(s.p);
        else
            assert_string_equal(s.p, first);
        ek_sbuf_free(&s);
        /* no binary has the ELF's build-id, or it has none and no binary of its name has none */
        assert_int_equal(ek_profile_write_bolt_for_elf(p, (const uint8_t *)"\x01\x02\x03\x04", 4,
                                                       "/x/app", 0, m, &s, NULL),
                         EK_ERR_NOT_FOUND);
        assert_int_equal(ek_profile_write_bolt_for_elf(p, NULL, 0, "/x/app", 0, m, &s, NULL),
                         EK_ERR_NOT_FOUND);
        assert_int_equal(s.len, 0);
        /* ... the one of its name */
        assert_int_equal(
            ek_profile_write_bolt_for_elf(p, NULL, 0, "/symfs/lib/other.so", 0, m, &s, &nb), 0);
        assert_int_equal(nb, 1);
        ek_sbuf_free(&s);
        ek_profile_free(p);
    }
    free(first);
    ek_bolt_map_free(m);
}

static void test_bolt_map_from_elf(void **state)
{
    (void)state;
    const char *src = getenv("ETMKIT_SRC");
    if (!src) {
        tu_skip("ETMKIT_SRC is not set");
        return;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/fuzz/corpus/elf/exe", src);
    ek_bolt_map *m = NULL;
    assert_int_equal(ek_bolt_map_load_elf(path, NULL, &m), 0);
    ek_profile *p = new_profile();
    size_t h = add_bin(p, path, NULL, 0x400000);
    /* the loop runs 10 times: [400144,40015c] once, [400164,400174] 10 times then back to
     * 400158: [400158,40015c] 10 times, b.lt taken 10 of 11 */
    assert_int_equal(ek_profile_add_range(p, h, 0x400144, 0x40015c, 1), 0);
    assert_int_equal(ek_profile_add_range(p, h, 0x400158, 0x40015c, 10), 0);
    assert_int_equal(ek_profile_add_range(p, h, 0x400164, 0x400174, 10), 0);
    assert_int_equal(ek_profile_add_range(p, h, 0x400160, 0x400160, 1), 0);
    assert_int_equal(ek_profile_add_branch(p, h, 0x40015c, 0x400164, 10), 0);
    assert_int_equal(ek_profile_add_branch(p, h, 0x400174, 0x400158, 10), 0);
    assert_int_equal(ek_profile_add_branch(p, h, 0x400160, 0x400188, 1), 0);
    assert_int_equal(ek_profile_add_branch(p, h, 0x400184, 0x400144, 1), 0);
    ek_sbuf s = EK_SBUF_INIT;
    assert_int_equal(ek_profile_write_bolt(p, h, m, &s), 0);
    assert_string_equal(s.p, "1 _start c 1 work 0 0 1\n"
                             "1 work 10 1 work 14 0 1\n"  /* into the loop head 400158 */
                             "1 work 18 1 work 1c 0 1\n"  /* b.lt not taken */
                             "1 work 18 1 work 20 0 10\n" /* b.lt taken */
                             "1 work 1c 1 _start 10 0 1\n"
                             "1 work 30 1 work 14 0 10\n");
    ek_sbuf_free(&s);
    ek_profile_free(p);
    ek_bolt_map_free(m);
    rec r = {0};
    ek_diag d = {rec_fn, &r};
    assert_int_equal(ek_bolt_map_load_elf("/nonexistent/elf", &d, &m), EK_ERR_IO);
    assert_int_equal(r.n, 1);
    snprintf(path, sizeof path, "%s/fuzz/corpus/elf/header-only", src);
    memset(&r, 0, sizeof r);
    int rc = ek_bolt_map_load_elf(path, &d, &m);
    if (!rc)
        ek_bolt_map_free(m);
    else
        assert_int_equal(rc, EK_ERR_FORMAT);
}

/* Blocks decoded as llvm-bolt 16 builds them (tests/data/bolt/blocks.S; the lines below are
 * what perf2bolt-16 -pa writes for the same execution): "B.cond; B" is one
 * block, a conditional tail call is not, $d data is not decoded, a function with an indirect
 * jump gets no fall-throughs. f runs twice as x0 = 1 (3 times) and x0 = 0 (5 times). */
static void test_bolt_blocks_from_elf(void **state)
{
    (void)state;
    const char *src = getenv("ETMKIT_SRC");
    if (!src) {
        tu_skip("ETMKIT_SRC is not set");
        return;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/data/bolt/blocks.elf", src);
    ek_bolt_map *m = NULL;
    assert_int_equal(ek_bolt_map_load_elf(path, NULL, &m), 0);
    ek_profile *p = new_profile();
    size_t h = add_bin(p, path, NULL, 0x10000);
    const uint64_t f = 0x10000, g = 0x10024;
    static const struct {
        uint64_t b, e, n;
    } ranges[] = {{0, 4, 8},       {0xc, 0x10, 3}, {0x14, 0x14, 3}, {0x1c, 0x1c, 3},
                  {0x20, 0x20, 3}, {8, 8, 5},      {0x10, 0x10, 5}};
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
        assert_int_equal(ek_profile_add_range(p, h, f + ranges[i].b, f + ranges[i].e, ranges[i].n),
                         0);
    assert_int_equal(ek_profile_add_range(p, h, g, g + 4, 5), 0);
    assert_int_equal(ek_profile_add_range(p, h, g + 8, g + 8, 5), 0);
    assert_int_equal(ek_profile_add_branch(p, h, f + 4, f + 0xc, 3), 0);
    assert_int_equal(ek_profile_add_branch(p, h, f + 0x14, f + 0x1c, 3), 0);
    assert_int_equal(ek_profile_add_branch(p, h, f + 0x20, EK_PROFILE_EXTERNAL, 3), 0);
    assert_int_equal(ek_profile_add_branch(p, h, f + 8, f + 0x10, 5), 0);
    assert_int_equal(ek_profile_add_branch(p, h, f + 0x10, g, 5), 0);
    assert_int_equal(ek_profile_add_branch(p, h, g + 4, g + 8, 5), 0);
    assert_int_equal(ek_profile_add_branch(p, h, g + 8, EK_PROFILE_EXTERNAL, 5), 0);
    ek_sbuf s = EK_SBUF_INIT;
    assert_int_equal(ek_profile_write_bolt(p, h, m, &s), 0);
    /* no "f 4 -> f 8": b.eq's not-taken side stays in its block (the B at f+8) */
    assert_string_equal(s.p, "1 f 4 1 f c 0 3\n"
                             "1 f 8 1 f 10 0 5\n"
                             "1 f c 1 f 10 0 3\n"
                             "1 f 10 1 f 14 0 3\n"
                             "1 f 10 1 g/1 0 0 5\n"
                             "1 f 14 1 f 1c 0 3\n"
                             "1 f 1c 1 f 20 0 3\n"
                             "1 f 20 0 [unknown] 0 0 3\n"
                             "1 g/1 4 1 g/1 8 0 5\n"
                             "1 g/1 8 0 [unknown] 0 0 5\n");
    ek_sbuf_free(&s);
    ek_profile_free(p);
    ek_bolt_map_free(m);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_any_grouping_same_bytes),
        cmocka_unit_test(test_insertion_order_invisible),
        cmocka_unit_test(test_counts_saturate_and_sort),
        cmocka_unit_test(test_binary_identity),
        cmocka_unit_test(test_build_id_canon_and_bolt_binary),
        cmocka_unit_test(test_merge_load_base_conflict),
        cmocka_unit_test(test_merge_binary_parts),
        cmocka_unit_test(test_autofdo_exact),
        cmocka_unit_test(test_autofdo_round_trip),
        cmocka_unit_test(test_autofdo_simpleperf_file),
        cmocka_unit_test(test_branch_list_exact_and_round_trip),
        cmocka_unit_test(test_malformed_inputs),
        cmocka_unit_test(test_detect_and_names),
        cmocka_unit_test(test_bolt_names),
        cmocka_unit_test(test_bolt_exact),
        cmocka_unit_test(test_bolt_for_elf),
        cmocka_unit_test(test_sum_binaries),
        cmocka_unit_test(test_bolt_map_from_elf),
        cmocka_unit_test(test_bolt_blocks_from_elf),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
