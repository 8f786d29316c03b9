/* ITM as a protocol of the decode tree: the packet parser and the element decoder of src/itm
 * (packets -> ITMTRACE elements) in the shaped adapter (proto_shape.h). A packet the decoder
 * does not see (EK_ITM_PF_DECODE clear: further lines of an unsynchronised run) is one a packet
 * sink does not see either (REPEAT). With EK_DECODE_COMPAT_OCSD the decoder stops the data
 * path at a bad or reserved packet, as OpenCSD 1.8.0's answers it with a fatal response. The
 * source's EK_SRC_ITM_ASSUME_SYNC starts both as if after an A-Sync (EK_ITM_ASSUME_SYNC). */
#include "decode/proto_shape.h"
#include "etmkit/itm.h"

static const shape_vocab itm_vocab = {
    .notsync = EK_ITM_PKT_NOTSYNC,
    .incomplete_eot = EK_ITM_PKT_INCOMPLETE_EOT,
    .bad_sequence = EK_ITM_PKT_BAD_SEQUENCE,
    .pf_error = EK_ITM_PF_ERROR,
    .pf_decode = EK_ITM_PF_DECODE,
    .type_name = ek_itm_type_name,
};

#define ITM_FLAGS(k) ((k)->flags)
#define ITM_SKIP(k)  (!((k)->flags & EK_ITM_PF_DECODE))

/* The source's EK_SRC_ITM_ASSUME_SYNC: parser and decoder start as if after an A-Sync. */
static unsigned itm_flags(const ek_source_config *src)
{
    return (src->flags & EK_SRC_ITM_ASSUME_SYNC) ? EK_ITM_ASSUME_SYNC : 0;
}

static int itm_parser_init(void *p, const ek_source_config *src, uint32_t compat)
{
    (void)compat;
    ek_itm_parser_init_flags(p, src->trace_id, itm_flags(src));
    return 0;
}

static void itm_decoder_init(ek_itm_decoder *d, const ek_flow_config *cfg)
{
    ek_itm_decoder_init_flags(d, cfg->source->trace_id, cfg->source->regs.tcr,
                              itm_flags(cfg->source));
}

SHAPE_PARSER(itm, itm_vocab, ITM_FLAGS, raw_len, SHAPE_NO_TIMESTAMP, SHAPE_NO_CONTEXT)
SHAPE_PARSER_PLAIN(itm)
SHAPE_FLOW_ELEMENTS(itm, itm_decoder_init, ITM_SKIP, EK_ITM_OCSD_FATAL)

const ek_decode_proto ek_decode_proto_itm = {
    SHAPE_OPS(itm),
    .name = "ITM",
    .kind = "itm",
    .sync_name = "ASYNC",
    .protocols = 1u << EK_PROTO_ITM,
    .parser_size = sizeof(ek_itm_parser),
    .parser_init = itm_parser_init,
};
