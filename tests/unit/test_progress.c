/* Progress callbacks of the long-running calls (issue 11 item 9): ek_sim_run and the session's
 * decode. Each must call it from the caller's thread only (decoding runs on several threads),
 * with done never decreasing and never above total, total the same in every call, a first call
 * at the start and a last one with everything done; a few calls per slice at most, not per
 * byte. Option structs of the previous version (size = ..._SIZE_V1) are still accepted and
 * whatever lies past their size is ignored. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/session.h"
#include "etmkit/sim.h"
#include "testutil.h"

typedef struct calls {
    pthread_t caller;
    size_t n;
    int other_thread, backwards, beyond, total_changed;
    uint64_t first_done, last_done, total;
} calls;

static void record(void *ctx, uint64_t done, uint64_t total)
{
    calls *c = ctx;
    if (!pthread_equal(pthread_self(), c->caller)) c->other_thread++;
    if (!c->n) {
        c->first_done = done;
        c->total = total;
    } else {
        if (done < c->last_done) c->backwards++;
        if (total != c->total) c->total_changed++;
    }
    if (done > total) c->beyond++;
    c->last_done = done;
    c->n++;
}

static void never(void *ctx, uint64_t done, uint64_t total)
{
    (void)ctx;
    (void)done;
    (void)total;
    fail_msg("a progress function past the caller's struct size was called");
}

static void check_calls(const calls *c)
{
    assert_true(c->n >= 2);
    assert_int_equal(c->other_thread, 0);
    assert_int_equal(c->backwards, 0);
    assert_int_equal(c->beyond, 0);
    assert_int_equal(c->total_changed, 0);
    assert_true(c->first_done == 0);
    assert_true(c->total > 0);
}

static char *dir, *off; /* off: a configuration without the ground truth (slow to make) */

/* a 4-CPU recording (per-CPU queues, time stamps: one decoder thread per queue) */
static int setup(void **st)
{
    (void)st;
    dir = tu_tmpdir();
    if (!dir) return -1;
    off = tu_write_file(dir, "off.ini", "truth = off\n", 12);
    if (!off) return -1;
    char out[4096];
    snprintf(out, sizeof out, "%s/w", dir);
    ek_sim_opts o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.scenario = "workload";
    o.seed = 1;
    o.trace_size = 1u << 20;
    o.config_file = off;
    o.outdir = out;
    return ek_sim_run(&o, NULL);
}

static int teardown(void **st)
{
    (void)st;
    tu_rmtree(dir);
    free(dir);
    free(off);
    return 0;
}

static void test_sim_progress(void **st)
{
    (void)st;
    char out[4096];
    snprintf(out, sizeof out, "%s/p", dir);
    calls c;
    memset(&c, 0, sizeof c);
    c.caller = pthread_self();
    ek_sim_opts o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.scenario = "workload";
    o.seed = 1;
    o.trace_size = 1u << 20;
    o.config_file = off;
    o.outdir = out;
    o.progress = record;
    o.progress_ctx = &c;
    ek_sim_result r;
    assert_int_equal(ek_sim_run(&o, &r), 0);
    check_calls(&c);
    assert_true(c.total == o.trace_size);
    assert_true(c.last_done == (r.trace_bytes < c.total ? r.trace_bytes : c.total));
    /* about every 256 KiB of trace, not per byte or per packet */
    assert_true(c.n <= 2 + o.trace_size / (64u << 10));
    tu_rmtree(out);
}

static void test_sim_opts_v1(void **st)
{
    (void)st;
    char out[4096];
    snprintf(out, sizeof out, "%s/v1", dir);
    ek_sim_opts o;
    memset(&o, 0, sizeof o);
    o.scenario = "basic";
    o.seed = 1;
    o.outdir = out;
    o.progress = never; /* past a version-1 caller's struct: not its data */
    o.size = EK_SIM_OPTS_SIZE_V1;
    assert_int_equal(ek_sim_run(&o, NULL), 0);
    o.size = EK_SIM_OPTS_SIZE_V1 - 1;
    assert_int_equal(ek_sim_run(&o, NULL), EK_ERR_ARG);
    tu_rmtree(out);
}

static int discard(void *ctx, const ek_sample *s, const ek_script_resolver *r)
{
    (void)ctx;
    (void)s;
    (void)r;
    return 0;
}

static void decode(unsigned threads, int timeless)
{
    char data[4096], symfs[4096];
    snprintf(data, sizeof data, "%s/w/perf.data", dir);
    snprintf(symfs, sizeof symfs, "%s/w/symfs", dir);
    calls c;
    memset(&c, 0, sizeof c);
    c.caller = pthread_self();
    ek_session_opts o;
    ek_session_opts_init(&o);
    o.symfs = symfs;
    o.threads = threads;
    ek_itrace_parse(timeless ? "bZ" : "b", &o.itrace, NULL);
    o.progress = record;
    o.progress_ctx = &c;
    ek_session *s;
    assert_int_equal(ek_session_open(data, &o, NULL, &s), 0);
    assert_int_equal(ek_session_samples(s, discard, NULL), 0);
    ek_session_stats stt;
    ek_session_get_stats(s, &stt);
    ek_session_free(s);
    check_calls(&c);
    assert_true(stt.queues > 1);
    assert_true(c.total == stt.trace_bytes); /* every slice was decoded */
    assert_true(c.last_done == c.total);
    /* when the done count changed (per slice) or every 100 ms of waiting, plus the first and
     * the last call */
    assert_true(c.n <= 2 + stt.slices + 100);
}

static void test_session_progress_threads(void **st)
{
    (void)st;
    decode(0, 0);
}

static void test_session_progress_timeless(void **st)
{
    (void)st;
    decode(2, 1);
}

static void test_session_opts_v1(void **st)
{
    (void)st;
    char data[4096];
    snprintf(data, sizeof data, "%s/w/perf.data", dir);
    ek_session_opts o;
    ek_session_opts_init(&o);
    o.progress = never;
    o.size = EK_SESSION_OPTS_SIZE_V1;
    ek_session *s;
    assert_int_equal(ek_session_open(data, &o, NULL, &s), 0);
    assert_int_equal(ek_session_samples(s, discard, NULL), 0);
    ek_session_free(s);
    o.size = EK_SESSION_OPTS_SIZE_V1 - 1;
    assert_int_equal(ek_session_open(data, &o, NULL, &s), EK_ERR_ARG);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sim_progress),
        cmocka_unit_test(test_sim_opts_v1),
        cmocka_unit_test(test_session_progress_threads),
        cmocka_unit_test(test_session_progress_timeless),
        cmocka_unit_test(test_session_opts_v1),
    };
    return tu_run_group(argc, argv, tests, setup, teardown);
}
