/* flow_bench: instruction-flow decode speed on a snapshot, without writing a listing.
 *
 *   flow_bench [--format] [--no-cache] [--repeat N] SNAPSHOT_DIR
 *
 * Decodes the snapshot's first trace buffer N times (deformatter -> packet parser -> flow
 * decoder, every ETMv4/ETE source) and reports MB/s of trace and instructions per second,
 * CPU time based. --format also renders every element as an OpenCSD line (into memory), to
 * show what the text costs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/mapfile.h"
#include "etmkit/elem.h"
#include "etmkit/etm4.h"
#include "etmkit/flow.h"
#include "etmkit/frame.h"
#include "etmkit/image.h"
#include "etmkit/snapshot.h"

typedef struct src {
    ek_etm4_config cfg;
    ek_etm4_parser parser;
    ek_flow *flow;
} src_t;

static src_t *by_id[128];
static src_t *single;
static int do_format;
static ek_sbuf text = EK_SBUF_INIT;
static uint64_t n_elems;

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

static void drain(src_t *s)
{
    const ek_etm4_packet *pkt;
    while (ek_etm4_next(&s->parser, &pkt) > 0) {
        ek_flow_packet(s->flow, pkt);
        size_t n;
        const ek_elem *e = ek_flow_elems(s->flow, &n);
        n_elems += n;
        if (do_format) {
            for (size_t i = 0; i < n; i++)
                ek_elem_format_ocsd_line(&text, &e[i]);
            if (text.len > (1u << 16)) ek_sbuf_reset(&text);
        }
        ek_flow_elems_clear(s->flow);
    }
}

int main(int argc, char **argv)
{
    const char *dir = NULL;
    int repeat = 3;
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
    ek_image *img;
    if (ek_image_new(NULL, &img)) return 1;
    for (size_t d = ss->ndevices; d-- > 0;)
        if (ss->devices[d].ndumps) ek_image_add_snapshot_core(img, ss, d);
    const size_t b = ss->buffer_order ? ss->buffer_order[0] : 0;
    const ek_snap_buffer *buf = &ss->buffers[b];
    ek_mapped m;
    if (!buf->path || ek_map_file(buf->path, &m)) {
        fprintf(stderr, "flow_bench: cannot read the trace buffer\n");
        return 1;
    }
    const int formatted = buf->format != EK_BUF_SOURCE_DATA;

    double best_cpu = 1e30, best_wall = 1e30;
    ek_flow_stats total;
    memset(&total, 0, sizeof total);
    for (int r = 0; r < repeat; r++) {
        memset(by_id, 0, sizeof by_id);
        single = NULL;
        src_t *all[128];
        int nall = 0;
        for (size_t i = 0; i < ss->nsources && nall < 128; i++) {
            const ek_snap_source *so = &ss->sources[i];
            if (so->buffer != (long)b) continue;
            if (so->cfg.protocol != EK_PROTO_ETMV4 && so->cfg.protocol != EK_PROTO_ETMV4M &&
                so->cfg.protocol != EK_PROTO_ETE)
                continue;
            src_t *s = calloc(1, sizeof *s);
            ek_etm4_config_from_source(&s->cfg, &so->cfg);
            ek_etm4_parser_init(&s->parser, &s->cfg);
            ek_flow_config fc;
            ek_flow_config_init(&fc);
            fc.source = &so->cfg;
            fc.mem = ek_flow_mem_image(img);
            fc.flags = flags;
            if (ek_flow_new(&fc, &s->flow)) return 1;
            all[nall++] = s;
            if (formatted && !by_id[so->cfg.trace_id & 0x7f]) by_id[so->cfg.trace_id & 0x7f] = s;
            if (!single) single = s;
        }
        double c0 = cpu_seconds(), w0 = wall_seconds();
        if (formatted) {
            ek_deformatter d;
            ek_dfmt_init(&d, buf->format == EK_BUF_DSTREAM ? EK_DFMT_FSYNC : EK_DFMT_MEM_ALIGN);
            ek_dfmt_feed(&d, m.data, m.size, 0);
            ek_dfmt_item it;
            while (ek_dfmt_next(&d, &it) > 0) {
                if (it.kind != EK_DFMT_DATA || it.id >= 128 || !by_id[it.id] || !it.len) continue;
                ek_etm4_feed(&by_id[it.id]->parser, it.data, it.len, it.index);
                drain(by_id[it.id]);
            }
        } else if (single) {
            ek_etm4_feed(&single->parser, m.data, m.size, 0);
            drain(single);
        }
        for (int i = 0; i < nall; i++) {
            ek_etm4_eot(&all[i]->parser);
            drain(all[i]);
            ek_flow_end(all[i]->flow);
            ek_flow_elems_clear(all[i]->flow);
        }
        double c1 = cpu_seconds(), w1 = wall_seconds();
        if (c1 - c0 < best_cpu) best_cpu = c1 - c0;
        if (w1 - w0 < best_wall) best_wall = w1 - w0;
        memset(&total, 0, sizeof total);
        for (int i = 0; i < nall; i++) {
            ek_flow_stats st;
            ek_flow_get_stats(all[i]->flow, &st);
            total.packets += st.packets;
            total.instructions += st.instructions;
            total.blocks_cached += st.blocks_cached;
            total.blocks_walked += st.blocks_walked;
            ek_flow_free(all[i]->flow);
            free(all[i]);
        }
    }
    const double mb = (double)m.size / 1e6;
    printf("flow_bench: %s: %.2f MB trace, %llu packets, %llu elements, %llu instructions%s\n", dir,
           mb, (unsigned long long)total.packets, (unsigned long long)n_elems / repeat,
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
