/* Read-only file mapping: large inputs are mapped, not slurped. */
#ifndef ETMKIT_CORE_MAPFILE_H
#define ETMKIT_CORE_MAPFILE_H

#include <stddef.h>
#include <stdint.h>

typedef struct ek_mapped {
    const uint8_t *data; /* NULL when size == 0 */
    size_t size;
    int mapped; /* 1: munmap on close; 0: malloc'd copy (pipes, special files) */
} ek_mapped;

/* Map a whole file. Returns 0, EK_ERR_IO (errno kept) or EK_ERR_NOMEM. */
int ek_map_file(const char *path, ek_mapped *m);
void ek_unmap_file(ek_mapped *m);

/* The system's text for errno value err ("No such file or directory"), in buf (thread-safe). */
const char *ek_errno_text(int err, char *buf, size_t n);

/* Join a directory and a relative name into a new string ("dir/name"; name if absolute). */
char *ek_path_join(const char *dir, const char *name);

#endif
