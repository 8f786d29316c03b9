/* Fuzz target: the perf.data reader (header, attrs, features, records, COMPRESSED streams),
 * the cs_etm configuration, AUX slicing into queues, the dump formatters, and the decode tree
 * (deformatter and ETMv4/ETE packet parsers) over every slice of every queue with the slice's
 * trace ID map.
 *
 * The input is the perf.data file. Checks: every record and slice lies inside the file,
 * iterators end, the per-record work is bounded, diagnostics are well formed.
 */
#include <stdlib.h>
#include <string.h>

#include "etmkit/decode.h"
#include "etmkit/perf.h"
#include "etmkit/perf_dump.h"
#include "fuzz_common.h"

/* Every slice of a queue through one decode tree, as the session decodes them (perf model:
 * the slice's trace ID map, a reset per slice, partial packets flushed at its end), packets
 * only, then the end of trace. */
static void parse_queue(const ek_perf_file *f, const ek_perf_cs_etm *cs, const ek_perf_queue *q,
                        const uint8_t *file, size_t size)
{
    ek_decode_config c;
    ek_decode_config_init(&c);
    c.flags = EK_DECODE_PACKETS | EK_DECODE_UNDECODED;
    c.model = EK_DECODE_MODEL_PERF;
    ek_decode *t;
    if (ek_decode_new(&c, &t) != 0) return;
    if (ek_decode_add_perf_cpus(t, cs) != 0) {
        ek_decode_free(t);
        return;
    }
    for (size_t k = 0; k < q->nslices; k++) {
        const ek_perf_slice *s = &q->slices[k];
        size_t n = 0;
        const uint8_t *p = ek_perf_slice_data(f, s, &n);
        if (!p) continue;
        FUZZ_CHECK(p >= file && n <= size && (size_t)(p - file) <= size - n,
                   "slice data outside the file");
        const int raw = ek_decode_bind_perf_slice(t, cs, q, s);
        if (raw > 0) FUZZ_CHECK(!s->formatted, "a raw trace ID for a formatted slice");
        ek_decode_reset(t);
        ek_decode_feed(t, p, n, 0);
        size_t npk = 0, nbytes = 0;
        ek_decode_item it;
        for (int pass = 0; pass < 2; pass++) {
            while (ek_decode_next(t, &it) > 0) {
                if (it.kind == EK_DI_PACKET) {
                    FUZZ_CHECK(++npk <= 2 * n + 64, "more packets than bytes in a slice");
                    FUZZ_CHECK(it.packet.index <= n, "packet index past the slice");
                    FUZZ_CHECK(ek_decode_has_decoder(t, it.trace_id), "packet without decoder");
                } else if (it.kind == EK_DI_UNDECODED) {
                    nbytes += it.len;
                    FUZZ_CHECK(nbytes <= n, "more undecoded bytes than the slice has");
                }
            }
            if (!pass) ek_decode_flush(t);
        }
    }
    ek_decode_end(t);
    ek_decode_item it;
    while (ek_decode_next(t, &it) > 0)
        FUZZ_CHECK(it.kind == EK_DI_PACKET || it.kind == EK_DI_EOT, "odd item at the end");
    ek_decode_free(t);
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
        if (ek_perf_iter_new(f, flags ? EK_PERF_ITER_SIDEBAND : 0, &fd.sink, &it) != 0) continue;
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
            parse_queue(f, cs, qu, data, size);
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
