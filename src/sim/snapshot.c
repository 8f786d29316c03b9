/* Snapshot folder writer (snapshot.ini, device INIs, trace.ini, buffers): see
 * ../shared/docs/snapshot-format.md. */
#include "etmkit/etmkit.h"
#include "sim/sim.h"

int sim_snapshot_write(sim *S, const char *dir)
{
    (void)S;
    (void)dir;
    return EK_ERR_UNSUPPORTED;
}
