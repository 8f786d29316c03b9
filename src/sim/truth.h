/* The ground truth of a simulation: shared by the files that compute it (private to src/sim).
 *
 *   truth.c          every executed branch (truth.branches.tsv); what a decoder receives for
 *                    one slice of sink data: the packets of each trace ID as decoder
 *                    operations, in the order the deformatter hands them over
 *   truth_decode.c   operations -> the elements a decoder outputs: VIEW_TRUE from what the
 *                    machine executed (and what a decoder can read), VIEW_PERF as perf 6.1
 *                    with OpenCSD 1.3.3 reads memory
 *   truth_queue.c    perf's AUX queues, blocks, packet queues and time-ordered heap, with two
 *                    policies: a correct decoder's (expected-*.txt) and perf 6.1's
 *                    (perf-6.1-expected.txt)
 *   truth_samples.c  perf's packet and sample rules (flags, trace begin / end, instruction
 *                    periods, last-branch stacks) and one "lane" per output file: branches,
 *                    instructions, last-branch stacks, call stacks, sample times
 *
 * Nothing here calls etmkit's decoder (src/flow, src/synth, src/session): the truth is made
 * from what the simulator executed and encoded, which is what makes it a test. */
#ifndef ETMKIT_SIM_TRUTH_H
#define ETMKIT_SIM_TRUTH_H

#include <stdint.h>
#include <stdio.h>

#include "etmkit/sbuf.h"
#include "sim/sim.h"

/* VIEW_TRUE: a correct decoder's view (ranges from what ran, code readable where symfs has
 * it); VIEW_PERF: perf 6.1's (it walks instructions in the memory it has at decode time) */
enum { VIEW_TRUE = 0, VIEW_PERF = 1 };

/* ------------------------------------------------------------------ decoding (truth_decode.c) */

typedef struct tr_pend {
    uint8_t kind; /* SIM_E_TRACE_ON, SIM_E_CONTEXT, SIM_E_TIMESTAMP, SIM_E_EXC_RET, 0xFF address */
    uint8_t el;
    uint64_t v;
} tr_pend;

typedef struct tr_idstate {
    tr_pend pending[64];
    unsigned npend;
    int need_addr, need_ctxt;
    int rs_pop;
    int exc_wait;
    uint32_t exc_idx;
    uint64_t exc_ret;
    uint64_t pos;
    uint64_t rs[16];
    unsigned rs_head, rs_n;
    int tid; /* perf view: thread whose maps are used (tidq->thread) */
} tr_idstate;

/* perf view: OpenCSD 1.3.3's memory access cache (one per decode tree, i.e. per perf queue):
 * 12 pages of up to 256 bytes, each read from the address that missed, replaced round robin,
 * all invalidated when a context element is committed */
#define TR_CACHE_PAGES 12
#define TR_CACHE_PAGE  256
typedef struct tr_mcache {
    struct {
        uint64_t st;
        uint32_t len;
        const uint8_t *data; /* the bytes the page holds (the file perf read them from) */
    } pg[TR_CACHE_PAGES];
    int idx, next;
} tr_mcache;

typedef struct tr_decoder {
    sim *S;
    tr_mcache *cache; /* perf view: the queue's */
    sim_session *s;
    int view;
    uint64_t map_time; /* perf view: mappings made up to this time are known */
    int timeless;
    tr_idstate st[128];
    int global_tid; /* timeless: one thread for all IDs */
    sim_elem_vec *out;
    int cur_cpu; /* the trace unit of the op being decoded */
    int err;
    /* perf view, a kernel module (S->kmod): its symbols are loaded (its first read does it:
     * from then on the kernel's maps hold its section maps); kmod_read, the element of the
     * block being decoded before which the block's first read of its code happened
     * (SIZE_MAX: none) */
    int kmod_loaded;
    size_t kmod_read;
} tr_decoder;

/* The elements a decoder outputs for the operations of one slice (it starts from reset). */
int tr_decode_ops(tr_decoder *d, const sim_op_vec *ops, sim_elem_vec *out);
/* perf view: the mapping perf has for an address of a process at map_time (kernel: global) */
const sim_map *tr_perf_map_pid(const sim *S, uint64_t map_time, int pid, uint64_t a);
/* perf view: the instruction word at a in thread tid's memory; -1 when perf cannot read it */
int tr_perf_word(const tr_decoder *d, int tid, uint64_t a, uint32_t *w, uint32_t *serial);
/* the mapping with this serial (0: the kernel) */
const sim_map *tr_map_by_serial(const sim *S, uint32_t serial);

/* ------------------------------------------------------------------ perf's packets */

enum { PT_EMPTY = 0, PT_RANGE, PT_DISCONT, PT_EXC, PT_EXC_RET, PT_CTX, PT_NACC, PT_TIME };

typedef struct tr_pkt {
    int type;
    uint64_t start, end; /* RANGE; CTX: start = thread; TIME: start = perf time (ns) */
    uint32_t ninstr, map;
    int cls, taken, exc, cpu, trace_id;
    uint32_t flags;
    uint8_t svc_before, svc_at_end;
    uint32_t stack; /* RANGE: call stack of its instructions (sim stack node) */
} tr_pkt;

/* ------------------------------------------------------------------ lanes (truth_samples.c) */

/* One output file: the samples of one `perf script --itrace=... -F ...` invocation. */
enum {
    LANE_BRANCHES = 0,
    LANE_INSNS,
    LANE_LBR,
    LANE_STACKS,
    LANE_TIMES,
    LANE_CALLS,   /* --itrace=c (S->itrace_lanes) */
    LANE_RETURNS, /* --itrace=r */
    LANE_SKIP,    /* --itrace=i100ibs<SIM_ITRACE_SKIP> */
    LANE__COUNT
};

#define TR_LBR_MAX 16

typedef struct tr_lane {
    int kind;
    int branches, instructions, last_branch;
    uint64_t period;
    unsigned lb_sz;
    uint32_t filter; /* branch samples with one of these flags only (c, r); 0: all */
    uint64_t skip;   /* lines still to leave out (s) */
    size_t mark;     /* where the line being made starts in out */
    FILE *f;
    ek_sbuf out;
    uint64_t lines;
} tr_lane;

/* A lane's sample state for one trace source (perf's traceid queue fields). */
typedef struct tr_lstate {
    uint64_t period_insns;
    uint32_t lb_nr, lb_pos;
    struct {
        uint64_t from, to;
    } lb[TR_LBR_MAX];
} tr_lstate;

/* perf's traceid queue: sample state and packet queue of one trace source */
typedef struct tr_tq {
    int used;
    int started; /* had elements in the current block */
    int trace_id;
    int cpu; /* the trace ID's CPU in the map of the queue's sink */
    int tid, pid;
    tr_pkt prev, pkt;
    EK_VEC(tr_pkt) q;
    size_t qhead;
    size_t nreal; /* queued packets that take a slot in perf's packet queue */
    uint64_t cs_ts, next_cs_ts, instr_count;
    int has_time;
    uint64_t time; /* the samples' time (ns) */
    tr_lstate ls[LANE__COUNT];
} tr_tq;

typedef struct tr_slice {
    const sim_op_vec *ops;
    uint64_t len;
    int formatted;
    uint64_t aux_time; /* time of the AUX record */
} tr_slice;

typedef struct tr_queue {
    EK_VEC(tr_slice) slices;
    size_t cur; /* next slice to load */
    size_t ei;  /* next element of the loaded slice */
    const tr_slice *ld;
    sim_elem_vec el; /* elements of the loaded slice */
    uint64_t buf_len;
    int tid0;
    int decoded;
    tr_mcache cache;
    size_t kmod_read; /* the loaded block's tr_decoder.kmod_read */
    tr_tq *tqs[128]; /* by trace ID (perf 6.1 without time stamps: one, tqs[0]) */
    int pending_chan;
    /* truth: raw trace of a queue without a CPU (per-thread, TRBE), decoded with the
     * configuration its CPUs share (or the user's --raw-cpu): one trace source, key
     * raw_key, and no CPU in its samples */
    int raw_nocpu;
    int raw_key;
} tr_queue;

typedef struct tr_sym {
    uint64_t start, end;
    const char *name;
    int bind; /* 0 local, 1 global, 2 weak */
    size_t order;
} tr_sym;

typedef struct tr_symtab {
    tr_sym *v;
    size_t n;
    char *names; /* the "name@plt" strings */
} tr_symtab;

typedef struct tr_emu {
    sim *S;
    sim_session *s;
    int view;
    int timeless;
    int ts_convert; /* CoreSight time stamps convert to perf time (else: AUX record times) */
    tr_queue *qs;
    int nq;
    tr_lane lanes[LANE__COUNT];
    int nlanes;
    tr_symtab syms[SIM_MAX_IMAGES];
    int err;
    tr_decoder dec;
    uint8_t known[1 << 16]; /* tids perf has seen (COMM/FORK/ITRACE_START) */
} tr_emu;

int tr_load_syms(const sim_image *img, tr_symtab *t);
/* Process the packets queued for a trace source (perf: cs_etm__process_traceid_queue). */
void tr_process_tq(tr_emu *m, tr_tq *t);
/* perf's cs_etm__end_block: the last-branch flush of a block's end */
void tr_end_block(tr_emu *m, tr_tq *t);
void tr_set_tid(tr_emu *m, tr_tq *t, int tid);
/* write what the lanes hold to their files */
void tr_lanes_flush(tr_emu *m, int force);

#endif
