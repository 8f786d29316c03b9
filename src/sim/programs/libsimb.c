/* /usr/lib/libsimb.so: a different library, loaded at the address libsima.so had. */
#include "simrt.h"

static int lib_total;

SIM_NOINLINE static int simb_scale(int v)
{
    if (v & 1)
        return v * 5;
    return v / 2;
}

SIM_EXPORT int api_gamma(int v)
{
    int t = v;
    while (t > 16)
        t = simb_scale(t) - 7;
    lib_total += t;
    return lib_total;
}

SIM_EXPORT int api_delta(int v)
{
    return simb_scale(v) + simb_scale(v + 1);
}

SIM_EXPORT int api_epsilon(int v)
{
    int s = 0;
    for (int i = 0; i < 5; i++) {
        if ((v >> i) & 1)
            s += api_delta(i);
    }
    return s;
}
