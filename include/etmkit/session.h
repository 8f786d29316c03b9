/* A decoding session over one perf.data recording: perf-compatible samples and an account of
 * everything that could not be turned into samples.
 *
 *     ek_session_opts o;
 *     ek_session_opts_init(&o);
 *     o.symfs = "...";  ek_itrace_parse("b", &o.itrace, NULL);
 *     ek_session *s;
 *     if (ek_session_open("perf.data", &o, &diag, &s) == 0) {
 *         ek_session_script(s, &fields, write_fn, ctx);   // perf-script text, in order
 *         ek_session_report(s, &text, EK_REPORT_FULL);    // what was not used, and why
 *         ek_session_free(s);
 *     }
 *
 * Pipeline: the perf.data reader (etmkit/perf.h) cuts the AUX area into slices (one per
 * PERF_RECORD_AUX) grouped into queues (one per CPU or thread); the sideband records build an
 * address-space timeline (maps and threads over time); every queue is decoded on its own
 * thread -- deformatter, ETMv4/ETE packet parser, instruction-flow decoder reading code through
 * the timeline as it was when the slice was recorded, sample synthesis with perf's policy --
 * and the samples come out in perf's order (queue by queue without time stamps, by time stamp
 * otherwise). See README.md for the differences from `perf script`.
 */
#ifndef ETMKIT_SESSION_H
#define ETMKIT_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/diag.h"
#include "etmkit/filter.h"
#include "etmkit/sbuf.h"
#include "etmkit/script.h"
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
    unsigned threads;         /* decoder threads; 0: one per online CPU */
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
} ek_session_opts;

/* Sizes of the versions of ek_session_opts that ek_session_open accepts (fields past a
 * caller's size are taken as zero). */
#define EK_SESSION_OPTS_SIZE_V1 offsetof(ek_session_opts, progress)
#define EK_SESSION_OPTS_SIZE_V2 offsetof(ek_session_opts, jitdump)
#define EK_SESSION_OPTS_SIZE_V3 offsetof(ek_session_opts, filter)
#define EK_SESSION_OPTS_SIZE_V4 sizeof(ek_session_opts)

/* ek_session_opts.compat */
#define EK_COMPAT_NO_END_FLUSH 0x1u /* no "tr end" flush at the end of the trace (perf 6.1) */

void ek_session_opts_init(ek_session_opts *o);

typedef struct ek_session ek_session;

/* Open a recording (a perf.data file, or a perf.data folder holding "data" and "kcore_dir")
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

/* Decode and write perf-script text for every sample, in output order, through write()
 * (called from the calling thread only). Returns 0 or a negative status (write failure:
 * EK_ERR_IO). May be called once per session. */
typedef int (*ek_write_fn)(void *ctx, const char *text, size_t len);
int ek_session_script(ek_session *s, const ek_script_fields *f, ek_write_fn write, void *ctx);

/* Decode and hand every sample to fn in output order (from the calling thread), with a
 * resolver for its addresses. Returns 0, fn's non-zero status, or a negative status. */
typedef int (*ek_sample_fn)(void *ctx, const ek_sample *s, const ek_script_resolver *r);
int ek_session_samples(ek_session *s, ek_sample_fn fn, void *ctx);

/* The account of what was not turned into samples (after a run; before one, only what the
 * file itself shows). */
#define EK_REPORT_SUMMARY 0 /* a few lines: counts and the main remedies */
/* doctor: every cause (a problem) with its details and remedies; notes counted in one line */
#define EK_REPORT_FULL    1
#define EK_REPORT_VERBOSE 2 /* also every record, the notes, and diagnostic ids ("[kind]") */
void ek_session_report(ek_session *s, ek_sbuf *out, int level);

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
