/* etmkit's branch list: every count of every binary, as mergeable text (docs/PROFILES.md).
 *
 *   etmkit-branch-list 1
 *   binary <build-id hex | -> <load base hex> <path, escaped>
 *   ranges <n>
 *   <begin hex> <end hex> <count>           n lines, sorted
 *   addresses <n>
 *   <addr hex> <count>
 *   branches <n>
 *   <from hex | -> <to hex | -> <count>     "-": outside the binary
 *   ... (binaries sorted by path, then build-id)
 *   end
 * The counts per section and the closing "end" make a cut-short file an error, not a smaller
 * profile. Paths escape '\\' as "\\\\" and bytes below 0x20 and 0x7f as "\\xNN".
 */
#include <stdlib.h>
#include <string.h>

#include "profile/profile_int.h"
#include "profile/text.h"

#define BL_MAGIC "etmkit-branch-list 1"

static const char *section_name[3] = {"ranges", "addresses", "branches"};

static void put_addr(ek_sbuf *out, uint64_t a)
{
    if (a == EK_PROFILE_EXTERNAL)
        ek_sbuf_putc(out, '-');
    else
        ek_sbuf_hex(out, a, 0, 0);
}

static void put_path(ek_sbuf *out, const char *path)
{
    for (const unsigned char *s = (const unsigned char *)path; *s; s++) {
        if (*s == '\\')
            ek_sbuf_put(out, "\\\\", 2);
        else if (*s < 0x20 || *s == 0x7f) {
            ek_sbuf_put(out, "\\x", 2);
            ek_sbuf_hex(out, *s, 2, 0);
        } else
            ek_sbuf_putc(out, (char)*s);
    }
}

int ek_profile_write_branch_list(const ek_profile *p, ek_sbuf *out)
{
    if (!p || !out) return EK_ERR_ARG;
    size_t *order = NULL, nb = 0;
    int rc = ek_profile_binary_order(p, &order, &nb);
    if (rc) return rc;
    ek_sbuf_puts(out, BL_MAGIC "\n");
    for (size_t i = 0; i < nb && !rc; i++) {
        const prof_binary *b = p->bin[order[i]];
        ek_sbuf_puts(out, "binary ");
        if (!b->build_id_len) ek_sbuf_putc(out, '-');
        for (size_t k = 0; k < b->build_id_len; k++)
            ek_sbuf_hex(out, b->build_id[k], 2, 0);
        ek_sbuf_putc(out, ' ');
        ek_sbuf_hex(out, b->load_base, 0, 0);
        ek_sbuf_putc(out, ' ');
        put_path(out, b->path);
        ek_sbuf_putc(out, '\n');
        for (int kind = 0; kind < 3 && !rc; kind++) {
            ek_profile_count *v;
            size_t n;
            if ((rc = prof_table_sorted(&b->t[kind], &v, &n))) break;
            ek_sbuf_puts(out, section_name[kind]);
            ek_sbuf_putc(out, ' ');
            ek_sbuf_dec(out, n);
            ek_sbuf_putc(out, '\n');
            for (size_t j = 0; j < n; j++) {
                put_addr(out, v[j].a);
                ek_sbuf_putc(out, ' ');
                if (kind != EK_PROFILE_ADDRESSES) {
                    put_addr(out, v[j].b);
                    ek_sbuf_putc(out, ' ');
                }
                ek_sbuf_dec(out, v[j].count);
                ek_sbuf_putc(out, '\n');
            }
            free(v);
        }
    }
    ek_sbuf_puts(out, "end\n");
    free(order);
    if (!rc && out->oom) rc = EK_ERR_NOMEM;
    return rc;
}

/* ---- reading ----------------------------------------------------------------------------- */

static int parse_addr(const char *s, size_t n, size_t *i, uint64_t *v, int allow_ext)
{
    if (allow_ext && *i < n && s[*i] == '-') {
        (*i)++;
        *v = EK_PROFILE_EXTERNAL;
        return 0;
    }
    if (prof_parse_hex(s, n, i, v) || *v == EK_PROFILE_EXTERNAL) return -1;
    return 0;
}

static int parse_path(const char *s, size_t n, char *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k == EK_PROFILE_PATH_MAX) return -2; /* (the path, not its escaped text) */
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f) return -1;
        if (c == '\\') {
            if (i + 1 < n && s[i + 1] == '\\') {
                out[k++] = '\\';
                i++;
                continue;
            }
            size_t j = i + 2;
            uint64_t v;
            if (i + 4 > n || s[i + 1] != 'x' || prof_parse_hex(s, i + 4, &j, &v) || j != i + 4 ||
                v == 0)
                return -1;
            out[k++] = (char)v;
            i += 3;
            continue;
        }
        out[k++] = (char)c;
    }
    out[k] = 0;
    return 0;
}

/* "binary <id|-> <base> <path>" */
static int read_binary_line(ek_profile *p, prof_lines *l, size_t *h)
{
    const char *s = l->line;
    size_t n = l->n, i = 0;
    uint8_t id[EK_PROFILE_BUILD_ID_MAX];
    size_t idlen = 0;
    if (!prof_eat(s, n, &i, "binary "))
        return prof_lines_error(l, "expected 'binary BUILD-ID LOAD-BASE PATH' or 'end'");
    if (!prof_eat(s, n, &i, "-")) {
        while (i + 1 < n && s[i] != ' ') {
            uint64_t v;
            size_t j = 0;
            char two[2] = {s[i], s[i + 1]};
            if (idlen == EK_PROFILE_BUILD_ID_MAX || prof_parse_hex(two, 2, &j, &v) || j != 2)
                return prof_lines_error(l, "bad build-id (hex digit pairs, at most %d bytes)",
                                        EK_PROFILE_BUILD_ID_MAX);
            id[idlen++] = (uint8_t)v;
            i += 2;
        }
        if (!idlen)
            return prof_lines_error(l, "bad build-id (hex digit pairs, at most %d bytes)",
                                    EK_PROFILE_BUILD_ID_MAX);
    }
    uint64_t base;
    if (!prof_eat(s, n, &i, " ") || prof_parse_hex(s, n, &i, &base) || !prof_eat(s, n, &i, " "))
        return prof_lines_error(l, "expected ' LOAD-BASE PATH' (hex) after the build-id");
    char path[EK_PROFILE_PATH_MAX + 1];
    int pr = parse_path(s + i, n - i, path);
    if (pr == -2) return prof_lines_error(l, "path longer than %d bytes", EK_PROFILE_PATH_MAX);
    if (pr) return prof_lines_error(l, "bad path escape or control character in the path");
    ek_profile_binary bid = {path, id, idlen, base};
    size_t before = ek_profile_binary_count(p);
    int rc = ek_profile_add_binary(p, &bid, h);
    if (rc == EK_ERR_FORMAT || (!rc && *h < before))
        return prof_lines_error(l, "binary '%s' is listed twice", path);
    return rc;
}

static int read_section(ek_profile *p, prof_lines *l, size_t h, int kind)
{
    if (!prof_lines_next(l))
        return prof_lines_error(l, "the text ends where '%s N' should be", section_name[kind]);
    const char *s = l->line;
    size_t n = l->n, i = 0;
    uint64_t cnt;
    if (!prof_eat(s, n, &i, section_name[kind]) || !prof_eat(s, n, &i, " ") ||
        prof_parse_dec(s, n, &i, &cnt) || i != n)
        return prof_lines_error(l, "expected '%s N'", section_name[kind]);
    int have_prev = 0;
    uint64_t pa = 0, pb = 0;
    for (uint64_t e = 0; e < cnt; e++) {
        if (!prof_lines_next(l))
            return prof_lines_error(l, "the text ends after %llu of %llu %s", (unsigned long long)e,
                                    (unsigned long long)cnt, section_name[kind]);
        s = l->line;
        n = l->n;
        i = 0;
        uint64_t a, b = 0, c;
        int ext = kind == EK_PROFILE_BRANCHES;
        int ok = !parse_addr(s, n, &i, &a, ext) && prof_eat(s, n, &i, " ");
        if (ok && kind != EK_PROFILE_ADDRESSES)
            ok = !parse_addr(s, n, &i, &b, ext) && prof_eat(s, n, &i, " ");
        ok = ok && !prof_parse_dec(s, n, &i, &c) && i == n;
        if (!ok) {
            static const char *syn[3] = {"BEGIN END COUNT", "ADDR COUNT", "FROM TO COUNT"};
            return prof_lines_error(l,
                                    "%s entry %llu of %llu: expected %s (hex, '-' outside, "
                                    "decimal count)",
                                    section_name[kind], (unsigned long long)e + 1,
                                    (unsigned long long)cnt, syn[kind]);
        }
        if (!c)
            return prof_lines_error(l, "%s entry %llu: a count of 0", section_name[kind],
                                    (unsigned long long)e + 1);
        if (have_prev && (a < pa || (a == pa && b <= pb)))
            return prof_lines_error(l, "%s entry %llu: not after the one before (sorted, unique)",
                                    section_name[kind], (unsigned long long)e + 1);
        if (a == EK_PROFILE_EXTERNAL && b == EK_PROFILE_EXTERNAL)
            return prof_lines_error(l, "branch entry %llu: both ends outside the binary",
                                    (unsigned long long)e + 1);
        have_prev = 1;
        pa = a;
        pb = b;
        int rc = prof_table_add(&p->bin[h]->t[kind], a, b, c);
        if (rc) return rc;
    }
    return EK_OK;
}

int prof_read_branch_list(ek_profile *p, prof_lines *l)
{
    if (!prof_lines_next(l) || l->n != strlen(BL_MAGIC) || memcmp(l->line, BL_MAGIC, l->n))
        return prof_lines_error(l, "not an etmkit branch list (first line '" BL_MAGIC "')");
    for (;;) {
        if (!prof_lines_next(l))
            return prof_lines_error(l, "the text ends before 'end' (cut short?)");
        if (l->n == 3 && !memcmp(l->line, "end", 3)) break;
        size_t h;
        int rc = read_binary_line(p, l, &h);
        for (int kind = 0; kind < 3 && !rc; kind++)
            rc = read_section(p, l, h, kind);
        if (rc) return rc;
    }
    if (prof_lines_next(l)) return prof_lines_error(l, "text after 'end'");
    return EK_OK;
}
