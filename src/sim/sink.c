/* Funnel, CoreSight formatter, sinks and perf sessions.
 *
 * Shared sinks (ETR, ETF) receive the trace of every ETM that reaches them, interleaved in
 * 16-byte CoreSight frames by trace ID. Per-CPU raw sinks (TRBE-like) receive one ETE's bytes
 * unformatted. Sessions (`perf record` invocations) own events; an event runs on a CPU while
 * its task (or, system-wide, anything) runs there. The sink rules follow Linux 6.1's
 * coresight-tmc-etr perf mode: the first event of a session claims the sink for that session
 * (identified by the pid of the perf tool that owns the events), later events of the same
 * session share it by reference count, an event of another session is refused with EBUSY
 * (an AUX record of size 0 with the TRUNCATED flag) until the owning session's last event has
 * stopped; the last event to stop copies the hardware buffer into its own AUX ring (inserting a
 * 4 x FSYNC barrier frame when the buffer wrapped) and emits the AUX record.
 *
 * The `perf record` model reads every ring (sideband records, then AUX data as one AUXTRACE
 * event) in passes, one ring after another with a small time skew, and ends each pass with
 * FINISHED_ROUND, so a record on one ring can land in the file after a later record of
 * another ring, as it does on real systems. */
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "sim/sim.h"

/* ------------------------------------------------------------------ formatter */

void sim_sink_init(sim_sink *k, int kind, int index, uint32_t size, int truth)
{
    memset(k, 0, sizeof(*k));
    k->kind = kind;
    k->index = index;
    k->hw_size = size;
    k->hw = calloc(size, 1);
    k->owner = SIM_NO_OWNER;
    k->cur_id = -1;
    k->truth = truth;
    k->barrier = 1;
    k->seg_prune_at = 4096;
    /* the kernel reports a hash of the sink's device name as its ID (coresight_get_sink_id);
     * any stable 32-bit value per sink will do here: FNV-1a of the name the driver would use */
    char name[32];
    snprintf(name, sizeof name, "%s%d",
             kind == SIM_SINK_ETR   ? "tmc_etr"
             : kind == SIM_SINK_ETF ? "tmc_etf"
                                    : "trbe",
             index);
    uint32_t h = 2166136261u;
    for (const char *p = name; *p; p++)
        h = (h ^ (uint8_t)*p) * 16777619u;
    k->sink_id = h;
}

void sim_sink_free(sim_sink *k)
{
    free(k->hw);
    ek_vec_free(&k->segs);
}

static void sink_reset(sim_sink *k)
{
    k->written = 0;
    k->frames = 0;
    k->fpos = 0;
    k->cur_id = -1;
    k->segs.n = 0;
    memset(k->frame, 0, sizeof(k->frame));
}

static void frame_done(sim_sink *k)
{
    uint64_t at = (k->frames * 16) % k->hw_size;
    memcpy(k->hw + at, k->frame, 16);
    k->frames++;
    k->written += 16;
    k->fpos = 0;
    memset(k->frame, 0, sizeof(k->frame));
    if (k->truth && k->segs.n >= k->seg_prune_at) {
        /* forget segments of frames that have been overwritten (segments are in frame order) */
        uint64_t keep = k->frames > k->hw_size / 16 ? k->frames - k->hw_size / 16 : 0;
        size_t lo = 0, hi = k->segs.n;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (k->segs.v[mid].frame < keep)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo) {
            memmove(k->segs.v, k->segs.v + lo, (k->segs.n - lo) * sizeof(sim_fseg));
            k->segs.n -= lo;
        }
        k->seg_prune_at = k->segs.n * 2 > 4096 ? k->segs.n * 2 : 4096;
    }
}

static void seg_note(sim_sink *k, int id, uint64_t xoff)
{
    if (!k->truth) return;
    sim_fseg *l = k->segs.n ? &k->segs.v[k->segs.n - 1] : NULL;
    if (l && l->frame == k->frames && l->id == id && l->xoff + l->count == xoff) {
        l->count++;
        return;
    }
    sim_fseg s = {
        .frame = k->frames, .xoff = xoff, .id = (uint8_t)id, .pos = (uint8_t)k->fpos, .count = 1};
    ek_vec_push(&k->segs, s);
}

static inline void put_data(sim_sink *k, uint8_t b)
{
    if (k->fpos & 1) {
        k->frame[k->fpos] = b;
    } else {
        k->frame[k->fpos] = b & 0xFE;
        if (b & 1) k->frame[15] |= (uint8_t)(1u << (k->fpos / 2));
    }
    k->fpos++;
}

/* Switch the formatter to 'id' before the next data byte. */
static void switch_id(sim_sink *k, int id)
{
    if (k->fpos & 1) {
        /* odd slot: the previous even slot holds a data byte of the old ID. Move it to this
         * odd slot and put the new ID in the even slot, flagged "next byte is the old ID". */
        unsigned ev = k->fpos - 1;
        uint8_t d = (uint8_t)(k->frame[ev] | ((k->frame[15] >> (ev / 2)) & 1));
        k->frame[ev] = (uint8_t)((id << 1) | 1);
        k->frame[15] |= (uint8_t)(1u << (ev / 2));
        k->frame[k->fpos] = d;
        k->fpos++;
        if (k->truth && k->segs.n && k->segs.v[k->segs.n - 1].frame == k->frames) {
            sim_fseg *l = &k->segs.v[k->segs.n - 1];
            if (l->pos == ev) l->pos = (uint8_t)(ev + 1);
        }
    } else {
        k->frame[k->fpos] = (uint8_t)((id << 1) | 1);
        k->frame[15] &= (uint8_t) ~(1u << (k->fpos / 2));
        k->fpos++;
    }
    k->cur_id = id;
    if (k->fpos == 15) frame_done(k);
}

static void fmt_byte(sim_sink *k, int id, uint8_t b, uint64_t xoff)
{
    if (k->fpos == 0) {
        k->frame[0] = (uint8_t)((id << 1) | 1); /* every frame starts with an ID byte */
        k->fpos = 1;
        k->cur_id = id;
    } else if (id != k->cur_id) {
        switch_id(k, id);
        if (k->fpos == 0) {
            k->frame[0] = (uint8_t)((id << 1) | 1);
            k->fpos = 1;
            k->cur_id = id;
        }
    }
    seg_note(k, id, xoff);
    put_data(k, b);
    if (k->fpos == 15) frame_done(k);
}

/* Complete the frame in progress with the null trace ID. */
static void fmt_flush(sim_sink *k)
{
    if (k->fpos == 0) return;
    switch_id(k, 0);
    while (k->fpos != 0 && k->fpos < 15)
        put_data(k, 0);
    if (k->fpos == 15) frame_done(k);
}

static void trbe_full(sim *S, sim_sink *k);

void sim_sink_flush(sim_sink *k)
{
    if (k->kind != SIM_SINK_TRBE) fmt_flush(k);
}

void sim_sink_write(sim *S, sim_sink *k, int id, const uint8_t *p, size_t n, uint64_t xoff,
                    int writer)
{
    if (writer != k->owner)
        k->stat_mixed++; /* trace of a session that does not own the sink: must never happen */
    if (k->kind == SIM_SINK_TRBE) {
        while (n) {
            if (!k->written) k->xbase = xoff;
            size_t chunk = k->hw_size - k->written < n ? k->hw_size - k->written : n;
            memcpy(k->hw + k->written, p, chunk);
            k->written += chunk;
            p += chunk;
            n -= chunk;
            xoff += chunk;
            if (k->written == k->hw_size)
                trbe_full(S, k); /* buffer full: IRQ, AUX record, restart */
        }
        return;
    }
    size_t i = 0;
    while (i < n) {
        if (k->fpos == 0 && n - i >= 14 && !k->truth) {
            /* fast path: a whole frame of one trace ID */
            uint8_t *f = k->frame, aux = 0;
            f[0] = (uint8_t)((id << 1) | 1);
            for (unsigned j = 1; j < 15; j += 2) {
                f[j] = p[i++];
                if (j + 1 < 15) {
                    uint8_t b = p[i++];
                    f[j + 1] = b & 0xFE;
                    aux |= (uint8_t)((b & 1) << ((j + 1) / 2));
                }
            }
            f[15] = aux;
            k->cur_id = id;
            frame_done(k);
            continue;
        }
        fmt_byte(k, id, p[i], xoff + i);
        i++;
    }
}

/* ------------------------------------------------------------------ trace IDs */

static sim_sink *sink_of(sim *S, const sim_session *s, int cpu)
{
    return s->sink_kind == SIM_SINK_TRBE ? S->trbes[cpu] : S->cpus[cpu].sink;
}

/* The map a session's CPU takes its ID from: none before Linux 6.4 (AUXTRACE_INFO version
 * below 2: static legacy IDs), the global one for AUX_OUTPUT_HW_ID v0.0, the sink's for v0.1. */
static sim_idmap *idmap_of(sim *S, const sim_session *s, int cpu)
{
    if (s->header_version < 2) return NULL;
    if (s->hw_id_minor < 1) return &S->global_ids;
    sim_sink *k = sink_of(S, s, cpu);
    return k ? &k->ids : NULL;
}

static int legacy_id(int cpu)
{
    return 0x10 + 2 * cpu;
}

/* coresight_trace_id_alloc_new_id for a CPU: its legacy ID if valid and free, else the lowest
 * free ID; 0 when the pool is exhausted */
static uint8_t id_alloc(const sim *S, sim_idmap *m, int cpu)
{
    int top = S->trace_id_top;
    int id = legacy_id(cpu);
    if (!(id > 0 && id < top && !m->used[id]))
        for (id = 1; id < top && m->used[id]; id++)
            ;
    if (id >= top) return 0;
    m->used[id] = 1;
    return (uint8_t)id;
}

/* perf record creates the session's events: every CPU gets an ID in the map it uses */
static void ids_acquire(sim *S, sim_session *s)
{
    for (int c = 0; c < S->ncpus; c++) {
        sim_idmap *m = idmap_of(S, s, c);
        if (!m) continue;
        int held = 0;
        for (int i = 0; i < s->nidmaps; i++)
            held |= s->idmaps[i] == m;
        if (!held && s->nidmaps < 2 * SIM_MAX_CPUS) {
            s->idmaps[s->nidmaps++] = m;
            m->sessions++;
        }
        if (!m->cpu_id[c] && !(m->cpu_id[c] = id_alloc(S, m, c)))
            sim_note(S, "trace ID pool exhausted for CPU %d", c);
    }
}

/* the last session using a map releases all its IDs */
static void ids_release(sim_session *s)
{
    for (int i = 0; i < s->nidmaps; i++)
        if (--s->idmaps[i]->sessions == 0) memset(s->idmaps[i], 0, sizeof(sim_idmap));
    s->nidmaps = 0;
}

uint8_t sim_trace_id(const sim *S, const sim_session *s, int cpu)
{
    sim_idmap *m = s ? idmap_of((sim *)S, s, cpu) : NULL;
    if (m && m->cpu_id[cpu]) return m->cpu_id[cpu];
    return (uint8_t)legacy_id(cpu);
}

/* ------------------------------------------------------------------ rings and records */

int sim_session_sees(const sim_session *s, const sim_process *p)
{
    if (!p) return 0;
    if (s->mode == SIM_MODE_SYSTEM) return 1;
    return (p->session_mask >> s->index) & 1;
}

static sim_event *thread_event(sim_session *s, const sim_thread *t)
{
    for (int i = 0; i < s->nevents; i++)
        if (s->events[i].tid == t->tid) return &s->events[i];
    return NULL;
}

void sim_session_record(sim *S, sim_session *s, int ring, const sim_rec *r)
{
    if (ring < 0 || ring >= s->nevents || !s->started || s->stopped) return;
    sim_rec c = *r;
    c.seq = s->rec_seq++;
    if (ek_vec_push(&s->rings[ring].recs, c)) S->err = EK_ERR_NOMEM;
}

static int ring_for(sim_session *s, const sim_thread *t, int cpu)
{
    if (s->mode == SIM_MODE_PER_THREAD) {
        sim_event *ev = thread_event(s, t);
        return ev ? ev->idx : -1;
    }
    return cpu;
}

static void side(sim *S, const sim_thread *t, int cpu, sim_rec *r)
{
    for (int i = 0; i < S->nsessions; i++) {
        sim_session *s = &S->sessions[i];
        if (!sim_session_sees(s, t->proc)) continue;
        int ring = ring_for(s, t, cpu);
        if (ring < 0 || !s->started || s->stopped) continue;
        r->id = s->events[ring].dummy_id;
        sim_session_record(S, s, ring, r);
        if (S->truth) {
            if (r->type == SIM_R_EXIT) {
                sim_rec c = *r;
                c.seq = s->rec_seq;
                ek_vec_push(&s->exits, c);
            } else {
                ek_vec_push(&s->known_tids, r->tid);
            }
        }
    }
}

void sim_side_comm(sim *S, sim_thread *t, int exec, uint64_t time, int cpu)
{
    sim_rec r;
    memset(&r, 0, sizeof(r));
    r.type = SIM_R_COMM;
    r.misc = exec ? (1u << 13) : 0;
    r.pid = t->proc->pid;
    r.tid = t->tid;
    r.cpu = cpu;
    r.time = time;
    memcpy(r.comm, t->proc->comm, sizeof(r.comm) - 1);
    side(S, t, cpu, &r);
}

void sim_side_fork(sim *S, sim_thread *t, int ppid, int ptid, uint64_t time, int cpu)
{
    sim_rec r;
    memset(&r, 0, sizeof(r));
    r.type = SIM_R_FORK;
    r.pid = t->proc->pid;
    r.tid = t->tid;
    r.ppid = ppid;
    r.ptid = ptid;
    r.cpu = cpu;
    r.time = time;
    side(S, t, cpu, &r);
}

void sim_side_exit(sim *S, sim_thread *t, uint64_t time, int cpu)
{
    sim_rec r;
    memset(&r, 0, sizeof(r));
    r.type = SIM_R_EXIT;
    r.pid = t->proc->pid;
    r.tid = t->tid;
    r.ppid = t->proc->parent;
    r.ptid = t->proc->parent;
    r.cpu = cpu;
    r.time = time;
    side(S, t, cpu, &r);
}

void sim_side_mmap(sim *S, sim_thread *t, const sim_map *m, uint64_t time, int cpu)
{
    sim_rec r;
    memset(&r, 0, sizeof(r));
    r.type = SIM_R_MMAP2;
    r.misc = 2; /* PERF_RECORD_MISC_USER */
    r.pid = t->proc->pid;
    r.tid = t->tid;
    r.cpu = cpu;
    r.time = time;
    r.addr = m->start;
    r.len = m->end - m->start;
    r.pgoff = (m->img->seg_off & ~0xFFFull);
    r.img = m->img;
    side(S, t, cpu, &r);
}

/* ------------------------------------------------------------------ AUX rings */

static void ring_write(sim_event *ev, const uint8_t *p, uint64_t n)
{
    for (uint64_t i = 0; i < n;) {
        uint64_t at = (ev->head + i) & (ev->ring_size - 1);
        uint64_t chunk = ev->ring_size - at;
        if (chunk > n - i) chunk = n - i;
        memcpy(ev->ring + at, p + i, chunk);
        i += chunk;
    }
    ev->head += n;
}

static void aux_record(sim *S, sim_session *s, sim_event *ev, int cpu, int tid, int pid,
                       uint64_t offset, uint64_t size, uint64_t flags, uint64_t time,
                       sim_op_vec *ops)
{
    sim_auxrec a;
    memset(&a, 0, sizeof(a));
    a.offset = offset;
    a.size = size;
    a.flags = flags;
    a.time = time;
    a.cpu = cpu;
    a.tid = tid;
    a.queue = ev->idx;
    a.formatted = s->sink_kind != SIM_SINK_TRBE;
    if (ops) a.ops = *ops;
    if (ek_vec_push(&s->auxrecs, a)) {
        S->err = EK_ERR_NOMEM;
        return;
    }
    sim_rec r;
    memset(&r, 0, sizeof(r));
    r.type = SIM_R_AUX;
    r.pid = pid;
    r.tid = tid;
    r.cpu = cpu;
    r.time = time;
    r.aux_offset = offset;
    r.aux_size = size;
    r.aux_flags = flags;
    r.id = ev->id;
    r.aux_index = (int)s->auxrecs.n - 1;
    sim_session_record(S, s, ev->idx, &r);
    s->aux_bytes += size;
}

/* Copy the sink's hardware buffer into the event's AUX ring (update_buffer at event stop). */
static void sink_copy_out(sim *S, sim_session *s, sim_event *ev, sim_sink *k, int cpu,
                          const sim_thread *t, uint64_t time, uint64_t xflags)
{
    int pid = t && t->proc ? t->proc->pid : 0, tid = t && !t->idle ? t->tid : 0;
    if (s->stopped)
        s->touched_after_exit++; /* the AUX ring of an ended session must not be written */
    uint64_t flags = (s->snapshot ? SIM_AUX_OVERWRITE : 0) | xflags;
    if (k->kind == SIM_SINK_TRBE) {
        flags |= SIM_AUX_RAW;
        uint64_t size = k->written, lost = 0;
        if (size > k->hw_size) {
            lost = size - k->hw_size;
            size = k->hw_size;
        }
        uint64_t space = s->snapshot ? ev->ring_size : ev->ring_size - (ev->head - ev->tail);
        if (size > space) {
            lost += size - space;
            size = space;
        }
        uint64_t start = k->written - size; /* the newest bytes survive */
        uint8_t *tmp = malloc(size ? size : 1);
        if (!tmp) {
            S->err = EK_ERR_NOMEM;
            return;
        }
        memcpy(tmp, k->hw + start, size); /* written never exceeds the buffer */
        sim_op_vec el = {0};
        if (S->truth && size)
            sim_truth_slice(S, k, S->cpus[cpu].etm.cfg.trace_id, k->xbase + start, size, 0, tmp,
                            &el);
        uint64_t off = ev->head;
        ring_write(ev, tmp, size);
        free(tmp);
        if (lost && !s->snapshot) flags |= SIM_AUX_TRUNCATED;
        if (size || (flags & ~(SIM_AUX_OVERWRITE | SIM_AUX_RAW | SIM_AUX_COLLISION)))
            aux_record(S, s, ev, cpu, tid, pid, s->snapshot ? ev->head : off, size, flags, time,
                       &el);
        else
            ek_vec_free(&el);
        k->written = 0;
        k->stat_copies++;
        return;
    }
    fmt_flush(k);
    uint64_t hw_frames = k->hw_size / 16;
    uint64_t f1 = k->frames, f0 = f1 > hw_frames ? f1 - hw_frames : 0;
    int lost = f0 > 0;
    uint64_t size = (f1 - f0) * 16;
    uint64_t space = ev->ring_size - (ev->head - ev->tail);
    if (!s->snapshot && size > space) {
        size = space & ~15ull;
        f0 = f1 - size / 16;
        lost = 1;
    }
    if (lost) k->stat_lost++;
    uint8_t *tmp = malloc(size ? size : 1);
    if (!tmp) {
        S->err = EK_ERR_NOMEM;
        return;
    }
    for (uint64_t f = f0; f < f1; f++)
        memcpy(tmp + (f - f0) * 16, k->hw + (f * 16) % k->hw_size, 16);
    int barrier = lost && k->barrier && size;
    if (barrier)
        for (int i = 0; i < 16; i += 4) {
            tmp[i] = 0xFF;
            tmp[i + 1] = 0xFF;
            tmp[i + 2] = 0xFF;
            tmp[i + 3] = 0x7F;
        }
    sim_op_vec el = {0};
    if (S->truth && size) sim_truth_slice(S, k, -1, f0 * 16, size, barrier, tmp, &el);
    uint64_t off = ev->head;
    ring_write(ev, tmp, size);
    free(tmp);
    if (lost && !s->snapshot) flags |= SIM_AUX_TRUNCATED;
    if (size || (flags & ~SIM_AUX_OVERWRITE))
        aux_record(S, s, ev, cpu, tid, pid, s->snapshot ? ev->head : off, size, flags, time, &el);
    else
        ek_vec_free(&el);
    k->stat_copies++;
    sink_reset(k);
}

/* TRBE buffer full (trbe_handle_overflow): the data goes out with the COLLISION flag (trace
 * may have been lost while the IRQ was pending) and collection restarts. */
static void trbe_full(sim *S, sim_sink *k)
{
    sim_event *ev = k->ev;
    if (!ev) {
        k->written = 0;
        return;
    }
    const sim_thread *t = S->cpus[k->cpu].cur;
    sink_copy_out(S, ev->s, ev, k, k->cpu, t, S->cpus[k->cpu].time, SIM_AUX_COLLISION);
}

/* ------------------------------------------------------------------ events */

static void refuse(sim *S, sim_session *s, sim_event *ev, int cpu, const sim_thread *t,
                   uint64_t time)
{
    /* etm_event_start: the path could not be enabled -> TRUNCATED, size 0 */
    ev->stopped_err = 1;
    aux_record(S, s, ev, cpu, t && !t->idle ? t->tid : 0, t && t->proc ? t->proc->pid : 0,
               s->snapshot ? ev->head : ev->head, 0,
               SIM_AUX_TRUNCATED | (s->snapshot ? SIM_AUX_OVERWRITE : 0), time, NULL);
}

static int event_start(sim *S, sim_session *s, sim_event *ev, int cpu, sim_thread *t, uint64_t time)
{
    if (s->stopped || (t && t->state == SIM_T_DEAD)) {
        s->touched_after_exit++; /* nothing may start for an exited owner */
        return -1;
    }
    sim_etm *e = &S->cpus[cpu].etm;
    sim_sink *k = s->sink_kind == SIM_SINK_TRBE ? NULL : S->cpus[cpu].sink;
    if (s->sink_kind == SIM_SINK_TRBE) {
        sim_sink *tb = S->trbes[cpu];
        if (!tb || tb->owner != SIM_NO_OWNER) {
            if (tb) tb->stat_refused++;
            refuse(S, s, ev, cpu, t, time);
            return -1;
        }
        tb->owner = s->perf_pid;
        tb->refcnt = 1;
        tb->written = 0;
        tb->ev = ev;
        tb->cpu = cpu;
    } else {
        if (!k) return -1;
        if (k->owner != SIM_NO_OWNER && k->owner != s->perf_pid) {
            k->stat_refused++;
            refuse(S, s, ev, cpu, t, time);
            return -1;
        }
        if (k->owner == s->perf_pid) {
            k->refcnt++;
        } else {
            k->owner = s->perf_pid;
            k->refcnt = 1;
            sink_reset(k);
        }
    }
    if (e->enabled) { /* the trace unit is in use by another event */
        if (k && --k->refcnt == 0) k->owner = SIM_NO_OWNER;
        if (!k && S->trbes[cpu]) {
            S->trbes[cpu]->refcnt = 0;
            S->trbes[cpu]->owner = SIM_NO_OWNER;
        }
        refuse(S, s, ev, cpu, t, time);
        return -1;
    }
    ev->stopped_err = 0;
    ev->running = 1;
    ev->run_cpu = cpu;
    if (s->sink_kind == SIM_SINK_TRBE) ev->trbe = S->trbes[cpu];
    if (s->hw_id_records && !(ev->hwid_sent >> cpu & 1)) {
        ev->hwid_sent |= 1 << cpu;
        sim_rec r;
        memset(&r, 0, sizeof(r));
        r.type = SIM_R_AUX_OUTPUT_HW_ID;
        r.pid = t && t->proc ? t->proc->pid : 0;
        r.tid = t && !t->idle ? t->tid : 0;
        r.cpu = cpu;
        r.time = time;
        /* version 0.minor, trace ID in bits 7:0, sink ID in 39:8 from version 0.1 on */
        r.hw_id = (uint64_t)sim_trace_id(S, s, cpu) | ((uint64_t)s->hw_id_minor << 56);
        if (s->hw_id_minor >= 1) {
            const sim_sink *hk = sink_of(S, s, cpu);
            r.hw_id |= (uint64_t)(hk ? hk->sink_id : 0) << 8;
        }
        r.id = ev->id;
        sim_session_record(S, s, ev->idx, &r);
    }
    if (t && !t->idle && !t->seen_by[s->index]) {
        t->seen_by[s->index] = 1;
        sim_rec r;
        memset(&r, 0, sizeof(r));
        r.type = SIM_R_ITRACE_START;
        r.pid = t->proc->pid;
        r.tid = t->tid;
        r.cpu = cpu;
        r.time = time;
        r.id = ev->id;
        sim_session_record(S, s, ev->idx, &r);
        if (S->truth) ek_vec_push(&s->known_tids, r.tid);
    }
    ek_etm4_enc_ctx ctx = {
        .el = (uint8_t)t->el, .sf = 1, .ns = 1, .cid = t->idle ? 0u : (uint32_t)t->tid};
    uint32_t map = 0;
    const sim_map *m = t->el ? S->kmap : sim_map_lookup(t->proc, t->pc);
    if (m) map = m->serial;
    sim_etm_enable(e, s, ev, t->pc, t->el, &ctx, map, time);
    e->pos_svc = (uint8_t)((sim_word_at(S, t->proc, t->pc - 4) & 0xFFE0001Fu) == 0xD4000001u);
    return 0;
}

static void event_stop(sim *S, sim_session *s, sim_event *ev, int cpu, const sim_thread *t,
                       uint64_t time)
{
    sim_etm *e = &S->cpus[cpu].etm;
    if (!ev->running) return;
    if (e->ev == ev) sim_etm_disable(e);
    ev->running = 0;
    if (s->sink_kind == SIM_SINK_TRBE) {
        sink_copy_out(S, s, ev, ev->trbe, cpu, t, time, 0);
        ev->trbe->refcnt = 0;
        ev->trbe->owner = SIM_NO_OWNER;
        ev->trbe->ev = NULL;
        ev->trbe = NULL;
        return;
    }
    sim_sink *k = S->cpus[cpu].sink;
    if (k->refcnt == 1) sink_copy_out(S, s, ev, k, cpu, t, time, 0);
    if (--k->refcnt == 0) k->owner = SIM_NO_OWNER;
}

static int event_wants(const sim_session *s, const sim_thread *t)
{
    if (!s->started || s->stopped) return 0;
    if (s->mode == SIM_MODE_SYSTEM) return 1;
    if (!t || t->idle || t->state == SIM_T_DEAD) return 0;
    if (s->mode == SIM_MODE_PER_THREAD) return thread_event((sim_session *)s, t) != NULL;
    return sim_session_sees(s, t->proc);
}

static sim_event *event_for(sim_session *s, const sim_thread *t, int cpu)
{
    if (s->mode == SIM_MODE_PER_THREAD) return thread_event(s, t);
    return &s->events[cpu];
}

void sim_sched_out(sim *S, int cpu, sim_thread *t, uint64_t time)
{
    (void)S;
    (void)cpu;
    (void)t;
    (void)time;
}

/* The arbitration invariants of seed 002, checked after every change: a sink's reference count
 * is the number of running events using it, they all belong to the owning session, a free sink
 * has no owner, a running event's ETM is enabled for it, and no ended session has one running. */
void sim_sinks_check(sim *S)
{
    int users[SIM_MAX_CPUS * 2];
    int owner[SIM_MAX_CPUS * 2];
    int bad = 0;
    for (int i = 0; i < SIM_MAX_CPUS * 2; i++) {
        users[i] = 0;
        owner[i] = SIM_NO_OWNER;
    }
    for (int i = 0; i < S->nsessions; i++) {
        const sim_session *s = &S->sessions[i];
        for (int j = 0; j < s->nevents; j++) {
            const sim_event *ev = &s->events[j];
            if (!ev->running) continue;
            const sim_etm *e = &S->cpus[ev->run_cpu].etm;
            if (s->stopped || !e->enabled || e->ev != ev) bad++;
            int slot;
            if (s->sink_kind == SIM_SINK_TRBE) {
                if (!ev->trbe) continue;
                slot = SIM_MAX_CPUS + (int)(ev->trbe - S->trbe_sinks);
            } else {
                const sim_sink *k = S->cpus[ev->run_cpu].sink;
                if (!k) continue;
                slot = (int)(k - S->sinks);
            }
            if (users[slot]++ && owner[slot] != s->perf_pid) bad++; /* two sessions in one buffer */
            owner[slot] = s->perf_pid;
        }
    }
    for (int i = 0; i < SIM_MAX_CPUS * 2; i++) {
        const sim_sink *k =
            i < SIM_MAX_CPUS ? (i < S->nsinks ? &S->sinks[i] : NULL) : S->trbes[i - SIM_MAX_CPUS];
        if (!k) continue;
        if (k->refcnt != users[i] || (users[i] ? k->owner != owner[i] : k->owner != SIM_NO_OWNER))
            bad++;
    }
    S->stat_invariant += (uint64_t)bad;
}

void sim_sched_in(sim *S, int cpu, sim_thread *prev, sim_thread *t, uint64_t time)
{
    sim_etm *e = &S->cpus[cpu].etm;
    /* the event running on this CPU continues if its session still wants this thread */
    if (e->enabled && e->sess && event_wants(e->sess, t) && event_for(e->sess, t, cpu) == e->ev)
        return;
    if (e->enabled && e->sess) {
        sim_session *s = e->sess;
        sim_event *ev = e->ev;
        /* the records of the stop are written in the context of the outgoing task */
        event_stop(S, s, ev, cpu, prev, time);
    }
    for (int i = 0; i < S->nsessions; i++) {
        sim_session *s = &S->sessions[i];
        if (!event_wants(s, t)) continue;
        sim_event *ev = event_for(s, t, cpu);
        if (!ev || ev->running) continue;
        event_start(S, s, ev, cpu, t, time);
    }
    sim_sinks_check(S);
}

/* ------------------------------------------------------------------ sessions */

static uint64_t next_id = 1;

int sim_session_setup(sim *S, sim_session *s)
{
    if (!s->ring_size) s->ring_size = 1u << 20;
    if (s->mode == SIM_MODE_PER_THREAD) {
        if (!s->nevents) s->nevents = 1;
    } else {
        s->nevents = S->ncpus;
    }
    for (int i = 0; i < s->nevents; i++) {
        sim_event *ev = &s->events[i];
        if (s->mode != SIM_MODE_PER_THREAD) ev->tid = -1;
        ev->s = s;
        ev->idx = i;
        ev->cpu = s->mode == SIM_MODE_PER_THREAD ? -1 : i;
        ev->ring_size = s->ring_size;
        ev->ring = calloc(s->ring_size, 1);
        if (!ev->ring) return EK_ERR_NOMEM;
        ev->id = 100 + (uint64_t)s->index * 64 + (uint64_t)i;
        ev->dummy_id = 1000 + (uint64_t)s->index * 64 + (uint64_t)i;
    }
    (void)next_id;
    return 0;
}

void sim_session_free(sim_session *s)
{
    ek_vec_free(&s->known_tids);
    ek_vec_free(&s->exits);
    for (int i = 0; i < s->nevents; i++) {
        free(s->events[i].ring);
        ek_vec_free(&s->rings[i].recs);
    }
    for (size_t i = 0; i < s->auxrecs.n; i++)
        ek_vec_free(&s->auxrecs.v[i].ops);
    ek_vec_free(&s->auxrecs);
    free(s->dir);
}

/* One `perf record` pass over the rings of a session. */
static void read_pass(sim *S, sim_session *s, uint64_t now, int final)
{
    int wrote = 0;
    for (int i = 0; i < s->nevents; i++) {
        sim_ring *r = &s->rings[i];
        sim_event *ev = &s->events[i];
        uint64_t limit = final ? UINT64_MAX : now - (uint64_t)(s->nevents - 1 - i) * s->read_skew;
        uint64_t aux_end = ev->tail;
        while (r->head < r->recs.n && r->recs.v[r->head].time <= limit) {
            sim_rec *rec = &r->recs.v[r->head];
            if (rec->type == SIM_R_AUX && !s->snapshot) {
                sim_auxrec *a = &s->auxrecs.v[rec->aux_index];
                if (a->offset + a->size > aux_end) aux_end = a->offset + a->size;
            }
            if (rec->type == SIM_R_AUX && rec->time > s->max_aux_time_written)
                s->max_aux_time_written = rec->time;
            if (rec->type == SIM_R_MMAP2 && rec->time < s->max_aux_time_written)
                s->mmap2_after_aux++;
            if (s->w && sim_writer_record(s->w, rec)) S->err = EK_ERR_IO;
            r->head++;
            wrote = 1;
        }
        if (!s->snapshot && aux_end > ev->tail) {
            uint64_t n = aux_end - ev->tail;
            uint64_t at = ev->tail & (ev->ring_size - 1);
            uint64_t n1 = ev->ring_size - at < n ? ev->ring_size - at : n;
            if (s->w && sim_writer_auxtrace(s->w, ev->tail, ev->ring + at, n1, ev->ring, n - n1,
                                            ev->idx, ev->tid, ev->cpu))
                S->err = EK_ERR_IO;
            ev->tail = aux_end;
            wrote = 1;
        }
        if (s->snapshot && final && ev->head) {
            /* the snapshot: the newest ring_size bytes of the ring */
            uint64_t n = ev->head < ev->ring_size ? ev->head : ev->ring_size;
            uint64_t st = ev->head - n;
            uint64_t at = st & (ev->ring_size - 1);
            uint64_t n1 = ev->ring_size - at < n ? ev->ring_size - at : n;
            if (s->w && sim_writer_auxtrace(s->w, st, ev->ring + at, n1, ev->ring, n - n1, ev->idx,
                                            ev->tid, ev->cpu))
                S->err = EK_ERR_IO;
            /* perf 6.1 queues an AUX record of an OVERWRITE ring only if its clamped range lies
             * inside this buffer */
            uint64_t size = (n + 7) & ~7ull;
            for (size_t k = 0; k < s->auxrecs.n; k++) {
                sim_auxrec *a = &s->auxrecs.v[k];
                if (a->queue != ev->idx || !a->size) continue;
                uint64_t sz = a->size < size ? a->size : size;
                uint64_t off = a->offset - sz;
                a->in_snapshot = off >= st && off + sz <= st + size && sz == a->size;
            }
            ev->tail = ev->head;
            wrote = 1;
        }
        if (r->head == r->recs.n) {
            r->recs.n = 0;
            r->head = 0;
        }
    }
    if (wrote && s->w && sim_writer_round(s->w)) S->err = EK_ERR_IO;
}

/* perf record synthesizes COMM and MMAP2 records for the tasks that exist when it starts. */
static void synth_existing(sim *S, sim_session *s, uint64_t time)
{
    for (size_t i = 0; i < S->nthreads; i++) {
        sim_thread *t = S->threads[i];
        if (t->idle || t->state == SIM_T_DEAD || !sim_session_sees(s, t->proc)) continue;
        int ring = ring_for(s, t, t->cpu);
        if (ring < 0) continue;
        sim_rec r;
        memset(&r, 0, sizeof(r));
        r.type = SIM_R_COMM;
        r.pid = t->proc->pid;
        r.tid = t->tid;
        r.cpu = t->cpu;
        r.time = time;
        r.id = s->events[ring].dummy_id;
        memcpy(r.comm, t->proc->comm, sizeof(r.comm) - 1);
        sim_session_record(S, s, ring, &r);
        if (S->truth) ek_vec_push(&s->known_tids, r.tid);
        if (t->tid != t->proc->pid) continue;
        for (int k = 0; k < t->proc->nmaps; k++) {
            const sim_map *m = &t->proc->maps[k];
            memset(&r, 0, sizeof(r));
            r.type = SIM_R_MMAP2;
            r.misc = 2;
            r.pid = r.tid = t->proc->pid;
            r.cpu = t->cpu;
            r.time = time;
            r.addr = m->start;
            r.len = m->end - m->start;
            r.pgoff = (m->img->seg_off & ~0xFFFull);
            r.img = m->img;
            r.id = s->events[ring].dummy_id;
            sim_session_record(S, s, ring, &r);
        }
    }
}

static void session_start(sim *S, sim_session *s, uint64_t time)
{
    s->started = 1;
    ids_acquire(S, s);
    synth_existing(S, s, time);
    for (int c = 0; c < S->ncpus; c++) {
        sim_thread *t = S->cpus[c].cur;
        if (!event_wants(s, t)) continue;
        sim_etm *e = &S->cpus[c].etm;
        if (e->enabled) continue;
        sim_event *ev = event_for(s, t, c);
        if (ev && !ev->running) event_start(S, s, ev, c, t, time);
    }
    sim_sinks_check(S);
}

static void session_stop(sim *S, sim_session *s, uint64_t time)
{
    for (int c = 0; c < S->ncpus; c++) {
        sim_etm *e = &S->cpus[c].etm;
        if (e->enabled && e->sess == s) event_stop(S, s, e->ev, c, S->cpus[c].cur, time);
    }
    s->stopped = 1;
    ids_release(s);
    sim_sinks_check(S);
}

void sim_sessions_poll(sim *S, uint64_t now)
{
    for (int i = 0; i < S->nsessions; i++) {
        sim_session *s = &S->sessions[i];
        if (!s->started && now >= s->start_time) session_start(S, s, now);
        if (s->started && !s->stopped && s->stop_time && now >= s->stop_time)
            session_stop(S, s, now);
        if (s->started && !s->snapshot && s->read_period && now >= s->next_read) {
            read_pass(S, s, now, 0);
            s->next_read = now + s->read_period;
        }
    }
    /* once per quantum, as the sessions: how far the run is (here rather than in sim_run's
     * loop, where the extra code moved the inlined cpu_run and cost 2% of gen's time) */
    if (S->trace_total - S->progress_told >= SIM_PROGRESS_STEP) sim_progress(S);
}

int sim_sessions_finish(sim *S)
{
    for (int i = 0; i < S->nsessions; i++) {
        sim_session *s = &S->sessions[i];
        if (!s->started) continue;
        if (!s->stopped) session_stop(S, s, S->now);
        read_pass(S, s, S->now, 1);
    }
    return S->err;
}
