/* ETMv4 / ETE as a protocol of the decode tree: the packet parser (src/etm4) and the
 * instruction-flow decoder (src/flow) behind the tree's operations table. */
#include <string.h>

#include "decode/decode_int.h"
#include "decode/proto_etm4.h"
#include "etmkit/etm4.h"
#include "etmkit/etmkit.h"
#include "etmkit/flow.h"

static int parser_init(void *p, const ek_source_config *src, uint32_t compat)
{
    (void)compat; /* (the parser follows OpenCSD where the architecture leaves room) */
    ek_etm4_config cfg;
    int rc = ek_etm4_config_from_source(&cfg, src);
    if (rc) return rc;
    ek_etm4_parser_init(p, &cfg);
    return 0;
}

static void parser_reset(void *p)
{
    ek_etm4_parser_reset(p);
}

static void parser_feed(void *p, const uint8_t *data, size_t len, uint64_t index)
{
    ek_etm4_feed(p, data, len, index);
}

static void parser_eot(void *p)
{
    ek_etm4_eot(p);
}

static int parser_next(void *p, ek_decode_packet *out)
{
    return decode_etm4_next(p, out);
}

static int pump(void *p, void *f, const ek_decode_pump *pp, const ek_elem **elems, size_t *n)
{
    const ek_etm4_packet *k;
    size_t have = 0; /* (batch: the elements kept from earlier packets of this call) */
    while (ek_etm4_next(p, &k) > 0) {
        const uint32_t fl = etm4_flags_of(k);
        (*pp->packets)++;
        *pp->packet_bytes += k->size;
        if (fl & EK_DPKT_ERROR) (*pp->bad_packets)++;
        if (pp->hook && ((fl & pp->hook_flags) || *pp->watch)) {
            ek_decode_packet gp;
            etm4_view(k, fl, &gp);
            pp->hook(pp->ctx, pp->trace_id, &gp);
        }
        int rc;
        if (!have) {
            rc = ek_flow_step(f, k, elems, n);
        } else {
            rc = ek_flow_packet(f, k);
            *elems = ek_flow_elems(f, n);
        }
        if (rc == EK_ERR_NOMEM) return rc;
        if (*pp->stop) return 1; /* (the tree gives this step's elements to the hook) */
        if (pp->elems_hook && *n > have)
            pp->elems_hook(pp->elems_ctx, pp->trace_id, *elems + have, *n - have);
        if (*n > pp->batch) return 1;
        have = *n;
    }
    if (have) return 1;
    return 0;
}

static const void *parser_config(const void *p)
{
    return &((const ek_etm4_parser *)p)->cfg;
}

static const char *packet_name(const void *pkt, int what)
{
    const ek_etm4_packet *k = pkt;
    if (!what) return ek_etm4_type_name(k->type);
    /* what it was being decoded as (a reserved header has no such thing) */
    if (!k->err_type || k->err_type == EK_ETM4_RESERVED) return NULL;
    return ek_etm4_type_name(k->err_type);
}

/* The decoder reads the trace ID from TRCTRACEIDR: the one the tree bound the source to. */
static int flow_new(const ek_flow_config *cfg, void **out)
{
    ek_source_config src = *cfg->source;
    src.regs.etm4.traceidr = (src.regs.etm4.traceidr & ~0x7fu) | (src.trace_id & 0x7fu);
    ek_flow_config c = *cfg;
    c.source = &src;
    ek_flow *f = NULL;
    int rc = ek_flow_new(&c, &f);
    *out = f;
    return rc;
}

static void flow_free(void *f)
{
    ek_flow_free(f);
}

static int flow_packet(void *f, const void *pkt, const ek_elem **elems, size_t *n)
{
    return ek_flow_step(f, pkt, elems, n);
}

static int flow_end(void *f, const ek_elem **elems, size_t *n)
{
    return ek_flow_end_step(f, elems, n);
}

static void flow_reset(void *f)
{
    ek_flow_elems_clear(f);
    ek_flow_reset(f);
}

static const ek_elem *flow_elems(const void *f, size_t *n)
{
    return ek_flow_elems(f, n);
}

static void flow_elems_clear(void *f)
{
    ek_flow_elems_clear(f);
}

static void flow_stats(const void *f, ek_flow_stats *out)
{
    ek_flow_get_stats(f, out);
}

const ek_decode_proto ek_decode_proto_etm4 = {
    .size = sizeof(ek_decode_proto),
    .name = "ETMv4/ETE",
    .kind = "etm4",
    .sync_name = "A-Sync",
    .protocols = (1u << EK_PROTO_ETMV4) | (1u << EK_PROTO_ETMV4M) | (1u << EK_PROTO_ETE),
    .parser_size = sizeof(ek_etm4_parser),
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
    .flow_diag_logged = ek_flow_diag_logged,
    .pump = pump,
};
