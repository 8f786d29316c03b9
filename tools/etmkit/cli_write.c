/* Writing a command's whole output: to stdout when out is NULL or "-", else through a temporary
 * file beside out (named out.TAG-XXXXXX) renamed into place, so a failed run leaves no partial
 * file -- unless out is there and not a regular file (cli_out_in_place). cli_out_open and
 * cli_out_close do the same for an output written as it is made. And what became of standard
 * output: the errno of its first failed write, said once against it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

mode_t cli_umask(void)
{
    mode_t m = umask(0);
    umask(m);
    return m;
}

int cli_out_in_place(const char *out)
{
    struct stat st;
    return lstat(out, &st) == 0 && !S_ISREG(st.st_mode);
}

static int stdout_errno; /* the errno of the first write to stdout that failed */
static int stdout_said;  /* ... and its line was printed */

int cli_stdout_fail(int e)
{
    if (!stdout_errno) stdout_errno = e ? e : EIO;
    return -1;
}

int cli_stdout_failed(void)
{
    return stdout_errno;
}

int cli_stdout_write(void *ctx, const char *text, size_t len)
{
    (void)ctx;
    return fwrite(text, 1, len, stdout) == len ? 0 : cli_stdout_fail(errno);
}

int cli_stdout_check(const char *cmd)
{
    errno = 0;
    if (fflush(stdout))
        cli_stdout_fail(errno);
    else if (ferror(stdout))
        cli_stdout_fail(0); /* a write failed that no one saw: its errno is gone */
    if (!stdout_errno) return CLI_OK;
    if (!stdout_said) {
        stdout_said = 1;
        if (cmd)
            cli_err("%s: standard output: %s", cmd, strerror(stdout_errno));
        else
            cli_err("standard output: %s", strerror(stdout_errno));
    }
    return CLI_FAIL;
}

void cli_out_error(const char *cmd, const char *out, int e)
{
    if (out && strcmp(out, "-")) {
        cli_err("%s: -o %s: %s", cmd, out, strerror(e));
        return;
    }
    cli_stdout_fail(e);
    cli_stdout_check(cmd);
}

int cli_write_file(const char *out, const char *tag, const ek_sbuf *s)
{
    if (!out || !strcmp(out, "-")) {
        if (s->len && fwrite(s->p, 1, s->len, stdout) != s->len) return cli_stdout_fail(errno);
        return fflush(stdout) ? cli_stdout_fail(errno) : 0;
    }
    if (cli_out_in_place(out)) {
        FILE *f = fopen(out, "wb");
        if (!f) return -1;
        int ok = !s->len || fwrite(s->p, 1, s->len, f) == s->len;
        int e = errno;
        if (fclose(f)) {
            ok = 0;
            e = errno;
        }
        errno = e;
        return ok ? 0 : -1;
    }
    char *tmp = NULL;
    if (asprintf(&tmp, "%s.%s-XXXXXX", out, tag) < 0) return -1;
    int fd = mkstemp(tmp);
    /* the mode a file made by open(2) would have: mkstemp makes it 0600 */
    if (fd >= 0 && fchmod(fd, 0666 & ~cli_umask())) {
        close(fd);
        unlink(tmp);
        fd = -1;
    }
    if (fd < 0) {
        free(tmp);
        return -1;
    }
    FILE *f = fdopen(fd, "wb");
    int ok = f && (!s->len || fwrite(s->p, 1, s->len, f) == s->len);
    int e = errno;
    if (f ? fclose(f) : close(fd)) ok = 0;
    if (ok && rename(tmp, out)) ok = 0;
    if (!ok) {
        e = errno;
        unlink(tmp);
    }
    free(tmp);
    errno = e;
    return ok ? 0 : -1;
}

/* a temporary file beside out with the mode open(2) would give (mkstemp makes it 0600) */
static FILE *open_tmp(const char *out, const char *tag, char **tmp)
{
    *tmp = NULL;
    if (asprintf(tmp, "%s.%s-XXXXXX", out, tag) < 0) {
        *tmp = NULL;
        return NULL;
    }
    int fd = mkstemp(*tmp);
    FILE *f = NULL;
    if (fd >= 0 && !fchmod(fd, 0666 & ~cli_umask())) f = fdopen(fd, "wb");
    if (!f) {
        int e = errno;
        if (fd >= 0) {
            close(fd);
            unlink(*tmp);
        }
        free(*tmp);
        *tmp = NULL;
        errno = e;
    }
    return f;
}

int cli_out_open(cli_out *o, const char *out, const char *tag)
{
    o->f = NULL;
    o->tmp = NULL;
    o->err = 0;
    if (!out || !strcmp(out, "-"))
        o->f = stdout;
    else if (cli_out_in_place(out))
        o->f = fopen(out, "wb");
    else
        o->f = open_tmp(out, tag, &o->tmp);
    return o->f ? 0 : -1;
}

int cli_out_close(cli_out *o, const char *out, int keep)
{
    if (!o->f) return o->err;
    errno = 0;
    if (o->f == stdout ? fflush(stdout) : fclose(o->f))
        if (!o->err) o->err = errno ? errno : EIO;
    o->f = NULL;
    if (o->tmp) {
        if (keep && !o->err && rename(o->tmp, out)) o->err = errno;
        if (!keep || o->err) unlink(o->tmp);
        free(o->tmp);
        o->tmp = NULL;
    }
    return o->err;
}
