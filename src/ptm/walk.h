/* A32/T32 code walking shared by the PTM and ETMv3 instruction-flow decoders: read code through
 * an ek_flow_mem, classify with src/isa (OpenCSD-compatible options), walk to the next waypoint
 * or to an address, and a return stack. Internal to src/ptm and src/etm3. */
#ifndef ETMKIT_PTM_WALK_H
#define ETMKIT_PTM_WALK_H

#include <stdint.h>

#include "etmkit/elem.h"
#include "etmkit/image.h" /* ek_flow_mem */
#include "etmkit/isa.h"

typedef struct a32_walker {
    ek_flow_mem mem;
    ek_isa_cfg icfg;
    uint8_t trace_id;
    ek_mem_span span;
    uint32_t span_space;
    int span_valid;
    uint64_t span_gen;
} a32_walker;

enum { WALK_TO_WAYPOINT = 0, WALK_TO_ADDR_INCL, WALK_TO_ADDR_EXCL, WALK_ONE };

/* Result of a walk. */
typedef struct a32_walk {
    uint64_t st, en; /* range walked [st, en) */
    uint64_t next;   /* address after the last instruction (en) */
    uint64_t nacc;   /* with nacc: the address that could not be read */
    uint32_t n;      /* instructions walked */
    ek_insn last;    /* the last instruction */
    uint64_t last_addr;
    int found;    /* stopped on the waypoint / address */
    int nacc_hit; /* stopped because code was not readable */
    int bad_isa;  /* instruction set the walker cannot decode */
} a32_walk;

void a32_walker_init(a32_walker *w, const ek_flow_mem *mem, uint8_t trace_id, ek_arch arch,
                     ek_arch_profile profile);
/* Walk from addr in isa (ek_iset) and memory space `space` (EK_MS_S / EK_MS_N). it: the T32
 * IT-block state (advanced). max_insns bounds the walk (damaged trace / data as code). */
void a32_walk_run(a32_walker *w, uint64_t addr, unsigned isa, uint32_t space, int mode,
                  uint64_t match, ek_it_state *it, a32_walk *out);

/* Return stack of A32/T32 return addresses (PFT return stack / OpenCSD's). */
typedef struct a32_ret_stack {
    uint32_t addr[16];
    uint8_t isa[16];
    uint8_t head, n, active, overflow;
} a32_ret_stack;

static inline void a32_rs_flush(a32_ret_stack *s)
{
    s->n = 0;
    s->head = 0;
    s->overflow = 0;
}

static inline void a32_rs_push(a32_ret_stack *s, uint32_t addr, uint8_t isa)
{
    if (!s->active) return;
    s->head = (uint8_t)((s->head + 1) & 15);
    s->addr[s->head] = addr;
    s->isa[s->head] = isa;
    if (s->n < 16) s->n++;
}

static inline uint32_t a32_rs_pop(a32_ret_stack *s, uint8_t *isa)
{
    if (!s->active) return 0xFFFFFFFFu;
    if (!s->n) {
        s->overflow = 1;
        return 0xFFFFFFFFu;
    }
    const uint32_t a = s->addr[s->head];
    *isa = s->isa[s->head];
    s->head = (uint8_t)((s->head - 1) & 15);
    s->n--;
    return a;
}

/* Fill an INSTR_RANGE element from a walk. */
void a32_range_elem(ek_elem *e, const a32_walk *wk, unsigned isa, int exec);

#endif
