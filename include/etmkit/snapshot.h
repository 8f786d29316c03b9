/* Trace snapshot folders (snapshot.ini, device files, trace.ini): typed, not raw strings.
 * Format: ../shared/docs/snapshot-format.md. All structures are read-only for callers and
 * live until ek_snapshot_free(). Problems (missing files, malformed lines) go to the diag
 * sink with file and line; loading continues with what is usable. */
#ifndef ETMKIT_SNAPSHOT_H
#define ETMKIT_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/config.h"
#include "etmkit/diag.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ek_buffer_format {
    EK_BUF_UNKNOWN = 0,
    EK_BUF_CORESIGHT,  /* 16-byte CoreSight formatter frames */
    EK_BUF_SOURCE_DATA, /* raw bytes of a single source */
    EK_BUF_DSTREAM,    /* DSTREAM capture of CoreSight frames (TPIU-style sync) */
} ek_buffer_format;

typedef struct ek_snap_reg {
    char *name;       /* as written, e.g. "TRCIDR0" (upper-cased) */
    int64_t offset;   /* NAME(0x078) form, or -1 */
    int64_t id;       /* NAME(id:0x..) form, or -1 */
    uint64_t value;
} ek_snap_reg;

typedef struct ek_snap_dump {
    char *path;       /* resolved path of the image file */
    uint64_t address; /* load address of the first byte used */
    uint64_t offset;  /* first byte of the file used (offset= key, default 0) */
    uint64_t length;  /* bytes used: length= key, else file size - offset (0 if unknown) */
    int has_length;
    ek_mem_space space; /* space= key, EK_MS_ANY when absent */
} ek_snap_dump;

typedef struct ek_snap_device {
    char *name;
    char *devclass; /* "core", "trace_source", ... (lower-cased) */
    char *type;     /* "ETM4", "ETE", "Cortex-A53", ... as written */
    char *ini_path;
    ek_snap_reg *regs;
    size_t nregs;
    ek_snap_dump *dumps;
    size_t ndumps;
} ek_snap_device;

typedef struct ek_snap_buffer {
    char *name;
    char *path; /* resolved path of the trace file */
    ek_buffer_format format;
} ek_snap_buffer;

typedef struct ek_snap_source {
    size_t device;        /* index into devices[] */
    ek_source_config cfg; /* typed configuration from the device's [regs] and its core */
    long buffer;          /* index into buffers[] or -1 */
    long core;            /* index into devices[] of the core it traces, or -1 */
} ek_snap_source;

typedef struct ek_snapshot {
    char *dir;
    char *description;
    ek_snap_device *devices;
    size_t ndevices;
    ek_snap_buffer *buffers; /* in the order of [trace_buffers] buffers= */
    size_t nbuffers;
    ek_snap_source *sources; /* trace sources, in device-list order */
    size_t nsources;
} ek_snapshot;

/* Read a snapshot folder. Returns 0 (possibly with diagnostics), or a negative status when
 * nothing usable was found (no snapshot.ini, no readable trace metadata). */
int ek_snapshot_open(const char *dir, const ek_diag *diag, ek_snapshot **out);
void ek_snapshot_free(ek_snapshot *ss);

/* Helpers. */
const ek_snap_device *ek_snapshot_find_device(const ek_snapshot *ss, const char *name);
/* Value of a register by name (case-insensitive); returns 1 if found. */
int ek_snap_device_reg(const ek_snap_device *dev, const char *name, uint64_t *value);

#ifdef __cplusplus
}
#endif
#endif
