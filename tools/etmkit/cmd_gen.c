/* etmkit gen: simulate a CoreSight system and write perf.data (or a snapshot folder), the
 * binaries under symfs/, and the ground truth. See docs/SIMULATOR.md. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_progress.h"
#include "etmkit/sim.h"

/* A number for a 64-bit option: digits first (strtoull would take "-1" as 2^64 - 1, skip
 * blanks, and read "" as 0), in range (it clamps). *end: what follows the number. */
static int parse_u64(const char *s, unsigned long long *v, char **end)
{
    if (!isdigit((unsigned char)s[0])) return -1;
    errno = 0;
    *v = strtoull(s, end, 0);
    return errno || *end == s ? -1 : 0;
}

static int parse_size(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v;
    if (parse_u64(s, &v, &end)) return -1;
    uint64_t mul = 1;
    if (*end == 'k' || *end == 'K')
        mul = 1ull << 10;
    else if (*end == 'm' || *end == 'M')
        mul = 1ull << 20;
    else if (*end == 'g' || *end == 'G')
        mul = 1ull << 30;
    else if (*end)
        return -1;
    if (mul > 1 && end[1] && strcmp(end + 1, "iB") && strcmp(end + 1, "B")) return -1;
    if (v > UINT64_MAX / mul) return -1;
    *out = (uint64_t)v * mul;
    return 0;
}

/* ---- the output folder: written beside OUT, renamed into place when complete ------------- */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path) && errno != ENOENT ? -1 : 0;
}

/* rm -rf (symbolic links are removed, never followed) */
static int rm_tree(const char *path)
{
    return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* 1: dir holds nothing; 0: it holds something; -1: cannot be read */
static int dir_empty(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    struct dirent *e;
    int empty = 1;
    while (empty && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) empty = 0;
    closedir(d);
    return empty;
}

/* Can OUT take this run's output? 0: yes (*replace: an old folder is there to replace), or
 * a message and CLI_USAGE. With --force only a folder gen wrote (its truth.summary is the
 * last file written) is replaced: anything else may be someone's work. */
static int check_out(const char *out, int force, int *replace)
{
    struct stat st;
    *replace = 0;
    if (lstat(out, &st)) {
        if (errno == ENOENT) return 0;
        cli_err("gen: -o %s: %s", out, strerror(errno));
        return CLI_USAGE;
    }
    if (!S_ISDIR(st.st_mode)) {
        cli_err("gen: -o %s: exists and is not a folder", out);
        return CLI_USAGE;
    }
    int e = dir_empty(out);
    if (e < 0) {
        cli_err("gen: -o %s: %s", out, strerror(errno));
        return CLI_USAGE;
    }
    *replace = 1;
    if (e) return 0;
    if (!force) {
        cli_err("gen: -o %s: folder exists and is not empty (--force replaces an earlier gen "
                "output)",
                out);
        return CLI_USAGE;
    }
    char *sum = NULL;
    if (asprintf(&sum, "%s/truth.summary", out) < 0) return CLI_FAIL;
    int ours = lstat(sum, &st) == 0 && S_ISREG(st.st_mode);
    free(sum);
    if (!ours) {
        cli_err("gen: -o %s: not a folder written by etmkit gen (no truth.summary): not "
                "replacing it",
                out);
        return CLI_USAGE;
    }
    return 0;
}

/* A new folder beside out (same file system: the final rename is atomic): ".NAME.gen-XXXXXX"
 * with the permissions mkdir would give. Creates out's missing parents. */
static char *tmp_sibling(const char *out)
{
    char *o = strdup(out);
    if (!o) return NULL;
    size_t n = strlen(o);
    while (n > 1 && o[n - 1] == '/')
        o[--n] = 0;
    char *slash = strrchr(o, '/');
    const char *base = slash ? slash + 1 : o;
    char *t = NULL;
    int r;
    if (slash) {
        *slash = 0;
        /* mkdir -p of the parent */
        for (char *p = o + 1; p <= slash; p++)
            if (*p == '/' || !*p) {
                char c = *p;
                *p = 0;
                if (mkdir(o, 0777) && errno != EEXIST) {
                    free(o);
                    return NULL;
                }
                *p = c;
            }
        r = asprintf(&t, "%s/.%s.gen-XXXXXX", *o ? o : "/", base);
    } else {
        r = asprintf(&t, ".%s.gen-XXXXXX", base);
    }
    free(o);
    if (r < 0) return NULL;
    if (!mkdtemp(t)) {
        free(t);
        return NULL;
    }
    mode_t um = umask(0);
    umask(um);
    chmod(t, 0777 & ~um);
    return t;
}

/* Put the finished folder tmp in out's place (and the old folder, if any, away). */
static int move_into_place(const char *tmp, const char *out, int replace)
{
    if (!replace) return rename(tmp, out);
    char *old = NULL;
    if (asprintf(&old, "%s.old", tmp) < 0) return -1;
    int rc = rename(out, old);
    if (!rc) {
        rc = rename(tmp, out);
        if (rc)
            rename(old, out); /* put it back */
        else
            rm_tree(old);
    }
    free(old);
    return rc;
}

static void gen_usage(FILE *f, int full)
{
    fprintf(f, "usage: etmkit gen --scenario NAME [--seed N] [--trace-size SIZE] [--config FILE] "
               "[--force] [-q] -o OUT\n       etmkit gen --list\n");
    if (!full) return;
    fprintf(
        f, "\nSimulate a CoreSight system (real AArch64 programs, ETMv4/ETE trace units, funnels,\n"
           "sinks, perf record) and write under OUT: perf.data (or snapshot/ for snapshot\n"
           "scenarios), the binaries under symfs/, the ground truth: expected-branches.txt,\n"
           "-instructions.txt, -lbr.txt and -times.txt (what perf script --itrace=b, i100i,\n"
           "i64il16 and b with -F time should print), expected-callstacks.txt (the call stack at\n"
           "every branch sample), perf-6.1-expected.txt (what perf 6.1 prints),\n"
           "truth.branches.tsv, truth.trace.tsv and truth.summary (itrace-calls-returns-skip:\n"
           "also expected-calls.txt, -returns.txt and -skip.txt, for --itrace=c, r and\n"
           "i100ibs50).\n"
           "Same options and seed: identical output. See docs/SIMULATOR.md.\n"
           "\noptions:\n"
           "  --list              scenarios, one per line: name, description\n"
           "  --scenario NAME     the scenario to run (-s NAME)\n"
           "  --seed N            random seed (default 1)\n"
           "  --trace-size SIZE   bytes of trace to produce (K, M, G suffixes; default: the\n"
           "                      scenario's); the full ground truth up to 4 MiB, a summary above\n"
           "  --config FILE       key = value overrides (truth, el, timestamps, contextid,\n"
           "                      retstack, cycacc, header, hwid, ring_size, barrier, ...)\n"
           "  -o OUT              output folder: created, or an empty folder; the run writes\n"
           "                      beside it and renames it into place at the end, so a failed\n"
           "                      run leaves nothing\n"
           "  --force             replace OUT when it holds an earlier gen output (all of it:\n"
           "                      no old file survives next to the new recording); a folder\n"
           "                      without truth.summary is never replaced\n"
           "  -q, --quiet         no progress line and no summary line on stderr\n"
           "  -h, --help          this text\n"
           "\nOn a terminal, a run longer than a second shows its progress on stderr.\n");
}

int cmd_gen(int argc, char **argv)
{
    ek_sim_opts o;
    memset(&o, 0, sizeof(o));
    o.size = sizeof(o);
    o.seed = 1;
    int list = 0, force = 0, quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--list")) {
            list = 1;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            gen_usage(stdout, 1);
            return CLI_OK;
        } else if ((!strcmp(a, "--scenario") || !strcmp(a, "-s")) && v) {
            o.scenario = v;
            i++;
        } else if (!strcmp(a, "--seed") && v) {
            char *end;
            unsigned long long n;
            if (parse_u64(v, &n, &end) || *end) {
                cli_err("gen: --seed '%s': give a number from 0 to %" PRIu64, v, UINT64_MAX);
                return CLI_USAGE;
            }
            o.seed = n;
            i++;
        } else if (!strcmp(a, "--trace-size") && v) {
            if (parse_size(v, &o.trace_size)) {
                cli_err("gen: --trace-size '%s': give a number of bytes (K, M or G after it: "
                        "KiB, MiB, GiB)",
                        v);
                return CLI_USAGE;
            }
            i++;
        } else if (!strcmp(a, "--config") && v) {
            o.config_file = v;
            i++;
        } else if (!strcmp(a, "-o") && v) {
            if (!*v) { /* (the run would end failing to rename its folder to "") */
                cli_err("gen: -o '': give the output folder");
                return CLI_USAGE;
            }
            o.outdir = v;
            i++;
        } else if (!strcmp(a, "--force")) {
            force = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else {
            cli_err("gen: unexpected argument '%s'", a);
            gen_usage(stderr, 0);
            return CLI_USAGE;
        }
    }
    if (list) {
        int w = 0; /* the names' column: as wide as the longest name */
        for (size_t i = 0; i < ek_sim_scenario_count(); i++)
            if ((int)strlen(ek_sim_scenario_name(i)) > w) w = (int)strlen(ek_sim_scenario_name(i));
        for (size_t i = 0; i < ek_sim_scenario_count(); i++)
            printf("%-*s  %s\n", w, ek_sim_scenario_name(i), ek_sim_scenario_desc(i));
        return CLI_OK;
    }
    if (!o.scenario || !o.outdir) {
        gen_usage(stderr, 0);
        return CLI_USAGE;
    }
    size_t si = 0;
    while (si < ek_sim_scenario_count() && strcmp(ek_sim_scenario_name(si), o.scenario))
        si++;
    if (si == ek_sim_scenario_count()) {
        cli_err("gen: unknown scenario '%s' (see etmkit gen --list)", o.scenario);
        return CLI_USAGE;
    }
    const char *out = o.outdir;
    int replace, rc = check_out(out, force, &replace);
    if (rc) return rc;
    char *tmp = tmp_sibling(out);
    if (!tmp) {
        cli_err("gen: -o %s: cannot create a folder beside it: %s", out, strerror(errno));
        return CLI_FAIL;
    }
    o.outdir = tmp;
    ek_diag d = cli_diag_stderr();
    o.diag = &d;
    cli_progress pr;
    cli_progress_start(&pr, "gen", quiet, 0);
    o.progress = pr.on ? cli_progress_update : NULL; /* none: nothing to tell */
    o.progress_ctx = &pr;
    ek_sim_result r;
    rc = ek_sim_run(&o, &r);
    cli_progress_end(&pr);
    const size_t nt = strlen(tmp);
    if (rc && r.io_errno && !strncmp(r.io_file, tmp, nt) &&
        (!r.io_file[nt] || r.io_file[nt] == '/'))
        /* in the folder beside OUT: the file of the folder it would have become */
        cli_err("gen: %s%s: %s (%s is left as it was)", out, r.io_file + nt, strerror(r.io_errno),
                out);
    else if (rc && r.io_errno)
        cli_err("gen: %s: %s (%s is left as it was)", r.io_file, strerror(r.io_errno), out);
    else if (rc)
        cli_err("gen: %s (%s is left as it was)", ek_strerror(rc), out);
    else if (move_into_place(tmp, out, replace) && (rc = EK_ERR_IO))
        cli_err("gen: cannot rename %s to %s: %s", tmp, out, strerror(errno));
    if (rc) rm_tree(tmp); /* a failed run leaves nothing behind */
    free(tmp);
    if (rc) return CLI_FAIL;
    if (!quiet)
        fprintf(stderr,
                "etmkit: gen %s: %" PRIu64 " instructions, %" PRIu64 " branches, %" PRIu64
                " trace bytes, %" PRIu64 " AUX bytes, %" PRIu64 " expected lines%s\n",
                o.scenario, r.instructions, r.branches, r.trace_bytes, r.aux_bytes,
                r.expected_lines, r.truth_complete ? "" : " (truth summarised)");
    return CLI_OK;
}
