/* The decode tree (etmkit/decode.h) against the layers it holds, wired by hand here: the same
 * packets and elements in the same order for raw and formatted input, whatever the piece
 * size; trace IDs routed to their sources and the rest reported; resets, flushes and the end
 * of trace in both models; flow errors in order with the elements; DSTREAM records; and a
 * protocol that plugs in through its operations table alone.
 *
 * The trace is tests/data/flow-hello's (ETMv4 over a tiny A64 image). Each run is written down
 * as one line per item ("P" packets, "E" elements, "D" diagnostics, "R" resets, "T" ends, "U"
 * undecoded data, "F" footers) and compared whole, in order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/decode.h"
#include "etmkit/elem.h"
#include "etmkit/etm4.h"
#include "etmkit/flow.h"
#include "etmkit/image.h"
#include "testutil.h"

/* flow-hello: A-Sync, TRACE_INFO, TRACE_ON, address + context 0x10000, E E E E, address
 * 0x10020, N E, address 0x30000, E (runs into unmapped code), E */
static const char *const TRACE_HEX = "00 00 00 00 00 00 00 00 00 00 00 80 01 00 04 85 00 00 01 00 "
                                     "00 00 00 00 31 f7 f7 f7 f7 9d 08 00 01 00 00 00 00 00 f6 f7 "
                                     "9d 00 00 03 00 00 00 00 00 f7 f7";
/* mov, add, b.eq, bl, cbz, br, isb, ret, nop, nop, ret, svc, eret, add, b (at 0x10000) */
static const char *const CODE_HEX = "20 00 80 d2 21 04 00 91 40 00 00 54 05 00 00 94 42 00 00 b4 "
                                    "60 00 1f d6 df 3f 03 d5 c0 03 5f d6 1f 20 03 d5 1f 20 03 d5 "
                                    "c0 03 5f d6 01 00 00 d4 e0 03 9f d6 00 04 00 91 ff ff ff 17";
static const char *const NOPS_HEX = "1f 20 03 d5 1f 20 03 d5 1f 20 03 d5";

static uint8_t trace[64], code[64], nops[16];
static size_t trace_len;
static ek_image *img;

static ek_source_config source(unsigned id)
{
    ek_source_config s;
    memset(&s, 0, sizeof s);
    s.protocol = EK_PROTO_ETMV4;
    s.trace_id = (uint8_t)id;
    s.arch = EK_ARCH_V8A;
    s.profile = EK_PROFILE_A;
    ek_etm4_regs *r = &s.regs.etm4;
    r->configr = 0xC1;
    r->traceidr = id;
    r->idr[0] = 0x28000EA1;
    r->idr[1] = 0x4100F403;
    r->idr[2] = 0x00000488;
    r->idr[8] = 0;
    r->present =
        1u << 0 | 1u << 1 | 1u << 2 | 1u << 8 | EK_ETM4_HAVE_CONFIGR | EK_ETM4_HAVE_TRACEIDR;
    return s;
}

static int setup(void **state)
{
    (void)state;
    trace_len = tu_hex(TRACE_HEX, trace, sizeof trace);
    const size_t nc = tu_hex(CODE_HEX, code, sizeof code);
    const size_t nn = tu_hex(NOPS_HEX, nops, sizeof nops);
    if (ek_image_new(NULL, &img)) return -1;
    if (ek_image_add_buffer(img, code, nc, 0x10000, EK_MS_ANY)) return -1;
    if (ek_image_add_buffer(img, nops, nn, 0x30000, EK_MS_ANY)) return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ek_image_free(img);
    return 0;
}

/* ---- a run written down as text ------------------------------------------------------------- */

static ek_sbuf log_text = EK_SBUF_INIT;

static void log_packet(unsigned id, const ek_etm4_packet *p, int with_index)
{
    ek_sbuf_printf(&log_text, "P %02x ", id);
    if (with_index) ek_sbuf_printf(&log_text, "%llu ", (unsigned long long)p->index);
    ek_sbuf_printf(&log_text, "%s %u\n", ek_etm4_type_name(p->type), p->size);
}

static void log_elem(const ek_elem *e, int with_index)
{
    ek_sbuf_printf(&log_text, "E %02x ", e->trace_id);
    if (with_index) ek_sbuf_printf(&log_text, "%llu ", (unsigned long long)e->index);
    ek_elem_format_ocsd(&log_text, e);
    ek_sbuf_putc(&log_text, '\n');
}

/* Everything the tree gives until it needs input, written down. */
static void take(ek_decode *t, int with_index)
{
    ek_decode_item it;
    int rc;
    while ((rc = ek_decode_next(t, &it)) > 0) {
        switch (it.kind) {
        case EK_DI_PACKET:
            assert_int_equal(it.index, it.packet.index);
            assert_non_null(it.config);
            log_packet(it.trace_id, it.packet.pkt, with_index);
            for (size_t i = 0; i < it.count; i++) {
                assert_int_equal(it.elems[i].trace_id, it.trace_id);
                log_elem(&it.elems[i], with_index);
            }
            break;
        case EK_DI_ELEMS:
            assert_true(it.count > 0);
            for (size_t i = 0; i < it.count; i++) {
                assert_int_equal(it.elems[i].trace_id, it.trace_id);
                log_elem(&it.elems[i], with_index);
            }
            break;
        case EK_DI_DIAG:
            ek_sbuf_printf(&log_text, "D %02x %s\n", it.trace_id, it.diag->kind);
            break;
        case EK_DI_RESET: ek_sbuf_printf(&log_text, "R %02x\n", it.trace_id); break;
        case EK_DI_EOT: ek_sbuf_printf(&log_text, "T %02x\n", it.trace_id); break;
        case EK_DI_UNDECODED:
            ek_sbuf_printf(&log_text, "U %02x %zu %s\n", it.trace_id, it.len,
                           it.why == EK_DECODE_NO_ID ? "no-id" : "no-source");
            break;
        case EK_DI_FOOTER:
            ek_sbuf_puts(&log_text, "F");
            for (size_t i = 0; i < it.len; i++)
                ek_sbuf_printf(&log_text, " %02x", it.data[i]);
            ek_sbuf_putc(&log_text, '\n');
            break;
        default: ek_sbuf_printf(&log_text, "? %u\n", it.kind); break;
        }
    }
    assert_int_equal(rc, 0);
}

static char *take_log(void)
{
    char *s = strdup(log_text.p ? log_text.p : "");
    ek_sbuf_reset(&log_text);
    return s;
}

/* ---- the layers wired by hand ---------------------------------------------------------------- */

typedef struct ref {
    unsigned id;
    ek_etm4_config cfg;
    ek_etm4_parser p;
    ek_flow *f;
    int drain_on_diag; /* as a listing does: elements before a logged error come first */
} ref;

static void ref_drain_elems(ref *r, int with_index)
{
    size_t n;
    const ek_elem *e = ek_flow_elems(r->f, &n);
    for (size_t i = 0; i < n; i++)
        log_elem(&e[i], with_index);
    ek_flow_elems_clear(r->f);
}

static void ref_diag(void *ctx, const ek_diag_event *ev)
{
    ref *r = ctx;
    if (r->drain_on_diag && ek_flow_diag_logged(ev)) {
        ref_drain_elems(r, 1);
        ek_sbuf_printf(&log_text, "D %02x %s\n", r->id, ev->kind);
    }
}

static uint32_t ref_flow_flags; /* EK_FLOW_* of the reference's flow decoder */

static void ref_init(ref *r, unsigned id)
{
    memset(r, 0, sizeof *r);
    r->id = id;
    ek_source_config s = source(id);
    assert_int_equal(ek_etm4_config_from_source(&r->cfg, &s), 0);
    ek_etm4_parser_init(&r->p, &r->cfg);
    ek_flow_config fc;
    ek_flow_config_init(&fc);
    fc.source = &s;
    fc.mem = ek_flow_mem_image(img);
    fc.flags = ref_flow_flags;
    static ek_diag d;
    d.fn = ref_diag;
    d.ctx = r;
    fc.diag = &d;
    assert_int_equal(ek_flow_new(&fc, &r->f), 0);
}

static void ref_packets(ref *r, int with_index)
{
    const ek_etm4_packet *p;
    while (ek_etm4_next(&r->p, &p) > 0) {
        log_packet(r->id, p, with_index);
        ek_flow_packet(r->f, p);
        ref_drain_elems(r, with_index);
    }
}

static void ref_feed(ref *r, const uint8_t *d, size_t n, uint64_t index, int with_index)
{
    ek_etm4_feed(&r->p, d, n, index);
    ref_packets(r, with_index);
}

static void ref_end(ref *r, int with_index)
{
    ek_etm4_eot(&r->p);
    ref_packets(r, with_index);
    ek_flow_end(r->f);
    ref_drain_elems(r, with_index);
    ek_sbuf_printf(&log_text, "T %02x\n", r->id);
}

static void ref_free(ref *r)
{
    ek_flow_free(r->f);
}

/* ---- trees ----------------------------------------------------------------------------------- */

static ek_decode *tree(unsigned frames, ek_decode_model model, uint32_t flags, size_t block)
{
    ek_decode_config c;
    ek_decode_config_init(&c);
    c.frame_flags = frames;
    c.model = model;
    c.flags = flags;
    c.block_size = block;
    c.mem = ek_flow_mem_image(img);
    ek_decode *t;
    assert_int_equal(ek_decode_new(&c, &t), 0);
    return t;
}

static int add(ek_decode *t, unsigned id)
{
    ek_source_config s = source(id);
    const int n = ek_decode_add_source(t, &s, "etm", NULL);
    assert_true(n >= 0);
    return n;
}

/* Raw data of one source: the tree gives what the layers give, in order, for any piece size. */
static void test_raw_single_source(void **state)
{
    (void)state;
    ref r;
    ref_init(&r, 0x10);
    ref_feed(&r, trace, trace_len, 0, 1);
    ref_end(&r, 1);
    ref_free(&r);
    char *want = take_log();
    assert_non_null(strstr(want, "ADDR_NACC"));
    assert_non_null(strstr(want, "EO_TRACE"));

    const size_t blocks[] = {0, 1, 3, 7, 16};
    for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
        ek_decode *t =
            tree(0, EK_DECODE_MODEL_OCSD, EK_DECODE_PACKETS | EK_DECODE_ELEMS, blocks[b]);
        assert_int_equal(ek_decode_bind_raw(t, add(t, 0x10)), 0);
        ek_decode_feed(t, trace, trace_len, 0);
        take(t, 1);
        ek_decode_end(t);
        take(t, 1);
        char *got = take_log();
        assert_string_equal(got, want);
        free(got);
        ek_decode_source_stats st;
        assert_int_equal(ek_decode_source_stats_get(t, 0x10, &st), 0);
        assert_int_equal(st.bytes, trace_len);
        size_t npk = 0;
        for (const char *q = want; (q = strstr(q, "\nP ")) != NULL; q++)
            npk++;
        npk += want[0] == 'P';
        assert_int_equal(st.packets, npk);
        assert_int_equal(st.bad_packets, 0);
        assert_true(st.has_flow);
        assert_int_equal(st.flow.packets, npk);
        ek_decode_free(t);
    }
    free(want);
}

/* Without EK_DECODE_PACKETS the packets go to the flow decoders unseen; without
 * EK_DECODE_ELEMS there are no flow decoders. */
static void test_packets_or_elements_alone(void **state)
{
    (void)state;
    ek_decode *t = tree(0, EK_DECODE_MODEL_OCSD, EK_DECODE_PACKETS | EK_DECODE_ELEMS, 0);
    ek_decode_bind_raw(t, add(t, 0x10));
    ek_decode_feed(t, trace, trace_len, 0);
    take(t, 1);
    ek_decode_end(t);
    take(t, 1);
    ek_decode_free(t);
    char *both = take_log();

    t = tree(0, EK_DECODE_MODEL_OCSD, EK_DECODE_ELEMS, 0);
    ek_decode_bind_raw(t, add(t, 0x10));
    ek_decode_feed(t, trace, trace_len, 0);
    take(t, 1);
    ek_decode_end(t);
    take(t, 1);
    ek_decode_free(t);
    char *elems = take_log();

    t = tree(0, EK_DECODE_MODEL_OCSD, EK_DECODE_PACKETS, 0);
    ek_decode_bind_raw(t, add(t, 0x10));
    ek_decode_feed(t, trace, trace_len, 0);
    take(t, 1);
    ek_decode_end(t);
    take(t, 1);
    ek_decode_source_stats st;
    assert_int_equal(ek_decode_source_stats_get(t, 0x10, &st), 0);
    assert_false(st.has_flow);
    ek_decode_free(t);
    char *pkts = take_log();

    /* both = the packet lines and the element lines, interleaved */
    ek_sbuf p = EK_SBUF_INIT, e = EK_SBUF_INIT;
    for (char *line = strtok(both, "\n"); line; line = strtok(NULL, "\n")) {
        ek_sbuf *to = line[0] == 'E' ? &e : &p;
        ek_sbuf_puts(to, line);
        ek_sbuf_putc(to, '\n');
    }
    ek_sbuf_puts(&e, "T 10\n");
    assert_string_equal(p.p, pkts);
    assert_string_equal(e.p, elems);
    ek_sbuf_free(&p);
    ek_sbuf_free(&e);
    free(both);
    free(elems);
    free(pkts);
}

/* A 16-byte frame: byte 0 sets the ID, then n <= 14 bytes of it; a shorter run is followed by
 * the null ID (padding). id < 0: a frame of 15 bytes of data and no ID at all. */
static void put(uint8_t *out, uint8_t *flags, unsigned pos, uint8_t b)
{
    if (pos % 2 == 0) {
        if (b & 1) *flags |= (uint8_t)(1u << (pos == 14 ? 7 : pos / 2));
        b &= 0xfe;
    }
    out[pos] = b;
}

static size_t frame(uint8_t *out, int id, const uint8_t *d, size_t n)
{
    uint8_t flags = 0;
    memset(out, 0, 16);
    if (id < 0) {
        for (unsigned i = 0; i < 15; i++)
            put(out, &flags, i, i < n ? d[i] : 0);
        out[15] = flags;
        return 16;
    }
    out[0] = (uint8_t)(id << 1 | 1);
    if (n >= 14) {
        for (unsigned i = 1; i <= 14; i++)
            put(out, &flags, i, d[i - 1]);
    } else if (n % 2) {
        for (unsigned i = 1; i <= n; i++)
            put(out, &flags, i, d[i - 1]);
        out[n + 1] = 0x01; /* null ID: the rest is padding */
    } else {
        /* the ID change takes the even byte; its flag gives the next byte to the old ID */
        for (unsigned i = 1; i < n; i++)
            put(out, &flags, i, d[i - 1]);
        out[n] = 0x01;
        flags |= (uint8_t)(1u << (n / 2));
        out[n + 1] = d[n - 1];
    }
    out[15] = flags;
    return 16;
}

static size_t formatted_stream(uint8_t *buf, const unsigned *ids, size_t nids)
{
    size_t n = 0;
    for (size_t pos = 0; pos < trace_len; pos += 14)
        for (size_t k = 0; k < nids; k++)
            n += frame(buf + n, (int)ids[k], trace + pos,
                       trace_len - pos < 14 ? trace_len - pos : 14);
    return n;
}

/* The packets and elements of one trace ID, without indices: what a raw decode of the same
 * bytes gives. */
static char *ref_of(unsigned id)
{
    ref r;
    ref_init(&r, id);
    ref_feed(&r, trace, trace_len, 0, 0);
    ref_end(&r, 0);
    ref_free(&r);
    return take_log();
}

static char *lines_of(const char *text, unsigned id)
{
    char tag[8];
    snprintf(tag, sizeof tag, " %02x", id);
    ek_sbuf s = EK_SBUF_INIT;
    const char *p = text;
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p + 1) : strlen(p);
        if (n > 4 && (p[0] == 'P' || p[0] == 'E' || p[0] == 'T') && !strncmp(p + 1, tag, 3))
            ek_sbuf_put(&s, p, n);
        p += n;
    }
    char *r = strdup(s.p ? s.p : "");
    ek_sbuf_free(&s);
    return r;
}

/* Formatted input: every ID to its own decoders; data before any ID and data of an ID without
 * a source reported as such. */
static void test_formatted_routing(void **state)
{
    (void)state;
    uint8_t buf[2048];
    size_t n = frame(buf, -1, trace, 15); /* no ID yet */
    const unsigned ids[] = {0x10, 0x14, 0x12};
    n += formatted_stream(buf + n, ids, 3);
    char *want10 = ref_of(0x10), *want12 = ref_of(0x12);

    ek_decode *t = tree(EK_DFMT_MEM_ALIGN, EK_DECODE_MODEL_OCSD,
                        EK_DECODE_PACKETS | EK_DECODE_ELEMS | EK_DECODE_UNDECODED, 32);
    const int s10 = add(t, 0x10), s12 = add(t, 0x12);
    assert_int_equal(s10, 0);
    assert_int_equal(s12, 1);
    ek_decode_feed(t, buf, n, 0);
    take(t, 0);
    ek_decode_end(t);
    take(t, 0);
    char *got = take_log();
    char *got10 = lines_of(got, 0x10), *got12 = lines_of(got, 0x12);
    assert_string_equal(got10, want10);
    assert_string_equal(got12, want12);
    /* the first frame: 15 bytes without an ID; then 0x14's 14 bytes a frame, no source */
    assert_non_null(strstr(got, "U ff 15 no-id\n"));
    assert_non_null(strstr(got, "U 14 14 no-source\n"));
    assert_true(ek_decode_has_decoder(t, 0x10));
    assert_false(ek_decode_has_decoder(t, 0x14));
    ek_decode_stats st;
    ek_decode_stats_get(t, &st);
    assert_int_equal(st.input_bytes, n);
    /* the 15 bytes before any ID, 0x14's trace, the null-ID padding of each last frame */
    assert_int_equal(st.undecoded_bytes, 15 + trace_len + 3 * (14 - trace_len % 14 - 1));
    ek_decode_free(t);
    free(got);
    free(got10);
    free(got12);
    free(want10);
    free(want12);
}

/* OCSD model: a reset resets every decoder now (RESET items in ID order); the end ends each
 * in ID order after what it still held. */
static void test_ocsd_reset_and_end(void **state)
{
    (void)state;
    ek_decode *t =
        tree(EK_DFMT_MEM_ALIGN, EK_DECODE_MODEL_OCSD, EK_DECODE_PACKETS | EK_DECODE_ELEMS, 0);
    add(t, 0x12);
    add(t, 0x10);
    assert_int_equal(ek_decode_make_all(t), 0);
    ek_decode_reset(t);
    take(t, 1);
    char *got = take_log();
    assert_string_equal(got, "R 10\nR 12\n");
    free(got);
    ek_decode_end(t);
    take(t, 1);
    got = take_log();
    assert_string_equal(got, "E 10 0 OCSD_GEN_TRC_ELEM_EO_TRACE( [end-of-trace])\nT 10\n"
                             "E 12 0 OCSD_GEN_TRC_ELEM_EO_TRACE( [end-of-trace])\nT 12\n");
    free(got);
    ek_decode_free(t);
}

/* perf model: a source is reset at its first data after a reset (a RESET item before its
 * packets), a flush ends the partial packet of each active source, and a source without data
 * in a slice is left alone. */
static void test_perf_model(void **state)
{
    (void)state;
    uint8_t buf[1024];
    const unsigned both[] = {0x10, 0x12}, only12[] = {0x12};
    ek_decode *t = tree(EK_DFMT_MEM_ALIGN | EK_DFMT_RESET_4XFSYNC, EK_DECODE_MODEL_PERF,
                        EK_DECODE_PACKETS | EK_DECODE_ELEMS, 0);
    add(t, 0x10);
    add(t, 0x12);
    /* slice 1: 20 bytes of each ID: A-Sync, TRACE_INFO, TRACE_ON and half an address */
    size_t n = 0;
    for (size_t pos = 0; pos < 20; pos += 14)
        for (int k = 0; k < 2; k++)
            n += frame(buf + n, (int)both[k], trace + pos, pos ? 6 : 14);
    ek_decode_feed(t, buf, n, 0);
    take(t, 0);
    char *got = take_log();
    assert_true(!strncmp(got, "R 10\nP 10 I_ASYNC 12\n", 21));
    assert_non_null(strstr(got, "R 12\nP 12 I_ASYNC 12\n"));
    assert_null(strstr(got, "INCOMPLETE"));
    free(got);
    assert_true(ek_decode_active(t, 0x10) && ek_decode_active(t, 0x12));
    ek_decode_flush(t);
    take(t, 0);
    got = take_log();
    assert_string_equal(got, "P 10 I_INCOMPLETE_EOT 5\nP 12 I_INCOMPLETE_EOT 5\n");
    free(got);

    /* slice 2: only 0x12; 0x10 keeps what it had (no reset, not active) */
    ek_decode_reset(t);
    assert_false(ek_decode_active(t, 0x10));
    n = formatted_stream(buf, only12, 1);
    ek_decode_feed(t, buf, n, 1000);
    take(t, 0);
    got = take_log();
    assert_true(!strncmp(got, "R 12\nP 12 I_ASYNC 12\n", 21));
    assert_null(strstr(got, " 10 "));
    assert_non_null(strstr(got, "E 12 OCSD_GEN_TRC_ELEM_NO_SYNC( [reset-decoder])"));
    free(got);
    assert_false(ek_decode_active(t, 0x10));
    assert_true(ek_decode_active(t, 0x12));
    ek_decode_free(t);
}

/* A barrier (4 x FSYNC between frames): OCSD model, every decoder reset there (the partial
 * packet dropped); perf model, the partial packet flushed, then each source reset at its next
 * data. */
static void test_barrier(void **state)
{
    (void)state;
    uint8_t buf[1024];
    size_t n = frame(buf, 0x10, trace, 14);
    n += frame(buf + n, 0x10, trace + 14, 6); /* ends inside an address packet */
    for (int k = 0; k < 4; k++) {
        memcpy(buf + n, "\xff\xff\xff\x7f", 4);
        n += 4;
    }
    const unsigned id10[] = {0x10};
    n += formatted_stream(buf + n, id10, 1);

    ek_decode *t =
        tree(EK_DFMT_MEM_ALIGN | EK_DFMT_RESET_4XFSYNC, EK_DECODE_MODEL_OCSD, EK_DECODE_PACKETS, 0);
    add(t, 0x10);
    ek_decode_feed(t, buf, n, 0);
    take(t, 1);
    char *got = take_log();
    assert_non_null(strstr(got, "P 10 16 I_TRACE_ON 1\nR 10\nP 10 48 I_ASYNC 12\n"));
    assert_null(strstr(got, "INCOMPLETE"));
    free(got);
    ek_decode_free(t);

    t = tree(EK_DFMT_MEM_ALIGN | EK_DFMT_RESET_4XFSYNC, EK_DECODE_MODEL_PERF, EK_DECODE_PACKETS, 0);
    add(t, 0x10);
    ek_decode_feed(t, buf, n, 0);
    take(t, 1);
    got = take_log();
    assert_non_null(strstr(got, "P 10 16 I_TRACE_ON 1\nP 10 17 I_INCOMPLETE_EOT 5\nR 10\n"
                                "P 10 48 I_ASYNC 12\n"));
    free(got);
    ek_decode_free(t);
}

/* A flow error the reference decoder logs comes as a DIAG item after the elements made
 * before it (those copied out of the flow step) and before the ones made after it, as a
 * listing prints them; every diagnostic also reaches the sink, named with the current file. */
static int n_diag;
static void count_diag(void *ctx, const ek_diag_event *ev)
{
    (void)ctx;
    if (!strcmp(ev->kind, "flow.bad-packet")) {
        assert_non_null(ev->file);
        assert_string_equal(ev->file, "slice.bin");
    }
    n_diag++;
}

static void test_diag_items(void **state)
{
    (void)state;
    /* a reserved header after the first two atoms */
    uint8_t bad[80];
    memcpy(bad, trace, 27);
    bad[27] = 0x08;
    memcpy(bad + 28, trace + 27, trace_len - 27);
    const size_t n = trace_len + 1;

    ref r;
    ref_init(&r, 0x10);
    r.drain_on_diag = 1;
    ref_feed(&r, bad, n, 0, 1);
    ref_end(&r, 1);
    ref_free(&r);
    char *want = take_log();
    assert_non_null(strstr(want, "D 10 flow.bad-packet\n"));

    ek_decode_config c;
    ek_decode_config_init(&c);
    c.flags = EK_DECODE_PACKETS | EK_DECODE_ELEMS | EK_DECODE_DIAG_ITEMS;
    c.mem = ek_flow_mem_image(img);
    ek_diag sink = {count_diag, NULL};
    c.diag = &sink;
    ek_decode *t;
    assert_int_equal(ek_decode_new(&c, &t), 0);
    ek_decode_bind_raw(t, add(t, 0x10));
    ek_decode_set_file(t, "slice.bin");
    n_diag = 0;
    ek_decode_feed(t, bad, n, 0);
    take(t, 1);
    ek_decode_end(t);
    take(t, 1);
    char *got = take_log();
    assert_string_equal(got, want);
    assert_true(n_diag >= 1);
    ek_decode_free(t);
    free(got);
    free(want);
}

/* A flow decoder may report its configuration as it is made (here LSP0 elements, which the
 * reference decoder does not support and logs): with DIAG_ITEMS that is a DIAG item before
 * the ID's first packet, for a decoder made on first data and for one made in advance. */
static void test_diag_at_creation(void **state)
{
    (void)state;
    for (int eager = 0; eager < 2; eager++) {
        ek_decode_config c;
        ek_decode_config_init(&c);
        c.flags = EK_DECODE_PACKETS | EK_DECODE_ELEMS | EK_DECODE_DIAG_ITEMS;
        c.mem = ek_flow_mem_image(img);
        ek_decode *t;
        assert_int_equal(ek_decode_new(&c, &t), 0);
        ek_source_config s = source(0x10);
        s.regs.etm4.configr |= 0x2; /* LSP0 */
        ek_decode_bind_raw(t, ek_decode_add_source(t, &s, "etm", NULL));
        if (eager) {
            assert_int_equal(ek_decode_make_all(t), 0);
            take(t, 1);
            char *got = take_log();
            assert_string_equal(got, "D 10 flow.config\n");
            free(got);
        }
        ek_decode_feed(t, trace, trace_len, 0);
        take(t, 1);
        char *got = take_log();
        if (!eager) assert_true(!strncmp(got, "D 10 flow.config\nP 10 0 I_ASYNC 12\n", 33));
        assert_true(!strncmp(got + (eager ? 0 : 17), "P 10 0 I_ASYNC 12\n", 18));
        assert_int_equal(strstr(got, "flow.config") == NULL, eager);
        free(got);
        ek_decode_free(t);
    }
}

/* The consumer's hooks: the packet hook sees the packets with the flags asked for (and every
 * packet of a watched ID) before the flow decoder has them; the elements hook sees every
 * element once, in order, as its packet is decoded, whatever items the elements then come out
 * in (one packet's, a batch, copies before a diagnostic). */
static void on_pkt_hook(void *ctx, unsigned id, const ek_decode_packet *p)
{
    (void)ctx;
    const ek_etm4_packet *k = p->pkt;
    ek_sbuf_printf(&log_text, "P %02x %llu %s\n", id, (unsigned long long)p->index,
                   ek_etm4_type_name(k->type));
}
static void on_elems_hook(void *ctx, unsigned id, const ek_elem *e, size_t n)
{
    (void)ctx;
    (void)id;
    for (size_t i = 0; i < n; i++)
        log_elem(&e[i], 1);
}

static size_t count_of(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *q = text; (q = strstr(q, what)); q++)
        n++;
    return n;
}

static void test_hooks(void **state)
{
    (void)state;
    uint8_t bad[80], nn[80];
    memcpy(bad, trace, 27);
    bad[27] = 0x08; /* a reserved header: a flow error the reference logs */
    memcpy(bad + 28, trace + 27, trace_len - 27);
    const size_t nbad = trace_len + 1;
    /* atoms N N after the context: b.eq not taken, then an N on the bl after it, which the
     * image check refuses in the same step, after the first range (copied out for the error) */
    memcpy(nn, trace, 25);
    nn[25] = 0xd8;
    memcpy(nn + 26, trace + 29, trace_len - 29);
    const size_t nnn = trace_len - 3;
    const uint32_t flag_sets[] = {EK_DECODE_ELEMS, EK_DECODE_ELEMS | EK_DECODE_BATCH,
                                  EK_DECODE_ELEMS | EK_DECODE_DIAG_ITEMS,
                                  EK_DECODE_PACKETS | EK_DECODE_ELEMS | EK_DECODE_DIAG_ITEMS};
    ref_flow_flags = EK_FLOW_CHK_N_UNCOND_DIR_BR;
    for (size_t k = 0; k < sizeof flag_sets / sizeof flag_sets[0]; k++) {
        for (int damaged = 0; damaged < 3; damaged++) {
            const uint8_t *in = damaged == 2 ? nn : damaged ? bad : trace;
            const size_t nin = damaged == 2 ? nnn : damaged ? nbad : trace_len;
            /* the elements the layers give */
            ref r;
            ref_init(&r, 0x10);
            ref_feed(&r, in, nin, 0, 1);
            ref_end(&r, 1);
            ref_free(&r);
            char *all = take_log();
            ek_sbuf want = EK_SBUF_INIT;
            for (const char *q = all; *q;) {
                const char *e = strchr(q, '\n');
                const size_t len = e ? (size_t)(e - q + 1) : strlen(q);
                if (q[0] == 'E') ek_sbuf_put(&want, q, len);
                q += len;
            }
            free(all);

            ek_decode_config c;
            ek_decode_config_init(&c);
            c.flags = flag_sets[k];
            c.mem = ek_flow_mem_image(img);
            c.packet_hook = on_pkt_hook;
            c.elems_hook = on_elems_hook;
            c.hook_flags = EK_DPKT_CONTEXT;
            c.flow_flags = ref_flow_flags;
            ek_decode *t;
            assert_int_equal(ek_decode_new(&c, &t), 0);
            ek_decode_bind_raw(t, add(t, 0x10));
            ek_decode_feed(t, in, nin, 0);
            size_t taken = 0, diags = 0;
            ek_decode_item it;
            for (int pass = 0; pass < 2; pass++) {
                while (ek_decode_next(t, &it) > 0) {
                    if (it.kind == EK_DI_ELEMS || it.kind == EK_DI_PACKET) taken += it.count;
                    diags += it.kind == EK_DI_DIAG;
                    /* the hook had every element before an item gives it */
                    assert_true(count_of(log_text.p ? log_text.p : "", "E 10 ") >= taken);
                }
                if (!pass) ek_decode_end(t);
            }
            ek_decode_free(t);
            char *got = take_log();
            /* one packet has the flag asked for (the address and context packet at 15); it
             * reached the hook before the elements it helps make (the first after NO_SYNC) */
            assert_int_equal(count_of(got, "P 10 "), 1);
            const char *p15 = strstr(got, "P 10 15 I_ADDR_CTXT_L_64IS0\n");
            assert_non_null(p15);
            assert_true(p15 < strstr(got, "E 10 14 "));
            assert_true(strstr(got, "E 10 0 ") < p15);
            /* the hooked elements, in order, are the layers' */
            ek_sbuf e = EK_SBUF_INIT;
            for (const char *q = got; *q;) {
                const char *x = strchr(q, '\n');
                const size_t len = x ? (size_t)(x - q + 1) : strlen(q);
                if (q[0] == 'E') ek_sbuf_put(&e, q, len);
                q += len;
            }
            assert_string_equal(e.p, want.p);
            assert_int_equal(taken, count_of(want.p, "E 10 "));
            /* (the damaged streams give the errors as items when asked) */
            assert_int_equal(diags > 0, damaged && (flag_sets[k] & EK_DECODE_DIAG_ITEMS));
            ek_sbuf_free(&e);
            ek_sbuf_free(&want);
            free(got);
        }
    }
    ref_flow_flags = 0;
}

/* DSTREAM: records of 504 data bytes and an 8-byte footer. Footers are not trace (indices run
 * on over them) and are shown after their record's items as the lister shows them. */
static void test_dstream_records(void **state)
{
    (void)state;
    static uint8_t data[2 * 504], file[2 * 512 + 20];
    /* the trace at the start of the data, then A-Syncs (zeros + 0x80) to fill it */
    memset(data, 0, sizeof data);
    memcpy(data, trace, trace_len);
    for (size_t i = trace_len + 11; i < sizeof data; i += 12)
        data[i] = 0x80;
    size_t n = 0;
    for (int r = 0; r < 2; r++) {
        memcpy(file + n, data + r * 504, 504);
        n += 504;
        for (int k = 0; k < 8; k++)
            file[n++] = (uint8_t)(0xa0 + r * 8 + k);
    }
    memcpy(file + n, data, 20); /* a last partial record */
    n += 20;

    ref rr;
    ref_init(&rr, 0x10);
    ref_feed(&rr, data, sizeof data, 0, 1);
    ref_feed(&rr, data, 20, sizeof data, 1);
    ref_end(&rr, 1);
    ref_free(&rr);
    char *want = take_log();

    ek_decode *t =
        tree(0, EK_DECODE_MODEL_OCSD,
             EK_DECODE_PACKETS | EK_DECODE_ELEMS | EK_DECODE_DSTREAM | EK_DECODE_RAW_PACKED, 0);
    ek_decode_bind_raw(t, add(t, 0x10));
    ek_decode_feed(t, file, n, 0);
    take(t, 1);
    ek_decode_end(t);
    take(t, 1);
    char *got = take_log();
    /* footers: after each record; the last one is the lister's leftovers: the partial record's
     * first 8 bytes, as it reads footers into the start of its data buffer */
    const char *f1 = "F a0 a1 a2 a3 a4 a5 a6 a7\n", *f2 = "F a8 a9 aa ab ac ad ae af\n",
               *f3 = "F 00 00 00 00 00 00 00 00\n";
    char *p1 = strstr(got, f1), *p2 = strstr(got, f2), *p3 = strstr(got, f3);
    assert_non_null(p1);
    assert_non_null(p2);
    assert_non_null(p3);
    assert_true(p1 < p2 && p2 < p3);
    /* without the footer lines it is the raw decode of the data parts */
    ek_sbuf s = EK_SBUF_INIT;
    for (char *line = strtok(got, "\n"); line; line = strtok(NULL, "\n"))
        if (line[0] != 'F') {
            ek_sbuf_puts(&s, line);
            ek_sbuf_putc(&s, '\n');
        }
    assert_string_equal(s.p, want);
    ek_decode_stats st;
    ek_decode_stats_get(t, &st);
    assert_int_equal(st.input_bytes, sizeof data + 20);
    ek_sbuf_free(&s);
    ek_decode_free(t);
    free(got);
    free(want);
}

/* A protocol plugs in through its table alone: here a toy one whose every byte is a packet
 * ("ITM" for the test, tried before the built-in ITM table), packets only. A source of a protocol
 * without a table is kept, not decoded. */
typedef struct toy_parser {
    const uint8_t *d;
    size_t n, pos;
    uint64_t index;
    uint8_t last;
} toy_parser;
static int toy_init(void *p, const ek_source_config *src, uint32_t compat)
{
    (void)src;
    (void)compat;
    memset(p, 0, sizeof(toy_parser));
    return 0;
}
static void toy_reset(void *p)
{
    memset(p, 0, sizeof(toy_parser));
}
static void toy_feed(void *p, const uint8_t *d, size_t n, uint64_t index)
{
    toy_parser *t = p;
    t->d = d;
    t->n = n;
    t->pos = 0;
    t->index = index;
}
static void toy_eot(void *p)
{
    (void)p;
}
static int toy_next(void *p, ek_decode_packet *out)
{
    toy_parser *t = p;
    if (t->pos >= t->n) return 0;
    memset(out, 0, sizeof *out);
    t->last = t->d[t->pos];
    out->pkt = &t->last;
    out->raw = &t->d[t->pos];
    out->index = t->index + t->pos++;
    out->size = 1;
    return 1;
}
static const ek_decode_proto toy = {
    .size = sizeof(ek_decode_proto),
    .name = "toy",
    .kind = "toy",
    .protocols = 1u << EK_PROTO_ITM,
    .parser_size = sizeof(toy_parser),
    .parser_init = toy_init,
    .parser_reset = toy_reset,
    .parser_feed = toy_feed,
    .parser_eot = toy_eot,
    .parser_next = toy_next,
};

static void test_protocol_table(void **state)
{
    (void)state;
    const ek_decode_proto *const protos[] = {&toy, NULL};
    ek_decode_config c;
    ek_decode_config_init(&c);
    c.frame_flags = EK_DFMT_MEM_ALIGN;
    c.flags = EK_DECODE_PACKETS | EK_DECODE_ELEMS | EK_DECODE_UNDECODED;
    c.protos = protos;
    ek_decode *t;
    assert_int_equal(ek_decode_new(&c, &t), 0);
    ek_source_config itm, stm;
    memset(&itm, 0, sizeof itm);
    itm.protocol = EK_PROTO_ITM;
    itm.trace_id = 0x20;
    stm = itm; /* (a source of a protocol without a table) */
    stm.protocol = EK_PROTO_UNKNOWN;
    stm.trace_id = 0x22;
    assert_int_equal(ek_decode_add_source(t, &itm, "itm", NULL), 0);
    assert_int_equal(ek_decode_add_source(t, &stm, "stm", NULL), 1);
    ek_decode_source_info si;
    assert_int_equal(ek_decode_source_info_get(t, 0, &si), 0);
    assert_ptr_equal(si.proto, &toy);
    assert_int_equal(ek_decode_source_info_get(t, 1, &si), 0);
    assert_null(si.proto);
    /* (the configured table goes before the built-in ITM one) */
    assert_non_null(ek_decode_proto_find(EK_PROTO_ITM));
    assert_null(ek_decode_proto_find(EK_PROTO_UNKNOWN));
    assert_non_null(ek_decode_proto_find(EK_PROTO_ETE));

    uint8_t buf[64];
    const uint8_t d[3] = {0xa1, 0xb2, 0xc3};
    size_t n = frame(buf, 0x20, d, 3);
    n += frame(buf + n, 0x22, d, 3);
    ek_decode_feed(t, buf, n, 0);
    ek_decode_item it;
    ek_sbuf got = EK_SBUF_INIT;
    while (ek_decode_next(t, &it) > 0) {
        if (it.kind == EK_DI_PACKET) {
            assert_int_equal(it.protocol, EK_PROTO_ITM);
            assert_ptr_equal(it.proto, &toy);
            ek_sbuf_printf(&got, "P %02x %02x %llu\n", it.trace_id, *(const uint8_t *)it.packet.pkt,
                           (unsigned long long)it.packet.index);
        } else {
            assert_int_equal(it.kind, EK_DI_UNDECODED);
            ek_sbuf_printf(&got, "U %02x %zu %s\n", it.trace_id, it.len,
                           it.why == EK_DECODE_NO_ID ? "no-id" : "no-source");
        }
    }
    /* (a run's bytes count from its ID byte; the rest of each frame is null-ID padding) */
    assert_string_equal(got.p, "P 20 a1 0\nP 20 b2 1\nP 20 c3 2\nU 00 10 no-id\n"
                               "U 22 3 no-source\nU 00 10 no-id\n");
    ek_sbuf_free(&got);
    ek_decode_free(t);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_raw_single_source),
        cmocka_unit_test(test_packets_or_elements_alone),
        cmocka_unit_test(test_formatted_routing),
        cmocka_unit_test(test_ocsd_reset_and_end),
        cmocka_unit_test(test_perf_model),
        cmocka_unit_test(test_barrier),
        cmocka_unit_test(test_diag_items),
        cmocka_unit_test(test_diag_at_creation),
        cmocka_unit_test(test_hooks),
        cmocka_unit_test(test_dstream_records),
        cmocka_unit_test(test_protocol_table),
    };
    const int rc = tu_run_group(argc, argv, tests, setup, teardown);
    ek_sbuf_free(&log_text);
    return rc;
}
