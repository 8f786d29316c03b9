/* ETMv3 parser and flow decoder on hand-made streams: P-header formats with and without cycle
 * accuracy, branch addresses with exception bytes, I-Sync with cycle count, data trace
 * packets, 64-bit timestamps; the decoder's one-instruction ranges, the range held back and
 * dropped by an exception with the cancel bit, and an unknown address. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "etmkit/etm3.h"
#include "etmkit/sbuf.h"
#include "testutil.h"

/* 0x8000: mov r0,r0; 0x8004: bl 0x8010; 0x8008: mov r0,r0; 0x800c: b 0x8000;
 * 0x8010: mov r0,r0; 0x8014: bx lr */
static const uint32_t prog[] = {0xe1a00000, 0xeb000001, 0xe1a00000, 0xeafffffb,
                                0xe1a00000, 0xe12fff1e, 0,          0};

static int find(void *ctx, uint64_t addr, uint32_t space, uint8_t id, ek_mem_span *out)
{
    (void)ctx;
    (void)space;
    (void)id;
    if (addr < 0x8000 || addr >= 0x8000 + sizeof prog) return 0;
    out->start = 0x8000;
    out->size = sizeof prog;
    out->data = (const uint8_t *)prog;
    return 1;
}

typedef struct etm3_run {
    ek_etm3_packet pk[48];
    size_t n;
    ek_elem el[64];
    size_t nel;
} etm3_run;

static void run(etm3_run *r, uint32_t etmcr, const char *hex, int decode)
{
    uint8_t b[256];
    const size_t len = tu_hex(hex, b, sizeof b);
    ek_etm3_regs regs = {etmcr, 0x410CF250, 0x344008F2, 0x10};
    ek_etm3_config cfg;
    ek_etm3_config_init(&cfg, &regs, EK_ARCH_V7A, EK_PROFILE_A);
    static ek_etm3_parser p;
    ek_etm3_parser_init(&p, &cfg);
    ek_etm3_decoder *d = NULL;
    const ek_flow_mem mem = {find, NULL, NULL};
    if (decode) assert_int_equal(ek_etm3_decoder_new(&cfg, &mem, &d), 0);
    memset(r, 0, sizeof *r);
    ek_etm3_feed(&p, b, len, 0);
    const ek_etm3_packet *k;
    for (int eot = 0; eot < 2; eot++) {
        while (ek_etm3_next(&p, &k) > 0) {
            assert_true(r->n < 48);
            r->pk[r->n++] = *k;
            if (!d) continue;
            ek_etm3_decode(d, k);
            size_t n;
            const ek_elem *e = ek_etm3_decoder_elems(d, &n);
            assert_true(r->nel + n < 64);
            memcpy(&r->el[r->nel], e, n * sizeof *e);
            r->nel += n;
            ek_etm3_decoder_clear(d);
        }
        ek_etm3_eot(&p);
    }
    ek_etm3_decoder_free(d);
}

static void test_etm3_packets(void **state)
{
    (void)state;
    etm3_run r;
    /* A-Sync; I-Sync 0x8000 A32 (trace enable); P-headers: format 1 (EEE N), format 2 (N E);
     * branch to Thumb 0x4; branch with exception (SVC, cancel) in ARM state; 64-bit timestamp;
     * context ID (4 bytes); exception exit; trigger */
    run(&r, 3u << 14,
        "00 00 00 00 00 80  08 00 00 00 00 20 00 80 00 00  cc 8a  85 80 80 80 10"
        "  81 80 80 80 48 34  42 bd 9a 03  6e 44 33 22 11  76  0c",
        0);
    assert_int_equal(r.n, 10);
    assert_int_equal(r.pk[0].type, EK_ETM3_ASYNC);
    assert_int_equal(r.pk[1].type, EK_ETM3_ISYNC);
    assert_int_equal(r.pk[1].ctxt_id, 0);
    assert_int_equal(r.pk[1].cid_updated, 1);
    assert_int_equal(r.pk[1].addr, 0x8000);
    assert_int_equal(r.pk[1].isync_reason, 1);
    assert_int_equal(r.pk[2].type, EK_ETM3_P_HDR);
    assert_int_equal(r.pk[2].atom_num, 4);
    assert_int_equal(r.pk[2].atom_bits, 0x7);
    assert_int_equal(r.pk[3].atom_num, 2);
    assert_int_equal(r.pk[3].atom_bits, 0x2); /* bit 3 set: first N; bit 2 clear: second E */
    assert_int_equal(r.pk[4].type, EK_ETM3_BRANCH_ADDRESS);
    assert_int_equal(r.pk[4].isa, EK_ISET_T32);
    assert_int_equal(r.pk[4].addr, 0x4);
    assert_int_equal(r.pk[5].exc_present, 1);
    assert_int_equal(r.pk[5].exc_num, 10);
    assert_int_equal(r.pk[5].exc_cancel, 1);
    assert_int_equal(r.pk[5].isa, EK_ISET_A32);
    assert_int_equal(r.pk[6].type, EK_ETM3_TIMESTAMP);
    assert_int_equal(r.pk[6].timestamp, 0x3d | 0x1a << 7 | 0x03 << 14);
    assert_int_equal(r.pk[7].type, EK_ETM3_CONTEXT_ID);
    assert_int_equal(r.pk[7].ctxt_id, 0x11223344);
    assert_int_equal(r.pk[8].type, EK_ETM3_EXCEPTION_EXIT);
    assert_int_equal(r.pk[9].type, EK_ETM3_TRIGGER);

    ek_sbuf s = EK_SBUF_INIT;
    ek_list_etm3_ocsd(&s, &r.pk[5], 0x10, 1, NULL);
    assert_string_equal(s.p, "Idx:23; ID:10; [0x81 0x80 0x80 0x80 0x48 0x34 ];\tBRANCH_ADDRESS : "
                             "Branch address.; Addr=0x00000000 ~[0x0]; ISA=ARM(32); S; "
                             "Exception=SVC; ; Cancel prev instr\n");
    ek_sbuf_reset(&s);
    ek_list_etm3_ocsd(&s, &r.pk[6], 0x10, 1, NULL);
    assert_string_equal(s.p, "Idx:29; ID:10; [0x42 0xbd 0x9a 0x03 ];\tTIMESTAMP : Timestamp "
                             "Value.; TS=0xcd3d (52541) \n");
    ek_sbuf_free(&s);
}

static void test_etm3_cycle_accurate(void **state)
{
    (void)state;
    etm3_run r;
    /* I-Sync with cycle count; P-headers format 1 (WE WE), 2 (W E N), 3 (WWW + E), 4 (N) */
    run(&r, 1u << 12, "00 00 00 00 00 80  70 85 01 20 00 80 00 00  88 8a e8 96", 0);
    assert_int_equal(r.n, 6);
    assert_int_equal(r.pk[1].type, EK_ETM3_ISYNC_CYCLE);
    assert_int_equal(r.pk[1].isync_has_cc, 1);
    assert_int_equal(r.pk[1].cycle_count, 5 | 1 << 7);
    assert_int_equal(r.pk[1].addr, 0x8000);
    static const char *const want[4] = {"WEWE; Cycles=2", "WNE; Cycles=1", "WWWE; Cycles=3", "N"};
    for (int i = 0; i < 4; i++) {
        ek_sbuf s = EK_SBUF_INIT;
        ek_list_etm3_ocsd(&s, &r.pk[2 + i], 0x10, 0, NULL);
        const char *body = strstr(s.p, "P-header.; ");
        assert_non_null(body);
        assert_memory_equal(body + 11, want[i], strlen(want[i]));
        ek_sbuf_free(&s);
    }
}

static void test_etm3_data_packets(void **state)
{
    (void)state;
    etm3_run r;
    /* data values and addresses traced: normal data with address (0x1234) and a 2-byte value,
     * out-of-order data, value not traced with an address, data suppressed, store failed */
    run(&r, EK_ETMCR_DATA_VALUE | EK_ETMCR_DATA_ADDR,
        "00 00 00 00 00 80  08 20 00 80 00 00  2a b4 24 cd ab  44 99  6a 05  62  50", 0);
    assert_int_equal(r.n, 7);
    assert_int_equal(r.pk[2].type, EK_ETM3_NORM_DATA);
    assert_int_equal(r.pk[2].data_addr, 0x34 | 0x24 << 7);
    assert_int_equal(r.pk[2].data_value, 0xabcd);
    assert_int_equal(r.pk[3].type, EK_ETM3_OOO_DATA);
    assert_int_equal(r.pk[3].data_value, 0x99);
    assert_int_equal(r.pk[3].ooo_tag, 2);
    assert_int_equal(r.pk[4].type, EK_ETM3_VAL_NOT_TRACED);
    assert_int_equal(r.pk[5].type, EK_ETM3_DATA_SUPPRESSED);
    assert_int_equal(r.pk[6].type, EK_ETM3_STORE_FAIL);
    /* without data tracing the same headers are BAD_TRACEMODE */
    run(&r, 0, "00 00 00 00 00 80  08 20 00 80 00 00  62", 0);
    assert_int_equal(r.pk[2].type, EK_ETM3_BAD_TRACEMODE);
    assert_int_equal(r.pk[2].err_type, EK_ETM3_DATA_SUPPRESSED);
}

static ek_elem one(uint64_t idx, uint64_t st, unsigned type, unsigned sub, int exec)
{
    ek_elem e;
    memset(&e, 0, sizeof e);
    e.index = idx;
    e.trace_id = 0x10;
    e.type = EK_ELEM_INSTR_RANGE;
    e.st_addr = st;
    e.en_addr = st + 4;
    e.num_instr = 1;
    e.isa = EK_ISET_A32;
    e.last_i_type = (uint8_t)type;
    e.last_i_sub = (uint8_t)sub;
    e.last_i_size = 4;
    e.flags = exec ? EK_ELEMF_LAST_EXEC : 0;
    return e;
}

static void test_etm3_decode_cancel(void **state)
{
    (void)state;
    etm3_run r;
    /* E E (mov, bl -> 0x8010), then E E (mov, bx lr) where the exception packet cancels the
     * bx lr: its range is dropped and the exception reported; then an unknown address. */
    run(&r, 0,
        "00 00 00 00 00 80  08 20 00 80 00 00  88  88  81 80 80 80 48 34  84  a1 80 80 80 08", 1);
    ek_elem w[10];
    memset(w, 0, sizeof w);
    w[0].type = EK_ELEM_NO_SYNC;
    w[0].u.unsync_reason = EK_UNSYNC_INIT_DECODER;
    w[1].type = EK_ELEM_TRACE_ON;
    w[1].index = 6;
    w[2].type = EK_ELEM_PE_CONTEXT;
    w[2].index = 6;
    w[2].context.el = -1;
    for (int i = 0; i < 3; i++)
        w[i].trace_id = 0x10;
    w[3] = one(12, 0x8000, EK_ITYPE_OTHER, 0, 1);
    w[4] = one(12, 0x8004, EK_ITYPE_BR, EK_ISUB_BR_LINK, 1);
    w[5] = one(13, 0x8010, EK_ITYPE_OTHER, 0, 1); /* 0x8014 (bx lr) cancelled */
    w[6].type = EK_ELEM_EXCEPTION;
    w[6].index = 14;
    w[6].trace_id = 0x10;
    w[6].u.exception_number = 10;
    /* the exception branch went to 0x0, where there is no code */
    w[7].type = EK_ELEM_ADDR_NACC;
    w[7].index = 20;
    w[7].trace_id = 0x10;
    w[7].u.mem_space = EK_MS_S;
    assert_int_equal(r.nel, 8);
    const char *d = tu_elems_diff(r.el, w, 8);
    if (d) fail_msg("%s", d);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_etm3_packets),
        cmocka_unit_test(test_etm3_cycle_accurate),
        cmocka_unit_test(test_etm3_data_packets),
        cmocka_unit_test(test_etm3_decode_cancel),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
