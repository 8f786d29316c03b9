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
#include "etmkit/listing.h"
#include "etmkit/sbuf.h"
#include "fuzz_common.h"

typedef struct base_cfg {
    ek_protocol proto;
    ek_arch arch;
    ek_arch_profile prof;
    uint32_t configr, idr0, idr1, idr2, idr8, devarch;
} base_cfg;

static const base_cfg bases[8] = {
    /* Cortex-A53-like ETMv4.0: CID+VMID, COMMOPT=1 */
    {EK_PROTO_ETMV4, EK_ARCH_V8A, EK_PROFILE_A, 0x000000C1, 0x28000EA1, 0x4100F403, 0x00000488, 0, 0},
    /* ETMv4.5 with cycle counts, timestamps, return stack, branch broadcast, COMMOPT=0 */
    {EK_PROTO_ETMV4, EK_ARCH_V8_3A, EK_PROFILE_A, 0x000018F9, 0x08001EE1, 0x4100F453, 0x00000488, 0x4, 0},
    /* ETE */
    {EK_PROTO_ETE, EK_ARCH_V9A, EK_PROFILE_A, 0x000018F9, 0x28001EE1, 0x4100FFF3, 0x00000488, 0x10, 0x47705A13},
    /* ETMv4 on an M-profile core: 32-bit addresses, no context IDs */
    {EK_PROTO_ETMV4M, EK_ARCH_V8M, EK_PROFILE_M, 0x00000011, 0x28000EA1, 0x4100F423, 0x00000004, 0, 0},
    /* ETMv4.2 32-bit A-profile (v7-style), conditional and data trace bits set */
    {EK_PROTO_ETMV4, EK_ARCH_V7A, EK_PROFILE_A, 0x00030711, 0x2800FFBF, 0x4100F423, 0x00000084, 0, 0},
    /* ETMv4.6 with everything enabled, Q elements */
    {EK_PROTO_ETMV4, EK_ARCH_V8_3A, EK_PROFILE_A, 0x0003FFFF, 0x2803FFFF, 0x4100F463, 0x000004C8, 0x4E, 0},
    /* ETE 1.3 (ITE) with deep speculation */
    {EK_PROTO_ETE, EK_ARCH_V9A, EK_PROFILE_A, 0x000018C1, 0x28001EE1, 0x4100FFF3, 0x00000488, 0x7F, 0x47735A13},
    /* ETMv4.1 R-profile */
    {EK_PROTO_ETMV4, EK_ARCH_V8R, EK_PROFILE_R, 0x00000811, 0x28000EA1, 0x4100F413, 0x00000484, 0, 0},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = {data, size};
    unsigned sel = fuzz_u8(&in);
    const base_cfg *b = &bases[sel & 7];
    ek_etm4_regs regs;
    memset(&regs, 0, sizeof regs);
    regs.configr = b->configr;
    regs.traceidr = 0x10;
    regs.authstatus = 0xCC;
    regs.devarch = b->devarch;
    regs.idr[0] = b->idr0;
    regs.idr[1] = b->idr1;
    regs.idr[2] = b->idr2;
    regs.idr[8] = b->idr8;
    if (sel & 8) {
        regs.configr ^= fuzz_u32(&in);
        regs.idr[0] ^= fuzz_u32(&in);
        regs.idr[2] ^= fuzz_u32(&in);
        regs.idr[8] ^= fuzz_u32(&in);
    }
    regs.present = 0x3f07 | EK_ETM4_HAVE_CONFIGR | EK_ETM4_HAVE_TRACEIDR |
                   EK_ETM4_HAVE_AUTHSTATUS | (b->devarch ? EK_ETM4_HAVE_DEVARCH : 0);
    unsigned blk_seed = fuzz_u8(&in);

    ek_etm4_config cfg;
    if (ek_etm4_config_init(&cfg, &regs, b->proto, b->arch, b->prof) != 0)
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
