/* etmkit dump FILE: list a perf.data file (header, attributes, features, records, cs_etm
 * configuration, AUX slices per queue; with --packets / --decode the trace of each AUX slice
 * after the AUXTRACE record that holds it) as text or JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_progress.h"
#include "etmkit/perf.h"
#include "etmkit/perf_dump.h"

enum {
    SEC_HEADER = 1,
    SEC_RECORDS = 2,
    SEC_CONFIG = 4,
    SEC_SLICES = 8,
    SEC_ALL = 15,
};

static void usage(FILE *f)
{
    fprintf(f, "usage: etmkit dump [options] FILE\n"
               "\n"
               "List a perf.data recording of CoreSight trace: file header, events, features,\n"
               "every record (one line each, with file offset), the cs_etm configuration per CPU\n"
               "and the AUX trace slices per queue. Problems go to stderr, one line per kind.\n"
               "\n"
               "options:\n"
               "  --header        file header, events and features\n"
               "  --records       every record\n"
               "  --config        cs_etm configuration\n"
               "  --slices        AUX slices per queue, AUXTRACE buffers, trace ID maps\n"
               "                  (without any of these four: all sections)\n"
               "  --packets       the trace packets of each AUX slice, listed after each\n"
               "                  AUXTRACE record with its buffer's reference (simpleperf's 0:\n"
               "                  all slices at each record), each slice decoded from a reset,\n"
               "                  as `perf report -D` does (with no section named: the records)\n"
               "  --decode        the packets and what the instruction-flow decoder makes of\n"
               "                  them (no code is read: instructions show as ADDR_NACC)\n"
               "  --format=text|ocsd|json\n"
               "                  text (default; trace lines as perf report -D prints them),\n"
               "                  ocsd (trace lines as trc_pkt_lister prints them) or one JSON\n"
               "                  document\n"
               "  -v, --verbose   list every kept problem instead of one line per kind\n"
               "  --strict        exit 1 when any problem (warning or worse) was reported\n"
               "  -q, --quiet     no progress line on stderr (shown on a terminal when the\n"
               "                  records take more than a second and the listing goes elsewhere)\n"
               "  -h, --help      this text\n"
               "\n"
               "Exit status: 0 when something usable was read, 1 when nothing was (or --strict\n"
               "and a problem), 2 on usage errors.\n");
}

/* Diagnostics kept for the JSON document (bounded). */
#define JSON_DIAG_MAX 1000
typedef struct json_diags {
    ek_sbuf text;
    size_t n, dropped;
    ek_diag next;
} json_diags;

static void json_diag_fn(void *ctx, const ek_diag_event *ev)
{
    json_diags *j = ctx;
    if (j->n >= JSON_DIAG_MAX) {
        j->dropped++;
    } else {
        static const char *const sev[] = {"note", "warning", "error"};
        ek_sbuf_printf(&j->text, "%s\n{\"severity\":\"%s\",\"kind\":", j->n ? "," : "",
                       sev[ev->sev <= EK_SEV_ERROR ? ev->sev : 2]);
        ek_json_string(&j->text, ev->kind);
        ek_sbuf_printf(&j->text,
                       ",\"record\":%lld,\"offset\":%lld,\"message\":", (long long)ev->record,
                       (long long)ev->offset);
        ek_json_string(&j->text, ev->msg);
        ek_sbuf_putc(&j->text, '}');
        j->n++;
    }
    if (j->next.fn) j->next.fn(j->next.ctx, ev);
}

static int list_records(ek_sbuf *out, const ek_perf_file *f, ek_perf_dump_format fmt,
                        cli_progress *pr, ek_perf_tracer *tr)
{
    const ek_perf_header_info *h = ek_perf_header(f);
    uint64_t total = h->data_end > h->data_begin ? h->data_end - h->data_begin : 0;
    cli_progress_update(pr, 0, total);
    ek_perf_iter *it;
    int rc = ek_perf_iter_new(f, 0, NULL, &it);
    if (rc) return rc;
    ek_perf_record rec;
    size_t n = 0;
    while ((rc = ek_perf_iter_next(it, &rec)) == 0) {
        if (fmt == EK_PERF_DUMP_JSON) ek_sbuf_puts(out, n ? ",\n" : "\n");
        ek_perf_dump_record(out, &rec, fmt);
        if (tr && ek_perf_dump_record_trace(out, tr, &rec)) rc = EK_ERR_NOMEM;
        if (!(++n & 255) && rec.offset >= h->data_begin && rec.offset - h->data_begin <= total)
            cli_progress_update(pr, rec.offset - h->data_begin, total);
        cli_maybe_flush(out, stdout);
    }
    ek_perf_iter_free(it);
    if (rc == EK_ERR_EOS && tr) {
        /* buffers the records did not show (found through the AUXTRACE index alone) */
        if (fmt == EK_PERF_DUMP_JSON && !n) ek_sbuf_puts(out, "\n{}");
        rc = ek_perf_dump_rest_trace(out, tr) ? EK_ERR_NOMEM : EK_ERR_EOS;
    }
    return rc == EK_ERR_EOS ? 0 : rc;
}

static void list_slices(ek_sbuf *out, const ek_perf_file *f, const ek_perf_queues *q,
                        ek_perf_dump_format fmt)
{
    int json = fmt == EK_PERF_DUMP_JSON;
    for (size_t i = 0; i < ek_perf_queues_count(q); i++) {
        const ek_perf_queue *qu = ek_perf_queue_at(q, i);
        if (json) ek_sbuf_puts(out, i ? ",\n" : "\n");
        ek_perf_dump_queue(out, f, q, i, fmt);
        for (size_t k = 0; k < qu->nslices; k++) {
            ek_perf_dump_slice(out, f, q, &qu->slices[k], k, fmt);
            cli_maybe_flush(out, stdout);
        }
        ek_perf_dump_queue_end(out, fmt);
    }
}

int cmd_dump_perf(int argc, char **argv)
{
    unsigned sections = 0;
    ek_perf_dump_format fmt = EK_PERF_DUMP_TEXT;
    const char *input = NULL;
    int verbose = 0, strict = 0, quiet = 0, packets = 0, decode = 0, ocsd = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return CLI_OK;
        } else if (!strcmp(a, "--header")) {
            sections |= SEC_HEADER;
        } else if (!strcmp(a, "--records")) {
            sections |= SEC_RECORDS;
        } else if (!strcmp(a, "--config")) {
            sections |= SEC_CONFIG;
        } else if (!strcmp(a, "--slices")) {
            sections |= SEC_SLICES;
        } else if (!strcmp(a, "--packets")) {
            packets = 1;
        } else if (!strcmp(a, "--decode")) {
            decode = 1;
        } else if (!strcmp(a, "--strict")) {
            strict = 1;
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            verbose = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (!strncmp(a, "--format=", 9)) {
            ocsd = 0;
            if (!strcmp(a + 9, "text"))
                fmt = EK_PERF_DUMP_TEXT;
            else if (!strcmp(a + 9, "json"))
                fmt = EK_PERF_DUMP_JSON;
            else if (!strcmp(a + 9, "ocsd"))
                fmt = EK_PERF_DUMP_TEXT, ocsd = 1;
            else {
                cli_err("dump: unknown format '%s' (text, ocsd or json)", a + 9);
                return CLI_USAGE;
            }
        } else if (a[0] == '-') {
            cli_err("dump: unknown option '%s'", a);
            usage(stderr);
            return CLI_USAGE;
        } else if (input) {
            cli_err("dump: more than one input ('%s' and '%s')", input, a);
            return CLI_USAGE;
        } else {
            input = a;
        }
    }
    if (!input) {
        usage(stderr);
        return CLI_USAGE;
    }
    const int trace = packets || decode;
    if (!sections) sections = trace ? SEC_RECORDS : SEC_ALL;
    int json = fmt == EK_PERF_DUMP_JSON;

    ek_diag_collector *coll = ek_diag_collector_new(8);
    if (!coll) {
        cli_err("out of memory");
        return CLI_FAIL;
    }
    json_diags jd;
    memset(&jd, 0, sizeof jd);
    jd.next = ek_diag_collector_sink(coll);
    ek_diag sink = json ? (ek_diag){json_diag_fn, &jd} : ek_diag_collector_sink(coll);

    ek_perf_file *f = NULL;
    int rc = ek_perf_open(input, &sink, &f);
    if (rc) {
        cli_print_diag_summary(coll, 1);
        cli_err("%s: no usable perf.data content (%s)", input, ek_strerror(rc));
        ek_diag_collector_free(coll);
        ek_sbuf_free(&jd.text);
        return CLI_FAIL;
    }
    ek_perf_queues *q = NULL;
    if ((sections & SEC_SLICES) || trace) {
        rc = ek_perf_queues_new(f, &sink, &q);
        if (rc) {
            cli_err("%s: %s", input, ek_strerror(rc));
            ek_perf_free(f);
            ek_diag_collector_free(coll);
            ek_sbuf_free(&jd.text);
            return CLI_FAIL;
        }
    }

    ek_sbuf out = EK_SBUF_INIT;
    const char *sep = "";
    if (json) ek_sbuf_puts(&out, "{");
    if (sections & SEC_HEADER) {
        ek_perf_dump_file(&out, f, fmt);
        sep = ",\n";
    }
    if (sections & SEC_RECORDS) {
        if (json)
            ek_sbuf_printf(&out, "%s\"records\":[", sep);
        else
            ek_sbuf_puts(&out, *sep || (sections & SEC_HEADER) ? "\n# records\n" : "# records\n");
        ek_perf_tracer *tr = NULL;
        if (trace) {
            ek_perf_trace_opts to;
            ek_perf_trace_opts_init(&to);
            to.format = json ? EK_PERF_TRACE_JSON : ocsd ? EK_PERF_TRACE_OCSD : EK_PERF_TRACE_PERF;
            to.elements = decode;
            to.diag = &sink;
            rc = ek_perf_tracer_new(f, q, &to, &tr);
        }
        cli_progress pr;
        cli_progress_start(&pr, "dump", quiet, 1);
        if (!rc) rc = list_records(&out, f, fmt, &pr, tr);
        cli_progress_end(&pr);
        ek_perf_tracer_free(tr);
        if (json) ek_sbuf_puts(&out, "]");
        sep = ",\n";
    }
    if (sections & SEC_CONFIG) {
        if (json)
            ek_sbuf_printf(&out, "%s\"config\":", sep);
        else
            ek_sbuf_puts(&out, *sep ? "\n# cs_etm configuration\n" : "# cs_etm configuration\n");
        ek_perf_dump_config(&out, f, fmt);
        sep = ",\n";
    }
    if (sections & SEC_SLICES) {
        if (json)
            ek_sbuf_printf(&out, "%s\"queues\":[", sep);
        else
            ek_sbuf_puts(&out, *sep ? "\n# AUX slices\n" : "# AUX slices\n");
        list_slices(&out, f, q, fmt);
        if (json) ek_sbuf_puts(&out, "],\n");
        ek_perf_dump_slice_summary(&out, f, q, fmt);
        sep = ",\n";
    }
    if (json) {
        ek_sbuf_printf(&out, "%s\"diagnostics\":[", sep);
        if (jd.text.len) ek_sbuf_put(&out, jd.text.p, jd.text.len);
        ek_sbuf_printf(&out, "],\n\"diagnostics_dropped\":%zu}\n", jd.dropped);
    }
    cli_write(&out, stdout);
    ek_sbuf_free(&out);
    fflush(stdout);
    cli_print_diag_summary(coll, verbose);
    int problems = ek_diag_collector_count(coll, EK_SEV_WARN) > 0;

    ek_perf_queues_free(q);
    ek_perf_free(f);
    ek_diag_collector_free(coll);
    ek_sbuf_free(&jd.text);
    if (rc) {
        cli_err("%s: %s", input, ek_strerror(rc));
        return CLI_FAIL;
    }
    return strict && problems ? CLI_FAIL : CLI_OK;
}
