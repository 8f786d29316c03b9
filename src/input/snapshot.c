/* Snapshot reader: snapshot.ini + device files + trace.ini -> typed ek_snapshot.
 * Behaviour follows the reference snapshot parser where it is defined (OpenCSD's
 * snapshot_parser_lib and ss_to_dcdtree) and is more forgiving where that one gives up:
 * a bad line, a missing file or an unknown name costs only what depends on it. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/mapfile.h"
#include "core/vec.h"
#include "etmkit/etmkit.h"
#include "etmkit/snapshot.h"
#include "etmkit/sbuf.h"
#include "etmkit/ini.h"

typedef EK_VEC(ek_snap_dump) dump_vec;

/* ---- a name index ---------------------------------------------------------------------
 * Names -> the index of the first entry of that name, ASCII case ignored as names are compared
 * (strcasecmp), by open addressing: the checks for a name seen before (repeated registers,
 * buffer sections, buffer and device names) scanned every name kept so far, so that a device
 * file with 150 000 registers or a trace.ini with 60 000 buffers took minutes. */
typedef struct name_slot {
    const char *name; /* NULL: free */
    size_t idx;
} name_slot;

typedef struct name_index {
    name_slot *slot;
    size_t cap, n; /* cap: 0 or a power of two, at least twice n */
} name_index;

static size_t name_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a of the lower-cased name */
    for (; *s; s++)
        h = (h ^ (unsigned char)tolower((unsigned char)*s)) * 0x100000001b3ull;
    return (size_t)(h ^ (h >> 32));
}

/* The index of 'name', or -1. */
static long ni_get(const name_index *x, const char *name)
{
    if (!x->cap) return -1;
    for (size_t i = name_hash(name) & (x->cap - 1);; i = (i + 1) & (x->cap - 1)) {
        if (!x->slot[i].name) return -1;
        if (strcasecmp(x->slot[i].name, name) == 0) return (long)x->slot[i].idx;
    }
}

/* name -> idx, unless the name is there: then 1 with *first (if not NULL) its index. Returns
 * 0 when added, or EK_ERR_NOMEM. The index keeps the pointer: name must outlive it. */
static int ni_add(name_index *x, const char *name, size_t idx, size_t *first)
{
    if (x->n >= x->cap / 2) {
        size_t cap = x->cap ? x->cap * 2 : 64;
        name_slot *ns = cap <= SIZE_MAX / sizeof *ns ? calloc(cap, sizeof *ns) : NULL;
        if (!ns) return EK_ERR_NOMEM;
        for (size_t k = 0; k < x->cap; k++) {
            if (!x->slot[k].name) continue;
            size_t i = name_hash(x->slot[k].name) & (cap - 1);
            while (ns[i].name)
                i = (i + 1) & (cap - 1);
            ns[i] = x->slot[k];
        }
        free(x->slot);
        x->slot = ns;
        x->cap = cap;
    }
    size_t i = name_hash(name) & (x->cap - 1);
    for (; x->slot[i].name; i = (i + 1) & (x->cap - 1)) {
        if (strcasecmp(x->slot[i].name, name) == 0) {
            if (first) *first = x->slot[i].idx;
            return 1;
        }
    }
    x->slot[i].name = name;
    x->slot[i].idx = idx;
    x->n++;
    return 0;
}

static void ni_free(name_index *x)
{
    free(x->slot);
    memset(x, 0, sizeof *x);
}

/* What the reader keeps of a device file for the checks it makes once trace.ini is read. */
typedef struct dev_extra {
    size_t bad_first, nbad;     /* its [regs] keys whose value is no number: names in ctx.bad */
    int64_t id_line, id_offset; /* where its trace ID register is given, or -1 */
    const ek_ini_kv *listed;    /* its snapshot.ini [device_list] line (while it is read) */
} dev_extra;

typedef struct ctx {
    ek_snapshot *ss;
    const ek_diag *diag;
    EK_VEC(ek_snap_device) devs; /* handed to ss->devices at the end */
    EK_VEC(dev_extra) extra;     /* per device of devs (none for a bare trace file) */
    EK_VEC(char *) bad;          /* register names (upper-cased) of the devices' bad values */
    EK_VEC(ek_snap_buffer) bufs;
    EK_VEC(size_t) buf_secidx; /* section index in trace.ini, for buffer_order */
    name_index devnames;       /* device name -> its first index in devs */
    int oom;
    int bare; /* ek_snapshot_from_trace: no ini files to name */
} ctx;

#define DIAG(c, sev, kind, file, line, off, ...)                                                   \
    ek_diag_emit((c)->diag, (sev), (kind), 0, (file), (int64_t)(line), (int64_t)(off), -1,         \
                 __VA_ARGS__)

static char *xstrdup(ctx *c, const char *s)
{
    if (!s) return NULL;
    char *p = strdup(s);
    if (!p) c->oom = 1;
    return p;
}

/* Copy of a value without surrounding quotes (the reference parser strips " and '). */
static char *unquote(ctx *c, const char *v)
{
    size_t n = strlen(v);
    while (n && (v[0] == '"' || v[0] == '\'')) {
        v++;
        n--;
    }
    while (n && (v[n - 1] == '"' || v[n - 1] == '\''))
        n--;
    char *p = malloc(n + 1);
    if (!p) {
        c->oom = 1;
        return NULL;
    }
    memcpy(p, v, n);
    p[n] = 0;
    return p;
}

/* 1 when path is a readable regular file; sets *size. Otherwise 0 with *err an errno. */
static int probe_file(const char *path, uint64_t *size, int *err)
{
    *size = 0;
    *err = 0;
    /* (O_NONBLOCK: opening a FIFO without a writer waited for one, for ever) */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        *err = errno;
        return 0;
    }
    struct stat st;
    int ok = 0;
    if (fstat(fd, &st) != 0)
        *err = errno;
    else if (S_ISDIR(st.st_mode))
        *err = EISDIR;
    else if (!S_ISREG(st.st_mode))
        *err = EINVAL;
    else {
        *size = (uint64_t)st.st_size;
        ok = 1;
    }
    close(fd);
    return ok;
}

/* Why a file the snapshot names cannot be read: probe_file's and ek_ini_load's EINVAL is
 * their refusal of what is not a regular file (open itself gives EINVAL for no path here). */
static const char *file_error(int err)
{
    return err == EINVAL ? "not a regular file" : strerror(err);
}

/* ---- names -> enums ------------------------------------------------------------------- */

typedef struct core_entry {
    const char *name;
    ek_arch arch;
    ek_arch_profile profile;
} core_entry;

/* OpenCSD's core-name table (trc_core_arch_map.cpp), with its ARCH_V7 / ARCH_V8 / ARCH_V8r3
 * translated to the profile-specific etmkit values. Additions (not in OpenCSD, which would
 * reject the name): Cortex-M52 and Cortex-M85. OpenCSD maps Cortex-M55 to ARCH_V8 M-profile;
 * etmkit says v8.1-M, which is what the core implements (it decides whether the low-overhead
 * branch instructions exist). */
static const core_entry core_table[] = {
    {"Cortex-A5", EK_ARCH_V7A, EK_PROFILE_A},    {"Cortex-A7", EK_ARCH_V7A, EK_PROFILE_A},
    {"Cortex-A8", EK_ARCH_V7A, EK_PROFILE_A},    {"Cortex-A9", EK_ARCH_V7A, EK_PROFILE_A},
    {"Cortex-A12", EK_ARCH_V7A, EK_PROFILE_A},   {"Cortex-A15", EK_ARCH_V7A, EK_PROFILE_A},
    {"Cortex-A17", EK_ARCH_V7A, EK_PROFILE_A},   {"Cortex-A32", EK_ARCH_V8A, EK_PROFILE_A},
    {"Cortex-A35", EK_ARCH_V8A, EK_PROFILE_A},   {"Cortex-A53", EK_ARCH_V8A, EK_PROFILE_A},
    {"Cortex-A57", EK_ARCH_V8A, EK_PROFILE_A},   {"Cortex-A72", EK_ARCH_V8A, EK_PROFILE_A},
    {"Cortex-A73", EK_ARCH_V8A, EK_PROFILE_A},   {"Cortex-A78", EK_ARCH_V8A, EK_PROFILE_A},
    {"Cortex-A55", EK_ARCH_V8_3A, EK_PROFILE_A}, {"Cortex-A65", EK_ARCH_V8_3A, EK_PROFILE_A},
    {"Cortex-A75", EK_ARCH_V8_3A, EK_PROFILE_A}, {"Cortex-A76", EK_ARCH_V8_3A, EK_PROFILE_A},
    {"Cortex-A77", EK_ARCH_V8_3A, EK_PROFILE_A}, {"Cortex-R4", EK_ARCH_V7R, EK_PROFILE_R},
    {"Cortex-R5", EK_ARCH_V7R, EK_PROFILE_R},    {"Cortex-R7", EK_ARCH_V7R, EK_PROFILE_R},
    {"Cortex-R8", EK_ARCH_V7R, EK_PROFILE_R},    {"Cortex-R52", EK_ARCH_V8R, EK_PROFILE_R},
    {"Cortex-M0", EK_ARCH_V7M, EK_PROFILE_M},    {"Cortex-M0+", EK_ARCH_V7M, EK_PROFILE_M},
    {"Cortex-M3", EK_ARCH_V7M, EK_PROFILE_M},    {"Cortex-M4", EK_ARCH_V7M, EK_PROFILE_M},
    {"Cortex-M23", EK_ARCH_V8M, EK_PROFILE_M},   {"Cortex-M33", EK_ARCH_V8M, EK_PROFILE_M},
    {"Cortex-M55", EK_ARCH_V8_1M, EK_PROFILE_M}, {"Cortex-M52", EK_ARCH_V8_1M, EK_PROFILE_M},
    {"Cortex-M85", EK_ARCH_V8_1M, EK_PROFILE_M},
};

/* OpenCSD's version classes, before the profile is applied. */
enum { V_UNKNOWN, V_7, V_8, V_8R1, V_8R3, V_AA64 };

static ek_arch arch_for(int ver, ek_arch_profile prof)
{
    switch (prof) {
    case EK_PROFILE_A:
        return ver == V_7                     ? EK_ARCH_V7A
               : (ver == V_8 || ver == V_8R1) ? EK_ARCH_V8A
               : ver == V_8R3                 ? EK_ARCH_V8_3A
                                              : EK_ARCH_V9A;
    case EK_PROFILE_R: return ver == V_7 ? EK_ARCH_V7R : EK_ARCH_V8R;
    case EK_PROFILE_M:
        return ver == V_7   ? EK_ARCH_V7M
               : ver == V_8 ? EK_ARCH_V8M
                            : EK_ARCH_V8_1M; /* v8.1-M, and anything later */
    default: return EK_ARCH_UNKNOWN;
    }
}

static ek_arch_profile profile_letter(char ch)
{
    return ch == 'A'   ? EK_PROFILE_A
           : ch == 'R' ? EK_PROFILE_R
           : ch == 'M' ? EK_PROFILE_M
                       : EK_PROFILE_UNKNOWN;
}

int ek_core_arch(const char *name, ek_arch *arch, ek_arch_profile *profile)
{
    *arch = EK_ARCH_UNKNOWN;
    *profile = EK_PROFILE_UNKNOWN;
    if (!name) return 0;
    for (size_t i = 0; i < sizeof core_table / sizeof core_table[0]; i++) {
        if (strcasecmp(name, core_table[i].name) == 0) {
            *arch = core_table[i].arch;
            *profile = core_table[i].profile;
            return 1;
        }
    }
    size_t n = strlen(name);
    /* "ARMv<digit>[.<digit>]-<A|R|M>" (OpenCSD: major 7 or >= 8; 8.0-8.2 -> v8, 8.3 -> v8.3,
     * 8.4+ and 9+ -> AA64). */
    if (n >= 7 && strncmp(name, "ARMv", 4) == 0 && isdigit((unsigned char)name[4])) {
        int maj = name[4] - '0', min = 0;
        size_t dash = 5;
        const char *dot = strchr(name, '.');
        if (dot == name + 5) {
            if (!isdigit((unsigned char)name[6])) return 0;
            min = name[6] - '0';
            dash = 7;
        } else if (dot) {
            return 0;
        }
        int ver;
        if (maj == 7)
            ver = V_7;
        else if (maj == 8)
            ver = min < 3 ? (min == 1 ? V_8R1 : V_8) : min == 3 ? V_8R3 : V_AA64;
        else if (maj > 8)
            ver = V_AA64;
        else
            return 0;
        if (n <= dash + 1 || name[dash] != '-') return 0;
        ek_arch_profile p = profile_letter(name[dash + 1]);
        if (p == EK_PROFILE_UNKNOWN) return 0;
        *profile = p;
        *arch = arch_for(ver, p);
        return 1;
    }
    /* "ARM-AA64" / "ARM-aa64", optionally "-R" or "-M" (A-profile otherwise). */
    if (n >= 8 && strncmp(name, "ARM-", 4) == 0 &&
        (strncmp(name + 4, "AA64", 4) == 0 || strncmp(name + 4, "aa64", 4) == 0)) {
        ek_arch_profile p = EK_PROFILE_A;
        if (n >= 10 && name[8] == '-') {
            if (name[9] == 'R')
                p = EK_PROFILE_R;
            else if (name[9] == 'M')
                p = EK_PROFILE_M;
        }
        *profile = p;
        *arch = arch_for(V_AA64, p);
        return 1;
    }
    return 0;
}

/* Protocol of a trace source type: the text before the first '.' names it. */
static ek_protocol protocol_of_type(const char *type)
{
    if (!type) return EK_PROTO_UNKNOWN;
    size_t n = strcspn(type, ".");
    static const struct {
        const char *name;
        ek_protocol p;
    } t[] = {{"ETM4", EK_PROTO_ETMV4}, {"ETE", EK_PROTO_ETE},  {"ETM3", EK_PROTO_ETMV3},
             {"PTM1", EK_PROTO_PTM},   {"PFT1", EK_PROTO_PTM}, {"STM", EK_PROTO_STM},
             {"ITM", EK_PROTO_ITM}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strlen(t[i].name) == n && strncasecmp(type, t[i].name, n) == 0) return t[i].p;
    return EK_PROTO_UNKNOWN;
}

/* Memory space names of [dump] space= (OpenCSD ss_to_dcdtree's table, including the old
 * H/P/NP/SP names). */
static int mem_space_of(const char *s, ek_mem_space *out)
{
    static const struct {
        const char *name;
        ek_mem_space ms;
    } t[] = {{"EL1S", EK_MS_EL1S}, {"EL1N", EK_MS_EL1N}, {"EL1R", EK_MS_EL1R}, {"EL2S", EK_MS_EL2S},
             {"EL2", EK_MS_EL2},   {"EL2N", EK_MS_EL2},  {"EL2R", EK_MS_EL2R}, {"EL3", EK_MS_EL3},
             {"ROOT", EK_MS_ROOT}, {"S", EK_MS_S},       {"N", EK_MS_N},       {"R", EK_MS_R},
             {"ANY", EK_MS_ANY},   {"H", EK_MS_EL2},     {"P", EK_MS_EL1N},    {"NP", EK_MS_EL1N},
             {"SP", EK_MS_EL1S}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        if (strcasecmp(s, t[i].name) == 0) {
            *out = t[i].ms;
            return 1;
        }
    }
    return 0;
}

/* The register that carries the trace ID of protocol p, and where in it. */
static const char *id_reg_of(ek_protocol p, unsigned *shift)
{
    *shift = 0;
    switch (p) {
    case EK_PROTO_ETMV4:
    case EK_PROTO_ETE: return "TRCTRACEIDR";
    case EK_PROTO_ETMV3:
    case EK_PROTO_PTM: return "ETMTRACEIDR";
    case EK_PROTO_STM: *shift = 16; return "STMTCSR";
    case EK_PROTO_ITM: *shift = 16; return "ITMTCR";
    default: return NULL;
    }
}

/* ---- device files --------------------------------------------------------------------- */

/* Split a [regs] key: NAME, NAME(0x078), NAME(id:0x1), NAME(size:64), or several attributes
 * separated by commas, NAME(id:0x100,size:64). Returns 0 when the key is malformed. */
static int parse_reg_key(ctx *c, const char *key, ek_snap_reg *r)
{
    r->offset = -1;
    r->id = -1;
    r->size_bits = 0;
    const char *open = strchr(key, '(');
    size_t nlen = open ? (size_t)(open - key) : strlen(key);
    while (nlen && isspace((unsigned char)key[nlen - 1]))
        nlen--;
    if (nlen == 0) return 0;
    if (open) {
        const char *close = strchr(open, ')');
        if (!close || close[1 + strspn(close + 1, " \t")] != 0) return 0;
        size_t ilen = (size_t)(close - open - 1);
        char *in = malloc(ilen + 1);
        if (!in) {
            c->oom = 1;
            return 0;
        }
        memcpy(in, open + 1, ilen);
        in[ilen] = 0;
        char *save = NULL;
        /* One or more comma-separated attributes: "0x078", "id:0x1", "size:64". */
        int ok = 1;
        for (char *tok = strtok_r(in, ",", &save); tok && ok; tok = strtok_r(NULL, ",", &save)) {
            while (isspace((unsigned char)*tok))
                tok++;
            uint64_t v = 0;
            if (strncasecmp(tok, "id:", 3) == 0) {
                ok = ek_ini_parse_u64(tok + 3, &v) && v <= INT64_MAX;
                r->id = (int64_t)v;
            } else if (strncasecmp(tok, "size:", 5) == 0) {
                ok = ek_ini_parse_u64(tok + 5, &v) && v > 0 && v <= 1024;
                r->size_bits = (int)v;
            } else {
                ok = ek_ini_parse_u64(tok, &v) && v <= INT64_MAX;
                r->offset = (int64_t)v;
            }
        }
        free(in);
        if (!ok) return 0;
    }
    r->name = malloc(nlen + 1);
    if (!r->name) {
        c->oom = 1;
        return 0;
    }
    for (size_t i = 0; i < nlen; i++)
        r->name[i] = (char)toupper((unsigned char)key[i]);
    r->name[nlen] = 0;
    return 1;
}

static void load_regs(ctx *c, const ek_ini *ini, const ek_ini_section *sec, ek_snap_device *d)
{
    EK_VEC(ek_snap_reg) regs = {0};
    name_index seen = {0}; /* the names in regs */
    if (ek_vec_reserve(&regs, sec->nkv)) {
        c->oom = 1;
        return;
    }
    for (size_t i = 0; i < sec->nkv; i++) {
        const ek_ini_kv *kv = &sec->kv[i];
        ek_snap_reg r = {0};
        r.line = kv->line;
        if (!parse_reg_key(c, kv->key, &r)) {
            DIAG(c, EK_SEV_WARN, "snapshot.bad-value", ini->path, kv->line, kv->offset,
                 "register key '%s' is not NAME or NAME(offset|id:N|size:N[,...])", kv->key);
            continue;
        }
        if (!ek_ini_parse_u64(kv->value, &r.value)) {
            /* (said here, once: the register is then absent, which build_config does not say
             * again as a missing register) */
            DIAG(c, EK_SEV_WARN, "snapshot.bad-value", ini->path, kv->line, kv->offset,
                 "register %s: value '%s' is not a 64-bit number; the register is ignored", r.name,
                 kv->value);
            if (ek_vec_push(&c->bad, r.name)) {
                c->oom = 1;
                free(r.name);
                break;
            }
            continue;
        }
        int dup = ni_add(&seen, r.name, regs.n, NULL);
        if (dup < 0) {
            c->oom = 1;
            free(r.name);
            break;
        }
        if (dup) {
            DIAG(c, EK_SEV_NOTE, "snapshot.duplicate", ini->path, kv->line, kv->offset,
                 "register %s given again; the first value is used", r.name);
            free(r.name);
            continue;
        }
        regs.v[regs.n++] = r;
    }
    ni_free(&seen);
    d->regs = regs.v;
    d->nregs = regs.n;
}

static void load_dump(ctx *c, const ek_ini *ini, const ek_ini_section *sec, const char *dir,
                      dump_vec *dumps)
{
    ek_snap_dump dp = {0};
    dp.space = EK_MS_ANY;
    const char *file = NULL;
    const ek_ini_kv *len_kv = NULL, *off_kv = NULL; /* where length= and offset= are */
    int have_addr = 0;
    for (size_t i = 0; i < sec->nkv; i++) {
        const ek_ini_kv *kv = &sec->kv[i];
        uint64_t v = 0;
        if (strcasecmp(kv->key, "file") == 0) {
            if (!file) file = kv->value;
        } else if (strcasecmp(kv->key, "address") == 0 || strcasecmp(kv->key, "length") == 0 ||
                   strcasecmp(kv->key, "offset") == 0) {
            if (!ek_ini_parse_u64(kv->value, &v)) {
                DIAG(c, EK_SEV_WARN, "snapshot.bad-value", ini->path, kv->line, kv->offset,
                     "[%s] %s: '%s' is not a number", sec->name, kv->key, kv->value);
                continue;
            }
            if (tolower((unsigned char)kv->key[0]) == 'a') {
                dp.address = v;
                have_addr = 1;
            } else if (tolower((unsigned char)kv->key[0]) == 'l') {
                /* length=0 is no length, the file from offset= on: the reference reader takes
                 * it so (its 0 is "not given"); it dropped the dump without a word */
                dp.length = v;
                dp.has_length = v != 0;
                len_kv = kv;
            } else {
                dp.offset = v;
                off_kv = kv;
            }
        } else if (strcasecmp(kv->key, "space") == 0) {
            char *s = unquote(c, kv->value);
            if (s && *s && !mem_space_of(s, &dp.space))
                DIAG(c, EK_SEV_WARN, "snapshot.bad-value", ini->path, kv->line, kv->offset,
                     "[%s] unknown memory space '%s'; using any space", sec->name, s);
            free(s);
        } else {
            DIAG(c, EK_SEV_NOTE, "snapshot.unknown-key", ini->path, kv->line, kv->offset,
                 "[%s] unknown key '%s' ignored", sec->name, kv->key);
        }
    }
    if (!file || !*file || !have_addr) {
        DIAG(c, EK_SEV_WARN, "snapshot.missing-key", ini->path, sec->line, sec->offset,
             "[%s] has no %s; memory dump ignored", sec->name,
             (!file || !*file) ? "file=" : "address=");
        return;
    }
    char *rel = unquote(c, file);
    if (!rel) return;
    dp.path = ek_path_join(dir, rel);
    free(rel);
    dp.section = xstrdup(c, sec->name);
    if (!dp.path || !dp.section) {
        c->oom = 1;
        free(dp.path);
        free(dp.section);
        return;
    }
    int err = 0;
    dp.present = probe_file(dp.path, &dp.file_size, &err);
    if (!dp.present) {
        DIAG(c, EK_SEV_WARN, "snapshot.missing-file", ini->path, sec->line, sec->offset,
             "[%s] memory dump file '%s' cannot be read (%s); addresses 0x%llx.. are not mapped",
             sec->name, dp.path, file_error(err), (unsigned long long)dp.address);
    } else if (dp.offset > dp.file_size) {
        DIAG(c, EK_SEV_WARN, "snapshot.bad-value", ini->path, off_kv->line, off_kv->offset,
             "[%s] offset 0x%llx is past the end of '%s' (%llu bytes); nothing mapped at 0x%llx",
             sec->name, (unsigned long long)dp.offset, dp.path, (unsigned long long)dp.file_size,
             (unsigned long long)dp.address);
    } else if (dp.file_size == 0) {
        DIAG(c, EK_SEV_WARN, "snapshot.bad-value", ini->path, sec->line, sec->offset,
             "[%s] memory dump file '%s' is empty; nothing mapped at 0x%llx", sec->name, dp.path,
             (unsigned long long)dp.address);
    } else if (dp.offset == dp.file_size) {
        DIAG(c, EK_SEV_WARN, "snapshot.bad-value", ini->path, off_kv->line, off_kv->offset,
             "[%s] offset 0x%llx is the end of '%s' (%llu bytes); nothing mapped at 0x%llx",
             sec->name, (unsigned long long)dp.offset, dp.path, (unsigned long long)dp.file_size,
             (unsigned long long)dp.address);
    } else if (dp.has_length && dp.length > dp.file_size - dp.offset) {
        const uint64_t avail = dp.file_size - dp.offset;
        DIAG(c, EK_SEV_WARN, "snapshot.bad-value", ini->path, len_kv->line, len_kv->offset,
             "[%s] length 0x%llx runs past the end of '%s' (0x%llx bytes from offset 0x%llx); "
             "those 0x%llx bytes are mapped at 0x%llx",
             sec->name, (unsigned long long)dp.length, dp.path, (unsigned long long)avail,
             (unsigned long long)dp.offset, (unsigned long long)avail,
             (unsigned long long)dp.address);
    }
    if (!dp.has_length)
        dp.length = dp.present && dp.offset <= dp.file_size ? dp.file_size - dp.offset : 0;
    if (ek_vec_push(dumps, dp)) {
        c->oom = 1;
        free(dp.path);
        free(dp.section);
    }
}

static void free_device(ek_snap_device *d)
{
    free(d->name);
    free(d->devclass);
    free(d->type);
    free(d->ini_path);
    for (size_t i = 0; i < d->nregs; i++)
        free(d->regs[i].name);
    free(d->regs);
    for (size_t i = 0; i < d->ndumps; i++) {
        free(d->dumps[i].path);
        free(d->dumps[i].section);
    }
    free(d->dumps);
    memset(d, 0, sizeof *d);
}

/* Forget the bad register names from 'from' on (those of a device that is not added). */
static void drop_bad(ctx *c, size_t from)
{
    while (c->bad.n > from)
        free(c->bad.v[--c->bad.n]);
}

/* 1 when device dev's file gave register 'name' a value that is no number. */
static int reg_bad(const ctx *c, size_t dev, const char *name)
{
    if (dev >= c->extra.n) return 0;
    const dev_extra *x = &c->extra.v[dev];
    for (size_t i = 0; i < x->nbad; i++)
        if (strcasecmp(c->bad.v[x->bad_first + i], name) == 0) return 1;
    return 0;
}

/* Load one device file; returns 1 when a device was added. */
static int load_device(ctx *c, const char *path, const char *listfile, const ek_ini_kv *listkv)
{
    ek_ini *ini = NULL;
    int rc = ek_ini_load(path, c->diag, &ini);
    if (rc == EK_ERR_NOMEM) {
        c->oom = 1;
        return 0;
    }
    if (rc) {
        DIAG(c, EK_SEV_WARN, "snapshot.missing-file", listfile, listkv->line, listkv->offset,
             "device file '%s' cannot be read (%s); device ignored", path, file_error(errno));
        return 0;
    }
    ek_snap_device d = {0};
    dev_extra x = {c->bad.n, 0, -1, -1, listkv};
    d.ini_path = xstrdup(c, path);
    const ek_ini_section *ds = ek_ini_section_find(ini, "device");
    const char *name = ek_ini_get(ds, "name");
    if (!ds)
        DIAG(c, EK_SEV_WARN, "snapshot.missing-key", path, -1, -1,
             "no [device] section; name taken from the file name");
    if (!name || !*name) {
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        size_t n = strlen(base);
        if (n > 4 && strcasecmp(base + n - 4, ".ini") == 0) n -= 4;
        d.name = strndup(base, n);
        if (!d.name) c->oom = 1;
        if (ds)
            DIAG(c, EK_SEV_WARN, "snapshot.missing-key", path, ds->line, ds->offset,
                 "[device] has no name=; using '%s'", d.name ? d.name : "");
    } else {
        d.name = xstrdup(c, name);
    }
    const char *cls = ek_ini_get(ds, "class");
    d.devclass = xstrdup(c, cls ? cls : "");
    if (d.devclass)
        for (char *p = d.devclass; *p; p++)
            *p = (char)tolower((unsigned char)*p);
    const char *type = ek_ini_get(ds, "type");
    d.type = xstrdup(c, type ? type : "");

    const ek_ini_section *rs = ek_ini_section_find(ini, "regs");
    for (; rs; rs = ek_ini_next_section(ini, rs))
        if (!d.regs) load_regs(c, ini, rs, &d);

    char *dir = NULL;
    const char *slash = strrchr(path, '/');
    dir = slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
    if (!dir) c->oom = 1;
    dump_vec dumps = {0};
    for (size_t i = 0; dir && i < ini->nsec; i++)
        if (strncasecmp(ini->sec[i].name, "dump", 4) == 0)
            load_dump(c, ini, &ini->sec[i], dir, &dumps);
    free(dir);
    d.dumps = dumps.v;
    d.ndumps = dumps.n;

    if (d.devclass && strcmp(d.devclass, "core") == 0) {
        if (!ek_core_arch(d.type, &d.arch, &d.profile)) {
            const ek_ini_kv *kv = ek_ini_find(ds, "type");
            DIAG(c, EK_SEV_WARN, "snapshot.unknown-core", path, kv ? (int64_t)kv->line : -1,
                 kv ? (int64_t)kv->offset : -1,
                 "core type '%s' names no known architecture; its instructions cannot be "
                 "classified",
                 d.type ? d.type : "");
        }
    } else if (d.devclass && strcmp(d.devclass, "trace_source") == 0) {
        d.protocol = protocol_of_type(d.type);
        if (d.protocol == EK_PROTO_UNKNOWN) {
            const ek_ini_kv *kv = ek_ini_find(ds, "type");
            DIAG(c, EK_SEV_WARN, "snapshot.unknown-device-type", path, kv ? (int64_t)kv->line : -1,
                 kv ? (int64_t)kv->offset : -1,
                 "trace source type '%s' is not a known protocol (ETM4, ETE, ETM3, PTM1, "
                 "PFT1, STM, ITM)",
                 d.type ? d.type : "");
        }
    }
    /* where the register that carries its trace ID is (the key of the line of the value kept) */
    unsigned shift = 0;
    const char *idreg = id_reg_of(d.protocol, &shift);
    for (size_t i = 0; idreg && i < d.nregs && x.id_line < 0; i++) {
        if (strcmp(d.regs[i].name, idreg) != 0) continue;
        for (const ek_ini_section *r = ek_ini_section_find(ini, "regs"); r && x.id_line < 0;
             r = ek_ini_next_section(ini, r))
            for (size_t k = 0; k < r->nkv; k++)
                if (r->kv[k].line == d.regs[i].line) {
                    x.id_line = (int64_t)r->kv[k].line;
                    x.id_offset = (int64_t)r->kv[k].offset;
                    break;
                }
    }
    ek_ini_free(ini);
    x.nbad = c->bad.n - x.bad_first;
    if (c->oom || !d.name) {
        drop_bad(c, x.bad_first);
        free_device(&d);
        return 0;
    }
    /* A name used before: the device is left out, and said once. (Kept, it was a second
     * device that trace.ini's names could not reach: its source "not assigned to a core" and
     * "not assigned to a buffer", where the file listed twice was the cause.) */
    long first = ni_get(&c->devnames, d.name);
    if (first >= 0) {
        const ek_ini_kv *was = c->extra.v[first].listed;
        if (strcmp(c->devs.v[first].ini_path, path) == 0)
            DIAG(c, EK_SEV_WARN, "snapshot.duplicate", listfile, listkv->line, listkv->offset,
                 "[device_list] %s=%s: device file listed again (first by %s at line %llu); "
                 "ignored",
                 listkv->key, listkv->value, was->key, (unsigned long long)was->line);
        else
            DIAG(c, EK_SEV_WARN, "snapshot.duplicate", listfile, listkv->line, listkv->offset,
                 "[device_list] %s=%s: device name '%s' is already that of %s=%s (line %llu); "
                 "this device is ignored",
                 listkv->key, listkv->value, d.name, was->key, was->value,
                 (unsigned long long)was->line);
        drop_bad(c, x.bad_first);
        free_device(&d);
        return 0;
    }
    if (ek_vec_push(&c->extra, x)) {
        c->oom = 1;
        drop_bad(c, x.bad_first);
        free_device(&d);
        return 0;
    }
    if (ek_vec_push(&c->devs, d)) {
        c->oom = 1;
        c->extra.n--;
        drop_bad(c, x.bad_first);
        free_device(&d);
        return 0;
    }
    /* (the name of the device in devs: its string does not move when devs grows) */
    if (first < 0 && ni_add(&c->devnames, c->devs.v[c->devs.n - 1].name, c->devs.n - 1, NULL))
        c->oom = 1;
    return 1;
}

/* ---- trace.ini ------------------------------------------------------------------------ */

static void load_buffer(ctx *c, const ek_ini *ini, const ek_ini_section *sec, const char *dir)
{
    ek_snap_buffer b = {0};
    b.format = EK_BUF_CORESIGHT;
    const char *name = ek_ini_get(sec, "name");
    const char *file = ek_ini_get(sec, "file");
    const ek_ini_kv *fmt = ek_ini_find(sec, "format");
    b.section = xstrdup(c, sec->name);
    if (!name || !*name) {
        DIAG(c, EK_SEV_WARN, "snapshot.missing-key", ini->path, sec->line, sec->offset,
             "[%s] has no name=; using the section name", sec->name);
        name = sec->name;
    }
    b.name = xstrdup(c, name);
    if (fmt) {
        if (strcasecmp(fmt->value, "coresight") == 0)
            b.format = EK_BUF_CORESIGHT;
        else if (strcasecmp(fmt->value, "source_data") == 0)
            b.format = EK_BUF_SOURCE_DATA;
        else if (strcasecmp(fmt->value, "dstream_coresight") == 0)
            b.format = EK_BUF_DSTREAM;
        else {
            b.format = EK_BUF_UNKNOWN;
            DIAG(c, EK_SEV_WARN, "snapshot.unknown-format", ini->path, fmt->line, fmt->offset,
                 "[%s] buffer format '%s' is not coresight, source_data or dstream_coresight",
                 sec->name, fmt->value);
        }
    }
    if (!file || !*file) {
        DIAG(c, EK_SEV_ERROR, "snapshot.missing-key", ini->path, sec->line, sec->offset,
             "[%s] (buffer %s) has no file=; it cannot be decoded", sec->name, name);
    } else {
        char *rel = unquote(c, file);
        b.path = rel ? ek_path_join(dir, rel) : NULL;
        free(rel);
        if (!b.path) {
            c->oom = 1;
        } else {
            int err = 0;
            b.present = probe_file(b.path, &b.file_size, &err);
            if (!b.present) {
                const ek_ini_kv *kv = ek_ini_find(sec, "file");
                DIAG(c, EK_SEV_ERROR, "snapshot.missing-file", ini->path, kv->line, kv->offset,
                     "trace file '%s' of buffer %s cannot be read (%s)", b.path, name,
                     file_error(err));
            }
        }
    }
    size_t secidx = (size_t)(sec - ini->sec);
    if (c->oom || !b.name || ek_vec_push(&c->bufs, b) || ek_vec_push(&c->buf_secidx, secidx)) {
        c->oom = 1;
        free(b.name);
        free(b.path);
        free(b.section);
    }
}

static int load_trace(ctx *c, const char *path)
{
    ek_ini *ini = NULL;
    int rc = ek_ini_load(path, c->diag, &ini);
    if (rc == EK_ERR_NOMEM) return rc;
    if (rc) {
        DIAG(c, EK_SEV_ERROR, "snapshot.missing-file", path, -1, -1,
             "trace metadata cannot be read (%s)", file_error(errno));
        return rc;
    }
    char *dir = NULL;
    const char *slash = strrchr(path, '/');
    dir = slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
    if (!dir) {
        ek_ini_free(ini);
        return EK_ERR_NOMEM;
    }
    /* the first section of each name, the buffer sections read, the first buffer of each
     * name (what ek_ini_section_find, scans of the buffers and ek_snapshot_find_buffer find) */
    name_index secs = {0}, loaded = {0}, bufnames = {0};
    for (size_t i = 0; i < ini->nsec && !c->oom; i++)
        if (ni_add(&secs, ini->sec[i].name, i, NULL) < 0) c->oom = 1;
    const ek_ini_section *tb = ek_ini_section_find(ini, "trace_buffers");
    const ek_ini_kv *list = ek_ini_find(tb, "buffers");
    if (!list) {
        DIAG(c, EK_SEV_ERROR, "snapshot.missing-key", path, tb ? (int64_t)tb->line : -1,
             tb ? (int64_t)tb->offset : -1, "no [trace_buffers] buffers= list");
    } else {
        /* buffers=buffer0,buffer1: each names a section. */
        const char *p = list->value;
        while (*p && !c->oom) {
            size_t n = strcspn(p, ",");
            const char *b = p, *e = p + n;
            while (b < e && isspace((unsigned char)*b))
                b++;
            while (e > b && isspace((unsigned char)e[-1]))
                e--;
            p += n + (p[n] == ',');
            if (b == e) continue;
            char *secname = strndup(b, (size_t)(e - b));
            if (!secname) {
                c->oom = 1;
                break;
            }
            long si = ni_get(&secs, secname);
            const ek_ini_section *bs = si >= 0 ? &ini->sec[si] : NULL;
            int seen = bs ? ni_add(&loaded, bs->name, 0, NULL) : 0;
            if (seen < 0)
                c->oom = 1;
            else if (seen)
                DIAG(c, EK_SEV_NOTE, "snapshot.duplicate", path, list->line, list->offset,
                     "buffer section '%s' listed twice", secname);
            else if (!bs)
                DIAG(c, EK_SEV_WARN, "snapshot.unknown-device", path, list->line, list->offset,
                     "buffers= names [%s], which is not in the file", secname);
            else
                load_buffer(c, ini, bs, dir);
            free(secname);
        }
    }
    free(dir);
    /* Duplicate buffer names: lookups find the first. */
    for (size_t i = 0; i < c->bufs.n && !c->oom; i++) {
        size_t j = 0;
        int dup = ni_add(&bufnames, c->bufs.v[i].name, i, &j);
        if (dup < 0) c->oom = 1;
        if (dup == 1)
            DIAG(c, EK_SEV_NOTE, "snapshot.duplicate", path, -1, -1,
                 "buffer name '%s' used by [%s] and [%s]; lookups find [%s]", c->bufs.v[i].name,
                 c->bufs.v[j].section, c->bufs.v[i].section, c->bufs.v[j].section);
    }

    ek_snapshot *ss = c->ss;
    ss->trace_ini = xstrdup(c, path);
    const char *freq = ek_ini_lookup(ini, "timestamp", "frequency");
    if (freq && !ek_ini_parse_u64(freq, &ss->timestamp_frequency)) {
        const ek_ini_kv *kv = ek_ini_find(ek_ini_section_find(ini, "timestamp"), "frequency");
        DIAG(c, EK_SEV_WARN, "snapshot.bad-value", path, kv->line, kv->offset,
             "[timestamp] frequency '%s' is not a number", freq);
        ss->timestamp_frequency = 0;
    }

    /* Sources: one per trace_source device, in device-list order; src_of[device] is the index
     * of its source, or -1. */
    EK_VEC(ek_snap_source) srcs = {0};
    long *src_of = calloc(c->devs.n + 1, sizeof *src_of);
    if (!src_of) c->oom = 1;
    for (size_t i = 0; i < c->devs.n && src_of; i++) {
        src_of[i] = -1;
        if (strcmp(c->devs.v[i].devclass, "trace_source") != 0) continue;
        ek_snap_source s = {0};
        s.device = i;
        s.buffer = -1;
        s.core = -1;
        src_of[i] = (long)srcs.n;
        if (ek_vec_push(&srcs, s)) {
            c->oom = 1;
            break;
        }
    }
    /* [source_buffers] source=buffer (a later line for the same source wins, as in the
     * reference parser). */
    const ek_ini_section *sb = ek_ini_section_find(ini, "source_buffers");
    for (; sb && !c->oom; sb = ek_ini_next_section(ini, sb)) {
        for (size_t k = 0; k < sb->nkv; k++) {
            const ek_ini_kv *kv = &sb->kv[k];
            long dev = ni_get(&c->devnames, kv->key);
            long buf = ni_get(&bufnames, kv->value);
            ek_snap_source *src = dev >= 0 && src_of[dev] >= 0 ? &srcs.v[src_of[dev]] : NULL;
            if (!src) {
                DIAG(c, EK_SEV_WARN, "snapshot.unknown-device", path, kv->line, kv->offset,
                     "[source_buffers] '%s' is not a trace source in the device list", kv->key);
                continue;
            }
            if (buf < 0) {
                DIAG(c, EK_SEV_WARN, "snapshot.unknown-device", path, kv->line, kv->offset,
                     "[source_buffers] %s: no buffer named '%s'", kv->key, kv->value);
                continue;
            }
            src->buffer = buf;
        }
    }
    /* [core_trace_sources] core=source; keys repeat when one core has several sources. */
    const ek_ini_section *cs = ek_ini_section_find(ini, "core_trace_sources");
    for (; cs && !c->oom; cs = ek_ini_next_section(ini, cs)) {
        for (size_t k = 0; k < cs->nkv; k++) {
            const ek_ini_kv *kv = &cs->kv[k];
            long core = ni_get(&c->devnames, kv->key);
            long dev = ni_get(&c->devnames, kv->value);
            ek_snap_source *src = dev >= 0 && src_of[dev] >= 0 ? &srcs.v[src_of[dev]] : NULL;
            if (!src) {
                DIAG(c, EK_SEV_WARN, "snapshot.unknown-device", path, kv->line, kv->offset,
                     "[core_trace_sources] '%s' is not a trace source in the device list",
                     kv->value);
                continue;
            }
            if (core < 0) {
                DIAG(c, EK_SEV_WARN, "snapshot.unknown-device", path, kv->line, kv->offset,
                     "[core_trace_sources] core '%s' (traced by %s) is not in the device list",
                     kv->key, kv->value);
                continue;
            }
            if (strcmp(c->devs.v[core].devclass, "core") != 0)
                DIAG(c, EK_SEV_WARN, "snapshot.bad-value", path, kv->line, kv->offset,
                     "[core_trace_sources] '%s' is a %s device, not a core", kv->key,
                     c->devs.v[core].devclass);
            src->core = core;
        }
    }
    free(src_of);
    ni_free(&secs);
    ni_free(&loaded);
    ni_free(&bufnames);
    ek_ini_free(ini);
    ss->sources = srcs.v;
    ss->nsources = srcs.n;
    return c->oom ? EK_ERR_NOMEM : EK_OK;
}

/* ---- typed configuration -------------------------------------------------------------- */

typedef struct reg_want {
    const char *name;
    int required;  /* the reference decoder refuses the source without it */
    uint32_t dflt; /* value used when absent */
    uint32_t *dst;
    uint32_t have_bit; /* bit in etm4.present, or 0 */
} reg_want;

static void get_regs(ctx *c, size_t dev, reg_want *w, size_t n, uint32_t *present)
{
    const ek_snap_device *d = &c->ss->devices[dev];
    for (size_t i = 0; i < n; i++) {
        uint64_t v = 0;
        if (ek_snap_device_reg(d, w[i].name, &v)) {
            *w[i].dst = (uint32_t)v;
            if (present) *present |= w[i].have_bit;
            continue;
        }
        *w[i].dst = w[i].dflt;
        if (reg_bad(c, dev, w[i].name))
            ; /* given with a value that is no number: said where the file gives it */
        else if (w[i].required)
            DIAG(c, EK_SEV_WARN, "snapshot.missing-register", d->ini_path, -1, -1,
                 "%s (%s) has no %s register; using 0", d->name, d->type, w[i].name);
        else
            DIAG(c, EK_SEV_NOTE, "snapshot.default-register", d->ini_path, -1, -1,
                 "%s has no %s register; using the default 0x%08x", d->name, w[i].name, w[i].dflt);
    }
}

static void build_config(ctx *c, ek_snap_source *s)
{
    ek_snapshot *ss = c->ss;
    const ek_snap_device *d = &ss->devices[s->device];
    ek_source_config *cfg = &s->cfg;
    memset(cfg, 0, sizeof *cfg);
    cfg->protocol = d->protocol;
    if (s->core >= 0) {
        cfg->arch = ss->devices[s->core].arch;
        cfg->profile = ss->devices[s->core].profile;
    }
    switch (d->protocol) {
    case EK_PROTO_ETMV4:
    case EK_PROTO_ETE: {
        ek_etm4_regs *r = &cfg->regs.etm4;
        int ete = d->protocol == EK_PROTO_ETE;
        /* Registers the reference decoder reads, with its defaults and which ones it requires.
         * The other ID registers are taken when given. */
        reg_want w[] = {
            {"TRCCONFIGR", 1, 0, &r->configr, EK_ETM4_HAVE_CONFIGR},
            {"TRCTRACEIDR", 1, 0, &r->traceidr, EK_ETM4_HAVE_TRACEIDR},
            {"TRCIDR0", 1, 0, &r->idr[0], 1u << 0},
            {"TRCIDR1", 0, 0x4100F403u, &r->idr[1], 1u << 1},
            {"TRCIDR2", 1, 0, &r->idr[2], 1u << 2},
            {"TRCIDR8", 0, 0, &r->idr[8], 1u << 8},
            {"TRCIDR9", 0, 0, &r->idr[9], 1u << 9},
            {"TRCIDR10", 0, 0, &r->idr[10], 1u << 10},
            {"TRCIDR11", 0, 0, &r->idr[11], 1u << 11},
            {"TRCIDR12", 0, 0, &r->idr[12], 1u << 12},
            {"TRCIDR13", 0, 0, &r->idr[13], 1u << 13},
            {"TRCDEVARCH", 0, 0x47705A13u, &r->devarch, EK_ETM4_HAVE_DEVARCH},
        };
        /* ETE: the reference reads IDR0/1/2/8 and DEVARCH only; ETMv4: no DEVARCH. */
        size_t n = 0;
        reg_want use[12];
        for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
            int idr9_13 = w[i].have_bit >= (1u << 9) && w[i].have_bit <= (1u << 13);
            int devarch = w[i].have_bit == EK_ETM4_HAVE_DEVARCH;
            if ((ete && idr9_13) || (!ete && devarch)) {
                uint64_t v;
                if (ek_snap_device_reg(d, w[i].name, &v)) {
                    *w[i].dst = (uint32_t)v;
                    r->present |= w[i].have_bit;
                }
                continue;
            }
            use[n++] = w[i];
        }
        get_regs(c, s->device, use, n, &r->present);
        static const char *const other_idr[] = {"TRCIDR3", "TRCIDR4", "TRCIDR5", "TRCIDR6",
                                                "TRCIDR7"};
        for (int i = 0; i < 5; i++) {
            uint64_t v;
            if (ek_snap_device_reg(d, other_idr[i], &v)) {
                r->idr[3 + i] = (uint32_t)v;
                r->present |= 1u << (3 + i);
            }
        }
        uint64_t v;
        if (ek_snap_device_reg(d, "TRCAUTHSTATUS", &v)) {
            r->authstatus = (uint32_t)v;
            r->present |= EK_ETM4_HAVE_AUTHSTATUS;
        }
        cfg->trace_id = (uint8_t)(r->traceidr & 0x7f);
        if (!ete && cfg->profile == EK_PROFILE_M) cfg->protocol = EK_PROTO_ETMV4M;
        break;
    }
    case EK_PROTO_ETMV3:
    case EK_PROTO_PTM: {
        ek_etm3_regs *r = &cfg->regs.etm3;
        reg_want w[] = {
            {"ETMIDR", 1, 0, &r->etmidr, 0},
            {"ETMCR", 1, 0, &r->etmcr, 0},
            {"ETMCCER", 1, 0, &r->etmccer, 0},
            {"ETMTRACEIDR", 1, 0, &r->etmtraceidr, 0},
        };
        get_regs(c, s->device, w, 4, NULL);
        cfg->trace_id = (uint8_t)(r->etmtraceidr & 0x7f);
        break;
    }
    case EK_PROTO_STM:
    case EK_PROTO_ITM: {
        reg_want w[] = {
            {d->protocol == EK_PROTO_STM ? "STMTCSR" : "ITMTCR", 1, 0, &cfg->regs.tcr, 0}};
        get_regs(c, s->device, w, 1, NULL);
        cfg->trace_id = (uint8_t)((cfg->regs.tcr >> 16) & 0x7f);
        break;
    }
    default: break;
    }
    /* A trace ID that formatted trace cannot carry: the null ID (0, the formatter's padding)
     * or a reserved one (0x70-0x7f); the register's other bits do not count (as the decoder
     * takes it). Said where the file gives the register; a single-source buffer has no IDs. */
    unsigned shift = 0;
    const char *idreg = id_reg_of(d->protocol, &shift);
    uint64_t raw = 0;
    const ek_buffer_format fmt = s->buffer >= 0 ? ss->buffers[s->buffer].format : EK_BUF_UNKNOWN;
    if (idreg && fmt != EK_BUF_UNKNOWN && fmt != EK_BUF_SOURCE_DATA &&
        ek_snap_device_reg(d, idreg, &raw)) {
        const unsigned id = (unsigned)(raw >> shift) & 0x7f;
        const dev_extra *x = s->device < c->extra.n ? &c->extra.v[s->device] : NULL;
        if (id == 0 || id >= 0x70)
            DIAG(c, EK_SEV_WARN, "snapshot.bad-value", d->ini_path, x ? x->id_line : -1,
                 x ? x->id_offset : -1,
                 "%s=0x%llx gives trace ID 0x%02x, %s, not a usable one (0x01-0x6f): no trace "
                 "of %s can be found in buffer %s",
                 idreg, (unsigned long long)raw, id, id ? "a reserved ID" : "the null ID", d->name,
                 ss->buffers[s->buffer].name);
    }
    int itrace = d->protocol != EK_PROTO_STM && d->protocol != EK_PROTO_ITM &&
                 d->protocol != EK_PROTO_UNKNOWN;
    if (itrace && s->core < 0 && c->bare)
        DIAG(c, EK_SEV_WARN, "snapshot.no-core", ss->trace_ini, -1, -1,
             "trace source %s is given no core type: its instructions are decoded as %s", d->name,
             d->protocol == EK_PROTO_ETE     ? "A64 code of the latest architecture"
             : d->protocol == EK_PROTO_ETMV4 ? "Armv8-A code"
                                             : "code of an unknown architecture");
    else if (itrace && s->core < 0)
        DIAG(c, EK_SEV_WARN, "snapshot.no-core", ss->trace_ini, -1, -1,
             "trace source %s is not assigned to a core in [core_trace_sources]; "
             "its instructions cannot be followed",
             d->name);
    if (s->buffer < 0)
        DIAG(c, EK_SEV_WARN, "snapshot.no-buffer", ss->trace_ini, -1, -1,
             "trace source %s is not assigned to a buffer in [source_buffers]; "
             "it has no trace",
             d->name);
}

/* ---- entry points --------------------------------------------------------------------- */

static int cmp_secidx(const void *a, const void *b, void *arg)
{
    const size_t *idx = arg;
    size_t x = idx[*(const size_t *)a], y = idx[*(const size_t *)b];
    return x < y ? -1 : x > y;
}

void ek_snapshot_free(ek_snapshot *ss)
{
    if (!ss) return;
    free(ss->dir);
    free(ss->description);
    free(ss->version);
    free(ss->trace_ini);
    for (size_t i = 0; i < ss->ndevices; i++)
        free_device(&ss->devices[i]);
    free(ss->devices);
    for (size_t i = 0; i < ss->nbuffers; i++) {
        free(ss->buffers[i].name);
        free(ss->buffers[i].path);
        free(ss->buffers[i].section);
    }
    free(ss->buffers);
    free(ss->buffer_order);
    free(ss->sources);
    free(ss);
}

int ek_snapshot_open(const char *dir, const ek_diag *diag, ek_snapshot **out)
{
    *out = NULL;
    if (!dir) return EK_ERR_ARG;
    ek_snapshot *ss = calloc(1, sizeof *ss);
    if (!ss) return EK_ERR_NOMEM;
    ctx c = {0};
    c.ss = ss;
    c.diag = diag;
    int rc = EK_OK;
    ss->dir = strdup(dir);
    char *sspath = ek_path_join(dir, "snapshot.ini");
    ek_ini *ini = NULL;
    if (!ss->dir || !sspath) {
        rc = EK_ERR_NOMEM;
        goto out;
    }
    rc = ek_ini_load(sspath, diag, &ini);
    if (rc) {
        if (rc != EK_ERR_NOMEM)
            DIAG(&c, EK_SEV_ERROR, "snapshot.missing-file", sspath, -1, -1,
                 "not a snapshot folder: snapshot.ini cannot be read (%s)", file_error(errno));
        goto out;
    }
    const ek_ini_section *snap = ek_ini_section_find(ini, "snapshot");
    ss->version = xstrdup(&c, ek_ini_get(snap, "version"));
    ss->description = xstrdup(&c, ek_ini_get(snap, "description"));
    if (ss->version && strcmp(ss->version, "1.0") != 0 && strcmp(ss->version, "1") != 0) {
        const ek_ini_kv *kv = ek_ini_find(snap, "version");
        DIAG(&c, EK_SEV_NOTE, "snapshot.bad-value", sspath, kv->line, kv->offset,
             "snapshot version '%s' is not 1.0; reading it as 1.0", ss->version);
    }
    const ek_ini_section *dl = ek_ini_section_find(ini, "device_list");
    if (!dl)
        DIAG(&c, EK_SEV_WARN, "snapshot.missing-key", sspath, -1, -1,
             "no [device_list] section: no devices");
    for (; dl && !c.oom; dl = ek_ini_next_section(ini, dl)) {
        for (size_t i = 0; i < dl->nkv && !c.oom; i++) {
            char *rel = unquote(&c, dl->kv[i].value);
            if (!rel) break;
            if (!*rel) {
                DIAG(&c, EK_SEV_WARN, "snapshot.bad-value", sspath, dl->kv[i].line,
                     dl->kv[i].offset, "[device_list] %s has no file name", dl->kv[i].key);
                free(rel);
                continue;
            }
            char *p = ek_path_join(dir, rel);
            free(rel);
            if (!p) {
                c.oom = 1;
                break;
            }
            load_device(&c, p, sspath, &dl->kv[i]);
            free(p);
        }
    }
    if (c.oom) {
        rc = EK_ERR_NOMEM;
        goto out;
    }

    const ek_ini_kv *md = ek_ini_find(ek_ini_section_find(ini, "trace"), "metadata");
    if (!md || !*md->value) {
        DIAG(&c, EK_SEV_ERROR, "snapshot.missing-key", sspath, -1, -1,
             "no [trace] metadata= naming the trace description (trace.ini)");
        rc = EK_ERR_FORMAT;
        goto out;
    }
    char *rel = unquote(&c, md->value);
    char *tpath = rel ? ek_path_join(dir, rel) : NULL;
    free(rel);
    if (!tpath) {
        rc = EK_ERR_NOMEM;
        goto out;
    }
    rc = load_trace(&c, tpath);
    free(tpath);
    ss->devices = c.devs.v; /* no more pushes from here on */
    ss->ndevices = c.devs.n;
    ss->buffers = c.bufs.v;
    ss->nbuffers = c.bufs.n;
    if (rc) goto out;
    if (ss->nbuffers) {
        ss->buffer_order = malloc(ss->nbuffers * sizeof *ss->buffer_order);
        if (!ss->buffer_order) {
            rc = EK_ERR_NOMEM;
            goto out;
        }
        for (size_t i = 0; i < ss->nbuffers; i++)
            ss->buffer_order[i] = i;
        qsort_r(ss->buffer_order, ss->nbuffers, sizeof *ss->buffer_order, cmp_secidx,
                c.buf_secidx.v);
    }
    for (size_t i = 0; i < ss->nsources; i++)
        build_config(&c, &ss->sources[i]);
    if (ss->nbuffers == 0) {
        DIAG(&c, EK_SEV_ERROR, "snapshot.missing-key", ss->trace_ini, -1, -1,
             "no usable trace buffer in the trace description");
        rc = EK_ERR_FORMAT;
    }

out:
    /* ss owns the device and buffer arrays from here on, also on failure (freed below). */
    ss->devices = c.devs.v;
    ss->ndevices = c.devs.n;
    ss->buffers = c.bufs.v;
    ss->nbuffers = c.bufs.n;
    ek_vec_free(&c.buf_secidx);
    ni_free(&c.devnames);
    drop_bad(&c, 0);
    ek_vec_free(&c.bad);
    ek_vec_free(&c.extra);
    ek_ini_free(ini);
    free(sspath);
    if (c.oom && !rc) rc = EK_ERR_NOMEM;
    if (rc) {
        ek_snapshot_free(ss);
        return rc;
    }
    *out = ss;
    return EK_OK;
}

const ek_snap_device *ek_snapshot_find_device(const ek_snapshot *ss, const char *name)
{
    if (!ss || !name) return NULL;
    for (size_t i = 0; i < ss->ndevices; i++)
        if (strcasecmp(ss->devices[i].name, name) == 0) return &ss->devices[i];
    return NULL;
}

long ek_snapshot_find_buffer(const ek_snapshot *ss, const char *name)
{
    if (!ss || !name) return -1;
    for (size_t i = 0; i < ss->nbuffers; i++)
        if (strcasecmp(ss->buffers[i].name, name) == 0) return (long)i;
    return -1;
}

int ek_snap_device_reg(const ek_snap_device *dev, const char *name, uint64_t *value)
{
    if (!dev || !name) return 0;
    for (size_t i = 0; i < dev->nregs; i++) {
        if (strcasecmp(dev->regs[i].name, name) == 0) {
            if (value) *value = dev->regs[i].value;
            return 1;
        }
    }
    return 0;
}

/* ---- a bare trace file ------------------------------------------------------------------ */

/* Device d for source s (registers copied, names upper-cased as a device file's). */
static int bare_device(ctx *c, const ek_bare_source *s, size_t nth, ek_snap_device *d)
{
    memset(d, 0, sizeof *d);
    d->devclass = xstrdup(c, "trace_source");
    d->type = xstrdup(c, s->type);
    d->protocol = protocol_of_type(s->type);
    if (s->name && *s->name) {
        d->name = xstrdup(c, s->name);
    } else {
        ek_sbuf nm = EK_SBUF_INIT;
        ek_sbuf_printf(&nm, "%.*s_%zu", (int)strcspn(s->type, "."), s->type, nth);
        d->name = nm.oom ? NULL : xstrdup(c, nm.p);
        if (nm.oom) c->oom = 1;
        ek_sbuf_free(&nm);
    }
    unsigned shift = 0;
    const char *idreg = id_reg_of(d->protocol, &shift);
    d->regs = calloc(s->nregs + 1, sizeof *d->regs);
    if (!d->regs) c->oom = 1;
    for (size_t i = 0; d->regs && i < s->nregs; i++) {
        ek_snap_reg r = {0};
        r.line = i + 1;
        if (!s->regs[i].name || !parse_reg_key(c, s->regs[i].name, &r)) {
            DIAG(c, EK_SEV_WARN, "snapshot.bad-value", NULL, -1, -1,
                 "register name '%s' is not NAME or NAME(offset|id:N|size:N)",
                 s->regs[i].name ? s->regs[i].name : "");
            continue;
        }
        r.value = s->regs[i].value;
        int dup = 0;
        for (size_t j = 0; j < d->nregs && !dup; j++)
            dup = strcmp(d->regs[j].name, r.name) == 0;
        if (dup) { /* a later value wins (options: the last one given) */
            for (size_t j = 0; j < d->nregs; j++)
                if (strcmp(d->regs[j].name, r.name) == 0) d->regs[j].value = r.value;
            free(r.name);
            continue;
        }
        d->regs[d->nregs++] = r;
    }
    if (d->regs && idreg && s->trace_id >= 0) {
        const uint64_t mask = (uint64_t)0x7f << shift, id = (uint64_t)s->trace_id << shift;
        size_t j = 0;
        while (j < d->nregs && strcmp(d->regs[j].name, idreg) != 0)
            j++;
        if (j == d->nregs) {
            ek_snap_reg r = {0};
            r.offset = r.id = -1;
            r.name = xstrdup(c, idreg);
            if (r.name) d->regs[d->nregs++] = r;
        }
        d->regs[j].value = (d->regs[j].value & ~mask) | id;
    }
    return c->oom || !d->name || !d->type || !d->devclass ? EK_ERR_NOMEM : 0;
}

int ek_snapshot_from_trace(const char *path, ek_buffer_format format, const ek_bare_source *srcs,
                           size_t n, const ek_diag *diag, ek_snapshot **out)
{
    *out = NULL;
    if (!path || !srcs || !n || format == EK_BUF_UNKNOWN) return EK_ERR_ARG;
    for (size_t i = 0; i < n; i++)
        if (!srcs[i].type || !*srcs[i].type || srcs[i].trace_id > 0x7f ||
            (srcs[i].nregs && !srcs[i].regs))
            return EK_ERR_ARG;
    ek_snapshot *ss = calloc(1, sizeof *ss);
    if (!ss) return EK_ERR_NOMEM;
    ctx c = {0};
    c.ss = ss;
    c.diag = diag;
    c.bare = 1;
    int rc = EK_OK;
    const char *slash = strrchr(path, '/');
    ss->dir = slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
    ss->trace_ini = xstrdup(&c, path);
    ss->version = xstrdup(&c, "1.0");
    ss->sources = calloc(n, sizeof *ss->sources);
    ss->buffer_order = calloc(1, sizeof *ss->buffer_order);
    if (!ss->dir || !ss->sources || !ss->buffer_order) c.oom = 1;

    ek_snap_buffer b = {0};
    b.format = format;
    b.name = xstrdup(&c, slash ? slash + 1 : path);
    b.path = xstrdup(&c, path);
    b.section = xstrdup(&c, "buffer0");
    if (ek_vec_push(&c.bufs, b)) {
        c.oom = 1;
        free(b.name);
        free(b.path);
        free(b.section);
    }
    for (size_t i = 0; i < n && !c.oom; i++) {
        ek_snap_device d;
        rc = bare_device(&c, &srcs[i], i, &d);
        if (rc || ek_vec_push(&c.devs, d)) {
            free_device(&d);
            c.oom = 1;
            break;
        }
        ek_snap_source *s = &ss->sources[ss->nsources++];
        s->device = c.devs.n - 1;
        s->buffer = 0;
        s->core = -1;
        if (!srcs[i].core_type) continue;
        ek_snap_device core = {0};
        ek_sbuf nm = EK_SBUF_INIT;
        ek_sbuf_printf(&nm, "cpu_%zu", i);
        core.name = nm.oom ? NULL : xstrdup(&c, nm.p);
        ek_sbuf_free(&nm);
        core.devclass = xstrdup(&c, "core");
        core.type = xstrdup(&c, srcs[i].core_type);
        if (!ek_core_arch(core.type ? core.type : "", &core.arch, &core.profile))
            DIAG(&c, EK_SEV_WARN, "snapshot.unknown-core", NULL, -1, -1,
                 "core type '%s' names no known architecture; its instructions cannot be "
                 "classified",
                 srcs[i].core_type);
        if (c.oom || !core.name || !core.devclass || !core.type || ek_vec_push(&c.devs, core)) {
            free_device(&core);
            c.oom = 1;
            break;
        }
        s->core = (long)c.devs.n - 1;
    }
    ss->devices = c.devs.v;
    ss->ndevices = c.devs.n;
    ss->buffers = c.bufs.v;
    ss->nbuffers = c.bufs.n;
    if (c.oom) {
        ek_snapshot_free(ss);
        return EK_ERR_NOMEM;
    }
    int err = 0;
    ss->buffers[0].present = probe_file(path, &ss->buffers[0].file_size, &err);
    if (!ss->buffers[0].present) {
        DIAG(&c, EK_SEV_ERROR, "snapshot.missing-file", path, -1, -1,
             "trace file cannot be read (%s)", file_error(err));
        ek_snapshot_free(ss);
        return EK_ERR_NOT_FOUND;
    }
    for (size_t i = 0; i < ss->nsources; i++)
        build_config(&c, &ss->sources[i]);
    if (c.oom) {
        ek_snapshot_free(ss);
        return EK_ERR_NOMEM;
    }
    *out = ss;
    return rc;
}
