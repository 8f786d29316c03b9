/* The index of an open-addressing table (linear probing) over an array the caller keeps:
 * slot[h] is an element's position + 1, 0 an empty slot. Used by the diagnostic collectors
 * (diag.c, session/sdiag.c) and the sideband's CPU map (session/sideband.c). */
#ifndef ETMKIT_CORE_SLOTS_H
#define ETMKIT_CORE_SLOTS_H

#include <stdint.h>
#include <stdlib.h>

/* A new index of cap slots (a power of 2, more than n) for the n elements whose hashes
 * hash(ctx, i) gives; NULL when out of memory. */
static inline size_t *ek_slots_build(size_t cap, size_t n,
                                     size_t (*hash)(const void *ctx, size_t i), const void *ctx)
{
    if (cap > SIZE_MAX / 2 / sizeof(size_t)) return NULL;
    size_t *slot = calloc(cap, sizeof *slot);
    if (!slot) return NULL;
    for (size_t i = 0; i < n; i++) {
        size_t h = hash(ctx, i) & (cap - 1);
        while (slot[h])
            h = (h + 1) & (cap - 1);
        slot[h] = i + 1;
    }
    return slot;
}

#endif
