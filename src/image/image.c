/* Memory image: regions -> per-space flattened runs -> binary search with a last-hit cache. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/mapfile.h"
#include "core/vec.h"
#include "etmkit/etmkit.h"
#include "etmkit/image.h"
#include "etmkit/symbols.h"

typedef struct img_file {
    char *path;
    dev_t dev;
    ino_t ino;
    ek_mapped map;
} img_file;

typedef struct region {
    uint64_t start, last; /* inclusive bounds: a region may end at 2^64 - 1 */
    const uint8_t *data;  /* byte at 'start' */
    unsigned space;       /* EK_MS_* bits; 0xff = any */
} region;

typedef struct run {
    uint64_t start, last;
    const uint8_t *data; /* byte at 'start' */
} run;

typedef struct flat {
    run *v;
    size_t n;
    size_t hit; /* index of the last run found */
} flat;

struct ek_image {
    ek_diag diag;
    EK_VEC(region) regions;
    EK_VEC(img_file *) files;
    flat *flat[256]; /* by query space; built on first use, dropped when regions change */
    ek_image_read_fn cb;
    void *cb_ctx;
};

int ek_image_new(const ek_diag *diag, ek_image **out)
{
    *out = NULL;
    ek_image *img = calloc(1, sizeof *img);
    if (!img) return EK_ERR_NOMEM;
    if (diag) img->diag = *diag;
    *out = img;
    return EK_OK;
}

static void drop_flat(ek_image *img)
{
    for (int i = 0; i < 256; i++) {
        if (img->flat[i]) {
            free(img->flat[i]->v);
            free(img->flat[i]);
            img->flat[i] = NULL;
        }
    }
}

void ek_image_free(ek_image *img)
{
    if (!img) return;
    drop_flat(img);
    for (size_t i = 0; i < img->files.n; i++) {
        ek_unmap_file(&img->files.v[i]->map);
        free(img->files.v[i]->path);
        free(img->files.v[i]);
    }
    ek_vec_free(&img->files);
    ek_vec_free(&img->regions);
    free(img);
}

size_t ek_image_region_count(const ek_image *img)
{
    return img ? img->regions.n : 0;
}

static unsigned norm_space(ek_mem_space s)
{
    unsigned v = (unsigned)s & 0xffu;
    return v ? v : 0xffu;
}

static int add_region(ek_image *img, const uint8_t *data, uint64_t len, uint64_t addr,
                      ek_mem_space space)
{
    if (len == 0) return EK_OK;
    region r;
    r.start = addr;
    /* Clip at the top of the address space instead of wrapping. */
    r.last = len - 1 > UINT64_MAX - addr ? UINT64_MAX : addr + (len - 1);
    r.data = data;
    r.space = norm_space(space);
    if (ek_vec_push(&img->regions, r)) return EK_ERR_NOMEM;
    drop_flat(img);
    return EK_OK;
}

int ek_image_add_buffer(ek_image *img, const void *data, size_t len, uint64_t addr,
                        ek_mem_space space)
{
    if (!img || (!data && len)) return EK_ERR_ARG;
    return add_region(img, data, len, addr, space);
}

void ek_image_set_callback(ek_image *img, ek_image_read_fn fn, void *ctx)
{
    if (!img) return;
    img->cb = fn;
    img->cb_ctx = ctx;
}

/* The shared mapping of a file (one per file, found again by device and inode). */
static int get_file(ek_image *img, const char *path, img_file **out)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        ek_diag_emit(&img->diag, EK_SEV_WARN, "image.missing-file", EK_ERR_IO, path, -1, -1, -1,
                     "cannot open image file (%s)", strerror(errno));
        return EK_ERR_IO;
    }
    for (size_t i = 0; i < img->files.n; i++) {
        if (img->files.v[i]->dev == st.st_dev && img->files.v[i]->ino == st.st_ino) {
            *out = img->files.v[i];
            return EK_OK;
        }
    }
    img_file *f = calloc(1, sizeof *f);
    if (!f || !(f->path = strdup(path))) {
        free(f);
        return EK_ERR_NOMEM;
    }
    /* a regular file only: a FIFO would wait for a writer, a device such as /dev/zero never
     * ends (memory would grow without bound) */
    int rc = ek_map_regular(path, &f->map);
    if (rc) {
        const int e = errno;
        ek_diag_emit(&img->diag, EK_SEV_WARN, "image.missing-file", rc, path, -1, -1, -1,
                     "cannot map image file (%s)",
                     e == EINVAL ? "not a regular file" : strerror(e));
        free(f->path);
        free(f);
        return rc;
    }
    f->dev = st.st_dev;
    f->ino = st.st_ino;
    if (ek_vec_push(&img->files, f)) {
        ek_unmap_file(&f->map);
        free(f->path);
        free(f);
        return EK_ERR_NOMEM;
    }
    *out = f;
    return EK_OK;
}

int ek_image_add_file(ek_image *img, const char *path, uint64_t file_offset, uint64_t length,
                      uint64_t load_addr, ek_mem_space space)
{
    if (!img || !path) return EK_ERR_ARG;
    img_file *f = NULL;
    int rc = get_file(img, path, &f);
    if (rc) return rc;
    uint64_t size = f->map.size;
    if (file_offset >= size) {
        /* (an offset past INT64_MAX would read as a negative location: say "unknown") */
        ek_diag_emit(&img->diag, EK_SEV_WARN, "image.short-file", EK_ERR_RANGE, path, -1,
                     file_offset <= (uint64_t)INT64_MAX ? (int64_t)file_offset : -1, -1,
                     "offset 0x%llx is at or past the end of the file (%llu bytes); nothing "
                     "mapped at 0x%llx",
                     (unsigned long long)file_offset, (unsigned long long)size,
                     (unsigned long long)load_addr);
        return EK_ERR_RANGE;
    }
    uint64_t avail = size - file_offset;
    if (length == 0)
        length = avail;
    else if (length > avail) {
        ek_diag_emit(
            &img->diag, EK_SEV_WARN, "image.short-file", 0, path, -1, (int64_t)file_offset, -1,
            "0x%llx bytes asked from offset 0x%llx but the file has 0x%llx; "
            "0x%llx..0x%llx is not mapped",
            (unsigned long long)length, (unsigned long long)file_offset, (unsigned long long)avail,
            (unsigned long long)(load_addr + avail), (unsigned long long)(load_addr + length - 1));
        length = avail;
    }
    return add_region(img, f->map.data + file_offset, length, load_addr, space);
}

int ek_image_add_elf(ek_image *img, const char *path, uint64_t bias, ek_mem_space space)
{
    if (!img || !path) return EK_ERR_ARG;
    if (elf_version(EV_CURRENT) == EV_NONE) return EK_ERR_UNSUPPORTED;
    /* (O_NONBLOCK: a FIFO without a writer is not waited for; it is then not an ELF file) */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        ek_diag_emit(&img->diag, EK_SEV_WARN, "image.missing-file", EK_ERR_IO, path, -1, -1, -1,
                     "cannot open ELF file (%s)", strerror(errno));
        return EK_ERR_IO;
    }
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    int rc = EK_OK;
    size_t nph = 0;
    if (!elf || elf_kind(elf) != ELF_K_ELF) {
        ek_diag_emit(&img->diag, EK_SEV_WARN, "image.bad-elf", EK_ERR_FORMAT, path, -1, -1, -1,
                     "not an ELF file");
        rc = EK_ERR_FORMAT;
    } else if (elf_getphdrnum(elf, &nph) != 0 || nph == 0) {
        ek_diag_emit(&img->diag, EK_SEV_WARN, "image.bad-elf", EK_ERR_UNSUPPORTED, path, -1, -1, -1,
                     "ELF file has no program headers (relocatable?): no segments mapped");
        rc = EK_ERR_UNSUPPORTED;
    }
    /* Collect the segments first: the file mapping is shared with plain file regions. */
    EK_VEC(GElf_Phdr) segs = {0};
    for (size_t i = 0; rc == EK_OK && i < nph; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)i, &ph)) continue;
        if (ph.p_type != PT_LOAD || ph.p_filesz == 0) continue;
        if (ek_vec_push(&segs, ph)) rc = EK_ERR_NOMEM;
    }
    if (elf) elf_end(elf);
    close(fd);
    int added = 0;
    for (size_t i = 0; rc == EK_OK && i < segs.n; i++) {
        int r = ek_image_add_file(img, path, segs.v[i].p_offset, segs.v[i].p_filesz,
                                  segs.v[i].p_vaddr + bias, space);
        if (r == EK_ERR_NOMEM || r == EK_ERR_IO)
            rc = r;
        else if (r == EK_OK)
            added++;
    }
    ek_vec_free(&segs);
    return rc ? rc : added;
}

/* ---- snapshots ----------------------------------------------------------------------- */

typedef struct dump_ref {
    const ek_snap_dump *d;
    uint64_t len;
} dump_ref;

static int cmp_source_name(const void *a, const void *b, void *ctx)
{
    const ek_snapshot *ss = ctx;
    const ek_snap_source *const *x = a, *const *y = b;
    return strcmp(ss->devices[(*x)->device].name, ss->devices[(*y)->device].name);
}

/* OpenCSD's memory-accessor map refuses an accessor whose first or last byte falls inside an
 * accepted one of an overlapping memory space. */
static int dump_rejected(const dump_ref *acc, size_t nacc, const ek_snap_dump *d, uint64_t len)
{
    const uint64_t first = d->address, last = d->address + len - 1;
    for (size_t i = 0; i < nacc; i++) {
        const uint64_t a0 = acc[i].d->address, a1 = a0 + acc[i].len - 1;
        const unsigned sa = acc[i].d->space ? acc[i].d->space : EK_MS_ANY;
        const unsigned sd = d->space ? d->space : EK_MS_ANY;
        if (((first >= a0 && first <= a1) || (last >= a0 && last <= a1)) && (sa & sd)) return 1;
    }
    return 0;
}

int ek_image_add_snapshot_buffer(ek_image *img, const ek_snapshot *ss, size_t buffer)
{
    if (!img || !ss || buffer >= ss->nbuffers) return EK_ERR_ARG;
    size_t ndumps = 0;
    for (size_t i = 0; i < ss->ndevices; i++)
        ndumps += ss->devices[i].ndumps;
    const ek_snap_source **list = calloc(ss->nsources + 1, sizeof *list);
    long *cores = calloc(ss->nsources + 1, sizeof *cores);
    dump_ref *acc = calloc(ndumps + 1, sizeof *acc);
    size_t n = 0, ncores = 0, nacc = 0;
    int rc = 0, added = 0;
    if (!list || !cores || !acc) {
        rc = EK_ERR_NOMEM;
        goto done;
    }
    /* the cores of the buffer's sources, in the order of the sources' names, each once (its
     * dumps again would all overlap) */
    for (size_t i = 0; i < ss->nsources; i++)
        if (ss->sources[i].buffer == (long)buffer) list[n++] = &ss->sources[i];
    qsort_r(list, n, sizeof *list, cmp_source_name, (void *)ss);
    for (size_t i = 0; i < n; i++) {
        const long core = list[i]->core;
        int seen = core < 0 || (size_t)core >= ss->ndevices;
        for (size_t k = 0; k < ncores && !seen; k++)
            seen = cores[k] == core;
        if (!seen) cores[ncores++] = core;
    }
    for (size_t k = 0; k < ncores; k++) {
        const ek_snap_device *dev = &ss->devices[cores[k]];
        for (size_t j = 0; j < dev->ndumps; j++) {
            const ek_snap_dump *d = &dev->dumps[j];
            if (!d->present) continue;
            /* the bytes the file has from the offset on: a length= beyond them, or an offset
             * past the end, the snapshot reader reported (with its ini line), not again here */
            const uint64_t avail = d->file_size > d->offset ? d->file_size - d->offset : 0;
            const uint64_t len = d->has_length && d->length < avail ? d->length : avail;
            if (len == 0) continue;
            if (dump_rejected(acc, nacc, d, len)) {
                ek_diag_emit(&img->diag, EK_SEV_NOTE, "dump.overlapping-image", 0, dev->ini_path,
                             -1, -1, -1,
                             "memory dump %s at 0x%llx overlaps an earlier one: not used",
                             d->section ? d->section : d->path, (unsigned long long)d->address);
                continue;
            }
            acc[nacc].d = d;
            acc[nacc].len = len;
            nacc++;
        }
    }
    /* the image lets later regions win: the accepted dumps go in last to first, so that where
     * they overlap the earlier one is read */
    for (size_t k = nacc; k-- > 0;) {
        const ek_snap_dump *d = acc[k].d;
        const int r = ek_image_add_file(img, d->path, d->offset, acc[k].len, d->address, d->space);
        if (r == EK_ERR_NOMEM) {
            rc = r;
            goto done;
        }
        if (r == EK_OK) added++;
    }
done:
    free(list);
    free(cores);
    free(acc);
    return rc ? rc : added;
}

/* ---- flattening ----------------------------------------------------------------------- */

typedef struct heap {
    size_t *v; /* region indices; the max index (latest added) on top */
    size_t n;
} heap;

static void heap_push(heap *h, size_t x)
{
    size_t i = h->n++;
    h->v[i] = x;
    while (i && h->v[(i - 1) / 2] < h->v[i]) {
        size_t p = (i - 1) / 2, t = h->v[p];
        h->v[p] = h->v[i];
        h->v[i] = t;
        i = p;
    }
}

static void heap_pop(heap *h)
{
    h->v[0] = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && h->v[l] > h->v[m]) m = l;
        if (r < h->n && h->v[r] > h->v[m]) m = r;
        if (m == i) break;
        size_t t = h->v[m];
        h->v[m] = h->v[i];
        h->v[i] = t;
        i = m;
    }
}

static int cmp_by_start(const void *a, const void *b, void *arg)
{
    const region *r = arg;
    uint64_t x = r[*(const size_t *)a].start, y = r[*(const size_t *)b].start;
    return x < y ? -1 : x > y;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Visible runs for query space q: a sweep over region boundaries keeping the latest-added
 * region that covers the current point on top of a max-heap (ended regions leave lazily). */
static flat *build_flat(ek_image *img, unsigned q)
{
    flat *fl = calloc(1, sizeof *fl);
    if (!fl) return NULL;
    size_t n = 0;
    size_t *idx = malloc((img->regions.n + 1) * sizeof *idx);
    uint64_t *pts = malloc((2 * img->regions.n + 1) * sizeof *pts);
    heap h = {malloc((img->regions.n + 1) * sizeof(size_t)), 0};
    EK_VEC(run) runs = {0};
    if (!idx || !pts || !h.v) goto fail;
    size_t np = 0;
    for (size_t i = 0; i < img->regions.n; i++) {
        const region *r = &img->regions.v[i];
        if (!(r->space & q)) continue;
        idx[n++] = i;
        pts[np++] = r->start;
        if (r->last != UINT64_MAX) pts[np++] = r->last + 1;
    }
    qsort_r(idx, n, sizeof *idx, cmp_by_start, img->regions.v);
    qsort(pts, np, sizeof *pts, cmp_u64);
    size_t k = 0;
    for (size_t i = 0; i < np; i++) {
        if (i && pts[i] == pts[i - 1]) continue;
        uint64_t p = pts[i];
        while (k < n && img->regions.v[idx[k]].start <= p)
            heap_push(&h, idx[k++]);
        while (h.n && img->regions.v[h.v[0]].last < p)
            heap_pop(&h);
        if (!h.n) continue;
        const region *top = &img->regions.v[h.v[0]];
        /* This run ends before the next boundary point (or where the region ends). */
        size_t j = i + 1;
        while (j < np && pts[j] == p)
            j++;
        uint64_t last = j < np ? pts[j] - 1 : UINT64_MAX;
        if (last > top->last) last = top->last;
        const uint8_t *data = top->data + (p - top->start);
        if (runs.n && runs.v[runs.n - 1].last + 1 == p &&
            runs.v[runs.n - 1].data + (p - runs.v[runs.n - 1].start) == data) {
            runs.v[runs.n - 1].last = last; /* same backing bytes: extend */
            continue;
        }
        run rr = {p, last, data};
        if (ek_vec_push(&runs, rr)) goto fail;
    }
    free(idx);
    free(pts);
    free(h.v);
    fl->v = runs.v;
    fl->n = runs.n;
    return fl;
fail:
    free(idx);
    free(pts);
    free(h.v);
    ek_vec_free(&runs);
    free(fl);
    return NULL;
}

/* The run containing addr, or NULL. */
static const run *lookup(ek_image *img, unsigned q, uint64_t addr, size_t *next_start_idx)
{
    flat *fl = img->flat[q];
    if (!fl) {
        fl = build_flat(img, q);
        if (!fl) return NULL;
        img->flat[q] = fl;
    }
    if (fl->hit < fl->n) {
        const run *h = &fl->v[fl->hit];
        if (addr >= h->start && addr <= h->last) return h;
        /* Sequential walks usually land in the next run. */
        if (fl->hit + 1 < fl->n && addr >= h[1].start && addr <= h[1].last) {
            fl->hit++;
            return h + 1;
        }
    }
    size_t lo = 0, hi = fl->n; /* first run with start > addr */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (fl->v[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (next_start_idx) *next_start_idx = lo;
    if (lo == 0 || fl->v[lo - 1].last < addr) return NULL;
    fl->hit = lo - 1;
    return &fl->v[lo - 1];
}

size_t ek_image_map(ek_image *img, ek_mem_space space, uint64_t addr, const uint8_t **ptr)
{
    *ptr = NULL;
    if (!img) return 0;
    const run *r = lookup(img, norm_space(space), addr, NULL);
    if (!r) return 0;
    *ptr = r->data + (addr - r->start);
    uint64_t n = r->last - addr;
    return n >= SIZE_MAX ? SIZE_MAX : (size_t)n + 1;
}

size_t ek_image_read(ek_image *img, ek_mem_space space, uint64_t addr, void *buf, size_t len)
{
    if (!img || !buf) return 0;
    unsigned q = norm_space(space);
    uint8_t *out = buf;
    size_t done = 0;
    while (done < len) {
        size_t next = SIZE_MAX;
        const run *r = lookup(img, q, addr, &next);
        size_t want = len - done;
        if (r) {
            uint64_t avail = r->last - addr;
            size_t n = avail >= want - 1 ? want : (size_t)avail + 1;
            memcpy(out + done, r->data + (addr - r->start), n);
            done += n;
            if (n == want || r->last == UINT64_MAX) break;
            addr += n;
            continue;
        }
        if (!img->cb) break;
        /* Ask the callback, never past the start of the next run. */
        flat *fl = img->flat[q];
        if (fl && next < fl->n) {
            uint64_t gap = fl->v[next].start - addr;
            if (gap < want) want = (size_t)gap;
        }
        size_t n = img->cb(img->cb_ctx, (ek_mem_space)q, addr, out + done, want);
        if (n > want)
            n = want; /* a callback that over-reports is not trusted past what was asked */
        done += n;
        if (n < want || n == 0 || addr + n < addr) break;
        addr += n;
    }
    return done;
}

/* ---- code given as files: --image FILE@ADDR ------------------------------------------------- */

int ek_image_spec_parse(const char *arg, ek_image_spec *out, ek_sbuf *err)
{
    memset(out, 0, sizeof *out);
    if (!arg || !*arg) {
        if (err) ek_sbuf_puts(err, "empty: give FILE@ADDR (raw bytes) or ELF[@ADDR]");
        return EK_ERR_ARG;
    }
    const char *at = strrchr(arg, '@');
    if (at == arg) {
        if (err) ek_sbuf_printf(err, "'%s': no file before '@'", arg);
        return EK_ERR_ARG;
    }
    unsigned long long v = 0;
    if (at) {
        char *end = NULL;
        errno = 0;
        v = strtoull(at + 1, &end, 0);
        if (!at[1] || errno || *end || at[1] == '-' || at[1] == '+') {
            if (err)
                ek_sbuf_printf(err, "'%s': '%s' is not an address (0x... or decimal)", arg, at + 1);
            return EK_ERR_ARG;
        }
    }
    char *p = at ? strndup(arg, (size_t)(at - arg)) : strdup(arg);
    if (!p) return EK_ERR_NOMEM;
    out->path = p;
    out->addr = v;
    out->has_addr = at != NULL;
    return 0;
}

void ek_image_spec_free(ek_image_spec *sp)
{
    if (!sp) return;
    free(sp->path);
    memset(sp, 0, sizeof *sp);
}

static int file_is_elf(const char *path, int *is_elf)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* (a FIFO: not waited for) */
    if (fd < 0) return -1;
    unsigned char m[4] = {0};
    ssize_t n = read(fd, m, sizeof m);
    close(fd);
    *is_elf = n == 4 && !memcmp(m, "\177ELF", 4);
    return 0;
}

int ek_image_add_spec(ek_image *img, const ek_image_spec *sp, ek_mem_space space,
                      ek_image_placed *out)
{
    ek_image_placed pl;
    memset(&pl, 0, sizeof pl);
    if (out) *out = pl;
    if (!img || !sp || !sp->path) return EK_ERR_ARG;
    int is_elf = 0;
    if (file_is_elf(sp->path, &is_elf)) {
        ek_diag_emit(&img->diag, EK_SEV_ERROR, "image.missing-file", EK_ERR_IO, sp->path, -1, -1,
                     -1, "cannot read the image (%s)", strerror(errno));
        return EK_ERR_IO;
    }
    if (!is_elf) {
        if (!sp->has_addr) {
            ek_diag_emit(&img->diag, EK_SEV_ERROR, "image.no-address", EK_ERR_ARG, sp->path, -1, -1,
                         -1,
                         "not an ELF file: raw bytes need the address of their first byte "
                         "(FILE@ADDR)");
            return EK_ERR_ARG;
        }
        int rc = ek_image_add_file(img, sp->path, 0, 0, sp->addr, space);
        if (rc) return rc;
        struct stat st;
        uint64_t size = stat(sp->path, &st) == 0 ? (uint64_t)st.st_size : 0;
        pl.elf = 0;
        pl.bias = sp->addr;
        pl.lo = sp->addr;
        pl.hi = sp->addr + size;
        pl.regions = 1;
        if (out) *out = pl;
        return 0;
    }
    ek_elf_info *ei = NULL;
    int rc = ek_elf_info_read(sp->path, &img->diag, &ei);
    if (rc) return rc;
    uint64_t low = UINT64_MAX;
    for (size_t i = 0; i < ei->nsegs; i++)
        if (ei->segs[i].vaddr < low) low = ei->segs[i].vaddr;
    pl.elf = 1;
    pl.bias = sp->has_addr && low != UINT64_MAX ? sp->addr - low : 0;
    pl.lo = UINT64_MAX;
    for (size_t i = 0; i < ei->nsegs && !rc; i++) {
        const ek_elf_segment *g = &ei->segs[i];
        if (!(g->flags & PF_X) || !g->filesz) continue;
        const uint64_t at = g->vaddr + pl.bias;
        int r = ek_image_add_file(img, sp->path, g->offset, g->filesz, at, space);
        if (r == EK_ERR_NOMEM || r == EK_ERR_IO) rc = r;
        if (r) continue;
        pl.regions++;
        if (at < pl.lo) pl.lo = at;
        if (at + g->filesz > pl.hi) pl.hi = at + g->filesz;
    }
    ek_elf_info_free(ei);
    if (rc) return rc;
    if (!pl.regions) {
        ek_diag_emit(&img->diag, EK_SEV_ERROR, "image.no-code", EK_ERR_UNSUPPORTED, sp->path, -1,
                     -1, -1,
                     "the ELF file has no executable PT_LOAD segment with bytes in the file "
                     "(a relocatable object, or a debug-only file?)");
        return EK_ERR_UNSUPPORTED;
    }
    if (out) *out = pl;
    return 0;
}
