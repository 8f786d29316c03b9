/* Internals of the instruction-flow decoder (src/flow/). */
#ifndef ETMKIT_FLOW_INT_H
#define ETMKIT_FLOW_INT_H

#include <stdint.h>

#include "etmkit/elem.h"
#include "etmkit/etm4.h"
#include "etmkit/flow.h"
#include "etmkit/isa.h"

/* ---- pending ("P0") elements ------------------------------------------------------------
 * Packets are turned into pending elements; commit / cancel / mispredict / discard decide
 * what becomes output. Kinds and their roles follow the ETMv4 architecture's element model
 * (and OpenCSD's decoder, whose output order we reproduce). */
enum fl_kind {
    FL_UNKNOWN = 0,
    FL_ATOM,
    FL_ADDR,
    FL_CTXT,
    FL_TRC_ON,
    FL_EXCEP,
    FL_EXCEP_RET,
    FL_EVENT,
    FL_TS,
    FL_CC,
    FL_TS_CC,
    FL_MARKER,
    FL_Q,
    FL_OVERFLOW,
    FL_FUNC_RET,
    FL_SRC_ADDR,
    FL_TRANS_TRACE_INIT,
    FL_TRANS_START,
    FL_TRANS_COMMIT,
    FL_TRANS_FAIL,
    FL_ITE,
    FL_UNSEEN, /* speculative elements from before the TRACE_INFO we synchronised on (counted) */
    FL_TINFO,
};

typedef struct fl_ctxt {
    uint32_t cid, vmid;
    uint8_t el, sf, ns, nse;
    uint8_t updated, updated_c, updated_v;
    uint8_t is; /* instruction set bit at the time of the packet */
} fl_ctxt;

typedef struct fl_pend {
    uint64_t index; /* packet index */
    uint8_t kind;   /* fl_kind */
    uint8_t is_p0;  /* counts for commit / cancel */
    uint8_t root;   /* ek_etm4_type of the packet */
    union {
        struct {
            uint32_t bits; /* oldest in bit 0, 1 = E */
            uint32_t num;
        } atom;
        struct {
            uint64_t val;
            uint8_t is;
        } addr; /* FL_ADDR, FL_SRC_ADDR */
        fl_ctxt ctxt;
        struct {
            uint16_t num;
            uint8_t prev_same;
        } exc;
        uint32_t param[3]; /* EVENT: [0]; CC: [0]; TS: [0] lo, [1] hi, [2] cc */
        struct {
            uint64_t addr;
            uint32_t count;
            uint8_t has_addr;
            uint8_t is;
        } q;
        uint32_t unseen; /* FL_UNSEEN: how many */
        struct {
            uint64_t value;
            uint8_t el;
        } ite;
    } u;
} fl_pend;

/* Double-ended queue of pending elements: "oldest" is the next to commit, "newest" the last
 * packet's. */
typedef struct fl_deque {
    fl_pend *buf;
    uint32_t cap;   /* power of two */
    uint32_t start; /* position of the oldest */
    uint32_t n;
} fl_deque;

/* ---- code walking ---------------------------------------------------------------------- */

/* The instruction being followed: where the next one is, and what the last one was. */
typedef struct fl_instr {
    uint64_t addr;    /* next instruction to decode */
    uint64_t target;  /* last: direct branch target */
    uint8_t isa;      /* ek_isa of the next instruction */
    uint8_t type;     /* last: ek_itype */
    uint8_t sub;      /* last: ek_isubtype */
    uint8_t size;     /* last: bytes */
    uint8_t cond;     /* last: conditional */
    uint8_t link;     /* last: branch with link */
    uint8_t next_isa; /* last: ISA after it when executed */
    ek_it_state it;   /* T32 IT-block state */
} fl_instr;

/* One remembered walk (32 bytes): from (addr, isa, space) with no IT block pending, `count`
 * instructions to addr + len (the address after the last one decoded); FL_BF_FOUND = the last
 * one is a waypoint described by the other fields, else the code there is not readable. */
#define FL_BF_FOUND 0x01
#define FL_BF_COND  0x02
#define FL_BF_LINK  0x04
typedef struct fl_block {
    uint64_t addr;
    uint64_t target;
    uint32_t count;
    uint32_t len;
    uint8_t isa, space, flags, next_isa;
    uint8_t type, sub, size, epoch;
    uint8_t it_state, it_left; /* T32 IT state after the walk */
} fl_block;

typedef struct fl_bcache {
    fl_block *tab; /* 1 << bits entries, direct mapped; NULL until first use */
    uint32_t bits;
    uint8_t epoch; /* entries of another epoch are empty */
} fl_bcache;

int fl_bcache_init(fl_bcache *bc, uint32_t bits);
void fl_bcache_free(fl_bcache *bc);
void fl_bcache_clear(fl_bcache *bc);
static inline size_t fl_bcache_slot(const fl_bcache *bc, uint64_t addr, uint8_t isa, uint8_t space)
{
    uint64_t h = (addr >> 1) ^ ((uint64_t)isa << 61) ^ ((uint64_t)space << 53);
    h *= 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> (64 - bc->bits));
}

/* Entry for the key, or NULL (inline: one lookup per atom). */
static inline const fl_block *fl_bcache_get(const fl_bcache *bc, uint64_t addr, uint8_t isa,
                                            uint8_t space)
{
    const fl_block *b = &bc->tab[fl_bcache_slot(bc, addr, isa, space)];
    if (b->epoch == bc->epoch && b->addr == addr && b->isa == isa && b->space == space) return b;
    return NULL;
}
/* Slot to fill for the key (always succeeds once initialised; may evict). */
fl_block *fl_bcache_put(fl_bcache *bc, uint64_t addr, uint8_t isa, uint8_t space);

#endif
