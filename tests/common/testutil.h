/* Helpers shared by the unit tests. Include after <setjmp.h>, <stdarg.h>, <stddef.h>, <cmocka.h>. */
#ifndef ETMKIT_TESTUTIL_H
#define ETMKIT_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

/* The ../shared folder (from $ETMKIT_SHARED), or NULL when it is absent. */
const char *tu_shared_dir(void);
/* $ETMKIT_SHARED/testdata/<rel> if it exists, else NULL (caller frees). */
char *tu_shared_path(const char *rel);
/* Print "SKIP: <why>" and exit 77 (ctest reports the test as skipped). */
void tu_skip_all(const char *why) __attribute__((noreturn));
/* A fresh temporary directory (removed by tu_rmtree). */
char *tu_tmpdir(void);
void tu_rmtree(const char *path);
/* Write bytes to dir/name; returns the full path (caller frees). */
char *tu_write_file(const char *dir, const char *name, const void *data, size_t len);
/* Parse "01 0a ff" style hex into buf; returns the number of bytes. */
size_t tu_hex(const char *text, uint8_t *buf, size_t cap);

#endif
