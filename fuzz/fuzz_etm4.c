/* Fuzz target: the ETMv4/ETE packet parser (src/etm4/parse.c) and every packet listing form.
 *
 * Input: byte 0 selects a configuration (low 3 bits: one of the base configs below; bit 3:
 * XOR the next 16 input bytes into TRCCONFIGR, TRCIDR0, TRCIDR2 and TRCIDR8, so register
 * combinations get explored too); byte 1 seeds the block sizes; the rest is the trace stream.
 * Checks: packet sizes and indices stay inside what was fed, every block yields a bounded
 * number of packets (no livelock), the listings never write more than one line per packet.
 */
#include <stdlib.h>
#include <string.h>

#include "etmkit/etm4.h"
#include "etmkit/low/etm4.h"
#include "etmkit/listing.h"
#include "etmkit/sbuf.h"
#include "etm4_configs.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = {data, size};
    ek_source_config src;
    fuzz_etm4_source(fuzz_u8(&in), &in, &src);
    unsigned blk_seed = fuzz_u8(&in);

    ek_etm4_config cfg;
    if (ek_etm4_config_from_source(&cfg, &src) != 0)
        return 0;

    static ek_etm4_parser p; /* large: keep it off the stack */
    ek_etm4_parser_init(&p, &cfg);
    ek_ocsd_dcd_model model;
    ek_ocsd_dcd_model_reset(&model);
    ek_sbuf sb = {0};
    const uint8_t *stream = in.p;
    size_t len = in.n, pos = 0;
    const uint64_t base_index = 0x100;
    uint64_t last_index = 0;
    int have_last = 0, finishing = 0;

    for (;;) {
        size_t blk = 0;
        if (pos < len) {
            blk = blk_seed ? 1 + (blk_seed * (pos + 3)) % 97 : len - pos;
            if (blk > len - pos)
                blk = len - pos;
            ek_etm4_feed(&p, stream + pos, blk, base_index + pos);
        } else if (!finishing) {
            finishing = 1;
            ek_etm4_eot(&p);
        } else {
            break;
        }
        const ek_etm4_packet *pkt;
        size_t npkts = 0;
        while (ek_etm4_next(&p, &pkt) > 0) {
            FUZZ_CHECK(!(++npkts > 2 * blk + 64),
                       "livelock: packets without input");
            FUZZ_CHECK(!(!pkt || pkt->size > EK_ETM4_MAX_PKT + 1),
                       "not (!pkt || pkt->size > EK_ETM4_MAX_PKT + 1)");
            FUZZ_CHECK(!(pkt->index < base_index || pkt->index > base_index + len),
                       "not (pkt->index < base_index || pkt->index > base_index + len)");
            FUZZ_CHECK(!(have_last && pkt->index < last_index),
                       "packets come in stream order");
            last_index = pkt->index;
            have_last = 1;
            (void)ek_etm4_type_name(pkt->type);
            ek_list_etm4_ocsd_pre(&sb, pkt, &cfg);
            ek_list_etm4_ocsd(&sb, pkt, cfg.trace_id, 1, &cfg);
            ek_list_etm4_ocsd_post(&sb, &model, pkt, &cfg);
            ek_list_etm4_text(&sb, pkt, cfg.trace_id, &cfg);
            ek_list_etm4_json(&sb, pkt, cfg.trace_id, &cfg);
            ek_sbuf_reset(&sb);
        }
        pos += blk;
    }
    /* A reset parser takes the same stream again without trouble. */
    ek_etm4_parser_reset(&p);
    if (len) {
        ek_etm4_feed(&p, stream, len, 0);
        const ek_etm4_packet *pkt;
        size_t n = 0;
        while (ek_etm4_next(&p, &pkt) > 0)
            FUZZ_CHECK(!(++n > 2 * len + 64),
                       "not (++n > 2 * len + 64)");
    }
    ek_sbuf_free(&sb);
    return 0;
}
