/* Bad input: every real recording (and a compressed hand-built one) truncated at many points,
 * with size / offset fields set to 0, the file size and values near 2^64, and with random
 * byte flips. Each variant must open or fail cleanly, iterate, slice and list without a
 * crash, a hang or an allocation sized by the damaged field (ASan checks that in the
 * sanitizer run), and every diagnostic about a place in the file must name its offset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"
#include "etmkit/perf.h"
#include "etmkit/perf_dump.h"
#include "perfw.h"
#include "testutil.h"

typedef struct check_ctx {
    size_t size;
    unsigned events, warn_or_worse, bad;
    char first_bad[256];
} check_ctx;

/* Kinds that summarise rather than point at a place. */
static int placeless(const char *kind)
{
    static const char *const ok[] = {"perf.aux-empty",  "perf.attr-layout", "perf.cs-etm-attr",
                                     "perf.queue-mode", "perf.empty",       NULL};
    for (int i = 0; ok[i]; i++)
        if (!strcmp(kind, ok[i])) return 1;
    return 0;
}

static void check_fn(void *p, const ek_diag_event *ev)
{
    check_ctx *c = p;
    c->events++;
    if (ev->sev >= EK_SEV_WARN) c->warn_or_worse++;
    int bad = !ev->kind || !ev->msg || !ev->file || strchr(ev->msg, '\n');
    if (!bad && !placeless(ev->kind)) bad = ev->offset < 0 || (uint64_t)ev->offset > c->size;
    if (bad && !c->bad++)
        snprintf(c->first_bad, sizeof c->first_bad, "%s @%lld: %s", ev->kind ? ev->kind : "?",
                 (long long)ev->offset, ev->msg ? ev->msg : "?");
}

static unsigned long long g_runs;

/* Open, index, slice, iterate and list one variant. Returns the number of warnings. */
static unsigned exercise(const uint8_t *buf, size_t len)
{
    check_ctx c;
    memset(&c, 0, sizeof c);
    c.size = len;
    ek_diag d = {check_fn, &c};
    ek_perf_file *f = NULL;
    g_runs++;
    int rc = ek_perf_open_mem(buf, len, "bad.data", &d, &f);
    /* listing every variant costs most of the time: list one in four */
    int list = g_runs % 4 == 1;
    if (rc == 0) {
        ek_perf_queues *q = NULL;
        assert_int_equal(ek_perf_queues_new(f, &d, &q), 0);
        ek_sbuf out = EK_SBUF_INIT;
        ek_perf_dump_file(&out, f, EK_PERF_DUMP_TEXT);
        ek_perf_dump_config(&out, f, EK_PERF_DUMP_JSON);
        for (size_t i = 0; i < ek_perf_queues_count(q); i++) {
            const ek_perf_queue *qu = ek_perf_queue_at(q, i);
            ek_perf_dump_queue(&out, f, q, i, EK_PERF_DUMP_TEXT);
            for (size_t k = 0; k < qu->nslices; k++) {
                ek_perf_dump_slice(&out, f, q, &qu->slices[k], k, EK_PERF_DUMP_TEXT);
                size_t dl;
                const uint8_t *data = ek_perf_slice_data(f, &qu->slices[k], &dl);
                if (dl) { /* the bytes are inside the buffer */
                    assert_true(data >= buf && data + dl <= buf + len);
                    volatile uint8_t sink = data[0] ^ data[dl - 1];
                    (void)sink;
                }
            }
        }
        ek_perf_dump_slice_summary(&out, f, q, EK_PERF_DUMP_TEXT);
        ek_perf_iter *it;
        assert_int_equal(ek_perf_iter_new(f, 0, &d, &it), 0);
        ek_perf_record r;
        uint64_t n = 0;
        while ((rc = ek_perf_iter_next(it, &r)) == 0) {
            assert_true(r.offset < len);
            if (r.payload_offset >= 0)
                assert_true((uint64_t)r.payload_offset + r.payload_avail <= len);
            if (list) {
                ek_sbuf_reset(&out);
                ek_perf_dump_record(&out, &r, (n & 1) ? EK_PERF_DUMP_JSON : EK_PERF_DUMP_TEXT);
            }
            n++;
            assert_true(n <= len / 8 + 16); /* at most one record per 8 bytes */
        }
        assert_int_equal(rc, EK_ERR_EOS);
        assert_int_equal(n, ek_perf_stats_get(f)->records);
        ek_perf_iter_free(it);
        ek_sbuf_free(&out);
        ek_perf_queues_free(q);
        ek_perf_free(f);
    } else {
        assert_null(f);
        assert_true(c.events > 0); /* a refusal always says why */
    }
    if (c.bad) fail_msg("diagnostic without a usable place: %s", c.first_bad);
    return c.warn_or_worse;
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n + 1);
    if (fread(b, 1, (size_t)n, fp) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(fp);
    *len = (size_t)n;
    return b;
}

typedef struct sample {
    char *name;
    uint8_t *buf;
    size_t len;
} sample;

static sample samples[32];
static size_t nsamples;

static void add_sample(const char *name, uint8_t *buf, size_t len)
{
    if (nsamples < sizeof samples / sizeof samples[0]) {
        samples[nsamples].name = strdup(name);
        samples[nsamples].buf = buf;
        samples[nsamples].len = len;
        nsamples++;
    } else {
        free(buf);
    }
}

/* A compressed, pipe-mode and a big-endian file exercise the other code paths. */
static void add_synthetic(void)
{
    for (int variant = 0; variant < 3; variant++) {
        pw w;
        pw_init(&w, variant == 2, variant == 1);
        uint64_t st = EK_PERF_SAMPLE_TID | EK_PERF_SAMPLE_TIME | EK_PERF_SAMPLE_CPU |
                      EK_PERF_SAMPLE_IDENTIFIER;
        pw_attr_desc a = {.type = 8, .sample_type = st, .flags = EK_PERF_ATTR_FLAG_SAMPLE_ID_ALL};
        uint64_t ids[] = {1, 2};
        pw_attr(&w, &a, ids, 2);
        const uint64_t info[] = {2,
                                 (8ull << 32) | 2,
                                 0,
                                 EK_CS_ETM_MAGIC_ETMV4,
                                 0,
                                 8,
                                 0x40,
                                 0x10,
                                 1,
                                 2,
                                 3,
                                 4,
                                 0x8c,
                                 1,
                                 EK_CS_ETM_MAGIC_ETE,
                                 1,
                                 9,
                                 0x8080,
                                 0x12,
                                 1,
                                 2,
                                 3,
                                 4,
                                 0x8c,
                                 5,
                                 1};
        pw_auxtrace_info(&w, 3, info, sizeof info / sizeof info[0]);
        if (variant == 0) pw_compress_begin(&w, 0, 200, 2800);
        for (uint32_t i = 0; i < 40; i++) {
            pw_sid s = {i, i, 100 + i, 1 + (i & 1), 0, i & 1};
            pw_mmap2(&w, st, &s, i, i, 0x1000 * i, 0x1000, 0, "/lib/x.so");
            pw_comm(&w, st, &s, i, i, "thread");
            if (i % 8 == 0) pw_hw_id(&w, st, &s, (1ull << 56) | (3u << 8) | (0x10 + (i & 1)));
            pw_aux(&w, st, &s, 0x40 * (i / 2), 0x40, i % 5 == 0 ? EK_PERF_AUX_FLAG_TRUNCATED : 0);
        }
        if (variant == 0) pw_compress_end(&w);
        pw_auxtrace(&w, 0x40 * 20, 0, 0, 0, 0, 0, NULL);
        pw_auxtrace(&w, 0x40 * 20, 0, 0, 1, 0, 1, NULL);
        pw_time_conv(&w, 10, 3, 100, 5, 0xffff, 1, 1, 0);
        if (variant != 1) {
            pw_feature_string(&w, EK_PERF_FEAT_HOSTNAME, "h");
            pw_auxtrace_index(&w, 0);
        }
        size_t len;
        uint8_t *buf = pw_finish(&w, &len);
        pw_free(&w);
        add_sample(variant == 0   ? "synthetic-compressed"
                   : variant == 1 ? "synthetic-pipe"
                                  : "synthetic-be",
                   buf, len);
    }
}

static int setup(void **state)
{
    char *dir = tu_shared_path("perf/files");
    if (dir) {
        DIR *d = opendir(dir);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (strncmp(e->d_name, "perf", 4) || strstr(e->d_name, "inject")) continue;
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            size_t len;
            uint8_t *b = slurp(path, &len);
            if (b) add_sample(e->d_name, b, len);
        }
        if (d) closedir(d);
        free(dir);
    }
    add_synthetic();
    return 0;
}

static int teardown(void **state)
{
    for (size_t i = 0; i < nsamples; i++) {
        free(samples[i].name);
        free(samples[i].buf);
    }
    print_message("%llu variants exercised\n", g_runs);
    return 0;
}

static void test_sound_files(void **state)
{
    for (size_t i = 0; i < nsamples; i++)
        exercise(samples[i].buf, samples[i].len);
}

static void test_truncation(void **state)
{
    for (size_t i = 0; i < nsamples; i++) {
        const sample *s = &samples[i];
        uint8_t *copy = malloc(s->len + 1);
        memcpy(copy, s->buf, s->len);
        size_t step = s->len / 250 + 1;
        for (size_t cut = 0; cut < s->len; cut += (cut < 256 ? 1 : step)) {
            /* a fresh allocation of exactly 'cut' bytes: ASan sees any read past it */
            uint8_t *b = malloc(cut ? cut : 1);
            memcpy(b, copy, cut);
            unsigned warns = exercise(b, cut);
            /* a truncated file never passes silently (a pipe stream may just end) */
            if (cut >= 16 && ek_le64(s->buf + 8) != 16 && ek_bswap64(ek_le64(s->buf + 8)) != 16)
                if (!warns) fail_msg("%s cut at %zu: no warning", s->name, cut);
            free(b);
        }
        free(copy);
    }
}

static const uint64_t evil64[] = {0,
                                  1,
                                  8,
                                  0x7fffffffffffffffull,
                                  0xfffffffffffffff8ull,
                                  0xffffffffffffffffull,
                                  0x8000000000000000ull};

static void set64(uint8_t *p, uint64_t v, int be)
{
    if (be) v = ek_bswap64(v);
    ek_put_le64(p, v);
}

/* Mutate one u64 field with evil values and the file size. */
static void mutate64(const sample *s, uint8_t *b, size_t at, int be)
{
    if (at + 8 > s->len) return;
    uint64_t vals[sizeof evil64 / sizeof evil64[0] + 2];
    size_t nv = 0;
    for (size_t k = 0; k < sizeof evil64 / sizeof evil64[0]; k++)
        vals[nv++] = evil64[k];
    vals[nv++] = s->len;
    vals[nv++] = s->len + 1;
    for (size_t k = 0; k < nv; k++) {
        set64(b + at, vals[k], be);
        exercise(b, s->len);
    }
    memcpy(b + at, s->buf + at, 8);
}

static void mutate16(const sample *s, uint8_t *b, size_t at, int be)
{
    static const uint16_t vals[] = {0, 1, 7, 8, 16, 0xfff8, 0xffff};
    for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++) {
        uint16_t v = vals[k];
        b[at] = (uint8_t)(be ? v >> 8 : v);
        b[at + 1] = (uint8_t)(be ? v : v >> 8);
        exercise(b, s->len);
    }
    memcpy(b + at, s->buf + at, 2);
}

static void test_field_damage(void **state)
{
    for (size_t i = 0; i < nsamples; i++) {
        const sample *s = &samples[i];
        uint8_t *b = malloc(s->len);
        memcpy(b, s->buf, s->len);
        ek_perf_file *f = NULL;
        assert_int_equal(ek_perf_open_mem(s->buf, s->len, s->name, NULL, &f), 0);
        const ek_perf_header_info *h = ek_perf_header(f);
        int be = h->swapped;
        /* header: size, attr_size, attrs, data, event types, feature table entries */
        for (size_t at = 8; at < (h->pipe ? 16 : 72); at += 8)
            mutate64(s, b, at, be);
        if (!h->pipe) {
            uint64_t table = h->data.offset + h->data.size;
            for (size_t k = 0; k < ek_perf_nfeature_sections(f) * 2 && table + 8 * k + 8 <= s->len;
                 k++)
                mutate64(s, b, (size_t)table + 8 * k, be);
            /* the attrs' ids sections */
            for (size_t k = 0; k < ek_perf_nattrs(f); k++) {
                size_t at = (size_t)(h->attrs.offset + (k + 1) * h->attr_size - 16);
                mutate64(s, b, at, be);
                mutate64(s, b, at + 8, be);
            }
        }
        /* records: header.size of the first records and of every AUX/AUXTRACE(_INFO)/HW_ID,
         * payload sizes, AUX offsets and sizes, AUXTRACE_INFO words */
        ek_perf_iter *it;
        ek_perf_iter_new(f, 0, NULL, &it);
        ek_perf_record r;
        unsigned n = 0;
        while (ek_perf_iter_next(it, &r) == 0) {
            if (r.compressed) continue;
            size_t o = (size_t)r.offset;
            int interesting =
                r.type == EK_PERF_RECORD_AUX || r.type == EK_PERF_RECORD_AUXTRACE ||
                r.type == EK_PERF_RECORD_AUXTRACE_INFO ||
                r.type == EK_PERF_RECORD_AUX_OUTPUT_HW_ID || r.type == EK_PERF_RECORD_COMPRESSED ||
                r.type == EK_PERF_RECORD_HEADER_ATTR || r.type == EK_PERF_RECORD_HEADER_FEATURE;
            if (n++ < 24 || interesting) mutate16(s, b, o + 6, be);
            if (r.type == EK_PERF_RECORD_AUX || r.type == EK_PERF_RECORD_AUXTRACE) {
                mutate64(s, b, o + 8, be);
                mutate64(s, b, o + 16, be);
            }
            if (r.type == EK_PERF_RECORD_AUXTRACE_INFO)
                for (size_t w = 16; w < 16 + 8 * 16 && w + 8 <= r.size; w += 8)
                    mutate64(s, b, o + w, be);
        }
        ek_perf_iter_free(it);
        ek_perf_free(f);
        free(b);
    }
}

/* Deterministic random byte damage. */
static void test_random_damage(void **state)
{
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < nsamples; i++) {
        const sample *s = &samples[i];
        uint8_t *b = malloc(s->len);
        for (int round = 0; round < 60; round++) {
            memcpy(b, s->buf, s->len);
            int flips = 1 + round % 8;
            for (int k = 0; k < flips; k++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                /* bias towards the headers and records, where the structure is */
                size_t lim = round & 1 ? s->len : (s->len < 16384 ? s->len : 16384);
                b[x % lim] ^= (uint8_t)(x >> 32 | 1);
            }
            exercise(b, s->len);
        }
        free(b);
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sound_files),
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_field_damage),
        cmocka_unit_test(test_random_damage),
    };
    return tu_run_group(argc, argv, tests, setup, teardown);
}
