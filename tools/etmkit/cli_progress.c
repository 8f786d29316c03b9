/* The progress line of long runs (see cli_progress.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli_progress.h"

#define REDRAW_S 0.25 /* at most four redraws a second */

/* The progress being shown (the CLI runs one at a time); guarded by lock, since a diag sink
 * may print from a library thread while the caller's thread redraws. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static cli_progress *active;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* stdout and stderr are the same terminal */
static int same_tty(void)
{
    struct stat a, b;
    return isatty(1) && fstat(1, &a) == 0 && fstat(2, &b) == 0 && a.st_rdev == b.st_rdev;
}

void cli_progress_start(cli_progress *p, const char *what, int quiet, int stdout_busy)
{
    memset(p, 0, sizeof *p);
    p->what = what;
    p->on = !quiet && isatty(2) && !(stdout_busy && same_tty());
    if (!p->on) return;
    p->t0 = now_s();
    p->delay = 1.0;
    const char *d = getenv("ETMKIT_PROGRESS_DELAY");
    if (d && *d) {
        char *end;
        double v = strtod(d, &end);
        if (!*end && v >= 0) p->delay = v;
    }
    struct winsize ws;
    if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1) p->width = ws.ws_col;
    pthread_mutex_lock(&lock);
    active = p;
    pthread_mutex_unlock(&lock);
}

/* "12.3 MiB" */
static int fmt_bytes(char *buf, size_t n, double v)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    return u ? snprintf(buf, n, "%.1f %s", v, unit[u]) : snprintf(buf, n, "%.0f B", v);
}

/* "7 s", "3 min 5 s", "2 h 10 min" */
static void fmt_time(char *buf, size_t n, double s)
{
    unsigned long t = (unsigned long)(s + 0.5);
    if (!t)
        snprintf(buf, n, "<1 s");
    else if (t < 60)
        snprintf(buf, n, "%lu s", t);
    else if (t < 3600)
        snprintf(buf, n, "%lu min %lu s", t / 60, t % 60);
    else
        snprintf(buf, n, "%lu h %lu min", t / 3600, t / 60 % 60);
}

/* Wipe the line on screen (lock held). */
static void wipe(cli_progress *p)
{
    if (!p->shown) return;
    char buf[512];
    int n = p->shown < (int)sizeof buf - 2 ? p->shown : (int)sizeof buf - 2;
    buf[0] = '\r';
    memset(buf + 1, ' ', (size_t)n);
    buf[n + 1] = '\r';
    fflush(stderr);
    if (write(2, buf, (size_t)n + 2) < 0) {
        /* nothing to do about a terminal that went away */
    }
    p->shown = 0;
}

void cli_progress_update(void *ctx, uint64_t done, uint64_t total)
{
    cli_progress *p = ctx;
    if (!p || !p->on) return;
    double t = now_s(), el = t - p->t0;
    if (!p->t1) {
        p->t1 = t;
        p->done1 = done;
    }
    if (el < p->delay) return;
    pthread_mutex_lock(&lock);
    if (p->shown && t - p->drawn_at < REDRAW_S) {
        pthread_mutex_unlock(&lock);
        return;
    }
    char line[256], a[32], b[32], r[32], left[32];
    fmt_bytes(a, sizeof a, (double)done);
    int n = snprintf(line, sizeof line, "etmkit %s: %s", p->what, a);
    if (total) {
        fmt_bytes(b, sizeof b, (double)total);
        n += snprintf(line + n, sizeof line - (size_t)n, " of %s (%u%%)", b,
                      (unsigned)(done * 100 / total));
    }
    double rate = t > p->t1 && done > p->done1 ? (double)(done - p->done1) / (t - p->t1) : 0;
    if (rate > 0 && t - p->t1 >= 0.1) {
        fmt_bytes(r, sizeof r, rate);
        n += snprintf(line + n, sizeof line - (size_t)n, ", %s/s", r);
        if (total > done) {
            fmt_time(left, sizeof left, (double)(total - done) / rate);
            n += snprintf(line + n, sizeof line - (size_t)n, ", %s left", left);
        }
    }
    if (n >= (int)sizeof line) n = (int)sizeof line - 1;
    if (p->width && n > p->width - 1) /* never into the last column: no line wrap */
        n = p->width - 1;
    /* "\r", the line, spaces over the rest of the previous one */
    char buf[1 + sizeof line + 512];
    int pad = p->shown > n ? p->shown - n : 0;
    if (pad > 512) pad = 512;
    buf[0] = '\r';
    memcpy(buf + 1, line, (size_t)n);
    memset(buf + 1 + n, ' ', (size_t)pad);
    fflush(stderr);
    if (write(2, buf, (size_t)(1 + n + pad)) < 0) {
        /* nothing to do about a terminal that went away */
    }
    p->shown = n + pad;
    p->drawn_at = t;
    pthread_mutex_unlock(&lock);
}

void cli_progress_end(cli_progress *p)
{
    if (!p->on) return;
    pthread_mutex_lock(&lock);
    wipe(p);
    if (active == p) active = NULL;
    p->on = 0;
    pthread_mutex_unlock(&lock);
}

void cli_progress_clear(void)
{
    pthread_mutex_lock(&lock);
    if (active) wipe(active);
    pthread_mutex_unlock(&lock);
}
