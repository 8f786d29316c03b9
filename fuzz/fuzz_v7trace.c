/* Fuzz target: the PTM, ETMv3, STM and ITM packet parsers, their OpenCSD-format listings and
 * their decoders (src/ptm, src/etm3, src/stm, src/itm, src/output).
 *
 * Input: byte 0 selects the protocol (bits 1:0: PTM, ETMv3, STM, ITM) and configuration bits
 * (bit 2 cycle accurate -- for ITM: EK_ITM_ASSUME_SYNC --, bit 3 64-bit timestamps, bits 5:4
 * context ID size, bit 6 return stack / alternative branch encoding, bit 7 data trace); byte 1
 * seeds the block sizes; the rest is the trace stream, which is also the code image the flow
 * decoders read (at address 0, and as a second copy at 0xC0000000). Checks: packet sizes and
 * indices stay inside what was fed, packets come in stream order, every block yields a bounded
 * number of packets (no livelock), decoders produce a bounded number of elements per packet with
 * indices of packets already seen. */
#include <stdlib.h>
#include <string.h>

#include "etmkit/etm3.h"
#include "etmkit/itm.h"
#include "etmkit/low/etm3.h"
#include "etmkit/low/itm.h"
#include "etmkit/low/ptm.h"
#include "etmkit/low/stm.h"
#include "etmkit/ptm.h"
#include "etmkit/sbuf.h"
#include "etmkit/stm.h"
#include "fuzz_common.h"

typedef struct code_mem {
    const uint8_t *p;
    size_t n;
} code_mem;

static int mem_find(void *ctx, uint64_t addr, uint32_t space, uint8_t trace_id, ek_mem_span *out)
{
    const code_mem *m = ctx;
    (void)space;
    (void)trace_id;
    const uint64_t bases[2] = {0, 0xC0000000u};
    for (int i = 0; i < 2; i++) {
        if (addr >= bases[i] && addr - bases[i] < m->n) {
            out->start = bases[i];
            out->size = m->n;
            out->data = m->p;
            return 1;
        }
    }
    return 0;
}

typedef struct run {
    uint64_t base, len, last;
    int have_last;
    size_t npkts, blk;
} run;

/* slack: how far a packet's index may run past the input or lag the one before it. 0 but for
 * PTM with EK_PTM_OCSD_UNSYNC: as OpenCSD's, its unsynchronised-data reports count zeros held
 * from the previous block twice (the listings match it), and the index they run ahead by
 * carries into the next block while it too starts with held zeros: at most a packet record
 * of zeros a block (OpenCSD's zeros kept after a cut candidate pile up to it), until a block
 * starts without. */
static void check_pkt(run *r, uint64_t index, unsigned size, unsigned max, unsigned slack)
{
    FUZZ_CHECK(++r->npkts <= 2 * r->blk + 64, "livelock: packets without input");
    FUZZ_CHECK(size <= max, "packet larger than its record");
    FUZZ_CHECK(index >= r->base && index <= r->base + r->len + slack,
               "packet index outside the input");
    FUZZ_CHECK(!r->have_last || index + slack >= r->last, "packets come in stream order");
    r->last = index;
    r->have_last = 1;
}

static void check_elems(const ek_elem *e, size_t n, const run *r)
{
    FUZZ_CHECK(n <= 64, "too many elements for one packet");
    ek_sbuf sb = {0};
    for (size_t i = 0; i < n; i++) {
        FUZZ_CHECK(e[i].type < EK_ELEM_NTYPES, "element type out of range");
        FUZZ_CHECK(e[i].index <= r->base + r->len, "element index outside the input");
        ek_elem_format_ocsd_line(&sb, &e[i]);
        ek_elem_format_text(&sb, &e[i]);
        ek_elem_format_json(&sb, &e[i]);
        ek_sbuf_reset(&sb);
    }
    ek_sbuf_free(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = {data, size};
    const unsigned sel = fuzz_u8(&in);
    const unsigned blk_seed = fuzz_u8(&in);
    const unsigned proto = sel & 3;

    ek_etm3_regs regs = {0};
    regs.etmcr = ((sel & 4) ? EK_ETMCR_CYCLE_ACC : 0) | (((sel >> 4) & 3u) << EK_ETMCR_CID_SHIFT) |
                 EK_ETMCR_TS_ENABLE | ((sel & 0x40) ? EK_ETMCR_RET_STACK : 0) |
                 ((sel & 0x80) ? EK_ETMCR_DATA_VALUE | EK_ETMCR_DATA_ADDR : 0);
    regs.etmccer = ((sel & 8) ? EK_ETMCCER_TS_64 : 0) | EK_ETMCCER_RET_STACK | EK_ETMCCER_VIRT_EXT;
    regs.etmidr = 0x410CF250u | ((sel & 0x40) ? EK_ETMIDR_ALT_BRANCH : 0);
    regs.etmtraceidr = 0x10;

    code_mem cm = {in.p, in.n};
    const ek_flow_mem mem = {mem_find, NULL, &cm};
    static ek_ptm_parser ptm, ptm_ocsd;
    static ek_etm3_parser etm3;
    static ek_stm_parser stm;
    static ek_itm_parser itm;
    ek_ptm_config pcfg;
    ek_etm3_config ecfg;
    ek_ptm_decoder *pdec = NULL;
    ek_etm3_decoder *edec = NULL;
    ek_stm_decoder sdec;
    ek_itm_decoder idec;
    ek_ptm_config_init(&pcfg, &regs, EK_ARCH_V7A, EK_PROFILE_A);
    ek_etm3_config_init(&ecfg, &regs, EK_ARCH_V7R, (sel & 0x20) ? EK_PROFILE_M : EK_PROFILE_R);
    switch (proto) {
    case 0:
        ek_ptm_parser_init(&ptm, &pcfg);
        pcfg.compat = EK_PTM_OCSD_UNSYNC;
        ek_ptm_parser_init(&ptm_ocsd, &pcfg);
        pcfg.compat = 0;
        if (ek_ptm_decoder_new(&pcfg, &mem, &pdec)) return 0;
        break;
    case 1:
        ek_etm3_parser_init(&etm3, &ecfg);
        if (ek_etm3_decoder_new(&ecfg, &mem, &edec)) return 0;
        break;
    case 2:
        ek_stm_parser_init(&stm, 0x20);
        ek_stm_decoder_init(&sdec, 0x20);
        break;
    default:
        if (sel & 0x04) { /* ITM: bit 2 is EK_ITM_ASSUME_SYNC (no sync packets) */
            ek_itm_parser_init_flags(&itm, 0x14, EK_ITM_ASSUME_SYNC);
            ek_itm_decoder_init_flags(&idec, 0x14, sel << 4, EK_ITM_ASSUME_SYNC);
        } else {
            ek_itm_parser_init(&itm, 0x14);
            ek_itm_decoder_init(&idec, 0x14, sel << 4);
        }
        break;
    }

    ek_sbuf sb = {0};
    run r = {0x100, in.n, 0, 0, 0, 0};
    run ro = r; /* PTM with OpenCSD's accounting */
    size_t nblocks = 0;
    size_t pos = 0;
    int finishing = 0;
    for (;;) {
        size_t blk = 0;
        if (pos < in.n) {
            blk = blk_seed ? 1 + (blk_seed * (pos + 3)) % 97 : in.n - pos;
            if (blk > in.n - pos) blk = in.n - pos;
            switch (proto) {
            case 0:
                ek_ptm_feed(&ptm, in.p + pos, blk, r.base + pos);
                ek_ptm_feed(&ptm_ocsd, in.p + pos, blk, r.base + pos);
                break;
            case 1: ek_etm3_feed(&etm3, in.p + pos, blk, r.base + pos); break;
            case 2: ek_stm_feed(&stm, in.p + pos, blk, r.base + pos); break;
            default: ek_itm_feed(&itm, in.p + pos, blk, r.base + pos); break;
            }
        } else if (!finishing) {
            finishing = 1;
            switch (proto) {
            case 0:
                ek_ptm_eot(&ptm);
                ek_ptm_eot(&ptm_ocsd);
                break;
            case 1: ek_etm3_eot(&etm3); break;
            case 2: ek_stm_eot(&stm); break;
            default: ek_itm_eot(&itm); break;
            }
        } else {
            break;
        }
        r.npkts = ro.npkts = 0;
        r.blk = ro.blk = blk;
        nblocks++;
        ek_elem two[2];
        size_t n;
        const ek_elem *el;
        switch (proto) {
        case 0: {
            const ek_ptm_packet *k;
            while (ek_ptm_next(&ptm, &k) > 0) {
                check_pkt(&r, k->index, k->size, EK_PTM_MAX_PKT, 0);
                ek_list_ptm_ocsd(&sb, k, 0x10, 1, &pcfg);
                if (k->flags & EK_PTM_PF_NOTSYNC_MORE) continue;
                ek_ptm_decode(pdec, k);
                el = ek_ptm_decoder_elems(pdec, &n);
                check_elems(el, n, &r);
                ek_ptm_decoder_clear(pdec);
            }
            while (ek_ptm_next(&ptm_ocsd, &k) > 0) {
                check_pkt(&ro, k->index, k->size, EK_PTM_MAX_PKT,
                          (unsigned)(EK_PTM_MAX_PKT * nblocks));
                ek_list_ptm_ocsd(&sb, k, 0x10, 1, &pcfg);
            }
            break;
        }
        case 1: {
            const ek_etm3_packet *k;
            while (ek_etm3_next(&etm3, &k) > 0) {
                check_pkt(&r, k->index, k->size, EK_ETM3_MAX_PKT, 0);
                ek_list_etm3_ocsd(&sb, k, 0x10, 1, &ecfg);
                ek_etm3_decode(edec, k);
                el = ek_etm3_decoder_elems(edec, &n);
                check_elems(el, n, &r);
                ek_etm3_decoder_clear(edec);
            }
            break;
        }
        case 2: {
            const ek_stm_packet *k;
            while (ek_stm_next(&stm, &k) > 0) {
                /* an ASYNC is indexed at the start of its 0xF run, which can lie before the
                 * NOTSYNC report of the block it completes in (as in OpenCSD) */
                if (k->type == EK_STM_ASYNC) r.have_last = 0;
                check_pkt(&r, k->index, k->raw_len, EK_STM_MAX_RAW, 0);
                ek_list_stm_ocsd(&sb, k, 0x20, 1, NULL, 0);
                check_elems(two, (size_t)ek_stm_decode(&sdec, k, two), &r);
            }
            break;
        }
        default: {
            const ek_itm_packet *k;
            while (ek_itm_next(&itm, &k) > 0) {
                check_pkt(&r, k->index, k->raw_len, EK_ITM_MAX_RAW, 0);
                ek_list_itm_ocsd(&sb, k, 0x14, 1);
                if (k->flags & EK_ITM_PF_DECODE)
                    check_elems(two, (size_t)ek_itm_decode(&idec, k, two), &r);
            }
            break;
        }
        }
        ek_sbuf_reset(&sb);
        pos += blk;
    }
    if (pdec) {
        ek_ptm_decode_eot(pdec);
        ek_ptm_decoder_elems(pdec, &(size_t){0});
    }
    if (edec) ek_etm3_decode_eot(edec);
    ek_ptm_decoder_free(pdec);
    ek_etm3_decoder_free(edec);
    ek_sbuf_free(&sb);
    return 0;
}
