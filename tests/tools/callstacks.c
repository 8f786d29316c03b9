/* ek_callstacks RECORDING SYMFS [--raw-cpu=N]: the call stack at every branches sample, as the
 * library's stack analysis (etmkit/stacks.h) follows it, in the lines of the simulator's
 * expected-callstacks.txt (docs/SIMULATOR.md), for tests/scripts/stacks_vs_gen.sh:
 *
 *      PID/TID     [CPU]                IP =>             ADDR: LOC <- FRAME <- !FRAME <- ?
 *
 * LOC is sym+0xoff of IP (of ADDR at a trace begin); the frames are the known return
 * addresses, innermost first, "!" before an exception's, "?" for a gap frame (frames the trace
 * did not see), then " (late)" for a late sample's view (ek_stack_view.late). The first
 * line says how stacks are keyed ("# per thread" or "# per thread and
 * trace source": recordings whose samples carry the buffer's thread, perf record --per-thread).
 * The counts (ek_stacks_stats) go to stderr. With EK_CALLSTACKS_NINSN set, every line ends in
 * a tab and the sample's ninsn (its weight in a flame graph: tests/scripts/folded_vs_gen.sh).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "etmkit/session.h"
#include "etmkit/stacks.h"

typedef struct run {
    ek_stacks *st;
    ek_sbuf line;
    FILE *out;
    int quiet;
    int ninsn; /* EK_CALLSTACKS_NINSN=1: the sample's ninsn after a tab */
} run;

static void put_loc(ek_sbuf *o, const ek_script_resolver *r, const ek_sample *s, uint64_t a, int fb)
{
    ek_addr_loc l;
    memset(&l, 0, sizeof l);
    if (a && r && r->resolve) r->resolve(r->ctx, s, a, fb, &l);
    if (a && l.sym)
        ek_sbuf_printf(o, "%.*s+0x%" PRIx64, (int)(l.sym_len ? l.sym_len : strlen(l.sym)), l.sym,
                       l.symoff);
    else
        ek_sbuf_puts(o, "[unknown]");
}

static int on_sample(void *ctx, const ek_sample *s, const ek_script_resolver *r)
{
    run *u = ctx;
    if (s->kind != EK_SAMPLE_BRANCHES || u->quiet > 1) return 0;
    ek_stack_view v;
    int rc = ek_stacks_sample(u->st, s, &v);
    if (rc) return rc;
    if (u->quiet) return 0;
    ek_sbuf *o = &u->line;
    ek_sbuf_reset(o);
    ek_sbuf_printf(o, "%5d/%-5d [%03d]  %16" PRIx64 " => %16" PRIx64 ": ", s->pid, s->tid, s->cpu,
                   s->ip, s->addr);
    /* the frames are the view's thread's (the outgoing one at a switch): its maps */
    ek_sample vs = *s;
    vs.pid = v.pid;
    vs.tid = v.tid;
    put_loc(o, r, &vs, v.at, !s->ip);
    for (uint32_t i = v.n; i--;) {
        const ek_stack_frame *f = &v.frames[i];
        if (f->flags & EK_FRAME_GAP) {
            ek_sbuf_puts(o, " <- ?");
            continue;
        }
        ek_sbuf_puts(o, f->flags & EK_FRAME_EXCEPTION ? " <- !" : " <- ");
        put_loc(o, r, &vs, f->addr, 1);
    }
    if (v.late) ek_sbuf_puts(o, " (late)");
    if (u->ninsn) ek_sbuf_printf(o, "\t%" PRIu64, s->ninsn); /* the weight (folded_vs_gen.sh) */
    if (getenv("EK_CALLSTACKS_DEBUG"))
        ek_sbuf_printf(o, "\t# view %d/%d q%u t%u fl%x isub%u isize%u resume %" PRIx64, v.pid,
                       v.tid, s->queue, s->trace_id, s->flags, s->isub, s->isize, s->resume);
    ek_sbuf_putc(o, '\n');
    if (fwrite(o->p, 1, o->len, u->out) != o->len) return EK_ERR_IO;
    return 0;
}

int main(int argc, char **argv)
{
    /* --raw-cpu=N: the options of the recording's script-options.txt (the user's knowledge the
     * recording lacks), as script takes them */
    unsigned raw_cpu = 0;
    if (argc == 4 && !strncmp(argv[3], "--raw-cpu=", 10))
        raw_cpu = (unsigned)atoi(argv[3] + 10) + 1;
    if (argc != 3 && !(argc == 4 && raw_cpu)) {
        fprintf(stderr, "usage: ek_callstacks RECORDING SYMFS [--raw-cpu=N]\n");
        return 2;
    }
    ek_session_opts o;
    ek_session_opts_init(&o);
    o.symfs = argv[2];
    o.raw_cpu = raw_cpu;
    ek_itrace_parse("b", &o.itrace, NULL);
    ek_session *s;
    if (ek_session_open(argv[1], &o, NULL, &s)) {
        fprintf(stderr, "ek_callstacks: %s: cannot open\n", argv[1]);
        return 1;
    }
    ek_session_info info;
    ek_session_get_info(s, &info);
    ek_stacks_opts so;
    ek_stacks_opts_init(&so);
    so.per_source = !info.samples_have_cpu;
    /* EK_CALLSTACKS_QUIET=1: the stacks without the text; 2: not even the stacks (to time
     * the parts) */
    const char *q = getenv("EK_CALLSTACKS_QUIET");
    run u = {NULL, {0}, stdout, q ? atoi(q) : 0, getenv("EK_CALLSTACKS_NINSN") != NULL};
    if (ek_stacks_new(&so, &u.st)) return 1;
    printf("# per thread%s\n", so.per_source ? " and trace source" : "");
    ek_consumer c;
    ek_consumer_init(&c);
    c.ctx = &u;
    c.sample = on_sample;
    int rc = ek_session_run(s, &c);
    ek_stacks_stats t;
    ek_stacks_get_stats(u.st, &t);
    fprintf(stderr,
            "calls %" PRIu64 " returns %" PRIu64 " exceptions %" PRIu64 " exc_returns %" PRIu64
            " returns_below %" PRIu64 " resyncs %" PRIu64 " unmatched %" PRIu64 " gaps %" PRIu64
            " switches %" PRIu64 " dropped %" PRIu64 " threads %" PRIu64 "\n",
            t.calls, t.returns, t.exceptions, t.exc_returns, t.returns_below, t.resyncs,
            t.unmatched, t.gaps, t.switches, t.dropped, t.threads);
    ek_stacks_free(u.st);
    ek_sbuf_free(&u.line);
    ek_session_free(s);
    return rc ? 1 : 0;
}
