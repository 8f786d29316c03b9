/* The hand-over of a queue's output from its decoder thread to the writer: chunks of encoded
 * samples cut into epochs (perf's heap entries), the buffers moving without copies, with
 * back-pressure both ways. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "etmkit/etmkit.h"
#include "session/qdecode.h"
/* ---- run tokens ------------------------------------------------------------------------------ */

void qtok_get(qtok *t)
{
    if (!t) return;
    pthread_mutex_lock(&t->mu);
    while (!t->free)
        pthread_cond_wait(&t->cv, &t->mu);
    t->free--;
    pthread_mutex_unlock(&t->mu);
}

void qtok_put(qtok *t)
{
    if (!t) return;
    pthread_mutex_lock(&t->mu);
    t->free++;
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->mu);
}

/* ---- output ---------------------------------------------------------------------------------- */

void qout_init(qout *o, size_t limit)
{
    memset(o, 0, sizeof *o);
    pthread_mutex_init(&o->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* for the writer's timed waits */
    pthread_cond_init(&o->cv, &ca);
    pthread_condattr_destroy(&ca);
    o->limit = limit;
    qseg first = {0, 0, 0};
    ek_vec_push(&o->segs, first);
}

static void chunk_free(qchunk *c)
{
    if (c) {
        free(c->data);
        free(c->segs);
        free(c);
    }
}

void qout_free(qout *o)
{
    for (qchunk *c = o->first, *n; c; c = n) {
        n = c->next;
        chunk_free(c);
    }
    for (qchunk *c = o->spare, *n; c; c = n) {
        n = c->next;
        chunk_free(c);
    }
    ek_sbuf_free(&o->cur);
    ek_vec_free(&o->segs);
    pthread_mutex_destroy(&o->mu);
    pthread_cond_destroy(&o->cv);
}

/* Hand the bytes written so far to the writer as one chunk: the buffers themselves move into
 * the chunk, and the decoder continues in a consumed chunk's buffers. */
int qout_flush(qout *o, int last)
{
    pthread_mutex_lock(&o->mu);
    /* back-pressure: wait while the writer has plenty to take from us (without our token) */
    int gave = 0;
    while (o->limit && (o->bytes > o->limit || o->nsegs > QOUT_SEGS_LIMIT) && o->first && !last) {
        if (!gave && o->tok) {
            qtok_put(o->tok);
            gave = 1;
        }
        o->decoder_waits++;
        pthread_cond_wait(&o->cv, &o->mu);
        o->decoder_waits--;
    }
    qchunk *c = o->spare;
    if (c)
        o->spare = c->next;
    pthread_mutex_unlock(&o->mu);
    if (gave)
        qtok_get(o->tok);
    if (!c) {
        c = calloc(1, sizeof *c);
        if (!c)
            return EK_ERR_NOMEM;
    }
    char *od = c->data;
    size_t ocap = c->cap;
    qseg *os = c->segs;
    size_t oscap = c->segcap;
    c->data = o->cur.p;
    c->cap = o->cur.cap;
    c->len = o->cur.len;
    c->segs = o->segs.v;
    c->nsegs = o->segs.n;
    c->segcap = o->segs.cap;
    o->cur.p = od;
    o->cur.cap = ocap;
    o->cur.len = 0;
    if (o->cur.p)
        o->cur.p[0] = 0;
    /* a new buffer (no consumed one to reuse) is made chunk-sized at once, not grown to it by
     * doubling, which copied every chunk about twice over */
    if (!last && o->cur.cap <= QOUT_CHUNK)
        ek_sbuf_reserve(&o->cur, QOUT_CHUNK);
    o->segs.v = os;
    o->segs.cap = oscap;
    o->segs.n = 0;
    /* the next chunk continues the current epoch */
    qseg cont = {0, c->nsegs ? c->segs[c->nsegs - 1].key : 0, 0};
    if (ek_vec_push(&o->segs, cont))
        return EK_ERR_NOMEM;
    c->next = NULL;
    c->last = (uint8_t)last;
    pthread_mutex_lock(&o->mu);
    if (o->last)
        o->last->next = c;
    else
        o->first = c;
    o->last = c;
    o->bytes += c->len;
    o->nsegs += c->nsegs;
    if (last)
        o->done = 1;
    if (o->writer_waits)
        pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->mu);
    return 0;
}

qchunk *qout_peek(qout *o, const qidle *idle)
{
    if (idle) idle->fn(idle->ctx);
    pthread_mutex_lock(&o->mu);
    int gave = 0;
    while (!o->first && !o->done) {
        if (!gave && o->tok) { /* the decoders run while we wait */
            qtok_put(o->tok);
            gave = 1;
        }
        o->writer_waits++;
        if (!idle) {
            pthread_cond_wait(&o->cv, &o->mu);
        } else {
            struct timespec t;
            clock_gettime(CLOCK_MONOTONIC, &t);
            t.tv_nsec += QIDLE_MS * 1000000L;
            if (t.tv_nsec >= 1000000000L) {
                t.tv_sec++;
                t.tv_nsec -= 1000000000L;
            }
            if (pthread_cond_timedwait(&o->cv, &o->mu, &t) == ETIMEDOUT) {
                pthread_mutex_unlock(&o->mu);
                idle->fn(idle->ctx);
                pthread_mutex_lock(&o->mu);
            }
        }
        o->writer_waits--;
    }
    qchunk *c = o->first;
    pthread_mutex_unlock(&o->mu);
    if (gave)
        qtok_get(o->tok);
    return c;
}

void qout_pop(qout *o)
{
    pthread_mutex_lock(&o->mu);
    qchunk *c = o->first;
    if (c) {
        o->first = c->next;
        if (!o->first)
            o->last = NULL;
        o->bytes -= c->len;
        o->nsegs -= c->nsegs;
        /* keep a couple of buffers for reuse */
        unsigned n = 0;
        for (qchunk *s = o->spare; s; s = s->next)
            n++;
        if (n < 4 && !c->last) {
            c->next = o->spare;
            o->spare = c;
            c = NULL;
        }
    }
    if (o->decoder_waits)
        pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->mu);
    chunk_free(c);
}

/* A new epoch of this queue with perf's heap key. An empty epoch still counts (it moves perf's
 * heap), except our own one for the elements before the first time stamp. */
int qout_epoch(qjob *j, uint64_t key)
{
    /* no output at all: no epochs for the writer */
    if (!j->fmt || !j->fmt->c || !j->fmt->c->encode) return 0;
    qout *o = j->out;
    int pre = j->pre_epoch;
    j->pre_epoch = 0;
    /* where the epoch's output starts: here, or (direct) where the elements processed since
     * the last stop began theirs */
    size_t at = j->direct ? j->mark : o->cur.len;
    qseg *cur = &o->segs.v[o->segs.n - 1];
    if (cur->off == at && (pre || (!cur->head && o->segs.n == 1))) {
        /* nothing in the current segment yet: it becomes the new epoch's head */
        cur->key = key;
        cur->head = 1;
        return 0;
    }
    qseg n = {at, key, 1};
    if (ek_vec_push(&o->segs, n)) return EK_ERR_NOMEM;
    /* many epochs and little output: hand them on (direct: at the next stop, settle) */
    return !j->direct && o->segs.n >= QOUT_SEGS ? qout_flush(o, 0) : 0;
}
