/* The key diagnostics are grouped by, in dump's collector (diag.c) and in the session's
 * (session/sdiag.c): their kind and their file (NULL: none, apart from every named file). */
#ifndef ETMKIT_CORE_DIAGKEY_H
#define ETMKIT_CORE_DIAGKEY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* FNV-1a over the kind, a separator that tells a NULL file from "", and the file */
static inline size_t ek_diag_key_hash(const char *kind, const char *file)
{
    uint64_t h = 14695981039346656037u;
    for (const char *p = kind; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211u;
    h = (h ^ (file ? 1u : 2u)) * 1099511628211u;
    for (const char *p = file ? file : ""; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211u;
    return (size_t)(h ^ (h >> 32));
}

static inline int ek_diag_key_same_file(const char *a, const char *b)
{
    return a && b ? !strcmp(a, b) : a == b;
}

#endif
