/* Views of where the instructions went: `etmkit export --format=folded` (Brendan Gregg's folded
 * stacks, from the library's calling contexts, etmkit/calltree.h) and `etmkit report` (top
 * functions, DSOs, threads, CPUs, calls, conditional branches, and the trace that was lost).
 * See docs/VIEWS.md. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_opts.h"
#include "cli_progress.h"
#include "etmkit/account.h"
#include "etmkit/calltree.h"
#include "etmkit/flame.h"

/* ---- the run both share -----------------------------------------------------------------------
 */

typedef struct thr {
    int32_t pid, tid;
    char comm[32];
    uint64_t insns, samples;
} thr;

typedef struct cpu_acc {
    int32_t cpu;
    uint64_t insns;
} cpu_acc;

typedef struct cbr { /* a conditional branch: how often taken and not */
    int32_t pid;
    uint8_t named;
    uint64_t addr;
    uint64_t taken, not_taken;
    char *name; /* sym+0xoff (dso) */
} cbr;

typedef struct views {
    ek_calltree *ct;
    const ek_sample_filter *filter;
    int report; /* gather the report's tables too */
    int rc;
    /* report */
    thr *thrs;
    size_t nthrs, capthrs, last_thr;
    cpu_acc *cpus;
    size_t ncpus;
    cbr *cbrs;
    size_t ncbrs, capcbrs;
    uint32_t *cbr_hash; /* index + 1 */
    size_t cbr_hcap;
    size_t unnamed_from; /* cbrs [unnamed_from, ncbrs) wait for a resolver to name them */
} views;

/* the ending of a count's noun: "1 thread", "2 threads" */
static const char *plural(uint64_t n)
{
    return n == 1 ? "" : "s";
}

static thr *thr_get(views *v, int32_t pid, int32_t tid)
{
    /* the thread of the last sample, most of the time; else a scan (threads are few) */
    if (v->last_thr < v->nthrs && v->thrs[v->last_thr].pid == pid &&
        v->thrs[v->last_thr].tid == tid)
        return &v->thrs[v->last_thr];
    for (size_t i = v->nthrs; i--;)
        if (v->thrs[i].pid == pid && v->thrs[i].tid == tid) {
            v->last_thr = i;
            return &v->thrs[i];
        }
    if (v->nthrs == v->capthrs) {
        size_t cap = v->capthrs ? v->capthrs * 2 : 16;
        thr *n = realloc(v->thrs, cap * sizeof *n);
        if (!n) return NULL;
        v->thrs = n;
        v->capthrs = cap;
    }
    v->last_thr = v->nthrs;
    thr *t = &v->thrs[v->nthrs++];
    memset(t, 0, sizeof *t);
    t->pid = pid;
    t->tid = tid;
    return t;
}

static uint32_t cbr_hash_of(int32_t pid, uint64_t addr)
{
    uint64_t x = addr ^ ((uint64_t)(uint32_t)pid << 40);
    x ^= x >> 31;
    x *= 0x9e3779b97f4a7c15ull;
    return (uint32_t)(x >> 32);
}

static cbr *cbr_get(views *v, int32_t pid, uint64_t addr)
{
    if (v->cbr_hcap) {
        size_t j = cbr_hash_of(pid, addr) & (v->cbr_hcap - 1);
        for (; v->cbr_hash[j]; j = (j + 1) & (v->cbr_hcap - 1)) {
            cbr *c = &v->cbrs[v->cbr_hash[j] - 1];
            if (c->pid == pid && c->addr == addr) return c;
        }
    }
    if ((v->ncbrs + 1) * 2 > v->cbr_hcap) {
        size_t cap = v->cbr_hcap ? v->cbr_hcap * 2 : 1024;
        uint32_t *h = calloc(cap, sizeof *h);
        if (!h) return NULL;
        for (size_t i = 0; i < v->ncbrs; i++) {
            size_t j = cbr_hash_of(v->cbrs[i].pid, v->cbrs[i].addr) & (cap - 1);
            while (h[j])
                j = (j + 1) & (cap - 1);
            h[j] = (uint32_t)i + 1;
        }
        free(v->cbr_hash);
        v->cbr_hash = h;
        v->cbr_hcap = cap;
    }
    if (v->ncbrs == v->capcbrs) {
        size_t cap = v->capcbrs ? v->capcbrs * 2 : 256;
        cbr *n = realloc(v->cbrs, cap * sizeof *n);
        if (!n) return NULL;
        v->cbrs = n;
        v->capcbrs = cap;
    }
    cbr *c = &v->cbrs[v->ncbrs];
    memset(c, 0, sizeof *c);
    c->pid = pid;
    c->addr = addr;
    size_t j = cbr_hash_of(pid, addr) & (v->cbr_hcap - 1);
    while (v->cbr_hash[j])
        j = (j + 1) & (v->cbr_hcap - 1);
    v->cbr_hash[j] = (uint32_t)++v->ncbrs;
    return c;
}

/* Elements: the ranges that end at a conditional instruction say whether it was taken (E) or
 * not (N); the samples only show the taken ones. */
static int on_elem(void *ctx, const ek_session_elem *e)
{
    views *v = ctx;
    const ek_elem *el = e->elem;
    if (el->type != EK_ELEM_INSTR_RANGE || !(el->flags & EK_ELEMF_LAST_COND) ||
        el->last_i_type == EK_ITYPE_OTHER)
        return 0;
    if (v->filter) {
        ek_sample fs;
        memset(&fs, 0, sizeof fs);
        fs.pid = e->pid;
        fs.tid = e->tid;
        fs.cpu = e->cpu;
        fs.has_time = e->has_time;
        fs.time = e->time;
        /* --comm needs the thread's name, which elements do not carry: the samples' test
         * is the one that counts there (see docs/VIEWS.md) */
        if (!v->filter->ncomms && !ek_sample_filter_match(v->filter, &fs, NULL)) return 0;
    }
    cbr *c = cbr_get(v, e->pid, el->en_addr - el->last_i_size);
    if (!c) return v->rc = EK_ERR_NOMEM;
    if (el->flags & EK_ELEMF_LAST_EXEC)
        c->taken++;
    else
        c->not_taken++;
    return 0;
}

/* Name the conditional branches found since the last sample, with this sample's resolver. */
static void name_cbrs(views *v, const ek_sample *s, const ek_script_resolver *r)
{
    for (size_t i = v->unnamed_from; i < v->ncbrs; i++) {
        cbr *c = &v->cbrs[i];
        ek_sample q = *s;
        q.pid = c->pid;
        q.cpumode = c->addr >> 63 ? EK_CPUMODE_KERNEL : EK_CPUMODE_USER;
        ek_addr_loc l;
        memset(&l, 0, sizeof l);
        if (r && r->resolve) r->resolve(r->ctx, &q, c->addr, 1, &l);
        ek_sbuf b = EK_SBUF_INIT;
        if (l.sym)
            ek_sbuf_printf(&b, "%.*s+0x%" PRIx64, (int)(l.sym_len ? l.sym_len : strlen(l.sym)),
                           l.sym, l.symoff);
        else
            ek_sbuf_puts(&b, "[unknown]");
        ek_sbuf_printf(&b, " (%.*s)", (int)(l.dso ? (l.dso_len ? l.dso_len : strlen(l.dso)) : 9),
                       l.dso ? l.dso : "[unknown]");
        c->name = b.p; /* NULL without memory: shown as its address */
    }
    v->unnamed_from = v->ncbrs;
}

static int on_sample(void *ctx, const ek_sample *s, const ek_script_resolver *r)
{
    views *v = ctx;
    int rc = ek_calltree_sample(v->ct, s, r);
    if (rc) return v->rc = rc;
    if (!v->report || s->kind != EK_SAMPLE_BRANCHES) return 0;
    if (v->unnamed_from < v->ncbrs) name_cbrs(v, s, r);
    const char *comm = r && r->comm ? r->comm(r->ctx, s) : NULL;
    if (v->filter && !ek_sample_filter_match(v->filter, s, comm)) return 0;
    thr *t = thr_get(v, s->pid, s->tid);
    if (!t) return v->rc = EK_ERR_NOMEM;
    if (comm) { /* (as snprintf "%s" would, without formatting every sample) */
        size_t n = strnlen(comm, sizeof t->comm - 1);
        if (memcmp(t->comm, comm, n) || t->comm[n]) {
            memcpy(t->comm, comm, n);
            t->comm[n] = 0;
        }
    }
    t->insns += s->ninsn;
    t->samples++;
    size_t i = 0;
    while (i < v->ncpus && v->cpus[i].cpu != s->cpu)
        i++;
    if (i == v->ncpus) {
        cpu_acc *n = realloc(v->cpus, (v->ncpus + 1) * sizeof *n);
        if (!n) return v->rc = EK_ERR_NOMEM;
        v->cpus = n;
        v->cpus[v->ncpus++] = (cpu_acc){s->cpu, 0};
    }
    v->cpus[i].insns += s->ninsn;
    return 0;
}

static void views_free(views *v)
{
    ek_calltree_free(v->ct);
    free(v->thrs);
    free(v->cpus);
    for (size_t i = 0; i < v->ncbrs; i++)
        free(v->cbrs[i].name);
    free(v->cbrs);
    free(v->cbr_hash);
}

/* Options of their own, taken out of argv before the shared parser sees the rest. */
typedef struct view_args {
    const char *out;
    int svg;    /* export --format=svg: the folded stacks drawn (etmkit/flame.h) */
    int kernel; /* "_[k]" after kernel functions (always in the SVG: it colours them) */
    int root;   /* ek_calltree_root */
    int top;
} view_args;

/* Returns -1 to go on, or an exit status. av receives the other arguments. */
static int own_args(const char *cmd, int argc, char **argv, view_args *va, char **av, int *ac)
{
    *ac = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (i > 0 && (!strcmp(a, "-o") || !strcmp(a, "--output"))) {
            if (i + 1 >= argc) {
                cli_err("%s: %s needs a file name (see 'etmkit %s --help')", cmd, a, cmd);
                return CLI_USAGE;
            }
            va->out = argv[++i];
        } else if (i > 0 && !strncmp(a, "--output=", 9)) {
            va->out = a + 9;
        } else if (i > 0 && !strncmp(a, "--format=", 9) && !strcmp(cmd, "export")) {
            /* the last one is folded or svg: cmd_export chose this path by it, and checked
             * every --format (an earlier one of another kind is overridden, as any option) */
            va->svg = !strcmp(a + 9, "svg");
        } else if (i > 0 && !strcmp(a, "--annotate-kernel") && !strcmp(cmd, "export")) {
            va->kernel = 1;
        } else if (i > 0 && !strncmp(a, "--root=", 7) && !strcmp(cmd, "export")) {
            const char *r = a + 7;
            if (!strcmp(r, "comm"))
                va->root = EK_CALLTREE_ROOT_COMM;
            else if (!strcmp(r, "pid"))
                va->root = EK_CALLTREE_ROOT_PID;
            else if (!strcmp(r, "tid"))
                va->root = EK_CALLTREE_ROOT_TID;
            else if (!strcmp(r, "none"))
                va->root = EK_CALLTREE_ROOT_NONE;
            else {
                cli_err("%s: --root '%s': give comm, pid, tid or none", cmd, r);
                return CLI_USAGE;
            }
        } else if (i > 0 && !strncmp(a, "--top=", 6) && !strcmp(cmd, "report")) {
            char *end;
            long n = strtol(a + 6, &end, 10);
            if (*end || n < 1 || n > 1000000) {
                cli_err("%s: --top '%s': give a number from 1", cmd, a + 6);
                return CLI_USAGE;
            }
            va->top = (int)n;
        } else {
            av[(*ac)++] = argv[i];
        }
    }
    return -1;
}

/* Decode with the calltree (and the report's tables). Returns -1 and fills v on success,
 * else the exit status. The filter is applied here, after the stacks saw every sample: it
 * is taken out of the session (which would hand out only the samples it keeps). */
static int views_run(cli_decode *d, const char *cmd, int root, int kernel, int report,
                     ek_session **sp, ek_sample_filter *flt, views *v)
{
    if (!d->so.itrace.set) ek_itrace_parse("b", &d->so.itrace, NULL);
    const ek_itrace *it = &d->so.itrace;
    if (!it->branches || it->calls || it->returns || it->instructions || it->initial_skip) {
        cli_err("%s: --itrace: the stacks need every branch: give b (or no --itrace)", cmd);
        return CLI_USAGE;
    }
    int ret = cli_decode_check(d);
    if (ret >= 0) return ret;
    cli_progress pr;
    cli_progress_start(&pr, cmd, d->quiet, 0);
    d->so.progress = pr.on ? cli_progress_update : NULL;
    d->so.progress_ctx = &pr;
    ret = cli_decode_open(d, sp);
    if (ret >= 0) {
        cli_progress_end(&pr);
        return ret;
    }
    /* the session checked the filter against the recording (-C without CPUs); the stacks
     * must see every sample, so it is applied here */
    *flt = d->filter;
    memset(&d->filter, 0, sizeof d->filter);
    ek_session_info info;
    ek_session_get_info(*sp, &info);
    ek_calltree_opts o;
    ek_calltree_opts_init(&o);
    o.root = root;
    o.annotate_kernel = kernel;
    o.per_source = !info.samples_have_cpu;
    o.filter = ek_sample_filter_active(flt) ? flt : NULL;
    memset(v, 0, sizeof *v);
    v->filter = o.filter;
    v->report = report;
    int rc = ek_calltree_new(&o, &v->ct);
    if (!rc) {
        ek_consumer c;
        ek_consumer_init(&c);
        c.ctx = v;
        c.sample = on_sample;
        c.no_insn = 1;
        if (report) {
            c.wants = EK_CONSUME_ELEMS;
            c.elem = on_elem;
            c.elem_types = 1u << EK_ELEM_INSTR_RANGE; /* (on_elem counts these only) */
            c.elem_flags = EK_ELEMF_LAST_COND;
        }
        rc = ek_session_run(*sp, &c);
    }
    cli_progress_end(&pr);
    if (!rc) rc = v->rc;
    if (rc) {
        cli_err("%s: %s: %s", cmd, d->input, ek_strerror(rc));
        return CLI_FAIL;
    }
    return -1;
}

/* ---- etmkit export --format=folded ------------------------------------------------------------
 */

static void folded_usage(FILE *f)
{
    fprintf(f, "usage: etmkit export --format=folded|svg [-o OUT] [--root=comm|pid|tid|none] "
               "[options] [FILE]\n"
               "Writes Brendan Gregg's folded stacks of a CoreSight recording, the input of\n"
               "flamegraph.pl: one line per calling context, 'comm;outer;...;leaf COUNT', the\n"
               "functions outermost first, COUNT the instructions executed there, lines sorted.\n"
               "The stacks are followed through the trace (frames entered before it began are not\n"
               "known; '[gap]' marks where the trace lost a thread). --format=svg draws them as\n"
               "one interactive SVG flame graph (docs/FLAMEGRAPH.md). See docs/VIEWS.md.\n"
               "\noptions:\n"
               "  -o, --output=OUT    the stacks or the SVG ('-' or none: standard output)\n"
               "  --root=comm|pid|tid|none\n"
               "                      the first frame: the thread's comm (default), comm-PID,\n"
               "                      comm-PID/TID, or none (all threads together)\n"
               "  --annotate-kernel   '_[k]' after kernel functions (stackcollapse-perf.pl\n"
               "                      --kernel); always in the SVG, which draws them blue\n");
    cli_decode_help(f, CLI_NO_SAMPLE_TEXT | CLI_OWN_STATUS);
    fprintf(f, "--itrace: b only (the default): the stacks need every branch. The filters\n"
               "select the samples weighed; the stacks follow all of them.\n"
               "Exit status: as 'etmkit script': 1 when no sample came out of a recording with\n"
               "problems (or with --strict, any problem), it cannot be read or the output\n"
               "cannot be written; 2 on a usage error; else 0.\n");
}

/* the views' own options (va), then script's (d: parsed only when the views' were fine).
 * Returns < 0 to go on (d is then the caller's to free), else the exit status (d holds
 * nothing). */
static int views_parse(const char *cmd, int argc, char **argv, view_args *va, cli_decode *d,
                       void (*usage)(FILE *))
{
    char **av = calloc((size_t)argc + 1, sizeof *av);
    if (!av) return CLI_FAIL;
    int ac, ret = own_args(cmd, argc, argv, va, av, &ac);
    if (ret < 0) {
        ret = cli_decode_parse(d, cmd, CLI_NO_SAMPLE_TEXT, ac, av, usage);
        if (ret >= 0) cli_decode_free(d); /* what the options before the bad one made */
    }
    free(av);
    return ret;
}

int cmd_export_folded(int argc, char **argv)
{
    view_args va = {NULL, 0, 0, EK_CALLTREE_ROOT_COMM, 0};
    cli_decode d;
    int ret = views_parse("export", argc, argv, &va, &d, folded_usage);
    if (ret >= 0) return ret;
    ek_session *s = NULL;
    ek_sample_filter flt = EK_SAMPLE_FILTER_INIT;
    views v;
    memset(&v, 0, sizeof v);
    ek_sbuf text = EK_SBUF_INIT;
    ret = views_run(&d, "export", va.root, va.kernel || va.svg, 0, &s, &flt, &v);
    if (ret >= 0) goto done;
    int rc = ek_calltree_folded(v.ct, &text);
    if (rc) {
        cli_err("export: %s", ek_strerror(rc));
        ret = CLI_FAIL;
        goto done;
    }
    ek_sbuf rep = EK_SBUF_INIT;
    ek_session_report(s, &rep, d.verbose ? EK_REPORT_VERBOSE : EK_REPORT_SUMMARY);
    if (!text.len) /* the exit status is script's: 0 when a filter left nothing */
        fprintf(stderr, "etmkit export: %s: no stacks: no instructions %s%s\n", d.input,
                v.filter ? "that the filters keep" : "came out of the trace",
                rep.len ? " (below: why)" : "");
    if (rep.len && (!d.quiet || !text.len)) fputs(rep.p, stderr);
    ek_sbuf_free(&rep);
    if (va.svg) { /* the same stacks, drawn */
        ek_calltree_stats cs;
        ek_calltree_get_stats(v.ct, &cs);
        const char *base = strrchr(d.input, '/');
        char sub[128];
        snprintf(sub, sizeof sub, "instructions executed, %llu branches sample%s",
                 (unsigned long long)cs.weighed, plural(cs.weighed));
        ek_flame_opts fo = EK_FLAME_OPTS_INIT;
        fo.title = base ? base + 1 : d.input;
        fo.subtitle = sub;
        ek_sbuf svg = EK_SBUF_INIT;
        rc = ek_flame_svg(text.p ? text.p : "", text.len, &fo, &svg, NULL);
        ek_sbuf_free(&text);
        text = svg;
        if (rc) {
            cli_err("export: --format=svg: %s", ek_strerror(rc));
            ret = CLI_FAIL;
            goto done;
        }
    }
    if (cli_write_file(va.out, "export", &text)) {
        cli_out_error("export", va.out, errno);
        ret = CLI_FAIL;
        goto done;
    }
    ret = cli_decode_status(&d, s, 0);
done:
    ek_sbuf_free(&text);
    views_free(&v);
    ek_session_free(s);
    ek_sample_filter_free(&flt);
    cli_decode_free(&d);
    return ret;
}

/* ---- etmkit report ------------------------------------------------------------------------- */

static void report_usage(FILE *f)
{
    fprintf(f, "usage: etmkit report [--format=text|json] [--top=N] [-o OUT] [options] [FILE]\n"
               "Decodes a CoreSight recording and says where its instructions went: the functions\n"
               "that ran most (by themselves, and with their callees, from the call stacks\n"
               "followed through the trace), the DSOs, threads and CPUs, the calls into each\n"
               "function, the conditional branches executed most with how often each was taken,\n"
               "and the trace that was lost and why (as 'etmkit doctor' says it). See\n"
               "docs/VIEWS.md.\n"
               "\noptions:\n"
               "  --format=text|json  text (default), or one JSON document (docs/VIEWS.md)\n"
               "  --top=N             rows per table (default 20)\n"
               "  -o, --output=OUT    the report ('-' or none: standard output)\n");
    cli_decode_help(f, CLI_NO_SAMPLE_TEXT);
    fprintf(f, "--itrace: b only (the default). The filters select the samples counted.\n");
}

typedef struct rowf {
    size_t i;
    uint64_t key;
} rowf;

static int row_cmp(const void *a, const void *b)
{
    const rowf *x = a, *y = b;
    if (x->key != y->key) return x->key > y->key ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

typedef struct dso_acc {
    const char *dso;
    uint64_t insns;
} dso_acc;

static double pct(uint64_t a, uint64_t b)
{
    return b ? 100.0 * (double)a / (double)b : 0.0;
}

static void jstr(ek_sbuf *o, const char *s)
{
    ek_json_string(o, s ? s : "");
}

int cmd_report(int argc, char **argv)
{
    view_args va = {NULL, 0, 0, EK_CALLTREE_ROOT_NONE, 20};
    cli_decode d;
    int ret = views_parse("report", argc, argv, &va, &d, report_usage);
    if (ret >= 0) return ret;
    ek_session *s = NULL;
    ek_sample_filter flt = EK_SAMPLE_FILTER_INIT;
    views v;
    memset(&v, 0, sizeof v);
    ek_sbuf o = EK_SBUF_INIT;
    rowf *rows = NULL;
    dso_acc *dsos = NULL;
    ek_account *acct = NULL;
    ret = views_run(&d, "report", EK_CALLTREE_ROOT_NONE, 0, 1, &s, &flt, &v);
    if (ret >= 0) goto done;
    ek_calltree_stats cs;
    ek_calltree_get_stats(v.ct, &cs);
    ek_stacks_stats ss;
    ek_stacks_get_stats(ek_calltree_stacks(v.ct), &ss);
    ek_session_stats st;
    ek_session_get_stats(s, &st);
    uint64_t total = cs.instructions;
    size_t nf = ek_calltree_nfuncs(v.ct), top = (size_t)va.top;
    size_t nrows = nf > v.ncbrs ? nf : v.ncbrs;
    if (nrows < v.nthrs) nrows = v.nthrs;
    rows = calloc(nrows + 1, sizeof *rows);
    dsos = calloc(nf + 1, sizeof *dsos);
    if (!rows || !dsos || ek_session_account(s, &acct)) {
        cli_err("report: %s", ek_strerror(EK_ERR_NOMEM));
        ret = CLI_FAIL;
        goto done;
    }
    int json = d.json;
    if (json) {
        ek_sbuf_puts(&o, "{\n  \"schema\": \"etmkit-report/1\",\n  \"recording\": ");
        jstr(&o, d.input);
        ek_sbuf_printf(&o,
                       ",\n  \"instructions\": %" PRIu64 ",\n  \"branches_samples\": %" PRIu64
                       ",\n  \"decoded_instructions\": %" PRIu64 ",\n  \"trace_bytes\": %" PRIu64
                       ",\n  \"trace_bytes_decoded\": %" PRIu64 ",\n",
                       total, cs.weighed, st.instructions, st.trace_bytes, st.trace_bytes_decoded);
        ek_sbuf_printf(
            &o,
            "  \"stacks\": {\"calls\": %" PRIu64 ", \"returns\": %" PRIu64
            ", \"returns_below\": %" PRIu64 ", \"resyncs\": %" PRIu64 ", \"unmatched\": %" PRIu64
            ", \"gaps\": %" PRIu64 ", \"threads\": %" PRIu64 "},\n",
            ss.calls, ss.returns, ss.returns_below, ss.resyncs, ss.unmatched, ss.gaps, ss.threads);
    } else {
        ek_sbuf_printf(&o,
                       "# %s: %" PRIu64 " instruction%s in %" PRIu64 " branches sample%s (%" PRIu64
                       " of %" PRIu64 " trace bytes decoded)\n",
                       d.input, total, plural(total), cs.weighed, plural(cs.weighed),
                       st.trace_bytes_decoded, st.trace_bytes);
        ek_sbuf_printf(&o,
                       "# stacks: %" PRIu64 " call%s, %" PRIu64 " return%s, %" PRIu64
                       " return%s below the first frame, %" PRIu64 " gap%s, %" PRIu64
                       " thread%s\n",
                       ss.calls, plural(ss.calls), ss.returns, plural(ss.returns),
                       ss.returns_below, plural(ss.returns_below), ss.gaps, plural(ss.gaps),
                       ss.threads, plural(ss.threads));
    }
    /* functions: by self, then by total */
    for (int pass = 0; pass < 2; pass++) {
        size_t n = 0;
        for (size_t i = 0; i < nf; i++) {
            const ek_calltree_func *f = ek_calltree_func_get(v.ct, i);
            uint64_t k = pass ? f->total : f->self;
            if (k && f->kind != EK_CTF_GAP && f->kind != EK_CTF_ROOT) rows[n++] = (rowf){i, k};
        }
        qsort(rows, n, sizeof *rows, row_cmp);
        if (n > top) n = top;
        if (json)
            ek_sbuf_printf(&o, "  \"%s\": [", pass ? "functions_total" : "functions_self");
        else
            ek_sbuf_printf(&o, "\n## functions by instructions%s\n%14s %7s %14s %7s %10s  %s\n",
                           pass ? " with callees" : " (self)", "self", "%", "total", "%", "calls",
                           "function (dso)");
        for (size_t r = 0; r < n; r++) {
            const ek_calltree_func *f = ek_calltree_func_get(v.ct, rows[r].i);
            if (json) {
                ek_sbuf_puts(&o, r ? ",\n    {\"name\": " : "\n    {\"name\": ");
                jstr(&o, f->name);
                ek_sbuf_puts(&o, ", \"dso\": ");
                jstr(&o, f->dso);
                ek_sbuf_printf(
                    &o, ", \"self\": %" PRIu64 ", \"total\": %" PRIu64 ", \"calls\": %" PRIu64 "}",
                    f->self, f->total, f->calls);
            } else {
                ek_sbuf_printf(&o, "%14" PRIu64 " %6.2f%% %14" PRIu64 " %6.2f%% %10" PRIu64 "  %s",
                               f->self, pct(f->self, total), f->total, pct(f->total, total),
                               f->calls, f->name);
                if (f->dso[0]) ek_sbuf_printf(&o, " (%s)", f->dso);
                ek_sbuf_putc(&o, '\n');
            }
        }
        if (json) ek_sbuf_puts(&o, n ? "\n  ],\n" : "],\n");
    }
    /* DSOs: the instructions of the functions in them */
    size_t nd = 0;
    for (size_t i = 0; i < nf; i++) {
        const ek_calltree_func *f = ek_calltree_func_get(v.ct, i);
        if (!f->self || f->kind == EK_CTF_ROOT) continue;
        const char *name = f->kind == EK_CTF_GAP ? "" : f->dso;
        size_t k = 0;
        while (k < nd && strcmp(dsos[k].dso, name))
            k++;
        if (k == nd) dsos[nd++] = (dso_acc){name, 0};
        dsos[k].insns += f->self;
    }
    for (size_t i = 0; i < nd; i++)
        rows[i] = (rowf){i, dsos[i].insns};
    qsort(rows, nd, sizeof *rows, row_cmp);
    if (json)
        ek_sbuf_puts(&o, "  \"dsos\": [");
    else
        ek_sbuf_printf(&o, "\n## DSOs\n%14s %7s  %s\n", "instructions", "%", "dso");
    for (size_t r = 0; r < nd && r < top; r++) {
        const dso_acc *a = &dsos[rows[r].i];
        if (json) {
            ek_sbuf_puts(&o, r ? ",\n    {\"dso\": " : "\n    {\"dso\": ");
            jstr(&o, a->dso);
            ek_sbuf_printf(&o, ", \"instructions\": %" PRIu64 "}", a->insns);
        } else {
            ek_sbuf_printf(&o, "%14" PRIu64 " %6.2f%%  %s\n", a->insns, pct(a->insns, total),
                           a->dso[0] ? a->dso : "[unknown]");
        }
    }
    if (json) ek_sbuf_puts(&o, nd ? "\n  ],\n" : "],\n");
    /* threads */
    for (size_t i = 0; i < v.nthrs; i++)
        rows[i] = (rowf){i, v.thrs[i].insns};
    qsort(rows, v.nthrs, sizeof *rows, row_cmp);
    if (json)
        ek_sbuf_puts(&o, "  \"threads\": [");
    else
        ek_sbuf_printf(&o, "\n## threads\n%14s %7s %12s  %s\n", "instructions", "%", "samples",
                       "pid/tid comm");
    for (size_t r = 0; r < v.nthrs && r < top; r++) {
        const thr *t = &v.thrs[rows[r].i];
        if (json) {
            ek_sbuf_printf(&o, "%s    {\"pid\": %d, \"tid\": %d, \"comm\": ", r ? ",\n" : "\n",
                           (int)t->pid, (int)t->tid);
            jstr(&o, t->comm);
            ek_sbuf_printf(&o, ", \"instructions\": %" PRIu64 ", \"samples\": %" PRIu64 "}",
                           t->insns, t->samples);
        } else {
            ek_sbuf_printf(&o, "%14" PRIu64 " %6.2f%% %12" PRIu64 "  %d/%d %s\n", t->insns,
                           pct(t->insns, total), t->samples, (int)t->pid, (int)t->tid,
                           t->comm[0] ? t->comm : "[unknown]");
        }
    }
    if (json) ek_sbuf_puts(&o, v.nthrs ? "\n  ],\n" : "],\n");
    /* CPUs, in their order */
    for (size_t i = 0; i < v.ncpus; i++)
        for (size_t j = i + 1; j < v.ncpus; j++)
            if (v.cpus[j].cpu < v.cpus[i].cpu) {
                cpu_acc t = v.cpus[i];
                v.cpus[i] = v.cpus[j];
                v.cpus[j] = t;
            }
    if (json)
        ek_sbuf_puts(&o, "  \"cpus\": [");
    else
        ek_sbuf_printf(&o, "\n## CPUs\n%14s %7s  %s\n", "instructions", "%", "cpu");
    for (size_t i = 0; i < v.ncpus; i++) {
        if (json)
            ek_sbuf_printf(&o, "%s    {\"cpu\": %d, \"instructions\": %" PRIu64 "}",
                           i ? ",\n" : "\n", (int)v.cpus[i].cpu, v.cpus[i].insns);
        else
            ek_sbuf_printf(&o, "%14" PRIu64 " %6.2f%%  %d\n", v.cpus[i].insns,
                           pct(v.cpus[i].insns, total), (int)v.cpus[i].cpu);
    }
    if (json) ek_sbuf_puts(&o, v.ncpus ? "\n  ],\n" : "],\n");
    /* conditional branches, by executions */
    uint64_t ctaken = 0, cnot = 0;
    for (size_t i = 0; i < v.ncbrs; i++) {
        rows[i] = (rowf){i, v.cbrs[i].taken + v.cbrs[i].not_taken};
        ctaken += v.cbrs[i].taken;
        cnot += v.cbrs[i].not_taken;
    }
    qsort(rows, v.ncbrs, sizeof *rows, row_cmp);
    if (json)
        ek_sbuf_printf(&o,
                       "  \"conditional_branches\": {\"executed\": %" PRIu64 ", \"taken\": %" PRIu64
                       ", \"not_taken\": %" PRIu64 ", \"hottest\": [",
                       ctaken + cnot, ctaken, cnot);
    else
        ek_sbuf_printf(&o,
                       "\n## conditional branches: %" PRIu64 " executed, %" PRIu64
                       " taken (%.2f%%)\n%14s %14s %7s  %s\n",
                       ctaken + cnot, ctaken, pct(ctaken, ctaken + cnot), "executed", "taken", "%",
                       "branch");
    for (size_t r = 0; r < v.ncbrs && r < top; r++) {
        const cbr *c = &v.cbrs[rows[r].i];
        uint64_t ex = c->taken + c->not_taken;
        if (json) {
            ek_sbuf_printf(&o, "%s      {\"pid\": %d, \"addr\": \"0x%" PRIx64 "\", \"where\": ",
                           r ? ",\n" : "\n", (int)c->pid, c->addr);
            jstr(&o, c->name);
            ek_sbuf_printf(&o, ", \"taken\": %" PRIu64 ", \"not_taken\": %" PRIu64 "}", c->taken,
                           c->not_taken);
        } else {
            ek_sbuf_printf(&o, "%14" PRIu64 " %14" PRIu64 " %6.2f%%  %" PRIx64 " %s\n", ex,
                           c->taken, pct(c->taken, ex), c->addr, c->name ? c->name : "");
        }
    }
    if (json) ek_sbuf_puts(&o, v.ncbrs ? "\n    ]\n  },\n" : "]},\n");
    /* the trace that was lost, and why */
    if (json) {
        ek_sbuf_puts(&o, "  \"account\": ");
        ek_sbuf acc = EK_SBUF_INIT;
        ek_account_json(acct, &acc, d.verbose ? EK_REPORT_VERBOSE : EK_REPORT_FULL);
        while (acc.len && (acc.p[acc.len - 1] == '\n'))
            acc.len--;
        if (acc.len)
            ek_sbuf_put(&o, acc.p, acc.len);
        else
            ek_sbuf_puts(&o, "null");
        ek_sbuf_free(&acc);
        ek_sbuf_puts(&o, "\n}\n");
    } else {
        ek_sbuf_puts(&o, "\n## trace not decoded, and why\n");
        size_t before = o.len;
        ek_account_text(acct, &o, d.verbose ? EK_REPORT_VERBOSE : EK_REPORT_FULL);
        if (o.len == before) ek_sbuf_puts(&o, "all of the trace was decoded\n");
    }
    if (o.oom) {
        cli_err("report: %s", ek_strerror(EK_ERR_NOMEM));
        ret = CLI_FAIL;
        goto done;
    }
    if (cli_write_file(va.out, "report", &o)) {
        cli_out_error("report", va.out, errno);
        ret = CLI_FAIL;
        goto done;
    }
    ret = cli_decode_status(&d, s, 0);
    if (ret != CLI_OK && !cs.weighed)
        cli_err("report: %s: no sample came out of the trace (the report's account says why)",
                d.input);
done:
    ek_account_free(acct);
    free(rows);
    free(dsos);
    ek_sbuf_free(&o);
    views_free(&v);
    ek_session_free(s);
    ek_sample_filter_free(&flt);
    cli_decode_free(&d);
    return ret;
}
