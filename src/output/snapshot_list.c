/* Listing a trace snapshot as OpenCSD's trc_pkt_lister does (etmkit/listing.h): the twin of
 * the perf.data tracer (perf_trace.c).
 *
 * The decode tree (etmkit/decode.h) decodes each buffer: frame deformatter -> per-trace-ID
 * packet parser (ETMv4/ETE, PTM, ETMv3, STM, ITM) -> flow decoder (decode), as the lister
 * builds its decode tree; the flow decoders read code from one memory image of the first
 * buffer's memory dumps. Data is handed to the tree as the lister reads it (1024-byte reads,
 * or DSTREAM records) so that raw frame listings line up. The items are listed by
 * ek_list_item (decode_list.c); this file adds what the lister prints around them: its
 * banners, the decoders' configuration lines in trace ID order, "processed N bytes", the
 * multi-session lines and the statistics. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "etmkit/decode.h"
#include "etmkit/elem.h"
#include "etmkit/image.h"
#include "etmkit/listing.h"
#include "etmkit/mapfile.h"
#include "etmkit/snapshot.h"

#define LISTER_BLOCK 1024       /* trc_pkt_lister's read size */
#define WRITE_AT     (1u << 16) /* text handed to the caller in pieces of about this size */
#define NIDS         128        /* trace IDs */

typedef struct snap_lister {
    const ek_snapshot_list_opts *o;
    const ek_snapshot *ss;
    ek_diag diag; /* o->diag, or a sink that drops everything */
    ek_sbuf out;
    int write_rc; /* the caller's write failed */
    ek_decode *tree;
    ek_listing listing;
    int formatted;
    ek_image *img;                                 /* code for the flow decoders */
    uint64_t pr_done, pr_total, pr_base, pr_items; /* progress: bytes of the buffers to list */
    int stopped;         /* (OCSD) the data path stopped as OpenCSD's does */
    uint64_t stop_index; /* ... having processed this much of the buffer */
} snap_lister;

static void write_out(snap_lister *l)
{
    if (l->out.len && !l->write_rc && l->o->write &&
        l->o->write(l->o->write_ctx, l->out.p, l->out.len))
        l->write_rc = EK_ERR_IO;
    ek_sbuf_reset(&l->out);
}

static inline void maybe_write(snap_lister *l)
{
    if (l->out.len >= WRITE_AT) write_out(l);
}

static void progress(snap_lister *l, uint64_t done)
{
    if (l->o->progress) l->o->progress(l->o->progress_ctx, done, l->pr_total);
}

static ek_listing_format format(const snap_lister *l)
{
    return l->o->format;
}

/* Take the tree's items and list them. */
static void drain(snap_lister *l)
{
    ek_decode_item it;
    int rc;
    while ((rc = ek_decode_next(l->tree, &it)) > 0) {
        ek_list_item(&l->out, &l->listing, &it);
        if (it.kind == EK_DI_STOP) {
            l->stopped = 1;
            l->stop_index = it.index;
        }
        maybe_write(l);
        if (!(++l->pr_items & 4095) && l->o->progress) {
            ek_decode_stats st;
            ek_decode_stats_get(l->tree, &st);
            progress(l, l->pr_done + (st.input_bytes - l->pr_base));
        }
    }
    if (rc < 0)
        ek_diag_emit(&l->diag, EK_SEV_ERROR, "dump.nomem", rc, l->ss->trace_ini, -1, -1, -1,
                     "out of memory decoding");
}

/* Buffer b, the nth of count listed. */
static int list_buffer(snap_lister *l, size_t b, size_t nth, size_t count)
{
    const ek_snap_buffer *buf = &l->ss->buffers[b];
    if (l->o->multi_session && format(l) == EK_LISTING_OCSD)
        ek_sbuf_printf(&l->out,
                       "####### Multi Session decode: Buffer %zu of %zu; Source name = %s.\n\n",
                       nth + 1, count, buf->name);
    if (!buf->path) {
        ek_diag_emit(&l->diag, EK_SEV_ERROR, "dump.no-file", EK_ERR_NOT_FOUND, l->ss->trace_ini, -1,
                     -1, -1, "buffer %s has no trace file", buf->name);
        return EK_ERR_NOT_FOUND;
    }
    /* (not present: the reader found no regular file there and said why, with its trace.ini
     * line: not said again; a device or a FIFO read whole would never end: /dev/zero) */
    if (!buf->present) return EK_ERR_IO;
    ek_mapped m;
    int rc = ek_map_file(buf->path, &m);
    if (rc) {
        ek_diag_emit(&l->diag, EK_SEV_ERROR, "dump.unreadable", rc, buf->path, -1, -1, -1,
                     "cannot read trace buffer %s (%s)", buf->name, strerror(errno));
        return rc;
    }
    ek_decode_set_file(l->tree, buf->path);
    progress(l, l->pr_done);
    ek_decode_stats st0, st1;
    ek_decode_stats_get(l->tree, &st0);
    l->pr_base = st0.input_bytes;
    ek_decode_feed(l->tree, m.data, m.size, 0);
    drain(l);
    if (!l->stopped) {
        ek_decode_end(l->tree); /* every decoder, in trace ID order */
        drain(l);
    }
    ek_decode_stats_get(l->tree, &st1);
    /* (after a stop, the lister counts what its decode tree had taken) */
    const uint64_t processed = l->stopped ? l->stop_index : st1.input_bytes - st0.input_bytes;
    if (format(l) == EK_LISTING_OCSD)
        ek_sbuf_printf(&l->out, "Trace Packet Lister : Trace buffer done, processed %llu bytes.\n",
                       (unsigned long long)processed);
    l->pr_done += st1.input_bytes - st0.input_bytes;
    ek_unmap_file(&m);
    ek_decode_set_file(l->tree, NULL);
    return 0;
}

static void list_stats(snap_lister *l)
{
    ek_sbuf *o = &l->out;
    ek_sbuf_puts(o, "\nStatistics\n");
    for (unsigned id = 0; id < NIDS; id++) {
        ek_decode_source_stats ps;
        ek_decode_source_info si;
        if (ek_decode_source_stats_get(l->tree, id, &ps)) continue;
        ek_decode_source_info_get(l->tree, (size_t)ps.source, &si);
        ek_sbuf_printf(o, "  ID 0x%02x %-12s %s: %llu bytes, %llu packets, %llu bad packets\n",
                       l->formatted ? id : 0, si.name, ek_protocol_name(si.cfg->protocol),
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
    if (l->formatted) {
        ek_decode_stats st;
        ek_decode_stats_get(l->tree, &st);
        ek_sbuf_printf(o, "  frames: %llu bytes for IDs without a decoder, %llu sync errors\n",
                       (unsigned long long)st.undecoded_bytes, (unsigned long long)st.frame_errors);
    }
    maybe_write(l);
}

/* The decode tree for buffer b's sources, as trc_pkt_lister builds it. Returns the number of
 * sources decoded, or a negative status. */
static int build_tree(snap_lister *l, size_t b)
{
    const ek_snapshot_list_opts *o = l->o;
    const ek_snap_buffer *buf = &l->ss->buffers[b];
    ek_decode_config dc;
    ek_decode_config_init(&dc);
    dc.flags = EK_DECODE_DIAG_STREAM | EK_DECODE_DIAG_ITEMS;
    dc.flags |= o->decode_only ? EK_DECODE_BATCH : EK_DECODE_PACKETS;
    if (o->decode || o->decode_only) dc.flags |= EK_DECODE_ELEMS;
    if (o->raw_packed) dc.flags |= EK_DECODE_RAW_PACKED;
    if (o->raw_unpacked) dc.flags |= EK_DECODE_RAW_UNPACKED;
    if (o->dstream) dc.flags |= EK_DECODE_DSTREAM;
    dc.model = EK_DECODE_MODEL_OCSD;
    /* the ocsd listing is trc_pkt_lister's, OpenCSD's departures from the architecture included
     * (docs/PROTOCOLS.md); the others follow the architecture */
    if (format(l) == EK_LISTING_OCSD) dc.compat = EK_DECODE_COMPAT_OCSD;
    /* ITM without sync packets: decoded from the first byte unless the listing is OpenCSD's or
     * the caller asks to wait for an A-Sync */
    const int itm_sync = o->itm_sync != EK_LIST_ITM_SYNC_DEFAULT ? o->itm_sync
                         : format(l) == EK_LISTING_OCSD          ? EK_LIST_ITM_SYNC_WAIT
                                                                 : EK_LIST_ITM_SYNC_ASSUME;
    if (itm_sync == EK_LIST_ITM_SYNC_ASSUME) dc.source_flags |= EK_SRC_ITM_ASSUME_SYNC;
    dc.block_size = LISTER_BLOCK;
    if (l->img) dc.mem = ek_flow_mem_image(l->img);
    dc.flow_flags = o->src_addr_n ? EK_FLOW_SRC_ADDR_N_ATOMS : 0;
    dc.diag = &l->diag;
    int rc = ek_decode_new(&dc, &l->tree);
    if (rc) return rc;
    rc = ek_decode_add_snapshot_buffer(l->tree, l->ss, b);
    if (rc < 0) return rc;
    l->formatted = buf->format != EK_BUF_SOURCE_DATA;
    /* the frame format as the options say (tpiu: FSYNCs, tpiu_hsync: and HSYNCs) */
    if (l->formatted) {
        unsigned f = ek_decode_snapshot_frames(buf->format);
        if (o->tpiu || o->tpiu_hsync) f = (f & ~(unsigned)EK_DFMT_MEM_ALIGN) | EK_DFMT_FSYNC;
        if (o->tpiu_hsync) f |= EK_DFMT_HSYNC;
        if (o->raw_packed) f |= EK_DFMT_OUT_RAW;
        ek_decode_set_frames(l->tree, f);
    }
    l->listing.format = format(l);
    l->listing.packets = !o->decode_only;
    l->listing.monitor = o->pkt_mon || o->decode || o->decode_only;
    l->listing.single_source = !l->formatted;
    /* what a decoder said as it was made (its configuration), printed before its banner as
     * the lister logs it */
    ek_sbuf said[NIDS];
    memset(said, 0, sizeof said);
    ek_decode_item it;
    while (ek_decode_next(l->tree, &it) > 0)
        ek_list_item(&said[it.trace_id & (NIDS - 1)], &l->listing, &it);
    /* the sources as the lister names them; those of other protocols are not decoded */
    const size_t n = ek_decode_source_count(l->tree);
    for (size_t i = 0; i < n; i++) {
        ek_decode_source_info si;
        ek_decode_source_info_get(l->tree, i, &si);
        if (!si.proto) {
            ek_diag_emit(&l->diag, EK_SEV_WARN, "dump.unknown-protocol", EK_ERR_UNSUPPORTED,
                         l->ss->trace_ini, -1, -1, -1,
                         "%s: %s source %s (trace ID 0x%x) is not decoded: etmkit does not know "
                         "its protocol",
                         buf->name, ek_protocol_name(si.cfg->protocol), si.name, si.cfg->trace_id);
            continue;
        }
        ek_sbuf *pre = &said[si.cfg->trace_id & (NIDS - 1)];
        if (pre->len) ek_sbuf_put(&l->out, pre->p, pre->len);
        ek_sbuf_free(pre);
    }
    /* the lister attaches its packet printers in trace ID order */
    for (unsigned id = 0; id < NIDS && format(l) == EK_LISTING_OCSD; id++) {
        ek_decode_source_stats ps;
        ek_decode_source_info si;
        if (ek_decode_source_stats_get(l->tree, id, &ps) ||
            ek_decode_source_info_get(l->tree, (size_t)ps.source, &si))
            continue;
        const ek_list_proto *lp = ek_list_proto_find(si.cfg->protocol);
        if (lp)
            ek_sbuf_printf(&l->out, "Trace Packet Lister : Protocol printer %s on Trace ID 0x%x\n",
                           lp->printer_name(si.cfg->protocol), l->formatted ? id : 0);
    }
    for (size_t i = 0; i < NIDS; i++)
        ek_sbuf_free(&said[i]);
    return rc;
}

void ek_snapshot_list_opts_init(ek_snapshot_list_opts *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->format = EK_LISTING_TEXT;
}

static size_t buffer_at(const ek_snapshot *ss, size_t k)
{
    return ss->buffer_order ? ss->buffer_order[k] : k;
}

/* The listing itself; l->out holds what is left to write. */
static int list_snapshot(snap_lister *l)
{
    const ek_snapshot_list_opts *o = l->o;
    const ek_snapshot *ss = l->ss;
    const size_t first = buffer_at(ss, 0);
    if (o->decode || o->decode_only) {
        int rc = ek_image_new(&l->diag, &l->img);
        if (!rc) rc = ek_image_add_snapshot_buffer(l->img, ss, first);
        if (rc == EK_ERR_NOMEM) return rc;
        /* code given as files: over the dumps */
        for (size_t i = 0; l->img && i < o->nimages; i++)
            if ((rc = ek_image_add_spec(l->img, &o->images[i], EK_MS_ANY, NULL))) return rc;
    }
    if (format(l) == EK_LISTING_OCSD)
        ek_sbuf_printf(&l->out,
                       "Trace Packet Lister : reading snapshot from path %s\nUsing %s as "
                       "trace source\n",
                       o->path ? o->path : "", ss->buffers[first].name);
    int rc = build_tree(l, first);
    if (rc < 0) return rc;
    if (rc == 0) return EK_ERR_UNSUPPORTED;

    /* Without multi_session only the first buffer is decoded; with it every buffer in turn,
     * through the decoders built for the first, reset in between (as the lister). */
    const size_t count = o->multi_session ? ss->nbuffers : 1;
    for (size_t k = 0; k < count; k++) {
        const ek_snap_buffer *buf = &ss->buffers[buffer_at(ss, k)];
        struct stat st;
        if (buf->path && !stat(buf->path, &st)) l->pr_total += (uint64_t)st.st_size;
    }
    int decoded = 0;
    for (size_t k = 0; k < count && !l->write_rc; k++) {
        const size_t b = buffer_at(ss, k);
        if (list_buffer(l, b, k, count) == 0) decoded++;
        if (l->stopped) break; /* (the lister stops there, every buffer) */
        if (o->multi_session) {
            ek_decode_reset(l->tree);
            drain(l);
            if (format(l) == EK_LISTING_OCSD)
                ek_sbuf_printf(&l->out, "####### Buffer %zu : %s Complete\n\n", k + 1,
                               ss->buffers[b].name);
        }
        write_out(l);
    }
    progress(l, l->pr_done);
    if (o->stats) list_stats(l);
    return l->out.oom ? EK_ERR_NOMEM : decoded;
}

int ek_snapshot_list(const ek_snapshot *ss, const ek_snapshot_list_opts *o0)
{
    if (!ss || !o0 || o0->size < EK_SNAPSHOT_LIST_OPTS_SIZE_V1 || !ss->nbuffers) return EK_ERR_ARG;
    /* an older caller's smaller struct: the fields it does not have stay zero */
    ek_snapshot_list_opts oc;
    memset(&oc, 0, sizeof oc);
    memcpy(&oc, o0, o0->size < sizeof oc ? o0->size : sizeof oc);
    const ek_snapshot_list_opts *o = &oc;
    if (o->format != EK_LISTING_OCSD && o->format != EK_LISTING_TEXT &&
        o->format != EK_LISTING_JSON)
        return EK_ERR_ARG;
    if (o->itm_sync < EK_LIST_ITM_SYNC_DEFAULT || o->itm_sync > EK_LIST_ITM_SYNC_ASSUME)
        return EK_ERR_ARG;
    snap_lister l;
    memset(&l, 0, sizeof l);
    l.o = o;
    l.ss = ss;
    l.diag = o->diag ? *o->diag : (ek_diag){NULL, NULL}; /* (events dropped) */
    int rc = list_snapshot(&l);
    write_out(&l); /* what was made, even after a failure (the banner) */
    if (l.write_rc) rc = l.write_rc;
    ek_sbuf_free(&l.out);
    ek_decode_free(l.tree);
    ek_image_free(l.img);
    return rc;
}
