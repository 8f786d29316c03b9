/* A session's account as one JSON document (etmkit/account_out.h; `etmkit doctor
 * --format=json`). Its schema is docs/DOCTOR.md's: the same facts as the text, as fields, and
 * each item's text as the doctor words it. */
#include <string.h>

#include "etmkit/account_out.h"
#include "etmkit/config.h"
#include "etmkit/sbuf.h"
#include "account_int.h"

#define X(v) ((unsigned long long)(v))

static void key(ek_sbuf *out, int *first, const char *k)
{
    ek_sbuf_puts(out, *first ? "" : ",");
    *first = 0;
    ek_json_string(out, k);
    ek_sbuf_putc(out, ':');
}

static void num(ek_sbuf *out, int *first, const char *k, uint64_t v)
{
    key(out, first, k);
    ek_sbuf_printf(out, "%llu", X(v));
}

/* a signed value, null when negative (none) */
static void num_or_null(ek_sbuf *out, int *first, const char *k, int64_t v)
{
    key(out, first, k);
    if (v < 0)
        ek_sbuf_puts(out, "null");
    else
        ek_sbuf_printf(out, "%lld", (long long)v);
}

static void hex(ek_sbuf *out, int *first, const char *k, uint64_t v)
{
    key(out, first, k);
    ek_sbuf_printf(out, "\"0x%llx\"", X(v)); /* (0 too: "0x0", as DOCTOR.md says) */
}

static void str(ek_sbuf *out, int *first, const char *k, const char *v)
{
    key(out, first, k);
    if (v)
        ek_json_string(out, v);
    else
        ek_sbuf_puts(out, "null");
}

static void boolean(ek_sbuf *out, int *first, const char *k, int v)
{
    key(out, first, k);
    ek_sbuf_puts(out, v ? "true" : "false");
}

/* a build-id as hex (its bytes as the text shows them: account_id_len); null when none */
static void build_id(ek_sbuf *out, int *first, const char *k, const uint8_t *id, size_t len)
{
    key(out, first, k);
    len = account_id_len(id, len);
    if (!len) {
        ek_sbuf_puts(out, "null");
        return;
    }
    ek_sbuf_putc(out, '"');
    for (size_t i = 0; i < len; i++)
        ek_sbuf_printf(out, "%02x", id[i]);
    ek_sbuf_putc(out, '"');
}

static const char *dso_kind(int k)
{
    static const char *const n[] = {"user", "kernel", "module", "vdso", "anonymous", "jit"};
    return k >= 0 && k < (int)(sizeof n / sizeof *n) ? n[k] : "?";
}

static const char *file_status(int s)
{
    static const char *const n[] = {"not-tried", "ok", "not-found", "build-id-mismatch",
                                    "not-elf", "no-file"};
    return s >= 0 && s < (int)(sizeof n / sizeof *n) ? n[s] : "?";
}

static const char *severity(int s)
{
    return s >= 2 ? "error" : s == 1 ? "warning" : "note";
}

static void dso(ek_sbuf *out, int *first, const ek_account_dso *d)
{
    key(out, first, "dso");
    int f = 1;
    ek_sbuf_putc(out, '{');
    str(out, &f, "name", d->name);
    str(out, &f, "kind", dso_kind(d->kind));
    str(out, &f, "file", file_status(d->status));
    str(out, &f, "tried", d->tried);
    build_id(out, &f, "build_id", d->build_id, d->build_id_len);
    if (d->status == EK_ACCT_FILE_BUILD_ID_MISMATCH)
        build_id(out, &f, "found_build_id", d->found_id, d->found_id_len);
    if (d->kind == EK_ACCT_DSO_KMODULE) {
        num(out, &f, "relocations", d->relocs + d->relocs_unresolved);
        num(out, &f, "relocations_unresolved", d->relocs_unresolved);
    }
    ek_sbuf_putc(out, '}');
}

static void jit(ek_sbuf *out, int *first, const ek_account_jit *j)
{
    key(out, first, "jitdump");
    int f = 1;
    ek_sbuf_putc(out, '{');
    boolean(out, &f, "mapped", j->mapped);
    boolean(out, &f, "read", j->read);
    if (j->mapped) {
        str(out, &f, "recorded", j->recorded);
        num_or_null(out, &f, "record", j->record);
        str(out, &f, j->read ? "path" : "tried", j->read ? j->path : j->tried);
        str(out, &f, "status",
            j->status == EK_ERR_FORMAT        ? "not-a-jitdump"
            : j->status == EK_ERR_UNSUPPORTED ? "clock"
            : j->read                         ? "ok"
                                              : "not-found");
        if (j->read) {
            num(out, &f, "loads", j->loads);
            num(out, &f, "moves", j->moves);
        }
    }
    str(out, &f, "perf_map", j->perf_map);
    ek_sbuf_putc(out, '}');
}

static void diag(ek_sbuf *out, int *first, const ek_account_diag *g)
{
    str(out, first, "id", g->kind);
    str(out, first, "severity", severity(g->sev));
    str(out, first, "message", g->msg);
    str(out, first, "example", g->first);
    str(out, first, "file", g->file);
    num_or_null(out, first, "record", g->record);
    num_or_null(out, first, "trace_id", g->trace_id);
    key(out, first, "offsets");
    ek_sbuf_putc(out, '[');
    for (unsigned k = 0; k < g->noffsets && k < 8; k++)
        ek_sbuf_printf(out, "%s%lld", k ? "," : "", (long long)g->offsets[k]);
    ek_sbuf_putc(out, ']');
}

static void item(const ek_account *a, const ek_account_item *it, ek_sbuf *out, int level)
{
    int f = 1;
    ek_sbuf_putc(out, '{');
    str(out, &f, "kind", ek_account_kind_name(it->kind));
    str(out, &f, "remedy", ek_remedy_name(it->remedy));
    num(out, &f, "count", it->count);
    switch (it->kind) {
    case EK_ACCT_AUX_NO_DATA:
    case EK_ACCT_AUX_OVERWRITTEN:
    case EK_ACCT_AUX_CLIPPED:
    case EK_ACCT_CODE:
    case EK_ACCT_GAP:
        num(out, &f, "bytes", it->bytes);
        break;
    default:
        break;
    }
    num_or_null(out, &f, "first_offset", it->first_offset);
    switch (it->kind) {
    case EK_ACCT_LOST:
        num(out, &f, "events", it->extra);
        break;
    case EK_ACCT_CODE:
        str(out, &f, "code", ek_account_code_name(it->code));
        key(out, &f, "pid");
        ek_sbuf_printf(out, "%d", (int)it->pid);
        hex(out, &f, "lo", it->lo);
        hex(out, &f, "hi", it->hi);
        if (it->code == EK_ACCT_CODE_NO_IMAGE) str(out, &f, "ini", it->name);
        if (it->dso) dso(out, &f, it->dso);
        if (it->jit) jit(out, &f, it->jit);
        break;
    case EK_ACCT_KMOD_RELOCS:
        if (it->dso) dso(out, &f, it->dso);
        break;
    case EK_ACCT_GAP:
        str(out, &f, "what", it->name);
        boolean(out, &f, "no_trace_id", it->code == EK_ACCT_GAP_NO_ID);
        break;
    case EK_ACCT_DIAG:
        if (it->diag) diag(out, &f, it->diag);
        break;
    default:
        break;
    }
    ek_sbuf text = EK_SBUF_INIT;
    ek_account_item_text(a, it, &text, level < EK_REPORT_FULL ? EK_REPORT_FULL : level);
    str(out, &f, "text", text.p ? text.p : "");
    ek_sbuf_free(&text);
    ek_sbuf_putc(out, '}');
}

static void items(const ek_account *a, ek_sbuf *out, int level, int problems)
{
    ek_sbuf_putc(out, '[');
    int n = 0;
    for (size_t i = 0; i < a->nitems; i++) {
        if (!a->items[i].problem != !problems) continue;
        ek_sbuf_puts(out, n++ ? ",\n  " : "\n  ");
        item(a, &a->items[i], out, level);
    }
    ek_sbuf_puts(out, n ? "\n ]" : "]");
}

void ek_account_json(const ek_account *a, ek_sbuf *out, int level)
{
    int f = 1;
    ek_sbuf_putc(out, '{');
    str(out, &f, "schema", "etmkit-account/1");
    str(out, &f, "path", a->path);
    boolean(out, &f, "coresight", a->coresight);
    num(out, &f, "cpus", a->ncpus);
    key(out, &f, "protocols");
    ek_sbuf_putc(out, '[');
    for (unsigned p = 0, n = 0; p < 32; p++)
        if (a->protocols & (1u << p)) {
            ek_sbuf_puts(out, n++ ? "," : "");
            ek_json_string(out, ek_protocol_name((ek_protocol)p));
        }
    ek_sbuf_putc(out, ']');
    boolean(out, &f, "snapshot", a->snapshot);
    boolean(out, &f, "time_stamps", !a->timeless);
    boolean(out, &f, "decoded", a->ran);
    ek_sbuf_puts(out, ",\n ");
    f = 1; /* the comma is out */
    int g = 1;
    key(out, &f, "stats");
    ek_sbuf_putc(out, '{');
    const ek_session_stats *st = &a->stats;
    num(out, &g, "queues", st->queues);
    num(out, &g, "slices", st->slices);
    num(out, &g, "slices_no_data", st->slices_no_data);
    num(out, &g, "trace_bytes", st->trace_bytes);
    num(out, &g, "frame_bytes", a->frame_bytes);
    num(out, &g, "trace_bytes_decoded", st->trace_bytes_decoded);
    num(out, &g, "packets", st->packets);
    num(out, &g, "elements", st->elements);
    num(out, &g, "instructions", st->instructions);
    num(out, &g, "samples_branches", st->samples_branches);
    num(out, &g, "samples_instructions", st->samples_instructions);
    num(out, &g, "nacc", st->nacc);
    num(out, &g, "decode_errors", st->decode_errors);
    ek_sbuf_putc(out, '}');
    ek_sbuf_puts(out, ",\n ");
    f = g = 1;
    key(out, &f, "kernel");
    ek_sbuf_putc(out, '{');
    str(out, &g, "release", a->kernel_release);
    build_id(out, &g, "build_id", a->kernel_build_id, a->kernel_build_id_len);
    ek_sbuf_putc(out, '}');
    ek_sbuf_puts(out, ",\n ");
    f = 1;
    key(out, &f, "aux_no_data");
    ek_sbuf_putc(out, '[');
    for (size_t i = 0; i < a->naux_no_data; i++) {
        const ek_account_aux *r = &a->aux_no_data[i];
        ek_sbuf_puts(out, i ? ",\n  " : "\n  ");
        g = 1;
        ek_sbuf_putc(out, '{');
        num_or_null(out, &g, "record", r->record);
        num(out, &g, "offset", r->offset);
        key(out, &g, "cpu");
        ek_sbuf_printf(out, "%d", (int)r->cpu);
        num(out, &g, "aux_offset", r->aux_offset);
        num(out, &g, "size", r->aux_size);
        boolean(out, &g, "overwritten", r->overwritten);
        ek_sbuf_putc(out, '}');
    }
    ek_sbuf_puts(out, a->naux_no_data ? "\n ]" : "]");
    if (a->trace_snapshot) {
        /* a trace snapshot folder: its sources as decoded */
        ek_sbuf_puts(out, ",\n ");
        f = 1;
        boolean(out, &f, "trace_snapshot", 1);
        /* a bare trace file, its configuration given as options */
        if (a->trace_snapshot == 2) boolean(out, &f, "configured_by_options", 1);
        key(out, &f, "sources");
        ek_sbuf_putc(out, '[');
        for (size_t i = 0; i < a->nsources; i++) {
            const ek_account_source *x = &a->sources[i];
            ek_sbuf_puts(out, i ? ",\n  " : "\n  ");
            g = 1;
            ek_sbuf_putc(out, '{');
            str(out, &g, "name", x->name);
            str(out, &g, "buffer", x->buffer);
            num(out, &g, "trace_id", (uint64_t)x->trace_id);
            str(out, &g, "protocol", ek_protocol_name((ek_protocol)x->protocol));
            key(out, &g, "cpu");
            ek_sbuf_printf(out, "%d", (int)x->cpu);
            str(out, &g, "core", x->core);
            str(out, &g, "core_ini", x->core_ini);
            boolean(out, &g, "decoded", x->decoded);
            boolean(out, &g, "time_stamps", x->time_stamps);
            num(out, &g, "bytes", x->bytes);
            num(out, &g, "packets", x->packets);
            num(out, &g, "bad_packets", x->bad_packets);
            num(out, &g, "instructions", x->instructions);
            num(out, &g, "sync_losses", x->sync_losses);
            num(out, &g, "errors", x->errors);
            num(out, &g, "nacc", x->nacc);
            num(out, &g, "samples", x->samples);
            ek_sbuf_putc(out, '}');
        }
        ek_sbuf_puts(out, a->nsources ? "\n ]" : "]");
    }
    ek_sbuf_puts(out, ",\n ");
    f = 1;
    key(out, &f, "causes");
    items(a, out, level, 1);
    ek_sbuf_puts(out, ",\n ");
    f = 1;
    key(out, &f, "notes");
    items(a, out, level, 0);
    ek_sbuf_puts(out, ",\n ");
    f = 1;
    num(out, &f, "problems", (uint64_t)(a->problems > 0 ? a->problems : 0));
    ek_sbuf_puts(out, "}\n");
}
