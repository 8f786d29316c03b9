/* Real traces: every instruction range in OpenCSD 1.8.0's reference listings
 * ($ETMKIT_SHARED/testdata/opencsd/expected/<case>.ppl.xz, ETMv4 / ETE / ETMv4-M / PTM cases) is
 * walked through the snapshot's memory images with the classifier in OpenCSD mode. Every
 * instruction but the last must be an ordinary one (or a conditional branch, or the range
 * ends without a waypoint: see check_range); the instruction count, the last size and the
 * last instruction's type, sub-type and <cond> flag must be what OpenCSD printed.
 * Skips (77) without the shared test data or xz. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/isa.h"
#include "testutil.h"

typedef struct region {
    uint64_t addr;
    uint8_t *data;
    size_t len;
} region;

typedef struct snap {
    region reg[64];
    int nreg;
    unsigned ocsd_arch;
    int m_profile;
    int wfx;
} snap;

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = 0;
    return s;
}

/* OpenCSD's core name -> (arch, profile): its table, then the ARMv<M>[.<m>]-<P> and ARM-AA64
 * patterns (see docs/ISA.md). */
static void core_arch(const char *type, unsigned *arch, int *m)
{
    static const struct {
        const char *n;
        unsigned a;
        int m;
    } t[] = {
        {"Cortex-A77", 0x0803, 0}, {"Cortex-A76", 0x0803, 0}, {"Cortex-A75", 0x0803, 0},
        {"Cortex-A73", 0x0800, 0}, {"Cortex-A72", 0x0800, 0}, {"Cortex-A65", 0x0803, 0},
        {"Cortex-A57", 0x0800, 0}, {"Cortex-A55", 0x0803, 0}, {"Cortex-A53", 0x0800, 0},
        {"Cortex-A35", 0x0800, 0}, {"Cortex-A32", 0x0800, 0}, {"Cortex-A17", 0x0700, 0},
        {"Cortex-A15", 0x0700, 0}, {"Cortex-A12", 0x0700, 0}, {"Cortex-A9", 0x0700, 0},
        {"Cortex-A8", 0x0700, 0},  {"Cortex-A7", 0x0700, 0},  {"Cortex-A5", 0x0700, 0},
        {"Cortex-R52", 0x0800, 0}, {"Cortex-R8", 0x0700, 0},  {"Cortex-R7", 0x0700, 0},
        {"Cortex-R5", 0x0700, 0},  {"Cortex-R4", 0x0700, 0},  {"Cortex-M33", 0x0800, 1},
        {"Cortex-M23", 0x0800, 1}, {"Cortex-M0", 0x0700, 1},  {"Cortex-M0+", 0x0700, 1},
        {"Cortex-M3", 0x0700, 1},  {"Cortex-M4", 0x0700, 1},  {"Cortex-M55", 0x0800, 1},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(type, t[i].n)) {
            *arch = t[i].a, *m = t[i].m;
            return;
        }
    if (!strncmp(type, "ARM-AA64", 8) || !strncmp(type, "ARM-aa64", 8)) {
        *arch = 0x0864, *m = strstr(type, "-M") != NULL;
        return;
    }
    if (!strncmp(type, "ARMv", 4)) {
        int maj = type[4] - '0', min = type[5] == '.' ? type[6] - '0' : 0;
        *arch = maj == 7 ? 0x0700 : maj > 8 || min > 3 ? 0x0864 : min == 3 ? 0x0803 : 0x0800;
        *m = strstr(type, "-M") != NULL;
        return;
    }
    *arch = 0, *m = 0;
}

static void load_device(snap *s, const char *dir, const char *file)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "r");
    if (!f) return;
    char line[1024], sect[128] = "", cls[64] = "", type[128] = "";
    char dfile[1024] = "";
    uint64_t daddr = 0, dlen = 0, doff = 0, idr1 = 0, idr2 = 0, devarch = 0;
    int in_dump = 0;
    for (;;) {
        char *got = fgets(line, sizeof line, f);
        char *l = got ? trim(line) : NULL;
        if (!got || l[0] == '[') {
            if (in_dump && dfile[0] && s->nreg < 64) { /* flush the finished dump section */
                char fp[8192];
                snprintf(fp, sizeof fp, "%s/%s", dir, dfile);
                FILE *df = fopen(fp, "rb");
                if (df) {
                    fseek(df, 0, SEEK_END);
                    long sz = ftell(df);
                    size_t n = dlen ? dlen : (size_t)sz - doff;
                    if ((long)(doff + n) <= sz) {
                        region *r = &s->reg[s->nreg];
                        r->data = malloc(n ? n : 1);
                        fseek(df, (long)doff, SEEK_SET);
                        if (r->data && fread(r->data, 1, n, df) == n) {
                            r->addr = daddr, r->len = n;
                            s->nreg++;
                        } else
                            free(r->data);
                    }
                    fclose(df);
                }
            }
            if (!got) break;
            snprintf(sect, sizeof sect, "%s", l);
            in_dump = !strncmp(sect, "[dump", 5);
            dfile[0] = 0, daddr = dlen = doff = 0;
            continue;
        }
        char *eq = strchr(l, '=');
        if (!eq || l[0] == ';') continue;
        *eq = 0;
        char *k = trim(l), *v = trim(eq + 1);
        char *paren = strchr(k, '(');
        if (paren) *paren = 0;
        if (!strcmp(k, "class"))
            snprintf(cls, sizeof cls, "%s", v);
        else if (!strcmp(k, "type"))
            snprintf(type, sizeof type, "%s", v);
        else if (in_dump && !strcmp(k, "file"))
            snprintf(dfile, sizeof dfile, "%s", v);
        else if (in_dump && !strcmp(k, "address"))
            daddr = strtoull(v, NULL, 0);
        else if (in_dump && !strcmp(k, "length"))
            dlen = strtoull(v, NULL, 0);
        else if (in_dump && !strcmp(k, "offset"))
            doff = strtoull(v, NULL, 0);
        else if (!strcasecmp(k, "TRCIDR1"))
            idr1 = strtoull(v, NULL, 0);
        else if (!strcasecmp(k, "TRCIDR2"))
            idr2 = strtoull(v, NULL, 0);
        else if (!strcasecmp(k, "TRCDEVARCH"))
            devarch = strtoull(v, NULL, 0);
    }
    fclose(f);
    if (!strcmp(cls, "core") && !s->ocsd_arch) core_arch(type, &s->ocsd_arch, &s->m_profile);
    if (!strcmp(cls, "trace_source")) {
        unsigned ver = !strcmp(type, "ETE")
                           ? (unsigned)((devarch >> 12 & 0xf) << 4 | (devarch >> 16 & 0xf))
                           : (unsigned)((idr1 >> 8 & 0xf) << 4 | (idr1 >> 4 & 0xf));
        if ((idr2 & 0x80000000u) && ver >= 0x43) s->wfx = 1;
    }
}

static int load_snapshot(snap *s, const char *dir)
{
    char path[8192], line[1024];
    snprintf(path, sizeof path, "%s/snapshot.ini", dir);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int in_list = 0;
    while (fgets(line, sizeof line, f)) {
        char *l = trim(line);
        if (l[0] == '[') {
            in_list = !strcmp(l, "[device_list]");
            continue;
        }
        char *eq = strchr(l, '=');
        if (in_list && eq) load_device(s, dir, trim(eq + 1));
    }
    fclose(f);
    return 0;
}

static int read4(const snap *s, uint64_t a, uint32_t *w)
{
    for (int i = 0; i < s->nreg; i++) {
        const region *r = &s->reg[i];
        if (a >= r->addr && a - r->addr + 4 <= r->len) {
            const uint8_t *p = r->data + (a - r->addr);
            *w = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
            return 1;
        }
    }
    return 0;
}

typedef struct stats {
    uint64_t ranges, checked, unreadable, bad;
} stats;

static void check_range(const snap *s, const ek_isa_cfg *cfg, const char *line, const char *cs,
                        stats *st)
{
    unsigned long long sa, ea;
    unsigned ni, lsz;
    char isa_s[8];
    const char *p = strstr(line, "exec range=");
    if (!p || sscanf(p, "exec range=0x%llx:[0x%llx] num_i(%u) last_sz(%u) (ISA=%7[^)])", &sa, &ea,
                     &ni, &lsz, isa_s) != 5)
        return;
    st->ranges++;
    ek_isa isa = !strcmp(isa_s, "A64")   ? EK_ISA_A64
                 : !strcmp(isa_s, "T32") ? EK_ISA_T32
                 : !strcmp(isa_s, "A32") ? EK_ISA_A32
                                         : EK_ISA_UNKNOWN;
    if (isa == EK_ISA_UNKNOWN) return;
    const char *t = strchr(strstr(p, "(ISA="), ')') + 4; /* after "(ISA=..) E " */
    int want_type = !strncmp(t, "BR ", 3)      ? EK_ITYPE_BR
                    : !strncmp(t, "iBR", 3)    ? EK_ITYPE_BR_INDIRECT
                    : !strncmp(t, "ISB", 3)    ? EK_ITYPE_ISB
                    : !strncmp(t, "DSB", 3)    ? EK_ITYPE_DSB_DMB
                    : !strncmp(t, "WFI", 3)    ? EK_ITYPE_WFI_WFE
                    : !strncmp(t, "TSTART", 6) ? EK_ITYPE_TSTART
                                               : EK_ITYPE_OTHER;
    int want_sub = strstr(t, "b+link")        ? EK_ISUB_BR_LINK
                   : strstr(t, "A64:eret")    ? EK_ISUB_V8_ERET
                   : strstr(t, "A64:ret")     ? EK_ISUB_V8_RET
                   : strstr(t, "V7:impl ret") ? EK_ISUB_V7_IMPLIED_RET
                                              : EK_ISUB_NONE;
    int want_cond = strstr(t, "<cond>") != NULL;

    ek_it_state it = {0, 0};
    ek_insn in;
    memset(&in, 0, sizeof in);
    uint64_t a = sa;
    unsigned n = 0;
    const char *why = NULL;
    while (a < ea) {
        uint32_t w;
        if (!read4(s, a, &w)) {
            st->unreadable++;
            return;
        }
        ek_isa_classify(w, isa, a, cfg, &in);
        if (isa == EK_ISA_T32) ek_isa_it_step(&it, &in, cfg);
        n++;
        a += in.size;
        /* A waypoint inside a range is possible only where OpenCSD did not trace to a
         * waypoint: not-taken conditional branches between ETE source addresses, and ranges
         * walked to a given address (before an exception), which end with "---". */
        if (a < ea && in.type != EK_ITYPE_OTHER && !(in.flags & EK_IF_COND) &&
            want_type != EK_ITYPE_OTHER) {
            why = "waypoint inside the range";
            break;
        }
    }
    st->checked++;
    if (!why && a != ea) why = "range end";
    if (!why && n != ni) why = "instruction count";
    if (!why && in.size != lsz) why = "last size";
    if (!why && in.type != want_type) why = "type";
    if (!why && in.subtype != want_sub) why = "sub-type";
    if (!why && !!(in.flags & EK_IF_COND) != want_cond) why = "cond";
    if (why && ++st->bad <= 10)
        fprintf(stderr, "%s: %s at %#llx (%s %s/%s cond=%d n=%u): %s\n", cs, why,
                (unsigned long long)(a - in.size), ek_isa_kind_name(in.kind),
                ek_isa_type_name(in.type), ek_isa_subtype_name(in.subtype),
                !!(in.flags & EK_IF_COND), n, line);
}

static void test_ranges(void **state)
{
    (void)state;
    char *cases = tu_shared_path("opencsd/cases.tsv");
    if (!cases) tu_skip_all("no $ETMKIT_SHARED/testdata/opencsd/cases.tsv");
    if (system("xz --version >/dev/null 2>&1") != 0) tu_skip_all("xz not installed");
    FILE *cf = fopen(cases, "r");
    assert_non_null(cf);
    const char *san = getenv("ETMKIT_SANITIZE");
    const uint64_t limit = san && !strcmp(san, "1") ? 20000 : UINT64_MAX;
    char line[4096];
    stats total = {0, 0, 0, 0};
    int ncases = 0;
    while (fgets(line, sizeof line, cf)) {
        if (line[0] == '#') continue;
        char cs[256], sn[256], proto[64];
        if (sscanf(line, "%255[^\t]\t%255[^\t]\t%63[^\t]", cs, sn, proto) != 3) continue;
        if (strcmp(proto, "ETMv4") && strcmp(proto, "ETE") && strcmp(proto, "ETMv4-M") &&
            strcmp(proto, "PTM"))
            continue;
        char rel[1024];
        snprintf(rel, sizeof rel, "opencsd/snapshots/%s", sn);
        char *dir = tu_shared_path(rel);
        snprintf(rel, sizeof rel, "opencsd/expected/%s.ppl.xz", cs);
        char *exp = tu_shared_path(rel);
        if (!dir || !exp) {
            free(dir);
            free(exp);
            continue;
        }
        snap s;
        memset(&s, 0, sizeof s);
        assert_int_equal(load_snapshot(&s, dir), 0);
        if (!strcmp(proto, "ETE") && !s.ocsd_arch) s.ocsd_arch = 0x0864;
        ek_isa_cfg cfg;
        ek_isa_cfg_ocsd(&cfg, s.ocsd_arch, s.m_profile, s.wfx ? EK_ISA_OPT_WFX_BRANCH : 0);
        char cmd[8300];
        snprintf(cmd, sizeof cmd, "xz -dc '%s'", exp);
        FILE *pf = popen(cmd, "r");
        assert_non_null(pf);
        stats st = {0, 0, 0, 0};
        static char l[65536];
        while (fgets(l, sizeof l, pf))
            if (st.ranges < limit && strstr(l, "OCSD_GEN_TRC_ELEM_INSTR_RANGE("))
                check_range(&s, &cfg, l, cs, &st);
        pclose(pf);
        printf("%-28s arch %#06x%s wfx=%d: %llu ranges, %llu checked, %llu unreadable, %llu bad\n",
               cs, s.ocsd_arch, s.m_profile ? " M" : "", s.wfx, (unsigned long long)st.ranges,
               (unsigned long long)st.checked, (unsigned long long)st.unreadable,
               (unsigned long long)st.bad);
        total.ranges += st.ranges, total.checked += st.checked;
        total.unreadable += st.unreadable, total.bad += st.bad;
        ncases++;
        for (int i = 0; i < s.nreg; i++)
            free(s.reg[i].data);
        free(dir);
        free(exp);
    }
    fclose(cf);
    free(cases);
    printf("%d cases: %llu ranges, %llu checked, %llu bad\n", ncases,
           (unsigned long long)total.ranges, (unsigned long long)total.checked,
           (unsigned long long)total.bad);
    assert_true(ncases > 0);
    assert_true(total.checked > 1000);
    assert_int_equal(total.bad, 0);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_ranges)};
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
