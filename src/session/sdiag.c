/* The session's diagnostics: every one grouped by kind for the report (with the example
 * earliest in the file and the lowest offsets), and forwarded to the caller's sink, one at a
 * time whatever thread reports it. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "session/session_int.h"

/* A group's example event: the one earliest in the file (decoder threads report in any order;
 * the report must not depend on which came first). */
static void group_example(diag_group *g, const ek_diag_event *ev)
{
    free(g->first);
    free(g->msg);
    free(g->file);
    ek_sbuf line = EK_SBUF_INIT;
    ek_diag_format(&line, ev);
    g->first = line.p ? strdup(line.p) : NULL;
    ek_sbuf_free(&line);
    g->msg = ev->msg ? strdup(ev->msg) : NULL;
    g->file = ev->file ? strdup(ev->file) : NULL;
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

/* Every diagnostic: grouped by kind for the report, forwarded to the caller's sink, one at a
 * time whatever thread reports it. */
void session_diag_fn(void *ctx, const ek_diag_event *ev)
{
    ek_session *s = ctx;
    pthread_mutex_lock(&s->diag_lock);
    const char *kind = ev->kind ? ev->kind : "?";
    diag_group *g = NULL;
    for (size_t i = 0; i < s->dgroups.n; i++)
        if (!strcmp(s->dgroups.v[i].kind, kind)) {
            g = &s->dgroups.v[i];
            break;
        }
    if (!g) {
        diag_group n;
        memset(&n, 0, sizeof n);
        n.kind = strdup(kind);
        n.sev = ev->sev;
        group_example(&n, ev);
        if (n.kind && !ek_vec_push(&s->dgroups, n))
            g = &s->dgroups.v[s->dgroups.n - 1];
        else {
            free(n.kind);
            free(n.first);
            free(n.msg);
            free(n.file);
        }
    } else if (earlier(ev, g)) {
        group_example(g, ev);
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
