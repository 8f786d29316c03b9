/* Packet listings: text renderings of parsed packets and deformatter output, and the whole
 * listing of a trace snapshot (trc_pkt_lister's). Every function appends to an ek_sbuf or hands
 * its text to the caller's write function; nothing is printed. */
#ifndef ETMKIT_LISTING_H
#define ETMKIT_LISTING_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/decode.h"
#include "etmkit/etm4.h"
#include "etmkit/frame.h"
#include "etmkit/sbuf.h"
#include "etmkit/snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

/* One OpenCSD trc_pkt_lister packet line, newline included:
 *   with_raw:  "Idx:<dec>; ID:<hex>; [0xNN 0xNN ];\t<NAME> : <description>\n"  (packet monitor)
 *   otherwise: "Idx:<dec>; ID:<hex>;\t<NAME> : <description>\n"               (packet sink)
 * The text matches OpenCSD 1.8.0's EtmV4ITrcPacket::toString(). */
void ek_list_etm4_ocsd(ek_sbuf *out, const ek_etm4_packet *pkt, unsigned trace_id, int with_raw,
                       const ek_etm4_config *cfg);

/* Just "<NAME> : <description>" of the line above. */
void ek_list_etm4_ocsd_desc(ek_sbuf *out, const ek_etm4_packet *pkt, const ek_etm4_config *cfg);

/* etmkit's own readable line: index, ID, type, decoded fields, raw bytes. */
void ek_list_etm4_text(ek_sbuf *out, const ek_etm4_packet *pkt, unsigned trace_id,
                       const ek_etm4_config *cfg);

/* One JSON object per packet, newline-terminated:
 * {"idx":N,"id":N,"type":"ATOM_F1","raw":"f7",...decoded fields...} */
void ek_list_etm4_json(ek_sbuf *out, const ek_etm4_packet *pkt, unsigned trace_id,
                       const ek_etm4_config *cfg);

/* trc_pkt_lister prints error-log messages WITHOUT a final newline, so the next listing line
 * continues the message line (and a line-based comparison no longer sees it as a packet).
 * These helpers reproduce those messages where the lister prints them, so that listings
 * keep lining up with its output:
 *  - ek_list_etm4_ocsd_pre(): before a packet line: the packet processor's log entry for a
 *    reserved header (I_RESERVED) or a field running past the end of a packet;
 *  - ek_list_etm4_ocsd_post(): after a packet line, with -decode: the packet decoder's log
 *    entry for a packet it cannot use while synchronised (bad / reserved / incomplete ...),
 *    after which it waits for the next A-Sync and TRACE_INFO. ek_ocsd_dcd_model tracks that
 *    synchronisation state; reset it when the decoders are reset. */
typedef struct ek_ocsd_dcd_model {
    uint8_t state;
} ek_ocsd_dcd_model;

void ek_ocsd_dcd_model_reset(ek_ocsd_dcd_model *m);
void ek_list_etm4_ocsd_pre(ek_sbuf *out, const ek_etm4_packet *pkt, const ek_etm4_config *cfg);
void ek_list_etm4_ocsd_post(ek_sbuf *out, ek_ocsd_dcd_model *m, const ek_etm4_packet *pkt,
                            const ek_etm4_config *cfg);

/* Raw frame lines as trc_pkt_lister prints them with -o_raw_packed / -o_raw_unpacked:
 *   "Frame Data; Index<%7u>;    RAW_PACKED; ff ff ... (16 bytes a line)\n"
 *   "Frame Data; Index<%7u>;   ID_DATA[0x10]; ...\n"   (unknown ID: ID_DATA[????])
 * it->kind selects the form (DATA items print as ID_DATA). */
void ek_list_frame_ocsd(ek_sbuf *out, const ek_dfmt_item *it);

/* ---- a protocol's packet formatters ----------------------------------------------------- */

/* The listing functions of one protocol, on its packet and configuration records (ETMv4 /
 * ETE: ek_etm4_packet, ek_etm4_config). A new protocol adds its table to src/output/
 * list_protos.c, beside its operations in the decode tree (etmkit/decode.h). */
typedef struct ek_list_proto {
    uint32_t protocols; /* bit (1u << p) for every ek_protocol p */
    /* trc_pkt_lister's name of the packet printer ("ETMV4I", "ETE") */
    const char *(*printer_name)(ek_protocol p);
    /* the lister's packet line, with raw bytes or not (see ek_list_etm4_ocsd) */
    void (*ocsd)(ek_sbuf *out, const void *pkt, unsigned trace_id, int with_raw, const void *cfg);
    /* the lister's log entry that precedes a packet line, if any (ek_list_etm4_ocsd_pre);
     * asked only for packets with EK_DPKT_ERROR, _NOTSYNC or _UNSYNCED */
    void (*ocsd_pre)(ek_sbuf *out, const void *pkt, const void *cfg);
    void (*text)(ek_sbuf *out, const void *pkt, unsigned trace_id, const void *cfg);
    void (*json)(ek_sbuf *out, const void *pkt, unsigned trace_id, const void *cfg);
    /* the reference decoder's log line for a flow diagnostic (ek_flow_diag_ocsd: with_instance
     * 1, 0 or, for the error alone, -1): 1 if any */
    int (*diag_ocsd)(ek_sbuf *out, const ek_diag_event *ev, int with_instance);
} ek_list_proto;

/* The formatters for protocol p, or NULL. */
const ek_list_proto *ek_list_proto_find(ek_protocol p);

/* ---- listing a decode tree's items -------------------------------------------------------- */

typedef enum ek_listing_format {
    EK_LISTING_OCSD = 0, /* trc_pkt_lister's lines */
    EK_LISTING_TEXT,     /* etmkit's readable lines */
    EK_LISTING_JSON,     /* one JSON object per line */
    EK_LISTING_PERF,     /* `perf report -D`: packet lines as a packet sink sees them, each after
                            a tab; element lines likewise */
} ek_listing_format;

typedef struct ek_listing {
    ek_listing_format format;
    int packets;       /* list packets (0: elements alone) */
    int monitor;       /* OCSD: packets as a packet monitor sees them (raw bytes, every
                          I_NOT_SYNC); else as a packet sink (one I_NOT_SYNC per run) */
    int single_source; /* OCSD: unformatted data: IDs printed as 0, decoder log names plain */
} ek_listing;

/* The lines of one decode item (etmkit/decode.h), if the format has any: packets, elements,
 * the flow decoder's log lines (OCSD: without a newline, as the lister), raw frames
 * (OCSD / JSON), DSTREAM footers, RESET and END OF TRACE lines (OCSD). */
void ek_list_item(ek_sbuf *out, const ek_listing *l, const ek_decode_item *it);

/* ---- listing a trace snapshot: OpenCSD's trc_pkt_lister ----------------------------------- */

/* What to list and how; trc_pkt_lister's options in brackets. Set every field through
 * ek_snapshot_list_opts_init first (size: the fields a caller knows of). */
typedef struct ek_snapshot_list_opts {
    uint32_t size;            /* sizeof(ek_snapshot_list_opts), set by ek_snapshot_list_opts_init */
    ek_listing_format format; /* EK_LISTING_OCSD, _TEXT (the default) or _JSON */
    const char *path;         /* the snapshot folder as the OCSD banner names it */
    int pkt_mon;              /* packets with raw bytes, as a packet monitor sees them [-pkt_mon] */
    int decode;               /* packets with raw bytes and the flow decoders' elements [-decode] */
    int decode_only;          /* elements only [-decode_only] (implies decode) */
    int src_addr_n;           /* ETE: source address ranges split on N atoms [-src_addr_n] */
    int multi_session;        /* every buffer in turn, decoders reset between [-multi_session] */
    int stats;                /* per-source counts at the end */
    int dstream;              /* DSTREAM capture: 504 data + 8 footer bytes [-dstream_format] */
    int tpiu;                 /* frames synchronised by FSYNCs [-tpiu] */
    int tpiu_hsync;           /* ... with HSYNCs [-tpiu_hsync] (implies tpiu) */
    int raw_packed;           /* raw formatter frames [-o_raw_packed] */
    int raw_unpacked;         /* de-formatted bytes per trace ID [-o_raw_unpacked] */
    /* where the text goes: called with pieces of up to about 64 KiB, in order; a non-zero
     * return stops the listing (EK_ERR_IO) */
    int (*write)(void *ctx, const char *text, size_t len);
    void *write_ctx;
    const ek_diag *diag;     /* problems found (NULL: none reported) */
    ek_progress_fn progress; /* bytes of the buffers to list: done, total (NULL: none) */
    void *progress_ctx;
    /* ITM sources: EK_LIST_ITM_SYNC_WAIT lists bytes before the first A-Sync as ITM_NOTSYNC
     * (OpenCSD's trc_pkt_lister), EK_LIST_ITM_SYNC_ASSUME decodes from the first byte as if an
     * A-Sync preceded it (EK_SRC_ITM_ASSUME_SYNC; orbuculum's default, for streams without
     * sync packets); EK_LIST_ITM_SYNC_DEFAULT (0): WAIT for EK_LISTING_OCSD, else ASSUME */
    int itm_sync;
    /* --- since etmkit 0.x: code given as files (--image FILE@ADDR, etmkit/image.h), laid over
     * the memory dumps of every buffer for the flow decoders (decode, decode_only); a spec
     * that cannot be added fails the listing (its status; diag "image.*") --- */
    const struct ek_image_spec *images;
    size_t nimages;
} ek_snapshot_list_opts;

/* The size of ek_snapshot_list_opts before images (fields past a caller's size are zero). */
#define EK_SNAPSHOT_LIST_OPTS_SIZE_V1 offsetof(ek_snapshot_list_opts, images)

#define EK_LIST_ITM_SYNC_DEFAULT 0
#define EK_LIST_ITM_SYNC_WAIT    1
#define EK_LIST_ITM_SYNC_ASSUME  2

void ek_snapshot_list_opts_init(ek_snapshot_list_opts *o);

/* List snapshot ss as trc_pkt_lister does: the first buffer in the snapshot's order (or every
 * buffer with multi_session, through the decoders made for the first), decoded by a decode
 * tree as the lister builds it (1024-byte reads, or DSTREAM records, so that raw frame lines
 * line up; code for the flow decoders from the first buffer's memory dumps). OCSD adds the
 * lister's banners, packet printer lines, "processed N bytes" and multi-session lines; the
 * per-source statistics close every format when asked. A source of a protocol etmkit does not
 * decode is reported (warning "dump.unknown-protocol") and left out.
 * Returns the number of buffers decoded (>= 0), or EK_ERR_ARG (no buffer, bad options),
 * EK_ERR_UNSUPPORTED (the first buffer has no source etmkit decodes: only the banner is
 * written), EK_ERR_IO (write failed) or EK_ERR_NOMEM. A buffer that cannot be read is
 * reported and not counted. */
int ek_snapshot_list(const ek_snapshot *ss, const ek_snapshot_list_opts *o);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
