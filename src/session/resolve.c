/* A sample's addresses as its thread saw them: the map at the sample's time (or the one map of
 * its slice's window), the DSO's symbol, and the thread's name; with a decoder thread's last
 * answers kept (consecutive samples are mostly in the same map and often in the same
 * function). */
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "session/qdecode.h"
#include "session/session_int.h"

/* A decoder thread's answers, kept by address range rather than by line: a map that no other
 * map of its process ever overlaps (as_map.alone) is the answer for every address in it at any
 * time, so it is remembered by its range; the symbols found are remembered by their ranges in
 * a table indexed by the address (a few bytes of code share a slot, and every address of a
 * function finds it in the slot it hashes to, once looked up there). A map that others overlap
 * (a library unloaded and another loaded at its addresses) is remembered too when it was the
 * answer at the exact time of a sample: for the addresses no map starts or ends among, and the
 * times as_find_ex said give the same answer. */
#define RC_MAPS      8
#define RC_SYM_BITS  12
#define RC_SYM_GRAIN 4 /* addresses of 16 bytes share a slot */
struct rcache {
    struct {
        const as_map *map; /* alone */
        int32_t pid;
    } m[RC_MAPS];
    unsigned mhit, mnext;
    struct {
        const as_map *map; /* not alone: as_find's exact answer (has_t) */
        int32_t pid;
        uint64_t a_lo, a_hi; /* for these addresses (as_addr_range) */
        uint64_t t_lo, t_hi; /* and these times */
    } x[RC_MAPS];
    unsigned xhit, xnext;
    int last_x; /* the last answer was x[xhit] (tried first: the two kinds never share an
                   address, since an alone map overlaps no other) */
    struct {
        const as_dso *dso; /* a symbol: [lo, hi) in the DSO's key space */
        uint64_t lo, hi, start;
        const char *name;
        uint32_t len;
    } sym[1u << RC_SYM_BITS];
    uint32_t recent[2]; /* the slots of the last two answers (a branch goes from the function
                           the last one went to, often to itself) */
    struct {
        int32_t tid;
        uint64_t lo, hi; /* the times that give comm */
        const char *comm;
    } comm;
};

/* the answer of as_find_ex for addr in an alone map m: m, and for which times */
static void alone_times(rctx *c, const as_map *m)
{
    if (!c->pub.has_t) return;
    uint64_t lo = 0, hi = 0; /* no map valid at t: the answer depends on the window */
    if (m->t_from <= c->pub.t && c->pub.t < m->t_to) {
        lo = m->t_from;
        hi = m->t_to;
    }
    if (lo > c->pub.v_lo) c->pub.v_lo = lo;
    if (hi < c->pub.v_hi) c->pub.v_hi = hi;
}

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
    int from_x = 0;
    if (rc && rc->last_x && c->pub.has_t) {
        unsigned i = rc->xhit;
        uint64_t t = c->pub.t;
        if (rc->x[i].map && rc->x[i].pid == pid && addr >= rc->x[i].a_lo &&
            addr < rc->x[i].a_hi && t >= rc->x[i].t_lo && t < rc->x[i].t_hi) {
            m = rc->x[i].map;
            from_x = 1;
            if (rc->x[i].t_lo > c->pub.v_lo) c->pub.v_lo = rc->x[i].t_lo;
            if (rc->x[i].t_hi < c->pub.v_hi) c->pub.v_hi = rc->x[i].t_hi;
        }
    }
    if (rc && !m)
        for (unsigned n = 0; n < RC_MAPS; n++) {
            unsigned i = (rc->mhit + n) % RC_MAPS;
            const as_map *x = rc->m[i].map;
            if (x && rc->m[i].pid == pid && addr >= x->start && addr < x->end) {
                rc->mhit = i;
                m = x;
                alone_times(c, m);
                break;
            }
        }
    if (rc && !m && c->pub.has_t) {
        uint64_t t = c->pub.t;
        for (unsigned n = 0; n < RC_MAPS; n++) {
            unsigned i = (rc->xhit + n) % RC_MAPS;
            if (rc->x[i].map && rc->x[i].pid == pid && addr >= rc->x[i].a_lo &&
                addr < rc->x[i].a_hi && t >= rc->x[i].t_lo && t < rc->x[i].t_hi) {
                rc->xhit = i;
                m = rc->x[i].map;
                from_x = 1;
                if (rc->x[i].t_lo > c->pub.v_lo) c->pub.v_lo = rc->x[i].t_lo;
                if (rc->x[i].t_hi < c->pub.v_hi) c->pub.v_hi = rc->x[i].t_hi;
                break;
            }
        }
    }
    if (!m) {
        int how;
        uint64_t v_lo, v_hi;
        m = as_find_ex(c->s->as, pid, addr, c->t_lo, c->t_hi, c->pub.has_t, c->pub.t, &how, &v_lo,
                       &v_hi);
        if (v_lo > c->pub.v_lo) c->pub.v_lo = v_lo;
        if (v_hi < c->pub.v_hi) c->pub.v_hi = v_hi;
        if (rc && m && m->alone) {
            unsigned k = rc->mnext++ % RC_MAPS;
            rc->m[k].map = m;
            rc->m[k].pid = pid;
            rc->mhit = k;
        } else if (rc && m && how == AS_HIT_EXACT && c->pub.has_t && v_lo <= c->pub.t &&
                   c->pub.t < v_hi) {
            unsigned k = rc->xnext++ % RC_MAPS;
            as_addr_range(c->s->as, pid, addr, &rc->x[k].a_lo, &rc->x[k].a_hi);
            rc->x[k].map = m;
            rc->x[k].pid = pid;
            rc->x[k].t_lo = v_lo;
            rc->x[k].t_hi = v_hi;
            rc->xhit = k;
            from_x = 1;
        }
    }
    if (rc) rc->last_x = from_x;
    if (!m || !m->dso) return;
    as_dso *d = m->dso;
    out->dso = d->print_name;
    out->dso_len = d->print_len;
    int kind = dso_key_kind(d);
    uint64_t key = kind == DSO_KEY_ABS      ? addr
                   : kind == DSO_KEY_MAPOFF ? addr - m->start
                                            : m->pgoff + (addr - m->start);
    size_t slot = 0;
    if (rc) {
        int hit = 0;
        for (int i = 0; i < 2 && !hit; i++) {
            slot = rc->recent[i];
            hit = rc->sym[slot].dso == d && key >= rc->sym[slot].lo && key < rc->sym[slot].hi;
        }
        if (!hit) {
            uint64_t h = ((key >> RC_SYM_GRAIN) ^ (uint64_t)(uintptr_t)d) * 0x9e3779b97f4a7c15ull;
            slot = (size_t)(h >> (64 - RC_SYM_BITS));
            rc->recent[1] = rc->recent[0];
            rc->recent[0] = (uint32_t)slot;
            /* (a slot may hold a run of addresses without a symbol: name NULL) */
            hit = rc->sym[slot].dso == d && key >= rc->sym[slot].lo && key < rc->sym[slot].hi;
        }
        if (hit) {
            out->sym = rc->sym[slot].name;
            out->sym_len = rc->sym[slot].len;
            out->symoff = key - rc->sym[slot].start;
            return;
        }
    }
    uint64_t lo = 0, hi = 0, start = 0;
    const char *name = dso_symbol_range(d, key, &start, &lo, &hi);
    out->sym = name;
    out->symoff = key - start;
    if (rc && key >= lo && key < hi) {
        rc->sym[slot].dso = d;
        rc->sym[slot].lo = lo;
        rc->sym[slot].hi = hi;
        rc->sym[slot].start = start;
        rc->sym[slot].name = name;
        rc->sym[slot].len = name ? (uint32_t)strlen(name) : 0;
        out->sym_len = rc->sym[slot].len;
    }
}

static const char *comm_of(void *ctx, const ek_sample *smp)
{
    rctx *c = ctx;
    rcache *rc = c->cache;
    uint64_t t = smp->has_time ? smp->time : c->t_hi;
    c->pub.unstable = 1;
    if (!rc) return as_comm_at(c->s->as, smp->tid, t);
    /* the thread's name changes rarely: the last one while t is in its time */
    if (rc->comm.tid != smp->tid || t < rc->comm.lo || t >= rc->comm.hi) {
        rc->comm.comm = as_comm_range(c->s->as, smp->tid, t, &rc->comm.lo, &rc->comm.hi);
        rc->comm.tid = smp->tid;
    }
    return rc->comm.comm;
}

static size_t code_of(void *ctx, const ek_sample *smp, uint64_t addr, void *buf, size_t len)
{
    rctx *c = ctx;
    ek_mem_span sp;
    int kind;
    as_dso *dso;
    c->pub.unstable = 1;
    if (!qcode_at(c->s, c->t_lo, c->t_hi, c->pub.has_t, c->pub.t, NULL, smp->pid, addr, &sp, &kind,
                  &dso, NULL, NULL))
        return 0;
    uint64_t o = addr - sp.start;
    if (o >= sp.size) return 0;
    if (len > sp.size - o) len = (size_t)(sp.size - o);
    memcpy(buf, sp.data + o, len);
    return len;
}

rcache *rcache_new(void)
{
    rcache *rc = calloc(1, sizeof(rcache));
    if (rc) rc->comm.hi = 0; /* (empty: nothing remembered) */
    return rc;
}

void rctx_init(rctx *c, ek_session *s, uint64_t t_lo, uint64_t t_hi, rcache *cache, int has_t,
               uint64_t t)
{
    c->s = s;
    c->cache = cache;
    c->r.resolve = resolve;
    c->r.comm = comm_of;
    c->r.code = code_of;
    c->r.ctx = c;
    c->pub.r = &c->r;
    rctx_sample(c, t_lo, t_hi, has_t, t);
}
