/* The decoding options shared by `etmkit script` and `etmkit doctor`: one parser, one help
 * text, one set of checks, one way to open the session and to choose the exit status. */
#ifndef ETMKIT_CLI_OPTS_H
#define ETMKIT_CLI_OPTS_H

#include <stdio.h>

#include "etmkit/filter.h"
#include "etmkit/account_out.h"
#include "etmkit/script.h"
#include "etmkit/session.h"

typedef struct cli_decode {
    const char *cmd;         /* "script" or "doctor" (for messages) */
    ek_session_opts so;      /* so.filter points at filter when a filter is given */
    ek_sample_filter filter; /* -C, --pid, --tid, --comm, --time */
    ek_script_fields fields; /* -F (doctor: checked, not used) */
    const char *input;       /* FILE or -i FILE; "perf.data" when neither is given */
    int input_given;
    int quiet, verbose, strict, ns;
    int json;                /* doctor --format=json */
    /* how each file option was spelt, for messages ("-k" or "--vmlinux") */
    const char *vmlinux_opt, *kallsyms_opt, *kcore_opt, *symfs_opt, *buildid_opt, *jitdump_opt;
    /* the session's diagnostics sink: it lives as long as the session (cli_decode_free) */
    ek_diag_collector *diags;
    ek_sbuf first_error;
} cli_decode;

/* Parse argv (argv[0] is the subcommand's name). usage() prints the command's --help text.
 * Returns -1 to go on, or the exit status to return at once: 0 after --help, 2 after a usage
 * error (one line on stderr with a hint). */
int cli_decode_parse(cli_decode *d, const char *cmd, int argc, char **argv, void (*usage)(FILE *));

/* The options' lines of the --help text, shared by both commands. */
void cli_decode_help(FILE *f);

/* Check the input and the file options before decoding; prints one line and returns the exit
 * status (1: the input cannot be read or is not a recording; 2: an option names a missing or
 * wrong file), or -1 when all is well. */
int cli_decode_check(cli_decode *d);

/* Open the session; on failure prints what went wrong and returns the exit status (1, or 2
 * when an option does not apply to this recording); -1 with *s set on success. */
int cli_decode_open(cli_decode *d, ek_session **s);

/* Exit status after a run that returned rc: 1 when rc failed, when no sample at all came out
 * while problems were found, or with --strict when any problem was found; else 0. */
int cli_decode_status(cli_decode *d, ek_session *s, int rc);

/* After ek_session_free. */
void cli_decode_free(cli_decode *d);

#endif
