/* A64 / T32 / A32 instruction classifier (see include/etmkit/isa.h and docs/ISA.md).
 *
 * Two levels of tables:
 *  - pattern tables (mask, value, kind) per encoding group, scanned in order, first match wins;
 *  - one row per kind (kinfo[]) with everything the kind implies: trace type, sub-type,
 *    flags, how to compute the target, the architecture feature it needs and what the encoding
 *    is when that feature is absent.
 * The decode functions only pick the group and the kind; classify_kind() turns a kind into an
 * ek_insn, applying the configuration (features, waypoint options, OpenCSD compatibility).
 */
#include "etmkit/isa.h"

#include <string.h>

#include "etmkit/etmkit.h"

/* ---- per-kind attributes --------------------------------------------------------------- */

enum tgt_fmt {
    TF_NONE = 0,
    TF_A64_26,
    TF_A64_19,
    TF_A64_14,
    TF_A64_9, /* imm26 / imm19 / imm14 / imm9, times 4 */
    TF_T16_8,
    TF_T16_11,
    TF_T16_CBZ, /* 16-bit T32 */
    TF_T32_20,
    TF_T32_24,
    TF_T32_BLX, /* B T3, B T4 / BL, BLX T2 */
    TF_T32_LOB_BACK,
    TF_T32_LOB_FWD, /* LE(TP): PC - imm, WLS(TP): PC + imm */
    TF_A32_24,
    TF_A32_BLX,
};

/* internal attribute bits */
#define A_COND_OCSD_OFF 0x01u /* conditional, but OpenCSD does not say so (EK_ISA_OCSD_COND) */
#define A_ERET_OCSD     0x02u /* A32/T32 exception return: sub-type NONE with EK_ISA_OCSD_ERET */
#define A_OCSD_OTHER    0x04u /* not a branch at all with EK_ISA_OCSD_ERET (A32 ERET) */
#define A_WFX           0x08u /* WFI_WFE type only with EK_ISA_OPT_WFX_BRANCH */
#define A_DSBDMB        0x10u /* DSB_DMB type only with EK_ISA_OPT_DSB_DMB_WAYPOINT */
#define A_CC_FIELD      0x20u /* condition code in the instruction (B.cond, B<c>) */
#define A_RET_IF_LR     0x40u /* implied return when the register is LR (BX LR, MOV PC,LR) */

typedef struct kinfo {
    const char *name;
    uint8_t type;   /* ek_itype when everything applies */
    uint8_t sub;    /* ek_isubtype */
    uint8_t tgt;    /* enum tgt_fmt */
    uint8_t attr;   /* A_* */
    uint32_t flags; /* EK_IF_* */
    uint16_t feat;  /* EK_ISA_FEAT_* all required */
    uint16_t alt;   /* kind of the encoding when a required feature is missing */
} kinfo;

#define BR     EK_ITYPE_BR
#define BRI    EK_ITYPE_BR_INDIRECT
#define OTH    EK_ITYPE_OTHER
#define F_D    (EK_IF_BRANCH)
#define F_I    (EK_IF_BRANCH | EK_IF_INDIRECT)
#define F_C    EK_IF_COND
#define F_L    EK_IF_LINK
#define F_R    EK_IF_RETURN
#define F_E    EK_IF_ERET
#define F_X    EK_IF_EXCGEN
#define F_W    EK_IF_INTERWORK
#define S_L    EK_ISUB_BR_LINK
#define S_R    EK_ISUB_V8_RET
#define S_E    EK_ISUB_V8_ERET
#define S_I    EK_ISUB_V7_IMPLIED_RET
#define FT_PA  EK_ISA_FEAT_PAUTH
#define FT_AR  EK_ISA_FEAT_AR32
#define FT_LOB EK_ISA_FEAT_LOB
#define UND    EK_K_UNDEF

static const kinfo KI[EK_K_COUNT] = {
    [EK_K_NONE] = {"NONE", OTH, 0, 0, 0, 0, 0, 0},
    [EK_K_UNDEF] = {"UNDEF", OTH, 0, 0, 0, EK_IF_UNDEF, 0, 0},
    /* A64 direct */
    [EK_K_A64_B] = {"A64_B", BR, 0, TF_A64_26, 0, F_D, 0, 0},
    [EK_K_A64_BL] = {"A64_BL", BR, S_L, TF_A64_26, 0, F_D | F_L, 0, 0},
    [EK_K_A64_B_COND] = {"A64_B_COND", BR, 0, TF_A64_19, A_CC_FIELD, F_D | F_C, 0, 0},
    [EK_K_A64_BC_COND] = {"A64_BC_COND", BR, 0, TF_A64_19, A_CC_FIELD, F_D | F_C, EK_ISA_FEAT_HBC,
                          UND},
    [EK_K_A64_CBZ] = {"A64_CBZ", BR, 0, TF_A64_19, 0, F_D | F_C, 0, 0},
    [EK_K_A64_TBZ] = {"A64_TBZ", BR, 0, TF_A64_14, 0, F_D | F_C, 0, 0},
    [EK_K_A64_CB_REG] = {"A64_CB_REG", BR, 0, TF_A64_9, A_COND_OCSD_OFF, F_D | F_C,
                         EK_ISA_FEAT_CMPBR, UND},
    [EK_K_A64_CBB] = {"A64_CBB", BR, 0, TF_A64_9, A_COND_OCSD_OFF, F_D | F_C, EK_ISA_FEAT_CMPBR,
                      UND},
    [EK_K_A64_CBH] = {"A64_CBH", BR, 0, TF_A64_9, A_COND_OCSD_OFF, F_D | F_C, EK_ISA_FEAT_CMPBR,
                      UND},
    [EK_K_A64_CB_IMM] = {"A64_CB_IMM", BR, 0, TF_A64_9, A_COND_OCSD_OFF, F_D | F_C,
                         EK_ISA_FEAT_CMPBR, UND},
    /* A64 indirect */
    [EK_K_A64_BR] = {"A64_BR", BRI, 0, 0, 0, F_I, 0, 0},
    [EK_K_A64_BLR] = {"A64_BLR", BRI, S_L, 0, 0, F_I | F_L, 0, 0},
    [EK_K_A64_RET] = {"A64_RET", BRI, S_R, 0, 0, F_I | F_R, 0, 0},
    [EK_K_A64_BRA] = {"A64_BRA", BRI, 0, 0, 0, F_I | EK_IF_PAC, FT_PA, UND},
    [EK_K_A64_BLRA] = {"A64_BLRA", BRI, S_L, 0, 0, F_I | F_L | EK_IF_PAC, FT_PA, UND},
    [EK_K_A64_RETA] = {"A64_RETA", BRI, S_R, 0, 0, F_I | F_R | EK_IF_PAC, FT_PA, UND},
    [EK_K_A64_RETASPPC] = {"A64_RETASPPC", BRI, S_R, 0, 0, F_I | F_R | EK_IF_PAC,
                           EK_ISA_FEAT_PAUTH_LR, UND},
    [EK_K_A64_RETASPPCR] = {"A64_RETASPPCR", BRI, S_R, 0, 0, F_I | F_R | EK_IF_PAC,
                            EK_ISA_FEAT_PAUTH_LR, UND},
    [EK_K_A64_ERET] = {"A64_ERET", BRI, S_E, 0, 0, F_I | F_E, 0, 0},
    [EK_K_A64_ERETA] = {"A64_ERETA", BRI, S_E, 0, 0, F_I | F_E | EK_IF_PAC, FT_PA, UND},
    /* DRPS is UNDEFINED outside Debug state, where nothing is traced */
    [EK_K_A64_DRPS] = {"A64_DRPS", OTH, 0, 0, 0, EK_IF_UNDEF, 0, 0},
    [EK_K_A64_TEXIT] = {"A64_TEXIT", BRI, S_E, 0, 0, F_I | F_E, EK_ISA_FEAT_TEV, UND},
    /* A64 exception generating */
    [EK_K_A64_SVC] = {"A64_SVC", OTH, 0, 0, 0, F_X, 0, 0},
    [EK_K_A64_HVC] = {"A64_HVC", OTH, 0, 0, 0, F_X, 0, 0},
    [EK_K_A64_SMC] = {"A64_SMC", OTH, 0, 0, 0, F_X, 0, 0},
    [EK_K_A64_BRK] = {"A64_BRK", OTH, 0, 0, 0, F_X, 0, 0},
    [EK_K_A64_HLT] = {"A64_HLT", OTH, 0, 0, 0, F_X, 0, 0},
    [EK_K_A64_UDF] = {"A64_UDF", OTH, 0, 0, 0, F_X | EK_IF_UNDEF, 0, 0},
    [EK_K_A64_TCANCEL] = {"A64_TCANCEL", OTH, 0, 0, 0, EK_IF_TME, EK_ISA_FEAT_TME, UND},
    /* A64 system */
    [EK_K_A64_ISB] = {"A64_ISB", EK_ITYPE_ISB, 0, 0, 0, EK_IF_BARRIER, 0, 0},
    [EK_K_A64_DSB] = {"A64_DSB", EK_ITYPE_DSB_DMB, 0, 0, A_DSBDMB, EK_IF_BARRIER, 0, 0},
    [EK_K_A64_DMB] = {"A64_DMB", EK_ITYPE_DSB_DMB, 0, 0, A_DSBDMB, EK_IF_BARRIER, 0, 0},
    [EK_K_A64_SB] = {"A64_SB", OTH, 0, 0, 0, EK_IF_BARRIER, 0, 0},
    [EK_K_A64_WFI] = {"A64_WFI", EK_ITYPE_WFI_WFE, 0, 0, A_WFX, EK_IF_WFX, 0, 0},
    [EK_K_A64_WFE] = {"A64_WFE", EK_ITYPE_WFI_WFE, 0, 0, A_WFX, EK_IF_WFX, 0, 0},
    [EK_K_A64_WFIT] = {"A64_WFIT", EK_ITYPE_WFI_WFE, 0, 0, A_WFX, EK_IF_WFX, EK_ISA_FEAT_WFXT, UND},
    [EK_K_A64_WFET] = {"A64_WFET", EK_ITYPE_WFI_WFE, 0, 0, A_WFX, EK_IF_WFX, EK_ISA_FEAT_WFXT, UND},
    /* without FEAT_TME these are system register accesses / unallocated hints */
    [EK_K_A64_TSTART] = {"A64_TSTART", EK_ITYPE_TSTART, 0, 0, 0, EK_IF_TME, EK_ISA_FEAT_TME,
                         EK_K_NONE},
    [EK_K_A64_TCOMMIT] = {"A64_TCOMMIT", OTH, 0, 0, 0, EK_IF_TME, EK_ISA_FEAT_TME, EK_K_NONE},
    [EK_K_A64_TTEST] = {"A64_TTEST", OTH, 0, 0, 0, EK_IF_TME, EK_ISA_FEAT_TME, EK_K_NONE},
    /* T32 direct */
    [EK_K_T32_B_COND16] = {"T32_B_COND16", BR, 0, TF_T16_8, A_CC_FIELD, F_D | F_C, 0, 0},
    [EK_K_T32_B16] = {"T32_B16", BR, 0, TF_T16_11, 0, F_D, 0, 0},
    [EK_K_T32_B_COND] = {"T32_B_COND", BR, 0, TF_T32_20, A_CC_FIELD, F_D | F_C, 0, 0},
    [EK_K_T32_B] = {"T32_B", BR, 0, TF_T32_24, 0, F_D, 0, 0},
    [EK_K_T32_BL] = {"T32_BL", BR, S_L, TF_T32_24, 0, F_D | F_L, 0, 0},
    [EK_K_T32_BLX_IMM] = {"T32_BLX_IMM", BR, S_L, TF_T32_BLX, 0, F_D | F_L | EK_IF_ISA_SWITCH,
                          FT_AR, UND},
    [EK_K_T32_CBZ] = {"T32_CBZ", BR, 0, TF_T16_CBZ, 0, F_D | F_C, 0, 0},
    [EK_K_T32_LE] = {"T32_LE", BR, 0, TF_T32_LOB_BACK, A_COND_OCSD_OFF, F_D | F_C | EK_IF_LOOP,
                     FT_LOB, UND},
    [EK_K_T32_LE_NOLR] = {"T32_LE_NOLR", BR, 0, TF_T32_LOB_BACK, 0, F_D | EK_IF_LOOP, FT_LOB, UND},
    [EK_K_T32_LETP] = {"T32_LETP", BR, 0, TF_T32_LOB_BACK, A_COND_OCSD_OFF, F_D | F_C | EK_IF_LOOP,
                       FT_LOB, UND},
    [EK_K_T32_WLS] = {"T32_WLS", BR, 0, TF_T32_LOB_FWD, A_COND_OCSD_OFF, F_D | F_C | EK_IF_LOOP,
                      FT_LOB, UND},
    [EK_K_T32_WLSTP] = {"T32_WLSTP", BR, 0, TF_T32_LOB_FWD, A_COND_OCSD_OFF, F_D | F_C | EK_IF_LOOP,
                        FT_LOB, UND},
    [EK_K_T32_DLS] = {"T32_DLS", OTH, 0, 0, 0, EK_IF_LOOP, FT_LOB, UND},
    [EK_K_T32_BF] = {"T32_BF", OTH, 0, 0, 0, EK_IF_LOOP, FT_LOB, UND},
    /* T32 indirect */
    [EK_K_T32_BX] = {"T32_BX", BRI, 0, 0, A_RET_IF_LR, F_I | F_W, 0, 0},
    [EK_K_T32_BLX_REG] = {"T32_BLX_REG", BRI, S_L, 0, 0, F_I | F_L | F_W, 0, 0},
    [EK_K_T32_BXNS] = {"T32_BXNS", BRI, 0, 0, A_RET_IF_LR, F_I | F_W, EK_ISA_FEAT_CMSE,
                       EK_K_T32_BX},
    [EK_K_T32_BLXNS] = {"T32_BLXNS", BRI, S_L, 0, 0, F_I | F_L | F_W, EK_ISA_FEAT_CMSE,
                        EK_K_T32_BLX_REG},
    [EK_K_T32_BXJ] = {"T32_BXJ", BRI, 0, 0, 0, F_I | F_W, FT_AR, UND},
    [EK_K_T32_POP_PC16] = {"T32_POP_PC16", BRI, S_I, 0, 0, F_I | F_R | F_W, 0, 0},
    [EK_K_T32_MOV_PC] = {"T32_MOV_PC", BRI, 0, 0, A_RET_IF_LR, F_I, 0, 0},
    [EK_K_T32_ADD_PC] = {"T32_ADD_PC", BRI, 0, 0, 0, F_I, 0, 0},
    [EK_K_T32_TBB] = {"T32_TBB", BRI, 0, 0, 0, F_I, 0, 0},
    [EK_K_T32_RFE] = {"T32_RFE", BRI, S_E, 0, A_ERET_OCSD, F_I | F_E, FT_AR, UND},
    [EK_K_T32_SUBS_PC_LR] = {"T32_SUBS_PC_LR", BRI, S_E, 0, A_ERET_OCSD, F_I | F_E, FT_AR, UND},
    [EK_K_T32_ERET] = {"T32_ERET", BRI, S_E, 0, A_ERET_OCSD, F_I | F_E, FT_AR, UND},
    [EK_K_T32_LDR_PC] = {"T32_LDR_PC", BRI, 0, 0, 0, F_I | F_W, 0, 0},
    [EK_K_T32_POP_PC] = {"T32_POP_PC", BRI, S_I, 0, 0, F_I | F_R | F_W, 0, 0},
    [EK_K_T32_LDM_PC] = {"T32_LDM_PC", BRI, 0, 0, 0, F_I | F_W, 0, 0},
    [EK_K_T32_POPW_PC] = {"T32_POPW_PC", BRI, S_I, 0, 0, F_I | F_R | F_W, 0, 0},
    [EK_K_T32_IT] = {"T32_IT", OTH, 0, 0, 0, EK_IF_IT, 0, 0},
    [EK_K_T32_SVC] = {"T32_SVC", OTH, 0, 0, 0, F_X, 0, 0},
    [EK_K_T32_UDF] = {"T32_UDF", OTH, 0, 0, 0, F_X | EK_IF_UNDEF, 0, 0},
    [EK_K_T32_BKPT] = {"T32_BKPT", OTH, 0, 0, 0, F_X, 0, 0},
    [EK_K_T32_HVC] = {"T32_HVC", OTH, 0, 0, 0, F_X, FT_AR, UND},
    [EK_K_T32_SMC] = {"T32_SMC", OTH, 0, 0, 0, F_X, FT_AR, UND},
    [EK_K_T32_ISB] = {"T32_ISB", EK_ITYPE_ISB, 0, 0, 0, EK_IF_BARRIER, 0, 0},
    [EK_K_T32_DSB] = {"T32_DSB", EK_ITYPE_DSB_DMB, 0, 0, A_DSBDMB, EK_IF_BARRIER, 0, 0},
    [EK_K_T32_DMB] = {"T32_DMB", EK_ITYPE_DSB_DMB, 0, 0, A_DSBDMB, EK_IF_BARRIER, 0, 0},
    [EK_K_T32_WFI] = {"T32_WFI", EK_ITYPE_WFI_WFE, 0, 0, A_WFX, EK_IF_WFX, 0, 0},
    [EK_K_T32_WFE] = {"T32_WFE", EK_ITYPE_WFI_WFE, 0, 0, A_WFX, EK_IF_WFX, 0, 0},
    /* A32 */
    [EK_K_A32_B] = {"A32_B", BR, 0, TF_A32_24, 0, F_D, 0, 0},
    [EK_K_A32_BL] = {"A32_BL", BR, S_L, TF_A32_24, 0, F_D | F_L, 0, 0},
    [EK_K_A32_BLX_IMM] = {"A32_BLX_IMM", BR, S_L, TF_A32_BLX, 0, F_D | F_L | EK_IF_ISA_SWITCH, 0,
                          0},
    [EK_K_A32_BX] = {"A32_BX", BRI, 0, 0, A_RET_IF_LR, F_I | F_W, 0, 0},
    [EK_K_A32_BLX_REG] = {"A32_BLX_REG", BRI, S_L, 0, 0, F_I | F_L | F_W, 0, 0},
    [EK_K_A32_BXJ] = {"A32_BXJ", BRI, 0, 0, 0, F_I | F_W, 0, 0},
    [EK_K_A32_LDM_PC] = {"A32_LDM_PC", BRI, 0, 0, 0, F_I | F_W, 0, 0},
    [EK_K_A32_POP_PC] = {"A32_POP_PC", BRI, S_I, 0, 0, F_I | F_R | F_W, 0, 0},
    [EK_K_A32_LDM_PC_ERET] = {"A32_LDM_PC_ERET", BRI, S_E, 0, A_ERET_OCSD, F_I | F_E, 0, 0},
    [EK_K_A32_LDR_PC] = {"A32_LDR_PC", BRI, 0, 0, 0, F_I | F_W, 0, 0},
    [EK_K_A32_POP1_PC] = {"A32_POP1_PC", BRI, S_I, 0, 0, F_I | F_R | F_W, 0, 0},
    [EK_K_A32_MOV_PC] = {"A32_MOV_PC", BRI, 0, 0, 0, F_I | F_W, 0, 0},
    [EK_K_A32_MOV_PC_LR] = {"A32_MOV_PC_LR", BRI, S_I, 0, 0, F_I | F_R | F_W, 0, 0},
    [EK_K_A32_ALU_PC] = {"A32_ALU_PC", BRI, 0, 0, 0, F_I | F_W, 0, 0},
    [EK_K_A32_ALU_PC_ERET] = {"A32_ALU_PC_ERET", BRI, S_E, 0, A_ERET_OCSD, F_I | F_E, 0, 0},
    [EK_K_A32_RFE] = {"A32_RFE", BRI, S_E, 0, A_ERET_OCSD, F_I | F_E, 0, 0},
    [EK_K_A32_ERET] = {"A32_ERET", BRI, S_E, 0, A_ERET_OCSD | A_OCSD_OTHER, F_I | F_E, 0, 0},
    [EK_K_A32_SVC] = {"A32_SVC", OTH, 0, 0, 0, F_X, 0, 0},
    [EK_K_A32_HVC] = {"A32_HVC", OTH, 0, 0, 0, F_X, 0, 0},
    [EK_K_A32_SMC] = {"A32_SMC", OTH, 0, 0, 0, F_X, 0, 0},
    [EK_K_A32_BKPT] = {"A32_BKPT", OTH, 0, 0, 0, F_X, 0, 0},
    [EK_K_A32_UDF] = {"A32_UDF", OTH, 0, 0, 0, F_X | EK_IF_UNDEF, 0, 0},
    [EK_K_A32_ISB] = {"A32_ISB", EK_ITYPE_ISB, 0, 0, 0, EK_IF_BARRIER, 0, 0},
    [EK_K_A32_DSB] = {"A32_DSB", EK_ITYPE_DSB_DMB, 0, 0, A_DSBDMB, EK_IF_BARRIER, 0, 0},
    [EK_K_A32_DMB] = {"A32_DMB", EK_ITYPE_DSB_DMB, 0, 0, A_DSBDMB, EK_IF_BARRIER, 0, 0},
    [EK_K_A32_WFI] = {"A32_WFI", EK_ITYPE_WFI_WFE, 0, 0, A_WFX, EK_IF_WFX, 0, 0},
    [EK_K_A32_WFE] = {"A32_WFE", EK_ITYPE_WFI_WFE, 0, 0, A_WFX, EK_IF_WFX, 0, 0},
};

/* ---- pattern tables ---------------------------------------------------------------------- */

typedef struct pat {
    uint32_t mask, value;
    uint16_t kind;
} pat;

/* First matching row wins; a table ends with a {0, 0, default} row. */
static unsigned match(const pat *t, uint32_t w)
{
    while ((w & t->mask) != t->value)
        t++;
    return t->kind;
}

/* A64: unconditional branch (register), top byte 0xd6/0xd7. */
static const pat A64_BRREG[] = {
    {0xfffffc1f, 0xd61f0000, EK_K_A64_BR},
    {0xfffffc1f, 0xd63f0000, EK_K_A64_BLR},
    {0xfffffc1f, 0xd65f0000, EK_K_A64_RET},
    {0xffffffff, 0xd69f03e0, EK_K_A64_ERET},
    {0xffffffff, 0xd6bf03e0, EK_K_A64_DRPS},
    {0xfffffbff, 0xd65f0bff, EK_K_A64_RETA},      /* RETAA, RETAB */
    {0xfffffbe0, 0xd65f0be0, EK_K_A64_RETASPPCR}, /* RETAASPPCR Xm, Xm != XZR */
    {0xfffffbff, 0xd69f0bff, EK_K_A64_ERETA},     /* ERETAA, ERETAB */
    {0xfffff81f, 0xd61f081f, EK_K_A64_BRA},       /* BRAAZ, BRABZ */
    {0xfffff81f, 0xd63f081f, EK_K_A64_BLRA},      /* BLRAAZ, BLRABZ */
    {0xfffff800, 0xd71f0800, EK_K_A64_BRA},       /* BRAA, BRAB */
    {0xfffff800, 0xd73f0800, EK_K_A64_BLRA},      /* BLRAA, BLRAB */
    {0xfffffbff, 0xd6ff03e0, EK_K_A64_TEXIT},     /* TEXIT, TEXIT NB */
    {0, 0, EK_K_UNDEF},
};

/* A64: exception generation, top byte 0xd4. */
static const pat A64_EXC[] = {
    {0xffe0001f, 0xd4000001, EK_K_A64_SVC},
    {0xffe0001f, 0xd4000002, EK_K_A64_HVC},
    {0xffe0001f, 0xd4000003, EK_K_A64_SMC},
    {0xffe0001f, 0xd4200000, EK_K_A64_BRK},
    {0xffe0001f, 0xd4400000, EK_K_A64_HLT},
    {0xffe0001f, 0xd4600000, EK_K_A64_TCANCEL},
    {0xffe0001c, 0xd4a00000, EK_K_NONE}, /* DCPS1..3 (Debug state only) */
    {0, 0, EK_K_UNDEF},
};

/* A64: system instructions, top byte 0xd5. Unallocated hints and system register accesses
 * are ordinary instructions here (no exhaustive UNDEF check outside the branch groups). */
static const pat A64_SYS[] = {
    {0xffffffff, 0xd503207f, EK_K_A64_WFI},
    {0xffffffff, 0xd503205f, EK_K_A64_WFE},
    {0xffffffe0, 0xd5031000, EK_K_A64_WFET},
    {0xffffffe0, 0xd5031020, EK_K_A64_WFIT},
    {0xfffff0ff, 0xd50330df, EK_K_A64_ISB},
    {0xfffff0ff, 0xd503309f, EK_K_A64_DSB},
    {0xfffff0ff, 0xd50330bf, EK_K_A64_DMB},
    {0xfffff3ff, 0xd503323f, EK_K_A64_DSB}, /* DSB nXS (FEAT_XS) */
    {0xffffffff, 0xd50330ff, EK_K_A64_SB},
    {0xffffffff, 0xd503307f, EK_K_A64_TCOMMIT},
    {0xffffffe0, 0xd5233060, EK_K_A64_TSTART},
    {0xffffffe0, 0xd5233160, EK_K_A64_TTEST},
    {0, 0, EK_K_NONE},
};

/* Top byte of an A64 word -> kind. The branch, exception and system group is bits 28:26 = 101:
 * eight runs of four bytes (x00101xx .. x11101xx); everything else is an ordinary instruction
 * (the UDF range 0x0000xxxx is checked before). A64_MORE: decode further in a64_more(). */
#define A64_MORE EK_K_COUNT
#define R4(k)    k, k, k, k
#define Z8       R4(0), R4(0)
#define Z20      Z8, Z8, R4(0)
static const uint8_t A64_TOP[256] = {
    /* 0x00 */ Z20, R4(EK_K_A64_B),  Z8,
    /* 0x20 */ Z20, EK_K_A64_CBZ,    EK_K_A64_CBZ, EK_K_A64_TBZ, EK_K_A64_TBZ, Z8,
    /* 0x40 */ Z20, EK_K_A64_B_COND, A64_MORE,     EK_K_UNDEF,   EK_K_UNDEF,   Z8,
    /* 0x60 */ Z20, A64_MORE,        A64_MORE,     EK_K_UNDEF,   EK_K_UNDEF,   Z8,
    /* 0x80 */ Z20, R4(EK_K_A64_BL), Z8,
    /* 0xa0 */ Z20, EK_K_A64_CBZ,    EK_K_A64_CBZ, EK_K_A64_TBZ, EK_K_A64_TBZ, Z8,
    /* 0xc0 */ Z20, R4(A64_MORE),    Z8,
    /* 0xe0 */ Z20, A64_MORE,        A64_MORE,     EK_K_UNDEF,   EK_K_UNDEF,   Z8,
};
_Static_assert(EK_K_COUNT < 256, "kinds fit A64_TOP");
_Static_assert(EK_K_A64_BC_COND == EK_K_A64_B_COND + 1, "BC.cond follows B.cond");
#undef R4
#undef Z8
#undef Z20

static unsigned a64_more(uint32_t w, uint32_t opts)
{
    switch (w >> 24) {
    case 0x55: return (w & 0xffc0001fu) == 0x5500001fu ? EK_K_A64_RETASPPC : EK_K_UNDEF;
    case 0xd4: return match(A64_EXC, w);
    case 0xd5: return match(A64_SYS, w);
    case 0xd6:
    case 0xd7: return match(A64_BRREG, w);
    default: { /* 0x74, 0x75, 0xf4, 0xf5: FEAT_CMPBR */
        unsigned cc = (w >> 21) & 7u, kind;
        if ((w >> 24) & 1u) /* immediate: bit 14 must be 0 */
            kind = (w & 0x4000u) ? EK_K_UNDEF : EK_K_A64_CB_IMM;
        else {
            unsigned op = (w >> 14) & 3u; /* 00 CB, 10 CBB, 11 CBH (32-bit only), 01 - */
            if (op == 0)
                kind = EK_K_A64_CB_REG;
            else if (op == 1 || (w >> 31))
                kind = EK_K_UNDEF;
            else
                kind = op == 2 ? EK_K_A64_CBB : EK_K_A64_CBH;
        }
        if (kind != EK_K_UNDEF && (cc == 4 || cc == 5) && !(opts & EK_ISA_OCSD_CMPBR_CC))
            kind = EK_K_UNDEF;
        return kind;
    }
    }
}

static inline unsigned a64_kind(uint32_t w, uint32_t opts)
{
    unsigned kind = A64_TOP[w >> 24];
    if ((w >> 16) == 0) return EK_K_A64_UDF; /* 0x0000xxxx: UDF #imm16 */
    if (kind == EK_K_A64_B_COND)
        kind += (w >> 4) & 1u; /* BC.cond */
    else if (kind == A64_MORE)
        kind = a64_more(w, opts);
    return kind;
}

/* T32, as op = hw1 << 16 | hw2 (hw2 = 0 for a 16-bit instruction). */
static const pat T32_16[] = {
    {0xff000000, 0xde000000, EK_K_T32_UDF},
    {0xff000000, 0xdf000000, EK_K_T32_SVC},
    {0xf0000000, 0xd0000000, EK_K_T32_B_COND16},
    {0xf8000000, 0xe0000000, EK_K_T32_B16},
    {0xf5000000, 0xb1000000, EK_K_T32_CBZ},
    {0xff870000, 0x47000000, EK_K_T32_BX},
    {0xff870000, 0x47800000, EK_K_T32_BLX_REG},
    {0xff870000, 0x47040000, EK_K_T32_BXNS},
    {0xff870000, 0x47840000, EK_K_T32_BLXNS},
    {0xff800000, 0x47800000, EK_K_T32_BLX_REG}, /* SBZ bits 1:0 set: UNPREDICTABLE */
    {0xff000000, 0x47000000, EK_K_T32_BX},
    {0xff000000, 0xbd000000, EK_K_T32_POP_PC16},
    {0xff870000, 0x46870000, EK_K_T32_MOV_PC},
    {0xff870000, 0x44870000, EK_K_T32_ADD_PC},
    {0xffff0000, 0xbf200000, EK_K_T32_WFE},
    {0xffff0000, 0xbf300000, EK_K_T32_WFI},
    {0xff000000, 0xbe000000, EK_K_T32_BKPT},
    {0, 0, EK_K_NONE},
};

/* hw1 0xf000..0xf7ff with hw2 bit 15 set: branches and miscellaneous control. */
static const pat T32_BRMISC[] = {
    {0xf800d000, 0xf0009000, EK_K_T32_B},
    {0xf800d000, 0xf000d000, EK_K_T32_BL},
    {0xf800d001, 0xf000c000, EK_K_T32_BLX_IMM},
    /* hw2 bit 0 set: Armv8.1-M branch future and low-overhead loops */
    {0xfffff001, 0xf00fc001, EK_K_T32_LE},
    {0xfffff001, 0xf02fc001, EK_K_T32_LE_NOLR},
    {0xfffff001, 0xf01fc001, EK_K_T32_LETP},
    {0xfff0f001, 0xf040c001, EK_K_T32_WLS},
    {0xffc0f001, 0xf000c001, EK_K_T32_WLSTP},
    {0xff80f001, 0xf000e001, EK_K_T32_DLS}, /* DLS, DLSTP, LCTP */
    {0xf900d001, 0xf100c001, EK_K_T32_BF},  /* BF, BFX, BFL, BFLX, BFCSEL */
    {0xf800c001, 0xf000c001, EK_K_UNDEF},
    /* hw2 = 10x0: B<c> T3 unless cond is 111x, then miscellaneous control */
    {0xfff0d000, 0xf3c08000, EK_K_T32_BXJ},
    {0xffffffff, 0xf3de8f00, EK_K_T32_ERET}, /* SUBS PC, LR, #0 */
    {0xfff0d000, 0xf3d08000, EK_K_T32_SUBS_PC_LR},
    {0xfffffff0, 0xf3bf8f40, EK_K_T32_DSB},
    {0xfffffff0, 0xf3bf8f50, EK_K_T32_DMB},
    {0xfffffff0, 0xf3bf8f60, EK_K_T32_ISB},
    {0xffffffff, 0xf3af8002, EK_K_T32_WFE},
    {0xffffffff, 0xf3af8003, EK_K_T32_WFI},
    {0xfff0f000, 0xf7f0a000, EK_K_T32_UDF},
    {0xfff0f000, 0xf7f08000, EK_K_T32_SMC},
    {0xfff0f000, 0xf7e08000, EK_K_T32_HVC},
    {0xf380d000, 0xf3808000, EK_K_NONE}, /* rest of miscellaneous control */
    {0xf800d000, 0xf0008000, EK_K_T32_B_COND},
    {0, 0, EK_K_NONE},
};

/* hw1 0xe800..0xefff */
static const pat T32_LDM[] = {
    {0xffd00000, 0xe8100000, EK_K_T32_RFE},     {0xffd00000, 0xe9900000, EK_K_T32_RFE},
    {0xffff8000, 0xe8bd8000, EK_K_T32_POPW_PC}, {0xfe508000, 0xe8108000, EK_K_T32_LDM_PC},
    {0xfff0ffe0, 0xe8d0f000, EK_K_T32_TBB},     {0, 0, EK_K_NONE},
};

/* hw1 0xf800..0xffff */
static const pat T32_LDR[] = {
    {0xfff0f000, 0xf8d0f000, EK_K_T32_LDR_PC}, /* LDR PC, [Rn, #imm12] */
    {0xff7ff000, 0xf85ff000, EK_K_T32_LDR_PC}, /* LDR PC, literal */
    {0xffffff00, 0xf85dfb00, EK_K_T32_POP_PC}, /* LDR PC, [SP], #imm8 */
    {0xfff0f800, 0xf850f800, EK_K_T32_LDR_PC}, /* LDR PC, [Rn, #+/-imm8]{!} */
    {0xfff0ffc0, 0xf850f000, EK_K_T32_LDR_PC}, /* LDR PC, [Rn, Rm, LSL #n] */
    {0, 0, EK_K_NONE},
};

static unsigned t32_kind(uint32_t op, unsigned size)
{
    if (size == 2) {
        unsigned k = match(T32_16, op);
        if (k == EK_K_NONE && (op >> 24) == 0xbfu && (op & 0x000f0000u)) k = EK_K_T32_IT;
        return k;
    }
    switch (op >> 27) {
    case 0x1d:                                   /* 0xe800.. */
        if ((op & 0xffff0f00u) == 0xee070f00u) { /* MCR p15, 0, Rt, c7, ... barriers */
            switch (op & 0xffu) {
            case 0x9a: return EK_K_T32_DSB;
            case 0xba: return EK_K_T32_DMB;
            case 0x95: return EK_K_T32_ISB;
            }
            return EK_K_NONE;
        }
        return match(T32_LDM, op);
    case 0x1e: /* 0xf000.. */ return (op & 0x8000u) ? match(T32_BRMISC, op) : EK_K_NONE;
    default: /* 0x1f: 0xf800.. */ return match(T32_LDR, op);
    }
}

/* A32 in OpenCSD's order (cond field 1111 only reaches the first and the barrier rows). */
static const pat A32_TAB[] = {
    {0xfe500000, 0xf8100000, EK_K_A32_RFE},
    {0xfe000000, 0xfa000000, EK_K_A32_BLX_IMM},
    {0xfff000f0, 0xf5700040, EK_K_A32_DSB},
    {0xfff000f0, 0xf5700050, EK_K_A32_DMB},
    {0xfff000f0, 0xf5700060, EK_K_A32_ISB},
    {0x0fff0fff, 0x0e070f9a, EK_K_A32_DSB}, /* MCR p15,0,Rt,c7,c10,4 */
    {0x0fff0fff, 0x0e070fba, EK_K_A32_DMB}, /* MCR p15,0,Rt,c7,c10,5 */
    {0x0fff0fff, 0x0e070f95, EK_K_A32_ISB}, /* MCR p15,0,Rt,c7,c5,4 */
    {0xf0000000, 0xf0000000, EK_K_NONE},    /* rest of the unconditional space */
    {0x0ff000f0, 0x01200010, EK_K_A32_BX},
    {0x0ff000f0, 0x01200030, EK_K_A32_BLX_REG},
    {0x0ff000f0, 0x01200020, EK_K_A32_BXJ},
    {0x0fffa000, 0x08bd8000, EK_K_A32_POP_PC},      /* LDMIA SP!, {..,pc} without SP */
    {0x0e508000, 0x08508000, EK_K_A32_LDM_PC_ERET}, /* LDM Rn{!}, {..,pc}^ */
    {0x0e108000, 0x08108000, EK_K_A32_LDM_PC},
    {0x0ffff000, 0x049df000, EK_K_A32_POP1_PC}, /* LDR PC, [SP], #+imm12 */
    {0x0e50f000, 0x0410f000, EK_K_A32_LDR_PC},
    {0x0e50f010, 0x0610f000, EK_K_A32_LDR_PC},
    {0x0ff0ffff, 0x01a0f00e, EK_K_A32_MOV_PC_LR},   /* MOV PC, LR */
    {0x0ff0f000, 0x01b0f000, EK_K_A32_ALU_PC_ERET}, /* MOVS PC, ... */
    {0x0fe0f000, 0x01a0f000, EK_K_A32_MOV_PC},
    {0x0ff000ff, 0x0160006e, EK_K_A32_ERET},
    {0x0ff000f0, 0x01200070, EK_K_A32_BKPT},
    {0x0ff000f0, 0x01400070, EK_K_A32_HVC},
    {0x0ff000f0, 0x01600070, EK_K_A32_SMC},
    {0x0f900080, 0x01000000, EK_K_NONE},            /* miscellaneous (MRS, MSR, CLZ, ...) */
    {0x0f9000f0, 0x01800090, EK_K_NONE},            /* exclusive loads/stores */
    {0x0ffffffe, 0x0320f002, EK_K_A32_WFE},         /* WFE, WFI: fixed below */
    {0x0fb0f000, 0x0320f000, EK_K_NONE},            /* MSR (immediate), hints */
    {0x0f90f000, 0x0310f000, EK_K_NONE},            /* TST/TEQ/CMP/CMN (immediate) */
    {0x0e10f000, 0x0210f000, EK_K_A32_ALU_PC_ERET}, /* <op>S PC, Rn, #imm */
    {0x0e00f000, 0x0200f000, EK_K_A32_ALU_PC},
    {0x0e10f090, 0x0010f090, EK_K_A32_ALU_PC},      /* multiply / extra load with PC: no S */
    {0x0f90f000, 0x0110f000, EK_K_A32_ALU_PC},      /* TST/TEQ/CMP/CMN (register), Rd = 1111 */
    {0x0e10f000, 0x0010f000, EK_K_A32_ALU_PC_ERET}, /* <op>S PC, Rn, Rm{, shift} */
    {0x0e00f000, 0x0000f000, EK_K_A32_ALU_PC},
    {0x0f000000, 0x0a000000, EK_K_A32_B},
    {0x0f000000, 0x0b000000, EK_K_A32_BL},
    {0x0f000000, 0x0f000000, EK_K_A32_SVC},
    {0x0ff000f0, 0x07f000f0, EK_K_A32_UDF},
    {0, 0, EK_K_NONE},
};

static unsigned a32_kind(uint32_t w)
{
    unsigned k = match(A32_TAB, w);
    if (k == EK_K_A32_WFE && (w & 1u)) return EK_K_A32_WFI;
    if (k == EK_K_A32_UDF && (w >> 28) != 0xeu)
        return EK_K_NONE; /* UDF is only allocated with cond = AL */
    return k;
}

/* ---- targets ----------------------------------------------------------------------------- */

static inline int64_t sext(uint32_t v, unsigned bits)
{
    uint32_t m = 1u << (bits - 1);
    return (int64_t)(int32_t)((v ^ m) - m);
}

static uint64_t target_of(unsigned fmt, uint32_t w, uint64_t addr, uint8_t *next_isa)
{
    uint32_t a32 = (uint32_t)addr, hw2 = w & 0xffffu, hw1 = w >> 16;
    switch (fmt) {
    case TF_A64_26: return addr + (uint64_t)(sext(w & 0x3ffffffu, 26) * 4);
    case TF_A64_19: return addr + (uint64_t)(sext((w >> 5) & 0x7ffffu, 19) * 4);
    case TF_A64_14: return addr + (uint64_t)(sext((w >> 5) & 0x3fffu, 14) * 4);
    case TF_A64_9: return addr + (uint64_t)(sext((w >> 5) & 0x1ffu, 9) * 4);
    case TF_T16_8: return (uint32_t)(a32 + 4 + (uint32_t)sext((hw1 & 0xffu) << 1, 9));
    case TF_T16_11: return (uint32_t)(a32 + 4 + (uint32_t)sext((hw1 & 0x7ffu) << 1, 12));
    case TF_T16_CBZ:
        return (uint32_t)(a32 + 4 + (((hw1 >> 9) & 1u) << 6) + (((hw1 >> 3) & 0x1fu) << 1));
    case TF_T32_20: {
        uint32_t s = (hw1 >> 10) & 1u, j1 = (hw2 >> 13) & 1u, j2 = (hw2 >> 11) & 1u;
        uint32_t v = s << 20 | j2 << 19 | j1 << 18 | (hw1 & 0x3fu) << 12 | (hw2 & 0x7ffu) << 1;
        return (uint32_t)(a32 + 4 + (uint32_t)sext(v, 21));
    }
    case TF_T32_24:
    case TF_T32_BLX: {
        uint32_t s = (hw1 >> 10) & 1u;
        uint32_t i1 = ~(((hw2 >> 13) & 1u) ^ s) & 1u, i2 = ~(((hw2 >> 11) & 1u) ^ s) & 1u;
        uint32_t v = s << 24 | i1 << 23 | i2 << 22 | (hw1 & 0x3ffu) << 12 | (hw2 & 0x7ffu) << 1;
        if (fmt == TF_T32_24) return (uint32_t)(a32 + 4 + (uint32_t)sext(v, 25));
        *next_isa = EK_ISA_A32;
        return (uint32_t)(((a32 + 4) & ~3u) + (uint32_t)sext(v & ~3u, 25));
    }
    case TF_T32_LOB_BACK:
    case TF_T32_LOB_FWD: {
        uint32_t off = ((hw2 >> 1) & 0x3ffu) << 2 | ((hw2 >> 11) & 1u) << 1;
        return (uint32_t)(fmt == TF_T32_LOB_FWD ? a32 + 4 + off : a32 + 4 - off);
    }
    case TF_A32_24: return (uint32_t)(a32 + 8 + (uint32_t)(sext(w & 0xffffffu, 24) * 4));
    case TF_A32_BLX:
        *next_isa = EK_ISA_T32;
        return (uint32_t)(a32 + 8 + (uint32_t)(sext(w & 0xffffffu, 24) * 4) + ((w >> 23) & 2u));
    default: return 0;
    }
}

/* ---- kind -> ek_insn ----------------------------------------------------------------------- */

static void fill(unsigned kind, uint32_t w, ek_isa isa, uint64_t addr, unsigned size,
                 const ek_isa_cfg *cfg, ek_insn *out)
{
    const kinfo *ki = &KI[kind];
    uint32_t opts = cfg->opts;

    if (ki->feat & ~cfg->features) {
        kind = ki->alt;
        ki = &KI[kind];
    }
    out->target = 0;
    out->flags = ki->flags;
    out->kind = (uint16_t)kind;
    out->size = (uint8_t)size;
    out->type = ki->type;
    out->subtype = ki->sub;
    out->next_isa = (uint8_t)isa;
    out->cond = EK_COND_AL;
    out->it_mask = 0;

    if (ki->flags & EK_IF_COND) out->cond = EK_COND_REG;
    if (ki->tgt) out->target = target_of(ki->tgt, w, addr, &out->next_isa);
    if (ki->attr & A_CC_FIELD) {
        unsigned cc = isa == EK_ISA_A64 ? (w & 0xfu)
                      : size == 2       ? ((w >> 24) & 0xfu)
                                        : ((w >> 22) & 0xfu);
        out->cond = (uint8_t)cc;
        /* A64 B.AL / B.NV always branch; OpenCSD calls every B.cond conditional */
        if (cc >= 14 && !(opts & EK_ISA_OCSD_COND)) {
            out->flags &= ~EK_IF_COND;
            out->cond = EK_COND_AL;
        }
    }
    if (ki->attr) {
        if ((ki->attr & A_COND_OCSD_OFF) && (opts & EK_ISA_OCSD_COND)) {
            out->flags &= ~EK_IF_COND;
            out->cond = EK_COND_AL;
        }
        if ((ki->attr & A_ERET_OCSD) && (opts & EK_ISA_OCSD_ERET)) {
            out->subtype = EK_ISUB_NONE;
            if (ki->attr & A_OCSD_OTHER) {
                out->type = EK_ITYPE_OTHER;
                out->flags &= ~(EK_IF_BRANCH | EK_IF_INDIRECT);
            }
        }
        if ((ki->attr & A_WFX) && !(opts & EK_ISA_OPT_WFX_BRANCH)) out->type = EK_ITYPE_OTHER;
        if ((ki->attr & A_DSBDMB) && !(opts & EK_ISA_OPT_DSB_DMB_WAYPOINT))
            out->type = EK_ITYPE_OTHER;
        if (ki->attr & A_RET_IF_LR) {
            unsigned reg = isa == EK_ISA_A32 ? (w & 0xfu) : ((w >> 19) & 0xfu);
            if (reg == 14) {
                out->subtype = EK_ISUB_V7_IMPLIED_RET;
                out->flags |= EK_IF_RETURN;
            }
        }
    }
    if (kind == EK_K_T32_IT) out->it_mask = (uint8_t)(w >> 16);
    if (kind == EK_K_A64_DSB && (w & 0xe0u) == 0x20u && (opts & EK_ISA_OCSD_BARRIER)) {
        out->type = EK_ITYPE_OTHER; /* DSB nXS: not a barrier for OpenCSD */
        out->flags &= ~EK_IF_BARRIER;
    }
}

/* A64 fast fill: branch-free for every kind without special attributes (B, BL, B.cond, CBZ,
 * TBZ, BR, BLR, RET, ...), which is nearly every A64 waypoint in real code. */
static const uint8_t A64_SL[5] = {0, 6, 8, 13, 18}; /* TF_NONE, TF_A64_26, _19, _14, _9 */
static const uint8_t A64_SR[5] = {0, 4, 11, 16, 21};

static inline void fill_a64(unsigned kind, uint32_t w, uint64_t addr, const ek_isa_cfg *cfg,
                            ek_insn *out)
{
    const kinfo *ki = &KI[kind];
    unsigned tf = ki->tgt;
    if ((ki->feat & ~cfg->features) | (ki->attr & ~A_CC_FIELD) | (tf > TF_A64_9)) {
        fill(kind, w, EK_ISA_A64, addr, 4, cfg, out);
        return;
    }
    int64_t off = ((int32_t)(w << A64_SL[tf]) >> A64_SR[tf]) & ~(int64_t)3;
    uint32_t flags = ki->flags;
    unsigned cond = EK_COND_AL + ((flags & EK_IF_COND) ? 2u : 0u); /* AL or REG */
    if (ki->attr & A_CC_FIELD) { /* B.cond, BC.cond; B.AL / B.NV always branch */
        unsigned cc = w & 0xfu;
        int always = cc >= 14 && !(cfg->opts & EK_ISA_OCSD_COND);
        cond = always ? EK_COND_AL : cc;
        flags &= always ? ~EK_IF_COND : ~0u;
    }
    out->target = (addr + (uint64_t)off) & (tf ? ~(uint64_t)0 : 0);
    out->flags = flags;
    out->kind = (uint16_t)kind;
    out->size = 4;
    out->type = ki->type;
    out->subtype = ki->sub;
    out->next_isa = EK_ISA_A64;
    out->cond = (uint8_t)cond;
    out->it_mask = 0;
}

int ek_isa_classify(uint32_t word, ek_isa isa, uint64_t addr, const ek_isa_cfg *cfg, ek_insn *out)
{
    unsigned kind, size = 4;
    uint32_t w = word;

    switch (isa) {
    case EK_ISA_A64:
        if (ek_isa_a64_is_plain(word)) {
            memset(out, 0, sizeof *out);
            out->size = 4;
            out->next_isa = EK_ISA_A64;
            out->cond = EK_COND_AL;
            return 4;
        }
        fill_a64(a64_kind(word, cfg->opts), word, addr, cfg, out);
        return 4;
    case EK_ISA_T32:
        size = ek_isa_t32_size((uint16_t)word);
        w = size == 4 ? (word << 16 | word >> 16) : (word & 0xffffu) << 16;
        kind = t32_kind(w, size);
        break;
    case EK_ISA_A32: kind = a32_kind(word); break;
    default: memset(out, 0, sizeof *out); return EK_ERR_ARG;
    }
    fill(kind, w, isa, addr, size, cfg, out);
    if (isa == EK_ISA_A32 && (word >> 28) < 14u) { /* every A32 instruction with cond != AL */
        out->flags |= EK_IF_COND;
        out->cond = (uint8_t)(word >> 28);
    }
    return (int)size;
}

/* ---- configuration ------------------------------------------------------------------------ */

uint32_t ek_isa_arch_features(ek_arch arch, ek_arch_profile profile)
{
    const uint32_t a_later = EK_ISA_FEAT_PAUTH | EK_ISA_FEAT_HBC | EK_ISA_FEAT_WFXT;
    const uint32_t a_v9 =
        a_later | EK_ISA_FEAT_CMPBR | EK_ISA_FEAT_PAUTH_LR | EK_ISA_FEAT_TME | EK_ISA_FEAT_TEV;
    switch (arch) {
    case EK_ARCH_V7A:
    case EK_ARCH_V7R:
    case EK_ARCH_V8A:
    case EK_ARCH_V8R: return EK_ISA_FEAT_AR32;
    case EK_ARCH_V7M: return 0;
    case EK_ARCH_V8_3A: return EK_ISA_FEAT_AR32 | a_later;
    case EK_ARCH_V8M: return EK_ISA_FEAT_CMSE;
    case EK_ARCH_V8_1M: return EK_ISA_FEAT_CMSE | EK_ISA_FEAT_LOB;
    case EK_ARCH_V9A: return EK_ISA_FEAT_AR32 | a_v9;
    default:
        if (profile == EK_PROFILE_M) return EK_ISA_FEAT_CMSE | EK_ISA_FEAT_LOB;
        return EK_ISA_FEAT_AR32 | a_v9;
    }
}

void ek_isa_cfg_init(ek_isa_cfg *cfg, ek_arch arch, ek_arch_profile profile, uint32_t opts)
{
    cfg->features = ek_isa_arch_features(arch, profile);
    cfg->opts = opts;
}

void ek_isa_cfg_ocsd(ek_isa_cfg *cfg, unsigned ocsd_arch, int m_profile, uint32_t extra_opts)
{
    /* OpenCSD 1.8.0 decodes BC.cond, CB<cc> and the v8.1-M loop branches without any check,
     * the pointer-authentication family (with RETA*SPPC and TEXIT) from ARCH_V8r3, WFIT/WFET
     * and TSTART from ARCH_AA64, and never looks at the profile. */
    uint32_t f = EK_ISA_FEAT_HBC | EK_ISA_FEAT_CMPBR | EK_ISA_FEAT_LOB | EK_ISA_FEAT_AR32;
    if (ocsd_arch >= 0x0803) f |= EK_ISA_FEAT_PAUTH | EK_ISA_FEAT_PAUTH_LR | EK_ISA_FEAT_TEV;
    if (ocsd_arch >= 0x0864) f |= EK_ISA_FEAT_WFXT | EK_ISA_FEAT_TME;
    if (m_profile && ocsd_arch >= 0x0800)
        f |= EK_ISA_FEAT_CMSE; /* only changes the kind name of BXNS/BLXNS */
    cfg->features = f;
    cfg->opts = EK_ISA_OCSD_ALL | extra_opts;
}

/* ---- IT blocks ------------------------------------------------------------------------------ */

void ek_isa_it_step(ek_it_state *st, ek_insn *insn, const ek_isa_cfg *cfg)
{
    if (st->left == 0) {
        if (insn->kind == EK_K_T32_IT && insn->type == EK_ITYPE_OTHER) {
            unsigned mask = insn->it_mask & 0xfu;
            st->itstate = insn->it_mask;
            st->left = (uint8_t)(mask & 1u ? 4 : mask & 2u ? 3 : mask & 4u ? 2 : 1);
        }
        return;
    }
    unsigned cond = st->itstate >> 4;
    if (cfg->opts & EK_ISA_OCSD_COND) {
        insn->flags |= EK_IF_COND; /* OpenCSD: the whole block, even IT AL */
        if (cond < 14) insn->cond = (uint8_t)cond;
    } else if (cond < 14) {
        insn->flags |= EK_IF_COND;
        insn->cond = (uint8_t)cond;
    }
    if ((st->itstate & 7u) == 0)
        st->itstate = 0;
    else
        st->itstate = (uint8_t)((st->itstate & 0xe0u) | ((st->itstate << 1) & 0x1fu));
    st->left--;
}

/* ---- scanning ------------------------------------------------------------------------------- */

static inline uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int ek_isa_next_waypoint(const uint8_t *buf, size_t len, ek_isa isa, uint64_t addr,
                         const ek_isa_cfg *cfg, ek_it_state *it, ek_isa_scan *out)
{
    size_t off = 0;
    uint64_t n = 0;

    memset(out, 0, sizeof *out);
    if (!buf && len) return EK_ERR_ARG;
    if (isa == EK_ISA_A64) {
        /* A plain loop: waypoints are a few instructions apart in real code, so a wider
         * branch-free pre-scan loses more than the one mispredicted exit it saves. */
        const size_t nw = len / 4;
        const uint32_t opts = cfg->opts;
        for (size_t i = 0; i < nw; i++) {
            uint32_t w = rd32(buf + i * 4);
            if (ek_isa_a64_is_plain(w)) continue;
            fill_a64(a64_kind(w, opts), w, addr + i * 4, cfg, &out->insn);
            if (out->insn.type != EK_ITYPE_OTHER) {
                out->offset = i * 4;
                out->count = i + 1;
                return 1;
            }
        }
        memset(&out->insn, 0, sizeof out->insn);
        out->offset = nw * 4;
        out->count = nw;
        return 0;
    }
    if (isa == EK_ISA_A32) {
        for (; len - off >= 4; off += 4) {
            uint32_t w = rd32(buf + off);
            n++;
            ek_isa_classify(w, isa, addr + off, cfg, &out->insn);
            if (out->insn.type != EK_ITYPE_OTHER) {
                out->offset = off;
                out->count = n;
                return 1;
            }
        }
        memset(&out->insn, 0, sizeof out->insn);
        out->offset = off;
        out->count = n;
        return 0;
    }
    if (isa != EK_ISA_T32) return EK_ERR_ARG;
    { /* T32 */
        const int fetch4 = (cfg->opts & EK_ISA_OCSD_FETCH4) != 0;
        while (len - off >= 2) {
            uint32_t hw1 = (uint32_t)buf[off] | (uint32_t)buf[off + 1] << 8, w = hw1;
            unsigned size = ek_isa_t32_size((uint16_t)hw1);
            if (len - off < size || (fetch4 && len - off < 4)) break;
            if (size == 4) w |= ((uint32_t)buf[off + 2] | (uint32_t)buf[off + 3] << 8) << 16;
            ek_isa_classify(w, EK_ISA_T32, addr + off, cfg, &out->insn);
            if (it) ek_isa_it_step(it, &out->insn, cfg);
            n++;
            if (out->insn.type != EK_ITYPE_OTHER) {
                out->offset = off;
                out->count = n;
                return 1;
            }
            off += size;
        }
        memset(&out->insn, 0, sizeof out->insn);
        out->offset = off;
        out->count = n;
        return 0;
    }
}

/* ---- names ---------------------------------------------------------------------------------- */

const char *ek_isa_kind_name(unsigned kind)
{
    return kind < EK_K_COUNT && KI[kind].name ? KI[kind].name : "?";
}

const char *ek_isa_type_name(unsigned type)
{
    static const char *const n[] = {"OTHER",   "BR",      "BR_INDIRECT", "ISB",
                                    "DSB_DMB", "WFI_WFE", "TSTART"};
    return type < sizeof n / sizeof n[0] ? n[type] : "?";
}

const char *ek_isa_subtype_name(unsigned sub)
{
    static const char *const n[] = {"NONE", "BR_LINK", "V8_RET", "V8_ERET", "V7_IMPLIED_RET"};
    return sub < sizeof n / sizeof n[0] ? n[sub] : "?";
}

const char *ek_isa_name(ek_isa isa)
{
    switch (isa) {
    case EK_ISA_A64: return "A64";
    case EK_ISA_T32: return "T32";
    case EK_ISA_A32: return "A32";
    default: return "?";
    }
}
