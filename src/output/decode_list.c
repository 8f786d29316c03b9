/* Listing a decode tree's items: one function for every kind of item, in the format asked
 * (etmkit/listing.h). The per-protocol packet lines come from the ek_list_proto tables. */
#include "etmkit/elem.h"
#include "etmkit/listing.h"
#include "output/list_int.h"

static void frame_json(ek_sbuf *out, const ek_dfmt_item *it)
{
    ek_sbuf_printf(out, "{\"frame\":\"%s\",\"idx\":%llu",
                   it->kind == EK_DFMT_DATA ? "id_data" : "packed", (unsigned long long)it->index);
    if (it->kind == EK_DFMT_DATA && it->id != EK_TRACE_ID_UNKNOWN)
        ek_sbuf_printf(out, ",\"id\":%u", it->id);
    ek_sbuf_puts(out, ",\"raw\":\"");
    for (unsigned i = 0; i < it->len; i++)
        ek_sbuf_printf(out, "%02x", it->data[i]);
    ek_sbuf_puts(out, "\"}\n");
}

/* Drop what was appended since `at` (a tab put before a line that did not come). */
static void truncate_to(ek_sbuf *out, size_t at)
{
    if (out->len > at) {
        out->len = at;
        if (out->p) out->p[at] = 0;
    }
}

/* A damaged packet's line, after the lister's log entry for it (out of line: rare). */
__attribute__((noinline)) static void damaged_packet(ek_sbuf *out, const ek_listing *l,
                                                     const ek_decode_item *it, unsigned id,
                                                     const ek_list_proto *f)
{
    const void *pkt = it->packet.pkt;
    if (l->format == EK_LISTING_OCSD) {
        if (f->ocsd_pre) f->ocsd_pre(out, pkt, it->config);
        f->ocsd(out, pkt, id, l->monitor, it->config);
        return;
    }
    /* perf prints the lister's log lines and packet lines, each after a tab */
    const size_t at = out->len;
    ek_sbuf_putc(out, '\t');
    if (f->ocsd_pre) f->ocsd_pre(out, pkt, it->config);
    if (out->len > at + 1)
        ek_sbuf_putc(out, '\n');
    else
        truncate_to(out, at);
    ek_sbuf_putc(out, '\t');
    f->ocsd(out, pkt, it->trace_id, 0, it->config);
}

/* A packet's line (every packet of a listing comes here: kept short, the formatter called
 * last). */
static inline void packet(ek_sbuf *out, const ek_listing *l, const ek_decode_item *it, unsigned id)
{
    if (!l->packets) return;
    const ek_list_proto *f = list_proto(it->protocol);
    if (!f) return;
    const void *pkt = it->packet.pkt;
    const uint32_t fl = it->packet.flags;
    /* a packet sink sees only the first of a run of unsynchronised packets */
    const int repeat = (fl & EK_DPKT_REPEAT) != 0;
    /* (the lister logs something before a packet only for damaged ones) */
    const int damaged = (fl & (EK_DPKT_ERROR | EK_DPKT_NOTSYNC | EK_DPKT_UNSYNCED)) != 0;
    switch (l->format) {
    case EK_LISTING_OCSD:
        if (!l->monitor && repeat) return;
        if (damaged) {
            damaged_packet(out, l, it, id, f);
            return;
        }
        f->ocsd(out, pkt, id, l->monitor, it->config);
        return;
    case EK_LISTING_PERF:
        if (repeat) return;
        if (damaged) {
            damaged_packet(out, l, it, id, f);
            return;
        }
        ek_sbuf_putc(out, '\t');
        f->ocsd(out, pkt, it->trace_id, 0, it->config);
        return;
    case EK_LISTING_TEXT: f->text(out, pkt, it->trace_id, it->config); return;
    case EK_LISTING_JSON: f->json(out, pkt, it->trace_id, it->config); return;
    }
}

static void list_other(ek_sbuf *out, const ek_listing *l, const ek_decode_item *it);

void ek_list_item(ek_sbuf *out, const ek_listing *l, const ek_decode_item *it)
{
    /* the usual item, a packet without elements: its line and nothing after it */
    if (it->kind == EK_DI_PACKET && !it->count) {
        packet(out, l, it, l->single_source ? 0 : it->trace_id);
        return;
    }
    list_other(out, l, it);
}

__attribute__((noinline)) static void list_other(ek_sbuf *out, const ek_listing *l,
                                                 const ek_decode_item *it)
{
    const unsigned id = l->single_source ? 0 : it->trace_id;
    switch (it->kind) {
    case EK_DI_PACKET:
        packet(out, l, it, id);
        if (!it->count) break;
        __attribute__((fallthrough)); /* its elements */
    case EK_DI_ELEMS:
        switch (l->format) {
        case EK_LISTING_OCSD: ek_elem_format_ocsd_lines(out, it->elems, it->count, 0); break;
        case EK_LISTING_PERF: ek_elem_format_ocsd_lines(out, it->elems, it->count, 1); break;
        case EK_LISTING_TEXT:
            for (size_t i = 0; i < it->count; i++)
                ek_elem_format_text(out, &it->elems[i]);
            break;
        case EK_LISTING_JSON:
            for (size_t i = 0; i < it->count; i++)
                ek_elem_format_json(out, &it->elems[i]);
            break;
        }
        break;
    case EK_DI_DIAG: {
        const ek_list_proto *f = list_proto(it->protocol);
        if (!f || !f->diag_ocsd) break;
        if (l->format == EK_LISTING_OCSD) {
            /* as the lister: no newline, the next line continues it */
            f->diag_ocsd(out, it->diag, !l->single_source);
        } else if (l->format == EK_LISTING_PERF) {
            const size_t at = out->len;
            ek_sbuf_putc(out, '\t');
            if (f->diag_ocsd(out, it->diag, 1))
                ek_sbuf_putc(out, '\n');
            else
                truncate_to(out, at);
        }
        break;
    }
    case EK_DI_FRAME:
        if (l->format == EK_LISTING_JSON)
            frame_json(out, it->frame);
        else
            ek_list_frame_ocsd(out, it->frame);
        break;
    case EK_DI_FOOTER:
        if (l->format == EK_LISTING_JSON) break;
        ek_sbuf_puts(out, "DSTREAM footer [");
        for (size_t i = 0; i < it->len; i++)
            ek_sbuf_printf(out, "0x%x ", it->data[i]);
        ek_sbuf_puts(out, "]\n");
        break;
    case EK_DI_RESET:
        if (l->format == EK_LISTING_OCSD)
            ek_sbuf_printf(out, "ID:%x\tRESET operation on trace decode path\n", id);
        break;
    case EK_DI_EOT:
        if (l->format == EK_LISTING_OCSD) ek_sbuf_printf(out, "ID:%x\tEND OF TRACE DATA\n", id);
        break;
    case EK_DI_STOP:
        /* as the lister: the fatal response, then the error logged again (without the
         * decoder's name, and again without a newline) */
        if (l->format == EK_LISTING_OCSD) {
            ek_sbuf_puts(out, "Trace Packet Lister : Data Path fatal error\n");
            const ek_list_proto *f = list_proto(it->protocol);
            if (it->diag && f && f->diag_ocsd) f->diag_ocsd(out, it->diag, -1);
        }
        break;
    default: break;
    }
}
