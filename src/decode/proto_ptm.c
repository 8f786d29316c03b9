/* PTM (PFT 1.0 / 1.1) as a protocol of the decode tree: the packet parser and the
 * instruction-flow decoder of src/ptm in the shaped adapter (proto_shape.h). The parser
 * reports unsynchronised bytes once to the decoder (a packet sink): further reports are seen
 * by a packet monitor only (REPEAT); I-Sync, context ID and VMID packets and exceptions change
 * the context. */
#include "decode/proto_shape.h"
#include "etmkit/ptm.h"

static const shape_vocab ptm_vocab = {
    .notsync = EK_PTM_NOTSYNC,
    .incomplete_eot = EK_PTM_INCOMPLETE_EOT,
    .bad_sequence = EK_PTM_BAD_SEQUENCE,
    .pf_error = EK_PTM_PF_ERROR,
    .pf_repeat = EK_PTM_PF_NOTSYNC_MORE,
    .type_name = ek_ptm_type_name,
};

#define PTM_FLAGS(k)              ((k)->flags)
#define PTM_TIMESTAMP(k, fl, out) SHAPE_TIMESTAMP_IF((k)->type == EK_PTM_TIMESTAMP, k, fl, out)
/* (the decoder, a packet sink, sees the first report of unsynchronised bytes only) */
#define PTM_SKIP(k) ((k)->flags & EK_PTM_PF_NOTSYNC_MORE)

static int ptm_parser_init(void *p, const ek_source_config *src, uint32_t compat)
{
    ek_ptm_config cfg;
    int rc = ek_ptm_config_from_source(&cfg, src);
    if (rc) return rc;
    if (compat & EK_DECODE_COMPAT_OCSD) cfg.compat = EK_PTM_OCSD_UNSYNC;
    ek_ptm_parser_init(p, &cfg);
    return 0;
}

/* (the decoder has no OpenCSD behaviours to turn on) */
static int ptm_decoder_config(ek_ptm_config *cfg, const ek_source_config *src, uint32_t compat)
{
    (void)compat;
    return ek_ptm_config_from_source(cfg, src);
}

static void ptm_parser_tail(void *p, const uint8_t *tail, size_t n)
{
    ek_ptm_feed_tail(p, tail, n);
}

static const void *ptm_parser_config(const void *p)
{
    return &((const ek_ptm_parser *)p)->cfg;
}

SHAPE_PARSER(ptm, ptm_vocab, PTM_FLAGS, size, PTM_TIMESTAMP, SHAPE_CONTEXT)
SHAPE_PARSER_PLAIN(ptm)
SHAPE_FLOW_DECODER(ptm, ptm_decoder_config, PTM_SKIP, shape_never_stops)

const ek_decode_proto ek_decode_proto_ptm = {
    SHAPE_OPS(ptm),
    .name = "PTM",
    .kind = "ptm",
    .sync_name = "A-Sync",
    .protocols = 1u << EK_PROTO_PTM,
    .parser_size = sizeof(ek_ptm_parser),
    .parser_init = ptm_parser_init,
    .parser_config = ptm_parser_config,
    .parser_tail = ptm_parser_tail,
};
