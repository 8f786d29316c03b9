/* /usr/lib/libsima.so: a library the simulated programs load, call and unload. */
#include "simrt.h"

static int lib_state;

#ifdef SIM_OTHER_BUILD
/* Scenario buildid-mismatch: symfs holds this build of libsima.so instead of the one that
 * ran (a later version: one more function, so that every function after it moved, and
 * another build-id). */
SIM_NOINLINE static int sima_trace(int v)
{
    int t = v;
    for (int i = 0; i < 5; i++)
        t = (t >> 1) ^ (t & 1 ? 0x51 : 0);
    return t;
}
#endif

SIM_NOINLINE static int sima_hash(int v)
{
    int h = v;
    for (int i = 0; i < 3; i++) {
        h = (h << 5) - h + i;
        if (h & 0x100)
            h ^= 0x3c;
    }
    return h;
}

SIM_NOINLINE static int sima_filter(int v)
{
    if (v < 0)
        return -v;
    if (v > 4096)
        return v >> 3;
    return v;
}

SIM_EXPORT int api_alpha(int v)
{
#ifdef SIM_OTHER_BUILD
    v = sima_trace(v);
#endif
    lib_state += sima_hash(v);
    return sima_filter(lib_state);
}

SIM_EXPORT int api_beta(int v)
{
    int r = 0;
    for (int i = 0; i < (v & 7); i++)
        r += sima_hash(i);
    return r;
}
