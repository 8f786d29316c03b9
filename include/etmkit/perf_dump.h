/* Listings of a perf.data file: header, attributes, features, records, cs_etm configuration
 * and AUX slices, as text (one line per item, in the spirit of `perf report -D`) or JSON.
 * Every function appends to an ek_sbuf; callers flush it as they like. */
#ifndef ETMKIT_PERF_DUMP_H
#define ETMKIT_PERF_DUMP_H

#include "etmkit/perf.h"
#include "etmkit/sbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ek_perf_dump_format {
    EK_PERF_DUMP_TEXT = 0,
    EK_PERF_DUMP_JSON = 1, /* each function emits one JSON value (object or array element) */
} ek_perf_dump_format;

/* File header, attributes and feature sections. JSON: an object with "header", "attrs",
 * "features" members (no surrounding braces: the caller composes the document). */
void ek_perf_dump_file(ek_sbuf *out, const ek_perf_file *f, ek_perf_dump_format fmt);

/* One record. Text: one line; JSON: one object. */
void ek_perf_dump_record(ek_sbuf *out, const ek_perf_record *rec, ek_perf_dump_format fmt);

/* The cs_etm configuration. Text: a few lines; JSON: an object (null when absent). */
void ek_perf_dump_config(ek_sbuf *out, const ek_perf_file *f, ek_perf_dump_format fmt);

/* Queue i's header line (text) or the opening of its object (JSON: '{"cpu":..,"slices":[').
 * Then one call per slice, then ek_perf_dump_queue_end. */
void ek_perf_dump_queue(ek_sbuf *out, const ek_perf_file *f, const ek_perf_queues *q, size_t i,
                        ek_perf_dump_format fmt);
void ek_perf_dump_slice(ek_sbuf *out, const ek_perf_file *f, const ek_perf_queues *q,
                        const ek_perf_slice *s, size_t nth, ek_perf_dump_format fmt);
void ek_perf_dump_queue_end(ek_sbuf *out, ek_perf_dump_format fmt);
/* AUXTRACE buffers with their coverage, trace ID maps and counts of empty / data-less AUX
 * records. Text: lines; JSON: '"buffers":[...],"idmaps":[...],...' members. */
void ek_perf_dump_slice_summary(ek_sbuf *out, const ek_perf_file *f, const ek_perf_queues *q,
                                ek_perf_dump_format fmt);

/* JSON string (quoted, escaped). */
void ek_json_string(ek_sbuf *out, const char *s);

#ifdef __cplusplus
}
#endif
#endif
