/* Shared pieces of the etmkit command-line program. The CLI owns all I/O and messages. */
#ifndef ETMKIT_CLI_H
#define ETMKIT_CLI_H

#include <stdio.h>
#include <sys/types.h>

#include "etmkit/diag.h"
#include "etmkit/etmkit.h"
#include "etmkit/sbuf.h"

/* Exit statuses of every subcommand. */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

/* Subcommands: each gets argv with argv[0] = the subcommand name. */
int cmd_dump(int argc, char **argv);          /* dispatches on the input kind */
int cmd_dump_snapshot(int argc, char **argv); /* snapshot folder listing */
int cmd_dump_perf(int argc, char **argv);     /* perf.data records, AUX slices, packets */
int cmd_script(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_inject(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_export_folded(int argc, char **argv); /* export --format=folded (cmd_views.c) */
int cmd_report(int argc, char **argv);

/* Write the buffer to f and empty it; flush when it grows past a threshold. */
void cli_write(ek_sbuf *out, FILE *f);
static inline void cli_maybe_flush(ek_sbuf *out, FILE *f)
{
    if (out->len >= (1u << 16))
        cli_write(out, f);
}

/* One-line message on stderr: "etmkit: <text>". */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "CMD: --format=FORMAT: no binary of the profile is ELF" with why (its build-id, or none and
 * its file name): ek_profile_binaries_for_elf found none. in: ek_elf_info of ELF. */
struct ek_elf_info;
void cli_elf_not_found(const char *cmd, const char *format, const char *elf,
                       const struct ek_elf_info *in);

/* A diag sink that prints every event as one line on stderr. */
ek_diag cli_diag_stderr(void);

/* Print the grouped summary of a collector on stderr (nothing when empty). */
void cli_print_diag_summary(ek_diag_collector *c, int verbose);

/* Write s to out (stdout when out is NULL or "-"), via a temporary file out.TAG-XXXXXX renamed
 * into place, or in place when cli_out_in_place(out). Returns 0, or -1 with errno set. */
int cli_write_file(const char *out, const char *tag, const ek_sbuf *s);
/* Say that writing out failed with errno e: "etmkit: CMD: -o OUT: E", or for standard output
 * (out NULL or "-") cli_stdout_check's line. */
void cli_out_error(const char *cmd, const char *out, int e);

/* Standard output. Its first failed write's errno is kept (cli_stdout_fail(errno), which
 * returns -1: a write callback's failure), so that the failure is said against standard output,
 * not against the input whose listing stopped (the library only says EK_ERR_IO).
 * cli_stdout_write is such a callback (fwrite). cli_stdout_failed: that errno, or 0.
 * cli_stdout_check flushes stdout and, when a write to it failed, prints once
 * "etmkit: CMD: standard output: <strerror>" ("etmkit: standard output: ..." when cmd is NULL)
 * and returns CLI_FAIL; else CLI_OK. main() checks once more after every command. */
int cli_stdout_fail(int e);
int cli_stdout_failed(void);
int cli_stdout_write(void *ctx, const char *text, size_t len);
int cli_stdout_check(const char *cmd);

/* 1: out is there and is not a regular file -- a device (/dev/null), a FIFO, a symbolic link
 * (/dev/stdout) --: written in place, as open(2) would, never replaced (a temporary renamed
 * over it would replace the device or the link with a plain file: as root, /dev/null) nor
 * removed after an error. */
int cli_out_in_place(const char *out);
/* An output written as it is made, with cli_write_file's rules: standard output when out is
 * NULL or "-", in place when cli_out_in_place(out), else a temporary file out.TAG-XXXXXX that
 * cli_out_close renames into place. Whoever writes to f keeps the errno of the first failure
 * in err. */
typedef struct cli_out {
    FILE *f;
    char *tmp; /* the temporary file (NULL: written in place or to standard output) */
    int err;   /* errno of the first failed write (0: none) */
} cli_out;
/* 0, or -1 with errno set (nothing was created). */
int cli_out_open(cli_out *o, const char *out, const char *tag);
/* Flush and close f; with keep, rename the temporary file into place, else (or after an error)
 * remove it: an OUT that was there stays as it was. Returns o->err: 0 or the errno of the first
 * failure (write, close, rename). */
int cli_out_close(cli_out *o, const char *out, int keep);
/* the process's file creation mask (files written through a temporary get the mode open(2) gives) */
mode_t cli_umask(void);

/* --image FILE@ADDR / ELF[@ADDR] (etmkit/image.h): parse one, check that the file can be read
 * and append it to *v (count *n). Prints one line and returns CLI_USAGE on a bad one, else -1.
 * cli_images_free frees the list. */
struct ek_image_spec;
int cli_image_arg(const char *cmd, const char *arg, struct ek_image_spec **v, size_t *n);
void cli_images_free(struct ek_image_spec *v, size_t n);

/* Does path name a directory? */
int cli_is_dir(const char *path);
/* a perf.data folder: DIR/data, and no snapshot.ini */
int cli_is_perf_folder(const char *path);

#endif
