/* The DSO registry's inside, shared by its files: dso.c (the registry, files, code),
 * dso_syms.c (symbol tables) and dso_reloc.c (kernel module relocations). Private to
 * src/session. */
#ifndef ETMKIT_SESSION_DSO_INT_H
#define ETMKIT_SESSION_DSO_INT_H

#include "session/dso.h"

/* ELF constants we need (avoid depending on <elf.h> spelling). */
#define ET_REL_ 1
#define ET_CORE_ 4
#define SHF_WRITE_ 0x1
#define SHF_ALLOC_ 0x2
#define SHF_EXECINSTR_ 0x4
#define SHF_RO_AFTER_INIT_ 0x00200000
#define SHT_NOBITS_ 8

typedef struct mapping {
    void *addr;
    size_t len;
} mapping;

typedef struct kname {
    const char *name;
    uint64_t addr;
} kname;

struct dso_reg {
    dso_opts o;
    EK_VEC(kname) knames; /* kernel symbols by name (for module relocations) */
    int knames_state;
    char *symfs, *buildid_dir, *vmlinux, *kallsyms, *kcore_dir, *osrelease;
    ek_diag diag;
    EK_VEC(as_dso *) dsos;
    EK_VEC(mapping) maps;
    EK_VEC(ek_elf_info *) infos;
    as_dso *kernel;
};

/* Build IDs are the same (or one of them is unknown); trailing zero bytes are padding. */
int dso_same_id(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen);

/* Load d's symbol table (d->lock held, d->syms_state 0). */
void dso_load_syms(as_dso *d);

/* Kernel symbol by name (the relocations' symbols; loads them on first use): 1 found. */
int dso_kname_find(dso_reg *r, const char *name, uint64_t *addr);

#endif
