/* A session over a trace snapshot folder (ek_session_open on examples/etm4-hello): samples with
 * the trace ID as thread, the core's index as CPU, raw time stamps as time; the resolver names
 * the dumps and the source; elements come before the samples made from them; a staged
 * consumer, --itrace=sN and a filter behave as on perf.data, a consumer with a stage is
 * refused (perf recordings only); the account lists the source.
 * And the --image spec parser. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/account.h"
#include "etmkit/etmkit.h"
#include "etmkit/filter.h"
#include "etmkit/image.h"
#include "etmkit/session.h"
#include "testutil.h"

static char *example(void)
{
    const char *src = getenv("ETMKIT_SRC");
    if (!src) return NULL;
    char *p = NULL;
    if (asprintf(&p, "%s/examples/etm4-hello", src) < 0) return NULL;
    return p;
}

typedef struct got {
    size_t samples, elems, elems_before_first;
    ek_sample first, last;
    int bad_thread, no_time;
    char comm[32], dso_ip[4200];
    int unknown_dso_is_null;
    uint8_t code[4];
    size_t code_n;
} got;

static int on_sample(void *ctx, const ek_sample *s, const ek_script_resolver *r)
{
    got *g = ctx;
    if (!g->samples++) {
        g->first = *s;
        g->elems_before_first = g->elems;
        const char *c = r->comm(r->ctx, s);
        snprintf(g->comm, sizeof g->comm, "%s", c ? c : "(null)");
        ek_addr_loc loc;
        r->resolve(r->ctx, s, 0x401004, 1, &loc);
        snprintf(g->dso_ip, sizeof g->dso_ip, "%s", loc.dso ? loc.dso : "(null)");
        r->resolve(r->ctx, s, 0x5000, 1, &loc);
        g->unknown_dso_is_null = loc.dso == NULL && loc.sym == NULL;
        g->code_n = r->code(r->ctx, s, 0x401000, g->code, sizeof g->code);
    }
    g->last = *s;
    if (s->pid != 16 || s->tid != 16 || s->cpu != 0 || s->trace_id != 16 || s->queue != 0)
        g->bad_thread++;
    if (!s->has_time) g->no_time++;
    return 0;
}

static int on_elem(void *ctx, const ek_session_elem *e)
{
    got *g = ctx;
    g->elems++;
    if (e->pid != 16 || e->tid != 16 || e->cpu != 0) g->bad_thread++;
    return 0;
}

static ek_session *open_example(const ek_session_opts *o)
{
    char *ex = example();
    if (!ex) tu_skip("ETMKIT_SRC is not set");
    ek_session *s = NULL;
    assert_int_equal(ek_session_open(ex, o, NULL, &s), 0);
    free(ex);
    assert_non_null(s);
    return s;
}

static void test_samples_and_elements(void **state)
{
    (void)state;
    ek_session_opts o;
    ek_session_opts_init(&o);
    ek_session *s = open_example(&o);
    assert_null(ek_session_file(s)); /* no perf.data behind it */
    got g;
    memset(&g, 0, sizeof g);
    ek_consumer c;
    ek_consumer_init(&c);
    c.ctx = &g;
    c.wants = EK_CONSUME_ELEMS;
    c.sample = on_sample;
    c.elem = on_elem;
    assert_int_equal(ek_session_run(s, &c), 0);
    assert_int_equal(g.samples, 14);
    assert_int_equal(g.bad_thread, 0);
    assert_int_equal(g.no_time, 0); /* TRCCONFIGR.TS: every sample has a time */
    assert_true(g.elems_before_first > 0);
    assert_int_equal(g.first.flags & EK_SF_TRACE_BEGIN, EK_SF_TRACE_BEGIN);
    assert_int_equal(g.first.addr, 0x401000);
    assert_int_equal(g.first.time, 0); /* before the first time stamp */
    assert_int_equal(g.last.flags & EK_SF_TRACE_END, EK_SF_TRACE_END);
    assert_int_equal(g.last.ip, 0x40101c);
    assert_int_equal(g.last.time, 0x5008); /* the raw time stamp */
    assert_string_equal(g.comm, "ETM_0");
    assert_string_equal(g.dso_ip, "user.bin");
    assert_true(g.unknown_dso_is_null);
    assert_int_equal(g.code_n, 4);
    static const uint8_t mov_w19_2[4] = {0x53, 0x00, 0x80, 0x52}; /* mov w19, #2 */
    assert_memory_equal(g.code, mov_w19_2, 4);
    ek_session_stats st;
    ek_session_get_stats(s, &st);
    assert_int_equal(st.samples_branches, 14);
    assert_int_equal(st.instructions, 35);
    assert_int_equal(st.nacc, 0);
    assert_int_equal(ek_session_run(s, &c), EK_ERR_ARG); /* once */
    ek_session_info in;
    ek_session_get_info(s, &in);
    assert_string_equal(in.event_names[0], "branches");
    assert_true(in.samples_have_cpu);
    ek_session_free(s);
}

/* staged: one unit per sample, put in order */
typedef struct staged {
    size_t units, puts;
    uint64_t first_ip;
} staged;

static void st_encode(void *qctx, ek_sbuf *out, const ek_sample *smp, ek_sample_ctx *c)
{
    (void)qctx;
    assert_non_null(c->r);
    ek_sbuf_put(out, (const char *)&smp->ip, sizeof smp->ip);
}

static int st_put(void *ctx, const char *data, size_t len)
{
    staged *t = ctx;
    assert_int_equal(len % sizeof(uint64_t), 0);
    if (!t->units) memcpy(&t->first_ip, data, sizeof t->first_ip);
    t->units += len / sizeof(uint64_t);
    t->puts++;
    return 0;
}

static size_t st_len(void *ctx, const char *data, size_t len)
{
    (void)ctx;
    (void)data;
    return len >= 8 ? 8 : 0;
}

static void run_staged(const ek_session_opts *o, staged *t)
{
    ek_session *s = open_example(o);
    memset(t, 0, sizeof *t);
    ek_consumer c;
    ek_consumer_init(&c);
    c.ctx = t;
    c.encode = st_encode;
    c.put = st_put;
    c.unit_len = st_len;
    assert_int_equal(ek_session_run(s, &c), 0);
    ek_session_free(s);
}

static void test_staged_skip_filter(void **state)
{
    (void)state;
    ek_session_opts o;
    ek_session_opts_init(&o);
    staged t;
    run_staged(&o, &t);
    assert_int_equal(t.units, 14);
    assert_int_equal(t.first_ip, 0); /* the trace begin */
    assert_int_equal(ek_itrace_parse("bs3", &o.itrace, NULL), 0);
    run_staged(&o, &t);
    assert_int_equal(t.units, 11);
    assert_int_equal(t.first_ip, 0x40100c); /* the fourth sample: the loop's b.ne */
    ek_session_opts_init(&o);
    ek_sample_filter f;
    memset(&f, 0, sizeof f);
    assert_int_equal(ek_sample_filter_tids(&f, "17", NULL), 0);
    o.filter = &f;
    run_staged(&o, &t);
    assert_int_equal(t.units, 0);
    ek_sample_filter_free(&f);
    memset(&f, 0, sizeof f);
    assert_int_equal(ek_sample_filter_tids(&f, "16", NULL), 0);
    o.filter = &f;
    run_staged(&o, &t);
    assert_int_equal(t.units, 14);
    ek_sample_filter_free(&f);
}

/* A snapshot has no perf recording's queues to stage on: a consumer with a stage is refused,
 * and the session still runs for one without. */
static int never_stage(void *qctx, const ek_sample *smp, ek_sample_ctx *c)
{
    (void)qctx;
    (void)smp;
    (void)c;
    fail_msg("a snapshot session staged a sample");
    return 0;
}

static void test_stage_refused(void **state)
{
    (void)state;
    ek_session_opts o;
    ek_session_opts_init(&o);
    ek_session *s = open_example(&o);
    got g;
    memset(&g, 0, sizeof g);
    ek_consumer c;
    ek_consumer_init(&c);
    c.ctx = &g;
    c.sample = on_sample;
    c.stage = never_stage;
    assert_int_equal(ek_session_run(s, &c), EK_ERR_ARG);
    assert_int_equal(g.samples, 0);
    c.stage = NULL;
    assert_int_equal(ek_session_run(s, &c), 0);
    assert_int_equal(g.samples, 14);
    ek_session_free(s);
}

static void test_account(void **state)
{
    (void)state;
    ek_session_opts o;
    ek_session_opts_init(&o);
    ek_session *s = open_example(&o);
    assert_int_equal(ek_session_samples(s, NULL, NULL), 0);
    ek_account *a = NULL;
    assert_int_equal(ek_session_account(s, &a), 0);
    assert_true(a->trace_snapshot);
    assert_int_equal(a->ncpus, 1);
    assert_int_equal(a->nsources, 1);
    const ek_account_source *x = &a->sources[0];
    assert_string_equal(x->name, "ETM_0");
    assert_string_equal(x->buffer, "ETR_0");
    assert_string_equal(x->core, "cpu_0");
    assert_int_equal(x->trace_id, 0x10);
    assert_int_equal(x->protocol, EK_PROTO_ETMV4);
    assert_int_equal(x->cpu, 0);
    assert_int_equal(x->bytes, 97);
    assert_int_equal(x->instructions, 35);
    assert_int_equal(x->samples, 14);
    assert_int_equal(x->nacc + x->sync_losses + x->errors, 0);
    assert_true(x->time_stamps); /* TRCCONFIGR.TS */
    assert_false(a->timeless);
    for (size_t i = 0; i < a->nitems; i++)
        assert_false(a->items[i].problem);
    ek_account_free(a);
    ek_session_free(s);
}

/* an image over the dump: raw bytes laid over user.bin at 0x401000 win */
static void test_image_over_dump(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    static const uint8_t zeros[64];
    char *f = tu_write_file(dir, "zeros.bin", zeros, sizeof zeros);
    ek_image_spec sp;
    char arg[4200];
    snprintf(arg, sizeof arg, "%s@0x401000", f);
    assert_int_equal(ek_image_spec_parse(arg, &sp, NULL), 0);
    ek_session_opts o;
    ek_session_opts_init(&o);
    o.images = &sp;
    o.nimages = 1;
    ek_session *s = open_example(&o);
    got g;
    memset(&g, 0, sizeof g);
    assert_int_equal(ek_session_samples(s, on_sample, &g), 0);
    assert_int_equal(g.code_n, 4);
    static const uint8_t z4[4];
    assert_memory_equal(g.code, z4, 4);
    assert_string_equal(g.dso_ip, f); /* the image names the DSO */
    ek_session_stats st;
    ek_session_get_stats(s, &st);
    assert_true(st.nacc > 0 || st.samples_branches != 14); /* zeros are no code */
    ek_session_free(s);
    ek_image_spec_free(&sp);
    free(f);
    tu_rmtree(dir);
    free(dir);
}

static void test_spec_parse(void **state)
{
    (void)state;
    ek_image_spec sp;
    ek_sbuf err = EK_SBUF_INIT;
    assert_int_equal(ek_image_spec_parse("prog.bin@0x4000", &sp, &err), 0);
    assert_string_equal(sp.path, "prog.bin");
    assert_true(sp.has_addr);
    assert_int_equal(sp.addr, 0x4000);
    ek_image_spec_free(&sp);
    assert_int_equal(ek_image_spec_parse("a@b.elf@4096", &sp, &err), 0); /* the last '@' */
    assert_string_equal(sp.path, "a@b.elf");
    assert_int_equal(sp.addr, 4096);
    ek_image_spec_free(&sp);
    assert_int_equal(ek_image_spec_parse("prog.elf", &sp, &err), 0);
    assert_string_equal(sp.path, "prog.elf");
    assert_false(sp.has_addr);
    ek_image_spec_free(&sp);
    assert_int_equal(ek_image_spec_parse("@0x10", &sp, &err), EK_ERR_ARG);
    assert_int_equal(ek_image_spec_parse("x@", &sp, &err), EK_ERR_ARG);
    assert_int_equal(ek_image_spec_parse("x@0x1g", &sp, &err), EK_ERR_ARG);
    assert_int_equal(ek_image_spec_parse("x@-1", &sp, &err), EK_ERR_ARG);
    assert_int_equal(ek_image_spec_parse("", &sp, &err), EK_ERR_ARG);
    assert_non_null(strstr(err.p, "not an address"));
    ek_sbuf_free(&err);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_samples_and_elements),
        cmocka_unit_test(test_staged_skip_filter),
        cmocka_unit_test(test_stage_refused),
        cmocka_unit_test(test_account),
        cmocka_unit_test(test_image_over_dump),
        cmocka_unit_test(test_spec_parse),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
