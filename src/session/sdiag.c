/* The session's diagnostics: every one grouped by kind and file for the report (with the
 * example earliest in the file and the lowest offsets, all in that file), and forwarded to the
 * caller's sink, one at a time whatever thread reports it. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/diagkey.h"
#include "core/slots.h"
#include "etmkit/etmkit.h"
#include "session/session_int.h"

/* A group's example event: the one earliest in the file (decoder threads report in any order;
 * the report must not depend on which came first). */
static void group_example(diag_group *g, const ek_diag_event *ev)
{
    free(g->first);
    free(g->msg);
    ek_sbuf line = EK_SBUF_INIT;
    ek_diag_format(&line, ev);
    g->first = line.p ? strdup(line.p) : NULL;
    ek_sbuf_free(&line);
    g->msg = ev->msg ? strdup(ev->msg) : NULL;
    if (!g->file && ev->file) g->file = strdup(ev->file); /* the group's file: kept */
    g->record = ev->record;
    g->trace_id = ev->trace_id;
    g->example_offset = ev->offset;
}

static int earlier(const ek_diag_event *ev, const diag_group *g)
{
    if (ev->offset < 0) return 0;
    if (g->example_offset < 0 || ev->offset != g->example_offset)
        return g->example_offset < 0 || ev->offset < g->example_offset;
    return ev->trace_id < g->trace_id;
}

static size_t group_hash_at(const void *ctx, size_t i)
{
    const diag_group *g = &((const ek_session *)ctx)->dgroups.v[i];
    return ek_diag_key_hash(g->kind, g->file);
}

/* The (kind, file) -> group table (s->dg_slot: index + 1, 0 empty; at most half full) made
 * again with room for 'need' groups. */
static int index_groups(ek_session *s, size_t need)
{
    size_t cap = 16;
    while (cap / 2 < need) {
        if (cap > SIZE_MAX / 4 / sizeof(size_t)) return EK_ERR_NOMEM;
        cap *= 2;
    }
    size_t *slot = ek_slots_build(cap, s->dgroups.n, group_hash_at, s);
    if (!slot) return EK_ERR_NOMEM;
    free(s->dg_slot);
    s->dg_slot = slot;
    s->dg_mask = cap - 1;
    return 0;
}

/* Every diagnostic: grouped by kind and file for the report, forwarded to the caller's sink,
 * one at a time whatever thread reports it. A group is per file so that its example, count
 * and offsets never mix files (a missing file named in one INI file and another named in
 * snapshot.ini are two problems, each with its own offsets). */
void session_diag_fn(void *ctx, const ek_diag_event *ev)
{
    ek_session *s = ctx;
    pthread_mutex_lock(&s->diag_lock);
    const char *kind = ev->kind ? ev->kind : "?";
    diag_group *g = NULL;
    size_t h = 0;
    if ((s->dgroups.n + 1) * 2 <= (s->dg_slot ? s->dg_mask + 1 : 0) ||
        !index_groups(s, s->dgroups.n + 1)) {
        h = ek_diag_key_hash(kind, ev->file) & s->dg_mask;
        for (; s->dg_slot[h]; h = (h + 1) & s->dg_mask) {
            diag_group *x = &s->dgroups.v[s->dg_slot[h] - 1];
            if (!strcmp(x->kind, kind) && ek_diag_key_same_file(x->file, ev->file)) {
                g = x;
                break;
            }
        }
        if (!g) {
            diag_group n;
            memset(&n, 0, sizeof n);
            n.kind = strdup(kind);
            n.sev = ev->sev;
            group_example(&n, ev);
            if (n.kind && (!ev->file || n.file) && !ek_vec_push(&s->dgroups, n)) {
                g = &s->dgroups.v[s->dgroups.n - 1];
                s->dg_slot[h] = s->dgroups.n;
            } else {
                free(n.kind);
                free(n.first);
                free(n.msg);
                free(n.file);
            }
        } else if (earlier(ev, g)) {
            group_example(g, ev);
        }
    }
    if (g) {
        g->count++;
        /* the lowest offsets, in order */
        if (ev->offset >= 0 && (g->noffsets < 8 || ev->offset < g->offsets[7])) {
            unsigned k = g->noffsets < 8 ? g->noffsets++ : 7;
            while (k > 0 && g->offsets[k - 1] > ev->offset) {
                g->offsets[k] = g->offsets[k - 1];
                k--;
            }
            g->offsets[k] = ev->offset;
        }
    }
    /* the caller's sink runs under the lock too: decoder threads report concurrently, and a
     * sink (the CLI's collector) need not be thread-safe */
    if (s->user_diag.fn)
        s->user_diag.fn(s->user_diag.ctx, ev);
    pthread_mutex_unlock(&s->diag_lock);
}

static int dgroup_cmp(const void *a, const void *b)
{
    const diag_group *x = a, *y = b;
    int d = strcmp(x->kind, y->kind);
    if (d) return d;
    if (!x->file || !y->file) return !!x->file - !!y->file;
    return strcmp(x->file, y->file);
}

/* After the decoder threads: the groups in (kind, file) order, not in the order the threads
 * happened to report in, so that the report (which sorts them by the offsets of their examples,
 * where groups of one kind in two files can tie) does not depend on it. */
void session_diag_settle(ek_session *s)
{
    pthread_mutex_lock(&s->diag_lock);
    if (s->dgroups.n > 1) {
        qsort(s->dgroups.v, s->dgroups.n, sizeof *s->dgroups.v, dgroup_cmp);
        if (index_groups(s, s->dgroups.n)) {
            free(s->dg_slot); /* made again at the next event */
            s->dg_slot = NULL;
            s->dg_mask = 0;
        }
    }
    pthread_mutex_unlock(&s->diag_lock);
}
