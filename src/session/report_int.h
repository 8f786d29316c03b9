/* The report's parts shared by report.c (the account, its header and layout) and
 * report_causes.c (the causes). Private to src/session. */
#ifndef ETMKIT_SESSION_REPORT_INT_H
#define ETMKIT_SESSION_REPORT_INT_H

#include "session/session_int.h"

/* Where the report goes: numbered causes (problems: trace that did not become samples), and
 * notes (worth knowing, not problems) under their own heading, listed with --verbose only. */
typedef struct rep {
    ek_sbuf causes, notes;
    int ncauses, nnotes;
    int level;
} rep;

/* A new numbered cause (its text follows in r->causes); a new note (its text goes to the
 * returned buffer). */
void rep_cause(rep *r);
ek_sbuf *rep_note(rep *r);

extern const char *const rep_kernel_remedy;
void rep_hexid(ek_sbuf *out, const uint8_t *id, size_t len);
void rep_plural(ek_sbuf *out, uint64_t n, const char *one, const char *many);
/* "s" for a count other than one */
const char *rep_pl(uint64_t n);
/* A diagnostic's own text on one line: control characters as \xNN, one final '.' dropped. */
void rep_put_msg(ek_sbuf *out, const char *m);

/* report_causes.c */
int rep_aux_problems(ek_session *s, rep *r);
void rep_one_miss(ek_session *s, rep *r, const miss *m);
void rep_diag_groups(ek_session *s, rep *r);
/* qsort order of diagnostic groups (const diag_group **): the report's */
int rep_group_cmp(const void *a, const void *b);

#endif
