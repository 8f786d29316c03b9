#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/mapfile.h"
#include "etmkit/etmkit.h"

static int read_all(int fd, ek_mapped *m)
{
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    if (!buf)
        return EK_ERR_NOMEM;
    for (;;) {
        if (len == cap) {
            uint8_t *nb = cap < SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
            if (!nb) {
                free(buf);
                return EK_ERR_NOMEM;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            free(buf);
            return EK_ERR_IO;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    m->data = buf;
    m->size = len;
    m->mapped = 0;
    return EK_OK;
}

/* regular: a regular file only (ek_map_regular); otherwise anything open(2) opens, read to
 * its end when it cannot be mapped */
static int map_path(const char *path, ek_mapped *m, int regular)
{
    memset(m, 0, sizeof *m);
    /* (O_NONBLOCK: opening a FIFO without a writer would wait for one, for ever) */
    int fd = open(path, O_RDONLY | O_CLOEXEC | (regular ? O_NONBLOCK : 0));
    if (fd < 0) return EK_ERR_IO;
    struct stat st;
    int rc = EK_OK;
    if (fstat(fd, &st) != 0) {
        rc = EK_ERR_IO;
    } else if (S_ISDIR(st.st_mode)) {
        errno = EISDIR;
        rc = EK_ERR_IO;
    } else if (!S_ISREG(st.st_mode)) {
        if (regular) {
            /* a FIFO would wait for a writer, a device such as /dev/zero never ends */
            errno = EINVAL;
            rc = EK_ERR_IO;
        } else {
            rc = read_all(fd, m);
        }
    } else if (st.st_size > 0) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            rc = read_all(fd, m);
        } else {
            m->data = p;
            m->size = (size_t)st.st_size;
            m->mapped = 1;
        }
    }
    int saved = errno;
    close(fd);
    errno = saved;
    return rc;
}

int ek_map_file(const char *path, ek_mapped *m)
{
    return map_path(path, m, 0);
}

int ek_map_regular(const char *path, ek_mapped *m)
{
    return map_path(path, m, 1);
}

void ek_unmap_file(ek_mapped *m)
{
    if (m->data) {
        if (m->mapped)
            munmap((void *)m->data, m->size);
        else
            free((void *)m->data);
    }
    memset(m, 0, sizeof *m);
}

const char *ek_errno_text(int err, char *buf, size_t n)
{
    /* GNU strerror_r (_GNU_SOURCE): returns the text, in buf or a static string */
    return strerror_r(err, buf, n);
}

char *ek_path_join(const char *dir, const char *name)
{
    if (!dir || !*dir || name[0] == '/')
        return strdup(name);
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (!p)
        return NULL;
    memcpy(p, dir, a);
    size_t n = a;
    if (a && dir[a - 1] != '/')
        p[n++] = '/';
    memcpy(p + n, name, b + 1);
    return p;
}
