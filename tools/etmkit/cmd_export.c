/* etmkit export: a recording's PGO profile (range and branch counts per binary) as simpleperf's
 * AutoFDO text, BOLT fdata or an etmkit branch list, or its coverage as lcov (export_lcov.c), or
 * its calls as a Perfetto timeline (export_perfetto.c). The session decodes, the profile
 * library counts (ek_profile_builder) and writes; this file parses options and reports. See
 * docs/PROFILES.md. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_opts.h"
#include "etmkit/image.h"
#include "export_lcov.h"
#include "export_perfetto.h"
#include "etmkit/profile.h"
#include "etmkit/symbols.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: etmkit export [--format=FORMAT] [-o OUT] [--binary=ELF] [options] [FILE]\n"
            "Decodes a CoreSight recording and writes its profile: for every binary (build-id\n"
            "and path) the straight-line runs executed (range counts, from a branch's target to\n"
            "the next branch's source, both in one mapping) and the branches taken (branch\n"
            "counts, source -> target), at the binary's own addresses. See docs/PROFILES.md.\n"
            "\noptions:\n"
            "  -o, --output=OUT    the profile ('-' or none: standard output); a file is written\n"
            "                      beside OUT and renamed into place (a device, FIFO or link:\n"
            "                      written in place)\n"
            "  --format=branch-list|autofdo|bolt|lcov|perfetto\n"
            "                      what to write: autofdo (simpleperf's AutoFDO text, the\n"
            "                      default, for create_llvm_prof), bolt (llvm-bolt fdata for one\n"
            "                      binary, as perf2bolt writes it), branch-list (etmkit's\n"
            "                      mergeable form, for 'etmkit merge'), lcov (coverage: lines,\n"
            "                      functions and conditional branches taken and not taken, per\n"
            "                      source file from DWARF line tables, for genhtml), perfetto\n"
            "                      (every thread's calls as a timeline, a Perfetto trace for\n"
            "                      https://ui.perfetto.dev: see docs/STACKS.md)\n"
            "  --binary=ELF        bolt: the binary to write the profile of (its function names\n"
            "                      and build-id); without it, the profile's one binary; lcov:\n"
            "                      the ELF file (with its DWARF) to cover, from every binary\n"
            "                      with its build-id\n"
            "  --format=folded|svg flame-graph stacks, or the flame graph as SVG:\n"
            "                      'etmkit export --format=folded --help'\n");
    cli_decode_help(f, CLI_NO_SAMPLE_TEXT | CLI_OWN_STATUS);
    fprintf(f, "--itrace selects the samples counted: b (the default) counts every branch the\n"
               "trace shows once; il64 counts the last-branch stacks of instructions samples as\n"
               "perf2bolt and create_llvm_prof count them from 'etmkit inject' output\n"
               "(overlapping stacks count again).\n"
               "Exit status: 0 when the profile has counts; 1 when it is empty (stderr says\n"
               "why: missing code, another build, lost trace), the recording cannot be read or\n"
               "the output cannot be written; 2 on a usage error.\n");
}

/* A trace snapshot's binaries (no recorded maps): the files the session's resolver names --
 * memory dumps at their own addresses, ELF files given with --image at their link addresses */
typedef struct snap_bin {
    char *name;         /* as the resolver names it (the dump's file name, the --image path) */
    uint64_t bias;      /* ELF: the address minus the ELF's own */
    uint64_t load_base; /* ELF: p_vaddr of its first PT_LOAD */
    uint8_t build_id[64];
    size_t build_id_len;
} snap_bin;

/* One queue's share of the profile, counted on the thread that decodes it (the stage): its
 * own builder (EK_PROFILE_BUILD_LOCAL) and profile, and a fork of the locator; added to the
 * queues' profile when the queue ends. */
typedef struct export_q {
    ek_profile *p;
    ek_profile_maps *maps;
    ek_profile_builder *b;
    const ek_script_resolver *r; /* during a stage call */
    int rc;                      /* its making failed */
} export_q;

typedef struct export_ctx {
    ek_profile_maps *maps;
    int snapshot; /* a trace snapshot folder: bins, not maps */
    snap_bin *bins;
    size_t nbins;
    const cli_decode *d;
    ek_profile_builder *b;
    const ek_script_resolver *r; /* during a callback */
    int rc;
    /* staged (a perf recording): b counts only the pending branches; the queues that ended
     * are added here, under mu */
    int staged;
    pthread_mutex_t mu;
    ek_profile *queues;
    ek_profile_build_stats qstats;
    int qrc;
} export_ctx;

/* the session's DSO name of addr (asked only where maps of different files overlap): the
 * session's own text, which stays while the session does (ek_profile_maps_opts.hints_stable) */
static const char *hint_of(const ek_script_resolver *r, const ek_sample *s, uint64_t addr)
{
    if (!r || !r->resolve) return NULL;
    ek_addr_loc loc;
    memset(&loc, 0, sizeof loc);
    r->resolve(r->ctx, s, addr, addr != s->ip, &loc);
    return loc.dso;
}

static const char *dso_hint(void *ctx, const ek_sample *s, uint64_t addr)
{
    return hint_of(((export_ctx *)ctx)->r, s, addr);
}

/* Whether the resolver's name is the --image spec's file: the session names a relative path
 * after the working directory it was given in (snap.c: absolute, symbolic links kept). */
static int is_spec_file(const char *spec, const char *name)
{
    if (!strcmp(spec, name)) return 1;
    if (spec[0] == '/') return 0;
    char *cwd = getcwd(NULL, 0);
    size_t n = cwd ? strlen(cwd) : 0;
    int same = cwd && !strncmp(name, cwd, n) && name[n] == '/' && !strcmp(name + n + 1, spec);
    free(cwd);
    return same;
}

/* The binary of a snapshot the resolver names name: made the first time (an --image ELF
 * file: its bias, load base and build-id). NULL: out of memory. */
static snap_bin *snap_bin_of(export_ctx *c, const char *name)
{
    for (size_t i = 0; i < c->nbins; i++)
        if (!strcmp(c->bins[i].name, name)) return &c->bins[i];
    snap_bin *nb = realloc(c->bins, (c->nbins + 1) * sizeof *nb);
    if (!nb) return NULL;
    c->bins = nb;
    snap_bin *b = &nb[c->nbins];
    memset(b, 0, sizeof *b);
    if (!(b->name = strdup(name))) return NULL;
    c->nbins++;
    for (size_t i = 0; i < c->d->nimages; i++) {
        const ek_image_spec *sp = &c->d->images[i];
        ek_elf_info *ei = NULL;
        if (!is_spec_file(sp->path, name) || ek_elf_info_read(sp->path, NULL, &ei)) continue;
        uint64_t low = UINT64_MAX;
        for (size_t k = 0; k < ei->nsegs; k++)
            if (ei->segs[k].vaddr < low) low = ei->segs[k].vaddr;
        if (low == UINT64_MAX) low = 0;
        b->load_base = low;
        b->bias = sp->has_addr ? sp->addr - low : 0;
        b->build_id_len = ei->build_id_len <= sizeof b->build_id ? ei->build_id_len : 0;
        memcpy(b->build_id, ei->build_id, b->build_id_len);
        ek_elf_info_free(ei);
        break;
    }
    return b;
}

/* (out of line: the recording's path, taken for every address, stays a tail call without the
 * register saves of this one) */
__attribute__((noinline)) static int locate_snapshot(export_ctx *c, const ek_sample *s,
                                                     uint64_t addr, ek_profile_loc *out)
{
    const char *name = dso_hint(c, s, addr);
    if (!name) return 1;
    snap_bin *b = snap_bin_of(c, name);
    if (!b) return 1;
    memset(out, 0, sizeof *out);
    out->id.path = b->name;
    out->id.build_id = b->build_id_len ? b->build_id : NULL;
    out->id.build_id_len = b->build_id_len;
    out->id.load_base = b->load_base;
    out->vaddr = addr - b->bias;
    out->mapping = (uint64_t)(b - c->bins) + 1;
    return 0;
}

static int locate(void *ctx, const ek_sample *s, uint64_t addr, ek_profile_loc *out)
{
    export_ctx *c = ctx;
    if (!c->snapshot) return ek_profile_maps_locate(c->maps, s, addr, dso_hint, c, out);
    return locate_snapshot(c, s, addr, out);
}

/* instruction bytes the session's samples do not carry (no_insn): as the sample's thread saw
 * them */
static size_t code_of(const ek_script_resolver *r, const ek_sample *s, uint64_t addr, void *buf,
                      size_t len)
{
    return r && r->code ? r->code(r->ctx, s, addr, buf, len) : 0;
}

static size_t read_insn(void *ctx, const ek_sample *s, uint64_t addr, void *buf, size_t len)
{
    return code_of(((export_ctx *)ctx)->r, s, addr, buf, len);
}

/* ---- the stage: a queue's share, on its decoder thread ---- */

static const char *q_hint(void *ctx, const ek_sample *s, uint64_t addr)
{
    return hint_of(((export_q *)ctx)->r, s, addr);
}

static size_t q_insn(void *ctx, const ek_sample *s, uint64_t addr, void *buf, size_t len)
{
    return code_of(((export_q *)ctx)->r, s, addr, buf, len);
}

static int q_locate(void *ctx, const ek_sample *s, uint64_t addr, ek_profile_loc *out)
{
    export_q *q = ctx;
    return ek_profile_maps_locate(q->maps, s, addr, q_hint, q, out);
}

static void *q_begin(void *ctx)
{
    export_ctx *c = ctx;
    export_q *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    int rc = ek_profile_new(&q->p);
    if (!rc) rc = ek_profile_maps_fork(c->maps, &q->maps);
    if (!rc) rc = ek_profile_builder_new(q->p, q_locate, q, &q->b);
    if (rc) {
        q->rc = rc;
        return q;
    }
    ek_profile_builder_set_part(q->b, EK_PROFILE_BUILD_LOCAL);
    ek_profile_builder_set_code(q->b, ek_profile_maps_code, q->maps);
    ek_profile_builder_use_maps(q->b, q->maps, q_hint, q);
    ek_profile_builder_set_insn(q->b, q_insn, q);
    return q;
}

/* 0: counted; 1: its pending-branch part goes to the shared builder (on_sample, in order) */
static int q_stage(void *qctx, const ek_sample *s, ek_sample_ctx *sc)
{
    export_q *q = qctx;
    if (!q) return EK_ERR_NOMEM;
    if (q->rc) return q->rc;
    q->r = sc->r;
    int rc = ek_profile_builder_add(q->b, s);
    q->r = NULL;
    return rc;
}

/* A queue's share added to the queues' profile and stats, and its memory let go: the shares
 * held at once are those of the queues being decoded (every queue, with time stamps). */
static void q_end(void *ctx, void *qctx)
{
    export_ctx *c = ctx;
    export_q *q = qctx;
    pthread_mutex_lock(&c->mu);
    int rc = q ? q->rc : EK_ERR_NOMEM;
    if (!rc) rc = ek_profile_merge(c->queues, q->p, NULL);
    if (!rc) {
        ek_profile_build_stats qb;
        ek_profile_builder_get_stats(q->b, &qb);
        ek_profile_builder_add_stats(&c->qstats, &qb);
    }
    if (rc && !c->qrc) c->qrc = rc;
    pthread_mutex_unlock(&c->mu);
    if (!q) return;
    ek_profile_builder_free(q->b);
    ek_profile_maps_free(q->maps);
    ek_profile_free(q->p);
    free(q);
}

static int on_sample(void *ctx, const ek_sample *s, const ek_script_resolver *r)
{
    export_ctx *c = ctx;
    c->r = r;
    int rc = ek_profile_builder_add(c->b, s);
    c->r = NULL;
    if (rc) c->rc = rc;
    return rc;
}

/* bolt: the profile of the binary --binary names (by build-id), else of its one user binary
 * (found where the session found it). */
static int write_bolt(const ek_profile *p, const char *binary, const cli_decode *d, ek_sbuf *out)
{
    size_t nb = ek_profile_binary_count(p), pick = nb;
    ek_profile_binary id;
    char *found = NULL;
    const char *elf = binary;
    if (!elf) {
        size_t users = 0;
        for (size_t i = 0; i < nb; i++)
            if (!ek_profile_binary_get(p, i, &id) && id.path[0] && id.path[0] != '[') {
                users++;
                pick = i;
            }
        if (users != 1) {
            cli_err("export: --format=bolt: the profile has %zu binaries: name one with "
                    "--binary=ELF",
                    users);
            return CLI_USAGE;
        }
        ek_profile_binary_get(p, pick, &id);
        char hex[2 * EK_PROFILE_BUILD_ID_MAX + 1] = "";
        if (id.build_id_len) ek_build_id_hex(id.build_id, id.build_id_len, hex, sizeof hex);
        found =
            ek_buildid_find(id.path, id.build_id_len ? hex : NULL, d->so.symfs, d->so.buildid_dir);
        if (!found) {
            cli_err("export: --format=bolt: %s: no ELF file found (give --binary=ELF)", id.path);
            return CLI_FAIL;
        }
        elf = found;
    }
    ek_elf_info *in = NULL;
    ek_bolt_map *map = NULL;
    int status = CLI_FAIL;
    if (ek_elf_info_read(elf, NULL, &in)) {
        cli_err("export: %s: cannot read the ELF file", elf);
        goto done;
    }
    int rc = ek_bolt_map_load_elf(elf, NULL, &map);
    if (!rc)
        rc = ek_profile_write_bolt_for_elf(p, in->build_id, in->build_id_len, elf,
                                           EK_PROFILE_USER_ONLY, map, out, NULL);
    if (rc == EK_ERR_NOT_FOUND)
        cli_elf_not_found("export", "bolt", elf, in);
    else if (rc)
        cli_err("export: %s: %s", elf, ek_strerror(rc));
    else
        status = CLI_OK;
done:
    ek_bolt_map_free(map);
    ek_elf_info_free(in);
    free(found);
    return status;
}

static int profile_empty(const ek_profile *p)
{
    for (size_t i = 0; i < ek_profile_binary_count(p); i++)
        for (int k = 0; k < 3; k++) {
            ek_profile_count *v = NULL;
            size_t n = 0;
            ek_profile_counts(p, i, (ek_profile_kind)k, &v, &n);
            free(v);
            if (n) return 0;
        }
    return 1;
}

static int format_known(const char *name)
{
    static const char *const names[] = {"autofdo",  "bolt",   "branch-list", "lcov",
                                        "perfetto", "folded", "svg"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(name, names[i])) return 1;
    return 0;
}

int cmd_export(int argc, char **argv)
{
    const char *out = NULL, *binary = NULL;
    /* the format is the last --format given, as with every option; each one given is checked */
    const char *last = "autofdo";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && i + 1 < argc) {
            i++; /* (its value) */
        } else if (!strncmp(a, "--format=", 9)) {
            if (!format_known(a + 9)) {
                cli_err("export: unknown format '%s' (autofdo, bolt, branch-list, lcov, "
                        "perfetto, folded or svg; see 'etmkit export --help')",
                        a + 9);
                return CLI_USAGE;
            }
            last = a + 9;
        }
    }
    /* views of the stacks, not a profile, with options of their own: cmd_views.c */
    if (!strcmp(last, "folded") || !strcmp(last, "svg")) return cmd_export_folded(argc, argv);
    int perfetto = !strcmp(last, "perfetto");
    int lcov = !strcmp(last, "lcov"); /* coverage (export_lcov.c), not a profile format */
    ek_profile_format fmt =
        perfetto || lcov ? EK_PROFILE_FMT_AUTOFDO : ek_profile_format_from_name(last);
    char **av = calloc((size_t)argc + 1, sizeof(*av));
    if (!av) return CLI_FAIL;
    int ac = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (i > 0 && (!strcmp(a, "-o") || !strcmp(a, "--output"))) {
            if (i + 1 >= argc) {
                cli_err("export: %s needs a file name (see 'etmkit export --help')", a);
                free(av);
                return CLI_USAGE;
            }
            out = argv[++i];
        } else if (i > 0 && !strncmp(a, "--output=", 9)) {
            out = a + 9;
        } else if (i > 0 && !strncmp(a, "--format=", 9)) {
            /* (the last one decides: above) */
        } else if (i > 0 && !strncmp(a, "--binary=", 9) && a[9]) {
            binary = a + 9;
        } else {
            av[ac++] = argv[i];
        }
    }
    cli_decode d;
    int ret = cli_decode_parse(&d, "export", CLI_NO_SAMPLE_TEXT, ac, av, usage);
    free(av);
    if (ret >= 0) {
        cli_decode_free(&d); /* what the options before the bad one made (-C 0's list) */
        return ret;
    }
    if (perfetto) return export_perfetto(&d, out);
    if (!d.so.itrace.set) ek_itrace_parse("b", &d.so.itrace, NULL);
    if (!d.so.itrace.branches && !(d.so.itrace.instructions && d.so.itrace.last_branch)) {
        cli_err("export: --itrace must ask for branches (b) or last-branch stacks (il...)");
        cli_decode_free(&d);
        return CLI_USAGE;
    }
    if (d.so.itrace.branches && d.so.itrace.instructions) {
        cli_err("export: --itrace: give b or il..., not both (each would count the branches)");
        cli_decode_free(&d);
        return CLI_USAGE;
    }
    /* the profile is of every sample: instructions samples without stacks add nothing */
    ret = cli_decode_check(&d);
    ek_session *s = NULL;
    if (ret < 0) ret = cli_decode_open(&d, &s);
    if (ret >= 0) {
        cli_decode_free(&d);
        return ret;
    }
    const ek_perf_file *pf = ek_session_file(s);
    ek_profile *p = NULL;
    export_ctx c;
    memset(&c, 0, sizeof c);
    ek_sbuf text = EK_SBUF_INIT;
    int rc;
    ek_profile_maps_opts mo = {sizeof mo, d.so.symfs, d.so.buildid_dir, d.so.vmlinux, 1};
    c.d = &d;
    c.snapshot = d.snapshot;
    if ((rc = ek_profile_new(&p)) ||
        (!c.snapshot && (rc = ek_profile_maps_new(pf, &mo, &c.maps))) ||
        (rc = ek_profile_builder_new(p, locate, &c, &c.b))) {
        cli_err("export: %s", ek_strerror(rc));
        ret = CLI_FAIL;
        goto done;
    }
    if (!c.snapshot) {
        ek_profile_builder_set_code(c.b, ek_profile_maps_code, c.maps);
        ek_profile_builder_use_maps(c.b, c.maps, dso_hint, &c);
    }
    ek_profile_builder_set_insn(c.b, read_insn, &c);
    /* samples without instruction bytes: the builder reads the few it needs (a branch right
     * before an exception or a trace end) through the resolver (read_insn) */
    ek_consumer con;
    ek_consumer_init(&con);
    con.ctx = &c;
    con.sample = on_sample;
    con.no_insn = 1;
    /* a perf recording: each queue counted on its decoder thread, only the pending branches
     * in output order (ek_profile_build_part); --itrace=sN counts from the output's order:
     * everything in order then (and ETMKIT_EXPORT_ORDERED=1, for the tests' comparison) */
    const char *ordered = getenv("ETMKIT_EXPORT_ORDERED");
    if (!c.snapshot && !d.so.itrace.initial_skip && !(ordered && *ordered == '1')) {
        if ((rc = ek_profile_new(&c.queues))) {
            cli_err("export: %s", ek_strerror(rc));
            ret = CLI_FAIL;
            goto done;
        }
        c.staged = 1;
        pthread_mutex_init(&c.mu, NULL);
        ek_profile_builder_set_part(c.b, EK_PROFILE_BUILD_SHARED);
        con.stage = q_stage;
        con.queue_begin = q_begin;
        con.queue_end = q_end;
    }
    rc = ek_session_run(s, &con);
    ek_profile_build_stats bs;
    ek_profile_builder_get_stats(c.b, &bs);
    if (!rc && c.staged) {
        rc = c.qrc;
        if (!rc) rc = ek_profile_merge(p, c.queues, NULL);
        ek_profile_builder_add_stats(&bs, &c.qstats);
    }
    if (rc) {
        cli_err("export: %s: %s", d.input, ek_strerror(rc));
        ret = CLI_FAIL;
        goto done;
    }
    int empty = profile_empty(p);
    /* what was not used, and why: the session's account, as script gives it */
    ek_sbuf rep = EK_SBUF_INIT;
    ek_session_report(s, &rep, d.verbose ? EK_REPORT_VERBOSE : EK_REPORT_SUMMARY);
    if (empty) {
        fprintf(stderr, "etmkit export: %s: the profile is empty: ", d.input);
        if (!bs.samples)
            fprintf(stderr, "no samples came out of the trace%s\n",
                    rep.len ? " (below: why)" : " (the recording holds no decodable trace)");
        else
            fprintf(stderr,
                    "%llu sample%s, but none of %s addresses is in a binary whose code "
                    "was found\n",
                    (unsigned long long)bs.samples, bs.samples == 1 ? "" : "s",
                    bs.samples == 1 ? "its" : "their");
        ek_sbuf miss = EK_SBUF_INIT;
        if (c.maps) ek_profile_maps_missing(c.maps, &miss);
        if (miss.len) fprintf(stderr, "files not found or of another build:\n%s", miss.p);
        ek_sbuf_free(&miss);
        if (rep.len) fputs(rep.p, stderr);
    } else if (!d.quiet) {
        if (rep.len) fputs(rep.p, stderr);
        if (bs.unlocated) {
            ek_sbuf miss = EK_SBUF_INIT;
            if (c.maps) ek_profile_maps_missing(c.maps, &miss);
            fprintf(stderr,
                    "etmkit export: %llu sample address%s in no binary whose code was "
                    "found%s\n%s",
                    (unsigned long long)bs.unlocated, bs.unlocated == 1 ? " is" : "es are",
                    miss.len ? ":" : "", miss.p ? miss.p : "");
            ek_sbuf_free(&miss);
        }
    }
    ek_sbuf_free(&rep);
    if (empty) {
        ret = CLI_FAIL;
        goto done;
    }
    rc = 0;
    if (lcov) {
        ret = export_lcov(p, binary, &d, &text);
        if (ret != CLI_OK) goto done;
    } else if (fmt == EK_PROFILE_FMT_BOLT) {
        ret = write_bolt(p, binary, &d, &text);
        if (ret != CLI_OK) goto done;
    } else if (fmt == EK_PROFILE_FMT_BRANCH_LIST) {
        rc = ek_profile_write_branch_list(p, &text);
    } else {
        rc = ek_profile_write_autofdo(p, &text);
    }
    if (rc) {
        cli_err("export: %s", ek_strerror(rc));
        ret = CLI_FAIL;
        goto done;
    }
    if (cli_write_file(out, "export", &text)) {
        cli_out_error("export", out, errno);
        ret = CLI_FAIL;
        goto done;
    }
    if (!d.quiet && out && strcmp(out, "-"))
        fprintf(stderr, "etmkit export: %s: %zu binar%s, %llu branch%s, %llu range%s (%s)\n",
                out, ek_profile_binary_count(p), ek_profile_binary_count(p) == 1 ? "y" : "ies",
                (unsigned long long)bs.branches, bs.branches == 1 ? "" : "es",
                (unsigned long long)bs.ranges, bs.ranges == 1 ? "" : "s",
                lcov ? "lcov" : ek_profile_format_name(fmt));
    ret = d.strict && ek_session_problems(s) ? CLI_FAIL : CLI_OK;
done:
    ek_sbuf_free(&text);
    if (c.staged) pthread_mutex_destroy(&c.mu);
    ek_profile_free(c.queues);
    ek_profile_builder_free(c.b);
    ek_profile_maps_free(c.maps);
    for (size_t i = 0; i < c.nbins; i++)
        free(c.bins[i].name);
    free(c.bins);
    ek_profile_free(p);
    ek_session_free(s);
    cli_decode_free(&d);
    return ret;
}
