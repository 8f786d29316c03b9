/* `perf script` text for samples (etmkit/synth.h), field for field as Linux perf 6.1 prints
 * them (tools/perf/builtin-script.c): the same widths, the same "[unknown]" placeholders, the
 * same "=>" layout for branch samples and the same brstack notation.
 *
 * Symbols and DSO names come from the caller through ek_script_resolver, so that the text
 * layer knows nothing about address spaces.
 */
#ifndef ETMKIT_SCRIPT_H
#define ETMKIT_SCRIPT_H

#include <stdint.h>

#include "etmkit/sbuf.h"
#include "etmkit/session.h"
#include "etmkit/synth.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

/* -F fields */
#define EK_SF_F_COMM (1u << 0)
#define EK_SF_F_TID (1u << 1)
#define EK_SF_F_PID (1u << 2)
#define EK_SF_F_TIME (1u << 3)
#define EK_SF_F_CPU (1u << 4)
#define EK_SF_F_EVENT (1u << 5)
#define EK_SF_F_IP (1u << 6)
#define EK_SF_F_SYM (1u << 7)
#define EK_SF_F_SYMOFF (1u << 8)
#define EK_SF_F_DSO (1u << 9)
#define EK_SF_F_ADDR (1u << 10)
#define EK_SF_F_FLAGS (1u << 11)
#define EK_SF_F_PERIOD (1u << 12)
#define EK_SF_F_BRSTACK (1u << 13)
#define EK_SF_F_BRSTACKSYM (1u << 14)
#define EK_SF_F_INSN (1u << 15)
#define EK_SF_F_INSNLEN (1u << 16)
#define EK_SF_F_MISC (1u << 17)
#define EK_SF_F_IPC (1u << 18)
#define EK_SF_F_CALLINDENT (1u << 19) /* perf's callindent: the call depth, as indentation */

typedef struct ek_script_fields {
    uint32_t fields;    /* EK_SF_F_* */
    int user_set;       /* -F given: addr of branches is printed only when asked */
    uint32_t named;     /* EK_SF_F_* named in -F (with + or - too): perf keeps these even
                           where the recording lacks them; a default field (cpu) it drops */
    int ns;             /* --ns: nanosecond times */
    const char *names[2]; /* event names by ek_sample_kind (NULL: "branches", "instructions";
                             perf adds the recorded event's modifiers: "branches:u") */
    int pad_dso;          /* callindent's "(dso)" column (no ip or addr shown) padded to this
                             width (--call-trace: 50, perf's pad_output_len_dso); 0: not */
    int flat_callindent;  /* callindent at depth 0 always, as perf 6.1 prints it on CoreSight
                             recordings (its cs-etm keeps no thread stack): --perf-callindent */
    int stack_branches_only; /* branches samples were asked only to follow the call stacks
                                (--itrace=ig): they are not printed */
    /* With callindent or call chains: what to leave out once the call stacks have seen it
     * (the session then makes every branch and keeps every sample of the CPUs it decodes):
     * --itrace=c / r (calls, asynchronous branches and trace ends / returns and trace begins,
     * as ek_itrace's), s N (the first N samples the selection keeps, every kind together),
     * and a filter (ek_sample_filter_match, with the resolver's comm). */
    int sel_calls, sel_returns;
    uint64_t sel_skip;
    const ek_sample_filter *sel_filter;
} ek_script_fields;

/* perf's default fields for the synthesised hardware events:
 * comm,tid,cpu,time,event,ip,sym,symoff,dso,period (time dropped when samples have none, cpu
 * when the recorded event has no PERF_SAMPLE_CPU and -F does not name it). */
void ek_script_fields_default(ek_script_fields *f);
/* Parse a -F list: "pid,tid,ip,sym" replaces the defaults; "+addr,-period" edits them. A
 * leading "<type>:" (hw, synth, ...) is accepted and ignored. Returns 0 or EK_ERR_ARG (with
 * a one-line reason in err). */
int ek_script_fields_parse(const char *spec, ek_script_fields *f, ek_sbuf *err);

/* ek_addr_loc and ek_script_resolver (where a sample's addresses are): etmkit/synth.h. */

/* One sample as one line (with newline). evname_width: width of the event-name column (perf
 * uses the longest event name of the session; 0: the name's own length). */
void ek_script_format(ek_sbuf *out, const ek_script_fields *f, const ek_sample *s,
                      const ek_script_resolver *r, int evname_width);

/* What a line shows beyond its sample (ek_script_format_x): the call depth (callindent) and
 * the call chain (--itrace=g), from the call stacks (etmkit/stacks.h). */
typedef struct ek_script_extra {
    int depth;             /* callindent: the call depth of the line */
    int *spacing;          /* callindent: the column width so far (perf keeps one for the whole
                            * output so that the columns after it line up); in and out */
    const uint64_t *chain; /* call chain, innermost first: the sample's ip, then return
                            * addresses (0: a gap, frames the trace did not see); NULL: none */
    uint32_t nchain;
    const ek_sample *chain_thread; /* the thread whose maps resolve the chain (NULL: the sample) */
} ek_script_extra;

/* ek_script_format with what x adds (x may be NULL: ek_script_format). */
void ek_script_format_x(ek_sbuf *out, const ek_script_fields *f, const ek_sample *s,
                        const ek_script_resolver *r, int evname_width, const ek_script_extra *x);

/* perf's flags column text (perf_sample__sprintf_flags): "call", "tr strt", "tr end  return",
 * "jcc", ... or flag letters; without the column padding. */
void ek_script_flags_text(ek_sbuf *out, uint32_t flags);

/* "branches" / "instructions" */
const char *ek_sample_kind_name(int kind);

/* ---- a session's samples as perf-script text ------------------------------------------------ */

/* Decode the session and write perf-script text for every sample, in output order, through
 * write() (called from the calling thread only): a staged consumer of the session (the lines
 * are made on the decoder threads, and a line already made for an identical sample is reused
 * when the fields allow). With callindent or call chains (--itrace=g) the lines follow
 * the call stacks (etmkit/stacks.h): an ordered consumer then, the lines made on the calling
 * thread; the stacks must see every branch, so the session must make every branch and keep
 * every sample (no c, r, s, and no filter but -C), and f's sel_* leave samples out after the
 * stacks saw them. Returns 0 or a negative status (write failure: EK_ERR_IO). May be called
 * once per session. */
typedef int (*ek_write_fn)(void *ctx, const char *text, size_t len);
int ek_session_script(ek_session *s, const ek_script_fields *f, ek_write_fn write, void *ctx);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
