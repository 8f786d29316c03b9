/* The real recordings in ../shared/testdata/perf: facts checked by hand with
 * `perf report -D -i FILE` (record counts, AUXTRACE_INFO) and `perf report -D` AUX lines
 * (slices), and the published files against their fixed-index copies. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/perf.h"
#include "testutil.h"

typedef struct sl {
    int cpu;
    uint64_t aux_offset, size, flags;
} sl;

typedef struct fact {
    const char *file;  /* under perf/files */
    const char *fixed; /* under perf/fixed-index */
    uint64_t attr_size;
    uint32_t attr_type;
    uint64_t header_version;
    uint32_t pmu_type;
    size_t ncpus;
    ek_protocol proto;
    uint32_t nparams;
    ek_perf_pid_source pid;
    uint64_t mmap, mmap2, comm, exit_, itrace, aux, auxtrace;
    ek_perf_index_kind published_index;
    size_t nempty, nno_data;
    int formatted;
    size_t nslices;
    sl slices[16];
} fact;

#define T EK_PERF_AUX_FLAG_TRUNCATED
static const fact facts[] = {
    {"perf_etm.data",
     "perf_etm.data.fixidx",
     144,
     8,
     1,
     8,
     8,
     EK_PROTO_ETMV4,
     7,
     EK_PID_CONTEXTIDR_EL1,
     0,
     59,
     2,
     1,
     2,
     4,
     1,
     EK_PERF_INDEX_SIMPLEPERF,
     0,
     0,
     1,
     4,
     {{7, 0x0, 0x50, 0}, {7, 0x50, 0x50, 0}, {7, 0xa0, 0x50, 0}, {7, 0xf0, 0x90, 0}}},
    {"perf_with_unformatted_trace.data",
     "perf_with_unformatted_trace.data.fixidx",
     144,
     8,
     1,
     8,
     2,
     EK_PROTO_ETE,
     8,
     EK_PID_CONTEXTIDR_EL2,
     0,
     124,
     2,
     1,
     5,
     7,
     1,
     EK_PERF_INDEX_SIMPLEPERF,
     6,
     0,
     0,
     1,
     {{0, 0, 0x4c, 0x100}}},
    {"perf_with_missing_aux_data.data",
     "perf_with_missing_aux_data.data",
     144,
     95,
     1,
     95,
     8,
     EK_PROTO_ETE,
     8,
     EK_PID_CONTEXTIDR_EL1,
     0,
     141,
     2,
     0,
     6,
     6,
     0,
     EK_PERF_INDEX_NONE,
     0,
     6,
     1,
     6,
     {{4, 0, 0x36b0, 0},
      {7, 0, 0xa6fc0, 0},
      {7, 0xa6fc0, 0x57870, 0},
      {7, 0xfe830, 0x74e30, 0},
      {7, 0x173660, 0x30, 0},
      {7, 0x173690, 0x30, 0}}},
    {"perf_kernel.data",
     "perf_kernel.data.fixidx",
     144,
     8,
     1,
     8,
     8,
     EK_PROTO_ETMV4,
     7,
     EK_PID_CONTEXTIDR_EL1,
     329,
     140,
     2,
     0,
     3,
     3,
     3,
     EK_PERF_INDEX_SIMPLEPERF,
     0,
     0,
     1,
     3,
     {{0, 0, 0x3ff0, T}, {6, 0, 0x3ff0, T}, {6, 0x3ff0, 0x1940, 0}}},
    {"perf.data@7ee5d6d9_2019",
     "perf.data@7ee5d6d9_2019.fixidx",
     128,
     7,
     0,
     7,
     8,
     EK_PROTO_ETMV4,
     7,
     EK_PID_CONTEXTIDR_EL1,
     14,
     54,
     2,
     1,
     4,
     14,
     4,
     EK_PERF_INDEX_SIMPLEPERF,
     0,
     0,
     1,
     14,
     {{0, 0x0, 0x2d20, 0},
      {0, 0x2d20, 0x3a830, 0},
      {0, 0x3d550, 0x50, 0},
      {0, 0x3d5a0, 0x50, 0},
      {0, 0x3d5f0, 0x24510, 0},
      {0, 0x61b00, 0x50, 0},
      {0, 0x61b50, 0x31820, 0},
      {0, 0x93370, 0x50, 0},
      {0, 0x933c0, 0x6150, 0},
      {0, 0x99510, 0xd0, 0},
      {2, 0, 0x1c50, 0},
      {3, 0, 0x50, 0},
      {3, 0x50, 0x50, 0},
      {4, 0, 0x6e90, 0}}},
    {"perf_kernel.data@16f41ffd_2021",
     "perf_kernel.data@16f41ffd_2021.fixidx",
     136,
     8,
     0,
     8,
     8,
     EK_PROTO_ETMV4,
     7,
     EK_PID_CONTEXTIDR_EL1,
     327,
     126,
     2,
     0,
     1,
     1,
     1,
     EK_PERF_INDEX_SIMPLEPERF,
     0,
     0,
     1,
     1,
     {{7, 0, 0x3ff0, T}}},
    {"perf_with_recording_process.data@561bf1b2_2020",
     "perf_with_recording_process.data@561bf1b2_2020.fixidx",
     136,
     8,
     0,
     8,
     8,
     EK_PROTO_ETMV4,
     7,
     EK_PID_CONTEXTIDR_EL1,
     325,
     23,
     2,
     0,
     4,
     4,
     2,
     EK_PERF_INDEX_SIMPLEPERF,
     2,
     0,
     1,
     2,
     {{6, 0, 0x3ff0, T}, {7, 0, 0x3ff0, T}}},
};

typedef struct opened {
    ek_perf_file *f;
    ek_perf_queues *q;
    ek_diag_collector *c;
} opened;

static int have(const char *rel)
{
    char *p = tu_shared_path(rel);
    free(p);
    return p != NULL;
}

static int open_path(const char *rel, opened *o)
{
    char *path = tu_shared_path(rel);
    if (!path) return 0;
    o->c = ek_diag_collector_new(8);
    ek_diag d = ek_diag_collector_sink(o->c);
    int rc = ek_perf_open(path, &d, &o->f);
    free(path);
    assert_int_equal(rc, 0);
    assert_int_equal(ek_perf_queues_new(o->f, &d, &o->q), 0);
    return 1;
}

static void close_opened(opened *o)
{
    ek_perf_queues_free(o->q);
    ek_perf_free(o->f);
    ek_diag_collector_free(o->c);
}

static void check_fact(const fact *x, opened *o, int fixed)
{
    const ek_perf_file *f = o->f;
    print_message("  %s%s\n", x->file, fixed ? " (fixed index)" : "");
    const ek_perf_header_info *h = ek_perf_header(f);
    assert_false(h->pipe);
    assert_false(h->swapped);
    assert_int_equal(h->attr_size, x->attr_size);
    assert_int_equal(ek_perf_nattrs(f), 1);
    assert_int_equal(ek_perf_attr_at(f, 0)->type, x->attr_type);
    const ek_perf_stats *st = ek_perf_stats_get(f);
    assert_int_equal(st->by_type[EK_PERF_RECORD_MMAP], x->mmap);
    assert_int_equal(st->by_type[EK_PERF_RECORD_MMAP2], x->mmap2);
    assert_int_equal(st->by_type[EK_PERF_RECORD_COMM], x->comm);
    assert_int_equal(st->by_type[EK_PERF_RECORD_EXIT], x->exit_);
    assert_int_equal(st->by_type[EK_PERF_RECORD_ITRACE_START], x->itrace);
    assert_int_equal(st->by_type[EK_PERF_RECORD_AUX], x->aux);
    assert_int_equal(st->by_type[EK_PERF_RECORD_AUXTRACE], x->auxtrace);
    assert_int_equal(st->by_type[EK_PERF_RECORD_AUXTRACE_INFO], 1);
    assert_int_equal(st->records, x->mmap + x->mmap2 + x->comm + x->exit_ + x->itrace + x->aux +
                                      x->auxtrace + 1);
    assert_int_equal(st->damaged, 0);
    assert_int_equal(st->resyncs, 0);
    /* sound files: notes only; the missing-data one warns once per data-less AUX record */
    assert_int_equal(ek_diag_collector_count(o->c, EK_SEV_ERROR), 0);
    if (x->nno_data)
        assert_int_equal(ek_diag_collector_count(o->c, EK_SEV_WARN),
                         ek_diag_collector_count_kind(o->c, "perf.aux-no-data"));
    else
        assert_int_equal(ek_diag_collector_count(o->c, EK_SEV_WARN), 0);

    const ek_perf_features *ft = ek_perf_features_get(f);
    ek_perf_index_kind want = x->published_index == EK_PERF_INDEX_NONE ? EK_PERF_INDEX_NONE
                              : fixed                                  ? EK_PERF_INDEX_PERF
                                                                       : x->published_index;
    assert_int_equal(ft->index_kind, want);
    assert_int_equal(ft->nindex, want == EK_PERF_INDEX_NONE ? 0 : x->auxtrace);
    assert_int_equal(ek_diag_collector_count_kind(o->c, "perf.index-simpleperf"),
                     want == EK_PERF_INDEX_SIMPLEPERF);
    assert_string_equal(ft->arch, "aarch64");

    const ek_perf_cs_etm *e = ek_perf_cs_etm_get(f);
    assert_true(e->present);
    assert_int_equal(e->header_version, x->header_version);
    assert_int_equal(e->pmu_type, x->pmu_type);
    assert_int_equal(e->ncpus, x->ncpus);
    assert_non_null(e->attr);
    assert_true(e->timeless); /* none of these recordings has CoreSight timestamps */
    assert_false(e->have_hw_id);
    for (size_t i = 0; i < e->ncpus; i++) {
        const ek_perf_etm_cpu *c = &e->cpus[i];
        assert_int_equal(c->cpu, i);
        assert_int_equal(c->cfg.protocol, x->proto);
        assert_int_equal(c->nparams, x->nparams);
        assert_int_equal(c->cfg.trace_id, 0x10 + 2 * i);
        assert_int_equal(c->id_source, EK_TRACEID_METADATA);
        assert_int_equal(c->pid_source, x->pid);
    }

    assert_int_equal(ek_perf_queues_nempty(o->q), x->nempty);
    assert_int_equal(ek_perf_queues_nno_data(o->q), x->nno_data);
    size_t n;
    const ek_perf_slice *s = ek_perf_queues_slices(o->q, &n);
    assert_int_equal(n, x->nslices);
    for (size_t i = 0; i < n; i++) {
        const ek_perf_queue *q = ek_perf_queue_at(o->q, s[i].queue);
        assert_int_equal(q->cpu, x->slices[i].cpu);
        assert_int_equal(s[i].sid.cpu, (uint32_t)x->slices[i].cpu);
        assert_int_equal(s[i].aux_offset, x->slices[i].aux_offset);
        assert_int_equal(s[i].aux_size, x->slices[i].size);
        assert_int_equal(s[i].flags, x->slices[i].flags);
        assert_int_equal(s[i].formatted, x->formatted);
        if (x->nno_data) {
            assert_int_equal(s[i].problems, EK_SLICE_NO_DATA);
            continue;
        }
        assert_int_equal(s[i].problems, 0);
        assert_int_equal(s[i].data_size, x->slices[i].size);
        size_t len;
        const uint8_t *d = ek_perf_slice_data(f, &s[i], &len);
        assert_non_null(d);
        assert_int_equal(len, x->slices[i].size);
        if (x->formatted) /* every slice starts at a frame boundary, with a frame sync */
            assert_int_equal(len % 16, 0);
    }
}

static void test_facts(void **state)
{
    if (!have("perf/files")) tu_skip("../shared/testdata/perf/files is absent");
    char rel[512];
    for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++) {
        opened o;
        snprintf(rel, sizeof rel, "perf/files/%s", facts[i].file);
        if (!open_path(rel, &o)) continue;
        check_fact(&facts[i], &o, 0);
        close_opened(&o);
        snprintf(rel, sizeof rel, "perf/fixed-index/%s", facts[i].fixed);
        if (!open_path(rel, &o)) continue;
        check_fact(&facts[i], &o, strcmp(facts[i].file, facts[i].fixed) != 0);
        close_opened(&o);
    }
}

/* The published file and its fixed-index copy give identical slices and buffers. */
static void test_published_equals_fixed(void **state)
{
    if (!have("perf/fixed-index")) tu_skip("../shared/testdata/perf/fixed-index is absent");
    char rel[512];
    for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++) {
        opened a, b;
        snprintf(rel, sizeof rel, "perf/files/%s", facts[i].file);
        if (!open_path(rel, &a)) continue;
        snprintf(rel, sizeof rel, "perf/fixed-index/%s", facts[i].fixed);
        if (!open_path(rel, &b)) {
            close_opened(&a);
            continue;
        }
        size_t na, nb;
        const ek_perf_slice *sa = ek_perf_queues_slices(a.q, &na);
        const ek_perf_slice *sb = ek_perf_queues_slices(b.q, &nb);
        assert_int_equal(na, nb);
        for (size_t k = 0; k < na; k++) {
            assert_int_equal(sa[k].queue, sb[k].queue);
            assert_int_equal(sa[k].aux_record, sb[k].aux_record);
            assert_int_equal(sa[k].aux_record_offset, sb[k].aux_record_offset);
            assert_int_equal(sa[k].aux_offset, sb[k].aux_offset);
            assert_int_equal(sa[k].aux_size, sb[k].aux_size);
            assert_int_equal(sa[k].flags, sb[k].flags);
            assert_int_equal(sa[k].sid.time, sb[k].sid.time);
            assert_int_equal(sa[k].sid.cpu, sb[k].sid.cpu);
            assert_int_equal(sa[k].sid.tid, sb[k].sid.tid);
            assert_int_equal(sa[k].buffer, sb[k].buffer);
            assert_int_equal(sa[k].buffer_pos, sb[k].buffer_pos);
            assert_int_equal(sa[k].data_offset, sb[k].data_offset);
            assert_int_equal(sa[k].data_size, sb[k].data_size);
            assert_int_equal(sa[k].formatted, sb[k].formatted);
            assert_int_equal(sa[k].problems, sb[k].problems);
            size_t la, lb;
            const uint8_t *da = ek_perf_slice_data(a.f, &sa[k], &la);
            const uint8_t *db = ek_perf_slice_data(b.f, &sb[k], &lb);
            assert_int_equal(la, lb);
            if (la) assert_memory_equal(da, db, la);
        }
        assert_int_equal(ek_perf_queues_count(a.q), ek_perf_queues_count(b.q));
        close_opened(&a);
        close_opened(&b);
    }
}

/* simpleperf's AutoFDO text output is not a perf.data file: nothing usable, one error. */
static void test_not_perf_data(void **state)
{
    char *path = tu_shared_path("perf/files/perf_inject.data");
    if (!path) tu_skip("../shared/testdata/perf/files/perf_inject.data is absent");
    ek_diag_collector *c = ek_diag_collector_new(4);
    ek_diag d = ek_diag_collector_sink(c);
    ek_perf_file *f = (ek_perf_file *)1;
    assert_int_equal(ek_perf_open(path, &d, &f), EK_ERR_FORMAT);
    assert_null(f);
    assert_int_equal(ek_diag_collector_count_kind(c, "perf.not-perf-data"), 1);
    ek_diag_collector_free(c);
    free(path);
}

/* Sideband iteration over a real file: file order, times from the trailers. */
static void test_sideband_real(void **state)
{
    opened o;
    if (!open_path("perf/files/perf_etm.data", &o))
        tu_skip("../shared/testdata/perf/files/perf_etm.data is absent");
    ek_perf_iter *it;
    assert_int_equal(ek_perf_iter_new(o.f, EK_PERF_ITER_SIDEBAND, NULL, &it), 0);
    ek_perf_record r;
    size_t n = 0, mmap2 = 0;
    uint64_t last = 0;
    while (ek_perf_iter_next(it, &r) == 0) {
        assert_true(ek_perf_is_sideband(r.type));
        assert_true(r.sid.present & EK_PERF_SAMPLE_TIME);
        assert_true(r.sid.time >= last); /* a single CPU: times never go back */
        last = r.sid.time;
        mmap2 += r.type == EK_PERF_RECORD_MMAP2;
        n++;
    }
    assert_int_equal(mmap2, 59);
    assert_int_equal(n, 59 + 2 + 2 + 4 + 1);
    ek_perf_iter_free(it);
    close_opened(&o);
}

int main(int argc, char **argv)
{
    if (!have("perf/files")) tu_skip_all("../shared/testdata/perf/files is absent");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_facts),
        cmocka_unit_test(test_published_equals_fixed),
        cmocka_unit_test(test_not_perf_data),
        cmocka_unit_test(test_sideband_real),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
