/* The script line's hand-made parts. A decoder thread's memory of its last lines
 * (script_memo): what it lets the next line copy (the thread's columns, then also its misc and
 * time columns) must be the text the line would get formatted anew; random runs of samples,
 * against ek_script_format (which remembers nothing), line by line. The hex columns, against
 * printf's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "etmkit/script.h"
#include "etmkit/synth.h"
#include "output/script_int.h"
#include "testutil.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

/* the threads' names: a thread is renamed now and then (a new string, as the resolver gives
 * after a COMM record); one name makes heads longer than half the memo, one so long that
 * its head does not fit the memo */
static char names[4][2][160];
static int gen[4];

static const char *comm(void *ctx, const ek_sample *s)
{
    (void)ctx;
    if (s->tid == 3) return NULL; /* ":3" */
    int k = (int)((uint32_t)s->tid % 4u);
    return names[k][gen[k]];
}

static void res(void *ctx, const ek_sample *s, uint64_t addr, int fb, ek_addr_loc *l)
{
    (void)ctx;
    (void)s;
    (void)fb;
    memset(l, 0, sizeof *l);
    if (addr & 0x100) {
        l->dso = "/lib/x.so";
        l->sym = "f";
        l->symoff = addr & 0xff;
    }
}

static const ek_script_resolver rv = {res, comm, NULL, NULL};

/* o emptied, and no text of the lines before left where the next line goes */
static void empty(ek_sbuf *o)
{
    ek_sbuf_reset(o);
    assert_int_equal(ek_sbuf_reserve(o, 1024), 0);
    memset(o->p, '#', o->cap);
    o->p[0] = 0;
}

static void run(const char *spec, int ns)
{
    ek_script_fields f;
    ek_script_fields_default(&f);
    ek_sbuf err = EK_SBUF_INIT;
    if (spec) assert_int_equal(ek_script_fields_parse(spec, &f, &err), 0);
    ek_sbuf_free(&err);
    f.ns = ns;
    for (int k = 0; k < 4; k++)
        for (int g = 0; g < 2; g++)
            snprintf(names[k][g], sizeof names[k][g],
                     k == 2 ? "%s-%d-%0120d" : k == 1 ? "%s-%d-%040d" : "%s-%d",
                     k == 1 ? "worker" : "main", g, 0);
    memset(gen, 0, sizeof gen);
    script_memo m;
    memset(&m, 0, sizeof m);
    ek_sbuf a = EK_SBUF_INIT, b = EK_SBUF_INIT;
    const uint64_t times[] = {1003140000ull, 1003140001ull, 1003141000ull, 99999999999ull, 0};
    ek_sample s;
    memset(&s, 0, sizeof s);
    s.kind = EK_SAMPLE_BRANCHES;
    s.period = 1;
    for (int i = 0; i < 20000; i++) {
        /* mostly the same thread and time as the line before, as in a decoder's output */
        if (rnd(8) == 0) s.tid = (int32_t)rnd(5); /* 0..4: tid 3 has no name */
        if (rnd(8) == 0) s.pid = rnd(2) ? s.tid : 1;
        if (rnd(8) == 0) s.cpu = (int32_t)rnd(3) - 1;
        if (rnd(6) == 0) s.has_time = rnd(5) != 0;
        if (rnd(4) == 0) s.time = times[rnd(5)];
        if (rnd(3) == 0) s.cpumode = rnd(2) ? EK_CPUMODE_KERNEL : EK_CPUMODE_USER;
        if (rnd(50) == 0) gen[rnd(4)] ^= 1;
        s.kind = rnd(10) ? EK_SAMPLE_BRANCHES : EK_SAMPLE_INSTRUCTIONS;
        s.flags = rnd(2) ? (EK_SF_BRANCH | EK_SF_CALL) : EK_SF_BRANCH;
        s.ip = 0x400000 + rnd(0x400);
        s.addr = 0x400000 + rnd(0x400);
        empty(&a);
        ek_sbuf_reset(&b);
        script_format_memo(&a, &f, &s, &rv, 12, &m);
        ek_script_format(&b, &f, &s, &rv, 12);
        if (a.len != b.len || memcmp(a.p, b.p, a.len)) {
            print_error("fields %s, ns %d, line %d:\n  with the memo: %s  anew:          %s",
                        spec ? spec : "(default)", ns, i, a.p, b.p);
            fail();
        }
    }
    ek_sbuf_free(&a);
    ek_sbuf_free(&b);
}

/* perf's default fields (the thread's, cpu and time columns), with nanoseconds too */
static void test_default_fields(void **state)
{
    (void)state;
    run(NULL, 0);
    run(NULL, 1);
}

/* the misc column (the cpu mode, which the thread's columns do not say) between the thread's
 * and the time columns; a time without the thread's columns; the thread's without a time */
static void test_other_fields(void **state)
{
    (void)state;
    run("+misc", 0);
    run("time,event,ip,sym", 0);
    run("comm,tid,ip,addr", 0);
    run("pid,tid,cpu,time,flags,ip,sym,symoff,dso,addr", 1);
}

/* the ip and addr columns (hex right-aligned in 16 columns) and the symbol offset (hex
 * digits alone) for every number of digits, against printf's */
static void test_hex_columns(void **state)
{
    (void)state;
    ek_script_fields f;
    ek_script_fields_default(&f);
    ek_sbuf err = EK_SBUF_INIT;
    assert_int_equal(ek_script_fields_parse("ip,sym,symoff,addr", &f, &err), 0);
    ek_sbuf_free(&err);
    ek_sbuf a = EK_SBUF_INIT;
    char want[256];
    ek_sample s;
    memset(&s, 0, sizeof s);
    s.kind = EK_SAMPLE_BRANCHES;
    for (int i = 0; i < 2000; i++) {
        /* 0, all ones, and values of every length with random digits */
        uint64_t v = i == 0 ? 0 : i == 1 ? UINT64_MAX : 0;
        if (i > 1) {
            unsigned bits = 1 + (unsigned)i % 64;
            v = ((uint64_t)rnd(UINT32_MAX) << 32 | rnd(UINT32_MAX)) >> (64 - bits);
            v |= (uint64_t)1 << (bits - 1);
        }
        s.ip = v | 0x100; /* (res: a symbol, its offset the low byte) */
        s.addr = v;
        empty(&a);
        ek_script_format(&a, &f, &s, &rv, 0);
        const char *to = (v & 0x100) ? "f+0x%" PRIx64 : "[unknown]";
        char tsym[64];
        snprintf(tsym, sizeof tsym, to, v & 0xff);
        snprintf(want, sizeof want, " %16" PRIx64 " f+0x%" PRIx64 " => %16" PRIx64 " %s\n",
                 s.ip, s.ip & 0xff, s.addr, tsym);
        assert_string_equal(a.p, want);
    }
    ek_sbuf_free(&a);
}

/* A buffer that ran out of memory takes no more text (ek_sbuf: appends are dropped), also not
 * a remembered head copied in place: a line with the head of the line before, into a buffer
 * marked out of memory with room left, leaves it as it was. */
static void test_head_not_past_oom(void **state)
{
    (void)state;
    ek_script_fields f;
    ek_script_fields_default(&f);
    script_memo m;
    memset(&m, 0, sizeof m);
    memset(gen, 0, sizeof gen);
    snprintf(names[1][0], sizeof names[1][0], "main-0");
    ek_sample s;
    memset(&s, 0, sizeof s);
    s.kind = EK_SAMPLE_BRANCHES;
    s.period = 1;
    s.pid = s.tid = 1;
    s.has_time = 1;
    s.time = 1003140000ull;
    s.ip = s.addr = 0x400000;
    ek_sbuf a = EK_SBUF_INIT;
    empty(&a);
    script_format_memo(&a, &f, &s, &rv, 12, &m);
    size_t len = a.len;
    assert_true(len > 0);
    assert_true(a.cap - a.len > 2 * SCRIPT_MEMO_HEAD);
    a.oom = 1;
    script_format_memo(&a, &f, &s, &rv, 12, &m);
    assert_int_equal(a.len, len);
    ek_sbuf_free(&a);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_fields),
        cmocka_unit_test(test_other_fields),
        cmocka_unit_test(test_hex_columns),
        cmocka_unit_test(test_head_not_past_oom),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
