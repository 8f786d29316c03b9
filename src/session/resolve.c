/* A sample's addresses as its thread saw them: the map at the sample's time (or the one map of
 * its slice's window), the DSO's symbol, and the thread's name; with a decoder thread's last
 * answers kept (consecutive samples are mostly in the same map and often in the same
 * function). */
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "session/qdecode.h"
#include "session/session_int.h"

/* A decoder thread's last answers: consecutive samples are mostly in the same map and often
 * in the same function. */
#define RC_SYMS 8
#define RC_MAPS 4
struct rcache {
    struct {
        const as_map *map;
        int32_t pid;
        uint64_t t_lo, t_hi;
    } m[RC_MAPS];
    unsigned mnext;
    struct {
        const as_dso *dso;      /* recent symbols: [lo, hi) in the DSO's key space */
        uint64_t lo, hi, start;
        const char *name;
        uint32_t len;
    } sym[RC_SYMS];
    unsigned next, hit;
};

static void resolve(void *ctx, const ek_sample *smp, uint64_t addr, int fallback, ek_addr_loc *out)
{
    rctx *c = ctx;
    rcache *rc = c->cache;
    (void)fallback;
    /* perf looks in the sample's cpumode (from the address) and, for branch targets, falls
     * back to the other one; here kernel maps only hold kernel addresses and user maps only
     * user ones (perf lets a kernel map recorded as [0, ~0) or a module's stray section
     * claim user addresses and 0). */
    int kernel = is_kernel_addr(addr);
    int32_t pid = kernel ? AS_KERNEL_PID : smp->pid;
    const as_map *m = NULL;
    if (rc)
        for (unsigned i = 0; i < RC_MAPS; i++) {
            const as_map *x = rc->m[i].map;
            if (x && rc->m[i].pid == pid && addr >= x->start && addr < x->end &&
                rc->m[i].t_lo == c->t_lo && rc->m[i].t_hi == c->t_hi) {
                m = x;
                if (c->pub.has_t) {
                    /* the window's only map: the answer for any t in the window and in its life */
                    uint64_t lo = x->t_from > c->t_lo + 1 ? x->t_from : c->t_lo + 1;
                    uint64_t hi = c->t_hi == UINT64_MAX ? x->t_to
                                  : x->t_to < c->t_hi + 1 ? x->t_to : c->t_hi + 1;
                    if (lo > c->pub.v_lo)
                        c->pub.v_lo = lo;
                    if (hi < c->pub.v_hi)
                        c->pub.v_hi = hi;
                }
                break;
            }
        }
    if (!m) {
        int how;
        uint64_t v_lo, v_hi;
        m = as_find_ex(c->s->as, pid, addr, c->t_lo, c->t_hi, c->pub.has_t, c->pub.t, &how, &v_lo,
                       &v_hi);
        if (v_lo > c->pub.v_lo)
            c->pub.v_lo = v_lo;
        if (v_hi < c->pub.v_hi)
            c->pub.v_hi = v_hi;
        /* only a map that is the only choice during the window can be remembered */
        if (rc && m && how == AS_HIT_WINDOW) {
            unsigned k = rc->mnext++ % RC_MAPS;
            rc->m[k].map = m;
            rc->m[k].pid = pid;
            rc->m[k].t_lo = c->t_lo;
            rc->m[k].t_hi = c->t_hi;
        }
    }
    if (!m || !m->dso)
        return;
    as_dso *d = m->dso;
    out->dso = d->print_name;
    out->dso_len = d->print_len;
    uint64_t key = d->syms_key == DSO_KEY_ABS      ? addr
                   : d->syms_key == DSO_KEY_MAPOFF ? addr - m->start
                                                   : m->pgoff + (addr - m->start);
    if (rc)
        for (unsigned n = 0; n < RC_SYMS; n++) {
            /* start at the last hit: samples alternate between a few functions */
            unsigned i = (rc->hit + n) % RC_SYMS;
            if (rc->sym[i].dso == d && key >= rc->sym[i].lo && key < rc->sym[i].hi) {
                rc->hit = i;
                out->sym = rc->sym[i].name;
                out->sym_len = rc->sym[i].len;
                out->symoff = key - rc->sym[i].start;
                return;
            }
        }
    uint64_t lo = 0, hi = 0, start = 0;
    const char *name = dso_symbol_range(d, key, &start, &lo, &hi);
    out->sym = name;
    out->symoff = key - start;
    if (rc && name && hi > lo) {
        unsigned k = rc->next++ % RC_SYMS;
        rc->sym[k].dso = d;
        rc->sym[k].lo = lo;
        rc->sym[k].hi = hi;
        rc->sym[k].start = start;
        rc->sym[k].name = name;
        rc->sym[k].len = (uint32_t)strlen(name);
        out->sym_len = rc->sym[k].len;
    }
}

static const char *comm_of(void *ctx, const ek_sample *smp)
{
    rctx *c = ctx;
    c->pub.unstable = 1;
    return as_comm_at(c->s->as, smp->tid, smp->has_time ? smp->time : c->t_hi);
}

static size_t code_of(void *ctx, const ek_sample *smp, uint64_t addr, void *buf, size_t len)
{
    rctx *c = ctx;
    ek_mem_span sp;
    int kind;
    as_dso *dso;
    c->pub.unstable = 1;
    if (!qcode_at(c->s, c->t_lo, c->t_hi, c->pub.has_t, c->pub.t, NULL, smp->pid, addr, &sp,
                  &kind, &dso, NULL, NULL))
        return 0;
    uint64_t o = addr - sp.start;
    if (o >= sp.size)
        return 0;
    if (len > sp.size - o)
        len = (size_t)(sp.size - o);
    memcpy(buf, sp.data + o, len);
    return len;
}

rcache *rcache_new(void)
{
    return calloc(1, sizeof(rcache));
}

void rctx_init(rctx *c, ek_session *s, uint64_t t_lo, uint64_t t_hi, rcache *cache, int has_t,
               uint64_t t)
{
    c->s = s;
    c->t_lo = t_lo;
    c->t_hi = t_hi;
    c->cache = cache;
    c->r.resolve = resolve;
    c->r.comm = comm_of;
    c->r.code = code_of;
    c->r.ctx = c;
    c->pub.r = &c->r;
    c->pub.block = 0;
    c->pub.has_t = has_t;
    c->pub.t = t;
    c->pub.unstable = 0;
    c->pub.v_lo = 0;
    c->pub.v_hi = UINT64_MAX;
}
