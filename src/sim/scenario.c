/* The scenarios of `etmkit gen` (AArch64; the Armv7 ones are in v7gen.c) as data: each is a
 * name, a description, a default trace size and two lists of steps (sim_sc_step, sim.h; run by
 * steps.c): the machine it sets up, and what runs on it. What cannot be a list -- a random
 * topology, real binaries found at run time -- is a step that calls a function below. */
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "sim/sim.h"
#include "sim/v7.h"

/* ------------------------------------------------------------------ steps that are code */

/* Randomized schedule of the sink rules: 2-8 CPUs, one topology (a shared ETR, an ETF per CPU
 * or per-CPU TRBEs), 2-4 perf sessions of random modes that start and stop at random times,
 * sometimes a kernel-created session (no owner task: perf_pid -1, no perf.data), and processes
 * that sleep, yield, clone and exit. The invariants (truth.summary "invariants" line) must hold
 * for every seed: no buffer ever holds two sessions' trace, references return to zero, nothing
 * is touched after its session ended. */
static int stress_setup(sim *S)
{
    S->ncpus = 2 + (int)sim_rng_below(&S->rng, SIM_MAX_CPUS - 1);
    int topo = (int)sim_rng_below(&S->rng, 3);
    int nsess = 2 + (int)sim_rng_below(&S->rng, 3);
    int kernel = sim_rng_chance(&S->rng, 128);
    for (int i = 0; i < nsess + kernel; i++) {
        int mode = (int)sim_rng_below(&S->rng, 3);
        int k = i == nsess; /* the kernel-created session */
        sim_session *s = sim_add_session(S,
                                         k           ? SIM_MODE_SYSTEM
                                         : mode == 0 ? SIM_MODE_PER_CPU
                                         : mode == 1 ? SIM_MODE_SYSTEM
                                                     : SIM_MODE_PER_THREAD,
                                         k ? 2 : 1 + sim_rng_below(&S->rng, 3));
        if (s->mode == SIM_MODE_PER_THREAD)
            s->el_mask &= 1u; /* per-thread sessions trace user space */
        if (!s->el_mask) s->el_mask = 1;
        s->ring_size = 64u << 10;
        s->read_period = 200000 + sim_rng_below(&S->rng, 2000000);
        s->start_time = SIM_BOOT_NS + sim_rng_below(&S->rng, 1500000);
        if (k || sim_rng_chance(&S->rng, 160))
            s->stop_time = s->start_time + 100000 + sim_rng_below(&S->rng, 3000000);
        if (topo == 2) {
            s->ete = 1;
            s->sink_kind = SIM_SINK_TRBE;
        }
        if (k) {
            s->perf_pid = -1;
            s->no_output = 1;
        }
    }
    if (topo == 0)
        sim_add_etr(S, 16u << 10 << sim_rng_below(&S->rng, 4));
    else if (topo == 1)
        sim_add_etf_per_cpu(S, 8u << 10 << sim_rng_below(&S->rng, 3));
    else
        sim_add_trbe(S, 8u << 10 << sim_rng_below(&S->rng, 3));
    return 0;
}

static int stress_run(sim *S)
{
    int nproc = 2 + (int)sim_rng_below(&S->rng, 4);
    for (int i = 0; i < nproc; i++) {
        unsigned mask = 0;
        for (int k = 0; k < S->nsessions; k++)
            if (k % nproc == i) mask |= 1u << k;
        for (int k = 0; k < S->nsessions; k++)
            if ((mask >> k & 1) && S->sessions[k].mode != SIM_MODE_SYSTEM)
                sim_set_target(&S->sessions[k], S->next_pid);
        uint64_t budget = 30000 + sim_rng_below(&S->rng, 1500000);
        sim_process *p =
            sim_spawn_program(S, sim_rng_chance(&S->rng, 128) ? "simloop" : "simchild",
                              (int)sim_rng_below(&S->rng, (uint32_t)S->ncpus), budget, mask);
        if (!p) return EK_ERR_NOMEM;
        p->random_actions = 8 + sim_rng_below(&S->rng, 48);
        for (uint32_t n = sim_rng_below(&S->rng, 3), at = 1; n;
             n--, at += 1 + sim_rng_below(&S->rng, 8))
            sim_script(p, at, SIM_ACT_CLONE);
    }
    return 0;
}

static int workload_real_run(sim *S)
{
    for (int i = 0; i < 3; i++) {
        sim_process *p = sim_spawn_real(S, i, S->work, 0);
        if (!p) return S->err ? S->err : EK_ERR_NOMEM;
        p->random_actions = 4;
    }
    return 0;
}

/* ------------------------------------------------------------------ the steps, as words */

#define STEPS(...) ((const sim_sc_step[]){__VA_ARGS__, {.op = SIM_ST_END}})

#define CPUS(n)                                                                                    \
    {                                                                                              \
        .op = SIM_ST_CPUS, .a = (n)                                                                \
    }
#define NO_VMLINUX                                                                                 \
    {                                                                                              \
        .op = SIM_ST_NO_VMLINUX                                                                    \
    }
#define ITRACE_LANES                                                                               \
    {                                                                                              \
        .op = SIM_ST_ITRACE_LANES                                                                  \
    }
#define TRACE_ID_TOP(n)                                                                            \
    {                                                                                              \
        .op = SIM_ST_TRACE_ID_TOP, .a = (n)                                                        \
    }
#define CALL(f)                                                                                    \
    {                                                                                              \
        .op = SIM_ST_CALL, .fn = (f)                                                               \
    }
#define SYMFS_OTHER(img, other)                                                                    \
    {                                                                                              \
        .op = SIM_ST_SYMFS_OTHER, .s = (img), .s2 = (other)                                        \
    }
#define ETR(size)                                                                                  \
    {                                                                                              \
        .op = SIM_ST_ETR, .a = (size)                                                              \
    }
#define ETR_GROUP(size, cpu, n)                                                                    \
    {                                                                                              \
        .op = SIM_ST_ETR_GROUP, .a = (size), .b = (cpu), .c = (n)                                  \
    }
#define ETF_PER_CPU(size)                                                                          \
    {                                                                                              \
        .op = SIM_ST_ETF_PER_CPU, .a = (size)                                                      \
    }
#define TRBE(size)                                                                                 \
    {                                                                                              \
        .op = SIM_ST_TRBE, .a = (size)                                                             \
    }
#define BARRIER(on)                                                                                \
    {                                                                                              \
        .op = SIM_ST_BARRIER, .a = (on)                                                            \
    }
#define PARTIAL_FLUSH                                                                              \
    {                                                                                              \
        .op = SIM_ST_PARTIAL_FLUSH                                                                 \
    }
#define IDR1_REVISION(cpu, rev)                                                                    \
    {                                                                                              \
        .op = SIM_ST_IDR1_REVISION, .a = (cpu), .b = (rev)                                         \
    }
#define SYNC_PERIOD(cpu, bytes)                                                                    \
    {                                                                                              \
        .op = SIM_ST_SYNC_PERIOD, .a = (cpu), .b = (bytes)                                         \
    }
#define TARGET(session)                                                                            \
    {                                                                                              \
        .op = SIM_ST_TARGET, .a = (session)                                                        \
    }
#define EVENT_TID(session, ev)                                                                     \
    {                                                                                              \
        .op = SIM_ST_EVENT_TID, .a = (session), .b = (ev)                                          \
    }
#define SPAWN(exe, cpu, mask)                                                                      \
    {                                                                                              \
        .op = SIM_ST_SPAWN, .s = (exe), .a = (cpu), .b = (mask)                                    \
    }
#define SESSION(mode, el)                                                                          \
    {                                                                                              \
        .op = SIM_ST_SESSION, .a = SIM_MODE_##mode, .b = (el)                                      \
    }
#define EVENTS(n)                                                                                  \
    {                                                                                              \
        .op = SIM_ST_EVENTS, .a = (n)                                                              \
    }
#define READ_PERIOD(ns)                                                                            \
    {                                                                                              \
        .op = SIM_ST_READ_PERIOD, .a = (ns)                                                        \
    }
#define READ_SKEW(ns)                                                                              \
    {                                                                                              \
        .op = SIM_ST_READ_SKEW, .a = (ns)                                                          \
    }
#define RING(size)                                                                                 \
    {                                                                                              \
        .op = SIM_ST_RING, .a = (size)                                                             \
    }
#define ETE_TRBE                                                                                   \
    {                                                                                              \
        .op = SIM_ST_ETE_TRBE                                                                      \
    }
#define SNAPSHOT_MODE                                                                              \
    {                                                                                              \
        .op = SIM_ST_SNAPSHOT_MODE                                                                 \
    }
#define HEADER(version, hwid)                                                                      \
    {                                                                                              \
        .op = SIM_ST_HEADER, .a = (version), .b = (hwid)                                           \
    }
#define HWID_MINOR(n)                                                                              \
    {                                                                                              \
        .op = SIM_ST_HWID_MINOR, .a = (n)                                                          \
    }
#define CLOCK_MONOTONIC                                                                            \
    {                                                                                              \
        .op = SIM_ST_CLOCK_MONOTONIC                                                               \
    }
#define NO_TS_ORDER                                                                                \
    {                                                                                              \
        .op = SIM_ST_NO_TS_ORDER                                                                   \
    }
#define RAW_CPU(cpu)                                                                               \
    {                                                                                              \
        .op = SIM_ST_RAW_CPU, .a = (cpu)                                                           \
    }
#define CLOCK(clk)                                                                                 \
    {                                                                                              \
        .op = SIM_ST_CLOCK, .a = SIM_CLK_##clk                                                     \
    }
#define ACTIONS(n)                                                                                 \
    {                                                                                              \
        .op = SIM_ST_ACTIONS, .a = (n)                                                             \
    }
#define SCRIPT(at, act)                                                                            \
    {                                                                                              \
        .op = SIM_ST_SCRIPT, .a = (at), .b = SIM_ACT_##act                                         \
    }
#define LIB(name)                                                                                  \
    {                                                                                              \
        .op = SIM_ST_LIB, .s = (name)                                                              \
    }
#define THREAD_BUDGET(n)                                                                           \
    {                                                                                              \
        .op = SIM_ST_THREAD_BUDGET, .a = (n)                                                       \
    }
#define NEXT_EXE(name)                                                                             \
    {                                                                                              \
        .op = SIM_ST_NEXT_EXE, .s = (name)                                                         \
    }
#define JIT(every)                                                                                 \
    {                                                                                              \
        .op = SIM_ST_JIT, .a = (every)                                                             \
    }

/* exception levels traced */
#define USER        1u
#define KERNEL_USER 3u
/* perf record -- simloop: the first session follows simloop, started on CPU 0 */
#define SIMLOOP TARGET(0), SPAWN("simloop", 0, 1)

/* kernel and user trace of 2 CPUs sharing an ETR; simloop and a second thread make system
 * calls */
#define KERNEL_SETUP CPUS(2), SESSION(PER_CPU, KERNEL_USER), ETR(1u << 20)
#define KERNEL_RUN   SIMLOOP, ACTIONS(40), SCRIPT(2, CLONE)
/* simloop and a second thread (random yields and sleeps), 2 CPUs sharing an ETR */
#define TWO_THREADS_RUN ETR(1u << 20), SIMLOOP, ACTIONS(24), SCRIPT(1, CLONE)
/* an incomplete ETM flush leaves a partial packet at the end of each hardware buffer; several
 * AUX records per AUXTRACE buffer */
#define PARTIAL_SETUP CPUS(2), SESSION(PER_CPU, USER), READ_PERIOD(1000000000ull)
#define PARTIAL_RUN(etr, barrier)                                                                  \
    ETR(etr), PARTIAL_FLUSH, BARRIER(barrier), SIMLOOP, ACTIONS(40), SCRIPT(1, CLONE)
/* Sample times (seed 000: kernel time against CoreSight time): the same recording with the
 * CoreSight time stamps from three clocks (CLOCK, steps.c) */
#define TIME_SETUP(clk)                                                                            \
    CPUS(3), SESSION(PER_CPU, KERNEL_USER), CLOCK(clk),                                            \
        READ_PERIOD(150000), /* AUX records at many different times */                             \
        ETR(64u << 10)
#define TIME_RUN SIMLOOP, ACTIONS(32), SCRIPT(1, CLONE), SCRIPT(2, CLONE)
/* A debugger snapshot: the system runs with its trace units on and is halted; the buffers and
 * the memory are saved into a snapshot folder. System-wide events keep the sink in use until
 * the end. Ground truth: each buffer decoded whole, in buffer order (NO_TS_ORDER). */
#define SNAPSHOT_RUN SPAWN("simloop", 0, 0), ACTIONS(24), SCRIPT(1, CLONE), SCRIPT(2, CLONE)
/* A realistic mix for benchmarks: four CPUs with ETE and per-CPU TRBE sinks, system-wide
 * kernel and user tracing. The TRBE fills its buffer, raises its interrupt and the data streams
 * into the AUX rings, which perf record drains every millisecond, so --trace-size can go to
 * gigabytes. */
#define WORKLOAD_SETUP                                                                             \
    CPUS(4), SESSION(SYSTEM, KERNEL_USER), ETE_TRBE, RING(4u << 20), READ_PERIOD(1000000),         \
        TRBE(1u << 20)

/* ------------------------------------------------------------------ the catalogue */

static const sim_scenario scenarios[] = {
    {"basic", "one process on one CPU, per-CPU ETMv4 into a formatted ETR, user space only", 0,
     48 << 10, STEPS(CPUS(1), SESSION(PER_CPU, USER), ETR(1u << 20)), STEPS(SIMLOOP)},
    /* perf record --per-thread: yields and sleeps switch the thread out and back in */
    {"per-thread",
     "perf record --per-thread: no timestamps or context IDs (timeless decode), "
     "one AUX record per time the thread is scheduled in",
     0, 64 << 10, STEPS(CPUS(2), SESSION(PER_THREAD, USER), ETR(1u << 20)),
     STEPS(SIMLOOP, ACTIONS(24))},
    /* two threads on two CPUs sharing one ETR: a thread's AUX buffer can hold the trace of both
     * CPUs (the last event to stop copies the sink), and without time stamps perf 6.1 keeps one
     * sample state for the whole queue; one event per thread */
    {"per-thread-two-cpus",
     "perf record --per-thread of a process with two threads on 2 CPUs sharing one ETR: one "
     "thread's AUX buffer can hold both CPUs' trace IDs, decoded without time stamps",
     0, 64 << 10, STEPS(CPUS(2), SESSION(PER_THREAD, USER), ETR(1u << 20), EVENTS(2)),
     STEPS(TARGET(0), SPAWN("simloop", 0, 1), EVENT_TID(0, 1), ACTIONS(24), SCRIPT(1, CLONE))},
    {"kernel-and-user",
     "cs_etm// (kernel and user space) on 2 CPUs, a process with two threads "
     "making system calls; vmlinux in symfs",
     0, 96 << 10, STEPS(KERNEL_SETUP), STEPS(KERNEL_RUN)},
    {"kernel-and-user-novmlinux",
     "the same recording with no vmlinux in symfs (kallsyms text in OUT/kallsyms): perf cannot "
     "read kernel code and silently drops kernel samples",
     0, 96 << 10, STEPS(NO_VMLINUX, KERNEL_SETUP), STEPS(KERNEL_RUN)},
    /* dlopen, dlclose, dlopen of another library at the same address */
    {"dlopen-reuse",
     "a library is loaded, called, unloaded and another one is loaded at the "
     "same address (perf 6.1 decodes all trace with the last one)",
     0, 96 << 10, STEPS(CPUS(1), SESSION(PER_CPU, USER), ETR(1u << 20)),
     STEPS(SIMLOOP, LIB("libsima.so"), LIB("libsimb.so"), SCRIPT(3, DLOPEN), SCRIPT(40, DLCLOSE),
           SCRIPT(42, DLOPEN))},
    /* the MMAP2 of a library lands in the file after AUX records of trace that ran its code:
     * perf record reads ring 0 a full read period before ring 1 */
    {"mmap2-after-aux",
     "2 CPUs with an ETF each; perf record reads one ring late, so the "
     "MMAP2 of a library lands after AUX records of trace that ran it",
     0, 128 << 10,
     STEPS(CPUS(2), SESSION(PER_CPU, USER), READ_PERIOD(300000), READ_SKEW(300000),
           ETF_PER_CPU(64u << 10)),
     STEPS(SIMLOOP, ACTIONS(32), SCRIPT(1, CLONE), SCRIPT(6, DLOPEN), LIB("libsima.so"))},
    /* one perf record read covers many AUX records: perf record wakes up rarely; the sleeps stop
     * the event and the sink is copied out each time */
    {"multi-aux-per-auxtrace",
     "the sink is copied out at every sleep; perf record reads once, "
     "so one AUXTRACE buffer holds many AUX records",
     0, 96 << 10,
     STEPS(CPUS(1), SESSION(PER_CPU, USER), READ_PERIOD(1000000000ull), ETR(256u << 10)),
     STEPS(SIMLOOP, ACTIONS(48))},
    /* four CPUs share one ETR: frames interleave the trace IDs of all CPUs */
    {"shared-sink-multi-cpu",
     "4 CPUs and a 4-thread process share one ETR: frames "
     "interleave 4 trace IDs, timestamps order the decode",
     0, 192 << 10, STEPS(CPUS(4), SESSION(PER_CPU, USER), ETR(4u << 20)),
     STEPS(SIMLOOP, ACTIONS(20), SCRIPT(1, CLONE), SCRIPT(2, CLONE), SCRIPT(3, CLONE))},
    /* two perf sessions, one ETR: the second is refused (EBUSY) while the first owns the sink;
     * sleeps release the sink now and then */
    {"session-arbitration",
     "two perf sessions trace two processes through one ETR; the sink "
     "refuses the other session (EBUSY, empty TRUNCATED AUX record) "
     "until its owner's last event stops",
     0, 128 << 10, STEPS(CPUS(2), SESSION(PER_CPU, USER), SESSION(PER_CPU, USER), ETR(1u << 20)),
     STEPS(TARGET(0), SPAWN("simloop", 0, 1u << 0), ACTIONS(40), TARGET(1),
           SPAWN("simchild", 1, 1u << 1), ACTIONS(40))},
    /* ETE with per-CPU TRBE sinks: unformatted trace, one decoder per queue */
    {"per-cpu-trbe", "ETE into per-CPU TRBE-like raw sinks (AUX flag 0x100), 2 CPUs", 0, 96 << 10,
     STEPS(CPUS(2), SESSION(PER_CPU, USER), ETE_TRBE, TRBE(64u << 10)),
     STEPS(SIMLOOP, ACTIONS(24), SCRIPT(1, CLONE))},
    /* perf record --per-thread on TRBEs of CPUs configured alike (issue 27): a process with two
     * threads on 2 CPUs, one event and one AUX ring per thread, raw trace whose AUX records name
     * no CPU; decoded with the configuration both CPUs share, samples without a CPU */
    {"per-thread-trbe",
     "perf record --per-thread on per-CPU TRBEs (ETE, 2 CPUs configured alike), a process "
     "with two threads: raw trace whose AUX records name no CPU, decoded with the "
     "configuration every CPU shares (samples without a CPU); perf 6.1 uses CPU 0's",
     0, 64 << 10, STEPS(CPUS(2), SESSION(PER_THREAD, USER), ETE_TRBE, EVENTS(2), TRBE(16u << 10)),
     STEPS(TARGET(0), SPAWN("simloop", 0, 1), EVENT_TID(0, 1), ACTIONS(24), SCRIPT(1, CLONE))},
    /* perf record --per-thread on the TRBEs of a big.LITTLE system (issue 27): CPUs 2-3 are
     * another core type whose trace units have another TRCIDR1 revision, so no configuration is
     * every CPU's; the traced program (one thread, sleeping and yielding) runs on CPU 0 only, as
     * its user knows (taskset): `etmkit script --raw-cpu=1` (script-options.txt) decodes it with a
     * big core's configuration, without it nothing is decoded */
    {"per-thread-trbe-biglittle",
     "perf record --per-thread on the TRBEs of a big.LITTLE system (4 CPUs, CPUs 2-3 with "
     "another TRCIDR1): no record names the CPU of the raw trace and the CPUs decode "
     "differently, so a decoder needs the user's --raw-cpu (script-options.txt); perf 6.1 uses "
     "CPU 0's",
     0, 64 << 10,
     STEPS(CPUS(4), SESSION(PER_THREAD, USER), ETE_TRBE, RAW_CPU(1), TRBE(16u << 10),
           IDR1_REVISION(2, 2), IDR1_REVISION(3, 2)),
     STEPS(SIMLOOP, ACTIONS(24))},
    /* perf record -S: the AUX ring is overwritten; one snapshot at the end */
    {"snapshot-wrap",
     "perf record -S: overwritten AUX ring (128 KiB) and ETR (32 KiB) that wrap, "
     "barrier packets, one snapshot at the end",
     0, 512 << 10,
     STEPS(CPUS(1), SESSION(PER_CPU, USER), SNAPSHOT_MODE, RING(128u << 10), ETR(32u << 10)),
     STEPS(SIMLOOP, ACTIONS(24))},
    /* the ETR wraps in place (no driver barrier) and is saved once */
    {"snapshot-etr",
     "a debugger snapshot folder: 3 CPUs with ETMv4 share a 64 KiB ETR that wraps "
     "in place; kernel and user code as memory dumps",
     1, 256 << 10,
     STEPS(CPUS(3), SESSION(SYSTEM, KERNEL_USER), RING(1u << 20), NO_TS_ORDER, ETR(64u << 10),
           BARRIER(0)),
     STEPS(SNAPSHOT_RUN)},
    {"snapshot-ete-trbe",
     "a debugger snapshot folder: 2 CPUs with ETE, one raw (source_data) "
     "TRBE buffer per CPU",
     1, 128 << 10,
     STEPS(CPUS(2), SESSION(SYSTEM, KERNEL_USER), ETE_TRBE, RING(1u << 20), NO_TS_ORDER,
           TRBE(256u << 10)),
     STEPS(SNAPSHOT_RUN)},
    {"flush-partial-packet",
     "incomplete ETM flushes leave a partial packet at the end of each "
     "hardware buffer; several AUX records per AUXTRACE buffer",
     0, 128 << 10, STEPS(PARTIAL_SETUP), STEPS(PARTIAL_RUN(1u << 20, 1))},
    /* the hardware buffer wraps between copies: the driver puts a barrier in front */
    {"flush-partial-packet-wrap",
     "the same with a 2 KiB ETR that wraps between copies: "
     "barrier packets after each wrap (TRUNCATED AUX records)",
     0, 128 << 10, STEPS(PARTIAL_SETUP), STEPS(PARTIAL_RUN(2u << 10, 1))},
    {"flush-partial-packet-nobarrier",
     "wrapping 2 KiB ETR and partial packets, without the "
     "driver's barrier packets",
     0, 128 << 10, STEPS(PARTIAL_SETUP), STEPS(PARTIAL_RUN(2u << 10, 0))},
    {"header-v0", "AUXTRACE_INFO version 0 (perf before 5.x): no per-CPU parameter count", 0,
     64 << 10, STEPS(CPUS(2), SESSION(PER_CPU, USER), HEADER(0, 0)), STEPS(TWO_THREADS_RUN)},
    {"header-v2",
     "AUXTRACE_INFO version 2 with AUX_OUTPUT_HW_ID records carrying the trace IDs "
     "(perf 6.4+); perf 6.1 refuses the file",
     0, 64 << 10, STEPS(CPUS(2), SESSION(PER_CPU, USER), HEADER(2, 1)), STEPS(TWO_THREADS_RUN)},
    /* Linux 6.12+: trace IDs are allocated per sink and announced by AUX_OUTPUT_HW_ID version
     * 0.1 with the sink's ID. Two clusters of 4 CPUs, each with its own ETR; the pool of trace
     * IDs is made small (1-4, as if the 0x6f IDs were taken by more trace units than a global
     * map could hold), so both sinks use the same four IDs: the CPU of a trace ID depends on
     * the sink. */
    {"trace-id-per-sink",
     "Linux 6.12+: 8 CPUs in two clusters, an ETR each; trace IDs allocated per sink from a "
     "small pool (both sinks use IDs 1-4), AUX_OUTPUT_HW_ID version 0.1 with sink IDs; perf "
     "6.1 refuses the file",
     0, 256 << 10,
     STEPS(CPUS(8), TRACE_ID_TOP(5), SESSION(PER_CPU, USER), HEADER(2, 1), HWID_MINOR(1),
           ETR_GROUP(256u << 10, 0, 4), ETR_GROUP(256u << 10, 4, 4)),
     STEPS(SIMLOOP, ACTIONS(24), SCRIPT(1, CLONE), SCRIPT(2, CLONE), SCRIPT(3, CLONE),
           SCRIPT(4, CLONE), SCRIPT(5, CLONE), SCRIPT(6, CLONE), SCRIPT(7, CLONE))},
    /* A JIT: simjit compiles functions into an anonymous code cache, calls them, moves some and
     * collects the cache, after which other code runs at the same addresses. The JIT writes
     * jit-PID.dump (which it maps, so that the recording names it) and /tmp/perf-PID.map; both
     * are in symfs at their paths. perf record -k 1: CLOCK_MONOTONIC sample times, the clock of
     * the jitdump's time stamps. A JIT action every third work step; a worker thread on the
     * other CPU calls the JIT's code too, for half of the run: the JIT changes code only at
     * safepoints (machine.c, do_jit), when the worker is off its CPU and not inside JIT code. */
    {"jit-reuse",
     "a JIT (seed 000): code compiled into an anonymous code cache, moved, collected and "
     "replaced by other code at the same addresses, at safepoints (a worker thread on the "
     "other CPU runs it too); jit-PID.dump (code and names by time) and perf-PID.map in "
     "symfs, perf record -k 1; perf 6.1 cannot read JIT code",
     0, 128 << 10, STEPS(CPUS(2), SESSION(PER_CPU, USER), CLOCK_MONOTONIC, ETR(1u << 20)),
     STEPS(TARGET(0), SPAWN("simjit", 0, 1), JIT(3), ACTIONS(12), SCRIPT(30, CLONE))},
    /* Real code for benchmarks: the workload's topology, three processes running simreal on
     * Debian's libc.so.6 and libm.so.6, started through ld-linux-aarch64.so.1 (realcode.c). A
     * megabyte and more of distinct code runs, so a decoder cannot live off a few hot lines. */
    {"workload-real",
     "benchmark on real code: the workload's 4 CPUs, ETE, TRBE and system-wide tracing, 3 "
     "processes running a program linked against Debian's AArch64 libc.so.6 and libm.so.6, "
     "started by ld-linux-aarch64.so.1 (package libc6-arm64-cross, read at run time); "
     "megabytes of distinct code; --trace-size up to gigabytes",
     0, 256 << 10, STEPS(WORKLOAD_SETUP, CALL(sim_real_setup)), STEPS(CALL(workload_real_run))},
    {"arbitration-stress",
     "randomized sink arbitration: 2-8 CPUs, a shared ETR, ETFs or TRBEs, 2-4 sessions starting "
     "and stopping at random (sometimes a kernel-created one), processes that sleep, clone "
     "and exit; truth.summary reports the invariants",
     0, 512 << 10, STEPS(CALL(stress_setup)), STEPS(CALL(stress_run))},
    {"time-kernel-clock",
     "3 CPUs, kernel and user; the CoreSight time stamps are the kernel's clock (TS_SOURCE 1, "
     "TIME_CONV 1:1): samples carry their time stamp's time",
     0, 96 << 10, STEPS(TIME_SETUP(KERNEL)), STEPS(TIME_RUN)},
    {"time-virtual-counter",
     "the same with the time stamps from the 19.2 MHz architected counter TIME_CONV describes "
     "(TS_SOURCE 1): samples carry their time stamp converted to the kernel's clock",
     0, 96 << 10, STEPS(TIME_SETUP(COUNTER)), STEPS(TIME_RUN)},
    {"time-unknown-counter",
     "the same with time stamps from a separate 100 MHz generator (TS_SOURCE -1, unknown): "
     "they only order the trace; samples carry the time of their AUX record",
     0, 96 << 10, STEPS(TIME_SETUP(OTHER)), STEPS(TIME_RUN)},
    /* Context changes (perf fixed this in 2026): system-wide kernel and user tracing of four
     * processes sharing one CPU and yielding to each other all the time (mostly yields and
     * sleeps); time stamps are rare (a synchronisation every 64 KiB), so many ranges wait in
     * perf's packet queue when the context packet of the next thread arrives. They belong to
     * the thread that ran them; perf 6.1 gives them to the next one. */
    {"context-switch-order",
     "system-wide kernel and user tracing of 4 processes on one CPU yielding to each other, "
     "rare time stamps: ranges decoded before a context packet belong to the previous thread",
     0, 128 << 10, STEPS(CPUS(1), SESSION(SYSTEM, KERNEL_USER), ETR(1u << 20)),
     STEPS(SPAWN("simloop", 0, 0), ACTIONS(96), SPAWN("simchild", 0, 0), ACTIONS(96),
           SPAWN("simloop", 0, 0), ACTIONS(96), SPAWN("simchild", 0, 0), ACTIONS(96),
           SYNC_PERIOD(0, 65536))},
    /* system-wide: two processes (three threads), each thread alone on its CPU, so that every
     * sample's CPU, process, thread and command name are known without a context switch (what
     * perf 6.1 gets right: the sample filters are compared with it on this recording); the new
     * thread goes to the idle CPU 2 */
    {"two-processes",
     "system-wide user-space trace, 3 CPUs with an ETF each: two processes (simloop with a "
     "second thread, simchild), each thread alone on its CPU",
     0, 96 << 10, STEPS(CPUS(3), SESSION(SYSTEM, USER), ETF_PER_CPU(64u << 10)),
     STEPS(SPAWN("simloop", 0, 1), SCRIPT(1, CLONE), SPAWN("simchild", 1, 1))},
    /* Build-id mismatch: a library the process loads and calls, whose file in symfs is another
     * build (libsima.c with one more function: every function moved); the recording's build-id
     * table names the build that ran. A decoder must refuse the file: the library's code cannot
     * be read (perf 6.1 reads code without checking the build-id and decodes the other build's
     * bytes; it refuses the symbols). */
    {"buildid-mismatch",
     "symfs holds another build of the library the process loads (/usr/lib/libsima.so: one "
     "more function, another build-id than the recorded one), 2 CPUs, user space: a decoder "
     "refuses it (gaps); perf 6.1 decodes the other build's bytes",
     0, 64 << 10,
     STEPS(CPUS(2), SESSION(PER_CPU, USER), ETR(1u << 20),
           SYMFS_OTHER("libsima.so", "libsima-otherbuild")),
     STEPS(SIMLOOP, ACTIONS(24), SCRIPT(1, CLONE), SCRIPT(3, DLOPEN), LIB("libsima.so"))},
    /* Kernel modules: a module wraps the write and getpid system calls (simmod.c). Its .ko is in
     * symfs at the path of its MMAP record, with the recorded build-id, and vmlinux beside it
     * (the module's calls into the kernel are relocated against the kernel's symbols). A
     * decoder lays the .ko out as the loader did and relocates it; perf 6.1 reads the file as if
     * it were the module's memory, and its section maps put the module's .bss at [0, 5 MiB)
     * among the kernel's maps (docs/SCRIPT.md, "Kernel modules", "Kernel maps hold kernel
     * addresses only"). Writes and getpids among the random actions: into the module. */
    {"kernel-module",
     "a kernel module (relocatable simmod.ko in symfs at its recorded path) wraps the write "
     "and getpid system calls and calls the kernel; kernel and user trace of 2 CPUs sharing an "
     "ETR, vmlinux in symfs: a decoder lays the .ko out as the module loader did and relocates "
     "it; perf 6.1 reads the file unrelocated and maps the module's .bss at address 0",
     0, 64 << 10, STEPS(CALL(sim_kmod_setup), KERNEL_SETUP),
     STEPS(SIMLOOP, ACTIONS(64), SCRIPT(2, CLONE))},
    /* The --itrace letters c, r and s: without the kernel's image the decodable trace ends at
     * every system call and interrupt and begins again after it (trace ends that are calls,
     * trace begins; calls and returns; several trace IDs per queue); the truth has what
     * --itrace=c, --itrace=r and --itrace=i100ibs50 print, and perf 6.1's answers to the same
     * options (its cs-etm ignores the three letters). */
    {"itrace-calls-returns-skip",
     "--itrace=c (calls), r (returns) and s (initial skip): kernel and user trace of 2 CPUs "
     "sharing an ETR, no vmlinux (trace ends and begins at system calls); expected-calls.txt, "
     "expected-returns.txt, expected-skip.txt (i100ibs50: one count over the output, both "
     "kinds); perf 6.1's cs-etm ignores the three letters",
     0, 48 << 10, STEPS(ITRACE_LANES, NO_VMLINUX, KERNEL_SETUP), STEPS(KERNEL_RUN)},
    /* three processes: threads, library load/unload cycles (a's thread ends before the library
     * is unloaded), exec (b's threads end, then it execs) */
    {"workload",
     "benchmark mix: 4 CPUs, ETE into per-CPU TRBE sinks, system-wide kernel and "
     "user tracing of 3 processes (threads, dlopen cycles, exec); scales with "
     "--trace-size to gigabytes (ground truth summarised above 4 MiB)",
     0, 256 << 10, STEPS(WORKLOAD_SETUP),
     STEPS(SPAWN("simloop", 0, 0), ACTIONS(16), LIB("libsima.so"), LIB("libsimb.so"),
           THREAD_BUDGET(30000), SCRIPT(1, CLONE), SCRIPT(4, DLOPEN), SCRIPT(300, DLCLOSE),
           SCRIPT(302, DLOPEN), SPAWN("simloop", 1, 0), ACTIONS(24), SCRIPT(1, CLONE),
           SCRIPT(2, CLONE), NEXT_EXE("simchild"), THREAD_BUDGET(30000), SCRIPT(500, EXEC),
           SPAWN("simloop", 2, 0), ACTIONS(8))},
};

#define NSCEN (sizeof(scenarios) / sizeof(scenarios[0]))

/* the Armv7 scenarios (src/sim/v7gen.c) follow the AArch64 ones */
size_t ek_sim_scenario_count(void)
{
    return NSCEN + sim_v7_scenario_count();
}

const char *ek_sim_scenario_name(size_t i)
{
    return i < NSCEN ? scenarios[i].name : sim_v7_scenario_name(i - NSCEN);
}

const char *ek_sim_scenario_desc(size_t i)
{
    return i < NSCEN ? scenarios[i].desc : sim_v7_scenario_desc(i - NSCEN);
}

const sim_scenario *sim_scenario_find(const char *name)
{
    for (size_t i = 0; i < NSCEN; i++)
        if (!strcmp(scenarios[i].name, name)) return &scenarios[i];
    return NULL;
}
