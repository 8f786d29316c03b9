/* etmkit doctor: explain what in a recording could not be turned into samples, and why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_progress.h"
#include "etmkit/session.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: etmkit doctor [options] FILE\n"
            "Decodes the recording as 'etmkit script' does and lists, grouped by cause, every part\n"
            "of the trace that did not become samples, with what to do about it.\n"
            "  --symfs=DIR       look for recorded files under DIR\n"
            "  --buildid-dir=DIR build-id cache (default ~/.debug)\n"
            "  -k, --vmlinux=F   kernel image (vmlinux, or a kcore file)\n"
            "  --kallsyms=F      kernel symbols\n"
            "  --kcore=DIR       folder made by 'perf record --kcore'\n"
           "  --jitdump=F       a JIT's jit-PID.dump when the recorded one is not under --symfs\n"
            "  --itrace=OPTS     as for 'etmkit script' (default: branches)\n"
            "  -q, --quiet       no progress line on stderr\n"
            "  -v, --verbose     list every record and address range\n"
            "On a terminal, a run longer than a second shows its progress on stderr.\n");
}

static int discard(void *ctx, const ek_sample *s, const ek_script_resolver *r)
{
    (void)ctx;
    (void)s;
    (void)r;
    return 0;
}

int cmd_doctor(int argc, char **argv)
{
    ek_session_opts o;
    ek_session_opts_init(&o);
    ek_itrace_parse("b", &o.itrace, NULL);
    const char *input = NULL;
    int level = EK_REPORT_FULL, quiet = 0;
    ek_sbuf err = EK_SBUF_INIT;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
#define OPT(lng, shrt)                                                                             \
    ((!strncmp(a, lng "=", sizeof lng) && (v = a + sizeof lng)) ||                                 \
     ((!strcmp(a, lng) || (shrt && !strcmp(a, shrt ? shrt : ""))) && i + 1 < argc &&              \
      (v = argv[++i])))
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return CLI_OK;
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            level = EK_REPORT_VERBOSE;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (OPT("--symfs", NULL)) {
            o.symfs = v;
        } else if (OPT("--buildid-dir", NULL)) {
            o.buildid_dir = v;
        } else if (OPT("--vmlinux", "-k")) {
            o.vmlinux = v;
        } else if (OPT("--kallsyms", NULL)) {
            o.kallsyms = v;
        } else if (OPT("--kcore", NULL)) {
            o.kcore_dir = v;
        } else if (OPT("--jitdump", NULL)) {
            o.jitdump = v;
        } else if (OPT("--itrace", NULL)) {
            if (ek_itrace_parse(v, &o.itrace, &err)) {
                cli_err("%s", err.p);
                ek_sbuf_free(&err);
                return CLI_USAGE;
            }
        } else if (a[0] == '-' && a[1]) {
            cli_err("doctor: unknown option '%s'", a);
            usage(stderr);
            return CLI_USAGE;
        } else {
            input = a;
        }
#undef OPT
    }
    if (!input) {
        usage(stderr);
        return CLI_USAGE;
    }
    cli_progress pr;
    cli_progress_start(&pr, "doctor", quiet, 0);
    o.progress = pr.on ? cli_progress_update : NULL; /* none: nothing to tell */
    o.progress_ctx = &pr;
    ek_session *s = NULL;
    /* problems that stop the recording from opening are only known to the sink */
    ek_diag_collector *early = ek_diag_collector_new(1);
    ek_diag early_sink = ek_diag_collector_sink(early);
    int rc = ek_session_open(input, &o, &early_sink, &s);
    if (rc) {
        cli_progress_end(&pr);
        cli_print_diag_summary(early, 0);
        ek_diag_collector_free(early);
        cli_err("%s: %s", input, ek_strerror(rc));
        return CLI_FAIL;
    }
    rc = ek_session_samples(s, discard, NULL);
    cli_progress_end(&pr);
    ek_sbuf rep = EK_SBUF_INIT;
    ek_session_report(s, &rep, level);
    if (rep.len)
        fputs(rep.p, stdout);
    ek_sbuf_free(&rep);
    ek_session_free(s);
    ek_diag_collector_free(early);
    ek_sbuf_free(&err);
    if (rc) {
        cli_err("%s: %s", input, ek_strerror(rc));
        return CLI_FAIL;
    }
    return CLI_OK;
}
