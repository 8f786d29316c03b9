/* Standalone driver for a fuzz target: no libFuzzer needed.
 *
 *   fuzz_replay_<target> PATH...          feed every file (folders: every file inside,
 *                                         recursively, sorted) to LLVMFuzzerTestOneInput
 *   fuzz_replay_<target> --pack OUT PATH... write each seed as a single input file into OUT
 *                                         (what libFuzzer then takes as its seed corpus)
 *
 * A target with fuzz_pack_path() turns a path (a snapshot folder) into one input first.
 * Options: --glob PATTERN / --exclude PATTERN select files in folders by base name (fnmatch;
 * repeatable); --skip-missing: absent paths are skipped, exit 77 when none exists;
 * --max-size N  cut inputs (files and packed seeds) to N bytes (default: 4 MiB), so
 * that a replay of large real files stays quick. Prints "replayed N inputs" at the end.
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"

static size_t max_size = 4u << 20;
static const char *pack_out;
static unsigned long ninputs, npacked;
static const char *globs[16], *excludes[16];
static int nglobs, nexcludes, skip_missing, nfound;

/* --glob / --exclude select regular files by base name. */
static int selected(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (int i = 0; i < nexcludes; i++)
        if (fnmatch(excludes[i], base, 0) == 0)
            return 0;
    if (!nglobs)
        return 1;
    for (int i = 0; i < nglobs; i++)
        if (fnmatch(globs[i], base, 0) == 0)
            return 1;
    return 0;
}

static int run_one(const char *label, const uint8_t *data, size_t len)
{
    if (len > max_size)
        len = max_size;
    if (pack_out) {
        char p[4096];
        const char *base = strrchr(label, '/');
        base = base ? base + 1 : label;
        snprintf(p, sizeof p, "%s/seed-%04lu-%s", pack_out, npacked++, base);
        FILE *f = fopen(p, "wb");
        if (!f || (len && fwrite(data, 1, len, f) != len)) {
            fprintf(stderr, "%s: cannot write\n", p);
            if (f)
                fclose(f);
            return -1;
        }
        fclose(f);
        return 0;
    }
    /* Copy into an exactly-sized buffer so ASan sees reads past the end. */
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy)
        return -1;
    if (len)
        memcpy(copy, data, len);
    LLVMFuzzerTestOneInput(copy, len);
    free(copy);
    ninputs++;
    return 0;
}

static int read_file(const char *path, uint8_t **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t cap = 0, n = 0;
    uint8_t *buf = NULL;
    for (;;) {
        if (n == cap) {
            if (cap > max_size)
                break;
            cap = cap ? cap * 2 : 65536;
            uint8_t *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return -1;
            }
            buf = nb;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        if (r == 0)
            break;
        n += r;
    }
    fclose(f);
    *out = buf;
    *len = n;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int walk(const char *path, int depth)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return -1;
    }
    if (fuzz_pack_path && (S_ISDIR(st.st_mode) || (S_ISREG(st.st_mode) && selected(path)))) {
        uint8_t *data = NULL;
        size_t len = 0;
        if (fuzz_pack_path(path, &data, &len)) {
            int rc = run_one(path, data, len);
            free(data);
            return rc;
        }
    }
    if (S_ISDIR(st.st_mode)) {
        if (depth > 8)
            return 0;
        DIR *d = opendir(path);
        if (!d) {
            fprintf(stderr, "%s: %s\n", path, strerror(errno));
            return -1;
        }
        char **names = NULL;
        size_t n = 0, cap = 0;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            if (n == cap) {
                cap = cap ? cap * 2 : 64;
                names = realloc(names, cap * sizeof *names);
                if (!names)
                    abort();
            }
            size_t l = strlen(path) + strlen(e->d_name) + 2;
            names[n] = malloc(l);
            if (!names[n])
                abort();
            snprintf(names[n], l, "%s/%s", path, e->d_name);
            n++;
        }
        closedir(d);
        if (n)
            qsort(names, n, sizeof *names, cmp_str);
        int rc = 0;
        for (size_t i = 0; i < n; i++) {
            if (walk(names[i], depth + 1) != 0)
                rc = -1;
            free(names[i]);
        }
        free(names);
        return rc;
    }
    if (!S_ISREG(st.st_mode) || !selected(path))
        return 0;
    uint8_t *data = NULL;
    size_t len = 0;
    if (read_file(path, &data, &len) != 0) {
        fprintf(stderr, "%s: cannot read\n", path);
        return -1;
    }
    int rc = run_one(path, data, len);
    free(data);
    return rc;
}

int main(int argc, char **argv)
{
    int rc = 0, npaths = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--pack") == 0 && i + 1 < argc) {
            pack_out = argv[++i];
            continue;
        }
        if (strcmp(argv[i], "--max-size") == 0 && i + 1 < argc) {
            max_size = strtoull(argv[++i], NULL, 0);
            continue;
        }
        if (strcmp(argv[i], "--glob") == 0 && i + 1 < argc && nglobs < 16) {
            globs[nglobs++] = argv[++i];
            continue;
        }
        if (strcmp(argv[i], "--exclude") == 0 && i + 1 < argc && nexcludes < 16) {
            excludes[nexcludes++] = argv[++i];
            continue;
        }
        if (strcmp(argv[i], "--skip-missing") == 0) {
            skip_missing = 1;
            continue;
        }
        npaths++;
        struct stat st;
        if (skip_missing && stat(argv[i], &st) != 0) {
            printf("%s: absent, skipped\n", argv[i]);
            continue;
        }
        nfound++;
        if (walk(argv[i], 0) != 0)
            rc = 1;
    }
    if (skip_missing && npaths && !nfound) {
        printf("SKIP: none of the seed paths exist (no ../shared test data?)\n");
        return 77;
    }
    if (npaths == 0) {
        fprintf(stderr, "usage: %s [--max-size N] [--pack OUTDIR] PATH...\n", argv[0]);
        return 2;
    }
    if (pack_out)
        printf("packed %lu seeds\n", npacked);
    else
        printf("replayed %lu inputs\n", ninputs);
    return rc;
}
