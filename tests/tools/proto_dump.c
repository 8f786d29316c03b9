/* Test driver for the PTM, ETMv3, STM and ITM modules: lists a snapshot's trace in the format
 * of OpenCSD's trc_pkt_lister (packet lines with raw bytes and, with --decode, generic-element
 * lines), so that tests can compare the library modules with the reference listings through
 * ocsd-compare before `etmkit dump` drives them through the protocol-neutral decode tree.
 *
 * usage: ek_proto_dump [--decode] [--decode-only] [--pkt-mon] [--no-ocsd-compat] SNAPSHOT_DIR
 * Only the first buffer is decoded (trc_pkt_lister's default). Sources of other protocols are
 * skipped (etmkit dump handles ETMv4/ETE).
 *
 * The modules run with their OpenCSD 1.8.0 compatibility options (EK_ETM3_OCSD_ALL,
 * EK_STM_OCSD_FATAL, EK_ITM_OCSD_FATAL, EK_DFMT_OCSD_EMPTY), as `etmkit dump --format=ocsd`
 * will: where OpenCSD's data path returns a fatal response the listing stops as the lister's
 * does ("Data Path fatal error", its last logged error, no end of trace, the bytes processed so
 * far). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mapfile.h"
#include "etmkit/diag.h"
#include "etmkit/elem.h"
#include "etmkit/etm3.h"
#include "etmkit/flow.h"
#include "etmkit/frame.h"
#include "etmkit/image.h"
#include "etmkit/itm.h"
#include "etmkit/ptm.h"
#include "etmkit/sbuf.h"
#include "etmkit/snapshot.h"
#include "etmkit/stm.h"

#define BLOCK   1024
#define NUM_IDS 128

typedef struct pipe {
    ek_protocol proto;
    unsigned print_id;
    uint64_t last_index;
    const ek_snap_source *src;
    ek_stm_parser stm;
    ek_stm_decoder stm_dec;
    ek_itm_parser itm;
    ek_itm_decoder itm_dec;
    ek_ptm_config ptm_cfg;
    ek_ptm_parser ptm;
    ek_ptm_decoder *ptm_dec;
    ek_etm3_config etm3_cfg;
    ek_etm3_parser etm3;
    ek_etm3_decoder *etm3_dec;
} pipe_t;

typedef struct ctx {
    int decode, decode_only, pkt_mon;
    int no_compat; /* --no-ocsd-compat: the modules' architecture behaviour (for debugging) */
    ek_sbuf out;
    ek_snapshot *ss;
    pipe_t *pipes[NUM_IDS];
    pipe_t *single;
    int formatted;
    ek_deformatter dfmt;
    const ek_dfmt_item *cur_item; /* the frame data being fed (STM over-read emulation) */
    ek_image *img;
    int fatal;    /* OpenCSD's data path answered with a fatal response */
    int have_err; /* err holds the last error OpenCSD logged (printed again at the end) */
    ek_sbuf err;
    uint64_t processed_raw; /* raw buffers: bytes the packet processor had taken at the stop */
} ctx_t;

static void flush(ctx_t *c)
{
    if (c->out.len > 65536) {
        fwrite(c->out.p, 1, c->out.len, stdout);
        c->out.len = 0;
    }
}

static void put_elems(ctx_t *c, const ek_elem *e, int n)
{
    for (int i = 0; i < n; i++)
        ek_elem_format_ocsd_line(&c->out, &e[i]);
}

/* OpenCSD's data path returned a fatal response: nothing more is decoded. */
static void stop(ctx_t *c, uint64_t processed_raw)
{
    c->fatal = 1;
    c->processed_raw = processed_raw;
}

static void drain(ctx_t *c, pipe_t *pp)
{
    const int mon = c->decode || c->pkt_mon;
    const int list = !c->decode_only;
    ek_elem e[2];
    switch (pp->proto) {
    case EK_PROTO_STM: {
        const ek_stm_packet *k;
        while (ek_stm_next(&pp->stm, &k) > 0) {
            pp->last_index = k->index;
            if (list) {
                uint8_t tail[32];
                size_t nt = 0;
                if (k->overread && c->cur_item)
                    nt = ek_dfmt_ocsd_tail(&c->dfmt, c->cur_item, tail, sizeof tail);
                ek_list_stm_ocsd(&c->out, k, pp->print_id, mon, tail, nt);
            }
            if (!c->decode) continue;
            const int n = ek_stm_decode(&pp->stm_dec, k, e);
            if (n < 0) { /* OpenCSD's STM decoder: fatal on BAD_SEQUENCE / RESERVED */
                stop(c, pp->stm.in_index + pp->stm.in_used);
                break;
            }
            put_elems(c, e, n);
        }
        break;
    }
    case EK_PROTO_ITM: {
        const ek_itm_packet *k;
        while (ek_itm_next(&pp->itm, &k) > 0) {
            if (list && (mon ? (k->flags & EK_ITM_PF_LIST) : (k->flags & EK_ITM_PF_DECODE)))
                ek_list_itm_ocsd(&c->out, k, pp->print_id, mon);
            if (!(k->flags & EK_ITM_PF_DECODE)) continue;
            pp->last_index = k->index;
            if (!c->decode) continue;
            const int n = ek_itm_decode(&pp->itm_dec, k, e);
            if (n < 0) {
                stop(c, pp->itm.in_index + pp->itm.in_used);
                break;
            }
            put_elems(c, e, n);
        }
        break;
    }
    case EK_PROTO_ETMV3: {
        const ek_etm3_packet *k;
        while (ek_etm3_next(&pp->etm3, &k) > 0) {
            if (list) ek_list_etm3_ocsd(&c->out, k, pp->print_id, mon, &pp->etm3_cfg);
            pp->last_index = k->index;
            if (pp->etm3_dec) {
                if (ek_etm3_decode(pp->etm3_dec, k) < 0) {
                    uint64_t at;
                    const unsigned why = ek_etm3_decoder_fatal(pp->etm3_dec, &at);
                    ek_sbuf_puts(&c->out, "DCD_ETMV3 : ");
                    ek_list_etm3_ocsd_fatal(&c->out, why, at, pp->etm3_cfg.trace_id);
                    c->err.len = 0;
                    ek_list_etm3_ocsd_fatal(&c->err, why, at, pp->etm3_cfg.trace_id);
                    c->have_err = 1;
                    stop(c, pp->etm3.in_index + pp->etm3.in_used);
                    break;
                }
                size_t n;
                const ek_elem *el = ek_etm3_decoder_elems(pp->etm3_dec, &n);
                put_elems(c, el, (int)n);
                ek_etm3_decoder_clear(pp->etm3_dec);
            }
        }
        break;
    }
    case EK_PROTO_PTM: {
        const ek_ptm_packet *k;
        while (ek_ptm_next(&pp->ptm, &k) > 0) {
            if (list && (mon || !(k->flags & EK_PTM_PF_NOTSYNC_MORE)))
                ek_list_ptm_ocsd(&c->out, k, pp->print_id, mon, &pp->ptm_cfg);
            if (k->flags & EK_PTM_PF_NOTSYNC_MORE) continue;
            pp->last_index = k->index;
            if (pp->ptm_dec) {
                ek_ptm_decode(pp->ptm_dec, k);
                size_t n;
                const ek_elem *el = ek_ptm_decoder_elems(pp->ptm_dec, &n);
                put_elems(c, el, (int)n);
                ek_ptm_decoder_clear(pp->ptm_dec);
            }
        }
        break;
    }
    default: break;
    }
    flush(c);
}

static void feed(ctx_t *c, pipe_t *pp, const uint8_t *d, size_t n, uint64_t index)
{
    switch (pp->proto) {
    case EK_PROTO_STM: ek_stm_feed(&pp->stm, d, n, index); break;
    case EK_PROTO_ITM: ek_itm_feed(&pp->itm, d, n, index); break;
    case EK_PROTO_ETMV3: ek_etm3_feed(&pp->etm3, d, n, index); break;
    case EK_PROTO_PTM:
        ek_ptm_feed(&pp->ptm, d, n, index);
        if (c->cur_item) {
            uint8_t tail[16];
            ek_ptm_feed_tail(&pp->ptm, tail,
                             ek_dfmt_ocsd_tail(&c->dfmt, c->cur_item, tail, sizeof tail));
        }
        break;
    default: return;
    }
    drain(c, pp);
}

static void eot(ctx_t *c, pipe_t *pp)
{
    ek_elem e;
    switch (pp->proto) {
    case EK_PROTO_STM:
        ek_stm_eot(&pp->stm);
        drain(c, pp);
        if (c->decode) {
            ek_stm_decode_eot(&pp->stm_dec, pp->last_index, &e);
            put_elems(c, &e, 1);
        }
        break;
    case EK_PROTO_ITM:
        ek_itm_eot(&pp->itm);
        drain(c, pp);
        if (c->decode) {
            ek_itm_decode_eot(&pp->itm_dec, pp->last_index, &e);
            put_elems(c, &e, 1);
        }
        break;
    case EK_PROTO_ETMV3:
        ek_etm3_eot(&pp->etm3);
        drain(c, pp);
        if (pp->etm3_dec) {
            ek_etm3_decode_eot(pp->etm3_dec);
            size_t n;
            const ek_elem *el = ek_etm3_decoder_elems(pp->etm3_dec, &n);
            put_elems(c, el, (int)n);
            ek_etm3_decoder_clear(pp->etm3_dec);
        }
        break;
    case EK_PROTO_PTM:
        ek_ptm_eot(&pp->ptm);
        drain(c, pp);
        if (pp->ptm_dec) {
            ek_ptm_decode_eot(pp->ptm_dec);
            size_t n;
            const ek_elem *el = ek_ptm_decoder_elems(pp->ptm_dec, &n);
            put_elems(c, el, (int)n);
            ek_ptm_decoder_clear(pp->ptm_dec);
        }
        break;
    default: break;
    }
    ek_sbuf_printf(&c->out, "ID:%x\tEND OF TRACE DATA\n", pp->print_id);
}

static const char *src_name(const ctx_t *c, const ek_snap_source *s)
{
    return c->ss->devices[s->device].name;
}

static int cmp_src(const void *a, const void *b, void *cx)
{
    const ctx_t *c = cx;
    return strcmp(src_name(c, *(const ek_snap_source *const *)a),
                  src_name(c, *(const ek_snap_source *const *)b));
}

static const char *printer(ek_protocol p)
{
    switch (p) {
    case EK_PROTO_STM: return "STM";
    case EK_PROTO_ITM: return "ITM";
    case EK_PROTO_PTM: return "PTM";
    case EK_PROTO_ETMV3: return "ETMV3";
    default: return "?";
    }
}

/* The code image: every dump of the cores traced into buffer b (earlier dumps win). */
static void build_image(ctx_t *c, const ek_snap_source **list, size_t n)
{
    ek_image_new(NULL, &c->img);
    for (size_t i = 0; i < n; i++) {
        const long core = list[i]->core;
        if (core < 0) continue;
        int seen = 0;
        for (size_t j = 0; j < i; j++)
            seen |= list[j]->core == core;
        if (seen) continue;
        const ek_snap_device *dev = &c->ss->devices[core];
        for (size_t k = dev->ndumps; k-- > 0;) {
            const ek_snap_dump *d = &dev->dumps[k];
            if (!d->present) continue;
            ek_image_add_file(c->img, d->path, d->offset, d->has_length ? d->length : 0, d->address,
                              d->space);
        }
    }
}

static pipe_t *new_pipe(ctx_t *c, const ek_snap_source *s, unsigned print_id)
{
    pipe_t *pp = calloc(1, sizeof *pp);
    if (!pp) return NULL;
    pp->proto = s->cfg.protocol;
    pp->print_id = print_id;
    pp->src = s;
    const uint8_t id = s->cfg.trace_id;
    switch (pp->proto) {
    case EK_PROTO_STM:
        ek_stm_parser_init(&pp->stm, id);
        ek_stm_decoder_init(&pp->stm_dec, id);
        pp->stm_dec.compat = c->no_compat ? 0 : EK_STM_OCSD_FATAL;
        break;
    case EK_PROTO_ITM:
        ek_itm_parser_init(&pp->itm, id);
        ek_itm_decoder_init(&pp->itm_dec, id, s->cfg.regs.tcr);
        pp->itm_dec.compat = c->no_compat ? 0 : EK_ITM_OCSD_FATAL;
        break;
    case EK_PROTO_ETMV3:
        ek_etm3_config_from_source(&pp->etm3_cfg, &s->cfg);
        pp->etm3_cfg.compat = c->no_compat ? 0 : EK_ETM3_OCSD_ALL;
        ek_etm3_parser_init(&pp->etm3, &pp->etm3_cfg);
        if (c->decode) {
            ek_flow_mem mem = ek_flow_mem_image(c->img);
            if (ek_etm3_decoder_new(&pp->etm3_cfg, &mem, &pp->etm3_dec)) {
                free(pp);
                return NULL;
            }
        }
        break;
    case EK_PROTO_PTM:
        ek_ptm_config_from_source(&pp->ptm_cfg, &s->cfg);
        ek_ptm_parser_init(&pp->ptm, &pp->ptm_cfg);
        if (c->decode) {
            ek_flow_mem mem = ek_flow_mem_image(c->img);
            if (ek_ptm_decoder_new(&pp->ptm_cfg, &mem, &pp->ptm_dec)) {
                free(pp);
                return NULL;
            }
        }
        break;
    default: free(pp); return NULL;
    }
    return pp;
}

int main(int argc, char **argv)
{
    ctx_t c;
    memset(&c, 0, sizeof c);
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--decode"))
            c.decode = 1;
        else if (!strcmp(argv[i], "--decode-only"))
            c.decode = c.decode_only = 1;
        else if (!strcmp(argv[i], "--pkt-mon"))
            c.pkt_mon = 1;
        else if (!strcmp(argv[i], "--no-ocsd-compat"))
            c.no_compat = 1;
        else if (argv[i][0] == '-')
            ; /* other lister options do not apply to these protocols */
        else
            dir = argv[i];
    }
    if (!dir) {
        fprintf(stderr, "usage: ek_proto_dump [--decode] [--pkt-mon] SNAPSHOT_DIR\n");
        return 2;
    }
    if (ek_snapshot_open(dir, NULL, &c.ss) || !c.ss || !c.ss->nbuffers) {
        fprintf(stderr, "ek_proto_dump: %s: not a usable snapshot\n", dir);
        return 1;
    }
    const size_t b = c.ss->buffer_order ? c.ss->buffer_order[0] : 0;
    const ek_snap_buffer *buf = &c.ss->buffers[b];
    const ek_snap_source **list = calloc(c.ss->nsources + 1, sizeof *list);
    size_t n = 0;
    for (size_t i = 0; i < c.ss->nsources; i++)
        if (c.ss->sources[i].buffer == (long)b) list[n++] = &c.ss->sources[i];
    qsort_r(list, n, sizeof *list, cmp_src, &c);
    if (c.decode) build_image(&c, list, n);
    c.formatted = buf->format != EK_BUF_SOURCE_DATA;
    ek_sbuf_printf(&c.out,
                   "Trace Packet Lister : reading snapshot from path %s\nUsing %s as trace "
                   "source\n",
                   dir, buf->name);
    for (size_t i = 0; i < n; i++) {
        const ek_snap_source *s = list[i];
        if (!c.formatted && i > 0) break;
        const unsigned id = s->cfg.trace_id & 0x7F;
        if (c.formatted && c.pipes[id]) continue;
        pipe_t *pp = new_pipe(&c, s, c.formatted ? id : 0);
        if (!pp) continue;
        if (c.formatted)
            c.pipes[id] = pp;
        else
            c.single = pp;
        ek_sbuf_printf(&c.out, "Trace Packet Lister : Protocol printer %s on Trace ID 0x%x\n",
                       printer(pp->proto), pp->print_id);
    }
    free(list);

    ek_mapped m;
    if (!buf->path || ek_map_file(buf->path, &m)) {
        fprintf(stderr, "ek_proto_dump: cannot read the trace buffer\n");
        return 1;
    }
    ek_dfmt_init(&c.dfmt, (buf->format == EK_BUF_DSTREAM ? EK_DFMT_FSYNC : EK_DFMT_MEM_ALIGN) |
                              (c.no_compat ? 0 : EK_DFMT_OCSD_EMPTY));
    uint64_t processed = m.size;
    for (size_t pos = 0; pos < m.size && !c.fatal; pos += BLOCK) {
        const size_t len = m.size - pos < BLOCK ? m.size - pos : BLOCK;
        if (!c.formatted) {
            if (c.single) feed(&c, c.single, m.data + pos, len, pos);
            if (c.fatal) processed = c.processed_raw;
            continue;
        }
        ek_dfmt_item it;
        ek_dfmt_feed(&c.dfmt, m.data + pos, len, pos);
        while (!c.fatal && ek_dfmt_next(&c.dfmt, &it) > 0) {
            if (it.kind != EK_DFMT_DATA || it.id >= NUM_IDS || !c.pipes[it.id]) continue;
            /* OpenCSD's deformatter hands an empty run to the ID's packet processor, which
             * answers a zero-length block with a fatal error (logged where the lister does not
             * print it) */
            if (!it.len) {
                stop(&c, 0);
                break;
            }
            c.cur_item = &it;
            feed(&c, c.pipes[it.id], it.data, it.len, it.index);
            c.cur_item = NULL;
        }
        /* the deformatter had taken the whole frame before handing on its data */
        if (c.fatal) processed = c.dfmt.idx;
    }
    if (c.fatal) {
        /* no end of trace after a fatal response; the lister prints its last logged error */
        ek_sbuf_puts(&c.out, "Trace Packet Lister : Data Path fatal error\n");
        if (c.have_err) ek_sbuf_puts(&c.out, c.err.p);
    } else if (c.formatted) {
        for (unsigned i = 0; i < NUM_IDS; i++)
            if (c.pipes[i]) eot(&c, c.pipes[i]);
    } else if (c.single) {
        eot(&c, c.single);
    }
    ek_sbuf_printf(&c.out, "Trace Packet Lister : Trace buffer done, processed %llu bytes.\n",
                   (unsigned long long)processed);
    fwrite(c.out.p, 1, c.out.len, stdout);
    ek_unmap_file(&m);
    for (unsigned i = 0; i < NUM_IDS; i++) {
        if (c.pipes[i]) ek_ptm_decoder_free(c.pipes[i]->ptm_dec);
        if (c.pipes[i]) ek_etm3_decoder_free(c.pipes[i]->etm3_dec);
        free(c.pipes[i]);
    }
    if (c.single) ek_ptm_decoder_free(c.single->ptm_dec);
    if (c.single) ek_etm3_decoder_free(c.single->etm3_dec);
    free(c.single);
    ek_sbuf_free(&c.out);
    ek_sbuf_free(&c.err);
    ek_image_free(c.img);
    ek_snapshot_free(c.ss);
    return 0;
}
