#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

const char *tu_shared_dir(void)
{
    const char *d = getenv("ETMKIT_SHARED");
    struct stat st;
    if (!d || stat(d, &st) != 0 || !S_ISDIR(st.st_mode))
        return NULL;
    return d;
}

char *tu_shared_path(const char *rel)
{
    const char *d = tu_shared_dir();
    if (!d)
        return NULL;
    size_t n = strlen(d) + strlen(rel) + 16;
    char *p = malloc(n);
    snprintf(p, n, "%s/testdata/%s", d, rel);
    struct stat st;
    if (stat(p, &st) != 0) {
        free(p);
        return NULL;
    }
    return p;
}

void tu_skip_all(const char *why)
{
    printf("SKIP: %s\n", why);
    fflush(stdout);
    exit(77);
}

char *tu_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char tmpl[512];
    snprintf(tmpl, sizeof tmpl, "%s/etmkit-test-XXXXXX", base && *base ? base : "/tmp");
    char *d = mkdtemp(tmpl);
    return d ? strdup(d) : NULL;
}

void tu_rmtree(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char sub[4096];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            struct stat st;
            if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
                tu_rmtree(sub);
            else
                unlink(sub);
        }
        closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

char *tu_write_file(const char *dir, const char *name, const void *data, size_t len)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    if (!f) {
        free(p);
        return NULL;
    }
    if (len)
        fwrite(data, 1, len, f);
    fclose(f);
    return p;
}

size_t tu_hex(const char *text, uint8_t *buf, size_t cap)
{
    size_t n = 0;
    while (*text && n < cap) {
        while (*text == ' ' || *text == ',' || *text == '\n' || *text == '\t')
            text++;
        if (!*text)
            break;
        if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
            text += 2;
        char *end;
        unsigned long v = strtoul(text, &end, 16);
        if (end == text)
            break;
        buf[n++] = (uint8_t)v;
        text = end;
    }
    return n;
}
