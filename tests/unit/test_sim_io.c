/* A simulator run that cannot write its output says which file and why (ek_sim_result's
 * io_file, relative to the output folder, and io_errno): each of its writers (the perf.data
 * writer, the truth files, the truth queue's expected files, symfs, kallsyms, a second
 * session's perf-1.data, the snapshot folder, the Armv7 generator's files) meets a path that
 * is already taken by a folder or a file. A run used to say EK_ERR_IO alone, and a truth file
 * it could not create was silently left out (the run succeeded without it). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "etmkit/etmkit.h"
#include "etmkit/sim.h"
#include "testutil.h"

typedef struct io_case {
    const char *scenario;
    const char *taken; /* a path in the output folder, made before the run */
    int as_file;       /* taken by an empty file (else by a folder) */
    const char *file;  /* the file the run names (in the output folder) */
    int err;           /* and its errno */
} io_case;

static int run_into(const char *dir, const char *scenario, ek_sim_result *res)
{
    ek_sim_opts o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.scenario = scenario;
    o.seed = 1;
    o.outdir = dir;
    return ek_sim_run(&o, res);
}

static void test_writers(void **state)
{
    (void)state;
    static const io_case cases[] = {
        {"basic", "perf.data", 0, "perf.data", EISDIR},
        {"basic", "truth.branches.tsv", 0, "truth.branches.tsv", EISDIR},
        {"basic", "truth.trace.tsv", 0, "truth.trace.tsv", EISDIR},
        {"basic", "expected-lbr.txt", 0, "expected-lbr.txt", EISDIR},
        {"basic", "kallsyms", 0, "kallsyms", EISDIR},
        {"basic", "truth.summary", 0, "truth.summary", EISDIR},
        {"basic", "symfs", 1, "symfs", ENOTDIR},
        {"session-arbitration", "perf-1.data", 0, "perf-1.data", EISDIR},
        {"per-thread-trbe-biglittle", "script-options.txt", 0, "script-options.txt", EISDIR},
        {"snapshot-etr", "snapshot/snapshot.ini", 0, "snapshot/snapshot.ini", EISDIR},
        {"armv7-ptm", "perf.data", 0, "perf.data", EISDIR},
        {"armv7-ptm", "symfs/usr/bin", 1, "symfs/usr/bin", ENOTDIR},
        {"armv7-ptm", "truth.summary", 0, "truth.summary", EISDIR},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const io_case *c = &cases[i];
        char *dir = tu_tmpdir();
        assert_non_null(dir);
        char *taken = NULL;
        assert_true(asprintf(&taken, "%s/%s", dir, c->taken) > 0);
        char *slash = strrchr(taken, '/');
        *slash = 0;
        char *mk = NULL;
        assert_true(asprintf(&mk, "mkdir -p '%s'", taken) > 0);
        assert_int_equal(system(mk), 0);
        *slash = '/';
        if (c->as_file) {
            int fd = open(taken, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            assert_true(fd >= 0);
            close(fd);
        } else {
            assert_int_equal(mkdir(taken, 0755), 0);
        }
        char *want = NULL;
        assert_true(asprintf(&want, "%s/%s", dir, c->file) > 0);
        ek_sim_result res;
        memset(&res, 0xa5, sizeof res);
        int rc = run_into(dir, c->scenario, &res);
        if (rc != EK_ERR_IO || strcmp(res.io_file, want) || res.io_errno != c->err)
            print_error("%s with %s taken: rc %d, io_file '%.80s', io_errno %d (%s)\n", c->scenario,
                        c->taken, rc, rc == EK_ERR_IO ? res.io_file : "",
                        rc == EK_ERR_IO ? res.io_errno : 0,
                        rc == EK_ERR_IO ? strerror(res.io_errno) : "");
        assert_int_equal(rc, EK_ERR_IO);
        assert_string_equal(res.io_file, want);
        assert_int_equal(res.io_errno, c->err);
        tu_rmtree(dir);
        free(dir);
        free(want);
        free(taken);
        free(mk);
    }
    /* the next run (same thread) starts clean: no failure, none reported */
    char *dir = tu_tmpdir();
    assert_non_null(dir);
    ek_sim_result res;
    memset(&res, 0xa5, sizeof res);
    assert_int_equal(run_into(dir, "armv7-ptm", &res), 0);
    assert_int_equal(res.io_errno, 0);
    assert_string_equal(res.io_file, "");
    tu_rmtree(dir);
    free(dir);
}

/* The output folder itself: a folder above it is a file. */
static void test_folder(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    assert_non_null(dir);
    char *file = NULL, *out = NULL;
    assert_true(asprintf(&file, "%s/f", dir) > 0);
    assert_true(asprintf(&out, "%s/f/out", dir) > 0);
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    close(fd);
    ek_sim_result res;
    assert_int_equal(run_into(out, "basic", &res), EK_ERR_IO);
    assert_string_equal(res.io_file, file);
    assert_int_equal(res.io_errno, ENOTDIR);
    tu_rmtree(dir);
    free(dir);
    free(file);
    free(out);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writers),
        cmocka_unit_test(test_folder),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
