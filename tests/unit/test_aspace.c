/* The address-space timeline: maps by time, replacement at the same address, late maps,
 * fork and exec, threads and comms. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "session/aspace.h"
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

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reuse),
        cmocka_unit_test(test_late_and_split),
        cmocka_unit_test(test_fork_exec_threads),
        cmocka_unit_test(test_idle_is_swapper),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
