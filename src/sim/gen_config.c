/* `etmkit gen --config FILE`: "key = value" lines that override a scenario's settings. */
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "sim/sim.h"

static int parse_u64(const char *v, uint64_t *out)
{
    char *end;
    unsigned long long x = strtoull(v, &end, 0);
    uint64_t mul = 1;
    if (*end == 'k' || *end == 'K')
        mul = 1ull << 10, end++;
    else if (*end == 'm' || *end == 'M')
        mul = 1ull << 20, end++;
    else if (*end == 'g' || *end == 'G')
        mul = 1ull << 30, end++;
    if (end == v || *end) return -1;
    *out = (uint64_t)x * mul;
    return 0;
}

/* Apply "key = value" lines to the scenario (first session, all sinks). Unknown keys and bad
 * values are reported with file and line; the run stops with EK_ERR_FORMAT. */
int sim_apply_config(sim *S, const char *path, int phase)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        ek_diag_emit(S->diag, EK_SEV_ERROR, "gen.config", EK_ERR_IO, path, -1, -1, -1,
                     "cannot open the configuration file");
        return EK_ERR_IO;
    }
    char line[512];
    int lineno = 0, err = 0;
    sim_session *s = S->nsessions ? &S->sessions[0] : NULL;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '#' || *p == ';' || *p == '\n' || !*p) continue;
        char *eq = strchr(p, '=');
        if (!eq) {
            ek_diag_emit(S->diag, EK_SEV_ERROR, "gen.config", EK_ERR_FORMAT, path, lineno, -1, -1,
                         "expected key = value");
            err = EK_ERR_FORMAT;
            continue;
        }
        char *ke = eq;
        while (ke > p && (ke[-1] == ' ' || ke[-1] == '\t'))
            ke--;
        *ke = 0;
        char *v = eq + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        char *ve = v + strlen(v);
        while (ve > v && (ve[-1] == '\n' || ve[-1] == '\r' || ve[-1] == ' ' || ve[-1] == '\t'))
            ve--;
        *ve = 0;
        uint64_t n = 0;
        int isnum = !parse_u64(v, &n), ok = 1;
        if (phase == 0) { /* before the machine exists */
            if (!strcmp(p, "truth") && !strcmp(v, "on"))
                S->truth = 1;
            else if (!strcmp(p, "truth") && !strcmp(v, "off")) {
                S->truth = 0;
                if (S->branches_limit > 100000) S->branches_limit = 100000;
            } else if (!strcmp(p, "tick_ns") && isnum && n)
                S->tick = n;
            else if (!strcmp(p, "quantum_ns") && isnum && n)
                S->quantum = n;
            else if (!strcmp(p, "branches_limit") && isnum)
                S->branches_limit = n;
            else if (!strcmp(p, "jit_dir") && v[0] == '/' && strlen(v) < 90)
                S->jit_dir = sim_strdup(S, "%s", v);
            else if (!strcmp(p, "real_libdir") && v[0])
                S->real_libdir = sim_strdup(S, "%s", v);
            continue;
        }
        if (!strcmp(p, "truth") || !strcmp(p, "tick_ns") || !strcmp(p, "quantum_ns") ||
            !strcmp(p, "branches_limit") ||
            (!strcmp(p, "jit_dir") && v[0] == '/' && strlen(v) < 90) ||
            (!strcmp(p, "real_libdir") && v[0]))
            continue;
        if (!s) {
            ok = 0;
        } else if (!strcmp(p, "el")) {
            s->el_mask = !strcmp(v, "u") ? 1 : !strcmp(v, "k") ? 2 : !strcmp(v, "uk") ? 3 : 0;
            ok = s->el_mask != 0;
        } else if (!strcmp(p, "timestamps") && isnum) {
            s->configr = n ? s->configr | EK_TRCCONFIGR_TS : s->configr & ~EK_TRCCONFIGR_TS;
            s->attr_config = n ? s->attr_config | (1u << 28) : s->attr_config & ~(1u << 28);
        } else if (!strcmp(p, "contextid") && isnum) {
            s->configr = n ? s->configr | EK_TRCCONFIGR_CID : s->configr & ~EK_TRCCONFIGR_CID;
            s->attr_config = n ? s->attr_config | (1u << 14) : s->attr_config & ~(1u << 14);
        } else if (!strcmp(p, "retstack") && isnum) {
            s->configr = n ? s->configr | EK_TRCCONFIGR_RS : s->configr & ~EK_TRCCONFIGR_RS;
            s->attr_config = n ? s->attr_config | (1u << 29) : s->attr_config & ~(1u << 29);
        } else if (!strcmp(p, "cycacc") && isnum) {
            s->configr = n ? s->configr | EK_TRCCONFIGR_CCI : s->configr & ~EK_TRCCONFIGR_CCI;
            s->attr_config = n ? s->attr_config | (1u << 12) : s->attr_config & ~(1u << 12);
        } else if (!strcmp(p, "header") && isnum && n <= 2) {
            s->header_version = (int)n;
        } else if (!strcmp(p, "hwid") && isnum) {
            s->hw_id_records = n != 0;
        } else if (!strcmp(p, "clock_monotonic") && isnum) {
            s->clock_monotonic = n != 0;
        } else if (!strcmp(p, "hwid_minor") && isnum && n <= 1) {
            s->hw_id_minor = (int)n;
        } else if (!strcmp(p, "trace_id_top") && isnum && n >= 2 && n <= 0x70) {
            S->trace_id_top = (int)n;
        } else if (!strcmp(p, "ring_size") && isnum && n >= 4096 && !(n & (n - 1))) {
            s->ring_size = (uint32_t)n;
        } else if (!strcmp(p, "read_period_ns") && isnum) {
            s->read_period = n;
        } else if (!strcmp(p, "read_skew_ns") && isnum) {
            s->read_skew = n;
        } else if (!strcmp(p, "barrier") && isnum) {
            for (int i = 0; i < S->nsinks; i++)
                S->sinks[i].barrier = n != 0;
        } else if (!strcmp(p, "partial_flush") && isnum) {
            for (int i = 0; i < S->nsinks; i++)
                S->sinks[i].partial_flush = n != 0;
        } else if (!strcmp(p, "sync_period") && isnum && n >= 64) {
            for (int c = 0; c < S->ncpus; c++)
                S->cpus[c].etm.sync_period = (uint32_t)n;
        } else {
            ok = 0;
        }
        if (!ok) {
            ek_diag_emit(S->diag, EK_SEV_ERROR, "gen.config", EK_ERR_FORMAT, path, lineno, -1, -1,
                         "unknown key or bad value: %s = %s", p, v);
            err = EK_ERR_FORMAT;
        }
    }
    fclose(f);
    return err;
}
