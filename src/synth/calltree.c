/* Calling contexts weighed by instructions (etmkit/calltree.h).
 *
 * A trie of contexts (node = function under a parent node) in one array, found through a hash
 * of (parent, function); functions interned by (name, file, kind). Per stack followed (a
 * thread, or a thread and CPU as the stacks key them) a memo of the last view: its frames and
 * the nodes they led to, so that frames unchanged since a thread's last sample are neither
 * resolved nor looked up again; the memo is dropped where the stacks lost a thread (a gap:
 * what comes after may be another program at the same addresses) or its comm changed (exec). */
#include <stdlib.h>
#include <string.h>

#include "etmkit/calltree.h"
#include "etmkit/etmkit.h"

#define KERNEL_START (1ull << 63)

typedef struct func {
    ek_calltree_func pub;
    uint32_t hash;
    uint32_t stamp; /* totals: the node whose path last counted it, + 1 */
} func;

/* A resolved name seen before: the resolver hands out the same symbol and file strings for
 * the addresses of one function, so the function is found again by those strings' addresses
 * (checked against its interned text, so a string freed and reused cannot give another
 * function) without copying and hashing them. Names kept as they came only. */
#define NAME_MEMO_BITS 10
typedef struct name_memo {
    const char *sym, *dso;
    uint32_t n, dn;
    uint32_t fn; /* func index + 1, 0: empty */
} name_memo;

typedef struct memo {
    int32_t pid, tid, cpu; /* key (cpu -1 unless stacks are per CPU for it) */
    uint32_t n, cap;       /* frames held */
    ek_stack_frame *frames;
    uint32_t *path;     /* path[0]: the root node (NONE), path[i + 1]: after frame i */
    uint64_t gaps;      /* the stacks' gap count when the memo was made */
    char comm[64];      /* the root's comm ("" none yet) */
    uint32_t root;      /* root node (EK_CALLTREE_NONE: no root frame) */
    uint64_t last_ip;   /* the last sample's leaf, when no gap came since */
    uint32_t last_leaf; /* its node */
    int pending_call;   /* the last sample was a call the filter kept */
} memo;

struct ek_calltree {
    ek_calltree_opts o;
    ek_stacks *st;
    func *funcs;
    size_t nfuncs, capfuncs;
    uint32_t *fhash; /* func index + 1, 0: empty */
    size_t fhcap;
    ek_calltree_node *nodes;
    uint32_t *nhash_next; /* per node: next in its bucket (+1) */
    size_t nnodes, capnodes;
    uint32_t *nhash; /* node index + 1 */
    size_t nhcap;
    memo *memos;
    size_t nmemos, capmemos;
    uint32_t *mhash; /* memo index + 1 */
    size_t mhcap;
    ek_sbuf tmp;
    ek_calltree_stats stats;
    int totals_done;
    uint32_t gap_func; /* "[gap]" (+1; 0: not yet) */
    name_memo names[1u << NAME_MEMO_BITS];
};

void ek_calltree_opts_init(ek_calltree_opts *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->root = EK_CALLTREE_ROOT_COMM;
    o->max_depth = 1024;
}

int ek_calltree_new(const ek_calltree_opts *o, ek_calltree **out)
{
    *out = NULL;
    ek_calltree *ct = calloc(1, sizeof *ct);
    if (!ct) return EK_ERR_NOMEM;
    ek_calltree_opts_init(&ct->o);
    if (o) memcpy(&ct->o, o, o->size < sizeof ct->o ? o->size : sizeof ct->o);
    ct->o.size = sizeof ct->o;
    ek_stacks_opts so;
    ek_stacks_opts_init(&so);
    if (ct->o.max_depth) so.max_depth = ct->o.max_depth;
    so.per_source = ct->o.per_source;
    int rc = ek_stacks_new(&so, &ct->st);
    if (rc) {
        free(ct);
        return rc;
    }
    *out = ct;
    return 0;
}

void ek_calltree_free(ek_calltree *ct)
{
    if (!ct) return;
    ek_stacks_free(ct->st);
    for (size_t i = 0; i < ct->nfuncs; i++) {
        free((char *)ct->funcs[i].pub.name);
        free((char *)ct->funcs[i].pub.dso);
    }
    free(ct->funcs);
    free(ct->fhash);
    free(ct->nodes);
    free(ct->nhash_next);
    free(ct->nhash);
    for (size_t i = 0; i < ct->nmemos; i++) {
        free(ct->memos[i].frames);
        free(ct->memos[i].path);
    }
    free(ct->memos);
    free(ct->mhash);
    ek_sbuf_free(&ct->tmp);
    free(ct);
}

static uint32_t hash_bytes(uint32_t h, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)p[i]) * 16777619u;
    return h;
}

static uint32_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return (uint32_t)x;
}

/* ---- functions ------------------------------------------------------------------------------ */

static int fhash_grow(ek_calltree *ct)
{
    size_t cap = ct->fhcap ? ct->fhcap * 2 : 256;
    uint32_t *h = calloc(cap, sizeof *h);
    if (!h) return EK_ERR_NOMEM;
    for (size_t i = 0; i < ct->nfuncs; i++) {
        size_t j = ct->funcs[i].hash & (cap - 1);
        while (h[j])
            j = (j + 1) & (cap - 1);
        h[j] = (uint32_t)i + 1;
    }
    free(ct->fhash);
    ct->fhash = h;
    ct->fhcap = cap;
    return 0;
}

static char *dup_n(const char *p, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, p, n);
        d[n] = 0;
    }
    return d;
}

/* The function named name[0, n) in file dso[0, dn), interned: its index, or -1 (no memory). */
static int64_t intern(ek_calltree *ct, const char *name, size_t n, const char *dso, size_t dn,
                      int kind)
{
    uint32_t h = hash_bytes(hash_bytes(2166136261u ^ (uint32_t)kind, name, n), dso, dn);
    if ((ct->nfuncs + 1) * 2 > ct->fhcap && fhash_grow(ct)) return -1;
    size_t j = h & (ct->fhcap - 1);
    for (; ct->fhash[j]; j = (j + 1) & (ct->fhcap - 1)) {
        func *f = &ct->funcs[ct->fhash[j] - 1];
        if (f->hash == h && f->pub.kind == kind && !strncmp(f->pub.name, name, n) &&
            !f->pub.name[n] && !strncmp(f->pub.dso, dso, dn) && !f->pub.dso[dn])
            return ct->fhash[j] - 1;
    }
    if (ct->nfuncs == ct->capfuncs) {
        size_t cap = ct->capfuncs ? ct->capfuncs * 2 : 64;
        func *nf = realloc(ct->funcs, cap * sizeof *nf);
        if (!nf) return -1;
        ct->funcs = nf;
        ct->capfuncs = cap;
    }
    func *f = &ct->funcs[ct->nfuncs];
    memset(f, 0, sizeof *f);
    f->pub.name = dup_n(name, n);
    f->pub.dso = dup_n(dso, dn);
    if (!f->pub.name || !f->pub.dso) {
        free((char *)f->pub.name);
        free((char *)f->pub.dso);
        return -1;
    }
    f->pub.kind = kind;
    f->hash = h;
    ct->fhash[j] = (uint32_t)ct->nfuncs + 1;
    ct->totals_done = 0;
    return (int64_t)ct->nfuncs++;
}

static name_memo *name_slot(ek_calltree *ct, const char *sym, const char *dso)
{
    uint64_t h =
        ((uint64_t)(uintptr_t)sym ^ ((uint64_t)(uintptr_t)dso << 17)) * 0x9E3779B97F4A7C15ull;
    return &ct->names[h >> (64 - NAME_MEMO_BITS)];
}

/* The function holding addr (fallback: the resolver's, 1 for frames and targets). */
static int64_t resolve_func(ek_calltree *ct, const ek_script_resolver *r, const ek_sample *s,
                            uint64_t addr, int fallback)
{
    ek_addr_loc l;
    memset(&l, 0, sizeof l);
    if (r && r->resolve) r->resolve(r->ctx, s, addr, fallback, &l);
    ct->stats.resolves++;
    size_t dn = l.dso ? (l.dso_len ? l.dso_len : strlen(l.dso)) : 0;
    ek_sbuf *t = &ct->tmp;
    ek_sbuf_reset(t);
    int kind;
    name_memo *nm = NULL;
    if (l.sym) {
        kind = EK_CTF_SYM;
        size_t n = l.sym_len ? l.sym_len : strlen(l.sym);
        if (ct->o.annotate_kernel && addr >= KERNEL_START) {
            ek_sbuf_put(t, l.sym, n);
            ek_sbuf_puts(t, "_[k]");
        } else if (n <= UINT32_MAX && dn <= UINT32_MAX) {
            nm = name_slot(ct, l.sym, l.dso);
            if (nm->fn && nm->sym == l.sym && nm->dso == l.dso && nm->n == n && nm->dn == dn) {
                const ek_calltree_func *f = &ct->funcs[nm->fn - 1].pub;
                if (!memcmp(f->name, l.sym, n) && !f->name[n] &&
                    (!dn || !memcmp(f->dso, l.dso, dn)) && !f->dso[dn])
                    return nm->fn - 1;
            }
            ek_sbuf_put(t, l.sym, n);
        } else {
            ek_sbuf_put(t, l.sym, n);
        }
    } else if (l.dso && dn) {
        kind = EK_CTF_NOSYM;
        size_t b = dn;
        while (b && l.dso[b - 1] != '/')
            b--;
        ek_sbuf_putc(t, '[');
        /* "[kernel.kallsyms]" and the like are bracketed already */
        if (l.dso[b] == '[' && l.dso[dn - 1] == ']')
            ek_sbuf_put(t, l.dso + b + 1, dn - b - 2);
        else
            ek_sbuf_put(t, l.dso + b, dn - b);
        ek_sbuf_putc(t, ']');
    } else {
        kind = EK_CTF_NOSYM;
        ek_sbuf_puts(t, "[unknown]");
    }
    if (t->oom || !t->p) return -1;
    int verbatim = 1;
    for (size_t i = 0; i < t->len; i++)
        if (t->p[i] == ';')
            t->p[i] = ':', verbatim = 0;
        else if (t->p[i] == '\n')
            t->p[i] = ' ', verbatim = 0;
    int64_t fn = intern(ct, t->p, t->len, l.dso ? l.dso : "", dn, kind);
    if (nm && fn >= 0 && verbatim && fn < UINT32_MAX)
        *nm = (name_memo){l.sym, l.dso, (uint32_t)t->len, (uint32_t)dn, (uint32_t)fn + 1};
    return fn;
}

/* ---- nodes ---------------------------------------------------------------------------------- */

static uint32_t node_hash(uint32_t parent, uint32_t fn)
{
    return mix64(((uint64_t)parent << 32) | fn);
}

static int nhash_grow(ek_calltree *ct)
{
    size_t cap = ct->nhcap ? ct->nhcap * 2 : 1024;
    uint32_t *h = calloc(cap, sizeof *h);
    if (!h) return EK_ERR_NOMEM;
    for (size_t i = 0; i < ct->nnodes; i++) {
        size_t j = node_hash(ct->nodes[i].parent, ct->nodes[i].func) & (cap - 1);
        ct->nhash_next[i] = h[j];
        h[j] = (uint32_t)i + 1;
    }
    free(ct->nhash);
    ct->nhash = h;
    ct->nhcap = cap;
    return 0;
}

/* The node of fn under parent, made when new: its index, or -1. */
static int64_t child(ek_calltree *ct, uint32_t parent, uint32_t fn)
{
    if (ct->nhcap) {
        size_t j = node_hash(parent, fn) & (ct->nhcap - 1);
        for (uint32_t k = ct->nhash[j]; k; k = ct->nhash_next[k - 1]) {
            ek_calltree_node *n = &ct->nodes[k - 1];
            if (n->parent == parent && n->func == fn) return k - 1;
        }
    }
    if (ct->nnodes + 1 >= UINT32_MAX) return -1;
    if (ct->nnodes == ct->capnodes) {
        size_t cap = ct->capnodes ? ct->capnodes * 2 : 1024;
        ek_calltree_node *nn = realloc(ct->nodes, cap * sizeof *nn);
        if (!nn) return -1;
        ct->nodes = nn;
        uint32_t *nx = realloc(ct->nhash_next, cap * sizeof *nx);
        if (!nx) return -1;
        ct->nhash_next = nx;
        ct->capnodes = cap;
    }
    if ((ct->nnodes + 1) * 2 > ct->nhcap && nhash_grow(ct)) return -1;
    size_t i = ct->nnodes++;
    ct->nodes[i] = (ek_calltree_node){parent, fn, 0};
    size_t j = node_hash(parent, fn) & (ct->nhcap - 1);
    ct->nhash_next[i] = ct->nhash[j];
    ct->nhash[j] = (uint32_t)i + 1;
    ct->totals_done = 0;
    return (int64_t)i;
}

/* ---- memos ---------------------------------------------------------------------------------- */

static uint32_t memo_hash(int32_t pid, int32_t tid, int32_t cpu)
{
    return mix64(((uint64_t)(uint32_t)pid << 32) ^ (uint32_t)tid ^ ((uint64_t)(uint32_t)cpu << 16));
}

static memo *memo_get(ek_calltree *ct, int32_t pid, int32_t tid, int32_t cpu)
{
    if (ct->mhcap) {
        size_t j = memo_hash(pid, tid, cpu) & (ct->mhcap - 1);
        for (; ct->mhash[j]; j = (j + 1) & (ct->mhcap - 1)) {
            memo *m = &ct->memos[ct->mhash[j] - 1];
            if (m->pid == pid && m->tid == tid && m->cpu == cpu) return m;
        }
    }
    if ((ct->nmemos + 1) * 2 > ct->mhcap) {
        size_t cap = ct->mhcap ? ct->mhcap * 2 : 64;
        uint32_t *h = calloc(cap, sizeof *h);
        if (!h) return NULL;
        for (size_t i = 0; i < ct->nmemos; i++) {
            memo *m = &ct->memos[i];
            size_t j = memo_hash(m->pid, m->tid, m->cpu) & (cap - 1);
            while (h[j])
                j = (j + 1) & (cap - 1);
            h[j] = (uint32_t)i + 1;
        }
        free(ct->mhash);
        ct->mhash = h;
        ct->mhcap = cap;
    }
    if (ct->nmemos == ct->capmemos) {
        size_t cap = ct->capmemos ? ct->capmemos * 2 : 16;
        memo *nm = realloc(ct->memos, cap * sizeof *nm);
        if (!nm) return NULL;
        ct->memos = nm;
        ct->capmemos = cap;
    }
    memo *m = &ct->memos[ct->nmemos];
    memset(m, 0, sizeof *m);
    m->pid = pid;
    m->tid = tid;
    m->cpu = cpu;
    m->root = EK_CALLTREE_NONE;
    m->last_leaf = EK_CALLTREE_NONE;
    size_t j = memo_hash(pid, tid, cpu) & (ct->mhcap - 1);
    while (ct->mhash[j])
        j = (j + 1) & (ct->mhcap - 1);
    ct->mhash[j] = (uint32_t)ct->nmemos + 1;
    ct->nmemos++;
    return m;
}

static int memo_reserve(memo *m, uint32_t n)
{
    if (n <= m->cap && m->path) return 0;
    uint32_t cap = m->cap ? m->cap : 16;
    while (cap < n)
        cap *= 2;
    ek_stack_frame *f = realloc(m->frames, cap * sizeof *f);
    if (!f) return EK_ERR_NOMEM;
    m->frames = f;
    uint32_t *p = realloc(m->path, (cap + 1) * sizeof *p);
    if (!p) return EK_ERR_NOMEM;
    m->path = p;
    m->cap = cap;
    return 0;
}

/* The root frame's label for the thread (comm as stackcollapse-perf.pl writes it). */
static int64_t root_func(ek_calltree *ct, const char *comm, const ek_sample *vs)
{
    ek_sbuf *t = &ct->tmp;
    ek_sbuf_reset(t);
    if (comm)
        for (const char *c = comm; *c; c++)
            ek_sbuf_putc(t, *c == ' ' ? '_' : *c == ';' ? ':' : *c);
    else
        ek_sbuf_printf(t, ":%d", (int)vs->tid);
    if (ct->o.root == EK_CALLTREE_ROOT_PID)
        ek_sbuf_printf(t, "-%d", (int)vs->pid);
    else if (ct->o.root == EK_CALLTREE_ROOT_TID)
        ek_sbuf_printf(t, "-%d/%d", (int)vs->pid, (int)vs->tid);
    if (t->oom || !t->p) return -1;
    return intern(ct, t->p, t->len, "", 0, EK_CTF_ROOT);
}

/* ---- samples -------------------------------------------------------------------------------- */

int ek_calltree_sample(ek_calltree *ct, const ek_sample *s, const ek_script_resolver *r)
{
    if (s->kind != EK_SAMPLE_BRANCHES) return 0;
    ek_stack_view v;
    int rc = ek_stacks_sample(ct->st, s, &v);
    if (rc) return rc;
    ct->stats.samples++;
    ek_sample vs = *s; /* the view's thread (the outgoing one at a switch): its maps, its comm */
    vs.pid = v.pid;
    vs.tid = v.tid;
    int32_t mcpu = ct->o.per_source || (v.pid == 0 && v.tid == 0) ? s->cpu : -1;
    memo *m = memo_get(ct, v.pid, v.tid, mcpu);
    if (!m) return EK_ERR_NOMEM;
    ek_stacks_stats sst;
    ek_stacks_get_stats(ct->st, &sst);
    if (sst.gaps != m->gaps) { /* a thread lost: whatever follows may be another program */
        m->gaps = sst.gaps;
        m->n = 0;
        m->last_leaf = EK_CALLTREE_NONE;
    }
    const char *comm = NULL;
    int keep = 1;
    if (ct->o.filter) {
        if (ct->o.filter->ncomms && r && r->comm) comm = r->comm(r->ctx, s);
        keep = ek_sample_filter_match(ct->o.filter, s, comm);
    }
    int pending = m->pending_call;
    m->pending_call = keep && (s->flags & EK_SF_CALL) && s->isub == EK_ISUB_BR_LINK && s->addr;
    ct->stats.weighed += keep != 0;
    if (s->ip == 0 || (s->flags & EK_SF_TRACE_BEGIN)) {
        m->last_leaf = EK_CALLTREE_NONE; /* trace begins again: code may have changed */
        return 0;
    }
    if (!keep) return 0;
    ct->stats.instructions += s->ninsn;
    /* the root frame: the thread's comm now (an exec changes it: a new program) */
    if (ct->o.root != EK_CALLTREE_ROOT_NONE) {
        const char *c = r && r->comm ? r->comm(r->ctx, &vs) : NULL;
        /* the comm as the memo keeps it: its first sizeof m->comm - 1 bytes */
        size_t n = c ? strnlen(c, sizeof m->comm - 1) : 0;
        if (m->root == EK_CALLTREE_NONE || m->comm[n] || (n && memcmp(c, m->comm, n))) {
            if (m->root != EK_CALLTREE_NONE) { /* exec: the memo is of another program */
                m->n = 0;
                m->last_leaf = EK_CALLTREE_NONE;
            }
            int64_t fn = root_func(ct, c, &vs);
            if (fn < 0) return EK_ERR_NOMEM;
            int64_t nd = child(ct, EK_CALLTREE_NONE, (uint32_t)fn);
            if (nd < 0) return EK_ERR_NOMEM;
            m->root = (uint32_t)nd;
            if (n) memcpy(m->comm, c, n);
            m->comm[n] = 0;
            m->n = 0;
        }
    }
    if (memo_reserve(m, v.n)) return EK_ERR_NOMEM;
    /* frames the memo holds unchanged keep their nodes */
    uint32_t p = 0, lim = v.n < m->n ? v.n : m->n;
    while (p < lim && v.frames[p].addr == m->frames[p].addr &&
           v.frames[p].flags == m->frames[p].flags)
        p++;
    m->path[0] = m->root;
    if (p != m->n || p != v.n) m->last_leaf = EK_CALLTREE_NONE;
    for (uint32_t i = p; i < v.n; i++) {
        const ek_stack_frame *f = &v.frames[i];
        int64_t fn;
        if (f->flags & EK_FRAME_GAP) {
            if (!ct->gap_func) {
                fn = intern(ct, "[gap]", 5, "", 0, EK_CTF_GAP);
                if (fn < 0) return EK_ERR_NOMEM;
                ct->gap_func = (uint32_t)fn + 1;
            }
            fn = ct->gap_func - 1;
        } else {
            fn = resolve_func(ct, r, &vs, f->addr, 1);
        }
        if (fn < 0) return EK_ERR_NOMEM;
        int64_t nd = child(ct, m->path[i], (uint32_t)fn);
        if (nd < 0) return EK_ERR_NOMEM;
        m->frames[i] = *f;
        m->path[i + 1] = (uint32_t)nd;
    }
    m->n = v.n;
    /* the leaf: the function of ip (the same node as the last sample's at the same ip, with
     * the same frames and no trace gap since) */
    uint32_t leaf;
    if (m->last_leaf != EK_CALLTREE_NONE && m->last_ip == v.at) {
        leaf = m->last_leaf;
    } else {
        int64_t fn = resolve_func(ct, r, &vs, v.at, 0);
        if (fn < 0) return EK_ERR_NOMEM;
        int64_t nd = child(ct, m->path[v.n], (uint32_t)fn);
        if (nd < 0) return EK_ERR_NOMEM;
        leaf = (uint32_t)nd;
    }
    m->last_ip = v.at;
    m->last_leaf = leaf;
    ct->nodes[leaf].self += s->ninsn;
    if (pending) ct->funcs[ct->nodes[leaf].func].pub.calls++;
    ct->totals_done = 0;
    return 0;
}

/* ---- results -------------------------------------------------------------------------------- */

size_t ek_calltree_nfuncs(const ek_calltree *ct)
{
    return ct->nfuncs;
}
size_t ek_calltree_nnodes(const ek_calltree *ct)
{
    return ct->nnodes;
}

const ek_calltree_node *ek_calltree_node_get(const ek_calltree *ct, size_t i)
{
    return i < ct->nnodes ? &ct->nodes[i] : NULL;
}

static void totals(ek_calltree *ct)
{
    for (size_t i = 0; i < ct->nfuncs; i++) {
        ct->funcs[i].pub.self = ct->funcs[i].pub.total = 0;
        ct->funcs[i].stamp = 0;
    }
    for (size_t i = 0; i < ct->nnodes; i++) {
        const ek_calltree_node *n = &ct->nodes[i];
        if (!n->self) continue;
        ct->funcs[n->func].pub.self += n->self;
        for (uint32_t k = (uint32_t)i; k != EK_CALLTREE_NONE; k = ct->nodes[k].parent) {
            func *f = &ct->funcs[ct->nodes[k].func];
            if (f->stamp == (uint32_t)i + 1) continue; /* recursion: once */
            f->stamp = (uint32_t)i + 1;
            f->pub.total += n->self;
        }
    }
    ct->totals_done = 1;
}

const ek_calltree_func *ek_calltree_func_get(ek_calltree *ct, size_t i)
{
    if (i >= ct->nfuncs) return NULL;
    if (!ct->totals_done) totals(ct);
    return &ct->funcs[i].pub;
}

void ek_calltree_get_stats(const ek_calltree *ct, ek_calltree_stats *out)
{
    *out = ct->stats;
    out->nodes = ct->nnodes;
    out->funcs = ct->nfuncs;
}

const ek_stacks *ek_calltree_stacks(const ek_calltree *ct)
{
    return ct->st;
}

typedef struct item {
    const char *p; /* the stack's text */
    size_t off, len;
    uint64_t count;
} item;

static int item_cmp(const void *a, const void *b)
{
    const item *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->p, y->p, n);
    if (c) return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

int ek_calltree_folded(const ek_calltree *ct, ek_sbuf *out)
{
    size_t nl = 0;
    for (size_t i = 0; i < ct->nnodes; i++)
        nl += ct->nodes[i].self != 0;
    if (!nl) return 0;
    ek_sbuf text = EK_SBUF_INIT;
    item *it = calloc(nl, sizeof *it);
    uint32_t *chain = NULL;
    size_t chain_cap = 0, k = 0;
    int rc = it ? 0 : EK_ERR_NOMEM;
    for (size_t i = 0; !rc && i < ct->nnodes; i++) {
        if (!ct->nodes[i].self) continue;
        size_t d = 0;
        for (uint32_t j = (uint32_t)i; j != EK_CALLTREE_NONE; j = ct->nodes[j].parent) {
            if (d == chain_cap) {
                size_t cap = chain_cap ? chain_cap * 2 : 64;
                uint32_t *c = realloc(chain, cap * sizeof *c);
                if (!c) {
                    rc = EK_ERR_NOMEM;
                    break;
                }
                chain = c;
                chain_cap = cap;
            }
            chain[d++] = j;
        }
        if (rc) break;
        it[k].off = text.len;
        while (d--) {
            ek_sbuf_puts(&text, ct->funcs[ct->nodes[chain[d]].func].pub.name);
            if (d) ek_sbuf_putc(&text, ';');
        }
        it[k].len = text.len - it[k].off;
        it[k].count = ct->nodes[i].self;
        k++;
    }
    free(chain);
    if (!rc && (text.oom || !text.p)) rc = EK_ERR_NOMEM;
    if (!rc) {
        for (size_t i = 0; i < nl; i++)
            it[i].p = text.p + it[i].off;
        qsort(it, nl, sizeof *it, item_cmp);
        for (size_t i = 0; i < nl;) {
            /* contexts whose names are equal (a name in two files, or two JIT mappings) are
             * one line */
            uint64_t count = it[i].count;
            size_t j = i + 1;
            for (; j < nl && !item_cmp(&it[i], &it[j]); j++)
                count += it[j].count;
            ek_sbuf_put(out, it[i].p, it[i].len);
            ek_sbuf_putc(out, ' ');
            ek_sbuf_dec(out, count);
            ek_sbuf_putc(out, '\n');
            i = j;
        }
        if (out->oom) rc = EK_ERR_NOMEM;
    }
    free(it);
    ek_sbuf_free(&text);
    return rc;
}
