/* The words for a session's account (etmkit/account.h): the doctor's text, the few lines
 * `etmkit script` prints on stderr, and JSON (`etmkit doctor --format=json`; its schema is in
 * docs/DOCTOR.md). The account is data; these render it, side by side.
 *
 *     ek_session_report(s, &text, EK_REPORT_FULL);   // take the account, render it, free it
 */
#ifndef ETMKIT_ACCOUNT_OUT_H
#define ETMKIT_ACCOUNT_OUT_H

#include "etmkit/account.h"
#include "etmkit/sbuf.h"
#include "etmkit/session.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

#define EK_REPORT_SUMMARY 0 /* a few lines: counts and the main remedies */
/* doctor: every cause (a problem) with its details and remedies; notes counted in one line */
#define EK_REPORT_FULL    1
#define EK_REPORT_VERBOSE 2 /* also every record, the notes, and diagnostic ids ("[kind]") */

/* The account as text, at a level (EK_REPORT_*). */
void ek_account_text(const ek_account *a, ek_sbuf *out, int level);

/* One item's text as the doctor words it (no number; lines after the first indented), at
 * EK_REPORT_FULL or EK_REPORT_VERBOSE. */
void ek_account_item_text(const ek_account *a, const ek_account_item *it, ek_sbuf *out,
                          int level);

/* The account as one JSON document (an object, then a newline): every fact, every AUX record
 * without data; level (EK_REPORT_FULL or EK_REPORT_VERBOSE) words each item's "text". */
void ek_account_json(const ek_account *a, ek_sbuf *out, int level);

/* What was not turned into samples, and why: the session's account as text (after a run;
 * before one, only what the file itself shows). Nothing is written if the account cannot be
 * taken (no memory). */
void ek_session_report(ek_session *s, ek_sbuf *out, int level);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
