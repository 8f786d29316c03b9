/* etmkit inject: perf inject --itrace=il64 for CoreSight recordings (a perf.data file with
 * last-branch stacks on instructions samples, for AutoFDO and BOLT). The library does the
 * work (include/etmkit/inject.h); this file parses the options and reports. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_opts.h"
#include "etmkit/inject.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: etmkit inject -o OUT [--itrace=il64] [options] [FILE]\n"
               "Writes OUT, a perf.data file as 'perf inject --itrace=il64' writes it: the\n"
               "recording's sideband and features, and instructions samples that carry the\n"
               "last branches taken (PERF_SAMPLE_BRANCH_STACK) instead of the trace, for tools\n"
               "that read branch stacks (perf report/script, create_llvm_prof, perf2bolt).\n"
               "\noptions:\n"
               "  -o, --output=OUT  the file to write (required)\n");
    cli_decode_help(f, CLI_NO_SAMPLE_TEXT);
    fprintf(f, "--itrace must ask for instructions samples with last branches (i and l);\n"
               "the default is il64.\n");
}

int cmd_inject(int argc, char **argv)
{
    const char *out = NULL;
    char **av = calloc((size_t)argc + 1, sizeof(*av));
    if (!av) return 1;
    int ac = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (i > 0 && (!strcmp(a, "-o") || !strcmp(a, "--output"))) {
            if (i + 1 >= argc) {
                fprintf(stderr, "etmkit inject: %s needs a file name (see etmkit inject --help)\n",
                        a);
                free(av);
                return 2;
            }
            out = argv[++i];
        } else if (i > 0 && !strncmp(a, "--output=", 9)) {
            out = a + 9;
        } else {
            av[ac++] = argv[i];
        }
    }
    cli_decode d;
    int ret = cli_decode_parse(&d, "inject", CLI_NO_SAMPLE_TEXT, ac, av, usage);
    free(av);
    if (ret >= 0) return ret;
    if (!out || !*out) {
        fprintf(stderr, "etmkit inject: no output file: give -o OUT (see etmkit inject --help)\n");
        cli_decode_free(&d);
        return 2;
    }
    if (!d.so.itrace.set) ek_itrace_parse("il64", &d.so.itrace, NULL);
    if (!d.so.itrace.instructions || !d.so.itrace.last_branch) {
        fprintf(stderr, "etmkit inject: --itrace must ask for instructions samples with last "
                        "branches (e.g. --itrace=il64)\n");
        cli_decode_free(&d);
        return 2;
    }
    ret = cli_decode_check(&d);
    if (ret < 0 && d.snapshot) {
        cli_err("inject: %s is a trace %s: inject rewrites perf.data files ('etmkit "
                "export' makes profiles of snapshots)",
                d.input, d.bare_ss ? "file described by options" : "snapshot folder");
        ret = CLI_FAIL;
    }
    ek_session *s = NULL;
    if (ret < 0) ret = cli_decode_open(&d, &s);
    if (ret >= 0) {
        cli_decode_free(&d);
        return ret;
    }
    const ek_perf_file *pf = ek_session_file(s);
    ek_pw *w = NULL;
    int rc;
    if ((rc = ek_pw_new_file(out, ek_inject_writer_flags(pf), &w)) != 0) {
        fprintf(stderr, "etmkit inject: %s: cannot write: %s\n", out, ek_strerror(rc));
    } else {
        ek_inject_stats st;
        rc = ek_inject(pf, s, &d.so.itrace, w, &st);
        int rc2 = ek_pw_close(w);
        if (!rc) rc = rc2;
        if (rc) {
            fprintf(stderr, "etmkit inject: %s: %s\n", out, ek_strerror(rc));
            if (!cli_out_in_place(out)) remove(out);
        } else if (!d.quiet) {
            fprintf(stderr, "etmkit inject: %s: %llu sample%s, %llu sideband record%s\n", out,
                    (unsigned long long)st.samples, st.samples == 1 ? "" : "s",
                    (unsigned long long)st.sideband, st.sideband == 1 ? "" : "s");
        }
    }
    if (rc == 0 && !d.quiet) {
        ek_sbuf rep = EK_SBUF_INIT;
        ek_session_report(s, &rep, d.verbose ? EK_REPORT_VERBOSE : EK_REPORT_SUMMARY);
        if (rep.len) fputs(rep.p, stderr);
        ek_sbuf_free(&rep);
    }
    ret = rc ? 1 : cli_decode_status(&d, s, 0);
    ek_session_free(s);
    cli_decode_free(&d);
    return ret;
}
