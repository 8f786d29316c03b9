/* The trace of a perf.data file's AUX slices, listed after the AUXTRACE records that hold it
 * (etmkit/perf_dump.h), each slice through its queue's decode tree from a reset, as
 * `perf report -D` (perf 6.1) dumps them: at an AUXTRACE record, perf dumps every queued
 * fragment (AUX slice) of the buffers with that record's `reference`, queue by queue in AUX
 * record order (cs-etm.c: dump_queued_data). perf record gives every buffer a reference of its
 * own; simpleperf writes 0 in all of them, and perf then dumps every slice of the file again
 * at each AUXTRACE record: so does this listing, so that its packet lines are perf's. */
#include <stdlib.h>
#include <string.h>

#include "etmkit/decode.h"
#include "etmkit/etmkit.h"
#include "etmkit/listing.h"
#include "etmkit/perf_dump.h"

struct ek_perf_tracer {
    const ek_perf_file *f;
    const ek_perf_queues *q;
    ek_perf_trace_opts o;
    ek_decode **trees; /* one per queue, made when first needed */
    size_t ntrees;
    const ek_perf_auxtrace_rec *bufs;
    size_t nbufs;
    uint8_t *listed; /* per buffer: its reference's group was listed at some record */
    /* the slices sorted by their buffer's reference, then queue, then AUX record order */
    struct sref {
        uint64_t reference;
        size_t queue, pos;
        const ek_perf_slice *s;
    } * by_ref;
    size_t nref;
    /* buffers by record number, for the records of a listing */
    struct brec {
        int64_t record;
        size_t buf;
    } * brecs;
    size_t nbrecs;
    ek_sbuf tmp; /* JSON: one item's objects before they are joined */
};

static int cmp_sref(const void *a, const void *b)
{
    const struct sref *x = a, *y = b;
    if (x->reference != y->reference) return x->reference < y->reference ? -1 : 1;
    if (x->queue != y->queue) return x->queue < y->queue ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int cmp_brec(const void *a, const void *b)
{
    const struct brec *x = a, *y = b;
    return x->record < y->record ? -1 : x->record > y->record;
}

void ek_perf_trace_opts_init(ek_perf_trace_opts *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
}

int ek_perf_tracer_new(const ek_perf_file *f, const ek_perf_queues *q, const ek_perf_trace_opts *o,
                       ek_perf_tracer **out)
{
    *out = NULL;
    if (!f || !q || !o || o->size < sizeof *o) return EK_ERR_ARG;
    ek_perf_tracer *t = calloc(1, sizeof *t);
    if (!t) return EK_ERR_NOMEM;
    t->f = f;
    t->q = q;
    t->o = *o;
    t->bufs = ek_perf_auxtrace_records(f, &t->nbufs);
    t->ntrees = ek_perf_queues_count(q);
    t->trees = calloc(t->ntrees + 1, sizeof *t->trees);
    t->listed = calloc(t->nbufs + 1, 1);
    t->brecs = calloc(t->nbufs + 1, sizeof *t->brecs);
    size_t nsl = 0;
    (void)ek_perf_queues_slices(q, &nsl);
    t->by_ref = calloc(nsl + 1, sizeof *t->by_ref);
    if (!t->trees || !t->listed || !t->brecs || !t->by_ref) {
        ek_perf_tracer_free(t);
        return EK_ERR_NOMEM;
    }
    for (size_t qi = 0; qi < t->ntrees; qi++) {
        const ek_perf_queue *qu = ek_perf_queue_at(q, qi);
        for (size_t k = 0; k < qu->nslices; k++) {
            const ek_perf_slice *sl = &qu->slices[k];
            if (sl->buffer < 0 || (size_t)sl->buffer >= t->nbufs) continue;
            struct sref r = {t->bufs[sl->buffer].reference, qi, k, sl};
            t->by_ref[t->nref++] = r;
        }
    }
    qsort(t->by_ref, t->nref, sizeof *t->by_ref, cmp_sref);
    for (size_t b = 0; b < t->nbufs; b++)
        if (t->bufs[b].record >= 0) {
            t->brecs[t->nbrecs].record = t->bufs[b].record;
            t->brecs[t->nbrecs].buf = b;
            t->nbrecs++;
        }
    qsort(t->brecs, t->nbrecs, sizeof *t->brecs, cmp_brec);
    *out = t;
    return 0;
}

void ek_perf_tracer_free(ek_perf_tracer *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->ntrees; i++)
        ek_decode_free(t->trees[i]);
    free(t->trees);
    free(t->listed);
    free(t->brecs);
    free(t->by_ref);
    ek_sbuf_free(&t->tmp);
    free(t);
}

/* Queue qi's decode tree: every CPU of the cs_etm metadata as a source (perf's decoder per
 * queue knows them all), resets as OpenCSD's decode tree does them. */
static ek_decode *tree_of(ek_perf_tracer *t, size_t qi)
{
    if (t->trees[qi]) return t->trees[qi];
    ek_decode_config c;
    ek_decode_config_init(&c);
    c.flags = EK_DECODE_PACKETS | EK_DECODE_DIAG_ITEMS;
    if (t->o.elements) c.flags |= EK_DECODE_ELEMS;
    c.model = EK_DECODE_MODEL_OCSD;
    c.mem = t->o.mem;
    c.diag = t->o.diag;
    c.file = ek_perf_name(t->f);
    ek_decode *d;
    if (ek_decode_new(&c, &d)) return NULL;
    if (ek_decode_add_perf_cpus(d, ek_perf_cs_etm_get(t->f))) {
        ek_decode_free(d);
        return NULL;
    }
    t->trees[qi] = d;
    return d;
}

/* The items of the tree until it needs input, listed. */
static void take(ek_perf_tracer *t, ek_decode *d, const ek_listing *l, ek_sbuf *out, int *first)
{
    ek_decode_item it;
    while (ek_decode_next(d, &it) > 0) {
        if (l->format != EK_LISTING_JSON) {
            ek_list_item(out, l, &it);
            continue;
        }
        /* JSON: the item's objects (one a line) joined into the array */
        ek_sbuf_reset(&t->tmp);
        ek_list_item(&t->tmp, l, &it);
        const char *p = t->tmp.p ? t->tmp.p : "";
        while (*p) {
            const char *e = strchr(p, '\n');
            const size_t n = e ? (size_t)(e - p) : strlen(p);
            if (n) {
                ek_sbuf_puts(out, *first ? "\n" : ",\n");
                ek_sbuf_put(out, p, n);
                *first = 0;
            }
            p += n + (e ? 1 : 0);
        }
    }
}

static void slice_trace(ek_sbuf *out, ek_perf_tracer *t, const ek_perf_slice *s)
{
    const ek_perf_queue *qu = ek_perf_queue_at(t->q, s->queue);
    const ek_perf_auxtrace_rec *b = &t->bufs[s->buffer];
    const uint64_t aux = b->aux_offset + s->buffer_pos; /* AUX-area offset of its first byte */
    size_t len = 0;
    const uint8_t *data = ek_perf_slice_data(t->f, s, &len);
    const int json = t->o.format == EK_PERF_TRACE_JSON;
    if (json) {
        ek_sbuf_printf(out,
                       ",\n{\"trace\":{\"aux_record\":%lld,\"queue\":%zu,\"aux_offset\":%llu,"
                       "\"size\":%zu,\"formatted\":%s,\"items\":[",
                       (long long)s->aux_record, s->queue, (unsigned long long)aux, len,
                       s->formatted ? "true" : "false");
    } else {
        ek_sbuf_printf(out,
                       "  trace of AUX #%lld (queue %zu): 0x%zx bytes at AUX offset 0x%llx, %s\n",
                       (long long)s->aux_record, s->queue, len, (unsigned long long)aux,
                       s->formatted ? "CoreSight-formatted" : "raw");
    }
    ek_decode *d = tree_of(t, s->queue);
    const ek_perf_cs_etm *cs = ek_perf_cs_etm_get(t->f);
    if (d && data && len) {
        ek_listing l;
        memset(&l, 0, sizeof l);
        l.format = t->o.format == EK_PERF_TRACE_OCSD   ? EK_LISTING_OCSD
                   : t->o.format == EK_PERF_TRACE_JSON ? EK_LISTING_JSON
                                                       : EK_LISTING_PERF;
        l.packets = 1;
        l.monitor = t->o.elements && t->o.format == EK_PERF_TRACE_OCSD;
        int first = 1;
        if (ek_decode_bind_perf_slice(d, cs, qu, s) < 0 && !json)
            ek_sbuf_puts(out, "  (raw trace of a CPU without cs_etm configuration: not decoded)\n");
        /* perf resets its decoder after each buffer (fragment): no end of trace */
        ek_decode_reset(d);
        take(t, d, &l, out, &first);
        ek_decode_set_file(d, ek_perf_name(t->f));
        ek_decode_feed(d, data, len, aux);
        take(t, d, &l, out, &first);
    }
    if (json) ek_sbuf_puts(out, "]}}");
}

/* Every slice of the buffers with buffer bi's reference, queue by queue in AUX record order. */
static void buffer_trace(ek_sbuf *out, ek_perf_tracer *t, size_t bi)
{
    const uint64_t ref = t->bufs[bi].reference;
    for (size_t b = 0; b < t->nbufs; b++)
        if (t->bufs[b].reference == ref) t->listed[b] = 1;
    size_t lo = 0, hi = t->nref;
    while (lo < hi) { /* the first slice of the group */
        const size_t mid = lo + (hi - lo) / 2;
        if (t->by_ref[mid].reference < ref)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = lo; k < t->nref && t->by_ref[k].reference == ref; k++)
        slice_trace(out, t, t->by_ref[k].s);
}

int ek_perf_dump_record_trace(ek_sbuf *out, ek_perf_tracer *t, const ek_perf_record *rec)
{
    if (rec->type != EK_PERF_RECORD_AUXTRACE) return 0;
    const struct brec key = {rec->index, 0};
    const struct brec *b = bsearch(&key, t->brecs, t->nbrecs, sizeof key, cmp_brec);
    if (b) buffer_trace(out, t, b->buf); /* at every record of the reference, as perf */
    return out->oom ? EK_ERR_NOMEM : 0;
}

int ek_perf_dump_rest_trace(ek_sbuf *out, ek_perf_tracer *t)
{
    for (size_t i = 0; i < t->nbufs; i++)
        if (!t->listed[i]) buffer_trace(out, t, i);
    return out->oom ? EK_ERR_NOMEM : 0;
}
