/* Fuzz target: the session layer -- the whole `etmkit script` pipeline on one perf.data file:
 * reader, queues and AUX slices, sideband timeline, DSO lookup, deformatter, packet parser,
 * flow decoder, sample synthesis, perf-script text, and the doctor report.
 *
 * The input is the perf.data file (an in-memory file). Recorded file names are looked up
 * under a private --symfs folder that holds one small AArch64 program as /bin/loop (the file
 * fuzz/corpus/elf/exe; the hand-made perf seeds map it), so nothing outside is read. The
 * sample kinds (--itrace) and fields depend on the input size, so every mode gets inputs.
 * Checks: output is whole lines, the session ends, the report is built, diagnostics are
 * well formed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "etmkit/session.h"
#include "etmkit/account_out.h"
#include "etmkit/script.h"
#include "fuzz_common.h"

#ifndef FUZZ_SRC_DIR
#define FUZZ_SRC_DIR "fuzz"
#endif

static char symfs[512];

static void init_symfs(void)
{
    if (symfs[0])
        return;
    snprintf(symfs, sizeof symfs, "%s/symfs", fuzz_tmpdir());
    char p[600];
    mkdir(symfs, 0755);
    snprintf(p, sizeof p, "%s/bin", symfs);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/bin/loop", symfs);
    FILE *in = fopen(FUZZ_SRC_DIR "/corpus/elf/exe", "rb");
    FILE *out = fopen(p, "wb");
    if (in && out) {
        char buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, in)) > 0)
            fwrite(buf, 1, n, out);
    }
    if (in)
        fclose(in);
    if (out)
        fclose(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    init_symfs();
    char path[64];
    int mfd = fuzz_memfile("perf.data", data, size, path, sizeof path);
    if (mfd < 0)
        return 0;
    static const char *const itrace[] = {NULL, "b", "i100i", "i64il16", "cr", "bZ", "i1ie", "s2b"};
    static const char *const fields[] = {NULL, "pid,tid,cpu,flags,ip,sym,symoff,dso,addr",
                                         "ip,brstack", "comm,tid,time,event,ip,sym,period,insn"};
    fuzz_diag fd;
    fuzz_diag_begin(&fd);
    ek_session_opts o;
    ek_session_opts_init(&o);
    o.symfs = symfs;
    o.buildid_dir = symfs; /* no build-id cache outside the private folder */
    o.threads = 1 + (size & 1);
    const char *it = itrace[size % 8];
    if (it)
        FUZZ_CHECK(ek_itrace_parse(it, &o.itrace, NULL) == 0, "itrace string rejected");
    ek_script_fields f;
    ek_script_fields_default(&f);
    const char *fl = fields[(size / 8) % 4];
    if (fl)
        FUZZ_CHECK(ek_script_fields_parse(fl, &f, NULL) == 0, "fields rejected");

    ek_session *s = NULL;
    if (ek_session_open(path, &o, &fd.sink, &s) == 0 && s) {
        fuzz_out os = FUZZ_OUT_INIT;
        int rc = ek_session_script(s, &f, fuzz_out_write, &os);
        FUZZ_CHECK(rc <= 0, "positive status from ek_session_script");
        FUZZ_CHECK(os.bytes == 0 || os.last == '\n', "script output ends inside a line");
        ek_sbuf sb = {0};
        ek_session_report(s, &sb, EK_REPORT_SUMMARY);
        ek_session_report(s, &sb, EK_REPORT_FULL);
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
        ek_session_stats st;
        ek_session_get_stats(s, &st);
        FUZZ_CHECK(st.slices_no_data <= st.slices, "more data-less slices than slices");
        ek_session_free(s);
    }
    fuzz_diag_end(&fd);
    fuzz_memfile_close(mfd);
    return 0;
}
