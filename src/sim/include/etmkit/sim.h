/* etmkit's CoreSight system simulator (the library behind `etmkit gen`).
 *
 * A scenario describes a small Arm system (CPUs with ETMv4 or ETE trace units, funnels,
 * shared ETR/ETF sinks or per-CPU TRBE-like raw sinks), programs (real AArch64 code embedded
 * in the library: executables, shared libraries and a kernel image) and one or more
 * `perf record` sessions. Running it writes, under the output folder:
 *   perf.data                 (or a snapshot folder, for snapshot scenarios)
 *   symfs/...                 the binaries at the paths the recording names
 *   expected-branches.txt     what a correct decoder prints for
 *                             perf script --itrace=b -F pid,tid,cpu,flags,ip,sym,symoff,dso,addr
 *   truth.summary             scenario, seed, counts, per-session and per-sink facts
 *   truth.branches.tsv        every executed branch (time, cpu, pid, tid, el, from, to, kind)
 *   truth.trace.tsv           where sessions enable and disable each trace unit, by branch row
 * Same options and seed: byte-identical output. See docs/SIMULATOR.md. */
#ifndef ETMKIT_SIM_H
#define ETMKIT_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/diag.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

typedef struct ek_sim_opts {
    size_t size;          /* sizeof(ek_sim_opts) */
    const char *scenario; /* name from ek_sim_scenario_name() */
    uint64_t seed;
    uint64_t trace_size;     /* bytes of trace to produce; 0 = the scenario's default */
    const char *config_file; /* optional "key = value" overrides (see docs/SIMULATOR.md) */
    const char *outdir;      /* created if missing */
    const ek_diag *diag;     /* problems and notes; may be NULL */
    /* --- version 2 (size >= EK_SIM_OPTS_SIZE_V2) --- */
    /* bytes of trace produced of trace_size (or the scenario's default), from the calling
     * thread, about every 256 KiB of trace; NULL: none */
    ek_progress_fn progress;
    void *progress_ctx;
} ek_sim_opts;

/* Sizes of the versions of ek_sim_opts that ek_sim_run accepts (fields past a caller's size
 * are taken as zero). */
#define EK_SIM_OPTS_SIZE_V1 offsetof(ek_sim_opts, progress)
#define EK_SIM_OPTS_SIZE_V2 sizeof(ek_sim_opts)

typedef struct ek_sim_result {
    uint64_t trace_bytes; /* bytes the trace units produced */
    uint64_t aux_bytes;   /* bytes recorded in AUX buffers / snapshot buffers */
    uint64_t instructions;
    uint64_t branches;
    uint64_t expected_lines; /* lines written to expected-branches.txt */
    int truth_complete;      /* 0: ground truth was summarised (very large runs) */
    /* sink arbitration (seed 002): all three must be 0 in every run */
    uint64_t sink_mixed;         /* trace written into a sink owned by another session */
    uint64_t sink_invariant;     /* refcount/owner/running-event mismatches, leaks at the end */
    uint64_t touched_after_exit; /* starts, trace or AUX data for a session that had ended */
    uint64_t sink_refused;       /* event starts refused because another session owned a sink */
    /* a run that failed to write (EK_ERR_IO): the first file or folder it could not create,
     * write or close, as the run named it (under opts->outdir, or outdir or a folder above
     * it; cut to fit), and the system's errno for it; io_errno 0: no such failure */
    int io_errno;
    char io_file[4096];
} ek_sim_result;

size_t ek_sim_scenario_count(void);
const char *ek_sim_scenario_name(size_t i);
const char *ek_sim_scenario_desc(size_t i);

/* Run one scenario. Returns 0 or a negative ek_status (EK_ERR_NOT_FOUND: unknown scenario;
 * EK_ERR_IO: res->io_file and res->io_errno say which file and why). */
int ek_sim_run(const ek_sim_opts *opts, ek_sim_result *res);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
