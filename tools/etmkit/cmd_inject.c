/* etmkit inject: perf inject --itrace=il64 for CoreSight recordings (a perf.data file with
 * last-branch stacks on instructions samples, for AutoFDO and BOLT). The library does the
 * work (include/etmkit/inject.h); this file parses the options and reports. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
               "  -o, --output=OUT  the file to write (required); '-': standard output, in\n"
               "                    perf's pipe mode (as perf inject -o - writes it), as is\n"
               "                    an OUT that cannot seek (a FIFO)\n");
    cli_decode_help(f, CLI_NO_SAMPLE_TEXT);
    fprintf(f, "--itrace must ask for instructions samples with last branches (i and l);\n"
               "the default is il64.\n");
}

/* The writer's output (etmkit/perf_write.h): OUT through cli_out, which keeps the errno of the
 * first failure for the message. */
static int out_write(void *ctx, const void *p, size_t n)
{
    cli_out *o = ctx;
    if (o->err) return EK_ERR_IO;
    errno = 0;
    if (!n || fwrite(p, 1, n, o->f) == n) return 0;
    o->err = errno ? errno : EIO;
    return EK_ERR_IO;
}

static int out_patch(void *ctx, uint64_t off, const void *p, size_t n)
{
    cli_out *o = ctx;
    if (o->err) return EK_ERR_IO;
    errno = 0;
    if ((off_t)off < 0 || fseeko(o->f, (off_t)off, SEEK_SET) || fwrite(p, 1, n, o->f) != n ||
        fseeko(o->f, 0, SEEK_END)) {
        o->err = errno ? errno : EIO;
        return EK_ERR_IO;
    }
    return 0;
}

/* Would writing OUT in place (a link, a device: cli_out_in_place; standard output for "-")
 * write over the recording? The recording is mapped while it is read: truncating it kills the
 * run (SIGBUS) and loses it. A regular OUT is written beside itself and renamed, which leaves
 * the input whole. */
static int out_is_input(const char *out, const char *input)
{
    char *data = NULL;
    if (cli_is_perf_folder(input) && asprintf(&data, "%s/data", input) > 0) input = data;
    struct stat in, o;
    int same = !stat(input, &in) &&
               !(strcmp(out, "-") ? stat(out, &o) : fstat(STDOUT_FILENO, &o)) &&
               S_ISREG(o.st_mode) && in.st_dev == o.st_dev && in.st_ino == o.st_ino;
    free(data);
    return same;
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
    if (ret >= 0) {
        cli_decode_free(&d); /* what the options before the bad one made (-C 0's list) */
        return ret;
    }
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
    int to_stdout = !strcmp(out, "-");
    if (ret < 0 && (to_stdout || cli_out_in_place(out)) && out_is_input(out, d.input)) {
        if (to_stdout)
            fprintf(stderr,
                    "etmkit inject: -o -: standard output is the recording %s (writing it "
                    "would destroy it): give another output\n",
                    d.input);
        else
            fprintf(stderr,
                    "etmkit inject: %s: is the recording %s (a link or a device is written in "
                    "place, which would destroy it): give another output file\n",
                    out, d.input);
        ret = CLI_USAGE;
    }
    ek_session *s = NULL;
    if (ret < 0) ret = cli_decode_open(&d, &s);
    if (ret >= 0) {
        cli_decode_free(&d);
        return ret;
    }
    const ek_perf_file *pf = ek_session_file(s);
    cli_out o;
    ek_pw *w = NULL;
    int rc = 0;
    if (cli_out_open(&o, out, "inject")) {
        fprintf(stderr, "etmkit inject: %s: %s\n", out, strerror(errno));
        rc = EK_ERR_IO;
    } else {
        ek_pw_out po = {&o, out_write, out_patch};
        ek_inject_stats st;
        /* standard output is written as perf inject -o - writes it: in pipe mode, which needs
         * no seek back to the header; so is an OUT that cannot seek (a FIFO, a terminal) */
        int pipe = to_stdout || lseek(fileno(o.f), 0, SEEK_CUR) < 0;
        rc = ek_pw_new(&po, ek_inject_writer_flags(pf) | (pipe ? EK_PW_PIPE : 0), &w);
        if (!rc) rc = ek_inject(pf, s, &d.so.itrace, w, &st);
        int rc2 = ek_pw_close(w);
        if (!rc) rc = rc2;
        int werr = cli_out_close(&o, out, !rc);
        if (werr) {
            fprintf(stderr, "etmkit inject: %s: %s\n", out, strerror(werr));
            rc = rc ? rc : EK_ERR_IO;
        } else if (rc) {
            fprintf(stderr, "etmkit inject: %s: %s\n", d.input, ek_strerror(rc));
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
