/* Instruction-flow decoding: ETMv4 / ETE packets of ONE trace source + the code image ->
 * generic elements (etmkit/elem.h): which instructions ran, exceptions, context changes,
 * time stamps, cycle counts, events, transactions.
 *
 * Packets only say "taken, not taken, here is an address". The decoder walks the code from the
 * last known address to the next waypoint (branch, ISB, ...), decides where it goes, and
 * repeats. A block cache remembers, per (address, instruction set, memory space), where the
 * next waypoint is and what it is, so hot code is not re-classified instruction by
 * instruction.
 *
 * Use ("push packets, pull elements"):
 *
 *     ek_flow_config fc;
 *     ek_flow_config_init(&fc);
 *     fc.source = &src->cfg;           // protocol, trace ID, registers, core arch/profile
 *     fc.mem = my_memory;              // how to read code (see ek_flow_mem)
 *     ek_flow *f;
 *     ek_flow_new(&fc, &f);
 *     for each packet of the source (etmkit/etm4.h):
 *         ek_flow_packet(f, pkt);
 *         size_t n; const ek_elem *e = ek_flow_elems(f, &n);   // 0 or more elements
 *         ... use e[0..n) ...
 *         ek_flow_elems_clear(f);
 *     ek_flow_end(f);                  // end of trace: EO_TRACE (+ anything still pending)
 *     ... drain as above ...
 *     ek_flow_free(f);
 *
 * Behaviour follows the Arm ETMv4 / ETE architecture as decoded by OpenCSD 1.8.0 (its
 * TrcPktDecodeEtmV4I): the same elements, in the same order within a trace ID, with the same
 * packet indices -- including its speculation handling (commit / cancel / mispredict up to
 * TRCIDR8.MAXSPEC), return stack, Q elements, source-address packets, exception-address rules
 * and error recovery. Elements are queued until the packets that resolve them arrive, so an
 * element's index is that of the packet that produced it, which may precede the packet that
 * released it.
 *
 * Ordering of output and errors: the diag sink is called while a packet is decoded, after
 * the elements produced so far by completed steps and with those of the failing step already
 * removed (notes come when the packet is done). The sink may therefore drain the element queue
 * (ek_flow_elems + ek_flow_elems_clear, or ek_flow_next) before it reports the error; that prints
 * elements and errors in the order OpenCSD sends and logs them.
 *
 * Bad input never stops the decoder: trace that contradicts itself or the image gives a
 * diagnostic (ek_diag, kinds listed below) and a NO_SYNC element, and decoding resumes at the
 * next synchronisation point; code that is not in the image gives ADDR_NACC elements and
 * decoding continues at the next address packet.
 *
 * Diagnostics (severity WARN unless noted, with trace ID and packet index -- offset -1 when no
 * packet is concerned); the message is the reason text OpenCSD logs for the same condition:
 *   flow.bad-packet      reserved / malformed / unknown packet: resync
 *   flow.unsupported     data-trace or conditional-trace packet: resync
 *   flow.bad-sequence    exception or Q element without its address: resync
 *   flow.commit-overrun  commit / cancel / mispredict of more than is pending: resync
 *   flow.return-stack    return stack popped when empty: resync
 *   flow.bad-image       trace contradicts the code image (EK_FLOW_CHK_* checks): resync
 *   flow.config          configuration the decoder does not support (data / cond. trace)
 *   flow.limit           too many undecided packets pending (damaged trace): resync
 *   flow.no-context      (NOTE) atoms before any context packet: not decodable, skipped
 * ek_flow_diag_ocsd() renders them as OpenCSD's log lines.
 */
#ifndef ETMKIT_FLOW_H
#define ETMKIT_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/config.h"
#include "etmkit/diag.h"
#include "etmkit/elem.h"
#include "etmkit/image.h" /* ek_flow_mem: how the decoder reads code */

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

struct ek_etm4_packet;

/* ---- configuration ---------------------------------------------------------------------- */

/* ek_flow_config.flags (the OpenCSD decoder's run-time options of the same meaning) */
#define EK_FLOW_SRC_ADDR_N_ATOMS                                                                   \
    0x0001u /* ETE source-address packets: split ranges on not-taken                               \
               branches (trc_pkt_lister -src_addr_n) */
#define EK_FLOW_CHK_N_UNCOND_DIR_BR                                                                \
    0x0002u /* N atom on an unconditional direct branch whose                                      \
               target is not the next instruction = bad image */
#define EK_FLOW_CHK_STRICT_N_UNCOND                                                                \
    0x0004u                                /* any N atom on an unconditional branch = bad image    \
                                            */
#define EK_FLOW_CHK_RANGE_CONTINUE 0x0008u /* ranges after an N atom must be contiguous */
#define EK_FLOW_CHK_NO_THUMB       0x0010u /* skip the N-atom checks in T32 code */
#define EK_FLOW_NO_BLOCK_CACHE     0x0100u /* classify every instruction (for testing) */

typedef struct ek_flow_config {
    uint32_t size;                  /* sizeof(ek_flow_config), set by ek_flow_config_init */
    const ek_source_config *source; /* protocol (ETMV4, ETMV4M, ETE), trace ID, registers,
                                       architecture and profile of the traced core */
    ek_flow_mem mem;                /* code access; find == NULL: no code (everything NACC) */
    uint32_t flags;                 /* EK_FLOW_* */
    const ek_diag *diag;            /* may be NULL */
    const char *file;               /* named in diagnostics, may be NULL */
    uint32_t max_pending;           /* limit on queued undecided packets (0: default 65536) */
    uint32_t compat;                /* the decode tree's EK_DECODE_COMPAT_* for the decoders
                                       of protocols that have such options (PTM, ETMv3, STM,
                                       ITM: etmkit/decode.h); this decoder has none */
} ek_flow_config;

void ek_flow_config_init(ek_flow_config *cfg);

/* ---- decoder ---------------------------------------------------------------------------- */

typedef struct ek_flow ek_flow;

/* Create a decoder. Returns 0, EK_ERR_ARG (no source / not an ETMv4 or ETE source) or
 * EK_ERR_NOMEM. Unsupported but decodable configurations (data trace enabled, ...) give a
 * flow.config diagnostic and decode what they can. */
int ek_flow_new(const ek_flow_config *cfg, ek_flow **out);
void ek_flow_free(ek_flow *f);

/* Decode one packet (the parser's record: etmkit/etm4.h). Elements it completes are appended
 * to the decoder's output queue. Returns 0, or EK_ERR_NOMEM. Errors in the trace are not
 * errors of this call: they are reported through the diag sink and as elements. */
int ek_flow_packet(ek_flow *f, const struct ek_etm4_packet *pkt);

/* End of trace: output what can still be output and EO_TRACE. */
int ek_flow_end(ek_flow *f);

/* The same as ek_flow_elems_clear(), then ek_flow_packet() / ek_flow_end(), then
 * ek_flow_elems(): one packet in, its elements out (in *elems, *count; valid as for
 * ek_flow_elems). Returns what ek_flow_packet / ek_flow_end returns. */
int ek_flow_step(ek_flow *f, const struct ek_etm4_packet *pkt, const ek_elem **elems,
                 size_t *count);
int ek_flow_end_step(ek_flow *f, const ek_elem **elems, size_t *count);

/* Start a new session on the same source (decoders reset between buffers): the next packet
 * gives NO_SYNC [reset-decoder]. The element queue is kept. */
void ek_flow_reset(ek_flow *f);

/* The elements queued so far (oldest first) and their number; valid until the next call that
 * changes the decoder. */
const ek_elem *ek_flow_elems(const ek_flow *f, size_t *count);
/* Forget the queued elements (after using them). */
void ek_flow_elems_clear(ek_flow *f);
/* Pull one element: 1 and *out filled, or 0 when the queue is empty. */
int ek_flow_next(ek_flow *f, ek_elem *out);

/* Counters since creation. */
typedef struct ek_flow_stats {
    uint64_t packets;               /* packets given to ek_flow_packet */
    uint64_t elems[EK_ELEM_NTYPES]; /* elements produced, by type */
    uint64_t instructions;          /* instructions in INSTR_RANGE / I_RANGE_NOPATH elements */
    uint64_t errors;                /* diagnostics of severity WARN or above */
    uint64_t resyncs;               /* times the decoder lost synchronisation after sync */
    uint64_t blocks_walked;         /* waypoint searches that classified instructions */
    uint64_t blocks_cached;         /* waypoint searches answered by the block cache */
    uint64_t atoms_skipped;         /* atoms committed while no address or context was known */
} ek_flow_stats;

void ek_flow_get_stats(const ek_flow *f, ek_flow_stats *out);

/* If ev is one of the decoder's diagnostics, append the line OpenCSD 1.8.0 logs for the same
 * error -- "DCD_ETMV4[_<id>] : 0x<code> (<NAME>) [<text>]; TrcIdx=<n>; CS ID=<id>; <reason>",
 * without a newline, as trc_pkt_lister prints it -- and return 1; else return 0. with_instance:
 * the decoder name carries the trace ID ("DCD_ETMV4_0016"), as the lister's decoders of a
 * frame-formatted buffer are named; a single-source buffer's decoder is plain "DCD_ETMV4";
 * negative: no name, the error alone (ocsdError::getErrorString, as the lister repeats the last
 * error at a fatal stop). */
int ek_flow_diag_ocsd(ek_sbuf *out, const ek_diag_event *ev, int with_instance);
/* 1 when ek_flow_diag_ocsd() would give a line for ev (OpenCSD logs that error). */
int ek_flow_diag_logged(const ek_diag_event *ev);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
