/* INI reader for snapshot files (snapshot.ini, device files, trace.ini): what ek_snapshot_open
 * reads them with, public so that the INI fuzz target (fuzz/fuzz_ini.c) builds against the
 * public API.
 *
 * What it accepts (the dialect DS-5 / OpenCSD snapshots are written in):
 *  - "[name]" section headers; sections are kept in file order, and a name that appears
 *    twice gives two sections (lookups return the first; ek_ini_next_section walks on).
 *  - "key = value" lines; white space around the key, '=' and the value is dropped. Keys keep
 *    their order and repeated keys are all kept (trace.ini repeats "cpu_0=" for one core with
 *    several trace sessions).
 *  - Comments: a ';' or '#' starts a comment wherever it appears on a line, as in the
 *    reference parser (so "length=0x100 ; bytes" has the value "0x100"). Values therefore
 *    cannot contain ';' or '#'.
 *  - LF or CRLF line ends (anything after a '\r' on a line is ignored), blank lines, a UTF-8
 *    byte order mark at the start.
 *  - Section and key lookups ignore ASCII case; names are stored as written.
 * Malformed lines -- no '=', an empty key, a key before any section, an unterminated '[',
 * a NUL byte -- each give one "ini.malformed-line" warning (file, 1-based line number, byte
 * offset of the line start) and are skipped. Keys after a broken section header are dropped
 * until the next good header (the header's warning says so).
 * There are no fixed-size limits: the file is copied once and every name and value points
 * into that copy, so memory is bounded by the file size.
 */
#ifndef ETMKIT_INI_H
#define ETMKIT_INI_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/diag.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

typedef struct ek_ini_kv {
    const char *key;   /* trimmed, never empty */
    const char *value; /* trimmed, may be "" */
    uint64_t line;     /* 1-based line number */
    uint64_t offset;   /* byte offset of the line start in the file */
} ek_ini_kv;

typedef struct ek_ini_section {
    const char *name; /* trimmed text between the brackets (may be "") */
    uint64_t line;
    uint64_t offset;
    ek_ini_kv *kv;
    size_t nkv;
} ek_ini_section;

typedef struct ek_ini {
    char *path; /* as given to ek_ini_load / ek_ini_parse (for diagnostics), or NULL */
    ek_ini_section *sec;
    size_t nsec;
    uint64_t nmalformed; /* lines reported and skipped */
    char *text_;         /* private: the copy all strings point into */
    ek_ini_kv *kvs_;     /* private: all key/value pairs */
} ek_ini;

/* Parse text[0..len) (need not be NUL-terminated). 'fname' is used in diagnostics and
 * copied into ini->path. Returns 0 or EK_ERR_NOMEM; malformed lines are not errors. */
int ek_ini_parse(const char *text, size_t len, const char *fname, const ek_diag *diag,
                 ek_ini **out);
/* Read and parse a file. Returns EK_ERR_IO (errno kept, no diagnostic: the caller knows why
 * it wanted the file and says so) or what ek_ini_parse returns. Only a regular file is read:
 * anything else is EK_ERR_IO with errno EINVAL (a FIFO, whose reading would wait for a writer,
 * a device such as /dev/zero, which never ends) or EISDIR, so memory stays bounded by the
 * file's size. */
int ek_ini_load(const char *path, const ek_diag *diag, ek_ini **out);
void ek_ini_free(ek_ini *ini);

/* First section named 'name' (case-insensitive), or NULL. */
const ek_ini_section *ek_ini_section_find(const ek_ini *ini, const char *name);
/* Next section after 'prev' with the same name (case-insensitive), or NULL. */
const ek_ini_section *ek_ini_next_section(const ek_ini *ini, const ek_ini_section *prev);

/* The first pair whose key is 'key' (case-insensitive), or NULL. sec may be NULL. */
const ek_ini_kv *ek_ini_find(const ek_ini_section *sec, const char *key);
/* Value of the first 'key', or NULL when absent. */
const char *ek_ini_get(const ek_ini_section *sec, const char *key);
/* Value of 'key' in the first section 'section', or NULL. */
const char *ek_ini_lookup(const ek_ini *ini, const char *section, const char *key);
/* Walk the repeats of a key: start with *pos = 0; returns NULL when there are no more. */
const ek_ini_kv *ek_ini_find_next(const ek_ini_section *sec, const char *key, size_t *pos);

/* Parse an unsigned number as the reference tools do (strtoull base 0: "0x1F", "31", "037"),
 * with optional surrounding quotes. Returns 1 when the whole string was a number that fits
 * in 64 bits. */
int ek_ini_parse_u64(const char *s, uint64_t *v);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
