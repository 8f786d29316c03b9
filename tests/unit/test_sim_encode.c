/* The ETMv4/ETE encoder and the CoreSight formatter of the simulator, checked against their
 * siblings: everything the encoder writes is parsed back by the packet parser (etmkit/etm4.h)
 * and must come out as the same packets; everything the formatter writes is de-formatted
 * (etmkit/frame.h) back into the same per-trace-ID byte streams. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "sim/enc_etm4.h"
#include "etmkit/etm4.h"
#include "etmkit/frame.h"
#include "sim/rng.h"
#include "sim/sim.h"
#include "testutil.h"

typedef struct rec {
    ek_etm4_enc_pkt v[200000];
    size_t n;
} rec;

static void on_pkt(void *ctx, const ek_etm4_enc_pkt *p)
{
    rec *r = ctx;
    if (r->n < sizeof(r->v) / sizeof(r->v[0])) r->v[r->n++] = *p;
}

typedef struct stream {
    ek_etm4_enc e;
    uint8_t *buf;
    size_t cap;
    rec *r;
    sim_rng rng;
} stream;

static void need(stream *s)
{
    if (s->e.cap - s->e.len < EK_ETM4_ENC_MAX_CALL) {
        s->cap *= 2;
        s->buf = realloc(s->buf, s->cap);
        assert_non_null(s->buf);
        s->e.out = s->buf;
        s->e.cap = s->cap;
    }
}

static void open_stream(stream *s, ek_source_config *cfg, int ete, uint32_t configr, uint64_t seed)
{
    memset(s, 0, sizeof(*s));
    ek_etm4_enc_default_regs(cfg, ete, 0x10, configr);
    assert_int_equal(ek_etm4_enc_init(&s->e, cfg), 0);
    s->cap = 4096;
    s->buf = malloc(s->cap);
    s->r = calloc(1, sizeof(rec));
    assert_non_null(s->buf);
    assert_non_null(s->r);
    s->e.out = s->buf;
    s->e.cap = s->cap;
    s->e.on_packet = on_pkt;
    s->e.cb_ctx = s->r;
    s->rng.s = seed;
}

static uint64_t pick_addr(stream *s, uint64_t prev, const uint64_t *recent)
{
    switch (sim_rng_below(&s->rng, 6)) {
    case 0: return recent[sim_rng_below(&s->rng, 3)]; /* exact match candidates */
    case 1: return (prev & ~0x1FFull) | ((uint64_t)sim_rng_below(&s->rng, 128) << 2);
    case 2: return (prev & ~0x1FFFFull) | ((uint64_t)sim_rng_below(&s->rng, 1u << 15) << 2);
    case 3: return (prev & ~0xFFFFFFFFull) | ((uint64_t)sim_rng_next(&s->rng) & 0xFFFFFFFCull);
    case 4: return 0xffff800008000000ull + ((sim_rng_next(&s->rng) & 0xFFFFFFull) << 2);
    default: return (sim_rng_next(&s->rng) & 0x0000FFFFFFFFFFFCull);
    }
}

/* A random but legal packet stream. */
static void random_stream(stream *s, int ete, int n_ops)
{
    ek_etm4_enc *e = &s->e;
    ek_etm4_enc_ctx ctx = {.el = 0, .sf = 1, .ns = 1, .cid = 1000, .vmid = 0};
    uint64_t addr = 0x400000, recent[3] = {0x400000, 0x400000, 0x400000};
    uint64_t ts = 1000000000;
    need(s);
    ek_etm4_enc_sync(e);
    need(s);
    ek_etm4_enc_trace_on(e);
    need(s);
    ek_etm4_enc_address(e, addr, &ctx);
    for (int i = 0; i < n_ops; i++) {
        need(s);
        unsigned op = sim_rng_below(&s->rng, 100);
        if (op < 55) {
            int taken = sim_rng_chance(&s->rng, 160);
            ek_etm4_enc_atom(e, taken);
            if (taken && sim_rng_chance(&s->rng, 40)) ek_etm4_enc_push_return(e, addr + 4);
        } else if (op < 75) {
            addr = pick_addr(s, addr, recent);
            if (ek_etm4_enc_indirect_target(e, addr, NULL) == 0) {
                recent[2] = recent[1];
                recent[1] = recent[0];
                recent[0] = addr;
            }
        } else if (op < 80) {
            ctx.cid = 1000 + sim_rng_below(&s->rng, 4);
            ctx.el = (uint8_t)sim_rng_below(&s->rng, 2);
            addr = pick_addr(s, addr, recent);
            ek_etm4_enc_address(e, addr, &ctx);
        } else if (op < 85) {
            static const unsigned types[] = {0x2, 0x3, 0xA, 0xB, 0xC, 0xE, 0xF};
            addr = pick_addr(s, addr, recent);
            ek_etm4_enc_exception(e, types[sim_rng_below(&s->rng, 7)], addr);
        } else if (op < 88) {
            ek_etm4_enc_exception_return(e);
        } else if (op < 93) {
            ts += 1 + sim_rng_below(&s->rng, sim_rng_chance(&s->rng, 30) ? 1u << 30 : 300);
            ek_etm4_enc_timestamp(e, ts, sim_rng_below(&s->rng, 1u << 12) + 0x100);
        } else if (op < 95 && e->cc_trace) {
            ek_etm4_enc_cycle_count(e, 0x100 + sim_rng_below(&s->rng, 5000));
        } else if (op < 97) {
            ek_etm4_enc_trace_on(e);
            need(s);
            ek_etm4_enc_address(e, addr, &ctx);
        } else {
            ek_etm4_enc_sync(e);
            need(s);
            ek_etm4_enc_address(e, addr, &ctx);
        }
    }
    need(s);
    ek_etm4_enc_flush(e);
    (void)ete;
}

static int parsed_type_ok(ek_etm4_enc_kind k, unsigned t)
{
    switch (k) {
    case EK_ENC_ASYNC: return t == EK_ETM4_ASYNC;
    case EK_ENC_TRACE_INFO: return t == EK_ETM4_TRACE_INFO;
    case EK_ENC_TRACE_ON: return t == EK_ETM4_TRACE_ON;
    case EK_ENC_ATOM: return t >= EK_ETM4_ATOM_F1 && t <= EK_ETM4_ATOM_F6;
    case EK_ENC_ADDR:
        return t == EK_ETM4_ADDR_MATCH || t == EK_ETM4_ADDR_S_IS0 || t == EK_ETM4_ADDR_L_32IS0 ||
               t == EK_ETM4_ADDR_L_64IS0;
    case EK_ENC_ADDR_CTXT: return t == EK_ETM4_ADDR_CTXT_L_32IS0 || t == EK_ETM4_ADDR_CTXT_L_64IS0;
    case EK_ENC_CTXT: return t == EK_ETM4_CTXT;
    case EK_ENC_EXCEPT: return t == EK_ETM4_EXCEPT;
    case EK_ENC_EXCEPT_RTN: return t == EK_ETM4_EXCEPT_RTN;
    case EK_ENC_TIMESTAMP: return t == EK_ETM4_TIMESTAMP;
    case EK_ENC_CYCLE_COUNT: return t == EK_ETM4_CCNT_F1;
    case EK_ENC_OVERFLOW: return t == EK_ETM4_OVERFLOW;
    default: return 0;
    }
}

static void roundtrip(int ete, uint32_t configr, uint64_t seed, int n_ops)
{
    ek_source_config cfg;
    stream s;
    open_stream(&s, &cfg, ete, configr, seed);
    random_stream(&s, ete, n_ops);
    ek_etm4_config pcfg;
    assert_int_equal(ek_etm4_config_from_source(&pcfg, &cfg), 0);
    ek_etm4_parser *p = malloc(sizeof(*p));
    assert_non_null(p);
    ek_etm4_parser_init(p, &pcfg);
    /* feed in random-sized blocks to exercise packets split across blocks */
    size_t pos = 0, k = 0;
    const ek_etm4_packet *pk;
    while (pos < s.e.len) {
        size_t n = 1 + sim_rng_below(&s.rng, 97);
        if (n > s.e.len - pos) n = s.e.len - pos;
        ek_etm4_feed(p, s.buf + pos, n, pos);
        while (ek_etm4_next(p, &pk) > 0) {
            assert_true(k < s.r->n);
            const ek_etm4_enc_pkt *x = &s.r->v[k++];
            if (!parsed_type_ok(x->kind, pk->type))
                fail_msg("packet %zu at %llu: encoder wrote kind %d, parser read %s", k - 1,
                         (unsigned long long)x->offset, x->kind, ek_etm4_type_name(pk->type));
            assert_int_equal(pk->index, x->offset);
            assert_int_equal(pk->size, x->len);
            switch (x->kind) {
            case EK_ENC_ATOM:
                assert_int_equal(pk->atom_num, x->natoms);
                assert_int_equal(pk->atom_bits & ((1ull << x->natoms) - 1), x->atom_bits);
                break;
            case EK_ENC_ADDR:
            case EK_ENC_ADDR_CTXT:
                assert_int_equal(pk->addr.val, x->addr);
                if (x->kind == EK_ENC_ADDR_CTXT) {
                    assert_int_equal(pk->ctx.el, x->ctx.el);
                    if (configr & EK_TRCCONFIGR_CID) assert_int_equal(pk->ctx.cid, x->ctx.cid);
                }
                break;
            case EK_ENC_EXCEPT:
                assert_int_equal(pk->exc.type, x->exc_type);
                assert_int_equal(pk->exc.addr_interp, 1);
                break;
            case EK_ENC_TIMESTAMP:
                assert_int_equal(pk->timestamp, x->ts);
                if (configr & EK_TRCCONFIGR_CCI) assert_int_equal(pk->cycle_count, x->cc);
                break;
            case EK_ENC_CYCLE_COUNT: assert_int_equal(pk->cycle_count, x->cc); break;
            default: break;
            }
        }
        pos += n;
    }
    ek_etm4_eot(p);
    while (ek_etm4_next(p, &pk) > 0)
        fail_msg("extra packet %s at end of stream", ek_etm4_type_name(pk->type));
    assert_int_equal(k, s.r->n);
    free(p);
    free(s.buf);
    free(s.r);
}

static void test_roundtrip_etmv4(void **st)
{
    (void)st;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        roundtrip(0, EK_TRCCONFIGR_CID | EK_TRCCONFIGR_TS, seed, 20000);
        roundtrip(0, 0, seed + 100, 20000);
        roundtrip(0,
                  EK_TRCCONFIGR_CID | EK_TRCCONFIGR_TS | EK_TRCCONFIGR_RS | EK_TRCCONFIGR_CCI |
                      EK_TRCCONFIGR_VMID,
                  seed + 200, 20000);
    }
}

static void test_roundtrip_ete(void **st)
{
    (void)st;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        roundtrip(1, EK_TRCCONFIGR_CID | EK_TRCCONFIGR_TS, seed + 300, 20000);
        roundtrip(1, EK_TRCCONFIGR_CID | EK_TRCCONFIGR_TS | EK_TRCCONFIGR_CCI, seed + 400, 20000);
    }
}

/* A few encodings written out by hand from the ETMv4 architecture. */
static void test_known_bytes(void **st)
{
    (void)st;
    ek_source_config cfg;
    stream s;
    open_stream(&s, &cfg, 0, EK_TRCCONFIGR_CID, 9);
    ek_etm4_enc *e = &s.e;
    ek_etm4_enc_sync(e);
    static const uint8_t async_tinfo[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x01, 0x01, 0x00};
    assert_memory_equal(s.buf, async_tinfo, sizeof(async_tinfo));
    e->len = 0;
    ek_etm4_enc_ctx c = {.el = 0, .sf = 1, .ns = 1, .cid = 0x4353};
    ek_etm4_enc_address(e, 0x582b2b1000ull, &c);
    static const uint8_t actx[] = {0x85, 0x00, 0x08, 0x2b, 0x2b, 0x58, 0x00,
                                   0x00, 0x00, 0xb0, 0x53, 0x43, 0x00, 0x00};
    assert_memory_equal(s.buf, actx, sizeof(actx));
    e->len = 0;
    ek_etm4_enc_address(e, 0x582b2b10a4ull, NULL); /* 9 low bits differ: short, one byte */
    assert_int_equal(e->len, 2);
    assert_int_equal(s.buf[0], 0x95);
    assert_int_equal(s.buf[1], (0xa4 >> 2) & 0x7f);
    e->len = 0;
    ek_etm4_enc_address(e, 0x582b2b1000ull, NULL); /* back to the first: exact match #1 */
    assert_int_equal(e->len, 1);
    assert_int_equal(s.buf[0], 0x91);
    e->len = 0;
    for (int i = 0; i < 9; i++)
        ek_etm4_enc_atom(e, 1);
    ek_etm4_enc_atom(e, 0);
    ek_etm4_enc_flush(e); /* 9 E then N: format 6 */
    assert_int_equal(e->len, 1);
    assert_int_equal(s.buf[0], 0xE0 | (9 - 3));
    e->len = 0;
    ek_etm4_enc_exception(e, EK_ETM4_EXC_IRQ, 0x582b2b1000ull);
    assert_int_equal(s.buf[0], 0x06);
    assert_int_equal(s.buf[1], 0x1d); /* IRQ, return address follows */
    assert_int_equal(s.buf[2], 0x90); /* exact match: it was the last address */
    free(s.buf);
    free(s.r);
}

/* Formatter -> deformatter: random chunks of several trace IDs, with and without the ground
 * truth bookkeeping (different code paths), come back as the same streams. */
static void test_formatter(void **st)
{
    (void)st;
    for (int truth = 0; truth < 2; truth++) {
        sim_sink k;
        sim_sink_init(&k, SIM_SINK_ETR, 0, 1u << 20, truth);
        sim_rng rng = {.s = 77};
        enum { NID = 5 };
        uint8_t *want[NID];
        size_t nwant[NID] = {0};
        for (int i = 0; i < NID; i++)
            want[i] = malloc(1 << 16);
        for (int c = 0; c < 2000; c++) {
            int id = sim_rng_below(&rng, NID);
            uint8_t chunk[64];
            size_t n = 1 + sim_rng_below(&rng, 63);
            if (nwant[id] + n > (1 << 16)) break;
            for (size_t j = 0; j < n; j++)
                chunk[j] = (uint8_t)sim_rng_next(&rng);
            memcpy(want[id] + nwant[id], chunk, n);
            sim_sink_write(NULL, &k, 0x10 + 2 * id, chunk, n, nwant[id], k.owner);
            nwant[id] += n;
        }
        sim_sink_flush(&k);
        assert_true(k.frames * 16 <= k.hw_size);
        ek_deformatter d;
        ek_dfmt_init(&d, EK_DFMT_MEM_ALIGN);
        ek_dfmt_feed(&d, k.hw, k.frames * 16, 0);
        size_t got[NID] = {0};
        ek_dfmt_item it;
        while (ek_dfmt_next(&d, &it) > 0) {
            assert_int_equal(it.kind, EK_DFMT_DATA);
            if (it.id == 0) continue; /* padding */
            int id = (it.id - 0x10) / 2;
            assert_true(id >= 0 && id < NID);
            assert_true(got[id] + it.len <= nwant[id]);
            assert_memory_equal(it.data, want[id] + got[id], it.len);
            got[id] += it.len;
        }
        for (int i = 0; i < NID; i++) {
            assert_int_equal(got[i], nwant[i]);
            free(want[i]);
        }
        sim_sink_free(&k);
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_bytes),
        cmocka_unit_test(test_roundtrip_etmv4),
        cmocka_unit_test(test_roundtrip_ete),
        cmocka_unit_test(test_formatter),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
