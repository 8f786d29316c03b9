#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/diagkey.h"
#include "core/slots.h"
#include "etmkit/diag.h"

void ek_diag_vemit(const ek_diag *d, ek_severity sev, const char *kind, int status,
                   const char *file, int64_t record, int64_t offset, int trace_id,
                   const char *fmt, va_list ap)
{
    if (!d || !d->fn)
        return;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    ek_diag_event ev = {kind, sev, status, file, record, offset, trace_id, msg};
    d->fn(d->ctx, &ev);
}

void ek_diag_emit(const ek_diag *d, ek_severity sev, const char *kind, int status,
                  const char *file, int64_t record, int64_t offset, int trace_id,
                  const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ek_diag_vemit(d, sev, kind, status, file, record, offset, trace_id, fmt, ap);
    va_end(ap);
}

/* str on one line: trailing line ends dropped (some reference messages end in one), other
 * control characters (from names read out of damaged files) as \xNN. */
static void put_one_line(ek_sbuf *out, const char *str)
{
    size_t n = strlen(str);
    while (n && (str[n - 1] == '\n' || str[n - 1] == '\r'))
        n--;
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)str[i];
        if (ch >= 0x20 && ch != 0x7f)
            continue;
        ek_sbuf_put(out, str + run, i - run);
        ek_sbuf_printf(out, "\\x%02x", ch);
        run = i + 1;
    }
    ek_sbuf_put(out, str + run, n - run);
}

void ek_diag_format(ek_sbuf *out, const ek_diag_event *ev)
{
    static const char *const sev_name[] = {"note", "warning", "error"};
    if (ev->file) {
        put_one_line(out, ev->file);
        ek_sbuf_puts(out, ": ");
    }
    if (ev->record >= 0)
        ek_sbuf_printf(out, "record %lld: ", (long long)ev->record);
    if (ev->offset >= 0)
        ek_sbuf_printf(out, "offset 0x%llx: ", (unsigned long long)ev->offset);
    if (ev->trace_id >= 0)
        ek_sbuf_printf(out, "ID 0x%x: ", (unsigned)ev->trace_id);
    ek_sbuf_printf(out, "%s: ", sev_name[ev->sev <= EK_SEV_ERROR ? ev->sev : 2]);
    put_one_line(out, ev->msg ? ev->msg : "");
    ek_sbuf_printf(out, " [%s]", ev->kind ? ev->kind : "?");
}

/* ---- collector ---------------------------------------------------------------------- */

/* The collector groups events by kind and file: a group's line shows its first event and the
 * offsets of the next ones, which are then all in that event's file. (With keep_per_kind 0 it
 * keeps no event and prints no file: the groups are by kind alone.) */

typedef struct kept_event {
    ek_diag_event ev; /* file/msg point into owned copies below */
    char *file;
    char *msg;
} kept_event;

typedef struct kind_group {
    char *kind;
    char *file; /* the events' file (NULL: none, or keep_per_kind 0) */
    size_t hash;
    ek_severity worst;
    uint64_t count;
    kept_event *kept;
    unsigned nkept;
} kind_group;

struct ek_diag_collector {
    unsigned keep;
    kind_group *groups;
    size_t ngroups, cap;
    /* (kind, file) -> group: open addressing, slots hold index + 1 (0: empty), at most half
     * full; a linear search per event would take time events x groups */
    size_t *slot;
    size_t mask; /* capacity - 1; 0: no table yet */
    ek_diag next;
};

ek_diag_collector *ek_diag_collector_new(unsigned keep_per_kind)
{
    ek_diag_collector *c = calloc(1, sizeof *c);
    if (c)
        c->keep = keep_per_kind;
    return c;
}

void ek_diag_collector_free(ek_diag_collector *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->ngroups; i++) {
        kind_group *g = &c->groups[i];
        for (unsigned k = 0; k < g->nkept; k++) {
            free(g->kept[k].file);
            free(g->kept[k].msg);
        }
        free(g->kept);
        free(g->kind);
        free(g->file);
    }
    free(c->groups);
    free(c->slot);
    free(c);
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static size_t group_hash_at(const void *ctx, size_t i)
{
    return ((const ek_diag_collector *)ctx)->groups[i].hash;
}

/* Room in the table for one more group. */
static int grow_slots(ek_diag_collector *c)
{
    if ((c->ngroups + 1) * 2 <= c->mask + 1) return 0;
    size_t cap = c->mask ? (c->mask + 1) * 2 : 16;
    size_t *slot = ek_slots_build(cap, c->ngroups, group_hash_at, c);
    if (!slot) return -1;
    free(c->slot);
    c->slot = slot;
    c->mask = cap - 1;
    return 0;
}

static void collector_fn(void *ctx, const ek_diag_event *ev)
{
    ek_diag_collector *c = ctx;
    const char *kind = ev->kind ? ev->kind : "?";
    const char *file = c->keep ? ev->file : NULL;
    size_t hash = ek_diag_key_hash(kind, file);
    kind_group *g = NULL;
    if (grow_slots(c)) goto forward;
    size_t h = hash & c->mask;
    for (; c->slot[h]; h = (h + 1) & c->mask) {
        kind_group *x = &c->groups[c->slot[h] - 1];
        if (x->hash == hash && !strcmp(x->kind, kind) && ek_diag_key_same_file(x->file, file)) {
            g = x;
            break;
        }
    }
    if (!g) {
        if (c->ngroups == c->cap) {
            size_t cap = c->cap ? c->cap * 2 : 8;
            kind_group *ng = realloc(c->groups, cap * sizeof *ng);
            if (!ng)
                goto forward;
            c->groups = ng;
            c->cap = cap;
        }
        g = &c->groups[c->ngroups];
        memset(g, 0, sizeof *g);
        g->kind = strdup(kind);
        g->file = dup_or_null(file);
        g->hash = hash;
        if (!g->kind || (file && !g->file)) {
            free(g->kind);
            free(g->file);
            goto forward;
        }
        g->worst = ev->sev;
        if (c->keep) {
            g->kept = calloc(c->keep, sizeof *g->kept);
            if (!g->kept) {
                free(g->kind);
                free(g->file);
                goto forward;
            }
        }
        c->slot[h] = ++c->ngroups;
    }
    g->count++;
    if (ev->sev > g->worst)
        g->worst = ev->sev;
    if (g->nkept < c->keep) {
        kept_event *k = &g->kept[g->nkept];
        k->ev = *ev;
        k->file = dup_or_null(ev->file);
        k->msg = dup_or_null(ev->msg);
        k->ev.file = k->file;
        k->ev.msg = k->msg ? k->msg : "";
        k->ev.kind = g->kind;
        g->nkept++;
    }
forward:
    if (c->next.fn)
        c->next.fn(c->next.ctx, ev);
}

ek_diag ek_diag_collector_sink(ek_diag_collector *c)
{
    ek_diag d = {collector_fn, c};
    return d;
}

void ek_diag_collector_forward(ek_diag_collector *c, const ek_diag *next)
{
    if (next)
        c->next = *next;
    else
        c->next.fn = NULL;
}

uint64_t ek_diag_collector_count(const ek_diag_collector *c, ek_severity min_sev)
{
    uint64_t n = 0;
    for (size_t i = 0; i < c->ngroups; i++)
        if (c->groups[i].worst >= min_sev)
            n += c->groups[i].count;
    return n;
}

uint64_t ek_diag_collector_count_kind(const ek_diag_collector *c, const char *kind)
{
    uint64_t n = 0;
    for (size_t i = 0; i < c->ngroups; i++)
        if (strcmp(c->groups[i].kind, kind) == 0) n += c->groups[i].count;
    return n;
}

static int by_kind(const void *a, const void *b)
{
    const kind_group *const *x = a, *const *y = b;
    int d = strcmp((*x)->kind, (*y)->kind);
    return d ? d : (*x < *y ? -1 : *x > *y);
}

/* The groups of one kind beyond the first max(keep, 1) files are told together, on the line
 * of the first of them: 'rest' (NULL: no such line) holds, for that group, how many events,
 * files and the worst severity; the others get rest.files = SIZE_MAX (not printed). */
typedef struct rest_line {
    uint64_t count;
    size_t files;
    ek_severity worst;
} rest_line;

static rest_line *rest_lines(const ek_diag_collector *c)
{
    size_t n = c->ngroups;
    size_t files = c->keep ? c->keep : 1;
    rest_line *r = calloc(n ? n : 1, sizeof *r);
    const kind_group **o = malloc((n ? n : 1) * sizeof *o);
    if (!r || !o) {
        free(r);
        free(o);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        o[i] = &c->groups[i];
    qsort(o, n, sizeof *o, by_kind); /* by kind, then in order of appearance */
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && !strcmp(o[j]->kind, o[i]->kind))
            j++;
        if (j - i > files) {
            rest_line *head = &r[o[i + files] - c->groups];
            head->worst = o[i + files]->worst;
            for (size_t k = i + files; k < j; k++) {
                head->count += o[k]->count;
                if (o[k]->worst > head->worst) head->worst = o[k]->worst;
                if (k > i + files) r[o[k] - c->groups].files = SIZE_MAX;
            }
            head->files = j - i - files;
        }
        i = j;
    }
    free(o);
    return r;
}

void ek_diag_collector_summary(const ek_diag_collector *c, ek_sbuf *out, int verbose)
{
    rest_line *rest = rest_lines(c); /* NULL (no memory): every group on its own line */
    for (int sev = EK_SEV_ERROR; sev >= EK_SEV_NOTE; sev--) {
        for (size_t i = 0; i < c->ngroups; i++) {
            const kind_group *g = &c->groups[i];
            if (rest && rest[i].files == SIZE_MAX) continue;
            if (rest && rest[i].files) {
                if ((int)rest[i].worst == sev)
                    ek_sbuf_printf(out, "%llu x %s in %zu more file%s\n",
                                   (unsigned long long)rest[i].count, g->kind, rest[i].files,
                                   rest[i].files == 1 ? "" : "s");
                continue;
            }
            if ((int)g->worst != sev)
                continue;
            if (g->nkept == 0) {
                ek_sbuf_printf(out, "%llu x %s\n", (unsigned long long)g->count, g->kind);
                continue;
            }
            if (verbose || g->count == 1) {
                for (unsigned k = 0; k < g->nkept; k++) {
                    ek_diag_format(out, &g->kept[k].ev);
                    ek_sbuf_putc(out, '\n');
                }
                if (g->count > g->nkept)
                    ek_sbuf_printf(out, "  ... and %llu more [%s]\n",
                                   (unsigned long long)(g->count - g->nkept), g->kind);
                continue;
            }
            ek_sbuf_printf(out, "%llu x ", (unsigned long long)g->count);
            ek_diag_format(out, &g->kept[0].ev);
            int any = 0;
            for (unsigned k = 1; k < g->nkept; k++) {
                if (g->kept[k].ev.offset < 0)
                    continue;
                ek_sbuf_puts(out, any ? ", " : " (also at offsets ");
                ek_sbuf_printf(out, "0x%llx", (unsigned long long)g->kept[k].ev.offset);
                any = 1;
            }
            if (any)
                ek_sbuf_puts(out, g->count > g->nkept ? ", ...)" : ")");
            ek_sbuf_putc(out, '\n');
        }
    }
    free(rest);
}
