/* etmkit script: perf-script compatible samples from a perf.data recording. */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "cli.h"
#include "cli_opts.h"
#include "cli_progress.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: etmkit script [options] [FILE]\n"
               "Prints the samples 'perf script' prints for a CoreSight recording, then a short\n"
               "account on stderr of the trace that did not become samples.\n");
    cli_decode_help(f, 0);
    fprintf(f, "On a terminal, a run longer than a second shows its progress on stderr (when the\n"
               "samples go elsewhere).\n");
}

/* Large blocks of text go straight to the file descriptor (no copy into stdio's buffer). */
static int write_stdout(void *ctx, const char *text, size_t len)
{
    (void)ctx;
    if (len < (64u << 10)) return cli_stdout_write(NULL, text, len);
    if (fflush(stdout)) return cli_stdout_fail(errno);
    int fd = fileno(stdout);
    while (len) {
        ssize_t n = write(fd, text, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            return cli_stdout_fail(errno);
        }
        text += n;
        len -= (size_t)n;
    }
    return 0;
}

int cmd_script(int argc, char **argv)
{
    cli_decode d;
    int ret = cli_decode_parse(&d, "script", 0, argc, argv, usage);
    if (ret < 0) ret = cli_decode_check(&d);
    cli_progress pr;
    ek_session *s = NULL;
    if (ret < 0) {
        cli_progress_start(&pr, "script", d.quiet, 1);
        d.so.progress = pr.on ? cli_progress_update : NULL; /* none: nothing to tell */
        d.so.progress_ctx = &pr;
        ret = cli_decode_open(&d, &s);
        if (ret >= 0) cli_progress_end(&pr);
    }
    if (ret >= 0) {
        cli_decode_free(&d);
        return ret;
    }
    int rc = ek_session_script(s, &d.fields, write_stdout, NULL);
    int out = cli_stdout_check("script"); /* the samples are out, or this says why not */
    cli_progress_end(&pr);
    /* the summary says what was not turned into samples */
    ek_sbuf rep = EK_SBUF_INIT;
    ek_session_report(s, &rep, d.verbose ? EK_REPORT_VERBOSE : EK_REPORT_SUMMARY);
    if (rep.len && !d.quiet) fputs(rep.p, stderr);
    ek_sbuf_free(&rep);
    ret = cli_decode_status(&d, s, rc);
    if (out) ret = CLI_FAIL;
    ek_session_free(s);
    cli_decode_free(&d);
    return ret;
}
