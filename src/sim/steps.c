/* Scenario steps (sim.h, sim_sc_step): the building blocks a scenario is made of -- trace units,
 * sessions, sinks, processes and what they do -- and the interpreter that runs a scenario's
 * list of them. */
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "sim/sim.h"

sim_session *sim_add_session(sim *S, int mode, unsigned el_mask)
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

void sim_add_etr(sim *S, uint32_t size)
{
    sim_sink *k = &S->sinks[S->nsinks];
    sim_sink_init(k, SIM_SINK_ETR, S->nsinks, size, S->truth);
    S->nsinks++;
    for (int c = 0; c < S->ncpus; c++)
        S->cpus[c].sink = k;
}

/* an ETR for CPUs first .. first+n-1 (a cluster's funnel) */
void sim_add_etr_group(sim *S, uint32_t size, int first, int n)
{
    sim_sink *k = &S->sinks[S->nsinks];
    sim_sink_init(k, SIM_SINK_ETR, S->nsinks, size, S->truth);
    S->nsinks++;
    for (int c = first; c < first + n && c < S->ncpus; c++)
        S->cpus[c].sink = k;
}

/* one ETF per CPU: every CPU's ETM has its own sink */
void sim_add_etf_per_cpu(sim *S, uint32_t size)
{
    for (int c = 0; c < S->ncpus; c++) {
        sim_sink *k = &S->sinks[S->nsinks];
        sim_sink_init(k, SIM_SINK_ETF, S->nsinks, size, S->truth);
        S->nsinks++;
        S->cpus[c].sink = k;
    }
}

/* per-CPU raw sinks (TRBE): unformatted ETE trace straight into the AUX ring */
void sim_add_trbe(sim *S, uint32_t size)
{
    for (int c = 0; c < S->ncpus; c++) {
        sim_sink_init(&S->trbe_sinks[c], SIM_SINK_TRBE, c, size, S->truth);
        S->trbes[c] = &S->trbe_sinks[c];
        S->cpus[c].sink = NULL;
    }
}

sim_process *sim_spawn_program(sim *S, const char *exe, int cpu, uint64_t budget, unsigned sessions)
{
    sim_image *img = (sim_image *)sim_find_image(S, exe);
    if (!img) return NULL;
    img->hidden = 0; /* an optional program is a file of this recording */
    return sim_spawn(S, img, img->blob->name, cpu, budget, sessions, 1);
}

/* perf record -- WORKLOAD: the session follows this process (and its children); the AUXTRACE
 * records of its CPU-wide events carry the workload's pid as tid. */
void sim_set_target(sim_session *s, int pid)
{
    s->target_pid = pid;
    if (s->mode != SIM_MODE_SYSTEM)
        for (int k = 0; k < s->nevents; k++)
            s->events[k].tid = pid;
}

void sim_script(sim_process *p, uint32_t at, sim_action a)
{
    if (p && p->nscript < SIM_MAX_SCRIPT) {
        p->script[p->nscript].at = at;
        p->script[p->nscript].action = a;
        p->nscript++;
    }
}

int sim_add_lib(sim *S, sim_process *p, const char *name)
{
    const sim_image *img = sim_find_image(S, name);
    if (!img || p->nlibs >= 4) return EK_ERR_NOT_FOUND;
    p->libs[p->nlibs++] = img;
    return 0;
}

/* The time stamps' clock (SIM_CLK_*) of the last session's recording: TS_SOURCE (perf 6.3+)
 * says 1 (the virtual counter) for the kernel's clock and the architected counter, -1
 * (unknown) for a separate time stamp generator. */
static void set_clock(sim *S, sim_session *s, int clk)
{
    s->ts_source = clk == SIM_CLK_OTHER ? -1 : 1;
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
}

#define SIM_JIT_DIR "/home/sim/.debug/jit/simjit-jit-20261203.q3Xe1B"

int sim_steps_run(sim *S, const sim_sc_step *st)
{
    sim_session *s = S->nsessions ? &S->sessions[S->nsessions - 1] : NULL;
    sim_process *p = NULL;
    int err = 0;
    for (; st && st->op != SIM_ST_END && !err; st++) {
        const uint64_t a = st->a, b = st->b;
        /* the steps that change a session or a process need one */
        if (st->op > SIM_ST_SESSION && st->op < SIM_ST__SESSION_END && !s) return EK_ERR_ARG;
        if (st->op > SIM_ST__SESSION_END && !p) return EK_ERR_ARG;
        if ((st->op == SIM_ST_TARGET || st->op == SIM_ST_EVENT_TID) && a >= (uint64_t)S->nsessions)
            return EK_ERR_ARG;
        switch (st->op) {
        case SIM_ST_CPUS: S->ncpus = (int)a; break;
        case SIM_ST_NO_VMLINUX: S->no_vmlinux = 1; break;
        case SIM_ST_ITRACE_LANES: S->itrace_lanes = 1; break;
        case SIM_ST_TRACE_ID_TOP: S->trace_id_top = (int)a; break;
        case SIM_ST_CALL: err = st->fn(S); break;
        case SIM_ST_SYMFS_OTHER: {
            sim_image *img = (sim_image *)sim_find_image(S, st->s);
            const sim_image *other = sim_find_image(S, st->s2);
            if (!img || !other) return EK_ERR_NOT_FOUND;
            img->symfs = other;
            S->wrong_builds = 1;
            break;
        }
        case SIM_ST_ETR: sim_add_etr(S, (uint32_t)a); break;
        case SIM_ST_ETR_GROUP: sim_add_etr_group(S, (uint32_t)a, (int)b, (int)st->c); break;
        case SIM_ST_ETF_PER_CPU: sim_add_etf_per_cpu(S, (uint32_t)a); break;
        case SIM_ST_TRBE: sim_add_trbe(S, (uint32_t)a); break;
        case SIM_ST_BARRIER: S->sinks[0].barrier = (int)a; break;
        case SIM_ST_PARTIAL_FLUSH: S->sinks[0].partial_flush = 1; break;
        case SIM_ST_SYNC_PERIOD: S->cpus[a].etm.sync_period = (uint32_t)b; break;
        case SIM_ST_IDR1_REVISION: S->cpus[a].idr1_revision = (uint32_t)b; break;
        case SIM_ST_SESSION: s = sim_add_session(S, (int)a, (unsigned)b); break;
        case SIM_ST_EVENTS: s->nevents = (int)a; break;
        case SIM_ST_READ_PERIOD: s->read_period = a; break;
        case SIM_ST_READ_SKEW: s->read_skew = a; break;
        case SIM_ST_RING: s->ring_size = (uint32_t)a; break;
        case SIM_ST_ETE_TRBE:
            s->ete = 1;
            s->sink_kind = SIM_SINK_TRBE;
            break;
        case SIM_ST_SNAPSHOT_MODE: s->snapshot = 1; break;
        case SIM_ST_HEADER:
            s->header_version = (int)a;
            s->hw_id_records = (int)b;
            break;
        case SIM_ST_HWID_MINOR: s->hw_id_minor = (int)a; break;
        case SIM_ST_CLOCK_MONOTONIC: s->clock_monotonic = 1; break;
        case SIM_ST_NO_TS_ORDER: s->attr_config &= ~(1u << 28); break;
        case SIM_ST_CLOCK: set_clock(S, s, (int)a); break;
        case SIM_ST_RAW_CPU:
            s->raw_cpu_known = 1;
            s->raw_cpu = (int)a;
            break;
        case SIM_ST_TARGET: sim_set_target(&S->sessions[a], S->next_pid); break;
        case SIM_ST_EVENT_TID: S->sessions[a].events[b].tid = S->next_pid; break;
        case SIM_ST_SPAWN:
            p = sim_spawn_program(S, st->s, (int)a, S->work, (unsigned)b);
            if (!p) return EK_ERR_NOMEM;
            break;
        case SIM_ST_ACTIONS: p->random_actions = (uint32_t)a; break;
        case SIM_ST_SCRIPT: sim_script(p, (uint32_t)a, (sim_action)b); break;
        case SIM_ST_LIB: err = sim_add_lib(S, p, st->s); break;
        case SIM_ST_THREAD_BUDGET: p->thread_budget = a; break;
        case SIM_ST_NEXT_EXE: p->next_exe = sim_find_image(S, st->s); break;
        case SIM_ST_JIT:
            err = sim_jit_enable(S, p, S->jit_dir ? S->jit_dir : SIM_JIT_DIR);
            p->jit_every = (uint32_t)a;
            break;
        default: return EK_ERR_ARG;
        }
    }
    return err;
}
