/* The protobuf encoder of the Perfetto writer (src/output/pb.h): varints, signed and zigzag
 * fields, strings, nested submessages whose lengths take one and two bytes, byte for byte;
 * and the writer (etmkit/perfetto.h) on a crafted run of samples -- a call, a jump, a return,
 * a trace end and begin that lose the stack -- its packets decoded here and compared exactly,
 * in order: tracks, slice begins and ends, their times. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "etmkit/isa.h"
#include "etmkit/perfetto.h"
#include "etmkit/sbuf.h"
#include "output/pb.h"
#include "testutil.h"

static void expect_bytes(const ek_pb *b, const uint8_t *want, size_t n)
{
    assert_int_equal(b->err, 0);
    assert_int_equal(b->len, n);
    assert_memory_equal(b->p, want, n);
}

static void test_varints(void **state)
{
    (void)state;
    ek_pb b = EK_PB_INIT;
    ek_pb_varint(&b, 0);
    ek_pb_varint(&b, 1);
    ek_pb_varint(&b, 127);
    ek_pb_varint(&b, 128);
    ek_pb_varint(&b, 300);
    ek_pb_varint(&b, UINT64_MAX);
    static const uint8_t w1[] = {0x00, 0x01, 0x7f, 0x80, 0x01, 0xac, 0x02, 0xff, 0xff,
                                 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    expect_bytes(&b, w1, sizeof w1);
    ek_pb_reset(&b);
    ek_pb_uint(&b, 1, 150);      /* the protobuf documentation's example: 08 96 01 */
    ek_pb_int(&b, 2, -1);        /* int32 -1: ten bytes */
    ek_pb_sint(&b, 3, -1);       /* zigzag: 1 */
    ek_pb_sint(&b, 3, 1);        /* zigzag: 2 */
    ek_pb_uint(&b, 16, 1);       /* a two-byte tag */
    ek_pb_str(&b, 2, "testing"); /* 12 07 "testing" */
    ek_pb_fixed64(&b, 4, 0x0102030405060708ull);
    static const uint8_t w2[] = {0x08, 0x96, 0x01, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                 0xff, 0xff, 0xff, 0x01, 0x18, 0x01, 0x18, 0x02, 0x80, 0x01,
                                 0x01, 0x12, 0x07, 't',  'e',  's',  't',  'i',  'n',  'g',
                                 0x21, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01};
    expect_bytes(&b, w2, sizeof w2);
    assert_int_equal(ek_pb_varint_size(0), 1);
    assert_int_equal(ek_pb_varint_size(127), 1);
    assert_int_equal(ek_pb_varint_size(128), 2);
    assert_int_equal(ek_pb_varint_size(UINT64_MAX), 10);
    ek_pb_free(&b);
}

static void test_nested_lengths(void **state)
{
    (void)state;
    ek_pb b = EK_PB_INIT;
    char a200[200];
    memset(a200, 'a', sizeof a200);
    /* 1 { 2: "a" x 200, 3 { 1: 5 } }: the outer length (207) takes two bytes, the inner one */
    ek_pb_open(&b, 1);
    ek_pb_bytes(&b, 2, a200, sizeof a200);
    ek_pb_open(&b, 3);
    ek_pb_uint(&b, 1, 5);
    ek_pb_close(&b);
    ek_pb_close(&b);
    uint8_t want[3 + 3 + 200 + 4];
    size_t n = 0;
    want[n++] = 0x0a;
    want[n++] = 0xcf; /* 207 */
    want[n++] = 0x01;
    want[n++] = 0x12;
    want[n++] = 0xc8; /* 200 */
    want[n++] = 0x01;
    memcpy(want + n, a200, 200);
    n += 200;
    want[n++] = 0x1a;
    want[n++] = 0x02;
    want[n++] = 0x08;
    want[n++] = 0x05;
    expect_bytes(&b, want, n);
    /* an empty submessage, and one at exactly 127 and 128 bytes of content */
    ek_pb_reset(&b);
    ek_pb_open(&b, 5);
    ek_pb_close(&b);
    ek_pb_open(&b, 1);
    ek_pb_bytes(&b, 2, a200, 125); /* 2 + 125 = 127 */
    ek_pb_close(&b);
    ek_pb_open(&b, 1);
    ek_pb_bytes(&b, 2, a200, 126); /* 128: two bytes */
    ek_pb_close(&b);
    assert_int_equal(b.err, 0);
    assert_int_equal(b.len, 2 + (2 + 127) + (3 + 128));
    assert_int_equal(b.p[0], 0x2a);
    assert_int_equal(b.p[1], 0x00);
    assert_int_equal(b.p[2], 0x0a);
    assert_int_equal(b.p[3], 127);
    assert_int_equal(b.p[2 + 129], 0x0a);
    assert_int_equal(b.p[2 + 130], 0x80);
    assert_int_equal(b.p[2 + 131], 0x01);
    /* closing what is not open, and nesting too deep, are errors that stick */
    ek_pb_reset(&b);
    ek_pb_close(&b);
    assert_int_equal(b.err, 1);
    ek_pb_reset(&b);
    for (int i = 0; i <= EK_PB_MAX_DEPTH; i++)
        ek_pb_open(&b, 1);
    assert_int_equal(b.err, 1);
    ek_pb_free(&b);
}

/* ---- the writer ------------------------------------------------------------------------------ */

typedef struct rd {
    const uint8_t *p, *end;
} rd;

static uint64_t get_varint(rd *r)
{
    uint64_t v = 0;
    for (unsigned sh = 0; r->p < r->end && sh < 64; sh += 7) {
        uint8_t c = *r->p++;
        v |= (uint64_t)(c & 0x7f) << sh;
        if (!(c & 0x80)) return v;
    }
    fail_msg("a varint runs past its message");
    return 0;
}

/* Visit the fields of a message: fn(field, wire, value, sub) for each. */
typedef void (*field_fn)(void *ctx, uint32_t field, uint64_t v, const uint8_t *p, size_t n);
static void fields(const uint8_t *p, size_t n, field_fn fn, void *ctx)
{
    rd r = {p, p + n};
    while (r.p < r.end) {
        uint64_t tag = get_varint(&r);
        unsigned wire = tag & 7;
        if (wire == 0) {
            fn(ctx, (uint32_t)(tag >> 3), get_varint(&r), NULL, 0);
        } else if (wire == 2) {
            uint64_t len = get_varint(&r);
            assert_true(len <= (uint64_t)(r.end - r.p));
            fn(ctx, (uint32_t)(tag >> 3), 0, r.p, len);
            r.p += len;
        } else {
            fail_msg("wire type %u", wire);
        }
    }
}

/* The interned strings of the trace (one sequence), by table and iid; the reader applies them
 * as Perfetto's does: a packet's own definitions first, then its references. */
#define MAX_IID 32
enum { TAB_EVENT, TAB_DNAME, TAB_DVALUE };
typedef struct interned {
    char s[3][MAX_IID][128];
    int def[3][MAX_IID];
    int cleared; /* a packet said the incremental state was cleared */
} interned;

typedef struct pkt {
    uint64_t ts, seq, type, track, uuid, parent, flags;
    int has_ts, is_event, is_track;
    char name[128];
    uint64_t name_iid, dname_iid, dvalue_iid;
    char dname[64], dvalue[64]; /* the annotation's name and value when written in full */
    int ndefs;
    struct {
        int tab;
        uint64_t iid;
        char s[128];
    } defs[8];
    int entry_tab; /* (while reading an entry of InternedData) */
} pkt;

static void copy_name(char *dst, size_t cap, const uint8_t *p, size_t n)
{
    if (!p) n = 0;
    if (n >= cap) n = cap - 1;
    if (n) memcpy(dst, p, n);
    dst[n] = 0;
}

static void annotation_field(void *ctx, uint32_t f, uint64_t v, const uint8_t *p, size_t n)
{
    pkt *k = ctx;
    if (f == 1) k->dname_iid = v;
    if (f == 10) copy_name(k->dname, sizeof k->dname, p, n);
    if (f == 17) k->dvalue_iid = v;
    if (f == 6) copy_name(k->dvalue, sizeof k->dvalue, p, n);
}

static void event_field(void *ctx, uint32_t f, uint64_t v, const uint8_t *p, size_t n)
{
    pkt *k = ctx;
    if (f == 9) k->type = v;
    if (f == 11) k->track = v;
    if (f == 10) k->name_iid = v;
    if (f == 23) copy_name(k->name, sizeof k->name, p, n);
    if (f == 4) fields(p, n, annotation_field, k);
}

/* EventName, DebugAnnotationName, InternedString: iid 1, the string 2 */
static void entry_field(void *ctx, uint32_t f, uint64_t v, const uint8_t *p, size_t n)
{
    pkt *k = ctx;
    if (f == 1) k->defs[k->ndefs].iid = v;
    if (f == 2) copy_name(k->defs[k->ndefs].s, sizeof k->defs[k->ndefs].s, p, n);
}

static void interned_field(void *ctx, uint32_t f, uint64_t v, const uint8_t *p, size_t n)
{
    (void)v;
    pkt *k = ctx;
    int tab = f == 2 ? TAB_EVENT : f == 3 ? TAB_DNAME : f == 29 ? TAB_DVALUE : -1;
    if (tab < 0) fail_msg("InternedData field %u", f);
    assert_true(k->ndefs < 8);
    memset(&k->defs[k->ndefs], 0, sizeof k->defs[k->ndefs]);
    k->defs[k->ndefs].tab = tab;
    fields(p, n, entry_field, k);
    k->ndefs++;
}

static void track_field(void *ctx, uint32_t f, uint64_t v, const uint8_t *p, size_t n)
{
    pkt *k = ctx;
    if (f == 1) k->uuid = v;
    if (f == 5) k->parent = v;
    if (f == 2) copy_name(k->name, sizeof k->name, p, n);
}

static void packet_field(void *ctx, uint32_t f, uint64_t v, const uint8_t *p, size_t n)
{
    pkt *k = ctx;
    if (f == 8) {
        k->ts = v;
        k->has_ts = 1;
    } else if (f == 10) {
        k->seq = v;
    } else if (f == 13) {
        k->flags = v;
    } else if (f == 12) {
        fields(p, n, interned_field, k);
    } else if (f == 11) {
        k->is_event = 1;
        fields(p, n, event_field, k);
    } else if (f == 60) {
        k->is_track = 1;
        fields(p, n, track_field, k);
    }
}

/* The string of iid in table tab (defined before, or by this packet). */
static const char *iid_str(const interned *in, int tab, uint64_t iid)
{
    assert_true(iid > 0 && iid < MAX_IID);
    if (!in->def[tab][iid])
        fail_msg("iid %llu of table %d is not defined", (unsigned long long)iid, tab);
    return in->s[tab][iid];
}

typedef struct rd_trace {
    ek_sbuf *o;
    interned in;
    uint64_t packets;
} rd_trace;

/* The trace as lines: "T name" for a track, "B name [dso] @ts", "E @ts" on thread tracks;
 * "cB name @ts", "cE @ts" on CPU tracks. Names and DSOs as the interned data gives them. */
static void trace_field(void *ctx, uint32_t f, uint64_t v, const uint8_t *p, size_t n)
{
    (void)v;
    rd_trace *r = ctx;
    ek_sbuf *o = r->o;
    interned *in = &r->in;
    assert_int_equal(f, 1);
    pkt k;
    memset(&k, 0, sizeof k);
    fields(p, n, packet_field, &k);
    assert_int_equal(k.seq, 1);
    /* the first packet clears the incremental state, and no other does */
    assert_int_equal(k.flags & 1, r->packets++ == 0);
    if (k.flags & 1) in->cleared = 1;
    for (int i = 0; i < k.ndefs; i++) {
        const int t = k.defs[i].tab;
        const uint64_t iid = k.defs[i].iid;
        assert_true(iid > 0 && iid < MAX_IID);
        /* defined once: the writer refers to it from then on */
        if (in->def[t][iid])
            fail_msg("iid %llu of table %d defined twice", (unsigned long long)iid, t);
        in->def[t][iid] = 1;
        strcpy(in->s[t][iid], k.defs[i].s);
    }
    int refers = k.name_iid || k.dname_iid || k.dvalue_iid;
    assert_int_equal(!!(k.flags & 2), refers);
    if (refers) assert_true(in->cleared);
    if (k.name_iid) {
        assert_string_equal(k.name, ""); /* never both */
        strcpy(k.name, iid_str(in, TAB_EVENT, k.name_iid));
    }
    if (k.dname_iid) strcpy(k.dname, iid_str(in, TAB_DNAME, k.dname_iid));
    if (k.dvalue_iid) strcpy(k.dvalue, iid_str(in, TAB_DVALUE, k.dvalue_iid));
    if (k.is_track) {
        ek_sbuf_printf(o, "T %s\n", k.name);
        return;
    }
    assert_true(k.is_event && k.has_ts);
    int cpu = k.track >= 0x200000000ull && k.track < 0x300000000ull;
    if (k.type == 1 && k.dname[0])
        ek_sbuf_printf(o, "%sB %s [%s=%s] @%llu\n", cpu ? "c" : "", k.name, k.dname, k.dvalue,
                       (unsigned long long)k.ts);
    else if (k.type == 1)
        ek_sbuf_printf(o, "%sB %s @%llu\n", cpu ? "c" : "", k.name, (unsigned long long)k.ts);
    else
        ek_sbuf_printf(o, "%sE @%llu\n", cpu ? "c" : "", (unsigned long long)k.ts);
}

/* How many times the bytes of s are in the output. */
static int occurrences(const ek_sbuf *b, const char *s)
{
    int c = 0;
    size_t n = strlen(s);
    for (size_t i = 0; i + n <= b->len; i++)
        c += !memcmp(b->p + i, s, n);
    return c;
}

static int collect(void *ctx, const void *data, size_t len)
{
    ek_sbuf_put(ctx, data, len);
    return 0;
}

static void resolve(void *ctx, const ek_sample *s, uint64_t addr, int fb, ek_addr_loc *out)
{
    (void)ctx, (void)s, (void)fb;
    out->sym = addr >= 0x3000 ? "leaf" : addr >= 0x2000 ? "callee" : "main";
    out->dso = addr >= 0x3000 ? "/lib/libx.so" : "/bin/prog";
}

static const char *comm(void *ctx, const ek_sample *s)
{
    (void)ctx, (void)s;
    return "prog";
}

static void smp(ek_perfetto *w, uint32_t flags, uint64_t ip, uint64_t addr, uint8_t isub,
                uint64_t time, uint64_t ninsn)
{
    ek_sample s;
    memset(&s, 0, sizeof s);
    s.kind = EK_SAMPLE_BRANCHES;
    s.flags = flags;
    s.pid = s.tid = 100;
    s.cpu = 1;
    s.trace_id = 0x11;
    s.ip = ip;
    s.addr = addr;
    s.isub = isub;
    s.isize = ip ? 4 : 0;
    s.time = time;
    s.has_time = time != 0;
    s.ninsn = ninsn;
    ek_script_resolver r = {resolve, comm, NULL, NULL};
    assert_int_equal(ek_perfetto_sample(w, &s, &r), 0);
}

#define CALL  (EK_SF_BRANCH | EK_SF_CALL)
#define RET   (EK_SF_BRANCH | EK_SF_RETURN)
#define BEGIN (EK_SF_BRANCH | EK_SF_TRACE_BEGIN)

/* Options that write the trace to out (the rest as ek_perfetto_opts_init sets them). */
static void opts_to(ek_perfetto_opts *o, ek_sbuf *out)
{
    ek_perfetto_opts_init(o);
    o->write = collect;
    o->ctx = out;
}

/* The trace in out as trace_field's lines, appended to text. */
static void trace_text(const ek_sbuf *out, ek_sbuf *text)
{
    rd_trace r;
    memset(&r, 0, sizeof r);
    r.o = text;
    fields((const uint8_t *)out->p, out->len, trace_field, &r);
}

static void run_max(int timed, size_t max_interned, const char *want);
static void run(int timed, const char *want)
{
    run_max(timed, 0, want);
}

static void run_max(int timed, size_t max_interned, const char *want)
{
    ek_sbuf out = EK_SBUF_INIT, text = EK_SBUF_INIT;
    ek_perfetto_opts o;
    opts_to(&o, &out);
    o.max_interned = max_interned;
    ek_perfetto *w;
    assert_int_equal(ek_perfetto_new(&o, &w), 0);
    uint64_t t = timed ? 1000 : 0;
    smp(w, BEGIN, 0, 0x1000, 0, t, 0);                              /* main */
    smp(w, CALL, 0x1004, 0x2000, EK_ISUB_BR_LINK, t ? 1010 : 0, 2); /* main -> callee */
    smp(w, EK_SF_BRANCH, 0x2008, 0x2100, 0, t ? 1020 : 0, 3);       /* a jump */
    smp(w, CALL, 0x2104, 0x3000, EK_ISUB_BR_LINK, t ? 1030 : 0, 2); /* callee -> leaf */
    smp(w, RET, 0x3004, 0x2108, EK_ISUB_V8_RET, t ? 1040 : 0, 2);   /* leaf returns */
    smp(w, CALL, 0x210c, 0x3000, EK_ISUB_BR_LINK, t ? 1040 : 0, 2); /* leaf again, same time */
    smp(w, EK_SF_BRANCH | EK_SF_TRACE_END, 0x3008, 0, 0, t ? 1050 : 0, 3); /* trace ends */
    smp(w, BEGIN, 0, 0x1010, 0, t ? 1090 : 0, 0); /* begins elsewhere: the stack is lost */
    smp(w, CALL, 0x1014, 0x2000, EK_ISUB_BR_LINK, t ? 1100 : 0, 2); /* main -> callee */
    smp(w, EK_SF_BRANCH, 0x2000, 0x2004, 0, t ? 1110 : 0, 1);
    assert_int_equal(ek_perfetto_finish(w), 0);
    ek_perfetto_stats st;
    ek_perfetto_get_stats(w, &st);
    assert_int_equal(st.clock_instructions, !timed);
    assert_int_equal(st.gaps, 1);
    assert_int_equal(st.lost, 1);
    assert_int_equal(st.bytes, out.len);
    ek_perfetto_free(w);
    trace_text(&out, &text);
    assert_string_equal(text.p, want);
    if (!max_interned) {
        /* interned: each name is written once (callee and leaf are entered twice each, the
         * thread's CPU slice begins twice, every begin has the DSO) */
        assert_int_equal(occurrences(&out, "callee"), 1);
        assert_int_equal(occurrences(&out, "leaf"), 1);
        assert_int_equal(occurrences(&out, "prog 100/100"), 1);
        assert_int_equal(occurrences(&out, "/bin/prog"), 1);
        assert_int_equal(occurrences(&out, "/lib/libx.so"), 1);
        assert_int_equal(occurrences(&out, "dso"), 1);
    } else {
        /* 27 + 3 x 64 bytes kept (each name: its length and 64 for its entry): "prog 100/100"
         * (12, first), "callee" (6) and "/bin/prog" (9), with the annotation's name ("dso" is
         * not counted); "leaf" (4) and "/lib/libx.so" (12) would pass it: written in full at
         * each use, beside the name's iid */
        assert_int_equal(occurrences(&out, "prog 100/100"), 1);
        assert_int_equal(occurrences(&out, "callee"), 1);
        assert_int_equal(occurrences(&out, "/bin/prog"), 1);
        assert_int_equal(occurrences(&out, "dso"), 1);
        assert_int_equal(occurrences(&out, "leaf"), 2);
        assert_int_equal(occurrences(&out, "/lib/libx.so"), 2);
    }
    ek_sbuf_free(&out);
    ek_sbuf_free(&text);
}

/* The timed trace of run(): a change is timed at the branch that made it (seen at the thread's
 * next sample); the lost stack's slices end at the trace end; the gap is a slice; the end
 * closes all. */
static const char timed_want[] = "T prog 100\n"
                                 "T prog 100\n"
                                 "T CPU 1\n"
                                 "cB prog 100/100 @1000\n"
                                 "B callee [dso=/bin/prog] @1010\n"
                                 "B leaf [dso=/lib/libx.so] @1030\n"
                                 "E @1040\n"
                                 "B leaf [dso=/lib/libx.so] @1040\n"
                                 "cE @1050\n"
                                 "E @1050\n"
                                 "E @1050\n"
                                 "B trace gap @1050\n"
                                 "E @1090\n"
                                 "cB prog 100/100 @1090\n"
                                 "B callee [dso=/bin/prog] @1100\n"
                                 "E @1110\n"
                                 "cE @1110\n";

static void test_writer_times(void **state)
{
    (void)state;
    run(1, timed_want);
}

static void test_writer_instructions(void **state)
{
    (void)state;
    /* without time stamps: the instructions executed, summed, and the tracks say so */
    run(0, "T prog 100 (time = instructions)\n"
           "T prog 100 (time = instructions)\n"
           "T CPU 1 (time = instructions)\n"
           "cB prog 100/100 @0\n"
           "B callee [dso=/bin/prog] @2\n"
           "B leaf [dso=/lib/libx.so] @7\n"
           "E @9\n"
           "B leaf [dso=/lib/libx.so] @11\n"
           "cE @14\n"
           "E @14\n"
           "E @14\n"
           "B trace gap @14\n"
           "E @14\n"
           "cB prog 100/100 @14\n"
           "B callee [dso=/bin/prog] @16\n"
           "E @17\n"
           "cE @17\n");
}

static void test_writer_interned_bound(void **state)
{
    (void)state;
    /* past max_interned bytes of names, new names are written in full: the same trace */
    run_max(1, 27 + 3 * 64, timed_want);
}

/* Threads of no known process (pid -1, or any negative pid), here one per trace source: each
 * has its thread track, and the one "unknown process" track is written once (the table of
 * written processes kept pid + 1, so pid -1 was a free slot and its track was written again
 * for every thread; then pid + 2, and pid -2 was) */
static void test_writer_unknown_process(void **state)
{
    (void)state;
    ek_sbuf out = EK_SBUF_INIT, text = EK_SBUF_INIT;
    ek_perfetto_opts o;
    opts_to(&o, &out);
    o.per_source = 1;
    ek_perfetto *w;
    assert_int_equal(ek_perfetto_new(&o, &w), 0);
    for (int32_t cpu = 0; cpu < 3; cpu++) {
        ek_sample s;
        memset(&s, 0, sizeof s);
        s.kind = EK_SAMPLE_BRANCHES;
        s.flags = BEGIN;
        s.pid = s.tid = cpu == 2 ? -2 : -1; /* (any negative pid: no known process) */
        s.cpu = cpu;
        s.addr = 0x1000;
        s.time = 1000 + (uint64_t)cpu;
        s.has_time = 1;
        ek_script_resolver r = {resolve, NULL, NULL, NULL};
        assert_int_equal(ek_perfetto_sample(w, &s, &r), 0);
    }
    assert_int_equal(ek_perfetto_finish(w), 0);
    ek_perfetto_free(w);
    trace_text(&out, &text);
    assert_string_equal(text.p, "T unknown process\n"
                                "T :-1 -1 [cpu 0]\n"
                                "T CPU 0\n"
                                "cB :-1 -1/-1 @1000\n"
                                "T :-1 -1 [cpu 1]\n"
                                "T CPU 1\n"
                                "cB :-1 -1/-1 @1001\n"
                                "T :-2 -2 [cpu 2]\n"
                                "T CPU 2\n"
                                "cB :-2 -2/-2 @1002\n"
                                "cE @1000\n"
                                "cE @1001\n"
                                "cE @1002\n");
    ek_sbuf_free(&out);
    ek_sbuf_free(&text);
}

static const char *long_comm(void *ctx, const ek_sample *s)
{
    (void)s;
    return ctx;
}

/* The names of tracks and CPU slices take 40 bytes of a thread's name, never part of a UTF-8
 * character (39 'a' and an 'é' of two bytes: the 'é' goes whole, where the cut left its first
 * byte, and the strings were no longer UTF-8); the slice's "comm pid/tid" holds the longest
 * numbers whole. */
static void test_writer_names(void **state)
{
    (void)state;
    char a39e[48], b40[48];
    memset(a39e, 'a', 39);
    strcpy(a39e + 39, "\xc3\xa9z");
    memset(b40, 'b', 40);
    b40[40] = 0;
    const struct {
        const char *comm;
        int32_t id;
        const char *want;
    } cases[] = {
        {a39e, 100,
         "T %.39s\xc3\xa9z 100\nT %.39s 100\nT CPU 1\ncB %.39s 100/100 @1000\ncE @1000\n"},
        {b40, INT32_MIN,
         "T unknown process\nT %.40s -2147483648\nT CPU 1\ncB %.40s -2147483648/-2147483648 "
         "@1000\ncE @1000\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ek_sbuf out = EK_SBUF_INIT, text = EK_SBUF_INIT;
        ek_perfetto_opts o;
        opts_to(&o, &out);
        ek_perfetto *w;
        assert_int_equal(ek_perfetto_new(&o, &w), 0);
        ek_sample s;
        memset(&s, 0, sizeof s);
        s.kind = EK_SAMPLE_BRANCHES;
        s.flags = BEGIN;
        s.pid = s.tid = cases[i].id;
        s.cpu = 1;
        s.addr = 0x1000;
        s.time = 1000;
        s.has_time = 1;
        ek_script_resolver r = {resolve, long_comm, (void *)cases[i].comm, NULL};
        assert_int_equal(ek_perfetto_sample(w, &s, &r), 0);
        assert_int_equal(ek_perfetto_finish(w), 0);
        ek_perfetto_free(w);
        trace_text(&out, &text);
        char want[512];
        snprintf(want, sizeof want, cases[i].want, cases[i].comm, cases[i].comm, cases[i].comm);
        assert_string_equal(text.p, want);
        ek_sbuf_free(&out);
        ek_sbuf_free(&text);
    }
}

static void resolve_hex(void *ctx, const ek_sample *s, uint64_t addr, int fb, ek_addr_loc *out)
{
    (void)s, (void)fb;
    char *names = ctx; /* 16 bytes a name */
    snprintf(names + (addr >> 16) % 16 * 16, 16, "f%llx", (unsigned long long)(addr >> 16));
    out->sym = names + (addr >> 16) % 16 * 16;
    out->dso = "/bin/prog";
}

/* Calls deeper than max_depth (4 here): the stack analysis forgets the outermost frame at each
 * push past it, and the view starts one frame further in. The slices of the forgotten frames
 * stay open below (slices nest) and end with the rest: ten calls, ten named slices, ten ends
 * (the mirror was compared from the bottom: every view past the depth matched nothing, and
 * all its slices ended and began again, the outer ones as "[unknown]"). */
static void test_writer_deep(void **state)
{
    (void)state;
    ek_sbuf out = EK_SBUF_INIT, text = EK_SBUF_INIT;
    ek_perfetto_opts o;
    opts_to(&o, &out);
    o.max_depth = 4;
    o.no_cpu_tracks = 1;
    o.no_dso = 1;
    ek_perfetto *w;
    assert_int_equal(ek_perfetto_new(&o, &w), 0);
    char names[16 * 16];
    ek_script_resolver r = {resolve_hex, comm, names, NULL};
    ek_sample s;
    memset(&s, 0, sizeof s);
    s.kind = EK_SAMPLE_BRANCHES;
    s.pid = s.tid = 100;
    s.cpu = 1;
    s.has_time = 1;
    s.flags = BEGIN;
    s.addr = 0x10000;
    s.time = 1000;
    assert_int_equal(ek_perfetto_sample(w, &s, &r), 0);
    for (uint64_t i = 1; i <= 10; i++) { /* f1 calls f2 ... f10 calls f11 */
        s.flags = CALL;
        s.isub = EK_ISUB_BR_LINK;
        s.isize = 4;
        s.ip = (i << 16) + 8;
        s.addr = (i + 1) << 16;
        s.time = 1000 + 10 * i;
        s.ninsn = 3;
        assert_int_equal(ek_perfetto_sample(w, &s, &r), 0);
    }
    s.flags = EK_SF_BRANCH; /* a jump in f11: the last call's view */
    s.isub = 0;
    s.ip = (11u << 16) + 4;
    s.addr = (11u << 16) + 0x40;
    s.time = 1200;
    assert_int_equal(ek_perfetto_sample(w, &s, &r), 0);
    assert_int_equal(ek_perfetto_finish(w), 0);
    ek_perfetto_free(w);
    trace_text(&out, &text);
    assert_string_equal(text.p, "T prog 100\n"
                                "T prog 100\n"
                                "B f2 @1010\n"
                                "B f3 @1020\n"
                                "B f4 @1030\n"
                                "B f5 @1040\n"
                                "B f6 @1050\n"
                                "B f7 @1060\n"
                                "B f8 @1070\n"
                                "B f9 @1080\n"
                                "B fa @1090\n"
                                "B fb @1100\n"
                                "E @1200\n"
                                "E @1200\n"
                                "E @1200\n"
                                "E @1200\n"
                                "E @1200\n"
                                "E @1200\n"
                                "E @1200\n"
                                "E @1200\n"
                                "E @1200\n"
                                "E @1200\n");
    ek_sbuf_free(&out);
    ek_sbuf_free(&text);
}

static void test_writer_args(void **state)
{
    (void)state;
    ek_perfetto_opts o;
    ek_perfetto_opts_init(&o);
    ek_perfetto *w = (ek_perfetto *)&o;
    assert_int_equal(ek_perfetto_new(&o, &w), EK_ERR_ARG); /* no write function */
    assert_null(w);
    o.size = 4;
    o.write = collect;
    assert_int_equal(ek_perfetto_new(&o, &w), EK_ERR_ARG);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_varints),      cmocka_unit_test(test_nested_lengths),
        cmocka_unit_test(test_writer_times), cmocka_unit_test(test_writer_instructions),
        cmocka_unit_test(test_writer_args),  cmocka_unit_test(test_writer_interned_bound),
        cmocka_unit_test(test_writer_unknown_process),
        cmocka_unit_test(test_writer_names),
        cmocka_unit_test(test_writer_deep),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
