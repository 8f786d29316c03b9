/* Code for the decoders and the synthesiser: the bytes at an address as a thread saw them,
 * through the address-space timeline and the DSOs, and why there are none when there are
 * none. */
#include <string.h>

#include "etmkit/etmkit.h"
#include "session/qdecode.h"

/* The map and DSO bytes for addr as thread pid saw it during (t_lo, t_hi]. */
int qcode_at(ek_session *s, uint64_t t_lo, uint64_t t_hi, int has_t, uint64_t t, qresult *res,
             int32_t pid, uint64_t addr, ek_mem_span *out, int *kind, as_dso **dso_out,
             int *ambiguous, uint64_t *valid_to)
{
    int how = 0;
    int kernel = is_kernel_addr(addr);
    const as_map *m = as_find(s->as, kernel ? AS_KERNEL_PID : pid, addr, t_lo, t_hi, has_t, t,
                              &how);
    if (ambiguous && !*ambiguous) {
        /* does the choice depend on the time? then time stamps must refresh the decoder */
        int how2 = how;
        if (how == AS_HIT_EXACT || how == AS_HIT_NEAREST)
            as_find(s->as, kernel ? AS_KERNEL_PID : pid, addr, t_lo, t_hi, 0, 0, &how2);
        if (how2 == AS_HIT_AMBIGUOUS)
            *ambiguous = 1;
    }
    if (valid_to && m && how == AS_HIT_EXACT && m->t_to < *valid_to)
        *valid_to = m->t_to;
    if (valid_to && m && how == AS_HIT_NEAREST && m->t_from > t && m->t_from < *valid_to)
        *valid_to = m->t_from; /* from then on it is the one valid at the time */
    *dso_out = NULL;
    dso_span sp;
    if (!m) {
        /* a kernel image given on the command line may hold code no map names */
        const as_dso *k = dso_reg_kernel(s->reg);
        if (kernel && k && dso_code(k, addr, &sp)) {
            out->start = sp.off;
            out->size = sp.size;
            out->data = sp.data;
            return 1;
        }
        *kind = kernel ? MISS_NO_KMAP : MISS_NO_MAP;
        return 0;
    }
    if (res) {
        if (how == AS_HIT_AMBIGUOUS)
            res->ambiguous++;
        else if (how == AS_HIT_LATE)
            res->late++;
    }
    as_dso *d = m->dso;
    *dso_out = d;
    if (!d) {
        *kind = MISS_DSO;
        return 0;
    }
    d->used = 1;
    switch (d->kind) {
    case DSO_KERNEL:
        if (d->status != DSO_OK) {
            *kind = MISS_KERNEL;
            return 0;
        }
        if (!dso_code(d, addr, &sp)) {
            *kind = MISS_OUTSIDE;
            return 0;
        }
        out->start = sp.off;
        out->size = sp.size;
        out->data = sp.data;
        return 1;
    case DSO_KMODULE:
        if (d->status == DSO_OK && d->et_rel) {
            if (!dso_code(d, addr - m->start, &sp)) {
                *kind = MISS_OUTSIDE;
                return 0;
            }
            out->start = m->start + sp.off;
            out->size = sp.size;
            if (out->start + out->size > m->end)
                out->size = m->end > out->start ? m->end - out->start : 0;
            out->data = sp.data;
            return out->size != 0;
        }
        {
            /* no usable .ko: a kernel image (kcore) may still hold the module's code */
            const as_dso *k = dso_reg_kernel(s->reg);
            if (k && k->status == DSO_OK && dso_code(k, addr, &sp)) {
                out->start = sp.off;
                out->size = sp.size;
                out->data = sp.data;
                return 1;
            }
        }
        *kind = MISS_DSO;
        return 0;
    case DSO_USER:
    case DSO_JIT: {
        if (d->status != DSO_OK) {
            *kind = MISS_DSO;
            return 0;
        }
        uint64_t off = m->pgoff + (addr - m->start);
        if (m->pgoff >= d->size || off >= d->size) {
            *kind = MISS_OUTSIDE;
            return 0;
        }
        uint64_t n = m->end - m->start;
        if (n > d->size - m->pgoff)
            n = d->size - m->pgoff;
        out->start = m->start;
        out->size = n;
        out->data = d->bytes + m->pgoff;
        return 1;
    }
    default:
        *kind = MISS_DSO;
        return 0;
    }
}

int qcode_mem_find(void *ctx, uint64_t addr, uint32_t space, uint8_t trace_id, ek_mem_span *out)
{
    (void)space;
    (void)trace_id;
    idst *d = ctx;
    qjob *j = d->j;
    int kind = 0;
    as_dso *dso = NULL;
    if (qcode_at(j->s, j->t_lo, j->t_hi, d->mem_has_t, d->mem_t, j->res, d->mem_pid, addr, out,
                &kind, &dso, &d->time_matters, &d->next_change))
        return 1;
    d->miss_kind = kind;
    d->miss_pid = is_kernel_addr(addr) ? AS_KERNEL_PID : d->mem_pid;
    d->miss_dso = dso;
    d->miss_addr = addr;
    return 0;
}

uint64_t qcode_mem_gen(void *ctx)
{
    return ((idst *)ctx)->gen;
}

/* Code bytes for the synthesiser (SVC checks, instruction bytes), as the sample's thread saw
 * them. */
size_t qcode_synth_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
    idst *d = ctx;
    qjob *j = d->j;
    ek_mem_span sp;
    int kind;
    as_dso *dso;
    if (!qcode_at(j->s, j->t_lo, j->t_hi, d->out_has_t, d->out_t, NULL, d->pid, addr, &sp, &kind,
                 &dso, NULL, NULL))
        return 0;
    uint64_t o = addr - sp.start;
    if (o >= sp.size)
        return 0;
    if (len > sp.size - o)
        len = (size_t)(sp.size - o);
    memcpy(buf, sp.data + o, len);
    return len;
}
