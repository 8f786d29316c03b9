/* ETMv4 / ETE instruction-trace packet encoder: the inverse of the packet parser.
 *
 * The caller (etmkit's simulator, or a test) describes what the traced PE did in trace terms
 * (atoms, target addresses, exceptions, context changes, timestamps) and the encoder writes a
 * legal packet stream: A-Sync and Trace Info, Trace On, atoms packed into formats F1-F6,
 * addresses compressed against the address history (exact match, short, long 32/64, with or
 * without context), exceptions, exception returns, timestamps and cycle counts, and the
 * optional return stack (targets that match the stack are not traced).
 *
 * The encoder is configured from the same typed register set the decoder reads
 * (ek_source_config / ek_etm4_regs): TRCCONFIGR selects CID/VMID/TS/CC/RS, TRCIDR2 gives the
 * context ID and VMID sizes, TRCDEVARCH or the protocol field tells ETE from ETMv4.
 *
 * Pure: no allocation, no I/O. Bytes go to a caller-owned buffer: before every call the caller
 * makes sure that at least EK_ETM4_ENC_MAX_CALL bytes are free (cap - len), and drains or
 * grows the buffer as it likes between calls. An optional callback reports every packet
 * written, with its stream offset, so that a caller can keep a packet-level ground truth. */
#ifndef ETMKIT_SIM_ENC_ETM4_H
#define ETMKIT_SIM_ENC_ETM4_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/config.h"

#define EK_ETM4_ENC_MAX_CALL 128u /* most bytes any single encoder call writes */

typedef enum ek_etm4_enc_kind {
    EK_ENC_ASYNC = 1,
    EK_ENC_TRACE_INFO,
    EK_ENC_TRACE_ON,
    EK_ENC_ATOM,
    EK_ENC_ADDR,      /* address without context (exact match, short or long) */
    EK_ENC_ADDR_CTXT, /* address with context */
    EK_ENC_CTXT,      /* context packet */
    EK_ENC_EXCEPT,    /* exception header (the return address follows as an ADDR packet) */
    EK_ENC_EXCEPT_RTN,
    EK_ENC_TIMESTAMP,
    EK_ENC_CYCLE_COUNT,
    EK_ENC_OVERFLOW,
    EK_ENC_DISCARD,
    EK_ENC_IGNORE,
} ek_etm4_enc_kind;

/* Exception types of the ETMv4 A/R-profile exception packet. */
enum {
    EK_ETM4_EXC_RESET = 0x0,
    EK_ETM4_EXC_DEBUG_HALT = 0x1,
    EK_ETM4_EXC_CALL = 0x2, /* SVC, HVC, SMC */
    EK_ETM4_EXC_TRAP = 0x3,
    EK_ETM4_EXC_SYSTEM_ERROR = 0x4,
    EK_ETM4_EXC_INST_DEBUG = 0x6,
    EK_ETM4_EXC_DATA_DEBUG = 0x7,
    EK_ETM4_EXC_ALIGNMENT = 0xA,
    EK_ETM4_EXC_INST_FAULT = 0xB,
    EK_ETM4_EXC_DATA_FAULT = 0xC,
    EK_ETM4_EXC_IRQ = 0xE,
    EK_ETM4_EXC_FIQ = 0xF,
};

/* PE context as carried by context packets. */
typedef struct ek_etm4_enc_ctx {
    uint8_t el;   /* exception level 0..3 */
    uint8_t sf;   /* 1: AArch64 */
    uint8_t ns;   /* 1: non-secure */
    uint32_t cid; /* CONTEXTIDR value */
    uint32_t vmid;
} ek_etm4_enc_ctx;

/* Description of one packet written, for callers that keep a packet-level truth. */
typedef struct ek_etm4_enc_pkt {
    ek_etm4_enc_kind kind;
    uint64_t offset; /* stream offset of the first byte */
    uint32_t len;
    uint32_t natoms;     /* ATOM: number of atoms, oldest first */
    uint32_t atom_bits;  /* ATOM: bit i set = atom i is E */
    uint64_t addr;       /* ADDR*, EXCEPT: address value after the packet */
    int exact_idx;       /* ADDR: address history entry used, or -1 */
    int addr_bits;       /* ADDR: 9, 17, 32, 64 (0 for exact match) */
    ek_etm4_enc_ctx ctx; /* ADDR_CTXT, CTXT */
    uint32_t exc_type;   /* EXCEPT */
    uint64_t ts;         /* TIMESTAMP */
    uint32_t cc;         /* CYCLE_COUNT, TIMESTAMP with cycle count */
} ek_etm4_enc_pkt;

typedef void (*ek_etm4_enc_fn)(void *ctx, const ek_etm4_enc_pkt *pkt);

typedef struct ek_etm4_enc {
    /* configuration (from ek_etm4_enc_init) */
    int ete;
    int cid_trace, vmid_trace, ts_trace, cc_trace, rs_trace;
    unsigned cid_bytes, vmid_bytes;
    uint32_t cc_threshold;
    unsigned cc_bits; /* cycle counter width (TRCIDR2.CCSIZE) */
    /* output: bytes are written at out[len]; base is the stream offset of out[0] */
    uint8_t *out;
    size_t len, cap;
    uint64_t base;
    ek_etm4_enc_fn on_packet;
    void *cb_ctx;
    /* pending atoms, oldest in bit 0 */
    uint64_t atom_bits;
    unsigned natoms;
    /* address history as the decoder holds it */
    uint64_t hist[3];
    unsigned hist_n;
    /* context last broadcast; valid after the first address-with-context packet */
    ek_etm4_enc_ctx ctx;
    int ctx_valid;
    /* timestamp last broadcast */
    uint64_t ts;
    int ts_valid;
    /* return stack (RS): return addresses of taken branch-with-link instructions */
    uint64_t rs[15];
    unsigned rs_n;
} ek_etm4_enc;

/* Set up from a source configuration (protocol EK_PROTO_ETMV4 or EK_PROTO_ETE). Returns 0 or
 * EK_ERR_UNSUPPORTED. Output buffer and callback fields are left for the caller to set. */
int ek_etm4_enc_init(ek_etm4_enc *e, const ek_source_config *cfg);

/* Alignment synchronisation + Trace Info. Resets address history, context and return stack:
 * the next address must be sent with context (ek_etm4_enc_address with ctx != NULL). */
void ek_etm4_enc_sync(ek_etm4_enc *e);
void ek_etm4_enc_trace_on(ek_etm4_enc *e);
/* One P0 atom: taken (E) or not taken (N). Packed lazily. */
void ek_etm4_enc_atom(ek_etm4_enc *e, int taken);
/* Target address of the last taken indirect branch, a trace restart point or an exception
 * target. With ctx != NULL an address-with-context packet is used when the context differs
 * from the one last broadcast (or after a sync). */
void ek_etm4_enc_address(ek_etm4_enc *e, uint64_t addr, const ek_etm4_enc_ctx *ctx);
/* Indirect-branch target with the return stack: returns 1 if the target matched the top of
 * the return stack (nothing written), 0 if an address packet was written. */
int ek_etm4_enc_indirect_target(ek_etm4_enc *e, uint64_t addr, const ek_etm4_enc_ctx *ctx);
/* A taken branch with link: pushes the return address when the return stack is enabled. */
void ek_etm4_enc_push_return(ek_etm4_enc *e, uint64_t ret_addr);
/* Exception: header + preferred return address. */
void ek_etm4_enc_exception(ek_etm4_enc *e, unsigned type, uint64_t ret_addr);
/* Exception return (ETMv4 A-profile trace units that trace ERET this way); nothing for ETE. */
void ek_etm4_enc_exception_return(ek_etm4_enc *e);
void ek_etm4_enc_context(ek_etm4_enc *e, const ek_etm4_enc_ctx *ctx);
/* Timestamp (with the cycle count, truncated to the counter width, when cycle counting is
 * enabled). */
void ek_etm4_enc_timestamp(ek_etm4_enc *e, uint64_t ts, uint32_t cc);
void ek_etm4_enc_cycle_count(ek_etm4_enc *e, uint32_t cc);
void ek_etm4_enc_overflow(ek_etm4_enc *e);
/* Write out pending atoms. */
void ek_etm4_enc_flush(ek_etm4_enc *e);

/* Register values of a plausible trace unit for the simulator: fills cfg->regs.etm4 for an
 * ETMv4.2 (ete = 0) or ETE (ete = 1) source with the given trace ID and TRCCONFIGR. */
void ek_etm4_enc_default_regs(ek_source_config *cfg, int ete, uint8_t trace_id, uint32_t configr);

/* TRCCONFIGR bits */
#define EK_TRCCONFIGR_BB      (1u << 3)
#define EK_TRCCONFIGR_CCI     (1u << 4)
#define EK_TRCCONFIGR_CID     (1u << 6)
#define EK_TRCCONFIGR_VMID    (1u << 7)
#define EK_TRCCONFIGR_TS      (1u << 11)
#define EK_TRCCONFIGR_RS      (1u << 12)
#define EK_TRCCONFIGR_VMIDOPT (1u << 15)

#endif
