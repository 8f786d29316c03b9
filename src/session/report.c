/* The doctor's account of a session: every byte of trace that did not become samples, grouped
 * by cause, with what to do about it. One summary, not a flood: each cause is one group with
 * counts, an address range and a few offsets. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "etmkit/etmkit.h"
#include "etmkit/snapshot.h"
#include "session/session_int.h"

#include "session/report_int.h"

const char *const rep_kernel_remedy =
    "give the kernel as it ran: -k /path/to/vmlinux (symbols need CONFIG_KALLSYMS), or record "
    "with `perf record --kcore` (needs CONFIG_PROC_KCORE=y) and pass that folder (--kcore DIR), "
    "or --kallsyms FILE for symbols only";

void rep_hexid(ek_sbuf *out, const uint8_t *id, size_t len)
{
    while (len && !id[len - 1])
        len--;
    for (size_t i = 0; i < len; i++)
        ek_sbuf_printf(out, "%02x", id[i]);
}

void rep_plural(ek_sbuf *out, uint64_t n, const char *one, const char *many)
{
    ek_sbuf_printf(out, "%llu %s", (unsigned long long)n, n == 1 ? one : many);
}

/* "s" for a count other than one */
const char *rep_pl(uint64_t n)
{
    return n == 1 ? "" : "s";
}

/* A diagnostic's own text on one line: control characters as \xNN, one final '.' dropped (the
 * report adds its own punctuation after it). */
void rep_put_msg(ek_sbuf *out, const char *m)
{
    size_t n = m ? strlen(m) : 0;
    while (n && (m[n - 1] == '\n' || m[n - 1] == '\r'))
        n--;
    if (n && m[n - 1] == '.') n--;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)m[i];
        if (c < 0x20 || c == 0x7f)
            ek_sbuf_printf(out, "\\x%02x", c);
        else
            ek_sbuf_putc(out, (char)c);
    }
}

void rep_cause(rep *r)
{
    ek_sbuf_printf(&r->causes, "\n[%d] ", ++r->ncauses);
}

ek_sbuf *rep_note(rep *r)
{
    r->nnotes++;
    ek_sbuf_puts(&r->notes, "  - ");
    return &r->notes;
}


/* ---- merging the queues' results --------------------------------------------------------------- */

typedef struct agg {
    EK_VEC(miss) misses;
    EK_VEC(gap) gaps;
} agg;

static void merge(ek_session *s, agg *a)
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
                ek_vec_push(&a->misses, *m);
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
                ek_vec_push(&a->gaps, *g);
                continue;
            }
            t->bytes += g->bytes;
            t->count += g->count;
            if (g->first_offset < t->first_offset)
                t->first_offset = g->first_offset;
        }
    }
}

static int miss_cmp(const void *a, const void *b)
{
    const miss *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return x->count > y->count ? -1 : x->count < y->count;
}

/* ---- pieces --------------------------------------------------------------------------------------- */

static void header(ek_session *s, ek_sbuf *out)
{
    const ek_perf_cs_etm *cs = s->cs;
    ek_sbuf_printf(out, "%s: ", s->path);
    if (!cs->present) {
        ek_sbuf_puts(out, "no CoreSight (cs_etm) trace configuration in this recording\n");
        return;
    }
    /* the protocols of the CPUs, in ek_protocol order (ETMv4-M counts as ETMv4) */
    unsigned have = 0;
    for (size_t i = 0; i < cs->ncpus; i++) {
        ek_protocol p = cs->cpus[i].cfg.protocol;
        if (p == EK_PROTO_ETMV4M) p = EK_PROTO_ETMV4;
        if ((unsigned)p < 32) have |= 1u << p;
    }
    ek_sbuf_printf(out, "CoreSight trace of %zu CPU%s (", cs->ncpus, cs->ncpus == 1 ? "" : "s");
    for (unsigned p = 0, n = 0; p < 32; p++)
        if (have & (1u << p)) ek_sbuf_printf(out, "%s%s", n++ ? "+" : "", ek_protocol_name(p));
    ek_sbuf_printf(out, "), %s, %s\n", cs->snapshot ? "snapshot mode" : "full trace",
                   s->timeless ? "no time stamps used" : "with time stamps");
    ek_session_stats st = s->st;
    ek_sbuf_puts(out, "  ");
    rep_plural(out, st.queues, "queue", "queues");
    ek_sbuf_puts(out, ", ");
    rep_plural(out, st.slices, "AUX slice", "AUX slices");
    ek_sbuf_puts(out, ", ");
    rep_plural(out, st.trace_bytes, "byte", "bytes");
    ek_sbuf_puts(out, " of trace in the file");
    if (s->ran) {
        uint64_t data = 0;
        for (size_t i = 0; i < s->nqres; i++)
            data += s->qres[i].data_bytes + s->qres[i].noid_bytes;
        ek_sbuf_printf(out, " (%llu of them frame headers and padding)",
                       (unsigned long long)(st.trace_bytes > data ? st.trace_bytes - data : 0));
        ek_sbuf_puts(out, "\n  decoded: ");
        rep_plural(out, st.trace_bytes_decoded, "trace byte", "trace bytes");
        ek_sbuf_puts(out, " -> ");
        rep_plural(out, st.instructions, "instruction", "instructions");
        ek_sbuf_puts(out, ", ");
        rep_plural(out, st.samples_branches, "branch sample", "branch samples");
        ek_sbuf_puts(out, ", ");
        rep_plural(out, st.samples_instructions, "instruction sample", "instruction samples");
        ek_sbuf_putc(out, '\n');
    } else {
        ek_sbuf_putc(out, '\n');
    }
}


/* ---- the report ------------------------------------------------------------------------------------ */

static void full(ek_session *s, ek_sbuf *out, int level)
{
    header(s, out);
    rep r;
    memset(&r, 0, sizeof r);
    r.level = level;
    rep_aux_problems(s, &r);
    agg a;
    memset(&a, 0, sizeof a);
    merge(s, &a);
    if (a.misses.n > 1)
        qsort(a.misses.v, a.misses.n, sizeof *a.misses.v, miss_cmp);
    for (size_t i = 0; i < a.misses.n; i++)
        rep_one_miss(s, &r, &a.misses.v[i]);
    /* modules whose calls to the kernel could not be resolved */
    for (size_t i = 0; i < dso_reg_count(s->reg); i++) {
        const as_dso *d = dso_reg_at(s->reg, i);
        if (d->kind != DSO_KMODULE || !d->used || !d->relocs_unresolved)
            continue;
        rep_cause(&r);
        ek_sbuf_printf(&r.causes,
                       "%s: %llu of %llu branch relocations %s that %s not known; "
                       "the decoder takes those calls as indirect and waits for the "
                       "next address in the trace\n    remedy: --kallsyms FILE or -k "
                       "vmlinux\n",
                       d->name, (unsigned long long)d->relocs_unresolved,
                       (unsigned long long)(d->relocs + d->relocs_unresolved),
                       d->relocs_unresolved == 1 ? "names a kernel symbol" : "name kernel symbols",
                       d->relocs_unresolved == 1 ? "is" : "are");
    }
    for (size_t i = 0; i < a.gaps.n; i++) {
        const gap *g = &a.gaps.v[i];
        rep_cause(&r);
        ek_sbuf_printf(&r.causes, "%s: ", g->kind);
        rep_plural(&r.causes, g->bytes, "trace byte", "trace bytes");
        ek_sbuf_puts(&r.causes, " in ");
        rep_plural(&r.causes, g->count, "place", "places");
        ek_sbuf_printf(&r.causes, " (first at offset %#llx)\n",
                       (unsigned long long)g->first_offset);
        if (!strcmp(g->kind, GAP_NO_ID))
            ek_sbuf_puts(&r.causes, "    why: the frame that named their trace ID is not in the "
                                    "AUX slice (the sink's buffer wrapped over it, or it went "
                                    "with an earlier slice)\n");
    }
    rep_diag_groups(s, &r);
    if (r.ncauses) {
        ek_sbuf_printf(out, "\nNot turned into samples (%d cause%s):\n", r.ncauses,
                       rep_pl((uint64_t)r.ncauses));
        ek_sbuf_put(out, r.causes.p, r.causes.len);
    } else {
        ek_sbuf_puts(out, "\nAll trace was decoded.\n");
    }
    if (r.nnotes && level >= EK_REPORT_VERBOSE) {
        ek_sbuf_printf(out, "\nNotes (not problems):\n");
        ek_sbuf_put(out, r.notes.p, r.notes.len);
    } else if (r.nnotes) {
        ek_sbuf_printf(out, "\n%d %s (--verbose shows %s).\n", r.nnotes,
                       r.nnotes == 1 ? "note, not a problem" : "notes, not problems",
                       r.nnotes == 1 ? "it" : "them");
    }
    ek_sbuf_free(&r.causes);
    ek_sbuf_free(&r.notes);
    ek_vec_free(&a.misses);
    ek_vec_free(&a.gaps);
}

/* A few lines for stderr after `etmkit script`. */
static void summary(ek_session *s, ek_sbuf *out)
{
    agg a;
    memset(&a, 0, sizeof a);
    merge(s, &a);
    uint64_t kernel = 0, kbytes = 0, user = 0, ubytes = 0, other = 0;
    int kernel_missing = 0;
    for (size_t i = 0; i < a.misses.n; i++) {
        const miss *m = &a.misses.v[i];
        if (m->kind == MISS_KERNEL || m->kind == MISS_NO_KMAP) {
            kernel += m->count;
            kbytes += m->bytes;
            kernel_missing = 1;
        } else if (m->kind == MISS_DSO || m->kind == MISS_NO_MAP) {
            user += m->count;
            ubytes += m->bytes;
        } else {
            other += m->count;
        }
    }
    size_t nsl = 0;
    const ek_perf_slice *sl = ek_perf_queues_slices(s->pq, &nsl);
    uint64_t nodata = 0;
    const ek_perf_slice *first = NULL;
    for (size_t i = 0; i < nsl; i++)
        if (sl[i].problems & EK_SLICE_NO_DATA) {
            if (!first || sl[i].aux_record_offset < first->aux_record_offset)
                first = &sl[i];
            nodata++;
        }
    int any = 0;
    if (nodata) {
        ek_sbuf_printf(out, "etmkit: %llu AUX record%s without trace data in the file (first: "
                            "record #%lld at offset %#llx)\n",
                       (unsigned long long)nodata, nodata == 1 ? "" : "s",
                       (long long)first->aux_record, (unsigned long long)first->aux_record_offset);
        any = 1;
    }
    if (kernel_missing) {
        ek_sbuf_printf(out,
                       "etmkit: %llu place%s in kernel code not decoded (%llu trace byte%s): "
                       "no kernel image; use -k vmlinux, --kcore DIR or --kallsyms FILE\n",
                       (unsigned long long)kernel, rep_pl(kernel), (unsigned long long)kbytes,
                       rep_pl(kbytes));
        any = 1;
    }
    if (user) {
        ek_sbuf_printf(out,
                       "etmkit: %llu place%s in user code not decoded (%llu trace byte%s): "
                       "files missing or of another build; use --symfs DIR or a build-id "
                       "cache\n",
                       (unsigned long long)user, rep_pl(user), (unsigned long long)ubytes, rep_pl(ubytes));
        any = 1;
    }
    if (other) {
        ek_sbuf_printf(out,
                       "etmkit: %llu place%s where the files hold no code at the traced "
                       "address\n",
                       (unsigned long long)other, rep_pl(other));
        any = 1;
    }
    /* problems in the file and the trace: one line per kind, with where it first happened */
    pthread_mutex_lock(&s->diag_lock);
    unsigned shown = 0, more = 0;
    size_t ng = s->dgroups.n;
    const diag_group **order = malloc((ng ? ng : 1) * sizeof *order);
    for (size_t i = 0; order && i < ng; i++)
        order[i] = &s->dgroups.v[i];
    if (order && ng > 1) qsort(order, ng, sizeof *order, rep_group_cmp);
    for (size_t i = 0; i < ng; i++) {
        const diag_group *g = order ? order[i] : &s->dgroups.v[i];
        if (g->sev < EK_SEV_WARN || !strcmp(g->kind, "perf.aux-no-data"))
            continue;
        if (shown == 10) {
            more++;
            continue;
        }
        shown++;
        ek_sbuf_printf(out, "etmkit: %s", g->first ? g->first : g->kind);
        if (g->count > 1)
            ek_sbuf_printf(out, " (%llu times)", (unsigned long long)g->count);
        ek_sbuf_putc(out, '\n');
    }
    free(order);
    pthread_mutex_unlock(&s->diag_lock);
    if (more)
        ek_sbuf_printf(out, "etmkit: ... and %u more kind%s of problem%s\n", more, rep_pl(more),
                       rep_pl(more));
    if (shown)
        any = 1;
    if (any)
        ek_sbuf_printf(out, "etmkit: run 'etmkit doctor %s' for the details and remedies\n", s->path);
    ek_vec_free(&a.misses);
    ek_vec_free(&a.gaps);
}

int ek_session_problems(ek_session *s)
{
    int n = 0;
    pthread_mutex_lock(&s->diag_lock);
    for (size_t i = 0; i < s->dgroups.n; i++)
        if (s->dgroups.v[i].sev >= EK_SEV_WARN)
            n++;
    pthread_mutex_unlock(&s->diag_lock);
    size_t nsl = 0;
    const ek_perf_slice *sl = ek_perf_queues_slices(s->pq, &nsl);
    for (size_t i = 0; i < nsl; i++)
        if (sl[i].problems)
            n++;
    /* code that could not be read: one kind per DSO (or map-less range) and process, as the
     * report groups it */
    agg a;
    memset(&a, 0, sizeof a);
    merge(s, &a);
    n += (int)a.misses.n;
    ek_vec_free(&a.misses);
    ek_vec_free(&a.gaps);
    return n;
}

void ek_session_report(ek_session *s, ek_sbuf *out, int level)
{
    if (level <= EK_REPORT_SUMMARY)
        summary(s, out);
    else
        full(s, out, level);
}

