/* Internal interfaces of etmkit's CoreSight system simulator (`etmkit gen`).
 *
 *   machine.c   processes, threads, CPUs and the scheduler; walks the real instructions of the
 *               embedded images (image.c) with a seeded random source and calls the ETM model
 *               at every waypoint (branch, exception, exception return, context switch)
 *   etm.c       one ETM per CPU: view filter (exception levels, session scope), sync, and the
 *               packet encoder (src/etm4/encode.c); keeps a packet-level truth when asked
 *   sink.c      funnel + CoreSight formatter, shared sinks (ETR/ETF) with session arbitration,
 *               per-CPU raw sinks (TRBE-like), perf AUX rings and the `perf record` reader
 *   perfdata.c  perf.data writer (streaming)          snapshot.c  snapshot folder writer
 *   truth.c     reference decode of what was written (packets -> the elements a correct
 *               decoder outputs), perf 6.1's sample policy, symbols, perf-script text
 *   scenario.c  the scenario table and ek_sim_run()
 */
#ifndef ETMKIT_SIM_SIM_H
#define ETMKIT_SIM_SIM_H

#include <stdint.h>
#include <stdio.h>

#include "core/vec.h"
#include "sim/enc_etm4.h"
#include "etmkit/diag.h"
#include "etmkit/sbuf.h"
#include "etmkit/sim.h"
#include "sim/image.h"
#include "sim/rng.h"

#define SIM_MAX_CPUS     8
#define SIM_MAX_SESSIONS 6
#define SIM_NO_OWNER     (-2147483647 - 1) /* sink owner when free (kernel events use pid -1) */
#define SIM_MAX_MAPS     32
#define SIM_MAX_IMAGES   64
/* the full ground truth is computed up to this trace budget (about 110 bytes of memory and
 * 300 bytes of expected files per trace byte); above it, a summary */
#define SIM_TRUTH_MAX     (4ull << 20)
#define SIM_PROGRESS_STEP (256u << 10) /* trace bytes between calls of opts->progress */
#define SIM_MAX_SCRIPT    32
#define SIM_NSYSCALLS     11 /* system calls of the kernel image (machine.c), sys_ni_syscall last */
#define SIM_REAL_MAX      8  /* real binaries a run can load (realcode.c) */
/* slot annotations of real binaries (realcode.c), beyond those of simmeta.h */
#define SIM_DEC_GUIDED 10 /* conditional branch: chosen among successors that can return */
#define SIM_DEC_REAL   11 /* indirect branch: target from realcode.c's analysis */
/* simulated time starts one second after boot: trace timestamps are never zero */
#define SIM_BOOT_NS 1000000000ull

typedef struct sim sim;
typedef struct sim_thread sim_thread;
typedef struct sim_process sim_process;
typedef struct sim_session sim_session;
typedef struct sim_event sim_event;
typedef struct sim_sink sim_sink;

/* ------------------------------------------------------------------ machine */

typedef struct sim_map {
    uint64_t start, end; /* runtime addresses of the code segment */
    uint64_t bias;       /* runtime = link-time + bias */
    const sim_image *img;
    uint32_t serial; /* identifies this mapping instance (dlopen reuse) */
    int pid;
    uint64_t time;    /* when it was made */
    const char *path; /* the name a decoder prints for it (NULL: the image's path) */
    uint8_t jit;      /* code a JIT installed: no MMAP record, only the jitdump knows it */
    uint8_t exact;    /* [start, end) as given, not widened to pages */
} sim_map;

/* A JIT in a process (machine.c): it allocates code in an anonymous executable code cache,
 * copies functions there (JIT_CODE_LOAD), moves them (JIT_CODE_MOVE) and, when the cache is
 * collected, installs other code at the same addresses. It writes what it did into
 * jit-PID.dump (perf's jitdump format), which it maps so that `perf record -k 1` sees it,
 * and into perf-PID.map. */
enum { SIM_JIT_LOAD = 0, SIM_JIT_MOVE = 1, SIM_JIT_DEBUG_INFO = 2, SIM_JIT_CLOSE = 3 };
typedef struct sim_jitrec {
    uint32_t id; /* SIM_JIT_* */
    uint64_t time;
    int tid;
    uint64_t addr, old_addr, size, index;
    const sim_image *img; /* LOAD, MOVE, DEBUG_INFO: the code */
} sim_jitrec;

typedef struct sim_jit {
    uint64_t cache, cache_size, next; /* code cache and its allocation pointer */
    uint64_t dump_addr;               /* where jit-PID.dump is mapped */
    char dir[96];                     /* folder of the jitdump (perf inject writes there too) */
    char dump_path[128];
    uint64_t start_time, next_index;
    int started;
    int pending; /* an action is due but the other threads are not at a safepoint yet */
    uint32_t loads, moves, gcs, deferred;
    EK_VEC(sim_jitrec) recs;
} sim_jit;

/* Scripted actions a process runs between work steps (the SIM_DEC_SCRIPT blr). */
typedef enum sim_action {
    SIM_ACT_NONE = 0,
    SIM_ACT_GETPID,
    SIM_ACT_WRITE,
    SIM_ACT_YIELD,
    SIM_ACT_SLEEP,
    SIM_ACT_DLOPEN,  /* map the next library of the process's library list */
    SIM_ACT_DLCLOSE, /* unmap the most recent library */
    SIM_ACT_CLONE,   /* start a thread at thread_entry */
    SIM_ACT_EXEC,    /* exec the next program */
    SIM_ACT_JIT,     /* the process's JIT compiles, moves or collects code (mprotect) */
    SIM_ACT__COUNT
} sim_action;

typedef struct sim_step {
    uint32_t at; /* work-step number of the main thread when the action runs */
    sim_action action;
} sim_step;

struct sim_process {
    int pid;
    char comm[16];
    const sim_image *exe;
    sim_map maps[SIM_MAX_MAPS];
    int nmaps;
    int live_threads;
    int exited;
    const sim_image *libs[4]; /* libraries dlopen maps, in order */
    int nlibs, next_lib;
    uint64_t lib_base;
    const sim_image *next_exe;
    sim_step script[SIM_MAX_SCRIPT];
    int nscript, script_pos;
    uint32_t steps;          /* work steps done by the main thread */
    unsigned random_actions; /* chance (of 256) of a random harmless action per step */
    uint64_t thread_budget;  /* instructions each new thread works for */
    unsigned session_mask;   /* per-task sessions following this process */
    int parent;
    sim_jit *jit;        /* a JIT runs in it (NULL: none) */
    int real;            /* runs real binaries: only sleep, yield and exit act on the machine */
    unsigned jit_every;  /* its main thread runs a JIT action every that many work steps */
    uint64_t hold_until; /* JIT safepoint: no thread of it starts running before this time */
};

typedef struct sim_frame {
    uint64_t addr;
    uint64_t budget; /* the thread's work budget when the frame was made (real code) */
    uint8_t exc;     /* 1: exception frame (ERET returns here, to EL 'el') */
    uint8_t el;
    uint32_t node; /* truth: the call stack up to and including this frame (sim_snode) */
} sim_frame;

/* Truth: one frame of a call stack as a persistent list (every frame ever pushed, linked to
 * the frames below it); node 0 is the empty stack. */
typedef struct sim_snode {
    uint64_t addr;   /* return address */
    uint32_t parent; /* the frames below */
    uint32_t map;    /* mapping serial of the return address's code (0: the kernel) */
    uint8_t exc;     /* an exception's frame */
} sim_snode;

enum { SIM_T_NEW, SIM_T_RUNNABLE, SIM_T_RUNNING, SIM_T_SLEEPING, SIM_T_DEAD };

struct sim_thread {
    int tid;
    sim_process *proc;
    int state;
    int idle; /* the per-CPU idle thread (pid 0) */
    int cpu;
    uint64_t pc;
    int el;
    sim_frame *stack;
    unsigned depth, cap;
    uint64_t xreg[9]; /* constants loaded by MOVZ into x0..x8 */
    int sc_nr;
    uint64_t budget; /* instructions of work left (SIM_DEC_CONTINUE) */
    uint64_t wake_at;
    uint64_t off_at; /* when it last stopped running on a CPU */
    const sim_map *mcache;
    uint32_t serial;
    int seen_by[SIM_MAX_SESSIONS]; /* ITRACE_START written for this thread */
};

/* One executed branch for the ground truth file. */
typedef struct sim_branch_rec {
    uint64_t time, from, to;
    int cpu, pid, tid, el;
    uint8_t cls, taken;
} sim_branch_rec;

/* ------------------------------------------------------------------ truth */

/* Packet written by an ETM, as the truth decoder needs it. */
typedef struct sim_tpkt {
    uint64_t off; /* offset in the trace ID's byte stream */
    uint32_t len;
    uint8_t kind; /* ek_etm4_enc_kind */
    uint8_t natoms;
    uint16_t pad;
    uint32_t atom_bits;
    uint32_t first_atom; /* index into the ETM's atom list */
    uint32_t aux;        /* EXCEPT: index into the ETM's exception list */
    uint64_t addr;       /* ADDR/ADDR_CTXT: address; TIMESTAMP: value */
    uint32_t cid;        /* ADDR_CTXT/CTXT */
    uint8_t el;
} sim_tpkt;

/* What one atom stands for: the range a correct decoder outputs for it. */
typedef struct sim_tatom {
    uint64_t start, end; /* [start, end): end is the address after the branch */
    uint32_t map;        /* mapping serial of the code (0 = kernel) */
    uint32_t stack;      /* call stack of the range's instructions (sim_snode) */
    uint8_t cls;         /* SIM_I_* of the branch */
    uint8_t svc_before;  /* the word before 'start' is an SVC */
} sim_tatom;

typedef struct sim_texc {
    uint64_t start, ret; /* straight-line range before the exception: [start, ret) */
    uint32_t map;
    uint32_t stack; /* call stack of the range (sim_snode) */
    uint8_t type;
    uint8_t svc_at_end; /* the instruction before 'ret' is an SVC */
} sim_texc;

/* Element a correct decoder outputs (OpenCSD generic element subset perf uses). */
enum {
    SIM_E_NO_SYNC = 1,
    SIM_E_TRACE_ON,
    SIM_E_RANGE,
    SIM_E_EXCEPTION,
    SIM_E_EXC_RET,
    SIM_E_CONTEXT,
    SIM_E_TIMESTAMP,
    SIM_E_NACC /* code the decoder cannot read: it waits for the next address */
};

typedef struct sim_elem {
    uint8_t kind;
    uint8_t trace_id;
    uint8_t cls;        /* RANGE: class of the last instruction (SIM_I_OTHER for none) */
    uint8_t taken;      /* RANGE: last instruction executed as a taken branch */
    uint8_t svc_before; /* RANGE: word before start is an SVC */
    uint8_t svc_at_end; /* RANGE: last instruction is an SVC */
    uint8_t el;
    uint8_t exc; /* EXCEPTION: number */
    uint8_t cpu; /* the CPU whose trace unit produced it */
    uint32_t ninstr;
    uint32_t map;        /* RANGE: mapping serial */
    uint32_t stack;      /* RANGE: call stack of its instructions (sim_snode) */
    uint64_t start, end; /* RANGE; CONTEXT: start = context ID; TIMESTAMP: start = value */
    uint64_t gen;        /* position in the queue's data where the element is produced */
} sim_elem;

typedef EK_VEC(sim_elem) sim_elem_vec;

/* Decoder input for one slice, independent of memory (truth.c). */
enum {
    SIM_OP_NO_SYNC = 1,
    SIM_OP_SYNC,
    SIM_OP_TINFO,
    SIM_OP_TRACE_ON,
    SIM_OP_ADDR,
    SIM_OP_CTXT,
    SIM_OP_TS,
    SIM_OP_EXC_RET,
    SIM_OP_EXC,
    SIM_OP_ATOM
};

typedef struct sim_op {
    uint8_t kind;
    uint8_t trace_id;
    uint8_t a;    /* ATOM: taken; CTXT: EL */
    uint8_t cpu;  /* ETM that wrote it */
    uint32_t idx; /* ATOM: atom index; EXC: exception index */
    uint64_t v;   /* ADDR: address; CTXT: context ID; TS: value; EXC: return address */
    uint64_t gen; /* position in the slice where the decoder receives it */
} sim_op;

typedef EK_VEC(sim_op) sim_op_vec;

/* ------------------------------------------------------------------ ETM */

typedef struct sim_etm {
    int cpu;
    sim *S;
    ek_source_config cfg;
    ek_etm4_enc enc;
    uint8_t *buf; /* bytes not yet handed to the sink */
    size_t cap;
    uint64_t produced; /* total bytes of this trace ID stream */
    int enabled;       /* a session's event is running on this CPU */
    sim_session *sess;
    sim_event *ev;
    unsigned el_mask; /* bit n: EL n traced */
    int active;       /* emitting trace now */
    uint64_t pos;     /* next instruction address as a decoder sees it */
    uint32_t pos_map;
    uint32_t pos_stack; /* truth: call stack at pos (sim_snode) */
    uint8_t pos_svc;    /* the word before pos is an SVC */
    int switch_pending; /* a context-switch return waits for its target address */
    uint64_t switch_target;
    ek_etm4_enc_ctx ctx; /* current PE context */
    uint64_t since_sync;
    uint32_t sync_period;
    int truth; /* keep packet-level truth */
    EK_VEC(sim_tpkt) pkts;
    EK_VEC(sim_tatom) atoms;
    EK_VEC(sim_texc) excs;
    uint32_t atoms_packed;
    uint64_t atom_count, branch_count;
    EK_VEC(uint8_t) bytes; /* truth: every byte of this trace ID stream */
} sim_etm;

/* ------------------------------------------------------------------ sinks, sessions */

enum { SIM_SINK_ETR = 1, SIM_SINK_ETF, SIM_SINK_TRBE };
enum { SIM_MODE_PER_CPU = 1, SIM_MODE_PER_THREAD, SIM_MODE_SYSTEM };

/* A trace ID map of the kernel (coresight-trace-id.c): IDs are allocated when a session's
 * events are created, CPU by CPU in CPU order (the legacy ID 0x10 + 2 * cpu when it is valid
 * and free, else the lowest free one), and all released when the last session using the map
 * ends. Linux 6.4-6.11 have one global map, 6.12+ one per sink; before 6.4 IDs are static
 * (the legacy ones). */
typedef struct sim_idmap {
    uint8_t used[128];
    uint8_t cpu_id[SIM_MAX_CPUS]; /* 0: none allocated */
    int sessions;                 /* sessions holding the map */
} sim_idmap;

/* One piece of formatted data: frame 'frame' holds 'count' bytes of 'id' starting at the ID
 * stream offset 'xoff', the first of them at byte 'pos' of the frame. */
typedef struct sim_fseg {
    uint64_t frame;
    uint64_t xoff;
    uint8_t id, pos, count;
} sim_fseg;

struct sim_sink {
    int kind;
    int index;
    uint32_t hw_size; /* bytes (multiple of 16) */
    uint8_t *hw;
    uint64_t written; /* bytes written since enable (monotonic) */
    /* formatter */
    uint8_t frame[16];
    unsigned fpos;
    int cur_id;
    uint64_t frames;       /* frames completed since enable */
    EK_VEC(sim_fseg) segs; /* truth: segments of frames still in the buffer */
    size_t seg_prune_at;
    int truth;
    uint64_t xbase; /* raw sinks: stream offset of the first byte since reset */
    sim_event *ev;  /* raw sinks: the event collecting into it */
    int cpu;
    /* arbitration */
    int owner; /* owning session's perf pid, -1 free */
    int refcnt;
    int barrier;       /* insert a 4 x FSYNC barrier frame after a wrap */
    int partial_flush; /* fault: an incomplete flush drops the tail of the last packet */
    uint32_t sink_id;  /* AUX_OUTPUT_HW_ID v0.1 sink ID (the kernel's hash of the device name) */
    sim_idmap ids;     /* its trace ID map (Linux 6.12+: one per sink) */
    uint64_t stat_refused, stat_copies, stat_lost, stat_mixed;
};

/* A perf AUX record with what it covers. */
typedef struct sim_auxrec {
    uint64_t offset, size, flags;
    uint64_t time;
    int cpu, tid;
    int queue;      /* AUXTRACE idx it lands in */
    sim_op_vec ops; /* truth: decoder input of this slice */
    int formatted;
    int in_snapshot; /* snapshot mode: inside the AUXTRACE buffer perf record wrote */
    uint64_t file_off;
} sim_auxrec;

struct sim_event {
    sim_session *s;
    int idx;     /* AUXTRACE idx: CPU number, or thread index in per-thread mode */
    int cpu;     /* -1 in per-thread mode */
    int tid;     /* thread of a per-thread event, else -1 */
    int running; /* started on a CPU */
    int run_cpu;
    int stopped_err;    /* last start failed */
    uint32_t ring_size; /* AUX ring bytes (power of two) */
    uint8_t *ring;
    uint64_t head, tail; /* monotonic AUX positions; tail = what perf record has read */
    uint64_t id;         /* sample ID of this event (cs_etm attr) */
    uint64_t dummy_id;   /* sample ID of the tracking event on this ring */
    int hwid_sent;
    sim_sink *trbe; /* per-CPU raw sink of this event */
};

/* A record waiting in a session's ring buffer (or written by the perf record model). */
typedef struct sim_rec {
    uint32_t type;
    uint16_t misc;
    int pid, tid, ppid, ptid;
    int cpu;
    uint64_t time;
    uint64_t addr, len, pgoff;
    const sim_image *img;
    char comm[16];
    uint64_t aux_offset, aux_size, aux_flags;
    uint64_t hw_id;
    uint64_t id;
    int aux_index; /* R_AUX: index into session's auxrecs */
    uint64_t seq;
} sim_rec;

typedef struct sim_ring {
    EK_VEC(sim_rec) recs;
    size_t head; /* first record not read by perf record yet */
} sim_ring;

struct sim_session {
    int index;
    int perf_pid; /* pid of the perf tool process owning the events (-1: kernel) */
    int mode;
    int target_pid; /* per-task modes: root of the traced process tree */
    unsigned el_mask;
    int snapshot;
    int ete;
    uint32_t configr;     /* TRCCONFIGR of its ETMs */
    uint32_t attr_config; /* cs_etm perf attr.config */
    int sink_kind;
    int header_version;  /* AUXTRACE_INFO version 0, 1, 2 */
    int ts_source;       /* TS_SOURCE in AUXTRACE_INFO (perf 6.3+); SIM_TS_SOURCE_NONE: absent */
    int hw_id_records;   /* write AUX_OUTPUT_HW_ID */
    int hw_id_minor;     /* their version 0.<minor>: 1 adds the sink ID (Linux 6.12+) */
    int clock_monotonic; /* perf record -k 1: events use CLOCK_MONOTONIC (jitdump time) */
    sim_idmap *idmaps[2 * SIM_MAX_CPUS]; /* trace ID maps the session holds */
    int nidmaps;
    uint32_t ring_size;
    sim_event events[SIM_MAX_CPUS];
    int nevents;
    sim_ring rings[SIM_MAX_CPUS];
    EK_VEC(sim_auxrec) auxrecs;
    uint64_t start_time, stop_time;
    int started, stopped;
    uint64_t next_read;
    uint64_t read_period; /* simulated ns between `perf record` read passes */
    uint64_t read_skew;   /* ns between reading consecutive rings within a pass */
    uint64_t rec_seq;
    /* output */
    struct sim_writer *w;
    char *dir;
    uint64_t aux_bytes;
    uint64_t nrecords;
    EK_VEC(int) known_tids; /* threads perf learns about (COMM, FORK, ITRACE_START) */
    EK_VEC(sim_rec) exits;  /* EXIT records, for perf's timeless decode order */
    uint64_t expected_lines;
    uint64_t perf_lines;
    uint64_t max_aux_time_written;
    uint64_t touched_after_exit; /* events started or records written after the owner exited */
    int no_output;               /* kernel-created events: no perf.data */
    uint64_t mmap2_after_aux;    /* MMAP2 records written after an AUX record with a later time */
    /* raw per-thread trace (TRBE): the user knows that the traced program ran on CPUs
     * configured as CPU raw_cpu (etmkit's --raw-cpu); decoded only with it when the CPUs'
     * configurations differ (truth: OUT/script-options.txt) */
    int raw_cpu_known, raw_cpu;
};

/* ------------------------------------------------------------------ the simulation */

/* The counter behind CoreSight time stamps, and how the kernel's clock relates to it.
 *   SIM_CLK_KERNEL   time stamps are the kernel's clock in ns (TIME_CONV: 1:1)
 *   SIM_CLK_COUNTER  an architected counter at some frequency, from which the kernel's clock
 *                    is derived as arm64 perf's TIME_CONV says:
 *                    ns = zero + (cnt >> shift) * mult + (((cnt & (2^shift - 1)) * mult) >> shift)
 *   SIM_CLK_OTHER    a counter the kernel's clock has no relation to (a separate timestamp
 *                    generator): count = base + ns * num / den */
enum { SIM_CLK_KERNEL = 0, SIM_CLK_COUNTER, SIM_CLK_OTHER };

typedef struct sim_clock {
    int kind;
    uint32_t mult;
    uint16_t shift;
    uint64_t zero;
    uint64_t cycles;         /* TIME_CONV time_cycles (cap_user_time_short) */
    uint64_t base, num, den; /* SIM_CLK_OTHER */
} sim_clock;

/* the time stamp value the trace units write at kernel time ns */
uint64_t sim_clock_count(const sim *S, uint64_t ns);
/* the kernel time (ns) of a time stamp value (SIM_CLK_OTHER: the time it was written) */
uint64_t sim_clock_time(const sim *S, uint64_t count);

/* A kernel module (kmod.c): its .ko, its mapping as loaded, and what perf 6.1 makes of it. */
#define SIM_KMOD_STRAY 8
typedef struct sim_kmod_stray {
    const char *section; /* perf's map "[simmod]<section>" at [0, size), pgoff = file offset */
    uint64_t size, pgoff;
    const char *sym; /* a symbol of it, keyed at st_value + pgoff */
    uint64_t sym_start, sym_size;
} sim_kmod_stray;

typedef struct sim_kmod {
    const uint8_t *ko; /* the .ko file */
    size_t ko_size;
    uint64_t text_off; /* .text's file offset */
    uint8_t build_id[20];
    unsigned build_id_len;
    const char *short_name; /* perf's "[simmod]" */
    sim_map map;            /* its core layout in memory (serial: its code) */
    sim_kmod_stray stray[SIM_KMOD_STRAY];
    int nstray;
    uint64_t write_fn, getpid_fn; /* the system-call handlers it installs */
} sim_kmod;

int sim_kmod_setup(sim *S);
/* the module's mapping if a is in it */
const sim_map *sim_kmod_map(const sim *S, uint64_t a);
void sim_kmod_free(sim *S);

/* A scenario is data: two lists of steps (steps.c runs them), each step one thing set up or
 * done. "The session" is the one the last SESSION step added (or the last one there is), "the
 * process" the one the last SPAWN made. */
typedef enum sim_step_op {
    SIM_ST_END = 0,
    /* the machine */
    SIM_ST_CPUS,          /* a: number of CPUs */
    SIM_ST_NO_VMLINUX,    /* no vmlinux in symfs */
    SIM_ST_ITRACE_LANES,  /* the truth of --itrace=c, r, s */
    SIM_ST_TRACE_ID_TOP,  /* a: trace IDs 1 .. a-1 are usable */
    SIM_ST_CALL,          /* fn(S): what is code, not data (a random topology, real binaries) */
    SIM_ST_SYMFS_OTHER,   /* symfs holds image s2's file for image s (another build) */
    SIM_ST_ETR,           /* a: bytes; one ETR for every CPU */
    SIM_ST_ETR_GROUP,     /* a: bytes; an ETR for CPUs b .. b+c-1 */
    SIM_ST_ETF_PER_CPU,   /* a: bytes; an ETF per CPU */
    SIM_ST_TRBE,          /* a: bytes; a TRBE per CPU */
    SIM_ST_BARRIER,       /* a: the first sink's driver inserts barrier packets (0/1) */
    SIM_ST_PARTIAL_FLUSH, /* the first sink's flushes leave a partial packet */
    SIM_ST_SYNC_PERIOD,   /* CPU a's trace unit synchronises every b bytes */
    SIM_ST_IDR1_REVISION, /* CPU a's trace unit has TRCIDR1.REVISION b (another core type) */
    SIM_ST_TARGET,        /* session a: perf record -- the process spawned next */
    SIM_ST_EVENT_TID,     /* session a's event b follows the thread made next */
    SIM_ST_SPAWN,         /* s on CPU a, traced by the sessions of mask b: the process */
    SIM_ST_SESSION,       /* a: SIM_MODE_*, b: exception levels (1 user, 2 kernel): the session */
    /* the session */
    SIM_ST_EVENTS,          /* a: events (perf record --per-thread: one per thread) */
    SIM_ST_READ_PERIOD,     /* a: ns between perf record's reads */
    SIM_ST_READ_SKEW,       /* a: ns by which ring 0 is read early */
    SIM_ST_RING,            /* a: AUX ring bytes */
    SIM_ST_ETE_TRBE,        /* ETE into TRBEs */
    SIM_ST_SNAPSHOT_MODE,   /* perf record -S */
    SIM_ST_HEADER,          /* a: AUXTRACE_INFO version, b: AUX_OUTPUT_HW_ID records */
    SIM_ST_HWID_MINOR,      /* a: AUX_OUTPUT_HW_ID minor version */
    SIM_ST_CLOCK_MONOTONIC, /* perf record -k 1 */
    SIM_ST_NO_TS_ORDER,     /* no time stamps in the event's config (each buffer decoded whole) */
    SIM_ST_CLOCK,           /* a: SIM_CLK_*: the clock of the time stamps (and TS_SOURCE) */
    SIM_ST_RAW_CPU,         /* the user knows raw trace ran on CPUs configured as CPU a */
    SIM_ST__SESSION_END,
    /* the process */
    SIM_ST_ACTIONS,       /* a: chance (of 256) of a random action per step */
    SIM_ST_SCRIPT,        /* action b at step a */
    SIM_ST_LIB,           /* s: its next library */
    SIM_ST_THREAD_BUDGET, /* a: instructions of each new thread */
    SIM_ST_NEXT_EXE,      /* s: the program it execs */
    SIM_ST_JIT,           /* its JIT on (--config jit_dir), a JIT action every a steps */
} sim_step_op;

typedef struct sim_sc_step {
    sim_step_op op;
    uint64_t a, b, c;
    const char *s, *s2;
    int (*fn)(sim *S);
} sim_sc_step;

typedef struct sim_scenario sim_scenario;
struct sim_scenario {
    const char *name;
    const char *desc;
    int snapshot_folder;      /* output is a snapshot folder (no perf session) */
    uint64_t trace_default;   /* bytes of trace without --trace-size */
    const sim_sc_step *setup; /* the machine: CPUs, sessions, sinks (before it is made) */
    const sim_sc_step *run;   /* after it is made: the processes */
};

struct sim {
    const sim_scenario *sc;
    const ek_sim_opts *opts;
    ek_diag *diag;
    sim_rng rng;
    sim_image images[SIM_MAX_IMAGES];
    int nimages;
    const sim_image *kernel;
    int ncpus;
    uint64_t quantum; /* ns per scheduling round of the CPU loop */
    uint64_t tick;    /* timer interrupt period, ns */
    uint64_t now;     /* global time: start of the current quantum */
    sim_thread **threads;
    size_t nthreads, cap_threads;
    sim_process **procs;
    size_t nprocs, cap_procs;
    int next_pid;
    uint32_t next_serial;
    struct sim_cpu {
        int id;
        uint64_t time;
        sim_thread *cur;
        sim_thread *idle;
        sim_thread **rq;
        size_t nrq, caprq;
        int need_resched;
        uint64_t next_tick;
        sim_etm etm;
        sim_sink *sink; /* shared sink this CPU's ETM reaches (NULL: TRBE) */
        /* TRCIDR1.REVISION of its trace unit: a cluster of another core type (big.LITTLE)
         * has other ID registers (0: every CPU's default) */
        uint32_t idr1_revision;
    } cpus[SIM_MAX_CPUS];
    sim_sink sinks[SIM_MAX_CPUS];
    int nsinks;
    sim_sink trbe_sinks[SIM_MAX_CPUS];
    sim_sink *trbes[SIM_MAX_CPUS];
    sim_session sessions[SIM_MAX_SESSIONS];
    int nsessions;
    int truth;               /* keep packet truth and compute expected output */
    uint64_t work;           /* instructions of work per process (SIM_DEC_CONTINUE) */
    int no_vmlinux;          /* do not put the kernel image into symfs */
    int trace_id_top;        /* trace IDs 1 .. top-1 are usable (0x70; smaller to model scarcity) */
    sim_idmap global_ids;    /* the trace ID map of Linux 6.4-6.11 (AUX_OUTPUT_HW_ID v0.0) */
    uint64_t stat_invariant; /* sink arbitration invariant violations (must stay 0) */
    uint64_t stat_mixed, stat_refused, stat_touched;
    uint64_t trace_budget; /* stop once this many trace bytes were produced */
    uint64_t trace_total;
    uint64_t progress_told; /* trace_total when opts->progress was last called */
    uint64_t insn_total, branch_total;
    int done;
    int err;
    /* ground truth outputs */
    FILE *branches_out;
    uint64_t branches_written, branches_limit;
    FILE *trace_out; /* truth.trace.tsv: where each trace unit starts and stops tracing */
    const sim_map *kmap;
    sim_map kernel_map;
    uint64_t k_vectors, k_ret_from_fork, k_syscall[SIM_NSYSCALLS];
    sim_map *maps_all; /* every mapping ever made, by serial */
    size_t nmaps_all, cap_maps_all;
    EK_VEC(sim_snode) snodes; /* truth: call stack frames (node 0: the empty stack) */
    sim_clock clock;
    /* JIT: code templates, their function images, names owned by the run */
    const sim_image *jit_tmpl;
    int jit_first, jit_count; /* images[jit_first .. +jit_count): one per template function */
    EK_VEC(char *) strings;
    EK_VEC(sim_blob *) blobs;
    const char *jit_dir;   /* --config jit_dir: where the JIT writes its jitdump (NULL: default) */
    struct sim_real *real; /* real binaries and their analysis (realcode.c) */
    sim_image *real_exe;   /* the program and where it is loaded */
    uint64_t real_exe_base;
    sim_image *real_libs[SIM_REAL_MAX]; /* the dynamic linker and the libraries */
    uint64_t real_lib_base[SIM_REAL_MAX];
    int nreal_libs;
    uint64_t real_entry;     /* where a new process starts: the dynamic linker's entry */
    const char *real_libdir; /* --config real_libdir: Debian's AArch64 libraries */
    EK_VEC(void *) buffers;  /* file contents images point into */
    /* truth files for the --itrace letters c, r and s (expected-calls.txt, expected-returns.txt,
     * expected-skip.txt and perf 6.1's answers to the same options) */
    int itrace_lanes;
    /* images whose file in symfs is another build (sim_image.symfs) */
    int wrong_builds;
    /* a kernel module is loaded (kmod.c; NULL: none) */
    struct sim_kmod *kmod;
};

/* expected-skip.txt: --itrace=i100ibs<this> -F pid,tid,cpu,period,ip,sym,symoff,dso */
#define SIM_ITRACE_SKIP 50

/* machine.c */
int sim_machine_init(sim *S);
void sim_machine_free(sim *S);
sim_process *sim_spawn(sim *S, const sim_image *exe, const char *comm, int cpu, uint64_t budget,
                       unsigned session_mask, int parent_pid);
/* give process p a JIT (its jitdump goes into dir) */
int sim_jit_enable(sim *S, sim_process *p, const char *dir);
/* a string / an image slot owned by the run */
const char *sim_strdup(sim *S, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int sim_run(sim *S, uint64_t until_ns);
const sim_image *sim_find_image(const sim *S, const char *name);
const sim_map *sim_map_lookup(const sim_process *p, uint64_t addr);
sim_thread *sim_find_thread(const sim *S, int tid);
uint32_t sim_word_at(const sim *S, const sim_process *p, uint64_t addr);

/* realcode.c */
/* load Debian's AArch64 libraries and simreal, bind them and analyse their code; a clear error
 * naming the package when the libraries are missing */
int sim_real_setup(sim *S);
int sim_real_add(sim *S, sim_image *img, uint64_t base, int exe, int interp);
int sim_real_link(sim *S);
void sim_real_free(sim *S);
int sim_real_bcond(sim *S, sim_thread *t, const sim_map *m, const sim_insn *in, uint64_t ia);
uint64_t sim_real_target(sim *S, sim_thread *t, const sim_map *m, uint64_t ia);
void sim_real_footprint(const sim *S, uint64_t *bytes, uint64_t *text);
/* start a process of real binaries: the program, its libraries, through the dynamic linker */
sim_process *sim_spawn_real(sim *S, int cpu, uint64_t budget, unsigned session_mask);
/* a new slot in S->images (NULL and S->err set when full) */
sim_image *sim_new_image(sim *S);

/* etm.c */
void sim_etm_init(sim *S, sim_etm *e, int cpu);
void sim_etm_free(sim_etm *e);
void sim_etm_configure(sim_etm *e, const sim_session *s);
/* The registers of CPU cpu's trace unit for session s (with trace ID id), as the perf.data
 * metadata states them; sim_etm_same_decoding: do two CPUs' decode alike (all but the trace
 * ID, TRCAUTHSTATUS)? */
void sim_etm_regs(const sim *S, const sim_session *s, int cpu, uint8_t id, ek_source_config *cfg);
int sim_etm_same_decoding(const sim *S, const sim_session *s, int a, int b);
/* event start/stop on this CPU (the session's event became active / inactive) */
void sim_etm_enable(sim_etm *e, sim_session *s, sim_event *ev, uint64_t pc, int el,
                    const ek_etm4_enc_ctx *ctx, uint32_t map, uint64_t ts);
void sim_etm_disable(sim_etm *e);
void sim_etm_branch(sim_etm *e, uint64_t addr, int cls, int taken, uint64_t target,
                    uint32_t target_map, int svc_before_target);
void sim_etm_exception(sim_etm *e, unsigned type, uint64_t ret, int svc_before_ret, uint64_t target,
                       int new_el, const ek_etm4_enc_ctx *ctx, uint64_t ts);
void sim_etm_eret(sim_etm *e, uint64_t addr, uint64_t target, uint32_t target_map,
                  int svc_before_target, const ek_etm4_enc_ctx *ctx, uint64_t ts);
void sim_etm_switch(sim_etm *e, uint64_t addr, uint64_t target, const ek_etm4_enc_ctx *ctx,
                    uint64_t ts);
void sim_etm_switch_done(sim_etm *e, uint64_t ts);
/* hand buffered bytes to the sink path */
void sim_etm_drain(sim_etm *e);

void sim_etm_maybe_resync(sim_etm *e);

/* Hot path of sim_etm_branch for direct branches (no address packet, no truth). */
static inline void sim_etm_direct(sim_etm *e, uint64_t addr, int cls, int taken, uint64_t target,
                                  uint32_t map)
{
    if (!e->active) return;
    if (e->truth || e->enc.natoms >= 31 || e->enc.cap - e->enc.len < EK_ETM4_ENC_MAX_CALL ||
        (taken && cls == SIM_I_BL && e->enc.rs_trace)) {
        sim_etm_branch(e, addr, cls, taken, target, map, 0);
        return;
    }
    e->branch_count++;
    e->atom_count++;
    if (taken) e->enc.atom_bits |= 1ull << e->enc.natoms;
    e->enc.natoms++;
    e->pos = taken ? target : addr + 4;
    e->pos_svc = 0;
    if (e->enc.base + e->enc.len - e->since_sync >= e->sync_period) sim_etm_maybe_resync(e);
}

/* sink.c */
/* The trace ID of a CPU's trace unit in a session: the ID its sink's map gave it. */
uint8_t sim_trace_id(const sim *S, const sim_session *s, int cpu);
void sim_sink_init(sim_sink *k, int kind, int index, uint32_t size, int truth);
void sim_sink_free(sim_sink *k);
void sim_sink_write(sim *S, sim_sink *k, int id, const uint8_t *p, size_t n, uint64_t xoff,
                    int writer);
/* complete the formatter frame in progress (padding with the null trace ID) */
void sim_sink_flush(sim_sink *k);
int sim_session_setup(sim *S, sim_session *s);
/* check the sink arbitration invariants now (counts violations in S->stat_invariant) */
void sim_sinks_check(sim *S);
void sim_session_free(sim_session *s);
/* a thread starts / stops running on a CPU: schedules the events of every session */
void sim_sched_in(sim *S, int cpu, sim_thread *prev, sim_thread *t, uint64_t time);
void sim_sched_out(sim *S, int cpu, sim_thread *t, uint64_t time);
void sim_session_record(sim *S, sim_session *s, int ring, const sim_rec *r);
/* sideband from the machine: delivered to every session that sees the process */
void sim_side_comm(sim *S, sim_thread *t, int exec, uint64_t time, int cpu);
void sim_side_fork(sim *S, sim_thread *t, int ppid, int ptid, uint64_t time, int cpu);
void sim_side_exit(sim *S, sim_thread *t, uint64_t time, int cpu);
void sim_side_mmap(sim *S, sim_thread *t, const sim_map *m, uint64_t time, int cpu);
void sim_sessions_poll(sim *S, uint64_t now);
int sim_sessions_finish(sim *S);
int sim_session_sees(const sim_session *s, const sim_process *p);

/* perfdata.c */
typedef struct sim_writer sim_writer;
sim_writer *sim_writer_open(sim *S, sim_session *s, const char *path);
int sim_writer_record(sim_writer *w, const sim_rec *r);
int sim_writer_auxtrace(sim_writer *w, uint64_t offset, const uint8_t *p1, size_t n1,
                        const uint8_t *p2, size_t n2, int idx, int tid, int cpu);
int sim_writer_round(sim_writer *w);
int sim_writer_close(sim_writer *w);
uint64_t sim_writer_pos(const sim_writer *w);

/* snapshot.c */
int sim_snapshot_write(sim *S, const char *dir);
/* keep only the AUX data a halted system's buffers still hold (before the ground truth) */
void sim_snapshot_prune(sim *S);

/* gen_files.c: the files beside the recording, and file helpers */
/* The run's first failed file operation (the file and errno), so that a run that fails to
 * write says where and why: kept per thread (one run is one thread), cleared by ek_sim_run. */
void sim_io_reset(void);
/* record path and err (0: EIO) when nothing is recorded yet; returns EK_ERR_IO */
int sim_io_fail(const char *path, int err);
/* the first failure: 1 with *path (until the next reset) and *err, or 0 */
int sim_io_first(const char **path, int *err);
/* mkdir -p; a failure is recorded */
int sim_mkdirs(const char *path);
/* A file created (or truncated) for writing, whose failed writes, seeks and close are
 * recorded with its path as they happen (stdio reports them later, without errno): NULL when
 * it cannot be created (recorded). */
FILE *sim_fopen(const char *path);
/* fclose that also reports an earlier write error on f: 0 or EK_ERR_IO */
int sim_fclose(FILE *f);
/* "a/b", malloc'ed (NULL: no memory) */
char *sim_join(const char *a, const char *b);
/* OUT/symfs: the binaries at their recorded paths (vmlinux when with_vmlinux), the module */
int sim_write_symfs(sim *S, const char *out, int with_vmlinux);
/* a JIT's jit-PID.dump and /tmp/perf-PID.map, in OUT/symfs */
int sim_write_jit_files(sim *S, const char *out);
/* OUT/kallsyms */
int sim_write_kallsyms(sim *S, const char *out);
/* OUT/truth.summary */
int sim_write_summary(sim *S, const char *out, const ek_sim_opts *o);

/* gen_config.c: apply a --config file's "key = value" lines; phase 0 before the machine is
 * made (truth, tick_ns, ...), 1 after (the first session, the sinks, the trace units). Bad
 * lines are reported with file and line: EK_ERR_FORMAT (EK_ERR_IO: no file). */
int sim_apply_config(sim *S, const char *path, int phase);

/* steps.c: run a scenario's steps (to SIM_ST_END): 0 or a status */
int sim_steps_run(sim *S, const sim_sc_step *st);
/* the building blocks (steps.c) */
sim_session *sim_add_session(sim *S, int mode, unsigned el_mask);
void sim_add_etr(sim *S, uint32_t size);
void sim_add_etr_group(sim *S, uint32_t size, int first, int n);
void sim_add_etf_per_cpu(sim *S, uint32_t size);
void sim_add_trbe(sim *S, uint32_t size);
sim_process *sim_spawn_program(sim *S, const char *exe, int cpu, uint64_t budget,
                               unsigned sessions);
void sim_set_target(sim_session *s, int pid);
void sim_script(sim_process *p, uint32_t at, sim_action a);
int sim_add_lib(sim *S, sim_process *p, const char *name);

/* scenario.c: the catalogue of the AArch64 scenarios (NULL: no such name) */
const sim_scenario *sim_scenario_find(const char *name);

/* truth.c */
int sim_truth_slice(sim *S, sim_sink *k, int raw_id, uint64_t sink_start, uint64_t sink_len,
                    int barrier_first, const uint8_t *raw_data, sim_op_vec *out);
/* the truth files of a session in dir: expected-*.txt and perf-6.1-expected.txt, with "-N"
 * after the name for the N-th further session */
int sim_truth_write(sim *S, sim_session *s, const char *dir, int index);
/* OUT/script-options[-N].txt: the options a correct decoder of session s's recording needs
 * that no record gives (--raw-cpu=N), when there are any. */
int sim_script_options_write(const sim *S, const sim_session *s, const char *dir, int index);
/* do the session's samples get their time from the CoreSight time stamps (TS_SOURCE says they
 * come from the counter TIME_CONV describes)? */
int sim_session_ts_convertible(const sim *S, const sim_session *s);
void sim_branch_truth(sim *S, const sim_thread *t, int cpu, uint64_t from, uint64_t to, int cls,
                      int taken);
static inline void sim_count_branch(sim *S, const sim_thread *t, int cpu, uint64_t from,
                                    uint64_t to, int cls, int taken)
{
    S->branch_total++;
    if (S->branches_out) sim_branch_truth(S, t, cpu, from, to, cls, taken);
}

/* a session enables (on=1) or disables (on=0) a trace unit while its CPU runs code; when
 * enabled at an exception level it traces, tracing starts at pc (at=1): truth.trace.tsv */
void sim_trace_truth(sim *S, int cpu, int on, int at, uint64_t pc);

/* gen_run.c: the run driver */
void sim_note(sim *S, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Tell opts->progress (if any) how much trace was produced; sim_sessions_poll calls it every
 * SIM_PROGRESS_STEP bytes of trace. */
void sim_progress(sim *S);

/* perf record types used */
enum {
    SIM_R_MMAP = 1,
    SIM_R_COMM = 3,
    SIM_R_EXIT = 4,
    SIM_R_FORK = 7,
    SIM_R_MMAP2 = 10,
    SIM_R_AUX = 11,
    SIM_R_ITRACE_START = 12,
    SIM_R_SWITCH_CPU_WIDE = 15,
    SIM_R_AUX_OUTPUT_HW_ID = 21,
};
#define SIM_AUX_TRUNCATED  0x01ull
#define SIM_AUX_OVERWRITE  0x02ull
#define SIM_AUX_PARTIAL    0x04ull
#define SIM_AUX_COLLISION  0x08ull
#define SIM_AUX_RAW        0x100ull
#define SIM_TS_SOURCE_NONE (-2)

#endif
