/* Test conveniences over the library's perf.data writer (include/etmkit/perf_write.h): the
 * tests' short names for building files record by record, in either byte order, in file or
 * pipe mode, with any record (also malformed ones) and COMPRESSED streams. Every byte is
 * written by ek_pw; this file only fills its structures.
 *
 *   pw w; pw_init(&w, be, pipe);
 *   pw_attr(&w, &attr, ids, nids);            // file mode: header attrs; pipe: HEADER_ATTR
 *   pw_begin(&w, type, misc); pw_u32(&w, ..); ...; pw_sid_trailer(&w, st, &sid); pw_end(&w);
 *   uint8_t *file = pw_finish(&w, &len);        // caller frees
 */
#ifndef ETMKIT_TEST_PERFW_H
#define ETMKIT_TEST_PERFW_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/perf.h"
#include "etmkit/perf_write.h"

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

typedef struct pw_buf { /* a feature section being written */
    ek_pw *w;
} pw_buf;

typedef struct pw {
    ek_pw *w;
    pw_buf feat;
} pw;

void pw_init(pw *w, int be, int pipe);
void pw_free(pw *w);

/* Values into the open feature section b. */
void pwb_u8(pw *w, pw_buf *b, uint8_t v);
void pwb_u16(pw *w, pw_buf *b, uint16_t v);
void pwb_u32(pw *w, pw_buf *b, uint32_t v);
void pwb_u64(pw *w, pw_buf *b, uint64_t v);
void pwb_bytes(pw_buf *b, const void *p, size_t n);
void pwb_hstring(pw *w, pw_buf *b, const char *s);

/* Records: ek_pw_begin & co. */
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

void pw_attr(pw *w, const pw_attr_desc *a, const uint64_t *ids, size_t nids);

pw_buf *pw_feature_begin(pw *w, unsigned bit);
void pw_feature_end(pw *w, unsigned bit, pw_buf *b);
void pw_feature_string(pw *w, unsigned bit, const char *s);
void pw_auxtrace_index(pw *w, int simpleperf_variant);

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
void pw_auxtrace_info(pw *w, uint32_t type, const uint64_t *words, size_t nwords);
void pw_time_conv(pw *w, uint64_t shift, uint64_t mult, uint64_t zero, uint64_t cycles,
                  uint64_t mask, int cap_zero, int cap_short, int old_size);

/* COMPRESSED (type2: COMPRESSED2) records of at most chunk bytes, a zstd frame ending after
 * every frame_bytes of records (0: one frame). */
void pw_compress_begin(pw *w, int type2, size_t chunk, size_t frame_bytes);
void pw_compress_end(pw *w);
void pw_set_data_size(pw *w, uint64_t size);
/* Bytes outside any record (a payload). */
void pw_payload(pw *w, const void *p, size_t n);

/* Assemble the file. Returns malloc'd bytes (aborts on a writer error). */
uint8_t *pw_finish(pw *w, size_t *len);

/* Open bytes with ek_perf_open_mem and a fresh collector (kept per kind: 16). */
ek_perf_file *pw_open(const uint8_t *buf, size_t len, ek_diag_collector **coll);
#endif
