/* One adapter shape for the protocols of the decode tree that sit on the library's low-level
 * parsers and decoders: PTM, ETMv3, STM and ITM (proto_<p>.c). ETMv4/ETE has its own adapter
 * (proto_etm4.c: a pump, ek_flow's own stepping).
 *
 * Those four follow one naming (ek_<p>_parser_reset, ek_<p>_feed, ek_<p>_eot, ek_<p>_next,
 * ek_<p>_type_name, ek_<p>_decode...), and their packets answer the tree's questions (is it
 * unsynchronised data, an error, cut short, a repeat, a time stamp, a context change?) with
 * their own type codes and flags. So an adapter is:
 *   - a vocabulary (shape_vocab, data): which of the protocol's types and flags mean what;
 *   - the shape's functions (below), instantiated for the protocol by the SHAPE_* macros from
 *     its prefix and the few expressions that differ (where a packet keeps its size, whether
 *     it carries a time stamp, which packets its decoder does not see);
 *   - its operations table (ek_decode_proto, data): SHAPE_OPS plus what only it has.
 * What is really the protocol's own stays in its file: how a source configures it, and
 * ETMv3's and STM's OpenCSD behaviours.
 *
 * The functions are static and take their vocabulary as a constant, so the compiler folds the
 * table into each instantiation: no call or load more per packet than a hand-written adapter.
 */
#ifndef ETMKIT_DECODE_PROTO_SHAPE_H
#define ETMKIT_DECODE_PROTO_SHAPE_H

#include <stdint.h>
#include <stdlib.h>

#include "decode/decode_int.h"
#include "etmkit/etmkit.h"

/* What a protocol's packet types and flags mean to the tree. */
typedef struct shape_vocab {
    uint8_t notsync;        /* type: unsynchronised bytes */
    uint8_t incomplete_eot; /* type: a packet the end of trace cut short (err_type: what) */
    uint8_t bad_sequence;   /* type: a packet out of sequence (err_type: what) */
    uint8_t pf_error;       /* flag of error packets (0: error_types tells them) */
    uint32_t error_types;   /* bit t: type t is an error packet (protocols without pf_error) */
    uint8_t pf_repeat;      /* flag set: a further report of the same unsynchronised bytes */
    uint8_t pf_decode;      /* flag clear: a packet the decoder (and a packet sink) does not
                               see -- a repeat too */
    const char *(*type_name)(unsigned type);
} shape_vocab;

/* The generic view's flags (EK_DPKT_*) of a packet of type `type` with flags `flags`. */
static inline uint32_t shape_flags(const shape_vocab *v, unsigned type, unsigned flags)
{
    uint32_t fl = 0;
    if (type == v->notsync) fl |= EK_DPKT_NOTSYNC;
    if (flags & v->pf_repeat) fl |= EK_DPKT_REPEAT;
    if (v->pf_decode && !(flags & v->pf_decode)) fl |= EK_DPKT_REPEAT;
    const int error = v->pf_error ? (flags & v->pf_error) != 0 : ((v->error_types >> type) & 1);
    if (error && type != v->notsync) {
        fl |= EK_DPKT_ERROR;
        if (type == v->incomplete_eot) fl |= EK_DPKT_TRUNCATED;
    }
    return fl;
}

/* ek_decode_proto.packet_name from a packet's type and err_type. */
static inline const char *shape_packet_name(const shape_vocab *v, unsigned type, unsigned err_type,
                                            int what)
{
    if (!what) return v->type_name(type);
    if (type != v->bad_sequence && type != v->incomplete_eot) return NULL;
    return v->type_name(err_type);
}

/* A packet's context fields (PTM, ETMv3: ctx_updated, cid_updated, vmid_updated, ctxt_id,
 * vmid) in the generic view; SHAPE_NO_CONTEXT for protocols without them. */
#define SHAPE_CONTEXT(k, fl, out)                                                                  \
    do {                                                                                           \
        if ((k)->ctx_updated || (k)->cid_updated || (k)->vmid_updated) {                           \
            (fl) |= EK_DPKT_CONTEXT;                                                               \
            if ((k)->cid_updated) (fl) |= EK_DPKT_CID_VALID;                                       \
            if ((k)->vmid_updated) (fl) |= EK_DPKT_VMID_VALID;                                     \
            (out)->context_id = (k)->ctxt_id;                                                      \
            (out)->vmid = (k)->vmid;                                                               \
        }                                                                                          \
    } while (0)
#define SHAPE_NO_CONTEXT(k, fl, out) ((void)0)

/* A packet's time stamp (k->timestamp) in the generic view when `when`; SHAPE_NO_TIMESTAMP for
 * protocols without time stamps. */
#define SHAPE_TIMESTAMP_IF(when, k, fl, out)                                                       \
    do {                                                                                           \
        if (when) {                                                                                \
            (fl) |= EK_DPKT_TIMESTAMP;                                                             \
            (out)->timestamp = (k)->timestamp;                                                     \
        }                                                                                          \
    } while (0)
#define SHAPE_NO_TIMESTAMP(k, fl, out) ((void)0)

/* ---- the parser ---------------------------------------------------------------------------
 * SHAPE_PARSER(P, VOCAB, FLAGS, SIZE, TIMESTAMP, CONTEXT) defines, for the parser
 * ek_P_parser (at the start of the adapter's parser state) and its packets ek_P_packet k:
 *   P_parser_next   the generic view: flags by VOCAB from k->type and FLAGS(k), the packet's
 *                   SIZE field, its time stamp by TIMESTAMP and its context by CONTEXT;
 *   P_parser_index  where the parser stands (in_index + in_used);
 *   P_packet_name   by VOCAB's type names.
 * SHAPE_PARSER_PLAIN(P) adds P_parser_reset, P_parser_feed and P_parser_eot for an adapter
 * whose parser state is ek_P_parser itself. */
#define SHAPE_PARSER(P, VOCAB, FLAGS, SIZE, TIMESTAMP, CONTEXT)                                    \
    static int P##_parser_next(void *p, ek_decode_packet *out)                                     \
    {                                                                                              \
        const ek_##P##_packet *k;                                                                  \
        if (ek_##P##_next(p, &k) <= 0) return 0;                                                   \
        uint32_t fl = shape_flags(&(VOCAB), k->type, FLAGS(k));                                    \
        TIMESTAMP(k, fl, out);                                                                     \
        CONTEXT(k, fl, out);                                                                       \
        out->pkt = k;                                                                              \
        out->index = k->index;                                                                     \
        out->raw = k->raw;                                                                         \
        out->size = k->SIZE;                                                                       \
        out->flags = fl;                                                                           \
        return 1;                                                                                  \
    }                                                                                              \
    static uint64_t P##_parser_index(const void *p)                                                \
    {                                                                                              \
        const ek_##P##_parser *q = p;                                                              \
        return q->in_index + q->in_used;                                                           \
    }                                                                                              \
    static const char *P##_packet_name(const void *pkt, int what)                                  \
    {                                                                                              \
        const ek_##P##_packet *k = pkt;                                                            \
        return shape_packet_name(&(VOCAB), k->type, k->err_type, what);                            \
    }

#define SHAPE_PARSER_PLAIN(P)                                                                      \
    static void P##_parser_reset(void *p)                                                          \
    {                                                                                              \
        ek_##P##_parser_reset(p);                                                                  \
    }                                                                                              \
    static void P##_parser_feed(void *p, const uint8_t *data, size_t len, uint64_t index)          \
    {                                                                                              \
        ek_##P##_feed(p, data, len, index);                                                        \
    }                                                                                              \
    static void P##_parser_eot(void *p)                                                            \
    {                                                                                              \
        ek_##P##_eot(p);                                                                           \
    }

/* ---- a flow decoder (PTM, ETMv3): ek_P_decoder, made from ek_P_config ----------------------
 * SHAPE_FLOW_DECODER(P, CONFIG, SKIP, STOP) defines P_flow_new .. P_flow_stats over
 *   CONFIG(ek_P_config *cfg, const ek_source_config *src, uint32_t compat) -> status
 *   SKIP(k)     packets the decoder is not given (still a step: counted, elements cleared);
 *   STOP(f, rc) after a failed step (rc < 0, not EK_ERR_NOMEM): 1 when the reference decoder
 *               stops the data path there (the step's elements are dropped and the tree gets
 *               EK_DECODE_STOP), 0 when the failure was only reported (the step goes on).
 * A step's other failures are the decoder's diagnostics, not statuses: only EK_ERR_NOMEM is
 * returned. */
typedef struct shape_flow {
    void *dec;
    ek_diag diag; /* for STOP's diagnostic */
    const char *file;
    uint8_t trace_id;
    ek_flow_stats st;
} shape_flow;

static inline int shape_never_stops(shape_flow *f, int rc)
{
    (void)f;
    (void)rc;
    return 0;
}

#define SHAPE_FLOW_DECODER(P, CONFIG, SKIP, STOP)                                                  \
    static int P##_flow_new(const ek_flow_config *cfg, void **out)                                 \
    {                                                                                              \
        *out = NULL;                                                                               \
        ek_##P##_config c;                                                                         \
        int rc = CONFIG(&c, cfg->source, cfg->compat);                                             \
        if (rc) return rc;                                                                         \
        shape_flow *f = calloc(1, sizeof *f);                                                      \
        if (!f) return EK_ERR_NOMEM;                                                               \
        ek_##P##_decoder *dec = NULL;                                                              \
        rc = ek_##P##_decoder_new(&c, &cfg->mem, &dec);                                            \
        if (rc) {                                                                                  \
            free(f);                                                                               \
            return rc;                                                                             \
        }                                                                                          \
        f->dec = dec;                                                                              \
        if (cfg->diag) f->diag = *cfg->diag;                                                       \
        f->file = cfg->file;                                                                       \
        f->trace_id = c.trace_id;                                                                  \
        *out = f;                                                                                  \
        return 0;                                                                                  \
    }                                                                                              \
    static void P##_flow_free(void *fp)                                                            \
    {                                                                                              \
        shape_flow *f = fp;                                                                        \
        if (!f) return;                                                                            \
        ek_##P##_decoder_free(f->dec);                                                             \
        free(f);                                                                                   \
    }                                                                                              \
    static int P##_flow_packet(void *fp, const void *pkt, const ek_elem **elems, size_t *n)        \
    {                                                                                              \
        shape_flow *f = fp;                                                                        \
        const ek_##P##_packet *k = pkt;                                                            \
        ek_##P##_decoder_clear(f->dec);                                                            \
        int rc = 0;                                                                                \
        if (!(SKIP(k))) rc = ek_##P##_decode(f->dec, k);                                           \
        if (rc < 0 && rc != EK_ERR_NOMEM) {                                                        \
            if (STOP(f, rc)) {                                                                     \
                *elems = NULL;                                                                     \
                *n = 0;                                                                            \
                return EK_DECODE_STOP;                                                             \
            }                                                                                      \
            rc = 0;                                                                                \
        }                                                                                          \
        *elems = ek_##P##_decoder_elems(f->dec, n);                                                \
        decode_count_step(&f->st, *elems, *n);                                                     \
        return rc;                                                                                 \
    }                                                                                              \
    static int P##_flow_end(void *fp, const ek_elem **elems, size_t *n)                            \
    {                                                                                              \
        shape_flow *f = fp;                                                                        \
        ek_##P##_decoder_clear(f->dec);                                                            \
        int rc = ek_##P##_decode_eot(f->dec);                                                      \
        *elems = ek_##P##_decoder_elems(f->dec, n);                                                \
        decode_count_step(&f->st, *elems, *n);                                                     \
        f->st.packets--; /* (not a packet) */                                                      \
        return rc < 0 && rc != EK_ERR_NOMEM ? 0 : rc;                                              \
    }                                                                                              \
    static void P##_flow_reset(void *fp)                                                           \
    {                                                                                              \
        shape_flow *f = fp;                                                                        \
        ek_##P##_decoder_clear(f->dec);                                                            \
        ek_##P##_decoder_reset(f->dec);                                                            \
    }                                                                                              \
    static const ek_elem *P##_flow_elems(const void *fp, size_t *n)                                \
    {                                                                                              \
        const shape_flow *f = fp;                                                                  \
        return ek_##P##_decoder_elems(f->dec, n);                                                  \
    }                                                                                              \
    static void P##_flow_elems_clear(void *fp)                                                     \
    {                                                                                              \
        shape_flow *f = fp;                                                                        \
        ek_##P##_decoder_clear(f->dec);                                                            \
    }                                                                                              \
    static void P##_flow_stats(const void *fp, ek_flow_stats *out)                                 \
    {                                                                                              \
        *out = ((const shape_flow *)fp)->st;                                                       \
    }

/* ---- an element decoder (STM, ITM): ek_P_decoder by value, up to 2 elements a packet -------
 * SHAPE_FLOW_ELEMENTS(P, INIT, SKIP, FATAL) defines P_flow_new .. P_flow_stats over
 *   INIT(ek_P_decoder *d, const ek_flow_config *cfg)  the decoder for the source;
 *   SKIP(k)  packets the decoder does not see (no step: not counted, no elements);
 *   FATAL    the decoder's compat flag under which a failed packet stops the data path
 *            (OpenCSD's OCSD_RESP_FATAL_INVALID_DATA), set with EK_DECODE_COMPAT_OCSD.
 * The end of trace is one EO_TRACE element at the index of the last packet decoded. */
#define SHAPE_FLOW_ELEMENTS(P, INIT, SKIP, FATAL)                                                  \
    typedef struct P##_flow {                                                                      \
        ek_##P##_decoder dec;                                                                      \
        uint64_t last_index; /* of the last packet decoded: the end of trace's */                  \
        ek_elem e[2];                                                                              \
        size_t n;                                                                                  \
        ek_flow_stats st;                                                                          \
    } P##_flow;                                                                                    \
    static int P##_flow_new(const ek_flow_config *cfg, void **out)                                 \
    {                                                                                              \
        P##_flow *f = calloc(1, sizeof *f);                                                        \
        *out = f;                                                                                  \
        if (!f) return EK_ERR_NOMEM;                                                               \
        INIT(&f->dec, cfg);                                                                        \
        if (cfg->compat & EK_DECODE_COMPAT_OCSD) f->dec.compat = (FATAL);                          \
        return 0;                                                                                  \
    }                                                                                              \
    static void P##_flow_free(void *fp)                                                            \
    {                                                                                              \
        free(fp);                                                                                  \
    }                                                                                              \
    static int P##_flow_packet(void *fp, const void *pkt, const ek_elem **elems, size_t *n)        \
    {                                                                                              \
        P##_flow *f = fp;                                                                          \
        const ek_##P##_packet *k = pkt;                                                            \
        f->n = 0;                                                                                  \
        *elems = f->e;                                                                             \
        *n = 0;                                                                                    \
        if (SKIP(k)) return 0;                                                                     \
        f->last_index = k->index;                                                                  \
        const int r = ek_##P##_decode(&f->dec, k, f->e);                                           \
        f->n = r > 0 ? (size_t)r : 0;                                                              \
        *n = f->n;                                                                                 \
        decode_count_step(&f->st, f->e, f->n);                                                     \
        return r < 0 && (f->dec.compat & (FATAL)) ? EK_DECODE_STOP : 0;                            \
    }                                                                                              \
    static int P##_flow_end(void *fp, const ek_elem **elems, size_t *n)                            \
    {                                                                                              \
        P##_flow *f = fp;                                                                          \
        ek_##P##_decode_eot(&f->dec, f->last_index, &f->e[0]);                                     \
        f->n = 1;                                                                                  \
        *elems = f->e;                                                                             \
        *n = 1;                                                                                    \
        f->st.elems[EK_ELEM_EO_TRACE]++;                                                           \
        return 0;                                                                                  \
    }                                                                                              \
    static void P##_flow_reset(void *fp)                                                           \
    {                                                                                              \
        P##_flow *f = fp;                                                                          \
        f->n = 0;                                                                                  \
        ek_##P##_decoder_reset(&f->dec);                                                           \
    }                                                                                              \
    static const ek_elem *P##_flow_elems(const void *fp, size_t *n)                                \
    {                                                                                              \
        const P##_flow *f = fp;                                                                    \
        *n = f->n;                                                                                 \
        return f->e;                                                                               \
    }                                                                                              \
    static void P##_flow_elems_clear(void *fp)                                                     \
    {                                                                                              \
        ((P##_flow *)fp)->n = 0;                                                                   \
    }                                                                                              \
    static void P##_flow_stats(const void *fp, ek_flow_stats *out)                                 \
    {                                                                                              \
        *out = ((const P##_flow *)fp)->st;                                                         \
    }

/* The operations every shaped protocol has (designated initializers of ek_decode_proto); its
 * table adds name, kind, sync_name, protocols, parser_size, parser_init and what only it has
 * (parser_config, parser_tail, flow_diag_logged). */
#define SHAPE_OPS(P)                                                                               \
    .size = sizeof(ek_decode_proto), .parser_reset = P##_parser_reset,                             \
    .parser_feed = P##_parser_feed, .parser_eot = P##_parser_eot, .parser_next = P##_parser_next,  \
    .parser_index = P##_parser_index, .packet_name = P##_packet_name, .flow_new = P##_flow_new,    \
    .flow_free = P##_flow_free, .flow_packet = P##_flow_packet, .flow_end = P##_flow_end,          \
    .flow_reset = P##_flow_reset, .flow_elems = P##_flow_elems,                                    \
    .flow_elems_clear = P##_flow_elems_clear, .flow_stats = P##_flow_stats

#endif
