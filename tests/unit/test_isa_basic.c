/* Classifier API: configuration helpers, T32 sizes, IT blocks, the waypoint scanner,
 * names, bad arguments. Encodings are checked one by one in test_isa_vectors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "etmkit/isa.h"
#include "testutil.h"

static void put32(uint8_t *p, uint32_t w)
{
    p[0] = (uint8_t)w, p[1] = (uint8_t)(w >> 8), p[2] = (uint8_t)(w >> 16),
    p[3] = (uint8_t)(w >> 24);
}

static void put16(uint8_t *p, uint16_t h)
{
    p[0] = (uint8_t)h, p[1] = (uint8_t)(h >> 8);
}

static void test_features(void **state)
{
    (void)state;
    uint32_t f = ek_isa_arch_features(EK_ARCH_V8A, EK_PROFILE_A);
    assert_int_equal(f, EK_ISA_FEAT_AR32);
    f = ek_isa_arch_features(EK_ARCH_V8_3A, EK_PROFILE_A);
    assert_true(f & EK_ISA_FEAT_PAUTH);
    assert_false(f & EK_ISA_FEAT_CMPBR);
    f = ek_isa_arch_features(EK_ARCH_V9A, EK_PROFILE_A);
    assert_true((f & (EK_ISA_FEAT_CMPBR | EK_ISA_FEAT_PAUTH_LR | EK_ISA_FEAT_TME)) ==
                (EK_ISA_FEAT_CMPBR | EK_ISA_FEAT_PAUTH_LR | EK_ISA_FEAT_TME));
    assert_false(f & EK_ISA_FEAT_LOB);
    f = ek_isa_arch_features(EK_ARCH_V8_1M, EK_PROFILE_M);
    assert_int_equal(f, EK_ISA_FEAT_LOB | EK_ISA_FEAT_CMSE);
    assert_int_equal(ek_isa_arch_features(EK_ARCH_V7M, EK_PROFILE_M), 0);
    assert_false(ek_isa_arch_features(EK_ARCH_UNKNOWN, EK_PROFILE_M) & EK_ISA_FEAT_AR32);

    ek_isa_cfg c;
    ek_isa_cfg_ocsd(&c, 0x0800, 0, EK_ISA_OPT_WFX_BRANCH);
    assert_int_equal(c.opts, EK_ISA_OCSD_ALL | EK_ISA_OPT_WFX_BRANCH);
    assert_true(c.features & EK_ISA_FEAT_HBC);
    assert_true(c.features & EK_ISA_FEAT_LOB);
    assert_false(c.features & EK_ISA_FEAT_PAUTH);
    ek_isa_cfg_ocsd(&c, 0x0803, 0, 0);
    assert_true(c.features & EK_ISA_FEAT_PAUTH_LR);
    assert_false(c.features & EK_ISA_FEAT_WFXT);
    ek_isa_cfg_ocsd(&c, 0x0864, 0, 0);
    assert_true(c.features & EK_ISA_FEAT_TME);
}

static void test_t32_size(void **state)
{
    (void)state;
    /* 32-bit T32 instructions start with 0b11101, 0b11110 or 0b11111 */
    assert_int_equal(ek_isa_t32_size(0xe7ff), 2);
    assert_int_equal(ek_isa_t32_size(0xe800), 4);
    assert_int_equal(ek_isa_t32_size(0xefff), 4);
    assert_int_equal(ek_isa_t32_size(0xf000), 4);
    assert_int_equal(ek_isa_t32_size(0xf800), 4);
    assert_int_equal(ek_isa_t32_size(0xffff), 4);
    assert_int_equal(ek_isa_t32_size(0x0000), 2);
    assert_int_equal(ek_isa_t32_size(0xdfff), 2);
    ek_isa_cfg c;
    ek_isa_cfg_init(&c, EK_ARCH_V7A, EK_PROFILE_A, 0);
    ek_insn in;
    /* a 16-bit instruction ignores the second halfword */
    assert_int_equal(ek_isa_classify(0xf0004770u, EK_ISA_T32, 0x100, &c, &in), 2);
    assert_int_equal(in.kind, EK_K_T32_BX);
    assert_int_equal(ek_isa_classify(0x0000e7feu, EK_ISA_T32, 0x100, &c, &in), 2);
    assert_int_equal(in.type, EK_ITYPE_BR);
    assert_int_equal(in.target, 0x100); /* b . */
    assert_int_equal(ek_isa_classify(0xf800f000u, EK_ISA_T32, 0x100, &c, &in), 4);
    assert_int_equal(in.kind, EK_K_T32_BL);
    assert_int_equal(in.target, 0x104);
}

static void test_bad_args(void **state)
{
    (void)state;
    ek_isa_cfg c;
    ek_isa_cfg_init(&c, EK_ARCH_V8A, EK_PROFILE_A, 0);
    ek_insn in;
    memset(&in, 0xaa, sizeof in);
    assert_int_equal(ek_isa_classify(0, EK_ISA_UNKNOWN, 0, &c, &in), EK_ERR_ARG);
    assert_int_equal(in.size, 0);
    ek_isa_scan sc;
    assert_int_equal(ek_isa_next_waypoint(NULL, 4, EK_ISA_A64, 0, &c, NULL, &sc), EK_ERR_ARG);
    uint8_t b[4] = {0};
    assert_int_equal(ek_isa_next_waypoint(b, 4, EK_ISA_UNKNOWN, 0, &c, NULL, &sc), EK_ERR_ARG);
    assert_int_equal(ek_isa_next_waypoint(NULL, 0, EK_ISA_A64, 0, &c, NULL, &sc), 0);
    assert_int_equal(sc.count, 0);
}

static void test_names(void **state)
{
    (void)state;
    for (unsigned k = 0; k < EK_K_COUNT; k++) {
        const char *n = ek_isa_kind_name(k);
        assert_non_null(n);
        assert_string_not_equal(n, "?");
        for (unsigned j = 0; j < k; j++)
            assert_string_not_equal(n, ek_isa_kind_name(j));
    }
    assert_string_equal(ek_isa_kind_name(EK_K_COUNT), "?");
    assert_string_equal(ek_isa_type_name(EK_ITYPE_BR_INDIRECT), "BR_INDIRECT");
    assert_string_equal(ek_isa_type_name(99), "?");
    assert_string_equal(ek_isa_subtype_name(EK_ISUB_V7_IMPLIED_RET), "V7_IMPLIED_RET");
    assert_string_equal(ek_isa_name(EK_ISA_T32), "T32");
    assert_string_equal(ek_isa_name(EK_ISA_UNKNOWN), "?");
    /* the numbering is OpenCSD's */
    assert_int_equal(EK_ITYPE_TSTART, 6);
    assert_int_equal(EK_ISUB_V8_ERET, 3);
    assert_int_equal(EK_ISA_A32, 0);
    assert_int_equal(EK_ISA_T32, 1);
    assert_int_equal(EK_ISA_A64, 2);
}

static void test_scan_a64(void **state)
{
    (void)state;
    ek_isa_cfg c;
    ek_isa_cfg_init(&c, EK_ARCH_V8A, EK_PROFILE_A, 0);
    uint8_t b[64];
    for (int i = 0; i < 16; i++)
        put32(b + 4 * i, 0xd503201f); /* nop */
    put32(b + 20, 0xd503207f);        /* wfi: not a waypoint without the option */
    put32(b + 28, 0x94000010);        /* bl +0x40 */
    put32(b + 40, 0xd65f03c0);        /* ret */
    ek_isa_scan sc;
    assert_int_equal(ek_isa_next_waypoint(b, sizeof b, EK_ISA_A64, 0x1000, &c, NULL, &sc), 1);
    assert_int_equal(sc.offset, 28);
    assert_int_equal(sc.count, 8);
    assert_int_equal(sc.insn.kind, EK_K_A64_BL);
    assert_int_equal(sc.insn.target, 0x1000 + 28 + 0x40);
    assert_int_equal(ek_isa_next_waypoint(b + 32, 32, EK_ISA_A64, 0x1020, &c, NULL, &sc), 1);
    assert_int_equal(sc.offset, 8);
    assert_int_equal(sc.count, 3);
    assert_int_equal(sc.insn.subtype, EK_ISUB_V8_RET);
    /* nothing after the ret: the whole tail is consumed, a partial word is not */
    assert_int_equal(ek_isa_next_waypoint(b + 44, 19, EK_ISA_A64, 0x102c, &c, NULL, &sc), 0);
    assert_int_equal(sc.offset, 16);
    assert_int_equal(sc.count, 4);
    /* with WFx as branches the wfi is the first waypoint */
    c.opts |= EK_ISA_OPT_WFX_BRANCH;
    assert_int_equal(ek_isa_next_waypoint(b, sizeof b, EK_ISA_A64, 0x1000, &c, NULL, &sc), 1);
    assert_int_equal(sc.offset, 20);
    assert_int_equal(sc.insn.type, EK_ITYPE_WFI_WFE);
    /* the scanner agrees with one classify call per word on a long run */
    uint8_t big[4096];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof big; i += 4) {
        x = x * 1103515245u + 12345u;
        put32(big + i, x);
    }
    size_t off = 0;
    int found = 0;
    while (off < sizeof big) {
        int r = ek_isa_next_waypoint(big + off, sizeof big - off, EK_ISA_A64, 0x8000 + off, &c,
                                     NULL, &sc);
        for (size_t i = 0; i < sc.offset; i += 4) {
            ek_insn in;
            uint32_t w = (uint32_t)big[off + i] | (uint32_t)big[off + i + 1] << 8 |
                         (uint32_t)big[off + i + 2] << 16 | (uint32_t)big[off + i + 3] << 24;
            ek_isa_classify(w, EK_ISA_A64, 0x8000 + off + i, &c, &in);
            assert_int_equal(in.type, EK_ITYPE_OTHER);
        }
        if (r != 1) break;
        found++;
        off += sc.offset + 4;
    }
    assert_true(found > 10);
}

static void test_scan_t32(void **state)
{
    (void)state;
    ek_isa_cfg c;
    ek_isa_cfg_init(&c, EK_ARCH_V7A, EK_PROFILE_A, 0);
    uint8_t b[32];
    put16(b + 0, 0x4608); /* mov r0, r1 */
    put16(b + 2, 0xf8d1); /* ldr.w r0, [r1] */
    put16(b + 4, 0x0000);
    put16(b + 6, 0xbf08);  /* it eq */
    put16(b + 8, 0x4770);  /* bxeq lr */
    put16(b + 10, 0xbf00); /* nop */
    put16(b + 12, 0xf7ff); /* bl ... (32-bit, split by the end of the run below) */
    put16(b + 14, 0xfffe);
    ek_isa_scan sc;
    ek_it_state it = {0, 0};
    assert_int_equal(ek_isa_next_waypoint(b, 16, EK_ISA_T32, 0x2000, &c, &it, &sc), 1);
    assert_int_equal(sc.offset, 8);
    assert_int_equal(sc.count, 4);
    assert_int_equal(sc.insn.kind, EK_K_T32_BX);
    assert_true(sc.insn.flags & EK_IF_COND);
    assert_int_equal(sc.insn.cond, 0);
    assert_int_equal(it.left, 0);
    /* without the IT state the scanner cannot know the bx is conditional */
    assert_int_equal(ek_isa_next_waypoint(b, 16, EK_ISA_T32, 0x2000, &c, NULL, &sc), 1);
    assert_false(sc.insn.flags & EK_IF_COND);
    /* a 32-bit instruction cut by the end of the run is not consumed */
    assert_int_equal(ek_isa_next_waypoint(b + 10, 4, EK_ISA_T32, 0x200a, &c, NULL, &sc), 0);
    assert_int_equal(sc.offset, 2);
    assert_int_equal(sc.count, 1);
    assert_int_equal(ek_isa_next_waypoint(b + 10, 6, EK_ISA_T32, 0x200a, &c, NULL, &sc), 1);
    assert_int_equal(sc.offset, 2);
    assert_int_equal(sc.insn.kind, EK_K_T32_BL);
    assert_int_equal(sc.insn.target, 0x200c + 4 - 4);
    /* OpenCSD reads 4 bytes for every instruction: the last 16-bit one is left over */
    assert_int_equal(ek_isa_next_waypoint(b, 2, EK_ISA_T32, 0x2000, &c, NULL, &sc), 0);
    assert_int_equal(sc.offset, 2);
    assert_int_equal(sc.count, 1);
    c.opts |= EK_ISA_OCSD_FETCH4;
    assert_int_equal(ek_isa_next_waypoint(b, 2, EK_ISA_T32, 0x2000, &c, NULL, &sc), 0);
    assert_int_equal(sc.offset, 0);
    assert_int_equal(sc.count, 0);
    assert_int_equal(ek_isa_next_waypoint(b, 4, EK_ISA_T32, 0x2000, &c, NULL, &sc), 0);
    assert_int_equal(sc.offset, 2); /* the mov had 4 bytes to read, the ldr.w has 2 */
    assert_int_equal(sc.count, 1);
    assert_int_equal(ek_isa_next_waypoint(b + 8, 4, EK_ISA_T32, 0x2008, &c, NULL, &sc), 1);
    assert_int_equal(sc.insn.kind, EK_K_T32_BX);
    assert_int_equal(ek_isa_next_waypoint(b + 8, 3, EK_ISA_T32, 0x2008, &c, NULL, &sc), 0);
}

static void test_it_blocks(void **state)
{
    (void)state;
    ek_isa_cfg arm, ocsd;
    ek_isa_cfg_init(&arm, EK_ARCH_V7A, EK_PROFILE_A, 0);
    ek_isa_cfg_ocsd(&ocsd, 0x0700, 0, 0);
    /* ITTET GT (firstcond 1100, mask 0101): GT GT LE GT, then outside the block */
    static const uint8_t want_cc[] = {12, 12, 13, 12};
    for (int mode = 0; mode < 2; mode++) {
        const ek_isa_cfg *c = mode ? &ocsd : &arm;
        ek_it_state it = {0, 0};
        ek_insn in;
        ek_isa_classify(0xbfc5, EK_ISA_T32, 0, c, &in);
        assert_int_equal(in.kind, EK_K_T32_IT);
        assert_int_equal(in.it_mask, 0xc5);
        assert_false(in.flags & EK_IF_COND);
        ek_isa_it_step(&it, &in, c);
        assert_int_equal(it.left, 4);
        for (int i = 0; i < 4; i++) {
            ek_isa_classify(0x4608, EK_ISA_T32, 2 + 2 * (unsigned)i, c, &in);
            ek_isa_it_step(&it, &in, c);
            assert_true(in.flags & EK_IF_COND);
            assert_int_equal(in.cond, want_cc[i]);
        }
        assert_int_equal(it.left, 0);
        ek_isa_classify(0x4608, EK_ISA_T32, 10, c, &in);
        ek_isa_it_step(&it, &in, c);
        assert_false(in.flags & EK_IF_COND);
        /* an IT inside a block does not restart it (UNPREDICTABLE; OpenCSD ignores it) */
        ek_isa_classify(0xbf18, EK_ISA_T32, 12, c, &in); /* IT NE */
        ek_isa_it_step(&it, &in, c);
        ek_isa_classify(0xbf08, EK_ISA_T32, 14, c, &in); /* IT EQ as the conditioned insn */
        ek_isa_it_step(&it, &in, c);
        assert_true(in.flags & EK_IF_COND);
        assert_int_equal(in.cond, 1);
        assert_int_equal(it.left, 0);
        /* IT AL: unconditional for the Arm ARM, conditional for OpenCSD */
        ek_isa_classify(0xbfe8, EK_ISA_T32, 16, c, &in);
        ek_isa_it_step(&it, &in, c);
        ek_isa_classify(0x4770, EK_ISA_T32, 18, c, &in); /* bx lr */
        ek_isa_it_step(&it, &in, c);
        assert_int_equal(!!(in.flags & EK_IF_COND), mode);
        assert_int_equal(in.subtype, EK_ISUB_V7_IMPLIED_RET);
    }
}

static void test_gating_alt(void **state)
{
    (void)state;
    /* BXNS without the security extension is a BX whose SBZ bit is set */
    ek_isa_cfg c;
    ek_insn in;
    ek_isa_cfg_init(&c, EK_ARCH_V7M, EK_PROFILE_M, 0);
    ek_isa_classify(0x4774, EK_ISA_T32, 0, &c, &in);
    assert_int_equal(in.kind, EK_K_T32_BX);
    ek_isa_cfg_init(&c, EK_ARCH_V8M, EK_PROFILE_M, 0);
    ek_isa_classify(0x4774, EK_ISA_T32, 0, &c, &in);
    assert_int_equal(in.kind, EK_K_T32_BXNS);
    assert_int_equal(in.subtype, EK_ISUB_V7_IMPLIED_RET);
    /* TSTART without FEAT_TME is a system register read */
    ek_isa_cfg_init(&c, EK_ARCH_V8A, EK_PROFILE_A, 0);
    ek_isa_classify(0xd5233061, EK_ISA_A64, 0, &c, &in);
    assert_int_equal(in.kind, EK_K_NONE);
    assert_false(in.flags & EK_IF_UNDEF);
    /* custom feature sets: only CMPBR on top of v8.0 */
    c.features |= EK_ISA_FEAT_CMPBR;
    ek_isa_classify(0x74052005, EK_ISA_A64, 0x1000, &c, &in);
    assert_int_equal(in.kind, EK_K_A64_CB_REG);
    assert_int_equal(in.target, 0x1000 - 0x400);
    ek_isa_classify(0xd65f0bff, EK_ISA_A64, 0, &c, &in); /* retaa */
    assert_int_equal(in.kind, EK_K_UNDEF);
}

static void test_wrap(void **state)
{
    (void)state;
    ek_isa_cfg c;
    ek_insn in;
    ek_isa_cfg_init(&c, EK_ARCH_V8A, EK_PROFILE_A, 0);
    /* A64 targets wrap at 64 bits, A32/T32 at 32 bits */
    ek_isa_classify(0x17ffffff, EK_ISA_A64, 0, &c, &in); /* b -4 */
    assert_int_equal(in.target, 0xfffffffffffffffcull);
    ek_isa_classify(0x14000001, EK_ISA_A64, 0xfffffffffffffffcull, &c, &in);
    assert_int_equal(in.target, 0);
    ek_isa_classify(0xeafffffd, EK_ISA_A32, 0, &c, &in); /* b -4 (PC-relative -12) */
    assert_int_equal(in.target, 0xfffffffcu);
    ek_isa_classify(0xe7fe, EK_ISA_T32, 0xfffffffeull, &c, &in); /* b . */
    assert_int_equal(in.target, 0xfffffffeu);
    ek_isa_classify(0xe000, EK_ISA_T32, 0xfffffffeull, &c, &in); /* b +4 */
    assert_int_equal(in.target, 2);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_features),  cmocka_unit_test(test_t32_size),
        cmocka_unit_test(test_bad_args),  cmocka_unit_test(test_names),
        cmocka_unit_test(test_scan_a64),  cmocka_unit_test(test_scan_t32),
        cmocka_unit_test(test_it_blocks), cmocka_unit_test(test_gating_alt),
        cmocka_unit_test(test_wrap),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
