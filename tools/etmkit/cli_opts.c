/* The decoding options of `etmkit script`, `doctor`, `export` and `inject` (cli_opts.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_opts.h"

enum {
    O_HELP,
    O_ITRACE,
    O_FIELDS,
    O_SYMFS,
    O_BUILDID,
    O_VMLINUX,
    O_KALLSYMS,
    O_KCORE,
    O_JITDUMP,
    O_RAW_CPU,
    O_THREADS,
    O_INPUT,
    O_CPU,
    O_PID,
    O_TID,
    O_COMM,
    O_TIME,
    O_NO_END_FLUSH,
    O_NS,
    O_CALL_TRACE,
    O_CALL_RET_TRACE,
    O_PERF_CALLINDENT,
    O_QUIET,
    O_VERBOSE,
    O_STRICT,
    O_FORMAT,
    O_IMAGE,
};

/* arg: 0 none; 1 a value ("--name=V", "--name V", "-xV", "-x V"); 2 an optional value, only
 * after '=' (perf's --itrace: alone, the default samples) */
static const struct {
    const char *lng, *shrt;
    int arg, id;
} options[] = {
    {"--help", "-h", 0, O_HELP},
    {"--itrace", NULL, 2, O_ITRACE},
    {"--fields", "-F", 1, O_FIELDS},
    {"--symfs", NULL, 1, O_SYMFS},
    {"--buildid-dir", NULL, 1, O_BUILDID},
    {"--vmlinux", "-k", 1, O_VMLINUX},
    {"--kallsyms", NULL, 1, O_KALLSYMS},
    {"--kcore", NULL, 1, O_KCORE},
    {"--jitdump", NULL, 1, O_JITDUMP},
    {"--raw-cpu", NULL, 1, O_RAW_CPU},
    {"--threads", "-j", 1, O_THREADS},
    {"--input", "-i", 1, O_INPUT},
    {"--cpu", "-C", 1, O_CPU},
    {"--pid", NULL, 1, O_PID},
    {"--tid", NULL, 1, O_TID},
    {"--comm", NULL, 1, O_COMM},
    {"--time", NULL, 1, O_TIME},
    {"--no-end-flush", NULL, 0, O_NO_END_FLUSH},
    {"--ns", NULL, 0, O_NS},
    {"--call-trace", NULL, 0, O_CALL_TRACE},
    {"--call-ret-trace", NULL, 0, O_CALL_RET_TRACE},
    {"--perf-callindent", NULL, 0, O_PERF_CALLINDENT},
    {"--quiet", "-q", 0, O_QUIET},
    {"--verbose", "-v", 0, O_VERBOSE},
    {"--strict", NULL, 0, O_STRICT},
    {"--format", NULL, 1, O_FORMAT}, /* doctor and report only */
    {"--image", NULL, 1, O_IMAGE},
};
#define NOPTIONS (sizeof options / sizeof options[0])

void cli_decode_help(FILE *f, unsigned without)
{
    fprintf(f, "input:\n"
               "  -i, --input=FILE  the recording (or give it as FILE): a perf.data file, a\n"
               "                    perf.data folder with kcore_dir/, or a trace snapshot folder\n"
               "                    (snapshot.ini: every trace source decoded with its memory\n"
               "                    dumps, trace IDs as threads); default ./perf.data, as perf\n"
               "  --trace=FILE      a bare trace file (a probe's capture, ETB/ETR memory), read\n"
               "                    as a snapshot with this configuration (docs/DUMP.md):\n"
               "                    --framing=raw|frames|dstream, --protocol=P, --reg NAME=VALUE,\n"
               "                    --trace-id=ID, --arch=CORE, --config-from=SNAPSHOT_DIR[:DEV]\n"
               "                    or --config-from=DEVICE.ini\n"
               "samples:\n"
               "  --itrace=OPTS     samples to make, as perf: i[N][i], b, c, r, l[N], s[N], Z, e;\n"
               "                    without it (or --itrace alone) perf 6.1's: every branch;\n"
               "                    g[N]: a call chain of N entries (default 16) on every\n"
               "                    sample, from the call stacks etmkit follows (perf 6.1's\n"
               "                    cs-etm ignores g)\n");
    if (!(without & CLI_NO_SAMPLE_TEXT))
        fprintf(f,
                "  -F, --fields=LIST fields, as perf: comm,pid,tid,cpu,time,event,flags,ip,sym,\n"
                "                    symoff,dso,addr,period,brstack,brstacksym,insn,insnlen,misc,\n"
                "                    callindent (the call depth, as indentation)\n"
                "  --ns              times in nanoseconds\n"
                "  --call-trace      calls as an indented tree, as perf: -F -ip,-addr,-event,\n"
                "                    -period,+callindent, --ns, DSO padded to 50 (samples: every\n"
                "                    branch, as perf 6.1 makes them; the depth from the call\n"
                "                    stacks etmkit follows)\n"
                "  --call-ret-trace  calls and returns: as --call-trace, +flags, DSO not padded\n"
                "  --perf-callindent callindent at depth 0, as perf 6.1 prints it on CoreSight\n"
                "                    (its cs-etm follows no call stack)\n");
    fprintf(f,
            "  --no-end-flush    as perf 6.1: no \"tr end\" sample for the last branch of the\n"
            "                    trace (perf never tells its decoder that the trace ended)\n"
            "filters, as perf (they select samples; the account of unused trace is whole):\n"
            "  -C, --cpu=LIST    samples of these CPUs only: 0-2,4; as perf, the trace buffers\n"
            "                    of other CPUs give none (with a shared sink they hold some)\n"
            "  --pid=LIST        of these processes only: 1000,1001\n"
            "  --tid=LIST        of these threads only: 1000,1002\n"
            "  --comm=LIST       of these command names only: bash,make\n"
            "  --time=START,STOP samples from START to STOP (seconds, both included, up to 9\n"
            "                    decimals; START, or ,STOP for an open end; several ranges\n"
            "                    separated by blanks)\n"
            "code and symbols (each is checked before decoding):\n"
            "  --symfs=DIR       look for recorded files under DIR\n"
            "  --buildid-dir=DIR build-id cache (default ~/.debug)\n"
            "  -k, --vmlinux=F   kernel image (vmlinux, or a kcore file)\n"
            "  --kallsyms=F      kernel symbols\n"
            "  --kcore=DIR       folder made by 'perf record --kcore' (kcore, kallsyms)\n"
            "  --jitdump=F       a JIT's jit-PID.dump when the recorded one is not under --symfs\n"
            "  --image=FILE@ADDR (snapshot folders, repeatable) code the memory dumps lack: an\n"
            "                    ELF file's executable segments, placed so that its lowest\n"
            "                    PT_LOAD segment starts at ADDR (ELF alone: at its link\n"
            "                    addresses; its symbols name the samples), or any other file's\n"
            "                    raw bytes at ADDR\n"
            "  --raw-cpu=N       decode raw (TRBE) trace that no record ties to a CPU (perf\n"
            "                    record --per-thread) with CPU N's configuration (needed only\n"
            "                    when the CPUs are configured differently: big.LITTLE)\n"
            "running:\n"
            "  -j, --threads=N   at most N threads at work at once (1-1024), decoders and\n"
            "                    output together: -j 1 is one core (default: a decoder per\n"
            "                    queue, all cores)\n"
            "  -q, --quiet       nothing on stderr but errors\n"
            "  -v, --verbose     more detail (doctor: every record and range; the others:\n"
            "                    the full account of unused trace on stderr, as doctor's)\n"
            "  --strict          exit 1 when any problem was found, even if samples came out\n");
    if (!(without & CLI_OWN_STATUS))
        fprintf(
            f, "Exit status: 0 when samples came out, or nothing in the recording was a problem;\n"
               "1 when the input cannot be read or the output cannot be written, when no\n"
               "sample at all came out of a recording with problems, or with --strict when any\n"
               "problem was found; 2 on a usage error (an unknown option, a bad value, a file\n"
               "option naming a missing or wrong file).\n");
}

/* The options of a group a command may leave out (cli_opts.h). */
static unsigned group_of(int id)
{
    return id == O_FIELDS || id == O_NS || id == O_CALL_TRACE || id == O_CALL_RET_TRACE ||
                   id == O_PERF_CALLINDENT
               ? CLI_NO_SAMPLE_TEXT
               : 0;
}

static int usage_error(cli_decode *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage_error(cli_decode *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "etmkit: %s: ", d->cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see 'etmkit %s --help')\n", d->cmd);
    va_end(ap);
    return CLI_USAGE;
}

/* A library parser's one-line reason, with the hint. */
static int parse_error(cli_decode *d, ek_sbuf *err)
{
    int rc = usage_error(d, "%s", err->p ? err->p : "bad value");
    ek_sbuf_free(err);
    return rc;
}

int cli_decode_parse(cli_decode *d, const char *cmd, unsigned without, int argc, char **argv,
                     void (*usage)(FILE *))
{
    memset(d, 0, sizeof *d);
    d->cmd = cmd;
    ek_session_opts_init(&d->so);
    ek_script_fields_default(&d->fields);
    d->input = "perf.data";
    int only_files = 0, bare_itrace = -1, input_at = -1;
    int itrace_given = 0, call_trace = 0; /* --call-trace / --call-ret-trace given */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_files || a[0] != '-' || !a[1]) {
            if (d->input_given && input_at >= 0 && input_at == bare_itrace + 1)
                return usage_error(d,
                                   "'--itrace %s': as perf, --itrace takes its letters after "
                                   "'=': --itrace=%s",
                                   d->input, d->input);
            if (d->input_given)
                return usage_error(d, "two inputs, '%s' and '%s': give one recording", d->input, a);
            d->input = a;
            d->input_given = 1;
            input_at = i;
            continue;
        }
        if (!strcmp(a, "--")) {
            only_files = 1;
            continue;
        }
        /* a bare trace file: --trace FILE, --framing, --protocol, --reg, ... (cli_bare.h) */
        int br = cli_bare_arg(&d->bare, cmd, argc, argv, &i);
        if (br > 0) return br;
        if (br < 0) continue;
        /* "--name=value", "--name value", "-x value", "-xvalue" */
        const char *v = NULL;
        size_t k = 0, spelt = 0;
        for (; k < NOPTIONS; k++) {
            if (group_of(options[k].id) & without) continue; /* not this command's */
            size_t n = strlen(options[k].lng);
            if (!strncmp(a, options[k].lng, n) && (a[n] == '=' || !a[n])) {
                spelt = n;
                if (a[n] == '=') v = a + n + 1;
                break;
            }
            if (options[k].shrt && !strncmp(a, options[k].shrt, 2) && (!a[2] || options[k].arg)) {
                spelt = 2;
                if (a[2]) v = a + 2;
                break;
            }
        }
        if (k == NOPTIONS || (options[k].id == O_FORMAT && strcmp(cmd, "doctor") && strcmp(cmd, "report")))
            return usage_error(d, "unknown option '%s'", a);
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)spelt, a);
        if (!options[k].arg && v) return usage_error(d, "%s takes no value", name);
        if (options[k].arg == 1 && !v) {
            if (i + 1 >= argc) return usage_error(d, "%s needs a value", name);
            v = argv[++i];
        }
        ek_sbuf err = EK_SBUF_INIT;
        switch (options[k].id) {
        case O_HELP: usage(stdout); return CLI_OK;
        case O_ITRACE:
            itrace_given = 1;
            if (!v) {
                /* alone: perf's default samples */
                ek_itrace_parse(NULL, &d->so.itrace, NULL);
                bare_itrace = i;
                break;
            }
            if (!*v)
                return usage_error(d, "%s= is empty: give the samples to make, as i100i, b or il",
                                   name);
            if (ek_itrace_parse(v, &d->so.itrace, &err)) return parse_error(d, &err);
            break;
        case O_FIELDS: {
            ek_script_fields nf = d->fields;
            if (ek_script_fields_parse(v, &nf, &err)) return parse_error(d, &err);
            const char *spec = strchr(v, ':') ? strchr(v, ':') + 1 : v;
            if (call_trace && (*spec == '+' || *spec == '-')) {
                /* +field/-field after --call-trace edit its fields, as in perf */
                uint32_t plus = nf.named & nf.fields, minus = nf.named & ~nf.fields;
                nf.fields = (d->fields.fields & ~minus) | plus;
                nf.named |= d->fields.named;
            }
            d->fields = nf;
            break;
        }
        case O_CALL_TRACE:
        case O_CALL_RET_TRACE: {
            /* perf's parse_call_trace / parse_callret_trace: fields edited, nanosecond times,
             * (--call-trace) DSO names padded to 50 */
            const uint32_t minus = EK_SF_F_IP | EK_SF_F_ADDR | EK_SF_F_EVENT | EK_SF_F_PERIOD;
            const uint32_t plus =
                EK_SF_F_CALLINDENT | (options[k].id == O_CALL_RET_TRACE ? EK_SF_F_FLAGS : 0);
            d->fields.fields = (d->fields.fields & ~minus) | plus;
            d->fields.named |= minus | plus;
            d->fields.user_set = 1;
            d->ns = 1;
            if (options[k].id == O_CALL_TRACE) d->fields.pad_dso = 50;
            call_trace = 1;
            break;
        }
        case O_PERF_CALLINDENT: d->fields.flat_callindent = 1; break;
        case O_SYMFS:
            d->so.symfs = v;
            d->symfs_opt = options[k].lng;
            break;
        case O_BUILDID:
            d->so.buildid_dir = v;
            d->buildid_opt = options[k].lng;
            break;
        case O_VMLINUX:
            d->so.vmlinux = v;
            d->vmlinux_opt = spelt == 2 ? "-k" : options[k].lng;
            break;
        case O_KALLSYMS:
            d->so.kallsyms = v;
            d->kallsyms_opt = options[k].lng;
            break;
        case O_JITDUMP:
            d->so.jitdump = v;
            d->jitdump_opt = options[k].lng;
            break;
        case O_KCORE:
            d->so.kcore_dir = v;
            d->kcore_opt = options[k].lng;
            break;
        case O_RAW_CPU: {
            char *end;
            errno = 0;
            unsigned long n = strtoul(v, &end, 10);
            if (!*v || *end || errno || n > 65535 || v[0] == '-' || v[0] == '+')
                return usage_error(d, "%s '%s': give a CPU number", name, v);
            d->so.raw_cpu = (uint32_t)n + 1;
            break;
        }
        case O_THREADS: {
            char *end;
            errno = 0;
            unsigned long n = strtoul(v, &end, 10);
            if (!*v || *end || errno || n < 1 || n > 1024 || v[0] == '-' || v[0] == '+')
                return usage_error(d, "%s '%s': give a number of threads, 1-1024", name, v);
            d->so.threads = (unsigned)n;
            break;
        }
        case O_INPUT:
            if (d->input_given)
                return usage_error(d, "two inputs, '%s' and '%s': give one recording", d->input, v);
            d->input = v;
            d->input_given = 1;
            break;
        case O_CPU:
            if (ek_sample_filter_cpus(&d->filter, v, &err)) return parse_error(d, &err);
            break;
        case O_PID:
            if (ek_sample_filter_pids(&d->filter, v, &err)) return parse_error(d, &err);
            break;
        case O_TID:
            if (ek_sample_filter_tids(&d->filter, v, &err)) return parse_error(d, &err);
            break;
        case O_COMM:
            if (ek_sample_filter_comms(&d->filter, v, &err)) return parse_error(d, &err);
            break;
        case O_TIME:
            if (ek_sample_filter_time(&d->filter, v, &err)) return parse_error(d, &err);
            break;
        case O_NO_END_FLUSH: d->so.compat |= EK_COMPAT_NO_END_FLUSH; break;
        case O_NS: d->ns = 1; break;
        case O_QUIET: d->quiet = 1; break;
        case O_VERBOSE: d->verbose = 1; break;
        case O_STRICT: d->strict = 1; break;
        case O_IMAGE: {
            int r = cli_image_arg(d->cmd, v, &d->images, &d->nimages);
            if (r >= 0) return r;
            d->so.images = d->images;
            d->so.nimages = d->nimages;
            break;
        }
        case O_FORMAT: /* the last one given wins, as with every other option */
            if (strcmp(v, "json") && strcmp(v, "text"))
                return usage_error(d, "%s '%s': give text or json", name, v);
            d->json = !strcmp(v, "json");
            break;
        }
    }
    d->fields.ns = d->ns;
    if (ek_sample_filter_active(&d->filter)) d->so.filter = &d->filter;
    /* --call-trace asks perf for "cewp", --call-ret-trace for "crewp": perf 6.1's cs-etm
     * ignores c and r and makes every branch, as without --itrace (ek_itrace_default) */
    if (call_trace && !itrace_given) ek_itrace_parse(NULL, &d->so.itrace, NULL);
    if (!strcmp(cmd, "script") &&
        ((d->fields.fields & EK_SF_F_CALLINDENT) || d->so.itrace.callchain)) {
        /* the call stacks follow every branch, in output order: the session makes every
         * branch and keeps every sample of the CPUs it decodes (-C leaves the others' trace
         * out, as perf), and the consumer leaves out what c, r, s and the filter leave out
         * once the stacks saw it */
        if (d->so.filter && d->filter.ncpus && d->so.itrace.initial_skip)
            return usage_error(d,
                               "%s with -C: --itrace=s does not go with them yet (it counts "
                               "the samples -C leaves out in decoded buffers)",
                               d->so.itrace.callchain ? "call chains (--itrace=g)"
                                                      : "callindent (call traces)");
        d->fields.sel_calls = d->so.itrace.calls;
        d->fields.sel_returns = d->so.itrace.returns;
        d->fields.sel_skip = d->so.itrace.initial_skip;
        d->so.itrace.calls = d->so.itrace.returns = 0;
        d->so.itrace.initial_skip = 0;
        if (d->so.filter) {
            d->fields.sel_filter = &d->filter;
            d->cpus.cpus = d->filter.cpus;
            d->cpus.ncpus = d->filter.ncpus;
            d->so.filter = d->cpus.ncpus ? &d->cpus : NULL;
        }
        if (!d->so.itrace.branches && !d->so.itrace.instructions)
            return usage_error(d,
                               "%s: --itrace makes no samples to show them on: give b or i "
                               "(bg, i100ig)",
                               d->so.itrace.callchain ? "call chains (--itrace=g)"
                                                      : "callindent (call traces)");
        if (!d->so.itrace.branches) {
            /* branches made for the stacks only */
            d->so.itrace.branches = 1;
            d->fields.stack_branches_only = 1;
        }
    }
    return -1;
}

/* ---- checks before decoding -------------------------------------------------------------------
 */

/* Read the first bytes of path into buf; returns the count, or -1 with errno set. */
static ssize_t head_of(const char *path, char *buf, size_t n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t got = 0;
    while ((size_t)got < n) {
        ssize_t r = read(fd, buf + got, n - (size_t)got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        if (!r) break;
        got += r;
    }
    close(fd);
    return got;
}

static int is_elf(const char *buf, ssize_t n)
{
    return n >= 4 && !memcmp(buf, "\177ELF", 4);
}

/* The first non-empty line is "ADDRESS TYPE NAME" (/proc/kallsyms). */
static int is_kallsyms(const char *buf, ssize_t n)
{
    ssize_t i = 0;
    while (i < n && buf[i] == '\n')
        i++;
    ssize_t digits = 0;
    while (i < n && strchr("0123456789abcdefABCDEF", buf[i]) && buf[i]) {
        i++;
        digits++;
    }
    return digits >= 1 && digits <= 16 && i + 3 < n && buf[i] == ' ' && buf[i + 1] != ' ' &&
           buf[i + 1] != '\n' && buf[i + 2] == ' ' && buf[i + 3] != '\n' && buf[i + 3] != ' ';
}

/* perf's jitdump: the magic "JiTD" as a 32-bit word of either byte order */
static int is_jitdump(const char *buf, ssize_t n)
{
    return n >= 4 && (!memcmp(buf, "DTiJ", 4) || !memcmp(buf, "JiTD", 4));
}

enum { F_ELF, F_KALLSYMS, F_JITDUMP };

/* A file option: the file exists, is a readable regular file, and its start looks right. */
static int check_file(cli_decode *d, const char *opt, const char *path, int kind)
{
    struct stat st;
    if (stat(path, &st)) return usage_error(d, "%s %s: %s", opt, path, strerror(errno));
    if (S_ISDIR(st.st_mode)) return usage_error(d, "%s %s: %s", opt, path, strerror(EISDIR));
    char buf[256];
    ssize_t n = head_of(path, buf, sizeof buf);
    if (n < 0) return usage_error(d, "%s %s: %s", opt, path, strerror(errno));
    if (kind == F_ELF && !is_elf(buf, n))
        return usage_error(d, "%s %s: not an ELF file (a vmlinux, or a kcore file)", opt, path);
    if (kind == F_JITDUMP && !is_jitdump(buf, n))
        return usage_error(d, "%s %s: not a jitdump file (perf's jit-PID.dump starts with 'JiTD')",
                           opt, path);
    if (kind == F_KALLSYMS && !is_kallsyms(buf, n))
        return usage_error(d,
                           "%s %s: not a kallsyms file (its lines are 'ADDRESS TYPE NAME', as "
                           "/proc/kallsyms)",
                           opt, path);
    return -1;
}

static int check_dir(cli_decode *d, const char *opt, const char *path)
{
    struct stat st;
    if (stat(path, &st)) return usage_error(d, "%s %s: %s", opt, path, strerror(errno));
    if (!S_ISDIR(st.st_mode)) return usage_error(d, "%s %s: %s", opt, path, strerror(ENOTDIR));
    if (access(path, R_OK | X_OK)) return usage_error(d, "%s %s: %s", opt, path, strerror(errno));
    return -1;
}

static int exists(const char *dir, const char *name, int want_dir)
{
    char *p = NULL;
    if (asprintf(&p, "%s/%s", dir, name) < 0) return 0;
    struct stat st;
    int ok = !stat(p, &st) && (want_dir ? S_ISDIR(st.st_mode) : !S_ISDIR(st.st_mode));
    free(p);
    return ok;
}

/* The input: a perf.data file or folder, or a trace snapshot folder. */
static int check_input(cli_decode *d)
{
    const char *in = d->input;
    struct stat st;
    if (stat(in, &st)) {
        int e = errno;
        if (!d->input_given && e == ENOENT)
            cli_err("%s: %s (no FILE or -i FILE given, and ./perf.data is the default)", in,
                    strerror(e));
        else
            cli_err("%s: %s", in, strerror(e));
        return CLI_FAIL;
    }
    if (S_ISDIR(st.st_mode)) {
        if (exists(in, "snapshot.ini", 0)) {
            d->snapshot = 1;
        } else if (!exists(in, "data", 0)) {
            cli_err("%s: %s, not a perf.data file (nor a perf.data folder holding 'data')", in,
                    strerror(EISDIR));
            return CLI_FAIL;
        }
    } else if (access(in, R_OK)) {
        cli_err("%s: %s", in, strerror(errno));
        return CLI_FAIL;
    }
    return -1;
}

/* --trace FILE: the snapshot its options describe, decoded as a snapshot folder */
static int check_bare(cli_decode *d)
{
    if (d->input_given && !d->bare.trace) {
        cli_err("%s: %s describes a bare trace file: give the file with --trace %s", d->cmd,
                d->bare.first_opt, d->input);
        return CLI_USAGE;
    }
    if (d->input_given) {
        cli_err("%s: give one input: --trace %s or %s", d->cmd,
                d->bare.trace ? d->bare.trace : "FILE", d->input);
        return CLI_USAGE;
    }
    /* what the configuration lacks (a source without a core, registers left at 0) is said
     * here: the session's account starts with the decode */
    ek_diag_collector *made = ek_diag_collector_new(1);
    if (!made) {
        cli_err("%s", ek_strerror(EK_ERR_NOMEM));
        return CLI_FAIL;
    }
    ek_diag sink = ek_diag_collector_sink(made);
    if (d->verbose) {
        ek_diag err = cli_diag_stderr();
        ek_diag_collector_forward(made, &err);
    }
    int tpiu = 0, hsync = 0, dstream = 0;
    int rc = cli_bare_open(&d->bare, d->cmd, &sink, &tpiu, &hsync, &dstream, &d->bare_ss);
    if (!rc && !d->verbose && ek_diag_collector_count(made, EK_SEV_WARN))
        cli_print_diag_summary(made, 0);
    ek_diag_collector_free(made);
    if (rc) return rc;
    d->input = d->bare.trace;
    d->input_given = 1;
    d->snapshot = 1;
    d->so.snapshot = d->bare_ss;
    return -1;
}

int cli_decode_check(cli_decode *d)
{
    int rc;
    if (cli_bare_given(&d->bare) && (rc = check_bare(d)) >= 0) return rc;
    if (!d->bare_ss && (rc = check_input(d)) >= 0) return rc;
    if (d->nimages && !d->snapshot)
        return usage_error(d,
                           "--image gives code to trace snapshot folders; %s is a perf recording "
                           "(its code comes from the files its maps name: --symfs, the build-id "
                           "cache)",
                           d->input);
    if (d->so.symfs && (rc = check_dir(d, d->symfs_opt, d->so.symfs)) >= 0) return rc;
    if (d->so.buildid_dir && (rc = check_dir(d, d->buildid_opt, d->so.buildid_dir)) >= 0) return rc;
    if (d->so.vmlinux && (rc = check_file(d, d->vmlinux_opt, d->so.vmlinux, F_ELF)) >= 0) return rc;
    if (d->so.kallsyms && (rc = check_file(d, d->kallsyms_opt, d->so.kallsyms, F_KALLSYMS)) >= 0)
        return rc;
    if (d->so.jitdump && (rc = check_file(d, d->jitdump_opt, d->so.jitdump, F_JITDUMP)) >= 0)
        return rc;
    if (d->so.kcore_dir) {
        if ((rc = check_dir(d, d->kcore_opt, d->so.kcore_dir)) >= 0) return rc;
        if (!exists(d->so.kcore_dir, "kcore", 0))
            return usage_error(d,
                               "%s %s: no kcore file in it (give the folder 'perf record --kcore' "
                               "made: kcore_dir, with kcore and kallsyms)",
                               d->kcore_opt, d->so.kcore_dir);
        char *kc = NULL;
        if (asprintf(&kc, "%s/kcore", d->so.kcore_dir) < 0) return CLI_FAIL;
        rc = check_file(d, d->kcore_opt, kc, F_ELF);
        free(kc);
        if (rc >= 0) return rc;
    }
    return -1;
}

/* ---- the session -------------------------------------------------------------------------------
 */

/* The text of the first error (an option that does not apply is said in one line). */
static void keep_first(void *ctx, const ek_diag_event *ev)
{
    ek_sbuf *line = ctx;
    if (ev->sev >= EK_SEV_ERROR && !line->len) ek_sbuf_puts(line, ev->msg ? ev->msg : "");
}

int cli_decode_open(cli_decode *d, ek_session **s)
{
    /* problems that stop the recording from opening are only known to the sink, which the
     * session keeps using while it decodes */
    if (!d->diags) d->diags = ek_diag_collector_new(1);
    if (!d->diags) {
        cli_err("%s", ek_strerror(EK_ERR_NOMEM));
        return CLI_FAIL;
    }
    ek_diag next = {keep_first, &d->first_error};
    ek_diag_collector_forward(d->diags, &next);
    ek_diag sink = ek_diag_collector_sink(d->diags);
    int rc = ek_session_open(d->input, &d->so, &sink, s);
    if (rc == EK_ERR_ARG && d->first_error.len) {
        /* an option that does not apply to this recording */
        return usage_error(d, "%s: %s", d->input, d->first_error.p);
    } else if (rc) {
        /* the reader's errors say what and where; the status alone only when none was said
         * (a second line "FILE: malformed input" after them said nothing more) */
        cli_print_diag_summary(d->diags, 0);
        if (!ek_diag_collector_count(d->diags, EK_SEV_ERROR))
            cli_err("%s: %s", d->input, ek_strerror(rc));
        return CLI_FAIL;
    }
    return -1;
}

int cli_decode_status(cli_decode *d, ek_session *s, int rc)
{
    if (rc == EK_ERR_IO && cli_stdout_failed())
        return cli_stdout_check(d->cmd); /* the output failed, not the input */
    if (rc) {
        cli_err("%s: %s", d->input, ek_strerror(rc));
        return CLI_FAIL;
    }
    ek_session_stats st;
    ek_session_get_stats(s, &st);
    int problems = ek_session_problems(s);
    /* nothing usable: not one sample came out of a recording with problems */
    if (problems && !st.samples_branches && !st.samples_instructions) return CLI_FAIL;
    return d->strict && problems ? CLI_FAIL : CLI_OK;
}

void cli_decode_free(cli_decode *d)
{
    ek_sample_filter_free(&d->filter);
    d->so.filter = NULL;
    d->so.snapshot = NULL;
    ek_snapshot_free(d->bare_ss);
    d->bare_ss = NULL;
    cli_bare_free(&d->bare);
    ek_diag_collector_free(d->diags);
    d->diags = NULL;
    ek_sbuf_free(&d->first_error);
    cli_images_free(d->images, d->nimages);
    d->images = NULL;
    d->nimages = 0;
    d->so.images = NULL;
    d->so.nimages = 0;
}
