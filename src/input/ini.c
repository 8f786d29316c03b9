/* INI reader: see ini.h for the accepted dialect. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/mapfile.h"
#include "core/vec.h"
#include "etmkit/etmkit.h"
#include "etmkit/ini.h"

typedef struct sec_tmp {
    const char *name;
    uint64_t line, offset;
    size_t first; /* index of its first pair in the pair array */
} sec_tmp;

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\v' || c == '\f';
}

/* Trim [*b, *e) in place. */
static void trim(char **b, char **e)
{
    while (*b < *e && is_space(**b))
        (*b)++;
    while (*e > *b && is_space((*e)[-1]))
        (*e)--;
}

static void malformed(ek_ini *ini, const ek_diag *diag, uint64_t line, uint64_t off,
                      const char *why)
{
    ini->nmalformed++;
    ek_diag_emit(diag, EK_SEV_WARN, "ini.malformed-line", EK_ERR_FORMAT, ini->path, (int64_t)line,
                 (int64_t)off, -1, "%s; line skipped", why);
}

int ek_ini_parse(const char *text, size_t len, const char *fname, const ek_diag *diag, ek_ini **out)
{
    *out = NULL;
    if (!text && len) return EK_ERR_ARG;
    ek_ini *ini = calloc(1, sizeof *ini);
    if (!ini) return EK_ERR_NOMEM;
    if (fname && !(ini->path = strdup(fname))) goto nomem;
    if (len == SIZE_MAX || !(ini->text_ = malloc(len + 1))) goto nomem;
    if (len) memcpy(ini->text_, text, len);
    ini->text_[len] = 0;

    EK_VEC(sec_tmp) secs = {0};
    EK_VEC(ek_ini_kv) kvs = {0};
    /* state: 0 = before any section, 1 = in a section, 2 = after a broken header */
    int state = 0;
    char *buf = ini->text_;
    size_t pos = 0;
    uint64_t lineno = 0;
    if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) pos = 3;
    while (pos < len) {
        lineno++;
        uint64_t off = pos;
        char *ls = buf + pos;
        char *nl = memchr(ls, '\n', len - pos);
        char *le = nl ? nl : buf + len;
        pos = nl ? (size_t)(nl - buf) + 1 : len;
        if (memchr(ls, 0, (size_t)(le - ls))) {
            malformed(ini, diag, lineno, off, "NUL byte in line");
            continue;
        }
        /* Cut at the first CR or comment character. */
        for (char *p = ls; p < le; p++) {
            if (*p == '\r' || *p == ';' || *p == '#') {
                le = p;
                break;
            }
        }
        char *b = ls, *e = le;
        trim(&b, &e);
        if (b == e) continue;
        if (*b == '[') {
            char *close = memchr(b + 1, ']', (size_t)(e - b - 1));
            if (!close) {
                malformed(ini, diag, lineno, off,
                          "unterminated '[' in section header (keys up to the next section "
                          "are ignored)");
                state = 2;
                continue;
            }
            char *nb = b + 1, *ne = close;
            trim(&nb, &ne);
            *ne = 0;
            sec_tmp st = {nb, lineno, off, kvs.n};
            if (ek_vec_push(&secs, st)) goto nomem_vecs;
            state = 1;
            continue;
        }
        char *eq = memchr(b, '=', (size_t)(e - b));
        if (!eq) {
            malformed(ini, diag, lineno, off, "no '=' in key line");
            continue;
        }
        char *kb = b, *ke = eq, *vb = eq + 1, *ve = e;
        trim(&kb, &ke);
        trim(&vb, &ve);
        if (kb == ke) {
            malformed(ini, diag, lineno, off, "empty key before '='");
            continue;
        }
        if (state == 0) {
            malformed(ini, diag, lineno, off, "key outside any [section]");
            continue;
        }
        if (state == 2) continue; /* reported with the broken header */
        *ke = 0;
        *ve = 0;
        ek_ini_kv kv = {kb, vb, lineno, off};
        if (ek_vec_push(&kvs, kv)) goto nomem_vecs;
    }

    ini->kvs_ = kvs.v;
    ini->nsec = secs.n;
    if (secs.n) {
        ini->sec = calloc(secs.n, sizeof *ini->sec);
        if (!ini->sec) {
            ek_vec_free(&secs);
            goto nomem;
        }
    }
    for (size_t i = 0; i < secs.n; i++) {
        size_t end = i + 1 < secs.n ? secs.v[i + 1].first : kvs.n;
        ek_ini_section *s = &ini->sec[i];
        s->name = secs.v[i].name;
        s->line = secs.v[i].line;
        s->offset = secs.v[i].offset;
        s->nkv = end - secs.v[i].first;
        s->kv = s->nkv ? kvs.v + secs.v[i].first : NULL;
    }
    ek_vec_free(&secs);
    *out = ini;
    return EK_OK;

nomem_vecs:
    ek_vec_free(&secs);
    ek_vec_free(&kvs);
nomem:
    ek_ini_free(ini);
    return EK_ERR_NOMEM;
}

int ek_ini_load(const char *path, const ek_diag *diag, ek_ini **out)
{
    *out = NULL;
    ek_mapped m;
    int rc = ek_map_regular(path, &m); /* (a FIFO or /dev/zero: refused, not waited on) */
    if (rc) return rc;
    rc = ek_ini_parse((const char *)m.data, m.size, path, diag, out);
    int saved = errno;
    ek_unmap_file(&m);
    errno = saved;
    return rc;
}

void ek_ini_free(ek_ini *ini)
{
    if (!ini) return;
    free(ini->path);
    free(ini->sec);
    free(ini->kvs_);
    free(ini->text_);
    free(ini);
}

const ek_ini_section *ek_ini_section_find(const ek_ini *ini, const char *name)
{
    if (!ini || !name) return NULL;
    for (size_t i = 0; i < ini->nsec; i++)
        if (strcasecmp(ini->sec[i].name, name) == 0) return &ini->sec[i];
    return NULL;
}

const ek_ini_section *ek_ini_next_section(const ek_ini *ini, const ek_ini_section *prev)
{
    if (!ini || !prev || prev < ini->sec || prev >= ini->sec + ini->nsec) return NULL;
    for (const ek_ini_section *s = prev + 1; s < ini->sec + ini->nsec; s++)
        if (strcasecmp(s->name, prev->name) == 0) return s;
    return NULL;
}

const ek_ini_kv *ek_ini_find_next(const ek_ini_section *sec, const char *key, size_t *pos)
{
    if (!sec || !key) return NULL;
    for (size_t i = *pos; i < sec->nkv; i++) {
        if (strcasecmp(sec->kv[i].key, key) == 0) {
            *pos = i + 1;
            return &sec->kv[i];
        }
    }
    *pos = sec->nkv;
    return NULL;
}

const ek_ini_kv *ek_ini_find(const ek_ini_section *sec, const char *key)
{
    size_t pos = 0;
    return ek_ini_find_next(sec, key, &pos);
}

const char *ek_ini_get(const ek_ini_section *sec, const char *key)
{
    const ek_ini_kv *kv = ek_ini_find(sec, key);
    return kv ? kv->value : NULL;
}

const char *ek_ini_lookup(const ek_ini *ini, const char *section, const char *key)
{
    return ek_ini_get(ek_ini_section_find(ini, section), key);
}

int ek_ini_parse_u64(const char *s, uint64_t *v)
{
    if (!s) return 0;
    size_t n = strlen(s);
    while (n && is_space(*s)) {
        s++;
        n--;
    }
    while (n && is_space(s[n - 1]))
        n--;
    if (n >= 2 && (s[0] == '"' || s[0] == '\'') && s[n - 1] == s[0]) {
        s++;
        n -= 2;
    }
    if (n == 0 || n > 64) return 0;
    char tmp[72];
    memcpy(tmp, s, n);
    tmp[n] = 0;
    if (tmp[0] == '-' || tmp[0] == '+' || is_space(tmp[0])) return 0;
    errno = 0;
    char *end = NULL;
    unsigned long long x = strtoull(tmp, &end, 0);
    if (errno == ERANGE || end == tmp || *end != 0) return 0;
    *v = (uint64_t)x;
    return 1;
}
