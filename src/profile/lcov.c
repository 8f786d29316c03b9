/* Coverage from a profile: an lcov tracefile (geninfo's format, what genhtml reads) of one
 * binary, from its range and branch counts, its ELF symbols and its DWARF line tables (libdw).
 *
 * What an instruction counts: the sum of the counts of the ranges holding it (each range is
 * one straight-line run through it). A source line counts the largest count of its
 * instructions; a function the count of its entry instruction; a direct conditional branch
 * (A64 B.cond, BC.cond, CBZ, CBNZ, TBZ, TBNZ; A32/T32 B<cond>, CBZ, CBNZ, conditional BL) is
 * taken as often as the branch counts from its address say, and falls through for the rest of
 * its executions (a range holds every execution: a taken branch ends one, a branch not taken
 * lies inside one). docs/PROFILES.md, "Coverage (lcov)".
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "etmkit/isa.h"
#include "profile/eh_frame.h"
#include "profile/profile_int.h"

typedef struct lc_file {
    int fd;
    Elf *e;
} lc_file;

typedef struct lc_code { /* an executable section's bytes */
    uint64_t lo, hi;
    const uint8_t *p;
    const char *name;
} lc_code;

typedef struct lc_func {
    uint64_t lo, hi;
    const char *name;
    int rank;  /* binding: global 0, weak 1, local 2 */
    int thumb; /* EM_ARM: T32 code (bit 0 of the symbol's value) */
} lc_func;

typedef struct lc_map { /* mapping symbol: $x, $a, $t (code) or $d (data) */
    uint64_t addr;
    char kind;
} lc_map;

typedef struct lc_span { /* [lo, hi) of one line */
    uint64_t lo, hi;
    uint32_t file, line;
} lc_span;

typedef struct lc_seg { /* from lo to the next segment's lo, every instruction ran cov times */
    uint64_t lo;
    uint64_t cov;
} lc_seg;

typedef struct lc_ev {
    uint64_t addr;
    uint64_t count;
    int add;
} lc_ev;

typedef struct lc_taken {
    uint64_t from, count;
} lc_taken;

typedef struct lc_linerec {
    uint32_t file, line;
    uint64_t count;
} lc_linerec;

typedef struct lc_branch {
    uint64_t addr;
    uint32_t file, line; /* line 0: none */
    uint64_t executed, taken;
} lc_branch;

typedef struct lc_ctx {
    lc_code *code;
    size_t ncode, capcode;
    lc_func *fn;
    size_t nfn, capfn;
    char *fdenames; /* "fde@<hex>" names of FDE functions, 24 bytes each */
    char *dupnames; /* "<name>@<hex>" names of functions that share a name */
    lc_map *map;
    size_t nmap;
    lc_span *span;
    size_t nspan, capspan;
    char **files; /* interned source paths, by id */
    size_t nfiles, capfiles;
    uint32_t *fhash; /* open addressing: id + 1, 0 empty */
    size_t capfhash;
    lc_seg *seg;
    size_t nseg;
    lc_taken *tk;
    size_t ntk;
    lc_linerec *lr;
    size_t nlr, caplr;
    lc_branch *br;
    size_t nbr, capbr;
    int arm32;
} lc_ctx;

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap * 2 : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * size);
    if (!q) return EK_ERR_NOMEM;
    *p = q;
    *cap = c;
    return 0;
}

static int lc_open(const char *path, lc_file *f)
{
    f->fd = -1;
    f->e = NULL;
    if (elf_version(EV_CURRENT) == EV_NONE) return EK_ERR_UNSUPPORTED;
    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (f->fd < 0) return EK_ERR_IO;
    f->e = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
    if (!f->e || elf_kind(f->e) != ELF_K_ELF) return EK_ERR_FORMAT;
    GElf_Ehdr eh;
    if (!gelf_getehdr(f->e, &eh) || eh.e_type == ET_REL) return EK_ERR_FORMAT;
    return 0;
}

static void lc_close(lc_file *f)
{
    if (f->e) elf_end(f->e);
    if (f->fd >= 0) close(f->fd);
}

/* qsort that takes an empty array as it comes (NULL, 0: qsort's pointer must not be NULL) */
static void sort_n(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n > 1) qsort(v, n, size, cmp);
}

/* ---- source files ------------------------------------------------------------------- */

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int file_id(lc_ctx *c, const char *name, uint32_t *id)
{
    if (c->nfiles * 2 >= c->capfhash) {
        size_t cap = c->capfhash ? c->capfhash * 2 : 256;
        uint32_t *h = calloc(cap, sizeof *h);
        if (!h) return EK_ERR_NOMEM;
        for (size_t i = 0; i < c->nfiles; i++) {
            size_t s = str_hash(c->files[i]) & (cap - 1);
            while (h[s])
                s = (s + 1) & (cap - 1);
            h[s] = (uint32_t)i + 1;
        }
        free(c->fhash);
        c->fhash = h;
        c->capfhash = cap;
    }
    size_t s = str_hash(name) & (c->capfhash - 1);
    for (; c->fhash[s]; s = (s + 1) & (c->capfhash - 1))
        if (!strcmp(c->files[c->fhash[s] - 1], name)) {
            *id = c->fhash[s] - 1;
            return 0;
        }
    if (grow((void **)&c->files, &c->capfiles, c->nfiles + 1, sizeof *c->files))
        return EK_ERR_NOMEM;
    char *d = strdup(name);
    if (!d) return EK_ERR_NOMEM;
    c->files[c->nfiles] = d;
    c->fhash[s] = (uint32_t)c->nfiles + 1;
    *id = (uint32_t)c->nfiles++;
    return 0;
}

/* ---- ELF: code, functions, mapping symbols ------------------------------------------ */

static int load_code(lc_ctx *c, Elf *e)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !sh.sh_size) continue;
        if ((sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) != (SHF_ALLOC | SHF_EXECINSTR)) continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        if (!d || !d->d_buf || d->d_size < sh.sh_size) continue;
        if (grow((void **)&c->code, &c->capcode, c->ncode + 1, sizeof *c->code))
            return EK_ERR_NOMEM;
        size_t shstrndx;
        const char *name = NULL;
        if (!elf_getshdrstrndx(e, &shstrndx)) name = elf_strptr(e, shstrndx, sh.sh_name);
        c->code[c->ncode++] =
            (lc_code){sh.sh_addr, sh.sh_addr + sh.sh_size, d->d_buf, name ? name : "?"};
    }
    return 0;
}

static int cmp_func(const void *a, const void *b)
{
    const lc_func *x = a, *y = b;
    if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
    if (x->rank != y->rank) return x->rank - y->rank;
    return strcmp(x->name, y->name);
}

static int cmp_map(const void *a, const void *b)
{
    const lc_map *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* the symbols of e's .symtab (else .dynsym): functions in executable sections, and the mapping
 * symbols */
static int load_symbols(lc_ctx *c, Elf *e)
{
    Elf_Scn *scn = NULL, *pick = NULL;
    GElf_Shdr sh, psh;
    memset(&psh, 0, sizeof psh);
    while ((scn = elf_nextscn(e, scn))) {
        if (!gelf_getshdr(scn, &sh)) continue;
        if (sh.sh_type == SHT_SYMTAB || (sh.sh_type == SHT_DYNSYM && !pick)) {
            pick = scn;
            psh = sh;
        }
    }
    Elf_Data *d = pick ? elf_getdata(pick, NULL) : NULL;
    size_t n = d && psh.sh_entsize ? psh.sh_size / psh.sh_entsize : 0, capm = 0;
    for (size_t i = 1; i < n; i++) {
        GElf_Sym s;
        if (!gelf_getsym(d, (int)i, &s)) continue;
        if (s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE) continue;
        const char *name = elf_strptr(e, psh.sh_link, s.st_name);
        if (!name) continue;
        GElf_Shdr ssh;
        Elf_Scn *ss = elf_getscn(e, s.st_shndx);
        if (!ss || !gelf_getshdr(ss, &ssh) || !(ssh.sh_flags & SHF_EXECINSTR)) continue;
        int type = GELF_ST_TYPE(s.st_info), bind = GELF_ST_BIND(s.st_info);
        if (type == STT_NOTYPE && name[0] == '$' && strchr("xadt", name[1]) &&
            (!name[2] || name[2] == '.')) {
            if (grow((void **)&c->map, &capm, c->nmap + 1, sizeof *c->map)) return EK_ERR_NOMEM;
            c->map[c->nmap++] = (lc_map){s.st_value, name[1]};
            continue;
        }
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || !name[0]) continue;
        if (grow((void **)&c->fn, &c->capfn, c->nfn + 1, sizeof *c->fn)) return EK_ERR_NOMEM;
        uint64_t lo = s.st_value;
        int thumb = 0;
        if (c->arm32) {
            thumb = (int)(lo & 1);
            lo &= ~(uint64_t)1;
        }
        c->fn[c->nfn++] = (lc_func){lo, s.st_size ? lo + s.st_size : 0, name,
                                    bind == STB_GLOBAL ? 0
                                    : bind == STB_WEAK ? 1
                                                       : 2,
                                    thumb};
    }
    sort_n(c->fn, c->nfn, sizeof *c->fn, cmp_func);
    /* one function per address (the first name: global, weak, local, then by bytes); a
     * symbol without size ends at the next function or at the end of its code */
    size_t k = 0;
    for (size_t i = 0; i < c->nfn; i++)
        if (!k || c->fn[k - 1].lo != c->fn[i].lo) c->fn[k++] = c->fn[i];
    c->nfn = k;
    for (size_t i = 0; i < k; i++) {
        if (c->fn[i].hi) continue;
        uint64_t hi = i + 1 < k ? c->fn[i + 1].lo : c->fn[i].lo;
        for (size_t j = 0; j < c->ncode; j++)
            if (c->code[j].lo <= c->fn[i].lo && c->fn[i].lo < c->code[j].hi &&
                (i + 1 == k || c->code[j].hi < hi))
                hi = c->code[j].hi;
        c->fn[i].hi = hi;
    }
    sort_n(c->map, c->nmap, sizeof *c->map, cmp_map);
    return 0;
}

static size_t func_at(const lc_ctx *c, uint64_t a);

typedef struct lc_fde {
    uint64_t lo, hi;
} lc_fde;

typedef struct lc_fdes {
    lc_fde *v;
    size_t n, cap;
} lc_fdes;

static int fde_push(void *ctx, uint64_t start, uint64_t size)
{
    lc_fdes *f = ctx;
    if (!size || start + size < start) return 0;
    if (grow((void **)&f->v, &f->cap, f->n + 1, sizeof *f->v)) return EK_ERR_NOMEM;
    f->v[f->n++] = (lc_fde){start, start + size};
    return 0;
}

static int cmp_fde(const void *a, const void *b)
{
    const lc_fde *x = a, *y = b;
    if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
    return x->hi < y->hi ? 1 : x->hi > y->hi ? -1 : 0;
}

/* Functions of a stripped file that its symbols do not name: each .eh_frame FDE (of the first
 * of the files with its bytes) no function symbol starts at or covers is a function
 * "fde@<hex>" over its PC range (the longest FDE of an address; cut at the next function);
 * without any function then, each executable section is one, named after it. */
static int add_fde_functions(lc_ctx *c, Elf *e1, Elf *e2)
{
    lc_fdes f = {NULL, 0, 0};
    Elf *es[2] = {e1, e2};
    for (int k = 0; k < 2 && !f.n; k++) {
        Elf *e = es[k];
        size_t shstrndx;
        if (!e || elf_getshdrstrndx(e, &shstrndx)) continue;
        GElf_Ehdr eh;
        if (!gelf_getehdr(e, &eh)) continue;
        Elf_Scn *scn = NULL;
        while ((scn = elf_nextscn(e, scn))) {
            GElf_Shdr sh;
            if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS) continue;
            const char *name = elf_strptr(e, shstrndx, sh.sh_name);
            if (!name || strcmp(name, ".eh_frame")) continue;
            Elf_Data *d = elf_rawdata(scn, NULL);
            if (!d || !d->d_buf) continue;
            int rc = ek_eh_frame_walk(d->d_buf, d->d_size, sh.sh_addr,
                                      eh.e_ident[EI_CLASS] == ELFCLASS32 ? 4 : 8,
                                      eh.e_ident[EI_DATA] == ELFDATA2MSB, fde_push, &f, NULL);
            if (rc) {
                free(f.v);
                return rc;
            }
            break;
        }
    }
    sort_n(f.v, f.n, sizeof *f.v, cmp_fde);
    size_t nsym = c->nfn, k = 0;
    for (size_t i = 0; i < f.n; i++) {
        if (i && f.v[i].lo == f.v[i - 1].lo) continue; /* the longest comes first */
        int in_code = 0;
        for (size_t j = 0; j < c->ncode; j++)
            in_code |= c->code[j].lo <= f.v[i].lo && f.v[i].lo < c->code[j].hi;
        size_t at = func_at(c, f.v[i].lo); /* among the symbols (sorted, nfn = nsym) */
        if (!in_code || at < nsym) continue;
        f.v[k++] = f.v[i];
    }
    int rc = 0;
    if (k) {
        c->fdenames = malloc(k * 24);
        if (!c->fdenames) rc = EK_ERR_NOMEM;
        for (size_t i = 0; i < k && !rc; i++) {
            char *name = c->fdenames + 24 * i;
            snprintf(name, 24, "fde@%llx", (unsigned long long)f.v[i].lo);
            if (grow((void **)&c->fn, &c->capfn, c->nfn + 1, sizeof *c->fn)) {
                rc = EK_ERR_NOMEM;
                break;
            }
            c->fn[c->nfn++] = (lc_func){f.v[i].lo, f.v[i].hi, name, 3, 0};
        }
        if (!rc) {
            sort_n(c->fn, c->nfn, sizeof *c->fn, cmp_func);
            for (size_t i = 0; i + 1 < c->nfn; i++)
                if (c->fn[i].rank == 3 && c->fn[i].hi > c->fn[i + 1].lo)
                    c->fn[i].hi = c->fn[i + 1].lo;
        }
    }
    free(f.v);
    if (!rc && !c->nfn && c->ncode) {
        c->fn = malloc(c->ncode * sizeof *c->fn);
        if (!c->fn) return EK_ERR_NOMEM;
        for (size_t i = 0; i < c->ncode; i++)
            c->fn[c->nfn++] = (lc_func){c->code[i].lo, c->code[i].hi, c->code[i].name, 0, 0};
    }
    return rc;
}

static int cmp_fnptr(const void *a, const void *b)
{
    const lc_func *x = *(lc_func *const *)a, *y = *(lc_func *const *)b;
    int d = strcmp(x->name, y->name);
    return d ? d : x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Functions that share a name (versions of one .dynsym name, local functions of one name) are
 * named "<name>@<hex address>": genhtml keys functions by name. */
static int unique_names(lc_ctx *c)
{
    if (c->nfn < 2) return 0;
    lc_func **v = malloc(c->nfn * sizeof *v);
    char *dup = calloc(c->nfn, 1);
    if (!v || !dup) {
        free(v);
        free(dup);
        return EK_ERR_NOMEM;
    }
    for (size_t i = 0; i < c->nfn; i++)
        v[i] = &c->fn[i];
    sort_n(v, c->nfn, sizeof *v, cmp_fnptr);
    size_t need = 0;
    for (size_t i = 0; i + 1 < c->nfn; i++)
        if (!strcmp(v[i]->name, v[i + 1]->name)) dup[i] = dup[i + 1] = 1;
    for (size_t i = 0; i < c->nfn; i++)
        if (dup[i]) need += strlen(v[i]->name) + 18;
    int rc = 0;
    if (need && !(c->dupnames = malloc(need))) rc = EK_ERR_NOMEM;
    char *o = c->dupnames;
    for (size_t i = 0; i < c->nfn && !rc; i++) {
        if (!dup[i]) continue;
        size_t room = strlen(v[i]->name) + 18;
        snprintf(o, room, "%s@%llx", v[i]->name, (unsigned long long)v[i]->lo);
        v[i]->name = o;
        o += strlen(o) + 1;
    }
    free(v);
    free(dup);
    return rc;
}

/* ---- DWARF line tables ---------------------------------------------------------------- */

static int cmp_span(const void *a, const void *b)
{
    const lc_span *x = a, *y = b;
    if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
    return x->hi < y->hi ? 1 : x->hi > y->hi ? -1 : 0;
}

static int load_lines(lc_ctx *c, Elf *e)
{
    Dwarf *dw = dwarf_begin_elf(e, DWARF_C_READ, NULL);
    if (!dw) return 0;
    int rc = 0;
    Dwarf_CU *cu = NULL;
    Dwarf_Die cudie;
    uint8_t utype;
    while (!rc && dwarf_get_units(dw, cu, &cu, NULL, &utype, &cudie, NULL) == 0) {
        if (utype != DW_UT_compile && utype != DW_UT_partial && utype != DW_UT_skeleton) continue;
        Dwarf_Lines *lines;
        size_t n;
        if (dwarf_getsrclines(&cudie, &lines, &n) != 0) continue;
        const char *last_name = NULL;
        uint32_t last_id = 0;
        for (size_t i = 0; i + 1 < n && !rc; i++) {
            Dwarf_Line *l = dwarf_onesrcline(lines, i), *nx = dwarf_onesrcline(lines, i + 1);
            Dwarf_Addr a, b;
            int lineno = 0;
            bool end = false;
            if (!l || !nx || dwarf_lineaddr(l, &a) || dwarf_lineaddr(nx, &b) ||
                dwarf_lineno(l, &lineno) || dwarf_lineendsequence(l, &end))
                continue;
            if (end || lineno <= 0 || b <= a) continue;
            const char *name = dwarf_linesrc(l, NULL, NULL);
            if (!name) continue;
            uint32_t id = last_id;
            if (name != last_name) {
                rc = file_id(c, name, &id);
                last_name = name;
                last_id = id;
            }
            if (!rc && grow((void **)&c->span, &c->capspan, c->nspan + 1, sizeof *c->span))
                rc = EK_ERR_NOMEM;
            if (!rc) c->span[c->nspan++] = (lc_span){a, b, id, (uint32_t)lineno};
        }
    }
    dwarf_end(dw);
    if (rc) return rc;
    /* where line tables overlap (code two units claim), the first span holds */
    sort_n(c->span, c->nspan, sizeof *c->span, cmp_span);
    size_t k = 0;
    for (size_t i = 0; i < c->nspan; i++) {
        lc_span s = c->span[i];
        if (k && s.lo < c->span[k - 1].hi) s.lo = c->span[k - 1].hi;
        if (s.lo < s.hi) c->span[k++] = s;
    }
    c->nspan = k;
    return 0;
}

static const lc_span *span_at(const lc_ctx *c, uint64_t a)
{
    size_t lo = 0, hi = c->nspan;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (c->span[m].lo <= a)
            lo = m + 1;
        else
            hi = m;
    }
    if (!lo || a >= c->span[lo - 1].hi) return NULL;
    return &c->span[lo - 1];
}

/* ---- counts ---------------------------------------------------------------------------- */

static int cmp_ev(const void *a, const void *b)
{
    const lc_ev *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* coverage segments from the ranges: +count at begin, -count after end */
static int load_counts(lc_ctx *c, const ek_profile *p, size_t bin)
{
    ek_profile_count *r = NULL, *b = NULL;
    size_t nr = 0, nb = 0;
    int rc = ek_profile_counts(p, bin, EK_PROFILE_RANGES, &r, &nr);
    if (!rc) rc = ek_profile_counts(p, bin, EK_PROFILE_BRANCHES, &b, &nb);
    lc_ev *ev = NULL;
    if (!rc && nr) {
        ev = malloc(2 * nr * sizeof *ev);
        c->seg = malloc((2 * nr + 1) * sizeof *c->seg);
        if (!ev || !c->seg) rc = EK_ERR_NOMEM;
    }
    if (!rc && nr) {
        size_t ne = 0;
        for (size_t i = 0; i < nr; i++) {
            if (r[i].b < r[i].a) continue;
            ev[ne++] = (lc_ev){r[i].a, r[i].count, 1};
            if (r[i].b != UINT64_MAX) ev[ne++] = (lc_ev){r[i].b + 1, r[i].count, 0};
        }
        sort_n(ev, ne, sizeof *ev, cmp_ev);
        /* the sum of the covering counts, saturated at UINT64_MAX for output only */
        unsigned __int128 cur = 0;
        for (size_t i = 0; i < ne;) {
            uint64_t a = ev[i].addr;
            for (; i < ne && ev[i].addr == a; i++)
                if (ev[i].add)
                    cur += ev[i].count;
                else
                    cur -= ev[i].count;
            c->seg[c->nseg++] = (lc_seg){a, cur > UINT64_MAX ? UINT64_MAX : (uint64_t)cur};
        }
    }
    if (!rc && nb) {
        c->tk = malloc(nb * sizeof *c->tk);
        if (!c->tk) rc = EK_ERR_NOMEM;
        for (size_t i = 0; !rc && i < nb; i++) {
            if (b[i].a == EK_PROFILE_EXTERNAL) continue;
            if (c->ntk && c->tk[c->ntk - 1].from == b[i].a)
                c->tk[c->ntk - 1].count = prof_sat_add(c->tk[c->ntk - 1].count, b[i].count);
            else
                c->tk[c->ntk++] = (lc_taken){b[i].a, b[i].count};
        }
    }
    free(ev);
    free(r);
    free(b);
    return rc;
}

static uint64_t cov_at(const lc_ctx *c, uint64_t a)
{
    size_t lo = 0, hi = c->nseg;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (c->seg[m].lo <= a)
            lo = m + 1;
        else
            hi = m;
    }
    return lo ? c->seg[lo - 1].cov : 0;
}

static uint64_t taken_at(const lc_ctx *c, uint64_t a)
{
    size_t lo = 0, hi = c->ntk;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (c->tk[m].from < a)
            lo = m + 1;
        else
            hi = m;
    }
    return lo < c->ntk && c->tk[lo].from == a ? c->tk[lo].count : 0;
}

/* the function holding a (index), or nfn */
static size_t func_at(const lc_ctx *c, uint64_t a)
{
    size_t lo = 0, hi = c->nfn;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (c->fn[m].lo <= a)
            lo = m + 1;
        else
            hi = m;
    }
    return lo && a < c->fn[lo - 1].hi ? lo - 1 : c->nfn;
}

/* the mapping symbol in force at a: its kind, or 0 */
static char map_at(const lc_ctx *c, uint64_t a, uint64_t *next)
{
    size_t lo = 0, hi = c->nmap;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (c->map[m].addr <= a)
            lo = m + 1;
        else
            hi = m;
    }
    *next = lo < c->nmap ? c->map[lo].addr : UINT64_MAX;
    return lo ? c->map[lo - 1].kind : 0;
}

/* ---- walking the code ------------------------------------------------------------------- */

typedef struct lc_iv {
    uint64_t lo, hi;
} lc_iv;

static int cmp_iv(const void *a, const void *b)
{
    const lc_iv *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int add_insn(lc_ctx *c, uint64_t a, const ek_insn *in)
{
    uint64_t n = cov_at(c, a);
    const lc_span *s = span_at(c, a);
    if (s) {
        if (grow((void **)&c->lr, &c->caplr, c->nlr + 1, sizeof *c->lr)) return EK_ERR_NOMEM;
        c->lr[c->nlr++] = (lc_linerec){s->file, s->line, n};
    }
    if ((in->flags & (EK_IF_BRANCH | EK_IF_COND | EK_IF_INDIRECT)) == (EK_IF_BRANCH | EK_IF_COND) &&
        in->cond != EK_COND_AL) {
        if (grow((void **)&c->br, &c->capbr, c->nbr + 1, sizeof *c->br)) return EK_ERR_NOMEM;
        c->br[c->nbr++] =
            (lc_branch){a, s ? s->file : UINT32_MAX, s ? s->line : 0, n, taken_at(c, a)};
    }
    return 0;
}

static int walk(lc_ctx *c, uint16_t machine)
{
    size_t niv = c->nfn + c->nspan;
    lc_iv *iv = malloc((niv ? niv : 1) * sizeof *iv);
    if (!iv) return EK_ERR_NOMEM;
    for (size_t i = 0; i < c->nfn; i++)
        iv[i] = (lc_iv){c->fn[i].lo, c->fn[i].hi};
    for (size_t i = 0; i < c->nspan; i++)
        iv[c->nfn + i] = (lc_iv){c->span[i].lo, c->span[i].hi};
    sort_n(iv, niv, sizeof *iv, cmp_iv);
    ek_isa_cfg cfg;
    ek_isa_cfg_init(&cfg, EK_ARCH_UNKNOWN, EK_PROFILE_A, 0);
    uint64_t done = 0; /* everything below was walked */
    int rc = 0;
    for (size_t i = 0; i < niv && !rc; i++) {
        uint64_t lo = iv[i].lo > done ? iv[i].lo : done, hi = iv[i].hi;
        if (hi <= lo) continue;
        done = hi;
        for (size_t k = 0; k < c->ncode && !rc; k++) {
            const lc_code *cd = &c->code[k];
            uint64_t a = lo > cd->lo ? lo : cd->lo, end = hi < cd->hi ? hi : cd->hi;
            ek_it_state it = {0, 0};
            char last = -1;
            while (a < end && !rc) {
                uint64_t next;
                char kind = map_at(c, a, &next);
                if (kind == 'd') { /* data in code */
                    a = next;
                    continue;
                }
                ek_isa isa = EK_ISA_A64;
                if (machine == EM_ARM) {
                    if (kind == 't' || kind == 'a')
                        isa = kind == 't' ? EK_ISA_T32 : EK_ISA_A32;
                    else {
                        size_t f = func_at(c, a);
                        isa = f < c->nfn && c->fn[f].thumb ? EK_ISA_T32 : EK_ISA_A32;
                    }
                    if (kind != last) it = (ek_it_state){0, 0};
                    last = kind;
                } else if (machine != EM_AARCH64) {
                    break;
                }
                unsigned step = isa == EK_ISA_T32 ? 2 : 4;
                if (a % step) {
                    a += step - a % step;
                    continue;
                }
                size_t off = (size_t)(a - cd->lo), left = (size_t)(cd->hi - a);
                uint32_t w = 0;
                for (size_t j = 0; j < 4 && j < left; j++)
                    w |= (uint32_t)cd->p[off + j] << (8 * j);
                ek_insn in;
                if (isa == EK_ISA_A64 && ek_isa_a64_is_plain(w)) {
                    memset(&in, 0, sizeof in);
                    in.size = 4;
                } else {
                    ek_isa_classify(w, isa, a, &cfg, &in);
                    if (isa == EK_ISA_T32) ek_isa_it_step(&it, &in, &cfg);
                }
                if (a + in.size > end) break;
                rc = add_insn(c, a, &in);
                a += in.size;
            }
        }
    }
    free(iv);
    return rc;
}

/* ---- output --------------------------------------------------------------------------- */

static int cmp_lr(const void *a, const void *b)
{
    const lc_linerec *x = a, *y = b;
    if (x->file != y->file) return x->file < y->file ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

static int cmp_br(const void *a, const void *b)
{
    const lc_branch *x = a, *y = b;
    if (x->file != y->file) return x->file < y->file ? -1 : 1;
    if (x->line != y->line) return x->line < y->line ? -1 : 1;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

typedef struct lc_fnrec {
    uint32_t file, line; /* line 0: no source line (the binary's own record) */
    const char *name;
    uint64_t count;
} lc_fnrec;

static int cmp_fnrec(const void *a, const void *b)
{
    const lc_fnrec *x = a, *y = b;
    if (x->file != y->file) return x->file < y->file ? -1 : 1;
    if (x->line != y->line) return x->line < y->line ? -1 : 1;
    return strcmp(x->name, y->name);
}

typedef struct lc_ford {
    const char *name;
    uint32_t id;
} lc_ford;

static int cmp_ford(const void *a, const void *b)
{
    return strcmp(((const lc_ford *)a)->name, ((const lc_ford *)b)->name);
}

/* Text in a record's field, as lcov reads it back: a line ends the record (so "\n" and "\r" are
 * written %0A and %0D), and in a name (FN, FNDA: name != 0) a ',' ends the name for lcov 1.16
 * (^FN:(\d+),([^,]+)): Go's generic functions have commas, so ',' is %2C there, and '%' is
 * %25, which keeps distinct names distinct. */
static void put_field(ek_sbuf *out, const char *s, int name)
{
    for (; *s; s++) {
        const char c = *s;
        if (c == '\n' || c == '\r' || (name && (c == ',' || c == '%')))
            ek_sbuf_printf(out, "%%%02X", (unsigned)(unsigned char)c);
        else
            ek_sbuf_putc(out, c);
    }
}

static void put_brda(ek_sbuf *out, uint32_t line, unsigned block, const lc_branch *b,
                     ek_lcov_stats *st)
{
    if (!b->executed && !b->taken) {
        ek_sbuf_printf(out, "BRDA:%u,%u,0,-\nBRDA:%u,%u,1,-\n", line, block, line, block);
    } else {
        uint64_t nt = b->executed > b->taken ? b->executed - b->taken : 0;
        ek_sbuf_printf(out, "BRDA:%u,%u,0,%llu\nBRDA:%u,%u,1,%llu\n", line, block,
                       (unsigned long long)b->taken, line, block, (unsigned long long)nt);
        st->branches_hit += (b->taken > 0) + (nt > 0);
    }
    st->branches += 2;
}

/* the first index of each file id's records in v (sorted by file), into start[0..nfiles] */
#define FILE_STARTS(start, v, n, nfiles)                                                           \
    do {                                                                                           \
        size_t i_ = 0;                                                                             \
        for (uint32_t f_ = 0; f_ <= (nfiles); f_++) {                                              \
            while (i_ < (n) && (v)[i_].file < f_)                                                  \
                i_++;                                                                              \
            (start)[f_] = i_;                                                                      \
        }                                                                                          \
    } while (0)

static int write_records(lc_ctx *c, const char *binary_name, ek_sbuf *out, ek_lcov_stats *st)
{
    /* lines: the largest count of their instructions */
    sort_n(c->lr, c->nlr, sizeof *c->lr, cmp_lr);
    size_t k = 0;
    for (size_t i = 0; i < c->nlr; i++) {
        if (k && c->lr[k - 1].file == c->lr[i].file && c->lr[k - 1].line == c->lr[i].line) {
            if (c->lr[i].count > c->lr[k - 1].count) c->lr[k - 1].count = c->lr[i].count;
        } else {
            c->lr[k++] = c->lr[i];
        }
    }
    c->nlr = k;
    /* functions: by the line of their entry; those without one in the binary's record, one
     * pseudo-line each (the function's number in address order, from 1) */
    size_t nf = c->nfiles;
    lc_fnrec *fr = malloc((c->nfn ? c->nfn : 1) * sizeof *fr);
    lc_ford *ford = malloc((nf + 1) * sizeof *ford);
    uint32_t *pseudo = calloc(c->nfn ? c->nfn : 1, sizeof *pseudo);
    size_t *fs = malloc(3 * (nf + 1) * sizeof *fs), *bs = fs + nf + 1, *ls = bs + nf + 1;
    int rc = 0;
    if (!fr || !ford || !pseudo || !fs) {
        rc = EK_ERR_NOMEM;
        goto done;
    }
    uint32_t npseudo = 0;
    for (size_t i = 0; i < c->nfn; i++) {
        const lc_span *s = span_at(c, c->fn[i].lo);
        if (!s) pseudo[i] = ++npseudo;
        fr[i] = (lc_fnrec){s ? s->file : UINT32_MAX, s ? s->line : pseudo[i], c->fn[i].name,
                           cov_at(c, c->fn[i].lo)};
    }
    sort_n(fr, c->nfn, sizeof *fr, cmp_fnrec);
    sort_n(c->br, c->nbr, sizeof *c->br, cmp_br);
    FILE_STARTS(fs, fr, c->nfn, nf);
    FILE_STARTS(bs, c->br, c->nbr, nf);
    FILE_STARTS(ls, c->lr, c->nlr, nf);
    for (uint32_t i = 0; i < nf; i++)
        ford[i] = (lc_ford){c->files[i], i};
    sort_n(ford, nf, sizeof *ford, cmp_ford);
    for (size_t o = 0; o < nf; o++) {
        uint32_t f = ford[o].id;
        size_t fa = fs[f], fb = fs[f + 1], ba = bs[f], bb = bs[f + 1], la = ls[f], lb = ls[f + 1];
        if (fa == fb && la == lb) continue;
        ek_sbuf_puts(out, "TN:\nSF:");
        put_field(out, c->files[f], 0);
        ek_sbuf_putc(out, '\n');
        uint64_t fnh = 0, brh0 = st->branches_hit, brf0 = st->branches, lh = 0;
        for (size_t i = fa; i < fb; i++) {
            ek_sbuf_printf(out, "FN:%u,", fr[i].line);
            put_field(out, fr[i].name, 1);
            ek_sbuf_putc(out, '\n');
        }
        for (size_t i = fa; i < fb; i++) {
            ek_sbuf_printf(out, "FNDA:%llu,", (unsigned long long)fr[i].count);
            put_field(out, fr[i].name, 1);
            ek_sbuf_putc(out, '\n');
            fnh += fr[i].count > 0;
        }
        ek_sbuf_printf(out, "FNF:%zu\nFNH:%llu\n", fb - fa, (unsigned long long)fnh);
        unsigned block = 0;
        for (size_t i = ba; i < bb; i++) {
            block = i > ba && c->br[i - 1].line == c->br[i].line ? block + 1 : 0;
            put_brda(out, c->br[i].line, block, &c->br[i], st);
        }
        ek_sbuf_printf(out, "BRF:%llu\nBRH:%llu\n", (unsigned long long)(st->branches - brf0),
                       (unsigned long long)(st->branches_hit - brh0));
        for (size_t i = la; i < lb; i++) {
            ek_sbuf_printf(out, "DA:%u,%llu\n", c->lr[i].line, (unsigned long long)c->lr[i].count);
            lh += c->lr[i].count > 0;
        }
        ek_sbuf_printf(out, "LF:%zu\nLH:%llu\nend_of_record\n", lb - la, (unsigned long long)lh);
        st->files++;
        st->functions += fb - fa;
        st->functions_hit += fnh;
        st->lines += lb - la;
        st->lines_hit += lh;
    }
    if (npseudo) {
        /* the binary's record: functions without a source line, in address order */
        ek_sbuf_puts(out, "TN:\nSF:");
        put_field(out, binary_name, 0);
        ek_sbuf_putc(out, '\n');
        uint64_t fnh = 0, brh0 = st->branches_hit, brf0 = st->branches, lh = 0;
        for (size_t i = 0; i < c->nfn; i++)
            if (pseudo[i]) {
                ek_sbuf_printf(out, "FN:%u,", pseudo[i]);
                put_field(out, c->fn[i].name, 1);
                ek_sbuf_putc(out, '\n');
            }
        for (size_t i = 0; i < c->nfn; i++)
            if (pseudo[i]) {
                uint64_t n = cov_at(c, c->fn[i].lo);
                ek_sbuf_printf(out, "FNDA:%llu,", (unsigned long long)n);
                put_field(out, c->fn[i].name, 1);
                ek_sbuf_putc(out, '\n');
                fnh += n > 0;
            }
        ek_sbuf_printf(out, "FNF:%u\nFNH:%llu\n", npseudo, (unsigned long long)fnh);
        /* branches without a line (sorted last, by address) in such a function */
        uint32_t last_fn = 0;
        unsigned block = 0;
        for (size_t i = bs[nf]; i < c->nbr; i++) {
            size_t f = func_at(c, c->br[i].addr);
            if (f == c->nfn || !pseudo[f]) continue;
            block = last_fn == pseudo[f] ? block + 1 : 0;
            last_fn = pseudo[f];
            put_brda(out, pseudo[f], block, &c->br[i], st);
        }
        ek_sbuf_printf(out, "BRF:%llu\nBRH:%llu\n", (unsigned long long)(st->branches - brf0),
                       (unsigned long long)(st->branches_hit - brh0));
        for (size_t i = 0; i < c->nfn; i++)
            if (pseudo[i]) {
                uint64_t n = cov_at(c, c->fn[i].lo);
                ek_sbuf_printf(out, "DA:%u,%llu\n", pseudo[i], (unsigned long long)n);
                lh += n > 0;
            }
        ek_sbuf_printf(out, "LF:%u\nLH:%llu\nend_of_record\n", npseudo, (unsigned long long)lh);
        st->files++;
        st->functions += npseudo;
        st->functions_hit += fnh;
        st->lines += npseudo;
        st->lines_hit += lh;
    }
    if (out->oom) rc = EK_ERR_NOMEM;
done:
    free(fr);
    free(ford);
    free(pseudo);
    free(fs);
    return rc;
}

int ek_profile_write_lcov(const ek_profile *p, size_t bin, const char *elf, const char *code_elf,
                          ek_sbuf *out, ek_lcov_stats *st)
{
    ek_lcov_stats dummy;
    if (!st) st = &dummy;
    memset(st, 0, sizeof *st);
    ek_profile_binary id;
    if (!p || !elf || !out || ek_profile_binary_get(p, bin, &id)) return EK_ERR_ARG;
    lc_file ef, cf = {-1, NULL};
    lc_ctx c;
    memset(&c, 0, sizeof c);
    int rc = lc_open(elf, &ef);
    if (!rc && code_elf && strcmp(code_elf, elf)) rc = lc_open(code_elf, &cf);
    GElf_Ehdr eh;
    if (!rc && !gelf_getehdr(ef.e, &eh)) rc = EK_ERR_FORMAT;
    if (!rc) {
        c.arm32 = eh.e_machine == EM_ARM;
        rc = load_code(&c, cf.e ? cf.e : ef.e);
    }
    if (!rc) rc = load_symbols(&c, ef.e);
    if (!rc) rc = add_fde_functions(&c, cf.e ? cf.e : ef.e, cf.e ? ef.e : NULL);
    if (!rc) rc = unique_names(&c);
    if (!rc) rc = load_lines(&c, ef.e);
    if (!rc) {
        st->has_lines = c.nspan > 0;
        rc = load_counts(&c, p, bin);
    }
    if (!rc) rc = walk(&c, eh.e_machine);
    if (!rc) rc = write_records(&c, id.path[0] ? id.path : elf, out, st);
    for (size_t i = 0; i < c.nfiles; i++)
        free(c.files[i]);
    free(c.files);
    free(c.fhash);
    free(c.code);
    free(c.fn);
    free(c.fdenames);
    free(c.dupnames);
    free(c.map);
    free(c.span);
    free(c.seg);
    free(c.tk);
    free(c.lr);
    free(c.br);
    lc_close(&cf);
    lc_close(&ef);
    return rc;
}

int ek_profile_write_lcov_for_elf(const ek_profile *p, const uint8_t *elf_id, size_t elf_id_len,
                                  const char *elf, const char *code_elf, unsigned flags,
                                  ek_sbuf *out, ek_lcov_stats *st, size_t *nbins)
{
    if (nbins) *nbins = 0;
    if (st) memset(st, 0, sizeof *st);
    if (!p || !elf || !out) return EK_ERR_ARG;
    size_t *hit = NULL, nhit = 0;
    int rc = ek_profile_binaries_for_elf(p, elf_id, elf_id_len, elf, flags, &hit, &nhit);
    if (!rc && nhit == 1) rc = ek_profile_write_lcov(p, hit[0], elf, code_elf, out, st);
    if (!rc && nhit > 1) {
        /* one file under several paths: its counts added up in a profile of its own */
        ek_profile *sum = NULL;
        size_t sb = 0;
        rc = ek_profile_sum_binaries(p, hit, nhit, &sum, &sb);
        if (!rc) rc = ek_profile_write_lcov(sum, sb, elf, code_elf, out, st);
        ek_profile_free(sum);
    }
    if (!rc && nbins) *nbins = nhit;
    free(hit);
    return rc;
}
