/* Fuzz target: the snapshot reader (snapshot.ini, device files, trace.ini, buffers, dumps)
 * and the memory image built from each core's dumps.
 *
 * The input is a small archive of the folder's files:
 *     "@@ NAME\n" CONTENT "\n@@ NAME\n" CONTENT ...
 * An input that does not start with "@@ " is snapshot.ini alone. NAME keeps [A-Za-z0-9._-]
 * (other bytes become '_', at most 48 bytes, no leading '.'); at most 32 files. The files
 * are written to a private temporary folder that the snapshot is then read from.
 * Inputs whose INI files contain '/' or '\' are skipped: a fuzzer must not make the reader
 * open /dev or /proc files outside the folder (path handling is covered by unit tests).
 *
 * fuzz_pack_path() turns a snapshot folder into such an archive (files cut to 64 KiB), so
 * the real snapshots under ../shared replay here and seed the fuzzer.
 *
 * A snapshot that opens is then decoded as `etmkit dump` lists it (every protocol: ETMv4,
 * ETE, PTM, ETMv3, STM, ITM; the listing format, decode or packets, multi-session and the
 * ITM sync mode chosen by the input's size) and as a session (`etmkit script --itrace=b` on
 * the folder). Checks, besides the reader's: the listing and the script output are whole
 * lines, the session ends.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "etmkit/image.h"
#include "etmkit/account_out.h"
#include "etmkit/listing.h"
#include "etmkit/script.h"
#include "etmkit/session.h"
#include "etmkit/snapshot.h"
#include "fuzz_common.h"

#define MAX_FILES 32
#define NAME_MAX_LEN 48
#define PACK_FILE_MAX 65536

/* the decode stages: one listing and one session per input (choices from the size) */
static void decode(const ek_snapshot *ss, size_t size, const ek_diag *diag)
{
    static const ek_listing_format fmts[] = {EK_LISTING_OCSD, EK_LISTING_TEXT, EK_LISTING_JSON};
    ek_snapshot_list_opts lo;
    ek_snapshot_list_opts_init(&lo);
    lo.format = fmts[size % 3];
    lo.path = fuzz_tmpdir();
    switch ((size / 3) % 4) {
    case 0: lo.decode = 1; break;
    case 1: lo.decode_only = 1; break;
    case 2: lo.pkt_mon = 1; break;
    default: break; /* packets */
    }
    lo.multi_session = (int)((size / 12) & 1);
    lo.stats = (int)((size / 24) & 1);
    lo.itm_sync = (int)((size / 48) % 3);
    fuzz_out os = FUZZ_OUT_INIT;
    lo.write = fuzz_out_write;
    lo.write_ctx = &os;
    lo.diag = diag;
    int rc = ek_snapshot_list(ss, &lo);
    FUZZ_CHECK(rc != EK_ERR_IO, "listing failed to write to a sink that never fails");
    FUZZ_CHECK(os.bytes == 0 || os.last == '\n', "listing ends inside a line");

    ek_session_opts o;
    ek_session_opts_init(&o);
    o.snapshot = ss;
    o.threads = 1;
    FUZZ_CHECK(ek_itrace_parse("b", &o.itrace, NULL) == 0, "itrace string rejected");
    ek_script_fields f;
    ek_script_fields_default(&f);
    ek_session *s = NULL;
    if (ek_session_open(fuzz_tmpdir(), &o, diag, &s) == 0 && s) {
        fuzz_out so = FUZZ_OUT_INIT;
        int src = ek_session_script(s, &f, fuzz_out_write, &so);
        FUZZ_CHECK(src <= 0, "positive status from ek_session_script");
        FUZZ_CHECK(so.bytes == 0 || so.last == '\n', "script output ends inside a line");
        ek_sbuf sb = {0};
        ek_session_report(s, &sb, EK_REPORT_VERBOSE);
        ek_sbuf_free(&sb);
        ek_session_free(s);
        if (getenv("FUZZ_VERBOSE")) /* what the stages made of a seed */
            fprintf(stderr, "listing: status %d, %llu bytes; script: %llu bytes\n", rc,
                    (unsigned long long)os.bytes, (unsigned long long)so.bytes);
    }
}

typedef struct member {
    char name[NAME_MAX_LEN + 1];
    const uint8_t *data;
    size_t len;
} member;

static const uint8_t *find_sep(const uint8_t *p, const uint8_t *end)
{
    /* next "\n@@ " at or after p */
    while (p + 4 <= end) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl || nl + 4 > end)
            return NULL;
        if (nl[1] == '@' && nl[2] == '@' && nl[3] == ' ')
            return nl;
        p = nl + 1;
    }
    return NULL;
}

static size_t split(const uint8_t *data, size_t size, member *m)
{
    const uint8_t *end = data + size;
    if (size < 3 || memcmp(data, "@@ ", 3) != 0) {
        strcpy(m[0].name, "snapshot.ini");
        m[0].data = data;
        m[0].len = size;
        return 1;
    }
    size_t n = 0;
    const uint8_t *p = data;
    while (p && p < end && n < MAX_FILES) {
        p += 3; /* "@@ " */
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        const uint8_t *name_end = nl ? nl : end;
        size_t k = 0;
        for (const uint8_t *q = p; q < name_end && k < NAME_MAX_LEN; q++) {
            char c = (char)*q;
            int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '.' || c == '_' || c == '-';
            m[n].name[k++] = ok ? c : '_';
        }
        m[n].name[k] = 0;
        if (k == 0 || m[n].name[0] == '.')
            m[n].name[0] = '_', m[n].name[k ? k : 1] = 0;
        const uint8_t *body = nl ? nl + 1 : end;
        /* the next "\n@@ ", searching from the name's own newline (empty content) */
        const uint8_t *sep = nl ? find_sep(nl, end) : NULL;
        m[n].data = body;
        m[n].len = sep && sep >= body ? (size_t)(sep - body) : sep ? 0 : (size_t)(end - body);
        n++;
        p = sep ? sep + 1 : NULL;
    }
    return n;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcasecmp(s + a - b, suffix) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static member m[MAX_FILES];
    size_t n = split(data, size, m);
    for (size_t i = 0; i < n; i++)
        if (ends_with(m[i].name, ".ini") &&
            (memchr(m[i].data, '/', m[i].len) || memchr(m[i].data, '\\', m[i].len)))
            return 0;
    fuzz_tmpdir_clear();
    for (size_t i = 0; i < n; i++)
        if (fuzz_write_file(m[i].name, m[i].data, m[i].len) != 0)
            return 0;

    fuzz_diag fd;
    fuzz_diag_begin(&fd);
    ek_snapshot *ss = NULL;
    if (ek_snapshot_open(fuzz_tmpdir(), &fd.sink, &ss) == 0 && ss) {
        for (size_t i = 0; i < ss->nsources; i++) {
            const ek_snap_source *src = &ss->sources[i];
            FUZZ_CHECK(!(src->device >= ss->ndevices),
                       "not (src->device >= ss->ndevices)");
            FUZZ_CHECK(!(src->buffer >= (long)ss->nbuffers || src->core >= (long)ss->ndevices),
                       "not (src->buffer >= (long)ss->nbuffers || src->core >= (long)ss->ndevices)");
        }
        for (size_t d = 0; d < ss->ndevices; d++) {
            const ek_snap_device *dev = &ss->devices[d];
            uint64_t v;
            ek_snap_device_reg(dev, "TRCIDR0", &v);
            if (dev->name)
                (void)ek_snapshot_find_device(ss, dev->name);
        }
        for (size_t b = 0; b < ss->nbuffers; b++) {
            /* the code of each buffer, as dump --decode maps it */
            ek_image *img = NULL;
            if (ek_image_new(&fd.sink, &img) != 0)
                continue;
            if (ek_image_add_snapshot_buffer(img, ss, b) > 0) {
                for (size_t d = 0; d < ss->ndevices; d++)
                    for (size_t k = 0; k < ss->devices[d].ndumps; k++) {
                        uint8_t buf[32];
                        ek_image_read(img, ss->devices[d].dumps[k].space,
                                      ss->devices[d].dumps[k].address, buf, sizeof buf);
                    }
            }
            ek_image_free(img);
        }
        for (size_t b = 0; b < ss->nbuffers; b++)
            if (ss->buffers[b].name)
                (void)ek_snapshot_find_buffer(ss, ss->buffers[b].name);
        decode(ss, size, &fd.sink);
        ek_snapshot_free(ss);
    }
    fuzz_diag_end(&fd);
    return 0;
}

/* ---- packing a snapshot folder into one input --------------------------------------- */

typedef struct growbuf {
    uint8_t *p;
    size_t len, cap;
} growbuf;

static void gb_put(growbuf *g, const void *d, size_t n)
{
    if (g->len + n > g->cap) {
        size_t cap = g->cap ? g->cap : 4096;
        while (cap < g->len + n)
            cap *= 2;
        uint8_t *np = realloc(g->p, cap);
        FUZZ_CHECK(!(!np),
                   "not (!np)");
        g->p = np;
        g->cap = cap;
    }
    memcpy(g->p + g->len, d, n);
    g->len += n;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int fuzz_pack_path(const char *path, uint8_t **out, size_t *len)
{
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/snapshot.ini", path);
    if (stat(p, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    DIR *d = opendir(path);
    if (!d)
        return 0;
    char *names[MAX_FILES];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < MAX_FILES) {
        if (e->d_name[0] == '.')
            continue;
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_name);
    growbuf g = {0};
    uint8_t *chunk = malloc(PACK_FILE_MAX);
    for (size_t i = 0; i < n; i++) {
        snprintf(p, sizeof p, "%s/%s", path, names[i]);
        FILE *f = fopen(p, "rb");
        if (f && stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
            size_t r = fread(chunk, 1, PACK_FILE_MAX, f);
            if (g.len)
                gb_put(&g, "\n", 1);
            gb_put(&g, "@@ ", 3);
            gb_put(&g, names[i], strlen(names[i]));
            gb_put(&g, "\n", 1);
            gb_put(&g, chunk, r);
        }
        if (f)
            fclose(f);
        free(names[i]);
    }
    free(chunk);
    *out = g.p;
    *len = g.len;
    return 1;
}
