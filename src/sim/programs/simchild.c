/* /usr/bin/simchild: a second program, started by exec from simloop. */
#include "simrt.h"

sim_fn volatile sim_api_slot;
volatile int sim_sink;
static int counter;

SIM_NOINLINE int cb_inc(int x)
{
    return x + 1;
}

SIM_NOINLINE int cb_dec(int x)
{
    if (x > 0)
        return x - 1;
    return x;
}

SIM_NOINLINE static int child_loop(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++) {
        if (i & 1)
            s = cb_inc(s);
        else
            s = cb_dec(s);
    }
    return s;
}

void sim_init(void)
{
    counter = 0;
}

void sim_lib_opened(void)
{
}

void sim_lib_closing(void)
{
}

int sim_work_step(void)
{
    sim_fn f = (counter & 1) ? cb_inc : cb_dec;
    counter = f(counter) + child_loop(counter & 7);
    sim_sink = counter;
    return counter;
}

int thread_work_step(void)
{
    return sim_work_step();
}
