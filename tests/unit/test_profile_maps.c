/* ek_profile_maps, the profile builder's locator: which mapping an address of a sample was in.
 * Kernel modules are used (their binary address is the offset in the map, no ELF file needed),
 * so each answer is told apart by its mapping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "etmkit/perf.h"
#include "etmkit/perf_write.h"
#include "etmkit/profile.h"
#include "testutil.h"

#define K  0xffff800010000000ull
#define ST (EK_PERF_SAMPLE_TID | EK_PERF_SAMPLE_TIME)

typedef struct mm {
    const char *file;
    uint64_t start, len, time;
} mm;

/* a recording of these kernel MMAP records, in this order; *buf is freed by the caller */
static ek_profile_maps *maps_of(const mm *v, size_t n, uint8_t **buf, ek_perf_file **f)
{
    ek_pw *w;
    assert_int_equal(ek_pw_new_mem(0, &w), 0);
    ek_perf_attr a;
    memset(&a, 0, sizeof a);
    uint64_t id = 1;
    a.type = 12;
    a.size = 136;
    a.sample_period = 1;
    a.sample_type = ST;
    a.flags = EK_PERF_ATTR_FLAG_SAMPLE_ID_ALL;
    a.ids = &id;
    a.nids = 1;
    assert_int_equal(ek_pw_attr(w, &a), 0);
    for (size_t i = 0; i < n; i++) {
        ek_perf_record r;
        memset(&r, 0, sizeof r);
        r.type = EK_PERF_RECORD_MMAP;
        r.misc = EK_PERF_MISC_KERNEL;
        r.sid.pid = (uint32_t)-1;
        r.sid.tid = 0;
        r.sid.time = v[i].time;
        r.u.mmap.pid = (uint32_t)-1;
        r.u.mmap.addr = K + v[i].start;
        r.u.mmap.len = v[i].len;
        r.u.mmap.filename = v[i].file;
        assert_int_equal(ek_pw_record(w, &r, ST), 0);
    }
    size_t len;
    assert_int_equal(ek_pw_close_mem(w, buf, &len), 0);
    assert_int_equal(ek_perf_open_mem(*buf, len, "maps.data", NULL, f), 0);
    ek_profile_maps *m = NULL;
    assert_int_equal(ek_profile_maps_new(*f, NULL, &m), 0);
    return m;
}

static const char *hint_text;
static unsigned hints;

static const char *hint(void *ctx, const ek_sample *s, uint64_t addr)
{
    (void)ctx, (void)s, (void)addr;
    hints++;
    return hint_text;
}

/* the mapping of K + off at time t (0: none) */
static uint64_t where(ek_profile_maps *m, uint64_t off, uint64_t t)
{
    ek_sample s;
    memset(&s, 0, sizeof s);
    s.pid = 5;
    s.tid = 5;
    s.has_time = 1;
    s.time = t;
    ek_profile_loc loc;
    memset(&loc, 0, sizeof loc);
    if (ek_profile_maps_locate(m, &s, K + off, hint, NULL, &loc)) return 0;
    return loc.mapping;
}

/* Two maps of one module that are both valid at some times (the second recorded later but
 * with an earlier time): the one recorded last is the answer then. An answer remembered from a
 * time when only the other was valid must not stand in for it. (Mappings are numbered in record
 * order from 1.) */
static void test_twins_not_remembered(void **state)
{
    const mm v[] = {{"/lib/modules/x.ko", 0x1000, 0x1000, 100},
                    {"/lib/modules/x.ko", 0x1000, 0x2000, 50},
                    {"/lib/modules/x.ko", 0x2800, 0x800, 300}};
    uint8_t *buf;
    ek_perf_file *f;
    hint_text = NULL;
    ek_profile_maps *m = maps_of(v, 3, &buf, &f);
    assert_int_equal(where(m, 0x1500, 400), 1); /* the second ended at 300 */
    assert_int_equal(where(m, 0x1500, 200), 2); /* both valid: the later record, not the
                                                   answer just found */
    assert_int_equal(where(m, 0x1500, 400), 1);
    assert_int_equal(where(m, 0x1500, 200), 2);
    assert_int_equal(where(m, 0x2900, 400), 3);
    assert_int_equal(where(m, 0x2900, 200), 2);
    ek_profile_maps_free(m);
    ek_perf_free(f);
    free(buf);
}

/* Two modules loaded at the same addresses one after the other: the session's DSO name (the
 * hint) decides, asked every time; a name of neither leaves the answer by time. */
static void test_contested_by_hint(void **state)
{
    const mm v[] = {{"/lib/modules/x.ko", 0x1000, 0x1000, 100},
                    {"/lib/modules/y.ko", 0x1000, 0x1000, 200}};
    uint8_t *buf;
    ek_perf_file *f;
    ek_profile_maps *m = maps_of(v, 2, &buf, &f);
    hints = 0;
    hint_text = NULL;
    assert_int_equal(where(m, 0x1500, 250), 2);
    assert_int_equal(where(m, 0x1500, 150), 1);
    hint_text = "/lib/modules/x.ko";
    assert_int_equal(where(m, 0x1500, 250), 1);
    assert_int_equal(where(m, 0x1500, 150), 1);
    hint_text = "/lib/modules/y.ko";
    assert_int_equal(where(m, 0x1500, 150), 2);
    assert_int_equal(where(m, 0x1500, 250), 2);
    hint_text = "/lib/modules/z.ko";
    assert_int_equal(where(m, 0x1500, 150), 1);
    assert_int_equal(where(m, 0x1500, 250), 2);
    assert_int_equal(hints, 8);
    /* outside both: none */
    assert_int_equal(where(m, 0x2500, 250), 0);
    ek_profile_maps_free(m);
    ek_perf_free(f);
    free(buf);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_twins_not_remembered),
        cmocka_unit_test(test_contested_by_hint),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
