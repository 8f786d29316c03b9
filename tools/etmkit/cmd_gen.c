/* etmkit gen: simulate a CoreSight system and write perf.data (or a snapshot folder), the
 * binaries under symfs/, and the ground truth. See docs/SIMULATOR.md. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "etmkit/sim.h"

static int parse_size(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s) return -1;
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

static void gen_usage(FILE *f, int full)
{
    fprintf(f, "usage: etmkit gen --scenario NAME [--seed N] [--trace-size SIZE] [--config FILE] "
               "-o OUT\n       etmkit gen --list\n");
    if (!full) return;
    fprintf(
        f, "\nSimulate a CoreSight system (real AArch64 programs, ETMv4/ETE trace units, funnels,\n"
           "sinks, perf record) and write under OUT: perf.data (or snapshot/ for snapshot\n"
           "scenarios), the binaries under symfs/, the ground truth expected-branches.txt (what\n"
           "perf script --itrace=b -F pid,tid,cpu,flags,ip,sym,symoff,dso,addr should print),\n"
           "perf-6.1-expected.txt (what perf 6.1 prints), truth.branches.tsv and truth.summary.\n"
           "Same options and seed: identical output. See docs/SIMULATOR.md.\n"
           "\noptions:\n"
           "  --list              scenarios, one per line: name, description\n"
           "  --scenario NAME     the scenario to run (-s NAME)\n"
           "  --seed N            random seed (default 1)\n"
           "  --trace-size SIZE   bytes of trace to produce (K, M, G suffixes; default: the\n"
           "                      scenario's); the full ground truth up to 4 MiB, a summary above\n"
           "  --config FILE       key = value overrides (truth, el, timestamps, contextid,\n"
           "                      retstack, cycacc, header, hwid, ring_size, barrier, ...)\n"
           "  -o OUT              output folder (created)\n"
           "  -h, --help          this text\n");
}

int cmd_gen(int argc, char **argv)
{
    ek_sim_opts o;
    memset(&o, 0, sizeof(o));
    o.size = sizeof(o);
    o.seed = 1;
    int list = 0;
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
            o.seed = strtoull(v, &end, 0);
            if (*end) {
                cli_err("gen: bad seed '%s'", v);
                return CLI_USAGE;
            }
            i++;
        } else if (!strcmp(a, "--trace-size") && v) {
            if (parse_size(v, &o.trace_size)) {
                cli_err("gen: bad size '%s'", v);
                return CLI_USAGE;
            }
            i++;
        } else if (!strcmp(a, "--config") && v) {
            o.config_file = v;
            i++;
        } else if (!strcmp(a, "-o") && v) {
            o.outdir = v;
            i++;
        } else {
            cli_err("gen: unexpected argument '%s'", a);
            gen_usage(stderr, 0);
            return CLI_USAGE;
        }
    }
    if (list) {
        for (size_t i = 0; i < ek_sim_scenario_count(); i++)
            printf("%-24s %s\n", ek_sim_scenario_name(i), ek_sim_scenario_desc(i));
        return CLI_OK;
    }
    if (!o.scenario || !o.outdir) {
        gen_usage(stderr, 0);
        return CLI_USAGE;
    }
    ek_diag d = cli_diag_stderr();
    o.diag = &d;
    ek_sim_result r;
    int rc = ek_sim_run(&o, &r);
    if (rc == EK_ERR_NOT_FOUND) {
        cli_err("gen: unknown scenario '%s' (see etmkit gen --list)", o.scenario);
        return CLI_USAGE;
    }
    if (rc) {
        cli_err("gen: %s", ek_strerror(rc));
        return CLI_FAIL;
    }
    fprintf(stderr,
            "etmkit: gen %s: %" PRIu64 " instructions, %" PRIu64 " branches, %" PRIu64
            " trace bytes, %" PRIu64 " AUX bytes, %" PRIu64 " expected lines%s\n",
            o.scenario, r.instructions, r.branches, r.trace_bytes, r.aux_bytes, r.expected_lines,
            r.truth_complete ? "" : " (truth summarised)");
    return CLI_OK;
}
