/* The run driver of `etmkit gen` (ek_sim_run): a scenario's machine set up, configured, run,
 * and its recording, truth and files written. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "sim/sim.h"
#include "sim/v7.h"

void sim_note(sim *S, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ek_diag_vemit(S->diag, EK_SEV_NOTE, "sim.note", 0, NULL, -1, -1, -1, fmt, ap);
    va_end(ap);
}

void sim_progress(sim *S)
{
    S->progress_told = S->trace_total;
    if (S->opts->progress)
        S->opts->progress(S->opts->progress_ctx,
                          S->trace_total < S->trace_budget ? S->trace_total : S->trace_budget,
                          S->trace_budget);
}

static int run(const ek_sim_opts *opts, ek_sim_result *res)
{
    if (!opts || opts->size < EK_SIM_OPTS_SIZE_V1) return EK_ERR_ARG;
    /* an older caller's smaller struct: the fields it does not have stay zero */
    ek_sim_opts oc;
    memset(&oc, 0, sizeof oc);
    memcpy(&oc, opts, opts->size < sizeof oc ? opts->size : sizeof oc);
    oc.size = sizeof oc;
    const ek_sim_opts *o = &oc;
    if (!o->scenario || !o->outdir) return EK_ERR_ARG;
    const sim_scenario *sc = sim_scenario_find(o->scenario);
    if (!sc) {
        const int v7 = sim_v7_find(o->scenario);
        return v7 < 0 ? EK_ERR_NOT_FOUND : sim_v7_gen(o, v7, res);
    }
    sim *S = calloc(1, sizeof(*S));
    if (!S) return EK_ERR_NOMEM;
    S->sc = sc;
    S->opts = o;
    S->diag = (ek_diag *)o->diag;
    S->rng = sim_rng_seeded(o->seed);
    S->next_pid = 1000;
    S->now = SIM_BOOT_NS;
    S->quantum = 10000;
    S->tick = 50000;
    S->trace_id_top = 0x70;
    S->trace_budget = o->trace_size ? o->trace_size : sc->trace_default;
    S->truth = S->trace_budget <= SIM_TRUTH_MAX;
    S->work = ~0ull >> 2;
    S->branches_limit = S->truth ? 2000000 : 100000;
    int err = sim_mkdirs(o->outdir);
    for (size_t i = 0; i < sim_blob_count() && !err; i++)
        err = sim_image_load(&S->images[S->nimages++], sim_blob_get(i));
    if (!err && o->config_file) err = sim_apply_config(S, o->config_file, 0);
    if (!err) err = sim_steps_run(S, S->sc->setup);
    if (!err) err = sim_machine_init(S);
    if (!err && o->config_file) err = sim_apply_config(S, o->config_file, 1);
    char *branches = sim_join(o->outdir, "truth.branches.tsv");
    if (!err && !branches) err = EK_ERR_NOMEM;
    if (!err && !(S->branches_out = sim_fopen(branches))) err = EK_ERR_IO;
    if (!err) fprintf(S->branches_out, "# time_ns\tcpu\tpid\ttid\tel\tfrom\tto\tkind\ttaken\n");
    free(branches);
    char *tracing = sim_join(o->outdir, "truth.trace.tsv");
    if (!err && !tracing) err = EK_ERR_NOMEM;
    if (!err && !(S->trace_out = sim_fopen(tracing))) err = EK_ERR_IO;
    if (!err) fprintf(S->trace_out, "# row\ttime_ns\tcpu\tevent\tpc\tel\tpid\ttid\n");
    free(tracing);
    for (int i = 0; i < S->nsessions && !err; i++) {
        sim_session *s = &S->sessions[i];
        err = sim_session_setup(S, s);
        if (err) break;
        char name[64];
        snprintf(name, sizeof(name), i ? "perf-%d.data" : "perf.data", i);
        s->dir = sim_join(o->outdir, name);
        if (!s->dir)
            err = EK_ERR_NOMEM;
        else if (!S->sc->snapshot_folder && !s->no_output &&
                 !(s->w = sim_writer_open(S, s, s->dir)))
            err = EK_ERR_IO;
    }
    if (!err) {
        for (int i = 0; i < S->nsessions; i++) {
            sim_session *s = &S->sessions[i];
            if (s->start_time < SIM_BOOT_NS) s->start_time = SIM_BOOT_NS;
            s->next_read = s->start_time;
        }
        sim_sessions_poll(S, S->now);
        err = sim_steps_run(S, sc->run);
    }
    if (o->progress) o->progress(o->progress_ctx, 0, S->trace_budget);
    if (!err) err = sim_run(S, SIM_BOOT_NS + 20000000000ull);
    sim_progress(S); /* the end of the trace (below the budget when the processes ended) */
    if (!err) err = sim_sessions_finish(S);
    /* at the end every sink is free and every trace unit is off */
    sim_sinks_check(S);
    uint64_t mixed = 0, refused = 0, touched = 0;
    for (int c = 0; c < S->ncpus; c++)
        if (S->cpus[c].etm.enabled) S->stat_invariant++;
    for (int i = 0; i < 2 * SIM_MAX_CPUS; i++) {
        const sim_sink *k =
            i < SIM_MAX_CPUS ? (i < S->nsinks ? &S->sinks[i] : NULL) : S->trbes[i - SIM_MAX_CPUS];
        if (!k) continue;
        if (k->refcnt || k->owner != SIM_NO_OWNER) S->stat_invariant++;
        mixed += k->stat_mixed;
        refused += k->stat_refused;
    }
    for (int i = 0; i < S->nsessions; i++)
        touched += S->sessions[i].touched_after_exit;
    S->stat_mixed = mixed;
    S->stat_refused = refused;
    S->stat_touched = touched;
    for (int i = 0; i < S->nsessions; i++) {
        sim_session *s = &S->sessions[i];
        if (s->w) {
            int e2 = sim_writer_close(s->w);
            s->w = NULL;
            if (!err) err = e2;
        }
    }
    if (S->branches_out) {
        int e2 = sim_fclose(S->branches_out);
        S->branches_out = NULL;
        if (!err) err = e2;
    }
    if (S->trace_out) {
        int e2 = sim_fclose(S->trace_out);
        S->trace_out = NULL;
        if (!err) err = e2;
    }
    if (!err) err = sim_write_symfs(S, o->outdir, !S->no_vmlinux);
    if (!err) err = sim_write_jit_files(S, o->outdir);
    if (!err) err = sim_write_kallsyms(S, o->outdir);
    if (!err && S->sc->snapshot_folder) sim_snapshot_prune(S);
    for (int i = 0; i < S->nsessions && !err && S->truth; i++)
        if (!S->sessions[i].no_output) err = sim_truth_write(S, &S->sessions[i], o->outdir, i);
    for (int i = 0; i < S->nsessions && !err && !S->sc->snapshot_folder; i++)
        if (!S->sessions[i].no_output)
            err = sim_script_options_write(S, &S->sessions[i], o->outdir, i);
    if (!err && S->sc->snapshot_folder) err = sim_snapshot_write(S, o->outdir);
    if (!err) err = sim_write_summary(S, o->outdir, o);
    if (res) {
        memset(res, 0, sizeof(*res));
        res->trace_bytes = S->trace_total;
        res->instructions = S->insn_total;
        res->branches = S->branch_total;
        for (int i = 0; i < S->nsessions; i++)
            res->aux_bytes += S->sessions[i].aux_bytes;
        res->expected_lines = S->nsessions ? S->sessions[0].expected_lines : 0;
        res->truth_complete = S->truth;
        res->sink_mixed = S->stat_mixed;
        res->sink_invariant = S->stat_invariant;
        res->touched_after_exit = S->stat_touched;
        res->sink_refused = S->stat_refused;
    }
    for (int i = 0; i < S->nsessions; i++)
        sim_session_free(&S->sessions[i]);
    for (int i = 0; i < S->nsinks; i++)
        sim_sink_free(&S->sinks[i]);
    for (int c = 0; c < SIM_MAX_CPUS; c++)
        if (S->trbes[c]) sim_sink_free(S->trbes[c]);
    sim_real_free(S);
    sim_machine_free(S);
    sim_kmod_free(S);
    for (int i = 0; i < S->nimages; i++)
        sim_image_free(&S->images[i]);
    for (size_t i = 0; i < S->buffers.n; i++)
        free(S->buffers.v[i]);
    ek_vec_free(&S->buffers);
    free(S);
    return err;
}

int ek_sim_run(const ek_sim_opts *opts, ek_sim_result *res)
{
    if (res) memset(res, 0, sizeof *res);
    sim_io_reset();
    int rc = run(opts, res);
    const char *path;
    int err;
    if (res && sim_io_first(&path, &err)) {
        res->io_errno = err;
        snprintf(res->io_file, sizeof res->io_file, "%s", path);
    }
    sim_io_reset();
    return rc;
}
