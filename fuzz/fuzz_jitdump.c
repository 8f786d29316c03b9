/* Fuzz target: jitdump files (src/input/jitdump.c) and what the session builds from them
 * (src/session/jit.c: a DSO per load or move, mapped into the process's address space at the
 * record's time), end to end through `etmkit script`.
 *
 * Once per process, the simulator writes a small recording of its jit-reuse scenario (a JIT
 * that loads, moves and reuses code) into a private folder. Each input is a jitdump: it
 * replaces the recording's jit-PID.dump under the folder's symfs (odd sizes), or is given as
 * --jitdump beside it (even sizes, the recorded one then being absent), and the recording is
 * decoded with --itrace=b.
 * Checks: the recording opens whatever the jitdump holds, the session ends, its output is
 * whole lines, the report and the account JSON are built, diagnostics are well formed (ASan and
 * UBSan watch the reads of the file: records, names, code).
 * Seeds: fuzz/corpus/jitdump/ (the simulator's jitdumps and hand-made damaged ones). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "etmkit/account_out.h"
#include "etmkit/script.h"
#include "etmkit/session.h"
#include "etmkit/sim.h"
#include "fuzz_common.h"

static char gen_dir[512];
static char dump_path[1024]; /* the recording's jit-PID.dump under symfs */
static char alt_path[1024];  /* where --jitdump inputs go */

static int find_dump(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st)) continue;
        if (S_ISDIR(st.st_mode) && depth < 12)
            found = find_dump(p, depth + 1);
        else if (S_ISREG(st.st_mode) && !strncmp(e->d_name, "jit-", 4) &&
                 strstr(e->d_name, ".dump")) {
            snprintf(dump_path, sizeof dump_path, "%s", p);
            found = 1;
        }
    }
    closedir(d);
    return found;
}

static int init_gen(void)
{
    if (gen_dir[0]) return dump_path[0] != 0;
    snprintf(gen_dir, sizeof gen_dir, "%s/gen-jit", fuzz_tmpdir());
    ek_sim_opts so;
    memset(&so, 0, sizeof so);
    so.size = sizeof so;
    so.scenario = "jit-reuse";
    so.seed = 1;
    so.trace_size = 16384;
    so.outdir = gen_dir;
    ek_sim_result res;
    if (ek_sim_run(&so, &res)) {
        fprintf(stderr, "fuzz_jitdump: the simulator failed to write %s\n", gen_dir);
        abort();
    }
    char symfs[600];
    snprintf(symfs, sizeof symfs, "%s/symfs", gen_dir);
    if (!find_dump(symfs, 0)) {
        fprintf(stderr, "fuzz_jitdump: no jit-PID.dump under %s\n", symfs);
        abort();
    }
    snprintf(alt_path, sizeof alt_path, "%s/given.dump", gen_dir);
    return 1;
}

static int write_file(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t n = size ? fwrite(data, 1, size, f) : 0;
    return (fclose(f) || n != size) ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!init_gen()) return 0;
    int given = !(size & 1);
    unlink(dump_path);
    unlink(alt_path);
    const char *path = given ? alt_path : dump_path;
    if (write_file(path, data, size)) return 0;

    char perf[600], symfs[600];
    snprintf(perf, sizeof perf, "%s/perf.data", gen_dir);
    snprintf(symfs, sizeof symfs, "%s/symfs", gen_dir);
    fuzz_diag fd;
    fuzz_diag_begin(&fd);
    ek_session_opts o;
    ek_session_opts_init(&o);
    o.symfs = symfs;
    o.buildid_dir = symfs;
    o.threads = 1 + ((size >> 1) & 1);
    if (given) o.jitdump = alt_path;
    FUZZ_CHECK(ek_itrace_parse("b", &o.itrace, NULL) == 0, "itrace string rejected");
    ek_script_fields f;
    ek_script_fields_default(&f);
    ek_session *s = NULL;
    if (ek_session_open(perf, &o, &fd.sink, &s) == 0 && s) {
        fuzz_out os = FUZZ_OUT_INIT;
        int rc = ek_session_script(s, &f, fuzz_out_write, &os);
        FUZZ_CHECK(rc <= 0, "positive status from ek_session_script");
        FUZZ_CHECK(os.bytes == 0 || os.last == '\n', "script output ends inside a line");
        ek_sbuf sb = {0};
        ek_session_report(s, &sb, EK_REPORT_VERBOSE);
        ek_sbuf_free(&sb);
        ek_account *acc = NULL;
        if (ek_session_account(s, &acc) == 0) {
            ek_account_json(acc, &sb, EK_REPORT_VERBOSE);
            FUZZ_CHECK(sb.len >= 2 && sb.p[0] == '{' && sb.p[sb.len - 1] == '\n',
                       "account JSON is not one object and a newline");
            ek_account_free(acc);
        }
        ek_sbuf_free(&sb);
        ek_session_free(s);
    } else {
        FUZZ_CHECK(0, "the simulator's recording did not open");
    }
    fuzz_diag_end(&fd);
    return 0;
}
