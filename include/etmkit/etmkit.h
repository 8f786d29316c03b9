/* etmkit: CoreSight ETMv4/ETE trace toolkit -- public entry header.
 *
 * Conventions (shared by every public header under etmkit/):
 *  - functions return an int status: 0 (EK_OK) or a negative ek_status code;
 *  - objects are created with ek_<thing>_new / _open and released with ek_<thing>_free;
 *  - the library never prints: problems found in the input are reported through an
 *    ek_diag sink (see etmkit/diag.h) and formatted text goes into an ek_sbuf.
 */
#ifndef ETMKIT_ETMKIT_H
#define ETMKIT_ETMKIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

#define ETMKIT_VERSION_MAJOR 0
#define ETMKIT_VERSION_MINOR 1
#define ETMKIT_VERSION_PATCH 0
#define ETMKIT_VERSION_STRING "0.1.0"

typedef enum ek_status {
    EK_OK = 0,
    EK_ERR_NOMEM = -1,       /* allocation failed */
    EK_ERR_IO = -2,          /* a file could not be opened or read */
    EK_ERR_FORMAT = -3,      /* input does not follow its format */
    EK_ERR_TRUNCATED = -4,   /* input ends before a structure is complete */
    EK_ERR_UNSUPPORTED = -5, /* valid input this version does not handle */
    EK_ERR_ARG = -6,         /* invalid argument from the caller */
    EK_ERR_NOT_FOUND = -7,   /* a named thing does not exist */
    EK_ERR_RANGE = -8,       /* a value or offset is out of its range */
    EK_ERR_NOSYNC = -9,      /* trace not synchronised */
    EK_ERR_BAD_PACKET = -10, /* a trace packet is malformed or reserved */
    EK_ERR_NO_MEMORY_IMAGE = -11, /* code at an address is not available */
    EK_ERR_LIMIT = -12,      /* a safety limit (size, depth, count) was reached */
    EK_ERR_EOS = -13,        /* end of stream: nothing more to return */
} ek_status;

/* Short English text for a status code (never NULL). */
const char *ek_strerror(int status);

/* Library version as "MAJOR.MINOR.PATCH". */
const char *ek_version(void);

/* Progress of a long run (decoding a recording, simulating one): done of total bytes of
 * trace. Long-running calls whose options carry one call it from the caller's own thread
 * only, a few times per slice or block of trace at most (never per byte), and once more at
 * the end. done never exceeds total; total may be 0 when it is not known. */
typedef void (*ek_progress_fn)(void *ctx, uint64_t done, uint64_t total);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
