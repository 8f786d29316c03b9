/* Execution profiles for profile-guided optimisation: range and branch counts per binary.
 *
 * An ek_profile aggregates, for each binary (identified by build-id and path):
 *  - range counts:   [begin, end] executed N times (begin and end are the first and the last
 *                    instruction of a straight-line run, both inclusive);
 *  - address counts: an instruction address sampled N times (AutoFDO's third table; trace
 *                    decoding does not make them, but AutoFDO text may carry them);
 *  - branch counts:  a taken branch from -> to, N times.
 * Addresses are the binary's own: the ELF virtual address an instruction has in the file
 * (p_vaddr of its PT_LOAD + its offset in that segment), whatever address it was loaded at.
 * A branch end outside the binary is EK_PROFILE_EXTERNAL. Each binary also records
 * load_base, the p_vaddr of its first PT_LOAD (AutoFDO text addresses are relative to it).
 *
 * Counts add with saturation at UINT64_MAX (as simpleperf does), so merging is associative
 * and commutative, and every writer sorts: the bytes written depend only on the counts, never
 * on the order in which they were added or merged. Formats (docs/PROFILES.md):
 *  - autofdo:     simpleperf's AutoFDO text (`simpleperf inject --output autofdo`), read by
 *                 AutoFDO's create_llvm_prof; written and read.
 *  - branch-list: etmkit's own mergeable text form of all counts; written and read.
 *  - bolt:        llvm-bolt's fdata (what perf2bolt writes), one binary; written only, with a
 *                 map of BOLT's function names (ek_bolt_map).
 * The library never prints: writers append to an ek_sbuf, readers take text in memory and
 * report damage through an ek_diag (file, line, byte offset). Errors are negative ek_status.
 */
#ifndef ETMKIT_PROFILE_H
#define ETMKIT_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/diag.h"
#include "etmkit/etmkit.h"
#include "etmkit/perf.h"
#include "etmkit/sbuf.h"
#include "etmkit/synth.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

/* A branch end (from or to) outside the binary the branch is counted for. */
#define EK_PROFILE_EXTERNAL UINT64_MAX
/* Longest build-id kept (bytes), longest path (bytes, without the NUL). */
#define EK_PROFILE_BUILD_ID_MAX 64
#define EK_PROFILE_PATH_MAX     4096

/* Identity and facts of one binary. Build-ids shorter than 20 bytes are zero-padded to 20 (as
 * simpleperf keeps them), and an all-zero build-id is none: two ids that differ only so name
 * the same binary. */
typedef struct ek_profile_binary {
    const char *path;        /* as the recording names it; "" when unknown (never NULL in output) */
    const uint8_t *build_id; /* build_id_len bytes */
    size_t build_id_len;     /* 0: none */
    uint64_t load_base;      /* p_vaddr of the first PT_LOAD in the ELF file (0 if unknown) */
} ek_profile_binary;

/* A build-id as profiles keep it (above): the first EK_PROFILE_BUILD_ID_MAX bytes of id, zero-
 * padded to 20; out gets them, the return value their length (0: none, id is all zeros). */
size_t ek_profile_build_id_canon(const uint8_t *id, size_t len,
                                 uint8_t out[EK_PROFILE_BUILD_ID_MAX]);

typedef struct ek_profile ek_profile;

int ek_profile_new(ek_profile **out);
void ek_profile_free(ek_profile *p);

/* The binary with this identity (build-id and path), added when new; *bin gets its handle
 * (0, 1, ... in order of addition). Returns 0, EK_ERR_ARG (path or build-id too long),
 * EK_ERR_FORMAT (known with another load_base) or EK_ERR_NOMEM. */
int ek_profile_add_binary(ek_profile *p, const ek_profile_binary *id, size_t *bin);
size_t ek_profile_binary_count(const ek_profile *p);
/* Facts of binary `bin`; the pointers stay valid until p is freed. EK_ERR_ARG if no such. */
int ek_profile_binary_get(const ek_profile *p, size_t bin, ek_profile_binary *out);

/* Add count (0 adds nothing) to a range [begin, end], an address, or a branch from -> to of
 * binary `bin`. Returns 0, EK_ERR_ARG (no such binary, or a range/address at
 * EK_PROFILE_EXTERNAL, or a branch with both ends external) or EK_ERR_NOMEM. */
int ek_profile_add_range(ek_profile *p, size_t bin, uint64_t begin, uint64_t end, uint64_t count);
int ek_profile_add_address(ek_profile *p, size_t bin, uint64_t addr, uint64_t count);
int ek_profile_add_branch(ek_profile *p, size_t bin, uint64_t from, uint64_t to, uint64_t count);

/* dst += src, binary by binary (by identity). A binary both hold with different load_base is an
 * error (EK_ERR_FORMAT, diag "profile.load-base-differs"): its addresses could not be
 * compared; dst is then unchanged. */
int ek_profile_merge(ek_profile *dst, const ek_profile *src, const ek_diag *diag);
/* dst += binary `bin` of src alone (the others are left out): one binary's profile out of many.
 * Returns 0, EK_ERR_ARG (no such binary), EK_ERR_FORMAT (dst holds it with another load_base)
 * or EK_ERR_NOMEM. */
int ek_profile_merge_binary(ek_profile *dst, const ek_profile *src, size_t bin);

/* ---- reading the counts back ------------------------------------------------------------ */

typedef enum ek_profile_kind {
    EK_PROFILE_RANGES = 0,    /* a = begin, b = end */
    EK_PROFILE_ADDRESSES = 1, /* a = address, b = 0 */
    EK_PROFILE_BRANCHES = 2,  /* a = from, b = to */
} ek_profile_kind;

typedef struct ek_profile_count {
    uint64_t a, b;
    uint64_t count;
} ek_profile_count;

/* The counts of one kind of binary `bin`, sorted by (a, b); *out is malloc'ed (free()), NULL
 * when *n is 0. Returns 0, EK_ERR_ARG or EK_ERR_NOMEM. */
int ek_profile_counts(const ek_profile *p, size_t bin, ek_profile_kind kind, ek_profile_count **out,
                      size_t *n);
/* Handles of all binaries in output order: by path (bytes), then build-id (bytes, then length).
 * *out is malloc'ed (free()), NULL when there are none. Returns 0 or EK_ERR_NOMEM. */
int ek_profile_binary_order(const ek_profile *p, size_t **out, size_t *n);

/* ---- formats ---------------------------------------------------------------------------- */

typedef enum ek_profile_format {
    EK_PROFILE_FMT_UNKNOWN = 0,
    EK_PROFILE_FMT_AUTOFDO = 1,
    EK_PROFILE_FMT_BRANCH_LIST = 2,
    EK_PROFILE_FMT_BOLT = 3,
} ek_profile_format;

/* "autofdo", "branch-list", "bolt" (and back; UNKNOWN for any other name). */
const char *ek_profile_format_name(ek_profile_format f);
ek_profile_format ek_profile_format_from_name(const char *name);
/* What a file holds, from its first bytes: BRANCH_LIST for the branch-list header, AUTOFDO
 * for text that starts as AutoFDO text does (a digit or "//"), empty text included. */
ek_profile_format ek_profile_detect(const char *text, size_t len);

/* simpleperf's AutoFDO text, binaries by path (a first line says to split the file when there
 * are several: AutoFDO reads one), each: range count and "begin-end:count" lines, address
 * count and "addr:count" lines, branch count and "from->to:count" lines, all in hex relative
 * to load_base and sorted, then "// build_id: 0x<40 hex digits>", "// <path>" and a blank line.
 * As simpleperf: ranges and addresses below load_base are left out, branches from below it too,
 * and a branch target below it (or external) is written as 0. Returns 0 or EK_ERR_NOMEM. */
int ek_profile_write_autofdo(const ek_profile *p, ek_sbuf *out);

/* etmkit's branch list (text; docs/PROFILES.md): every count of every binary, exactly.
 * Returns 0 or EK_ERR_NOMEM. */
int ek_profile_write_branch_list(const ek_profile *p, ek_sbuf *out);

/* load_base of a binary read from AutoFDO text (which only holds addresses relative to it):
 * set *load_base and return 0, or return non-zero to take 0. */
typedef int (*ek_profile_base_fn)(void *ctx, const ek_profile_binary *id, uint64_t *load_base);

typedef struct ek_profile_read_opts {
    size_t size;                /* sizeof(ek_profile_read_opts) */
    ek_profile_base_fn base_fn; /* autofdo: where load_base comes from; NULL: 0 */
    void *base_ctx;
} ek_profile_read_opts;

/* Read a profile (fmt UNKNOWN: ek_profile_detect) and merge it into p. The whole text is
 * checked first: on any damage nothing is merged, one diag event (kind "profile.malformed",
 * record = line number from 1, offset = byte offset of the line) says where and what, and
 * EK_ERR_FORMAT is returned. AutoFDO text: "0" as a branch target reads as
 * EK_PROFILE_EXTERNAL (what simpleperf writes for one). opts may be NULL. Returns 0,
 * EK_ERR_FORMAT, EK_ERR_UNSUPPORTED (bolt: not readable) or EK_ERR_NOMEM. */
int ek_profile_read(ek_profile *p, const char *text, size_t len, ek_profile_format fmt,
                    const ek_profile_read_opts *opts, const char *fname, const ek_diag *diag);

/* ---- BOLT ------------------------------------------------------------------------------- */

/* BOLT's view of one binary: its functions under the names llvm-bolt gives them, and the
 * starts of their basic blocks. Names: a global or weak symbol keeps its name; a local one
 * is "name/N", N counting the local symbols of that name (functions or not) in address order
 * from 1, as BOLT's discoverFileObjects uniquifies them (fdata must use these names: BOLT
 * ignores a profile for "name" when it calls the function "name/1"). */
typedef struct ek_bolt_map ek_bolt_map;

/* ek_bolt_map_add_symbol flags */
#define EK_BOLT_SYM_FUNCTION 0x1u /* a function (STT_FUNC): addresses in it resolve to it */
#define EK_BOLT_SYM_LOCAL    0x2u /* a local symbol (STB_LOCAL): named "name/N" */

int ek_bolt_map_new(ek_bolt_map **out);
void ek_bolt_map_free(ek_bolt_map *m);
/* A symbol BOLT registers (any symbol of an allocated section with a name and a non-zero
 * address, but section, file and mapping symbols). size 0 for a function: it ends where the
 * next function starts. Returns 0, EK_ERR_ARG or EK_ERR_NOMEM. */
int ek_bolt_map_add_symbol(ek_bolt_map *m, uint64_t addr, uint64_t size, const char *name,
                           unsigned flags);
/* A basic-block start other than a function entry. BOLT (buildCFG) starts a block at each
 * branch target and after each branch that is not a call, but an unconditional direct branch
 * right after a conditional one stays in the conditional branch's block. */
int ek_bolt_map_add_block(ek_bolt_map *m, uint64_t addr);
/* A conditional branch at addr: the executions of ranges ending there that did not take a
 * branch fall through to addr + 4 (when that starts a block). */
int ek_bolt_map_add_conditional(ek_bolt_map *m, uint64_t addr);
/* The function holding addr gets no fall-through lines: llvm-bolt cannot build its control
 * flow graph (llvm-bolt 16 fails on every AArch64 jump table: "failed to post-process
 * indirect branches"), and perf2bolt then writes its taken branches only. */
int ek_bolt_map_add_no_fallthrough(ek_bolt_map *m, uint64_t addr);
/* The map of an ELF file, with the functions llvm-bolt 16 makes: symbols from .symtab only
 * (llvm-bolt 16 does not read .dynsym), then for AArch64 the .plt entries ("<sym>@PLT" from
 * the dynamic relocation of each entry's GOT slot, "__BOLT_PSEUDO_.plt" for the header),
 * then each .eh_frame FDE no function starts at or covers ("__BOLT_FDE_FUNCat<hex>", its PC
 * range; FDEs in a pointer encoding not read here are left out); and, for AArch64 code,
 * block starts, conditional branches and functions with indirect jumps from decoding each
 * symbol's or FDE's function (skipping $d data). Returns 0,
 * EK_ERR_IO or EK_ERR_FORMAT (diag "elf.bad-file"), EK_ERR_NOMEM. */
int ek_bolt_map_load_elf(const char *path, const ek_diag *diag, ek_bolt_map **out);
/* The function holding addr: its BOLT name and addr's offset in it. Returns 0 or
 * EK_ERR_NOT_FOUND. Names stay valid until the map is changed or freed. */
int ek_bolt_map_lookup(ek_bolt_map *m, uint64_t addr, const char **name, uint64_t *offset);

/* The binaries of p that are the ELF file elf_path with build-id elf_id (as its note holds
 * it, ek_elf_info), in output order (ek_profile_binary_order), whatever the order they were
 * added in: with a build-id, every binary with that build-id (one file under several paths: a
 * link, a copy; with EK_PROFILE_USER_ONLY, not a kernel binary: "[kernel.kallsyms]", any name
 * in brackets); without one, the one binary without a build-id whose path has elf_path's file
 * name. *bins is malloc'ed (free()). Returns 0 (*n >= 1), EK_ERR_NOT_FOUND (none, or several
 * without a build-id: *bins NULL, *n 0), EK_ERR_ARG or EK_ERR_NOMEM. */
#define EK_PROFILE_USER_ONLY 1u
int ek_profile_binaries_for_elf(const ek_profile *p, const uint8_t *elf_id, size_t elf_id_len,
                                const char *elf_path, unsigned flags, size_t **bins, size_t *n);

/* Binaries bins[0..n) of p as one binary of a new profile *out (free with ek_profile_free): the
 * identity of bins[0], every count of each added up (ek_profile_add_*: saturating). *bin is its
 * handle in *out. Returns 0, EK_ERR_ARG (n 0, or no such binary) or EK_ERR_NOMEM. */
int ek_profile_sum_binaries(const ek_profile *p, const size_t *bins, size_t n, ek_profile **out,
                            size_t *bin);

/* BOLT's fdata for binary `bin`, as perf2bolt writes it from branch stacks: one line
 * "1 FROMFUNC OFF 1 TOFUNC OFF 0 COUNT" per taken branch and per fall-through between basic
 * blocks inside a range (hex offsets; "0 [unknown] 0" for an end outside every function,
 * external or not, as perf2bolt writes from perf.data; 0 mispredictions: trace does not see
 * them). Lines are sorted (by
 * from function, from offset, to function, to offset). Fall-throughs: a range [b, e] counts
 * once for every block start s with b < s <= e (from s - 4 to s: A64), and the executions of
 * ranges ending at a conditional branch e that did not take a branch there count for
 * e -> e + 4 when e + 4 starts a block. Ranges may end at every branch (as ETM sees them) or
 * at taken branches only (as branch stacks do): both give perf2bolt's fall-throughs.
 * Returns 0, EK_ERR_ARG (no such binary) or EK_ERR_NOMEM. */
int ek_profile_write_bolt(const ek_profile *p, size_t bin, ek_bolt_map *m, ek_sbuf *out);

/* BOLT's fdata for the ELF file elf_path with build-id elf_id (as its note holds it), from
 * every binary of p that is that file (ek_profile_binaries_for_elf), their counts added up.
 * *nbins (may be NULL) says how many binaries were added up. Returns 0, EK_ERR_NOT_FOUND (no
 * binary is that file: nothing written), EK_ERR_ARG or EK_ERR_NOMEM. */
int ek_profile_write_bolt_for_elf(const ek_profile *p, const uint8_t *elf_id, size_t elf_id_len,
                                  const char *elf_path, unsigned flags, ek_bolt_map *m,
                                  ek_sbuf *out, size_t *nbins);

/* ---- coverage (lcov) ------------------------------------------------------------------ */

/* What ek_profile_write_lcov wrote (sums over its records). */
typedef struct ek_lcov_stats {
    uint64_t files;                    /* SF records */
    uint64_t lines, lines_hit;         /* DA lines, those with a count */
    uint64_t functions, functions_hit; /* FN lines, those with a count */
    uint64_t branches, branches_hit;   /* BRDA lines (two per conditional branch), taken ones */
    int has_lines;                     /* the ELF file has DWARF line tables */
} ek_lcov_stats;

/* Coverage of binary `bin` as lcov tracefile records (geninfo's format, for genhtml), appended
 * to out: one record (TN:, SF:, FN/FNDA/FNF/FNH, BRDA/BRF/BRH, DA/LF/LH, end_of_record) per
 * source file of its DWARF line tables (libdw), files sorted by path. An instruction executed
 * as often as the ranges holding it were; a line (DA) counts its most executed instruction; a
 * function (FN, FNDA, from the ELF symbols: .symtab, else .dynsym) the executions of its entry;
 * each direct conditional branch gives two BRDA entries on its line, block = its number on the
 * line (from 0, in address order), branch 0 = taken (the branch counts from its address),
 * branch 1 = not taken (its other executions), "-" for both when it never ran. Functions whose
 * entry has no source line (no DWARF) go to one more record, SF: the binary's path, with a
 * pseudo-line per function (its number in address order, from 1: FN, DA = its entry count,
 * BRDA for its branches without a line). Code no function symbol starts at or covers but an
 * .eh_frame FDE does (a stripped file's .dynsym names its exported functions only) is a
 * function "fde@<hex address>" over the FDE's range (cut at the next function); without any
 * function, each executable section is one, named after it. Functions that share a name
 * (versions of one .dynsym name) are "<name>@<hex address>" (genhtml keys them by name). Code
 * is walked within functions and
 * line-table sequences, in the executable sections (A64; A32/T32 by mapping symbols or the Thumb
 * bit), skipping $d data. elf: the binary's ELF file for symbols and DWARF (a separate debug file
 * will do); code_elf: the ELF file with its instructions when elf holds none (NULL: elf).
 * Addresses are the binary's own (those of the profile). st may be NULL. Returns 0, EK_ERR_ARG,
 * EK_ERR_IO, EK_ERR_FORMAT (not an ELF file, or relocatable) or EK_ERR_NOMEM. */
int ek_profile_write_lcov(const ek_profile *p, size_t bin, const char *elf, const char *code_elf,
                          ek_sbuf *out, ek_lcov_stats *st);

/* Coverage of the ELF file elf (a separate debug file will do) with build-id elf_id (as its
 * note holds it), as ek_profile_write_lcov writes it, from every binary of p that is that file
 * (ek_profile_binaries_for_elf), their counts added up. *nbins (may be NULL) says how many
 * binaries were added up. Returns what ek_profile_write_lcov returns, or EK_ERR_NOT_FOUND (no
 * binary is that file: nothing written). */
int ek_profile_write_lcov_for_elf(const ek_profile *p, const uint8_t *elf_id, size_t elf_id_len,
                                  const char *elf, const char *code_elf, unsigned flags,
                                  ek_sbuf *out, ek_lcov_stats *st, size_t *nbins);

/* ---- profiles from samples -------------------------------------------------------------- */

/* Where an address of a sample is: its binary, the binary's own address for it, and the
 * mapping it was in (an opaque key: a range is counted only when both of its ends are in
 * one mapping). */
typedef struct ek_profile_loc {
    ek_profile_binary id;
    uint64_t vaddr;
    uint64_t mapping;
} ek_profile_loc;

/* Locate addr (an address of sample s) : 0 with *out set, non-zero when it is in no binary
 * (its counts are then left out). The pointers in out->id must stay valid until the next call.
 * A mapping is in one binary: the builder remembers the binary of each mapping. */
typedef int (*ek_profile_locate_fn)(void *ctx, const ek_sample *s, uint64_t addr,
                                    ek_profile_loc *out);

/* Turns samples into counts of profile p (ek_profile_builder_add, in output order).
 *  - branches samples (--itrace=b): each trace source (CPU and trace ID) is followed; a
 *    taken branch from -> to counts once for from's binary (to is EK_PROFILE_EXTERNAL when it
 *    is in another mapping or unknown: "tr end ... => 0"), and the run from the previous
 *    branch's target to this branch's source is one range, when both are in one mapping.
 *    Asynchronous exceptions (interrupts) end a range at the last instruction executed and
 *    are not branches; "tr strt" starts a range and is not a branch; a "tr end" whose last
 *    instruction is not known to be a taken branch (a conditional, or a range that just
 *    stopped) ends a range without a branch.
 *  - instructions samples with branch stacks (--itrace=il...): as the LBR consumers (perf2bolt,
 *    create_llvm_prof) take them: every entry a branch, and the run from an entry's target to
 *    the next newer entry's source a range; overlapping stacks count again.
 * Counts are per sample: what the stream decoded, exactly (docs/PROFILES.md). */
typedef struct ek_profile_builder ek_profile_builder;

typedef struct ek_profile_build_stats {
    uint64_t samples;       /* samples given */
    uint64_t branches;      /* branch counts added */
    uint64_t ranges;        /* range counts added */
    uint64_t unlocated;     /* addresses in no binary (no map, or no file for the map) */
    uint64_t cross_mapping; /* runs whose ends were in different mappings: no range */
    uint64_t impossible;    /* runs with an unconditional branch inside: no range */
} ek_profile_build_stats;

int ek_profile_builder_new(ek_profile *p, ek_profile_locate_fn locate, void *ctx,
                           ek_profile_builder **out);
/* The code of the binary loc names, at its own address vaddr: copy up to len bytes into buf
 * and return how many (0: not available). */
typedef size_t (*ek_profile_code_fn)(void *ctx, const ek_profile_loc *loc, uint64_t vaddr,
                                     void *buf, size_t len);
/* With code, a run is checked before it counts (A64): one with an unconditional branch
 * before its end cannot have run: its branch counts, no range, and the source's run goes on. */
void ek_profile_builder_set_code(ek_profile_builder *b, ek_profile_code_fn fn, void *ctx);
/* The instruction bytes at addr as sample s's thread saw them (up to len into buf; returns how
 * many, 0: not available): what the builder reads, when a sample carries no instruction
 * (ek_consumer.no_insn), for a branch right before an exception or a trace end. Without it,
 * the binary's code (set_code) is read. */
typedef size_t (*ek_profile_insn_fn)(void *ctx, const ek_sample *s, uint64_t addr, void *buf,
                                     size_t len);
void ek_profile_builder_set_insn(ek_profile_builder *b, ek_profile_insn_fn fn, void *ctx);
/* Returns 0, EK_ERR_NOMEM or EK_ERR_ARG (EK_PROFILE_BUILD_LOCAL: also 1, see below). */
int ek_profile_builder_add(ek_profile_builder *b, const ek_sample *s);
void ek_profile_builder_get_stats(const ek_profile_builder *b, ek_profile_build_stats *out);
/* to += from, field by field */
void ek_profile_builder_add_stats(ek_profile_build_stats *to, const ek_profile_build_stats *from);

/* Counting on several threads. A run's samples come in queues (ek_sample.queue), each in
 * its own order, and the run puts them in one output order. Nearly all of a sample's counts
 * depend only on the samples of its own stream before it (its trace source, within one
 * queue), so each queue can have a builder of its own (LOCAL), added to on the thread that
 * decodes it. What depends on the other queues is a thread's pending branch (a branch cut by
 * an interrupt or a trace end, decided where the thread resumes, on any CPU): a LOCAL
 * builder's add returns 1 for a sample that makes or may decide one, and that sample is then
 * given, in output order, to one SHARED builder, which does only that part. The LOCAL
 * builders' profiles merged into the SHARED one's (ek_profile_merge), and their stats added
 * (ek_profile_builder_add_stats), are what one builder (ALL, the default) given every sample
 * in output order makes. Set before the first sample. */
typedef enum ek_profile_build_part {
    EK_PROFILE_BUILD_ALL = 0,
    EK_PROFILE_BUILD_LOCAL = 1,
    EK_PROFILE_BUILD_SHARED = 2,
} ek_profile_build_part;
void ek_profile_builder_set_part(ek_profile_builder *b, ek_profile_build_part part);
void ek_profile_builder_free(ek_profile_builder *b);

/* A locator from a recording's own sideband: its MMAP/MMAP2 records (by process and time;
 * a process without a map there looks in its parent's, from FORK records), the build-ids it
 * recorded (MMAP2, or the build-id feature by file name), and each file's ELF program headers
 * (found where perf looks: ek_buildid_find with symfs and buildid_dir; the kernel in
 * vmlinux): vaddr = the file offset mapped back through the PT_LOAD holding it. A map with no
 * ELF file found: vaddr = the file offset, load_base 0. Kernel addresses (bit 63) are in
 * "[kernel.kallsyms]" at their own address (load_base 0). Where maps of different files
 * overlap in the process, hint (may be NULL) is asked for the DSO name of the address (the
 * session's, from ek_script_resolver) and decides; then time does. */
typedef struct ek_profile_maps ek_profile_maps;
typedef struct ek_profile_maps_opts {
    size_t size; /* sizeof(ek_profile_maps_opts) */
    const char *symfs, *buildid_dir, *vmlinux;
    /* 1: every name a hint returns stays unchanged, at its address, until the maps are freed
     * (a session's DSO names do while the session lives: free the maps first), so the locator
     * may know a name it saw before by its address alone; 0 (the default): names are compared
     * by their text */
    int hints_stable;
} ek_profile_maps_opts;
int ek_profile_maps_new(const ek_perf_file *f, const ek_profile_maps_opts *o,
                        ek_profile_maps **out);
void ek_profile_maps_free(ek_profile_maps *m);
typedef const char *(*ek_profile_hint_fn)(void *ctx, const ek_sample *s, uint64_t addr);
int ek_profile_maps_locate(ek_profile_maps *m, const ek_sample *s, uint64_t addr,
                           ek_profile_hint_fn hint, void *hint_ctx, ek_profile_loc *out);
/* b locates with m and hint instead of its locate function: ek_profile_maps_locate's answers,
 * with most addresses taken without a call. m must live while b adds samples. */
void ek_profile_builder_use_maps(ek_profile_builder *b, ek_profile_maps *m,
                                 ek_profile_hint_fn hint, void *hint_ctx);
/* An ek_profile_code_fn (ctx: the maps) reading the ELF file of a located user binary. */
size_t ek_profile_maps_code(void *m, const ek_profile_loc *loc, uint64_t vaddr, void *buf,
                            size_t len);
/* Files the locator looked for and did not find (maps whose addresses had no ELF file), one
 * "path (build-id HEX)" line each, for messages. */
void ek_profile_maps_missing(const ek_profile_maps *m, ek_sbuf *out);
/* A locator for another thread: the same answers as m's, from m's maps and files (each
 * file's ELF facts and code found once for all of them, under a lock), with lookup caches of
 * its own. Free it (ek_profile_maps_free) before m; m's missing files are those any of them
 * looked for. Returns 0, EK_ERR_NOMEM or EK_ERR_ARG. */
int ek_profile_maps_fork(ek_profile_maps *m, ek_profile_maps **out);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
