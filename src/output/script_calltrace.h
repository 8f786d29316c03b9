/* perf-script text with call stacks (callindent, --itrace=g): the pieces script.c and
 * script_out.c call (src/output/script_calltrace.c). */
#ifndef ETMKIT_SCRIPT_CALLTRACE_H
#define ETMKIT_SCRIPT_CALLTRACE_H

#include "etmkit/script.h"

/* dso (NULL: "[unknown]") cut to pad - 1 bytes and padded with blanks to pad, as perf's
 * map__fprintf_dsoname with pad_output_len_dso */
void ek__script_put_dso_padded(ek_sbuf *out, const char *dso, uint32_t len, int pad);

/* perf's callindent column of a branches sample (perf_sample__fprintf_callindent) */
void ek__script_callindent(ek_sbuf *out, const ek_script_fields *f, const ek_sample *s,
                           const ek_script_resolver *r, const ek_script_extra *x);

/* the call chain in place of the ip: one line per entry (perf's sample__fprintf_callchain) */
void ek__script_chain(ek_sbuf *out, const ek_script_fields *f, const ek_sample *s,
                      const ek_script_resolver *r, const ek_script_extra *x);

/* ek_session_script's path when lines need the call stacks: an ordered consumer following
 * every sample through etmkit/stacks.h (f: the fields as ek_session_script completed them) */
int ek__session_script_ordered(ek_session *s, const ek_script_fields *f, int evw, ek_write_fn write,
                               void *ctx);

#endif
