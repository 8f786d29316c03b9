/* Fuzz target: the perf.data reader (header, attrs, features, records, COMPRESSED streams),
 * the cs_etm configuration, AUX slicing into queues, the dump formatters, and the deformatter
 * and ETMv4/ETE packet parser over every slice (with the slice's CPU configuration).
 *
 * The input is the perf.data file. Checks: every record and slice lies inside the file,
 * iterators end, the per-record work is bounded, diagnostics are well formed.
 */
#include <stdlib.h>
#include <string.h>

#include "etmkit/etm4.h"
#include "etmkit/frame.h"
#include "etmkit/perf.h"
#include "etmkit/perf_dump.h"
#include "fuzz_common.h"

/* Deformat a slice and parse each trace ID's bytes with the configuration its ID map gives. */
static void parse_slice(const ek_perf_cs_etm *cs, const uint8_t *p, size_t n,
                        const ek_perf_slice *s, const ek_perf_queue *q)
{
    static ek_etm4_parser parsers[128];
    uint8_t state[128]; /* 0: not seen, 1: parsing, 2: no usable configuration */
    ek_etm4_config cfg;
    size_t npk = 0;
    const ek_etm4_packet *pkt;
    if (!s->formatted) {
        if (!q->etm || ek_etm4_config_from_source(&cfg, &q->etm->cfg) != 0)
            return;
        ek_etm4_parser_init(&parsers[0], &cfg);
        ek_etm4_feed(&parsers[0], p, n, 0);
        while (ek_etm4_next(&parsers[0], &pkt) > 0)
            FUZZ_CHECK(++npk <= n + 8, "more packets than bytes in a raw slice");
        ek_etm4_eot(&parsers[0]);
        while (ek_etm4_next(&parsers[0], &pkt) > 0)
            FUZZ_CHECK(++npk <= n + 8, "more packets than bytes in a raw slice");
        return;
    }
    memset(state, 0, sizeof state);
    ek_deformatter d;
    ek_dfmt_init(&d, EK_DFMT_MEM_ALIGN | EK_DFMT_RESET_4XFSYNC);
    ek_dfmt_feed(&d, p, n, 0);
    ek_dfmt_item it;
    while (ek_dfmt_next(&d, &it) > 0) {
        if (it.kind == EK_DFMT_RESET) {
            for (unsigned i = 0; i < 128; i++)
                if (state[i] == 1)
                    ek_etm4_parser_reset(&parsers[i]);
            continue;
        }
        if (it.kind != EK_DFMT_DATA || it.id >= 128)
            continue;
        if (state[it.id] == 0) {
            state[it.id] = 2;
            int16_t blk = s->idmap ? s->idmap->block[it.id] : -1;
            if (blk >= 0) {
                FUZZ_CHECK((size_t)blk < cs->ncpus, "ID map points past the CPU blocks");
                if (ek_etm4_config_from_source(&cfg, &cs->cpus[blk].cfg) == 0) {
                    ek_etm4_parser_init(&parsers[it.id], &cfg);
                    state[it.id] = 1;
                }
            }
        }
        if (state[it.id] != 1)
            continue;
        ek_etm4_feed(&parsers[it.id], it.data, it.len, it.index);
        while (ek_etm4_next(&parsers[it.id], &pkt) > 0)
            FUZZ_CHECK(++npk <= 2 * n + 64, "more packets than bytes in a slice");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_diag fd;
    fuzz_diag_begin(&fd);
    ek_perf_file *f = NULL;
    if (ek_perf_open_mem(data, size, "fuzz.data", &fd.sink, &f) != 0 || !f) {
        FUZZ_CHECK(f == NULL, "failed open returned an object");
        fuzz_diag_end(&fd);
        return 0;
    }
    ek_sbuf sb = {0};
    size_t fsize = 0;
    FUZZ_CHECK(ek_perf_bytes(f, &fsize) != NULL || size == 0, "no bytes");
    FUZZ_CHECK(fsize == size, "file size differs from the input");
    (void)ek_perf_header(f);
    for (size_t i = 0; i < ek_perf_nattrs(f); i++)
        FUZZ_CHECK(ek_perf_attr_at(f, i) != NULL, "attr index inside the count is NULL");
    (void)ek_perf_features_get(f);
    for (size_t i = 0; i < ek_perf_nfeature_sections(f); i++)
        (void)ek_perf_feature_section_at(f, i);
    (void)ek_perf_stats_get(f);

    for (int fmt = 0; fmt < 2; fmt++) {
        ek_perf_dump_file(&sb, f, (ek_perf_dump_format)fmt);
        ek_perf_dump_config(&sb, f, (ek_perf_dump_format)fmt);
        ek_sbuf_reset(&sb);
    }

    /* every record, then sideband only; the number of records is bounded by the size */
    for (unsigned flags = 0; flags < 2; flags++) {
        ek_perf_iter *it = NULL;
        if (ek_perf_iter_new(f, flags ? EK_PERF_ITER_SIDEBAND : 0, &fd.sink, &it) != 0)
            continue;
        ek_perf_record rec;
        size_t n = 0;
        int rc;
        while ((rc = ek_perf_iter_next(it, &rec)) == 0) {
            /* (decompressed streams can hold more records than the file has bytes / 8) */
            FUZZ_CHECK(++n <= 64 * (size / 8 + 16) + (64u << 20) / 8, "endless record iterator");
            ek_perf_dump_record(&sb, &rec, (ek_perf_dump_format)(n & 1));
            ek_sbuf_reset(&sb);
        }
        FUZZ_CHECK(rc == EK_ERR_EOS || rc == EK_ERR_NOMEM, "iterator ended with an odd status");
        ek_perf_iter_free(it);
    }

    const ek_perf_cs_etm *cs = ek_perf_cs_etm_get(f);
    FUZZ_CHECK(cs != NULL, "cs_etm_get returned NULL");
    for (size_t i = 0; i < cs->ncpus; i++)
        (void)ek_perf_cs_etm_cpu(f, cs->cpus[i].cpu);
    const ek_perf_time_conv *tc = ek_perf_time_conv_get(f);
    if (tc) {
        (void)ek_perf_counter_to_time(tc, 0);
        (void)ek_perf_counter_to_time(tc, UINT64_MAX);
    }
    size_t n;
    (void)ek_perf_aux_records(f, &n);
    (void)ek_perf_auxtrace_records(f, &n);
    (void)ek_perf_hwid_records(f, &n);

    ek_perf_queues *q = NULL;
    if (ek_perf_queues_new(f, &fd.sink, &q) == 0 && q) {
        for (size_t i = 0; i < ek_perf_queues_count(q); i++) {
            const ek_perf_queue *qu = ek_perf_queue_at(q, i);
            FUZZ_CHECK(qu != NULL, "queue index inside the count is NULL");
            for (int fmt = 0; fmt < 2; fmt++) {
                ek_perf_dump_queue(&sb, f, q, i, (ek_perf_dump_format)fmt);
                for (size_t k = 0; k < qu->nslices; k++)
                    ek_perf_dump_slice(&sb, f, q, &qu->slices[k], k, (ek_perf_dump_format)fmt);
                ek_perf_dump_queue_end(&sb, (ek_perf_dump_format)fmt);
                ek_sbuf_reset(&sb);
            }
            for (size_t k = 0; k < qu->nslices; k++) {
                const ek_perf_slice *s = &qu->slices[k];
                size_t len = 0;
                const uint8_t *p = ek_perf_slice_data(f, s, &len);
                if (!p)
                    continue;
                FUZZ_CHECK(p >= data && len <= size && (size_t)(p - data) <= size - len,
                           "slice data outside the file");
                parse_slice(cs, p, len, s, qu);
            }
        }
        ek_perf_dump_slice_summary(&sb, f, q, EK_PERF_DUMP_TEXT);
        ek_perf_dump_slice_summary(&sb, f, q, EK_PERF_DUMP_JSON);
        (void)ek_perf_queues_nempty(q);
        (void)ek_perf_queues_nno_data(q);
        for (size_t i = 0; i < ek_perf_queues_nidmaps(q); i++)
            (void)ek_perf_queues_idmap_at(q, i);
        ek_perf_queues_free(q);
    }
    ek_sbuf_free(&sb);
    ek_perf_free(f);
    fuzz_diag_end(&fd);
    return 0;
}
