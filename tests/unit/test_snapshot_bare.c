/* ek_snapshot_from_trace: a bare trace file and what the options say about it give the
 * snapshot the equivalent ini files give (same typed configuration), trace IDs written into
 * the ID register, names and errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "etmkit/decode.h"
#include "etmkit/snapshot.h"
#include "testutil.h"

typedef struct rec {
    char kinds[16][48];
    int sev[16];
    int n;
} rec;

static void rec_fn(void *ctx, const ek_diag_event *e)
{
    rec *r = ctx;
    if (r->n < 16) {
        snprintf(r->kinds[r->n], sizeof r->kinds[0], "%s", e->kind);
        r->sev[r->n] = e->sev;
    }
    r->n++;
}

static int count(const rec *r, const char *kind, int sev)
{
    int n = 0;
    for (int i = 0; i < r->n && i < 16; i++)
        n += !strcmp(r->kinds[i], kind) && r->sev[i] == sev;
    return n;
}

static void put(const char *dir, const char *name, const char *text)
{
    char *p = tu_write_file(dir, name, text, strlen(text));
    assert_non_null(p);
    free(p);
}

/* The registers of the device file below, as options would give them. */
static const ek_bare_reg etm_regs[] = {
    {"TRCCONFIGR(0x004)", 0xC1},      {"TRCTRACEIDR", 0x90}, {"TRCAUTHSTATUS", 0xCC},
    {"TRCIDR0(id:0x78)", 0x28000EA1}, {"trcidr2", 0x488},    {"TRCIDR8", 0},
    {"TRCIDR4", 0x11170004},
};

static void test_same_as_ini(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    assert_non_null(dir);
    put(dir, "snapshot.ini",
        "[snapshot]\nversion=1.0\n[device_list]\ndevice0=cpu_0.ini\ndevice1=etm_0.ini\n"
        "[trace]\nmetadata=trace.ini\n");
    put(dir, "cpu_0.ini", "[device]\nname=cpu_0\nclass=core\ntype=Cortex-A53\n");
    put(dir, "etm_0.ini",
        "[device]\nname=ETM_0\nclass=trace_source\ntype=ETM4\n[regs]\n"
        "TRCCONFIGR(0x004)=0xC1\nTRCTRACEIDR=0x90\nTRCAUTHSTATUS=0xCC\n"
        "TRCIDR0(id:0x78)=0x28000EA1\ntrcidr2=0x488\nTRCIDR8=0\nTRCIDR4=0x11170004\n");
    put(dir, "trace.ini",
        "[trace_buffers]\nbuffers=buffer0\n[buffer0]\nname=ETB_0\nfile=trace.bin\n"
        "format=source_data\n[source_buffers]\nETM_0=ETB_0\n[core_trace_sources]\n"
        "cpu_0=ETM_0\n");
    char *tb = tu_write_file(dir, "trace.bin", "\x00\x00\x00\x80", 4);
    assert_non_null(tb);
    free(tb);
    ek_snapshot *ss = NULL, *bare = NULL;
    assert_int_equal(ek_snapshot_open(dir, NULL, &ss), 0);
    char *bin = NULL;
    assert_true(asprintf(&bin, "%s/trace.bin", dir) > 0);
    ek_bare_source src = {
        "ETM_0", "ETM4", "Cortex-A53", etm_regs, sizeof etm_regs / sizeof etm_regs[0], -1};
    rec r = {0};
    ek_diag d = {rec_fn, &r};
    assert_int_equal(ek_snapshot_from_trace(bin, EK_BUF_SOURCE_DATA, &src, 1, &d, &bare), 0);
    assert_int_equal(count(&r, "snapshot.missing-register", EK_SEV_WARN), 0);
    assert_int_equal(bare->nsources, 1);
    assert_int_equal(bare->nbuffers, 1);
    assert_int_equal(bare->buffers[0].format, EK_BUF_SOURCE_DATA);
    assert_string_equal(bare->buffers[0].name, "trace.bin");
    assert_string_equal(bare->buffers[0].path, bin);
    assert_true(bare->buffers[0].present);
    assert_int_equal(bare->buffers[0].file_size, 4);
    assert_int_equal(bare->buffer_order[0], 0);
    assert_int_equal(bare->sources[0].buffer, 0);
    assert_true(bare->sources[0].core >= 0);
    const ek_snap_device *core = &bare->devices[bare->sources[0].core];
    assert_string_equal(core->devclass, "core");
    assert_int_equal(core->arch, EK_ARCH_V8A);
    /* the typed configuration is the ini files' */
    assert_memory_equal(&bare->sources[0].cfg, &ss->sources[0].cfg, sizeof(ek_source_config));
    assert_int_equal(bare->sources[0].cfg.trace_id, 0x10);
    assert_int_equal(bare->sources[0].cfg.protocol, EK_PROTO_ETMV4);
    ek_snapshot_free(bare);
    ek_snapshot_free(ss);
    free(bin);
    tu_rmtree(dir);
    free(dir);
}

static void test_trace_id(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    assert_non_null(dir);
    put(dir, "t.bin", "0123456789abcdef");
    char *bin = NULL;
    assert_true(asprintf(&bin, "%s/t.bin", dir) > 0);
    static const ek_bare_reg stm[] = {{"STMTCSR", 0x00A00007}};
    static const ek_bare_reg etm[] = {
        {"TRCCONFIGR", 0}, {"TRCIDR0", 0x28000EA1}, {"TRCIDR2", 0x488}, {"TRCTRACEIDR", 0x10}};
    ek_bare_source src[] = {
        {NULL, "STM", NULL, stm, 1, 0x31},         /* over the register's 0x20 */
        {NULL, "ETM4.2", "ARMv7-M", etm, 4, 0x12}, /* over TRCTRACEIDR's 0x10 */
        {NULL, "ITM", NULL, NULL, 0, 0x05},        /* no ITMTCR: made */
        {"mine", "ETM3.5", NULL, NULL, 0, -1},     /* registers missing: warned */
    };
    rec r = {0};
    ek_diag d = {rec_fn, &r};
    ek_snapshot *ss = NULL;
    assert_int_equal(ek_snapshot_from_trace(bin, EK_BUF_CORESIGHT, src, 4, &d, &ss), 0);
    assert_int_equal(ss->nsources, 4);
    const ek_source_config *c0 = &ss->sources[0].cfg, *c1 = &ss->sources[1].cfg;
    const ek_source_config *c2 = &ss->sources[2].cfg, *c3 = &ss->sources[3].cfg;
    assert_int_equal(c0->protocol, EK_PROTO_STM);
    assert_int_equal(c0->trace_id, 0x31);
    assert_int_equal(c0->regs.tcr, 0x00B10007);
    assert_string_equal(ss->devices[ss->sources[0].device].name, "STM_0");
    assert_int_equal(ss->sources[0].core, -1);
    /* ETMv4 on an M-profile core is ETMv4-M, as in a snapshot */
    assert_int_equal(c1->protocol, EK_PROTO_ETMV4M);
    assert_int_equal(c1->trace_id, 0x12);
    assert_int_equal(c1->regs.etm4.traceidr, 0x12);
    assert_string_equal(ss->devices[ss->sources[1].device].name, "ETM4_1");
    assert_int_equal(c2->protocol, EK_PROTO_ITM);
    assert_int_equal(c2->trace_id, 5);
    assert_int_equal(c2->regs.tcr, 0x00050000);
    assert_string_equal(ss->devices[ss->sources[3].device].name, "mine");
    assert_int_equal(c3->protocol, EK_PROTO_ETMV3);
    assert_int_equal(count(&r, "snapshot.missing-register", EK_SEV_WARN), 4);
    assert_int_equal(count(&r, "snapshot.no-core", EK_SEV_WARN), 1); /* the ETMv3 one */
    ek_snapshot_free(ss);
    free(bin);
    tu_rmtree(dir);
    free(dir);
}

static void test_errors(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    assert_non_null(dir);
    put(dir, "t.bin", "x");
    char *bin = NULL, *none = NULL;
    assert_true(asprintf(&bin, "%s/t.bin", dir) > 0);
    assert_true(asprintf(&none, "%s/none.bin", dir) > 0);
    ek_snapshot *ss = (ek_snapshot *)1;
    ek_bare_source ok = {NULL, "ITM", NULL, NULL, 0, 1};
    ek_bare_source notype = {NULL, NULL, NULL, NULL, 0, 1};
    ek_bare_source badid = {NULL, "ITM", NULL, NULL, 0, 0x80};
    ek_bare_source noregs = {NULL, "ITM", NULL, NULL, 2, 1};
    assert_int_equal(ek_snapshot_from_trace(bin, EK_BUF_CORESIGHT, &ok, 0, NULL, &ss), EK_ERR_ARG);
    assert_null(ss);
    assert_int_equal(ek_snapshot_from_trace(bin, EK_BUF_UNKNOWN, &ok, 1, NULL, &ss), EK_ERR_ARG);
    assert_int_equal(ek_snapshot_from_trace(bin, EK_BUF_CORESIGHT, &notype, 1, NULL, &ss),
                     EK_ERR_ARG);
    assert_int_equal(ek_snapshot_from_trace(bin, EK_BUF_CORESIGHT, &badid, 1, NULL, &ss),
                     EK_ERR_ARG);
    assert_int_equal(ek_snapshot_from_trace(bin, EK_BUF_CORESIGHT, &noregs, 1, NULL, &ss),
                     EK_ERR_ARG);
    assert_int_equal(ek_snapshot_from_trace(NULL, EK_BUF_CORESIGHT, &ok, 1, NULL, &ss), EK_ERR_ARG);
    rec r = {0};
    ek_diag d = {rec_fn, &r};
    assert_int_equal(ek_snapshot_from_trace(none, EK_BUF_CORESIGHT, &ok, 1, &d, &ss),
                     EK_ERR_NOT_FOUND);
    assert_null(ss);
    assert_int_equal(count(&r, "snapshot.missing-file", EK_SEV_ERROR), 1);
    assert_int_equal(ek_snapshot_from_trace(dir, EK_BUF_CORESIGHT, &ok, 1, &d, &ss),
                     EK_ERR_NOT_FOUND); /* a folder */
    assert_int_equal(count(&r, "snapshot.missing-file", EK_SEV_ERROR), 2);
    /* a register name that is not NAME(...): warned, left out */
    static const ek_bare_reg bad[] = {{"ITMTCR(", 0}, {"(0x10)", 1}};
    ek_bare_source b = {NULL, "ITM", "Cortex-Q1", bad, 2, 1};
    memset(&r, 0, sizeof r);
    assert_int_equal(ek_snapshot_from_trace(bin, EK_BUF_CORESIGHT, &b, 1, &d, &ss), 0);
    assert_int_equal(count(&r, "snapshot.bad-value", EK_SEV_WARN), 2);
    assert_int_equal(count(&r, "snapshot.unknown-core", EK_SEV_WARN), 1);
    assert_int_equal(ss->devices[ss->sources[0].device].nregs, 1); /* the ID register, made */
    assert_int_equal(ss->sources[0].cfg.trace_id, 1);
    ek_snapshot_free(ss);
    free(bin);
    free(none);
    tu_rmtree(dir);
    free(dir);
}

static void test_frames(void **state)
{
    (void)state;
    assert_int_equal(ek_decode_snapshot_frames(EK_BUF_SOURCE_DATA), 0);
    assert_int_equal(ek_decode_snapshot_frames(EK_BUF_CORESIGHT), EK_DFMT_MEM_ALIGN);
    assert_int_equal(ek_decode_snapshot_frames(EK_BUF_UNKNOWN), EK_DFMT_MEM_ALIGN);
    assert_int_equal(ek_decode_snapshot_frames(EK_BUF_DSTREAM), EK_DFMT_FSYNC);
    assert_int_equal(ek_decode_snapshot_frames(EK_BUF_TPIU), EK_DFMT_FSYNC);
    assert_int_equal(ek_decode_snapshot_frames(EK_BUF_TPIU_HSYNC), EK_DFMT_FSYNC | EK_DFMT_HSYNC);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_as_ini),
        cmocka_unit_test(test_trace_id),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_frames),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
