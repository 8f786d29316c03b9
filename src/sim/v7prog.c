/* The Armv7 program model: a small A32/T32 program, and a walk that runs it instruction by
 * instruction (see v7.h). Every instruction's type, target and instruction-set change come from
 * its bytes through src/isa (the Arm ARM's view); only data is not simulated: the NZCV flags are
 * re-drawn at random after instructions outside IT blocks (standing in for flag-setting ones),
 * CBZ's register at random, an indirect call picks one of two functions, and IRQs come at random
 * instruction boundaries outside IT blocks. */
#include <stdlib.h>
#include <string.h>

#include "etmkit/elem.h"
#include "etmkit/etmkit.h"
#include "etmkit/isa.h"
#include "sim/rng.h"
#include "sim/v7.h"

#define BASE      0x0u
#define CODE_SIZE 0x8200u
#define VEC_IRQ   0x18u
#define IRQ_NUM   14u         /* PFT / ETMv3 exception number of IRQ */
#define MCR_CIDR  0xEE0D0F30u /* mcr p15, 0, r0, c13, c0, 1: write CONTEXTIDR */

static void put32(uint8_t *c, uint32_t a, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        c[a - BASE + i] = (uint8_t)(v >> (8 * i));
}

static void put16(uint8_t *c, uint32_t a, uint16_t v)
{
    c[a - BASE] = (uint8_t)v;
    c[a - BASE + 1] = (uint8_t)(v >> 8);
}

/* The program (addresses and encodings checked by tests/unit/test_sim_v7.c through src/isa). */
static void build(uint8_t *c)
{
    memset(c, 0, CODE_SIZE);
    /* vectors (A32): every slot a branch to itself except IRQ */
    for (uint32_t a = 0; a < 0x20; a += 4)
        put32(c, a, 0xEAFFFFFE);   /* b . */
    put32(c, VEC_IRQ, 0xEA000038); /* b irq_handler (0x100) */
    /* irq_handler (A32) */
    put32(c, 0x100, 0xE1A00000); /* mov r0, r0 */
    put32(c, 0x104, 0xE2811001); /* add r1, r1, #1 */
    put32(c, 0x108, 0x03A00000); /* moveq r0, #0 */
    put32(c, 0x10C, MCR_CIDR);   /* mcr p15, 0, r0, c13, c0, 1 */
    put32(c, 0x110, 0xE25EF004); /* subs pc, lr, #4 */
    /* main (A32) */
    put32(c, 0x8000, 0xE1A00000); /* loop: mov r0, r0 */
    put32(c, 0x8004, 0xEB00000E); /* bl a32_func (0x8044) */
    put32(c, 0x8008, 0xFA00003C); /* blx t32_func (0x8100) */
    put32(c, 0x800C, 0xE2811001); /* add r1, r1, #1 */
    put32(c, 0x8010, 0x1AFFFFFA); /* bne loop */
    put32(c, 0x8014, 0xE59F3020); /* ldr r3, [pc, #32] (a function pointer) */
    put32(c, 0x8018, 0xE12FFF33); /* blx r3 */
    put32(c, 0x801C, 0x0A000001); /* beq 0x8028 */
    put32(c, 0x8020, 0xE1A00000); /* mov r0, r0 */
    put32(c, 0x8024, 0xE1A00000); /* mov r0, r0 */
    put32(c, 0x8028, 0xEAFFFFF4); /* b loop */
    /* a32_func */
    put32(c, 0x8044, 0xE1A00000); /* mov r0, r0 */
    put32(c, 0x8048, 0x12800001); /* addne r0, r0, #1 */
    put32(c, 0x804C, 0xE12FFF1E); /* bx lr */
    /* a32_func2 (called through the pointer) */
    put32(c, 0x8060, 0xE3A02005); /* mov r2, #5 */
    put32(c, 0x8064, 0xE12FFF1E); /* bx lr */
    /* t32_func (T32) */
    put16(c, 0x8100, 0x2001); /* movs r0, #1 */
    put16(c, 0x8102, 0xBF06); /* itte eq */
    put16(c, 0x8104, 0x3001); /*   addeq r0, #1 */
    put16(c, 0x8106, 0x3101); /*   addeq r1, #1 */
    put16(c, 0x8108, 0x3201); /*   addne r2, #1 */
    put16(c, 0x810A, 0xB108); /* cbz r0, 0x8110 */
    put16(c, 0x810C, 0x3301); /* adds r3, #1 */
    put16(c, 0x810E, 0x3401); /* adds r4, #1 */
    put16(c, 0x8110, 0xB500); /* push {lr} */
    put16(c, 0x8112, 0xF000); /* bl t32_leaf (0x8120) */
    put16(c, 0x8114, 0xF805);
    put16(c, 0x8116, 0xF7FF); /* blx a32_func (0x8044) */
    put16(c, 0x8118, 0xEF96);
    put16(c, 0x811A, 0xBD00); /* pop {pc} */
    /* t32_leaf */
    put16(c, 0x8120, 0x3501); /* adds r5, #1 */
    put16(c, 0x8122, 0xD000); /* beq 0x8126 */
    put16(c, 0x8124, 0x3601); /* adds r6, #1 */
    put16(c, 0x8126, 0x4770); /* bx lr */
    /* t32_func2 (called through the pointer) */
    put16(c, 0x8130, 0x2702); /* movs r7, #2 */
    put16(c, 0x8132, 0x4770); /* bx lr */
}

/* ConditionPassed() of the Arm ARM for cond 0..13 and NZCV in bits 3:0. */
static int cond_passed(unsigned cond, unsigned nzcv)
{
    const int n = (nzcv >> 3) & 1, z = (nzcv >> 2) & 1, c = (nzcv >> 1) & 1, v = nzcv & 1;
    int r;
    switch (cond >> 1) {
    case 0: r = z; break;
    case 1: r = c; break;
    case 2: r = n; break;
    case 3: r = v; break;
    case 4: r = c && !z; break;
    case 5: r = n == v; break;
    case 6: r = n == v && !z; break;
    default: r = 1; break;
    }
    return (cond & 1) && cond != 15 ? !r : r;
}

static int push_ev(v7_trace *t, const v7_ev *e)
{
    if (t->n == t->cap) {
        const size_t cap = t->cap ? t->cap * 2 : 4096;
        v7_ev *p = realloc(t->ev, cap * sizeof *p);
        if (!p) return EK_ERR_NOMEM;
        t->ev = p;
        t->cap = cap;
    }
    t->ev[t->n++] = *e;
    return 0;
}

void v7_trace_free(v7_trace *t)
{
    free(t->ev);
    free(t->code);
    memset(t, 0, sizeof *t);
}

int v7_prog_run(const v7_prog_opts *o, v7_trace *t)
{
    memset(t, 0, sizeof *t);
    t->base = BASE;
    t->code_size = CODE_SIZE;
    t->code = malloc(CODE_SIZE);
    if (!t->code) return EK_ERR_NOMEM;
    build(t->code);
    ek_isa_cfg cfg;
    ek_isa_cfg_init(&cfg, EK_ARCH_V7A, EK_PROFILE_A, 0);
    sim_rng rng = {o->seed ^ 0x7a3277ull};

    const uint32_t cid_a = o->cid[0] || o->cid[1] ? o->cid[0] : 0x100;
    const uint32_t cid_b = o->cid[0] || o->cid[1] ? o->cid[1] : 0x2c7;
    uint32_t addr = 0x8000, cid = cid_a;
    uint8_t isa = EK_ISET_A32, vmid = 1;
    t->start_addr = addr;
    t->start_isa = isa;
    t->start_cid = cid;
    t->start_vmid = vmid;
    ek_it_state it = {0, 0};
    unsigned nzcv = 0;
    uint32_t stack[64];
    uint8_t stack_isa[64];
    unsigned sp = 0, irqs = 0;
    int in_irq = 0;
    uint32_t irq_ret = 0;
    uint8_t irq_isa = 0;
    uint64_t time = 1000;
    int rc = 0;
    for (size_t step = 0; step < o->insns && !rc; step++) {
        v7_ev e;
        memset(&e, 0, sizeof e);
        if (o->ts_every && sim_rng_below(&rng, o->ts_every) == 0) {
            e.kind = V7_EV_TS;
            e.time = time;
            rc = push_ev(t, &e);
            memset(&e, 0, sizeof e);
        }
        if (!in_irq && !it.left && o->irq_every && sim_rng_below(&rng, o->irq_every) == 0) {
            e.kind = V7_EV_EXC;
            e.addr = addr;
            e.isa = isa;
            e.next = VEC_IRQ;
            e.next_isa = EK_ISET_A32;
            e.value = IRQ_NUM;
            time += 3;
            e.time = time;
            rc = push_ev(t, &e);
            in_irq = 1;
            irq_ret = addr;
            irq_isa = isa;
            irqs++;
            addr = VEC_IRQ;
            isa = EK_ISET_A32;
            continue;
        }
        if (addr - BASE > CODE_SIZE - 4) return EK_ERR_FORMAT;
        const uint8_t *b = t->code + (addr - BASE);
        const uint32_t w =
            (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
        ek_insn in;
        ek_isa_classify(w, isa == EK_ISET_T32 ? EK_ISA_T32 : EK_ISA_A32, addr, &cfg, &in);
        const int in_it = isa == EK_ISET_T32 && it.left;
        if (isa == EK_ISET_T32) ek_isa_it_step(&it, &in, &cfg);
        if ((in.flags & EK_IF_UNDEF) || w == 0) return EK_ERR_FORMAT; /* off the program */
        int pass = 1;
        if (in.cond == EK_COND_REG)
            pass = (int)sim_rng_below(&rng, 2);
        else if (in.cond < EK_COND_AL)
            pass = cond_passed(in.cond, nzcv);
        e.kind = V7_EV_INSN;
        e.addr = addr;
        e.isa = isa;
        e.size = in.size;
        e.type = in.type;
        e.exec = (uint8_t)pass;
        uint32_t next = addr + in.size;
        uint8_t next_isa = isa;
        if (in.type == EK_ITYPE_BR && pass) {
            next = (uint32_t)in.target;
            next_isa = in.next_isa;
            if (in.flags & EK_IF_LINK) {
                if (sp < 64) {
                    stack[sp] = addr + in.size;
                    stack_isa[sp++] = isa;
                }
                e.link = 1;
            }
        } else if (in.type == EK_ITYPE_BR_INDIRECT && pass) {
            if (in.flags & EK_IF_ERET) {
                if (!in_irq) return EK_ERR_FORMAT;
                next = irq_ret;
                next_isa = irq_isa;
                in_irq = 0;
            } else if (in.flags & EK_IF_LINK) { /* blx r3: one of two functions */
                if (sp < 64) {
                    stack[sp] = addr + in.size;
                    stack_isa[sp++] = isa;
                }
                e.link = 1;
                const int t32 = (int)sim_rng_below(&rng, 2);
                next = t32 ? 0x8130 : 0x8060;
                next_isa = t32 ? EK_ISET_T32 : EK_ISET_A32;
            } else if (in.flags & EK_IF_RETURN) {
                if (!sp) return EK_ERR_FORMAT;
                next = stack[--sp];
                next_isa = stack_isa[sp];
            } else {
                return EK_ERR_FORMAT;
            }
        }
        /* flags: re-drawn after instructions outside IT blocks, now and then */
        if (!in_it && !it.left && sim_rng_below(&rng, 3) == 0)
            nzcv = (unsigned)sim_rng_below(&rng, 16);
        unsigned cyc = 1;
        if (next != addr + in.size) cyc += 2; /* taken branch: refetch */
        if (sim_rng_below(&rng, 5) == 0) cyc += (unsigned)sim_rng_below(&rng, 12); /* stall */
        if (in.size == 2 && sim_rng_below(&rng, 4) == 0) cyc = 0;                  /* dual-issued */
        e.cycles = cyc;
        time += cyc;
        e.time = time;
        e.next = next;
        e.next_isa = next_isa;
        rc = push_ev(t, &e);
        if (!rc && w == MCR_CIDR && pass && (o->ctx_switch || o->vmid)) {
            v7_ev c;
            memset(&c, 0, sizeof c);
            c.kind = V7_EV_CTX;
            c.time = time;
            if (o->ctx_switch && irqs % 2 == 0) cid = cid == cid_a ? cid_b : cid_a;
            if (o->vmid && irqs % 3 == 0) vmid = (uint8_t)(vmid == 1 ? 2 : 1);
            c.value = cid;
            c.vmid = vmid;
            rc = push_ev(t, &c);
        }
        if (isa != next_isa) it.itstate = it.left = 0;
        addr = next;
        isa = next_isa;
    }
    return rc;
}
