/* The packet formatters of every protocol the decode tree knows (etmkit/listing.h). */
#include "etmkit/flow.h"
#include "etmkit/listing.h"
#include "output/list_int.h"

static const char *etm4_printer(ek_protocol p)
{
    return p == EK_PROTO_ETE ? "ETE" : "ETMV4I";
}

static void etm4_ocsd(ek_sbuf *out, const void *pkt, unsigned id, int with_raw, const void *cfg)
{
    ek_list_etm4_ocsd(out, pkt, id, with_raw, cfg);
}

static void etm4_ocsd_pre(ek_sbuf *out, const void *pkt, const void *cfg)
{
    ek_list_etm4_ocsd_pre(out, pkt, cfg);
}

static void etm4_text(ek_sbuf *out, const void *pkt, unsigned id, const void *cfg)
{
    ek_list_etm4_text(out, pkt, id, cfg);
}

static void etm4_json(ek_sbuf *out, const void *pkt, unsigned id, const void *cfg)
{
    ek_list_etm4_json(out, pkt, id, cfg);
}

static const ek_list_proto etm4 = {
    .protocols = (1u << EK_PROTO_ETMV4) | (1u << EK_PROTO_ETMV4M) | (1u << EK_PROTO_ETE),
    .printer_name = etm4_printer,
    .ocsd = etm4_ocsd,
    .ocsd_pre = etm4_ocsd_pre,
    .text = etm4_text,
    .json = etm4_json,
    .diag_ocsd = ek_flow_diag_ocsd,
};

/* by protocol (every packet line looks here: decode_list.c reads it in line) */
const ek_list_proto *const ek_list_protos_by_protocol[32] = {
    [EK_PROTO_ETMV4] = &etm4,
    [EK_PROTO_ETMV4M] = &etm4,
    [EK_PROTO_ETE] = &etm4,
};

const ek_list_proto *ek_list_proto_find(ek_protocol p)
{
    return (unsigned)p < 32 ? ek_list_protos_by_protocol[p] : NULL;
}
