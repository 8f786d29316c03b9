/* Classifies every vector in tests/data/isa/ *.vec (encodings made by llvm-mc from the annotated
 * assembly next to them, see gen-vectors.sh) and checks the expectation written in the source. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/isa.h"
#include "testutil.h"

typedef struct vctx {
    const char *file;
    int line;
    ek_isa isa;
    ek_isa_cfg cfg;
    uint64_t addr;
    ek_it_state it;
    int failures, count;
} vctx;

static ek_arch arch_of(const char *s, ek_arch_profile *prof)
{
    static const struct {
        const char *n;
        ek_arch a;
        ek_arch_profile p;
    } t[] = {
        {"v7a", EK_ARCH_V7A, EK_PROFILE_A},    {"v7r", EK_ARCH_V7R, EK_PROFILE_R},
        {"v7m", EK_ARCH_V7M, EK_PROFILE_M},    {"v8a", EK_ARCH_V8A, EK_PROFILE_A},
        {"v83a", EK_ARCH_V8_3A, EK_PROFILE_A}, {"v8r", EK_ARCH_V8R, EK_PROFILE_R},
        {"v8m", EK_ARCH_V8M, EK_PROFILE_M},    {"v81m", EK_ARCH_V8_1M, EK_PROFILE_M},
        {"v9a", EK_ARCH_V9A, EK_PROFILE_A},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(s, t[i].n)) {
            *prof = t[i].p;
            return t[i].a;
        }
    fail_msg("unknown arch %s", s);
    return EK_ARCH_UNKNOWN;
}

static void parse_cfg(vctx *c, char *args)
{
    ek_arch arch = EK_ARCH_UNKNOWN;
    ek_arch_profile prof = EK_PROFILE_UNKNOWN;
    unsigned ocsd = 0;
    int m = 0;
    uint32_t opts = 0;
    for (char *tok = strtok(args, " \t"); tok; tok = strtok(NULL, " \t")) {
        if (!strncmp(tok, "arch=", 5))
            arch = arch_of(tok + 5, &prof);
        else if (!strncmp(tok, "profile=", 8))
            prof = tok[8] == 'M' ? EK_PROFILE_M : tok[8] == 'R' ? EK_PROFILE_R : EK_PROFILE_A;
        else if (!strncmp(tok, "ocsd=", 5))
            ocsd = (unsigned)strtoul(tok + 5, NULL, 0);
        else if (!strcmp(tok, "m"))
            m = 1;
        else if (!strncmp(tok, "opts=", 5)) {
            if (strstr(tok, "wfx")) opts |= EK_ISA_OPT_WFX_BRANCH;
            if (strstr(tok, "dsb")) opts |= EK_ISA_OPT_DSB_DMB_WAYPOINT;
        } else
            fail_msg("%s:%d: bad @cfg token %s", c->file, c->line, tok);
    }
    if (ocsd)
        ek_isa_cfg_ocsd(&c->cfg, ocsd, m, opts);
    else
        ek_isa_cfg_init(&c->cfg, arch, prof, opts);
    memset(&c->it, 0, sizeof c->it);
}

static const struct {
    const char *n;
    uint32_t f;
} FLAGS[] = {
    {"RETURN", EK_IF_RETURN},
    {"ERET", EK_IF_ERET},
    {"PAC", EK_IF_PAC},
    {"INTERWORK", EK_IF_INTERWORK},
    {"ISA_SWITCH", EK_IF_ISA_SWITCH},
    {"EXCGEN", EK_IF_EXCGEN},
    {"BARRIER", EK_IF_BARRIER},
    {"WFX", EK_IF_WFX},
    {"IT", EK_IF_IT},
    {"TME", EK_IF_TME},
    {"LOOP", EK_IF_LOOP},
    {"LINK", EK_IF_LINK},
};

#define VFAIL(...)                                                                                 \
    do {                                                                                           \
        fprintf(stderr, "%s:%d: ", c->file, c->line);                                              \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "  [%s]\n", text);                                                         \
        c->failures++;                                                                             \
        return;                                                                                    \
    } while (0)

static void check_vector(vctx *c, char *line)
{
    char text[1024];
    snprintf(text, sizeof text, "%.1000s", line);
    char *bar = strchr(text, '|');
    if (bar) bar[-1] = 0;
    char *arrow = strstr(line, "=>");
    if (!arrow) VFAIL("no =>");
    *arrow = 0;
    char *exp = arrow + 2;
    char *src = strchr(exp, '|');
    if (src) *src = 0;

    /* encoding */
    uint32_t word = 0;
    unsigned enc_size = 0;
    {
        char *p = line;
        unsigned hw[2] = {0, 0}, n = 0;
        while (*p && n < 2) {
            while (*p == ' ')
                p++;
            if (!*p) break;
            char *end;
            unsigned long v = strtoul(p, &end, 16);
            if (end == p) break;
            if (c->isa == EK_ISA_T32)
                hw[n++] = (unsigned)v, enc_size += 2;
            else
                word = (uint32_t)v, enc_size = 4, n = 2;
            p = end;
        }
        if (c->isa == EK_ISA_T32)
            word = hw[0] | (enc_size == 4 ? hw[1] << 16 : 0xabcd0000u); /* junk after 16-bit */
    }

    /* expectation */
    int want_type = -1, want_sub = EK_ISUB_NONE, want_cond = 0, want_undef = 0, want_cc = -1;
    int have_t = 0, want_isa = c->isa;
    int64_t want_t = 0;
    uint32_t want_flags = 0;
    const char *want_kind = NULL;
    for (char *tok = strtok(exp, " \t"); tok; tok = strtok(NULL, " \t")) {
        static const char *const types[] = {"OTHER", "BR", "BRI", "ISB", "DSB", "WFX", "TSTART"};
        int done = 0;
        for (int i = 0; i < 7; i++)
            if (!strcmp(tok, types[i])) want_type = i, done = 1;
        if (done) continue;
        if (!strcmp(tok, "link"))
            want_sub = EK_ISUB_BR_LINK;
        else if (!strcmp(tok, "ret"))
            want_sub = EK_ISUB_V8_RET;
        else if (!strcmp(tok, "eret"))
            want_sub = EK_ISUB_V8_ERET;
        else if (!strcmp(tok, "iret"))
            want_sub = EK_ISUB_V7_IMPLIED_RET;
        else if (!strcmp(tok, "cond"))
            want_cond = 1;
        else if (!strcmp(tok, "undef"))
            want_undef = 1;
        else if (!strncmp(tok, "cc=", 3))
            want_cc = atoi(tok + 3);
        else if (!strncmp(tok, "T=", 2)) {
            have_t = 1;
            int neg = tok[2] == '-';
            want_t = (int64_t)strtoull(tok + 3, NULL, 16);
            if (neg) want_t = -want_t;
        } else if (!strncmp(tok, "isa=", 4))
            want_isa = !strcmp(tok + 4, "A32")   ? EK_ISA_A32
                       : !strcmp(tok + 4, "T32") ? EK_ISA_T32
                                                 : EK_ISA_A64;
        else if (!strncmp(tok, "k=", 2))
            want_kind = tok + 2;
        else if (tok[0] == '+') {
            size_t i;
            for (i = 0; i < sizeof FLAGS / sizeof FLAGS[0]; i++)
                if (!strcmp(tok + 1, FLAGS[i].n)) break;
            if (i == sizeof FLAGS / sizeof FLAGS[0]) VFAIL("unknown flag %s", tok);
            want_flags |= FLAGS[i].f;
        } else
            VFAIL("bad token %s", tok);
    }
    if (want_type < 0) VFAIL("no type in expectation");
    if ((want_type == EK_ITYPE_BR) != have_t) VFAIL("a direct branch, and only that, needs T=");

    ek_insn in;
    int sz = ek_isa_classify(word, c->isa, c->addr, &c->cfg, &in);
    int in_it = c->it.left > 0; /* this instruction is inside an IT block */
    if (c->isa == EK_ISA_T32) ek_isa_it_step(&c->it, &in, &c->cfg);
    c->count++;
    if (sz != (int)enc_size || in.size != enc_size) VFAIL("size %d, want %u", sz, enc_size);
    if (in.type != want_type)
        VFAIL("type %s, want %s", ek_isa_type_name(in.type), ek_isa_type_name((unsigned)want_type));
    if (in.subtype != want_sub)
        VFAIL("subtype %s, want %s", ek_isa_subtype_name(in.subtype),
              ek_isa_subtype_name((unsigned)want_sub));
    if (!!(in.flags & EK_IF_COND) != want_cond)
        VFAIL("cond flag %d, want %d", !!(in.flags & EK_IF_COND), want_cond);
    if (!!(in.flags & EK_IF_UNDEF) != want_undef)
        VFAIL("undef flag %d, want %d", !!(in.flags & EK_IF_UNDEF), want_undef);
    if (want_cc >= 0 && in.cond != want_cc) VFAIL("cond code %u, want %d", in.cond, want_cc);
    uint64_t rel = in.target - c->addr;
    if (c->isa != EK_ISA_A64) /* A32/T32 addresses are 32-bit and wrap */
        rel = (uint64_t)(int64_t)(int32_t)(uint32_t)rel;
    if (have_t && (int64_t)rel != want_t)
        VFAIL("target %#llx (%+lld), want %+lld", (unsigned long long)in.target,
              (long long)(in.target - c->addr), (long long)want_t);
    if (in.next_isa != want_isa)
        VFAIL("next isa %s, want %s", ek_isa_name(in.next_isa), ek_isa_name(want_isa));
    if (want_kind && strcmp(ek_isa_kind_name(in.kind), want_kind))
        VFAIL("kind %s, want %s", ek_isa_kind_name(in.kind), want_kind);
    if ((in.flags & want_flags) != want_flags)
        VFAIL("flags %#x lack %#x", in.flags, want_flags & ~in.flags);
    /* invariants */
    if (!!(in.flags & EK_IF_BRANCH) != (in.type == EK_ITYPE_BR || in.type == EK_ITYPE_BR_INDIRECT))
        VFAIL("EK_IF_BRANCH disagrees with the type");
    if (!!(in.flags & EK_IF_INDIRECT) != (in.type == EK_ITYPE_BR_INDIRECT))
        VFAIL("EK_IF_INDIRECT disagrees with the type");
    if (in.type != EK_ITYPE_BR && in.target) VFAIL("target set on a non-direct instruction");

    /* the scanner agrees (outside IT blocks, where it would need the state) */
    if (!in_it && in.kind != EK_K_T32_IT &&
        !(enc_size == 2 && (c->cfg.opts & EK_ISA_OCSD_FETCH4))) {
        uint8_t buf[4] = {(uint8_t)word, (uint8_t)(word >> 8), (uint8_t)(word >> 16),
                          (uint8_t)(word >> 24)};
        ek_isa_scan sc;
        int r = ek_isa_next_waypoint(buf, enc_size, c->isa, c->addr, &c->cfg, NULL, &sc);
        if (r != (in.type != EK_ITYPE_OTHER) || sc.count != 1)
            VFAIL("next_waypoint says %d (count %llu)", r, (unsigned long long)sc.count);
        const char *d = r == 1 ? tu_insn_diff(&sc.insn, &in) : NULL;
        if (d) VFAIL("next_waypoint classification differs in %s", d);
    }
}

/* Returns the number of failures (the caller asserts once every file is closed). */
static int run_file(const char *path, int *files, int *total)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    vctx c;
    memset(&c, 0, sizeof c);
    c.file = path;
    c.isa = EK_ISA_UNKNOWN;
    ek_isa_cfg_init(&c.cfg, EK_ARCH_UNKNOWN, EK_PROFILE_UNKNOWN, 0);
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        c.line++;
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0] || line[0] == '#') continue;
        if (!strncmp(line, "@isa ", 5))
            c.isa = !strcmp(line + 5, "a64")   ? EK_ISA_A64
                    : !strcmp(line + 5, "t32") ? EK_ISA_T32
                                               : EK_ISA_A32;
        else if (!strncmp(line, "@addr ", 6)) {
            c.addr = strtoull(line + 6, NULL, 0);
            memset(&c.it, 0, sizeof c.it);
        } else if (!strncmp(line, "@cfg", 4))
            parse_cfg(&c, line + 4);
        else
            check_vector(&c, line);
    }
    fclose(f);
    printf("%s: %d vectors, %d failures\n", path, c.count, c.failures);
    (*files)++;
    *total += c.count;
    return c.failures + (c.count == 0); /* a file without vectors is a failure too */
}

static void test_vectors(void **state)
{
    (void)state;
    const char *srcdir = getenv("ETMKIT_SRC");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/data/isa", srcdir ? srcdir : ".");
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int files = 0, total = 0, failures = 0;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n > 4 && !strcmp(e->d_name + n - 4, ".vec")) {
            char path[8192];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            failures += run_file(path, &files, &total);
        }
    }
    closedir(d);
    assert_int_equal(failures, 0);
    assert_true(files >= 4);
    printf("%d vector files, %d vectors\n", files, total);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_vectors)};
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
