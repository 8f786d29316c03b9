/* The whole listing of a perf.data file through the library (ek_perf_dumper,
 * etmkit/perf_dump.h), on `etmkit gen --scenario basic`: the sections in order with their
 * headings (text), one JSON document whose "diagnostics" hold what the file was read with
 * (a truncated copy), the trace with packets, the write function's failure, refused options. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/perf_dump.h"
#include "etmkit/sim.h"
#include "testutil.h"

static char *dir, *data;

static int setup(void **state)
{
    (void)state;
    dir = tu_tmpdir();
    if (!dir) return -1;
    ek_sim_opts o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.scenario = "basic";
    o.seed = 1;
    o.outdir = dir;
    ek_sim_result r;
    if (ek_sim_run(&o, &r)) return -1;
    if (asprintf(&data, "%s/perf.data", dir) < 0) return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_rmtree(dir);
    free(dir);
    free(data);
    return 0;
}

static int to_sbuf(void *ctx, const char *text, size_t len)
{
    ek_sbuf_put(ctx, text, len);
    return 0;
}

static int counted;
static void count_diag(void *ctx, const ek_diag_event *ev)
{
    (void)ctx;
    (void)ev;
    counted++;
}

/* The listing of the file at path with opts o (write set here); returns the run's status. */
static int dump(const char *path, ek_perf_dump_opts *o, ek_sbuf *out)
{
    o->write = to_sbuf;
    o->write_ctx = out;
    ek_perf_dumper *d = NULL;
    assert_int_equal(ek_perf_dumper_new(o, &d), 0);
    ek_perf_file *f = NULL;
    ek_perf_queues *q = NULL;
    int rc = ek_perf_open(path, ek_perf_dumper_diag(d), &f);
    if (!rc && ek_perf_dumper_wants_queues(d))
        rc = ek_perf_queues_new(f, ek_perf_dumper_diag(d), &q);
    if (!rc) rc = ek_perf_dumper_run(d, f, q);
    ek_perf_queues_free(q);
    ek_perf_free(f);
    ek_perf_dumper_free(d);
    return rc;
}

static void test_text_sections(void **state)
{
    (void)state;
    ek_perf_dump_opts o;
    ek_perf_dump_opts_init(&o);
    ek_sbuf out = EK_SBUF_INIT;
    assert_int_equal(dump(data, &o, &out), 0);
    /* every section, in order, each after its heading */
    const char *rec = strstr(out.p, "\n# records\n");
    const char *cfg = strstr(out.p, "\n# cs_etm configuration\n");
    const char *aux = strstr(out.p, "\n# AUX slices\n");
    assert_non_null(rec);
    assert_non_null(cfg);
    assert_non_null(aux);
    assert_true(out.p < rec && rec < cfg && cfg < aux);
    ek_sbuf_free(&out);

    /* the records alone, headed as the first section */
    ek_perf_dump_opts_init(&o);
    o.sections = EK_PERF_DUMP_RECORDS;
    assert_int_equal(dump(data, &o, &out), 0);
    assert_memory_equal(out.p, "# records\n", 10);
    assert_null(strstr(out.p, "# AUX slices"));
    ek_sbuf_free(&out);

    /* with the trace: the records, and the packets of each slice among them */
    ek_perf_dump_opts_init(&o);
    o.packets = 1;
    ek_perf_dumper *d = NULL;
    assert_int_equal(ek_perf_dumper_new(&o, &d), 0);
    assert_true(ek_perf_dumper_wants_queues(d));
    ek_perf_dumper_free(d);
    ek_sbuf plain = EK_SBUF_INIT;
    ek_perf_dump_opts_init(&o);
    o.sections = EK_PERF_DUMP_RECORDS;
    assert_int_equal(dump(data, &o, &plain), 0);
    ek_perf_dump_opts_init(&o);
    o.packets = 1;
    assert_int_equal(dump(data, &o, &out), 0);
    assert_true(out.len > plain.len);
    assert_non_null(strstr(out.p, "\tIdx:"));
    ek_sbuf_free(&plain);
    ek_sbuf_free(&out);
}

static void test_json_document_and_diagnostics(void **state)
{
    (void)state;
    /* a copy cut in the middle of its records */
    FILE *in = fopen(data, "rb");
    assert_non_null(in);
    fseek(in, 0, SEEK_END);
    long size = ftell(in);
    fseek(in, 0, SEEK_SET);
    char *bytes = malloc((size_t)size);
    assert_int_equal(fread(bytes, 1, (size_t)size, in), (size_t)size);
    fclose(in);
    char *cut = tu_write_file(dir, "cut.data", bytes, (size_t)size / 2);
    free(bytes);

    ek_perf_dump_opts o;
    ek_perf_dump_opts_init(&o);
    o.format = EK_PERF_DUMP_JSON;
    ek_diag next = {count_diag, NULL};
    o.diag = &next;
    counted = 0;
    ek_sbuf out = EK_SBUF_INIT;
    /* (damage is reported, and what can be read is listed) */
    assert_int_equal(dump(cut, &o, &out), 0);
    assert_non_null(out.p);
    assert_int_equal(out.p[0], '{');
    assert_memory_equal(out.p + out.len - 2, "}\n", 2);
    /* the problems the reader found are in the document, and went on to the caller's sink */
    assert_true(counted > 0);
    const char *dg = strstr(out.p, "\"diagnostics\":[\n{\"severity\":");
    assert_non_null(dg);
    assert_non_null(strstr(dg, "\"kind\":\"perf.truncated\""));
    assert_non_null(strstr(out.p, "\"diagnostics_dropped\":0}\n"));
    /* the order of the members */
    const char *hdr = strstr(out.p, "\"header\"");
    const char *recs = strstr(out.p, "\"records\":[");
    const char *qs = strstr(out.p, "\"queues\":[");
    assert_non_null(hdr);
    assert_non_null(recs);
    assert_non_null(qs);
    assert_true(hdr < recs && recs < qs && qs < dg);
    ek_sbuf_free(&out);

    /* the whole file: no diagnostics */
    counted = 0;
    assert_int_equal(dump(data, &o, &out), 0);
    assert_non_null(strstr(out.p, "\"diagnostics\":[],\n\"diagnostics_dropped\":0}\n"));
    assert_int_equal(counted, 0);
    ek_sbuf_free(&out);
    free(cut);
}

static int fail_write(void *ctx, const char *text, size_t len)
{
    (void)ctx;
    (void)text;
    (void)len;
    return -1;
}

static void test_errors(void **state)
{
    (void)state;
    ek_perf_dump_opts o;
    ek_perf_dump_opts_init(&o);
    ek_perf_dumper *d = NULL;
    o.size = 4; /* of a version the library does not know */
    assert_int_equal(ek_perf_dumper_new(&o, &d), EK_ERR_ARG);
    assert_null(d);
    ek_perf_dump_opts_init(&o);
    o.format = (ek_perf_dump_format)7;
    assert_int_equal(ek_perf_dumper_new(&o, &d), EK_ERR_ARG);

    /* the slices need the queues */
    ek_perf_dump_opts_init(&o);
    assert_int_equal(ek_perf_dumper_new(&o, &d), 0);
    ek_perf_file *f = NULL;
    assert_int_equal(ek_perf_open(data, ek_perf_dumper_diag(d), &f), 0);
    assert_int_equal(ek_perf_dumper_run(d, f, NULL), EK_ERR_ARG);
    ek_perf_dumper_free(d);

    /* a write that fails */
    o.write = fail_write;
    o.sections = EK_PERF_DUMP_HEADER;
    assert_int_equal(ek_perf_dumper_new(&o, &d), 0);
    assert_int_equal(ek_perf_dumper_run(d, f, NULL), EK_ERR_IO);
    ek_perf_dumper_free(d);
    ek_perf_free(f);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_sections),
        cmocka_unit_test(test_json_document_and_diagnostics),
        cmocka_unit_test(test_errors),
    };
    return tu_run_group(argc, argv, tests, setup, teardown);
}
