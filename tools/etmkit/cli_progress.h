/* A progress line on stderr for long runs of gen, script, doctor and dump.
 *
 * Shown only when stderr is a terminal (and, for a command that writes its output as it goes,
 * standard output is not that same terminal), not with -q, and only once the run is older
 * than ETMKIT_PROGRESS_DELAY seconds (default 1). Redrawn in place with '\r' at most four
 * times a second, and wiped (spaces, '\r') by cli_progress_end or before any other message
 * on stderr (cli_err, the stderr diag sink), so that nothing else ever shares its line:
 *
 *     etmkit script: 45.2 MiB of 120.0 MiB (37%), 30.1 MiB/s, 3 s left
 *
 * When it is off, it writes nothing at all. */
#ifndef ETMKIT_CLI_PROGRESS_H
#define ETMKIT_CLI_PROGRESS_H

#include <stdint.h>

typedef struct cli_progress {
    int on;           /* may draw */
    const char *what; /* the subcommand */
    double t0;        /* start (monotonic seconds) */
    double t1;        /* first update, with done1: the rate is measured from there */
    uint64_t done1;
    double drawn_at; /* last redraw */
    double delay;    /* nothing before the run is this old */
    int width;       /* of the terminal (0: unknown) */
    int shown;       /* columns of the line on screen (0: none) */
} cli_progress;

/* quiet: -q; stdout_busy: the command writes its output while the run goes on. */
void cli_progress_start(cli_progress *p, const char *what, int quiet, int stdout_busy);
/* The library's progress callback (an ek_progress_fn; ctx: the cli_progress). */
void cli_progress_update(void *ctx, uint64_t done, uint64_t total);
/* The run is over: wipe the line (if one was drawn); the progress is inactive after it. */
void cli_progress_end(cli_progress *p);
/* Before other text goes to stderr: wipe the active progress line, if any (the next update
 * draws it again). */
void cli_progress_clear(void);

#endif
