/* perf's jitdump files (see jitdump.h). */
#include "input/jitdump.h"

#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"
#include "etmkit/etmkit.h"

#define JIT_MAGIC    0x4A695444u
#define JIT_MAGIC_SW 0x4454694Au
#define JIT_HDR_SIZE 40u
#define JIT_PREFIX   16u

enum { JIT_LOAD = 0, JIT_MOVE = 1, JIT_DEBUG = 2, JIT_CLOSE = 3 };

static uint32_t rd32(const ek_jitdump *j, const uint8_t *p)
{
    uint32_t v = ek_le32(p);
    return j->swapped ? __builtin_bswap32(v) : v;
}

static uint64_t rd64(const ek_jitdump *j, const uint8_t *p)
{
    uint64_t v = ek_le64(p);
    return j->swapped ? __builtin_bswap64(v) : v;
}

int ek_jitdump_name_matches(const char *filename, int32_t pid)
{
    if (!filename) return 0;
    const char *b = strrchr(filename, '/');
    b = b ? b + 1 : filename;
    if (strncmp(b, "jit-", 4)) return 0;
    char *end = NULL;
    long v = strtol(b + 4, &end, 10);
    return end && end != b + 4 && !strcmp(end, ".dump") && v == pid;
}

void ek_jitdump_free(ek_jitdump *j)
{
    if (!j) return;
    free(j->codes);
    ek_unmap_file(&j->file);
    free(j);
}

static int push(ek_jitdump *j, size_t *cap, const ek_jit_code *c)
{
    if (j->ncodes == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        ek_jit_code *v = realloc(j->codes, nc * sizeof *v);
        if (!v) return EK_ERR_NOMEM;
        j->codes = v;
        *cap = nc;
    }
    j->codes[j->ncodes++] = *c;
    return 0;
}

int ek_jitdump_read(const char *path, const ek_diag *diag, ek_jitdump **out)
{
    *out = NULL;
    ek_jitdump *j = calloc(1, sizeof *j);
    if (!j) return EK_ERR_NOMEM;
    int rc = ek_map_file(path, &j->file);
    if (rc) {
        free(j);
        return rc;
    }
    const uint8_t *d = j->file.data;
    size_t n = j->file.size;
    if (n < JIT_HDR_SIZE || (ek_le32(d) != JIT_MAGIC && ek_le32(d) != JIT_MAGIC_SW)) {
        ek_diag_emit(diag, EK_SEV_WARN, "jit.bad-file", EK_ERR_FORMAT, path, -1, 0, -1,
                     "not a jitdump (no \"JiTD\" header)");
        ek_jitdump_free(j);
        return EK_ERR_FORMAT;
    }
    j->swapped = ek_le32(d) == JIT_MAGIC_SW;
    j->version = rd32(j, d + 4);
    uint32_t hsize = rd32(j, d + 8);
    j->elf_mach = rd32(j, d + 12);
    j->pid = rd32(j, d + 20);
    j->timestamp = rd64(j, d + 24);
    j->flags = rd64(j, d + 32);
    if (hsize < JIT_HDR_SIZE || hsize > n) {
        ek_diag_emit(diag, EK_SEV_WARN, "jit.bad-header", EK_ERR_FORMAT, path, -1, 8, -1,
                     "jitdump header size %u is outside the file (%zu bytes)", hsize, n);
        ek_jitdump_free(j);
        return EK_ERR_FORMAT;
    }
    size_t cap = 0;
    uint64_t off = hsize;
    while (off < n) {
        if (n - off < JIT_PREFIX) {
            j->truncated = 1;
            ek_diag_emit(diag, EK_SEV_WARN, "jit.truncated", EK_ERR_TRUNCATED, path, -1,
                         (int64_t)off, -1, "jitdump ends inside a record header");
            break;
        }
        const uint8_t *r = d + off;
        uint32_t id = rd32(j, r), size = rd32(j, r + 4);
        uint64_t t = rd64(j, r + 8);
        if (size < JIT_PREFIX || size > n - off) {
            j->truncated = 1;
            ek_diag_emit(
                diag, EK_SEV_WARN, "jit.truncated", EK_ERR_TRUNCATED, path, -1, (int64_t)off, -1,
                "jitdump record of type %u and size %u does not fit in the file", id, size);
            break;
        }
        ek_jit_code c;
        memset(&c, 0, sizeof c);
        c.time = t;
        c.offset = off;
        const uint8_t *b = r + JIT_PREFIX;
        size_t blen = size - JIT_PREFIX;
        int bad = 0;
        switch (id) {
        case JIT_LOAD: {
            if (blen < 40) {
                bad = 1;
                break;
            }
            c.pid = rd32(j, b);
            c.tid = rd32(j, b + 4);
            c.addr = rd64(j, b + 16);
            c.size = rd64(j, b + 24);
            c.index = rd64(j, b + 32);
            const uint8_t *nm = b + 40;
            const uint8_t *nul = memchr(nm, 0, blen - 40);
            /* the code is the record's last code_size bytes (perf: total_size - code_size);
             * the name comes before it */
            if (!nul || c.size > blen - 40 - (size_t)(nul - nm) - 1) {
                bad = 1;
                break;
            }
            c.name = (const char *)nm;
            c.code = r + size - c.size;
            rc = push(j, &cap, &c);
            break;
        }
        case JIT_MOVE:
            if (blen < 48) {
                bad = 1;
                break;
            }
            c.move = 1;
            c.pid = rd32(j, b);
            c.tid = rd32(j, b + 4);
            c.old_addr = rd64(j, b + 16);
            c.addr = rd64(j, b + 24);
            c.size = rd64(j, b + 32);
            c.index = rd64(j, b + 40);
            for (size_t k = j->ncodes; k-- > 0;) /* the code of the load it moved */
                if (!j->codes[k].move && j->codes[k].index == c.index) {
                    c.name = j->codes[k].name;
                    if (j->codes[k].size == c.size) c.code = j->codes[k].code;
                    break;
                }
            rc = push(j, &cap, &c);
            break;
        case JIT_DEBUG: j->ndebug++; break;
        case JIT_CLOSE: j->nclose++; break;
        default: j->nother++; break;
        }
        if (rc) {
            ek_jitdump_free(j);
            return rc;
        }
        if (bad)
            ek_diag_emit(diag, EK_SEV_WARN, "jit.bad-record", EK_ERR_FORMAT, path, -1, (int64_t)off,
                         -1, "jitdump record of type %u is too short for its contents (%u bytes)",
                         id, size);
        off += size;
    }
    *out = j;
    return 0;
}
