/* The session's account as data (etmkit/account.h) and its renderers (etmkit/account_out.h):
 *  - on `etmkit gen` recordings, the account holds the facts the doctor words: another build of
 *    a library (buildid-mismatch: its two build-ids, the symfs remedy), JIT code whose jitdump
 *    is missing (jit-reuse without symfs: the recorded jitdump, the jitdump-copy remedy); the
 *    code items count every ADDR_NACC element the session counted; items come in the doctor's
 *    order (AUX, code by bytes lost, modules, gaps, diagnostics by offset);
 *  - ek_session_report is ek_account_text of ek_session_account;
 *  - the renderers need no session: an account a program builds (or filters) is worded the
 *    same way (AUX records without data: 8 listed, then "... and N more"; --verbose all; the
 *    summary counts those that are problems, not snapshot mode's overwritten ones, and names
 *    the earliest in the file). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/account.h"
#include "etmkit/account_out.h"
#include "etmkit/etmkit.h"
#include "etmkit/session.h"
#include "etmkit/sim.h"
#include "testutil.h"

static int discard(void *ctx, const ek_sample *s, const ek_script_resolver *r)
{
    (void)ctx;
    (void)s;
    (void)r;
    return 0;
}

typedef struct rec {
    char *dir, *data, *symfs;
} rec;

static void make(rec *r, const char *scenario)
{
    r->dir = tu_tmpdir();
    assert_non_null(r->dir);
    ek_sim_opts o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.scenario = scenario;
    o.seed = 1;
    o.outdir = r->dir;
    ek_sim_result res;
    assert_int_equal(ek_sim_run(&o, &res), 0);
    assert_true(asprintf(&r->data, "%s/perf.data", r->dir) > 0);
    assert_true(asprintf(&r->symfs, "%s/symfs", r->dir) > 0);
}

static void unmake(rec *r)
{
    tu_rmtree(r->dir);
    free(r->dir);
    free(r->data);
    free(r->symfs);
}

/* Decoded with symfs or without (and an empty build-id cache: only symfs counts). */
static ek_session *run(const rec *r, int with_symfs)
{
    ek_session_opts o;
    ek_session_opts_init(&o);
    o.symfs = with_symfs ? r->symfs : NULL;
    o.buildid_dir = r->dir; /* holds no .build-id */
    ek_session *s = NULL;
    assert_int_equal(ek_session_open(r->data, &o, NULL, &s), 0);
    assert_int_equal(ek_session_samples(s, discard, NULL), 0);
    return s;
}

/* Order, counts and the renderers' agreement, on any account. */
static void check_common(ek_session *s, const ek_account *a)
{
    ek_session_stats st;
    ek_session_get_stats(s, &st);
    assert_true(a->ran);
    assert_memory_equal(&a->stats, &st, sizeof st);
    assert_int_equal(a->problems, ek_session_problems(s));
    /* the doctor's order: AUX and LOST first, then code, module relocations, gaps, diagnostics */
    static const int rank[EK_ACCT_NKINDS] = {
        [EK_ACCT_AUX_NO_DATA] = 0, [EK_ACCT_AUX_OVERWRITTEN] = 0, [EK_ACCT_AUX_CLIPPED] = 0,
        [EK_ACCT_AUX_TRUNCATED] = 0, [EK_ACCT_AUX_REFUSED] = 0, [EK_ACCT_AUX_COLLISION] = 0,
        [EK_ACCT_AUX_PARTIAL] = 0, [EK_ACCT_LOST] = 0, [EK_ACCT_CODE] = 1,
        [EK_ACCT_KMOD_RELOCS] = 2, [EK_ACCT_GAP] = 3, [EK_ACCT_DIAG] = 4};
    uint64_t nacc = 0, last_bytes = UINT64_MAX, last_off = 0;
    int last_rank = 0;
    for (size_t i = 0; i < a->nitems; i++) {
        const ek_account_item *it = &a->items[i];
        assert_true(it->kind >= 0 && it->kind < EK_ACCT_NKINDS);
        assert_true(rank[it->kind] >= last_rank);
        last_rank = rank[it->kind];
        if (it->kind == EK_ACCT_CODE) {
            nacc += it->count;
            assert_true(it->bytes <= last_bytes); /* the biggest losses first */
            last_bytes = it->bytes;
            assert_true(it->lo <= it->hi);
        }
        if (it->kind == EK_ACCT_DIAG) {
            assert_non_null(it->diag);
            assert_string_not_equal(it->diag->kind, "perf.aux-no-data");
            assert_int_equal(it->problem, it->diag->sev >= EK_SEV_WARN);
            uint64_t off = (uint64_t)it->diag->example_offset; /* none (-1): last */
            assert_true(off >= last_off);
            last_off = off;
        }
    }
    assert_int_equal(nacc, st.nacc);
    /* the session's report is the account's text, at every level */
    for (int level = EK_REPORT_SUMMARY; level <= EK_REPORT_VERBOSE; level++) {
        ek_sbuf x = EK_SBUF_INIT, y = EK_SBUF_INIT;
        ek_session_report(s, &x, level);
        ek_account_text(a, &y, level);
        assert_int_equal(x.len, y.len);
        if (x.len) assert_memory_equal(x.p, y.p, x.len);
        ek_sbuf_free(&x);
        ek_sbuf_free(&y);
    }
}

static void test_buildid_mismatch(void **state)
{
    (void)state;
    rec r;
    make(&r, "buildid-mismatch");
    ek_session *s = run(&r, 1);
    ek_account *a = NULL;
    assert_int_equal(ek_session_account(s, &a), 0);
    check_common(s, a);
    const ek_account_item *hit = NULL;
    for (size_t i = 0; i < a->nitems; i++)
        if (a->items[i].kind == EK_ACCT_CODE && a->items[i].dso &&
            a->items[i].dso->status == EK_ACCT_FILE_BUILD_ID_MISMATCH)
            hit = &a->items[i];
    assert_non_null(hit);
    assert_true(hit->problem);
    assert_int_equal(hit->code, EK_ACCT_CODE_DSO);
    assert_int_equal(hit->remedy, EK_REMEDY_SYMFS);
    assert_string_equal(hit->dso->name, "/usr/lib/libsima.so");
    assert_int_equal(hit->dso->kind, EK_ACCT_DSO_USER);
    assert_true(hit->dso->build_id_len > 0 && hit->dso->found_id_len > 0);
    assert_memory_not_equal(hit->dso->build_id, hit->dso->found_id, hit->dso->build_id_len);
    assert_true(hit->pid > 0 && hit->count > 0 && hit->bytes > 0 && hit->first_offset > 0);
    assert_null(hit->jit);
    /* its words name both build-ids and the remedy */
    ek_sbuf t = EK_SBUF_INIT;
    ek_account_item_text(a, hit, &t, EK_REPORT_FULL);
    assert_non_null(strstr(t.p, "has build-id "));
    assert_non_null(strstr(t.p, ", the recording says "));
    assert_non_null(strstr(t.p, "    remedy: put the file at <DIR>/usr/lib/libsima.so"));
    ek_sbuf_free(&t);
    ek_account_free(a);
    ek_session_free(s);
    unmake(&r);
}

static void test_jit_without_symfs(void **state)
{
    (void)state;
    rec r;
    make(&r, "jit-reuse");
    ek_session *s = run(&r, 0);
    ek_account *a = NULL;
    assert_int_equal(ek_session_account(s, &a), 0);
    check_common(s, a);
    const ek_account_item *jit = NULL, *file = NULL;
    for (size_t i = 0; i < a->nitems; i++) {
        const ek_account_item *it = &a->items[i];
        if (it->kind != EK_ACCT_CODE) continue;
        if (it->jit) jit = it;
        else if (it->dso && it->dso->status == EK_ACCT_FILE_NOT_FOUND) file = it;
    }
    assert_non_null(jit);
    assert_non_null(file);
    assert_int_equal(jit->dso->kind, EK_ACCT_DSO_ANON);
    assert_true(jit->jit->mapped);
    assert_false(jit->jit->read);
    assert_non_null(jit->jit->recorded);
    assert_non_null(strstr(jit->jit->recorded, "/jit-"));
    assert_true(jit->jit->record >= 0);
    assert_int_equal(jit->remedy, EK_REMEDY_JIT_COPY);
    assert_int_equal(file->remedy, EK_REMEDY_SYMFS);
    ek_account_free(a);
    ek_session_free(s);
    unmake(&r);
}

/* An account made by hand: the renderers use nothing else. */
static void test_render_built(void **state)
{
    (void)state;
    ek_account_aux aux[11];
    for (int i = 0; i < 11; i++) {
        aux[i].record = 10 + i;
        aux[i].offset = 0x1000 + 0x100 * (uint64_t)(10 - i); /* the last is earliest */
        aux[i].cpu = i % 2;
        aux[i].aux_offset = 0x4000 * (uint64_t)i;
        aux[i].aux_size = 0x4000;
        aux[i].overwritten = i == 3; /* one note */
    }
    ek_account_item items[2];
    memset(items, 0, sizeof items);
    items[0].kind = EK_ACCT_AUX_NO_DATA;
    items[0].problem = 1;
    items[0].remedy = EK_REMEDY_RECORD_AGAIN;
    items[0].count = 10;
    items[0].bytes = 10 * 0x4000;
    items[0].first_offset = -1;
    items[1].kind = EK_ACCT_AUX_OVERWRITTEN;
    items[1].count = 1;
    items[1].bytes = 0x4000;
    items[1].first_offset = -1;
    ek_account a;
    memset(&a, 0, sizeof a);
    a.path = "x.data";
    a.coresight = 1;
    a.ncpus = 2;
    a.protocols = 1u << EK_PROTO_ETE;
    a.aux_no_data = aux;
    a.naux_no_data = 11;
    a.items = items;
    a.nitems = 2;

    ek_sbuf t = EK_SBUF_INIT;
    ek_account_text(&a, &t, EK_REPORT_FULL);
    assert_non_null(strstr(t.p, "x.data: CoreSight trace of 2 CPUs (ETE), full trace, with time "
                                "stamps\n  0 queues, 0 AUX slices, 0 bytes of trace in the file\n"));
    assert_non_null(strstr(t.p, "\n[1] 10 AUX records have no trace data in the file (163840 "
                                "bytes of trace announced, none stored):\n"
                                "      AUX record #10 at offset 0x1a00: cpu 0, aux offset 0, "
                                "size 0x4000\n"));
    assert_null(strstr(t.p, "AUX record #13 ")); /* overwritten: not listed with the problems */
    assert_non_null(strstr(t.p, "      AUX record #18 at offset 0x1200: cpu 0, aux offset "
                                "0x20000, size 0x4000\n"
                                "      ... and 2 more (--verbose lists them all)\n"
                                "    why: "));
    assert_non_null(strstr(t.p, "\n1 note, not a problem (--verbose shows it).\n"));
    ek_sbuf_free(&t);

    ek_account_text(&a, &t, EK_REPORT_VERBOSE);
    assert_null(strstr(t.p, "more (--verbose"));
    assert_non_null(strstr(t.p, "      AUX record #20 at offset 0x1000: cpu 0, aux offset "
                                "0x28000, size 0x4000\n    why: "));
    assert_non_null(strstr(t.p, "\nNotes (not problems):\n  - snapshot mode: the trace of 1 AUX "
                                "record (16384 bytes) was overwritten"));
    ek_sbuf_free(&t);

    /* script's summary counts the AUX records without data that are problems and names the
     * earliest; snapshot mode's overwritten ones are notes (the earliest here, #20, is one) */
    aux[10].overwritten = 1;
    ek_account_text(&a, &t, EK_REPORT_SUMMARY);
    assert_string_equal(t.p, "etmkit: 9 AUX records without trace data in the file (first: "
                             "record #19 at offset 0x1100)\n"
                             "etmkit: run 'etmkit doctor x.data' for the details and remedies\n");
    ek_sbuf_free(&t);
    /* only overwritten ones: nothing to say */
    for (int i = 0; i < 11; i++)
        aux[i].overwritten = 1;
    ek_account_text(&a, &t, EK_REPORT_SUMMARY);
    assert_true(!t.p || !strstr(t.p, "AUX record"));
    ek_sbuf_free(&t);
    for (int i = 0; i < 11; i++)
        aux[i].overwritten = i == 3;

    /* a program may keep only the problems: the note's line goes */
    a.nitems = 1;
    ek_account_text(&a, &t, EK_REPORT_FULL);
    assert_null(strstr(t.p, "note"));
    ek_sbuf_free(&t);

    /* JSON: every record, each item's kind, remedy and text */
    a.nitems = 2;
    ek_account_json(&a, &t, EK_REPORT_FULL);
    assert_non_null(strstr(t.p, "\"schema\":\"etmkit-account/1\""));
    assert_non_null(strstr(t.p, "{\"record\":13,\"offset\":5888,\"cpu\":1,\"aux_offset\":49152,"
                                "\"size\":16384,\"overwritten\":true}"));
    assert_non_null(strstr(t.p, "\"causes\":[\n  {\"kind\":\"aux-no-data\",\"remedy\":"
                                "\"record-again\",\"count\":10,\"bytes\":163840,"
                                "\"first_offset\":null,\"text\":\"10 AUX records have"));
    assert_non_null(strstr(t.p, "\"notes\":[\n  {\"kind\":\"aux-overwritten\",\"remedy\":\"none\""));
    assert_int_equal(t.p[t.len - 1], '\n');
    assert_int_equal(t.p[t.len - 2], '}');
    ek_sbuf_free(&t);
}

/* Values at their edges, in both renderers: code at address 0 (a snapshot's reset code in no
 * dump: "0x0", as every address; "%#llx" made it "0"), a build-id whose last byte is zero
 * (one in 256: all 20 bytes, as the remedy's .build-id path spells them; the zero was dropped
 * as if it were padding) and one padded to 20 bytes (a record without its size), and a
 * diagnostic's file whose name ends in '.' (a name, kept whole; it lost the '.' that a
 * message's end loses). */
static void test_render_edges(void **state)
{
    (void)state;
    static const uint8_t recorded[20] = {0x4e, 0x1f, 0x2a, 0x33, 0x44, 0x55, 0x66,
                                         0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd,
                                         0xee, 0xff, 0x01, 0x02, 0x10, 0x00};
    ek_account_dso d;
    memset(&d, 0, sizeof d);
    d.name = "/usr/lib/libx.so";
    d.tried = "/symfs/usr/lib/libx.so";
    d.kind = EK_ACCT_DSO_USER;
    d.status = EK_ACCT_FILE_BUILD_ID_MISMATCH;
    memcpy(d.build_id, recorded, 20);
    d.build_id_len = 20;
    memcpy(d.found_id, recorded, 20);
    d.found_id[19] = 0x01;
    d.found_id_len = 20;
    ek_account_diag g;
    memset(&g, 0, sizeof g);
    g.kind = "snapshot.unreadable";
    g.sev = EK_SEV_ERROR;
    g.count = 1;
    g.msg = "cannot read trace buffer.";
    g.file = "/data/etb.";
    g.record = g.trace_id = g.example_offset = -1;
    ek_account_item items[3];
    memset(items, 0, sizeof items);
    items[0].kind = EK_ACCT_CODE;
    items[0].problem = 1;
    items[0].remedy = EK_REMEDY_GIVE_CODE;
    items[0].code = EK_ACCT_CODE_NO_IMAGE;
    items[0].pid = 0x10;
    items[0].lo = 0;
    items[0].hi = 0x40;
    items[0].count = 3;
    items[0].name = "cpu_0.ini";
    items[1].kind = EK_ACCT_CODE;
    items[1].problem = 1;
    items[1].remedy = EK_REMEDY_SYMFS;
    items[1].code = EK_ACCT_CODE_DSO;
    items[1].pid = 100;
    items[1].lo = 0x1000;
    items[1].hi = 0x2000;
    items[1].count = 1;
    items[1].first_offset = 0x100;
    items[1].dso = &d;
    items[2].kind = EK_ACCT_DIAG;
    items[2].problem = 1;
    items[2].count = 1;
    items[2].first_offset = -1;
    items[2].diag = &g;
    ek_account a;
    memset(&a, 0, sizeof a);
    a.path = "x.data";
    a.ran = 1;
    a.items = items;
    a.nitems = 3;

    ek_sbuf t = EK_SBUF_INIT;
    ek_account_text(&a, &t, EK_REPORT_FULL);
    assert_non_null(strstr(t.p, "] code at 0x0..0x40 is in no memory dump (trace ID 0x10)\n"));
    assert_non_null(strstr(t.p, "] /usr/lib/libx.so (pid 100) at 0x1000..0x2000: "
                                "/symfs/usr/lib/libx.so has build-id "
                                "4e1f2a33445566778899aabbccddeeff01021001, the recording says "
                                "4e1f2a33445566778899aabbccddeeff01021000: another build"));
    assert_non_null(strstr(t.p, ".build-id/4e/1f2a33445566778899aabbccddeeff01021000/elf"));
    assert_non_null(strstr(t.p, "] cannot read trace buffer (in /data/etb.)\n"));
    ek_sbuf_free(&t);

    ek_account_json(&a, &t, EK_REPORT_FULL);
    assert_non_null(strstr(t.p, "\"lo\":\"0x0\",\"hi\":\"0x40\""));
    assert_non_null(strstr(t.p, "\"build_id\":\"4e1f2a33445566778899aabbccddeeff01021000\","
                                "\"found_build_id\":\"4e1f2a33445566778899aabbccddeeff01021001\""));
    assert_non_null(strstr(t.p, "\"message\":\"cannot read trace buffer.\""));
    assert_non_null(strstr(t.p, "\"file\":\"/data/etb.\""));
    assert_non_null(strstr(t.p, "\"text\":\"cannot read trace buffer (in /data/etb.)\\n\""));
    ek_sbuf_free(&t);

    /* recorded without its size: an md5 id, 16 bytes padded to 20 with a zero word; shown
     * without the padding (the remedy's path keeps the 20 bytes perf looks up) */
    memset(d.build_id + 16, 0, 4);
    ek_account_text(&a, &t, EK_REPORT_FULL);
    assert_non_null(strstr(t.p, ", the recording says 4e1f2a33445566778899aabbccddeeff: another"));
    assert_non_null(strstr(t.p, ".build-id/4e/1f2a33445566778899aabbccddeeff00000000/elf"));
    ek_sbuf_free(&t);
    ek_account_json(&a, &t, EK_REPORT_FULL);
    assert_non_null(strstr(t.p, "\"build_id\":\"4e1f2a33445566778899aabbccddeeff\","));
    ek_sbuf_free(&t);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buildid_mismatch),
        cmocka_unit_test(test_jit_without_symfs),
        cmocka_unit_test(test_render_built),
        cmocka_unit_test(test_render_edges),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
