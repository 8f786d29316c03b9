/* The scenario catalogue as data (src/sim/scenario.c, steps.c): every AArch64 scenario of the
 * catalogue has its steps, and the interpreter does what a step says and refuses a step that
 * has nothing to act on (a session step before a session, a process step before a process, a
 * target session that does not exist). The scenarios' outputs themselves are checked by the
 * gen_* scripts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "etmkit/sim.h"
#include "sim/sim.h"
#include "testutil.h"

static void test_catalogue(void **state)
{
    (void)state;
    size_t found = 0;
    for (size_t i = 0; i < ek_sim_scenario_count(); i++) {
        const char *name = ek_sim_scenario_name(i);
        assert_non_null(name);
        const sim_scenario *sc = sim_scenario_find(name);
        if (!sc) continue; /* an Armv7 scenario (v7gen.c) */
        found++;
        assert_string_equal(sc->name, name);
        assert_string_equal(sc->desc, ek_sim_scenario_desc(i));
        assert_true(sc->trace_default > 0);
        assert_non_null(sc->setup);
        assert_non_null(sc->run);
        /* the machine gets its CPUs (or a step that is code decides them) and each list ends */
        int cpus = 0;
        const sim_sc_step *st = sc->setup;
        for (; st->op != SIM_ST_END; st++)
            if (st->op == SIM_ST_CPUS || st->op == SIM_ST_CALL) cpus = 1;
        assert_true(cpus);
        for (st = sc->run; st->op != SIM_ST_END; st++)
            assert_true(st->op != SIM_ST_CPUS); /* (the machine is made by then) */
    }
    assert_true(found >= 30);
    assert_null(sim_scenario_find("no-such-scenario"));
}

static void test_steps(void **state)
{
    (void)state;
    sim *S = calloc(1, sizeof *S);
    assert_non_null(S);
    const sim_sc_step setup[] = {
        {.op = SIM_ST_CPUS, .a = 3},
        {.op = SIM_ST_SESSION, .a = SIM_MODE_SYSTEM, .b = 3},
        {.op = SIM_ST_RING, .a = 64u << 10},
        {.op = SIM_ST_SESSION, .a = SIM_MODE_PER_CPU, .b = 1},
        {.op = SIM_ST_READ_PERIOD, .a = 12345},
        {.op = SIM_ST_HEADER, .a = 2, .b = 1},
        {.op = SIM_ST_TRACE_ID_TOP, .a = 9},
        {.op = SIM_ST_END},
    };
    assert_int_equal(sim_steps_run(S, setup), 0);
    assert_int_equal(S->ncpus, 3);
    assert_int_equal(S->nsessions, 2);
    assert_int_equal(S->sessions[0].mode, SIM_MODE_SYSTEM);
    assert_int_equal(S->sessions[0].ring_size, 64u << 10);
    assert_int_equal(S->sessions[1].el_mask, 1);
    assert_int_equal(S->sessions[1].read_period, 12345);
    assert_int_equal(S->sessions[1].header_version, 2);
    assert_int_equal(S->sessions[1].hw_id_records, 1);
    assert_int_equal(S->trace_id_top, 9);
    /* a session step acts on the last session there is */
    const sim_sc_step more[] = {{.op = SIM_ST_READ_SKEW, .a = 7}, {.op = SIM_ST_END}};
    assert_int_equal(sim_steps_run(S, more), 0);
    assert_int_equal(S->sessions[1].read_skew, 7);
    /* nothing to act on */
    const sim_sc_step no_process[] = {{.op = SIM_ST_ACTIONS, .a = 8}, {.op = SIM_ST_END}};
    assert_int_equal(sim_steps_run(S, no_process), EK_ERR_ARG);
    const sim_sc_step no_target[] = {{.op = SIM_ST_TARGET, .a = 2}, {.op = SIM_ST_END}};
    assert_int_equal(sim_steps_run(S, no_target), EK_ERR_ARG);
    free(S);
    S = calloc(1, sizeof *S);
    assert_non_null(S);
    const sim_sc_step no_session[] = {{.op = SIM_ST_RING, .a = 4096}, {.op = SIM_ST_END}};
    assert_int_equal(sim_steps_run(S, no_session), EK_ERR_ARG);
    free(S);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_catalogue),
        cmocka_unit_test(test_steps),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
