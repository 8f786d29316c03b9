/* STM as a protocol of the decode tree: the packet parser and the element decoder of src/stm
 * (packets -> SWTRACE elements) behind the tree's operations table. With
 * EK_DECODE_COMPAT_OCSD the decoder stops the data path at a bad or reserved packet, as
 * OpenCSD 1.8.0's answers it with a fatal response, and the parser keeps the bytes OpenCSD
 * lists past the end of a block (ek_stm_list_ctx, the listing's record). */
#include <stdlib.h>
#include <string.h>

#include "decode/decode_int.h"
#include "etmkit/etmkit.h"
#include "etmkit/stm.h"

typedef struct stm_parser {
    ek_stm_parser p;
    ek_stm_list_ctx lc; /* (lc.tail: tail) */
    uint8_t tail[32];
} stm_parser;

static int parser_init(void *pp, const ek_source_config *src, uint32_t compat)
{
    stm_parser *s = pp;
    memset(s, 0, sizeof *s);
    ek_stm_parser_init(&s->p, src->trace_id);
    if (compat & EK_DECODE_COMPAT_OCSD) ek_stm_parser_set_compat(&s->p, EK_STM_OCSD_SYNC_INDEX);
    s->lc.tail = s->tail;
    return 0;
}

static void parser_reset(void *pp)
{
    stm_parser *s = pp;
    ek_stm_parser_reset(&s->p);
    s->lc.ntail = 0;
}

static void parser_feed(void *pp, const uint8_t *data, size_t len, uint64_t index)
{
    stm_parser *s = pp;
    ek_stm_feed(&s->p, data, len, index);
    s->lc.ntail = 0;
}

static void parser_tail(void *pp, const uint8_t *tail, size_t n)
{
    stm_parser *s = pp;
    if (n > sizeof s->tail) n = sizeof s->tail;
    if (n) memcpy(s->tail, tail, n);
    s->lc.ntail = n;
}

static void parser_eot(void *pp)
{
    stm_parser *s = pp;
    s->lc.ntail = 0; /* (the end of trace reads no block) */
    ek_stm_eot(&s->p);
}

static uint64_t parser_index(const void *pp)
{
    const stm_parser *s = pp;
    return s->p.in_index + s->p.in_used;
}

static int parser_next(void *pp, ek_decode_packet *out)
{
    stm_parser *s = pp;
    const ek_stm_packet *k;
    if (ek_stm_next(&s->p, &k) <= 0) return 0;
    uint32_t fl = 0;
    switch (k->type) {
    case EK_STM_NOTSYNC: fl = EK_DPKT_NOTSYNC; break;
    case EK_STM_INCOMPLETE_EOT: fl = EK_DPKT_ERROR | EK_DPKT_TRUNCATED; break;
    case EK_STM_BAD_SEQUENCE:
    case EK_STM_RESERVED: fl = EK_DPKT_ERROR; break;
    default: break;
    }
    if (k->has_ts) {
        fl |= EK_DPKT_TIMESTAMP;
        out->timestamp = k->timestamp;
    }
    out->pkt = k;
    out->index = k->index;
    out->raw = k->raw;
    out->size = k->raw_len;
    out->flags = fl;
    return 1;
}

static const void *parser_config(const void *pp)
{
    return &((const stm_parser *)pp)->lc;
}

static const char *packet_name(const void *pkt, int what)
{
    const ek_stm_packet *k = pkt;
    if (!what) return ek_stm_type_name(k->type);
    if (k->type != EK_STM_BAD_SEQUENCE && k->type != EK_STM_INCOMPLETE_EOT) return NULL;
    return ek_stm_type_name(k->err_type);
}

/* ---- the element decoder ----------------------------------------------------------------- */

typedef struct stm_flow {
    ek_stm_decoder dec;
    uint64_t last_index; /* of the last packet: the end of trace's */
    ek_elem e[2];
    size_t n;
    ek_flow_stats st;
} stm_flow;

static int flow_new(const ek_flow_config *cfg, void **out)
{
    stm_flow *f = calloc(1, sizeof *f);
    *out = f;
    if (!f) return EK_ERR_NOMEM;
    ek_stm_decoder_init(&f->dec, cfg->source->trace_id);
    if (cfg->compat & EK_DECODE_COMPAT_OCSD) f->dec.compat = EK_STM_OCSD_FATAL;
    return 0;
}

static void flow_free(void *fp)
{
    free(fp);
}

static int flow_packet(void *fp, const void *pkt, const ek_elem **elems, size_t *n)
{
    stm_flow *f = fp;
    const ek_stm_packet *k = pkt;
    f->last_index = k->index;
    const int r = ek_stm_decode(&f->dec, k, f->e);
    f->n = r > 0 ? (size_t)r : 0;
    *elems = f->e;
    *n = f->n;
    decode_count_step(&f->st, f->e, f->n);
    /* (OpenCSD: OCSD_RESP_FATAL_INVALID_DATA) */
    return r < 0 && (f->dec.compat & EK_STM_OCSD_FATAL) ? EK_DECODE_STOP : 0;
}

static int flow_end(void *fp, const ek_elem **elems, size_t *n)
{
    stm_flow *f = fp;
    ek_stm_decode_eot(&f->dec, f->last_index, &f->e[0]);
    f->n = 1;
    *elems = f->e;
    *n = 1;
    f->st.elems[EK_ELEM_EO_TRACE]++;
    return 0;
}

static void flow_reset(void *fp)
{
    stm_flow *f = fp;
    f->n = 0;
    ek_stm_decoder_reset(&f->dec);
}

static const ek_elem *flow_elems(const void *fp, size_t *n)
{
    const stm_flow *f = fp;
    *n = f->n;
    return f->e;
}

static void flow_elems_clear(void *fp)
{
    ((stm_flow *)fp)->n = 0;
}

static void flow_stats(const void *fp, ek_flow_stats *out)
{
    *out = ((const stm_flow *)fp)->st;
}

const ek_decode_proto ek_decode_proto_stm = {
    .size = sizeof(ek_decode_proto),
    .name = "STM",
    .kind = "stm",
    .sync_name = "ASYNC",
    .protocols = 1u << EK_PROTO_STM,
    .parser_size = sizeof(stm_parser),
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
