/* Call stacks from trace: the return addresses of every thread's stack, followed through its
 * branches samples (etmkit/synth.h), as far as the trace shows them.
 *
 *     ek_stacks_opts o;
 *     ek_stacks_opts_init(&o);
 *     ek_stacks *st;
 *     ek_stacks_new(&o, &st);
 *     // for every branches sample, in output order (an ordered consumer of a session):
 *     ek_stack_view v;
 *     ek_stacks_sample(st, smp, &v);   // v: the stack of the thread where the sample is
 *     ek_stacks_free(st);
 *
 * A frame is a return address: a call (branch with link) pushes the address after it, an
 * exception pushes its preferred return address (EK_FRAME_EXCEPTION), a return (RET, an A32/T32
 * implied return) and an exception return pop to the frame whose address they return to. A
 * branch without link (a tail call, BR, which perf labels "return") changes no frame: the
 * caller's return address is still the one the function will return to. What the trace does
 * not show is said, never guessed (docs/STACKS.md):
 *
 *  - frames entered before the trace of a thread started are not known: the bottom of every
 *    stack is open, and a return below the known frames is counted (returns_below), the stack
 *    stays empty;
 *  - a return that lands on a deeper known frame (longjmp, a C++ unwind, a return to another
 *    address than the top frame's) pops to it, counted (resyncs); a return that lands on none
 *    of the known frames (unmatched) leaves the stack unknown: its frames are forgotten and a
 *    gap frame (EK_FRAME_GAP) stays at its bottom;
 *  - a trace gap (a "tr end", then a "tr strt": trace off, code that could not be read, lost
 *    trace): where the trace begins again on the return address of the frame the trace ended
 *    with (the call or the exception whose code it did not follow) it pops that frame;
 *    anywhere else -- an older frame's address too: anything may have run meanwhile -- the
 *    frames entered and left during the gap are not known: the stack is forgotten, with a gap
 *    frame at its bottom (gaps). A gap is never papered over: a stack with a gap frame says
 *    that below its frames nothing is known because of a gap, one without says that below
 *    them are the frames entered before the trace;
 *  - a context switch: the branch where the trace's thread changes on a CPU (its previous
 *    sample in any of its trace sources, late ones left out; without CPUs, or per_source: on
 *    the trace source) ran on
 *    the outgoing thread's stack (its view; that stack stays as it was) and lands on the
 *    incoming thread's: on the innermost known frame returning there (the one its switch-out
 *    pushed), else as after a gap. The idle task (pid and tid 0) has a stack per
 *    CPU;
 *  - a trace source is one CPU's trace in one AUX queue: a CPU's trace in several queues (a
 *    shared sink) is followed from one to the next, and a sample a queue gives late (the end
 *    of its last range, flushed at the end of the trace) shows the stack as that queue left
 *    it, moving nothing;
 *  - a stack is bounded (max_depth): a push beyond it forgets the outermost frame (dropped).
 *
 * Returns the ETM return stack compressed (no address in the trace) come with their target
 * from the flow decoder, as every other return. Memory: max_depth frames per thread at most,
 * and a few bytes per trace source and CPU; nothing grows with the trace.
 */
#ifndef ETMKIT_STACKS_H
#define ETMKIT_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/synth.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

#define EK_FRAME_EXCEPTION 0x1u /* an exception's frame: addr is where it returns to */
#define EK_FRAME_GAP       0x2u /* frames the trace did not see (zero or more); addr is 0 */

typedef struct ek_stack_frame {
    uint64_t addr;  /* return address */
    uint32_t flags; /* EK_FRAME_* */
} ek_stack_frame;

typedef struct ek_stacks_opts {
    uint32_t size;      /* sizeof(ek_stacks_opts), set by ek_stacks_opts_init */
    uint32_t max_depth; /* frames kept per thread (default 1024, at least 1) */
    /* follow a stack per thread and trace source (the sample's cpu and trace ID) rather than
     * per thread: for recordings whose samples carry the thread of their buffer, not of the
     * trace (perf record --per-thread: a thread's buffer can hold trace another CPU wrote) */
    int per_source;
} ek_stacks_opts;

void ek_stacks_opts_init(ek_stacks_opts *o);

typedef struct ek_stacks ek_stacks;

int ek_stacks_new(const ek_stacks_opts *o, ek_stacks **out);
void ek_stacks_free(ek_stacks *st);

/* The stack of one thread at one point. */
typedef struct ek_stack_view {
    int32_t pid, tid;             /* whose stack it is (the outgoing thread at a switch) */
    uint64_t at;                  /* where: the sample's ip (a trace begin's: its addr) */
    const ek_stack_frame *frames; /* frames[n - 1] is the innermost; valid until the next call */
    uint32_t n;
    /* 1: a late sample's view -- the stack as its trace source left it, the thread having run
     * on in another queue since (the source's last range, flushed at the end of the trace) */
    int late;
} ek_stack_view;

/* Follow one sample (in output order: the order of a session's ordered consumer). A branches
 * sample moves its thread's stack; view (may be NULL) receives the stack where the sample is:
 * as the instruction at ip runs, before its branch (a trace begin: at its target). Other
 * samples only give the view of their thread's stack. Returns 0, or EK_ERR_NOMEM (the sample
 * is then not followed). */
int ek_stacks_sample(ek_stacks *st, const ek_sample *s, ek_stack_view *view);

typedef struct ek_stacks_stats {
    uint64_t calls, returns;          /* frames pushed by calls; returns that popped one */
    uint64_t exceptions, exc_returns; /* exception frames pushed; popped by exception returns */
    uint64_t returns_below;           /* returns with no known frame to pop (entered before the
                                       * trace or a gap) */
    uint64_t resyncs;                 /* returns and trace begins that skipped known frames */
    uint64_t unmatched;               /* returns that landed on no known frame */
    uint64_t gaps;                    /* stacks forgotten (a gap frame at their bottom) */
    uint64_t switches;                /* branches where the thread of a CPU changed */
    uint64_t dropped;                 /* outermost frames forgotten at max_depth */
    uint64_t threads;                 /* stacks followed */
} ek_stacks_stats;
void ek_stacks_get_stats(const ek_stacks *st, ek_stacks_stats *out);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
