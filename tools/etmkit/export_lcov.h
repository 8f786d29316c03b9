/* etmkit export --format=lcov: the coverage of a profile as an lcov tracefile (export_lcov.c). */
#ifndef ETMKIT_EXPORT_LCOV_H
#define ETMKIT_EXPORT_LCOV_H

#include "cli_opts.h"
#include "etmkit/profile.h"

/* lcov records of every binary of p whose ELF file is found (as perf finds it: symfs, the
 * build-id cache, debug files; the kernel: --vmlinux), or of the one --binary names (binary,
 * NULL: all). Prints its own messages; returns a CLI_* status. */
int export_lcov(const ek_profile *p, const char *binary, const cli_decode *d, ek_sbuf *out);

#endif
