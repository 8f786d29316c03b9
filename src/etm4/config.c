/* ETMv4 / ETE configuration: register values -> typed feature set for the packet parser.
 * Field positions: Arm ETMv4 and ETE architecture (TRCIDR0/1/2/8, TRCCONFIGR, TRCDEVARCH). */
#include <string.h>

#include "etmkit/etm4.h"
#include "etmkit/etmkit.h"

/* TRCIDR0 */
#define IDR0_TRCDATA_MASK 0x18u
#define IDR0_TRCCOND      0x40u
#define IDR0_TRCCCI       0x80u
#define IDR0_QSUPP_SHIFT  15
#define IDR0_TSSIZE_SHIFT 24
#define IDR0_COMMOPT      0x20000000u
/* TRCCONFIGR */
#define CFG_INSTP0_MASK 0x6u
#define CFG_BB          (1u << 3)
#define CFG_CCI         (1u << 4)
#define CFG_CID         (1u << 6)
#define CFG_VMID        (1u << 7)
#define CFG_COND_SHIFT  8
#define CFG_TS          (1u << 11)
#define CFG_RS          (1u << 12)
#define CFG_DA          (1u << 16)
#define CFG_DV          (1u << 17)

/* Defaults used when a register is missing (the values OpenCSD assumes). */
#define DEFAULT_IDR1_ETM4   0x4100F403u /* ETMv4.0 */
#define DEFAULT_DEVARCH_ETE 0x47705A13u /* ETE 1.0 */

static int is_v8_or_later(ek_arch arch)
{
    switch (arch) {
    case EK_ARCH_V8A:
    case EK_ARCH_V8_3A:
    case EK_ARCH_V8R:
    case EK_ARCH_V8M:
    case EK_ARCH_V8_1M:
    case EK_ARCH_V9A: return 1;
    default: return 0;
    }
}

int ek_etm4_config_init(ek_etm4_config *cfg, const ek_etm4_regs *regs, ek_protocol protocol,
                        ek_arch arch, ek_arch_profile profile)
{
    memset(cfg, 0, sizeof *cfg);
    if (protocol != EK_PROTO_ETMV4 && protocol != EK_PROTO_ETMV4M && protocol != EK_PROTO_ETE)
        return EK_ERR_UNSUPPORTED;
    cfg->regs = *regs;
    cfg->protocol = protocol;

    const ek_etm4_regs *r = &cfg->regs;
    const uint32_t idr0 = r->idr[0], idr2 = r->idr[2], configr = r->configr;
    uint8_t major, minor;
    if (protocol == EK_PROTO_ETE) {
        const uint32_t devarch =
            (r->present & EK_ETM4_HAVE_DEVARCH) ? r->devarch : DEFAULT_DEVARCH_ETE;
        major = (uint8_t)((devarch >> 12) & 0xF); /* TRCDEVARCH.ARCHVER */
        minor = (uint8_t)((devarch >> 16) & 0xF); /* TRCDEVARCH.REVISION */
    } else {
        const uint32_t idr1 = (r->present & (1u << 1)) ? r->idr[1] : DEFAULT_IDR1_ETM4;
        major = (uint8_t)((idr1 >> 8) & 0xF); /* TRCIDR1.TRCARCHMAJ */
        minor = (uint8_t)((idr1 >> 4) & 0xF); /* TRCIDR1.TRCARCHMIN */
    }
    cfg->version = (uint8_t)((major << 4) | minor);
    cfg->is_ete = major >= 5;
    cfg->trace_id = (uint8_t)(r->traceidr & 0x7F);
    cfg->m_profile = profile == EK_PROFILE_M || protocol == EK_PROTO_ETMV4M ||
                     arch == EK_ARCH_V7M || arch == EK_ARCH_V8M || arch == EK_ARCH_V8_1M;
    cfg->arch_v8 = (uint8_t)is_v8_or_later(arch);

    /* TRCIDR2 sizes */
    cfg->ia_64 = (idr2 & 0x1F) == 0x8;
    cfg->cid_bytes = ((idr2 >> 5) & 0x1F) == 0x4 ? 4 : 0;
    const unsigned vmidsz = (idr2 >> 10) & 0x1F;
    if (vmidsz == 1)
        cfg->vmid_bytes = 1;
    else if (cfg->version > 0x40 && vmidsz == 2) /* 16/32-bit VMIDs: ETMv4.1+ and ETE */
        cfg->vmid_bytes = 2;
    else if (cfg->version > 0x40 && vmidsz == 4)
        cfg->vmid_bytes = 4;
    cfg->cc_bits = (uint8_t)(((idr2 >> 25) & 0xF) + 12);
    const unsigned tssize = (idr0 >> IDR0_TSSIZE_SHIFT) & 0x1F;
    cfg->ts_bits = tssize == 6 ? 48 : tssize == 8 ? 64 : 0;
    cfg->max_spec = r->idr[8];

    /* features */
    const int has_cci = (idr0 & IDR0_TRCCCI) != 0;
    cfg->commit_opt1 = (idr0 & IDR0_COMMOPT) && has_cci;
    const unsigned cond = (configr >> CFG_COND_SHIFT) & 0x7;
    cfg->cond_trace = (idr0 & IDR0_TRCCOND) && (cond == 1 || cond == 2 || cond == 3 || cond == 7);
    cfg->data_trace = (idr0 & IDR0_TRCDATA_MASK) == IDR0_TRCDATA_MASK &&
                      (configr & CFG_INSTP0_MASK) && (configr & (CFG_DA | CFG_DV));
    cfg->q_elem = ((idr0 >> IDR0_QSUPP_SHIFT) & 0x3) != 0;
    cfg->cc_enabled = (configr & CFG_CCI) != 0;
    cfg->ts_enabled = (configr & CFG_TS) != 0;
    cfg->cid_enabled = (configr & CFG_CID) != 0;
    cfg->vmid_enabled = (configr & CFG_VMID) != 0;
    cfg->bb_enabled = (configr & CFG_BB) != 0;
    cfg->rs_enabled = (configr & CFG_RS) != 0;

    /* which headers exist */
    cfg->has_func_ret = cfg->m_profile && cfg->arch_v8 && cfg->version >= 0x42;
    cfg->has_eret = !cfg->is_ete;
    cfg->has_ignore = cfg->version >= 0x43;
    cfg->has_ts_marker = cfg->version >= 0x46;
    cfg->has_trans = cfg->is_ete;
    cfg->has_ite = cfg->is_ete && minor >= 3;
    cfg->has_src_addr = cfg->version >= 0x50;
    return EK_OK;
}

int ek_etm4_config_from_source(ek_etm4_config *cfg, const ek_source_config *src)
{
    return ek_etm4_config_init(cfg, &src->regs.etm4, src->protocol, src->arch, src->profile);
}
