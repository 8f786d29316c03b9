/* ek_perf_release: decoded trace handed back to the kernel. A file opened from a path is
 * mapped, and its released pages read back the same bytes; bytes given in memory
 * (ek_perf_open_mem: the caller's, or a pipe's copy) are never touched (MADV_DONTNEED would
 * zero them). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/perf.h"
#include "perfw.h"
#include "testutil.h"

#define ST (EK_PERF_SAMPLE_TID | EK_PERF_SAMPLE_TIME | EK_PERF_SAMPLE_CPU | EK_PERF_SAMPLE_ID)

/* a recording with 256 KiB of AUX data in one buffer (pages to release) */
static uint8_t *make(size_t *len)
{
    pw w;
    pw_init(&w, 0, 0);
    pw_attr_desc a = {.type = 8, .sample_type = ST, .flags = EK_PERF_ATTR_FLAG_SAMPLE_ID_ALL};
    uint64_t ids[] = {1};
    pw_attr(&w, &a, ids, 1);
    const uint64_t info[] = {1, (1ull << 32) | 1, 0, EK_CS_ETM_MAGIC_ETMV4, 0, 7, 0x40, 0x10,
                             1, 2,                3, 4};
    pw_auxtrace_info(&w, 3, info, sizeof info / sizeof info[0]);
    size_t n = 256u << 10;
    uint8_t *d = malloc(n);
    assert_non_null(d);
    for (size_t i = 0; i < n; i++)
        d[i] = (uint8_t)(i * 7 + (i >> 12));
    pw_sid s = {100, 100, 10, 1, 0, 0};
    pw_auxtrace(&w, n, 0, 0, 0, 0, 0, d);
    pw_aux(&w, ST, &s, 0, n, 0);
    free(d);
    uint8_t *buf = pw_finish(&w, len);
    pw_free(&w);
    return buf;
}

static void release_all(ek_perf_file *f)
{
    size_t size = 0;
    const uint8_t *b = ek_perf_bytes(f, &size);
    /* unaligned pieces, the whole file, past its end, outside it: all harmless */
    ek_perf_release(f, b + 1, size / 3);
    ek_perf_release(f, b + size / 2, size);
    ek_perf_release(f, b, size);
    ek_perf_release(f, b + size, 4096);
    ek_perf_release(f, NULL, 4096);
    ek_perf_release(f, b, 0);
}

static void test_memory_copy_untouched(void **state)
{
    (void)state;
    size_t len = 0;
    uint8_t *buf = make(&len);
    uint8_t *copy = malloc(len);
    assert_non_null(copy);
    memcpy(copy, buf, len);
    ek_perf_file *f = NULL;
    assert_int_equal(ek_perf_open_mem(buf, len, "mem", NULL, &f), 0);
    release_all(f);
    assert_memory_equal(buf, copy, len);
    ek_perf_free(f);
    free(copy);
    free(buf);
}

static void test_mapped_reads_back(void **state)
{
    (void)state;
    size_t len = 0;
    uint8_t *buf = make(&len);
    char *dir = tu_tmpdir();
    char *path = tu_write_file(dir, "perf.data", buf, len);
    ek_perf_file *f = NULL;
    assert_int_equal(ek_perf_open(path, NULL, &f), 0);
    size_t size = 0;
    const uint8_t *b = ek_perf_bytes(f, &size);
    assert_int_equal(size, len);
    assert_memory_equal(b, buf, len);
    release_all(f);
    assert_memory_equal(b, buf, len);
    /* and the slices still hold the trace */
    ek_perf_queues *q = NULL;
    assert_int_equal(ek_perf_queues_new(f, NULL, &q), 0);
    assert_true(ek_perf_queues_count(q) >= 1);
    const ek_perf_queue *pq = ek_perf_queue_at(q, 0);
    assert_true(pq->nslices >= 1);
    size_t dl = 0;
    const uint8_t *data = ek_perf_slice_data(f, &pq->slices[0], &dl);
    assert_int_equal(dl, 256u << 10);
    for (size_t i = 0; i < dl; i++)
        if (data[i] != (uint8_t)(i * 7 + (i >> 12))) fail_msg("byte %zu differs", i);
    ek_perf_queues_free(q);
    ek_perf_free(f);
    free(path);
    tu_rmtree(dir);
    free(dir);
    free(buf);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_copy_untouched),
        cmocka_unit_test(test_mapped_reads_back),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
