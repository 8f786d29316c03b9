/* ek_session: open a recording (its sideband timeline: sideband.c; diagnostics: sdiag.c) and
 * what it tells about itself. Running it: run.c. */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "etmkit/etmkit.h"
#include "session/session_int.h"

void ek_session_opts_init(ek_session_opts *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    ek_itrace_default(&o->itrace);
}

/* ---- open -------------------------------------------------------------------------------------- */

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A CPU filter needs CPUs in the samples and CPUs the recording has (perf refuses both). */
static int check_filter(ek_session *s)
{
    const ek_sample_filter *f = s->o.filter;
    if (!f || !f->ncpus || !s->cs->attr) return 0;
    if (!(s->cs->attr->sample_type & EK_PERF_SAMPLE_CPU)) {
        ek_diag_emit(&s->diag, EK_SEV_ERROR, "session.filter", EK_ERR_ARG, s->data_path, -1, -1, -1,
                     "the samples of this recording carry no CPU (perf record --per-thread): "
                     "a CPU filter cannot apply");
        return EK_ERR_ARG;
    }
    const ek_perf_features *ft = ek_perf_features_get(s->pf);
    int32_t last = f->cpus[f->ncpus - 1];
    if (ft && ft->have_nrcpus && (uint32_t)last >= ft->nr_cpus_avail) {
        ek_diag_emit(&s->diag, EK_SEV_ERROR, "session.filter", EK_ERR_ARG, s->data_path, -1, -1, -1,
                     "CPU %d is not in the recording (CPUs 0-%u)", (int)last,
                     ft->nr_cpus_avail ? ft->nr_cpus_avail - 1 : 0);
        return EK_ERR_ARG;
    }
    return 0;
}

static void event_names(ek_session *s);

int ek_session_open(const char *path, const ek_session_opts *o, const ek_diag *diag,
                    ek_session **out)
{
    *out = NULL;
    if (!path || !o || o->size < EK_SESSION_OPTS_SIZE_V1) return EK_ERR_ARG;
    ek_session *s = calloc(1, sizeof *s);
    if (!s)
        return EK_ERR_NOMEM;
    /* an older caller's smaller struct: the fields it does not have stay zero */
    memcpy(&s->o, o, o->size < sizeof *o ? o->size : sizeof *o);
    s->o.size = sizeof s->o;
    if (!s->o.itrace.set)
        ek_itrace_default(&s->o.itrace);
    s->path = strdup(path);
    if (diag)
        s->user_diag = *diag;
    pthread_mutex_init(&s->diag_lock, NULL);
    if (!s->path) {
        ek_session_free(s);
        return EK_ERR_NOMEM;
    }
    s->diag.fn = session_diag_fn;
    s->diag.ctx = s;

    /* a trace snapshot folder */
    if (s->o.snapshot || (is_dir(path) && snap_is_dir(path))) {
        int rc = snap_open(s);
        if (rc) {
            ek_session_free(s);
            return rc;
        }
        s->timeless = 1;
        snprintf(s->event_names[0], 32, "branches");
        snprintf(s->event_names[1], 32, "instructions");
        *out = s;
        return 0;
    }
    if (s->o.nimages) {
        ek_diag_emit(&s->diag, EK_SEV_ERROR, "session.image", EK_ERR_ARG, path, -1, -1, -1,
                     "--image gives code to trace snapshot folders; a perf recording's code comes "
                     "from the files its maps name (--symfs, the build-id cache)");
        ek_session_free(s);
        return EK_ERR_ARG;
    }

    /* a perf.data folder (perf record --kcore): data + kcore_dir */
    if (is_dir(path)) {
        if (asprintf(&s->data_path, "%s/data", path) < 0)
            s->data_path = NULL;
        char *kd = NULL;
        if (asprintf(&kd, "%s/kcore_dir", path) >= 0 && is_dir(kd))
            s->kcore_dir = kd;
        else
            free(kd);
    } else {
        s->data_path = strdup(path);
    }
    if (!s->data_path) {
        ek_session_free(s);
        return EK_ERR_NOMEM;
    }
    if (s->o.kcore_dir) {
        free(s->kcore_dir);
        s->kcore_dir = strdup(s->o.kcore_dir);
    }
    int rc = ek_perf_open(s->data_path, &s->diag, &s->pf);
    if (rc) {
        ek_session_free(s);
        return rc;
    }
    s->cs = ek_perf_cs_etm_get(s->pf);
    if ((rc = check_filter(s))) {
        ek_session_free(s);
        return rc;
    }
    ek_perf_queues_opts qo = {s->o.raw_cpu ? (int32_t)(s->o.raw_cpu - 1) : -1};
    rc = ek_perf_queues_new_opts(s->pf, &qo, &s->diag, &s->pq);
    if (rc) {
        ek_session_free(s);
        return rc;
    }
    s->as = as_new();
    const ek_perf_features *feat = ek_perf_features_get(s->pf);
    dso_opts dopt = {s->o.symfs, s->o.buildid_dir, s->o.vmlinux, s->o.kallsyms, s->kcore_dir,
                     feat ? feat->osrelease : NULL};
    s->reg = dso_reg_new(&dopt, &s->diag);
    if (!s->as || !s->reg) {
        ek_session_free(s);
        return EK_ERR_NOMEM;
    }
    /* build-ids listed in the header */
    const ek_perf_features *ft = ek_perf_features_get(s->pf);
    for (size_t i = 0; ft && i < ft->nbuild_ids; i++) {
        const ek_perf_build_id *b = &ft->build_ids[i];
        unsigned cm = b->misc & EK_PERF_MISC_CPUMODE_MASK;
        int kernel = cm == EK_PERF_MISC_KERNEL || cm == EK_PERF_MISC_GUEST_KERNEL;
        if (b->filename)
            dso_set_build_id(s->reg, b->filename, kernel, b->id, b->size ? b->size : 20);
    }
    if ((rc = session_sideband(s)) || (rc = jit_load_all(s)) || (rc = as_build(s->as))) {
        ek_session_free(s);
        return rc;
    }
    dso_reg_load_all(s->reg);
    /* modules: their branch relocations for the address they were loaded at */
    const as_proc *kp = as_proc_get(s->as, AS_KERNEL_PID);
    for (size_t i = 0; kp && i < kp->maps.n; i++) {
        as_dso *d = kp->maps.v[i].dso;
        if (d && d->kind == DSO_KMODULE && !d->reloc_copy)
            dso_relocate_module(d, kp->maps.v[i].start);
    }
    /* time: perf decodes without time stamps unless the cs_etm event asked for them */
    s->timeless = !s->cs->present || s->cs->timeless || s->o.itrace.timeless;
    s->tc = ek_perf_time_conv_get(s->pf);
    s->ts_convert = !s->timeless && s->cs->all_ts_virtual && s->tc;
    /* TS_SOURCE unknown (perf before 6.3): CoreSight time stamps usually come from the same
     * counter as perf time; each one is used only where it fits its slice's time window */
    s->ts_try = s->tc && !s->ts_convert && s->has_time;
    for (size_t i = 0; s->ts_try && i < s->cs->ncpus; i++)
        if (s->cs->cpus[i].ts_source == 0)
            s->ts_try = 0;
    event_names(s);
    *out = s;
    return 0;
}

/* perf names its synthesised events after the hardware events they pose as, with the recorded
 * event's exclude_* modifiers (evsel__add_modifiers): "branches:u". */
static void event_names(ek_session *s)
{
    char mods[8] = "";
    size_t n = 0;
    const ek_perf_attr *a = s->cs->attr;
    if (a) {
        uint64_t fl = a->flags;
        int xu = (fl >> 4) & 1, xk = (fl >> 5) & 1, xh = (fl >> 6) & 1;
        int xhost = (fl >> 19) & 1, xguest = (fl >> 20) & 1, def = 0;
        if (xk || xu || xh) {
            if (!xk)
                mods[n++] = 'k';
            if (!xu)
                mods[n++] = 'u';
            if (!xh)
                mods[n++] = 'h';
            def = 1;
        }
        if (xhost || xguest == def) {
            if (!xhost)
                mods[n++] = 'H';
            if (!xguest)
                mods[n++] = 'G';
        }
    }
    mods[n] = 0;
    snprintf(s->event_names[0], 32, "branches%s%s", n ? ":" : "", mods);
    snprintf(s->event_names[1], 32, "instructions%s%s", n ? ":" : "", mods);
}

void ek_session_get_info(const ek_session *s, ek_session_info *out)
{
    memset(out, 0, sizeof *out);
    out->event_names[0] = s->event_names[0];
    out->event_names[1] = s->event_names[1];
    out->samples_have_cpu =
        s->snap || !s->cs->attr || (s->cs->attr->sample_type & EK_PERF_SAMPLE_CPU);
    out->itrace = &s->o.itrace;
    out->filtered = s->o.filter != NULL;
}

int session_ts_time(const ek_session *s, uint64_t counter, uint64_t t_lo, uint64_t t_hi,
                    uint64_t *t)
{
    if (!s->tc || !(s->ts_convert || s->ts_try) || !counter)
        return 0;
    uint64_t v = ek_perf_counter_to_time(s->tc, counter);
    /* trace of a slice ran after the previous AUX record of its queue and before its own;
     * allow a millisecond of skew between the clocks */
    const uint64_t slack = 1000000;
    if (v > t_hi + slack || (t_lo > slack && v < t_lo - slack))
        return 0;
    *t = v;
    return 1;
}

const ek_perf_file *ek_session_file(const ek_session *s)
{
    return s ? s->pf : NULL;
}

void ek_session_free(ek_session *s)
{
    if (!s)
        return;
    snap_free(s->snap);
    for (size_t i = 0; i < s->nqres; i++)
        qresult_free(&s->qres[i]);
    free(s->qres);
    if (s->rel_pos) pthread_mutex_destroy(&s->rel_mu);
    free(s->rel_pos);
    for (size_t i = 0; i < s->cpus.n; i++)
        ek_vec_free(&s->cpus.v[i].v);
    jit_free_all(s);
    ek_vec_free(&s->cpus);
    ek_vec_free(&s->aux_keys);
    as_free(s->as);
    dso_reg_free(s->reg);
    if (s->pq)
        ek_perf_queues_free(s->pq);
    if (s->pf)
        ek_perf_free(s->pf);
    for (size_t i = 0; i < s->strings.n; i++)
        free(s->strings.v[i]);
    ek_vec_free(&s->strings);
    for (size_t i = 0; i < s->dgroups.n; i++) {
        free(s->dgroups.v[i].kind);
        free(s->dgroups.v[i].first);
        free(s->dgroups.v[i].msg);
        free(s->dgroups.v[i].file);
    }
    ek_vec_free(&s->dgroups);
    free(s->dg_slot);
    pthread_mutex_destroy(&s->diag_lock);
    free(s->path);
    free(s->data_path);
    free(s->kcore_dir);
    free(s);
}

void ek_session_get_stats(const ek_session *s, ek_session_stats *out)
{
    *out = s->st;
}

