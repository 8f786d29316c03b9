/* A small perf.data writer for tests: builds files byte by byte, in either byte order, in
 * file or pipe mode, with any record (also malformed ones) and COMPRESSED streams.
 *
 *   pw w; pw_init(&w, be, pipe);
 *   pw_attr(&w, &attr, ids, nids);            // file mode: header attrs; pipe: HEADER_ATTR
 *   pw_begin(&w, type, misc); pw_u32(&w, ..); ...; pw_sid(&w, st, &sid); pw_end(&w);
 *   uint8_t *file = pw_finish(&w, &len);        // caller frees
 */
#ifndef ETMKIT_TEST_PERFW_H
#define ETMKIT_TEST_PERFW_H

#include <stddef.h>
#include <stdint.h>

typedef struct pw_buf {
    uint8_t *p;
    size_t len, cap;
} pw_buf;

typedef struct pw_attr_desc {
    uint32_t type;
    uint32_t size; /* attr.size written (64..136); 0 -> 128 */
    uint64_t config, sample_period, sample_type, read_format, flags;
    uint64_t config1, config2, config3;
} pw_attr_desc;

typedef struct pw_sid {
    uint32_t pid, tid;
    uint64_t time, id, stream_id;
    uint32_t cpu;
} pw_sid;

#define PW_MAX_ATTRS    8
#define PW_MAX_FEATS    32
#define PW_MAX_AUXTRACE 256

typedef struct pw {
    int be, pipe;
    pw_buf data;      /* the data section (or the stream after the pipe header) */
    pw_buf *cur;      /* where records go: &data or &zstage */
    pw_buf zstage;    /* records to be compressed */
    size_t rec_start; /* start of the open record in *cur */
    int attr_count;
    pw_buf attrs[PW_MAX_ATTRS];
    uint64_t *ids[PW_MAX_ATTRS];
    size_t nids[PW_MAX_ATTRS];
    uint32_t attr_file_size; /* attr_size of the header: attr.size + 16 */
    int nfeat;
    unsigned feat_bit[PW_MAX_FEATS];
    pw_buf feat[PW_MAX_FEATS];
    size_t auxtrace_at[PW_MAX_AUXTRACE]; /* data-relative offsets of AUXTRACE records */
    size_t nauxtrace;
    uint64_t data_size_override; /* nonzero: written as data.size */
} pw;

void pw_init(pw *w, int be, int pipe);
void pw_free(pw *w);

/* Raw appends to a buffer in the writer's byte order. */
void pwb_u8(pw *w, pw_buf *b, uint8_t v);
void pwb_u16(pw *w, pw_buf *b, uint16_t v);
void pwb_u32(pw *w, pw_buf *b, uint32_t v);
void pwb_u64(pw *w, pw_buf *b, uint64_t v);
void pwb_bytes(pw_buf *b, const void *p, size_t n);
/* perf header string: u32 len (incl. NUL, padded to 64) + bytes */
void pwb_hstring(pw *w, pw_buf *b, const char *s);

/* Records (into the current target). pw_end pads the record to 8 bytes (unless nopad) and
 * patches header.size; pw_end_size writes 'size' instead (for malformed records). */
void pw_begin(pw *w, uint32_t type, uint16_t misc);
void pw_u8(pw *w, uint8_t v);
void pw_u16(pw *w, uint16_t v);
void pw_u32(pw *w, uint32_t v);
void pw_u64(pw *w, uint64_t v);
void pw_bytes(pw *w, const void *p, size_t n);
void pw_str(pw *w, const char *s); /* NUL-terminated, padded to 8 */
void pw_sid_trailer(pw *w, uint64_t sample_type, const pw_sid *s);
void pw_end(pw *w);
void pw_end_nopad(pw *w);
void pw_end_size(pw *w, uint16_t size);
/* Data-relative offset where the next record will start. */
size_t pw_pos(const pw *w);

/* Attributes. Writes the attr bytes (attr.size) including the bit-field word, ids. */
void pw_attr(pw *w, const pw_attr_desc *a, const uint64_t *ids, size_t nids);
void pw_attr_bytes(pw *w, pw_buf *b, const pw_attr_desc *a);

/* Features: file mode collects sections; pipe mode emits HEADER_FEATURE records. */
pw_buf *pw_feature_begin(pw *w, unsigned bit);
void pw_feature_end(pw *w, unsigned bit, pw_buf *b);
void pw_feature_string(pw *w, unsigned bit, const char *s);
/* AUXTRACE index from the AUXTRACE records written so far (file mode). */
void pw_auxtrace_index(pw *w, int simpleperf_variant);

/* Common records. */
void pw_mmap2(pw *w, uint64_t st, const pw_sid *s, uint32_t pid, uint32_t tid, uint64_t addr,
              uint64_t len, uint64_t pgoff, const char *name);
void pw_comm(pw *w, uint64_t st, const pw_sid *s, uint32_t pid, uint32_t tid, const char *comm);
void pw_aux(pw *w, uint64_t st, const pw_sid *s, uint64_t aux_offset, uint64_t aux_size,
            uint64_t flags);
void pw_itrace_start(pw *w, uint64_t st, const pw_sid *s, uint32_t pid, uint32_t tid);
void pw_hw_id(pw *w, uint64_t st, const pw_sid *s, uint64_t hw_id);
/* AUXTRACE record header alone: it claims 'size' bytes of payload that the caller writes, or
 * not (a record cut short). */
void pw_auxtrace_head(pw *w, uint64_t size, uint64_t offset, uint64_t ref, uint32_t idx,
                      uint32_t tid, int32_t cpu);
/* AUXTRACE record + payload (payload may be NULL: 'size' bytes of 0xA5 pattern). */
void pw_auxtrace(pw *w, uint64_t size, uint64_t offset, uint64_t ref, uint32_t idx, uint32_t tid,
                 int32_t cpu, const uint8_t *payload);
/* AUXTRACE_INFO: type, then words[] (already including version/pmu/snapshot head). */
void pw_auxtrace_info(pw *w, uint32_t type, const uint64_t *words, size_t nwords);
void pw_time_conv(pw *w, uint64_t shift, uint64_t mult, uint64_t zero, uint64_t cycles,
                  uint64_t mask, int cap_zero, int cap_short, int old_size);

/* COMPRESSED streams: records written between begin and end go through zstd and come out as
 * COMPRESSED (type 81) or COMPRESSED2 (83) records of at most 'chunk' data bytes each, the
 * stream cut into 'frames' zstd frames at arbitrary byte positions (records span both). */
void pw_compress_begin(pw *w);
void pw_compress_end(pw *w, int type2, size_t chunk, int frames);

/* Assemble the file. Returns malloc'd bytes. */
uint8_t *pw_finish(pw *w, size_t *len);

/* Open bytes with ek_perf_open_mem and a fresh collector (kept per kind: 16). */
#include "etmkit/perf.h"
ek_perf_file *pw_open(const uint8_t *buf, size_t len, ek_diag_collector **coll);
#endif
