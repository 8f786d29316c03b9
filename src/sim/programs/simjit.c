/* /usr/bin/simjit: a program with a JIT. Its work calls the functions its JIT compiled
 * (through a function pointer: the simulator picks one of the functions in the code cache, or
 * one of its own callbacks); its scripted action act_jit (jitrt.S) compiles, moves or
 * collects code with an mprotect system call, during which the simulator changes the code
 * cache and writes the jitdump. */
#include "simrt.h"

sim_fn volatile sim_api_slot;
sim_fn volatile sim_jit_slot;
volatile int sim_sink;
static int state;

SIM_NOINLINE int cb_twice(int x)
{
    return 2 * x + 1;
}

SIM_NOINLINE int cb_fold(int x)
{
    int r = 0;
    for (int i = 0; i < 3; i++)
        r ^= x >> i;
    return r;
}

static sim_fn const cb_table[] = {cb_twice, cb_fold};

SIM_NOINLINE static int call_jit(int v)
{
    sim_fn f = sim_jit_slot;
    if (f) return f(v);
    return v;
}

SIM_NOINLINE static int interpret(int v)
{
    sim_fn f = cb_table[(unsigned)v & 1];
    return f(v);
}

void sim_init(void)
{
    state = 3;
}

void sim_lib_opened(void)
{
    state += 1;
}

void sim_lib_closing(void)
{
    state -= 1;
}

int sim_work_step(void)
{
    int acc = state;
    for (int i = 0; i < 4; i++) {
        acc += call_jit(acc + i);
        if (acc & 4) acc ^= interpret(acc);
    }
    sim_sink = acc;
    state = acc;
    return acc;
}

int thread_work_step(void)
{
    return sim_work_step();
}
