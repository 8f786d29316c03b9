/* The snapshot lister through the library alone (ek_snapshot_open + ek_snapshot_list,
 * etmkit/listing.h), no CLI involved:
 *  - the shipped example examples/etm4-hello: the text and JSON listings are the reviewed
 *    golden files, and the packet and element lines of the ocsd listing (with --pkt-mon, and
 *    with --decode) are the golden lines OpenCSD's trc_pkt_lister printed;
 *  - OpenCSD's own snapshots in ../shared/testdata/opencsd: the whole trc_pkt_lister 1.8.0
 *    listing, every line in order (banners, protocol printers, raw frames, DSTREAM footers,
 *    "processed N bytes"), of the cases whose lister flags need no memory accessor log lines
 *    (init-short-addr: -pkt_mon; a55-test-tpiu: -dstream_format -o_raw_packed
 *    -o_raw_unpacked). Skipped when ../shared is absent.
 * Also: the write function sees the text in order and its failure stops the listing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "etmkit/listing.h"
#include "etmkit/snapshot.h"
#include "testutil.h"

static int to_sbuf(void *ctx, const char *text, size_t len)
{
    ek_sbuf_put(ctx, text, len);
    return 0;
}

/* The listing of the snapshot at path (named `name` in the OCSD banner). */
static char *list(const char *path, const char *name, const ek_snapshot_list_opts *in, int *buffers)
{
    ek_snapshot *ss = NULL;
    assert_int_equal(ek_snapshot_open(path, NULL, &ss), 0);
    ek_snapshot_list_opts o = *in;
    ek_sbuf out = EK_SBUF_INIT;
    o.path = name;
    o.write = to_sbuf;
    o.write_ctx = &out;
    *buffers = ek_snapshot_list(ss, &o);
    ek_snapshot_free(ss);
    char *r = strdup(out.p ? out.p : "");
    ek_sbuf_free(&out);
    return r;
}

static char *read_all(FILE *f)
{
    ek_sbuf s = EK_SBUF_INIT;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        ek_sbuf_put(&s, buf, n);
    char *r = strdup(s.p ? s.p : "");
    ek_sbuf_free(&s);
    return r;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot read %s", path);
    char *r = read_all(f);
    fclose(f);
    return r;
}

/* The lines of text that start with one of the prefixes, in order. */
static char *lines_starting(const char *text, const char *const *prefixes)
{
    ek_sbuf s = EK_SBUF_INIT;
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) + 1 : strlen(p);
        for (const char *const *x = prefixes; *x; x++)
            if (!strncmp(p, *x, strlen(*x))) {
                ek_sbuf_put(&s, p, n);
                break;
            }
        p += n;
    }
    char *r = strdup(s.p ? s.p : "");
    ek_sbuf_free(&s);
    return r;
}

/* Equal texts; else the first line that differs, for the failure message. */
static void same_text(const char *want, const char *got, const char *what)
{
    if (!strcmp(want, got)) return;
    size_t line = 1, i = 0;
    while (want[i] && want[i] == got[i]) {
        if (want[i] == '\n') line++;
        i++;
    }
    const char *w = want + i, *g = got + i;
    while (w > want && w[-1] != '\n')
        w--;
    while (g > got && g[-1] != '\n')
        g--;
    fail_msg("%s: line %zu differs:\n  want: %.160s\n  got:  %.160s", what, line, w, g);
}

static const char *src_dir(void)
{
    const char *s = getenv("ETMKIT_SRC");
    if (!s) tu_skip("ETMKIT_SRC is not set");
    return s;
}

static void test_example_text_and_json(void **state)
{
    (void)state;
    const char *src = src_dir();
    char ex[4096], golden[4096];
    snprintf(ex, sizeof ex, "%s/examples/etm4-hello", src);
    static const struct {
        ek_listing_format format;
        int decode;
        const char *golden;
    } cases[] = {
        {EK_LISTING_TEXT, 0, "etm4-hello.text"},
        {EK_LISTING_JSON, 0, "etm4-hello.json"},
        {EK_LISTING_TEXT, 1, "etm4-hello.decode.text"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ek_snapshot_list_opts o;
        ek_snapshot_list_opts_init(&o);
        o.format = cases[i].format;
        o.decode = cases[i].decode;
        int buffers = -1;
        char *got = list(ex, ex, &o, &buffers);
        assert_int_equal(buffers, 1);
        snprintf(golden, sizeof golden, "%s/tests/golden/%s", src, cases[i].golden);
        char *want = read_text(golden);
        same_text(want, got, cases[i].golden);
        free(want);
        free(got);
    }
}

static void test_example_ocsd(void **state)
{
    (void)state;
    const char *src = src_dir();
    char ex[4096], golden[4096];
    snprintf(ex, sizeof ex, "%s/examples/etm4-hello", src);
    static const char *const packet_lines[] = {"Idx:", "ID:", NULL};
    for (int decode = 0; decode <= 1; decode++) {
        ek_snapshot_list_opts o;
        ek_snapshot_list_opts_init(&o);
        o.format = EK_LISTING_OCSD;
        o.pkt_mon = !decode;
        o.decode = decode;
        int buffers = -1;
        char *got = list(ex, ex, &o, &buffers);
        assert_int_equal(buffers, 1);
        /* the lister's frame around the lines */
        char banner[8192];
        snprintf(banner, sizeof banner,
                 "Trace Packet Lister : reading snapshot from path %s\nUsing ETR_0 as trace "
                 "source\n",
                 ex);
        assert_memory_equal(got, banner, strlen(banner));
        const char *end = "Trace Packet Lister : Trace buffer done, processed 97 bytes.\n";
        assert_true(strlen(got) > strlen(end));
        assert_string_equal(got + strlen(got) - strlen(end), end);
        char *lines = lines_starting(got, packet_lines);
        snprintf(golden, sizeof golden, "%s/tests/golden/%s", src,
                 decode ? "etm4-hello.decode.ocsd" : "etm4-hello.ocsd");
        char *want = read_text(golden);
        same_text(want, lines, decode ? "etm4-hello.decode.ocsd" : "etm4-hello.ocsd");
        free(want);
        free(lines);
        free(got);
    }
}

/* trc_pkt_lister 1.8.0's whole listing of case `name` (expected/<name>.ppl.xz), after the 8
 * lines of its test harness's header (program name, library version, command line). */
static void lister_case(const char *name, const ek_snapshot_list_opts *o, const char *dir)
{
    char *snap = NULL, *ppl = NULL;
    char rel[512];
    snprintf(rel, sizeof rel, "opencsd/snapshots/%s", name);
    snap = tu_shared_path(rel);
    snprintf(rel, sizeof rel, "opencsd/expected/%s.ppl.xz", name);
    ppl = tu_shared_path(rel);
    if (!snap || !ppl) {
        free(snap);
        free(ppl);
        tu_skip("../shared/testdata/opencsd is absent");
        return;
    }
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "xz -dc '%s'", ppl);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char *all = read_all(p);
    int st = pclose(p);
    if (st != 0) {
        free(all);
        free(snap);
        free(ppl);
        tu_skip("xz cannot decompress the expected listing (is xz-utils installed?)");
        return;
    }
    const char *want = all;
    for (int i = 0; i < 8 && want; i++) {
        want = strchr(want, '\n');
        if (want) want++;
    }
    assert_non_null(want);
    /* the banner names the folder as the lister was given it */
    char banner[600];
    snprintf(banner, sizeof banner, "%s/%s", dir, name);
    int buffers = -1;
    char *got = list(snap, banner, o, &buffers);
    assert_int_equal(buffers, 1);
    same_text(want, got, name);
    free(got);
    free(all);
    free(snap);
    free(ppl);
}

static void test_lister_init_short_addr(void **state)
{
    (void)state;
    ek_snapshot_list_opts o;
    ek_snapshot_list_opts_init(&o);
    o.format = EK_LISTING_OCSD;
    o.pkt_mon = 1;
    lister_case("init-short-addr", &o, "./snapshots");
}

static void test_lister_dstream_raw_frames(void **state)
{
    (void)state;
    ek_snapshot_list_opts o;
    ek_snapshot_list_opts_init(&o);
    o.format = EK_LISTING_OCSD;
    o.dstream = 1;
    o.raw_packed = 1;
    o.raw_unpacked = 1;
    lister_case("a55-test-tpiu", &o, "./snapshots");
}

/* The text reaches the write function whole and in order, in pieces; a failing write stops
 * the listing with EK_ERR_IO; bad options are refused. */
typedef struct pieces {
    ek_sbuf all;
    int calls, fail_at;
} pieces;

static int count_pieces(void *ctx, const char *text, size_t len)
{
    pieces *p = ctx;
    if (++p->calls == p->fail_at) return -1;
    ek_sbuf_put(&p->all, text, len);
    return 0;
}

static void test_write_and_errors(void **state)
{
    (void)state;
    const char *src = src_dir();
    char ex[4096];
    snprintf(ex, sizeof ex, "%s/examples/etm4-hello", src);
    ek_snapshot *ss = NULL;
    assert_int_equal(ek_snapshot_open(ex, NULL, &ss), 0);
    ek_snapshot_list_opts o;
    ek_snapshot_list_opts_init(&o);
    o.format = EK_LISTING_OCSD;
    o.decode = 1;
    o.stats = 1;
    pieces p;
    memset(&p, 0, sizeof p);
    o.write = count_pieces;
    o.write_ctx = &p;
    assert_int_equal(ek_snapshot_list(ss, &o), 1);
    assert_true(p.calls >= 1);
    assert_non_null(strstr(p.all.p, "\nStatistics\n"));
    int buffers = -1;
    char *whole = list(ex, NULL, &o, &buffers);
    assert_string_equal(whole + strlen(whole) - 40, p.all.p + p.all.len - 40);
    free(whole);
    ek_sbuf_free(&p.all);

    memset(&p, 0, sizeof p);
    p.fail_at = 1;
    assert_int_equal(ek_snapshot_list(ss, &o), EK_ERR_IO);
    ek_sbuf_free(&p.all);

    o.format = EK_LISTING_PERF; /* not a snapshot listing's */
    assert_int_equal(ek_snapshot_list(ss, &o), EK_ERR_ARG);
    o.format = EK_LISTING_TEXT;
    o.itm_sync = EK_LIST_ITM_SYNC_ASSUME + 1; /* no such mode */
    assert_int_equal(ek_snapshot_list(ss, &o), EK_ERR_ARG);
    o.itm_sync = -1;
    assert_int_equal(ek_snapshot_list(ss, &o), EK_ERR_ARG);
    o.itm_sync = EK_LIST_ITM_SYNC_DEFAULT;
    o.size = 8; /* an options struct of a size the library does not know */
    assert_int_equal(ek_snapshot_list(ss, &o), EK_ERR_ARG);
    assert_int_equal(ek_snapshot_list(NULL, &o), EK_ERR_ARG);
    ek_snapshot_free(ss);
}

/* ITM sources (itm_only_raw: garbage, then an A-Sync at byte 16): the default waits for the
 * A-Sync in the ocsd listing (trc_pkt_lister's) and assumes sync at byte 0 in text and JSON;
 * itm_sync chooses either in any format (issue 33 item 3). */
static void test_itm_sync_modes(void **state)
{
    (void)state;
    char *snap = tu_shared_path("opencsd/snapshots/itm_only_raw");
    if (!snap) {
        tu_skip("../shared/testdata/opencsd/snapshots/itm_only_raw is absent");
        return;
    }
    static const struct {
        ek_listing_format format;
        int sync;
        const char *first; /* in the first packet line */
    } cases[] = {
        {EK_LISTING_TEXT, EK_LIST_ITM_SYNC_DEFAULT, "ITM_TS_LOCAL"},
        {EK_LISTING_TEXT, EK_LIST_ITM_SYNC_ASSUME, "ITM_TS_LOCAL"},
        {EK_LISTING_TEXT, EK_LIST_ITM_SYNC_WAIT, "ITM_NOTSYNC"},
        {EK_LISTING_JSON, EK_LIST_ITM_SYNC_DEFAULT, "\"type\":\"ITM_TS_LOCAL\""},
        {EK_LISTING_JSON, EK_LIST_ITM_SYNC_WAIT, "\"type\":\"ITM_NOTSYNC\""},
        {EK_LISTING_OCSD, EK_LIST_ITM_SYNC_DEFAULT, "ITM_NOTSYNC"},
        {EK_LISTING_OCSD, EK_LIST_ITM_SYNC_WAIT, "ITM_NOTSYNC"},
        {EK_LISTING_OCSD, EK_LIST_ITM_SYNC_ASSUME, "ITM_TS_LOCAL"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ek_snapshot_list_opts o;
        ek_snapshot_list_opts_init(&o);
        o.format = cases[i].format;
        o.itm_sync = cases[i].sync;
        o.pkt_mon = 1;
        int buffers = -1;
        char *got = list(snap, "itm_only_raw", &o, &buffers);
        assert_int_equal(buffers, 1);
        const char *line = strstr(got, cases[i].format == EK_LISTING_OCSD ? "Idx:0;" : "ITM_");
        if (cases[i].format == EK_LISTING_JSON) line = strstr(got, "\"type\":\"ITM_");
        assert_non_null(line);
        const char *eol = strchr(line, '\n');
        char first[512];
        snprintf(first, sizeof first, "%.*s", (int)(eol ? eol - line : 200), line);
        if (!strstr(first, cases[i].first))
            fail_msg("case %zu: first packet line '%s' lacks '%s'", i, first, cases[i].first);
        free(got);
    }
    free(snap);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_example_text_and_json),
        cmocka_unit_test(test_example_ocsd),
        cmocka_unit_test(test_lister_init_short_addr),
        cmocka_unit_test(test_lister_dstream_raw_frames),
        cmocka_unit_test(test_write_and_errors),
        cmocka_unit_test(test_itm_sync_modes),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
