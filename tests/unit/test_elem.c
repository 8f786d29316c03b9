/* Element formatters: OpenCSD 1.8.0 element text, byte for byte, plus our text and JSON. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "etmkit/config.h"
#include "etmkit/elem.h"
#include "testutil.h"

/* instruction classes (etmkit/isa.h numbering, = OpenCSD's) */
enum { IT_OTHER = 0, IT_BR = 1, IT_BR_INDIRECT = 2, IT_ISB = 3 };
enum { IS_NONE = 0, IS_BR_LINK = 1, IS_V8_RET = 2 };

static void check_ocsd(const ek_elem *e, const char *want)
{
    ek_sbuf s = EK_SBUF_INIT;
    ek_elem_format_ocsd_line(&s, e);
    assert_non_null(s.p);
    assert_string_equal(s.p, want);
    ek_sbuf_free(&s);
}

static ek_elem mk(int type, uint64_t idx, uint8_t id)
{
    ek_elem e;
    memset(&e, 0, sizeof e);
    e.type = (uint8_t)type;
    e.index = idx;
    e.trace_id = id;
    return e;
}

static void test_ocsd_ranges(void **state)
{
    ek_elem e = mk(EK_ELEM_INSTR_RANGE, 384, 0x12);
    e.st_addr = 0x4d2488;
    e.en_addr = 0x4d2494;
    e.num_instr = 3;
    e.last_i_size = 4;
    e.isa = EK_ISET_A64;
    e.flags = EK_ELEMF_LAST_EXEC;
    e.last_i_type = IT_BR_INDIRECT;
    e.last_i_sub = IS_V8_RET;
    check_ocsd(&e, "Idx:384; ID:12; OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x4d2488:[0x4d2494] "
                   "num_i(3) last_sz(4) (ISA=A64) E iBR A64:ret )\n");
    e.flags = EK_ELEMF_LAST_COND;
    e.last_i_type = IT_BR;
    e.last_i_sub = IS_NONE;
    check_ocsd(&e, "Idx:384; ID:12; OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x4d2488:[0x4d2494] "
                   "num_i(3) last_sz(4) (ISA=A64) N BR   <cond>)\n");
    e.flags = EK_ELEMF_LAST_EXEC;
    e.last_i_sub = IS_BR_LINK;
    check_ocsd(&e, "Idx:384; ID:12; OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x4d2488:[0x4d2494] "
                   "num_i(3) last_sz(4) (ISA=A64) E BR  b+link )\n");
    e.last_i_type = IT_ISB;
    e.last_i_sub = 0;
    check_ocsd(&e, "Idx:384; ID:12; OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x4d2488:[0x4d2494] "
                   "num_i(3) last_sz(4) (ISA=A64) E ISB )\n");
    e.last_i_type = IT_OTHER;
    check_ocsd(&e, "Idx:384; ID:12; OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x4d2488:[0x4d2494] "
                   "num_i(3) last_sz(4) (ISA=A64) E --- )\n");

    ek_elem n = mk(EK_ELEM_I_RANGE_NOPATH, 395, 1);
    n.st_addr = 0x6951c;
    n.en_addr = 0x63830;
    n.num_instr = 4;
    check_ocsd(&n, "Idx:395; ID:1; OCSD_GEN_TRC_ELEM_I_RANGE_NOPATH(first 0x6951c:[next 0x63830] "
                   "num_i(4) )\n");

    ek_elem a = mk(EK_ELEM_ADDR_NACC, 1703, 0x10);
    a.st_addr = 0xffffffc000594ac0;
    a.u.mem_space = EK_MS_EL1N;
    check_ocsd(&a, "Idx:1703; ID:10; OCSD_GEN_TRC_ELEM_ADDR_NACC( 0xffffffc000594ac0; Memspace "
                   "[0x2:EL1N] )\n");
    a.u.mem_space = EK_MS_S;
    check_ocsd(&a, "Idx:1703; ID:10; OCSD_GEN_TRC_ELEM_ADDR_NACC( 0xffffffc000594ac0; Memspace "
                   "[0x19:Any S] )\n");
    a.u.mem_space = EK_MS_EL1N | EK_MS_EL3;
    check_ocsd(&a, "Idx:1703; ID:10; OCSD_GEN_TRC_ELEM_ADDR_NACC( 0xffffffc000594ac0; Memspace "
                   "[0xa:EL1N,EL3,] )\n");
}

static void test_ocsd_context_and_exceptions(void **state)
{
    ek_elem c = mk(EK_ELEM_PE_CONTEXT, 1676, 0x10);
    c.isa = EK_ISET_A64;
    c.context.el = 1;
    c.context.el_valid = 1;
    c.context.security = EK_SEC_NONSECURE;
    c.context.bits64 = 1;
    c.context.vmid_valid = 1;
    c.context.ctxt_id_valid = 1;
    c.context.context_id = 0x4300;
    check_ocsd(&c, "Idx:1676; ID:10; OCSD_GEN_TRC_ELEM_PE_CONTEXT((ISA=A64) EL1N; 64-bit; "
                   "VMID=0x0; CTXTID=0x4300; )\n");
    c.context.vmid_valid = c.context.ctxt_id_valid = 0;
    c.context.security = EK_SEC_REALM;
    c.context.el = 2;
    check_ocsd(&c, "Idx:1676; ID:10; OCSD_GEN_TRC_ELEM_PE_CONTEXT((ISA=A64) EL2Realm; 64-bit; )\n");
    c.context.el_valid = 0;
    c.context.bits64 = 0;
    c.isa = EK_ISET_A32;
    c.context.security = EK_SEC_SECURE;
    check_ocsd(&c, "Idx:1676; ID:10; OCSD_GEN_TRC_ELEM_PE_CONTEXT((ISA=A32) S; 32-bit; )\n");

    ek_elem x = mk(EK_ELEM_EXCEPTION, 271975, 0x12);
    x.en_addr = 0x5910e8;
    x.flags = EK_ELEMF_EXCEP_RET_ADDR | EK_ELEMF_EXCEP_BR_TGT;
    x.u.exception_number = 0xe;
    check_ocsd(&x, "Idx:271975; ID:12; OCSD_GEN_TRC_ELEM_EXCEPTION(pref ret addr:0x5910e8 [addr "
                   "also prev br tgt]; excep num (0x0e) )\n");
    x.flags = 0;
    x.u.exception_number = 0x123;
    check_ocsd(&x, "Idx:271975; ID:12; OCSD_GEN_TRC_ELEM_EXCEPTION(excep num (0x123) )\n");

    ek_elem r = mk(EK_ELEM_EXCEPTION_RET, 27, 2);
    check_ocsd(&r, "Idx:27; ID:2; OCSD_GEN_TRC_ELEM_EXCEPTION_RET()\n");
}

static void test_ocsd_misc(void **state)
{
    ek_elem e = mk(EK_ELEM_NO_SYNC, 74, 0x12);
    e.u.unsync_reason = EK_UNSYNC_INIT_DECODER;
    check_ocsd(&e, "Idx:74; ID:12; OCSD_GEN_TRC_ELEM_NO_SYNC( [init-decoder])\n");
    e.type = EK_ELEM_EO_TRACE;
    e.index = 0;
    e.trace_id = 0x1a;
    e.u.unsync_reason = EK_UNSYNC_EOT;
    check_ocsd(&e, "Idx:0; ID:1a; OCSD_GEN_TRC_ELEM_EO_TRACE( [end-of-trace])\n");

    ek_elem t = mk(EK_ELEM_TRACE_ON, 1675, 0x10);
    check_ocsd(&t, "Idx:1675; ID:10; OCSD_GEN_TRC_ELEM_TRACE_ON( [begin or filter])\n");
    t.u.trace_on_reason = EK_TRACE_ON_OVERFLOW;
    check_ocsd(&t, "Idx:1675; ID:10; OCSD_GEN_TRC_ELEM_TRACE_ON( [overflow])\n");

    ek_elem ts = mk(EK_ELEM_TIMESTAMP, 59, 0x10);
    ts.timestamp = 0x2f150c0;
    check_ocsd(&ts, "Idx:59; ID:10; OCSD_GEN_TRC_ELEM_TIMESTAMP( [ TS=0x000002f150c0]; )\n");
    ts.timestamp = 0xfffffffff0006592ull;
    ts.flags = EK_ELEMF_HAS_CC;
    ts.cycle_count = 12;
    check_ocsd(
        &ts, "Idx:59; ID:10; OCSD_GEN_TRC_ELEM_TIMESTAMP( [ TS=0xfffffffff0006592];  [CC=12]; )\n");

    ek_elem cc = mk(EK_ELEM_CYCLE_COUNT, 60, 2);
    cc.flags = EK_ELEMF_HAS_CC;
    cc.cycle_count = 26;
    check_ocsd(&cc, "Idx:60; ID:2; OCSD_GEN_TRC_ELEM_CYCLE_COUNT( [CC=26]; )\n");

    ek_elem m = mk(EK_ELEM_SYNC_MARKER, 21, 1);
    check_ocsd(&m,
               "Idx:21; ID:1; OCSD_GEN_TRC_ELEM_SYNC_MARKER( [Timestamp marker(0x00000000)])\n");

    ek_elem tr = mk(EK_ELEM_MEMTRANS, 221, 2);
    tr.u.memtrans = EK_MEMTRANS_START;
    check_ocsd(&tr, "Idx:221; ID:2; OCSD_GEN_TRC_ELEM_MEMTRANS(Start)\n");

    ek_elem it = mk(EK_ELEM_INSTRUMENTATION, 42, 1);
    it.u.ite.el = 1;
    it.u.ite.value = 0xfffff;
    check_ocsd(&it, "Idx:42; ID:1; OCSD_GEN_TRC_ELEM_INSTRUMENTATION(EL1; 0x00000000000fffff)\n");

    ek_elem ev = mk(EK_ELEM_EVENT, 12, 1);
    ev.u.event.type = EK_EVENT_NUMBERED;
    ev.u.event.number = 1;
    check_ocsd(&ev, "Idx:12; ID:1; OCSD_GEN_TRC_ELEM_EVENT( Numbered:1; )\n");

    ek_elem bad = mk(99, 1, 1);
    check_ocsd(&bad, "Idx:1; ID:1; OCSD_GEN_TRC_ELEM??: index out of range.\n");
}

static void test_text_and_json(void **state)
{
    ek_elem e = mk(EK_ELEM_INSTR_RANGE, 384, 0x12);
    e.st_addr = 0x4d2488;
    e.en_addr = 0x4d2494;
    e.num_instr = 3;
    e.last_i_size = 4;
    e.isa = EK_ISET_A64;
    e.flags = EK_ELEMF_LAST_EXEC;
    e.last_i_type = IT_BR_INDIRECT;
    e.last_i_sub = IS_V8_RET;
    ek_sbuf s = EK_SBUF_INIT;
    ek_elem_format_text(&s, &e);
    assert_string_equal(
        s.p, "       384  12  > INSTR_RANGE        0x4d2488-0x4d2494 n=3 A64 last=ibr:ret/4 E\n");
    ek_sbuf_reset(&s);
    ek_elem_format_json(&s, &e);
    assert_string_equal(s.p,
                        "{\"idx\":384,\"id\":18,\"type\":\"instr_range\",\"start\":\"0x4d2488\","
                        "\"end\":\"0x4d2494\",\"n\":3,\"isa\":\"A64\",\"last\":\"ibr\","
                        "\"last_sub\":\"ret\",\"last_size\":4,\"executed\":true,\"cond\":false}\n");
    /* every type formats without overrunning its bound */
    for (int t = 0; t < EK_ELEM_NTYPES + 2; t++) {
        ek_elem z;
        memset(&z, 0xff, sizeof z);
        z.type = (uint8_t)t;
        ek_sbuf_reset(&s);
        ek_elem_format_text(&s, &z);
        ek_elem_format_json(&s, &z);
        ek_elem_format_ocsd_line(&s, &z);
        assert_true(s.len > 0);
    }
    ek_sbuf_free(&s);
}

/* ITMTRACE elements in the text and JSON lines: what each packet meant (stimulus text, the
 * DWT's counters, exceptions, PC samples and data trace, local and global time stamps), as
 * OpenCSD's ITM packet printer reads the discriminators (itm_only_raw's packets). */
static ek_elem itm(unsigned kind, unsigned port, uint32_t value, unsigned size)
{
    ek_elem e = mk(EK_ELEM_ITMTRACE, 7, 0x14);
    e.u.itm.kind = (uint8_t)kind;
    e.u.itm.port = (uint16_t)port;
    e.u.itm.value = value;
    e.u.itm.size = (uint8_t)size;
    return e;
}

static void test_itm_text_and_json(void **state)
{
    (void)state;
    ek_elem e[12];
    const char *text[12], *json[12];
    size_t n = 0;
    e[n] = itm(EK_ITM_SWIT, 1, 0x6c6c6548, 4);
    text[n] = "swit port=1 value=0x6c6c6548 \"Hell\"";
    json[n++] = "\"kind\":\"swit\",\"port\":1,\"value\":\"0x6c6c6548\",\"size\":4,"
                "\"text\":\"Hell\"";
    e[n] = itm(EK_ITM_SWIT, 74, 0x225c, 2); /* backslash, quote */
    text[n] = "swit port=74 value=0x225c \"\\\"\"";
    json[n++] = "\"kind\":\"swit\",\"port\":74,\"value\":\"0x225c\",\"size\":2,"
                "\"text\":\"\\\\\\\"\"";
    e[n] = itm(EK_ITM_SWIT, 3, 0xbb, 1);
    e[n].u.itm.overflow = 1;
    text[n] = "swit port=3 value=0xbb after-overflow";
    json[n++] = "\"kind\":\"swit\",\"port\":3,\"value\":\"0xbb\",\"size\":1,"
                "\"after_overflow\":true";
    e[n] = itm(EK_ITM_DWT, 0, 0x15, 1);
    text[n] = "dwt counters-wrapped cpi sleep fold";
    json[n++] = "\"kind\":\"dwt\",\"disc\":0,\"value\":\"0x15\",\"size\":1,"
                "\"what\":\"counters_wrapped\"";
    e[n] = itm(EK_ITM_DWT, 1, 0x2123, 2);
    text[n] = "dwt exception num=291 exited";
    json[n++] = "\"kind\":\"dwt\",\"disc\":1,\"value\":\"0x2123\",\"size\":2,"
                "\"what\":\"exception\",\"exception\":291,\"function\":\"exited\"";
    e[n] = itm(EK_ITM_DWT, 2, 0x1080, 4);
    text[n] = "dwt pc-sample pc=0x1080";
    json[n++] = "\"kind\":\"dwt\",\"disc\":2,\"value\":\"0x1080\",\"size\":4,"
                "\"what\":\"pc_sample\",\"pc\":\"0x1080\"";
    e[n] = itm(EK_ITM_DWT, 2, 0, 1);
    text[n] = "dwt pc-sample asleep";
    json[n++] = "\"kind\":\"dwt\",\"disc\":2,\"value\":\"0x0\",\"size\":1,"
                "\"what\":\"pc_sample\",\"asleep\":true";
    e[n] = itm(EK_ITM_DWT, 0x0c, 0x7722, 4);
    text[n] = "dwt data cmp=2 pc=0x7722";
    json[n++] = "\"kind\":\"dwt\",\"disc\":12,\"value\":\"0x7722\",\"size\":4,"
                "\"what\":\"data_pc\",\"comparator\":2";
    e[n] = itm(EK_ITM_DWT, 0x13, 0x2233, 2);
    text[n] = "dwt data cmp=1 write value=0x2233";
    json[n++] = "\"kind\":\"dwt\",\"disc\":19,\"value\":\"0x2233\",\"size\":2,"
                "\"what\":\"data_value\",\"comparator\":1,\"write\":true";
    e[n] = itm(EK_ITM_DWT, 6, 0x2000, 4);
    text[n] = "dwt reserved disc=6 value=0x00002000";
    json[n++] = "\"kind\":\"dwt\",\"disc\":6,\"value\":\"0x2000\",\"size\":4,"
                "\"what\":\"reserved\"";
    e[n] = itm(EK_ITM_TS_DELAY, 0, 0xd, 1);
    e[n].timestamp = 0x11;
    text[n] = "ts-local delta=0xd ts=0x11 ts-delayed";
    json[n++] = "\"kind\":\"ts_local\",\"delta\":13,\"timestamp\":17,\"delay\":\"ts-delayed\"";
    e[n] = itm(EK_ITM_TS_GLOBAL, 0, 0, 0);
    e[n].timestamp = 0x1020304efea782ull;
    e[n].flags = EK_ELEMF_CPU_FREQ_CHANGE;
    text[n] = "ts-global ts=0x1020304efea782 freq-change";
    json[n++] = "\"kind\":\"ts_global\",\"timestamp\":4538991483201410,\"freq_change\":true";
    ek_sbuf s = EK_SBUF_INIT;
    char want[512];
    for (size_t i = 0; i < n; i++) {
        ek_sbuf_reset(&s);
        ek_elem_format_text(&s, &e[i]);
        snprintf(want, sizeof want, "         7  14  > ITMTRACE           %s\n", text[i]);
        assert_string_equal(s.p, want);
        ek_sbuf_reset(&s);
        ek_elem_format_json(&s, &e[i]);
        snprintf(want, sizeof want, "{\"idx\":7,\"id\":20,\"type\":\"itmtrace\",%s}\n", json[i]);
        assert_string_equal(s.p, want);
    }
    ek_sbuf_free(&s);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ocsd_ranges),
        cmocka_unit_test(test_ocsd_context_and_exceptions),
        cmocka_unit_test(test_ocsd_misc),
        cmocka_unit_test(test_text_and_json),
        cmocka_unit_test(test_itm_text_and_json),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
