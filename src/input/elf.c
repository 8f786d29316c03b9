/* ELF facts (build-id, segments, sections) and perf-compatible ELF symbol loading. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/vec.h"
#include "etmkit/etmkit.h"
#include "etmkit/symbols.h"
#include "input/symtab_int.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif
#ifndef STT_GNU_IFUNC
#define STT_GNU_IFUNC 10
#endif

typedef struct elf_h {
    int fd;
    Elf *elf;
    GElf_Ehdr eh;
    size_t shstrndx;
} elf_h;

static int elf_open(const char *path, const ek_diag *diag, elf_h *h)
{
    memset(h, 0, sizeof *h);
    h->fd = -1;
    if (elf_version(EV_CURRENT) == EV_NONE) return EK_ERR_UNSUPPORTED;
    h->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (h->fd < 0) {
        ek_diag_emit(diag, EK_SEV_WARN, "elf.missing-file", EK_ERR_IO, path, -1, -1, -1,
                     "cannot open ELF file (%s)", strerror(errno));
        return EK_ERR_IO;
    }
    h->elf = elf_begin(h->fd, ELF_C_READ_MMAP, NULL);
    if (!h->elf || elf_kind(h->elf) != ELF_K_ELF || !gelf_getehdr(h->elf, &h->eh)) {
        ek_diag_emit(diag, EK_SEV_WARN, "elf.bad-file", EK_ERR_FORMAT, path, -1, -1, -1,
                     "not a readable ELF file%s%s", h->elf ? ": " : "",
                     h->elf ? elf_errmsg(-1) : "");
        if (h->elf) elf_end(h->elf);
        close(h->fd);
        h->elf = NULL;
        h->fd = -1;
        return EK_ERR_FORMAT;
    }
    if (elf_getshdrstrndx(h->elf, &h->shstrndx) != 0) h->shstrndx = 0;
    return EK_OK;
}

static void elf_close(elf_h *h)
{
    if (h->elf) elf_end(h->elf);
    if (h->fd >= 0) close(h->fd);
    h->elf = NULL;
    h->fd = -1;
}

static const char *sec_name(elf_h *h, const GElf_Shdr *sh)
{
    const char *n = h->shstrndx ? elf_strptr(h->elf, h->shstrndx, sh->sh_name) : NULL;
    return n ? n : "";
}

/* Scan one block of notes for NT_GNU_BUILD_ID "GNU". */
static int find_build_id(Elf_Data *d, uint8_t *out, size_t cap, size_t *len)
{
    if (!d) return 0;
    size_t off = 0, name_off, desc_off;
    GElf_Nhdr nh;
    while (off < d->d_size && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
            memcmp((const char *)d->d_buf + name_off, "GNU", 4) == 0 && nh.n_descsz > 0) {
            size_t n = nh.n_descsz < cap ? nh.n_descsz : cap;
            memcpy(out, (const char *)d->d_buf + desc_off, n);
            *len = n;
            return 1;
        }
    }
    return 0;
}

size_t ek_build_id_hex(const uint8_t *id, size_t len, char *buf, size_t bufsize)
{
    static const char hx[] = "0123456789abcdef";
    size_t n = 0;
    if (!bufsize) return 0;
    for (size_t i = 0; i < len && n + 2 < bufsize; i++) {
        buf[n++] = hx[id[i] >> 4];
        buf[n++] = hx[id[i] & 15];
    }
    buf[n] = 0;
    return n;
}

void ek_elf_info_free(ek_elf_info *info)
{
    if (!info) return;
    for (size_t i = 0; i < info->nsecs; i++)
        free((char *)info->secs[i].name);
    free(info->secs);
    free(info->segs);
    free(info->path);
    free(info);
}

int ek_elf_info_read(const char *path, const ek_diag *diag, ek_elf_info **out)
{
    *out = NULL;
    elf_h h;
    int rc = elf_open(path, diag, &h);
    if (rc) return rc;
    ek_elf_info *in = calloc(1, sizeof *in);
    if (!in || !(in->path = strdup(path))) {
        free(in);
        elf_close(&h);
        return EK_ERR_NOMEM;
    }
    in->elf_class = gelf_getclass(h.elf) == ELFCLASS64 ? 64 : 32;
    in->big_endian = h.eh.e_ident[EI_DATA] == ELFDATA2MSB;
    in->machine = h.eh.e_machine;
    in->type = h.eh.e_type;
    in->entry = h.eh.e_entry;
    size_t nsec = 0, nph = 0;
    if (elf_getshdrnum(h.elf, &nsec) != 0) nsec = 0;
    if (nsec) {
        in->secs = calloc(nsec, sizeof *in->secs);
        if (!in->secs) goto nomem;
    }
    for (size_t i = 0; i < nsec; i++) {
        Elf_Scn *scn = elf_getscn(h.elf, i);
        GElf_Shdr sh;
        if (!scn || !gelf_getshdr(scn, &sh)) memset(&sh, 0, sizeof sh);
        ek_elf_section *s = &in->secs[i];
        in->nsecs = i + 1;
        s->name = strdup(i ? sec_name(&h, &sh) : "");
        if (!s->name) goto nomem;
        s->addr = sh.sh_addr;
        s->offset = sh.sh_offset;
        s->size = sh.sh_size;
        s->flags = sh.sh_flags;
        s->type = sh.sh_type;
        if (!in->has_text && strcmp(s->name, ".text") == 0) {
            in->has_text = 1;
            in->text_addr = sh.sh_addr;
            in->text_offset = sh.sh_offset;
            in->text_size = sh.sh_size;
        }
        if (sh.sh_type == SHT_SYMTAB) in->has_symtab = 1;
        if (sh.sh_type == SHT_DYNSYM) in->has_dynsym = 1;
        if (sh.sh_type == SHT_NOTE && !in->build_id_len && scn)
            find_build_id(elf_getdata(scn, NULL), in->build_id, sizeof in->build_id,
                          &in->build_id_len);
    }
    if (elf_getphdrnum(h.elf, &nph) != 0) nph = 0;
    EK_VEC(ek_elf_segment) segs = {0};
    for (size_t i = 0; i < nph; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(h.elf, (int)i, &ph)) continue;
        if (ph.p_type == PT_NOTE && !in->build_id_len)
            find_build_id(
                elf_getdata_rawchunk(h.elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR),
                in->build_id, sizeof in->build_id, &in->build_id_len);
        if (ph.p_type != PT_LOAD) continue;
        ek_elf_segment sg = {ph.p_vaddr, ph.p_memsz, ph.p_offset, ph.p_filesz, ph.p_flags};
        if (ek_vec_push(&segs, sg)) {
            ek_vec_free(&segs);
            goto nomem;
        }
    }
    in->segs = segs.v;
    in->nsegs = segs.n;
    elf_close(&h);
    *out = in;
    return EK_OK;
nomem:
    elf_close(&h);
    ek_elf_info_free(in);
    return EK_ERR_NOMEM;
}

/* ---- symbols -------------------------------------------------------------------------- */

typedef struct kmod_vec {
    EK_VEC(ek_kmod_section) v;
} kmod_vec;

typedef struct load_ctx {
    elf_h *h;
    const char *path;
    const ek_diag *diag;
    unsigned flags;
    int kernel; /* ET_REL: perf's kernel-module rules */
    ek_symtab *main;
    kmod_vec *kv; /* per-section tables (kernel modules), may be NULL */
} load_ctx;

static int is_mapping_symbol(const char *name, const Elf_Data *strs, size_t st_name)
{
    if (name[0] != '$') return 0;
    /* perf: name[1] in "adtx" (strchr also matches the terminating NUL), then name[2] is
     * NUL or '.'. For a bare "$" that reads the next string table byte. */
    if (!strchr("adtx", name[1])) return 0;
    char c2;
    if (name[1])
        c2 = name[2];
    else
        c2 = (strs && st_name + 2 < strs->d_size) ? ((const char *)strs->d_buf)[st_name + 2] : 0;
    return c2 == '\0' || c2 == '.';
}

static ek_symtab *kmod_table(load_ctx *c, const char *secname, const GElf_Shdr *sh, int *rc)
{
    for (size_t i = 0; i < c->kv->v.n; i++)
        if (strcmp(c->kv->v.v[i].name, secname) == 0) return c->kv->v.v[i].syms;
    ek_kmod_section ks;
    memset(&ks, 0, sizeof ks);
    ks.name = strdup(secname);
    ks.sh_addr = sh->sh_addr;
    ks.sh_offset = sh->sh_offset;
    ks.sh_size = sh->sh_size;
    if (!ks.name || ek_symtab_new(&ks.syms) || ek_vec_push(&c->kv->v, ks)) {
        free((char *)ks.name);
        ek_symtab_free(ks.syms);
        *rc = EK_ERR_NOMEM;
        return NULL;
    }
    return ks.syms;
}

/* One batch (.symtab or .dynsym) as perf's dso__load_sym_internal. Returns the number of
 * symbols added or a negative status (perf's -1: the load stops). */
static int load_pass(load_ctx *c, Elf_Scn *tab, int dynsym)
{
    elf_h *h = c->h;
    GElf_Shdr tsh;
    if (!gelf_getshdr(tab, &tsh) || tsh.sh_entsize == 0) return -1;
    Elf_Data *syms = elf_getdata(tab, NULL);
    Elf_Scn *strscn = elf_getscn(h->elf, tsh.sh_link);
    Elf_Data *strs = strscn ? elf_getdata(strscn, NULL) : NULL;
    if (!syms || !strs) return -1;
    size_t nsyms = tsh.sh_size / tsh.sh_entsize;
    size_t nph = 0;
    if (elf_getphdrnum(h->elf, &nph) != 0) nph = 0;
    int nr = 0;
    for (size_t idx = 0; idx < nsyms; idx++) {
        GElf_Sym sym;
        if (!gelf_getsym(syms, (int)idx, &sym)) continue;
        const char *name =
            sym.st_name < strs->d_size ? elf_strptr(h->elf, tsh.sh_link, sym.st_name) : NULL;
        if (!name) name = "";
        int type = GELF_ST_TYPE(sym.st_info);
        int vis = GELF_ST_VISIBILITY(sym.st_other);
        int is_label = type == STT_NOTYPE && sym.st_name != 0 && sym.st_shndx != SHN_UNDEF &&
                       sym.st_shndx != SHN_ABS && vis != STV_HIDDEN && vis != STV_INTERNAL;
        int is_func = (type == STT_FUNC || type == STT_GNU_IFUNC) && sym.st_name != 0 &&
                      sym.st_shndx != SHN_UNDEF;
        int is_obj = type == STT_OBJECT && sym.st_name != 0 && sym.st_shndx != SHN_UNDEF;
        if (!is_label && !is_func && !is_obj) continue;
        if ((h->eh.e_machine == EM_ARM || h->eh.e_machine == EM_AARCH64) &&
            is_mapping_symbol(name, strs, sym.st_name))
            continue;
        if (sym.st_shndx == SHN_ABS) continue;
        Elf_Scn *sec = elf_getscn(h->elf, sym.st_shndx);
        GElf_Shdr sh;
        if (!sec || !gelf_getshdr(sec, &sh)) {
            ek_diag_emit(c->diag, EK_SEV_WARN, "elf.bad-symbol", EK_ERR_FORMAT, c->path,
                         (int64_t)idx, -1, -1,
                         "%s symbol %zu ('%s') has section index %u, which does not exist: "
                         "symbol loading stops here, as perf's does",
                         dynsym ? ".dynsym" : ".symtab", idx, name, (unsigned)sym.st_shndx);
            return -1;
        }
        if (!(sh.sh_flags & SHF_ALLOC)) continue;
        const char *secname = sec_name(h, &sh);
        if (is_label && !strstr(secname, "text") && !strstr(secname, "data")) continue;
        uint64_t v = sym.st_value;
        if (h->eh.e_machine == EM_ARM && type == STT_FUNC && (v & 1)) v--;
        ek_symtab *dst = c->main;
        if (c->kernel) {
            if (!(c->flags & EK_SYMS_VADDR)) v -= sh.sh_addr - sh.sh_offset;
            if (c->kv && strcmp(secname, ".text") != 0) {
                int rc = 0;
                dst = kmod_table(c, secname, &sh, &rc);
                if (!dst) return rc;
            } else if (strcmp(secname, ".text") != 0) {
                continue; /* goes to a section map, not the module's main table */
            }
        } else if (!(c->flags & EK_SYMS_VADDR)) {
            int found = 0;
            for (size_t i = 0; i < nph && !found; i++) {
                GElf_Phdr ph;
                if (!gelf_getphdr(h->elf, (int)i, &ph) || ph.p_type != PT_LOAD) continue;
                uint64_t sz = ph.p_memsz > ph.p_filesz ? ph.p_memsz : ph.p_filesz;
                if (!sz) continue;
                if (sym.st_value >= ph.p_vaddr && sym.st_value - ph.p_vaddr < sz) {
                    v -= ph.p_vaddr - ph.p_offset;
                    found = 1;
                }
            }
            if (!found) v -= sh.sh_addr - sh.sh_offset;
        }
        ek_symbol s;
        memset(&s, 0, sizeof s);
        s.start = v;
        s.end = sym.st_size ? v + sym.st_size : v;
        s.value = sym.st_value;
        s.size = sym.st_size;
        s.name = name;
        s.binding = (uint8_t)GELF_ST_BIND(sym.st_info);
        s.type = (uint8_t)type;
        s.origin = dynsym ? EK_SYMORIGIN_DYNSYM : EK_SYMORIGIN_SYMTAB;
        s.shndx = sym.st_shndx;
        int rc = ek_symtab_insert_full(dst, &s, 0);
        if (rc) return rc;
        nr++;
    }
    if (nr > 0) ek_symtab_fixup(c->main, 0);
    return nr;
}

static Elf_Scn *find_section(elf_h *h, const char *name, uint32_t type, GElf_Shdr *out, size_t *idx)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(h->elf, scn)) != NULL) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh)) continue;
        if (strcmp(sec_name(h, &sh), name) == 0) {
            if (type && sh.sh_type != type) return NULL;
            if (out) *out = sh;
            if (idx) *idx = elf_ndxscn(scn);
            return scn;
        }
    }
    return NULL;
}

/* perf 6.1's dso__synthesize_plt_symbols: one "name@plt" per .rela.plt/.rel.plt entry. */
static int synth_plt(load_ctx *c)
{
    elf_h *h = c->h;
    GElf_Shdr dynsh, relsh, pltsh;
    size_t dynidx = 0;
    Elf_Scn *dyn = find_section(h, ".dynsym", SHT_DYNSYM, &dynsh, &dynidx);
    if (!dyn) return 0;
    Elf_Scn *rel = find_section(h, ".rela.plt", 0, &relsh, NULL);
    if (!rel) rel = find_section(h, ".rel.plt", 0, &relsh, NULL);
    if (!rel || relsh.sh_link != dynidx || relsh.sh_entsize == 0) return 0;
    if (!find_section(h, ".plt", 0, &pltsh, NULL)) return 0;
    Elf_Data *reldata = elf_getdata(rel, NULL), *syms = elf_getdata(dyn, NULL);
    Elf_Scn *strscn = elf_getscn(h->elf, dynsh.sh_link);
    Elf_Data *strs = strscn ? elf_getdata(strscn, NULL) : NULL;
    if (!reldata || !syms || !strs || strs->d_size == 0) return 0;
    uint64_t hdr, ent;
    switch (h->eh.e_machine) {
    case EM_ARM:
        hdr = 20;
        ent = 12;
        break;
    case EM_AARCH64:
        hdr = 32;
        ent = 16;
        break;
    case EM_SPARC:
        hdr = 48;
        ent = 12;
        break;
    case EM_SPARCV9:
        hdr = 128;
        ent = 32;
        break;
    default: hdr = ent = pltsh.sh_entsize; break;
    }
    uint64_t off = ((c->flags & EK_SYMS_VADDR) ? pltsh.sh_addr : pltsh.sh_offset) + hdr;
    size_t n = relsh.sh_size / relsh.sh_entsize;
    int nr = 0;
    for (size_t i = 0; i < n; i++) {
        size_t symidx;
        if (relsh.sh_type == SHT_RELA) {
            GElf_Rela r;
            if (!gelf_getrela(reldata, (int)i, &r)) break;
            symidx = GELF_R_SYM(r.r_info);
        } else if (relsh.sh_type == SHT_REL) {
            GElf_Rel r;
            if (!gelf_getrel(reldata, (int)i, &r)) break;
            symidx = GELF_R_SYM(r.r_info);
        } else {
            break;
        }
        GElf_Sym sym;
        memset(&sym, 0, sizeof sym);
        gelf_getsym(syms, (int)symidx, &sym);
        const char *name = elf_strptr(h->elf, dynsh.sh_link, sym.st_name);
        size_t nl = name ? strlen(name) : 0;
        char *pn = malloc(nl + 5);
        if (!pn) return EK_ERR_NOMEM;
        memcpy(pn, name ? name : "", nl);
        memcpy(pn + nl, "@plt", 5);
        ek_symbol s;
        memset(&s, 0, sizeof s);
        s.start = s.value = off;
        s.end = off + ent;
        s.size = ent;
        s.name = pn;
        s.binding = STB_GLOBAL;
        s.type = STT_FUNC;
        s.origin = EK_SYMORIGIN_PLT;
        int rc = ek_symtab_insert_full(c->main, &s, 0);
        free(pn);
        if (rc) return rc;
        off += ent;
        nr++;
    }
    return nr;
}

static int load_elf_syms(const char *path, unsigned flags, const ek_diag *diag, ek_symtab **out,
                         kmod_vec *kv)
{
    *out = NULL;
    elf_h h;
    int rc = elf_open(path, diag, &h);
    if (rc) return rc;
    ek_symtab *t;
    if ((rc = ek_symtab_new(&t))) {
        elf_close(&h);
        return rc;
    }
    load_ctx c = {&h, path, diag, flags, h.eh.e_type == ET_REL, t, kv};
    Elf_Scn *symtab = find_section(&h, ".symtab", SHT_SYMTAB, NULL, NULL);
    Elf_Scn *dynsym = find_section(&h, ".dynsym", SHT_DYNSYM, NULL, NULL);
    int total = 0, err = 0;
    if (!symtab) {
        if (c.kernel) err = -1; /* perf: a stripped kernel object gives no symbols */
    } else {
        err = load_pass(&c, symtab, 0);
        if (err >= 0) total = err;
    }
    if (err >= 0 && dynsym) {
        err = load_pass(&c, dynsym, 1);
        if (err >= 0) total += err;
    }
    if (err == EK_ERR_NOMEM) {
        ek_symtab_free(t);
        elf_close(&h);
        return err;
    }
    if (err >= 0 && total > 0 && !c.kernel && !(flags & EK_SYMS_NO_PLT)) {
        rc = synth_plt(&c);
        if (rc == EK_ERR_NOMEM) {
            ek_symtab_free(t);
            elf_close(&h);
            return rc;
        }
    }
    elf_close(&h);
    *out = t;
    return EK_OK;
}

int ek_symtab_load_elf(const char *path, unsigned flags, const ek_diag *diag, ek_symtab **out)
{
    return load_elf_syms(path, flags, diag, out, NULL);
}

void ek_kmod_sections_free(ek_kmod_section *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free((char *)s[i].name);
        ek_symtab_free(s[i].syms);
    }
    free(s);
}

int ek_symtab_load_kmodule_sections(const char *path, const ek_diag *diag, ek_kmod_section **out,
                                    size_t *n)
{
    *out = NULL;
    *n = 0;
    kmod_vec kv;
    memset(&kv, 0, sizeof kv);
    ek_symtab *main = NULL;
    int rc = load_elf_syms(path, 0, diag, &main, &kv);
    ek_symtab_free(main);
    if (rc) {
        ek_kmod_sections_free(kv.v.v, kv.v.n);
        return rc;
    }
    *out = kv.v.v;
    *n = kv.v.n;
    return EK_OK;
}
