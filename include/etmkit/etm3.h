/* ETMv3.x (Arm IHI 0014, ETM architecture v3.0 - v3.5): typed configuration, a pull-style
 * packet parser, the OpenCSD-style packet listing and the instruction-flow decoder.
 *
 * ETMv3 traces every instruction: P-headers carry atoms (one per instruction executed, E or N
 * for a failed condition code) and, with cycle-accurate tracing, W (cycle) markers; branch
 * address packets give the target of indirect branches and exceptions (with NS, Hyp, the
 * exception number, a cancel flag and the ISA in the fifth byte), I-Sync packets give a full
 * address with the context and reason. Data trace packets (normal data, out-of-order data and
 * placeholders, value not traced, data suppressed, store failed) are parsed and listed; the
 * flow decoder does not need them.
 *
 * Headers:
 *   xxxxxxx1 branch address            1xxxxxx0 P-header (atoms)
 *   00000000 A-Sync                     00000100 cycle count      00001000 I-Sync
 *   01110000 I-Sync with cycle count    00001100 trigger          00111100 VMID
 *   0xx0xx00 out-of-order data          01x1xx00 out-of-order placeholder  01010000 store failed
 *   00x0xx10 normal data                01100010 data suppressed  011x1010 value not traced
 *   01100110 ignore   01101110 context ID   01110110 exception exit   01111110 exception entry
 *   01000x10 timestamp
 *
 * As for PTM, behaviour follows OpenCSD 1.8.0 where the architecture leaves room; where OpenCSD
 * departs from it, etmkit follows IHI 0014 and reproduces OpenCSD only under the
 * EK_ETM3_OCSD_* options (docs/PROTOCOLS.md gives the evidence). */
#ifndef ETMKIT_ETM3_H
#define ETMKIT_ETM3_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/config.h"
#include "etmkit/elem.h"
#include "etmkit/image.h" /* ek_flow_mem */

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

typedef struct ek_etm3_config {
    ek_etm3_regs regs;
    ek_arch arch;
    ek_arch_profile profile;
    uint8_t trace_id;
    uint8_t minor;      /* ETMIDR minor architecture version (3.x) */
    uint8_t cid_bytes;  /* ETMCR.ContextIDSize: 0, 1, 2 or 4 */
    uint8_t cycle_acc;  /* ETMCR.CycleAccurate */
    uint8_t ts_64;      /* ETMCCER: 64-bit timestamps */
    uint8_t alt_branch; /* ETMIDR: alternative branch address encoding (v3.4+) */
    uint8_t virt_ext;   /* ETMCCER: virtualization extensions (Hyp bit in I-Sync) */
    uint8_t data_value; /* ETMCR.DataAccess: data values traced */
    uint8_t data_addr;  /* ETMCR.DataAccess: data addresses traced */
    uint8_t data_only;  /* ETMCR.DataOnlyMode: no instruction trace */
    uint8_t v7m;        /* the traced core is M-profile (exception numbers) */
    uint32_t compat;    /* EK_ETM3_OCSD_*: 0 after ek_etm3_config_init (the architecture) */
} ek_etm3_config;

/* ek_etm3_config.compat: OpenCSD 1.8.0 behaviours that depart from IHI 0014, reproduced only
 * for its listings (`--format=ocsd`); docs/PROTOCOLS.md gives the evidence for each.
 *  TS_CONT   parser: a timestamp packet ends only at a byte with bit 7 clear, also past the
 *            seventh (48-bit) or ninth (64-bit) payload byte, which the architecture ends it at
 *            (the value still comes from the first 7 / 9 bytes). Bounded here by
 *            EK_ETM3_MAX_PKT bytes (OpenCSD's packet buffer grows without bound).
 *  ERR_TYPE  parser: a data packet refused because data trace is off (BAD_TRACEMODE) records
 *            the previous packet's type as err_type, as OpenCSD's listing shows it.
 *  FATAL     decoder: stop where OpenCSD's decoder returns a fatal data-path response: any data
 *            trace configured (ETMCR DataAccess / DataOnly: decoder not initialised, at the
 *            first packet), a data trace or BAD_TRACEMODE packet, a BAD_SEQUENCE or RESERVED
 *            packet. ek_etm3_decode() then returns a negative status, drops the elements it
 *            held back and ek_etm3_decoder_fatal() says why.
 *  PHDR_ISA  decoder: each P-header starts in the instruction set of the last address packet
 *            (I-Sync / branch address), forgetting a switch made by a BLX (immediate). */
#define EK_ETM3_OCSD_TS_CONT  0x01u
#define EK_ETM3_OCSD_ERR_TYPE 0x02u
#define EK_ETM3_OCSD_FATAL    0x04u
#define EK_ETM3_OCSD_PHDR_ISA 0x08u
#define EK_ETM3_OCSD_ALL      0x0fu

#define EK_ETMCR_DATA_VALUE  (1u << 2)
#define EK_ETMCR_DATA_ADDR   (1u << 3)
#define EK_ETMCR_DATA_ONLY   (1u << 20)
#define EK_ETMIDR_ALT_BRANCH (1u << 20)
#define EK_ETMCCER_VIRT_EXT  (1u << 26)

int ek_etm3_config_init(ek_etm3_config *cfg, const ek_etm3_regs *regs, ek_arch arch,
                        ek_arch_profile profile);
int ek_etm3_config_from_source(ek_etm3_config *cfg, const ek_source_config *src);

typedef enum ek_etm3_type {
    EK_ETM3_NOTSYNC = 0,
    EK_ETM3_INCOMPLETE_EOT,
    EK_ETM3_BRANCH_ADDRESS,
    EK_ETM3_ASYNC,
    EK_ETM3_CYCLE_COUNT,
    EK_ETM3_ISYNC,
    EK_ETM3_ISYNC_CYCLE,
    EK_ETM3_TRIGGER,
    EK_ETM3_P_HDR,
    EK_ETM3_STORE_FAIL,
    EK_ETM3_OOO_DATA,
    EK_ETM3_OOO_ADDR_PLC,
    EK_ETM3_NORM_DATA,
    EK_ETM3_DATA_SUPPRESSED,
    EK_ETM3_VAL_NOT_TRACED,
    EK_ETM3_IGNORE,
    EK_ETM3_CONTEXT_ID,
    EK_ETM3_VMID,
    EK_ETM3_EXCEPTION_ENTRY,
    EK_ETM3_EXCEPTION_EXIT,
    EK_ETM3_TIMESTAMP,
    EK_ETM3_BAD_SEQUENCE,  /* err_type: what the packet was */
    EK_ETM3_BAD_TRACEMODE, /* a data packet while data trace is off */
    EK_ETM3_RESERVED,
    EK_ETM3_TYPE_COUNT
} ek_etm3_type;

#define EK_ETM3_MAX_PKT  32
#define EK_ETM3_PF_ERROR 0x01

typedef struct ek_etm3_packet {
    uint64_t index;
    uint64_t timestamp;
    uint32_t addr;      /* running instruction address */
    uint32_t data_addr; /* running data address (also the I-Sync LSiP address) */
    uint32_t data_value;
    uint32_t ctxt_id;
    uint32_t cycle_count;
    uint32_t atom_bits; /* bit i: atom i (oldest first) is E */
    uint16_t exc_num;
    uint8_t type, err_type;
    uint8_t addr_valid_bits, addr_pkt_bits;
    uint8_t daddr_valid_bits, daddr_pkt_bits;
    uint8_t isa, prev_isa; /* ek_iset */
    uint8_t ns, hyp, alt_isa;
    uint8_t ctx_updated, cid_updated, vmid_updated;
    uint8_t vmid;
    uint8_t atom_num, p_hdr_fmt;
    uint8_t exc_present, exc_cancel, exc_cm, exc_resume;
    uint8_t isync_reason, isync_has_cc, isync_lsip, isync_no_addr;
    uint8_t ooo_tag, data_be, update_daddr, update_dval, update_be;
    uint8_t ts_update_bits;
    uint8_t flags;
    uint8_t size;
    uint8_t raw[EK_ETM3_MAX_PKT];
} ek_etm3_packet;

/* Its state (allocated by the caller) and the functions on it, the bit level: etmkit/low/etm3.h */
const char *ek_etm3_type_name(unsigned type);

struct ek_sbuf;
void ek_list_etm3_ocsd(struct ek_sbuf *out, const ek_etm3_packet *pkt, unsigned trace_id,
                       int with_raw, const ek_etm3_config *cfg);

/* ---- instruction-flow decoder -------------------------------------------------------- */

typedef struct ek_etm3_decoder ek_etm3_decoder;

int ek_etm3_decoder_new(const ek_etm3_config *cfg, const ek_flow_mem *mem, ek_etm3_decoder **out);
void ek_etm3_decoder_free(ek_etm3_decoder *d);
void ek_etm3_decoder_reset(ek_etm3_decoder *d);
int ek_etm3_decode(ek_etm3_decoder *d, const ek_etm3_packet *pkt);
int ek_etm3_decode_eot(ek_etm3_decoder *d);
/* Elements ready (the last instruction range of a P-header is held back until the next packet
 * shows it was not cancelled by an exception). */
const ek_elem *ek_etm3_decoder_elems(const ek_etm3_decoder *d, size_t *n);
void ek_etm3_decoder_clear(ek_etm3_decoder *d);

/* With EK_ETM3_OCSD_FATAL: why ek_etm3_decode() stopped (EK_ETM3_FATAL_NONE when it has not),
 * and the index of the packet it stopped at. */
typedef enum ek_etm3_fatal {
    EK_ETM3_FATAL_NONE = 0,
    EK_ETM3_FATAL_NOT_INIT, /* data trace configured: OpenCSD creates no usable decoder */
    EK_ETM3_FATAL_DATA,     /* a data trace packet (or BAD_TRACEMODE) */
    EK_ETM3_FATAL_BAD_SEQ,  /* a BAD_SEQUENCE packet */
    EK_ETM3_FATAL_RESERVED  /* a RESERVED packet */
} ek_etm3_fatal;
unsigned ek_etm3_decoder_fatal(const ek_etm3_decoder *d, uint64_t *index);
/* OpenCSD's error-log text for that stop, as trc_pkt_lister prints it (no component prefix, no
 * newline), e.g. "0x0013 (OCSD_ERR_BAD_PACKET_SEQ) [Bad packet sequence]; TrcIdx=13; CS ID=10;
 * Bad Packet sequence." */
void ek_list_etm3_ocsd_fatal(struct ek_sbuf *out, unsigned fatal, uint64_t index,
                             unsigned trace_id);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
/* The library and the test suite build with ETMKIT_LOW_LEVEL: they see the bit level too. */
#if defined(ETMKIT_LOW_LEVEL) && !defined(ETMKIT_LOW_ETM3_H)
#include "etmkit/low/etm3.h"
#endif

#endif
