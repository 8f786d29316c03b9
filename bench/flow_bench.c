/* flow_bench: instruction-flow decode speed on a snapshot, without writing a listing.
 *
 *   flow_bench [--format] [--no-cache] [--repeat N] SNAPSHOT_DIR
 *
 * Decodes the snapshot's first trace buffer N times through the library's decode tree
 * (deformatter -> packet parser -> flow decoder, every ETMv4/ETE source, as `etmkit dump
 * --decode` builds it) and reports MB/s of trace and instructions per second, CPU time based.
 * --format also renders every element as an OpenCSD line (into memory), to show what the text
 * costs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "etmkit/mapfile.h"
#include "etmkit/decode.h"
#include "etmkit/elem.h"
#include "etmkit/image.h"
#include "etmkit/snapshot.h"

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    const char *dir = NULL;
    int repeat = 3, do_format = 0;
    uint32_t flags = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--format"))
            do_format = 1;
        else if (!strcmp(argv[i], "--no-cache"))
            flags |= EK_FLOW_NO_BLOCK_CACHE;
        else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else
            dir = argv[i];
    }
    if (!dir || repeat < 1) {
        fprintf(stderr, "usage: flow_bench [--format] [--no-cache] [--repeat N] SNAPSHOT_DIR\n");
        return 2;
    }
    ek_snapshot *ss;
    if (ek_snapshot_open(dir, NULL, &ss) || !ss->nbuffers) {
        fprintf(stderr, "flow_bench: %s: not a usable snapshot\n", dir);
        return 1;
    }
    const size_t b = ss->buffer_order ? ss->buffer_order[0] : 0;
    ek_image *img;
    if (ek_image_new(NULL, &img) || ek_image_add_snapshot_buffer(img, ss, b) < 0) return 1;
    const ek_snap_buffer *buf = &ss->buffers[b];
    ek_mapped m;
    if (!buf->path || ek_map_file(buf->path, &m)) {
        fprintf(stderr, "flow_bench: cannot read the trace buffer\n");
        return 1;
    }

    ek_sbuf text = EK_SBUF_INIT;
    uint64_t n_elems = 0;
    double best_cpu = 1e30, best_wall = 1e30;
    ek_flow_stats total;
    memset(&total, 0, sizeof total);
    for (int r = 0; r < repeat; r++) {
        ek_decode_config dc;
        ek_decode_config_init(&dc);
        dc.flags = EK_DECODE_ELEMS | EK_DECODE_BATCH;
        dc.mem = ek_flow_mem_image(img);
        dc.flow_flags = flags;
        ek_decode *t;
        if (ek_decode_new(&dc, &t) || ek_decode_add_snapshot_buffer(t, ss, b) < 0) return 1;
        n_elems = 0;
        double c0 = cpu_seconds(), w0 = wall_seconds();
        ek_decode_item it;
        ek_decode_feed(t, m.data, m.size, 0);
        for (int pass = 0; pass < 2; pass++) {
            while (ek_decode_next(t, &it) > 0) {
                if (it.kind != EK_DI_ELEMS) continue;
                n_elems += it.count;
                if (do_format) {
                    for (size_t i = 0; i < it.count; i++)
                        ek_elem_format_ocsd_line(&text, &it.elems[i]);
                    if (text.len > (1u << 16)) ek_sbuf_reset(&text);
                }
            }
            if (!pass) ek_decode_end(t);
        }
        double c1 = cpu_seconds(), w1 = wall_seconds();
        if (c1 - c0 < best_cpu) best_cpu = c1 - c0;
        if (w1 - w0 < best_wall) best_wall = w1 - w0;
        memset(&total, 0, sizeof total);
        for (unsigned id = 0; id < 128; id++) {
            ek_decode_source_stats st;
            if (ek_decode_source_stats_get(t, id, &st) || !st.has_flow) continue;
            total.packets += st.flow.packets;
            total.instructions += st.flow.instructions;
            total.blocks_cached += st.flow.blocks_cached;
            total.blocks_walked += st.flow.blocks_walked;
        }
        ek_decode_free(t);
    }
    const double mb = (double)m.size / 1e6;
    printf("flow_bench: %s: %.2f MB trace, %llu packets, %llu elements, %llu instructions%s\n", dir,
           mb, (unsigned long long)total.packets, (unsigned long long)n_elems,
           (unsigned long long)total.instructions, do_format ? " (elements formatted)" : "");
    printf("flow_bench: best of %d: %.3f s CPU (%.3f s wall): %.1f MB/s, %.1f M instructions/s; "
           "block cache %.1f%% hits\n",
           repeat, best_cpu, best_wall, mb / best_cpu, total.instructions / best_cpu / 1e6,
           100.0 * total.blocks_cached /
               (double)(total.blocks_cached + total.blocks_walked + 1e-9));
    ek_unmap_file(&m);
    ek_image_free(img);
    ek_snapshot_free(ss);
    ek_sbuf_free(&text);
    return 0;
}
