/* Kernel modules: their branch relocations applied to a private copy of their code for the
 * address they were loaded at, with the kernel's symbols by name. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "etmkit/etmkit.h"
#include "etmkit/sbuf.h"
#include "session/dso.h"
#include "session/dso_int.h"

/* ---- kernel module relocations ------------------------------------------------------------------ */

static int kname_cmp(const void *a, const void *b)
{
    return strcmp(((const kname *)a)->name, ((const kname *)b)->name);
}

static void load_knames(dso_reg *r)
{
    r->knames_state = 1;
    as_dso *k = r->kernel;
    if (!k) {
        k = dso_get(r, "[kernel.kallsyms]", 1);
        if (!k)
            return;
        k->status = k->status == DSO_NOT_TRIED ? DSO_NOT_FOUND : k->status;
    }
    pthread_mutex_lock(&k->lock);
    if (!k->syms_state)
        dso_load_syms(k);
    pthread_mutex_unlock(&k->lock);
    if (!k->syms)
        return;
    for (size_t i = 0, n = ek_symtab_count(k->syms); i < n; i++) {
        const ek_symbol *y = ek_symtab_get(k->syms, i);
        if (y->module || !y->name)
            continue;
        kname e = {y->name, y->value ? y->value : y->start};
        ek_vec_push(&r->knames, e);
    }
    if (r->knames.n > 1)
        qsort(r->knames.v, r->knames.n, sizeof(kname), kname_cmp);
}

int dso_kname_find(dso_reg *r, const char *name, uint64_t *addr)
{
    if (!r->knames_state)
        load_knames(r);
    size_t lo = 0, hi = r->knames.n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(r->knames.v[mid].name, name);
        if (!c) {
            *addr = r->knames.v[mid].addr;
            return 1;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

#define R_AARCH64_TSTBR14_ 279
#define R_AARCH64_CONDBR19_ 280
#define R_AARCH64_JUMP26_ 282
#define R_AARCH64_CALL26_ 283

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

void dso_relocate_module(as_dso *d, uint64_t base)
{
    if (d->status != DSO_OK || !d->et_rel || !d->sec_off || d->reloc_copy || !d->spans.n)
        return;
    if (elf_version(EV_CURRENT) == EV_NONE)
        return;
    /* private copies of the code sections, in one buffer */
    uint64_t total = 0;
    for (size_t i = 0; i < d->spans.n; i++)
        total += d->spans.v[i].size;
    d->reloc_copy = malloc(total ? total : 1);
    if (!d->reloc_copy)
        return;
    d->reloc_base = base;
    uint8_t *w = d->reloc_copy;
    /* section index -> copy pointer */
    uint8_t **secp = calloc(d->nsec_off ? d->nsec_off : 1, sizeof *secp);
    if (!secp)
        return;
    for (size_t i = 0; i < d->spans.n; i++) {
        dso_span *sp = &d->spans.v[i];
        memcpy(w, sp->data, sp->size);
        for (size_t k = 0; k < d->nsec_off; k++)
            if (d->sec_off[k] == sp->off && !secp[k]) {
                secp[k] = w;
                break;
            }
        sp->data = w;
        w += sp->size;
    }
    Elf *e = elf_memory((char *)(uintptr_t)d->bytes, d->size);
    if (!e) {
        free(secp);
        return;
    }
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || sh.sh_info >= d->nsec_off ||
            !secp[sh.sh_info])
            continue;
        Elf_Scn *symscn = elf_getscn(e, sh.sh_link);
        GElf_Shdr symsh;
        if (!symscn || !gelf_getshdr(symscn, &symsh))
            continue;
        Elf_Data *rd = elf_getdata(scn, NULL), *sd = elf_getdata(symscn, NULL);
        if (!rd || !sd)
            continue;
        size_t tgt = sh.sh_info;
        uint64_t tgt_size = 0;
        for (size_t i = 0; i < d->spans.n; i++)
            if (d->spans.v[i].data == secp[tgt])
                tgt_size = d->spans.v[i].size;
        size_t nrel = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
        for (size_t i = 0; i < nrel; i++) {
            GElf_Rela ra;
            if (!gelf_getrela(rd, (int)i, &ra))
                break;
            unsigned type = (unsigned)GELF_R_TYPE(ra.r_info);
            if (type != R_AARCH64_CALL26_ && type != R_AARCH64_JUMP26_ &&
                type != R_AARCH64_CONDBR19_ && type != R_AARCH64_TSTBR14_)
                continue;
            if (ra.r_offset + 4 > tgt_size)
                continue;
            GElf_Sym sym;
            if (!gelf_getsym(sd, (int)GELF_R_SYM(ra.r_info), &sym))
                continue;
            uint64_t S = 0;
            int ok = 0;
            if (sym.st_shndx != SHN_UNDEF && sym.st_shndx < d->nsec_off &&
                d->sec_off[sym.st_shndx] != UINT64_MAX) {
                S = base + d->sec_off[sym.st_shndx] + sym.st_value;
                ok = 1;
            } else if (sym.st_shndx == SHN_UNDEF) {
                const char *nm = elf_strptr(e, symsh.sh_link, sym.st_name);
                ok = nm && dso_kname_find(d->reg, nm, &S);
            }
            uint8_t *ip = secp[tgt] + ra.r_offset;
            uint64_t P = base + d->sec_off[tgt] + ra.r_offset;
            uint32_t insn = rd32(ip);
            int64_t delta = (int64_t)(S + (uint64_t)ra.r_addend - P);
            if (!ok) {
                d->relocs_unresolved++;
                if (type == R_AARCH64_CALL26_)
                    wr32(ip, 0xd63f0200u); /* blr x16: the trace gives the target */
                else if (type == R_AARCH64_JUMP26_)
                    wr32(ip, 0xd61f0200u); /* br x16 */
                continue;
            }
            if (type == R_AARCH64_CALL26_ || type == R_AARCH64_JUMP26_) {
                if (delta < -(1ll << 27) || delta >= (1ll << 27)) {
                    /* out of range: the kernel would have gone through a module PLT */
                    d->relocs_unresolved++;
                    wr32(ip, type == R_AARCH64_CALL26_ ? 0xd63f0200u : 0xd61f0200u);
                    continue;
                }
                insn = (insn & 0xfc000000u) | ((uint32_t)(delta >> 2) & 0x03ffffffu);
            } else if (type == R_AARCH64_CONDBR19_) {
                insn = (insn & 0xff00001fu) | (((uint32_t)(delta >> 2) & 0x7ffffu) << 5);
            } else {
                insn = (insn & 0xfff8001fu) | (((uint32_t)(delta >> 2) & 0x3fffu) << 5);
            }
            wr32(ip, insn);
            d->relocs++;
        }
    }
    elf_end(e);
    free(secp);
}

