/* PTM (PFT 1.1, Arm IHI 0035B) encoder for the Armv7 program model (see v7.h).
 *
 * Waypoints are branches. A direct branch gives an atom (E taken, N not); a taken indirect
 * branch gives a branch address packet (which implies its E atom) unless the return stack is
 * enabled and the target is the address on top of it (then an E atom, and the stack is popped);
 * with branch broadcast every taken branch gives a branch address packet. Branches with link
 * push the return address. An exception: a waypoint update packet for the last instruction
 * executed when it was not a waypoint (IHI 0035B 4.5.5), then a branch address packet with
 * the exception number and the vector. Addresses are compressed against the last address
 * packet (its address and instruction set, as the decoder's packet state keeps them); a change
 * of instruction set takes the five-byte form. Atoms are packed up to five per header (one per
 * header with its cycle count when cycle-accurate). Context ID, VMID and timestamp packets come
 * as the events say; A-Sync + I-Sync at the start and about every sync_period bytes, at a
 * waypoint (so that no instruction goes untraced). */
#include <stdlib.h>
#include <string.h>

#include "etmkit/elem.h"
#include "etmkit/etmkit.h"
#include "etmkit/isa.h"
#include "etmkit/ptm.h"
#include "sim/v7.h"

void v7_bytes_free(v7_bytes *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

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

typedef struct penc {
    v7_bytes *out;
    ek_ptm_config cfg;
    /* the packet state a parser keeps: last address and instruction set sent */
    uint32_t pk_addr;
    uint8_t pk_isa;
    int pk_valid;
    /* atoms waiting for a header (non cycle-accurate) */
    uint8_t natoms, atoms; /* bit i: atom i (oldest first) is N */
    uint32_t cc;           /* cycles not yet reported */
    /* return stack as the decoder keeps it */
    uint32_t rs[16];
    uint8_t rs_isa[16];
    unsigned rs_n, rs_head;
    /* instructions since the last waypoint */
    int since_wp;
    uint32_t last_addr;
    uint8_t last_isa;
    uint32_t cid;
    uint8_t vmid;
} penc;

/* Cycle count field: bits 3:0 in bits 5:2 of the first byte (bit 6: more), then 7 bits a byte
 * (bit 7: more), at most 5 bytes. `first` holds the bits the field shares its byte with. */
static void put_cc(penc *e, uint8_t first, uint32_t cc)
{
    uint8_t b = (uint8_t)(first | (cc & 0xF) << 2);
    cc >>= 4;
    if (!cc) {
        put(e->out, b);
        return;
    }
    put(e->out, b | 0x40);
    for (int i = 1; i < 5; i++) {
        uint8_t v = (uint8_t)(cc & 0x7F);
        cc >>= 7;
        if (cc && i < 4) v |= 0x80;
        put(e->out, v);
        if (!(v & 0x80)) break;
    }
}

static void flush_atoms(penc *e)
{
    if (!e->natoms) return;
    static const uint8_t hdr[6] = {0, 0x80, 0x88, 0x90, 0xA0, 0xC0};
    uint8_t h = hdr[e->natoms];
    for (unsigned i = 0; i < e->natoms; i++)
        if ((e->atoms >> i) & 1) h |= (uint8_t)(2u << (e->natoms - 1 - i));
    put(e->out, h);
    e->natoms = e->atoms = 0;
}

static void atom(penc *e, int exec)
{
    if (e->cfg.cycle_acc) {
        put_cc(e, (uint8_t)(0x80 | (exec ? 0 : 2)), e->cc);
        e->cc = 0;
        return;
    }
    if (!exec) e->atoms |= (uint8_t)(1u << e->natoms);
    if (++e->natoms == 5) flush_atoms(e);
}

/* Address bytes in the branch address / waypoint update format. exc: bit 6 of the last byte
 * (exception bytes follow; with the five-byte form of a waypoint update: the AltISA byte). */
static void put_addr(penc *e, uint32_t addr, uint8_t isa, int exc, int branch_hdr)
{
    const uint32_t v = isa == EK_ISET_A32 ? addr >> 1 : addr;
    static const unsigned covered[5] = {7, 13, 20, 27, 32};
    unsigned n = 5;
    if (!exc && e->pk_valid && isa == e->pk_isa) {
        const uint32_t pv = isa == EK_ISET_A32 ? e->pk_addr >> 1 : e->pk_addr;
        for (unsigned k = 1; k <= 4; k++)
            if ((v >> covered[k - 1]) == (pv >> covered[k - 1])) {
                n = k;
                break;
            }
    }
    uint8_t b0 = (uint8_t)((v & 0x7E) | (branch_hdr ? 1 : 0));
    if (n > 1) b0 |= 0x80;
    if (branch_hdr)
        put(e->out, b0);
    else
        put(e->out, (uint8_t)(b0 & 0xFE)); /* waypoint update: bit 0 is an address bit (0) */
    for (unsigned i = 1; i < n; i++) {
        if (i == 4) {
            uint8_t b = isa == EK_ISET_T32 ? (uint8_t)(0x10 | ((v >> 28) & 0xF))
                                           : (uint8_t)((v >> 28) & 0x7);
            put(e->out, (uint8_t)(b | (exc ? 0x40 : 0)));
        } else if (i == n - 1) {
            put(e->out, (uint8_t)(((v >> (7 * i)) & 0x3F) | (exc ? 0x40 : 0)));
        } else {
            put(e->out, (uint8_t)(((v >> (7 * i)) & 0x7F) | 0x80));
        }
    }
    e->pk_addr = addr;
    e->pk_isa = isa;
    e->pk_valid = 1;
}

static void branch_addr(penc *e, uint32_t addr, uint8_t isa, int exc_num)
{
    flush_atoms(e);
    put_addr(e, addr, isa, exc_num >= 0, 1);
    if (exc_num >= 0) {
        /* exception byte 1: NS, number 3:0 (bit 7: a second byte with number 8:4 and Hyp) */
        const unsigned ns = 1;
        if (exc_num < 16) {
            put(e->out, (uint8_t)(ns | (unsigned)exc_num << 1));
        } else {
            put(e->out, (uint8_t)(0x80 | ns | ((unsigned)exc_num & 0xF) << 1));
            put(e->out, (uint8_t)(((unsigned)exc_num >> 4) & 0x1F));
        }
    }
    if (e->cfg.cycle_acc) {
        put_cc(e, 0, e->cc);
        e->cc = 0;
    }
}

static void rs_push(penc *e, uint32_t a, uint8_t isa)
{
    e->rs_head = (e->rs_head + 1) & 15;
    e->rs[e->rs_head] = a;
    e->rs_isa[e->rs_head] = isa;
    if (e->rs_n < 16) e->rs_n++;
}

static void isync(penc *e, uint32_t addr, uint8_t isa, unsigned reason)
{
    flush_atoms(e);
    static const uint8_t async[6] = {0, 0, 0, 0, 0, 0x80};
    for (int i = 0; i < 6; i++)
        put(e->out, async[i]);
    put(e->out, 0x08);
    const uint32_t a = addr | (isa == EK_ISET_T32 ? 1u : 0u);
    for (int i = 0; i < 4; i++)
        put(e->out, (uint8_t)(a >> (8 * i)));
    put(e->out, (uint8_t)(reason << 5 | 1u << 3)); /* NS */
    if (reason && e->cfg.cycle_acc) {
        put_cc(e, 0, e->cc);
        e->cc = 0;
    }
    for (unsigned i = 0; i < e->cfg.cid_bytes; i++)
        put(e->out, (uint8_t)(e->cid >> (8 * i)));
    e->pk_addr = addr;
    e->pk_isa = isa;
    e->pk_valid = 1;
    e->rs_n = 0; /* the decoder flushes its return stack */
}

static void timestamp(penc *e, uint64_t ts)
{
    flush_atoms(e);
    put(e->out, 0x42);
    const unsigned max = e->cfg.ts_64 ? 9 : 7;
    for (unsigned i = 0; i < max; i++) {
        const int last = i == max - 1;
        if (last) {
            put(e->out, (uint8_t)(ts & (e->cfg.ts_64 ? 0xFF : 0x3F)));
            break;
        }
        uint8_t v = (uint8_t)(ts & 0x7F);
        ts >>= 7;
        if (ts) v |= 0x80;
        put(e->out, v);
        if (!ts) break;
    }
    if (e->cfg.cycle_acc) {
        put_cc(e, 0, e->cc);
        e->cc = 0;
    }
}

int v7_encode_ptm(const v7_trace *t, const ek_etm3_regs *regs, const v7_enc_opts *o, v7_bytes *out)
{
    penc e;
    memset(&e, 0, sizeof e);
    e.out = out;
    if (ek_ptm_config_init(&e.cfg, regs, EK_ARCH_V7A, EK_PROFILE_A)) return EK_ERR_ARG;
    const size_t period = o && o->sync_period ? o->sync_period : 1024;
    e.cid = t->start_cid;
    e.vmid = t->start_vmid;
    isync(&e, t->start_addr, t->start_isa, 1);
    if (e.cfg.vmid) {
        put(e.out, 0x3C);
        put(e.out, e.vmid);
    }
    size_t next_sync = out->n + period;
    for (size_t i = 0; i < t->n; i++) {
        const v7_ev *v = &t->ev[i];
        switch (v->kind) {
        case V7_EV_INSN: {
            e.cc += v->cycles;
            e.last_addr = v->addr;
            e.last_isa = v->isa;
            if (v->type != EK_ITYPE_BR && v->type != EK_ITYPE_BR_INDIRECT) {
                e.since_wp = 1;
                break;
            }
            e.since_wp = 0;
            const int taken = v->exec;
            if (v->type == EK_ITYPE_BR) {
                if (taken && e.cfg.bb)
                    branch_addr(&e, v->next, v->next_isa, -1);
                else
                    atom(&e, taken);
                if (taken && v->link) rs_push(&e, v->addr + v->size, v->isa);
            } else if (!taken) {
                atom(&e, 0);
            } else {
                const int hit = e.cfg.ret_stack && !e.cfg.bb && e.rs_n &&
                                e.rs[e.rs_head] == v->next && e.rs_isa[e.rs_head] == v->next_isa;
                if (hit) {
                    atom(&e, 1);
                    e.rs_head = (e.rs_head - 1) & 15;
                    e.rs_n--;
                } else {
                    branch_addr(&e, v->next, v->next_isa, -1);
                }
                if (v->link) rs_push(&e, v->addr + v->size, v->isa);
            }
            if (out->n >= next_sync) {
                isync(&e, v->next, v->next_isa, 0);
                if (e.cfg.vmid) {
                    put(e.out, 0x3C);
                    put(e.out, e.vmid);
                }
                next_sync = out->n + period;
            }
            break;
        }
        case V7_EV_EXC:
            flush_atoms(&e);
            if (e.since_wp) {
                put(e.out, 0x72);
                put_addr(&e, e.last_addr, e.last_isa, 0, 0);
            }
            e.since_wp = 0;
            branch_addr(&e, v->next, v->next_isa, (int)v->value);
            break;
        case V7_EV_CTX:
            if (e.cfg.cid_bytes && v->value != e.cid) {
                flush_atoms(&e);
                put(e.out, 0x6E);
                for (unsigned k = 0; k < e.cfg.cid_bytes; k++)
                    put(e.out, (uint8_t)(v->value >> (8 * k)));
            }
            e.cid = v->value;
            if (e.cfg.vmid && v->vmid != e.vmid) {
                flush_atoms(&e);
                put(e.out, 0x3C);
                put(e.out, v->vmid);
            }
            e.vmid = v->vmid;
            break;
        case V7_EV_TS:
            if (e.cfg.ts_enabled) timestamp(&e, v->time);
            break;
        default: break;
        }
    }
    flush_atoms(&e);
    return out->oom ? EK_ERR_NOMEM : 0;
}
