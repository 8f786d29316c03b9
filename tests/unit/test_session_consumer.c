/* Consumers of a session (ek_session_run): an ordered consumer that also wants the elements
 * gets the same samples, in the same order, as one that does not (elements do not disturb the
 * output), each sample after an element of its thread; a staged consumer (encode on the
 * decoder threads, put in order) gets the same samples in the same order, with --itrace=sN
 * leaving out the same first N; an ordered consumer with a stage has every sample staged once,
 * on its queue's thread, and gets the ones the stage hands on in output order; a consumer of
 * the first version's size is run as such; a consumer a session cannot run is refused; a consumer that
 * names the elements it wants (elem_types, elem_flags) gets exactly those of the whole stream,
 * in its order, and the same samples. On `etmkit gen --scenario two-processes` (3 CPUs, one
 * ETF each, time stamps). An element's record for an ordered consumer is not written into a
 * buffer that ran out of memory. The queues' hand-out to decoder threads (qpick_take). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "etmkit/etmkit.h"
#include "etmkit/session.h"
#include "etmkit/sim.h"
#include "session/session_int.h"
#include "testutil.h"

/* What a sample is, for comparing runs. */
typedef struct key {
    uint64_t ip, addr, period;
    uint32_t flags;
    int32_t pid, tid, cpu;
    uint32_t kind, zero; /* (no padding: keys are compared as bytes) */
} key;

typedef struct got {
    key *v;
    size_t n, cap;
    uint64_t elems, ranges;
    int32_t last_pid[8], last_tid[8]; /* thread of the last element of each CPU */
    int have_last[8];
    size_t thread_mismatch;           /* samples whose thread is not their CPU's last element's */
} got;

static key key_of(const ek_sample *s)
{
    key k;
    memset(&k, 0, sizeof k);
    k.ip = s->ip;
    k.addr = s->addr;
    k.period = s->period;
    k.flags = s->flags;
    k.pid = s->pid;
    k.tid = s->tid;
    k.cpu = s->cpu;
    k.kind = s->kind;
    return k;
}

static void push(got *g, key k)
{
    if (g->n == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 1024;
        g->v = realloc(g->v, g->cap * sizeof *g->v);
        assert_non_null(g->v);
    }
    g->v[g->n++] = k;
}

static int on_sample(void *ctx, const ek_sample *s, const ek_script_resolver *r)
{
    (void)r;
    got *g = ctx;
    push(g, key_of(s));
    if (s->cpu >= 0 && s->cpu < 8 && g->have_last[s->cpu] &&
        (g->last_pid[s->cpu] != s->pid || g->last_tid[s->cpu] != s->tid))
        g->thread_mismatch++;
    return 0;
}

static int on_elem(void *ctx, const ek_session_elem *e)
{
    got *g = ctx;
    g->elems++;
    if (e->elem->type == EK_ELEM_INSTR_RANGE) g->ranges++;
    if (e->cpu >= 0 && e->cpu < 8) {
        g->last_pid[e->cpu] = e->pid;
        g->last_tid[e->cpu] = e->tid;
        g->have_last[e->cpu] = 1;
    }
    return 0;
}

/* staged: each sample's key as one unit, made on the decoder thread */
static void st_encode(void *qctx, ek_sbuf *out, const ek_sample *s, ek_sample_ctx *c)
{
    (void)qctx;
    assert_non_null(c->r);
    assert_int_not_equal(c->block, 0);
    key k = key_of(s);
    ek_sbuf_put(out, (const char *)&k, sizeof k);
}

static void st_hole(void *ctx, ek_sbuf *out)
{
    (void)ctx;
    key k;
    memset(&k, 0xff, sizeof k);
    ek_sbuf_put(out, (const char *)&k, sizeof k);
}

static size_t st_len(void *ctx, const char *data, size_t len)
{
    (void)ctx;
    (void)data;
    return len >= sizeof(key) ? sizeof(key) : 0;
}

static int st_put(void *ctx, const char *data, size_t len)
{
    got *g = ctx;
    assert_int_equal(len % sizeof(key), 0);
    for (size_t off = 0; off < len; off += sizeof(key)) {
        key k;
        memcpy(&k, data + off, sizeof k);
        push(g, k);
    }
    return 0;
}

static int queues_begun, queues_ended;
static void *st_begin(void *ctx)
{
    (void)ctx;
    __atomic_add_fetch(&queues_begun, 1, __ATOMIC_RELAXED);
    return &queues_begun;
}
static void st_end(void *ctx, void *qctx)
{
    (void)ctx;
    assert_ptr_equal(qctx, &queues_begun);
    __atomic_add_fetch(&queues_ended, 1, __ATOMIC_RELAXED);
}

static char *dir, *data, *symfs;

static int setup(void **state)
{
    (void)state;
    dir = tu_tmpdir();
    if (!dir) return -1;
    ek_sim_opts o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.scenario = "two-processes";
    o.seed = 1;
    o.outdir = dir;
    ek_sim_result r;
    if (ek_sim_run(&o, &r)) return -1;
    if (asprintf(&data, "%s/perf.data", dir) < 0) return -1;
    if (asprintf(&symfs, "%s/symfs", dir) < 0) return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_rmtree(dir);
    free(dir);
    free(data);
    free(symfs);
    return 0;
}

static ek_session *open_it(const char *it)
{
    ek_session_opts o;
    ek_session_opts_init(&o);
    o.symfs = symfs;
    assert_int_equal(ek_itrace_parse(it, &o.itrace, NULL), 0);
    ek_session *s = NULL;
    assert_int_equal(ek_session_open(data, &o, NULL, &s), 0);
    return s;
}

static void same(const got *a, const got *b, size_t skip)
{
    assert_int_equal(a->n, b->n + skip);
    for (size_t i = 0; i < b->n; i++)
        assert_memory_equal(&a->v[i + skip], &b->v[i], sizeof(key));
}

static void test_elements_and_samples(void **state)
{
    (void)state;
    const char *its[] = {"b", "i1000il8", "bZ"};
    for (size_t t = 0; t < sizeof its / sizeof its[0]; t++) {
        got plain, with;
        memset(&plain, 0, sizeof plain);
        memset(&with, 0, sizeof with);
        ek_session *s = open_it(its[t]);
        assert_int_equal(ek_session_samples(s, on_sample, &plain), 0);
        ek_session_free(s);

        s = open_it(its[t]);
        ek_consumer c;
        ek_consumer_init(&c);
        c.wants = EK_CONSUME_ELEMS;
        c.ctx = &with;
        c.sample = on_sample;
        c.elem = on_elem;
        assert_int_equal(ek_session_run(s, &c), 0);
        ek_session_stats st;
        ek_session_get_stats(s, &st);
        ek_session_free(s);

        assert_true(plain.n > 100);
        same(&plain, &with, 0);
        assert_int_equal(with.n, st.samples_branches + st.samples_instructions);
        assert_true(with.ranges > 0 && with.elems > with.ranges);
        assert_int_equal(with.thread_mismatch, 0);
        assert_int_equal(plain.elems, 0);
        free(plain.v);
        free(with.v);
    }
}

/* Every element handed over, as it came. */
typedef struct ekey {
    uint64_t st, en, time;
    uint32_t type, flags;
    int32_t pid, tid, cpu, has_time;
} ekey;
typedef struct egot {
    got g;
    ekey *v;
    size_t n, cap;
} egot;

static int on_elem_all(void *ctx, const ek_session_elem *e)
{
    egot *g = ctx;
    if (g->n == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 4096;
        g->v = realloc(g->v, g->cap * sizeof *g->v);
        assert_non_null(g->v);
    }
    ekey k;
    memset(&k, 0, sizeof k);
    k.st = e->elem->st_addr;
    k.en = e->elem->en_addr;
    k.time = e->time;
    k.type = e->elem->type;
    k.flags = e->elem->flags;
    k.pid = e->pid;
    k.tid = e->tid;
    k.cpu = e->cpu;
    k.has_time = e->has_time;
    g->v[g->n++] = k;
    return 0;
}

static int on_sample_e(void *ctx, const ek_sample *s, const ek_script_resolver *r)
{
    (void)r;
    egot *g = ctx;
    push(&g->g, key_of(s));
    return 0;
}

static void run_masked(uint32_t types, uint32_t flags, egot *g)
{
    memset(g, 0, sizeof *g);
    ek_session *s = open_it("b");
    ek_consumer c;
    ek_consumer_init(&c);
    c.wants = EK_CONSUME_ELEMS;
    c.ctx = g;
    c.sample = on_sample_e;
    c.elem = on_elem_all;
    c.elem_types = types;
    c.elem_flags = flags;
    assert_int_equal(ek_session_run(s, &c), 0);
    ek_session_free(s);
}

static void test_element_masks(void **state)
{
    (void)state;
    egot all;
    run_masked(0, 0, &all);
    assert_true(all.g.n > 100);
    static const struct {
        uint32_t types, flags;
    } m[] = {{1u << EK_ELEM_INSTR_RANGE, EK_ELEMF_LAST_COND},
             {1u << EK_ELEM_INSTR_RANGE, 0},
             {(1u << EK_ELEM_PE_CONTEXT) | (1u << EK_ELEM_TIMESTAMP), 0},
             {0, EK_ELEMF_LAST_EXEC}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        egot part;
        run_masked(m[i].types, m[i].flags, &part);
        same(&all.g, &part.g, 0);
        size_t k = 0;
        for (size_t j = 0; j < all.n; j++) {
            const ekey *e = &all.v[j];
            if ((m[i].types && !((m[i].types >> e->type) & 1u)) ||
                (m[i].flags && !(e->flags & m[i].flags)))
                continue;
            assert_true(k < part.n);
            assert_memory_equal(e, &part.v[k], sizeof *e);
            k++;
        }
        assert_int_equal(k, part.n);
        assert_true(part.n > 0 && part.n < all.n);
        free(part.g.v);
        free(part.v);
    }
    free(all.g.v);
    free(all.v);
}

static void test_staged(void **state)
{
    (void)state;
    const char *its[] = {"b", "bs7", "i1000iZ"};
    const size_t skips[] = {0, 7, 0};
    for (size_t t = 0; t < sizeof its / sizeof its[0]; t++) {
        got ordered, staged;
        memset(&ordered, 0, sizeof ordered);
        memset(&staged, 0, sizeof staged);
        /* the reference: every sample, in order (no skip) */
        char plain_it[16];
        snprintf(plain_it, sizeof plain_it, "%s", its[t]);
        char *sk = strchr(plain_it, 's');
        if (sk) *sk = 0;
        ek_session *s = open_it(plain_it);
        assert_int_equal(ek_session_samples(s, on_sample, &ordered), 0);
        ek_session_free(s);

        queues_begun = queues_ended = 0;
        s = open_it(its[t]);
        ek_consumer c;
        ek_consumer_init(&c);
        c.ctx = &staged;
        c.queue_begin = st_begin;
        c.queue_end = st_end;
        c.encode = st_encode;
        c.put = st_put;
        c.unit_len = st_len;
        c.hole = st_hole;
        assert_int_equal(ek_session_run(s, &c), 0);
        /* a session runs once */
        assert_int_equal(ek_session_run(s, &c), EK_ERR_ARG);
        ek_session_free(s);
        assert_true(queues_begun > 0);
        assert_int_equal(queues_begun, queues_ended);
        same(&ordered, &staged, skips[t]);
        free(ordered.v);
        free(staged.v);
    }
}

/* ordered with a stage: every sample staged once, on a queue's thread; the ones the stage
 * hands on (here: ip a multiple of 3 instructions of 4 bytes... any rule of the sample's own)
 * reach `sample` in output order */
#define STAGE_QUEUES 16
typedef struct stage_q {
    got g;
    int ended;
} stage_q;
static stage_q stage_qs[STAGE_QUEUES];
static int stage_nq;

static int handed_on(const ek_sample *s)
{
    return (s->ip / 4) % 3 == 0;
}

static void *sg_begin(void *ctx)
{
    (void)ctx;
    int k = __atomic_fetch_add(&stage_nq, 1, __ATOMIC_RELAXED);
    assert_true(k < STAGE_QUEUES);
    return &stage_qs[k];
}

static void sg_end(void *ctx, void *qctx)
{
    (void)ctx;
    ((stage_q *)qctx)->ended = 1;
}

static int sg_stage(void *qctx, const ek_sample *s, ek_sample_ctx *c)
{
    assert_non_null(c->r);
    assert_int_not_equal(c->block, 0);
    stage_q *q = qctx;
    assert_false(q->ended);
    push(&q->g, key_of(s));
    return handed_on(s);
}

static int key_cmp(const void *a, const void *b)
{
    return memcmp(a, b, sizeof(key));
}

static void test_stage(void **state)
{
    (void)state;
    const char *its[] = {"b", "i1000il4"};
    for (size_t t = 0; t < sizeof its / sizeof its[0]; t++) {
        got ordered, later;
        memset(&ordered, 0, sizeof ordered);
        memset(&later, 0, sizeof later);
        ek_session *s = open_it(its[t]);
        assert_int_equal(ek_session_samples(s, on_sample, &ordered), 0);
        ek_session_free(s);

        memset(stage_qs, 0, sizeof stage_qs);
        stage_nq = 0;
        s = open_it(its[t]);
        ek_consumer c;
        ek_consumer_init(&c);
        c.ctx = &later;
        c.sample = on_sample;
        c.stage = sg_stage;
        c.queue_begin = sg_begin;
        c.queue_end = sg_end;
        assert_int_equal(ek_session_run(s, &c), 0);
        ek_session_free(s);
        /* every sample staged once (the queues' samples together: the same multiset) */
        got all;
        memset(&all, 0, sizeof all);
        assert_true(stage_nq > 1);
        for (int q = 0; q < stage_nq; q++) {
            assert_true(stage_qs[q].ended);
            for (size_t i = 0; i < stage_qs[q].g.n; i++)
                push(&all, stage_qs[q].g.v[i]);
            free(stage_qs[q].g.v);
        }
        assert_true(ordered.n > 100);
        assert_int_equal(all.n, ordered.n);
        key *sorted = malloc(ordered.n * sizeof *sorted);
        assert_non_null(sorted);
        memcpy(sorted, ordered.v, ordered.n * sizeof *sorted);
        qsort(sorted, ordered.n, sizeof *sorted, key_cmp);
        qsort(all.v, all.n, sizeof *all.v, key_cmp);
        assert_memory_equal(sorted, all.v, all.n * sizeof *all.v);
        /* the ones handed on: in output order */
        size_t k = 0;
        for (size_t i = 0; i < ordered.n; i++) {
            if ((ordered.v[i].ip / 4) % 3) continue;
            assert_true(k < later.n);
            assert_memory_equal(&ordered.v[i], &later.v[k], sizeof(key));
            k++;
        }
        assert_int_equal(k, later.n);
        assert_true(later.n > 0 && later.n < ordered.n);
        free(sorted);
        free(all.v);
        free(ordered.v);
        free(later.v);
    }
}

static void test_refused(void **state)
{
    (void)state;
    ek_session *s = open_it("b");
    ek_consumer c;
    ek_consumer_init(&c);
    c.encode = st_encode; /* staged without put */
    assert_int_equal(ek_session_run(s, &c), EK_ERR_ARG);
    c.size = 8; /* a consumer of a size the session does not know */
    assert_int_equal(ek_session_run(s, &c), EK_ERR_ARG);
    /* a stage: with an ordered sample callback only, and every sample in the output */
    ek_consumer_init(&c);
    c.stage = sg_stage;
    assert_int_equal(ek_session_run(s, &c), EK_ERR_ARG); /* no sample */
    c.sample = on_sample;
    c.encode = st_encode;
    c.put = st_put;
    assert_int_equal(ek_session_run(s, &c), EK_ERR_ARG); /* staged too */
    ek_session_free(s);
    s = open_it("bs7");
    ek_consumer_init(&c);
    c.sample = on_sample;
    c.stage = sg_stage;
    assert_int_equal(ek_session_run(s, &c), EK_ERR_ARG); /* --itrace=sN */
    ek_session_free(s);
}

/* A consumer of the first version's size (no stage): the fields past it are not read. */
static void test_consumer_v1(void **state)
{
    (void)state;
    got ordered, v1;
    memset(&ordered, 0, sizeof ordered);
    memset(&v1, 0, sizeof v1);
    ek_session *s = open_it("b");
    assert_int_equal(ek_session_samples(s, on_sample, &ordered), 0);
    ek_session_free(s);
    s = open_it("b");
    ek_consumer c;
    ek_consumer_init(&c);
    c.size = (uint32_t)EK_CONSUMER_SIZE_V1;
    c.ctx = &v1;
    c.sample = on_sample;
    c.stage = sg_stage; /* (past the size: as if absent) */
    c.queue_begin = NULL;
    stage_nq = 0;
    assert_int_equal(ek_session_run(s, &c), 0);
    ek_session_free(s);
    assert_int_equal(stage_nq, 0);
    same(&ordered, &v1, 0);
    free(ordered.v);
    free(v1.v);
}

/* The recording a session read is the caller's too (etmkit export and inject use it rather
 * than opening the file again), for a file and for a perf.data folder (its data file). */
static void test_session_file(void **state)
{
    (void)state;
    ek_perf_file *f = NULL;
    assert_int_equal(ek_perf_open(data, NULL, &f), 0);
    char *folder = NULL, *inner = NULL;
    assert_true(asprintf(&folder, "%s/folder.data", dir) > 0);
    assert_true(asprintf(&inner, "%s/data", folder) > 0);
    assert_int_equal(mkdir(folder, 0755), 0);
    assert_int_equal(symlink(data, inner), 0);
    const char *paths[2] = {data, folder};
    for (int i = 0; i < 2; i++) {
        ek_session_opts o;
        ek_session_opts_init(&o);
        ek_session *s = NULL;
        assert_int_equal(ek_session_open(paths[i], &o, NULL, &s), 0);
        const ek_perf_file *sf = ek_session_file(s);
        assert_non_null(sf);
        assert_int_equal(ek_perf_nattrs(sf), ek_perf_nattrs(f));
        assert_int_equal(ek_perf_header(sf)->data_end, ek_perf_header(f)->data_end);
        ek_session_free(s);
    }
    assert_null(ek_session_file(NULL));
    unlink(inner);
    rmdir(folder);
    free(inner);
    free(folder);
    ek_perf_free(f);
}

/* An element's record for an ordered consumer (made on its decoder thread, in place in the
 * queue's buffer): into a buffer that ran out of memory nothing, also with room left (every
 * append to such a buffer is dropped; the open-coded room check wrote it). */
static void test_elem_record_not_past_oom(void **state)
{
    (void)state;
    ek_elem el;
    memset(&el, 0, sizeof el);
    el.type = EK_ELEM_INSTR_RANGE;
    el.st_addr = 0x400000;
    el.en_addr = 0x400010;
    ek_session_elem e = {&el, 7, 7, 1, 1, 1000};
    ek_sbuf b = EK_SBUF_INIT;
    session_elem_record(&b, &e);
    const size_t one = b.len;
    assert_true(one >= sizeof el);
    session_elem_record(&b, &e);
    assert_int_equal(b.len, 2 * one);
    assert_true(ek_sbuf_reserve(&b, 4 * one) == 0);
    b.oom = 1;
    session_elem_record(&b, &e);
    assert_int_equal(b.len, 2 * one);
    ek_sbuf_free(&b);
}

/* The queues handed to decoder threads (qpick_take): every queue once; the first worker's
 * always the first not taken in the writer's order (so that the queue the writer waits for is
 * always being decoded), the others' the longest not taken (the first of equals); without a
 * taken list, in order. Random lengths, workers and turns. */
static void test_queue_pick(void **state)
{
    (void)state;
    qpick p = {5, 0, NULL, NULL};
    for (size_t k = 0; k < 5; k++)
        assert_int_equal(qpick_take(&p, k & 1), k);
    assert_int_equal(qpick_take(&p, 0), 5);
    uint64_t r = 0x9e3779b97f4a7c15ull;
    for (int round = 0; round < 2000; round++) {
        uint64_t bytes[12];
        uint8_t taken[12] = {0}, seen[12] = {0};
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        const size_t nq = 1 + r % 12;
        for (size_t i = 0; i < nq; i++) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            bytes[i] = r % 4; /* equal lengths often */
        }
        qpick q = {nq, 0, taken, bytes};
        for (size_t n = 0; n < nq; n++) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            const int in_order = r % 3 == 0;
            size_t want = nq;
            for (size_t i = 0; i < nq && want == nq; i++)
                if (!seen[i]) want = i;
            if (!in_order)
                for (size_t i = want + 1; i < nq; i++)
                    if (!seen[i] && bytes[i] > bytes[want]) want = i;
            const size_t k = qpick_take(&q, in_order);
            assert_int_equal(k, want);
            seen[k] = 1;
        }
        assert_int_equal(qpick_take(&q, 1), nq);
        assert_int_equal(qpick_take(&q, 0), nq);
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_elements_and_samples),
        cmocka_unit_test(test_staged),
        cmocka_unit_test(test_element_masks),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_stage),
        cmocka_unit_test(test_consumer_v1),
        cmocka_unit_test(test_session_file),
        cmocka_unit_test(test_elem_record_not_past_oom),
        cmocka_unit_test(test_queue_pick),
    };
    return tu_run_group(argc, argv, tests, setup, teardown);
}
