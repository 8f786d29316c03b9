/* Address spaces over time: which file was mapped where, for which process, from when to when;
 * which thread belongs to which process and what it was called.
 *
 * Built once from the sideband records (MMAP, MMAP2, COMM, FORK, EXIT, ITRACE_START, SWITCH*)
 * in time order, then read-only: any number of decoder threads may query it at once.
 *
 * Time: every record has a key = its perf time (ns) when the record carries one, else the key
 * of the record before it in the file (so synthesised records at the start of a recording sort
 * first). Records with equal keys keep their file order.
 *
 * A map is valid from the key of the record that created it until the key of the record that
 * ended it (a later mapping over the same addresses, an exec of its process), or forever.
 * Lookups take a time window (the trace of one AUX slice ran after the previous AUX record of
 * its queue and before its own), and optionally an exact time (from converted CoreSight time
 * stamps); see as_find.
 */
#ifndef ETMKIT_SESSION_ASPACE_H
#define ETMKIT_SESSION_ASPACE_H

#include <stddef.h>
#include <stdint.h>

#include "core/vec.h"

#define AS_TIME_MAX UINT64_MAX
#define AS_KERNEL_PID (-1)
#define AS_IDLE_COMM  "swapper" /* perf's name for pid 0 / tid 0 (the idle task) */

typedef struct as_dso as_dso; /* owned by the caller (the DSO registry); opaque here */

typedef struct as_map {
    uint64_t start, end;  /* [start, end) */
    uint64_t pgoff;       /* file offset of start */
    uint64_t t_from, t_to;/* valid for keys in [t_from, t_to) */
    int64_t record;       /* record number that created it */
    uint64_t offset;      /* its file offset */
    uint32_t prot;        /* PROT_* (MMAP: 5 = r-x assumed) */
    uint8_t exec;         /* executable (or unknown: MMAP without prot) */
    uint8_t kernel;       /* a kernel map (pid -1) */
    uint8_t late;         /* set on the map returned by as_find when it was mapped later */
    uint8_t alone;        /* no other map of its process (with a life) ever overlaps it: as_find
                           * gives it for every address in it, at any time, in any window */
    as_dso *dso;
    const char *filename;
} as_map;

typedef struct as_comm {
    uint64_t t;
    const char *comm;
    uint8_t exec;
} as_comm;

typedef struct as_thread {
    int32_t tid, pid;
    EK_VEC(as_comm) comms; /* in time order */
    uint64_t t_exit;       /* AS_TIME_MAX if no EXIT record */
} as_thread;

typedef struct as_proc {
    int32_t pid;
    EK_VEC(as_map) maps;   /* every map the process ever had (history), sorted by start */
    uint64_t *maxend;      /* maxend[i] = max(maps[0..i].end) */
    uint64_t *bounds;      /* the starts and ends of the maps with a life, sorted, each once */
    size_t nbounds;
} as_proc;

typedef struct aspace aspace;

/* A sideband event in the form the timeline needs. */
typedef enum as_ev_type {
    AS_EV_MMAP = 1, AS_EV_COMM, AS_EV_FORK, AS_EV_EXIT, AS_EV_THREAD /* pid/tid seen */,
} as_ev_type;

typedef struct as_event {
    int type;
    uint64_t key;         /* time key */
    int64_t record;
    uint64_t offset;
    int32_t pid, tid;     /* MMAP: pid -1 = kernel */
    int32_t ppid, ptid;   /* FORK */
    /* MMAP */
    uint64_t start, len, pgoff;
    uint32_t prot;
    int exec;
    int kernel;
    as_dso *dso;
    const char *filename; /* must outlive the aspace */
    /* COMM */
    const char *comm;     /* must outlive the aspace */
    int comm_exec;
    uint64_t seq; /* set by as_add: events of equal key and record keep their order */
} as_event;

aspace *as_new(void);
void as_free(aspace *as);
/* Events may come in any order; as_build sorts them (by key, then record) and replays. */
int as_add(aspace *as, const as_event *ev);
int as_build(aspace *as);

/* Why as_find chose its map (for the report). */
enum {
    AS_HIT_NONE = 0,
    AS_HIT_EXACT,     /* valid at the exact time given */
    AS_HIT_WINDOW,    /* the only map valid during the window */
    AS_HIT_AMBIGUOUS, /* several maps were valid during the window: the one valid at its end */
    AS_HIT_LATE,      /* mapped only after the window (synthesised or late MMAP) */
    AS_HIT_OLD,       /* ended before the window and nothing replaced it */
    AS_HIT_NEAREST,   /* several in the window, none at the time given: the closest to it */
};

/* The map of pid (AS_KERNEL_PID: kernel maps) covering addr for trace that ran during
 * (t_lo, t_hi] -- or exactly at t when has_t. *how gets AS_HIT_*. NULL when none. */
const as_map *as_find(const aspace *as, int32_t pid, uint64_t addr, uint64_t t_lo, uint64_t t_hi,
                      int has_t, uint64_t t, int *how);
/* as_find, and [*t_from, *t_to) (may be NULL): with has_t, the times t for which the same query
 * gives the same answer (empty, [0, 0), when that is not known); without, [0, UINT64_MAX): the
 * answer depends on the window only. Callers may remember an answer for those times. */
const as_map *as_find_ex(const aspace *as, int32_t pid, uint64_t addr, uint64_t t_lo,
                         uint64_t t_hi, int has_t, uint64_t t, int *how, uint64_t *t_from,
                         uint64_t *t_to);
/* The addresses [*lo, *hi) around addr that no map of pid (with a life) starts or ends inside:
 * every map covers all of them or none, so as_find gives the same answer for each of them as
 * for addr, at any time and in any window. */
void as_addr_range(const aspace *as, int32_t pid, uint64_t addr, uint64_t *lo, uint64_t *hi);

/* Thread tid: its pid (or -1 when unknown) and comm at time t (NULL when unknown; tid 0, the
 * idle task, is AS_IDLE_COMM until a COMM record says otherwise). */
int32_t as_pid_of(const aspace *as, int32_t tid);
const char *as_comm_at(const aspace *as, int32_t tid, uint64_t t);
/* as_comm_at, and [*lo, *hi): the times t that give the same answer. */
const char *as_comm_range(const aspace *as, int32_t tid, uint64_t t, uint64_t *lo, uint64_t *hi);
const as_thread *as_thread_get(const aspace *as, int32_t tid);

/* Every process (for reports). */
size_t as_nprocs(const aspace *as);
const as_proc *as_proc_at(const aspace *as, size_t i);
const as_proc *as_proc_get(const aspace *as, int32_t pid);

#endif
