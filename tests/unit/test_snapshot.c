#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "etmkit/snapshot.h"
#include "testutil.h"

/* ---- a diag sink that keeps everything ---- */
typedef struct ev {
    char kind[48];
    int sev;
    char file[256];
    int64_t line;
    char msg[512];
} ev;
typedef struct rec {
    ev e[64];
    int n;
} rec;

static void rec_fn(void *ctx, const ek_diag_event *e)
{
    rec *r = ctx;
    if (r->n < 64) {
        ev *x = &r->e[r->n];
        snprintf(x->kind, sizeof x->kind, "%s", e->kind);
        x->sev = e->sev;
        snprintf(x->file, sizeof x->file, "%s", e->file ? e->file : "");
        x->line = e->record;
        snprintf(x->msg, sizeof x->msg, "%s", e->msg);
    }
    r->n++;
}

static int count(const rec *r, const char *kind, int sev)
{
    int n = 0;
    for (int i = 0; i < r->n && i < 64; i++)
        if (strcmp(r->e[i].kind, kind) == 0 && (sev < 0 || r->e[i].sev == sev)) n++;
    return n;
}

static int count_sev(const rec *r, int sev)
{
    int n = 0;
    for (int i = 0; i < r->n && i < 64; i++)
        n += r->e[i].sev == sev;
    return n;
}

static const ev *find_ev(const rec *r, const char *kind, const char *file_suffix)
{
    for (int i = 0; i < r->n && i < 64; i++) {
        size_t a = strlen(r->e[i].file), b = strlen(file_suffix);
        if (strcmp(r->e[i].kind, kind) == 0 && a >= b &&
            strcmp(r->e[i].file + a - b, file_suffix) == 0)
            return &r->e[i];
    }
    return NULL;
}

static void put(const char *dir, const char *name, const char *text)
{
    char *p = tu_write_file(dir, name, text, strlen(text));
    assert_non_null(p);
    free(p);
}

static const ek_snap_source *src_named(const ek_snapshot *ss, const char *name)
{
    for (size_t i = 0; i < ss->nsources; i++)
        if (strcmp(ss->devices[ss->sources[i].device].name, name) == 0) return &ss->sources[i];
    return NULL;
}

/* ---- hand-made snapshots ---- */

static const char good_snapshot[] = "; comment line\r\n"
                                    "[snapshot]\r\n"
                                    "version=1.0\r\n"
                                    "description = hand made ; trailing\r\n"
                                    "\r\n"
                                    "[device_list]\r\n"
                                    "device0=cpu_0.ini\r\n"
                                    "device1 = etm_0.ini\r\n"
                                    "device2=ete_1.ini\r\n"
                                    "device3=stm.ini\r\n"
                                    "device4=cpu_1.ini\r\n"
                                    "device5=ptm.ini\r\n"
                                    "[trace]\r\n"
                                    "metadata=trace.ini\r\n";

static const char good_cpu0[] = "[device]\n"
                                "name=cpu_0\n"
                                "class=core\n"
                                "type=Cortex-A53\n"
                                "[regs]\n"
                                "PC(size:64)=0xFFFFFFC000081000\n"
                                "SP(size:64)=0\n"
                                "CPSR=0x1C5\n"
                                "[dump1]\n"
                                "file=mem.bin\n"
                                "address=0x1000\n"
                                "[dump.text]\n"
                                "file=\"mem.bin\"\n"
                                "address=0x80000\n"
                                "offset=0x10\n"
                                "length=0x20\n"
                                "space=EL1N\n"
                                "[dump_s]\n"
                                "file=mem.bin\n"
                                "address=0x90000\n"
                                "space=S\n";

static const char good_etm0[] = "[device]\n"
                                "name=etm_0\n"
                                "class=trace_source\n"
                                "type=ETM4\n"
                                "[regs]\n"
                                "TRCCONFIGR(0x004)=0x000000C1\n"
                                "TRCTRACEIDR(0x010)=0x00000090\n" /* only bits 6:0 count */
                                "TRCAUTHSTATUS(0x3EE)=0x000000CC\n"
                                "TRCIDR0(id:0x78)=0x28000EA1\n"
                                "trcidr2 = 0x00000488\n"
                                "TRCIDR8=0x0\n"
                                "TRCIDR4(0x07C)=0x11170004\n"
                                "TRCACVR0(id:0x100,size:64)=0xFFFF000000001000\n";

static const char good_ete1[] = "[device]\n"
                                "name=ETE_1\n"
                                "class=trace_source\n"
                                "type=ETE\n"
                                "[regs]\n"
                                "TRCCONFIGR=0x8001\n"
                                "TRCTRACEIDR=0x22\n"
                                "TRCDEVARCH=0x47725a13\n"
                                "TRCIDR0=0x28c1cea1\n"
                                "TRCIDR1=0x4100fff0\n"
                                "TRCIDR2=0xd0001088\n"
                                "TRCIDR8=0x0\n";

static const char good_stm[] = "[device]\n"
                               "name=STM_0\n"
                               "class=trace_source\n"
                               "type=STM\n"
                               "[regs]\n"
                               "STMTCSR(id:0x0)=0x00200003\n";

static const char good_cpu1[] = "[device]\nname=cpu_1\nclass=core\ntype=Cortex-A7\n";

static const char good_ptm[] = "[device]\n"
                               "name=PTM_0\n"
                               "class=trace_source\n"
                               "type=PTM1.1\n"
                               "[regs]\n"
                               "ETMCR(id:0x0)=0x10001000\n"
                               "ETMIDR(id:0x79)=0x411CF312\n"
                               "ETMCCER(id:0x7A)=0x34C01AC2\n"
                               "ETMTRACEIDR(id:0x80)=0x00000013\n";

static const char good_trace[] = "[trace_buffers]\n"
                                 "buffers = buffer0, buffer1\n"
                                 "[buffer1]\n"
                                 "name=ETB_1\n"
                                 "file=raw.bin\n"
                                 "format=source_data\n"
                                 "[buffer0]\n"
                                 "name=ETB_0\n"
                                 "file=cstrace.bin\n"
                                 "format=coresight\n"
                                 "[source_buffers]\n"
                                 "etm_0=ETB_0\n"
                                 "STM_0=etb_0\n"
                                 "ETE_1=ETB_1\n"
                                 "PTM_0=ETB_0\n"
                                 "[core_trace_sources]\n"
                                 "cpu_0=etm_0\n"
                                 "cpu_0=ETE_1\n"
                                 "cpu_1=PTM_0\n"
                                 "[timestamp]\n"
                                 "frequency=25000000\n";

static char *make_good(void)
{
    char *dir = tu_tmpdir();
    assert_non_null(dir);
    put(dir, "snapshot.ini", good_snapshot);
    put(dir, "cpu_0.ini", good_cpu0);
    put(dir, "cpu_1.ini", good_cpu1);
    put(dir, "etm_0.ini", good_etm0);
    put(dir, "ete_1.ini", good_ete1);
    put(dir, "stm.ini", good_stm);
    put(dir, "ptm.ini", good_ptm);
    put(dir, "trace.ini", good_trace);
    char mem[0x100];
    for (int i = 0; i < 0x100; i++)
        mem[i] = (char)i;
    free(tu_write_file(dir, "mem.bin", mem, sizeof mem));
    free(tu_write_file(dir, "cstrace.bin", mem, 64));
    free(tu_write_file(dir, "raw.bin", mem, 16));
    return dir;
}

static void test_good_snapshot(void **state)
{
    char *dir = make_good();
    rec r = {0};
    ek_diag d = {rec_fn, &r};
    ek_snapshot *ss = NULL;
    assert_int_equal(ek_snapshot_open(dir, &d, &ss), 0);
    for (int i = 0; i < r.n; i++)
        if (r.e[i].sev != EK_SEV_NOTE) printf("unexpected diag: %s %s\n", r.e[i].kind, r.e[i].msg);
    assert_int_equal(count_sev(&r, EK_SEV_WARN) + count_sev(&r, EK_SEV_ERROR), 0);
    /* etm_0 has no TRCIDR1 and TRCIDR9..13: the reference defaults are used, with notes. */
    assert_int_equal(count(&r, "snapshot.default-register", EK_SEV_NOTE), 6);
    assert_int_equal(r.n, 6);
    assert_string_equal(ss->description, "hand made");
    assert_string_equal(ss->version, "1.0");
    assert_int_equal(ss->ndevices, 6);
    assert_int_equal(ss->timestamp_frequency, 25000000);

    /* Registers in all key forms. */
    const ek_snap_device *cpu = ek_snapshot_find_device(ss, "CPU_0");
    assert_non_null(cpu);
    assert_string_equal(cpu->devclass, "core");
    assert_string_equal(cpu->type, "Cortex-A53");
    assert_int_equal(cpu->arch, EK_ARCH_V8A);
    assert_int_equal(cpu->profile, EK_PROFILE_A);
    assert_int_equal(cpu->nregs, 3);
    assert_string_equal(cpu->regs[0].name, "PC");
    assert_int_equal(cpu->regs[0].size_bits, 64);
    assert_true(cpu->regs[0].value == 0xFFFFFFC000081000ull);
    assert_int_equal(cpu->regs[0].offset, -1);
    assert_int_equal(cpu->regs[0].id, -1);
    uint64_t v = 0;
    assert_true(ek_snap_device_reg(cpu, "cpsr", &v));
    assert_int_equal(v, 0x1C5);
    assert_false(ek_snap_device_reg(cpu, "R0", &v));

    const ek_snap_device *etm = ek_snapshot_find_device(ss, "etm_0");
    assert_int_equal(etm->nregs, 8);
    assert_string_equal(etm->regs[0].name, "TRCCONFIGR");
    assert_int_equal(etm->regs[0].offset, 4);
    assert_int_equal(etm->regs[3].id, 0x78);
    assert_int_equal(etm->regs[3].offset, -1);
    assert_string_equal(etm->regs[4].name, "TRCIDR2"); /* upper-cased */
    assert_string_equal(etm->regs[7].name, "TRCACVR0");
    assert_int_equal(etm->regs[7].id, 0x100);
    assert_int_equal(etm->regs[7].size_bits, 64);
    assert_true(etm->regs[7].value == 0xFFFF000000001000ull);

    /* Dumps: default length = file size - offset; quotes; spaces. */
    assert_int_equal(cpu->ndumps, 3);
    assert_string_equal(cpu->dumps[0].section, "dump1");
    assert_int_equal(cpu->dumps[0].address, 0x1000);
    assert_int_equal(cpu->dumps[0].offset, 0);
    assert_int_equal(cpu->dumps[0].length, 0x100);
    assert_int_equal(cpu->dumps[0].has_length, 0);
    assert_int_equal(cpu->dumps[0].space, EK_MS_ANY);
    assert_int_equal(cpu->dumps[0].present, 1);
    assert_non_null(strstr(cpu->dumps[1].path, "/mem.bin"));
    assert_int_equal(cpu->dumps[1].address, 0x80000);
    assert_int_equal(cpu->dumps[1].offset, 0x10);
    assert_int_equal(cpu->dumps[1].length, 0x20);
    assert_int_equal(cpu->dumps[1].has_length, 1);
    assert_int_equal(cpu->dumps[1].space, EK_MS_EL1N);
    assert_int_equal(cpu->dumps[2].space, EK_MS_S);

    /* Buffers: buffers= order, and the reference lister's section order. */
    assert_int_equal(ss->nbuffers, 2);
    assert_string_equal(ss->buffers[0].name, "ETB_0");
    assert_string_equal(ss->buffers[0].section, "buffer0");
    assert_int_equal(ss->buffers[0].format, EK_BUF_CORESIGHT);
    assert_int_equal(ss->buffers[0].file_size, 64);
    assert_int_equal(ss->buffers[1].format, EK_BUF_SOURCE_DATA);
    assert_int_equal(ss->buffer_order[0], 1); /* [buffer1] comes first in the file */
    assert_int_equal(ss->buffer_order[1], 0);
    assert_int_equal(ek_snapshot_find_buffer(ss, "etb_1"), 1);
    assert_int_equal(ek_snapshot_find_buffer(ss, "nothing"), -1);

    /* Sources, in device-list order, with typed configuration. */
    assert_int_equal(ss->nsources, 4);
    const ek_snap_source *s = &ss->sources[0];
    assert_string_equal(ss->devices[s->device].name, "etm_0");
    assert_int_equal(s->cfg.protocol, EK_PROTO_ETMV4);
    assert_int_equal(s->cfg.trace_id, 0x10);
    assert_int_equal(s->cfg.arch, EK_ARCH_V8A);
    assert_int_equal(s->cfg.profile, EK_PROFILE_A);
    assert_int_equal(s->buffer, 0);
    assert_string_equal(ss->devices[s->core].name, "cpu_0");
    const ek_etm4_regs *e4 = &s->cfg.regs.etm4;
    assert_int_equal(e4->configr, 0xC1);
    assert_int_equal(e4->traceidr, 0x90);
    assert_int_equal(e4->idr[0], 0x28000EA1);
    assert_int_equal(e4->idr[1], 0x4100F403); /* the reference decoder's default */
    assert_int_equal(e4->idr[2], 0x488);
    assert_int_equal(e4->idr[4], 0x11170004);
    assert_int_equal(e4->authstatus, 0xCC);
    assert_int_equal(e4->present, (1u << 0) | (1u << 2) | (1u << 4) | (1u << 8) |
                                      EK_ETM4_HAVE_CONFIGR | EK_ETM4_HAVE_TRACEIDR |
                                      EK_ETM4_HAVE_AUTHSTATUS);

    s = &ss->sources[1];
    assert_string_equal(ss->devices[s->device].name, "ETE_1");
    assert_int_equal(s->cfg.protocol, EK_PROTO_ETE);
    assert_int_equal(s->cfg.trace_id, 0x22);
    assert_int_equal(s->buffer, 1);
    assert_string_equal(ss->devices[s->core].name, "cpu_0"); /* the repeated cpu_0= key */
    assert_int_equal(s->cfg.regs.etm4.devarch, 0x47725a13);
    assert_true(s->cfg.regs.etm4.present & EK_ETM4_HAVE_DEVARCH);

    s = &ss->sources[2];
    assert_int_equal(s->cfg.protocol, EK_PROTO_STM);
    assert_int_equal(s->cfg.trace_id, 0x20);
    assert_int_equal(s->cfg.regs.tcr, 0x00200003);
    assert_int_equal(s->core, -1);
    assert_int_equal(s->buffer, 0);
    assert_int_equal(s->cfg.arch, EK_ARCH_UNKNOWN);

    s = &ss->sources[3];
    assert_int_equal(s->cfg.protocol, EK_PROTO_PTM);
    assert_int_equal(s->cfg.trace_id, 0x13);
    assert_int_equal(s->cfg.regs.etm3.etmcr, 0x10001000);
    assert_int_equal(s->cfg.regs.etm3.etmidr, 0x411CF312);
    assert_int_equal(s->cfg.arch, EK_ARCH_V7A);

    ek_snapshot_free(ss);
    tu_rmtree(dir);
    free(dir);
}

static void test_broken_snapshot(void **state)
{
    char *dir = make_good();
    /* A device list with a missing file, an unknown device type, a core of unknown type,
     * malformed lines; a dump whose file is missing; a trace file that is missing; an
     * unknown buffer format; a source with no buffer. */
    put(dir, "snapshot.ini",
        "[snapshot]\nversion=1.0\n"
        "junk line without equals\n"
        "[device_list]\n"
        "device0=cpu_0.ini\n"
        "device1=etm_0.ini\n"
        "device2=ete_1.ini\n"
        "device3=gone.ini\n"
        "device4=weird.ini\n"
        "device5=cpu_x.ini\n"
        "device6=stm.ini\n"
        "[trace\n" /* unterminated: metadata below is ignored */
        "metadata=nothing.ini\n"
        "[trace]\n"
        "metadata=trace.ini\n");
    put(dir, "cpu_0.ini",
        "[device]\nname=cpu_0\nclass=core\ntype=Cortex-A53\n"
        "[dump1]\nfile=nothere.bin\naddress=0x1000\n"
        "[dump2]\nfile=mem.bin\naddress=0x2000\noffset=0x10\nlength=0x1000\n"
        "[dump3]\naddress=0x3000\n"
        "[dump4]\nfile=mem.bin\naddress=0x4000\nspace=EL9\n");
    put(dir, "weird.ini",
        "[device]\nname=FOO_0\nclass=trace_source\ntype=FOO7\n"
        "[regs]\nA(=1\nB=notanumber\nC(id:zz)=1\nD=0x5\n");
    put(dir, "cpu_x.ini", "[device]\nname=cpu_x\nclass=core\ntype=Cortex-Z99\n");
    put(dir, "trace.ini",
        "[trace_buffers]\nbuffers=buffer0,buffer1,buffer9\n"
        "[buffer0]\nname=ETB_0\nfile=cstrace.bin\nformat=coresight\n"
        "[buffer1]\nname=ETB_1\nfile=missing.bin\nformat=strange\n"
        "[source_buffers]\netm_0=ETB_0\nFOO_0=ETB_0\nghost=ETB_0\n"
        "STM_0=NOBUF\n"
        "[core_trace_sources]\ncpu_0=etm_0\ncpu_x=ETE_1\nnocore=FOO_0\n");
    rec r = {0};
    ek_diag d = {rec_fn, &r};
    ek_snapshot *ss = NULL;
    assert_int_equal(ek_snapshot_open(dir, &d, &ss), 0);
    assert_non_null(ss);

    /* Malformed lines: one each, with file and line. */
    assert_int_equal(count(&r, "ini.malformed-line", EK_SEV_WARN), 2);
    const ev *e = find_ev(&r, "ini.malformed-line", "snapshot.ini");
    assert_non_null(e);
    assert_int_equal(e->line, 3);
    /* Missing device file: warning, other devices load. */
    e = find_ev(&r, "snapshot.missing-file", "snapshot.ini");
    assert_non_null(e);
    assert_int_equal(e->sev, EK_SEV_WARN);
    assert_int_equal(e->line, 8);
    assert_int_equal(ss->ndevices, 6);
    assert_null(ek_snapshot_find_device(ss, "gone"));
    /* Missing dump file: warning at its section line; dump kept, not present. */
    e = find_ev(&r, "snapshot.missing-file", "cpu_0.ini");
    assert_non_null(e);
    assert_int_equal(e->sev, EK_SEV_WARN);
    assert_int_equal(e->line, 5);
    const ek_snap_device *cpu = ek_snapshot_find_device(ss, "cpu_0");
    assert_int_equal(cpu->ndumps, 3); /* dump3 has no file= and is dropped */
    assert_int_equal(cpu->dumps[0].present, 0);
    assert_int_equal(cpu->dumps[0].length, 0);
    assert_int_equal(cpu->dumps[1].present, 1);
    assert_int_equal(cpu->dumps[2].space, EK_MS_ANY);
    assert_int_equal(count(&r, "snapshot.missing-key", EK_SEV_WARN), 1);
    /* dump2's length runs past the file; dump4's space is unknown; weird.ini's 3 bad regs. */
    assert_int_equal(count(&r, "snapshot.bad-value", EK_SEV_WARN), 5);
    const ek_snap_device *weird = ek_snapshot_find_device(ss, "FOO_0");
    assert_int_equal(weird->nregs, 1);
    assert_string_equal(weird->regs[0].name, "D");
    /* Unknown device type and unknown core. */
    assert_int_equal(count(&r, "snapshot.unknown-device-type", EK_SEV_WARN), 1);
    assert_int_equal(count(&r, "snapshot.unknown-core", EK_SEV_WARN), 1);
    const ek_snap_source *foo = src_named(ss, "FOO_0");
    assert_non_null(foo);
    assert_int_equal(foo->cfg.protocol, EK_PROTO_UNKNOWN);
    const ek_snap_source *ete = src_named(ss, "ETE_1");
    assert_int_equal(ete->cfg.arch, EK_ARCH_UNKNOWN);
    assert_string_equal(ss->devices[ete->core].name, "cpu_x");
    /* The trace file is missing: an error for that buffer, which is kept but not present. */
    e = find_ev(&r, "snapshot.missing-file", "trace.ini");
    assert_non_null(e);
    assert_int_equal(e->sev, EK_SEV_ERROR);
    assert_int_equal(count_sev(&r, EK_SEV_ERROR), 1);
    assert_int_equal(ss->nbuffers, 2);
    assert_int_equal(ss->buffers[1].present, 0);
    assert_int_equal(ss->buffers[1].format, EK_BUF_UNKNOWN);
    assert_int_equal(count(&r, "snapshot.unknown-format", EK_SEV_WARN), 1);
    /* buffer9, ghost, NOBUF, nocore: names that do not exist. */
    assert_int_equal(count(&r, "snapshot.unknown-device", EK_SEV_WARN), 4);
    /* ETE_1 and STM_0 have no buffer. */
    assert_int_equal(count(&r, "snapshot.no-buffer", EK_SEV_WARN), 2);
    assert_int_equal(src_named(ss, "ETE_1")->buffer, -1);
    assert_int_equal(src_named(ss, "etm_0")->buffer, 0);
    /* The usable part is intact. */
    const ek_snap_source *etm = src_named(ss, "etm_0");
    assert_int_equal(etm->cfg.trace_id, 0x10);
    assert_int_equal(etm->cfg.arch, EK_ARCH_V8A);
    ek_snapshot_free(ss);

    /* A register the protocol needs is missing: warning, value 0, present bit clear. */
    put(dir, "etm_0.ini",
        "[device]\nname=etm_0\nclass=trace_source\ntype=ETM4.3\n"
        "[regs]\nTRCIDR0=0x28000EA1\nTRCIDR2=0x488\nTRCCONFIGR=1\n");
    memset(&r, 0, sizeof r);
    assert_int_equal(ek_snapshot_open(dir, &d, &ss), 0);
    etm = src_named(ss, "etm_0");
    assert_int_equal(etm->cfg.protocol, EK_PROTO_ETMV4);
    assert_int_equal(etm->cfg.trace_id, 0);
    assert_false(etm->cfg.regs.etm4.present & EK_ETM4_HAVE_TRACEIDR);
    assert_int_equal(count(&r, "snapshot.missing-register", EK_SEV_WARN), 1);
    ek_snapshot_free(ss);

    /* A register the protocol needs given with a value that is no number (more than 64 bits,
     * or no number at all): one line, where the file gives it; not a second one saying the
     * file has no such register. */
    put(dir, "etm_0.ini",
        "[device]\nname=etm_0\nclass=trace_source\ntype=ETM4.3\n"
        "[regs]\nTRCIDR0=0x28000EA1\nTRCIDR2=0x488\nTRCCONFIGR=1\n"
        "TRCTRACEIDR(0x010)=0x1FFFFFFFFFFFFFFFF\nTRCIDR1=one\n");
    memset(&r, 0, sizeof r);
    assert_int_equal(ek_snapshot_open(dir, &d, &ss), 0);
    etm = src_named(ss, "etm_0");
    assert_int_equal(etm->cfg.trace_id, 0);
    assert_false(etm->cfg.regs.etm4.present & EK_ETM4_HAVE_TRACEIDR);
    assert_int_equal(etm->cfg.regs.etm4.idr[1], 0x4100F403); /* the default, as when absent */
    assert_int_equal(count(&r, "snapshot.missing-register", -1), 0);
    assert_int_equal(count(&r, "snapshot.default-register", -1), 6); /* TRCIDR8..13 */
    int bad = 0;
    for (int i = 0; i < r.n && i < 64; i++)
        bad += !strcmp(r.e[i].kind, "snapshot.bad-value") && strstr(r.e[i].file, "/etm_0.ini");
    assert_int_equal(bad, 2);
    e = find_ev(&r, "snapshot.bad-value", "etm_0.ini");
    assert_int_equal(e->line, 9);
    assert_string_equal(e->msg, "register TRCTRACEIDR: value '0x1FFFFFFFFFFFFFFFF' is not a "
                                "64-bit number; the register is ignored");
    ek_snapshot_free(ss);

    /* No trace metadata at all: nothing usable. */
    put(dir, "snapshot.ini", "[snapshot]\nversion=1.0\n[device_list]\ndevice0=cpu_0.ini\n");
    memset(&r, 0, sizeof r);
    assert_true(ek_snapshot_open(dir, &d, &ss) < 0);
    assert_null(ss);
    assert_int_equal(count_sev(&r, EK_SEV_ERROR), 1);

    tu_rmtree(dir);
    free(dir);

    /* Not a snapshot folder. */
    char *empty = tu_tmpdir();
    memset(&r, 0, sizeof r);
    assert_int_equal(ek_snapshot_open(empty, &d, &ss), EK_ERR_IO);
    assert_null(ss);
    assert_int_equal(count(&r, "snapshot.missing-file", EK_SEV_ERROR), 1);
    tu_rmtree(empty);
    free(empty);
}

/* Names given twice: a register (any case), a buffer listed twice, a buffer section that is
 * in the file twice, two buffers of one name: the first is used, a note says so; names are
 * matched ignoring case. (Looked up through indexes since they were scans that made large files
 * quadratic: the same results.) */
static void test_repeated_names(void **state)
{
    char *dir = make_good();
    put(dir, "etm_0.ini",
        "[device]\nname=etm_0\nclass=trace_source\ntype=ETM4\n"
        "[regs]\nTRCCONFIGR=0xC1\nTRCTRACEIDR=0x10\nTRCIDR0=0x28000EA1\nTRCIDR2=0x488\n"
        "trcidr0=0x1\nTRCIDR2(0x0E8)=0x2\nTrcTraceIdr=0x11\nX=1\n"
        "[regs]\nTRCIDR8=0x5\n"); /* (a second [regs] is not read) */
    put(dir, "trace.ini",
        "[trace_buffers]\nbuffers=buffer0, BUFFER1,buffer0,buffer2,nosuch,Buffer1\n"
        "[buffer0]\nname=ETB_0\nfile=cstrace.bin\n"
        "[buffer1]\nname=etb_0\nfile=raw.bin\nformat=source_data\n"
        "[buffer2]\nname=ETB_2\nfile=cstrace.bin\n"
        "[BUFFER2]\nname=ETB_3\nfile=raw.bin\n"
        "[source_buffers]\nETM_0=Etb_0\nstm_0=ETB_2\nete_1=ETB_3\nPTM_0=etb_2\n"
        "[core_trace_sources]\nCPU_0=ETM_0\ncpu_0=ete_1\n");
    rec r = {0};
    ek_diag d = {rec_fn, &r};
    ek_snapshot *ss = NULL;
    assert_int_equal(ek_snapshot_open(dir, &d, &ss), 0);
    /* trcidr0, TRCIDR2(0x0E8), TrcTraceIdr again; buffer0 and Buffer1 listed again; etb_0 */
    assert_int_equal(count(&r, "snapshot.duplicate", EK_SEV_NOTE), 6);
    assert_int_equal(count(&r, "snapshot.unknown-device", EK_SEV_WARN), 2); /* nosuch, ETB_3 */
    const ek_snap_device *etm = ek_snapshot_find_device(ss, "ETM_0");
    assert_int_equal(etm->nregs, 5);
    uint64_t v = 0;
    assert_true(ek_snap_device_reg(etm, "TRCIDR0", &v));
    assert_int_equal(v, 0x28000EA1);
    assert_true(ek_snap_device_reg(etm, "trcidr2", &v));
    assert_int_equal(v, 0x488);
    assert_false(ek_snap_device_reg(etm, "TRCIDR8", &v));
    const ek_snap_source *s = src_named(ss, "etm_0");
    assert_int_equal(s->cfg.trace_id, 0x10);
    assert_int_equal(ss->nbuffers, 3);
    assert_string_equal(ss->buffers[0].section, "buffer0");
    assert_string_equal(ss->buffers[1].section, "buffer1");
    assert_string_equal(ss->buffers[2].section, "buffer2");
    assert_string_equal(ss->buffers[2].name, "ETB_2"); /* the first [buffer2] */
    assert_int_equal(ek_snapshot_find_buffer(ss, "ETB_0"), 0);
    assert_int_equal(s->buffer, 0); /* Etb_0: the first buffer of that name */
    assert_int_equal(src_named(ss, "STM_0")->buffer, 2);
    assert_int_equal(src_named(ss, "PTM_0")->buffer, 2);
    assert_int_equal(src_named(ss, "ETE_1")->buffer, -1);
    assert_string_equal(ss->devices[s->core].name, "cpu_0");
    assert_string_equal(ss->devices[src_named(ss, "ETE_1")->core].name, "cpu_0");
    ek_snapshot_free(ss);
    tu_rmtree(dir);
    free(dir);
}

/* A trace ID register whose ID (bits 6:0; STM, ITM: 22:16) is the null ID or a reserved one
 * (0x70-0x7f) where formatted trace needs IDs: one warning at the register's line (it was taken
 * without a word: ETMv4's all-ones masked to 0x7f lost the source's trace). */
static void test_trace_id_range(void **state)
{
    char *dir = make_good();
    put(dir, "etm_0.ini",
        "[device]\nname=etm_0\nclass=trace_source\ntype=ETM4\n"
        "[regs]\nTRCCONFIGR=0xC1\nTRCIDR0=0x28000EA1\nTRCIDR2=0x488\n"
        "TRCTRACEIDR(0x010)=0xFFFFFFFFFFFFFFFF\n");
    put(dir, "stm.ini",
        "[device]\nname=STM_0\nclass=trace_source\ntype=STM\n[regs]\nSTMTCSR=0x00000003\n");
    put(dir, "ptm.ini",
        "[device]\nname=PTM_0\nclass=trace_source\ntype=PTM1.1\n"
        "[regs]\nETMCR=0x10001000\nETMIDR=0x411CF312\nETMCCER=0x34C01AC2\n"
        "ETMTRACEIDR=0x16F\n"); /* 0x6f: the last usable ID */
    put(dir, "ete_1.ini",
        "[device]\nname=ETE_1\nclass=trace_source\ntype=ETE\n"
        "[regs]\nTRCCONFIGR=0x8001\nTRCTRACEIDR=0x0\nTRCIDR0=0x28c1cea1\nTRCIDR2=0xd0001088\n"
        "TRCIDR8=0\n"); /* in a single-source buffer (ETB_1): no ID needed */
    rec r = {0};
    ek_diag d = {rec_fn, &r};
    ek_snapshot *ss = NULL;
    assert_int_equal(ek_snapshot_open(dir, &d, &ss), 0);
    assert_int_equal(count(&r, "snapshot.bad-value", -1), 2);
    assert_int_equal(count_sev(&r, EK_SEV_WARN), 2);
    const ev *e = find_ev(&r, "snapshot.bad-value", "/etm_0.ini");
    assert_non_null(e);
    assert_int_equal(e->line, 9);
    assert_string_equal(e->msg, "TRCTRACEIDR=0xffffffffffffffff gives trace ID 0x7f, a reserved "
                                "ID, not a usable one (0x01-0x6f): no trace of etm_0 can be found "
                                "in buffer ETB_0");
    e = find_ev(&r, "snapshot.bad-value", "/stm.ini");
    assert_non_null(e);
    assert_int_equal(e->line, 6);
    assert_string_equal(e->msg, "STMTCSR=0x3 gives trace ID 0x00, the null ID, not a usable one "
                                "(0x01-0x6f): no trace of STM_0 can be found in buffer ETB_0");
    /* the configuration is as before: the masked value */
    assert_int_equal(src_named(ss, "etm_0")->cfg.trace_id, 0x7f);
    assert_int_equal(src_named(ss, "PTM_0")->cfg.trace_id, 0x6f);
    ek_snapshot_free(ss);
    tu_rmtree(dir);
    free(dir);
}

/* A device file listed twice, or a second file with a name already used: one warning at its
 * snapshot.ini line, and the device is left out. (Kept, it was a second device trace.ini could
 * not name: warnings that its source had no core and no buffer, naming trace.ini, while the
 * cause was a note.) */
static void test_device_listed_twice(void **state)
{
    char *dir = make_good();
    put(dir, "snapshot.ini",
        "[snapshot]\nversion=1.0\n"
        "[device_list]\n"
        "device0=cpu_0.ini\n"
        "device1=etm_0.ini\n"
        "device2=ete_1.ini\n"
        "device3=stm.ini\n"
        "device4=cpu_1.ini\n"
        "device5=ptm.ini\n"
        "device6=etm_0.ini\n"
        "device7=other.ini\n"
        "[trace]\nmetadata=trace.ini\n");
    put(dir, "other.ini", "[device]\nname=CPU_1\nclass=core\ntype=Cortex-A53\n");
    rec r = {0};
    ek_diag d = {rec_fn, &r};
    ek_snapshot *ss = NULL;
    assert_int_equal(ek_snapshot_open(dir, &d, &ss), 0);
    assert_int_equal(count_sev(&r, EK_SEV_WARN) + count_sev(&r, EK_SEV_ERROR), 2);
    assert_int_equal(count(&r, "snapshot.duplicate", EK_SEV_WARN), 2);
    const ev *e = find_ev(&r, "snapshot.duplicate", "/snapshot.ini");
    assert_non_null(e);
    assert_int_equal(e->line, 10);
    assert_string_equal(e->msg, "[device_list] device6=etm_0.ini: device file listed again (first "
                                "by device1 at line 5); ignored");
    e++; /* the next event */
    assert_string_equal(e->kind, "snapshot.duplicate");
    assert_int_equal(e->line, 11);
    assert_string_equal(e->msg, "[device_list] device7=other.ini: device name 'CPU_1' is already "
                                "that of device4=cpu_1.ini (line 8); this device is ignored");
    assert_int_equal(ss->ndevices, 6);
    assert_int_equal(ss->nsources, 4);
    const ek_snap_source *s = src_named(ss, "etm_0");
    assert_int_equal(s->buffer, 0);
    assert_string_equal(ss->devices[s->core].name, "cpu_0");
    assert_string_equal(ek_snapshot_find_device(ss, "cpu_1")->type, "Cortex-A7");
    ek_snapshot_free(ss);
    tu_rmtree(dir);
    free(dir);
}

static void test_core_arch_names(void **state)
{
    static const struct {
        const char *name;
        ek_arch arch;
        ek_arch_profile prof;
        int known;
    } t[] = {
        {"Cortex-A53", EK_ARCH_V8A, EK_PROFILE_A, 1},
        {"Cortex-A55", EK_ARCH_V8_3A, EK_PROFILE_A, 1},
        {"Cortex-A15", EK_ARCH_V7A, EK_PROFILE_A, 1},
        {"Cortex-A9", EK_ARCH_V7A, EK_PROFILE_A, 1},
        {"Cortex-R52", EK_ARCH_V8R, EK_PROFILE_R, 1},
        {"Cortex-R5", EK_ARCH_V7R, EK_PROFILE_R, 1},
        {"Cortex-M4", EK_ARCH_V7M, EK_PROFILE_M, 1},
        {"Cortex-M0+", EK_ARCH_V7M, EK_PROFILE_M, 1},
        {"Cortex-M33", EK_ARCH_V8M, EK_PROFILE_M, 1},
        {"Cortex-M55", EK_ARCH_V8_1M, EK_PROFILE_M, 1},
        {"cortex-a72", EK_ARCH_V8A, EK_PROFILE_A, 1},
        {"ARM-AA64", EK_ARCH_V9A, EK_PROFILE_A, 1},
        {"ARM-aa64", EK_ARCH_V9A, EK_PROFILE_A, 1},
        {"ARM-AA64-R", EK_ARCH_V8R, EK_PROFILE_R, 1},
        {"ARMv7-A", EK_ARCH_V7A, EK_PROFILE_A, 1},
        {"ARMv7-M", EK_ARCH_V7M, EK_PROFILE_M, 1},
        {"ARMv8-A", EK_ARCH_V8A, EK_PROFILE_A, 1},
        {"ARMv8.2-A", EK_ARCH_V8A, EK_PROFILE_A, 1},
        {"ARMv8.3-A", EK_ARCH_V8_3A, EK_PROFILE_A, 1},
        {"ARMv8.6-A", EK_ARCH_V9A, EK_PROFILE_A, 1},
        {"ARMv9-A", EK_ARCH_V9A, EK_PROFILE_A, 1},
        {"ARMv8-M", EK_ARCH_V8M, EK_PROFILE_M, 1},
        {"ARMv8.1-M", EK_ARCH_V8_1M, EK_PROFILE_M, 1},
        {"ARMv8-R", EK_ARCH_V8R, EK_PROFILE_R, 1},
        {"ARMv6-M", EK_ARCH_UNKNOWN, EK_PROFILE_UNKNOWN, 0},
        {"ARMv8-X", EK_ARCH_UNKNOWN, EK_PROFILE_UNKNOWN, 0},
        {"ARMv8", EK_ARCH_UNKNOWN, EK_PROFILE_UNKNOWN, 0},
        {"ARM-AA32", EK_ARCH_UNKNOWN, EK_PROFILE_UNKNOWN, 0},
        {"Cortex-Z1", EK_ARCH_UNKNOWN, EK_PROFILE_UNKNOWN, 0},
        {"", EK_ARCH_UNKNOWN, EK_PROFILE_UNKNOWN, 0},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        ek_arch a;
        ek_arch_profile p;
        int k = ek_core_arch(t[i].name, &a, &p);
        if (k != t[i].known || a != t[i].arch || p != t[i].prof)
            fail_msg("%s: got %d %s %d", t[i].name, k, ek_arch_name(a), p);
    }
}

/* ---- the real snapshots ---- */

static char *ss_path(const char *name)
{
    char rel[512];
    snprintf(rel, sizeof rel, "opencsd/snapshots/%s", name);
    return tu_shared_path(rel);
}

static ek_snapshot *open_real(const char *name, rec *r)
{
    char *p = ss_path(name);
    if (!p) return NULL;
    ek_diag d = {rec_fn, r};
    ek_snapshot *ss = NULL;
    int rc = ek_snapshot_open(p, &d, &ss);
    if (rc) fail_msg("%s: open failed %d", name, rc);
    free(p);
    return ss;
}

static void test_real_facts(void **state)
{
    rec r = {0};
    ek_snapshot *ss = open_real("bugfix-exact-match", &r);
    if (!ss) tu_skip("../shared/testdata/opencsd/snapshots/bugfix-exact-match is absent");
    assert_int_equal(ss->nbuffers, 1);
    assert_int_equal(ss->buffers[0].format, EK_BUF_CORESIGHT);
    assert_int_equal(ss->nsources, 6);
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(ss->sources[i].cfg.protocol, EK_PROTO_ETMV4);
        assert_int_equal(ss->sources[i].cfg.trace_id, 0x10 + 2 * i);
        assert_int_equal(ss->sources[i].buffer, 0);
        assert_true(ss->sources[i].core >= 0);
    }
    /* cpu_1 is a Cortex-A72, cpu_0 a Cortex-A53: both v8-A. */
    assert_int_equal(ss->sources[1].cfg.arch, EK_ARCH_V8A);
    assert_string_equal(ss->devices[ss->sources[1].core].type, "Cortex-A72");
    assert_int_equal(ss->devices[0].ndumps, 5);
    ek_snapshot_free(ss);

    memset(&r, 0, sizeof r);
    ss = open_real("ete-ite-instr", &r);
    assert_int_equal(ss->nsources, 2);
    assert_int_equal(ss->nbuffers, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(ss->sources[i].cfg.protocol, EK_PROTO_ETE);
        assert_int_equal(ss->buffers[i].format, EK_BUF_SOURCE_DATA);
        assert_int_equal(ss->sources[i].cfg.arch, EK_ARCH_V9A);
        assert_int_equal(ss->sources[i].core, ss->sources[0].core); /* one core, 2 sessions */
    }
    assert_int_not_equal(ss->sources[0].buffer, ss->sources[1].buffer);
    ek_snapshot_free(ss);

    memset(&r, 0, sizeof r);
    ss = open_real("armv8_1m_branches", &r);
    assert_int_equal(ss->nsources, 1);
    assert_int_equal(ss->sources[0].cfg.protocol, EK_PROTO_ETMV4M);
    assert_int_equal(ss->sources[0].cfg.arch, EK_ARCH_V8_1M);
    assert_int_equal(ss->sources[0].cfg.profile, EK_PROFILE_M);
    assert_string_equal(ss->devices[ss->sources[0].core].type, "Cortex-M55");
    ek_snapshot_free(ss);

    memset(&r, 0, sizeof r);
    ss = open_real("a55-test-tpiu", &r);
    assert_int_equal(ss->nbuffers, 1);
    assert_int_equal(ss->buffers[0].format, EK_BUF_DSTREAM);
    assert_int_equal(ss->sources[0].cfg.trace_id, 1);
    assert_int_equal(ss->sources[0].cfg.arch, EK_ARCH_V8_3A);
    /* The dump file this snapshot names is not shipped with it: a warning, not an error. */
    assert_int_equal(count(&r, "snapshot.missing-file", EK_SEV_WARN), 1);
    ek_snapshot_free(ss);

    memset(&r, 0, sizeof r);
    ss = open_real("TC2", &r);
    const ek_snap_source *itm = src_named(ss, "ITM_0");
    assert_non_null(itm);
    assert_int_equal(itm->cfg.protocol, EK_PROTO_ITM);
    assert_int_equal(src_named(ss, "ETM_0")->cfg.protocol, EK_PROTO_ETMV3);
    assert_int_equal(src_named(ss, "PTM_0")->cfg.protocol, EK_PROTO_PTM);
    ek_snapshot_free(ss);
}

/* Every snapshot loads without an error-severity diagnostic, and the buffer the reference
 * lister decodes first (its "Using NAME as trace source" line) is buffer_order[0], holding
 * sources of the protocol cases.tsv names. */
static void test_all_real_snapshots(void **state)
{
    char *base = tu_shared_path("opencsd/snapshots");
    char *cases = tu_shared_path("opencsd/cases.tsv");
    if (!base || !cases) {
        free(base);
        free(cases);
        tu_skip("../shared/testdata/opencsd is absent");
    }
    DIR *dir = opendir(base);
    assert_non_null(dir);
    struct dirent *de;
    int n = 0;
    while ((de = readdir(dir))) {
        if (de->d_name[0] == '.') continue;
        rec r = {0};
        ek_snapshot *ss = open_real(de->d_name, &r);
        assert_non_null(ss);
        for (int i = 0; i < r.n && i < 64; i++)
            if (r.e[i].sev == EK_SEV_ERROR)
                fail_msg("%s: error diagnostic %s: %s", de->d_name, r.e[i].kind, r.e[i].msg);
        assert_true(ss->nbuffers >= 1);
        assert_true(ss->nsources >= 1);
        for (size_t i = 0; i < ss->nbuffers; i++)
            assert_int_equal(ss->buffers[i].present, 1);
        ek_snapshot_free(ss);
        n++;
    }
    closedir(dir);
    assert_true(n >= 40);

    FILE *f = fopen(cases, "r");
    assert_non_null(f);
    char line[1024];
    int checked = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        char cname[256], sname[256], proto[64];
        if (sscanf(line, "%255s %255s %63s", cname, sname, proto) != 3) continue;
        char rel[512];
        snprintf(rel, sizeof rel, "opencsd/expected/%s.ppl.xz", cname);
        char *xz = tu_shared_path(rel);
        if (!xz) continue;
        char cmd[1024], using[256] = "";
        snprintf(cmd, sizeof cmd, "xz -dc '%s' 2>/dev/null | head -40", xz);
        FILE *p = popen(cmd, "r");
        assert_non_null(p);
        char l2[1024];
        while (fgets(l2, sizeof l2, p))
            if (sscanf(l2, "Using %255s as trace source", using) == 1) break;
        while (fgets(l2, sizeof l2, p))
            ;
        pclose(p);
        free(xz);
        if (!using[0]) continue;
        rec r = {0};
        ek_snapshot *ss = open_real(sname, &r);
        assert_non_null(ss);
        const ek_snap_buffer *b = &ss->buffers[ss->buffer_order[0]];
        if (strcmp(b->name, using) != 0)
            fail_msg("%s: first buffer %s, reference lister used %s", cname, b->name, using);
        /* Protocols of the sources on that buffer: "ETMv3+PTM+ITM" lists them all. */
        char want[80];
        snprintf(want, sizeof want, "+%s+", proto);
        for (size_t i = 0; i < ss->nsources; i++) {
            const ek_snap_source *s = &ss->sources[i];
            if (s->buffer != (long)ss->buffer_order[0]) continue;
            char have[32];
            snprintf(have, sizeof have, "+%s+", ek_protocol_name(s->cfg.protocol));
            if (!strstr(want, have))
                fail_msg("%s: source %s is %s, cases.tsv says %s", cname,
                         ss->devices[s->device].name, have, proto);
        }
        ek_snapshot_free(ss);
        checked++;
    }
    fclose(f);
    assert_true(checked >= 40);
    free(base);
    free(cases);
}

int main(int argc, char **argv)
{
    /* clang-format off */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_snapshot),
        cmocka_unit_test(test_broken_snapshot),
        cmocka_unit_test(test_repeated_names),
        cmocka_unit_test(test_trace_id_range),
        cmocka_unit_test(test_device_listed_twice),
        cmocka_unit_test(test_core_arch_names),
        cmocka_unit_test(test_real_facts),
        cmocka_unit_test(test_all_real_snapshots),
    };
    /* clang-format on */
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
