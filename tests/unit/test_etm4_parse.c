/* ETMv4 / ETE packet parser on hand-built byte sequences: every packet type, the address
 * compression and history rules, synchronisation and damaged input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/etm4.h"
#include "etmkit/etmkit.h"
#include "etmkit/listing.h"
#include "testutil.h"

#define ASYNC_HEX "00 00 00 00 00 00 00 00 00 00 00 80 "

typedef struct cap {
    ek_etm4_packet p;
    uint8_t raw[EK_ETM4_MAX_PKT + 1];
} cap;

typedef struct caps {
    cap v[1024];
    size_t n;
} caps;

/* ---- configurations ------------------------------------------------------------------- */

static ek_etm4_regs base_regs(void)
{
    ek_etm4_regs r;
    memset(&r, 0, sizeof r);
    r.configr = 0xC1; /* CID + VMID tracing */
    r.traceidr = 0x10;
    r.idr[0] = 0x28000EA1; /* CCI, BB, RS, 64-bit TS */
    r.idr[1] = 0x4100F440; /* ETMv4.4 */
    r.idr[2] = 0x00000488; /* 64-bit IA, 32-bit CID, 8-bit VMID */
    r.idr[8] = 0;
    r.present = (1u << 0) | (1u << 1) | (1u << 2) | (1u << 8) | EK_ETM4_HAVE_CONFIGR |
                EK_ETM4_HAVE_TRACEIDR;
    return r;
}

static ek_etm4_config etm4_cfg(void)
{
    ek_etm4_config c;
    ek_etm4_regs r = base_regs();
    assert_int_equal(ek_etm4_config_init(&c, &r, EK_PROTO_ETMV4, EK_ARCH_V8A, EK_PROFILE_A), 0);
    return c;
}

static ek_etm4_config ete_cfg(void)
{
    ek_etm4_config c;
    ek_etm4_regs r = base_regs();
    r.idr[0] = 0x28C1CEA1; /* + Q support */
    r.idr[1] = 0x4100FFF0;
    r.idr[2] = 0xD0001088;  /* 32-bit VMID */
    r.devarch = 0x47735A13; /* ETE 1.3: ITE */
    r.present |= EK_ETM4_HAVE_DEVARCH;
    assert_int_equal(ek_etm4_config_init(&c, &r, EK_PROTO_ETE, EK_ARCH_V9A, EK_PROFILE_A), 0);
    return c;
}

/* ---- parsing helpers ------------------------------------------------------------------ */

static void collect(ek_etm4_parser *p, caps *out)
{
    const ek_etm4_packet *k;
    while (ek_etm4_next(p, &k) > 0) {
        assert_true(out->n < sizeof out->v / sizeof out->v[0]);
        cap *c = &out->v[out->n++];
        c->p = *k;
        assert_true(k->size <= EK_ETM4_MAX_PKT);
        memcpy(c->raw, k->raw, k->size);
        c->p.raw = c->raw;
    }
}

/* Parse 'len' bytes delivered in blocks of 'blk' bytes, then end of trace. */
static void parse_bytes(const ek_etm4_config *cfg, const uint8_t *b, size_t len, size_t blk,
                        caps *out)
{
    ek_etm4_parser *p = malloc(sizeof *p);
    assert_non_null(p);
    ek_etm4_parser_init(p, cfg);
    out->n = 0;
    for (size_t pos = 0; pos < len; pos += blk) {
        const size_t n = len - pos < blk ? len - pos : blk;
        ek_etm4_feed(p, b + pos, n, pos);
        collect(p, out);
    }
    ek_etm4_eot(p);
    collect(p, out);
    free(p);
}

static caps *parse_hex(const ek_etm4_config *cfg, const char *hex)
{
    static caps c;
    uint8_t buf[4096];
    const size_t n = tu_hex(hex, buf, sizeof buf);
    parse_bytes(cfg, buf, n, n ? n : 1, &c);
    return &c;
}

static const char *desc(const ek_etm4_config *cfg, const ek_etm4_packet *k)
{
    static ek_sbuf s = EK_SBUF_INIT;
    ek_sbuf_reset(&s);
    ek_list_etm4_ocsd_desc(&s, k, cfg);
    return s.p ? s.p : "";
}

/* The packets after ASYNC + TRACE_INFO: caps index of the first one. */
#define SYNC_HEX ASYNC_HEX "01 01 00 "
#define FIRST    2

static void expect(const caps *c, size_t i, unsigned type, uint64_t index, unsigned size)
{
    assert_true(i < c->n);
    if (c->v[i].p.type != type)
        fail_msg("packet %zu: type %s, expected %s", i, ek_etm4_type_name(c->v[i].p.type),
                 ek_etm4_type_name(type));
    assert_int_equal(c->v[i].p.index, index);
    assert_int_equal(c->v[i].p.size, size);
}

/* ---- tests ---------------------------------------------------------------------------- */

static void test_sync_sequence(void **state)
{
    ek_etm4_config cfg = etm4_cfg();
    caps *c = parse_hex(&cfg, ASYNC_HEX "01 01 00 04 9d 00 35 09 00 c0 ff ff ff f7");
    assert_int_equal(c->n, 5);
    expect(c, 0, EK_ETM4_ASYNC, 0, 12);
    expect(c, 1, EK_ETM4_TRACE_INFO, 12, 3);
    assert_true(c->v[1].p.flags & EK_ETM4_PF_INIT_TINFO);
    expect(c, 2, EK_ETM4_TRACE_ON, 15, 1);
    expect(c, 3, EK_ETM4_ADDR_L_64IS0, 16, 9);
    assert_int_equal(c->v[3].p.addr.val, 0xFFFFFFC000096A00ull);
    assert_string_equal(desc(&cfg, &c->v[3].p),
                        "I_ADDR_L_64IS0 : Address, Long, 64 bit, IS0.; Addr=0xFFFFFFC000096A00; ");
    expect(c, 4, EK_ETM4_ATOM_F1, 25, 1);
    assert_string_equal(desc(&cfg, &c->v[1].p),
                        "I_TRACE_INFO : Trace Info.; INFO=0x0 { CC.0 }; Decoder Sync point TINFO");
}

static void test_notsync_grouping(void **state)
{
    ek_etm4_config cfg = etm4_cfg();
    /* 10 garbage bytes, then an A-Sync: 8 bytes, then the 2 before the first 0x00 */
    caps *c = parse_hex(&cfg, "11 22 33 44 55 66 77 88 99 aa " ASYNC_HEX "04");
    assert_int_equal(c->n, 4);
    expect(c, 0, EK_ETM4_NOTSYNC, 0, 8);
    assert_false(c->v[0].p.flags & EK_ETM4_PF_NOTSYNC_MORE);
    expect(c, 1, EK_ETM4_NOTSYNC, 8, 2);
    assert_true(c->v[1].p.flags & EK_ETM4_PF_NOTSYNC_MORE);
    assert_memory_equal(c->v[1].raw, "\x99\xaa", 2);
    expect(c, 2, EK_ETM4_ASYNC, 10, 12);
    expect(c, 3, EK_ETM4_TRACE_ON, 22, 1);
    assert_string_equal(desc(&cfg, &c->v[0].p), "I_NOT_SYNC : I Stream not synchronised");

    /* a zero that does not start an A-Sync: the run restarts at it */
    c = parse_hex(&cfg, "11 00 22 33 " ASYNC_HEX);
    expect(c, 0, EK_ETM4_NOTSYNC, 0, 1);
    expect(c, 1, EK_ETM4_NOTSYNC, 1, 3); /* 00 22 33, cut by the A-Sync's first zero */
    expect(c, 2, EK_ETM4_ASYNC, 4, 12);
}

static void test_extra_zeros_before_async(void **state)
{
    ek_etm4_config cfg = etm4_cfg();
    /* 13 zeros + 0x80: one zero is dropped as unsynchronised; OpenCSD keeps the A-Sync's
     * index at the first zero */
    caps *c = parse_hex(&cfg, "00 " ASYNC_HEX "04");
    assert_int_equal(c->n, 3);
    assert_int_equal(c->v[0].p.size, 1);
    expect(c, 1, EK_ETM4_ASYNC, 0, 12);
    expect(c, 2, EK_ETM4_TRACE_ON, 13, 1);
}

static void test_block_independence(void **state)
{
    ek_etm4_config cfg = etm4_cfg();
    uint8_t buf[512];
    const size_t n = tu_hex("11 22 00 33 44 55 66 77 88 99 aa bb " ASYNC_HEX
                            "01 09 01 16 04 9d 00 35 09 00 c0 ff ff ff f7 95 2f 02 85 01 "
                            "81 93 44 33 22 11 9a 75 60 03 00 91 dc 0e 05 03 06 05 "
                            "03 07 05 f5 2e 04 36 90 9b 01 02 03 04 85 01 02 03 04 05 06 07 08 "
                            "31 11 22 33 44 70 76 "
                            /* short addresses, one and two payload bytes, IS0 and IS1 (whole
                             * in a block they take the parser's fast path, split they do not)
                             * and one cut by the end of the trace */
                            "95 85 01 96 2f 96 81 02 95 7f 96 ff 7f 95 80",
                            buf, sizeof buf);
    static caps ref, got;
    parse_bytes(&cfg, buf, n, n, &ref);
    assert_true(ref.n > 20);
    for (size_t blk = 1; blk <= 13; blk++) {
        parse_bytes(&cfg, buf, n, blk, &got);
        assert_int_equal(got.n, ref.n);
        for (size_t i = 0; i < ref.n; i++) {
            assert_int_equal(got.v[i].p.type, ref.v[i].p.type);
            assert_int_equal(got.v[i].p.index, ref.v[i].p.index);
            assert_int_equal(got.v[i].p.size, ref.v[i].p.size);
            assert_memory_equal(got.v[i].raw, ref.v[i].raw, ref.v[i].p.size);
            /* and what the packets say: addresses (the address state) and errors */
            assert_int_equal(got.v[i].p.addr.val, ref.v[i].p.addr.val);
            assert_int_equal(got.v[i].p.addr.is, ref.v[i].p.addr.is);
            assert_int_equal(got.v[i].p.addr.pkt_bits, ref.v[i].p.addr.pkt_bits);
            assert_int_equal(got.v[i].p.addr.valid_bits, ref.v[i].p.addr.valid_bits);
            assert_int_equal(got.v[i].p.flags, ref.v[i].p.flags);
            assert_int_equal(got.v[i].p.err_type, ref.v[i].p.err_type);
        }
    }
}

static void test_timestamp(void **state)
{
    ek_etm4_config cfg = etm4_cfg();
    caps *c = parse_hex(&cfg, SYNC_HEX "02 85 01 02 07 03 08 05 02 c0 a1 c5 97 80 80 00");
    expect(c, FIRST, EK_ETM4_TIMESTAMP, 15, 3);
    assert_int_equal(c->v[FIRST].p.timestamp, 0x85);
    assert_int_equal(c->v[FIRST].p.ts_bits, 64); /* first after TRACE_INFO: the rest is 0 */
    expect(c, FIRST + 1, EK_ETM4_TIMESTAMP, 18, 2);
    assert_int_equal(c->v[FIRST + 1].p.timestamp, 0x87);
    assert_int_equal(c->v[FIRST + 1].p.ts_bits, 7);
    expect(c, FIRST + 2, EK_ETM4_TIMESTAMP, 20, 3);
    assert_int_equal(c->v[FIRST + 2].p.timestamp, 0x88);
    assert_true(c->v[FIRST + 2].p.flags & EK_ETM4_PF_CC);
    assert_int_equal(c->v[FIRST + 2].p.cycle_count, 5);
    assert_string_equal(desc(&cfg, &c->v[FIRST + 2].p),
                        "I_TIMESTAMP : Timestamp.; Updated val = 0x88; CC=0x5");
    expect(c, FIRST + 3, EK_ETM4_TIMESTAMP, 23, 8);
    assert_string_equal(desc(&cfg, &c->v[FIRST + 3].p),
                        "I_TIMESTAMP : Timestamp.; Updated val = 0x2f150c0");

    /* a 64-bit timestamp: 8 bytes of 7 bits, the 9th of 8 bits */
    c = parse_hex(&cfg, SYNC_HEX "02 ff ff ff ff ff ff ff ff ff");
    expect(c, FIRST, EK_ETM4_TIMESTAMP, 15, 10);
    assert_int_equal(c->v[FIRST].p.timestamp, ~0ull);
}

static void test_trace_info_sections(void **state)
{
    ek_etm4_config cfg = etm4_cfg();
    /* INFO (cc on), KEY, SPEC, CYCT sections */
    caps *c = parse_hex(&cfg, ASYNC_HEX "01 0f 01 85 01 03 96 01");
    expect(c, 1, EK_ETM4_TRACE_INFO, 12, 8);
    const ek_etm4_packet *k = &c->v[1].p;
    assert_int_equal(k->tinfo.sections, 0x0f);
    assert_int_equal(k->tinfo.info, 1);
    assert_int_equal(k->tinfo.p0_key, 0x85);
    assert_int_equal(k->tinfo.spec, 3);
    assert_int_equal(k->tinfo.cc_threshold, 0x96);
    assert_string_equal(desc(&cfg, k), "I_TRACE_INFO : Trace Info.; INFO=0x1 { CC.1 }; "
                                       "CC_THRESHOLD=0x96; INIT SPEC DEPTH=3; "
                                       "Decoder Sync point TINFO");
    /* the second TRACE_INFO is not a sync point */
    c = parse_hex(&cfg, ASYNC_HEX "01 00 01 00");
    expect(c, 2, EK_ETM4_TRACE_INFO, 14, 2);
    assert_false(c->v[2].p.flags & EK_ETM4_PF_INIT_TINFO);
}

static void test_exceptions(void **state)
{
    ek_etm4_config cfg = etm4_cfg();
    caps *c = parse_hex(&cfg, SYNC_HEX "06 05 06 9c 21 07");
    expect(c, FIRST, EK_ETM4_EXCEPT, 15, 2);
    assert_int_equal(c->v[FIRST].p.exc.type, 2);
    assert_int_equal(c->v[FIRST].p.exc.addr_interp, 1);
    assert_string_equal(desc(&cfg, &c->v[FIRST].p),
                        "I_EXCEPT : Exception.;  Call; Ret Addr Follows;");
    expect(c, FIRST + 1, EK_ETM4_EXCEPT, 17, 3); /* extended: 10-bit type */
    assert_int_equal(c->v[FIRST + 1].p.exc.type, 0x0E | (1 << 5));
    expect(c, FIRST + 2, EK_ETM4_EXCEPT_RTN, 20, 1);

    /* ETE: exception return does not exist; type 0 / 0x18 are PE reset / transaction fail */
    ek_etm4_config ete = ete_cfg();
    c = parse_hex(&ete, SYNC_HEX "07 06 31 70 06 00 00 0a 0b");
    expect(c, FIRST, EK_ETM4_RESERVED_CFG, 15, 1);
    assert_int_equal(c->v[FIRST].p.err_type, EK_ETM4_EXCEPT_RTN);
    assert_string_equal(desc(&ete, &c->v[FIRST].p), "I_RESERVED_CFG : Reserved header for "
                                                    "current configuration.[I_EXCEPT_RTN]");
    expect(c, FIRST + 1, EK_ETM4_TRANS_FAIL, 16, 3);
    expect(c, FIRST + 2, EK_ETM4_PE_RESET, 19, 3);
    assert_int_equal(c->v[FIRST + 2].p.addr.val, 0);
    expect(c, FIRST + 3, EK_ETM4_TRANS_ST, 22, 1);
    expect(c, FIRST + 4, EK_ETM4_TRANS_COMMIT, 23, 1);

    /* M profile: exception names from the M list */
    ek_etm4_regs r = base_regs();
    ek_etm4_config m;
    ek_etm4_config_init(&m, &r, EK_PROTO_ETMV4M, EK_ARCH_V8M, EK_PROFILE_M);
    c = parse_hex(&m, SYNC_HEX "06 16 05");
    expect(c, FIRST, EK_ETM4_EXCEPT, 15, 2);
    assert_string_equal(desc(&m, &c->v[FIRST].p), "I_EXCEPT : Exception.;  SVC;");
    expect(c, FIRST + 1, EK_ETM4_FUNC_RET, 17, 1);
    /* ... and FUNC_RET is reserved on an A-profile core */
    c = parse_hex(&cfg, SYNC_HEX "05");
    expect(c, FIRST, EK_ETM4_RESERVED, 15, 1);
}

static void test_cycle_counts(void **state)
{
    ek_etm4_regs r = base_regs();
    r.idr[0] &= ~0x20000000u; /* COMMOPT = 0: commit fields present */
    r.idr[8] = 120;           /* MAXSPEC */
    ek_etm4_config cfg;
    ek_etm4_config_init(&cfg, &r, EK_PROTO_ETMV4, EK_ARCH_V8A, EK_PROFILE_A);
    /* TRACE_INFO with CC enabled and threshold 0x16 */
    caps *c = parse_hex(&cfg, ASYNC_HEX "01 09 01 16 13 0c 87 0d 87 0e 05 03 0f 05");
    expect(c, 2, EK_ETM4_CCNT_F3, 16, 1);
    assert_int_equal(c->v[2].p.cycle_count, 0x19);
    assert_int_equal(c->v[2].p.commit, 1);
    expect(c, 3, EK_ETM4_CCNT_F2, 17, 2);
    assert_string_equal(desc(&cfg, &c->v[3].p),
                        "I_CCNT_F2 : Cycle Count format 2.; Count=0x1d; Commit(9)");
    expect(c, 4, EK_ETM4_CCNT_F2, 19, 2); /* A bit set: commit biased by MAXSPEC - 15 */
    assert_int_equal(c->v[4].p.commit, 8 + 105);
    expect(c, 5, EK_ETM4_CCNT_F1, 21, 3);
    assert_int_equal(c->v[5].p.commit, 5);
    assert_int_equal(c->v[5].p.cycle_count, 3 + 0x16);
    expect(c, 6, EK_ETM4_CCNT_F1, 24, 2); /* no count */
    assert_int_equal(c->v[6].p.cycle_count, 0);

    /* COMMOPT == 1: no commit fields */
    r.idr[0] |= 0x20000000;
    ek_etm4_config_init(&cfg, &r, EK_PROTO_ETMV4, EK_ARCH_V8A, EK_PROFILE_A);
    c = parse_hex(&cfg, ASYNC_HEX "01 09 01 16 0f 0d f6 0e 03");
    expect(c, 2, EK_ETM4_CCNT_F1, 16, 1);
    assert_string_equal(desc(&cfg, &c->v[2].p), "I_CCNT_F1 : Cycle Count format 1.; Count=0x0");
    expect(c, 3, EK_ETM4_CCNT_F2, 17, 2);
    assert_false(c->v[3].p.flags & EK_ETM4_PF_COMMIT);
    assert_int_equal(c->v[3].p.cycle_count, 0x1c);
    expect(c, 4, EK_ETM4_CCNT_F1, 19, 2);
    assert_int_equal(c->v[4].p.cycle_count, 0x19);
}

static void test_speculation(void **state)
{
    ek_etm4_config cfg = etm4_cfg();
    caps *c = parse_hex(&cfg, SYNC_HEX "2d 85 01 2e 04 2f 02 30 31 36 3b 38");
    expect(c, FIRST, EK_ETM4_COMMIT, 15, 3);
    assert_int_equal(c->v[FIRST].p.commit, 0x85);
    expect(c, FIRST + 1, EK_ETM4_CANCEL_F1, 18, 2);
    assert_string_equal(desc(&cfg, &c->v[FIRST + 1].p),
                        "I_CANCEL_F1 : Cancel Format 1.; Cancel(4)");
    expect(c, FIRST + 2, EK_ETM4_CANCEL_F1_MISPRED, 20, 2);
    assert_string_equal(
        desc(&cfg, &c->v[FIRST + 2].p),
        "I_CANCEL_F1_MISPRED : Cancel Format 1 + Mispredict.; Cancel(2), Mispredict");
    expect(c, FIRST + 3, EK_ETM4_MISPREDICT, 22, 1);
    assert_string_equal(desc(&cfg, &c->v[FIRST + 3].p), "I_MISPREDICT : Mispredict.; Mispredict");
    expect(c, FIRST + 4, EK_ETM4_MISPREDICT, 23, 1);
    assert_string_equal(desc(&cfg, &c->v[FIRST + 4].p),
                        "I_MISPREDICT : Mispredict.; Atom: E, Mispredict");
    expect(c, FIRST + 5, EK_ETM4_CANCEL_F2, 24, 1);
    assert_string_equal(desc(&cfg, &c->v[FIRST + 5].p),
                        "I_CANCEL_F2 : Cancel Format 2.; Atom: EE, Cancel(1), Mispredict");
    expect(c, FIRST + 6, EK_ETM4_CANCEL_F3, 25, 1);
    assert_int_equal(c->v[FIRST + 6].p.cancel, 3);
    assert_string_equal(desc(&cfg, &c->v[FIRST + 6].p),
                        "I_CANCEL_F3 : Cancel Format 3.; Atom: E, Cancel(3), Mispredict");
    expect(c, FIRST + 7, EK_ETM4_CANCEL_F3, 26, 1);
    assert_int_equal(c->v[FIRST + 7].p.atom_num, 0);
}

static void test_atoms(void **state)
{
    ek_etm4_config cfg = etm4_cfg();
    static const struct {
        const char *hex;
        unsigned type;
        const char *seq;
    } t[] = {
        {"f6", EK_ETM4_ATOM_F1, "N"},        {"f7", EK_ETM4_ATOM_F1, "E"},
        {"da", EK_ETM4_ATOM_F2, "NE"},       {"db", EK_ETM4_ATOM_F2, "EE"},
        {"f9", EK_ETM4_ATOM_F3, "ENN"},      {"fe", EK_ETM4_ATOM_F3, "NEE"},
        {"dc", EK_ETM4_ATOM_F4, "NEEE"},     {"dd", EK_ETM4_ATOM_F4, "NNNN"},
        {"de", EK_ETM4_ATOM_F4, "NENE"},     {"df", EK_ETM4_ATOM_F4, "ENEN"},
        {"d5", EK_ETM4_ATOM_F5, "NNNNN"},    {"d6", EK_ETM4_ATOM_F5, "NENEN"},
        {"d7", EK_ETM4_ATOM_F5, "ENENE"},    {"f5", EK_ETM4_ATOM_F5, "NEEEE"},
        {"c0", EK_ETM4_ATOM_F6, "EEEE"},     {"e0", EK_ETM4_ATOM_F6, "EEEN"},
        {"e4", EK_ETM4_ATOM_F6, "EEEEEEEN"}, {"d4", EK_ETM4_ATOM_F6, "EEEEEEEEEEEEEEEEEEEEEEEE"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char hex[256];
        snprintf(hex, sizeof hex, "%s%s", SYNC_HEX, t[i].hex);
        caps *c = parse_hex(&cfg, hex);
        expect(c, FIRST, t[i].type, 15, 1);
        char want[128];
        snprintf(want, sizeof want, "%s : Atom format %c.; %s", ek_etm4_type_name(t[i].type),
                 ek_etm4_type_name(t[i].type)[8], t[i].seq);
        assert_string_equal(desc(&cfg, &c->v[FIRST].p), want);
    }
    /* every other atom header, from the spec's encodings: F1 1111011E, F2 110110EE, F3
     * 11111EEE (bit 0 the oldest atom), F6 11x0yyyy / 11x10zzz up to 0xD4 and 0xF4: count =
     * low five bits + 3 E atoms, then one E (bit 5 clear) or N (bit 5 set); F4 and F5 are all
     * in the table above */
    for (unsigned h = 0xC0; h <= 0xFF; h++) {
        unsigned type, n;
        uint32_t bits;
        if (h >= 0xF8) {
            type = EK_ETM4_ATOM_F3, n = 3, bits = h & 7;
        } else if (h >= 0xF6) {
            type = EK_ETM4_ATOM_F1, n = 1, bits = h & 1;
        } else if (h >= 0xD8 && h <= 0xDB) {
            type = EK_ETM4_ATOM_F2, n = 2, bits = h & 3;
        } else if ((h & 0x1F) <= 0x14) {
            type = EK_ETM4_ATOM_F6, n = (h & 0x1F) + 4;
            bits = (((uint32_t)1 << (n - 1)) - 1) | ((h & 0x20) ? 0 : (uint32_t)1 << (n - 1));
        } else {
            continue; /* F4, F5 */
        }
        char hex[256];
        snprintf(hex, sizeof hex, "%s%02x", SYNC_HEX, h);
        caps *c = parse_hex(&cfg, hex);
        expect(c, FIRST, type, 15, 1);
        assert_int_equal(c->v[FIRST].p.atom_num, n);
        assert_int_equal(c->v[FIRST].p.atom_bits, bits);
    }
}

static void test_context(void **state)
{
    ek_etm4_config cfg = etm4_cfg();
    caps *c = parse_hex(&cfg, SYNC_HEX "80 81 93 00 00 00 00 81 d1 22 44 33 22 11 81 00");
    expect(c, FIRST, EK_ETM4_CTXT, 15, 1);
    assert_string_equal(desc(&cfg, &c->v[FIRST].p), "I_CTXT : Context Packet.; Ctxt: Same");
    expect(c, FIRST + 1, EK_ETM4_CTXT, 16, 6);
    assert_string_equal(desc(&cfg, &c->v[FIRST + 1].p),
                        "I_CTXT : Context Packet.; Ctxt: AArch64,EL3, S; CID=0x00000000; ");
    expect(c, FIRST + 2, EK_ETM4_CTXT, 22, 7);
    const ek_etm4_ctx *x = &c->v[FIRST + 2].p.ctx;
    assert_int_equal(x->el, 1);
    assert_int_equal(x->vmid, 0x22);
    assert_int_equal(x->cid, 0x11223344);
    assert_string_equal(desc(&cfg, &c->v[FIRST + 2].p), "I_CTXT : Context Packet.; Ctxt: "
                                                        "AArch64,EL1, S; CID=0x11223344; "
                                                        "VMID=0x0022; ");
    expect(c, FIRST + 3, EK_ETM4_CTXT, 29, 2);
    assert_string_equal(desc(&cfg, &c->v[FIRST + 3].p),
                        "I_CTXT : Context Packet.; Ctxt: AArch32, EL0, S; ");

    /* ETE with RME: NSE selects Root / Realm; 32-bit VMID */
    ek_etm4_config ete = ete_cfg();
    c = parse_hex(&ete, SYNC_HEX "81 38 81 59 78 56 34 12");
    assert_string_equal(desc(&ete, &c->v[FIRST].p),
                        "I_CTXT : Context Packet.; Ctxt: AArch64,EL0, Realm; ");
    assert_string_equal(desc(&ete, &c->v[FIRST + 1].p),
                        "I_CTXT : Context Packet.; Ctxt: AArch64,EL1, Root; VMID=0x12345678; ");
}

static void test_addresses(void **state)
{
    ek_etm4_config cfg = etm4_cfg();
    caps *c = parse_hex(&cfg, SYNC_HEX
                        /* 64-bit context, then a long 32-bit address keeps the top bits */
                        "85 00 35 09 00 c0 ff ff ff 31 "
                        "9a 75 60 03 00 "
                        /* short IS0: one byte (9 bits), two bytes (17 bits) */
                        "95 2f 95 af 17 "
                        /* short IS1: 8 and 16 bits */
                        "96 05 96 81 9a "
                        /* long 32 IS1, long 64 IS1 */
                        "9b 01 02 03 04 9e 01 02 03 04 05 06 07 08 "
                        /* exact match: history index 1 and 2 */
                        "91 92");
    expect(c, FIRST, EK_ETM4_ADDR_CTXT_L_64IS0, 15, 10);
    assert_int_equal(c->v[FIRST].p.addr.val, 0xFFFFFFC000096A00ull);
    assert_string_equal(desc(&cfg, &c->v[FIRST].p),
                        "I_ADDR_CTXT_L_64IS0 : Address & Context, Long, 64 bit, IS0.; "
                        "Addr=0xFFFFFFC000096A00; Ctxt: AArch64,EL1, NS; ");
    expect(c, FIRST + 1, EK_ETM4_ADDR_L_32IS0, 25, 5);
    assert_int_equal(c->v[FIRST + 1].p.addr.val, 0xFFFFFFC00003C1D4ull);
    assert_int_equal(c->v[FIRST + 1].p.addr.is_64, 1);
    expect(c, FIRST + 2, EK_ETM4_ADDR_S_IS0, 30, 2);
    assert_int_equal(c->v[FIRST + 2].p.addr.val, 0xFFFFFFC00003C0BCull);
    assert_int_equal(c->v[FIRST + 2].p.addr.pkt_bits, 9);
    assert_string_equal(desc(&cfg, &c->v[FIRST + 2].p), "I_ADDR_S_IS0 : Address, Short, IS0.; "
                                                        "Addr=0xFFFFFFC00003C0BC ~[0xBC]");
    expect(c, FIRST + 3, EK_ETM4_ADDR_S_IS0, 32, 3);
    assert_int_equal(c->v[FIRST + 3].p.addr.val, 0xFFFFFFC000022EBCull);
    assert_int_equal(c->v[FIRST + 3].p.addr.pkt_bits, 17);
    expect(c, FIRST + 4, EK_ETM4_ADDR_S_IS1, 35, 2);
    assert_int_equal(c->v[FIRST + 4].p.addr.val, 0xFFFFFFC000022E0Aull);
    assert_int_equal(c->v[FIRST + 4].p.addr.is, 1);
    expect(c, FIRST + 5, EK_ETM4_ADDR_S_IS1, 37, 3);
    assert_int_equal(c->v[FIRST + 5].p.addr.val, 0xFFFFFFC000029A02ull);
    expect(c, FIRST + 6, EK_ETM4_ADDR_L_32IS1, 40, 5);
    assert_int_equal(c->v[FIRST + 6].p.addr.val, 0xFFFFFFC004030202ull);
    expect(c, FIRST + 7, EK_ETM4_ADDR_L_64IS1, 45, 9);
    assert_int_equal(c->v[FIRST + 7].p.addr.val, 0x0807060504030202ull);
    /* history now: [L64IS1, L32IS1, S_IS1(9A02)] */
    expect(c, FIRST + 8, EK_ETM4_ADDR_MATCH, 54, 1);
    assert_int_equal(c->v[FIRST + 8].p.match_idx, 1);
    assert_int_equal(c->v[FIRST + 8].p.addr.val, 0xFFFFFFC004030202ull);
    /* ... the match is pushed: [L32IS1, L64IS1, L32IS1] */
    expect(c, FIRST + 9, EK_ETM4_ADDR_MATCH, 55, 1);
    assert_int_equal(c->v[FIRST + 9].p.addr.val, 0xFFFFFFC004030202ull);
    assert_string_equal(desc(&cfg, &c->v[FIRST + 9].p), "I_ADDR_MATCH : Exact Address Match., "
                                                        "[2]; Addr=0xFFFFFFC004030202; ");

    /* 32-bit address with an AArch32 context: a 32-bit value */
    c = parse_hex(&cfg, SYNC_HEX "81 00 9a 75 60 03 00");
    expect(c, FIRST + 1, EK_ETM4_ADDR_L_32IS0, 17, 5);
    assert_int_equal(c->v[FIRST + 1].p.addr.val, 0x3C1D4);
    assert_int_equal(c->v[FIRST + 1].p.addr.is_64, 0);

    /* TRACE_INFO resets the history to zero addresses */
    c = parse_hex(&cfg, SYNC_HEX "9a 75 60 03 00 01 01 00 90");
    expect(c, FIRST + 2, EK_ETM4_ADDR_MATCH, 23, 1);
    assert_int_equal(c->v[FIRST + 2].p.addr.val, 0);
}

static void test_q_packets(void **state)
{
    ek_etm4_config ete = ete_cfg();
    caps *c = parse_hex(&ete, SYNC_HEX "9a 34 3f 06 00 aa 34 3f 06 00 03 a0 05 a5 2f 07 "
                                       "a6 81 9a 02 ac 09 af a3");
    expect(c, FIRST + 1, EK_ETM4_Q, 20, 6);
    assert_int_equal(c->v[FIRST + 1].p.q.count, 3);
    assert_string_equal(desc(&ete, &c->v[FIRST + 1].p),
                        "I_Q : Q Packet.; Count(3); Addr=0x0000000000067ED0 ~[0x67ED0]");
    expect(c, FIRST + 2, EK_ETM4_Q, 26, 2); /* count + exact match 0 */
    assert_true(c->v[FIRST + 2].p.q.addr_match);
    assert_int_equal(c->v[FIRST + 2].p.addr.val, 0x67ED0);
    expect(c, FIRST + 3, EK_ETM4_Q, 28, 3); /* short IS0, one byte */
    expect(c, FIRST + 4, EK_ETM4_Q, 31, 4); /* short IS1, two bytes */
    expect(c, FIRST + 5, EK_ETM4_Q, 35, 2); /* count only */
    assert_int_equal(c->v[FIRST + 5].p.q.count, 9);
    expect(c, FIRST + 6, EK_ETM4_Q, 37, 1); /* no count */
    assert_string_equal(desc(&ete, &c->v[FIRST + 6].p), "I_Q : Q Packet.; Count(Unknown)");
    expect(c, FIRST + 7, EK_ETM4_RESERVED, 38, 1); /* reserved Q type */

    /* without Q support every Q header is reserved */
    ek_etm4_config cfg = etm4_cfg();
    c = parse_hex(&cfg, SYNC_HEX "ac 09");
    expect(c, FIRST, EK_ETM4_RESERVED, 15, 1);
}

static void test_ete_packets(void **state)
{
    ek_etm4_config ete = ete_cfg();
    caps *c = parse_hex(&ete, SYNC_HEX "88 09 01 ff ff 0f 00 00 00 00 00 b6 1f 03 01 00 "
                                       "b4 7a b5 7c b1 70 71");
    expect(c, FIRST, EK_ETM4_TS_MARKER, 15, 1);
    expect(c, FIRST + 1, EK_ETM4_ITE, 16, 10);
    assert_string_equal(desc(&ete, &c->v[FIRST + 1].p),
                        "I_ITE : Instrumentation; EL1; Payload=0xfffff");
    expect(c, FIRST + 2, EK_ETM4_SRC_ADDR_L_32IS0, 26, 5);
    assert_string_equal(desc(&ete, &c->v[FIRST + 2].p),
                        "I_SCR_ADDR_L_32IS0 : Source Address, Long, 32 bit, IS0.; "
                        "Addr=0x000000000001067C; ");
    expect(c, FIRST + 3, EK_ETM4_SRC_ADDR_S_IS0, 31, 2);
    assert_int_equal(c->v[FIRST + 3].p.addr.val, 0x107E8);
    expect(c, FIRST + 4, EK_ETM4_SRC_ADDR_S_IS1, 33, 2);
    expect(c, FIRST + 5, EK_ETM4_SRC_ADDR_MATCH, 35, 1);
    expect(c, FIRST + 6, EK_ETM4_IGNORE, 36, 1);
    expect(c, FIRST + 7, EK_ETM4_EVENT, 37, 1);
    assert_int_equal(c->v[FIRST + 7].p.event, 1);
    assert_string_equal(desc(&ete, &c->v[FIRST].p), "I_TS_MARKER : Timestamp Marker");
    assert_string_equal(desc(&ete, &c->v[1].p),
                        "I_TRACE_INFO : Trace Info.; INFO=0x0 { CC.0, TSTATE.0 }; "
                        "Decoder Sync point TINFO");

    /* ETMv4.0 has neither IGNORE nor TS_MARKER nor source addresses */
    ek_etm4_regs r = base_regs();
    r.idr[1] = 0x4100F403;
    ek_etm4_config v40;
    ek_etm4_config_init(&v40, &r, EK_PROTO_ETMV4, EK_ARCH_V8A, EK_PROFILE_A);
    c = parse_hex(&v40, SYNC_HEX "70 88 b6 09 0a");
    for (int i = 0; i < 5; i++)
        expect(c, FIRST + i, EK_ETM4_RESERVED, 15 + i, 1);
}

static void test_conditional_and_data(void **state)
{
    ek_etm4_regs r = base_regs();
    r.configr |= 7u << 8;          /* COND: all */
    r.configr |= 0x6 | (1u << 16); /* LSP0 + data address tracing */
    r.idr[0] |= 0x40 | 0x18;       /* TRCCOND, TRCDATA */
    ek_etm4_config cfg;
    ek_etm4_config_init(&cfg, &r, EK_PROTO_ETMV4, EK_ARCH_V8A, EK_PROFILE_A);
    assert_true(cfg.cond_trace);
    assert_true(cfg.data_trace);
    caps *c = parse_hex(&cfg, SYNC_HEX "6c 85 01 40 41 42 6d 05 43 "
                                       "68 13 24 6e 13 48 4e 52 34 44 20 2c");
    expect(c, FIRST, EK_ETM4_COND_I_F1, 15, 3);
    assert_int_equal(c->v[FIRST].p.cond.key[0], 0x85);
    expect(c, FIRST + 1, EK_ETM4_COND_I_F2, 18, 1);
    expect(c, FIRST + 2, EK_ETM4_COND_I_F2, 19, 1);
    expect(c, FIRST + 3, EK_ETM4_COND_I_F2, 20, 1);
    assert_int_equal(c->v[FIRST + 3].p.cond.num_elem, 2);
    expect(c, FIRST + 4, EK_ETM4_COND_I_F3, 21, 2);
    assert_int_equal(c->v[FIRST + 4].p.cond.num_elem, 3);
    assert_int_equal(c->v[FIRST + 4].p.cond.f3_final, 1);
    expect(c, FIRST + 5, EK_ETM4_COND_FLUSH, 23, 1);
    expect(c, FIRST + 6, EK_ETM4_COND_RES_F1, 24, 3); /* two payloads */
    assert_int_equal(c->v[FIRST + 6].p.cond.nkeys, 2);
    assert_int_equal(c->v[FIRST + 6].p.cond.result[0], 3);
    assert_int_equal(c->v[FIRST + 6].p.cond.key[0], 1);
    assert_int_equal(c->v[FIRST + 6].p.cond.key[1], 2);
    expect(c, FIRST + 7, EK_ETM4_COND_RES_F1, 27, 2); /* one payload */
    expect(c, FIRST + 8, EK_ETM4_COND_RES_F2, 29, 1);
    expect(c, FIRST + 9, EK_ETM4_COND_RES_F2, 30, 1);
    assert_int_equal(c->v[FIRST + 9].p.cond.incr, 2);
    expect(c, FIRST + 10, EK_ETM4_COND_RES_F3, 31, 2);
    assert_int_equal(c->v[FIRST + 10].p.cond.tokens, 0x234);
    expect(c, FIRST + 11, EK_ETM4_COND_RES_F4, 33, 1);
    expect(c, FIRST + 12, EK_ETM4_NUM_DS_MKR, 34, 1);
    expect(c, FIRST + 13, EK_ETM4_UNNUM_DS_MKR, 35, 1);
    assert_int_equal(c->v[FIRST + 13].p.dsm, 4);

    /* not enabled: RESERVED_CFG, one byte each, parsing goes on */
    ek_etm4_config plain = etm4_cfg();
    c = parse_hex(&plain, SYNC_HEX "6c 40 20 f7");
    expect(c, FIRST, EK_ETM4_RESERVED_CFG, 15, 1);
    assert_int_equal(c->v[FIRST].p.err_type, EK_ETM4_COND_I_F1);
    expect(c, FIRST + 1, EK_ETM4_RESERVED_CFG, 16, 1);
    expect(c, FIRST + 2, EK_ETM4_RESERVED_CFG, 17, 1);
    assert_string_equal(
        desc(&plain, &c->v[FIRST + 2].p),
        "I_RESERVED_CFG : Reserved header for current configuration.[I_NUM_DS_MKR]");
    expect(c, FIRST + 3, EK_ETM4_ATOM_F1, 18, 1);
}

static void test_extension_packets(void **state)
{
    ek_etm4_config cfg = etm4_cfg();
    caps *c = parse_hex(&cfg, SYNC_HEX "00 03 00 05 00 07 f7 " ASYNC_HEX);
    expect(c, FIRST, EK_ETM4_DISCARD, 15, 2);
    expect(c, FIRST + 1, EK_ETM4_OVERFLOW, 17, 2);
    expect(c, FIRST + 2, EK_ETM4_BAD_SEQUENCE, 19, 2);
    assert_int_equal(c->v[FIRST + 2].p.err_type, EK_ETM4_EXTENSION);
    expect(c, FIRST + 3, EK_ETM4_ATOM_F1, 21, 1);
    expect(c, FIRST + 4, EK_ETM4_ASYNC, 22, 12);

    /* a periodic A-Sync with one zero too many: BAD_SEQUENCE[I_ASYNC], then it resumes */
    c = parse_hex(&cfg, SYNC_HEX "00 00 00 00 00 00 00 00 00 00 00 00 80 f7");
    expect(c, FIRST, EK_ETM4_BAD_SEQUENCE, 15, 12);
    assert_string_equal(desc(&cfg, &c->v[FIRST].p),
                        "I_BAD_SEQUENCE : Invalid Sequence in packet.[I_ASYNC]");
    expect(c, FIRST + 1, EK_ETM4_CTXT, 27, 1); /* the 0x80 is now a context header */
}

static void test_bad_input(void **state)
{
    ek_etm4_config cfg = etm4_cfg();
    /* reserved headers while synchronised: one-byte RESERVED packets, decoding continues */
    caps *c = parse_hex(&cfg, SYNC_HEX "08 84 f7");
    expect(c, FIRST, EK_ETM4_RESERVED, 15, 1);
    assert_true(c->v[FIRST].p.flags & EK_ETM4_PF_ERROR);
    assert_string_equal(desc(&cfg, &c->v[FIRST].p), "I_RESERVED : Reserved Packet Header");
    expect(c, FIRST + 1, EK_ETM4_RESERVED, 16, 1);
    expect(c, FIRST + 2, EK_ETM4_ATOM_F1, 17, 1);

    /* the trace ends inside a packet */
    c = parse_hex(&cfg, SYNC_HEX "9a 75 60");
    expect(c, FIRST, EK_ETM4_INCOMPLETE_EOT, 15, 3);
    assert_int_equal(c->v[FIRST].p.err_type, EK_ETM4_ADDR_L_32IS0);
    assert_string_equal(desc(&cfg, &c->v[FIRST].p), "I_INCOMPLETE_EOT : Incomplete packet at "
                                                    "end of trace.[I_ADDR_L_32IS0]");

    /* endless continuation bits are cut at EK_ETM4_MAX_PKT bytes */
    uint8_t buf[128];
    size_t n = tu_hex(SYNC_HEX "2d", buf, sizeof buf);
    memset(buf + n, 0xFF, 60);
    n += 60;
    static caps cc;
    parse_bytes(&cfg, buf, n, 7, &cc);
    expect(&cc, FIRST, EK_ETM4_BAD_SEQUENCE, 15, EK_ETM4_MAX_PKT);
    assert_int_equal(cc.v[FIRST].p.err_type, EK_ETM4_COMMIT);

    /* nothing but garbage: NOTSYNC packets only, every byte accounted for */
    c = parse_hex(&cfg, "ff ee dd cc bb aa 99 88 77 66 55 44 33 22 11");
    assert_int_equal(c->n, 2);
    expect(c, 0, EK_ETM4_NOTSYNC, 0, 8);
    expect(c, 1, EK_ETM4_INCOMPLETE_EOT, 8, 7);
    assert_int_equal(c->v[1].p.err_type, EK_ETM4_NOTSYNC);
}

/* Every input byte ends up in exactly one packet, in order, whatever the input and however it
 * is split into blocks; no crash, no hang. */
static void test_random_streams(void **state)
{
    ek_etm4_config cfgs[2] = {etm4_cfg(), ete_cfg()};
    static uint8_t buf[8192], back[8192];
    unsigned seed = 12345;
    for (int round = 0; round < 200; round++) {
        const size_t n = 64 + (size_t)(rand_r(&seed) % 4000);
        size_t pos = 0;
        /* mostly valid-looking trace: A-Syncs, atoms, addresses, noise */
        while (pos < n) {
            const unsigned r = (unsigned)rand_r(&seed) % 10;
            if (r == 0 && pos + 12 <= n) {
                memset(buf + pos, 0, 11);
                buf[pos + 11] = 0x80;
                pos += 12;
            } else {
                buf[pos++] = (uint8_t)rand_r(&seed);
            }
        }
        const ek_etm4_config *cfg = &cfgs[round & 1];
        ek_etm4_parser *p = malloc(sizeof *p);
        ek_etm4_parser_init(p, cfg);
        size_t at = 0, total = 0;
        for (pos = 0; pos < n;) {
            size_t blk = 1 + (size_t)(rand_r(&seed) % 300);
            if (blk > n - pos) blk = n - pos;
            ek_etm4_feed(p, buf + pos, blk, pos);
            const ek_etm4_packet *k;
            while (ek_etm4_next(p, &k) > 0) {
                assert_true(k->size > 0 && k->size <= EK_ETM4_MAX_PKT);
                assert_true(at + k->size <= n);
                memcpy(back + at, k->raw, k->size);
                at += k->size;
                total++;
            }
            pos += blk;
        }
        ek_etm4_eot(p);
        const ek_etm4_packet *k;
        while (ek_etm4_next(p, &k) > 0) {
            assert_true(at + k->size <= n);
            memcpy(back + at, k->raw, k->size);
            at += k->size;
        }
        assert_int_equal(at, n);
        assert_memory_equal(back, buf, n);
        free(p);
    }
}

/* The atoms of a packet listed oldest first, every count from 1 to 24 and many patterns: each
 * character against its bit (the listing writes them four at a time from a table) */
static void test_atom_listing(void **state)
{
    (void)state;
    ek_etm4_config cfg;
    memset(&cfg, 0, sizeof cfg);
    uint32_t x = 0x9e3779b9u;
    for (unsigned n = 1; n <= 24; n++)
        for (int r = 0; r < 64; r++) {
            x = x * 1664525u + 1013904223u;
            ek_etm4_packet k;
            memset(&k, 0, sizeof k);
            k.type = EK_ETM4_ATOM_F6;
            k.atom_num = (uint8_t)n;
            /* (bits above the count set too: they must not show) */
            k.atom_bits = r == 0 ? 0 : r == 1 ? 0xFFFFFFFFu : x;
            char want[128] = "I_ATOM_F6 : Atom format 6.; ";
            size_t at = strlen(want);
            for (unsigned i = 0; i < n; i++)
                want[at++] = ((k.atom_bits >> i) & 1) ? 'E' : 'N';
            want[at] = 0;
            assert_string_equal(desc(&cfg, &k), want);
        }
}

static void test_reset(void **state)
{
    ek_etm4_config cfg = etm4_cfg();
    ek_etm4_parser *p = malloc(sizeof *p);
    ek_etm4_parser_init(p, &cfg);
    uint8_t buf[64];
    size_t n = tu_hex(SYNC_HEX "f7", buf, sizeof buf);
    static caps c;
    c.n = 0;
    ek_etm4_feed(p, buf, n, 0);
    collect(p, &c);
    assert_int_equal(c.n, 3);
    /* after a reset the same bytes must be synchronised again */
    ek_etm4_parser_reset(p);
    const uint8_t atoms[] = {0xf7, 0xf7};
    c.n = 0;
    ek_etm4_feed(p, atoms, sizeof atoms, 100);
    ek_etm4_eot(p);
    collect(p, &c);
    assert_int_equal(c.n, 1);
    expect(&c, 0, EK_ETM4_INCOMPLETE_EOT, 100, 2);
    free(p);
}

static void test_config(void **state)
{
    ek_etm4_config c = etm4_cfg();
    assert_int_equal(c.version, 0x44);
    assert_int_equal(c.trace_id, 0x10);
    assert_int_equal(c.cid_bytes, 4);
    assert_int_equal(c.vmid_bytes, 1);
    assert_int_equal(c.cc_bits, 12);
    assert_int_equal(c.ts_bits, 64);
    assert_true(c.ia_64);
    assert_true(c.has_ignore);
    assert_false(c.has_ts_marker);
    assert_false(c.is_ete);
    ek_etm4_config e = ete_cfg();
    assert_int_equal(e.version, 0x53);
    assert_true(e.is_ete);
    assert_true(e.has_ite);
    assert_true(e.has_ts_marker);
    assert_int_equal(e.vmid_bytes, 4);
    /* missing TRCIDR1: ETMv4.0 */
    ek_etm4_regs r = base_regs();
    r.present &= ~(1u << 1);
    ek_etm4_config d;
    ek_etm4_config_init(&d, &r, EK_PROTO_ETMV4, EK_ARCH_V8A, EK_PROFILE_A);
    assert_int_equal(d.version, 0x40);
    assert_int_equal(ek_etm4_config_init(&d, &r, EK_PROTO_PTM, EK_ARCH_V7A, EK_PROFILE_A),
                     EK_ERR_UNSUPPORTED);
    assert_string_equal(ek_etm4_type_name(EK_ETM4_ATOM_F6), "I_ATOM_F6");
    assert_string_equal(ek_etm4_type_name(999), "I_UNKNOWN");
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_sync_sequence),
        cmocka_unit_test(test_notsync_grouping),
        cmocka_unit_test(test_extra_zeros_before_async),
        cmocka_unit_test(test_block_independence),
        cmocka_unit_test(test_timestamp),
        cmocka_unit_test(test_trace_info_sections),
        cmocka_unit_test(test_exceptions),
        cmocka_unit_test(test_cycle_counts),
        cmocka_unit_test(test_speculation),
        cmocka_unit_test(test_atoms),
        cmocka_unit_test(test_context),
        cmocka_unit_test(test_addresses),
        cmocka_unit_test(test_q_packets),
        cmocka_unit_test(test_ete_packets),
        cmocka_unit_test(test_conditional_and_data),
        cmocka_unit_test(test_extension_packets),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_random_streams),
        cmocka_unit_test(test_reset),
        cmocka_unit_test(test_atom_listing),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
