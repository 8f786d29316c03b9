/* perf.data files with CoreSight (cs_etm) trace: header, attributes, features, records,
 * the cs_etm configuration and the AUX trace slices that a decoder consumes.
 *
 * Layout reference: ../shared/docs/perf-data-layout.md.
 *
 *   ek_perf_file    one opened recording (file or pipe-mode stream, either byte order). The
 *                   file is mapped, never read whole; ek_perf_open walks the records once to
 *                   index what later stages need (attributes, AUX / AUXTRACE / HW_ID records,
 *                   TIME_CONV, the cs_etm AUXTRACE_INFO) and reports damage to the diag sink.
 *                   After ek_perf_open the object is immutable: any number of iterators and
 *                   queue sets may use it at the same time, from several threads.
 *   ek_perf_iter    walks every record in file order again (decompressing COMPRESSED records
 *                   through a fixed-size window), decoding fields into ek_perf_record.
 *   ek_perf_queues  the AUX records matched to their slices of AUXTRACE buffers, grouped into
 *                   queues (one per CPU, or per thread in per-thread recordings). Queues share
 *                   nothing mutable: each can be decoded on its own thread.
 *
 * Every problem in the input goes to the ek_diag sink with file, record number and byte
 * offset; reading continues where it can (see ek_perf_open for the resynchronisation rule).
 * The trace bytes of a slice are referenced in the mapped file, never copied.
 */
#ifndef ETMKIT_PERF_H
#define ETMKIT_PERF_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/config.h"
#include "etmkit/diag.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

/* ---- record types ------------------------------------------------------------------- */

enum {
    EK_PERF_RECORD_MMAP = 1,
    EK_PERF_RECORD_LOST = 2,
    EK_PERF_RECORD_COMM = 3,
    EK_PERF_RECORD_EXIT = 4,
    EK_PERF_RECORD_THROTTLE = 5,
    EK_PERF_RECORD_UNTHROTTLE = 6,
    EK_PERF_RECORD_FORK = 7,
    EK_PERF_RECORD_READ = 8,
    EK_PERF_RECORD_SAMPLE = 9,
    EK_PERF_RECORD_MMAP2 = 10,
    EK_PERF_RECORD_AUX = 11,
    EK_PERF_RECORD_ITRACE_START = 12,
    EK_PERF_RECORD_LOST_SAMPLES = 13,
    EK_PERF_RECORD_SWITCH = 14,
    EK_PERF_RECORD_SWITCH_CPU_WIDE = 15,
    EK_PERF_RECORD_NAMESPACES = 16,
    EK_PERF_RECORD_KSYMBOL = 17,
    EK_PERF_RECORD_BPF_EVENT = 18,
    EK_PERF_RECORD_CGROUP = 19,
    EK_PERF_RECORD_TEXT_POKE = 20,
    EK_PERF_RECORD_AUX_OUTPUT_HW_ID = 21,
    EK_PERF_RECORD_KERNEL_MAX = 22, /* kernel records: 1 .. 21 */

    EK_PERF_RECORD_HEADER_ATTR = 64,
    EK_PERF_RECORD_HEADER_EVENT_TYPE = 65,
    EK_PERF_RECORD_HEADER_TRACING_DATA = 66,
    EK_PERF_RECORD_HEADER_BUILD_ID = 67,
    EK_PERF_RECORD_FINISHED_ROUND = 68,
    EK_PERF_RECORD_ID_INDEX = 69,
    EK_PERF_RECORD_AUXTRACE_INFO = 70,
    EK_PERF_RECORD_AUXTRACE = 71,
    EK_PERF_RECORD_AUXTRACE_ERROR = 72,
    EK_PERF_RECORD_THREAD_MAP = 73,
    EK_PERF_RECORD_CPU_MAP = 74,
    EK_PERF_RECORD_STAT_CONFIG = 75,
    EK_PERF_RECORD_STAT = 76,
    EK_PERF_RECORD_STAT_ROUND = 77,
    EK_PERF_RECORD_EVENT_UPDATE = 78,
    EK_PERF_RECORD_TIME_CONV = 79,
    EK_PERF_RECORD_HEADER_FEATURE = 80,
    EK_PERF_RECORD_COMPRESSED = 81,
    EK_PERF_RECORD_FINISHED_INIT = 82,
    EK_PERF_RECORD_COMPRESSED2 = 83,
    EK_PERF_RECORD_USER_MAX = 84,

    EK_PERF_RECORD_SIMPLEPERF_FIRST = 32768, /* simpleperf's own records: skipped */
};

/* "MMAP2", "AUX", ... ; "SIMPLEPERF" for >= 32768; "UNKNOWN" otherwise. Never NULL. */
const char *ek_perf_record_name(uint32_t type);

/* header.misc bits */
#define EK_PERF_MISC_CPUMODE_MASK       0x7u
#define EK_PERF_MISC_KERNEL             1u
#define EK_PERF_MISC_USER               2u
#define EK_PERF_MISC_HYPERVISOR         3u
#define EK_PERF_MISC_GUEST_KERNEL       4u
#define EK_PERF_MISC_GUEST_USER         5u
#define EK_PERF_MISC_MMAP_DATA          (1u << 13) /* also COMM_EXEC, SWITCH_OUT */
#define EK_PERF_MISC_COMM_EXEC          (1u << 13)
#define EK_PERF_MISC_SWITCH_OUT         (1u << 13)
#define EK_PERF_MISC_MMAP_BUILD_ID      (1u << 14) /* also SWITCH_OUT_PREEMPT */
#define EK_PERF_MISC_SWITCH_OUT_PREEMPT (1u << 14)

/* perf_event_attr.sample_type bits used by the reader */
#define EK_PERF_SAMPLE_IP         (1ull << 0)
#define EK_PERF_SAMPLE_TID        (1ull << 1)
#define EK_PERF_SAMPLE_TIME       (1ull << 2)
#define EK_PERF_SAMPLE_ADDR       (1ull << 3)
#define EK_PERF_SAMPLE_READ       (1ull << 4)
#define EK_PERF_SAMPLE_CALLCHAIN  (1ull << 5)
#define EK_PERF_SAMPLE_ID         (1ull << 6)
#define EK_PERF_SAMPLE_CPU        (1ull << 7)
#define EK_PERF_SAMPLE_PERIOD     (1ull << 8)
#define EK_PERF_SAMPLE_STREAM_ID  (1ull << 9)
#define EK_PERF_SAMPLE_IDENTIFIER (1ull << 16)

/* perf_event_attr flag bits (the bit-field word at offset 40) */
#define EK_PERF_ATTR_FLAG_SAMPLE_ID_ALL  (1ull << 18)
#define EK_PERF_ATTR_FLAG_MMAP2          (1ull << 23)
#define EK_PERF_ATTR_FLAG_USE_CLOCKID    (1ull << 25) /* clockid below is the events' clock */
#define EK_PERF_ATTR_FLAG_CONTEXT_SWITCH (1ull << 26)
#define EK_PERF_ATTR_FLAG_AUX_OUTPUT     (1ull << 31)

/* PERF_RECORD_AUX flags */
#define EK_PERF_AUX_FLAG_TRUNCATED       0x01ull
#define EK_PERF_AUX_FLAG_OVERWRITE       0x02ull
#define EK_PERF_AUX_FLAG_PARTIAL         0x04ull
#define EK_PERF_AUX_FLAG_COLLISION       0x08ull
#define EK_PERF_AUX_FLAG_PMU_FORMAT_MASK 0xff00ull
#define EK_PERF_AUX_FLAG_CORESIGHT_RAW   0x0100ull /* unformatted single-source trace */

/* Feature bits of the file header (adds_features). */
enum {
    EK_PERF_FEAT_TRACING_DATA = 1,
    EK_PERF_FEAT_BUILD_ID = 2,
    EK_PERF_FEAT_HOSTNAME = 3,
    EK_PERF_FEAT_OSRELEASE = 4,
    EK_PERF_FEAT_VERSION = 5,
    EK_PERF_FEAT_ARCH = 6,
    EK_PERF_FEAT_NRCPUS = 7,
    EK_PERF_FEAT_CPUDESC = 8,
    EK_PERF_FEAT_CPUID = 9,
    EK_PERF_FEAT_TOTAL_MEM = 10,
    EK_PERF_FEAT_CMDLINE = 11,
    EK_PERF_FEAT_EVENT_DESC = 12,
    EK_PERF_FEAT_CPU_TOPOLOGY = 13,
    EK_PERF_FEAT_NUMA_TOPOLOGY = 14,
    EK_PERF_FEAT_BRANCH_STACK = 15,
    EK_PERF_FEAT_PMU_MAPPINGS = 16,
    EK_PERF_FEAT_GROUP_DESC = 17,
    EK_PERF_FEAT_AUXTRACE = 18,
    EK_PERF_FEAT_STAT = 19,
    EK_PERF_FEAT_CACHE = 20,
    EK_PERF_FEAT_SAMPLE_TIME = 21,
    EK_PERF_FEAT_MEM_TOPOLOGY = 22,
    EK_PERF_FEAT_CLOCKID = 23,
    EK_PERF_FEAT_DIR_FORMAT = 24,
    EK_PERF_FEAT_BPF_PROG_INFO = 25,
    EK_PERF_FEAT_BPF_BTF = 26,
    EK_PERF_FEAT_COMPRESSED = 27,
    EK_PERF_FEAT_CPU_PMU_CAPS = 28,
    EK_PERF_FEAT_CLOCK_DATA = 29,
    EK_PERF_FEAT_HYBRID_TOPOLOGY = 30,
    EK_PERF_FEAT_PMU_CAPS = 31,
    /* simpleperf */
    EK_PERF_FEAT_SP_FILE = 128,
    EK_PERF_FEAT_SP_META_INFO = 129,
    EK_PERF_FEAT_SP_DEBUG_UNWIND = 130,
    EK_PERF_FEAT_SP_DEBUG_UNWIND_FILE = 131,
    EK_PERF_FEAT_SP_FILE2 = 132,
    EK_PERF_FEAT_SP_ETM_BRANCH_LIST = 133,
    EK_PERF_FEAT_SP_INIT_MAP = 134,
};

/* "HOSTNAME", "AUXTRACE", "SIMPLEPERF_META_INFO", ... ; "FEAT_<n>" style text is the
 * caller's business: returns NULL for bits without a name. */
const char *ek_perf_feature_name(unsigned bit);

/* ---- the file ----------------------------------------------------------------------- */

typedef struct ek_perf_file ek_perf_file;

typedef struct ek_perf_section {
    uint64_t offset, size;
} ek_perf_section;

typedef struct ek_perf_header_info {
    int pipe;    /* pipe-mode stream: 16-byte header, attrs/features as records */
    int swapped; /* written in the other byte order (big-endian) */
    uint64_t file_size;
    uint64_t header_size;  /* 104 (file) or 16 (pipe) */
    uint64_t attr_size;    /* size of one perf_file_attr entry (file mode) */
    ek_perf_section attrs; /* as written */
    ek_perf_section data;  /* as written */
    ek_perf_section event_types;
    uint64_t features[4]; /* adds_features bitmap */
    uint64_t data_begin;  /* usable data: [data_begin, data_end) (clipped to the file) */
    uint64_t data_end;
} ek_perf_header_info;

typedef struct ek_perf_attr {
    uint32_t type;
    uint32_t size; /* attr.size as written (0 means 64) */
    uint64_t config;
    uint64_t sample_period; /* or sample_freq */
    uint64_t sample_type;
    uint64_t read_format;
    uint64_t flags; /* bit-field word (disabled = bit 0 ... ); EK_PERF_ATTR_FLAG_* */
    uint32_t wakeup_events;
    uint32_t bp_type;
    uint64_t config1;
    uint64_t config2;
    uint64_t branch_sample_type;
    uint32_t aux_watermark;
    uint64_t config3;
    const uint64_t *ids; /* event ids of this attribute (one per CPU/thread) */
    size_t nids;
    uint64_t offset; /* file offset of the attribute */
    int64_t record;  /* pipe mode: number of its HEADER_ATTR record, else -1 */
    int32_t clockid; /* with EK_PERF_ATTR_FLAG_USE_CLOCKID (perf record -k): 1 CLOCK_MONOTONIC */
} ek_perf_attr;

typedef struct ek_perf_build_id {
    int32_t pid;
    uint16_t misc;
    uint8_t size; /* valid bytes in id[] (20 when the size is not recorded) */
    uint8_t id[20];
    const char *filename;
} ek_perf_build_id;

typedef struct ek_perf_pmu_mapping {
    uint32_t type;
    const char *name;
} ek_perf_pmu_mapping;

typedef struct ek_perf_index_entry {
    uint64_t offset; /* file offset of a PERF_RECORD_AUXTRACE */
    uint64_t size;   /* that record's header.size */
} ek_perf_index_entry;

typedef enum ek_perf_index_kind {
    EK_PERF_INDEX_NONE = 0,       /* no AUXTRACE feature */
    EK_PERF_INDEX_PERF = 1,       /* u64 nr, then nr entries (Linux perf) */
    EK_PERF_INDEX_SIMPLEPERF = 2, /* entries without the leading count (simpleperf) */
    EK_PERF_INDEX_BAD = 3,        /* present but unusable */
} ek_perf_index_kind;

typedef struct ek_perf_feature_section {
    unsigned bit;
    uint64_t offset, size; /* as written (pipe mode: offset of the HEADER_FEATURE data) */
    int parsed;            /* 1 decoded into ek_perf_features, 0 skipped, -1 damaged */
} ek_perf_feature_section;

/* Decoded features. Strings are NUL-terminated; absent ones are NULL. */
typedef struct ek_perf_features {
    const char *hostname, *osrelease, *version, *arch, *cpudesc, *cpuid;
    int have_nrcpus;
    uint32_t nr_cpus_avail, nr_cpus_online;
    int have_total_mem;
    uint64_t total_mem_kb;
    const char *const *cmdline;
    size_t ncmdline;
    const ek_perf_build_id *build_ids;
    size_t nbuild_ids;
    const ek_perf_pmu_mapping *pmu_mappings;
    size_t npmu_mappings;
    ek_perf_index_kind index_kind;
    const ek_perf_index_entry *index;
    size_t nindex;
    int have_clockid;
    uint64_t clockid_res_ns;
    int have_clock_data;
    uint32_t clock_data_version, clockid;
    uint64_t clock_tod_ns, clock_clockid_ns;
    int have_compressed;
    uint32_t comp_ver, comp_type, comp_level, comp_ratio, comp_mmap_len;
    const char *const *meta_info; /* simpleperf META_INFO: key, value, key, value, ... */
    size_t nmeta_info;            /* number of strings (2 per pair) */
} ek_perf_features;

/* Open a perf.data file (mapped, not read into memory) and index it. 'diag' receives every
 * problem found (it is used only during this call). Returns 0 with *out set (possibly with
 * diagnostics), or a negative status with *out NULL when nothing usable was found (not a
 * perf.data file, unreadable, header unusable).
 *
 * Damage handling: a record whose size is below 8, not a multiple of 8 where one is
 * required, or reaches past the end of the data is reported; the reader then scans forward
 * in 8-byte steps from that record's start for a plausible record header (known type,
 * plausible size, and the record after it plausible too or at the end of the data) and
 * continues there, reporting how many bytes it skipped. Inside a COMPRESSED stream, damage
 * drops the rest of the stream up to the next COMPRESSED record, whose data is taken to
 * start at a record boundary again. */
int ek_perf_open(const char *path, const ek_diag *diag, ek_perf_file **out);
/* The same on bytes in memory (kept by reference: they must outlive the object). */
int ek_perf_open_mem(const void *data, size_t size, const char *name, const ek_diag *diag,
                     ek_perf_file **out);
void ek_perf_free(ek_perf_file *f);

const char *ek_perf_name(const ek_perf_file *f);
const ek_perf_header_info *ek_perf_header(const ek_perf_file *f);
/* Bytes of the file that will not be read again soon (decoded trace): the pages of the
 * file's mapping that [p, p + len) touches, rounded out to whole pages, are handed back to the
 * kernel, so that a large recording does not stay resident; reading them again reads the file.
 * Nothing happens when the bytes are a copy in memory (a pipe, ek_perf_open_mem) or lie
 * outside the file. Safe while other threads read the same pages. */
void ek_perf_release(const ek_perf_file *f, const void *p, size_t len);
/* The file's bytes (for slice data; see ek_perf_slice_data). */
const uint8_t *ek_perf_bytes(const ek_perf_file *f, size_t *size);

size_t ek_perf_nattrs(const ek_perf_file *f);
const ek_perf_attr *ek_perf_attr_at(const ek_perf_file *f, size_t i);
const ek_perf_attr *ek_perf_attr_by_id(const ek_perf_file *f, uint64_t id);

const ek_perf_features *ek_perf_features_get(const ek_perf_file *f);
size_t ek_perf_nfeature_sections(const ek_perf_file *f);
const ek_perf_feature_section *ek_perf_feature_section_at(const ek_perf_file *f, size_t i);

/* Counts from the indexing pass. */
typedef struct ek_perf_stats {
    uint64_t records; /* every record yielded, incl. those inside COMPRESSED */
    uint64_t by_type[EK_PERF_RECORD_USER_MAX];
    uint64_t simpleperf;         /* simpleperf-private records (>= 32768), skipped */
    uint64_t unknown;            /* other unknown types, skipped by size */
    uint64_t compressed_records; /* records that came out of COMPRESSED data */
    uint64_t damaged;            /* records reported as damaged */
    uint64_t resyncs;            /* times the reader had to scan for the next record */
    uint64_t bytes_skipped;      /* bytes skipped while resynchronising */
} ek_perf_stats;
const ek_perf_stats *ek_perf_stats_get(const ek_perf_file *f);

/* ---- records ------------------------------------------------------------------------ */

/* The sample_id_all trailer of a kernel record (or the leading fields of a SAMPLE). */
typedef struct ek_perf_sample_id {
    uint64_t present; /* EK_PERF_SAMPLE_TID / TIME / ID / STREAM_ID / CPU / IDENTIFIER */
    uint32_t pid, tid;
    uint64_t time;
    uint64_t id;
    uint64_t stream_id;
    uint32_t cpu;
    const ek_perf_attr *attr; /* the attribute the record belongs to, or NULL */
} ek_perf_sample_id;

typedef struct ek_perf_time_conv {
    uint64_t time_shift, time_mult, time_zero, time_cycles, time_mask;
    uint8_t cap_user_time_zero, cap_user_time_short;
    int have_cycles; /* 0: the old 32-byte record without time_cycles/time_mask */
} ek_perf_time_conv;

typedef struct ek_perf_record {
    uint32_t type;
    uint16_t misc;
    uint16_t size;          /* header.size (for AUXTRACE / TRACING_DATA without the payload) */
    int64_t index;          /* record number in file order (0-based, containers included) */
    uint64_t offset;        /* file offset of the header; for a record that came out of a
                               COMPRESSED record: the offset of that COMPRESSED record */
    int compressed;         /* 1: decompressed from a COMPRESSED/COMPRESSED2 record */
    uint64_t stream_offset; /* compressed: position in the decompressed stream */
    const uint8_t *raw;     /* the record's size bytes in the file's byte order; valid until
                               the next ek_perf_iter_next */
    int64_t payload_offset; /* AUXTRACE / TRACING_DATA: file offset of the data that follows
                               the record (-1 when it is not in the file, e.g. compressed) */
    uint64_t payload_size;  /* bytes of data as declared */
    uint64_t payload_avail; /* bytes of it present in the file; when the declared size reaches
                               past the end of the data and the reader found records inside it:
                               the bytes up to them (the payload ends there) */
    ek_perf_sample_id sid;  /* trailer (kernel records with sample_id_all), SAMPLE fields */
    int damaged;            /* a field did not fit: decoded fields may be partial */
    union {
        struct { /* MMAP, MMAP2 */
            uint32_t pid, tid;
            uint64_t addr, len, pgoff;
            uint32_t maj, min; /* MMAP2 without build id */
            uint64_t ino, ino_generation;
            int has_build_id; /* MMAP2 with MISC_MMAP_BUILD_ID */
            uint8_t build_id_size;
            uint8_t build_id[20];
            uint32_t prot, flags; /* MMAP2 */
            const char *filename;
        } mmap;
        struct { /* COMM */
            uint32_t pid, tid;
            const char *comm;
        } comm;
        struct { /* FORK, EXIT */
            uint32_t pid, ppid, tid, ptid;
            uint64_t time;
        } fork;
        struct { /* AUX */
            uint64_t aux_offset, aux_size, flags;
        } aux;
        struct { /* ITRACE_START */
            uint32_t pid, tid;
        } itrace_start;
        struct { /* SWITCH_CPU_WIDE */
            uint32_t next_prev_pid, next_prev_tid;
        } sw;
        struct { /* AUX_OUTPUT_HW_ID */
            uint64_t hw_id;
        } hw_id;
        struct { /* LOST */
            uint64_t id, lost;
        } lost;
        struct { /* LOST_SAMPLES */
            uint64_t lost;
        } lost_samples;
        struct { /* SAMPLE (leading fixed fields; times etc. in sid) */
            uint64_t ip, addr, period;
        } sample;
        struct { /* AUXTRACE */
            uint64_t size, offset, reference;
            uint32_t idx, tid;
            int32_t cpu; /* -1 in per-thread mode */
        } auxtrace;
        struct { /* AUXTRACE_INFO */
            uint32_t type;
            size_t npriv; /* u64 words after the 16-byte head */
        } auxtrace_info;
        struct { /* HEADER_ATTR */
            const ek_perf_attr *attr;
        } header_attr;
        struct { /* HEADER_FEATURE */
            uint64_t feat_id;
        } feature;
        struct { /* HEADER_BUILD_ID */
            int32_t pid;
            const char *filename;
        } build_id;
        struct { /* ID_INDEX, THREAD_MAP */
            uint64_t nr;
        } nr;
        struct {                 /* CPU_MAP */
            uint16_t type;       /* 0 cpus, 1 mask, 2 range */
            uint16_t nr;         /* cpus listed / mask bits / 0 */
            uint16_t start, end; /* range; cpus: first and last listed */
            uint8_t any_cpu;
        } cpu_map;
        ek_perf_time_conv time_conv;
        struct { /* COMPRESSED, COMPRESSED2 */
            uint64_t data_size;
        } compressed;
        struct { /* HEADER_TRACING_DATA */
            uint32_t size;
        } tracing_data;
    } u;
} ek_perf_record;

typedef struct ek_perf_iter ek_perf_iter;

/* Iterator flags */
#define EK_PERF_ITER_SIDEBAND                                                                      \
    0x1u /* yield only sideband records: MMAP, MMAP2, COMM, FORK,                                  \
            EXIT, SWITCH, SWITCH_CPU_WIDE, ITRACE_START, TIME_CONV,                                \
            LOST, AUX, AUX_OUTPUT_HW_ID (file order) */

/* A new iterator over f's records (one thread per iterator; many iterators may share f).
 * 'diag' may be NULL (ek_perf_open already reported
 * everything once); it must outlive the iterator. */
int ek_perf_iter_new(const ek_perf_file *f, unsigned flags, const ek_diag *diag,
                     ek_perf_iter **out);
/* 0: *rec holds the next record; EK_ERR_EOS: no more; other negative: allocation failure. */
int ek_perf_iter_next(ek_perf_iter *it, ek_perf_record *rec);
void ek_perf_iter_free(ek_perf_iter *it);
/* Is 'type' one of the sideband record types listed at EK_PERF_ITER_SIDEBAND? */
int ek_perf_is_sideband(uint32_t type);

/* The TIME_CONV record of the file (the last one), or NULL. */
const ek_perf_time_conv *ek_perf_time_conv_get(const ek_perf_file *f);
/* A CoreSight / arch-timer counter value to perf time (ns) with the TIME_CONV parameters. */
uint64_t ek_perf_counter_to_time(const ek_perf_time_conv *tc, uint64_t counter);

/* ---- AUX bookkeeping gathered by ek_perf_open --------------------------------------- */

typedef struct ek_perf_aux_rec { /* one PERF_RECORD_AUX */
    int64_t record;
    uint64_t offset; /* file offset (of the COMPRESSED record if compressed) */
    uint64_t aux_offset, aux_size, flags;
    ek_perf_sample_id sid;
    int has_cpu, has_tid; /* trailer fields present */
} ek_perf_aux_rec;

typedef struct ek_perf_auxtrace_rec { /* one PERF_RECORD_AUXTRACE */
    int64_t record;
    uint64_t offset;      /* file offset of the record header */
    uint64_t data_offset; /* file offset of the payload */
    uint64_t size;        /* payload size as declared; when the declared size reaches past the
                             end of the data and the reader found records inside it (a damaged
                             size field), the bytes up to those records */
    uint64_t avail;       /* payload bytes present in the file */
    uint64_t aux_offset;  /* position in the AUX area */
    uint64_t reference;
    uint32_t idx, tid;
    int32_t cpu;    /* -1: per-thread */
    int from_index; /* 1: found through the AUXTRACE index only (not by the scan) */
} ek_perf_auxtrace_rec;

typedef struct ek_perf_hwid_rec { /* one PERF_RECORD_AUX_OUTPUT_HW_ID */
    int64_t record;
    uint64_t offset;
    uint64_t hw_id;
    int has_cpu;
    uint32_t cpu;
    uint64_t time;
} ek_perf_hwid_rec;

const ek_perf_aux_rec *ek_perf_aux_records(const ek_perf_file *f, size_t *n);
const ek_perf_auxtrace_rec *ek_perf_auxtrace_records(const ek_perf_file *f, size_t *n);
const ek_perf_hwid_rec *ek_perf_hwid_records(const ek_perf_file *f, size_t *n);

/* ---- cs_etm configuration ----------------------------------------------------------- */

#define EK_PERF_AUXTRACE_CS_ETM 3u

#define EK_CS_ETM_MAGIC_ETMV3 0x3030303030303030ull
#define EK_CS_ETM_MAGIC_ETMV4 0x4040404040404040ull
#define EK_CS_ETM_MAGIC_ETE   0x5050505050505050ull

/* cs_etm perf_event_attr.config bits */
#define EK_CS_ETM_CFG_BRANCH_BROADCAST (1ull << 8)
#define EK_CS_ETM_CFG_CYCACC           (1ull << 12)
#define EK_CS_ETM_CFG_CONTEXTID1       (1ull << 14)
#define EK_CS_ETM_CFG_CONTEXTID2       (1ull << 15)
#define EK_CS_ETM_CFG_TIMESTAMP        (1ull << 28)
#define EK_CS_ETM_CFG_RETSTACK         (1ull << 29)

typedef enum ek_perf_traceid_source {
    EK_TRACEID_NONE = 0,     /* no usable ID (e.g. HW_ID records exist but none for this CPU) */
    EK_TRACEID_METADATA = 1, /* TRCTRACEIDR / ETMTRACEIDR in AUXTRACE_INFO */
    EK_TRACEID_HW_ID = 2,    /* PERF_RECORD_AUX_OUTPUT_HW_ID */
} ek_perf_traceid_source;

typedef enum ek_perf_pid_source {
    EK_PID_NONE = 0, /* context ID not traced */
    EK_PID_CONTEXTIDR_EL1 = 1,
    EK_PID_CONTEXTIDR_EL2 = 2,
} ek_perf_pid_source;

#define EK_CS_ETM_MAX_PARAMS 16 /* raw parameters kept per CPU (more are counted, skipped) */

typedef struct ek_perf_etm_cpu {
    uint32_t cpu;
    uint64_t magic;
    ek_source_config cfg; /* protocol, trace_id (final), regs (etm4 or etm3) */
    uint32_t nparams;     /* parameters after the block head, as written (v0: fixed) */
    uint64_t params[EK_CS_ETM_MAX_PARAMS];
    int64_t ts_source;     /* TS_SOURCE (1: virtual / arch counter), -1 unknown */
    uint8_t meta_trace_id; /* TRACEIDR & 0x7f from the metadata */
    int meta_unused_flag;  /* metadata ID carried BIT(31): IDs come from HW_ID (6.4-6.11) */
    ek_perf_traceid_source id_source;
    int have_sink; /* HW_ID v0.1: */
    uint32_t sink_id;
    ek_perf_pid_source pid_source;
    uint64_t block_offset; /* file offset of the block's magic word */
} ek_perf_etm_cpu;

typedef struct ek_perf_cs_etm {
    int present; /* a cs_etm AUXTRACE_INFO was found */
    int64_t info_record;
    uint64_t info_offset;
    uint64_t header_version;
    uint32_t pmu_type;
    uint32_t nr_cpu_blocks; /* as declared */
    uint64_t snapshot;
    const ek_perf_etm_cpu *cpus;
    size_t ncpus;             /* blocks decoded */
    const ek_perf_attr *attr; /* the cs_etm event, or NULL */
    uint64_t config;          /* its attr.config */
    int timestamp, contextid1, contextid2, retstack, cycacc, branch_broadcast;
    int timeless;         /* no CoreSight timestamps: samples take AUX record times */
    int all_ts_virtual;   /* every CPU has TS_SOURCE == 1: counters convert to perf time */
    int have_hw_id;       /* AUX_OUTPUT_HW_ID records exist */
    uint32_t hw_id_minor; /* their minor version (0 or 1) */
    /* the block of the lowest CPU when every block decodes alike (ek_perf_etm_cpu_decode_diff:
     * all but the trace ID), else NULL: raw trace that no record ties to a CPU (perf record
     * --per-thread on TRBEs) decodes with it */
    const ek_perf_etm_cpu *shared;
} ek_perf_cs_etm;

/* A field in which two CPUs' configurations differ: its name (TRCIDR0, TRCCONFIGR, ETMCR,
 * "protocol": the blocks' magic), and each CPU's value (UINT64_MAX: the block lacks it). */
typedef struct ek_perf_cfg_diff {
    const char *field; /* NULL: no difference */
    uint64_t a, b;
} ek_perf_cfg_diff;

/* Do a and b decode trace differently? 1 with the first field that differs in d (may be
 * NULL), 0 when they decode alike: the same protocol, TRCCONFIGR and ID registers
 * (TRCDEVARCH for ETE; ETMCR, ETMIDR and ETMCCER for ETMv3/PTM). The trace ID, TRCAUTHSTATUS
 * and TS_SOURCE are not compared: no packet decodes differently for them. */
int ek_perf_etm_cpu_decode_diff(const ek_perf_etm_cpu *a, const ek_perf_etm_cpu *b,
                                ek_perf_cfg_diff *d);

/* The cs_etm configuration (present == 0 when the file has none). Never NULL. */
const ek_perf_cs_etm *ek_perf_cs_etm_get(const ek_perf_file *f);
/* The block for a CPU number, or NULL. */
const ek_perf_etm_cpu *ek_perf_cs_etm_cpu(const ek_perf_file *f, uint32_t cpu);

/* ---- queues and AUX slices ---------------------------------------------------------- */

/* Trace ID -> CPU map that applies to a slice. v0.0 HW_ID and metadata IDs: one global map;
 * v0.1: one map per sink. */
typedef struct ek_perf_idmap {
    int global;         /* 1: shared by every queue */
    uint32_t sink_id;   /* when !global */
    int16_t cpu[128];   /* CPU number for each trace ID, -1 unmapped */
    int16_t block[128]; /* index into ek_perf_cs_etm.cpus, -1 unmapped */
} ek_perf_idmap;

/* Problems attached to a slice or a buffer. */
#define EK_SLICE_NO_DATA      0x01u /* AUX record with no AUXTRACE data covering it */
#define EK_SLICE_CLIPPED      0x02u /* data partly missing from the file (truncated) */
#define EK_SLICE_NO_CPU       0x04u /* AUX record without a cpu in its trailer */
#define EK_SLICE_MIXED_FORMAT 0x08u /* queue mixes formatted and raw trace */
#define EK_SLICE_NO_CONFIG    0x10u /* no cs_etm metadata for the queue's CPU (raw trace) */
#define EK_SLICE_SHARED_CONFIG 0x20u /* raw trace no record ties to a CPU, decoded with the
                                      * configuration every CPU shares (not a problem) */

typedef struct ek_perf_slice {
    size_t queue;       /* index of its queue */
    size_t aux;         /* index into ek_perf_aux_records() */
    int64_t aux_record; /* record number of the PERF_RECORD_AUX */
    uint64_t aux_record_offset;
    uint64_t aux_offset, aux_size, flags; /* as recorded */
    ek_perf_sample_id sid;                /* the AUX record's trailer: time, cpu, pid, tid */
    int64_t buffer;                       /* index into ek_perf_auxtrace_records(), -1 none */
    uint64_t buffer_pos;                  /* start of the slice inside the buffer's payload */
    uint64_t data_offset;                 /* file offset of the first trace byte */
    uint64_t data_size;                   /* trace bytes available in the file */
    int formatted;                        /* 1: CoreSight frames; 0: raw single-source */
    const ek_perf_idmap *idmap;           /* NULL for raw trace */
    uint32_t problems;                    /* EK_SLICE_* */
    /* raw trace: the configuration that decodes it (NULL: none, EK_SLICE_NO_CONFIG) and the
     * CPU its samples carry: a per-CPU queue's CPU, else the AUX record's CPU when its
     * sample_id has one, else -1 (the shared configuration, or the one --raw-cpu names) */
    const ek_perf_etm_cpu *raw_etm;
    int32_t raw_cpu;
} ek_perf_slice;

typedef struct ek_perf_queue {
    int per_thread;              /* 1: keyed by tid (AUXTRACE cpu == -1) */
    int32_t cpu;                 /* per-CPU queue: its CPU */
    uint32_t tid;                /* per-thread queue: its thread */
    const ek_perf_slice *slices; /* in AUX record order */
    size_t nslices;
    int formatted;              /* format of its slices (first one; see EK_SLICE_MIXED_FORMAT) */
    const ek_perf_etm_cpu *etm; /* per-CPU queue: that CPU's configuration (raw trace uses it) */
} ek_perf_queue;

typedef struct ek_perf_buffer_use { /* how much of each AUXTRACE buffer the slices cover */
    uint64_t covered;               /* bytes inside at least one slice */
    size_t nslices;
} ek_perf_buffer_use;

typedef struct ek_perf_queues ek_perf_queues;

/* Match every AUX record to its slice of an AUXTRACE buffer (see the layout doc: same cpu,
 * or same tid when AUXTRACE.cpu == -1; OVERWRITE slices end at aux_offset). AUX records with
 * no data and buffers (or parts) no AUX record covers are reported, never fatal. Trace ID maps
 * come from AUX_OUTPUT_HW_ID records when any exist, else from the metadata.
 * f must outlive the result, which is immutable: queues may be decoded on different threads
 * at the same time. */
int ek_perf_queues_new(const ek_perf_file *f, const ek_diag *diag, ek_perf_queues **out);

/* Choices of the user's that queueing cannot make from the recording. */
typedef struct ek_perf_queues_opts {
    /* raw trace of a queue without a CPU (perf record --per-thread on TRBEs) whose AUX records
     * name no CPU either: decode it with this CPU's configuration (-1: only when every CPU
     * has the same, ek_perf_cs_etm.shared). Its samples carry no CPU all the same. */
    int32_t raw_cpu;
} ek_perf_queues_opts;

/* ek_perf_queues_new with options (NULL: raw_cpu -1). A raw_cpu the recording has no
 * configuration for is reported (perf.raw-cpu) and leaves such trace undecoded. */
int ek_perf_queues_new_opts(const ek_perf_file *f, const ek_perf_queues_opts *o,
                            const ek_diag *diag, ek_perf_queues **out);
void ek_perf_queues_free(ek_perf_queues *q);

size_t ek_perf_queues_count(const ek_perf_queues *q);
const ek_perf_queue *ek_perf_queue_at(const ek_perf_queues *q, size_t i);
/* All slices, queue by queue. */
const ek_perf_slice *ek_perf_queues_slices(const ek_perf_queues *q, size_t *n);
/* AUX records with aux_size 0 (they queue nothing) and AUX records whose data is missing
 * (those are also slices, with EK_SLICE_NO_DATA and data_size 0). */
size_t ek_perf_queues_nempty(const ek_perf_queues *q);
size_t ek_perf_queues_nno_data(const ek_perf_queues *q);
/* Per AUXTRACE buffer coverage, same order as ek_perf_auxtrace_records(). */
const ek_perf_buffer_use *ek_perf_queues_buffer_use(const ek_perf_queues *q, size_t *n);
size_t ek_perf_queues_nidmaps(const ek_perf_queues *q);
const ek_perf_idmap *ek_perf_queues_idmap_at(const ek_perf_queues *q, size_t i);

/* The trace bytes of a slice (pointer into the mapped file; NULL when it has none). */
const uint8_t *ek_perf_slice_data(const ek_perf_file *f, const ek_perf_slice *s, size_t *len);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
