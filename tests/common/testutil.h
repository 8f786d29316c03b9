/* Helpers shared by the unit tests. Include after <setjmp.h>, <stdarg.h>, <stddef.h>, <cmocka.h>.
 */
#ifndef ETMKIT_TESTUTIL_H
#define ETMKIT_TESTUTIL_H

#include <elf.h>
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

/* Skip the running cmocka test, saying why ("SKIP: <why>" on stdout). A program run through
 * tu_run_group exits 77 when its tests were skipped and none failed, so that ctest reports it
 * as skipped, not passed. cmocka's own skip() would count as a pass: it is made unusable here. */
void tu_note_skip(const char *why);
#define tu_skip(why) (tu_note_skip(why), _skip(__FILE__, __LINE__))
#undef skip
#define skip() use_tu_skip_with_a_reason_instead_of_skip

/* Runs a cmocka group. With a test name as argv[1], runs only that test (tests/CMakeLists.txt
 * registers every test function as its own ctest test). Returns 0 when every test that ran
 * passed, 77 when one was skipped and none failed, 1 otherwise (a name not in the group too). */
struct CMUnitTest;
int tu_run(int argc, char **argv, const char *group, const struct CMUnitTest *tests, size_t n,
           int (*setup)(void **), int (*teardown)(void **));
#define tu_run_group(argc, argv, tests, setup, teardown)                                           \
    tu_run(argc, argv, #tests, tests, sizeof(tests) / sizeof((tests)[0]), setup, teardown)
/* A fresh temporary directory (removed by tu_rmtree). */
char *tu_tmpdir(void);
void tu_rmtree(const char *path);
/* Write bytes to dir/name; returns the full path (caller frees). */
char *tu_write_file(const char *dir, const char *name, const void *data, size_t len);
/* The header of a little-endian AArch64 ELF64 file of this e_type at img (zeroed first, size
 * bytes), with phnum program headers right after it: returns the first (zeroed). */
Elf64_Phdr *tu_elf64(uint8_t *img, size_t size, int type, int phnum);
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
