/* The decode tree: trace bytes in, packets and generic elements out, for every trace source
 * of a buffer or an AUX slice.
 *
 *     bytes -> [frame deformatter] -> per trace ID: packet parser -> flow decoder -> elements
 *
 * A tree is configured from trace sources (ek_decode_add_source, or the helpers for a
 * snapshot buffer and for perf.data slices below) and the trace IDs they own. A trace ID's
 * decoders (one packet parser, one instruction-flow decoder) are made the first time the ID
 * carries data, from the source bound to it then. Each protocol brings its parser and flow
 * decoder as a table of operations (ek_decode_proto): the tree itself knows no protocol.
 *
 * Pull-style, as the layers below it: give it bytes, then take items until it needs more:
 *
 *     ek_decode_config c;
 *     ek_decode_config_init(&c);
 *     c.frame_flags = EK_DFMT_MEM_ALIGN;          // CoreSight frames (0: one raw source)
 *     c.flags = EK_DECODE_PACKETS | EK_DECODE_ELEMS;
 *     c.mem = ek_flow_mem_image(img);             // code for the flow decoders
 *     ek_decode *t;
 *     ek_decode_new(&c, &t);
 *     ek_decode_add_source(t, &src_cfg, "etm0", NULL);
 *     ek_decode_feed(t, buf, len, 0);
 *     ek_decode_item it;
 *     while (ek_decode_next(t, &it) > 0) ...      // packets, elements, frames, resets
 *     ek_decode_end(t);                           // end of trace: flush, EO_TRACE
 *     while (ek_decode_next(t, &it) > 0) ...
 *     ek_decode_free(t);
 *
 * Nothing is copied on the way: an item's pointers (packet record, raw bytes, elements) point
 * into the layer that made them and stay valid until the next call on the tree. The only
 * exception is the order of flow-decoder diagnostics (EK_DECODE_DIAG_ITEMS): when one arrives
 * in the middle of a packet's elements, the elements before it are copied so that the items
 * come out in the order OpenCSD sends elements and logs errors.
 *
 * Resets follow one of two models (ek_decode_config.model):
 *  - EK_DECODE_MODEL_OCSD, OpenCSD's decode tree (trc_pkt_lister, perf report -D): a 4xFSYNC
 *    barrier or ek_decode_reset() resets every decoder at once (a partial packet is dropped)
 *    and each gives a RESET item;
 *  - EK_DECODE_MODEL_PERF, the way `etmkit script` decodes perf's AUX slices: a barrier first
 *    flushes the partial packets of the sources active since the last reset
 *    (INCOMPLETE_EOT), and after a barrier or ek_decode_reset() each source is reset when it
 *    next carries data; ek_decode_flush() flushes at the end of a slice.
 *
 * No printing, no global state. Problems in the trace go to the configured ek_diag with file,
 * byte offset and trace ID (always the flow decoders' own; with EK_DECODE_DIAG_STREAM also bad
 * packets, unsynchronised bytes and frame errors).
 */
#ifndef ETMKIT_DECODE_H
#define ETMKIT_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/config.h"
#include "etmkit/diag.h"
#include "etmkit/elem.h"
#include "etmkit/flow.h"
#include "etmkit/frame.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

/* ---- a protocol's operations ------------------------------------------------------------ */

struct ek_decode_pump;

/* What the tree (and any consumer) knows of a packet without knowing its protocol. The
 * protocol's own record is `pkt` (ETMv4 / ETE: const ek_etm4_packet *). timestamp, context_id
 * and vmid are set only with the flags that name them. */
typedef struct ek_decode_packet {
    const void *pkt;     /* the protocol's packet record */
    uint64_t index;      /* trace index of its first byte */
    const uint8_t *raw;  /* its bytes */
    uint32_t size;       /* number of bytes */
    uint32_t flags;      /* EK_DPKT_* */
    uint64_t timestamp;  /* EK_DPKT_TIMESTAMP: the time stamp value after this packet */
    uint32_t context_id; /* EK_DPKT_CONTEXT: with EK_DPKT_CID_VALID */
    uint32_t vmid;       /* EK_DPKT_CONTEXT: with EK_DPKT_VMID_VALID */
} ek_decode_packet;

/* ek_decode_packet.flags */
#define EK_DPKT_ERROR     0x0001u /* malformed, reserved or cut by the end of trace */
#define EK_DPKT_TRUNCATED 0x0002u /* (with ERROR) cut by the end of trace */
#define EK_DPKT_NOTSYNC   0x0004u /* bytes before synchronisation, as a packet of their own */
#define EK_DPKT_UNSYNCED                                                                           \
    0x0008u /* holds bytes dropped before synchronisation (also a sync                             \
               packet's excess bytes) */
#define EK_DPKT_REPEAT                                                                             \
    0x0010u                        /* a further packet of an unsynchronised run: a packet sink     \
                                      sees only the first */
#define EK_DPKT_TIMESTAMP  0x0020u /* carries a time stamp */
#define EK_DPKT_CONTEXT    0x0040u /* carries a new context */
#define EK_DPKT_CID_VALID  0x0080u /* (CONTEXT) context_id is known */
#define EK_DPKT_VMID_VALID 0x0100u /* (CONTEXT) vmid is known */

/* The operations of one trace protocol: a pure packet parser (state of parser_size bytes that
 * the tree allocates) and, optionally, an instruction-flow decoder. Every function returns 0 or
 * a negative ek_status unless said otherwise. To add a protocol, write its table and list it in
 * src/decode/protocols.c (or pass it in ek_decode_config.protos): nothing else changes. */
typedef struct ek_decode_proto {
    uint32_t size;         /* sizeof(ek_decode_proto) */
    const char *name;      /* "ETMv4/ETE" */
    const char *kind;      /* prefix of its diagnostics' kinds: "etm4" -> "etm4.bad-packet" */
    const char *sync_name; /* its synchronisation packet, for diagnostics: "A-Sync" */
    uint32_t protocols;    /* bit (1u << p) for every ek_protocol p it decodes */
    size_t parser_size;    /* bytes of parser state */
    /* the parser (see etmkit/etm4.h for the contract these follow) */
    /* compat: ek_decode_config.compat (EK_DECODE_COMPAT_*); EK_ERR_UNSUPPORTED refuses the
     * source */
    int (*parser_init)(void *parser, const ek_source_config *src, uint32_t compat);
    void (*parser_reset)(void *parser);
    void (*parser_feed)(void *parser, const uint8_t *data, size_t len, uint64_t index);
    void (*parser_eot)(void *parser);
    /* 1 and *out filled (valid until the next parser call), or 0 when the block is used up */
    int (*parser_next)(void *parser, ek_decode_packet *out);
    /* the protocol's configuration record the listing functions take (ek_etm4_config) */
    const void *(*parser_config)(const void *parser);
    /* names of a packet's type and, for error packets, of what it was being decoded as (NULL
     * when none): for diagnostics */
    const char *(*packet_name)(const void *pkt, int what);
    /* the flow decoder (all NULL: packets only); see etmkit/flow.h. The elements a call gives
     * (in place, in *elems / *count) are the caller's until the next call on that decoder that
     * can make elements (packet, end, reset), which first forgets them. */
    int (*flow_new)(const ek_flow_config *cfg, void **out);
    void (*flow_free)(void *flow);
    /* (flow_packet may return EK_DECODE_STOP: see below) */
    int (*flow_packet)(void *flow, const void *pkt, const ek_elem **elems, size_t *count);
    int (*flow_end)(void *flow, const ek_elem **elems, size_t *count);
    void (*flow_reset)(void *flow);
    /* the elements queued at this moment, and forgetting them (for a diagnostic sink, which
     * the flow decoder lets take the elements made before the error) */
    const ek_elem *(*flow_elems)(const void *flow, size_t *count);
    void (*flow_elems_clear)(void *flow);
    void (*flow_stats)(const void *flow, ek_flow_stats *out);
    /* 1 when the reference decoder logs this diagnostic of the flow decoder as an error (an
     * ocsd listing prints it in line: EK_DECODE_DIAG_ITEMS) */
    int (*flow_diag_logged)(const ek_diag_event *ev);
    /* optional, for speed: the parser's packets to the flow decoder in a loop, as the tree
     * does it with the functions above when no packet is listed (see ek_decode_pump) */
    int (*pump)(void *parser, void *flow, const struct ek_decode_pump *pp, const ek_elem **elems,
                size_t *count);
    /* optional (EK_DECODE_COMPAT_OCSD): the bytes OpenCSD's frame record holds after the data
     * just fed (ek_dfmt_ocsd_tail), which its packet processors may list; called after each
     * parser_feed of de-formatted data (a raw feed has none) */
    void (*parser_tail)(void *parser, const uint8_t *tail, size_t n);
    /* optional: trace index of the first byte the parser has not taken yet (where a stop
     * leaves raw input: EK_DI_STOP) */
    uint64_t (*parser_index)(const void *parser);
} ek_decode_proto;

/* flow_packet's answer when the reference decoder stops the whole data path at this packet
 * (only with EK_DECODE_COMPAT_OCSD: OpenCSD's fatal responses, docs/PROTOCOLS.md): the tree
 * hands out the step's elements and diagnostics, then one EK_DI_STOP item, then nothing more
 * until ek_decode_reset(). */
#define EK_DECODE_STOP 1

/* What a pump needs from the tree: each packet goes to hook (if any), is counted, then goes
 * to the flow decoder. The pump returns 1 with the first packet's elements (*count > 0; with
 * batch, the elements of packets up to about batch of them), or as soon as *stop is non-zero
 * after a packet (a diagnostic item waits); 0 when the parser has no more packets (and there
 * are no elements); or a negative status. (PACKET items do not use it.) */
typedef struct ek_decode_pump {
    void (*hook)(void *ctx, unsigned trace_id, const ek_decode_packet *p);
    void *ctx;
    /* with each flow step's new elements (in place), before the next packet is parsed; not for
     * a step that set *stop (the tree does it then) */
    void (*elems_hook)(void *ctx, unsigned trace_id, const ek_elem *e, size_t n);
    void *elems_ctx;
    uint32_t hook_flags;  /* the hook has packets with these flags ... */
    const uint8_t *watch; /* ... and every packet while *watch */
    unsigned trace_id;
    uint64_t *packets;      /* += 1 per packet */
    uint64_t *packet_bytes; /* += its size */
    uint64_t *bad_packets;  /* += 1 per EK_DPKT_ERROR packet */
    const size_t *stop;
    size_t batch; /* 0: one packet's elements at a time */
} ek_decode_pump;

/* The built-in table for protocol p (ETMv4, ETMv4-M, ETE), or NULL. */
const ek_decode_proto *ek_decode_proto_find(ek_protocol p);

/* ---- configuration ---------------------------------------------------------------------- */

typedef enum ek_decode_model {
    EK_DECODE_MODEL_OCSD = 0, /* resets as OpenCSD's decode tree (see above) */
    EK_DECODE_MODEL_PERF,     /* resets as etmkit script decodes perf's AUX slices */
} ek_decode_model;

/* ek_decode_config.flags: what comes out
 *  PACKETS       PACKET items (else packets go to the flow decoders unseen)
 *  ELEMS         flow decoders and ELEMS items (else packets only)
 *  RAW_PACKED    FRAME items for raw frames and FSYNC runs; FOOTER items
 *  RAW_UNPACKED  FRAME items for each run of de-formatted ID data
 *  UNDECODED     UNDECODED and FRAME_ERROR items
 *  DIAG_ITEMS    DIAG items: the flow errors the reference decoder logs, in order with the
 *                elements
 *  DIAG_STREAM   diagnostics for bad packets, unsynchronised bytes, frame errors and a partial
 *                frame at the end
 *  DSTREAM       input is DSTREAM records: 504 data bytes and an 8-byte footer (not part of
 *                the trace index)
 *  BATCH         (without PACKETS, and not DIAG_ITEMS with an elements hook) an ELEMS item
 *                may hold the elements of several packets of its source; else it holds one
 *                packet's */
#define EK_DECODE_PACKETS      0x0001u
#define EK_DECODE_ELEMS        0x0002u
#define EK_DECODE_RAW_PACKED   0x0004u
#define EK_DECODE_RAW_UNPACKED 0x0008u
#define EK_DECODE_UNDECODED    0x0010u
#define EK_DECODE_DIAG_ITEMS   0x0020u
#define EK_DECODE_DIAG_STREAM  0x0040u
#define EK_DECODE_DSTREAM      0x0080u
#define EK_DECODE_BATCH        0x0100u

/* ek_decode_config.compat
 *  OCSD  OpenCSD 1.8.0 where it departs from the architecture, for listings that compare with
 *        trc_pkt_lister's (docs/PROTOCOLS.md): the ETMv3 parser's and decoder's options
 *        (EK_ETM3_OCSD_ALL), the fatal stops of the ETMv3, STM and ITM decoders, the bytes
 *        its PTM and STM processors list past a block, and the empty run a frame can end
 *        with (EK_DFMT_OCSD_EMPTY), which stops the data path when its ID has a decoder. */
#define EK_DECODE_COMPAT_OCSD 0x0001u

typedef struct ek_decode_config {
    uint32_t size;        /* sizeof(ek_decode_config), set by ek_decode_config_init */
    unsigned frame_flags; /* EK_DFMT_* of etmkit/frame.h; 0: raw data of one source */
    uint32_t flags;       /* EK_DECODE_* */
    ek_decode_model model;
    size_t block_size; /* input is handed to the deformatter / parser in pieces of this many
                          bytes (a raw frame listing shows where they end); 0: whole */
    ek_flow_mem mem;   /* code for the flow decoders ... */
    /* ... or, when set, what this gives for each trace ID's flow decoder as it is made
     * (called with the ID and the source number; EK_ERR_NOMEM fails the call that needed the
     * decoder, another negative status leaves the ID without decoders) */
    int (*mem_for)(void *ctx, unsigned trace_id, int source, ek_flow_mem *out);
    void *mem_ctx;
    /* called with every packet as it is parsed, before its PACKET item and before the flow
     * decoder has it (what a consumer that steers the code reads must see first: the session
     * follows context and time there); may be NULL */
    void (*packet_hook)(void *ctx, unsigned trace_id, const ek_decode_packet *p);
    void *hook_ctx;
    /* called (with hook_ctx) with the elements of every flow step as they are made, before the
     * next packet is parsed, whatever items they come out in (a consumer whose code reads
     * depend on what was decoded so far follows it there, and may then take batched items);
     * may be NULL */
    void (*elems_hook)(void *ctx, unsigned trace_id, const ek_elem *e, size_t n);
    /* only packets with one of these EK_DPKT_* flags go to the hook, and every packet of a
     * trace ID the consumer watches (ek_decode_watch); 0: every packet */
    uint32_t hook_flags;
    uint32_t flow_flags;       /* EK_FLOW_* for every flow decoder */
    uint32_t flow_max_pending; /* ek_flow_config.max_pending of every flow decoder (0: default) */
    const ek_diag *diag;       /* may be NULL */
    const char *file;          /* named in diagnostics (ek_decode_set_file changes it) */
    const ek_decode_proto *const *protos; /* more protocols (NULL-terminated), tried first */
    uint32_t compat;       /* EK_DECODE_COMPAT_*: a reference decoder's departures from the
                              architecture, reproduced (0: the architecture) */
    uint32_t source_flags; /* EK_SRC_* (etmkit/config.h) added to the flags of every source
                              added to the tree (e.g. EK_SRC_ITM_ASSUME_SYNC for a listing) */
} ek_decode_config;

void ek_decode_config_init(ek_decode_config *c);

typedef struct ek_decode ek_decode;

/* Returns 0, EK_ERR_ARG or EK_ERR_NOMEM. */
int ek_decode_new(const ek_decode_config *c, ek_decode **out);
void ek_decode_free(ek_decode *t);

/* ---- sources ---------------------------------------------------------------------------- */

/* Add a trace source (the configuration is copied; name and user are kept as given) and bind
 * its trace ID to it (unless another source has it). Returns the source's number (0, 1, ...)
 * or EK_ERR_NOMEM. A source of a protocol without operations is kept (ek_decode_source_info
 * says so) but never decoded. */
int ek_decode_add_source(ek_decode *t, const ek_source_config *cfg, const char *name, void *user);

/* Data of trace_id is decoded by source `source` (-1: by nobody) from now on; a decoder
 * already made for the ID keeps its source. Returns 0 or EK_ERR_ARG. */
int ek_decode_bind(ek_decode *t, unsigned trace_id, int source);

/* Raw (unformatted) input belongs to source `source` (-1: nobody). */
int ek_decode_bind_raw(ek_decode *t, int source);

/* Make the decoders of every bound source now (as the reference lister does), so that
 * ek_decode_end() ends them whether or not they carried data. Returns 0 or EK_ERR_NOMEM. */
int ek_decode_make_all(ek_decode *t);

typedef struct ek_decode_source_info {
    const ek_source_config *cfg;
    const char *name;
    void *user;
    const ek_decode_proto *proto; /* NULL: protocol not decoded */
} ek_decode_source_info;

size_t ek_decode_source_count(const ek_decode *t);
int ek_decode_source_info_get(const ek_decode *t, size_t source, ek_decode_source_info *out);

/* ---- bytes in, items out ---------------------------------------------------------------- */

/* Next block of input (contiguous with the last in index, unless the tree was reset since):
 * len bytes, data[k] at trace index index + k (DSTREAM: footers do not count). The block must
 * stay valid until ek_decode_next() returned 0. */
void ek_decode_feed(ek_decode *t, const uint8_t *data, size_t len, uint64_t index);

/* Frame format of the following input (after ek_decode_reset; 0: raw). */
void ek_decode_set_frames(ek_decode *t, unsigned frame_flags);
/* File named in diagnostics from now on (kept as given). */
void ek_decode_set_file(ek_decode *t, const char *file);

typedef enum ek_decode_item_kind {
    EK_DI_PACKET = 1,  /* a packet (before the flow decoder has it): item.packet */
    EK_DI_ELEMS,       /* elements the flow decoder produced: item.elems[0 .. item.count) */
    EK_DI_DIAG,        /* a flow-decoder error, where the reference decoder logs it: item.diag */
    EK_DI_FRAME,       /* a deformatter item (raw frame, FSYNC run, ID data): item.frame */
    EK_DI_FOOTER,      /* DSTREAM: the record footer as the lister shows it: item.data (8) */
    EK_DI_FRAME_ERROR, /* bad frame sync or a partial frame: item.frame (its err says why) */
    EK_DI_UNDECODED,   /* data of a trace ID that has no decoder: item.data, item.len, why */
    EK_DI_RESET,       /* a decoder was reset (OCSD model: barrier, ek_decode_reset) */
    EK_DI_EOT,         /* a decoder ended (ek_decode_end) */
    EK_DI_STOP,        /* EK_DECODE_COMPAT_OCSD: the reference decoder stopped the data path
                          (flow_packet answered EK_DECODE_STOP, or an empty run of a frame);
                          item.index: the input taken up to then (the trace index after the
                          frame, or after the parser's last byte taken), item.diag: the error
                          the stopping decoder logged, or NULL. Nothing follows. */
} ek_decode_item_kind;

/* EK_DI_UNDECODED reasons */
#define EK_DECODE_NO_ID     1 /* data before the first trace ID, or the null / a reserved ID */
#define EK_DECODE_NO_SOURCE 2 /* no source bound to the ID, or one that cannot be decoded */

typedef struct ek_decode_item {
    uint8_t kind;                 /* ek_decode_item_kind */
    uint8_t trace_id;             /* the source's (PACKET, ELEMS, DIAG, RESET, EOT,
                                     UNDECODED: the ID the data carried) */
    uint8_t why;                  /* UNDECODED: EK_DECODE_NO_* */
    int source;                   /* the decoder's source number, or -1 */
    ek_protocol protocol;         /* the decoder's source's protocol */
    const ek_decode_proto *proto; /* the decoder's protocol operations, or NULL */
    const void *config;           /* the decoder's protocol configuration, or NULL */
    uint64_t index;               /* trace index (PACKET, UNDECODED, FRAME*, FOOTER) */
    ek_decode_packet packet;      /* PACKET */
    const ek_elem *elems;         /* ELEMS */
    size_t count;                 /* ELEMS */
    const ek_diag_event *diag;    /* DIAG */
    const ek_dfmt_item *frame;    /* FRAME, FRAME_ERROR */
    const uint8_t *data;          /* UNDECODED, FOOTER */
    size_t len;
} ek_decode_item;

/* Next item: 1 and *out filled (its pointers valid until the next call on t), 0 when the input
 * block is used up (feed the next one, or flush / end), or EK_ERR_NOMEM. */
int ek_decode_next(ek_decode *t, ek_decode_item *out);

/* End of an AUX slice's bytes (perf model): the partial packets of the sources active since
 * the last reset are flushed (INCOMPLETE_EOT); the flow decoders are not ended. Take the items
 * with ek_decode_next. */
void ek_decode_flush(ek_decode *t);

/* A new buffer or slice follows: the deformatter loses frame sync and the current ID; the
 * decoders are reset now (OCSD model, RESET items) or each at its next data (perf model). */
void ek_decode_reset(ek_decode *t);

/* End of trace: for every decoder in trace ID order, its partial packet (INCOMPLETE_EOT), what
 * the flow decoder still holds and EO_TRACE, then an EOT item. (With EK_DECODE_DIAG_STREAM, a
 * partial frame left in the deformatter is reported first.) */
void ek_decode_end(ek_decode *t);

/* Every packet of trace_id goes to the packet hook while on (with ek_decode_config.hook_flags;
 * trace_id must have a decoder). */
void ek_decode_watch(ek_decode *t, unsigned trace_id, int on);

/* 1 when trace_id's decoder had data since the last reset (or barrier). */
int ek_decode_active(const ek_decode *t, unsigned trace_id);
/* 1 when trace_id has a decoder (made, and not refused). */
int ek_decode_has_decoder(const ek_decode *t, unsigned trace_id);

/* ---- counters --------------------------------------------------------------------------- */

typedef struct ek_decode_source_stats {
    int source;            /* the source it decodes (ek_decode_source_info_get) */
    uint64_t bytes;        /* bytes given to its parser */
    uint64_t packets;      /* packets parsed */
    uint64_t packet_bytes; /* their bytes */
    uint64_t bad_packets;  /* EK_DPKT_ERROR packets (not the unsynchronised ones) */
    int has_flow;
    ek_flow_stats flow; /* with has_flow */
} ek_decode_source_stats;

typedef struct ek_decode_stats {
    uint64_t input_bytes;     /* trace bytes fed (DSTREAM footers not counted) */
    uint64_t undecoded_bytes; /* ID data without a decoder (also before the first ID) */
    uint64_t frame_errors;    /* bad frame sync patterns */
} ek_decode_stats;

/* Counters of trace_id's decoder: 0, or EK_ERR_ARG when it has none. */
int ek_decode_source_stats_get(const ek_decode *t, unsigned trace_id, ek_decode_source_stats *out);
void ek_decode_stats_get(const ek_decode *t, ek_decode_stats *out);

/* ---- configuration from the inputs ------------------------------------------------------ */

struct ek_snapshot;
/* The sources of buffer `buffer` of a snapshot, as trc_pkt_lister's decode tree takes them:
 * sorted by device name; every source of a formatted buffer bound to its trace ID (the first
 * of two with one ID: warning "decode.duplicate-id"), only the first source of a raw buffer
 * (note "decode.extra-source" for the others). Sets the frame format
 * (ek_decode_snapshot_frames), and makes the decoders (ek_decode_make_all).
 * Sources of protocols without operations are added, not decoded. Returns the number of
 * sources decoded (>= 0) or EK_ERR_NOMEM. */
int ek_decode_add_snapshot_buffer(ek_decode *t, const struct ek_snapshot *ss, size_t buffer);

/* The frame format (EK_DFMT_*) a snapshot buffer of this format (an ek_buffer_format,
 * etmkit/snapshot.h) is read with: MEM_ALIGN for CoreSight frames in memory, FSYNC for
 * DSTREAM and TPIU captures, FSYNC|HSYNC for TPIU_HSYNC, 0 for source data. */
unsigned ek_decode_snapshot_frames(int buffer_format);

struct ek_perf_cs_etm;
struct ek_perf_queue;
struct ek_perf_slice;
/* Every CPU block of a perf.data file's cs_etm metadata as a source (source i = cpus[i],
 * named "cpuN", user = &cpus[i]); no ID is bound yet. Returns 0 or EK_ERR_NOMEM. */
int ek_decode_add_perf_cpus(ek_decode *t, const struct ek_perf_cs_etm *cs);
/* Bind the trace IDs for AUX slice sl of queue q as perf does: formatted trace through the
 * slice's trace ID map (IDs 0x01..0x6f), raw trace to the configuration queueing chose for
 * the slice (its raw_etm); sets the frame format
 * (perf: memory-aligned frames, 4xFSYNC barriers). Returns the raw source's trace ID, 0 for
 * formatted trace, or -1 when raw trace has no CPU configuration. */
int ek_decode_bind_perf_slice(ek_decode *t, const struct ek_perf_cs_etm *cs,
                              const struct ek_perf_queue *q, const struct ek_perf_slice *sl);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
