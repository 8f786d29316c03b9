/* The decode tree's built-in PTM, ETMv3, STM and ITM tables (src/decode/proto_*.c): sources of
 * those protocols are decoded wherever ETMv4 is, their listings come from the ek_list_proto
 * tables, and with EK_DECODE_COMPAT_OCSD the tree stops the data path where OpenCSD 1.8.0's
 * decoders answer with a fatal response (EK_DI_STOP), an empty run of a frame included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/decode.h"
#include "etmkit/elem.h"
#include "etmkit/etm3.h"
#include "etmkit/itm.h"
#include "etmkit/listing.h"
#include "etmkit/ptm.h"
#include "etmkit/snapshot.h"
#include "etmkit/stm.h"
#include "testutil.h"

/* STM: ASYNC, VERSION, M8, C8, D8 (one SWTRACE), a reserved header (0xf0 0x41 at 18), then
 * more trace after it (the crafted case tests/data/ocsd-compat/stm-reserved). */
static const uint8_t STM_BYTES[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                    0xff, 0x0f, 0x0f, 0x30, 0x11, 0x34, 0x02, 0x54, 0xfa,
                                    0x41, 0xb6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                    0xff, 0xff, 0xff, 0x0f, 0x0f, 0x30, 0x74, 0x0c};

static ek_source_config src_of(ek_protocol p, unsigned id)
{
    ek_source_config s;
    memset(&s, 0, sizeof s);
    s.protocol = p;
    s.trace_id = (uint8_t)id;
    s.arch = EK_ARCH_V7A;
    s.profile = EK_PROFILE_A;
    if (p == EK_PROTO_PTM || p == EK_PROTO_ETMV3) {
        s.regs.etm3.etmidr = p == EK_PROTO_PTM ? 0x411CF300u : 0x4114F250u;
        s.regs.etm3.etmtraceidr = id;
    }
    return s;
}

/* Every item of the tree after feeding `data` (raw, one source) and, unless stopped, ending
 * it, as "<kind> <index>" lines (ELEMS: one line per element type), into *got. Returns the
 * STOP item's index + 1, or 0. */
static uint64_t run_raw(ek_decode *t, const uint8_t *data, size_t n, ek_sbuf *got)
{
    uint64_t stop = 0;
    ek_decode_item it;
    ek_decode_feed(t, data, n, 0);
    for (int pass = 0; pass < 2; pass++) {
        while (ek_decode_next(t, &it) > 0) {
            switch (it.kind) {
            case EK_DI_PACKET:
                ek_sbuf_printf(got, "P%llu ", (unsigned long long)it.packet.index);
                for (size_t i = 0; i < it.count; i++)
                    ek_sbuf_printf(got, "E:%s ", ek_elem_type_name(it.elems[i].type));
                break;
            case EK_DI_ELEMS:
                for (size_t i = 0; i < it.count; i++)
                    ek_sbuf_printf(got, "E:%s ", ek_elem_type_name(it.elems[i].type));
                break;
            case EK_DI_DIAG: ek_sbuf_printf(got, "D:%s ", it.diag->kind); break;
            case EK_DI_STOP:
                stop = it.index + 1;
                ek_sbuf_printf(got, "STOP%llu%s ", (unsigned long long)it.index,
                               it.diag ? "+diag" : "");
                break;
            case EK_DI_EOT: ek_sbuf_puts(got, "EOT "); break;
            default: ek_sbuf_printf(got, "?%u ", it.kind); break;
            }
        }
        if (pass == 0) ek_decode_end(t);
    }
    return stop;
}

static ek_decode *raw_tree(ek_protocol p, unsigned id, uint32_t compat)
{
    ek_decode_config c;
    ek_decode_config_init(&c);
    c.flags = EK_DECODE_PACKETS | EK_DECODE_ELEMS | EK_DECODE_DIAG_ITEMS;
    c.compat = compat;
    ek_decode *t;
    assert_int_equal(ek_decode_new(&c, &t), 0);
    ek_source_config s = src_of(p, id);
    assert_int_equal(ek_decode_add_source(t, &s, "src", NULL), 0);
    assert_int_equal(ek_decode_bind_raw(t, 0), 0);
    return t;
}

static void test_tables(void **state)
{
    (void)state;
    const ek_protocol ps[] = {EK_PROTO_PTM, EK_PROTO_ETMV3, EK_PROTO_STM, EK_PROTO_ITM};
    const char *const names[] = {"PTM", "ETMV3", "STM", "ITM"};
    for (size_t i = 0; i < 4; i++) {
        const ek_decode_proto *dp = ek_decode_proto_find(ps[i]);
        assert_non_null(dp);
        assert_true(dp->protocols & (1u << ps[i]));
        assert_non_null(dp->flow_new);
        const ek_list_proto *lp = ek_list_proto_find(ps[i]);
        assert_non_null(lp);
        assert_string_equal(lp->printer_name(ps[i]), names[i]);
        /* a source of the protocol has its table */
        ek_decode_config c;
        ek_decode_config_init(&c);
        ek_decode *t;
        assert_int_equal(ek_decode_new(&c, &t), 0);
        ek_source_config s = src_of(ps[i], 0x10);
        assert_int_equal(ek_decode_add_source(t, &s, "s", NULL), 0);
        ek_decode_source_info si;
        assert_int_equal(ek_decode_source_info_get(t, 0, &si), 0);
        assert_ptr_equal(si.proto, dp);
        ek_decode_free(t);
    }
}

/* The architecture: a reserved STM packet loses sync, decoding goes on to the end. OpenCSD's
 * behaviour (COMPAT_OCSD): its decoder's fatal response stops the data path after the packet;
 * the input processed is what the parser had taken (19 bytes); no end of trace follows. */
static void test_stm_stop(void **state)
{
    (void)state;
    ek_sbuf arch = EK_SBUF_INIT, ocsd = EK_SBUF_INIT;
    ek_decode *t = raw_tree(EK_PROTO_STM, 0x20, 0);
    assert_int_equal(run_raw(t, STM_BYTES, sizeof STM_BYTES, &arch), 0);
    ek_decode_free(t);
    assert_non_null(strstr(arch.p, "P18 "));
    assert_non_null(strstr(arch.p, "EOT"));
    assert_null(strstr(arch.p, "STOP"));

    t = raw_tree(EK_PROTO_STM, 0x20, EK_DECODE_COMPAT_OCSD);
    assert_int_equal(run_raw(t, STM_BYTES, sizeof STM_BYTES, &ocsd), 19 + 1);
    assert_string_equal(ocsd.p, "P0 E:NO_SYNC P11 P13 P15 P16 E:SWTRACE P18 STOP19 ");
    /* nothing more, even with more input, until a reset */
    ek_decode_item it;
    ek_decode_feed(t, STM_BYTES, sizeof STM_BYTES, 0);
    assert_int_equal(ek_decode_next(t, &it), 0);
    ek_decode_end(t);
    assert_int_equal(ek_decode_next(t, &it), 0);
    ek_decode_reset(t);
    ek_decode_feed(t, STM_BYTES, 12, 0);
    int packets = 0;
    while (ek_decode_next(t, &it) > 0)
        packets += it.kind == EK_DI_PACKET;
    assert_true(packets > 0);
    ek_decode_free(t);
    ek_sbuf_free(&arch);
    ek_sbuf_free(&ocsd);
}

/* The ETMv3 decoder's fatal stop comes with the error OpenCSD logs: a DIAG item (listed as its
 * log line), then the STOP item carrying the same error (listed after "Data Path fatal error"
 * without the decoder's name). The crafted snapshot etm3-reserved. */
static void test_etm3_stop_listing(void **state)
{
    (void)state;
    const char *srcdir = getenv("ETMKIT_SRC");
    if (!srcdir) tu_skip("ETMKIT_SRC is not set");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/data/ocsd-compat/etm3-reserved", srcdir);
    ek_snapshot *ss = NULL;
    assert_int_equal(ek_snapshot_open(path, NULL, &ss), 0);
    ek_decode_config c;
    ek_decode_config_init(&c);
    c.flags = EK_DECODE_PACKETS | EK_DECODE_ELEMS | EK_DECODE_DIAG_ITEMS;
    c.compat = EK_DECODE_COMPAT_OCSD;
    ek_decode *t;
    assert_int_equal(ek_decode_new(&c, &t), 0);
    assert_int_equal(ek_decode_add_snapshot_buffer(t, ss, 0), 1);
    const ek_snap_buffer *b = &ss->buffers[0];
    FILE *f = fopen(b->path, "rb");
    assert_non_null(f);
    uint8_t data[4096];
    const size_t n = fread(data, 1, sizeof data, f);
    fclose(f);
    ek_listing l = {.format = EK_LISTING_OCSD, .packets = 1, .monitor = 1, .single_source = 1};
    ek_sbuf out = EK_SBUF_INIT;
    ek_decode_item it;
    int diags = 0, stops = 0;
    ek_decode_feed(t, data, n, 0);
    while (ek_decode_next(t, &it) > 0) {
        ek_list_item(&out, &l, &it);
        diags += it.kind == EK_DI_DIAG;
        if (it.kind == EK_DI_STOP) {
            stops++;
            assert_non_null(it.diag);
            assert_string_equal(it.diag->kind, "etm3.ocsd-reserved");
        }
    }
    ek_decode_end(t);
    assert_int_equal(ek_decode_next(t, &it), 0);
    assert_int_equal(diags, 1);
    assert_int_equal(stops, 1);
    const char *d = strstr(out.p, "DCD_ETMV3 : 0x0013 (OCSD_ERR_BAD_PACKET_SEQ)");
    assert_non_null(d);
    const char *fatal = strstr(d, "Reserved or unknown packet ID.Trace Packet Lister : Data Path "
                                  "fatal error\n0x0013 (OCSD_ERR_BAD_PACKET_SEQ)");
    assert_non_null(fatal);
    assert_null(strstr(out.p, "END OF TRACE"));
    ek_sbuf_free(&out);
    ek_decode_free(t);
    ek_snapshot_free(ss);
}

/* A frame whose byte 12 changes the ID (byte 13 to the old one) and whose byte 14 changes it
 * again ends with an empty run for the ID of byte 12: with COMPAT_OCSD, when that ID has a
 * decoder, the data path stops at the end of the frame; else the run carries nothing. */
static void test_empty_run(void **state)
{
    (void)state;
    uint8_t fr[32];
    memset(fr, 0, sizeof fr);
    fr[0] = 0x21;  /* ID 0x10, then data bytes 0 */
    fr[12] = 0x41; /* ID 0x20 ... */
    fr[13] = 0x00; /* ... byte 13 still 0x10's (flag bit 6) */
    fr[14] = 0x21; /* ID 0x10 again: 0x20's run is empty */
    fr[15] = 0x40;
    fr[16] = 0x41; /* a second frame: data (zeros) for 0x20 */
    for (int compat = 0; compat < 2; compat++) {
        ek_decode_config c;
        ek_decode_config_init(&c);
        c.frame_flags = EK_DFMT_MEM_ALIGN;
        c.flags = EK_DECODE_PACKETS;
        c.compat = compat ? EK_DECODE_COMPAT_OCSD : 0;
        ek_decode *t;
        assert_int_equal(ek_decode_new(&c, &t), 0);
        ek_source_config a = src_of(EK_PROTO_STM, 0x10), b = src_of(EK_PROTO_ITM, 0x20);
        assert_int_equal(ek_decode_add_source(t, &a, "stm", NULL), 0);
        assert_int_equal(ek_decode_add_source(t, &b, "itm", NULL), 1);
        ek_decode_feed(t, fr, sizeof fr, 0);
        ek_decode_item it;
        int stops = 0, itm_packets = 0;
        uint64_t at = 0;
        while (ek_decode_next(t, &it) > 0) {
            if (it.kind == EK_DI_STOP) {
                stops++;
                at = it.index;
                assert_int_equal(it.trace_id, 0x20);
                assert_null(it.diag);
            }
            if (it.kind == EK_DI_PACKET && it.trace_id == 0x20) itm_packets++;
        }
        assert_int_equal(stops, compat ? 1 : 0);
        if (compat) {
            assert_int_equal(at, 16); /* the end of the frame */
            assert_int_equal(itm_packets, 0);
        } else {
            assert_true(itm_packets > 0);
        }
        ek_decode_free(t);
    }
}

/* ITM without sync packets through the tree (issue 33 item 3): the source's
 * EK_SRC_ITM_ASSUME_SYNC, given in its configuration or by ek_decode_config.source_flags for
 * every source, reaches the ITM parser and decoder; without it nothing is decoded. */
static void test_itm_assume_sync(void **state)
{
    (void)state;
    /* SWIT port 3 0xbb, DWT PC sample, a local time stamp: no A-Sync */
    static const uint8_t itm[] = {0x19, 0xbb, 0x17, 0x00, 0x10, 0x00, 0x08, 0x30};
    for (int how = 0; how < 3; how++) {
        ek_decode_config c;
        ek_decode_config_init(&c);
        c.flags = EK_DECODE_PACKETS | EK_DECODE_ELEMS;
        if (how == 2) c.source_flags = EK_SRC_ITM_ASSUME_SYNC;
        ek_decode *t;
        assert_int_equal(ek_decode_new(&c, &t), 0);
        ek_source_config s = src_of(EK_PROTO_ITM, 0x20);
        if (how == 1) s.flags = EK_SRC_ITM_ASSUME_SYNC;
        const int src = ek_decode_add_source(t, &s, "itm", NULL);
        assert_int_equal(src, 0);
        assert_int_equal(ek_decode_bind_raw(t, src), 0);
        ek_decode_source_info si;
        assert_int_equal(ek_decode_source_info_get(t, 0, &si), 0);
        assert_int_equal(si.cfg->flags, how ? EK_SRC_ITM_ASSUME_SYNC : 0);
        ek_sbuf got = EK_SBUF_INIT;
        run_raw(t, itm, sizeof itm, &got);
        ek_decode_free(t);
        const char *want =
            how ? "P0 E:NO_SYNC E:ITMTRACE P2 E:ITMTRACE P7 E:ITMTRACE " : "P0 E:NO_SYNC ";
        if (!got.p || strncmp(got.p, want, strlen(want))) fail_msg("%d: %s", how, got.p);
        ek_sbuf_free(&got);
    }
}

/* The packet lines of the protocols in etmkit's text and JSON formats, from the lister's. */
static void test_text_json(void **state)
{
    (void)state;
    const uint8_t ptm[] = {0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x0c};
    for (int fmt = 0; fmt < 2; fmt++) {
        ek_decode *t = raw_tree(EK_PROTO_PTM, 0x13, 0);
        ek_listing l = {.format = fmt ? EK_LISTING_JSON : EK_LISTING_TEXT, .packets = 1};
        ek_sbuf out = EK_SBUF_INIT;
        ek_decode_item it;
        ek_decode_feed(t, ptm, sizeof ptm, 0);
        while (ek_decode_next(t, &it) > 0)
            ek_list_item(&out, &l, &it);
        if (fmt)
            assert_string_equal(out.p,
                                "{\"idx\":0,\"id\":19,\"type\":\"ASYNC\",\"raw\":\"000000000080\","
                                "\"desc\":\"ASYNC : Alignment Synchronisation Packet; \"}\n"
                                "{\"idx\":0,\"id\":19,\"type\":\"no_sync\",\"reason\":"
                                "\"init-decoder\"}\n"
                                "{\"idx\":6,\"id\":19,\"type\":\"TRIGGER\",\"raw\":\"0c\","
                                "\"desc\":\"TRIGGER : Trigger Event packet; \"}\n");
        else
            assert_string_equal(out.p,
                                "         0  13  ASYNC : Alignment Synchronisation Packet;  [00 00 "
                                "00 00 00 80]\n         0  13  > NO_SYNC            init-decoder\n"
                                "         6  13  TRIGGER : Trigger Event packet;  [0c]\n");
        ek_sbuf_free(&out);
        ek_decode_free(t);
    }
}

/* The packet indices of a raw source fed two blocks (at 100 and 200, as frames of other
 * sources between them would leave them), as "P<index> " items. */
static void run_two_blocks(ek_protocol p, unsigned id, uint32_t compat, const uint8_t *a, size_t na,
                           const uint8_t *b, size_t nb, ek_sbuf *got)
{
    ek_decode *t = raw_tree(p, id, compat);
    ek_decode_item it;
    for (int blk = 0; blk < 3; blk++) {
        if (blk == 0) ek_decode_feed(t, a, na, 100);
        if (blk == 1) ek_decode_feed(t, b, nb, 200);
        if (blk == 2) ek_decode_end(t);
        while (ek_decode_next(t, &it) > 0)
            if (it.kind == EK_DI_PACKET)
                ek_sbuf_printf(got, "P%llu ", (unsigned long long)it.packet.index);
    }
    ek_decode_free(t);
}

/* The tree gives the parsers OpenCSD's index accounting (EK_PTM_OCSD_UNSYNC,
 * EK_STM_OCSD_SYNC_INDEX) only with EK_DECODE_COMPAT_OCSD: the same bytes as
 * test_ptm_unsync_held_zeros and test_stm_async_index_after_cleared_run. */
static void test_unsync_index_compat(void **state)
{
    (void)state;
    static const uint8_t pa[] = {0x11, 0x22, 0x00, 0x00};
    static const uint8_t pb[] = {0x00, 0x33, 0x00, 0x00, 0x00, 0x00, 0x00,
                                 0x80, 0x08, 0x00, 0x80, 0x00, 0x00, 0x20};
    static const uint8_t sa[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    static const uint8_t sb[] = {0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00};
    ek_sbuf got = EK_SBUF_INIT;
    run_two_blocks(EK_PROTO_PTM, 0x13, 0, pa, sizeof pa, pb, sizeof pb, &got);
    assert_string_equal(got.p, "P100 P102 P202 P208 ");
    ek_sbuf_reset(&got);
    run_two_blocks(EK_PROTO_PTM, 0x13, EK_DECODE_COMPAT_OCSD, pa, sizeof pa, pb, sizeof pb, &got);
    assert_string_equal(got.p, "P100 P102 P104 P108 P208 ");
    ek_sbuf_reset(&got);
    run_two_blocks(EK_PROTO_STM, 0x20, 0, sa, sizeof sa, sb, sizeof sb, &got);
    assert_string_equal(got.p, "P100 P200 P201 P212 P213 ");
    ek_sbuf_reset(&got);
    run_two_blocks(EK_PROTO_STM, 0x20, EK_DECODE_COMPAT_OCSD, sa, sizeof sa, sb, sizeof sb, &got);
    assert_string_equal(got.p, "P100 P200 P208 P212 P213 ");
    ek_sbuf_free(&got);
}

/* What the generic view says of a packet, restated from each protocol's own packet (the
 * meaning its header documents), to check the adapters' vocabularies (proto_shape.h). */
static uint32_t expected_flags(ek_protocol p, const void *pkt, const char *(**type_name)(unsigned),
                               unsigned *type, unsigned *err_type, int *two_names)
{
    uint32_t fl = 0;
    if (p == EK_PROTO_PTM || p == EK_PROTO_ETMV3) {
        const int ptm = p == EK_PROTO_PTM;
        const ek_ptm_packet *a = pkt;
        const ek_etm3_packet *b = pkt;
        const unsigned t = ptm ? a->type : b->type, f = ptm ? a->flags : b->flags;
        if (t == (ptm ? EK_PTM_NOTSYNC : EK_ETM3_NOTSYNC)) fl |= EK_DPKT_NOTSYNC;
        if (ptm && (f & EK_PTM_PF_NOTSYNC_MORE)) fl |= EK_DPKT_REPEAT;
        if ((f & (ptm ? EK_PTM_PF_ERROR : EK_ETM3_PF_ERROR)) && !(fl & EK_DPKT_NOTSYNC)) {
            fl |= EK_DPKT_ERROR;
            if (t == (ptm ? EK_PTM_INCOMPLETE_EOT : EK_ETM3_INCOMPLETE_EOT))
                fl |= EK_DPKT_TRUNCATED;
        }
        if (t == (ptm ? EK_PTM_TIMESTAMP : EK_ETM3_TIMESTAMP)) fl |= EK_DPKT_TIMESTAMP;
        const int cid = ptm ? a->cid_updated : b->cid_updated;
        const int vmid = ptm ? a->vmid_updated : b->vmid_updated;
        if ((ptm ? a->ctx_updated : b->ctx_updated) || cid || vmid) {
            fl |= EK_DPKT_CONTEXT | (cid ? EK_DPKT_CID_VALID : 0) | (vmid ? EK_DPKT_VMID_VALID : 0);
        }
        *type_name = ptm ? ek_ptm_type_name : ek_etm3_type_name;
        *type = t;
        *err_type = ptm ? a->err_type : b->err_type;
        *two_names = t == (ptm ? EK_PTM_BAD_SEQUENCE : EK_ETM3_BAD_SEQUENCE) ||
                     t == (ptm ? EK_PTM_INCOMPLETE_EOT : EK_ETM3_INCOMPLETE_EOT);
    } else if (p == EK_PROTO_STM) {
        const ek_stm_packet *k = pkt;
        if (k->type == EK_STM_NOTSYNC) fl |= EK_DPKT_NOTSYNC;
        if (k->type == EK_STM_INCOMPLETE_EOT) fl |= EK_DPKT_ERROR | EK_DPKT_TRUNCATED;
        if (k->type == EK_STM_BAD_SEQUENCE || k->type == EK_STM_RESERVED) fl |= EK_DPKT_ERROR;
        if (k->has_ts) fl |= EK_DPKT_TIMESTAMP;
        *type_name = ek_stm_type_name;
        *type = k->type;
        *err_type = k->err_type;
        *two_names = k->type == EK_STM_BAD_SEQUENCE || k->type == EK_STM_INCOMPLETE_EOT;
    } else {
        const ek_itm_packet *k = pkt;
        if (k->type == EK_ITM_PKT_NOTSYNC) fl |= EK_DPKT_NOTSYNC;
        if (!(k->flags & EK_ITM_PF_DECODE)) fl |= EK_DPKT_REPEAT;
        if ((k->flags & EK_ITM_PF_ERROR) && k->type != EK_ITM_PKT_NOTSYNC) {
            fl |= EK_DPKT_ERROR;
            if (k->type == EK_ITM_PKT_INCOMPLETE_EOT) fl |= EK_DPKT_TRUNCATED;
        }
        *type_name = ek_itm_type_name;
        *type = k->type;
        *err_type = k->err_type;
        *two_names = k->type == EK_ITM_PKT_BAD_SEQUENCE || k->type == EK_ITM_PKT_INCOMPLETE_EOT;
    }
    return fl;
}

/* The generic view of every packet the PTM, ETMv3, STM and ITM parsers make of pseudo-random
 * bytes (and of their truncated end), with and without OpenCSD's behaviours: its flags, size,
 * bytes, index and names are the packet's own, as its protocol means them. */
static void test_generic_view(void **state)
{
    (void)state;
    const ek_protocol ps[] = {EK_PROTO_PTM, EK_PROTO_ETMV3, EK_PROTO_STM, EK_PROTO_ITM};
    enum { N = 1 << 16 };
    uint8_t *bytes = malloc(N);
    assert_non_null(bytes);
    for (size_t i = 0; i < 4; i++) {
        for (uint32_t compat = 0; compat <= EK_DECODE_COMPAT_OCSD;
             compat += EK_DECODE_COMPAT_OCSD) {
            uint64_t x = 0x9e3779b97f4a7c15ull + i;
            for (size_t j = 0; j < N; j++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                bytes[j] = (uint8_t)x;
            }
            /* a synchronisation sequence every 256 bytes (PTM, ETMv3 A-Sync and ITM
             * synchronisation: zeros, then 0x80; STM: 21 or more 0xf nibbles, then 0x0) */
            static const uint8_t async[] = {0, 0, 0, 0, 0, 0x80};
            static const uint8_t stm_async[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                                0xff, 0xff, 0xff, 0xff, 0xff, 0x0f};
            for (size_t j = 0; j + 256 <= N; j += 256) {
                if (ps[i] == EK_PROTO_STM)
                    memcpy(bytes + j, stm_async, sizeof stm_async);
                else
                    memcpy(bytes + j, async, sizeof async);
            }
            const ek_decode_proto *dp = ek_decode_proto_find(ps[i]);
            assert_non_null(dp);
            void *parser = calloc(1, dp->parser_size);
            assert_non_null(parser);
            const ek_source_config s = src_of(ps[i], 0x10);
            assert_int_equal(dp->parser_init(parser, &s, compat), 0);
            size_t packets = 0, kinds = 0;
            uint32_t seen[32];
            for (size_t off = 0; off <= N; off += 4096) {
                if (off < N)
                    dp->parser_feed(parser, bytes + off, 4096, off);
                else
                    dp->parser_eot(parser);
                ek_decode_packet gp;
                memset(&gp, 0, sizeof gp);
                while (dp->parser_next(parser, &gp) > 0) {
                    const char *(*type_name)(unsigned);
                    unsigned type, err_type;
                    int two;
                    const uint32_t want =
                        expected_flags(ps[i], gp.pkt, &type_name, &type, &err_type, &two);
                    assert_int_equal(gp.flags, want);
                    assert_string_equal(dp->packet_name(gp.pkt, 0), type_name(type));
                    if (two)
                        assert_string_equal(dp->packet_name(gp.pkt, 1), type_name(err_type));
                    else
                        assert_null(dp->packet_name(gp.pkt, 1));
                    assert_true(gp.index <= off + 4096);
                    assert_true(gp.raw != NULL || gp.size == 0);
                    size_t k = 0;
                    while (k < kinds && seen[k] != want)
                        k++;
                    if (k == kinds && kinds < 32) seen[kinds++] = want;
                    packets++;
                    memset(&gp, 0, sizeof gp);
                }
            }
            /* (not a vacuous run: packets, and more than one kind of them) */
            assert_true(packets > 100);
            assert_true(kinds >= 3);
            free(parser);
        }
    }
    free(bytes);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables),
        cmocka_unit_test(test_generic_view),
        cmocka_unit_test(test_stm_stop),
        cmocka_unit_test(test_unsync_index_compat),
        cmocka_unit_test(test_etm3_stop_listing),
        cmocka_unit_test(test_empty_run),
        cmocka_unit_test(test_text_json),
        cmocka_unit_test(test_itm_assume_sync),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
