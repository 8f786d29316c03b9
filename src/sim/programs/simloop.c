/* /usr/bin/simloop: the main simulated program. Its work functions mix loops, if/else chains,
 * direct calls, calls through a table of callbacks and calls into whatever library is loaded. */
#include "simrt.h"

sim_fn volatile sim_api_slot;
volatile int sim_sink;
static int state;

SIM_NOINLINE int cb_square(int x)
{
    return x * x + 1;
}

SIM_NOINLINE int cb_mix(int x)
{
    int r = x;
    for (int i = 0; i < 4; i++) {
        if (r & 1)
            r = r * 3 + 1;
        else
            r >>= 1;
    }
    return r;
}

SIM_NOINLINE int cb_sum(int x)
{
    int s = 0;
    for (int i = 0; i < x; i++)
        s += i ^ x;
    return s;
}

SIM_NOINLINE int cb_clamp(int x)
{
    if (x > 1000)
        return 1000;
    if (x < -1000)
        return -1000;
    return x;
}

static sim_fn const cb_table[] = {cb_square, cb_mix, cb_sum, cb_clamp};

SIM_NOINLINE static int checksum(const volatile int *p, int n)
{
    int c = 0;
    for (int i = 0; i < n; i++) {
        c = (c << 1) ^ p[i & 3];
        if (c < 0)
            c = -c;
    }
    return c;
}

SIM_NOINLINE static int classify(int v)
{
    switch (v & 7) {
    case 0: return 10;
    case 1: return v + 3;
    case 2: return v * 2;
    case 3: return cb_clamp(v);
    case 5: return v - 1;
    default: return 0;
    }
}

SIM_NOINLINE static int dispatch(int v)
{
    sim_fn f = cb_table[(unsigned)v & 3];
    return f(v);
}

SIM_NOINLINE static int call_library(int v)
{
    sim_fn f = sim_api_slot;
    if (f)
        return f(v);
    return v;
}

SIM_NOINLINE static int tail_step(int v)
{
    return dispatch(v + 1); /* tail call: a plain B */
}

void sim_init(void)
{
    state = 1;
}

void sim_lib_opened(void)
{
    state += 7;
}

void sim_lib_closing(void)
{
    state -= 3;
}

int sim_work_step(void)
{
    int acc = state;
    for (int i = 0; i < 3; i++) {
        acc += classify(acc + i);
        if (acc & 2)
            acc ^= dispatch(acc);
        else
            acc += tail_step(acc);
    }
    acc += call_library(acc);
    acc += checksum(&sim_sink, acc & 15);
    sim_sink = acc;
    state = acc;
    return acc;
}

int thread_work_step(void)
{
    int acc = state ^ 0x5a;
    for (int i = 0; i < 2; i++) {
        acc = cb_mix(acc) + dispatch(acc);
        if (acc & 4)
            acc += call_library(acc);
    }
    sim_sink = acc;
    return acc;
}
