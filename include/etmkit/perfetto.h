/* Timelines of call stacks as a Perfetto trace (https://ui.perfetto.dev): the nested function
 * calls of every thread, followed through a session's branches samples by the library's stack
 * analysis (etmkit/stacks.h), written as Perfetto's protobuf trace -- a stream of TracePacket
 * messages with TrackDescriptor and TrackEvent payloads -- as the samples come, through a
 * caller's write function.
 *
 *     ek_perfetto_opts o;
 *     ek_perfetto_opts_init(&o);
 *     o.write = my_write; o.ctx = file;      // bytes of the trace, in order
 *     o.per_source = !info.samples_have_cpu; // as ek_stacks_opts.per_source
 *     ek_perfetto *w;
 *     ek_perfetto_new(&o, &w);
 *     // for every sample, in output order (an ordered consumer of a session):
 *     ek_perfetto_sample(w, sample, resolver);
 *     ek_perfetto_finish(w);                 // ends what is open, writes the rest
 *     ek_perfetto_free(w);
 *
 * Tracks: one per process (its threads' parent), one per thread (the idle task, and every
 * thread with per_source, one per CPU), one per CPU (the thread that ran: from the samples'
 * CPU). Slices on a thread's track are its known stack frames: a call (or an exception:
 * "NAME (exception)") begins a slice named after the function it enters, the return (or the
 * exception return) that pops the frame ends it. Where the stack analysis forgets a thread's
 * stack (a trace gap it cannot bridge, a return to no known frame) every open slice of the
 * thread ends; a trace gap of the thread (from its trace end to where its trace begins again)
 * is a slice of its own, "trace gap", nested where the stack was. At the end of the trace
 * every open slice ends. The clock: perf time (ns) from the trace's time stamps; without time
 * stamps, the instructions executed (ek_sample.ninsn, summed over the output), and the
 * tracks' names say so. Events on a track never go back in time (a change is timed at the
 * sample whose branch made it; equal times are written in the order they happened). See
 * docs/STACKS.md, "Timelines in Perfetto".
 *
 * Names (functions, DSOs, a CPU's "comm pid/tid") are interned: written once, then referred to
 * by number (Perfetto's InternedData; one packet sequence).
 *
 * Memory: the stack analysis' (max_depth frames per thread), a mirror of it, one packet at a
 * time, and each distinct name once (at most max_interned bytes of them, 64 MiB by default;
 * names past that are written in full every time); nothing grows with the length of the
 * trace.
 */
#ifndef ETMKIT_PERFETTO_H
#define ETMKIT_PERFETTO_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/filter.h"
#include "etmkit/synth.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

/* Receives the trace's bytes, in order; non-zero stops the writer (that status is returned). */
typedef int (*ek_perfetto_write_fn)(void *ctx, const void *data, size_t len);

typedef struct ek_perfetto_opts {
    uint32_t size; /* sizeof(ek_perfetto_opts), set by ek_perfetto_opts_init */
    ek_perfetto_write_fn write;
    void *ctx;
    uint32_t max_depth; /* frames kept per thread (ek_stacks_opts.max_depth; default 1024) */
    int per_source;     /* a stack per thread and trace source (ek_stacks_opts.per_source) */
    int no_cpu_tracks;  /* leave out the CPU tracks */
    int no_dso;         /* leave out the "dso" annotation of the slices */
    /* The threads shown (NULL: all): those whose pid, tid and comm (as the resolver names the
     * thread when its first sample comes) its --pid, --tid and --comm lists keep. The stacks
     * still follow every sample, so a shown thread's slices are those of the whole trace; the
     * CPU tracks show the shown threads only. Its CPU and time lists are not used here: give
     * them to the session (ek_session_opts.filter), which decodes only what they keep. */
    const ek_sample_filter *filter;
    /* Bytes of names kept to be referred to by number (0: the default, 64 MiB), each name
     * counting its length and 64 for its table entry: the memory the names take; a name that
     * would pass it is written in full wherever it is used. */
    size_t max_interned;
} ek_perfetto_opts;

void ek_perfetto_opts_init(ek_perfetto_opts *o);

typedef struct ek_perfetto ek_perfetto;

int ek_perfetto_new(const ek_perfetto_opts *o, ek_perfetto **out);
/* Follow one sample (in output order; samples other than branches are ignored); r (may be
 * NULL) names functions, DSOs and threads. Returns 0, EK_ERR_NOMEM, or the write function's
 * status. */
int ek_perfetto_sample(ek_perfetto *w, const ek_sample *s, const ek_script_resolver *r);
/* End every open slice and write what is left. Returns 0 or the write function's status. */
int ek_perfetto_finish(ek_perfetto *w);
void ek_perfetto_free(ek_perfetto *w);

typedef struct ek_perfetto_stats {
    uint64_t packets, bytes; /* written */
    uint64_t slices;         /* function slices begun (every one is ended) */
    uint64_t gaps;           /* trace gap slices */
    uint64_t lost;           /* times a thread's stack was forgotten (its slices ended) */
    uint64_t threads, cpus;  /* tracks */
    int clock_instructions;  /* 1: times are instruction counts (no time stamps) */
} ek_perfetto_stats;
void ek_perfetto_get_stats(const ek_perfetto *w, ek_perfetto_stats *out);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
