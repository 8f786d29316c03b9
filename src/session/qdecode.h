/* One queue's decode (qdecode.c), shared by its parts: the trace IDs' state (qids.c), code
 * reads through the address-space timeline (qcode.c), the block's bytes (qblock.c) and the
 * hand-over of its output to the writer (qout.c). Private to src/session. */
#ifndef ETMKIT_SESSION_QDECODE_H
#define ETMKIT_SESSION_QDECODE_H

#include <stdint.h>

#include "etmkit/decode.h"
#include "etmkit/flow.h"
#include "session/session_int.h"

#define PKTQ_WAIT 1023 /* perf's packet queue holds 1024; it stops the decoder at 1023 */

typedef struct qjob qjob;

/* A trace ID of the queue: its sample synthesis, threads, time keeping and perf's packet
 * queue. */
typedef struct idst {
    qjob *j;
    uint8_t id;
    int ok;                     /* decodable (ETMv4 / ETE with a configuration) */
    const ek_perf_etm_cpu *etm;
    int32_t cpu;
    ek_perf_pid_source pid_source;
    ek_synth *synth;
    int32_t pid, tid;           /* thread of the samples (elements processed so far) */
    int32_t dec_tid;            /* thread as decoded (perf's tidq->tid, set at decode time) */
    int32_t mem_pid;            /* thread whose memory the decoder reads (parser context) */
    uint64_t gen;
    /* what the last failed code read was */
    int miss_kind;
    int32_t miss_pid;
    as_dso *miss_dso;
    uint64_t miss_addr;
    int notsync;                /* in a run of NOTSYNC packets */
    int in_gap;                 /* trace bytes since a NACC, until instructions resume */
    size_t gap_miss;
    /* perf's per-trace-ID packet queue and its CoreSight time keeping */
    EK_VEC(ek_elem) q;
    size_t qhead;
    uint64_t cs_ts, next_cs_ts, instr_count;
    size_t npk;                 /* perf packets in q (what fills perf's packet queue) */
    /* perf time from CoreSight time stamps (where they fit the slice): for code reads as the
     * decoder goes, and for the samples as they are made */
    int mem_has_t, out_has_t;
    uint64_t mem_t, out_t;
    int time_matters;           /* a code read in this slice depended on the time */
    /* between time stamps, perf's own estimate: one time unit per instruction since the last
     * one (cs_etm's soft time stamps); used only to pick between maps that replaced each other
     * within a slice */
    uint64_t mem_base_t, out_base_t, mem_instr, out_instr;
    uint64_t next_change;       /* the map the decoder reads from changes at this time */
    int smp_has_time;           /* the time the synthesiser gives its samples (elements too) */
    uint64_t smp_time;
} idst;

struct qjob {
    ek_session *s;
    size_t qi;
    const ek_perf_queue *q;
    const qfmt *fmt;
    qout *out;
    qresult *res;
    idst *ids[128];
    ek_decode *dt; /* deformatter, parsers and flow decoders of the queue */
    const ek_perf_slice *sl;
    size_t slice;               /* index of the next slice to load */
    uint64_t prev_key;
    uint64_t t_lo, t_hi;
    int timeless;
    /* the element stream of the current block */
    int in_block;
    int flushed; /* the block's partial packets were flushed */
    /* elements produced but not yet consumed: pv[ph..pn), a view of the decode tree's output
     * (valid until the next ek_decode_next) */
    const ek_elem *pv;
    size_t pn, ph;
    int block_ended;            /* the block's bytes are used up (parsers flushed) */
    uint8_t pending_chan;       /* perf: trace ID whose time stamp stopped the decoder */
    int pre_epoch;              /* output so far belongs to the elements before any time stamp */
    const uint8_t *rel_data;    /* the current block's bytes (released when it is done) */
    size_t rel_len;
    rcache *rcache;             /* the resolver's last maps and symbols (NULL: none) */
    rctx rc;                    /* the resolver of the samples (rctx_sample for each) */
    uint32_t block;             /* serial of the current block (ek_sample_ctx.block, never 0) */
    void *qctx;                 /* the consumer's state for this queue (queue_begin) */
    void *sctx;                 /* an ordered consumer's stage's state (its queue_begin) */
    /* direct: the queue's trace is raw (one trace ID, no formatter), so perf's per-ID packet
     * queue would be processed in the order it is filled; each element is processed as soon as
     * it is fed instead of being copied into the queue. The output since the last stop then
     * starts at `mark` (where the queued elements' output would have begun), and the buffer is
     * handed to the writer only at stops. */
    int direct;
    size_t mark;
    uint64_t nd_bytes; /* packet bytes that did not feed instruction flow */
    int err;
};

/* ---- qids.c: a trace ID's state, and what its packets and elements change in it ---- */

/* The decode tree's hooks (ek_decode_config: mem_for, packet_hook, elems_hook). */
int qid_make(void *ctx, unsigned id, int source, ek_flow_mem *mem);
void qid_on_packet(void *ctx, unsigned id, const ek_decode_packet *p);
void qid_on_elems(void *ctx, unsigned id, const ek_elem *e, size_t n);
void qid_free(idst *d);
/* The thread a context packet names (pid source per TRCCONFIGR), or -1. */
int32_t qid_ctx_tid(const idst *d, uint32_t cid, int cid_valid, uint32_t vmid, int vmid_valid);
/* The process of a thread (the thread itself when none is known). */
int32_t qid_pid_for_tid(qjob *j, int32_t tid);

/* ---- qcode.c: code through the maps as a thread saw them ---- */

static inline int is_kernel_addr(uint64_t addr)
{
    return (addr >> 63) != 0;
}
/* The map and DSO bytes for addr as thread pid saw it during (t_lo, t_hi] (at t with has_t):
 * 1 with the span in *out, or 0 with the reason (miss_kind) in *kind and the DSO in
 * *dso_out. ambiguous, valid_to (may be NULL): whether the answer depends on the time, and
 * until when it holds. res (may be NULL) counts ambiguous and late choices. */
int qcode_at(ek_session *s, uint64_t t_lo, uint64_t t_hi, int has_t, uint64_t t, qresult *res,
             int32_t pid, uint64_t addr, ek_mem_span *out, int *kind, as_dso **dso_out,
             int *ambiguous, uint64_t *valid_to);
/* ek_flow_mem for a trace ID's flow decoder (ctx: idst) */
int qcode_mem_find(void *ctx, uint64_t addr, uint32_t space, uint8_t trace_id, ek_mem_span *out);
uint64_t qcode_mem_gen(void *ctx);
/* ek_synth_io.read (ctx: idst): code as the sample's thread saw it */
size_t qcode_synth_read(void *ctx, uint64_t addr, void *buf, size_t len);

/* ---- qblock.c: the blocks (AUX slices) and the elements the decode tree makes of them ---- */

/* Load the next slice as the current block; 0 when there is none. */
int qblock_load(qjob *j);
/* Refill the pending elements (0), or 1 when the block is used up, or a negative status. */
int qblock_refill(qjob *j);
/* Let go of the last block's bytes: the whole pages inside them. */
void qblock_release(qjob *j);
/* The whole pages (of pg bytes, a power of two) inside [a, a + len): [*lo, *hi), none when
 * *hi <= *lo. The edges are left: they hold other records' bytes, and the file's release
 * (ek_perf_release) rounds outwards to the system's pages. */
static inline void qblock_inner_pages(uintptr_t a, size_t len, uintptr_t pg, uintptr_t *lo,
                                      uintptr_t *hi)
{
    *lo = (a + pg - 1) & ~(pg - 1);
    *hi = (a + len) & ~(pg - 1);
}
/* Queue qi is at file offset off (UINT64_MAX: done); the file is released up to the lowest
 * queue's position (run.c sets up s->rel_pos; NULL: nothing to do). */
void qblock_mark(ek_session *s, size_t qi, uint64_t off);

/* ---- qout.c: the writer's side of the hand-over is in session_int.h ---- */

/* Hand the bytes written so far to the writer as one chunk (last: the queue's last). */
int qout_flush(qout *o, int last);
/* A new epoch of this queue with perf's heap key. */
int qout_epoch(qjob *j, uint64_t key);

/* ---- qdecode.c ---- */

/* ek_synth_io.sample (ctx: idst) */
int qdecode_on_sample(void *ctx, const ek_sample *smp);

#endif
