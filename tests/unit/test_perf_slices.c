/* AUX slicing: several AUX records per AUXTRACE buffer, buffers split over records, per-thread
 * queues, OVERWRITE (snapshot), size-0 and data-less AUX records, unreferenced buffers, raw
 * trace, mixed formats, truncated payloads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/perf.h"
#include "perfw.h"
#include "testutil.h"

#define ST (EK_PERF_SAMPLE_TID | EK_PERF_SAMPLE_TIME | EK_PERF_SAMPLE_CPU | EK_PERF_SAMPLE_ID)

static void start(pw *w)
{
    pw_init(w, 0, 0);
    pw_attr_desc a = {.type = 8, .sample_type = ST, .flags = EK_PERF_ATTR_FLAG_SAMPLE_ID_ALL};
    uint64_t ids[] = {1, 2, 3, 4};
    pw_attr(w, &a, ids, 4);
    const uint64_t info[] = {1,    (8ull << 32) | 2,
                             0,    EK_CS_ETM_MAGIC_ETMV4,
                             0,    7,
                             0x40, 0x10,
                             1,    2,
                             3,    4,
                             0x8c, EK_CS_ETM_MAGIC_ETE,
                             1,    8,
                             0x40, 0x12,
                             1,    2,
                             3,    4,
                             0x8c, 5};
    pw_auxtrace_info(w, 3, info, sizeof info / sizeof info[0]);
}

static pw_sid sid(uint32_t cpu, uint32_t tid, uint64_t time)
{
    pw_sid s = {tid, tid, time, 1 + cpu, 0, cpu};
    return s;
}

static uint8_t *pattern(uint8_t seed, size_t n)
{
    uint8_t *p = malloc(n);
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(seed + i);
    return p;
}

static ek_perf_file *finish(pw *w, uint8_t **buf, size_t *len, ek_diag_collector **c,
                            ek_perf_queues **q)
{
    *buf = pw_finish(w, len);
    pw_free(w);
    ek_perf_file *f = pw_open(*buf, *len, c);
    assert_non_null(f);
    ek_diag d = ek_diag_collector_sink(*c);
    assert_int_equal(ek_perf_queues_new(f, &d, q), 0);
    return f;
}

static void test_per_cpu(void **state)
{
    pw w;
    start(&w);
    pw_sid s0 = sid(0, 100, 10), s1 = sid(1, 100, 20);
    /* CPU 0: three AUX records, then their buffer (0x80 bytes at the end uncovered) */
    pw_aux(&w, ST, &s0, 0x000, 0x100, 0);
    pw_aux(&w, ST, &s0, 0x100, 0x100, EK_PERF_AUX_FLAG_TRUNCATED);
    uint8_t *pa = pattern(0x10, 0x300), *pb = pattern(0x80, 0x40), *pc = pattern(0xc0, 0x40);
    pw_auxtrace(&w, 0x300, 0, 0, 0, 0, 0, pa);
    pw_aux(&w, ST, &s0, 0x200, 0x80, EK_PERF_AUX_FLAG_PARTIAL | EK_PERF_AUX_FLAG_COLLISION);
    /* CPU 1: one buffer per AUX record, buffers before the records */
    pw_auxtrace(&w, 0x40, 0, 0, 1, 0, 1, pb);
    pw_auxtrace(&w, 0x40, 0x40, 0, 1, 0, 1, pc);
    pw_aux(&w, ST, &s1, 0x00, 0x40, 0);
    pw_aux(&w, ST, &s1, 0x40, 0x40, 0);
    pw_aux(&w, ST, &s1, 0x80, 0, 0); /* size 0: nothing */
    pw_auxtrace_index(&w, 0);
    uint8_t *buf;
    size_t len;
    ek_diag_collector *c;
    ek_perf_queues *q;
    ek_perf_file *f = finish(&w, &buf, &len, &c, &q);
    assert_int_equal(ek_diag_collector_count(c, EK_SEV_WARN), 0);
    assert_int_equal(ek_diag_collector_count_kind(c, "perf.buffer-uncovered"), 1);
    assert_int_equal(ek_perf_queues_count(q), 2);
    assert_int_equal(ek_perf_queues_nempty(q), 1);
    assert_int_equal(ek_perf_queues_nno_data(q), 0);
    const ek_perf_queue *q0 = ek_perf_queue_at(q, 0), *q1 = ek_perf_queue_at(q, 1);
    assert_int_equal(q0->cpu, 0);
    assert_false(q0->per_thread);
    assert_int_equal(q0->nslices, 3);
    assert_non_null(q0->etm);
    assert_int_equal(q0->etm->cfg.protocol, EK_PROTO_ETMV4);
    assert_int_equal(q1->cpu, 1);
    assert_int_equal(q1->nslices, 2);
    assert_int_equal(q1->etm->cfg.protocol, EK_PROTO_ETE);
    size_t n;
    const ek_perf_slice *all = ek_perf_queues_slices(q, &n);
    assert_int_equal(n, 5);
    assert_ptr_equal(q0->slices, all);
    assert_ptr_equal(q1->slices, all + 3);
    for (size_t i = 0; i < 3; i++) {
        const ek_perf_slice *s = &q0->slices[i];
        assert_int_equal(s->queue, 0);
        assert_int_equal(s->buffer, 0);
        assert_int_equal(s->buffer_pos, 0x100 * i);
        assert_int_equal(s->data_size, i < 2 ? 0x100 : 0x80);
        assert_int_equal(s->sid.cpu, 0);
        assert_int_equal(s->sid.time, 10);
        assert_true(s->formatted);
        assert_non_null(s->idmap);
        assert_true(s->idmap->global);
        assert_int_equal(s->idmap->cpu[0x10], 0);
        assert_int_equal(s->idmap->cpu[0x12], 1);
        assert_int_equal(s->problems, 0);
        size_t dl;
        const uint8_t *d = ek_perf_slice_data(f, s, &dl);
        assert_int_equal(dl, s->data_size);
        assert_memory_equal(d, pa + s->buffer_pos, dl);
    }
    assert_int_equal(q0->slices[1].flags, EK_PERF_AUX_FLAG_TRUNCATED);
    assert_int_equal(q0->slices[2].flags, EK_PERF_AUX_FLAG_PARTIAL | EK_PERF_AUX_FLAG_COLLISION);
    size_t dl;
    assert_memory_equal(ek_perf_slice_data(f, &q1->slices[0], &dl), pb, 0x40);
    assert_memory_equal(ek_perf_slice_data(f, &q1->slices[1], &dl), pc, 0x40);
    assert_int_equal(q1->slices[0].buffer, 1);
    assert_int_equal(q1->slices[1].buffer, 2);
    assert_int_equal(q1->slices[1].buffer_pos, 0);
    size_t nu;
    const ek_perf_buffer_use *use = ek_perf_queues_buffer_use(q, &nu);
    assert_int_equal(nu, 3);
    assert_int_equal(use[0].nslices, 3);
    assert_int_equal(use[0].covered, 0x280);
    assert_int_equal(use[1].covered, 0x40);
    ek_perf_queues_free(q);
    ek_perf_free(f);
    ek_diag_collector_free(c);
    free(buf);
    free(pa);
    free(pb);
    free(pc);
}

static void test_per_thread(void **state)
{
    pw w;
    start(&w);
    pw_sid a = sid(3, 500, 1), b = sid(2, 500, 2), other = sid(3, 501, 3);
    pw_auxtrace(&w, 0x80, 0, 0, 0, 500, -1, NULL);
    pw_auxtrace(&w, 0x40, 0, 0, 1, 502, -1, NULL);
    pw_aux(&w, ST, &a, 0, 0x40, 0);
    pw_aux(&w, ST, &b, 0x40, 0x40, 0);  /* the thread moved to CPU 2: same queue */
    pw_aux(&w, ST, &other, 0, 0x20, 0); /* tid 501 has no buffer */
    uint8_t *buf;
    size_t len;
    ek_diag_collector *c;
    ek_perf_queues *q;
    ek_perf_file *f = finish(&w, &buf, &len, &c, &q);
    assert_int_equal(ek_perf_queues_count(q), 2);
    const ek_perf_queue *q0 = ek_perf_queue_at(q, 0), *q1 = ek_perf_queue_at(q, 1);
    assert_true(q0->per_thread);
    assert_int_equal(q0->tid, 500);
    assert_int_equal(q0->cpu, -1);
    assert_null(q0->etm);
    assert_int_equal(q0->nslices, 2);
    assert_int_equal(q0->slices[1].sid.cpu, 2);
    assert_int_equal(q0->slices[1].buffer_pos, 0x40);
    assert_true(q1->per_thread);
    assert_int_equal(q1->tid, 501);
    assert_int_equal(q1->slices[0].problems, EK_SLICE_NO_DATA);
    assert_int_equal(ek_perf_queues_nno_data(q), 1);
    assert_int_equal(ek_diag_collector_count_kind(c, "perf.aux-no-data"), 1);
    assert_int_equal(ek_diag_collector_count_kind(c, "perf.buffer-unused"), 1); /* tid 502 */
    ek_perf_queues_free(q);
    ek_perf_free(f);
    ek_diag_collector_free(c);
    free(buf);
}

/* A per-thread AUX record emitted while another thread was current names that thread (777,
 * which has no buffer); its sample ID (2: the second of the attribute's IDs) names the event
 * of AUX ring 1, whose buffers are thread 502's: it is decoded there (perf 6.1 skips it). */
static void test_per_thread_other_thread(void **state)
{
    (void)state;
    pw w;
    start(&w);
    pw_sid own = sid(1, 502, 1), other = sid(1, 777, 2), stray = sid(5, 778, 3);
    pw_auxtrace(&w, 0x80, 0, 0, 0, 500, -1, NULL);
    pw_auxtrace(&w, 0x80, 0, 0, 1, 502, -1, NULL);
    pw_aux(&w, ST, &own, 0, 0x40, 0);
    pw_aux(&w, ST, &other, 0x40, 0x40, 0);
    pw_aux(&w, ST, &stray, 0, 0x40, 0); /* ID 6: no event of the attribute */
    uint8_t *buf;
    size_t len;
    ek_diag_collector *c;
    ek_perf_queues *q;
    ek_perf_file *f = finish(&w, &buf, &len, &c, &q);
    const ek_perf_queue *q502 = NULL;
    for (size_t i = 0; i < ek_perf_queues_count(q); i++)
        if (ek_perf_queue_at(q, i)->tid == 502) q502 = ek_perf_queue_at(q, i);
    assert_non_null(q502);
    assert_int_equal(q502->nslices, 2);
    assert_int_equal(q502->slices[1].problems, 0);
    assert_int_equal(q502->slices[1].buffer, 1);
    assert_int_equal(q502->slices[1].buffer_pos, 0x40);
    assert_int_equal(q502->slices[1].sid.tid, 777);
    assert_int_equal(ek_perf_queues_nno_data(q), 1); /* the stray one */
    assert_int_equal(ek_diag_collector_count_kind(c, "perf.aux-other-thread"), 1);
    ek_perf_queues_free(q);
    ek_perf_free(f);
    ek_diag_collector_free(c);
    free(buf);
}

static void test_overwrite_snapshot(void **state)
{
    pw w;
    start(&w);
    pw_sid s = sid(0, 7, 5);
    uint8_t *p1 = pattern(1, 0x100), *p2 = pattern(2, 0x80);
    /* the ring head is at 0x1100; the buffer holds the last 0x100 bytes (aux_size clamped) */
    pw_auxtrace(&w, 0x100, 0x1000, 0, 0, 0, 0, p1);
    pw_aux(&w, ST, &s, 0x1100, 0x200, EK_PERF_AUX_FLAG_OVERWRITE);
    /* second snapshot: exact size */
    pw_auxtrace(&w, 0x80, 0x1100, 0, 0, 0, 0, p2);
    pw_aux(&w, ST, &s, 0x1180, 0x80, EK_PERF_AUX_FLAG_OVERWRITE | EK_PERF_AUX_FLAG_TRUNCATED);
    uint8_t *buf;
    size_t len;
    ek_diag_collector *c;
    ek_perf_queues *q;
    ek_perf_file *f = finish(&w, &buf, &len, &c, &q);
    assert_int_equal(ek_diag_collector_count(c, EK_SEV_NOTE), 0);
    const ek_perf_queue *q0 = ek_perf_queue_at(q, 0);
    assert_int_equal(q0->nslices, 2);
    size_t dl;
    assert_int_equal(q0->slices[0].buffer, 0);
    assert_int_equal(q0->slices[0].data_size, 0x100);
    assert_memory_equal(ek_perf_slice_data(f, &q0->slices[0], &dl), p1, 0x100);
    assert_int_equal(q0->slices[1].buffer, 1);
    assert_int_equal(q0->slices[1].data_size, 0x80);
    assert_memory_equal(ek_perf_slice_data(f, &q0->slices[1], &dl), p2, 0x80);
    ek_perf_queues_free(q);
    ek_perf_free(f);
    ek_diag_collector_free(c);
    free(buf);
    free(p1);
    free(p2);
}

static void test_raw_mixed_and_missing(void **state)
{
    pw w;
    start(&w);
    pw_sid s1 = sid(1, 9, 1), s5 = sid(5, 9, 2), s0 = sid(0, 9, 3);
    pw_auxtrace(&w, 0x40, 0, 0, 1, 0, 1, NULL);
    pw_aux(&w, ST, &s1, 0, 0x20, EK_PERF_AUX_FLAG_CORESIGHT_RAW);
    pw_aux(&w, ST, &s1, 0x20, 0x20, 0); /* formatted after raw in the same queue */
    pw_auxtrace(&w, 0x20, 0, 0, 5, 0, 5, NULL);
    pw_aux(&w, ST, &s5, 0, 0x20, EK_PERF_AUX_FLAG_CORESIGHT_RAW); /* CPU 5 has no metadata */
    pw_aux(&w, ST, &s0, 0, 0x100, 0);                             /* no data at all */
    pw_auxtrace(&w, 0x10, 0, 0, 7, 0, 7, NULL);                   /* no AUX record */
    uint8_t *buf;
    size_t len;
    ek_diag_collector *c;
    ek_perf_queues *q;
    ek_perf_file *f = finish(&w, &buf, &len, &c, &q);
    assert_int_equal(ek_perf_queues_count(q), 3);
    const ek_perf_queue *qa = ek_perf_queue_at(q, 0), *qb = ek_perf_queue_at(q, 1),
                        *qc = ek_perf_queue_at(q, 2);
    assert_int_equal(qa->cpu, 0);
    assert_int_equal(qa->slices[0].problems, EK_SLICE_NO_DATA);
    assert_int_equal(qa->slices[0].data_size, 0);
    size_t dl;
    assert_null(ek_perf_slice_data(f, &qa->slices[0], &dl));
    assert_int_equal(dl, 0);
    assert_int_equal(qb->cpu, 1);
    assert_false(qb->formatted);
    assert_false(qb->slices[0].formatted);
    assert_null(qb->slices[0].idmap);
    assert_int_equal(qb->slices[0].problems, 0);
    assert_int_equal(qb->slices[1].problems, EK_SLICE_MIXED_FORMAT);
    assert_int_equal(qc->cpu, 5);
    assert_null(qc->etm);
    assert_int_equal(qc->slices[0].problems, EK_SLICE_NO_CONFIG);
    assert_int_equal(ek_diag_collector_count_kind(c, "perf.mixed-format"), 1);
    assert_int_equal(ek_diag_collector_count_kind(c, "perf.raw-no-config"), 1);
    assert_int_equal(ek_diag_collector_count_kind(c, "perf.aux-no-data"), 1);
    assert_int_equal(ek_diag_collector_count_kind(c, "perf.buffer-unused"), 1);
    assert_int_equal(ek_diag_collector_count(c, EK_SEV_ERROR), 0);
    ek_perf_queues_free(q);
    ek_perf_free(f);
    ek_diag_collector_free(c);
    free(buf);
}

/* The file ends inside the AUXTRACE payload: the slice keeps what is there. */
static void test_truncated_payload(void **state)
{
    pw w;
    start(&w);
    pw_sid s = sid(0, 1, 1);
    pw_aux(&w, ST, &s, 0, 0x100, 0);
    pw_aux(&w, ST, &s, 0x100, 0x100, 0);
    pw_auxtrace(&w, 0x200, 0, 0, 0, 0, 0, NULL);
    uint8_t *full;
    size_t len;
    full = pw_finish(&w, &len);
    pw_free(&w);
    size_t cut = len - 0x180; /* half of the first slice's bytes remain past ... */
    ek_diag_collector *c;
    ek_perf_file *f = pw_open(full, cut, &c);
    assert_non_null(f);
    ek_perf_queues *q;
    assert_int_equal(ek_perf_queues_new(f, NULL, &q), 0);
    const ek_perf_queue *q0 = ek_perf_queue_at(q, 0);
    assert_int_equal(q0->nslices, 2);
    assert_int_equal(q0->slices[0].data_size, 0x80);
    assert_int_equal(q0->slices[0].problems, EK_SLICE_CLIPPED);
    assert_int_equal(q0->slices[1].data_size, 0);
    assert_int_equal(q0->slices[1].problems, EK_SLICE_CLIPPED);
    assert_true(ek_diag_collector_count_kind(c, "perf.truncated") >= 1);
    ek_perf_queues_free(q);
    ek_perf_free(f);
    ek_diag_collector_free(c);
    free(full);
}

/* perf record --per-thread on TRBEs: raw trace in queues without a CPU. Two ETE CPUs whose
 * blocks differ in the trace ID only, or also in TRCIDR1 (idr1 != 0x4100fff0). */
static void start_ete2(pw *w, uint64_t sample_type, uint64_t idr1)
{
    pw_init(w, 0, 0);
    pw_attr_desc a = {.type = 8, .sample_type = sample_type, .flags = EK_PERF_ATTR_FLAG_SAMPLE_ID_ALL};
    uint64_t ids[] = {1, 2};
    pw_attr(w, &a, ids, 2);
    const uint64_t info[] = {1,          (8ull << 32) | 2,
                             0,          EK_CS_ETM_MAGIC_ETE,
                             0,          8,
                             0,          0x10,
                             0x28000ea1, 0x4100fff0,
                             0x488,      0,
                             0xcc,       0x47705a13,
                             EK_CS_ETM_MAGIC_ETE,
                             1,          8,
                             0,          0x12,
                             0x28000ea1, idr1,
                             0x488,      0,
                             0xaa,       0x47705a13};
    pw_auxtrace_info(w, 3, info, sizeof info / sizeof info[0]);
}

#define ST_NOCPU (EK_PERF_SAMPLE_TID | EK_PERF_SAMPLE_TIME | EK_PERF_SAMPLE_ID)

static int diag_says(const ek_diag_collector *c, const char *text)
{
    ek_sbuf sb = EK_SBUF_INIT;
    ek_diag_collector_summary(c, &sb, 1);
    int r = sb.p && strstr(sb.p, text) != NULL;
    ek_sbuf_free(&sb);
    return r;
}

static ek_perf_file *per_thread_raw(uint64_t sample_type, uint64_t idr1, int aux_cpu,
                                    uint8_t **buf, ek_diag_collector **c)
{
    pw w;
    start_ete2(&w, sample_type, idr1);
    pw_sid s0 = sid((uint32_t)aux_cpu, 500, 1), s1 = sid((uint32_t)aux_cpu, 500, 2);
    pw_auxtrace(&w, 0x80, 0, 0, 0, 500, -1, NULL);
    pw_aux(&w, sample_type, &s0, 0, 0x40, EK_PERF_AUX_FLAG_CORESIGHT_RAW);
    pw_aux(&w, sample_type, &s1, 0x40, 0x40, EK_PERF_AUX_FLAG_CORESIGHT_RAW);
    size_t len;
    *buf = pw_finish(&w, &len);
    pw_free(&w);
    ek_perf_file *f = pw_open(*buf, len, c);
    assert_non_null(f);
    return f;
}

/* Every CPU decodes alike (the trace ID and TRCAUTHSTATUS differ): the raw trace of the
 * per-thread queue decodes with the lowest CPU's block, its samples carry no CPU; one note. */
static void test_raw_per_thread_shared(void **state)
{
    (void)state;
    uint8_t *buf;
    ek_diag_collector *c;
    ek_perf_file *f = per_thread_raw(ST_NOCPU, 0x4100fff0, 0, &buf, &c);
    const ek_perf_cs_etm *cs = ek_perf_cs_etm_get(f);
    assert_int_equal(cs->ncpus, 2);
    assert_ptr_equal(cs->shared, &cs->cpus[0]);
    assert_int_equal(ek_perf_etm_cpu_decode_diff(&cs->cpus[0], &cs->cpus[1], NULL), 0);
    ek_diag d = ek_diag_collector_sink(c);
    ek_perf_queues *q;
    assert_int_equal(ek_perf_queues_new(f, &d, &q), 0);
    const ek_perf_queue *q0 = ek_perf_queue_at(q, 0);
    assert_true(q0->per_thread);
    assert_int_equal(q0->nslices, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(q0->slices[i].problems, EK_SLICE_SHARED_CONFIG);
        assert_ptr_equal(q0->slices[i].raw_etm, &cs->cpus[0]);
        assert_int_equal(q0->slices[i].raw_cpu, -1);
    }
    assert_int_equal(ek_diag_collector_count_kind(c, "perf.raw-shared-config"), 1);
    assert_int_equal(ek_diag_collector_count_kind(c, "perf.raw-no-config"), 0);
    assert_true(diag_says(c, "configuration all 2 CPUs share"));
    ek_perf_queues_free(q);
    ek_perf_free(f);
    ek_diag_collector_free(c);
    free(buf);
}

/* CPU 1's TRCIDR1 differs: nothing decodes without the user's choice, the diagnostic names
 * the CPU, the register and the remedy; --raw-cpu=1 (queues option) decodes with CPU 1's
 * block, still without a CPU in the samples. */
static void test_raw_per_thread_differ(void **state)
{
    (void)state;
    uint8_t *buf;
    ek_diag_collector *c;
    ek_perf_file *f = per_thread_raw(ST_NOCPU, 0x4100fff2, 0, &buf, &c);
    const ek_perf_cs_etm *cs = ek_perf_cs_etm_get(f);
    assert_null(cs->shared);
    ek_perf_cfg_diff df;
    assert_int_equal(ek_perf_etm_cpu_decode_diff(&cs->cpus[0], &cs->cpus[1], &df), 1);
    assert_string_equal(df.field, "TRCIDR1");
    assert_int_equal(df.a, 0x4100fff0);
    assert_int_equal(df.b, 0x4100fff2);
    ek_diag d = ek_diag_collector_sink(c);
    ek_perf_queues *q;
    assert_int_equal(ek_perf_queues_new(f, &d, &q), 0);
    const ek_perf_queue *q0 = ek_perf_queue_at(q, 0);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(q0->slices[i].problems, EK_SLICE_NO_CONFIG);
        assert_null(q0->slices[i].raw_etm);
    }
    assert_int_equal(ek_diag_collector_count_kind(c, "perf.raw-no-config"), 2);
    assert_true(diag_says(c, "CPU 1 differs from CPU 0 in TRCIDR1 (0x4100fff2 against 0x4100fff0)"));
    assert_true(diag_says(c, "--raw-cpu=N"));
    ek_perf_queues_free(q);
    ek_diag_collector_free(c);

    c = ek_diag_collector_new(4);
    d = ek_diag_collector_sink(c);
    ek_perf_queues_opts o = {1};
    assert_int_equal(ek_perf_queues_new_opts(f, &o, &d, &q), 0);
    q0 = ek_perf_queue_at(q, 0);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(q0->slices[i].problems, 0);
        assert_ptr_equal(q0->slices[i].raw_etm, &cs->cpus[1]);
        assert_int_equal(q0->slices[i].raw_cpu, -1);
    }
    assert_int_equal(ek_diag_collector_count(c, EK_SEV_NOTE), 0);
    ek_perf_queues_free(q);
    ek_diag_collector_free(c);

    /* a CPU the recording does not describe */
    c = ek_diag_collector_new(4);
    d = ek_diag_collector_sink(c);
    o.raw_cpu = 7;
    assert_int_equal(ek_perf_queues_new_opts(f, &o, &d, &q), 0);
    assert_int_equal(ek_perf_queue_at(q, 0)->slices[0].problems, EK_SLICE_NO_CONFIG);
    assert_int_equal(ek_diag_collector_count_kind(c, "perf.raw-cpu"), 2);
    ek_perf_queues_free(q);
    ek_perf_free(f);
    ek_diag_collector_free(c);
    free(buf);
}

/* The AUX records carry the CPU (sample_id with PERF_SAMPLE_CPU): its configuration decodes
 * and its samples carry it, however the CPUs differ. */
static void test_raw_per_thread_aux_cpu(void **state)
{
    (void)state;
    uint8_t *buf;
    ek_diag_collector *c;
    ek_perf_file *f = per_thread_raw(ST, 0x4100fff2, 1, &buf, &c);
    const ek_perf_cs_etm *cs = ek_perf_cs_etm_get(f);
    ek_diag d = ek_diag_collector_sink(c);
    ek_perf_queues *q;
    assert_int_equal(ek_perf_queues_new(f, &d, &q), 0);
    const ek_perf_queue *q0 = ek_perf_queue_at(q, 0);
    assert_true(q0->per_thread);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(q0->slices[i].problems, 0);
        assert_ptr_equal(q0->slices[i].raw_etm, &cs->cpus[1]);
        assert_int_equal(q0->slices[i].raw_cpu, 1);
    }
    assert_int_equal(ek_diag_collector_count_kind(c, "perf.raw-no-config"), 0);
    ek_perf_queues_free(q);
    ek_perf_free(f);
    ek_diag_collector_free(c);
    free(buf);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_per_cpu),
        cmocka_unit_test(test_per_thread),
        cmocka_unit_test(test_per_thread_other_thread),
        cmocka_unit_test(test_raw_per_thread_shared),
        cmocka_unit_test(test_raw_per_thread_differ),
        cmocka_unit_test(test_raw_per_thread_aux_cpu),
        cmocka_unit_test(test_overwrite_snapshot),
        cmocka_unit_test(test_raw_mixed_and_missing),
        cmocka_unit_test(test_truncated_payload),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
