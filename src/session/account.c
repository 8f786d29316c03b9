/* The session's account as data (etmkit/account.h): every byte of trace that did not become
 * samples, grouped by cause, with the facts a remedy needs. One group per cause, not a flood:
 * counts, an address range and a few offsets. The words are made in src/output
 * (account_text.c, account_json.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "etmkit/account.h"
#include "etmkit/etmkit.h"
#include "etmkit/snapshot.h"
#include "session/session_int.h"

/* The account's enums are the session's own, numbered alike. */
_Static_assert(EK_ACCT_DSO_JIT == (int)DSO_JIT && EK_ACCT_DSO_ANON == (int)DSO_ANON &&
                   EK_ACCT_DSO_KMODULE == (int)DSO_KMODULE,
               "ek_account_dso.kind is dso_kind");
_Static_assert(EK_ACCT_FILE_NONE == (int)DSO_NO_FILE && EK_ACCT_FILE_BAD == (int)DSO_BAD_FILE &&
                   EK_ACCT_FILE_BUILD_ID_MISMATCH == (int)DSO_BUILD_ID_MISMATCH,
               "ek_account_dso.status is dso_status");
_Static_assert(EK_ACCT_CODE_OUTSIDE == (int)MISS_OUTSIDE && EK_ACCT_CODE_KERNEL == (int)MISS_KERNEL &&
                   EK_ACCT_CODE_DSO == (int)MISS_DSO && EK_ACCT_CODE_NO_KMAP == (int)MISS_NO_KMAP,
               "ek_account_item.code is miss_kind");

/* ---- merging the queues' results --------------------------------------------------------------- */

typedef struct agg {
    EK_VEC(miss) misses;
    EK_VEC(gap) gaps;
} agg;

static int merge(ek_session *s, agg *a)
{
    for (size_t q = 0; q < s->nqres; q++) {
        const qresult *r = &s->qres[q];
        for (size_t i = 0; i < r->misses.n; i++) {
            const miss *m = &r->misses.v[i];
            miss *t = NULL;
            for (size_t k = 0; k < a->misses.n; k++)
                if (a->misses.v[k].kind == m->kind && a->misses.v[k].pid == m->pid &&
                    a->misses.v[k].dso == m->dso)
                    t = &a->misses.v[k];
            if (!t) {
                if (ek_vec_push(&a->misses, *m)) return EK_ERR_NOMEM;
                continue;
            }
            if (m->lo < t->lo)
                t->lo = m->lo;
            if (m->hi > t->hi)
                t->hi = m->hi;
            t->count += m->count;
            t->bytes += m->bytes;
            if (m->first_offset < t->first_offset)
                t->first_offset = m->first_offset;
        }
        for (size_t i = 0; i < r->gaps.n; i++) {
            const gap *g = &r->gaps.v[i];
            gap *t = NULL;
            for (size_t k = 0; k < a->gaps.n; k++)
                if (!strcmp(a->gaps.v[k].kind, g->kind))
                    t = &a->gaps.v[k];
            if (!t) {
                if (ek_vec_push(&a->gaps, *g)) return EK_ERR_NOMEM;
                continue;
            }
            t->bytes += g->bytes;
            t->count += g->count;
            if (g->first_offset < t->first_offset)
                t->first_offset = g->first_offset;
        }
    }
    return 0;
}

static void agg_free(agg *a)
{
    ek_vec_free(&a->misses);
    ek_vec_free(&a->gaps);
}

/* The biggest losses first. */
static int miss_cmp(const void *a, const void *b)
{
    const miss *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return x->count > y->count ? -1 : x->count < y->count;
}

/* Groups in file order of their examples (those without an offset last), then by id: the
 * order the decoder threads reported in does not matter. */
static int group_cmp(const void *a, const void *b)
{
    const diag_group *x = *(const diag_group *const *)a, *y = *(const diag_group *const *)b;
    uint64_t ox = (uint64_t)x->example_offset, oy = (uint64_t)y->example_offset; /* -1: last */
    if (ox != oy) return ox < oy ? -1 : 1;
    return strcmp(x->kind, y->kind);
}

/* Snapshot mode (perf record -S) writes the AUX buffer out only when a snapshot is taken: an
 * AUX record whose trace was overwritten in the buffer before the next snapshot has no data in
 * the file, by design. One is "overwritten" when a later AUX record of its queue has data. */
static int snapshot_overwritten(ek_session *s, const ek_perf_slice *sl,
                                const int64_t *last_with_data, size_t i)
{
    if (!s->cs->snapshot || !(sl[i].flags & EK_PERF_AUX_FLAG_OVERWRITE)) return 0;
    return last_with_data && sl[i].queue < ek_perf_queues_count(s->pq) &&
           last_with_data[sl[i].queue] > sl[i].aux_record;
}

/* ---- building it --------------------------------------------------------------------------------- */

/* The account and the arrays it points into (items point by index until the end). */
typedef struct acct_b {
    ek_account pub; /* first: ek_account_free takes it back */
    EK_VEC(ek_account_item) items;
    EK_VEC(ek_account_dso) dsos;
    EK_VEC(ek_account_jit) jits;
    EK_VEC(ek_account_diag) diags;
    EK_VEC(ek_account_aux) aux;
    /* per item: index + 1 into dsos, jits, diags (0: none) */
    EK_VEC(size_t) idx;
} acct_b;

static ek_account_item *item(acct_b *a, int kind, int problem, int remedy)
{
    ek_account_item it;
    memset(&it, 0, sizeof it);
    it.kind = kind;
    it.problem = problem;
    it.remedy = remedy;
    it.pid = -1;
    it.first_offset = -1;
    if (ek_vec_push(&a->items, it)) return NULL;
    size_t z[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++)
        if (ek_vec_push(&a->idx, z[k])) return NULL;
    return &a->items.v[a->items.n - 1];
}

static int add_dso(acct_b *a, const as_dso *d)
{
    ek_account_dso o;
    memset(&o, 0, sizeof o);
    o.name = d->name;
    o.tried = d->tried;
    o.kind = (int)d->kind;     /* dso_kind and EK_ACCT_DSO_* agree */
    o.status = (int)d->status; /* dso_status and EK_ACCT_FILE_* agree */
    memcpy(o.build_id, d->build_id, sizeof o.build_id);
    o.build_id_len = d->build_id_len;
    memcpy(o.found_id, d->found_id, sizeof o.found_id);
    o.found_id_len = d->found_id_len;
    o.relocs = d->relocs;
    o.relocs_unresolved = d->relocs_unresolved;
    if (ek_vec_push(&a->dsos, o)) return EK_ERR_NOMEM;
    a->idx.v[3 * (a->items.n - 1)] = a->dsos.n;
    return 0;
}

/* perf-PID.map: where a JIT's function names may be (symfs first, then /tmp as perf reads
 * it). The path goes into the session's strings. */
static const char *perf_map_at(ek_session *s, int32_t pid)
{
    char buf[4096];
    const char *symfs = s->o.symfs && *s->o.symfs && strcmp(s->o.symfs, "/") ? s->o.symfs : NULL;
    int found = 0;
    if (symfs) {
        snprintf(buf, sizeof buf, "%s/tmp/perf-%d.map", symfs, (int)pid);
        found = !access(buf, R_OK);
    }
    if (!found) {
        snprintf(buf, sizeof buf, "/tmp/perf-%d.map", (int)pid);
        found = !access(buf, R_OK);
    }
    if (!found) return NULL;
    char *p = strdup(buf);
    if (p && ek_vec_push(&s->strings, p)) {
        free(p);
        p = NULL;
    }
    return p;
}

static int add_jit(ek_session *s, acct_b *a, const miss *m)
{
    const jit_src *j = jit_of(s, m->pid);
    ek_account_jit o;
    memset(&o, 0, sizeof o);
    o.record = -1;
    if (j) {
        o.mapped = 1;
        o.read = j->dump != NULL;
        o.recorded = j->recorded;
        o.record = j->record;
        o.path = j->path;
        o.tried = j->tried;
        o.status = j->status;
        o.loads = j->loads;
        o.moves = j->moves;
    }
    o.perf_map = perf_map_at(s, m->pid);
    if (ek_vec_push(&a->jits, o)) return EK_ERR_NOMEM;
    a->idx.v[3 * (a->items.n - 1) + 1] = a->jits.n;
    return 0;
}

/* AUX records: without data, truncated, collisions, partial; LOST records. */
static int aux_items(ek_session *s, acct_b *a)
{
    size_t nsl = 0;
    const ek_perf_slice *sl = ek_perf_queues_slices(s->pq, &nsl);
    size_t nq = ek_perf_queues_count(s->pq);
    int64_t *last_with_data = calloc(nq ? nq : 1, sizeof *last_with_data);
    for (size_t q = 0; last_with_data && q < nq; q++)
        last_with_data[q] = -1;
    for (size_t i = 0; last_with_data && i < nsl; i++)
        if (!(sl[i].problems & EK_SLICE_NO_DATA) && sl[i].queue < nq &&
            sl[i].aux_record > last_with_data[sl[i].queue])
            last_with_data[sl[i].queue] = sl[i].aux_record;
    uint64_t nodata = 0, nodata_bytes = 0, clipped = 0, clipped_bytes = 0;
    uint64_t over = 0, over_bytes = 0;
    int rc = 0;
    for (size_t i = 0; i < nsl; i++) {
        if (sl[i].problems & EK_SLICE_NO_DATA) {
            ek_account_aux r;
            r.record = sl[i].aux_record;
            r.offset = sl[i].aux_record_offset;
            r.cpu = (sl[i].sid.present & EK_PERF_SAMPLE_CPU) ? (int32_t)sl[i].sid.cpu : -1;
            r.aux_offset = sl[i].aux_offset;
            r.aux_size = sl[i].aux_size;
            r.overwritten = snapshot_overwritten(s, sl, last_with_data, i);
            if (ek_vec_push(&a->aux, r)) rc = EK_ERR_NOMEM;
            if (r.overwritten) {
                over++;
                over_bytes += sl[i].aux_size;
            } else {
                nodata++;
                nodata_bytes += sl[i].aux_size;
            }
        } else if (sl[i].problems & EK_SLICE_CLIPPED) {
            clipped++;
            clipped_bytes += sl[i].aux_size - sl[i].data_size;
        }
    }
    free(last_with_data);
    ek_account_item *it;
    if (nodata) {
        if (!(it = item(a, EK_ACCT_AUX_NO_DATA, 1, EK_REMEDY_RECORD_AGAIN))) return EK_ERR_NOMEM;
        it->count = nodata;
        it->bytes = nodata_bytes;
    }
    if (over) {
        if (!(it = item(a, EK_ACCT_AUX_OVERWRITTEN, 0, EK_REMEDY_NONE))) return EK_ERR_NOMEM;
        it->count = over;
        it->bytes = over_bytes;
    }
    if (clipped) {
        if (!(it = item(a, EK_ACCT_AUX_CLIPPED, 1, EK_REMEDY_COPY_AGAIN))) return EK_ERR_NOMEM;
        it->count = clipped;
        it->bytes = clipped_bytes;
    }
    /* flags */
    size_t naux = 0;
    const ek_perf_aux_rec *aux = ek_perf_aux_records(s->pf, &naux);
    uint64_t trunc = 0, refused = 0, coll = 0, part = 0;
    int64_t first_trunc = -1, first_refused = -1, first_coll = -1;
    for (size_t i = 0; i < naux; i++) {
        if ((aux[i].flags & EK_PERF_AUX_FLAG_TRUNCATED) && !aux[i].aux_size) {
            /* the CoreSight driver's way of saying the event could not start tracing */
            if (!refused++) first_refused = (int64_t)aux[i].offset;
        } else if (aux[i].flags & EK_PERF_AUX_FLAG_TRUNCATED) {
            if (!trunc++) first_trunc = (int64_t)aux[i].offset;
        }
        if (aux[i].flags & EK_PERF_AUX_FLAG_COLLISION) {
            if (!coll++) first_coll = (int64_t)aux[i].offset;
        }
        if (aux[i].flags & EK_PERF_AUX_FLAG_PARTIAL) part++;
    }
    static const struct {
        int kind, remedy;
    } flagged[3] = {{EK_ACCT_AUX_TRUNCATED, EK_REMEDY_BIGGER_AUX},
                    {EK_ACCT_AUX_REFUSED, EK_REMEDY_ONE_SESSION},
                    {EK_ACCT_AUX_COLLISION, EK_REMEDY_UNSHARED_SINK}};
    const uint64_t counts[3] = {trunc, refused, coll};
    const int64_t firsts[3] = {first_trunc, first_refused, first_coll};
    for (int k = 0; k < 3; k++) {
        if (!counts[k]) continue;
        if (!(it = item(a, flagged[k].kind, 1, flagged[k].remedy))) return EK_ERR_NOMEM;
        it->count = counts[k];
        it->first_offset = firsts[k];
    }
    if (part) {
        if (!(it = item(a, EK_ACCT_AUX_PARTIAL, 0, EK_REMEDY_NONE))) return EK_ERR_NOMEM;
        it->count = part;
    }
    if (s->lost_records) {
        if (!(it = item(a, EK_ACCT_LOST, 1, EK_REMEDY_BIGGER_PERF_BUFFER))) return EK_ERR_NOMEM;
        it->count = s->lost_records;
        it->extra = s->lost_events;
    }
    return rc;
}

static int code_remedy(const miss *m)
{
    const as_dso *d = m->dso;
    switch (m->kind) {
    case MISS_NO_KMAP: return EK_REMEDY_KERNEL_IMAGE;
    case MISS_KERNEL:
    case MISS_DSO:
        if (!d) return EK_REMEDY_NONE;
        if (d->kind == DSO_KERNEL) return EK_REMEDY_KERNEL_IMAGE;
        if (d->status == DSO_NO_FILE) return EK_REMEDY_NO_FILE;
        return EK_REMEDY_SYMFS;
    default: return EK_REMEDY_NONE;
    }
}

static int jit_remedy(const jit_src *j)
{
    if (!j) return EK_REMEDY_JIT_WRITE;
    if (!j->dump) return EK_REMEDY_JIT_COPY;
    if (j->status == EK_ERR_UNSUPPORTED) return EK_REMEDY_JIT_CLOCK;
    return EK_REMEDY_NONE;
}

static int code_items(ek_session *s, acct_b *a, const agg *g)
{
    for (size_t i = 0; i < g->misses.n; i++) {
        const miss *m = &g->misses.v[i];
        int jit = m->kind == MISS_DSO && m->dso && m->dso->kind == DSO_ANON && m->pid >= 0;
        ek_account_item *it =
            item(a, EK_ACCT_CODE, 1, jit ? jit_remedy(jit_of(s, m->pid)) : code_remedy(m));
        if (!it) return EK_ERR_NOMEM;
        it->code = m->kind; /* miss_kind and ek_account_code agree */
        it->pid = m->pid;
        it->lo = m->lo;
        it->hi = m->hi;
        it->count = m->count;
        it->bytes = m->bytes;
        it->first_offset = (int64_t)m->first_offset;
        if (m->dso && add_dso(a, m->dso)) return EK_ERR_NOMEM;
        if (jit && add_jit(s, a, m)) return EK_ERR_NOMEM;
    }
    /* modules whose calls to the kernel could not be resolved */
    for (size_t i = 0; i < dso_reg_count(s->reg); i++) {
        const as_dso *d = dso_reg_at(s->reg, i);
        if (d->kind != DSO_KMODULE || !d->used || !d->relocs_unresolved)
            continue;
        ek_account_item *it = item(a, EK_ACCT_KMOD_RELOCS, 1, EK_REMEDY_KALLSYMS);
        if (!it || add_dso(a, d)) return EK_ERR_NOMEM;
        it->count = d->relocs_unresolved;
    }
    for (size_t i = 0; i < g->gaps.n; i++) {
        const gap *p = &g->gaps.v[i];
        ek_account_item *it = item(a, EK_ACCT_GAP, 1, EK_REMEDY_NONE);
        if (!it) return EK_ERR_NOMEM;
        it->name = p->kind;
        it->code = !strcmp(p->kind, GAP_NO_ID) ? EK_ACCT_GAP_NO_ID : EK_ACCT_GAP_OTHER;
        it->count = p->count;
        it->bytes = p->bytes;
        it->first_offset = (int64_t)p->first_offset;
    }
    return 0;
}

/* Problems (warnings and errors) are causes; the rest are notes. */
static int diag_items(ek_session *s, acct_b *a)
{
    int rc = 0;
    pthread_mutex_lock(&s->diag_lock);
    size_t ng = s->dgroups.n;
    const diag_group **order = malloc((ng ? ng : 1) * sizeof *order);
    for (size_t i = 0; order && i < ng; i++)
        order[i] = &s->dgroups.v[i];
    if (order && ng > 1) qsort(order, ng, sizeof *order, group_cmp);
    for (size_t i = 0; i < ng; i++) {
        const diag_group *g = order ? order[i] : &s->dgroups.v[i];
        if (!strcmp(g->kind, "perf.aux-no-data"))
            continue; /* told with the AUX records */
        ek_account_diag d;
        memset(&d, 0, sizeof d);
        d.kind = g->kind;
        d.sev = g->sev;
        d.count = g->count;
        d.first = g->first;
        d.msg = g->msg;
        d.file = g->file;
        d.record = g->record;
        d.trace_id = g->trace_id;
        d.example_offset = g->example_offset;
        memcpy(d.offsets, g->offsets, sizeof d.offsets);
        d.noffsets = g->noffsets;
        ek_account_item *it = item(a, EK_ACCT_DIAG, g->sev >= EK_SEV_WARN, EK_REMEDY_NONE);
        if (!it || ek_vec_push(&a->diags, d)) {
            rc = EK_ERR_NOMEM;
            break;
        }
        it->count = g->count;
        it->first_offset = g->example_offset;
        a->idx.v[3 * (a->items.n - 1) + 2] = a->diags.n;
    }
    free(order);
    pthread_mutex_unlock(&s->diag_lock);
    return rc;
}

static void head(ek_session *s, ek_account *o)
{
    const ek_perf_cs_etm *cs = s->cs;
    o->path = s->path;
    o->buildid_dir = s->o.buildid_dir;
    o->coresight = cs->present;
    o->ncpus = cs->ncpus;
    for (size_t i = 0; i < cs->ncpus; i++) {
        ek_protocol p = cs->cpus[i].cfg.protocol;
        if (p == EK_PROTO_ETMV4M) p = EK_PROTO_ETMV4;
        if ((unsigned)p < 32) o->protocols |= 1u << p;
    }
    o->snapshot = cs->snapshot;
    o->timeless = s->timeless;
    o->ran = s->ran;
    o->stats = s->st;
    if (s->ran) {
        uint64_t data = 0;
        for (size_t i = 0; i < s->nqres; i++)
            data += s->qres[i].data_bytes + s->qres[i].noid_bytes;
        o->frame_bytes = s->st.trace_bytes > data ? s->st.trace_bytes - data : 0;
    }
    const ek_perf_features *ft = ek_perf_features_get(s->pf);
    o->kernel_release = ft ? ft->osrelease : NULL;
    const as_dso *k = dso_reg_kernel(s->reg);
    if (k && k->build_id_len) {
        o->kernel_build_id = k->build_id;
        o->kernel_build_id_len = k->build_id_len;
    }
}

void ek_account_free(ek_account *p)
{
    if (!p) return;
    acct_b *a = (acct_b *)p;
    ek_vec_free(&a->items);
    ek_vec_free(&a->dsos);
    ek_vec_free(&a->jits);
    ek_vec_free(&a->diags);
    ek_vec_free(&a->aux);
    ek_vec_free(&a->idx);
    free(a);
}

/* A trace snapshot: its sources, the unreadable code by address range, the diagnostics. */
static int snap_account(ek_session *s, acct_b *a)
{
    ek_account *o = &a->pub;
    const ek_snapshot *ss = snap_snapshot(s);
    o->path = s->path;
    o->trace_snapshot = s->o.snapshot ? 2 : 1;
    o->coresight = 1;
    o->timeless = 1;
    o->ran = s->ran;
    o->stats = s->st;
    for (size_t i = 0; i < ss->ndevices; i++)
        if (ss->devices[i].devclass && !strcmp(ss->devices[i].devclass, "core")) o->ncpus++;
    for (size_t i = 0; i < ss->nsources; i++) {
        ek_protocol p = ss->sources[i].cfg.protocol;
        if (p == EK_PROTO_ETMV4M) p = EK_PROTO_ETMV4;
        if ((unsigned)p < 32) o->protocols |= 1u << p;
    }
    o->sources = snap_sources(s, &o->nsources);
    for (size_t i = 0; i < o->nsources; i++)
        if (o->sources[i].time_stamps) o->timeless = 0;
    snap_range *r = NULL;
    size_t nr = 0;
    int rc = snap_nacc_ranges(s, &r, &nr);
    for (size_t i = 0; i < nr && !rc; i++) {
        ek_account_item *it = item(a, EK_ACCT_CODE, 1, EK_REMEDY_GIVE_CODE);
        if (!it) {
            rc = EK_ERR_NOMEM;
            break;
        }
        it->code = EK_ACCT_CODE_NO_IMAGE;
        it->pid = r[i].trace_id;
        it->lo = r[i].lo;
        it->hi = r[i].hi;
        it->count = r[i].count;
        it->first_offset = (int64_t)r[i].first_index;
        it->name = r[i].ini;
    }
    free(r);
    return rc ? rc : diag_items(s, a);
}

int ek_session_account(ek_session *s, ek_account **out)
{
    *out = NULL;
    acct_b *a = calloc(1, sizeof *a);
    if (!a) return EK_ERR_NOMEM;
    if (s->snap) {
        int rc = snap_account(s, a);
        if (rc) {
            ek_account_free(&a->pub);
            return rc;
        }
        for (size_t i = 0; i < a->items.n; i++) {
            const size_t *x = &a->idx.v[3 * i];
            a->items.v[i].diag = x[2] ? &a->diags.v[x[2] - 1] : NULL;
        }
        a->pub.items = a->items.v;
        a->pub.nitems = a->items.n;
        a->pub.problems = ek_session_problems(s);
        *out = &a->pub;
        return 0;
    }
    head(s, &a->pub);
    agg g;
    memset(&g, 0, sizeof g);
    int rc = aux_items(s, a);
    if (!rc) rc = merge(s, &g);
    if (!rc && g.misses.n > 1) qsort(g.misses.v, g.misses.n, sizeof *g.misses.v, miss_cmp);
    if (!rc) rc = code_items(s, a, &g);
    if (!rc) rc = diag_items(s, a);
    agg_free(&g);
    if (rc) {
        ek_account_free(&a->pub);
        return rc;
    }
    /* the arrays are complete: point the items into them */
    for (size_t i = 0; i < a->items.n; i++) {
        ek_account_item *it = &a->items.v[i];
        const size_t *x = &a->idx.v[3 * i];
        it->dso = x[0] ? &a->dsos.v[x[0] - 1] : NULL;
        it->jit = x[1] ? &a->jits.v[x[1] - 1] : NULL;
        it->diag = x[2] ? &a->diags.v[x[2] - 1] : NULL;
    }
    a->pub.aux_no_data = a->aux.v;
    a->pub.naux_no_data = a->aux.n;
    a->pub.items = a->items.v;
    a->pub.nitems = a->items.n;
    a->pub.problems = ek_session_problems(s);
    *out = &a->pub;
    return 0;
}

int ek_session_problems(ek_session *s)
{
    int n = 0;
    pthread_mutex_lock(&s->diag_lock);
    for (size_t i = 0; i < s->dgroups.n; i++)
        if (s->dgroups.v[i].sev >= EK_SEV_WARN)
            n++;
    pthread_mutex_unlock(&s->diag_lock);
    if (s->snap) {
        /* one kind per range of unreadable code, as the account groups it */
        snap_range *r = NULL;
        size_t nr = 0;
        if (!snap_nacc_ranges(s, &r, &nr)) n += (int)nr;
        free(r);
        return n;
    }
    size_t nsl = 0;
    const ek_perf_slice *sl = ek_perf_queues_slices(s->pq, &nsl);
    for (size_t i = 0; i < nsl; i++)
        if (sl[i].problems)
            n++;
    /* code that could not be read: one kind per DSO (or map-less range) and process, and trace
     * lost for another reason: one kind per cause, as the account groups them */
    agg a;
    memset(&a, 0, sizeof a);
    merge(s, &a);
    n += (int)a.misses.n + (int)a.gaps.n;
    agg_free(&a);
    return n;
}

/* ---- names ----------------------------------------------------------------------------------------- */

const char *ek_account_kind_name(int kind)
{
    static const char *const n[EK_ACCT_NKINDS] = {
        [EK_ACCT_AUX_NO_DATA] = "aux-no-data",     [EK_ACCT_AUX_OVERWRITTEN] = "aux-overwritten",
        [EK_ACCT_AUX_CLIPPED] = "aux-clipped",     [EK_ACCT_AUX_TRUNCATED] = "aux-truncated",
        [EK_ACCT_AUX_REFUSED] = "aux-refused",     [EK_ACCT_AUX_COLLISION] = "aux-collision",
        [EK_ACCT_AUX_PARTIAL] = "aux-partial",     [EK_ACCT_LOST] = "lost",
        [EK_ACCT_CODE] = "code",                   [EK_ACCT_KMOD_RELOCS] = "module-relocations",
        [EK_ACCT_GAP] = "gap",                     [EK_ACCT_DIAG] = "diagnostic",
    };
    return kind >= 0 && kind < EK_ACCT_NKINDS ? n[kind] : "?";
}

const char *ek_account_code_name(int code)
{
    static const char *const n[] = {"no-map", "no-kernel-map", "file", "kernel", "outside",
                                    "no-image"};
    return code >= 0 && code < (int)(sizeof n / sizeof *n) ? n[code] : "?";
}

const char *ek_remedy_name(int remedy)
{
    static const char *const n[EK_REMEDY_N] = {
        [EK_REMEDY_NONE] = "none",
        [EK_REMEDY_RECORD_AGAIN] = "record-again",
        [EK_REMEDY_COPY_AGAIN] = "copy-again",
        [EK_REMEDY_BIGGER_AUX] = "bigger-aux-buffer",
        [EK_REMEDY_ONE_SESSION] = "one-session-per-sink",
        [EK_REMEDY_UNSHARED_SINK] = "unshared-sink",
        [EK_REMEDY_BIGGER_PERF_BUFFER] = "bigger-perf-buffer",
        [EK_REMEDY_KERNEL_IMAGE] = "kernel-image",
        [EK_REMEDY_KALLSYMS] = "kallsyms",
        [EK_REMEDY_SYMFS] = "symfs",
        [EK_REMEDY_NO_FILE] = "no-file",
        [EK_REMEDY_JIT_WRITE] = "jitdump-write",
        [EK_REMEDY_JIT_COPY] = "jitdump-copy",
        [EK_REMEDY_JIT_CLOCK] = "jitdump-clock",
        [EK_REMEDY_GIVE_CODE] = "give-code",
    };
    return remedy >= 0 && remedy < EK_REMEDY_N ? n[remedy] : "?";
}
