/* Calling contexts from trace: how many instructions ran under every stack of functions, over a
 * session's ordered samples -- the data of a flame graph (Brendan Gregg's folded stacks) and of
 * `etmkit report`.
 *
 *     ek_calltree_opts o;
 *     ek_calltree_opts_init(&o);
 *     o.root = EK_CALLTREE_ROOT_COMM;        // "comm;outer;...;leaf", as stackcollapse-perf
 *     ek_calltree *ct;
 *     ek_calltree_new(&o, &ct);
 *     // for every sample, in output order (an ordered consumer of a session, --itrace=b):
 *     ek_calltree_sample(ct, smp, resolver);
 *     ek_sbuf folded = EK_SBUF_INIT;
 *     ek_calltree_folded(ct, &folded);        // "comm;main;f;g 1234\n", sorted
 *     ek_calltree_free(ct);
 *
 * Weight: a branches sample's ninsn (etmkit/synth.h), the instructions run since the branch
 * before it up to the one at ip, all in the function of ip, under the stack the sample's view
 * gives (etmkit/stacks.h: as the instruction at ip runs, before its branch). Summed over a run,
 * the weights are the instructions decoded.
 *
 * Key: the stack as functions, outermost first: a frame's return address is resolved to the
 * symbol that holds it (the caller; an exception's frame: the interrupted function), the leaf
 * to the symbol of ip. A gap frame (the trace lost the thread: EK_FRAME_GAP) is the function
 * "[gap]" at the bottom; frames entered before the trace began are not known and not shown.
 * An address without a symbol is "[DSO]" (the base name of its file, in brackets, as
 * stackcollapse-perf.pl names it) or "[unknown]" without a map. ';' in names becomes ':'.
 *
 * The calltree follows the stacks itself (an ek_stacks inside) and must see every branches
 * sample in output order: give it the samples of a session without a sample filter, and the
 * filter as opts.filter (the stacks follow every sample, only the samples it keeps are
 * weighed). Names are resolved once per frame pushed (a thread's frames that did not change
 * since its last sample keep their names) and copied: the resolver is used only during
 * ek_calltree_sample. Memory grows with the distinct stacks and names, not with the trace.
 */
#ifndef ETMKIT_CALLTREE_H
#define ETMKIT_CALLTREE_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/filter.h"
#include "etmkit/sbuf.h"
#include "etmkit/stacks.h"
#include "etmkit/synth.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

/* The first frame of every stack (stackcollapse-perf.pl's default, --pid, --tid). */
typedef enum ek_calltree_root {
    EK_CALLTREE_ROOT_NONE = 0, /* none: all threads together */
    EK_CALLTREE_ROOT_COMM = 1, /* "comm" of the thread (blanks as '_') */
    EK_CALLTREE_ROOT_PID = 2,  /* "comm-pid" */
    EK_CALLTREE_ROOT_TID = 3,  /* "comm-pid/tid" */
} ek_calltree_root;

typedef struct ek_calltree_opts {
    uint32_t size;      /* sizeof(ek_calltree_opts), set by ek_calltree_opts_init */
    int root;           /* ek_calltree_root (default EK_CALLTREE_ROOT_COMM) */
    uint32_t max_depth; /* frames followed per thread (ek_stacks_opts; default 1024) */
    int per_source;     /* ek_stacks_opts.per_source: !ek_session_info.samples_have_cpu */
    /* samples to weigh (NULL: all); kept by the caller until ek_calltree_free */
    const ek_sample_filter *filter;
    /* 1: "sym_[k]" for kernel functions (stackcollapse-perf.pl --kernel) */
    int annotate_kernel;
} ek_calltree_opts;

void ek_calltree_opts_init(ek_calltree_opts *o);

typedef struct ek_calltree ek_calltree;

int ek_calltree_new(const ek_calltree_opts *o, ek_calltree **out);
void ek_calltree_free(ek_calltree *ct);

/* One sample, in output order, with the resolver the session gave it. Branches samples move
 * the stacks and are weighed; others are ignored. Returns 0 or EK_ERR_NOMEM. */
int ek_calltree_sample(ek_calltree *ct, const ek_sample *s, const ek_script_resolver *r);

/* ---- what it holds ------------------------------------------------------------------------ */

/* A function: a name as shown in the stacks. */
typedef struct ek_calltree_func {
    const char *name; /* "main", "[libc.so.6]", "[unknown]", "[gap]", a root's "comm-pid" */
    const char *dso;  /* its file ("" when not known; a root: "") */
    int kind;         /* EK_CTF_* */
    uint64_t self;    /* instructions run in it (as the leaf) */
    uint64_t total;   /* instructions run in it and its callees (recursion counted once) */
    uint64_t calls;   /* calls into it (branches with link whose target is in it, kept by the
                       * filter) */
} ek_calltree_func;

#define EK_CTF_SYM   0 /* a symbol */
#define EK_CTF_NOSYM 1 /* an address without a symbol ("[dso]" or "[unknown]") */
#define EK_CTF_GAP   2 /* "[gap]" */
#define EK_CTF_ROOT  3 /* a thread (the root frame) */

/* A calling context: a function under its parent context. */
typedef struct ek_calltree_node {
    uint32_t parent; /* EK_CALLTREE_NONE: a stack's outermost frame */
    uint32_t func;   /* index into the functions */
    uint64_t self;   /* instructions run with this context as the stack */
} ek_calltree_node;
#define EK_CALLTREE_NONE UINT32_MAX

size_t ek_calltree_nfuncs(const ek_calltree *ct);
/* Function i (totals computed on the first call after the last sample). NULL when i is out
 * of range. Valid until the next ek_calltree_sample or ek_calltree_free. */
const ek_calltree_func *ek_calltree_func_get(ek_calltree *ct, size_t i);
size_t ek_calltree_nnodes(const ek_calltree *ct);
const ek_calltree_node *ek_calltree_node_get(const ek_calltree *ct, size_t i);

typedef struct ek_calltree_stats {
    uint64_t samples;      /* branches samples seen */
    uint64_t weighed;      /* ... kept by the filter */
    uint64_t instructions; /* their ninsn summed: the total weight */
    uint64_t resolves;     /* names asked of the resolver */
    uint64_t nodes, funcs;
} ek_calltree_stats;
void ek_calltree_get_stats(const ek_calltree *ct, ek_calltree_stats *out);
/* The stacks it follows (their counts). */
const ek_stacks *ek_calltree_stacks(const ek_calltree *ct);

/* Brendan Gregg's folded stacks: one line per context that ran instructions,
 * "outer;...;leaf COUNT\n", sorted by the bytes of the stack, appended to out. Returns 0 or
 * EK_ERR_NOMEM. */
int ek_calltree_folded(const ek_calltree *ct, ek_sbuf *out);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
