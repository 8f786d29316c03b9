/* The simulated machine: processes, threads, CPUs, a scheduler and an interpreter that walks
 * the real instructions of the embedded AArch64 images.
 *
 * Data is not simulated. Conditional branches are taken by the seeded random source (or by a
 * machine-state decision where the code carries a .simmeta annotation), indirect calls and
 * jumps pick among the callable functions of the image and of the libraries mapped into the
 * process, returns use a shadow stack of call and exception frames. System calls, timer
 * interrupts, context switches and exception returns go through the kernel image the same
 * way, so the executed path is a path real hardware could take through this code. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "sim/sim.h"
#include "sim/programs/simmeta.h"

/* System call numbers (arm64 Linux) the programs use. */
enum {
    NR_WRITE = 64,
    NR_EXIT = 93,
    NR_NANOSLEEP = 101,
    NR_SCHED_YIELD = 124,
    NR_GETPID = 172,
    NR_MUNMAP = 215,
    NR_CLONE = 220,
    NR_EXECVE = 221,
    NR_MMAP = 222,
    NR_MPROTECT = 226,
};

static const char *syscall_name(int nr)
{
    switch (nr) {
    case NR_WRITE: return "sys_write";
    case NR_EXIT: return "sys_exit";
    case NR_NANOSLEEP: return "sys_nanosleep";
    case NR_SCHED_YIELD: return "sys_sched_yield";
    case NR_GETPID: return "sys_getpid";
    case NR_MUNMAP: return "sys_munmap";
    case NR_CLONE: return "sys_clone";
    case NR_EXECVE: return "sys_execve";
    case NR_MMAP: return "sys_mmap";
    case NR_MPROTECT: return "sys_mprotect";
    default: return "sys_ni_syscall";
    }
}

/* the system calls the kernel image implements, in the order of S->k_syscall (the last, 0,
 * stands for every other number: sys_ni_syscall) */
static const int syscall_nrs[SIM_NSYSCALLS] = {
    NR_WRITE, NR_EXIT,   NR_NANOSLEEP, NR_SCHED_YIELD, NR_GETPID, NR_MUNMAP,
    NR_CLONE, NR_EXECVE, NR_MMAP,      NR_MPROTECT,    0};

static uint64_t syscall_target(sim *S, int nr)
{
    /* a module that wrapped these two (scenario kernel-module) */
    if (S->kmod && nr == NR_WRITE) return S->kmod->write_fn;
    if (S->kmod && nr == NR_GETPID) return S->kmod->getpid_fn;
    for (unsigned i = 0; i + 1 < SIM_NSYSCALLS; i++)
        if (syscall_nrs[i] == nr) return S->k_syscall[i];
    return S->k_syscall[SIM_NSYSCALLS - 1]; /* sys_ni_syscall */
}

static const char *action_sym[SIM_ACT__COUNT] = {
    "act_none",   "act_getpid",  "act_write", "act_yield", "act_sleep",
    "act_dlopen", "act_dlclose", "act_clone", "act_exec",  "act_jit",
};

const sim_image *sim_find_image(const sim *S, const char *name)
{
    for (int i = 0; i < S->nimages; i++)
        if (!strcmp(S->images[i].blob->name, name)) return &S->images[i];
    return NULL;
}

static void fail(sim *S, const char *fmt, const char *a, uint64_t v)
{
    if (!S->err) {
        S->err = EK_ERR_FORMAT;
        ek_diag_emit(S->diag, EK_SEV_ERROR, "sim.machine", EK_ERR_FORMAT, NULL, -1, -1, -1, fmt, a,
                     (unsigned long long)v);
    }
}

/* kernel addresses the machine needs at run time, looked up once */

static uint64_t ksym(sim *S, const char *name)
{
    const sim_sym *s = sim_image_symbol(S->kernel, name);
    if (!s) {
        fail(S, "kernel image lacks %s (%llx)", name, 0);
        return 0;
    }
    return s->addr;
}

/* ------------------------------------------------------------------ threads and stacks */

static const sim_map *lookup(const sim *S, const sim_process *p, uint64_t addr);

/* truth: the call-stack node of frame i of t (its parent: frame i - 1's) */
static void frame_node(sim *S, sim_thread *t, unsigned i)
{
    sim_frame *f = &t->stack[i];
    f->node = 0;
    if (!S->truth) return;
    if (!S->snodes.n) {
        sim_snode root;
        memset(&root, 0, sizeof(root));
        if (ek_vec_push(&S->snodes, root)) goto nomem;
    }
    const sim_map *m = lookup(S, t->proc, f->addr);
    sim_snode n = {f->addr, i ? t->stack[i - 1].node : 0, m ? m->serial : 0, f->exc};
    if (S->snodes.n >= UINT32_MAX || ek_vec_push(&S->snodes, n)) goto nomem;
    f->node = (uint32_t)(S->snodes.n - 1);
    return;
nomem:
    S->err = EK_ERR_NOMEM;
    S->done = 1;
}

static int push(sim *S, sim_thread *t, uint64_t addr, int exc, int el)
{
    if (t->depth == t->cap) {
        unsigned nc = t->cap ? t->cap * 2 : 32;
        if (nc > 4096) {
            fail(S, "call depth limit reached in %s at %llx", t->proc ? t->proc->comm : "idle",
                 addr);
            return -1;
        }
        sim_frame *n = realloc(t->stack, nc * sizeof(*n));
        if (!n) {
            S->err = EK_ERR_NOMEM;
            S->done = 1;
            return -1;
        }
        t->stack = n;
        t->cap = nc;
    }
    t->stack[t->depth].addr = addr;
    t->stack[t->depth].budget = t->budget;
    t->stack[t->depth].exc = (uint8_t)exc;
    t->stack[t->depth].el = (uint8_t)el;
    t->depth++;
    frame_node(S, t, t->depth - 1);
    return 0;
}

static sim_thread *new_thread(sim *S, sim_process *p, int tid)
{
    if (S->nthreads == S->cap_threads) {
        size_t nc = S->cap_threads ? S->cap_threads * 2 : 16;
        sim_thread **n = realloc(S->threads, nc * sizeof(*n));
        if (!n) return NULL;
        S->threads = n;
        S->cap_threads = nc;
    }
    sim_thread *t = calloc(1, sizeof(*t));
    if (!t) return NULL;
    t->tid = tid;
    t->proc = p;
    t->cpu = -1;
    S->threads[S->nthreads++] = t;
    return t;
}

sim_thread *sim_find_thread(const sim *S, int tid)
{
    for (size_t i = 0; i < S->nthreads; i++)
        if (S->threads[i]->tid == tid && !S->threads[i]->idle) return S->threads[i];
    return NULL;
}

static void enqueue(sim *S, int cpu, sim_thread *t)
{
    struct sim_cpu *c = &S->cpus[cpu];
    if (c->nrq == c->caprq) {
        size_t nc = c->caprq ? c->caprq * 2 : 8;
        sim_thread **n = realloc(c->rq, nc * sizeof(*n));
        if (!n) {
            S->err = EK_ERR_NOMEM;
            S->done = 1;
            return;
        }
        c->rq = n;
        c->caprq = nc;
    }
    c->rq[c->nrq++] = t;
    t->state = SIM_T_RUNNABLE;
    t->cpu = cpu;
}

static int least_loaded_cpu(sim *S)
{
    int best = 0;
    size_t bl = (size_t)-1;
    for (int i = 0; i < S->ncpus; i++) {
        size_t load = S->cpus[i].nrq + (S->cpus[i].cur && !S->cpus[i].cur->idle ? 1 : 0);
        if (load < bl) {
            bl = load;
            best = i;
        }
    }
    return best;
}

/* A new thread starts in the kernel at ret_from_fork and returns to 'entry' in EL0. */
static int prepare_new_thread(sim *S, sim_thread *t, uint64_t entry)
{
    t->depth = 0;
    if (push(S, t, entry, 1, 0) || push(S, t, S->k_ret_from_fork, 0, 1)) return -1;
    t->el = 1;
    t->state = SIM_T_NEW;
    return 0;
}

/* ------------------------------------------------------------------ address spaces */

const sim_map *sim_map_lookup(const sim_process *p, uint64_t addr)
{
    if (!p) return NULL;
    for (int i = 0; i < p->nmaps; i++)
        if (addr >= p->maps[i].start && addr < p->maps[i].end && !p->maps[i].img->no_code)
            return &p->maps[i];
    return NULL;
}

static const sim_map *lookup(const sim *S, const sim_process *p, uint64_t addr)
{
    if (addr >= S->kernel_map.start && addr < S->kernel_map.end) return &S->kernel_map;
    if (S->kmod && addr >= S->kmod->map.start && addr < S->kmod->map.end) return &S->kmod->map;
    return sim_map_lookup(p, addr);
}

uint32_t sim_word_at(const sim *S, const sim_process *p, uint64_t addr)
{
    const sim_map *m = lookup(S, p, addr);
    if (!m) return 0;
    return sim_image_word(m->img, addr - m->bias);
}

static int is_svc(uint32_t w)
{
    return (w & 0xFFE0001Fu) == 0xD4000001u;
}

static int svc_before(const sim *S, const sim_process *p, uint64_t addr)
{
    return S->truth && is_svc(sim_word_at(S, p, addr - 4)); /* only the truth needs it */
}

/* a mapping of img at [start, end) with runtime = link-time + bias */
static sim_map *add_map_at(sim *S, sim_process *p, const sim_image *img, uint64_t start,
                           uint64_t end, uint64_t bias, uint64_t time)
{
    if (p->nmaps == SIM_MAX_MAPS) {
        fail(S, "too many mappings in %s (%llx)", p->comm, start);
        return NULL;
    }
    sim_map *m = &p->maps[p->nmaps++];
    memset(m, 0, sizeof(*m));
    m->bias = bias;
    m->start = start;
    m->end = end;
    m->img = img;
    m->serial = ++S->next_serial;
    m->pid = p->pid;
    m->time = time;
    if (S->nmaps_all == S->cap_maps_all) {
        size_t nc = S->cap_maps_all ? S->cap_maps_all * 2 : 16;
        sim_map *v = realloc(S->maps_all, nc * sizeof(*v));
        if (!v) return NULL;
        S->maps_all = v;
        S->cap_maps_all = nc;
    }
    S->maps_all[S->nmaps_all++] = *m;
    return m;
}

/* maps_all holds a copy of every mapping: keep it in step with a field changed later */
static void map_sync(sim *S, const sim_map *m)
{
    for (size_t i = S->nmaps_all; i-- > 0;)
        if (S->maps_all[i].serial == m->serial) {
            S->maps_all[i] = *m;
            return;
        }
}

static const sim_map *add_map(sim *S, sim_process *p, const sim_image *img, uint64_t base,
                              uint64_t time)
{
    uint64_t seg_lo = img->seg_vaddr & ~0xFFFull;
    uint64_t bias = img->is_shared ? base : 0;
    return add_map_at(S, p, img, seg_lo + bias,
                      ((img->seg_vaddr + img->seg_filesz + 0xFFF) & ~0xFFFull) + bias, bias, time);
}

/* ------------------------------------------------------------------ JIT */

const char *sim_strdup(sim *S, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *p = NULL;
    int n = vasprintf(&p, fmt, ap);
    va_end(ap);
    if (n < 0 || ek_vec_push(&S->strings, p)) {
        if (n >= 0) free(p);
        S->err = EK_ERR_NOMEM;
        return "";
    }
    return p;
}

sim_image *sim_new_image(sim *S)
{
    if (S->nimages == SIM_MAX_IMAGES) {
        fail(S, "too many images (%s %llx)", "sim", (uint64_t)S->nimages);
        return NULL;
    }
    return &S->images[S->nimages++];
}

/* an image without code named path (anonymous memory, a mapped data file) */
static const sim_image *nocode_image(sim *S, const char *name, const char *path)
{
    for (int i = 0; i < S->nimages; i++)
        if (S->images[i].no_code && !strcmp(S->images[i].blob->path, path)) return &S->images[i];
    sim_blob *b = calloc(1, sizeof(*b));
    sim_image *img = b ? sim_new_image(S) : NULL;
    if (!b || !img || ek_vec_push(&S->blobs, b)) {
        free(b);
        if (!S->err) S->err = EK_ERR_NOMEM;
        return NULL;
    }
    b->name = sim_strdup(S, "%s", name);
    b->path = sim_strdup(S, "%s", path);
    sim_image_nocode(img, b);
    return img;
}

int sim_jit_enable(sim *S, sim_process *p, const char *dir)
{
    if (!S->jit_tmpl) {
        const sim_image *t = sim_find_image(S, "jitcode");
        if (!t) return EK_ERR_NOT_FOUND;
        S->jit_tmpl = t;
        S->jit_first = S->nimages;
        for (size_t i = 0; i < t->nsyms && !S->err; i++) {
            if (strncmp(t->syms[i].name, "jit_", 4) || !t->syms[i].global) continue;
            sim_blob *b = calloc(1, sizeof(*b));
            sim_image *img = b ? sim_new_image(S) : NULL;
            if (!b || !img || ek_vec_push(&S->blobs, b)) {
                free(b);
                return S->err ? S->err : EK_ERR_NOMEM;
            }
            b->name = t->syms[i].name;
            b->path = "[jit]";
            b->start = t->data;
            b->end = t->data + t->size;
            int rc = sim_image_slice(img, b, t, &t->syms[i]);
            if (rc) return rc;
            S->jit_count++;
        }
        if (!S->jit_count) return EK_ERR_NOT_FOUND;
    }
    sim_jit *j = calloc(1, sizeof(*j));
    if (!j) return EK_ERR_NOMEM;
    p->jit = j;
    j->cache = 0x0000ffff9c000000ull;
    j->cache_size = 64u << 10;
    j->next = j->cache;
    j->dump_addr = 0x0000ffff9bfff000ull;
    snprintf(j->dir, sizeof(j->dir), "%s", dir);
    snprintf(j->dump_path, sizeof(j->dump_path), "%s/jit-%d.dump", dir, p->pid);
    return S->err;
}

static void jit_rec(sim *S, sim_jit *j, uint32_t id, uint64_t time, int tid, const sim_map *m,
                    uint64_t old_addr, uint64_t index)
{
    sim_jitrec r = {.id = id, .time = time, .tid = tid, .old_addr = old_addr, .index = index};
    if (m) {
        r.addr = m->start;
        r.size = m->end - m->start;
        r.img = m->img;
    }
    if (ek_vec_push(&j->recs, r)) S->err = EK_ERR_NOMEM;
}

/* the JIT agent starts: it maps its jitdump (so that perf record sees it) and the code cache */
static void jit_start(sim *S, struct sim_cpu *c, sim_thread *t, sim_jit *j)
{
    sim_process *p = t->proc;
    j->started = 1;
    j->start_time = c->time;
    const sim_image *dump = nocode_image(S, "jitdump", j->dump_path);
    const sim_image *anon = nocode_image(S, "anon", "//anon");
    if (!dump || !anon) return;
    sim_map *dm = add_map_at(S, p, dump, j->dump_addr, j->dump_addr + 4096, 0, c->time);
    if (!dm) return;
    sim_side_mmap(S, t, dm, c->time, c->id);
    sim_map *am = add_map_at(S, p, anon, j->cache, j->cache + j->cache_size, 0, c->time);
    if (!am) return;
    /* perf names an anonymous executable mapping after the process's perf map file */
    am->path = sim_strdup(S, "/tmp/perf-%d.map", p->pid);
    map_sync(S, am);
    sim_side_mmap(S, t, am, c->time, c->id);
}

static void jit_remove(sim_process *p, int i)
{
    memmove(&p->maps[i], &p->maps[i + 1], (size_t)(p->nmaps - 1 - i) * sizeof(sim_map));
    p->nmaps--;
}

/* copy template k to addr */
static sim_map *jit_install(sim *S, sim_process *p, int k, uint64_t addr, uint64_t index,
                            uint64_t time)
{
    const sim_image *img = &S->images[S->jit_first + k];
    sim_map *m = add_map_at(S, p, img, addr, addr + img->seg_filesz, addr - img->seg_vaddr, time);
    if (!m) return NULL;
    m->jit = 1;
    m->exact = 1;
    m->path = sim_strdup(S, "%s/jitted-%d-%llu.so", p->jit->dir, p->pid, (unsigned long long)index);
    map_sync(S, m);
    return m;
}

static uint64_t jit_index_of(const sim_map *m)
{
    const char *d = strrchr(m->path, '-');
    return d ? strtoull(d + 1, NULL, 10) : 0;
}

static int in_jit_code(const sim_process *p, uint64_t a)
{
    for (int i = 0; i < p->nmaps; i++)
        if (p->maps[i].jit && a >= p->maps[i].start && a < p->maps[i].end) return 1;
    return 0;
}

/* A safepoint at time 'now' for the JIT running on thread t: every other thread of the process
 * is off its CPU since before now, and neither stopped inside JIT code nor has a frame that
 * returns there. The code it ran before now is then the old code, and (with hold_until) what it
 * runs after starts after now, on the new code: a decoder that takes the code at an address
 * from the jitdump by time reads what ran. Code changed under a thread that is running, or
 * that stopped inside it, would leave it executing code that has gone. */
static int jit_safepoint(const sim *S, const sim_thread *t, uint64_t now)
{
    const sim_process *p = t->proc;
    for (size_t i = 0; i < S->nthreads; i++) {
        const sim_thread *u = S->threads[i];
        if (u == t || u->proc != p || u->state == SIM_T_DEAD) continue;
        if (u->state == SIM_T_RUNNING || u->off_at >= now || in_jit_code(p, u->pc)) return 0;
        for (unsigned k = 0; k < u->depth; k++)
            if (in_jit_code(p, u->stack[k].addr)) return 0;
    }
    return 1;
}

/* The JIT's work in one mprotect: compile a function into the cache; now and then move one
 * (compaction) or collect the whole cache, after which new code goes to addresses that held
 * other code before. Only at a safepoint: otherwise the action stays due and is tried again at
 * the main thread's next work step. */
static void do_jit(sim *S, struct sim_cpu *c, sim_thread *t)
{
    sim_process *p = t->proc;
    sim_jit *j = p ? p->jit : NULL;
    if (!j) return;
    if (!jit_safepoint(S, t, c->time)) {
        j->pending = 1;
        j->deferred++;
        return;
    }
    j->pending = 0;
    p->hold_until = c->time;
    if (!j->started) jit_start(S, c, t, j);
    if (S->err) return;
    int nlive = 0, oldest = -1;
    for (int i = 0; i < p->nmaps; i++)
        if (p->maps[i].jit) {
            nlive++;
            if (oldest < 0 || p->maps[i].serial < p->maps[oldest].serial) oldest = i;
        }
    uint32_t r = sim_rng_below(&S->rng, 256);
    if (nlive >= 2 && r < 64 &&
        j->next + (p->maps[oldest].end - p->maps[oldest].start) <= j->cache + j->cache_size) {
        /* move the oldest function to the end of the cache */
        sim_map old = p->maps[oldest];
        uint64_t index = jit_index_of(&old);
        jit_remove(p, oldest);
        int k = (int)(old.img - &S->images[S->jit_first]);
        sim_map *m = jit_install(S, p, k, j->next, index, c->time);
        if (!m) return;
        j->next = (m->end + 15) & ~15ull;
        jit_rec(S, j, SIM_JIT_MOVE, c->time, t->tid, m, old.start, index);
        j->moves++;
        t->mcache = NULL;
        return;
    }
    int k = (int)sim_rng_below(&S->rng, (uint32_t)S->jit_count);
    uint64_t size = S->images[S->jit_first + k].seg_filesz;
    if (j->next + size > j->cache + j->cache_size || (nlive >= 4 && r < 128) ||
        p->nmaps == SIM_MAX_MAPS) {
        /* collect: every function goes; new code starts again at the cache's start, where
         * other code was (not the function that was there last). Also when the process has
         * no room for another mapping: a long run (--trace-size) of live functions could
         * otherwise fill the table and stop the simulation. */
        int at_base = -1;
        for (int i = 0; i < p->nmaps; i++)
            if (p->maps[i].jit && p->maps[i].start == j->cache)
                at_base = (int)(p->maps[i].img - &S->images[S->jit_first]);
        for (int i = p->nmaps; i-- > 0;)
            if (p->maps[i].jit) jit_remove(p, i);
        j->next = j->cache;
        j->gcs++;
        if (k == at_base) k = (k + 1) % S->jit_count;
        size = S->images[S->jit_first + k].seg_filesz;
    }
    uint64_t index = j->next_index++;
    sim_map *m = jit_install(S, p, k, j->next, index, c->time);
    if (!m) return;
    j->next = (m->end + 15) & ~15ull;
    /* the agent writes the line table before the code it describes */
    if (index % 3 == 0) jit_rec(S, j, SIM_JIT_DEBUG_INFO, c->time, t->tid, m, 0, index);
    jit_rec(S, j, SIM_JIT_LOAD, c->time, t->tid, m, 0, index);
    j->loads++;
    t->mcache = NULL;
}

/* ------------------------------------------------------------------ processes */

/* A process running exe at base (runtime = link-time + base for a PIE), with nlibs more images
 * mapped at their bases, its thread starting at entry (runtime) */
static sim_process *spawn_at(sim *S, const sim_image *exe, const char *comm, int cpu,
                             uint64_t budget, unsigned session_mask, int parent_pid, uint64_t base,
                             sim_image *const *libs, const uint64_t *lib_base, int nlibs,
                             uint64_t entry)
{
    if (S->nprocs == S->cap_procs) {
        size_t nc = S->cap_procs ? S->cap_procs * 2 : 8;
        sim_process **n = realloc(S->procs, nc * sizeof(*n));
        if (!n) return NULL;
        S->procs = n;
        S->cap_procs = nc;
    }
    sim_process *p = calloc(1, sizeof(*p));
    if (!p) return NULL;
    S->procs[S->nprocs++] = p;
    p->pid = S->next_pid++;
    snprintf(p->comm, sizeof(p->comm), "%s", comm);
    p->exe = exe;
    p->session_mask = session_mask;
    p->parent = parent_pid;
    p->thread_budget = budget / 2 + 1;
    p->lib_base = 0x0000ffff8a400000ull;
    if (cpu < 0 || cpu >= S->ncpus) cpu = least_loaded_cpu(S);
    uint64_t now = S->cpus[cpu].time;
    if (!add_map(S, p, exe, base, now)) return NULL;
    for (int i = 0; i < nlibs; i++)
        if (!add_map(S, p, libs[i], lib_base[i], now)) return NULL;
    sim_thread *t = new_thread(S, p, p->pid);
    if (!t) return NULL;
    t->budget = budget;
    if (prepare_new_thread(S, t, entry)) return NULL;
    p->live_threads = 1;
    sim_side_fork(S, t, parent_pid, parent_pid, now, cpu);
    sim_side_comm(S, t, 1, now, cpu);
    for (int i = 0; i < p->nmaps; i++)
        sim_side_mmap(S, t, &p->maps[i], now, cpu);
    enqueue(S, cpu, t);
    return p;
}

sim_process *sim_spawn(sim *S, const sim_image *exe, const char *comm, int cpu, uint64_t budget,
                       unsigned session_mask, int parent_pid)
{
    const sim_sym *entry = sim_image_symbol(exe, "_start");
    if (!entry) return NULL;
    return spawn_at(S, exe, comm, cpu, budget, session_mask, parent_pid, 0, NULL, NULL, 0,
                    entry->addr);
}

/* A process of real binaries (realcode.c): the kernel maps the program and the dynamic linker
 * and starts the thread at the linker's entry; the linker maps the libraries (recorded at the
 * start here too) and jumps to the program's entry. The bases are fixed (no ASLR). */
sim_process *sim_spawn_real(sim *S, int cpu, uint64_t budget, unsigned session_mask)
{
    if (!S->real_exe) return NULL;
    sim_process *p =
        spawn_at(S, S->real_exe, S->real_exe->blob->name, cpu, budget, session_mask, 1,
                 S->real_exe_base, S->real_libs, S->real_lib_base, S->nreal_libs, S->real_entry);
    if (p) p->real = 1;
    return p;
}

/* ------------------------------------------------------------------ CPUs */

int sim_machine_init(sim *S)
{
    S->kernel = sim_find_image(S, "vmlinux");
    if (!S->kernel) return EK_ERR_FORMAT;
    S->kernel_map.img = S->kernel;
    S->kernel_map.bias = 0;
    S->kernel_map.start = S->kernel->seg_vaddr;
    S->kernel_map.end = S->kernel->seg_vaddr + S->kernel->seg_filesz;
    S->kernel_map.serial = 0;
    S->kmap = &S->kernel_map;
    uint64_t idle_pc = ksym(S, "cpu_idle_loop");
    S->k_vectors = ksym(S, "vectors");
    S->k_ret_from_fork = ksym(S, "ret_from_fork");
    for (unsigned i = 0; i < SIM_NSYSCALLS; i++)
        S->k_syscall[i] = ksym(S, syscall_name(syscall_nrs[i]));
    if (S->kmod) {
        const sim_sym *w = sim_image_symbol(S->kmod->map.img, "simmod_sys_write");
        const sim_sym *g = sim_image_symbol(S->kmod->map.img, "simmod_sys_getpid");
        if (!w || !g) return EK_ERR_FORMAT;
        S->kmod->write_fn = w->addr;
        S->kmod->getpid_fn = g->addr;
    }
    for (int i = 0; i < S->ncpus; i++) {
        struct sim_cpu *c = &S->cpus[i];
        c->id = i;
        c->time = S->now;
        c->next_tick = S->now + S->tick + (uint64_t)i * (S->tick / (uint64_t)(S->ncpus + 1));
        sim_thread *t = new_thread(S, NULL, 0);
        if (!t) return EK_ERR_NOMEM;
        t->idle = 1;
        t->cpu = i;
        t->el = 1;
        t->pc = idle_pc;
        t->state = SIM_T_RUNNING;
        c->idle = c->cur = t;
        sim_etm_init(S, &c->etm, i);
    }
    return S->err;
}

void sim_machine_free(sim *S)
{
    for (size_t i = 0; i < S->nthreads; i++) {
        free(S->threads[i]->stack);
        free(S->threads[i]);
    }
    free(S->threads);
    for (size_t i = 0; i < S->nprocs; i++) {
        if (S->procs[i]->jit) ek_vec_free(&S->procs[i]->jit->recs);
        free(S->procs[i]->jit);
        free(S->procs[i]);
    }
    free(S->procs);
    for (size_t i = 0; i < S->strings.n; i++)
        free(S->strings.v[i]);
    ek_vec_free(&S->strings);
    for (size_t i = 0; i < S->blobs.n; i++)
        free(S->blobs.v[i]);
    ek_vec_free(&S->blobs);
    free(S->maps_all);
    ek_vec_free(&S->snodes);
    for (int i = 0; i < S->ncpus; i++) {
        free(S->cpus[i].rq);
        sim_etm_free(&S->cpus[i].etm);
    }
}

static ek_etm4_enc_ctx ctx_of(const sim_thread *t)
{
    ek_etm4_enc_ctx c = {
        .el = (uint8_t)t->el, .sf = 1, .ns = 1, .cid = t->idle ? 0u : (uint32_t)t->tid, .vmid = 0};
    return c;
}

/* A thread of a process whose JIT changed code at time T may not start running on a CPU whose
 * clock is still before T (CPUs advance in quanta, one after the other): it would run the new
 * code at a time when, by the jitdump, the old code was there. */
static int held(const sim_thread *n, const struct sim_cpu *c)
{
    return n->proc && n->proc->hold_until > c->time;
}

static int eligible(const sim_thread *n, const struct sim_cpu *c)
{
    return (n->state == SIM_T_RUNNABLE || n->state == SIM_T_NEW) && !held(n, c);
}

static sim_thread *pick_next(sim *S, struct sim_cpu *c)
{
    (void)S;
    /* the first eligible thread of the queue; stale entries before it go, held threads keep
     * their place */
    size_t i = 0, k = 0;
    sim_thread *pick = NULL;
    while (i < c->nrq && !pick) {
        sim_thread *n = c->rq[i++];
        if (eligible(n, c))
            pick = n;
        else if (n->state == SIM_T_RUNNABLE || n->state == SIM_T_NEW)
            c->rq[k++] = n;
    }
    memmove(c->rq + k, c->rq + i, (c->nrq - i) * sizeof(c->rq[0]));
    c->nrq = k + (c->nrq - i);
    return pick ? pick : c->idle;
}

static void wake_sleepers(sim *S, uint64_t now)
{
    for (size_t i = 0; i < S->nthreads; i++) {
        sim_thread *t = S->threads[i];
        if (t->state == SIM_T_SLEEPING && t->wake_at <= now)
            enqueue(S, t->cpu >= 0 ? t->cpu : least_loaded_cpu(S), t);
    }
}

/* The annotated `ret` of cpu_switch_to: switch to the next thread and return on its stack. */
static void context_switch(sim *S, struct sim_cpu *c, sim_thread *t, uint64_t iaddr)
{
    sim_thread *next = pick_next(S, c);
    if (next != t && !t->idle && t->state == SIM_T_RUNNING) enqueue(S, c->id, t);
    if (next == t) {
        if (!t->depth || t->stack[t->depth - 1].exc) {
            fail(S, "switch to self without a frame in %s (%llx)", "schedule", iaddr);
            return;
        }
        uint64_t target = t->stack[--t->depth].addr;
        sim_etm_branch(&c->etm, iaddr, SIM_I_RET, 1, target, 0, svc_before(S, t->proc, target));
        sim_count_branch(S, t, c->id, iaddr, target, SIM_I_RET, 1);
        t->pc = target;
        c->need_resched = 0;
        return;
    }
    if (!next->depth || next->stack[next->depth - 1].exc) {
        fail(S, "next thread has no kernel frame (%s %llx)", "switch", iaddr);
        return;
    }
    if (t->state == SIM_T_RUNNING) t->state = SIM_T_RUNNABLE;
    t->off_at = c->time;
    uint64_t target = next->stack[--next->depth].addr;
    sim_count_branch(S, t, c->id, iaddr, target, SIM_I_RET, 1);
    next->state = SIM_T_RUNNING;
    next->cpu = c->id;
    next->el = 1;
    next->pc = target;
    next->mcache = NULL;
    ek_etm4_enc_ctx nctx = ctx_of(next);
    /* the ret executes on the outgoing thread's trace; the sessions decide what runs next */
    sim_etm_switch(&c->etm, iaddr, target, &nctx, c->time);
    sim_sched_out(S, c->id, t, c->time);
    c->cur = next;
    c->need_resched = 0;
    sim_sched_in(S, c->id, t, next, c->time);
    sim_etm_switch_done(&c->etm, c->time);
}

/* ------------------------------------------------------------------ kernel actions */

static void do_exit(sim *S, struct sim_cpu *c, sim_thread *t)
{
    t->state = SIM_T_DEAD;
    sim_process *p = t->proc;
    sim_side_exit(S, t, c->time, c->id);
    if (p && --p->live_threads == 0) {
        p->exited = 1;
        if (p->jit && p->jit->started)
            jit_rec(S, p->jit, SIM_JIT_CLOSE, c->time, t->tid, NULL, 0, 0);
    }
    c->need_resched = 1;
}

static void do_clone(sim *S, struct sim_cpu *c, sim_thread *t)
{
    sim_process *p = t->proc;
    const sim_sym *entry = sim_image_symbol(p->exe, "thread_entry");
    if (!entry) {
        fail(S, "%s has no thread_entry (%llx)", p->comm, 0);
        return;
    }
    sim_thread *n = new_thread(S, p, S->next_pid++);
    if (!n || prepare_new_thread(S, n, entry->addr + (p->maps[0].bias))) {
        S->err = EK_ERR_NOMEM;
        S->done = 1;
        return;
    }
    n->budget = p->thread_budget;
    p->live_threads++;
    sim_side_fork(S, n, p->pid, t->tid, c->time, c->id);
    enqueue(S, least_loaded_cpu(S), n);
}

static void do_exec(sim *S, struct sim_cpu *c, sim_thread *t)
{
    sim_process *p = t->proc;
    if (!p->next_exe) return;
    p->exe = p->next_exe;
    p->next_exe = NULL;
    snprintf(p->comm, sizeof(p->comm), "%s", p->exe->blob->name);
    p->nmaps = 0;
    p->nlibs = p->next_lib = 0;
    p->nscript = p->script_pos = 0;
    add_map(S, p, p->exe, 0, c->time);
    t->mcache = NULL;
    /* the exception frame now returns to the new program's entry; user frames are gone */
    unsigned e = t->depth;
    while (e > 0 && !t->stack[e - 1].exc)
        e--;
    if (e == 0) {
        fail(S, "exec without an exception frame in %s (%llx)", p->comm, t->pc);
        return;
    }
    const sim_sym *entry = sim_image_symbol(p->exe, "_start");
    t->stack[e - 1].addr = entry ? entry->addr : 0;
    memmove(t->stack, t->stack + e - 1, (t->depth - (e - 1)) * sizeof(sim_frame));
    t->depth -= e - 1;
    for (unsigned i = 0; i < t->depth; i++)
        frame_node(S, t, i);
    sim_side_comm(S, t, 1, c->time, c->id);
    sim_side_mmap(S, t, &p->maps[0], c->time, c->id);
}

static void do_mmap(sim *S, struct sim_cpu *c, sim_thread *t)
{
    sim_process *p = t->proc;
    if (p->next_lib >= p->nlibs) return;
    const sim_image *lib = p->libs[p->next_lib++];
    /* one library at a time at the same base: a new dlopen reuses the address of the last */
    for (int i = 1; i < p->nmaps; i++)
        if (p->maps[i].img->is_shared) {
            p->maps[i] = p->maps[--p->nmaps];
            i--;
        }
    const sim_map *m = add_map(S, p, lib, p->lib_base, c->time);
    t->mcache = NULL;
    if (m) sim_side_mmap(S, t, m, c->time, c->id);
}

static void do_munmap(sim *S, struct sim_cpu *c, sim_thread *t)
{
    sim_process *p = t->proc;
    (void)S;
    (void)c;
    for (int i = p->nmaps - 1; i >= 1; i--)
        if (p->maps[i].img->is_shared) {
            p->maps[i] = p->maps[--p->nmaps];
            break;
        }
    t->mcache = NULL;
}

static int others_runnable(struct sim_cpu *c)
{
    for (size_t i = 0; i < c->nrq; i++)
        if (eligible(c->rq[i], c)) return 1;
    return 0;
}

static void do_action(sim *S, struct sim_cpu *c, sim_thread *t)
{
    /* a real program's memory management, threads and execs are its own business: only
     * sleeping, yielding and exiting change what the machine runs */
    if (t->proc && t->proc->real && t->sc_nr != NR_NANOSLEEP && t->sc_nr != NR_SCHED_YIELD &&
        t->sc_nr != NR_EXIT && t->sc_nr != 94 && t->sc_nr != -1)
        return;
    switch (t->sc_nr) {
    case -1: /* timer tick */
        if (others_runnable(c)) c->need_resched = 1;
        break;
    case NR_SCHED_YIELD:
        if (others_runnable(c)) c->need_resched = 1;
        break;
    case NR_NANOSLEEP:
        t->state = SIM_T_SLEEPING;
        t->wake_at = c->time + S->tick / 2 + sim_rng_below(&S->rng, (uint32_t)(S->tick + 1));
        c->need_resched = 1;
        break;
    case NR_EXIT:
    case 94: /* exit_group */ do_exit(S, c, t); break;
    case NR_CLONE: do_clone(S, c, t); break;
    case NR_EXECVE: do_exec(S, c, t); break;
    case NR_MMAP: do_mmap(S, c, t); break;
    case NR_MUNMAP: do_munmap(S, c, t); break;
    case NR_MPROTECT: do_jit(S, c, t); break;
    default: break;
    }
}

/* ------------------------------------------------------------------ indirect targets */

static uint64_t pick_callable(sim *S, sim_thread *t, const sim_map *m)
{
    /* cb_* functions of the calling image, api_* functions of the other mapped libraries */
    const sim_process *p = t->proc;
    unsigned n = m->img->ncb;
    if (p)
        for (int k = 0; k < p->nmaps; k++)
            if (&p->maps[k] != m && (p->maps[k].img->is_shared || p->maps[k].jit))
                n += p->maps[k].img->napi;
    if (!n) {
        fail(S, "no indirect-call target in %s (%llx)", m->img->blob->name, t->pc);
        return 0;
    }
    unsigned r = sim_rng_below(&S->rng, n);
    if (r < m->img->ncb) return m->img->cb[r] + m->bias;
    r -= m->img->ncb;
    for (int k = 0; p && k < p->nmaps; k++) {
        const sim_map *o = &p->maps[k];
        if (o == m || !(o->img->is_shared || o->jit)) continue;
        if (r < o->img->napi) return o->img->api[r] + o->bias;
        r -= o->img->napi;
    }
    return 0;
}

static sim_action next_action(sim *S, sim_thread *t)
{
    sim_process *p = t->proc;
    if (t->tid == p->pid) { /* the script runs on the main thread */
        uint32_t step = p->steps++;
        sim_action a = p->script_pos < p->nscript ? p->script[p->script_pos].action : SIM_ACT_NONE;
        /* exec and dlclose take code away: as a program that joins its threads first (they
         * could be running it), the main thread waits until it is the only one */
        if (p->script_pos < p->nscript && p->script[p->script_pos].at <= step &&
            ((a != SIM_ACT_EXEC && a != SIM_ACT_DLCLOSE) || p->live_threads == 1)) {
            p->script_pos++;
            return a;
        }
        /* the JIT changes code at safepoints only (do_jit): an action that found none stays
         * due */
        if (p->jit && p->jit_every && (step % p->jit_every == 0 || p->jit->pending))
            return SIM_ACT_JIT;
    }
    if (p->random_actions && sim_rng_chance(&S->rng, p->random_actions)) {
        static const sim_action pool[] = {SIM_ACT_GETPID, SIM_ACT_WRITE, SIM_ACT_YIELD,
                                          SIM_ACT_SLEEP};
        return pool[sim_rng_below(&S->rng, 4)];
    }
    return SIM_ACT_NONE;
}

static uint64_t indirect_target(sim *S, struct sim_cpu *c, sim_thread *t, const sim_map *m,
                                const sim_insn *in)
{
    (void)c;
    if (in->dec == SIM_DEC_REAL) {
        uint64_t a = sim_real_target(S, t, m, t->pc);
        if (!a) fail(S, "indirect branch without a target in %s (%llx)", m->img->blob->name, t->pc);
        return a;
    }
    if (in->dec == SIM_DEC_SYSCALL) return syscall_target(S, t->sc_nr);
    if (in->dec == SIM_DEC_SCRIPT) {
        sim_action a = next_action(S, t);
        const sim_sym *s = sim_image_symbol(m->img, action_sym[a]);
        if (!s) {
            fail(S, "no action stub %s (%llx)", action_sym[a], 0);
            return 0;
        }
        return s->addr + m->bias;
    }
    if (m->img->is_kernel) {
        fail(S, "unannotated indirect branch in the kernel (%s %llx)", "vmlinux", t->pc);
        return 0;
    }
    return pick_callable(S, t, m);
}

/* ------------------------------------------------------------------ exceptions */

static void take_exception(sim *S, struct sim_cpu *c, sim_thread *t, unsigned type, uint64_t ret,
                           uint64_t vector_off)
{
    if (push(S, t, ret, 1, t->el)) return;
    uint64_t target = S->k_vectors + vector_off;
    int svc = type == EK_ETM4_EXC_CALL;
    t->el = 1;
    ek_etm4_enc_ctx nctx = ctx_of(t);
    sim_etm_exception(&c->etm, type, ret, svc, target, 1, &nctx, c->time);
    sim_count_branch(S, t, c->id, svc ? ret - 4 : ret, target, svc ? SIM_I_SVC : -1, 1);
    t->pc = target;
}

static void take_irq(sim *S, struct sim_cpu *c, sim_thread *t)
{
    c->next_tick += S->tick;
    t->sc_nr = -1;
    take_exception(S, c, t, EK_ETM4_EXC_IRQ, t->pc, 0x480);
}

/* ------------------------------------------------------------------ the interpreter */

static int decide(sim *S, struct sim_cpu *c, sim_thread *t, const sim_map *m, const sim_insn *in,
                  uint64_t ia)
{
    switch (in->dec) {
    case SIM_DEC_GUIDED: return sim_real_bcond(S, t, m, in, ia);
    case SIM_DEC_NORESCHED: return !c->need_resched;
    case SIM_DEC_IDLE_WAKE: return others_runnable(c) || c->need_resched;
    case SIM_DEC_CONTINUE: return t->budget > 0 && !S->done;
    case SIM_DEC_NOTTAKEN: return 0;
    default: break;
    }
    /* loops (backward branches) are taken more often than forward branches */
    return sim_rng_chance(&S->rng, in->imm < 0 ? 176 : 128);
}

/* the mapping serial of a direct branch's target: its own image's, unless the branch leaves
 * it (a module's relocated calls into the kernel) */
static uint32_t direct_serial(const sim *S, const sim_thread *t, const sim_map *m, uint64_t target)
{
    if (target >= m->start && target < m->end) return m->serial;
    const sim_map *tm = lookup(S, t->proc, target);
    return tm ? tm->serial : m->serial;
}

static void exec_stop(sim *S, struct sim_cpu *c, sim_thread *t, const sim_map *m,
                      const sim_insn *in, uint64_t ia)
{
    sim_etm *e = &c->etm;
    uint64_t target;
    int taken = 1;
    switch (in->cls) {
    case SIM_I_OTHER:
        if (in->dec == SIM_DEC_ACTION) do_action(S, c, t);
        t->pc = ia + 4;
        return;
    case SIM_I_MOVZ:
        if (in->reg <= 8) t->xreg[in->reg] = (uint64_t)(uint32_t)in->imm << in->shift;
        if (in->dec == SIM_DEC_ACTION) do_action(S, c, t);
        t->pc = ia + 4;
        return;
    case SIM_I_BCOND:
        taken = decide(S, c, t, m, in, ia);
        target = ia + (int64_t)in->imm;
        sim_etm_branch(e, ia, in->cls, taken, target, direct_serial(S, t, m, target), 0);
        sim_count_branch(S, t, c->id, ia, taken ? target : ia + 4, in->cls, taken);
        t->pc = taken ? target : ia + 4;
        return;
    case SIM_I_B:
        target = ia + (int64_t)in->imm;
        if (target == ia) {
            fail(S, "endless loop reached in %s at %llx", m->img->blob->name, ia);
            return;
        }
        if (in->dec == SIM_DEC_IDLE && !others_runnable(c) && !c->need_resched) {
            /* nothing to run: the core waits for the next event (no trace meanwhile) */
            uint64_t until = (c->time / S->quantum + 1) * S->quantum;
            if (until > c->time) c->time = until;
        }
        sim_etm_branch(e, ia, in->cls, 1, target, direct_serial(S, t, m, target), 0);
        sim_count_branch(S, t, c->id, ia, target, in->cls, 1);
        t->pc = target;
        return;
    case SIM_I_BL:
        if (push(S, t, ia + 4, 0, t->el)) return;
        target = ia + (int64_t)in->imm;
        sim_etm_branch(e, ia, in->cls, 1, target, direct_serial(S, t, m, target), 0);
        sim_count_branch(S, t, c->id, ia, target, in->cls, 1);
        t->pc = target;
        return;
    case SIM_I_BLR:
    case SIM_I_BR: {
        target = indirect_target(S, c, t, m, in);
        if (S->err) return;
        if (in->cls == SIM_I_BLR && push(S, t, ia + 4, 0, t->el)) return;
        const sim_map *tm = lookup(S, t->proc, target);
        if (!tm) {
            fail(S, "indirect branch to unmapped address in %s (%llx)", m->img->blob->name, target);
            return;
        }
        sim_etm_branch(e, ia, in->cls, 1, target, tm->serial, svc_before(S, t->proc, target));
        sim_count_branch(S, t, c->id, ia, target, in->cls, 1);
        t->pc = target;
        t->mcache = tm;
        return;
    }
    case SIM_I_RET:
        if (in->dec == SIM_DEC_SWITCH) {
            context_switch(S, c, t, ia);
            return;
        }
        if (!t->depth || t->stack[t->depth - 1].exc) {
            fail(S, "return without a call frame in %s (%llx)", m->img->blob->name, ia);
            return;
        }
        target = t->stack[--t->depth].addr;
        {
            const sim_map *tm = lookup(S, t->proc, target);
            if (!tm) {
                fail(S, "return to unmapped address in %s (%llx)", m->img->blob->name, target);
                return;
            }
            sim_etm_branch(e, ia, in->cls, 1, target, tm->serial, svc_before(S, t->proc, target));
            t->mcache = tm;
        }
        sim_count_branch(S, t, c->id, ia, target, in->cls, 1);
        t->pc = target;
        return;
    case SIM_I_ERET: {
        if (!t->depth || !t->stack[t->depth - 1].exc) {
            fail(S, "eret without an exception frame (%s %llx)", "kernel", ia);
            return;
        }
        sim_frame f = t->stack[--t->depth];
        t->el = f.el;
        const sim_map *tm = lookup(S, t->proc, f.addr);
        if (!tm) {
            fail(S, "eret to unmapped address (%s %llx)", t->proc ? t->proc->comm : "?", f.addr);
            return;
        }
        ek_etm4_enc_ctx nctx = ctx_of(t);
        sim_etm_eret(e, ia, f.addr, tm->serial, svc_before(S, t->proc, f.addr), &nctx, c->time);
        sim_count_branch(S, t, c->id, ia, f.addr, in->cls, 1);
        t->pc = f.addr;
        t->mcache = tm;
        return;
    }
    case SIM_I_SVC:
        /* real binaries: the number the code puts into x8 before it (-1: not known) */
        t->sc_nr = m->img->real ? in->imm : (int)t->xreg[8];
        take_exception(S, c, t, EK_ETM4_EXC_CALL, ia + 4, 0x400);
        return;
    default: fail(S, "unsupported instruction in %s at %llx", m->img->blob->name, ia); return;
    }
}

static void cpu_run(sim *S, struct sim_cpu *c, uint64_t until)
{
    while (c->time < until && !S->err) {
        sim_thread *t = c->cur;
        const sim_map *m = t->mcache;
        if (!m || t->pc < m->start || t->pc >= m->end) {
            m = lookup(S, t->proc, t->pc);
            if (!m) {
                fail(S, "execution at unmapped address in %s (%llx)",
                     t->proc ? t->proc->comm : "idle", t->pc);
                return;
            }
            t->mcache = m;
        }
        const sim_image *img = m->img;
        uint32_t i = (uint32_t)((t->pc - m->bias - img->seg_vaddr) >> 2);
        const struct sim_stop *st = &img->stop[i];
        uint32_t s = st->idx;
        if (s >= img->ninsn) {
            fail(S, "ran off the end of %s at %llx", img->blob->name, t->pc);
            return;
        }
        uint64_t n = (uint64_t)(s - i) + 1;
        if (t->el == 0 && c->time + n > c->next_tick) {
            uint64_t k = c->next_tick > c->time ? c->next_tick - c->time : 0;
            c->time += k;
            S->insn_total += k;
            if (t->budget > k)
                t->budget -= k;
            else
                t->budget = 0;
            if (img->seen)
                for (uint64_t q = i; q < i + k; q++)
                    img->seen[q >> 6] |= 1ull << (q & 63);
            t->pc += 4 * k;
            take_irq(S, c, t);
            continue;
        }
        c->time += n;
        S->insn_total += n;
        if (img->seen)
            for (uint32_t k = i; k <= s; k++)
                img->seen[k >> 6] |= 1ull << (k & 63);
        if (t->el == 0) {
            if (t->budget > n)
                t->budget -= n;
            else
                t->budget = 0;
        }
        uint64_t ia = t->pc + 4 * (uint64_t)(s - i);
        const sim_insn *in = &st->insn;
        if (!in->dec &&
            (in->cls == SIM_I_BCOND || in->cls == SIM_I_B ||
             (in->cls == SIM_I_BL && t->depth < t->cap)) &&
            in->imm) {
            /* hot path: direct branches */
            int taken = in->cls != SIM_I_BCOND || sim_rng_chance(&S->rng, in->imm < 0 ? 176 : 128);
            uint64_t target = ia + (int64_t)in->imm;
            if (in->cls == SIM_I_BL) {
                t->stack[t->depth].addr = ia + 4;
                t->stack[t->depth].budget = t->budget;
                t->stack[t->depth].exc = 0;
                t->stack[t->depth].el = (uint8_t)t->el;
                t->depth++;
                if (S->truth) frame_node(S, t, t->depth - 1);
            }
            sim_etm_direct(&c->etm, ia, in->cls, taken, target,
                           target >= m->start && target < m->end ? m->serial
                                                                 : direct_serial(S, t, m, target));
            sim_count_branch(S, t, c->id, ia, taken ? target : ia + 4, in->cls, taken);
            t->pc = taken ? target : ia + 4;
            continue;
        }
        t->pc = ia;
        exec_stop(S, c, t, m, in, ia);
    }
}

static int all_exited(const sim *S)
{
    for (size_t i = 0; i < S->nprocs; i++)
        if (!S->procs[i]->exited) return 0;
    return 1;
}

int sim_run(sim *S, uint64_t until_ns)
{
    while (!S->err) {
        uint64_t end = S->now + S->quantum;
        wake_sleepers(S, S->now);
        for (int i = 0; i < S->ncpus && !S->err; i++) {
            cpu_run(S, &S->cpus[i], end);
            sim_etm_drain(&S->cpus[i].etm);
        }
        S->now = end;
        sim_sessions_poll(S, S->now);
        if (S->trace_budget && S->trace_total >= S->trace_budget) S->done = 1;
        if (S->now >= until_ns) S->done = 1;
        if (all_exited(S))
            break; /* done, or every process ended before the trace budget was reached */
        if (S->now >= until_ns + 1000000000ull) {
            ek_diag_emit(S->diag, EK_SEV_WARN, "sim.timeout", 0, NULL, -1, -1, -1,
                         "processes still running 1 s after the end of the scenario");
            break;
        }
    }
    return S->err;
}
