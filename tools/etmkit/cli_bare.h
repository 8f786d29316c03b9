/* A bare trace file and its configuration from options (--trace FILE, --framing, --protocol,
 * --reg, --trace-id, --arch, --config-from=DIR[:DEVICE] or DEVICE.ini): the snapshot those options
 * describe (ek_snapshot_from_trace, etmkit/snapshot.h), for the commands that read snapshot
 * folders. */
#ifndef ETMKIT_CLI_BARE_H
#define ETMKIT_CLI_BARE_H

#include <stddef.h>

#include "etmkit/snapshot.h"

typedef struct cli_bare_src {
    char *name, *type, *core; /* owned */
    ek_bare_reg *regs;        /* names owned */
    size_t nregs;
    int trace_id;              /* -1: from the registers */
    const char *opt;           /* the option that made it (for messages) */
    ek_buffer_format from_fmt; /* --config-from: the format of the device's buffer */
    int from_dir_all;          /* one of the sources of --config-from=DIR (no device) */
} cli_bare_src;

typedef struct cli_bare {
    const char *trace;   /* --trace FILE */
    const char *framing; /* --framing=..., NULL: not given */
    cli_bare_src *srcs;
    size_t nsrcs;
    const char *first_opt; /* the first option given (for "needs --trace") */
} cli_bare;

/* Options of the form --NAME=VALUE or --NAME VALUE: the value, advancing *i for the second
 * form; NULL when argv[*i] is not --NAME. */
const char *cli_opt_value(const char *name, int argc, char **argv, int *i);

/* argv[*i] when it is one of the options above: takes it (and its value) and returns -1, or
 * prints one line and returns CLI_USAGE / CLI_FAIL. 0 when it is none of them. */
int cli_bare_arg(cli_bare *b, const char *cmd, int argc, char **argv, int *i);

/* 1 when an option of a bare trace file was given. */
int cli_bare_given(const cli_bare *b);

/* After the options: check them against each other (and against a command's own --tpiu,
 * --tpiu-hsync, --dstream) and build the snapshot. Sets *dstream for --framing=dstream (a
 * DSTREAM capture is read as its records). Returns 0, or prints one line naming the
 * option and returns CLI_USAGE (options) or CLI_FAIL (a file that cannot be read). */
int cli_bare_open(cli_bare *b, const char *cmd, const ek_diag *diag, int *tpiu, int *tpiu_hsync,
                  int *dstream, ek_snapshot **out);

void cli_bare_free(cli_bare *b);

#endif
