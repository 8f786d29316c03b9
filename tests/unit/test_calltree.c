/* Calling contexts weighed by instructions (etmkit/calltree.h) on crafted samples with a
 * resolver of a few symbols: the folded stacks exactly (names, ';' in a name, an address in a
 * DSO without a symbol, one without a map, a tail jump, a gap frame, the sort, the root
 * frame's comm with a blank), the calls into functions, self and total (recursion counted
 * once), names resolved once per frame pushed, a filter that weighs one thread while the
 * stacks follow both, the comm-PID/TID root, "_[k]" after kernel functions, and a resolver
 * that hands out one buffer for different names (the names are told apart by their text). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "etmkit/calltree.h"
#include "etmkit/etmkit.h"
#include "etmkit/isa.h"
#include "testutil.h"

#define BR    EK_SF_BRANCH
#define CALL  (EK_SF_BRANCH | EK_SF_CALL)
#define RET   (EK_SF_BRANCH | EK_SF_RETURN)
#define BEGIN (EK_SF_BRANCH | EK_SF_TRACE_BEGIN)
#define END   EK_SF_TRACE_END

static void resolve(void *ctx, const ek_sample *s, uint64_t addr, int fallback, ek_addr_loc *out)
{
    (void)ctx;
    (void)s;
    (void)fallback;
    static const struct {
        uint64_t lo;
        const char *sym, *dso;
    } map[] = {
        {0x1000, "main", "/bin/prog"}, {0x2000, "f", "/bin/prog"},
        {0x3000, "g;x", "/bin/prog"},  {0x4000, NULL, "/lib/libfoo.so"},
        {0x6000, "rec", "/bin/prog"},  {0xffff800000001000ull, "vfs_read", "[kernel.kallsyms]"}};
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (addr >= map[i].lo && addr < map[i].lo + 0x1000) {
            out->sym = map[i].sym;
            out->dso = map[i].dso;
            out->symoff = addr - map[i].lo;
        }
    if (!out->dso && addr >> 63) out->dso = "[kernel.kallsyms]";
}

static const char *comm(void *ctx, const ek_sample *s)
{
    (void)ctx;
    return s->tid == 101 ? "other" : "my prog";
}

static const ek_script_resolver res = {resolve, comm, NULL, NULL};

static void smp(ek_calltree *ct, int32_t tid, uint32_t flags, uint64_t ip, uint64_t addr,
                uint8_t isub, uint64_t ninsn)
{
    ek_sample s;
    memset(&s, 0, sizeof s);
    s.kind = EK_SAMPLE_BRANCHES;
    s.flags = flags;
    s.pid = 100;
    s.tid = tid;
    s.cpu = 0;
    s.trace_id = 0x10;
    s.ip = ip;
    s.addr = addr;
    s.isub = isub;
    s.isize = ip ? 4 : 0;
    s.ninsn = ninsn;
    assert_int_equal(ek_calltree_sample(ct, &s, &res), 0);
}

static const ek_calltree_func *func_named(ek_calltree *ct, const char *name)
{
    for (size_t i = 0; i < ek_calltree_nfuncs(ct); i++) {
        const ek_calltree_func *f = ek_calltree_func_get(ct, i);
        if (!strcmp(f->name, name)) return f;
    }
    fail_msg("no function %s", name);
    return NULL;
}

static void test_folded(void **state)
{
    (void)state;
    ek_calltree *ct;
    assert_int_equal(ek_calltree_new(NULL, &ct), 0);
    smp(ct, 100, BEGIN, 0, 0x1000, 0, 0);
    smp(ct, 100, CALL, 0x1010, 0x2000, EK_ISUB_BR_LINK, 5); /* main -> f */
    smp(ct, 100, CALL, 0x2010, 0x3000, EK_ISUB_BR_LINK, 4); /* f -> g;x */
    smp(ct, 100, RET, 0x3008, 0x2014, EK_ISUB_V8_RET, 3);   /* g;x returns */
    smp(ct, 100, BR, 0x2020, 0x4000, 0, 3);                 /* f jumps into libfoo */
    smp(ct, 100, BR, 0x4010, 0x5000, 0, 5);                 /* to no map */
    smp(ct, 100, RET, 0x5004, 0x1014, EK_ISUB_V8_RET, 2);   /* back in main */
    smp(ct, 100, END, 0x1020, 0, 0, 4);                     /* the trace ends */
    smp(ct, 100, BEGIN, 0, 0x2000, 0, 0);                   /* elsewhere: a gap */
    smp(ct, 100, BR, 0x2008, 0x2000, 0, 3);
    ek_sbuf out = EK_SBUF_INIT;
    assert_int_equal(ek_calltree_folded(ct, &out), 0);
    assert_string_equal(out.p, "my_prog;[gap];f 3\n"
                               "my_prog;main 9\n"
                               "my_prog;main;[libfoo.so] 5\n"
                               "my_prog;main;[unknown] 2\n"
                               "my_prog;main;f 7\n"
                               "my_prog;main;f;g:x 3\n");
    ek_calltree_stats st;
    ek_calltree_get_stats(ct, &st);
    assert_int_equal(st.samples, 10);
    assert_int_equal(st.weighed, 10);
    assert_int_equal(st.instructions, 29);
    /* a frame's name is asked once, while it stays: 8 leaves and 2 frames pushed */
    assert_int_equal(st.resolves, 10);
    const ek_calltree_func *f = func_named(ct, "f");
    assert_int_equal(f->self, 10);
    assert_int_equal(f->total, 13);
    assert_int_equal(f->calls, 1);
    assert_string_equal(f->dso, "/bin/prog");
    assert_int_equal(func_named(ct, "main")->total, 26);
    assert_int_equal(func_named(ct, "g:x")->calls, 1);
    assert_int_equal(func_named(ct, "[libfoo.so]")->kind, EK_CTF_NOSYM);
    assert_int_equal(func_named(ct, "[gap]")->kind, EK_CTF_GAP);
    ek_sbuf_free(&out);
    ek_calltree_free(ct);
}

/* A resolver that writes every name into one buffer (as one that formats names would): the
 * same string address, the same length, another name. */
static char namebuf[16];
static void resolve_buf(void *ctx, const ek_sample *s, uint64_t addr, int fallback,
                        ek_addr_loc *out)
{
    (void)ctx;
    (void)s;
    (void)fallback;
    memset(out, 0, sizeof *out);
    snprintf(namebuf, sizeof namebuf, "fn%02xxyz", (unsigned)(addr >> 12) & 0xff);
    out->sym = namebuf;
    out->sym_len = 4; /* "fnNN" of the buffer */
    out->dso = "/bin/prog";
}

static void test_name_buffer_reused(void **state)
{
    (void)state;
    static const ek_script_resolver rb = {resolve_buf, comm, NULL, NULL};
    ek_calltree *ct;
    assert_int_equal(ek_calltree_new(NULL, &ct), 0);
    static const struct {
        uint32_t flags;
        uint64_t ip, addr;
        uint8_t isub;
    } v[] = {{BEGIN, 0, 0x1000, 0},
             {CALL, 0x1010, 0x2000, EK_ISUB_BR_LINK},
             {RET, 0x2010, 0x1014, EK_ISUB_V8_RET},
             {CALL, 0x1018, 0x2000, EK_ISUB_BR_LINK},
             {CALL, 0x2018, 0x3000, EK_ISUB_BR_LINK},
             {RET, 0x3010, 0x201c, EK_ISUB_V8_RET},
             {RET, 0x2020, 0x101c, EK_ISUB_V8_RET},
             {END, 0x1020, 0, 0}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        ek_sample s;
        memset(&s, 0, sizeof s);
        s.kind = EK_SAMPLE_BRANCHES;
        s.flags = v[i].flags;
        s.pid = s.tid = 100;
        s.trace_id = 0x10;
        s.ip = v[i].ip;
        s.addr = v[i].addr;
        s.isub = v[i].isub;
        s.isize = s.ip ? 4 : 0;
        s.ninsn = s.ip ? 2 : 0;
        assert_int_equal(ek_calltree_sample(ct, &s, &rb), 0);
    }
    ek_sbuf out = EK_SBUF_INIT;
    assert_int_equal(ek_calltree_folded(ct, &out), 0);
    assert_string_equal(out.p, "my_prog;fn01 6\n"
                               "my_prog;fn01;fn02 6\n"
                               "my_prog;fn01;fn02;fn03 2\n");
    assert_int_equal(ek_calltree_nfuncs(ct), 4);
    ek_sbuf_free(&out);
    ek_calltree_free(ct);
}

static void test_recursion_total_once(void **state)
{
    (void)state;
    ek_calltree_opts o;
    ek_calltree_opts_init(&o);
    o.root = EK_CALLTREE_ROOT_NONE;
    ek_calltree *ct;
    assert_int_equal(ek_calltree_new(&o, &ct), 0);
    smp(ct, 100, CALL, 0x1010, 0x6000, EK_ISUB_BR_LINK, 1);
    smp(ct, 100, CALL, 0x6010, 0x6000, EK_ISUB_BR_LINK, 2);
    smp(ct, 100, CALL, 0x6010, 0x6000, EK_ISUB_BR_LINK, 3);
    ek_sbuf out = EK_SBUF_INIT;
    assert_int_equal(ek_calltree_folded(ct, &out), 0);
    assert_string_equal(out.p, "main 1\nmain;rec 2\nmain;rec;rec 3\n");
    const ek_calltree_func *r = func_named(ct, "rec");
    assert_int_equal(r->self, 5);
    assert_int_equal(r->total, 5);
    assert_int_equal(r->calls, 2);
    assert_int_equal(func_named(ct, "main")->total, 6);
    ek_sbuf_free(&out);
    ek_calltree_free(ct);
}

/* --annotate-kernel: "_[k]" after a kernel symbol (stackcollapse-perf.pl --kernel); a kernel
 * address without a symbol is its DSO, "[kernel.kallsyms]". */
static void test_annotate_kernel(void **state)
{
    (void)state;
    ek_calltree_opts o;
    ek_calltree_opts_init(&o);
    o.root = EK_CALLTREE_ROOT_NONE;
    o.annotate_kernel = 1;
    ek_calltree *ct;
    assert_int_equal(ek_calltree_new(&o, &ct), 0);
    smp(ct, 100, CALL, 0x1010, 0xffff800000001000ull, EK_ISUB_BR_LINK, 1);
    smp(ct, 100, BR, 0xffff800000001008ull, 0xffff800000002000ull, 0, 2);
    smp(ct, 100, BR, 0xffff800000002008ull, 0xffff800000001000ull, 0, 3);
    ek_sbuf out = EK_SBUF_INIT;
    assert_int_equal(ek_calltree_folded(ct, &out), 0);
    assert_string_equal(out.p, "main 1\nmain;[kernel.kallsyms] 3\nmain;vfs_read_[k] 2\n");
    ek_sbuf_free(&out);
    ek_calltree_free(ct);
}

/* Two threads on one CPU; the filter keeps tid 101: its samples are weighed, under the stack
 * the call of tid 100 before the switch did not touch. */
static void test_filter_and_tid_root(void **state)
{
    (void)state;
    ek_sample_filter flt = EK_SAMPLE_FILTER_INIT;
    assert_int_equal(ek_sample_filter_tids(&flt, "101", NULL), 0);
    ek_calltree_opts o;
    ek_calltree_opts_init(&o);
    o.root = EK_CALLTREE_ROOT_TID;
    o.filter = &flt;
    ek_calltree *ct;
    assert_int_equal(ek_calltree_new(&o, &ct), 0);
    smp(ct, 101, BEGIN, 0, 0x1000, 0, 0);
    smp(ct, 101, CALL, 0x1010, 0x2000, EK_ISUB_BR_LINK, 5);
    smp(ct, 101, END, 0x2004, 0, 0, 2);
    smp(ct, 100, BEGIN, 0, 0x1000, 0, 0);
    smp(ct, 100, CALL, 0x1010, 0x2000, EK_ISUB_BR_LINK, 7);
    smp(ct, 100, END, 0x2004, 0, 0, 1);
    smp(ct, 101, BEGIN, 0, 0x2008, 0, 0);
    smp(ct, 101, BR, 0x200c, 0x2000, 0, 4);
    ek_sbuf out = EK_SBUF_INIT;
    assert_int_equal(ek_calltree_folded(ct, &out), 0);
    assert_string_equal(out.p, "other-100/101;[gap];f 4\n"
                               "other-100/101;main 5\n"
                               "other-100/101;main;f 2\n");
    ek_calltree_stats st;
    ek_calltree_get_stats(ct, &st);
    assert_int_equal(st.samples, 8);
    assert_int_equal(st.weighed, 5);
    assert_int_equal(st.instructions, 11);
    ek_stacks_stats ss;
    ek_stacks_get_stats(ek_calltree_stacks(ct), &ss);
    assert_int_equal(ss.calls, 2); /* both threads' stacks followed */
    ek_sbuf_free(&out);
    ek_calltree_free(ct);
    ek_sample_filter_free(&flt);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_folded),
        cmocka_unit_test(test_recursion_total_once),
        cmocka_unit_test(test_filter_and_tid_root),
        cmocka_unit_test(test_annotate_kernel),
        cmocka_unit_test(test_name_buffer_reused),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
