/* DSO symbol tables: loaded on first use (the file itself, its debug file from the build-id
 * cache, kallsyms for the kernel, the module's own for a kernel module), under the DSO's lock,
 * and the symbol at a key with the range of keys that find the same one. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdatomic.h>
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
#include "input/symtab_range.h"

static const char *kallsyms_path(dso_reg *r, char **tmp)
{
    *tmp = NULL;
    if (r->kallsyms)
        return r->kallsyms;
    if (r->kcore_dir && asprintf(tmp, "%s/kallsyms", r->kcore_dir) >= 0)
        return *tmp;
    return NULL;
}

/* Module symbols at the addresses our layout gives them: key = section load offset +
 * st_value (perf's table keys them by st_value + sh_offset; ek_symbol.shndx says which). */
static ek_symtab *module_syms(as_dso *d)
{
    ek_elf_info *info = NULL;
    ek_symtab *perf = NULL, *t = NULL;
    ek_kmod_section *ks = NULL;
    size_t nks = 0;
    if (ek_elf_info_read(d->path, NULL, &info))
        return NULL;
    if (ek_symtab_new(&t))
        goto out;
    if (!ek_symtab_load_elf(d->path, 0, NULL, &perf)) {
        for (size_t i = 0, n = ek_symtab_count(perf); i < n; i++) {
            const ek_symbol *y = ek_symtab_get(perf, i);
            if (y->shndx >= d->nsec_off || d->sec_off[y->shndx] == UINT64_MAX)
                continue;
            uint64_t key = d->sec_off[y->shndx] + y->value;
            ek_symtab_insert(t, key, y->size, y->binding, y->type, y->name);
        }
    }
    if (!ek_symtab_load_kmodule_sections(d->path, NULL, &ks, &nks)) {
        for (size_t k = 0; k < nks; k++)
            for (size_t i = 0, n = ek_symtab_count(ks[k].syms); i < n; i++) {
                const ek_symbol *y = ek_symtab_get(ks[k].syms, i);
                if (y->shndx >= d->nsec_off || d->sec_off[y->shndx] == UINT64_MAX)
                    continue;
                ek_symtab_insert(t, d->sec_off[y->shndx] + y->value, y->size, y->binding, y->type,
                                 y->name);
            }
        ek_kmod_sections_free(ks, nks);
    }
    ek_symtab_fixup(t, 0);
out:
    if (perf)
        ek_symtab_free(perf);
    ek_elf_info_free(info);
    return t;
}

void dso_load_syms(as_dso *d)
{
    dso_reg *r = d->reg;
    d->syms_state = -1;
    switch (d->kind) {
    case DSO_KERNEL: {
        char *tmp = NULL;
        d->syms_key = DSO_KEY_ABS;
        if (d->status == DSO_OK && d->path &&
            !ek_symtab_load_elf(d->path, EK_SYMS_VADDR, NULL, &d->syms) &&
            ek_symtab_count(d->syms)) {
            d->syms_state = 1;
            return;
        }
        if (d->syms) {
            ek_symtab_free(d->syms);
            d->syms = NULL;
        }
        const char *ks = kallsyms_path(r, &tmp);
        if (ks && !ek_symtab_load_kallsyms(ks, &r->diag, &d->syms))
            d->syms_state = 1;
        free(tmp);
        return;
    }
    case DSO_KMODULE:
        if (d->status == DSO_OK && d->et_rel && d->sec_off) {
            d->syms_key = DSO_KEY_MAPOFF;
            d->syms = module_syms(d);
            d->syms_state = d->syms ? 1 : -1;
            return;
        }
        /* no .ko: the kernel's kallsyms has module symbols at their addresses */
        d->syms_key = DSO_KEY_ABS;
        {
            char *tmp = NULL;
            const char *ks = kallsyms_path(r, &tmp);
            if (ks && !ek_symtab_load_kallsyms(ks, NULL, &d->syms))
                d->syms_state = 1;
            free(tmp);
        }
        return;
    case DSO_USER: {
        d->syms_key = DSO_KEY_FILEOFF;
        char hex[64] = "";
        if (d->build_id_len)
            ek_build_id_hex(d->build_id, d->build_id_len, hex, sizeof hex);
        char **cand = NULL;
        size_t n = 0;
        if (ek_buildid_candidates(d->name, d->build_id_len ? hex : NULL, r->symfs,
                                  r->buildid_dir, &cand, &n) < 0)
            n = 0;
        for (size_t i = 0; i < n && d->syms_state != 1; i++) {
            if (access(cand[i], R_OK))
                continue;
            if (d->build_id_len) {
                ek_elf_info *info = NULL;
                if (ek_elf_info_read(cand[i], NULL, &info))
                    continue;
                int ok = dso_same_id(d->build_id, d->build_id_len, info->build_id,
                                 info->build_id_len);
                ek_elf_info_free(info);
                if (!ok)
                    continue;
            }
            if (!ek_symtab_load_elf(cand[i], 0, NULL, &d->syms))
                d->syms_state = 1;
        }
        ek_path_list_free(cand, n);
        return;
    }
    default:
        return;
    }
}

int dso_key_kind(as_dso *d)
{
    int k = atomic_load_explicit(&d->key_plus1, memory_order_acquire);
    if (k) return k - 1;
    pthread_mutex_lock(&d->lock);
    if (!d->syms_state)
        dso_load_syms(d);
    k = d->syms_key;
    atomic_store_explicit(&d->key_plus1, k + 1, memory_order_release);
    pthread_mutex_unlock(&d->lock);
    return k;
}

const char *dso_symbol(as_dso *d, uint64_t addr, uint64_t map_start, uint64_t map_pgoff,
                       uint64_t *symoff)
{
    const char *name = NULL;
    pthread_mutex_lock(&d->lock);
    if (!d->syms_state)
        dso_load_syms(d);
    if (d->syms) {
        uint64_t key = d->syms_key == DSO_KEY_ABS      ? addr
                       : d->syms_key == DSO_KEY_MAPOFF ? addr - map_start
                                                       : map_pgoff + (addr - map_start);
        const ek_symbol *y = ek_symtab_find(d->syms, key);
        if (y) {
            name = y->name;
            *symoff = key - y->start;
        }
    }
    pthread_mutex_unlock(&d->lock);
    return name;
}

const char *dso_symbol_range(as_dso *d, uint64_t key, uint64_t *start, uint64_t *lo,
                             uint64_t *hi)
{
    const char *name = NULL;
    *start = 0;
    *lo = 0;
    *hi = UINT64_MAX; /* no symbols: none anywhere */
    pthread_mutex_lock(&d->lock);
    if (!d->syms_state)
        dso_load_syms(d);
    if (d->syms) {
        const ek_symbol *y = ek_symtab_find_range(d->syms, key, lo, hi);
        if (y) {
            name = y->name;
            *start = y->start;
        }
    }
    pthread_mutex_unlock(&d->lock);
    return name;
}

