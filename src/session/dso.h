/* DSOs of a recording: the files behind its maps, their code bytes and their symbols.
 *
 * A DSO is found (symfs, build-id cache), checked (build-id) and mapped before decoding
 * starts; after that its code bytes are read-only and shared by every decoder thread.
 * Symbol tables are loaded on first use under a per-DSO lock.
 */
#ifndef ETMKIT_SESSION_DSO_H
#define ETMKIT_SESSION_DSO_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "core/vec.h"
#include "etmkit/diag.h"
#include "etmkit/symbols.h"

typedef enum dso_kind {
    DSO_USER = 0,  /* a file mapped by a process */
    DSO_KERNEL,    /* [kernel.kallsyms] */
    DSO_KMODULE,   /* a kernel module (*.ko or [name]) */
    DSO_VDSO,      /* [vdso] */
    DSO_ANON,      /* //anon, [heap], [stack], memfd, JIT... : no file */
    DSO_JIT,      /* code a JIT wrote, from its jitdump (dso_jit) */
} dso_kind;

typedef enum dso_status {
    DSO_NOT_TRIED = 0,
    DSO_OK,
    DSO_NOT_FOUND,        /* no candidate file exists */
    DSO_BUILD_ID_MISMATCH,/* a file exists but its build-id differs from the recorded one */
    DSO_BAD_FILE,         /* not a readable ELF file */
    DSO_NO_FILE,          /* nothing to look for (anonymous memory) */
} dso_status;

/* One run of code bytes: [off, off + size) of the DSO's address range (from the map start for
 * user DSOs and modules; absolute for the kernel) backed by data. */
typedef struct dso_span {
    uint64_t off, size;
    const uint8_t *data;
} dso_span;

struct as_dso {
    char *name;           /* as recorded (MMAP file name / kernel map name) */
    char *print_name;     /* the name perf prints */
    uint32_t print_len;
    dso_kind kind;
    uint8_t build_id[20];
    uint8_t build_id_len; /* 0: none recorded */
    /* files */
    dso_status status;
    char *path;           /* file the code comes from */
    char *tried;          /* first candidate path, for messages */
    uint8_t found_id[20]; /* BUILD_ID_MISMATCH: the file's build-id */
    uint8_t found_id_len;
    const uint8_t *bytes; /* mapped file */
    size_t size;
    int et_rel;           /* relocatable (kernel module): spans are its loaded layout */
    uint64_t *sec_off;    /* ET_REL: load offset of each section (UINT64_MAX: not loaded) */
    size_t nsec_off;
    struct dso_reg *reg;
    uint8_t *reloc_copy;  /* ET_REL: code sections with branch relocations applied */
    uint64_t reloc_base;  /* the load address they were applied for */
    uint64_t relocs, relocs_unresolved; /* branch relocations applied / left unresolved */
    EK_VEC(dso_span) spans; /* ET_REL modules and the kernel: code runs */
    /* symbols */
    pthread_mutex_t lock;
    int syms_state;       /* 0 not loaded, 1 loaded (may be NULL), -1 failed */
    ek_symtab *syms;
    int syms_key;         /* how to key a lookup: DSO_KEY_* (set as the symbols load) */
    _Atomic int key_plus1; /* syms_key + 1 once the symbols are loaded, 0 before: read
                            * without the lock (dso_key_kind) */
    /* report */
    _Atomic uint64_t nacc; /* code reads that failed (decoder threads count them) */
    _Atomic int used;     /* some map of it was looked up while decoding (any thread) */
};
typedef struct as_dso as_dso;

typedef struct dso_reg dso_reg;

/* How addresses of d become symbol-table keys (DSO_KEY_*): loads the symbols first when they
 * are not yet (the key depends on what was loaded), so that every thread keys its first
 * lookup right; lock-free once known. */
int dso_key_kind(struct as_dso *d);

/* How addresses become symbol-table keys. */
enum {
    DSO_KEY_FILEOFF = 0, /* map->pgoff + (addr - map->start): perf's user-space rule */
    DSO_KEY_ABS,         /* the address itself (kernel: vmlinux, kallsyms) */
    DSO_KEY_MAPOFF,      /* addr - map->start (modules laid out like the kernel's loader) */
};

typedef struct dso_opts {
    const char *symfs;     /* "" or NULL: / */
    const char *buildid_dir; /* NULL: $HOME/.debug */
    const char *vmlinux;   /* -k: vmlinux or kcore ELF */
    const char *kallsyms;  /* --kallsyms */
    const char *kcore_dir; /* perf record --kcore folder (kcore, kallsyms, modules) */
    const char *osrelease; /* the traced kernel's release (vmlinux search paths) */
} dso_opts;

dso_reg *dso_reg_new(const dso_opts *o, const ek_diag *diag);
void dso_reg_free(dso_reg *r);

/* The DSO for a recorded name (created on first use). kernel: from a kernel (pid -1) record. */
as_dso *dso_get(dso_reg *r, const char *name, int kernel);
/* A JIT's function from its jitdump: named `name` (what `perf inject --jit` calls its
 * jitted-PID-N.so), code bytes [code, code + size) (kept by the caller), one symbol `sym` over
 * them. The same name gives the same DSO. */
as_dso *dso_jit(dso_reg *r, const char *name, const char *sym, const uint8_t *code, uint64_t size);
/* A recorded build-id for a name (HEADER_BUILD_ID feature, MMAP2 with build id). */
void dso_set_build_id(dso_reg *r, const char *name, int kernel, const uint8_t *id, size_t len);
/* Find and map the files of every DSO that a map uses (single-threaded, before decoding). */
void dso_reg_load_all(dso_reg *r);
/* Apply the branch relocations of module d for its load address (once, before decoding).
 * External symbols come from kallsyms or vmlinux when given; calls to unknown ones become
 * indirect branches, so that the decoder waits for the trace's next address. */
void dso_relocate_module(as_dso *d, uint64_t base);

size_t dso_reg_count(const dso_reg *r);
as_dso *dso_reg_at(const dso_reg *r, size_t i);

/* The kernel's code: spans with absolute addresses (vmlinux / kcore), or none. */
const as_dso *dso_reg_kernel(const dso_reg *r);

/* Code bytes of d at offset off (see dso_span): 1 and the run holding it, else 0. */
int dso_code(const as_dso *d, uint64_t off, dso_span *out);

/* Symbol at addr in map [map_start, ..) with file offset map_pgoff; thread-safe. Returns the
 * name or NULL, *symoff set. */
const char *dso_symbol(as_dso *d, uint64_t addr, uint64_t map_start, uint64_t map_pgoff,
                       uint64_t *symoff);

/* The symbol for key (in the DSO's key space, see DSO_KEY_*) and a run [*lo, *hi) of keys
 * around it that give the same answer, NULL included (for caching; empty when not known);
 * NULL when none. Thread-safe. */
const char *dso_symbol_range(as_dso *d, uint64_t key, uint64_t *start, uint64_t *lo,
                             uint64_t *hi);

/* "kernel.kallsyms" etc. */
const char *dso_status_text(dso_status s);

#endif
