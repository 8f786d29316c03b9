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
