/* Real AArch64 binaries in the simulator (scenario workload-real).
 *
 * Debian's libc.so.6, libm.so.6 and ld-linux-aarch64.so.1 (package libc6-arm64-cross, read at
 * run time: they are not ours to embed) and simreal, a program compiled with clang at build
 * time and linked against stand-ins of them, are loaded at fixed bases and bound the way the
 * dynamic linker binds them with BIND_NOW. The interpreter then walks their instructions as
 * it walks the simulator's own programs, with rules that keep the path one a real core could
 * take through this code:
 *  - every direct branch, call and return is the instruction's own; returns use the shadow
 *    stack of calls;
 *  - an indirect branch goes where the code says when the code says it: a PLT stub or a call
 *    through the GOT to the symbol its relocation names (an IFUNC to one of the functions its
 *    resolver returns), a switch's jump table to one of its entries (the table read from
 *    .rodata, its size from the bound check before it), the dynamic linker's jump to the
 *    program's entry point; otherwise a call through a pointer goes to a function whose
 *    address the binaries take (RELATIVE, GLOB_DAT, ABS64 and JUMP_SLOT relocations), a
 *    branch through a loaded pointer after the frame is gone is a tail call to one, and any
 *    other indirect branch (computed gotos, longjmp) is never taken;
 *  - every slot has a cost: the fewest instructions from it to the return of its function,
 *    through the cheapest callees (a fixpoint over all images); paths that cannot return
 *    (abort, exit, BRK, UDF, WFI, ISB, pointer-authenticated branches, unresolvable jumps)
 *    cost "infinite" and are never entered, so that every call returns;
 *  - conditional branches go the way the seeded random source says, except that a successor
 *    that cannot return is never chosen, and a frame that ran too long or a call chain that
 *    grew too deep heads for its return on the cheapest path (loops are bounded);
 *  - system calls take their number from the MOVZ to x8 before them; exit, exit_group and
 *    rt_sigreturn never return and are never reached.
 * Data is not simulated: which way a data-dependent branch goes is the walk's choice, but the
 * choice is always between successors the instruction has. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"
#include "etmkit/etmkit.h"
#include "sim/sim.h"
#include "sim/programs/simmeta.h"

#define RC_INF         0xFFFFFFFFu
#define RC_KERNEL_COST 64u    /* a system call's round trip through the kernel */
#define RC_FRAME_LIMIT 24000u /* instructions a frame may run before it heads for its return */
#define RC_DEPTH_LIMIT 28u    /* call depth from which every frame heads for its return */
#define RC_WINDOW      16u    /* instructions before an indirect branch that are evaluated */

enum { IND_NONE = 0, IND_TARGETS, IND_ANY, IND_ENTRY, IND_DEAD };

typedef struct rc_reloc {
    uint64_t addr; /* link-time address of the slot */
    uint32_t type;
    uint32_t sym; /* .dynsym index */
    int64_t addend;
} rc_reloc;

typedef struct rc_ind {
    uint32_t slot;
    uint8_t kind;      /* IND_* */
    uint32_t first, n; /* IND_TARGETS: runtime addresses in the pool */
} rc_ind;

typedef struct rc_img {
    sim_image *img;
    uint64_t bias; /* runtime = link-time + bias */
    int interp;    /* the dynamic linker */
    int exe;
    const uint8_t *dynsym;
    size_t ndyn;
    const char *dynstr;
    size_t dynstr_size;
    const uint8_t *versym;
    rc_reloc *relocs;
    size_t nrelocs;
    uint64_t entry;
    uint32_t *cost;
    rc_ind *ind;
    size_t nind, capind;
} rc_img;

typedef struct sim_real {
    rc_img imgs[SIM_REAL_MAX];
    int n;
    EK_VEC(uint64_t) pool;  /* indirect targets */
    EK_VEC(uint64_t) taken; /* address-taken functions (runtime), sorted, unique */
    uint32_t *taken_cost;
    EK_VEC(uint32_t) finite; /* indices into taken with a finite cost */
    uint32_t any_min;        /* cheapest address-taken function */
    uint64_t any_min_addr;
    uint64_t exe_entry;                     /* runtime */
    uint64_t ifunc_res[64], ifunc_pick[64]; /* each resolver runs once: its result */
    int nifunc;
    /* the global scope's definitions by name (open addressing): image index + 1, symbol */
    struct rc_def {
        const char *name;
        uint32_t img, sym;
    } * defs;
    size_t ndefs;             /* a power of two */
    uint64_t insn_bytes_seen; /* for the footprint: set bits in seen[] */
} sim_real;

/* ------------------------------------------------------------------ ELF facts */

static const uint8_t *shdr(const sim_image *img, unsigned i)
{
    uint64_t shoff = ek_le64(img->data + 40);
    unsigned shentsize = ek_le16(img->data + 58), shnum = ek_le16(img->data + 60);
    if (i >= shnum || shentsize < 64) return NULL;
    uint64_t off = shoff + (uint64_t)i * shentsize;
    return off + 64 <= img->size ? img->data + off : NULL;
}

static int rel_cmp(const void *a, const void *b)
{
    const rc_reloc *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int load_dyn(rc_img *r)
{
    const sim_image *img = r->img;
    unsigned shnum = ek_le16(img->data + 60);
    r->entry = ek_le64(img->data + 24);
    size_t nrel = 0;
    for (unsigned i = 0; i < shnum; i++) {
        const uint8_t *sh = shdr(img, i);
        if (!sh) return EK_ERR_FORMAT;
        uint32_t type = ek_le32(sh + 4);
        uint64_t off = ek_le64(sh + 24), size = ek_le64(sh + 32);
        if (off + size > img->size) continue;
        if (type == 11 /* SHT_DYNSYM */) {
            r->dynsym = img->data + off;
            r->ndyn = size / 24;
            const uint8_t *str = shdr(img, ek_le32(sh + 40));
            if (str && ek_le64(str + 24) + ek_le64(str + 32) <= img->size) {
                r->dynstr = (const char *)img->data + ek_le64(str + 24);
                r->dynstr_size = ek_le64(str + 32);
            }
        } else if (type == 0x6fffffff /* SHT_GNU_versym */) {
            r->versym = img->data + off;
        } else if (type == 4 /* SHT_RELA */) {
            nrel += size / 24;
        }
    }
    r->relocs = calloc(nrel ? nrel : 1, sizeof(rc_reloc));
    if (!r->relocs) return EK_ERR_NOMEM;
    for (unsigned i = 0; i < shnum; i++) {
        const uint8_t *sh = shdr(img, i);
        if (ek_le32(sh + 4) != 4) continue;
        uint64_t off = ek_le64(sh + 24), size = ek_le64(sh + 32);
        if (off + size > img->size) continue;
        for (uint64_t k = 0; k + 24 <= size; k += 24) {
            const uint8_t *e = img->data + off + k;
            rc_reloc *x = &r->relocs[r->nrelocs++];
            x->addr = ek_le64(e);
            x->type = (uint32_t)ek_le64(e + 8);
            x->sym = (uint32_t)(ek_le64(e + 8) >> 32);
            x->addend = (int64_t)ek_le64(e + 16);
        }
    }
    qsort(r->relocs, r->nrelocs, sizeof(rc_reloc), rel_cmp);
    return r->dynsym && r->dynstr ? 0 : EK_ERR_FORMAT;
}

static const rc_reloc *reloc_at(const rc_img *r, uint64_t addr)
{
    size_t lo = 0, hi = r->nrelocs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (r->relocs[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->nrelocs && r->relocs[lo].addr == addr ? &r->relocs[lo] : NULL;
}

static const char *sym_name(const rc_img *r, uint32_t i)
{
    if (i >= r->ndyn) return "";
    uint32_t n = ek_le32(r->dynsym + 24ull * i);
    return n < r->dynstr_size ? r->dynstr + n : "";
}

/* a defined symbol of the default version (versym without the hidden bit) */
static int sym_defined(const rc_img *r, uint32_t i, unsigned *type, uint64_t *value)
{
    const uint8_t *s = r->dynsym + 24ull * i;
    uint16_t shndx = ek_le16(s + 6);
    if (!shndx || shndx >= 0xff00) return 0;
    if (r->versym && (ek_le16(r->versym + 2ull * i) & 0x8000)) return 0;
    *type = s[4] & 0xF;
    *value = ek_le64(s + 8);
    return 1;
}

static int in_text(const rc_img *r, uint64_t link)
{
    const sim_image *img = r->img;
    return link >= img->seg_vaddr && link < img->seg_vaddr + img->seg_filesz && !(link & 3);
}

static const rc_img *img_of(const sim_real *R, uint64_t rt)
{
    for (int i = 0; i < R->n; i++) {
        const rc_img *r = &R->imgs[i];
        if (rt >= r->bias && in_text(r, rt - r->bias)) return r;
    }
    return NULL;
}

/* ------------------------------------------------------------------ instructions */

static uint32_t word(const rc_img *r, uint32_t slot)
{
    return ek_le32(r->img->data + r->img->seg_off + 4ull * slot);
}

static int64_t sext(uint64_t v, unsigned bits)
{
    return (int64_t)(v << (64 - bits)) >> (64 - bits);
}

/* ERET/RET/BR/BLR with pointer authentication, which the simulator does not model */
static int is_pac_branch(uint32_t op)
{
    return (op & 0xFFFFFBFFu) == 0xD65F0BFFu || /* RETAA, RETAB */
           (op & 0xFFFFFBFFu) == 0xD69F0BFFu || /* ERETAA, ERETAB */
           (op & 0xFEFFF800u) == 0xD61F0800u || (op & 0xFEFFF800u) == 0xD63F0800u; /* BRA*, BLRA* */
}

/* ------------------------------------------------------------------ symbols and binding */

/* the resolver of an IFUNC returns one of the functions whose address it forms (ADRP + ADD) */
static uint64_t ifunc_pick(sim *S, const rc_img *r, uint64_t resolver)
{
    sim_real *R = S->real;
    for (int i = 0; i < R->nifunc; i++)
        if (R->ifunc_res[i] == resolver + r->bias) return R->ifunc_pick[i];
    uint64_t cand[16];
    int n = 0;
    int reg_page[32];
    uint64_t page[32];
    memset(reg_page, 0, sizeof reg_page);
    if (!in_text(r, resolver)) return 0;
    uint32_t s0 = (uint32_t)((resolver - r->img->seg_vaddr) / 4);
    for (uint32_t s = s0; s < s0 + 128 && s < r->img->ninsn && n < 16; s++) {
        uint32_t op = word(r, s);
        uint64_t pc = r->img->seg_vaddr + 4ull * s;
        if ((op & 0x9F000000u) == 0x90000000u) { /* ADRP */
            uint64_t imm = ((op >> 29) & 3) | (((op >> 5) & 0x7FFFF) << 2);
            reg_page[op & 31] = 1;
            page[op & 31] = (pc & ~0xFFFull) + ((uint64_t)sext(imm, 21) << 12);
        } else if ((op & 0xFF800000u) == 0x91000000u && reg_page[(op >> 5) & 31]) { /* ADD imm */
            uint64_t a = page[(op >> 5) & 31] + (((op >> 10) & 0xFFF) << (((op >> 22) & 1) * 12));
            if (in_text(r, a) && a != resolver) cand[n++] = a;
            reg_page[op & 31] = 0;
        } else if ((op & 0xFFFFFC1Fu) == 0xD65F0000u && n) {
            break; /* RET */
        }
    }
    uint64_t pick = n ? cand[sim_rng_below(&S->rng, (uint32_t)n)] + r->bias : 0;
    if (R->nifunc < 64) {
        R->ifunc_res[R->nifunc] = resolver + r->bias;
        R->ifunc_pick[R->nifunc++] = pick;
    }
    return pick;
}

/* bind a symbol name the way ld.so does with one global scope: the executable, then the
 * libraries in load order; the default version of a name */
static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    while (*s)
        h = (h ^ (uint8_t)*s++) * 16777619u;
    return h;
}

static int build_defs(sim_real *R)
{
    size_t total = 0;
    for (int k = 0; k < R->n; k++)
        total += R->imgs[k].ndyn;
    R->ndefs = 1024;
    while (R->ndefs < 2 * total)
        R->ndefs *= 2;
    R->defs = calloc(R->ndefs, sizeof(*R->defs));
    if (!R->defs) return EK_ERR_NOMEM;
    for (int k = 0; k < R->n; k++) { /* scope order: the first definition of a name wins */
        const rc_img *o = &R->imgs[k];
        for (uint32_t i = 1; i < o->ndyn; i++) {
            unsigned type;
            uint64_t v;
            if (!sym_defined(o, i, &type, &v)) continue;
            const char *nm = sym_name(o, i);
            size_t h = name_hash(nm) & (R->ndefs - 1);
            while (R->defs[h].name && strcmp(R->defs[h].name, nm))
                h = (h + 1) & (R->ndefs - 1);
            if (R->defs[h].name) continue;
            R->defs[h].name = nm;
            R->defs[h].img = (uint32_t)k + 1;
            R->defs[h].sym = i;
        }
    }
    return 0;
}

static uint64_t bind(sim *S, sim_real *R, const char *name)
{
    if (!R->defs) return 0;
    size_t h = name_hash(name) & (R->ndefs - 1);
    while (R->defs[h].name && strcmp(R->defs[h].name, name))
        h = (h + 1) & (R->ndefs - 1);
    if (!R->defs[h].name) return 0;
    const rc_img *o = &R->imgs[R->defs[h].img - 1];
    unsigned type = 0;
    uint64_t v = 0;
    sym_defined(o, R->defs[h].sym, &type, &v);
    if (type == 10 /* STT_GNU_IFUNC */) return ifunc_pick(S, o, v);
    return v + o->bias;
}

/* the runtime value of a GOT slot at link-time address a of r (0: unknown or data) */
static uint64_t got_value(sim *S, sim_real *R, const rc_img *r, uint64_t a)
{
    const rc_reloc *x = reloc_at(r, a);
    if (!x) return 0;
    switch (x->type) {
    case 1027: /* R_AARCH64_RELATIVE */
        return in_text(r, (uint64_t)x->addend) ? (uint64_t)x->addend + r->bias : 0;
    case 1032: /* R_AARCH64_IRELATIVE */ return ifunc_pick(S, r, (uint64_t)x->addend);
    case 257:  /* R_AARCH64_ABS64 */
    case 1025: /* R_AARCH64_GLOB_DAT */
    case 1026: /* R_AARCH64_JUMP_SLOT */ {
        uint64_t v = bind(S, R, sym_name(r, x->sym));
        return v && img_of(R, v) ? v + (uint64_t)(x->type == 257 ? x->addend : 0) : 0;
    }
    default: return 0;
    }
}

/* ------------------------------------------------------------------ indirect branches */

/* register values of the evaluated window: unknown, a constant address, the content of a GOT
 * slot, an entry of a table (LOAD: 1, 2 or 4 bytes, indexed), a jump-table target (TARGET:
 * base + entry), a pointer loaded from elsewhere (POINTER), or a sum with a table entry and an
 * unknown base (COMPUTED: a computed goto) */
enum { V_UNK = 0, V_CONST, V_GOT, V_LOAD, V_TARGET, V_POINTER, V_COMPUTED };

typedef struct rc_val {
    uint8_t kind;
    uint8_t size, sgn, scale; /* V_LOAD: table entry size, signed, index scale */
    uint8_t ext, shift;       /* V_TARGET: extension of the loaded value, shift */
    uint8_t idx;              /* V_LOAD / V_TARGET: index register */
    uint64_t v;               /* CONST: value; GOT: slot address; LOAD / TARGET: table */
    uint64_t base;            /* V_TARGET */
    uint32_t load_at;         /* slot of the table load */
} rc_val;

static int add_targets(sim_real *R, rc_img *r, uint32_t slot, uint8_t kind, const uint64_t *t,
                       uint32_t n)
{
    if (r->nind == r->capind) {
        size_t nc = r->capind ? r->capind * 2 : 256;
        rc_ind *v = realloc(r->ind, nc * sizeof(*v));
        if (!v) return EK_ERR_NOMEM;
        r->ind = v;
        r->capind = nc;
    }
    rc_ind *x = &r->ind[r->nind++];
    x->slot = slot;
    x->kind = kind;
    x->first = (uint32_t)R->pool.n;
    x->n = n;
    for (uint32_t i = 0; i < n; i++)
        if (ek_vec_push(&R->pool, t[i])) return EK_ERR_NOMEM;
    return 0;
}

static uint64_t table_entry(const rc_img *r, uint64_t a, unsigned size, int sgn, int *ok)
{
    /* tables are in a file-backed segment of the image: find it through the program headers */
    const sim_image *img = r->img;
    uint64_t phoff = ek_le64(img->data + 32);
    unsigned phentsize = ek_le16(img->data + 54), phnum = ek_le16(img->data + 56);
    for (unsigned i = 0; i < phnum; i++) {
        const uint8_t *ph = img->data + phoff + (uint64_t)i * phentsize;
        if (ek_le32(ph) != 1) continue;
        uint64_t off = ek_le64(ph + 8), va = ek_le64(ph + 16), fsz = ek_le64(ph + 32);
        if (a < va || a + size > va + fsz || off + (a - va) + size > img->size) continue;
        const uint8_t *p = img->data + off + (a - va);
        uint64_t v = size == 1 ? p[0] : size == 2 ? ek_le16(p) : ek_le32(p);
        *ok = 1;
        return sgn ? (uint64_t)sext(v, size * 8) : v;
    }
    *ok = 0;
    return 0;
}

static uint64_t extend(uint64_t v, unsigned option)
{
    switch (option) {
    case 0: return (uint8_t)v;
    case 1: return (uint16_t)v;
    case 2: return (uint32_t)v;
    case 4: return (uint64_t)(int64_t)(int8_t)v;
    case 5: return (uint64_t)(int64_t)(int16_t)v;
    case 6: return (uint64_t)(int64_t)(int32_t)v;
    default: return v;
    }
}

/* Classify the indirect branch at slot: evaluate the straight-line code before it. */
static int classify(sim *S, sim_real *R, rc_img *r, uint32_t slot, int link)
{
    const sim_image *img = r->img;
    uint32_t op = word(r, slot);
    unsigned reg = (op >> 5) & 31;
    uint64_t pc = img->seg_vaddr + 4ull * slot;
    /* the dynamic linker's entry code ends with a jump to the program's entry point */
    if (r->interp && !link && pc >= r->entry && pc < r->entry + 0x80) {
        uint64_t t = R->exe_entry;
        return add_targets(R, r, slot, IND_ENTRY, &t, 1);
    }
    uint32_t w0 = slot > RC_WINDOW ? slot - RC_WINDOW : 0;
    uint32_t start = slot;
    while (start > w0) {
        sim_insn in;
        sim_a64_decode(word(r, start - 1), &in);
        if (in.cls != SIM_I_OTHER && in.cls != SIM_I_MOVZ) break;
        start--;
    }
    rc_val v[32];
    memset(v, 0, sizeof v);
    int teardown = 0;
    for (uint32_t s = start; s < slot; s++) {
        uint32_t w = word(r, s);
        uint64_t ip = img->seg_vaddr + 4ull * s;
        unsigned rd = w & 31, rn = (w >> 5) & 31, rm = (w >> 16) & 31;
        rc_val nv;
        memset(&nv, 0, sizeof nv);
        int writes = 1;
        if ((w & 0x9F000000u) == 0x90000000u) { /* ADRP */
            uint64_t imm = ((w >> 29) & 3) | (((w >> 5) & 0x7FFFF) << 2);
            nv.kind = V_CONST;
            nv.v = (ip & ~0xFFFull) + ((uint64_t)sext(imm, 21) << 12);
        } else if ((w & 0x9F000000u) == 0x10000000u) { /* ADR */
            uint64_t imm = ((w >> 29) & 3) | (((w >> 5) & 0x7FFFF) << 2);
            nv.kind = V_CONST;
            nv.v = ip + (uint64_t)sext(imm, 21);
        } else if ((w & 0x7F800000u) == 0x11000000u) { /* ADD (immediate) */
            if (v[rn].kind == V_CONST && rn != 31) {
                nv.kind = V_CONST;
                nv.v = v[rn].v + (((w >> 10) & 0xFFF) << (((w >> 22) & 1) * 12));
            }
        } else if ((w & 0xFFE00000u) == 0x8B200000u) { /* ADD (extended register) */
            if (v[rn].kind == V_CONST && v[rm].kind == V_LOAD) {
                nv = v[rm];
                nv.kind = V_TARGET;
                nv.base = v[rn].v;
                nv.ext = (uint8_t)((w >> 13) & 7);
                nv.shift = (uint8_t)((w >> 10) & 7);
            }
        } else if ((w & 0xFF200000u) == 0x8B000000u) { /* ADD (shifted register) */
            if (v[rn].kind == V_CONST && v[rm].kind == V_LOAD && ((w >> 22) & 3) == 0) {
                nv = v[rm];
                nv.kind = V_TARGET;
                nv.base = v[rn].v;
                nv.ext = 7;
                nv.shift = (uint8_t)((w >> 10) & 63);
            } else if (v[rm].kind == V_LOAD || v[rn].kind == V_LOAD) {
                nv.kind = V_COMPUTED; /* table entry plus an unknown base: a computed goto */
            }
        } else if ((w & 0x3F200C00u) == 0x38200800u && ((w >> 22) & 3) != 0) {
            /* LDR* (register offset): size = bits 31:30, opc = 23:22 */
            unsigned size = 1u << (w >> 30), opc = (w >> 22) & 3, S_ = (w >> 12) & 1;
            if (size == 8) {
                nv.kind = V_POINTER; /* an element of an array of pointers */
            } else if (v[rn].kind == V_CONST && rn != 31) {
                nv.kind = V_LOAD;
                nv.v = v[rn].v;
                nv.size = (uint8_t)size;
                nv.sgn = opc >= 2;
                nv.scale = (uint8_t)(S_ ? (w >> 30) : 0);
                nv.idx = (uint8_t)rm;
                nv.ext = (uint8_t)((w >> 13) & 7);
                nv.load_at = s;
            } else {
                nv.kind = V_COMPUTED;
            }
        } else if ((w & 0xFFC00000u) == 0xF9400000u) { /* LDR Xt, [Xn, #imm] */
            if (v[rn].kind == V_CONST && rn != 31) {
                nv.kind = V_GOT;
                nv.v = v[rn].v + (((w >> 10) & 0xFFF) << 3);
            } else {
                nv.kind = V_POINTER;
            }
        } else if ((w & 0xFFE0FFE0u) == 0xAA0003E0u) { /* MOV Xd, Xm */
            nv = v[rm];
        } else if ((w & 0xFFC07FFFu) == 0xA8C07BFDu) {
            teardown = 1; /* LDP x29, x30, [sp], #n: the frame is gone */
            v[30].kind = V_UNK;
            rd = 29;
        } else if ((w & 0x7F800000u) == 0x71000000u && rd == 31) {
            writes = 0; /* CMP */
        } else if ((w & 0xFFFFF01Fu) == 0xD503201Fu) {
            writes = 0; /* hints (NOP, PACIASP/AUTIASP, BTI...) */
        }
        if (writes && rd != 31) v[rd] = nv;
    }
    rc_val *x = &v[reg];
    uint64_t t[512];
    uint32_t n = 0;
    if (x->kind == V_CONST && in_text(r, x->v)) {
        t[n++] = x->v + r->bias;
    } else if (x->kind == V_GOT && reloc_at(r, x->v)) {
        /* a GOT slot: what its relocation binds (nothing: a symbol no image defines) */
        uint64_t g = got_value(S, R, r, x->v);
        if (!g) return add_targets(R, r, slot, IND_DEAD, NULL, 0);
        t[n++] = g;
    } else if (x->kind == V_TARGET) {
        /* the table's size: the bound check "cmp wIDX, #imm; b.hi/b.hs" just before */
        uint32_t bound = 0;
        if (start >= 2) {
            uint32_t bc = word(r, start - 1), cmp = word(r, start - 2);
            unsigned cond = bc & 0xF;
            if ((bc & 0xFF000010u) == 0x54000000u && (cond == 8 || cond == 2) &&
                (cmp & 0x7F80001Fu) == 0x7100001Fu && ((cmp >> 5) & 31) == x->idx &&
                !((cmp >> 22) & 1)) {
                uint32_t imm = (cmp >> 10) & 0xFFF;
                bound = cond == 8 ? imm + 1 : imm;
            }
            for (uint32_t s = start; s < x->load_at && bound; s++) /* the index is unchanged */
                if ((word(r, s) & 31) == x->idx) bound = 0;
        }
        if (bound && bound <= 512) {
            for (uint32_t i = 0; i < bound; i++) {
                int ok;
                uint64_t e = table_entry(r, x->v + ((uint64_t)i << x->scale), x->size, x->sgn, &ok);
                uint64_t tgt = x->base + (extend(e, x->ext) << x->shift);
                if (!ok || !in_text(r, tgt) || tgt + 0x40000 < pc || tgt > pc + 0x40000) {
                    n = 0;
                    break;
                }
                t[n++] = tgt + r->bias;
            }
        }
    }
    if (n) return add_targets(R, r, slot, IND_TARGETS, t, n);
    int blr = (op & 0xFFFFFC1Fu) == 0xD63F0000u;
    uint8_t kind;
    if (blr)
        kind = IND_ANY; /* a call through a pointer */
    else if (reg == 30)
        kind = IND_DEAD; /* longjmp and the like */
    else if (x->kind == V_POINTER || x->kind == V_GOT || (x->kind == V_UNK && teardown))
        kind = IND_ANY; /* a tail call through a pointer */
    else
        kind = IND_DEAD; /* computed gotos and branches the code does not show */
    return add_targets(R, r, slot, kind, NULL, 0);
}

static const rc_ind *ind_at(const rc_img *r, uint32_t slot)
{
    size_t lo = 0, hi = r->nind;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (r->ind[mid].slot < slot)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->nind && r->ind[lo].slot == slot ? &r->ind[lo] : NULL;
}

/* ------------------------------------------------------------------ costs */

static uint32_t sat(uint64_t v)
{
    return v >= RC_INF ? RC_INF - 1 : (uint32_t)v;
}

static uint32_t cost_at(const sim_real *R, uint64_t rt)
{
    const rc_img *o = img_of(R, rt);
    if (!o) return RC_INF;
    return o->cost[(rt - o->bias - o->img->seg_vaddr) / 4];
}

static int dead_syscall(int nr)
{
    return nr == 93 || nr == 94 || nr == 139; /* exit, exit_group, rt_sigreturn */
}

static uint32_t slot_cost(const sim_real *R, const rc_img *r, uint32_t i)
{
    const sim_insn *in = &r->img->insn[i];
    uint32_t next = i + 1 < r->img->ninsn ? r->cost[i + 1] : RC_INF;
    uint64_t pc = r->img->seg_vaddr + 4ull * i;
    uint32_t c;
    switch (in->cls) {
    case SIM_I_OTHER:
    case SIM_I_MOVZ: return next == RC_INF ? RC_INF : sat(1ull + next);
    case SIM_I_BCOND: {
        uint64_t t = pc + (int64_t)in->imm;
        uint32_t ct = in_text(r, t) ? r->cost[(t - r->img->seg_vaddr) / 4] : RC_INF;
        c = ct < next ? ct : next;
        return c == RC_INF ? RC_INF : sat(1ull + c);
    }
    case SIM_I_B: {
        uint64_t t = pc + (int64_t)in->imm;
        c = in_text(r, t) ? r->cost[(t - r->img->seg_vaddr) / 4] : RC_INF;
        return c == RC_INF ? RC_INF : sat(1ull + c);
    }
    case SIM_I_BL: {
        uint64_t t = pc + (int64_t)in->imm;
        c = in_text(r, t) ? r->cost[(t - r->img->seg_vaddr) / 4] : RC_INF;
        return c == RC_INF || next == RC_INF ? RC_INF : sat(1ull + c + next);
    }
    case SIM_I_RET: return 1;
    case SIM_I_SVC:
        if (in->imm >= 0 && dead_syscall(in->imm)) return RC_INF;
        return next == RC_INF ? RC_INF : sat(1ull + RC_KERNEL_COST + next);
    case SIM_I_BR:
    case SIM_I_BLR: {
        if (in->dec == SIM_DEC_SCRIPT)
            return next == RC_INF ? RC_INF : sat(1ull + RC_KERNEL_COST + next);
        const rc_ind *x = ind_at(r, i);
        if (!x) return RC_INF;
        switch (x->kind) {
        case IND_ENTRY: return 1;
        case IND_ANY: c = R->any_min; break;
        case IND_TARGETS:
            c = RC_INF;
            for (uint32_t k = 0; k < x->n; k++) {
                uint32_t ck = cost_at(R, R->pool.v[x->first + k]);
                if (ck < c) c = ck;
            }
            break;
        default: return RC_INF;
        }
        if (c == RC_INF) return RC_INF;
        if (in->cls == SIM_I_BR) return sat(1ull + c);
        return next == RC_INF ? RC_INF : sat(1ull + c + next);
    }
    default: return RC_INF;
    }
}

static int compute_costs(sim_real *R)
{
    for (int k = 0; k < R->n; k++) {
        rc_img *r = &R->imgs[k];
        r->cost = malloc((r->img->ninsn + 1) * sizeof(uint32_t));
        if (!r->cost) return EK_ERR_NOMEM;
        for (uint32_t i = 0; i <= r->img->ninsn; i++)
            r->cost[i] = RC_INF;
    }
    R->any_min = RC_INF;
    for (int iter = 0; iter < 1000; iter++) {
        int changed = 0;
        for (int k = 0; k < R->n; k++) {
            rc_img *r = &R->imgs[k];
            for (uint32_t i = r->img->ninsn; i-- > 0;) {
                uint32_t c = slot_cost(R, r, i);
                if (c < r->cost[i]) {
                    r->cost[i] = c;
                    changed = 1;
                }
            }
        }
        uint32_t am = RC_INF;
        for (size_t i = 0; i < R->taken.n; i++) {
            uint32_t c = cost_at(R, R->taken.v[i]);
            if (c < am) {
                am = c;
                R->any_min_addr = R->taken.v[i];
            }
        }
        if (am != R->any_min) changed = 1;
        R->any_min = am;
        if (!changed) return 0;
    }
    return 0;
}

/* ------------------------------------------------------------------ loading and linking */

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* functions whose addresses the binaries take */
static int collect_taken(sim *S, sim_real *R)
{
    for (int k = 0; k < R->n; k++) {
        const rc_img *r = &R->imgs[k];
        for (size_t i = 0; i < r->nrelocs; i++) {
            const rc_reloc *x = &r->relocs[i];
            uint64_t t = 0;
            if (x->type == 1027 && in_text(r, (uint64_t)x->addend))
                t = (uint64_t)x->addend + r->bias;
            else if (x->type == 257 || x->type == 1025 || x->type == 1026)
                t = got_value(S, R, r, x->addr);
            if (t && img_of(R, t) && ek_vec_push(&R->taken, t)) return EK_ERR_NOMEM;
        }
    }
    if (R->taken.n) qsort(R->taken.v, R->taken.n, sizeof(uint64_t), u64_cmp);
    size_t o = 0;
    for (size_t i = 0; i < R->taken.n; i++)
        if (!o || R->taken.v[o - 1] != R->taken.v[i]) R->taken.v[o++] = R->taken.v[i];
    R->taken.n = o;
    return 0;
}

static int prepare(sim *S, sim_real *R, rc_img *r)
{
    sim_image *img = r->img;
    img->real = 1;
    for (uint32_t i = 0; i < img->ninsn; i++) {
        sim_insn *in = &img->insn[i];
        uint32_t op = word(r, i);
        if (in->cls == SIM_I_MOVZ) in->cls = SIM_I_OTHER; /* x8 is known statically */
        if (is_pac_branch(op)) in->cls = SIM_I_BAD;
        if (in->cls == SIM_I_BCOND && !in->dec) in->dec = SIM_DEC_GUIDED;
        if (in->cls == SIM_I_SVC) {
            /* the system call number: the last write of x8/w8 in the block before it */
            in->imm = -1;
            for (uint32_t k = i; k-- > 0 && i - k <= 16;) {
                uint32_t w = word(r, k);
                sim_insn p;
                sim_a64_decode(w, &p);
                if (p.cls != SIM_I_OTHER && p.cls != SIM_I_MOVZ) break;
                if ((w & 31) != 8) continue;
                if (p.cls == SIM_I_MOVZ) in->imm = p.imm << p.shift;
                break;
            }
        }
    }
    for (uint32_t i = 0; i < img->ninsn; i++) {
        sim_insn *in = &img->insn[i];
        if ((in->cls == SIM_I_BR || in->cls == SIM_I_BLR) && in->dec != SIM_DEC_SCRIPT) {
            int rc = classify(S, R, r, i, 0);
            if (rc) return rc;
            in->dec = SIM_DEC_REAL;
        }
    }
    /* the interpreter's one-load-per-block table follows the new classes */
    for (uint32_t i = 0; i <= img->ninsn; i++)
        if (img->stop[i].idx < img->ninsn) img->stop[i].insn = img->insn[img->stop[i].idx];
    return 0;
}

void sim_real_free(sim *S)
{
    sim_real *R = S->real;
    if (!R) return;
    for (int k = 0; k < R->n; k++) {
        free(R->imgs[k].relocs);
        free(R->imgs[k].cost);
        free(R->imgs[k].ind);
    }
    ek_vec_free(&R->pool);
    ek_vec_free(&R->taken);
    ek_vec_free(&R->finite);
    free(R->taken_cost);
    free(R->defs);
    free(R);
    S->real = NULL;
}

int sim_real_add(sim *S, sim_image *img, uint64_t base, int exe, int interp)
{
    if (!S->real && !(S->real = calloc(1, sizeof(sim_real)))) return EK_ERR_NOMEM;
    sim_real *R = S->real;
    if (R->n == SIM_REAL_MAX) return EK_ERR_RANGE;
    rc_img *r = &R->imgs[R->n++];
    memset(r, 0, sizeof(*r));
    r->img = img;
    r->bias = base;
    r->exe = exe;
    r->interp = interp;
    int rc = load_dyn(r);
    if (!rc && exe) R->exe_entry = r->entry + base;
    return rc;
}

int sim_real_link(sim *S)
{
    sim_real *R = S->real;
    if (!R) return 0;
    /* the global scope: the executable, its libraries, the dynamic linker last */
    for (int a = 0; a < R->n; a++)
        for (int b = a + 1; b < R->n; b++) {
            int ra = R->imgs[a].exe ? 0 : R->imgs[a].interp ? 2 : 1;
            int rb = R->imgs[b].exe ? 0 : R->imgs[b].interp ? 2 : 1;
            if (rb < ra) {
                rc_img t = R->imgs[a];
                R->imgs[a] = R->imgs[b];
                R->imgs[b] = t;
            }
        }
    int rc = build_defs(R);
    for (int k = 0; k < R->n && !rc; k++)
        rc = prepare(S, R, &R->imgs[k]);
    if (!rc) rc = collect_taken(S, R);
    if (!rc) rc = compute_costs(R);
    if (rc) return rc;
    R->taken_cost = malloc((R->taken.n + 1) * sizeof(uint32_t));
    if (!R->taken_cost) return EK_ERR_NOMEM;
    for (size_t i = 0; i < R->taken.n; i++) {
        R->taken_cost[i] = cost_at(R, R->taken.v[i]);
        if (R->taken_cost[i] != RC_INF && ek_vec_push(&R->finite, (uint32_t)i)) return EK_ERR_NOMEM;
    }
    if (!R->finite.n) return EK_ERR_FORMAT;
    return 0;
}

/* ------------------------------------------------------------------ walking */

static const rc_img *rimg_for(const sim_real *R, const sim_map *m)
{
    for (int k = 0; k < R->n; k++)
        if (R->imgs[k].img == m->img) return &R->imgs[k];
    return NULL;
}

/* head for the return: the frame ran long or the call chain is deep */
static int pressed(const sim_thread *t)
{
    if (t->depth > RC_DEPTH_LIMIT) return 1;
    if (!t->depth) return 0;
    const sim_frame *f = &t->stack[t->depth - 1];
    return f->budget > t->budget && f->budget - t->budget > RC_FRAME_LIMIT;
}

int sim_real_bcond(sim *S, sim_thread *t, const sim_map *m, const sim_insn *in, uint64_t ia)
{
    const rc_img *r = rimg_for(S->real, m);
    uint32_t i = (uint32_t)((ia - m->bias - m->img->seg_vaddr) / 4);
    uint64_t tl = ia - m->bias + (int64_t)in->imm;
    uint32_t ct = in_text(r, tl) ? r->cost[(tl - m->img->seg_vaddr) / 4] : RC_INF;
    uint32_t cn = i + 1 < m->img->ninsn ? r->cost[i + 1] : RC_INF;
    if (ct == RC_INF) return 0;
    if (cn == RC_INF) return 1;
    if (pressed(t)) return ct < cn || (ct == cn && sim_rng_chance(&S->rng, 128));
    return sim_rng_chance(&S->rng, in->imm < 0 ? 176 : 128);
}

uint64_t sim_real_target(sim *S, sim_thread *t, const sim_map *m, uint64_t ia)
{
    sim_real *R = S->real;
    const rc_img *r = rimg_for(R, m);
    uint32_t i = (uint32_t)((ia - m->bias - m->img->seg_vaddr) / 4);
    const rc_ind *x = r ? ind_at(r, i) : NULL;
    if (!x) return 0;
    switch (x->kind) {
    case IND_ENTRY: return R->pool.v[x->first];
    case IND_TARGETS: {
        /* among the targets that can return: random, or the cheapest under pressure */
        uint32_t best = RC_INF, nfin = 0;
        uint64_t bt = 0;
        for (uint32_t k = 0; k < x->n; k++) {
            uint32_t c = cost_at(R, R->pool.v[x->first + k]);
            if (c == RC_INF) continue;
            nfin++;
            if (c < best) {
                best = c;
                bt = R->pool.v[x->first + k];
            }
        }
        if (!nfin || pressed(t)) return bt;
        uint32_t pick = sim_rng_below(&S->rng, nfin);
        for (uint32_t k = 0; k < x->n; k++)
            if (cost_at(R, R->pool.v[x->first + k]) != RC_INF && !pick--)
                return R->pool.v[x->first + k];
        return bt;
    }
    case IND_ANY:
        if (pressed(t)) return R->any_min_addr;
        return R->taken.v[R->finite.v[sim_rng_below(&S->rng, (uint32_t)R->finite.n)]];
    default: return 0;
    }
}

/* ------------------------------------------------------------------ footprint */

/* distinct instruction bytes executed: a bit per slot of every real image */
void sim_real_footprint(const sim *S, uint64_t *bytes, uint64_t *text)
{
    *bytes = *text = 0;
    const sim_real *R = S->real;
    if (!R) return;
    for (int k = 0; k < R->n; k++) {
        const sim_image *img = R->imgs[k].img;
        *text += img->seg_filesz;
        if (!img->seen) continue;
        for (uint32_t w = 0; w < (img->ninsn + 63) / 64; w++)
            *bytes += 4ull * (uint64_t)__builtin_popcountll(img->seen[w]);
    }
}

/* ------------------------------------------------------------------ setup */

/* Debian's AArch64 libraries: the file in libc6-arm64-cross and the path an AArch64 Debian
 * system has it at (what perf records: the kernel's name of the mapped file) */
static const struct {
    const char *file, *path;
    uint64_t base;
    int interp;
} real_libs[] = {
    {"ld-linux-aarch64.so.1", "/usr/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1",
     0x0000ffffb7fc0000ull, 1},
    {"libc.so.6", "/usr/lib/aarch64-linux-gnu/libc.so.6", 0x0000ffffb7d00000ull, 0},
    {"libm.so.6", "/usr/lib/aarch64-linux-gnu/libm.so.6", 0x0000ffffb7c20000ull, 0},
    {"libresolv.so.2", "/usr/lib/aarch64-linux-gnu/libresolv.so.2", 0x0000ffffb7bf0000ull, 0},
    {"libgomp.so.1", "/usr/lib/aarch64-linux-gnu/libgomp.so.1.0.0", 0x0000ffffb7b80000ull, 0},
};
#define REAL_EXE_BASE 0x0000aaaab5a00000ull
#define REAL_LIBDIR   "/usr/aarch64-linux-gnu/lib"

static int read_file(sim *S, const char *path, uint8_t **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return EK_ERR_NOT_FOUND;
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : (1u << 20);
            uint8_t *b = realloc(buf, cap);
            if (!b) {
                free(buf);
                fclose(f);
                return EK_ERR_NOMEM;
            }
            buf = b;
        }
        size_t k = fread(buf + n, 1, cap - n, f);
        n += k;
        if (k == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad || ek_vec_push(&S->buffers, buf)) {
        free(buf);
        return bad ? EK_ERR_IO : EK_ERR_NOMEM;
    }
    *data = buf;
    *size = n;
    return 0;
}

int sim_real_setup(sim *S)
{
    const char *dir = S->real_libdir ? S->real_libdir : REAL_LIBDIR;
    S->real_exe = (sim_image *)sim_find_image(S, "simreal");
    if (!S->real_exe) return EK_ERR_NOT_FOUND;
    S->real_exe->hidden = 0;
    S->real_exe_base = REAL_EXE_BASE;
    int rc = sim_real_add(S, S->real_exe, REAL_EXE_BASE, 1, 0);
    for (size_t i = 0; i < sizeof real_libs / sizeof real_libs[0] && !rc; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, real_libs[i].file);
        uint8_t *data;
        size_t size;
        rc = read_file(S, path, &data, &size);
        if (rc == EK_ERR_NOT_FOUND) {
            ek_diag_emit(S->diag, EK_SEV_ERROR, "gen.real-code", rc, path, -1, -1, -1,
                         "workload-real runs Debian's AArch64 C and OpenMP libraries, which are "
                         "not installed here: install the packages libc6-arm64-cross and "
                         "libgomp1-arm64-cross (apt-get install libc6-arm64-cross "
                         "libgomp1-arm64-cross)%s",
                         S->real_libdir ? ", or fix real_libdir in the --config file" : "");
            return rc;
        }
        if (rc) return rc;
        sim_blob *b = calloc(1, sizeof(*b));
        sim_image *img = b ? sim_new_image(S) : NULL;
        if (!b || !img || ek_vec_push(&S->blobs, b)) {
            free(b);
            return S->err ? S->err : EK_ERR_NOMEM;
        }
        b->name = real_libs[i].file;
        b->path = real_libs[i].path;
        b->start = data;
        b->end = data + size;
        rc = sim_image_load(img, b);
        if (rc) {
            ek_diag_emit(S->diag, EK_SEV_ERROR, "gen.real-code", rc, path, -1, -1, -1,
                         "not an AArch64 ELF file the simulator can run");
            return rc;
        }
        if (!(img->seen = calloc((img->ninsn + 63) / 64 + 1, sizeof(uint64_t))))
            return EK_ERR_NOMEM;
        S->real_libs[S->nreal_libs] = img;
        S->real_lib_base[S->nreal_libs++] = real_libs[i].base;
        if (real_libs[i].interp) S->real_entry = ek_le64(img->data + 24) + real_libs[i].base;
        rc = sim_real_add(S, img, real_libs[i].base, 0, real_libs[i].interp);
    }
    if (!rc && !(S->real_exe->seen = calloc((S->real_exe->ninsn + 63) / 64 + 1, sizeof(uint64_t))))
        rc = EK_ERR_NOMEM;
    if (!rc) rc = sim_real_link(S);
    return rc;
}
