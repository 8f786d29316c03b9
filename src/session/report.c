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

static const char *kernel_remedy =
    "give the kernel as it ran: -k /path/to/vmlinux (symbols need CONFIG_KALLSYMS), or record "
    "with `perf record --kcore` (needs CONFIG_PROC_KCORE=y) and pass that folder (--kcore DIR), "
    "or --kallsyms FILE for symbols only";

static void hexid(ek_sbuf *out, const uint8_t *id, size_t len)
{
    while (len && !id[len - 1])
        len--;
    for (size_t i = 0; i < len; i++)
        ek_sbuf_printf(out, "%02x", id[i]);
}

static void plural(ek_sbuf *out, uint64_t n, const char *one, const char *many)
{
    ek_sbuf_printf(out, "%llu %s", (unsigned long long)n, n == 1 ? one : many);
}

/* "s" for a count other than one */
static const char *pl(uint64_t n)
{
    return n == 1 ? "" : "s";
}

/* A diagnostic's own text on one line: control characters as \xNN, one final '.' dropped (the
 * report adds its own punctuation after it). */
static void put_msg(ek_sbuf *out, const char *m)
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
    plural(out, st.queues, "queue", "queues");
    ek_sbuf_puts(out, ", ");
    plural(out, st.slices, "AUX slice", "AUX slices");
    ek_sbuf_puts(out, ", ");
    plural(out, st.trace_bytes, "byte", "bytes");
    ek_sbuf_puts(out, " of trace in the file");
    if (s->ran) {
        uint64_t data = 0;
        for (size_t i = 0; i < s->nqres; i++)
            data += s->qres[i].data_bytes + s->qres[i].noid_bytes;
        ek_sbuf_printf(out, " (%llu of them frame headers and padding)",
                       (unsigned long long)(st.trace_bytes > data ? st.trace_bytes - data : 0));
        ek_sbuf_puts(out, "\n  decoded: ");
        plural(out, st.trace_bytes_decoded, "trace byte", "trace bytes");
        ek_sbuf_puts(out, " -> ");
        plural(out, st.instructions, "instruction", "instructions");
        ek_sbuf_puts(out, ", ");
        plural(out, st.samples_branches, "branch sample", "branch samples");
        ek_sbuf_puts(out, ", ");
        plural(out, st.samples_instructions, "instruction sample", "instruction samples");
        ek_sbuf_putc(out, '\n');
    } else {
        ek_sbuf_putc(out, '\n');
    }
}

/* Where the report goes: numbered causes (problems: trace that did not become samples), and
 * notes (worth knowing, not problems) under their own heading, listed with --verbose only. */
typedef struct rep {
    ek_sbuf causes, notes;
    int ncauses, nnotes;
    int level;
} rep;

static void cause(rep *r)
{
    ek_sbuf_printf(&r->causes, "\n[%d] ", ++r->ncauses);
}

static ek_sbuf *note(rep *r)
{
    r->nnotes++;
    ek_sbuf_puts(&r->notes, "  - ");
    return &r->notes;
}

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
static int aux_problems(ek_session *s, rep *r)
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
        cause(r);
        plural(&r->causes, nodata, "AUX record has", "AUX records have");
        ek_sbuf_puts(&r->causes, " no trace data in the file (");
        plural(&r->causes, nodata_bytes, "byte", "bytes");
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
        ek_sbuf *o = note(r);
        ek_sbuf_puts(o, "snapshot mode: the trace of ");
        plural(o, over, "AUX record", "AUX records");
        ek_sbuf_puts(o, " (");
        plural(o, over_bytes, "byte", "bytes");
        ek_sbuf_puts(o, ") was overwritten in the AUX buffer before the next snapshot, as "
                        "snapshot mode does (perf record -S keeps what the buffer holds when a "
                        "snapshot is taken; a bigger -m ,SIZE keeps more)\n");
    }
    free(last_with_data);
    if (clipped) {
        cause(r);
        plural(&r->causes, clipped, "AUX record's", "AUX records'");
        ek_sbuf_puts(&r->causes, " data is cut short by the end of the file (");
        plural(&r->causes, clipped_bytes, "byte", "bytes");
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
        cause(r);
        plural(&r->causes, trunc, "AUX record is", "AUX records are");
        ek_sbuf_printf(&r->causes,
                       " flagged TRUNCATED (first at offset %#llx): the AUX buffer was full, "
                       "trace after those points was lost by the hardware/driver\n"
                       "    remedy: a bigger AUX buffer (perf record -m ,SIZE; simpleperf "
                       "--aux-buffer-size), address filters, or less traced code\n",
                       (unsigned long long)first_trunc);
    }
    if (refused) {
        cause(r);
        plural(&r->causes, refused, "AUX record is", "AUX records are");
        ek_sbuf_printf(&r->causes,
                       " empty and flagged TRUNCATED (first at offset %#llx): tracing could not "
                       "start then (the sink was busy with another perf session, or the AUX "
                       "buffer had no room), so that trace was never collected\n"
                       "    remedy: one perf session per sink at a time; a bigger AUX buffer "
                       "(perf record -m ,SIZE)\n",
                       (unsigned long long)first_refused);
    }
    if (coll) {
        cause(r);
        plural(&r->causes, coll, "AUX record is", "AUX records are");
        ek_sbuf_printf(&r->causes,
                       " flagged COLLISION (first at offset %#llx): another event wrote the "
                       "same sink; parts of that trace are someone else's\n"
                       "    remedy: do not share the sink between perf sessions\n",
                       (unsigned long long)first_coll);
    }
    if (part) {
        ek_sbuf *o = note(r);
        plural(o, part, "AUX record is", "AUX records are");
        ek_sbuf_puts(o, " flagged PARTIAL: the hardware buffer was read while tracing went on; "
                        "a packet may be cut at the boundary\n");
    }
    if (s->lost_records) {
        cause(r);
        plural(&r->causes, s->lost_records, "LOST record", "LOST records");
        ek_sbuf_puts(&r->causes, ": ");
        plural(&r->causes, s->lost_events, "sideband event was", "sideband events were");
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
        hexid(out, d->found_id, d->found_id_len);
        ek_sbuf_puts(out, ", the recording says ");
        hexid(out, d->build_id, d->build_id_len);
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
        ek_sbuf_printf(out, "    remedy: %s\n", kernel_remedy);
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
    plural(out, m->count, "place", "places");
    ek_sbuf_puts(out, " in the trace, ");
    plural(out, m->bytes, "trace byte", "trace bytes");
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

static void one_miss(ek_session *s, rep *r, const miss *m)
{
    cause(r);
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
    plural(out, m->count, "place", "places");
    ek_sbuf_puts(out, " in the trace, ");
    plural(out, m->bytes, "trace byte", "trace bytes");
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
                hexid(out, k->build_id, k->build_id_len);
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
        ek_sbuf_printf(out, "    remedy: %s\n", kernel_remedy);
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
    put_msg(out, g->msg ? g->msg : g->kind);
    ek_sbuf sub = EK_SBUF_INIT; /* what goes in parentheses */
    if (g->count != 1) ek_sbuf_printf(&sub, "%llu times", (unsigned long long)g->count);
    const char *sep = g->count != 1 ? ", first " : "";
    if (g->file && strcmp(g->file, s->path)) {
        ek_sbuf_printf(&sub, "%sin ", sep);
        put_msg(&sub, g->file);
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
static int group_cmp(const void *a, const void *b)
{
    const diag_group *x = *(const diag_group *const *)a, *y = *(const diag_group *const *)b;
    uint64_t ox = (uint64_t)x->example_offset, oy = (uint64_t)y->example_offset; /* -1: last */
    if (ox != oy) return ox < oy ? -1 : 1;
    return strcmp(x->kind, y->kind);
}

/* Problems (warnings and errors) are causes; notes go under their own heading. */
static void diag_groups(ek_session *s, rep *r)
{
    pthread_mutex_lock(&s->diag_lock);
    size_t ng = s->dgroups.n;
    const diag_group **order = malloc((ng ? ng : 1) * sizeof *order);
    for (size_t i = 0; order && i < ng; i++)
        order[i] = &s->dgroups.v[i];
    if (order && ng > 1) qsort(order, ng, sizeof *order, group_cmp);
    for (size_t i = 0; i < ng; i++) {
        const diag_group *g = order ? order[i] : &s->dgroups.v[i];
        if (!strcmp(g->kind, "perf.aux-no-data"))
            continue; /* reported above with the AUX records */
        if (g->sev >= EK_SEV_WARN) {
            cause(r);
            one_group(s, &r->causes, g, r->level);
        } else {
            one_group(s, note(r), g, r->level);
        }
    }
    free(order);
    pthread_mutex_unlock(&s->diag_lock);
}

/* ---- the report ------------------------------------------------------------------------------------ */

static void full(ek_session *s, ek_sbuf *out, int level)
{
    header(s, out);
    rep r;
    memset(&r, 0, sizeof r);
    r.level = level;
    aux_problems(s, &r);
    agg a;
    memset(&a, 0, sizeof a);
    merge(s, &a);
    if (a.misses.n > 1)
        qsort(a.misses.v, a.misses.n, sizeof *a.misses.v, miss_cmp);
    for (size_t i = 0; i < a.misses.n; i++)
        one_miss(s, &r, &a.misses.v[i]);
    /* modules whose calls to the kernel could not be resolved */
    for (size_t i = 0; i < dso_reg_count(s->reg); i++) {
        const as_dso *d = dso_reg_at(s->reg, i);
        if (d->kind != DSO_KMODULE || !d->used || !d->relocs_unresolved)
            continue;
        cause(&r);
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
        cause(&r);
        ek_sbuf_printf(&r.causes, "%s: ", g->kind);
        plural(&r.causes, g->bytes, "trace byte", "trace bytes");
        ek_sbuf_puts(&r.causes, " in ");
        plural(&r.causes, g->count, "place", "places");
        ek_sbuf_printf(&r.causes, " (first at offset %#llx)\n",
                       (unsigned long long)g->first_offset);
        if (!strcmp(g->kind, GAP_NO_ID))
            ek_sbuf_puts(&r.causes, "    why: the frame that named their trace ID is not in the "
                                    "AUX slice (the sink's buffer wrapped over it, or it went "
                                    "with an earlier slice)\n");
    }
    diag_groups(s, &r);
    if (r.ncauses) {
        ek_sbuf_printf(out, "\nNot turned into samples (%d cause%s):\n", r.ncauses,
                       pl((uint64_t)r.ncauses));
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
                       (unsigned long long)kernel, pl(kernel), (unsigned long long)kbytes,
                       pl(kbytes));
        any = 1;
    }
    if (user) {
        ek_sbuf_printf(out,
                       "etmkit: %llu place%s in user code not decoded (%llu trace byte%s): "
                       "files missing or of another build; use --symfs DIR or a build-id "
                       "cache\n",
                       (unsigned long long)user, pl(user), (unsigned long long)ubytes, pl(ubytes));
        any = 1;
    }
    if (other) {
        ek_sbuf_printf(out,
                       "etmkit: %llu place%s where the files hold no code at the traced "
                       "address\n",
                       (unsigned long long)other, pl(other));
        any = 1;
    }
    /* problems in the file and the trace: one line per kind, with where it first happened */
    pthread_mutex_lock(&s->diag_lock);
    unsigned shown = 0, more = 0;
    size_t ng = s->dgroups.n;
    const diag_group **order = malloc((ng ? ng : 1) * sizeof *order);
    for (size_t i = 0; order && i < ng; i++)
        order[i] = &s->dgroups.v[i];
    if (order && ng > 1) qsort(order, ng, sizeof *order, group_cmp);
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
        ek_sbuf_printf(out, "etmkit: ... and %u more kind%s of problem%s\n", more, pl(more),
                       pl(more));
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
