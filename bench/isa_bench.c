/* Instruction classifier throughput.
 *
 *   isa_bench [A64-image [T32-image]] [--sweep]
 *
 * Defaults: $ETMKIT_SHARED/testdata/opencsd/snapshots/bugfix-exact-match/cc1.text_dump.bin
 * (1.9 MB of gcc's cc1, A64) and armv8_1m_branches/range1.bin (T32, Cortex-M55). Reports the
 * best of 5 runs, in million instructions per second, for:
 *   classify   ek_isa_classify() on every word
 *   fast       ek_isa_a64_is_plain() first, ek_isa_classify() for the rest (decoder loop)
 *   scan       ek_isa_next_waypoint() from waypoint to waypoint over the whole image
 *   --sweep    ek_isa_classify() on all 2^32 A64 words (takes a while)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "etmkit/isa.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* CPU time: robust on a shared machine */
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint8_t *load(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = n > 0 ? malloc((size_t)n) : NULL;
    if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        fclose(f);
        return NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}

static volatile uint64_t sink;

static void report(const char *what, double best, uint64_t ninsn, const char *extra)
{
    printf("  %-10s %8.1f M instr/s  (%.2f ns/instr)%s\n", what, (double)ninsn / best / 1e6,
           best * 1e9 / (double)ninsn, extra);
}

static void bench_a64(const uint8_t *img, size_t len)
{
    ek_isa_cfg cfg;
    ek_isa_cfg_init(&cfg, EK_ARCH_V8A, EK_PROFILE_A, EK_ISA_OPT_WFX_BRANCH);
    size_t nw = len / 4;
    uint32_t *w = malloc(nw * 4);
    memcpy(w, img, nw * 4);
    const int reps = (int)(200000000 / (nw ? nw : 1)) + 1;
    uint64_t waypoints = 0, plain = 0;
    for (size_t i = 0; i < nw; i++)
        plain += ek_isa_a64_is_plain(w[i]) != 0;

    double best = 1e9;
    for (int run = 0; run < 5; run++) {
        double t0 = now();
        uint64_t acc = 0;
        for (int r = 0; r < reps; r++)
            for (size_t i = 0; i < nw; i++) {
                ek_insn in;
                ek_isa_classify(w[i], EK_ISA_A64, 0x400000 + i * 4, &cfg, &in);
                acc += in.type;
            }
        sink = acc;
        double t = now() - t0;
        if (t < best) best = t;
    }
    char extra[128];
    snprintf(extra, sizeof extra, "  %.1f%% take the inline fast path",
             100.0 * (double)plain / (double)nw);
    report("classify", best, (uint64_t)reps * nw, extra);

    best = 1e9;
    for (int run = 0; run < 5; run++) {
        double t0 = now();
        uint64_t acc = 0;
        for (int r = 0; r < reps; r++)
            for (size_t i = 0; i < nw; i++) {
                if (ek_isa_a64_is_plain(w[i])) continue;
                ek_insn in;
                ek_isa_classify(w[i], EK_ISA_A64, 0x400000 + i * 4, &cfg, &in);
                acc += in.type;
            }
        sink = acc;
        double t = now() - t0;
        if (t < best) best = t;
    }
    report("fast", best, (uint64_t)reps * nw, "");

    best = 1e9;
    for (int run = 0; run < 5; run++) {
        double t0 = now();
        uint64_t n = 0;
        waypoints = 0;
        for (int r = 0; r < reps; r++) {
            size_t off = 0;
            while (off < nw * 4) {
                ek_isa_scan sc;
                int f = ek_isa_next_waypoint(img + off, nw * 4 - off, EK_ISA_A64, 0x400000 + off,
                                             &cfg, NULL, &sc);
                n += sc.count;
                if (f != 1) break;
                waypoints++;
                off += sc.offset + 4;
            }
        }
        sink = n;
        double t = now() - t0;
        if (t < best) best = t;
    }
    snprintf(extra, sizeof extra, "  %.1f instructions per waypoint",
             (double)nw * reps / (double)waypoints);
    report("scan", best, (uint64_t)reps * nw, extra);
    free(w);
}

static void bench_t32(const uint8_t *img, size_t len)
{
    ek_isa_cfg cfg;
    ek_isa_cfg_init(&cfg, EK_ARCH_V8_1M, EK_PROFILE_M, EK_ISA_OPT_WFX_BRANCH);
    const int reps = (int)(100000000 / (len / 2 + 1)) + 1;
    double best = 1e9;
    uint64_t ninsn = 0;
    for (int run = 0; run < 5; run++) {
        double t0 = now();
        uint64_t n = 0;
        for (int r = 0; r < reps; r++) {
            size_t off = 0;
            ek_it_state it = {0, 0};
            while (off < len) {
                ek_isa_scan sc;
                int f = ek_isa_next_waypoint(img + off, len - off, EK_ISA_T32, 0x1e000 + off, &cfg,
                                             &it, &sc);
                n += sc.count;
                if (f != 1) break;
                off += sc.offset + sc.insn.size;
            }
        }
        sink = n;
        ninsn = n;
        double t = now() - t0;
        if (t < best) best = t;
    }
    report("scan", best, ninsn, "");
}

static void sweep(void)
{
    ek_isa_cfg cfg;
    ek_isa_cfg_init(&cfg, EK_ARCH_V9A, EK_PROFILE_A, EK_ISA_OPT_WFX_BRANCH);
    double t0 = now();
    uint64_t acc = 0;
    uint32_t w = 0;
    do {
        ek_insn in;
        ek_isa_classify(w, EK_ISA_A64, 0x400000, &cfg, &in);
        acc += in.type;
    } while (++w != 0);
    sink = acc;
    double t = now() - t0;
    printf("  sweep      all 2^32 A64 words in %.1f s (%.1f M instr/s)\n", t,
           4294967296.0 / t / 1e6);
}

int main(int argc, char **argv)
{
    const char *shared = getenv("ETMKIT_SHARED");
    char a64p[4096], t32p[4096];
    int do_sweep = 0, npos = 0;
    snprintf(a64p, sizeof a64p,
             "%s/testdata/opencsd/snapshots/bugfix-exact-match/cc1.text_dump.bin",
             shared ? shared : "../shared");
    snprintf(t32p, sizeof t32p, "%s/testdata/opencsd/snapshots/armv8_1m_branches/range1.bin",
             shared ? shared : "../shared");
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sweep"))
            do_sweep = 1;
        else if (npos++ == 0)
            snprintf(a64p, sizeof a64p, "%s", argv[i]);
        else
            snprintf(t32p, sizeof t32p, "%s", argv[i]);
    }
    size_t len;
    uint8_t *img = load(a64p, &len);
    if (img) {
        printf("A64 %s (%zu bytes)\n", a64p, len);
        bench_a64(img, len);
        free(img);
    } else
        printf("A64 image %s not readable: skipped\n", a64p);
    img = load(t32p, &len);
    if (img) {
        printf("T32 %s (%zu bytes)\n", t32p, len);
        bench_t32(img, len);
        free(img);
    } else
        printf("T32 image %s not readable: skipped\n", t32p);
    if (do_sweep) sweep();
    return 0;
}
