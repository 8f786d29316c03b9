/* The decoding options shared by `etmkit script`, `doctor`, `export` and `inject`: one parser,
 * one help text (each command's own subset), one set of checks, one way to open the session and
 * to choose the exit status. */
#ifndef ETMKIT_CLI_OPTS_H
#define ETMKIT_CLI_OPTS_H

#include <stdio.h>

#include "cli_bare.h"
#include "etmkit/filter.h"
#include "etmkit/account_out.h"
#include "etmkit/script.h"
#include "etmkit/session.h"

typedef struct cli_decode {
    const char *cmd;         /* "script", "doctor", ... (for messages) */
    ek_session_opts so;      /* so.filter points at filter when a filter is given */
    ek_sample_filter filter; /* -C, --pid, --tid, --comm, --time */
    ek_sample_filter cpus;   /* filter's CPUs alone (shares its list): the session's filter
                              * when the call stacks select after it (callindent, g) */
    ek_script_fields fields; /* -F, --ns (doctor: checked, not used) */
    const char *input;       /* FILE or -i FILE; "perf.data" when neither is given */
    int input_given;
    int quiet, verbose, strict, ns;
    int json;                /* doctor --format=json */
    /* how each file option was spelt, for messages ("-k" or "--vmlinux") */
    const char *vmlinux_opt, *kallsyms_opt, *kcore_opt, *symfs_opt, *buildid_opt, *jitdump_opt;
    /* the session's diagnostics sink: it lives as long as the session (cli_decode_free) */
    ek_diag_collector *diags;
    ek_sbuf first_error;
    struct ek_image_spec *images; /* --image (so.images points at them) */
    size_t nimages;
    int snapshot;            /* the input is a trace snapshot folder (cli_decode_check) */
    cli_bare bare;           /* --trace FILE and its configuration (cli_bare.h) */
    ek_snapshot *bare_ss;    /* ... as a snapshot (so.snapshot points at it) */
} cli_decode;

/* What a command leaves out of the shared options (it neither offers nor accepts them, and
 * its --help does not list them): */
#define CLI_NO_SAMPLE_TEXT 1u /* -F and --ns: they shape perf-script text (export, inject) */
#define CLI_OWN_STATUS     2u /* (help only) the command says its own exit status (export) */

/* Parse argv (argv[0] is the subcommand's name). usage() prints the command's --help text;
 * without: CLI_NO_* options it does not take. Returns -1 to go on, or the exit status to
 * return at once: 0 after --help, 2 after a usage error (one line on stderr with a hint).
 * Either way d holds what the options made (-C's list, --image's files, --trace's
 * configuration): cli_decode_free it. */
int cli_decode_parse(cli_decode *d, const char *cmd, unsigned without, int argc, char **argv,
                     void (*usage)(FILE *));

/* The options' lines of the --help text, shared by the commands; without as above. */
void cli_decode_help(FILE *f, unsigned without);

/* Check the input and the file options before decoding; prints one line and returns the exit
 * status (1: the input cannot be read or is not a recording; 2: an option names a missing or
 * wrong file), or -1 when all is well. */
int cli_decode_check(cli_decode *d);

/* Open the session; on failure prints what went wrong and returns the exit status (1, or 2
 * when an option does not apply to this recording); -1 with *s set on success. */
int cli_decode_open(cli_decode *d, ek_session **s);

/* Exit status after a run that returned rc: 1 when rc failed (said against the input, or
 * against standard output when rc is EK_ERR_IO after a write to it failed: cli_stdout_check),
 * when no sample at all came out while problems were found, or with --strict when any problem
 * was found; else 0. */
int cli_decode_status(cli_decode *d, ek_session *s, int rc);

/* After ek_session_free. */
void cli_decode_free(cli_decode *d);

#endif
