/* ETMv3 as a protocol of the decode tree: the packet parser and the instruction-flow decoder of
 * src/etm3 in the shaped adapter (proto_shape.h). With EK_DECODE_COMPAT_OCSD both run with
 * OpenCSD 1.8.0's behaviours (EK_ETM3_OCSD_ALL): the decoder then stops the data path where
 * OpenCSD's answers with a fatal response, after logging the error OpenCSD logs (a diagnostic
 * "etm3.ocsd-*", which the listing renders as OpenCSD's log line). */
#include <string.h>

#include "decode/proto_shape.h"
#include "etmkit/etm3.h"

static const shape_vocab etm3_vocab = {
    .notsync = EK_ETM3_NOTSYNC,
    .incomplete_eot = EK_ETM3_INCOMPLETE_EOT,
    .bad_sequence = EK_ETM3_BAD_SEQUENCE,
    .pf_error = EK_ETM3_PF_ERROR,
    .type_name = ek_etm3_type_name,
};

#define ETM3_FLAGS(k)              ((k)->flags)
#define ETM3_TIMESTAMP(k, fl, out) SHAPE_TIMESTAMP_IF((k)->type == EK_ETM3_TIMESTAMP, k, fl, out)
#define ETM3_SKIP(k)               0

static int etm3_config(ek_etm3_config *cfg, const ek_source_config *src, uint32_t compat)
{
    int rc = ek_etm3_config_from_source(cfg, src);
    if (rc) return rc;
    cfg->compat = (compat & EK_DECODE_COMPAT_OCSD) ? EK_ETM3_OCSD_ALL : 0;
    return 0;
}

static int etm3_parser_init(void *p, const ek_source_config *src, uint32_t compat)
{
    ek_etm3_config cfg;
    int rc = etm3_config(&cfg, src, compat);
    if (rc) return rc;
    ek_etm3_parser_init(p, &cfg);
    return 0;
}

static const void *etm3_parser_config(const void *p)
{
    return &((const ek_etm3_parser *)p)->cfg;
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

/* A failed step: OpenCSD drops what it held back and logs the error; the data path stops. */
static int etm3_stop(shape_flow *f, int rc)
{
    uint64_t at = 0;
    const unsigned why = ek_etm3_decoder_fatal(f->dec, &at);
    if (why == EK_ETM3_FATAL_NONE || why >= sizeof fatal_kind / sizeof fatal_kind[0]) return 0;
    ek_etm3_decoder_clear(f->dec);
    ek_diag_emit(&f->diag, EK_SEV_WARN, fatal_kind[why], rc, f->file, -1, (int64_t)at, f->trace_id,
                 "%s", fatal_msg[why]);
    return 1;
}

/* OpenCSD logs the errors of its fatal stops (the listing prints them in line). */
static int etm3_flow_diag_logged(const ek_diag_event *ev)
{
    return ev->kind && !strncmp(ev->kind, "etm3.ocsd-", 10);
}

SHAPE_PARSER(etm3, etm3_vocab, ETM3_FLAGS, size, ETM3_TIMESTAMP, SHAPE_CONTEXT)
SHAPE_PARSER_PLAIN(etm3)
SHAPE_FLOW_DECODER(etm3, etm3_config, ETM3_SKIP, etm3_stop)

const ek_decode_proto ek_decode_proto_etm3 = {
    SHAPE_OPS(etm3),
    .name = "ETMv3",
    .kind = "etm3",
    .sync_name = "A-Sync",
    .protocols = 1u << EK_PROTO_ETMV3,
    .parser_size = sizeof(ek_etm3_parser),
    .parser_init = etm3_parser_init,
    .parser_config = etm3_parser_config,
    .flow_diag_logged = etm3_flow_diag_logged,
};
