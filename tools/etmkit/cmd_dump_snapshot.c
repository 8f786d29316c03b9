/* etmkit dump SNAPSHOT_DIR: list the packets of a trace snapshot.
 *
 * The library's decode tree (etmkit/decode.h) decodes each buffer: frame deformatter ->
 * per-trace-ID packet parser (ETMv4/ETE, PTM, ETMv3, STM, ITM) -> flow decoder (--decode), as
 * OpenCSD's trc_pkt_lister builds its decode tree; the flow decoders read code from one memory
 * image of the cores' memory dumps. This file parses the arguments and prints the tree's items with
 * the library's listing functions (etmkit/listing.h). Data is handed to the tree as the lister
 * reads it (1024-byte reads, or DSTREAM records) so that raw frame listings line up. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cli_progress.h"
#include "etmkit/mapfile.h"
#include "etmkit/decode.h"
#include "etmkit/elem.h"
#include "etmkit/image.h"
#include "etmkit/listing.h"
#include "etmkit/snapshot.h"

enum { FMT_OCSD, FMT_TEXT, FMT_JSON };

#define LISTER_BLOCK 1024 /* trc_pkt_lister's read size */

typedef struct dump_opts {
    int format;
    int pkt_mon, decode, decode_only, multi_session, src_addr_n, stats, verbose, strict, quiet;
    int dstream, tpiu, tpiu_hsync, raw_packed, raw_unpacked;
    const char *dir;
} dump_opts;

typedef struct dump_ctx {
    dump_opts o;
    ek_snapshot *ss;
    ek_diag_collector *diags;
    ek_diag diag; /* filtered sink in front of 'all' */
    ek_diag all;  /* the collector */
    ek_sbuf out;
    ek_decode *tree;
    ek_listing listing;
    int formatted;
    ek_image *img;   /* code for the flow decoders */
    cli_progress pr; /* bytes of the buffers to list: done (before this buffer), total */
    uint64_t pr_done, pr_total, pr_base, pr_items;
    int stopped;         /* (--format=ocsd) the data path stopped as OpenCSD's does */
    uint64_t stop_index; /* ... having processed this much of the buffer */
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
          "ETMv4, ETMv4-M, ETE, PTM, ETMv3, STM and ITM sources are decoded. --format=ocsd\n"
          "follows OpenCSD 1.8.0 where it departs from the architecture (fatal stops\n"
          "included); the other formats follow the architecture.\n"
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

/* ---- the memory image --------------------------------------------------------------------- */

static int build_image(dump_ctx *c, size_t b)
{
    int rc = ek_image_new(&c->diag, &c->img);
    if (rc) return rc;
    rc = ek_image_add_snapshot_buffer(c->img, c->ss, b);
    return rc == EK_ERR_NOMEM ? rc : 0;
}

/* ---- one buffer ------------------------------------------------------------------------------ */

static void flush_out(dump_ctx *c)
{
    cli_maybe_flush(&c->out, stdout);
}

/* Take the tree's items and list them. */
static void drain(dump_ctx *c)
{
    ek_decode_item it;
    int rc;
    while ((rc = ek_decode_next(c->tree, &it)) > 0) {
        ek_list_item(&c->out, &c->listing, &it);
        if (it.kind == EK_DI_STOP) {
            c->stopped = 1;
            c->stop_index = it.index;
        }
        flush_out(c);
        if (!(++c->pr_items & 4095)) {
            ek_decode_stats st;
            ek_decode_stats_get(c->tree, &st);
            cli_progress_update(&c->pr, c->pr_done + (st.input_bytes - c->pr_base), c->pr_total);
        }
    }
    if (rc < 0)
        ek_diag_emit(&c->diag, EK_SEV_ERROR, "dump.nomem", rc, c->ss->trace_ini, -1, -1, -1,
                     "out of memory decoding");
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
    ek_decode_set_file(c->tree, buf->path);
    cli_progress_update(&c->pr, c->pr_done, c->pr_total);
    ek_decode_stats st0, st1;
    ek_decode_stats_get(c->tree, &st0);
    c->pr_base = st0.input_bytes;
    ek_decode_feed(c->tree, m.data, m.size, 0);
    drain(c);
    if (!c->stopped) {
        ek_decode_end(c->tree); /* every decoder, in trace ID order */
        drain(c);
    }
    ek_decode_stats_get(c->tree, &st1);
    /* (after a stop, the lister counts what its decode tree had taken) */
    const uint64_t processed = c->stopped ? c->stop_index : st1.input_bytes - st0.input_bytes;
    if (c->o.format == FMT_OCSD)
        ek_sbuf_printf(&c->out, "Trace Packet Lister : Trace buffer done, processed %llu bytes.\n",
                       (unsigned long long)processed);
    c->pr_done += st1.input_bytes - st0.input_bytes;
    ek_unmap_file(&m);
    ek_decode_set_file(c->tree, NULL);
    return 0;
}

static void print_stats(dump_ctx *c)
{
    ek_sbuf *o = &c->out;
    ek_sbuf_puts(o, "\nStatistics\n");
    for (unsigned id = 0; id < 128; id++) {
        ek_decode_source_stats ps;
        ek_decode_source_info si;
        if (ek_decode_source_stats_get(c->tree, id, &ps)) continue;
        ek_decode_source_info_get(c->tree, (size_t)ps.source, &si);
        ek_sbuf_printf(o, "  ID 0x%02x %-12s %s: %llu bytes, %llu packets, %llu bad packets\n",
                       c->formatted ? id : 0, si.name, ek_protocol_name(si.cfg->protocol),
                       (unsigned long long)ps.bytes, (unsigned long long)ps.packets,
                       (unsigned long long)ps.bad_packets);
        if (ps.has_flow) {
            const ek_flow_stats *st = &ps.flow;
            uint64_t total = 0;
            for (int t = 0; t < EK_ELEM_NTYPES; t++)
                total += st->elems[t];
            ek_sbuf_printf(o,
                           "    decode: %llu elements, %llu instructions, %llu decode errors, "
                           "%llu resyncs, %llu atoms without an address; block cache %llu hits / "
                           "%llu walks\n",
                           (unsigned long long)total, (unsigned long long)st->instructions,
                           (unsigned long long)st->errors, (unsigned long long)st->resyncs,
                           (unsigned long long)st->atoms_skipped,
                           (unsigned long long)st->blocks_cached,
                           (unsigned long long)st->blocks_walked);
            ek_sbuf_puts(o, "     ");
            for (int t = 0; t < EK_ELEM_NTYPES; t++)
                if (st->elems[t])
                    ek_sbuf_printf(o, " %s=%llu", ek_elem_type_name(t),
                                   (unsigned long long)st->elems[t]);
            ek_sbuf_puts(o, "\n");
        }
    }
    if (c->formatted) {
        ek_decode_stats st;
        ek_decode_stats_get(c->tree, &st);
        ek_sbuf_printf(o, "  frames: %llu bytes for IDs without a decoder, %llu sync errors\n",
                       (unsigned long long)st.undecoded_bytes, (unsigned long long)st.frame_errors);
    }
    flush_out(c);
}

/* The decode tree for buffer b's sources, as trc_pkt_lister builds it. Returns the number of
 * sources decoded, or a negative status. */
static int build_tree(dump_ctx *c, size_t b)
{
    const ek_snap_buffer *buf = &c->ss->buffers[b];
    ek_decode_config dc;
    ek_decode_config_init(&dc);
    dc.flags = EK_DECODE_DIAG_STREAM | EK_DECODE_DIAG_ITEMS;
    dc.flags |= c->o.decode_only ? EK_DECODE_BATCH : EK_DECODE_PACKETS;
    if (c->o.decode) dc.flags |= EK_DECODE_ELEMS;
    if (c->o.raw_packed) dc.flags |= EK_DECODE_RAW_PACKED;
    if (c->o.raw_unpacked) dc.flags |= EK_DECODE_RAW_UNPACKED;
    if (c->o.dstream) dc.flags |= EK_DECODE_DSTREAM;
    dc.model = EK_DECODE_MODEL_OCSD;
    /* the ocsd listing is trc_pkt_lister's, OpenCSD's departures from the architecture included
     * (docs/PROTOCOLS.md); the others follow the architecture */
    if (c->o.format == FMT_OCSD) dc.compat = EK_DECODE_COMPAT_OCSD;
    dc.block_size = LISTER_BLOCK;
    if (c->img) dc.mem = ek_flow_mem_image(c->img);
    dc.flow_flags = c->o.src_addr_n ? EK_FLOW_SRC_ADDR_N_ATOMS : 0;
    dc.diag = &c->diag;
    int rc = ek_decode_new(&dc, &c->tree);
    if (rc) return rc;
    rc = ek_decode_add_snapshot_buffer(c->tree, c->ss, b);
    if (rc < 0) return rc;
    c->formatted = buf->format != EK_BUF_SOURCE_DATA;
    /* the frame format as the options say (--tpiu: FSYNCs, --tpiu-hsync: and HSYNCs) */
    if (c->formatted) {
        unsigned f = buf->format == EK_BUF_DSTREAM ? EK_DFMT_FSYNC : EK_DFMT_MEM_ALIGN;
        if (c->o.tpiu) f = (f & ~(unsigned)EK_DFMT_MEM_ALIGN) | EK_DFMT_FSYNC;
        if (c->o.tpiu_hsync) f |= EK_DFMT_HSYNC;
        if (c->o.raw_packed) f |= EK_DFMT_OUT_RAW;
        ek_decode_set_frames(c->tree, f);
    }
    c->listing.format = c->o.format == FMT_OCSD   ? EK_LISTING_OCSD
                        : c->o.format == FMT_JSON ? EK_LISTING_JSON
                                                  : EK_LISTING_TEXT;
    c->listing.packets = !c->o.decode_only;
    c->listing.monitor = c->o.pkt_mon || c->o.decode;
    c->listing.single_source = !c->formatted;
    /* what a decoder said as it was made (its configuration), printed before its banner as
     * the lister logs it */
    ek_sbuf said[128];
    memset(said, 0, sizeof said);
    ek_decode_item it;
    while (ek_decode_next(c->tree, &it) > 0)
        ek_list_item(&said[it.trace_id & 127], &c->listing, &it);
    /* the sources as the lister names them; those of other protocols are not decoded */
    const size_t n = ek_decode_source_count(c->tree);
    for (size_t i = 0; i < n; i++) {
        ek_decode_source_info si;
        ek_decode_source_info_get(c->tree, i, &si);
        if (!si.proto) {
            cli_err("%s: %s source %s (trace ID 0x%x) is not decoded: etmkit does not know its "
                    "protocol",
                    buf->name, ek_protocol_name(si.cfg->protocol), si.name, si.cfg->trace_id);
            continue;
        }
        ek_sbuf *pre = &said[si.cfg->trace_id & 127];
        if (pre->len) ek_sbuf_put(&c->out, pre->p, pre->len);
        ek_sbuf_free(pre);
    }
    /* the lister attaches its packet printers in trace ID order */
    for (unsigned id = 0; id < 128 && c->o.format == FMT_OCSD; id++) {
        ek_decode_source_stats ps;
        ek_decode_source_info si;
        if (ek_decode_source_stats_get(c->tree, id, &ps) ||
            ek_decode_source_info_get(c->tree, (size_t)ps.source, &si))
            continue;
        const ek_list_proto *lp = ek_list_proto_find(si.cfg->protocol);
        if (lp)
            ek_sbuf_printf(&c->out, "Trace Packet Lister : Protocol printer %s on Trace ID 0x%x\n",
                           lp->printer_name(si.cfg->protocol), c->formatted ? id : 0);
    }
    for (size_t i = 0; i < 128; i++)
        ek_sbuf_free(&said[i]);
    return rc;
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
    rc = build_tree(c, first);
    if (rc < 0) {
        cli_err("out of memory");
        goto out;
    }
    if (rc == 0) {
        cli_err("%s: buffer %s has no source of a protocol etmkit decodes", c->o.dir,
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
        if (c->stopped) break; /* (the lister stops there, every buffer) */
        if (c->o.multi_session) {
            ek_decode_reset(c->tree);
            drain(c);
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
    ek_decode_free(c->tree);
    ek_image_free(c->img);
    ek_snapshot_free(c->ss);
    ek_diag_collector_free(c->diags);
    return status;
}
