/* perf script's sample filters: -C/--cpu, --pid, --tid, --comm, --time (etmkit/filter.h). */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "etmkit/filter.h"

#define MAX_CPU 4096 /* perf 6.1's MAX_NR_CPUS */

static int bad(ek_sbuf *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(ek_sbuf *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        ek_sbuf_vprintf(err, fmt, ap);
        va_end(ap);
    }
    return EK_ERR_ARG;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

/* Decimal digits at *p into *v (at most max); 0, or -1 when there are none or too many. */
static int read_dec(const char **p, uint64_t max, uint64_t *v)
{
    const char *s = *p;
    uint64_t n = 0;
    if (!isdigit((unsigned char)*s)) return -1;
    while (isdigit((unsigned char)*s)) {
        n = n * 10 + (uint64_t)(*s - '0');
        if (n > max) return -1;
        s++;
    }
    *p = s;
    *v = n;
    return 0;
}

/* ---- CPUs ------------------------------------------------------------------------------------ */

int ek_sample_filter_cpus(ek_sample_filter *f, const char *list, ek_sbuf *err)
{
    if (!list || !*list) return bad(err, "-C: empty CPU list (give CPUs as 0-2,4)");
    unsigned char seen[MAX_CPU / 8];
    memset(seen, 0, sizeof seen);
    size_t n = 0;
    const char *p = list;
    for (;;) {
        uint64_t a, b;
        if (read_dec(&p, MAX_CPU - 1, &a))
            return bad(err, "-C: '%s' is not a CPU list (CPUs 0-%d as 0-2,4)", list, MAX_CPU - 1);
        b = a;
        if (*p == '-') {
            p++;
            if (read_dec(&p, MAX_CPU - 1, &b))
                return bad(err, "-C: '%s' is not a CPU list (CPUs 0-%d as 0-2,4)", list,
                           MAX_CPU - 1);
            if (b < a)
                return bad(err, "-C: range %llu-%llu in '%s' goes backwards", (unsigned long long)a,
                           (unsigned long long)b, list);
        }
        for (uint64_t c = a; c <= b; c++) {
            if (seen[c / 8] & (1u << (c % 8)))
                return bad(err, "-C: CPU %llu is listed twice in '%s'", (unsigned long long)c,
                           list);
            seen[c / 8] |= (unsigned char)(1u << (c % 8));
            n++;
        }
        if (!*p) break;
        if (*p != ',')
            return bad(err, "-C: '%s' is not a CPU list (CPUs 0-%d as 0-2,4)", list, MAX_CPU - 1);
        p++;
    }
    int32_t *v = malloc(n * sizeof *v);
    if (!v) return EK_ERR_NOMEM;
    size_t k = 0;
    for (int32_t c = 0; c < MAX_CPU; c++)
        if (seen[c / 8] & (1u << (c % 8))) v[k++] = c;
    free(f->cpus);
    f->cpus = v;
    f->ncpus = n;
    return 0;
}

/* ---- pids and tids ------------------------------------------------------------------------- */

static int int_list(const char *opt, const char *what, const char *list, int32_t **out,
                    size_t *nout, ek_sbuf *err)
{
    if (!list || !*list) return bad(err, "%s: empty list (give %ss as 1000,1001)", opt, what);
    size_t n = 1;
    for (const char *c = list; *c; c++)
        n += *c == ',';
    int32_t *v = malloc(n * sizeof *v);
    if (!v) return EK_ERR_NOMEM;
    const char *p = list;
    for (size_t i = 0; i < n; i++) {
        uint64_t x;
        if (read_dec(&p, INT32_MAX, &x) || (*p && *p != ',')) {
            free(v);
            return bad(err, "%s: '%s' is not a list of %ss (decimal numbers as 1000,1001)", opt,
                       list, what);
        }
        v[i] = (int32_t)x;
        if (*p) p++;
    }
    qsort(v, n, sizeof *v, cmp_i32);
    free(*out);
    *out = v;
    *nout = n;
    return 0;
}

int ek_sample_filter_pids(ek_sample_filter *f, const char *list, ek_sbuf *err)
{
    return int_list("--pid", "process ID", list, &f->pids, &f->npids, err);
}

int ek_sample_filter_tids(ek_sample_filter *f, const char *list, ek_sbuf *err)
{
    return int_list("--tid", "thread ID", list, &f->tids, &f->ntids, err);
}

/* ---- command names --------------------------------------------------------------------------- */

static void free_strs(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

int ek_sample_filter_comms(ek_sample_filter *f, const char *list, ek_sbuf *err)
{
    if (!list || !*list) return bad(err, "--comm: empty list (give command names as bash,make)");
    size_t n = 1;
    for (const char *c = list; *c; c++)
        n += *c == ',';
    char **v = calloc(n, sizeof *v);
    if (!v) return EK_ERR_NOMEM;
    const char *p = list;
    for (size_t i = 0; i < n; i++) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (!len) {
            free_strs(v, n);
            return bad(err, "--comm: empty name in '%s'", list);
        }
        v[i] = strndup(p, len);
        if (!v[i]) {
            free_strs(v, n);
            return EK_ERR_NOMEM;
        }
        p += len + (e ? 1 : 0);
    }
    free_strs(f->comms, f->ncomms);
    f->comms = v;
    f->ncomms = n;
    return 0;
}

/* ---- times ------------------------------------------------------------------------------------
 */

/* perf's parse_nsec_time on [s, e): "SEC[.FRACTION]", at most 9 fraction digits (padded with
 * zeros to nanoseconds, never rounded); blanks before the number are skipped. */
static int parse_time(const char *s, const char *e, uint64_t *t)
{
    while (s < e && isspace((unsigned char)*s))
        s++;
    uint64_t sec = 0, ns = 0;
    while (s < e && isdigit((unsigned char)*s)) {
        sec = sec * 10 + (uint64_t)(*s++ - '0');
        if (sec > UINT64_MAX / 1000000000u - 1) return -1;
    }
    if (s < e) {
        if (*s++ != '.' || e - s > 9) return -1;
        int digits = 0;
        for (; s < e; s++, digits++) {
            if (!isdigit((unsigned char)*s)) return -1;
            ns = ns * 10 + (uint64_t)(*s - '0');
        }
        for (; digits < 9; digits++)
            ns *= 10;
    }
    *t = sec * 1000000000u + ns;
    return 0;
}

/* One "START,STOP" piece [s, e) holding exactly one comma. */
static int parse_range(const char *s, const char *e, ek_time_range *r)
{
    const char *c = memchr(s, ',', (size_t)(e - s));
    r->start = r->end = 0;
    if (c > s && parse_time(s, c, &r->start)) return -1;
    if (c + 1 < e && parse_time(c + 1, e, &r->end)) return -1;
    if (r->end && r->end < r->start) return -1;
    return 0;
}

int ek_sample_filter_time(ek_sample_filter *f, const char *str, ek_sbuf *err)
{
    if (!str || !*str) return bad(err, "--time: empty (give START,STOP in seconds, as 12.5,12.75)");
    if (strchr(str, '%'))
        return bad(err,
                   "--time: '%s': percentages are not supported (they need the recording's "
                   "first and last sample times); give START,STOP in seconds",
                   str);
    size_t n = 0;
    for (const char *c = str; *c; c++)
        n += *c == ',';
    if (!n)
        return bad(err, "--time: '%s' has no comma (give START,STOP, START, or ,STOP in seconds)",
                   str);
    ek_time_range *v = calloc(n, sizeof *v);
    if (!v) return EK_ERR_NOMEM;
    /* as perf_time__parse_strs: every range but the last ends at the first blank after its
     * comma (and the blanks right after the comma) */
    const char *p = str;
    const char *why = NULL;
    for (size_t i = 0; i < n && !why; i++) {
        const char *c = strchr(p, ',');
        const char *e = c + 1;
        if (i + 1 < n) {
            while (isspace((unsigned char)*e))
                e++;
            while (*e && !isspace((unsigned char)*e) && *e != ',')
                e++;
            if (*e == ',') {
                why = "ranges are START,STOP separated by blanks";
                break;
            }
        } else {
            e = c + strlen(c);
        }
        if (parse_range(p, e, &v[i]))
            why = "times are seconds with up to 9 decimals, and STOP is not before START";
        else if (i && (!v[i - 1].end || v[i - 1].end >= v[i].start))
            why = "ranges must be in order and must not overlap";
        p = *e ? e + 1 : e;
    }
    if (why) {
        free(v);
        return bad(err, "--time: '%s' is not a time range: %s", str, why);
    }
    free(f->times);
    f->times = v;
    f->ntimes = n;
    return 0;
}

/* ---- the predicate ------------------------------------------------------------------------------
 */

void ek_sample_filter_free(ek_sample_filter *f)
{
    free(f->cpus);
    free(f->pids);
    free(f->tids);
    free_strs(f->comms, f->ncomms);
    free(f->times);
    memset(f, 0, sizeof *f);
}

int ek_sample_filter_active(const ek_sample_filter *f)
{
    return f && (f->ncpus || f->npids || f->ntids || f->ncomms || f->ntimes);
}

static int has_i32(const int32_t *v, size_t n, int32_t x)
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

/* perf_time__ranges_skip_sample, inverted */
static int time_in(const ek_sample_filter *f, uint64_t t)
{
    if (f->ntimes == 1) {
        const ek_time_range *r = &f->times[0];
        return !((r->start && t < r->start) || (r->end && t > r->end));
    }
    for (size_t i = 0; i < f->ntimes; i++)
        if (t >= f->times[i].start && (t <= f->times[i].end || !f->times[i].end)) return 1;
    return 0;
}

int ek_sample_filter_match(const ek_sample_filter *f, const ek_sample *s, const char *comm)
{
    if (f->ntimes && s->has_time && s->time && !time_in(f, s->time)) return 0;
    if (f->ncpus && (s->cpu < 0 || !has_i32(f->cpus, f->ncpus, s->cpu))) return 0;
    if (f->npids && !has_i32(f->pids, f->npids, s->pid)) return 0;
    if (f->ntids && !has_i32(f->tids, f->ntids, s->tid)) return 0;
    if (f->ncomms) {
        if (!comm) return 0;
        size_t i = 0;
        while (i < f->ncomms && strcmp(f->comms[i], comm))
            i++;
        if (i == f->ncomms) return 0;
    }
    return 1;
}
