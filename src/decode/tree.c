/* The decode tree: deformatter -> per-trace-ID packet parser -> flow decoder, pulled one item
 * at a time (include/etmkit/decode.h). The tree holds the layers below it and walks them in
 * one direction; every protocol detail is behind the ek_decode_proto tables.
 *
 * ek_decode_next() works down a short list of places where the next item can come from, in
 * this order, and returns the first item found:
 *  1. items copied out of a flow step because a diagnostic came in its middle (side queue);
 *  2. the elements a flow decoder holds (handed out in place);
 *  3. a packet handed out as an item goes to its flow decoder (then back to 1);
 *  4. the next packet of the parser that was fed last;
 *  5. a control operation under way (flush, end, reset items), decoder by decoder;
 *  6. the next item of the deformatter, or the next piece of the input block.
 * Each source is drained before the next piece of input is looked at, so items come out in
 * the order the bytes went in. The built-in ETMv4/ETE table's parser and flow steps are
 * called directly rather than through the table (decode/proto_etm4.h: an indirect call and a
 * wrapper per packet were most of what the tree cost a packet listing). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hot.h"
#include "core/vec.h"
#include "decode/decode_int.h"
#include "decode/proto_etm4.h"
#include "etmkit/etmkit.h"
#include "etmkit/flow.h"

/* ---- setup ----------------------------------------------------------------------------------- */

void ek_decode_config_init(ek_decode_config *c)
{
    memset(c, 0, sizeof *c);
    c->size = sizeof *c;
    c->flags = EK_DECODE_PACKETS | EK_DECODE_ELEMS;
}

int ek_decode_new(const ek_decode_config *c, ek_decode **out)
{
    *out = NULL;
    if (!c || c->size < sizeof *c) return EK_ERR_ARG;
    ek_decode *t = calloc(1, sizeof *t);
    if (!t) return EK_ERR_NOMEM;
    t->c = *c;
    t->file = c->file;
    t->hook_flags = c->hook_flags ? c->hook_flags : ~(uint32_t)0;
    for (int i = 0; i < NIDS; i++)
        t->bind[i] = -1;
    t->raw_id = -1;
    t->in_done = 1;
    ek_decode_set_frames(t, c->frame_flags);
    *out = t;
    return 0;
}

static void dcd_free(dcd *d)
{
    if (!d) return;
    if (d->flow) d->ops->flow_free(d->flow);
    free(d->parser);
    free(d);
}

static void side_clear(ek_decode *t)
{
    for (size_t i = 0; i < t->side.n; i++)
        if (t->side.v[i].kind == EK_DI_DIAG) free((char *)t->side.v[i].ev.msg);
    t->side.n = t->side_pos = 0;
    t->side_elems.n = 0;
}

void ek_decode_free(ek_decode *t)
{
    if (!t) return;
    for (int i = 0; i < NIDS; i++)
        dcd_free(t->ids[i]);
    side_clear(t);
    free((char *)t->stop_ev.msg);
    ek_vec_free(&t->side);
    ek_vec_free(&t->side_elems);
    ek_vec_free(&t->srcs);
    free(t);
}

const ek_decode_proto *decode_find_proto(const ek_decode *t, ek_protocol p)
{
    if (t->c.protos)
        for (const ek_decode_proto *const *x = t->c.protos; *x; x++)
            if ((unsigned)p < 32 && ((*x)->protocols & (1u << p))) return *x;
    return ek_decode_proto_find(p);
}

int decode_add_source(ek_decode *t, const ek_source_config *cfg, const char *name, void *user,
                      int bind)
{
    src_ent s;
    s.cfg = *cfg;
    s.cfg.flags |= t->c.source_flags;
    s.name = name;
    s.user = user;
    s.ops = decode_find_proto(t, cfg->protocol);
    if (ek_vec_push(&t->srcs, s)) return EK_ERR_NOMEM;
    const int n = (int)t->srcs.n - 1;
    const unsigned id = cfg->trace_id & 0x7fu;
    if (bind && t->bind[id] < 0) t->bind[id] = (int16_t)n;
    return n;
}

int ek_decode_add_source(ek_decode *t, const ek_source_config *cfg, const char *name, void *user)
{
    return decode_add_source(t, cfg, name, user, 1);
}

int ek_decode_bind(ek_decode *t, unsigned trace_id, int source)
{
    if (trace_id >= NIDS || source < -1 || (source >= 0 && (size_t)source >= t->srcs.n))
        return EK_ERR_ARG;
    t->bind[trace_id] = (int16_t)source;
    return 0;
}

int ek_decode_bind_raw(ek_decode *t, int source)
{
    if (source < -1 || (source >= 0 && (size_t)source >= t->srcs.n)) return EK_ERR_ARG;
    if (source < 0) {
        t->raw_id = -1;
        return 0;
    }
    t->raw_id = t->srcs.v[source].cfg.trace_id & 0x7f;
    t->bind[t->raw_id] = (int16_t)source;
    return 0;
}

size_t ek_decode_source_count(const ek_decode *t)
{
    return t->srcs.n;
}

int ek_decode_source_info_get(const ek_decode *t, size_t source, ek_decode_source_info *out)
{
    if (source >= t->srcs.n) return EK_ERR_ARG;
    const src_ent *s = &t->srcs.v[source];
    out->cfg = &s->cfg;
    out->name = s->name;
    out->user = s->user;
    out->proto = s->ops;
    return 0;
}

void ek_decode_set_frames(ek_decode *t, unsigned frame_flags)
{
    /* OpenCSD's deformatter hands on the empty run a frame can end with */
    if (frame_flags && (t->c.compat & EK_DECODE_COMPAT_OCSD)) frame_flags |= EK_DFMT_OCSD_EMPTY;
    t->frame_flags = frame_flags;
    if (frame_flags) ek_dfmt_init(&t->dfmt, frame_flags);
}

void ek_decode_set_file(ek_decode *t, const char *file)
{
    t->file = file;
}

/* Byte offset in the input of trace index `index` (DSTREAM footers are not indexed). */
static int64_t file_off(const ek_decode *t, uint64_t index)
{
    if (t->c.flags & EK_DECODE_DSTREAM)
        return (int64_t)(index + index / DSTREAM_DATA * DSTREAM_FOOT);
    return (int64_t)index;
}

/* ---- decoders -------------------------------------------------------------------------------- */

/* The flow decoders' diagnostics: named with the current file, and, for a listing, the errors
 * the reference decoder logs put in order with the elements (those before it are copied out,
 * as the flow decoder allows a sink to do). */
static void tree_flow_diag(void *ctx, const ek_diag_event *ev)
{
    dcd *d = ctx;
    ek_decode *t = d->t;
    ek_diag_event e = *ev;
    if (t->file) e.file = t->file;
    const int logged = d->ops->flow_diag_logged && d->ops->flow_diag_logged(ev);
    if (logged && (t->c.compat & EK_DECODE_COMPAT_OCSD)) {
        /* the last error logged: what a stop of the data path repeats */
        char *m = strdup(ev->msg ? ev->msg : "");
        if (m) {
            free((char *)t->stop_ev.msg);
            t->stop_ev = e;
            t->stop_ev.msg = m;
            t->logged_seq++;
        }
    }
    if ((t->c.flags & EK_DECODE_DIAG_ITEMS) && logged) {
        size_t n = 0;
        /* (none while the decoder is being made: it may report its configuration) */
        const ek_elem *el = d->flow ? d->ops->flow_elems(d->flow, &n) : NULL;
        side_ent s;
        memset(&s, 0, sizeof s);
        int ok = ek_vec_reserve(&t->side, t->side.n + 2) == 0 &&
                 ek_vec_reserve(&t->side_elems, t->side_elems.n + n) == 0;
        if (ok && n) {
            s.kind = EK_DI_ELEMS;
            s.d = d;
            s.first = t->side_elems.n;
            s.count = n;
            memcpy(t->side_elems.v + t->side_elems.n, el, n * sizeof *el);
            t->side_elems.n += n;
            t->side.v[t->side.n++] = s;
            d->ops->flow_elems_clear(d->flow);
        }
        char *msg = ok ? strdup(ev->msg ? ev->msg : "") : NULL;
        if (msg) {
            s.kind = EK_DI_DIAG;
            s.d = d;
            s.ev = e;
            s.ev.msg = msg;
            t->side.v[t->side.n++] = s;
        }
    }
    if (t->c.diag && t->c.diag->fn) t->c.diag->fn(t->c.diag->ctx, &e);
}

static void packet_diag(ek_decode *t, const dcd *d, const ek_decode_packet *p);
static void data_path_stop(ek_decode *t, dcd *d, int has_ev);

/* A flow step's elements to the consumer's hook: those copied out for a diagnostic in the
 * middle of the step first (still in the side queue), then the rest. */
static void elems_to_hook(ek_decode *t, dcd *d, const ek_elem *e, size_t n)
{
    for (size_t i = t->side_pos; i < t->side.n; i++)
        if (t->side.v[i].kind == EK_DI_ELEMS && t->side.v[i].d == d && !t->side.v[i].hooked) {
            t->side.v[i].hooked = 1;
            t->c.elems_hook(t->c.hook_ctx, d->id, t->side_elems.v + t->side.v[i].first,
                            t->side.v[i].count);
        }
    if (n) t->c.elems_hook(t->c.hook_ctx, d->id, e, n);
}

/* The pump's hook when the tree reports bad packets itself (then the consumer's hook is called
 * from here, for the packets it asked for). */
static void tree_hook(void *ctx, unsigned trace_id, const ek_decode_packet *p)
{
    dcd *d = ctx;
    ek_decode *t = d->t;
    if (p->flags & (EK_DPKT_ERROR | EK_DPKT_NOTSYNC | EK_DPKT_UNSYNCED)) packet_diag(t, d, p);
    if (t->c.packet_hook && ((p->flags & t->hook_flags) || d->watch))
        t->c.packet_hook(t->c.hook_ctx, trace_id, p);
}

/* trace_id's decoder, made on first use from the source bound to it then. NULL (and *rc 0)
 * when it has none; *rc EK_ERR_NOMEM when memory ran out. */
static dcd *get_decoder(ek_decode *t, unsigned id, int *rc)
{
    *rc = 0;
    if (id >= NIDS) return NULL;
    if (t->ids[id]) return t->ids[id];
    if (t->refused[id]) return NULL;
    const int si = t->bind[id];
    const src_ent *s = si >= 0 ? &t->srcs.v[si] : NULL;
    if (!s || !s->ops || s->ops->size < sizeof(ek_decode_proto)) {
        t->refused[id] = 1;
        return NULL;
    }
    dcd *d = calloc(1, sizeof *d);
    /* the parser's state on cache lines of its own: it is written on every packet, and where
     * malloc happened to put it moved dump --decode by 2% (bench/ab) */
    const size_t psz = ((s->ops->parser_size ? s->ops->parser_size : 1) + 63) & ~(size_t)63;
    if (d && (d->parser = aligned_alloc(64, psz))) memset(d->parser, 0, psz);
    if (!d || !d->parser) {
        free(d);
        *rc = EK_ERR_NOMEM;
        return NULL;
    }
    d->t = t;
    d->id = (uint8_t)id;
    d->watch = t->c.packet_hook && !t->c.hook_flags; /* (0: every packet) */
    d->src = si;
    d->protocol = s->cfg.protocol;
    d->ops = s->ops;
    /* (a perf model decoder starts as if reset: its first data resets it) */
    d->stale = t->c.model == EK_DECODE_MODEL_PERF;
    if (d->ops->parser_init(d->parser, &s->cfg, t->c.compat) != 0) {
        dcd_free(d);
        t->refused[id] = 1;
        return NULL;
    }
    d->pcfg = d->ops->parser_config ? d->ops->parser_config(d->parser) : NULL;
    if ((t->c.flags & EK_DECODE_ELEMS) && d->ops->flow_new) {
        ek_source_config src = s->cfg;
        src.trace_id = (uint8_t)id; /* the ID it has here (perf: AUX_OUTPUT_HW_ID, idmap) */
        ek_flow_config fc;
        ek_flow_config_init(&fc);
        fc.source = &src;
        fc.mem = t->c.mem;
        if (t->c.mem_for) {
            int r = t->c.mem_for(t->c.mem_ctx, id, si, &fc.mem);
            if (r < 0) {
                dcd_free(d);
                if (r == EK_ERR_NOMEM)
                    *rc = r;
                else
                    t->refused[id] = 1;
                return NULL;
            }
        }
        fc.flags = t->c.flow_flags;
        fc.max_pending = t->c.flow_max_pending;
        fc.compat = t->c.compat;
        d->fdiag.fn = tree_flow_diag;
        d->fdiag.ctx = d;
        fc.diag = &d->fdiag;
        fc.file = t->file;
        int r = d->ops->flow_new(&fc, &d->flow);
        if (r) {
            /* what it said while being made goes to the sink only */
            size_t k = 0;
            for (size_t i = 0; i < t->side.n; i++) {
                if (t->side.v[i].d == d) {
                    if (t->side.v[i].kind == EK_DI_DIAG) free((char *)t->side.v[i].ev.msg);
                    continue;
                }
                t->side.v[k++] = t->side.v[i];
            }
            t->side.n = k;
            dcd_free(d);
            if (r == EK_ERR_NOMEM) {
                *rc = r;
            } else {
                t->refused[id] = 1;
            }
            return NULL;
        }
        d->st.has_flow = 1;
    }
    /* without PACKET items the protocol's loop stands for the tree's own; the tree's packet
     * diagnostics then come through the hook */
    d->pump_ok = d->ops->pump && d->flow && !(t->c.flags & EK_DECODE_PACKETS);
    if (d->pump_ok) {
        if (t->c.flags & EK_DECODE_DIAG_STREAM) {
            d->pump.hook = tree_hook;
            d->pump.ctx = d;
            d->pump.hook_flags = (t->c.packet_hook ? t->hook_flags : 0) | EK_DPKT_ERROR |
                                 EK_DPKT_NOTSYNC | EK_DPKT_UNSYNCED;
        } else {
            d->pump.hook = t->c.packet_hook;
            d->pump.ctx = t->c.hook_ctx;
            d->pump.hook_flags = t->hook_flags;
        }
        d->pump.watch = &d->watch;
        d->pump.trace_id = d->id;
        d->pump.packets = &d->st.packets;
        d->pump.packet_bytes = &d->st.packet_bytes;
        d->pump.bad_packets = &d->st.bad_packets;
        d->pump.elems_hook = t->c.elems_hook;
        d->pump.elems_ctx = t->c.hook_ctx;
        d->pump.stop = &t->side.n;
        /* (a diagnostic's copy takes every queued element, those of earlier packets of the
         * batch too: right for the order of the items, not for an elements hook, which had
         * them already; with both, one packet's elements at a time) */
        d->pump.batch = (t->c.flags & EK_DECODE_BATCH) &&
                                !((t->c.flags & EK_DECODE_DIAG_ITEMS) && t->c.elems_hook)
                            ? 256
                            : 0;
    }
    t->ids[id] = d;
    return d;
}

int decode_make(ek_decode *t, unsigned id)
{
    int rc;
    get_decoder(t, id, &rc);
    return rc;
}

int ek_decode_make_all(ek_decode *t)
{
    for (unsigned id = 0; id < NIDS; id++) {
        if (t->bind[id] < 0) continue;
        int rc;
        get_decoder(t, id, &rc);
        if (rc) return rc;
    }
    return 0;
}

static void reset_decoder(dcd *d)
{
    d->ops->parser_reset(d->parser);
    if (d->flow) d->ops->flow_reset(d->flow);
    d->stale = 0;
}

void ek_decode_watch(ek_decode *t, unsigned trace_id, int on)
{
    if (trace_id < NIDS && t->ids[trace_id] && t->c.hook_flags) t->ids[trace_id]->watch = on != 0;
}

int ek_decode_active(const ek_decode *t, unsigned trace_id)
{
    return trace_id < NIDS && t->ids[trace_id] && t->ids[trace_id]->active;
}

int ek_decode_has_decoder(const ek_decode *t, unsigned trace_id)
{
    return trace_id < NIDS && t->ids[trace_id] != NULL;
}

int ek_decode_source_stats_get(const ek_decode *t, unsigned trace_id, ek_decode_source_stats *out)
{
    if (trace_id >= NIDS || !t->ids[trace_id]) return EK_ERR_ARG;
    const dcd *d = t->ids[trace_id];
    *out = d->st;
    out->source = d->src;
    if (d->flow && d->ops->flow_stats) d->ops->flow_stats(d->flow, &out->flow);
    return 0;
}

void ek_decode_stats_get(const ek_decode *t, ek_decode_stats *out)
{
    *out = t->st;
}

/* ---- input ----------------------------------------------------------------------------------- */

void ek_decode_feed(ek_decode *t, const uint8_t *data, size_t len, uint64_t index)
{
    t->in = data;
    t->in_len = data ? len : 0;
    t->in_pos = 0;
    t->in_idx = index;
    t->in_done = 0;
    t->piece_open = 0;
    t->piece = NULL;
    t->piece_len = 0;
    t->footer_due = 0;
    memset(t->footer, 0, sizeof t->footer);
}

/* Cut the next piece off the input block: 0 when there is none. DSTREAM: a record's data (its
 * footer is shown afterwards, with the lister's leftovers: it reads the footer into the start
 * of its data buffer, and at the end of the file shows whatever that buffer then holds). */
static int next_piece(ek_decode *t)
{
    if (t->in_done) return 0;
    const size_t left = t->in_len - t->in_pos;
    t->piece = t->in + t->in_pos;
    t->piece_idx = t->in_idx;
    t->piece_open = 0;
    if (t->c.flags & EK_DECODE_DSTREAM) {
        const size_t n = left < DSTREAM_DATA ? left : DSTREAM_DATA;
        int eof = n < DSTREAM_DATA;
        if (n) memcpy(t->footer, t->piece, n < DSTREAM_FOOT ? n : DSTREAM_FOOT);
        t->piece_len = n;
        t->in_pos += n;
        t->in_idx += n;
        if (!eof) {
            const size_t r = t->in_len - t->in_pos;
            const size_t f = r < DSTREAM_FOOT ? r : DSTREAM_FOOT;
            memcpy(t->footer, t->in + t->in_pos, f);
            t->in_pos += f;
            eof = f < DSTREAM_FOOT;
        }
        t->footer_due = 1;
        if (eof) t->in_done = 1;
        t->st.input_bytes += n;
        return 1;
    }
    if (!left) {
        t->in_done = 1;
        return 0;
    }
    const size_t n = t->c.block_size && t->c.block_size < left ? t->c.block_size : left;
    t->piece_len = n;
    t->in_pos += n;
    t->in_idx += n;
    t->st.input_bytes += n;
    return 1;
}

/* The fields every item has (the others are set by kind: no memset, this is the hot path). */
static inline void fill_item(const dcd *d, ek_decode_item *out, unsigned kind)
{
    out->kind = (uint8_t)kind;
    if (d) {
        out->trace_id = d->id;
        out->source = d->src;
        out->protocol = d->protocol;
        out->proto = d->ops;
        out->config = d->pcfg;
    } else {
        out->trace_id = 0;
        out->source = -1;
        out->protocol = EK_PROTO_UNKNOWN;
        out->proto = NULL;
        out->config = NULL;
    }
}

/* Bytes of trace ID id: to its decoder (made on first use), or an UNDECODED item. Returns 1
 * with *out filled, 0 (routed, or nothing to say) or a negative status. */
static int route(ek_decode *t, unsigned id, int id_valid, const uint8_t *data, size_t len,
                 uint64_t index, ek_decode_item *out)
{
    int rc = 0;
    dcd *d = id_valid || (id < NIDS && t->ids[id]) ? get_decoder(t, id, &rc) : NULL;
    if (rc) return rc;
    if (!len) {
        /* (EK_DFMT_OCSD_EMPTY) OpenCSD hands the empty run to the ID's packet processor, which
         * answers a zero-length block with a fatal error */
        if (d) data_path_stop(t, d, 0);
        return 0;
    }
    if (!d) {
        t->st.undecoded_bytes += len;
        if (!(t->c.flags & EK_DECODE_UNDECODED)) return 0;
        fill_item(NULL, out, EK_DI_UNDECODED);
        out->trace_id = (uint8_t)id;
        out->why = id_valid ? EK_DECODE_NO_SOURCE : EK_DECODE_NO_ID;
        out->index = index;
        out->data = data;
        out->len = len;
        return 1;
    }
    const int was_stale = d->stale;
    if (was_stale) reset_decoder(d);
    d->active = 1;
    d->st.bytes += len;
    d->ops->parser_feed(d->parser, data, len, index);
    if (d->ops->parser_tail && t->frame_flags && (t->c.compat & EK_DECODE_COMPAT_OCSD)) {
        uint8_t tail[32];
        d->ops->parser_tail(d->parser, tail,
                            ek_dfmt_ocsd_tail(&t->dfmt, &t->fitem, tail, sizeof tail));
    }
    t->cur = d;
    if (was_stale && t->c.model == EK_DECODE_MODEL_PERF) {
        /* the decoder starts again here: say so before its packets */
        fill_item(d, out, EK_DI_RESET);
        return 1;
    }
    return 0;
}

static int valid_id(unsigned id)
{
    return id != EK_TRACE_ID_UNKNOWN && id != EK_TRACE_ID_NULL && !ek_trace_id_reserved(id);
}

/* Barrier (4 x FSYNC) in the stream. */
static void barrier(ek_decode *t)
{
    if (t->c.model == EK_DECODE_MODEL_PERF) {
        /* flush what the active sources hold, then each starts again at its next data */
        t->op = OP_FLUSH;
        t->op_id = 0;
        t->op_then_stale = 1;
        return;
    }
    for (int id = 0; id < NIDS; id++)
        if (t->ids[id]) reset_decoder(t->ids[id]);
    t->op = OP_RESET_ITEMS;
    t->op_id = 0;
}

/* The next item from the input: 1 (item), 0 (work queued: look again), 2 (input used up) or a
 * negative status. */
static int input_step(ek_decode *t, ek_decode_item *out)
{
    if (t->held) {
        t->held = 0;
        return route(t, t->fitem.id, valid_id(t->fitem.id), t->fitem.data, t->fitem.len,
                     t->fitem.index, out);
    }
    if (!t->piece_open) {
        if (!t->piece || t->piece_len == 0) {
            if (t->footer_due) {
                t->footer_due = 0;
                if (t->c.flags & EK_DECODE_RAW_PACKED) {
                    fill_item(NULL, out, EK_DI_FOOTER);
                    out->data = t->footer;
                    out->len = DSTREAM_FOOT;
                    return 1;
                }
            }
            if (!next_piece(t)) return 2;
        }
        t->piece_open = 1;
        if (!t->frame_flags) {
            /* raw data of one source */
            const size_t n = t->piece_len;
            t->piece_len = 0;
            if (!n) return 0;
            if (t->raw_id < 0) {
                t->st.undecoded_bytes += n;
                if (!(t->c.flags & EK_DECODE_UNDECODED)) return 0;
                fill_item(NULL, out, EK_DI_UNDECODED);
                out->why = EK_DECODE_NO_SOURCE;
                out->index = t->piece_idx;
                out->data = t->piece;
                out->len = n;
                return 1;
            }
            return route(t, (unsigned)t->raw_id, 1, t->piece, n, t->piece_idx, out);
        }
        ek_dfmt_feed(&t->dfmt, t->piece, t->piece_len, t->piece_idx);
        t->piece_len = 0;
    }
    if (!t->frame_flags || ek_dfmt_next(&t->dfmt, &t->fitem) <= 0) {
        t->piece_open = 0;
        return 0;
    }
    ek_dfmt_item *it = &t->fitem;
    switch (it->kind) {
    case EK_DFMT_RAW_PACKED:
    case EK_DFMT_RAW_FSYNC:
        if (!(t->c.flags & EK_DECODE_RAW_PACKED)) return 0;
        fill_item(NULL, out, EK_DI_FRAME);
        out->index = it->index;
        out->frame = it;
        return 1;
    case EK_DFMT_DATA:
        if (t->c.flags & EK_DECODE_RAW_UNPACKED) {
            t->held = 1; /* shown first, routed on the next call */
            fill_item(NULL, out, EK_DI_FRAME);
            out->trace_id = it->id;
            out->index = it->index;
            out->frame = it;
            return 1;
        }
        return route(t, it->id, valid_id(it->id), it->data, it->len, it->index, out);
    case EK_DFMT_RESET: barrier(t); return 0;
    case EK_DFMT_ERROR:
        t->st.frame_errors++;
        if (t->c.flags & EK_DECODE_DIAG_STREAM)
            ek_diag_emit(t->c.diag, EK_SEV_WARN, "frame.bad-sync", EK_ERR_FORMAT, t->file, -1,
                         file_off(t, it->index), -1, "%s", it->err ? it->err : "bad frame");
        if (!(t->c.flags & EK_DECODE_UNDECODED)) return 0;
        fill_item(NULL, out, EK_DI_FRAME_ERROR);
        out->index = it->index;
        out->frame = it;
        return 1;
    default: return 0;
    }
}

/* ---- packets and elements -------------------------------------------------------------------- */

static void packet_diag(ek_decode *t, const dcd *d, const ek_decode_packet *p)
{
    const src_ent *s = &t->srcs.v[d->src];
    const char *name = s->name ? s->name : "source";
    char kind[64];
    if (p->flags & EK_DPKT_ERROR) {
        const char *what = d->ops->packet_name ? d->ops->packet_name(p->pkt, 1) : NULL;
        snprintf(kind, sizeof kind, "%s.%s", d->ops->kind,
                 (p->flags & EK_DPKT_TRUNCATED) ? "truncated" : "bad-packet");
        ek_diag_emit(t->c.diag, EK_SEV_WARN, kind, EK_ERR_BAD_PACKET, t->file, -1,
                     file_off(t, p->index), d->id, "%s %s%s%s (%u bytes)", name,
                     d->ops->packet_name ? d->ops->packet_name(p->pkt, 0) : "packet",
                     what ? " while decoding " : "", what ? what : "", (unsigned)p->size);
    } else if ((p->flags & (EK_DPKT_NOTSYNC | EK_DPKT_UNSYNCED)) && !(p->flags & EK_DPKT_REPEAT)) {
        snprintf(kind, sizeof kind, "%s.unsynced", d->ops->kind);
        ek_diag_emit(t->c.diag, EK_SEV_NOTE, kind, 0, t->file, -1, file_off(t, p->index), d->id,
                     "%s: bytes before the first %s are not decodable", name,
                     d->ops->sync_name ? d->ops->sync_name : "synchronisation packet");
    }
}

/* The data path stops (EK_DECODE_COMPAT_OCSD): the items already made come out, then the STOP
 * item, then nothing. As OpenCSD counts the input processed: a formatted buffer up to the
 * end of the frame the deformatter was in, raw input up to what the parser had taken. */
static void data_path_stop(ek_decode *t, dcd *d, int has_ev)
{
    if (t->stopped) return;
    t->stopped = STOP_DUE;
    if (t->frame_flags)
        t->stop_index = t->dfmt.idx;
    else if (d && d->ops->parser_index)
        t->stop_index = d->ops->parser_index(d->parser);
    else
        t->stop_index = t->in_idx + t->in_pos;
    t->stop_has_ev = has_ev;
    t->stop_d = d;
    t->cur = NULL;
}

/* Another protocol's flow step, which may stop the data path. */
__attribute__((noinline)) static int flow_packet_other(dcd *d, const void *pkt, const ek_elem **e,
                                                       size_t *n)
{
    ek_decode *t = d->t;
    const uint64_t seq = t->logged_seq;
    const int rc = d->ops->flow_packet(d->flow, pkt, e, n);
    if (rc != EK_DECODE_STOP) return rc;
    data_path_stop(t, d, t->logged_seq != seq);
    return 0;
}

/* The flow decoder's step (the built-in protocol's called directly, as its parser). */
static inline int flow_packet(dcd *d, const void *pkt, const ek_elem **e, size_t *n)
{
    if (d->ops == &ek_decode_proto_etm4) return ek_flow_step(d->flow, pkt, e, n);
    return flow_packet_other(d, pkt, e, n);
}

/* A packet to its flow decoder: 1 with an ELEMS item, or 0. */
static inline int to_flow(ek_decode *t, dcd *d, const void *pkt, uint64_t index,
                          ek_decode_item *out)
{
    const ek_elem *e;
    size_t n;
    if (flow_packet(d, pkt, &e, &n) == EK_ERR_NOMEM)
        ek_diag_emit(t->c.diag, EK_SEV_ERROR, "decode.nomem", EK_ERR_NOMEM, t->file, -1,
                     file_off(t, index), d->id, "out of memory decoding");
    if (t->c.elems_hook) elems_to_hook(t, d, e, n);
    if (t->side.n) {
        /* a diagnostic came in the middle: what came before it first */
        t->view_pending = d;
        t->pend_e = e;
        t->pend_n = n;
        return 0;
    }
    if (!n) return 0;
    fill_item(d, out, EK_DI_ELEMS);
    out->elems = e;
    out->count = n;
    return 1;
}

/* The next packet of t->cur's parser: 1 (PACKET item), 0 (look again). */
EK_HOT int packet_step(ek_decode *t, ek_decode_item *out)
{
    dcd *d = t->cur;
    ek_decode_packet *p = &out->packet;
    /* (the built-in protocol in line: see decode/proto_etm4.h) */
    const int got = d->ops == &ek_decode_proto_etm4 ? decode_etm4_next(d->parser, p)
                                                    : d->ops->parser_next(d->parser, p);
    if (got <= 0) {
        t->cur = NULL;
        return 0;
    }
    d->st.packets++;
    d->st.packet_bytes += p->size;
    if (p->flags & (EK_DPKT_ERROR | EK_DPKT_NOTSYNC | EK_DPKT_UNSYNCED)) {
        if (p->flags & EK_DPKT_ERROR) d->st.bad_packets++;
        if (t->c.flags & EK_DECODE_DIAG_STREAM) packet_diag(t, d, p);
    }
    if (t->c.packet_hook && ((p->flags & t->hook_flags) || d->watch))
        t->c.packet_hook(t->c.hook_ctx, d->id, p);
    if (t->c.flags & EK_DECODE_PACKETS) {
        /* the packet comes with what its flow decoder made of it */
        fill_item(d, out, EK_DI_PACKET);
        out->index = p->index;
        out->elems = NULL;
        out->count = 0;
        if (d->flow) {
            const ek_elem *e;
            size_t n;
            if (flow_packet(d, p->pkt, &e, &n) == EK_ERR_NOMEM)
                ek_diag_emit(t->c.diag, EK_SEV_ERROR, "decode.nomem", EK_ERR_NOMEM, t->file, -1,
                             file_off(t, p->index), d->id, "out of memory decoding");
            if (t->c.elems_hook) elems_to_hook(t, d, e, n);
            if (t->side.n) {
                /* a diagnostic came in the middle: the elements follow as items */
                t->view_pending = d;
                t->pend_e = e;
                t->pend_n = n;
            } else {
                out->elems = e;
                out->count = n;
            }
        }
        return 1;
    }
    if (d->flow) return to_flow(t, d, p->pkt, p->index, out);
    return 0;
}

/* One step of a control operation: 1 (item), 0 (look again). */
static int op_step(ek_decode *t, ek_decode_item *out)
{
    while (t->op_id < NIDS) {
        dcd *d = t->ids[t->op_id];
        if (!d) {
            t->op_id++;
            continue;
        }
        switch (t->op) {
        case OP_FLUSH:
            t->op_id++;
            if (!d->active) continue;
            d->ops->parser_eot(d->parser);
            t->cur = d;
            return 0;
        case OP_RESET_ITEMS:
            t->op_id++;
            fill_item(d, out, EK_DI_RESET);
            return 1;
        case OP_END:
            if (t->op_stage == 0) {
                t->op_stage = 1;
                d->ops->parser_eot(d->parser);
                t->cur = d;
                return 0;
            }
            if (t->op_stage == 1) {
                t->op_stage = 2;
                if (d->flow) {
                    const ek_elem *e;
                    size_t n;
                    d->ops->flow_end(d->flow, &e, &n);
                    if (t->c.elems_hook) elems_to_hook(t, d, e, n);
                    t->view_pending = d;
                    t->pend_e = e;
                    t->pend_n = n;
                }
                return 0;
            }
            t->op_stage = 0;
            t->op_id++;
            fill_item(d, out, EK_DI_EOT);
            return 1;
        }
    }
    if (t->op == OP_FLUSH && t->op_then_stale) {
        for (int id = 0; id < NIDS; id++)
            if (t->ids[id]) {
                t->ids[id]->active = 0;
                t->ids[id]->stale = 1;
            }
    }
    t->op = OP_NONE;
    t->op_then_stale = 0;
    return 0;
}

/* The packets of t->cur's parser, with their elements: 1 (item), 0 (look again). Without
 * PACKET items the protocol's loop (or the tree's) gives the packets to the flow decoder until
 * one gives elements. */
EK_HOT int cur_step(ek_decode *t, ek_decode_item *out)
{
    dcd *d = t->cur;
    if (!d->pump_ok) {
        if (t->c.flags & EK_DECODE_PACKETS) return packet_step(t, out);
        while (t->cur && !t->side.n && !t->view_pending)
            if (packet_step(t, out)) return 1;
        return 0;
    }
    const ek_elem *e = NULL;
    size_t n = 0;
    const int r = d->ops->pump(d->parser, d->flow, &d->pump, &e, &n);
    if (r < 0)
        ek_diag_emit(t->c.diag, EK_SEV_ERROR, "decode.nomem", r, t->file, -1, -1, d->id,
                     "out of memory decoding");
    if (r <= 0) {
        t->cur = NULL;
    } else if (t->side.n) {
        /* a diagnostic came in the middle: what came before it first */
        if (t->c.elems_hook) elems_to_hook(t, d, e, n);
        t->view_pending = d;
        t->pend_e = e;
        t->pend_n = n;
    } else if (n) {
        fill_item(d, out, EK_DI_ELEMS);
        out->elems = e;
        out->count = n;
        return 1;
    }
    return 0;
}

/* Everything but the usual way round (see ek_decode_next). */
__attribute__((noinline)) static int next_slow(ek_decode *t, ek_decode_item *out)
{
    for (;;) {
        if (t->cur && !t->side.n && !t->view_pending) {
            if (cur_step(t, out)) return 1;
            continue;
        }
        if (t->side_pos < t->side.n) {
            const side_ent *s = &t->side.v[t->side_pos++];
            fill_item(s->d, out, s->kind);
            if (s->kind == EK_DI_ELEMS) {
                out->elems = t->side_elems.v + s->first;
                out->count = s->count;
            } else {
                t->diag_out = s->ev;
                out->diag = &t->diag_out;
                out->index = s->ev.offset >= 0 ? (uint64_t)s->ev.offset : 0;
            }
            return 1;
        }
        if (t->side.n) {
            side_clear(t);
            continue;
        }
        if (t->view_pending) {
            dcd *d = t->view_pending;
            t->view_pending = NULL;
            if (t->pend_n) {
                fill_item(d, out, EK_DI_ELEMS);
                out->elems = t->pend_e;
                out->count = t->pend_n;
                return 1;
            }
            continue;
        }
        if (t->stopped) {
            if (t->stopped != STOP_DUE) return 0;
            t->stopped = STOP_DONE;
            fill_item(t->stop_d, out, EK_DI_STOP);
            out->index = t->stop_index;
            out->diag = t->stop_has_ev ? &t->stop_ev : NULL;
            return 1;
        }
        if (t->cur) continue;
        if (t->op) {
            if (op_step(t, out)) return 1;
            continue;
        }
        int r = input_step(t, out);
        if (r == 1 || r < 0) return r;
        if (r == 2) return 0;
    }
}

int ek_decode_next(ek_decode *t, ek_decode_item *out)
{
    /* the usual way round, kept short: the packets of the parser that was fed last */
    if (t->cur && !t->side.n && !t->view_pending && cur_step(t, out)) return 1;
    return next_slow(t, out);
}

/* ---- operations ------------------------------------------------------------------------------ */

void ek_decode_flush(ek_decode *t)
{
    t->op = OP_FLUSH;
    t->op_id = 0;
    t->op_then_stale = 0;
}

void ek_decode_reset(ek_decode *t)
{
    t->stopped = STOP_NONE;
    if (t->frame_flags) ek_dfmt_reset(&t->dfmt);
    t->cur = NULL;
    t->view_pending = NULL;
    side_clear(t);
    t->held = 0;
    t->in_done = 1;
    t->piece = NULL;
    t->piece_len = 0;
    t->piece_open = 0;
    t->footer_due = 0;
    for (int id = 0; id < NIDS; id++) {
        dcd *d = t->ids[id];
        if (!d) continue;
        d->active = 0;
        if (t->c.model == EK_DECODE_MODEL_PERF)
            d->stale = 1;
        else
            reset_decoder(d);
    }
    if (t->c.model == EK_DECODE_MODEL_OCSD) {
        t->op = OP_RESET_ITEMS;
        t->op_id = 0;
    }
}

void ek_decode_end(ek_decode *t)
{
    if (t->frame_flags && (t->c.flags & EK_DECODE_DIAG_STREAM) && ek_dfmt_pending(&t->dfmt)) {
        const unsigned n = ek_dfmt_pending(&t->dfmt);
        ek_diag_emit(t->c.diag, EK_SEV_WARN, "frame.partial", EK_ERR_TRUNCATED, t->file, -1,
                     file_off(t, t->in_idx - n), -1,
                     "buffer ends inside a frame (%u bytes not decoded)", n);
    }
    t->op = OP_END;
    t->op_id = 0;
    t->op_stage = 0;
}
