/* File mapping (public: etmkit/mapfile.h) and the library's helpers around files. */
#ifndef ETMKIT_CORE_MAPFILE_H
#define ETMKIT_CORE_MAPFILE_H

#include <stddef.h>

#include "etmkit/mapfile.h"

/* The system's text for errno value err ("No such file or directory"), in buf (thread-safe). */
const char *ek_errno_text(int err, char *buf, size_t n);

/* Join a directory and a relative name into a new string ("dir/name"; name if absolute). */
char *ek_path_join(const char *dir, const char *name);

#endif
