/* ETMv4 / ETE instruction-trace packets: typed configuration, a pull-style packet parser and
 * the packet record it produces.
 *
 * The parser turns the byte stream of ONE trace source (one CoreSight trace ID, already
 * de-formatted, see etmkit/frame.h) into packets. It is pure: no allocation, no I/O, no global
 * state. Typical use:
 *
 *     ek_etm4_config cfg;
 *     ek_etm4_config_from_regs(&cfg, &src->cfg);        // from a snapshot or perf.data source
 *     ek_etm4_parser p;
 *     ek_etm4_parser_init(&p, &cfg);
 *     for each block of bytes (data, n, index of data[0]):
 *         ek_etm4_feed(&p, data, n, index);
 *         const ek_etm4_packet *pkt;
 *         while (ek_etm4_next(&p, &pkt) > 0)
 *             use(pkt);                                // valid until the next call
 *     ek_etm4_eot(&p);                                 // end of trace: flush a partial packet
 *     while (ek_etm4_next(&p, &pkt) > 0) use(pkt);
 *
 * Behaviour follows the Arm ETMv4 / ETE architecture and, where the architecture leaves room,
 * OpenCSD 1.8's packet processor, so that listings can be compared byte for byte with
 * trc_pkt_lister: unsynchronised bytes before the first A-Sync are reported as NOTSYNC packets
 * of at most 8 bytes; reserved headers give RESERVED / RESERVED_CFG packets; malformed
 * sequences give BAD_SEQUENCE packets; a packet cut by the end of trace gives INCOMPLETE_EOT.
 * None of these stops the parser.
 *
 * Packet index: a block fed with index I has its byte k at index I + k. A packet's index is
 * the index of its first byte. (Bytes that come from a CoreSight formatter frame carry the
 * index the deformatter gave them, see etmkit/frame.h.)
 */
#ifndef ETMKIT_ETM4_H
#define ETMKIT_ETM4_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/config.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

/* ---- configuration ------------------------------------------------------------------ */

/* What a trace unit can emit and how wide its fields are, derived from its ID and control
 * registers. Protocol differences between ETMv4.x, ETE and the M-profile variants are data
 * here; the parser never looks at register values itself. */
typedef struct ek_etm4_config {
    ek_etm4_regs regs;    /* the registers this was derived from */
    ek_protocol protocol; /* EK_PROTO_ETMV4, EK_PROTO_ETMV4M or EK_PROTO_ETE */
    uint8_t trace_id;     /* TRCTRACEIDR.TRACEID */
    uint8_t version;      /* (major << 4) | minor: 0x40..0x46 ETMv4.x, 0x50.. ETE */
    uint8_t is_ete;       /* major version >= 5 */
    uint8_t m_profile;    /* the traced core is M-profile (exception numbering, FUNC_RET) */
    uint8_t arch_v8;      /* the traced core is Armv8 or later */

    /* field sizes */
    uint8_t ia_64;      /* TRCIDR2.IASIZE: 64-bit instruction addresses */
    uint8_t cid_bytes;  /* Context ID bytes in context packets: 0 or 4 */
    uint8_t vmid_bytes; /* VMID bytes in context packets: 0, 1, 2 or 4 */
    uint8_t cc_bits;    /* cycle counter width: 12..27 */
    uint8_t ts_bits;    /* timestamp width: 0 (unknown), 48 or 64 */
    uint32_t max_spec;  /* TRCIDR8.MAXSPEC: maximum speculation depth */

    /* optional features present and enabled */
    uint8_t commit_opt1;  /* TRCIDR0.COMMOPT == 1 (with cycle counting): no commit fields */
    uint8_t cond_trace;   /* conditional instruction tracing implemented and enabled */
    uint8_t data_trace;   /* data address / value tracing enabled (data sync markers) */
    uint8_t q_elem;       /* Q elements supported (TRCIDR0.QSUPP != 0) */
    uint8_t cc_enabled;   /* TRCCONFIGR.CCI */
    uint8_t ts_enabled;   /* TRCCONFIGR.TS */
    uint8_t cid_enabled;  /* TRCCONFIGR.CID */
    uint8_t vmid_enabled; /* TRCCONFIGR.VMID */
    uint8_t bb_enabled;   /* TRCCONFIGR.BB (branch broadcast) */
    uint8_t rs_enabled;   /* TRCCONFIGR.RS (return stack) */

    /* packet headers that exist in this protocol version */
    uint8_t has_func_ret;  /* 0x05 FUNC_RET: Armv8-M with ETMv4.2+ */
    uint8_t has_eret;      /* 0x07 EXCEPT_RTN: ETMv4 only (reserved in ETE) */
    uint8_t has_ignore;    /* 0x70 IGNORE: ETMv4.3+ */
    uint8_t has_ts_marker; /* 0x88 TS_MARKER: ETMv4.6+ / ETE */
    uint8_t has_trans;     /* 0x0A/0x0B transaction start/commit, PE reset / trans fail: ETE */
    uint8_t has_ite;       /* 0x09 ITE instrumentation: ETE 1.3+ */
    uint8_t has_src_addr;  /* 0xB0-0xB9 source address packets: ETE */
} ek_etm4_config;

/* Fill cfg from a trace source's typed configuration (protocol, registers, core architecture
 * and profile). Missing TRCIDR1 defaults to ETMv4.0 as OpenCSD does. Returns 0, or
 * EK_ERR_UNSUPPORTED when src is not an ETMv4/ETE source. */
int ek_etm4_config_from_source(ek_etm4_config *cfg, const ek_source_config *src);

/* The same from raw registers. */
int ek_etm4_config_init(ek_etm4_config *cfg, const ek_etm4_regs *regs, ek_protocol protocol,
                        ek_arch arch, ek_arch_profile profile);

/* ---- packets ------------------------------------------------------------------------- */

typedef enum ek_etm4_type {
    EK_ETM4_NONE = 0,

    /* stream state and errors (no protocol meaning) */
    EK_ETM4_NOTSYNC,        /* bytes before the first A-Sync */
    EK_ETM4_INCOMPLETE_EOT, /* end of trace inside a packet; err_type = that packet */
    EK_ETM4_BAD_SEQUENCE,   /* malformed packet; err_type = what it looked like */
    EK_ETM4_RESERVED,       /* reserved header byte; err_type = table entry */
    EK_ETM4_RESERVED_CFG,   /* header not valid for this configuration; err_type likewise */

    /* synchronisation and trace state */
    EK_ETM4_ASYNC,        /* A-Sync: 11 x 0x00, 0x80 */
    EK_ETM4_DISCARD,      /* 0x00 0x03 */
    EK_ETM4_OVERFLOW,     /* 0x00 0x05 */
    EK_ETM4_TRACE_INFO,   /* 0x01 */
    EK_ETM4_TIMESTAMP,    /* 0x02-0x03 */
    EK_ETM4_TRACE_ON,     /* 0x04 */
    EK_ETM4_FUNC_RET,     /* 0x05 (Armv8-M) */
    EK_ETM4_EXCEPT,       /* 0x06 */
    EK_ETM4_EXCEPT_RTN,   /* 0x07 (ETMv4) */
    EK_ETM4_ITE,          /* 0x09 instrumentation (ETE) */
    EK_ETM4_TRANS_ST,     /* 0x0A transaction start (ETE) */
    EK_ETM4_TRANS_COMMIT, /* 0x0B transaction commit (ETE) */
    EK_ETM4_TRANS_FAIL,   /* 0x06 with type 0x18 (ETE) */
    EK_ETM4_PE_RESET,     /* 0x06 with type 0x00 (ETE) */
    EK_ETM4_TS_MARKER,    /* 0x88 (ETMv4.6 / ETE) */

    /* cycle counts and speculation */
    EK_ETM4_CCNT_F1,           /* 0x0E-0x0F */
    EK_ETM4_CCNT_F2,           /* 0x0C-0x0D */
    EK_ETM4_CCNT_F3,           /* 0x10-0x1F */
    EK_ETM4_NUM_DS_MKR,        /* 0x20-0x27 */
    EK_ETM4_UNNUM_DS_MKR,      /* 0x28-0x2C */
    EK_ETM4_COMMIT,            /* 0x2D */
    EK_ETM4_CANCEL_F1,         /* 0x2E */
    EK_ETM4_CANCEL_F1_MISPRED, /* 0x2F */
    EK_ETM4_MISPREDICT,        /* 0x30-0x33 */
    EK_ETM4_CANCEL_F2,         /* 0x34-0x37 */
    EK_ETM4_CANCEL_F3,         /* 0x38-0x3F */

    /* conditional instruction tracing */
    EK_ETM4_COND_I_F1,   /* 0x6C */
    EK_ETM4_COND_I_F2,   /* 0x40-0x42 */
    EK_ETM4_COND_I_F3,   /* 0x6D */
    EK_ETM4_COND_FLUSH,  /* 0x43 */
    EK_ETM4_COND_RES_F1, /* 0x68-0x6B, 0x6E-0x6F */
    EK_ETM4_COND_RES_F2, /* 0x48-0x4A, 0x4C-0x4E */
    EK_ETM4_COND_RES_F3, /* 0x50-0x5F */
    EK_ETM4_COND_RES_F4, /* 0x44-0x46 */

    EK_ETM4_IGNORE, /* 0x70 */
    EK_ETM4_EVENT,  /* 0x71-0x7F */

    /* context and addresses */
    EK_ETM4_CTXT,              /* 0x80-0x81 */
    EK_ETM4_ADDR_CTXT_L_32IS0, /* 0x82 */
    EK_ETM4_ADDR_CTXT_L_32IS1, /* 0x83 */
    EK_ETM4_ADDR_CTXT_L_64IS0, /* 0x85 */
    EK_ETM4_ADDR_CTXT_L_64IS1, /* 0x86 */
    EK_ETM4_ADDR_MATCH,        /* 0x90-0x92 */
    EK_ETM4_ADDR_S_IS0,        /* 0x95 */
    EK_ETM4_ADDR_S_IS1,        /* 0x96 */
    EK_ETM4_ADDR_L_32IS0,      /* 0x9A */
    EK_ETM4_ADDR_L_32IS1,      /* 0x9B */
    EK_ETM4_ADDR_L_64IS0,      /* 0x9D */
    EK_ETM4_ADDR_L_64IS1,      /* 0x9E */
    EK_ETM4_Q,                 /* 0xA0-0xAF */
    EK_ETM4_SRC_ADDR_MATCH,    /* 0xB0-0xB2 (ETE) */
    EK_ETM4_SRC_ADDR_S_IS0,    /* 0xB4 */
    EK_ETM4_SRC_ADDR_S_IS1,    /* 0xB5 */
    EK_ETM4_SRC_ADDR_L_32IS0,  /* 0xB6 */
    EK_ETM4_SRC_ADDR_L_32IS1,  /* 0xB7 */
    EK_ETM4_SRC_ADDR_L_64IS0,  /* 0xB8 */
    EK_ETM4_SRC_ADDR_L_64IS1,  /* 0xB9 */

    /* atoms */
    EK_ETM4_ATOM_F1, /* 0xF6-0xF7 */
    EK_ETM4_ATOM_F2, /* 0xD8-0xDB */
    EK_ETM4_ATOM_F3, /* 0xF8-0xFF */
    EK_ETM4_ATOM_F4, /* 0xDC-0xDF */
    EK_ETM4_ATOM_F5, /* 0xD5-0xD7, 0xF5 */
    EK_ETM4_ATOM_F6, /* 0xC0-0xD4, 0xE0-0xF4 */

    EK_ETM4_EXTENSION, /* 0x00 header while its second byte is pending (internal) */
    EK_ETM4_TYPE_COUNT
} ek_etm4_type;

/* Largest packet the parser keeps whole. Longer sequences (only possible in damaged trace, via
 * endless continuation bits) are cut and reported as BAD_SEQUENCE. */
#define EK_ETM4_MAX_PKT 32

/* ek_etm4_packet.flags
 *  ERROR         the type is one of the error types (NOTSYNC .. RESERVED_CFG)
 *  NOTSYNC_MORE  an unsynchronised run after the first one: OpenCSD gives only the first to
 *                a packet sink, every one to a raw packet monitor
 *  CC            cycle_count is valid for this packet
 *  COMMIT        commit is valid for this packet
 *  INIT_TINFO    TRACE_INFO: the first one since the parser synchronised
 *  SHORT_FIELD   BAD_SEQUENCE: a field ran past the end of the packet
 *  UNSYNCED      bytes dropped before synchronisation (type NOTSYNC, or ASYNC for the zeros
 *                in excess of an A-Sync) */
#define EK_ETM4_PF_ERROR        0x01
#define EK_ETM4_PF_NOTSYNC_MORE 0x02
#define EK_ETM4_PF_CC           0x04
#define EK_ETM4_PF_COMMIT       0x08
#define EK_ETM4_PF_INIT_TINFO   0x10
#define EK_ETM4_PF_SHORT_FIELD  0x20
#define EK_ETM4_PF_UNSYNCED     0x40

/* Address state: the current (most recent) instruction address. */
typedef struct ek_etm4_addr {
    uint64_t val;
    uint8_t is;         /* instruction set: 0 = IS0 (A64 / A32), 1 = IS1 (T32) */
    uint8_t pkt_bits;   /* low bits given by the last address packet (0 = none yet) */
    uint8_t valid_bits; /* low bits known */
    uint8_t is_64;      /* address register is 64 bits wide */
} ek_etm4_addr;

/* Context state: updated by CTXT and ADDR_CTXT packets. */
typedef struct ek_etm4_ctx {
    uint32_t vmid;
    uint32_t cid;
    uint8_t valid;        /* a context packet was seen since sync */
    uint8_t updated;      /* this packet carried new context (else "same as before") */
    uint8_t vmid_updated; /* this packet carried a VMID */
    uint8_t cid_updated;  /* this packet carried a Context ID */
    uint8_t el;           /* exception level 0..3 */
    uint8_t ns;           /* non-secure */
    uint8_t sf;           /* sixty-four bit (AArch64) */
    uint8_t nse;          /* NSE (RME): with ns, selects Root / Realm */
} ek_etm4_ctx;

/* One packet. Fields that are not meaningful for 'type' keep the values of the parser's
 * running state (address, context, timestamp ...) so a consumer may always read them. */
typedef struct ek_etm4_packet {
    uint64_t index;     /* trace index of the first byte */
    const uint8_t *raw; /* the packet's bytes (valid until the next parser call) */
    uint8_t size;       /* number of bytes */
    uint8_t type;       /* ek_etm4_type */
    uint8_t err_type;   /* error packets: the ek_etm4_type being decoded */
    uint8_t flags;      /* EK_ETM4_PF_* */

    ek_etm4_addr addr; /* address after this packet (address / match / Q / exception) */
    uint8_t match_idx; /* ADDR_MATCH, SRC_ADDR_MATCH, Q with exact match: history index */
    ek_etm4_ctx ctx;

    uint32_t atom_bits; /* atoms, oldest in bit 0; 1 = E (taken / passed), 0 = N */
    uint8_t atom_num;   /* number of atoms (also for MISPREDICT / CANCEL_F2 / F3) */

    uint8_t event;        /* EVENT: 4-bit event mask */
    uint8_t dsm;          /* NUM_DS_MKR / UNNUM_DS_MKR: marker number */
    uint8_t ts_bits;      /* TIMESTAMP: number of low bits updated */
    uint64_t timestamp;   /* TIMESTAMP: current timestamp value */
    uint32_t cycle_count; /* with EK_ETM4_PF_CC */
    uint32_t commit;      /* with EK_ETM4_PF_COMMIT: elements committed */
    uint32_t cancel;      /* CANCEL_*, MISPREDICT: elements cancelled */

    struct {           /* TRACE_INFO */
        uint32_t info; /* INFO section (bit 0 CC enabled, bits 3:1 cond type, bit 4 ...) */
        uint32_t p0_key;
        uint32_t spec; /* current speculation depth */
        uint32_t cc_threshold;
        uint8_t sections; /* bit 0 INFO, 1 KEY, 2 SPEC, 3 CYCT, 4 WNDW present */
    } tinfo;

    struct {                 /* EXCEPT, PE_RESET, TRANS_FAIL */
        uint16_t type;       /* exception number (10 bits for M-profile) */
        uint8_t addr_interp; /* 0: none, 1: return address follows, 2: ... match previous */
        uint8_t m_fault_pending;
        uint8_t m_type; /* numbering: 0 = A/R profile, 1 = M profile */
    } exc;

    struct { /* Q */
        uint32_t count;
        uint8_t qtype; /* header low nibble */
        uint8_t count_present;
        uint8_t addr_present;
        uint8_t addr_match;
    } q;

    struct { /* ITE */
        uint8_t el;
        uint64_t value;
    } ite;

    struct {               /* COND_I_*, COND_RES_* */
        uint32_t key[2];   /* COND_I_F1: key[0]; COND_RES_F1: one or two keys */
        uint8_t result[2]; /* COND_RES_F1: result byte of each key */
        uint8_t ci[2];     /* COND_RES_F1: C bit of each key */
        uint8_t nkeys;     /* COND_RES_F1: 1 or 2 */
        uint8_t num_elem;  /* COND_I_F2 / F3: number of C elements */
        uint8_t f3_final;  /* COND_I_F3: final element flag */
        uint8_t incr;      /* COND_I_F2 / COND_RES_F2: key increment */
        uint8_t token;     /* COND_RES_F2 / F4 */
        uint16_t tokens;   /* COND_RES_F3 */
    } cond;
} ek_etm4_packet;

/* Printable name as OpenCSD prints it ("I_ATOM_F1", ...; "I_UNKNOWN" for out of range). */
const char *ek_etm4_type_name(unsigned type);

/* Its state (allocated by the caller) and the functions on it, the bit level: etmkit/low/etm4.h */

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
/* The library and the test suite build with ETMKIT_LOW_LEVEL: they see the bit level too. */
#if defined(ETMKIT_LOW_LEVEL) && !defined(ETMKIT_LOW_ETM4_H)
#include "etmkit/low/etm4.h"
#endif

#endif
