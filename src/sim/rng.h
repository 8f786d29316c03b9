/* Seeded pseudo-random numbers for the simulator (splitmix64): same seed, same run. */
#ifndef ETMKIT_SIM_RNG_H
#define ETMKIT_SIM_RNG_H

#include <stdint.h>

typedef struct sim_rng {
    uint64_t s;
} sim_rng;

static inline uint64_t sim_rng_next(sim_rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The state for a seed: the seed goes through splitmix64's output mix first, so that nearby
 * seeds start far apart in the sequence. (A state of seed * increment + c would make seed k + 1
 * the stream of seed k shifted by one draw: scenarios whose first draw decides little ran the
 * same for consecutive seeds.) */
static inline sim_rng sim_rng_seeded(uint64_t seed)
{
    sim_rng r = {seed ^ 0x5EED5EED5EED5EEDull};
    r.s = sim_rng_next(&r);
    return r;
}

/* Uniform in [0, n) for n > 0. */
static inline uint32_t sim_rng_below(sim_rng *r, uint32_t n)
{
    return (uint32_t)(((sim_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* 1 with probability num/256. */
static inline int sim_rng_chance(sim_rng *r, unsigned num)
{
    return (unsigned)(sim_rng_next(r) >> 56) < num;
}

#endif
