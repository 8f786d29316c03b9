/* etmkit dump FILE: list a perf.data file (header, attributes, features, records, cs_etm
 * configuration, AUX slices per queue; with --packets / --decode the trace of each AUX slice
 * after the AUXTRACE record that holds it) as text or JSON. The library makes the listing
 * (ek_perf_dumper, etmkit/perf_dump.h); this file parses the options, opens the file through
 * the listing's diagnostics sink, drives it to stdout and reports. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_progress.h"
#include "etmkit/perf.h"
#include "etmkit/perf_dump.h"

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
               "and a problem) or the listing cannot be written, 2 on usage errors.\n");
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
            sections |= EK_PERF_DUMP_HEADER;
        } else if (!strcmp(a, "--records")) {
            sections |= EK_PERF_DUMP_RECORDS;
        } else if (!strcmp(a, "--config")) {
            sections |= EK_PERF_DUMP_CONFIG;
        } else if (!strcmp(a, "--slices")) {
            sections |= EK_PERF_DUMP_SLICES;
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
    /* a perf.data folder (perf record -o DIR with kcore_dir): its recording is DIR/data */
    char folder_data[4096];
    if (cli_is_perf_folder(input) &&
        (size_t)snprintf(folder_data, sizeof folder_data, "%s/data", input) < sizeof folder_data)
        input = folder_data;
    ek_diag_collector *coll = ek_diag_collector_new(8);
    if (!coll) {
        cli_err("out of memory");
        return CLI_FAIL;
    }
    ek_perf_dump_opts o;
    ek_perf_dump_opts_init(&o);
    o.format = fmt;
    o.ocsd = ocsd;
    o.sections = sections;
    o.packets = packets;
    o.decode = decode;
    o.write = cli_stdout_write; /* the listing's text, straight to stdout */
    ek_diag sink = ek_diag_collector_sink(coll);
    o.diag = &sink;
    cli_progress pr;
    o.progress = cli_progress_update;
    o.progress_ctx = &pr;
    ek_perf_dumper *dd = NULL;
    ek_perf_file *f = NULL;
    ek_perf_queues *q = NULL;
    int rc = ek_perf_dumper_new(&o, &dd);
    if (rc) {
        cli_err("%s", ek_strerror(rc));
        ek_diag_collector_free(coll);
        return CLI_FAIL;
    }
    rc = ek_perf_open(input, ek_perf_dumper_diag(dd), &f);
    if (rc) {
        /* the reader's errors say what and where; the status alone only when none was said */
        cli_print_diag_summary(coll, 1);
        if (!ek_diag_collector_count(coll, EK_SEV_ERROR))
            cli_err("%s: no usable perf.data content (%s)", input, ek_strerror(rc));
        goto fail;
    }
    if (ek_perf_dumper_wants_queues(dd) &&
        (rc = ek_perf_queues_new(f, ek_perf_dumper_diag(dd), &q))) {
        cli_err("%s: %s", input, ek_strerror(rc));
        goto fail;
    }
    cli_progress_start(&pr, "dump", quiet, 1);
    rc = ek_perf_dumper_run(dd, f, q);
    cli_progress_end(&pr);
    int out = cli_stdout_check("dump"); /* the listing is out, or this says why not */
    cli_print_diag_summary(coll, verbose);
    int problems = ek_diag_collector_count(coll, EK_SEV_WARN) > 0;
    ek_perf_dumper_free(dd);
    ek_perf_queues_free(q);
    ek_perf_free(f);
    ek_diag_collector_free(coll);
    if (out && rc == EK_ERR_IO) return CLI_FAIL; /* the output failed, not the input */
    if (rc) {
        cli_err("%s: %s", input, ek_strerror(rc));
        return CLI_FAIL;
    }
    if (out) return CLI_FAIL;
    return strict && problems ? CLI_FAIL : CLI_OK;
fail:
    ek_perf_dumper_free(dd);
    ek_perf_queues_free(q);
    ek_perf_free(f);
    ek_diag_collector_free(coll);
    return CLI_FAIL;
}
