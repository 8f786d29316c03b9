/* A32/T32 code walking for the PTM and ETMv3 decoders. See walk.h. */
#include <string.h>

#include "walk.h"

#define WALK_MAX_INSNS (1u << 20) /* a walk longer than this is data, not code */

static unsigned ocsd_arch(ek_arch arch)
{
    switch (arch) {
    case EK_ARCH_V8A:
    case EK_ARCH_V8R: return 0x0800;
    case EK_ARCH_V8_3A: return 0x0803;
    default: return 0x0700;
    }
}

void a32_walker_init(a32_walker *w, const ek_flow_mem *mem, uint8_t trace_id, ek_arch arch,
                     ek_arch_profile profile)
{
    memset(w, 0, sizeof *w);
    if (mem) w->mem = *mem;
    w->trace_id = trace_id;
    ek_isa_cfg_ocsd(&w->icfg, ocsd_arch(arch), profile == EK_PROFILE_M, 0);
}

/* 4 readable bytes at addr in one span (OpenCSD reads 4 for every instruction). */
static int read4(a32_walker *w, uint64_t addr, uint32_t space, uint32_t *word)
{
    if (!w->mem.find) return 0;
    const uint64_t gen = w->mem.generation ? w->mem.generation(w->mem.ctx) : 0;
    if (!(w->span_valid && w->span_space == space && w->span_gen == gen && addr >= w->span.start &&
          addr - w->span.start < w->span.size)) {
        w->span_valid = 0;
        ek_mem_span s;
        if (!w->mem.find(w->mem.ctx, addr, space, w->trace_id, &s) || !s.data || !s.size ||
            addr < s.start || addr - s.start >= s.size)
            return 0;
        w->span = s;
        w->span_space = space;
        w->span_gen = gen;
        w->span_valid = 1;
    }
    const uint64_t off = addr - w->span.start;
    if (w->span.size - off < 4) return 0;
    const uint8_t *p = w->span.data + off;
    *word = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    return 1;
}

void a32_walk_run(a32_walker *w, uint64_t addr, unsigned isa, uint32_t space, int mode,
                  uint64_t match, ek_it_state *it, a32_walk *out)
{
    memset(out, 0, sizeof *out);
    out->st = out->en = addr;
    for (;;) {
        uint32_t word;
        if (out->n >= WALK_MAX_INSNS || !read4(w, addr, space, &word)) {
            out->nacc_hit = 1;
            out->nacc = addr;
            return;
        }
        if (isa != EK_ISET_A32 && isa != EK_ISET_T32) {
            out->bad_isa = 1;
            return;
        }
        ek_insn x;
        ek_isa_classify(word, isa == EK_ISET_T32 ? EK_ISA_T32 : EK_ISA_A32, addr, &w->icfg, &x);
        if (isa == EK_ISET_T32 && it)
            ek_isa_it_step(it, &x, &w->icfg);
        else if (it)
            it->itstate = it->left = 0;
        const uint64_t op = addr;
        addr += x.size;
        out->en = out->next = addr;
        out->n++;
        out->last = x;
        out->last_addr = op;
        if (mode == WALK_TO_WAYPOINT)
            out->found = x.type != EK_ITYPE_OTHER;
        else if (mode == WALK_ONE)
            out->found = 1;
        else if (mode == WALK_TO_ADDR_EXCL)
            out->found = addr == match;
        else
            out->found = op == match;
        if (out->found) return;
    }
}

void a32_range_elem(ek_elem *e, const a32_walk *wk, unsigned isa, int exec)
{
    e->type = EK_ELEM_INSTR_RANGE;
    e->st_addr = wk->st;
    e->en_addr = wk->en;
    e->num_instr = wk->n;
    e->isa = (uint8_t)isa;
    e->last_i_type = wk->last.type;
    e->last_i_sub = wk->last.subtype;
    e->last_i_size = wk->last.size;
    if (exec) e->flags |= EK_ELEMF_LAST_EXEC;
    if (wk->last.flags & EK_IF_COND) e->flags |= EK_ELEMF_LAST_COND;
}
