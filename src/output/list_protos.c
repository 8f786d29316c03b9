/* The packet formatters of every protocol the decode tree knows (etmkit/listing.h). */
#include <string.h>

#include "etmkit/etm3.h"
#include "etmkit/flow.h"
#include "etmkit/itm.h"
#include "etmkit/listing.h"
#include "etmkit/ptm.h"
#include "etmkit/stm.h"
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

/* ---- PTM, ETMv3, STM, ITM ------------------------------------------------------------------ */

/* Their text and JSON lines say what the lister's line says: index, ID, the packet's name and
 * description, its bytes. */
static void v7_text(ek_sbuf *out, uint64_t index, unsigned id, const ek_sbuf *line,
                    const uint8_t *raw, size_t n)
{
    /* the description: the lister's line after "Idx:..; ID:..;\t", without its newline */
    const char *d = line->p ? strchr(line->p, '\t') : NULL;
    size_t dl = 0;
    if (d) {
        d++;
        dl = line->len - (size_t)(d - line->p);
        while (dl && (d[dl - 1] == '\n' || d[dl - 1] == ' '))
            dl--;
    }
    ek_sbuf_printf(out, "%10llu  %02x  %.*s  [", (unsigned long long)index, id, (int)dl,
                   d ? d : "");
    for (size_t i = 0; i < n; i++)
        ek_sbuf_printf(out, i ? " %02x" : "%02x", raw[i]);
    ek_sbuf_puts(out, "]\n");
}

static void v7_json(ek_sbuf *out, uint64_t index, unsigned id, const char *type,
                    const ek_sbuf *line, const uint8_t *raw, size_t n)
{
    ek_sbuf_printf(out, "{\"idx\":%llu,\"id\":%u,\"type\":\"%s\",\"raw\":\"",
                   (unsigned long long)index, id, type);
    for (size_t i = 0; i < n; i++)
        ek_sbuf_printf(out, "%02x", raw[i]);
    ek_sbuf_puts(out, "\",\"desc\":\"");
    const char *d = line->p ? strchr(line->p, '\t') : NULL;
    for (const char *c = d ? d + 1 : ""; *c && *c != '\n'; c++) {
        if (*c == '"' || *c == '\\')
            ek_sbuf_printf(out, "\\%c", *c);
        else if ((unsigned char)*c < 0x20)
            ek_sbuf_printf(out, "\\u%04x", (unsigned char)*c);
        else
            ek_sbuf_putc(out, *c);
    }
    ek_sbuf_puts(out, "\"}\n");
}

static const char *ptm_printer(ek_protocol p)
{
    (void)p;
    return "PTM";
}

static void ptm_ocsd(ek_sbuf *out, const void *pkt, unsigned id, int with_raw, const void *cfg)
{
    ek_list_ptm_ocsd(out, pkt, id, with_raw, cfg);
}

static void ptm_text(ek_sbuf *out, const void *pkt, unsigned id, const void *cfg)
{
    const ek_ptm_packet *k = pkt;
    ek_sbuf line = {0};
    ek_list_ptm_ocsd(&line, k, id, 0, cfg);
    v7_text(out, k->index, id, &line, k->raw, k->size);
    ek_sbuf_free(&line);
}

static void ptm_json(ek_sbuf *out, const void *pkt, unsigned id, const void *cfg)
{
    const ek_ptm_packet *k = pkt;
    ek_sbuf line = {0};
    ek_list_ptm_ocsd(&line, k, id, 0, cfg);
    v7_json(out, k->index, id, ek_ptm_type_name(k->type), &line, k->raw, k->size);
    ek_sbuf_free(&line);
}

static const ek_list_proto ptm = {
    .protocols = 1u << EK_PROTO_PTM,
    .printer_name = ptm_printer,
    .ocsd = ptm_ocsd,
    .text = ptm_text,
    .json = ptm_json,
};

static const char *etm3_printer(ek_protocol p)
{
    (void)p;
    return "ETMV3";
}

static void etm3_ocsd(ek_sbuf *out, const void *pkt, unsigned id, int with_raw, const void *cfg)
{
    ek_list_etm3_ocsd(out, pkt, id, with_raw, cfg);
}

static void etm3_text(ek_sbuf *out, const void *pkt, unsigned id, const void *cfg)
{
    const ek_etm3_packet *k = pkt;
    ek_sbuf line = {0};
    ek_list_etm3_ocsd(&line, k, id, 0, cfg);
    v7_text(out, k->index, id, &line, k->raw, k->size);
    ek_sbuf_free(&line);
}

static void etm3_json(ek_sbuf *out, const void *pkt, unsigned id, const void *cfg)
{
    const ek_etm3_packet *k = pkt;
    ek_sbuf line = {0};
    ek_list_etm3_ocsd(&line, k, id, 0, cfg);
    v7_json(out, k->index, id, ek_etm3_type_name(k->type), &line, k->raw, k->size);
    ek_sbuf_free(&line);
}

/* The errors the decode tree's ETMv3 decoder logs where OpenCSD's stops (etm3.ocsd-*), as
 * OpenCSD's ETMv3 decoder logs them. */
static int etm3_diag_ocsd(ek_sbuf *out, const ek_diag_event *ev, int with_instance)
{
    static const struct {
        const char *kind;
        unsigned why;
    } kinds[] = {
        {"etm3.ocsd-not-init", EK_ETM3_FATAL_NOT_INIT},
        {"etm3.ocsd-data-trace", EK_ETM3_FATAL_DATA},
        {"etm3.ocsd-bad-sequence", EK_ETM3_FATAL_BAD_SEQ},
        {"etm3.ocsd-reserved", EK_ETM3_FATAL_RESERVED},
    };
    unsigned why = EK_ETM3_FATAL_NONE;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (ev->kind && !strcmp(ev->kind, kinds[i].kind)) why = kinds[i].why;
    if (why == EK_ETM3_FATAL_NONE) return 0;
    if (with_instance > 0)
        ek_sbuf_printf(out, "DCD_ETMV3_%04d : ", ev->trace_id >= 0 ? ev->trace_id : 0);
    else if (with_instance == 0)
        ek_sbuf_puts(out, "DCD_ETMV3 : ");
    ek_list_etm3_ocsd_fatal(out, why, ev->offset >= 0 ? (uint64_t)ev->offset : 0,
                            ev->trace_id >= 0 ? (unsigned)ev->trace_id : 0);
    return 1;
}

static const ek_list_proto etm3 = {
    .protocols = 1u << EK_PROTO_ETMV3,
    .printer_name = etm3_printer,
    .ocsd = etm3_ocsd,
    .text = etm3_text,
    .json = etm3_json,
    .diag_ocsd = etm3_diag_ocsd,
};

static const char *stm_printer(ek_protocol p)
{
    (void)p;
    return "STM";
}

/* cfg: the decode tree's STM record, the bytes past the block (ek_stm_list_ctx), or NULL */
static void stm_ocsd(ek_sbuf *out, const void *pkt, unsigned id, int with_raw, const void *cfg)
{
    const ek_stm_list_ctx *lc = cfg;
    ek_list_stm_ocsd(out, pkt, id, with_raw, lc ? lc->tail : NULL, lc ? lc->ntail : 0);
}

static void stm_text(ek_sbuf *out, const void *pkt, unsigned id, const void *cfg)
{
    (void)cfg;
    const ek_stm_packet *k = pkt;
    ek_sbuf line = {0};
    ek_list_stm_ocsd(&line, k, id, 0, NULL, 0);
    v7_text(out, k->index, id, &line, k->raw, k->raw_len);
    ek_sbuf_free(&line);
}

static void stm_json(ek_sbuf *out, const void *pkt, unsigned id, const void *cfg)
{
    (void)cfg;
    const ek_stm_packet *k = pkt;
    ek_sbuf line = {0};
    ek_list_stm_ocsd(&line, k, id, 0, NULL, 0);
    v7_json(out, k->index, id, ek_stm_type_name(k->type), &line, k->raw, k->raw_len);
    ek_sbuf_free(&line);
}

static const ek_list_proto stm = {
    .protocols = 1u << EK_PROTO_STM,
    .printer_name = stm_printer,
    .ocsd = stm_ocsd,
    .text = stm_text,
    .json = stm_json,
};

static const char *itm_printer(ek_protocol p)
{
    (void)p;
    return "ITM";
}

/* A packet monitor lists the packets the parser marks for it, a packet sink those the decoder
 * sees (the tree flags the others EK_DPKT_REPEAT). */
static void itm_ocsd(ek_sbuf *out, const void *pkt, unsigned id, int with_raw, const void *cfg)
{
    (void)cfg;
    const ek_itm_packet *k = pkt;
    if (!(k->flags & (with_raw ? EK_ITM_PF_LIST : EK_ITM_PF_DECODE))) return;
    ek_list_itm_ocsd(out, k, id, with_raw);
}

static void itm_text(ek_sbuf *out, const void *pkt, unsigned id, const void *cfg)
{
    (void)cfg;
    const ek_itm_packet *k = pkt;
    ek_sbuf line = {0};
    ek_list_itm_ocsd(&line, k, id, 0);
    v7_text(out, k->index, id, &line, k->raw, k->raw_len);
    ek_sbuf_free(&line);
}

static void itm_json(ek_sbuf *out, const void *pkt, unsigned id, const void *cfg)
{
    (void)cfg;
    const ek_itm_packet *k = pkt;
    ek_sbuf line = {0};
    ek_list_itm_ocsd(&line, k, id, 0);
    v7_json(out, k->index, id, ek_itm_type_name(k->type), &line, k->raw, k->raw_len);
    ek_sbuf_free(&line);
}

static const ek_list_proto itm = {
    .protocols = 1u << EK_PROTO_ITM,
    .printer_name = itm_printer,
    .ocsd = itm_ocsd,
    .text = itm_text,
    .json = itm_json,
};

/* by protocol (every packet line looks here: decode_list.c reads it in line) */
const ek_list_proto *const ek_list_protos_by_protocol[32] = {
    [EK_PROTO_ETMV4] = &etm4, [EK_PROTO_ETMV4M] = &etm4, [EK_PROTO_ETE] = &etm4,
    [EK_PROTO_PTM] = &ptm,    [EK_PROTO_ETMV3] = &etm3,  [EK_PROTO_STM] = &stm,
    [EK_PROTO_ITM] = &itm,
};

const ek_list_proto *ek_list_proto_find(ek_protocol p)
{
    return (unsigned)p < 32 ? ek_list_protos_by_protocol[p] : NULL;
}
