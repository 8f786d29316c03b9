/* The session's resolver with a decoder thread's cache (rcache) gives the answers it gives
 * without one: maps that no other overlaps (remembered by their range), maps that replace each
 * other over time (remembered by the exact answer's addresses and times), and the order they are
 * tried in (the kind of the last answer first). */
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

static void mmap_ev(aspace *as, int32_t pid, uint64_t key, int64_t rec, uint64_t start, uint64_t len,
                    as_dso *d)
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
    e.dso = d;
    e.exec = 1;
    assert_int_equal(as_add(as, &e), 0);
}

static uint64_t rnd(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
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

/* Random maps of two processes, some alone and some replacing each other; a walk of queries
 * that mostly stays near the last (as a thread's samples do) and now and then jumps. */
static void test_cached_same_answers(void **state)
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
                        0x100 * (1 + rnd(&x) % 32), &d[rnd(&x) % 3]);
            /* alone: away from the others and from each other */
            mmap_ev(as, pid, rnd(&x) % 1000, rec++, 0x20000, 0x1000, &d[3]);
            mmap_ev(as, pid, rnd(&x) % 1000, rec++, 0x30000, 0x1000, &d[4]);
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
        cmocka_unit_test(test_cached_same_answers),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
