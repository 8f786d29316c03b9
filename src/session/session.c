/* ek_session: open a recording, build its sideband timeline, decode its queues, output in
 * perf's order. */
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

static char *keep(ek_session *s, const char *str)
{
    char *c = strdup(str ? str : "");
    if (!c)
        return NULL;
    if (ek_vec_push(&s->strings, c)) {
        free(c);
        return NULL;
    }
    return c;
}

/* A group's example event: the one earliest in the file (decoder threads report in any order;
 * the report must not depend on which came first). */
static void group_example(diag_group *g, const ek_diag_event *ev)
{
    free(g->first);
    free(g->msg);
    free(g->file);
    ek_sbuf line = EK_SBUF_INIT;
    ek_diag_format(&line, ev);
    g->first = line.p ? strdup(line.p) : NULL;
    ek_sbuf_free(&line);
    g->msg = ev->msg ? strdup(ev->msg) : NULL;
    g->file = ev->file ? strdup(ev->file) : NULL;
    g->record = ev->record;
    g->trace_id = ev->trace_id;
    g->example_offset = ev->offset;
}

static int earlier(const ek_diag_event *ev, const diag_group *g)
{
    if (ev->offset < 0) return 0;
    if (g->example_offset < 0 || ev->offset != g->example_offset)
        return g->example_offset < 0 || ev->offset < g->example_offset;
    return ev->trace_id < g->trace_id;
}

/* Every diagnostic: grouped by kind for the report, forwarded to the caller's sink, one at a
 * time whatever thread reports it. */
static void diag_fn(void *ctx, const ek_diag_event *ev)
{
    ek_session *s = ctx;
    pthread_mutex_lock(&s->diag_lock);
    const char *kind = ev->kind ? ev->kind : "?";
    diag_group *g = NULL;
    for (size_t i = 0; i < s->dgroups.n; i++)
        if (!strcmp(s->dgroups.v[i].kind, kind)) {
            g = &s->dgroups.v[i];
            break;
        }
    if (!g) {
        diag_group n;
        memset(&n, 0, sizeof n);
        n.kind = strdup(kind);
        n.sev = ev->sev;
        group_example(&n, ev);
        if (n.kind && !ek_vec_push(&s->dgroups, n))
            g = &s->dgroups.v[s->dgroups.n - 1];
        else {
            free(n.kind);
            free(n.first);
            free(n.msg);
            free(n.file);
        }
    } else if (earlier(ev, g)) {
        group_example(g, ev);
    }
    if (g) {
        g->count++;
        /* the lowest offsets, in order */
        if (ev->offset >= 0 && (g->noffsets < 8 || ev->offset < g->offsets[7])) {
            unsigned k = g->noffsets < 8 ? g->noffsets++ : 7;
            while (k > 0 && g->offsets[k - 1] > ev->offset) {
                g->offsets[k] = g->offsets[k - 1];
                k--;
            }
            g->offsets[k] = ev->offset;
        }
    }
    /* the caller's sink runs under the lock too: decoder threads report concurrently, and a
     * sink (the CLI's collector) need not be thread-safe */
    if (s->user_diag.fn)
        s->user_diag.fn(s->user_diag.ctx, ev);
    pthread_mutex_unlock(&s->diag_lock);
}

/* ---- per-CPU threads from ITRACE_START and switch records -------------------------------------- */

static cpu_timeline *cpu_tl(ek_session *s, int32_t cpu)
{
    for (size_t i = 0; i < s->cpus.n; i++)
        if (s->cpus.v[i].cpu == cpu)
            return &s->cpus.v[i];
    cpu_timeline t;
    memset(&t, 0, sizeof t);
    t.cpu = cpu;
    if (ek_vec_push(&s->cpus, t))
        return NULL;
    return &s->cpus.v[s->cpus.n - 1];
}

static void cpu_add(ek_session *s, int32_t cpu, uint64_t key, int32_t pid, int32_t tid)
{
    cpu_timeline *t = cpu_tl(s, cpu);
    if (!t)
        return;
    cpu_thread e = {key, pid, tid};
    ek_vec_push(&t->v, e);
}

static int ct_cmp(const void *a, const void *b)
{
    const cpu_thread *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

int session_cpu_thread(const ek_session *s, int32_t cpu, uint64_t key, int32_t *pid, int32_t *tid)
{
    for (size_t i = 0; i < s->cpus.n; i++) {
        const cpu_timeline *t = &s->cpus.v[i];
        if (t->cpu != cpu || !t->v.n)
            continue;
        /* the last entry at or before key; else the first one */
        size_t lo = 0, hi = t->v.n;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (t->v.v[mid].key <= key)
                lo = mid + 1;
            else
                hi = mid;
        }
        const cpu_thread *e = &t->v.v[lo ? lo - 1 : 0];
        *pid = e->pid;
        *tid = e->tid;
        return 1;
    }
    return 0;
}

/* ---- sideband ---------------------------------------------------------------------------------- */

static int sideband(ek_session *s)
{
    ek_perf_iter *it = NULL;
    int rc = ek_perf_iter_new(s->pf, EK_PERF_ITER_SIDEBAND, NULL, &it);
    if (rc)
        return rc;
    size_t naux = 0;
    const ek_perf_aux_rec *aux = ek_perf_aux_records(s->pf, &naux);
    if (ek_vec_reserve(&s->aux_keys, naux ? naux : 1)) {
        ek_perf_iter_free(it);
        return EK_ERR_NOMEM;
    }
    size_t aux_i = 0;
    uint64_t key = 0;
    ek_perf_record r;
    while ((rc = ek_perf_iter_next(it, &r)) == 0) {
        if (r.sid.present & EK_PERF_SAMPLE_TIME) {
            key = r.sid.time;
            s->has_time = 1;
        }
        as_event ev;
        memset(&ev, 0, sizeof ev);
        ev.key = key;
        ev.record = r.index;
        ev.offset = r.offset;
        int cpu_ok = (r.sid.present & EK_PERF_SAMPLE_CPU) != 0;
        switch (r.type) {
        case EK_PERF_RECORD_MMAP:
        case EK_PERF_RECORD_MMAP2: {
            unsigned cpumode = r.misc & EK_PERF_MISC_CPUMODE_MASK;
            int kernel = cpumode == EK_PERF_MISC_KERNEL || cpumode == EK_PERF_MISC_GUEST_KERNEL ||
                         (int32_t)r.u.mmap.pid == -1;
            const char *fn = keep(s, r.u.mmap.filename);
            if (!fn)
                break;
            ev.type = AS_EV_MMAP;
            ev.pid = (int32_t)r.u.mmap.pid;
            ev.tid = (int32_t)r.u.mmap.tid;
            ev.start = r.u.mmap.addr;
            ev.len = r.u.mmap.len;
            ev.pgoff = r.u.mmap.pgoff;
            ev.kernel = kernel;
            ev.filename = fn;
            if (r.type == EK_PERF_RECORD_MMAP2) {
                ev.prot = r.u.mmap.prot;
                ev.exec = (r.u.mmap.prot & 4) != 0;
            } else {
                ev.prot = 5;
                ev.exec = !(r.misc & EK_PERF_MISC_MMAP_DATA);
            }
            ev.dso = dso_get(s->reg, fn, kernel);
            if (r.type == EK_PERF_RECORD_MMAP2 && r.u.mmap.has_build_id && ev.dso)
                dso_set_build_id(s->reg, fn, kernel, r.u.mmap.build_id, r.u.mmap.build_id_size);
            as_add(s->as, &ev);
            if (!kernel)
                jit_note_mmap(s, ev.pid, fn, r.index, r.offset);
            break;
        }
        case EK_PERF_RECORD_COMM:
            ev.type = AS_EV_COMM;
            ev.pid = (int32_t)r.u.comm.pid;
            ev.tid = (int32_t)r.u.comm.tid;
            ev.comm = keep(s, r.u.comm.comm);
            ev.comm_exec = (r.misc & EK_PERF_MISC_COMM_EXEC) != 0;
            if (ev.comm)
                as_add(s->as, &ev);
            break;
        case EK_PERF_RECORD_FORK:
        case EK_PERF_RECORD_EXIT:
            ev.type = r.type == EK_PERF_RECORD_FORK ? AS_EV_FORK : AS_EV_EXIT;
            ev.pid = (int32_t)r.u.fork.pid;
            ev.tid = (int32_t)r.u.fork.tid;
            ev.ppid = (int32_t)r.u.fork.ppid;
            ev.ptid = (int32_t)r.u.fork.ptid;
            as_add(s->as, &ev);
            break;
        case EK_PERF_RECORD_ITRACE_START:
            ev.type = AS_EV_THREAD;
            ev.pid = (int32_t)r.u.itrace_start.pid;
            ev.tid = (int32_t)r.u.itrace_start.tid;
            as_add(s->as, &ev);
            if (cpu_ok)
                cpu_add(s, (int32_t)r.sid.cpu, key, ev.pid, ev.tid);
            break;
        case EK_PERF_RECORD_SWITCH:
            /* switch in: the trailer's thread now runs on the trailer's CPU */
            if (!(r.misc & EK_PERF_MISC_SWITCH_OUT) && cpu_ok &&
                (r.sid.present & EK_PERF_SAMPLE_TID))
                cpu_add(s, (int32_t)r.sid.cpu, key, (int32_t)r.sid.pid, (int32_t)r.sid.tid);
            break;
        case EK_PERF_RECORD_SWITCH_CPU_WIDE:
            if (cpu_ok) {
                if (r.misc & EK_PERF_MISC_SWITCH_OUT)
                    cpu_add(s, (int32_t)r.sid.cpu, key, (int32_t)r.u.sw.next_prev_pid,
                            (int32_t)r.u.sw.next_prev_tid);
                else if (r.sid.present & EK_PERF_SAMPLE_TID)
                    cpu_add(s, (int32_t)r.sid.cpu, key, (int32_t)r.sid.pid, (int32_t)r.sid.tid);
            }
            ev.type = AS_EV_THREAD;
            ev.pid = (int32_t)r.u.sw.next_prev_pid;
            ev.tid = (int32_t)r.u.sw.next_prev_tid;
            as_add(s->as, &ev);
            break;
        case EK_PERF_RECORD_AUX:
            /* AUX records come in the same order as ek_perf_aux_records() */
            if (aux_i < naux && aux[aux_i].record == r.index) {
                s->aux_keys.v[aux_i++] = key;
                s->aux_keys.n = aux_i;
            } else {
                for (size_t k = 0; k < naux; k++)
                    if (aux[k].record == r.index) {
                        s->aux_keys.v[k] = key;
                        if (k + 1 > s->aux_keys.n)
                            s->aux_keys.n = k + 1;
                        aux_i = k + 1;
                        break;
                    }
            }
            break;
        case EK_PERF_RECORD_LOST:
            s->lost_records++;
            s->lost_events += r.u.lost.lost;
            break;
        default:
            break;
        }
    }
    ek_perf_iter_free(it);
    for (size_t i = 0; i < s->cpus.n; i++)
        if (s->cpus.v[i].v.n > 1)
            qsort(s->cpus.v[i].v.v, s->cpus.v[i].v.n, sizeof(cpu_thread), ct_cmp);
    return rc == EK_ERR_EOS ? 0 : rc;
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
    s->diag.fn = diag_fn;
    s->diag.ctx = s;

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
    rc = ek_perf_queues_new(s->pf, &s->diag, &s->pq);
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
    if ((rc = sideband(s)) || (rc = jit_load_all(s)) || (rc = as_build(s->as))) {
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
    *out = s;
    return 0;
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

void ek_session_free(ek_session *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nqres; i++)
        qresult_free(&s->qres[i]);
    free(s->qres);
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

/* ---- running ----------------------------------------------------------------------------------- */

static void collect_stats(ek_session *s)
{
    size_t nq = ek_perf_queues_count(s->pq);
    memset(&s->st, 0, sizeof s->st);
    s->st.queues = nq;
    size_t nsl = 0;
    const ek_perf_slice *sl = ek_perf_queues_slices(s->pq, &nsl);
    s->st.slices = nsl;
    for (size_t i = 0; i < nsl; i++)
        if (sl[i].problems & EK_SLICE_NO_DATA)
            s->st.slices_no_data++;
    for (size_t i = 0; i < s->nqres; i++) {
        const qresult *r = &s->qres[i];
        s->st.trace_bytes += r->trace_bytes;
        s->st.trace_bytes_decoded += r->decoded_bytes;
        s->st.packets += r->packets;
        s->st.elements += r->elements;
        s->st.instructions += r->instructions;
        s->st.samples_branches += r->branches;
        s->st.samples_instructions += r->instrs_samples;
        s->st.nacc += r->nacc;
        s->st.decode_errors += r->errors;
    }
}

/* perf's queue number of a queue: the mmap index (idx) of its AUXTRACE buffers. */
static uint32_t queue_idx(const ek_session *s, size_t qi, uint32_t *tid, int *has_tid)
{
    const ek_perf_queue *q = ek_perf_queue_at(s->pq, qi);
    size_t nb = 0;
    const ek_perf_auxtrace_rec *b = ek_perf_auxtrace_records(s->pf, &nb);
    *has_tid = 0;
    for (size_t k = 0; k < q->nslices; k++) {
        int64_t bi = q->slices[k].buffer;
        if (bi >= 0 && (size_t)bi < nb) {
            *tid = b[bi].tid;
            *has_tid = 1;
            return b[bi].idx;
        }
    }
    return q->per_thread ? q->tid : (uint32_t)q->cpu;
}

typedef struct qorder {
    size_t qi;
    uint32_t idx;
    uint64_t exit_key; /* timeless: perf decodes a thread's queue at its EXIT */
    int hidden;        /* its samples are not output (a CPU filter without its CPU) */
} qorder;

static int qorder_cmp(const void *a, const void *b)
{
    const qorder *x = a, *y = b;
    if (x->exit_key != y->exit_key)
        return x->exit_key < y->exit_key ? -1 : 1;
    if (x->idx != y->idx)
        return x->idx < y->idx ? -1 : 1;
    return x->qi < y->qi ? -1 : x->qi > y->qi;
}

/* perf leaves the AUX buffers of CPUs a CPU filter does not list out of its queues
 * (auxtrace.c, filter_cpu): their samples are not output, and the other queues interleave
 * among themselves. They are decoded all the same, for the account of the trace. */
static int queue_hidden(const ek_session *s, size_t qi)
{
    const ek_sample_filter *f = s->o.filter;
    const ek_perf_queue *q = ek_perf_queue_at(s->pq, qi);
    if (!f || !f->ncpus || q->per_thread || q->cpu < 0) return 0;
    ek_sample smp;
    memset(&smp, 0, sizeof smp);
    smp.cpu = q->cpu;
    ek_sample_filter only_cpus = {.cpus = f->cpus, .ncpus = f->ncpus};
    return !ek_sample_filter_match(&only_cpus, &smp, NULL);
}

/* The order perf outputs queues in (timeless: at the EXIT of the queue's thread, then the rest;
 * with time stamps the heap interleaves them, and this order breaks ties at the end). */
static qorder *queue_order(ek_session *s, size_t nq)
{
    qorder *o = calloc(nq ? nq : 1, sizeof *o);
    if (!o)
        return NULL;
    for (size_t i = 0; i < nq; i++) {
        uint32_t tid = 0;
        int has_tid = 0;
        o[i].qi = i;
        o[i].idx = queue_idx(s, i, &tid, &has_tid);
        o[i].exit_key = UINT64_MAX;
        o[i].hidden = queue_hidden(s, i);
        if (s->timeless && has_tid && (int32_t)tid > 0) {
            const as_thread *t = as_thread_get(s->as, (int32_t)tid);
            if (t && t->t_exit != AS_TIME_MAX)
                o[i].exit_key = t->t_exit;
        }
    }
    if (nq > 1)
        qsort(o, nq, sizeof *o, qorder_cmp);
    return o;
}

/* perf's auxtrace heap: a binary min-heap on the ordinal (ties resolve as perf's do). */
typedef struct hitem {
    size_t q;
    uint64_t key;
} hitem;

static void heap_sift_up(hitem *a, size_t pos, hitem x)
{
    while (pos) {
        size_t parent = (pos - 1) >> 1;
        if (a[parent].key <= x.key)
            break;
        a[pos] = a[parent];
        pos = parent;
    }
    a[pos] = x;
}

static void heap_pop(hitem *a, size_t *n)
{
    size_t cnt = *n, pos = 0;
    if (!cnt)
        return;
    (*n)--;
    for (;;) {
        size_t l = (pos << 1) + 1;
        if (l >= cnt)
            break;
        size_t r = l + 1;
        if (r >= cnt) {
            a[pos] = a[l];
            return;
        }
        if (a[l].key < a[r].key) {
            a[pos] = a[l];
            pos = l;
        } else {
            a[pos] = a[r];
            pos = r;
        }
    }
    heap_sift_up(a, pos, a[cnt - 1]);
}

typedef struct writer {
    int (*put)(void *ctx, const char *data, size_t len);
    void *ctx;
    int rc;
    const qidle *idle; /* progress, while the writer waits (NULL: none) */
} writer;

typedef struct run {
    ek_session *s;
    const qfmt *fmt;
    qout *outs;
    qorder *order;
    size_t nq;
    size_t next;
    pthread_mutex_t mu;
    int rc;
} run;

static void *worker(void *arg)
{
    run *r = arg;
    for (;;) {
        pthread_mutex_lock(&r->mu);
        size_t k = r->next++;
        pthread_mutex_unlock(&r->mu);
        if (k >= r->nq)
            break;
        size_t qi = r->order[k].qi;
        static const qfmt none = {NULL, NULL, 0};
        int rc = qdecode_run(r->s, qi, r->order[k].hidden ? &none : r->fmt, &r->outs[qi],
                             &r->s->qres[qi]);
        if (rc) {
            pthread_mutex_lock(&r->mu);
            if (!r->rc)
                r->rc = rc;
            pthread_mutex_unlock(&r->mu);
        }
    }
    return NULL;
}

/* Write queue o's output from position *si (a segment of its first chunk) up to the next epoch
 * head -- a head at the start itself is written when at_head. Returns 1 with that head's key
 * in *key, or 0 at the queue's end. */
static int write_until_head(qout *o, size_t *si, writer *w, int at_head, uint64_t *key)
{
    int first = 1;
    for (;;) {
        qchunk *c = qout_peek(o, w->idle);
        if (!c)
            return 0;
        while (*si < c->nsegs) {
            const qseg *g = &c->segs[*si];
            if (g->head && !(first && at_head)) {
                *key = g->key;
                return 1;
            }
            first = 0;
            size_t end = *si + 1 < c->nsegs ? c->segs[*si + 1].off : c->len;
            if (end > g->off && !w->rc)
                w->rc = w->put(w->ctx, c->data + g->off, end - g->off);
            (*si)++;
        }
        int last = c->last;
        qout_pop(o);
        *si = 0;
        if (last)
            return 0;
    }
}

/* Tell the caller how far decoding got, when that changed (the writer's thread only). */
static void progress_tell(void *ctx)
{
    ek_session *s = ctx;
    uint64_t done = atomic_load_explicit(&s->progress_done, memory_order_relaxed);
    if (done > s->progress_total) done = s->progress_total;
    if (done != s->progress_told) {
        s->progress_told = done;
        s->o.progress(s->o.progress_ctx, done, s->progress_total);
    }
}

static int run_all(ek_session *s, const qfmt *fmt, writer *w)
{
    if (s->ran)
        return EK_ERR_ARG;
    s->ran = 1;
    size_t nq = ek_perf_queues_count(s->pq);
    s->qres = calloc(nq ? nq : 1, sizeof *s->qres);
    qout *outs = calloc(nq ? nq : 1, sizeof *outs);
    qorder *order = queue_order(s, nq);
    if (!s->qres || !outs || !order) {
        free(outs);
        free(order);
        return EK_ERR_NOMEM;
    }
    s->nqres = nq;
    for (size_t i = 0; i < nq; i++)
        qout_init(&outs[i], QOUT_LIMIT);
    /* progress: the bytes every queue's decoder will take (load_block), reported by the
     * decoders as each slice is done */
    qidle idle = {progress_tell, s};
    if (s->o.progress) {
        for (size_t i = 0; i < nq; i++) {
            const ek_perf_queue *q = ek_perf_queue_at(s->pq, i);
            for (size_t k = 0; k < q->nslices; k++) {
                size_t len = 0;
                ek_perf_slice_data(s->pf, &q->slices[k], &len);
                s->progress_total += len;
            }
        }
        s->o.progress(s->o.progress_ctx, 0, s->progress_total);
        w->idle = &idle;
    }
    run r;
    memset(&r, 0, sizeof r);
    r.s = s;
    r.fmt = fmt;
    r.outs = outs;
    r.order = order;
    r.nq = nq;
    pthread_mutex_init(&r.mu, NULL);
    unsigned nt = s->o.threads;
    if (!nt) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        nt = c > 0 ? (unsigned)c : 1;
    }
    if (nt > nq || !s->timeless)
        nt = (unsigned)nq; /* with time stamps the writer needs every queue's next epoch */
    pthread_t *th = calloc(nt ? nt : 1, sizeof *th);
    unsigned started = 0;
    for (unsigned i = 0; th && i < nt; i++)
        if (!pthread_create(&th[i], NULL, worker, &r))
            started++;
        else
            break;
    if (!started && nq)
        worker(&r); /* no threads: decode here, then write */

    size_t *pos = calloc(nq ? nq : 1, sizeof *pos);
    if (!pos) {
        w->rc = EK_ERR_NOMEM;
    } else if (s->timeless) {
        /* queue after queue */
        uint64_t key;
        for (size_t k = 0; k < nq; k++) {
            size_t qi = order[k].qi;
            while (write_until_head(&outs[qi], &pos[qi], w, 1, &key))
                ;
        }
    } else {
        /* perf's heap over the queues' epochs; the tails (key UINT64_MAX: the final
         * last-branch flush) after it, queue by queue */
        hitem *heap = calloc(nq ? nq : 1, sizeof *heap);
        qorder *byidx = malloc((nq ? nq : 1) * sizeof *byidx);
        size_t hn = 0;
        uint64_t key;
        if (!heap || !byidx) {
            w->rc = EK_ERR_NOMEM;
        } else {
            memcpy(byidx, order, nq * sizeof *byidx);
            for (size_t k = 0; k < nq; k++)
                byidx[k].exit_key = 0;
            if (nq > 1)
                qsort(byidx, nq, sizeof *byidx, qorder_cmp);
            /* perf fills the heap in queue-number order */
            for (size_t k = 0; k < nq; k++) {
                size_t qi = byidx[k].qi;
                if (write_until_head(&outs[qi], &pos[qi], w, 0, &key) && key != UINT64_MAX) {
                    hitem x = {qi, key};
                    heap_sift_up(heap, hn++, x);
                }
            }
            while (hn) {
                hitem top = heap[0];
                heap_pop(heap, &hn);
                if (write_until_head(&outs[top.q], &pos[top.q], w, 1, &key) && key != UINT64_MAX) {
                    hitem x = {top.q, key};
                    heap_sift_up(heap, hn++, x);
                }
            }
            for (size_t k = 0; k < nq; k++) {
                size_t qi = byidx[k].qi;
                while (write_until_head(&outs[qi], &pos[qi], w, 1, &key))
                    ;
            }
        }
        free(heap);
        free(byidx);
    }
    free(pos);
    /* drain whatever is left (after a write error) so that decoders can finish */
    for (size_t i = 0; i < nq; i++)
        while (qout_peek(&outs[i], NULL))
            qout_pop(&outs[i]);
    for (unsigned i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    free(th);
    for (size_t i = 0; i < nq; i++)
        qout_free(&outs[i]);
    free(outs);
    free(order);
    pthread_mutex_destroy(&r.mu);
    if (s->o.progress) {
        /* the end: every decoder has finished (done < total only after an error) */
        progress_tell(s);
        s->o.progress(s->o.progress_ctx, s->progress_told, s->progress_total);
    }
    w->idle = NULL;
    collect_stats(s);
    return r.rc ? r.rc : w->rc;
}

/* ---- the two outputs -------------------------------------------------------------------------- */

typedef struct text_fmt {
    const ek_script_fields *f;
    int evw;
} text_fmt;

static void text_emit(void *ctx, ek_sbuf *out, const ek_sample *smp, const ek_script_resolver *r,
                      uint64_t t_lo, uint64_t t_hi)
{
    text_fmt *t = ctx;
    (void)t_lo;
    (void)t_hi;
    ek_script_format(out, t->f, smp, r, t->evw);
}

typedef struct text_put {
    ek_write_fn write;
    void *ctx;
} text_put;

static int put_text(void *ctx, const char *data, size_t len)
{
    text_put *p = ctx;
    return p->write(p->ctx, data, len) ? EK_ERR_IO : 0;
}

/* perf names its synthesised events after the hardware events they pose as, with the recorded
 * event's exclude_* modifiers (evsel__add_modifiers): "branches:u". */
static void event_names(const ek_session *s, char names[2][32])
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
    snprintf(names[0], 32, "branches%s%s", n ? ":" : "", mods);
    snprintf(names[1], 32, "instructions%s%s", n ? ":" : "", mods);
}

int ek_session_script(ek_session *s, const ek_script_fields *f0, ek_write_fn write, void *ctx)
{
    char names[2][32];
    ek_script_fields fl = *f0;
    const ek_script_fields *f = &fl;
    event_names(s, names);
    /* perf drops the fields the synthesised events' sample_type lacks from its defaults
     * (builtin-script.c evsel__do_check_stype) unless -F names them; the cs_etm event's
     * PERF_SAMPLE_CPU (absent with perf record --per-thread) decides the cpu field */
    if (s->cs->attr && !(s->cs->attr->sample_type & EK_PERF_SAMPLE_CPU) &&
        !(fl.named & EK_SF_F_CPU))
        fl.fields &= ~(uint32_t)EK_SF_F_CPU;
    if (!fl.names[0])
        fl.names[0] = names[0];
    if (!fl.names[1])
        fl.names[1] = names[1];
    /* perf's event-name column is as wide as the longest name among the session's events */
    int evw = (int)strlen(s->o.itrace.instructions ? names[1] : names[0]);
    text_fmt t = {f, evw};
    s->no_insn = !(f->fields & (EK_SF_F_INSN | EK_SF_F_INSNLEN));
    const uint32_t varying = EK_SF_F_TIME | EK_SF_F_PERIOD | EK_SF_F_COMM | EK_SF_F_BRSTACK |
                             EK_SF_F_BRSTACKSYM | EK_SF_F_INSN | EK_SF_F_INSNLEN |
                             EK_SF_F_MISC | EK_SF_F_IPC;
    qfmt fmt = {text_emit, &t, !(f->fields & varying)};
    text_put p = {write, ctx};
    writer w = {put_text, &p, 0, NULL};
    return run_all(s, &fmt, &w);
}

/* Samples travel from the decoder threads as records: the sample, its slice window, then its
 * branch stack. */
typedef struct srec {
    ek_sample smp;
    uint64_t t_lo, t_hi;
    int has_t;
    uint64_t t;
} srec;

static void rec_emit(void *ctx, ek_sbuf *out, const ek_sample *smp, const ek_script_resolver *r,
                     uint64_t t_lo, uint64_t t_hi)
{
    (void)ctx;
    (void)r;
    srec h;
    memset(&h, 0, sizeof h);
    h.smp = *smp;
    h.smp.branches = NULL;
    h.t_lo = t_lo;
    h.t_hi = t_hi;
    if (r && r->ctx) {
        const rctx *c = r->ctx;
        h.has_t = c->has_t;
        h.t = c->t;
    }
    ek_sbuf_put(out, (const char *)&h, sizeof h);
    if (smp->nbranches)
        ek_sbuf_put(out, (const char *)smp->branches, smp->nbranches * sizeof(ek_branch));
}

typedef struct rec_put {
    ek_session *s;
    ek_sample_fn fn;
    void *ctx;
} rec_put;

static int put_recs(void *ctx, const char *data, size_t len)
{
    rec_put *p = ctx;
    size_t off = 0;
    while (off + sizeof(srec) <= len) {
        srec h;
        memcpy(&h, data + off, sizeof h);
        off += sizeof h;
        size_t nb = h.smp.nbranches * sizeof(ek_branch);
        if (off + nb > len)
            return EK_ERR_FORMAT;
        ek_branch *br = NULL;
        if (nb) {
            br = malloc(nb);
            if (!br)
                return EK_ERR_NOMEM;
            memcpy(br, data + off, nb);
        }
        off += nb;
        h.smp.branches = br;
        rctx c = {p->s, h.t_lo, h.t_hi, NULL, h.has_t, h.t, 0, 0, UINT64_MAX};
        ek_script_resolver r = qdecode_resolver(&c);
        int rc = p->fn(p->ctx, &h.smp, &r);
        free(br);
        if (rc)
            return rc;
    }
    return 0;
}

int ek_session_samples(ek_session *s, ek_sample_fn fn, void *ctx)
{
    qfmt fmt = {rec_emit, NULL, 0};
    rec_put p = {s, fn, ctx};
    writer w = {put_recs, &p, 0, NULL};
    return run_all(s, &fmt, &w);
}
