/* The ETMv4 / ETE packet's generic view (proto_etm4.c), in line for the tree, which steps the
 * built-in protocol's parser without an indirect call and a wrapper per packet: they cost
 * `etmkit dump --format=ocsd` (packets only) about 8% of its CPU time. */
#ifndef ETMKIT_DECODE_PROTO_ETM4_H
#define ETMKIT_DECODE_PROTO_ETM4_H

#include "etmkit/decode.h"
#include "etmkit/etm4.h"

/* The generic flags each packet type always has. */
static const uint8_t etm4_type_flags[256] = {
    [EK_ETM4_NOTSYNC] = EK_DPKT_NOTSYNC,
    [EK_ETM4_TIMESTAMP] = EK_DPKT_TIMESTAMP,
};

/* The generic flags of a packet. */
static inline uint32_t etm4_flags_of(const ek_etm4_packet *k)
{
    uint32_t fl = etm4_type_flags[k->type];
    const unsigned pf = k->flags;
    if (pf & (EK_ETM4_PF_ERROR | EK_ETM4_PF_UNSYNCED | EK_ETM4_PF_NOTSYNC_MORE)) {
        if (pf & EK_ETM4_PF_UNSYNCED) fl |= EK_DPKT_UNSYNCED;
        if (pf & EK_ETM4_PF_NOTSYNC_MORE) fl |= EK_DPKT_REPEAT;
        if ((pf & EK_ETM4_PF_ERROR) && !(fl & (EK_DPKT_NOTSYNC | EK_DPKT_UNSYNCED))) {
            fl |= EK_DPKT_ERROR;
            if (k->type == EK_ETM4_INCOMPLETE_EOT) fl |= EK_DPKT_TRUNCATED;
        }
    }
    if (k->ctx.updated) {
        fl |= EK_DPKT_CONTEXT;
        if (k->ctx.cid_updated || k->ctx.valid) fl |= EK_DPKT_CID_VALID;
        if (k->ctx.vmid_updated || k->ctx.valid) fl |= EK_DPKT_VMID_VALID;
    }
    return fl;
}

/* The generic view of a packet with those flags. */
static inline void etm4_view(const ek_etm4_packet *k, uint32_t fl, ek_decode_packet *out)
{
    if (fl & EK_DPKT_TIMESTAMP) out->timestamp = k->timestamp;
    if (fl & EK_DPKT_CONTEXT) {
        out->context_id = k->ctx.cid;
        out->vmid = k->ctx.vmid;
    }
    out->pkt = k;
    out->index = k->index;
    out->raw = k->raw;
    out->size = k->size;
    out->flags = fl;
}

/* ek_decode_proto_etm4.parser_next */
static inline int decode_etm4_next(void *p, ek_decode_packet *out)
{
    const ek_etm4_packet *k;
    if (ek_etm4_next(p, &k) <= 0) return 0;
    etm4_view(k, etm4_flags_of(k), out);
    return 1;
}

#endif
