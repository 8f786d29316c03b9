/* Symbol tables with perf 6.1's insertion, fixup and lookup rules (see etmkit/symbols.h).
 *
 * perf keeps symbols in a red-black tree and looks addresses up by walking it, so where
 * symbols overlap the answer depends on the tree's shape. The tree here is a plain
 * red-black tree (insert and delete as in the textbook algorithm, which is what perf's
 * rbtree does, successor-based delete included) driven by the same sequence of insertions
 * and deletions; lookups then use runs flattened from it. */
#include <ctype.h>
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "core/mapfile.h"
#include "core/vec.h"
#include "etmkit/etmkit.h"
#include "etmkit/symbols.h"
#include "input/symtab_int.h"
#include "input/symtab_range.h"

typedef struct node {
    int32_t l, r, p;
    uint8_t red, dead;
} node;

typedef struct srun {
    uint64_t start, last;
    int32_t sym;
} srun;

struct ek_symtab {
    EK_VEC(ek_symbol) syms;
    EK_VEC(node) nodes;
    EK_VEC(uint8_t) bracket; /* kallsyms: the full name had a '[' (module symbol) */
    int32_t root;
    size_t live;
    int dirty;             /* order/runs must be rebuilt */
    EK_VEC(int32_t) order; /* live symbols in tree order */
    EK_VEC(srun) runs;
    size_t hit;
};

int ek_symtab_new(ek_symtab **out)
{
    *out = calloc(1, sizeof **out);
    if (!*out) return EK_ERR_NOMEM;
    (*out)->root = -1;
    return EK_OK;
}

void ek_symtab_free(ek_symtab *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->syms.n; i++) {
        free((char *)t->syms.v[i].name);
        free((char *)t->syms.v[i].module);
    }
    ek_vec_free(&t->syms);
    ek_vec_free(&t->nodes);
    ek_vec_free(&t->bracket);
    ek_vec_free(&t->order);
    ek_vec_free(&t->runs);
    free(t);
}

/* ---- red-black tree over t->nodes, keyed by syms[i].start (ties go right) ------------- */

#define N(i)   (t->nodes.v[(i)])
#define KEY(i) (t->syms.v[(i)].start)
#define RED(i) ((i) >= 0 && N(i).red)

static void set_child(ek_symtab *t, int32_t parent, int32_t old, int32_t neu)
{
    if (parent < 0)
        t->root = neu;
    else if (N(parent).l == old)
        N(parent).l = neu;
    else
        N(parent).r = neu;
}

static void rot_left(ek_symtab *t, int32_t x)
{
    int32_t y = N(x).r;
    N(x).r = N(y).l;
    if (N(y).l >= 0) N(N(y).l).p = x;
    N(y).p = N(x).p;
    set_child(t, N(x).p, x, y);
    N(y).l = x;
    N(x).p = y;
}

static void rot_right(ek_symtab *t, int32_t x)
{
    int32_t y = N(x).l;
    N(x).l = N(y).r;
    if (N(y).r >= 0) N(N(y).r).p = x;
    N(y).p = N(x).p;
    set_child(t, N(x).p, x, y);
    N(y).r = x;
    N(x).p = y;
}

static void rb_insert(ek_symtab *t, int32_t z)
{
    int32_t y = -1, x = t->root;
    while (x >= 0) {
        y = x;
        x = KEY(z) < KEY(x) ? N(x).l : N(x).r;
    }
    N(z).p = y;
    N(z).l = N(z).r = -1;
    N(z).red = 1;
    if (y < 0)
        t->root = z;
    else if (KEY(z) < KEY(y))
        N(y).l = z;
    else
        N(y).r = z;
    while (RED(N(z).p)) {
        int32_t p = N(z).p, g = N(p).p;
        if (p == N(g).l) {
            int32_t u = N(g).r;
            if (RED(u)) {
                N(p).red = 0;
                N(u).red = 0;
                N(g).red = 1;
                z = g;
                continue;
            }
            if (z == N(p).r) {
                z = p;
                rot_left(t, z);
                p = N(z).p;
            }
            N(p).red = 0;
            N(g).red = 1;
            rot_right(t, g);
        } else {
            int32_t u = N(g).l;
            if (RED(u)) {
                N(p).red = 0;
                N(u).red = 0;
                N(g).red = 1;
                z = g;
                continue;
            }
            if (z == N(p).l) {
                z = p;
                rot_right(t, z);
                p = N(z).p;
            }
            N(p).red = 0;
            N(g).red = 1;
            rot_left(t, g);
        }
    }
    N(t->root).red = 0;
}

static int32_t tree_min(const ek_symtab *t, int32_t x)
{
    while (x >= 0 && N(x).l >= 0)
        x = N(x).l;
    return x;
}

static int32_t tree_next(const ek_symtab *t, int32_t x)
{
    if (N(x).r >= 0) return tree_min(t, N(x).r);
    int32_t p = N(x).p;
    while (p >= 0 && x == N(p).r) {
        x = p;
        p = N(p).p;
    }
    return p;
}

static void transplant(ek_symtab *t, int32_t u, int32_t v)
{
    set_child(t, N(u).p, u, v);
    if (v >= 0) N(v).p = N(u).p;
}

static void rb_erase(ek_symtab *t, int32_t z)
{
    int32_t x, xp; /* x may be "nil" (-1): xp is its parent */
    int orig_red = N(z).red;
    if (N(z).l < 0) {
        x = N(z).r;
        xp = N(z).p;
        transplant(t, z, N(z).r);
    } else if (N(z).r < 0) {
        x = N(z).l;
        xp = N(z).p;
        transplant(t, z, N(z).l);
    } else {
        int32_t y = tree_min(t, N(z).r);
        orig_red = N(y).red;
        x = N(y).r;
        if (N(y).p == z) {
            xp = y;
        } else {
            xp = N(y).p;
            transplant(t, y, N(y).r);
            N(y).r = N(z).r;
            N(N(y).r).p = y;
        }
        transplant(t, z, y);
        N(y).l = N(z).l;
        N(N(y).l).p = y;
        N(y).red = N(z).red;
    }
    N(z).dead = 1;
    N(z).l = N(z).r = N(z).p = -1;
    if (orig_red) return;
    while (x != t->root && !RED(x)) {
        if (x == N(xp).l) {
            int32_t w = N(xp).r;
            if (RED(w)) {
                N(w).red = 0;
                N(xp).red = 1;
                rot_left(t, xp);
                w = N(xp).r;
            }
            if (!RED(N(w).l) && !RED(N(w).r)) {
                N(w).red = 1;
                x = xp;
                xp = N(x).p;
            } else {
                if (!RED(N(w).r)) {
                    N(N(w).l).red = 0;
                    N(w).red = 1;
                    rot_right(t, w);
                    w = N(xp).r;
                }
                N(w).red = N(xp).red;
                N(xp).red = 0;
                N(N(w).r).red = 0;
                rot_left(t, xp);
                x = t->root;
                break;
            }
        } else {
            int32_t w = N(xp).l;
            if (RED(w)) {
                N(w).red = 0;
                N(xp).red = 1;
                rot_right(t, xp);
                w = N(xp).l;
            }
            if (!RED(N(w).r) && !RED(N(w).l)) {
                N(w).red = 1;
                x = xp;
                xp = N(x).p;
            } else {
                if (!RED(N(w).l)) {
                    N(N(w).r).red = 0;
                    N(w).red = 1;
                    rot_left(t, w);
                    w = N(xp).l;
                }
                N(w).red = N(xp).red;
                N(xp).red = 0;
                N(N(w).l).red = 0;
                rot_right(t, xp);
                x = t->root;
                break;
            }
        }
    }
    if (x >= 0) N(x).red = 0;
}

/* ---- perf's operations ---------------------------------------------------------------- */

int ek_symtab_insert_full(ek_symtab *t, const ek_symbol *s, int bracket)
{
    if (t->syms.n >= INT32_MAX - 1) return EK_ERR_LIMIT;
    ek_symbol c = *s;
    c.name = strdup(s->name ? s->name : "");
    c.module = s->module ? strdup(s->module) : NULL;
    if (!c.name || (s->module && !c.module) || ek_vec_push(&t->syms, c)) {
        free((char *)c.name);
        free((char *)c.module);
        return EK_ERR_NOMEM;
    }
    node nd = {-1, -1, -1, 0, 0};
    uint8_t br = bracket ? 1 : 0;
    if (ek_vec_push(&t->nodes, nd) || ek_vec_push(&t->bracket, br)) {
        t->syms.n--;
        free((char *)c.name);
        free((char *)c.module);
        return EK_ERR_NOMEM;
    }
    rb_insert(t, (int32_t)(t->syms.n - 1));
    t->live++;
    t->dirty = 1;
    return EK_OK;
}

int ek_symtab_insert(ek_symtab *t, uint64_t start, uint64_t size, int binding, int type,
                     const char *name)
{
    ek_symbol s;
    memset(&s, 0, sizeof s);
    s.start = start;
    s.end = size ? start + size : start;
    s.value = start;
    s.size = size;
    s.name = name;
    s.binding = (uint8_t)binding;
    s.type = (uint8_t)type;
    s.origin = EK_SYMORIGIN_USER;
    return ek_symtab_insert_full(t, &s, 0);
}

static size_t leading_underscores(const char *s)
{
    size_t n = 0;
    while (s[n] == '_')
        n++;
    return n;
}

/* 1 when a should be kept over b (perf's choose_best_symbol returning SYMBOL_A). */
static int prefer_a(const ek_symbol *a, const ek_symbol *b)
{
    int64_t la = (int64_t)(a->end - a->start), lb = (int64_t)(b->end - b->start);
    if (lb == 0 && la > 0) return 1;
    if (la == 0 && lb > 0) return 0;
    int wa = a->binding == STB_WEAK, wb = b->binding == STB_WEAK;
    if (wb && !wa) return 1;
    if (wa && !wb) return 0;
    int ga = a->binding == STB_GLOBAL, gb = b->binding == STB_GLOBAL;
    if (ga && !gb) return 1;
    if (gb && !ga) return 0;
    size_t ua = leading_underscores(a->name), ub = leading_underscores(b->name);
    if (ub > ua) return 1;
    if (ua > ub) return 0;
    size_t na = strlen(a->name), nb = strlen(b->name);
    if (na > nb) return 1;
    if (na < nb) return 0;
    /* The generic arch__choose_best_symbol: avoid "SyS" syscall aliases. */
    if (strncmp(a->name, "SyS", 3) == 0 || strncmp(a->name, "compat_SyS", 10) == 0) return 0;
    return 1;
}

static uint64_t roundup4k(uint64_t v)
{
    return (v + 4095) & ~(uint64_t)4095;
}

void ek_symtab_fixup(ek_symtab *t, int is_kallsyms)
{
    if (!t || t->root < 0) return;
    /* fixup_end */
    int32_t curr = tree_min(t, t->root);
    for (int32_t nd = tree_next(t, curr); nd >= 0; nd = tree_next(t, nd)) {
        int32_t prev = curr;
        curr = nd;
        ek_symbol *p = &t->syms.v[prev], *c = &t->syms.v[curr];
        if (p->end == p->start) {
            if (is_kallsyms && (!t->bracket.v[prev] != !t->bracket.v[curr]))
                p->end = roundup4k(p->end + 4096);
            else
                p->end = c->start;
        }
    }
    ek_symbol *last = &t->syms.v[curr];
    if (last->end == last->start) last->end = roundup4k(last->start) + 4096;
    /* fixup_duplicate */
    int32_t nd = tree_min(t, t->root);
    while (nd >= 0) {
        curr = nd;
        for (;;) {
            nd = tree_next(t, curr);
            if (nd < 0) break;
            if (t->syms.v[curr].start != t->syms.v[nd].start) break;
            if (prefer_a(&t->syms.v[curr], &t->syms.v[nd])) {
                rb_erase(t, nd);
                t->live--;
                continue; /* "again": compare curr with its new successor */
            }
            nd = tree_next(t, curr);
            rb_erase(t, curr);
            t->live--;
            break;
        }
    }
    t->dirty = 1;
}

/* perf's symbols__find on the current tree. */
static int32_t tree_find(const ek_symtab *t, uint64_t ip)
{
    int32_t n = t->root;
    while (n >= 0) {
        const ek_symbol *s = &t->syms.v[n];
        if (ip < s->start)
            n = N(n).l;
        else if (ip > s->end || (ip == s->end && ip != s->start))
            n = N(n).r;
        else
            return n;
    }
    return -1;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int push_run(ek_symtab *t, uint64_t a, uint64_t b, int32_t s)
{
    if (s < 0 || b < a) return 0;
    if (t->runs.n && t->runs.v[t->runs.n - 1].sym == s && t->runs.v[t->runs.n - 1].last + 1 == a) {
        t->runs.v[t->runs.n - 1].last = b;
        return 0;
    }
    srun r = {a, b, s};
    return ek_vec_push(&t->runs, r);
}

/* Order list and lookup runs: the tree's answer is constant between critical points. */
static int rebuild(ek_symtab *t)
{
    if (!t->dirty) return 0;
    t->order.n = 0;
    t->runs.n = 0;
    t->hit = 0;
    if (ek_vec_reserve(&t->order, t->live)) return EK_ERR_NOMEM;
    for (int32_t n = tree_min(t, t->root); n >= 0; n = tree_next(t, n))
        t->order.v[t->order.n++] = n;
    size_t np = 0;
    uint64_t *pts = malloc((2 * t->order.n + 1) * sizeof *pts);
    if (!pts) return EK_ERR_NOMEM;
    for (size_t i = 0; i < t->order.n; i++) {
        pts[np++] = t->syms.v[t->order.v[i]].start;
        pts[np++] = t->syms.v[t->order.v[i]].end;
    }
    qsort(pts, np, sizeof *pts, cmp_u64);
    int rc = 0;
    for (size_t i = 0; i < np && !rc; i++) {
        if (i && pts[i] == pts[i - 1]) continue;
        uint64_t p = pts[i];
        size_t j = i + 1;
        while (j < np && pts[j] == p)
            j++;
        rc = push_run(t, p, p, tree_find(t, p));
        if (!rc && p != UINT64_MAX) {
            uint64_t last = j < np ? pts[j] - 1 : UINT64_MAX;
            if (last >= p + 1) rc = push_run(t, p + 1, last, tree_find(t, p + 1));
        }
    }
    free(pts);
    if (rc) return EK_ERR_NOMEM;
    t->dirty = 0;
    return 0;
}

const ek_symbol *ek_symtab_find(ek_symtab *t, uint64_t addr)
{
    if (!t || rebuild(t)) return NULL;
    if (t->hit < t->runs.n) {
        const srun *h = &t->runs.v[t->hit];
        if (addr >= h->start && addr <= h->last) return &t->syms.v[h->sym];
    }
    size_t lo = 0, hi = t->runs.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->runs.v[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || t->runs.v[lo - 1].last < addr) return NULL;
    t->hit = lo - 1;
    return &t->syms.v[t->runs.v[lo - 1].sym];
}

const ek_symbol *ek_symtab_find_range(ek_symtab *t, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
    *lo = *hi = 0;
    if (!t || rebuild(t)) return NULL;
    /* the runs cover every address with a symbol; between them there is none */
    size_t a = 0, b = t->runs.n;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (t->runs.v[mid].start <= addr)
            a = mid + 1;
        else
            b = mid;
    }
    if (a > 0 && t->runs.v[a - 1].last >= addr) {
        const srun *r = &t->runs.v[a - 1];
        *lo = r->start;
        *hi = r->last == UINT64_MAX ? UINT64_MAX : r->last + 1; /* (not the last address) */
        t->hit = a - 1;
        return &t->syms.v[r->sym];
    }
    *lo = a > 0 ? t->runs.v[a - 1].last + 1 : 0;
    *hi = a < t->runs.n ? t->runs.v[a].start : UINT64_MAX;
    return NULL;
}

size_t ek_symtab_count(ek_symtab *t)
{
    if (!t || rebuild(t)) return 0;
    return t->order.n;
}

const ek_symbol *ek_symtab_get(ek_symtab *t, size_t i)
{
    if (!t || rebuild(t) || i >= t->order.n) return NULL;
    return &t->syms.v[t->order.v[i]];
}

void ek_symtab_format(ek_sbuf *out, const ek_symbol *sym, uint64_t addr, int with_offset)
{
    if (!sym) {
        ek_sbuf_puts(out, "[unknown]");
        return;
    }
    ek_sbuf_puts(out, sym->name);
    if (with_offset) ek_sbuf_printf(out, "+0x%llx", (unsigned long long)(addr - sym->start));
}

/* ---- kallsyms ------------------------------------------------------------------------- */

#define KSYM_NAME_MAX 512 /* perf 6.1's KSYM_NAME_LEN */

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    c = tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int ek_symtab_parse_kallsyms(const char *text, size_t len, const char *fname, const ek_diag *diag,
                             ek_symtab **out)
{
    *out = NULL;
    ek_symtab *t;
    int rc = ek_symtab_new(&t);
    if (rc) return rc;
    size_t pos = 0;
    int64_t line = 0;
    char name[KSYM_NAME_MAX + 1];
    while (pos < len) {
        line++;
        size_t ls = pos;
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t le = nl ? (size_t)(nl - text) : len;
        pos = nl ? le + 1 : len;
        /* "<hex> <type> <name>[\t[module]]" */
        size_t i = ls;
        uint64_t addr = 0;
        int nd = 0;
        while (i < le && hexval((unsigned char)text[i]) >= 0) {
            addr = (addr << 4) | (uint64_t)hexval((unsigned char)text[i]);
            i++;
            nd++;
        }
        if (i == le && nd == 0 && le == ls) continue; /* empty line */
        if (nd == 0 || nd > 16 || i + 2 >= le || text[i] != ' ' || text[i + 2] != ' ') {
            ek_diag_emit(diag, EK_SEV_WARN, "kallsyms.malformed-line", EK_ERR_FORMAT, fname, line,
                         (int64_t)ls, -1, "not \"address type name\"; line skipped");
            continue;
        }
        char type = text[i + 1];
        size_t nb = i + 3, nl2 = le - nb;
        if (nl2 > KSYM_NAME_MAX) {
            ek_diag_emit(diag, EK_SEV_WARN, "kallsyms.malformed-line", EK_ERR_FORMAT, fname, line,
                         (int64_t)ls, -1, "symbol name longer than %d bytes truncated",
                         KSYM_NAME_MAX);
            nl2 = KSYM_NAME_MAX;
        }
        memcpy(name, text + nb, nl2);
        name[nl2] = 0;
        if (memchr(name, 0, nl2)) continue;
        int up = toupper((unsigned char)type);
        if (up != 'T' && up != 'W' && up != 'D' && up != 'B') continue;
        if (name[0] == '$') continue; /* Arm mapping symbols of modules */
        ek_symbol s;
        memset(&s, 0, sizeof s);
        s.start = s.end = s.value = addr;
        s.binding = type == 'W' ? STB_WEAK : isupper((unsigned char)type) ? STB_GLOBAL : STB_LOCAL;
        int lo = tolower((unsigned char)type);
        s.type = (lo == 't' || lo == 'w') ? STT_FUNC : STT_OBJECT;
        s.ktype = type;
        s.origin = EK_SYMORIGIN_KALLSYMS;
        int bracket = strchr(name, '[') != NULL;
        char *tab = strchr(name, '\t');
        char *mod = NULL;
        if (tab) {
            *tab = 0;
            char *mb = strchr(tab + 1, '['), *me = mb ? strchr(mb, ']') : NULL;
            if (mb && me) {
                *me = 0;
                mod = mb + 1;
            }
        }
        s.name = name;
        s.module = mod;
        rc = ek_symtab_insert_full(t, &s, bracket);
        if (rc) {
            ek_symtab_free(t);
            return rc;
        }
    }
    ek_symtab_fixup(t, 1);
    *out = t;
    return EK_OK;
}

int ek_symtab_load_kallsyms(const char *path, const ek_diag *diag, ek_symtab **out)
{
    *out = NULL;
    ek_mapped m;
    int rc = ek_map_file(path, &m);
    if (rc) {
        ek_diag_emit(diag, EK_SEV_ERROR, "kallsyms.missing-file", rc, path, -1, -1, -1,
                     "cannot read kallsyms file");
        return rc;
    }
    rc = ek_symtab_parse_kallsyms((const char *)m.data, m.size, path, diag, out);
    ek_unmap_file(&m);
    return rc;
}

/* ---- test hooks ----------------------------------------------------------------------- */

const ek_symbol *ek_symtab_tree_find(ek_symtab *t, uint64_t addr)
{
    int32_t n = tree_find(t, addr);
    return n >= 0 ? &t->syms.v[n] : NULL;
}

static int check_node(const ek_symtab *t, int32_t n, int *black_height)
{
    if (n < 0) {
        *black_height = 1;
        return 0;
    }
    int32_t l = N(n).l, r = N(n).r;
    if (N(n).dead) return 1;
    if (l >= 0 && (N(l).p != n || KEY(l) > KEY(n))) return 2;
    if (r >= 0 && (N(r).p != n || KEY(r) < KEY(n))) return 3;
    if (N(n).red && (RED(l) || RED(r))) return 4;
    int bl, br;
    int rc = check_node(t, l, &bl);
    if (!rc) rc = check_node(t, r, &br);
    if (!rc && bl != br) rc = 5;
    *black_height = bl + !N(n).red;
    return rc;
}

int ek_symtab_check_tree(const ek_symtab *t)
{
    if (t->root >= 0 && (N(t->root).red || N(t->root).p != -1)) return 6;
    int bh;
    return check_node(t, t->root, &bh);
}
