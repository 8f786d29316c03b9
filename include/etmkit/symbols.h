/* ELF facts and symbol tables that resolve addresses the way Linux perf 6.1 does.
 *
 * How perf 6.1 turns an address into "sym+off" (tools/perf/util/symbol.c, symbol-elf.c),
 * and what this table reproduces:
 *  - A symbol is [start, end) with end = start + st_size; a zero-size symbol has end == start
 *    and, unless fixed up, matches only its start address.
 *  - Symbols go into a red-black tree keyed by start (equal starts to the right) in the
 *    order they are read. After each batch (ELF .symtab, then .dynsym; or all of kallsyms)
 *    perf runs, in this order:
 *      fixup_end: walking by start, every zero-size symbol gets end = next symbol's start;
 *        for kallsyms, if exactly one of the two names is a module symbol ('[' in the name),
 *        end = roundup(start + 4096, 4096) instead; the last zero-size symbol gets
 *        end = roundup(start, 4096) + 4096.
 *      fixup_duplicate: of symbols with the same start, keep the best: non-zero size, then
 *        not weak, then global, then fewer leading '_', then the longer name; on a tie the
 *        one that came first (unless its name starts with "SyS" or "compat_SyS").
 *  - Lookup walks the tree from the root: left if addr < start, right if addr > end or
 *    (addr == end and end != start), else that symbol. Where symbols overlap, the answer
 *    therefore depends on the tree's shape: this table builds the same tree with the same
 *    insertions and deletions (a red-black tree behaves deterministically), then flattens
 *    the answers into sorted runs for O(log n) lookups with a last-hit cache.
 *  - perf prints the symbol as name + "+0x%lx" of (addr - start), or "[unknown]".
 * ELF symbols perf keeps (user-space DSO, ET_EXEC/ET_DYN): STT_FUNC/STT_GNU_IFUNC/STT_OBJECT
 * with a name and a section, plus STT_NOTYPE labels (not hidden/internal, not ABS) in a
 * section whose name contains "text" or "data"; never ARM/AArch64 mapping symbols
 * ($a/$d/$t/$x[.*]), SHN_ABS symbols or symbols in sections without SHF_ALLOC. Both .symtab
 * and .dynsym are read (two batches). If that produced any symbol, "<name>@plt" symbols are
 * synthesised for .rela.plt/.rel.plt entries (AArch64: 32-byte header, 16-byte entries;
 * Arm: 20/12) without a further fixup. perf keys user-space symbols by FILE OFFSET:
 * st_value - (p_vaddr - p_offset) of the PT_LOAD holding it (else of its section), and
 * looks up map->pgoff + (ip - map->start). EK_SYMS_VADDR keeps st_value instead.
 * Not reproduced: C++/Rust/Java demangling (perf demangles by default; names here are as
 * stored in the file), ppc64 .opd descriptors.
 */
#ifndef ETMKIT_SYMBOLS_H
#define ETMKIT_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/diag.h"
#include "etmkit/sbuf.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

/* ---- ELF facts ------------------------------------------------------------------------ */

typedef struct ek_elf_segment {
    uint64_t vaddr, memsz, offset, filesz;
    uint32_t flags; /* PF_R/W/X */
} ek_elf_segment;

typedef struct ek_elf_section {
    const char *name;
    uint64_t addr, offset, size, flags; /* sh_addr, sh_offset, sh_size, sh_flags */
    uint32_t type;                      /* sh_type */
} ek_elf_section;

typedef struct ek_elf_info {
    char *path;
    uint8_t build_id[64]; /* NT_GNU_BUILD_ID descriptor (usually 20 bytes) */
    size_t build_id_len;  /* 0: none */
    int elf_class;        /* 32 or 64 */
    int big_endian;
    uint16_t machine; /* EM_AARCH64, EM_ARM, ... */
    uint16_t type;    /* ET_EXEC, ET_DYN, ET_REL, ... */
    uint64_t entry;
    int has_text; /* .text bounds below are valid */
    uint64_t text_addr, text_offset, text_size;
    int has_symtab, has_dynsym;
    ek_elf_segment *segs; /* PT_LOAD only, in file order */
    size_t nsegs;
    ek_elf_section *secs; /* all sections, index = ELF section index */
    size_t nsecs;
} ek_elf_info;

/* Read the facts of an ELF file. Returns 0, EK_ERR_IO, EK_ERR_FORMAT (diag "elf.bad-file"). */
int ek_elf_info_read(const char *path, const ek_diag *diag, ek_elf_info **out);
void ek_elf_info_free(ek_elf_info *info);
/* Build-id as lower-case hex into buf (2 * len + 1 bytes); returns the length written. */
size_t ek_build_id_hex(const uint8_t *id, size_t len, char *buf, size_t bufsize);

/* ---- symbol tables -------------------------------------------------------------------- */

typedef struct ek_symbol {
    uint64_t start;     /* in the table's address space (see the loaders) */
    uint64_t end;       /* exclusive; == start: zero size, matches only 'start' */
    uint64_t value;     /* st_value as in the file / the kallsyms address */
    uint64_t size;      /* st_size (0 for kallsyms) */
    const char *name;   /* kallsyms: without the "\t[module]" tail */
    const char *module; /* kallsyms: module name without brackets, or NULL */
    uint8_t binding;    /* STB_LOCAL / STB_GLOBAL / STB_WEAK */
    uint8_t type;       /* STT_*; kallsyms t/T/w/W -> STT_FUNC, others STT_OBJECT */
    char ktype;         /* kallsyms type letter, or 0 */
    uint8_t origin;     /* EK_SYMORIGIN_* */
    uint32_t shndx;     /* ELF section index, 0 when none */
} ek_symbol;

enum {
    EK_SYMORIGIN_SYMTAB = 0,
    EK_SYMORIGIN_DYNSYM,
    EK_SYMORIGIN_PLT,
    EK_SYMORIGIN_KALLSYMS,
    EK_SYMORIGIN_USER
};

typedef struct ek_symtab ek_symtab;

int ek_symtab_new(ek_symtab **out);
void ek_symtab_free(ek_symtab *t);
/* perf's symbol__new + insert: [start, start + size), size 0 allowed. 'name' is copied.
 * Returns 0 or EK_ERR_NOMEM. */
int ek_symtab_insert(ek_symtab *t, uint64_t start, uint64_t size, int binding, int type,
                     const char *name);
/* End of a batch: fixup_end (is_kallsyms selects the module rule), then fixup_duplicate. */
void ek_symtab_fixup(ek_symtab *t, int is_kallsyms);

/* The symbol perf's lookup returns for addr, or NULL. Not thread-safe (last-hit cache). */
const ek_symbol *ek_symtab_find(ek_symtab *t, uint64_t addr);
/* Symbols in start order (ties in insertion order). */
size_t ek_symtab_count(ek_symtab *t);
const ek_symbol *ek_symtab_get(ek_symtab *t, size_t i);
/* Pointers returned by find/get stay valid until the next insert or fixup. */
/* Append perf's text for addr: "name+0xOFF" (with_offset) or "name", "[unknown]" if none. */
void ek_symtab_format(ek_sbuf *out, const ek_symbol *sym, uint64_t addr, int with_offset);

/* Loader flags. */
#define EK_SYMS_VADDR  0x1u /* key symbols by st_value, not perf's file offset */
#define EK_SYMS_NO_PLT 0x2u /* do not synthesise name@plt symbols */

/* Symbols of a user-space ELF file (executable or shared object) as perf loads them.
 * For ET_REL files (kernel modules) this is the module's main table: the symbols in
 * ".text" with st_value + sh_offset (perf's kernel-module adjustment; EK_SYMS_VADDR keeps
 * st_value), fixed up as above; symbols of other sections go to per-section tables that
 * ek_symtab_load_kmodule_sections() returns. Returns 0 (a stripped file gives an empty
 * table), EK_ERR_IO or EK_ERR_FORMAT. */
int ek_symtab_load_elf(const char *path, unsigned flags, const ek_diag *diag, ek_symtab **out);

/* perf's per-section maps of a kernel module ("[mod]<section>" for every section other
 * than .text that has symbols perf keeps). Each table holds that section's symbols keyed by
 * st_value + sh_offset, without fixups (perf never fixes them up), in perf's insertion
 * order. */
typedef struct ek_kmod_section {
    const char *name; /* e.g. ".note.Linux" */
    uint64_t sh_addr, sh_offset, sh_size;
    ek_symtab *syms;
} ek_kmod_section;
int ek_symtab_load_kmodule_sections(const char *path, const ek_diag *diag, ek_kmod_section **out,
                                    size_t *n);
void ek_kmod_sections_free(ek_kmod_section *s, size_t n);

/* /proc/kallsyms text ("addr type name[\t[module]]"): types t/T/w/W/d/D/b/B are kept (as
 * perf does; '$' names are dropped), fixed up with the kallsyms rule. Malformed lines give
 * "kallsyms.malformed-line" warnings and are skipped. */
int ek_symtab_parse_kallsyms(const char *text, size_t len, const char *fname, const ek_diag *diag,
                             ek_symtab **out);
int ek_symtab_load_kallsyms(const char *path, const ek_diag *diag, ek_symtab **out);

/* ---- finding files as perf does ------------------------------------------------------ */

/* Candidate paths for the file a recording names 'path' (a DSO long name) with build-id
 * 'build_id_hex' (NULL if unknown), in the order perf 6.1's dso__load tries them for
 * SYMBOLS (binary_type_symtab, filtered by dso__is_compatible_symtab_type):
 *   user-space DSO:
 *     1. DEBUGLINK: if <symfs>/<path> has a .gnu_debuglink NAME: NAME, <dir>/NAME,
 *        <dir>/.debug/NAME, /usr/lib/debug<dir>/NAME (dir = that of <symfs>/<path>)
 *     2. BUILD_ID_CACHE: <debugdir>/.build-id/<xx>/<rest> if it is a file (old layout),
 *        else that directory + "/elf" ("/kallsyms" for [kernel.kallsyms], "/vdso" for [vdso])
 *     3. BUILD_ID_CACHE_DEBUGINFO: the same with "/debug"
 *     4. FEDORA: <symfs>/usr/lib/debug<path>.debug
 *     5. UBUNTU: <symfs>/usr/lib/debug<path>
 *     6. BUILDID_DEBUGINFO: <symfs>/usr/lib/debug/.build-id/<xx>/<rest>.debug
 *     7. SYSTEM_PATH_DSO: <symfs><path>
 *     8. OPENEMBEDDED: <symfs><dir>/.debug/<base>
 *     9. MIXEDUP_UBUNTU: <symfs>/usr/lib/debug<path without "/usr"> (path under /usr/lib/)
 *   kernel module (*.ko[.gz|.xz], "[name]"): 2, 3, then <symfs><path>.
 * <xx>/<rest> are the first two and the remaining hex digits of the build-id. "<symfs>X" is
 * perf's path__join: symfs + "/" + X when symfs is not empty (so "/s//usr/..."; symfs "/" is
 * empty). debugdir is perf's buildid_dir, $HOME/.debug when NULL. Entries that need a
 * build-id are left out without one; a path perf would try twice is listed once. perf takes
 * the first that exists and is a valid ELF file with a .symtab, falling back to one that
 * only has run-time symbols (ek_buildid_find returns the first existing regular file).
 * Returns the number of candidates (*out: malloc'ed strings, ek_path_list_free). */
int ek_buildid_candidates(const char *path, const char *build_id_hex, const char *symfs,
                          const char *debugdir, char ***out, size_t *n);
/* The order perf reads CODE BYTES in (dso__data_get_fd, used by cs-etm): BUILD_ID_CACHE (2),
 * then SYSTEM_PATH (<symfs><path>). */
int ek_buildid_data_candidates(const char *path, const char *build_id_hex, const char *symfs,
                               const char *debugdir, char ***out, size_t *n);
void ek_path_list_free(char **list, size_t n);
/* The first symbol candidate that exists as a regular file, or NULL (malloc'ed). */
char *ek_buildid_find(const char *path, const char *build_id_hex, const char *symfs,
                      const char *debugdir);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
