/* Flow decoding of damaged real trace: the bugfix-exact-match snapshot of ../shared (gcc's cc1
 * traced on six ETMv4 sources) with bytes of its trace buffer flipped, dropped and repeated.
 * Whatever the damage, decoding must finish, stay within bounds, report through the diag
 * sink, and give the same elements with and without the block cache. Skipped without
 * ../shared. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mapfile.h"
#include "etmkit/etm4.h"
#include "etmkit/flow.h"
#include "etmkit/frame.h"
#include "etmkit/image.h"
#include "etmkit/snapshot.h"
#include "testutil.h"

static ek_snapshot *ss;
static ek_image *img;
static ek_mapped trace;
static size_t buf_index;

typedef struct pipe {
    ek_etm4_config cfg;
    ek_etm4_parser parser;
    ek_flow *f[2]; /* with and without the block cache */
    uint64_t elems, instr;
} pipe_t;

static int n_diag; /* warnings and errors */
static void on_diag(void *ctx, const ek_diag_event *ev)
{
    (void)ctx;
    assert_non_null(ev->kind);
    assert_non_null(ev->msg);
    if (ev->sev >= EK_SEV_WARN)
        n_diag++;
}

static void drain(pipe_t *p)
{
    const ek_etm4_packet *pkt;
    while (ek_etm4_next(&p->parser, &pkt) > 0) {
        assert_int_equal(ek_flow_packet(p->f[0], pkt), 0);
        assert_int_equal(ek_flow_packet(p->f[1], pkt), 0);
        size_t n0, n1;
        const ek_elem *e0 = ek_flow_elems(p->f[0], &n0);
        const ek_elem *e1 = ek_flow_elems(p->f[1], &n1);
        assert_int_equal(n0, n1);
        assert_null(tu_elems_diff(e0, e1, n0));
        for (size_t i = 0; i < n0; i++) {
            assert_true(e0[i].type < EK_ELEM_NTYPES);
            if (e0[i].type == EK_ELEM_INSTR_RANGE) p->instr += e0[i].num_instr;
        }
        p->elems += n0;
        ek_flow_elems_clear(p->f[0]);
        ek_flow_elems_clear(p->f[1]);
    }
}

/* Decode data as the snapshot's first buffer; returns the number of elements. */
static uint64_t decode(const uint8_t *data, size_t len, uint64_t *instr)
{
    pipe_t *by_id[128] = {0};
    pipe_t *all[16];
    int nall = 0;
    ek_diag d = {on_diag, NULL};
    for (size_t i = 0; i < ss->nsources && nall < 16; i++) {
        const ek_snap_source *so = &ss->sources[i];
        if (so->buffer != (long)buf_index || by_id[so->cfg.trace_id & 0x7f]) continue;
        pipe_t *p = calloc(1, sizeof *p);
        assert_non_null(p);
        assert_int_equal(ek_etm4_config_from_source(&p->cfg, &so->cfg), 0);
        ek_etm4_parser_init(&p->parser, &p->cfg);
        for (int k = 0; k < 2; k++) {
            ek_flow_config fc;
            ek_flow_config_init(&fc);
            fc.source = &so->cfg;
            fc.mem = ek_flow_mem_image(img);
            fc.diag = &d;
            fc.max_pending = 2048;
            fc.flags = k ? EK_FLOW_NO_BLOCK_CACHE : 0;
            assert_int_equal(ek_flow_new(&fc, &p->f[k]), 0);
        }
        by_id[so->cfg.trace_id & 0x7f] = p;
        all[nall++] = p;
    }
    ek_deformatter df;
    ek_dfmt_init(&df, EK_DFMT_MEM_ALIGN);
    ek_dfmt_feed(&df, data, len, 0);
    ek_dfmt_item it;
    while (ek_dfmt_next(&df, &it) > 0) {
        if (it.kind != EK_DFMT_DATA || it.id >= 128 || !by_id[it.id] || !it.len) continue;
        ek_etm4_feed(&by_id[it.id]->parser, it.data, it.len, it.index);
        drain(by_id[it.id]);
    }
    uint64_t total = 0;
    *instr = 0;
    for (int i = 0; i < nall; i++) {
        ek_etm4_eot(&all[i]->parser);
        drain(all[i]);
        for (int k = 0; k < 2; k++) {
            assert_int_equal(ek_flow_end(all[i]->f[k]), 0);
            size_t n;
            const ek_elem *e = ek_flow_elems(all[i]->f[k], &n);
            assert_true(n >= 1);
            assert_int_equal(e[n - 1].type, EK_ELEM_EO_TRACE);
            if (k == 0) all[i]->elems += n;
            ek_flow_free(all[i]->f[k]);
        }
        total += all[i]->elems;
        *instr += all[i]->instr;
        free(all[i]);
    }
    return total;
}

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 17);
}

static void test_clean_prefix(void **state)
{
    /* the undamaged first 256 KiB decodes with no decoder error */
    size_t len = trace.size < (256u << 10) ? trace.size : (256u << 10);
    uint64_t instr;
    n_diag = 0;
    uint64_t n = decode(trace.data, len, &instr);
    assert_true(n > 100000);
    assert_true(instr > 400000);
    assert_int_equal(n_diag, 0);
}

static void test_flipped_bytes(void **state)
{
    size_t len = trace.size < (128u << 10) ? trace.size : (128u << 10);
    uint8_t *copy = malloc(len);
    assert_non_null(copy);
    for (int round = 0; round < 6; round++) {
        memcpy(copy, trace.data, len);
        int flips = 1 << (2 * round); /* 1, 4, 16 ... 1024 damaged bytes */
        for (int i = 0; i < flips; i++)
            copy[rnd() % len] ^= (uint8_t)(1u << (rnd() % 8));
        uint64_t instr;
        uint64_t n = decode(copy, len, &instr);
        assert_true(n > 0);
    }
    free(copy);
}

static void test_dropped_and_repeated(void **state)
{
    /* frames dropped and repeated: addresses and atoms out of order, resyncs everywhere */
    size_t len = trace.size < (128u << 10) ? trace.size : (128u << 10);
    uint8_t *copy = malloc(len);
    assert_non_null(copy);
    size_t out = 0;
    while (out + 16 <= len) {
        size_t from = (size_t)(rnd() % (len / 16)) * 16;
        size_t nfr = 1 + rnd() % 8;
        for (size_t k = 0; k < nfr && out + 16 <= len; k++, from = (from + 16) % (len - 15))
            memcpy(copy + out, trace.data + from, 16), out += 16;
    }
    uint64_t instr;
    n_diag = 0;
    decode(copy, out, &instr);
    assert_true(n_diag > 0);
    free(copy);
}

static void test_random_bytes(void **state)
{
    size_t len = 64u << 10;
    uint8_t *copy = malloc(len);
    assert_non_null(copy);
    for (size_t i = 0; i < len; i++)
        copy[i] = (uint8_t)rnd();
    uint64_t instr;
    decode(copy, len, &instr);
    free(copy);
}

int main(int argc, char **argv)
{
    char *dir = tu_shared_path("opencsd/snapshots/bugfix-exact-match");
    if (!dir) tu_skip_all("../shared/testdata/opencsd/snapshots/bugfix-exact-match is absent");
    if (ek_snapshot_open(dir, NULL, &ss) || !ss->nbuffers)
        tu_skip_all("bugfix-exact-match snapshot is not readable");
    free(dir);
    buf_index = ss->buffer_order ? ss->buffer_order[0] : 0;
    if (!ss->buffers[buf_index].path || ek_map_file(ss->buffers[buf_index].path, &trace))
        tu_skip_all("bugfix-exact-match trace buffer is not readable");
    if (ek_image_new(NULL, &img) || ek_image_add_snapshot_buffer(img, ss, buf_index) < 0) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean_prefix),
        cmocka_unit_test(test_flipped_bytes),
        cmocka_unit_test(test_dropped_and_repeated),
        cmocka_unit_test(test_random_bytes),
    };
    int rc = tu_run_group(argc, argv, tests, NULL, NULL);
    ek_unmap_file(&trace);
    ek_image_free(img);
    ek_snapshot_free(ss);
    return rc;
}
