/* DSO registry: finding, checking and mapping the files behind a recording's maps. */
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
#include "session/dso_int.h"

static char *dupz(const char *s)
{
    return s ? strdup(s) : NULL;
}

dso_reg *dso_reg_new(const dso_opts *o, const ek_diag *diag)
{
    dso_reg *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    if (o) {
        r->symfs = dupz(o->symfs && strcmp(o->symfs, "/") ? o->symfs : "");
        r->buildid_dir = dupz(o->buildid_dir);
        r->vmlinux = dupz(o->vmlinux);
        r->kallsyms = dupz(o->kallsyms);
        r->kcore_dir = dupz(o->kcore_dir);
        r->osrelease = dupz(o->osrelease);
    } else {
        r->symfs = dupz("");
    }
    if (diag)
        r->diag = *diag;
    return r;
}

static void dso_free(as_dso *d)
{
    free(d->name);
    free(d->print_name);
    free(d->path);
    free(d->tried);
    free(d->sec_off);
    free(d->reloc_copy);
    ek_vec_free(&d->spans);
    if (d->syms)
        ek_symtab_free(d->syms);
    pthread_mutex_destroy(&d->lock);
    free(d);
}

void dso_reg_free(dso_reg *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->dsos.n; i++)
        dso_free(r->dsos.v[i]);
    for (size_t i = 0; i < r->maps.n; i++)
        munmap(r->maps.v[i].addr, r->maps.v[i].len);
    for (size_t i = 0; i < r->infos.n; i++)
        ek_elf_info_free(r->infos.v[i]);
    ek_vec_free(&r->dsos);
    ek_vec_free(&r->knames);
    ek_vec_free(&r->maps);
    ek_vec_free(&r->infos);
    free(r->symfs);
    free(r->buildid_dir);
    free(r->vmlinux);
    free(r->kallsyms);
    free(r->kcore_dir);
    free(r->osrelease);
    free(r);
}

size_t dso_reg_count(const dso_reg *r)
{
    return r->dsos.n;
}

as_dso *dso_reg_at(const dso_reg *r, size_t i)
{
    return i < r->dsos.n ? r->dsos.v[i] : NULL;
}

const as_dso *dso_reg_kernel(const dso_reg *r)
{
    return r->kernel;
}

const char *dso_status_text(dso_status s)
{
    switch (s) {
    case DSO_OK: return "ok";
    case DSO_NOT_FOUND: return "not found";
    case DSO_BUILD_ID_MISMATCH: return "build-id mismatch";
    case DSO_BAD_FILE: return "not a usable ELF file";
    case DSO_NO_FILE: return "no file (anonymous memory)";
    default: return "not loaded";
    }
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

static const char *base_name(const char *p)
{
    const char *b = strrchr(p, '/');
    return b ? b + 1 : p;
}

/* perf's kmod_path__parse_name: "[name]" with '-' turned into '_', extension dropped. */
static char *kmod_short_name(const char *path)
{
    const char *b = base_name(path);
    if (b[0] == '[')
        return strdup(b);
    size_t n = strlen(b);
    const char *dot = strstr(b, ".ko");
    if (dot)
        n = (size_t)(dot - b);
    char *s = malloc(n + 3);
    if (!s)
        return NULL;
    s[0] = '[';
    for (size_t i = 0; i < n; i++)
        s[i + 1] = b[i] == '-' ? '_' : b[i];
    s[n + 1] = ']';
    s[n + 2] = 0;
    return s;
}

static dso_kind kind_of(const char *name, int kernel)
{
    const char *b = base_name(name);
    if (kernel) {
        if (!strncmp(name, "[kernel.kallsyms]", 17) || !strncmp(name, "[guest.kernel.kallsyms", 22))
            return DSO_KERNEL;
        if (b[0] == '[' || ends_with(b, ".ko") || ends_with(b, ".ko.gz") || ends_with(b, ".ko.xz"))
            return DSO_KMODULE;
        return DSO_KERNEL;
    }
    if (!strcmp(name, "[vdso]") || !strcmp(name, "[vdso32]") || !strcmp(name, "[vdsox32]"))
        return DSO_VDSO;
    if (name[0] != '/' || !strncmp(name, "//anon", 6))
        return DSO_ANON; /* //anon, [heap], [stack], [anon:...], memfd:... */
    if (!strncmp(name, "/memfd:", 7) || !strncmp(name, "/dev/", 5) || strstr(name, " (deleted)"))
        return DSO_ANON;
    return DSO_USER;
}

as_dso *dso_get(dso_reg *r, const char *name, int kernel)
{
    if (!name)
        name = "";
    dso_kind k = kind_of(name, kernel);
    /* one kernel DSO whatever its map's name ("[kernel.kallsyms]_text", "_stext") */
    const char *key = k == DSO_KERNEL ? "[kernel.kallsyms]" : name;
    for (size_t i = 0; i < r->dsos.n; i++) {
        as_dso *d = r->dsos.v[i];
        if (d->kind == k && !strcmp(d->name, key))
            return d;
    }
    as_dso *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    pthread_mutex_init(&d->lock, NULL);
    d->reg = r;
    d->kind = k;
    d->name = strdup(key);
    d->print_name = k == DSO_KMODULE ? kmod_short_name(key) : strdup(key);
    if (!d->name || !d->print_name || ek_vec_push(&r->dsos, d)) {
        dso_free(d);
        return NULL;
    }
    d->print_len = (uint32_t)strlen(d->print_name);
    if (k == DSO_KERNEL)
        r->kernel = d;
    return d;
}

as_dso *dso_jit(dso_reg *r, const char *name, const char *sym, const uint8_t *code,
                uint64_t size)
{
    for (size_t i = 0; i < r->dsos.n; i++)
        if (r->dsos.v[i]->kind == DSO_JIT && !strcmp(r->dsos.v[i]->name, name))
            return r->dsos.v[i];
    as_dso *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    pthread_mutex_init(&d->lock, NULL);
    d->reg = r;
    d->kind = DSO_JIT;
    d->name = strdup(name);
    d->print_name = strdup(name);
    if (!d->name || !d->print_name || ek_vec_push(&r->dsos, d)) {
        dso_free(d);
        return NULL;
    }
    d->print_len = (uint32_t)strlen(d->print_name);
    d->bytes = code;
    d->size = code ? (size_t)size : 0;
    d->status = code ? DSO_OK : DSO_NO_FILE;
    /* its symbol, keyed like a file's: the map's pgoff (0) + offset in the map */
    d->syms_key = DSO_KEY_FILEOFF;
    d->syms_state = 1;
    if (ek_symtab_new(&d->syms) == 0) {
        if (ek_symtab_insert(d->syms, 0, size, 1 /* STB_GLOBAL */, 2 /* STT_FUNC */,
                             sym ? sym : "") == 0)
            ek_symtab_fixup(d->syms, 0);
    }
    return d;
}

void dso_set_build_id(dso_reg *r, const char *name, int kernel, const uint8_t *id, size_t len)
{
    as_dso *d = dso_get(r, name, kernel);
    if (!d || !len)
        return;
    if (len > sizeof d->build_id)
        len = sizeof d->build_id;
    memcpy(d->build_id, id, len);
    d->build_id_len = (uint8_t)len;
    /* perf names a module that the build-id table lists by its full path */
    if (d->kind == DSO_KMODULE && name[0] == '/') {
        free(d->print_name);
        d->print_name = strdup(name);
        d->print_len = d->print_name ? (uint32_t)strlen(d->print_name) : 0;
    }
}

/* ---- files -------------------------------------------------------------------------------- */

static const uint8_t *map_file(dso_reg *r, const char *path, size_t *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0) {
        close(fd);
        return NULL;
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return NULL;
    mapping m = {p, (size_t)st.st_size};
    if (ek_vec_push(&r->maps, m)) {
        munmap(p, (size_t)st.st_size);
        return NULL;
    }
    *size = (size_t)st.st_size;
    return p;
}

/* Trailing zero bytes of a recorded build-id are padding (perf stores 20 bytes). */
static size_t id_len(const uint8_t *id, size_t len)
{
    while (len && !id[len - 1])
        len--;
    return len;
}

int dso_same_id(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    alen = id_len(a, alen);
    blen = id_len(b, blen);
    if (!alen || !blen)
        return 1; /* nothing to compare */
    size_t n = alen < blen ? alen : blen;
    return n >= 4 && !memcmp(a, b, n);
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
    if (a <= 1)
        return v;
    return (v + a - 1) / a * a;
}

/* Where the kernel's module loader puts the code of a relocatable module (layout_sections()
 * in kernel/module): the executable, non-init SHF_ALLOC sections come first, in file order,
 * each at ALIGN(size so far, sh_addralign). Only they hold code, so only they get spans. */
static void layout_module(as_dso *d, const ek_elf_info *info)
{
    uint64_t size = 0;
    d->sec_off = malloc((info->nsecs ? info->nsecs : 1) * sizeof *d->sec_off);
    if (!d->sec_off)
        return;
    d->nsec_off = info->nsecs;
    for (size_t i = 0; i < info->nsecs; i++)
        d->sec_off[i] = UINT64_MAX;
    if (elf_version(EV_CURRENT) == EV_NONE)
        return;
    Elf *e = elf_memory((char *)(uintptr_t)d->bytes, d->size);
    if (!e)
        return;
    for (size_t i = 0; i < info->nsecs; i++) {
        const ek_elf_section *s = &info->secs[i];
        if ((s->flags & (SHF_EXECINSTR_ | SHF_ALLOC_)) != (SHF_EXECINSTR_ | SHF_ALLOC_))
            continue;
        if (s->name && !strncmp(s->name, ".init", 5))
            continue;
        uint64_t align = 1;
        GElf_Shdr sh;
        Elf_Scn *scn = elf_getscn(e, i);
        if (scn && gelf_getshdr(scn, &sh) && sh.sh_addralign > 1)
            align = sh.sh_addralign;
        size = align_up(size, align);
        d->sec_off[i] = size;
        if (s->type != SHT_NOBITS_ && s->size && s->offset <= d->size &&
            s->size <= d->size - s->offset) {
            dso_span sp = {size, s->size, d->bytes + s->offset};
            ek_vec_push(&d->spans, sp);
        }
        size += s->size;
    }
    elf_end(e);
}

static void add_segments(as_dso *d, const ek_elf_info *info, const uint8_t *bytes, size_t size)
{
    for (size_t i = 0; i < info->nsegs; i++) {
        const ek_elf_segment *g = &info->segs[i];
        if (!g->filesz || g->offset >= size)
            continue;
        uint64_t n = g->filesz;
        if (g->offset + n > size)
            n = size - g->offset;
        dso_span sp = {g->vaddr, n, bytes + g->offset};
        ek_vec_push(&d->spans, sp);
    }
}

/* Use the kernel image at path (vmlinux or kcore): 1 when it is usable. */
static int try_kernel(dso_reg *r, as_dso *d, const char *path)
{
    ek_elf_info *info = NULL;
    if (access(path, R_OK))
        return 0;
    if (ek_elf_info_read(path, NULL, &info)) {
        if (d->status != DSO_BUILD_ID_MISMATCH)
            d->status = DSO_BAD_FILE;
        return 0;
    }
    if (info->type != ET_CORE_ && d->build_id_len &&
        !dso_same_id(d->build_id, d->build_id_len, info->build_id, info->build_id_len)) {
        d->status = DSO_BUILD_ID_MISMATCH;
        size_t l = info->build_id_len > 20 ? 20 : info->build_id_len;
        memcpy(d->found_id, info->build_id, l);
        d->found_id_len = (uint8_t)l;
        free(d->tried);
        d->tried = strdup(path);
        ek_elf_info_free(info);
        return 0;
    }
    size_t size = 0;
    const uint8_t *bytes = map_file(r, path, &size);
    if (!bytes) {
        ek_elf_info_free(info);
        d->status = DSO_BAD_FILE;
        return 0;
    }
    ek_vec_push(&r->infos, info);
    d->bytes = bytes;
    d->size = size;
    free(d->path);
    d->path = strdup(path);
    add_segments(d, info, bytes, size);
    d->status = DSO_OK;
    return 1;
}

/* The kernel's code: -k, else the --kcore folder's kcore, else where perf looks for a vmlinux
 * (under --symfs): vmlinux, /boot/vmlinux, /boot/vmlinux-REL, /usr/lib/debug/boot/vmlinux-REL,
 * /lib/modules/REL/build/vmlinux, /usr/lib/debug/lib/modules/REL/vmlinux. */
static void load_kernel(dso_reg *r, as_dso *d)
{
    d->status = DSO_NOT_FOUND;
    if (r->vmlinux) {
        free(d->tried);
        d->tried = strdup(r->vmlinux);
        try_kernel(r, d, r->vmlinux);
        return;
    }
    if (r->kcore_dir) {
        char *kc = NULL;
        if (asprintf(&kc, "%s/kcore", r->kcore_dir) >= 0) {
            free(d->tried);
            d->tried = strdup(kc);
            int ok = try_kernel(r, d, kc);
            free(kc);
            if (ok)
                return;
        }
    }
    const char *rel = r->osrelease;
    const char *fmts[] = {"vmlinux", "/boot/vmlinux", "/boot/vmlinux-%s", "/usr/lib/debug/boot/vmlinux-%s",
                          "/lib/modules/%s/build/vmlinux", "/usr/lib/debug/lib/modules/%s/vmlinux"};
    ek_sbuf tried = EK_SBUF_INIT;
    for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
        if (strstr(fmts[i], "%s") && !rel)
            continue;
        char *p = NULL, *full = NULL;
        if (asprintf(&p, fmts[i], rel ? rel : "") < 0)
            continue;
        if (asprintf(&full, "%s%s%s", r->symfs, r->symfs[0] && p[0] != '/' ? "/" : "", p) < 0) {
            free(p);
            continue;
        }
        free(p);
        int ok = try_kernel(r, d, full);
        free(full);
        if (ok) {
            ek_sbuf_free(&tried);
            return;
        }
    }
    ek_sbuf_free(&tried);
    if (d->status == DSO_NOT_FOUND) {
        free(d->tried);
        d->tried = NULL;
    }
}

static void load_file(dso_reg *r, as_dso *d)
{
    char hex[64] = "";
    if (d->build_id_len)
        ek_build_id_hex(d->build_id, d->build_id_len, hex, sizeof hex);
    char **cand = NULL;
    size_t n = 0;
    if (ek_buildid_data_candidates(d->name, d->build_id_len ? hex : NULL, r->symfs,
                                   r->buildid_dir, &cand, &n) < 0)
        n = 0;
    d->status = DSO_NOT_FOUND;
    {
        /* every place we look, for the report: "a, b" */
        ek_sbuf t = EK_SBUF_INIT;
        for (size_t i = 0; i < n; i++)
            ek_sbuf_printf(&t, "%s%s", i ? ", " : "", cand[i]);
        free(d->tried);
        d->tried = t.p ? strdup(t.p) : NULL;
        ek_sbuf_free(&t);
    }
    for (size_t i = 0; i < n; i++) {
        if (access(cand[i], R_OK))
            continue;
        ek_elf_info *info = NULL;
        if (ek_elf_info_read(cand[i], NULL, &info)) {
            if (d->status == DSO_NOT_FOUND)
                d->status = DSO_BAD_FILE;
            continue;
        }
        if (d->build_id_len &&
            !dso_same_id(d->build_id, d->build_id_len, info->build_id, info->build_id_len)) {
            d->status = DSO_BUILD_ID_MISMATCH;
            size_t l = info->build_id_len > 20 ? 20 : info->build_id_len;
            memcpy(d->found_id, info->build_id, l);
            d->found_id_len = (uint8_t)l;
            free(d->tried);
            d->tried = strdup(cand[i]);
            ek_elf_info_free(info);
            continue;
        }
        size_t size = 0;
        const uint8_t *bytes = map_file(r, cand[i], &size);
        if (!bytes) {
            ek_elf_info_free(info);
            continue;
        }
        d->bytes = bytes;
        d->size = size;
        d->path = strdup(cand[i]);
        d->et_rel = info->type == ET_REL_;
        if (d->et_rel)
            layout_module(d, info);
        ek_vec_push(&r->infos, info);
        d->status = DSO_OK;
        break;
    }
    ek_path_list_free(cand, n);
}

void dso_reg_load_all(dso_reg *r)
{
    for (size_t i = 0; i < r->dsos.n; i++) {
        as_dso *d = r->dsos.v[i];
        if (d->status != DSO_NOT_TRIED)
            continue;
        switch (d->kind) {
        case DSO_KERNEL:
            load_kernel(r, d);
            break;
        case DSO_USER:
        case DSO_KMODULE:
            load_file(r, d);
            break;
        default:
            d->status = DSO_NO_FILE;
            break;
        }
    }
}

int dso_code(const as_dso *d, uint64_t off, dso_span *out)
{
    if (d->status != DSO_OK)
        return 0;
    if (d->kind == DSO_KERNEL || d->et_rel) {
        for (size_t i = 0; i < d->spans.n; i++) {
            const dso_span *s = &d->spans.v[i];
            if (off >= s->off && off - s->off < s->size) {
                *out = *s;
                return 1;
            }
        }
        return 0;
    }
    if (off >= d->size)
        return 0;
    out->off = 0;
    out->size = d->size;
    out->data = d->bytes;
    return 1;
}

