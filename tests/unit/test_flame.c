/* ek_flame_svg's reading of folded stacks (etmkit/flame.h): bad lines counted and skipped,
 * empty input, counts up to UINT64_MAX without overflow, merging, the depth limit, escaping,
 * the order of siblings, the arguments. The layout and the script: tests/scripts/flame_svg.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "etmkit/flame.h"
#include "testutil.h"

typedef struct run {
    int rc;
    ek_flame_stats st;
    ek_sbuf out;
} run;

static run render(const char *in, size_t len, const ek_flame_opts *o)
{
    run r;
    memset(&r, 0, sizeof r);
    r.rc = ek_flame_svg(in, len, o, &r.out, &r.st);
    return r;
}
#define RENDER(s) render((s), sizeof(s) - 1, NULL)

/* The number of times needle occurs in the output. */
static int count_in(const run *r, const char *needle)
{
    int n = 0;
    size_t k = strlen(needle);
    for (const char *p = r->out.p; p && (p = strstr(p, needle)); p += k)
        n++;
    return n;
}

/* The frames' titles, in order, each followed by '\n'. */
static void titles(const run *r, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = 0;
    for (const char *p = r->out.p; p && (p = strstr(p, "<g><title>")) && n < cap;) {
        p += 10;
        const char *e = strstr(p, "</title>");
        assert_non_null(e);
        n += (size_t)snprintf(buf + n, cap - n, "%.*s\n", (int)(e - p), p);
        p = e;
    }
}

static void test_empty_input(void **state)
{
    run r = render(NULL, 0, NULL);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.st.lines, 0);
    assert_int_equal(r.st.stacks, 0);
    assert_int_equal(r.st.bad_lines, 0);
    assert_int_equal(r.st.total, 0);
    assert_int_equal(r.st.frames, 1);
    assert_int_equal(r.st.drawn, 0);
    assert_int_equal(count_in(&r, "No samples"), 1);
    assert_int_equal(count_in(&r, "<g><title>"), 0);
    assert_int_equal(count_in(&r, "</svg>\n"), 1);
    ek_sbuf_free(&r.out);
    /* blank lines only (and a last line without its end): nothing bad, nothing used */
    r = RENDER("\n  \r\n\t\n ");
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.st.lines, 4);
    assert_int_equal(r.st.stacks, 0);
    assert_int_equal(r.st.bad_lines, 0);
    assert_int_equal(count_in(&r, "No samples"), 1);
    ek_sbuf_free(&r.out);
    /* counts of 0 are used but draw nothing */
    r = RENDER("a;b 0\n");
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.st.stacks, 1);
    assert_int_equal(r.st.total, 0);
    assert_int_equal(count_in(&r, "No samples"), 1);
    ek_sbuf_free(&r.out);
}

static void test_bad_lines(void **state)
{
    static const char in[] = "good;one 5\n"
                             "nocount\n"                   /* 2 */
                             "trailing \n"                 /* 3: nothing after the blank */
                             "   7\n"                      /* 4: no frame */
                             "a;;b 5\n"                    /* 5: an empty frame */
                             ";a 5\n"                      /* 6 */
                             "a; 5\n"                      /* 7 */
                             "a 5x\n"                      /* 8 */
                             "a -5\n"                      /* 9 */
                             "a +5\n"                      /* 10 */
                             "a 1.5\n"                     /* 11 */
                             "a 18446744073709551616\n"    /* 12: 2^64 */
                             "a 99999999999999999999999\n" /* 13 */
                             "good;two\t6\r\n"             /* a tab before the count, CRLF */
                             "good;three 7   ";            /* blanks after the count, no line end */
    run r = RENDER(in);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.st.lines, 15);
    assert_int_equal(r.st.stacks, 3);
    assert_int_equal(r.st.bad_lines, 12);
    assert_int_equal(r.st.first_bad_line, 2);
    assert_int_equal(r.st.total, 18);
    assert_int_equal(r.st.frames, 5); /* all, good, one, three, two */
    assert_int_equal(r.st.depth, 2);
    char t[512];
    titles(&r, t, sizeof t);
    assert_string_equal(t, "all (18 instructions, 100.00%)\n"
                           "good (18 instructions, 100.00%)\n"
                           "one (5 instructions, 27.78%)\n"
                           "three (7 instructions, 38.89%)\n"
                           "two (6 instructions, 33.33%)\n");
    ek_sbuf_free(&r.out);

    /* nothing usable: EK_ERR_FORMAT, and what out held is left as it was */
    ek_sbuf out = EK_SBUF_INIT;
    ek_sbuf_puts(&out, "kept");
    ek_flame_stats st;
    assert_int_equal(ek_flame_svg("x\n;1 2\n", 7, NULL, &out, &st), EK_ERR_FORMAT);
    assert_int_equal(st.lines, 2);
    assert_int_equal(st.bad_lines, 2);
    assert_int_equal(st.first_bad_line, 1);
    assert_int_equal(out.len, 4);
    assert_string_equal(out.p, "kept");
    ek_sbuf_free(&out);
}

static void test_huge_counts(void **state)
{
    /* one stack of UINT64_MAX */
    run r = RENDER("a;b 18446744073709551615\n");
    assert_int_equal(r.rc, 0);
    assert_true(r.st.total == UINT64_MAX);
    assert_int_equal(count_in(&r, "<title>b (18,446,744,073,709,551,615 instructions, "
                                  "100.00%)</title><rect x=\"10.00\" y=\"34\" "
                                  "width=\"1180.00\""),
                     1);
    ek_sbuf_free(&r.out);
    /* a line the total cannot hold is bad; the others are used */
    r = RENDER("a 18446744073709551615\nb 1\nc 0\n");
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.st.stacks, 2);
    assert_int_equal(r.st.bad_lines, 1);
    assert_int_equal(r.st.first_bad_line, 2);
    assert_true(r.st.total == UINT64_MAX);
    ek_sbuf_free(&r.out);
    /* halves: 2^63 - 1 and 2^63 add up to UINT64_MAX exactly; merged frames too */
    r = RENDER("x;a 9223372036854775807\nx;b 4611686018427387904\nx;b 4611686018427387904\n");
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.st.bad_lines, 0);
    assert_true(r.st.total == UINT64_MAX);
    char t[512];
    titles(&r, t, sizeof t);
    assert_string_equal(t, "all (18,446,744,073,709,551,615 instructions, 100.00%)\n"
                           "x (18,446,744,073,709,551,615 instructions, 100.00%)\n"
                           "a (9,223,372,036,854,775,807 instructions, 50.00%)\n"
                           "b (9,223,372,036,854,775,808 instructions, 50.00%)\n");
    assert_int_equal(count_in(&r, "<rect x=\"600.00\" y=\"34\" width=\"590.00\""), 1);
    ek_sbuf_free(&r.out);
}

static void test_merge_and_order(void **state)
{
    static const char in[] = "m;b 1\nm;a b c 2\nm;c 4\nm;b 1\nm;a b c;z 1\n";
    run r = RENDER(in);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.st.stacks, 5);
    assert_int_equal(r.st.frames, 6); /* all, m, "a b c", z, b, c */
    char t[512];
    titles(&r, t, sizeof t);
    assert_string_equal(t, "all (9 instructions, 100.00%)\n"
                           "m (9 instructions, 100.00%)\n"
                           "a b c (3 instructions, 33.33%)\n"
                           "z (1 instructions, 11.11%)\n"
                           "b (2 instructions, 22.22%)\n"
                           "c (4 instructions, 44.44%)\n");
    ek_sbuf_free(&r.out);
    ek_flame_opts o = EK_FLAME_OPTS_INIT;
    o.order = EK_FLAME_BY_WEIGHT;
    o.unit = "cycles";
    r = render(in, sizeof in - 1, &o);
    assert_int_equal(r.rc, 0);
    titles(&r, t, sizeof t);
    assert_string_equal(t, "all (9 cycles, 100.00%)\n"
                           "m (9 cycles, 100.00%)\n"
                           "c (4 cycles, 44.44%)\n"
                           "a b c (3 cycles, 33.33%)\n"
                           "z (1 cycles, 11.11%)\n"
                           "b (2 cycles, 22.22%)\n");
    ek_sbuf_free(&r.out);
}

static void test_depth_limit(void **state)
{
    /* EK_FLAME_MAX_DEPTH frames are drawn; one more is a bad line */
    size_t cap = 2 * (EK_FLAME_MAX_DEPTH + 1) + 64, n = 0;
    char *in = malloc(2 * cap);
    assert_non_null(in);
    for (int line = 0; line < 2; line++) {
        for (int i = 0; i < EK_FLAME_MAX_DEPTH + line; i++)
            n += (size_t)sprintf(in + n, "f;");
        n--;
        n += (size_t)sprintf(in + n, " 3\n");
    }
    run r = render(in, n, NULL);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.st.stacks, 1);
    assert_int_equal(r.st.bad_lines, 1);
    assert_int_equal(r.st.first_bad_line, 2);
    assert_int_equal(r.st.depth, EK_FLAME_MAX_DEPTH);
    assert_int_equal(r.st.drawn, EK_FLAME_MAX_DEPTH + 1);
    ek_sbuf_free(&r.out);
    free(in);
}

static void test_escaping(void **state)
{
    /* XML's specials, a NUL, invalid UTF-8 (a lone continuation byte, a truncated sequence, an
     * encoded surrogate), a control character, valid non-ASCII */
    static const char in[] = "<a&b>;\"q'\x00\x80x\xe2\x82;\xed\xa0\x80\x01;d\xc3\xa9j\xc3\xa0 1\n";
    ek_flame_opts o = EK_FLAME_OPTS_INIT;
    o.title = "T<&>";
    o.subtitle = "s\"'";
    run r = render(in, sizeof in - 1, &o);
    assert_int_equal(r.rc, 0);
    char t[512];
    titles(&r, t, sizeof t);
    assert_string_equal(t, "all (1 instructions, 100.00%)\n"
                           "&lt;a&amp;b&gt; (1 instructions, 100.00%)\n"
                           "&quot;q&#39;\xef\xbf\xbd\xef\xbf\xbdx\xef\xbf\xbd (1 instructions, "
                           "100.00%)\n"
                           "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd (1 instructions, "
                           "100.00%)\n"
                           "d\xc3\xa9j\xc3\xa0 (1 instructions, 100.00%)\n");
    assert_int_equal(count_in(&r, ">T&lt;&amp;&gt;</text>"), 1);
    assert_int_equal(count_in(&r, ">s&quot;&#39;</text>"), 1);
    ek_sbuf_free(&r.out);
    /* a long name's label is cut on a character, not in its middle */
    o.width = 80; /* 60 pixels: 7 characters fit */
    static const char lng[] = "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9 1";
    r = render(lng, sizeof lng - 1, &o);
    assert_int_equal(r.rc, 0);
    assert_int_equal(count_in(&r, ">\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9..</text>"), 1);
    ek_sbuf_free(&r.out);
}

static void test_min_width(void **state)
{
    /* 1 of 10^6 is 0.00118 px: not drawn by default, drawn with min_width 0.001 */
    static const char in[] = "m;big 999999\nm;small;smaller 1\n";
    run r = RENDER(in);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.st.frames, 5);
    assert_int_equal(r.st.drawn, 3);
    assert_int_equal(r.st.omitted, 2);
    assert_int_equal(count_in(&r, "<!-- 5 frames, 3 drawn, 2 not drawn (narrower than 0.10 px)"),
                     1);
    ek_sbuf_free(&r.out);
    ek_flame_opts o = EK_FLAME_OPTS_INIT;
    o.min_width = 0.001;
    r = render(in, sizeof in - 1, &o);
    assert_int_equal(r.st.drawn, 5);
    assert_int_equal(r.st.omitted, 0);
    ek_sbuf_free(&r.out);
}

/* Every label of r is what the script makes of its frame at Reset: as many characters as fit
 * in the rect's width attribute (w > 6: floor((w - 6) / 7.08)), the name whole when it fits,
 * else two fewer and "..", none below 3 (names of ASCII letters here). Returns the labels. */
static int check_labels(const run *r)
{
    int labels = 0;
    for (const char *p = r->out.p; (p = strstr(p, "<g><title>")) != NULL; p++) {
        const char *t = p + 10;
        const char *name_end = strstr(t, " (");
        const char *wa = strstr(t, "width=\"");
        const char *g_end = strstr(t, "</g>");
        assert_non_null(name_end);
        assert_non_null(wa);
        assert_non_null(g_end);
        double w = strtod(wa + 7, NULL);
        int fit = w > 6 ? (int)floor((w - 6) / 7.08) : 0;
        int nl = (int)(name_end - t);
        char want[256] = "";
        if (fit >= 3)
            snprintf(want, sizeof want, "%.*s%s", nl <= fit ? nl : fit - 2, t,
                     nl <= fit ? "" : "..");
        const char *x = strstr(t, "<text ");
        char got[256] = "";
        if (x && x < g_end) {
            const char *b = strchr(x, '>') + 1;
            snprintf(got, sizeof got, "%.*s", (int)(strstr(b, "</text>") - b), b);
            labels++;
        }
        assert_string_equal(got, want);
    }
    return labels;
}

/* Labels fit the widths as written: 34.3164 px (written 34.32) fitted 3 characters ("a..")
 * where the written 34.32 fits 4 ("ab..", what Reset showed); and over frames of many widths. */
static void test_labels_fit(void **state)
{
    (void)state;
    static const char in[] = "root;abcdef 34317\nroot;z 1145683\n";
    run r = RENDER(in);
    assert_int_equal(r.rc, 0);
    assert_int_equal(check_labels(&r), 4);
    assert_int_equal(count_in(&r, ">ab..</text>"), 1);
    ek_sbuf_free(&r.out);
    ek_sbuf many = EK_SBUF_INIT;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 40; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        ek_sbuf_printf(&many, "m;f%d%.*s %llu\n", i, (int)(x % 24), "abcdefghijklmnopqrstuvwxyz",
                       (unsigned long long)(1 + (x >> 40) % 5000));
    }
    r = render(many.p, many.len, NULL);
    assert_int_equal(r.rc, 0);
    assert_true(check_labels(&r) >= 15); /* (21 of the 42 frames) */
    ek_sbuf_free(&r.out);
    ek_sbuf_free(&many);
}

static void test_arguments(void **state)
{
    ek_sbuf out = EK_SBUF_INIT;
    ek_flame_opts o = EK_FLAME_OPTS_INIT;
    assert_int_equal(ek_flame_svg(NULL, 3, NULL, &out, NULL), EK_ERR_ARG);
    assert_int_equal(ek_flame_svg("a 1", 3, NULL, NULL, NULL), EK_ERR_ARG);
    o.width = 20;
    assert_int_equal(ek_flame_svg("a 1", 3, &o, &out, NULL), EK_ERR_ARG);
    o.width = 0;
    o.min_width = NAN;
    assert_int_equal(ek_flame_svg("a 1", 3, &o, &out, NULL), EK_ERR_ARG);
    o.min_width = -1;
    assert_int_equal(ek_flame_svg("a 1", 3, &o, &out, NULL), EK_ERR_ARG);
    o.min_width = 0;
    o.order = 2;
    assert_int_equal(ek_flame_svg("a 1", 3, &o, &out, NULL), EK_ERR_ARG);
    assert_int_equal(out.len, 0);
    /* appended to what out holds */
    ek_sbuf_puts(&out, "<!-- before -->\n");
    assert_int_equal(ek_flame_svg("a 1", 3, NULL, &out, NULL), 0);
    assert_int_equal(strncmp(out.p, "<!-- before -->\n<?xml version=\"1.0\"", 35), 0);
    assert_int_equal(strlen(out.p), out.len);
    ek_sbuf_free(&out);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_input), cmocka_unit_test(test_bad_lines),
        cmocka_unit_test(test_huge_counts), cmocka_unit_test(test_merge_and_order),
        cmocka_unit_test(test_depth_limit), cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_min_width),   cmocka_unit_test(test_arguments),
        cmocka_unit_test(test_labels_fit),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
