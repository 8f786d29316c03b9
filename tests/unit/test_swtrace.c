/* STM and ITM packet parsers and decoders on hand-made byte streams: packet fields, the index
 * and raw-byte rules of OpenCSD's listings, time stamps (natural binary and Gray code, local
 * and global), stimulus port pages, overflow marking, unsynchronised data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "etmkit/itm.h"
#include "etmkit/sbuf.h"
#include "etmkit/stm.h"
#include "testutil.h"

/* ---- STM ------------------------------------------------------------------------------------ */

typedef struct stm_run {
    ek_stm_packet pk[32];
    uint8_t raw[32][EK_STM_MAX_RAW];
    size_t n;
    ek_elem el[64];
    size_t nel;
} stm_run;

/* The first `first` bytes go in one block (the synchronisation search reports what it skipped
 * per block, as OpenCSD's does), the rest in blocks of blk. */
static void stm_parse(stm_run *r, const uint8_t *b, size_t len, size_t first, size_t blk)
{
    static ek_stm_parser p;
    ek_stm_decoder d;
    ek_stm_parser_init(&p, 0x20);
    ek_stm_decoder_init(&d, 0x20);
    memset(r, 0, sizeof *r);
    const ek_stm_packet *k;
    for (size_t pos = 0, step = first;; pos += step, step = blk) {
        if (pos < len)
            ek_stm_feed(&p, b + pos, len - pos < step ? len - pos : step, pos);
        else
            ek_stm_eot(&p);
        while (ek_stm_next(&p, &k) > 0) {
            assert_true(r->n < 32);
            r->pk[r->n] = *k;
            memcpy(r->raw[r->n], k->raw, k->raw_len);
            r->pk[r->n].raw = r->raw[r->n];
            r->n++;
            r->nel += (size_t)ek_stm_decode(&d, k, &r->el[r->nel]);
            assert_true(r->nel < 60);
        }
        if (pos >= len) break;
    }
}

static ek_elem swt(uint64_t index, unsigned bits, uint64_t payload, unsigned flags)
{
    ek_elem e;
    memset(&e, 0, sizeof e);
    e.index = index;
    e.trace_id = 0x20;
    e.type = EK_ELEM_SWTRACE;
    e.u.swt.payload_bits = (uint8_t)bits;
    e.u.swt.payload = payload;
    e.u.swt.flags = (uint8_t)flags;
    e.u.swt.master = 0x41;
    e.u.swt.channel = 5;
    return e;
}

static void test_stm_packets(void **state)
{
    (void)state;
    /* ASYNC (21 x F, 0), VERSION 3, M8 0x41, C8 0x05, D32M 0x12345678, FLAG_TS (2 nibbles) */
    uint8_t b[64];
    size_t n = tu_hex("ff ff ff ff ff ff ff ff ff ff 0f  0f 30  41 31 50  af 21 43 65 87  2e ba", b,
                      sizeof b);
    for (size_t blk = 1; blk <= n; blk = blk * 2 + 1) {
        stm_run r;
        stm_parse(&r, b, n, 11, blk);
        assert_int_equal(r.n, 6);
        assert_int_equal(r.pk[0].type, EK_STM_ASYNC);
        assert_int_equal(r.pk[0].index, 0);
        assert_int_equal(r.pk[0].raw_len, 11);
        assert_int_equal(r.pk[1].type, EK_STM_VERSION);
        assert_int_equal(r.pk[1].index, 11);
        assert_int_equal(r.pk[1].payload, 3);
        assert_int_equal(r.pk[2].type, EK_STM_M8);
        assert_int_equal(r.pk[2].index, 13);
        assert_int_equal(r.pk[2].master, 0x41);
        /* C8's header is the high nibble of byte 14: its index is that of the next byte, and
         * its raw bytes start with that nibble as 0x30 */
        assert_int_equal(r.pk[3].type, EK_STM_C8);
        assert_int_equal(r.pk[3].index, 15);
        assert_int_equal(r.pk[3].channel, 5);
        assert_int_equal(r.pk[3].raw_len, 2);
        assert_int_equal(r.pk[3].raw[0], 0x30);
        assert_int_equal(r.pk[3].raw[1], 0x50);
        assert_int_equal(r.pk[4].type, EK_STM_D32);
        assert_int_equal(r.pk[4].index, 16);
        assert_int_equal(r.pk[4].marker, 1);
        assert_int_equal(r.pk[4].payload, 0x12345678);
        assert_int_equal(r.pk[5].type, EK_STM_FLAG);
        assert_int_equal(r.pk[5].index, 21);
        assert_int_equal(r.pk[5].has_ts, 1);
        assert_int_equal(r.pk[5].ts_bits, 8);
        assert_int_equal(r.pk[5].timestamp, 0xAB);

        ek_elem want[3];
        memset(&want[0], 0, sizeof want[0]);
        want[0].type = EK_ELEM_NO_SYNC;
        want[0].trace_id = 0x20;
        want[0].u.unsync_reason = EK_UNSYNC_INIT_DECODER;
        want[1] = swt(16, 32, 0x12345678, EK_SWT_ID_VALID | EK_SWT_MARKER);
        want[2] = swt(21, 0, 0, EK_SWT_ID_VALID | EK_SWT_MARKER | EK_SWT_HAS_TS);
        want[2].timestamp = 0xAB;
        assert_int_equal(r.nel, 3);
        const char *d = tu_elems_diff(r.el, want, 3);
        if (d) fail_msg("%s", d);
    }
}

static void test_stm_gray_and_eot(void **state)
{
    (void)state;
    /* ASYNC, VERSION 4 (Gray code time stamps), FLAG_TS with 1 nibble (Gray 3 = binary 2),
     * NULL, then a D32 header with 3 of its 8 data nibbles */
    uint8_t b[64];
    size_t n = tu_hex("ff ff ff ff ff ff ff ff ff ff 0f  0f 40  1e 03  36 01", b, sizeof b);
    stm_run r;
    stm_parse(&r, b, n, n, n);
    assert_int_equal(r.n, 5);
    assert_int_equal(r.pk[2].type, EK_STM_FLAG);
    assert_int_equal(r.pk[2].timestamp, 2);
    assert_int_equal(r.pk[3].type, EK_STM_NULL);
    assert_int_equal(r.pk[4].type, EK_STM_INCOMPLETE_EOT);
    assert_int_equal(r.pk[4].err_type, EK_STM_D32);
    ek_sbuf s = EK_SBUF_INIT;
    ek_list_stm_ocsd(&s, &r.pk[4], 0x20, 0, NULL, 0);
    assert_string_equal(s.p, "Idx:15; ID:20;\tINCOMPLETE_EOT:Incomplete packet flushed at end of "
                             "trace[D32]\n");
    ek_sbuf_reset(&s);
    ek_list_stm_ocsd(&s, &r.pk[2], 0x20, 1, NULL, 0);
    assert_string_equal(s.p, "Idx:13; ID:20; [0x1e 0x03 ];\tFLAGTS:Flag packet + timestamp; "
                             "TS=0x0000000000000002 ~[0x2]\n");
    ek_sbuf_free(&s);
}

static void test_stm_unsynced(void **state)
{
    (void)state;
    /* bytes before the ASYNC are one NOTSYNC report per block; as in OpenCSD the ASYNC is
     * reported when more data follows it */
    uint8_t b[64];
    size_t n = tu_hex("12 34 56  ff ff ff ff ff ff ff ff ff ff 0f  0f 30", b, sizeof b);
    stm_run r;
    stm_parse(&r, b, n, n, n);
    assert_int_equal(r.n, 3);
    assert_int_equal(r.pk[0].type, EK_STM_NOTSYNC);
    assert_int_equal(r.pk[0].index, 0);
    assert_int_equal(r.pk[0].raw_len, 3);
    assert_int_equal(r.pk[1].type, EK_STM_ASYNC);
    assert_int_equal(r.pk[1].index, 3);
    assert_int_equal(r.nel, 1); /* NO_SYNC only */
}

/* ---- ITM ------------------------------------------------------------------------------------ */

typedef struct itm_run {
    ek_itm_packet pk[32];
    uint8_t raw[32][EK_ITM_MAX_RAW];
    size_t n;
    ek_elem el[64];
    size_t nel;
} itm_run;

/* flags: EK_ITM_ASSUME_SYNC for parser and decoder, or 0 (ek_itm_parser_init's defaults) */
static void itm_parse_flags(itm_run *r, const uint8_t *b, size_t len, size_t blk, uint32_t tcr,
                            unsigned flags)
{
    static ek_itm_parser p;
    ek_itm_decoder d;
    if (flags) {
        ek_itm_parser_init_flags(&p, 0x14, flags);
        ek_itm_decoder_init_flags(&d, 0x14, tcr, flags);
    } else {
        ek_itm_parser_init(&p, 0x14);
        ek_itm_decoder_init(&d, 0x14, tcr);
    }
    memset(r, 0, sizeof *r);
    const ek_itm_packet *k;
    for (size_t pos = 0;; pos += blk) {
        if (pos < len)
            ek_itm_feed(&p, b + pos, len - pos < blk ? len - pos : blk, pos);
        else
            ek_itm_eot(&p);
        while (ek_itm_next(&p, &k) > 0) {
            if (!(k->flags & (EK_ITM_PF_LIST | EK_ITM_PF_DECODE))) continue; /* empty report */
            assert_true(r->n < 32);
            r->pk[r->n] = *k;
            memcpy(r->raw[r->n], k->raw, k->raw_len);
            r->pk[r->n].raw = r->raw[r->n];
            r->n++;
            if (k->flags & EK_ITM_PF_DECODE) r->nel += (size_t)ek_itm_decode(&d, k, &r->el[r->nel]);
            assert_true(r->nel < 60);
        }
        if (pos >= len) break;
    }
}

static void itm_parse(itm_run *r, const uint8_t *b, size_t len, size_t blk, uint32_t tcr)
{
    itm_parse_flags(r, b, len, blk, tcr, 0);
}

static ek_elem itm_el(uint64_t index, unsigned kind, unsigned port, uint32_t value, unsigned size)
{
    ek_elem e;
    memset(&e, 0, sizeof e);
    e.index = index;
    e.trace_id = 0x14;
    e.type = EK_ELEM_ITMTRACE;
    e.u.itm.kind = (uint8_t)kind;
    e.u.itm.port = (uint16_t)port;
    e.u.itm.value = value;
    e.u.itm.size = (uint8_t)size;
    return e;
}

static void test_itm_packets(void **state)
{
    (void)state;
    uint8_t b[128];
    size_t n = tu_hex("f0  00 00 00 00 00 80  70  19 bb  28  52 45 23  c0 82 c8 04"
                      "  94 82 cf fa 77  b4 93 98 a0 a0 80 00  0e 04 10",
                      b, sizeof b);
    for (size_t blk = 1; blk <= n; blk = blk * 2 + 1) {
        itm_run r;
        itm_parse(&r, b, n, blk, 0x100); /* TSPrescale 1: local time stamps x4 */
        assert_int_equal(r.pk[0].type, EK_ITM_PKT_NOTSYNC);
        assert_int_equal(r.pk[0].raw_len, 1);
        assert_true(r.pk[0].flags & EK_ITM_PF_DECODE);
        size_t i = 1;
        assert_int_equal(r.pk[i].type, EK_ITM_PKT_ASYNC);
        assert_int_equal(r.pk[i].index, 1);
        i++;
        assert_int_equal(r.pk[i++].type, EK_ITM_PKT_OVERFLOW);
        assert_int_equal(r.pk[i].type, EK_ITM_PKT_SWIT);
        assert_int_equal(r.pk[i].src_id, 3);
        assert_int_equal(r.pk[i++].value, 0xbb);
        assert_int_equal(r.pk[i].type, EK_ITM_PKT_EXTENSION);
        assert_int_equal(r.pk[i++].value, 2);
        assert_int_equal(r.pk[i].type, EK_ITM_PKT_SWIT);
        assert_int_equal(r.pk[i].val_sz, 2);
        assert_int_equal(r.pk[i++].value, 0x2345);
        assert_int_equal(r.pk[i].type, EK_ITM_PKT_TS_LOCAL);
        assert_int_equal(r.pk[i++].value, 0x12402);
        /* GTS1 with wrap and clock change: the flags are taken out of the last byte */
        assert_int_equal(r.pk[i].type, EK_ITM_PKT_TS_GLOBAL_1);
        assert_int_equal(r.pk[i].src_id, 3);
        assert_int_equal(r.pk[i].raw[4], 0x17);
        assert_int_equal(r.pk[i++].value, 0x2FEA782);
        assert_int_equal(r.pk[i].type, EK_ITM_PKT_TS_GLOBAL_2);
        assert_int_equal(r.pk[i].val_sz, 5);
        assert_int_equal(r.pk[i++].value, 0x4080C13);
        assert_int_equal(r.pk[i].type, EK_ITM_PKT_DWT);
        assert_int_equal(r.pk[i].src_id, 1);
        assert_int_equal(r.pk[i++].value, 0x1004);
        assert_int_equal(r.n, i);

        ek_elem want[6];
        memset(&want[0], 0, sizeof want[0]);
        want[0].type = EK_ELEM_NO_SYNC;
        want[0].trace_id = 0x14;
        want[0].u.unsync_reason = EK_UNSYNC_INIT_DECODER;
        want[1] = itm_el(8, EK_ITM_SWIT, 3, 0xbb, 1);
        want[1].u.itm.overflow = 1;
        want[2] = itm_el(11, EK_ITM_SWIT, 0x4a, 0x2345, 2); /* page 2: port 2 * 32 + 10 */
        want[3] = itm_el(14, EK_ITM_TS_SYNC, 0, 0x12402, 3);
        want[3].timestamp = 0x12402ull * 4;
        want[4] = itm_el(23, EK_ITM_TS_GLOBAL, 0, 0, 0);
        want[4].timestamp = (0x4080C13ull << 26) | 0x2FEA782;
        want[4].flags = EK_ELEMF_CPU_FREQ_CHANGE;
        want[5] = itm_el(30, EK_ITM_DWT, 1, 0x1004, 2);
        assert_int_equal(r.nel, 6);
        const char *d = tu_elems_diff(r.el, want, 6);
        if (d) fail_msg("blk %zu: %s", blk, d);
    }
}

static void test_itm_listing(void **state)
{
    (void)state;
    uint8_t b[64];
    size_t n = tu_hex("00 00 00 00 00 80  15 00  94 7a  d0 0d  38", b, sizeof b);
    itm_run r;
    itm_parse(&r, b, n, n, 0);
    /* the search reports the (empty) unsynchronised run to the decoder only */
    assert_int_equal(r.n, 6);
    assert_int_equal(r.pk[0].type, EK_ITM_PKT_NOTSYNC);
    assert_int_equal(r.pk[0].raw_len, 0);
    assert_int_equal(r.pk[0].flags, EK_ITM_PF_DECODE);
    static const char *const want[5] = {
        "Idx:0; ID:14; [0x00 0x00 0x00 0x00 0x00 0x80 ];\tITM_ASYNC: ; 'Alignment "
        "synchronisation packet'\n",
        "Idx:6; ID:14; [0x15 0x00 ];\tITM_DWT: {desc: 0x02} [PC Sample: 0x00] ; 'DWT hardware "
        "stimulus write'\n",
        "Idx:8; ID:14; [0x94 0x7a ];\tITM_GTS_1: { TS bits [6:0]} 0x7a; 'Global Timestamp "
        "[25:0]'\n",
        "Idx:10; ID:14; [0xd0 0x0d ];\tITM_TS_LOCAL: 0x0d { TS Delayed }; 'Local Timestamp'\n",
        "Idx:12; ID:14; [0x38 ];\tITM_EXTENSION: {stim port page} 0x03; 'Extension packet'\n",
    };
    ek_sbuf s = EK_SBUF_INIT;
    for (size_t i = 0; i < 5; i++) {
        ek_sbuf_reset(&s);
        ek_list_itm_ocsd(&s, &r.pk[i + 1], 0x14, 1);
        assert_string_equal(s.p, want[i]);
    }
    /* the element text OpenCSD prints for a local time stamp */
    ek_sbuf_reset(&s);
    ek_elem e = itm_el(10, EK_ITM_TS_DELAY, 0, 0xd, 1);
    e.timestamp = 0x11;
    ek_elem_format_ocsd(&s, &e);
    assert_string_equal(s.p, "OCSD_GEN_TRC_ELEM_ITMTRACE(ITM_TS_LOCAL ( TS delta: 0x0000000d, "
                             "{ TS Delay}; TS cumulative: 0x0000000000000011) )");
    ek_sbuf_free(&s);
}

/* ---- ITM without sync packets (EK_ITM_ASSUME_SYNC, issue 33 item 3) ------------------------- */

static ek_elem itm_nosync(uint64_t index, unsigned reason)
{
    ek_elem e;
    memset(&e, 0, sizeof e);
    e.index = index;
    e.trace_id = 0x14;
    e.type = EK_ELEM_NO_SYNC;
    e.u.unsync_reason = (uint8_t)reason;
    return e;
}

/* test_itm_packets' stream without its first byte and its A-Sync: nothing but NOTSYNC without
 * the option (OpenCSD's behaviour, unchanged); with it every packet from byte 0, and the same
 * elements (the SWIT, page, DWT, local and global time stamps), 7 bytes earlier. */
static void test_itm_assume_no_sync(void **state)
{
    (void)state;
    uint8_t b[128];
    size_t n = tu_hex("70  19 bb  28  52 45 23  c0 82 c8 04"
                      "  94 82 cf fa 77  b4 93 98 a0 a0 80 00  0e 04 10",
                      b, sizeof b);
    for (size_t blk = 1; blk <= n; blk = blk * 2 + 1) {
        itm_run r;
        itm_parse_flags(&r, b, n, blk, 0x100, 0);
        for (size_t i = 0; i < r.n; i++)
            assert_int_equal(r.pk[i].type, EK_ITM_PKT_NOTSYNC);
        assert_int_equal(r.nel, 1); /* NO_SYNC only */
        assert_int_equal(r.el[0].type, EK_ELEM_NO_SYNC);

        itm_parse_flags(&r, b, n, blk, 0x100, EK_ITM_ASSUME_SYNC);
        static const uint8_t types[] = {
            EK_ITM_PKT_OVERFLOW, EK_ITM_PKT_SWIT,        EK_ITM_PKT_EXTENSION,   EK_ITM_PKT_SWIT,
            EK_ITM_PKT_TS_LOCAL, EK_ITM_PKT_TS_GLOBAL_1, EK_ITM_PKT_TS_GLOBAL_2, EK_ITM_PKT_DWT};
        static const uint8_t at[] = {0, 1, 3, 4, 7, 11, 16, 23};
        assert_int_equal(r.n, sizeof types);
        for (size_t i = 0; i < r.n; i++) {
            assert_int_equal(r.pk[i].type, types[i]);
            assert_int_equal(r.pk[i].index, at[i]);
            assert_int_equal(r.pk[i].flags & (EK_ITM_PF_LIST | EK_ITM_PF_DECODE),
                             EK_ITM_PF_LIST | EK_ITM_PF_DECODE);
        }
        assert_int_equal(r.pk[1].value, 0xbb);
        ek_elem want[6];
        want[0] = itm_nosync(0, EK_UNSYNC_INIT_DECODER);
        want[1] = itm_el(1, EK_ITM_SWIT, 3, 0xbb, 1);
        want[1].u.itm.overflow = 1;
        want[2] = itm_el(4, EK_ITM_SWIT, 0x4a, 0x2345, 2);
        want[3] = itm_el(7, EK_ITM_TS_SYNC, 0, 0x12402, 3);
        want[3].timestamp = 0x12402ull * 4;
        want[4] = itm_el(16, EK_ITM_TS_GLOBAL, 0, 0, 0);
        want[4].timestamp = (0x4080C13ull << 26) | 0x2FEA782;
        want[4].flags = EK_ELEMF_CPU_FREQ_CHANGE;
        want[5] = itm_el(23, EK_ITM_DWT, 1, 0x1004, 2);
        assert_int_equal(r.nel, 6);
        const char *d = tu_elems_diff(r.el, want, 6);
        if (d) fail_msg("blk %zu: %s", blk, d);
    }
}

/* A stream that begins with an A-Sync lists the same packets and elements either way, but for
 * the empty unsynchronised run the search reports to the decoder without the option. */
static void test_itm_assume_same_after_sync(void **state)
{
    (void)state;
    uint8_t b[128];
    size_t n = tu_hex("00 00 00 00 00 80  70  19 bb  28  52 45 23  c0 82 c8 04"
                      "  94 82 cf fa 77  b4 93 98 a0 a0 80 00  0e 04 10  00 00 00 00 00 00 80"
                      "  01 07",
                      b, sizeof b);
    for (size_t blk = 1; blk <= n; blk = blk * 2 + 1) {
        static itm_run w, a;
        itm_parse_flags(&w, b, n, blk, 0, 0);
        itm_parse_flags(&a, b, n, blk, 0, EK_ITM_ASSUME_SYNC);
        assert_int_equal(w.pk[0].type, EK_ITM_PKT_NOTSYNC);
        assert_int_equal(w.pk[0].raw_len, 0);
        assert_int_equal(w.n, a.n + 1);
        for (size_t i = 0; i < a.n; i++) {
            assert_int_equal(a.pk[i].type, w.pk[i + 1].type);
            assert_int_equal(a.pk[i].index, w.pk[i + 1].index);
            assert_int_equal(a.pk[i].value, w.pk[i + 1].value);
            assert_int_equal(a.pk[i].raw_len, w.pk[i + 1].raw_len);
            assert_memory_equal(a.pk[i].raw, w.pk[i + 1].raw, a.pk[i].raw_len);
        }
        assert_int_equal(a.pk[a.n - 2].type, EK_ITM_PKT_ASYNC);
        assert_int_equal(a.nel, w.nel);
        assert_int_equal(a.nel, 7);
        const char *d = tu_elems_diff(a.el, w.el, a.nel);
        if (d) fail_msg("blk %zu: %s", blk, d);
    }
}

/* Garbage, then an A-Sync whose first zero the packet before it took (the start of
 * itm_only_raw's stream): with the option the garbage is read as packets (a local time stamp,
 * then bad sequences, after which the decoder waits for an A-Sync), the A-Sync is found at its
 * 0x80 though it has only four zeros of its own, and decoding resumes after it. */
static void test_itm_assume_garbage_then_sync(void **state)
{
    (void)state;
    uint8_t b[64];
    size_t n = tu_hex("f0 00  00 34  00 12  33 44 12 43 55  66 22 77  88 99 00  00 00 00 00 80"
                      "  19 bb  70  09 01",
                      b, sizeof b);
    for (size_t blk = 1; blk <= n; blk = blk * 2 + 1) {
        itm_run r;
        itm_parse_flags(&r, b, n, blk, 0, EK_ITM_ASSUME_SYNC);
        static const uint8_t types[] = {
            EK_ITM_PKT_TS_LOCAL, EK_ITM_PKT_BAD_SEQUENCE, EK_ITM_PKT_BAD_SEQUENCE, EK_ITM_PKT_SWIT,
            EK_ITM_PKT_DWT,      EK_ITM_PKT_EXTENSION,    EK_ITM_PKT_ASYNC,        EK_ITM_PKT_SWIT,
            EK_ITM_PKT_OVERFLOW, EK_ITM_PKT_SWIT};
        static const uint8_t at[] = {0, 2, 4, 6, 11, 14, 17, 22, 24, 25};
        assert_int_equal(r.n, sizeof types);
        for (size_t i = 0; i < r.n; i++) {
            assert_int_equal(r.pk[i].type, types[i]);
            assert_int_equal(r.pk[i].index, at[i]);
        }
        assert_int_equal(r.pk[6].raw_len, 5); /* 00 00 00 00 80 */
        assert_int_equal(r.pk[6].err_type, EK_ITM_PKT_NO_ERR_TYPE);
        ek_elem want[5];
        want[0] = itm_nosync(0, EK_UNSYNC_INIT_DECODER);
        want[1] = itm_el(0, EK_ITM_TS_SYNC + 3, 0, 0, 1); /* f0 00: TC 3, delta 0 */
        want[2] = itm_nosync(4, EK_UNSYNC_BAD_PACKET);
        want[3] = itm_el(22, EK_ITM_SWIT, 3, 0xbb, 1);
        want[4] = itm_el(25, EK_ITM_SWIT, 1, 0x01, 1);
        want[4].u.itm.overflow = 1;
        assert_int_equal(r.nel, 5);
        const char *d = tu_elems_diff(r.el, want, 5);
        if (d) fail_msg("blk %zu: %s", blk, d);

        /* without the option: NOTSYNC up to the A-Sync at 16 (six zeros), as OpenCSD */
        itm_parse_flags(&r, b, n, blk, 0, 0);
        size_t i = 0;
        while (i < r.n && r.pk[i].type == EK_ITM_PKT_NOTSYNC)
            i++;
        assert_int_equal(r.pk[i].type, EK_ITM_PKT_ASYNC);
        assert_int_equal(r.pk[i].index, 16);
        assert_int_equal(r.pk[i].raw_len, 6);
    }
}

/* ek_itm_parser_reset keeps the option: headers again from the next byte. */
static void test_itm_assume_reset(void **state)
{
    (void)state;
    static ek_itm_parser p;
    const uint8_t a[] = {0x03, 0x11}, b[] = {0x01, 0x22};
    ek_itm_parser_init_flags(&p, 0x14, EK_ITM_ASSUME_SYNC);
    ek_itm_feed(&p, a, sizeof a, 0);
    const ek_itm_packet *k;
    assert_int_equal(ek_itm_next(&p, &k), 0); /* SWIT of 4 bytes: 1 of 4 so far */
    ek_itm_parser_reset(&p);
    ek_itm_feed(&p, b, sizeof b, 2);
    assert_int_equal(ek_itm_next(&p, &k), 1);
    assert_int_equal(k->type, EK_ITM_PKT_SWIT);
    assert_int_equal(k->index, 2);
    assert_int_equal(k->value, 0x22);
    ek_itm_parser_init(&p, 0x14); /* without: waits for an A-Sync */
    ek_itm_feed(&p, b, sizeof b, 0);
    while (ek_itm_next(&p, &k) > 0)
        assert_int_equal(k->type, EK_ITM_PKT_NOTSYNC);
}

/* An ASYNC after a run of 0xF nibbles that began in the previous block and ended there
 * (0x12 clears it): indexed at the byte of its first 0xF nibble (201). With
 * EK_STM_OCSD_SYNC_INDEX, as OpenCSD 1.8.0, the block start plus half the nibbles counted,
 * which include the cleared run's 14: 208. (Regression: a fuzz input whose ASYNC was indexed
 * past the end of its trace.) */
static void test_stm_async_index_after_cleared_run(void **state)
{
    (void)state;
    static const uint8_t a[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    static const uint8_t b[] = {0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                0xff, 0xff, 0xff, 0xff, 0x0f, 0x00};
    for (int compat = 0; compat < 2; compat++) {
        static ek_stm_parser p;
        ek_stm_parser_init(&p, 0x20);
        if (compat) ek_stm_parser_set_compat(&p, EK_STM_OCSD_SYNC_INDEX);
        const ek_stm_packet *k;
        uint64_t async_at = 0;
        int nasync = 0;
        for (int blk = 0; blk < 3; blk++) {
            if (blk == 0) ek_stm_feed(&p, a, sizeof a, 100);
            if (blk == 1) ek_stm_feed(&p, b, sizeof b, 200);
            if (blk == 2) ek_stm_eot(&p);
            while (ek_stm_next(&p, &k) > 0) {
                if (k->type != EK_STM_ASYNC) continue;
                async_at = k->index;
                nasync++;
            }
        }
        assert_int_equal(nasync, 1);
        assert_int_equal(async_at, compat ? 208 : 201);
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stm_packets),
        cmocka_unit_test(test_stm_gray_and_eot),
        cmocka_unit_test(test_stm_unsynced),
        cmocka_unit_test(test_itm_packets),
        cmocka_unit_test(test_stm_async_index_after_cleared_run),
        cmocka_unit_test(test_itm_listing),
        cmocka_unit_test(test_itm_assume_no_sync),
        cmocka_unit_test(test_itm_assume_same_after_sync),
        cmocka_unit_test(test_itm_assume_garbage_then_sync),
        cmocka_unit_test(test_itm_assume_reset),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
