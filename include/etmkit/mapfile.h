/* Read-only file mapping: large inputs are mapped, not slurped. */
#ifndef ETMKIT_MAPFILE_H
#define ETMKIT_MAPFILE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

typedef struct ek_mapped {
    const uint8_t *data; /* NULL when size == 0 */
    size_t size;
    int mapped; /* 1: munmap on close; 0: malloc'd copy (pipes, special files) */
} ek_mapped;

/* Map a whole file. Returns 0, EK_ERR_IO (errno kept) or EK_ERR_NOMEM. */
int ek_map_file(const char *path, ek_mapped *m);
void ek_unmap_file(ek_mapped *m);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
