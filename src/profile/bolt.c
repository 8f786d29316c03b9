/* BOLT's fdata (what perf2bolt writes from branch stacks) from range and branch counts.
 *
 * perf2bolt (LLVM 16, DataAggregator) turns each taken branch into a line
 *   <1|0> <from function|[unknown]> <hex offset> <1|0> <to function|[unknown]> <hex offset>
 *   <mispredictions> <count>
 * and each trace (the run from one taken branch's target to the next taken branch) into one
 * such line per fall-through from a basic block to the next inside it, from the block's last
 * instruction to the next block's first. Functions carry BOLT's names (ek_bolt_map); an end in
 * no function is "0 [unknown] 0": perf2bolt-16 reading perf.data sets every branch address
 * outside its functions to 0 (seen on perf_etm.data: the b at 0x1004, before the first FDE,
 * is written "0 [unknown] 0"); only its pre-aggregated input (-pa) keeps the address. Names
 * with a space or a backslash have it escaped with a backslash (BOLT's getEscapedName).
 * perf2bolt writes the lines in hash order; this writer sorts them, which BOLT's reader does
 * not mind.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/vec.h"
#include "profile/profile_int.h"

typedef struct bm_sym {
    uint64_t addr, size;
    char *name;
    unsigned flags;
    size_t seq;
} bm_sym;

typedef struct bm_func {
    uint64_t start, end; /* [start, end) */
    const char *name;    /* BOLT's name (owned by names[]) */
    int no_ft;           /* no fall-through lines (BOLT has no CFG for it) */
} bm_func;

struct ek_bolt_map {
    EK_VEC(bm_sym) syms;
    EK_VEC(uint64_t) blocks;
    EK_VEC(uint64_t) cond; /* conditional branches */
    EK_VEC(uint64_t) noft; /* addresses in functions without fall-throughs */
    /* built by finalize(), dropped by any change */
    int final;
    bm_func *funcs;
    size_t nfuncs;
    char **names;
    size_t nnames;
};

int ek_bolt_map_new(ek_bolt_map **out)
{
    if (!out) return EK_ERR_ARG;
    *out = calloc(1, sizeof **out);
    return *out ? EK_OK : EK_ERR_NOMEM;
}

static void unfinalize(ek_bolt_map *m)
{
    for (size_t i = 0; i < m->nnames; i++)
        free(m->names[i]);
    free(m->names);
    free(m->funcs);
    m->names = NULL;
    m->funcs = NULL;
    m->nnames = m->nfuncs = 0;
    m->final = 0;
}

void ek_bolt_map_free(ek_bolt_map *m)
{
    if (!m) return;
    unfinalize(m);
    for (size_t i = 0; i < m->syms.n; i++)
        free(m->syms.v[i].name);
    ek_vec_free(&m->syms);
    ek_vec_free(&m->blocks);
    ek_vec_free(&m->cond);
    ek_vec_free(&m->noft);
    free(m);
}

int ek_bolt_map_add_symbol(ek_bolt_map *m, uint64_t addr, uint64_t size, const char *name,
                           unsigned flags)
{
    if (!m || !name || !name[0] || (flags & ~(EK_BOLT_SYM_FUNCTION | EK_BOLT_SYM_LOCAL)))
        return EK_ERR_ARG;
    unfinalize(m);
    bm_sym s = {addr, size, strdup(name), flags, m->syms.n};
    if (!s.name) return EK_ERR_NOMEM;
    if (ek_vec_push(&m->syms, s)) {
        free(s.name);
        return EK_ERR_NOMEM;
    }
    return EK_OK;
}

int ek_bolt_map_add_block(ek_bolt_map *m, uint64_t addr)
{
    if (!m) return EK_ERR_ARG;
    unfinalize(m);
    return ek_vec_push(&m->blocks, addr) ? EK_ERR_NOMEM : EK_OK;
}

int ek_bolt_map_add_conditional(ek_bolt_map *m, uint64_t addr)
{
    if (!m) return EK_ERR_ARG;
    unfinalize(m);
    return ek_vec_push(&m->cond, addr) ? EK_ERR_NOMEM : EK_OK;
}

int ek_bolt_map_add_no_fallthrough(ek_bolt_map *m, uint64_t addr)
{
    if (!m) return EK_ERR_ARG;
    unfinalize(m);
    return ek_vec_push(&m->noft, addr) ? EK_ERR_NOMEM : EK_OK;
}

/* BOLT's order of symbols (discoverFileObjects' CompareSymbols, stable): by address, functions
 * before other symbols at one address, then as added. */
static int sym_order(const void *x, const void *y)
{
    const bm_sym *a = *(const bm_sym *const *)x, *b = *(const bm_sym *const *)y;
    if (a->addr != b->addr) return a->addr < b->addr ? -1 : 1;
    int fa = !!(a->flags & EK_BOLT_SYM_FUNCTION), fb = !!(b->flags & EK_BOLT_SYM_FUNCTION);
    if (fa != fb) return fa ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* locals of one name together, in BOLT's order */
static int local_order(const void *x, const void *y)
{
    const bm_sym *a = *(const bm_sym *const *)x, *b = *(const bm_sym *const *)y;
    int c = strcmp(a->name, b->name);
    if (c) return c;
    return sym_order(x, y);
}

static int u64_cmp(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

static size_t sort_unique(uint64_t *v, size_t n)
{
    if (!n) return 0;
    qsort(v, n, sizeof *v, u64_cmp);
    size_t k = 1;
    for (size_t i = 1; i < n; i++)
        if (v[i] != v[k - 1]) v[k++] = v[i];
    return k;
}

static const bm_func *find_func(const ek_bolt_map *m, uint64_t addr)
{
    size_t lo = 0, hi = m->nfuncs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->funcs[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo || addr == EK_PROFILE_EXTERNAL) return NULL;
    const bm_func *f = &m->funcs[lo - 1];
    return addr < f->end ? f : NULL;
}

static int finalize(ek_bolt_map *m)
{
    if (m->final) return EK_OK;
    size_t n = m->syms.n;
    bm_sym **ord = malloc((n ? n : 1) * sizeof *ord);
    char **bname = calloc(n ? n : 1, sizeof *bname); /* BOLT name per seq */
    int rc = EK_OK;
    if (!ord || !bname) {
        rc = EK_ERR_NOMEM;
        goto out;
    }
    /* locals: "name/N", N counting that name's locals in BOLT's order */
    for (size_t i = 0; i < n; i++)
        ord[i] = &m->syms.v[i];
    qsort(ord, n, sizeof *ord, local_order);
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        bm_sym *s = ord[i];
        if (!(s->flags & EK_BOLT_SYM_LOCAL)) {
            bname[s->seq] = strdup(s->name);
        } else {
            if (i == 0 || strcmp(ord[i - 1]->name, s->name)) run = 0;
            /* only locals count (globals of that name are unique anyway) */
            run++;
            size_t len = strlen(s->name) + 24;
            bname[s->seq] = malloc(len);
            if (bname[s->seq]) snprintf(bname[s->seq], len, "%s/%zu", s->name, run);
        }
        if (!bname[s->seq]) {
            rc = EK_ERR_NOMEM;
            goto out;
        }
    }
    /* functions: the first function symbol at an address names it (BOLT: getOneName) */
    qsort(ord, n, sizeof *ord, sym_order);
    bm_func *f = malloc((n ? n : 1) * sizeof *f);
    if (!f) {
        rc = EK_ERR_NOMEM;
        goto out;
    }
    size_t nf = 0;
    for (size_t i = 0; i < n; i++) {
        bm_sym *s = ord[i];
        if (!(s->flags & EK_BOLT_SYM_FUNCTION)) continue;
        if (nf && f[nf - 1].start == s->addr) {
            if (s->addr + s->size > f[nf - 1].end) f[nf - 1].end = s->addr + s->size;
            continue;
        }
        f[nf].start = s->addr;
        f[nf].end = s->addr + s->size < s->addr ? UINT64_MAX : s->addr + s->size;
        f[nf].name = bname[s->seq];
        f[nf].no_ft = 0;
        nf++;
    }
    /* a function of size 0 ends where the next one starts; overlaps end at the next start */
    for (size_t i = 0; i < nf; i++) {
        uint64_t next = i + 1 < nf ? f[i + 1].start : UINT64_MAX;
        if (f[i].end == f[i].start || f[i].end > next)
            f[i].end = next == UINT64_MAX ? f[i].start + 1 : next;
    }
    m->funcs = f;
    m->nfuncs = nf;
    m->names = bname;
    m->nnames = n;
    bname = NULL;
    m->blocks.n = sort_unique(m->blocks.v, m->blocks.n);
    m->cond.n = sort_unique(m->cond.v, m->cond.n);
    /* mark the functions that get no fall-throughs */
    for (size_t i = 0; i < m->noft.n; i++) {
        bm_func *hit = (bm_func *)find_func(m, m->noft.v[i]);
        if (hit) hit->no_ft = 1;
    }
    m->final = 1;
out:
    if (bname) {
        for (size_t i = 0; i < n; i++)
            free(bname[i]);
        free(bname);
    }
    free(ord);
    return rc;
}

int ek_bolt_map_lookup(ek_bolt_map *m, uint64_t addr, const char **name, uint64_t *offset)
{
    if (!m) return EK_ERR_ARG;
    int rc = finalize(m);
    if (rc) return rc;
    const bm_func *f = find_func(m, addr);
    if (!f) return EK_ERR_NOT_FOUND;
    if (name) *name = f->name;
    if (offset) *offset = addr - f->start;
    return EK_OK;
}

/* ---- the writer -------------------------------------------------------------------------- */

static int in_sorted(const uint64_t *v, size_t n, uint64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && v[lo] == x;
}

/* index of the first element > x */
static size_t upper(const uint64_t *v, size_t n, uint64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

typedef struct bolt_line {
    const char *fname, *tname; /* NULL: [unknown] */
    uint64_t foff, toff, count;
} bolt_line;

static int line_cmp(const void *x, const void *y)
{
    const bolt_line *a = x, *b = y;
    int c;
    if (!a->fname != !b->fname) return a->fname ? 1 : -1;
    if (a->fname && (c = strcmp(a->fname, b->fname))) return c;
    if (a->foff != b->foff) return a->foff < b->foff ? -1 : 1;
    if (!a->tname != !b->tname) return a->tname ? 1 : -1;
    if (a->tname && (c = strcmp(a->tname, b->tname))) return c;
    if (a->toff != b->toff) return a->toff < b->toff ? -1 : 1;
    return a->count < b->count ? -1 : a->count > b->count;
}

static void put_loc(ek_sbuf *out, const char *name, uint64_t off)
{
    if (!name) {
        ek_sbuf_puts(out, "0 [unknown] ");
    } else {
        ek_sbuf_puts(out, "1 ");
        for (const char *s = name; *s; s++) {
            if (*s == ' ' || *s == '\\') ek_sbuf_putc(out, '\\');
            ek_sbuf_putc(out, *s);
        }
        ek_sbuf_putc(out, ' ');
    }
    ek_sbuf_hex(out, off, 0, 0);
}

typedef struct end_total {
    uint64_t addr, count;
} end_total;

static int end_cmp(const void *x, const void *y)
{
    return u64_cmp(&((const end_total *)x)->addr, &((const end_total *)y)->addr);
}

int ek_profile_write_bolt(const ek_profile *p, size_t bin, ek_bolt_map *m, ek_sbuf *out)
{
    if (!p || !m || !out || bin >= p->nbin) return EK_ERR_ARG;
    int rc = finalize(m);
    if (rc) return rc;
    ek_profile_count *br = NULL, *rg = NULL;
    size_t nbr = 0, nrg = 0;
    end_total *ends = NULL;
    bolt_line *lines = NULL;
    prof_table rec = {0};
    if ((rc = prof_table_sorted(&p->bin[bin]->t[EK_PROFILE_BRANCHES], &br, &nbr)) ||
        (rc = prof_table_sorted(&p->bin[bin]->t[EK_PROFILE_RANGES], &rg, &nrg)))
        goto out;

    const uint64_t *lead = m->blocks.v;
    size_t nlead = m->blocks.n;

    /* taken branches; an end in no function is 0 (perf2bolt's parseLBRSample), so such
     * branches to (or from) one place count together */
    for (size_t i = 0; i < nbr && !rc; i++) {
        uint64_t a = find_func(m, br[i].a) ? br[i].a : EK_PROFILE_EXTERNAL;
        uint64_t b = find_func(m, br[i].b) ? br[i].b : EK_PROFILE_EXTERNAL;
        if (a != EK_PROFILE_EXTERNAL || b != EK_PROFILE_EXTERNAL)
            rc = prof_table_add(&rec, a, b, br[i].count);
    }
    /* fall-throughs into the block starts a range covers */
    for (size_t i = 0; i < nrg && !rc; i++) {
        uint64_t b = rg[i].a, e = rg[i].b;
        const bm_func *f = find_func(m, b);
        if (!f || f->no_ft || e < b || find_func(m, e) != f) continue;
        for (size_t k = upper(lead, nlead, b); k < nlead && lead[k] <= e && !rc; k++)
            rc = prof_table_add(&rec, lead[k] - 4, lead[k], rg[i].count);
    }
    /* fall-throughs after the last instruction of ranges whose branch was not taken */
    ends = malloc((nrg ? nrg : 1) * sizeof *ends);
    if (!ends) {
        rc = EK_ERR_NOMEM;
        goto out;
    }
    for (size_t i = 0; i < nrg; i++)
        ends[i] = (end_total){rg[i].b, rg[i].count};
    qsort(ends, nrg, sizeof *ends, end_cmp);
    for (size_t i = 0, j = 0; i < nrg && !rc;) {
        uint64_t e = ends[i].addr, total = 0, taken = 0;
        for (; i < nrg && ends[i].addr == e; i++)
            total = prof_sat_add(total, ends[i].count);
        while (j < nbr && br[j].a < e)
            j++;
        for (; j < nbr && br[j].a == e; j++)
            taken = prof_sat_add(taken, br[j].count);
        const bm_func *f = find_func(m, e);
        if (total > taken && e <= UINT64_MAX - 4 && f && !f->no_ft && find_func(m, e + 4) == f &&
            in_sorted(m->cond.v, m->cond.n, e) && in_sorted(lead, nlead, e + 4))
            rc = prof_table_add(&rec, e, e + 4, total - taken);
    }
    if (rc) goto out;

    /* the lines, named and sorted */
    lines = malloc((rec.len ? rec.len : 1) * sizeof *lines);
    if (!lines) {
        rc = EK_ERR_NOMEM;
        goto out;
    }
    size_t nl = 0;
    for (size_t i = 0; i < rec.cap; i++) {
        const ek_profile_count *e = &rec.slot[i];
        if (!e->count) continue;
        bolt_line *ln = &lines[nl++];
        const bm_func *ff = find_func(m, e->a), *tf = find_func(m, e->b);
        ln->fname = ff ? ff->name : NULL;
        ln->foff = ff ? e->a - ff->start : 0;
        ln->tname = tf ? tf->name : NULL;
        ln->toff = tf ? e->b - tf->start : 0;
        ln->count = e->count;
    }
    qsort(lines, nl, sizeof *lines, line_cmp);
    for (size_t i = 0; i < nl; i++) {
        put_loc(out, lines[i].fname, lines[i].foff);
        ek_sbuf_putc(out, ' ');
        put_loc(out, lines[i].tname, lines[i].toff);
        ek_sbuf_puts(out, " 0 ");
        ek_sbuf_dec(out, lines[i].count);
        ek_sbuf_putc(out, '\n');
    }
    if (out->oom) rc = EK_ERR_NOMEM;
out:
    free(br);
    free(rg);
    free(ends);
    free(lines);
    prof_table_free(&rec);
    return rc;
}

int ek_profile_write_bolt_for_elf(const ek_profile *p, const uint8_t *elf_id, size_t elf_id_len,
                                  const char *elf_path, unsigned flags, ek_bolt_map *m,
                                  ek_sbuf *out, size_t *nbins)
{
    if (nbins) *nbins = 0;
    if (!p || !m || !out) return EK_ERR_ARG;
    size_t *hit = NULL, nhit = 0;
    int rc = ek_profile_binaries_for_elf(p, elf_id, elf_id_len, elf_path, flags, &hit, &nhit);
    if (!rc && nhit == 1) rc = ek_profile_write_bolt(p, hit[0], m, out);
    if (!rc && nhit > 1) {
        /* one file: its counts added up in a profile of its own */
        ek_profile *sum = NULL;
        size_t sb = 0;
        rc = ek_profile_sum_binaries(p, hit, nhit, &sum, &sb);
        if (!rc) rc = ek_profile_write_bolt(sum, sb, m, out);
        ek_profile_free(sum);
    }
    if (!rc && nbins) *nbins = nhit;
    free(hit);
    return rc;
}
