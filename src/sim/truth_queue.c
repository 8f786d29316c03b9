/* The ground truth's queues: perf's AUX queues, blocks, packet queues and time-ordered heap,
 * with two policies.
 *
 * perf 6.1 (perf-6.1-expected.txt): the AUX records are queued and split as perf does, decoded
 * per queue in timeless mode (at EXIT records and at the end) or in time order over the
 * timestamp heap; what the decoder had not delivered when perf moves to the next block is
 * lost (it resets OpenCSD per block); the end of the trace is never signalled; without time
 * stamps one sample state serves every trace ID of a queue; elements before a queue's first
 * time stamp are dropped; a context packet gives its thread to the ranges already waiting in
 * the packet queue.
 *
 * A correct decoder (expected-*.txt): the same queues, blocks and heap order (the order in
 * which a decoder that interleaves queues by time stamps hands out samples), but every element
 * a block's bytes hold is delivered, each trace ID keeps its own sample state, elements before
 * the first time stamp come first (they ran first), the ranges before a context packet keep
 * their thread, and the end of every trace source gets its flush (a "tr end" sample). */
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "sim/truth.h"

static tr_tq *get_tq(tr_queue *q, tr_emu *m, int trace_id)
{
    int k = m->timeless && m->view == VIEW_PERF ? 0 : trace_id & 127;
    tr_tq *t = q->tqs[k];
    if (!t) {
        t = calloc(1, sizeof(*t));
        if (!t) {
            m->err = EK_ERR_NOMEM;
            return NULL;
        }
        q->tqs[k] = t;
        t->used = 1;
        t->trace_id = trace_id;
        t->tid = q->tid0;
        t->pid = -1;
        if (m->timeless && q->tid0 != -1) {
            sim_thread *th = sim_find_thread(m->S, q->tid0);
            if (th && th->proc) t->pid = th->proc->pid;
        }
    }
    return t;
}

static int queue_pkt(tr_emu *m, tr_tq *t, const tr_pkt *p)
{
    if (ek_vec_push(&t->q, *p)) {
        m->err = EK_ERR_NOMEM;
        return -1;
    }
    return 0;
}

/* Hand one decoder element to perf's packet queues; returns 1 for OCSD_RESP_WAIT. */
static int feed(tr_emu *m, tr_queue *q, const sim_elem *e)
{
    tr_tq *t = get_tq(q, m, e->trace_id);
    if (!t) return 0;
    t->started = 1;
    /* the trace ID's CPU in the map of the slice's sink; none for raw trace no record ties
     * to a CPU */
    t->cpu = q->raw_nocpu ? -1 : e->cpu;
    tr_pkt p;
    memset(&p, 0, sizeof(p));
    p.cpu = t->cpu;
    p.trace_id = e->trace_id;
    switch (e->kind) {
    case SIM_E_NO_SYNC:
    case SIM_E_TRACE_ON:
        t->cs_ts = t->next_cs_ts = t->instr_count = 0;
        p.type = PT_DISCONT;
        break;
    case SIM_E_RANGE:
        p.type = PT_RANGE;
        p.start = e->start;
        p.end = e->end;
        p.ninstr = e->ninstr;
        p.cls = e->cls;
        p.taken = e->cls != SIM_I_OTHER && e->taken;
        p.map = e->map;
        p.svc_before = e->svc_before;
        p.svc_at_end = e->svc_at_end;
        p.stack = e->stack;
        break;
    case SIM_E_EXCEPTION:
        p.type = PT_EXC;
        p.exc = e->exc;
        break;
    case SIM_E_EXC_RET: p.type = PT_EXC_RET; break;
    case SIM_E_NACC:
        /* the decodable trace ends here (not a packet of perf's queue: perf ignores it) */
        p.type = PT_NACC;
        break;
    case SIM_E_TIMESTAMP: {
        if (m->timeless) return 0;
        if (m->view == VIEW_TRUE) {
            /* the samples that follow carry its time: the CoreSight time converted to perf
             * time where the recording says how, else the time of the AUX record of the
             * block it came in */
            tr_pkt tp = p;
            tp.type = PT_TIME;
            tp.start = m->ts_convert ? sim_clock_time(m->S, e->start) : q->ld->aux_time;
            if (queue_pkt(m, t, &tp)) return 0;
        }
        if (t->cs_ts) {
            t->next_cs_ts = e->start;
            return 0;
        }
        if (!e->start || t->instr_count > e->start)
            t->cs_ts = 0;
        else
            t->cs_ts = e->start - t->instr_count;
        t->next_cs_ts = e->start;
        t->instr_count = 0;
        q->pending_chan = e->trace_id;
        return 1;
    }
    case SIM_E_CONTEXT: {
        /* perf takes the thread from CONTEXTIDR_EL1 only when the context ID is traced */
        if (!(m->s->configr & (EK_TRCCONFIGR_CID | EK_TRCCONFIGR_VMID | EK_TRCCONFIGR_VMIDOPT)))
            return 0;
        int tid = (int)e->start;
        t->cs_ts = t->next_cs_ts = t->instr_count = 0;
        if (m->view == VIEW_PERF) {
            /* perf switches the thread in the decoder callback, before the ranges already
             * waiting in the packet queue are turned into samples */
            tr_set_tid(m, t, tid);
            return 0;
        }
        p.type = PT_CTX;
        p.start = (uint64_t)tid;
        break;
    }
    default: return 0;
    }
    if (queue_pkt(m, t, &p)) return 0;
    if (p.type != PT_CTX && p.type != PT_NACC) t->nreal++;
    int wait = t->nreal == 1023;
    if (p.type == PT_RANGE && !m->timeless && !wait) {
        t->instr_count += e->ninstr;
        if (t->cs_ts) {
            t->cs_ts = t->next_cs_ts;
            t->next_cs_ts += t->instr_count;
            t->instr_count = 0;
            q->pending_chan = e->trace_id;
            return 1;
        }
    }
    return wait;
}

static int get_block(tr_emu *m, tr_queue *q)
{
    while (!q->buf_len) {
        if (q->cur >= q->slices.n) return 0;
        q->ld = &q->slices.v[q->cur++];
        q->ei = 0;
        q->buf_len = q->ld->len;
        for (int id = 0; id < 128; id++)
            if (q->tqs[id]) q->tqs[id]->started = 0;
        /* a new buffer: the decoder starts from reset; perf's thread per trace ID stays */
        tr_decoder *d = &m->dec;
        d->cache = m->view == VIEW_PERF ? &q->cache : NULL;
        for (int id = 0; id < 128; id++)
            d->st[id].tid = q->tqs[id] ? q->tqs[id]->tid : q->tid0;
        d->global_tid = q->tqs[0] ? q->tqs[0]->tid : q->tid0;
        int err = tr_decode_ops(d, q->ld->ops, &q->el);
        /* perf's decoder reads the module's code (and so loads its symbols) when it gets there
         * in this block, not before */
        q->kmod_read = d->kmod_read;
        if (err) m->err = err;
        if (m->view == VIEW_TRUE && q->raw_nocpu)
            /* one raw source: whichever CPU wrote a block, a decoder of this queue has one
             * stream (raw trace carries no trace ID) */
            for (size_t i = 0; i < q->el.n; i++)
                q->el.v[i].trace_id = (uint8_t)q->raw_key;
        if (m->view == VIEW_PERF && !q->ld->formatted)
            /* perf 6.1 builds the single decoder of an unformatted queue from the metadata of
             * the first CPU: every element carries that CPU's trace ID */
            for (size_t i = 0; i < q->el.n; i++) {
                q->el.v[i].trace_id = m->S->cpus[0].etm.cfg.trace_id;
                q->el.v[i].cpu = 0;
            }
    }
    return 1;
}

static void decode_block(tr_emu *m, tr_queue *q)
{
    const sim_elem_vec *el = &q->el;
    while (q->ei < el->n) {
        const sim_elem *e = &el->v[q->ei++];
        /* perf's decoder got past its first read of the module's code: symbols loaded */
        if (q->ei > q->kmod_read) m->dec.kmod_loaded = 1;
        if (feed(m, q, e)) {
            if (m->view == VIEW_TRUE) {
                /* a correct decoder delivers everything the block's bytes hold */
                q->buf_len = q->ei < el->n;
                return;
            }
            /* bytes consumed: up to this byte (raw) or to the end of its frame (formatted);
             * elements still pending for consumed bytes are lost if nothing is left, because
             * the next buffer starts with a decoder reset */
            uint64_t used = q->ld->formatted ? (e->gen / 16 + 1) * 16 : e->gen + 1;
            q->buf_len = q->ld->len > used ? q->ld->len - used : 0;
            if (!q->buf_len && q->kmod_read != SIZE_MAX) m->dec.kmod_loaded = 1;
            return;
        }
    }
    q->buf_len = 0;
    if (q->kmod_read != SIZE_MAX) m->dec.kmod_loaded = 1; /* the whole block is decoded */
}

static void process_all(tr_emu *m, tr_queue *q)
{
    for (int id = 0; id < 128; id++)
        if (q->tqs[id]) tr_process_tq(m, q->tqs[id]);
}

/* The end of the trace: a correct decoder tells its sample synthesis that each trace source
 * ended (perf 6.1 never does): the last range of each gets its "tr end" sample. With time
 * stamps, perf's last-branch flush of the final block comes first (timeless recordings have it
 * after every block). A decoder would also output the time stamps still pending at the end
 * (OpenCSD's end of trace); the simulated trace units end each run with a P0 element after
 * their last time stamp (no scenario, not even with sync_period = 64, leaves one pending), so
 * this does not model them. */
static void end_flush(tr_emu *m, tr_queue *q)
{
    for (int id = 0; id < 128; id++) {
        tr_tq *t = q->tqs[id];
        if (!t) continue;
        if (!m->timeless) tr_end_block(m, t);
        tr_pkt p;
        memset(&p, 0, sizeof(p));
        p.cpu = t->cpu;
        p.trace_id = id;
        p.type = PT_DISCONT;
        if (queue_pkt(m, t, &p)) return;
        tr_process_tq(m, t);
    }
}

static void run_timeless(tr_emu *m, tr_queue *q)
{
    tr_tq *t = m->view == VIEW_PERF ? get_tq(q, m, 0) : NULL;
    q->decoded = 1;
    if (m->view == VIEW_PERF && !t) return;
    while (get_block(m, q)) {
        do {
            decode_block(m, q);
            if (m->view == VIEW_PERF)
                tr_process_tq(m, t);
            else
                process_all(m, q);
        } while (q->buf_len);
        /* perf's cs_etm__end_block after every block, for the trace IDs it had */
        for (int id = 0; id < 128; id++)
            if (q->tqs[id] && q->tqs[id]->started) tr_end_block(m, q->tqs[id]);
    }
    if (m->view == VIEW_TRUE) end_flush(m, q);
}

typedef struct heapi {
    unsigned q;
    int chan;
    uint64_t ord;
} heapi;

typedef struct heap {
    heapi *v;
    unsigned n, cap;
} heap;

static void heapify(heapi *a, unsigned pos, heapi x)
{
    while (pos) {
        unsigned parent = (pos - 1) >> 1;
        if (a[parent].ord <= x.ord) break;
        a[pos] = a[parent];
        pos = parent;
    }
    a[pos] = x;
}

static int heap_add(heap *h, unsigned q, int chan, uint64_t ord)
{
    if (h->n == h->cap) {
        unsigned nc = h->cap ? h->cap * 2 : 32;
        heapi *v = realloc(h->v, nc * sizeof(*v));
        if (!v) return EK_ERR_NOMEM;
        h->v = v;
        h->cap = nc;
    }
    heapi x = {q, chan, ord};
    heapify(h->v, h->n++, x);
    return 0;
}

static void heap_pop(heap *h)
{
    unsigned cnt = h->n, pos = 0;
    if (!cnt) return;
    h->n--;
    heapi *a = h->v;
    for (;;) {
        unsigned l = (pos << 1) + 1;
        if (l >= cnt) break;
        unsigned r = l + 1;
        if (r >= cnt) {
            a[pos] = a[l];
            return;
        }
        if (a[l].ord < a[r].ord) {
            a[pos] = a[l];
            pos = l;
        } else {
            a[pos] = a[r];
            pos = r;
        }
    }
    heapify(a, pos, a[cnt - 1]);
}

static uint64_t take_ts(tr_queue *q, int *chan)
{
    if (!q->pending_chan) return 0;
    *chan = q->pending_chan;
    q->pending_chan = 0;
    return q->tqs[*chan & 127] ? q->tqs[*chan & 127]->cs_ts : 0;
}

/* perf's cs_etm__clear_all_traceid_queues, or (before the first time stamp) dropping */
static void clear_all(tr_emu *m, tr_queue *q, int process)
{
    for (int id = 0; id < 128; id++) {
        tr_tq *t = q->tqs[id];
        if (!t) continue;
        if (process) {
            tr_process_tq(m, t);
        } else {
            /* packets decoded before the first timestamp are dropped; a thread change among
             * them still applies */
            for (size_t i = t->qhead; i < t->q.n; i++)
                if (t->q.v[i].type == PT_CTX) tr_set_tid(m, t, (int)t->q.v[i].start);
            t->q.n = t->qhead = 0;
            t->nreal = 0;
        }
    }
}

static void run_timed(tr_emu *m)
{
    heap h = {0};
    for (int i = 0; i < m->nq; i++) {
        tr_queue *q = &m->qs[i];
        for (;;) {
            if (!get_block(m, q)) break;
            decode_block(m, q);
            int chan = 0;
            uint64_t ts = take_ts(q, &chan);
            if (ts) {
                if (heap_add(&h, (unsigned)i, chan, ts)) m->err = EK_ERR_NOMEM;
                break;
            }
            /* perf drops what comes before the first time stamp; it ran first */
            clear_all(m, q, m->view == VIEW_TRUE);
        }
    }
    while (h.n && !m->err) {
        heapi top = h.v[0];
        heap_pop(&h);
        tr_queue *q = &m->qs[top.q];
        if (q->tqs[top.chan & 127]) tr_process_tq(m, q->tqs[top.chan & 127]);
        for (;;) {
            if (!get_block(m, q)) {
                /* the queue's end: what the other trace IDs still hold */
                if (m->view == VIEW_TRUE) clear_all(m, q, 1);
                break;
            }
            decode_block(m, q);
            int chan = 0;
            uint64_t ts = take_ts(q, &chan);
            if (!ts) {
                clear_all(m, q, 1);
                continue;
            }
            if (heap_add(&h, top.q, chan, ts)) m->err = EK_ERR_NOMEM;
            break;
        }
    }
    if (m->view == VIEW_TRUE)
        for (int i = 0; i < m->nq; i++)
            end_flush(m, &m->qs[i]);
    free(h.v);
}

static int cmp_exit(const void *a, const void *b)
{
    const sim_rec *x = a, *y = b;
    if (x->time != y->time) return x->time < y->time ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* the output files of a policy: perf 6.1 branches only (and its answers to the --itrace
 * letters c, r and s, which its cs-etm ignores); the truth every lane */
static int open_lanes(tr_emu *m, const char *dir, const char *sfx, int snapshot)
{
    static const struct {
        int kind;
        const char *name;
        int b, i, l;
        uint64_t period;
        unsigned lb_sz;
        uint32_t filter; /* c: calls, async, trace end; r: returns, trace begin (Intel PT's) */
        uint64_t skip;
        const char *perf_name; /* perf 6.1's file (NULL: none) */
    } spec[] = {
        {LANE_BRANCHES, "expected-branches", 1, 0, 0, 0, 0, 0, 0, "perf-6.1-expected"},
        {LANE_INSNS, "expected-instructions", 0, 1, 0, 100, 0, 0, 0, NULL},
        {LANE_LBR, "expected-lbr", 0, 1, 1, 64, 16, 0, 0, NULL},
        {LANE_STACKS, "expected-callstacks", 1, 0, 0, 0, 0, 0, 0, NULL},
        {LANE_TIMES, "expected-times", 1, 0, 0, 0, 0, 0, 0, NULL},
        {LANE_CALLS, "expected-calls", 1, 0, 0, 0, 0, (1u << 1) | (1u << 5) | (1u << 9), 0,
         "perf-6.1-expected-calls"},
        {LANE_RETURNS, "expected-returns", 1, 0, 0, 0, 0, (1u << 2) | (1u << 8), 0,
         "perf-6.1-expected-returns"},
        {LANE_SKIP, "expected-skip", 1, 1, 0, 100, 0, 0, SIM_ITRACE_SKIP, "perf-6.1-expected-skip"},
    };
    for (size_t i = 0; i < sizeof(spec) / sizeof(spec[0]); i++) {
        if (m->view == VIEW_PERF && !spec[i].perf_name) continue;
        if (snapshot && spec[i].kind != LANE_BRANCHES) continue;
        if (m->timeless && spec[i].kind == LANE_TIMES) continue; /* samples have no time */
        if (spec[i].kind >= LANE_CALLS && !m->S->itrace_lanes) continue;
        tr_lane *l = &m->lanes[m->nlanes++];
        l->kind = spec[i].kind;
        l->branches = spec[i].b;
        l->instructions = spec[i].i;
        l->last_branch = spec[i].l;
        l->period = spec[i].period;
        l->lb_sz = spec[i].lb_sz;
        if (m->view == VIEW_TRUE) {
            l->filter = spec[i].filter;
            l->skip = spec[i].skip;
        }
        size_t n = strlen(dir) + strlen(spec[i].name) + strlen(sfx) + 32;
        char *path = malloc(n);
        if (!path) return EK_ERR_NOMEM;
        snprintf(path, n, "%s/%s%s.txt", dir,
                 m->view == VIEW_PERF ? spec[i].perf_name : spec[i].name, sfx);
        l->f = sim_fopen(path);
        free(path);
        if (!l->f) return EK_ERR_IO;
    }
    return 0;
}

static int emulate(sim *S, sim_session *s, int view, const char *dir, const char *sfx, int snapshot,
                   uint64_t *lines)
{
    tr_emu *m = calloc(1, sizeof(*m));
    if (!m) return EK_ERR_NOMEM;
    m->S = S;
    m->s = s;
    m->view = view;
    m->timeless = !(s->attr_config & (1u << 28));
    m->ts_convert = view == VIEW_TRUE && sim_session_ts_convertible(S, s);
    m->dec.S = S;
    m->dec.s = s;
    m->dec.view = view;
    m->dec.timeless = m->timeless;
    m->dec.map_time = ~0ull;
    int err = open_lanes(m, dir, sfx, snapshot);
    for (int i = 0; i < S->nimages && !err; i++)
        err = tr_load_syms(&S->images[i], &m->syms[i]);
    for (size_t i = 0; i < s->known_tids.n; i++)
        if (s->known_tids.v[i] >= 0 && s->known_tids.v[i] < (1 << 16))
            m->known[s->known_tids.v[i]] = 1;
    /* queue the AUX records as perf 6.1 does: file order, into the AUXTRACE buffer's queue */
    m->nq = s->nevents;
    m->qs = calloc((size_t)m->nq + 1, sizeof(tr_queue));
    if (!m->qs) err = EK_ERR_NOMEM;
    for (int i = 0; i < m->nq && !err; i++) {
        m->qs[i].tid0 = s->events[i].tid;
        m->qs[i].kmod_read = SIZE_MAX;
    }
    size_t *order = calloc(s->auxrecs.n + 1, sizeof(size_t));
    if (!order) err = EK_ERR_NOMEM;
    size_t norder = 0;
    for (size_t i = 0; i < s->auxrecs.n && !err; i++)
        if (s->auxrecs.v[i].size && s->auxrecs.v[i].file_off) order[norder++] = i;
    for (size_t i = 1; i < norder; i++) {
        size_t k = order[i], j = i;
        while (j > 0 && s->auxrecs.v[order[j - 1]].file_off > s->auxrecs.v[k].file_off) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = k;
    }
    for (size_t i = 0; i < norder && !err; i++) {
        sim_auxrec *a = &s->auxrecs.v[order[i]];
        if (s->snapshot && !a->in_snapshot) continue;
        /* per-thread: perf 6.1 matches an AUX record to the AUXTRACE buffers of the thread
         * its sample_id names (cs_etm__queue_aux_records_cb); one the kernel emitted while
         * another thread was current on the CPU (a TRBE's buffer-full interrupt after a
         * switch, arbitration-stress --seed 7) finds no buffer, and perf skips its data
         * although the event's buffer holds it. The record's sample ID names its event, and
         * so its AUX ring: a correct decoder decodes it there. */
        if (view == VIEW_PERF && s->events[a->queue].cpu < 0 && a->tid != s->events[a->queue].tid)
            continue;
        /* raw trace in a per-thread queue: no record says which CPU's trace unit wrote it
         * (perf 6.1's per-thread records carry no CPU). A correct decoder decodes it with the
         * configuration every CPU shares (exact: it is the one the trace unit used), or with
         * the one the user names (--raw-cpu, script-options.txt) for a program that ran on
         * CPUs configured alike; otherwise it says so and skips it. Its samples carry no CPU
         * (perf 6.1 uses CPU 0's configuration and prints cpu 0). */
        if (view == VIEW_TRUE && !a->formatted && s->events[a->queue].cpu < 0) {
            int shared = 1;
            for (int c = 1; c < S->ncpus; c++)
                if (!sim_etm_same_decoding(S, s, 0, c)) shared = 0;
            int cfg_cpu = shared ? 0 : s->raw_cpu_known ? s->raw_cpu : -1;
            if (cfg_cpu < 0) continue;
            if (!sim_etm_same_decoding(S, s, cfg_cpu, a->cpu)) {
                err = EK_ERR_ARG; /* the scenario's --raw-cpu does not describe this trace */
                break;
            }
            m->qs[a->queue].raw_nocpu = 1;
            m->qs[a->queue].raw_key = 0x10 + 2 * cfg_cpu;
        }
        tr_slice sl = {&a->ops, a->size, a->formatted, a->time};
        if (ek_vec_push(&m->qs[a->queue].slices, sl)) err = EK_ERR_NOMEM;
    }
    free(order);
    if (!err) {
        if (m->timeless) {
            /* decode at every EXIT (in time order) the queues of that thread, then the rest */
            if (s->exits.n) qsort(s->exits.v, s->exits.n, sizeof(sim_rec), cmp_exit);
            for (size_t i = 0; i < s->exits.n; i++)
                for (int k = 0; k < m->nq; k++) {
                    tr_queue *q = &m->qs[k];
                    if (q->decoded || !q->slices.n) continue;
                    tr_tq *t0 = m->view == VIEW_PERF ? get_tq(q, m, 0) : NULL;
                    int qtid = t0 ? t0->tid : q->tid0;
                    if (qtid == s->exits.v[i].tid) {
                        m->dec.map_time = s->exits.v[i].time;
                        run_timeless(m, q);
                    }
                }
            m->dec.map_time = ~0ull;
            for (int k = 0; k < m->nq; k++)
                if (!m->qs[k].decoded && m->qs[k].slices.n) run_timeless(m, &m->qs[k]);
        } else {
            run_timed(m);
        }
    }
    tr_lanes_flush(m, 1);
    *lines = m->nlanes ? m->lanes[0].lines : 0;
    for (int i = 0; i < m->nlanes; i++) {
        tr_lane *l = &m->lanes[i];
        if (l->f && sim_fclose(l->f) && !err) err = EK_ERR_IO;
        ek_sbuf_free(&l->out);
    }
    for (int i = 0; i < m->nq; i++) {
        ek_vec_free(&m->qs[i].slices);
        ek_vec_free(&m->qs[i].el);
        for (int k = 0; k < 128; k++)
            if (m->qs[i].tqs[k]) {
                ek_vec_free(&m->qs[i].tqs[k]->q);
                free(m->qs[i].tqs[k]);
            }
    }
    free(m->qs);
    for (int i = 0; i < SIM_MAX_IMAGES; i++) {
        free(m->syms[i].v);
        free(m->syms[i].names);
    }
    if (!err) err = m->err;
    free(m);
    return err;
}

int sim_truth_write(sim *S, sim_session *s, const char *dir, int index)
{
    char sfx[16] = "";
    if (index) snprintf(sfx, sizeof(sfx), "-%d", index);
    int snapshot = S->sc->snapshot_folder;
    int err = emulate(S, s, VIEW_TRUE, dir, sfx, snapshot, &s->expected_lines);
    if (err || snapshot) return err;
    if (s->header_version > 1) {
        /* perf 6.1 knows AUXTRACE_INFO up to version 1 and refuses the whole file */
        size_t n = strlen(dir) + 48;
        char *path = malloc(n);
        if (!path) return EK_ERR_NOMEM;
        snprintf(path, n, "%s/perf-6.1-expected%s.txt", dir, sfx);
        FILE *f = sim_fopen(path);
        free(path);
        s->perf_lines = 0;
        return f && !sim_fclose(f) ? 0 : EK_ERR_IO;
    }
    return emulate(S, s, VIEW_PERF, dir, sfx, 0, &s->perf_lines);
}
