/* perf's jitdump files (tools/perf/util/jitdump.h): what a JIT compiled, where it put it and
 * when. A JIT (perf's JVMTI agent, V8 with --perf-prof, LLVM's perf listener...) writes
 * jit-PID.dump and maps it executable, so that `perf record -k 1` records an MMAP2 that names
 * it; `perf inject --jit` turns its records into jitted-PID-N.so files.
 *
 * Layout (little- or big-endian, told by the magic): a header {u32 magic "JiTD" 0x4A695444,
 * u32 version, u32 total_size, u32 elf_mach, u32 pad, u32 pid, u64 timestamp, u64 flags}, then
 * records, each {u32 id, u32 total_size, u64 timestamp} and a body:
 *   JIT_CODE_LOAD (0)        u32 pid, u32 tid, u64 vma, u64 code_addr, u64 code_size,
 *                            u64 code_index, name\0, then the code: the record's last
 *                            code_size bytes (as perf inject reads it)
 *   JIT_CODE_MOVE (1)        u32 pid, u32 tid, u64 vma, u64 old_code_addr, u64 new_code_addr,
 *                            u64 code_size, u64 code_index (the load whose code moved)
 *   JIT_CODE_DEBUG_INFO (2)  u64 code_addr, u64 nr_entry, entries {u64 addr, i32 line,
 *                            i32 discrim, file name\0 ("\xff\0": the previous one)}
 *   JIT_CODE_CLOSE (3)       nothing
 *   JIT_CODE_UNWINDING_INFO (4) and unknown ids are skipped by their size.
 * Time stamps are CLOCK_MONOTONIC ns unless flags bit 0 (JITDUMP_FLAGS_ARCH_TIMESTAMP) says
 * they are architectural counter values (converted with the recording's TIME_CONV). */
#ifndef ETMKIT_INPUT_JITDUMP_H
#define ETMKIT_INPUT_JITDUMP_H

#include <stddef.h>
#include <stdint.h>

#include "core/mapfile.h"
#include "etmkit/diag.h"

#define EK_JIT_FLAG_ARCH_TIMESTAMP 1ull

typedef struct ek_jit_code { /* a JIT_CODE_LOAD or JIT_CODE_MOVE */
    uint64_t time;
    uint32_t pid, tid;
    uint64_t addr, size, index;
    uint64_t old_addr;   /* MOVE: where the code was */
    int move;            /* 1: JIT_CODE_MOVE */
    const char *name;    /* LOAD: in the file (NUL-terminated); MOVE: the load's, or NULL */
    const uint8_t *code; /* LOAD: in the file; MOVE: the load's, or NULL when it is unknown */
    uint64_t offset;     /* file offset of the record */
} ek_jit_code;

typedef struct ek_jitdump {
    ek_mapped file;
    uint32_t version, elf_mach, pid;
    uint64_t timestamp, flags;
    int swapped;        /* written on a machine of the other byte order */
    ek_jit_code *codes; /* loads and moves in file order */
    size_t ncodes;
    size_t ndebug, nclose, nother; /* records of the other kinds */
    int truncated; /* the last record did not fit in the file (a JIT still writing) */
} ek_jitdump;

/* Read a jitdump. Problems (bad magic, truncated or oversized records) go to diag with the
 * file and offset; what came before a damaged record is kept. Returns 0, EK_ERR_IO,
 * EK_ERR_FORMAT (not a jitdump) or EK_ERR_NOMEM. */
int ek_jitdump_read(const char *path, const ek_diag *diag, ek_jitdump **out);
void ek_jitdump_free(ek_jitdump *j);

/* 1 if a mapped file name is a jitdump of pid: ".../jit-PID.dump" (perf's jit_detect). */
int ek_jitdump_name_matches(const char *filename, int32_t pid);

#endif
