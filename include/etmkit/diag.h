/* Diagnostics: how the library reports problems in its input without printing.
 *
 * A module that finds damage (a malformed INI line, a bad packet, a record pointing outside
 * the file) calls the caller's sink with one ek_diag_event and carries on where it can.
 * Every event says where: file, record (or line), byte offset and trace ID when known.
 * ek_diag_collector (below) groups events by kind and file for one-line-per-group summaries.
 */
#ifndef ETMKIT_DIAG_H
#define ETMKIT_DIAG_H

#include <stdarg.h>
#include <stdint.h>
#include "etmkit/etmkit.h"
#include "etmkit/sbuf.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

typedef enum ek_severity {
    EK_SEV_NOTE = 0,  /* worth knowing, nothing lost */
    EK_SEV_WARN = 1,  /* some data could not be used; the rest was */
    EK_SEV_ERROR = 2, /* a whole input or unit could not be used */
} ek_severity;

typedef struct ek_diag_event {
    const char *kind; /* stable short identifier, e.g. "ini.malformed-line", "etm4.bad-packet" */
    ek_severity sev;
    int status;       /* related ek_status, or 0 */
    const char *file; /* file the problem is in, or NULL */
    int64_t record;   /* record / line / packet number, or -1 */
    int64_t offset;   /* byte offset in file (or stream), or -1 */
    int trace_id;     /* CoreSight trace ID, or -1 */
    const char *msg;  /* one line of text, no trailing newline */
} ek_diag_event;

typedef void (*ek_diag_fn)(void *ctx, const ek_diag_event *ev);

typedef struct ek_diag {
    ek_diag_fn fn; /* may be NULL: events are dropped */
    void *ctx;
} ek_diag;

/* Build and send an event; msg is printf-formatted.  Safe with d == NULL. */
void ek_diag_emit(const ek_diag *d, ek_severity sev, const char *kind, int status,
                  const char *file, int64_t record, int64_t offset, int trace_id,
                  const char *fmt, ...) __attribute__((format(printf, 9, 10)));
void ek_diag_vemit(const ek_diag *d, ek_severity sev, const char *kind, int status,
                   const char *file, int64_t record, int64_t offset, int trace_id,
                   const char *fmt, va_list ap);

/* Format one event as a single line: "file: record N: offset 0xOFF: ID 0xNN: msg [kind]"
 * (control characters of file and msg as \xNN, a trailing line end dropped). */
void ek_diag_format(ek_sbuf *out, const ek_diag_event *ev);

/* A collector groups events by kind and file, keeping counts and the first keep_per_kind
 * events of each group (keep_per_kind 0: by kind alone, no events kept). */
typedef struct ek_diag_collector ek_diag_collector;

ek_diag_collector *ek_diag_collector_new(unsigned keep_per_kind);
void ek_diag_collector_free(ek_diag_collector *c);
/* A sink that feeds the collector (optionally forwarding every event to 'next'). */
ek_diag ek_diag_collector_sink(ek_diag_collector *c);
void ek_diag_collector_forward(ek_diag_collector *c, const ek_diag *next);
uint64_t ek_diag_collector_count(const ek_diag_collector *c, ek_severity min_sev);
uint64_t ek_diag_collector_count_kind(const ek_diag_collector *c, const char *kind);
/* One line per group (kind and file), most severe first:
 * "N x first event text [kind] (also at offsets a, b, ...)", the offsets being those of the
 * next kept events, in the same file. A kind found in more than max(keep_per_kind, 1) files
 * gets one line for the files after those: "N x kind in M more files".
 * With verbose != 0, every kept event is listed on its own line. */
void ek_diag_collector_summary(const ek_diag_collector *c, ek_sbuf *out, int verbose);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
