/* ETMv4/ETE configurations shared by the etm4 and flow fuzz targets: eight base register
 * sets, optionally XORed with input bytes so that register combinations get explored too. */
#ifndef ETMKIT_FUZZ_ETM4_CONFIGS_H
#define ETMKIT_FUZZ_ETM4_CONFIGS_H

#include <string.h>

#include "etmkit/etm4.h"
#include "fuzz_common.h"

typedef struct base_cfg {
    ek_protocol proto;
    ek_arch arch;
    ek_arch_profile prof;
    uint32_t configr, idr0, idr1, idr2, idr8, devarch;
} base_cfg;

static const base_cfg fuzz_etm4_bases[8] = {
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

/* Byte 'sel' (bits 0-2: base, bit 3: XOR the next 16 input bytes into TRCCONFIGR, TRCIDR0,
 * TRCIDR2, TRCIDR8) -> a source configuration. */
static inline void fuzz_etm4_source(unsigned sel, fuzz_in *in, ek_source_config *src)
{
    const base_cfg *b = &fuzz_etm4_bases[sel & 7];
    memset(src, 0, sizeof *src);
    src->protocol = b->proto;
    src->arch = b->arch;
    src->profile = b->prof;
    src->trace_id = 0x10;
    ek_etm4_regs *regs = &src->regs.etm4;
    regs->configr = b->configr;
    regs->traceidr = 0x10;
    regs->authstatus = 0xCC;
    regs->devarch = b->devarch;
    regs->idr[0] = b->idr0;
    regs->idr[1] = b->idr1;
    regs->idr[2] = b->idr2;
    regs->idr[8] = b->idr8;
    if (sel & 8) {
        regs->configr ^= fuzz_u32(in);
        regs->idr[0] ^= fuzz_u32(in);
        regs->idr[2] ^= fuzz_u32(in);
        regs->idr[8] ^= fuzz_u32(in);
    }
    regs->present = 0x3f07 | EK_ETM4_HAVE_CONFIGR | EK_ETM4_HAVE_TRACEIDR |
                    EK_ETM4_HAVE_AUTHSTATUS | (b->devarch ? EK_ETM4_HAVE_DEVARCH : 0);
}

#endif
