/* perf-script text of a session: a staged consumer (etmkit/session.h). Each decoder thread
 * formats its queue's samples (ek_script_format) into the bytes the session hands the writer;
 * the writer passes them on. A thread's line cache keeps the text of recent samples: hot
 * loops give the same branch samples over and over, and their text is then a copy. */
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "etmkit/script.h"
#include "script_calltrace.h"
#include "script_int.h"
#include "wr.h"

/* A decoder thread's recent sample lines (when qfmt.cacheable): hot loops give the same
 * branch samples over and over, and their text is then a copy. Two-way set associative (a
 * direct-mapped table lost 2% of lookups to pairs of lines of one loop taking turns in a
 * slot); the keys are kept apart from the texts so that the lookups touch little memory. A
 * line resolved without a sample time is only reused within the block (AUX slice) it was
 * made in: the address space it was resolved against is the slice's time range. */
#define LC_BITS 12
#define LC_SLOTS (1u << LC_BITS)
#define LC_TEXT 192 /* a multiple of 32: hits are copied whole (see on_sample) */
typedef struct lc_key {
    uint64_t ip, addr;
    uint64_t period; /* (lines of the tail only: 0 for whole lines, which show no period) */
    uint32_t flags;
    int32_t pid, tid, cpu;
    uint32_t block; /* ek_sample_ctx.block when made (never 0), or 0 for lines with a time */
    uint8_t kind, has_t;
    uint16_t zero;
} lc_key;
typedef struct lcache_ent {
    lc_key k;
    uint16_t len;  /* 0: empty */
    uint8_t recent; /* (first entry of a set) 1: the second entry was used last */
    uint64_t v_lo, v_hi; /* with has_t: the sample times the text holds for */
} lcache_ent;
typedef struct lcache {
    lcache_ent e[LC_SLOTS];
    char text[LC_SLOTS][LC_TEXT];
    uint64_t hits, misses;
} lcache;

static inline int lc_key_eq(const lc_key *a, const lc_key *b)
{
    /* (no early exit: nearly every lookup hits, and then every field is compared anyway) */
    return !((a->ip ^ b->ip) | (a->addr ^ b->addr) | (a->period ^ b->period) |
             (uint64_t)((a->flags ^ b->flags) | ((uint32_t)a->pid ^ (uint32_t)b->pid) |
                        ((uint32_t)a->tid ^ (uint32_t)b->tid) |
                        ((uint32_t)a->cpu ^ (uint32_t)b->cpu) | (a->block ^ b->block) |
                        (uint32_t)(a->kind ^ b->kind) | (uint32_t)(a->has_t ^ b->has_t)));
}


typedef struct text_out {
    ek_script_fields f;   /* with the session's event names and its cpu rule */
    int evw;              /* width of the event-name column */
    int cacheable;        /* lines may be cached (see ek_session_script) */
    int tails;            /* or the tails of lines after the thread's and time columns */
    ek_write_fn write;
    void *ctx;
    int holes;            /* --itrace=sN with a filter: drop the empty lines */
} text_out;

/* A decoder thread's state: its line cache (NULL: every line formatted anew). */
typedef struct text_q {
    const text_out *t;
    lcache *lc;
    script_memo memo; /* what the previous lines made */
} text_q;

static void *text_begin(void *ctx)
{
    text_out *t = ctx;
    text_q *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    q->t = t;
    /* ETMKIT_NO_LINE_CACHE=1: every line formatted anew (tests compare the two) */
    if ((t->cacheable || t->tails) && !getenv("ETMKIT_NO_LINE_CACHE"))
        q->lc = calloc(1, sizeof *q->lc); /* NULL: no cache, same output */
    return q;
}

static void text_end(void *ctx, void *qctx)
{
    (void)ctx;
    text_q *q = qctx;
    if (q) free(q->lc);
    free(q);
}

/* One sample's line: from the cache when an identical sample's line holds for it, else
 * formatted (and cached when its answers did not depend on more than the key says). */
static void text_encode(void *qctx, ek_sbuf *out, const ek_sample *smp, ek_sample_ctx *c)
{
    text_q *q = qctx;
    if (!q) return;
    const text_out *t = q->t;
    lcache *lc = q->lc;
    lcache_ent *le = NULL;
    lc_key key;
    size_t set = 0;
    if (lc) {
        key.ip = smp->ip;
        key.addr = smp->addr;
        key.period = t->tails ? smp->period : 0;
        key.flags = smp->flags;
        key.pid = smp->pid;
        key.tid = t->tails ? 0 : smp->tid;
        key.cpu = t->tails ? 0 : smp->cpu;
        key.kind = smp->kind;
        key.has_t = (uint8_t)(c->has_t != 0);
        /* With a time for the sample the resolver's answers depend on that time alone (the
         * map valid at it; [v_lo, v_hi) says for which times), not on the slice's window: such
         * a line is good in later slices too. Without one, only in its own slice. */
        key.block = key.has_t ? 0 : c->block;
        key.zero = 0;
        /* every field spread over the high bits, which pick the slot (samples that differ
         * only in their thread, as processes running the same code, must not collide) */
        uint64_t h = key.ip * 0x9e3779b97f4a7c15ull + key.addr * 0xc2b2ae3d27d4eb4full +
                     (uint64_t)(uint32_t)(key.tid ^ key.pid) * 0x165667b19e3779f9ull +
                     (((uint64_t)key.flags << 32) ^ ((uint64_t)(uint32_t)key.cpu << 8) ^
                      key.kind ^ (key.period << 16)) * 0xd6e8feb86659fd93ull;
        set = (size_t)((h ^ (h >> 32)) >> (64 - LC_BITS)) & ~(size_t)1;
        /* the set is fetched from memory while the head is made (the table is larger than
         * a core's second-level cache: without this, the lookup waits for it) */
        __builtin_prefetch(&lc->e[set]);
        __builtin_prefetch((const char *)&lc->e[set] + 64);
        __builtin_prefetch(lc->text[set]);
        __builtin_prefetch(lc->text[set] + 64);
        __builtin_prefetch(lc->text[set + 1]);
        __builtin_prefetch(lc->text[set + 1] + 64);
    }
    if (lc && t->tails) {
        /* the thread's and time columns made now; the rest depends on neither, nor on the
         * thread's name (the only unstable answer, which the head asked for) */
        script_format_head(out, &t->f, smp, c->r, &q->memo);
        c->unstable = 0;
    }
    if (lc) {
        lcache_ent *e0 = &lc->e[set];
        int way = -1;
        for (int w = 0; w < 2; w++) {
            lcache_ent *x = e0 + w;
            if (x->len && lc_key_eq(&x->k, &key) &&
                (!key.has_t || (c->t >= x->v_lo && c->t < x->v_hi))) {
                way = w;
                break;
            }
        }
        if (way >= 0) {
            size_t slot = set + (size_t)way;
            le = e0 + way;
            e0->recent = (uint8_t)way;
            lc->hits++;
            wr_slot(out, lc->text[slot], LC_TEXT, le->len);
            return;
        }
        lc->misses++;
        /* the line made now goes to the entry used less recently */
        way = !e0->recent;
        le = e0 + way;
        e0->recent = (uint8_t)way;
    }
    size_t start = out->len;
    if (lc && t->tails)
        script_format_tail(out, &t->f, smp, c->r, t->evw, &q->memo);
    else
        script_format_memo(out, &t->f, smp, c->r, t->evw, &q->memo);
    if (le) {
        size_t n = out->len - start;
        if (!c->unstable && c->v_lo < c->v_hi && n > 0 && n <= LC_TEXT && !out->oom) {
            le->k = key;
            le->v_lo = c->v_lo;
            le->v_hi = c->v_hi;
            le->len = (uint16_t)n;
            memcpy(lc->text[le - lc->e], out->p + start, n);
        } else {
            le->len = 0;
        }
    }
}

/* --itrace=sN with a filter: a sample the filter left out is an empty line (every sample is
 * one line of text, never empty), which put_text drops */
static void text_hole(void *ctx, ek_sbuf *out)
{
    (void)ctx;
    ek_sbuf_putc(out, '\n');
}

static size_t text_len(void *ctx, const char *data, size_t len)
{
    (void)ctx;
    const char *nl = memchr(data, '\n', len);
    return nl ? (size_t)(nl - data) + 1 : 0;
}

static int put_text(void *ctx, const char *data, size_t len)
{
    text_out *p = ctx;
    size_t start = 0;
    if (p->holes) /* runs of lines without the empty ones */
        for (size_t i = 0; i < len;) {
            const char *nl = memchr(data + i, '\n', len - i);
            size_t end = nl ? (size_t)(nl - data) + 1 : len;
            if (end == i + 1 && data[i] == '\n') {
                if (i > start && p->write(p->ctx, data + start, i - start)) return EK_ERR_IO;
                start = end;
            }
            i = end;
        }
    return len > start && p->write(p->ctx, data + start, len - start) ? EK_ERR_IO : 0;
}

int ek_session_script(ek_session *s, const ek_script_fields *f0, ek_write_fn write, void *ctx)
{
    ek_session_info in;
    ek_session_get_info(s, &in);
    text_out t;
    memset(&t, 0, sizeof t);
    t.f = *f0;
    /* perf drops the fields the synthesised events' sample_type lacks from its defaults
     * (builtin-script.c evsel__do_check_stype) unless -F names them; the cs_etm event's
     * PERF_SAMPLE_CPU (absent with perf record --per-thread) decides the cpu field */
    if (!in.samples_have_cpu && !(t.f.named & EK_SF_F_CPU))
        t.f.fields &= ~(uint32_t)EK_SF_F_CPU;
    if (!t.f.names[0])
        t.f.names[0] = in.event_names[0];
    if (!t.f.names[1])
        t.f.names[1] = in.event_names[1];
    /* perf's event-name column is as wide as the longest name among the session's events */
    t.evw = (int)strlen(in.itrace->instructions ? in.event_names[1] : in.event_names[0]);
    /* the text of a sample depends only on kind, flags, pid, tid, cpu, ip, addr and the
     * slice's window (no time, period, comm, branch stack or code bytes) when none of these
     * fields is shown: the line made for an identical sample can be reused */
    const uint32_t varying = EK_SF_F_TIME | EK_SF_F_PERIOD | EK_SF_F_COMM | EK_SF_F_BRSTACK |
                             EK_SF_F_BRSTACKSYM | EK_SF_F_INSN | EK_SF_F_INSNLEN |
                             EK_SF_F_MISC | EK_SF_F_IPC;
    t.cacheable = !(t.f.fields & varying);
    /* with a time or comm but none of the others, the text after the time column (which is
     * most of it) can be reused the same way: it depends on what the key holds and the period */
    const uint32_t head = EK_SF_F_TIME | EK_SF_F_COMM | EK_SF_F_PERIOD;
    t.tails = !t.cacheable && !(t.f.fields & (varying & ~head));
    t.write = write;
    t.ctx = ctx;
    /* callindent and call chains follow the call stacks: an ordered consumer (which also
     * writes --call-trace's padded DSO names: the fast path's cursor does not pad) */
    if ((t.f.fields & EK_SF_F_CALLINDENT) || in.itrace->callchain || t.f.pad_dso > 0)
        return ek__session_script_ordered(s, &t.f, t.evw, write, ctx);
    t.holes = in.itrace->initial_skip && in.filtered;
    ek_consumer c;
    ek_consumer_init(&c);
    c.ctx = &t;
    c.no_insn = !(t.f.fields & (EK_SF_F_INSN | EK_SF_F_INSNLEN));
    c.queue_begin = text_begin;
    c.queue_end = text_end;
    c.encode = text_encode;
    c.put = put_text;
    c.unit_len = text_len;
    c.hole = text_hole;
    return ek_session_run(s, &c);
}
