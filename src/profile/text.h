/* Line-by-line reading of profile text, with the line number and byte offset of each line for
 * diagnostics, and the number syntax the profile formats share. */
#ifndef ETMKIT_PROFILE_TEXT_H
#define ETMKIT_PROFILE_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* internal to the library: not exported from libetmkit.so */
#define PROF_HIDDEN __attribute__((visibility("hidden")))

#include "etmkit/diag.h"

typedef struct prof_lines {
    const char *text;
    size_t len;
    size_t pos;        /* where the next line starts */
    const char *line;  /* the current line (no line end; a trailing CR dropped) */
    size_t n;          /* its length */
    int64_t lineno;    /* from 1 */
    size_t line_start; /* its byte offset */
    const char *fname;
    const ek_diag *diag;
    int reported; /* an error was reported (only the first is) */
} prof_lines;

PROF_HIDDEN void prof_lines_init(prof_lines *l, const char *text, size_t len, const char *fname,
                                 const ek_diag *diag);
/* Next line: 1, or 0 at the end of the text. */
PROF_HIDDEN int prof_lines_next(prof_lines *l);
/* Report a malformed current line (the first report only) and return EK_ERR_FORMAT. */
PROF_HIDDEN int prof_lines_error(prof_lines *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Parse at s[*i]: hexadecimal digits (at least one, at most 16 significant) or decimal digits
 * (at most UINT64_MAX). Return 0 and advance *i, or -1. */
PROF_HIDDEN int prof_parse_hex(const char *s, size_t n, size_t *i, uint64_t *v);
PROF_HIDDEN int prof_parse_dec(const char *s, size_t n, size_t *i, uint64_t *v);
/* Does s[*i..] start with lit? Then advance past it. */
PROF_HIDDEN int prof_eat(const char *s, size_t n, size_t *i, const char *lit);

#endif
