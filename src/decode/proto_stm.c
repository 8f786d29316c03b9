/* STM as a protocol of the decode tree: the packet parser and the element decoder of src/stm
 * (packets -> SWTRACE elements) in the shaped adapter (proto_shape.h). With
 * EK_DECODE_COMPAT_OCSD the decoder stops the data path at a bad or reserved packet, as
 * OpenCSD 1.8.0's answers it with a fatal response, and the parser keeps the bytes OpenCSD
 * lists past the end of a block (ek_stm_list_ctx, the listing's record). */
#include <string.h>

#include "decode/proto_shape.h"
#include "etmkit/stm.h"

/* (STM packets have no flags: their types tell the errors; a packet says if it has a time
 * stamp) */
static const shape_vocab stm_vocab = {
    .notsync = EK_STM_NOTSYNC,
    .incomplete_eot = EK_STM_INCOMPLETE_EOT,
    .bad_sequence = EK_STM_BAD_SEQUENCE,
    .error_types =
        (1u << EK_STM_INCOMPLETE_EOT) | (1u << EK_STM_BAD_SEQUENCE) | (1u << EK_STM_RESERVED),
    .type_name = ek_stm_type_name,
};

#define STM_FLAGS(k)              0u
#define STM_TIMESTAMP(k, fl, out) SHAPE_TIMESTAMP_IF((k)->has_ts, k, fl, out)
#define STM_SKIP(k)               0

/* The parser state: the parser first (the shape reads it there), then the listing's record
 * of the bytes past the block. */
typedef struct stm_parser {
    ek_stm_parser p;
    ek_stm_list_ctx lc; /* (lc.tail: tail) */
    uint8_t tail[32];
} stm_parser;

static int stm_parser_init(void *pp, const ek_source_config *src, uint32_t compat)
{
    stm_parser *s = pp;
    memset(s, 0, sizeof *s);
    ek_stm_parser_init(&s->p, src->trace_id);
    if (compat & EK_DECODE_COMPAT_OCSD) ek_stm_parser_set_compat(&s->p, EK_STM_OCSD_SYNC_INDEX);
    s->lc.tail = s->tail;
    return 0;
}

static void stm_parser_reset(void *pp)
{
    stm_parser *s = pp;
    ek_stm_parser_reset(&s->p);
    s->lc.ntail = 0;
}

static void stm_parser_feed(void *pp, const uint8_t *data, size_t len, uint64_t index)
{
    stm_parser *s = pp;
    ek_stm_feed(&s->p, data, len, index);
    s->lc.ntail = 0;
}

static void stm_parser_tail(void *pp, const uint8_t *tail, size_t n)
{
    stm_parser *s = pp;
    if (n > sizeof s->tail) n = sizeof s->tail;
    if (n) memcpy(s->tail, tail, n);
    s->lc.ntail = n;
}

static void stm_parser_eot(void *pp)
{
    stm_parser *s = pp;
    s->lc.ntail = 0; /* (the end of trace reads no block) */
    ek_stm_eot(&s->p);
}

static const void *stm_parser_config(const void *pp)
{
    return &((const stm_parser *)pp)->lc;
}

static void stm_decoder_init(ek_stm_decoder *d, const ek_flow_config *cfg)
{
    ek_stm_decoder_init(d, cfg->source->trace_id);
}

SHAPE_PARSER(stm, stm_vocab, STM_FLAGS, raw_len, STM_TIMESTAMP, SHAPE_NO_CONTEXT)
SHAPE_FLOW_ELEMENTS(stm, stm_decoder_init, STM_SKIP, EK_STM_OCSD_FATAL)

const ek_decode_proto ek_decode_proto_stm = {
    SHAPE_OPS(stm),
    .name = "STM",
    .kind = "stm",
    .sync_name = "ASYNC",
    .protocols = 1u << EK_PROTO_STM,
    .parser_size = sizeof(stm_parser),
    .parser_init = stm_parser_init,
    .parser_config = stm_parser_config,
    .parser_tail = stm_parser_tail,
};
