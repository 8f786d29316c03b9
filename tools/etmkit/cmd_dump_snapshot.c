/* etmkit dump SNAPSHOT_DIR: list the packets of a trace snapshot.
 *
 * Per trace buffer the pipeline is
 *     buffer file -> [frame deformatter] -> per-trace-ID byte runs -> ETMv4/ETE packet parser
 *                 -> instruction-flow decoder (--decode) -> listing (ocsd | text | json)
 * The flow decoders read code from one memory image made of every core's memory dumps.
 * Data is delivered the way OpenCSD's trc_pkt_lister delivers it (1024-byte reads, or 504
 * bytes + an 8-byte footer skipped with --dstream) so that listings line up with it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cli_progress.h"
#include "core/mapfile.h"
#include "etmkit/elem.h"
#include "etmkit/etm4.h"
#include "etmkit/flow.h"
#include "etmkit/frame.h"
#include "etmkit/image.h"
#include "etmkit/listing.h"
#include "etmkit/snapshot.h"

enum { FMT_OCSD, FMT_TEXT, FMT_JSON };

#define LISTER_BLOCK   1024 /* trc_pkt_lister's read size */
#define DSTREAM_BLOCK  504  /* DSTREAM: data bytes per 512-byte record ... */
#define DSTREAM_FOOTER 8    /* ... followed by an 8-byte footer */
#define NUM_IDS        128

typedef struct dump_opts {
    int format;
    int pkt_mon, decode, decode_only, multi_session, src_addr_n, stats, verbose, strict, quiet;
    int dstream, tpiu, tpiu_hsync, raw_packed, raw_unpacked;
    const char *dir;
} dump_opts;

/* One trace source being decoded: its parser and, later, its flow decoder. */
typedef struct id_pipe {
    unsigned id;       /* trace ID (the key of the per-ID stream) */
    unsigned print_id; /* ID printed on packet lines (0 for raw single-source data) */
    const ek_snap_source *src;
    const char *name; /* source device name */
    ek_etm4_config cfg;
    ek_etm4_parser parser;
    ek_ocsd_dcd_model dcd; /* --format=ocsd without the flow decoder: the lister's sync state */
    ek_flow *flow;         /* --decode: the instruction-flow decoder */
    uint64_t bytes, packets, errors;
} id_pipe;

typedef struct dump_ctx {
    dump_opts o;
    ek_snapshot *ss;
    ek_diag_collector *diags;
    ek_diag diag; /* filtered sink in front of 'all' */
    ek_diag all;  /* the collector */
    ek_sbuf out;
    id_pipe *pipes[NUM_IDS]; /* formatted buffers: by trace ID */
    id_pipe *single;         /* raw (source_data) buffers: the one decoded source */
    int formatted;
    unsigned dfmt_flags;
    ek_deformatter dfmt;
    const char *cur_file;
    uint64_t frame_errors, unrouted_bytes;
    ek_image *img;     /* code for the flow decoders */
    ek_diag flow_diag; /* the flow decoders' sink: inline OpenCSD log lines, then 'diag' */
    cli_progress pr;   /* bytes of the buffers to list: done (before this buffer), total */
    uint64_t pr_done, pr_total, pr_blocks;
} dump_ctx;

/* Diagnostics below warning level are kept only with --verbose. */
static void diag_filter(void *ctx, const ek_diag_event *ev)
{
    const dump_ctx *c = ctx;
    if (ev->sev >= EK_SEV_WARN || c->o.verbose) c->all.fn(c->all.ctx, ev);
}

static void usage(FILE *f)
{
    fputs("usage: etmkit dump [options] SNAPSHOT_DIR\n"
          "\n"
          "List the trace packets of a trace snapshot folder (snapshot.ini, trace.ini, buffers).\n"
          "\n"
          "output:\n"
          "  --format=text      etmkit's readable listing (default)\n"
          "  --format=ocsd      lines as OpenCSD's trc_pkt_lister prints them\n"
          "  --format=json      one JSON object per packet\n"
          "  --stats            per-source byte / packet / error counts at the end (with\n"
          "                     --decode also elements by kind, instructions, decode errors)\n"
          "  -v, --verbose      every diagnostic on stderr as it happens, notes included\n"
          "  --strict           exit 1 when any problem (warning or worse) was reported\n"
          "  -q, --quiet        no progress line on stderr (shown on a terminal when the run\n"
          "                     takes more than a second and the listing goes elsewhere)\n"
          "\n"
          "what to list (trc_pkt_lister equivalents in brackets):\n"
          "  --pkt-mon          packets with their raw bytes, as a packet monitor sees them\n"
          "                     [-pkt_mon]; without it or --decode, packets are listed as a\n"
          "                     packet sink sees them (no raw bytes, one I_NOT_SYNC)\n"
          "  --decode           packets with raw bytes, plus the instruction-flow elements\n"
          "                     decoded with the snapshot's memory dumps [-decode]\n"
          "  --decode-only      elements only, no packets [-decode_only]\n"
          "  --src-addr-n       ETE: split source address ranges on N atoms [-src_addr_n]\n"
          "  --multi-session    decode every buffer in turn, decoders reset in between\n"
          "                     [-multi_session]; default: the first buffer only\n"
          "\n"
          "frame formats:\n"
          "  --dstream          buffer is a DSTREAM capture: 504 data + 8 footer bytes\n"
          "                     [-dstream_format]\n"
          "  --tpiu             frames are synchronised by FSYNC patterns [-tpiu]\n"
          "  --tpiu-hsync       ... and carry HSYNC patterns [-tpiu_hsync]\n"
          "  --raw-packed       print raw formatter frames [-o_raw_packed]\n"
          "  --raw-unpacked     print de-formatted bytes per trace ID [-o_raw_unpacked]\n"
          "\n"
          "Only ETMv4, ETMv4-M and ETE sources are decoded; others are reported on stderr.\n"
          "Exit status: 0 when some buffer was decoded (damage is reported, not fatal), 1 when\n"
          "nothing was (or --strict and a problem), 2 on usage errors.\n",
          f);
}

static int parse_args(dump_opts *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->format = FMT_TEXT;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-') {
            if (o->dir) {
                cli_err("dump: more than one input (%s, %s)", o->dir, a);
                return CLI_USAGE;
            }
            o->dir = a;
            continue;
        }
        const char *fmt = NULL;
        if (!strncmp(a, "--format=", 9))
            fmt = a + 9;
        else if (!strcmp(a, "--format") && i + 1 < argc)
            fmt = argv[++i];
        if (fmt) {
            if (!strcmp(fmt, "ocsd"))
                o->format = FMT_OCSD;
            else if (!strcmp(fmt, "text"))
                o->format = FMT_TEXT;
            else if (!strcmp(fmt, "json"))
                o->format = FMT_JSON;
            else {
                cli_err("dump: unknown format '%s' (ocsd, text or json)", fmt);
                return CLI_USAGE;
            }
            continue;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return -1;
        }
#define FLAG(s, field)                                                                             \
    if (!strcmp(a, s)) {                                                                           \
        o->field = 1;                                                                              \
        continue;                                                                                  \
    }
        FLAG("--pkt-mon", pkt_mon)
        FLAG("--decode", decode)
        FLAG("--decode-only", decode_only)
        FLAG("--multi-session", multi_session)
        FLAG("--src-addr-n", src_addr_n)
        FLAG("--stats", stats)
        FLAG("--verbose", verbose)
        FLAG("-v", verbose)
        FLAG("--strict", strict)
        FLAG("-q", quiet)
        FLAG("--quiet", quiet)
        FLAG("--dstream", dstream)
        FLAG("--tpiu", tpiu)
        FLAG("--tpiu-hsync", tpiu_hsync)
        FLAG("--raw-packed", raw_packed)
        FLAG("--raw-unpacked", raw_unpacked)
#undef FLAG
        cli_err("dump: unknown option '%s' (see etmkit dump --help)", a);
        return CLI_USAGE;
    }
    if (o->decode_only) o->decode = 1;
    if (o->tpiu_hsync) o->tpiu = 1;
    if (!o->dir) {
        usage(stderr);
        return CLI_USAGE;
    }
    return 0;
}

static int is_etm4_protocol(ek_protocol p)
{
    return p == EK_PROTO_ETMV4 || p == EK_PROTO_ETMV4M || p == EK_PROTO_ETE;
}

static const char *source_name(const dump_ctx *c, const ek_snap_source *s)
{
    return c->ss->devices[s->device].name;
}

/* ---- output -------------------------------------------------------------------------------- */

static void flush_out(dump_ctx *c)
{
    cli_maybe_flush(&c->out, stdout);
}

static void drain_elems(dump_ctx *c, id_pipe *pp);

/* Flow-decoder diagnostics: in OpenCSD's format they are also printed where trc_pkt_lister
 * logs them, inline and without a newline (so the next line follows on the same line), after
 * the elements the decoder had already sent. */
static void flow_diag(void *ctx, const ek_diag_event *ev)
{
    dump_ctx *c = ctx;
    if (c->o.format == FMT_OCSD) {
        id_pipe *pp =
            c->formatted
                ? (ev->trace_id >= 0 && ev->trace_id < NUM_IDS ? c->pipes[ev->trace_id] : NULL)
                : c->single;
        ek_sbuf line = EK_SBUF_INIT;
        if (ek_flow_diag_ocsd(&line, ev, c->formatted)) { /* an error OpenCSD logs */
            if (pp && pp->flow) drain_elems(c, pp);
            ek_sbuf_put(&c->out, line.p, line.len);
        }
        ek_sbuf_free(&line);
    }
    ek_diag_event e = *ev;
    e.file = c->cur_file;
    c->diag.fn(c->diag.ctx, &e);
}

/* Elements the flow decoder has ready: print and forget them. */
static void drain_elems(dump_ctx *c, id_pipe *pp)
{
    size_t n;
    const ek_elem *e = ek_flow_elems(pp->flow, &n);
    switch (c->o.format) {
    case FMT_OCSD:
        for (size_t i = 0; i < n; i++)
            ek_elem_format_ocsd_line(&c->out, &e[i]);
        break;
    case FMT_TEXT:
        for (size_t i = 0; i < n; i++)
            ek_elem_format_text(&c->out, &e[i]);
        break;
    case FMT_JSON:
        for (size_t i = 0; i < n; i++)
            ek_elem_format_json(&c->out, &e[i]);
        break;
    }
    ek_flow_elems_clear(pp->flow);
}

/* Byte offset in the buffer file of trace index 'index' (DSTREAM footers are not indexed). */
static int64_t file_off(const dump_ctx *c, uint64_t index)
{
    if (c->o.dstream) return (int64_t)(index + index / DSTREAM_BLOCK * DSTREAM_FOOTER);
    return (int64_t)index;
}

/* A packet from a parser: list it, then hand it to the flow decoder (when there is one). */
static void on_packet(dump_ctx *c, id_pipe *pp, const ek_etm4_packet *pkt)
{
    pp->packets++;
    const int unsynced = (pkt->flags & EK_ETM4_PF_UNSYNCED) || pkt->type == EK_ETM4_NOTSYNC;
    if ((pkt->flags & EK_ETM4_PF_ERROR) && !unsynced) {
        /* listed like the reference lister does, and summarised on stderr at the end */
        pp->errors++;
        const int eot = pkt->type == EK_ETM4_INCOMPLETE_EOT;
        const int show_err = pkt->err_type && pkt->err_type != EK_ETM4_RESERVED;
        ek_diag_emit(&c->diag, EK_SEV_WARN, eot ? "etm4.truncated" : "etm4.bad-packet",
                     EK_ERR_BAD_PACKET, c->cur_file, -1, file_off(c, pkt->index), pp->cfg.trace_id,
                     "%s %s%s%s (%u bytes)", pp->name, ek_etm4_type_name(pkt->type),
                     show_err ? " while decoding " : "",
                     show_err ? ek_etm4_type_name(pkt->err_type) : "", pkt->size);
    } else if (unsynced && !(pkt->flags & EK_ETM4_PF_NOTSYNC_MORE)) {
        ek_diag_emit(&c->diag, EK_SEV_NOTE, "etm4.unsynced", 0, c->cur_file, -1,
                     file_off(c, pkt->index), pp->cfg.trace_id,
                     "%s: bytes before the first A-Sync are not decodable", pp->name);
    }
    const int monitor = c->o.pkt_mon || c->o.decode;
    if (!c->o.decode_only) {
        switch (c->o.format) {
        case FMT_OCSD:
            /* A packet sink sees only the first of a run of NOTSYNC packets. */
            if (monitor || !(pkt->flags & EK_ETM4_PF_NOTSYNC_MORE)) {
                ek_list_etm4_ocsd_pre(&c->out, pkt, &pp->cfg);
                ek_list_etm4_ocsd(&c->out, pkt, pp->print_id, monitor, &pp->cfg);
            }
            /* with -decode the packet then goes to the lister's decoder, which may log (the
             * flow decoder below does that itself) */
            if (c->o.decode && !pp->flow && (!(pkt->flags & EK_ETM4_PF_NOTSYNC_MORE)))
                ek_list_etm4_ocsd_post(&c->out, &pp->dcd, pkt, &pp->cfg);
            break;
        case FMT_TEXT: /* etmkit's own formats name the source's real trace ID */
            ek_list_etm4_text(&c->out, pkt, pp->cfg.trace_id, &pp->cfg);
            break;
        case FMT_JSON: ek_list_etm4_json(&c->out, pkt, pp->cfg.trace_id, &pp->cfg); break;
        }
    }
    if (pp->flow) {
        if (ek_flow_packet(pp->flow, pkt) == EK_ERR_NOMEM)
            ek_diag_emit(&c->diag, EK_SEV_ERROR, "dump.nomem", EK_ERR_NOMEM, c->cur_file, -1,
                         file_off(c, pkt->index), pp->cfg.trace_id, "out of memory decoding");
        drain_elems(c, pp);
    }
    flush_out(c);
}

static void drain(dump_ctx *c, id_pipe *pp)
{
    const ek_etm4_packet *pkt;
    while (ek_etm4_next(&pp->parser, &pkt) > 0)
        on_packet(c, pp, pkt);
}

static void feed_pipe(dump_ctx *c, id_pipe *pp, const uint8_t *data, size_t len, uint64_t index)
{
    pp->bytes += len;
    ek_etm4_feed(&pp->parser, data, len, index);
    drain(c, pp);
}

static void end_of_trace(dump_ctx *c, id_pipe *pp)
{
    ek_etm4_eot(&pp->parser);
    drain(c, pp);
    if (pp->flow) {
        ek_flow_end(pp->flow);
        drain_elems(c, pp);
    }
    if (c->o.format == FMT_OCSD) {
        ek_sbuf_printf(&c->out, "ID:%x\tEND OF TRACE DATA\n", pp->print_id);
        flush_out(c);
    }
}

static void reset_pipe(dump_ctx *c, id_pipe *pp)
{
    ek_etm4_parser_reset(&pp->parser);
    ek_ocsd_dcd_model_reset(&pp->dcd);
    if (pp->flow) ek_flow_reset(pp->flow);
    if (c->o.format == FMT_OCSD) {
        ek_sbuf_printf(&c->out, "ID:%x\tRESET operation on trace decode path\n", pp->print_id);
        flush_out(c);
    }
}

static void frame_line(dump_ctx *c, const ek_dfmt_item *it)
{
    if (c->o.format == FMT_JSON) {
        ek_sbuf_printf(&c->out, "{\"frame\":\"%s\",\"idx\":%llu",
                       it->kind == EK_DFMT_DATA ? "id_data" : "packed",
                       (unsigned long long)it->index);
        if (it->kind == EK_DFMT_DATA && it->id != EK_TRACE_ID_UNKNOWN)
            ek_sbuf_printf(&c->out, ",\"id\":%u", it->id);
        ek_sbuf_puts(&c->out, ",\"raw\":\"");
        for (unsigned i = 0; i < it->len; i++)
            ek_sbuf_printf(&c->out, "%02x", it->data[i]);
        ek_sbuf_puts(&c->out, "\"}\n");
    } else {
        ek_list_frame_ocsd(&c->out, it);
    }
    flush_out(c);
}

/* ---- building the decoders ------------------------------------------------------------------ */

static int cmp_source_name(const void *a, const void *b, void *ctx)
{
    const dump_ctx *c = ctx;
    const ek_snap_source *const *x = a, *const *y = b;
    return strcmp(source_name(c, *x), source_name(c, *y));
}

static id_pipe *new_pipe(dump_ctx *c, const ek_snap_source *s, unsigned id, unsigned print_id)
{
    id_pipe *pp = calloc(1, sizeof *pp);
    if (!pp) return NULL;
    pp->id = id;
    pp->print_id = print_id;
    pp->src = s;
    pp->name = source_name(c, s);
    ek_etm4_config_from_source(&pp->cfg, &s->cfg);
    ek_etm4_parser_init(&pp->parser, &pp->cfg);
    ek_ocsd_dcd_model_reset(&pp->dcd);
    if (c->o.decode) {
        ek_flow_config fc;
        ek_flow_config_init(&fc);
        fc.source = &s->cfg;
        fc.mem = ek_flow_mem_image(c->img);
        fc.flags = c->o.src_addr_n ? EK_FLOW_SRC_ADDR_N_ATOMS : 0;
        fc.diag = &c->flow_diag;
        if (ek_flow_new(&fc, &pp->flow)) {
            free(pp);
            return NULL;
        }
    }
    return pp;
}

static const char *printer_name(const ek_snap_source *s)
{
    return s->cfg.protocol == EK_PROTO_ETE ? "ETE" : "ETMV4I";
}

/* Decoders for the sources of buffer b, as trc_pkt_lister's decode tree has them: every source
 * of a formatted buffer (by trace ID), or the first source (by name) of a raw buffer. */
static int build_pipes(dump_ctx *c, size_t b)
{
    const ek_snapshot *ss = c->ss;
    const ek_snap_buffer *buf = &ss->buffers[b];
    const ek_snap_source **list = calloc(ss->nsources + 1, sizeof *list);
    size_t n = 0;
    if (!list) return EK_ERR_NOMEM;
    for (size_t i = 0; i < ss->nsources; i++)
        if (ss->sources[i].buffer == (long)b) list[n++] = &ss->sources[i];
    qsort_r(list, n, sizeof *list, cmp_source_name, c);

    c->formatted = buf->format != EK_BUF_SOURCE_DATA;
    int made = 0;
    for (size_t i = 0; i < n; i++) {
        const ek_snap_source *s = list[i];
        if (!c->formatted && i > 0) {
            ek_diag_emit(&c->diag, EK_SEV_NOTE, "dump.extra-source", 0, ss->trace_ini, -1, -1, -1,
                         "raw buffer %s: only the first source (%s) is decoded, not %s", buf->name,
                         source_name(c, list[0]), source_name(c, s));
            continue;
        }
        if (!is_etm4_protocol(s->cfg.protocol)) {
            cli_err("%s: %s source %s (trace ID 0x%x) is not decoded: etmkit decodes ETMv4 and "
                    "ETE only",
                    buf->name, ek_protocol_name(s->cfg.protocol), source_name(c, s),
                    s->cfg.trace_id);
            continue;
        }
        const unsigned id = s->cfg.trace_id & 0x7F;
        if (c->formatted && c->pipes[id]) {
            ek_diag_emit(&c->diag, EK_SEV_WARN, "dump.duplicate-id", 0, ss->trace_ini, -1, -1,
                         (int)id, "sources %s and %s share trace ID 0x%x: only %s is decoded",
                         c->pipes[id]->name, source_name(c, s), id, c->pipes[id]->name);
            continue;
        }
        id_pipe *pp = new_pipe(c, s, id, c->formatted ? id : 0);
        if (!pp) {
            free(list);
            return EK_ERR_NOMEM;
        }
        if (c->formatted)
            c->pipes[id] = pp;
        else
            c->single = pp;
        made++;
        if (c->o.format == FMT_OCSD) {
            ek_sbuf_printf(&c->out, "Trace Packet Lister : Protocol printer %s on Trace ID 0x%x\n",
                           printer_name(s), pp->print_id);
        }
    }
    free(list);

    /* frame deformatter configuration */
    c->dfmt_flags = buf->format == EK_BUF_DSTREAM ? EK_DFMT_FSYNC : EK_DFMT_MEM_ALIGN;
    if (c->o.tpiu) c->dfmt_flags = (c->dfmt_flags & ~(unsigned)EK_DFMT_MEM_ALIGN) | EK_DFMT_FSYNC;
    if (c->o.tpiu_hsync) c->dfmt_flags |= EK_DFMT_HSYNC;
    if (c->o.raw_packed) c->dfmt_flags |= EK_DFMT_OUT_RAW;
    ek_dfmt_init(&c->dfmt, c->dfmt_flags);
    return made;
}

static void free_pipe(id_pipe *pp)
{
    if (pp) ek_flow_free(pp->flow);
    free(pp);
}

static void free_pipes(dump_ctx *c)
{
    for (unsigned i = 0; i < NUM_IDS; i++) {
        free_pipe(c->pipes[i]);
        c->pipes[i] = NULL;
    }
    free_pipe(c->single);
    c->single = NULL;
}

/* The code the flow decoders read, mapped as the reference lister maps it: the memory dumps of
 * the cores of buffer b's trace sources (sources in name order, each core's dumps in their
 * order). Like OpenCSD's memory-accessor map, a dump whose first or last byte falls inside an
 * earlier accepted dump of an overlapping memory space is rejected whole (a note says so), and
 * where accepted dumps overlap the earlier one is read. */
typedef struct dump_ref {
    const ek_snap_dump *d;
    uint64_t len;
} dump_ref;

static int dump_rejected(const dump_ref *acc, size_t nacc, const ek_snap_dump *d, uint64_t len)
{
    const uint64_t first = d->address, last = d->address + len - 1;
    for (size_t i = 0; i < nacc; i++) {
        const uint64_t a0 = acc[i].d->address, a1 = a0 + acc[i].len - 1;
        const unsigned sa = acc[i].d->space ? acc[i].d->space : EK_MS_ANY;
        const unsigned sd = d->space ? d->space : EK_MS_ANY;
        if (((first >= a0 && first <= a1) || (last >= a0 && last <= a1)) && (sa & sd)) return 1;
    }
    return 0;
}

static int build_image(dump_ctx *c, size_t b)
{
    const ek_snapshot *ss = c->ss;
    int rc = ek_image_new(&c->diag, &c->img);
    if (rc) return rc;
    size_t ndumps = 0;
    for (size_t i = 0; i < ss->ndevices; i++)
        ndumps += ss->devices[i].ndumps;
    const ek_snap_source **list = calloc(ss->nsources + 1, sizeof *list);
    long *cores = calloc(ss->nsources + 1, sizeof *cores);
    dump_ref *acc = calloc(ndumps + 1, sizeof *acc);
    size_t n = 0, ncores = 0, nacc = 0;
    if (!list || !cores || !acc) {
        rc = EK_ERR_NOMEM;
        goto done;
    }
    for (size_t i = 0; i < ss->nsources; i++)
        if (ss->sources[i].buffer == (long)b) list[n++] = &ss->sources[i];
    qsort_r(list, n, sizeof *list, cmp_source_name, c);
    for (size_t i = 0; i < n; i++) /* every core once (its dumps again would all overlap) */
    {
        long core = list[i]->core;
        int seen = core < 0 || (size_t)core >= ss->ndevices;
        for (size_t k = 0; k < ncores && !seen; k++)
            seen = cores[k] == core;
        if (!seen) cores[ncores++] = core;
    }
    for (size_t k = 0; k < ncores; k++) {
        const ek_snap_device *dev = &ss->devices[cores[k]];
        for (size_t j = 0; j < dev->ndumps; j++) {
            const ek_snap_dump *d = &dev->dumps[j];
            if (!d->present) continue;
            uint64_t len = d->has_length              ? d->length
                           : d->file_size > d->offset ? d->file_size - d->offset
                                                      : 0;
            if (len == 0) continue;
            if (dump_rejected(acc, nacc, d, len)) {
                ek_diag_emit(&c->diag, EK_SEV_NOTE, "dump.overlapping-image", 0, dev->ini_path, -1,
                             -1, -1, "memory dump %s at 0x%llx overlaps an earlier one: not used",
                             d->section ? d->section : d->path, (unsigned long long)d->address);
                continue;
            }
            acc[nacc].d = d;
            acc[nacc].len = len;
            nacc++;
        }
    }
    /* the image lets later regions win: add the accepted dumps last to first */
    for (size_t k = nacc; k-- > 0;) {
        const ek_snap_dump *d = acc[k].d;
        rc = ek_image_add_file(c->img, d->path, d->offset, d->has_length ? d->length : 0,
                               d->address, d->space);
        if (rc == EK_ERR_NOMEM) goto done;
    }
    rc = 0;
done:
    free(list);
    free(cores);
    free(acc);
    return rc;
}

/* ---- feeding one buffer ------------------------------------------------------------------- */

static void feed_formatted(dump_ctx *c, const uint8_t *data, size_t len, uint64_t index)
{
    ek_dfmt_item it;
    ek_dfmt_feed(&c->dfmt, data, len, index);
    while (ek_dfmt_next(&c->dfmt, &it) > 0) {
        switch (it.kind) {
        case EK_DFMT_RAW_PACKED:
        case EK_DFMT_RAW_FSYNC:
            if (c->o.raw_packed) frame_line(c, &it);
            break;
        case EK_DFMT_DATA: {
            if (c->o.raw_unpacked) frame_line(c, &it);
            id_pipe *pp = it.id < NUM_IDS ? c->pipes[it.id] : NULL;
            if (pp && it.len)
                feed_pipe(c, pp, it.data, it.len, it.index);
            else
                c->unrouted_bytes += it.len;
            break;
        }
        case EK_DFMT_RESET:
            for (unsigned i = 0; i < NUM_IDS; i++)
                if (c->pipes[i]) reset_pipe(c, c->pipes[i]);
            break;
        case EK_DFMT_ERROR:
            c->frame_errors++;
            ek_diag_emit(&c->diag, EK_SEV_WARN, "frame.bad-sync", EK_ERR_FORMAT, c->cur_file, -1,
                         file_off(c, it.index), -1, "%s", it.err ? it.err : "bad frame");
            break;
        }
    }
}

static void feed_block(dump_ctx *c, const uint8_t *data, size_t len, uint64_t index)
{
    if (!(++c->pr_blocks & 63)) cli_progress_update(&c->pr, c->pr_done + index, c->pr_total);
    if (c->formatted)
        feed_formatted(c, data, len, index);
    else if (c->single)
        feed_pipe(c, c->single, data, len, index);
}

static int dump_buffer(dump_ctx *c, size_t b, size_t nth, size_t count)
{
    const ek_snap_buffer *buf = &c->ss->buffers[b];
    if (c->o.multi_session && c->o.format == FMT_OCSD)
        ek_sbuf_printf(&c->out,
                       "####### Multi Session decode: Buffer %zu of %zu; Source name = %s.\n\n",
                       nth + 1, count, buf->name);
    if (!buf->path) {
        ek_diag_emit(&c->diag, EK_SEV_ERROR, "dump.no-file", EK_ERR_NOT_FOUND, c->ss->trace_ini, -1,
                     -1, -1, "buffer %s has no trace file", buf->name);
        return EK_ERR_NOT_FOUND;
    }
    ek_mapped m;
    int rc = ek_map_file(buf->path, &m);
    if (rc) {
        ek_diag_emit(&c->diag, EK_SEV_ERROR, "dump.unreadable", rc, buf->path, -1, -1, -1,
                     "cannot read trace buffer %s", buf->name);
        return rc;
    }
    c->cur_file = buf->path;
    cli_progress_update(&c->pr, c->pr_done, c->pr_total);

    /* Deliver the data as trc_pkt_lister reads it. The index counts delivered bytes only
     * (DSTREAM footers are not part of the trace stream). */
    uint64_t index = 0;
    size_t pos = 0;
    if (!c->o.dstream) {
        while (pos < m.size) {
            const size_t n = m.size - pos < LISTER_BLOCK ? m.size - pos : LISTER_BLOCK;
            feed_block(c, m.data + pos, n, index);
            pos += n;
            index += n;
        }
    } else {
        /* Records of 504 data bytes and an 8-byte footer. The lister reads the footer into
         * the start of its data buffer and prints those 8 bytes with -o_raw_packed, once per
         * record and once more when the file ends (stale bytes then, as it does). */
        uint8_t tb[DSTREAM_FOOTER] = {0};
        for (;;) {
            const size_t n = m.size - pos < DSTREAM_BLOCK ? m.size - pos : DSTREAM_BLOCK;
            int eof = n < DSTREAM_BLOCK;
            if (n) {
                feed_block(c, m.data + pos, n, index);
                memcpy(tb, m.data + pos, n < DSTREAM_FOOTER ? n : DSTREAM_FOOTER);
            }
            pos += n;
            index += n;
            if (!eof) {
                const size_t f = m.size - pos < DSTREAM_FOOTER ? m.size - pos : DSTREAM_FOOTER;
                memcpy(tb, m.data + pos, f);
                pos += f;
                eof = f < DSTREAM_FOOTER;
            }
            if (c->o.raw_packed && c->o.format != FMT_JSON) {
                ek_sbuf_puts(&c->out, "DSTREAM footer [");
                for (size_t i = 0; i < DSTREAM_FOOTER; i++)
                    ek_sbuf_printf(&c->out, "0x%x ", tb[i]);
                ek_sbuf_puts(&c->out, "]\n");
            }
            if (eof) break;
        }
    }
    if (c->formatted && ek_dfmt_pending(&c->dfmt)) {
        ek_diag_emit(&c->diag, EK_SEV_WARN, "frame.partial", EK_ERR_TRUNCATED, buf->path, -1,
                     file_off(c, index - ek_dfmt_pending(&c->dfmt)), -1,
                     "buffer ends inside a frame (%u bytes not decoded)",
                     ek_dfmt_pending(&c->dfmt));
    }

    /* end of trace for every decoder, in trace ID order */
    if (c->formatted) {
        for (unsigned i = 0; i < NUM_IDS; i++)
            if (c->pipes[i]) end_of_trace(c, c->pipes[i]);
    } else if (c->single) {
        end_of_trace(c, c->single);
    }
    if (c->o.format == FMT_OCSD)
        ek_sbuf_printf(&c->out, "Trace Packet Lister : Trace buffer done, processed %llu bytes.\n",
                       (unsigned long long)index);
    c->pr_done += index;
    ek_unmap_file(&m);
    c->cur_file = NULL;
    return 0;
}

static void print_stats(dump_ctx *c)
{
    ek_sbuf *o = &c->out;
    ek_sbuf_puts(o, "\nStatistics\n");
    for (unsigned i = 0; i <= NUM_IDS; i++) {
        id_pipe *pp = i < NUM_IDS ? c->pipes[i] : c->single;
        if (!pp) continue;
        ek_sbuf_printf(o, "  ID 0x%02x %-12s %s: %llu bytes, %llu packets, %llu bad packets\n",
                       pp->print_id, pp->name, ek_protocol_name(pp->cfg.protocol),
                       (unsigned long long)pp->bytes, (unsigned long long)pp->packets,
                       (unsigned long long)pp->errors);
        if (pp->flow) {
            ek_flow_stats st;
            ek_flow_get_stats(pp->flow, &st);
            uint64_t total = 0;
            for (int t = 0; t < EK_ELEM_NTYPES; t++)
                total += st.elems[t];
            ek_sbuf_printf(o,
                           "    decode: %llu elements, %llu instructions, %llu decode errors, "
                           "%llu resyncs, %llu atoms without an address; block cache %llu hits / "
                           "%llu walks\n",
                           (unsigned long long)total, (unsigned long long)st.instructions,
                           (unsigned long long)st.errors, (unsigned long long)st.resyncs,
                           (unsigned long long)st.atoms_skipped,
                           (unsigned long long)st.blocks_cached,
                           (unsigned long long)st.blocks_walked);
            ek_sbuf_puts(o, "     ");
            for (int t = 0; t < EK_ELEM_NTYPES; t++)
                if (st.elems[t])
                    ek_sbuf_printf(o, " %s=%llu", ek_elem_type_name(t),
                                   (unsigned long long)st.elems[t]);
            ek_sbuf_puts(o, "\n");
        }
    }
    if (c->formatted)
        ek_sbuf_printf(o, "  frames: %llu bytes for IDs without a decoder, %llu sync errors\n",
                       (unsigned long long)c->unrouted_bytes, (unsigned long long)c->frame_errors);
    flush_out(c);
}

int cmd_dump_snapshot(int argc, char **argv)
{
    dump_ctx ctx;
    dump_ctx *c = &ctx;
    memset(c, 0, sizeof *c);
    int rc = parse_args(&c->o, argc, argv);
    if (rc) return rc < 0 ? CLI_OK : rc;

    c->diags = ek_diag_collector_new(4);
    if (!c->diags) {
        cli_err("out of memory");
        return CLI_FAIL;
    }
    c->all = ek_diag_collector_sink(c->diags);
    c->diag.fn = diag_filter;
    c->diag.ctx = c;
    c->flow_diag.fn = flow_diag;
    c->flow_diag.ctx = c;
    if (c->o.verbose) {
        ek_diag err = cli_diag_stderr();
        ek_diag_collector_forward(c->diags, &err);
    }

    int status = CLI_FAIL;
    rc = ek_snapshot_open(c->o.dir, &c->diag, &c->ss);
    if (rc || !c->ss) {
        cli_err("%s: not a usable trace snapshot (%s)", c->o.dir, ek_strerror(rc));
        goto out;
    }
    if (!c->ss->nbuffers) {
        cli_err("%s: the snapshot names no trace buffer", c->o.dir);
        goto out;
    }

    const size_t first = c->ss->buffer_order ? c->ss->buffer_order[0] : 0;
    if (c->o.decode && build_image(c, first)) {
        cli_err("out of memory");
        goto out;
    }
    if (c->o.format == FMT_OCSD)
        ek_sbuf_printf(&c->out,
                       "Trace Packet Lister : reading snapshot from path %s\nUsing %s as "
                       "trace source\n",
                       c->o.dir, c->ss->buffers[first].name);
    rc = build_pipes(c, first);
    if (rc < 0) {
        cli_err("out of memory");
        goto out;
    }
    if (rc == 0) {
        cli_err("%s: buffer %s has no ETMv4/ETE source to decode", c->o.dir,
                c->ss->buffers[first].name);
        goto out;
    }

    /* Without --multi-session only the first buffer is decoded; with it every buffer in
     * turn, through the decoders built for the first, reset in between (as the lister). */
    const size_t count = c->o.multi_session ? c->ss->nbuffers : 1;
    int decoded = 0;
    for (size_t k = 0; k < count; k++) {
        const ek_snap_buffer *buf =
            &c->ss->buffers[c->ss->buffer_order ? c->ss->buffer_order[k] : k];
        struct stat st;
        if (buf->path && !stat(buf->path, &st)) c->pr_total += (uint64_t)st.st_size;
    }
    cli_progress_start(&c->pr, "dump", c->o.quiet, 1);
    for (size_t k = 0; k < count; k++) {
        const size_t b = c->ss->buffer_order ? c->ss->buffer_order[k] : k;
        if (dump_buffer(c, b, k, count) == 0) decoded++;
        if (c->o.multi_session) {
            if (c->formatted) {
                ek_dfmt_reset(&c->dfmt);
                for (unsigned i = 0; i < NUM_IDS; i++)
                    if (c->pipes[i]) reset_pipe(c, c->pipes[i]);
            } else if (c->single) {
                reset_pipe(c, c->single);
            }
            if (c->o.format == FMT_OCSD)
                ek_sbuf_printf(&c->out, "####### Buffer %zu : %s Complete\n\n", k + 1,
                               c->ss->buffers[b].name);
        }
        flush_out(c);
    }
    cli_progress_end(&c->pr);
    if (c->o.stats) print_stats(c);
    status = decoded ? CLI_OK : CLI_FAIL;
    if (c->o.strict && ek_diag_collector_count(c->diags, EK_SEV_WARN)) status = CLI_FAIL;

out:
    cli_write(&c->out, stdout);
    fflush(stdout);
    /* with --verbose every event was printed as it came */
    if (!c->o.verbose && ek_diag_collector_count(c->diags, EK_SEV_WARN))
        cli_print_diag_summary(c->diags, 0);
    ek_sbuf_free(&c->out);
    free_pipes(c);
    ek_image_free(c->img);
    ek_snapshot_free(c->ss);
    ek_diag_collector_free(c->diags);
    return status;
}
