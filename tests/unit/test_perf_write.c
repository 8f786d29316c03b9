/* The perf.data writer (etmkit/perf_write.h): every record kind it writes, its attributes
 * and features, read back through the library's reader field by field, in both byte orders,
 * file and pipe mode, plain and COMPRESSED; its limits and errors. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "etmkit/perf.h"
#include "etmkit/perf_write.h"
#include "etmkit/sbuf.h"
#include "testutil.h"

#define ST                                                                                         \
    (EK_PERF_SAMPLE_IDENTIFIER | EK_PERF_SAMPLE_TID | EK_PERF_SAMPLE_TIME | EK_PERF_SAMPLE_ID |    \
     EK_PERF_SAMPLE_STREAM_ID | EK_PERF_SAMPLE_CPU)
#define SAMPLE_ST                                                                                  \
    (EK_PERF_SAMPLE_IDENTIFIER | EK_PERF_SAMPLE_IP | EK_PERF_SAMPLE_TID | EK_PERF_SAMPLE_TIME |    \
     EK_PERF_SAMPLE_ADDR | EK_PERF_SAMPLE_ID | EK_PERF_SAMPLE_STREAM_ID | EK_PERF_SAMPLE_CPU |     \
     EK_PERF_SAMPLE_PERIOD | EK_PERF_SAMPLE_BRANCH_STACK)

static const uint64_t ids1[3] = {71, 72, 73};
static const uint64_t ids2[1] = {90};

static void attrs(ek_perf_attr *a)
{
    memset(a, 0, 2 * sizeof *a);
    a[0].type = 12;
    a[0].size = 136;
    a[0].config = 0x10004000;
    a[0].sample_period = 1;
    a[0].sample_type = ST;
    a[0].read_format = 4;
    a[0].flags = EK_PERF_ATTR_FLAG_SAMPLE_ID_ALL | EK_PERF_ATTR_FLAG_USE_CLOCKID | 0x3;
    a[0].wakeup_events = 7;
    a[0].bp_type = 2;
    a[0].config1 = 0x11;
    a[0].config2 = 0x22;
    a[0].branch_sample_type = 0x33;
    a[0].aux_watermark = 0x44;
    a[0].config3 = 0x55;
    a[0].clockid = 1;
    a[0].ids = ids1;
    a[0].nids = 3;
    a[1].type = 8; /* the samples' event */
    a[1].size = 136;
    a[1].sample_period = 1;
    a[1].sample_type = SAMPLE_ST;
    a[1].branch_sample_type = 0;
    a[1].flags = EK_PERF_ATTR_FLAG_SAMPLE_ID_ALL;
    a[1].ids = ids2;
    a[1].nids = 1;
}

/* the records, in file order; ids1[i % 3] in the trailers */
static int records(ek_perf_record *v)
{
    int n = 0;
    ek_perf_record *r;
#define NEW(t, m)                                                                                  \
    (r = &v[n], memset(r, 0, sizeof *r), r->type = (t), r->misc = (m), r->sid.pid = 100u + n,      \
     r->sid.tid = 200u + n, r->sid.time = 1000u + n, r->sid.id = ids1[n % 3],                      \
     r->sid.stream_id = 500u + n, r->sid.cpu = (uint32_t)n % 4, n++)
    NEW(EK_PERF_RECORD_MMAP, EK_PERF_MISC_KERNEL);
    r->u.mmap.pid = (uint32_t)-1;
    r->u.mmap.addr = 0xffff800008000000ull;
    r->u.mmap.len = 0x1000000;
    r->u.mmap.pgoff = 0xffff800008010000ull;
    r->u.mmap.filename = "[kernel.kallsyms]_text";
    NEW(EK_PERF_RECORD_MMAP2, EK_PERF_MISC_USER);
    r->u.mmap.pid = 5;
    r->u.mmap.tid = 6;
    r->u.mmap.addr = 0x400000;
    r->u.mmap.len = 0x2000;
    r->u.mmap.pgoff = 0x1000;
    r->u.mmap.maj = 8;
    r->u.mmap.min = 1;
    r->u.mmap.ino = 1234;
    r->u.mmap.ino_generation = 9;
    r->u.mmap.prot = 5;
    r->u.mmap.flags = 2;
    r->u.mmap.filename = "/usr/bin/a-program-name";
    NEW(EK_PERF_RECORD_MMAP2, EK_PERF_MISC_USER | EK_PERF_MISC_MMAP_BUILD_ID);
    r->u.mmap.pid = 7;
    r->u.mmap.tid = 7;
    r->u.mmap.addr = 0x7f0000;
    r->u.mmap.len = 0x3000;
    r->u.mmap.has_build_id = 1;
    r->u.mmap.build_id_size = 20;
    for (int i = 0; i < 20; i++)
        r->u.mmap.build_id[i] = (uint8_t)(0xa0 + i);
    r->u.mmap.prot = 7;
    r->u.mmap.flags = 0x22;
    r->u.mmap.filename = "/lib/b.so";
    NEW(EK_PERF_RECORD_COMM, EK_PERF_MISC_COMM_EXEC);
    r->u.comm.pid = 7;
    r->u.comm.tid = 8;
    r->u.comm.comm = "worker";
    NEW(EK_PERF_RECORD_FORK, 0);
    r->u.fork.pid = 10;
    r->u.fork.ppid = 11;
    r->u.fork.tid = 12;
    r->u.fork.ptid = 13;
    r->u.fork.time = 5555;
    NEW(EK_PERF_RECORD_EXIT, 0);
    r->u.fork.pid = 10;
    r->u.fork.ppid = 11;
    r->u.fork.tid = 12;
    r->u.fork.ptid = 13;
    r->u.fork.time = 6666;
    NEW(EK_PERF_RECORD_AUX, 0);
    r->u.aux.aux_offset = 0x40;
    r->u.aux.aux_size = 0x20;
    r->u.aux.flags = EK_PERF_AUX_FLAG_TRUNCATED | EK_PERF_AUX_FLAG_CORESIGHT_RAW;
    NEW(EK_PERF_RECORD_ITRACE_START, 0);
    r->u.itrace_start.pid = 14;
    r->u.itrace_start.tid = 15;
    NEW(EK_PERF_RECORD_SWITCH, EK_PERF_MISC_SWITCH_OUT);
    NEW(EK_PERF_RECORD_SWITCH_CPU_WIDE, EK_PERF_MISC_SWITCH_OUT | EK_PERF_MISC_SWITCH_OUT_PREEMPT);
    r->u.sw.next_prev_pid = 16;
    r->u.sw.next_prev_tid = 17;
    NEW(EK_PERF_RECORD_AUX_OUTPUT_HW_ID, 0);
    r->u.hw_id.hw_id = (1ull << 56) | (3u << 8) | 0x12;
    r->sid.cpu = 0; /* the CPU of the cs_etm block */
    NEW(EK_PERF_RECORD_LOST, 0);
    r->u.lost.id = 72;
    r->u.lost.lost = 9;
    NEW(EK_PERF_RECORD_LOST_SAMPLES, 0);
    r->u.lost_samples.lost = 19;
    NEW(EK_PERF_RECORD_TIME_CONV, 0);
    r->u.time_conv.time_shift = 31;
    r->u.time_conv.time_mult = 0x80000000ull;
    r->u.time_conv.time_zero = 500;
    r->u.time_conv.time_cycles = 0x100;
    r->u.time_conv.time_mask = 0xffffff;
    r->u.time_conv.cap_user_time_zero = 1;
    r->u.time_conv.cap_user_time_short = 1;
    r->u.time_conv.have_cycles = 1;
    NEW(EK_PERF_RECORD_TIME_CONV, 0); /* the old 32-byte record */
    r->u.time_conv.time_shift = 10;
    r->u.time_conv.time_mult = 3;
    r->u.time_conv.time_zero = 1000;
    NEW(EK_PERF_RECORD_FINISHED_ROUND, 0);
    NEW(EK_PERF_RECORD_FINISHED_INIT, 0);
#undef NEW
    return n;
}

static const uint8_t trace[24] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12,
                                  13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24};
static const ek_pw_branch branches[3] = {
    {0x401000, 0x402000, 0}, {0x403000, 0x401000, 1}, {0x405000, 0x404000, 2}};

static uint8_t *build(unsigned flags, int compressed, size_t *len)
{
    ek_pw *w;
    assert_int_equal(ek_pw_new_mem(flags, &w), 0);
    assert_int_equal(ek_pw_is_pipe(w), !!(flags & EK_PW_PIPE));
    ek_perf_attr a[2];
    attrs(a);
    assert_int_equal(ek_pw_attr(w, &a[0]), 0);
    assert_int_equal(ek_pw_attr(w, &a[1]), 0);
    const uint64_t info[] = {1,          (12ull << 32) | 1,
                             0,          EK_CS_ETM_MAGIC_ETMV4,
                             0,          8,
                             0x11,       0x10,
                             0x28000ea1, 0x4100f422,
                             0x20001088, 0,
                             0x8c,       1};
    assert_int_equal(ek_pw_auxtrace_info(w, EK_PERF_AUXTRACE_CS_ETM, info, 14), 0);
    if (compressed) assert_int_equal(ek_pw_compress_begin(w, compressed == 2, 64, 200), 0);
    ek_perf_record v[32];
    int n = records(v);
    for (int i = 0; i < n; i++)
        assert_int_equal(ek_pw_record(w, &v[i], ST), 0);
    ek_pw_sample s = {.ip = 0x401234,
                      .pid = 7,
                      .tid = 8,
                      .time = 4242,
                      .addr = 0x5000,
                      .id = 90,
                      .stream_id = 91,
                      .cpu = 3,
                      .period = 64,
                      .branches = branches,
                      .nbranches = 3};
    assert_int_equal(ek_pw_sample_rec(w, EK_PERF_MISC_USER, SAMPLE_ST, &s), 0);
    if (compressed) assert_int_equal(ek_pw_compress_end(w), 0);
    ek_perf_record at;
    memset(&at, 0, sizeof at);
    at.type = EK_PERF_RECORD_AUXTRACE;
    at.u.auxtrace.size = sizeof trace;
    at.u.auxtrace.offset = 0x40;
    at.u.auxtrace.reference = 77;
    at.u.auxtrace.idx = 2;
    at.u.auxtrace.tid = 8;
    at.u.auxtrace.cpu = 2;
    assert_int_equal(ek_pw_record(w, &at, 0), 0);
    assert_int_equal(ek_pw_payload(w, trace, 10), 0);
    assert_int_equal(ek_pw_payload(w, trace + 10, sizeof trace - 10), 0);
    assert_int_equal(ek_pw_feature_string(w, EK_PERF_FEAT_OSRELEASE, "6.1.0-test"), 0);
    assert_int_equal(ek_pw_feature_string(w, EK_PERF_FEAT_HOSTNAME, "host"), 0); /* out of order */
    ek_pw_feature_begin(w, EK_PERF_FEAT_BUILD_ID);
    uint8_t id[20];
    for (int i = 0; i < 20; i++)
        id[i] = (uint8_t)i;
    ek_pw_build_id(w, -1, EK_PERF_MISC_KERNEL, id, 20, "[kernel.kallsyms]");
    ek_pw_build_id(w, 7, EK_PERF_MISC_USER, id + 4, 16, "/usr/bin/a-program-name");
    assert_int_equal(ek_pw_feature_end(w), 0);
    ek_pw_feature_begin(w, EK_PERF_FEAT_NRCPUS);
    ek_pw_u32(w, 8);
    ek_pw_u32(w, 6);
    assert_int_equal(ek_pw_feature_end(w), 0);
    ek_pw_feature_begin(w, EK_PERF_FEAT_PMU_MAPPINGS);
    ek_pw_u32(w, 1);
    ek_pw_u32(w, 12);
    ek_pw_hstring(w, "cs_etm");
    assert_int_equal(ek_pw_feature_end(w), 0);
    if (!(flags & EK_PW_PIPE)) assert_int_equal(ek_pw_auxtrace_index(w, 0), 0);
    uint8_t *buf;
    assert_int_equal(ek_pw_close_mem(w, &buf, len), 0);
    return buf;
}

static void check_attr(const ek_perf_attr *x, const ek_perf_attr *y)
{
    assert_int_equal(x->type, y->type);
    assert_int_equal(x->size, y->size);
    assert_int_equal(x->config, y->config);
    assert_int_equal(x->sample_period, y->sample_period);
    assert_int_equal(x->sample_type, y->sample_type);
    assert_int_equal(x->read_format, y->read_format);
    assert_int_equal(x->flags, y->flags);
    assert_int_equal(x->wakeup_events, y->wakeup_events);
    assert_int_equal(x->bp_type, y->bp_type);
    assert_int_equal(x->config1, y->config1);
    assert_int_equal(x->config2, y->config2);
    assert_int_equal(x->branch_sample_type, y->branch_sample_type);
    assert_int_equal(x->aux_watermark, y->aux_watermark);
    assert_int_equal(x->config3, y->config3);
    assert_int_equal(x->clockid, y->clockid);
    assert_int_equal(x->nids, y->nids);
    for (size_t i = 0; i < x->nids; i++)
        assert_int_equal(x->ids[i], y->ids[i]);
}

static void check_record(const ek_perf_record *g, const ek_perf_record *e)
{
#define EQ(f) assert_int_equal(g->u.f, e->u.f)
    assert_int_equal(g->type, e->type);
    assert_int_equal(g->misc, e->misc);
    assert_false(g->damaged);
    switch (e->type) {
    case EK_PERF_RECORD_MMAP:
    case EK_PERF_RECORD_MMAP2:
        EQ(mmap.pid), EQ(mmap.tid), EQ(mmap.addr), EQ(mmap.len), EQ(mmap.pgoff);
        if (e->type == EK_PERF_RECORD_MMAP2) {
            EQ(mmap.has_build_id), EQ(mmap.prot), EQ(mmap.flags);
            if (e->u.mmap.has_build_id) {
                EQ(mmap.build_id_size);
                assert_memory_equal(g->u.mmap.build_id, e->u.mmap.build_id, 20);
            } else {
                EQ(mmap.maj), EQ(mmap.min), EQ(mmap.ino), EQ(mmap.ino_generation);
            }
        }
        assert_string_equal(g->u.mmap.filename, e->u.mmap.filename);
        break;
    case EK_PERF_RECORD_COMM:
        EQ(comm.pid), EQ(comm.tid);
        assert_string_equal(g->u.comm.comm, e->u.comm.comm);
        break;
    case EK_PERF_RECORD_FORK:
    case EK_PERF_RECORD_EXIT:
        EQ(fork.pid), EQ(fork.ppid), EQ(fork.tid), EQ(fork.ptid), EQ(fork.time);
        break;
    case EK_PERF_RECORD_AUX: EQ(aux.aux_offset), EQ(aux.aux_size), EQ(aux.flags); break;
    case EK_PERF_RECORD_ITRACE_START: EQ(itrace_start.pid), EQ(itrace_start.tid); break;
    case EK_PERF_RECORD_SWITCH_CPU_WIDE: EQ(sw.next_prev_pid), EQ(sw.next_prev_tid); break;
    case EK_PERF_RECORD_AUX_OUTPUT_HW_ID: EQ(hw_id.hw_id); break;
    case EK_PERF_RECORD_LOST: EQ(lost.id), EQ(lost.lost); break;
    case EK_PERF_RECORD_LOST_SAMPLES: EQ(lost_samples.lost); break;
    case EK_PERF_RECORD_TIME_CONV:
        EQ(time_conv.time_shift), EQ(time_conv.time_mult), EQ(time_conv.time_zero);
        EQ(time_conv.have_cycles);
        if (e->u.time_conv.have_cycles) {
            EQ(time_conv.time_cycles), EQ(time_conv.time_mask);
            EQ(time_conv.cap_user_time_zero), EQ(time_conv.cap_user_time_short);
        }
        break;
    default: break;
    }
#undef EQ
    if (e->type < EK_PERF_RECORD_HEADER_ATTR) {
        assert_int_equal(g->sid.present, ST);
        assert_int_equal(g->sid.pid, e->sid.pid);
        assert_int_equal(g->sid.tid, e->sid.tid);
        assert_int_equal(g->sid.time, e->sid.time);
        assert_int_equal(g->sid.id, e->sid.id);
        assert_int_equal(g->sid.stream_id, e->sid.stream_id);
        assert_int_equal(g->sid.cpu, e->sid.cpu);
    }
}

static uint64_t rd64(const uint8_t *p, int be)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[be ? 7 - i : i] << (8 * i);
    return v;
}

static void check(const uint8_t *buf, size_t len, unsigned flags, int compressed)
{
    int pipe = !!(flags & EK_PW_PIPE), be = !!(flags & EK_PW_BIG_ENDIAN);
    ek_diag_collector *c = ek_diag_collector_new(16);
    ek_diag d = ek_diag_collector_sink(c);
    ek_perf_file *f = NULL;
    assert_int_equal(ek_perf_open_mem(buf, len, "w.data", &d, &f), 0);
    if (ek_diag_collector_count(c, EK_SEV_WARN)) {
        ek_sbuf sb = EK_SBUF_INIT;
        ek_diag_collector_summary(c, &sb, 1);
        fprintf(stderr, "%.*s", (int)sb.len, sb.p);
        ek_sbuf_free(&sb);
    }
    assert_int_equal(ek_diag_collector_count(c, EK_SEV_WARN), 0);
    const ek_perf_header_info *h = ek_perf_header(f);
    assert_int_equal(h->pipe, pipe);
    assert_int_equal(h->swapped, be);
    ek_perf_attr a[2];
    attrs(a);
    assert_int_equal(ek_perf_nattrs(f), 2);
    check_attr(ek_perf_attr_at(f, 0), &a[0]);
    check_attr(ek_perf_attr_at(f, 1), &a[1]);
    const ek_perf_features *ft = ek_perf_features_get(f);
    assert_string_equal(ft->osrelease, "6.1.0-test");
    assert_string_equal(ft->hostname, "host");
    assert_int_equal(ft->have_nrcpus, 1);
    assert_int_equal(ft->nr_cpus_avail, 8);
    assert_int_equal(ft->nr_cpus_online, 6);
    assert_int_equal(ft->npmu_mappings, 1);
    assert_int_equal(ft->pmu_mappings[0].type, 12);
    assert_string_equal(ft->pmu_mappings[0].name, "cs_etm");
    assert_int_equal(ft->nbuild_ids, 2);
    assert_int_equal(ft->build_ids[0].pid, -1);
    assert_int_equal(ft->build_ids[0].misc & 7, EK_PERF_MISC_KERNEL);
    assert_int_equal(ft->build_ids[0].size, 20);
    assert_int_equal(ft->build_ids[0].id[19], 19);
    assert_string_equal(ft->build_ids[0].filename, "[kernel.kallsyms]");
    assert_int_equal(ft->build_ids[1].pid, 7);
    assert_int_equal(ft->build_ids[1].size, 16);
    assert_int_equal(ft->build_ids[1].id[0], 4);
    assert_int_equal(ft->build_ids[1].id[15], 19);
    assert_string_equal(ft->build_ids[1].filename, "/usr/bin/a-program-name");
    const ek_perf_cs_etm *cs = ek_perf_cs_etm_get(f);
    assert_int_equal(cs->present, 1);
    assert_int_equal(cs->header_version, 1);
    assert_int_equal(cs->pmu_type, 12);
    assert_int_equal(cs->ncpus, 1);
    assert_int_equal(cs->cpus[0].cpu, 0);
    assert_int_equal(cs->cpus[0].meta_trace_id, 0x10);
    assert_int_equal(cs->cpus[0].ts_source, 1);
    size_t nat;
    const ek_perf_auxtrace_rec *at = ek_perf_auxtrace_records(f, &nat);
    assert_int_equal(nat, 1);
    assert_int_equal(at[0].size, sizeof trace);
    assert_int_equal(at[0].avail, sizeof trace);
    assert_int_equal(at[0].aux_offset, 0x40);
    assert_int_equal(at[0].reference, 77);
    assert_int_equal(at[0].idx, 2);
    assert_int_equal(at[0].tid, 8);
    assert_int_equal(at[0].cpu, 2);
    assert_memory_equal(buf + at[0].data_offset, trace, sizeof trace);
    if (!pipe) {
        assert_int_equal(ft->index_kind, EK_PERF_INDEX_PERF);
        assert_int_equal(ft->nindex, 1);
        assert_int_equal(ft->index[0].offset, at[0].offset);
        assert_int_equal(ft->index[0].size, 48);
    }

    ek_perf_record v[32];
    int n = records(v), k = 0, samples = 0;
    ek_perf_iter *it;
    assert_int_equal(ek_perf_iter_new(f, 0, NULL, &it), 0);
    ek_perf_record r;
    while (ek_perf_iter_next(it, &r) == 0) {
        switch (r.type) {
        case EK_PERF_RECORD_HEADER_ATTR:
        case EK_PERF_RECORD_HEADER_FEATURE:
        case EK_PERF_RECORD_AUXTRACE_INFO:
        case EK_PERF_RECORD_AUXTRACE:
        case EK_PERF_RECORD_COMPRESSED:
        case 83: /* COMPRESSED2 */ continue;
        case EK_PERF_RECORD_SAMPLE: {
            samples++;
            assert_int_equal(r.compressed, compressed != 0);
            assert_int_equal(r.misc, EK_PERF_MISC_USER);
            assert_int_equal(r.u.sample.ip, 0x401234);
            assert_int_equal(r.u.sample.addr, 0x5000);
            assert_int_equal(r.u.sample.period, 64);
            assert_int_equal(r.sid.pid, 7);
            assert_int_equal(r.sid.tid, 8);
            assert_int_equal(r.sid.time, 4242);
            assert_int_equal(r.sid.id, 90);
            assert_int_equal(r.sid.stream_id, 91);
            assert_int_equal(r.sid.cpu, 3);
            assert_ptr_equal(r.sid.attr, ek_perf_attr_at(f, 1));
            /* the branch stack: after IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID, CPU,
             * PERIOD (9 words) */
            assert_int_equal(r.size, 8 + 9 * 8 + 8 + 3 * 24);
            assert_int_equal(rd64(r.raw + 8 + 9 * 8, be), 3);
            for (int i = 0; i < 3; i++) {
                const uint8_t *e = r.raw + 8 + 10 * 8 + 24 * (size_t)i;
                assert_int_equal(rd64(e, be), branches[i].from);
                assert_int_equal(rd64(e + 8, be), branches[i].to);
                assert_int_equal(rd64(e + 16, be), branches[i].flags);
            }
            continue;
        }
        default: break;
        }
        assert_true(k < n);
        assert_int_equal(r.compressed, compressed != 0);
        check_record(&r, &v[k]);
        k++;
    }
    assert_int_equal(k, n);
    assert_int_equal(samples, 1);
    ek_perf_iter_free(it);
    ek_perf_free(f);
    ek_diag_collector_free(c);
}

static void test_round_trip(void **state)
{
    (void)state;
    for (unsigned flags = 0; flags < 4; flags++)
        for (int compressed = 0; compressed < 3; compressed++) {
            size_t len;
            uint8_t *buf = build(flags, compressed, &len);
            check(buf, len, flags, compressed);
            free(buf);
        }
}

/* A file writer that fails says why through errno: a file that cannot be created, and a
 * write that fails (/dev/full) whether stdio finds it during the records (a write long
 * before the close) or only when flushing at the close. ek_pw_new_file's free() and the
 * close's later calls used to leave errno unrelated to the failure. */
static void test_file_errors(void **state)
{
    (void)state;
    ek_pw *w = (ek_pw *)1;
    errno = 0;
    assert_int_equal(ek_pw_new_file("/nonexistent-etmkit-dir/f.data", 0, &w), EK_ERR_IO);
    assert_null(w);
    assert_int_equal(errno, ENOENT);
    ek_perf_attr a[2];
    attrs(a);
    ek_perf_record v[32];
    int n = records(v);
    for (int big = 0; big < 2; big++) {
        assert_int_equal(ek_pw_new_file("/dev/full", 0, &w), 0);
        ek_pw_attr(w, &a[0]);
        for (int k = 0; k < (big ? 2000 : 1); k++)
            for (int i = 0; i < n; i++)
                ek_pw_record(w, &v[i], ST);
        if (big) assert_int_equal(ek_pw_error(w), EK_ERR_IO); /* found during the records */
        errno = 0;
        assert_int_equal(ek_pw_close(w), EK_ERR_IO);
        assert_int_equal(errno, ENOSPC);
    }
}

/* A file writer writes the same bytes as a memory writer. */
static void test_file_equals_mem(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    assert_non_null(dir);
    char path[4096];
    snprintf(path, sizeof path, "%s/f.data", dir);
    ek_pw *w;
    assert_int_equal(ek_pw_new_file(path, 0, &w), 0);
    ek_perf_attr a[2];
    attrs(a);
    ek_pw_attr(w, &a[0]);
    ek_perf_record v[32];
    int n = records(v);
    for (int i = 0; i < n; i++)
        ek_pw_record(w, &v[i], ST);
    ek_pw_feature_string(w, EK_PERF_FEAT_ARCH, "aarch64");
    assert_int_equal(ek_pw_close(w), 0);
    assert_int_equal(ek_pw_new_mem(0, &w), 0);
    ek_pw_attr(w, &a[0]);
    for (int i = 0; i < n; i++)
        ek_pw_record(w, &v[i], ST);
    ek_pw_feature_string(w, EK_PERF_FEAT_ARCH, "aarch64");
    uint8_t *mem;
    size_t len;
    assert_int_equal(ek_pw_close_mem(w, &mem, &len), 0);
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    uint8_t *got = malloc(len + 1);
    assert_int_equal(fread(got, 1, len + 1, fp), len);
    fclose(fp);
    assert_memory_equal(got, mem, len);
    free(got);
    free(mem);
    tu_rmtree(dir);
    free(dir);
}

/* Misuse and limits: the first error sticks and ek_pw_close reports it. */
static void test_errors(void **state)
{
    (void)state;
    ek_pw *w;
    uint8_t *buf;
    size_t len;
    /* a record larger than header.size can say */
    assert_int_equal(ek_pw_new_mem(0, &w), 0);
    ek_pw_begin(w, EK_PERF_RECORD_COMM, 0);
    ek_pw_zeros(w, 70000);
    assert_int_equal(ek_pw_end(w), EK_ERR_LIMIT);
    assert_int_equal(ek_pw_close_mem(w, &buf, &len), EK_ERR_LIMIT);
    assert_null(buf);
    /* an attribute after the data has started (file mode) */
    assert_int_equal(ek_pw_new_mem(0, &w), 0);
    ek_perf_attr a[2];
    attrs(a);
    ek_pw_begin(w, EK_PERF_RECORD_FINISHED_ROUND, 0);
    ek_pw_end(w);
    assert_int_equal(ek_pw_attr(w, &a[0]), EK_ERR_ARG);
    assert_int_equal(ek_pw_close_mem(w, &buf, &len), EK_ERR_ARG);
    /* a record left open */
    assert_int_equal(ek_pw_new_mem(0, &w), 0);
    ek_pw_begin(w, EK_PERF_RECORD_FINISHED_ROUND, 0);
    assert_int_equal(ek_pw_close_mem(w, &buf, &len), EK_ERR_ARG);
    /* a sample_type the writer does not know */
    assert_int_equal(ek_pw_new_mem(0, &w), 0);
    ek_pw_sample s;
    memset(&s, 0, sizeof s);
    assert_int_equal(ek_pw_sample_rec(w, 0, EK_PERF_SAMPLE_IP | (1ull << 5), &s),
                     EK_ERR_UNSUPPORTED);
    assert_int_equal(ek_pw_close_mem(w, &buf, &len), EK_ERR_UNSUPPORTED);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_file_equals_mem),
        cmocka_unit_test(test_file_errors),
        cmocka_unit_test(test_errors),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
