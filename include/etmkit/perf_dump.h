/* Listings of a perf.data file: header, attributes, features, records, cs_etm configuration
 * and AUX slices, as text (one line per item, in the spirit of `perf report -D`) or JSON.
 * Every function appends to an ek_sbuf; callers flush it as they like. */
#ifndef ETMKIT_PERF_DUMP_H
#define ETMKIT_PERF_DUMP_H

#include "etmkit/diag.h"
#include "etmkit/flow.h"
#include "etmkit/perf.h"
#include "etmkit/sbuf.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

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

/* ---- the trace of the AUX slices: packets and elements --------------------------------- */

typedef enum ek_perf_trace_format {
    EK_PERF_TRACE_PERF = 0, /* the packet lines `perf report -D` prints (each after a tab; as a
                               packet sink sees them), element lines likewise */
    EK_PERF_TRACE_OCSD,     /* trc_pkt_lister's lines (with --decode: raw bytes, log lines) */
    EK_PERF_TRACE_JSON,     /* one JSON object per slice, its packets and elements in "items" */
} ek_perf_trace_format;

typedef struct ek_perf_trace_opts {
    uint32_t size; /* sizeof(ek_perf_trace_opts), set by ek_perf_trace_opts_init */
    ek_perf_trace_format format;
    int elements;    /* also the flow decoders' elements */
    ek_flow_mem mem; /* code for the flow decoders (find == NULL: none, code is ADDR_NACC) */
    const ek_diag *diag;
} ek_perf_trace_opts;

void ek_perf_trace_opts_init(ek_perf_trace_opts *o);

/* The trace of a file's AUX slices, listed where perf report -D lists it: after each AUXTRACE
 * record, every AUX slice of the buffers with that record's reference, queue by queue in AUX
 * record order (as perf splits buffers on AUX records and dumps them, cs-etm.c
 * dump_queued_data: a reference shared by several records, as simpleperf's 0, lists its
 * slices again at each), each decoded by its queue's decode tree from a reset (the slice's
 * trace ID map, formatted or raw as the slice is; packet indices are AUX-area offsets, as
 * perf's). */
typedef struct ek_perf_tracer ek_perf_tracer;
int ek_perf_tracer_new(const ek_perf_file *f, const ek_perf_queues *q, const ek_perf_trace_opts *o,
                       ek_perf_tracer **out);
void ek_perf_tracer_free(ek_perf_tracer *t);
/* After record rec of a record listing: its trace, if it is an AUXTRACE record (text: lines;
 * JSON: ",\n{...}" per slice, to follow the record's object in an array). Returns 0 or
 * EK_ERR_NOMEM. */
int ek_perf_dump_record_trace(ek_sbuf *out, ek_perf_tracer *t, const ek_perf_record *rec);
/* The trace of the buffers no record listing showed (found through the AUXTRACE index only). */
int ek_perf_dump_rest_trace(ek_sbuf *out, ek_perf_tracer *t);

/* ek_json_string (a JSON string, quoted and escaped) is in etmkit/sbuf.h. */

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
