/* The doctor's account of a session: everything that did not become samples, and why. */
#include <string.h>

#include "etmkit/etmkit.h"
#include "session/session_int.h"

void ek_session_report(ek_session *s, ek_sbuf *out, int level)
{
    (void)level;
    ek_diag_collector_summary(s->coll, out, 0);
}
