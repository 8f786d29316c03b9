/* simpleperf's AutoFDO text (`simpleperf inject --output autofdo`), written and read.
 *
 * What simpleperf's AutoFDOWriter writes (cmd_inject.cpp), and what is reproduced here:
 *   [// Please split this file. AutoFDO only accepts profile for one binary.]  (several binaries)
 *   for each binary, by path:
 *     <number of ranges>           then  <begin>-<end>:<count>   (hex-hex:decimal)
 *     <number of addresses>        then  <addr>:<count>
 *     <number of branches>         then  <from>-><to>:<count>
 *     // build_id: 0x<20 bytes as 40 hex digits, zero-padded>
 *     // <path>
 *     <empty line>
 * Addresses are vaddr - <p_vaddr of the first PT_LOAD> (AutoFDO adds that back); entries
 * below it are left out, a branch target below it becomes 0. Each table is sorted by its
 * (address pair, count) after that subtraction. AutoFDO's TextSampleReader reads the three
 * tables with fscanf and ignores the rest.
 */
#include <stdlib.h>
#include <string.h>

#include "profile/profile_int.h"
#include "profile/text.h"

#define SPLIT_LINE "// Please split this file. AutoFDO only accepts profile for one binary."

typedef struct afdo_item {
    uint64_t a, b, n;
} afdo_item;

static int item_cmp(const void *x, const void *y)
{
    const afdo_item *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    if (p->b != q->b) return p->b < q->b ? -1 : 1;
    if (p->n != q->n) return p->n < q->n ? -1 : 1;
    return 0;
}

/* The entries of one table as simpleperf writes them: relative to base, filtered, sorted. */
static int afdo_items(const prof_binary *b, int kind, afdo_item **out, size_t *n)
{
    const prof_table *t = &b->t[kind];
    uint64_t base = b->load_base;
    *out = NULL;
    *n = 0;
    if (!t->len) return EK_OK;
    afdo_item *v = malloc(t->len * sizeof *v);
    if (!v) return EK_ERR_NOMEM;
    size_t k = 0;
    for (size_t i = 0; i < t->cap; i++) {
        const ek_profile_count *e = &t->slot[i];
        if (!e->count) continue;
        afdo_item it = {0, 0, e->count};
        if (kind == EK_PROFILE_RANGES) {
            if (e->a < base || e->b < base) continue;
            it.a = e->a - base;
            it.b = e->b - base;
        } else if (kind == EK_PROFILE_ADDRESSES) {
            if (e->a < base) continue;
            it.a = e->a - base;
        } else {
            if (e->a == EK_PROFILE_EXTERNAL || e->a < base) continue;
            it.a = e->a - base;
            it.b = e->b != EK_PROFILE_EXTERNAL && e->b >= base ? e->b - base : 0;
        }
        v[k++] = it;
    }
    qsort(v, k, sizeof *v, item_cmp);
    *out = v;
    *n = k;
    return EK_OK;
}

int ek_profile_write_autofdo(const ek_profile *p, ek_sbuf *out)
{
    if (!p || !out) return EK_ERR_ARG;
    size_t *order = NULL, nb = 0;
    int rc = ek_profile_binary_order(p, &order, &nb);
    if (rc) return rc;
    if (nb > 1) ek_sbuf_puts(out, SPLIT_LINE "\n");
    for (size_t i = 0; i < nb && !rc; i++) {
        const prof_binary *b = p->bin[order[i]];
        for (int kind = 0; kind < 3 && !rc; kind++) {
            afdo_item *v;
            size_t n;
            if ((rc = afdo_items(b, kind, &v, &n))) break;
            ek_sbuf_dec(out, n);
            ek_sbuf_putc(out, '\n');
            for (size_t j = 0; j < n; j++) {
                ek_sbuf_hex(out, v[j].a, 0, 0);
                if (kind == EK_PROFILE_RANGES) {
                    ek_sbuf_putc(out, '-');
                    ek_sbuf_hex(out, v[j].b, 0, 0);
                } else if (kind == EK_PROFILE_BRANCHES) {
                    ek_sbuf_put(out, "->", 2);
                    ek_sbuf_hex(out, v[j].b, 0, 0);
                }
                ek_sbuf_putc(out, ':');
                ek_sbuf_dec(out, v[j].n);
                ek_sbuf_putc(out, '\n');
            }
            free(v);
        }
        /* simpleperf's BuildId::ToString: always 20 bytes */
        ek_sbuf_puts(out, "// build_id: 0x");
        for (size_t k = 0; k < 20; k++)
            ek_sbuf_hex(out, k < b->build_id_len ? b->build_id[k] : 0, 2, 0);
        ek_sbuf_puts(out, "\n// ");
        /* the path as it is, but a line end (which would end the comment, and make the rest
         * of the path read as the profile's own lines) as \x0a / \x0d */
        for (const char *c = b->path; *c; c++)
            if (*c == '\n' || *c == '\r')
                ek_sbuf_puts(out, *c == '\n' ? "\\x0a" : "\\x0d");
            else
                ek_sbuf_putc(out, *c);
        ek_sbuf_puts(out, "\n\n");
    }
    free(order);
    if (!rc && out->oom) rc = EK_ERR_NOMEM;
    return rc;
}

/* ---- reading ----------------------------------------------------------------------------- */

typedef struct afdo_bin {
    afdo_item *v[3];
    size_t n[3];
} afdo_bin;

static int read_table(prof_lines *l, int kind, afdo_item **out, size_t *nout)
{
    static const char *what[3] = {"ranges", "addresses", "branches"};
    *out = NULL;
    *nout = 0;
    if (!prof_lines_next(l))
        return prof_lines_error(l, "the text ends where the number of %s should be", what[kind]);
    uint64_t n;
    size_t i = 0;
    if (prof_parse_dec(l->line, l->n, &i, &n) || i != l->n)
        return prof_lines_error(l, "expected the number of %s (decimal), got '%.*s'", what[kind],
                                (int)(l->n > 60 ? 60 : l->n), l->line);
    size_t cap = 0, k = 0;
    afdo_item *v = NULL;
    for (uint64_t e = 0; e < n; e++) {
        if (!prof_lines_next(l)) {
            free(v);
            return prof_lines_error(l, "the text ends after %llu of %llu %s", (unsigned long long)e,
                                    (unsigned long long)n, what[kind]);
        }
        afdo_item it = {0, 0, 0};
        const char *s = l->line;
        size_t m = l->n, j = 0;
        int ok = !prof_parse_hex(s, m, &j, &it.a);
        if (ok && kind == EK_PROFILE_RANGES)
            ok = prof_eat(s, m, &j, "-") && !prof_parse_hex(s, m, &j, &it.b);
        else if (ok && kind == EK_PROFILE_BRANCHES)
            ok = prof_eat(s, m, &j, "->") && !prof_parse_hex(s, m, &j, &it.b);
        ok = ok && prof_eat(s, m, &j, ":") && !prof_parse_dec(s, m, &j, &it.n) && j == m;
        if (!ok) {
            free(v);
            static const char *syn[3] = {"BEGIN-END:COUNT", "ADDR:COUNT", "FROM->TO:COUNT"};
            return prof_lines_error(l, "%s entry %llu of %llu: expected %s (hex, decimal count)",
                                    what[kind], (unsigned long long)e + 1, (unsigned long long)n,
                                    syn[kind]);
        }
        if (k == cap) {
            size_t nc = cap ? cap * 2 : 64;
            afdo_item *nv = realloc(v, nc * sizeof *nv);
            if (!nv) {
                free(v);
                return EK_ERR_NOMEM;
            }
            v = nv;
            cap = nc;
        }
        v[k++] = it;
    }
    *out = v;
    *nout = k;
    return EK_OK;
}

static int parse_build_id(const char *s, size_t n, uint8_t *id, size_t *len)
{
    size_t i = 0;
    if (!prof_eat(s, n, &i, "0x")) return -1;
    size_t digits = n - i;
    if (digits % 2 || digits > 2 * EK_PROFILE_BUILD_ID_MAX) return -1;
    for (size_t k = 0; k < digits / 2; k++) {
        uint64_t v;
        size_t j = 0;
        char two[2] = {s[i + 2 * k], s[i + 2 * k + 1]};
        if (prof_parse_hex(two, 2, &j, &v) || j != 2) return -1;
        id[k] = (uint8_t)v;
    }
    *len = digits / 2;
    return 0;
}

static void afdo_bin_free(afdo_bin *b)
{
    for (int k = 0; k < 3; k++)
        free(b->v[k]);
    memset(b, 0, sizeof *b);
}

/* x + base, when that is an address (no overflow, not EK_PROFILE_EXTERNAL). */
static int rebase(uint64_t x, uint64_t base, uint64_t *out)
{
    if (base >= EK_PROFILE_EXTERNAL || x > EK_PROFILE_EXTERNAL - 1 - base) return -1;
    *out = x + base;
    return 0;
}

/* Add one binary's tables (relative addresses) to p. */
static int afdo_commit(ek_profile *p, prof_lines *l, afdo_bin *ab, const char *path,
                       const uint8_t *id, size_t idlen, const ek_profile_read_opts *opts)
{
    ek_profile_binary bid = {path, id, idlen, 0};
    uint64_t base = 0;
    if (opts && opts->base_fn && opts->base_fn(opts->base_ctx, &bid, &base)) base = 0;
    bid.load_base = base;
    size_t h;
    int rc = ek_profile_add_binary(p, &bid, &h);
    if (rc == EK_ERR_FORMAT)
        return prof_lines_error(l, "binary '%s' appears twice with different load bases", path);
    if (rc) return rc == EK_ERR_ARG ? prof_lines_error(l, "path or build-id too long") : rc;
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < ab->n[k]; i++) {
            const afdo_item *it = &ab->v[k][i];
            uint64_t a, b = 0;
            int ext = k == EK_PROFILE_BRANCHES && it->b == 0; /* simpleperf's target "0" */
            if (rebase(it->a, base, &a) ||
                (k != EK_PROFILE_ADDRESSES && !ext && rebase(it->b, base, &b)))
                return prof_lines_error(l,
                                        "binary '%s': an address overflows with load base 0x%llx",
                                        path, (unsigned long long)base);
            if (k == EK_PROFILE_RANGES)
                rc = ek_profile_add_range(p, h, a, b, it->n);
            else if (k == EK_PROFILE_ADDRESSES)
                rc = ek_profile_add_address(p, h, a, it->n);
            else
                rc = ek_profile_add_branch(p, h, a, ext ? EK_PROFILE_EXTERNAL : b, it->n);
            if (rc) return rc;
        }
    return EK_OK;
}

/* Parse AutoFDO text into p (a fresh profile: the caller merges it on success). */
int prof_read_autofdo(ek_profile *p, prof_lines *l, const ek_profile_read_opts *opts)
{
    int rc = EK_OK;
    afdo_bin ab = {{0}, {0}};
    char *path = NULL;
    int first = 1;
    for (;;) {
        /* skip empty lines between binaries; the split line may come first */
        int more;
        while ((more = prof_lines_next(l)) && l->n == 0)
            ;
        if (!more) break;
        if (first && l->n == strlen(SPLIT_LINE) && !memcmp(l->line, SPLIT_LINE, l->n)) {
            first = 0;
            continue;
        }
        first = 0;
        /* give the line back: the first table starts with it */
        l->pos = l->line_start;
        l->lineno--;
        for (int k = 0; k < 3 && !rc; k++)
            rc = read_table(l, k, &ab.v[k], &ab.n[k]);
        if (rc) break;
        /* optional "// build_id: 0x..." and "// path" */
        uint8_t id[EK_PROFILE_BUILD_ID_MAX];
        size_t idlen = 0;
        const char *pth = "";
        size_t pthlen = 0;
        size_t save = l->pos;
        int64_t saveno = l->lineno;
        if (prof_lines_next(l)) {
            size_t i = 0;
            if (prof_eat(l->line, l->n, &i, "// build_id: ")) {
                if (parse_build_id(l->line + i, l->n - i, id, &idlen)) {
                    rc = prof_lines_error(l, "expected '// build_id: 0x' and hex digit pairs");
                    break;
                }
                save = l->pos;
                saveno = l->lineno;
                if (prof_lines_next(l)) {
                    i = 0;
                    if (prof_eat(l->line, l->n, &i, "// ")) {
                        pth = l->line + i;
                        pthlen = l->n - i;
                    } else {
                        l->pos = save;
                        l->lineno = saveno;
                    }
                }
            } else if (prof_eat(l->line, l->n, &i, "//")) {
                rc = prof_lines_error(l, "expected '// build_id: 0x...' after the branches");
                break;
            } else {
                l->pos = save;
                l->lineno = saveno;
            }
        }
        if (pthlen > EK_PROFILE_PATH_MAX || memchr(pth, 0, pthlen)) {
            rc = prof_lines_error(l, "the path is too long or holds a NUL byte");
            break;
        }
        free(path);
        path = malloc(pthlen + 1);
        if (!path) {
            rc = EK_ERR_NOMEM;
            break;
        }
        memcpy(path, pth, pthlen);
        path[pthlen] = 0;
        rc = afdo_commit(p, l, &ab, path, id, idlen, opts);
        afdo_bin_free(&ab);
        if (rc) break;
    }
    afdo_bin_free(&ab);
    free(path);
    return rc;
}
