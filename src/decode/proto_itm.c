/* ITM as a protocol of the decode tree: the packet parser and the element decoder of src/itm
 * (packets -> ITMTRACE elements) behind the tree's operations table. With
 * EK_DECODE_COMPAT_OCSD the decoder stops the data path at a bad or reserved packet, as
 * OpenCSD 1.8.0's answers it with a fatal response. */
#include <stdlib.h>
#include <string.h>

#include "decode/decode_int.h"
#include "etmkit/etmkit.h"
#include "etmkit/itm.h"

static int parser_init(void *p, const ek_source_config *src, uint32_t compat)
{
    (void)compat;
    ek_itm_parser_init(p, src->trace_id);
    return 0;
}

static void parser_reset(void *p)
{
    ek_itm_parser_reset(p);
}

static void parser_feed(void *p, const uint8_t *data, size_t len, uint64_t index)
{
    ek_itm_feed(p, data, len, index);
}

static void parser_eot(void *p)
{
    ek_itm_eot(p);
}

static uint64_t parser_index(const void *p)
{
    const ek_itm_parser *q = p;
    return q->in_index + q->in_used;
}

/* The generic view: a packet the decoder does not see (EK_ITM_PF_DECODE clear: further lines
 * of an unsynchronised run) is one a packet sink does not see either (REPEAT). */
static int parser_next(void *p, ek_decode_packet *out)
{
    const ek_itm_packet *k;
    if (ek_itm_next(p, &k) <= 0) return 0;
    uint32_t fl = 0;
    if (k->type == EK_ITM_PKT_NOTSYNC) fl |= EK_DPKT_NOTSYNC;
    if (!(k->flags & EK_ITM_PF_DECODE)) fl |= EK_DPKT_REPEAT;
    if ((k->flags & EK_ITM_PF_ERROR) && k->type != EK_ITM_PKT_NOTSYNC) {
        fl |= EK_DPKT_ERROR;
        if (k->type == EK_ITM_PKT_INCOMPLETE_EOT) fl |= EK_DPKT_TRUNCATED;
    }
    out->pkt = k;
    out->index = k->index;
    out->raw = k->raw;
    out->size = k->raw_len;
    out->flags = fl;
    return 1;
}

static const char *packet_name(const void *pkt, int what)
{
    const ek_itm_packet *k = pkt;
    if (!what) return ek_itm_type_name(k->type);
    if (k->type != EK_ITM_PKT_BAD_SEQUENCE && k->type != EK_ITM_PKT_INCOMPLETE_EOT) return NULL;
    return ek_itm_type_name(k->err_type);
}

/* ---- the element decoder ----------------------------------------------------------------- */

typedef struct itm_flow {
    ek_itm_decoder dec;
    uint64_t last_index; /* of the last packet decoded: the end of trace's */
    ek_elem e[2];
    size_t n;
    ek_flow_stats st;
} itm_flow;

static int flow_new(const ek_flow_config *cfg, void **out)
{
    itm_flow *f = calloc(1, sizeof *f);
    *out = f;
    if (!f) return EK_ERR_NOMEM;
    ek_itm_decoder_init(&f->dec, cfg->source->trace_id, cfg->source->regs.tcr);
    if (cfg->compat & EK_DECODE_COMPAT_OCSD) f->dec.compat = EK_ITM_OCSD_FATAL;
    return 0;
}

static void flow_free(void *fp)
{
    free(fp);
}

static int flow_packet(void *fp, const void *pkt, const ek_elem **elems, size_t *n)
{
    itm_flow *f = fp;
    const ek_itm_packet *k = pkt;
    f->n = 0;
    *elems = f->e;
    *n = 0;
    if (!(k->flags & EK_ITM_PF_DECODE)) return 0;
    f->last_index = k->index;
    const int r = ek_itm_decode(&f->dec, k, f->e);
    f->n = r > 0 ? (size_t)r : 0;
    *n = f->n;
    decode_count_step(&f->st, f->e, f->n);
    /* (OpenCSD: OCSD_RESP_FATAL_INVALID_DATA) */
    return r < 0 && (f->dec.compat & EK_ITM_OCSD_FATAL) ? EK_DECODE_STOP : 0;
}

static int flow_end(void *fp, const ek_elem **elems, size_t *n)
{
    itm_flow *f = fp;
    ek_itm_decode_eot(&f->dec, f->last_index, &f->e[0]);
    f->n = 1;
    *elems = f->e;
    *n = 1;
    f->st.elems[EK_ELEM_EO_TRACE]++;
    return 0;
}

static void flow_reset(void *fp)
{
    itm_flow *f = fp;
    f->n = 0;
    ek_itm_decoder_reset(&f->dec);
}

static const ek_elem *flow_elems(const void *fp, size_t *n)
{
    const itm_flow *f = fp;
    *n = f->n;
    return f->e;
}

static void flow_elems_clear(void *fp)
{
    ((itm_flow *)fp)->n = 0;
}

static void flow_stats(const void *fp, ek_flow_stats *out)
{
    *out = ((const itm_flow *)fp)->st;
}

const ek_decode_proto ek_decode_proto_itm = {
    .size = sizeof(ek_decode_proto),
    .name = "ITM",
    .kind = "itm",
    .sync_name = "ASYNC",
    .protocols = 1u << EK_PROTO_ITM,
    .parser_size = sizeof(ek_itm_parser),
    .parser_init = parser_init,
    .parser_reset = parser_reset,
    .parser_feed = parser_feed,
    .parser_eot = parser_eot,
    .parser_next = parser_next,
    .packet_name = packet_name,
    .flow_new = flow_new,
    .flow_free = flow_free,
    .flow_packet = flow_packet,
    .flow_end = flow_end,
    .flow_reset = flow_reset,
    .flow_elems = flow_elems,
    .flow_elems_clear = flow_elems_clear,
    .flow_stats = flow_stats,
    .parser_index = parser_index,
};
