/* ETMv3 as a protocol of the decode tree: the packet parser and the instruction-flow decoder of
 * src/etm3 behind the tree's operations table. With EK_DECODE_COMPAT_OCSD both run with
 * OpenCSD 1.8.0's behaviours (EK_ETM3_OCSD_ALL): the decoder then stops the data path where
 * OpenCSD's answers with a fatal response, after logging the error OpenCSD logs (a diagnostic
 * "etm3.ocsd-*", which the listing renders as OpenCSD's log line). */
#include <stdlib.h>
#include <string.h>

#include "decode/decode_int.h"
#include "etmkit/etm3.h"
#include "etmkit/etmkit.h"

static int config(ek_etm3_config *cfg, const ek_source_config *src, uint32_t compat)
{
    int rc = ek_etm3_config_from_source(cfg, src);
    if (rc) return rc;
    cfg->compat = (compat & EK_DECODE_COMPAT_OCSD) ? EK_ETM3_OCSD_ALL : 0;
    return 0;
}

static int parser_init(void *p, const ek_source_config *src, uint32_t compat)
{
    ek_etm3_config cfg;
    int rc = config(&cfg, src, compat);
    if (rc) return rc;
    ek_etm3_parser_init(p, &cfg);
    return 0;
}

static void parser_reset(void *p)
{
    ek_etm3_parser_reset(p);
}

static void parser_feed(void *p, const uint8_t *data, size_t len, uint64_t index)
{
    ek_etm3_feed(p, data, len, index);
}

static void parser_eot(void *p)
{
    ek_etm3_eot(p);
}

static uint64_t parser_index(const void *p)
{
    const ek_etm3_parser *q = p;
    return q->in_index + q->in_used;
}

static int parser_next(void *p, ek_decode_packet *out)
{
    const ek_etm3_packet *k;
    if (ek_etm3_next(p, &k) <= 0) return 0;
    uint32_t fl = 0;
    if (k->type == EK_ETM3_NOTSYNC) fl |= EK_DPKT_NOTSYNC;
    if ((k->flags & EK_ETM3_PF_ERROR) && k->type != EK_ETM3_NOTSYNC) {
        fl |= EK_DPKT_ERROR;
        if (k->type == EK_ETM3_INCOMPLETE_EOT) fl |= EK_DPKT_TRUNCATED;
    }
    if (k->type == EK_ETM3_TIMESTAMP) {
        fl |= EK_DPKT_TIMESTAMP;
        out->timestamp = k->timestamp;
    }
    if (k->ctx_updated || k->cid_updated || k->vmid_updated) {
        fl |= EK_DPKT_CONTEXT;
        if (k->cid_updated) fl |= EK_DPKT_CID_VALID;
        if (k->vmid_updated) fl |= EK_DPKT_VMID_VALID;
        out->context_id = k->ctxt_id;
        out->vmid = k->vmid;
    }
    out->pkt = k;
    out->index = k->index;
    out->raw = k->raw;
    out->size = k->size;
    out->flags = fl;
    return 1;
}

static const void *parser_config(const void *p)
{
    return &((const ek_etm3_parser *)p)->cfg;
}

static const char *packet_name(const void *pkt, int what)
{
    const ek_etm3_packet *k = pkt;
    if (!what) return ek_etm3_type_name(k->type);
    if (k->type != EK_ETM3_BAD_SEQUENCE && k->type != EK_ETM3_INCOMPLETE_EOT) return NULL;
    return ek_etm3_type_name(k->err_type);
}

/* ---- the flow decoder -------------------------------------------------------------------- */

typedef struct etm3_flow {
    ek_etm3_decoder *dec;
    ek_diag diag;
    const char *file;
    uint8_t trace_id;
    ek_flow_stats st;
} etm3_flow;

static int flow_new(const ek_flow_config *cfg, void **out)
{
    *out = NULL;
    ek_etm3_config ec;
    int rc = config(&ec, cfg->source, cfg->compat);
    if (rc) return rc;
    etm3_flow *f = calloc(1, sizeof *f);
    if (!f) return EK_ERR_NOMEM;
    rc = ek_etm3_decoder_new(&ec, &cfg->mem, &f->dec);
    if (rc) {
        free(f);
        return rc;
    }
    if (cfg->diag) f->diag = *cfg->diag;
    f->file = cfg->file;
    f->trace_id = ec.trace_id;
    *out = f;
    return 0;
}

static void flow_free(void *fp)
{
    etm3_flow *f = fp;
    if (!f) return;
    ek_etm3_decoder_free(f->dec);
    free(f);
}

/* The diagnostics' kinds of the fatal stops, by ek_etm3_fatal (the listing maps them back). */
static const char *const fatal_kind[] = {
    [EK_ETM3_FATAL_NOT_INIT] = "etm3.ocsd-not-init",
    [EK_ETM3_FATAL_DATA] = "etm3.ocsd-data-trace",
    [EK_ETM3_FATAL_BAD_SEQ] = "etm3.ocsd-bad-sequence",
    [EK_ETM3_FATAL_RESERVED] = "etm3.ocsd-reserved",
};

static const char *const fatal_msg[] = {
    [EK_ETM3_FATAL_NOT_INIT] = "data trace is configured: OpenCSD's ETMv3 decoder decodes nothing",
    [EK_ETM3_FATAL_DATA] = "data trace packet: OpenCSD's ETMv3 decoder stops",
    [EK_ETM3_FATAL_BAD_SEQ] = "bad packet sequence: OpenCSD's ETMv3 decoder stops",
    [EK_ETM3_FATAL_RESERVED] = "reserved packet: OpenCSD's ETMv3 decoder stops",
};

static int flow_packet(void *fp, const void *pkt, const ek_elem **elems, size_t *n)
{
    etm3_flow *f = fp;
    ek_etm3_decoder_clear(f->dec);
    int rc = ek_etm3_decode(f->dec, pkt);
    if (rc < 0 && rc != EK_ERR_NOMEM) {
        uint64_t at = 0;
        const unsigned why = ek_etm3_decoder_fatal(f->dec, &at);
        if (why != EK_ETM3_FATAL_NONE && why < sizeof fatal_kind / sizeof fatal_kind[0]) {
            /* OpenCSD drops what it held back and logs the error; the data path stops */
            ek_etm3_decoder_clear(f->dec);
            ek_diag_emit(&f->diag, EK_SEV_WARN, fatal_kind[why], rc, f->file, -1, (int64_t)at,
                         f->trace_id, "%s", fatal_msg[why]);
            *elems = NULL;
            *n = 0;
            return EK_DECODE_STOP;
        }
        rc = 0;
    }
    *elems = ek_etm3_decoder_elems(f->dec, n);
    decode_count_step(&f->st, *elems, *n);
    return rc;
}

static int flow_end(void *fp, const ek_elem **elems, size_t *n)
{
    etm3_flow *f = fp;
    ek_etm3_decoder_clear(f->dec);
    int rc = ek_etm3_decode_eot(f->dec);
    *elems = ek_etm3_decoder_elems(f->dec, n);
    decode_count_step(&f->st, *elems, *n);
    f->st.packets--; /* (not a packet) */
    return rc < 0 && rc != EK_ERR_NOMEM ? 0 : rc;
}

static void flow_reset(void *fp)
{
    etm3_flow *f = fp;
    ek_etm3_decoder_clear(f->dec);
    ek_etm3_decoder_reset(f->dec);
}

static const ek_elem *flow_elems(const void *fp, size_t *n)
{
    const etm3_flow *f = fp;
    return ek_etm3_decoder_elems(f->dec, n);
}

static void flow_elems_clear(void *fp)
{
    etm3_flow *f = fp;
    ek_etm3_decoder_clear(f->dec);
}

static void flow_stats(const void *fp, ek_flow_stats *out)
{
    const etm3_flow *f = fp;
    *out = f->st;
}

/* OpenCSD logs the errors of its fatal stops (the listing prints them in line). */
static int flow_diag_logged(const ek_diag_event *ev)
{
    return ev->kind && !strncmp(ev->kind, "etm3.ocsd-", 10);
}

const ek_decode_proto ek_decode_proto_etm3 = {
    .size = sizeof(ek_decode_proto),
    .name = "ETMv3",
    .kind = "etm3",
    .sync_name = "A-Sync",
    .protocols = 1u << EK_PROTO_ETMV3,
    .parser_size = sizeof(ek_etm3_parser),
    .parser_init = parser_init,
    .parser_reset = parser_reset,
    .parser_feed = parser_feed,
    .parser_eot = parser_eot,
    .parser_next = parser_next,
    .parser_config = parser_config,
    .packet_name = packet_name,
    .flow_new = flow_new,
    .flow_free = flow_free,
    .flow_packet = flow_packet,
    .flow_end = flow_end,
    .flow_reset = flow_reset,
    .flow_elems = flow_elems,
    .flow_elems_clear = flow_elems_clear,
    .flow_stats = flow_stats,
    .flow_diag_logged = flow_diag_logged,
    .parser_index = parser_index,
};
