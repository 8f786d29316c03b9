/* perf-script text with call stacks: the callindent column (-F +callindent, --call-trace,
 * --call-ret-trace) and call chains (--itrace=g). The stacks are etmkit/stacks.h's, followed
 * through every sample in output order: these lines are made by an ordered consumer of the
 * session, not on the decoder threads (docs/SCRIPT.md, "Call traces and call chains"). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "etmkit/filter.h"
#include "etmkit/script.h"
#include "etmkit/stacks.h"
#include "script_calltrace.h"

static void loc_of(const ek_script_resolver *r, const ek_sample *s, uint64_t addr, int fb,
                   ek_addr_loc *l)
{
    memset(l, 0, sizeof *l);
    if (r && r->resolve) r->resolve(r->ctx, s, addr, fb, l);
}

static void put_n(ek_sbuf *out, const char *p, uint32_t len)
{
    ek_sbuf_put(out, p, len ? len : strlen(p));
}

static void put_blanks(ek_sbuf *out, size_t n)
{
    if (ek_sbuf_reserve(out, n)) return;
    memset(out->p + out->len, ' ', n);
    out->len += n;
}

void ek__script_put_dso_padded(ek_sbuf *out, const char *dso, uint32_t len, int pad)
{
    size_t n = dso ? (len ? len : strlen(dso)) : 9;
    /* perf formats the name into pad bytes with its NUL (at most pad - 1 characters), then
     * fills with blanks up to pad */
    if (n > (size_t)pad - 1) n = (size_t)pad - 1;
    ek_sbuf_put(out, dso ? dso : "[unknown]", n);
    put_blanks(out, (size_t)pad - n);
}

void ek__script_callindent(ek_sbuf *out, const ek_script_fields *f, const ek_sample *s,
                           const ek_script_resolver *r, const ek_script_extra *x)
{
    uint32_t F = f->fields;
    int spacing0 = 0, *spacing = x && x->spacing ? x->spacing : &spacing0;
    size_t depth = x && !f->flat_callindent && x->depth > 0 ? (size_t)x->depth : 0;
    /* the name: a call's or trace begin's target, the function a return or trace end leaves;
     * its address where it has no symbol; nothing for other branches */
    ek_addr_loc l;
    const char *name = NULL;
    uint32_t name_len = 0;
    uint64_t ip = 0;
    if (s->flags & (EK_SF_CALL | EK_SF_TRACE_BEGIN)) {
        loc_of(r, s, s->addr, 1, &l);
        if (l.sym)
            name = l.sym, name_len = l.sym_len;
        else
            ip = s->addr;
    } else if (s->flags & (EK_SF_RETURN | EK_SF_TRACE_END)) {
        loc_of(r, s, s->ip, 0, &l);
        if (l.sym)
            name = l.sym, name_len = l.sym_len;
        else
            ip = s->ip;
    }
    if ((F & EK_SF_F_DSO) && !(F & (EK_SF_F_IP | EK_SF_F_ADDR))) {
        ek_addr_loc il;
        loc_of(r, s, s->ip, 0, &il);
        ek_sbuf_putc(out, '(');
        if (f->pad_dso > 0)
            ek__script_put_dso_padded(out, il.dso, il.dso_len, f->pad_dso);
        else if (il.dso)
            put_n(out, il.dso, il.dso_len);
        else
            ek_sbuf_puts(out, "[unknown]");
        ek_sbuf_puts(out, ")\t");
    }
    size_t start = out->len;
    if (name) {
        put_blanks(out, depth * 4);
        put_n(out, name, name_len);
    } else if (ip) {
        put_blanks(out, depth * 4);
        ek_sbuf_printf(out, "%16" PRIx64, ip);
    }
    int len = (int)(out->len - start);
    /* perf keeps the column after it from moving with every line: its width grows to the next
     * multiple of 32 past a longer entry, and shrinks only for one shorter by more than 52 */
    if (len > *spacing || (len && len < *spacing - 52)) *spacing = (len + 4 + 31) / 32 * 32;
    if (len < *spacing) put_blanks(out, (size_t)(*spacing - len));
}

void ek__script_chain(ek_sbuf *out, const ek_script_fields *f, const ek_sample *s,
                      const ek_script_resolver *r, const ek_script_extra *x)
{
    uint32_t F = f->fields;
    const ek_sample *ts = x->chain_thread ? x->chain_thread : s;
    for (uint32_t i = 0; i < x->nchain; i++) {
        uint64_t a = x->chain[i];
        ek_addr_loc l;
        if (i == 0)
            loc_of(r, s, a, 0, &l);
        else if (a)
            loc_of(r, ts, a, 1, &l);
        else
            memset(&l, 0, sizeof l); /* a gap: nothing known */
        ek_sbuf_printf(out, "\t%16" PRIx64, a);
        if (F & EK_SF_F_SYM) {
            ek_sbuf_putc(out, ' ');
            if (!l.sym) {
                ek_sbuf_puts(out, "[unknown]");
            } else {
                put_n(out, l.sym, l.sym_len);
                if (F & EK_SF_F_SYMOFF) ek_sbuf_printf(out, "+0x%" PRIx64, l.symoff);
            }
        }
        if (F & EK_SF_F_DSO) {
            ek_sbuf_puts(out, " (");
            if (f->pad_dso > 0)
                ek__script_put_dso_padded(out, l.dso, l.dso_len, f->pad_dso);
            else if (l.dso)
                put_n(out, l.dso, l.dso_len);
            else
                ek_sbuf_puts(out, "[unknown]");
            ek_sbuf_putc(out, ')');
        }
        ek_sbuf_putc(out, '\n');
    }
}

/* ---- the ordered consumer ------------------------------------------------------------------ */

typedef struct ordered {
    const ek_script_fields *f;
    int evw;
    ek_write_fn write;
    void *ctx;
    ek_stacks *st;
    ek_sbuf buf;
    int spacing;
    uint32_t chain_sz; /* 0: no chains */
    uint64_t *chain;
    uint64_t skip; /* --itrace=sN: samples still to leave out */
} ordered;

/* Whether the line of a sample the stacks saw is shown: the selection the session would have
 * made (ek_script_fields.sel_*), in its order -- c / r on branches samples, then s over what
 * they keep, then the filter. */
static int shown(ordered *o, const ek_sample *s, const ek_script_resolver *r)
{
    const ek_script_fields *f = o->f;
    if (f->stack_branches_only && s->kind == EK_SAMPLE_BRANCHES) return 0;
    if (s->kind == EK_SAMPLE_BRANCHES && (f->sel_calls || f->sel_returns)) {
        uint32_t want = 0;
        if (f->sel_calls) want |= EK_SF_CALL | EK_SF_ASYNC | EK_SF_TRACE_END;
        if (f->sel_returns) want |= EK_SF_RETURN | EK_SF_TRACE_BEGIN;
        if (!(s->flags & want)) return 0;
    }
    if (o->skip) {
        o->skip--;
        return 0;
    }
    if (f->sel_filter) {
        const char *comm = f->sel_filter->ncomms && r && r->comm ? r->comm(r->ctx, s) : NULL;
        if (!ek_sample_filter_match(f->sel_filter, s, comm)) return 0;
    }
    return 1;
}

/* perf's chain has room for chain_sz + 1 entries: a context marker (kernel, user) before the
 * ip and before every entry whose context differs from the one before; the markers are not
 * printed. Contexts by address here: the upper half of the address space is the kernel's. */
static uint32_t make_chain(ordered *o, const ek_sample *s, const ek_stack_view *v)
{
    uint32_t slots = o->chain_sz + 1, used = 2, n = 0;
    int last = s->ip >> 63 != 0;
    o->chain[n++] = s->ip;
    for (uint32_t i = v->n; i--;) {
        const ek_stack_frame *fr = &v->frames[i];
        uint64_t a = (fr->flags & EK_FRAME_GAP) ? 0 : fr->addr;
        int c = a >> 63 != 0;
        if (used >= slots) break;
        if (c != last) {
            if (used >= slots - 1) break;
            used++;
            last = c;
        }
        o->chain[n++] = a;
        used++;
    }
    return n;
}

static int flush_buf(ordered *o)
{
    if (!o->buf.len) return 0;
    int rc = o->write(o->ctx, o->buf.p, o->buf.len) ? EK_ERR_IO : 0;
    ek_sbuf_reset(&o->buf);
    return rc;
}

static int on_sample(void *ctx, const ek_sample *s, const ek_script_resolver *r)
{
    ordered *o = ctx;
    ek_stack_view v;
    int rc = ek_stacks_sample(o->st, s, &v);
    if (rc) return rc;
    if (!shown(o, s, r)) return 0;
    ek_script_extra x;
    memset(&x, 0, sizeof x);
    x.spacing = &o->spacing;
    /* the depth of the line: the known frames (a gap frame stands for frames not known) of the
     * function the branch leaves, one more for a call (the function it enters): a call and
     * its return are at one depth, as perf's Intel PT thread stack puts them */
    uint32_t known = v.n - (v.n && (v.frames[0].flags & EK_FRAME_GAP)); /* (only at the bottom) */
    x.depth = (int)known + ((s->flags & EK_SF_CALL) ? 1 : 0);
    ek_sample vs;
    if (o->chain_sz) {
        x.chain = o->chain;
        x.nchain = make_chain(o, s, &v);
        vs = *s;
        vs.pid = v.pid;
        vs.tid = v.tid;
        x.chain_thread = &vs;
    }
    ek_script_format_x(&o->buf, o->f, s, r, o->evw, &x);
    if (o->buf.oom) return EK_ERR_NOMEM;
    return o->buf.len >= (64u << 10) ? flush_buf(o) : 0;
}

int ek__session_script_ordered(ek_session *s, const ek_script_fields *f, int evw, ek_write_fn write,
                               void *ctx)
{
    ek_session_info in;
    ek_session_get_info(s, &in);
    ordered o;
    memset(&o, 0, sizeof o);
    o.f = f;
    o.evw = evw;
    o.write = write;
    o.ctx = ctx;
    o.skip = f->sel_skip;
    if (in.itrace->callchain) {
        o.chain_sz = in.itrace->callchain_sz ? in.itrace->callchain_sz : 16;
        o.chain = malloc(sizeof *o.chain * (o.chain_sz + 1));
        if (!o.chain) return EK_ERR_NOMEM;
    }
    ek_stacks_opts so;
    ek_stacks_opts_init(&so);
    so.per_source = !in.samples_have_cpu;
    int rc = ek_stacks_new(&so, &o.st);
    if (!rc) {
        ek_consumer c;
        ek_consumer_init(&c);
        c.ctx = &o;
        c.no_insn = !(f->fields & (EK_SF_F_INSN | EK_SF_F_INSNLEN));
        c.sample = on_sample;
        rc = ek_session_run(s, &c);
        int wrc = flush_buf(&o);
        if (!rc) rc = wrc;
    }
    ek_stacks_free(o.st);
    ek_sbuf_free(&o.buf);
    free(o.chain);
    return rc;
}
