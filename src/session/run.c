/* Running a session: every queue decoded on a thread of its own (qdecode.c), the queues'
 * outputs put in perf's order (queue after queue without time stamps; perf's heap over their
 * epochs with them) and handed to the consumer. */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "etmkit/etmkit.h"
#include "session/session_int.h"


static void collect_stats(ek_session *s)
{
    size_t nq = ek_perf_queues_count(s->pq);
    memset(&s->st, 0, sizeof s->st);
    s->st.queues = nq;
    size_t nsl = 0;
    const ek_perf_slice *sl = ek_perf_queues_slices(s->pq, &nsl);
    s->st.slices = nsl;
    for (size_t i = 0; i < nsl; i++)
        if (sl[i].problems & EK_SLICE_NO_DATA)
            s->st.slices_no_data++;
    for (size_t i = 0; i < s->nqres; i++) {
        const qresult *r = &s->qres[i];
        s->st.trace_bytes += r->trace_bytes;
        s->st.trace_bytes_decoded += r->decoded_bytes;
        s->st.packets += r->packets;
        s->st.elements += r->elements;
        s->st.instructions += r->instructions;
        s->st.samples_branches += r->branches;
        s->st.samples_instructions += r->instrs_samples;
        s->st.nacc += r->nacc;
        s->st.decode_errors += r->errors;
    }
}

/* perf's queue number of a queue: the mmap index (idx) of its AUXTRACE buffers. */
static uint32_t queue_idx(const ek_session *s, size_t qi, uint32_t *tid, int *has_tid)
{
    const ek_perf_queue *q = ek_perf_queue_at(s->pq, qi);
    size_t nb = 0;
    const ek_perf_auxtrace_rec *b = ek_perf_auxtrace_records(s->pf, &nb);
    *has_tid = 0;
    for (size_t k = 0; k < q->nslices; k++) {
        int64_t bi = q->slices[k].buffer;
        if (bi >= 0 && (size_t)bi < nb) {
            *tid = b[bi].tid;
            *has_tid = 1;
            return b[bi].idx;
        }
    }
    return q->per_thread ? q->tid : (uint32_t)q->cpu;
}

typedef struct qorder {
    size_t qi;
    uint32_t idx;
    uint64_t exit_key; /* timeless: perf decodes a thread's queue at its EXIT */
    int hidden;        /* its samples are not output (a CPU filter without its CPU) */
} qorder;

static int qorder_cmp(const void *a, const void *b)
{
    const qorder *x = a, *y = b;
    if (x->exit_key != y->exit_key)
        return x->exit_key < y->exit_key ? -1 : 1;
    if (x->idx != y->idx)
        return x->idx < y->idx ? -1 : 1;
    return x->qi < y->qi ? -1 : x->qi > y->qi;
}

/* perf leaves the AUX buffers of CPUs a CPU filter does not list out of its queues
 * (auxtrace.c, filter_cpu): their samples are not output, and the other queues interleave
 * among themselves. They are decoded all the same, for the account of the trace. */
static int queue_hidden(const ek_session *s, size_t qi)
{
    const ek_sample_filter *f = s->o.filter;
    const ek_perf_queue *q = ek_perf_queue_at(s->pq, qi);
    if (!f || !f->ncpus || q->per_thread || q->cpu < 0) return 0;
    ek_sample smp;
    memset(&smp, 0, sizeof smp);
    smp.cpu = q->cpu;
    ek_sample_filter only_cpus = {.cpus = f->cpus, .ncpus = f->ncpus};
    return !ek_sample_filter_match(&only_cpus, &smp, NULL);
}

/* The order perf outputs queues in (timeless: at the EXIT of the queue's thread, then the rest;
 * with time stamps the heap interleaves them, and this order breaks ties at the end). */
static qorder *queue_order(ek_session *s, size_t nq)
{
    qorder *o = calloc(nq ? nq : 1, sizeof *o);
    if (!o)
        return NULL;
    for (size_t i = 0; i < nq; i++) {
        uint32_t tid = 0;
        int has_tid = 0;
        o[i].qi = i;
        o[i].idx = queue_idx(s, i, &tid, &has_tid);
        o[i].exit_key = UINT64_MAX;
        o[i].hidden = queue_hidden(s, i);
        if (s->timeless && has_tid && (int32_t)tid > 0) {
            const as_thread *t = as_thread_get(s->as, (int32_t)tid);
            if (t && t->t_exit != AS_TIME_MAX)
                o[i].exit_key = t->t_exit;
        }
    }
    if (nq > 1)
        qsort(o, nq, sizeof *o, qorder_cmp);
    return o;
}

/* perf's auxtrace heap: a binary min-heap on the ordinal (ties resolve as perf's do). */
typedef struct hitem {
    size_t q;
    uint64_t key;
} hitem;

static void heap_sift_up(hitem *a, size_t pos, hitem x)
{
    while (pos) {
        size_t parent = (pos - 1) >> 1;
        if (a[parent].key <= x.key)
            break;
        a[pos] = a[parent];
        pos = parent;
    }
    a[pos] = x;
}

static void heap_pop(hitem *a, size_t *n)
{
    size_t cnt = *n, pos = 0;
    if (!cnt)
        return;
    (*n)--;
    for (;;) {
        size_t l = (pos << 1) + 1;
        if (l >= cnt)
            break;
        size_t r = l + 1;
        if (r >= cnt) {
            a[pos] = a[l];
            return;
        }
        if (a[l].key < a[r].key) {
            a[pos] = a[l];
            pos = l;
        } else {
            a[pos] = a[r];
            pos = r;
        }
    }
    heap_sift_up(a, pos, a[cnt - 1]);
}

typedef struct writer {
    const ek_consumer *c; /* staged: put, unit_len */
    int rc;
    const qidle *idle; /* progress, while the writer waits (NULL: none) */
    /* --itrace=sN: samples still to leave out. perf counts them over the session, in the
     * order it outputs them, every kind together (its Intel PT decoder: one num_events per
     * session; perf 6.1's cs-etm ignores 's'), so they are counted here, where the queues'
     * outputs are put in that order -- a decoder's own count would skip N per trace source */
    uint64_t skip;
    /* without time stamps, a staged consumer's encode done here (see defer_pays): the queue's
     * records are encoded into units before they are put; NULL: the data are the units */
    struct defer *defer;
} writer;

static void defer_begin(struct defer *d);
static int defer_end(struct defer *d, int put);

/* Put out data (whole units), the first w->skip of them left out. */
static int put_skipping(writer *w, const char *data, size_t len)
{
    while (w->skip && len) {
        size_t n = w->c->unit_len ? w->c->unit_len(w->c->ctx, data, len) : 0;
        if (!n || n > len) return EK_ERR_FORMAT;
        data += n;
        len -= n;
        w->skip--;
    }
    return len ? w->c->put(w->c->ctx, data, len) : 0;
}

typedef struct run {
    ek_session *s;
    const qfmt *fmt;
    qout *outs;
    qorder *order;
    size_t nq;
    qpick pick;     /* the next queue (qpick_take; without time stamps, by order's index) */
    unsigned lanes; /* workers started so far */
    pthread_mutex_t mu;
    int rc;
    qtok *tok; /* -j N: run tokens (NULL: none) */
} run;

static void *worker(void *arg)
{
    run *r = arg;
    pthread_mutex_lock(&r->mu);
    const int in_order = r->lanes++ == 0;
    pthread_mutex_unlock(&r->mu);
    for (;;) {
        pthread_mutex_lock(&r->mu);
        size_t k = qpick_take(&r->pick, in_order);
        pthread_mutex_unlock(&r->mu);
        if (k >= r->nq)
            break;
        size_t qi = r->order[k].qi;
        static const qfmt none = {NULL, 0, 0, 0, NULL};
        qtok_get(r->tok);
        int rc = qdecode_run(r->s, qi, r->order[k].hidden ? &none : r->fmt, &r->outs[qi],
                             &r->s->qres[qi]);
        qtok_put(r->tok);
        if (rc) {
            pthread_mutex_lock(&r->mu);
            if (!r->rc)
                r->rc = rc;
            pthread_mutex_unlock(&r->mu);
        }
    }
    return NULL;
}

/* Write queue o's output from position *si (a segment of its first chunk) up to the next epoch
 * head -- a head at the start itself is written when at_head. Returns 1 with that head's key
 * in *key, or 0 at the queue's end. */
static int write_until_head(qout *o, size_t *si, writer *w, int at_head, uint64_t *key)
{
    int first = 1;
    for (;;) {
        qchunk *c = qout_peek(o, w->idle);
        if (!c)
            return 0;
        while (*si < c->nsegs) {
            const qseg *g = &c->segs[*si];
            if (g->head && !(first && at_head)) {
                *key = g->key;
                return 1;
            }
            first = 0;
            size_t end = *si + 1 < c->nsegs ? c->segs[*si + 1].off : c->len;
            if (end > g->off && !w->rc)
                w->rc = put_skipping(w, c->data + g->off, end - g->off);
            (*si)++;
        }
        int last = c->last;
        qout_pop(o);
        *si = 0;
        if (last)
            return 0;
    }
}

/* Tell the caller how far decoding got, when that changed (the writer's thread only). */
static void progress_tell(void *ctx)
{
    ek_session *s = ctx;
    uint64_t done = atomic_load_explicit(&s->progress_done, memory_order_relaxed);
    if (done > s->progress_total) done = s->progress_total;
    if (done != s->progress_told) {
        s->progress_told = done;
        s->o.progress(s->o.progress_ctx, done, s->progress_total);
    }
}

static int run_all(ek_session *s, const qfmt *fmt, writer *w)
{
    if (s->ran)
        return EK_ERR_ARG;
    s->ran = 1;
    size_t nq = ek_perf_queues_count(s->pq);
    s->qres = calloc(nq ? nq : 1, sizeof *s->qres);
    qout *outs = calloc(nq ? nq : 1, sizeof *outs);
    qorder *order = queue_order(s, nq);
    if (!s->qres || !outs || !order) {
        free(outs);
        free(order);
        return EK_ERR_NOMEM;
    }
    s->nqres = nq;
    for (size_t i = 0; i < nq; i++)
        qout_init(&outs[i], QOUT_LIMIT);
    /* where each queue starts reading the file (qblock_mark); NULL: no release behind them */
    s->rel_pos = malloc((nq ? nq : 1) * sizeof *s->rel_pos);
    if (s->rel_pos) {
        pthread_mutex_init(&s->rel_mu, NULL);
        s->rel_upto = 0;
        for (size_t i = 0; i < nq; i++) {
            const ek_perf_queue *q = ek_perf_queue_at(s->pq, i);
            s->rel_pos[i] = q && q->nslices ? q->slices[0].data_offset : UINT64_MAX;
        }
    }
    /* progress: the bytes every queue's decoder will take (load_block), reported by the
     * decoders as each slice is done */
    qidle idle = {progress_tell, s};
    if (s->o.progress) {
        for (size_t i = 0; i < nq; i++) {
            const ek_perf_queue *q = ek_perf_queue_at(s->pq, i);
            for (size_t k = 0; k < q->nslices; k++) {
                size_t len = 0;
                ek_perf_slice_data(s->pf, &q->slices[k], &len);
                s->progress_total += len;
            }
        }
        s->o.progress(s->o.progress_ctx, 0, s->progress_total);
        w->idle = &idle;
    }
    run r;
    memset(&r, 0, sizeof r);
    r.s = s;
    r.fmt = fmt;
    r.outs = outs;
    r.order = order;
    r.nq = nq;
    pthread_mutex_init(&r.mu, NULL);
    /* without time stamps, the longest queues first (qpick_take); out of memory: in order */
    r.pick.nq = nq;
    if (s->timeless && nq > 1) {
        r.pick.taken = calloc(nq, 1);
        r.pick.bytes = calloc(nq, sizeof *r.pick.bytes);
        if (!r.pick.taken || !r.pick.bytes) {
            free(r.pick.taken);
            free(r.pick.bytes);
            r.pick.taken = NULL;
            r.pick.bytes = NULL;
        }
        for (size_t k = 0; r.pick.taken && k < nq; k++) {
            const ek_perf_queue *q = ek_perf_queue_at(s->pq, order[k].qi);
            for (size_t i = 0; i < q->nslices; i++)
                r.pick.bytes[k] += q->slices[i].data_size;
        }
    }
    /* -j N: N threads at work at once, the writer (this thread) among them */
    qtok tok;
    if (s->o.threads) {
        pthread_mutex_init(&tok.mu, NULL);
        pthread_cond_init(&tok.cv, NULL);
        tok.free = s->o.threads;
        r.tok = &tok;
        for (size_t i = 0; i < nq; i++)
            outs[i].tok = &tok;
    }
    unsigned nt = s->o.threads;
    if (!nt) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        nt = c > 0 ? (unsigned)c : 1;
    }
    if (nt > nq || !s->timeless)
        nt = (unsigned)nq; /* with time stamps the writer needs every queue's next epoch */
    pthread_t *th = calloc(nt ? nt : 1, sizeof *th);
    unsigned started = 0;
    for (unsigned i = 0; th && i < nt; i++)
        if (!pthread_create(&th[i], NULL, worker, &r))
            started++;
        else
            break;
    if (!started && nq)
        worker(&r); /* no threads: decode here, then write */

    qtok_get(r.tok);
    size_t *pos = calloc(nq ? nq : 1, sizeof *pos);
    if (!pos) {
        w->rc = EK_ERR_NOMEM;
    } else if (s->timeless) {
        /* queue after queue */
        uint64_t key;
        for (size_t k = 0; k < nq; k++) {
            size_t qi = order[k].qi;
            const int defer = w->defer && !order[k].hidden; /* (hidden: no output) */
            if (defer) defer_begin(w->defer);
            while (write_until_head(&outs[qi], &pos[qi], w, 1, &key))
                ;
            if (defer) {
                int rc = defer_end(w->defer, !w->rc); /* (nothing more put after an error) */
                if (!w->rc) w->rc = rc;
            }
        }
    } else {
        /* perf's heap over the queues' epochs; the tails (key UINT64_MAX: the final
         * last-branch flush) after it, queue by queue */
        hitem *heap = calloc(nq ? nq : 1, sizeof *heap);
        qorder *byidx = malloc((nq ? nq : 1) * sizeof *byidx);
        size_t hn = 0;
        uint64_t key;
        if (!heap || !byidx) {
            w->rc = EK_ERR_NOMEM;
        } else {
            memcpy(byidx, order, nq * sizeof *byidx);
            for (size_t k = 0; k < nq; k++)
                byidx[k].exit_key = 0;
            if (nq > 1)
                qsort(byidx, nq, sizeof *byidx, qorder_cmp);
            /* perf fills the heap in queue-number order */
            for (size_t k = 0; k < nq; k++) {
                size_t qi = byidx[k].qi;
                if (write_until_head(&outs[qi], &pos[qi], w, 0, &key) && key != UINT64_MAX) {
                    hitem x = {qi, key};
                    heap_sift_up(heap, hn++, x);
                }
            }
            while (hn) {
                hitem top = heap[0];
                heap_pop(heap, &hn);
                if (write_until_head(&outs[top.q], &pos[top.q], w, 1, &key) && key != UINT64_MAX) {
                    hitem x = {top.q, key};
                    heap_sift_up(heap, hn++, x);
                }
            }
            for (size_t k = 0; k < nq; k++) {
                size_t qi = byidx[k].qi;
                while (write_until_head(&outs[qi], &pos[qi], w, 1, &key))
                    ;
            }
        }
        free(heap);
        free(byidx);
    }
    free(pos);
    /* drain whatever is left (after a write error) so that decoders can finish */
    for (size_t i = 0; i < nq; i++)
        while (qout_peek(&outs[i], NULL))
            qout_pop(&outs[i]);
    qtok_put(r.tok);
    for (unsigned i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    free(th);
    session_diag_settle(s);
    for (size_t i = 0; i < nq; i++)
        qout_free(&outs[i]);
    free(outs);
    free(order);
    free(r.pick.taken);
    free(r.pick.bytes);
    pthread_mutex_destroy(&r.mu);
    if (r.tok) {
        pthread_mutex_destroy(&tok.mu);
        pthread_cond_destroy(&tok.cv);
    }
    if (s->o.progress) {
        /* the end: every decoder has finished (done < total only after an error) */
        progress_tell(s);
        s->o.progress(s->o.progress_ctx, s->progress_told, s->progress_total);
    }
    w->idle = NULL;
    collect_stats(s);
    return r.rc ? r.rc : w->rc;
}


/* ---- ordered consumers: records from the decoder threads ------------------------------------- */

/* Samples travel from the decoder threads as records: the sample, its slice window and time,
 * then its branch stack. An element's record is shorter (erec: its thread and time), then the
 * element; the first byte of both is the kind (the sample's, or REC_ELEM). */
typedef struct srec {
    ek_sample smp;
    uint64_t t_lo, t_hi;
    int has_t;
    uint32_t block; /* ek_sample_ctx.block */
    uint64_t t;
} srec;

typedef struct erec {
    uint8_t kind; /* REC_ELEM, where srec has smp.kind */
    uint8_t zero[3];
    int32_t has_time;
    int32_t pid, tid, cpu;
    uint32_t zero2;
    uint64_t time;
} erec;

#define REC_HOLE 0xFFu /* a sample the filter left out (--itrace=sN): counted, then dropped */
#define REC_ELEM 0xFEu

static void rec_encode(void *qctx, ek_sbuf *out, const ek_sample *smp, ek_sample_ctx *c)
{
    (void)qctx;
    const rctx *rc = (const rctx *)c; /* (the session's contexts are rctx: pub first) */
    /* made in place: the sample is copied once (its padding as it comes: put_recs reads the
     * fields only) */
    const size_t n = sizeof(srec);
    if (!ek_sbuf_room(out, n)) {
        char *p = out->p + out->len;
        const ek_branch *none = NULL;
        const int has_t = c->has_t;
        memcpy(p + offsetof(srec, smp), smp, sizeof *smp);
        memcpy(p + offsetof(srec, smp.branches), &none, sizeof none);
        memcpy(p + offsetof(srec, t_lo), &rc->t_lo, sizeof rc->t_lo);
        memcpy(p + offsetof(srec, t_hi), &rc->t_hi, sizeof rc->t_hi);
        memcpy(p + offsetof(srec, has_t), &has_t, sizeof has_t);
        memcpy(p + offsetof(srec, block), &c->block, sizeof c->block);
        memcpy(p + offsetof(srec, t), &c->t, sizeof c->t);
        out->len += n;
        out->p[out->len] = 0;
    }
    if (smp->nbranches)
        ek_sbuf_put(out, (const char *)smp->branches, smp->nbranches * sizeof(ek_branch));
}

void session_elem_record(ek_sbuf *out, const ek_session_elem *e)
{
    erec h = {REC_ELEM, {0}, e->has_time, e->pid, e->tid, e->cpu, 0, e->time};
    const size_t n = sizeof h + sizeof *e->elem;
    if (!ek_sbuf_room(out, n)) {
        memcpy(out->p + out->len, &h, sizeof h);
        memcpy(out->p + out->len + sizeof h, e->elem, sizeof *e->elem);
        out->len += n;
        out->p[out->len] = 0;
    }
}

static void rec_hole(void *ctx, ek_sbuf *out)
{
    (void)ctx;
    srec h;
    memset(&h, 0, sizeof h);
    h.smp.kind = REC_HOLE;
    ek_sbuf_put(out, (const char *)&h, sizeof h);
}

typedef struct rec_put {
    ek_session *s;
    const ek_consumer *c;
    uint64_t skip; /* --itrace=sN: samples still to leave out (elements are not counted) */
    rcache *cache; /* the writer's last maps, symbols and comm (NULL: none, same answers) */
} rec_put;

static int put_recs(void *ctx, const char *data, size_t len)
{
    rec_put *p = ctx;
    size_t off = 0;
    rctx c;
    rctx_init(&c, p->s, 0, 0, p->cache, 0, 0);
    while (off < len) {
        if ((uint8_t)data[off] == REC_ELEM) {
            erec eh;
            ek_elem e;
            if (off + sizeof eh + sizeof e > len) return EK_ERR_FORMAT;
            memcpy(&eh, data + off, sizeof eh);
            memcpy(&e, data + off + sizeof eh, sizeof e);
            off += sizeof eh + sizeof e;
            ek_session_elem se = {&e, eh.pid, eh.tid, eh.cpu, eh.has_time, eh.time};
            int rc = p->c->elem ? p->c->elem(p->c->ctx, &se) : 0;
            if (rc) return rc;
            continue;
        }
        if (off + sizeof(srec) > len) break;
        srec h;
        memcpy(&h, data + off, sizeof h);
        off += sizeof h;
        size_t nb = h.smp.nbranches * sizeof(ek_branch);
        if (off + nb > len)
            return EK_ERR_FORMAT;
        const char *brs = data + off;
        off += nb;
        if (p->skip) {
            p->skip--;
            continue;
        }
        if (h.smp.kind == REC_HOLE || !p->c->sample) continue;
        ek_branch *br = NULL;
        if (nb) {
            br = malloc(nb);
            if (!br)
                return EK_ERR_NOMEM;
            memcpy(br, brs, nb);
        }
        h.smp.branches = br;
        rctx_sample(&c, h.t_lo, h.t_hi, h.has_t, h.t);
        int rc = p->c->sample(p->c->ctx, &h.smp, &c.r);
        free(br);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- a staged consumer's encode on the writer ------------------------------------------------ */

/* Without time stamps the writer takes the queues one after the other, and a queue's text may
 * run only QOUT_LIMIT ahead of it: a staged consumer's encode on the decoder thread leaves one
 * thread decoding and encoding the queue being written while the writer only copies. With
 * two or more threads, the decoder hands the writer records of its samples (rec_encode) and
 * the writer encodes them: decoding and encoding of one queue then run side by side. The
 * units are the same: encode sees the same samples, with the same resolver answers (a rcache
 * of its own gives the same answers as none) and the same per-queue state (queue_begin at
 * each queue's start, in the same order). */
typedef struct defer {
    ek_session *s;
    const ek_consumer *c; /* the staged consumer */
    rcache *cache;        /* the writer's last maps and symbols (NULL: none, same answers) */
    rctx rc;
    void *qctx; /* c's state for the queue being written */
    int open;
    ek_sbuf buf;   /* units not yet put */
    ek_branch *br; /* the sample's branch stack, aligned */
    size_t brcap;
} defer;

#define DEFER_PUT (256u << 10) /* units put in runs of about this many bytes */

static int defer_pays(const ek_session *s)
{
    if (!s->timeless || s->o.itrace.initial_skip) return 0;
    if (s->o.threads) return s->o.threads >= 2;
    return sysconf(_SC_NPROCESSORS_ONLN) >= 2;
}

static void defer_begin(defer *d)
{
    d->qctx = d->c->queue_begin ? d->c->queue_begin(d->c->ctx) : NULL;
    d->open = 1;
}

static int defer_flush(defer *d)
{
    if (d->buf.oom) return EK_ERR_NOMEM;
    int rc = d->buf.len ? d->c->put(d->c->ctx, d->buf.p, d->buf.len) : 0;
    d->buf.len = 0;
    return rc;
}

static int defer_end(defer *d, int put)
{
    if (!d->open) return 0;
    int rc = put ? defer_flush(d) : 0;
    if (d->c->queue_end) d->c->queue_end(d->c->ctx, d->qctx);
    d->qctx = NULL;
    d->open = 0;
    return rc;
}

static int put_deferred(void *ctx, const char *data, size_t len)
{
    defer *d = ctx;
    size_t off = 0;
    if (!d->open) defer_begin(d);
    while (off < len) {
        srec h;
        if (len - off < sizeof h) return EK_ERR_FORMAT;
        memcpy(&h, data + off, sizeof h);
        off += sizeof h;
        size_t nb = h.smp.nbranches * sizeof(ek_branch);
        if (len - off < nb) return EK_ERR_FORMAT;
        if (nb) {
            if (nb > d->brcap) {
                ek_branch *nbr = realloc(d->br, nb);
                if (!nbr) return EK_ERR_NOMEM;
                d->br = nbr;
                d->brcap = nb;
            }
            memcpy(d->br, data + off, nb);
            off += nb;
        }
        if (h.smp.kind == REC_HOLE) continue;
        h.smp.branches = nb ? d->br : NULL;
        rctx_sample(&d->rc, h.t_lo, h.t_hi, h.has_t, h.t);
        d->rc.pub.block = h.block;
        d->c->encode(d->qctx, &d->buf, &h.smp, &d->rc.pub);
        if (d->buf.len >= DEFER_PUT) {
            int rc = defer_flush(d);
            if (rc) return rc;
        }
    }
    return 0;
}

/* ---- the API --------------------------------------------------------------------------------- */

void ek_consumer_init(ek_consumer *c)
{
    memset(c, 0, sizeof *c);
    c->size = sizeof *c;
}

int ek_session_run(ek_session *s, const ek_consumer *c1)
{
    if (!s || !c1 || c1->size < EK_CONSUMER_SIZE_V1) return EK_ERR_ARG;
    /* (an older caller's consumer: the fields it does not have are zero) */
    ek_consumer whole;
    memset(&whole, 0, sizeof whole);
    memcpy(&whole, c1, c1->size < sizeof whole ? c1->size : sizeof whole);
    const ek_consumer *c0 = &whole;
    /* a stage: ordered samples, from a perf recording, every one of them in the output */
    if (c0->stage && (c0->encode || !c0->sample || s->snap || s->o.itrace.initial_skip))
        return EK_ERR_ARG;
    if (s->snap) {
        if (c0->encode && !c0->put) return EK_ERR_ARG;
        return snap_run(s, c0);
    }
    const ek_consumer *c = c0;
    writer w;
    memset(&w, 0, sizeof w);
    s->no_insn = c->no_insn;
    if (c->encode && c->put && defer_pays(s)) {
        defer d;
        memset(&d, 0, sizeof d);
        d.s = s;
        d.c = c;
        d.cache = rcache_new();
        rctx_init(&d.rc, s, 0, 0, d.cache, 0, 0);
        ek_consumer rc;
        ek_consumer_init(&rc);
        rc.ctx = &d;
        rc.encode = rec_encode;
        rc.put = put_deferred;
        qfmt fmt = {&rc, 0, 0, 0, NULL};
        w.c = &rc;
        w.defer = &d;
        int ret = run_all(s, &fmt, &w);
        defer_end(&d, 0); /* (a queue left open by an error: its state freed) */
        ek_sbuf_free(&d.buf);
        free(d.br);
        free(d.cache);
        return ret;
    }
    if (c->encode) {
        if (!c->put) return EK_ERR_ARG;
        qfmt fmt = {c, 0, 0, 0, NULL};
        w.c = c;
        w.skip = s->o.itrace.initial_skip;
        return run_all(s, &fmt, &w);
    }
    /* ordered: records made on the decoder threads, handed out here */
    rec_put p = {s, c, s->o.itrace.initial_skip, rcache_new()};
    ek_consumer rc;
    ek_consumer_init(&rc);
    rc.ctx = &p;
    rc.encode = rec_encode;
    rc.put = put_recs;
    rc.hole = rec_hole;
    qfmt fmt = {&rc, (c->wants & EK_CONSUME_ELEMS) && c->elem, c->elem_types, c->elem_flags,
                c->stage ? c : NULL};
    w.c = &rc;
    int ret = run_all(s, &fmt, &w);
    free(p.cache);
    return ret;
}

int ek_session_samples(ek_session *s, ek_sample_fn fn, void *ctx)
{
    ek_consumer c;
    ek_consumer_init(&c);
    c.ctx = ctx;
    c.sample = fn;
    return ek_session_run(s, &c);
}
