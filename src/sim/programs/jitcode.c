/* Code templates of the simulated JIT (simjit): leaf functions that use nothing outside
 * themselves, so that a copy at any address runs as the original would. The simulator copies
 * them into simjit's code cache (JIT_CODE_LOAD), moves them (JIT_CODE_MOVE) and installs
 * other ones at the same addresses after a collection. This file is not a file of any
 * recording: the code exists only in the jitdump and in the cache. */
#include "simrt.h"

SIM_EXPORT int jit_sum(int x)
{
    int s = 0;
    for (int i = 0; i < (x & 15); i++)
        s += i * x;
    return s;
}

SIM_EXPORT int jit_collatz(int x)
{
    for (int i = 0; i < 6; i++) {
        if (x & 1)
            x = 3 * x + 1;
        else
            x >>= 1;
    }
    return x;
}

SIM_EXPORT int jit_clamp(int x)
{
    if (x > 100) return 100;
    if (x < -100) return -100;
    return x;
}

SIM_EXPORT int jit_hash(int x)
{
    unsigned h = 2166136261u;
    for (int i = 0; i < 4; i++) {
        h ^= (unsigned)(x >> (8 * i)) & 0xffu;
        h *= 16777619u;
    }
    return (int)h;
}

SIM_EXPORT int jit_select(int x)
{
    if ((x & 3) == 0) return x / 3;
    if ((x & 3) == 1) return x * 5 - 2;
    if (x > 1000) return x - 1000;
    return -x;
}

SIM_EXPORT int jit_popcount(int x)
{
    unsigned v = (unsigned)x;
    int n = 0;
    while (v) {
        v &= v - 1;
        n++;
    }
    return n;
}
