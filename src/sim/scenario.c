/* The scenarios of `etmkit gen` (AArch64; the Armv7 ones are in v7gen.c): what each sets up
 * and runs, and the catalogue that names them. */
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "sim/sim.h"
#include "sim/v7.h"

/* ------------------------------------------------------------------ building blocks */

static sim_session *add_session(sim *S, int mode, unsigned el_mask)
{
    sim_session *s = &S->sessions[S->nsessions];
    memset(s, 0, sizeof(*s));
    s->index = S->nsessions++;
    s->perf_pid = 900 + s->index;
    s->mode = mode;
    s->el_mask = el_mask;
    s->header_version = 1;
    s->ts_source = SIM_TS_SOURCE_NONE; /* perf before 6.3 */
    s->sink_kind = SIM_SINK_ETR;
    s->ring_size = 1u << 20;
    s->read_period = 2000000;
    s->read_skew = 0;
    s->target_pid = -1;
    if (mode == SIM_MODE_PER_THREAD) {
        s->configr = 0;
        s->attr_config = 0;
    } else {
        /* perf 6.1 turns on context ID and timestamps for CPU-wide recording */
        s->configr = EK_TRCCONFIGR_CID | EK_TRCCONFIGR_TS;
        s->attr_config = (1u << 14) | (1u << 28);
    }
    return s;
}

static void add_etr(sim *S, uint32_t size)
{
    sim_sink *k = &S->sinks[S->nsinks];
    sim_sink_init(k, SIM_SINK_ETR, S->nsinks, size, S->truth);
    S->nsinks++;
    for (int c = 0; c < S->ncpus; c++)
        S->cpus[c].sink = k;
}

/* an ETR for CPUs first .. first+n-1 (a cluster's funnel) */
static void add_etr_group(sim *S, uint32_t size, int first, int n)
{
    sim_sink *k = &S->sinks[S->nsinks];
    sim_sink_init(k, SIM_SINK_ETR, S->nsinks, size, S->truth);
    S->nsinks++;
    for (int c = first; c < first + n && c < S->ncpus; c++)
        S->cpus[c].sink = k;
}

/* one ETF per CPU: every CPU's ETM has its own sink */
static void add_etf_per_cpu(sim *S, uint32_t size)
{
    for (int c = 0; c < S->ncpus; c++) {
        sim_sink *k = &S->sinks[S->nsinks];
        sim_sink_init(k, SIM_SINK_ETF, S->nsinks, size, S->truth);
        S->nsinks++;
        S->cpus[c].sink = k;
    }
}

/* per-CPU raw sinks (TRBE): unformatted ETE trace straight into the AUX ring */
static void add_trbe(sim *S, uint32_t size)
{
    for (int c = 0; c < S->ncpus; c++) {
        sim_sink_init(&S->trbe_sinks[c], SIM_SINK_TRBE, c, size, S->truth);
        S->trbes[c] = &S->trbe_sinks[c];
        S->cpus[c].sink = NULL;
    }
}

static sim_process *spawn(sim *S, const char *exe, int cpu, uint64_t budget, unsigned sessions)
{
    sim_image *img = (sim_image *)sim_find_image(S, exe);
    if (!img) return NULL;
    img->hidden = 0; /* an optional program is a file of this recording */
    return sim_spawn(S, img, img->blob->name, cpu, budget, sessions, 1);
}

/* perf record -- WORKLOAD: the session follows this process (and its children); the AUXTRACE
 * records of its CPU-wide events carry the workload's pid as tid. */
static void set_target(sim_session *s, int pid)
{
    s->target_pid = pid;
    if (s->mode != SIM_MODE_SYSTEM)
        for (int k = 0; k < s->nevents; k++)
            s->events[k].tid = pid;
}

static void script(sim_process *p, uint32_t at, sim_action a)
{
    if (p && p->nscript < SIM_MAX_SCRIPT) {
        p->script[p->nscript].at = at;
        p->script[p->nscript].action = a;
        p->nscript++;
    }
}

/* ------------------------------------------------------------------ scenarios */

static int sc_basic(sim *S)
{
    S->ncpus = 1;
    add_session(S, SIM_MODE_PER_CPU, 1);
    add_etr(S, 1u << 20);
    return 0;
}

static int sc_basic_run(sim *S)
{
    set_target(&S->sessions[0], S->next_pid);
    sim_process *p = spawn(S, "simloop", 0, S->work, 1);
    if (!p) return EK_ERR_NOMEM;
    return 0;
}

static int sc_per_thread(sim *S)
{
    S->ncpus = 2;
    add_session(S, SIM_MODE_PER_THREAD, 1);
    add_etr(S, 1u << 20);
    return 0;
}

static int sc_per_thread_run(sim *S)
{
    set_target(&S->sessions[0], S->next_pid);
    sim_process *p = spawn(S, "simloop", 0, S->work, 1);
    if (!p) return EK_ERR_NOMEM;
    p->random_actions = 24; /* yields and sleeps: the thread is switched out and back in */
    return 0;
}

/* per-thread recording of two threads on two CPUs sharing one ETR: a thread's AUX buffer can
 * hold the trace of both CPUs (the last event to stop copies the sink), and without time
 * stamps perf 6.1 keeps one sample state for the whole queue */
static int sc_per_thread_two(sim *S)
{
    int err = sc_per_thread(S);
    S->sessions[0].nevents = 2; /* perf record --per-thread: one event per thread */
    return err;
}

static int sc_per_thread_two_run(sim *S)
{
    sim_session *s = &S->sessions[0];
    set_target(s, S->next_pid);
    sim_process *p = spawn(S, "simloop", 0, S->work, 1);
    if (!p) return EK_ERR_NOMEM;
    s->events[1].tid = S->next_pid; /* the thread it clones */
    p->random_actions = 24;
    script(p, 1, SIM_ACT_CLONE);
    return 0;
}

static int sc_kernel(sim *S)
{
    S->ncpus = 2;
    add_session(S, SIM_MODE_PER_CPU, 3);
    add_etr(S, 1u << 20);
    return 0;
}

static int sc_kernel_run(sim *S)
{
    set_target(&S->sessions[0], S->next_pid);
    sim_process *p = spawn(S, "simloop", 0, S->work, 1);
    if (!p) return EK_ERR_NOMEM;
    p->random_actions = 40;
    script(p, 2, SIM_ACT_CLONE);
    return 0;
}

static int sc_kernel_novmlinux(sim *S)
{
    S->no_vmlinux = 1;
    return sc_kernel(S);
}

static int add_lib(sim *S, sim_process *p, const char *name)
{
    const sim_image *img = sim_find_image(S, name);
    if (!img || p->nlibs >= 4) return EK_ERR_NOT_FOUND;
    p->libs[p->nlibs++] = img;
    return 0;
}

/* dlopen, dlclose, dlopen of another library at the same address */
static int sc_dlopen(sim *S)
{
    S->ncpus = 1;
    add_session(S, SIM_MODE_PER_CPU, 1);
    add_etr(S, 1u << 20);
    return 0;
}

static int sc_dlopen_run(sim *S)
{
    set_target(&S->sessions[0], S->next_pid);
    sim_process *p = spawn(S, "simloop", 0, S->work, 1);
    if (!p) return EK_ERR_NOMEM;
    int err = add_lib(S, p, "libsima.so");
    if (!err) err = add_lib(S, p, "libsimb.so");
    script(p, 3, SIM_ACT_DLOPEN);
    script(p, 40, SIM_ACT_DLCLOSE);
    script(p, 42, SIM_ACT_DLOPEN);
    return err;
}

/* the MMAP2 of a library lands in the file after AUX records of trace that ran its code */
static int sc_mmap2_after_aux(sim *S)
{
    S->ncpus = 2;
    sim_session *s = add_session(S, SIM_MODE_PER_CPU, 1);
    /* perf record reads ring 0 a full read period before ring 1 */
    s->read_period = 300000;
    s->read_skew = 300000;
    add_etf_per_cpu(S, 64u << 10);
    return 0;
}

static int sc_mmap2_after_aux_run(sim *S)
{
    set_target(&S->sessions[0], S->next_pid);
    sim_process *p = spawn(S, "simloop", 0, S->work, 1);
    if (!p) return EK_ERR_NOMEM;
    p->random_actions = 32;
    script(p, 1, SIM_ACT_CLONE);
    script(p, 6, SIM_ACT_DLOPEN);
    return add_lib(S, p, "libsima.so");
}

/* one perf record read covers many AUX records */
static int sc_multi_aux(sim *S)
{
    S->ncpus = 1;
    sim_session *s = add_session(S, SIM_MODE_PER_CPU, 1);
    s->read_period = 1000000000ull; /* perf record wakes up rarely */
    add_etr(S, 256u << 10);
    return 0;
}

static int sc_multi_aux_run(sim *S)
{
    set_target(&S->sessions[0], S->next_pid);
    sim_process *p = spawn(S, "simloop", 0, S->work, 1);
    if (!p) return EK_ERR_NOMEM;
    p->random_actions = 48; /* sleeps: the event stops and the sink is copied out each time */
    return 0;
}

/* four CPUs share one ETR: frames interleave the trace IDs of all CPUs */
static int sc_shared_sink(sim *S)
{
    S->ncpus = 4;
    add_session(S, SIM_MODE_PER_CPU, 1);
    add_etr(S, 4u << 20);
    return 0;
}

static int sc_shared_sink_run(sim *S)
{
    set_target(&S->sessions[0], S->next_pid);
    sim_process *p = spawn(S, "simloop", 0, S->work, 1);
    if (!p) return EK_ERR_NOMEM;
    p->random_actions = 20;
    script(p, 1, SIM_ACT_CLONE);
    script(p, 2, SIM_ACT_CLONE);
    script(p, 3, SIM_ACT_CLONE);
    return 0;
}

/* two perf sessions, one ETR: the second is refused (EBUSY) while the first owns the sink */
static int sc_arbitration(sim *S)
{
    S->ncpus = 2;
    add_session(S, SIM_MODE_PER_CPU, 1);
    add_session(S, SIM_MODE_PER_CPU, 1);
    add_etr(S, 1u << 20);
    return 0;
}

static int sc_arbitration_run(sim *S)
{
    set_target(&S->sessions[0], S->next_pid);
    sim_process *a = spawn(S, "simloop", 0, S->work, 1u << 0);
    set_target(&S->sessions[1], S->next_pid);
    sim_process *b = spawn(S, "simchild", 1, S->work, 1u << 1);
    if (!a || !b) return EK_ERR_NOMEM;
    a->random_actions = 40; /* sleeps release the sink now and then */
    b->random_actions = 40;
    return 0;
}

/* ETE with per-CPU TRBE sinks: unformatted trace, one decoder per queue */
static int sc_trbe(sim *S)
{
    S->ncpus = 2;
    sim_session *s = add_session(S, SIM_MODE_PER_CPU, 1);
    s->ete = 1;
    s->sink_kind = SIM_SINK_TRBE;
    add_trbe(S, 64u << 10);
    return 0;
}

static int sc_trbe_run(sim *S)
{
    set_target(&S->sessions[0], S->next_pid);
    sim_process *p = spawn(S, "simloop", 0, S->work, 1);
    if (!p) return EK_ERR_NOMEM;
    p->random_actions = 24;
    script(p, 1, SIM_ACT_CLONE);
    return 0;
}

/* perf record -S: the AUX ring is overwritten; one snapshot at the end */
static int sc_snapshot(sim *S)
{
    S->ncpus = 1;
    sim_session *s = add_session(S, SIM_MODE_PER_CPU, 1);
    s->snapshot = 1;
    s->ring_size = 128u << 10;
    add_etr(S, 32u << 10);
    return 0;
}

static int sc_snapshot_run(sim *S)
{
    set_target(&S->sessions[0], S->next_pid);
    sim_process *p = spawn(S, "simloop", 0, S->work, 1);
    if (!p) return EK_ERR_NOMEM;
    p->random_actions = 24;
    return 0;
}

/* A debugger snapshot: the system runs with its trace units on and is halted; the buffers and
 * the memory are saved into a snapshot folder. System-wide events keep the sink in use until
 * the end, so the ETR wraps in place (no driver barrier) and is saved once. */
static int sc_snap_etr(sim *S)
{
    S->ncpus = 3;
    sim_session *s = add_session(S, SIM_MODE_SYSTEM, 3);
    s->ring_size = 1u << 20;
    s->attr_config &= ~(1u << 28); /* ground truth: each buffer decoded whole, in buffer order */
    add_etr(S, 64u << 10);
    S->sinks[0].barrier = 0;
    return 0;
}

static int sc_snap_run(sim *S)
{
    sim_process *p = spawn(S, "simloop", 0, S->work, 0);
    if (!p) return EK_ERR_NOMEM;
    p->random_actions = 24;
    script(p, 1, SIM_ACT_CLONE);
    script(p, 2, SIM_ACT_CLONE);
    return 0;
}

static int sc_snap_trbe(sim *S)
{
    S->ncpus = 2;
    sim_session *s = add_session(S, SIM_MODE_SYSTEM, 3);
    s->ete = 1;
    s->sink_kind = SIM_SINK_TRBE;
    s->ring_size = 1u << 20;
    s->attr_config &= ~(1u << 28);
    add_trbe(S, 256u << 10);
    return 0;
}

/* an incomplete ETM flush leaves a partial packet at the end of each hardware buffer */
static int sc_partial(sim *S)
{
    S->ncpus = 2;
    sim_session *s = add_session(S, SIM_MODE_PER_CPU, 1);
    s->read_period = 1000000000ull; /* several AUX records per AUXTRACE buffer */
    return 0;
}

static int sc_partial_run_common(sim *S, uint32_t etr, int barrier)
{
    add_etr(S, etr);
    S->sinks[0].partial_flush = 1;
    S->sinks[0].barrier = barrier;
    set_target(&S->sessions[0], S->next_pid);
    sim_process *p = spawn(S, "simloop", 0, S->work, 1);
    if (!p) return EK_ERR_NOMEM;
    p->random_actions = 40;
    script(p, 1, SIM_ACT_CLONE);
    return 0;
}

static int sc_partial_run(sim *S)
{
    return sc_partial_run_common(S, 1u << 20, 1);
}

static int sc_partial_wrap_run(sim *S)
{
    /* the hardware buffer wraps between copies: the driver puts a barrier in front */
    return sc_partial_run_common(S, 2u << 10, 1);
}

static int sc_partial_nobarrier_run(sim *S)
{
    return sc_partial_run_common(S, 2u << 10, 0);
}

static int sc_header(sim *S, int version, int hwid)
{
    S->ncpus = 2;
    sim_session *s = add_session(S, SIM_MODE_PER_CPU, 1);
    s->header_version = version;
    s->hw_id_records = hwid;
    return 0;
}

static int sc_header_v0(sim *S)
{
    return sc_header(S, 0, 0);
}

static int sc_header_v2(sim *S)
{
    return sc_header(S, 2, 1);
}

/* Sample times (seed 000: kernel time against CoreSight time). The same recording three times,
 * with the CoreSight time stamps from three clocks: the kernel's clock itself (TIME_CONV 1:1),
 * the architected counter TIME_CONV describes (19.2 MHz, running since long before boot), and a
 * separate time stamp generator the kernel knows nothing about. TS_SOURCE (perf 6.3+) says which:
 * 1 (the virtual counter) for the first two, -1 (unknown) for the third. */
static int sc_time(sim *S, int clk)
{
    S->ncpus = 3;
    sim_session *s = add_session(S, SIM_MODE_PER_CPU, 3);
    s->ts_source = clk == SIM_CLK_OTHER ? -1 : 1;
    s->read_period = 150000; /* AUX records at many different times */
    add_etr(S, 64u << 10);
    S->clock.kind = clk;
    if (clk == SIM_CLK_COUNTER) {
        /* arm64: sched_clock from a 56-bit counter, mult / 2^shift = 52.083 ns per tick */
        S->clock.mult = 873813333u;
        S->clock.shift = 24;
        const uint64_t c0 = 7000000000ull; /* the counter's value at boot */
        uint64_t f = (c0 >> 24) * S->clock.mult + (((c0 & 0xFFFFFF) * S->clock.mult) >> 24);
        S->clock.zero = 0 - f; /* the kernel's clock reads 0 at boot */
        S->clock.cycles = c0;  /* ... and its epoch (arm64 subtracts it from time_zero) */
    } else if (clk == SIM_CLK_OTHER) {
        S->clock.base = 123456789012345ull; /* a 100 MHz generator started long ago */
        S->clock.num = 1;
        S->clock.den = 10;
    }
    return 0;
}

static int sc_time_kernel(sim *S)
{
    return sc_time(S, SIM_CLK_KERNEL);
}

static int sc_time_counter(sim *S)
{
    return sc_time(S, SIM_CLK_COUNTER);
}

static int sc_time_other(sim *S)
{
    return sc_time(S, SIM_CLK_OTHER);
}

static int sc_time_run(sim *S)
{
    set_target(&S->sessions[0], S->next_pid);
    sim_process *p = spawn(S, "simloop", 0, S->work, 1);
    if (!p) return EK_ERR_NOMEM;
    p->random_actions = 32;
    script(p, 1, SIM_ACT_CLONE);
    script(p, 2, SIM_ACT_CLONE);
    return 0;
}

/* Context changes (perf fixed this in 2026): system-wide kernel and user tracing of four
 * processes sharing one CPU and yielding to each other all the time; time stamps are rare (a
 * synchronisation every 64 KiB), so many ranges wait in perf's packet queue when the context
 * packet of the next thread arrives. They belong to the thread that ran them; perf 6.1 gives
 * them to the next one. */
static int sc_ctxswitch(sim *S)
{
    S->ncpus = 1;
    add_session(S, SIM_MODE_SYSTEM, 3);
    add_etr(S, 1u << 20);
    return 0;
}

static int sc_ctxswitch_run(sim *S)
{
    static const char *const exe[] = {"simloop", "simchild", "simloop", "simchild"};
    for (int i = 0; i < 4; i++) {
        sim_process *p = spawn(S, exe[i], 0, S->work, 0);
        if (!p) return EK_ERR_NOMEM;
        p->random_actions = 96; /* mostly yields and sleeps */
    }
    S->cpus[0].etm.sync_period = 65536;
    return 0;
}

/* Linux 6.12+: trace IDs are allocated per sink and announced by AUX_OUTPUT_HW_ID version 0.1
 * with the sink's ID. Two clusters of 4 CPUs, each with its own ETR; the pool of trace IDs is
 * made small (1-4, as if the 0x6f IDs were taken by more trace units than a global map could
 * hold), so both sinks use the same four IDs: the CPU of a trace ID depends on the sink. */
static int sc_trace_id_per_sink(sim *S)
{
    S->ncpus = 8;
    S->trace_id_top = 5;
    sim_session *s = add_session(S, SIM_MODE_PER_CPU, 1);
    s->header_version = 2;
    s->hw_id_records = 1;
    s->hw_id_minor = 1;
    add_etr_group(S, 256u << 10, 0, 4);
    add_etr_group(S, 256u << 10, 4, 4);
    return 0;
}

static int sc_trace_id_per_sink_run(sim *S)
{
    set_target(&S->sessions[0], S->next_pid);
    sim_process *p = spawn(S, "simloop", 0, S->work, 1);
    if (!p) return EK_ERR_NOMEM;
    p->random_actions = 24;
    for (uint32_t k = 1; k <= 7; k++)
        script(p, k, SIM_ACT_CLONE);
    return 0;
}

/* A JIT: simjit compiles functions into an anonymous code cache, calls them, moves some and
 * collects the cache, after which other code runs at the same addresses. The JIT writes
 * jit-PID.dump (which it maps, so that the recording names it) and /tmp/perf-PID.map; both
 * are in symfs at their paths. perf record -k 1: CLOCK_MONOTONIC sample times, the clock of
 * the jitdump's time stamps. Time stamps in the trace tell which code ran when. */
static int sc_jit(sim *S)
{
    S->ncpus = 2;
    sim_session *s = add_session(S, SIM_MODE_PER_CPU, 1);
    s->clock_monotonic = 1;
    add_etr(S, 1u << 20);
    return 0;
}

#define SIM_JIT_DIR "/home/sim/.debug/jit/simjit-jit-20261203.q3Xe1B"

static int sc_jit_run(sim *S)
{
    set_target(&S->sessions[0], S->next_pid);
    sim_process *p = spawn(S, "simjit", 0, S->work, 1);
    if (!p) return EK_ERR_NOMEM;
    int err = sim_jit_enable(S, p, S->jit_dir ? S->jit_dir : SIM_JIT_DIR);
    if (err) return err;
    p->random_actions = 12;
    p->jit_every = 3; /* a JIT action every third work step */
    /* a worker thread on the other CPU calls the JIT's code too, for half of the run: the JIT
     * changes code only at safepoints (machine.c, do_jit), when the worker is off its CPU and
     * not inside JIT code */
    script(p, 30, SIM_ACT_CLONE);
    return 0;
}

/* A realistic mix for benchmarks: four CPUs with ETE and per-CPU TRBE sinks, system-wide
 * kernel and user tracing, three processes (threads, library load/unload cycles, exec). The
 * TRBE fills its buffer, raises its interrupt and the data streams into the AUX rings, which
 * perf record drains every millisecond, so --trace-size can go to gigabytes. */
static int sc_workload(sim *S)
{
    S->ncpus = 4;
    sim_session *s = add_session(S, SIM_MODE_SYSTEM, 3);
    s->ete = 1;
    s->sink_kind = SIM_SINK_TRBE;
    s->ring_size = 4u << 20;
    s->read_period = 1000000;
    add_trbe(S, 1u << 20);
    return 0;
}

static int sc_workload_run(sim *S)
{
    sim_process *a = spawn(S, "simloop", 0, S->work, 0);
    sim_process *b = spawn(S, "simloop", 1, S->work, 0);
    sim_process *c = spawn(S, "simloop", 2, S->work, 0);
    if (!a || !b || !c) return EK_ERR_NOMEM;
    a->random_actions = 16;
    b->random_actions = 24;
    c->random_actions = 8;
    int err = add_lib(S, a, "libsima.so");
    if (!err) err = add_lib(S, a, "libsimb.so");
    a->thread_budget = 30000; /* its thread ends before the library is unloaded */
    script(a, 1, SIM_ACT_CLONE);
    script(a, 4, SIM_ACT_DLOPEN);
    script(a, 300, SIM_ACT_DLCLOSE);
    script(a, 302, SIM_ACT_DLOPEN);
    script(b, 1, SIM_ACT_CLONE);
    script(b, 2, SIM_ACT_CLONE);
    b->next_exe = sim_find_image(S, "simchild");
    b->thread_budget = 30000; /* its threads end, then it execs */
    script(b, 500, SIM_ACT_EXEC);
    return err;
}

/* Real code for benchmarks: the workload's topology (4 CPUs, ETE, TRBE, system-wide kernel and
 * user), three processes running simreal on Debian's libc.so.6 and libm.so.6, started through
 * ld-linux-aarch64.so.1 (realcode.c). A megabyte and more of distinct code runs, so a decoder
 * cannot live off a few hot lines. */
static int sc_workload_real(sim *S)
{
    int rc = sc_workload(S);
    if (!rc) rc = sim_real_setup(S);
    return rc;
}

static int sc_workload_real_run(sim *S)
{
    for (int i = 0; i < 3; i++) {
        sim_process *p = sim_spawn_real(S, i, S->work, 0);
        if (!p) return S->err ? S->err : EK_ERR_NOMEM;
        p->random_actions = 4;
    }
    return 0;
}

/* Randomized schedule of the sink rules: 2-8 CPUs, one topology (a shared ETR, an ETF per CPU
 * or per-CPU TRBEs), 2-4 perf sessions of random modes that start and stop at random times,
 * sometimes a kernel-created session (no owner task: perf_pid -1, no perf.data), and processes
 * that sleep, yield, clone and exit. The invariants (truth.summary "invariants" line) must hold
 * for every seed: no buffer ever holds two sessions' trace, references return to zero, nothing
 * is touched after its session ended. */
static int sc_stress(sim *S)
{
    S->ncpus = 2 + (int)sim_rng_below(&S->rng, SIM_MAX_CPUS - 1);
    int topo = (int)sim_rng_below(&S->rng, 3);
    int nsess = 2 + (int)sim_rng_below(&S->rng, 3);
    int kernel = sim_rng_chance(&S->rng, 128);
    for (int i = 0; i < nsess + kernel; i++) {
        int mode = (int)sim_rng_below(&S->rng, 3);
        int k = i == nsess; /* the kernel-created session */
        sim_session *s = add_session(S,
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
        add_etr(S, 16u << 10 << sim_rng_below(&S->rng, 4));
    else if (topo == 1)
        add_etf_per_cpu(S, 8u << 10 << sim_rng_below(&S->rng, 3));
    else
        add_trbe(S, 8u << 10 << sim_rng_below(&S->rng, 3));
    return 0;
}

static int sc_stress_run(sim *S)
{
    int nproc = 2 + (int)sim_rng_below(&S->rng, 4);
    for (int i = 0; i < nproc; i++) {
        unsigned mask = 0;
        for (int k = 0; k < S->nsessions; k++)
            if (k % nproc == i) mask |= 1u << k;
        for (int k = 0; k < S->nsessions; k++)
            if ((mask >> k & 1) && S->sessions[k].mode != SIM_MODE_SYSTEM)
                set_target(&S->sessions[k], S->next_pid);
        uint64_t budget = 30000 + sim_rng_below(&S->rng, 1500000);
        sim_process *p = spawn(S, sim_rng_chance(&S->rng, 128) ? "simloop" : "simchild",
                               (int)sim_rng_below(&S->rng, (uint32_t)S->ncpus), budget, mask);
        if (!p) return EK_ERR_NOMEM;
        p->random_actions = 8 + sim_rng_below(&S->rng, 48);
        for (uint32_t n = sim_rng_below(&S->rng, 3), at = 1; n;
             n--, at += 1 + sim_rng_below(&S->rng, 8))
            script(p, at, SIM_ACT_CLONE);
    }
    return 0;
}

/* system-wide: two processes (three threads), each thread alone on its CPU, so that every
 * sample's CPU, process, thread and command name are known without a context switch (what
 * perf 6.1 gets right: the sample filters are compared with it on this recording) */
static int sc_two_procs(sim *S)
{
    S->ncpus = 3;
    add_session(S, SIM_MODE_SYSTEM, 1);
    add_etf_per_cpu(S, 64u << 10);
    return 0;
}

static int sc_two_procs_run(sim *S)
{
    sim_process *a = spawn(S, "simloop", 0, S->work, 1);
    sim_process *b = spawn(S, "simchild", 1, S->work, 1);
    if (!a || !b) return EK_ERR_NOMEM;
    script(a, 1, SIM_ACT_CLONE); /* the new thread goes to the idle CPU 2 */
    return 0;
}

static int sc_two_threads_run(sim *S)
{
    add_etr(S, 1u << 20);
    set_target(&S->sessions[0], S->next_pid);
    sim_process *p = spawn(S, "simloop", 0, S->work, 1);
    if (!p) return EK_ERR_NOMEM;
    p->random_actions = 24;
    script(p, 1, SIM_ACT_CLONE);
    return 0;
}

/* Kernel modules: a module wraps the write and getpid system calls (simmod.c); kernel and user
 * trace of 2 CPUs sharing an ETR. Its .ko is in symfs at the path of its MMAP record, with the
 * recorded build-id, and vmlinux beside it (the module's calls into the kernel are relocated
 * against the kernel's symbols). A decoder lays the .ko out as the loader did and relocates
 * it; perf 6.1 reads the file as if it were the module's memory, and its section maps put the
 * module's .bss at [0, 5 MiB) among the kernel's maps (README, "Kernel modules", "Kernel maps
 * hold kernel addresses only"). */
static int sc_kmod(sim *S)
{
    int err = sim_kmod_setup(S);
    return err ? err : sc_kernel(S);
}

static int sc_kmod_run(sim *S)
{
    set_target(&S->sessions[0], S->next_pid);
    sim_process *p = spawn(S, "simloop", 0, S->work, 1);
    if (!p) return EK_ERR_NOMEM;
    p->random_actions = 64; /* writes and getpids among them: into the module */
    script(p, 2, SIM_ACT_CLONE);
    return 0;
}

/* The --itrace letters c, r and s: kernel and user trace of two CPUs sharing an ETR, without
 * the kernel's image, so that the decodable trace ends at every system call and interrupt and
 * begins again after it (trace ends that are calls, trace begins; calls and returns; several
 * trace IDs per queue); the truth has what --itrace=c, --itrace=r and --itrace=i100ibs50
 * print, and perf 6.1's answers to the same options (its cs-etm ignores the three letters). */
static int sc_itrace(sim *S)
{
    S->itrace_lanes = 1;
    return sc_kernel_novmlinux(S);
}

/* Build-id mismatch: a library the process loads and calls, whose file in symfs is another
 * build (libsima.c with one more function: every function moved); the recording's build-id
 * table names the build that ran. A decoder must refuse the file: the library's code cannot
 * be read (perf 6.1 reads code without checking the build-id and decodes the other build's
 * bytes; it refuses the symbols). Two CPUs share an ETR, user space, a second thread. */
static int sc_buildid(sim *S)
{
    S->ncpus = 2;
    add_session(S, SIM_MODE_PER_CPU, 1);
    add_etr(S, 1u << 20);
    sim_image *lib = (sim_image *)sim_find_image(S, "libsima.so");
    const sim_image *other = sim_find_image(S, "libsima-otherbuild");
    if (!lib || !other) return EK_ERR_NOT_FOUND;
    lib->symfs = other;
    S->wrong_builds = 1;
    return 0;
}

static int sc_buildid_run(sim *S)
{
    set_target(&S->sessions[0], S->next_pid);
    sim_process *p = spawn(S, "simloop", 0, S->work, 1);
    if (!p) return EK_ERR_NOMEM;
    p->random_actions = 24;
    script(p, 1, SIM_ACT_CLONE);
    script(p, 3, SIM_ACT_DLOPEN);
    return add_lib(S, p, "libsima.so");
}

static const sim_scenario scenarios[] = {
    {"basic", "one process on one CPU, per-CPU ETMv4 into a formatted ETR, user space only",
     sc_basic, 0, sc_basic_run, 48 << 10},
    {"per-thread",
     "perf record --per-thread: no timestamps or context IDs (timeless decode), "
     "one AUX record per time the thread is scheduled in",
     sc_per_thread, 0, sc_per_thread_run, 64 << 10},
    {"per-thread-two-cpus",
     "perf record --per-thread of a process with two threads on 2 CPUs sharing one ETR: one "
     "thread's AUX buffer can hold both CPUs' trace IDs, decoded without time stamps",
     sc_per_thread_two, 0, sc_per_thread_two_run, 64 << 10},
    {"kernel-and-user",
     "cs_etm// (kernel and user space) on 2 CPUs, a process with two threads "
     "making system calls; vmlinux in symfs",
     sc_kernel, 0, sc_kernel_run, 96 << 10},
    {"kernel-and-user-novmlinux",
     "the same recording with no vmlinux in symfs (kallsyms text in OUT/kallsyms): perf cannot "
     "read kernel code and silently drops kernel samples",
     sc_kernel_novmlinux, 0, sc_kernel_run, 96 << 10},
    {"dlopen-reuse",
     "a library is loaded, called, unloaded and another one is loaded at the "
     "same address (perf 6.1 decodes all trace with the last one)",
     sc_dlopen, 0, sc_dlopen_run, 96 << 10},
    {"mmap2-after-aux",
     "2 CPUs with an ETF each; perf record reads one ring late, so the "
     "MMAP2 of a library lands after AUX records of trace that ran it",
     sc_mmap2_after_aux, 0, sc_mmap2_after_aux_run, 128 << 10},
    {"multi-aux-per-auxtrace",
     "the sink is copied out at every sleep; perf record reads once, "
     "so one AUXTRACE buffer holds many AUX records",
     sc_multi_aux, 0, sc_multi_aux_run, 96 << 10},
    {"shared-sink-multi-cpu",
     "4 CPUs and a 4-thread process share one ETR: frames "
     "interleave 4 trace IDs, timestamps order the decode",
     sc_shared_sink, 0, sc_shared_sink_run, 192 << 10},
    {"session-arbitration",
     "two perf sessions trace two processes through one ETR; the sink "
     "refuses the other session (EBUSY, empty TRUNCATED AUX record) "
     "until its owner's last event stops",
     sc_arbitration, 0, sc_arbitration_run, 128 << 10},
    {"per-cpu-trbe", "ETE into per-CPU TRBE-like raw sinks (AUX flag 0x100), 2 CPUs", sc_trbe, 0,
     sc_trbe_run, 96 << 10},
    {"snapshot-wrap",
     "perf record -S: overwritten AUX ring (128 KiB) and ETR (32 KiB) that wrap, "
     "barrier packets, one snapshot at the end",
     sc_snapshot, 0, sc_snapshot_run, 512 << 10},
    {"snapshot-etr",
     "a debugger snapshot folder: 3 CPUs with ETMv4 share a 64 KiB ETR that wraps "
     "in place; kernel and user code as memory dumps",
     sc_snap_etr, 1, sc_snap_run, 256 << 10},
    {"snapshot-ete-trbe",
     "a debugger snapshot folder: 2 CPUs with ETE, one raw (source_data) "
     "TRBE buffer per CPU",
     sc_snap_trbe, 1, sc_snap_run, 128 << 10},
    {"flush-partial-packet",
     "incomplete ETM flushes leave a partial packet at the end of each "
     "hardware buffer; several AUX records per AUXTRACE buffer",
     sc_partial, 0, sc_partial_run, 128 << 10},
    {"flush-partial-packet-wrap",
     "the same with a 2 KiB ETR that wraps between copies: "
     "barrier packets after each wrap (TRUNCATED AUX records)",
     sc_partial, 0, sc_partial_wrap_run, 128 << 10},
    {"flush-partial-packet-nobarrier",
     "wrapping 2 KiB ETR and partial packets, without the "
     "driver's barrier packets",
     sc_partial, 0, sc_partial_nobarrier_run, 128 << 10},
    {"header-v0", "AUXTRACE_INFO version 0 (perf before 5.x): no per-CPU parameter count",
     sc_header_v0, 0, sc_two_threads_run, 64 << 10},
    {"header-v2",
     "AUXTRACE_INFO version 2 with AUX_OUTPUT_HW_ID records carrying the trace IDs "
     "(perf 6.4+); perf 6.1 refuses the file",
     sc_header_v2, 0, sc_two_threads_run, 64 << 10},
    {"trace-id-per-sink",
     "Linux 6.12+: 8 CPUs in two clusters, an ETR each; trace IDs allocated per sink from a "
     "small pool (both sinks use IDs 1-4), AUX_OUTPUT_HW_ID version 0.1 with sink IDs; perf "
     "6.1 refuses the file",
     sc_trace_id_per_sink, 0, sc_trace_id_per_sink_run, 256 << 10},
    {"jit-reuse",
     "a JIT (seed 000): code compiled into an anonymous code cache, moved, collected and "
     "replaced by other code at the same addresses, at safepoints (a worker thread on the "
     "other CPU runs it too); jit-PID.dump (code and names by time) and perf-PID.map in "
     "symfs, perf record -k 1; perf 6.1 cannot read JIT code",
     sc_jit, 0, sc_jit_run, 128 << 10},
    {"workload-real",
     "benchmark on real code: the workload's 4 CPUs, ETE, TRBE and system-wide tracing, 3 "
     "processes running a program linked against Debian's AArch64 libc.so.6 and libm.so.6, "
     "started by ld-linux-aarch64.so.1 (package libc6-arm64-cross, read at run time); "
     "megabytes of distinct code; --trace-size up to gigabytes",
     sc_workload_real, 0, sc_workload_real_run, 256 << 10},
    {"arbitration-stress",
     "randomized sink arbitration: 2-8 CPUs, a shared ETR, ETFs or TRBEs, 2-4 sessions starting "
     "and stopping at random (sometimes a kernel-created one), processes that sleep, clone "
     "and exit; truth.summary reports the invariants",
     sc_stress, 0, sc_stress_run, 512 << 10},
    {"time-kernel-clock",
     "3 CPUs, kernel and user; the CoreSight time stamps are the kernel's clock (TS_SOURCE 1, "
     "TIME_CONV 1:1): samples carry their time stamp's time",
     sc_time_kernel, 0, sc_time_run, 96 << 10},
    {"time-virtual-counter",
     "the same with the time stamps from the 19.2 MHz architected counter TIME_CONV describes "
     "(TS_SOURCE 1): samples carry their time stamp converted to the kernel's clock",
     sc_time_counter, 0, sc_time_run, 96 << 10},
    {"time-unknown-counter",
     "the same with time stamps from a separate 100 MHz generator (TS_SOURCE -1, unknown): "
     "they only order the trace; samples carry the time of their AUX record",
     sc_time_other, 0, sc_time_run, 96 << 10},
    {"context-switch-order",
     "system-wide kernel and user tracing of 4 processes on one CPU yielding to each other, "
     "rare time stamps: ranges decoded before a context packet belong to the previous thread",
     sc_ctxswitch, 0, sc_ctxswitch_run, 128 << 10},
    {"two-processes",
     "system-wide user-space trace, 3 CPUs with an ETF each: two processes (simloop with a "
     "second thread, simchild), each thread alone on its CPU",
     sc_two_procs, 0, sc_two_procs_run, 96 << 10},
    {"buildid-mismatch",
     "symfs holds another build of the library the process loads (/usr/lib/libsima.so: one "
     "more function, another build-id than the recorded one), 2 CPUs, user space: a decoder "
     "refuses it (gaps); perf 6.1 decodes the other build's bytes",
     sc_buildid, 0, sc_buildid_run, 64 << 10},
    {"kernel-module",
     "a kernel module (relocatable simmod.ko in symfs at its recorded path) wraps the write "
     "and getpid system calls and calls the kernel; kernel and user trace of 2 CPUs sharing an "
     "ETR, vmlinux in symfs: a decoder lays the .ko out as the module loader did and relocates "
     "it; perf 6.1 reads the file unrelocated and maps the module's .bss at address 0",
     sc_kmod, 0, sc_kmod_run, 64 << 10},
    {"itrace-calls-returns-skip",
     "--itrace=c (calls), r (returns) and s (initial skip): kernel and user trace of 2 CPUs "
     "sharing an ETR, no vmlinux (trace ends and begins at system calls); expected-calls.txt, "
     "expected-returns.txt, expected-skip.txt (i100ibs50: one count over the output, both "
     "kinds); perf 6.1's cs-etm ignores the three letters",
     sc_itrace, 0, sc_kernel_run, 48 << 10},
    {"workload",
     "benchmark mix: 4 CPUs, ETE into per-CPU TRBE sinks, system-wide kernel and "
     "user tracing of 3 processes (threads, dlopen cycles, exec); scales with "
     "--trace-size to gigabytes (ground truth summarised above 4 MiB)",
     sc_workload, 0, sc_workload_run, 256 << 10},
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
