/* Snapshot folder writer (the DS-5 / OpenCSD test format, ../shared/docs/snapshot-format.md).
 *
 * A snapshot scenario runs like a perf session whose sink is never read until the end (a
 * debugger halts the system and saves the buffers). The folder OUT/snapshot/ gets:
 *   snapshot.ini        device list and trace metadata pointer
 *   cpu_N.ini           one core per CPU: registers and [dumpN] memory images of every code
 *                       segment that ran (the process's executable and libraries, the kernel)
 *   ETM_N.ini / ETE_N.ini  the trace unit of CPU N: the [regs] its encoder used
 *   trace.ini           buffers, source -> buffer and core -> source maps
 *   *.bin               the trace buffers and the memory images
 * A shared ETR gives one CoreSight-formatted buffer holding every CPU's trace ID; per-CPU TRBEs
 * give one raw (source_data) buffer per CPU. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "sim/sim.h"

typedef struct snap {
    const char *dir;
    int err;
} snap;

static FILE *open_in(snap *w, const char *name)
{
    size_t n = strlen(w->dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (!p) {
        w->err = EK_ERR_NOMEM;
        return NULL;
    }
    snprintf(p, n, "%s/%s", w->dir, name);
    FILE *f = sim_fopen(p);
    free(p);
    if (!f) w->err = EK_ERR_IO;
    return f;
}

static void close_file(snap *w, FILE *f)
{
    if (f && sim_fclose(f)) w->err = EK_ERR_IO;
}

static void write_bytes(snap *w, const char *name, const void *p, size_t n)
{
    FILE *f = open_in(w, name);
    if (f && n && fwrite(p, 1, n, f) != n) w->err = EK_ERR_IO;
    close_file(w, f);
}

/* the bytes of a queue's AUX records, in record order (what the sink held) */
static uint8_t *queue_bytes(const sim_session *s, int queue, size_t *len)
{
    size_t n = 0;
    for (size_t i = 0; i < s->auxrecs.n; i++)
        if (s->auxrecs.v[i].queue == queue) n += s->auxrecs.v[i].size;
    uint8_t *b = malloc(n ? n : 1);
    if (!b) return NULL;
    const sim_event *ev = &s->events[queue];
    size_t at = 0;
    for (size_t i = 0; i < s->auxrecs.n; i++) {
        const sim_auxrec *a = &s->auxrecs.v[i];
        if (a->queue != queue) continue;
        for (uint64_t k = 0; k < a->size; k++)
            b[at++] = ev->ring[(a->offset + k) & (ev->ring_size - 1)];
    }
    *len = n;
    return b;
}

/* A halted system keeps only what its buffers hold now: the last copy of each raw sink (per
 * queue) or of the shared sink. Earlier copies (a TRBE that filled and restarted) are dropped
 * from the session so that the ground truth describes exactly the saved buffers. */
void sim_snapshot_prune(sim *S)
{
    if (!S->nsessions) return;
    sim_session *s = &S->sessions[0];
    const int raw = s->sink_kind == SIM_SINK_TRBE;
    size_t keep[SIM_MAX_CPUS + 1];
    for (int q = 0; q <= SIM_MAX_CPUS; q++)
        keep[q] = SIZE_MAX;
    for (size_t i = 0; i < s->auxrecs.n; i++) {
        const sim_auxrec *a = &s->auxrecs.v[i];
        if (a->size) keep[raw ? a->queue : SIM_MAX_CPUS] = i;
    }
    size_t n = 0;
    for (size_t i = 0; i < s->auxrecs.n; i++) {
        sim_auxrec *a = &s->auxrecs.v[i];
        if (keep[raw ? a->queue : SIM_MAX_CPUS] == i) {
            a->file_off = n + 1; /* the truth decodes the buffers in this order */
            s->auxrecs.v[n++] = *a;
        } else
            ek_vec_free(&a->ops);
    }
    s->auxrecs.n = n;
}

/* the distinct code segments that ran: the kernel first, then every process mapping */
typedef struct dump {
    const sim_image *img;
    uint64_t addr;
} dump;

static size_t collect_dumps(const sim *S, dump *d, size_t cap)
{
    size_t n = 0;
    if (S->kmap && n < cap) d[n++] = (dump){S->kmap->img, S->kmap->start};
    for (size_t i = 0; i < S->nprocs; i++) {
        const sim_process *p = S->procs[i];
        for (int k = 0; k < p->nmaps; k++) {
            const sim_map *m = &p->maps[k];
            if (m->img->no_code) continue;
            int seen = 0;
            for (size_t j = 0; j < n; j++)
                seen |= d[j].img == m->img && d[j].addr == m->start;
            if (!seen && n < cap) d[n++] = (dump){m->img, m->start};
        }
    }
    return n;
}

static void write_regs(FILE *f, const ek_etm4_regs *r, int ete)
{
    static const struct {
        const char *name;
        unsigned off;
        int idr;
    } idrs[] = {
        {"TRCIDR0", 0x078, 0},   {"TRCIDR1", 0x079, 1},   {"TRCIDR2", 0x07A, 2},
        {"TRCIDR8", 0x060, 8},   {"TRCIDR9", 0x061, 9},   {"TRCIDR10", 0x062, 10},
        {"TRCIDR11", 0x063, 11}, {"TRCIDR12", 0x064, 12}, {"TRCIDR13", 0x065, 13},
    };
    fprintf(f, "[regs]\nTRCCONFIGR(0x004)=0x%08X\nTRCTRACEIDR(0x010)=0x%08X\n", r->configr,
            r->traceidr);
    fprintf(f, "TRCAUTHSTATUS(0x3EE)=0x%08X\n", r->authstatus);
    for (size_t i = 0; i < sizeof(idrs) / sizeof(idrs[0]); i++)
        fprintf(f, "%s(0x%03X)=0x%08X\n", idrs[i].name, idrs[i].off, r->idr[idrs[i].idr]);
    if (ete) fprintf(f, "TRCDEVARCH(0x3EF)=0x%08X\n", r->devarch);
}

int sim_snapshot_write(sim *S, const char *outdir)
{
    if (!S->nsessions) return EK_ERR_ARG;
    const sim_session *s = &S->sessions[0];
    size_t dn = strlen(outdir) + 16;
    char *dir = malloc(dn);
    if (!dir) return EK_ERR_NOMEM;
    snprintf(dir, dn, "%s/snapshot", outdir);
    snap w = {dir, sim_mkdirs(dir)};
    const int raw = s->sink_kind == SIM_SINK_TRBE;
    const char *src = s->ete ? "ETE" : "ETM";
    char name[64];

    /* memory images */
    dump d[4 + SIM_MAX_MAPS * 8];
    size_t nd = collect_dumps(S, d, sizeof(d) / sizeof(d[0]));
    for (size_t i = 0; i < nd && !w.err; i++) {
        const sim_image *img = d[i].img;
        snprintf(name, sizeof(name), "mem_%s_%llx.bin", img->blob->name,
                 (unsigned long long)d[i].addr);
        write_bytes(&w, name, img->data + img->seg_off, img->seg_filesz);
    }

    /* trace buffers */
    int nbuf = raw ? S->ncpus : 1;
    for (int b = 0; b < nbuf && !w.err; b++) {
        size_t len = 0;
        uint8_t *bytes = NULL;
        if (raw) {
            bytes = queue_bytes(s, b, &len);
        } else { /* one shared sink: its copy went to whichever CPU stopped last */
            size_t total = 0;
            for (int q = 0; q < s->nevents; q++) {
                size_t n = 0;
                uint8_t *part = queue_bytes(s, q, &n);
                uint8_t *grown = part ? realloc(bytes, total + n + 1) : NULL;
                if (!grown) {
                    free(part);
                    w.err = EK_ERR_NOMEM;
                    break;
                }
                bytes = grown;
                memcpy(bytes + total, part, n);
                total += n;
                free(part);
            }
            len = total;
        }
        if (!bytes && !w.err) w.err = EK_ERR_NOMEM;
        snprintf(name, sizeof(name), raw ? "trbe_%d.bin" : "cstrace.bin", b);
        if (!w.err) write_bytes(&w, name, bytes, len);
        free(bytes);
    }

    /* devices */
    for (int c = 0; c < S->ncpus && !w.err; c++) {
        snprintf(name, sizeof(name), "cpu_%d.ini", c);
        FILE *f = open_in(&w, name);
        if (!f) break;
        const sim_thread *t = S->cpus[c].cur;
        fprintf(f, "[device]\nname=cpu_%d\nclass=core\ntype=%s\n\n", c,
                s->ete ? "ARMv9-A" : "Cortex-A57");
        fprintf(f, "[regs]\nPC(size:64)=0x%016llX\nSP(size:64)=0\nSCTLR_EL1=0x1007\nCPSR=0x%X\n",
                (unsigned long long)(t ? t->pc : 0), t && t->el ? 0x3C5u : 0x0u);
        for (size_t i = 0; i < nd; i++)
            fprintf(f, "\n[dump%zu]\nfile=mem_%s_%llx.bin\naddress=0x%016llX\nlength=0x%llX\n",
                    i + 1, d[i].img->blob->name, (unsigned long long)d[i].addr,
                    (unsigned long long)d[i].addr, (unsigned long long)d[i].img->seg_filesz);
        close_file(&w, f);
        snprintf(name, sizeof(name), "%s_%d.ini", src, c);
        f = open_in(&w, name);
        if (!f) break;
        fprintf(f, "[device]\nname=%s_%d\nclass=trace_source\ntype=%s\n\n", src, c,
                s->ete ? "ETE" : "ETM4");
        write_regs(f, &S->cpus[c].etm.cfg.regs.etm4, s->ete);
        close_file(&w, f);
    }

    FILE *f = w.err ? NULL : open_in(&w, "snapshot.ini");
    if (f) {
        fprintf(f, "[snapshot]\nversion=1.0\ndescription=etmkit gen %s (%d CPUs, %s)\n\n",
                S->sc->name, S->ncpus, raw ? "per-CPU raw sinks" : "shared formatted sink");
        fprintf(f, "[device_list]\n");
        int k = 0;
        for (int c = 0; c < S->ncpus; c++)
            fprintf(f, "device%d=cpu_%d.ini\n", k++, c);
        for (int c = 0; c < S->ncpus; c++)
            fprintf(f, "device%d=%s_%d.ini\n", k++, src, c);
        fprintf(f, "\n[trace]\nmetadata=trace.ini\n");
        close_file(&w, f);
    }
    f = w.err ? NULL : open_in(&w, "trace.ini");
    if (f) {
        fprintf(f, "[trace_buffers]\nbuffers=");
        for (int b = 0; b < nbuf; b++)
            fprintf(f, "%sbuffer%d", b ? "," : "", b);
        fprintf(f, "\n");
        for (int b = 0; b < nbuf; b++) {
            if (raw)
                fprintf(f, "\n[buffer%d]\nname=TRBE_%d\nfile=trbe_%d.bin\nformat=source_data\n", b,
                        b, b);
            else
                fprintf(f, "\n[buffer%d]\nname=ETR_0\nfile=cstrace.bin\nformat=coresight\n", b);
        }
        fprintf(f, "\n[source_buffers]\n");
        for (int c = 0; c < S->ncpus; c++)
            if (raw)
                fprintf(f, "%s_%d=TRBE_%d\n", src, c, c);
            else
                fprintf(f, "%s_%d=ETR_0\n", src, c);
        fprintf(f, "\n[core_trace_sources]\n");
        for (int c = 0; c < S->ncpus; c++)
            fprintf(f, "cpu_%d=%s_%d\n", c, src, c);
        close_file(&w, f);
    }
    free(dir);
    return w.err;
}
