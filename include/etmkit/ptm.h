/* PTM (Program Flow Trace, PFT v1.0 / v1.1, Arm IHI 0035): typed configuration, a pull-style
 * packet parser, the OpenCSD-style packet listing and the instruction-flow decoder that turns
 * packets and a code image into generic elements (etmkit/elem.h).
 *
 * PFT traces waypoints only: atoms say whether each branch (direct or indirect) was taken, a
 * branch address packet gives the target of a taken indirect branch or an exception, I-Sync
 * gives a full address with the security state and instruction set, and context ID, VMID,
 * timestamp, waypoint update, trigger, exception return and ignore packets complete it.
 * Headers:
 *   xxxxxxx1 branch address (1-5 address bytes, optional exception bytes, cycle count)
 *   1xxxxxx0 atom (non cycle-accurate: 1-5 atoms in the header; cycle-accurate: one atom
 *            and an optional cycle count)
 *   00000000 A-Sync (00 00 00 00 00 80)   00001000 I-Sync        00001100 trigger
 *   01110010 waypoint update             01101110 context ID    00111100 VMID
 *   01000x10 timestamp                   01110110 exception return  01100110 ignore
 *
 * Where the architecture leaves room the behaviour follows OpenCSD 1.8.0's packet processor
 * and decoder, so that listings compare with trc_pkt_lister's (see docs/PROTOCOLS.md). */
#ifndef ETMKIT_PTM_H
#define ETMKIT_PTM_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/config.h"
#include "etmkit/elem.h"
#include "etmkit/image.h" /* ek_flow_mem */

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

/* ---- configuration ------------------------------------------------------------------ */

typedef struct ek_ptm_config {
    ek_etm3_regs regs;
    ek_arch arch;
    ek_arch_profile profile;
    uint8_t trace_id;
    uint8_t cid_bytes;    /* ETMCR.ContextIDSize: 0, 1, 2 or 4 */
    uint8_t cycle_acc;    /* ETMCR.CycleAccurate */
    uint8_t ts_enabled;   /* ETMCR.TimestampEnable */
    uint8_t ts_64;        /* ETMCCER.TimestampSize: 64-bit (else 48-bit) timestamps */
    uint8_t bb;           /* ETMCR.BranchOutput: branch broadcast */
    uint8_t ret_stack;    /* return stack implemented (ETMCCER) and enabled (ETMCR) */
    uint8_t vmid;         /* ETMCR.VMIDEnable */
    uint8_t dmb_waypoint; /* ETMCCER.DMB/DSB waypoints (PFT v1.1) */
    uint8_t minor;        /* ETMIDR minor version: 0 PFT v1.0, 1 PFT v1.1 */
    uint32_t compat;      /* EK_PTM_OCSD_*: 0 after ek_ptm_config_init (indices as fed) */
} ek_ptm_config;

/* ek_ptm_config.compat: OpenCSD 1.8.0's accounting of unsynchronised data (docs/PROTOCOLS.md,
 * "OpenCSD 1.8.0 behaviours reproduced"): zeros of a possible A-Sync held from the previous
 * block are listed again before the block's reports and counted a second time, so the report
 * index runs ahead of the data (across blocks, while each block starts with held zeros) and
 * a report may list bytes past the end of its block (ek_ptm_feed_tail). Without it each
 * unsynchronised byte is reported once, at its own index. */
#define EK_PTM_OCSD_UNSYNC 0x01u

/* ETMCR / ETMCCER bits used here (Arm IHI 0035 / IHI 0014). */
#define EK_ETMCR_BRANCH_OUTPUT (1u << 8)
#define EK_ETMCR_CYCLE_ACC     (1u << 12)
#define EK_ETMCR_CID_SHIFT     14
#define EK_ETMCR_TS_ENABLE     (1u << 28)
#define EK_ETMCR_RET_STACK     (1u << 29)
#define EK_ETMCR_VMID          (1u << 30)
#define EK_ETMCCER_RET_STACK   (1u << 23)
#define EK_ETMCCER_DMB_WPT     (1u << 24)
#define EK_ETMCCER_TS_64       (1u << 29)

int ek_ptm_config_init(ek_ptm_config *cfg, const ek_etm3_regs *regs, ek_arch arch,
                       ek_arch_profile profile);
/* From a snapshot / perf.data source (protocol EK_PROTO_PTM). */
int ek_ptm_config_from_source(ek_ptm_config *cfg, const ek_source_config *src);

/* ---- packets ------------------------------------------------------------------------- */

typedef enum ek_ptm_type {
    EK_PTM_NOTSYNC = 0,
    EK_PTM_INCOMPLETE_EOT, /* err_type: what the packet was */
    EK_PTM_NOERROR,
    EK_PTM_BRANCH_ADDRESS,
    EK_PTM_ASYNC,
    EK_PTM_ISYNC,
    EK_PTM_TRIGGER,
    EK_PTM_WP_UPDATE,
    EK_PTM_IGNORE,
    EK_PTM_CONTEXT_ID,
    EK_PTM_VMID,
    EK_PTM_ATOM,
    EK_PTM_TIMESTAMP,
    EK_PTM_EXCEPTION_RET,
    EK_PTM_BAD_SEQUENCE, /* err_type: what the packet was */
    EK_PTM_RESERVED,
    EK_PTM_TYPE_COUNT
} ek_ptm_type;

/* I-Sync reasons */
enum {
    EK_PTM_ISYNC_PERIODIC = 0,
    EK_PTM_ISYNC_TRACE_ON,
    EK_PTM_ISYNC_OVERFLOW,
    EK_PTM_ISYNC_DEBUG_EXIT
};

#define EK_PTM_PF_NOTSYNC_MORE                                                                     \
    0x01 /* unsynchronised bytes after the first report: a packet                                  \
            monitor sees them, a decoder does not */
#define EK_PTM_PF_ERROR 0x02

#define EK_PTM_MAX_PKT 32

/* A packet, with the protocol state the parser keeps across packets (address, ISA, security,
 * context ID, VMID, time stamp): the fields a packet type updates say so in *_updated / the
 * type. */
typedef struct ek_ptm_packet {
    uint64_t index;
    uint64_t timestamp; /* running time stamp */
    uint32_t addr;      /* running address */
    uint32_t ctxt_id;   /* running context ID */
    uint32_t cycle_count;
    uint16_t exc_num; /* exception number (branch address with exception bytes) */
    uint8_t type;     /* ek_ptm_type */
    uint8_t err_type;
    uint8_t flags; /* EK_PTM_PF_* */
    uint8_t vmid;
    uint8_t addr_valid_bits, addr_pkt_bits;
    uint8_t isa, prev_isa; /* ek_iset: current and before this packet */
    uint8_t ns, hyp, alt_isa;
    uint8_t ctx_updated, cid_updated, vmid_updated;
    uint8_t cc_valid;
    uint8_t exc_present;
    uint8_t isync_reason;
    uint8_t ts_update_bits;
    uint8_t atom_num;  /* atoms in an ATOM packet */
    uint8_t atom_bits; /* bit i: atom i (oldest first) is E */
    uint8_t size;      /* raw bytes */
    uint8_t raw[EK_PTM_MAX_PKT];
} ek_ptm_packet;

/* Its state (allocated by the caller) and the functions on it, the bit level: etmkit/low/ptm.h */
const char *ek_ptm_type_name(unsigned type);

/* trc_pkt_lister line for a packet (with_raw: packet monitor form). */
struct ek_sbuf;
void ek_list_ptm_ocsd(struct ek_sbuf *out, const ek_ptm_packet *pkt, unsigned trace_id,
                      int with_raw, const ek_ptm_config *cfg);

/* ---- instruction-flow decoder -------------------------------------------------------- */

typedef struct ek_ptm_decoder ek_ptm_decoder;

/* mem: how code is read (may have find == NULL: every address is inaccessible). */
int ek_ptm_decoder_new(const ek_ptm_config *cfg, const ek_flow_mem *mem, ek_ptm_decoder **out);
void ek_ptm_decoder_free(ek_ptm_decoder *d);
void ek_ptm_decoder_reset(ek_ptm_decoder *d);
/* Decode one packet; elements accumulate until ek_ptm_decoder_clear(). Returns 0 or
 * EK_ERR_NOMEM. */
int ek_ptm_decode(ek_ptm_decoder *d, const ek_ptm_packet *pkt);
/* End of trace: EO_TRACE. */
int ek_ptm_decode_eot(ek_ptm_decoder *d);
const ek_elem *ek_ptm_decoder_elems(const ek_ptm_decoder *d, size_t *n);
void ek_ptm_decoder_clear(ek_ptm_decoder *d);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
/* The library and the test suite build with ETMKIT_LOW_LEVEL: they see the bit level too. */
#if defined(ETMKIT_LOW_LEVEL) && !defined(ETMKIT_LOW_PTM_H)
#include "etmkit/low/ptm.h"
#endif

#endif
