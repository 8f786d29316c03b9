/* `perf inject --itrace=il64` for CoreSight recordings: a perf.data file whose samples carry
 * last-branch stacks, for tools that read branch stacks (perf report/script, AutoFDO's
 * create_llvm_prof, BOLT's perf2bolt) and know nothing of CoreSight.
 *
 * What it writes is what perf 6.1's inject writes (cs-etm.c cs_etm__synth_events,
 * builtin-inject.c): the recording's attributes plus an "instructions" event (PERF_TYPE_HARDWARE,
 * PERF_COUNT_HW_INSTRUCTIONS, sample_period the itrace period, id = the cs_etm event's first id
 * + 1000000000) whose sample_type is the cs_etm event's (IDENTIFIER, IP, TID, TIME, ADDR, ID,
 * CPU, PERIOD bits) with IP, TID, PERIOD and BRANCH_STACK added; the
 * sideband (MMAP, MMAP2, COMM, FORK, EXIT, SWITCH, SWITCH_CPU_WIDE, LOST, TIME_CONV) as
 * recorded; no AUX area data (AUXTRACE_INFO, AUXTRACE, AUX, ITRACE_START, AUX_OUTPUT_HW_ID);
 * the recording's Linux features but the AUXTRACE index, and BRANCH_STACK. Branch entries
 * are "predicted" (perf's cs-etm sets predicted = 1: trace does not see mispredictions).
 * Differences: perf removes the cs_etm event and drops TIME from the samples of a recording
 * without time stamps; here the recording's events stay (their sideband records keep the IDs
 * they name), and TIME is dropped only when the events have IDENTIFIER: otherwise the ID
 * positions would differ, which perf refuses ("non matching sample_type"). perf 6.1 sets
 * PERF_SAMPLE_BRANCH_HW_INDEX in branch_sample_type and writes hw_idx (-1) before the entries;
 * AutoFDO 0.19's perf.data reader does not know that word and rejects such files, so the stacks
 * here have no hw_idx (perf reads both).
 *
 * A pipe-mode writer (EK_PW_PIPE: `perf inject -o -`) gets what perf 6.1's pipe mode writes:
 * HEADER_ATTR records, HEADER_FEATURE records right after them for the features perf sends in
 * pipe mode (not TRACING_DATA, BUILD_ID, BRANCH_STACK, AUXTRACE, STAT, CACHE, DIR_FORMAT,
 * HYBRID_TOPOLOGY, nor one too large for a record), its end-of-features mark, and the build-ids
 * as HEADER_BUILD_ID records. */
#ifndef ETMKIT_INJECT_H
#define ETMKIT_INJECT_H

#include <stdint.h>

#include "etmkit/perf.h"
#include "etmkit/perf_write.h"
#include "etmkit/session.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

typedef struct ek_inject_stats {
    uint64_t samples;  /* instructions samples written */
    uint64_t sideband; /* sideband records copied */
} ek_inject_stats;

/* The flags for ek_pw_new* that write in the recording's byte order (records are copied). */
unsigned ek_inject_writer_flags(const ek_perf_file *in);

/* Write the injected file into out (a new writer: nothing written yet) from the recording in
 * and its session s, opened with instructions samples and last-branch stacks (--itrace=il...):
 * EK_ERR_ARG otherwise. The caller closes out. Returns 0 or a negative status. */
int ek_inject(const ek_perf_file *in, ek_session *s, const ek_itrace *itrace, ek_pw *out,
              ek_inject_stats *st);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
