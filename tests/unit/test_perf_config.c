/* cs_etm configuration: AUXTRACE_INFO versions 0/1/2, ETMv3/PTM, ETMv4 and ETE blocks with
 * any parameter count, trace IDs from metadata or AUX_OUTPUT_HW_ID, PID source, event bits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/perf.h"
#include "perfw.h"
#include "testutil.h"

#define ST  (EK_PERF_SAMPLE_TID | EK_PERF_SAMPLE_TIME | EK_PERF_SAMPLE_CPU)
#define V4  EK_CS_ETM_MAGIC_ETMV4
#define V3  EK_CS_ETM_MAGIC_ETMV3
#define ETE EK_CS_ETM_MAGIC_ETE

typedef struct hwid {
    uint32_t cpu;
    uint64_t v;
    int no_cpu; /* written with a sample_type without CPU (different event) */
} hwid;

static ek_perf_file *make(const uint64_t *w, size_t nw, uint32_t info_type, uint64_t config,
                          const hwid *h, size_t nh, ek_diag_collector **c, uint8_t **buf)
{
    pw p;
    pw_init(&p, 0, 0);
    pw_attr_desc a = {.type = 8,
                      .config = config,
                      .sample_type = ST | EK_PERF_SAMPLE_IDENTIFIER,
                      .flags = EK_PERF_ATTR_FLAG_SAMPLE_ID_ALL};
    pw_attr_desc b = {.type = 1,
                      .sample_type = EK_PERF_SAMPLE_IDENTIFIER,
                      .flags = EK_PERF_ATTR_FLAG_SAMPLE_ID_ALL};
    uint64_t ia = 1, ib = 2;
    pw_attr(&p, &a, &ia, 1);
    pw_attr(&p, &b, &ib, 1);
    pw_auxtrace_info(&p, info_type, w, nw);
    for (size_t i = 0; i < nh; i++) {
        pw_sid s = {1, 1, 100 + i, h[i].no_cpu ? 2 : 1, 0, h[i].cpu};
        pw_hw_id(&p, h[i].no_cpu ? EK_PERF_SAMPLE_IDENTIFIER : a.sample_type | 0, &s, h[i].v);
    }
    size_t len;
    *buf = pw_finish(&p, &len);
    pw_free(&p);
    ek_perf_file *f = pw_open(*buf, len, c);
    assert_non_null(f);
    return f;
}

static void done(ek_perf_file *f, ek_diag_collector *c, uint8_t *buf)
{
    ek_perf_free(f);
    ek_diag_collector_free(c);
    free(buf);
}

static void test_v0_etmv4_and_ptm(void **state)
{
    const uint64_t w[] = {0,          (7ull << 32) | 3,   0,  V4,   0,   0x40, 0x10,   0x28000ea1,
                          0x4100f421, 0x20001088,         0,  0xcc, V3,  1,    0x4000, 0x12,
                          0x8c802000, 0x411fc0f0 | 0x300, V3, 2,    0x0, 0x14, 0,      0x41000000};
    ek_diag_collector *c;
    uint8_t *buf;
    ek_perf_file *f = make(w, sizeof w / sizeof w[0], 3, 0, NULL, 0, &c, &buf);
    assert_int_equal(ek_diag_collector_count(c, EK_SEV_NOTE), 1);
    assert_int_equal(ek_diag_collector_count_kind(c, "perf.cs-etm-attr"), 1);
    const ek_perf_cs_etm *e = ek_perf_cs_etm_get(f);
    assert_true(e->present);
    assert_int_equal(e->header_version, 0);
    assert_int_equal(e->pmu_type, 7);
    assert_int_equal(e->nr_cpu_blocks, 3);
    assert_int_equal(e->ncpus, 3);
    assert_null(e->attr); /* the event has type 8, the PMU 7 */
    const ek_perf_etm_cpu *c0 = ek_perf_cs_etm_cpu(f, 0), *c1 = ek_perf_cs_etm_cpu(f, 1),
                          *c2 = ek_perf_cs_etm_cpu(f, 2);
    assert_int_equal(c0->cfg.protocol, EK_PROTO_ETMV4);
    assert_int_equal(c0->nparams, 7);
    assert_int_equal(c0->cfg.trace_id, 0x10);
    assert_int_equal(c0->id_source, EK_TRACEID_METADATA);
    assert_int_equal(c0->cfg.regs.etm4.configr, 0x40);
    assert_int_equal(c0->cfg.regs.etm4.idr[0], 0x28000ea1);
    assert_int_equal(c0->cfg.regs.etm4.idr[1], 0x4100f421);
    assert_int_equal(c0->cfg.regs.etm4.idr[2], 0x20001088);
    assert_int_equal(c0->cfg.regs.etm4.authstatus, 0xcc);
    assert_int_equal(c0->cfg.regs.etm4.present & 0x107, 0x107);
    assert_true(c0->cfg.regs.etm4.present & EK_ETM4_HAVE_CONFIGR);
    assert_false(c0->cfg.regs.etm4.present & EK_ETM4_HAVE_DEVARCH);
    assert_int_equal(c0->ts_source, -1);
    assert_int_equal(c0->pid_source, EK_PID_CONTEXTIDR_EL1);
    assert_int_equal(c1->cfg.protocol, EK_PROTO_PTM);
    assert_int_equal(c1->cfg.trace_id, 0x12);
    assert_int_equal(c1->cfg.regs.etm3.etmcr, 0x4000);
    assert_int_equal(c1->pid_source, EK_PID_CONTEXTIDR_EL1);
    assert_int_equal(c2->cfg.protocol, EK_PROTO_ETMV3);
    assert_int_equal(c2->pid_source, EK_PID_NONE);
    assert_int_equal(c0->block_offset + 8 * 9, c1->block_offset);
    done(f, c, buf);
}

static void test_v1_param_counts(void **state)
{
    /* ETMv4 with 7 (pre-6.3) and 8 (TS_SOURCE) params, ETE with 8 and 9, one with 12 (extra),
     * one with 4 (missing). */
    const uint64_t w[] = {1,          (8ull << 32) | 6,
                          0,          V4,
                          0,          7,
                          0x40,       0x10,
                          1,          2,
                          3,          4,
                          0x8c,       V4,
                          1,          8,
                          0x840,      0x12,
                          1,          2,
                          3,          4,
                          0x8c,       1,
                          ETE,        2,
                          8,          0x8080,
                          0x14,       1,
                          2,          3,
                          4,          0xcc,
                          0x47715a13, ETE,
                          3,          9,
                          0x80,       0x16,
                          1,          2,
                          3,          4,
                          0xcc,       0x47715a13,
                          1,          V4,
                          4,          12,
                          0x0,        0x18,
                          1,          2,
                          3,          4,
                          0x8c,       0,
                          9,          9,
                          9,          9,
                          V4,         5,
                          4,          0x40,
                          0x1a,       1,
                          2};
    ek_diag_collector *c;
    uint8_t *buf;
    ek_perf_file *f =
        make(w, sizeof w / sizeof w[0], 3, EK_CS_ETM_CFG_TIMESTAMP, NULL, 0, &c, &buf);
    const ek_perf_cs_etm *e = ek_perf_cs_etm_get(f);
    assert_int_equal(e->ncpus, 6);
    assert_non_null(e->attr);
    assert_true(e->timestamp);
    assert_false(e->timeless);
    assert_false(e->all_ts_virtual); /* CPUs 0, 2, 5 do not say */
    const ek_perf_etm_cpu *p[6];
    for (uint32_t i = 0; i < 6; i++)
        p[i] = ek_perf_cs_etm_cpu(f, i);
    assert_int_equal(p[0]->ts_source, -1);
    assert_int_equal(p[1]->ts_source, 1);
    assert_int_equal(p[1]->cfg.regs.etm4.configr, 0x840);
    assert_int_equal(p[2]->cfg.protocol, EK_PROTO_ETE);
    assert_int_equal(p[2]->cfg.arch, EK_ARCH_V9A);
    assert_int_equal(p[2]->cfg.regs.etm4.devarch, 0x47715a13);
    assert_true(p[2]->cfg.regs.etm4.present & EK_ETM4_HAVE_DEVARCH);
    assert_int_equal(p[2]->ts_source, -1);
    assert_int_equal(p[2]->pid_source, EK_PID_CONTEXTIDR_EL2);
    assert_int_equal(p[3]->ts_source, 1);
    assert_int_equal(p[3]->pid_source, EK_PID_CONTEXTIDR_EL2); /* VMID alone */
    assert_int_equal(p[4]->nparams, 12);
    assert_int_equal(p[4]->ts_source, 0);
    assert_int_equal(p[4]->pid_source, EK_PID_NONE);
    assert_int_equal(p[5]->nparams, 4);
    assert_int_equal(p[5]->cfg.regs.etm4.idr[2], 0);
    assert_false(p[5]->cfg.regs.etm4.present & (1u << 2));
    assert_false(p[5]->cfg.regs.etm4.present & EK_ETM4_HAVE_AUTHSTATUS);
    assert_int_equal(p[5]->cfg.trace_id, 0x1a);
    assert_int_equal(ek_diag_collector_count_kind(c, "perf.cs-etm-params"), 2);
    assert_int_equal(ek_diag_collector_count(c, EK_SEV_ERROR), 0);
    done(f, c, buf);

    /* every CPU with TS_SOURCE 1: timestamps convert */
    const uint64_t w2[] = {1,     (8ull << 32) | 2,
                           0,     V4,
                           0,     8,
                           0x840, 0x10,
                           1,     2,
                           3,     4,
                           0x8c,  1,
                           ETE,   1,
                           9,     0x840,
                           0x12,  1,
                           2,     3,
                           4,     0x8c,
                           5,     1};
    f = make(w2, sizeof w2 / sizeof w2[0], 3, 0, NULL, 0, &c, &buf);
    e = ek_perf_cs_etm_get(f);
    assert_true(e->all_ts_virtual);
    assert_true(e->timeless); /* but the event has no timestamp bit */
    done(f, c, buf);
}

static void test_event_config_bits(void **state)
{
    const uint64_t w[] = {1, (8ull << 32) | 1, 1, V4, 0, 7, 0x19d8, 0x10, 1, 2, 3, 4, 0x8c};
    uint64_t cfg = EK_CS_ETM_CFG_BRANCH_BROADCAST | EK_CS_ETM_CFG_CYCACC |
                   EK_CS_ETM_CFG_CONTEXTID1 | EK_CS_ETM_CFG_CONTEXTID2 | EK_CS_ETM_CFG_TIMESTAMP |
                   EK_CS_ETM_CFG_RETSTACK;
    ek_diag_collector *c;
    uint8_t *buf;
    ek_perf_file *f = make(w, sizeof w / sizeof w[0], 3, cfg, NULL, 0, &c, &buf);
    const ek_perf_cs_etm *e = ek_perf_cs_etm_get(f);
    assert_int_equal(e->snapshot, 1);
    assert_int_equal(e->config, cfg);
    assert_true(e->branch_broadcast && e->cycacc && e->contextid1 && e->contextid2 &&
                e->timestamp && e->retstack);
    assert_false(e->timeless);
    done(f, c, buf);
    f = make(w, sizeof w / sizeof w[0], 3, EK_CS_ETM_CFG_CYCACC, NULL, 0, &c, &buf);
    e = ek_perf_cs_etm_get(f);
    assert_true(e->cycacc);
    assert_false(e->timestamp || e->retstack || e->contextid1);
    assert_true(e->timeless);
    done(f, c, buf);
}

static void test_hw_id_v0_0(void **state)
{
    /* perf 6.4-6.11: version 2, metadata IDs flagged unused, real IDs in HW_ID records */
    const uint64_t w[] = {2,
                          (8ull << 32) | 3,
                          0,
                          V4,
                          0,
                          8,
                          0x40,
                          0x10 | (1ull << 31),
                          1,
                          2,
                          3,
                          4,
                          0x8c,
                          1,
                          V4,
                          1,
                          8,
                          0x40,
                          0x12 | (1ull << 31),
                          1,
                          2,
                          3,
                          4,
                          0x8c,
                          1,
                          V4,
                          2,
                          8,
                          0x40,
                          0x14 | (1ull << 31),
                          1,
                          2,
                          3,
                          4,
                          0x8c,
                          1};
    const hwid h[] = {{0, 0x21, 0}, {1, 0x22, 0}, {1, 0x22, 0}};
    ek_diag_collector *c;
    uint8_t *buf;
    ek_perf_file *f = make(w, sizeof w / sizeof w[0], 3, 0, h, 3, &c, &buf);
    assert_int_equal(ek_diag_collector_count(c, EK_SEV_WARN), 0);
    const ek_perf_cs_etm *e = ek_perf_cs_etm_get(f);
    assert_int_equal(e->header_version, 2);
    assert_true(e->have_hw_id);
    assert_int_equal(e->hw_id_minor, 0);
    const ek_perf_etm_cpu *c0 = ek_perf_cs_etm_cpu(f, 0), *c1 = ek_perf_cs_etm_cpu(f, 1),
                          *c2 = ek_perf_cs_etm_cpu(f, 2);
    assert_true(c0->meta_unused_flag);
    assert_int_equal(c0->meta_trace_id, 0x10);
    assert_int_equal(c0->cfg.trace_id, 0x21);
    assert_int_equal(c0->id_source, EK_TRACEID_HW_ID);
    assert_int_equal(c1->cfg.trace_id, 0x22);
    assert_false(c0->have_sink);
    assert_int_equal(c2->id_source, EK_TRACEID_NONE); /* no HW_ID for CPU 2 */
    assert_int_equal(c2->cfg.trace_id, 0);
    done(f, c, buf);
}

static void test_hw_id_v0_1_and_errors(void **state)
{
    const uint64_t w[] = {2,    (8ull << 32) | 4,
                          0,    ETE,
                          0,    9,
                          0x40, 0x10,
                          1,    2,
                          3,    4,
                          0x8c, 5,
                          1,    ETE,
                          1,    9,
                          0x40, 0x12,
                          1,    2,
                          3,    4,
                          0x8c, 5,
                          1,    ETE,
                          2,    9,
                          0x40, 0x14,
                          1,    2,
                          3,    4,
                          0x8c, 5,
                          1,    ETE,
                          3,    9,
                          0x40, 0x16,
                          1,    2,
                          3,    4,
                          0x8c, 5,
                          1};
#define V01(id, sink) ((1ull << 56) | ((uint64_t)(sink) << 8) | (id))
    const hwid h[] = {
        {0, V01(0x10, 5), 0},        {1, V01(0x11, 5), 0}, {2, V01(0x10, 6), 0},
        {3, V01(0x11, 6), 0},        {2, V01(0x10, 7), 0}, /* sink change: warned, first kept */
        {7, V01(0x12, 5), 0},                              /* CPU without metadata */
        {0, (1ull << 60) | 0x13, 0},                       /* major version 1 */
        {1, V01(0x7a, 5), 0},                              /* invalid trace ID */
        {1, V01(0x15, 5), 1},                              /* no CPU in the trailer */
    };
    ek_diag_collector *c;
    uint8_t *buf;
    ek_perf_file *f = make(w, sizeof w / sizeof w[0], 3, 0, h, sizeof h / sizeof h[0], &c, &buf);
    assert_int_equal(ek_diag_collector_count_kind(c, "perf.hw-id"), 5);
    assert_int_equal(ek_diag_collector_count_kind(c, "perf.trace-id-clash"), 0);
    const ek_perf_cs_etm *e = ek_perf_cs_etm_get(f);
    assert_int_equal(e->hw_id_minor, 1);
    const ek_perf_etm_cpu *p[4];
    for (uint32_t i = 0; i < 4; i++) {
        p[i] = ek_perf_cs_etm_cpu(f, i);
        assert_true(p[i]->have_sink);
        assert_int_equal(p[i]->id_source, EK_TRACEID_HW_ID);
    }
    assert_int_equal(p[0]->sink_id, 5);
    assert_int_equal(p[2]->sink_id, 6);
    assert_int_equal(p[2]->cfg.trace_id, 0x10);
    assert_int_equal(p[3]->cfg.trace_id, 0x11);
    /* queues: one map per sink, the global one empty */
    ek_perf_queues *q;
    assert_int_equal(ek_perf_queues_new(f, NULL, &q), 0);
    assert_int_equal(ek_perf_queues_nidmaps(q), 3);
    const ek_perf_idmap *m0 = ek_perf_queues_idmap_at(q, 0), *m5 = ek_perf_queues_idmap_at(q, 1),
                        *m6 = ek_perf_queues_idmap_at(q, 2);
    assert_true(m0->global);
    for (int id = 0; id < 128; id++)
        assert_int_equal(m0->cpu[id], -1);
    assert_int_equal(m5->sink_id, 5);
    assert_int_equal(m5->cpu[0x10], 0);
    assert_int_equal(m5->cpu[0x11], 1);
    assert_int_equal(m6->cpu[0x10], 2);
    assert_int_equal(m6->cpu[0x11], 3);
    assert_int_equal(m6->block[0x11], 3);
    ek_perf_queues_free(q);
    done(f, c, buf);
}

static void test_damaged_info(void **state)
{
    ek_diag_collector *c;
    uint8_t *buf;
    /* unknown magic in v1: skipped by its count; the next block is read */
    const uint64_t w1[] = {1,    (8ull << 32) | 2,
                           0,    0x6060606060606060ull,
                           0,    2,
                           7,    7,
                           V4,   1,
                           7,    0x40,
                           0x12, 1,
                           2,    3,
                           4,    0x8c};
    ek_perf_file *f = make(w1, sizeof w1 / sizeof w1[0], 3, 0, NULL, 0, &c, &buf);
    assert_int_equal(ek_perf_cs_etm_get(f)->ncpus, 1);
    assert_non_null(ek_perf_cs_etm_cpu(f, 1));
    assert_int_equal(ek_diag_collector_count_kind(c, "perf.cs-etm-magic"), 1);
    done(f, c, buf);
    /* unknown magic in v0: the rest cannot be located */
    const uint64_t w0[] = {0,    (8ull << 32) | 2,
                           0,    V4,
                           0,    0x40,
                           0x10, 1,
                           2,    3,
                           4,    0x8c,
                           ETE,  1,
                           0x40, 0x12,
                           1,    2,
                           3,    4,
                           0x8c, 0};
    f = make(w0, sizeof w0 / sizeof w0[0], 3, 0, NULL, 0, &c, &buf);
    assert_int_equal(ek_perf_cs_etm_get(f)->ncpus, 1);
    assert_int_equal(ek_diag_collector_count(c, EK_SEV_ERROR), 1);
    done(f, c, buf);
    /* declared 3 blocks, the record ends inside the second */
    const uint64_t wt[] = {
        1, (8ull << 32) | 3, 0, V4, 0, 7, 0x40, 0x10, 1, 2, 3, 4, 0x8c, V4, 1, 7, 0x40, 0x12};
    f = make(wt, sizeof wt / sizeof wt[0], 3, 0, NULL, 0, &c, &buf);
    assert_int_equal(ek_perf_cs_etm_get(f)->ncpus, 2);
    assert_int_equal(ek_perf_cs_etm_cpu(f, 1)->nparams, 2);
    assert_true(ek_diag_collector_count(c, EK_SEV_WARN) >= 2);
    done(f, c, buf);
    /* head only */
    const uint64_t wh[] = {1, 5};
    f = make(wh, 2, 3, 0, NULL, 0, &c, &buf);
    assert_false(ek_perf_cs_etm_get(f)->present);
    assert_int_equal(ek_diag_collector_count(c, EK_SEV_ERROR), 1);
    done(f, c, buf);
    /* another AUXTRACE type (e.g. Arm SPE = 4) */
    const uint64_t ws[] = {8, 0};
    f = make(ws, 2, 4, 0, NULL, 0, &c, &buf);
    assert_false(ek_perf_cs_etm_get(f)->present);
    assert_int_equal(ek_diag_collector_count_kind(c, "perf.auxtrace-info-type"), 1);
    done(f, c, buf);
    /* newer header version: read as version 2 with a warning */
    const uint64_t w3[] = {3,    (8ull << 32) | 2,
                           0,    V4,
                           0,    7,
                           0x40, 0x10,
                           1,    2,
                           3,    4,
                           0x8c, V4,
                           1,    7,
                           0x40, 0x10,
                           1,    2,
                           3,    4,
                           0x8c};
    f = make(w3, sizeof w3 / sizeof w3[0], 3, 0, NULL, 0, &c, &buf);
    assert_int_equal(ek_perf_cs_etm_get(f)->ncpus, 2);
    assert_int_equal(ek_diag_collector_count_kind(c, "perf.cs-etm-version"), 1);
    assert_int_equal(ek_diag_collector_count_kind(c, "perf.trace-id-clash"), 1);
    done(f, c, buf);
    /* invalid metadata trace ID */
    const uint64_t wi[] = {1, (8ull << 32) | 1, 0, V4, 0, 7, 0x40, 0x70, 1, 2, 3, 4, 0x8c};
    f = make(wi, sizeof wi / sizeof wi[0], 3, 0, NULL, 0, &c, &buf);
    assert_int_equal(ek_perf_cs_etm_cpu(f, 0)->id_source, EK_TRACEID_NONE);
    assert_int_equal(ek_diag_collector_count_kind(c, "perf.trace-id"), 1);
    done(f, c, buf);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v0_etmv4_and_ptm),      cmocka_unit_test(test_v1_param_counts),
        cmocka_unit_test(test_event_config_bits),     cmocka_unit_test(test_hw_id_v0_0),
        cmocka_unit_test(test_hw_id_v0_1_and_errors), cmocka_unit_test(test_damaged_info),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
