/* Generic trace elements: what the instruction-flow decoder (etmkit/flow.h) produces from
 * packets and a code image -- "these instructions ran", "an exception was taken", "the
 * context changed", "this time stamp applies" -- in a vocabulary every consumer understands.
 *
 * The element kinds, their numbering and their OpenCSD-style text follow OpenCSD 1.8.0's
 * generic elements (ocsd_gen_trc_elem_t), so that `etmkit dump --format=ocsd` can print
 * listings identical to trc_pkt_lister's. Each element carries the byte index of the packet
 * it came from (OpenCSD's "Idx") and its CoreSight trace ID.
 *
 * An element is a plain value: copy it freely. Fields that a kind does not use are zero.
 */
#ifndef ETMKIT_ELEM_H
#define ETMKIT_ELEM_H

#include <stdint.h>

#include "etmkit/sbuf.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

typedef enum ek_elem_type {
    EK_ELEM_UNKNOWN = 0,
    EK_ELEM_NO_SYNC,         /* not synchronised: start of decode, after overflow / bad data */
    EK_ELEM_TRACE_ON,        /* trace (re)starts: beginning, filter gap, overflow */
    EK_ELEM_EO_TRACE,        /* end of the available trace */
    EK_ELEM_PE_CONTEXT,      /* PE context: ISA, EL, security state, VMID, context ID */
    EK_ELEM_INSTR_RANGE,     /* instructions [st_addr, en_addr) executed (num_instr of them) */
    EK_ELEM_I_RANGE_NOPATH,  /* num_instr executed from st_addr, path to en_addr unknown */
    EK_ELEM_ADDR_NACC,       /* code at st_addr is not in the memory image */
    EK_ELEM_ADDR_UNKNOWN,    /* address unknown until the next address packet */
    EK_ELEM_EXCEPTION,       /* exception taken; en_addr = preferred return address */
    EK_ELEM_EXCEPTION_RET,   /* exception return */
    EK_ELEM_TIMESTAMP,       /* time stamp: earlier elements happened before it */
    EK_ELEM_CYCLE_COUNT,     /* cycles since the last cycle count */
    EK_ELEM_EVENT,           /* trigger or numbered event */
    EK_ELEM_SWTRACE,         /* software trace (STM): u.swt, timestamp with EK_SWT_HAS_TS */
    EK_ELEM_SYNC_MARKER,     /* marks the place of an element that is output later */
    EK_ELEM_MEMTRANS,        /* transactional memory: start, commit, fail */
    EK_ELEM_INSTRUMENTATION, /* PE instrumentation (FEAT_ITE) */
    EK_ELEM_ITMTRACE,        /* ITM software / DWT trace: u.itm, timestamp for time stamps */
    EK_ELEM_CUSTOM,
    EK_ELEM_NTYPES
} ek_elem_type;

/* Instruction set of executed code (OpenCSD's ocsd_isa numbering). */
typedef enum ek_iset {
    EK_ISET_A32 = 0,
    EK_ISET_T32,
    EK_ISET_A64,
    EK_ISET_TEE,
    EK_ISET_JAZELLE,
    EK_ISET_CUSTOM,
    EK_ISET_UNKNOWN,
} ek_iset;

/* The class of a range's last instruction (ek_elem.last_i_type / last_i_sub) uses the
 * classifier's numbering, ek_itype / ek_isubtype of etmkit/isa.h, which is OpenCSD's:
 * 0 other, 1 direct branch, 2 indirect branch, 3 ISB, 4 DSB/DMB, 5 WFI/WFE, 6 TSTART;
 * sub-types 0 none, 1 branch with link, 2 A64 RET, 3 A64 ERET, 4 A32/T32 implied return. */

typedef enum ek_security {
    EK_SEC_SECURE = 0,
    EK_SEC_NONSECURE,
    EK_SEC_ROOT,
    EK_SEC_REALM,
} ek_security;

typedef enum ek_trace_on_reason {
    EK_TRACE_ON_NORMAL = 0, /* start of trace or filtering gap */
    EK_TRACE_ON_OVERFLOW,   /* after an overflow */
    EK_TRACE_ON_EX_DEBUG,   /* after debug state */
} ek_trace_on_reason;

typedef enum ek_unsync_reason {
    EK_UNSYNC_UNKNOWN = 0,
    EK_UNSYNC_INIT_DECODER,  /* start of decode */
    EK_UNSYNC_RESET_DECODER, /* decoder reset (new session) */
    EK_UNSYNC_OVERFLOW,      /* trace overflow */
    EK_UNSYNC_DISCARD,       /* speculative trace discarded */
    EK_UNSYNC_BAD_PACKET,    /* bad packet or packet sequence */
    EK_UNSYNC_BAD_IMAGE,     /* trace contradicts the code image */
    EK_UNSYNC_EOT,           /* end of trace */
} ek_unsync_reason;

typedef enum ek_memtrans {
    EK_MEMTRANS_TRACE_INIT = 0, /* trace started inside a transaction */
    EK_MEMTRANS_START,
    EK_MEMTRANS_COMMIT,
    EK_MEMTRANS_FAIL,
} ek_memtrans;

typedef enum ek_marker_type {
    EK_MARKER_TS = 0, /* a time stamp for this point follows later */
} ek_marker_type;

typedef enum ek_event_type {
    EK_EVENT_UNKNOWN = 0,
    EK_EVENT_TRIGGER,
    EK_EVENT_NUMBERED,
} ek_event_type;

/* STM software trace element flags (ek_elem.u.swt.flags). */
#define EK_SWT_ID_VALID   0x01u /* master and channel are known (an M8 packet was seen) */
#define EK_SWT_MARKER     0x02u /* marker packet (FLAG, or data with marker) */
#define EK_SWT_TRIGGER    0x04u /* trigger packet */
#define EK_SWT_HAS_TS     0x08u /* ek_elem.timestamp is the packet's time stamp */
#define EK_SWT_FREQ       0x10u /* frequency packet: payload is the time stamp frequency in Hz */
#define EK_SWT_MASTER_ERR 0x20u /* master error packet */
#define EK_SWT_GLOBAL_ERR 0x40u /* global error packet */

/* What an ITM element reports (ek_elem.u.itm.kind); OpenCSD's swt_itm_type order. */
typedef enum ek_itm_kind {
    EK_ITM_SWIT = 0,        /* software stimulus write: port = channel, value = payload */
    EK_ITM_DWT,             /* hardware (DWT) stimulus: port = discriminator */
    EK_ITM_TS_SYNC,         /* local time stamp, synchronous with the previous packet */
    EK_ITM_TS_DELAY,        /* local time stamp delayed relative to the packet */
    EK_ITM_TS_PKT_DELAY,    /* packet delayed relative to the event */
    EK_ITM_TS_PKT_TS_DELAY, /* both delayed */
    EK_ITM_TS_GLOBAL,       /* global time stamp (in ek_elem.timestamp) */
} ek_itm_kind;

/* Per-element flags (ek_elem.flags). */
#define EK_ELEMF_LAST_EXEC       0x0001u /* INSTR_RANGE: last instruction executed (E atom) */
#define EK_ELEMF_LAST_COND       0x0002u /* INSTR_RANGE: last instruction conditional */
#define EK_ELEMF_HAS_CC          0x0004u /* cycle_count is valid */
#define EK_ELEMF_HAS_TS          0x0008u /* timestamp is valid on a non-TIMESTAMP element */
#define EK_ELEMF_EXCEP_RET_ADDR  0x0010u /* EXCEPTION: en_addr is the preferred return address */
#define EK_ELEMF_EXCEP_BR_TGT    0x0020u /* EXCEPTION: return address was also a branch target */
#define EK_ELEMF_EXCEP_M_TAIL    0x0040u /* EXCEPTION: M-profile tail chain, no return address */
#define EK_ELEMF_CPU_FREQ_CHANGE 0x0080u

/* PE context as known at a PE_CONTEXT element. Context ID and VMID stay valid once seen. */
typedef struct ek_pe_context {
    uint32_t context_id;
    uint32_t vmid;
    int8_t el;        /* exception level 0..3, -1 unknown */
    uint8_t security; /* ek_security */
    uint8_t bits64;   /* 1: AArch64 */
    uint8_t ctxt_id_valid;
    uint8_t vmid_valid;
    uint8_t el_valid;
} ek_pe_context;

typedef struct ek_elem {
    uint64_t index;       /* byte index of the packet the element belongs to */
    uint64_t st_addr;     /* range start, NACC address */
    uint64_t en_addr;     /* range end (exclusive), exception preferred return address */
    uint64_t timestamp;   /* TIMESTAMP value */
    uint32_t cycle_count; /* with EK_ELEMF_HAS_CC */
    uint32_t num_instr;   /* INSTR_RANGE, I_RANGE_NOPATH */
    uint8_t type;         /* ek_elem_type */
    uint8_t trace_id;     /* CoreSight trace ID */
    uint8_t isa;          /* ek_iset: INSTR_RANGE, I_RANGE_NOPATH, PE_CONTEXT */
    uint8_t last_i_type;  /* ek_itype (INSTR_RANGE) */
    uint8_t last_i_sub;   /* ek_isubtype (INSTR_RANGE) */
    uint8_t last_i_size;  /* bytes (INSTR_RANGE) */
    uint16_t flags;       /* EK_ELEMF_* */
    union {
        uint32_t exception_number; /* EXCEPTION */
        uint32_t mem_space;        /* ADDR_NACC: ek_mem_space of the failed access */
        uint32_t trace_on_reason;  /* TRACE_ON: ek_trace_on_reason */
        uint32_t unsync_reason;    /* NO_SYNC, EO_TRACE: ek_unsync_reason */
        uint32_t memtrans;         /* MEMTRANS: ek_memtrans */
        struct {
            uint16_t type; /* ek_event_type */
            uint16_t number;
        } event; /* EVENT */
        struct {
            uint32_t type; /* ek_marker_type */
            uint32_t value;
        } marker; /* SYNC_MARKER */
        struct {
            uint64_t value;
            uint8_t el;
        } ite; /* INSTRUMENTATION */
        struct {
            uint64_t payload; /* data (payload_bits wide), FREQ: Hz, errors: status byte */
            uint16_t channel;
            uint8_t master;
            uint8_t payload_bits; /* 0 (none), 4, 8, 16, 32 or 64 */
            uint8_t flags;        /* EK_SWT_* */
        } swt;                    /* SWTRACE (STM) */
        struct {
            uint32_t value;   /* payload; local time stamps: the delta */
            uint16_t port;    /* SWIT: stimulus port (page * 32 + channel); DWT: discriminator */
            uint8_t kind;     /* ek_itm_kind */
            uint8_t size;     /* payload bytes: 1, 2 or 4 */
            uint8_t overflow; /* an overflow packet came before this one */
        } itm;                /* ITMTRACE; time stamps in ek_elem.timestamp */
    } u;
    ek_pe_context context; /* PE_CONTEXT */
} ek_elem;

/* Names. */
const char *ek_elem_type_name(int type);  /* "INSTR_RANGE", ... ("UNKNOWN" if out of range) */
const char *ek_iset_name(int isa);        /* "A64", "T32", "A32", ... as OpenCSD prints them */
const char *ek_unsync_reason_name(int r); /* "init-decoder", "overflow", ... */

/* OpenCSD 1.8.0 text of an element: "OCSD_GEN_TRC_ELEM_<TYPE>(<payload>)" (no newline). */
void ek_elem_format_ocsd(ek_sbuf *out, const ek_elem *e);
/* A full trc_pkt_lister element line: "Idx:<n>; ID:<hex>; OCSD_GEN_TRC_ELEM_...(...)\n". */
void ek_elem_format_ocsd_line(ek_sbuf *out, const ek_elem *e);
/* The lines of n elements (each after a tab when tab != 0, as perf report -D prints them). */
void ek_elem_format_ocsd_lines(ek_sbuf *out, const ek_elem *e, size_t n, int tab);

/* etmkit's own formats, one element per line (with newline):
 *  text: "<idx> <id> > <KIND> <details>" in the columns of the packet text listing, e.g.
 *        "       384  12  > INSTR_RANGE        0x4d2488-0x4d2494 n=3 A64 last=ibr:ret/4 E"
 *  json: one JSON object per line with named fields. */
void ek_elem_format_text(ek_sbuf *out, const ek_elem *e);
void ek_elem_format_json(ek_sbuf *out, const ek_elem *e);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
