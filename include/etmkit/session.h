/* A decoding session over one perf.data recording: perf-compatible samples and an account of
 * everything that could not be turned into samples.
 *
 *     ek_session_opts o;
 *     ek_session_opts_init(&o);
 *     o.symfs = "...";  ek_itrace_parse("b", &o.itrace, NULL);
 *     ek_session *s;
 *     if (ek_session_open("perf.data", &o, &diag, &s) == 0) {
 *         ek_session_samples(s, on_sample, ctx);          // samples, in perf's order
 *         ek_session_account(s, &account);                // what was not used, and why
 *         ek_session_free(s);
 *     }
 *
 * Pipeline: the perf.data reader (etmkit/perf.h) cuts the AUX area into slices (one per
 * PERF_RECORD_AUX) grouped into queues (one per CPU or thread); the sideband records build an
 * address-space timeline (maps and threads over time); every queue is decoded on its own
 * thread -- deformatter, ETMv4/ETE packet parser, instruction-flow decoder reading code through
 * the timeline as it was when the slice was recorded, sample synthesis with perf's policy --
 * and the samples come out in perf's order (queue by queue without time stamps, by time stamp
 * otherwise). See docs/SCRIPT.md for the differences from `perf script`.
 *
 * The session makes data, never text: a run hands structured samples (and, to a consumer that
 * asks, the generic elements they were made from) to a consumer (ek_consumer, below).
 * perf-script text is one such consumer, ek_session_script in etmkit/script.h.
 */
#ifndef ETMKIT_SESSION_H
#define ETMKIT_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/diag.h"
#include "etmkit/filter.h"
#include "etmkit/perf.h"
#include "etmkit/elem.h"
#include "etmkit/sbuf.h"
#include "etmkit/synth.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

typedef struct ek_session_opts {
    uint32_t size;            /* sizeof(ek_session_opts), set by ek_session_opts_init */
    const char *symfs;        /* --symfs: prefix for the recorded file names */
    const char *buildid_dir;  /* build-id cache (perf's ~/.debug layout); NULL: $HOME/.debug */
    const char *vmlinux;      /* -k: vmlinux (or a kcore ELF file) */
    const char *kallsyms;     /* --kallsyms: kernel symbols */
    const char *kcore_dir;    /* folder made by `perf record --kcore` (kcore, kallsyms) */
    ek_itrace itrace;         /* samples to make (ek_itrace_default when !itrace.set) */
    unsigned threads;         /* threads at work at once, the decoders and the caller's thread
                               * (ordered consumers, the staged writer) together: 1 is one
                               * core; 0: no limit (a decoder thread per queue with time
                               * stamps, one per online CPU without) */
    unsigned compat;          /* EK_COMPAT_*: reproduce a perf 6.1 behaviour on purpose */
    /* --- version 2 (size >= EK_SESSION_OPTS_SIZE_V2) --- */
    /* bytes of AUX trace decoded of the recording's total, while ek_session_script or
     * ek_session_samples runs: called from the thread that called them (never from a decoder
     * thread) when a slice of trace has been decoded, and every 100 ms while the output
     * waits for the decoders; NULL: none */
    ek_progress_fn progress;
    void *progress_ctx;
    /* --- version 3 --- */
    /* --jitdump: a JIT's jit-PID.dump to use for process PID (its header names the pid) when
     * the recording's own is not found; NULL: none. JIT code is otherwise read from the jitdump
     * the process mapped (its MMAP2 record), looked for under symfs and at the recorded path. */
    const char *jitdump;
    /* --- version 4 --- */
    /* samples to keep (perf's -C, --pid, --tid, --comm, --time); NULL: all. Kept by the
     * caller until ek_session_free. Applied before any output: ek_session_script and
     * ek_session_samples see only the samples it keeps; ek_session_stats counts all. */
    const ek_sample_filter *filter;
    /* --- version 5 --- */
    /* --raw-cpu: raw trace that no record ties to a CPU (perf record --per-thread on TRBEs)
     * decodes with CPU raw_cpu - 1's configuration when raw_cpu > 0 (0: only when every CPU
     * has the same configuration; see ek_perf_queues_opts) */
    uint32_t raw_cpu;
    /* --- version 6 --- */
    /* --image: code given as files (etmkit/image.h), for trace snapshot folders only: laid
     * over the memory dumps of every buffer; an ELF's symbols name its addresses. Kept by the
     * caller during ek_session_open (copied). A perf recording refuses them (EK_ERR_ARG). */
    const struct ek_image_spec *images;
    size_t nimages;
    /* --- version 7 --- */
    /* a trace snapshot made by the caller (a bare trace file and its configuration:
     * ek_snapshot_from_trace, etmkit/snapshot.h), decoded as a snapshot folder would be; path
     * then only names it in messages. Kept by the caller until ek_session_free. NULL: the
     * input is path. */
    const struct ek_snapshot *snapshot;
} ek_session_opts;

/* Sizes of the versions of ek_session_opts that ek_session_open accepts (fields past a
 * caller's size are taken as zero). */
#define EK_SESSION_OPTS_SIZE_V1 offsetof(ek_session_opts, progress)
#define EK_SESSION_OPTS_SIZE_V2 offsetof(ek_session_opts, jitdump)
#define EK_SESSION_OPTS_SIZE_V3 offsetof(ek_session_opts, filter)
#define EK_SESSION_OPTS_SIZE_V4 offsetof(ek_session_opts, raw_cpu)
#define EK_SESSION_OPTS_SIZE_V5 offsetof(ek_session_opts, images)
#define EK_SESSION_OPTS_SIZE_V6 offsetof(ek_session_opts, snapshot)
#define EK_SESSION_OPTS_SIZE_V7 sizeof(ek_session_opts)

/* ek_session_opts.compat */
#define EK_COMPAT_NO_END_FLUSH 0x1u /* no "tr end" flush at the end of the trace (perf 6.1) */

void ek_session_opts_init(ek_session_opts *o);

typedef struct ek_session ek_session;

/* Open a recording (a perf.data file, or a perf.data folder holding "data" and "kcore_dir")
 * or a trace snapshot folder (one holding snapshot.ini: every trace source of every buffer
 * decoded with its memory dumps; threads are trace IDs, see docs/SNAPSHOT-SESSION.md)
 * and prepare it: sideband timeline, queues, DSOs. Problems found go to diag (if any) and to
 * the session's report. Decoding runs on several threads; diag's function is called from them
 * but never by two at once (the session serialises it). Returns 0, or a negative status when
 * nothing can be decoded at all (not a perf.data file, unreadable: EK_ERR_IO, with the
 * system's reason in the diagnostic), or EK_ERR_ARG when an option cannot apply to this
 * recording (a CPU filter on samples without a CPU, or a CPU it does not have; one
 * "session.filter" diagnostic says which). o->size may be that of an earlier version. */
int ek_session_open(const char *path, const ek_session_opts *o, const ek_diag *diag,
                    ek_session **out);
void ek_session_free(ek_session *s);

/* The recording the session reads (a perf.data folder's data file), opened once by
 * ek_session_open: immutable, valid until ek_session_free, usable alongside a run (profiles,
 * inject). */
const ek_perf_file *ek_session_file(const ek_session *s);

/* ---- consumers: what a run hands out --------------------------------------------------------- */

/* One element as sample synthesis took it, with the thread and time it belongs to. */
typedef struct ek_session_elem {
    const ek_elem *elem;  /* valid during the callback only */
    int32_t pid, tid;     /* thread of the samples made from it (-1: unknown) */
    int32_t cpu;          /* CPU of its trace source (-1: unknown) */
    int has_time;
    uint64_t time;        /* perf time (ns) the samples made from it carry, with has_time */
} ek_session_elem;

/* A sample's context on the decoder thread that made it (ek_consumer.encode). */
typedef struct ek_sample_ctx {
    const ek_script_resolver *r; /* its addresses and thread name, as its thread saw them */
    uint32_t block;     /* serial of its AUX slice among its queue's (never 0) */
    int has_t;          /* t: the time its addresses are resolved at (CoreSight time stamps); */
    uint64_t t;         /* without it, answers hold for the slice (block) only */
    /* what r's answers for this sample depended on (set by r as it answers): */
    int unstable;       /* more than the address, the process, the block and t (a name) */
    uint64_t v_lo, v_hi; /* with has_t: the times t in [v_lo, v_hi) give the same answers */
} ek_sample_ctx;

/* What a run hands its consumer, in perf's output order: samples and (EK_CONSUME_ELEMS) the
 * elements sample synthesis took. Two ways (a consumer sets one):
 *
 *  - ordered callbacks (sample, elem): called on the thread that called ek_session_run, in
 *    output order, each element before the samples made from it.
 *  - staged (encode, put): a consumer whose work per sample is costly (text) does it on the
 *    decoder threads: encode turns a sample into bytes (one unit per sample) on the thread
 *    decoding its queue, several queues at once; put receives those bytes on the calling
 *    thread, in output order, in runs of whole units. Per-queue state comes from queue_begin
 *    and goes to queue_end (on the same thread as encode). Without time stamps, where the
 *    queues are output one after the other, and with two threads or more (ek_session_opts.
 *    threads, or 0 on a machine of two CPUs or more), encode, queue_begin and queue_end run
 *    on the calling thread instead, queue by queue in output order, while a decoder thread
 *    decodes the queue being output: the units are the same. Elements are not handed to a
 *    staged consumer.
 *  - ordered with a stage (sample and stage, for samples only): stage gets every sample
 *    first, on the thread decoding its queue (per-queue state from queue_begin, as above,
 *    and the sample's resolver in c); it returns 0 when it is done with the sample, 1 to have
 *    it handed to sample as well (in output order), or a negative status, which stops the
 *    run. queue_end is called when the queue's last sample has been staged. A perf
 *    recording's run only, without --itrace=sN (ek_itrace.initial_skip): otherwise, and with
 *    encode, ek_session_run refuses the consumer (EK_ERR_ARG).
 *
 * Samples a filter (ek_session_opts.filter) leaves out are never handed out; --itrace=sN
 * leaves out the first N samples of the output (counted before the filter, as perf does):
 * a staged consumer then gives unit_len (the length of the unit at data) and hole (the unit
 * that stands for a left-out sample, which put must drop when it sees one).
 *
 * A consumer of elements that needs only some of them says which (elem_types, elem_flags):
 * the others are never handed over, which spares the run the work of ordering them. */
#define EK_CONSUME_ELEMS 0x1u

typedef struct ek_consumer {
    uint32_t size;   /* sizeof(ek_consumer), set by ek_consumer_init */
    uint32_t wants;  /* EK_CONSUME_* */
    void *ctx;
    int no_insn;     /* ek_sample.insn is not used: no code reads for it */
    /* ordered: a non-zero return stops the run with that status */
    int (*sample)(void *ctx, const ek_sample *s, const ek_script_resolver *r);
    int (*elem)(void *ctx, const ek_session_elem *e);
    /* staged */
    void *(*queue_begin)(void *ctx);          /* NULL return: qctx NULL */
    void (*queue_end)(void *ctx, void *qctx);
    void (*encode)(void *qctx, ek_sbuf *out, const ek_sample *s, ek_sample_ctx *c);
    int (*put)(void *ctx, const char *data, size_t len);
    size_t (*unit_len)(void *ctx, const char *data, size_t len);
    void (*hole)(void *ctx, ek_sbuf *out);
    /* EK_CONSUME_ELEMS: the element types wanted (bits 1u << ek_elem_type; 0: every type),
     * and of those only the ones with one of the EK_ELEMF_* flags in elem_flags (0: any) */
    uint32_t elem_types;
    uint32_t elem_flags;
    /* --- version 2 --- */
    /* ordered with a stage (above): 0, 1 (hand s to sample too) or a negative status */
    int (*stage)(void *qctx, const ek_sample *s, ek_sample_ctx *c);
} ek_consumer;

/* Sizes of the versions of ek_consumer that ek_session_run accepts (fields past a caller's
 * size are taken as zero). */
#define EK_CONSUMER_SIZE_V1 offsetof(ek_consumer, stage)

void ek_consumer_init(ek_consumer *c);

/* Decode and hand everything to c. Returns 0, a callback's non-zero status, or a negative
 * status. A session runs once (EK_ERR_ARG the second time). */
int ek_session_run(ek_session *s, const ek_consumer *c);

/* Decode and hand every sample to fn in output order (from the calling thread), with a
 * resolver for its addresses: ek_session_run with an ordered consumer. Returns 0, fn's
 * non-zero status, or a negative status. */
typedef int (*ek_sample_fn)(void *ctx, const ek_sample *s, const ek_script_resolver *r);
int ek_session_samples(ek_session *s, ek_sample_fn fn, void *ctx);

/* What consumers showing samples need to know about the recording. */
typedef struct ek_session_info {
    const char *event_names[2]; /* perf's names of the synthesised events by ek_sample_kind,
                                 * with the recorded event's modifiers ("branches:u") */
    int samples_have_cpu;       /* the recorded event samples PERF_SAMPLE_CPU */
    const ek_itrace *itrace;    /* the options in force */
    int filtered;               /* a sample filter is set */
} ek_session_info;
void ek_session_get_info(const ek_session *s, ek_session_info *out);

/* The account of what was not turned into samples is data: ek_session_account
 * (etmkit/account.h); its words are made in etmkit/account_out.h (ek_session_report). */

/* Number of kinds of problems found in the recording and its trace (0: none). */
int ek_session_problems(ek_session *s);

typedef struct ek_session_stats {
    uint64_t queues, slices, slices_no_data, trace_bytes, trace_bytes_decoded;
    uint64_t packets, elements, instructions;
    uint64_t samples_branches, samples_instructions;
    uint64_t nacc;          /* ADDR_NACC elements: code that could not be read */
    uint64_t decode_errors; /* decoder diagnostics of severity WARN or above */
} ek_session_stats;
void ek_session_get_stats(const ek_session *s, ek_session_stats *out);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
