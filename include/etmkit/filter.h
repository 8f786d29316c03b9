/* Which samples to keep: perf script's -C/--cpu, --pid, --tid, --comm and --time.
 *
 *     ek_sample_filter f = EK_SAMPLE_FILTER_INIT;
 *     if (ek_sample_filter_cpus(&f, "0-2,4", &err) || ek_sample_filter_time(&f, "1.5,", &err))
 *         ...  // err holds one line
 *     o.filter = &f;                                   // ek_session_opts: applied to every sample
 *     ...
 *     ek_sample_filter_free(&f);                       // after the session
 *
 * The syntax is perf 6.1's (tools/perf/util/cpumap.c, intlist.c, strlist.c, time-utils.c), and a
 * sample is kept as perf keeps it; etmkit refuses a few things perf takes silently (see each
 * function). A filter is a plain value: a few sorted lists and a predicate on one sample. */
#ifndef ETMKIT_FILTER_H
#define ETMKIT_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/sbuf.h"
#include "etmkit/synth.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

/* perf time in nanoseconds; both ends included; 0: that end is open */
typedef struct ek_time_range {
    uint64_t start, end;
} ek_time_range;

/* Each list is empty (that filter is off) or holds what a sample must match. */
typedef struct ek_sample_filter {
    int32_t *cpus; /* -C: ascending, no duplicates */
    size_t ncpus;
    int32_t *pids; /* --pid: ascending */
    size_t npids;
    int32_t *tids; /* --tid: ascending */
    size_t ntids;
    char **comms; /* --comm: as listed */
    size_t ncomms;
    ek_time_range *times; /* --time: ascending, not overlapping */
    size_t ntimes;
} ek_sample_filter;

#define EK_SAMPLE_FILTER_INIT                                                                      \
    {                                                                                              \
        0                                                                                          \
    }

/* Each parser replaces that list (as perf, the last option given counts) and returns 0, or
 * EK_ERR_ARG (the list unchanged) with a one-line reason in err (may be NULL); EK_ERR_NOMEM. */

/* "0-2,4": decimal CPU numbers and ranges (perf also takes octal and hex: "010", "0x8"; etmkit
 * refuses them, and the trailing garbage perf ignores, as "0,x"). A CPU listed twice is an
 * error, as in perf. */
int ek_sample_filter_cpus(ek_sample_filter *f, const char *list, ek_sbuf *err);
/* "1000,1001": decimal numbers (perf reads an empty entry as 0; etmkit refuses it). */
int ek_sample_filter_pids(ek_sample_filter *f, const char *list, ek_sbuf *err);
int ek_sample_filter_tids(ek_sample_filter *f, const char *list, ek_sbuf *err);
/* "bash,make": command names, compared whole (perf's --comm). Empty names are refused. */
int ek_sample_filter_comms(ek_sample_filter *f, const char *list, ek_sbuf *err);
/* "START,STOP": seconds with up to 9 decimals (nanoseconds; no rounding: more digits are an
 * error), either end may be empty ("START," / ",STOP"); several ranges separated by blanks
 * ("1.5,1.6 1.8,1.9"), ascending and not overlapping. Percentages ("10%/2") need the
 * recording's first and last sample times and are refused. */
int ek_sample_filter_time(ek_sample_filter *f, const char *str, ek_sbuf *err);

void ek_sample_filter_free(ek_sample_filter *f);

/* Is any list set? */
int ek_sample_filter_active(const ek_sample_filter *f);

/* Keep sample s? comm is the name of its thread as output (NULL: unknown, matches no --comm
 * list); only read when f->ncomms. As perf: a sample without a time (or time 0) passes --time;
 * a sample without a CPU (-1) fails -C. */
int ek_sample_filter_match(const ek_sample_filter *f, const ek_sample *s, const char *comm);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
