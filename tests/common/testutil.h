/* Helpers shared by the unit tests. Include after <setjmp.h>, <stdarg.h>, <stddef.h>, <cmocka.h>.
 */
#ifndef ETMKIT_TESTUTIL_H
#define ETMKIT_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/elem.h"
#include "etmkit/isa.h"

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

/* Field-by-field comparisons (never memcmp a struct: its padding holds anything). Each returns
 * NULL when equal, else the name of the first field that differs. An element's union is
 * compared through the member its type uses. */
const char *tu_insn_diff(const ek_insn *a, const ek_insn *b);
const char *tu_pe_context_diff(const ek_pe_context *a, const ek_pe_context *b);
const char *tu_elem_diff(const ek_elem *a, const ek_elem *b);
/* Arrays of n elements: NULL when equal, else a static description "elem <i>: <field>". */
const char *tu_elems_diff(const ek_elem *a, const ek_elem *b, size_t n);

#endif
