/* Internals of ek_session shared by its files: session.c (open), sideband.c, sdiag.c, run.c
 * (threads, perf's order, the consumers), qdecode.c and its parts (one queue's decode:
 * qdecode.h), resolve.c, jit.c and account.c (the account, as data). */
#ifndef ETMKIT_SESSION_INT_H
#define ETMKIT_SESSION_INT_H

#include <pthread.h>
#include <stdint.h>

#include "core/vec.h"
#include "etmkit/diag.h"
#include "etmkit/perf.h"
#include "etmkit/session.h"
#include "session/aspace.h"
#include "session/dso.h"

/* One "current thread" entry of a CPU: from ITRACE_START and context-switch records. */
typedef struct cpu_thread {
    uint64_t key;
    int32_t pid, tid;
} cpu_thread;

typedef struct cpu_timeline {
    int32_t cpu;
    EK_VEC(cpu_thread) v; /* by key */
} cpu_timeline;

/* ---- what could not be used (account.c) ---------------------------------------------------- */

typedef enum miss_kind {
    MISS_NO_MAP = 0,     /* user address of a process that no map covers */
    MISS_NO_KMAP,        /* kernel address that no kernel map covers */
    MISS_DSO,            /* a map covers it, its file could not be used (see dso->status) */
    MISS_KERNEL,         /* kernel map, but no kernel image (vmlinux / kcore) */
    MISS_OUTSIDE,        /* the file is there but holds no code at that offset */
    MISS_NKINDS
} miss_kind;

typedef struct miss {
    int kind;            /* miss_kind */
    int32_t pid;         /* -1 kernel */
    as_dso *dso;         /* MISS_DSO, MISS_KERNEL, MISS_OUTSIDE */
    uint64_t lo, hi;     /* addresses seen */
    uint64_t count;      /* NACC elements */
    uint64_t bytes;      /* trace bytes that could not be decoded because of it */
    uint64_t first_offset; /* file offset of the first trace byte concerned */
} miss;

/* Gap kinds the report explains further */
#define GAP_NO_ID "formatter data before the slice's first trace ID"

typedef struct gap {     /* trace bytes lost for other reasons, by kind */
    const char *kind;
    uint64_t bytes, count, first_offset;
} gap;

typedef struct qresult { /* what one queue's decode leaves for the report */
    EK_VEC(miss) misses;
    EK_VEC(gap) gaps;
    uint64_t packets, elements, instructions, branches, instrs_samples;
    uint64_t trace_bytes, nacc, errors;
    uint64_t data_bytes;     /* trace bytes after the formatter (by trace ID) */
    uint64_t decoded_bytes;  /* packet bytes that fed instruction flow */
    uint64_t noid_bytes;     /* formatter data without a trace ID */
    uint64_t ambiguous, late;  /* map choices (aspace AS_HIT_*) */
} qresult;

void qresult_free(qresult *r);
miss *qresult_miss(qresult *r, int kind, int32_t pid, as_dso *dso, uint64_t addr,
                   uint64_t offset);
void qresult_gap(qresult *r, const char *kind, uint64_t bytes, uint64_t offset);

/* Diagnostics from the reader and the decoders, grouped by kind (thread-safe). */
typedef struct diag_group {
    char *kind;
    int sev;
    uint64_t count;
    /* an example: the event earliest in the file (the first reported when none has an offset) */
    char *first;            /* formatted */
    char *msg, *file;       /* its message and file (may be NULL) */
    int64_t record;         /* its record (-1: none) */
    int trace_id;           /* its trace ID (-1: none) */
    int64_t example_offset; /* its offset (-1: none) */
    int64_t offsets[8];     /* the lowest offsets, ascending */
    unsigned noffsets;
} diag_group;

/* ---- JIT code (jit.c) ------------------------------------------------------------------------ */

struct ek_jitdump;

/* A jitdump a process mapped (perf's marker MMAP2 of .../jit-PID.dump), or the one given with
 * --jitdump. */
typedef struct jit_src {
    int32_t pid;
    const char *recorded; /* the name in the MMAP2 record (NULL: given with --jitdump) */
    int64_t record;       /* that record, -1 */
    uint64_t offset;
    char *path;  /* the file read (NULL: none) */
    char *tried; /* where it was looked for ("a, b") */
    int status;  /* 0 read; EK_ERR_NOT_FOUND, EK_ERR_FORMAT, EK_ERR_UNSUPPORTED (clock) */
    struct ek_jitdump *dump;
    uint64_t loads, moves; /* records turned into maps */
} jit_src;

/* A MMAP2 record of pid names a file: note it when it is a jitdump (ek_jitdump_name_matches). */
void jit_note_mmap(ek_session *s, int32_t pid, const char *filename, int64_t record,
                   uint64_t offset);
/* Find and read the jitdumps, and turn their loads and moves into maps of JIT code (aspace
 * events, before as_build). */
int jit_load_all(ek_session *s);
void jit_free_all(ek_session *s);
/* The jitdump of pid (NULL: the process mapped none). */
const jit_src *jit_of(const ek_session *s, int32_t pid);

/* ---- trace snapshot folders (snap.c) ---------------------------------------------------------- */

typedef struct snap_sess snap_sess;
struct ek_snapshot;
struct ek_account_source;
/* the folder holds a snapshot.ini */
int snap_is_dir(const char *path);
/* read the snapshot at s->path, check the --image specs (s->snap set, also on failure) */
int snap_open(ek_session *s);
void snap_free(snap_sess *sn);
int snap_run(ek_session *s, const ek_consumer *c);
const struct ek_snapshot *snap_snapshot(const ek_session *s);
const struct ek_account_source *snap_sources(const ek_session *s, size_t *n);

/* unreadable code of a snapshot, as address ranges (snap_nacc_ranges: malloc'ed) */
#define SNAP_RANGE_GAP 0x100000u /* addresses further apart: separate ranges */
typedef struct snap_range {
    uint64_t lo, hi;       /* the lowest and highest address seen */
    uint64_t count;        /* ADDR_NACC elements */
    uint64_t first_index;  /* trace index of the first */
    int trace_id;          /* -1: several */
    const char *ini;       /* the core's device file (where a [dump] goes) */
    const char *core;
} snap_range;
int snap_nacc_ranges(ek_session *s, snap_range **out, size_t *n);

/* ---- the session --------------------------------------------------------------------------- */

struct ek_session {
    ek_session_opts o;
    snap_sess *snap;         /* a trace snapshot folder (snap.c): the perf fields are unused */
    char *path, *data_path, *kcore_dir;
    ek_diag user_diag;
    pthread_mutex_t diag_lock;
    EK_VEC(diag_group) dgroups; /* every diagnostic, grouped, for the report */
    size_t *dg_slot, dg_mask;   /* (kind, file) -> dgroups index (sdiag.c) */
    ek_diag diag;            /* feeds dgroups and forwards to user_diag */
    ek_perf_file *pf;
    ek_perf_queues *pq;
    const ek_perf_cs_etm *cs;
    aspace *as;
    dso_reg *reg;
    EK_VEC(cpu_timeline) cpus;
    /* key (time) of every record that carries one, by record number: AUX records */
    EK_VEC(uint64_t) aux_keys; /* parallel to ek_perf_aux_records() */
    int timeless;            /* no CoreSight time stamps used for ordering */
    int ts_convert;          /* CoreSight time stamps convert to perf time */
    int ts_try;              /* they may (TS_SOURCE unknown): use the ones that fit the slices */
    const ek_perf_time_conv *tc;
    int has_time;            /* records carry perf time */
    int no_insn;             /* the output does not show instruction bytes */
    char event_names[2][32]; /* ek_session_info.event_names */
    /* results */
    int ran;
    qresult *qres;           /* one per queue */
    size_t nqres;
    /* decoded trace handed back behind every queue (qblock_mark): the file offset of each
     * queue's current slice (UINT64_MAX: done), and how far the file has been released */
    pthread_mutex_t rel_mu;
    uint64_t *rel_pos;
    uint64_t rel_upto;
    ek_session_stats st;
    uint64_t lost_records, lost_events;
    EK_VEC(char *) strings;  /* owned copies of names the aspace points at */
    EK_VEC(jit_src) jits;   /* jitdumps (jit.c) */
    /* progress (o.progress): trace bytes of finished slices, added by the decoder threads;
     * the writer (the caller's thread) reports it when it changed */
    _Atomic uint64_t progress_done;
    uint64_t progress_total, progress_told;
};

/* The session's diagnostic sink (sdiag.c): groups every event, forwards it to the caller's. */
void session_diag_fn(void *ctx, const ek_diag_event *ev);
/* The groups in an order that does not depend on the decoder threads' (after they finished). */
void session_diag_settle(ek_session *s);
/* Read the sideband records (sideband.c): the timeline's events, CPUs' threads, AUX times. */
int session_sideband(ek_session *s);

/* The thread running on cpu at key (from ITRACE_START / switch records); 0 if unknown. */
int session_cpu_thread(const ek_session *s, int32_t cpu, uint64_t key, int32_t *pid,
                       int32_t *tid);

/* ---- queue output: chunks of encoded samples, handed from a decoder thread to the writer ----- */

/* What a decoder thread makes of its samples: the staged consumer's encode (ek_session_run's
 * own record encoding for an ordered consumer). */
typedef struct qfmt {
    const ek_consumer *c; /* staged (encode set); NULL or no encode: no output, only results */
    int elems;            /* ordered consumer that wants elements: element records too */
    uint32_t elem_types, elem_flags; /* which (ek_consumer's) */
    const ek_consumer *staged;       /* an ordered consumer with a stage (its stage, queue_begin,
                                        queue_end), or NULL */
} qfmt;

/* Does a consumer with these element masks (ek_consumer.elem_types, elem_flags) want e? */
static inline int session_wants_elem(uint32_t types, uint32_t flags, const ek_elem *e)
{
    return (!types || (e->type < 32 && (types >> e->type) & 1u)) && (!flags || (e->flags & flags));
}

/* The record of one element for an ordered consumer (run.c). */
void session_elem_record(ek_sbuf *out, const ek_session_elem *e);

/* A run of a chunk's bytes that belongs to one epoch (or continues the previous chunk's). */
typedef struct qseg {
    size_t off;
    uint64_t key;  /* head: perf's heap ordinal of this epoch */
    uint8_t head;  /* starts an epoch (perf: one pop of this queue's heap entry) */
} qseg;

typedef struct qchunk {
    struct qchunk *next;
    uint8_t last;  /* the queue's last chunk */
    size_t len;
    char *data;    /* len bytes (an ek_sbuf's buffer, handed over without copying) */
    size_t cap;
    qseg *segs;    /* segs[0].off == 0 */
    size_t nsegs, segcap;
} qchunk;

/* Run tokens: with -j N (ek_session_opts.threads) at most N of the run's threads work at once,
 * the decoders and the writer (the thread that called the run: ordered consumers, the text
 * writer) together; each gives its token back while it waits for another (back-pressure, or
 * output not there yet). So -j 1 is one core whatever the recording, as a Dask worker thread
 * or a `make -j` slot expects. NULL: no limit (threads 0: every queue's thread runs). */
typedef struct qtok {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned free;
} qtok;
void qtok_get(qtok *t);
void qtok_put(qtok *t);

typedef struct qout {
    qtok *tok;          /* run tokens (NULL: none) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    qchunk *first, *last;
    size_t bytes;       /* in complete, unconsumed chunks */
    size_t nsegs;       /* their epochs */
    size_t limit;       /* the decoder waits above this (with a complete chunk to take) */
    int done;           /* the last chunk is in */
    int writer_waits, decoder_waits;
    qchunk *spare;      /* consumed chunks, for reuse (no malloc/free per chunk) */
    /* decoder side: the chunk being filled */
    ek_sbuf cur;
    EK_VEC(qseg) segs;
} qout;

/* perf time of a CoreSight time stamp if it is plausible for a slice recorded during
 * (t_lo, t_hi]; 0 when time stamps cannot be used. */
int session_ts_time(const ek_session *s, uint64_t counter, uint64_t t_lo, uint64_t t_hi,
                    uint64_t *t);

/* A decoder hands its text on in chunks of about QOUT_CHUNK bytes and waits while more than
 * QOUT_LIMIT bytes of its queue are not yet written. (Smaller ones, meant to keep the buffers
 * in cache, made the decoders wait for the writer's heap order far more often: 32 KiB chunks
 * within 128 KiB per queue cost 40% more CPU time on the bench workload.) */
#define QOUT_CHUNK (256u << 10)
#define QOUT_LIMIT (4u << 20)
/* ... or of QOUT_SEGS epochs, whichever comes first: a queue with many time stamps and little
 * output (decoding with sparse samples) made one chunk of every epoch in its trace, memory
 * growing with the recording (6.7 MB of epoch heads for 16 MiB of trace). The decoder also
 * waits while more than QOUT_SEGS_LIMIT epochs (24 bytes each) are not yet written. */
#define QOUT_SEGS 4096u
#define QOUT_SEGS_LIMIT (4 * QOUT_SEGS)
static inline int qout_full(const qout *o)
{
    return o->cur.len >= QOUT_CHUNK || o->segs.n >= QOUT_SEGS;
}

/* Which queue a decoder thread takes next (run.c). The first worker (in_order) takes them in
 * the writer's order, so the queue the writer waits for is always taken and no worker waits
 * on one the writer does not reach. Without time stamps (the writer takes queue after queue)
 * the others take the longest one left: the queues are not of one length (the CPUs of a
 * recording are not equally busy), and in order the longest one could start last and decode
 * alone at the end. taken NULL: all in order. nq when none is left. */
typedef struct qpick {
    size_t nq;
    size_t next;           /* the first queue (in the writer's order) not yet taken */
    uint8_t *taken;        /* the queues taken (NULL: in order, next alone) */
    uint64_t *bytes;       /* with taken: each queue's trace bytes */
} qpick;

static inline size_t qpick_take(qpick *p, int in_order)
{
    while (p->next < p->nq && p->taken && p->taken[p->next])
        p->next++;
    if (p->next >= p->nq) return p->nq;
    size_t k = p->next;
    if (!p->taken) {
        p->next++;
        return k;
    }
    if (!in_order)
        for (size_t i = p->next + 1; i < p->nq; i++)
            if (!p->taken[i] && p->bytes[i] > p->bytes[k]) k = i;
    p->taken[k] = 1;
    return k;
}

void qout_init(qout *o, size_t limit);
void qout_free(qout *o);
/* Something for the writer to do while it waits (NULL: nothing). */
typedef struct qidle {
    void (*fn)(void *ctx);
    void *ctx;
} qidle;
#define QIDLE_MS 100
/* writer side: the first complete chunk (waits for it); NULL when the queue is finished.
 * With idle: idle->fn is called first, and every QIDLE_MS of waiting. */
qchunk *qout_peek(qout *o, const qidle *idle);
void qout_pop(qout *o);

/* Decode queue qi into out (encoding with fmt) and fill *res. Runs on any thread. A fmt
 * without a consumer's encode: nothing goes to out (no samples, no epochs), only *res. */
int qdecode_run(ek_session *s, size_t qi, const qfmt *fmt, qout *out, qresult *res);

/* The resolver of samples of a slice with time window (t_lo, t_hi] (resolve.c): the public
 * part (ek_sample_ctx) first, so that the consumer's context is the resolver's. */
typedef struct rcache rcache; /* a decoder thread's last maps and symbols */
typedef struct rctx {
    ek_sample_ctx pub;  /* has_t, t: the sample's time from CoreSight time stamps */
    ek_script_resolver r;
    ek_session *s;
    uint64_t t_lo, t_hi;
    rcache *cache;      /* may be NULL */
} rctx;
void rctx_init(rctx *c, ek_session *s, uint64_t t_lo, uint64_t t_hi, rcache *cache, int has_t,
               uint64_t t);
/* c (made by rctx_init) for another sample: its window and time, and nothing it depended on */
static inline void rctx_sample(rctx *c, uint64_t t_lo, uint64_t t_hi, int has_t, uint64_t t)
{
    c->t_lo = t_lo;
    c->t_hi = t_hi;
    c->pub.block = 0;
    c->pub.has_t = has_t;
    c->pub.t = t;
    c->pub.unstable = 0;
    c->pub.v_lo = 0;
    c->pub.v_hi = UINT64_MAX;
}
rcache *rcache_new(void);

#endif
