/* The pages a decoded block hands back (qblock_release): whole pages of the system's size
 * inside the block, never its edges, which hold other queues' trace; for 4, 16 and 64 KiB
 * pages (the page sizes of arm64 kernels), also after ek_perf_release's outward rounding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdlib.h>

#include "session/qdecode.h"
#include "testutil.h"

static void test_inner_pages(void **state)
{
    (void)state;
    uintptr_t lo, hi;
    /* 64 KiB pages: a block from 4 KiB into one page to 4 KiB into the fourth */
    qblock_inner_pages(0x10000 + 0x1000, 0x30000, 0x10000, &lo, &hi);
    assert_int_equal(lo, 0x20000);
    assert_int_equal(hi, 0x40000);
    /* the same block with 4 KiB pages: all of it */
    qblock_inner_pages(0x11000, 0x30000, 0x1000, &lo, &hi);
    assert_int_equal(lo, 0x11000);
    assert_int_equal(hi, 0x41000);
    /* within one page: nothing */
    qblock_inner_pages(0x10010, 0x8000, 0x10000, &lo, &hi);
    assert_true(hi <= lo);
    uint64_t r = 88172645463325252ull;
    const uintptr_t sizes[] = {0x1000, 0x4000, 0x10000};
    for (int k = 0; k < 30000; k++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        const uintptr_t pg = sizes[r % 3];
        const uintptr_t a = (uintptr_t)((r >> 8) & 0xffffff);
        const size_t len = (size_t)((r >> 36) & 0x3ffff);
        qblock_inner_pages(a, len, pg, &lo, &hi);
        if (hi <= lo) {
            /* no whole page inside: the block is shorter than a page, or spans no page's start
             * and end */
            assert_true(len < 2 * pg);
            continue;
        }
        /* whole pages, inside the block, and every whole page inside it */
        assert_int_equal(lo % pg, 0);
        assert_int_equal(hi % pg, 0);
        assert_true(lo >= a && hi <= a + len);
        assert_true(lo - a < pg && a + len - hi < pg);
        /* rounded outwards to the same pages (ek_perf_release), still inside */
        assert_true(lo / pg * pg == lo && (hi + pg - 1) / pg * pg == hi);
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inner_pages),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
