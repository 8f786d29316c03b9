/* ek_bolt_map_load_elf: BOLT's functions and basic-block starts of an ELF file.
 *
 * Symbols as llvm-bolt 16 registers them (RewriteInstance::discoverFileObjects): from .symtab
 * (.dynsym when there is none), defined, with a name and a non-zero address, in a section with
 * SHF_ALLOC, but file, section and mapping ($x, $d, ...) symbols. A symbol is a function when
 * it is STT_FUNC or STT_GNU_IFUNC in an executable section; it is local when STB_LOCAL.
 *
 * Basic blocks (AArch64 only; other machines get functions alone): decoding each function's
 * code with the ISA classifier, outside $d data, a block starts at the target of a direct
 * branch inside the function and after every branch that is not a call (conditional or not,
 * direct, indirect or a return), but for an unconditional direct branch right after a
 * conditional one, as BOLT's buildCFG does. A function with an indirect jump (not a return)
 * gets no fall-throughs: llvm-bolt 16 does not build a CFG for it on AArch64.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/vec.h"
#include "etmkit/isa.h"
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
    EK_VEC(fn) fns = {0};
    int rc = ek_bolt_map_new(&m);
    size_t nsec = 0;
    if (elf_getshdrnum(e, &nsec)) nsec = 0;
    /* the symbol table: .symtab, else .dynsym */
    Elf_Scn *tab = NULL;
    GElf_Shdr tsh;
    for (int pass = 0; pass < 2 && !tab; pass++)
        for (size_t i = 1; i < nsec && !tab; i++) {
            Elf_Scn *s = elf_getscn(e, i);
            if (s && gelf_getshdr(s, &tsh) &&
                tsh.sh_type == (pass ? (unsigned)SHT_DYNSYM : (unsigned)SHT_SYMTAB))
                tab = s;
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
        if ((type == STT_FUNC || type == STT_GNU_IFUNC) && (ssh.sh_flags & SHF_EXECINSTR)) {
            flags |= EK_BOLT_SYM_FUNCTION;
            fn f = {sym.st_value, sym.st_size, sym.st_shndx};
            if (ek_vec_push(&fns, f)) rc = EK_ERR_NOMEM;
        }
        if (!rc) rc = ek_bolt_map_add_symbol(m, sym.st_value, sym.st_size, name, flags);
    }
    /* basic blocks of AArch64 code */
    if (!rc && eh.e_machine == EM_AARCH64 && fns.n) {
        if (marks.n) qsort(marks.v, marks.n, sizeof *marks.v, mark_cmp);
        qsort(fns.v, fns.n, sizeof *fns.v, fn_cmp);
        ek_isa_cfg cfg;
        ek_isa_cfg_init(&cfg, EK_ARCH_UNKNOWN, EK_PROFILE_A, 0);
        for (size_t i = 0; i < fns.n && !rc; i++) {
            if (i && fns.v[i].start == fns.v[i - 1].start) continue;
            uint64_t start = fns.v[i].start, end = start + fns.v[i].size;
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
    elf_end(e);
    close(fd);
    if (rc) {
        ek_bolt_map_free(m);
        return rc;
    }
    *out = m;
    return EK_OK;
}
