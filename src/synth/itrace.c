/* perf's --itrace option string (tools/perf/Documentation/itrace.txt). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "etmkit/synth.h"

/* perf script without --itrace (or with --itrace and no letters) asks for "ce": calls and
 * errors, no instructions samples (builtin-script.c sets default_no_sample, and
 * itrace_synth_opts__set_default then sets branches and calls, not instructions). perf 6.1's
 * cs-etm ignores 'c' and makes a sample of every branch: those are the samples here. */
void ek_itrace_default(ek_itrace *o)
{
    memset(o, 0, sizeof *o);
    o->period = EK_ITRACE_DEFAULT_PERIOD;
    o->period_type = EK_ITRACE_PERIOD_INSTRUCTIONS;
    o->branches = 1;
    o->errors = 1;
    o->last_branch_sz = EK_ITRACE_DEFAULT_LAST_BRANCH_SZ;
}

static void skip_sep(const char **p)
{
    while (**p == ' ' || **p == ',')
        (*p)++;
}

/* A decimal number at *p (digits only); returns 0 and advances, or -1 on overflow. */
static int read_u64(const char **p, uint64_t *out)
{
    uint64_t v = 0;
    const char *s = *p;
    while (isdigit((unsigned char)*s)) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
        s++;
    }
    *p = s;
    *out = v;
    return 0;
}

/* e / d take optional +flags / -flags (single letters); we accept and ignore them. */
static void skip_flags(const char **p)
{
    while (**p == '+' || **p == '-') {
        (*p)++;
        while (isalpha((unsigned char)**p))
            (*p)++;
    }
}

static int bad(ek_sbuf *err, const char *str, const char *why)
{
    if (err)
        ek_sbuf_printf(err, "bad --itrace options '%s': %s", str, why);
    return EK_ERR_ARG;
}

int ek_itrace_parse(const char *str, ek_itrace *o, ek_sbuf *err)
{
    int period_set = 0, type_set = 0;
    memset(o, 0, sizeof *o);
    o->set = 1;
    o->last_branch_sz = EK_ITRACE_DEFAULT_LAST_BRANCH_SZ;
    if (!str) {
        ek_itrace_default(o);
        o->set = 1;
        return 0;
    }
    const char *p = str;
    while (*p) {
        char c = *p++;
        switch (c) {
        case 'i':
            o->instructions = 1;
            skip_sep(&p);
            if (isdigit((unsigned char)*p)) {
                if (read_u64(&p, &o->period))
                    return bad(err, str, "period out of range");
                period_set = 1;
                skip_sep(&p);
                char u = *p;
                if (!u)
                    break;
                p++;
                if (u == 'i') {
                    o->period_type = EK_ITRACE_PERIOD_INSTRUCTIONS;
                } else if (u == 't') {
                    o->period_type = EK_ITRACE_PERIOD_TICKS;
                } else if (u == 'm' || u == 'u' || u == 'n') {
                    uint64_t mul = u == 'm' ? 1000000 : u == 'u' ? 1000 : 1;
                    if (*p++ != 's')
                        return bad(err, str, "period unit must be i, t, ns, us or ms");
                    if (o->period > UINT64_MAX / mul)
                        return bad(err, str, "period out of range");
                    o->period *= mul;
                    o->period_type = EK_ITRACE_PERIOD_NANOSECS;
                } else {
                    return bad(err, str, "period unit must be i, t, ns, us or ms");
                }
                type_set = 1;
            }
            break;
        case 'b':
            o->branches = 1;
            break;
        case 'c':
            o->branches = 1;
            o->calls = 1;
            break;
        case 'r':
            o->branches = 1;
            o->returns = 1;
            break;
        case 'e':
            o->errors = 1;
            skip_flags(&p);
            break;
        case 'd':
            skip_flags(&p);
            break;
        case 'l':
        case 'L':
        case 'g':
        case 'G': {
            uint64_t v = c == 'l' || c == 'L' ? EK_ITRACE_DEFAULT_LAST_BRANCH_SZ : 16;
            skip_sep(&p);
            if (isdigit((unsigned char)*p)) {
                /* 0 or too large: the message of the letter's own rule */
                int ok = !read_u64(&p, &v) && v != 0;
                if ((c == 'l' || c == 'L') && (!ok || v > EK_ITRACE_MAX_LAST_BRANCH_SZ))
                    return bad(err, str, "last-branch size must be 1..1024");
                if ((c == 'g' || c == 'G') && (!ok || v > 4096))
                    return bad(err, str, "call-chain size must be 1..4096");
            }
            if (c == 'l') {
                o->last_branch = 1;
                o->last_branch_sz = (uint32_t)v;
            } else if (c == 'g') {
                o->callchain = 1;
                o->callchain_sz = (uint32_t)v;
            }
            break;
        }
        case 's':
            if (!isdigit((unsigned char)*p))
                return bad(err, str, "s needs a number");
            if (read_u64(&p, &o->initial_skip))
                return bad(err, str, "skip count out of range");
            break;
        case 'Z':
            o->timeless = 1;
            break;
        case 'x': case 'w': case 'p': case 'o': case 'I': case 'f': case 'm': case 't':
        case 'a': case 'M': case 'q': case 'A': case ' ': case ',':
            break;
        default:
            if (err)
                ek_sbuf_printf(err, "bad --itrace options '%s': unknown letter '%c'", str, c);
            return EK_ERR_ARG;
        }
    }
    if (o->instructions) {
        if (!type_set)
            o->period_type = EK_ITRACE_PERIOD_INSTRUCTIONS;
        if (!period_set)
            o->period = EK_ITRACE_DEFAULT_PERIOD;
        if (o->period == 0)
            o->period = 1;
    }
    return 0;
}
