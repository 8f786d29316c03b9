/* ek_bolt_map_load_elf: BOLT's functions and basic-block starts of an ELF file.
 *
 * Functions as llvm-bolt 16 makes them (RewriteInstance::discoverFileObjects), in its order:
 *  1. Symbols from .symtab only (a file with .dynsym alone has none: llvm-bolt 16 does not
 *     read .dynsym, checked with perf2bolt-16 on a stripped shared object), defined, with a
 *     name and a non-zero address, in a section with SHF_ALLOC, but file, section and mapping
 *     ($x, $d, ...) symbols. A symbol is a function when it is STT_FUNC or STT_GNU_IFUNC in an
 *     executable section; it is local when STB_LOCAL. An FDE starting where a function symbol
 *     does makes it the larger of the two sizes.
 *  2. AArch64 .plt entries (disassemblePLTSectionAArch64): "<symbol>@PLT" from the dynamic
 *     relocation of the entry's GOT slot, "__BOLT_PSEUDO_.plt" for the header (add_plt).
 *  3. An .eh_frame FDE (eh_frame.c) that no function starts at or covers (the last function
 *     starting before it, by its size) and that lies in an allocated section:
 *     "__BOLT_FDE_FUNCat<lowercase hex address>", extent its PC range. CFA instructions are
 *     not read; FDEs in a pointer encoding eh_frame.c does not read are left out.
 * PLT and FDE functions take addresses up to the next function or their section's end (BOLT's
 * maximum size, by which perf2bolt looks addresses up); symbols' functions keep their size.
 *
 * Basic blocks (AArch64 only; other machines get functions alone): decoding each function's
 * code (symbols' and FDEs', not the PLT's) with the ISA classifier, outside $d data, a block
 * starts at the target of a direct
 * branch inside the function and after every branch that is not a call (conditional or not,
 * direct, indirect or a return), but for an unconditional direct branch right after a
 * conditional one, as BOLT's buildCFG does. A function with an indirect jump (not a return)
 * gets no fall-throughs: llvm-bolt 16 does not build a CFG for it on AArch64.
 */
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/vec.h"
#include "etmkit/isa.h"
#include "profile/eh_frame.h"
#include "profile/profile_int.h"

#ifndef STT_GNU_IFUNC
#define STT_GNU_IFUNC 10
#endif
#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif

typedef struct mark {
    uint64_t addr;
    int data; /* 1: $d (data follows), 0: $x/$a/$t (code follows) */
} mark;

typedef struct fn {
    uint64_t start, size;
    size_t shndx;
} fn;

typedef EK_VEC(fn) fn_vec;

static int is_mapping(const char *name, int *data)
{
    if (name[0] != '$' || !strchr("adtx", name[1]) || (name[2] && name[2] != '.')) return 0;
    *data = name[1] == 'd';
    return 1;
}

static int mark_cmp(const void *x, const void *y)
{
    const mark *a = x, *b = y;
    return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static int fn_cmp(const void *x, const void *y)
{
    const fn *a = x, *b = y;
    return a->start < b->start ? -1 : a->start > b->start;
}

/* Is addr in data, by the last mapping symbol at or before it (none: code)? */
static int in_data(const mark *mk, size_t n, uint64_t addr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (mk[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? mk[lo - 1].data : 0;
}

static uint32_t word_at(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static int decode_function(ek_bolt_map *m, const uint8_t *code, uint64_t start, uint64_t end,
                           const mark *mk, size_t nmk, const ek_isa_cfg *cfg)
{
    int rc = EK_OK, jumps = 0;
    for (uint64_t a = start; a + 4 <= end && !rc; a += 4) {
        if (in_data(mk, nmk, a)) continue;
        uint32_t w = word_at(code + (a - start));
        if (ek_isa_a64_is_plain(w)) continue;
        ek_insn in;
        ek_isa_classify(w, EK_ISA_A64, a, cfg, &in);
        if (!(in.flags & EK_IF_BRANCH) || (in.flags & EK_IF_LINK))
            continue; /* not a branch, or a call: the block goes on */
        int inside = !(in.flags & EK_IF_INDIRECT) && in.target >= start && in.target < end;
        if (inside && in.target != start) rc = ek_bolt_map_add_block(m, in.target);
        if ((in.flags & EK_IF_INDIRECT) && !(in.flags & (EK_IF_RETURN | EK_IF_ERET))) jumps = 1;
        int cond = (in.flags & EK_IF_COND) != 0;
        if (!rc && cond) rc = ek_bolt_map_add_conditional(m, a);
        if (rc || a + 4 >= end) continue;
        /* BOLT keeps "B.cond X; B Y" in one block (not when the first is a tail call) */
        if (cond && inside && !in_data(mk, nmk, a + 4)) {
            ek_insn nx;
            ek_isa_classify(word_at(code + (a + 4 - start)), EK_ISA_A64, a + 4, cfg, &nx);
            if ((nx.flags & EK_IF_BRANCH) &&
                !(nx.flags & (EK_IF_COND | EK_IF_INDIRECT | EK_IF_LINK)))
                continue;
        }
        rc = ek_bolt_map_add_block(m, a + 4);
    }
    if (!rc && jumps) rc = ek_bolt_map_add_no_fallthrough(m, start);
    return rc;
}

/* ---- sections ---------------------------------------------------------------------------- */

typedef struct asec {
    uint64_t addr, end; /* [addr, end) */
    size_t idx;
} asec;

static int asec_cmp(const void *x, const void *y)
{
    const asec *a = x, *b = y;
    return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* The allocated section holding addr (sorted by address), or NULL. */
static const asec *asec_find(const asec *v, size_t n, uint64_t addr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo && addr < v[lo - 1].end ? &v[lo - 1] : NULL;
}

static Elf_Scn *section_named(Elf *e, size_t nsec, const char *want, GElf_Shdr *sh)
{
    size_t shstr;
    if (elf_getshdrstrndx(e, &shstr)) return NULL;
    for (size_t i = 1; i < nsec; i++) {
        Elf_Scn *s = elf_getscn(e, i);
        const char *name;
        if (s && gelf_getshdr(s, sh) && (name = elf_strptr(e, shstr, sh->sh_name)) &&
            !strcmp(name, want))
            return s;
    }
    return NULL;
}

/* ---- FDEs -------------------------------------------------------------------------------- */

typedef struct fde {
    uint64_t start, size;
    size_t seq;
} fde;

static int fde_cmp(const void *x, const void *y)
{
    const fde *a = x, *b = y;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

typedef EK_VEC(fde) fde_vec;

static int fde_push(void *ctx, uint64_t start, uint64_t size)
{
    fde_vec *v = ctx;
    fde f = {start, size, v->n};
    return ek_vec_push(v, f) ? EK_ERR_NOMEM : 0;
}

/* .eh_frame's FDEs by address, one per address: the first with a non-zero range (else the
 * first), as BOLT's CFIReaderWriter keeps them. */
static int read_fdes(Elf *e, size_t nsec, const GElf_Ehdr *eh, fde_vec *out)
{
    GElf_Shdr sh;
    Elf_Scn *s = section_named(e, nsec, ".eh_frame", &sh);
    if (!s || sh.sh_type == SHT_NOBITS || !(sh.sh_flags & SHF_ALLOC)) return EK_OK;
    Elf_Data *d = elf_rawdata(s, NULL);
    if (!d || !d->d_buf) return EK_OK;
    unsigned asz = eh->e_ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
    int big = eh->e_ident[EI_DATA] == ELFDATA2MSB;
    int rc = ek_eh_frame_walk(d->d_buf, d->d_size, sh.sh_addr, asz, big, fde_push, out, NULL);
    if (rc || !out->n) return rc;
    qsort(out->v, out->n, sizeof *out->v, fde_cmp);
    size_t k = 0;
    for (size_t i = 0; i < out->n;) {
        size_t j = i, pick = i;
        while (j < out->n && out->v[j].start == out->v[i].start)
            j++;
        for (size_t t = i; t < j; t++)
            if (out->v[t].size) {
                pick = t;
                break;
            }
        out->v[k++] = out->v[pick];
        i = j;
    }
    out->n = k;
    return EK_OK;
}

static const fde *fde_at(const fde_vec *v, uint64_t addr)
{
    size_t lo = 0, hi = v->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v->v[mid].start < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < v->n && v->v[lo].start == addr ? &v->v[lo] : NULL;
}

/* The last function starting at or before addr (fns sorted by start, one per start), or
 * NULL. */
static const fn *fn_before(const fn *v, size_t n, uint64_t addr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? &v[lo - 1] : NULL;
}

/* Sort by start and keep one per start, the largest (one function for BOLT): lookups stay
 * logarithmic however many symbols share an address. */
static void fn_sort_unique(fn_vec *v)
{
    if (!v->n) return;
    qsort(v->v, v->n, sizeof *v->v, fn_cmp);
    size_t k = 1;
    for (size_t i = 1; i < v->n; i++) {
        if (v->v[i].start != v->v[k - 1].start)
            v->v[k++] = v->v[i];
        else if (v->v[i].size > v->v[k - 1].size)
            v->v[k - 1] = v->v[i];
    }
    v->n = k;
}

/* ---- AArch64 PLT ------------------------------------------------------------------------- */

typedef struct dynrel {
    uint64_t off;
    const char *name;
} dynrel;

typedef EK_VEC(dynrel) dynrel_vec;

static int dynrel_cmp(const void *x, const void *y)
{
    const dynrel *a = x, *b = y;
    return a->off < b->off ? -1 : a->off > b->off;
}

/* The dynamic relocations that name a symbol (.rela.plt, .rela.dyn: any SHT_RELA/SHT_REL
 * section over .dynsym), by the address they patch. */
static int read_dynrels(Elf *e, size_t nsec, dynrel_vec *out)
{
    for (size_t i = 1; i < nsec; i++) {
        Elf_Scn *s = elf_getscn(e, i);
        GElf_Shdr sh, lsh;
        if (!s || !gelf_getshdr(s, &sh) || (sh.sh_type != SHT_RELA && sh.sh_type != SHT_REL))
            continue;
        Elf_Scn *ls = sh.sh_link < nsec ? elf_getscn(e, sh.sh_link) : NULL;
        if (!ls || !gelf_getshdr(ls, &lsh) || lsh.sh_type != SHT_DYNSYM) continue;
        Elf_Data *rd = elf_getdata(s, NULL), *sd = elf_getdata(ls, NULL);
        if (!rd || !sd || !sh.sh_entsize || !lsh.sh_entsize) continue;
        size_t n = rd->d_size / sh.sh_entsize, nsym = sd->d_size / lsh.sh_entsize;
        for (size_t k = 0; k < n; k++) {
            uint64_t off, info;
            if (sh.sh_type == SHT_RELA) {
                GElf_Rela r;
                if (!gelf_getrela(rd, (int)k, &r)) continue;
                off = r.r_offset, info = r.r_info;
            } else {
                GElf_Rel r;
                if (!gelf_getrel(rd, (int)k, &r)) continue;
                off = r.r_offset, info = r.r_info;
            }
            size_t si = GELF_R_SYM(info);
            GElf_Sym sym;
            const char *name;
            if (!si || si >= nsym || !gelf_getsym(sd, (int)si, &sym) ||
                !(name = elf_strptr(e, lsh.sh_link, sym.st_name)) || !name[0])
                continue;
            dynrel d = {off, name};
            if (ek_vec_push(out, d)) return EK_ERR_NOMEM;
        }
    }
    if (out->n) qsort(out->v, out->n, sizeof *out->v, dynrel_cmp);
    return EK_OK;
}

static const char *dynrel_at(const dynrel *v, size_t n, uint64_t addr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].off < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && v[lo].off == addr ? v[lo].name : NULL;
}

#define A64_NOP 0xd503201fu

typedef struct plt_entry {
    uint64_t addr;
    char *name; /* NULL: a symbol's function starts there */
} plt_entry;

/* The first function start after addr (fns sorted), or UINT64_MAX. */
static uint64_t next_start(const fn *v, size_t n, uint64_t addr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n ? v[lo].start : UINT64_MAX;
}

/* BOLT's functions of an AArch64 .plt (disassemblePLTSectionAArch64): an entry runs to the
 * first indirect branch; its GOT slot is the ADRP page plus the LDR offset on that register;
 * the slot's dynamic relocation names the entry "<symbol>@PLT", the header without one is
 * "__BOLT_PSEUDO_.plt"; the NOPs after an entry are its padding; an entry whose slot has no
 * symbol (IRELATIVE) gets no function. An entry a function symbol already starts at keeps
 * that function. Each one made is added to m and to out. */
static int add_plt(Elf *e, size_t nsec, ek_bolt_map *m, const fn *fns, size_t nfns, fn_vec *out)
{
    GElf_Shdr sh;
    Elf_Scn *s = section_named(e, nsec, ".plt", &sh);
    if (!s || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_ALLOC) ||
        !(sh.sh_flags & SHF_EXECINSTR))
        return EK_OK;
    Elf_Data *d = elf_rawdata(s, NULL);
    if (!d || !d->d_buf) return EK_OK;
    const uint8_t *code = d->d_buf;
    size_t size = d->d_size < sh.sh_size ? d->d_size : (size_t)sh.sh_size;
    if (sh.sh_addr > UINT64_MAX - size) return EK_OK;
    dynrel_vec rels = {0};
    EK_VEC(plt_entry) ents = {0};
    int rc = read_dynrels(e, nsec, &rels);
    ek_isa_cfg cfg;
    ek_isa_cfg_init(&cfg, EK_ARCH_UNKNOWN, EK_PROFILE_A, 0);
    size_t off = 0;
    while (!rc && off + 4 <= size) {
        size_t entry = off;
        uint64_t page[32] = {0}, target = 0;
        uint32_t have = 0; /* registers an ADRP set */
        int found = 0;
        for (; off + 4 <= size && !found; off += 4) {
            uint32_t w = word_at(code + off);
            uint64_t a = sh.sh_addr + off;
            if ((w & 0x9f000000u) == 0x90000000u) { /* ADRP */
                uint64_t imm = ((uint64_t)(w >> 29 & 3) | (uint64_t)(w >> 5 & 0x7ffff) << 2) << 12;
                imm = (imm ^ ((uint64_t)1 << 32)) - ((uint64_t)1 << 32); /* 33-bit signed */
                page[w & 31] = (a & ~(uint64_t)0xfff) + imm;
                have |= 1u << (w & 31);
            } else if ((w & 0xffc00000u) == 0xf9400000u) { /* LDR Xt, [Xn, #imm] */
                unsigned rn = w >> 5 & 31;
                if (have >> rn & 1) target = page[rn] + (uint64_t)(w >> 10 & 0xfff) * 8;
            }
            ek_insn in;
            ek_isa_classify(w, EK_ISA_A64, a, &cfg, &in);
            if ((in.flags & EK_IF_BRANCH) && (in.flags & EK_IF_INDIRECT) &&
                !(in.flags & (EK_IF_LINK | EK_IF_RETURN | EK_IF_ERET)))
                found = 1;
        }
        if (!found) break; /* no entry ends in the rest */
        while (off + 4 <= size && word_at(code + off) == A64_NOP)
            off += 4;
        uint64_t ea = sh.sh_addr + entry;
        const fn *at = fn_before(fns, nfns, ea);
        if (at && at->start == ea) { /* a symbol's function (IFUNC trampolines) */
            plt_entry pe = {ea, NULL};
            if (ek_vec_push(&ents, pe)) rc = EK_ERR_NOMEM;
            continue;
        }
        const char *sym = target ? dynrel_at(rels.v, rels.n, target) : NULL;
        char *name = NULL;
        if (sym) {
            size_t len = strlen(sym) + sizeof "@PLT";
            if ((name = malloc(len))) snprintf(name, len, "%s@PLT", sym);
        } else if (entry == 0) {
            name = strdup("__BOLT_PSEUDO_.plt");
        } else {
            continue; /* BOLT makes no function of it */
        }
        plt_entry pe = {ea, name};
        if (!name || ek_vec_push(&ents, pe)) {
            free(name);
            rc = EK_ERR_NOMEM;
        }
    }
    /* each runs to the next function or the section's end (BOLT's maximum size, which
     * perf2bolt looks addresses up by: padding and entries without a name included) */
    for (size_t i = 0; i < ents.n && !rc; i++) {
        if (!ents.v[i].name) continue;
        uint64_t ea = ents.v[i].addr;
        uint64_t end = i + 1 < ents.n ? ents.v[i + 1].addr : sh.sh_addr + size;
        uint64_t nk = next_start(fns, nfns, ea);
        if (nk < end) end = nk;
        rc = ek_bolt_map_add_symbol(m, ea, end - ea, ents.v[i].name, EK_BOLT_SYM_FUNCTION);
        fn f = {ea, end - ea, elf_ndxscn(s)};
        if (!rc && ek_vec_push(out, f)) rc = EK_ERR_NOMEM;
    }
    for (size_t i = 0; i < ents.n; i++)
        free(ents.v[i].name);
    ek_vec_free(&ents);
    ek_vec_free(&rels);
    return rc;
}

/* ---- the map ----------------------------------------------------------------------------- */

int ek_bolt_map_load_elf(const char *path, const ek_diag *diag, ek_bolt_map **out)
{
    if (!path || !out) return EK_ERR_ARG;
    *out = NULL;
    if (elf_version(EV_CURRENT) == EV_NONE) return EK_ERR_UNSUPPORTED;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        ek_diag_emit(diag, EK_SEV_ERROR, "elf.missing-file", EK_ERR_IO, path, -1, -1, -1,
                     "cannot open the ELF file");
        return EK_ERR_IO;
    }
    Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    GElf_Ehdr eh;
    if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh)) {
        ek_diag_emit(diag, EK_SEV_ERROR, "elf.bad-file", EK_ERR_FORMAT, path, -1, -1, -1,
                     "not a readable ELF file");
        if (e) elf_end(e);
        close(fd);
        return EK_ERR_FORMAT;
    }
    ek_bolt_map *m = NULL;
    EK_VEC(mark) marks = {0};
    fn_vec fns = {0};   /* functions to decode: symbols' and FDEs' */
    fn_vec known = {0}; /* functions an FDE may fall in: symbols' and the PLT's */
    EK_VEC(asec) secs = {0};
    fde_vec fdes = {0};
    int rc = ek_bolt_map_new(&m);
    size_t nsec = 0;
    if (elf_getshdrnum(e, &nsec)) nsec = 0;
    for (size_t i = 1; i < nsec && !rc; i++) {
        Elf_Scn *s = elf_getscn(e, i);
        GElf_Shdr sh;
        if (s && gelf_getshdr(s, &sh) && (sh.sh_flags & SHF_ALLOC) && sh.sh_size &&
            sh.sh_addr <= UINT64_MAX - sh.sh_size) {
            asec a = {sh.sh_addr, sh.sh_addr + sh.sh_size, i};
            if (ek_vec_push(&secs, a)) rc = EK_ERR_NOMEM;
        }
    }
    if (secs.n) qsort(secs.v, secs.n, sizeof *secs.v, asec_cmp);
    if (!rc) rc = read_fdes(e, nsec, &eh, &fdes);
    /* the symbol table: .symtab only (llvm-bolt 16 does not read .dynsym) */
    Elf_Scn *tab = NULL;
    GElf_Shdr tsh;
    for (size_t i = 1; i < nsec && !tab; i++) {
        Elf_Scn *s = elf_getscn(e, i);
        if (s && gelf_getshdr(s, &tsh) && tsh.sh_type == SHT_SYMTAB) tab = s;
    }
    Elf_Data *syms = tab ? elf_getdata(tab, NULL) : NULL;
    size_t nsym = syms && tsh.sh_entsize ? syms->d_size / tsh.sh_entsize : 0;
    for (size_t i = 1; i < nsym && !rc; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(syms, (int)i, &sym)) continue;
        int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
        const char *name = elf_strptr(e, tsh.sh_link, sym.st_name);
        if (!name || !name[0] || sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE ||
            type == STT_FILE || type == STT_SECTION || sym.st_value == 0)
            continue;
        Elf_Scn *sec = elf_getscn(e, sym.st_shndx);
        GElf_Shdr ssh;
        if (!sec || !gelf_getshdr(sec, &ssh) || !(ssh.sh_flags & SHF_ALLOC)) continue;
        int data;
        if (is_mapping(name, &data)) {
            mark mk = {sym.st_value, data};
            if (ek_vec_push(&marks, mk)) rc = EK_ERR_NOMEM;
            continue;
        }
        unsigned flags = bind == STB_LOCAL ? EK_BOLT_SYM_LOCAL : 0;
        uint64_t size = sym.st_size;
        if ((type == STT_FUNC || type == STT_GNU_IFUNC) && (ssh.sh_flags & SHF_EXECINSTR)) {
            flags |= EK_BOLT_SYM_FUNCTION;
            /* an FDE at the same address: the larger of the two sizes (discoverFileObjects) */
            const fde *fe = fde_at(&fdes, sym.st_value);
            if (fe && fe->size > size) size = fe->size;
            fn f = {sym.st_value, size, sym.st_shndx};
            if (ek_vec_push(&fns, f) || ek_vec_push(&known, f)) rc = EK_ERR_NOMEM;
        }
        if (!rc) rc = ek_bolt_map_add_symbol(m, sym.st_value, size, name, flags);
    }
    fn_sort_unique(&known);
    /* PLT entries */
    if (!rc && eh.e_machine == EM_AARCH64) {
        size_t before = known.n;
        rc = add_plt(e, nsec, m, known.v, known.n, &known);
        if (known.n != before) fn_sort_unique(&known);
    }
    /* FDEs no function starts at or covers: __BOLT_FDE_FUNCat<hex> */
    fn_vec made = {0};
    for (size_t i = 0; i < fdes.n && !rc; i++) {
        uint64_t a = fdes.v[i].start;
        const asec *sec = asec_find(secs.v, secs.n, a);
        if (!sec) continue; /* in no section: BOLT cannot place it */
        const fn *prev = fn_before(known.v, known.n, a);
        const fn *last = made.n ? &made.v[made.n - 1] : NULL;
        if (last && (!prev || last->start > prev->start)) prev = last;
        if (prev && (prev->start == a || a - prev->start < prev->size)) continue;
        fn f = {a, fdes.v[i].size, sec->idx};
        if (ek_vec_push(&made, f) || ek_vec_push(&fns, f)) rc = EK_ERR_NOMEM;
    }
    /* addresses resolve up to the next function or the section's end (BOLT's maximum size,
     * which perf2bolt looks addresses up by), or over the FDE's range when that is more */
    for (size_t i = 0; i < made.n && !rc; i++) {
        uint64_t a = made.v[i].start, size = made.v[i].size;
        const asec *sec = asec_find(secs.v, secs.n, a);
        uint64_t end = sec ? sec->end : a;
        if (i + 1 < made.n && made.v[i + 1].start < end) end = made.v[i + 1].start;
        uint64_t nk = next_start(known.v, known.n, a);
        if (nk < end) end = nk;
        if (end - a > size) size = end - a;
        char name[40];
        snprintf(name, sizeof name, "__BOLT_FDE_FUNCat%" PRIx64, a);
        rc = ek_bolt_map_add_symbol(m, a, size, name, EK_BOLT_SYM_FUNCTION);
    }
    ek_vec_free(&made);
    /* basic blocks of AArch64 code */
    if (!rc && eh.e_machine == EM_AARCH64 && fns.n) {
        if (marks.n) qsort(marks.v, marks.n, sizeof *marks.v, mark_cmp);
        qsort(fns.v, fns.n, sizeof *fns.v, fn_cmp);
        ek_isa_cfg cfg;
        ek_isa_cfg_init(&cfg, EK_ARCH_UNKNOWN, EK_PROFILE_A, 0);
        for (size_t i = 0; i < fns.n && !rc; i++) {
            if (i && fns.v[i].start == fns.v[i - 1].start) continue;
            uint64_t start = fns.v[i].start, end = start + fns.v[i].size;
            if (end < start) end = UINT64_MAX;
            if (i + 1 < fns.n && (end == start || end > fns.v[i + 1].start))
                end = fns.v[i + 1].start;
            Elf_Scn *sec = elf_getscn(e, fns.v[i].shndx);
            GElf_Shdr ssh;
            Elf_Data *d = sec && gelf_getshdr(sec, &ssh) && ssh.sh_type == SHT_PROGBITS
                              ? elf_getdata(sec, NULL)
                              : NULL;
            if (!d || !d->d_buf || start < ssh.sh_addr || end <= start ||
                end - ssh.sh_addr > d->d_size)
                continue;
            rc = decode_function(m, (const uint8_t *)d->d_buf + (start - ssh.sh_addr), start, end,
                                 marks.v, marks.n, &cfg);
        }
    }
    ek_vec_free(&marks);
    ek_vec_free(&fns);
    ek_vec_free(&known);
    ek_vec_free(&secs);
    ek_vec_free(&fdes);
    elf_end(e);
    close(fd);
    if (rc) {
        ek_bolt_map_free(m);
        return rc;
    }
    *out = m;
    return EK_OK;
}
