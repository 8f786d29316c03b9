/* --trace FILE and its configuration from options: see cli_bare.h and docs/DUMP.md. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_bare.h"
#include "etmkit/ini.h"
#include "etmkit/snapshot.h"

const char *cli_opt_value(const char *name, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0) return NULL;
    if (a[n] == '=') return a + n + 1;
    if (a[n] == 0 && *i + 1 < argc) return argv[++*i];
    return NULL;
}

/* --protocol names -> device types (as a device file's type=) */
static const struct {
    const char *name, *type;
} protos[] = {{"etm4", "ETM4"},   {"etmv4", "ETM4"},   {"ete", "ETE"},
              {"etm3", "ETM3.5"}, {"etmv3", "ETM3.5"}, {"ptm", "PTM1.1"},
              {"pft", "PTM1.1"},  {"stm", "STM"},      {"itm", "ITM"}};

static cli_bare_src *new_src(cli_bare *b, const char *opt)
{
    cli_bare_src *v = realloc(b->srcs, (b->nsrcs + 1) * sizeof *v);
    if (!v) return NULL;
    b->srcs = v;
    cli_bare_src *s = &v[b->nsrcs++];
    memset(s, 0, sizeof *s);
    s->trace_id = -1;
    s->opt = opt;
    return s;
}

/* The source --reg / --trace-id / --arch apply to: the last one, made by --protocol or
 * --config-from (or a new one, for --protocol to fill in). */
static cli_bare_src *cur_src(cli_bare *b, const char *cmd, const char *opt)
{
    if (!b->nsrcs) return new_src(b, opt);
    cli_bare_src *s = &b->srcs[b->nsrcs - 1];
    if (s->from_dir_all && b->nsrcs > 1 && b->srcs[b->nsrcs - 2].from_dir_all) {
        cli_err("%s: %s: --config-from=DIR gave several trace sources; name the one it is for "
                "with --config-from=DIR:DEVICE",
                cmd, opt);
        return NULL;
    }
    return s;
}

static int add_reg(cli_bare_src *s, const char *name, uint64_t value)
{
    ek_bare_reg *v = realloc(s->regs, (s->nregs + 1) * sizeof *v);
    if (!v) return -1;
    s->regs = v;
    char *n = strdup(name);
    if (!n) return -1;
    v[s->nregs].name = n;
    v[s->nregs].value = value;
    s->nregs++;
    return 0;
}

/* Register key 'key' (NAME or NAME(attributes), any case) names register 'name'. */
static int reg_is(const char *key, const char *name)
{
    size_t n = strcspn(key, "( \t");
    return n == strlen(name) && !strncasecmp(key, name, n);
}

static void first_error(void *ctx, const ek_diag_event *ev)
{
    ek_sbuf *s = ctx;
    if (ev->sev >= EK_SEV_ERROR && !s->len && ev->msg) ek_sbuf_puts(s, ev->msg);
}

/* Copy one trace source of snapshot ss into a new source. */
static int take_source(cli_bare *b, const ek_snapshot *ss, const ek_snap_source *src,
                       const char *opt, int all)
{
    const ek_snap_device *d = &ss->devices[src->device];
    cli_bare_src *s = new_src(b, opt);
    if (!s) return -1;
    s->from_dir_all = all;
    s->name = strdup(d->name);
    s->type = strdup(d->type);
    if (src->core >= 0 && !(s->core = strdup(ss->devices[src->core].type))) return -1;
    if (!s->name || !s->type) return -1;
    for (size_t i = 0; i < d->nregs; i++)
        if (add_reg(s, d->regs[i].name, d->regs[i].value)) return -1;
    s->from_fmt = src->buffer >= 0 ? ss->buffers[src->buffer].format : EK_BUF_UNKNOWN;
    return 0;
}

/* --config-from=DEVICE.ini: a trace source's device file alone (its core: --arch) */
static int device_file(cli_bare *b, const char *cmd, const char *arg)
{
    ek_sbuf err = EK_SBUF_INIT;
    ek_diag sink = {first_error, &err};
    ek_ini *ini = NULL;
    int rc = ek_ini_load(arg, &sink, &ini), status = -1;
    const ek_ini_section *dev = rc ? NULL : ek_ini_section_find(ini, "device");
    const char *cls = ek_ini_get(dev, "class"), *type = ek_ini_get(dev, "type");
    if (rc) {
        cli_err("%s: --config-from=%s: %s", cmd, arg, err.len ? err.p : ek_strerror(rc));
        status = rc == EK_ERR_NOMEM ? CLI_FAIL : CLI_USAGE;
    } else if (!cls || strcasecmp(cls, "trace_source") || !type || !*type) {
        cli_err("%s: --config-from=%s: not a trace source's device file ([device] with "
                "class=trace_source and a type=)",
                cmd, arg);
        status = CLI_USAGE;
    } else {
        cli_bare_src *s = new_src(b, "--config-from");
        const char *name = ek_ini_get(dev, "name");
        if (!s || !(s->type = strdup(type)) || (name && *name && !(s->name = strdup(name))))
            status = CLI_FAIL;
        const ek_ini_section *regs = ek_ini_section_find(ini, "regs");
        for (size_t i = 0; regs && status < 0 && i < regs->nkv; i++) {
            uint64_t v = 0;
            if (!ek_ini_parse_u64(regs->kv[i].value, &v)) {
                cli_err("%s: --config-from=%s: line %llu: register %s: '%s' is not a number", cmd,
                        arg, (unsigned long long)regs->kv[i].line, regs->kv[i].key,
                        regs->kv[i].value);
                status = CLI_USAGE;
            } else if (add_reg(s, regs->kv[i].key, v)) {
                status = CLI_FAIL;
            }
        }
        if (status == CLI_FAIL) cli_err("%s", ek_strerror(EK_ERR_NOMEM));
    }
    ek_ini_free(ini);
    ek_sbuf_free(&err);
    return status;
}

/* --config-from=DIR[:DEVICE] or DEVICE.ini */
static int config_from(cli_bare *b, const char *cmd, const char *arg)
{
    struct stat st;
    if (!stat(arg, &st) && S_ISREG(st.st_mode)) return device_file(b, cmd, arg);
    char *dir = strdup(arg);
    if (!dir) return CLI_FAIL;
    char *dev = NULL;
    if (!cli_is_dir(dir)) {
        char *colon = strrchr(dir, ':');
        if (colon) {
            *colon = 0;
            dev = colon + 1;
        }
    }
    ek_sbuf err = EK_SBUF_INIT;
    ek_diag sink = {first_error, &err};
    ek_snapshot *ss = NULL;
    int rc = cli_is_dir(dir) ? ek_snapshot_open(dir, &sink, &ss) : EK_ERR_NOT_FOUND;
    int status = -1;
    if (rc || !ss) {
        cli_err("%s: --config-from=%s: %s", cmd, arg,
                !cli_is_dir(dir) ? "not a snapshot folder (DIR or DIR:DEVICE)"
                : err.len        ? err.p
                                 : ek_strerror(rc));
        status = CLI_USAGE;
        goto out;
    }
    if (dev) {
        const ek_snap_source *src = NULL;
        ek_sbuf names = EK_SBUF_INIT;
        for (size_t i = 0; i < ss->nsources; i++) {
            const char *nm = ss->devices[ss->sources[i].device].name;
            if (!strcasecmp(nm, dev)) src = &ss->sources[i];
            ek_sbuf_printf(&names, "%s%s", names.len ? ", " : "", nm);
        }
        if (!src) {
            cli_err("%s: --config-from=%s: %s is not a trace source of the snapshot (%s)", cmd, arg,
                    dev, names.len ? names.p : "it has none");
            status = CLI_USAGE;
        } else if (take_source(b, ss, src, "--config-from", 0)) {
            status = CLI_FAIL;
        }
        ek_sbuf_free(&names);
        goto out;
    }
    /* the sources of the snapshot's first buffer: those its listing decodes */
    size_t first = ss->buffer_order ? ss->buffer_order[0] : 0, n = 0;
    for (size_t i = 0; i < ss->nsources && status < 0; i++)
        if (ss->sources[i].buffer == (long)first) {
            n++;
            if (take_source(b, ss, &ss->sources[i], "--config-from", 1)) status = CLI_FAIL;
        }
    if (!n && status < 0) {
        cli_err("%s: --config-from=%s: the snapshot's first buffer has no trace source", cmd, arg);
        status = CLI_USAGE;
    }
out:
    if (status == CLI_FAIL) cli_err("%s", ek_strerror(EK_ERR_NOMEM));
    ek_snapshot_free(ss);
    ek_sbuf_free(&err);
    free(dir);
    return status;
}

int cli_bare_given(const cli_bare *b)
{
    return b->trace || b->first_opt;
}

int cli_bare_arg(cli_bare *b, const char *cmd, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *v;
    const char *opt = NULL;
    int j = *i;
    if ((v = cli_opt_value("--trace", argc, argv, &j))) {
        if (b->trace) {
            cli_err("%s: --trace given twice (%s, %s)", cmd, b->trace, v);
            return CLI_USAGE;
        }
        b->trace = v;
        *i = j;
        return -1;
    }
    if ((v = cli_opt_value("--framing", argc, argv, &j))) {
        static const char *const ok[] = {"raw", "frames", "tpiu", "tpiu-hsync", "dstream"};
        size_t k = 0;
        while (k < 5 && strcmp(v, ok[k]))
            k++;
        if (k == 5) {
            cli_err("%s: --framing=%s: not raw, frames, tpiu, tpiu-hsync or dstream", cmd, v);
            return CLI_USAGE;
        }
        if (b->framing && strcmp(b->framing, v)) {
            cli_err("%s: --framing=%s contradicts --framing=%s", cmd, v, b->framing);
            return CLI_USAGE;
        }
        b->framing = v;
        opt = "--framing";
    } else if ((v = cli_opt_value("--protocol", argc, argv, &j))) {
        size_t k = 0, np = sizeof protos / sizeof protos[0];
        while (k < np && strcasecmp(v, protos[k].name))
            k++;
        if (k == np) {
            cli_err("%s: --protocol=%s: not etm4, ete, etm3, ptm, stm or itm", cmd, v);
            return CLI_USAGE;
        }
        cli_bare_src *s = b->nsrcs ? &b->srcs[b->nsrcs - 1] : NULL;
        if (!s || s->type) s = new_src(b, "--protocol");
        if (!s || !(s->type = strdup(protos[k].type))) return CLI_FAIL;
        s->opt = "--protocol";
        opt = "--protocol";
    } else if ((v = cli_opt_value("--config-from", argc, argv, &j))) {
        int rc = config_from(b, cmd, v);
        if (rc >= 0) return rc;
        opt = "--config-from";
    } else if ((v = cli_opt_value("--reg", argc, argv, &j))) {
        const char *eq = strchr(v, '=');
        uint64_t val = 0;
        if (!eq || eq == v || !ek_ini_parse_u64(eq + 1, &val)) {
            cli_err("%s: --reg %s: not NAME=VALUE (a register of the device files' [regs], "
                    "e.g. TRCIDR0=0x28000EA1)",
                    cmd, v);
            return CLI_USAGE;
        }
        cli_bare_src *s = cur_src(b, cmd, "--reg");
        if (!s) return CLI_USAGE;
        char *name = strndup(v, (size_t)(eq - v));
        if (!name || add_reg(s, name, val)) {
            free(name);
            return CLI_FAIL;
        }
        free(name);
        opt = "--reg";
    } else if ((v = cli_opt_value("--trace-id", argc, argv, &j))) {
        uint64_t id = 0;
        if (!ek_ini_parse_u64(v, &id) || id > 0x7f) {
            cli_err("%s: --trace-id=%s: not a trace ID (0x00..0x7f)", cmd, v);
            return CLI_USAGE;
        }
        cli_bare_src *s = cur_src(b, cmd, "--trace-id");
        if (!s) return CLI_USAGE;
        if (s->trace_id >= 0 && s->trace_id != (int)id) {
            cli_err("%s: --trace-id=%s contradicts --trace-id=0x%x for the same source", cmd, v,
                    s->trace_id);
            return CLI_USAGE;
        }
        s->trace_id = (int)id;
        opt = "--trace-id";
    } else if ((v = cli_opt_value("--arch", argc, argv, &j))) {
        ek_arch arch;
        ek_arch_profile prof;
        if (!ek_core_arch(v, &arch, &prof)) {
            cli_err("%s: --arch=%s: not a known core or architecture (e.g. Cortex-A53, "
                    "Cortex-M4, ARMv7-A, ARMv8-A, ARMv8-M, ARM-AA64)",
                    cmd, v);
            return CLI_USAGE;
        }
        cli_bare_src *s = cur_src(b, cmd, "--arch");
        if (!s) return CLI_USAGE;
        free(s->core);
        if (!(s->core = strdup(v))) return CLI_FAIL;
        opt = "--arch";
    } else {
        (void)a;
        return 0;
    }
    if (!b->first_opt) b->first_opt = opt;
    *i = j;
    return -1;
}

int cli_bare_open(cli_bare *b, const char *cmd, const ek_diag *diag, int *tpiu, int *tpiu_hsync,
                  int *dstream, ek_snapshot **out)
{
    *out = NULL;
    if (!b->trace) {
        cli_err("%s: %s describes a bare trace file: give the file with --trace FILE", cmd,
                b->first_opt);
        return CLI_USAGE;
    }
    if (!b->nsrcs) {
        cli_err("%s: --trace %s needs its configuration: --protocol=P with --reg NAME=VALUE, "
                "or --config-from=SNAPSHOT_DIR[:DEVICE]",
                cmd, b->trace);
        return CLI_USAGE;
    }
    for (size_t i = 0; i < b->nsrcs; i++)
        if (!b->srcs[i].type) {
            cli_err("%s: %s before --protocol or --config-from: which protocol is the trace?", cmd,
                    b->srcs[i].opt);
            return CLI_USAGE;
        }
    /* framing: the option, else the buffer format of the --config-from devices */
    ek_buffer_format fmt = EK_BUF_UNKNOWN;
    const char *framing = b->framing;
    if (!framing) {
        for (size_t i = 0; i < b->nsrcs; i++) {
            ek_buffer_format f = b->srcs[i].from_fmt;
            if (f == EK_BUF_UNKNOWN) continue;
            if (fmt != EK_BUF_UNKNOWN && f != fmt) {
                cli_err("%s: the --config-from devices come from buffers of different formats: "
                        "give --framing",
                        cmd);
                return CLI_USAGE;
            }
            fmt = f;
        }
        framing = fmt == EK_BUF_SOURCE_DATA  ? "raw"
                  : fmt == EK_BUF_DSTREAM    ? "dstream"
                  : fmt == EK_BUF_CORESIGHT  ? "frames"
                  : fmt == EK_BUF_TPIU       ? "tpiu"
                  : fmt == EK_BUF_TPIU_HSYNC ? "tpiu-hsync"
                                             : NULL;
        if (!framing) {
            cli_err("%s: --trace %s needs --framing=raw|frames|tpiu|tpiu-hsync|dstream", cmd,
                    b->trace);
            return CLI_USAGE;
        }
    }
    if (!strcmp(framing, "raw")) {
        fmt = EK_BUF_SOURCE_DATA;
        if (*tpiu || *tpiu_hsync || *dstream) {
            cli_err("%s: --%s contradicts --framing=raw (unframed bytes of one source)", cmd,
                    *dstream      ? "dstream"
                    : *tpiu_hsync ? "tpiu-hsync"
                                  : "tpiu");
            return CLI_USAGE;
        }
        if (b->nsrcs > 1) {
            cli_err("%s: --framing=raw carries one source's trace, but %zu sources are given", cmd,
                    b->nsrcs);
            return CLI_USAGE;
        }
    } else if (!strcmp(framing, "dstream")) {
        fmt = EK_BUF_DSTREAM;
        *dstream = 1;
    } else {
        fmt = !strcmp(framing, "tpiu")         ? EK_BUF_TPIU
              : !strcmp(framing, "tpiu-hsync") ? EK_BUF_TPIU_HSYNC
                                               : EK_BUF_CORESIGHT;
    }
    /* frames: every source needs its own trace ID */
    if (fmt != EK_BUF_SOURCE_DATA)
        for (size_t i = 0; i < b->nsrcs; i++) {
            const cli_bare_src *s = &b->srcs[i];
            if (s->trace_id >= 0) continue;
            static const char *const idregs[] = {"TRCTRACEIDR", "ETMTRACEIDR", "STMTCSR", "ITMTCR"};
            int have = 0;
            for (size_t r = 0; r < s->nregs && !have; r++)
                for (size_t k = 0; k < 4 && !have; k++)
                    have = reg_is(s->regs[r].name, idregs[k]);
            if (!have) {
                cli_err("%s: --framing=%s: source %zu (%s %s) needs --trace-id=ID", cmd, framing,
                        i + 1, s->opt, s->type);
                return CLI_USAGE;
            }
        }
    /* registers the decoder cannot do without (a snapshot only warns; options can say them) */
    for (size_t i = 0; i < b->nsrcs; i++) {
        const cli_bare_src *s = &b->srcs[i];
        if (s->from_fmt != EK_BUF_UNKNOWN || strcmp(s->opt, "--protocol")) continue;
        static const char *const etm4[] = {"TRCCONFIGR", "TRCIDR0", "TRCIDR2", NULL};
        static const char *const etm3[] = {"ETMCR", "ETMIDR", "ETMCCER", NULL};
        const char *const *need = !strncmp(s->type, "ETM4", 4) || !strcmp(s->type, "ETE") ? etm4
                                  : !strncmp(s->type, "ETM3", 4) || !strncmp(s->type, "PTM", 3)
                                      ? etm3
                                      : NULL;
        for (size_t k = 0; need && need[k]; k++) {
            size_t r = 0;
            while (r < s->nregs && !reg_is(s->regs[r].name, need[k]))
                r++;
            if (r == s->nregs) {
                cli_err("%s: source %zu (--protocol %s) needs --reg %s=VALUE (%s, %s and %s say "
                        "how its packets are encoded), or --config-from",
                        cmd, i + 1, s->type, need[k], need[0], need[1], need[2]);
                return CLI_USAGE;
            }
        }
    }
    struct stat st;
    if (stat(b->trace, &st) || S_ISDIR(st.st_mode) || access(b->trace, R_OK)) {
        int e = errno;
        cli_err("%s: --trace %s: %s", cmd, b->trace,
                !stat(b->trace, &st) && S_ISDIR(st.st_mode) ? "is a folder, not a trace file"
                                                            : strerror(e));
        return CLI_FAIL;
    }
    ek_bare_source *v = calloc(b->nsrcs, sizeof *v);
    if (!v) {
        cli_err("%s", ek_strerror(EK_ERR_NOMEM));
        return CLI_FAIL;
    }
    for (size_t i = 0; i < b->nsrcs; i++) {
        v[i].name = b->srcs[i].name;
        v[i].type = b->srcs[i].type;
        v[i].core_type = b->srcs[i].core;
        v[i].regs = b->srcs[i].regs;
        v[i].nregs = b->srcs[i].nregs;
        v[i].trace_id = b->srcs[i].trace_id;
    }
    int rc = ek_snapshot_from_trace(b->trace, fmt, v, b->nsrcs, diag, out);
    free(v);
    if (rc) {
        cli_err("%s: --trace %s: %s", cmd, b->trace, ek_strerror(rc));
        return rc == EK_ERR_ARG ? CLI_USAGE : CLI_FAIL;
    }
    /* two sources on one trace ID cannot be told apart in frames */
    const ek_snapshot *ss = *out;
    for (size_t i = 0; fmt != EK_BUF_SOURCE_DATA && i < ss->nsources; i++)
        for (size_t j = 0; j < i; j++)
            if (ss->sources[i].cfg.trace_id == ss->sources[j].cfg.trace_id) {
                cli_err("%s: sources %s and %s both have trace ID 0x%x: give each its own "
                        "--trace-id",
                        cmd, ss->devices[ss->sources[j].device].name,
                        ss->devices[ss->sources[i].device].name, ss->sources[i].cfg.trace_id);
                ek_snapshot_free(*out);
                *out = NULL;
                return CLI_USAGE;
            }
    return 0;
}

void cli_bare_free(cli_bare *b)
{
    for (size_t i = 0; i < b->nsrcs; i++) {
        cli_bare_src *s = &b->srcs[i];
        free(s->name);
        free(s->type);
        free(s->core);
        for (size_t r = 0; r < s->nregs; r++)
            free((char *)s->regs[r].name);
        free(s->regs);
    }
    free(b->srcs);
    memset(b, 0, sizeof *b);
}
