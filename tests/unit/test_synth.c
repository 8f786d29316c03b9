/* Sample synthesis (perf cs-etm policy) and perf-script text, on hand-made element streams. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/elem.h"
#include "etmkit/etmkit.h"
#include "etmkit/isa.h"
#include "etmkit/script.h"
#include "etmkit/session.h"
#include "etmkit/synth.h"
#include "testutil.h"

/* ---- helpers -------------------------------------------------------------------------------- */

typedef struct run {
    ek_sbuf text;
    ek_script_fields f;
    uint8_t code[0x200]; /* code at 0x1000 */
} run;

static size_t rd(void *ctx, uint64_t addr, void *buf, size_t len)
{
    run *r = ctx;
    if (addr < 0x1000 || addr + len > 0x1000 + sizeof r->code)
        return 0;
    memcpy(buf, r->code + (addr - 0x1000), len);
    return len;
}

static void res(void *ctx, const ek_sample *s, uint64_t addr, int fb, ek_addr_loc *out)
{
    (void)ctx; (void)s; (void)fb;
    if (addr >= 0x1000 && addr < 0x2000) {
        out->dso = "/bin/t";
        if (addr >= 0x1040 && addr < 0x1080) {
            out->sym = "f";
            out->symoff = addr - 0x1040;
        }
    }
}

static int smp(void *ctx, const ek_sample *s)
{
    run *r = ctx;
    ek_script_resolver rv = {res, NULL, NULL, NULL};
    ek_script_format(&r->text, &r->f, s, &rv, 0);
    return 0;
}

/* Collapse runs of blanks to one space (as the acceptance comparison does). */
static char *fold(const char *s)
{
    char *o = malloc(strlen(s) + 1), *d = o;
    int sp = 0;
    for (; *s; s++) {
        if (*s == ' ' || *s == '\t') {
            sp = 1;
            continue;
        }
        if (sp && d > o && d[-1] != '\n' && *s != '\n')
            *d++ = ' ';
        sp = 0;
        *d++ = *s;
    }
    *d = 0;
    return o;
}

static ek_elem range(uint64_t st, uint64_t en, int type, int sub, int exec)
{
    ek_elem e;
    memset(&e, 0, sizeof e);
    e.type = EK_ELEM_INSTR_RANGE;
    e.st_addr = st;
    e.en_addr = en;
    e.num_instr = (uint32_t)((en - st) / 4);
    e.isa = EK_ISET_A64;
    e.last_i_type = (uint8_t)type;
    e.last_i_sub = (uint8_t)sub;
    e.last_i_size = 4;
    if (exec)
        e.flags |= EK_ELEMF_LAST_EXEC;
    return e;
}

static ek_elem simple(int type, uint64_t addr)
{
    ek_elem e;
    memset(&e, 0, sizeof e);
    e.type = (uint8_t)type;
    e.st_addr = addr;
    return e;
}

static void feed(run *r, const char *itrace, const char *fields, const ek_elem *e, size_t n,
                 int end_block)
{
    ek_itrace it;
    ek_sbuf err = EK_SBUF_INIT;
    assert_int_equal(ek_itrace_parse(itrace, &it, &err), 0);
    assert_int_equal(ek_script_fields_parse(fields, &r->f, &err), 0);
    ek_synth_config c;
    ek_synth_config_init(&c);
    c.itrace = &it;
    c.cpu = 7;
    c.io.read = rd;
    c.io.sample = smp;
    c.io.ctx = r;
    ek_synth *s;
    assert_int_equal(ek_synth_new(&c, &s), 0);
    ek_synth_set_thread(s, 17, 18);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(ek_synth_elem(s, &e[i]), 0);
    if (end_block)
        ek_synth_end_block(s);
    ek_synth_free(s);
    ek_sbuf_free(&err);
}

static void expect(run *r, const char *want)
{
    char *a = fold(r->text.p ? r->text.p : ""), *b = fold(want);
    if (strcmp(a, b)) {
        fprintf(stderr, "got:\n%s\nwant:\n%s\n", a, b);
        fail();
    }
    free(a);
    free(b);
    ek_sbuf_free(&r->text);
}

/* A trace like the start of perf_etm.data: trace on, three taken branches, a return into code
 * that is not available, trace on again. */
static const ek_elem *stream1(size_t *n)
{
    static ek_elem e[8];
    e[0] = simple(EK_ELEM_NO_SYNC, 0);
    e[1] = simple(EK_ELEM_TRACE_ON, 0);
    e[2] = range(0x1000, 0x1008, EK_ITYPE_BR, EK_ISUB_NONE, 1);        /* b at 1004 */
    e[3] = range(0x100c, 0x1054, EK_ITYPE_BR, EK_ISUB_BR_LINK, 1);     /* bl at 1050 */
    e[4] = range(0x1040, 0x1070, EK_ITYPE_BR_INDIRECT, EK_ISUB_V8_RET, 1); /* ret at 106c */
    e[5] = simple(EK_ELEM_ADDR_NACC, 0x7f0000);
    e[6] = simple(EK_ELEM_TRACE_ON, 0);
    e[7] = range(0x1080, 0x1090, EK_ITYPE_BR, EK_ISUB_NONE, 0); /* not taken at 108c */
    *n = 8;
    return e;
}

static void test_branches(void **state)
{
    run r;
    memset(&r, 0, sizeof r);
    size_t n;
    const ek_elem *e = stream1(&n);
    feed(&r, "b", "pid,tid,cpu,flags,ip,sym,symoff,dso,addr", e, n, 1);
    expect(&r,
           "17/18 [007] tr strt 0 [unknown] ([unknown]) => 1000 [unknown] (/bin/t)\n"
           "17/18 [007] jmp 1004 [unknown] (/bin/t) => 100c [unknown] (/bin/t)\n"
           "17/18 [007] call 1050 f+0x10 (/bin/t) => 1040 f+0x0 (/bin/t)\n"
           "17/18 [007] tr end return 106c f+0x2c (/bin/t) => 0 [unknown] ([unknown])\n"
           "17/18 [007] tr strt 0 [unknown] ([unknown]) => 1080 [unknown] (/bin/t)\n");
}

static void test_instructions(void **state)
{
    run r;
    memset(&r, 0, sizeof r);
    size_t n;
    const ek_elem *e = stream1(&n);
    /* 2 + 18 + 12 + 4 = 36 instructions: samples at the 10th, 20th and 30th */
    feed(&r, "i10i", "pid,tid,cpu,period,ip,sym,symoff,dso", e, n, 1);
    expect(&r,
           "17/18 [007] 10 1028 [unknown] (/bin/t)\n"
           "17/18 [007] 10 1050 f+0x10 (/bin/t)\n"
           "17/18 [007] 10 1064 f+0x24 (/bin/t)\n");
}

static void test_last_branch(void **state)
{
    run r;
    memset(&r, 0, sizeof r);
    size_t n;
    const ek_elem *e = stream1(&n);
    feed(&r, "i10il4", "ip,brstack", e, n, 1);
    /* samples carry the taken branches so far, newest first; the gap flushes the stack with a
     * sample for the rest of the period, and the block end does the same for the last range */
    expect(&r,
           "1028 0x1004/0x100c/P/-/-/0/\n"
           "1050 0x1004/0x100c/P/-/-/0/\n"
           "1064 0x1050/0x1040/P/-/-/0/ 0x1004/0x100c/P/-/-/0/\n"
           "106c 0x1050/0x1040/P/-/-/0/ 0x1004/0x100c/P/-/-/0/\n"
           "108c\n");
}

/* An exception after a range relabels it; an exception return back to the instruction after
 * an SVC is a syscall return. */
static void test_exceptions(void **state)
{
    run r;
    memset(&r, 0, sizeof r);
    /* svc #0 at 0x1010 (d4000001), little-endian */
    const uint8_t svc[4] = {0x01, 0x00, 0x00, 0xd4};
    memcpy(r.code + 0x10, svc, 4);
    ek_elem e[8];
    e[0] = simple(EK_ELEM_TRACE_ON, 0);
    e[1] = range(0x1000, 0x1014, EK_ITYPE_OTHER, EK_ISUB_NONE, 1);
    e[2] = simple(EK_ELEM_EXCEPTION, 0);
    e[2].u.exception_number = 2; /* call: svc */
    e[3] = range(0x1100, 0x1108, EK_ITYPE_OTHER, EK_ISUB_NONE, 1);
    e[4] = simple(EK_ELEM_EXCEPTION_RET, 0);
    e[5] = range(0x1014, 0x1018, EK_ITYPE_OTHER, EK_ISUB_NONE, 1);
    e[6] = simple(EK_ELEM_EXCEPTION, 0);
    e[6].u.exception_number = 14; /* IRQ */
    e[7] = range(0x1180, 0x1184, EK_ITYPE_OTHER, EK_ISUB_NONE, 1);
    feed(&r, "b", "flags,ip,addr", e, 8, 1);
    expect(&r,
           "tr strt 0 => 1000\n"
           "syscall 1010 => 1100\n"
           "sysret 1104 => 1014\n"
           "hw int 1014 => 1180\n");
}

/* ek_sample.resume: an exception's preferred return address rides on the sample made at the
 * exception (the first exception's when a second comes before any instruction); other samples
 * have 0. ek_sample.queue is the configuration's. */
static uint64_t resumes[8];
static uint32_t nresumes;

static int keep_resume(void *ctx, const ek_sample *s)
{
    (void)ctx;
    assert_int_equal(s->queue, 5);
    if (nresumes < 8) resumes[nresumes++] = s->resume;
    return 0;
}

static void test_exception_resume(void **state)
{
    (void)state;
    ek_elem e[9];
    e[0] = simple(EK_ELEM_TRACE_ON, 0);
    e[1] = range(0x1000, 0x1008, EK_ITYPE_BR_INDIRECT, EK_ISUB_NONE, 1); /* eret at 1004 */
    e[2] = simple(EK_ELEM_EXCEPTION, 0);
    e[2].u.exception_number = 14; /* IRQ before the eret's target ran */
    e[2].en_addr = 0x1040;
    e[2].flags = EK_ELEMF_EXCEP_RET_ADDR;
    e[3] = range(0x1180, 0x1188, EK_ITYPE_BR_INDIRECT, EK_ISUB_NONE, 1); /* eret at 1184 */
    e[4] = simple(EK_ELEM_EXCEPTION, 0); /* two at once: the first one's address stays */
    e[4].u.exception_number = 14;
    e[4].en_addr = 0x1040;
    e[4].flags = EK_ELEMF_EXCEP_RET_ADDR;
    e[5] = simple(EK_ELEM_EXCEPTION, 0);
    e[5].u.exception_number = 14;
    e[5].en_addr = 0x1180;
    e[5].flags = EK_ELEMF_EXCEP_RET_ADDR;
    e[6] = range(0x1180, 0x1188, EK_ITYPE_BR_INDIRECT, EK_ISUB_NONE, 1);
    e[7] = simple(EK_ELEM_EXCEPTION_RET, 0);
    e[8] = range(0x1040, 0x1044, EK_ITYPE_OTHER, EK_ISUB_NONE, 1);
    ek_itrace it;
    ek_sbuf err = EK_SBUF_INIT;
    assert_int_equal(ek_itrace_parse("b", &it, &err), 0);
    ek_synth_config c;
    ek_synth_config_init(&c);
    c.itrace = &it;
    c.queue = 5;
    c.io.sample = keep_resume;
    ek_synth *sy;
    assert_int_equal(ek_synth_new(&c, &sy), 0);
    nresumes = 0;
    for (size_t i = 0; i < 9; i++)
        assert_int_equal(ek_synth_elem(sy, &e[i]), 0);
    ek_synth_free(sy);
    ek_sbuf_free(&err);
    /* tr strt => 1000; hw int 1004 => 1180; hw int 1184 => 1180; iret 1184 => 1040 */
    assert_int_equal(nresumes, 4);
    assert_int_equal(resumes[0], 0);
    assert_int_equal(resumes[1], 0x1040);
    assert_int_equal(resumes[2], 0x1040);
    assert_int_equal(resumes[3], 0);
}

/* s<N>: one count over every kind, in the order the samples are made (perf's Intel PT
 * decoder, the one that implements 's': one num_events for all its events) */
static void test_skip_kinds(void **state)
{
    run r;
    memset(&r, 0, sizeof r);
    size_t n;
    const ek_elem *e = stream1(&n);
    feed(&r, "i10ibs3", "period,ip,addr", e, n, 1);
    /* i10ib gives: tr strt, 10 at 1028, 10 at 1050, jmp, 10 at 1064, call, tr end, tr strt
     * (an instructions sample prints addr 0 before its ip) */
    expect(&r, "1 1004 => 100c\n"
               "10 0 1064\n"
               "1 1050 => 1040\n"
               "1 106c => 0\n"
               "1 0 => 1080\n");
}

/* ninsn: the instructions since the branch before, the branch's own included; a range that
 * ends in a branch not taken adds to the next sample's; a branch --itrace's c leaves out
 * still ends its run (the next sample counts from its target). */
static int smp_ninsn(void *ctx, const ek_sample *s)
{
    ek_sbuf *o = ctx;
    ek_sbuf_printf(o, "%llx=>%llx %llu\n", (unsigned long long)s->ip, (unsigned long long)s->addr,
                   (unsigned long long)s->ninsn);
    return 0;
}

static void ninsn_run(const char *itrace, const ek_elem *e, size_t n, const char *want)
{
    ek_itrace it;
    assert_int_equal(ek_itrace_parse(itrace, &it, NULL), 0);
    ek_synth_config c;
    ek_synth_config_init(&c);
    c.itrace = &it;
    c.io.read = rd;
    c.io.sample = smp_ninsn;
    ek_sbuf o = EK_SBUF_INIT;
    c.io.ctx = &o;
    ek_synth *s;
    assert_int_equal(ek_synth_new(&c, &s), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(ek_synth_elem(s, &e[i]), 0);
    ek_synth_free(s);
    assert_string_equal(o.p ? o.p : "", want);
    ek_sbuf_free(&o);
}

static void test_ninsn(void **state)
{
    (void)state;
    size_t n;
    const ek_elem *e = stream1(&n);
    ninsn_run("b", e, n, "0=>1000 0\n1004=>100c 2\n1050=>1040 18\n106c=>0 12\n0=>1080 0\n");
    ninsn_run("c", e, n, "1050=>1040 18\n106c=>0 12\n");
    ek_elem f[6];
    f[0] = simple(EK_ELEM_TRACE_ON, 0);
    f[1] = range(0x1000, 0x1010, EK_ITYPE_BR, EK_ISUB_NONE, 0); /* b.cond at 100c, not taken */
    f[2] = range(0x1010, 0x1018, EK_ITYPE_BR, EK_ISUB_NONE, 1); /* b at 1014 */
    f[3] = range(0x1040, 0x1050, EK_ITYPE_BR, EK_ISUB_NONE, 0); /* not taken at 104c */
    f[4] = simple(EK_ELEM_EO_TRACE, 0);
    f[5] = simple(EK_ELEM_TRACE_ON, 0);
    ninsn_run("b", f, 6, "0=>1000 0\n1014=>1040 6\n104c=>0 4\n");
}

/* c / r as perf's Intel PT decoder selects them (intel-pt.c, branches_filter): calls with
 * asynchronous branches and trace ends; returns with trace begins */
static void test_calls_returns(void **state)
{
    run r;
    memset(&r, 0, sizeof r);
    size_t n;
    const ek_elem *e = stream1(&n);
    feed(&r, "c", "flags,ip,addr", e, n, 1);
    expect(&r, "call 1050 => 1040\n"
               "tr end return 106c => 0\n");
    feed(&r, "r", "flags,ip,addr", e, n, 1);
    expect(&r, "tr strt 0 => 1000\n"
               "tr end return 106c => 0\n"
               "tr strt 0 => 1080\n");
    feed(&r, "cr", "flags,ip,addr", e, n, 1);
    expect(&r, "tr strt 0 => 1000\n"
               "call 1050 => 1040\n"
               "tr end return 106c => 0\n"
               "tr strt 0 => 1080\n");
}

/* Sample synthesis asks the classifier whether an exception was taken by an SVC: for T32 and
 * A32 code as for A64 (the syscall label), and only for SVC encodings (a T32 UDF in its
 * place is a call taken as an interrupt, "int", as perf labels it). */
static void test_exceptions_t32_a32(void **state)
{
    static const struct {
        int isa;
        uint8_t bytes[4];
        unsigned size;
        const char *want;
    } cases[] = {
        {EK_ISET_T32, {0x00, 0xdf}, 2, "syscall 1012 => 1100\n"},             /* svc #0 */
        {EK_ISET_T32, {0x00, 0xde}, 2, "int 1012 => 1100\n"},                 /* udf #0 */
        {EK_ISET_A32, {0x00, 0x00, 0x00, 0xef}, 4, "syscall 1010 => 1100\n"}, /* svc #0 (AL) */
        {EK_ISET_A32, {0x00, 0x00, 0x00, 0xff}, 4, "int 1010 => 1100\n"},     /* cond 1111 */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        run r;
        memset(&r, 0, sizeof r);
        memcpy(r.code + 0x14 - cases[k].size, cases[k].bytes, cases[k].size);
        ek_elem e[4];
        e[0] = simple(EK_ELEM_TRACE_ON, 0);
        e[1] = range(0x1000, 0x1014, EK_ITYPE_OTHER, EK_ISUB_NONE, 1);
        e[1].isa = (uint8_t)cases[k].isa;
        e[1].last_i_size = (uint8_t)cases[k].size;
        e[2] = simple(EK_ELEM_EXCEPTION, 0);
        e[2].u.exception_number = 2; /* call */
        e[3] = range(0x1100, 0x1108, EK_ITYPE_OTHER, EK_ISUB_NONE, 1);
        feed(&r, "b", "flags,ip,addr", e, 4, 0);
        char want[64];
        snprintf(want, sizeof want, "tr strt 0 => 1000\n%s", cases[k].want);
        expect(&r, want);
    }
}

/* The classifier's SVC kinds are exactly perf's SVC tests (cs_etm__is_svc_instr: masks on the
 * bytes it reads), which synthesis used to apply itself: every T32 halfword, and every
 * combination of the bits the masks look at with pseudo-random other bits for A64 and A32 (all
 * 2^32 words of each were compared once by hand: no difference). */
static void test_svc_is_the_classifiers(void **state)
{
    ek_isa_cfg cfg;
    ek_isa_cfg_init(&cfg, EK_ARCH_UNKNOWN, EK_PROFILE_UNKNOWN, 0);
    ek_insn in;
    for (uint32_t h = 0; h <= 0xffff; h++) {
        ek_isa_classify(h, EK_ISA_T32, 0, &cfg, &in);
        assert_int_equal(in.kind == EK_K_T32_SVC, (h & 0xff00u) == 0xdf00u);
    }
    uint32_t x = 0x2545f491u;
    for (uint32_t hi = 0; hi < 0x800; hi++)
        for (uint32_t lo = 0; lo < 32; lo++)
            for (int k = 0; k < 4; k++) {
                x = x * 1664525u + 1013904223u;
                const uint32_t w = hi << 21 | (x & 0x1fffe0u) | lo;
                ek_isa_classify(w, EK_ISA_A64, 0, &cfg, &in);
                assert_int_equal(in.kind == EK_K_A64_SVC, (w & 0xffe0001fu) == 0xd4000001u);
            }
    for (uint32_t top = 0; top < 0x100; top++)
        for (int k = 0; k < 2048; k++) {
            x = x * 1664525u + 1013904223u;
            const uint32_t w = top << 24 | (x & 0xffffffu);
            ek_isa_classify(w, EK_ISA_A32, 0, &cfg, &in);
            assert_int_equal(in.kind == EK_K_A32_SVC,
                             (w & 0x0f000000u) == 0x0f000000u && (w & 0xf0000000u) != 0xf0000000u);
        }
}

static void test_itrace_parse(void **state)
{
    ek_itrace o;
    ek_sbuf err = EK_SBUF_INIT;
    assert_int_equal(ek_itrace_parse("i100i", &o, NULL), 0);
    assert_true(o.instructions && o.period == 100 && !o.branches);
    assert_int_equal(ek_itrace_parse("i64il16", &o, NULL), 0);
    assert_true(o.instructions && o.period == 64 && o.last_branch && o.last_branch_sz == 16);
    assert_int_equal(ek_itrace_parse("bZ", &o, NULL), 0);
    assert_true(o.branches && o.timeless && !o.instructions);
    assert_int_equal(ek_itrace_parse("i1us", &o, NULL), 0);
    assert_true(o.period == 1000 && o.period_type == EK_ITRACE_PERIOD_NANOSECS);
    assert_int_equal(ek_itrace_parse("cr", &o, NULL), 0);
    assert_true(o.branches && o.calls && o.returns);
    assert_int_equal(ek_itrace_parse("i", &o, NULL), 0);
    assert_true(o.period == EK_ITRACE_DEFAULT_PERIOD);
    assert_int_equal(ek_itrace_parse("l0", &o, &err), EK_ERR_ARG);
    assert_int_equal(ek_itrace_parse("k", &o, &err), EK_ERR_ARG);
    assert_int_equal(ek_itrace_parse("i10q", &o, &err), EK_ERR_ARG);
    assert_non_null(strstr(err.p, "i10q"));
    ek_sbuf_free(&err);
}

static void test_flags_text(void **state)
{
    ek_sbuf s = EK_SBUF_INIT;
    ek_script_flags_text(&s, EK_SF_BRANCH | EK_SF_RETURN | EK_SF_TRACE_END);
    assert_string_equal(s.p, "tr end  return " "      ");
    ek_sbuf_reset(&s);
    ek_script_flags_text(&s, EK_SF_BRANCH | EK_SF_CONDITIONAL);
    assert_string_equal(s.p, "jcc            " "      ");
    ek_sbuf_reset(&s);
    ek_script_flags_text(&s, EK_SF_BRANCH | EK_SF_CALL | EK_SF_TRACE_END | EK_SF_TRACE_BEGIN);
    assert_string_equal(s.p, "bcBE");
    ek_sbuf_reset(&s);
    ek_script_flags_text(&s, 0);
    assert_string_equal(s.p ? s.p : "", "");
    ek_sbuf_free(&s);
}

static void test_fields_parse(void **state)
{
    ek_script_fields f;
    ek_sbuf err = EK_SBUF_INIT;
    assert_int_equal(ek_script_fields_parse("ip,brstack", &f, &err), 0);
    assert_int_equal(f.fields, EK_SF_F_IP | EK_SF_F_BRSTACK);
    assert_int_equal(ek_script_fields_parse("+addr,-period", &f, &err), 0);
    assert_true(f.fields & EK_SF_F_ADDR);
    assert_false(f.fields & EK_SF_F_PERIOD);
    assert_int_equal(ek_script_fields_parse("ip,nosuch", &f, &err), EK_ERR_ARG);
    /* an empty name is a mistake, not a field to skip (issue 11) */
    const char *empty[] = {"ip,,sym", "ip,sym,", ",ip", ",", "+ip,,-sym", "branches:"};
    for (size_t i = 0; i < sizeof empty / sizeof empty[0]; i++) {
        ek_sbuf_reset(&err);
        assert_int_equal(ek_script_fields_parse(empty[i], &f, &err), EK_ERR_ARG);
        assert_non_null(strstr(err.p, "empty field name"));
    }
    ek_sbuf_free(&err);
}

/* Without --itrace (and with --itrace alone) perf script asks for "ce"; perf 6.1's cs-etm makes
 * a branches sample of every branch and no instructions samples: etmkit's default is that. */
static void test_itrace_default(void **state)
{
    ek_itrace o;
    ek_itrace_default(&o);
    assert_false(o.instructions);
    assert_true(o.branches);
    assert_false(o.calls);
    assert_false(o.returns);
    assert_false(o.last_branch);
    assert_true(o.errors);
    assert_int_equal(ek_itrace_parse(NULL, &o, NULL), 0);
    assert_true(o.set);
    assert_false(o.instructions);
    assert_true(o.branches);
    assert_false(o.calls);
    assert_true(o.errors);
    ek_session_opts so;
    ek_session_opts_init(&so);
    assert_false(so.itrace.instructions);
    assert_true(so.itrace.branches);
}

/* perf names a thread that no COMM record named ":TID" (thread__new), whatever the TID. */
static void test_comm_unknown_thread(void **state)
{
    run r;
    memset(&r, 0, sizeof r);
    ek_sbuf err = EK_SBUF_INIT;
    assert_int_equal(ek_script_fields_parse("comm,tid,ip", &r.f, &err), 0);
    ek_sample s;
    memset(&s, 0, sizeof s);
    s.kind = EK_SAMPLE_BRANCHES;
    s.pid = 17;
    s.tid = 18;
    s.cpu = 7;
    s.ip = 0x1004;
    smp(&r, &s);
    s.pid = s.tid = -1;
    smp(&r, &s);
    expect(&r, ":18 18 1004\n"
               ":-1 -1 1004\n");
    ek_sbuf_free(&err);
}

/* -F names: perf keeps a field -F names even where the recording lacks it, and drops a default
 * one (cpu without PERF_SAMPLE_CPU) */
static void test_fields_named(void **state)
{
    ek_script_fields f;
    ek_script_fields_default(&f);
    assert_int_equal(f.named, 0);
    ek_sbuf err = EK_SBUF_INIT;
    assert_int_equal(ek_script_fields_parse("cpu,ip", &f, &err), 0);
    assert_int_equal(f.named, EK_SF_F_CPU | EK_SF_F_IP);
    assert_int_equal(ek_script_fields_parse("+addr,-period", &f, &err), 0);
    assert_int_equal(f.named, EK_SF_F_ADDR | EK_SF_F_PERIOD);
    assert_true(f.fields & EK_SF_F_CPU);
    assert_false(f.named & EK_SF_F_CPU);
    ek_sbuf_free(&err);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_branches),
        cmocka_unit_test(test_instructions),
        cmocka_unit_test(test_last_branch),
        cmocka_unit_test(test_exceptions),
        cmocka_unit_test(test_exception_resume),
        cmocka_unit_test(test_skip_kinds),
        cmocka_unit_test(test_calls_returns),
        cmocka_unit_test(test_ninsn),
        cmocka_unit_test(test_exceptions_t32_a32),
        cmocka_unit_test(test_svc_is_the_classifiers),
        cmocka_unit_test(test_itrace_parse),
        cmocka_unit_test(test_flags_text),
        cmocka_unit_test(test_fields_parse),
        cmocka_unit_test(test_itrace_default),
        cmocka_unit_test(test_comm_unknown_thread),
        cmocka_unit_test(test_fields_named),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
