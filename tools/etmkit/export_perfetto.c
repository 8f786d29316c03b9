/* etmkit export --format=perfetto: the call-stack timeline of a recording as a Perfetto trace
 * (the library's writer, etmkit/perfetto.h), streamed to OUT (a file beside it, renamed into
 * place when complete; in place when OUT is a device, a FIFO or a link: cli_out_in_place) or
 * standard output. The decoding options, checks and exit statuses are
 * script's (cli_opts.h). See docs/STACKS.md, "Timelines in Perfetto". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_opts.h"
#include "export_perfetto.h"
#include "etmkit/perfetto.h"

typedef struct pf_out {
    FILE *f;
    int err; /* errno of a failed write */
} pf_out;

static int write_out(void *ctx, const void *data, size_t len)
{
    pf_out *o = ctx;
    if (fwrite(data, 1, len, o->f) == len) return 0;
    o->err = errno ? errno : EIO;
    return EK_ERR_IO;
}

typedef struct pf_run {
    ek_perfetto *w;
} pf_run;

static int on_sample(void *ctx, const ek_sample *s, const ek_script_resolver *r)
{
    pf_run *u = ctx;
    return ek_perfetto_sample(u->w, s, r);
}

int export_perfetto(cli_decode *d, const char *out)
{
    if (!d->so.itrace.set) ek_itrace_parse("b", &d->so.itrace, NULL);
    if (!d->so.itrace.branches || d->so.itrace.calls || d->so.itrace.returns) {
        cli_err("export: --format=perfetto: --itrace must ask for every branch (b): the "
                "stacks follow every call and return");
        cli_decode_free(d);
        return CLI_USAGE;
    }
    /* the stacks must see every sample of the threads a --pid/--tid/--comm filter leaves out
     * (a switch to one of them moves the shown thread's stack): the session keeps only the
     * CPUs and times asked for (-C, --time), and the writer chooses the threads */
    if (d->so.filter) {
        d->cpus = (ek_sample_filter)EK_SAMPLE_FILTER_INIT;
        d->cpus.cpus = d->filter.cpus;
        d->cpus.ncpus = d->filter.ncpus;
        d->cpus.times = d->filter.times;
        d->cpus.ntimes = d->filter.ntimes;
        d->so.filter = d->cpus.ncpus || d->cpus.ntimes ? &d->cpus : NULL;
    }
    int ret = cli_decode_check(d);
    ek_session *s = NULL;
    if (ret < 0) ret = cli_decode_open(d, &s);
    if (ret >= 0) {
        cli_decode_free(d);
        return ret;
    }
    int to_stdout = !out || !strcmp(out, "-");
    char *tmp = NULL;
    pf_out o = {stdout, 0};
    if (!to_stdout && cli_out_in_place(out)) {
        if (!(o.f = fopen(out, "wb"))) {
            cli_err("export: -o %s: %s", out, strerror(errno));
            ek_session_free(s);
            cli_decode_free(d);
            return CLI_FAIL;
        }
    } else if (!to_stdout) {
        int fd = -1;
        if (asprintf(&tmp, "%s.perfetto-XXXXXX", out) < 0 || (fd = mkstemp(tmp)) < 0 ||
            fchmod(fd, 0666 & ~cli_umask()) || !(o.f = fdopen(fd, "wb"))) {
            cli_err("export: -o %s: %s", out, strerror(errno));
            if (fd >= 0) close(fd);
            if (fd >= 0) unlink(tmp);
            free(tmp);
            ek_session_free(s);
            cli_decode_free(d);
            return CLI_FAIL;
        }
    }
    ek_session_info info;
    ek_session_get_info(s, &info);
    ek_perfetto_opts po;
    ek_perfetto_opts_init(&po);
    po.write = write_out;
    po.ctx = &o;
    po.per_source = !info.samples_have_cpu;
    po.filter = ek_sample_filter_active(&d->filter) ? &d->filter : NULL;
    pf_run u = {NULL};
    int rc = ek_perfetto_new(&po, &u.w);
    if (!rc) {
        ek_consumer con;
        ek_consumer_init(&con);
        con.ctx = &u;
        con.sample = on_sample;
        con.no_insn = 1;
        rc = ek_session_run(s, &con);
        int rf = ek_perfetto_finish(u.w);
        if (!rc) rc = rf;
    }
    int werr = o.err;
    if (o.f && o.f != stdout) {
        if (fclose(o.f) && !werr) werr = errno ? errno : EIO;
    } else if (fflush(stdout) && !werr) {
        werr = errno ? errno : EIO;
    }
    if (werr) {
        cli_out_error("export", out, werr);
        ret = CLI_FAIL;
    } else if (rc) {
        cli_err("export: %s: %s", d->input, ek_strerror(rc));
        ret = CLI_FAIL;
    } else {
        ret = cli_decode_status(d, s, rc);
    }
    if (tmp) {
        if (ret == CLI_OK || (ret == CLI_FAIL && !werr && !rc)) {
            if (rename(tmp, out)) {
                cli_err("export: -o %s: %s", out, strerror(errno));
                unlink(tmp);
                ret = CLI_FAIL;
            }
        } else {
            unlink(tmp);
        }
    }
    ek_sbuf rep = EK_SBUF_INIT;
    ek_session_report(s, &rep, d->verbose ? EK_REPORT_VERBOSE : EK_REPORT_SUMMARY);
    if (rep.len && !d->quiet) fputs(rep.p, stderr);
    ek_sbuf_free(&rep);
    if (u.w && !d->quiet && !to_stdout && !werr && !rc) {
        ek_perfetto_stats st;
        ek_perfetto_get_stats(u.w, &st);
        fprintf(stderr,
                "etmkit export: %s: %llu thread%s, %llu call%s, %llu trace gap%s (perfetto; "
                "times: %s; open it at https://ui.perfetto.dev)\n",
                out, (unsigned long long)st.threads, st.threads == 1 ? "" : "s",
                (unsigned long long)st.slices, st.slices == 1 ? "" : "s",
                (unsigned long long)st.gaps, st.gaps == 1 ? "" : "s",
                st.clock_instructions ? "instructions executed" : "perf time, ns");
    }
    ek_perfetto_free(u.w);
    free(tmp);
    ek_session_free(s);
    cli_decode_free(d);
    return ret;
}
