/* File mapping (public: etmkit/mapfile.h) and the library's helpers around files. */
#ifndef ETMKIT_CORE_MAPFILE_H
#define ETMKIT_CORE_MAPFILE_H

#include <stddef.h>

#include "etmkit/mapfile.h"

/* ek_map_file for a regular file only: anything else is EK_ERR_IO with errno EINVAL (a FIFO,
 * whose open would wait for a writer, a device such as /dev/zero, which never ends) or EISDIR;
 * memory is then bounded by the file's size. For files a folder names (snapshot ini files). */
int ek_map_regular(const char *path, ek_mapped *m);

/* The system's text for errno value err ("No such file or directory"), in buf (thread-safe). */
const char *ek_errno_text(int err, char *buf, size_t n);

/* Join a directory and a relative name into a new string ("dir/name"; name if absolute). */
char *ek_path_join(const char *dir, const char *name);

#endif
