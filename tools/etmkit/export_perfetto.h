/* etmkit export --format=perfetto (export_perfetto.c). */
#ifndef ETMKIT_CLI_EXPORT_PERFETTO_H
#define ETMKIT_CLI_EXPORT_PERFETTO_H

#include "cli_opts.h"

/* Decode with d's options (parsed; freed here) and write the timeline to out ('-' or NULL:
 * standard output). Returns the exit status, as script's. */
int export_perfetto(cli_decode *d, const char *out);

#endif
