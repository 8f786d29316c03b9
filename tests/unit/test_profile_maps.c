/* ek_profile_maps, the profile builder's locator: which mapping an address of a sample was in.
 * Kernel modules are used (their binary address is the offset in the map, no ELF file needed),
 * so each answer is told apart by its mapping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "etmkit/perf.h"
#include "etmkit/perf_write.h"
#include "etmkit/profile.h"
#include "etmkit/sbuf.h"
#include "testutil.h"

#define K  0xffff800010000000ull
#define ST (EK_PERF_SAMPLE_TID | EK_PERF_SAMPLE_TIME)

typedef struct mm {
    const char *file;
    uint64_t start, len, time;
} mm;

/* a recording in memory with one event whose records carry their time */
static ek_pw *writer(void)
{
    ek_pw *w;
    assert_int_equal(ek_pw_new_mem(0, &w), 0);
    ek_perf_attr a;
    memset(&a, 0, sizeof a);
    uint64_t id = 1;
    a.type = 12;
    a.size = 136;
    a.sample_period = 1;
    a.sample_type = ST;
    a.flags = EK_PERF_ATTR_FLAG_SAMPLE_ID_ALL;
    a.ids = &id;
    a.nids = 1;
    assert_int_equal(ek_pw_attr(w, &a), 0);
    return w;
}

static int hints_stable; /* ek_profile_maps_opts.hints_stable of the maps made */

/* the recording w wrote, opened (*buf, *f), and its maps (ELF files under symfs) */
static ek_profile_maps *maps_made(ek_pw *w, const char *symfs, uint8_t **buf, ek_perf_file **f)
{
    size_t n;
    assert_int_equal(ek_pw_close_mem(w, buf, &n), 0);
    assert_int_equal(ek_perf_open_mem(*buf, n, "maps.data", NULL, f), 0);
    ek_profile_maps_opts o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.symfs = symfs;
    o.hints_stable = hints_stable;
    ek_profile_maps *m = NULL;
    assert_int_equal(ek_profile_maps_new(*f, &o, &m), 0);
    return m;
}

/* a recording of these kernel MMAP records, in this order; *buf is freed by the caller */
static ek_profile_maps *maps_of(const mm *v, size_t n, uint8_t **buf, ek_perf_file **f)
{
    ek_pw *w = writer();
    for (size_t i = 0; i < n; i++) {
        ek_perf_record r;
        memset(&r, 0, sizeof r);
        r.type = EK_PERF_RECORD_MMAP;
        r.misc = EK_PERF_MISC_KERNEL;
        r.sid.pid = (uint32_t)-1;
        r.sid.tid = 0;
        r.sid.time = v[i].time;
        r.u.mmap.pid = (uint32_t)-1;
        r.u.mmap.addr = K + v[i].start;
        r.u.mmap.len = v[i].len;
        r.u.mmap.filename = v[i].file;
        assert_int_equal(ek_pw_record(w, &r, ST), 0);
    }
    return maps_made(w, NULL, buf, f);
}

static const char *hint_text;
static unsigned hints;

static const char *hint(void *ctx, const ek_sample *s, uint64_t addr)
{
    (void)ctx, (void)s, (void)addr;
    hints++;
    return hint_text;
}

/* addr of a sample of thread 5 at time t, located */
static int locate_at(ek_profile_maps *m, uint64_t addr, uint64_t t, ek_profile_loc *loc)
{
    ek_sample s;
    memset(&s, 0, sizeof s);
    s.pid = 5;
    s.tid = 5;
    s.has_time = 1;
    s.time = t;
    memset(loc, 0, sizeof *loc);
    return ek_profile_maps_locate(m, &s, addr, hint, NULL, loc);
}

/* the mapping of K + off at time t (0: none) */
static uint64_t where(ek_profile_maps *m, uint64_t off, uint64_t t)
{
    ek_profile_loc loc;
    if (locate_at(m, K + off, t, &loc)) return 0;
    return loc.mapping;
}

/* Two maps of one module that are both valid at some times (the second recorded later but
 * with an earlier time): the one recorded last is the answer then. An answer remembered from a
 * time when only the other was valid must not stand in for it. (Mappings are numbered in record
 * order from 1.) */
static void test_twins_not_remembered(void **state)
{
    const mm v[] = {{"/lib/modules/x.ko", 0x1000, 0x1000, 100},
                    {"/lib/modules/x.ko", 0x1000, 0x2000, 50},
                    {"/lib/modules/x.ko", 0x2800, 0x800, 300}};
    uint8_t *buf;
    ek_perf_file *f;
    hint_text = NULL;
    ek_profile_maps *m = maps_of(v, 3, &buf, &f);
    assert_int_equal(where(m, 0x1500, 400), 1); /* the second ended at 300 */
    assert_int_equal(where(m, 0x1500, 200), 2); /* both valid: the later record, not the
                                                   answer just found */
    assert_int_equal(where(m, 0x1500, 400), 1);
    assert_int_equal(where(m, 0x1500, 200), 2);
    assert_int_equal(where(m, 0x2900, 400), 3);
    assert_int_equal(where(m, 0x2900, 200), 2);
    ek_profile_maps_free(m);
    ek_perf_free(f);
    free(buf);
}

/* Two modules loaded at the same addresses one after the other: the session's DSO name (the
 * hint) decides, asked every time; a name of neither leaves the answer by time. */
static void test_contested_by_hint(void **state)
{
    const mm v[] = {{"/lib/modules/x.ko", 0x1000, 0x1000, 100},
                    {"/lib/modules/y.ko", 0x1000, 0x1000, 200}};
    uint8_t *buf;
    ek_perf_file *f;
    ek_profile_maps *m = maps_of(v, 2, &buf, &f);
    hints = 0;
    hint_text = NULL;
    assert_int_equal(where(m, 0x1500, 250), 2);
    assert_int_equal(where(m, 0x1500, 150), 1);
    hint_text = "/lib/modules/x.ko";
    assert_int_equal(where(m, 0x1500, 250), 1);
    assert_int_equal(where(m, 0x1500, 150), 1);
    hint_text = "/lib/modules/y.ko";
    assert_int_equal(where(m, 0x1500, 150), 2);
    assert_int_equal(where(m, 0x1500, 250), 2);
    hint_text = "/lib/modules/z.ko";
    assert_int_equal(where(m, 0x1500, 150), 1);
    assert_int_equal(where(m, 0x1500, 250), 2);
    assert_int_equal(hints, 8);
    /* outside both: none */
    assert_int_equal(where(m, 0x2500, 250), 0);
    ek_profile_maps_free(m);
    ek_perf_free(f);
    free(buf);
}

/* An ELF file of two PT_LOAD segments; the first one's memory size reaches over the second's
 * file offsets, so an offset there is the first segment's. */
static char *write_two_segments(const char *dir)
{
    static uint8_t img[0x3000];
    Elf64_Phdr *ph = tu_elf64(img, sizeof img, ET_DYN, 2);
    ph[0].p_type = PT_LOAD;
    ph[0].p_offset = 0;
    ph[0].p_vaddr = 0x10000;
    ph[0].p_filesz = 0x1000;
    ph[0].p_memsz = 0x3000;
    ph[0].p_flags = PF_R | PF_X;
    ph[1].p_type = PT_LOAD;
    ph[1].p_offset = 0x2000;
    ph[1].p_vaddr = 0x40000;
    ph[1].p_filesz = 0x1000;
    ph[1].p_memsz = 0x1000;
    ph[1].p_flags = PF_R | PF_X;
    return tu_write_file(dir, "t.so", img, sizeof img);
}

#define UA 0x7f0000000000ull /* the first map of t.so */
#define UB 0x7f0000100000ull /* the second: from file offset 0x2000 */

static ek_profile_maps *user_maps(const char *symfs, uint8_t **buf, ek_perf_file **f)
{
    ek_pw *w = writer();
    const uint64_t start[2] = {UA, UB}, len[2] = {0x4000, 0x2000}, pgoff[2] = {0, 0x2000};
    for (int i = 0; i < 2; i++) {
        ek_perf_record r;
        memset(&r, 0, sizeof r);
        r.type = EK_PERF_RECORD_MMAP2;
        r.misc = EK_PERF_MISC_USER;
        r.sid.pid = 5;
        r.sid.tid = 5;
        r.sid.time = 10;
        r.u.mmap.pid = 5;
        r.u.mmap.tid = 5;
        r.u.mmap.addr = start[i];
        r.u.mmap.len = len[i];
        r.u.mmap.pgoff = pgoff[i];
        r.u.mmap.prot = 5;
        r.u.mmap.filename = "/t.so";
        assert_int_equal(ek_pw_record(w, &r, ST), 0);
    }
    return maps_made(w, symfs, buf, f);
}

/* the binary address of addr at time t: 0 with *vaddr and *mapping, or the error */
static int user_loc(ek_profile_maps *m, uint64_t addr, uint64_t t, uint64_t *vaddr,
                    uint64_t *mapping)
{
    ek_profile_loc loc;
    int rc = locate_at(m, addr, t, &loc);
    *vaddr = rc ? 0 : loc.vaddr;
    *mapping = rc ? 0 : loc.mapping;
    if (!rc) assert_string_equal(loc.id.path, "/t.so");
    return rc;
}

/* An address's binary address through the ELF segments, the same whatever was located before
 * (the locator remembers, per map, the addresses that share a segment): each answer of one
 * locator over a random walk equals that of a new locator asked only that. */
static void test_segments_remembered(void **state)
{
    char *dir = tu_tmpdir();
    free(write_two_segments(dir));
    uint8_t *buf;
    ek_perf_file *f;
    hint_text = NULL;
    ek_profile_maps *m = user_maps(dir, &buf, &f);
    uint64_t v, mp;
    assert_int_equal(user_loc(m, UA + 0x500, 20, &v, &mp), 0);
    assert_int_equal(v, 0x10500);
    assert_int_equal(user_loc(m, UA + 0x2500, 20, &v, &mp), 0);
    assert_int_equal(v, 0x12500); /* the first segment's (its .bss), not the second's */
    assert_int_not_equal(user_loc(m, UA + 0x3500, 20, &v, &mp), 0);
    assert_int_equal(user_loc(m, UB + 0x100, 20, &v, &mp), 0);
    assert_int_equal(v, 0x12100);
    assert_int_equal(mp, 2);
    uint64_t x = 0x243f6a8885a308d3ull;
    int found = 0;
    for (int q = 0; q < 3000; q++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t base = (x & 1) ? UB : UA;
        uint64_t addr = base - 0x100 + (x >> 8) % 0x4200;
        uint64_t t = (x >> 40) % 3 ? 20 : 5; /* before the maps: in none (then late) */
        uint64_t v2, mp2;
        int rc = user_loc(m, addr, t, &v, &mp);
        uint8_t *b2;
        ek_perf_file *f2;
        ek_profile_maps *fresh = user_maps(dir, &b2, &f2);
        int rc2 = user_loc(fresh, addr, t, &v2, &mp2);
        ek_profile_maps_free(fresh);
        ek_perf_free(f2);
        free(b2);
        assert_int_equal(rc, rc2);
        assert_int_equal(v, v2);
        assert_int_equal(mp, mp2);
        found += !rc;
    }
    assert_true(found > 1000);
    ek_profile_maps_free(m);
    ek_perf_free(f);
    free(buf);
    tu_rmtree(dir);
    free(dir);
}

/* Libraries loaded at the same addresses one after the other (dlopen cycles), a library mapped
 * twice with its records out of time order, and a child process without maps of its own: the
 * answer the hint decides is remembered by address, for the times that find the same maps and
 * while the hint names the answer's file. Each answer of one locator over a random walk equals
 * that of a new locator asked only that, with a hint that changes by address and time. */
typedef struct um {
    int64_t pid;
    const char *file;
    uint64_t start, len, pgoff, time;
} um;

static const um cycles[] = {
    {5, "/a.so", UA, 0x4000, 0, 10},          {5, "/b.so", UA, 0x4000, 0, 100},
    {5, "/c.so", UA + 0x1000, 0x2000, 0, 150}, {5, "/a.so", UA, 0x4000, 0, 200},
    {5, "/b.so", UA + 0x2000, 0x2000, 0, 300}, {5, "/c.so", UA, 0x1000, 0, 250},
    {5, "/a.so", UB, 0x2000, 0x2000, 120},     {5, "/b.so", UB, 0x2000, 0x2000, 180},
    {5, "/a.so", UB, 0x2000, 0x2000, 60},
};

static ek_profile_maps *cycle_maps(const char *symfs, uint8_t **buf, ek_perf_file **f)
{
    ek_pw *w = writer();
    for (size_t i = 0; i < sizeof cycles / sizeof *cycles; i++) {
        ek_perf_record r;
        memset(&r, 0, sizeof r);
        r.type = EK_PERF_RECORD_MMAP2;
        r.misc = EK_PERF_MISC_USER;
        r.sid.pid = r.sid.tid = (uint32_t)cycles[i].pid;
        r.sid.time = cycles[i].time;
        r.u.mmap.pid = r.u.mmap.tid = (uint32_t)cycles[i].pid;
        r.u.mmap.addr = cycles[i].start;
        r.u.mmap.len = cycles[i].len;
        r.u.mmap.pgoff = cycles[i].pgoff;
        r.u.mmap.prot = 5;
        r.u.mmap.filename = cycles[i].file;
        assert_int_equal(ek_pw_record(w, &r, ST), 0);
    }
    ek_perf_record r;
    memset(&r, 0, sizeof r);
    r.type = EK_PERF_RECORD_FORK;
    r.sid.pid = r.sid.tid = 6;
    r.sid.time = 50;
    r.u.fork.pid = r.u.fork.tid = 6;
    r.u.fork.ppid = r.u.fork.ptid = 5;
    assert_int_equal(ek_pw_record(w, &r, ST), 0);
    return maps_made(w, symfs, buf, f);
}

/* a folder with the three libraries of the cycles (the same two-segment ELF file) */
static char *cycle_files(void)
{
    char *dir = tu_tmpdir();
    static const char *files[] = {"a.so", "b.so", "c.so"};
    for (int i = 0; i < 3; i++) {
        char *p = write_two_segments(dir);
        char *q = malloc(strlen(dir) + 8);
        assert_non_null(q);
        strcpy(q, dir);
        strcat(q, "/");
        strcat(q, files[i]);
        assert_int_equal(rename(p, q), 0);
        free(p);
        free(q);
    }
    return dir;
}

/* the session's name: by the address's 256-byte line and the time's stretch of 40; with
 * hints_stable each name at an address of its own, else every name in one reused buffer */
static const char *cycle_hint(void *ctx, const ek_sample *s, uint64_t addr)
{
    static const char *names[] = {"/a.so", "/b.so", "/c.so", "/z.so", NULL, "/a.so", "/b.so"};
    static char reused[16];
    (void)ctx;
    uint64_t k = ((addr >> 8) * 0x9e3779b97f4a7c15ull) ^ (s->time / 40 * 0xc2b2ae3d27d4eb4full);
    hints++;
    const char *name = names[(k ^ (k >> 31)) % 7];
    if (hints_stable || !name) return name;
    strcpy(reused, name);
    return reused;
}

static int cycle_loc(ek_profile_maps *m, int64_t pid, uint64_t addr, uint64_t t, uint64_t *vaddr,
                     uint64_t *mapping, const char **path)
{
    ek_sample s;
    memset(&s, 0, sizeof s);
    s.pid = s.tid = (int32_t)pid;
    s.has_time = 1;
    s.time = t;
    ek_profile_loc loc;
    memset(&loc, 0, sizeof loc);
    int rc = ek_profile_maps_locate(m, &s, addr, cycle_hint, NULL, &loc);
    *vaddr = rc ? 0 : loc.vaddr;
    *mapping = rc ? 0 : loc.mapping;
    *path = rc ? NULL : loc.id.path;
    return rc;
}

static void contested_walk(int stable)
{
    char *dir = cycle_files();
    uint8_t *buf;
    ek_perf_file *f;
    hints_stable = stable;
    ek_profile_maps *m = cycle_maps(dir, &buf, &f);
    uint64_t x = 0x13198a2e03707344ull;
    unsigned found = 0, mappings = 0, seen = 0;
    hints = 0;
    for (int q = 0; q < 4000; q++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        /* a few hot addresses (as loops are), and any address now and then */
        uint64_t addr = (x & 3) ? UA + 0x40 * ((x >> 2) % 0x100) + ((x >> 10) & 1) * 0x3000
                                : ((x >> 2) & 1 ? UB : UA) - 0x100 + (x >> 3) % 0x4200;
        uint64_t t = (x >> 24) % 340;
        int64_t pid = (x >> 40) % 5 ? 5 : 6;
        uint64_t v, mp, v2, mp2;
        const char *path, *path2;
        int rc = cycle_loc(m, pid, addr, t, &v, &mp, &path);
        uint8_t *b2;
        ek_perf_file *f2;
        ek_profile_maps *fresh = cycle_maps(dir, &b2, &f2);
        int rc2 = cycle_loc(fresh, pid, addr, t, &v2, &mp2, &path2);
        assert_int_equal(rc, rc2);
        assert_int_equal(v, v2);
        assert_int_equal(mp, mp2);
        if (!rc) assert_string_equal(path, path2);
        ek_profile_maps_free(fresh);
        ek_perf_free(f2);
        free(b2);
        found += !rc;
        mappings |= 1u << (mp & 15);
    }
    for (unsigned k = 1; k <= 9; k++) seen += (mappings >> k) & 1;
    assert_true(found > 1500);
    assert_true(seen >= 8); /* (the one map of c.so at UA is the only one at its times) */
    assert_true(hints > 1000);
    ek_profile_maps_free(m);
    ek_perf_free(f);
    free(buf);
    tu_rmtree(dir);
    free(dir);
    hints_stable = 0;
}

static void test_contested_remembered(void **state)
{
    contested_walk(0);
}

/* the same with names known by their addresses (a session's) */
static void test_contested_stable_hints(void **state)
{
    contested_walk(1);
}

/* Forks (ek_profile_maps_fork) on two threads at once give the fresh locator's answers and
 * code, in any order; the files they looked for are their root's (c.so is missing here: the
 * root's list of missing files names it, though only the forks looked). */
#define FORK_Q 3000
typedef struct fork_q {
    int64_t pid;
    uint64_t addr, t;
} fork_q;
typedef struct fork_a {
    int rc;
    uint64_t vaddr, mapping;
    char path[16];
    uint8_t code[4];
    size_t ncode;
} fork_a;
static fork_q fork_qs[FORK_Q];

/* cycle_hint without its count (the threads call it at once); names at stable addresses */
static const char *fork_hint(void *ctx, const ek_sample *s, uint64_t addr)
{
    static const char *names[] = {"/a.so", "/b.so", "/c.so", "/z.so", NULL, "/a.so", "/b.so"};
    (void)ctx;
    uint64_t k = ((addr >> 8) * 0x9e3779b97f4a7c15ull) ^ (s->time / 40 * 0xc2b2ae3d27d4eb4full);
    return names[(k ^ (k >> 31)) % 7];
}

static void fork_answer(ek_profile_maps *m, const fork_q *q, fork_a *a)
{
    ek_sample s;
    memset(&s, 0, sizeof s);
    s.pid = s.tid = (int32_t)q->pid;
    s.has_time = 1;
    s.time = q->t;
    ek_profile_loc loc;
    memset(&loc, 0, sizeof loc);
    memset(a, 0, sizeof *a);
    a->rc = ek_profile_maps_locate(m, &s, q->addr, fork_hint, NULL, &loc);
    if (a->rc) return;
    a->vaddr = loc.vaddr;
    a->mapping = loc.mapping;
    snprintf(a->path, sizeof a->path, "%s", loc.id.path);
    a->ncode = ek_profile_maps_code(m, &loc, loc.vaddr, a->code, sizeof a->code);
}

typedef struct fork_run {
    ek_profile_maps *m;
    int backwards;
    fork_a *answers;
} fork_run;

static void *fork_thread(void *arg)
{
    fork_run *r = arg;
    for (int k = 0; k < FORK_Q; k++) {
        int i = r->backwards ? FORK_Q - 1 - k : k;
        fork_answer(r->m, &fork_qs[i], &r->answers[i]);
    }
    return NULL;
}

static void test_forks(void **state)
{
    (void)state;
    char *dir = cycle_files();
    char *gone = malloc(strlen(dir) + 8);
    assert_non_null(gone);
    sprintf(gone, "%s/c.so", dir);
    assert_int_equal(remove(gone), 0);
    free(gone);
    hints_stable = 1;
    uint8_t *buf;
    ek_perf_file *f;
    ek_profile_maps *m = cycle_maps(dir, &buf, &f);
    uint64_t x = 0x2545f4914f6cdd1dull;
    for (int i = 0; i < FORK_Q; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        fork_qs[i].addr = (x & 3) ? UA + 0x40 * ((x >> 2) % 0x100) + ((x >> 10) & 1) * 0x3000
                                  : ((x >> 2) & 1 ? UB : UA) - 0x100 + (x >> 3) % 0x4200;
        fork_qs[i].t = (x >> 24) % 340;
        fork_qs[i].pid = (x >> 40) % 5 ? 5 : 6;
    }
    /* the reference: a fresh locator for each question */
    fork_a *want = calloc(FORK_Q, sizeof *want), *got[2];
    assert_non_null(want);
    unsigned found = 0, coded = 0, refused = 0;
    for (int i = 0; i < FORK_Q; i++) {
        uint8_t *b2;
        ek_perf_file *f2;
        ek_profile_maps *fresh = cycle_maps(dir, &b2, &f2);
        fork_answer(fresh, &fork_qs[i], &want[i]);
        ek_profile_maps_free(fresh);
        ek_perf_free(f2);
        free(b2);
        found += !want[i].rc;
        coded += want[i].ncode == 4;
        refused += want[i].rc != 0;
    }
    assert_true(found > 1000 && coded > 200 && refused > 100);
    ek_sbuf miss = EK_SBUF_INIT;
    ek_profile_maps_missing(m, &miss);
    assert_int_equal(miss.len, 0); /* (nothing looked for yet) */
    pthread_t th[2];
    fork_run runs[2];
    for (int k = 0; k < 2; k++) {
        got[k] = calloc(FORK_Q, sizeof *got[k]);
        assert_non_null(got[k]);
        runs[k].backwards = k;
        runs[k].answers = got[k];
        assert_int_equal(ek_profile_maps_fork(m, &runs[k].m), 0);
    }
    for (int k = 0; k < 2; k++)
        assert_int_equal(pthread_create(&th[k], NULL, fork_thread, &runs[k]), 0);
    for (int k = 0; k < 2; k++)
        pthread_join(th[k], NULL);
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < FORK_Q; i++)
            assert_memory_equal(&got[k][i], &want[i], sizeof want[i]);
        ek_profile_maps_free(runs[k].m);
        free(got[k]);
    }
    ek_profile_maps_missing(m, &miss);
    assert_non_null(miss.p);
    assert_non_null(strstr(miss.p, "/c.so (build-id none): no ELF file found"));
    ek_sbuf_free(&miss);
    free(want);
    ek_profile_maps_free(m);
    ek_perf_free(f);
    free(buf);
    tu_rmtree(dir);
    free(dir);
    hints_stable = 0;
}

static int via_locate(void *ctx, const ek_sample *s, uint64_t addr, ek_profile_loc *out)
{
    return ek_profile_maps_locate(ctx, s, addr, cycle_hint, NULL, out);
}

static int no_locate(void *ctx, const ek_sample *s, uint64_t addr, ek_profile_loc *out)
{
    (void)ctx, (void)s, (void)addr, (void)out;
    return 1; /* (never asked: the maps are) */
}

/* A builder that uses the maps directly (ek_profile_builder_use_maps) counts what one with a
 * locate function asking them counts: branch samples of two processes over the dlopen cycles,
 * times walking forward, both branch lists written and compared. */
static void test_builder_use_maps(void **state)
{
    char *dir = cycle_files();
    uint8_t *buf1, *buf2;
    ek_perf_file *f1, *f2;
    ek_profile_maps *m1 = cycle_maps(dir, &buf1, &f1), *m2 = cycle_maps(dir, &buf2, &f2);
    ek_profile *p1, *p2;
    ek_profile_builder *b1, *b2;
    assert_int_equal(ek_profile_new(&p1), 0);
    assert_int_equal(ek_profile_new(&p2), 0);
    assert_int_equal(ek_profile_builder_new(p1, via_locate, m1, &b1), 0);
    assert_int_equal(ek_profile_builder_new(p2, no_locate, NULL, &b2), 0);
    ek_profile_builder_use_maps(b2, m2, cycle_hint, NULL);
    uint64_t x = 0x452821e638d01377ull, t = 0;
    for (int q = 0; q < 6000; q++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        ek_sample s;
        memset(&s, 0, sizeof s);
        s.kind = EK_SAMPLE_BRANCHES;
        s.flags = EK_SF_BRANCH;
        s.pid = s.tid = (x >> 60) % 5 ? 5 : 6;
        s.has_time = 1;
        t += (x >> 50) % 3;
        s.time = t % 340;
        s.ip = UA + 4 * ((x >> 2) % 0x400) + ((x >> 14) & 1) * 0x3000;
        s.addr = (x >> 20) % 7 ? UA + 4 * ((x >> 22) % 0x400) : UB + 4 * ((x >> 22) % 0x200);
        assert_int_equal(ek_profile_builder_add(b1, &s), 0);
        assert_int_equal(ek_profile_builder_add(b2, &s), 0);
    }
    ek_profile_build_stats st1, st2;
    ek_profile_builder_get_stats(b1, &st1);
    ek_profile_builder_get_stats(b2, &st2);
    assert_memory_equal(&st1, &st2, sizeof st1);
    ek_sbuf o1, o2;
    memset(&o1, 0, sizeof o1);
    memset(&o2, 0, sizeof o2);
    assert_int_equal(ek_profile_write_branch_list(p1, &o1), 0);
    assert_int_equal(ek_profile_write_branch_list(p2, &o2), 0);
    assert_true(o1.len > 10000); /* counts of several binaries were made */
    assert_int_equal(o1.len, o2.len);
    assert_memory_equal(o1.p, o2.p, o1.len);
    ek_sbuf_free(&o1);
    ek_sbuf_free(&o2);
    ek_profile_builder_free(b1);
    ek_profile_builder_free(b2);
    ek_profile_free(p1);
    ek_profile_free(p2);
    ek_profile_maps_free(m1);
    ek_profile_maps_free(m2);
    ek_perf_free(f1);
    ek_perf_free(f2);
    free(buf1);
    free(buf2);
    tu_rmtree(dir);
    free(dir);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_twins_not_remembered),
        cmocka_unit_test(test_contested_by_hint),
        cmocka_unit_test(test_segments_remembered),
        cmocka_unit_test(test_contested_remembered),
        cmocka_unit_test(test_contested_stable_hints),
        cmocka_unit_test(test_builder_use_maps),
        cmocka_unit_test(test_forks),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
