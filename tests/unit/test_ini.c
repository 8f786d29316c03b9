#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/diag.h"
#include "etmkit/ini.h"
#include "testutil.h"

/* A sink that records events for inspection. */
typedef struct rec {
    int n;
    char kind[16][48];
    int64_t line[16];
    int64_t off[16];
    int sev[16];
} rec;

static void rec_fn(void *ctx, const ek_diag_event *ev)
{
    rec *r = ctx;
    if (r->n < 16) {
        snprintf(r->kind[r->n], sizeof r->kind[0], "%s", ev->kind);
        r->line[r->n] = ev->record;
        r->off[r->n] = ev->offset;
        r->sev[r->n] = ev->sev;
    }
    r->n++;
}

static ek_ini *parse(const char *text, rec *r)
{
    ek_diag d = {rec_fn, r};
    ek_ini *ini = NULL;
    assert_int_equal(ek_ini_parse(text, strlen(text), "t.ini", &d, &ini), 0);
    assert_non_null(ini);
    return ini;
}

static void test_sections_keys_order(void **state)
{
    rec r = {0};
    ek_ini *ini = parse("[snapshot]\nversion=1.0\n\n[device_list]\ndevice0=cpu_0.ini\n"
                        "device1=ETM_0.ini\n[trace]\nmetadata=trace.ini\n",
                        &r);
    assert_int_equal(r.n, 0);
    assert_int_equal(ini->nsec, 3);
    assert_string_equal(ini->sec[0].name, "snapshot");
    assert_string_equal(ini->sec[1].name, "device_list");
    assert_string_equal(ini->sec[2].name, "trace");
    assert_int_equal(ini->sec[1].nkv, 2);
    assert_string_equal(ini->sec[1].kv[0].key, "device0");
    assert_string_equal(ini->sec[1].kv[1].value, "ETM_0.ini");
    assert_int_equal(ini->sec[1].kv[1].line, 6);
    assert_int_equal(ini->sec[2].line, 7);
    assert_string_equal(ek_ini_lookup(ini, "trace", "metadata"), "trace.ini");
    assert_null(ek_ini_lookup(ini, "trace", "nothing"));
    assert_null(ek_ini_lookup(ini, "nothing", "metadata"));
    ek_ini_free(ini);
}

static void test_whitespace_case_comments(void **state)
{
    rec r = {0};
    ek_ini *ini = parse("; DS-5 snapshot\n# hash comment\n  [ Device ]  \n"
                        "\tName \t=  ETM_0  \n"
                        "type=ETM4   ; trailing comment\n"
                        "class = trace_source# another\n"
                        "empty =\n"
                        "   ; indented comment\n",
                        &r);
    assert_int_equal(r.n, 0);
    assert_int_equal(ini->nsec, 1);
    const ek_ini_section *s = ek_ini_section_find(ini, "DEVICE");
    assert_non_null(s);
    assert_string_equal(s->name, "Device");
    assert_string_equal(ek_ini_get(s, "name"), "ETM_0");
    assert_string_equal(ek_ini_get(s, "NAME"), "ETM_0");
    assert_string_equal(ek_ini_get(s, "Type"), "ETM4");
    assert_string_equal(ek_ini_get(s, "class"), "trace_source");
    assert_string_equal(ek_ini_get(s, "empty"), "");
    assert_int_equal(s->nkv, 4);
    ek_ini_free(ini);
}

static void test_crlf_and_bom(void **state)
{
    rec r = {0};
    ek_ini *ini = parse("\xEF\xBB\xBF[a]\r\nk=v\r\n\r\n[b]\r\nx = 1 \r\ny=2", &r);
    assert_int_equal(r.n, 0);
    assert_int_equal(ini->nsec, 2);
    assert_string_equal(ini->sec[0].name, "a");
    assert_string_equal(ek_ini_lookup(ini, "a", "k"), "v");
    assert_string_equal(ek_ini_lookup(ini, "b", "x"), "1");
    assert_string_equal(ek_ini_lookup(ini, "b", "y"), "2"); /* no final newline */
    assert_int_equal(ini->sec[1].kv[1].line, 6);
    ek_ini_free(ini);
}

static void test_repeated_keys_and_sections(void **state)
{
    rec r = {0};
    ek_ini *ini = parse("[core_trace_sources]\ncpu_0=ETE_0_s1\nCPU_0=ETE_0_s2\ncpu_1=X\n"
                        "[dump]\nfile=a\n[dump]\nfile=b\n",
                        &r);
    assert_int_equal(r.n, 0);
    const ek_ini_section *s = ek_ini_section_find(ini, "core_trace_sources");
    size_t pos = 0;
    const ek_ini_kv *kv = ek_ini_find_next(s, "cpu_0", &pos);
    assert_string_equal(kv->value, "ETE_0_s1");
    kv = ek_ini_find_next(s, "cpu_0", &pos);
    assert_string_equal(kv->value, "ETE_0_s2");
    assert_null(ek_ini_find_next(s, "cpu_0", &pos));
    assert_string_equal(ek_ini_get(s, "cpu_0"), "ETE_0_s1");
    const ek_ini_section *d = ek_ini_section_find(ini, "dump");
    assert_string_equal(ek_ini_get(d, "file"), "a");
    d = ek_ini_next_section(ini, d);
    assert_non_null(d);
    assert_string_equal(ek_ini_get(d, "file"), "b");
    assert_null(ek_ini_next_section(ini, d));
    ek_ini_free(ini);
}

static void test_malformed_lines(void **state)
{
    rec r = {0};
    const char *text = "orphan=1\n"       /* line 1: key outside a section */
                       "[ok]\n"           /* 2 */
                       "a=1\n"            /* 3 */
                       "no equals here\n" /* 4 */
                       "= novalue\n"      /* 5 */
                       "b=2\n"            /* 6 */
                       "[broken\n"        /* 7: unterminated */
                       "c=3\n"            /* 8: dropped with the header */
                       "[next]\n"         /* 9 */
                       "d=4\n";           /* 10 */
    ek_ini *ini = parse(text, &r);
    assert_int_equal(r.n, 4);
    assert_int_equal(ini->nmalformed, 4);
    int64_t lines[] = {1, 4, 5, 7};
    for (int i = 0; i < 4; i++) {
        assert_string_equal(r.kind[i], "ini.malformed-line");
        assert_int_equal(r.line[i], lines[i]);
        assert_int_equal(r.sev[i], EK_SEV_WARN);
    }
    assert_int_equal(r.off[0], 0);
    assert_int_equal(r.off[1], (int64_t)(strstr(text, "no equals") - text));
    assert_int_equal(r.off[3], (int64_t)(strstr(text, "[broken") - text));
    assert_int_equal(ini->nsec, 2);
    assert_string_equal(ek_ini_lookup(ini, "ok", "a"), "1");
    assert_string_equal(ek_ini_lookup(ini, "ok", "b"), "2");
    assert_int_equal(ini->sec[0].nkv, 2);
    assert_null(ek_ini_lookup(ini, "ok", "c"));
    assert_string_equal(ek_ini_lookup(ini, "next", "d"), "4");
    ek_ini_free(ini);

    /* A NUL byte inside a line. */
    rec r2 = {0};
    ek_diag d = {rec_fn, &r2};
    static const char withnul[] = "[s]\nk=a\0b\nz=1\n";
    assert_int_equal(ek_ini_parse(withnul, sizeof withnul - 1, "n.ini", &d, &ini), 0);
    assert_int_equal(r2.n, 1);
    assert_int_equal(r2.line[0], 2);
    assert_null(ek_ini_lookup(ini, "s", "k"));
    assert_string_equal(ek_ini_lookup(ini, "s", "z"), "1");
    ek_ini_free(ini);
}

static void test_long_lines_no_limits(void **state)
{
    /* A 1 MiB value and 20000 keys: nothing is truncated. */
    size_t vlen = 1 << 20;
    size_t cap = vlen + 20000 * 24 + 64;
    char *t = malloc(cap);
    size_t n = (size_t)sprintf(t, "[big]\nv=");
    memset(t + n, 'x', vlen);
    n += vlen;
    t[n++] = '\n';
    for (int i = 0; i < 20000; i++)
        n += (size_t)sprintf(t + n, "key%d=%d\n", i, i);
    rec r = {0};
    ek_diag d = {rec_fn, &r};
    ek_ini *ini = NULL;
    assert_int_equal(ek_ini_parse(t, n, "big.ini", &d, &ini), 0);
    assert_int_equal(r.n, 0);
    assert_int_equal(strlen(ek_ini_lookup(ini, "big", "v")), vlen);
    assert_int_equal(ini->sec[0].nkv, 20001);
    assert_string_equal(ek_ini_lookup(ini, "big", "key19999"), "19999");
    ek_ini_free(ini);
    free(t);
}

static void test_empty_and_load(void **state)
{
    rec r = {0};
    ek_ini *ini = parse("", &r);
    assert_int_equal(ini->nsec, 0);
    ek_ini_free(ini);
    ini = parse("[]\n=\n", &r);
    assert_int_equal(ini->nsec, 1);
    assert_string_equal(ini->sec[0].name, "");
    assert_int_equal(r.n, 1);
    ek_ini_free(ini);

    char *dir = tu_tmpdir();
    char *p = tu_write_file(dir, "x.ini", "[a]\nk=v\n", 8);
    assert_int_equal(ek_ini_load(p, NULL, &ini), 0);
    assert_string_equal(ini->path, p);
    assert_string_equal(ek_ini_lookup(ini, "A", "K"), "v");
    ek_ini_free(ini);
    char *missing = malloc(strlen(dir) + 16);
    sprintf(missing, "%s/none.ini", dir);
    assert_int_equal(ek_ini_load(missing, NULL, &ini), EK_ERR_IO);
    assert_null(ini);
    free(missing);
    free(p);
    tu_rmtree(dir);
    free(dir);
}

static void test_parse_u64(void **state)
{
    uint64_t v = 0;
    assert_true(ek_ini_parse_u64("0x000000C1", &v));
    assert_int_equal(v, 0xC1);
    assert_true(ek_ini_parse_u64(" 0xFFFFFFFFFFFFFFFF ", &v));
    assert_true(v == UINT64_MAX);
    assert_true(ek_ini_parse_u64("0", &v));
    assert_int_equal(v, 0);
    assert_true(ek_ini_parse_u64("42", &v));
    assert_int_equal(v, 42);
    assert_true(ek_ini_parse_u64("\"0x10\"", &v));
    assert_int_equal(v, 0x10);
    assert_true(ek_ini_parse_u64("010", &v)); /* strtoul base 0, as the reference parser */
    assert_int_equal(v, 8);
    assert_false(ek_ini_parse_u64("0x", &v));
    assert_false(ek_ini_parse_u64("", &v));
    assert_false(ek_ini_parse_u64("12abc", &v));
    assert_false(ek_ini_parse_u64("-1", &v));
    assert_false(ek_ini_parse_u64("0x1FFFFFFFFFFFFFFFF", &v));
    assert_false(ek_ini_parse_u64(NULL, &v));
}

/* Random bytes (with INI-ish characters mixed in) never crash or leak; every pair points
 * at a non-empty key. */
static void test_garbage(void **state)
{
    uint32_t seed = 99;
    static const char alpha[] = "[]=;#\r\n \tab0x\0\xff";
    for (int round = 0; round < 300; round++) {
        char buf[2048];
        size_t n = (size_t)(seed % sizeof buf);
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            buf[i] =
                (seed >> 20) & 1 ? alpha[(seed >> 8) % (sizeof alpha - 1)] : (char)(seed >> 12);
        }
        seed = seed * 1103515245u + 12345u;
        ek_ini *ini = NULL;
        assert_int_equal(ek_ini_parse(buf, n, "g.ini", NULL, &ini), 0);
        for (size_t i = 0; i < ini->nsec; i++)
            for (size_t k = 0; k < ini->sec[i].nkv; k++)
                assert_true(ini->sec[i].kv[k].key[0] != 0);
        ek_ini_free(ini);
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sections_keys_order),
        cmocka_unit_test(test_whitespace_case_comments),
        cmocka_unit_test(test_crlf_and_bom),
        cmocka_unit_test(test_repeated_keys_and_sections),
        cmocka_unit_test(test_malformed_lines),
        cmocka_unit_test(test_long_lines_no_limits),
        cmocka_unit_test(test_empty_and_load),
        cmocka_unit_test(test_parse_u64),
        cmocka_unit_test(test_garbage),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
