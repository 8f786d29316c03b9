/* Line reading and number syntax shared by the profile readers. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "profile/text.h"

void prof_lines_init(prof_lines *l, const char *text, size_t len, const char *fname,
                     const ek_diag *diag)
{
    memset(l, 0, sizeof *l);
    l->text = text ? text : "";
    l->len = text ? len : 0;
    l->fname = fname;
    l->diag = diag;
}

int prof_lines_next(prof_lines *l)
{
    if (l->pos >= l->len) return 0;
    const char *s = l->text + l->pos;
    const char *nl = memchr(s, '\n', l->len - l->pos);
    size_t n = nl ? (size_t)(nl - s) : l->len - l->pos;
    l->line = s;
    l->line_start = l->pos;
    l->lineno++;
    l->pos += n + (nl ? 1 : 0);
    if (n && s[n - 1] == '\r') n--;
    l->n = n;
    return 1;
}

int prof_lines_error(prof_lines *l, const char *fmt, ...)
{
    if (!l->reported) {
        char msg[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        if (l->lineno > 0)
            ek_diag_emit(l->diag, EK_SEV_ERROR, "profile.malformed", EK_ERR_FORMAT, l->fname,
                         l->lineno, (int64_t)l->line_start, -1, "%s", msg);
        else
            ek_diag_emit(l->diag, EK_SEV_ERROR, "profile.malformed", EK_ERR_FORMAT, l->fname, -1,
                         (int64_t)l->len, -1, "%s", msg);
        l->reported = 1;
    }
    return EK_ERR_FORMAT;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int prof_parse_hex(const char *s, size_t n, size_t *i, uint64_t *v)
{
    size_t k = *i;
    uint64_t x = 0;
    int d;
    while (k < n && (d = hexval(s[k])) >= 0) {
        if (x >> 60) return -1;
        x = x << 4 | (uint64_t)d;
        k++;
    }
    if (k == *i) return -1;
    *i = k;
    *v = x;
    return 0;
}

int prof_parse_dec(const char *s, size_t n, size_t *i, uint64_t *v)
{
    size_t k = *i;
    uint64_t x = 0;
    while (k < n && s[k] >= '0' && s[k] <= '9') {
        uint64_t d = (uint64_t)(s[k] - '0');
        if (x > (UINT64_MAX - d) / 10) return -1;
        x = x * 10 + d;
        k++;
    }
    if (k == *i) return -1;
    *i = k;
    *v = x;
    return 0;
}

int prof_eat(const char *s, size_t n, size_t *i, const char *lit)
{
    size_t m = strlen(lit);
    if (n - *i < m || memcmp(s + *i, lit, m)) return 0;
    *i += m;
    return 1;
}
