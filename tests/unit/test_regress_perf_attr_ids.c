/* Regression (issue 6, limits audit; OPEN in the perf branch's src/input/perf_file.c):
 * every attr of a perf.data header may point its ids section at the same large range, e.g.
 * the whole file. The reader then copies the range once per attr (memory grows with
 * nattrs x file size) and re-sorts the growing id table after each attr, so time grows with
 * the cube of the file size: 16 KiB -> 0.4 s, 32 KiB -> 3 s, 64 KiB -> 29 s and 54 MiB,
 * 256 KiB -> more than 10 minutes and 300+ MiB.
 * The property asserted: the ids kept for all attrs together are no more than the file has
 * 8-byte words (ids that overlap another attr's ids section are not taken again).
 * While the fix is open this test reports SKIP with the numbers (exit 77); set
 * ETMKIT_REGRESS_STRICT=1 to make it fail instead. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/perf.h"

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

static int strict(void)
{
    const char *s = getenv("ETMKIT_REGRESS_STRICT");
    return s && s[0] == '1';
}

static int open_bug;

static void test_overlapping_attr_ids(void **state)
{
    (void)state;
    const size_t size = 16 * 1024; /* small: the unfixed reader takes ~0.4 s here */
    size_t n;
    uint8_t *b = make(size, &n);
    ek_perf_file *f = NULL;
    int rc = ek_perf_open_mem(b, size, "attr-ids.data", NULL, &f);
    if (rc == 0 && f) {
        size_t total = 0;
        for (size_t i = 0; i < ek_perf_nattrs(f); i++)
            total += ek_perf_attr_at(f, i)->nids;
        if (total > size / 8) {
            printf("KNOWN OPEN BUG (perf reader): %zu attrs keep %zu ids from a %zu-byte file "
                   "(at most %zu words); memory and time grow with nattrs x ids\n",
                   ek_perf_nattrs(f), total, size, size / 8);
            open_bug = 1;
            if (strict())
                fail_msg("ids kept beyond the file's size");
        }
        ek_perf_free(f);
    }
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_overlapping_attr_ids)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (rc == 0 && open_bug && !strict()) {
        printf("SKIP: open bug recorded for the perf reader (see the comment at the top)\n");
        return 77;
    }
    return rc;
}
