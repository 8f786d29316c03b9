/* Regression (fuzz/elf, issue 6): an ELF program header with p_offset past INT64_MAX made
 * ek_image_add_file report "image.short-file" with a negative byte offset, which every
 * formatter treats as "no location" -- and the fuzz targets' diag check rejects. Offsets that
 * do not fit the event's int64 are now reported as unknown (-1); the text keeps the value. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/image.h"
#include "testutil.h"

typedef struct seen {
    int n;
    int64_t offset;
    char msg[512];
} seen;

static void grab(void *ctx, const ek_diag_event *ev)
{
    seen *s = ctx;
    s->n++;
    s->offset = ev->offset;
    strncpy(s->msg, ev->msg, sizeof s->msg - 1);
}

static void test_offset_past_int64(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    char *path = tu_write_file(dir, "small.bin", "0123456789", 10);
    seen s = {0};
    ek_diag d = {grab, &s};
    ek_image *img = NULL;
    assert_int_equal(ek_image_new(&d, &img), 0);
    assert_int_equal(ek_image_add_file(img, path, 0xf4f4f4f4f4000000ull, 0x10, 0x1000, EK_MS_ANY),
                     EK_ERR_RANGE);
    assert_int_equal(s.n, 1);
    assert_true(s.offset >= -1);
    assert_non_null(strstr(s.msg, "0xf4f4f4f4f4000000"));
    /* an offset that fits is still given as the location */
    s.n = 0;
    assert_int_equal(ek_image_add_file(img, path, 0x20, 0x10, 0x1000, EK_MS_ANY), EK_ERR_RANGE);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.offset, 0x20);
    ek_image_free(img);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_offset_past_int64)};
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
