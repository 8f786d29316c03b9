/* Regression (issue 6, limits audit; fixed in src/input/perf_file.c): every attr of a perf.data
 * header may point its ids section at the same large range, e.g. the whole file. The reader
 * copied the range once per attr (memory grew with nattrs x file size: a 64 KiB file took
 * 54 MiB, a 256 KiB one 300+ MiB and, before the merge sort of the id table, minutes).
 * Now the ids of all attrs together are at most the file's 8-byte words; an attr whose ids
 * would go past that (they overlap others') keeps none and gets a "perf.attr-ids" warning. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/perf.h"
#include "testutil.h"

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* A file of 'size' bytes whose attrs section (a quarter of the file, 80-byte entries) holds
 * attrs that all take the whole file as their ids. */
static uint8_t *make(size_t size, size_t *nattrs)
{
    uint8_t *b = calloc(1, size);
    memcpy(b, "PERFILE2", 8);
    const size_t asz = 80, off = 1024, n = (size / 4) / asz;
    put64(b + 8, 104);     /* header size */
    put64(b + 16, asz);    /* attr_size */
    put64(b + 24, off);    /* attrs.offset */
    put64(b + 32, n * asz);/* attrs.size */
    put64(b + 40, size - 8);
    put64(b + 48, 0);      /* empty data section at the end */
    for (size_t i = 0; i < n; i++) {
        uint8_t *e = b + off + i * asz;
        put32(e, 1);       /* type */
        put32(e + 4, 64);  /* attr.size */
        put64(e + 64, 0);  /* ids.offset */
        put64(e + 72, size); /* ids.size: the whole file */
    }
    *nattrs = n;
    return b;
}

static unsigned nwarn;

static void count(void *ctx, const ek_diag_event *ev)
{
    (void)ctx;
    if (strcmp(ev->kind, "perf.attr-ids") == 0)
        nwarn++;
}

static void test_overlapping_attr_ids(void **state)
{
    (void)state;
    const size_t size = 64 * 1024;
    size_t n;
    uint8_t *b = make(size, &n);
    ek_perf_file *f = NULL;
    ek_diag d = {count, NULL};
    assert_int_equal(ek_perf_open_mem(b, size, "attr-ids.data", &d, &f), 0);
    assert_non_null(f);
    assert_int_equal(ek_perf_nattrs(f), n);
    size_t total = 0;
    for (size_t i = 0; i < ek_perf_nattrs(f); i++)
        total += ek_perf_attr_at(f, i)->nids;
    assert_true(total <= size / 8);
    assert_int_equal(total, size / 8); /* the first attr keeps its ids */
    assert_int_equal(nwarn, n - 1);
    ek_perf_free(f);
    free(b);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_overlapping_attr_ids)};
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
