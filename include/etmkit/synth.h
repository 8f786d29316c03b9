/* Samples from generic trace elements, the way Linux perf's cs-etm support makes them.
 *
 * `perf script` on a CoreSight recording shows "branches" samples (one per taken branch, plus
 * trace-begin / trace-end markers), "instructions" samples (one every N instructions, with an
 * optional last-branch stack) -- synthesised from the decoder's instruction ranges by
 * tools/perf/util/cs-etm.c. ek_synth reproduces that policy (Linux perf 6.1) on etmkit's
 * elements (etmkit/elem.h) so that the samples, their flags, periods and branch stacks are
 * the ones perf prints, except where perf is wrong; the differences are listed in docs/SCRIPT.md
 * ("etmkit script and perf 6.1") and summarised here:
 *
 *  - perf keeps one sample state per queue in timeless mode, so trace from several CPUs in one
 *    sink is stitched into one stream; etmkit keeps one ek_synth per trace ID, always.
 *  - ADDR_NACC / I_RANGE_NOPATH (code that could not be read) end the decodable trace like a
 *    discontinuity ("tr end" ... => 0, then "tr strt" 0 => ...); perf ignores them and joins
 *    the ranges around the gap into a branch that never happened.
 *  - ETE exceptions get the same flags as ETMv4 ones (perf 6.1 compares the ETMv4 magic only
 *    and leaves ETE exceptions without flags).
 *  - end of trace flushes like any other discontinuity (perf 6.1 never tells its decoder that
 *    the trace ended, so the last branch of every queue is lost).
 *  - `c` and `r` select branches as perf's Intel PT decoder does (calls, asynchronous
 *    branches and trace ends; returns and trace begins); `s` leaves out the first N samples
 *    of the output, every kind together. perf 6.1's cs-etm ignores the three letters.
 *
 * One ek_synth follows one trace source (trace ID). Feed it elements in order; it calls the
 * sample callback for every sample. It keeps no global state and allocates only at creation.
 */
#ifndef ETMKIT_SYNTH_H
#define ETMKIT_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/config.h"
#include "etmkit/elem.h"
#include "etmkit/isa.h"
#include "etmkit/sbuf.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

/* ---- --itrace options --------------------------------------------------------------------- */

typedef enum ek_itrace_period_type {
    EK_ITRACE_PERIOD_INSTRUCTIONS = 0,
    EK_ITRACE_PERIOD_TICKS = 1,
    EK_ITRACE_PERIOD_NANOSECS = 2,
} ek_itrace_period_type;

#define EK_ITRACE_DEFAULT_PERIOD 100000u
#define EK_ITRACE_DEFAULT_LAST_BRANCH_SZ 64u
#define EK_ITRACE_MAX_LAST_BRANCH_SZ 1024u

typedef struct ek_itrace {
    int set;                 /* options were given (else the defaults apply) */
    int instructions;        /* i: instructions samples */
    uint64_t period;         /* i<N>: one sample every N (default 100000) */
    int period_type;         /* ek_itrace_period_type; only instructions are counted here */
    int branches;            /* b (also c, r): branches samples */
    int calls;               /* c: branch samples for calls (and async, trace end) only */
    int returns;             /* r: branch samples for returns (and trace begin) only */
    int last_branch;         /* l<N>: last-branch stack on instructions samples */
    uint32_t last_branch_sz; /* N (default 64, 1..1024) */
    int errors;              /* e: decode errors (reported by the session, not as samples) */
    int timeless;            /* Z: ignore time stamps */
    uint64_t initial_skip;   /* s<N>: leave out the first N samples, every kind together (an
                              * ek_synth counts its own; a session, its whole output) */
    int callchain;           /* g<N>: a call chain on every sample (etmkit script: from the
                              * call stacks, etmkit/stacks.h; perf 6.1's cs-etm ignores g) */
    uint32_t callchain_sz;   /* N: the chain's entries, the sample's ip included (default 16) */
} ek_itrace;

/* perf 6.1's samples when `perf script` is given no --itrace (or --itrace without letters):
 * its default is "ce", which cs-etm turns into a branches sample for every branch (it ignores
 * 'c'), and no instructions samples. So: b + e. ek_itrace_parse(NULL) gives the same. */
void ek_itrace_default(ek_itrace *o);
/* Parse a perf --itrace= string ("i100i", "bl", "i64il16", "Z", ...) into o (which is reset
 * first). Letters perf accepts but that mean nothing for CoreSight (x w p o I f m t a M q A d
 * G L) are accepted and ignored; g[N] sets callchain. Returns 0, or EK_ERR_ARG with a one-line
 * reason in err
 * (may be NULL). */
int ek_itrace_parse(const char *str, ek_itrace *o, ek_sbuf *err);

/* ---- samples ------------------------------------------------------------------------------ */

/* Sample flags: perf's PERF_IP_FLAG_* bits. */
#define EK_SF_BRANCH 0x0001u
#define EK_SF_CALL 0x0002u
#define EK_SF_RETURN 0x0004u
#define EK_SF_CONDITIONAL 0x0008u
#define EK_SF_SYSCALLRET 0x0010u
#define EK_SF_ASYNC 0x0020u
#define EK_SF_INTERRUPT 0x0040u
#define EK_SF_TX_ABORT 0x0080u
#define EK_SF_TRACE_BEGIN 0x0100u
#define EK_SF_TRACE_END 0x0200u
#define EK_SF_IN_TX 0x0400u
#define EK_SF_VMENTRY 0x0800u
#define EK_SF_VMEXIT 0x1000u
#define EK_SF_INTR_DISABLE 0x2000u
#define EK_SF_INTR_TOGGLE 0x4000u

/* cpumode of a sample (perf's PERF_RECORD_MISC_*) */
#define EK_CPUMODE_KERNEL 1u
#define EK_CPUMODE_USER 2u

typedef enum ek_sample_kind {
    EK_SAMPLE_BRANCHES = 0,     /* perf's "branches" event */
    EK_SAMPLE_INSTRUCTIONS = 1, /* perf's "instructions" event */
} ek_sample_kind;

typedef struct ek_branch {
    uint64_t from, to;
} ek_branch;

typedef struct ek_sample {
    uint8_t kind;          /* ek_sample_kind */
    uint8_t cpumode;       /* EK_CPUMODE_* (from the address, as perf does) */
    uint8_t insn_len;      /* bytes in insn (0: not available) */
    uint8_t trace_id;
    uint32_t flags;        /* EK_SF_* */
    int32_t pid, tid;      /* -1: unknown */
    int32_t cpu;           /* -1: unknown */
    uint32_t queue;        /* the decoding it came from (ek_synth_config.queue: in a session,
                            * the AUX queue whose trace made it); with cpu and trace_id it
                            * names one stream of samples */
    uint64_t ip;
    uint64_t addr;         /* branches: target (0 at trace end) */
    uint64_t resume;       /* branches into an exception (EK_SF_INTERRUPT with EK_SF_CALL):
                            * where the interrupted code resumes -- the exception's preferred
                            * return address, the instruction that runs after ip when no
                            * exception is taken -- when the trace gives it; 0 otherwise.
                            * Not in perf's samples: it tells whether a branch at ip was
                            * taken, and where, when the exception came right after it. */
    uint64_t period;
    uint64_t time;         /* perf time (ns), valid with has_time */
    int has_time;
    uint64_t index;        /* trace byte index of the element that completed the sample */
    uint8_t insn[4];
    uint32_t nbranches;    /* last-branch stack (instructions samples with l): newest first */
    const ek_branch *branches; /* valid during the callback only */
    /* branches samples (not trace begins): what the instruction at ip is, as the decoder
     * classified it -- ek_isubtype (a branch with link, an A64 RET, an ERET, an A32/T32
     * implied return; 0: none of those) -- and its size in bytes (0: not known). perf's flags
     * say "return" for every indirect branch without link (BR Xn too); a call-stack analysis
     * (etmkit/stacks.h) needs to tell a RET from a BR. */
    uint8_t isub, isize;
    /* branches samples: the instructions executed on this sample's stream since the branch
     * before it (from that branch's target; every branch made counts, also one --itrace's c/r
     * leaves out) up to and including the one at ip; 0 at a trace begin. What a profile
     * weighs a stack by: between two branches the code runs straight, in one function. */
    uint64_t ninsn;
} ek_sample;

/* ---- where a sample's addresses are ------------------------------------------------------ */

/* Answered by whoever knows the address space (a session, etmkit/session.h), asked by whoever
 * shows or counts samples (perf-script text, profiles). */
/* Where an address is: the text perf prints for it. */
typedef struct ek_addr_loc {
    const char *dso;  /* DSO name, NULL when no map covers the address ("[unknown]") */
    const char *sym;  /* symbol name, NULL when none ("[unknown]") */
    uint64_t symoff;  /* offset printed after "sym+" */
    uint32_t dso_len, sym_len; /* their lengths when known (0: measured) */
} ek_addr_loc;

typedef struct ek_script_resolver {
    /* Resolve addr for sample s. fallback = 0: the sample's IP (in the sample's cpumode only);
     * fallback = 1: a branch target or branch-stack address (perf tries the other cpumode
     * when the sample's finds nothing). */
    void (*resolve)(void *ctx, const ek_sample *s, uint64_t addr, int fallback, ek_addr_loc *out);
    /* comm of the sample's thread at the sample (NULL: ":<tid>" as perf). */
    const char *(*comm)(void *ctx, const ek_sample *s);
    void *ctx;
    /* Code bytes at addr as the sample's thread saw them: copies up to len bytes into buf and
     * returns how many (0: not available). May be NULL. */
    size_t (*code)(void *ctx, const ek_sample *s, uint64_t addr, void *buf, size_t len);
} ek_script_resolver;

/* ---- the synthesiser ---------------------------------------------------------------------- */

typedef struct ek_synth ek_synth;

typedef struct ek_synth_io {
    /* Read code bytes at addr for the current thread (SVC detection, T32 sizes, insn bytes):
     * returns the number of bytes copied (0: not available). May be NULL. */
    size_t (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
    /* Receive one sample. A non-zero return stops ek_synth_elem with that status. */
    int (*sample)(void *ctx, const ek_sample *s);
    void *ctx;
} ek_synth_io;

typedef struct ek_synth_config {
    uint32_t size;           /* sizeof(ek_synth_config), set by ek_synth_config_init */
    const ek_itrace *itrace; /* required */
    ek_protocol protocol;    /* exception numbering: ETMV3/PTM or ETMV4/ETE (default ETMV4) */
    int32_t cpu;             /* CPU of the trace source (-1 unknown) */
    uint8_t trace_id;
    uint32_t queue;          /* copied into ek_sample.queue */
    uint64_t kernel_start;   /* addresses >= it are kernel (default 1 << 63) */
    ek_synth_io io;
    int no_insn;             /* leave ek_sample.insn empty (no code reads for it) */
} ek_synth_config;

void ek_synth_config_init(ek_synth_config *cfg);
int ek_synth_new(const ek_synth_config *cfg, ek_synth **out);
void ek_synth_free(ek_synth *s);

/* Thread of the samples from now on (from context IDs, switch records or the queue). */
void ek_synth_set_thread(ek_synth *s, int32_t pid, int32_t tid);
/* Time of the samples from now on (perf time, ns); never called: samples have no time. */
void ek_synth_set_time(ek_synth *s, uint64_t time);

/* One element. Kinds that carry no instruction flow are ignored (PE_CONTEXT and TIMESTAMP are
 * the caller's: see ek_synth_set_thread / ek_synth_set_time). Returns 0 or the callback's
 * non-zero status. */
int ek_synth_elem(ek_synth *s, const ek_elem *e);
/* End of one block of trace (one AUX slice): the last-branch instructions sample perf makes
 * there (cs_etm__end_block). */
int ek_synth_end_block(ek_synth *s);

typedef struct ek_synth_stats {
    uint64_t branches, instructions; /* samples made */
    uint64_t ranges, instr;          /* INSTR_RANGE elements and instructions in them */
    uint64_t discontinuities;
    uint64_t gaps;                   /* ADDR_NACC / I_RANGE_NOPATH elements */
} ek_synth_stats;
void ek_synth_get_stats(const ek_synth *s, ek_synth_stats *out);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
