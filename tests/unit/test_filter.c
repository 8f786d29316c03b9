/* Sample filters (etmkit/filter.h): perf script's -C, --pid, --tid, --comm and --time syntax,
 * and which samples they keep. The expected values are what perf 6.1 parses (cpumap.c,
 * intlist.c, time-utils.c) except where filter.h says etmkit refuses what perf takes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "etmkit/filter.h"
#include "testutil.h"

static void expect_i32s(const int32_t *got, size_t n, const int32_t *want, size_t nwant)
{
    assert_int_equal(n, nwant);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(got[i], want[i]);
}

static void test_cpus(void **state)
{
    (void)state;
    ek_sample_filter f = EK_SAMPLE_FILTER_INIT;
    ek_sbuf err = EK_SBUF_INIT;
    assert_int_equal(ek_sample_filter_cpus(&f, "4,0-2", &err), 0);
    const int32_t a[] = {0, 1, 2, 4};
    expect_i32s(f.cpus, f.ncpus, a, 4);
    assert_int_equal(ek_sample_filter_cpus(&f, "7", &err), 0); /* replaces, as perf */
    const int32_t b[] = {7};
    expect_i32s(f.cpus, f.ncpus, b, 1);
    assert_int_equal(ek_sample_filter_cpus(&f, "4095", &err), 0);
    /* refused: empty, garbage (perf ignores "0,x"'s tail), backwards, duplicates (perf too),
     * beyond perf's MAX_NR_CPUS, signs, blanks, hex */
    const char *bad[] = {"",     ",",  "0,", ",0", "x",  "0,x", "2-1", "0,0", "0-2,1",
                         "4096", "-1", "+1", " 1", "1 ", "0x1", "1-",  "-",   "1--2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ek_sbuf_reset(&err);
        assert_int_equal(ek_sample_filter_cpus(&f, bad[i], &err), EK_ERR_ARG);
        assert_true(err.len > 0 && !strchr(err.p, '\n'));
    }
    expect_i32s(f.cpus, f.ncpus, (const int32_t[]){4095}, 1); /* unchanged by failures */
    ek_sample_filter_free(&f);
    ek_sbuf_free(&err);
}

static void test_pids_tids_comms(void **state)
{
    (void)state;
    ek_sample_filter f = EK_SAMPLE_FILTER_INIT;
    ek_sbuf err = EK_SBUF_INIT;
    assert_int_equal(ek_sample_filter_pids(&f, "1001,7,1000", &err), 0);
    expect_i32s(f.pids, f.npids, (const int32_t[]){7, 1000, 1001}, 3);
    assert_int_equal(ek_sample_filter_tids(&f, "0", &err), 0);
    expect_i32s(f.tids, f.ntids, (const int32_t[]){0}, 1);
    const char *bad[] = {"", "1,,2", "1,", "abc", "1,abc", "-1", "2147483648", "1 "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ek_sbuf_reset(&err);
        assert_int_equal(ek_sample_filter_pids(&f, bad[i], &err), EK_ERR_ARG);
        assert_int_equal(ek_sample_filter_tids(&f, bad[i], &err), EK_ERR_ARG);
    }
    assert_int_equal(ek_sample_filter_comms(&f, "simloop,make", &err), 0);
    assert_int_equal(f.ncomms, 2);
    assert_string_equal(f.comms[0], "simloop");
    assert_string_equal(f.comms[1], "make");
    assert_int_equal(ek_sample_filter_comms(&f, "a,,b", &err), EK_ERR_ARG);
    assert_int_equal(ek_sample_filter_comms(&f, ",", &err), EK_ERR_ARG);
    assert_int_equal(ek_sample_filter_comms(&f, "", &err), EK_ERR_ARG);
    assert_int_equal(f.ncomms, 2);
    ek_sample_filter_free(&f);
    ek_sbuf_free(&err);
}

static void test_time_parse(void **state)
{
    (void)state;
    ek_sample_filter f = EK_SAMPLE_FILTER_INIT;
    ek_sbuf err = EK_SBUF_INIT;
    static const struct {
        const char *s;
        size_t n;
        uint64_t r[4]; /* start, end of each range */
    } ok[] = {
        {"1.5,2", 1, {1500000000, 2000000000}},
        /* fractions are padded to nanoseconds, never rounded */
        {"1.000140177,1.000140177", 1, {1000140177, 1000140177}},
        {"1.0001,", 1, {1000100000, 0}},
        {",1.000099999", 1, {0, 1000099999}},
        {",", 1, {0, 0}},
        {"12,12", 1, {12000000000ull, 12000000000ull}},
        {"1.,2.5", 1, {1000000000, 2500000000ull}},
        {".5,", 1, {500000000, 0}},
        /* blanks before a number, and after a range's comma, as perf's strtoul */
        {" 1.0001, 1.0002", 1, {1000100000, 1000200000}},
        /* several ranges, separated by blanks */
        {"1,1.00005 1.00009,1.1", 2, {1000000000, 1000050000, 1000090000, 1100000000}},
        {"1,2   3,", 2, {1000000000, 2000000000, 3000000000ull, 0}},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        ek_sbuf_reset(&err);
        int rc = ek_sample_filter_time(&f, ok[i].s, &err);
        if (rc) fail_msg("'%s': %s", ok[i].s, err.p);
        assert_int_equal(f.ntimes, ok[i].n);
        for (size_t k = 0; k < ok[i].n; k++) {
            assert_int_equal(f.times[k].start, ok[i].r[2 * k]);
            assert_int_equal(f.times[k].end, ok[i].r[2 * k + 1]);
        }
    }
    /* perf: "Invalid time string" for every one of these but "1,0 3,4" (an open end before
     * another range: etmkit refuses it) and the percentages (perf needs the recording's
     * HEADER_SAMPLE_TIME, which etmkit does not read) */
    const char *bad[] = {
        "",      "1.5",     "1.0000000001,", "abc,",   "2,1",     "1.5,1.2", "1.0001 ,1.1",
        "1,2,3", "1,3 2,4", "1,2 2,3",       "1, 2,3", "1,0 3,4", "1,2 ,3",  "1,2 3,4 ",
        "10%",   "0%-50%",  "1e3,",          "+1,",    "-1,",     "1.5x,",   "99999999999,"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ek_sbuf_reset(&err);
        if (ek_sample_filter_time(&f, bad[i], &err) != EK_ERR_ARG)
            fail_msg("'%s' was accepted", bad[i]);
        assert_true(err.len > 0 && !strchr(err.p, '\n'));
    }
    ek_sample_filter_free(&f);
    ek_sbuf_free(&err);
}

static ek_sample smp(int32_t cpu, int32_t pid, int32_t tid, int has_time, uint64_t time)
{
    ek_sample s;
    memset(&s, 0, sizeof s);
    s.cpu = cpu;
    s.pid = pid;
    s.tid = tid;
    s.has_time = has_time;
    s.time = time;
    return s;
}

static void test_match(void **state)
{
    (void)state;
    ek_sample_filter f = EK_SAMPLE_FILTER_INIT;
    ek_sample s = smp(2, 1000, 1002, 1, 5000000000ull);
    assert_false(ek_sample_filter_active(&f));
    assert_true(ek_sample_filter_match(&f, &s, NULL));
    assert_int_equal(ek_sample_filter_cpus(&f, "0,2-3", NULL), 0);
    assert_true(ek_sample_filter_active(&f));
    assert_true(ek_sample_filter_match(&f, &s, NULL));
    s.cpu = 1;
    assert_false(ek_sample_filter_match(&f, &s, NULL));
    s.cpu = -1; /* no CPU: not in any list */
    assert_false(ek_sample_filter_match(&f, &s, NULL));
    s.cpu = 3;
    assert_int_equal(ek_sample_filter_pids(&f, "1000", NULL), 0);
    assert_int_equal(ek_sample_filter_tids(&f, "1001,1002", NULL), 0);
    assert_true(ek_sample_filter_match(&f, &s, NULL));
    s.tid = 1000;
    assert_false(ek_sample_filter_match(&f, &s, NULL));
    s.tid = 1001;
    s.pid = 1001;
    assert_false(ek_sample_filter_match(&f, &s, NULL));
    s.pid = 1000;
    assert_int_equal(ek_sample_filter_comms(&f, "simloop,make", NULL), 0);
    assert_true(ek_sample_filter_match(&f, &s, "make"));
    assert_false(ek_sample_filter_match(&f, &s, "mak"));
    assert_false(ek_sample_filter_match(&f, &s, "makes"));
    assert_false(ek_sample_filter_match(&f, &s, NULL));
    /* --time: both ends included, in nanoseconds */
    assert_int_equal(ek_sample_filter_time(&f, "5,5.000000001", NULL), 0);
    assert_true(ek_sample_filter_match(&f, &s, "make"));
    s.time = 5000000001ull;
    assert_true(ek_sample_filter_match(&f, &s, "make"));
    s.time = 5000000002ull;
    assert_false(ek_sample_filter_match(&f, &s, "make"));
    s.time = 4999999999ull;
    assert_false(ek_sample_filter_match(&f, &s, "make"));
    /* as perf: a sample without a time, or at time 0, is never left out by --time */
    s.has_time = 0;
    assert_true(ek_sample_filter_match(&f, &s, "make"));
    s.has_time = 1;
    s.time = 0;
    assert_true(ek_sample_filter_match(&f, &s, "make"));
    /* open ends and several ranges */
    assert_int_equal(ek_sample_filter_time(&f, ",2 3,4 6,", NULL), 0);
    const struct {
        uint64_t t;
        int keep;
    } t[] = {{1, 1},
             {2000000000, 1},
             {2000000001, 0},
             {2999999999ull, 0},
             {3000000000, 1},
             {4000000000ull, 1},
             {4000000001ull, 0},
             {5999999999ull, 0},
             {6000000000ull, 1},
             {UINT64_MAX, 1}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        s.time = t[i].t;
        if (ek_sample_filter_match(&f, &s, "make") != t[i].keep)
            fail_msg("time %llu: want keep=%d", (unsigned long long)t[i].t, t[i].keep);
    }
    ek_sample_filter_free(&f);
    assert_false(ek_sample_filter_active(&f));
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpus),
        cmocka_unit_test(test_pids_tids_comms),
        cmocka_unit_test(test_time_parse),
        cmocka_unit_test(test_match),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
