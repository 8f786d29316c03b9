/* Call stacks from branches samples (etmkit/stacks.h) on crafted sample sequences: calls and
 * returns, exceptions and exception returns, a context switch between two threads of one CPU,
 * trace gaps (landing on a known frame, landing elsewhere), a return below the known frames,
 * a tail call through BR, an unwind to a deeper frame, a return to no known frame, the depth
 * bound, the idle task per CPU, a trace source's late sample after its thread ran on in
 * another queue. Each view is compared exactly: "AT: frame frame ..." innermost first, "!"
 * before an exception's frame, "?" for a gap frame. (Returns the ETM return stack compressed
 * reach the stacks as any other return sample: tests/scripts/stacks_vs_gen.sh runs a
 * recording made with the return stack on.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "etmkit/isa.h"
#include "etmkit/stacks.h"
#include "testutil.h"

#define BR      EK_SF_BRANCH
#define CALL    (EK_SF_BRANCH | EK_SF_CALL)
#define RET     (EK_SF_BRANCH | EK_SF_RETURN)
#define SYSCALL (EK_SF_BRANCH | EK_SF_CALL | EK_SF_SYSCALLRET)
#define IRQ     (EK_SF_BRANCH | EK_SF_CALL | EK_SF_ASYNC | EK_SF_INTERRUPT)
#define IRET    (EK_SF_BRANCH | EK_SF_RETURN | EK_SF_INTERRUPT)
#define BEGIN   (EK_SF_BRANCH | EK_SF_TRACE_BEGIN)
#define END     EK_SF_TRACE_END

typedef struct ctx {
    ek_stacks *st;
    int32_t tid, cpu;
    uint32_t queue;
    char text[512];
} ctx;

static void new_stacks(ctx *c, uint32_t max_depth)
{
    ek_stacks_opts o;
    ek_stacks_opts_init(&o);
    if (max_depth) o.max_depth = max_depth;
    memset(c, 0, sizeof *c);
    assert_int_equal(ek_stacks_new(&o, &c->st), 0);
    c->tid = 100;
}

/* One branches sample of the current thread (tid) on the current CPU; returns its view. */
static const char *smp(ctx *c, uint32_t flags, uint64_t ip, uint64_t addr, uint8_t isub,
                       uint64_t resume)
{
    ek_sample s;
    memset(&s, 0, sizeof s);
    s.kind = EK_SAMPLE_BRANCHES;
    s.flags = flags;
    s.pid = c->tid == 0 ? 0 : 100;
    s.tid = c->tid;
    s.cpu = c->cpu;
    s.trace_id = (uint8_t)(0x10 + c->cpu);
    s.queue = c->queue;
    s.ip = ip;
    s.addr = addr;
    s.isub = isub;
    s.isize = ip ? 4 : 0;
    s.resume = resume;
    ek_stack_view v;
    assert_int_equal(ek_stacks_sample(c->st, &s, &v), 0);
    size_t p = (size_t)snprintf(c->text, sizeof c->text, "%s%d %llx:", v.late ? "late " : "", v.tid,
                                (unsigned long long)v.at);
    for (uint32_t i = v.n; i--;) {
        const ek_stack_frame *f = &v.frames[i];
        if (f->flags & EK_FRAME_GAP)
            p += (size_t)snprintf(c->text + p, sizeof c->text - p, " ?");
        else
            p += (size_t)snprintf(c->text + p, sizeof c->text - p, " %s%llx",
                                  f->flags & EK_FRAME_EXCEPTION ? "!" : "",
                                  (unsigned long long)f->addr);
    }
    return c->text;
}

static ek_stacks_stats stats(ctx *c)
{
    ek_stacks_stats t;
    ek_stacks_get_stats(c->st, &t);
    return t;
}

static void test_calls_returns(void **state)
{
    (void)state;
    ctx c;
    new_stacks(&c, 0);
    assert_string_equal(smp(&c, BEGIN, 0, 0x1000, 0, 0), "100 1000:");
    assert_string_equal(smp(&c, CALL, 0x1008, 0x2000, EK_ISUB_BR_LINK, 0), "100 1008:");
    assert_string_equal(smp(&c, CALL, 0x2010, 0x3000, EK_ISUB_BR_LINK, 0), "100 2010: 100c");
    assert_string_equal(smp(&c, BR, 0x3004, 0x3010, 0, 0), "100 3004: 2014 100c");
    assert_string_equal(smp(&c, RET, 0x3010, 0x2014, EK_ISUB_V8_RET, 0), "100 3010: 2014 100c");
    assert_string_equal(smp(&c, RET, 0x2020, 0x100c, EK_ISUB_V8_RET, 0), "100 2020: 100c");
    assert_string_equal(smp(&c, BR, 0x1010, 0x1000, 0, 0), "100 1010:");
    ek_stacks_stats t = stats(&c);
    assert_int_equal(t.calls, 2);
    assert_int_equal(t.returns, 2);
    assert_int_equal(t.returns_below + t.resyncs + t.unmatched + t.gaps, 0);
    ek_stacks_free(c.st);
}

static void test_exceptions(void **state)
{
    (void)state;
    ctx c;
    new_stacks(&c, 0);
    smp(&c, BEGIN, 0, 0x1000, 0, 0);
    smp(&c, CALL, 0x1008, 0x2000, EK_ISUB_BR_LINK, 0);
    /* a system call: its frame returns after the SVC */
    assert_string_equal(smp(&c, SYSCALL, 0x2004, 0xf800, 0, 0x2008), "100 2004: 100c");
    assert_string_equal(smp(&c, CALL, 0xf810, 0xf900, EK_ISUB_BR_LINK, 0), "100 f810: !2008 100c");
    assert_string_equal(smp(&c, RET, 0xf904, 0xf814, EK_ISUB_V8_RET, 0),
                        "100 f904: f814 !2008 100c");
    assert_string_equal(smp(&c, RET | EK_SF_SYSCALLRET, 0xf820, 0x2008, EK_ISUB_V8_ERET, 0),
                        "100 f820: !2008 100c");
    /* an interrupt right after a taken BL: the call's frame, then the exception's, which
     * returns to the call's target (resume) */
    assert_string_equal(smp(&c, IRQ, 0x2010, 0xf880, EK_ISUB_BR_LINK, 0x4000), "100 2010: 100c");
    assert_string_equal(smp(&c, IRET, 0xf890, 0x4000, EK_ISUB_V8_ERET, 0),
                        "100 f890: !4000 2014 100c");
    /* an interrupt right after a RET: the return pops, the exception returns to its target */
    assert_string_equal(smp(&c, IRQ, 0x4010, 0xf880, EK_ISUB_V8_RET, 0x2014),
                        "100 4010: 2014 100c");
    assert_string_equal(smp(&c, IRET, 0xf890, 0x2014, EK_ISUB_V8_ERET, 0), "100 f890: !2014 100c");
    /* an ERET and an interrupt before the first instruction it returns to */
    assert_string_equal(smp(&c, SYSCALL, 0x2018, 0xf800, 0, 0x201c), "100 2018: 100c");
    assert_string_equal(smp(&c, IRQ, 0xf820, 0xf880, EK_ISUB_V8_ERET, 0x201c),
                        "100 f820: !201c 100c");
    assert_string_equal(smp(&c, IRET, 0xf890, 0x201c, EK_ISUB_V8_ERET, 0), "100 f890: !201c 100c");
    assert_string_equal(smp(&c, BR, 0x2020, 0x2030, 0, 0), "100 2020: 100c");
    ek_stacks_stats t = stats(&c);
    assert_int_equal(t.exceptions, 5);
    assert_int_equal(t.exc_returns, 5);
    assert_int_equal(t.returns_below + t.resyncs + t.unmatched + t.gaps, 0);
    ek_stacks_free(c.st);
}

/* Thread 100's trace begins; it calls schedule (0x5000), which calls the switch (0x6000). */
static void enter_switch(ctx *c)
{
    smp(c, BEGIN, 0, 0x1000, 0, 0);
    smp(c, CALL, 0x1008, 0x5000, EK_ISUB_BR_LINK, 0);
    assert_string_equal(smp(c, CALL, 0x5010, 0x6000, EK_ISUB_BR_LINK, 0), "100 5010: 100c");
}

static void test_context_switch(void **state)
{
    (void)state;
    ctx c;
    new_stacks(&c, 0);
    enter_switch(&c);
    /* the switch's RET, which the trace gives to thread 200: it ran on 100's stack */
    c.tid = 200;
    assert_string_equal(smp(&c, RET, 0x6020, 0x7000, EK_ISUB_V8_RET, 0), "100 6020: 5014 100c");
    assert_string_equal(smp(&c, CALL, 0x7004, 0x5000, EK_ISUB_BR_LINK, 0), "200 7004:");
    assert_string_equal(smp(&c, CALL, 0x5010, 0x6000, EK_ISUB_BR_LINK, 0), "200 5010: 7008");
    /* back to 100: it returns from the switch into schedule, on its own frame */
    c.tid = 100;
    assert_string_equal(smp(&c, RET, 0x6020, 0x5014, EK_ISUB_V8_RET, 0), "200 6020: 5014 7008");
    assert_string_equal(smp(&c, RET, 0x5018, 0x100c, EK_ISUB_V8_RET, 0), "100 5018: 100c");
    assert_string_equal(smp(&c, BR, 0x1010, 0x1000, 0, 0), "100 1010:");
    /* and to 200 again, which finds its frames as it left them */
    smp(&c, CALL, 0x1014, 0x5000, EK_ISUB_BR_LINK, 0);
    smp(&c, CALL, 0x5010, 0x6000, EK_ISUB_BR_LINK, 0);
    c.tid = 200;
    assert_string_equal(smp(&c, RET, 0x6020, 0x5014, EK_ISUB_V8_RET, 0), "100 6020: 5014 1018");
    assert_string_equal(smp(&c, RET, 0x5018, 0x7008, EK_ISUB_V8_RET, 0), "200 5018: 7008");
    assert_string_equal(smp(&c, BR, 0x700c, 0x7000, 0, 0), "200 700c:");
    ek_stacks_stats t = stats(&c);
    assert_int_equal(t.switches, 3);
    assert_int_equal(t.threads, 2);
    assert_int_equal(t.returns_below + t.resyncs + t.unmatched + t.gaps, 0);
    ek_stacks_free(c.st);
}

static void test_gaps(void **state)
{
    (void)state;
    ctx c;
    new_stacks(&c, 0);
    smp(&c, BEGIN, 0, 0x1000, 0, 0);
    smp(&c, CALL, 0x1008, 0x2000, EK_ISUB_BR_LINK, 0);
    /* a call into code that could not be read: the trace ends, and begins again at the
     * return address: the frame it pushed is popped */
    assert_string_equal(smp(&c, CALL | END, 0x2004, 0, EK_ISUB_BR_LINK, 0), "100 2004: 100c");
    assert_string_equal(smp(&c, BEGIN, 0, 0x2008, 0, 0), "100 2008: 100c");
    /* a system call the trace does not follow (user space only) */
    assert_string_equal(smp(&c, SYSCALL | END, 0x200c, 0, 0, 0x2010), "100 200c: 100c");
    assert_string_equal(smp(&c, BEGIN, 0, 0x2010, 0, 0), "100 2010: 100c");
    /* trace lost: it begins again elsewhere; what the stack held no longer holds */
    assert_string_equal(smp(&c, CALL, 0x2014, 0x3000, EK_ISUB_BR_LINK, 0), "100 2014: 100c");
    assert_string_equal(smp(&c, BR | END, 0x3004, 0, 0, 0), "100 3004: 2018 100c");
    assert_string_equal(smp(&c, BEGIN, 0, 0x4000, 0, 0), "100 4000: ?");
    assert_string_equal(smp(&c, CALL, 0x4004, 0x5000, EK_ISUB_BR_LINK, 0), "100 4004: ?");
    assert_string_equal(smp(&c, RET, 0x5004, 0x4008, EK_ISUB_V8_RET, 0), "100 5004: 4008 ?");
    /* below the gap: counted, the gap stays */
    assert_string_equal(smp(&c, RET, 0x400c, 0x1010, EK_ISUB_V8_RET, 0), "100 400c: ?");
    assert_string_equal(smp(&c, BR, 0x1010, 0x1000, 0, 0), "100 1010: ?");
    /* a second gap over a stack that has one: landing elsewhere forgets again, one gap */
    smp(&c, CALL, 0x1014, 0x2000, EK_ISUB_BR_LINK, 0);
    smp(&c, BR | END, 0x2004, 0, 0, 0);
    assert_string_equal(smp(&c, BEGIN, 0, 0x6000, 0, 0), "100 6000: ?");
    /* the trace ends with a return (its target is not in the trace) and begins again at the
     * address an older frame returns to: anything may have run meanwhile (that frame may be
     * another activation's), so the stack is forgotten, not resynchronised */
    smp(&c, CALL, 0x6004, 0x7000, EK_ISUB_BR_LINK, 0);
    smp(&c, CALL, 0x7004, 0x8000, EK_ISUB_BR_LINK, 0);
    assert_string_equal(smp(&c, RET | END, 0x8004, 0, EK_ISUB_V8_RET, 0), "100 8004: 7008 6008 ?");
    assert_string_equal(smp(&c, BEGIN, 0, 0x7008, 0, 0), "100 7008: ?");
    ek_stacks_stats t = stats(&c);
    assert_int_equal(t.gaps, 3);
    assert_int_equal(t.returns_below, 1);
    assert_int_equal(t.unmatched, 0);
    ek_stacks_free(c.st);

    /* a thread the trace saw, with no frame known: where its trace begins again after a gap
     * the gap is marked (what it entered meanwhile is not known) */
    new_stacks(&c, 0);
    smp(&c, BEGIN, 0, 0x1000, 0, 0);
    assert_string_equal(smp(&c, BR | END, 0x1004, 0, 0, 0), "100 1004:");
    assert_string_equal(smp(&c, BEGIN, 0, 0x3000, 0, 0), "100 3000: ?");
    assert_int_equal(stats(&c).gaps, 1);
    ek_stacks_free(c.st);
}

static void test_return_below(void **state)
{
    (void)state;
    ctx c;
    new_stacks(&c, 0);
    /* the trace starts two frames deep: their returns are counted, nothing is guessed */
    assert_string_equal(smp(&c, BEGIN, 0, 0x3000, 0, 0), "100 3000:");
    assert_string_equal(smp(&c, RET, 0x3008, 0x2010, EK_ISUB_V8_RET, 0), "100 3008:");
    assert_string_equal(smp(&c, CALL, 0x2014, 0x3000, EK_ISUB_BR_LINK, 0), "100 2014:");
    assert_string_equal(smp(&c, RET, 0x3008, 0x2018, EK_ISUB_V8_RET, 0), "100 3008: 2018");
    assert_string_equal(smp(&c, RET, 0x201c, 0x1010, EK_ISUB_V8_RET, 0), "100 201c:");
    assert_string_equal(smp(&c, BR, 0x1010, 0x1000, 0, 0), "100 1010:");
    /* an exception return below the known frames (the exception was taken before the trace) */
    assert_string_equal(smp(&c, IRET, 0x1020, 0x9000, EK_ISUB_V8_ERET, 0), "100 1020:");
    ek_stacks_stats t = stats(&c);
    assert_int_equal(t.returns_below, 3);
    assert_int_equal(t.returns, 1);
    assert_int_equal(t.gaps + t.unmatched + t.resyncs, 0);
    ek_stacks_free(c.st);
}

static void test_tail_call_unwind(void **state)
{
    (void)state;
    ctx c;
    new_stacks(&c, 0);
    smp(&c, BEGIN, 0, 0x1000, 0, 0);
    smp(&c, CALL, 0x1008, 0x2000, EK_ISUB_BR_LINK, 0);
    /* a tail call through BR (perf says "return"): the caller's frame stays, the callee
     * returns to it */
    assert_string_equal(smp(&c, RET, 0x2004, 0x5000, EK_ISUB_NONE, 0), "100 2004: 100c");
    assert_string_equal(smp(&c, CALL, 0x5004, 0x6000, EK_ISUB_BR_LINK, 0), "100 5004: 100c");
    assert_string_equal(smp(&c, CALL, 0x6004, 0x7000, EK_ISUB_BR_LINK, 0), "100 6004: 5008 100c");
    /* longjmp / an unwind: a RET to the outer frame pops the two inner ones */
    assert_string_equal(smp(&c, RET, 0x7004, 0x100c, EK_ISUB_V8_RET, 0),
                        "100 7004: 6008 5008 100c");
    assert_string_equal(smp(&c, BR, 0x1010, 0x1000, 0, 0), "100 1010:");
    /* a return to an address no known frame holds: the innermost is left, for an unknown one */
    smp(&c, CALL, 0x1014, 0x2000, EK_ISUB_BR_LINK, 0);
    smp(&c, CALL, 0x2004, 0x3000, EK_ISUB_BR_LINK, 0);
    assert_string_equal(smp(&c, RET, 0x3004, 0x8888, EK_ISUB_V8_RET, 0), "100 3004: 2008 1018");
    assert_string_equal(smp(&c, BR, 0x8888, 0x8000, 0, 0), "100 8888: ?");
    ek_stacks_stats t = stats(&c);
    assert_int_equal(t.resyncs, 1);
    assert_int_equal(t.unmatched, 1);
    assert_int_equal(t.gaps, 1);
    ek_stacks_free(c.st);
}

static void test_depth_bound(void **state)
{
    (void)state;
    ctx c;
    new_stacks(&c, 3);
    smp(&c, BEGIN, 0, 0x1000, 0, 0);
    for (uint64_t i = 0; i < 5; i++)
        smp(&c, CALL, 0x1000 + 0x100 * i, 0x1100 + 0x100 * i, EK_ISUB_BR_LINK, 0);
    assert_string_equal(smp(&c, RET, 0x1504, 0x1404, EK_ISUB_V8_RET, 0),
                        "100 1504: 1404 1304 1204");
    assert_string_equal(smp(&c, RET, 0x1408, 0x1304, EK_ISUB_V8_RET, 0), "100 1408: 1304 1204");
    assert_string_equal(smp(&c, RET, 0x1308, 0x1204, EK_ISUB_V8_RET, 0), "100 1308: 1204");
    /* the forgotten frames are below the bottom, as those before the trace */
    assert_string_equal(smp(&c, RET, 0x1208, 0x1104, EK_ISUB_V8_RET, 0), "100 1208:");
    ek_stacks_stats t = stats(&c);
    assert_int_equal(t.dropped, 2);
    assert_int_equal(t.returns_below, 1);
    ek_stacks_free(c.st);
}

static void test_idle_per_cpu(void **state)
{
    (void)state;
    ctx c;
    new_stacks(&c, 0);
    /* every CPU's idle task is pid/tid 0: each has its own stack */
    c.tid = 0;
    smp(&c, BEGIN, 0, 0x1000, 0, 0);
    smp(&c, CALL, 0x1004, 0x2000, EK_ISUB_BR_LINK, 0);
    c.cpu = 1;
    smp(&c, BEGIN, 0, 0x1000, 0, 0);
    assert_string_equal(smp(&c, CALL, 0x1004, 0x3000, EK_ISUB_BR_LINK, 0), "0 1004:");
    c.cpu = 0;
    assert_string_equal(smp(&c, BR, 0x2004, 0x2010, 0, 0), "0 2004: 1008");
    assert_int_equal(stats(&c).threads, 2);
    ek_stacks_free(c.st);
}

static void test_late_sample_of_a_queue(void **state)
{
    (void)state;
    ctx c;
    new_stacks(&c, 0);
    /* CPU 0's trace in queue 0 ends with a call whose range waits for the end of the trace */
    smp(&c, BEGIN, 0, 0x1000, 0, 0);
    assert_string_equal(smp(&c, CALL, 0x1008, 0x2000, EK_ISUB_BR_LINK, 0), "100 1008:");
    /* queue 1 holds the same CPU's later trace: the thread goes on there */
    c.queue = 1;
    assert_string_equal(smp(&c, CALL, 0x2004, 0x3000, EK_ISUB_BR_LINK, 0), "100 2004: 100c");
    assert_string_equal(smp(&c, RET, 0x3004, 0x2008, EK_ISUB_V8_RET, 0), "100 3004: 2008 100c");
    assert_string_equal(smp(&c, RET, 0x2010, 0x100c, EK_ISUB_V8_RET, 0), "100 2010: 100c");
    /* queue 0's flush at the end: the stack of its time, and the thread's is left alone */
    c.queue = 0;
    assert_string_equal(smp(&c, SYSCALL | END, 0x2004, 0, 0, 0x2008), "late 100 2004: 100c");
    c.queue = 1;
    assert_string_equal(smp(&c, BR, 0x1010, 0x1000, 0, 0), "100 1010:");
    ek_stacks_free(c.st);
}

static void test_switch_across_queues(void **state)
{
    (void)state;
    ctx c;
    new_stacks(&c, 0);
    /* CPU 0's trace in queue 0: thread 100 enters the switch */
    enter_switch(&c);
    /* the CPU's trace goes on in queue 1 (the sink went to another session's buffer): its
     * first sample is the switch's RET, which the trace gives to thread 200 and which ends
     * the trace. It ran on 100's stack, as if both were in one queue (arbitration-stress seed 3
     * perf-2.data: 9 instructions of cpu_switch_to were 200's) */
    c.queue = 1;
    c.tid = 200;
    assert_string_equal(smp(&c, RET | END, 0x6020, 0, EK_ISUB_V8_RET, 0), "100 6020: 5014 100c");
    ek_stacks_stats t = stats(&c);
    assert_int_equal(t.switches, 1);
    /* the trace begins again on 200, which the switch landed on and whose trace then ended:
     * what ran meanwhile is not known (a gap) */
    assert_string_equal(smp(&c, BEGIN, 0, 0x7000, 0, 0), "200 7000: ?");
    /* queue 2: 300 takes over from 200 (a switch), and its branch ends the trace */
    c.queue = 2;
    c.tid = 300;
    assert_string_equal(smp(&c, BR | END, 0x7004, 0, 0, 0), "200 7004: ?");
    assert_int_equal(stats(&c).switches, 2);
    /* queue 3: after a trace end, no switch, whichever queue */
    c.queue = 3;
    c.tid = 400;
    assert_string_equal(smp(&c, BR, 0x8000, 0x8010, 0, 0), "400 8000:");
    assert_int_equal(stats(&c).switches, 2);
    ek_stacks_free(c.st);
}

static void test_other_samples_and_args(void **state)
{
    (void)state;
    ctx c;
    new_stacks(&c, 0);
    smp(&c, BEGIN, 0, 0x1000, 0, 0);
    smp(&c, CALL, 0x1008, 0x2000, EK_ISUB_BR_LINK, 0);
    /* an instructions sample shows its thread's stack, and moves nothing */
    ek_sample s;
    memset(&s, 0, sizeof s);
    s.kind = EK_SAMPLE_INSTRUCTIONS;
    s.pid = 100;
    s.tid = 100;
    s.ip = 0x2004;
    s.trace_id = 0x10;
    ek_stack_view v;
    assert_int_equal(ek_stacks_sample(c.st, &s, &v), 0);
    assert_int_equal(v.n, 1);
    assert_int_equal(v.frames[0].addr, 0x100c);
    assert_int_equal(v.at, 0x2004);
    assert_int_equal(ek_stacks_sample(c.st, &s, NULL), 0);
    ek_stacks_free(c.st);
    ek_stacks_free(NULL);
    /* options of another size are refused */
    ek_stacks_opts o;
    ek_stacks_opts_init(&o);
    o.size = 4;
    ek_stacks *st = (ek_stacks *)&o;
    assert_int_equal(ek_stacks_new(&o, &st), EK_ERR_ARG);
    assert_null(st);
}

/* Any sequence of samples (damaged trace gives odd ones): no crash, every stack within its
 * bound, gap frames only at the bottom, and the counts add up. */
static void test_random_samples(void **state)
{
    (void)state;
    ek_stacks_opts o;
    ek_stacks_opts_init(&o);
    o.max_depth = 8;
    ek_stacks *st;
    assert_int_equal(ek_stacks_new(&o, &st), 0);
    static const uint32_t fl[] = {BR,        CALL,      RET,      SYSCALL,
                                  IRQ,       IRET,      BEGIN,    CALL | END,
                                  RET | END, IRQ | END, BR | END, RET | EK_SF_SYSCALLRET,
                                  0};
    static const uint8_t sub[] = {EK_ISUB_NONE, EK_ISUB_BR_LINK, EK_ISUB_V8_RET, EK_ISUB_V8_ERET,
                                  EK_ISUB_V7_IMPLIED_RET};
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        ek_sample s;
        memset(&s, 0, sizeof s);
        s.kind = (x >> 60) == 0 ? EK_SAMPLE_INSTRUCTIONS : EK_SAMPLE_BRANCHES;
        s.flags = fl[(x >> 8) % (sizeof fl / sizeof fl[0])];
        s.isub = sub[(x >> 16) % sizeof sub];
        s.isize = (uint8_t)((x >> 20) & 6);
        s.pid = (int32_t)((x >> 24) % 3);
        s.tid = s.pid * 10 + (int32_t)((x >> 26) % 3);
        s.cpu = (int32_t)((x >> 28) % 3) - 1;
        s.trace_id = (uint8_t)((x >> 30) % 4);
        s.queue = (uint32_t)((x >> 32) % 3);
        s.ip = (s.flags & EK_SF_TRACE_BEGIN) ? 0 : 0x1000 + ((x >> 34) % 16) * 4;
        s.addr = (s.flags & EK_SF_TRACE_END) ? 0 : 0x1000 + ((x >> 40) % 16) * 4;
        s.resume = (x >> 46) & 1 ? 0x1000 + ((x >> 47) % 16) * 4 : 0;
        ek_stack_view v;
        assert_int_equal(ek_stacks_sample(st, &s, &v), 0);
        assert_true(v.n <= 8);
        for (uint32_t k = 1; k < v.n; k++)
            assert_false(v.frames[k].flags & EK_FRAME_GAP);
    }
    /* and a run of calls deeper than the bound */
    for (int i = 0; i < 20; i++) {
        ek_sample s;
        memset(&s, 0, sizeof s);
        s.kind = EK_SAMPLE_BRANCHES;
        s.flags = CALL;
        s.isub = EK_ISUB_BR_LINK;
        s.pid = s.tid = 7;
        s.ip = 0x2000 + 0x10 * (uint64_t)i;
        s.addr = s.ip + 0x10;
        ek_stack_view v;
        assert_int_equal(ek_stacks_sample(st, &s, &v), 0);
        assert_true(v.n <= 8);
    }
    ek_stacks_stats t;
    ek_stacks_get_stats(st, &t);
    assert_true(t.threads <= 3 * 3 * 3 * 3 * 4 + 1); /* pid, tid, the idle task's cpus; 7 */
    assert_true(t.calls > 0 && t.returns > 0 && t.exceptions > 0 && t.gaps > 0 && t.dropped > 0);
    ek_stacks_free(st);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_calls_returns),
        cmocka_unit_test(test_exceptions),
        cmocka_unit_test(test_context_switch),
        cmocka_unit_test(test_gaps),
        cmocka_unit_test(test_return_below),
        cmocka_unit_test(test_tail_call_unwind),
        cmocka_unit_test(test_depth_bound),
        cmocka_unit_test(test_idle_per_cpu),
        cmocka_unit_test(test_late_sample_of_a_queue),
        cmocka_unit_test(test_switch_across_queues),
        cmocka_unit_test(test_other_samples_and_args),
        cmocka_unit_test(test_random_samples),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
