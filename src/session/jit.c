/* JIT code from jitdumps.
 *
 * A JIT that supports perf (its JVMTI agent, V8's --perf-prof, LLVM's perf listener...) writes
 * jit-PID.dump and maps it executable, so that the recording holds an MMAP2 that names it
 * (perf's jit_detect). Its JIT_CODE_LOAD records hold the code, its address and name and the
 * time it was installed; JIT_CODE_MOVE records say that code moved. Each becomes a map of the
 * process from that time on, like an MMAP2 of the jitted-PID-N.so that `perf inject --jit`
 * would write (and named so), so that code the JIT later replaced at the same address is
 * decoded with what was there when it ran. The jitdump's times are CLOCK_MONOTONIC, the clock
 * of the recording's events when it was made with `perf record -k 1` (perf inject refuses
 * other recordings, and so does this), or the architectural counter (then converted with
 * TIME_CONV). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "etmkit/etmkit.h"
#include "etmkit/sbuf.h"
#include "input/jitdump.h"
#include "session/session_int.h"

#define CLOCK_MONOTONIC_ 1

void jit_note_mmap(ek_session *s, int32_t pid, const char *filename, int64_t record,
                   uint64_t offset)
{
    if (pid < 0 || (filename && !ek_jitdump_name_matches(filename, pid))) return;
    for (size_t i = 0; i < s->jits.n; i++)
        if (s->jits.v[i].pid == pid) return; /* the first one counts (perf: one per pid) */
    jit_src j;
    memset(&j, 0, sizeof j);
    j.pid = pid;
    j.recorded = filename;
    j.record = record;
    j.offset = offset;
    j.status = EK_ERR_NOT_FOUND;
    ek_vec_push(&s->jits, j);
}

const jit_src *jit_of(const ek_session *s, int32_t pid)
{
    for (size_t i = 0; i < s->jits.n; i++)
        if (s->jits.v[i].pid == pid) return &s->jits.v[i];
    return NULL;
}

void jit_free_all(ek_session *s)
{
    for (size_t i = 0; i < s->jits.n; i++) {
        free(s->jits.v[i].path);
        free(s->jits.v[i].tried);
        ek_jitdump_free(s->jits.v[i].dump);
    }
    ek_vec_free(&s->jits);
}

/* perf record -k 1: every event on CLOCK_MONOTONIC */
static int monotonic(const ek_session *s)
{
    size_t n = ek_perf_nattrs(s->pf);
    for (size_t i = 0; i < n; i++) {
        const ek_perf_attr *a = ek_perf_attr_at(s->pf, i);
        if (!(a->flags & EK_PERF_ATTR_FLAG_USE_CLOCKID) || a->clockid != CLOCK_MONOTONIC_) return 0;
    }
    return n > 0;
}

/* perf's tsc_to_perf_time */
static uint64_t counter_to_ns(const ek_perf_time_conv *tc, uint64_t cyc)
{
    uint64_t quot = cyc >> tc->time_shift, rem = cyc & ((1ull << tc->time_shift) - 1);
    return tc->time_zero + quot * tc->time_mult + ((rem * tc->time_mult) >> tc->time_shift);
}

static char *keep_str(ek_session *s, char *p)
{
    if (p && ek_vec_push(&s->strings, p)) {
        free(p);
        return NULL;
    }
    return p;
}

/* look for the jitdump: under symfs, at the recorded path, then --jitdump */
static void find_dump(ek_session *s, jit_src *j)
{
    ek_sbuf tried = EK_SBUF_INIT;
    const char *symfs = s->o.symfs && *s->o.symfs && strcmp(s->o.symfs, "/") ? s->o.symfs : NULL;
    char *cand[3] = {NULL, NULL, NULL};
    int n = 0;
    if (j->recorded) {
        if (symfs && asprintf(&cand[n], "%s%s", symfs, j->recorded) >= 0) n++;
        cand[n++] = strdup(j->recorded);
    }
    if (s->o.jitdump) cand[n++] = strdup(s->o.jitdump);
    for (int i = 0; i < n; i++) {
        if (!cand[i]) continue;
        ek_sbuf_printf(&tried, "%s%s", tried.len ? ", " : "", cand[i]);
        if (j->dump || access(cand[i], R_OK)) continue;
        ek_jitdump *d = NULL;
        int rc = ek_jitdump_read(cand[i], &s->diag, &d);
        if (rc) {
            j->status = rc == EK_ERR_IO ? EK_ERR_NOT_FOUND : rc;
            continue;
        }
        if ((int32_t)d->pid != j->pid) { /* --jitdump of another process */
            ek_jitdump_free(d);
            continue;
        }
        j->dump = d;
        j->path = cand[i];
        cand[i] = NULL;
        j->status = 0;
    }
    for (int i = 0; i < n; i++)
        free(cand[i]);
    j->tried = tried.p ? strdup(tried.p) : NULL;
    ek_sbuf_free(&tried);
}

static int add_codes(ek_session *s, jit_src *j)
{
    const ek_jitdump *d = j->dump;
    const ek_perf_time_conv *tc = ek_perf_time_conv_get(s->pf);
    int arch = (d->flags & EK_JIT_FLAG_ARCH_TIMESTAMP) != 0;
    if (arch ? !tc || !tc->time_mult : !monotonic(s)) {
        ek_diag_emit(&s->diag, EK_SEV_WARN, "jit.clock", EK_ERR_UNSUPPORTED, j->path, -1, 0, -1,
                     arch ? "the jitdump's times are counter values and the recording has no "
                            "TIME_CONV to convert them; its JIT code is not used"
                          : "the recording's events are not on CLOCK_MONOTONIC (perf record -k "
                            "1), the clock of the jitdump's times; its JIT code is not used");
        j->status = EK_ERR_UNSUPPORTED;
        return 0;
    }
    /* the names `perf inject --jit` gives the code: beside the jitdump */
    const char *where = j->recorded ? j->recorded : j->path;
    const char *slash = strrchr(where, '/');
    int dirlen = slash ? (int)(slash - where) : 1;
    const char *dir = slash ? where : ".";
    for (size_t i = 0; i < d->ncodes; i++) {
        const ek_jit_code *c = &d->codes[i];
        if (!c->size) continue;
        char *name = NULL;
        if (asprintf(&name, "%.*s/jitted-%d-%llu.so", dirlen, dir, (int)j->pid,
                     (unsigned long long)c->index) < 0 ||
            !keep_str(s, name))
            return EK_ERR_NOMEM;
        as_dso *dso = dso_jit(s->reg, name, c->name, c->code, c->size);
        if (!dso) return EK_ERR_NOMEM;
        as_event ev;
        memset(&ev, 0, sizeof ev);
        ev.type = AS_EV_MMAP;
        ev.key = arch ? counter_to_ns(tc, c->time) : c->time;
        /* after every record of the same time: the JIT writes code into memory it mapped */
        ev.record = INT64_MAX;
        ev.offset = c->offset;
        ev.pid = j->pid;
        ev.tid = (int32_t)c->tid;
        ev.start = c->addr;
        ev.len = c->size;
        ev.prot = 5;
        ev.exec = 1;
        ev.dso = dso;
        ev.filename = name;
        if (as_add(s->as, &ev)) return EK_ERR_NOMEM;
        if (c->move)
            j->moves++;
        else
            j->loads++;
    }
    return 0;
}

int jit_load_all(ek_session *s)
{
    /* --jitdump for a process whose dump the recording does not name */
    if (s->o.jitdump && !access(s->o.jitdump, R_OK)) {
        ek_jitdump *d = NULL;
        if (!ek_jitdump_read(s->o.jitdump, NULL, &d)) {
            jit_note_mmap(s, (int32_t)d->pid, NULL, -1, 0);
            ek_jitdump_free(d);
        }
    }
    for (size_t i = 0; i < s->jits.n; i++) {
        jit_src *j = &s->jits.v[i];
        find_dump(s, j);
        if (!j->dump) continue;
        int rc = add_codes(s, j);
        if (rc) return rc;
    }
    return 0;
}
