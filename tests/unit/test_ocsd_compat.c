/* OpenCSD 1.8.0 compatibility options of the ETMv3, STM and ITM modules and the deformatter:
 * each test runs the same crafted bytes with the option off (the architecture: IHI 0014, the
 * STM and ITM specifications, the CoreSight formatter) and on (what OpenCSD 1.8.0 does, as its
 * trc_pkt_lister printed for the same bytes: tests/golden/ocsd-compat/), and checks both.
 * docs/PROTOCOLS.md has the source lines of OpenCSD each option reproduces. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "etmkit/etm3.h"
#include "etmkit/etmkit.h"
#include "etmkit/frame.h"
#include "etmkit/itm.h"
#include "etmkit/sbuf.h"
#include "etmkit/stm.h"
#include "testutil.h"

/* Code at 0x8000 (A32) and 0x8100 (T32):
 *   8000: fa00003e  blx 0x8100          8100: 2001       movs r0, #1
 *   8004: e320f000  nop                 8102: 3001       adds r0, #1
 *   8008: e1a00000  mov r0, r0          8104: f7ff ef80  blx 0x8008
 *   800c: eafffffe  b .                 8108: 4770       bx lr */
static uint8_t code[0x200];

static void put32(uint32_t a, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        code[a - 0x8000 + i] = (uint8_t)(v >> (8 * i));
}

static void put16(uint32_t a, uint16_t v)
{
    code[a - 0x8000] = (uint8_t)v;
    code[a - 0x8000 + 1] = (uint8_t)(v >> 8);
}

static int setup(void **state)
{
    (void)state;
    memset(code, 0, sizeof code);
    put32(0x8000, 0xFA00003E);
    put32(0x8004, 0xE320F000);
    put32(0x8008, 0xE1A00000);
    put32(0x800C, 0xEAFFFFFE);
    put16(0x8100, 0x2001);
    put16(0x8102, 0x3001);
    put16(0x8104, 0xF7FF);
    put16(0x8106, 0xEF80);
    put16(0x8108, 0x4770);
    return 0;
}

static int find(void *ctx, uint64_t addr, uint32_t space, uint8_t id, ek_mem_span *out)
{
    (void)ctx;
    (void)space;
    (void)id;
    if (addr < 0x8000 || addr >= 0x8000 + sizeof code) return 0;
    out->start = 0x8000;
    out->size = sizeof code;
    out->data = code;
    return 1;
}

typedef struct run3 {
    ek_etm3_packet pk[32];
    size_t n;
    ek_elem el[48];
    size_t nel;
    int status;        /* first negative ek_etm3_decode() result, or 0 */
    size_t status_pkt; /* the packet it came at */
    unsigned fatal;
    uint64_t fatal_index;
} run3;

/* Parse (and decode) hex with ETMCR etmcr, ETMCCER ccer and the compat options; decoding stops
 * at the first negative status, as the ocsd listing does. */
static void run_etm3(run3 *r, uint32_t etmcr, uint32_t ccer, uint32_t compat, const char *hex)
{
    uint8_t b[128];
    const size_t len = tu_hex(hex, b, sizeof b);
    ek_etm3_regs regs = {etmcr, 0x410CF250, ccer, 0x10};
    ek_etm3_config cfg;
    ek_etm3_config_init(&cfg, &regs, EK_ARCH_V7A, EK_PROFILE_A);
    cfg.compat = compat;
    static ek_etm3_parser p;
    ek_etm3_parser_init(&p, &cfg);
    ek_etm3_decoder *d = NULL;
    const ek_flow_mem mem = {find, NULL, NULL};
    assert_int_equal(ek_etm3_decoder_new(&cfg, &mem, &d), 0);
    memset(r, 0, sizeof *r);
    ek_etm3_feed(&p, b, len, 0);
    const ek_etm3_packet *k;
    for (int eot = 0; eot < 2 && !r->status; eot++) {
        while (!r->status && ek_etm3_next(&p, &k) > 0) {
            assert_true(r->n < 32);
            r->pk[r->n++] = *k;
            const int st = ek_etm3_decode(d, k);
            if (st < 0) {
                r->status = st;
                r->status_pkt = r->n - 1;
                r->fatal = ek_etm3_decoder_fatal(d, &r->fatal_index);
            }
            size_t n;
            const ek_elem *e = ek_etm3_decoder_elems(d, &n);
            assert_true(r->nel + n < 48);
            memcpy(&r->el[r->nel], e, n * sizeof *e);
            r->nel += n;
            ek_etm3_decoder_clear(d);
        }
        if (!r->status) ek_etm3_eot(&p);
    }
    if (!r->status) {
        ek_etm3_decode_eot(d);
        size_t n;
        const ek_elem *e = ek_etm3_decoder_elems(d, &n);
        memcpy(&r->el[r->nel], e, n * sizeof *e);
        r->nel += n;
    }
    ek_etm3_decoder_free(d);
}

static size_t count_type(const run3 *r, unsigned type)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nel; i++)
        n += r->el[i].type == type;
    return n;
}

static const ek_elem *nth_range(const run3 *r, size_t i)
{
    for (size_t k = 0; k < r->nel; k++)
        if (r->el[k].type == EK_ELEM_INSTR_RANGE && i-- == 0) return &r->el[k];
    fail_msg("fewer instruction ranges than expected");
    return NULL;
}

#define ASYNC_ISYNC_8004 "00 00 00 00 00 80  08 28 04 80 00 00 "
#define ETMCR_TS         0x10000000u
#define CCER_TS64        0x344008F2u /* bit 29: 64-bit timestamps */
#define CCER_TS48        0x144008F2u

/* IHI 0014: a 64-bit timestamp ends at its ninth payload byte, which has no continuation bit.
 * OpenCSD ends it only at a byte with bit 7 clear, so a ninth byte >= 0x80 swallows the P-header
 * and the trigger after it (trc_pkt_lister: "[0x42 0x85 ... 0x81 0x84 0x0c ]; TIMESTAMP"). */
static void test_etm3_ts64_ninth_byte(void **state)
{
    (void)state;
    const char *t = ASYNC_ISYNC_8004 "42 85 80 80 80 80 80 80 80 81  84  0c";
    run3 r;
    run_etm3(&r, ETMCR_TS, CCER_TS64, 0, t);
    assert_int_equal(r.n, 5);
    assert_int_equal(r.pk[2].type, EK_ETM3_TIMESTAMP);
    assert_int_equal(r.pk[2].size, 10);
    assert_true(r.pk[2].timestamp == 0x8100000000000005ull);
    assert_int_equal(r.pk[3].type, EK_ETM3_P_HDR);
    assert_int_equal(r.pk[4].type, EK_ETM3_TRIGGER);
    assert_int_equal(count_type(&r, EK_ELEM_INSTR_RANGE), 1);

    run_etm3(&r, ETMCR_TS, CCER_TS64, EK_ETM3_OCSD_TS_CONT, t);
    assert_int_equal(r.n, 3);
    assert_int_equal(r.pk[2].type, EK_ETM3_TIMESTAMP);
    assert_int_equal(r.pk[2].size, 12);
    assert_int_equal(r.pk[2].raw[10], 0x84);
    assert_int_equal(r.pk[2].raw[11], 0x0c);
    assert_true(r.pk[2].timestamp == 0x8100000000000005ull); /* from the first nine bytes */
    assert_int_equal(count_type(&r, EK_ELEM_INSTR_RANGE), 0);
}

/* 48-bit timestamps end at the seventh payload byte (6 bits); one with bit 7 set is damage that
 * OpenCSD reads on through. Its run is bounded here by EK_ETM3_MAX_PKT. */
static void test_etm3_ts48_seventh_byte(void **state)
{
    (void)state;
    run3 r;
    run_etm3(&r, ETMCR_TS, CCER_TS48, 0, ASYNC_ISYNC_8004 "42 81 80 80 80 80 e0 bf  84  0c");
    assert_int_equal(r.n, 5);
    assert_int_equal(r.pk[2].size, 8);
    assert_true(r.pk[2].timestamp == 0xff0000000001ull);
    run_etm3(&r, ETMCR_TS, CCER_TS48, EK_ETM3_OCSD_TS_CONT,
             ASYNC_ISYNC_8004 "42 81 80 80 80 80 e0 bf  84  0c");
    assert_int_equal(r.n, 3);
    assert_int_equal(r.pk[2].size, 10);
    assert_true(r.pk[2].timestamp == 0xff0000000001ull);

    /* 40 bytes with bit 7 set: the packet stops at EK_ETM3_MAX_PKT, the rest are headers */
    char hex[400] = ASYNC_ISYNC_8004 "42";
    for (int i = 0; i < 40; i++)
        strcat(hex, " 81");
    run_etm3(&r, ETMCR_TS, CCER_TS48, EK_ETM3_OCSD_TS_CONT, hex);
    assert_int_equal(r.pk[2].type, EK_ETM3_TIMESTAMP);
    assert_int_equal(r.pk[2].size, EK_ETM3_MAX_PKT);
    assert_int_equal(r.pk[3].type, EK_ETM3_BRANCH_ADDRESS);
}

/* Not a compat option: OpenCSD 1.8.0 reads multi-byte cycle counts whole (its brace was fixed
 * in 2017), as the architecture says; both settings agree. */
static void test_etm3_cycle_count_both(void **state)
{
    (void)state;
    const char *t = ASYNC_ISYNC_8004 "04 85 01  84  04 ff ff ff ff 0f  04 7f";
    for (int c = 0; c < 2; c++) {
        run3 r;
        run_etm3(&r, 0x10001000u, CCER_TS64, c ? EK_ETM3_OCSD_ALL : 0, t);
        assert_int_equal(r.n, 6);
        assert_int_equal(r.pk[2].type, EK_ETM3_CYCLE_COUNT);
        assert_int_equal(r.pk[2].cycle_count, 0x85);
        assert_int_equal(r.pk[4].cycle_count, 0xffffffffu);
        assert_int_equal(r.pk[5].cycle_count, 0x7f);
    }
}

/* A data-suppressed packet while data trace is off: BAD_TRACEMODE; OpenCSD names the previous
 * packet's type in it ("[P_HDR]"), and its decoder stops there for good (fatal: "Data Tracing
 * decode not supported"), dropping the range it held back. The architecture's reading: a
 * packet the configuration does not allow, reported; the decoder resynchronises. */
static void test_etm3_bad_tracemode(void **state)
{
    (void)state;
    const char *t = ASYNC_ISYNC_8004 "84  62  84  00 00 00 00 00 80  08 28 04 80 00 00  84";
    run3 r;
    run_etm3(&r, ETMCR_TS, CCER_TS64, 0, t);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.pk[3].type, EK_ETM3_BAD_TRACEMODE);
    assert_int_equal(r.pk[3].err_type, EK_ETM3_DATA_SUPPRESSED);
    /* data packets do not change the flow: 0x8004, 0x8008, and 0x8004 after the I-Sync */
    assert_int_equal(count_type(&r, EK_ELEM_INSTR_RANGE), 3);
    assert_int_equal(count_type(&r, EK_ELEM_NO_SYNC), 1);
    assert_int_equal(count_type(&r, EK_ELEM_EO_TRACE), 1);

    run_etm3(&r, ETMCR_TS, CCER_TS64, EK_ETM3_OCSD_ALL, t);
    assert_int_equal(r.pk[3].type, EK_ETM3_BAD_TRACEMODE);
    assert_int_equal(r.pk[3].err_type, EK_ETM3_P_HDR);
    assert_int_equal(r.status, EK_ERR_UNSUPPORTED);
    assert_int_equal(r.status_pkt, 3);
    assert_int_equal(r.fatal, EK_ETM3_FATAL_DATA);
    assert_int_equal(r.fatal_index, 13);
    assert_int_equal(count_type(&r, EK_ELEM_INSTR_RANGE), 0); /* the held-back one dropped */
    ek_sbuf s = EK_SBUF_INIT;
    ek_list_etm3_ocsd_fatal(&s, r.fatal, r.fatal_index, 0x10);
    assert_string_equal(s.p, "0x0017 (OCSD_ERR_HW_CFG_UNSUPP) [Programmed trace configuration "
                             "not supported by decodUer.]; TrcIdx=13; CS ID=10; Invalid packet "
                             "type : Data Tracing decode not supported.");
    ek_sbuf_free(&s);
}

/* Reserved header 0x14 and an A-Sync with a sixth zero (BAD_SEQUENCE): OpenCSD's decoder stops
 * every source; etmkit by default reports NO_SYNC (bad-packet) and decodes on after the next
 * A-Sync and I-Sync. */
static void test_etm3_bad_packets(void **state)
{
    (void)state;
    static const struct {
        const char *hex;
        unsigned fatal;
        uint64_t index;
        const char *text;
    } c[] = {
        {ASYNC_ISYNC_8004 "84  14  84  00 00 00 00 00 80  08 28 04 80 00 00  84",
         EK_ETM3_FATAL_RESERVED, 13,
         "0x0013 (OCSD_ERR_BAD_PACKET_SEQ) [Bad packet sequence]; TrcIdx=13; CS ID=10; Reserved "
         "or unknown packet ID."},
        {ASYNC_ISYNC_8004 "84  00 00 00 00 00 00 80  08 28 04 80 00 00  84", EK_ETM3_FATAL_BAD_SEQ,
         13,
         "0x0013 (OCSD_ERR_BAD_PACKET_SEQ) [Bad packet sequence]; TrcIdx=13; CS ID=10; Bad Packet "
         "sequence."},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        run3 r;
        run_etm3(&r, ETMCR_TS, CCER_TS64, 0, c[i].hex);
        assert_int_equal(r.status, 0);
        assert_int_equal(count_type(&r, EK_ELEM_NO_SYNC), 2);
        /* the range before the bad packet ran (no exception cancelled it); then 0x8004 again */
        assert_int_equal(count_type(&r, EK_ELEM_INSTR_RANGE), 2);
        assert_int_equal(nth_range(&r, 0)->st_addr, 0x8004);
        assert_int_equal(nth_range(&r, 1)->st_addr, 0x8004);

        run_etm3(&r, ETMCR_TS, CCER_TS64, EK_ETM3_OCSD_FATAL, c[i].hex);
        assert_int_equal(r.status, EK_ERR_BAD_PACKET);
        assert_int_equal(r.fatal, c[i].fatal);
        assert_int_equal(r.fatal_index, c[i].index);
        assert_int_equal(count_type(&r, EK_ELEM_INSTR_RANGE), 0);
        assert_int_equal(count_type(&r, EK_ELEM_EO_TRACE), 0);
        ek_sbuf s = EK_SBUF_INIT;
        ek_list_etm3_ocsd_fatal(&s, r.fatal, r.fatal_index, 0x10);
        assert_string_equal(s.p, c[i].text);
        ek_sbuf_free(&s);
    }
}

/* Data trace configured (ETMCR DataAccess): OpenCSD 1.8.0 refuses the configuration and its
 * decoder answers the first packet with a fatal "not initialised"; etmkit decodes the
 * instruction trace and reads the data packets past. */
static void test_etm3_data_trace_config(void **state)
{
    (void)state;
    const char *t = ASYNC_ISYNC_8004 "84  06 11  84";
    run3 r;
    run_etm3(&r, ETMCR_TS | 0x4u, CCER_TS64, 0, t);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.pk[3].type, EK_ETM3_NORM_DATA);
    assert_int_equal(r.pk[3].data_value, 0x11);
    assert_int_equal(count_type(&r, EK_ELEM_INSTR_RANGE), 2);

    run_etm3(&r, ETMCR_TS | 0x4u, CCER_TS64, EK_ETM3_OCSD_FATAL, t);
    assert_int_equal(r.status, EK_ERR_UNSUPPORTED);
    assert_int_equal(r.status_pkt, 0);
    assert_int_equal(r.fatal, EK_ETM3_FATAL_NOT_INIT);
    assert_int_equal(r.nel, 0);
    ek_sbuf s = EK_SBUF_INIT;
    ek_list_etm3_ocsd_fatal(&s, r.fatal, r.fatal_index, 0x10);
    assert_string_equal(s.p, "0x0003 (OCSD_ERR_NOT_INIT) [Component not initialised.]; No "
                             "decoder configuration information");
    ek_sbuf_free(&s);
}

/* BLX (immediate) switches the instruction set with no address packet. The atoms of the next
 * P-header run in T32 (the architecture); OpenCSD starts each P-header in the instruction set of
 * the last address packet and walks the Thumb code at 0x8100 as A32 words. Within one P-header
 * both follow the switch (the T32 BLX back to A32 at 0x8104). */
static void test_etm3_blx_isa(void **state)
{
    (void)state;
    const char *t = "00 00 00 00 00 80  08 28 00 80 00 00  84  88  8c";
    run3 r;
    run_etm3(&r, ETMCR_TS, CCER_TS64, 0, t);
    static const struct {
        uint64_t st, en;
        unsigned isa;
    } arch[] = {{0x8000, 0x8004, EK_ISET_A32}, {0x8100, 0x8102, EK_ISET_T32},
                {0x8102, 0x8104, EK_ISET_T32}, {0x8104, 0x8108, EK_ISET_T32},
                {0x8008, 0x800c, EK_ISET_A32}, {0x800c, 0x8010, EK_ISET_A32}},
      ocsd[] = {{0x8000, 0x8004, EK_ISET_A32}, {0x8100, 0x8104, EK_ISET_A32},
                {0x8104, 0x8108, EK_ISET_A32}, {0x8108, 0x810c, EK_ISET_A32},
                {0x810c, 0x8110, EK_ISET_A32}, {0x8110, 0x8114, EK_ISET_A32}};
    assert_int_equal(count_type(&r, EK_ELEM_INSTR_RANGE), 6);
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(nth_range(&r, i)->st_addr, arch[i].st);
        assert_int_equal(nth_range(&r, i)->en_addr, arch[i].en);
        assert_int_equal(nth_range(&r, i)->isa, arch[i].isa);
    }
    run_etm3(&r, ETMCR_TS, CCER_TS64, EK_ETM3_OCSD_PHDR_ISA, t);
    assert_int_equal(count_type(&r, EK_ELEM_INSTR_RANGE), 6);
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(nth_range(&r, i)->st_addr, ocsd[i].st);
        assert_int_equal(nth_range(&r, i)->en_addr, ocsd[i].en);
        assert_int_equal(nth_range(&r, i)->isa, ocsd[i].isa);
    }
}

/* STM: a reserved 2-nibble header (F1) after a D8. */
static void test_stm_reserved(void **state)
{
    (void)state;
    uint8_t b[64];
    const size_t len = tu_hex("ff ff ff ff ff ff ff ff ff ff 0f 0f 30 11 34 02 54 fa 41 b6"
                              " ff ff ff ff ff ff ff ff ff ff 0f 0f 30 74 0c",
                              b, sizeof b);
    for (int compat = 0; compat < 2; compat++) {
        ek_stm_parser p;
        ek_stm_parser_init(&p, 0x20);
        ek_stm_decoder d;
        ek_stm_decoder_init(&d, 0x20);
        d.compat = compat ? EK_STM_OCSD_FATAL : 0;
        ek_stm_feed(&p, b, len, 0);
        const ek_stm_packet *k;
        int st = 0, swt = 0, nosync = 0, reserved = 0;
        ek_elem e[2];
        while (!st && ek_stm_next(&p, &k) > 0) {
            reserved += k->type == EK_STM_RESERVED;
            const int n = ek_stm_decode(&d, k, e);
            if (n < 0) st = n;
            for (int i = 0; i < n; i++) {
                swt += e[i].type == EK_ELEM_SWTRACE;
                nosync += e[i].type == EK_ELEM_NO_SYNC;
            }
        }
        assert_int_equal(reserved, 1);
        if (!compat) {
            assert_int_equal(st, 0);
            assert_int_equal(swt, 2);    /* 0x5a, then 0x7c after the new ASYNC */
            assert_int_equal(nosync, 2); /* init, bad packet */
        } else {
            assert_int_equal(st, EK_ERR_BAD_PACKET);
            assert_int_equal(swt, 1);
            assert_int_equal(nosync, 1);
            assert_int_equal(k->index, 18);
        }
    }
}

/* ITM: a reserved header (0x04) between two stimulus packets. */
static void test_itm_reserved(void **state)
{
    (void)state;
    uint8_t b[32];
    const size_t len =
        tu_hex("00 00 00 00 00 80 01 41 04 01 42 00 00 00 00 00 80 01 43", b, sizeof b);
    for (int compat = 0; compat < 2; compat++) {
        ek_itm_parser p;
        ek_itm_parser_init(&p, 0);
        ek_itm_decoder d;
        ek_itm_decoder_init(&d, 0, 0);
        d.compat = compat ? EK_ITM_OCSD_FATAL : 0;
        ek_itm_feed(&p, b, len, 0);
        const ek_itm_packet *k;
        int st = 0, swit = 0;
        ek_elem e[2];
        while (!st && ek_itm_next(&p, &k) > 0) {
            if (!(k->flags & EK_ITM_PF_DECODE)) continue;
            const int n = ek_itm_decode(&d, k, e);
            if (n < 0) st = n;
            for (int i = 0; i < n; i++)
                swit += e[i].type == EK_ELEM_ITMTRACE;
        }
        assert_int_equal(st, compat ? EK_ERR_BAD_PACKET : 0);
        assert_int_equal(swit, compat ? 1 : 2); /* 0x41 (and 0x43 after the new A-Sync) */
    }
}

/* A frame whose byte 12 changes to ID 0x10 (flag set: byte 13 stays with ID 0x20) and whose
 * byte 14 changes the ID again ends with an empty run for 0x10. The formatter never means
 * anything by it; OpenCSD hands it on as a zero-length block, which stops its decoders (the end
 * of stm_only-juno). */
static void test_dfmt_empty_run(void **state)
{
    (void)state;
    uint8_t f[16];
    tu_hex("21 84 84 84 66 66 66 66 66 66 41 00 21 00 41 40", f, sizeof f);
    for (int compat = 0; compat < 2; compat++) {
        ek_deformatter d;
        ek_dfmt_init(&d, EK_DFMT_MEM_ALIGN | (compat ? EK_DFMT_OCSD_EMPTY : 0));
        ek_dfmt_feed(&d, f, sizeof f, 0);
        ek_dfmt_item it;
        unsigned ids[4], lens[4], n = 0;
        while (ek_dfmt_next(&d, &it) > 0) {
            if (it.kind != EK_DFMT_DATA) continue;
            assert_true(n < 4);
            ids[n] = it.id;
            lens[n++] = it.len;
        }
        assert_int_equal(n, compat ? 3 : 2);
        assert_int_equal(ids[0], 0x10);
        assert_int_equal(lens[0], 9); /* 84 84 84 66 x6 */
        assert_int_equal(ids[1], 0x20);
        assert_int_equal(lens[1], 2); /* byte 11, and byte 13 by the flag */
        if (compat) {
            assert_int_equal(ids[2], 0x10);
            assert_int_equal(lens[2], 0);
        }
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_etm3_ts64_ninth_byte),  cmocka_unit_test(test_etm3_ts48_seventh_byte),
        cmocka_unit_test(test_etm3_cycle_count_both), cmocka_unit_test(test_etm3_bad_tracemode),
        cmocka_unit_test(test_etm3_bad_packets),      cmocka_unit_test(test_etm3_data_trace_config),
        cmocka_unit_test(test_etm3_blx_isa),          cmocka_unit_test(test_stm_reserved),
        cmocka_unit_test(test_itm_reserved),          cmocka_unit_test(test_dfmt_empty_run),
    };
    return tu_run_group(argc, argv, tests, setup, NULL);
}
