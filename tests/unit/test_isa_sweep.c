/* Sweeps the encoding space through the classifier: no crash, size and branch invariants,
 * agreement between the inline fast path and the full classifier, and exact counts of the
 * encodings of each branch kind as the Arm ARM allocates them (computed by hand below).
 *
 * Optimised build: every A64 word whose class depends on more than its top 16 bits (the
 * 2^29 words of the branch/exception/system group and the UDF range; the other 7/8 of the
 * space are checked through their 2^16 prefixes) and the whole T32 space. ASan/UBSan build
 * (ETMKIT_SANITIZE=1) or ETMKIT_ISA_SWEEP=sample: a seeded pseudo-random sample instead. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/isa.h"
#include "testutil.h"

static int full_sweep(void)
{
    const char *m = getenv("ETMKIT_ISA_SWEEP");
    if (m) return !strcmp(m, "full");
    const char *san = getenv("ETMKIT_SANITIZE");
    return !(san && !strcmp(san, "1"));
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd32(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 32);
}

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            if (++*bad < 10) {                                                                     \
                fprintf(stderr, "%s %08x: ", what, w);                                             \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fprintf(stderr, "\n");                                                             \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
    } while (0)

static void invariants(const char *what, uint32_t w, ek_isa isa, uint64_t addr, const ek_insn *in,
                       int sz, unsigned want_size, uint64_t *bad)
{
    int br = in->type == EK_ITYPE_BR || in->type == EK_ITYPE_BR_INDIRECT;
    CHECK(sz == (int)want_size && in->size == want_size, "size %d", sz);
    CHECK(in->kind < EK_K_COUNT, "kind %u", in->kind);
    CHECK(in->type <= EK_ITYPE_TSTART && in->subtype <= EK_ISUB_V7_IMPLIED_RET, "type/sub");
    CHECK(!!(in->flags & EK_IF_BRANCH) == br, "EK_IF_BRANCH vs type %u", in->type);
    CHECK(!!(in->flags & EK_IF_INDIRECT) == (in->type == EK_ITYPE_BR_INDIRECT), "indirect");
    CHECK(!(in->flags & EK_IF_UNDEF) || in->type == EK_ITYPE_OTHER, "undefined waypoint");
    CHECK(in->cond <= 16, "cond %u", in->cond);
    CHECK(br || in->subtype == EK_ISUB_NONE, "sub-type on a non-branch");
    if (in->type == EK_ITYPE_BR) {
        int64_t rel = (int64_t)(in->target - addr);
        if (isa == EK_ISA_A64)
            CHECK((rel & 3) == 0 && rel >= -(1 << 27) && rel < (1 << 27), "target %+lld",
                  (long long)rel);
        else
            CHECK(in->target <= 0xffffffffu && !(in->target & 1), "target %#llx",
                  (unsigned long long)in->target);
    } else
        CHECK(in->target == 0, "target on a non-direct instruction");
    CHECK(in->next_isa == isa || (in->flags & EK_IF_ISA_SWITCH), "next isa");
}

static void check_a64(uint32_t w, const ek_isa_cfg *all, const ek_isa_cfg *v8,
                      const ek_isa_cfg *ocsd, int cross, uint64_t *count, uint64_t *bad)
{
    const uint64_t addr = 0x123456780ull;
    ek_insn in;
    int sz = ek_isa_classify(w, EK_ISA_A64, addr, all, &in);
    invariants("A64", w, EK_ISA_A64, addr, &in, sz, 4, bad);
    count[in.kind]++;
    if (!cross) return;
    /* fewer features only take encodings away; OpenCSD's view differs only where
     * docs/ISA.md says so (reserved CB<cc> conditions; conditionality is not compared) */
    ek_insn a, o;
    ek_isa_classify(w, EK_ISA_A64, addr, v8, &a);
    if (a.type != EK_ITYPE_OTHER && (a.type != in.type || a.kind != in.kind ||
                                     a.target != in.target || a.subtype != in.subtype)) {
        if (++*bad < 10)
            fprintf(stderr, "A64 %08x: v8.0 %s but v9 %s\n", w, ek_isa_kind_name(a.kind),
                    ek_isa_kind_name(in.kind));
    }
    ek_isa_classify(w, EK_ISA_A64, addr, ocsd, &o);
    int cb = o.kind >= EK_K_A64_CB_REG && o.kind <= EK_K_A64_CB_IMM;
    if ((o.type != in.type || o.subtype != in.subtype || o.target != in.target) &&
        !(cb && in.kind == EK_K_UNDEF)) {
        if (++*bad < 10)
            fprintf(stderr, "A64 %08x: OpenCSD view %s/%s, ours %s/%s\n", w,
                    ek_isa_kind_name(o.kind), ek_isa_type_name(o.type), ek_isa_kind_name(in.kind),
                    ek_isa_type_name(in.type));
    }
}

static void test_a64(void **state)
{
    (void)state;
    ek_isa_cfg all, v8, ocsd;
    ek_isa_cfg_init(&all, EK_ARCH_V9A, EK_PROFILE_A, EK_ISA_OPT_WFX_BRANCH);
    ek_isa_cfg_init(&v8, EK_ARCH_V8A, EK_PROFILE_A, EK_ISA_OPT_WFX_BRANCH);
    ek_isa_cfg_ocsd(&ocsd, 0x0864, 0, EK_ISA_OPT_WFX_BRANCH);
    static uint64_t count[EK_K_COUNT];
    memset(count, 0, sizeof count);
    uint64_t bad = 0, n = 0;
    const int full = full_sweep();

    /* 1. The inline fast path and the classifier's tables both look at bits 31:16 only to
     * decide "ordinary instruction": check every such prefix with random low halves. */
    for (uint32_t hi = 0; hi < 0x10000; hi++)
        for (int k = 0; k < 4; k++) {
            uint32_t w = hi << 16 | (k == 0 ? 0 : k == 1 ? 0xffff : rnd32() & 0xffff);
            ek_insn in;
            int sz = ek_isa_classify(w, EK_ISA_A64, 0x1000, &all, &in);
            int plain_ok = (sz == 4) & (in.kind == EK_K_NONE) & (in.type == 0) & (in.flags == 0) &
                           (in.target == 0) & (in.cond == EK_COND_AL) & (in.next_isa == EK_ISA_A64);
            if (ek_isa_a64_is_plain(w) ? !plain_ok : in.kind == EK_K_NONE && w >> 29 != 6) {
                if (++bad < 10)
                    fprintf(stderr, "A64 %08x: fast path %d, classified as %s\n", w,
                            ek_isa_a64_is_plain(w), ek_isa_kind_name(in.kind));
            }
            n++;
        }
    /* 2. Everything else: the UDF range and every word of the branch, exception and system
     * group (bits 28:26 = 101, 2^29 words), or a sample of it. */
    for (uint32_t lo = 0; lo < 0x10000; lo++, n++)
        check_a64(lo, &all, &v8, &ocsd, 1, count, &bad);
    const uint64_t total = full ? 1ull << 29 : 1ull << 21;
    for (uint64_t i = 0; i < total; i++, n++) {
        uint32_t r = full ? (uint32_t)i : rnd32() & 0x1fffffffu;
        uint32_t w = (r >> 26) << 29 | 5u << 26 | (r & 0x3ffffffu);
        check_a64(w, &all, &v8, &ocsd, full ? (i & 3) == 0 : 1, count, &bad);
    }
    printf("A64: %llu words (%s), %llu problems\n", (unsigned long long)n,
           full ? "full sweep" : "sampled", (unsigned long long)bad);
    assert_int_equal(bad, 0);
    if (!full) return;
    /* Encodings per kind, from the Arm ARM encoding diagrams. */
    static const struct {
        unsigned kind;
        uint64_t n;
    } want[] = {
        {EK_K_A64_B, 1u << 26}, /* imm26 */
        {EK_K_A64_BL, 1u << 26},
        {EK_K_A64_B_COND, 1u << 23}, /* imm19, cond */
        {EK_K_A64_BC_COND, 1u << 23},
        {EK_K_A64_CBZ, 1u << 26},       /* sf, op, imm19, Rt */
        {EK_K_A64_TBZ, 1u << 26},       /* b5, op, b40, imm14, Rt */
        {EK_K_A64_CB_REG, 2 * 6 << 19}, /* sf, 6 of 8 cc, Rm, imm9, Rt */
        {EK_K_A64_CBB, 6 << 19},
        {EK_K_A64_CBH, 6 << 19},
        {EK_K_A64_CB_IMM, 2 * 6 << 20}, /* sf, cc, imm6, imm9, Rt */
        {EK_K_A64_BR, 32},              /* Rn */
        {EK_K_A64_BLR, 32},
        {EK_K_A64_RET, 32},
        {EK_K_A64_BRA, 2 * 32 + 2 * 32 * 32}, /* BRAAZ/BRABZ Rn; BRAA/BRAB Rn, Rm */
        {EK_K_A64_BLRA, 2 * 32 + 2 * 32 * 32},
        {EK_K_A64_RETA, 2},
        {EK_K_A64_RETASPPC, 2u << 16}, /* key, imm16 */
        {EK_K_A64_RETASPPCR, 2 * 31},  /* key, Rm != 31 */
        {EK_K_A64_ERET, 1},
        {EK_K_A64_ERETA, 2},
        {EK_K_A64_DRPS, 1},
        {EK_K_A64_TEXIT, 2},
        {EK_K_A64_UDF, 1u << 16},
        {EK_K_A64_SVC, 1u << 16},
        {EK_K_A64_HVC, 1u << 16},
        {EK_K_A64_SMC, 1u << 16},
        {EK_K_A64_BRK, 1u << 16},
        {EK_K_A64_HLT, 1u << 16},
        {EK_K_A64_TCANCEL, 1u << 16},
        {EK_K_A64_ISB, 16},     /* CRm */
        {EK_K_A64_DSB, 16 + 4}, /* CRm; nXS: CRm = xx10 */
        {EK_K_A64_DMB, 16},
        {EK_K_A64_SB, 1},
        {EK_K_A64_WFI, 1},
        {EK_K_A64_WFE, 1},
        {EK_K_A64_WFIT, 32},
        {EK_K_A64_WFET, 32},
        {EK_K_A64_TSTART, 32},
        {EK_K_A64_TTEST, 32},
        {EK_K_A64_TCOMMIT, 1},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        if (count[want[i].kind] != want[i].n)
            fprintf(stderr, "%s: %llu encodings, want %llu\n", ek_isa_kind_name(want[i].kind),
                    (unsigned long long)count[want[i].kind], (unsigned long long)want[i].n);
        assert_int_equal(count[want[i].kind], want[i].n);
    }
    printf("A64: %llu unallocated in the branch/system groups\n",
           (unsigned long long)count[EK_K_UNDEF]);
}

static void test_t32(void **state)
{
    (void)state;
    ek_isa_cfg v7, m81;
    ek_isa_cfg_init(&v7, EK_ARCH_V7A, EK_PROFILE_A, EK_ISA_OPT_WFX_BRANCH);
    ek_isa_cfg_init(&m81, EK_ARCH_V8_1M, EK_PROFILE_M, EK_ISA_OPT_WFX_BRANCH);
    static uint64_t count[EK_K_COUNT], count_m[EK_K_COUNT];
    memset(count, 0, sizeof count);
    memset(count_m, 0, sizeof count_m);
    uint64_t bad = 0, n = 0;
    const int full = full_sweep();
    const uint64_t addr = 0x8002;
    /* 16-bit: every first halfword below 0xe800 with a random second one */
    for (uint32_t hw1 = 0; hw1 < 0xe800; hw1++) {
        uint32_t w = hw1 | rnd32() << 16;
        ek_insn in;
        int sz = ek_isa_classify(w, EK_ISA_T32, addr, &v7, &in);
        invariants("T32", w, EK_ISA_T32, addr, &in, sz, 2, &bad);
        count[in.kind]++;
        sz = ek_isa_classify(w, EK_ISA_T32, addr, &m81, &in);
        invariants("T32-M", w, EK_ISA_T32, addr, &in, sz, 2, &bad);
        n++;
    }
    /* 32-bit: 0xe800..0xffff x every second halfword (sampled in the sanitizer build) */
    const uint64_t total = full ? 0x1800ull << 16 : 1ull << 21;
    for (uint64_t i = 0; i < total; i++) {
        uint32_t hw1 = full ? 0xe800 + (uint32_t)(i >> 16) : 0xe800 + rnd32() % 0x1800;
        uint32_t hw2 = full ? (uint32_t)(i & 0xffff) : rnd32() & 0xffff;
        uint32_t w = hw1 | hw2 << 16;
        ek_insn in;
        int sz = ek_isa_classify(w, EK_ISA_T32, addr, &v7, &in);
        invariants("T32", w, EK_ISA_T32, addr, &in, sz, 4, &bad);
        count[in.kind]++;
        n++;
        if ((hw1 >> 11) != 0x1e || !(hw2 & 0x8000))
            continue; /* M profile: the branch and miscellaneous control space */
        sz = ek_isa_classify(w, EK_ISA_T32, addr, &m81, &in);
        invariants("T32-M", w, EK_ISA_T32, addr, &in, sz, 4, &bad);
        count_m[in.kind]++;
    }
    printf("T32: %llu encodings (%s), %llu problems\n", (unsigned long long)n,
           full ? "all" : "sampled", (unsigned long long)bad);
    assert_int_equal(bad, 0);
    /* 16-bit counts are exact in both modes */
    assert_int_equal(count[EK_K_T32_B_COND16], 14 * 256); /* cond 0000..1101, imm8 */
    assert_int_equal(count[EK_K_T32_B16], 2048);          /* imm11 */
    assert_int_equal(count[EK_K_T32_CBZ], 4 * 256);       /* op, i, imm5, Rn */
    assert_int_equal(count[EK_K_T32_POP_PC16], 256);      /* register list */
    assert_int_equal(count[EK_K_T32_UDF] >= 256, 1);
    if (!full) return;
    assert_int_equal(count[EK_K_T32_B], 2048ull * 8192); /* S imm10 | J1 J2 imm11 */
    assert_int_equal(count[EK_K_T32_BL], 2048ull * 8192);
    assert_int_equal(count[EK_K_T32_B_COND], 1792ull * 8192);  /* 14 conds x S imm6 | ... */
    assert_int_equal(count[EK_K_T32_BLX_IMM], 2048ull * 4096); /* H = 0 */
    assert_int_equal(count_m[EK_K_T32_BLX_IMM], 0);            /* no A32 state in M */
    assert_int_equal(count_m[EK_K_T32_LE], 2048);              /* imm10, imm1 */
    assert_int_equal(count_m[EK_K_T32_WLS], 16 * 2048);        /* Rn, imm10, imm1 */
    assert_int_equal(count[EK_K_T32_LE], 0);                   /* not in v7-A */
    assert_int_equal(count[EK_K_T32_TBB], 16 * 16 * 2);        /* Rn, Rm, H */
}

static void test_a32(void **state)
{
    (void)state;
    ek_isa_cfg v7;
    ek_isa_cfg_init(&v7, EK_ARCH_V7A, EK_PROFILE_A, EK_ISA_OPT_WFX_BRANCH);
    uint64_t bad = 0;
    const uint64_t total = full_sweep() ? 1ull << 24 : 1ull << 21;
    uint64_t branches = 0;
    for (uint64_t i = 0; i < total; i++) {
        uint32_t w = rnd32();
        ek_insn in;
        int sz = ek_isa_classify(w, EK_ISA_A32, 0x10000, &v7, &in);
        invariants("A32", w, EK_ISA_A32, 0x10000, &in, sz, 4, &bad);
        if (((w >> 28) < 14) != !!(in.flags & EK_IF_COND) && ++bad < 10)
            fprintf(stderr, "A32 %08x: condition flag\n", w);
        branches += (in.flags & EK_IF_BRANCH) != 0;
    }
    /* every B/BL/BLX (imm) word is a direct branch */
    for (uint32_t c = 0; c < 16; c++)
        for (uint32_t op = 0; op < 2; op++) {
            uint32_t w = c << 28 | 0x0a000000u | op << 24 | (rnd32() & 0xffffff);
            ek_insn in;
            ek_isa_classify(w, EK_ISA_A32, 0x10000, &v7, &in);
            assert_int_equal(in.type, EK_ITYPE_BR);
            assert_int_equal(!!(in.flags & EK_IF_LINK), op || c == 15);
        }
    printf("A32: %llu sampled words, %llu branches, %llu problems\n", (unsigned long long)total,
           (unsigned long long)branches, (unsigned long long)bad);
    assert_int_equal(bad, 0);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a64),
        cmocka_unit_test(test_t32),
        cmocka_unit_test(test_a32),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
