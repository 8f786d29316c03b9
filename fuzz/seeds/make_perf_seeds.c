/* Writes hand-made perf.data seeds for the perf fuzz target into the folder given as argv[1]:
 * small files with a cs_etm AUXTRACE_INFO, sideband, AUX records and AUXTRACE buffers of
 * CoreSight frames (or raw ETE trace), including COMPRESSED streams, big-endian and pipe
 * mode. Built by fuzz/CMakeLists.txt (fuzz_make_perf_seeds); run it by hand to refresh
 * fuzz/corpus/perf/. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/perf.h"
#include "perfw.h"

#define ST (EK_PERF_SAMPLE_TID | EK_PERF_SAMPLE_TIME | EK_PERF_SAMPLE_CPU | EK_PERF_SAMPLE_ID)

static const char *outdir;

/* A small ETMv4 stream: A-sync, TRACE_INFO, TRACE_ON, 64-bit address, context, atoms. */
static const uint8_t etm4[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x01, 0x00, 0x04,
                               /* address 0x400178: _start of fuzz/corpus/elf/exe */
                               0x9d, 0x5e, 0x00, 0x40, 0, 0, 0, 0, 0, 0x81, 0x31, 0xf7, 0xf6, 0xf7,
                               0xdb, 0x95, 0x10, 0xf7, 0xfe};

/* CoreSight frames of 'id' carrying data (zero padded), 14 data bytes per frame. */
static size_t frames(uint8_t id, const uint8_t *d, size_t n, uint8_t *out)
{
    size_t o = 0;
    for (size_t pos = 0; pos < n; pos += 14) {
        uint8_t f[16] = {0};
        f[0] = (uint8_t)((id << 1) | 1);
        for (unsigned k = 0; k < 14; k++) {
            uint8_t b = pos + k < n ? d[pos + k] : 0;
            unsigned i = k + 1;
            if (i % 2 == 0) {
                f[i] = b & 0xfe;
                f[15] |= (uint8_t)((b & 1) << (i / 2));
            } else {
                f[i] = b;
            }
        }
        memcpy(out + o, f, 16);
        o += 16;
    }
    return o;
}

static void start(pw *w, int be, int pipe, int ete)
{
    pw_init(w, be, pipe);
    pw_attr_desc a = {.type = 8,
                      .sample_type = ST,
                      .config = (1ull << 12) | (1ull << 28),
                      .flags = EK_PERF_ATTR_FLAG_SAMPLE_ID_ALL | EK_PERF_ATTR_FLAG_MMAP2};
    uint64_t ids[] = {1, 2};
    pw_attr(w, &a, ids, 2);
    pw_attr_desc dummy = {.type = 1,
                          .config = 9,
                          .sample_type = ST,
                          .flags = EK_PERF_ATTR_FLAG_SAMPLE_ID_ALL | EK_PERF_ATTR_FLAG_MMAP2};
    uint64_t ids2[] = {3};
    pw_attr(w, &dummy, ids2, 1);
    if (ete) {
        const uint64_t info[] = {1,
                                 (8ull << 32) | 2,
                                 0,
                                 EK_CS_ETM_MAGIC_ETE,
                                 0,
                                 8,
                                 0x000018C1,
                                 0x10,
                                 0x28001EE1,
                                 0x4100FFF3,
                                 0x00000488,
                                 0,
                                 0xCC,
                                 0x47705A13,
                                 EK_CS_ETM_MAGIC_ETE,
                                 1,
                                 8,
                                 0x000018C1,
                                 0x12,
                                 0x28001EE1,
                                 0x4100FFF3,
                                 0x00000488,
                                 0,
                                 0xCC,
                                 0x47705A13};
        pw_auxtrace_info(w, 3, info, sizeof info / sizeof info[0]);
    } else {
        const uint64_t info[] = {1,          (8ull << 32) | 2,
                                 0,          EK_CS_ETM_MAGIC_ETMV4,
                                 0,          7,
                                 0x00001001, 0x10,
                                 0x28000EA1, 0x4100F403,
                                 0x00000488, 0,
                                 0xCC,       EK_CS_ETM_MAGIC_ETMV4,
                                 1,          7,
                                 0x00001001, 0x12,
                                 0x28000EA1, 0x4100F403,
                                 0x00000488, 0,
                                 0xCC};
        pw_auxtrace_info(w, 3, info, sizeof info / sizeof info[0]);
    }
    pw_time_conv(w, 10, 1000, 5, 0, 0, 1, 1, 0);
}

static void sideband(pw *w, uint32_t cpu, uint64_t t)
{
    pw_sid s = {100, 101, t, 3, 0, cpu};
    pw_comm(w, ST, &s, 100, 101, "loop");
    pw_mmap2(w, ST, &s, 100, 101, 0x400000, 0x1000, 0, "/bin/loop"); /* = corpus/elf/exe */
    pw_itrace_start(w, ST, &s, 100, 101);
}

static void save(pw *w, const char *name)
{
    size_t len;
    uint8_t *buf = pw_finish(w, &len);
    pw_free(w);
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", outdir, name);
    FILE *f = fopen(p, "wb");
    if (!f || fwrite(buf, 1, len, f) != len) {
        perror(p);
        exit(1);
    }
    fclose(f);
    free(buf);
}

/* A large file for the memory test (tests/scripts/limits_memory.sh): 'mib' MiB of formatted
 * trace for two CPUs in 1 MiB AUXTRACE buffers, each cut by 16 AUX records. The trace runs
 * the seed program's loop over and over (A-sync + TRACE_INFO + address every 4 KiB). */
static int big(int mib, const char *path)
{
    static uint8_t raw[4096], buf[1 << 20];
    size_t n = 0;
    while (n + 64 < sizeof raw) {
        if (n % 4096 == 0) {
            memcpy(raw + n, etm4, 26); /* A-sync, TRACE_INFO, TRACE_ON, address, context */
            n += 26;
        }
        raw[n++] = 0xf7; /* E: bl work */
        raw[n++] = 0xf6; /* N: b.lt */
        raw[n++] = 0xf7; /* E: ret */
    }
    while (n < sizeof raw)
        raw[n++] = 0xf6;
    pw w;
    start(&w, 0, 0, 0);
    sideband(&w, 0, 1);
    sideband(&w, 1, 1);
    for (int m = 0; m < mib; m++) {
        int cpu = m & 1;
        uint8_t id = cpu ? 0x12 : 0x10;
        size_t o = 0;
        while (o + 16 * ((sizeof raw + 13) / 14) <= sizeof buf)
            o += frames(id, raw, sizeof raw, buf + o);
        while (o < sizeof buf) { /* pad with frames of ID 0 */
            memset(buf + o, 0, 16);
            buf[o] = 0x01;
            o += 16;
        }
        pw_sid sd = {100, 101, 10 + (uint64_t)m, 1 + (uint64_t)cpu, 0, (uint32_t)cpu};
        uint64_t base = (uint64_t)(m / 2) << 20;
        for (int k = 0; k < 16; k++)
            pw_aux(&w, ST, &sd, base + (uint64_t)k * (sizeof buf / 16), sizeof buf / 16, 0);
        pw_auxtrace(&w, sizeof buf, base, 0, (uint32_t)cpu, 101, cpu, buf);
    }
    size_t len;
    uint8_t *out = pw_finish(&w, &len);
    pw_free(&w);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(out, 1, len, f) != len) {
        perror(path);
        return 1;
    }
    fclose(f);
    free(out);
    return 0;
}

/* Many small AUX records and AUXTRACE buffers (scaling checks): n of each, 16 trace bytes per
 * buffer, CPUs 0 and 1 alternating, every AUX record at the same offset (0) of its CPU's ring.
 * With huge, a last AUXTRACE record of CPU 0 at AUX offset 0 claims 2^40 bytes (none present),
 * so that it overlaps every other buffer of CPU 0. */
static int many(int n, const char *path, int huge)
{
    uint8_t fr[16];
    frames(0x10, etm4, 14, fr);
    pw w;
    start(&w, 0, 0, 0);
    sideband(&w, 0, 1);
    for (int i = 0; i < n; i++) {
        int cpu = i & 1;
        pw_sid sd = {100, 101, 10 + (uint64_t)i, 1 + (uint64_t)cpu, 0, (uint32_t)cpu};
        pw_aux(&w, ST, &sd, (uint64_t)(i / 2) * 16, 16, 0);
        pw_auxtrace(&w, 16, (uint64_t)(i / 2) * 16, 0, (uint32_t)cpu, 101, cpu, fr);
    }
    if (huge) pw_auxtrace_head(&w, (uint64_t)1 << 40, 0, 0, 0, 101, 0); /* none of its data */
    size_t len;
    uint8_t *out = pw_finish(&w, &len);
    pw_free(&w);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(out, 1, len, f) != len) {
        perror(path);
        return 1;
    }
    fclose(f);
    free(out);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--big") == 0) return big(atoi(argv[2]), argv[3]);
    if (argc == 4 && strcmp(argv[1], "--many") == 0) return many(atoi(argv[2]), argv[3], 0);
    if (argc == 4 && strcmp(argv[1], "--many-huge") == 0) return many(atoi(argv[2]), argv[3], 1);
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTDIR | --big MIB FILE | --many[-huge] N FILE\n", argv[0]);
        return 2;
    }
    outdir = argv[1];
    uint8_t fr[256], fr2[256];
    size_t nfr = frames(0x10, etm4, sizeof etm4, fr);
    size_t nfr2 = frames(0x12, etm4, sizeof etm4, fr2);
    pw w;

    /* per-CPU, formatted, two CPUs, AUX records split a buffer, one TRUNCATED */
    start(&w, 0, 0, 0);
    sideband(&w, 0, 10);
    pw_sid s0 = {100, 101, 20, 1, 0, 0}, s1 = {100, 101, 30, 2, 0, 1};
    pw_aux(&w, ST, &s0, 0, 32, 0);
    pw_aux(&w, ST, &s0, 32, nfr - 32, EK_PERF_AUX_FLAG_TRUNCATED);
    pw_aux(&w, ST, &s1, 0, nfr2, 0);
    pw_auxtrace(&w, nfr, 0, 0, 0, 101, 0, fr);
    pw_auxtrace(&w, nfr2, 0, 0, 1, 101, 1, fr2);
    pw_auxtrace_index(&w, 0);
    save(&w, "etm4-per-cpu");

    /* the same records inside a COMPRESSED stream */
    start(&w, 0, 0, 0);
    pw_compress_begin(&w, 0, 64, 256);
    sideband(&w, 0, 10);
    pw_aux(&w, ST, &s0, 0, nfr, 0);
    pw_compress_end(&w);
    pw_auxtrace(&w, nfr, 0, 0, 0, 101, 0, fr);
    save(&w, "etm4-compressed");

    /* raw (unformatted) ETE, per-thread queue (cpu -1), an AUX record of size 0 */
    start(&w, 0, 0, 1);
    sideband(&w, 0, 10);
    pw_sid s2 = {100, 101, 40, 1, 0, 0};
    pw_aux(&w, ST, &s2, 0, 0, EK_PERF_AUX_FLAG_CORESIGHT_RAW);
    pw_aux(&w, ST, &s2, 0, sizeof etm4, EK_PERF_AUX_FLAG_CORESIGHT_RAW);
    pw_hw_id(&w, ST, &s2, 0x10);
    pw_auxtrace(&w, sizeof etm4, 0, 0, 0, 101, -1, etm4);
    save(&w, "ete-raw-per-thread");

    /* raw ETE on CPU 1 */
    start(&w, 0, 0, 1);
    pw_aux(&w, ST, &s1, 0, sizeof etm4, EK_PERF_AUX_FLAG_CORESIGHT_RAW);
    pw_auxtrace(&w, sizeof etm4, 0, 0, 1, 101, 1, etm4);
    save(&w, "ete-raw-cpu1");

    /* big-endian file, OVERWRITE (snapshot mode) AUX record */
    start(&w, 1, 0, 0);
    pw_aux(&w, ST, &s0, nfr, nfr, EK_PERF_AUX_FLAG_OVERWRITE);
    pw_auxtrace(&w, nfr, 0, 0, 0, 101, 0, fr);
    save(&w, "etm4-big-endian-overwrite");

    /* pipe mode */
    start(&w, 0, 1, 0);
    sideband(&w, 1, 5);
    pw_aux(&w, ST, &s1, 0, nfr2, 0);
    pw_auxtrace(&w, nfr2, 0, 0, 1, 101, 1, fr2);
    save(&w, "etm4-pipe");
    return 0;
}
