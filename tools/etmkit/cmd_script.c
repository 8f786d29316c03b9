/* etmkit script: perf-script compatible samples from a perf.data recording. */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_progress.h"
#include "etmkit/session.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: etmkit script [options] FILE\n"
            "  --itrace=OPTS     samples to make, as perf: i[N][i], b, c, r, l[N], s[N], Z, e\n"
            "  -F, --fields=LIST fields, as perf: comm,pid,tid,cpu,time,event,flags,ip,sym,\n"
            "                    symoff,dso,addr,period,brstack,brstacksym,insn,insnlen,misc\n"
            "  --symfs=DIR       look for recorded files under DIR\n"
            "  --buildid-dir=DIR build-id cache (default ~/.debug)\n"
            "  -k, --vmlinux=F   kernel image (vmlinux, or a kcore file)\n"
            "  --kallsyms=F      kernel symbols\n"
            "  --kcore=DIR       folder made by 'perf record --kcore'\n"
            "  --jitdump=F       a JIT's jit-PID.dump when the recorded one is not under --symfs\n"
            "  --ns              times in nanoseconds\n"
            "  -j, --threads=N   decoder threads for a recording without time stamps (default:\n"
            "                    one per CPU); with time stamps each queue has its own thread\n"
            "  --no-end-flush    as perf 6.1: no \"tr end\" sample for the last branch of the\n"
            "                    trace (perf never tells its decoder that the trace ended)\n"
            "  -q, --quiet       no summary of unused trace and no progress line on stderr\n"
            "  -v, --verbose     the full account of unused trace on stderr (as etmkit doctor)\n"
            "  --strict          exit 1 when any problem was reported, even if samples came out\n"
            "Exit status: 0 when samples came out (or the recording holds no trace problem),\n"
            "1 when nothing usable remains (or --strict and a problem), 2 on usage errors.\n"
            "On a terminal, a run longer than a second shows its progress on stderr (when the\n"
            "samples go elsewhere).\n");
}

/* Large blocks of text go straight to the file descriptor (no copy into stdio's buffer). */
static int write_stdout(void *ctx, const char *text, size_t len)
{
    (void)ctx;
    if (len < (64u << 10))
        return fwrite(text, 1, len, stdout) == len ? 0 : -1;
    if (fflush(stdout))
        return -1;
    int fd = fileno(stdout);
    while (len) {
        ssize_t n = write(fd, text, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        text += n;
        len -= (size_t)n;
    }
    return 0;
}

/* "--name=value", "--name value", "-x value", "-xvalue" */
static const char *optval(int argc, char **argv, int *i, const char *lng, const char *shrt)
{
    const char *a = argv[*i];
    size_t n = strlen(lng);
    if (!strncmp(a, lng, n)) {
        if (a[n] == '=')
            return a + n + 1;
        if (!a[n] && *i + 1 < argc)
            return argv[++*i];
        return NULL;
    }
    if (shrt && !strncmp(a, shrt, strlen(shrt))) {
        if (a[strlen(shrt)])
            return a + strlen(shrt);
        if (*i + 1 < argc)
            return argv[++*i];
    }
    return NULL;
}

int cmd_script(int argc, char **argv)
{
    ek_session_opts o;
    ek_session_opts_init(&o);
    ek_script_fields f;
    ek_script_fields_default(&f);
    const char *input = NULL, *v;
    int quiet = 0, ns = 0, verbose = 0, strict = 0;
    ek_sbuf err = EK_SBUF_INIT;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return CLI_OK;
        } else if (!strncmp(a, "--itrace", 8) && (a[8] == '=' || !a[8])) {
            v = a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : "");
            if (ek_itrace_parse(v, &o.itrace, &err)) {
                cli_err("%s", err.p);
                ek_sbuf_free(&err);
                return CLI_USAGE;
            }
        } else if ((v = optval(argc, argv, &i, "--fields", "-F"))) {
            if (ek_script_fields_parse(v, &f, &err)) {
                cli_err("%s", err.p);
                ek_sbuf_free(&err);
                return CLI_USAGE;
            }
        } else if ((v = optval(argc, argv, &i, "--symfs", NULL))) {
            o.symfs = v;
        } else if ((v = optval(argc, argv, &i, "--buildid-dir", NULL))) {
            o.buildid_dir = v;
        } else if ((v = optval(argc, argv, &i, "--vmlinux", "-k"))) {
            o.vmlinux = v;
        } else if ((v = optval(argc, argv, &i, "--kallsyms", NULL))) {
            o.kallsyms = v;
        } else if ((v = optval(argc, argv, &i, "--kcore", NULL))) {
            o.kcore_dir = v;
        } else if ((v = optval(argc, argv, &i, "--jitdump", NULL))) {
            o.jitdump = v;
        } else if ((v = optval(argc, argv, &i, "--threads", "-j"))) {
            o.threads = (unsigned)strtoul(v, NULL, 10);
        } else if ((v = optval(argc, argv, &i, "--input", "-i"))) {
            input = v;
        } else if (!strcmp(a, "--no-end-flush")) {
            o.compat |= EK_COMPAT_NO_END_FLUSH;
        } else if (!strcmp(a, "--ns")) {
            ns = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            verbose = 1;
        } else if (!strcmp(a, "--strict")) {
            strict = 1;
        } else if (a[0] == '-' && a[1]) {
            cli_err("script: unknown option '%s'", a);
            usage(stderr);
            return CLI_USAGE;
        } else {
            input = a;
        }
    }
    if (!input) {
        usage(stderr);
        return CLI_USAGE;
    }
    f.ns = ns;
    cli_progress pr;
    cli_progress_start(&pr, "script", quiet, 1);
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
    rc = ek_session_script(s, &f, write_stdout, NULL);
    fflush(stdout);
    cli_progress_end(&pr);
    /* the summary says what was not turned into samples; --strict fails when it says anything */
    ek_sbuf rep = EK_SBUF_INIT;
    ek_session_report(s, &rep, verbose ? EK_REPORT_VERBOSE : EK_REPORT_SUMMARY);
    int reported = rep.len > 0;
    if (reported && !quiet)
        fputs(rep.p, stderr);
    ek_sbuf_free(&rep);
    /* nothing usable: no sample came out of a recording with problems */
    ek_session_stats st;
    ek_session_get_stats(s, &st);
    int problems = ek_session_problems(s);
    int unusable = !rc && !st.samples_branches && !st.samples_instructions && problems;
    ek_session_free(s);
    ek_diag_collector_free(early);
    ek_sbuf_free(&err);
    if (rc) {
        cli_err("%s: %s", input, ek_strerror(rc));
        return CLI_FAIL;
    }
    return unusable || (strict && (problems || reported)) ? CLI_FAIL : CLI_OK;
}
