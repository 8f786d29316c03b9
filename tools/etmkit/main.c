#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cli_progress.h"
#include "etmkit/profile.h"
#include "etmkit/symbols.h"

void cli_write(ek_sbuf *out, FILE *f)
{
    if (out->len)
        fwrite(out->p, 1, out->len, f);
    ek_sbuf_reset(out);
}

void cli_err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_progress_clear();
    fputs("etmkit: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void cli_elf_not_found(const char *cmd, const char *format, const char *elf,
                       const struct ek_elf_info *in)
{
    uint8_t eid[EK_PROFILE_BUILD_ID_MAX];
    const size_t elen = ek_profile_build_id_canon(in->build_id, in->build_id_len, eid);
    if (elen) {
        char hex[2 * EK_PROFILE_BUILD_ID_MAX + 1];
        ek_build_id_hex(eid, elen, hex, sizeof hex);
        cli_err("%s: --format=%s: no binary of the profile has the build-id of %s (%s)", cmd,
                format, elf, hex);
    } else {
        const char *base = strrchr(elf, '/');
        cli_err("%s: --format=%s: %s has no build-id, and no one binary of the profile without "
                "one is named %s",
                cmd, format, elf, base ? base + 1 : elf);
    }
}

static void print_event(void *ctx, const ek_diag_event *ev)
{
    ek_sbuf line = EK_SBUF_INIT;
    ek_diag_format(&line, ev);
    cli_progress_clear();
    fprintf(stderr, "etmkit: %s\n", line.p ? line.p : "");
    ek_sbuf_free(&line);
}

ek_diag cli_diag_stderr(void)
{
    ek_diag d = {print_event, NULL};
    return d;
}

void cli_print_diag_summary(ek_diag_collector *c, int verbose)
{
    ek_sbuf s = EK_SBUF_INIT;
    ek_diag_collector_summary(c, &s, verbose);
    if (s.len) {
        cli_progress_clear();
        fputs(s.p, stderr);
    }
    ek_sbuf_free(&s);
}

int cli_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int cli_is_perf_folder(const char *path)
{
    struct stat st;
    size_t n = strlen(path);
    char *p = malloc(n + 16);
    if (!p) return 0;
    memcpy(p, path, n);
    strcpy(p + n, "/snapshot.ini");
    int snap = stat(p, &st) == 0;
    strcpy(p + n, "/data");
    int data = stat(p, &st) == 0 && S_ISREG(st.st_mode);
    free(p);
    return data && !snap;
}

int cmd_dump(int argc, char **argv)
{
    /* The input is the last non-option argument: a snapshot folder or a perf.data file. */
    const char *input = NULL;
    int bare = 0;
    static const char *const valued[] = {"--image",  "--trace",    "--framing", "--protocol",
                                         "--reg",    "--trace-id", "--arch",    "--config-from",
                                         "--format", "--itm-sync"};
    for (int i = 1; i < argc; i++) {
        int v = 0;
        for (size_t k = 0; k < sizeof valued / sizeof valued[0] && !v; k++)
            v = !strcmp(argv[i], valued[k]);
        for (size_t k = 1; k < 8; k++) /* --trace ... --config-from: a bare trace file */
            if (!strncmp(argv[i], valued[k], strlen(valued[k])))
                bare = 1; /* the snapshot lister, with its configuration */
        if (v)
            i++; /* (its value is not the input) */
        else if (argv[i][0] != '-')
            input = argv[i];
    }
    if (bare) return cmd_dump_snapshot(argc, argv);
    struct stat st;
    if (input && stat(input, &st)) {
        /* neither a snapshot folder nor a perf.data file: say so, whatever the options */
        cli_err("%s: %s", input, strerror(errno));
        return CLI_FAIL;
    }
    /* a folder is a snapshot, unless it is a perf.data folder (perf record -o DIR with
     * kcore_dir: the recording in DIR/data) */
    if (input && cli_is_dir(input) && !cli_is_perf_folder(input))
        return cmd_dump_snapshot(argc, argv);
    if (!input)
        for (int i = 1; i < argc; i++)
            if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
                /* no input to tell which: both forms */
                char *help[] = {argv[0], argv[i], NULL};
                cmd_dump_snapshot(2, help);
                fputs("\n", stdout);
                return cmd_dump_perf(2, help);
            }
    return cmd_dump_perf(argc, argv);
}

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} commands[] = {
    {"dump", cmd_dump, "list packets and elements of a snapshot folder or perf.data file"},
    {"script", cmd_script, "perf-script compatible samples from a perf.data file"},
    {"doctor", cmd_doctor, "explain what in a recording could not be turned into samples"},
    {"gen", cmd_gen, "simulate a CoreSight system: write perf.data/snapshots with ground truth"},
    {"merge", cmd_merge, "add profiles (branch lists, AutoFDO text) together; write AutoFDO/BOLT"},
    {"inject", cmd_inject, "write a perf.data with last-branch stacks (perf inject --itrace=il64)"},
    {"export", cmd_export, "profiles (AutoFDO, BOLT), coverage (lcov), timeline, flame graph"},
    {"report", cmd_report, "where the instructions went: functions, DSOs, threads, lost trace"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: etmkit <command> [options] INPUT\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\n'etmkit <command> --help' describes a command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    /* what went to standard output must be out: a full disk or a closed stdout is an error
     * (exit 1), said against standard output */
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return cli_stdout_check(NULL);
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        printf("etmkit %s\n", ek_version());
        return cli_stdout_check(NULL);
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) {
            /* `etmkit CMD ... --version` as `etmkit --version` (options end at "--") */
            for (int a = 2; a < argc && strcmp(argv[a], "--"); a++)
                if (!strcmp(argv[a], "--version")) {
                    printf("etmkit %s\n", ek_version());
                    return cli_stdout_check(commands[i].name);
                }
            int status = commands[i].fn(argc - 1, argv + 1);
            if (cli_stdout_check(commands[i].name) && status == CLI_OK) status = CLI_FAIL;
            return status;
        }
    cli_err("unknown command '%s'", argv[1]);
    usage(stderr);
    return CLI_USAGE;
}
