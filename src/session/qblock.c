/* A queue's blocks: its AUX slices one after the other, each bound to the decode tree (its
 * trace IDs or its CPU), fed, and pulled for elements until its bytes are used up. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "etmkit/etmkit.h"
#include "session/qdecode.h"

/* Refill the pending list from the block's bytes. Returns 0 with pend non-empty, or 1 when the
 * block is used up (its partial packets flushed: perf never tells its decoder that a block
 * ended, and the next block starts with a reset; the decoders are not ended). */
int qblock_refill(qjob *j)
{
    while (j->ph >= j->pn) {
        if (j->block_ended)
            return 1;
        ek_decode_item it;
        int r = ek_decode_next(j->dt, &it);
        if (r < 0) return r;
        if (r == 0) {
            j->pv = NULL;
            j->pn = j->ph = 0;
            if (j->flushed) {
                j->block_ended = 1;
            } else {
                ek_decode_flush(j->dt);
                j->flushed = 1;
            }
            continue;
        }
        idst *d = j->ids[it.trace_id & 127];
        switch (it.kind) {
        case EK_DI_ELEMS:
            /* (already accounted for by on_elems) */
            j->pv = it.elems;
            j->pn = it.count;
            j->ph = 0;
            break;
        case EK_DI_RESET:
            /* a fresh decoder for every block, as perf resets its decoder between buffers */
            d->gen++;
            break;
        case EK_DI_UNDECODED:
            if (it.why == EK_DECODE_NO_ID) {
                /* The null ID (0x00) is the formatter's padding: a sink that stops or is
                 * flushed mid-frame fills the rest of the frame with it (every `etmkit gen` ETR
                 * and ETF does, as do the real ones). Like the frame headers, it is overhead,
                 * not lost trace. */
                if (it.trace_id == EK_TRACE_ID_NULL) break;
                if (it.trace_id == EK_TRACE_ID_UNKNOWN)
                    qresult_gap(j->res, GAP_NO_ID, it.len, it.index);
                else
                    qresult_gap(j->res, "formatter data under a reserved trace ID (0x70-0x7f)",
                                it.len, it.index);
                j->res->noid_bytes += it.len;
            } else {
                qresult_gap(j->res, "trace ID without configuration", it.len, it.index);
                j->res->data_bytes += it.len;
            }
            break;
        case EK_DI_FRAME_ERROR: qresult_gap(j->res, "bad formatter frames", 16, it.index); break;
        default:
            break;
        }
    }
    return 0;
}

/* The trace bytes of a decoded block are not needed again: let the kernel drop their pages
 * from our mapping of the file (they are read back if anything touches them again), so that
 * a large recording does not stay resident. */
void qblock_release(qjob *j)
{
    if (!j->rel_data || !j->rel_len)
        return;
    if (j->s->o.progress)
        atomic_fetch_add_explicit(&j->s->progress_done, j->rel_len, memory_order_relaxed);
    /* the whole pages inside, of the system's size (with 16 or 64 KiB pages, 4 KiB ones
     * were rounded out again by ek_perf_release: the edges, which hold other queues' trace,
     * went too); never a copy of the file in memory, which this would zero */
    long psz = sysconf(_SC_PAGESIZE);
    uintptr_t a, e, pg = psz > 0 ? (uintptr_t)psz : 4096;
    qblock_inner_pages((uintptr_t)j->rel_data, j->rel_len, pg, &a, &e);
    if (e > a) ek_perf_release(j->s->pf, (const void *)a, e - a);
    j->rel_data = NULL;
    j->rel_len = 0;
}

/* The pages of a decoded block are handed back as the block ends (qblock_release), but only
 * those inside it: the pages at its edges hold other queues' trace too. And whenever a decoder
 * touches a page of its new block, the kernel maps in the pages around it that are still in the
 * page cache (fault-around, 64 KiB), the released tail of an earlier block among them; those
 * stayed for the rest of the run, 30 MB over 1 GiB of trace when the edges were released too.
 * So the file behind the lowest position of all the queues, which no decoder reads again, is
 * released as a whole (64 KiB windows) every few MiB. */
#define REL_WINDOW (64u << 10)
#define REL_STEP (4u << 20)
void qblock_mark(ek_session *s, size_t qi, uint64_t off)
{
    if (!s->rel_pos || qi >= s->nqres) return;
    pthread_mutex_lock(&s->rel_mu);
    s->rel_pos[qi] = off;
    uint64_t lo = UINT64_MAX;
    for (size_t i = 0; i < s->nqres; i++)
        if (s->rel_pos[i] < lo) lo = s->rel_pos[i];
    size_t fsize = 0;
    const uint8_t *base = ek_perf_bytes(s->pf, &fsize);
    if (lo > fsize) lo = fsize;
    lo = lo / REL_WINDOW * REL_WINDOW;
    if (base && lo > s->rel_upto && lo - s->rel_upto >= REL_STEP) {
        ek_perf_release(s->pf, base + s->rel_upto, (size_t)(lo - s->rel_upto));
        s->rel_upto = lo;
    }
    pthread_mutex_unlock(&s->rel_mu);
}

/* Load the next slice as the current block; 0 when there is none. */
int qblock_load(qjob *j)
{
    qblock_release(j);
    j->pv = NULL;
    j->pn = j->ph = 0;
    while (j->slice < j->q->nslices) {
        const ek_perf_slice *sl = &j->q->slices[j->slice++];
        j->sl = sl;
        uint64_t key = sl->aux < j->s->aux_keys.n ? j->s->aux_keys.v[sl->aux] : j->prev_key;
        j->t_lo = j->prev_key;
        j->t_hi = key;
        j->prev_key = key;
        size_t len = 0;
        const uint8_t *data = ek_perf_slice_data(j->s->pf, sl, &len);
        if (!data || !len)
            continue;
        j->res->trace_bytes += len;
        qblock_mark(j->s, j->qi, sl->data_offset);
        j->rel_data = data;
        j->rel_len = len;
        if (!++j->block)
            j->block = 1;
        for (int id = 0; id < 128; id++)
            if (j->ids[id]) {
                j->ids[id]->gen++;
                j->ids[id]->mem_has_t = j->ids[id]->out_has_t = 0;
                j->ids[id]->time_matters = 0;
                j->ids[id]->next_change = UINT64_MAX;
            }
        j->block_ended = 0;
        j->flushed = 0;
        j->in_block = 1;
        /* the slice's trace IDs (formatted) or CPU (raw); every decoder starts again at its
         * next data */
        int raw = ek_decode_bind_perf_slice(j->dt, j->s->cs, j->q, sl);
        ek_decode_reset(j->dt);
        if (raw < 0) {
            qresult_gap(j->res, "raw trace without CPU configuration", len, sl->data_offset);
            j->flushed = j->block_ended = 1;
            return 1;
        }
        ek_decode_feed(j->dt, data, len, sl->data_offset);
        return 1;
    }
    j->in_block = 0;
    qblock_mark(j->s, j->qi, UINT64_MAX);
    return 0;
}
