/* Block cache: remembers, for a start (address, instruction set, memory space), how many
 * instructions it takes to reach the next waypoint and what that waypoint is, so that hot code
 * is classified once. Direct mapped with eviction: bounded memory whatever the trace does.
 * Cleared (by bumping an epoch) whenever the memory image changes. */
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "flow/flow_int.h"

int fl_bcache_init(fl_bcache *bc, uint32_t bits)
{
    if (bits < 4 || bits > 24) return EK_ERR_ARG;
    bc->tab = calloc((size_t)1 << bits, sizeof(fl_block));
    if (!bc->tab) return EK_ERR_NOMEM;
    bc->bits = bits;
    bc->epoch = 1;
    return EK_OK;
}

void fl_bcache_free(fl_bcache *bc)
{
    free(bc->tab);
    bc->tab = NULL;
    bc->bits = 0;
}

void fl_bcache_clear(fl_bcache *bc)
{
    if (!bc->tab) return;
    if (++bc->epoch == 0) { /* wrapped: really clear (epoch 0 is never valid) */
        memset(bc->tab, 0, sizeof(fl_block) << bc->bits);
        bc->epoch = 1;
    }
}

fl_block *fl_bcache_put(fl_bcache *bc, uint64_t addr, uint8_t isa, uint8_t space)
{
    fl_block *b = &bc->tab[fl_bcache_slot(bc, addr, isa, space)];
    b->addr = addr;
    b->isa = isa;
    b->space = space;
    b->epoch = bc->epoch;
    return b;
}
