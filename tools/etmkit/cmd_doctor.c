/* etmkit doctor: explain what in a recording could not be turned into samples, and why. */
#include <errno.h>
#include <stdio.h>

#include "cli.h"
#include "cli_opts.h"
#include "cli_progress.h"

static void usage(FILE *f)
{
    fprintf(
        f, "usage: etmkit doctor [options] [FILE]\n"
           "Decodes the recording as 'etmkit script' does and lists, grouped by cause, every part\n"
           "of the trace that did not become samples, with what to do about it. It takes the\n"
           "options of 'etmkit script', so that a script command line can be rerun as a doctor\n"
           "one: the decoding options count (--itrace, default b; --no-end-flush, -j, the code\n"
           "and symbol options); -F and --ns only shape sample text and the filters only select\n"
           "samples: they are checked, and change nothing in the account.\n");
    fprintf(f, "output:\n"
               "  --format=text|json\n"
               "                    the account as text (default), or as one JSON document\n"
               "                    (its fields: docs/DOCTOR.md)\n");
    cli_decode_help(f, 0);
    fprintf(f, "On a terminal, a run longer than a second shows its progress on stderr.\n");
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
    cli_decode d;
    int ret = cli_decode_parse(&d, "doctor", 0, argc, argv, usage);
    if (ret < 0 && !d.so.itrace.set) ek_itrace_parse("b", &d.so.itrace, NULL);
    if (ret < 0) ret = cli_decode_check(&d);
    cli_progress pr;
    ek_session *s = NULL;
    if (ret < 0) {
        cli_progress_start(&pr, "doctor", d.quiet, 0);
        d.so.progress = pr.on ? cli_progress_update : NULL; /* none: nothing to tell */
        d.so.progress_ctx = &pr;
        ret = cli_decode_open(&d, &s);
        if (ret >= 0) cli_progress_end(&pr);
    }
    if (ret >= 0) {
        cli_decode_free(&d);
        return ret;
    }
    int rc = ek_session_samples(s, discard, NULL);
    cli_progress_end(&pr);
    ek_sbuf rep = EK_SBUF_INIT;
    ek_account *a = NULL;
    int level = d.verbose ? EK_REPORT_VERBOSE : EK_REPORT_FULL;
    if (ek_session_account(s, &a)) {
        if (!rc) rc = EK_ERR_NOMEM; /* cli_decode_status says so */
    } else if (d.json) {
        ek_account_json(a, &rep, level);
    } else {
        ek_account_text(a, &rep, level);
    }
    ek_account_free(a);
    if (rep.len && fputs(rep.p, stdout) == EOF) cli_stdout_fail(errno);
    ek_sbuf_free(&rep);
    ret = cli_decode_status(&d, s, rc);
    if (cli_stdout_check("doctor")) ret = CLI_FAIL; /* the account is lost */
    ek_session_free(s);
    cli_decode_free(&d);
    return ret;
}
