/* Randomized schedules of the sink arbitration rules (seed 002): the "arbitration-stress"
 * scenario draws a topology (shared ETR, ETF per CPU or per-CPU TRBE), 2-8 CPUs, 2-4 perf
 * sessions of random modes with random start and stop times (sometimes a kernel-created session
 * without an owner task) and processes that sleep, clone and exit. For every seed the simulator
 * must report: no trace written into a sink owned by another session, reference counts that
 * match the running events and return to zero, and nothing started or written for a session
 * after it ended. The simulator checks the invariants after every event start and stop. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/sim.h"
#include "testutil.h"

static int sanitized(void)
{
    const char *s = getenv("ETMKIT_SANITIZE");
    return s && !strcmp(s, "1");
}

static void run_seeds(uint64_t first, uint64_t count, int truth)
{
    char *dir = tu_tmpdir();
    assert_non_null(dir);
    const char *cfg = truth ? "truth = on\n" : "truth = off\n";
    char *cfgpath = tu_write_file(dir, "stress.ini", cfg, strlen(cfg));
    assert_non_null(cfgpath);
    uint64_t refused = 0, runs_with_trace = 0;
    for (uint64_t seed = first; seed < first + count; seed++) {
        char out[4096];
        snprintf(out, sizeof(out), "%s/run%llu", dir, (unsigned long long)seed);
        ek_sim_opts o;
        memset(&o, 0, sizeof(o));
        o.size = sizeof(o);
        o.scenario = "arbitration-stress";
        o.seed = seed;
        o.config_file = cfgpath;
        o.outdir = out;
        ek_sim_result r;
        int err = ek_sim_run(&o, &r);
        if (err || r.sink_mixed || r.sink_invariant || r.touched_after_exit)
            print_error("seed %llu: err %d mixed %llu invariant %llu touched %llu\n",
                        (unsigned long long)seed, err, (unsigned long long)r.sink_mixed,
                        (unsigned long long)r.sink_invariant,
                        (unsigned long long)r.touched_after_exit);
        assert_int_equal(err, 0);
        assert_true(r.sink_mixed == 0);
        assert_true(r.sink_invariant == 0);
        assert_true(r.touched_after_exit == 0);
        refused += r.sink_refused;
        runs_with_trace += r.aux_bytes > 0;
        tu_rmtree(out);
    }
    /* the schedules must exercise the rules: some starts are refused, trace is recorded */
    assert_true(refused > 0);
    assert_true(runs_with_trace > count / 2);
    free(cfgpath);
    tu_rmtree(dir);
    free(dir);
}

static void test_stress_fast(void **st)
{
    (void)st;
    run_seeds(1, sanitized() ? 12 : 80, 0);
}

/* with the ground truth on, the truth decoder also walks every session's AUX data */
static void test_stress_truth(void **st)
{
    (void)st;
    run_seeds(1000, sanitized() ? 3 : 10, 1);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stress_fast),
        cmocka_unit_test(test_stress_truth),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
