/* ETMv3 (Arm IHI 0014) encoder for the Armv7 program model (see v7.h), instruction trace only.
 *
 * Every instruction is an atom: E when it passed its condition code, N when it failed. Atoms are
 * packed into P-headers (format 1: up to 15 E atoms and an N; cycle-accurate: one instruction
 * per P-header, format 1 for one cycle, format 4 for none, format 3 for 2-8 cycles, W-only
 * format 3 headers before it for more). A taken indirect branch is followed by a branch address
 * packet with its target; direct branches, BLX (immediate) included, need none (the decoder
 * follows them in the code). An exception gives a branch address packet in the five-byte form
 * with the exception byte (number, NS) and the vector. Addresses are compressed against the last
 * address packet as the parser keeps it; a change of instruction set takes the five-byte form.
 * Context ID, VMID and timestamp packets as the events say; A-Sync + I-Sync (with cycle count
 * when cycle-accurate) at the start and about every sync_period bytes. */
#include <stdlib.h>
#include <string.h>

#include "etmkit/elem.h"
#include "etmkit/etm3.h"
#include "etmkit/etmkit.h"
#include "etmkit/isa.h"
#include "sim/v7.h"

static void put(v7_bytes *b, uint8_t v)
{
    if (b->n == b->cap) {
        const size_t cap = b->cap ? b->cap * 2 : 65536;
        uint8_t *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    b->p[b->n++] = v;
}

typedef struct eenc {
    v7_bytes *out;
    ek_etm3_config cfg;
    uint32_t pk_addr;
    uint8_t pk_isa;
    int pk_valid;
    unsigned ne; /* E atoms waiting (format 1) */
    uint32_t cc_since_isync;
    uint32_t cid;
    uint8_t vmid;
} eenc;

static void flush_atoms(eenc *e, int with_n)
{
    if (!e->ne && !with_n) return;
    put(e->out, (uint8_t)(0x80 | (with_n ? 0x40 : 0) | e->ne << 2));
    e->ne = 0;
}

static void atom(eenc *e, int exec, uint32_t cycles)
{
    if (!e->cfg.cycle_acc) {
        if (!exec) {
            flush_atoms(e, 1);
        } else if (++e->ne == 15) {
            flush_atoms(e, 0);
        }
        return;
    }
    /* one P-header per instruction; what its format cannot carry goes first in W-only format 3
     * headers (1-8 cycles each) */
    uint32_t rest = cycles;
    const uint32_t last_max = exec ? 8 : 1;
    while (rest > last_max) {
        const uint32_t w = rest - last_max > 8 ? 8 : rest - last_max;
        put(e->out, (uint8_t)(0xA0 | (w - 1) << 2));
        rest -= w;
    }
    if (exec)
        put(e->out, rest == 0   ? 0x92                                /* format 4: E, no cycle */
                    : rest == 1 ? 0x84                                /* format 1: E, one cycle */
                                : (uint8_t)(0xE0 | (rest - 1) << 2)); /* format 3: W x rest, E */
    else
        put(e->out, rest == 0 ? 0x96 : 0xC0); /* format 4 / format 1 with an N atom */
}

/* Branch address: byte 0 bits 6:1, then 7 bits a byte, the fifth byte with the instruction
 * set (and bit 6: exception bytes follow); A32 addresses shifted by 2, T32 by 1. */
static void branch_addr(eenc *e, uint32_t addr, uint8_t isa, int exc_num)
{
    flush_atoms(e, 0);
    const uint32_t v = isa == EK_ISET_A32 ? addr >> 2 : addr >> 1;
    static const unsigned covered[4] = {6, 13, 20, 27};
    unsigned n = 5;
    if (exc_num < 0 && e->pk_valid && isa == e->pk_isa) {
        const uint32_t pv = isa == EK_ISET_A32 ? e->pk_addr >> 2 : e->pk_addr >> 1;
        for (unsigned k = 1; k <= 4; k++)
            if ((v >> covered[k - 1]) == (pv >> covered[k - 1])) {
                n = k;
                break;
            }
    }
    put(e->out, (uint8_t)(((v & 0x3F) << 1) | 1 | (n > 1 ? 0x80 : 0)));
    for (unsigned i = 1; i < n; i++) {
        if (i == 4) {
            uint8_t b = isa == EK_ISET_T32 ? (uint8_t)(0x10 | ((v >> 27) & 0xF))
                                           : (uint8_t)(0x08 | ((v >> 27) & 0x7));
            if (exc_num >= 0) b |= 0x40;
            put(e->out, b);
        } else {
            put(e->out, (uint8_t)(((v >> (6 + 7 * (i - 1))) & 0x7F) | (i < n - 1 ? 0x80 : 0)));
        }
    }
    if (exc_num >= 0) put(e->out, (uint8_t)(1u | ((unsigned)exc_num & 0xF) << 1)); /* NS */
    e->pk_addr = addr;
    e->pk_isa = isa;
    e->pk_valid = 1;
}

static void isync(eenc *e, uint32_t addr, uint8_t isa, unsigned reason)
{
    flush_atoms(e, 0);
    static const uint8_t async[6] = {0, 0, 0, 0, 0, 0x80};
    for (int i = 0; i < 6; i++)
        put(e->out, async[i]);
    if (e->cfg.cycle_acc) {
        put(e->out, 0x70);
        uint32_t cc = e->cc_since_isync;
        for (int i = 0; i < 5; i++) {
            uint8_t v = (uint8_t)(cc & 0x7F);
            cc >>= 7;
            if (cc && i < 4) v |= 0x80;
            put(e->out, v);
            if (!(v & 0x80)) break;
        }
        e->cc_since_isync = 0;
    } else {
        put(e->out, 0x08);
    }
    for (unsigned i = 0; i < e->cfg.cid_bytes; i++)
        put(e->out, (uint8_t)(e->cid >> (8 * i)));
    put(e->out, (uint8_t)(reason << 5 | 1u << 3)); /* NS */
    const uint32_t a = addr | (isa == EK_ISET_T32 ? 1u : 0u);
    for (int i = 0; i < 4; i++)
        put(e->out, (uint8_t)(a >> (8 * i)));
    e->pk_addr = addr;
    e->pk_isa = isa;
    e->pk_valid = 1;
}

static void timestamp(eenc *e, uint64_t ts)
{
    flush_atoms(e, 0);
    put(e->out, 0x42);
    const unsigned max = e->cfg.ts_64 ? 9 : 7;
    for (unsigned i = 0; i < max; i++) {
        if (i == max - 1) {
            put(e->out, (uint8_t)(ts & (e->cfg.ts_64 ? 0xFF : 0x3F)));
            break;
        }
        uint8_t v = (uint8_t)(ts & 0x7F);
        ts >>= 7;
        if (ts) v |= 0x80;
        put(e->out, v);
        if (!ts) break;
    }
}

int v7_encode_etm3(const v7_trace *t, const ek_etm3_regs *regs, const v7_enc_opts *o, v7_bytes *out)
{
    eenc e;
    memset(&e, 0, sizeof e);
    e.out = out;
    if (ek_etm3_config_init(&e.cfg, regs, EK_ARCH_V7A, EK_PROFILE_A)) return EK_ERR_ARG;
    const int vmid_on = e.cfg.virt_ext;
    const size_t period = o && o->sync_period ? o->sync_period : 1024;
    e.cid = t->start_cid;
    e.vmid = t->start_vmid;
    isync(&e, t->start_addr, t->start_isa, 1);
    if (vmid_on) {
        put(e.out, 0x3C);
        put(e.out, e.vmid);
    }
    size_t next_sync = out->n + period;
    for (size_t i = 0; i < t->n; i++) {
        const v7_ev *v = &t->ev[i];
        switch (v->kind) {
        case V7_EV_INSN:
            atom(&e, v->exec, v->cycles);
            e.cc_since_isync += v->cycles;
            if (v->type == EK_ITYPE_BR_INDIRECT && v->exec)
                branch_addr(&e, v->next, v->next_isa, -1);
            if (out->n >= next_sync) {
                isync(&e, v->next, v->next_isa, 0);
                next_sync = out->n + period;
            }
            break;
        case V7_EV_EXC: branch_addr(&e, v->next, v->next_isa, (int)v->value); break;
        case V7_EV_CTX:
            if (e.cfg.cid_bytes && v->value != e.cid) {
                flush_atoms(&e, 0);
                put(e.out, 0x6E);
                for (unsigned k = 0; k < e.cfg.cid_bytes; k++)
                    put(e.out, (uint8_t)(v->value >> (8 * k)));
            }
            e.cid = v->value;
            if (vmid_on && v->vmid != e.vmid) {
                flush_atoms(&e, 0);
                put(e.out, 0x3C);
                put(e.out, v->vmid);
            }
            e.vmid = v->vmid;
            break;
        case V7_EV_TS:
            if (e.cfg.regs.etmcr & (1u << 28)) timestamp(&e, v->time);
            break;
        default: break;
        }
    }
    flush_atoms(&e, 0);
    return out->oom ? EK_ERR_NOMEM : 0;
}
