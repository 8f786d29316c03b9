/* ek_profile_maps: a recording's mappings by process and time, as a locator for
 * ek_profile_builder (sample address -> binary and the binary's own address).
 *
 * The session keeps its own timeline (src/session/aspace.c) for decoding; its public API
 * names the DSO of an address (ek_script_resolver) but not the mapping's start and offset,
 * which the binary address needs. So this reads the MMAP/MMAP2, FORK and COMM records again:
 * cheap next to decoding, and the session's DSO name (the hint) decides between maps that
 * overlap in time, so both agree on which file an address was in. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/vec.h"
#include "etmkit/symbols.h"
#include "profile/profile_int.h"

#define KERNEL_NAME   "[kernel.kallsyms]"
#define PM_EXACT_BITS 9
#define KERNEL_PID    (-1)

typedef struct pm_file {
    char *path; /* as recorded ("[kernel.kallsyms]" for the kernel) */
    uint8_t id[20];
    size_t idlen;
    int kernel, module;
    int looked;   /* ELF looked for (set last, under the root's lock: read with acquire) */
    int mismatch; /* a file was found with another build-id */
    uint64_t load_base;
    ek_elf_segment *segs; /* PT_LOAD, file order (copied) */
    size_t nsegs;
    char *elf;      /* the ELF file found */
    uint8_t *bytes; /* its contents, read on the first code request */
    size_t nbytes;
    int read_tried; /* (as looked) */
} pm_file;

typedef struct pm_map {
    int64_t pid;
    uint64_t start, end, pgoff;
    uint64_t t_from, t_to; /* valid in [t_from, t_to) */
    size_t seq;            /* record order */
    size_t file;
    int contested; /* a map of another file of its process overlaps it */
    int twin;      /* another map of its process overlaps it in address and time */
} pm_map;

typedef struct pm_fork {
    int64_t pid, ppid;
} pm_fork;

struct ek_profile_maps {
    /* A fork (ek_profile_maps_fork) reads its root's maps, files and options, and has caches
     * of its own; the files' ELF facts and code are found once, under the root's lock. */
    ek_profile_maps *root; /* NULL: this is a root */
    pthread_mutex_t mu;    /* a root's */
    EK_VEC(pm_map) maps; /* sorted by (pid, seq) */
    EK_VEC(pm_file) files;
    EK_VEC(pm_fork) forks;
    char *symfs, *buildid_dir, *vmlinux;
    int hints_stable; /* ek_profile_maps_opts.hints_stable */
    size_t cache[8]; /* maps found lately (by time, neither contested nor twins), the last
                        hit tried first */
    unsigned cnext, chit;
    /* The last answers whole, for a remembered map (above): profile_int.h */
    prof_fast_set fast;
    /* Answers found with the session's DSO name (the hint), where maps of different files
     * overlap: by address, for the sample times that find the same maps for it (no map of the
     * process holding it starts or ends among them), and for the hint that named the answer's
     * own file. The hint is still asked every time; the search is not. */
    struct pm_exact {
        int64_t pid;
        uint64_t addr;
        uint64_t t_from, t_to; /* t_to == 0: empty */
        pm_file *pf;           /* the answer's file */
        const char *hint;      /* the hint's name then (hints_stable: its address tells) */
        ek_profile_loc loc;
    } exact[1u << PM_EXACT_BITS];
};

static char *dupz(const char *s)
{
    return s ? strdup(s) : NULL;
}

static const ek_perf_build_id *feature_id(const ek_perf_file *f, const char *path)
{
    const ek_perf_features *ft = ek_perf_features_get(f);
    if (!ft) return NULL;
    for (size_t i = 0; i < ft->nbuild_ids; i++)
        if (ft->build_ids[i].filename && !strcmp(ft->build_ids[i].filename, path))
            return &ft->build_ids[i];
    return NULL;
}

/* the file with this identity, added when new */
static int file_of(ek_profile_maps *m, const char *path, const uint8_t *id, size_t idlen,
                   int kernel, size_t *out)
{
    for (size_t i = 0; i < m->files.n; i++) {
        pm_file *x = &m->files.v[i];
        if (x->idlen == idlen && !memcmp(x->id, id, idlen) && !strcmp(x->path, path)) {
            *out = i;
            return EK_OK;
        }
    }
    pm_file nf;
    memset(&nf, 0, sizeof nf);
    nf.path = strdup(path);
    if (!nf.path) return EK_ERR_NOMEM;
    memcpy(nf.id, id, idlen);
    nf.idlen = idlen;
    nf.kernel = kernel;
    size_t n = strlen(path);
    nf.module = kernel && !(n && path[0] == '[') && (n > 3 && !strcmp(path + n - 3, ".ko"));
    if (ek_vec_push(&m->files, nf)) {
        free(nf.path);
        return EK_ERR_NOMEM;
    }
    *out = m->files.n - 1;
    return EK_OK;
}

static int map_cmp(const void *x, const void *y)
{
    const pm_map *a = x, *b = y;
    if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

int ek_profile_maps_new(const ek_perf_file *f, const ek_profile_maps_opts *o, ek_profile_maps **out)
{
    if (!f || !out) return EK_ERR_ARG;
    *out = NULL;
    ek_profile_maps *m = calloc(1, sizeof *m);
    if (!m) return EK_ERR_NOMEM;
    if (pthread_mutex_init(&m->mu, NULL)) {
        free(m);
        return EK_ERR_NOMEM;
    }
    if (o && o->size >= sizeof *o) {
        m->symfs = dupz(o->symfs);
        m->buildid_dir = dupz(o->buildid_dir);
        m->vmlinux = dupz(o->vmlinux);
        m->hints_stable = o->hints_stable;
    }
    ek_perf_iter *it = NULL;
    int rc = ek_perf_iter_new(f, EK_PERF_ITER_SIDEBAND, NULL, &it);
    if (rc) goto fail;
    /* exec times per pid, applied after the maps are known */
    EK_VEC(pm_fork) execs = {0}; /* pid, time (in ppid) */
    ek_perf_record r;
    size_t seq = 0;
    while ((rc = ek_perf_iter_next(it, &r)) == 0) {
        uint64_t t = (r.sid.present & EK_PERF_SAMPLE_TIME) ? r.sid.time : 0;
        if (r.type == EK_PERF_RECORD_MMAP || r.type == EK_PERF_RECORD_MMAP2) {
            if (!r.u.mmap.filename || !r.u.mmap.len) continue;
            if (r.type == EK_PERF_RECORD_MMAP2 && !(r.u.mmap.prot & 4) && r.u.mmap.prot) continue;
            if (r.misc & EK_PERF_MISC_MMAP_DATA) continue;
            unsigned mode = r.misc & EK_PERF_MISC_CPUMODE_MASK;
            int kernel = mode == EK_PERF_MISC_KERNEL || mode == EK_PERF_MISC_GUEST_KERNEL;
            const char *path = r.u.mmap.filename;
            if (kernel && !strncmp(path, KERNEL_NAME, strlen(KERNEL_NAME))) path = KERNEL_NAME;
            uint8_t id[20];
            size_t idlen = 0;
            if (r.type == EK_PERF_RECORD_MMAP2 && r.u.mmap.has_build_id) {
                idlen = r.u.mmap.build_id_size > 20 ? 20 : r.u.mmap.build_id_size;
                memcpy(id, r.u.mmap.build_id, idlen);
            } else {
                const ek_perf_build_id *b = feature_id(f, path);
                if (b) {
                    idlen = b->size > 20 ? 20 : b->size;
                    memcpy(id, b->id, idlen);
                }
            }
            uint8_t canon[EK_PROFILE_BUILD_ID_MAX];
            size_t clen = 0;
            prof_build_id_canon(id, idlen, canon, &clen);
            size_t fi;
            if ((rc = file_of(m, path, canon, clen, kernel, &fi))) break;
            uint64_t end = r.u.mmap.addr + r.u.mmap.len;
            if (end < r.u.mmap.addr) end = UINT64_MAX;
            pm_map mp = {kernel ? KERNEL_PID : (int64_t)r.u.mmap.pid,
                         r.u.mmap.addr,
                         end,
                         r.u.mmap.pgoff,
                         t,
                         UINT64_MAX,
                         seq++,
                         fi,
                         0,
                         0};
            if (ek_vec_push(&m->maps, mp)) {
                rc = EK_ERR_NOMEM;
                break;
            }
        } else if (r.type == EK_PERF_RECORD_FORK) {
            if (r.u.fork.pid == r.u.fork.ppid) continue; /* a thread */
            pm_fork fk = {r.u.fork.pid, r.u.fork.ppid};
            if (ek_vec_push(&m->forks, fk)) {
                rc = EK_ERR_NOMEM;
                break;
            }
        } else if (r.type == EK_PERF_RECORD_COMM && (r.misc & EK_PERF_MISC_COMM_EXEC) && t) {
            pm_fork ex = {r.u.comm.pid, (int64_t)t};
            if (ek_vec_push(&execs, ex)) {
                rc = EK_ERR_NOMEM;
                break;
            }
        }
    }
    ek_perf_iter_free(it);
    if (rc == EK_ERR_EOS) rc = EK_OK;
    if (!rc && m->maps.n) {
        qsort(m->maps.v, m->maps.n, sizeof *m->maps.v, map_cmp);
        /* a map ends where a later one of its process overlaps it, or at an exec */
        for (size_t i = 0; i < m->maps.n; i++) {
            pm_map *a = &m->maps.v[i];
            for (size_t j = i + 1; j < m->maps.n && m->maps.v[j].pid == a->pid; j++) {
                const pm_map *b = &m->maps.v[j];
                if (b->start < a->end && a->start < b->end && b->t_from >= a->t_from) {
                    a->t_to = b->t_from;
                    break;
                }
            }
            for (size_t j = i + 1; j < m->maps.n && m->maps.v[j].pid == a->pid; j++) {
                pm_map *b = &m->maps.v[j];
                if (b->start < a->end && a->start < b->end && b->file != a->file)
                    a->contested = b->contested = 1;
            }
            for (size_t k = 0; k < execs.n; k++)
                if (execs.v[k].pid == a->pid && (uint64_t)execs.v[k].ppid > a->t_from &&
                    (uint64_t)execs.v[k].ppid < a->t_to)
                    a->t_to = (uint64_t)execs.v[k].ppid;
        }
        for (size_t i = 0; i < m->maps.n; i++) {
            pm_map *a = &m->maps.v[i];
            for (size_t j = i + 1; j < m->maps.n && m->maps.v[j].pid == a->pid; j++) {
                pm_map *b = &m->maps.v[j];
                if (b->start < a->end && a->start < b->end && b->t_from < a->t_to &&
                    a->t_from < b->t_to)
                    a->twin = b->twin = 1;
            }
        }
    }
    ek_vec_free(&execs);
    if (rc) goto fail;
    for (unsigned i = 0; i < 8; i++)
        m->cache[i] = SIZE_MAX;
    *out = m;
    return EK_OK;
fail:
    ek_profile_maps_free(m);
    return rc;
}

int ek_profile_maps_fork(ek_profile_maps *m, ek_profile_maps **out)
{
    if (!m || !out) return EK_ERR_ARG;
    *out = NULL;
    ek_profile_maps *root = m->root ? m->root : m;
    ek_profile_maps *f = calloc(1, sizeof *f);
    if (!f) return EK_ERR_NOMEM;
    f->root = root;
    f->maps = root->maps;
    f->files = root->files;
    f->forks = root->forks;
    f->symfs = root->symfs;
    f->buildid_dir = root->buildid_dir;
    f->vmlinux = root->vmlinux;
    f->hints_stable = root->hints_stable;
    for (unsigned i = 0; i < 8; i++)
        f->cache[i] = SIZE_MAX;
    *out = f;
    return EK_OK;
}

void ek_profile_maps_free(ek_profile_maps *m)
{
    if (!m) return;
    if (m->root) { /* a fork: its caches only */
        free(m);
        return;
    }
    pthread_mutex_destroy(&m->mu);
    for (size_t i = 0; i < m->files.n; i++) {
        free(m->files.v[i].path);
        free(m->files.v[i].segs);
        free(m->files.v[i].elf);
        free(m->files.v[i].bytes);
    }
    ek_vec_free(&m->files);
    ek_vec_free(&m->maps);
    ek_vec_free(&m->forks);
    free(m->symfs);
    free(m->buildid_dir);
    free(m->vmlinux);
    free(m);
}

/* The ELF facts of a file: where perf finds it, with the recorded build-id. */
static void find_elf(const ek_profile_maps *m, pm_file *pf)
{
    if (pf->module) return; /* relocatable: addresses are offsets in the module's map */
    char hex[41] = "";
    if (pf->idlen) ek_build_id_hex(pf->id, pf->idlen > 20 ? 20 : pf->idlen, hex, sizeof hex);
    char *path = NULL;
    if (pf->kernel) {
        if (!m->vmlinux) return;
        path = strdup(m->vmlinux);
    } else {
        path = ek_buildid_find(pf->path, pf->idlen ? hex : NULL, m->symfs, m->buildid_dir);
    }
    if (!path) return;
    ek_elf_info *in = NULL;
    if (!ek_elf_info_read(path, NULL, &in)) {
        uint8_t canon[EK_PROFILE_BUILD_ID_MAX];
        size_t clen = ek_profile_build_id_canon(in->build_id, in->build_id_len, canon);
        if (pf->idlen && (clen != pf->idlen || memcmp(canon, pf->id, clen))) {
            pf->mismatch = 1;
        } else if (in->nsegs) {
            pf->segs = malloc(in->nsegs * sizeof *pf->segs);
            if (pf->segs) {
                memcpy(pf->segs, in->segs, in->nsegs * sizeof *pf->segs);
                pf->nsegs = in->nsegs;
                pf->load_base = in->segs[0].vaddr;
                pf->elf = strdup(path);
            }
        }
        ek_elf_info_free(in);
    }
    free(path);
}

/* find_elf once for the root and its forks (the lock: a fork may run on another thread) */
static void look_up_elf(ek_profile_maps *m, pm_file *pf)
{
    if (__atomic_load_n(&pf->looked, __ATOMIC_ACQUIRE)) return;
    ek_profile_maps *root = m->root ? m->root : m;
    pthread_mutex_lock(&root->mu);
    if (!pf->looked) {
        find_elf(root, pf);
        __atomic_store_n(&pf->looked, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&root->mu);
}

/* does map i hold addr at time t (has_t) */
static int map_holds(const pm_map *mp, uint64_t addr)
{
    return addr >= mp->start && addr < mp->end;
}

static int in_time(const pm_map *mp, int has_t, uint64_t t)
{
    return !has_t || (t >= mp->t_from && t < mp->t_to);
}

/* the index of pid's first map (binary search on the (pid, seq) order) */
static size_t first_of_pid(const ek_profile_maps *m, int64_t pid)
{
    size_t lo = 0, hi = m->maps.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->maps.v[mid].pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The map of pid holding addr: in time, else the first one after t (a map recorded late),
 * else the last one; among several, the one whose file is named hint. */
static const pm_map *find_in_pid_1(ek_profile_maps *m, int64_t pid, uint64_t addr, int has_t,
                                   uint64_t t, const char *hint)
{
    size_t lo = first_of_pid(m, pid);
    const pm_map *best = NULL, *after = NULL, *last = NULL;
    for (size_t i = lo; i < m->maps.n && m->maps.v[i].pid == pid; i++) {
        const pm_map *mp = &m->maps.v[i];
        if (!map_holds(mp, addr)) continue;
        if (hint && strcmp(m->files.v[mp->file].path, hint)) continue;
        if (in_time(mp, has_t, t))
            best = mp;
        else if (has_t && mp->t_from > t && !after)
            after = mp;
        last = mp;
    }
    return best ? best : after ? after : last;
}

/* The map of pid holding addr: of the file the session named (hint) when there is one; in
 * time, else the first one after t (a map recorded late), else the last one. */
static const pm_map *find_in_pid(ek_profile_maps *m, int64_t pid, uint64_t addr, int has_t,
                                 uint64_t t, const char *hint)
{
    const pm_map *mp = hint ? find_in_pid_1(m, pid, addr, has_t, t, hint) : NULL;
    return mp ? mp : find_in_pid_1(m, pid, addr, has_t, t, NULL);
}

static const pm_map *search(ek_profile_maps *m, int64_t pid, int kernel, uint64_t addr, int has_t,
                            uint64_t t, const char *hint)
{
    const pm_map *mp = NULL;
    for (int depth = 0; depth < 16 && !mp; depth++) {
        mp = find_in_pid(m, pid, addr, has_t, t, hint);
        if (mp || kernel) break;
        int64_t parent = -2;
        for (size_t i = 0; i < m->forks.n; i++)
            if (m->forks.v[i].pid == pid) parent = m->forks.v[i].ppid;
        if (parent < 0) break;
        pid = parent;
    }
    if (kernel && mp && hint && strcmp(m->files.v[mp->file].path, hint) &&
        !strcmp(hint, KERNEL_NAME)) {
        /* a module map the session did not place the address in: the kernel's */
        mp = find_in_pid(m, pid, addr, has_t, t, KERNEL_NAME);
    }
    return mp;
}

/* The map of addr for sample s. Only where maps of different files overlap in the process
 * does the session's DSO name (hint) decide: asked then only. *asked: the hint was asked before
 * (*h its answer), else set when it is asked here. */
static const pm_map *find_map(ek_profile_maps *m, const ek_sample *s, uint64_t addr,
                              ek_profile_hint_fn hint, void *hint_ctx, int *asked,
                              const char **h_io)
{
    int kernel = (addr >> 63) != 0;
    int64_t pid = kernel ? KERNEL_PID : s->pid;
    int has_t = s->has_time;
    uint64_t t = s->time;
    if (has_t)
        for (unsigned n = 0; n < 8; n++) {
            unsigned i = (m->chit + n) % 8;
            size_t k = m->cache[i];
            if (k == SIZE_MAX) continue;
            const pm_map *mp = &m->maps.v[k];
            if (mp->pid == pid && map_holds(mp, addr) && in_time(mp, 1, t)) {
                m->chit = i;
                return mp;
            }
        }
    const pm_map *mp = search(m, pid, kernel, addr, has_t, t, NULL);
    if (mp && mp->contested) {
        if (!*asked) *h_io = hint ? hint(hint_ctx, s, addr) : NULL;
        *asked = 1;
        const char *h = *h_io;
        /* When the session names mp's own file, the search for the hint's maps finds mp again
         * (it stops at the same process of the fork chain, the first that has a map holding
         * addr, and mp, chosen among all that process's maps, is chosen among those of its
         * file too): not searched twice. */
        if (h && strcmp(m->files.v[mp->file].path, h))
            mp = search(m, pid, kernel, addr, has_t, t, h);
        return mp;
    }
    /* remembered only where it is the one answer for every address it holds at every time
     * it is in: then the search would find it too, whatever else is remembered */
    if (mp && has_t && mp->pid == pid && !mp->twin) {
        m->chit = m->cnext % 8;
        m->cache[m->cnext++ % 8] = (size_t)(mp - m->maps.v);
    }
    return mp;
}

/* The file offsets [*lo, *hi) around fo that no segment of pf starts or ends among: the first
 * segment holding fo holds them all and is the first for each. */
static void seg_range(const pm_file *pf, uint64_t fo, uint64_t *lo, uint64_t *hi)
{
    *lo = 0;
    *hi = UINT64_MAX;
    for (size_t i = 0; i < pf->nsegs; i++) {
        const ek_elf_segment *g = &pf->segs[i];
        uint64_t span = g->filesz > g->memsz ? g->filesz : g->memsz;
        uint64_t b[2] = {g->offset, g->offset + span < g->offset ? UINT64_MAX : g->offset + span};
        for (int k = 0; k < 2; k++) {
            if (b[k] <= fo && b[k] > *lo) *lo = b[k];
            if (b[k] > fo && b[k] < *hi) *hi = b[k];
        }
    }
}

/* The sample times around t that find the same maps of pid for addr, [*lo, *hi): no map of
 * pid holding addr starts or ends among them, so each is in time (or later) for all or none. */
static void addr_times(const ek_profile_maps *m, int64_t pid, uint64_t addr, uint64_t t,
                       uint64_t *lo, uint64_t *hi)
{
    *lo = 0;
    *hi = UINT64_MAX;
    for (size_t i = first_of_pid(m, pid); i < m->maps.n && m->maps.v[i].pid == pid; i++) {
        const pm_map *mp = &m->maps.v[i];
        if (!map_holds(mp, addr)) continue;
        const uint64_t b[2] = {mp->t_from, mp->t_to};
        for (int k = 0; k < 2; k++) {
            if (b[k] <= t && b[k] > *lo) *lo = b[k];
            if (b[k] > t && b[k] < *hi) *hi = b[k];
        }
    }
}

static struct pm_exact *exact_slot(ek_profile_maps *m, int64_t pid, uint64_t addr)
{
    uint64_t k = (addr ^ ((uint64_t)pid << 40)) * 0x9e3779b97f4a7c15ull;
    return &m->exact[k >> (64 - PM_EXACT_BITS)];
}

prof_fast_set *prof_maps_fast(ek_profile_maps *m)
{
    return &m->fast;
}

/* (out of line: the last answers are most of the calls, and stay free of this part's register
 * saves) */
__attribute__((noinline)) int prof_maps_locate_slow(ek_profile_maps *m, const ek_sample *s,
                                                    uint64_t addr, ek_profile_hint_fn hint,
                                                    void *hint_ctx, ek_profile_loc *out)
{
    int asked = 0;
    const char *h = NULL;
    /* a user address whose answer the hint decided: the same maps, and the hint again names
     * the answer's file, give the same answer */
    int user = !(addr >> 63) && s->has_time;
    struct pm_exact *ex = user ? exact_slot(m, s->pid, addr) : NULL;
    if (ex && ex->addr == addr && ex->pid == s->pid && s->time >= ex->t_from &&
        s->time < ex->t_to) {
        h = hint ? hint(hint_ctx, s, addr) : NULL;
        asked = 1;
        if (h && ((m->hints_stable && h == ex->hint) || !strcmp(h, ex->pf->path))) {
            *out = ex->loc;
            return EK_OK;
        }
    }
    const pm_map *mp = find_map(m, s, addr, hint, hint_ctx, &asked, &h);
    if (!mp) return EK_ERR_NOT_FOUND;
    pm_file *pf = &m->files.v[mp->file];
    look_up_elf(m, pf);
    uint64_t vaddr;
    /* the addresses that share addr's offset to its binary address */
    uint64_t lo = mp->start, hi = mp->end;
    if (pf->kernel && !pf->module) {
        vaddr = addr;
    } else if (pf->module) {
        vaddr = addr - mp->start;
    } else {
        uint64_t fo = addr - mp->start + mp->pgoff;
        vaddr = fo;
        if (!pf->segs) return EK_ERR_NOT_FOUND; /* no code: nothing was decoded there */
        int found = 0;
        for (size_t i = 0; i < pf->nsegs && !found; i++) {
            const ek_elf_segment *g = &pf->segs[i];
            if (fo >= g->offset && fo - g->offset < (g->filesz > g->memsz ? g->filesz : g->memsz)) {
                vaddr = fo - g->offset + g->vaddr;
                found = 1;
            }
        }
        if (!found) return EK_ERR_NOT_FOUND;
        uint64_t flo, fhi;
        seg_range(pf, fo, &flo, &fhi);
        /* back to addresses: fo - (addr - lo) .. within the map */
        if (fo - flo < addr - lo) lo = addr - (fo - flo);
        if (fhi - fo < hi - addr) hi = addr + (fhi - fo);
    }
    out->id.path = pf->path;
    out->id.build_id = pf->id;
    out->id.build_id_len = pf->idlen;
    out->id.load_base = pf->kernel ? 0 : pf->load_base;
    out->vaddr = vaddr;
    out->mapping = (uint64_t)(mp - m->maps.v) + 1;
    if (pf->kernel && !pf->module) out->mapping = 0; /* the kernel is one mapping */
    /* remembered whole where find_map would have found mp among its remembered maps */
    int64_t pid = (addr >> 63) ? KERNEL_PID : s->pid;
    if (s->has_time && mp->pid == pid && !mp->twin && !mp->contested) {
        prof_fast *x = &m->fast.e[m->fast.next++ % PROF_FAST_N];
        x->pid = pid;
        x->lo = lo;
        x->hi = hi;
        x->t_from = mp->t_from;
        x->t_to = mp->t_to;
        x->delta = vaddr - addr;
        x->loc = *out;
    }
    /* found with the hint, which named this file: remembered for this address (the search
     * found a map of the sample's own process, so it stops there at every time of the box) */
    if (ex && asked && h && mp->pid == s->pid && !strcmp(h, pf->path)) {
        ex->pid = s->pid;
        ex->addr = addr;
        addr_times(m, s->pid, addr, s->time, &ex->t_from, &ex->t_to);
        ex->pf = pf;
        ex->hint = h;
        ex->loc = *out;
    }
    return EK_OK;
}

int ek_profile_maps_locate(ek_profile_maps *m, const ek_sample *s, uint64_t addr,
                           ek_profile_hint_fn hint, void *hint_ctx, ek_profile_loc *out)
{
    if (!m || !s || !out) return EK_ERR_ARG;
    return prof_maps_locate(m, &m->fast, s, addr, hint, hint_ctx, out);
}

size_t ek_profile_maps_code(void *ctx, const ek_profile_loc *loc, uint64_t vaddr, void *buf,
                            size_t len)
{
    ek_profile_maps *m = ctx;
    if (!m || !loc || !loc->mapping || loc->mapping > m->maps.n) return 0;
    pm_file *pf = &m->files.v[m->maps.v[loc->mapping - 1].file];
    /* (loc is an answer: its file was looked for, maybe by another fork) */
    if (!__atomic_load_n(&pf->looked, __ATOMIC_ACQUIRE) || !pf->segs || !pf->elf) return 0;
    if (!__atomic_load_n(&pf->read_tried, __ATOMIC_ACQUIRE)) {
        ek_profile_maps *root = m->root ? m->root : m;
        pthread_mutex_lock(&root->mu);
        if (!pf->read_tried) {
            FILE *f = fopen(pf->elf, "rb");
            if (f && !fseek(f, 0, SEEK_END)) {
                long n = ftell(f);
                if (n > 0 && !fseek(f, 0, SEEK_SET) && (pf->bytes = malloc((size_t)n)) &&
                    fread(pf->bytes, 1, (size_t)n, f) == (size_t)n)
                    pf->nbytes = (size_t)n;
            }
            if (f) fclose(f);
            __atomic_store_n(&pf->read_tried, 1, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&root->mu);
    }
    if (!pf->nbytes) return 0;
    for (size_t i = 0; i < pf->nsegs; i++) {
        const ek_elf_segment *g = &pf->segs[i];
        if (vaddr < g->vaddr || vaddr - g->vaddr >= g->filesz) continue;
        uint64_t off = g->offset + (vaddr - g->vaddr);
        uint64_t room = g->filesz - (vaddr - g->vaddr);
        if (off >= pf->nbytes) return 0;
        if (room > pf->nbytes - off) room = pf->nbytes - off;
        size_t n = len < room ? len : (size_t)room;
        memcpy(buf, pf->bytes + off, n);
        return n;
    }
    return 0;
}

void ek_profile_maps_missing(const ek_profile_maps *m, ek_sbuf *out)
{
    if (!m || !out) return;
    for (size_t i = 0; i < m->files.n; i++) {
        const pm_file *pf = &m->files.v[i];
        if (!pf->looked || pf->segs || pf->kernel) continue;
        char hex[41] = "none";
        if (pf->idlen) ek_build_id_hex(pf->id, pf->idlen > 20 ? 20 : pf->idlen, hex, sizeof hex);
        ek_sbuf_puts(out, pf->path);
        ek_sbuf_puts(out, " (build-id ");
        ek_sbuf_puts(out, hex);
        ek_sbuf_puts(out, pf->mismatch ? "): the file found has another build-id\n"
                                       : "): no ELF file found\n");
    }
}
