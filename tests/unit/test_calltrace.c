/* perf-script call traces and call chains (src/output/script_calltrace.c): the callindent
 * column (perf's perf_sample__fprintf_callindent: name, depth, the running column width), the
 * DSO padding of --call-trace, the chain lines of --itrace=g, and the g[N] letter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "etmkit/script.h"
#include "etmkit/synth.h"
#include "testutil.h"

/* symbols: "fn" at [0x1000, 0x2000) of /bin/x; nothing elsewhere */
static void res(void *ctx, const ek_sample *s, uint64_t addr, int fb, ek_addr_loc *l)
{
    (void)ctx;
    (void)s;
    (void)fb;
    memset(l, 0, sizeof *l);
    if (addr >= 0x1000 && addr < 0x2000) {
        l->dso = "/bin/x";
        l->sym = "fn";
        l->symoff = addr - 0x1000;
    } else if (addr >= 0x5000 && addr < 0x6000) {
        l->dso = "/a/very/long/path/name/that/is/longer/than/fifty/chars/lib.so";
    }
}

static const ek_script_resolver rv = {res, NULL, NULL, NULL};

static ek_sample branch(uint32_t flags, uint64_t ip, uint64_t addr)
{
    ek_sample s;
    memset(&s, 0, sizeof s);
    s.kind = EK_SAMPLE_BRANCHES;
    s.flags = flags;
    s.ip = ip;
    s.addr = addr;
    s.pid = s.tid = 7;
    s.cpu = 1;
    s.period = 1;
    return s;
}

static void line(ek_sbuf *o, const ek_script_fields *f, const ek_sample *s, int depth, int *sp,
                 const char *want)
{
    ek_script_extra x;
    memset(&x, 0, sizeof x);
    x.depth = depth;
    x.spacing = sp;
    ek_sbuf_reset(o);
    ek_script_format_x(o, f, s, &rv, 0, &x);
    assert_string_equal(o->p, want);
}

/* "    7 " (the tid), then blanks, text, blanks: the callindent column */
static const char *col(char *buf, int lead, const char *text, int trail)
{
    snprintf(buf, 256, "    7 %*s%s%*s\n", lead, "", text, trail, "");
    return buf;
}

static void test_callindent(void **state)
{
    (void)state;
    ek_script_fields f;
    ek_script_fields_default(&f);
    ek_sbuf err = EK_SBUF_INIT, o = EK_SBUF_INIT;
    char w[256];
    assert_int_equal(ek_script_fields_parse("tid,callindent", &f, &err), 0);
    int sp = 0;
    /* a call: its target's name, one level in; the column grows to a multiple of 32 */
    ek_sample c = branch(EK_SF_BRANCH | EK_SF_CALL, 0x3000, 0x1004);
    line(&o, &f, &c, 1, &sp, col(w, 4, "fn", 26));
    assert_int_equal(sp, 32);
    /* a return: the function it leaves; no symbol: its address, 16 wide */
    ek_sample r = branch(EK_SF_BRANCH | EK_SF_RETURN, 0x3000, 0x1000);
    line(&o, &f, &r, 1, &sp, col(w, 4 + 12, "3000", 12));
    /* a trace end of a call (its target 0): nothing, the column kept */
    ek_sample e = branch(EK_SF_BRANCH | EK_SF_CALL | EK_SF_TRACE_END, 0x1000, 0);
    line(&o, &f, &e, 1, &sp, col(w, 32, "", 0));
    /* a jump: nothing */
    ek_sample j = branch(EK_SF_BRANCH | EK_SF_CONDITIONAL, 0x1000, 0x1008);
    line(&o, &f, &j, 3, &sp, col(w, 32, "", 0));
    /* deeper than the column: it grows past the text + 4 (34 + 4 -> 64) */
    line(&o, &f, &c, 8, &sp, col(w, 32, "fn", 30));
    assert_int_equal(sp, 64);
    /* shorter by more than 52: it shrinks (2 < 64 - 52) */
    line(&o, &f, &c, 0, &sp, col(w, 0, "fn", 30));
    assert_int_equal(sp, 32);
    /* --perf-callindent: depth 0 */
    f.flat_callindent = 1;
    line(&o, &f, &c, 8, &sp, col(w, 0, "fn", 30));
    ek_sbuf_free(&o);
    ek_sbuf_free(&err);
}

static void test_dso_padding(void **state)
{
    (void)state;
    ek_script_fields f;
    ek_script_fields_default(&f);
    ek_sbuf err = EK_SBUF_INIT, o = EK_SBUF_INIT;
    assert_int_equal(ek_script_fields_parse("tid,dso,callindent", &f, &err), 0);
    f.pad_dso = 50;
    int sp = 32;
    ek_sample c = branch(EK_SF_BRANCH | EK_SF_CALL, 0x1000, 0x1004);
    char want[256];
    snprintf(want, sizeof want, "    7 (%-50s)\tfn%30s\n", "/bin/x", "");
    line(&o, &f, &c, 0, &sp, want);
    /* a longer name: cut to 49 characters and one blank (perf's scnprintf_pad) */
    ek_sample l = branch(EK_SF_BRANCH | EK_SF_RETURN, 0x5000, 0x1000);
    snprintf(want, sizeof want, "    7 (%.49s )\t%16s%16s\n",
             "/a/very/long/path/name/that/is/longer/than/fifty/chars/lib.so", "5000", "");
    line(&o, &f, &l, 0, &sp, want);
    ek_sbuf_free(&o);
    ek_sbuf_free(&err);
}

static void test_chain(void **state)
{
    (void)state;
    ek_script_fields f;
    ek_script_fields_default(&f);
    ek_sbuf err = EK_SBUF_INIT, o = EK_SBUF_INIT;
    assert_int_equal(ek_script_fields_parse("tid,ip,sym,symoff,dso", &f, &err), 0);
    ek_sample s = branch(EK_SF_BRANCH | EK_SF_CALL, 0x1010, 0x1100);
    const uint64_t chain[] = {0x1010, 0x1204, 0};
    ek_script_extra x;
    memset(&x, 0, sizeof x);
    x.chain = chain;
    x.nchain = 3;
    ek_script_format_x(&o, &f, &s, &rv, 0, &x);
    /* the ip line becomes the chain; a gap frame is address 0, unknown; without the target
     * (-F without addr) the sample's newline follows the chain's last (perf_sample__fprintf_bts) */
    assert_string_equal(o.p, "    7 \n"
                             "\t            1010 fn+0x10 (/bin/x)\n"
                             "\t            1204 fn+0x204 (/bin/x)\n"
                             "\t               0 [unknown] ([unknown])\n\n");
    /* an instructions sample: the chain, then the sample's newline (a blank line, as perf) */
    s.kind = EK_SAMPLE_INSTRUCTIONS;
    x.nchain = 1;
    ek_sbuf_reset(&o);
    ek_script_format_x(&o, &f, &s, &rv, 0, &x);
    assert_string_equal(o.p, "    7 \n\t            1010 fn+0x10 (/bin/x)\n\n");
    ek_sbuf_free(&o);
    ek_sbuf_free(&err);
}

static void test_itrace_g(void **state)
{
    (void)state;
    ek_itrace it;
    ek_sbuf err = EK_SBUF_INIT;
    assert_int_equal(ek_itrace_parse("bg", &it, &err), 0);
    assert_true(it.callchain);
    assert_int_equal(it.callchain_sz, 16);
    assert_int_equal(ek_itrace_parse("i100ig8", &it, &err), 0);
    assert_true(it.callchain && it.instructions);
    assert_int_equal(it.callchain_sz, 8);
    assert_int_equal(ek_itrace_parse("bG", &it, &err), 0);
    assert_false(it.callchain);
    assert_int_equal(ek_itrace_parse("bg0", &it, &err), EK_ERR_ARG);
    ek_sbuf_free(&err);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_callindent),
        cmocka_unit_test(test_dso_padding),
        cmocka_unit_test(test_chain),
        cmocka_unit_test(test_itrace_g),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
