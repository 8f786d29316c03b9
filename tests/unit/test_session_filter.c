/* Sample filters in a session (ek_session_opts.filter): ek_session_samples hands out only the
 * samples the filter keeps, in the order they have without it, and the statistics count every
 * sample; a caller built against version 3 of ek_session_opts gets no filter; a CPU filter
 * naming a CPU the recording does not have is refused. On `etmkit gen --scenario
 * two-processes` (3 CPUs, one ETF each: simloop 1000/1000 on CPU 0, simchild 1001/1001 on
 * CPU 1, simloop's thread 1002 on CPU 2). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "etmkit/filter.h"
#include "etmkit/session.h"
#include "etmkit/sim.h"
#include "testutil.h"

typedef struct got {
    ek_sample *v;
    size_t n, cap;
    int bad_comm; /* a sample whose comm is not the expected one */
    const char *want_comm;
} got;

static int collect(void *ctx, const ek_sample *s, const ek_script_resolver *r)
{
    got *g = ctx;
    if (g->n == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 1024;
        g->v = realloc(g->v, g->cap * sizeof *g->v);
        assert_non_null(g->v);
    }
    g->v[g->n] = *s;
    g->v[g->n].branches = NULL;
    g->v[g->n].nbranches = 0;
    g->n++;
    if (g->want_comm) {
        const char *c = r->comm(r->ctx, s);
        if (!c || strcmp(c, g->want_comm)) g->bad_comm = 1;
    }
    return 0;
}

static char *dir, *data;

static int setup(void **state)
{
    (void)state;
    dir = tu_tmpdir();
    if (!dir) return -1;
    ek_sim_opts o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.scenario = "two-processes";
    o.seed = 1;
    o.outdir = dir;
    ek_sim_result r;
    if (ek_sim_run(&o, &r)) return -1;
    if (asprintf(&data, "%s/perf.data", dir) < 0) return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_rmtree(dir);
    free(dir);
    free(data);
    return 0;
}

/* Run the recording with opts o; fills g and the statistics. */
static void run(ek_session_opts *o, got *g, ek_session_stats *st)
{
    char *symfs = NULL;
    assert_true(asprintf(&symfs, "%s/symfs", dir) > 0);
    o->symfs = symfs;
    ek_itrace_parse("b", &o->itrace, NULL);
    ek_session *s = NULL;
    assert_int_equal(ek_session_open(data, o, NULL, &s), 0);
    assert_int_equal(ek_session_samples(s, collect, g), 0);
    ek_session_get_stats(s, st);
    ek_session_free(s);
    free(symfs);
}

static int same_sample(const ek_sample *a, const ek_sample *b)
{
    return a->kind == b->kind && a->flags == b->flags && a->pid == b->pid && a->tid == b->tid &&
           a->cpu == b->cpu && a->ip == b->ip && a->addr == b->addr && a->has_time == b->has_time &&
           a->time == b->time;
}

/* g must be the samples of all that pass keep(), in the same order */
static void expect_subsequence(const got *all, const got *g, int (*keep)(const ek_sample *))
{
    size_t k = 0, want = 0;
    for (size_t i = 0; i < all->n; i++) {
        if (!keep(&all->v[i])) continue;
        want++;
        if (k < g->n && !same_sample(&all->v[i], &g->v[k]))
            fail_msg("sample %zu of the filtered run is not the %zu-th kept one", k, want);
        k++;
    }
    assert_int_equal(g->n, want);
    assert_true(want > 0 && want < all->n);
}

static int tid_1002(const ek_sample *s)
{
    return s->tid == 1002;
}
static int cpu_0(const ek_sample *s)
{
    return s->cpu == 0;
}
static int pid_1001(const ek_sample *s)
{
    return s->pid == 1001;
}

static void test_filters(void **state)
{
    (void)state;
    ek_session_opts o;
    got all = {0}, g = {0};
    ek_session_stats st_all, st;
    ek_session_opts_init(&o);
    run(&o, &all, &st_all);
    assert_true(all.n > 1000);
    assert_int_equal(all.n, st_all.samples_branches);

    ek_sample_filter f = EK_SAMPLE_FILTER_INIT;
    assert_int_equal(ek_sample_filter_tids(&f, "1002", NULL), 0);
    ek_session_opts_init(&o);
    o.filter = &f;
    run(&o, &g, &st);
    expect_subsequence(&all, &g, tid_1002);
    assert_int_equal(st.samples_branches, st_all.samples_branches); /* counts all */
    ek_sample_filter_free(&f);

    free(g.v);
    memset(&g, 0, sizeof g);
    assert_int_equal(ek_sample_filter_cpus(&f, "0", NULL), 0);
    ek_session_opts_init(&o);
    o.filter = &f;
    run(&o, &g, &st);
    expect_subsequence(&all, &g, cpu_0);
    ek_sample_filter_free(&f);

    /* the comm the resolver gives is the one the filter saw */
    free(g.v);
    memset(&g, 0, sizeof g);
    g.want_comm = "simchild";
    assert_int_equal(ek_sample_filter_comms(&f, "simchild", NULL), 0);
    ek_session_opts_init(&o);
    o.filter = &f;
    run(&o, &g, &st);
    expect_subsequence(&all, &g, pid_1001);
    assert_false(g.bad_comm);
    ek_sample_filter_free(&f);

    /* version 3 of the options ends before the filter: a caller built against it filters
     * nothing */
    free(g.v);
    memset(&g, 0, sizeof g);
    assert_int_equal(ek_sample_filter_tids(&f, "1002", NULL), 0);
    ek_session_opts_init(&o);
    o.filter = &f;
    o.size = (uint32_t)EK_SESSION_OPTS_SIZE_V3;
    run(&o, &g, &st);
    assert_int_equal(g.n, all.n);
    ek_sample_filter_free(&f);
    free(g.v);
    free(all.v);
}

static void diag_kind(void *ctx, const ek_diag_event *ev)
{
    if (!strcmp(ev->kind, "session.filter")) (*(int *)ctx)++;
}

static void test_refused(void **state)
{
    (void)state;
    ek_sample_filter f = EK_SAMPLE_FILTER_INIT;
    assert_int_equal(ek_sample_filter_cpus(&f, "1,3", NULL), 0); /* CPUs 0-2 recorded */
    ek_session_opts o;
    ek_session_opts_init(&o);
    o.filter = &f;
    int n = 0;
    ek_diag d = {diag_kind, &n};
    ek_session *s = NULL;
    assert_int_equal(ek_session_open(data, &o, &d, &s), EK_ERR_ARG);
    assert_null(s);
    assert_int_equal(n, 1);
    /* smaller than version 1 */
    ek_session_opts_init(&o);
    o.size = (uint32_t)EK_SESSION_OPTS_SIZE_V1 - 1;
    assert_int_equal(ek_session_open(data, &o, NULL, &s), EK_ERR_ARG);
    ek_sample_filter_free(&f);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filters),
        cmocka_unit_test(test_refused),
    };
    return tu_run_group(argc, argv, tests, setup, teardown);
}
