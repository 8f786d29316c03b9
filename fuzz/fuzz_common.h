/* Helpers shared by the fuzz targets (fuzz/fuzz_*.c).
 *
 * Each target defines LLVMFuzzerTestOneInput(). It is linked either with libFuzzer
 * (build-fuzz/, `make fuzz`) or with replay_main.c, a standalone driver that feeds files and
 * folders to it (the ctest replays of fuzz/corpus/<target>/ and of ../shared data).
 *
 * A target may also define fuzz_pack_path(): turn a seed that is not one file (a snapshot
 * folder) into one input. replay_main uses it to replay such seeds and, with --pack, to write
 * them out as libFuzzer seeds.
 */
#ifndef ETMKIT_FUZZ_COMMON_H
#define ETMKIT_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken invariant is a finding: say which one, then abort (libFuzzer saves the input). */
void fuzz_fail_msg(const char *file, int line, const char *what) __attribute__((noreturn));
#define FUZZ_CHECK(cond, what)                                                                 \
    do {                                                                                       \
        if (!(cond))                                                                           \
            fuzz_fail_msg(__FILE__, __LINE__, what);                                           \
    } while (0)

/* Optional (weak): pack the seed at 'path' into one fuzz input (malloc'ed).
 * Returns 1 when *out / *len were set, 0 when the path is not such a seed. */
int fuzz_pack_path(const char *path, uint8_t **out, size_t *len) __attribute__((weak));

/* A diag sink that checks every event says what and where in a usable way (kind and one-line
 * message present, severity in range, offset >= -1) and formats it; it aborts otherwise, so a
 * malformed diagnostic is a finding like a crash. Events also go to a collector whose summary
 * is built at fuzz_diag_end(). */
typedef struct fuzz_diag {
    ek_diag sink;
    ek_diag_collector *coll;
    uint64_t events;
} fuzz_diag;
void fuzz_diag_begin(fuzz_diag *fd);
void fuzz_diag_end(fuzz_diag *fd);

/* An anonymous in-memory file holding data; *path gets "/proc/self/fd/N" (static storage,
 * valid until fuzz_memfile_close). Returns the fd or -1. */
int fuzz_memfile(const char *name, const uint8_t *data, size_t size, char *path, size_t pathsz);
void fuzz_memfile_close(int fd);

/* A private temporary folder (created once per process, emptied by fuzz_tmpdir_clear). */
const char *fuzz_tmpdir(void);
void fuzz_tmpdir_clear(void);
/* Write data to <fuzz_tmpdir>/<name>; returns 0 or -1. */
int fuzz_write_file(const char *name, const uint8_t *data, size_t size);

/* A small cursor over the input for targets that take a few configuration bytes first. */
typedef struct fuzz_in {
    const uint8_t *p;
    size_t n;
} fuzz_in;
uint8_t fuzz_u8(fuzz_in *in);
uint32_t fuzz_u32(fuzz_in *in);
uint64_t fuzz_u64(fuzz_in *in);

/* A text sink that counts what it is given and keeps the last byte (to check that output
 * ends with a line end): ek_session_script's and ek_snapshot_list's writer. */
typedef struct fuzz_out {
    uint64_t bytes;
    char last;
} fuzz_out;
#define FUZZ_OUT_INIT {0, '\n'}
int fuzz_out_write(void *ctx, const char *text, size_t len);

#endif
