/* The Armv7 side of the simulator: the A32/T32 program model runs; the PTM and ETMv3 encoders
 * turn what ran into trace; src/ptm and src/etm3 parse and decode it again (with the
 * architecture's behaviour, no OpenCSD compat options) and must give back exactly what ran:
 * every instruction in order (address, instruction set, the last one of a range taken or not),
 * every exception with its return address, the context IDs and VMIDs, the timestamps and, when
 * cycle-accurate, every cycle. Configurations cover branch broadcast, the return stack, cycle
 * accuracy, context ID sizes and VMID, 48/64-bit timestamps, IRQs, a T32 IT block and A32/T32
 * switches by BLX immediate and BX. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/etm3.h"
#include "etmkit/etmkit.h"
#include "etmkit/isa.h"
#include "etmkit/ptm.h"
#include "sim/v7.h"
#include "testutil.h"

static const v7_trace *cur;

static int find(void *ctx, uint64_t addr, uint32_t space, uint8_t id, ek_mem_span *out)
{
    (void)ctx;
    (void)space;
    (void)id;
    if (addr < cur->base || addr >= cur->base + cur->code_size) return 0;
    out->start = cur->base;
    out->size = cur->code_size;
    out->data = cur->code;
    return 1;
}

typedef struct got {
    ek_elem *el;
    size_t n, cap;
    size_t packets, bad;
} got;

static void add_elems(got *g, const ek_elem *e, size_t n)
{
    if (g->n + n > g->cap) {
        g->cap = (g->n + n) * 2 + 1024;
        g->el = realloc(g->el, g->cap * sizeof *g->el);
        assert_non_null(g->el);
    }
    memcpy(g->el + g->n, e, n * sizeof *e);
    g->n += n;
}

static void decode_ptm(const v7_bytes *b, const ek_etm3_regs *regs, got *g)
{
    ek_ptm_config cfg;
    assert_int_equal(ek_ptm_config_init(&cfg, regs, EK_ARCH_V7A, EK_PROFILE_A), 0);
    static ek_ptm_parser p;
    ek_ptm_parser_init(&p, &cfg);
    ek_ptm_decoder *d = NULL;
    const ek_flow_mem mem = {find, NULL, NULL};
    assert_int_equal(ek_ptm_decoder_new(&cfg, &mem, &d), 0);
    ek_ptm_feed(&p, b->p, b->n, 0);
    const ek_ptm_packet *k;
    for (int eot = 0; eot < 2; eot++) {
        while (ek_ptm_next(&p, &k) > 0) {
            g->packets++;
            g->bad += k->type == EK_PTM_BAD_SEQUENCE || k->type == EK_PTM_RESERVED ||
                      k->type == EK_PTM_NOTSYNC;
            ek_ptm_decode(d, k);
            size_t n;
            const ek_elem *e = ek_ptm_decoder_elems(d, &n);
            add_elems(g, e, n);
            ek_ptm_decoder_clear(d);
        }
        if (!eot) ek_ptm_eot(&p);
    }
    ek_ptm_decoder_free(d);
}

static void decode_etm3(const v7_bytes *b, const ek_etm3_regs *regs, got *g)
{
    ek_etm3_config cfg;
    assert_int_equal(ek_etm3_config_init(&cfg, regs, EK_ARCH_V7A, EK_PROFILE_A), 0);
    static ek_etm3_parser p;
    ek_etm3_parser_init(&p, &cfg);
    ek_etm3_decoder *d = NULL;
    const ek_flow_mem mem = {find, NULL, NULL};
    assert_int_equal(ek_etm3_decoder_new(&cfg, &mem, &d), 0);
    ek_etm3_feed(&p, b->p, b->n, 0);
    const ek_etm3_packet *k;
    for (int eot = 0; eot < 2; eot++) {
        while (ek_etm3_next(&p, &k) > 0) {
            g->packets++;
            g->bad += k->type == EK_ETM3_BAD_SEQUENCE || k->type == EK_ETM3_RESERVED ||
                      k->type == EK_ETM3_NOTSYNC;
            assert_int_equal(ek_etm3_decode(d, k), 0);
            size_t n;
            const ek_elem *e = ek_etm3_decoder_elems(d, &n);
            add_elems(g, e, n);
            ek_etm3_decoder_clear(d);
        }
        if (!eot) ek_etm3_eot(&p);
    }
    ek_etm3_decode_eot(d);
    size_t n;
    const ek_elem *e = ek_etm3_decoder_elems(d, &n);
    add_elems(g, e, n);
    ek_etm3_decoder_free(d);
}

static unsigned insn_size(const v7_trace *t, uint64_t a, unsigned isa)
{
    if (isa != EK_ISET_T32) return 4;
    const uint8_t *p = t->code + (a - t->base);
    return ek_isa_t32_size((uint16_t)(p[0] | p[1] << 8));
}

/* What ran, compared with what came back. ptm: PFT traces waypoints only, so the instructions
 * after the last waypoint are not in the trace. */
static void check(const v7_trace *t, const got *g, const ek_etm3_regs *regs, int ptm)
{
    const int ca = (regs->etmcr >> 12) & 1;
    const int ts_on = (regs->etmcr >> 28) & 1;
    const unsigned cid_bytes = (unsigned[]){0, 1, 2, 4}[(regs->etmcr >> 14) & 3];
    const int vmid_on = ptm ? (regs->etmcr >> 30) & 1 : (regs->etmccer >> 26) & 1;
    size_t last = t->n; /* PTM: the events up to the last waypoint or exception */
    if (ptm) {
        while (last > 0) {
            const v7_ev *v = &t->ev[last - 1];
            if (v->kind == V7_EV_EXC ||
                (v->kind == V7_EV_INSN &&
                 (v->type == EK_ITYPE_BR || v->type == EK_ITYPE_BR_INDIRECT)))
                break;
            last--;
        }
    }
    /* instructions, in order */
    size_t ti = 0, ninsn = 0, nexc = 0, nts = 0;
    uint64_t cycles = 0, reported = 0, got_cycles = 0;
    uint32_t cids[4096], vmids[4096];
    size_t ncid = 0, nvmid = 0;
    const uint32_t cmask = cid_bytes >= 4 ? 0xFFFFFFFFu : (1u << (8 * cid_bytes)) - 1;
    cids[ncid++] = t->start_cid & cmask;
    vmids[nvmid++] = t->start_vmid;
    for (size_t i = 0; i < last; i++) {
        const v7_ev *v = &t->ev[i];
        if (v->kind == V7_EV_CTX) {
            if ((v->value & cmask) != cids[ncid - 1] && ncid < 4096)
                cids[ncid++] = v->value & cmask;
            if (v->vmid != vmids[nvmid - 1] && nvmid < 4096) vmids[nvmid++] = v->vmid;
        }
        if (v->kind == V7_EV_INSN) {
            cycles += v->cycles;
            if (!ptm || v->type == EK_ITYPE_BR || v->type == EK_ITYPE_BR_INDIRECT)
                reported = cycles;
        }
        if (v->kind == V7_EV_EXC || (v->kind == V7_EV_TS && ts_on)) reported = cycles;
    }
    size_t ecid = 1, evmid = 1;
    for (size_t k = 0; k < g->n; k++) {
        const ek_elem *e = &g->el[k];
        if (e->flags & EK_ELEMF_HAS_CC) {
            if (e->type != EK_ELEM_PE_CONTEXT) got_cycles += e->cycle_count;
        }
        switch (e->type) {
        case EK_ELEM_INSTR_RANGE: {
            uint64_t a = e->st_addr;
            while (a < e->en_addr) {
                while (ti < last && t->ev[ti].kind != V7_EV_INSN)
                    ti++;
                assert_true(ti < last);
                const v7_ev *v = &t->ev[ti++];
                if (v->addr != a || v->isa != e->isa)
                    fail_msg("instruction %zu: decoded %#llx (%s), ran %#x (%s)", ninsn,
                             (unsigned long long)a, ek_isa_name(e->isa), v->addr,
                             ek_isa_name(v->isa));
                a += insn_size(t, a, e->isa);
                ninsn++;
                /* a waypoint's atom says whether it was taken; a waypoint update ends a range at
                 * an instruction whatever its condition did */
                if (a == e->en_addr && (v->type == EK_ITYPE_BR || v->type == EK_ITYPE_BR_INDIRECT))
                    assert_int_equal((e->flags & EK_ELEMF_LAST_EXEC) != 0, v->exec);
            }
            break;
        }
        case EK_ELEM_EXCEPTION: {
            while (ti < last && t->ev[ti].kind != V7_EV_EXC) {
                /* no instruction may be skipped before an exception */
                assert_int_not_equal(t->ev[ti].kind, V7_EV_INSN);
                ti++;
            }
            assert_true(ti < last);
            const v7_ev *v = &t->ev[ti++];
            assert_int_equal(e->u.exception_number, v->value);
            if (ptm) {
                assert_true(e->flags & EK_ELEMF_EXCEP_RET_ADDR);
                assert_int_equal(e->en_addr, v->addr);
            }
            nexc++;
            break;
        }
        case EK_ELEM_PE_CONTEXT:
            if (cid_bytes && e->context.ctxt_id_valid && e->context.context_id != cids[ecid - 1]) {
                assert_true(ecid < ncid);
                assert_int_equal(e->context.context_id, cids[ecid++]);
            }
            if (vmid_on && e->context.vmid_valid && e->context.vmid != vmids[evmid - 1]) {
                assert_true(evmid < nvmid);
                assert_int_equal(e->context.vmid, vmids[evmid++]);
            }
            break;
        case EK_ELEM_TIMESTAMP: {
            size_t j = 0, seen = 0;
            for (j = 0; j < t->n; j++)
                if (t->ev[j].kind == V7_EV_TS && seen++ == nts) break;
            assert_true(j < t->n);
            assert_true(e->timestamp == t->ev[j].time);
            nts++;
            break;
        }
        case EK_ELEM_NO_SYNC:
        case EK_ELEM_TRACE_ON:
        case EK_ELEM_EO_TRACE:
        case EK_ELEM_CYCLE_COUNT: break;
        default: fail_msg("unexpected element type %u", e->type);
        }
    }
    /* nothing that ran was left out */
    size_t want_insn = 0, want_exc = 0, want_ts = 0;
    for (size_t i = 0; i < last; i++) {
        want_insn += t->ev[i].kind == V7_EV_INSN;
        want_exc += t->ev[i].kind == V7_EV_EXC;
    }
    for (size_t i = 0; i < t->n; i++)
        want_ts += t->ev[i].kind == V7_EV_TS && ts_on;
    assert_int_equal(ninsn, want_insn);
    assert_int_equal(nexc, want_exc);
    if (ptm || !ts_on) assert_true(nts <= want_ts);
    if (!ptm && ts_on) assert_int_equal(nts, want_ts);
    assert_int_equal(ecid, cid_bytes ? ncid : 1);
    assert_int_equal(evmid, vmid_on ? nvmid : 1);
    if (ca) assert_true(got_cycles == reported);
    assert_int_equal(g->bad, 0);
}

typedef struct cfgcase {
    const char *name;
    uint32_t etmcr, etmccer;
} cfgcase;

static void run_case(const cfgcase *c, int ptm, uint64_t seed, size_t insns)
{
    v7_prog_opts o = {seed, insns, 97, 500, 1, 1, {0, 0}};
    v7_trace t;
    assert_int_equal(v7_prog_run(&o, &t), 0);
    cur = &t;
    const ek_etm3_regs regs = {c->etmcr, ptm ? 0x411CF311u : 0x410CF250u, c->etmccer, 0x10};
    v7_bytes b = {0};
    const v7_enc_opts eo = {512};
    if (ptm)
        assert_int_equal(v7_encode_ptm(&t, &regs, &eo, &b), 0);
    else
        assert_int_equal(v7_encode_etm3(&t, &regs, &eo, &b), 0);
    got g = {0};
    if (ptm)
        decode_ptm(&b, &regs, &g);
    else
        decode_etm3(&b, &regs, &g);
    check(&t, &g, &regs, ptm);
    free(g.el);
    v7_bytes_free(&b);
    v7_trace_free(&t);
}

/* The program model: what it ran covers what the trace units must encode. */
static void test_v7_program_coverage(void **state)
{
    (void)state;
    v7_prog_opts o = {1, 20000, 97, 500, 1, 1, {0, 0}};
    v7_trace t;
    assert_int_equal(v7_prog_run(&o, &t), 0);
    size_t blx_imm = 0, bx_switch = 0, ind_call = 0, ret = 0, irq = 0, eret = 0, n_atom = 0,
           in_it = 0, cbz_taken = 0, cbz_not = 0, ctx = 0, ts = 0;
    for (size_t i = 0; i < t.n; i++) {
        const v7_ev *v = &t.ev[i];
        if (v->kind == V7_EV_EXC) irq++;
        if (v->kind == V7_EV_CTX) ctx++;
        if (v->kind == V7_EV_TS) ts++;
        if (v->kind != V7_EV_INSN) continue;
        if (v->type == EK_ITYPE_BR && v->exec && v->isa != v->next_isa) blx_imm++;
        if (v->type == EK_ITYPE_BR_INDIRECT && v->exec && v->isa != v->next_isa) bx_switch++;
        if (v->type == EK_ITYPE_BR_INDIRECT && v->link) ind_call++;
        if (v->type == EK_ITYPE_BR_INDIRECT && v->addr == 0x110)
            eret++;
        else if (v->type == EK_ITYPE_BR_INDIRECT && !v->link)
            ret++;
        if (!v->exec) n_atom++;
        if (v->addr >= 0x8104 && v->addr <= 0x8108) in_it++;
        if (v->addr == 0x810A) {
            if (v->next == 0x8110)
                cbz_taken++;
            else
                cbz_not++;
        }
    }
    assert_true(blx_imm > 100 && bx_switch > 100 && ind_call > 50 && ret > 100);
    assert_true(irq > 50 && eret == irq && n_atom > 100 && in_it > 100);
    assert_true(cbz_taken > 10 && cbz_not > 10 && ctx > 20 && ts > 10);
    v7_trace_free(&t);
}

static const cfgcase ptm_cases[] = {
    {"plain", 0x00000000u, 0x000008EAu},
    {"cid4-ts64", 0x1000C000u, 0x200008EAu},
    {"cycle-acc-ts48", 0x10005000u, 0x000008EAu},
    {"return-stack", 0x20004000u, 0x008008EAu},
    {"branch-broadcast", 0x00004100u, 0x008008EAu},
    {"vmid-cid1-cc-rs", 0x70005000u, 0x208008EAu},
    {"gen-armv7-ptm", 0x3000C000u, 0x008008EAu}, /* as etmkit gen --scenario armv7-ptm */
};

static void test_ptm_round_trip(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof ptm_cases / sizeof ptm_cases[0]; i++)
        for (uint64_t seed = 1; seed <= 3; seed++)
            run_case(&ptm_cases[i], 1, seed, 30000);
}

static const cfgcase etm3_cases[] = {
    {"plain", 0x00000000u, 0x144008F2u},
    {"cid4-ts64", 0x1000C000u, 0x344008F2u},
    {"cycle-acc-ts48", 0x10005000u, 0x144008F2u},
    {"cycle-acc-vmid", 0x00009000u, 0x344008F2u | (1u << 26)},
    {"gen-armv7-etm3", 0x1000D000u, 0x344008F2u}, /* as etmkit gen --scenario armv7-etm3 */
};

static void test_etm3_round_trip(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof etm3_cases / sizeof etm3_cases[0]; i++)
        for (uint64_t seed = 1; seed <= 3; seed++)
            run_case(&etm3_cases[i], 0, seed, 30000);
}

/* The ETMv3 trace of a BLX (immediate) has no address packet: the decoder must follow the
 * instruction set from the instruction (the OpenCSD compat option EK_ETM3_OCSD_PHDR_ISA does
 * not, see test_ocsd_compat). Same for PTM. Checked here on the encoder's output. */
static void test_blx_needs_no_address(void **state)
{
    (void)state;
    v7_prog_opts o = {5, 2000, 0, 0, 0, 0, {0, 0}};
    v7_trace t;
    assert_int_equal(v7_prog_run(&o, &t), 0);
    const ek_etm3_regs regs = {0, 0x410CF250u, 0x144008F2u, 0x10};
    v7_bytes b = {0};
    assert_int_equal(v7_encode_etm3(&t, &regs, NULL, &b), 0);
    /* count the branch address packets: one per taken indirect branch, none for BLX imm */
    size_t want = 0;
    for (size_t i = 0; i < t.n; i++)
        want += t.ev[i].kind == V7_EV_INSN && t.ev[i].type == EK_ITYPE_BR_INDIRECT && t.ev[i].exec;
    ek_etm3_config cfg;
    ek_etm3_config_init(&cfg, &regs, EK_ARCH_V7A, EK_PROFILE_A);
    static ek_etm3_parser p;
    ek_etm3_parser_init(&p, &cfg);
    ek_etm3_feed(&p, b.p, b.n, 0);
    const ek_etm3_packet *k;
    size_t nbr = 0;
    while (ek_etm3_next(&p, &k) > 0)
        nbr += k->type == EK_ETM3_BRANCH_ADDRESS;
    assert_int_equal(nbr, want);
    v7_bytes_free(&b);
    v7_trace_free(&t);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v7_program_coverage),
        cmocka_unit_test(test_ptm_round_trip),
        cmocka_unit_test(test_etm3_round_trip),
        cmocka_unit_test(test_blx_needs_no_address),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
