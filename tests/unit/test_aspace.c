/* The address-space timeline: maps by time, replacement at the same address, late maps,
 * fork and exec, threads and comms; and the session's resolver over it, with and without a
 * decoder thread's cache. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "session/aspace.h"
#include "session/dso.h"
#include "session/session_int.h"
#include "testutil.h"

static as_dso *A = (as_dso *)0x1, *B = (as_dso *)0x2, *C = (as_dso *)0x3, *K = (as_dso *)0x4;

static void mmap_ev(aspace *as, int32_t pid, uint64_t key, int64_t rec, uint64_t start, uint64_t len,
                    uint64_t pgoff, as_dso *d)
{
    as_event e;
    memset(&e, 0, sizeof e);
    e.type = AS_EV_MMAP;
    e.key = key;
    e.record = rec;
    e.pid = pid;
    e.tid = pid;
    e.start = start;
    e.len = len;
    e.pgoff = pgoff;
    e.dso = d;
    e.kernel = pid < 0;
    e.exec = 1;
    assert_int_equal(as_add(as, &e), 0);
}

static void simple_ev(aspace *as, int type, uint64_t key, int64_t rec, int32_t pid, int32_t tid,
                      int32_t ppid, const char *comm, int exec)
{
    as_event e;
    memset(&e, 0, sizeof e);
    e.type = type;
    e.key = key;
    e.record = rec;
    e.pid = pid;
    e.tid = tid;
    e.ppid = ppid;
    e.ptid = ppid;
    e.comm = comm;
    e.comm_exec = exec;
    assert_int_equal(as_add(as, &e), 0);
}

/* A library unloaded and another loaded at the same address: each slice sees the one of its
 * time; a window that holds the change is ambiguous and takes the one valid at its end. */
static void test_reuse(void **state)
{
    aspace *as = as_new();
    mmap_ev(as, 10, 100, 1, 0x7000, 0x1000, 0, A);
    mmap_ev(as, 10, 500, 2, 0x7000, 0x1000, 0, B);
    assert_int_equal(as_build(as), 0);
    int how;
    const as_map *m = as_find(as, 10, 0x7010, 100, 400, 0, 0, &how);
    assert_non_null(m);
    assert_ptr_equal(m->dso, A);
    assert_int_equal(how, AS_HIT_WINDOW);
    m = as_find(as, 10, 0x7010, 600, 900, 0, 0, &how);
    assert_ptr_equal(m->dso, B);
    m = as_find(as, 10, 0x7010, 400, 600, 0, 0, &how);
    assert_ptr_equal(m->dso, B);
    assert_int_equal(how, AS_HIT_AMBIGUOUS);
    /* an exact time settles it */
    m = as_find(as, 10, 0x7010, 400, 600, 1, 450, &how);
    assert_ptr_equal(m->dso, A);
    assert_int_equal(how, AS_HIT_EXACT);
    assert_null(as_find(as, 10, 0x9000, 0, 900, 0, 0, &how));
    assert_null(as_find(as, 11, 0x7010, 0, 900, 0, 0, &how));
    as_free(as);
}

/* An MMAP2 that comes after the trace that ran in it (synthesised or read late): used when
 * nothing covered the address before. Partial overlaps keep the parts outside. */
static void test_late_and_split(void **state)
{
    aspace *as = as_new();
    mmap_ev(as, 20, 700, 5, 0x4000, 0x3000, 0x100, A);
    mmap_ev(as, 20, 800, 6, 0x5000, 0x1000, 0, C);
    assert_int_equal(as_build(as), 0);
    int how;
    const as_map *m = as_find(as, 20, 0x4800, 100, 200, 0, 0, &how);
    assert_ptr_equal(m->dso, A);
    assert_int_equal(how, AS_HIT_LATE);
    /* after the split: A on both sides of C, with the right file offsets */
    m = as_find(as, 20, 0x6010, 900, 1000, 0, 0, &how);
    assert_ptr_equal(m->dso, A);
    assert_int_equal(m->start, 0x6000);
    assert_int_equal(m->pgoff, 0x100 + 0x2000);
    m = as_find(as, 20, 0x5010, 900, 1000, 0, 0, &how);
    assert_ptr_equal(m->dso, C);
    m = as_find(as, 20, 0x4010, 900, 1000, 0, 0, &how);
    assert_ptr_equal(m->dso, A);
    assert_int_equal(m->pgoff, 0x100);
    as_free(as);
}

/* fork copies the parent's maps; exec ends them; threads and comms over time; the kernel. */
static void test_fork_exec_threads(void **state)
{
    aspace *as = as_new();
    simple_ev(as, AS_EV_COMM, 1, 1, 30, 30, 0, "sh", 0);
    mmap_ev(as, 30, 2, 2, 0x1000, 0x1000, 0, A);
    mmap_ev(as, -1, 0, 0, 0xffff000000000000ull, 0x100000, 0, K);
    simple_ev(as, AS_EV_FORK, 10, 3, 31, 31, 30, NULL, 0);
    simple_ev(as, AS_EV_COMM, 20, 4, 31, 31, 0, "ls", 1);
    mmap_ev(as, 31, 21, 5, 0x1000, 0x1000, 0, B);
    simple_ev(as, AS_EV_FORK, 30, 6, 31, 32, 31, NULL, 0); /* a thread */
    assert_int_equal(as_build(as), 0);
    int how;
    /* the child before its exec runs the parent's code */
    const as_map *m = as_find(as, 31, 0x1004, 10, 15, 0, 0, &how);
    assert_ptr_equal(m->dso, A);
    m = as_find(as, 31, 0x1004, 25, 40, 0, 0, &how);
    assert_ptr_equal(m->dso, B);
    /* the parent keeps its own */
    m = as_find(as, 30, 0x1004, 25, 40, 0, 0, &how);
    assert_ptr_equal(m->dso, A);
    m = as_find(as, AS_KERNEL_PID, 0xffff000000000010ull, 25, 40, 0, 0, &how);
    assert_ptr_equal(m->dso, K);
    assert_int_equal(as_pid_of(as, 32), 31);
    assert_int_equal(as_pid_of(as, 99), -1);
    assert_string_equal(as_comm_at(as, 31, 15), "sh");
    assert_string_equal(as_comm_at(as, 31, 25), "ls");
    assert_string_equal(as_comm_at(as, 32, 40), "ls");
    as_free(as);
}

/* The idle task (pid 0 / tid 0) is "swapper" from the start, as perf names it
 * (perf_session__register_idle_thread); no record needs to mention it, a COMM record for tid 0
 * renames it from its time on, and a thread no COMM names has no comm here (the perf-script
 * writer prints ":TID" for it). */
static void test_idle_is_swapper(void **state)
{
    aspace *as = as_new();
    assert_int_equal(as_build(as), 0);
    assert_string_equal(as_comm_at(as, 0, 0), "swapper");
    assert_string_equal(as_comm_at(as, 0, 123456), "swapper");
    assert_int_equal(as_pid_of(as, 0), 0);
    assert_null(as_comm_at(as, 7, 0));
    as_free(as);

    as = as_new();
    simple_ev(as, AS_EV_COMM, 50, 1, 0, 0, 0, "idle", 0);
    simple_ev(as, AS_EV_FORK, 60, 2, 2, 2, 0, NULL, 0); /* kthreadd, forked by the idle task */
    assert_int_equal(as_build(as), 0);
    assert_string_equal(as_comm_at(as, 0, 10), "swapper");
    assert_string_equal(as_comm_at(as, 0, 50), "idle");
    assert_string_equal(as_comm_at(as, 2, 70), "idle");
    as_free(as);
}

static uint64_t rnd(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* as_addr_range: around an address, the addresses no map starts or ends among. An exact answer
 * (a time given) is the same for every address of that range at every time as_find_ex gave for
 * it, whatever the window: what a resolver may remember. Random maps of one process that
 * overlap and replace each other over time, a fork, random queries. */
static void test_addr_range_same_answer(void **state)
{
    uint64_t x = 0x9e3779b97f4a7c15ull;
    static as_dso *dsos[3];
    dsos[0] = A, dsos[1] = B, dsos[2] = C;
    size_t exact = 0;
    for (int round = 0; round < 20; round++) {
        aspace *as = as_new();
        int nmaps = 3 + (int)(rnd(&x) % 12);
        for (int i = 0; i < nmaps; i++) {
            uint64_t start = 0x1000 + (rnd(&x) % 32) * 0x100;
            uint64_t len = 0x100 * (1 + rnd(&x) % 16);
            mmap_ev(as, 40, rnd(&x) % 1000, i + 1, start, len, 0, dsos[rnd(&x) % 3]);
        }
        simple_ev(as, AS_EV_FORK, 500, 100, 41, 41, 40, NULL, 0);
        mmap_ev(as, 41, 600, 101, 0x1800, 0x400, 0, C);
        assert_int_equal(as_build(as), 0);
        for (int q = 0; q < 400; q++) {
            int32_t pid = 40 + (int32_t)(rnd(&x) % 2);
            uint64_t addr = 0xf00 + rnd(&x) % 0x3200;
            uint64_t t = rnd(&x) % 1100, t_lo = t - rnd(&x) % (t + 1), t_hi = t + rnd(&x) % 100;
            int how;
            uint64_t v_lo, v_hi;
            const as_map *m = as_find_ex(as, pid, addr, t_lo, t_hi, 1, t, &how, &v_lo, &v_hi);
            uint64_t a_lo, a_hi;
            as_addr_range(as, pid, addr, &a_lo, &a_hi);
            assert_true(a_lo <= addr && addr < a_hi);
            /* no map of the process with a life starts or ends inside (a_lo, a_hi) */
            const as_proc *p = as_proc_get(as, pid);
            assert_non_null(p);
            for (size_t k = 0; k < p->maps.n; k++) {
                const as_map *mk = &p->maps.v[k];
                if (mk->t_from >= mk->t_to) continue;
                assert_false(mk->start > a_lo && mk->start < a_hi);
                assert_false(mk->end > a_lo && mk->end < a_hi);
            }
            if (!m || how != AS_HIT_EXACT) continue;
            exact++;
            assert_true(v_lo <= t && t < v_hi);
            for (int k = 0; k < 8; k++) {
                uint64_t width = a_hi - a_lo > 0x4000 ? 0x4000 : a_hi - a_lo;
                uint64_t a2 = (a_lo > addr - 0x2000 && a_lo <= addr ? a_lo : addr - width / 2) +
                              rnd(&x) % width;
                if (a2 < a_lo || a2 >= a_hi) a2 = addr;
                uint64_t span = v_hi - v_lo > 2000 ? 2000 : v_hi - v_lo;
                uint64_t t2 = (v_lo > t - 1000 && v_lo <= t ? v_lo : t - span / 2) + rnd(&x) % span;
                if (t2 < v_lo || t2 >= v_hi) t2 = t;
                uint64_t w_lo = t2 - rnd(&x) % (t2 + 1), w_hi = t2 + rnd(&x) % 300;
                int how2;
                uint64_t lo2, hi2;
                const as_map *m2 = as_find_ex(as, pid, a2, w_lo, w_hi, 1, t2, &how2, &lo2, &hi2);
                assert_ptr_equal(m2, m);
                assert_int_equal(how2, AS_HIT_EXACT);
                assert_int_equal(lo2, v_lo);
                assert_int_equal(hi2, v_hi);
            }
        }
        as_free(as);
    }
    assert_true(exact > 1000); /* the property was exercised */
}

/* a DSO without symbols (none to load: its address keys are file offsets) */
static void dso_init(as_dso *d, const char *name)
{
    memset(d, 0, sizeof *d);
    d->name = d->print_name = (char *)name;
    d->print_len = (uint32_t)strlen(name);
    d->syms_state = -1;
    pthread_mutex_init(&d->lock, NULL);
    atomic_store(&d->key_plus1, DSO_KEY_FILEOFF + 1);
}

/* the DSO name of addr for a sample of pid at t (window [t_lo, t_hi]) */
static const char *dso_of(ek_session *s, rcache *cache, int32_t pid, uint64_t addr, uint64_t t,
                          uint64_t t_lo, uint64_t t_hi)
{
    rctx c;
    rctx_init(&c, s, t_lo, t_hi, cache, 1, t);
    ek_sample smp;
    memset(&smp, 0, sizeof smp);
    smp.pid = smp.tid = pid;
    smp.has_time = 1;
    smp.time = t;
    ek_addr_loc out;
    memset(&out, 0, sizeof out);
    c.r.resolve(c.r.ctx, &smp, addr, 0, &out);
    return out.dso;
}

/* The session's resolver with a decoder thread's cache (rcache) gives the answers it gives
 * without one: maps that no other overlaps (remembered by their range), maps that replace each
 * other over time (remembered by the exact answer's addresses and times), and the order they are
 * tried in (the kind of the last answer first). Random maps of two processes, some alone and
 * some replacing each other; a walk of queries that mostly stays near the last (as a thread's
 * samples do) and now and then jumps. */
static void test_resolver_cache_same_answers(void **state)
{
    static as_dso d[5];
    static const char *names[5] = {"/a.so", "/b.so", "/c.so", "/alone1.so", "/alone2.so"};
    for (int i = 0; i < 5; i++) dso_init(&d[i], names[i]);
    uint64_t x = 0x2545f4914f6cdd1dull;
    size_t answered = 0, differs = 0;
    for (int round = 0; round < 30; round++) {
        aspace *as = as_new();
        assert_non_null(as);
        int64_t rec = 1;
        for (int32_t pid = 40; pid <= 41; pid++) {
            /* contested: libraries loaded over each other in [0x10000, 0x14000) */
            int n = 2 + (int)(rnd(&x) % 8);
            for (int i = 0; i < n; i++)
                mmap_ev(as, pid, rnd(&x) % 1000, rec++, 0x10000 + (rnd(&x) % 16) * 0x100,
                        0x100 * (1 + rnd(&x) % 32), 0, &d[rnd(&x) % 3]);
            /* alone: away from the others and from each other */
            mmap_ev(as, pid, rnd(&x) % 1000, rec++, 0x20000, 0x1000, 0, &d[3]);
            mmap_ev(as, pid, rnd(&x) % 1000, rec++, 0x30000, 0x1000, 0, &d[4]);
        }
        assert_int_equal(as_build(as), 0);
        ek_session *s = calloc(1, sizeof *s);
        assert_non_null(s);
        s->as = as;
        rcache *cache = rcache_new();
        assert_non_null(cache);
        int32_t pid = 40;
        uint64_t addr = 0x10000, t = 500;
        for (int q = 0; q < 600; q++) {
            uint64_t r = rnd(&x);
            if (r % 8 == 0) { /* a jump: anywhere, any process */
                static const uint64_t base[3] = {0x10000, 0x20000, 0x30000};
                pid = 40 + (int32_t)((r >> 3) % 2);
                addr = base[(r >> 4) % 3] - 0x100 + (r >> 8) % 0x4200;
                t = (r >> 24) % 1100;
            } else { /* nearby */
                addr += (r >> 3) % 0x80;
                addr -= (r >> 10) % 0x80;
                t += (r >> 17) % 20;
            }
            uint64_t t_lo = t - (r >> 32) % (t + 1), t_hi = t + (r >> 48) % 100;
            const char *cached = dso_of(s, cache, pid, addr, t, t_lo, t_hi);
            const char *fresh = dso_of(s, NULL, pid, addr, t, t_lo, t_hi);
            assert_ptr_equal(cached, fresh);
            answered += cached != NULL;
            differs += cached != dso_of(s, NULL, pid == 40 ? 41 : 40, addr, t, t_lo, t_hi);
        }
        free(cache);
        free(s);
        as_free(as);
    }
    for (int i = 0; i < 5; i++) pthread_mutex_destroy(&d[i].lock);
    assert_true(answered > 4000); /* the walk was in maps a third of the time */
    assert_true(differs > 1000);  /* and the processes' maps differ */
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reuse),
        cmocka_unit_test(test_late_and_split),
        cmocka_unit_test(test_fork_exec_threads),
        cmocka_unit_test(test_idle_is_swapper),
        cmocka_unit_test(test_addr_range_same_answer),
        cmocka_unit_test(test_resolver_cache_same_answers),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
