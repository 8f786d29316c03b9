/* ek_profile_builder (include/etmkit/profile.h): range and branch counts from samples, with a
 * locator and code of the test's own (two binaries: /bin/a at 0x400000, /lib/b at 0x800000). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/profile.h"
#include "testutil.h"

#define NOP 0xd503201fu
#define X   EK_PROFILE_EXTERNAL

static int fake_locate(void *ctx, const ek_sample *s, uint64_t addr, ek_profile_loc *out)
{
    (void)ctx;
    (void)s;
    memset(out, 0, sizeof *out);
    if (addr >= 0x400000 && addr < 0x500000) {
        out->id.path = "/bin/a";
        out->mapping = 1;
    } else if (addr >= 0x800000 && addr < 0x900000) {
        out->id.path = "/lib/b";
        out->mapping = 2;
    } else {
        return -1;
    }
    out->vaddr = addr;
    return 0;
}

/* /bin/a's code: NOPs but where the test puts something */
static uint32_t code_a[0x100];

static size_t fake_code(void *ctx, const ek_profile_loc *loc, uint64_t vaddr, void *buf, size_t len)
{
    (void)ctx;
    if (loc->mapping != 1 || vaddr < 0x400000 || vaddr >= 0x400000 + sizeof code_a) return 0;
    size_t off = (size_t)(vaddr - 0x400000), room = sizeof code_a - off;
    if (len > room) len = room;
    memcpy(buf, (const uint8_t *)code_a + off, len);
    return len;
}

/* a branch sample of queue q with the exception's return address resume */
static void add_q(ek_profile_builder *b, uint32_t q, uint32_t flags, uint64_t ip, uint64_t to,
                  uint32_t insn, uint64_t resume)
{
    ek_sample s;
    memset(&s, 0, sizeof s);
    s.queue = q;
    s.resume = resume;
    s.kind = EK_SAMPLE_BRANCHES;
    s.flags = flags | EK_SF_BRANCH;
    s.ip = ip;
    s.addr = to;
    s.cpu = 0;
    s.tid = 7;
    s.pid = 7;
    if (insn) {
        s.insn_len = 4;
        memcpy(s.insn, &insn, 4);
    }
    assert_int_equal(ek_profile_builder_add(b, &s), 0);
}

static void add(ek_profile_builder *b, uint32_t flags, uint64_t ip, uint64_t to, uint32_t insn)
{
    add_q(b, 0, flags, ip, to, insn, 0);
}

/* the counts of binary `path` as "r b e n" / "b f t n" lines */
static void counts_text(const ek_profile *p, const char *path, char *out, size_t size)
{
    out[0] = 0;
    size_t len = 0;
    for (size_t i = 0; i < ek_profile_binary_count(p); i++) {
        ek_profile_binary id;
        assert_int_equal(ek_profile_binary_get(p, i, &id), 0);
        if (strcmp(id.path, path)) continue;
        for (int k = 0; k < 3; k += 2) {
            ek_profile_count *v;
            size_t n;
            assert_int_equal(ek_profile_counts(p, i, (ek_profile_kind)k, &v, &n), 0);
            for (size_t j = 0; j < n; j++)
                len += (size_t)snprintf(out + len, size - len, "%c %llx %llx %llu\n", k ? 'b' : 'r',
                                        (unsigned long long)v[j].a, (unsigned long long)v[j].b,
                                        (unsigned long long)v[j].count);
            free(v);
        }
    }
}

static void test_branch_samples(void **state)
{
    (void)state;
    ek_profile *p;
    ek_profile_builder *b;
    assert_int_equal(ek_profile_new(&p), 0);
    assert_int_equal(ek_profile_builder_new(p, fake_locate, NULL, &b), 0);
    add(b, EK_SF_TRACE_BEGIN, 0, 0x400000, 0);
    add(b, EK_SF_CONDITIONAL, 0x400010, 0x400020, 0);
    add(b, EK_SF_CALL, 0x400030, 0x800000, 0);
    add(b, EK_SF_RETURN, 0x800010, 0x400034, 0);
    add(b, EK_SF_RETURN | EK_SF_TRACE_END, 0x400040, 0, 0);
    char got[1024];
    counts_text(p, "/bin/a", got, sizeof got);
    assert_string_equal(got, "r 400000 400010 1\nr 400020 400030 1\nr 400034 400040 1\n"
                             "b 400010 400020 1\nb 400030 ffffffffffffffff 1\n"
                             "b 400040 ffffffffffffffff 1\nb ffffffffffffffff 400034 1\n");
    counts_text(p, "/lib/b", got, sizeof got);
    assert_string_equal(got, "r 800000 800010 1\nb 800010 ffffffffffffffff 1\n"
                             "b ffffffffffffffff 800000 1\n");
    ek_profile_builder_free(b);
    ek_profile_free(p);
}

/* An interrupt taken after a branch ran (gen basic: the bl at 0x4003e4, then an IRQ before
 * its target): an unconditional direct branch counts to its target; a conditional one is
 * decided where the thread resumes. */
static void test_interrupted_branch(void **state)
{
    (void)state;
    ek_profile *p;
    ek_profile_builder *b;
    const uint32_t irq = EK_SF_CALL | EK_SF_ASYNC | EK_SF_INTERRUPT | EK_SF_TRACE_END;
    assert_int_equal(ek_profile_new(&p), 0);
    assert_int_equal(ek_profile_builder_new(p, fake_locate, NULL, &b), 0);
    add(b, EK_SF_TRACE_BEGIN, 0, 0x400000, 0);
    add(b, irq, 0x400008, 0, 0x94000010u); /* bl +0x40 */
    add(b, EK_SF_TRACE_BEGIN, 0, 0x400048, 0);
    add(b, irq, 0x400050, 0, 0x54000100u);     /* b.eq +0x20: taken? */
    add(b, EK_SF_TRACE_BEGIN, 0, 0x400070, 0); /* yes */
    add(b, irq, 0x400080, 0, 0x54000100u);     /* b.eq +0x20 */
    add(b, EK_SF_TRACE_BEGIN, 0, 0x400084, 0); /* not taken */
    add(b, EK_SF_RETURN | EK_SF_TRACE_END, 0x400090, 0, 0);
    char got[1024];
    counts_text(p, "/bin/a", got, sizeof got);
    assert_string_equal(got, "r 400000 400008 1\nr 400048 400050 1\nr 400070 400080 1\n"
                             "r 400084 400090 1\n"
                             "b 400008 400048 1\nb 400050 400070 1\n"
                             "b 400090 ffffffffffffffff 1\n");
    ek_profile_builder_free(b);
    ek_profile_free(p);
}

/* An exception right after a branch, with the trace's return address (ek_sample.resume): the
 * branch went there (gen kernel-and-user: an IRQ between an eret and the first user
 * instruction), or was not taken when resume is the next instruction. Without it, the branch
 * is decided where the thread resumes: at an exception return, never at the vector. */
static void test_exception_resume(void **state)
{
    (void)state;
    ek_profile *p;
    ek_profile_builder *b;
    const uint32_t irq = EK_SF_CALL | EK_SF_ASYNC | EK_SF_INTERRUPT;
    const uint32_t abort = EK_SF_CALL | EK_SF_INTERRUPT; /* synchronous */
    const uint32_t eret = EK_SF_RETURN | EK_SF_INTERRUPT;
    assert_int_equal(ek_profile_new(&p), 0);
    assert_int_equal(ek_profile_builder_new(p, fake_locate, NULL, &b), 0);
    add(b, EK_SF_TRACE_BEGIN, 0, 0x400000, 0);
    add_q(b, 0, irq, 0x400008, 0x800000, 0xd65f03c0u, 0x400040); /* ret, then the IRQ */
    add(b, eret, 0x800010, 0x400040, 0);
    add_q(b, 0, irq, 0x400050, 0x800000, 0x54000100u, 0x400054); /* b.eq +0x20: not taken */
    add(b, eret, 0x800010, 0x400054, 0);
    add_q(b, 0, abort, 0x400060, 0x800000, 0x54000100u, 0x400080); /* b.eq: taken, fault */
    add(b, eret, 0x800010, 0x400080, 0);
    /* no return address: the vector (here in /bin/a) does not decide the ret */
    add_q(b, 0, irq, 0x400090, 0x400100, 0xd65f03c0u, 0);
    add(b, 0, 0x400104, 0x400108, 0);
    add(b, eret, 0x800010, 0x4000c0, 0);
    add(b, EK_SF_RETURN | EK_SF_TRACE_END, 0x4000c4, 0, 0);
    char got[1024];
    counts_text(p, "/bin/a", got, sizeof got);
    assert_string_equal(got, "r 400000 400008 1\nr 400040 400050 1\nr 400054 400060 1\n"
                             "r 400080 400090 1\nr 4000c0 4000c4 1\nr 400100 400104 1\n"
                             "b 400008 400040 1\nb 400060 400080 1\nb 400090 4000c0 1\n"
                             "b 4000c4 ffffffffffffffff 1\nb 400104 400108 1\n"
                             "b ffffffffffffffff 400040 1\nb ffffffffffffffff 400054 1\n"
                             "b ffffffffffffffff 400080 1\nb ffffffffffffffff 4000c0 1\n");
    ek_profile_builder_free(b);
    ek_profile_free(p);
}

/* Two decodings of one trace source (a shared sink's trace copied into two CPUs' queues, gen
 * shared-sink-multi-cpu) interleave in the output: each queue's runs are its own. */
static void test_queues(void **state)
{
    (void)state;
    ek_profile *p;
    ek_profile_builder *b;
    assert_int_equal(ek_profile_new(&p), 0);
    assert_int_equal(ek_profile_builder_new(p, fake_locate, NULL, &b), 0);
    add_q(b, 0, EK_SF_TRACE_BEGIN, 0, 0x400000, 0, 0);
    add_q(b, 1, EK_SF_TRACE_BEGIN, 0, 0x400200, 0, 0);
    add_q(b, 0, 0, 0x400010, 0x400020, 0, 0);
    add_q(b, 1, 0, 0x400210, 0x400220, 0, 0);
    add_q(b, 1, EK_SF_TRACE_END, 0x400230, 0, 0, 0);
    add_q(b, 0, EK_SF_TRACE_END, 0x400030, 0, 0, 0);
    char got[1024];
    counts_text(p, "/bin/a", got, sizeof got);
    assert_string_equal(got, "r 400000 400010 1\nr 400020 400030 1\nr 400200 400210 1\n"
                             "r 400220 400230 1\n"
                             "b 400010 400020 1\nb 400210 400220 1\n");
    ek_profile_builder_free(b);
    ek_profile_free(p);
}

/* A sample whose run would hold an unconditional branch (another queue's end-of-trace flush
 * of a shared sink's trace, gen shared-sink-multi-cpu) gives no range and leaves the
 * stream's run alone. */
static void test_impossible_run(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof code_a / 4; i++)
        code_a[i] = NOP;
    code_a[3] = 0x14000001u; /* 0x40000c: b +4 */
    ek_profile *p;
    ek_profile_builder *b;
    assert_int_equal(ek_profile_new(&p), 0);
    assert_int_equal(ek_profile_builder_new(p, fake_locate, NULL, &b), 0);
    ek_profile_builder_set_code(b, fake_code, NULL);
    add(b, 0, 0x400100, 0x400000, 0);
    add(b, EK_SF_CALL | EK_SF_SYSCALLRET | EK_SF_TRACE_END, 0x400020, 0, 0);
    add(b, 0, 0x40000c, 0x400010, 0);
    char got[1024];
    counts_text(p, "/bin/a", got, sizeof got);
    assert_string_equal(got, "r 400000 40000c 1\n"
                             "b 40000c 400010 1\nb 400020 ffffffffffffffff 1\n"
                             "b 400100 400000 1\n");
    ek_profile_build_stats st;
    ek_profile_builder_get_stats(b, &st);
    assert_int_equal(st.impossible, 1);
    ek_profile_builder_free(b);
    ek_profile_free(p);
}

/* Branch stacks count as perf2bolt counts them: every entry, and the runs between them. */
static void test_stack_samples(void **state)
{
    (void)state;
    ek_profile *p;
    ek_profile_builder *b;
    assert_int_equal(ek_profile_new(&p), 0);
    assert_int_equal(ek_profile_builder_new(p, fake_locate, NULL, &b), 0);
    ek_branch st[2] = {{0x400030, 0x400040}, {0x400010, 0x400020}}; /* newest first */
    ek_sample s;
    memset(&s, 0, sizeof s);
    s.kind = EK_SAMPLE_INSTRUCTIONS;
    s.ip = 0x400044;
    s.nbranches = 2;
    s.branches = st;
    assert_int_equal(ek_profile_builder_add(b, &s), 0);
    assert_int_equal(ek_profile_builder_add(b, &s), 0);
    char got[1024];
    counts_text(p, "/bin/a", got, sizeof got);
    assert_string_equal(got, "r 400020 400030 2\nb 400010 400020 2\nb 400030 400040 2\n");
    ek_profile_builder_free(b);
    ek_profile_free(p);

    /* a run between two entries that cannot have run (an unconditional B inside: no range,
     * counted impossible) leaves the newer entries counted, and the sample's status 0 (the
     * loop stopped there, and returned the run's 1) */
    for (size_t i = 0; i < sizeof code_a / 4; i++)
        code_a[i] = NOP;
    code_a[0x24 / 4] = 0x14000010u; /* 0x400024: b +0x40 */
    assert_int_equal(ek_profile_new(&p), 0);
    assert_int_equal(ek_profile_builder_new(p, fake_locate, NULL, &b), 0);
    ek_profile_builder_set_code(b, fake_code, NULL);
    ek_branch three[3] = {{0x400058, 0x400060}, {0x400030, 0x400050}, {0x400010, 0x400020}};
    s.ip = 0x400064;
    s.nbranches = 3;
    s.branches = three;
    assert_int_equal(ek_profile_builder_add(b, &s), 0);
    counts_text(p, "/bin/a", got, sizeof got);
    assert_string_equal(got, "r 400050 400058 1\n"
                             "b 400010 400020 1\nb 400030 400050 1\nb 400058 400060 1\n");
    ek_profile_build_stats bs;
    ek_profile_builder_get_stats(b, &bs);
    assert_int_equal(bs.impossible, 1);
    ek_profile_builder_free(b);
    ek_profile_free(p);
}

/* The work split over threads (ek_profile_build_part): a builder per queue (LOCAL), and one
 * (SHARED) given, in output order, the samples a LOCAL one hands on, make what one builder
 * (ALL) given every sample in output order makes -- counts and stats -- over random sample
 * sequences of three queues and two threads that move between them, with interrupts and trace
 * ends after conditional, indirect and unconditional branches (pending branches, decided
 * where the thread resumes, maybe in another queue), exception returns and trace starts. */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(uint32_t n)
{
    rnd_state ^= rnd_state << 13, rnd_state ^= rnd_state >> 7, rnd_state ^= rnd_state << 17;
    return (uint32_t)(rnd_state >> 16) % n;
}

static uint64_t rnd_addr(void)
{
    switch (rnd(8)) {
    case 0: return 0x800000 + 4 * rnd(64); /* /lib/b */
    case 1: return rnd(4) ? 0 : 0x100000;  /* none, or in no binary */
    default: return 0x400000 + 4 * rnd(64);
    }
}

static void profile_text(const ek_profile *p, char *out, size_t size)
{
    char a[8192], b[8192];
    counts_text(p, "/bin/a", a, sizeof a);
    counts_text(p, "/lib/b", b, sizeof b);
    snprintf(out, size, "%s--\n%s", a, b);
}

static void test_split_equals_whole(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof code_a / 4; i++)
        code_a[i] = NOP;
    code_a[5] = 0x14000010u;  /* 0x400014: b +0x40 */
    code_a[9] = 0x54000100u;  /* 0x400024: b.eq +0x20 */
    code_a[13] = 0xd65f03c0u; /* 0x400034: ret */
    code_a[17] = 0x94000008u; /* 0x400044: bl +0x20 */
    code_a[21] = 0x54000081u; /* 0x400054: b.ne +0x10 */
    static const uint32_t kinds[] = {
        EK_SF_TRACE_BEGIN,
        0,
        EK_SF_CONDITIONAL,
        EK_SF_CALL,
        EK_SF_RETURN,
        EK_SF_RETURN | EK_SF_TRACE_END,
        EK_SF_TRACE_END,
        EK_SF_CALL | EK_SF_ASYNC | EK_SF_INTERRUPT | EK_SF_TRACE_END, /* irq, trace ends */
        EK_SF_CALL | EK_SF_ASYNC | EK_SF_INTERRUPT,                   /* irq */
        EK_SF_CALL | EK_SF_INTERRUPT,                                 /* abort */
        EK_SF_RETURN | EK_SF_INTERRUPT,                               /* eret */
        EK_SF_CALL | EK_SF_SYSCALLRET,                                /* svc */
        EK_SF_RETURN | EK_SF_SYSCALLRET,                              /* eret of an svc */
    };
    const uint64_t branchy[] = {0x400014, 0x400024, 0x400034, 0x400044, 0x400054};
    size_t deferred_total = 0;
    int differs_without_shared = 0;
    for (int round = 0; round < 200; round++) {
        enum { NQ = 3, NS = 300 };
        ek_sample smp[NS];
        for (int k = 0; k < NS; k++) {
            ek_sample *s = &smp[k];
            memset(s, 0, sizeof *s);
            s->kind = EK_SAMPLE_BRANCHES;
            s->queue = rnd(NQ);
            s->cpu = (int32_t)s->queue;
            s->tid = s->pid = 7 + (int32_t)rnd(2);
            s->flags = EK_SF_BRANCH | kinds[rnd(sizeof kinds / sizeof kinds[0])];
            s->ip = rnd(3) ? branchy[rnd(5)] : rnd_addr();
            s->addr = rnd(4) ? rnd_addr() : branchy[rnd(5)] + 4 * rnd(9);
            if (s->flags & EK_SF_TRACE_BEGIN) s->ip = 0;
            if (rnd(3) == 0) s->resume = rnd(2) ? s->ip + 4 : rnd_addr();
            /* the instruction bytes: carried, or read from the code */
            if (rnd(2) && s->ip >= 0x400000 && s->ip < 0x400000 + sizeof code_a) {
                s->insn_len = 4;
                memcpy(s->insn, &code_a[(s->ip - 0x400000) / 4], 4);
            }
        }
        /* one builder, every sample */
        ek_profile *pw, *ps;
        ek_profile_builder *bw, *bs, *bl[NQ];
        ek_profile *pl[NQ];
        assert_int_equal(ek_profile_new(&pw), 0);
        assert_int_equal(ek_profile_builder_new(pw, fake_locate, NULL, &bw), 0);
        ek_profile_builder_set_code(bw, fake_code, NULL);
        for (int k = 0; k < NS; k++)
            assert_int_equal(ek_profile_builder_add(bw, &smp[k]), 0);
        /* split: a LOCAL builder a queue, the samples they hand on to the SHARED one */
        assert_int_equal(ek_profile_new(&ps), 0);
        assert_int_equal(ek_profile_builder_new(ps, fake_locate, NULL, &bs), 0);
        ek_profile_builder_set_code(bs, fake_code, NULL);
        ek_profile_builder_set_part(bs, EK_PROFILE_BUILD_SHARED);
        for (int q = 0; q < NQ; q++) {
            assert_int_equal(ek_profile_new(&pl[q]), 0);
            assert_int_equal(ek_profile_builder_new(pl[q], fake_locate, NULL, &bl[q]), 0);
            ek_profile_builder_set_code(bl[q], fake_code, NULL);
            ek_profile_builder_set_part(bl[q], EK_PROFILE_BUILD_LOCAL);
        }
        int handed[NS];
        for (int k = 0; k < NS; k++) { /* (each queue in its order: any interleaving will do) */
            handed[k] = ek_profile_builder_add(bl[smp[k].queue], &smp[k]);
            assert_true(handed[k] == 0 || handed[k] == 1);
            deferred_total += (size_t)handed[k];
        }
        char whole[20000], split[20000], local_only[20000];
        ek_profile *pm;
        assert_int_equal(ek_profile_new(&pm), 0);
        for (int q = 0; q < NQ; q++)
            assert_int_equal(ek_profile_merge(pm, pl[q], NULL), 0);
        profile_text(pm, local_only, sizeof local_only);
        for (int k = 0; k < NS; k++)
            if (handed[k]) assert_int_equal(ek_profile_builder_add(bs, &smp[k]), 0);
        ek_profile_build_stats sw, ss;
        ek_profile_builder_get_stats(bw, &sw);
        ek_profile_builder_get_stats(bs, &ss);
        for (int q = 0; q < NQ; q++) {
            ek_profile_build_stats sq;
            ek_profile_builder_get_stats(bl[q], &sq);
            ek_profile_builder_add_stats(&ss, &sq);
            assert_int_equal(ek_profile_merge(ps, pl[q], NULL), 0);
        }
        profile_text(pw, whole, sizeof whole);
        profile_text(ps, split, sizeof split);
        assert_string_equal(split, whole);
        assert_memory_equal(&ss, &sw, sizeof sw);
        if (strcmp(local_only, whole)) differs_without_shared++;
        for (int q = 0; q < NQ; q++) {
            ek_profile_builder_free(bl[q]);
            ek_profile_free(pl[q]);
        }
        ek_profile_builder_free(bw);
        ek_profile_builder_free(bs);
        ek_profile_free(pw);
        ek_profile_free(ps);
        ek_profile_free(pm);
    }
    /* the shared part mattered: without it the counts differ (pending branches resolved) */
    assert_true(deferred_total > 1000);
    assert_true(differs_without_shared > 100);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_branch_samples),
        cmocka_unit_test(test_interrupted_branch),
        cmocka_unit_test(test_exception_resume),
        cmocka_unit_test(test_queues),
        cmocka_unit_test(test_impossible_run),
        cmocka_unit_test(test_stack_samples),
        cmocka_unit_test(test_split_equals_whole),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
