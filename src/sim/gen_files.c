/* The files `etmkit gen` writes besides the recording and the truth: symfs (the binaries, the
 * kernel module), the JIT's jitdump and perf map, kallsyms and truth.summary; and the file
 * helpers the simulator's writers share. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/bytes.h"
#include "etmkit/etmkit.h"
#include "sim/sim.h"

static _Thread_local struct {
    int set, err;
    char *path;
} io_first;

void sim_io_reset(void)
{
    free(io_first.path);
    io_first.path = NULL;
    io_first.set = io_first.err = 0;
}

int sim_io_fail(const char *path, int err)
{
    if (!io_first.set) {
        io_first.set = 1;
        io_first.err = err ? err : EIO;
        io_first.path = strdup(path ? path : ""); /* NULL (no memory): the cause alone */
    }
    return EK_ERR_IO;
}

int sim_io_first(const char **path, int *err)
{
    if (!io_first.set) return 0;
    *path = io_first.path ? io_first.path : "";
    *err = io_first.err;
    return 1;
}

int sim_mkdirs(const char *path)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n >= sizeof(buf)) return sim_io_fail(path, ENAMETOOLONG);
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == 0) {
            char c = buf[i];
            buf[i] = 0;
            struct stat st;
            if (mkdir(buf, 0777) && (errno != EEXIST || stat(buf, &st) || !S_ISDIR(st.st_mode)))
                return sim_io_fail(buf, errno == EEXIST ? ENOTDIR : errno);
            buf[i] = c;
        }
    }
    return 0;
}

/* sim_fopen's files: stdio over a descriptor through these hooks, which see each failure */
typedef struct sim_cfile {
    int fd;
    char path[]; /* NUL-terminated */
} sim_cfile;

static ssize_t cf_write(void *cookie, const char *p, size_t n)
{
    sim_cfile *c = cookie;
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(c->fd, p + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            sim_io_fail(c->path, w < 0 ? errno : ENOSPC);
            return 0; /* stdio: an error */
        }
        done += (size_t)w;
    }
    return (ssize_t)n;
}

static int cf_seek(void *cookie, off64_t *off, int whence)
{
    sim_cfile *c = cookie;
    off64_t r = lseek64(c->fd, *off, whence);
    if (r < 0) {
        sim_io_fail(c->path, errno);
        return -1;
    }
    *off = r;
    return 0;
}

static int cf_close(void *cookie)
{
    sim_cfile *c = cookie;
    int rc = close(c->fd);
    if (rc) sim_io_fail(c->path, errno);
    free(c);
    return rc ? -1 : 0;
}

FILE *sim_fopen(const char *path)
{
    size_t n = strlen(path);
    sim_cfile *c = malloc(sizeof *c + n + 1);
    if (!c) {
        sim_io_fail(path, ENOMEM);
        return NULL;
    }
    memcpy(c->path, path, n + 1);
    c->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (c->fd < 0) {
        sim_io_fail(path, errno);
        free(c);
        return NULL;
    }
    cookie_io_functions_t io = {NULL, cf_write, cf_seek, cf_close};
    FILE *f = fopencookie(c, "w", io);
    if (!f) {
        sim_io_fail(path, errno);
        close(c->fd);
        free(c);
    }
    return f;
}

int sim_fclose(FILE *f)
{
    int e = ferror(f);
    return fclose(f) || e ? EK_ERR_IO : 0;
}

char *sim_join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", a, b);
    return p;
}

static int write_file(const char *path, const void *data, size_t n)
{
    FILE *f = sim_fopen(path);
    if (!f) return EK_ERR_IO;
    size_t w = fwrite(data, 1, n, f);
    int rc = sim_fclose(f);
    return (w == n && rc == 0) ? 0 : EK_ERR_IO;
}

int sim_write_symfs(sim *S, const char *out, int with_vmlinux)
{
    int err = 0;
    if (S->kmod) { /* the module's .ko at the path the recording names */
        char *path = NULL;
        if (asprintf(&path, "%s/symfs%s", out, S->kmod->map.path) < 0) return EK_ERR_NOMEM;
        char *slash = strrchr(path, '/');
        *slash = 0;
        err = sim_mkdirs(path);
        *slash = '/';
        if (!err) err = write_file(path, S->kmod->ko, S->kmod->ko_size);
        free(path);
    }
    for (int i = 0; i < S->nimages && !err; i++) {
        const sim_image *img = &S->images[i];
        char rel[512];
        if (img->hidden) continue;
        if (img->is_kernel) {
            if (!with_vmlinux) continue;
            snprintf(rel, sizeof(rel), "symfs/vmlinux");
        } else {
            snprintf(rel, sizeof(rel), "symfs%s", img->blob->path);
        }
        char *path = sim_join(out, rel);
        if (!path) return EK_ERR_NOMEM;
        char *slash = strrchr(path, '/');
        *slash = 0;
        err = sim_mkdirs(path);
        *slash = '/';
        /* another build of the file where the scenario says so */
        if (!err)
            err = write_file(path, img->symfs ? img->symfs->data : img->data,
                             img->symfs ? img->symfs->size : img->size);
        free(path);
    }
    return err;
}

/* ------------------------------------------------------------------ JIT files */

static void put32(FILE *f, uint32_t v)
{
    uint8_t b[4];
    ek_put_le32(b, v);
    fwrite(b, 1, 4, f);
}

static void put64(FILE *f, uint64_t v)
{
    uint8_t b[8];
    ek_put_le64(b, v);
    fwrite(b, 1, 8, f);
}

static void pad8(FILE *f, size_t n)
{
    static const uint8_t z[8];
    fwrite(z, 1, (8 - (n & 7)) & 7, f);
}

/* jit-PID.dump in perf's jitdump format (tools/perf/util/jitdump.h), as perf's JVMTI agent
 * writes it: a 40-byte header, then records with a 16-byte prefix (id, total size, time);
 * debug info is padded to 8 bytes, code loads are not. Times are the simulated clock
 * (CLOCK_MONOTONIC, as perf record -k 1 stamps its events). */
static int write_jitdump(sim *S, const sim_process *p, const char *path)
{
    const sim_jit *j = p->jit;
    FILE *f = sim_fopen(path);
    if (!f) return EK_ERR_IO;
    put32(f, 0x4A695444); /* "JiTD" */
    put32(f, 1);          /* version */
    put32(f, 40);         /* header size */
    put32(f, 183);        /* EM_AARCH64 */
    put32(f, 0);
    put32(f, (uint32_t)p->pid);
    put64(f, j->start_time);
    put64(f, 0); /* flags: time stamps are not the architectural counter */
    for (size_t i = 0; i < j->recs.n; i++) {
        const sim_jitrec *r = &j->recs.v[i];
        const char *name = r->img ? r->img->blob->name : "";
        size_t n;
        switch (r->id) {
        case SIM_JIT_LOAD:
            /* not padded: perf takes the code as the record's last code_size bytes */
            n = 16 + 40 + strlen(name) + 1 + r->size;
            put32(f, SIM_JIT_LOAD);
            put32(f, (uint32_t)n);
            put64(f, r->time);
            put32(f, (uint32_t)p->pid);
            put32(f, (uint32_t)r->tid);
            put64(f, r->addr); /* vma */
            put64(f, r->addr);
            put64(f, r->size);
            put64(f, r->index);
            fwrite(name, 1, strlen(name) + 1, f);
            fwrite(r->img->data + r->img->seg_off, 1, r->size, f);
            break;
        case SIM_JIT_MOVE:
            put32(f, SIM_JIT_MOVE);
            put32(f, 64);
            put64(f, r->time);
            put32(f, (uint32_t)p->pid);
            put32(f, (uint32_t)r->tid);
            put64(f, r->addr); /* vma */
            put64(f, r->old_addr);
            put64(f, r->addr);
            put64(f, r->size);
            put64(f, r->index);
            break;
        case SIM_JIT_DEBUG_INFO: {
            /* a line per 16 bytes of code, in a source file named after the function */
            uint64_t ne = (r->size + 15) / 16;
            char file[64];
            snprintf(file, sizeof file, "%s.js", name);
            n = 16 + 16;
            for (uint64_t e = 0; e < ne; e++)
                n += 16 + (e ? 2 : strlen(file) + 1);
            put32(f, SIM_JIT_DEBUG_INFO);
            put32(f, (uint32_t)(n + ((8 - (n & 7)) & 7)));
            put64(f, r->time);
            put64(f, r->addr);
            put64(f, ne);
            for (uint64_t e = 0; e < ne; e++) {
                put64(f, r->addr + 16 * e);
                put32(f, (uint32_t)(10 + e)); /* line */
                put32(f, 0);                  /* discriminator */
                if (e)
                    fwrite("\xff", 1, 2, f); /* same file as the previous entry */
                else
                    fwrite(file, 1, strlen(file) + 1, f);
            }
            pad8(f, n);
            break;
        }
        case SIM_JIT_CLOSE:
            put32(f, SIM_JIT_CLOSE);
            put32(f, 16);
            put64(f, r->time);
            break;
        }
    }
    return sim_fclose(f);
}

/* perf-PID.map: "START SIZE name" per function the JIT installed (loads and moves) */
static int write_perf_map(const sim_process *p, const char *path)
{
    FILE *f = sim_fopen(path);
    if (!f) return EK_ERR_IO;
    for (size_t i = 0; i < p->jit->recs.n; i++) {
        const sim_jitrec *r = &p->jit->recs.v[i];
        if (r->id == SIM_JIT_LOAD || r->id == SIM_JIT_MOVE)
            fprintf(f, "%llx %llx %s\n", (unsigned long long)r->addr, (unsigned long long)r->size,
                    r->img->blob->name);
    }
    return sim_fclose(f);
}

int sim_write_jit_files(sim *S, const char *out)
{
    int err = 0;
    for (size_t i = 0; i < S->nprocs && !err; i++) {
        const sim_process *p = S->procs[i];
        if (!p->jit || !p->jit->started) continue;
        char *dir = NULL, *dump = NULL, *tmp = NULL, *map = NULL;
        if (asprintf(&dir, "%s/symfs%s", out, p->jit->dir) < 0) dir = NULL;
        if (asprintf(&dump, "%s/symfs%s", out, p->jit->dump_path) < 0) dump = NULL;
        if (asprintf(&tmp, "%s/symfs/tmp", out) < 0) tmp = NULL;
        if (asprintf(&map, "%s/symfs/tmp/perf-%d.map", out, p->pid) < 0) map = NULL;
        if (!dir || !dump || !tmp || !map) err = EK_ERR_NOMEM;
        if (!err) err = sim_mkdirs(dir);
        if (!err) err = write_jitdump(S, p, dump);
        if (!err) err = sim_mkdirs(tmp);
        if (!err) err = write_perf_map(p, map);
        free(dir);
        free(dump);
        free(tmp);
        free(map);
    }
    return err;
}

int sim_write_kallsyms(sim *S, const char *out)
{
    char *path = sim_join(out, "kallsyms");
    if (!path) return EK_ERR_NOMEM;
    FILE *f = sim_fopen(path);
    free(path);
    if (!f) return EK_ERR_IO;
    const sim_image *k = S->kernel;
    fprintf(f, "%016llx T _text\n", (unsigned long long)k->seg_vaddr);
    for (size_t i = 0; i < k->nsyms; i++)
        fprintf(f, "%016llx %c %s\n", (unsigned long long)k->syms[i].addr,
                k->syms[i].global ? 'T' : 't', k->syms[i].name);
    if (S->kmod) { /* a module's functions, with its name, as /proc/kallsyms lists them */
        const sim_image *m = S->kmod->map.img;
        for (size_t i = 0; i < m->nsyms; i++)
            fprintf(f, "%016llx %c %s\t[simmod]\n", (unsigned long long)m->syms[i].addr,
                    m->syms[i].global ? 'T' : 't', m->syms[i].name);
    }
    return sim_fclose(f);
}

int sim_write_summary(sim *S, const char *out, const ek_sim_opts *o)
{
    char *path = sim_join(out, "truth.summary");
    if (!path) return EK_ERR_NOMEM;
    FILE *f = sim_fopen(path);
    free(path);
    if (!f) return EK_ERR_IO;
    fprintf(f, "scenario\t%s\nseed\t%llu\ncpus\t%d\n", S->sc->name, (unsigned long long)o->seed,
            S->ncpus);
    fprintf(f, "instructions\t%llu\nbranches\t%llu\ntrace_bytes\t%llu\nsim_time_ns\t%llu\n",
            (unsigned long long)S->insn_total, (unsigned long long)S->branch_total,
            (unsigned long long)S->trace_total, (unsigned long long)(S->now - SIM_BOOT_NS));
    fprintf(f, "truth\t%s\n", S->truth ? "complete" : "summary-only");
    if (S->real) {
        /* distinct instruction bytes of the real binaries that ran, of their code */
        uint64_t fb, ft;
        sim_real_footprint(S, &fb, &ft);
        fprintf(f, "footprint\tbytes=%llu\ttext=%llu\n", (unsigned long long)fb,
                (unsigned long long)ft);
    }
    fprintf(f, "invariants\tmixed=%llu\tviolations=%llu\ttouched_after_end=%llu\trefused=%llu\n",
            (unsigned long long)S->stat_mixed, (unsigned long long)S->stat_invariant,
            (unsigned long long)S->stat_touched, (unsigned long long)S->stat_refused);
    for (int c = 0; c < S->ncpus; c++) {
        const sim_etm *e = &S->cpus[c].etm;
        fprintf(f, "etm\tcpu=%d\ttrace_id=0x%02x\tbytes=%llu\tatoms=%llu\n", c, e->cfg.trace_id,
                (unsigned long long)e->produced, (unsigned long long)e->atom_count);
    }
    for (int i = 0; i < S->nsinks; i++) {
        const sim_sink *k = &S->sinks[i];
        fprintf(f, "sink\t%d\tkind=%s\tsize=%u\tcopies=%llu\trefused=%llu\twrapped=%llu\n", i,
                k->kind == SIM_SINK_ETR   ? "etr"
                : k->kind == SIM_SINK_ETF ? "etf"
                                          : "trbe",
                k->hw_size, (unsigned long long)k->stat_copies, (unsigned long long)k->stat_refused,
                (unsigned long long)k->stat_lost);
    }
    for (int i = 0; i < S->nsessions; i++) {
        const sim_session *s = &S->sessions[i];
        fprintf(f,
                "session\t%d\tperf_pid=%d\tstart=%llu\tstop=%llu\tmode=%s\tel_mask=%u\taux_records="
                "%zu\taux_bytes=%llu"
                "\trecords=%llu\texpected_lines=%llu\tperf61_lines=%llu"
                "\tmmap2_after_aux=%llu\n",
                i, s->perf_pid, (unsigned long long)s->start_time, (unsigned long long)s->stop_time,
                s->mode == SIM_MODE_PER_CPU  ? "per-cpu"
                : s->mode == SIM_MODE_SYSTEM ? "system"
                                             : "per-thread",
                s->el_mask, s->auxrecs.n, (unsigned long long)s->aux_bytes,
                (unsigned long long)s->nrecords, (unsigned long long)s->expected_lines,
                (unsigned long long)s->perf_lines, (unsigned long long)s->mmap2_after_aux);
        for (size_t k = 0; k < s->auxrecs.n; k++) {
            const sim_auxrec *a = &s->auxrecs.v[k];
            fprintf(f,
                    "aux\t%d\tqueue=%d\tcpu=%d\ttid=%d\ttime=%llu\toffset=%llu\tsize=%llu"
                    "\tflags=0x%llx\tops=%zu\n",
                    i, a->queue, a->cpu, a->tid, (unsigned long long)a->time,
                    (unsigned long long)a->offset, (unsigned long long)a->size,
                    (unsigned long long)a->flags, a->ops.n);
        }
    }
    for (size_t i = 0; i < S->nprocs; i++) {
        const sim_process *p = S->procs[i];
        fprintf(f, "process\tpid=%d\tcomm=%s\tsteps=%u\n", p->pid, p->comm, p->steps);
        if (p->jit)
            fprintf(f, "jit\tpid=%d\tloads=%u\tmoves=%u\tcollections=%u\tdeferred=%u\n", p->pid,
                    p->jit->loads, p->jit->moves, p->jit->gcs, p->jit->deferred);
    }
    return sim_fclose(f);
}
