/* CoreSight frame deformatter on hand-built frames: ID changes and the flag-byte rules, sync
 * forms (memory aligned, FSYNC, HSYNC, 4xFSYNC reset), data starting mid-stream, bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/frame.h"
#include "testutil.h"

typedef struct item {
    ek_dfmt_item it;
    uint8_t data[64];
} item;

static item items[256];
static size_t nitems;

static void run(ek_deformatter *d, const uint8_t *b, size_t len, size_t blk, uint64_t base)
{
    for (size_t pos = 0; pos < len; pos += blk) {
        const size_t n = len - pos < blk ? len - pos : blk;
        ek_dfmt_feed(d, b + pos, n, base + pos);
        ek_dfmt_item it;
        while (ek_dfmt_next(d, &it) > 0) {
            assert_true(nitems < 256);
            item *x = &items[nitems++];
            x->it = it;
            assert_true(it.len <= sizeof x->data);
            if (it.data && it.len) memcpy(x->data, it.data, it.len);
            x->it.data = x->data;
        }
    }
}

static void deformat_hex(unsigned flags, const char *hex, size_t blk)
{
    static uint8_t buf[2048];
    const size_t n = tu_hex(hex, buf, sizeof buf);
    ek_deformatter d;
    ek_dfmt_init(&d, flags);
    nitems = 0;
    run(&d, buf, n, blk ? blk : n, 0);
}

static void expect_data(size_t i, unsigned id, uint64_t index, const char *hex)
{
    uint8_t want[64];
    const size_t n = tu_hex(hex, want, sizeof want);
    assert_true(i < nitems);
    assert_int_equal(items[i].it.kind, EK_DFMT_DATA);
    assert_int_equal(items[i].it.id, id);
    assert_int_equal(items[i].it.index, index);
    assert_int_equal(items[i].it.len, n);
    assert_memory_equal(items[i].data, want, n);
}

/* Frame A: ID 0x10 data, an ID change to 0x12 whose flag gives the next byte to 0x10, a change
 * back to 0x10 without the flag, and byte 14 announcing ID 0x13 for the next frame. */
#define FRAME_A "21 01 02 04 25 05 06 07 21 08 0a 0b 0c 0d 27 06 "
/* Frame B: all data (of ID 0x13 after frame A), flag bits give each even byte's bit 0. */
#define FRAME_B "40 41 42 43 44 45 46 47 48 49 4a 4b 4c 4d 4e 55 "

static void test_id_changes(void **state)
{
    deformat_hex(EK_DFMT_MEM_ALIGN, FRAME_A FRAME_B, 0);
    assert_int_equal(nitems, 4);
    expect_data(0, 0x10, 0, "01 03 04 05");
    expect_data(1, 0x12, 4, "06 07");
    expect_data(2, 0x10, 8, "08 0a 0b 0c 0d");
    expect_data(3, 0x13, 16, "41 41 42 43 45 45 46 47 49 49 4a 4b 4d 4d 4e");
}

/* Byte 12 changes the ID with its flag set (byte 13 still belongs to the old ID) and byte 14
 * changes it again: the new ID of byte 12 has no data in this frame, and no item (regression:
 * a DATA item of length 0 used to come out for it; RELIABILITY.md, finding 13). */
static void test_id_change_without_data(void **state)
{
    deformat_hex(EK_DFMT_MEM_ALIGN, "21 01 02 03 04 05 06 07 08 09 0a 0b 25 0d 27 40 ", 0);
    assert_int_equal(nitems, 1);
    expect_data(0, 0x10, 0, "01 02 03 04 05 06 07 08 09 0a 0b 0d");
}

static void test_mid_stream_start(void **state)
{
    /* the first frame has data before any ID: that data has no owner */
    deformat_hex(EK_DFMT_MEM_ALIGN, FRAME_B FRAME_A, 0);
    assert_int_equal(nitems, 4);
    expect_data(0, EK_TRACE_ID_UNKNOWN, 0, "41 41 42 43 45 45 46 47 49 49 4a 4b 4d 4d 4e");
    expect_data(1, 0x10, 16, "01 03 04 05");
    /* a frame cut between two feeds is completed by the second one */
    deformat_hex(EK_DFMT_MEM_ALIGN, FRAME_A FRAME_B, 5);
    assert_int_equal(nitems, 4);
    expect_data(3, 0x13, 16, "41 41 42 43 45 45 46 47 49 49 4a 4b 4d 4d 4e");
}

static void test_null_and_reserved_ids(void **state)
{
    /* ID 0 (null: padding) and 0x7x (reserved) are reported like any other ID: the caller has
     * no decoder for them */
    deformat_hex(EK_DFMT_MEM_ALIGN, "01 00 00 00 00 00 00 00 e1 01 02 03 04 05 06 00 ", 0);
    assert_int_equal(nitems, 2);
    expect_data(0, 0x00, 0, "00 00 00 00 00 00 00");
    expect_data(1, 0x70, 8, "01 02 03 04 05 06");
    assert_true(ek_trace_id_reserved(0x70));
    assert_false(ek_trace_id_reserved(0x10));
}

static void test_fsync_stream(void **state)
{
    /* garbage, FSYNC, frame, FSYNC, frame: data indices count the FSYNC bytes */
    deformat_hex(EK_DFMT_FSYNC, "aa bb cc dd ee 11 ff ff ff 7f " FRAME_A "ff ff ff 7f " FRAME_B, 0);
    assert_int_equal(nitems, 4);
    expect_data(0, 0x10, 10, "01 03 04 05");
    expect_data(1, 0x12, 14, "06 07");
    expect_data(3, 0x13, 30, "41 41 42 43 45 45 46 47 49 49 4a 4b 4d 4d 4e");
    /* the same with every block split: an FSYNC cut in two halves across blocks */
    for (size_t blk = 2; blk <= 18; blk += 2) {
        deformat_hex(EK_DFMT_FSYNC, "aa bb ff ff ff 7f " FRAME_A "ff ff ff 7f " FRAME_B, blk);
        assert_int_equal(nitems, 4);
        expect_data(0, 0x10, 6, "01 03 04 05");
        expect_data(3, 0x13, 26, "41 41 42 43 45 45 46 47 49 49 4a 4b 4d 4d 4e");
    }
}

static void test_hsync(void **state)
{
    /* an HSYNC inside a frame is dropped; indices stay frame-relative as in OpenCSD */
    deformat_hex(EK_DFMT_FSYNC | EK_DFMT_HSYNC,
                 "ff ff ff 7f 21 01 02 04 ff 7f 25 05 06 07 21 08 0a 0b 0c 0d 27 06 ", 0);
    assert_int_equal(nitems, 3);
    expect_data(0, 0x10, 4, "01 03 04 05");
    expect_data(1, 0x12, 8, "06 07");
    /* without HSYNC support the same pattern is an error; decoding resumes at the next FSYNC */
    deformat_hex(EK_DFMT_FSYNC,
                 "ff ff ff 7f 21 01 02 04 ff 7f 25 05 06 07 21 08 0a 0b 0c 0d 27 06 "
                 "ff ff ff 7f " FRAME_A,
                 0);
    assert_true(nitems >= 2);
    assert_int_equal(items[0].it.kind, EK_DFMT_ERROR);
    assert_int_equal(items[0].it.index, 8);
    assert_non_null(items[0].it.err);
    expect_data(1, 0x10, 26, "01 03 04 05");
}

static void test_4x_fsync_reset(void **state)
{
    deformat_hex(EK_DFMT_MEM_ALIGN | EK_DFMT_RESET_4XFSYNC,
                 FRAME_A "ff ff ff 7f ff ff ff 7f ff ff ff 7f ff ff ff 7f " FRAME_B, 0);
    assert_int_equal(nitems, 5);
    assert_int_equal(items[3].it.kind, EK_DFMT_RESET);
    assert_int_equal(items[3].it.index, 16);
    /* after the barrier the ID is unknown again */
    expect_data(4, EK_TRACE_ID_UNKNOWN, 32, "41 41 42 43 45 45 46 47 49 49 4a 4b 4d 4d 4e");
    /* a run that is not a multiple of 4 FSYNCs is an error */
    deformat_hex(EK_DFMT_MEM_ALIGN | EK_DFMT_RESET_4XFSYNC, "ff ff ff 7f ff ff ff 7f " FRAME_A, 0);
    assert_int_equal(items[0].it.kind, EK_DFMT_ERROR);
    expect_data(1, 0x10, 8, "01 03 04 05");
    /* without the flag, an FSYNC-looking frame is just data of ID 0x7f (not decoded) */
    deformat_hex(EK_DFMT_MEM_ALIGN, "ff ff ff 7f ff ff ff 7f ff ff ff 7f ff ff ff 7f", 0);
    assert_int_equal(nitems, 2);
    expect_data(0, EK_TRACE_ID_UNKNOWN, 0, "ff"); /* flag bit 0: byte 1 is the old ID's */
    assert_int_equal(items[1].it.kind, EK_DFMT_DATA);
    assert_int_equal(items[1].it.id, 0x7f);
}

static void test_raw_output(void **state)
{
    deformat_hex(EK_DFMT_FSYNC | EK_DFMT_OUT_RAW, "ff ff ff 7f " FRAME_A FRAME_B, 0);
    assert_int_equal(items[0].it.kind, EK_DFMT_RAW_PACKED);
    assert_int_equal(items[0].it.index, 0);
    assert_int_equal(items[0].it.len, 20); /* the FSYNC is part of the frame's raw bytes */
    assert_int_equal(items[1].it.kind, EK_DFMT_DATA);
    assert_int_equal(items[4].it.kind, EK_DFMT_RAW_PACKED);
    assert_int_equal(items[4].it.index, 20);
    assert_int_equal(items[4].it.len, 16);
}

static void test_partial_and_odd(void **state)
{
    ek_deformatter d;
    uint8_t buf[64];
    size_t n = tu_hex(FRAME_A "21 01 02", buf, sizeof buf);
    ek_dfmt_init(&d, EK_DFMT_MEM_ALIGN);
    nitems = 0;
    run(&d, buf, n, n, 0);
    assert_int_equal(nitems, 3);
    assert_int_equal(ek_dfmt_pending(&d), 3);
    /* an odd trailing byte of a 2-byte aligned stream */
    deformat_hex(EK_DFMT_FSYNC, "ff ff ff 7f 21 01 02", 0);
    assert_int_equal(nitems, 1);
    assert_int_equal(items[0].it.kind, EK_DFMT_ERROR);
}

static void test_random_input(void **state)
{
    static uint8_t buf[4096];
    unsigned seed = 777;
    const unsigned flag_sets[] = {EK_DFMT_MEM_ALIGN, EK_DFMT_MEM_ALIGN | EK_DFMT_RESET_4XFSYNC,
                                  EK_DFMT_FSYNC, EK_DFMT_FSYNC | EK_DFMT_HSYNC,
                                  EK_DFMT_FSYNC | EK_DFMT_OUT_RAW};
    for (int round = 0; round < 300; round++) {
        const size_t n = (size_t)(rand_r(&seed) % sizeof buf);
        for (size_t i = 0; i < n; i++) {
            const unsigned r = (unsigned)rand_r(&seed);
            buf[i] = (r & 0x300) == 0x300 ? (uint8_t)((r & 1) ? 0x7f : 0xff) : (uint8_t)r;
        }
        ek_deformatter d;
        ek_dfmt_init(&d, flag_sets[round % 5]);
        size_t data_bytes = 0;
        for (size_t pos = 0; pos < n;) {
            size_t blk = 1 + (size_t)(rand_r(&seed) % 200);
            if (blk > n - pos) blk = n - pos;
            ek_dfmt_feed(&d, buf + pos, blk, pos);
            ek_dfmt_item it;
            while (ek_dfmt_next(&d, &it) > 0) {
                if (it.kind == EK_DFMT_DATA) {
                    assert_true(it.len <= 15);
                    assert_true(it.index < n);
                    data_bytes += it.len;
                }
            }
            pos += blk;
        }
        assert_true(data_bytes <= n);
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_id_changes),
        cmocka_unit_test(test_id_change_without_data),
        cmocka_unit_test(test_mid_stream_start),
        cmocka_unit_test(test_null_and_reserved_ids),
        cmocka_unit_test(test_fsync_stream),
        cmocka_unit_test(test_hsync),
        cmocka_unit_test(test_4x_fsync_reset),
        cmocka_unit_test(test_raw_output),
        cmocka_unit_test(test_partial_and_odd),
        cmocka_unit_test(test_random_input),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
