/* Fuzz target: the instruction-flow decoder (src/flow/) fed by the ETMv4/ETE packet parser
 * through the decode tree (one raw source), over a fixed small code image, with every element
 * formatter and the flow errors the reference logs as in-order items.
 *
 * Input: byte 0 = configuration (etm4_configs.h: base in bits 0-2, bit 3 XORs 16 more input
 * bytes into the registers); byte 1 = decoder flags (EK_FLOW_* checks, source-address split,
 * block cache off; bit 7: reset the decoder half-way); the rest is the trace stream.
 *
 * Code image (built once): A64 code at 0x1000 (loops, calls, returns, indirect branches,
 * exception instructions), the same at 0xffffffc000080000 (kernel-style addresses),
 * pseudo-random words at 0x8000 (every encoding the classifier might meet, also as T32/A32),
 * and a 6-byte region at 0x20000 (shorter than one instruction fetch).
 * Checks: elements carry the decoder's trace ID and an index inside the stream, instruction
 * ranges are ordered and end inside the image, the number of elements per packet is bounded.
 */
#include <stdlib.h>
#include <string.h>

#include "etm4_configs.h"
#include "etmkit/decode.h"
#include "etmkit/elem.h"
#include "etmkit/etm4.h"
#include "etmkit/flow.h"
#include "etmkit/sbuf.h"
#include "fuzz_common.h"

#define RAND_BASE 0x8000u
#define RAND_SIZE 0x2000u
#define KBASE     0xffffffc000080000ull

static const uint32_t a64_code[] = {
    0xd503201f, /* 0x1000 nop */
    0x91000400, /* add x0, x0, #1 */
    0xf100281f, /* cmp x0, #10 */
    0x54ffffa1, /* b.ne 0x1004 */
    0x94000006, /* bl 0x1028 */
    0xb4000040, /* cbz x0, +8 */
    0x37080040, /* tbnz w0, #1, +8 */
    0xd63f0020, /* blr x1 */
    0xd61f0040, /* br x2 */
    0x17fffff7, /* b 0x1000 */
    0xd2800021, /* 0x1028 mov x1, #1 */
    0xd4000001, /* svc #0 */
    0xd5033fdf, /* isb */
    0xd65f03c0, /* ret */
    0xd69f03e0, /* eret */
    0xd503207f, /* wfi */
};

static uint8_t code[sizeof a64_code];
static uint8_t rnd[RAND_SIZE];
static const uint8_t tiny[6] = {0x1f, 0x20, 0x03, 0xd5, 0xc0, 0x03};

static int find(void *ctx, uint64_t addr, uint32_t space, uint8_t trace_id, ek_mem_span *out)
{
    (void)ctx;
    (void)space;
    (void)trace_id;
    if (addr >= 0x1000 && addr < 0x1000 + sizeof code) {
        *out = (ek_mem_span){0x1000, sizeof code, code};
        return 1;
    }
    if (addr >= KBASE && addr - KBASE < sizeof code) {
        *out = (ek_mem_span){KBASE, sizeof code, code};
        return 1;
    }
    if (addr >= RAND_BASE && addr < RAND_BASE + RAND_SIZE) {
        *out = (ek_mem_span){RAND_BASE, RAND_SIZE, rnd};
        return 1;
    }
    if (addr >= 0x20000 && addr < 0x20000 + sizeof tiny) {
        *out = (ek_mem_span){0x20000, sizeof tiny, tiny};
        return 1;
    }
    return 0;
}

static int in_image(uint64_t a)
{
    return (a >= 0x1000 && a <= 0x1000 + sizeof code) || (a >= KBASE && a - KBASE <= sizeof code) ||
           (a >= RAND_BASE && a <= RAND_BASE + RAND_SIZE) ||
           (a >= 0x20000 && a <= 0x20000 + sizeof tiny);
}

static void init_image(void)
{
    static int done;
    if (done) return;
    done = 1;
    for (size_t i = 0; i < sizeof a64_code / 4; i++)
        for (int k = 0; k < 4; k++)
            code[4 * i + k] = (uint8_t)(a64_code[i] >> (8 * k));
    uint32_t x = 0x12345678u;
    for (size_t i = 0; i < RAND_SIZE; i++) {
        x = x * 1103515245u + 12345u;
        rnd[i] = (uint8_t)(x >> 16);
    }
}

typedef struct run {
    ek_sbuf sb;
    uint8_t trace_id;
    uint64_t max_index;
} run;

static void check_elems(run *r, const ek_elem *e, size_t n, size_t bound)
{
    FUZZ_CHECK(n <= bound, "too many elements for one packet");
    for (size_t i = 0; i < n; i++) {
        FUZZ_CHECK(e[i].trace_id == r->trace_id, "element with another trace ID");
        FUZZ_CHECK(e[i].index <= r->max_index, "element index past the stream");
        if (e[i].type == EK_ELEM_INSTR_RANGE) {
            FUZZ_CHECK(e[i].st_addr < e[i].en_addr || e[i].num_instr == 0,
                       "instruction range ends before it starts");
            FUZZ_CHECK(in_image(e[i].st_addr) && in_image(e[i].en_addr),
                       "instruction range outside the code image");
        }
        ek_elem_format_ocsd_line(&r->sb, &e[i]);
        ek_elem_format_text(&r->sb, &e[i]);
        ek_elem_format_json(&r->sb, &e[i]);
        (void)ek_elem_type_name(e[i].type);
        (void)ek_iset_name(e[i].isa);
        ek_sbuf_reset(&r->sb);
    }
}

/* Everything the tree gives until it needs more input. */
static void drain(run *r, ek_decode *t, size_t bound)
{
    ek_decode_item it;
    while (ek_decode_next(t, &it) > 0) {
        switch (it.kind) {
        case EK_DI_PACKET:
        case EK_DI_ELEMS: check_elems(r, it.elems, it.count, bound); break;
        case EK_DI_DIAG:
            /* a flow error the reference decoder logs, in order with the elements */
            FUZZ_CHECK(ek_flow_diag_logged(it.diag), "a DIAG item the reference does not log");
            ek_flow_diag_ocsd(&r->sb, it.diag, 1);
            ek_sbuf_reset(&r->sb);
            break;
        default: break;
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    init_image();
    fuzz_in in = {data, size};
    ek_source_config src;
    fuzz_etm4_source(fuzz_u8(&in), &in, &src);
    unsigned fl = fuzz_u8(&in);
    ek_etm4_config cfg;
    if (ek_etm4_config_from_source(&cfg, &src) != 0) return 0;

    fuzz_diag fd;
    fuzz_diag_begin(&fd);
    ek_decode_config c;
    ek_decode_config_init(&c);
    c.flags = EK_DECODE_PACKETS | EK_DECODE_ELEMS | EK_DECODE_DIAG_ITEMS;
    c.mem = (ek_flow_mem){find, NULL, NULL};
    c.flow_flags = (fl & 0x1f) | ((fl & 0x20) ? EK_FLOW_NO_BLOCK_CACHE : 0);
    c.flow_max_pending = (fl & 0x40) ? 64 : 0;
    c.diag = &fd.sink; /* the checking sink */
    c.file = "fuzz";
    ek_decode *t = NULL;
    if (ek_decode_new(&c, &t) != 0 ||
        ek_decode_bind_raw(t, ek_decode_add_source(t, &src, "etm", NULL)) != 0) {
        ek_decode_free(t);
        fuzz_diag_end(&fd);
        return 0;
    }
    run r = {0};
    r.trace_id = cfg.trace_id;
    const uint8_t *stream = in.p;
    size_t len = in.n;
    r.max_index = len;
    /* elements per packet: an atom packet gives at most a few per atom, and one range can
     * span the image; allow generously, but not without bound */
    const size_t bound = 4096;
    size_t half = (fl & 0x80) ? len / 2 : len;
    ek_decode_feed(t, stream, half, 0);
    drain(&r, t, bound);
    if (half < len) {
        ek_decode_reset(t); /* (every decoder reset: a new session) */
        drain(&r, t, bound);
        ek_decode_feed(t, stream + half, len - half, half);
        drain(&r, t, bound);
    }
    ek_decode_end(t);
    drain(&r, t, bound);
    ek_decode_source_stats st;
    FUZZ_CHECK(ek_decode_source_stats_get(t, cfg.trace_id, &st) == 0 || len == 0,
               "no decoder after data");
    ek_decode_free(t);
    ek_sbuf_free(&r.sb);
    fuzz_diag_end(&fd);
    return 0;
}
