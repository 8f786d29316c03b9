/* PTM (PFT 1.0 / 1.1) as a protocol of the decode tree: the packet parser and the
 * instruction-flow decoder of src/ptm behind the tree's operations table. */
#include <stdlib.h>
#include <string.h>

#include "decode/decode_int.h"
#include "etmkit/etmkit.h"
#include "etmkit/ptm.h"

static int parser_init(void *p, const ek_source_config *src, uint32_t compat)
{
    ek_ptm_config cfg;
    int rc = ek_ptm_config_from_source(&cfg, src);
    if (rc) return rc;
    if (compat & EK_DECODE_COMPAT_OCSD) cfg.compat = EK_PTM_OCSD_UNSYNC;
    ek_ptm_parser_init(p, &cfg);
    return 0;
}

static void parser_reset(void *p)
{
    ek_ptm_parser_reset(p);
}

static void parser_feed(void *p, const uint8_t *data, size_t len, uint64_t index)
{
    ek_ptm_feed(p, data, len, index);
}

static void parser_tail(void *p, const uint8_t *tail, size_t n)
{
    ek_ptm_feed_tail(p, tail, n);
}

static void parser_eot(void *p)
{
    ek_ptm_eot(p);
}

static uint64_t parser_index(const void *p)
{
    const ek_ptm_parser *q = p;
    return q->in_index + q->in_used;
}

/* The generic view: unsynchronised bytes after the first report are seen by a packet monitor
 * only (REPEAT); I-Sync, context ID and VMID packets and exceptions change the context. */
static int parser_next(void *p, ek_decode_packet *out)
{
    const ek_ptm_packet *k;
    if (ek_ptm_next(p, &k) <= 0) return 0;
    uint32_t fl = 0;
    if (k->type == EK_PTM_NOTSYNC) fl |= EK_DPKT_NOTSYNC;
    if (k->flags & EK_PTM_PF_NOTSYNC_MORE) fl |= EK_DPKT_REPEAT;
    if ((k->flags & EK_PTM_PF_ERROR) && k->type != EK_PTM_NOTSYNC) {
        fl |= EK_DPKT_ERROR;
        if (k->type == EK_PTM_INCOMPLETE_EOT) fl |= EK_DPKT_TRUNCATED;
    }
    if (k->type == EK_PTM_TIMESTAMP) {
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
    return &((const ek_ptm_parser *)p)->cfg;
}

static const char *packet_name(const void *pkt, int what)
{
    const ek_ptm_packet *k = pkt;
    if (!what) return ek_ptm_type_name(k->type);
    if (k->type != EK_PTM_BAD_SEQUENCE && k->type != EK_PTM_INCOMPLETE_EOT) return NULL;
    return ek_ptm_type_name(k->err_type);
}

/* ---- the flow decoder -------------------------------------------------------------------- */

typedef struct ptm_flow {
    ek_ptm_decoder *dec;
    ek_flow_stats st;
} ptm_flow;

static int flow_new(const ek_flow_config *cfg, void **out)
{
    *out = NULL;
    ek_ptm_config pc;
    int rc = ek_ptm_config_from_source(&pc, cfg->source);
    if (rc) return rc;
    ptm_flow *f = calloc(1, sizeof *f);
    if (!f) return EK_ERR_NOMEM;
    rc = ek_ptm_decoder_new(&pc, &cfg->mem, &f->dec);
    if (rc) {
        free(f);
        return rc;
    }
    *out = f;
    return 0;
}

static void flow_free(void *fp)
{
    ptm_flow *f = fp;
    if (!f) return;
    ek_ptm_decoder_free(f->dec);
    free(f);
}

static int flow_packet(void *fp, const void *pkt, const ek_elem **elems, size_t *n)
{
    ptm_flow *f = fp;
    const ek_ptm_packet *k = pkt;
    ek_ptm_decoder_clear(f->dec);
    int rc = 0;
    /* (the decoder, a packet sink, sees the first report of unsynchronised bytes only) */
    if (!(k->flags & EK_PTM_PF_NOTSYNC_MORE)) rc = ek_ptm_decode(f->dec, k);
    *elems = ek_ptm_decoder_elems(f->dec, n);
    decode_count_step(&f->st, *elems, *n);
    return rc;
}

static int flow_end(void *fp, const ek_elem **elems, size_t *n)
{
    ptm_flow *f = fp;
    ek_ptm_decoder_clear(f->dec);
    int rc = ek_ptm_decode_eot(f->dec);
    *elems = ek_ptm_decoder_elems(f->dec, n);
    decode_count_step(&f->st, *elems, *n);
    f->st.packets--; /* (not a packet) */
    return rc;
}

static void flow_reset(void *fp)
{
    ptm_flow *f = fp;
    ek_ptm_decoder_clear(f->dec);
    ek_ptm_decoder_reset(f->dec);
}

static const ek_elem *flow_elems(const void *fp, size_t *n)
{
    const ptm_flow *f = fp;
    return ek_ptm_decoder_elems(f->dec, n);
}

static void flow_elems_clear(void *fp)
{
    ptm_flow *f = fp;
    ek_ptm_decoder_clear(f->dec);
}

static void flow_stats(const void *fp, ek_flow_stats *out)
{
    const ptm_flow *f = fp;
    *out = f->st;
}

const ek_decode_proto ek_decode_proto_ptm = {
    .size = sizeof(ek_decode_proto),
    .name = "PTM",
    .kind = "ptm",
    .sync_name = "A-Sync",
    .protocols = 1u << EK_PROTO_PTM,
    .parser_size = sizeof(ek_ptm_parser),
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
    .parser_tail = parser_tail,
    .parser_index = parser_index,
};
