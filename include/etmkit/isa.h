/* A64 / T32 / A32 instruction classifier: what the trace protocols care about.
 *
 * An instruction-flow decoder walks a code image from the last known address to the next
 * "waypoint" (a branch, or another instruction the trace protocol treats as a P0 element) and
 * asks this classifier about every instruction on the way. ek_isa_classify() answers for one
 * instruction; ek_isa_next_waypoint() scans a byte run; ek_isa_a64_is_plain() is an inline test
 * for the overwhelmingly common "ordinary A64 instruction" case.
 *
 * Pure: no allocation, no I/O, no global state. See docs/ISA.md for the encodings, the
 * architecture gating and every place where OpenCSD 1.8.0 classifies differently from the Arm
 * ARM (reproduced only when the matching EK_ISA_OCSD_* option is set).
 */
#ifndef ETMKIT_ISA_H
#define ETMKIT_ISA_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/config.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

/* Instruction set state. The values follow OpenCSD's ocsd_isa order (arm, thumb2, aarch64). */
typedef enum ek_isa {
    EK_ISA_A32 = 0,
    EK_ISA_T32 = 1,
    EK_ISA_A64 = 2,
    EK_ISA_UNKNOWN = 7,
} ek_isa;

/* What the trace sees: same values and meaning as OpenCSD's ocsd_instr_type. Everything that is
 * not EK_ITYPE_OTHER is a waypoint (ends an instruction range). */
typedef enum ek_itype {
    EK_ITYPE_OTHER = 0,       /* not significant for waypoints */
    EK_ITYPE_BR = 1,          /* direct branch: target in ek_insn.target */
    EK_ITYPE_BR_INDIRECT = 2, /* indirect branch: target comes from the trace */
    EK_ITYPE_ISB = 3,
    EK_ITYPE_DSB_DMB = 4, /* only with EK_ISA_OPT_DSB_DMB_WAYPOINT */
    EK_ITYPE_WFI_WFE = 5, /* only with EK_ISA_OPT_WFX_BRANCH (ETMv4.3+ TRCIDR2.WFXMODE, ETE) */
    EK_ITYPE_TSTART = 6,  /* FEAT_TME TSTART */
} ek_itype;

/* Sub-type: same values and meaning as OpenCSD's ocsd_instr_subtype. */
typedef enum ek_isubtype {
    EK_ISUB_NONE = 0,
    EK_ISUB_BR_LINK = 1,        /* branch with link (call) */
    EK_ISUB_V8_RET = 2,         /* A64 RET family */
    EK_ISUB_V8_ERET = 3,        /* exception return */
    EK_ISUB_V7_IMPLIED_RET = 4, /* A32/T32 idiom that implies a return: BX LR, POP {..,pc}, ... */
} ek_isubtype;

/* ek_insn.flags */
#define EK_IF_BRANCH     0x0001u /* type BR or BR_INDIRECT */
#define EK_IF_INDIRECT   0x0002u /* target not encoded in the instruction */
#define EK_IF_LINK       0x0004u /* writes the return address to LR (BL, BLR, BLX, BLRAA...) */
#define EK_IF_COND       0x0008u /* may not be taken / may not execute (see EK_ISA_OCSD_COND) */
#define EK_IF_RETURN     0x0010u /* RET family or an A32/T32 implied return */
#define EK_IF_ERET       0x0020u /* exception return (ERET, ERETAA, RFE, SUBS PC,LR, TEXIT...) */
#define EK_IF_ISA_SWITCH 0x0040u /* direct branch that changes instruction set (BLX imm) */
#define EK_IF_INTERWORK  0x0080u /* indirect branch whose target may change A32/T32 state */
#define EK_IF_UNDEF      0x0100u /* UNDEFINED / unallocated in the configured architecture */
#define EK_IF_EXCGEN     0x0200u /* exception generating: SVC, HVC, SMC, BRK, BKPT, UDF... */
#define EK_IF_BARRIER    0x0400u /* ISB, DSB, DMB, SB (whatever the type says) */
#define EK_IF_WFX        0x0800u /* WFI, WFE, WFIT, WFET (whatever the type says) */
#define EK_IF_IT         0x1000u /* T32 IT instruction: it_mask valid */
#define EK_IF_TME        0x2000u /* TSTART, TCOMMIT, TCANCEL, TTEST */
#define EK_IF_LOOP       0x4000u /* Armv8.1-M low-overhead loop / branch-future instruction */
#define EK_IF_PAC        0x8000u /* pointer-authenticated branch or return */

/* ek_insn.cond for instructions without a condition code */
#define EK_COND_AL  14u /* always (A32 AL, B.AL, unconditional instructions) */
#define EK_COND_REG 16u /* taken depending on a register: CBZ, TBZ, CB<cc>, LE, WLS */

/* One classified instruction. */
typedef struct ek_insn {
    uint64_t target;  /* direct branch: target address (instruction-set bit stripped) */
    uint32_t flags;   /* EK_IF_* */
    uint16_t kind;    /* ek_insn_kind: what the instruction is (see ek_isa_kind_name) */
    uint8_t size;     /* 2 or 4 */
    uint8_t type;     /* ek_itype */
    uint8_t subtype;  /* ek_isubtype */
    uint8_t next_isa; /* ek_isa after this instruction if it is a taken direct branch */
    uint8_t cond;     /* condition code 0..15, EK_COND_AL or EK_COND_REG (see above) */
    uint8_t it_mask;  /* IT instruction: firstcond<<4 | mask (the ITSTATE it loads) */
} ek_insn;

/* What an instruction is. Names in ek_isa_kind_name(). */
typedef enum ek_insn_kind {
    EK_K_NONE = 0, /* ordinary instruction (data processing, load/store, ...) */
    EK_K_UNDEF,    /* unallocated / UNDEFINED encoding */
    /* A64 */
    EK_K_A64_B,
    EK_K_A64_BL,
    EK_K_A64_B_COND,
    EK_K_A64_BC_COND,
    EK_K_A64_CBZ,
    EK_K_A64_TBZ,
    EK_K_A64_CB_REG,
    EK_K_A64_CBB,
    EK_K_A64_CBH,
    EK_K_A64_CB_IMM,
    EK_K_A64_BR,
    EK_K_A64_BLR,
    EK_K_A64_RET,
    EK_K_A64_BRA,
    EK_K_A64_BLRA,
    EK_K_A64_RETA,
    EK_K_A64_RETASPPC,
    EK_K_A64_RETASPPCR,
    EK_K_A64_ERET,
    EK_K_A64_ERETA,
    EK_K_A64_DRPS,
    EK_K_A64_TEXIT,
    EK_K_A64_SVC,
    EK_K_A64_HVC,
    EK_K_A64_SMC,
    EK_K_A64_BRK,
    EK_K_A64_HLT,
    EK_K_A64_UDF,
    EK_K_A64_TCANCEL,
    EK_K_A64_ISB,
    EK_K_A64_DSB,
    EK_K_A64_DMB,
    EK_K_A64_SB,
    EK_K_A64_WFI,
    EK_K_A64_WFE,
    EK_K_A64_WFIT,
    EK_K_A64_WFET,
    EK_K_A64_TSTART,
    EK_K_A64_TCOMMIT,
    EK_K_A64_TTEST,
    /* T32 */
    EK_K_T32_B_COND16,
    EK_K_T32_B16,
    EK_K_T32_B_COND,
    EK_K_T32_B,
    EK_K_T32_BL,
    EK_K_T32_BLX_IMM,
    EK_K_T32_CBZ,
    EK_K_T32_LE,
    EK_K_T32_LE_NOLR,
    EK_K_T32_LETP,
    EK_K_T32_WLS,
    EK_K_T32_WLSTP,
    EK_K_T32_DLS,
    EK_K_T32_BF,
    EK_K_T32_BX,
    EK_K_T32_BLX_REG,
    EK_K_T32_BXNS,
    EK_K_T32_BLXNS,
    EK_K_T32_BXJ,
    EK_K_T32_POP_PC16,
    EK_K_T32_MOV_PC,
    EK_K_T32_ADD_PC,
    EK_K_T32_TBB,
    EK_K_T32_RFE,
    EK_K_T32_SUBS_PC_LR,
    EK_K_T32_ERET,
    EK_K_T32_LDR_PC,
    EK_K_T32_POP_PC,
    EK_K_T32_LDM_PC,
    EK_K_T32_POPW_PC,
    EK_K_T32_IT,
    EK_K_T32_SVC,
    EK_K_T32_UDF,
    EK_K_T32_BKPT,
    EK_K_T32_HVC,
    EK_K_T32_SMC,
    EK_K_T32_ISB,
    EK_K_T32_DSB,
    EK_K_T32_DMB,
    EK_K_T32_WFI,
    EK_K_T32_WFE,
    /* A32 */
    EK_K_A32_B,
    EK_K_A32_BL,
    EK_K_A32_BLX_IMM,
    EK_K_A32_BX,
    EK_K_A32_BLX_REG,
    EK_K_A32_BXJ,
    EK_K_A32_LDM_PC,
    EK_K_A32_POP_PC,
    EK_K_A32_LDM_PC_ERET,
    EK_K_A32_LDR_PC,
    EK_K_A32_POP1_PC,
    EK_K_A32_MOV_PC,
    EK_K_A32_MOV_PC_LR,
    EK_K_A32_ALU_PC,
    EK_K_A32_ALU_PC_ERET,
    EK_K_A32_RFE,
    EK_K_A32_ERET,
    EK_K_A32_SVC,
    EK_K_A32_HVC,
    EK_K_A32_SMC,
    EK_K_A32_BKPT,
    EK_K_A32_UDF,
    EK_K_A32_ISB,
    EK_K_A32_DSB,
    EK_K_A32_DMB,
    EK_K_A32_WFI,
    EK_K_A32_WFE,
    EK_K_COUNT
} ek_insn_kind;

/* Architecture features that decide which encodings exist (ek_isa_cfg.features). */
#define EK_ISA_FEAT_PAUTH    0x0001u /* FEAT_PAuth (v8.3): BRAA.., RETAA, ERETAA */
#define EK_ISA_FEAT_HBC      0x0002u /* FEAT_HBC (v8.8/v9.3): BC.cond */
#define EK_ISA_FEAT_CMPBR    0x0004u /* FEAT_CMPBR (v9.6): CB<cc>, CBB<cc>, CBH<cc> */
#define EK_ISA_FEAT_PAUTH_LR 0x0008u /* FEAT_PAuth_LR (v9.5): RETAASPPC, RETABSPPC(R) */
#define EK_ISA_FEAT_WFXT     0x0010u /* FEAT_WFxT (v8.7): WFIT, WFET */
#define EK_ISA_FEAT_TME      0x0020u /* FEAT_TME: TSTART, TCOMMIT, TCANCEL, TTEST */
#define EK_ISA_FEAT_TEV      0x0040u /* FEAT_TEV: TEXIT */
#define EK_ISA_FEAT_LOB      0x0080u /* Armv8.1-M low-overhead branches: LE, WLS, DLS, BF.. */
#define EK_ISA_FEAT_CMSE     0x0100u /* Armv8-M Security Extension: BXNS, BLXNS */
#define EK_ISA_FEAT_AR32                                                                           \
    0x0200u /* A/R-profile AArch32: A32 state, BLX imm, RFE, ERET,                                 \
               SUBS PC,LR, BXJ, HVC, SMC, CP15 barriers */
#define EK_ISA_FEAT_ALL 0x03ffu

/* ek_isa_cfg.opts: how the trace protocol uses instructions. */
#define EK_ISA_OPT_WFX_BRANCH       0x0001u /* WFI/WFE/WFIT/WFET are waypoints (EK_ITYPE_WFI_WFE) */
#define EK_ISA_OPT_DSB_DMB_WAYPOINT 0x0002u /* DSB/DMB are waypoints (OpenCSD's ETMv4 never) */
/* OpenCSD 1.8.0 compatibility: each reproduces one documented difference (docs/ISA.md). */
#define EK_ISA_OCSD_COND                                                                           \
    0x0100u /* is_conditional as OpenCSD: CB<cc>/CBB/CBH, LE, WLS(TP)                              \
               not conditional; every IT-block instruction conditional */
#define EK_ISA_OCSD_ERET                                                                           \
    0x0200u                          /* A32 ERET is not a branch; A32/T32 exception returns        \
                                        (SUBS PC,LR, RFE, LDM ^, T32 ERET) have sub-type NONE */
#define EK_ISA_OCSD_CMPBR_CC 0x0400u /* CB<cc>/CBB/CBH with reserved cc 100/101 are branches */
#define EK_ISA_OCSD_BARRIER  0x0800u /* A64 DSB nXS is not a DSB */
#define EK_ISA_OCSD_FETCH4                                                                         \
    0x1000u /* next_waypoint: every instruction needs 4 readable bytes,                            \
               also a 16-bit T32 one (OpenCSD reads 4 and else NACCs) */
#define EK_ISA_OCSD_ALL 0x1f00u

/* Classifier configuration. Build it with ek_isa_cfg_init() / ek_isa_cfg_ocsd(). */
typedef struct ek_isa_cfg {
    uint32_t features; /* EK_ISA_FEAT_* */
    uint32_t opts;     /* EK_ISA_OPT_* | EK_ISA_OCSD_* */
} ek_isa_cfg;

/* The features an (arch, profile) pair has, as the Arm ARM defines them. Where an ek_arch covers
 * several versions (EK_ARCH_V8_3A = 8.3 and later 8.x, EK_ARCH_V9A = 9.0 and later) every
 * feature the range can have is included: an encoding a core lacks is never executed, so being
 * generous only matters for data in code. Unknown arch: all A-profile features. */
uint32_t ek_isa_arch_features(ek_arch arch, ek_arch_profile profile);

/* cfg = {ek_isa_arch_features(arch, profile), opts}. */
void ek_isa_cfg_init(ek_isa_cfg *cfg, ek_arch arch, ek_arch_profile profile, uint32_t opts);

/* OpenCSD 1.8.0's view: ocsd_arch is its ocsd_arch_version_t value (0x0700 v7, 0x0800 v8,
 * 0x0803 v8.3, 0x0864 "AA64": see docs/ISA.md for how it derives that from a core name),
 * m_profile its profile_CortexM test. Sets the features OpenCSD effectively decodes with and
 * EK_ISA_OCSD_ALL | extra_opts. */
void ek_isa_cfg_ocsd(ek_isa_cfg *cfg, unsigned ocsd_arch, int m_profile, uint32_t extra_opts);

/* Classify one instruction at addr. `word` is the 32-bit little-endian value read from memory
 * at addr: for T32 the first halfword is in bits 15:0 and the second (if any) in 31:16; a 16-bit
 * T32 instruction ignores bits 31:16. Returns the size in bytes (2 or 4), or EK_ERR_ARG for an
 * unknown isa (out is then zeroed). Never fails otherwise: every word classifies. */
int ek_isa_classify(uint32_t word, ek_isa isa, uint64_t addr, const ek_isa_cfg *cfg, ek_insn *out);

/* Size of the T32 instruction whose first halfword is hw1 (2 or 4). */
static inline unsigned ek_isa_t32_size(uint16_t hw1)
{
    return (hw1 >> 11) >= 0x1d ? 4u : 2u;
}

/* Fast path for the decoder's hot loop: nonzero when the A64 word is certainly an ordinary
 * instruction (EK_ITYPE_OTHER, kind EK_K_NONE, no flags) whatever the configuration. About 7/8
 * of real code takes this path; call ek_isa_classify() for the rest. */
static inline int ek_isa_a64_is_plain(uint32_t w)
{
    /* Branches, exception generation and system instructions all have bits 28:26 = 101;
     * UDF #imm16 (permanently undefined) is 0x0000xxxx. */
    return ((w >> 26) & 7u) != 5u && (w >> 16) != 0u;
}

/* IT-block state for a T32 instruction stream (the architectural ITSTATE). Zero = not in an
 * IT block. Reset it on exceptions, on any change of ISA and when the trace restarts. */
typedef struct ek_it_state {
    uint8_t itstate; /* firstcond[3:0]:mask[3:0] as the IT instruction loads it, then shifted */
    uint8_t left;    /* instructions of the block still to come */
} ek_it_state;

/* Apply the IT state to the T32 instruction just classified into *insn (which must be the next
 * instruction in program order) and advance the state: an instruction inside an IT block gets
 * EK_IF_COND and its condition in insn->cond (with EK_ISA_OCSD_COND: EK_IF_COND for every
 * instruction of the block, as OpenCSD); an IT instruction outside a block starts one. */
void ek_isa_it_step(ek_it_state *st, ek_insn *insn, const ek_isa_cfg *cfg);

/* Result of ek_isa_next_waypoint(). */
typedef struct ek_isa_scan {
    size_t offset;  /* found: byte offset of the waypoint instruction; else: bytes consumed */
    uint64_t count; /* instructions scanned, including the waypoint when found */
    ek_insn insn;   /* found: the waypoint's classification */
} ek_isa_scan;

/* Scan buf[0..len) (code at address addr, instruction set isa) for the first waypoint, that is
 * the first instruction whose type is not EK_ITYPE_OTHER. Returns 1 when found, 0 when the run
 * ends first (out->offset then counts the whole instructions consumed: a trailing partial
 * instruction, or with EK_ISA_OCSD_FETCH4 anything in the last 3 bytes, is left unconsumed), or
 * EK_ERR_ARG. `it` may be NULL; when given (T32 only) it is advanced over every instruction
 * scanned and the waypoint's EK_IF_COND reflects it. */
int ek_isa_next_waypoint(const uint8_t *buf, size_t len, ek_isa isa, uint64_t addr,
                         const ek_isa_cfg *cfg, ek_it_state *it, ek_isa_scan *out);

/* Names for dumps and tests. Never NULL. */
const char *ek_isa_kind_name(unsigned kind);   /* "A64_BL", ... "?" if out of range */
const char *ek_isa_type_name(unsigned type);   /* "OTHER", "BR", "BR_INDIRECT", ... */
const char *ek_isa_subtype_name(unsigned sub); /* "NONE", "BR_LINK", "V8_RET", ... */
const char *ek_isa_name(ek_isa isa);           /* "A64", "T32", "A32", "?" */

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
