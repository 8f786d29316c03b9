/* Call-stack timelines as a Perfetto trace (etmkit/perfetto.h; docs/STACKS.md, "Timelines in
 * Perfetto").
 *
 * The stack analysis (etmkit/stacks.h) gives, at every branches sample, the stack of one
 * thread as the instruction at ip runs -- before its branch. So a thread's stack is seen one
 * sample late: the frames its branch pushed or popped show at its next view. Each thread keeps
 * a mirror of the frames whose slices are open; at every view of the thread the mirror is
 * compared with the view (the longest common base, address and kind), the frames above it end
 * their slices and the new ones begin theirs, timed at the sample that moved the stack (the
 * thread's previous branch, or where its trace landed). The names of the frames a branch
 * pushes are resolved at that branch (the callee: the call's target; an exception: its
 * vector; a call right before an exception: where the exception returns to) and wait in the
 * thread's pending names until its next view.
 *
 * The trace file is Perfetto's Trace message: a repeated TracePacket (field 1), one after the
 * other, so it is written as it comes. Field numbers: Perfetto's protos (see the test's
 * tests/data/perfetto_trace.proto for the version).
 *
 * Names are interned (Perfetto's InternedData): the first event with a name defines it in its
 * own packet (an iid, 1, 2, ... per table), later ones give the iid alone. The tables: event
 * names (slice names with their " (exception)" suffix, CPU slices' "comm pid/tid"), DSO strings
 * (the `dso` annotation's value) and the annotation's name. One sequence, never reset: the
 * first packet says its incremental state is cleared, every packet that refers to an iid says
 * it needs that state. The tables keep each string once; past max_interned bytes of them
 * (ISTR_MAX_TEXT by default; each counts its length and ISTR_ENTRY for its place in a table),
 * new strings are written in full instead (bounded memory whatever the number of names).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "etmkit/filter.h"
#include "etmkit/perfetto.h"
#include "etmkit/sbuf.h"
#include "etmkit/stacks.h"
#include "output/pb.h"

/* field numbers (perfetto.protos) */
enum {
    F_TRACE_PACKET = 1,
    /* TracePacket */
    F_PKT_TIMESTAMP = 8,
    F_PKT_SEQ_ID = 10,
    F_PKT_SEQUENCE_FLAGS = 13,
    F_PKT_TRACK_EVENT = 11,
    F_PKT_INTERNED_DATA = 12,
    F_PKT_TRACK_DESCRIPTOR = 60,
    /* InternedData */
    F_ID_EVENT_NAMES = 2,               /* EventName */
    F_ID_DEBUG_ANNOTATION_NAMES = 3,    /* DebugAnnotationName */
    F_ID_DEBUG_ANNOTATION_STRINGS = 29, /* InternedString */
    /* EventName, DebugAnnotationName (name), InternedString (str) */
    F_IN_IID = 1,
    F_IN_NAME = 2,
    /* TrackEvent */
    F_TE_DEBUG_ANNOTATIONS = 4,
    F_TE_TYPE = 9,
    F_TE_NAME_IID = 10,
    F_TE_TRACK_UUID = 11,
    F_TE_NAME = 23,
    /* DebugAnnotation */
    F_DA_NAME_IID = 1,
    F_DA_STRING_VALUE = 6,
    F_DA_NAME = 10,
    F_DA_STRING_VALUE_IID = 17,
    /* TrackDescriptor */
    F_TD_UUID = 1,
    F_TD_NAME = 2,
    F_TD_PROCESS = 3,
    F_TD_THREAD = 4,
    F_TD_PARENT_UUID = 5,
    /* ProcessDescriptor */
    F_PD_PID = 1,
    F_PD_PROCESS_NAME = 6,
    /* ThreadDescriptor */
    F_THD_PID = 1,
    F_THD_TID = 2,
    F_THD_THREAD_NAME = 5,
};
enum { TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3 };
enum { SEQ_INCREMENTAL_STATE_CLEARED = 1, SEQ_NEEDS_INCREMENTAL_STATE = 2 };

#define SEQ_ID        1u
#define FLUSH_AT      (64u << 10)
#define UUID_PROCESS  0x100000000ull /* + pid */
#define UUID_CPU      0x200000000ull /* + cpu */
#define UUID_THREAD   0x300000000ull /* + thread index */
#define ISTR_MAX_TEXT (64u << 20)    /* bytes of interned strings, all tables (default) */
#define ISTR_ENTRY    64u            /* what an entry costs besides its text (with growth) */
#define IID_DSO_NAME  1u             /* the annotation name "dso" */

/* An open-addressing set of nonzero 32-bit values (an entry's index + 1, or a pid's key), at
 * most half full; growing places every value anew by the hash its owner gives for it. */
typedef struct slots {
    uint32_t *v, mask;
} slots;
typedef uint32_t (*slots_hash_fn)(const void *ctx, uint32_t v);

/* One table of interned strings: iid = index + 1. */
typedef struct istr {
    uint64_t h;
    size_t off;
    uint32_t len;
} istr;
typedef struct istr_tab {
    istr *e;
    uint32_t n, cap;
    slots slot;           /* by hash: index + 1 */
    ek_sbuf text;         /* the strings, one after the other */
} istr_tab;

typedef struct wth {
    int32_t pid, tid, cpu; /* cpu: -1 unless the stack is per CPU (idle, per_source) */
    ek_stack_frame *f;     /* the mirror: frames whose slices are open (and gap frames) */
    uint32_t n, cap;
    uint64_t last;   /* the latest event time on its track */
    uint64_t chg;    /* time of the sample that last moved its stack */
    uint64_t end_ts; /* its trace ended then (ended) */
    uint64_t seen;   /* its latest sample */
    uint8_t ended;   /* its last own sample ended the trace */
    uint8_t landed;  /* its trace went on (a trace begin, a switch to it) since its last view */
    uint8_t lost;    /* the stack analysis forgot its stack since its last view */
    uint8_t npend;   /* pending names: 0, 1 (pn[0]) or 2 (a call's pn[0], an exception's pn[1]) */
    uint8_t exc;     /* its last branch entered an exception: the innermost exception frame
                      * is new (a return right before it may have left one at that address) */
    uint8_t hidden;  /* the filter leaves it out: followed as any other, nothing written */
    uint32_t drops;  /* outermost frames the stack analysis forgot (max_depth) since its view */
    uint32_t below;  /* slices still open below the mirror's bottom: of such frames (they end
                      * where the stack is lost, or at the end: slices nest) */
    ek_sbuf pn[2], pd[2]; /* pending names and DSOs */
    char label[72];       /* "comm pid/tid": 40 bytes of comm, two numbers of 11 */
} wth;

typedef struct wcpu {
    int32_t cur; /* thread index whose occupancy slice is open, -1: none */
    uint64_t last;
    uint64_t seen; /* its latest sample */
    uint8_t described;
} wcpu;

struct ek_perfetto {
    ek_perfetto_opts o;
    ek_stacks *st;
    ek_pb out;
    int rc; /* the write function's first failure */
    wth *th;
    uint32_t nth, cth;
    slots thash; /* by (pid, tid, cpu): index + 1 */
    slots procs; /* pids whose process track is written (pid_key) */
    uint32_t nprocs;
    wcpu *cpus;
    uint32_t ncpus;
    ek_sample_filter tf; /* the filter's pid, tid and comm lists (o.filter's, shared) */
    int clock_set, clock_insns;
    uint64_t clock, cum;
    ek_perfetto_stats stats;
    istr_tab names, dsos; /* interned event names and `dso` values */
    size_t interned;      /* their bytes, as max_interned counts them */
    int dso_named;        /* the annotation name is defined (IID_DSO_NAME) */
};

void ek_perfetto_opts_init(ek_perfetto_opts *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->max_depth = 1024;
}

int ek_perfetto_new(const ek_perfetto_opts *o, ek_perfetto **out)
{
    *out = NULL;
    if (!o || o->size < sizeof *o || !o->write) return EK_ERR_ARG;
    ek_perfetto *w = calloc(1, sizeof *w);
    if (!w) return EK_ERR_NOMEM;
    w->o = *o;
    if (o->filter) {
        /* threads are chosen by who they are; the CPUs and times are the session's */
        w->tf.pids = o->filter->pids;
        w->tf.npids = o->filter->npids;
        w->tf.tids = o->filter->tids;
        w->tf.ntids = o->filter->ntids;
        w->tf.comms = o->filter->comms;
        w->tf.ncomms = o->filter->ncomms;
        if (!w->tf.npids && !w->tf.ntids && !w->tf.ncomms) w->o.filter = NULL;
    }
    ek_stacks_opts so;
    ek_stacks_opts_init(&so);
    so.max_depth = o->max_depth ? o->max_depth : 1024;
    so.per_source = o->per_source;
    int rc = ek_stacks_new(&so, &w->st);
    if (rc) {
        free(w);
        return rc;
    }
    *out = w;
    return 0;
}

void ek_perfetto_free(ek_perfetto *w)
{
    if (!w) return;
    ek_stacks_free(w->st);
    for (uint32_t i = 0; i < w->nth; i++) {
        free(w->th[i].f);
        for (int k = 0; k < 2; k++) {
            ek_sbuf_free(&w->th[i].pn[k]);
            ek_sbuf_free(&w->th[i].pd[k]);
        }
    }
    free(w->th);
    free(w->thash.v);
    free(w->procs.v);
    free(w->cpus);
    istr_tab *tabs[2] = {&w->names, &w->dsos};
    for (int i = 0; i < 2; i++) {
        free(tabs[i]->e);
        free(tabs[i]->slot.v);
        ek_sbuf_free(&tabs[i]->text);
    }
    ek_pb_free(&w->out);
    free(w);
}

void ek_perfetto_get_stats(const ek_perfetto *w, ek_perfetto_stats *out)
{
    *out = w->stats;
    out->clock_instructions = w->clock_insns;
}

/* ---- output ---------------------------------------------------------------------------------- */

static int flush(ek_perfetto *w)
{
    if (w->out.err) return EK_ERR_NOMEM;
    if (w->out.len && !w->rc) {
        int rc = w->o.write(w->o.ctx, w->out.p, w->out.len);
        if (rc) w->rc = rc;
        w->stats.bytes += w->out.len;
    }
    ek_pb_reset(&w->out);
    return w->rc;
}

/* needs: the packet refers to interned strings (defined by it or before it) */
static void packet_open(ek_perfetto *w, int has_ts, uint64_t ts, int needs)
{
    ek_pb_open(&w->out, F_TRACE_PACKET);
    if (has_ts) ek_pb_uint(&w->out, F_PKT_TIMESTAMP, ts);
    ek_pb_uint(&w->out, F_PKT_SEQ_ID, SEQ_ID);
    /* the sequence's first packet says its (empty) incremental state is valid from here: a
     * reader that drops packets of sequences without it keeps ours */
    unsigned flags = (w->stats.packets ? 0u : SEQ_INCREMENTAL_STATE_CLEARED) |
                     (needs ? SEQ_NEEDS_INCREMENTAL_STATE : 0u);
    if (flags) ek_pb_uint(&w->out, F_PKT_SEQUENCE_FLAGS, flags);
    w->stats.packets++;
}

/* Room for one more value in s, which holds n: grown (from min slots, doubling) while it would
 * be more than half full. 0, or EK_ERR_NOMEM (s unchanged). */
static int slots_room(slots *s, uint32_t n, uint32_t min, slots_hash_fn hash, const void *ctx)
{
    if (s->v && (n + 1) * 2 <= s->mask + 1) return 0;
    const uint32_t size = s->v ? (s->mask + 1) * 2 : min;
    uint32_t *nv = calloc(size, sizeof *nv);
    if (!nv) return EK_ERR_NOMEM;
    for (uint32_t i = 0; s->v && i <= s->mask; i++)
        if (s->v[i]) {
            uint32_t k = hash(ctx, s->v[i]) & (size - 1);
            while (nv[k])
                k = (k + 1) & (size - 1);
            nv[k] = s->v[i];
        }
    free(s->v);
    s->v = nv;
    s->mask = size - 1;
    return 0;
}

/* Put v (not in s; room made) in the first free slot from its hash h. */
static void slots_put(slots *s, uint32_t h, uint32_t v)
{
    uint32_t k = h & s->mask;
    while (s->v[k])
        k = (k + 1) & s->mask;
    s->v[k] = v;
}

static uint32_t istr_slot_hash(const void *ctx, uint32_t v)
{
    const istr_tab *t = ctx;
    return (uint32_t)t->e[v - 1].h;
}

static uint64_t istr_hash(const char *a, size_t al, const char *b, size_t bl)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < al; i++)
        h = (h ^ (uint8_t)a[i]) * 0x100000001b3ull;
    for (size_t i = 0; i < bl; i++)
        h = (h ^ (uint8_t)b[i]) * 0x100000001b3ull;
    return h ^ (h >> 31);
}

/* The iid of the string a + b in t: > 0 known, < 0 (minus the iid) new, to be defined by the
 * caller's packet; 0: not interned (out of memory, or the tables are full): written in full. */
static int64_t intern(ek_perfetto *w, istr_tab *t, const char *a, size_t al, const char *b,
                      size_t bl)
{
    const uint64_t h = istr_hash(a, al, b, bl);
    const size_t len = al + bl;
    const slots *sl = &t->slot;
    if (sl->v)
        for (uint32_t k = (uint32_t)h & sl->mask; sl->v[k]; k = (k + 1) & sl->mask) {
            const istr *e = &t->e[sl->v[k] - 1];
            if (e->h == h && e->len == len && (!al || !memcmp(t->text.p + e->off, a, al)) &&
                (!bl || !memcmp(t->text.p + e->off + al, b, bl)))
                return (int64_t)sl->v[k];
        }
    const size_t max = w->o.max_interned ? w->o.max_interned : ISTR_MAX_TEXT;
    if (len > UINT32_MAX || len + ISTR_ENTRY > max - w->interned || t->n == UINT32_MAX / 2)
        return 0;
    if (t->n == t->cap) {
        uint32_t nc = t->cap ? t->cap * 2 : 64;
        istr *ne = realloc(t->e, nc * sizeof *ne);
        if (!ne) return 0;
        t->e = ne;
        t->cap = nc;
    }
    if (slots_room(&t->slot, t->n, 128, istr_slot_hash, t)) return 0;
    const size_t off = t->text.len;
    if (al) ek_sbuf_put(&t->text, a, al);
    if (bl) ek_sbuf_put(&t->text, b, bl);
    if (t->text.oom || t->text.len != off + len) return 0;
    t->e[t->n] = (istr){h, off, (uint32_t)len};
    w->interned += len + ISTR_ENTRY;
    slots_put(&t->slot, (uint32_t)h, ++t->n);
    return -(int64_t)t->n;
}

/* field: bytes a + b */
static void pb_bytes2(ek_pb *o, uint32_t field, const char *a, size_t al, const char *b, size_t bl)
{
    ek_pb_tag(o, field, EK_PB_LEN);
    ek_pb_varint(o, al + bl);
    if (ek_pb_room(o, al + bl)) {
        if (al) memcpy(o->p + o->len, a, al);
        if (bl) memcpy(o->p + o->len + al, b, bl);
        o->len += al + bl;
    }
}

/* One entry of InternedData: {iid, name/str} */
static void interned_entry(ek_pb *o, uint32_t field, uint64_t iid, const char *a, size_t al,
                           const char *b, size_t bl)
{
    ek_pb_open(o, field);
    ek_pb_uint(o, F_IN_IID, iid);
    pb_bytes2(o, F_IN_NAME, a, al, b, bl);
    ek_pb_close(o);
}

static int packet_close(ek_perfetto *w)
{
    ek_pb_close(&w->out);
    if (w->out.err) return EK_ERR_NOMEM;
    return w->out.len >= FLUSH_AT ? flush(w) : w->rc;
}

/* A track: its name (shown), and for a process or thread track its pid (and tid) and the
 * process's or thread's own name (comm). */
static int track(ek_perfetto *w, uint64_t uuid, uint64_t parent, const char *name,
                 const int32_t *pid_tid, int process, const char *comm)
{
    packet_open(w, 0, 0, 0);
    ek_pb_open(&w->out, F_PKT_TRACK_DESCRIPTOR);
    ek_pb_uint(&w->out, F_TD_UUID, uuid);
    if (parent) ek_pb_uint(&w->out, F_TD_PARENT_UUID, parent);
    ek_pb_str(&w->out, F_TD_NAME, name);
    if (pid_tid && process) {
        ek_pb_open(&w->out, F_TD_PROCESS);
        ek_pb_int(&w->out, F_PD_PID, pid_tid[0]);
        ek_pb_str(&w->out, F_PD_PROCESS_NAME, comm);
        ek_pb_close(&w->out);
    } else if (pid_tid) {
        ek_pb_open(&w->out, F_TD_THREAD);
        ek_pb_int(&w->out, F_THD_PID, pid_tid[0]);
        ek_pb_int(&w->out, F_THD_TID, pid_tid[1]);
        ek_pb_str(&w->out, F_THD_THREAD_NAME, comm);
        ek_pb_close(&w->out);
    }
    ek_pb_close(&w->out);
    return packet_close(w);
}

/* One TrackEvent on track uuid at ts (clamped to *last: times never go back on a track). */
static int event(ek_perfetto *w, uint64_t uuid, uint64_t *last, uint64_t ts, int type,
                 const char *name, size_t name_len, const char *suffix, const char *dso,
                 size_t dso_len)
{
    if (ts < *last) ts = *last;
    *last = ts;
    const size_t sl = suffix ? strlen(suffix) : 0;
    if (w->o.no_dso) dso = NULL;
    int64_t niid = name ? intern(w, &w->names, name, name_len, suffix, sl) : 0;
    int64_t diid = dso ? intern(w, &w->dsos, dso, dso_len, NULL, 0) : 0;
    const int dname_new = diid && !w->dso_named;
    if (dname_new) w->dso_named = 1;
    /* (the annotation's name is referred to once defined, also beside a value in full) */
    packet_open(w, 1, ts, niid || diid || (dso && w->dso_named));
    if (niid < 0 || diid < 0 || dname_new) {
        /* strings met for the first time: defined here, for this packet and the later ones */
        ek_pb_open(&w->out, F_PKT_INTERNED_DATA);
        if (niid < 0)
            interned_entry(&w->out, F_ID_EVENT_NAMES, (uint64_t)-niid, name, name_len, suffix, sl);
        if (dname_new)
            interned_entry(&w->out, F_ID_DEBUG_ANNOTATION_NAMES, IID_DSO_NAME, "dso", 3, NULL, 0);
        if (diid < 0)
            interned_entry(&w->out, F_ID_DEBUG_ANNOTATION_STRINGS, (uint64_t)-diid, dso, dso_len,
                           NULL, 0);
        ek_pb_close(&w->out);
    }
    ek_pb_open(&w->out, F_PKT_TRACK_EVENT);
    ek_pb_uint(&w->out, F_TE_TYPE, (uint64_t)type);
    ek_pb_uint(&w->out, F_TE_TRACK_UUID, uuid);
    if (niid)
        ek_pb_uint(&w->out, F_TE_NAME_IID, (uint64_t)(niid < 0 ? -niid : niid));
    else if (name)
        pb_bytes2(&w->out, F_TE_NAME, name, name_len, suffix, sl);
    if (dso) {
        ek_pb_open(&w->out, F_TE_DEBUG_ANNOTATIONS);
        if (w->dso_named)
            ek_pb_uint(&w->out, F_DA_NAME_IID, IID_DSO_NAME);
        else
            ek_pb_str(&w->out, F_DA_NAME, "dso");
        if (diid)
            ek_pb_uint(&w->out, F_DA_STRING_VALUE_IID, (uint64_t)(diid < 0 ? -diid : diid));
        else
            ek_pb_bytes(&w->out, F_DA_STRING_VALUE, dso, dso_len);
        ek_pb_close(&w->out);
    }
    ek_pb_close(&w->out);
    return packet_close(w);
}

/* ---- threads and processes ------------------------------------------------------------------- */

static uint32_t mix(uint64_t a, uint64_t b)
{
    uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull) * 0xc2b2ae3d27d4eb4full;
    return (uint32_t)(h ^ h >> 29 ^ h >> 47);
}

static uint32_t th_hash(int32_t pid, int32_t tid, int32_t cpu)
{
    return mix((uint64_t)(uint32_t)pid << 32 | (uint32_t)tid, (uint32_t)cpu);
}

static uint32_t th_slot_hash(const void *ctx, uint32_t v)
{
    const wth *t = &((const ek_perfetto *)ctx)->th[v - 1];
    return th_hash(t->pid, t->tid, t->cpu);
}

static const char *clock_note(const ek_perfetto *w)
{
    return w->clock_insns ? " (time = instructions)" : "";
}

/* A pid as a value of the processes' set: nonzero for every pid from -1 up (process_track
 * takes every negative pid as -1) */
static uint32_t pid_key(int32_t pid)
{
    return (uint32_t)pid + 2u;
}

/* How many bytes of name, at most max, the track names show: not past max, and not into a
 * UTF-8 character that would not end before it (a name cut there is no longer UTF-8, which
 * Perfetto's strings are) */
static int name_cut(const char *name, int max)
{
    int n = 0;
    while (n < max && name[n])
        n++;
    if (n < max || !name[n]) return n;
    /* name[n] continues a character: cut before its first byte (at most 3 back) */
    for (int k = 0; k < 3 && n > 0 && ((unsigned char)name[n] & 0xc0) == 0x80; k++)
        n--;
    return ((unsigned char)name[n] & 0xc0) == 0x80 ? max : n;
}

static uint32_t pid_slot_hash(const void *ctx, uint32_t v)
{
    (void)ctx;
    return mix(v, 0);
}

static int process_track(ek_perfetto *w, int32_t pid, const char *comm)
{
    if (pid < 0) pid = -1; /* (one "unknown process" for them all) */
    const uint32_t v = pid_key(pid);
    slots *ps = &w->procs;
    if (ps->v)
        for (uint32_t k = mix(v, 0) & ps->mask; ps->v[k]; k = (k + 1) & ps->mask)
            if (ps->v[k] == v) return 0;
    if (slots_room(ps, w->nprocs, 16, pid_slot_hash, NULL)) return EK_ERR_NOMEM;
    slots_put(ps, mix(v, 0), v);
    w->nprocs++;
    char name[112];
    if (pid < 0)
        snprintf(name, sizeof name, "unknown process%s", clock_note(w));
    else
        snprintf(name, sizeof name, "%.*s %d%s", name_cut(pid == 0 ? "swapper" : comm, 64),
                 pid == 0 ? "swapper" : comm, pid, clock_note(w));
    int32_t pt[2] = {pid, pid};
    return track(w, UUID_PROCESS + (uint32_t)pid, 0, name, pid < 0 ? NULL : pt, 1,
                 pid == 0 ? "swapper" : comm);
}

/* The thread of (pid, tid) on cpu (the stack analysis' key); s names it (comm) when new. */
static wth *thread_of(ek_perfetto *w, int32_t pid, int32_t tid, int32_t cpu, const ek_sample *s,
                      const ek_script_resolver *r)
{
    if (!(w->o.per_source || (pid == 0 && tid == 0))) cpu = -1;
    uint32_t h = th_hash(pid, tid, cpu);
    const slots *ts = &w->thash;
    if (ts->v)
        for (uint32_t k = h & ts->mask; ts->v[k]; k = (k + 1) & ts->mask) {
            wth *t = &w->th[ts->v[k] - 1];
            if (t->pid == pid && t->tid == tid && t->cpu == cpu) return t;
        }
    if (w->nth == w->cth) {
        uint32_t nc = w->cth ? w->cth * 2 : 16;
        wth *n = realloc(w->th, nc * sizeof *n);
        if (!n) return NULL;
        w->th = n;
        w->cth = nc;
    }
    if (slots_room(&w->thash, w->nth, 16, th_slot_hash, w)) return NULL;
    uint32_t idx = w->nth;
    wth *t = &w->th[idx];
    memset(t, 0, sizeof *t);
    t->pid = pid;
    t->tid = tid;
    t->cpu = cpu;
    slots_put(&w->thash, h, ++w->nth);
    /* its tracks */
    ek_sample q = *s;
    q.pid = pid;
    q.tid = tid;
    const char *comm = r && r->comm ? r->comm(r->ctx, &q) : NULL;
    char cbuf[24];
    if (!comm) {
        snprintf(cbuf, sizeof cbuf, ":%d", tid);
        comm = cbuf;
    }
    snprintf(t->label, sizeof t->label, "%.*s %d/%d", name_cut(comm, 40), comm, pid, tid);
    if (w->o.filter) {
        /* (the comm the filter compares is the resolver's, not the ":tid" placeholder) */
        const char *fc = comm == cbuf ? NULL : comm;
        if (!ek_sample_filter_match(&w->tf, &q, fc)) {
            t->hidden = 1;
            return t;
        }
    }
    w->stats.threads++;
    if (process_track(w, pid, comm)) return NULL;
    char name[128];
    if (cpu >= 0)
        snprintf(name, sizeof name, "%.*s %d [cpu %d]%s", name_cut(comm, 40), comm, tid, cpu,
                 clock_note(w));
    else
        snprintf(name, sizeof name, "%.*s %d%s", name_cut(comm, 40), comm, tid, clock_note(w));
    int32_t pt[2] = {pid, tid};
    /* one thread track per thread (Perfetto's rule): a thread followed per CPU gets plain
     * tracks in its process */
    if (track(w, UUID_THREAD + idx, pid < 0 ? 0 : UUID_PROCESS + (uint32_t)pid, name,
              cpu < 0 && pid >= 0 ? pt : NULL, 0, comm))
        return NULL;
    /* the track may have moved */
    return &w->th[idx];
}

static uint64_t uuid_of(const ek_perfetto *w, const wth *t)
{
    return UUID_THREAD + (uint64_t)(t - w->th);
}

/* ---- slices ---------------------------------------------------------------------------------- */

/* An event on t's track (nothing for a thread the filter leaves out). */
static int tevent(ek_perfetto *w, wth *t, uint64_t ts, int type, const char *name, size_t nl,
                  const char *suffix, const char *dso, size_t dl)
{
    if (t->hidden) return 0;
    return event(w, uuid_of(w, t), &t->last, ts, type, name, nl, suffix, dso, dl);
}

static int end_slice(ek_perfetto *w, wth *t, uint64_t ts)
{
    return tevent(w, t, ts, TYPE_SLICE_END, NULL, 0, NULL, NULL, 0);
}

/* Bring t's slices to view v of its stack (never a late one: an earlier time's). */
static int follow(ek_perfetto *w, wth *t, const ek_stack_view *v)
{
    int rc = 0;
    uint32_t c = 0;
    if (t->drops) {
        /* the view starts that many frames further in: their slices stay open below it */
        const uint32_t k = t->drops < t->n ? t->drops : t->n;
        for (uint32_t i = 0; i < k; i++)
            if (!(t->f[i].flags & EK_FRAME_GAP)) t->below++;
        memmove(t->f, t->f + k, (t->n - k) * sizeof *t->f);
        t->n -= k;
        t->drops = 0;
    }
    if (t->lost) {
        /* forgotten: everything the trace showed of it ends (at its trace end, if a gap) */
        uint64_t at = t->ended && t->landed ? t->end_ts : t->chg;
        for (uint32_t i = t->n; i-- && !rc;)
            if (!(t->f[i].flags & EK_FRAME_GAP)) rc = end_slice(w, t, at);
        for (; t->below && !rc; t->below--)
            rc = end_slice(w, t, at);
        t->n = 0;
        if (!t->hidden) w->stats.lost++;
    } else {
        while (c < t->n && c < v->n && t->f[c].addr == v->frames[c].addr &&
               t->f[c].flags == v->frames[c].flags)
            c++;
        if (t->exc)
            for (uint32_t i = v->n; i-- > 0;)
                if (v->frames[i].flags & EK_FRAME_EXCEPTION) {
                    if (i < c) c = i;
                    break;
                }
    }
    if (t->ended && t->landed) {
        /* the trace of the thread stopped and went on: a slice of its own, where it was */
        const char *g = "trace gap";
        rc = rc ? rc : tevent(w, t, t->end_ts, TYPE_SLICE_BEGIN, g, strlen(g), NULL, NULL, 0);
        rc = rc ? rc : end_slice(w, t, t->chg);
        if (!t->hidden) w->stats.gaps++;
        t->ended = 0;
    }
    for (uint32_t i = t->n; i-- > c && !rc;)
        if (!(t->f[i].flags & EK_FRAME_GAP)) rc = end_slice(w, t, t->chg);
    if (v->n > t->cap) {
        uint32_t nc = t->cap ? t->cap : 8;
        while (nc < v->n)
            nc *= 2;
        ek_stack_frame *nf = realloc(t->f, nc * sizeof *nf);
        if (!nf) return EK_ERR_NOMEM;
        t->f = nf;
        t->cap = nc;
    }
    for (uint32_t i = c; i < v->n && !rc; i++) {
        t->f[i] = v->frames[i];
        if (v->frames[i].flags & EK_FRAME_GAP) continue;
        /* the names the branch that pushed it left: the innermost frame is the exception's or
         * the call's; below an exception's, a call's (a BL right before the exception) */
        int exc = (v->frames[i].flags & EK_FRAME_EXCEPTION) != 0;
        int k = -1;
        if (t->npend == 2)
            k = exc ? 1 : 0;
        else if (t->npend == 1 && i + 1 == v->n)
            k = 0;
        const char *name = "[unknown]", *dso = NULL;
        size_t nl = strlen(name), dl = 0;
        if (k >= 0 && t->pn[k].len) {
            name = t->pn[k].p;
            nl = t->pn[k].len;
        }
        if (k >= 0 && t->pd[k].len) {
            dso = t->pd[k].p;
            dl = t->pd[k].len;
        }
        rc = tevent(w, t, t->chg, TYPE_SLICE_BEGIN, name, nl, exc ? " (exception)" : NULL, dso, dl);
        if (!t->hidden) w->stats.slices++;
    }
    t->n = v->n;
    t->npend = 0;
    t->exc = 0;
    t->lost = 0;
    t->landed = 0;
    return rc;
}

/* The names of what the branch of s enters, for the frames its thread's next view shows. */
static void pend(wth *t, const ek_sample *s, const ek_script_resolver *r)
{
    t->npend = 0;
    t->exc = 0;
    if (!(s->flags & EK_SF_CALL)) return;
    int exc = (s->flags & (EK_SF_INTERRUPT | EK_SF_SYSCALLRET | EK_SF_ASYNC)) != 0;
    t->exc = (uint8_t)exc;
    uint64_t a[2] = {s->addr, 0};
    unsigned n = 1;
    if (exc && s->isub == EK_ISUB_BR_LINK && s->resume &&
        s->resume != s->ip + (s->isize ? s->isize : 4)) {
        /* a BL taken right before the exception: its frame, then the exception's (which
         * returns to the BL's target; a trace end's exception has no target) */
        a[0] = s->resume;
        a[1] = s->addr;
        n = 2;
    } else if (!s->addr) {
        return;
    }
    if (t->hidden) return; /* (names for slices that are never written) */
    for (unsigned k = 0; k < n; k++) {
        ek_sbuf_reset(&t->pn[k]);
        ek_sbuf_reset(&t->pd[k]);
        if (!a[k]) continue; /* "[unknown]" */
        ek_addr_loc l;
        memset(&l, 0, sizeof l);
        if (r && r->resolve) r->resolve(r->ctx, s, a[k], 1, &l);
        if (l.sym)
            ek_sbuf_put(&t->pn[k], l.sym, l.sym_len ? l.sym_len : strlen(l.sym));
        else
            ek_sbuf_printf(&t->pn[k], "0x%" PRIx64, a[k]);
        if (l.dso) ek_sbuf_put(&t->pd[k], l.dso, l.dso_len ? l.dso_len : strlen(l.dso));
    }
    t->npend = (uint8_t)n;
}

/* ---- CPUs ------------------------------------------------------------------------------------ */

static int cpu_sample(ek_perfetto *w, const ek_sample *s, wth *t, uint64_t now)
{
    if (w->o.no_cpu_tracks || s->cpu < 0 || s->cpu > 65535) return 0;
    uint32_t c = (uint32_t)s->cpu;
    if (c >= w->ncpus) {
        wcpu *n = realloc(w->cpus, (c + 1) * sizeof *n);
        if (!n) return EK_ERR_NOMEM;
        for (uint32_t i = w->ncpus; i <= c; i++) {
            n[i].cur = -1;
            n[i].last = 0;
            n[i].seen = 0;
            n[i].described = 0;
        }
        w->cpus = n;
        w->ncpus = c + 1;
    }
    wcpu *p = &w->cpus[c];
    int rc = 0;
    uint64_t uuid = UUID_CPU + c;
    if (t->hidden) {
        /* a thread left out: the shown one before it leaves the CPU here, nothing begins */
        if (p->cur >= 0) rc = event(w, uuid, &p->last, now, TYPE_SLICE_END, NULL, 0, NULL, NULL, 0);
        p->cur = -1;
        p->seen = now;
        return rc;
    }
    if (!p->described) {
        char name[64];
        snprintf(name, sizeof name, "CPU %u%s", c, clock_note(w));
        rc = track(w, uuid, 0, name, NULL, 0, NULL);
        p->described = 1;
        w->stats.cpus++;
    }
    int32_t ti = (int32_t)(t - w->th);
    p->seen = now;
    if (!rc && p->cur != ti) {
        if (p->cur >= 0) rc = event(w, uuid, &p->last, now, TYPE_SLICE_END, NULL, 0, NULL, NULL, 0);
        if (!rc)
            rc = event(w, uuid, &p->last, now, TYPE_SLICE_BEGIN, t->label, strlen(t->label), NULL,
                       NULL, 0);
        p->cur = ti;
    }
    if (!rc && (s->flags & EK_SF_TRACE_END) && p->cur >= 0) {
        rc = event(w, uuid, &p->last, now, TYPE_SLICE_END, NULL, 0, NULL, NULL, 0);
        p->cur = -1;
    }
    return rc;
}

/* ---- samples --------------------------------------------------------------------------------- */

int ek_perfetto_sample(ek_perfetto *w, const ek_sample *s, const ek_script_resolver *r)
{
    if (w->rc) return w->rc;
    if (s->kind != EK_SAMPLE_BRANCHES) return 0;
    if (!w->clock_set) {
        w->clock_set = 1;
        w->clock_insns = !s->has_time;
    }
    uint64_t now;
    w->cum += s->ninsn;
    if (!w->clock_insns && s->has_time && s->time > w->clock) w->clock = s->time;
    now = w->clock_insns ? w->cum : w->clock;
    ek_stacks_stats a, b;
    ek_stacks_get_stats(w->st, &a);
    ek_stack_view v;
    int rc = ek_stacks_sample(w->st, s, &v);
    if (rc) return rc;
    if (v.late) return 0; /* the stack of an earlier time: it moves nothing */
    ek_stacks_get_stats(w->st, &b);
    wth *t = thread_of(w, s->pid, s->tid, s->cpu, s, r);
    if (!t) return EK_ERR_NOMEM;
    uint32_t ti = (uint32_t)(t - w->th);
    int begin = (s->flags & EK_SF_TRACE_BEGIN) || !s->ip;
    int landing = begin || v.pid != s->pid || v.tid != s->tid;
    /* a landing's view is after it; a branch's, before it (the stack it forgets shows next) */
    int lost = b.gaps != a.gaps;
    if (lost && landing) t->lost = 1;
    if (landing) {
        t->landed = 1;
        t->chg = now;
    }
    /* the view's thread (the outgoing one at a switch) */
    wth *vt = landing && !begin ? thread_of(w, v.pid, v.tid, s->cpu, s, r) : t;
    if (!vt) return EK_ERR_NOMEM;
    t = &w->th[ti];
    rc = follow(w, vt, &v);
    if (rc) return rc;
    if (!landing) {
        /* the branch moves t's stack: seen at its next view (a push at max_depth forgets the
         * outermost frame: that view starts one frame further in) */
        t->drops += (uint32_t)(b.dropped - a.dropped);
        t->chg = now;
        if (lost) t->lost = 1;
        pend(t, s, r);
        if ((s->flags & EK_SF_TRACE_END) || !s->addr) {
            t->ended = 1;
            t->end_ts = now;
        }
    }
    t->seen = now;
    return cpu_sample(w, s, t, now);
}

int ek_perfetto_finish(ek_perfetto *w)
{
    int rc = w->rc;
    for (uint32_t i = 0; i < w->nth && !rc; i++) {
        wth *t = &w->th[i];
        uint64_t at = t->seen;
        for (uint32_t k = t->n; k-- && !rc;)
            if (!(t->f[k].flags & EK_FRAME_GAP)) rc = end_slice(w, t, at);
        for (; t->below && !rc; t->below--)
            rc = end_slice(w, t, at);
        t->n = 0;
    }
    for (uint32_t c = 0; c < w->ncpus && !rc; c++)
        if (w->cpus[c].cur >= 0) {
            rc = event(w, UUID_CPU + c, &w->cpus[c].last, w->cpus[c].seen, TYPE_SLICE_END, NULL, 0,
                       NULL, NULL, 0);
            w->cpus[c].cur = -1;
        }
    return rc ? rc : flush(w);
}
