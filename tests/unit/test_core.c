#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"
#include "core/hot.h"
#include "core/slots.h"
#include "core/vec.h"
#include "etmkit/config.h"
#include "etmkit/diag.h"
#include "etmkit/sbuf.h"
#include "output/wr.h"
#include "testutil.h"

static void test_sbuf_formats(void **state)
{
    ek_sbuf s = EK_SBUF_INIT;
    ek_sbuf_puts(&s, "a=");
    ek_sbuf_hex(&s, 0x4DBF20, 16, 1);
    ek_sbuf_putc(&s, ' ');
    ek_sbuf_hex(&s, 0, 0, 0);
    ek_sbuf_putc(&s, ' ');
    ek_sbuf_dec(&s, 18446744073709551615ull);
    ek_sbuf_putc(&s, ' ');
    ek_sbuf_sdec(&s, -42);
    ek_sbuf_printf(&s, " %s%d", "x", 7);
    assert_string_equal(s.p, "a=00000000004DBF20 0 18446744073709551615 -42 x7");
    ek_sbuf_reset(&s);
    for (int i = 0; i < 10000; i++)
        ek_sbuf_printf(&s, "%04d", i);
    assert_int_equal(s.len, 40000);
    assert_memory_equal(s.p + 39996, "9999", 4);
    ek_sbuf_free(&s);
}

/* The listings' number writers (src/output/wr.h) against snprintf: every power of ten and
 * its neighbours, all-ones values of every width, widths below and above the digits. */
static void test_line_writer_numbers(void **state)
{
    (void)state;
    uint64_t vals[400];
    size_t nv = 0;
    vals[nv++] = 0;
    for (uint64_t x = 1;; x *= 10) {
        vals[nv++] = x - 1;
        vals[nv++] = x;
        vals[nv++] = x + 1;
        if (x > UINT64_MAX / 10) break;
    }
    for (unsigned b = 1; b <= 64; b++) {
        vals[nv++] = b == 64 ? UINT64_MAX : (1ull << b) - 1;
        vals[nv++] = 1ull << (b - 1); /* each bit length's first value: wr_dec_len's estimate */
    }
    /* pseudo-random values of every bit length (xorshift) */
    uint64_t r = 0x9e3779b97f4a7c15ull;
    for (unsigned k = 0; k < 128; k++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        vals[nv++] = r >> (k % 64);
    }
    vals[nv++] = 0x8000000000000000ull;
    vals[nv++] = 12345678901234567890ull;
    assert_true(nv <= sizeof vals / sizeof vals[0]);
    ek_sbuf s = EK_SBUF_INIT;
    char want[160];
    for (size_t i = 0; i < nv; i++) {
        const uint64_t v = vals[i];
        const unsigned long long u = v;
        for (unsigned width = 0; width <= 24; width += 3) {
            wr w;
            ek_sbuf_reset(&s);
            assert_true(wr_begin(&w, &s, 256));
            wr_dec(&w, v);
            wr_c(&w, '|');
            wr_dec_w(&w, v, width);
            wr_c(&w, '|');
            wr_dec0(&w, v, width);
            wr_c(&w, '|');
            wr_hex(&w, v, width, 0);
            wr_c(&w, '|');
            wr_hex(&w, v, width, 1);
            wr_end(&w);
            const unsigned hw = width > 16 ? 16 : width;
            snprintf(want, sizeof want, "%llu|%*llu|%0*llu|%0*llx|%0*llX", u, (int)width, u,
                     (int)width, u, (int)hw, u, (int)hw, u);
            assert_string_equal(s.p, want);
        }
    }
    ek_sbuf_free(&s);
}

/* A cached line's slot (wr_slot, the line cache's hits): the whole slot is copied, its length
 * counts; into a buffer that ran out of memory nothing, also when it has room left (every
 * append to such a buffer is dropped). */
static void test_slot_copy(void **state)
{
    (void)state;
    char slot[64];
    memset(slot, 'x', sizeof slot);
    memcpy(slot, "line one\n", 9);
    ek_sbuf s = EK_SBUF_INIT;
    ek_sbuf_puts(&s, "head ");
    wr_slot(&s, slot, sizeof slot, 9);
    assert_string_equal(s.p, "head line one\n");
    assert_int_equal(s.len, 14);
    wr_slot(&s, slot, sizeof slot, 9);
    assert_string_equal(s.p, "head line one\nline one\n");
    assert_true(ek_sbuf_reserve(&s, 4 * sizeof slot) == 0);
    assert_true(s.cap - s.len > 2 * sizeof slot);
    s.oom = 1;
    wr_slot(&s, slot, sizeof slot, 9);
    assert_int_equal(s.len, 23);
    assert_string_equal(s.p, "head line one\nline one\n");
    ek_sbuf_free(&s);
}

/* ek_copy64 (core/hot.h): the 64 bytes memcpy copies, from and to every alignment, nothing
 * around them touched. */
static void test_copy64(void **state)
{
    (void)state;
    unsigned char src[96], dst[160], want[160];
    for (unsigned i = 0; i < sizeof src; i++)
        src[i] = (unsigned char)(i * 37 + 11);
    for (unsigned so = 0; so < 32; so++)
        for (unsigned d = 0; d < 64; d++) {
            memset(dst, 0xa5, sizeof dst);
            memset(want, 0xa5, sizeof want);
            memcpy(want + 16 + d, src + so, 64);
            ek_copy64(dst + 16 + d, src + so);
            assert_memory_equal(dst, want, sizeof dst);
        }
}

static void test_bytes_reader(void **state)
{
    const uint8_t b[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    ek_rd r = ek_rd_make(b, sizeof b);
    assert_int_equal(ek_rd_u8(&r), 1);
    assert_int_equal(ek_rd_u16(&r), 0x0302);
    assert_int_equal(ek_rd_u32(&r), 0x07060504);
    assert_int_equal(r.err, 0);
    assert_int_equal(ek_rd_u64(&r), 0); /* only 2 bytes left */
    assert_int_equal(r.err, 1);
    assert_int_equal(ek_le64("\x01\x02\x03\x04\x05\x06\x07\x08"), 0x0807060504030201ull);
}

static void test_vec_growth(void **state)
{
    EK_VEC(int) v = {0};
    for (int i = 0; i < 1000; i++)
        assert_int_equal(ek_vec_push(&v, i), 0);
    assert_int_equal(v.n, 1000);
    assert_int_equal(v.v[999], 999);
    /* A request whose byte size overflows fails cleanly. */
    assert_int_not_equal(ek_vec_reserve(&v, SIZE_MAX / 2), 0);
    ek_vec_free(&v);
}

/* Regression (fuzz findings 10 and 11): names read from damaged files (an ELF symbol name
 * with a newline) and reference messages that end in a newline (OpenCSD's "Bad program image"
 * texts) must still give one line. */
static void test_diag_format_one_line(void **state)
{
    (void)state;
    ek_diag_event ev;
    memset(&ev, 0, sizeof ev);
    ev.sev = EK_SEV_WARN;
    ev.kind = "elf.bad-symbol";
    ev.file = "dir\nname";
    ev.record = -1;
    ev.offset = 16;
    ev.trace_id = -1;
    ev.msg = "symbol 'a\nb\x01' is odd\n";
    ek_sbuf sb = EK_SBUF_INIT;
    ek_diag_format(&sb, &ev);
    assert_string_equal(sb.p, "dir\\x0aname: offset 0x10: warning: symbol 'a\\x0ab\\x01' is odd "
                              "[elf.bad-symbol]");
    ek_sbuf_free(&sb);
}

static void test_diag_collector_groups(void **state)
{
    ek_diag_collector *c = ek_diag_collector_new(3);
    ek_diag d = ek_diag_collector_sink(c);
    for (int i = 0; i < 5; i++)
        ek_diag_emit(&d, EK_SEV_WARN, "etm4.bad-packet", 0, "trace.bin", -1, 0x10 * i, 0x12,
                     "reserved header 0x%02x", 0x71);
    ek_diag_emit(&d, EK_SEV_ERROR, "ini.missing-file", 0, "cpu_0.ini", 7, -1, -1,
                 "dump file 'x.bin' not found");
    assert_int_equal(ek_diag_collector_count(c, EK_SEV_NOTE), 6);
    assert_int_equal(ek_diag_collector_count(c, EK_SEV_ERROR), 1);
    assert_int_equal(ek_diag_collector_count_kind(c, "etm4.bad-packet"), 5);
    ek_sbuf s = EK_SBUF_INIT;
    ek_diag_collector_summary(c, &s, 0);
    assert_string_equal(
        s.p, "cpu_0.ini: record 7: error: dump file 'x.bin' not found [ini.missing-file]\n"
             "5 x trace.bin: offset 0x0: ID 0x12: warning: reserved header 0x71 "
             "[etm4.bad-packet] (also at offsets 0x10, 0x20, ...)\n");
    ek_sbuf_free(&s);
    ek_diag_collector_free(c);
    /* A NULL sink drops events without crashing. */
    ek_diag_emit(NULL, EK_SEV_NOTE, "x", 0, NULL, -1, -1, -1, "nothing");
}

/* Regression (review): the collector grouped events by kind alone, so the line of a kind showed
 * the first event's file and listed the next events' offsets, whatever file they were in
 * ("2 x cpu_1.ini: ... gone.bin ... (also at offsets 0xc4)": 0xc4 was in snapshot.ini, whose
 * missing ETM_9.ini was never named). Groups are by kind and file: each file's first event is
 * shown, the offsets of a line are in its file, and a kind in more files than keep_per_kind gets
 * one line for the other files. */
static void test_diag_collector_files(void **state)
{
    (void)state;
    ek_diag_collector *c = ek_diag_collector_new(2);
    ek_diag d = ek_diag_collector_sink(c);
    ek_diag_emit(&d, EK_SEV_WARN, "snapshot.missing-file", 0, "cpu_1.ini", 17, 0xda, -1,
                 "dump file 'gone.bin' cannot be read");
    ek_diag_emit(&d, EK_SEV_WARN, "snapshot.missing-file", 0, "snapshot.ini", 11, 0xc4, -1,
                 "device file 'ETM_9.ini' cannot be read");
    for (int i = 0; i < 4; i++) /* the common case: many of one kind in one file */
        ek_diag_emit(&d, EK_SEV_WARN, "frame.partial", 0, "trbe_0.bin", -1, 0x100 * i, -1,
                     "buffer ends inside a frame");
    ek_diag_emit(&d, EK_SEV_WARN, "frame.partial", 0, "trbe_1.bin", -1, 0xa810, -1,
                 "buffer ends inside a frame");
    static const char *const bufs[] = {"b0.bin", "b1.bin", "b2.bin", "b2.bin", "b3.bin"};
    for (int i = 0; i < 5; i++)
        ek_diag_emit(&d, i == 4 ? EK_SEV_ERROR : EK_SEV_NOTE, "etm4.truncated", 0, bufs[i], -1,
                     0x10 + i, 0x12, "truncated packet");
    assert_int_equal(ek_diag_collector_count_kind(c, "snapshot.missing-file"), 2);
    assert_int_equal(ek_diag_collector_count_kind(c, "frame.partial"), 5);
    assert_int_equal(ek_diag_collector_count_kind(c, "etm4.truncated"), 5);
    assert_int_equal(ek_diag_collector_count(c, EK_SEV_WARN), 8);
    ek_sbuf s = EK_SBUF_INIT;
    ek_diag_collector_summary(c, &s, 0);
    assert_string_equal(
        s.p, "3 x etm4.truncated in 2 more files\n"
             "cpu_1.ini: record 17: offset 0xda: warning: dump file 'gone.bin' cannot be read "
             "[snapshot.missing-file]\n"
             "snapshot.ini: record 11: offset 0xc4: warning: device file 'ETM_9.ini' cannot be "
             "read [snapshot.missing-file]\n"
             "4 x trbe_0.bin: offset 0x0: warning: buffer ends inside a frame [frame.partial] "
             "(also at offsets 0x100, ...)\n"
             "trbe_1.bin: offset 0xa810: warning: buffer ends inside a frame [frame.partial]\n"
             "b0.bin: offset 0x10: ID 0x12: note: truncated packet [etm4.truncated]\n"
             "b1.bin: offset 0x11: ID 0x12: note: truncated packet [etm4.truncated]\n");
    ek_sbuf_reset(&s);
    ek_diag_collector_summary(c, &s, 1);
    assert_string_equal(
        s.p, "3 x etm4.truncated in 2 more files\n"
             "cpu_1.ini: record 17: offset 0xda: warning: dump file 'gone.bin' cannot be read "
             "[snapshot.missing-file]\n"
             "snapshot.ini: record 11: offset 0xc4: warning: device file 'ETM_9.ini' cannot be "
             "read [snapshot.missing-file]\n"
             "trbe_0.bin: offset 0x0: warning: buffer ends inside a frame [frame.partial]\n"
             "trbe_0.bin: offset 0x100: warning: buffer ends inside a frame [frame.partial]\n"
             "  ... and 2 more [frame.partial]\n"
             "trbe_1.bin: offset 0xa810: warning: buffer ends inside a frame [frame.partial]\n"
             "b0.bin: offset 0x10: ID 0x12: note: truncated packet [etm4.truncated]\n"
             "b1.bin: offset 0x11: ID 0x12: note: truncated packet [etm4.truncated]\n");
    ek_sbuf_free(&s);
    ek_diag_collector_free(c);
}

/* The names of the core enums come from core (etmkit/config.h), one per value, never NULL. */
static void test_enum_names(void **state)
{
    (void)state;
    static const char *const proto[] = {"unknown", "ETMv4", "ETMv4-M", "ETE", "ETMv3",
                                        "PTM",     "STM",   "ITM"};
    for (int p = EK_PROTO_UNKNOWN; p <= EK_PROTO_ITM; p++)
        assert_string_equal(ek_protocol_name((ek_protocol)p), proto[p]);
    assert_string_equal(ek_protocol_name((ek_protocol)99), "unknown");
    static const char *const arch[] = {"unknown", "v7-A", "v7-R", "v7-M", "v8-A",
                                       "v8.3-A",  "v8-R", "v8-M", "v8.1-M", "v9-A"};
    for (int a = EK_ARCH_UNKNOWN; a <= EK_ARCH_V9A; a++)
        assert_string_equal(ek_arch_name((ek_arch)a), arch[a]);
    assert_string_equal(ek_arch_name((ek_arch)-1), "unknown");
}

/* The JSON string writer: quotes, backslashes, control characters, NULL; UTF-8 characters as
 * they are (JSON text is UTF-8: "\u00c3\u00a9" would read as "Ã©", not "é"), and a byte that
 * begins no well-formed character as U+FFFD: a lone continuation byte, an overlong form, a
 * surrogate, a lead byte past U+10FFFF, a character cut short by the string's end. */
static void test_json_string(void **state)
{
    (void)state;
    ek_sbuf b = EK_SBUF_INIT;
    ek_json_string(&b, "a\"b\\c\n\t\r\x01\x7f\xc3\xa9/");
    ek_json_string(&b, NULL);
    assert_string_equal(b.p, "\"a\\\"b\\\\c\\n\\t\\r\\u0001\\u007f\xc3\xa9/\"\"\"");
    ek_sbuf_reset(&b);
    /* é (2 bytes), € (3), U+FFFF, U+10000 and U+10FFFF (4): as they are */
    ek_json_string(&b, "\xc3\xa9\xe2\x82\xac\xef\xbf\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbf");
    assert_string_equal(b.p,
                        "\"\xc3\xa9\xe2\x82\xac\xef\xbf\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbf\"");
    ek_sbuf_reset(&b);
    /* a continuation byte alone; overlong '/' (c0 af) and U+0000-U+07FF in 3 bytes (e0 9f bf);
     * a surrogate (ed a0 80); f5 and f4 90 (past U+10FFFF); Latin-1's é (e9) then 'x'; a
     * character cut short by the end (e2 82): each byte that starts nothing is one U+FFFD */
    ek_json_string(&b,
                   "\x80|\xc0\xaf|\xe0\x9f\xbf|\xed\xa0\x80|\xf5|\xf4\x90\x80\x80|\xe9x|\xe2\x82");
    assert_string_equal(b.p, "\"\\ufffd|\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|"
                             "\\ufffd\\ufffd\\ufffd|\\ufffd|\\ufffd\\ufffd\\ufffd\\ufffd|"
                             "\\ufffdx|\\ufffd\\ufffd\"");
    ek_sbuf_free(&b);
}

/* The open-addressing index the diagnostic collectors and the sideband's CPU map rebuild as
 * they grow: every element has exactly one slot, found by probing from its hash, also when
 * all hashes collide. */
static size_t slot_hash(const void *ctx, size_t i)
{
    return ((const size_t *)ctx)[i];
}

static void test_slots_build(void **state)
{
    (void)state;
    size_t hashes[100];
    for (int colliding = 0; colliding < 2; colliding++) {
        for (size_t i = 0; i < 100; i++)
            hashes[i] = colliding ? 7 : i * 0x9E3779B97F4A7C15ull;
        size_t *slot = ek_slots_build(256, 100, slot_hash, hashes);
        assert_non_null(slot);
        size_t used = 0;
        for (size_t h = 0; h < 256; h++)
            used += slot[h] != 0;
        assert_int_equal(used, 100);
        for (size_t i = 0; i < 100; i++) {
            size_t h = hashes[i] & 255;
            while (slot[h] && slot[h] != i + 1)
                h = (h + 1) & 255;
            assert_int_equal(slot[h], i + 1);
        }
        free(slot);
    }
    assert_null(ek_slots_build(SIZE_MAX / 2, 0, slot_hash, hashes));
}

/* Many groups: the collector's index is rebuilt as it grows (16 slots at first), and every
 * event still goes to its own group -- one summary line per file, each with its count. */
static void test_diag_collector_many_groups(void **state)
{
    (void)state;
    ek_diag_collector *c = ek_diag_collector_new(40); /* (every group's line shown) */
    ek_diag d = ek_diag_collector_sink(c);
    char file[32];
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < 40; i++) {
            snprintf(file, sizeof file, "b%d.bin", i);
            ek_diag_emit(&d, EK_SEV_WARN, "frame.partial", 0, file, -1, 0x10 * round, -1,
                         "buffer ends inside a frame");
        }
    assert_int_equal(ek_diag_collector_count_kind(c, "frame.partial"), 120);
    ek_sbuf s = EK_SBUF_INIT;
    ek_diag_collector_summary(c, &s, 0);
    ek_sbuf want = EK_SBUF_INIT;
    for (int i = 0; i < 40; i++)
        ek_sbuf_printf(&want,
                       "3 x b%d.bin: offset 0x0: warning: buffer ends inside a frame "
                       "[frame.partial] (also at offsets 0x10, 0x20)\n",
                       i);
    assert_string_equal(s.p, want.p);
    ek_sbuf_free(&s);
    ek_sbuf_free(&want);
    ek_diag_collector_free(c);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sbuf_formats),
        cmocka_unit_test(test_line_writer_numbers),
        cmocka_unit_test(test_bytes_reader),
        cmocka_unit_test(test_slot_copy),
        cmocka_unit_test(test_copy64),
        cmocka_unit_test(test_vec_growth),
        cmocka_unit_test(test_diag_collector_groups),
        cmocka_unit_test(test_diag_format_one_line),
        cmocka_unit_test(test_enum_names),
        cmocka_unit_test(test_json_string),
        cmocka_unit_test(test_diag_collector_files),
        cmocka_unit_test(test_slots_build),
        cmocka_unit_test(test_diag_collector_many_groups),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
