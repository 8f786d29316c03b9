/* The report's causes: what the AUX records and their slices show (lost, truncated,
 * overwritten trace), the addresses whose code could not be read (with where the file was
 * looked for and what to do), and the decoders' diagnostics grouped by kind. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "etmkit/etmkit.h"
#include "session/report_int.h"

/* Snapshot mode (perf record -S) writes the AUX buffer out only when a snapshot is taken: an
 * AUX record whose trace was overwritten in the buffer before the next snapshot has no data in
 * the file, by design. One is "overwritten" when a later AUX record of its queue has data. */
static int snapshot_overwritten(ek_session *s, const ek_perf_slice *sl, size_t nsl,
                                const int64_t *last_with_data, size_t i)
{
    (void)nsl;
    if (!s->cs->snapshot || !(sl[i].flags & EK_PERF_AUX_FLAG_OVERWRITE)) return 0;
    return last_with_data && sl[i].queue < ek_perf_queues_count(s->pq) &&
           last_with_data[sl[i].queue] > sl[i].aux_record;
}

/* AUX records: without data, truncated, collisions, partial. */
int rep_aux_problems(ek_session *s, rep *r)
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
    for (size_t i = 0; i < nsl; i++) {
        if (sl[i].problems & EK_SLICE_NO_DATA) {
            if (snapshot_overwritten(s, sl, nsl, last_with_data, i)) {
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
    if (nodata) {
        rep_cause(r);
        rep_plural(&r->causes, nodata, "AUX record has", "AUX records have");
        ek_sbuf_puts(&r->causes, " no trace data in the file (");
        rep_plural(&r->causes, nodata_bytes, "byte", "bytes");
        ek_sbuf_puts(&r->causes, " of trace announced, none stored):\n");
        unsigned shown = 0;
        for (size_t i = 0; i < nsl; i++) {
            if (!(sl[i].problems & EK_SLICE_NO_DATA) ||
                snapshot_overwritten(s, sl, nsl, last_with_data, i))
                continue;
            if (r->level < EK_REPORT_VERBOSE && shown == 8) {
                ek_sbuf_printf(&r->causes, "      ... and %llu more (--verbose lists them all)\n",
                               (unsigned long long)(nodata - shown));
                break;
            }
            shown++;
            ek_sbuf_printf(&r->causes,
                           "      AUX record #%lld at offset %#llx: cpu %d, aux offset %#llx, "
                           "size %#llx\n",
                           (long long)sl[i].aux_record, (unsigned long long)sl[i].aux_record_offset,
                           (sl[i].sid.present & EK_PERF_SAMPLE_CPU) ? (int)sl[i].sid.cpu : -1,
                           (unsigned long long)sl[i].aux_offset,
                           (unsigned long long)sl[i].aux_size);
        }
        ek_sbuf_puts(&r->causes,
                     "    why: the PERF_RECORD_AUXTRACE records that hold the data are missing "
                     "(the recorder did not copy the AUX buffer out: it stopped early, lost it, "
                     "or the file was cut)\n"
                     "    remedy: record again; with simpleperf give a bigger --aux-buffer-size / "
                     "--user-buffer-size, with perf a bigger -m ,SIZE\n");
    }
    if (over) {
        ek_sbuf *o = rep_note(r);
        ek_sbuf_puts(o, "snapshot mode: the trace of ");
        rep_plural(o, over, "AUX record", "AUX records");
        ek_sbuf_puts(o, " (");
        rep_plural(o, over_bytes, "byte", "bytes");
        ek_sbuf_puts(o, ") was overwritten in the AUX buffer before the next snapshot, as "
                        "snapshot mode does (perf record -S keeps what the buffer holds when a "
                        "snapshot is taken; a bigger -m ,SIZE keeps more)\n");
    }
    free(last_with_data);
    if (clipped) {
        rep_cause(r);
        rep_plural(&r->causes, clipped, "AUX record's", "AUX records'");
        ek_sbuf_puts(&r->causes, " data is cut short by the end of the file (");
        rep_plural(&r->causes, clipped_bytes, "byte", "bytes");
        ek_sbuf_puts(&r->causes, " missing)\n    remedy: the file is truncated; copy it again\n");
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
            if (!trunc++)
                first_trunc = (int64_t)aux[i].offset;
        }
        if (aux[i].flags & EK_PERF_AUX_FLAG_COLLISION) {
            if (!coll++)
                first_coll = (int64_t)aux[i].offset;
        }
        if (aux[i].flags & EK_PERF_AUX_FLAG_PARTIAL) part++;
    }
    if (trunc) {
        rep_cause(r);
        rep_plural(&r->causes, trunc, "AUX record is", "AUX records are");
        ek_sbuf_printf(&r->causes,
                       " flagged TRUNCATED (first at offset %#llx): the AUX buffer was full, "
                       "trace after those points was lost by the hardware/driver\n"
                       "    remedy: a bigger AUX buffer (perf record -m ,SIZE; simpleperf "
                       "--aux-buffer-size), address filters, or less traced code\n",
                       (unsigned long long)first_trunc);
    }
    if (refused) {
        rep_cause(r);
        rep_plural(&r->causes, refused, "AUX record is", "AUX records are");
        ek_sbuf_printf(&r->causes,
                       " empty and flagged TRUNCATED (first at offset %#llx): tracing could not "
                       "start then (the sink was busy with another perf session, or the AUX "
                       "buffer had no room), so that trace was never collected\n"
                       "    remedy: one perf session per sink at a time; a bigger AUX buffer "
                       "(perf record -m ,SIZE)\n",
                       (unsigned long long)first_refused);
    }
    if (coll) {
        rep_cause(r);
        rep_plural(&r->causes, coll, "AUX record is", "AUX records are");
        ek_sbuf_printf(&r->causes,
                       " flagged COLLISION (first at offset %#llx): another event wrote the "
                       "same sink; parts of that trace are someone else's\n"
                       "    remedy: do not share the sink between perf sessions\n",
                       (unsigned long long)first_coll);
    }
    if (part) {
        ek_sbuf *o = rep_note(r);
        rep_plural(o, part, "AUX record is", "AUX records are");
        ek_sbuf_puts(o, " flagged PARTIAL: the hardware buffer was read while tracing went on; "
                        "a packet may be cut at the boundary\n");
    }
    if (s->lost_records) {
        rep_cause(r);
        rep_plural(&r->causes, s->lost_records, "LOST record", "LOST records");
        ek_sbuf_puts(&r->causes, ": ");
        rep_plural(&r->causes, s->lost_events, "sideband event was", "sideband events were");
        ek_sbuf_puts(&r->causes, " dropped, maps or threads may be missing\n"
                                 "    remedy: a bigger perf buffer (-m)\n");
    }
    return 0;
}

static void dso_where(ek_session *s, ek_sbuf *out, const as_dso *d)
{
    (void)s;
    switch (d->status) {
    case DSO_NOT_FOUND:
        if (d->kind == DSO_KERNEL)
            ek_sbuf_puts(out, "no kernel image was given");
        else
            ek_sbuf_printf(out, "not found (looked for %s)", d->tried ? d->tried : d->name);
        if (d->kind == DSO_KMODULE && d->build_id_len == 0)
            ek_sbuf_puts(out, "; no build-id recorded for it");
        break;
    case DSO_BUILD_ID_MISMATCH:
        ek_sbuf_printf(out, "%s has build-id ", d->tried ? d->tried : d->name);
        rep_hexid(out, d->found_id, d->found_id_len);
        ek_sbuf_puts(out, ", the recording says ");
        rep_hexid(out, d->build_id, d->build_id_len);
        ek_sbuf_puts(out, ": another build of the file, its code would be wrong");
        break;
    case DSO_BAD_FILE:
        ek_sbuf_printf(out, "%s is not a usable ELF file", d->tried ? d->tried : d->name);
        break;
    case DSO_NO_FILE:
        ek_sbuf_puts(out, "anonymous or generated code (JIT, memfd, vdso): no file to read");
        break;
    default:
        ek_sbuf_puts(out, "loaded");
        break;
    }
}

static void dso_remedy(ek_session *s, ek_sbuf *out, const as_dso *d)
{
    char hex[64] = "";
    if (d->build_id_len)
        ek_build_id_hex(d->build_id, d->build_id_len, hex, sizeof hex);
    if (d->kind == DSO_KERNEL) {
        ek_sbuf_printf(out, "    remedy: %s\n", rep_kernel_remedy);
        return;
    }
    if (d->status == DSO_NO_FILE) {
        ek_sbuf_puts(out, "    remedy: none from files; for JIT code, record with perf's jitdump "
                          "support\n");
        return;
    }
    ek_sbuf_printf(out, "    remedy: put the file at <DIR>%s and pass --symfs DIR", d->name);
    if (d->build_id_len)
        ek_sbuf_printf(out, ", or into the build-id cache as %s/.build-id/%.2s/%s/elf",
                       s->o.buildid_dir ? s->o.buildid_dir : "~/.debug", hex, hex + 2);
    ek_sbuf_puts(out, " (`perf archive` / `perf buildid-cache -a FILE` on the traced system)\n");
}

/* perf-PID.map: where a JIT's function names may be (symfs first, then /tmp as perf reads it) */
static int perf_map_at(const ek_session *s, int32_t pid, char *buf, size_t n)
{
    const char *symfs = s->o.symfs && *s->o.symfs && strcmp(s->o.symfs, "/") ? s->o.symfs : NULL;
    if (symfs) {
        snprintf(buf, n, "%s/tmp/perf-%d.map", symfs, (int)pid);
        if (!access(buf, R_OK))
            return 1;
    }
    snprintf(buf, n, "/tmp/perf-%d.map", (int)pid);
    return !access(buf, R_OK);
}

/* Anonymous executable memory: JIT code. What the recording says about the JIT's jitdump, and
 * what to supply. */
static void jit_explain(ek_session *s, ek_sbuf *out, const miss *m)
{
    const jit_src *j = jit_of(s, m->pid);
    char pm[4096];
    int have_map = perf_map_at(s, m->pid, pm, sizeof pm);
    ek_sbuf_printf(out, "JIT code? anonymous executable memory (%s) of pid %d at %#llx..%#llx: ",
                   m->dso->name, (int)m->pid, (unsigned long long)m->lo, (unsigned long long)m->hi);
    if (!j) {
        ek_sbuf_printf(out,
                       "the process mapped no jitdump (jit-%d.dump), so nothing tells what "
                       "code was there",
                       (int)m->pid);
    } else if (!j->dump) {
        ek_sbuf_printf(out, "its jitdump %s", j->recorded ? j->recorded : "");
        if (j->record >= 0)
            ek_sbuf_printf(out, " (MMAP2 record %lld)", (long long)j->record);
        if (j->status == EK_ERR_FORMAT)
            ek_sbuf_printf(out, " is not a usable jitdump (%s)", j->tried ? j->tried : "");
        else
            ek_sbuf_printf(out, " was not found (looked for %s)", j->tried ? j->tried : "");
    } else if (j->status == EK_ERR_UNSUPPORTED) {
        ek_sbuf_printf(out,
                       "its jitdump %s was read but its times cannot be compared with the "
                       "trace (the recording was not made with perf record -k 1)",
                       j->path);
    } else {
        ek_sbuf_printf(out,
                       "its jitdump %s (%llu loads, %llu moves) has no code there at that "
                       "time",
                       j->path, (unsigned long long)j->loads, (unsigned long long)j->moves);
    }
    ek_sbuf_puts(out, "\n    ");
    rep_plural(out, m->count, "place", "places");
    ek_sbuf_puts(out, " in the trace, ");
    rep_plural(out, m->bytes, "trace byte", "trace bytes");
    ek_sbuf_printf(out, " not decoded (first at file offset %#llx)\n",
                   (unsigned long long)m->first_offset);
    if (j && !j->dump)
        ek_sbuf_printf(out,
                       "    remedy: copy the jit-%d.dump the JIT wrote on the traced system "
                       "to <DIR>%s and pass --symfs DIR, or give it with --jitdump FILE\n",
                       (int)m->pid, j->recorded ? j->recorded : "");
    else if (j && j->status == EK_ERR_UNSUPPORTED)
        ek_sbuf_puts(out, "    remedy: record with perf record -k 1 (CLOCK_MONOTONIC, the "
                          "jitdump's clock)\n");
    else if (!j)
        ek_sbuf_printf(out, "    remedy: have the JIT write a jitdump (perf's JVMTI agent "
                            "libperf-jvmti.so, node --perf-prof, LLVM's PerfJITEventListener) and "
                            "record with perf record -k 1; or give one with --jitdump FILE\n");
    if (have_map)
        ek_sbuf_printf(out,
                       "    note: %s names the JIT's functions but holds no code: names "
                       "alone cannot be decoded\n",
                       pm);
    else
        ek_sbuf_printf(out,
                       "    note: perf-%d.map (under symfs /tmp or in /tmp) would only name "
                       "the JIT's functions: a jitdump holds the code\n",
                       (int)m->pid);
}

void rep_one_miss(ek_session *s, rep *r, const miss *m)
{
    rep_cause(r);
    ek_sbuf *out = &r->causes;
    if (m->kind == MISS_DSO && m->dso && m->dso->kind == DSO_ANON && m->pid >= 0) {
        jit_explain(s, out, m);
        return;
    }
    switch (m->kind) {
    case MISS_NO_MAP:
        ek_sbuf_printf(out, "code of pid %d at %#llx..%#llx is in no map the recording knows",
                       (int)m->pid, (unsigned long long)m->lo, (unsigned long long)m->hi);
        break;
    case MISS_NO_KMAP:
        ek_sbuf_printf(out, "kernel code at %#llx..%#llx is in no kernel map the recording "
                            "knows",
                       (unsigned long long)m->lo, (unsigned long long)m->hi);
        break;
    case MISS_KERNEL:
        ek_sbuf_printf(out, "kernel code at %#llx..%#llx could not be read: ",
                       (unsigned long long)m->lo, (unsigned long long)m->hi);
        if (m->dso)
            dso_where(s, out, m->dso);
        break;
    case MISS_DSO:
        if (m->dso && m->dso->kind == DSO_KMODULE)
            ek_sbuf_printf(out, "kernel module %s", m->dso->name);
        else
            ek_sbuf_printf(out, "%s", m->dso ? m->dso->name : "?");
        if (m->pid >= 0)
            ek_sbuf_printf(out, " (pid %d)", (int)m->pid);
        ek_sbuf_printf(out, " at %#llx..%#llx: ", (unsigned long long)m->lo,
                       (unsigned long long)m->hi);
        if (m->dso)
            dso_where(s, out, m->dso);
        break;
    case MISS_OUTSIDE:
        ek_sbuf_printf(out, "%s holds no code at %#llx..%#llx",
                       m->dso ? m->dso->name : "?", (unsigned long long)m->lo,
                       (unsigned long long)m->hi);
        break;
    }
    ek_sbuf_puts(out, "\n    ");
    rep_plural(out, m->count, "place", "places");
    ek_sbuf_puts(out, " in the trace, ");
    rep_plural(out, m->bytes, "trace byte", "trace bytes");
    ek_sbuf_printf(out, " not decoded (first at file offset %#llx)\n",
                   (unsigned long long)m->first_offset);
    if (m->kind == MISS_KERNEL || m->kind == MISS_NO_KMAP) {
        /* say which kernel is needed */
        const ek_perf_features *ft = ek_perf_features_get(s->pf);
        const as_dso *k = dso_reg_kernel(s->reg);
        if ((ft && ft->osrelease) || (k && k->build_id_len)) {
            ek_sbuf_puts(out, "    the kernel that ran:");
            if (ft && ft->osrelease)
                ek_sbuf_printf(out, " %s", ft->osrelease);
            if (k && k->build_id_len) {
                ek_sbuf_puts(out, " (build-id ");
                rep_hexid(out, k->build_id, k->build_id_len);
                ek_sbuf_putc(out, ')');
            }
            ek_sbuf_putc(out, '\n');
        }
    }
    switch (m->kind) {
    case MISS_NO_MAP:
        ek_sbuf_puts(out, "    why: no MMAP/MMAP2 record covers these addresses (JIT code, a lost "
                          "MMAP record, or tracing started before the process was known)\n");
        break;
    case MISS_NO_KMAP:
        ek_sbuf_printf(out, "    remedy: %s\n", rep_kernel_remedy);
        break;
    case MISS_KERNEL:
    case MISS_DSO:
        if (m->dso)
            dso_remedy(s, out, m->dso);
        break;
    case MISS_OUTSIDE:
        ek_sbuf_puts(out, "    why: the address is past the end of the file's code (a different "
                          "build of the file?)\n");
        break;
    }
}

/* One diagnostic group: its message, how often, where first; its id (kind) with --verbose. */
static void one_group(ek_session *s, ek_sbuf *out, const diag_group *g, int level)
{
    rep_put_msg(out, g->msg ? g->msg : g->kind);
    ek_sbuf sub = EK_SBUF_INIT; /* what goes in parentheses */
    if (g->count != 1) ek_sbuf_printf(&sub, "%llu times", (unsigned long long)g->count);
    const char *sep = g->count != 1 ? ", first " : "";
    if (g->file && strcmp(g->file, s->path)) {
        ek_sbuf_printf(&sub, "%sin ", sep);
        rep_put_msg(&sub, g->file);
        sep = ", ";
    }
    if (g->record >= 0) {
        ek_sbuf_printf(&sub, "%srecord %lld", sep, (long long)g->record);
        sep = ", ";
    }
    if (g->example_offset >= 0) {
        ek_sbuf_printf(&sub, "%sat offset %#llx", sep, (unsigned long long)g->example_offset);
        sep = ", ";
    }
    if (g->trace_id >= 0) ek_sbuf_printf(&sub, "%strace ID %#x", sep, (unsigned)g->trace_id);
    if (sub.len) ek_sbuf_printf(out, " (%s)", sub.p);
    ek_sbuf_free(&sub);
    if (level >= EK_REPORT_VERBOSE) ek_sbuf_printf(out, " [%s]", g->kind);
    ek_sbuf_putc(out, '\n');
    if (g->noffsets > 1) {
        ek_sbuf_puts(out, "    at offsets");
        for (unsigned k = 0; k < g->noffsets; k++)
            ek_sbuf_printf(out, " %#llx", (unsigned long long)g->offsets[k]);
        if (g->count > g->noffsets) ek_sbuf_puts(out, " ...");
        ek_sbuf_putc(out, '\n');
    }
}

/* Groups in file order of their examples (those without an offset last), then by id: the
 * order the decoder threads reported in does not matter. */
int rep_group_cmp(const void *a, const void *b)
{
    const diag_group *x = *(const diag_group *const *)a, *y = *(const diag_group *const *)b;
    uint64_t ox = (uint64_t)x->example_offset, oy = (uint64_t)y->example_offset; /* -1: last */
    if (ox != oy) return ox < oy ? -1 : 1;
    return strcmp(x->kind, y->kind);
}

/* Problems (warnings and errors) are causes; notes go under their own heading. */
void rep_diag_groups(ek_session *s, rep *r)
{
    pthread_mutex_lock(&s->diag_lock);
    size_t ng = s->dgroups.n;
    const diag_group **order = malloc((ng ? ng : 1) * sizeof *order);
    for (size_t i = 0; order && i < ng; i++)
        order[i] = &s->dgroups.v[i];
    if (order && ng > 1) qsort(order, ng, sizeof *order, rep_group_cmp);
    for (size_t i = 0; i < ng; i++) {
        const diag_group *g = order ? order[i] : &s->dgroups.v[i];
        if (!strcmp(g->kind, "perf.aux-no-data"))
            continue; /* reported above with the AUX records */
        if (g->sev >= EK_SEV_WARN) {
            rep_cause(r);
            one_group(s, &r->causes, g, r->level);
        } else {
            one_group(s, rep_note(r), g, r->level);
        }
    }
    free(order);
    pthread_mutex_unlock(&s->diag_lock);
}

