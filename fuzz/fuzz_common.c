/* Helpers shared by the fuzz targets: checking diag sink, in-memory files, temp folder. */
#include "fuzz_common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "etmkit/sbuf.h"

void fuzz_fail_msg(const char *file, int line, const char *what)
{
    fprintf(stderr, "FUZZ INVARIANT: %s:%d: %s\n", file, line, what);
    abort();
}

static void fuzz_fail(const char *what, const ek_diag_event *ev)
{
    fprintf(stderr, "FUZZ INVARIANT: %s (kind=%s msg=%s)\n", what, ev->kind ? ev->kind : "(null)",
            ev->msg ? ev->msg : "(null)");
    abort();
}

static void check_fn(void *ctx, const ek_diag_event *ev)
{
    fuzz_diag *fd = ctx;
    fd->events++;
    if (!ev->kind || !ev->kind[0])
        fuzz_fail("diagnostic without a kind", ev);
    if (!ev->msg)
        fuzz_fail("diagnostic without a message", ev);
    if ((unsigned)ev->sev > EK_SEV_ERROR)
        fuzz_fail("severity out of range", ev);
    if (ev->offset < -1 || ev->record < -1 || ev->trace_id < -1)
        fuzz_fail("negative location other than -1 (unknown)", ev);
    ek_sbuf sb = {0};
    ek_diag_format(&sb, ev);
    if (sb.p && memchr(sb.p, '\n', sb.len))
        fuzz_fail("diagnostic text is more than one line", ev);
    ek_sbuf_free(&sb);
}

void fuzz_diag_begin(fuzz_diag *fd)
{
    memset(fd, 0, sizeof *fd);
    fd->coll = ek_diag_collector_new(4);
    ek_diag check = {check_fn, fd};
    if (fd->coll) {
        ek_diag_collector_forward(fd->coll, &check);
        fd->sink = ek_diag_collector_sink(fd->coll);
    } else {
        fd->sink = check;
    }
}

void fuzz_diag_end(fuzz_diag *fd)
{
    if (fd->coll) {
        ek_sbuf sb = {0};
        ek_diag_collector_summary(fd->coll, &sb, 0);
        ek_diag_collector_summary(fd->coll, &sb, 1);
        ek_sbuf_free(&sb);
        ek_diag_collector_free(fd->coll);
    }
    fd->coll = NULL;
}

int fuzz_memfile(const char *name, const uint8_t *data, size_t size, char *path, size_t pathsz)
{
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, data + done, size - done);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)w;
    }
    snprintf(path, pathsz, "/proc/self/fd/%d", fd);
    return fd;
}

void fuzz_memfile_close(int fd)
{
    if (fd >= 0)
        close(fd);
}

static char tmpdir_path[256];

static void tmpdir_remove(void);

const char *fuzz_tmpdir(void)
{
    if (!tmpdir_path[0]) {
        const char *base = getenv("TMPDIR");
        snprintf(tmpdir_path, sizeof tmpdir_path, "%s/etmkit-fuzz-XXXXXX",
                 base && base[0] ? base : "/tmp");
        if (!mkdtemp(tmpdir_path)) {
            perror("mkdtemp");
            abort();
        }
        atexit(tmpdir_remove);
    }
    return tmpdir_path;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

/* at exit: the folder and all in it (the script and jitdump fuzzers make folders there: a
 * symfs, a gen recording) */
static void tmpdir_remove(void)
{
    if (tmpdir_path[0]) nftw(tmpdir_path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

void fuzz_tmpdir_clear(void)
{
    const char *dir = fuzz_tmpdir();
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char p[512];
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
}

int fuzz_write_file(const char *name, const uint8_t *data, size_t size)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", fuzz_tmpdir(), name);
    FILE *f = fopen(p, "wb");
    if (!f)
        return -1;
    int rc = (size && fwrite(data, 1, size, f) != size) ? -1 : 0;
    if (fclose(f) != 0)
        rc = -1;
    return rc;
}

uint8_t fuzz_u8(fuzz_in *in)
{
    if (!in->n)
        return 0;
    uint8_t v = in->p[0];
    in->p++;
    in->n--;
    return v;
}

uint32_t fuzz_u32(fuzz_in *in)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)fuzz_u8(in) << (8 * i);
    return v;
}

uint64_t fuzz_u64(fuzz_in *in)
{
    uint64_t lo = fuzz_u32(in);
    return lo | (uint64_t)fuzz_u32(in) << 32;
}

int fuzz_out_write(void *ctx, const char *text, size_t len)
{
    fuzz_out *o = ctx;
    o->bytes += len;
    if (len)
        o->last = text[len - 1];
    return 0;
}
