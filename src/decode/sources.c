/* Decode trees configured from the inputs: a snapshot buffer's sources as trc_pkt_lister
 * takes them, and perf.data's per-CPU cs_etm metadata with the trace IDs of each AUX slice. */
#include <stdlib.h>
#include <string.h>

#include "decode/decode_int.h"
#include "etmkit/etmkit.h"
#include "etmkit/perf.h"
#include "etmkit/snapshot.h"

/* ---- snapshots ------------------------------------------------------------------------------- */

static int cmp_source_name(const void *a, const void *b, void *ctx)
{
    const ek_snapshot *ss = ctx;
    const ek_snap_source *const *x = a, *const *y = b;
    return strcmp(ss->devices[(*x)->device].name, ss->devices[(*y)->device].name);
}

unsigned ek_decode_snapshot_frames(int format)
{
    switch (format) {
    case EK_BUF_SOURCE_DATA: return 0;
    case EK_BUF_DSTREAM:
    case EK_BUF_TPIU: return EK_DFMT_FSYNC;
    case EK_BUF_TPIU_HSYNC: return EK_DFMT_FSYNC | EK_DFMT_HSYNC;
    default: return EK_DFMT_MEM_ALIGN;
    }
}

int ek_decode_add_snapshot_buffer(ek_decode *t, const ek_snapshot *ss, size_t b)
{
    if (b >= ss->nbuffers) return EK_ERR_ARG;
    const ek_snap_buffer *buf = &ss->buffers[b];
    const ek_snap_source **list = calloc(ss->nsources + 1, sizeof *list);
    if (!list) return EK_ERR_NOMEM;
    size_t n = 0;
    for (size_t i = 0; i < ss->nsources; i++)
        if (ss->sources[i].buffer == (long)b) list[n++] = &ss->sources[i];
    qsort_r(list, n, sizeof *list, cmp_source_name, (void *)ss);

    const int formatted = buf->format != EK_BUF_SOURCE_DATA;
    unsigned frames = 0;
    if (formatted) frames = ek_decode_snapshot_frames(buf->format);
    ek_decode_set_frames(t, frames);

    int decoded = 0, rc = 0;
    for (size_t i = 0; i < n && rc >= 0; i++) {
        const ek_snap_source *s = list[i];
        const char *name = ss->devices[s->device].name;
        if (!formatted && i > 0) {
            ek_diag_emit(t->c.diag, EK_SEV_NOTE, "dump.extra-source", 0, ss->trace_ini, -1, -1, -1,
                         "raw buffer %s: only the first source (%s) is decoded, not %s", buf->name,
                         ss->devices[list[0]->device].name, name);
            continue;
        }
        const unsigned id = s->cfg.trace_id & 0x7Fu;
        const int known = decode_find_proto(t, s->cfg.protocol) != NULL;
        if (known && formatted && t->bind[id] >= 0) {
            const char *other = t->srcs.v[t->bind[id]].name;
            ek_diag_emit(t->c.diag, EK_SEV_WARN, "dump.duplicate-id", 0, ss->trace_ini, -1, -1,
                         (int)id, "sources %s and %s share trace ID 0x%x: only %s is decoded",
                         other, name, id, other);
            continue;
        }
        rc = decode_add_source(t, &s->cfg, name, (void *)s, known);
        if (rc < 0) break;
        if (!known) continue;
        if (!formatted) ek_decode_bind_raw(t, rc);
        decoded++;
        rc = decode_make(t, id); /* as the lister: every decoder of the buffer, in this order */
    }
    free(list);
    return rc < 0 ? rc : decoded;
}

/* ---- perf.data ------------------------------------------------------------------------------- */

int ek_decode_add_perf_cpus(ek_decode *t, const ek_perf_cs_etm *cs)
{
    for (size_t i = 0; i < cs->ncpus; i++) {
        const ek_perf_etm_cpu *c = &cs->cpus[i];
        int rc = decode_add_source(t, &c->cfg, NULL, (void *)c, 0);
        if (rc < 0) return rc;
    }
    return 0;
}

int ek_decode_bind_perf_slice(ek_decode *t, const ek_perf_cs_etm *cs, const ek_perf_queue *q,
                              const ek_perf_slice *sl)
{
    if (sl->formatted) {
        ek_decode_set_frames(t, EK_DFMT_MEM_ALIGN | EK_DFMT_RESET_4XFSYNC);
        ek_decode_bind_raw(t, -1);
        const ek_perf_idmap *im = sl->idmap;
        for (unsigned id = 0; id < 128; id++) {
            int src = -1;
            if (im && id != EK_TRACE_ID_NULL && !ek_trace_id_reserved(id) && im->block[id] >= 0 &&
                (size_t)im->block[id] < cs->ncpus && (size_t)im->block[id] < t->srcs.n)
                src = im->block[id];
            t->bind[id] = (int16_t)src;
        }
        return 0;
    }
    ek_decode_set_frames(t, 0);
    (void)q;
    const ek_perf_etm_cpu *e = sl->raw_etm; /* the queue's CPU's, the AUX record's, shared */
    if (!e || e < cs->cpus || (size_t)(e - cs->cpus) >= t->srcs.n) {
        ek_decode_bind_raw(t, -1);
        return -1;
    }
    ek_decode_bind_raw(t, (int)(e - cs->cpus));
    return e->cfg.trace_id & 0x7f;
}
