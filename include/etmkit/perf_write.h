/* perf.data writer: the one writer behind `etmkit gen`, `etmkit inject` and the tests.
 *
 * It writes what the reader (etmkit/perf.h) reads, with the reader's constants, in either
 * byte order, in file or pipe mode. Records are built in a fixed buffer (a record is at most
 * 65535 bytes: header.size is a u16) and handed to the output when they end; AUXTRACE
 * payloads go straight through. Memory does not grow with the data written, except by
 * 8 bytes per AUXTRACE record (the AUXTRACE index, as perf keeps it) and by the feature
 * sections the caller writes (metadata, written at the end).
 *
 *   ek_pw *w; ek_pw_new_file("perf.data", 0, &w);
 *   ek_pw_attr(w, &attr);                          // before the first record
 *   ek_pw_begin(w, EK_PERF_RECORD_COMM, 0); ek_pw_u32(w, pid); ...; ek_pw_end(w);
 *   ek_pw_record(w, &rec, sample_type);            // or from a reader-style record
 *   ek_pw_feature_begin(w, EK_PERF_FEAT_OSRELEASE); ek_pw_hstring(w, "6.1"); ek_pw_feature_end(w);
 *   ek_pw_close(w);                                // features, header; 0 or the first error
 *
 * Errors are sticky: the first one is kept, later calls do nothing and ek_pw_close returns
 * it. Building a damaged file (for tests) is allowed: ek_pw_end_size, ek_pw_end_nopad,
 * ek_pw_set_data_size, an AUXTRACE header without its payload. */
#ifndef ETMKIT_PERF_WRITE_H
#define ETMKIT_PERF_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/perf.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

typedef struct ek_pw ek_pw;

/* Where the bytes go. write appends; patch overwrites bytes written earlier (file mode
 * patches the header and the feature table at the end). Both return 0 or a negative
 * ek_status. */
typedef struct ek_pw_out {
    void *ctx;
    int (*write)(void *ctx, const void *p, size_t n);
    int (*patch)(void *ctx, uint64_t offset, const void *p, size_t n);
} ek_pw_out;

#define EK_PW_BIG_ENDIAN 0x1u /* write big-endian (as a big-endian machine's perf) */
#define EK_PW_PIPE       0x2u /* pipe mode: 16-byte header, HEADER_ATTR/HEADER_FEATURE records */

/* out is copied; its ctx must outlive the writer. */
int ek_pw_new(const ek_pw_out *out, unsigned flags, ek_pw **w);
/* Writes the file at path (created or truncated). EK_ERR_IO here, and from ek_pw_close for
 * such a writer: errno says why (the first failure's: a write that failed long before). */
int ek_pw_new_file(const char *path, unsigned flags, ek_pw **w);
/* Writes into memory; ek_pw_close_mem hands over the bytes. */
int ek_pw_new_mem(unsigned flags, ek_pw **w);

/* Finish (feature sections and table, header) and free. Returns 0 or the first error. */
int ek_pw_close(ek_pw *w);
/* ek_pw_close for a memory writer: *buf (malloc'd, caller frees) and *len on success. */
int ek_pw_close_mem(ek_pw *w, uint8_t **buf, size_t *len);
/* The first error so far (0 if none). */
int ek_pw_error(const ek_pw *w);
/* 1 for a pipe-mode writer (EK_PW_PIPE), else 0. */
int ek_pw_is_pipe(const ek_pw *w);

/* ---- attributes --------------------------------------------------------------------- */

/* An event attribute: type, size (attr.size written, 64..136; 0 means 128), config,
 * sample_period, sample_type, read_format, flags, wakeup_events, bp_type, config1, config2,
 * branch_sample_type, clockid, aux_watermark, config3 and its ids are written; other
 * fields of perf_event_attr are 0. File mode: call before the first record (they go into
 * the attrs section, all with the last size given); pipe mode: a HEADER_ATTR record. */
int ek_pw_attr(ek_pw *w, const ek_perf_attr *a);

/* ---- records ------------------------------------------------------------------------ */

/* Start a record; the value writers below append to it, in the writer's byte order. */
void ek_pw_begin(ek_pw *w, uint32_t type, uint16_t misc);
void ek_pw_u8(ek_pw *w, uint8_t v);
void ek_pw_u16(ek_pw *w, uint16_t v);
void ek_pw_u32(ek_pw *w, uint32_t v);
void ek_pw_u64(ek_pw *w, uint64_t v);
void ek_pw_bytes(ek_pw *w, const void *p, size_t n);
void ek_pw_zeros(ek_pw *w, size_t n);
/* NUL-terminated string padded with zeros to a multiple of align (8 in records). */
void ek_pw_str(ek_pw *w, const char *s, size_t align);
/* perf header string: u32 length (with the NUL, padded to 64), the bytes, zeros. */
void ek_pw_hstring(ek_pw *w, const char *s);
/* The sample_id_all trailer: the fields sample_type selects, in perf's order
 * (TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER); ID and IDENTIFIER both write sid->id. */
void ek_pw_sample_id(ek_pw *w, uint64_t sample_type, const ek_perf_sample_id *sid);
/* End the record: pad to 8 bytes, set header.size. */
int ek_pw_end(ek_pw *w);
/* End without padding. */
int ek_pw_end_nopad(ek_pw *w);
/* End with header.size = size whatever was written (damaged records for tests). */
int ek_pw_end_size(ek_pw *w, uint16_t size);

/* Bytes outside any record (an AUXTRACE record's payload). */
int ek_pw_payload(ek_pw *w, const void *p, size_t n);

/* A whole record from reader-style fields: r->type, r->misc and, by type, r->u.mmap (MMAP,
 * MMAP2: build id when has_build_id), r->u.comm, r->u.fork (FORK, EXIT), r->u.aux,
 * r->u.itrace_start, r->u.sw (SWITCH_CPU_WIDE), r->u.hw_id, r->u.lost, r->u.lost_samples,
 * r->u.time_conv, r->u.auxtrace (the header alone: the payload follows with ek_pw_payload),
 * SWITCH, FINISHED_ROUND and FINISHED_INIT (no body). Kernel records (type < 64) end with
 * the sample_id trailer of r->sid for sample_type. EK_ERR_ARG for other types. */
int ek_pw_record(ek_pw *w, const ek_perf_record *r, uint64_t sample_type);

/* AUXTRACE_INFO: its type, then the u64 words (for cs_etm: version, PMU type | CPUs,
 * snapshot, then the CPU blocks). */
int ek_pw_auxtrace_info(ek_pw *w, uint32_t type, const uint64_t *words, size_t nwords);

/* A PERF_RECORD_SAMPLE. */
typedef struct ek_pw_branch {
    uint64_t from, to;
    uint64_t flags; /* perf_branch_entry's bit-field word (mispred bit 0, predicted bit 1, ...) */
} ek_pw_branch;

typedef struct ek_pw_sample {
    uint64_t ip;
    uint32_t pid, tid;
    uint64_t time, addr, id, stream_id;
    uint32_t cpu;
    uint64_t period;
    const ek_pw_branch *branches; /* PERF_SAMPLE_BRANCH_STACK: nbranches entries, newest first */
    size_t nbranches;
    int has_hw_idx; /* branch_sample_type has PERF_SAMPLE_BRANCH_HW_INDEX: hw_idx is written */
    uint64_t hw_idx;
} ek_pw_sample;

#define EK_PERF_SAMPLE_BRANCH_STACK    (1ull << 11)
#define EK_PERF_SAMPLE_BRANCH_HW_INDEX (1ull << 17) /* branch_sample_type bit */

/* The fields sample_type selects, in perf's order (IDENTIFIER, IP, TID, TIME, ADDR, ID,
 * STREAM_ID, CPU, PERIOD, BRANCH_STACK). EK_ERR_UNSUPPORTED for other sample_type bits. */
int ek_pw_sample_rec(ek_pw *w, uint16_t misc, uint64_t sample_type, const ek_pw_sample *s);

/* Offset in the output where the next record starts, and the same relative to the start of
 * the data section (file mode) or of the stream after the pipe header. */
uint64_t ek_pw_offset(const ek_pw *w);
uint64_t ek_pw_data_pos(const ek_pw *w);

/* ---- COMPRESSED streams ------------------------------------------------------------- */

/* Records between begin and end go through zstd and come out as COMPRESSED records (type 81,
 * unpadded) or, with type2, COMPRESSED2 (83: u64 data size, padded), each of at most chunk
 * bytes of compressed data. frame_bytes > 0 ends a zstd frame after every frame_bytes of
 * record bytes (records span frames); 0: one frame. */
int ek_pw_compress_begin(ek_pw *w, int type2, size_t chunk, size_t frame_bytes);
int ek_pw_compress_end(ek_pw *w);

/* ---- features ----------------------------------------------------------------------- */

/* Start a feature section (file mode: written at the end, the table in ascending bit order;
 * pipe mode: a HEADER_FEATURE record). Its bytes are written with ek_pw_u32 & co. */
void ek_pw_feature_begin(ek_pw *w, unsigned bit);
int ek_pw_feature_end(ek_pw *w);
/* A string feature (HOSTNAME, OSRELEASE, ...). */
int ek_pw_feature_string(ek_pw *w, unsigned bit, const char *s);
/* One BUILD_ID entry (inside ek_pw_feature_begin(w, EK_PERF_FEAT_BUILD_ID)): perf's
 * build_id_event with the size byte set (misc gets PERF_RECORD_MISC_BUILD_ID_SIZE). */
void ek_pw_build_id(ek_pw *w, int32_t pid, uint16_t misc, const uint8_t *id, uint8_t size,
                    const char *filename);
/* The AUXTRACE index of every AUXTRACE record written so far (file mode); simpleperf's
 * layout leaves out the leading count. */
int ek_pw_auxtrace_index(ek_pw *w, int simpleperf_layout);
/* Write 'size' as data.size in the header instead of the real size (damaged files). */
void ek_pw_set_data_size(ek_pw *w, uint64_t size);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
