/* The doctor's words for a session's account (etmkit/account_out.h): the full account, numbered
 * causes with what to do about them and notes apart, and the few lines `etmkit script` prints
 * on stderr. The facts come from the account (src/session/account.c); only the words are
 * made here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/account_out.h"
#include "etmkit/etmkit.h"
#include "etmkit/config.h"
#include "etmkit/symbols.h"
#include "account_int.h"

#define X(v) ((unsigned long long)(v))

static const char *const kernel_remedy =
    "give the kernel as it ran: -k /path/to/vmlinux (symbols need CONFIG_KALLSYMS), or record "
    "with `perf record --kcore` (needs CONFIG_PROC_KCORE=y) and pass that folder (--kcore DIR), "
    "or --kallsyms FILE for symbols only";

static void hexid(ek_sbuf *out, const uint8_t *id, size_t len)
{
    len = account_id_len(id, len);
    for (size_t i = 0; i < len; i++)
        ek_sbuf_printf(out, "%02x", id[i]);
}

static void plural(ek_sbuf *out, uint64_t n, const char *one, const char *many)
{
    ek_sbuf_printf(out, "%llu %s", X(n), n == 1 ? one : many);
}

/* "s" for a count other than one */
static const char *pl(uint64_t n)
{
    return n == 1 ? "" : "s";
}

/* n bytes of text on one line: control characters as \xNN */
static void put_escaped(ek_sbuf *out, const char *m, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)m[i];
        if (c < 0x20 || c == 0x7f)
            ek_sbuf_printf(out, "\\x%02x", c);
        else
            ek_sbuf_putc(out, (char)c);
    }
}

/* A diagnostic's own text on one line: its line ends and one final '.' dropped (the account
 * adds its own punctuation after it). */
static void put_msg(ek_sbuf *out, const char *m)
{
    size_t n = m ? strlen(m) : 0;
    while (n && (m[n - 1] == '\n' || m[n - 1] == '\r'))
        n--;
    if (n && m[n - 1] == '.') n--;
    put_escaped(out, m, n);
}

/* ---- the header ------------------------------------------------------------------------------------ */

/* A trace snapshot: its sources, one line each. */
static void snap_header(const ek_account *a, ek_sbuf *out)
{
    const ek_session_stats *st = &a->stats;
    ek_sbuf_printf(out, "%s: %s, ", a->path,
                   a->trace_snapshot == 2 ? "trace file (configured by options)"
                                          : "trace snapshot");
    plural(out, a->nsources, "trace source", "trace sources");
    ek_sbuf_puts(out, " in ");
    plural(out, st->queues, "buffer", "buffers");
    ek_sbuf_puts(out, ", ");
    plural(out, a->ncpus, "core", "cores");
    ek_sbuf_puts(out, ", ");
    plural(out, st->trace_bytes, "byte", "bytes");
    ek_sbuf_printf(out, " of trace, %s\n",
                   a->timeless ? "no time stamps" : "with time stamps (raw values as times)");
    if (!a->ran) return;
    ek_sbuf_puts(out, "  decoded: ");
    plural(out, st->instructions, "instruction", "instructions");
    ek_sbuf_puts(out, ", ");
    plural(out, st->samples_branches, "branch sample", "branch samples");
    ek_sbuf_puts(out, ", ");
    plural(out, st->samples_instructions, "instruction sample", "instruction samples");
    ek_sbuf_puts(out, "\n  trace ID  source        protocol  core        buffer      bytes    "
                      "packets  instructions  sync losses  errors  unreadable\n");
    for (size_t i = 0; i < a->nsources; i++) {
        const ek_account_source *x = &a->sources[i];
        char core[32];
        if (x->core)
            snprintf(core, sizeof core, "%d %s", (int)x->cpu, x->core);
        else
            snprintf(core, sizeof core, "-");
        ek_sbuf_printf(out, "  0x%02x      %-13s %-9s %-11s %-9s", (unsigned)x->trace_id,
                       x->name ? x->name : "?", ek_protocol_name((ek_protocol)x->protocol), core,
                       x->buffer ? x->buffer : "?");
        if (!x->decoded) {
            ek_sbuf_puts(out, "  not decoded (etmkit does not know its protocol)\n");
            continue;
        }
        ek_sbuf_printf(out, " %8llu %10llu %13llu %12llu %7llu %11llu\n", X(x->bytes),
                       X(x->packets), X(x->instructions), X(x->sync_losses),
                       X(x->errors + x->bad_packets), X(x->nacc));
    }
}

static void header(const ek_account *a, ek_sbuf *out)
{
    if (a->trace_snapshot) {
        snap_header(a, out);
        return;
    }
    ek_sbuf_printf(out, "%s: ", a->path);
    if (!a->coresight) {
        ek_sbuf_puts(out, "no CoreSight (cs_etm) trace configuration in this recording\n");
        return;
    }
    ek_sbuf_printf(out, "CoreSight trace of %zu CPU%s (", a->ncpus, a->ncpus == 1 ? "" : "s");
    for (unsigned p = 0, n = 0; p < 32; p++)
        if (a->protocols & (1u << p))
            ek_sbuf_printf(out, "%s%s", n++ ? "+" : "", ek_protocol_name((ek_protocol)p));
    ek_sbuf_printf(out, "), %s, %s\n", a->snapshot ? "snapshot mode" : "full trace",
                   a->timeless ? "no time stamps used" : "with time stamps");
    const ek_session_stats *st = &a->stats;
    ek_sbuf_puts(out, "  ");
    plural(out, st->queues, "queue", "queues");
    ek_sbuf_puts(out, ", ");
    plural(out, st->slices, "AUX slice", "AUX slices");
    ek_sbuf_puts(out, ", ");
    plural(out, st->trace_bytes, "byte", "bytes");
    ek_sbuf_puts(out, " of trace in the file");
    if (a->ran) {
        ek_sbuf_printf(out, " (%llu of them frame headers and padding)", X(a->frame_bytes));
        ek_sbuf_puts(out, "\n  decoded: ");
        plural(out, st->trace_bytes_decoded, "trace byte", "trace bytes");
        ek_sbuf_puts(out, " -> ");
        plural(out, st->instructions, "instruction", "instructions");
        ek_sbuf_puts(out, ", ");
        plural(out, st->samples_branches, "branch sample", "branch samples");
        ek_sbuf_puts(out, ", ");
        plural(out, st->samples_instructions, "instruction sample", "instruction samples");
    }
    ek_sbuf_putc(out, '\n');
}

/* ---- remedies -------------------------------------------------------------------------------------- */

/* The remedy line of an item (nothing for EK_REMEDY_NONE). */
static void remedy(const ek_account *a, const ek_account_item *it, ek_sbuf *out)
{
    const ek_account_dso *d = it->dso;
    const ek_account_jit *j = it->jit;
    switch (it->remedy) {
    case EK_REMEDY_RECORD_AGAIN:
        ek_sbuf_puts(out, "    remedy: record again; with simpleperf give a bigger "
                          "--aux-buffer-size / --user-buffer-size, with perf a bigger -m ,SIZE\n");
        break;
    case EK_REMEDY_COPY_AGAIN:
        ek_sbuf_puts(out, "    remedy: the file is truncated; copy it again\n");
        break;
    case EK_REMEDY_BIGGER_AUX:
        ek_sbuf_puts(out, "    remedy: a bigger AUX buffer (perf record -m ,SIZE; simpleperf "
                          "--aux-buffer-size), address filters, or less traced code\n");
        break;
    case EK_REMEDY_ONE_SESSION:
        ek_sbuf_puts(out, "    remedy: one perf session per sink at a time; a bigger AUX buffer "
                          "(perf record -m ,SIZE)\n");
        break;
    case EK_REMEDY_UNSHARED_SINK:
        ek_sbuf_puts(out, "    remedy: do not share the sink between perf sessions\n");
        break;
    case EK_REMEDY_BIGGER_PERF_BUFFER:
        ek_sbuf_puts(out, "    remedy: a bigger perf buffer (-m)\n");
        break;
    case EK_REMEDY_KERNEL_IMAGE:
        ek_sbuf_printf(out, "    remedy: %s\n", kernel_remedy);
        break;
    case EK_REMEDY_KALLSYMS:
        ek_sbuf_puts(out, "    remedy: --kallsyms FILE or -k vmlinux\n");
        break;
    case EK_REMEDY_SYMFS:
        if (!d) break;
        ek_sbuf_printf(out, "    remedy: put the file at <DIR>%s and pass --symfs DIR", d->name);
        if (d->build_id_len) {
            char hex[64] = "";
            ek_build_id_hex(d->build_id, d->build_id_len, hex, sizeof hex);
            ek_sbuf_printf(out, ", or into the build-id cache as %s/.build-id/%.2s/%s/elf",
                           a->buildid_dir ? a->buildid_dir : "~/.debug", hex, hex + 2);
        }
        ek_sbuf_puts(out, " (`perf archive` / `perf buildid-cache -a FILE` on the traced "
                          "system)\n");
        break;
    case EK_REMEDY_NO_FILE:
        ek_sbuf_puts(out, "    remedy: none from files; for JIT code, record with perf's jitdump "
                          "support\n");
        break;
    case EK_REMEDY_JIT_COPY:
        ek_sbuf_printf(out,
                       "    remedy: copy the jit-%d.dump the JIT wrote on the traced system "
                       "to <DIR>%s and pass --symfs DIR, or give it with --jitdump FILE\n",
                       (int)it->pid, j && j->recorded ? j->recorded : "");
        break;
    case EK_REMEDY_GIVE_CODE:
        ek_sbuf_puts(out, "    remedy: give the code: --image ELF@ADDR (an ELF file whose "
                          "lowest segment loads at ADDR) or --image FILE@ADDR (raw bytes)");
        if (it->name)
            ek_sbuf_printf(out, ", or add a [dump] section (file=, address=) to %s", it->name);
        ek_sbuf_putc(out, '\n');
        break;
    case EK_REMEDY_JIT_CLOCK:
        ek_sbuf_puts(out, "    remedy: record with perf record -k 1 (CLOCK_MONOTONIC, the "
                          "jitdump's clock)\n");
        break;
    case EK_REMEDY_JIT_WRITE:
        ek_sbuf_puts(out, "    remedy: have the JIT write a jitdump (perf's JVMTI agent "
                          "libperf-jvmti.so, node --perf-prof, LLVM's PerfJITEventListener) and "
                          "record with perf record -k 1; or give one with --jitdump FILE\n");
        break;
    default:
        break;
    }
}

/* ---- the items ------------------------------------------------------------------------------------- */

static void aux_no_data(const ek_account *a, const ek_account_item *it, ek_sbuf *out, int level)
{
    plural(out, it->count, "AUX record has", "AUX records have");
    ek_sbuf_puts(out, " no trace data in the file (");
    plural(out, it->bytes, "byte", "bytes");
    ek_sbuf_puts(out, " of trace announced, none stored):\n");
    unsigned shown = 0;
    for (size_t i = 0; i < a->naux_no_data; i++) {
        const ek_account_aux *r = &a->aux_no_data[i];
        if (r->overwritten) continue;
        if (level < EK_REPORT_VERBOSE && shown == 8) {
            ek_sbuf_printf(out, "      ... and %llu more (--verbose lists them all)\n",
                           X(it->count - shown));
            break;
        }
        shown++;
        ek_sbuf_printf(out,
                       "      AUX record #%lld at offset %#llx: cpu %d, aux offset %#llx, "
                       "size %#llx\n",
                       (long long)r->record, X(r->offset), (int)r->cpu, X(r->aux_offset),
                       X(r->aux_size));
    }
    ek_sbuf_puts(out, "    why: the PERF_RECORD_AUXTRACE records that hold the data are missing "
                      "(the recorder did not copy the AUX buffer out: it stopped early, lost it, "
                      "or the file was cut)\n");
}

static void dso_where(const ek_account_dso *d, ek_sbuf *out)
{
    switch (d->status) {
    case EK_ACCT_FILE_NOT_FOUND:
        if (d->kind == EK_ACCT_DSO_KERNEL)
            ek_sbuf_puts(out, "no kernel image was given");
        else
            ek_sbuf_printf(out, "not found (looked for %s)", d->tried ? d->tried : d->name);
        if (d->kind == EK_ACCT_DSO_KMODULE && d->build_id_len == 0)
            ek_sbuf_puts(out, "; no build-id recorded for it");
        break;
    case EK_ACCT_FILE_BUILD_ID_MISMATCH:
        ek_sbuf_printf(out, "%s has build-id ", d->tried ? d->tried : d->name);
        hexid(out, d->found_id, d->found_id_len);
        ek_sbuf_puts(out, ", the recording says ");
        hexid(out, d->build_id, d->build_id_len);
        ek_sbuf_puts(out, ": another build of the file, its code would be wrong");
        break;
    case EK_ACCT_FILE_BAD:
        ek_sbuf_printf(out, "%s is not a usable ELF file", d->tried ? d->tried : d->name);
        break;
    case EK_ACCT_FILE_NONE:
        ek_sbuf_puts(out, "anonymous or generated code (JIT, memfd, vdso): no file to read");
        break;
    default:
        ek_sbuf_puts(out, "loaded");
        break;
    }
}

static void places(const ek_account_item *it, ek_sbuf *out)
{
    ek_sbuf_puts(out, "\n    ");
    plural(out, it->count, "place", "places");
    if (it->code == EK_ACCT_CODE_NO_IMAGE) {
        /* (a snapshot: the decoder waits for the next address; no bytes counted) */
        ek_sbuf_printf(out, " in the trace where the code could not be read (the first at trace "
                            "index %#llx)\n",
                       X(it->first_offset));
        return;
    }
    ek_sbuf_puts(out, " in the trace, ");
    plural(out, it->bytes, "trace byte", "trace bytes");
    ek_sbuf_printf(out, " not decoded (first at file offset %#llx)\n", X(it->first_offset));
}

/* Anonymous executable memory: JIT code. What the recording says about the JIT's jitdump, and
 * what to supply. */
static void jit_code(const ek_account *a, const ek_account_item *it, ek_sbuf *out)
{
    const ek_account_jit *j = it->jit;
    ek_sbuf_printf(out, "JIT code? anonymous executable memory (%s) of pid %d at 0x%llx..0x%llx: ",
                   it->dso ? it->dso->name : "?", (int)it->pid, X(it->lo), X(it->hi));
    if (!j->mapped) {
        ek_sbuf_printf(out,
                       "the process mapped no jitdump (jit-%d.dump), so nothing tells what "
                       "code was there",
                       (int)it->pid);
    } else if (!j->read) {
        ek_sbuf_printf(out, "its jitdump %s", j->recorded ? j->recorded : "");
        if (j->record >= 0) ek_sbuf_printf(out, " (MMAP2 record %lld)", (long long)j->record);
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
                       j->path, X(j->loads), X(j->moves));
    }
    places(it, out);
    remedy(a, it, out);
    if (j->perf_map)
        ek_sbuf_printf(out,
                       "    note: %s names the JIT's functions but holds no code: names "
                       "alone cannot be decoded\n",
                       j->perf_map);
    else
        ek_sbuf_printf(out,
                       "    note: perf-%d.map (under symfs /tmp or in /tmp) would only name "
                       "the JIT's functions: a jitdump holds the code\n",
                       (int)it->pid);
}

static void code(const ek_account *a, const ek_account_item *it, ek_sbuf *out)
{
    const ek_account_dso *d = it->dso;
    if (it->jit) {
        jit_code(a, it, out);
        return;
    }
    switch (it->code) {
    case EK_ACCT_CODE_NO_MAP:
        ek_sbuf_printf(out, "code of pid %d at 0x%llx..0x%llx is in no map the recording knows",
                       (int)it->pid, X(it->lo), X(it->hi));
        break;
    case EK_ACCT_CODE_NO_KMAP:
        ek_sbuf_printf(out,
                       "kernel code at 0x%llx..0x%llx is in no kernel map the recording "
                       "knows",
                       X(it->lo), X(it->hi));
        break;
    case EK_ACCT_CODE_KERNEL:
        ek_sbuf_printf(out, "kernel code at 0x%llx..0x%llx could not be read: ", X(it->lo),
                       X(it->hi));
        if (d) dso_where(d, out);
        break;
    case EK_ACCT_CODE_DSO:
        if (d && d->kind == EK_ACCT_DSO_KMODULE)
            ek_sbuf_printf(out, "kernel module %s", d->name);
        else
            ek_sbuf_printf(out, "%s", d ? d->name : "?");
        if (it->pid >= 0) ek_sbuf_printf(out, " (pid %d)", (int)it->pid);
        ek_sbuf_printf(out, " at 0x%llx..0x%llx: ", X(it->lo), X(it->hi));
        if (d) dso_where(d, out);
        break;
    case EK_ACCT_CODE_OUTSIDE:
        ek_sbuf_printf(out, "%s holds no code at 0x%llx..0x%llx", d ? d->name : "?", X(it->lo),
                       X(it->hi));
        break;
    case EK_ACCT_CODE_NO_IMAGE:
        ek_sbuf_printf(out, "code at 0x%llx..0x%llx is in no memory dump", X(it->lo), X(it->hi));
        if (it->pid >= 0)
            ek_sbuf_printf(out, " (trace ID 0x%02x)", (unsigned)it->pid);
        else
            ek_sbuf_puts(out, " (several trace IDs)");
        break;
    }
    places(it, out);
    if ((it->code == EK_ACCT_CODE_KERNEL || it->code == EK_ACCT_CODE_NO_KMAP) &&
        (a->kernel_release || a->kernel_build_id_len)) {
        /* say which kernel is needed */
        ek_sbuf_puts(out, "    the kernel that ran:");
        if (a->kernel_release) ek_sbuf_printf(out, " %s", a->kernel_release);
        if (a->kernel_build_id_len) {
            ek_sbuf_puts(out, " (build-id ");
            hexid(out, a->kernel_build_id, a->kernel_build_id_len);
            ek_sbuf_putc(out, ')');
        }
        ek_sbuf_putc(out, '\n');
    }
    if (it->code == EK_ACCT_CODE_NO_MAP)
        ek_sbuf_puts(out, "    why: no MMAP/MMAP2 record covers these addresses (JIT code, a lost "
                          "MMAP record, or tracing started before the process was known)\n");
    else if (it->code == EK_ACCT_CODE_OUTSIDE)
        ek_sbuf_puts(out, "    why: the address is past the end of the file's code (a different "
                          "build of the file?)\n");
    remedy(a, it, out);
}

/* One diagnostic group: its message, how often, where first; its id (kind) with --verbose. */
static void diag(const ek_account *a, const ek_account_diag *g, ek_sbuf *out, int level)
{
    put_msg(out, g->msg ? g->msg : g->kind);
    ek_sbuf sub = EK_SBUF_INIT; /* what goes in parentheses */
    if (g->count != 1) ek_sbuf_printf(&sub, "%llu times", X(g->count));
    const char *sep = g->count != 1 ? ", first " : "";
    if (g->file && strcmp(g->file, a->path)) {
        ek_sbuf_printf(&sub, "%sin ", sep);
        put_escaped(&sub, g->file, strlen(g->file)); /* (a name, all of it: "etb." too) */
        sep = ", ";
    }
    if (g->record >= 0) {
        ek_sbuf_printf(&sub, "%srecord %lld", sep, (long long)g->record);
        sep = ", ";
    }
    if (g->example_offset >= 0) {
        ek_sbuf_printf(&sub, "%sat offset %#llx", sep, X(g->example_offset));
        sep = ", ";
    }
    if (g->trace_id >= 0) ek_sbuf_printf(&sub, "%strace ID %#x", sep, (unsigned)g->trace_id);
    if (sub.len) ek_sbuf_printf(out, " (%s)", sub.p);
    ek_sbuf_free(&sub);
    if (level >= EK_REPORT_VERBOSE) ek_sbuf_printf(out, " [%s]", g->kind);
    ek_sbuf_putc(out, '\n');
    if (g->noffsets > 1) {
        ek_sbuf_puts(out, "    at offsets");
        for (unsigned k = 0; k < g->noffsets && k < 8; k++)
            ek_sbuf_printf(out, " %#llx", X(g->offsets[k]));
        if (g->count > g->noffsets) ek_sbuf_puts(out, " ...");
        ek_sbuf_putc(out, '\n');
    }
}

void ek_account_item_text(const ek_account *a, const ek_account_item *it, ek_sbuf *out,
                          int level)
{
    switch (it->kind) {
    case EK_ACCT_AUX_NO_DATA:
        aux_no_data(a, it, out, level);
        break;
    case EK_ACCT_AUX_OVERWRITTEN:
        ek_sbuf_puts(out, "snapshot mode: the trace of ");
        plural(out, it->count, "AUX record", "AUX records");
        ek_sbuf_puts(out, " (");
        plural(out, it->bytes, "byte", "bytes");
        ek_sbuf_puts(out, ") was overwritten in the AUX buffer before the next snapshot, as "
                          "snapshot mode does (perf record -S keeps what the buffer holds when a "
                          "snapshot is taken; a bigger -m ,SIZE keeps more)\n");
        return;
    case EK_ACCT_AUX_CLIPPED:
        plural(out, it->count, "AUX record's", "AUX records'");
        ek_sbuf_puts(out, " data is cut short by the end of the file (");
        plural(out, it->bytes, "byte", "bytes");
        ek_sbuf_puts(out, " missing)\n");
        break;
    case EK_ACCT_AUX_TRUNCATED:
        plural(out, it->count, "AUX record is", "AUX records are");
        ek_sbuf_printf(out,
                       " flagged TRUNCATED (first at offset %#llx): the AUX buffer was full, "
                       "trace after those points was lost by the hardware/driver\n",
                       X(it->first_offset));
        break;
    case EK_ACCT_AUX_REFUSED:
        plural(out, it->count, "AUX record is", "AUX records are");
        ek_sbuf_printf(out,
                       " empty and flagged TRUNCATED (first at offset %#llx): tracing could not "
                       "start then (the sink was busy with another perf session, or the AUX "
                       "buffer had no room), so that trace was never collected\n",
                       X(it->first_offset));
        break;
    case EK_ACCT_AUX_COLLISION:
        plural(out, it->count, "AUX record is", "AUX records are");
        ek_sbuf_printf(out,
                       " flagged COLLISION (first at offset %#llx): another event wrote the "
                       "same sink; parts of that trace are someone else's\n",
                       X(it->first_offset));
        break;
    case EK_ACCT_AUX_PARTIAL:
        plural(out, it->count, "AUX record is", "AUX records are");
        ek_sbuf_puts(out, " flagged PARTIAL: the hardware buffer was read while tracing went on; "
                          "a packet may be cut at the boundary\n");
        return;
    case EK_ACCT_LOST:
        plural(out, it->count, "LOST record", "LOST records");
        ek_sbuf_puts(out, ": ");
        plural(out, it->extra, "sideband event was", "sideband events were");
        ek_sbuf_puts(out, " dropped, maps or threads may be missing\n");
        break;
    case EK_ACCT_CODE:
        code(a, it, out);
        return;
    case EK_ACCT_KMOD_RELOCS: {
        const ek_account_dso *d = it->dso;
        uint64_t un = d ? d->relocs_unresolved : it->count;
        ek_sbuf_printf(out,
                       "%s: %llu of %llu branch relocations %s that %s not known; "
                       "the decoder takes those calls as indirect and waits for the "
                       "next address in the trace\n",
                       d ? d->name : "?", X(un), X((d ? d->relocs : 0) + un),
                       un == 1 ? "names a kernel symbol" : "name kernel symbols",
                       un == 1 ? "is" : "are");
        break;
    }
    case EK_ACCT_GAP:
        ek_sbuf_printf(out, "%s: ", it->name ? it->name : "?");
        plural(out, it->bytes, "trace byte", "trace bytes");
        ek_sbuf_puts(out, " in ");
        plural(out, it->count, "place", "places");
        ek_sbuf_printf(out, " (first at offset %#llx)\n", X(it->first_offset));
        if (it->code == EK_ACCT_GAP_NO_ID)
            ek_sbuf_puts(out, "    why: the frame that named their trace ID is not in the "
                              "AUX slice (the sink's buffer wrapped over it, or it went "
                              "with an earlier slice)\n");
        break;
    case EK_ACCT_DIAG:
        if (it->diag) diag(a, it->diag, out, level);
        return;
    default:
        return;
    }
    remedy(a, it, out);
}

/* ---- the whole account ----------------------------------------------------------------------------- */

static void full(const ek_account *a, ek_sbuf *out, int level)
{
    header(a, out);
    ek_sbuf causes = EK_SBUF_INIT, notes = EK_SBUF_INIT;
    int ncauses = 0, nnotes = 0;
    for (size_t i = 0; i < a->nitems; i++) {
        const ek_account_item *it = &a->items[i];
        if (it->problem) {
            ek_sbuf_printf(&causes, "\n[%d] ", ++ncauses);
            ek_account_item_text(a, it, &causes, level);
        } else {
            nnotes++;
            ek_sbuf_puts(&notes, "  - ");
            ek_account_item_text(a, it, &notes, level);
        }
    }
    if (ncauses) {
        ek_sbuf_printf(out, "\nNot turned into samples (%d cause%s):\n", ncauses,
                       pl((uint64_t)ncauses));
        ek_sbuf_put(out, causes.p, causes.len);
    } else {
        ek_sbuf_puts(out, "\nAll trace was decoded.\n");
    }
    if (nnotes && level >= EK_REPORT_VERBOSE) {
        ek_sbuf_printf(out, "\nNotes (not problems):\n");
        ek_sbuf_put(out, notes.p, notes.len);
    } else if (nnotes) {
        ek_sbuf_printf(out, "\n%d %s (--verbose shows %s).\n", nnotes,
                       nnotes == 1 ? "note, not a problem" : "notes, not problems",
                       nnotes == 1 ? "it" : "them");
    }
    ek_sbuf_free(&causes);
    ek_sbuf_free(&notes);
}

/* A few lines for stderr after `etmkit script`. */
static void summary(const ek_account *a, ek_sbuf *out)
{
    uint64_t kernel = 0, kbytes = 0, user = 0, ubytes = 0, other = 0, nodump = 0, nranges = 0;
    int kernel_missing = 0;
    for (size_t i = 0; i < a->nitems; i++) {
        const ek_account_item *m = &a->items[i];
        if (m->kind != EK_ACCT_CODE) continue;
        if (m->code == EK_ACCT_CODE_KERNEL || m->code == EK_ACCT_CODE_NO_KMAP) {
            kernel += m->count;
            kbytes += m->bytes;
            kernel_missing = 1;
        } else if (m->code == EK_ACCT_CODE_DSO || m->code == EK_ACCT_CODE_NO_MAP) {
            user += m->count;
            ubytes += m->bytes;
        } else if (m->code == EK_ACCT_CODE_NO_IMAGE) {
            nodump += m->count;
            nranges++;
        } else {
            other += m->count;
        }
    }
    /* the AUX records without data that are a problem: snapshot mode's overwritten ones are
     * notes (the doctor's "All trace was decoded" and no remedy) and send nobody there */
    const ek_account_aux *first = NULL;
    uint64_t nodata = 0;
    for (size_t i = 0; i < a->naux_no_data; i++) {
        const ek_account_aux *r = &a->aux_no_data[i];
        if (r->overwritten) continue;
        nodata++;
        if (!first || r->offset < first->offset) first = r;
    }
    int any = 0;
    if (nodata) {
        ek_sbuf_printf(out, "etmkit: %llu AUX record%s without trace data in the file (first: "
                            "record #%lld at offset %#llx)\n",
                       X(nodata), pl(nodata), (long long)first->record, X(first->offset));
        any = 1;
    }
    if (kernel_missing) {
        ek_sbuf_printf(out,
                       "etmkit: %llu place%s in kernel code not decoded (%llu trace byte%s): "
                       "no kernel image; use -k vmlinux, --kcore DIR or --kallsyms FILE\n",
                       X(kernel), pl(kernel), X(kbytes), pl(kbytes));
        any = 1;
    }
    if (user) {
        ek_sbuf_printf(out,
                       "etmkit: %llu place%s in user code not decoded (%llu trace byte%s): "
                       "files missing or of another build; use --symfs DIR or a build-id "
                       "cache\n",
                       X(user), pl(user), X(ubytes), pl(ubytes));
        any = 1;
    }
    if (nodump) {
        ek_sbuf_printf(out,
                       "etmkit: %llu place%s in code that no memory dump holds (%llu address "
                       "range%s): give it with --image ELF@ADDR or FILE@ADDR, or a [dump] section\n",
                       X(nodump), pl(nodump), X(nranges), pl(nranges));
        any = 1;
    }
    if (other) {
        ek_sbuf_printf(out,
                       "etmkit: %llu place%s where the files hold no code at the traced "
                       "address\n",
                       X(other), pl(other));
        any = 1;
    }
    /* trace lost for another reason (no configuration for its trace ID, no synchronisation,
     * bad packets or frames): one line per cause, with where it first happened */
    for (size_t i = 0; i < a->nitems; i++) {
        const ek_account_item *it = &a->items[i];
        if (it->kind != EK_ACCT_GAP || !it->problem) continue;
        ek_sbuf_printf(out, "etmkit: %llu trace byte%s not decoded: %s", X(it->bytes),
                       pl(it->bytes), it->name ? it->name : "other");
        if (it->first_offset >= 0)
            ek_sbuf_printf(out, " (%llu place%s, the first at offset %#llx)", X(it->count),
                           pl(it->count), X((uint64_t)it->first_offset));
        ek_sbuf_putc(out, '\n');
        any = 1;
    }
    /* problems in the file and the trace: one line per kind, with where it first happened */
    unsigned shown = 0, more = 0;
    for (size_t i = 0; i < a->nitems; i++) {
        const ek_account_item *it = &a->items[i];
        if (it->kind != EK_ACCT_DIAG || !it->problem || !it->diag) continue;
        const ek_account_diag *g = it->diag;
        if (shown == 10) {
            more++;
            continue;
        }
        shown++;
        ek_sbuf_printf(out, "etmkit: %s", g->first ? g->first : g->kind);
        if (g->count > 1) ek_sbuf_printf(out, " (%llu times)", X(g->count));
        ek_sbuf_putc(out, '\n');
    }
    if (more)
        ek_sbuf_printf(out, "etmkit: ... and %u more kind%s of problem%s\n", more, pl(more),
                       pl(more));
    if (shown) any = 1;
    if (any && a->trace_snapshot == 2)
        ek_sbuf_printf(out,
                       "etmkit: run 'etmkit doctor' with the same --trace %s options for the "
                       "details and remedies\n",
                       a->path);
    else if (any)
        ek_sbuf_printf(out, "etmkit: run 'etmkit doctor %s' for the details and remedies\n",
                       a->path);
}

void ek_account_text(const ek_account *a, ek_sbuf *out, int level)
{
    if (level <= EK_REPORT_SUMMARY)
        summary(a, out);
    else
        full(a, out, level);
}

void ek_session_report(ek_session *s, ek_sbuf *out, int level)
{
    ek_account *a = NULL;
    if (ek_session_account(s, &a)) return;
    ek_account_text(a, out, level);
    ek_account_free(a);
}
