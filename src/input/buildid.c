/* Where perf 6.1 looks for the file behind a DSO name and build-id (dso.c, build-id.c). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/vec.h"
#include "etmkit/etmkit.h"
#include "etmkit/symbols.h"

typedef EK_VEC(char *) strvec;

static int is_regular(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int addf(strvec *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int addf(strvec *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0) return EK_ERR_NOMEM;
    for (size_t i = 0; i < v->n; i++) {
        if (strcmp(v->v[i], s) == 0) { /* perf may try a path twice; list it once */
            free(s);
            return 0;
        }
    }
    if (ek_vec_push(v, s)) {
        free(s);
        return EK_ERR_NOMEM;
    }
    return 0;
}

/* perf's path__join(symfs, path): "<symfs>/<path>" when symfs is not empty. */
static const char *sep(const char *symfs)
{
    return symfs[0] ? "/" : "";
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

/* perf's kmod_path__parse: a '[...]' name other than the kernel/vdso ones, or "*.ko" with
 * an optional .gz/.xz. */
static int is_kmodule(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (base[0] == '[')
        return strncmp(base, "[kernel.kallsyms]", 17) &&
               strncmp(base, "[guest.kernel.kallsyms", 22) && strncmp(base, "[vdso]", 6) &&
               strncmp(base, "[vdso32]", 8) && strncmp(base, "[vdsox32]", 9) &&
               strncmp(base, "[vsyscall]", 10);
    return ends_with(base, ".ko") || ends_with(base, ".ko.gz") || ends_with(base, ".ko.xz");
}

/* The .gnu_debuglink file name of an ELF file, or NULL. */
static char *read_debuglink(const char *file);

/* perf's dso__build_id_filename: new-style cache entries are directories holding
 * "elf"/"debug"/"kallsyms"/"vdso"; an old-style entry is the file itself. */
static int add_cache(strvec *v, const char *dir, const char *bid, const char *path, int debug)
{
    char *link = NULL;
    if (asprintf(&link, "%s/.build-id/%.2s/%s", dir, bid, bid + 2) < 0) return EK_ERR_NOMEM;
    int rc;
    if (is_regular(link)) {
        rc = addf(v, "%s", link);
    } else {
        const char *base = path[0] != '/' && strstr(path, "kallsyms") ? "kallsyms"
                           : (strncmp(path, "[vdso", 5) == 0)         ? "vdso"
                           : debug                                    ? "debug"
                                                                      : "elf";
        rc = addf(v, "%s/%s", link, base);
    }
    free(link);
    return rc;
}

int ek_buildid_candidates(const char *path, const char *build_id_hex, const char *symfs,
                          const char *debugdir, char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!path) return EK_ERR_ARG;
    if (!symfs || strcmp(symfs, "/") == 0) symfs = "";
    char *home_dir = NULL;
    if (!debugdir) {
        const char *home = getenv("HOME");
        if (asprintf(&home_dir, "%s/.debug", home ? home : "") < 0) return EK_ERR_NOMEM;
        debugdir = home_dir;
    }
    const char *bid = build_id_hex && strlen(build_id_hex) > 2 ? build_id_hex : NULL;
    strvec v = {0};
    int rc = 0;
    int kmod = is_kmodule(path);
    const char *ss = sep(symfs);
    if (!kmod && path[0] == '/') {
        /* DEBUGLINK: the .gnu_debuglink name next to the file, in .debug/, or under
         * /usr/lib/debug (only when the file itself can be read). */
        char *file = NULL;
        if (asprintf(&file, "%s%s%s", symfs, ss, path) < 0) rc = EK_ERR_NOMEM;
        char *dl = (!rc && is_regular(file)) ? read_debuglink(file) : NULL;
        if (dl) {
            char *slash = strrchr(file, '/');
            size_t dlen = slash ? (size_t)(slash - file) : 0;
            rc = rc ? rc : addf(&v, "%s", dl);
            rc = rc ? rc : addf(&v, "%.*s/%s", (int)dlen, file, dl);
            rc = rc ? rc : addf(&v, "%.*s/.debug/%s", (int)dlen, file, dl);
            rc = rc ? rc : addf(&v, "/usr/lib/debug%.*s/%s", (int)dlen, file, dl);
            free(dl);
        }
        free(file);
    }
    if (!rc && bid) rc = add_cache(&v, debugdir, bid, path, 0);
    if (!rc && bid) rc = add_cache(&v, debugdir, bid, path, 1);
    if (!rc && !kmod && path[0] == '/') {
        rc = addf(&v, "%s%s/usr/lib/debug%s.debug", symfs, ss, path);     /* Fedora */
        rc = rc ? rc : addf(&v, "%s%s/usr/lib/debug%s", symfs, ss, path); /* Ubuntu */
        if (!rc && bid)
            rc = addf(&v, "%s%s/usr/lib/debug/.build-id/%.2s/%s.debug", symfs, ss, bid, bid + 2);
        rc = rc ? rc : addf(&v, "%s%s%s", symfs, ss, path); /* system path */
        if (!rc) {                                          /* OpenEmbedded: <dir>/.debug/<base> */
            const char *slash = strrchr(path, '/');
            rc = addf(&v, "%s%s%.*s/.debug%s", symfs, ss, (int)(slash - path), path, slash);
        }
        if (!rc && strncmp(path, "/usr/lib/", 9) == 0) /* Ubuntu's /usr/lib vs /lib */
            rc = addf(&v, "%s%s/usr/lib/debug%s", symfs, ss, path + 4);
    } else if (!rc && kmod && path[0] == '/') {
        rc = addf(&v, "%s%s%s", symfs, ss, path); /* system path of the module */
    }
    free(home_dir);
    if (rc) {
        ek_path_list_free(v.v, v.n);
        return rc;
    }
    *out = v.v;
    *n = v.n;
    return (int)v.n;
}

int ek_buildid_data_candidates(const char *path, const char *build_id_hex, const char *symfs,
                               const char *debugdir, char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!path) return EK_ERR_ARG;
    if (!symfs || strcmp(symfs, "/") == 0) symfs = "";
    char *home_dir = NULL;
    if (!debugdir) {
        const char *home = getenv("HOME");
        if (asprintf(&home_dir, "%s/.debug", home ? home : "") < 0) return EK_ERR_NOMEM;
        debugdir = home_dir;
    }
    strvec v = {0};
    int rc = 0;
    if (build_id_hex && strlen(build_id_hex) > 2)
        rc = add_cache(&v, debugdir, build_id_hex, path, 0);
    if (!rc) rc = addf(&v, "%s%s%s", symfs, sep(symfs), path);
    free(home_dir);
    if (rc) {
        ek_path_list_free(v.v, v.n);
        return rc;
    }
    *out = v.v;
    *n = v.n;
    return (int)v.n;
}

void ek_path_list_free(char **list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

char *ek_buildid_find(const char *path, const char *build_id_hex, const char *symfs,
                      const char *debugdir)
{
    char **list;
    size_t n;
    if (ek_buildid_candidates(path, build_id_hex, symfs, debugdir, &list, &n) < 0) return NULL;
    char *found = NULL;
    for (size_t i = 0; i < n && !found; i++)
        if (is_regular(list[i])) found = strdup(list[i]);
    ek_path_list_free(list, n);
    return found;
}

/* ---- .gnu_debuglink ------------------------------------------------------------------- */
#include <gelf.h>
#include <libelf.h>
#include <fcntl.h>
#include <unistd.h>

static char *read_debuglink(const char *file)
{
    if (elf_version(EV_CURRENT) == EV_NONE) return NULL;
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    char *res = NULL;
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    size_t shstrndx;
    if (elf && elf_kind(elf) == ELF_K_ELF && elf_getshdrstrndx(elf, &shstrndx) == 0) {
        Elf_Scn *scn = NULL;
        while ((scn = elf_nextscn(elf, scn)) != NULL) {
            GElf_Shdr sh;
            if (!gelf_getshdr(scn, &sh)) continue;
            const char *nm = elf_strptr(elf, shstrndx, sh.sh_name);
            if (!nm || strcmp(nm, ".gnu_debuglink") != 0) continue;
            Elf_Data *d = elf_getdata(scn, NULL);
            if (d && d->d_buf && d->d_size > 0) {
                size_t len = strnlen(d->d_buf, d->d_size);
                if (len > 0 && len < d->d_size) res = strndup(d->d_buf, len);
            }
            break;
        }
    }
    if (elf) elf_end(elf);
    close(fd);
    return res;
}
