/* The ground truth's sample synthesis: perf's packet and sample rules (cs_etm__set_sample_flags,
 * cs_etm__sample, cs_etm__flush, cs_etm__end_block) applied to the packets of truth_queue.c, and
 * the text of every output file ("lanes"), symbols resolved the way perf resolves them. */
#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"
#include "etmkit/etmkit.h"
#include "sim/truth.h"

/* ------------------------------------------------------------------ perf's symbols */

static int cmp_tr_sym(const void *a, const void *b)
{
    const tr_sym *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static size_t underscores(const char *s)
{
    size_t n = 0;
    while (s[n] == '_')
        n++;
    return n;
}

/* 1 if a is the better of two symbols at one address (perf's choose_best_symbol) */
static int best_a(const tr_sym *a, const tr_sym *b)
{
    uint64_t la = a->end - a->start, lb = b->end - b->start;
    if (!lb && la) return 1;
    if (!la && lb) return 0;
    if ((b->bind == 2) != (a->bind == 2)) return b->bind == 2;
    if ((a->bind == 1) != (b->bind == 1)) return a->bind == 1;
    size_t ua = underscores(a->name), ub = underscores(b->name);
    if (ub != ua) return ub > ua;
    size_t na = strlen(a->name), nb = strlen(b->name);
    if (na != nb) return na > nb;
    return 1;
}

static const uint8_t *sec_named(const sim_image *img, const char *want)
{
    const uint8_t *d = img->data;
    uint64_t shoff = ek_le64(d + 40);
    unsigned shnum = ek_le16(d + 60), shentsize = ek_le16(d + 58), shstrndx = ek_le16(d + 62);
    const uint8_t *ss = d + shoff + (uint64_t)shstrndx * shentsize;
    uint64_t so = ek_le64(ss + 24), sz = ek_le64(ss + 32);
    for (unsigned i = 0; i < shnum; i++) {
        const uint8_t *sh = d + shoff + (uint64_t)i * shentsize;
        uint32_t nm = ek_le32(sh);
        if (nm < sz && !strcmp((const char *)d + so + nm, want)) return sh;
    }
    return NULL;
}

/* perf's "name@plt" symbols: one per .rela.plt entry, 16 bytes each after the 32-byte PLT
 * header (AArch64), added after the fixups */
static int add_plt(const sim_image *img, tr_symtab *t)
{
    const uint8_t *d = img->data;
    const uint8_t *rel = sec_named(img, ".rela.plt"), *plt = sec_named(img, ".plt");
    if (!t->n || !rel || !plt) return 0;
    uint64_t shoff = ek_le64(d + 40);
    unsigned shentsize = ek_le16(d + 58);
    const uint8_t *dyn = d + shoff + (uint64_t)ek_le32(rel + 40) * shentsize;
    const uint8_t *str = d + shoff + (uint64_t)ek_le32(dyn + 40) * shentsize;
    uint64_t roff = ek_le64(rel + 24), rsize = ek_le64(rel + 32);
    uint64_t doff = ek_le64(dyn + 24), stroff = ek_le64(str + 24);
    size_t n = (size_t)(rsize / 24), len = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t sym = (uint32_t)(ek_le64(d + roff + 24 * i + 8) >> 32);
        len += strlen((const char *)d + stroff + ek_le32(d + doff + 24ull * sym)) + 5;
    }
    tr_sym *v = realloc(t->v, (t->n + n) * sizeof(tr_sym));
    t->names = malloc(len + 1);
    if (!v || !t->names) {
        if (v) t->v = v;
        return EK_ERR_NOMEM;
    }
    t->v = v;
    char *o = t->names;
    uint64_t at = ek_le64(plt + 16) + 32;
    for (size_t i = 0; i < n; i++, at += 16) {
        uint32_t sym = (uint32_t)(ek_le64(d + roff + 24 * i + 8) >> 32);
        const char *nm = (const char *)d + stroff + ek_le32(d + doff + 24ull * sym);
        tr_sym *p = &t->v[t->n++];
        p->start = at;
        p->end = at + 16;
        p->name = o;
        p->bind = 1;
        p->order = SIZE_MAX;
        o += sprintf(o, "%s@plt", nm) + 1;
    }
    qsort(t->v, t->n, sizeof(tr_sym), cmp_tr_sym);
    return 0;
}

/* Symbols of an image as perf 6.1 loads them from .symtab (.dynsym when the file is stripped,
 * as Debian's libraries are): functions, objects and labels in allocated (for labels:
 * executable) sections, mapping symbols dropped, zero sizes extended to the next symbol,
 * duplicates at one address reduced to the best one; then a "name@plt" symbol per PLT entry.
 * An image without code (a jitdump, anonymous memory) has none. */
int tr_load_syms(const sim_image *img, tr_symtab *t)
{
    const uint8_t *d = img->data;
    t->v = NULL;
    t->n = 0;
    t->names = NULL;
    if (img->no_code) return 0;
    uint64_t shoff = ek_le64(d + 40);
    unsigned shnum = ek_le16(d + 60), shentsize = ek_le16(d + 58);
    unsigned symtype = 11; /* SHT_DYNSYM, unless there is a SHT_SYMTAB */
    for (unsigned i = 0; i < shnum; i++)
        if (ek_le32(d + shoff + (uint64_t)i * shentsize + 4) == 2) symtype = 2;
    for (unsigned i = 0; i < shnum; i++) {
        const uint8_t *sh = d + shoff + (uint64_t)i * shentsize;
        if (ek_le32(sh + 4) != symtype) continue;
        uint64_t off = ek_le64(sh + 24), size = ek_le64(sh + 32);
        const uint8_t *strsh = d + shoff + (uint64_t)ek_le32(sh + 40) * shentsize;
        uint64_t stroff = ek_le64(strsh + 24);
        size_t n = (size_t)(size / 24);
        t->v = calloc(n ? n : 1, sizeof(tr_sym));
        if (!t->v) return EK_ERR_NOMEM;
        for (size_t k = 0; k < n; k++) {
            const uint8_t *s = d + off + k * 24;
            uint32_t name = ek_le32(s);
            unsigned type = s[4] & 0xF, bind = s[4] >> 4, vis = s[5] & 3;
            uint16_t shndx = ek_le16(s + 6);
            if (!name || shndx == 0 || shndx >= 0xFF00) continue;
            const char *nm = (const char *)d + stroff + name;
            int is_label = type == 0 && vis != 2 && vis != 1;
            if (!is_label && type != 2 && type != 1 && type != 10) continue;
            if (nm[0] == '$' && strchr("adtx", nm[1]) && (nm[2] == 0 || nm[2] == '.')) continue;
            const uint8_t *sec = d + shoff + (uint64_t)shndx * shentsize;
            uint64_t flags = ek_le64(sec + 8);
            if (!(flags & 2)) /* SHF_ALLOC */
                continue;
            if (is_label && !(flags & 4)) /* labels only in executable sections */
                continue;
            tr_sym *p = &t->v[t->n++];
            p->start = ek_le64(s + 8);
            p->end = p->start + ek_le64(s + 16);
            p->name = nm;
            p->bind = bind == 1 ? 1 : bind == 2 ? 2 : 0;
            p->order = k;
        }
    }
    if (!t->n) return 0;
    qsort(t->v, t->n, sizeof(tr_sym), cmp_tr_sym);
    for (size_t i = 1; i < t->n; i++)
        if (t->v[i - 1].end == t->v[i - 1].start) t->v[i - 1].end = t->v[i].start;
    tr_sym *last = &t->v[t->n - 1];
    if (last->end == last->start) last->end = ((last->start + 4095) & ~4095ull) + 4096;
    size_t o = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (o && t->v[o - 1].start == t->v[i].start) {
            if (!best_a(&t->v[o - 1], &t->v[i])) t->v[o - 1] = t->v[i];
            continue;
        }
        t->v[o++] = t->v[i];
    }
    t->n = o;
    return add_plt(img, t);
}

static const tr_sym *find_sym(const tr_symtab *t, uint64_t a)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t->v[mid].start <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo && a < t->v[lo - 1].end) return &t->v[lo - 1];
    return NULL;
}

/* ------------------------------------------------------------------ text */

/* sample flags (perf's PERF_IP_FLAG_*) */
enum {
    F_BRANCH = 1 << 0,
    F_CALL = 1 << 1,
    F_RETURN = 1 << 2,
    F_COND = 1 << 3,
    F_SYSCALLRET = 1 << 4,
    F_ASYNC = 1 << 5,
    F_INTERRUPT = 1 << 6,
    F_TRACE_BEGIN = 1 << 8,
    F_TRACE_END = 1 << 9,
};

const sim_map *tr_map_by_serial(const sim *S, uint32_t serial)
{
    if (!serial) return &S->kernel_map;
    for (size_t i = 0; i < S->nmaps_all; i++)
        if (S->maps_all[i].serial == serial) return &S->maps_all[i];
    return NULL;
}

/* The mapping an address of a sample is named from: the ground truth names the code that
 * ran; perf resolves the address in the maps of the sample's process as they are when it
 * prints. */
static const sim_map *loc_map(const tr_emu *m, uint64_t a, uint32_t serial, int pid)
{
    if (!a) return NULL;
    return m->view == VIEW_TRUE ? tr_map_by_serial(m->S, serial)
                                : tr_perf_map_pid(m->S, m->dec.map_time, pid, a);
}

/* "sym+0xoff" ("[unknown]" without a symbol) */
static void put_sym(const tr_emu *m, ek_sbuf *o, const sim_map *mp, uint64_t a)
{
    int ii = mp ? (int)(mp->img - m->S->images) : -1;
    const tr_sym *s = !mp || (m->view == VIEW_PERF && mp->img->is_kernel && m->S->no_vmlinux)
                          ? NULL
                          : find_sym(&m->syms[ii], a - mp->bias);
    if (s)
        ek_sbuf_printf(o, "%s+0x%llx", s->name, (unsigned long long)(a - mp->bias - s->start));
    else
        ek_sbuf_puts(o, "[unknown]");
}

/* perf script's "ip sym+off (dso)" */
static void put_loc(const tr_emu *m, ek_sbuf *o, uint64_t a, uint32_t serial, int pid)
{
    ek_sbuf_printf(o, "%16llx ", (unsigned long long)a);
    const sim_map *mp = loc_map(m, a, serial, pid);
    if (!mp) {
        ek_sbuf_puts(o, "[unknown] ([unknown])");
        return;
    }
    put_sym(m, o, mp, a);
    ek_sbuf_printf(o, " (%s)",
                   mp->img->is_kernel ? "[kernel.kallsyms]"
                   : mp->path         ? mp->path
                                      : mp->img->blob->path);
}

static const char *flag_name(uint32_t f)
{
    switch (f) {
    case F_BRANCH | F_CALL: return "call";
    case F_BRANCH | F_RETURN: return "return";
    case F_BRANCH | F_COND: return "jcc";
    case F_BRANCH: return "jmp";
    case F_BRANCH | F_CALL | F_INTERRUPT: return "int";
    case F_BRANCH | F_RETURN | F_INTERRUPT: return "iret";
    case F_BRANCH | F_CALL | F_SYSCALLRET: return "syscall";
    case F_BRANCH | F_RETURN | F_SYSCALLRET: return "sysret";
    case F_BRANCH | F_ASYNC: return "async";
    case F_BRANCH | F_CALL | F_ASYNC | F_INTERRUPT: return "hw int";
    case F_BRANCH | F_TRACE_BEGIN: return "tr strt";
    case F_BRANCH | F_TRACE_END: return "tr end";
    default: return NULL;
    }
}

static void flags_str(uint32_t f, char *buf, size_t sz)
{
    const char *n = flag_name(f);
    if (n) {
        snprintf(buf, sz, "%-15s%6s", n, "");
        return;
    }
    if ((f & F_TRACE_BEGIN) && (n = flag_name(f & ~(uint32_t)F_TRACE_BEGIN))) {
        snprintf(buf, sz, "tr strt %-7s%6s", n, "");
        return;
    }
    if ((f & F_TRACE_END) && (n = flag_name(f & ~(uint32_t)F_TRACE_END))) {
        snprintf(buf, sz, "tr end  %-7s%6s", n, "");
        return;
    }
    static const char chars[] = "bcrosyiABExghDt";
    size_t p = 0;
    for (unsigned i = 0; i < 32 && p + 1 < sz; i++)
        if ((f >> i) & 1) buf[p++] = i < sizeof(chars) - 1 ? chars[i] : '?';
    buf[p] = 0;
}

void tr_lanes_flush(tr_emu *m, int force)
{
    for (int i = 0; i < m->nlanes; i++) {
        tr_lane *l = &m->lanes[i];
        if (!l->out.len || (!force && l->out.len < (1u << 20))) continue;
        if (l->f && fwrite(l->out.p, 1, l->out.len, l->f) != l->out.len) m->err = EK_ERR_IO;
        ek_sbuf_reset(&l->out);
    }
}

static void line_done(tr_emu *m, tr_lane *l)
{
    ek_sbuf_putc(&l->out, '\n');
    l->lines++;
    if (l->out.len > (1u << 20)) tr_lanes_flush(m, 0);
}

/* The frames of a call stack, innermost first: the sample's location, then the return
 * address of every frame ("!" before an exception's). */
static void put_frames(const tr_emu *m, ek_sbuf *o, uint64_t at, uint32_t map, uint32_t node)
{
    const sim *S = m->S;
    put_sym(m, o, at ? tr_map_by_serial(S, map) : NULL, at);
    for (uint32_t n = node; n && n < S->snodes.n; n = S->snodes.v[n].parent) {
        const sim_snode *f = &S->snodes.v[n];
        ek_sbuf_puts(o, f->exc ? " <- !" : " <- ");
        put_sym(m, o, tr_map_by_serial(S, f->map), f->addr);
    }
}

/* ------------------------------------------------------------------ samples */

static uint64_t last_executed(const tr_pkt *p)
{
    return p->type == PT_DISCONT ? 0 : p->end - 4;
}

static uint64_t first_executed(const tr_pkt *p)
{
    return p->type == PT_DISCONT ? 0 : p->start;
}

static void put_time(ek_sbuf *o, const tr_tq *t)
{
    if (!t->has_time) return;
    ek_sbuf_printf(o, "%5llu.%09llu: ", (unsigned long long)(t->time / 1000000000ull),
                   (unsigned long long)(t->time % 1000000000ull));
}

/* A branch sample: the last instruction of prev -> the first of pkt. */
static void branch_sample(tr_emu *m, tr_lane *l, tr_tq *t)
{
    uint64_t ip = last_executed(&t->prev), addr = first_executed(&t->pkt);
    ek_sbuf *o = &l->out;
    ek_sbuf_printf(o, "%5d/%-5d [%03d] ", t->pid, t->tid, t->pkt.cpu);
    switch (l->kind) {
    case LANE_BRANCHES: {
        /* --itrace=b -F pid,tid,cpu,flags,ip,sym,symoff,dso,addr */
        char fl[64];
        flags_str(t->prev.flags, fl, sizeof(fl));
        ek_sbuf_printf(o, "  %-21s  ", fl);
        put_loc(m, o, ip, t->prev.map, t->pid);
        ek_sbuf_puts(o, " => ");
        put_loc(m, o, addr, t->pkt.map, t->pid);
        break;
    }
    case LANE_TIMES:
        /* --itrace=b --ns -F pid,tid,cpu,time,ip,addr */
        put_time(o, t);
        ek_sbuf_printf(o, " %16llx => %16llx", (unsigned long long)ip, (unsigned long long)addr);
        break;
    case LANE_STACKS:
        /* the thread's call stack where the branch is (at the trace start: where it starts) */
        ek_sbuf_printf(o, " %16llx => %16llx: ", (unsigned long long)ip, (unsigned long long)addr);
        if (ip)
            put_frames(m, o, ip, t->prev.map, t->prev.stack);
        else
            put_frames(m, o, addr, t->pkt.map, t->pkt.type == PT_RANGE ? t->pkt.stack : 0);
        break;
    default: return;
    }
    line_done(m, l);
}

/* An instruction sample at addr (in the range p) of the given period. */
static void insn_sample(tr_emu *m, tr_lane *l, tr_tq *t, const tr_pkt *p, uint64_t addr,
                        uint64_t period)
{
    ek_sbuf *o = &l->out;
    if (l->kind == LANE_INSNS) {
        /* --itrace=iNi -F pid,tid,cpu,period,ip,sym,symoff,dso */
        ek_sbuf_printf(o, "%5d/%-5d [%03d] %10llu  ", t->pid, t->tid, t->pkt.cpu,
                       (unsigned long long)period);
        put_loc(m, o, addr, p->map, t->pid);
    } else {
        /* --itrace=iNilM -F ip,brstack: the last-branch stack, newest first */
        const tr_lstate *s = &t->ls[l->kind];
        ek_sbuf_printf(o, " %16llx", (unsigned long long)addr);
        uint32_t nr = s->lb_nr < l->lb_sz ? s->lb_nr : l->lb_sz;
        for (uint32_t i = 0; i < nr; i++) {
            uint32_t k = (s->lb_pos + i) % l->lb_sz;
            ek_sbuf_printf(o, " 0x%llx/0x%llx/P/-/-/0/ ", (unsigned long long)s->lb[k].from,
                           (unsigned long long)s->lb[k].to);
        }
    }
    line_done(m, l);
}

/* perf's cs_etm__sample for one lane: a new range (pkt) after prev */
static void lane_range(tr_emu *m, tr_lane *l, tr_tq *t)
{
    tr_lstate *s = &t->ls[l->kind];
    uint64_t prev_insns = s->period_insns;
    s->period_insns += t->pkt.ninstr;
    if (l->last_branch && t->prev.type == PT_RANGE && t->prev.taken) {
        s->lb_pos = s->lb_pos ? s->lb_pos - 1 : l->lb_sz - 1;
        s->lb[s->lb_pos].from = last_executed(&t->prev);
        s->lb[s->lb_pos].to = first_executed(&t->pkt);
        if (s->lb_nr < l->lb_sz) s->lb_nr++;
    }
    if (l->instructions && s->period_insns >= l->period) {
        uint64_t offset = l->period - prev_insns;
        while (s->period_insns >= l->period) {
            insn_sample(m, l, t, &t->pkt, t->pkt.start + 4 * (offset - 1), l->period);
            offset += l->period;
            s->period_insns -= l->period;
        }
    }
    if (l->branches && (t->prev.type == PT_DISCONT || (t->prev.type == PT_RANGE && t->prev.taken)))
        branch_sample(m, l, t);
}

/* perf's cs_etm__flush for one lane: a discontinuity (pkt) after prev */
static void lane_flush(tr_emu *m, tr_lane *l, tr_tq *t)
{
    tr_lstate *s = &t->ls[l->kind];
    if (t->prev.type == PT_RANGE) {
        if (l->last_branch && l->instructions) {
            insn_sample(m, l, t, &t->prev, last_executed(&t->prev), s->period_insns);
            s->period_insns = 0;
        }
        if (l->branches) branch_sample(m, l, t);
    }
    if (l->last_branch) s->lb_pos = s->lb_nr = 0;
}

void tr_end_block(tr_emu *m, tr_tq *t)
{
    if (t->prev.type != PT_RANGE) return;
    for (int i = 0; i < m->nlanes; i++) {
        tr_lane *l = &m->lanes[i];
        if (!l->last_branch || !l->instructions) continue;
        insn_sample(m, l, t, &t->prev, last_executed(&t->prev), t->ls[l->kind].period_insns);
        t->ls[l->kind].period_insns = 0;
    }
}

/* ------------------------------------------------------------------ perf's packet rules */

static int is_etmv4(const tr_emu *m)
{
    /* perf 6.1 compares the ETMv4 magic only; a correct decoder classifies ETE's exceptions,
     * which use the same numbers */
    return m->view == VIEW_TRUE || !m->s->ete;
}

/* Is the word at 'a' an SVC? perf reads it when it sets the flags, through the thread the
 * packet queue has at that moment; the ground truth knows what ran. */
static int svc_at(tr_emu *m, tr_tq *t, uint64_t a, int truth_flag)
{
    if (m->view == VIEW_TRUE) return truth_flag;
    uint32_t w;
    return !tr_perf_word(&m->dec, t->tid, a, &w, NULL) && (w & 0xFFE0001Fu) == 0xD4000001u;
}

/* perf's cs_etm__set_sample_flags */
static void set_flags(tr_emu *m, tr_tq *t)
{
    tr_pkt *p = &t->pkt, *pv = &t->prev;
    switch (p->type) {
    case PT_RANGE:
        switch (p->cls) {
        case SIM_I_B: p->flags = F_BRANCH; break;
        case SIM_I_BCOND: p->flags = F_BRANCH | F_COND; break;
        case SIM_I_BL:
        case SIM_I_BLR: p->flags = F_BRANCH | F_CALL; break;
        case SIM_I_BR:
        case SIM_I_RET: p->flags = F_BRANCH | F_RETURN; break;
        default: break;
        }
        if (pv->type == PT_DISCONT) pv->flags |= F_BRANCH | F_TRACE_BEGIN;
        if (pv->flags == (F_BRANCH | F_RETURN | F_INTERRUPT) &&
            svc_at(m, t, p->start - 4, p->svc_before))
            pv->flags = F_BRANCH | F_RETURN | F_SYSCALLRET;
        break;
    case PT_DISCONT:
        if (pv->type == PT_RANGE) pv->flags |= F_BRANCH | F_TRACE_END;
        break;
    case PT_EXC: {
        int v4 = is_etmv4(m);
        int svc = pv->type == PT_RANGE && svc_at(m, t, pv->end - 4, pv->svc_at_end);
        int e = p->exc;
        if (v4 && e == EK_ETM4_EXC_CALL && svc)
            p->flags = F_BRANCH | F_CALL | F_SYSCALLRET;
        else if (v4 && (e == 0 || e == 1 || e == 4 || e == 6 || e == 7 || e == 14 || e == 15))
            p->flags = F_BRANCH | F_CALL | F_ASYNC | F_INTERRUPT;
        else if (v4 && (e == 3 || e == 10 || e == 11 || e == 12 || (e == 2 && !svc) ||
                        (e > 15 && e <= 31)))
            p->flags = F_BRANCH | F_CALL | F_INTERRUPT;
        if (pv->type == PT_RANGE) pv->flags = p->flags;
        break;
    }
    case PT_EXC_RET:
        if (pv->type == PT_RANGE) pv->flags = F_BRANCH | F_RETURN | F_INTERRUPT;
        break;
    }
}

static void swap(tr_tq *t)
{
    tr_pkt x = t->pkt;
    t->pkt = t->prev;
    t->prev = x;
}

void tr_set_tid(tr_emu *m, tr_tq *t, int tid)
{
    t->tid = tid;
    sim_thread *th = sim_find_thread(m->S, tid);
    if (th && th->proc && tid < (1 << 16) && m->known[tid])
        t->pid = th->proc->pid;
    else if (tid == 0)
        t->pid = 0;
}

void tr_process_tq(tr_emu *m, tr_tq *t)
{
    while (t->qhead < t->q.n) {
        const tr_pkt *q = &t->q.v[t->qhead++];
        if (q->type == PT_CTX) {
            /* ground truth: the new thread owns the ranges that follow, not those before */
            tr_set_tid(m, t, (int)q->start);
            continue;
        }
        if (q->type == PT_TIME) {
            t->time = q->start;
            t->has_time = 1;
            continue;
        }
        t->pkt = *q;
        if (t->pkt.type == PT_NACC) t->pkt.type = PT_DISCONT;
        set_flags(m, t);
        switch (t->pkt.type) {
        case PT_RANGE:
            for (int i = 0; i < m->nlanes; i++)
                lane_range(m, &m->lanes[i], t);
            swap(t);
            break;
        case PT_EXC:
        case PT_EXC_RET:
            if (t->prev.type == PT_RANGE) t->prev.taken = 1;
            break;
        case PT_DISCONT:
            for (int i = 0; i < m->nlanes; i++)
                lane_flush(m, &m->lanes[i], t);
            swap(t);
            break;
        }
    }
    t->q.n = t->qhead = 0;
    t->nreal = 0;
}
